/* history_impl.h - the history's backends (SQLite in history.c, PostgreSQL
 * in history_pg.c) behind one interface, used by the tfd_history_*
 * functions of history.c. */
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

/* One store of the history: what the tfd_history_* functions do, per
 * backend (SQLite: history.c; PostgreSQL: history_pg.c), on the backend's
 * own handle (ctx). tfd_history keeps what is common (the held flag, the
 * name, the check of what is read). */
struct tfd_hist_backend {
	enum tfd_status (*jobs)(void *ctx, struct tfd_hist_job **out, size_t *n,
				struct tfd_err *err);
	/* hold: the transaction stays open for settle() */
	enum tfd_status (*record)(void *ctx, struct tfd_hist_run *runs, size_t n, bool hold,
				  struct tfd_err *err);
	enum tfd_status (*settle)(void *ctx, bool keep, struct tfd_err *err);
	enum tfd_status (*runs)(void *ctx, const char *job, size_t limit, struct tfd_hist_run **out,
				size_t *n, struct tfd_err *err);
	enum tfd_status (*check)(void *ctx, size_t *nruns, struct tfd_err *err);
	void (*close)(void *ctx);
};

/* The PostgreSQL backend (ctx: the struct pg_hist of tfd_hist_pg_open). */
extern const struct tfd_hist_backend tfd_hist_pg_backend;

#endif
