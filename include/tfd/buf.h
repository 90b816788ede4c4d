/* buf.h - a growable text buffer that renderers write into.
 *
 * The owner releases it with tfd_buf_release(). Appends abort on OOM.
 */
#ifndef TFD_BUF_H
#define TFD_BUF_H

#include <stddef.h>

struct tfd_buf {
	char *s;
	size_t len, cap;
};

void tfd_buf_init(struct tfd_buf *b);
void tfd_buf_release(struct tfd_buf *b);
void tfd_buf_add(struct tfd_buf *b, const char *s, size_t n);
void tfd_buf_puts(struct tfd_buf *b, const char *s);
void tfd_buf_printf(struct tfd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append compact JSON (as cJSON_PrintUnformatted writes it) indented by two
 * spaces per level, with a final newline. */
void tfd_buf_json_pretty(struct tfd_buf *b, const char *compact);

#endif
