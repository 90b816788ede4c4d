/* writedelay.c - a test's own hook (LD_PRELOAD), not the product's: before
 * a history write is committed (SQLite's or PostgreSQL's "COMMIT"), sleep
 * TFD_TEST_WRITE_DELAY_MS, so that a test can kill a writer, or hold its
 * lock, in the window between its rows and its commit. Built by make as
 * build/<flavor>/writedelay.so; tests/lib.sh's with_write_delay uses it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void delay_before(const char *sql)
{
	const char *ms = getenv("TFD_TEST_WRITE_DELAY_MS");

	if (ms && sql && strcmp(sql, "COMMIT") == 0)
		usleep((useconds_t)atoi(ms) * 1000u);
}

/* dlsym's own prototype (the one wrapped below) */
void *dlsym(void *handle, const char *name);

/* dlsym itself, found without dlsym */
static void *real_dlsym(void *handle, const char *name)
{
	static void *(*real)(void *, const char *);

	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!real)
		real = (void *(*)(void *, const char *))dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	return real(handle, name);
}

/* libpq and SQLite are loaded at run time (dlopen, then dlsym on their
 * handles): their PQexec and sqlite3_exec are handed out wrapped */
static void *(*real_pqexec)(void *, const char *);
static int (*real_sqlite_exec)(void *, const char *, void *, void *, char **);

static void *pqexec(void *conn, const char *query)
{
	delay_before(query);
	return real_pqexec(conn, query);
}

static int sqlite_exec(void *db, const char *sql, void *cb, void *arg, char **errmsg)
{
	delay_before(sql);
	return real_sqlite_exec(db, sql, cb, arg, errmsg);
}

void *dlsym(void *handle, const char *name)
{
	void *p = real_dlsym(handle, name);

	if (p && name && strcmp(name, "PQexec") == 0) {
		real_pqexec = (void *(*)(void *, const char *))p;
		return (void *)pqexec;
	}
	if (p && name && strcmp(name, "sqlite3_exec") == 0) {
		real_sqlite_exec = (int (*)(void *, const char *, void *, void *, char **))p;
		return (void *)sqlite_exec;
	}
	return p;
}
