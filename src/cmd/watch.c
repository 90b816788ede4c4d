/* watch.c - `tfdoctor watch`: recommendations right after a capture.
 *
 * Watches TensorBoard log directories for new runs under plugins/profile and
 * analyzes each run once it is complete: it has the expected number of host
 * files (--hosts, else at least one), none of them has changed for --settle
 * seconds, and it loads. inotify wakes the loop early on Linux; the scan
 * runs every --poll seconds either way, so a missed event only delays. A
 * file still being written is never analyzed half-way; a run that does not
 * complete within --timeout is reported once with what is missing.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opts.h"
#include "tfd/analysis.h"
#include "tfd/buf.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/history.h"
#include "tfd/load.h"
#include "tfd/nightly.h"
#include "tfd/outfile.h"
#include "tfd/render.h"
#include "tfd/rules.h"
#include "tfd/vec.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct wfile {
	char *name;
	bool present; /* seen in the last scan */
	off_t size;
	double changed; /* when its size or mtime last changed */
	time_t mtime;
};

enum run_state { RUN_WAITING, RUN_DONE, RUN_SKIPPED, RUN_TIMED_OUT };

struct wrun {
	char *dir, *name;
	char *out; /* its report's name under --out-dir, less the extension:
		    * the run's path below the log directory, so that two
		    * jobs' runs of one name do not share a report */
	dev_t dev; /* the run directory's identity: one run however it is */
	ino_t ino; /* reached (a symlink loop, a directory given twice) */
	enum run_state state;
	double first_seen;
	VEC(struct wfile) files;
	bool seen; /* found in this scan */
};

struct watch {
	const char *format, *out_dir, *exec, *history, *job, *rules_dir;
	double poll, settle, timeout;
	int hosts, quiet;
	bool once, existing;
	const struct tfd_ruleset *rules;
	VEC(struct wrun) runs;
	size_t nroots;
	bool *gone; /* a log directory no longer there, said once */
	int ino;
	size_t analyzed;
	size_t failed; /* complete runs whose analysis or report failed */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void say(const struct watch *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(const struct watch *w, const char *fmt, ...)
{
	va_list ap;

	struct tfd_buf m;

	if (w->quiet)
		return;
	/* one line: run and directory names are the file system's, any bytes */
	tfd_buf_init(&m);
	va_start(ap, fmt);
	tfd_buf_vprintf(&m, fmt, ap);
	va_end(ap);
	fprintf(stderr, "tfdoctor: watch: %s\n", m.len ? tfd_name_on_line(m.s) : "");
	tfd_buf_release(&m);
}

static struct wrun *find_run(struct watch *w, const struct stat *st)
{
	for (size_t i = 0; i < w->runs.n; i++)
		if (w->runs.v[i].dev == st->st_dev && w->runs.v[i].ino == st->st_ino)
			return &w->runs.v[i];
	return NULL;
}

static void free_files(struct wrun *r)
{
	for (size_t i = 0; i < r->files.n; i++)
		free(r->files.v[i].name);
	r->files.n = 0;
}

/* Refresh a run's files: sizes and the time each last changed. */
static void scan_files(struct wrun *r, double t)
{
	DIR *d = opendir(r->dir);
	struct dirent *de;

	for (size_t i = 0; i < r->files.n; i++)
		r->files.v[i].present = false; /* gone unless seen again */
	while (d && (de = readdir(d)) != NULL) {
		char p[4096];
		struct stat st;
		struct wfile *f = NULL;

		if (de->d_name[0] == '.' || !tfd_capture_file_name(de->d_name))
			continue;
		snprintf(p, sizeof(p), "%s/%s", r->dir, de->d_name);
		if (stat(p, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		for (size_t i = 0; i < r->files.n && !f; i++)
			if (strcmp(r->files.v[i].name, de->d_name) == 0)
				f = &r->files.v[i];
		if (!f) {
			struct wfile nf = {xstrdup(de->d_name), false, -1, t, 0};

			vec_push(&r->files, nf);
			f = &r->files.v[r->files.n - 1];
		}
		if (f->size != st.st_size || f->mtime != st.st_mtime)
			f->changed = t;
		f->size = st.st_size;
		f->mtime = st.st_mtime;
		f->present = true;
	}
	if (d)
		closedir(d);
	for (size_t i = 0; i < r->files.n;) /* removed or renamed away */
		if (!r->files.v[i].present) {
			free(r->files.v[i].name);
			r->files.v[i] = r->files.v[--r->files.n];
		} else {
			i++;
		}
}

static void add_watch(struct watch *w, const char *dir)
{
	if (w->ino >= 0)
		(void)inotify_add_watch(w->ino, dir,
					IN_CREATE | IN_CLOSE_WRITE | IN_MODIFY | IN_MOVED_TO |
					    IN_MOVED_FROM | IN_DELETE);
}

/* One path component of a report name: the '.' that joins components and
 * the '%' that escapes are written %2E and %25, so that two runs never map
 * to one name (a run "sub.run1" and a run "run1" under "sub/"). */
static void put_part(struct tfd_buf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '.')
			tfd_buf_puts(b, "%2E");
		else if (s[i] == '%')
			tfd_buf_puts(b, "%25");
		else
			tfd_buf_add(b, s + i, 1);
	}
}

/* The report name of run (at rp, in plugins, a directory under the log
 * directory root): the directories between root and plugins, and the
 * root's own name when several are watched, before the run's, joined by
 * '.'; a name another run holds already gets its directory's hash. */
static char *out_name(const struct watch *w, const char *root, const char *plugins, const char *rp,
		      const char *run)
{
	struct tfd_buf b;
	const char *rel = plugins + strlen(root);
	size_t n = strlen(rel) > 7 ? strlen(rel) - 7 : 0; /* less "plugins" */
	uint32_t h = 2166136261u;

	tfd_buf_init(&b);
	if (w->nroots > 1) {
		size_t e = strlen(root), k;

		while (e > 1 && root[e - 1] == '/')
			e--;
		for (k = e; k > 0 && root[k - 1] != '/';)
			k--;
		put_part(&b, root + k, e - k);
		tfd_buf_puts(&b, ".");
	}
	for (size_t i = 0; i < n;) {
		size_t k = strcspn(rel + i, "/");

		if (k) {
			put_part(&b, rel + i, k < n - i ? k : n - i);
			tfd_buf_puts(&b, ".");
		}
		i += k + 1;
	}
	put_part(&b, run, strlen(run));
	for (size_t i = 0; i < w->runs.n; i++)
		if (strcmp(w->runs.v[i].out, b.s) == 0) {
			for (const char *c = rp; *c; c++)
				h = (h ^ (uint8_t)*c) * 16777619u;
			tfd_buf_printf(&b, "-%08x", h);
			break;
		}
	return b.s;
}

/* inotify on every directory under dir down to depth, so that a run
 * appearing anywhere discovery looks is seen at once (a poll finds it
 * anyway). */
static void watch_tree(struct watch *w, const char *dir, int depth)
{
	DIR *d;
	struct dirent *de;
	char p[4096];

	if (depth < 0 || !(d = opendir(dir)))
		return;
	add_watch(w, dir);
	while ((de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.' ||
		    snprintf(p, sizeof(p), "%s/%s", dir, de->d_name) >= (int)sizeof(p) ||
		    stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		watch_tree(w, p, depth - 1);
	}
	closedir(d);
}

/* The directory a run's report name is made from (its plugins directory,
 * or the log directory root when the run is not under one below it). */
static void plugins_of(const char *root, const char *rp, char *buf, size_t len)
{
	size_t n = strlen(rp), rl = strlen(root);

	snprintf(buf, len, "%s", root);
	while (n && rp[n - 1] != '/') /* the run */
		n--;
	while (n && rp[n - 1] == '/')
		n--;
	while (n && rp[n - 1] != '/') /* profile */
		n--;
	while (n && rp[n - 1] == '/')
		n--;
	if (n >= rl + 8 && strncmp(rp, root, rl) == 0 && memcmp(rp + n - 8, "/plugins", 8) == 0 &&
	    n < len)
		snprintf(buf, len, "%.*s", (int)n, rp);
}

/* A run directory found under root: new, renamed (the same directory
 * under another name: a run written as run.tmp and renamed into place),
 * or seen again. */
static void note_run(struct watch *w, const char *root, const char *rp, double t, bool initial)
{
	const char *name =
	    strrchr(rp, '/') ? strrchr(rp, '/') + 1 : rp; /* paths have no trailing '/' */
	char plugins[4096];
	struct stat st;
	struct wrun *r;

	if (stat(rp, &st) != 0 || !S_ISDIR(st.st_mode))
		return;
	plugins_of(root, rp, plugins, sizeof(plugins));
	r = find_run(w, &st);
	if (!r) {
		struct wrun nr;

		memset(&nr, 0, sizeof(nr));
		nr.dev = st.st_dev;
		nr.ino = st.st_ino;
		nr.dir = xstrdup(rp);
		nr.name = xstrdup(name);
		nr.out = out_name(w, root, plugins, rp, name);
		nr.first_seen = t;
		nr.state = initial && !w->existing ? RUN_SKIPPED : RUN_WAITING;
		vec_push(&w->runs, nr);
		r = &w->runs.v[w->runs.n - 1];
		if (nr.state == RUN_WAITING && !initial)
			say(w, "new run '%s' (%s)", r->name, r->dir);
	} else if (strcmp(r->dir, rp) != 0 && r->state == RUN_WAITING) {
		char *old = r->out;

		say(w, "run '%s' is now '%s' (%s)", r->name, name, rp);
		free(r->dir);
		free(r->name);
		r->dir = xstrdup(rp);
		r->name = xstrdup(name);
		/* its old report name is no other run's */
		r->out = (char *)"";
		r->out = out_name(w, root, plugins, rp, name);
		free(old);
	}
	r->seen = true;
	add_watch(w, rp);
}

/* Every run directory under the log directory root, found as analyze
 * finds runs (tfd_run_dirs: one discovery for every command). */
static void find_runs(struct watch *w, const char *root, double t, bool initial)
{
	char **runs;
	size_t n;

	watch_tree(w, root, 4);
	tfd_run_dirs(root, &runs, &n);
	for (size_t i = 0; i < n; i++) {
		note_run(w, root, runs[i], t, initial);
		free(runs[i]);
	}
	free(runs);
}

/* The run's report path under --out-dir. */
static void report_path(const struct watch *w, const struct wrun *r, char *buf, size_t len)
{
	const char *ext = strcmp(w->format, "json") == 0 ? "json"
			  : strcmp(w->format, "md") == 0 ? "md"
							 : "txt";

	snprintf(buf, len, "%s/%s.%s", w->out_dir, r->out, ext);
}

/* Render the analysis of a complete run; md is the nightly report's. */
static enum tfd_status render(const struct watch *w, const struct wrun *r,
			      const struct tfd_analysis *an, const struct tfd_findings *fs,
			      struct tfd_job *job, struct tfd_buf *b, struct tfd_err *err)
{
	struct tfd_history *db = NULL;
	char stamp[32];
	time_t t = time(NULL);
	struct tm tmv;
	enum tfd_status st = TFD_OK;

	gmtime_r(&t, &tmv);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tmv);
	job->name = w->job ? w->job : r->name;
	job->analysis = an;
	job->findings = fs;
	tfd_nightly_record(job, r->name, r->dir, stamp);
	if (w->history) {
		struct tfd_hist_run rec;

		st = tfd_history_open(w->history, &db, err);
		if (!st) {
			rec = job->current;
			st = tfd_history_record(db, &rec, 1, err);
			job->current.id = rec.id;
			if (!st && rec.already)
				say(w,
				    "run '%s' is already in the history (the same capture): not "
				    "recorded again",
				    r->name);
		}
	}
	if (!st)
		st = tfd_nightly_window(job, db, db != NULL, NULL, 60, err);
	if (!st)
		tfd_nightly_compare(job, 20.0);
	tfd_history_close(db);
	if (st)
		return st;
	if (strcmp(w->format, "json") == 0 && !w->out_dir)
		tfd_render_json_line(an, fs, b); /* JSON Lines: one record a run */
	else if (strcmp(w->format, "json") == 0)
		tfd_render_json(an, fs, b);
	else if (strcmp(w->format, "md") == 0)
		tfd_nightly_md(job, 1, b);
	else
		tfd_render_text(an, fs, b);
	if (strcmp(w->format, "text") == 0)
		tfd_buf_escape_controls(b);
	return TFD_OK;
}

/* Wait for the --exec hook (process group pid) and say how it ended. When
 * watch is told to stop meanwhile, the hook's group is told too and
 * waited for: no hook is left behind. */
static void hook_status(const struct watch *w, const struct wrun *r, pid_t pid)
{
	int status = 0;
	bool told = false;

	for (;;) {
		if (stop && !told) {
			kill(-pid, SIGTERM);
			told = true;
		}
		if (waitpid(pid, &status, 0) == pid)
			break;
		if (errno != EINTR) {
			say(w, "--exec for run '%s': cannot wait for it: %s", r->name,
			    strerror(errno));
			return;
		}
	}
	if (WIFSIGNALED(status))
		say(w, "--exec for run '%s' ended by signal %d%s", r->name, WTERMSIG(status),
		    told ? " (watch was stopping and passed the signal on)" : "");
	else if (WEXITSTATUS(status))
		say(w, "--exec for run '%s' failed (exit status %d)", r->name, WEXITSTATUS(status));
	else if (told)
		say(w, "--exec for run '%s' finished after watch was told to stop", r->name);
}

/* --exec CMD with the report and the verdict in the environment. */
static void run_exec(const struct watch *w, const struct wrun *r, const char *report,
		     const struct tfd_analysis *an)
{
	const struct tfd_host_result *h = an->nhosts ? &an->hosts[0] : NULL;
	const struct tfd_pipeline *p = h && h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0); /* its own group: a stop signals the hook's children too */
		signal(SIGXFSZ, SIG_DFL);
		setenv("TFDOCTOR_RUN", r->name, 1);
		setenv("TFDOCTOR_RUN_DIR", r->dir, 1);
		setenv("TFDOCTOR_REPORT", report, 1);
		setenv("TFDOCTOR_VERDICT", h ? tfd_bound_name(h->bound) : "unknown", 1);
		/* a host that is not input-bound has no bottleneck, only a
		 * slowest stage */
		setenv("TFDOCTOR_BOTTLENECK",
		       p && p->bottleneck >= 0 && tfd_host_has_bottleneck(h)
			   ? p->stages[p->bottleneck].name
			   : "",
		       1);
		setenv("TFDOCTOR_SLOWEST_STAGE",
		       p && p->bottleneck >= 0 ? p->stages[p->bottleneck].name : "", 1);
		execl("/bin/sh", "sh", "-c", w->exec, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		say(w, "--exec for run '%s' could not run: %s", r->name, strerror(errno));
		return;
	}
	setpgid(pid, pid); /* as the child does: whichever runs first */
	hook_status(w, r, pid);
}

/* Analyze a complete run and deliver the result. The capture is loaded
 * already (cap): that it loads is part of being complete. */
static void deliver(struct watch *w, struct wrun *r, struct tfd_capture *cap)
{
	struct tfd_analysis *an = NULL;
	struct tfd_findings fs = {0};
	struct tfd_job job;
	struct tfd_buf b;
	struct tfd_err err = {0};
	char path[4200] = "-";

	memset(&job, 0, sizeof(job));
	tfd_buf_init(&b);
	/* the capture is freed after this: its events may go once read */
	if (tfd_analyze_lean(cap, NULL, &an, &err)) {
		tfd_err_prefix(&err, "run '%s'", r->name);
		tfd_cli_report(&err);
		w->failed++;
		goto out;
	}
	if (!an->run && !w->out_dir)
		an->run = r->name; /* a JSON Lines record names its run */
	tfd_rules_eval(w->rules, an, &fs);
	if (render(w, r, an, &fs, &job, &b, &err)) {
		tfd_cli_report(&err);
		w->failed++;
		goto out;
	}
	if (w->out_dir)
		report_path(w, r, path, sizeof(path));
	else if (strcmp(w->format, "json") != 0 && (w->runs.n > 1 || w->analyzed))
		printf("== run %s\n", r->name);
	if (w->out_dir ? tfd_output_write_in_dir(path, b.s, b.len, &err)
		       : tfd_output_write(path, b.s, b.len, &err)) {
		tfd_cli_report(&err);
		w->failed++;
		goto out;
	}
	w->analyzed++;
	say(w, "analyzed run '%s' (%zu host%s)%s%s", r->name, cap->nhosts,
	    cap->nhosts == 1 ? "" : "s", w->out_dir ? ": " : "", w->out_dir ? path : "");
	if (w->exec)
		run_exec(w, r, path, an);
out:
	tfd_nightly_job_release(&job);
	tfd_findings_free(&fs);
	tfd_analysis_free(an);
	tfd_buf_release(&b);
}

/* Hosts present: file names less their capture suffix, counted once. */
static size_t count_hosts(const struct wrun *r)
{
	size_t n = 0;

	for (size_t i = 0; i < r->files.n; i++) {
		const char *a = r->files.v[i].name;
		size_t la = strcspn(a, "."), dup = 0;

		for (size_t k = 0; k < i && !dup; k++)
			dup = strncmp(r->files.v[k].name, a, la) == 0 &&
			      strcspn(r->files.v[k].name, ".") == la;
		n += !dup;
	}
	return n;
}

/* Why run r is not complete yet (empty when it is, as far as files go). */
static void missing(const struct watch *w, const struct wrun *r, double t, bool by_mtime, char *buf,
		    size_t len)
{
	size_t hosts = count_hosts(r);
	time_t wall = time(NULL);

	buf[0] = '\0';
	if (!r->files.n) {
		snprintf(buf, len, "no capture files yet");
		return;
	}
	if (w->hosts > 0 && hosts < (size_t)w->hosts) {
		snprintf(buf, len, "%zu of %d hosts", hosts, w->hosts);
		return;
	}
	for (size_t i = 0; i < r->files.n; i++) {
		const struct wfile *f = &r->files.v[i];
		/* --settle 0 waits for nothing: a file's time can lie ahead of the
		 * clock (a file system's finer-grained or a server's clock) */
		bool settled = w->settle <= 0 || (by_mtime ? difftime(wall, f->mtime) >= w->settle
							   : t - f->changed >= w->settle);

		if (!settled) {
			snprintf(buf, len, "%s is still being written", f->name);
			return;
		}
	}
}

/* Check one waiting run; analyze it once it is complete. */
static void check_run(struct watch *w, struct wrun *r, double t)
{
	char why[1100];
	const char *paths[1] = {r->dir};
	struct tfd_load_opts lo = {0};
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};

	scan_files(r, t);
	missing(w, r, t, w->once, why, sizeof(why));
	if (!why[0]) {
		if (tfd_capture_load(paths, 1, &lo, &cap, &err) == TFD_OK) {
			r->state = RUN_DONE;
			deliver(w, r, cap);
			tfd_capture_free(cap);
			return;
		}
		snprintf(why, sizeof(why), "does not load: %.*s", (int)(sizeof(why) - 20), err.msg);
	}
	if (w->once) {
		r->state = RUN_SKIPPED;
		say(w, "run '%s' is not complete: %s", r->name, why);
	} else if (w->timeout > 0 && t - r->first_seen >= w->timeout) {
		r->state = RUN_TIMED_OUT;
		fprintf(stderr, "tfdoctor: watch: run '%s' incomplete after %.0f s: %s\n", r->name,
			t - r->first_seen, why);
	}
}

/* Runs by name (profiler runs are named by time), then directory. */
static int run_order(const void *a, const void *b)
{
	const struct wrun *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->dir, y->dir);
}

static void tick(struct watch *w, char **roots, size_t nroots, bool initial)
{
	double t = now_s();

	for (size_t i = 0; i < w->runs.n; i++)
		w->runs.v[i].seen = false;
	for (size_t i = 0; i < nroots; i++) {
		struct stat st;
		bool gone = stat(roots[i], &st) != 0 || !S_ISDIR(st.st_mode);

		if (gone != w->gone[i])
			say(w,
			    gone ? "log directory %s is gone: nothing is watched there until it "
				   "comes back"
				 : "log directory %s is back",
			    roots[i]);
		w->gone[i] = gone;
		find_runs(w, roots[i], t, initial);
	}
	for (size_t i = 0; i < w->runs.n;) {
		struct wrun *r = &w->runs.v[i];

		if (!r->seen) { /* removed or renamed away */
			if (r->state == RUN_WAITING)
				say(w, "run '%s' was removed before it completed", r->name);
			free_files(r);
			vec_free(&r->files);
			free(r->dir);
			free(r->name);
			free(r->out);
			*r = w->runs.v[--w->runs.n];
			continue;
		}
		i++;
	}
	/* runs that complete in one pass are delivered oldest first, whatever
	 * order the directory lists them in */
	if (w->runs.n > 1)
		qsort(w->runs.v, w->runs.n, sizeof(*w->runs.v), run_order);
	for (size_t i = 0; i < w->runs.n;) {
		struct wrun *r = &w->runs.v[i];

		if (r->state == RUN_WAITING && !initial) {
			char rp[4200];
			struct stat st;

			/* with --once, a report already in --out-dir means done:
			 * a file (a link or a FIFO planted there is no report) */
			if (w->once && w->out_dir) {
				report_path(w, r, rp, sizeof(rp));
				if (lstat(rp, &st) == 0 && S_ISREG(st.st_mode)) {
					r->state = RUN_DONE;
					i++;
					continue;
				}
			}
			check_run(w, r, t);
		}
		i++;
	}
}

/* Sleep until the poll interval ends or inotify says something changed. */
static void wait_a_bit(struct watch *w)
{
	struct pollfd pf = {w->ino, POLLIN, 0};
	char buf[4096];

	if (w->ino < 0) {
		struct timespec ts = {(time_t)w->poll, (long)((w->poll - floor(w->poll)) * 1e9)};

		nanosleep(&ts, NULL);
		return;
	}
	if (poll(&pf, 1, (int)(w->poll * 1000)) > 0)
		while (read(w->ino, buf, sizeof(buf)) > 0)
			;
}

static int parse_secs(const char *arg, double *out)
{
	char *end;
	double v = strtod(arg, &end);

	if (*end || !(v >= 0) || v > 1e6)
		return -1;
	*out = v;
	return 0;
}

/* The options into w; 0, or the exit code of a usage error or --help (-1: 0).
 * *first: the first log directory's index in argv. */
static int watch_args(struct watch *w, int argc, char **argv, int *first)
{
	static const enum opt secs[] = {OPT_SETTLE, OPT_POLL, OPT_TIMEOUT};
	double *to[] = {&w->settle, &w->poll, &w->timeout};
	struct cli_opts o;
	int rc = tfd_cli_parse(&tfd_spec_watch, argc, argv, &o);

	if (rc)
		return rc == 1 ? -1 : rc;
	w->format = o.v[OPT_FORMAT] ? o.v[OPT_FORMAT] : "text";
	w->out_dir = o.v[OPT_OUT_DIR];
	w->exec = o.v[OPT_EXEC];
	w->history = o.v[OPT_HISTORY];
	w->job = o.v[OPT_JOB];
	w->rules_dir = o.v[OPT_RULES];
	w->existing = o.v[OPT_EXISTING] != NULL;
	w->once = o.v[OPT_ONCE] != NULL;
	w->quiet = o.v[OPT_QUIET] != NULL;
	if (o.v[OPT_HOSTS] && (w->hosts = atoi(o.v[OPT_HOSTS])) < 1)
		return tfd_cli_usage("watch", "--hosts needs a number >= 1");
	for (size_t k = 0; k < sizeof(secs) / sizeof(secs[0]); k++)
		if (o.v[secs[k]] &&
		    (parse_secs(o.v[secs[k]], to[k]) || (secs[k] == OPT_POLL && *to[k] < 0.01)))
			return tfd_cli_usage("watch", "'%s' is not a number of seconds",
					     o.v[secs[k]]);
	if (strcmp(w->format, "text") && strcmp(w->format, "json") && strcmp(w->format, "md"))
		return tfd_cli_usage("watch", "unknown format '%s' (text, json or md)", w->format);
	if (o.args >= argc)
		return tfd_cli_usage("watch", "no log directory given");
	for (int i = o.args; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode))
			return tfd_cli_usage("watch", "'%s' is not a directory", argv[i]);
	}
	*first = o.args;
	return 0;
}

int tfd_cmd_watch(int argc, char **argv)
{
	struct watch w;
	struct tfd_ruleset *rules = NULL;
	struct tfd_err err = {0};
	struct sigaction sa;
	int first = 0, rc;

	memset(&w, 0, sizeof(w));
	w.poll = 1;
	w.settle = 5;
	w.timeout = 600;
	w.ino = -1;
	rc = watch_args(&w, argc, argv, &first);
	if (rc)
		return rc < 0 ? 0 : rc;
	if (w.out_dir && mkdir(w.out_dir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "tfdoctor: %s: %s\n", w.out_dir, strerror(errno));
		return 1;
	}
	if (tfd_rules_load_default(w.rules_dir, &rules, &err))
		return tfd_cli_report(&err);
	w.rules = rules;
	if (w.once)
		w.existing = true;
	else
		w.ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	w.nroots = (size_t)(argc - first);
	w.gone = xcalloc(w.nroots, sizeof(*w.gone));
	tick(&w, argv + first, w.nroots, true);
	if (!w.once)
		say(&w, "watching %d director%s (%zu run%s present%s)", argc - first,
		    argc - first == 1 ? "y" : "ies", w.runs.n, w.runs.n == 1 ? "" : "s",
		    w.existing ? "" : ", skipped");
	while (!stop) {
		tick(&w, argv + first, (size_t)(argc - first), false);
		fflush(stdout);
		if (w.once)
			break;
		wait_a_bit(&w);
	}
	if (stop)
		say(&w, "stopped");
	for (size_t i = 0; i < w.runs.n; i++) {
		free_files(&w.runs.v[i]);
		vec_free(&w.runs.v[i].files);
		free(w.runs.v[i].dir);
		free(w.runs.v[i].name);
		free(w.runs.v[i].out);
	}
	free(w.gone);
	vec_free(&w.runs);
	if (w.ino >= 0)
		close(w.ino);
	tfd_rules_free(rules);
	/* --once for cron: a run it could not analyze or report is a failure */
	return w.once && w.failed ? 1 : 0;
}
