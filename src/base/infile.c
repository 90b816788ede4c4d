/* infile.c - small input files read whole; see infile.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tfd/infile.h"

enum tfd_status tfd_read_regular(const char *path, size_t max, const char *what, char **buf,
				 size_t *len, struct tfd_err *err)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	size_t n = 0;
	char *b;

	*buf = NULL;
	*len = 0;
	if (fd < 0)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return tfd_fail(err, TFD_E_IO, "%s: not a regular file", path);
	}
	if ((uint64_t)st.st_size > max) {
		close(fd);
		return tfd_fail(err, TFD_E_LIMIT, "%s: %s larger than %zu MiB", path, what,
				max >> 20);
	}
	/* one byte more than the size is asked for: a file that grows while
	 * it is read is refused, never cut; one that shrinks is read as is */
	b = xmalloc((size_t)st.st_size + 2);
	for (;;) {
		size_t room = (size_t)st.st_size + 1 - n;
		ssize_t got = room ? read(fd, b + n, room) : 0;

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;

			close(fd);
			free(b);
			return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(e));
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (n > (size_t)st.st_size) {
		free(b);
		return tfd_fail(err, TFD_E_IO, "%s: changed while it was read", path);
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return TFD_OK;
}

const char *tfd_path_dir(const char *path, char *buf, size_t len)
{
	const char *sl = strrchr(path, '/');

	if (!sl)
		snprintf(buf, len, ".");
	else
		snprintf(buf, len, "%.*s", sl == path ? 1 : (int)(sl - path), path);
	return buf;
}
