/* buf.h - a growable text buffer that renderers write into.
 *
 * The owner releases it with tfd_buf_release(). Appends abort on OOM.
 */
#ifndef TFD_BUF_H
#define TFD_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

struct tfd_buf {
	char *s;
	size_t len, cap;
	/* where its text may go before the end (NULL: nowhere), at the
	 * points its writer knows final (tfd_buf_drain()) */
	struct tfd_buf_out *out;
};

/* A buffer's way out: write(ctx, s, len) false on an error, after which
 * nothing more is written (failed; the owner reports it). */
struct tfd_buf_out {
	bool (*write)(void *ctx, const char *s, size_t len);
	void *ctx;
	bool failed;
};

/* The text so far is final (a report's host written): b's text goes to
 * b->out, if it has one, once it holds a megabyte or more; b is left
 * empty then. */
void tfd_buf_drain(struct tfd_buf *b);

/* An empty buffer; release with tfd_buf_release (NULL-safe contents).
 * The appends grow the buffer (abort with one line on out of memory) and
 * keep it NUL-terminated; printf never cuts. */
void tfd_buf_init(struct tfd_buf *b);
void tfd_buf_release(struct tfd_buf *b);
void tfd_buf_puts(struct tfd_buf *b, const char *s);
void tfd_buf_printf(struct tfd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Room for extra more bytes and the NUL: tfd_buf_reserve() grows the
 * buffer through tfd_buf_grow() only when it must (both inline callers'
 * fast path: a report's writer adds millions of short pieces). */
void tfd_buf_grow(struct tfd_buf *b, size_t extra);
static inline void tfd_buf_reserve(struct tfd_buf *b, size_t extra)
{
	if (b->len + extra + 1 > b->cap)
		tfd_buf_grow(b, extra);
}
static inline void tfd_buf_add(struct tfd_buf *b, const char *s, size_t n)
{
	tfd_buf_reserve(b, n);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}
/* tfd_buf_printf() with a va_list (ap is used up, as by vprintf). */
void tfd_buf_vprintf(struct tfd_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Append compact JSON (as cJSON_PrintUnformatted writes it) indented by two
 * spaces per level, with a final newline. */
void tfd_buf_json_pretty(struct tfd_buf *b, const char *compact);
/* lead[0..nlead) and depth * 2 spaces, as that layout indents (as "%*s"
 * pads: a negative depth, from input closing more than it opened, pads
 * as much). */
void tfd_buf_indent(struct tfd_buf *b, const char *lead, size_t nlead, int depth);
/* The layout's state between pieces of one document (zeroed first). */
struct tfd_json_pp {
	int depth, in_str;
};
/* tfd_buf_json_pretty() piece by piece: each call appends the layout of
 * compact, a piece of one document, from where the last piece left off.
 * A piece must not end between the brackets of an empty object or array,
 * nor inside an escape; the document's final newline is the caller's. */
void tfd_json_pretty_feed(struct tfd_json_pp *st, struct tfd_buf *b, const char *compact);
/* Make b safe to print on a terminal: every control byte but newline and
 * tab (ESC, BEL, CR, ...) and every C1 control (U+0080..U+009F in UTF-8)
 * becomes the visible text "\xNN". Names in captures are untrusted. */
void tfd_buf_escape_controls(struct tfd_buf *b);
/* Append s as Markdown text safe in a table cell or a list item: | \ ` * _ [ ]
 * are backslash-escaped, < > & become entities (no raw HTML passes), line
 * breaks become spaces, and control bytes become "\xNN". */
void tfd_buf_put_md(struct tfd_buf *b, const char *s);
/* Append s as HTML text safe in an element or a double-quoted attribute
 * (the only kind the reports write): < > & " become entities, control bytes (ESC, CR, ...) and C1
 * controls the visible "\xNN" (HTML has no place for them). The one HTML escaper. */
void tfd_buf_put_html(struct tfd_buf *b, const char *s);
/* The same escaping for one line of text about to go to a terminal, into
 * out (outsz bytes): a text that does not fit is cut with "..." at its end,
 * never inside an "\xNN" or a UTF-8 character. */
void tfd_str_escape_controls(const char *s, char *out, size_t outsz);

/* A name from a capture as a line-oriented text shows it: a line break, a
 * carriage return or another control byte (C1 too) becomes "\xNN", so that a name
 * cannot end a line and forge the next. Returns s itself when nothing is
 * escaped, else a buffer of this thread's that lives until eight more
 * names have been shown (enough for one printf). */
const char *tfd_name_on_line(const char *s);

#endif
