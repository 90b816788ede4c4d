/* history_pg.c - the history in PostgreSQL (libpq); the only user of libpq.
 *
 * Same schema version and migrations as the SQLite file (history.c), in a
 * schema of its own ("tfdoctor") so a shared database server can hold it
 * beside anything else: tfdoctor.meta(version), tfdoctor.runs,
 * tfdoctor.hosts. Migrations run in one transaction under an advisory lock,
 * so many first runs at once agree; each report's runs go in one
 * transaction (all or none: a writer killed mid-write leaves nothing).
 *
 * libpq is loaded with dlopen() on the first postgresql:// URL: the other
 * commands (and SQLite users) do not pay its 20 libraries at start-up
 * (about 12 ms and 5 MB of RSS), and a machine without libpq5 still runs
 * everything else.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "history_impl.h"
#include "tfd/buf.h"
#include "tfd/dl.h"

/* the libpq functions used, resolved once */
static struct {
	PGconn *(*connectdb)(const char *);
	ConnStatusType (*status)(const PGconn *);
	char *(*error_message)(const PGconn *);
	void (*finish)(PGconn *);
	PQnoticeReceiver (*set_notice_receiver)(PGconn *, PQnoticeReceiver, void *);
	PGresult *(*exec)(PGconn *, const char *);
	PGresult *(*exec_params)(PGconn *, const char *, int, const Oid *, const char *const *,
				 const int *, const int *, int);
	ExecStatusType (*result_status)(const PGresult *);
	int (*ntuples)(const PGresult *);
	char *(*getvalue)(const PGresult *, int, int);
	int (*getisnull)(const PGresult *, int, int);
	void (*clear)(PGresult *);
	bool loaded;
	char why[256];
} pq;
static pthread_once_t pq_once = PTHREAD_ONCE_INIT;

static void pq_load(void)
{
	const struct tfd_dl_sym fns[] = {
	    {"PQconnectdb", (void **)&pq.connectdb},
	    {"PQstatus", (void **)&pq.status},
	    {"PQerrorMessage", (void **)&pq.error_message},
	    {"PQfinish", (void **)&pq.finish},
	    {"PQsetNoticeReceiver", (void **)&pq.set_notice_receiver},
	    {"PQexec", (void **)&pq.exec},
	    {"PQexecParams", (void **)&pq.exec_params},
	    {"PQresultStatus", (void **)&pq.result_status},
	    {"PQntuples", (void **)&pq.ntuples},
	    {"PQgetvalue", (void **)&pq.getvalue},
	    {"PQgetisnull", (void **)&pq.getisnull},
	    {"PQclear", (void **)&pq.clear},
	};

	pq.loaded =
	    tfd_dl_load("libpq.so.5", fns, sizeof(fns) / sizeof(fns[0]), pq.why, sizeof(pq.why));
}

#define PQconnectdb pq.connectdb
#define PQstatus pq.status
#define PQerrorMessage pq.error_message
#define PQfinish pq.finish
#define PQsetNoticeReceiver pq.set_notice_receiver
#define PQexec pq.exec
#define PQexecParams pq.exec_params
#define PQresultStatus pq.result_status
#define PQntuples pq.ntuples
#define PQgetvalue pq.getvalue
#define PQgetisnull pq.getisnull
#define PQclear pq.clear

struct pg_hist {
	PGconn *conn;
	char name[512]; /* the URL with any password hidden */
};

/* key of the advisory lock that serializes migrations ("tfdo") */
#define MIGRATE_LOCK "1952867439"

/* Entry i brings the schema from version i to i + 1; the same versions as
 * the SQLite migrations, in PostgreSQL's dialect. */
static const char *const migrations[] = {
    "CREATE TABLE tfdoctor.runs ("
    "  id BIGSERIAL PRIMARY KEY,"
    "  job TEXT NOT NULL, run TEXT NOT NULL, recorded_at TEXT NOT NULL, source TEXT NOT NULL);"
    "CREATE INDEX runs_job ON tfdoctor.runs(job, id);"
    "CREATE TABLE tfdoctor.hosts ("
    "  run_id BIGINT NOT NULL REFERENCES tfdoctor.runs(id) ON DELETE CASCADE,"
    "  host TEXT NOT NULL, rank INTEGER NOT NULL, input_percent DOUBLE PRECISION,"
    "  bound TEXT NOT NULL, max_latency_ns BIGINT NOT NULL, p50_ns BIGINT NOT NULL,"
    "  p95_ns BIGINT NOT NULL, calls BIGINT NOT NULL, slow_calls BIGINT NOT NULL,"
    "  pipeline TEXT NOT NULL, bottleneck TEXT NOT NULL, bottleneck_long_name TEXT NOT NULL,"
    "  bottleneck_share DOUBLE PRECISION NOT NULL, top_rule TEXT NOT NULL,"
    "  top_severity TEXT NOT NULL, top_title TEXT NOT NULL, PRIMARY KEY (run_id, host));",
    "ALTER TABLE tfdoctor.runs ADD COLUMN capture TEXT;"
    "CREATE INDEX runs_capture ON tfdoctor.runs(job, run, capture);",
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

_Static_assert(NMIGRATIONS == TFD_HISTORY_SCHEMA, "PostgreSQL migrations match the schema");

bool tfd_hist_is_pg(const char *spec)
{
	return strncmp(spec, "postgresql://", 13) == 0 || strncmp(spec, "postgres://", 11) == 0;
}

static int hex_val(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* Whether a query parameter's key, percent-decoded and in any case, names
 * a secret libpq reads (password, sslpassword). */
static bool secret_key(const char *k, size_t n)
{
	char d[32];
	size_t m = 0;

	for (size_t i = 0; i < n && m + 1 < sizeof(d); i++) {
		if (k[i] == '%' && i + 2 < n && hex_val(k[i + 1]) >= 0 && hex_val(k[i + 2]) >= 0) {
			d[m++] = (char)(hex_val(k[i + 1]) * 16 + hex_val(k[i + 2]));
			i += 2;
		} else {
			d[m++] = k[i];
		}
	}
	d[m] = '\0';
	return strcasecmp(d, "password") == 0 || strcasecmp(d, "sslpassword") == 0;
}

void tfd_hist_pg_display(const char *url, char *out, size_t len)
{
	/* scheme://user:password@host... -> scheme://user:***@host...; every
	 * password parameter of the query (keys percent-decoded) -> ***. The
	 * line goes into error messages and reports. */
	const char *s = strstr(url, "://"), *auth_end, *at = NULL, *colon = NULL, *q;
	struct tfd_buf b;

	if (!s) {
		snprintf(out, len, "%s", url);
		return;
	}
	s += 3;
	if (!*s) { /* "postgresql://": the PG* environment picks the server */
		snprintf(out, len, "%s (PG* environment)", url);
		return;
	}
	auth_end = s + strcspn(s, "/?");
	for (const char *p = s; p < auth_end; p++)
		if (*p == '@')
			at = p; /* the last: the user part may hold one, encoded or not */
	if (at)
		colon = memchr(s, ':', (size_t)(at - s));
	tfd_buf_init(&b);
	if (colon) {
		tfd_buf_add(&b, url, (size_t)(colon - url));
		tfd_buf_puts(&b, ":***");
		tfd_buf_add(&b, at, (size_t)(auth_end - at));
	} else {
		tfd_buf_add(&b, url, (size_t)(auth_end - url));
	}
	q = auth_end + strcspn(auth_end, "?"); /* the path as it is */
	tfd_buf_add(&b, auth_end, (size_t)(q - auth_end));
	while (*q) { /* at '?' or '&': one parameter */
		size_t n = strcspn(q + 1, "&");
		const char *eq = memchr(q + 1, '=', n);

		tfd_buf_add(&b, q, 1);
		if (eq && secret_key(q + 1, (size_t)(eq - q - 1))) {
			tfd_buf_add(&b, q + 1, (size_t)(eq - q));
			tfd_buf_puts(&b, "***");
		} else {
			tfd_buf_add(&b, q + 1, n);
		}
		q += 1 + n;
	}
	snprintf(out, len, "%s", b.s ? b.s : "");
	tfd_buf_release(&b);
}

/* "name: what: first line of the server's message" */
static enum tfd_status pg_fail(struct pg_hist *h, struct tfd_err *err, const char *what)
{
	char msg[400];
	char *nl;

	snprintf(msg, sizeof(msg), "%s", h->conn ? PQerrorMessage(h->conn) : "no connection");
	nl = strchr(msg, '\n');
	if (nl)
		*nl = '\0';
	return tfd_fail(err, TFD_E_IO, "%s: %s: %s", h->name, what, msg);
}

static bool ok(PGresult *r)
{
	ExecStatusType s = PQresultStatus(r);

	return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK;
}

/* Run sql (no parameters); true on success. */
static bool exec_ok(struct pg_hist *h, const char *sql)
{
	PGresult *r = PQexec(h->conn, sql);
	bool good = ok(r);

	PQclear(r);
	return good;
}

static void quiet_notices(void *arg, const PGresult *res)
{
	(void)arg;
	(void)res;
}

static enum tfd_status connect_to(const char *url, struct pg_hist **out, struct tfd_err *err)
{
	struct pg_hist *h;
	char shown[512];

	pthread_once(&pq_once, pq_load);
	if (!pq.loaded) {
		tfd_hist_pg_display(url, shown, sizeof(shown));
		return tfd_fail(err, TFD_E_IO,
				"%s: a PostgreSQL history needs libpq (Debian package libpq5): %s",
				shown, pq.why);
	}
	h = xcalloc(1, sizeof(*h));
	tfd_hist_pg_display(url, h->name, sizeof(h->name));
	h->conn = PQconnectdb(url);
	if (!h->conn || PQstatus(h->conn) != CONNECTION_OK) {
		enum tfd_status st = pg_fail(h, err, "cannot connect to the history database");

		tfd_hist_pg_close(h);
		return st;
	}
	/* "relation already exists, skipping" and the like are not news */
	PQsetNoticeReceiver(h->conn, quiet_notices, NULL);
	*out = h;
	return TFD_OK;
}

/* The schema version, 0 when tfdoctor.meta is empty, -1 without it. */
static int schema_version(struct pg_hist *h, bool *failed)
{
	PGresult *r = PQexec(h->conn, "SELECT to_regclass('tfdoctor.meta') IS NOT NULL");
	int v = -1;

	*failed = !ok(r);
	if (!*failed && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0) {
		PQclear(r);
		r = PQexec(h->conn, "SELECT max(version) FROM tfdoctor.meta");
		*failed = !ok(r);
		if (!*failed)
			v = PQgetisnull(r, 0, 0) ? 0 : atoi(PQgetvalue(r, 0, 0));
	}
	PQclear(r);
	return v;
}

enum tfd_status tfd_hist_pg_open(const char *url, bool existing, struct pg_hist **out,
				 struct tfd_err *err)
{
	struct pg_hist *h = NULL;
	enum tfd_status st;
	bool failed;
	int v;

	*out = NULL;
	st = connect_to(url, &h, err);
	if (st)
		return st;
	if (existing) {
		/* reading commands change nothing, not even by mistake */
		if (!exec_ok(h, "SET default_transaction_read_only = on")) {
			st = pg_fail(h, err, "cannot open the history read-only");
			goto fail;
		}
		v = schema_version(h, &failed);
		if (failed) {
			st = pg_fail(h, err, "cannot read the history schema");
			goto fail;
		}
		if (v == TFD_HISTORY_SCHEMA) {
			*out = h;
			return TFD_OK;
		}
		if (v > TFD_HISTORY_SCHEMA)
			st = tfd_fail(
			    err, TFD_E_FORMAT,
			    "%s: history schema version %d is newer than this tfdoctor (%d)",
			    h->name, v, TFD_HISTORY_SCHEMA);
		else if (v > 0)
			st = tfd_fail(err, TFD_E_FORMAT,
				      "%s: history schema version %d is older: 'tfdoctor report "
				      "--history' migrates it",
				      h->name, v);
		else
			st = tfd_fail(err, TFD_E_FORMAT,
				      "%s: no tfdoctor history in this database (report --history "
				      "creates one)",
				      h->name);
		goto fail;
	}
	/* create or migrate, one writer at a time */
	if (!exec_ok(h, "BEGIN") || !exec_ok(h, "SELECT pg_advisory_xact_lock(" MIGRATE_LOCK ")") ||
	    !exec_ok(h, "CREATE SCHEMA IF NOT EXISTS tfdoctor") ||
	    !exec_ok(h, "CREATE TABLE IF NOT EXISTS tfdoctor.meta (version INTEGER NOT NULL)")) {
		st = pg_fail(h, err, "cannot create the history schema");
		goto rollback;
	}
	v = schema_version(h, &failed);
	if (failed) {
		st = pg_fail(h, err, "cannot read the history schema");
		goto rollback;
	}
	if (v > NMIGRATIONS) {
		st = tfd_fail(err, TFD_E_FORMAT,
			      "%s: history schema version %d is newer than this tfdoctor (%d)",
			      h->name, v, NMIGRATIONS);
		goto rollback;
	}
	for (; v < NMIGRATIONS; v++) {
		char sql[96];

		snprintf(sql, sizeof(sql),
			 "DELETE FROM tfdoctor.meta; INSERT INTO tfdoctor.meta "
			 "VALUES (%d)",
			 v + 1);
		if (!exec_ok(h, migrations[v]) || !exec_ok(h, sql)) {
			st = pg_fail(h, err, "cannot migrate the history schema");
			goto rollback;
		}
	}
	if (!exec_ok(h, "COMMIT")) {
		st = pg_fail(h, err, "cannot migrate the history schema");
		goto fail;
	}
	*out = h;
	return TFD_OK;
rollback:
	exec_ok(h, "ROLLBACK");
fail:
	tfd_hist_pg_close(h);
	return st;
}

void tfd_hist_pg_close(struct pg_hist *h)
{
	if (!h)
		return;
	PQfinish(h->conn);
	free(h);
}

const char *tfd_hist_pg_name(const struct pg_hist *h)
{
	return h->name;
}

static enum tfd_status pg_jobs(struct pg_hist *h, struct tfd_hist_job **out, size_t *n,
			       struct tfd_err *err)
{
	/* byte order, as SQLite sorts, whatever the server's locale */
	PGresult *r = PQexec(h->conn, "SELECT job, count(*), max(recorded_at) FROM tfdoctor.runs "
				      "GROUP BY job ORDER BY job COLLATE \"C\"");
	struct tfd_hist_job *jobs;
	int rows;

	*out = NULL;
	*n = 0;
	if (!ok(r)) {
		PQclear(r);
		return pg_fail(h, err, "cannot list jobs");
	}
	rows = PQntuples(r);
	jobs = xcalloc((size_t)rows + 1, sizeof(*jobs));
	for (int i = 0; i < rows; i++) {
		jobs[i].name = xstrdup(PQgetvalue(r, i, 0));
		jobs[i].nruns = (size_t)strtoull(PQgetvalue(r, i, 1), NULL, 10);
		snprintf(jobs[i].last, sizeof(jobs[i].last), "%s", PQgetvalue(r, i, 2));
	}
	PQclear(r);
	*out = jobs;
	*n = (size_t)rows;
	return TFD_OK;
}

static PGresult *execp(struct pg_hist *h, const char *sql, int n, const char *const *vals)
{
	return PQexecParams(h->conn, sql, n, NULL, vals, NULL, NULL, 0);
}

static enum tfd_status pg_record(struct pg_hist *h, struct tfd_hist_run *runs, size_t n, bool hold,
				 struct tfd_err *err)
{
	enum tfd_status st = TFD_OK;

	if (!exec_ok(h, "BEGIN"))
		return pg_fail(h, err, "cannot start the history write");
	for (size_t i = 0; i < n && !st; i++) {
		struct tfd_hist_run *r = &runs[i];
		const char *v[17] = {r->job, r->run, r->capture};
		PGresult *res;
		char id[32];

		r->already = false;
		if (r->capture[0]) {
			res = execp(h,
				    "SELECT id FROM tfdoctor.runs WHERE job = $1 AND run = $2 AND "
				    "capture = $3 ORDER BY id LIMIT 1",
				    3, v);
			if (!ok(res)) {
				PQclear(res);
				st = pg_fail(h, err, "cannot look the run up");
				break;
			}
			if (PQntuples(res) == 1) {
				r->id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
				r->already = true;
				PQclear(res);
				continue;
			}
			PQclear(res);
		}
		v[2] = r->recorded_at;
		v[3] = r->source;
		v[4] = r->capture[0] ? r->capture : NULL;
		res = execp(h,
			    "INSERT INTO tfdoctor.runs(job, run, recorded_at, source, capture) "
			    "VALUES ($1, $2, $3, $4, $5) RETURNING id",
			    5, v);

		if (!ok(res) || PQntuples(res) != 1) {
			PQclear(res);
			st = pg_fail(h, err, "cannot record the run");
			break;
		}
		snprintf(id, sizeof(id), "%s", PQgetvalue(res, 0, 0));
		r->id = strtoll(id, NULL, 10);
		PQclear(res);
		for (size_t k = 0; k < r->nhosts && !st; k++) {
			const struct tfd_hist_host *x = &r->hosts[k];
			char num[8][32];

			snprintf(num[0], sizeof(num[0]), "%d", x->rank);
			snprintf(num[1], sizeof(num[1]), "%.17g", x->input_percent);
			snprintf(num[2], sizeof(num[2]), "%lld", (long long)x->max_latency_ns);
			snprintf(num[3], sizeof(num[3]), "%lld", (long long)x->p50_ns);
			snprintf(num[4], sizeof(num[4]), "%lld", (long long)x->p95_ns);
			snprintf(num[5], sizeof(num[5]), "%lld", (long long)x->calls);
			snprintf(num[6], sizeof(num[6]), "%lld", (long long)x->slow_calls);
			snprintf(num[7], sizeof(num[7]), "%.17g", x->bottleneck_share);
			v[0] = id;
			v[1] = x->host;
			v[2] = num[0];
			v[3] = isnan(x->input_percent) ? NULL : num[1];
			v[4] = x->bound;
			v[5] = num[2];
			v[6] = num[3];
			v[7] = num[4];
			v[8] = num[5];
			v[9] = num[6];
			v[10] = x->pipeline;
			v[11] = x->bottleneck;
			v[12] = x->bottleneck_long_name;
			v[13] = num[7];
			v[14] = x->top_rule;
			v[15] = x->top_severity;
			v[16] = x->top_title;
			res = execp(
			    h,
			    "INSERT INTO tfdoctor.hosts VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
			    "$9, $10, $11, $12, $13, $14, $15, $16, $17)",
			    17, v);
			if (!ok(res))
				st = pg_fail(h, err, "cannot record a host");
			PQclear(res);
		}
	}
	if (!st && !hold && !exec_ok(h, "COMMIT"))
		st = pg_fail(h, err, "cannot commit the run");
	if (st)
		exec_ok(h, "ROLLBACK");
	return st;
}

static enum tfd_status pg_settle(struct pg_hist *h, bool keep, struct tfd_err *err)
{
	if (keep && !exec_ok(h, "COMMIT")) {
		enum tfd_status st = pg_fail(h, err, "cannot commit the run");

		exec_ok(h, "ROLLBACK");
		return st;
	}
	if (!keep)
		exec_ok(h, "ROLLBACK");
	return TFD_OK;
}

static void cell(PGresult *r, int row, int col, char *dst, size_t len)
{
	snprintf(dst, len, "%s", PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

/* a text column whole, as an owned string */
static void cell_str(PGresult *r, int row, int col, char **dst)
{
	tfd_hist_set(dst, PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

static enum tfd_status pg_runs(struct pg_hist *h, const char *job, size_t limit,
			       struct tfd_hist_run **out, size_t *n, struct tfd_err *err)
{
	char lim[32];
	const char *v[2] = {job, lim};
	PGresult *r, *rh;
	struct tfd_hist_run *runs;
	int rows;

	*out = NULL;
	*n = 0;
	snprintf(lim, sizeof(lim), "%zu", limit);
	r = execp(h,
		  "SELECT id, job, run, recorded_at, source FROM (SELECT * FROM tfdoctor.runs "
		  "WHERE job = $1 ORDER BY id DESC LIMIT $2) AS last ORDER BY id",
		  2, v);
	if (!ok(r)) {
		PQclear(r);
		return pg_fail(h, err, "cannot read the history");
	}
	rows = PQntuples(r);
	runs = xcalloc((size_t)rows + 1, sizeof(*runs));
	for (int i = 0; i < rows; i++) {
		struct tfd_hist_run *x = &runs[i];
		const char *idv[1];

		x->id = strtoll(PQgetvalue(r, i, 0), NULL, 10);
		cell_str(r, i, 1, &x->job);
		cell_str(r, i, 2, &x->run);
		cell(r, i, 3, x->recorded_at, sizeof(x->recorded_at));
		cell_str(r, i, 4, &x->source);
		idv[0] = PQgetvalue(r, i, 0);
		rh = execp(
		    h,
		    "SELECT host, rank, input_percent, bound, max_latency_ns, p50_ns, p95_ns, "
		    "calls, slow_calls, pipeline, bottleneck, bottleneck_long_name, "
		    "bottleneck_share, top_rule, top_severity, top_title FROM tfdoctor.hosts "
		    "WHERE run_id = $1 ORDER BY rank, host COLLATE \"C\"",
		    1, idv);
		if (!ok(rh)) {
			PQclear(rh);
			PQclear(r);
			tfd_hist_runs_free(runs, (size_t)rows);
			return pg_fail(h, err, "cannot read the history");
		}
		x->nhosts = (size_t)PQntuples(rh);
		x->hosts = xcalloc(x->nhosts + 1, sizeof(*x->hosts));
		for (int k = 0; k < PQntuples(rh); k++) {
			struct tfd_hist_host *y = &x->hosts[k];

			cell_str(rh, k, 0, &y->host);
			y->rank = atoi(PQgetvalue(rh, k, 1));
			y->input_percent =
			    PQgetisnull(rh, k, 2) ? NAN : strtod(PQgetvalue(rh, k, 2), NULL);
			cell(rh, k, 3, y->bound, sizeof(y->bound));
			y->max_latency_ns = strtoll(PQgetvalue(rh, k, 4), NULL, 10);
			y->p50_ns = strtoll(PQgetvalue(rh, k, 5), NULL, 10);
			y->p95_ns = strtoll(PQgetvalue(rh, k, 6), NULL, 10);
			y->calls = strtoll(PQgetvalue(rh, k, 7), NULL, 10);
			y->slow_calls = strtoll(PQgetvalue(rh, k, 8), NULL, 10);
			cell(rh, k, 9, y->pipeline, sizeof(y->pipeline));
			cell_str(rh, k, 10, &y->bottleneck);
			cell_str(rh, k, 11, &y->bottleneck_long_name);
			y->bottleneck_share = strtod(PQgetvalue(rh, k, 12), NULL);
			cell_str(rh, k, 13, &y->top_rule);
			cell(rh, k, 14, y->top_severity, sizeof(y->top_severity));
			cell_str(rh, k, 15, &y->top_title);
		}
		PQclear(rh);
	}
	PQclear(r);
	*out = runs;
	*n = (size_t)rows;
	return TFD_OK;
}

static enum tfd_status pg_check(struct pg_hist *h, size_t *nruns, struct tfd_err *err)
{
	/* every run has its hosts: a run is written whole or not at all */
	PGresult *r =
	    PQexec(h->conn, "SELECT (SELECT count(*) FROM tfdoctor.runs), (SELECT count(*) FROM "
			    "tfdoctor.runs r WHERE NOT EXISTS (SELECT 1 FROM tfdoctor.hosts x "
			    "WHERE x.run_id = r.id))");
	long long orphans;

	if (!ok(r)) {
		PQclear(r);
		return pg_fail(h, err, "integrity check failed");
	}
	*nruns = (size_t)strtoull(PQgetvalue(r, 0, 0), NULL, 10);
	orphans = strtoll(PQgetvalue(r, 0, 1), NULL, 10);
	PQclear(r);
	if (orphans)
		return tfd_fail(err, TFD_E_FORMAT, "%s: integrity check: %lld run(s) without hosts",
				h->name, orphans);
	return TFD_OK;
}

/* ---- the backend ------------------------------------------------------------ */

static enum tfd_status be_jobs(void *c, struct tfd_hist_job **out, size_t *n, struct tfd_err *err)
{
	return pg_jobs(c, out, n, err);
}

static enum tfd_status be_record(void *c, struct tfd_hist_run *runs, size_t n, bool hold,
				 struct tfd_err *err)
{
	return pg_record(c, runs, n, hold, err);
}

static enum tfd_status be_settle(void *c, bool keep, struct tfd_err *err)
{
	return pg_settle(c, keep, err);
}

static enum tfd_status be_runs(void *c, const char *job, size_t limit, struct tfd_hist_run **out,
			       size_t *n, struct tfd_err *err)
{
	return pg_runs(c, job, limit, out, n, err);
}

static enum tfd_status be_check(void *c, size_t *nruns, struct tfd_err *err)
{
	return pg_check(c, nruns, err);
}

static void be_close(void *c)
{
	tfd_hist_pg_close(c);
}

const struct tfd_hist_backend tfd_hist_pg_backend = {be_jobs, be_record, be_settle,
						     be_runs, be_check,	 be_close};
