/* times.h - calls' times as the call graph keeps them (internal).
 *
 * Each call's start, and either its end or its duration in 32 bits: 4
 * bytes a call at a tf.data-heavy host's peak. A duration that does not
 * fit (2^32 - 1 ns or more, or negative) is UINT32_MAX there, the zigzag
 * of the duration in a map by call.
 */
#ifndef TFD_TIMES_H
#define TFD_TIMES_H

#include <stddef.h>
#include <stdint.h>

#include "tfd/capture.h"
#include "tfd/imap.h"

struct tfd_times {
	const int64_t *start;
	const int64_t *end; /* or NULL: */
	const uint32_t *dur;
	const struct imap *long_dur;
};

static inline int64_t tfd_times_end(const struct tfd_times *t, size_t k)
{
	size_t d;

	if (t->end)
		return t->end[k];
	d = t->dur[k];
	if (d != UINT32_MAX)
		return t->start[k] + (int64_t)d;
	imap_get(t->long_dur, k, &d);
	return t->start[k] + tfd_ev_unzig(d);
}

#endif
