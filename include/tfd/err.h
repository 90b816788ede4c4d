/* err.h - status codes and one-line error messages.
 *
 * A function that can fail takes `struct tfd_err *err` last and returns an
 * enum tfd_status. The message is a single line; callers add context with
 * tfd_err_prefix(), outermost last, so the final text reads
 * "outer: inner: problem". Only main() prints it.
 */
#ifndef TFD_ERR_H
#define TFD_ERR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

enum tfd_status {
	TFD_OK = 0,
	TFD_E_USAGE,
	TFD_E_IO,
	TFD_E_FORMAT,
	TFD_E_RULES,
	TFD_E_LIMIT,
	TFD_E_NOMEM,
	TFD_E_INTERNAL,
};

struct tfd_err {
	enum tfd_status status;
	char msg[1024];
};

/* Set err (if not NULL) to status and a printf-style message; returns status. */
enum tfd_status tfd_fail(struct tfd_err *err, enum tfd_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepend "context: " to the message already in err. */
void tfd_err_prefix(struct tfd_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reset err to TFD_OK with an empty message. */
void tfd_err_clear(struct tfd_err *err);

/* Exit code for a status: 0 ok, 2 usage, 1 anything else. */
int tfd_status_exit_code(enum tfd_status st);

/* Whether environment variable name is set to "1": the developers' check
 * hooks (TFDOCTOR_FOLD_CHECK, TFDOCTOR_INFLIGHT, TFDOCTOR_TIMELINK_CHECK,
 * TFDOCTOR_SOURCE_CHECK; docs/development.md). */
bool tfd_env_flag(const char *name);

/* Allocation helpers that abort with "tfdoctor: error: out of memory". */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* xcalloc() for a table that is read before it is written (a hash
 * table's probes): zeroed by writing. A large calloc() block's pages are
 * untouched, a read maps the shared zero page and the first write then
 * copies it, flushing the page from every core the process ran on: with
 * two reader threads, those interrupts were a third of the pre-pass. */
void *xcalloc_written(size_t n, size_t size);

#endif
