/* satmath.h - saturating int64 arithmetic for aggregates over hostile input.
 *
 * Input times are bounded (capture.h), but a file can hold millions of
 * long events: sums over them saturate at INT64_MAX / INT64_MIN instead of
 * overflowing (undefined behaviour in C).
 */
#ifndef TFD_SATMATH_H
#define TFD_SATMATH_H

#include <stdint.h>

static inline int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat_sub(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

#endif
