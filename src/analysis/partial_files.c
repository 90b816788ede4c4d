/* partial_files.c - the files a merge reads: a partial's path, or the
 * *.partial.json files of a directory by name, each read whole (at most 1
 * GB) and parsed as JSON. */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "partial_impl.h"
#include "tfd/infile.h"
#include "tfd/jsonmem.h"
#include "tfd/partial.h"
#include "tfd/pool.h"

#define MAX_PARTIAL_BYTES (1024u * 1024u * 1024u)

struct tfd_json_tree *tfd_pf_parse(const char *data, size_t len, const char **end)
{
	struct tfd_json_tree *d = xmalloc(sizeof(*d));

	tfd_json_tree_begin(d);
	d->root = tfd_json_parse_counted(data, len, end, &d->members);
	tfd_json_tree_end();
	if (!d->root) {
		tfd_pf_doc_free(d);
		return NULL;
	}
	return d;
}

void tfd_pf_doc_free(struct tfd_json_tree *d)
{
	if (!d)
		return;
	tfd_json_tree_free(d, true); /* its chunks for the next document's tree */
	free(d);
}

enum tfd_status tfd_partial_read_doc(const char *path, struct tfd_json_tree **out,
				     struct tfd_err *err)
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
	*out = tfd_pf_parse(buf, n, &end);
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

/* The second thread's state: one parsed document waits for the caller
 * (ready), one given back waits to be freed (trash); the thread frees
 * before it parses, so at most two documents are held besides the
 * caller's. */
struct tfd_pf_ahead {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t th;
	const char *const *names;
	size_t n, next; /* next: the document the thread parses next */
	bool has_ready, stop;
	size_t ready_i;
	struct tfd_json_tree *ready;
	enum tfd_status ready_st;
	struct tfd_err ready_err;
	struct tfd_json_tree *trash;
};

static void *ahead_thread(void *arg)
{
	struct tfd_pf_ahead *a = arg;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		if (a->trash) {
			struct tfd_json_tree *d = a->trash;

			a->trash = NULL;
			pthread_mutex_unlock(&a->mu);
			tfd_pf_doc_free(d);
			pthread_mutex_lock(&a->mu);
		} else if (!a->stop && !a->has_ready && a->next < a->n) {
			size_t i = a->next++;
			struct tfd_json_tree *d = NULL;
			struct tfd_err err;
			enum tfd_status st;

			tfd_err_clear(&err);
			pthread_mutex_unlock(&a->mu);
			st = tfd_partial_read_doc(a->names[i], &d, &err);
			pthread_mutex_lock(&a->mu);
			a->ready = d;
			a->ready_i = i;
			a->ready_st = st;
			a->ready_err = err;
			a->has_ready = true;
			if (st) /* the caller stops at this one */
				a->next = a->n;
			pthread_cond_broadcast(&a->cv);
		} else if (a->stop) {
			break;
		} else {
			pthread_cond_wait(&a->cv, &a->mu);
		}
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

struct tfd_pf_ahead *tfd_pf_ahead_start(const char *const *names, size_t n)
{
	struct tfd_pf_ahead *a;

	if (n < 2 || tfd_cpu_count() < 2)
		return NULL;
	a = xcalloc(1, sizeof(*a));
	a->names = names;
	a->n = n;
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	if (pthread_create(&a->th, NULL, ahead_thread, a) != 0) {
		pthread_mutex_destroy(&a->mu);
		pthread_cond_destroy(&a->cv);
		free(a);
		return NULL;
	}
	return a;
}

enum tfd_status tfd_pf_ahead_next(struct tfd_pf_ahead *a, size_t i, struct tfd_json_tree **doc,
				  struct tfd_err *err)
{
	enum tfd_status st;

	pthread_mutex_lock(&a->mu);
	while (!a->has_ready)
		pthread_cond_wait(&a->cv, &a->mu);
	/* documents are asked for in order, each once */
	if (a->ready_i != i) {
		pthread_mutex_unlock(&a->mu);
		return tfd_fail(err, TFD_E_INTERNAL, "%s: partials read out of order", a->names[i]);
	}
	*doc = a->ready;
	st = a->ready_st;
	if (st)
		*err = a->ready_err;
	a->ready = NULL;
	a->has_ready = false;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return st;
}

void tfd_pf_ahead_done(struct tfd_pf_ahead *a, struct tfd_json_tree *doc)
{
	struct tfd_json_tree *now = NULL;

	pthread_mutex_lock(&a->mu);
	if (a->trash) /* the last one is still being freed: this one here */
		now = doc;
	else
		a->trash = doc;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	tfd_pf_doc_free(now);
}

void tfd_pf_ahead_stop(struct tfd_pf_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = true;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	pthread_join(a->th, NULL);
	tfd_pf_doc_free(a->ready);
	tfd_pf_doc_free(a->trash);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
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
