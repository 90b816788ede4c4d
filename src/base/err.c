#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfd/err.h"

enum tfd_status tfd_fail(struct tfd_err *err, enum tfd_status status, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return status;
	err->status = status;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return status;
}

void tfd_err_prefix(struct tfd_err *err, const char *fmt, ...)
{
	char ctx[512], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(ctx, sizeof(ctx), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	{
		size_t n = strlen(ctx);

		if (n > sizeof(err->msg) - 3)
			n = sizeof(err->msg) - 3;
		memcpy(err->msg, ctx, n);
		memcpy(err->msg + n, ": ", 2);
		n += 2;
		old[sizeof(old) - 1 - n] = '\0';
		memcpy(err->msg + n, old, strlen(old) + 1);
	}
}

void tfd_err_clear(struct tfd_err *err)
{
	if (!err)
		return;
	err->status = TFD_OK;
	err->msg[0] = '\0';
}

int tfd_status_exit_code(enum tfd_status st)
{
	switch (st) {
	case TFD_OK:
		return 0;
	case TFD_E_USAGE:
		return 2;
	default:
		return 1;
	}
}

/* One clear line and exit status 1: running out of memory (a ulimit, a huge
 * capture) is a runtime error, never a crash. Said once: two threads that
 * run out together printed it twice; the later one waits for the exit. */
static void oom(void)
{
	static atomic_flag said = ATOMIC_FLAG_INIT;

	if (atomic_flag_test_and_set(&said))
		for (;;)
			pause();
	fputs("tfdoctor: error: out of memory (the capture needs more than the memory limit "
	      "allows)\n",
	      stderr);
	_exit(1);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		oom();
	return p;
}

static void *(*volatile const zero_fill)(void *, int, size_t) = memset;

void *xcalloc_written(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (size && n > SIZE_MAX / size)
		oom();
	bytes = n * size;
	p = xmalloc(bytes);
	/* through a volatile pointer: the compiler folds malloc() and a
	 * memset() of zeros into calloc() */
	zero_fill(p, 0, bytes ? bytes : 1);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);

	if (!q)
		oom();
	return q;
}

bool tfd_env_flag(const char *name)
{
	const char *v = getenv(name);

	return v && strcmp(v, "1") == 0;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = xmalloc(n);

	memcpy(p, s, n);
	return p;
}
