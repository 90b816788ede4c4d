/* run.c - load and analyze: the driver the commands call (analyze, dot,
 * report) between discovery (src/input), the analysis and the partial
 * format (src/analysis). A run or log directory is analyzed one host file
 * at a time: each file's partial result is written as text and the texts
 * are merged, so memory holds the files in flight, not the whole run. */
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tfd/app.h"
#include "tfd/buf.h"
#include "tfd/load.h"
#include "tfd/partial.h"

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcmp(s + n - k, suf) == 0;
}

bool tfd_partial_path(const char *path)
{
	struct stat sb;
	DIR *d;
	struct dirent *de;
	bool found = false;

	if (stat(path, &sb) < 0)
		return false;
	if (!S_ISDIR(sb.st_mode))
		return ends_with(path, TFD_PARTIAL_SUFFIX);
	d = opendir(path);
	if (!d)
		return false;
	/* partials written next to the captures do not turn a run directory
	 * into a directory of partials */
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		/* the same file names a directory scan takes for captures */
		if (tfd_capture_file_name(de->d_name) || strcmp(de->d_name, "plugins") == 0) {
			found = false;
			break;
		}
		found |= ends_with(de->d_name, TFD_PARTIAL_SUFFIX);
	}
	closedir(d);
	return found;
}

/* ---- one host file at a time ---------------------------------------------- */

struct by_file {
	struct tfd_analyze_opts ao; /* the per-host options; no --host */
	pthread_mutex_t mu;
	struct tfd_merger *m;
	size_t nfiles;
	char *run; /* discovery's run name */
};

static enum tfd_status analyze_file(struct tfd_capture *cap, size_t index, size_t nfiles, void *ctx,
				    struct tfd_err *err)
{
	struct by_file *bf = ctx;
	struct tfd_analysis *a;

	if (tfd_analyze_lean(cap, &bf->ao, &a, err))
		return err->status;
	pthread_mutex_lock(&bf->mu);
	if (!bf->nfiles++)
		bf->run = cap->run ? xstrdup(cap->run) : NULL;
	/* the host's result copies what it needs: the file's capture goes */
	tfd_merger_add(bf->m, a, index, cap->nhosts ? cap->hosts[0].path : "capture");
	pthread_mutex_unlock(&bf->mu);
	(void)nfiles;
	return TFD_OK;
}

/* One load, then the analysis, self-contained; nothing is left on error. */
static enum tfd_status load_and_analyze(const char *const *paths, size_t npaths,
					const struct tfd_load_opts *lo,
					const struct tfd_analyze_opts *ao,
					struct tfd_analysis **out, struct tfd_err *err)
{
	struct tfd_capture *cap;
	struct tfd_analysis *a;
	struct tfd_merger *m;
	const char *label;
	/* analyzed lean below: a device plane may be swept beside it */
	struct tfd_load_opts lean_lo = tfd_load_opts_defer(lo, true);
	enum tfd_status st = tfd_capture_load(paths, npaths, &lean_lo, &cap, err);

	if (st)
		return st;
	/* the caller reads the capture's hosts, not their events */
	st = tfd_analyze_lean(cap, ao, &a, err);
	if (st) {
		tfd_capture_free(cap);
		return st;
	}
	m = tfd_merger_new();
	label = cap->run ? tfd_arena_intern_cstr(tfd_merger_arena(m), cap->run) : NULL;
	tfd_merger_add(m, a, 0, npaths ? paths[0] : "capture");
	tfd_capture_free(cap);
	st = tfd_merger_finish(m, NULL, 0, ao, out, err);
	if (!st)
		(*out)->label = label;
	return st;
}

enum tfd_status tfd_analyze_paths(const char *const *paths, size_t npaths,
				  const struct tfd_load_opts *lo, const struct tfd_analyze_opts *ao,
				  struct tfd_analysis **out, struct tfd_err *err)
{
	struct by_file bf;
	enum tfd_status st;
	struct stat sb;

	*out = NULL;
	/* a file, or several paths (which may name one file twice): one load */
	if (npaths != 1 || stat(paths[0], &sb) != 0 || !S_ISDIR(sb.st_mode))
		return load_and_analyze(paths, npaths, lo, ao, out, err);
	memset(&bf, 0, sizeof(bf));
	if (ao)
		bf.ao = *ao;
	bf.ao.host = NULL; /* picked among all hosts by the merge */
	bf.m = tfd_merger_new();
	pthread_mutex_init(&bf.mu, NULL);
	{
		/* each file is analyzed lean: its device planes may be swept
		 * beside its analysis */
		struct tfd_load_opts lean_lo = tfd_load_opts_defer(lo, true);

		st = tfd_capture_each(paths, npaths, &lean_lo, analyze_file, &bf, err);
	}
	pthread_mutex_destroy(&bf.mu);
	if (st || !bf.nfiles) {
		tfd_merger_free(bf.m);
		/* no host file (a shard that got none): what one load gives */
		if (!st)
			st = load_and_analyze(paths, npaths, lo, ao, out, err);
	} else {
		const char *label =
		    bf.run ? tfd_arena_intern_cstr(tfd_merger_arena(bf.m), bf.run) : NULL;

		st = tfd_merger_finish(bf.m, NULL, 0, ao, out, err);
		/* the run discovery named, as one load gives it */
		if (!st)
			(*out)->label = label;
	}
	free(bf.run);
	return st;
}
