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
	struct tfd_buf *texts; /* per file, its partial */
	char **names;	       /* per file, its path (for messages) */
	size_t n;
	char *run; /* discovery's run name */
};

static enum tfd_status analyze_file(struct tfd_capture *cap, size_t index, size_t nfiles, void *ctx,
				    struct tfd_err *err)
{
	struct by_file *bf = ctx;
	struct tfd_analysis *a;
	struct tfd_buf t;

	if (tfd_analyze_lean(cap, &bf->ao, &a, err))
		return err->status;
	tfd_buf_init(&t);
	tfd_partial_write(cap, a, &bf->ao, NULL, &t);
	tfd_analysis_free(a);
	pthread_mutex_lock(&bf->mu);
	if (!bf->texts) {
		bf->n = nfiles;
		bf->texts = xcalloc(nfiles + 1, sizeof(*bf->texts));
		bf->names = xcalloc(nfiles + 1, sizeof(*bf->names));
		bf->run = cap->run ? xstrdup(cap->run) : NULL;
	}
	bf->texts[index] = t;
	bf->names[index] = xstrdup(cap->nhosts ? cap->hosts[0].path : "capture");
	pthread_mutex_unlock(&bf->mu);
	return TFD_OK;
}

/* One load, then the analysis; nothing is left on error. */
static enum tfd_status load_and_analyze(const char *const *paths, size_t npaths,
					const struct tfd_load_opts *lo,
					const struct tfd_analyze_opts *ao,
					struct tfd_capture **cap_out, struct tfd_analysis **out,
					struct tfd_err *err)
{
	enum tfd_status st = tfd_capture_load(paths, npaths, lo, cap_out, err);

	/* the caller reads the capture's hosts, not their events */
	if (!st)
		st = tfd_analyze_lean(*cap_out, ao, out, err);
	if (st) {
		tfd_capture_free(*cap_out);
		*cap_out = NULL;
	}
	return st;
}

/* The partials of a run's files, merged: what one load gives. */
static enum tfd_status merge_files(struct by_file *bf, const struct tfd_analyze_opts *ao,
				   struct tfd_capture **cap_out, struct tfd_analysis **out,
				   struct tfd_err *err)
{
	const char **texts = xcalloc(bf->n + 1, sizeof(*texts));
	size_t *lens = xcalloc(bf->n + 1, sizeof(*lens));
	enum tfd_status st;

	for (size_t i = 0; i < bf->n; i++) {
		texts[i] = bf->texts[i].s ? bf->texts[i].s : "";
		lens[i] = bf->texts[i].len;
	}
	st = tfd_partial_merge_texts(texts, lens, (const char *const *)bf->names, bf->n, ao,
				     cap_out, out, err);
	/* the run discovery named, as one load sets it */
	if (!st)
		(*cap_out)->run =
		    bf->run ? tfd_arena_intern_cstr(&(*cap_out)->arena, bf->run) : NULL;
	free(texts);
	free(lens);
	return st;
}

enum tfd_status tfd_analyze_paths(const char *const *paths, size_t npaths,
				  const struct tfd_load_opts *lo, const struct tfd_analyze_opts *ao,
				  struct tfd_capture **cap_out, struct tfd_analysis **out,
				  struct tfd_err *err)
{
	struct by_file bf;
	enum tfd_status st;
	struct stat sb;

	*cap_out = NULL;
	*out = NULL;
	/* a file, or several paths (which may name one file twice): one load */
	if (npaths != 1 || stat(paths[0], &sb) != 0 || !S_ISDIR(sb.st_mode))
		return load_and_analyze(paths, npaths, lo, ao, cap_out, out, err);
	memset(&bf, 0, sizeof(bf));
	if (ao)
		bf.ao = *ao;
	bf.ao.host = NULL; /* picked among all hosts by the merge */
	pthread_mutex_init(&bf.mu, NULL);
	st = tfd_capture_each(paths, npaths, lo, analyze_file, &bf, err);
	pthread_mutex_destroy(&bf.mu);
	if (!st && !bf.texts)
		/* no host file (a shard that got none): what one load gives */
		st = load_and_analyze(paths, npaths, lo, ao, cap_out, out, err);
	else if (!st)
		st = merge_files(&bf, ao, cap_out, out, err);
	for (size_t i = 0; i < bf.n; i++) {
		tfd_buf_release(&bf.texts[i]);
		free(bf.names[i]);
	}
	free(bf.texts);
	free(bf.names);
	free(bf.run);
	if (st) {
		tfd_capture_free(*cap_out);
		*cap_out = NULL;
		tfd_analysis_free(*out);
		*out = NULL;
	}
	return st;
}
