/* output_impl.h - internals shared by the reports (this folder only). */
#ifndef TFD_OUTPUT_IMPL_H
#define TFD_OUTPUT_IMPL_H

#include <stddef.h>

/* A rate into buf: "311/s", "2.5/s", "unbounded" (worth.c). */
void tfd_fmt_rate(double v, char *buf, size_t len);

/* The same with what is counted: "311 root elements/s". */
void tfd_fmt_rate_of(double v, const char *what, char *buf, size_t len);

#endif
