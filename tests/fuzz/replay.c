/* replay.c - run a fuzz target over files or directories (the committed
 * corpus) without libFuzzer; built with the normal compiler for make check.
 * Prints "<target>: N inputs" and exits 0 unless an input crashes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tfd/render.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static size_t ran;

static void one(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n)
		n = 0;
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n > 0 ? (size_t)n : 0);
	free(buf);
	ran++;
}

int main(int argc, char **argv)
{
	tfd_json_init(); /* as main() does */
	for (int i = 1; i < argc; i++) {
		struct stat st;
		DIR *d;
		struct dirent *de;

		if (stat(argv[i], &st) != 0)
			continue;
		if (!S_ISDIR(st.st_mode)) {
			one(argv[i]);
			continue;
		}
		d = opendir(argv[i]);
		while (d && (de = readdir(d)) != NULL) {
			char p[4096];

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			one(p);
		}
		if (d)
			closedir(d);
	}
	printf("%zu inputs\n", ran);
	return 0;
}
