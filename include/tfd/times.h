/* times.h - calls' times as the call graph keeps them (internal).
 *
 * A host's calls are kept in 7 bytes a call (struct tfd_ptimes): its start
 * as a signed 32-bit distance from the start of the first call of its
 * block of 64, and its duration's low 24 bits. The calls are numbered
 * thread by thread, in time order within a thread, so a block spans
 * milliseconds, not seconds: a block whose starts do not all lie within
 * 2^31 ns of its first (a thread's last calls and the next thread's
 * first) keeps its 64 starts whole in a page of its own, and a block
 * with a duration of 2^24 ns (16.8 ms) or more keeps its durations' high
 * bytes in a page of its own. A duration that does not fit in 32 bits
 * (2^32 - 1 ns or more, or negative) is the zigzag of it in a map by
 * call. Before, a call took 9 bytes (a 5-byte start from the host's
 * span, a 4-byte duration).
 *
 * struct tfd_times reads either those or a pipeline's own arrays of
 * starts and ends.
 */
#ifndef TFD_TIMES_H
#define TFD_TIMES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tfd/capture.h"
#include "tfd/imap.h"

#define TFD_PT_SHIFT 6 /* 64 calls a block */
#define TFD_PT_BLOCK (1u << TFD_PT_SHIFT)
#define TFD_PT_REC 7 /* bytes a call */

/* A block of 64 calls: its first call's start, and 1 + the index of its
 * page of whole starts (wide) and of high duration bytes (hi), 0 none. */
struct tfd_pt_block {
	int64_t base;
	uint32_t wide, hi;
};

struct tfd_ptimes {
	uint8_t *rec; /* call k at 7k: start - base (int32), duration (24 bits) */
	struct tfd_pt_block *blk;
	int64_t *wide; /* pages of 64 starts */
	uint8_t *hi;   /* pages of 64 bytes: durations' bits 24-31 */
	size_t n, cap; /* calls put, room */
	size_t nwide, wcap, nhi, hcap;
	struct imap long_dur; /* call -> zigzag duration, where 32 bits do not hold it */
};

/* An empty store with room for cap calls (it grows past them). */
void tfd_ptimes_init(struct tfd_ptimes *pt, size_t cap);
/* The next call's (number pt->n) start and duration, where
 * tfd_ptimes_push() does not put them itself. */
void tfd_ptimes_push_slow(struct tfd_ptimes *pt, int64_t start, int64_t dur);
/* Free its memory and zero it. */
void tfd_ptimes_free(struct tfd_ptimes *pt);

/* Call k's record: its start's distance in the low 32 bits, its
 * duration's low 24 above. */
static inline uint64_t tfd_pt_rec(const struct tfd_ptimes *pt, size_t k)
{
	const uint8_t *p = pt->rec + TFD_PT_REC * k;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t r;

	memcpy(&r, p, sizeof(r)); /* the array has a byte to spare past its last */
	return r;
#else
	uint64_t r = 0;

	for (int i = 0; i < TFD_PT_REC; i++)
		r |= (uint64_t)p[i] << (8 * i);
	return r;
#endif
}

static inline int64_t tfd_ptimes_start(const struct tfd_ptimes *pt, size_t k)
{
	const struct tfd_pt_block *b = &pt->blk[k >> TFD_PT_SHIFT];

	if (__builtin_expect(b->wide != 0, 0))
		return pt->wide[(size_t)(b->wide - 1) * TFD_PT_BLOCK + (k & (TFD_PT_BLOCK - 1))];
	return b->base + (int32_t)(uint32_t)tfd_pt_rec(pt, k);
}

static inline int64_t tfd_ptimes_dur(const struct tfd_ptimes *pt, size_t k)
{
	const struct tfd_pt_block *b = &pt->blk[k >> TFD_PT_SHIFT];
	uint32_t d = (uint32_t)(tfd_pt_rec(pt, k) >> 32) & 0xffffffu;
	size_t z = 0;

	if (__builtin_expect(b->hi == 0, 1))
		return d;
	d |= (uint32_t)pt->hi[(size_t)(b->hi - 1) * TFD_PT_BLOCK + (k & (TFD_PT_BLOCK - 1))] << 24;
	if (d != UINT32_MAX)
		return d;
	imap_get(&pt->long_dur, k, &z);
	return tfd_ev_unzig(z);
}

/* Call k's end where its block has a page (tfd_ptimes_end()). */
int64_t tfd_ptimes_end_slow(const struct tfd_ptimes *pt, size_t k);

/* Call k's end: its start and duration, its block read once. */
static inline int64_t tfd_ptimes_end(const struct tfd_ptimes *pt, size_t k)
{
	const struct tfd_pt_block *b = &pt->blk[k >> TFD_PT_SHIFT];
	uint64_t r = tfd_pt_rec(pt, k);

	if (__builtin_expect((b->wide | b->hi) == 0, 1))
		return b->base + (int32_t)(uint32_t)r + (int64_t)(r >> 32 & 0xffffffu);
	return tfd_ptimes_end_slow(pt, k);
}

/* The next call's (number pt->n) start and duration: in the 7 bytes
 * after the last call's (a store of 8, the one past them not yet any
 * call's), unless it begins a block, needs more room or falls outside
 * the block's 32 and 24 bits. */
static inline void tfd_ptimes_push(struct tfd_ptimes *pt, int64_t start, int64_t dur)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	size_t k = pt->n;
	const struct tfd_pt_block *b = &pt->blk[k >> TFD_PT_SHIFT];
	int64_t delta;

	/* (a block's page of high bytes starts zeroed: none to write) */
	if ((k & (TFD_PT_BLOCK - 1)) != 0 && k < pt->cap && b->wide == 0 &&
	    !__builtin_sub_overflow(start, b->base, &delta) && delta >= INT32_MIN &&
	    delta <= INT32_MAX && (uint64_t)dur < (1u << 24)) {
		uint64_t r = (uint64_t)(uint32_t)(int32_t)delta | (uint64_t)dur << 32;

		memcpy(pt->rec + TFD_PT_REC * k, &r, sizeof(r));
		pt->n = k + 1;
		return;
	}
#endif
	tfd_ptimes_push_slow(pt, start, dur);
}

/* Calls' times: a host's packed ones (pt), or arrays of starts and ends. */
struct tfd_times {
	const int64_t *start; /* or NULL: pt */
	const int64_t *end;
	const struct tfd_ptimes *pt;
};

static inline int64_t tfd_times_start(const struct tfd_times *t, size_t k)
{
	if (t->start)
		return t->start[k];
	return tfd_ptimes_start(t->pt, k);
}

static inline int64_t tfd_times_end(const struct tfd_times *t, size_t k)
{
	if (t->start)
		return t->end[k];
	return tfd_ptimes_end(t->pt, k);
}

/* Entry k of an array of 5-byte little-endian numbers (tfd_start40_put). */
static inline uint64_t tfd_start40_get(const uint8_t *start40, size_t k)
{
	const uint8_t *p = start40 + 5 * k;

	return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
	       (uint64_t)p[4] << 32;
}

static inline void tfd_start40_put(uint8_t *start40, size_t k, uint64_t off)
{
	uint8_t *p = start40 + 5 * k;

	for (int i = 0; i < 5; i++)
		p[i] = (uint8_t)(off >> (8 * i));
}

#endif
