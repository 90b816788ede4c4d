/* discover.c - from paths to a loaded capture: TensorBoard log directories
 * and run directories expanded into host files, and several files read at
 * once (load.c reads one). The model they build is src/model/capture.c. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "input_impl.h"
#include "tfd/capture.h"
#include "tfd/imap.h"
#include "tfd/infile.h"
#include "tfd/load.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include "tfd/vec.h"

/* ---- input discovery --------------------------------------------------- */

typedef VEC(char *) strvec;

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir), k = strlen(name);
	char *p = xmalloc(n + k + 2);

	memcpy(p, dir, n);
	if (n && dir[n - 1] != '/')
		p[n++] = '/';
	memcpy(p + n, name, k + 1);
	return p;
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Discovery notes the directories it may not read in denied (when not
 * NULL): an unreadable log, plugins, profile or run directory is said by
 * name, never taken for an empty one. */
static void note_denied(strvec *denied, const char *path)
{
	if (denied && errno == EACCES) {
		for (size_t i = 0; i < denied->n; i++)
			if (strcmp(denied->v[i], path) == 0)
				return;
		vec_push(denied, xstrdup(path));
	}
}

static DIR *open_dir(const char *path, strvec *denied)
{
	DIR *d = opendir(path);

	if (!d)
		note_denied(denied, path);
	return d;
}

/* is_dir(), noting the directory above path that may not be searched
 * (stat's EACCES names no component). */
static int is_dir_noting(const char *path, strvec *denied)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode);
	if (errno == EACCES && denied) {
		char *up = xstrdup(path);

		for (char *c = strchr(up + 1, '/'); c; c = strchr(c + 1, '/')) {
			*c = '\0';
			if (access(up, X_OK) != 0 && errno == EACCES) {
				note_denied(denied, up);
				break;
			}
			*c = '/';
		}
		free(up);
	}
	return 0;
}

static void free_strs(strvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	vec_free(v);
}

static uint64_t weighed(const char *name, const struct stat *st)
{
	return (uint64_t)st->st_size * (tfd_ends_with(name, ".gz") ? 8 : 1);
}

static uint64_t largest_in(const char *dir, int depth, size_t *budget)
{
	DIR *d;
	struct dirent *de;
	uint64_t best = 0;

	if (depth > 8 || !(d = opendir(dir)))
		return 0;
	while (*budget && (de = readdir(d))) {
		char *p;
		struct stat st;

		(*budget)--;
		if (de->d_name[0] == '.')
			continue;
		p = join(dir, de->d_name);
		if (lstat(p, &st) == 0) {
			uint64_t b = 0;

			if (S_ISDIR(st.st_mode))
				b = largest_in(p, depth + 1, budget);
			else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
				 tfd_capture_file_name(de->d_name) && stat(p, &st) == 0 &&
				 S_ISREG(st.st_mode))
				b = weighed(de->d_name, &st);
			if (b > best)
				best = b;
		}
		free(p);
	}
	closedir(d);
	return best;
}

uint64_t tfd_capture_largest(const char *const *paths, size_t npaths)
{
	uint64_t best = 0;
	size_t budget = 100000;

	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		uint64_t b = 0;

		if (stat(paths[i], &st) != 0)
			continue;
		if (S_ISREG(st.st_mode))
			b = weighed(paths[i], &st);
		else if (S_ISDIR(st.st_mode))
			b = largest_in(paths[i], 0, &budget);
		if (b > best)
			best = b;
	}
	return best;
}

static char *note_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *note_printf(const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return xstrdup(buf);
}

/* A derived tool file directly in dir (to point at the raw capture). */
static char *derived_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *found = NULL;

	while (d && !found && (de = readdir(d)) != NULL)
		if (tfd_is_derived_tool_file(de->d_name))
			found = xstrdup(de->d_name);
	if (d)
		closedir(d);
	return found;
}

/* Capture files directly in dir, sorted; a host with an xplane.pb does not
 * also load its trace.json(.gz), which is a rendering of the same data. */
static void list_captures(const char *dir, strvec *out, strvec *notes, strvec *denied)
{
	DIR *d = open_dir(dir, denied);
	struct dirent *de;
	strvec names = {0};

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || tfd_capture_file_rank(de->d_name) < 0)
			continue;
		vec_push(&names, xstrdup(de->d_name));
	}
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), str_cmp);
	for (size_t i = 0; i < names.n; i++) {
		char host[256];
		int shadowed = 0;

		tfd_host_from_path(names.v[i], host, sizeof(host));
		for (size_t j = 0; j < names.n && !shadowed; j++) {
			char h2[256];

			if (j == i ||
			    tfd_capture_file_rank(names.v[j]) >= tfd_capture_file_rank(names.v[i]))
				continue;
			tfd_host_from_path(names.v[j], h2, sizeof(h2));
			shadowed = strcmp(h2, host) == 0;
			if (shadowed && notes)
				vec_push(notes, note_printf("skipped %s: %s holds the same capture",
							    names.v[i], names.v[j]));
		}
		if (!shadowed)
			vec_push(out, join(dir, names.v[i]));
	}
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	vec_free(&names);
}

static int has_captures(const char *dir, strvec *denied)
{
	strvec tmp = {0};
	size_t n;

	list_captures(dir, &tmp, NULL, denied);
	n = tmp.n;
	for (size_t i = 0; i < tmp.n; i++)
		free(tmp.v[i]);
	vec_free(&tmp);
	return n > 0;
}

/* Find plugins/profile/<run> directories below root (depth-limited). */
static void find_runs(const char *root, int depth, strvec *runs, strvec *denied)
{
	char *prof = join(root, "plugins/profile");
	DIR *d;
	struct dirent *de;

	if (is_dir_noting(prof, denied)) {
		d = open_dir(prof, denied);
		while (d && (de = readdir(d)) != NULL) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = join(prof, de->d_name);
			if (is_dir(p))
				vec_push(runs, p);
			else
				free(p);
		}
		if (d)
			closedir(d);
	}
	free(prof);
	if (depth <= 0)
		return;
	d = open_dir(root, denied);
	while (d && (de = readdir(d)) != NULL) {
		char *p;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "plugins") == 0)
			continue;
		p = join(root, de->d_name);
		if (is_dir(p))
			find_runs(p, depth - 1, runs, denied);
		free(p);
	}
	if (d)
		closedir(d);
}

static int run_cmp(const void *a, const void *b)
{
	const char *x = tfd_path_base(*(char *const *)a), *y = tfd_path_base(*(char *const *)b);
	int c = strcmp(x, y);

	return c ? c : strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the last component of path (trailing slashes aside) is name. */
static bool last_component_is(const char *path, const char *name)
{
	size_t n = strlen(path), k = strlen(name);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n >= k && memcmp(path + n - k, name, k) == 0 && (n == k || path[n - k - 1] == '/');
}

/* The run directories under dir: .../plugins/profile/<run> up to four levels
 * down, or, when dir is plugins/profile itself (or the plugins directory
 * above it), its subdirectories that hold captures. Unsorted. */
static void collect_runs(const char *dir, strvec *runs, strvec *denied)
{
	DIR *d;
	struct dirent *de;

	find_runs(dir, 4, runs, denied);
	if (!runs->n && last_component_is(dir, "plugins")) {
		char *prof = join(dir, "profile");

		if (is_dir_noting(prof, denied))
			collect_runs(prof, runs, denied);
		free(prof);
	}
	if (runs->n || !(d = open_dir(dir, denied)))
		return;
	while ((de = readdir(d)) != NULL) {
		char *p;

		if (de->d_name[0] == '.')
			continue;
		p = join(dir, de->d_name);
		if (is_dir(p) && has_captures(p, denied))
			vec_push(runs, p);
		else
			free(p);
	}
	closedir(d);
}

/* The error for a directory with no captures: a directory discovery may
 * not read is named before anything else. */
static enum tfd_status none_found(const char *dir, const strvec *denied, struct tfd_err *err)
{
	char *derived;
	enum tfd_status st;

	if (denied->n == 1 && strcmp(denied->v[0], dir) == 0)
		return tfd_fail(err, TFD_E_IO,
				"permission denied (no capture in it can be listed)");
	if (denied->n)
		return tfd_fail(err, TFD_E_IO,
				"%s: permission denied (no capture below it can be listed%s)",
				denied->v[0], denied->n > 1 ? "; nor in other directories" : "");
	derived = derived_in(dir);
	if (derived)
		st = tfd_fail(err, TFD_E_FORMAT,
			      "no profiler captures found, only derived tool files such as "
			      "'%s' (use the *.xplane.pb of the same run)",
			      derived);
	else
		st = tfd_fail(err, TFD_E_FORMAT,
			      "no profiler captures found (looked for *.xplane.pb, "
			      "*.trace.json[.gz] and plugins/profile/<run>/)");
	free(derived);
	return st;
}

/* The run to analyze among runs (sorted by name): the one --run names, or
 * the newest that holds captures. A newer run that may not be read is an
 * error, never passed over for an older one. */
static enum tfd_status pick_run(const strvec *runs, const struct tfd_load_opts *opts,
				const char **pick, struct tfd_err *err)
{
	*pick = NULL;
	if (opts && opts->run) {
		for (size_t i = runs->n; i-- > 0;)
			if (strcmp(tfd_path_base(runs->v[i]), opts->run) == 0) {
				*pick = runs->v[i];
				return TFD_OK;
			}
		return tfd_fail(err, TFD_E_USAGE, "no run named '%s' (newest is '%s')", opts->run,
				tfd_path_base(runs->v[runs->n - 1]));
	}
	/* newest run that holds captures (names are times) */
	for (size_t i = runs->n; i-- > 0;) {
		strvec denied = {0};
		int found = has_captures(runs->v[i], &denied);
		bool refused = denied.n > 0;

		free_strs(&denied);
		if (found) {
			*pick = runs->v[i];
			return TFD_OK;
		}
		if (refused)
			return tfd_fail(
			    err, TFD_E_IO,
			    "%s: permission denied (run '%s' is the newest; an older run "
			    "is not analyzed in its place: --run NAME picks one)",
			    runs->v[i], tfd_path_base(runs->v[i]));
	}
	return tfd_fail(err, TFD_E_FORMAT,
			"no profiler captures found in any of %zu run directories", runs->n);
}

static enum tfd_status expand_dir(const char *dir, const struct tfd_load_opts *opts, strvec *files,
				  const char **run_out, struct tfd_arena *arena, strvec *notes,
				  struct tfd_err *err)
{
	strvec runs = {0}, denied = {0};
	enum tfd_status st = TFD_OK;
	size_t before = files->n;
	const char *pick = NULL;

	list_captures(dir, files, notes, &denied);
	if (files->n > before)
		goto out;
	collect_runs(dir, &runs, &denied);
	if (runs.n == 0) {
		st = none_found(dir, &denied, err);
		goto out;
	}
	qsort(runs.v, runs.n, sizeof(char *), run_cmp);
	if ((st = pick_run(&runs, opts, &pick, err)) != TFD_OK)
		goto out;
	list_captures(pick, files, notes, NULL);
	if (files->n == before) {
		st = tfd_fail(err, TFD_E_FORMAT, "run '%s' holds no profiler captures",
			      tfd_path_base(pick));
		goto out;
	}
	*run_out = tfd_arena_intern_cstr(arena, tfd_path_base(pick));
	if (runs.n > 1 && notes && !(opts && opts->run)) {
		vec_push(notes, note_printf("analyzed run '%s': the newest of %zu runs by "
					    "name (run names are times)",
					    tfd_path_base(pick), runs.n));
		for (size_t i = runs.n; i-- > 0;)
			if (runs.v[i] != pick)
				vec_push(notes, note_printf("skipped run '%s' (%s): use --run %s, "
							    "or --all-runs for every run",
							    tfd_path_base(runs.v[i]), runs.v[i],
							    tfd_path_base(runs.v[i])));
	}
out:
	free_strs(&runs);
	free_strs(&denied);
	return st;
}

/* ---- files on several threads --------------------------------------------- */

size_t tfd_load_cores(const struct tfd_load_opts *opts)
{
	return opts && opts->jobs > 0 ? (size_t)opts->jobs : tfd_cpu_count();
}

/* Discovery's notes, interned in cap. */
static void set_notes(struct tfd_capture *cap, const char *const *notes, size_t n)
{
	if (!n)
		return;
	cap->notes = tfd_arena_alloc(&cap->arena, n * sizeof(*cap->notes));
	for (size_t k = 0; k < n; k++)
		cap->notes[cap->nnotes++] = tfd_arena_intern_cstr(&cap->arena, notes[k]);
}

/* What happens to file i once it is loaded (into a capture of its own):
 * fn may keep it by setting *capp to NULL; else it is freed. */
typedef enum tfd_status (*loaded_fn)(struct tfd_capture **capp, size_t i, void *ctx,
				     struct tfd_err *err);

struct job {
	enum tfd_status load_st, fn_st;
	struct tfd_err load_err, fn_err;
};

struct pool {
	const char *const *files;
	size_t n;
	const struct tfd_load_opts *opts, *sub;
	const struct tfd_capture *found; /* discovery's notes and run, or NULL */
	bool finish; /* each capture is finished before fn (else the caller's) */
	loaded_fn fn;
	void *ctx;
	struct job *jobs;
	pthread_mutex_t mu;
};

static void progress(struct pool *pl, size_t i, size_t events)
{
	if (pl->opts && pl->opts->progress) {
		pthread_mutex_lock(&pl->mu);
		pl->opts->progress(pl->files[i], i, pl->n, events);
		pthread_mutex_unlock(&pl->mu);
	}
}

static void pool_one(struct pool *pl, size_t i)
{
	struct job *j = &pl->jobs[i];
	struct tfd_capture *cap = tfd_capture_new();

	if (pl->found) {
		set_notes(cap, pl->found->notes, pl->found->nnotes);
		if (pl->found->run)
			cap->run = tfd_arena_intern_cstr(&cap->arena, pl->found->run);
	}
	j->load_st = tfd_load_file(cap, pl->files[i], pl->sub, &j->load_err);
	if (!j->load_st) {
		for (size_t h = 0; h < cap->nhosts; h++)
			cap->hosts[h].path = tfd_arena_intern_cstr(&cap->arena, pl->files[i]);
		if (pl->finish)
			j->load_st = tfd_capture_finish(cap, &j->load_err);
	}
	if (!j->load_st) {
		progress(pl, i, cap->nhosts ? cap->hosts[cap->nhosts - 1].nevents : 0);
		j->fn_st = pl->fn(&cap, i, pl->ctx, &j->fn_err);
	}
	tfd_capture_free(cap);
}

static bool pool_item(void *ctx, size_t worker, size_t i)
{
	struct pool *pl = ctx;

	(void)worker;
	progress(pl, i, 0);
	pool_one(pl, i);
	return true; /* each file's error is its job's: every file is read */
}

/* Every file through pool_one() (finished first if finish), on up to one
 * thread per core (at most 8), each file getting the cores left over for
 * its lines; then the error one load gives: the first file, in order, that
 * does not load, else the first that fn failed on. */
static enum tfd_status run_pool(const char *const *files, size_t n,
				const struct tfd_load_opts *opts, const struct tfd_capture *found,
				bool finish, loaded_fn fn, void *ctx, struct tfd_err *err)
{
	size_t cores = tfd_load_cores(opts);
	size_t nthreads = cores < 8 ? cores : 8;
	struct tfd_load_opts sub;
	struct pool pl;
	enum tfd_status st = TFD_OK;

	if (nthreads > n)
		nthreads = n;
	if (opts)
		sub = *opts;
	else
		memset(&sub, 0, sizeof(sub));
	if (nthreads > 1)
		sub.jobs = (int)(cores / nthreads ? cores / nthreads : 1);
	memset(&pl, 0, sizeof(pl));
	pl.files = files;
	pl.n = n;
	pl.opts = opts;
	pl.sub = &sub;
	pl.found = found;
	pl.finish = finish;
	pl.fn = fn;
	pl.ctx = ctx;
	pl.jobs = xcalloc(n + 1, sizeof(*pl.jobs));
	pthread_mutex_init(&pl.mu, NULL);
	tfd_pool_run(n, nthreads, NULL, false, pool_item, &pl);
	pthread_mutex_destroy(&pl.mu);
	for (size_t i = 0; i < n && !st; i++)
		if (pl.jobs[i].load_st) {
			st = pl.jobs[i].load_st;
			*err = pl.jobs[i].load_err;
		}
	for (size_t i = 0; i < n && !st; i++)
		if (pl.jobs[i].fn_st) {
			st = pl.jobs[i].fn_st;
			*err = pl.jobs[i].fn_err;
		}
	free(pl.jobs);
	if (opts && opts->progress)
		opts->progress(NULL, n, n, 0);
	return st;
}

/* Keeps each file's capture in its slot. */
static enum tfd_status keep_loaded(struct tfd_capture **capp, size_t i, void *ctx,
				   struct tfd_err *err)
{
	struct tfd_capture **slots = ctx;

	(void)err;
	slots[i] = *capp;
	*capp = NULL;
	return TFD_OK;
}

/* Load files into cap in order; with several files, on several threads,
 * each into a capture of its own (no shared arena), moved into cap
 * afterwards. The first failing file, in order, is the error. */
static enum tfd_status load_files(struct tfd_capture *cap, const char *const *files, size_t n,
				  const struct tfd_load_opts *opts, struct tfd_err *err)
{
	size_t cores = tfd_load_cores(opts);
	struct tfd_capture **slots;
	enum tfd_status st;

	if (n <= 1 || cores <= 1) {
		/* one after another, straight into cap */
		for (size_t i = 0; i < n; i++) {
			if (opts && opts->progress)
				opts->progress(files[i], i, n, 0);
			st = tfd_load_file(cap, files[i], opts, err);
			if (st)
				return st;
			cap->hosts[cap->nhosts - 1].path =
			    tfd_arena_intern_cstr(&cap->arena, files[i]);
			if (opts && opts->progress)
				opts->progress(files[i], i, n, cap->hosts[cap->nhosts - 1].nevents);
		}
		if (opts && opts->progress && n)
			opts->progress(NULL, n, n, 0);
		return TFD_OK;
	}
	slots = xcalloc(n + 1, sizeof(*slots));
	st = run_pool(files, n, opts, NULL, false, keep_loaded, slots, err);
	for (size_t i = 0; i < n; i++) {
		if (slots[i] && st)
			tfd_capture_free(slots[i]); /* a load failed: nothing to keep */
		else if (slots[i])
			tfd_capture_adopt(cap, slots[i], files[i]); /* strings stay in its arena */
	}
	free(slots);
	return st;
}

void tfd_run_dirs(const char *dir, char ***paths, size_t *n)
{
	strvec runs = {0}, denied = {0};

	collect_runs(dir, &runs, &denied);
	free_strs(&denied);
	if (runs.n > 1)
		qsort(runs.v, runs.n, sizeof(char *), run_cmp);
	*paths = runs.v;
	*n = runs.n;
}

enum tfd_status tfd_capture_runs(const char *path, char ***names, size_t *n, struct tfd_err *err)
{
	strvec runs = {0}, direct = {0}, denied = {0};

	*names = NULL;
	*n = 0;
	if (!is_dir(path))
		return tfd_fail(err, TFD_E_USAGE, "%s: --all-runs needs a log directory", path);
	list_captures(path, &direct, NULL, &denied);
	if (direct.n) {
		/* a run directory itself: one run */
		for (size_t i = 0; i < direct.n; i++)
			free(direct.v[i]);
		vec_free(&direct);
		*names = xmalloc(sizeof(char *));
		(*names)[0] = xstrdup(tfd_path_base(path));
		*n = 1;
		return TFD_OK;
	}
	collect_runs(path, &runs, &denied);
	if (runs.n == 0) {
		enum tfd_status st = none_found(path, &denied, err);

		free_strs(&denied);
		tfd_err_prefix(err, "%s", path);
		return st;
	}
	free_strs(&denied);
	qsort(runs.v, runs.n, sizeof(char *), run_cmp);
	*names = xmalloc(runs.n * sizeof(char *));
	for (size_t i = 0; i < runs.n; i++) {
		(*names)[(*n)++] = xstrdup(tfd_path_base(runs.v[i]));
		free(runs.v[i]);
	}
	vec_free(&runs);
	return TFD_OK;
}

/* Each capture once: a file given twice (the same directory twice, a link
 * to it) is read once, and a host's capture in two formats side by side
 * (h.xplane.pb and h.trace.json.gz) is read from the better one, as a run
 * directory's listing does; each skip is a note. */
static void dedupe_files(strvec *files, strvec *notes)
{
	size_t k = 0;
	struct stat *st = xcalloc(files->n + 1, sizeof(*st));
	bool *ok = xcalloc(files->n + 1, sizeof(*ok));

	for (size_t i = 0; i < files->n; i++)
		ok[i] = stat(files->v[i], &st[i]) == 0;
	for (size_t i = 0; i < files->n; i++) {
		const char *why = NULL;
		size_t j;

		for (j = 0; j < files->n && !why; j++) {
			char hi[256], hj[256], di[4096], dj[4096];
			int ri, rj;

			if (j == i)
				continue;
			if (j < i && ok[i] && ok[j] && st[i].st_dev == st[j].st_dev &&
			    st[i].st_ino == st[j].st_ino) {
				why = "the same file as";
				break;
			}
			ri = tfd_capture_file_rank(files->v[i]);
			rj = tfd_capture_file_rank(files->v[j]);
			if (ri < 0 || rj < 0 || rj >= ri)
				continue;
			tfd_host_from_path(files->v[i], hi, sizeof(hi));
			tfd_host_from_path(files->v[j], hj, sizeof(hj));
			tfd_path_dir(files->v[i], di, sizeof(di));
			tfd_path_dir(files->v[j], dj, sizeof(dj));
			if (strcmp(hi, hj) == 0 && strcmp(di, dj) == 0) {
				why = "the same host's capture is";
				break;
			}
		}
		if (why) {
			vec_push(notes,
				 note_printf("skipped %s: %s %s", files->v[i], why, files->v[j]));
			free(files->v[i]);
			files->v[i] = NULL;
		}
	}
	for (size_t i = 0; i < files->n; i++)
		if (files->v[i])
			files->v[k++] = files->v[i];
	files->n = k;
	free(st);
	free(ok);
}

/* The host files paths name, in host order (the shard applied), with
 * discovery's notes and the run name set on cap. */
static enum tfd_status discover(const char *const *paths, size_t npaths,
				const struct tfd_load_opts *opts, struct tfd_capture *cap,
				strvec *files, struct tfd_err *err)
{
	strvec notes = {0};
	enum tfd_status st = TFD_OK;

	for (size_t i = 0; i < npaths && !st; i++) {
		struct stat sb;

		if (stat(paths[i], &sb) < 0) {
			st = tfd_fail(err, TFD_E_IO, "%s: %s", paths[i], strerror(errno));
		} else if (S_ISDIR(sb.st_mode)) {
			const char *run = NULL;

			st = expand_dir(paths[i], opts, files, &run, &cap->arena, &notes, err);
			if (st)
				tfd_err_prefix(err, "%s", paths[i]);
			else if (run)
				cap->run = run;
		} else {
			vec_push(files, xstrdup(paths[i]));
		}
	}
	if (!st && npaths > 1)
		dedupe_files(files, &notes);
	if (!st)
		set_notes(cap, (const char *const *)notes.v, notes.n);
	if (!st && opts && opts->shard_count) {
		size_t k = 0;

		for (size_t i = 0; i < files->n; i++) {
			if (i % opts->shard_count == opts->shard_index)
				files->v[k++] = files->v[i];
			else
				free(files->v[i]);
		}
		files->n = k;
	}
	for (size_t k = 0; k < notes.n; k++)
		free(notes.v[k]);
	vec_free(&notes);
	return st;
}

static void free_files(strvec *files)
{
	for (size_t i = 0; i < files->n; i++)
		free(files->v[i]);
	vec_free(files);
}

enum tfd_status tfd_capture_load(const char *const *paths, size_t npaths,
				 const struct tfd_load_opts *opts, struct tfd_capture **out,
				 struct tfd_err *err)
{
	struct tfd_capture *cap = tfd_capture_new();
	strvec files = {0};
	enum tfd_status st;

	*out = NULL;
	st = discover(paths, npaths, opts, cap, &files, err);
	if (!st)
		st = load_files(cap, (const char *const *)files.v, files.n, opts, err);
	if (!st)
		st = tfd_capture_finish(cap, err);
	free_files(&files);
	if (st) {
		tfd_capture_free(cap);
		return st;
	}
	tfd_capture_name_hosts_apart(cap);
	*out = cap;
	return TFD_OK;
}

/* ---- one file at a time ------------------------------------------------- */

struct each {
	tfd_capture_fn fn;
	void *ctx;
	size_t n;
};

static enum tfd_status each_loaded(struct tfd_capture **capp, size_t i, void *ctx,
				   struct tfd_err *err)
{
	struct each *ea = ctx;

	return ea->fn(*capp, i, ea->n, ea->ctx, err);
}

enum tfd_status tfd_capture_each(const char *const *paths, size_t npaths,
				 const struct tfd_load_opts *opts, tfd_capture_fn fn, void *ctx,
				 struct tfd_err *err)
{
	struct tfd_capture *found = tfd_capture_new();
	strvec files = {0};
	struct each ea = {fn, ctx, 0};
	enum tfd_status st;

	st = discover(paths, npaths, opts, found, &files, err);
	if (!st) {
		ea.n = files.n;
		st = run_pool((const char *const *)files.v, files.n, opts, found, true, each_loaded,
			      &ea, err);
	}
	free_files(&files);
	tfd_capture_free(found);
	return st;
}
