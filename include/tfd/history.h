/* history.h - the run history of nightly reports, in SQLite or PostgreSQL.
 *
 * The database is named by a file path (SQLite, the embedded default) or a
 * postgresql:// (postgres://) URL: a shared server for many writers at
 * once; "postgresql://" alone takes the server from the PG* environment
 * variables. Both hold the same schema version and tables (PostgreSQL: in
 * the schema "tfdoctor"); every function below works on both.
 *
 * One database file holds every recorded run: per job and run, the focus
 * figures of each host (input-bound share, latencies, bottleneck, top
 * finding). The schema is versioned (PRAGMA user_version) and migrated on
 * open. Writes happen in one IMMEDIATE transaction in WAL mode with a busy
 * timeout, so two reports may run at once and a crash mid-write leaves the
 * database as it was before the run. history.c is the only user of sqlite3.
 */
#ifndef TFD_HISTORY_H
#define TFD_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/err.h"

/* 1: runs and hosts; 2: runs.capture, the identity of a run's capture */
#define TFD_HISTORY_SCHEMA 2

struct tfd_history;

/* One host of one run, as recorded. The strings (char *) are owned and
 * never NULL ("" for none), whatever their length: names from users and
 * captures are kept whole. */
struct tfd_hist_host {
	char *host;
	int rank;
	double input_percent; /* NAN when unknown */
	char bound[16];
	int64_t max_latency_ns, p50_ns, p95_ns;
	int64_t calls, slow_calls;
	char pipeline[24]; /* "Host:N" or "Device:N" */
	char *bottleneck;
	char *bottleneck_long_name;
	double bottleneck_share;
	char *top_rule;
	char top_severity[16];
	char *top_title;
};

struct tfd_hist_run {
	int64_t id;
	char *job; /* owned, never NULL, as the hosts' strings */
	char *run;
	char recorded_at[32]; /* ISO 8601, UTC (report --timestamp: at most 31) */
	char *source;
	/* what was analyzed: a hash of the host files' paths, sizes and
	 * modification times ("" unknown). A run of a job with the same name
	 * and capture is recorded once. */
	char capture[24];
	bool already; /* set by tfd_history_record: it was recorded before */
	struct tfd_hist_host *hosts;
	size_t nhosts;
};

/* A postgresql:// or postgres:// URL rather than a file path. */
bool tfd_history_is_url(const char *spec);
/* spec as messages and reports may show it: a URL's password hidden. */
void tfd_history_display(const char *spec, char *out, size_t len);

/* Open (create if missing) the history at path, a SQLite file or a
 * postgresql:// URL, migrating an older schema. Close with
 * tfd_history_close. Errors name the file or URL (password hidden). */
enum tfd_status tfd_history_open(const char *path, struct tfd_history **out, struct tfd_err *err);
/* Open an existing database read-only, for reading commands: a missing
 * file is an error (nothing is created), and so is a schema that needs
 * migrating. */
enum tfd_status tfd_history_open_existing(const char *path, struct tfd_history **out,
					  struct tfd_err *err);

struct tfd_hist_job {
	char *name; /* owned, whole */
	size_t nruns;
	char last[32]; /* recorded_at of its newest run */
};

/* Every job with its run count, by name; free with tfd_hist_jobs_free. */
enum tfd_status tfd_history_jobs(struct tfd_history *h, struct tfd_hist_job **out, size_t *n,
				 struct tfd_err *err);
/* Close a history; NULL is allowed. */
void tfd_history_close(struct tfd_history *h);
/* Record runs atomically (all or none); sets each run's id. A run whose
 * job, run name and capture are already recorded is not recorded again: its
 * id is the earlier row's and `already` is set. */
enum tfd_status tfd_history_record(struct tfd_history *h, struct tfd_hist_run *runs, size_t n,
				   struct tfd_err *err);
/* tfd_history_record(), its transaction left open: the runs are visible to
 * this connection (tfd_history_runs) and to no other until
 * tfd_history_settle() keeps or drops them (the write lock is held until
 * then). On error nothing is recorded and nothing is left open. */
enum tfd_status tfd_history_record_held(struct tfd_history *h, struct tfd_hist_run *runs, size_t n,
					struct tfd_err *err);
/* End the transaction of tfd_history_record_held(): commit when keep is
 * set, else roll back. Nothing held: TFD_OK. A failed commit rolls back. */
enum tfd_status tfd_history_settle(struct tfd_history *h, bool keep, struct tfd_err *err);
/* The last `limit` runs of a job, oldest first. Free with tfd_hist_runs_free. */
enum tfd_status tfd_history_runs(struct tfd_history *h, const char *job, size_t limit,
				 struct tfd_hist_run **out, size_t *n, struct tfd_err *err);
/* PRAGMA integrity_check; TFD_OK when "ok". Also counts runs. */
enum tfd_status tfd_history_check(struct tfd_history *h, size_t *nruns, struct tfd_err *err);
/* Free n runs (their strings and hosts) or n jobs, and the array; NULL is
 * allowed. */
void tfd_hist_runs_free(struct tfd_hist_run *runs, size_t n);
void tfd_hist_jobs_free(struct tfd_hist_job *jobs, size_t n);
/* Replace the owned string *dst by a copy of s (NULL: ""). */
void tfd_hist_set(char **dst, const char *s);
/* Free a run's strings and hosts (not the run itself). */
void tfd_hist_run_release(struct tfd_hist_run *r);
/* dst becomes a deep copy of src (dst's own strings are not freed). */
void tfd_hist_run_copy(struct tfd_hist_run *dst, const struct tfd_hist_run *src);

#endif
