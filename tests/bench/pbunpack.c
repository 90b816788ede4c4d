/* pbunpack - the baseline: a bare protobuf-c unpack of a whole XSpace file
 * (what a straightforward reader does), then free. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xplane.pb-c.h"

int main(int argc, char **argv)
{
	struct stat st;
	int fd;
	void *m;
	Tfdpb__XSpace *xs;
	size_t events = 0;

	if (argc != 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st) < 0)
		return 2;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return 2;
	xs = tfdpb__xspace__unpack(NULL, (size_t)st.st_size, m);
	if (!xs)
		return 1;
	for (size_t p = 0; p < xs->n_planes; p++)
		for (size_t l = 0; l < xs->planes[p]->n_lines; l++)
			events += xs->planes[p]->lines[l]->n_events;
	printf("%zu\n", events);
	tfdpb__xspace__free_unpacked(xs, NULL);
	munmap(m, (size_t)st.st_size);
	close(fd);
	return 0;
}
