/* times.h - calls' times as the call graph keeps them (internal).
 *
 * Each call's start, in 8 bytes or in 5 (its distance from a base, 40
 * bits: when every call of the host starts within 2^40 ns, 18 minutes),
 * and either its end or its duration in 32 bits: 7 bytes a call less at a
 * tf.data-heavy host's peak. A duration that does not fit (2^32 - 1 ns or
 * more, or negative) is UINT32_MAX there, the zigzag of the duration in a
 * map by call.
 */
#ifndef TFD_TIMES_H
#define TFD_TIMES_H

#include <stddef.h>
#include <stdint.h>

#include "tfd/capture.h"
#include "tfd/imap.h"

struct tfd_times {
	const int64_t *start; /* or NULL: */
	const int64_t *end;   /* or NULL: */
	const uint32_t *dur;
	const struct imap *long_dur;
	const uint8_t *start40; /* call k's start - base at 5k, little-endian */
	int64_t base;
};

#define TFD_START40_SPAN ((int64_t)1 << 40)

/* Entry k of an array of 5-byte little-endian numbers (tfd_start40_put). */
static inline uint64_t tfd_start40_get(const uint8_t *start40, size_t k)
{
	const uint8_t *p = start40 + 5 * k;

	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32;
}

static inline int64_t tfd_times_start(const struct tfd_times *t, size_t k)
{
	if (t->start)
		return t->start[k];
	return t->base + (int64_t)tfd_start40_get(t->start40, k);
}

static inline void tfd_start40_put(uint8_t *start40, size_t k, uint64_t off)
{
	uint8_t *p = start40 + 5 * k;

	for (int i = 0; i < 5; i++)
		p[i] = (uint8_t)(off >> (8 * i));
}

/* Call k's duration d into dur (and long_dur when it does not fit). */
static inline void tfd_dur_put(uint32_t *dur, struct imap *long_dur, size_t k, int64_t d)
{
	if ((uint64_t)d < UINT32_MAX) {
		dur[k] = (uint32_t)d;
	} else {
		dur[k] = UINT32_MAX;
		imap_put(long_dur, k, tfd_ev_zig(d));
	}
}

static inline int64_t tfd_times_end(const struct tfd_times *t, size_t k)
{
	size_t d;

	if (t->end)
		return t->end[k];
	d = t->dur[k];
	if (d != UINT32_MAX)
		return tfd_times_start(t, k) + (int64_t)d;
	imap_get(t->long_dur, k, &d);
	return tfd_times_start(t, k) + tfd_ev_unzig(d);
}

#endif
