/* times.c - a host's calls' times in 7 bytes a call (tfd/times.h). */
#include "tfd/times.h"

#include <stdlib.h>
#include <string.h>

#include "tfd/err.h"

/* Blocks for room for cap calls. */
static size_t nblocks(size_t cap)
{
	return cap / TFD_PT_BLOCK + 1;
}

static void grow_to(struct tfd_ptimes *pt, size_t cap)
{
	size_t nb = nblocks(cap), ob = nblocks(pt->cap);

	/* a byte past the last record: tfd_pt_rec() reads 8 */
	pt->rec = xrealloc(pt->rec, TFD_PT_REC * cap + 1);
	pt->blk = xrealloc(pt->blk, nb * sizeof(*pt->blk));
	memset(pt->blk + ob, 0, (nb - ob) * sizeof(*pt->blk));
	pt->cap = cap;
}

void tfd_ptimes_init(struct tfd_ptimes *pt, size_t cap)
{
	memset(pt, 0, sizeof(*pt));
	/* blocks zeroed (calloc): only the ones written are touched */
	pt->rec = xmalloc(TFD_PT_REC * cap + 1);
	pt->blk = xcalloc(nblocks(cap), sizeof(*pt->blk));
	pt->cap = cap;
}

/* A new page of 64 entries of size sz in *pages (*n used, room *room). */
static uint32_t new_page(void **pages, size_t *n, size_t *room, size_t sz)
{
	if (*n == *room) {
		*room = *room ? 2 * *room : 4;
		*pages = xrealloc(*pages, *room * TFD_PT_BLOCK * sz);
	}
	memset((char *)*pages + *n * TFD_PT_BLOCK * sz, 0, TFD_PT_BLOCK * sz);
	*n += 1;
	return (uint32_t)*n; /* 1 + its index */
}

/* Block b's starts, those of its first j calls set, go whole. */
static void go_wide(struct tfd_ptimes *pt, struct tfd_pt_block *b, size_t first, size_t j)
{
	void *pages = pt->wide;
	uint32_t w = new_page(&pages, &pt->nwide, &pt->wcap, sizeof(int64_t));
	int64_t *page;

	pt->wide = pages;
	page = pt->wide + (size_t)(w - 1) * TFD_PT_BLOCK;
	for (size_t i = 0; i < j; i++)
		page[i] = b->base + (int32_t)(uint32_t)tfd_pt_rec(pt, first + i);
	b->wide = w;
}

void tfd_ptimes_push_slow(struct tfd_ptimes *pt, int64_t start, int64_t dur)
{
	size_t k = pt->n, j = k & (TFD_PT_BLOCK - 1);
	struct tfd_pt_block *b;
	uint32_t d32, off = 0;
	int64_t delta;
	uint8_t *p;

	if (k >= pt->cap)
		grow_to(pt, pt->cap < 64 ? 64 : 2 * pt->cap);
	b = &pt->blk[k >> TFD_PT_SHIFT];
	if (j == 0)
		b->base = start;
	else if (!b->wide && (__builtin_sub_overflow(start, b->base, &delta) || delta < INT32_MIN ||
			      delta > INT32_MAX))
		go_wide(pt, b, k - j, j);
	if (b->wide)
		pt->wide[(size_t)(b->wide - 1) * TFD_PT_BLOCK + j] = start;
	else
		off = (uint32_t)(int32_t)(start - b->base);
	d32 = (uint64_t)dur < UINT32_MAX ? (uint32_t)dur : UINT32_MAX;
	if (d32 == UINT32_MAX)
		imap_put(&pt->long_dur, k, tfd_ev_zig(dur));
	if (d32 >> 24) {
		if (!b->hi) {
			void *pages = pt->hi;

			b->hi = new_page(&pages, &pt->nhi, &pt->hcap, 1);
			pt->hi = pages;
		}
		pt->hi[(size_t)(b->hi - 1) * TFD_PT_BLOCK + j] = (uint8_t)(d32 >> 24);
	}
	p = pt->rec + TFD_PT_REC * k;
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(off >> (8 * i));
	for (int i = 0; i < 3; i++)
		p[4 + i] = (uint8_t)(d32 >> (8 * i));
	pt->n = k + 1;
}

int64_t tfd_ptimes_end_slow(const struct tfd_ptimes *pt, size_t k)
{
	return tfd_ptimes_start(pt, k) + tfd_ptimes_dur(pt, k);
}

void tfd_ptimes_free(struct tfd_ptimes *pt)
{
	free(pt->rec);
	free(pt->blk);
	free(pt->wide);
	free(pt->hi);
	imap_free(&pt->long_dur);
	memset(pt, 0, sizeof(*pt));
}
