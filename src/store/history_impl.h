/* history_impl.h - the PostgreSQL backend of the history (history_pg.c),
 * behind the tfd_history_* functions of history.c. */
#ifndef TFD_HISTORY_IMPL_H
#define TFD_HISTORY_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "tfd/history.h"

struct pg_hist;

/* A postgresql:// or postgres:// URL (else a SQLite file path). */
bool tfd_hist_is_pg(const char *spec);
/* The URL as messages may show it: the password replaced by ***. */
void tfd_hist_pg_display(const char *url, char *out, size_t len);
/* existing: read-only, nothing created or migrated */
enum tfd_status tfd_hist_pg_open(const char *url, bool existing, struct pg_hist **out,
				 struct tfd_err *err);
void tfd_hist_pg_close(struct pg_hist *h);
const char *tfd_hist_pg_name(const struct pg_hist *h);
enum tfd_status tfd_hist_pg_jobs(struct pg_hist *h, struct tfd_hist_job **out, size_t *n,
				 struct tfd_err *err);
enum tfd_status tfd_hist_pg_record(struct pg_hist *h, struct tfd_hist_run *runs, size_t n,
				   bool hold, struct tfd_err *err);
enum tfd_status tfd_hist_pg_settle(struct pg_hist *h, bool keep, struct tfd_err *err);
enum tfd_status tfd_hist_pg_runs(struct pg_hist *h, const char *job, size_t limit,
				 struct tfd_hist_run **out, size_t *n, struct tfd_err *err);
enum tfd_status tfd_hist_pg_check(struct pg_hist *h, size_t *nruns, struct tfd_err *err);

#endif
