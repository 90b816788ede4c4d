/* history.c - the report history: SQLite storage (the embedded default; the
 * only user of sqlite3, loaded on first use), or a PostgreSQL server for a
 * postgresql:// URL (history_pg.c). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <pthread.h>
#include <sqlite3.h>

#include "history_impl.h"
#include "tfd/dl.h"
#include "tfd/infile.h"

/* SQLite's functions, resolved on the first history opened (tfd/dl.h): the
 * commands without a history never map the library */
static struct {
	int (*open_v2)(const char *, sqlite3 **, int, const char *);
	int (*close)(sqlite3 *);
	int (*busy_timeout)(sqlite3 *, int);
	int (*exec)(sqlite3 *, const char *, int (*)(void *, int, char **, char **), void *,
		    char **);
	const char *(*errmsg)(sqlite3 *);
	int (*errcode)(sqlite3 *);
	int (*prepare_v2)(sqlite3 *, const char *, int, sqlite3_stmt **, const char **);
	int (*finalize)(sqlite3_stmt *);
	int (*step)(sqlite3_stmt *);
	int (*reset)(sqlite3_stmt *);
	int (*bind_int)(sqlite3_stmt *, int, int);
	int (*bind_int64)(sqlite3_stmt *, int, sqlite3_int64);
	int (*bind_double)(sqlite3_stmt *, int, double);
	int (*bind_null)(sqlite3_stmt *, int);
	int (*bind_text)(sqlite3_stmt *, int, const char *, int, void (*)(void *));
	int (*column_int)(sqlite3_stmt *, int);
	sqlite3_int64 (*column_int64)(sqlite3_stmt *, int);
	double (*column_double)(sqlite3_stmt *, int);
	const unsigned char *(*column_text)(sqlite3_stmt *, int);
	int (*column_type)(sqlite3_stmt *, int);
	sqlite3_int64 (*last_insert_rowid)(sqlite3 *);
	bool loaded;
	char why[256];
} sq;
static pthread_once_t sq_once = PTHREAD_ONCE_INIT;

static void sq_load(void)
{
	const struct tfd_dl_sym fns[] = {
	    {"sqlite3_open_v2", (void **)&sq.open_v2},
	    {"sqlite3_close", (void **)&sq.close},
	    {"sqlite3_busy_timeout", (void **)&sq.busy_timeout},
	    {"sqlite3_exec", (void **)&sq.exec},
	    {"sqlite3_errmsg", (void **)&sq.errmsg},
	    {"sqlite3_errcode", (void **)&sq.errcode},
	    {"sqlite3_prepare_v2", (void **)&sq.prepare_v2},
	    {"sqlite3_finalize", (void **)&sq.finalize},
	    {"sqlite3_step", (void **)&sq.step},
	    {"sqlite3_reset", (void **)&sq.reset},
	    {"sqlite3_bind_int", (void **)&sq.bind_int},
	    {"sqlite3_bind_int64", (void **)&sq.bind_int64},
	    {"sqlite3_bind_double", (void **)&sq.bind_double},
	    {"sqlite3_bind_null", (void **)&sq.bind_null},
	    {"sqlite3_bind_text", (void **)&sq.bind_text},
	    {"sqlite3_column_int", (void **)&sq.column_int},
	    {"sqlite3_column_int64", (void **)&sq.column_int64},
	    {"sqlite3_column_double", (void **)&sq.column_double},
	    {"sqlite3_column_text", (void **)&sq.column_text},
	    {"sqlite3_column_type", (void **)&sq.column_type},
	    {"sqlite3_last_insert_rowid", (void **)&sq.last_insert_rowid},
	};

	sq.loaded = tfd_dl_load("libsqlite3.so.0", fns, sizeof(fns) / sizeof(fns[0]), sq.why,
				sizeof(sq.why));
}

#define sqlite3_open_v2 sq.open_v2
#define sqlite3_close sq.close
#define sqlite3_busy_timeout sq.busy_timeout
#define sqlite3_exec sq.exec
#define sqlite3_errmsg sq.errmsg
#define sqlite3_errcode sq.errcode
#define sqlite3_prepare_v2 sq.prepare_v2
#define sqlite3_finalize sq.finalize
#define sqlite3_step sq.step
#define sqlite3_reset sq.reset
#define sqlite3_bind_int sq.bind_int
#define sqlite3_bind_int64 sq.bind_int64
#define sqlite3_bind_double sq.bind_double
#define sqlite3_bind_null sq.bind_null
#define sqlite3_bind_text sq.bind_text
#define sqlite3_column_int sq.column_int
#define sqlite3_column_int64 sq.column_int64
#define sqlite3_column_double sq.column_double
#define sqlite3_column_text sq.column_text
#define sqlite3_column_type sq.column_type
#define sqlite3_last_insert_rowid sq.last_insert_rowid

struct tfd_history {
	const struct tfd_hist_backend *be;
	void *ctx;   /* the backend's handle: this history (SQLite) or a pg_hist */
	sqlite3 *db; /* SQLite */
	char path[512];
	bool held; /* a tfd_history_record_held() transaction is open */
};

static const struct tfd_hist_backend sqlite_backend;

static enum tfd_status open_pg(const char *url, bool existing, struct tfd_history **out,
			       struct tfd_err *err)
{
	struct pg_hist *pg = NULL;
	enum tfd_status st = tfd_hist_pg_open(url, existing, &pg, err);

	if (st)
		return st;
	*out = xcalloc(1, sizeof(**out));
	(*out)->be = &tfd_hist_pg_backend;
	(*out)->ctx = pg;
	snprintf((*out)->path, sizeof((*out)->path), "%s", tfd_hist_pg_name(pg));
	return TFD_OK;
}

bool tfd_history_is_url(const char *spec)
{
	return tfd_hist_is_pg(spec);
}

void tfd_history_display(const char *spec, char *out, size_t len)
{
	if (tfd_hist_is_pg(spec))
		tfd_hist_pg_display(spec, out, len);
	else
		snprintf(out, len, "%s", spec);
}

/* Migrations: entry i brings the schema from version i to i + 1. */
static const char *const migrations[] = {
    "CREATE TABLE runs ("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  job TEXT NOT NULL, run TEXT NOT NULL, recorded_at TEXT NOT NULL, source TEXT NOT NULL);"
    "CREATE INDEX runs_job ON runs(job, id);"
    "CREATE TABLE hosts ("
    "  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    "  host TEXT NOT NULL, rank INTEGER NOT NULL, input_percent REAL, bound TEXT NOT NULL,"
    "  max_latency_ns INTEGER NOT NULL, p50_ns INTEGER NOT NULL, p95_ns INTEGER NOT NULL,"
    "  calls INTEGER NOT NULL, slow_calls INTEGER NOT NULL, pipeline TEXT NOT NULL,"
    "  bottleneck TEXT NOT NULL, bottleneck_long_name TEXT NOT NULL,"
    "  bottleneck_share REAL NOT NULL, top_rule TEXT NOT NULL, top_severity TEXT NOT NULL,"
    "  top_title TEXT NOT NULL, PRIMARY KEY (run_id, host));",
    "ALTER TABLE runs ADD COLUMN capture TEXT;"
    "CREATE INDEX runs_capture ON runs(job, run, capture);",
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))
#define TFD_STR_(x) #x
#define TFD_STR(x) TFD_STR_(x)

/* Our databases carry this in the header (PRAGMA application_id: "TFDH"). */
#define TFD_APP_ID 1413891144 /* 0x54464448 */

/* What a database is, read before anything is written to it. */
enum db_kind {
	DB_UNREADABLE, /* not a database, or it cannot be read */
	DB_EMPTY,      /* nothing in it: a new history */
	DB_OURS,       /* stamped with TFD_APP_ID */
	DB_UNSTAMPED,  /* ours from before the stamp: our schema version, a runs table */
	DB_FOREIGN,    /* anything else: another application's, left untouched */
};

static int pragma_int(struct tfd_history *h, const char *sql, int *out)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* Whether the runs and hosts tables have the columns the first schema gave
 * them (a table named runs alone proves nothing). */
static bool has_our_tables(struct tfd_history *h)
{
	static const char *const probes[] = {
	    "SELECT id, job, run, recorded_at, source FROM runs LIMIT 0",
	    "SELECT run_id, host, rank, bottleneck, top_rule FROM hosts LIMIT 0",
	};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		sqlite3_stmt *st;

		if (sqlite3_prepare_v2(h->db, probes[i], -1, &st, NULL) != SQLITE_OK)
			return false;
		sqlite3_finalize(st);
	}
	return true;
}

static enum db_kind db_kind(struct tfd_history *h)
{
	int app = 0, ver = 0, objects = 0, runs = 0;

	if (pragma_int(h, "PRAGMA application_id", &app) ||
	    pragma_int(h, "PRAGMA user_version", &ver) ||
	    pragma_int(h, "SELECT COUNT(*) FROM sqlite_master", &objects) ||
	    pragma_int(h,
		       "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'runs'",
		       &runs))
		return DB_UNREADABLE;
	if (app == TFD_APP_ID)
		return DB_OURS;
	if (app == 0 && ver == 0 && objects == 0)
		return DB_EMPTY;
	if (app == 0 && ver >= 1 && ver <= NMIGRATIONS && runs == 1 && has_our_tables(h))
		return DB_UNSTAMPED;
	return DB_FOREIGN;
}

/* Why nothing can be written at path: its file system read-only or full,
 * or no permission to write it or its directory; NULL when none is so. */
static const char *write_trouble(const char *path)
{
	char dir[4200];
	struct statvfs vs;

	if (statvfs(tfd_path_dir(path, dir, sizeof(dir)), &vs) != 0)
		return NULL;
	if (vs.f_flag & ST_RDONLY)
		return "the file system is read-only";
	if (vs.f_bavail == 0)
		return "the disk is full";
	if (access(dir, W_OK) != 0 || (access(path, F_OK) == 0 && access(path, W_OK) != 0))
		return "no permission to write it or its directory";
	return NULL;
}

/* err: what failed, with SQLite's reason; a failure to write (SQLite cannot
 * open, write or lock its files) says why it cannot write instead, as
 * SQLite's own words ("unable to open database file", "disk I/O error")
 * would make "not a usable database" of a read-only file system. */
static enum tfd_status db_fail(struct tfd_history *h, struct tfd_err *err, const char *what)
{
	int code = sqlite3_errcode(h->db) & 0xff;
	const char *why = NULL;

	if (code == SQLITE_CANTOPEN || code == SQLITE_READONLY || code == SQLITE_IOERR ||
	    code == SQLITE_FULL || code == SQLITE_PERM)
		why = write_trouble(h->path);
	if (why)
		return tfd_fail(err, TFD_E_IO, "%s: cannot write the history database: %s (%s)%s",
				h->path, why, sqlite3_errmsg(h->db),
				strcmp(why, "the disk is full") && access(h->path, F_OK) == 0
				    ? "; 'report --no-record' and 'history' only read it"
				    : "");
	return tfd_fail(err, TFD_E_IO, "%s: %s: %s", h->path, what, sqlite3_errmsg(h->db));
}

static int exec(struct tfd_history *h, const char *sql)
{
	return sqlite3_exec(h->db, sql, NULL, NULL, NULL);
}

/* The schema version, or -1 when it cannot be read. */
static int user_version(struct tfd_history *h)
{
	int v;

	return pragma_int(h, "PRAGMA user_version", &v) ? -1 : v;
}

static enum tfd_status open_file(const char *path, struct tfd_history **out, struct tfd_err *err);

/* A database whose schema this tfdoctor does not know yet. */
static enum tfd_status newer_schema(const char *path, int v, struct tfd_err *err)
{
	return tfd_fail(err, TFD_E_FORMAT,
			"%s: history schema version %d is newer than this tfdoctor (%d)", path, v,
			NMIGRATIONS);
}

/* Open h's connection to name (a path or a file: URI) with flags and a 30 s
 * busy timeout; on error h is closed (freed) and err says why. */
static enum tfd_status open_db(struct tfd_history *h, const char *name, int flags,
			       struct tfd_err *err)
{
	pthread_once(&sq_once, sq_load);
	if (!sq.loaded) {
		tfd_history_close(h);
		return tfd_fail(err, TFD_E_IO,
				"%s: the history needs SQLite (Debian package libsqlite3-0): %s",
				name, sq.why);
	}
	if (sqlite3_open_v2(name, &h->db, flags, NULL) != SQLITE_OK) {
		enum tfd_status st = db_fail(h, err, "cannot open history database");

		tfd_history_close(h);
		return st;
	}
	sqlite3_busy_timeout(h->db, 30000);
	return TFD_OK;
}

/* After a failed first open of a database this process created (a full
 * disk, a file-size limit): the half-made file and SQLite's files beside it
 * go, unless a schema was committed meanwhile (another report that created
 * it at the same moment and succeeded). */
static void remove_half_made(const char *path)
{
	static const char *const sfx[] = {"-wal", "-shm", "-journal"};
	struct tfd_history probe = {0};
	bool keep = false;

	if (!sq.loaded) /* nothing was made */
		return;
	if (sqlite3_open_v2(path, &probe.db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
		keep = user_version(&probe) > 0;
	sqlite3_close(probe.db);
	if (keep)
		return;
	unlink(path);
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		size_t n = strlen(path) + strlen(sfx[i]) + 1;
		char *side = xmalloc(n);

		snprintf(side, n, "%s%s", path, sfx[i]);
		unlink(side);
		free(side);
	}
}

enum tfd_status tfd_history_open(const char *path, struct tfd_history **out, struct tfd_err *err)
{
	struct stat sb;
	bool created = !tfd_hist_is_pg(path) && stat(path, &sb) != 0 && errno == ENOENT;
	enum tfd_status st = open_file(path, out, err);

	if (st && created)
		remove_half_made(path);
	return st;
}

/* A failed step of open_file(): err says what (with SQLite's reason), an
 * open transaction is rolled back, h is closed. */
static enum tfd_status open_fail(struct tfd_history *h, bool in_txn, const char *what,
				 struct tfd_err *err)
{
	enum tfd_status st = db_fail(h, err, what);

	if (in_txn)
		exec(h, "ROLLBACK");
	tfd_history_close(h);
	return st;
}

static enum tfd_status open_file(const char *path, struct tfd_history **out, struct tfd_err *err)
{
	struct tfd_history *h = xcalloc(1, sizeof(*h));
	enum db_kind kind;
	int v;

	h->be = &sqlite_backend;
	h->ctx = h;
	*out = NULL;
	if (tfd_hist_is_pg(path)) {
		free(h);
		return open_pg(path, false, out, err);
	}
	snprintf(h->path, sizeof(h->path), "%s", path);
	if (open_db(h, path, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, err))
		return err->status;
	/* decided before any write: a database that is neither empty nor ours
	 * is refused and left byte for byte as it was (no WAL, no tables) */
	kind = db_kind(h);
	if (kind == DB_UNREADABLE || kind == DB_FOREIGN) {
		enum tfd_status st =
		    kind == DB_FOREIGN
			? tfd_fail(err, TFD_E_FORMAT,
				   "%s: not a tfdoctor history database (another application's; "
				   "left untouched)",
				   path)
			: db_fail(h, err, "not a usable SQLite database");

		tfd_history_close(h);
		return st;
	}
	if (exec(h, "PRAGMA journal_mode=WAL") != SQLITE_OK ||
	    exec(h, "PRAGMA foreign_keys=ON") != SQLITE_OK)
		return open_fail(h, false, "not a usable SQLite database", err);
	/* migrate under an exclusive write lock: concurrent first runs agree */
	if (exec(h, "BEGIN IMMEDIATE") != SQLITE_OK)
		return open_fail(h, false, "cannot lock the history database", err);
	v = user_version(h);
	if (v < 0 || v > NMIGRATIONS) {
		exec(h, "ROLLBACK");
		tfd_history_close(h);
		if (v > NMIGRATIONS)
			return newer_schema(path, v, err);
		return tfd_fail(err, TFD_E_FORMAT, "%s: not a tfdoctor history database", path);
	}
	/* nothing is written when no migration is due (a full disk must not
	 * fail an open that has nothing to write) */
	if (v == NMIGRATIONS && kind == DB_OURS) {
		if (exec(h, "COMMIT") != SQLITE_OK)
			return open_fail(h, false, "cannot read the history database", err);
		*out = h;
		return TFD_OK;
	}
	if (exec(h, "PRAGMA application_id=" TFD_STR(TFD_APP_ID)) != SQLITE_OK)
		return open_fail(h, true, "cannot stamp the history database", err);
	for (; v < NMIGRATIONS; v++) {
		char pragma[64];

		snprintf(pragma, sizeof(pragma), "PRAGMA user_version=%d", v + 1);
		if (exec(h, migrations[v]) != SQLITE_OK || exec(h, pragma) != SQLITE_OK)
			return open_fail(h, true, "cannot migrate the history schema", err);
	}
	if (exec(h, "COMMIT") != SQLITE_OK)
		return open_fail(h, false, "cannot migrate the history schema", err);
	*out = h;
	return TFD_OK;
}

enum tfd_status tfd_history_open_existing(const char *path, struct tfd_history **out,
					  struct tfd_err *err)
{
	struct tfd_history *h;
	struct stat st;
	int v;

	*out = NULL;
	if (tfd_hist_is_pg(path))
		return open_pg(path, true, out, err);
	if (stat(path, &st) != 0)
		return tfd_fail(err, TFD_E_IO,
				"%s: no such history database (report --history "
				"creates one)",
				path);
	if (!S_ISREG(st.st_mode))
		return tfd_fail(err, TFD_E_IO, "%s: not a regular file", path);
	h = xcalloc(1, sizeof(*h));
	h->be = &sqlite_backend;
	h->ctx = h;
	snprintf(h->path, sizeof(h->path), "%s", path);
	/* reading never creates or migrates anything. A WAL database opened
	 * read-only would still get -wal and -shm files; with no -wal there
	 * (no writer at work) the immutable open touches nothing */
	{
		char wal[4200], uri[8400];
		struct stat ws;
		size_t k = 0;

		snprintf(wal, sizeof(wal), "%s-wal", path);
		if (stat(wal, &ws) == 0) {
			snprintf(uri, sizeof(uri), "%s", path);
		} else {
			const char *c = path;

			k = (size_t)snprintf(uri, sizeof(uri), "file:");
			/* "//srv/h.db" is "/srv/h.db": in a URI two slashes
			 * would start an authority */
			while (c[0] == '/' && c[1] == '/')
				c++;
			for (; *c && k + 4 < sizeof(uri); c++) {
				if (*c == '?' || *c == '#' || *c == '%')
					k += (size_t)snprintf(uri + k, sizeof(uri) - k, "%%%02X",
							      (unsigned char)*c);
				else
					uri[k++] = *c;
			}
			snprintf(uri + k, sizeof(uri) - k, "?immutable=1");
		}
		if (open_db(h, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err))
			return err->status;
	}
	v = user_version(h);
	if (db_kind(h) == DB_FOREIGN)
		v = -1;
	if (v != NMIGRATIONS) {
		tfd_history_close(h);
		if (v > NMIGRATIONS)
			return newer_schema(path, v, err);
		if (v > 0)
			return tfd_fail(err, TFD_E_FORMAT,
					"%s: history schema version %d is older: 'tfdoctor report "
					"--history' migrates it",
					path, v);
		return tfd_fail(err, TFD_E_FORMAT, "%s: not a tfdoctor history database", path);
	}
	*out = h;
	return TFD_OK;
}

static enum tfd_status sq_jobs(void *ctx, struct tfd_hist_job **out, size_t *n, struct tfd_err *err)
{
	struct tfd_history *h = ctx;
	sqlite3_stmt *q = NULL;
	struct tfd_hist_job *jobs = NULL;
	size_t cnt = 0;
	int rc;

	if (sqlite3_prepare_v2(h->db,
			       "SELECT job, COUNT(*), MAX(recorded_at) FROM runs GROUP BY job "
			       "ORDER BY job",
			       -1, &q, NULL) != SQLITE_OK)
		return db_fail(h, err, "cannot list jobs");
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(q, 0);
		const unsigned char *last = sqlite3_column_text(q, 2);

		jobs = xrealloc(jobs, (cnt + 1) * sizeof(*jobs));
		jobs[cnt].name = xstrdup(name ? (const char *)name : "");
		jobs[cnt].nruns = (size_t)sqlite3_column_int64(q, 1);
		snprintf(jobs[cnt].last, sizeof(jobs[cnt].last), "%s",
			 last ? (const char *)last : "");
		cnt++;
	}
	sqlite3_finalize(q);
	if (rc != SQLITE_DONE) {
		tfd_hist_jobs_free(jobs, cnt);
		return db_fail(h, err, "cannot list jobs");
	}
	*out = jobs;
	*n = cnt;
	return TFD_OK;
}

enum tfd_status tfd_history_jobs(struct tfd_history *h, struct tfd_hist_job **out, size_t *n,
				 struct tfd_err *err)
{
	*out = NULL;
	*n = 0;
	return h->be->jobs(h->ctx, out, n, err);
}

static void sq_close(void *ctx)
{
	struct tfd_history *h = ctx;

	if (h->db) /* (SQLite may not be loaded: no database was opened) */
		sqlite3_close(h->db);
}

void tfd_history_close(struct tfd_history *h)
{
	if (!h)
		return;
	tfd_history_settle(h, false, NULL); /* a held record is dropped */
	if (h->be)
		h->be->close(h->ctx);
	free(h);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

static enum tfd_status sq_record(void *ctx, struct tfd_hist_run *runs, size_t n, bool hold,
				 struct tfd_err *err)
{
	struct tfd_history *h = ctx;
	sqlite3_stmt *ins_run = NULL, *ins_host = NULL, *find = NULL;
	enum tfd_status st = TFD_OK;

	if (exec(h, "BEGIN IMMEDIATE") != SQLITE_OK)
		return db_fail(h, err, "cannot lock the history database");
	if (sqlite3_prepare_v2(h->db,
			       "INSERT INTO runs(job, run, recorded_at, source, capture) VALUES "
			       "(?,?,?,?,?)",
			       -1, &ins_run, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(h->db,
			       "SELECT id FROM runs WHERE job = ? AND run = ? AND capture = ? "
			       "ORDER BY id LIMIT 1",
			       -1, &find, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(h->db,
			       "INSERT INTO hosts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", -1,
			       &ins_host, NULL) != SQLITE_OK) {
		st = db_fail(h, err, "cannot prepare the history write");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		struct tfd_hist_run *r = &runs[i];

		r->already = false;
		if (r->capture[0]) {
			sqlite3_reset(find);
			bind_text(find, 1, r->job);
			bind_text(find, 2, r->run);
			bind_text(find, 3, r->capture);
			if (sqlite3_step(find) == SQLITE_ROW) {
				r->id = sqlite3_column_int64(find, 0);
				r->already = true;
				continue;
			}
		}
		sqlite3_reset(ins_run);
		bind_text(ins_run, 1, r->job);
		bind_text(ins_run, 2, r->run);
		bind_text(ins_run, 3, r->recorded_at);
		bind_text(ins_run, 4, r->source);
		if (r->capture[0])
			bind_text(ins_run, 5, r->capture);
		else
			sqlite3_bind_null(ins_run, 5);
		if (sqlite3_step(ins_run) != SQLITE_DONE) {
			st = db_fail(h, err, "cannot record the run");
			goto out;
		}
		r->id = sqlite3_last_insert_rowid(h->db);
		for (size_t k = 0; k < r->nhosts; k++) {
			const struct tfd_hist_host *x = &r->hosts[k];

			sqlite3_reset(ins_host);
			sqlite3_bind_int64(ins_host, 1, r->id);
			bind_text(ins_host, 2, x->host);
			sqlite3_bind_int(ins_host, 3, x->rank);
			if (isnan(x->input_percent))
				sqlite3_bind_null(ins_host, 4);
			else
				sqlite3_bind_double(ins_host, 4, x->input_percent);
			bind_text(ins_host, 5, x->bound);
			sqlite3_bind_int64(ins_host, 6, x->max_latency_ns);
			sqlite3_bind_int64(ins_host, 7, x->p50_ns);
			sqlite3_bind_int64(ins_host, 8, x->p95_ns);
			sqlite3_bind_int64(ins_host, 9, x->calls);
			sqlite3_bind_int64(ins_host, 10, x->slow_calls);
			bind_text(ins_host, 11, x->pipeline);
			bind_text(ins_host, 12, x->bottleneck);
			bind_text(ins_host, 13, x->bottleneck_long_name);
			sqlite3_bind_double(ins_host, 14, x->bottleneck_share);
			bind_text(ins_host, 15, x->top_rule);
			bind_text(ins_host, 16, x->top_severity);
			bind_text(ins_host, 17, x->top_title);
			if (sqlite3_step(ins_host) != SQLITE_DONE) {
				st = db_fail(h, err, "cannot record a host");
				goto out;
			}
		}
	}
	if (!hold && exec(h, "COMMIT") != SQLITE_OK)
		st = db_fail(h, err, "cannot commit the run");
out:
	if (st)
		exec(h, "ROLLBACK");
	sqlite3_finalize(ins_run);
	sqlite3_finalize(ins_host);
	sqlite3_finalize(find);
	return st;
}

static enum tfd_status record(struct tfd_history *h, struct tfd_hist_run *runs, size_t n, bool hold,
			      struct tfd_err *err)
{
	enum tfd_status st = h->be->record(h->ctx, runs, n, hold, err);

	h->held = hold && !st;
	return st;
}

enum tfd_status tfd_history_record(struct tfd_history *h, struct tfd_hist_run *runs, size_t n,
				   struct tfd_err *err)
{
	return record(h, runs, n, false, err);
}

enum tfd_status tfd_history_record_held(struct tfd_history *h, struct tfd_hist_run *runs, size_t n,
					struct tfd_err *err)
{
	return record(h, runs, n, true, err);
}

enum tfd_status tfd_history_settle(struct tfd_history *h, bool keep, struct tfd_err *err)
{
	if (!h || !h->held)
		return TFD_OK;
	h->held = false;
	return h->be->settle(h->ctx, keep, err);
}

static enum tfd_status sq_settle(void *ctx, bool keep, struct tfd_err *err)
{
	struct tfd_history *h = ctx;
	enum tfd_status st = TFD_OK;

	if (keep && exec(h, "COMMIT") != SQLITE_OK)
		st = db_fail(h, err, "cannot commit the run");
	if (!keep || st)
		exec(h, "ROLLBACK");
	return st;
}

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t len)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	snprintf(dst, len, "%s", s ? (const char *)s : "");
}

/* a text column whole, as an owned string */
static void col_str(sqlite3_stmt *st, int i, char **dst)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	tfd_hist_set(dst, s ? (const char *)s : "");
}

/* Whether every byte of s is in the set allowed and s is at most max long. */
static bool only(const char *s, const char *allowed, size_t max)
{
	size_t n = strlen(s);

	return n <= max && strspn(s, allowed) == n;
}

/* Values read back from a history are data from whoever can write it (a
 * shared SQLite file, a PostgreSQL database): the fields the reports print
 * as they are must have their form, else they read as "?" (a time stamp,
 * a severity, a rule id). */
static void validate_runs(struct tfd_hist_run *runs, size_t n)
{
	static const char *const sev[] = {"", "info", "low", "medium", "high"};

	for (size_t i = 0; i < n; i++) {
		struct tfd_hist_run *r = &runs[i];

		if (!only(r->recorded_at, "0123456789-:T.Z+", 31))
			snprintf(r->recorded_at, sizeof(r->recorded_at), "?");
		for (size_t k = 0; k < r->nhosts; k++) {
			struct tfd_hist_host *x = &r->hosts[k];
			bool ok = false;

			for (size_t j = 0; j < sizeof(sev) / sizeof(sev[0]); j++)
				ok |= strcmp(x->top_severity, sev[j]) == 0;
			if (!ok)
				snprintf(x->top_severity, sizeof(x->top_severity), "?");
			if (!only(
				x->top_rule,
				"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-",
				64))
				tfd_hist_set(&x->top_rule, "?");
		}
	}
}

enum tfd_status tfd_history_runs(struct tfd_history *h, const char *job, size_t limit,
				 struct tfd_hist_run **out, size_t *n, struct tfd_err *err)
{
	enum tfd_status st;

	*out = NULL;
	*n = 0;
	st = h->be->runs(h->ctx, job, limit, out, n, err);

	if (st == TFD_OK)
		validate_runs(*out, *n);
	return st;
}

static enum tfd_status sq_runs(void *ctx, const char *job, size_t limit, struct tfd_hist_run **out,
			       size_t *n, struct tfd_err *err)
{
	struct tfd_history *h = ctx;
	sqlite3_stmt *q = NULL, *qh = NULL;
	struct tfd_hist_run *runs = NULL;
	size_t cnt = 0;
	enum tfd_status st = TFD_OK;

	if (sqlite3_prepare_v2(h->db,
			       "SELECT id, job, run, recorded_at, source FROM (SELECT * FROM runs "
			       "WHERE job = ? ORDER BY id DESC LIMIT ?) ORDER BY id",
			       -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
		h->db,
		"SELECT host, rank, input_percent, bound, max_latency_ns, p50_ns, "
		"p95_ns, calls, slow_calls, pipeline, bottleneck, bottleneck_long_name, "
		"bottleneck_share, top_rule, top_severity, top_title FROM hosts WHERE "
		"run_id = ? ORDER BY rank, host",
		-1, &qh, NULL) != SQLITE_OK) {
		st = db_fail(h, err, "cannot read the history");
		goto out;
	}
	bind_text(q, 1, job);
	sqlite3_bind_int64(q, 2, (sqlite3_int64)limit);
	for (;;) {
		int rc = sqlite3_step(q);
		struct tfd_hist_run *r;

		if (rc == SQLITE_DONE)
			break;
		if (rc != SQLITE_ROW) {
			st = db_fail(h, err, "cannot read the history");
			goto out;
		}
		runs = xrealloc(runs, (cnt + 1) * sizeof(*runs));
		r = &runs[cnt++];
		memset(r, 0, sizeof(*r));
		r->id = sqlite3_column_int64(q, 0);
		col_str(q, 1, &r->job);
		col_str(q, 2, &r->run);
		col_text(q, 3, r->recorded_at, sizeof(r->recorded_at));
		col_str(q, 4, &r->source);
		sqlite3_reset(qh);
		sqlite3_bind_int64(qh, 1, r->id);
		while ((rc = sqlite3_step(qh)) == SQLITE_ROW) {
			struct tfd_hist_host *x;

			r->hosts = xrealloc(r->hosts, (r->nhosts + 1) * sizeof(*r->hosts));
			x = &r->hosts[r->nhosts++];
			memset(x, 0, sizeof(*x));
			col_str(qh, 0, &x->host);
			x->rank = sqlite3_column_int(qh, 1);
			x->input_percent = sqlite3_column_type(qh, 2) == SQLITE_NULL
					       ? NAN
					       : sqlite3_column_double(qh, 2);
			col_text(qh, 3, x->bound, sizeof(x->bound));
			x->max_latency_ns = sqlite3_column_int64(qh, 4);
			x->p50_ns = sqlite3_column_int64(qh, 5);
			x->p95_ns = sqlite3_column_int64(qh, 6);
			x->calls = sqlite3_column_int64(qh, 7);
			x->slow_calls = sqlite3_column_int64(qh, 8);
			col_text(qh, 9, x->pipeline, sizeof(x->pipeline));
			col_str(qh, 10, &x->bottleneck);
			col_str(qh, 11, &x->bottleneck_long_name);
			x->bottleneck_share = sqlite3_column_double(qh, 12);
			col_str(qh, 13, &x->top_rule);
			col_text(qh, 14, x->top_severity, sizeof(x->top_severity));
			col_str(qh, 15, &x->top_title);
		}
		if (rc != SQLITE_DONE) {
			st = db_fail(h, err, "cannot read the history");
			goto out;
		}
	}
out:
	sqlite3_finalize(q);
	sqlite3_finalize(qh);
	if (st) {
		tfd_hist_runs_free(runs, cnt);
		return st;
	}
	*out = runs;
	*n = cnt;
	return TFD_OK;
}

enum tfd_status tfd_history_check(struct tfd_history *h, size_t *nruns, struct tfd_err *err)
{
	return h->be->check(h->ctx, nruns, err);
}

static enum tfd_status sq_check(void *ctx, size_t *nruns, struct tfd_err *err)
{
	struct tfd_history *h = ctx;
	sqlite3_stmt *q = NULL;
	enum tfd_status st = TFD_OK;
	const unsigned char *res;

	if (sqlite3_prepare_v2(h->db, "PRAGMA integrity_check", -1, &q, NULL) != SQLITE_OK ||
	    sqlite3_step(q) != SQLITE_ROW)
		st = db_fail(h, err, "integrity check failed");
	else if ((res = sqlite3_column_text(q, 0)) == NULL || strcmp((const char *)res, "ok"))
		st = tfd_fail(err, TFD_E_FORMAT, "%s: integrity check: %s", h->path,
			      res ? (const char *)res : "?");
	sqlite3_finalize(q);
	if (st)
		return st;
	*nruns = 0;
	if (sqlite3_prepare_v2(h->db, "SELECT count(*) FROM runs", -1, &q, NULL) == SQLITE_OK &&
	    sqlite3_step(q) == SQLITE_ROW)
		*nruns = (size_t)sqlite3_column_int64(q, 0);
	sqlite3_finalize(q);
	return TFD_OK;
}

static const struct tfd_hist_backend sqlite_backend = {sq_jobs, sq_record, sq_settle,
						       sq_runs, sq_check,  sq_close};
