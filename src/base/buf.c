#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/buf.h"
#include "tfd/err.h"

void tfd_buf_init(struct tfd_buf *b)
{
	b->s = NULL;
	b->len = b->cap = 0;
	b->out = NULL;
}

void tfd_buf_drain(struct tfd_buf *b)
{
	struct tfd_buf_out *o = b->out;

	if (!o || b->len < ((size_t)1 << 20))
		return;
	if (!o->failed && !o->write(o->ctx, b->s, b->len))
		o->failed = true;
	b->len = 0;
	b->s[0] = '\0';
}

void tfd_buf_release(struct tfd_buf *b)
{
	free(b->s);
	tfd_buf_init(b);
}

void tfd_buf_grow(struct tfd_buf *b, size_t extra)
{
	while (b->len + extra + 1 > b->cap)
		b->cap = b->cap ? b->cap * 2 : 256;
	b->s = xrealloc(b->s, b->cap);
}

void tfd_buf_puts(struct tfd_buf *b, const char *s)
{
	tfd_buf_add(b, s, strlen(s));
}

void tfd_buf_vprintf(struct tfd_buf *b, const char *fmt, va_list ap)
{
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n >= 0) {
		tfd_buf_reserve(b, (size_t)n);
		vsnprintf(b->s + b->len, (size_t)n + 1, fmt, again);
		b->len += (size_t)n;
	}
	va_end(again);
}

void tfd_buf_printf(struct tfd_buf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	tfd_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void tfd_buf_indent(struct tfd_buf *b, const char *lead, size_t nlead, int depth)
{
	size_t n = (size_t)(depth < 0 ? -depth : depth) * 2;

	tfd_buf_reserve(b, nlead + n);
	memcpy(b->s + b->len, lead, nlead);
	memset(b->s + b->len + nlead, ' ', n);
	b->len += nlead + n;
	b->s[b->len] = '\0';
}

/* The bytes of c that are copied as they are: in a string, up to a quote
 * or a backslash; outside, up to a byte the layout acts on. */
static size_t plain_run(const char *c, bool in_str)
{
	return in_str ? strcspn(c, "\"\\") : strcspn(c, "\"{[}],:");
}

void tfd_json_pretty_feed(struct tfd_json_pp *st, struct tfd_buf *b, const char *c)
{
	for (const char *p = c; *p; p++) {
		size_t run = plain_run(p, st->in_str != 0);
		char ch;

		if (run) { /* copied in one piece, not byte by byte */
			tfd_buf_add(b, p, run);
			p += run;
			if (!*p)
				break;
		}
		ch = *p;
		if (st->in_str) {
			tfd_buf_add(b, p, 1);
			if (ch == '\\' && p[1]) {
				tfd_buf_add(b, ++p, 1);
			} else if (ch == '"') {
				st->in_str = 0;
			}
			continue;
		}
		switch (ch) {
		case '"':
			st->in_str = 1;
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
			st->depth++;
			tfd_buf_indent(b, "\n", 1, st->depth);
			break;
		case '}':
		case ']':
			st->depth--;
			tfd_buf_indent(b, "\n", 1, st->depth);
			tfd_buf_add(b, p, 1);
			break;
		case ',':
			tfd_buf_indent(b, ",\n", 2, st->depth);
			break;
		default: /* ':' */
			tfd_buf_add(b, ": ", 2);
		}
	}
}

void tfd_buf_json_pretty(struct tfd_buf *b, const char *c)
{
	struct tfd_json_pp st = {0, 0};

	tfd_json_pretty_feed(&st, b, c);
	tfd_buf_add(b, "\n", 1);
}

static int is_c1(const unsigned char *p, size_t left)
{
	return left >= 2 && p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

static int is_ctl(unsigned char c)
{
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f;
}

/* Append s[0..len) to o with control bytes and C1 controls as "\xNN";
 * line breaks and tabs stay when lines is set. */
static void put_escaped(struct tfd_buf *o, const char *s, size_t len, bool lines)
{
	size_t clean = 0;

	for (size_t i = 0; i < len; i++) {
		const unsigned char *p = (const unsigned char *)s + i;
		bool c1 = is_c1(p, len - i);

		if (!c1 && !is_ctl(*p) && (lines || (*p != '\n' && *p != '\t')))
			continue;
		tfd_buf_add(o, s + clean, i - clean);
		tfd_buf_printf(o, "\\x%02x", c1 ? p[1] : *p);
		i += c1;
		clean = i + 1;
	}
	tfd_buf_add(o, s + clean, len - clean);
}

void tfd_buf_escape_controls(struct tfd_buf *b)
{
	struct tfd_buf o;
	size_t i = 0;

	for (; i < b->len; i++)
		if (is_ctl((unsigned char)b->s[i]) || is_c1((unsigned char *)b->s + i, b->len - i))
			break;
	if (i == b->len)
		return; /* the common case: nothing to do */
	tfd_buf_init(&o);
	put_escaped(&o, b->s, b->len, true);
	tfd_buf_release(b);
	*b = o;
}

void tfd_str_escape_controls(const char *s, char *out, size_t outsz)
{
	struct tfd_buf b;

	size_t n;

	if (!outsz)
		return;
	tfd_buf_init(&b);
	tfd_buf_puts(&b, s);
	tfd_buf_escape_controls(&b);
	n = b.len;
	if (n >= outsz) {
		/* cut, and said: "..." at the end, never inside an "\xNN" or
		 * a UTF-8 character */
		n = outsz > 4 ? outsz - 4 : 0;
		for (size_t k = n >= 3 ? n - 3 : 0; k < n; k++)
			if (b.s[k] == '\\' && b.s[k + 1] == 'x' && k + 4 > n) {
				n = k;
				break;
			}
		while (n > 0 && ((unsigned char)b.s[n] & 0xC0) == 0x80)
			n--;
		snprintf(out, outsz, "%.*s%s", (int)n, b.s, outsz > 4 ? "..." : "");
	} else {
		memcpy(out, b.len ? b.s : "", n);
		out[n] = '\0';
	}
	tfd_buf_release(&b);
}

void tfd_buf_put_html(struct tfd_buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '<':
			tfd_buf_puts(b, "&lt;");
			break;
		case '>':
			tfd_buf_puts(b, "&gt;");
			break;
		case '&':
			tfd_buf_puts(b, "&amp;");
			break;
		case '"':
			tfd_buf_puts(b, "&quot;");
			break;
		case '\n':
		case '\t':
			tfd_buf_add(b, (const char *)p, 1);
			break;
		default:
			if (is_ctl(*p) || is_c1(p, 2))
				tfd_buf_printf(b, "\\x%02x", is_c1(p, 2) ? *++p : *p);
			else
				tfd_buf_add(b, (const char *)p, 1);
		}
	}
}

void tfd_buf_put_md(struct tfd_buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		switch (*p) {
		case '|':
		case '\\':
		case '`':
		case '*':
		case '_':
		case '[':
		case ']':
			tfd_buf_add(b, "\\", 1);
			tfd_buf_add(b, (const char *)p, 1);
			break;
		case '<':
			tfd_buf_puts(b, "&lt;");
			break;
		case '>':
			tfd_buf_puts(b, "&gt;");
			break;
		case '&':
			tfd_buf_puts(b, "&amp;");
			break;
		case '\n':
		case '\r':
		case '\t':
			tfd_buf_add(b, " ", 1);
			break;
		default:
			if (is_ctl(*p) || is_c1(p, 2))
				tfd_buf_printf(b, "\\x%02x", is_c1(p, 2) ? *++p : *p);
			else
				tfd_buf_add(b, (const char *)p, 1);
		}
	}
}

const char *tfd_name_on_line(const char *s)
{
	static _Thread_local struct tfd_buf ring[8];
	static _Thread_local unsigned next;
	size_t len = strlen(s);
	struct tfd_buf *b;
	size_t i = 0;

	for (; i < len; i++)
		if (s[i] == '\n' || s[i] == '\t' || is_ctl((unsigned char)s[i]) ||
		    is_c1((const unsigned char *)s + i, len - i))
			break;
	if (i == len)
		return s; /* the common case: nothing to escape */
	b = &ring[next++ % 8];
	b->len = 0;
	put_escaped(b, s, len, false);
	return b->s;
}
