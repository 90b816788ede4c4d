/* output_impl.h - internals shared by the reports (this folder only). */
#ifndef TFD_OUTPUT_IMPL_H
#define TFD_OUTPUT_IMPL_H

#include <stddef.h>

#include "tfd/analysis.h"
#include "tfd/buf.h"

/* A rate into buf: "311/s", "2.5/s", "unbounded" (worth.c). */
void tfd_fmt_rate(double v, char *buf, size_t len);

/* The same with what is counted: "311 root elements/s". */
void tfd_fmt_rate_of(double v, const char *what, char *buf, size_t len);

/* "HIGHLY", "MODERATELY" or "NOT" (shares.c). */
const char *tfd_band_word(enum tfd_bound bd);

/* The lines under the verdict's share: the three shares when they differ,
 * the wait's parts, what the markers, a ramp, warm-up and the long gaps
 * between the steps leave out (shares.c). */
void tfd_share_lines(const struct tfd_host_result *f, struct tfd_buf *b);

#endif
