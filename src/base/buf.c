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

void tfd_buf_json_pretty(struct tfd_buf *b, const char *c)
{
	int depth = 0, in_str = 0;

	for (const char *p = c; *p; p++) {
		char ch = *p;

		if (in_str) {
			tfd_buf_add(b, p, 1);
			if (ch == '\\' && p[1]) {
				tfd_buf_add(b, ++p, 1);
			} else if (ch == '"') {
				in_str = 0;
			}
			continue;
		}
		switch (ch) {
		case '"':
			in_str = 1;
			tfd_buf_add(b, p, 1);
			break;
		case '{':
		case '[':
			if ((ch == '{' && p[1] == '}') || (ch == '[' && p[1] == ']')) {
				tfd_buf_add(b, p, 2);
				p++;
				break;
			}
			tfd_buf_add(b, p, 1);
			depth++;
			tfd_buf_printf(b, "\n%*s", depth * 2, "");
			break;
		case '}':
		case ']':
			depth--;
			tfd_buf_printf(b, "\n%*s", depth * 2, "");
			tfd_buf_add(b, p, 1);
			break;
		case ',':
			tfd_buf_printf(b, ",\n%*s", depth * 2, "");
			break;
		case ':':
			tfd_buf_add(b, ": ", 2);
			break;
		default:
			tfd_buf_add(b, p, 1);
		}
	}
	tfd_buf_add(b, "\n", 1);
}
