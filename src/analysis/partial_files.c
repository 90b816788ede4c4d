/* partial_files.c - the files a merge reads: a partial's path, or the
 * *.partial.json files of a directory by name, each read whole (at most 1
 * GB) and parsed as JSON. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "partial_impl.h"
#include "tfd/infile.h"
#include "tfd/partial.h"

#define MAX_PARTIAL_BYTES (1024u * 1024u * 1024u)

enum tfd_status tfd_partial_read_doc(const char *path, cJSON **out, struct tfd_err *err)
{
	char *buf;
	size_t n;
	const char *end = NULL;
	enum tfd_status st = tfd_read_regular(path, MAX_PARTIAL_BYTES, "partial", &buf, &n, err);

	*out = NULL;
	if (st)
		return st;
	if (n == 0) {
		free(buf);
		return tfd_fail(err, TFD_E_FORMAT, "%s: empty file, not a tfdoctor partial", path);
	}
	*out = cJSON_ParseWithLengthOpts(buf, n, &end, 0);
	if (!*out) {
		size_t at = end && end >= buf ? (size_t)(end - buf) : 0;

		free(buf);
		return tfd_fail(err, TFD_E_FORMAT,
				"%s: broken JSON near byte %zu (not a tfdoctor "
				"partial)",
				path, at);
	}
	free(buf);
	return TFD_OK;
}

static bool has_suffix(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && strcmp(s + n - m, suf) == 0;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum tfd_status tfd_partial_expand(const char *path, strvec *files, struct tfd_err *err)
{
	struct stat sb;
	DIR *d;
	struct dirent *de;
	size_t first = files->n;

	if (stat(path, &sb) < 0)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(sb.st_mode)) {
		vec_push(files, xstrdup(path));
		return TFD_OK;
	}
	d = opendir(path);
	if (!d)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		size_t n;
		char *p;

		if (de->d_name[0] == '.' || !has_suffix(de->d_name, TFD_PARTIAL_SUFFIX))
			continue;
		n = strlen(path) + strlen(de->d_name) + 2;
		p = xmalloc(n);
		snprintf(p, n, "%s%s%s", path, has_suffix(path, "/") ? "" : "/", de->d_name);
		vec_push(files, p);
	}
	closedir(d);
	if (files->n == first)
		return tfd_fail(err, TFD_E_FORMAT, "%s: no *%s files in this directory", path,
				TFD_PARTIAL_SUFFIX);
	qsort(files->v + first, files->n - first, sizeof(char *), str_cmp);
	return TFD_OK;
}
