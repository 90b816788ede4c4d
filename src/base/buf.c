#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/buf.h"
#include "tfd/err.h"

void tfd_buf_init(struct tfd_buf *b)
{
	b->s = NULL;
	b->len = b->cap = 0;
}

void tfd_buf_release(struct tfd_buf *b)
{
	free(b->s);
	tfd_buf_init(b);
}

static void reserve(struct tfd_buf *b, size_t extra)
{
	if (b->len + extra + 1 <= b->cap)
		return;
	while (b->len + extra + 1 > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->s = xrealloc(b->s, b->cap);
}

void tfd_buf_add(struct tfd_buf *b, const char *s, size_t n)
{
	reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

void tfd_buf_puts(struct tfd_buf *b, const char *s)
{
	tfd_buf_add(b, s, strlen(s));
}

void tfd_buf_printf(struct tfd_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void tfd_buf_json_str(struct tfd_buf *b, const char *s)
{
	tfd_buf_add(b, "\"", 1);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			tfd_buf_add(b, "\\\"", 2);
			break;
		case '\\':
			tfd_buf_add(b, "\\\\", 2);
			break;
		case '\n':
			tfd_buf_add(b, "\\n", 2);
			break;
		case '\r':
			tfd_buf_add(b, "\\r", 2);
			break;
		case '\t':
			tfd_buf_add(b, "\\t", 2);
			break;
		default:
			if (*p < 0x20)
				tfd_buf_printf(b, "\\u%04x", *p);
			else
				tfd_buf_add(b, (const char *)p, 1);
		}
	}
	tfd_buf_add(b, "\"", 1);
}
