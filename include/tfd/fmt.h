/* fmt.h - numbers as every report prints them. Writes into a caller's
 * buffer and returns it; cannot fail (a too small buffer is cut, as
 * snprintf cuts: 32 bytes always hold the longest). */
#ifndef TFD_FMT_H
#define TFD_FMT_H

#include <stddef.h>
#include <stdint.h>

/* "1.234 ms", "56.7 us", "802 us", "890 ns": at most three decimals, no
 * trailing zeros (the precision the capture has) */
const char *tfd_fmt_ns(int64_t ns, char *buf, size_t len);

#endif
