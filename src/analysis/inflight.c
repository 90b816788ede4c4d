/* inflight.c - how many of a host's iterator calls an analysis that read
 * them in time order would have to hold at once (TFDOCTOR_INFLIGHT=1, a
 * line per host on stderr; see docs/performance.md, "Calls held in time
 * order").
 *
 * Today every call is kept until the pipelines are summed: 12 bytes a
 * call, most of an iterator-dense capture's peak. A reader that merged a
 * host's lines by time could fold each call into the sums and forget it,
 * once nothing can still need it: a call is held from its start until it
 * has ended and so has the top of its chain of parents (the root call
 * whose attribution walks its subtree, its producers included); a call
 * that ran ahead for an element nobody took in the capture has no top but
 * itself, and a reader in time order cannot know that until the parent
 * iterator's last call has ended (known from a pass over the iterators
 * before the calls), so it is held until then (on a Chrome trace, whose
 * calls find their parents by overlap, one with no parent is known at its
 * end: the figure there is a bound). The figure is the most calls
 * held at any instant, beside the most running at once (the threads'
 * stacks): the memory such a reader would need, counted on the calls as
 * linked here, not a guess.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"
#include "passes.h"
#include "tfd/graph.h"
#include "tfd/select.h"

size_t tfd_most_open(int64_t *start, int64_t *end, size_t n, int64_t *at)
{
	size_t best = 0, j = 0;

	tfd_sort_i64(start, n);
	tfd_sort_i64(end, n);
	for (size_t i = 0; i < n; i++) {
		while (j < n && end[j] <= start[i])
			j++;
		if (i + 1 - j > best) {
			best = i + 1 - j;
			*at = start[i];
		}
	}
	return best;
}

/* The top of call k's chain of parents, found once per chain (top[] -1:
 * not yet known). */
static int top_of(const struct host_ctx *c, int *top, int k)
{
	int x = k, r, guard = 0;

	while (top[x] < 0 && c->calls.v[x].parent >= 0 && guard++ < TFD_MAX_CALL_DEPTH + 5)
		x = c->calls.v[x].parent;
	r = top[x] >= 0 ? top[x] : x;
	for (x = k, guard = 0; top[x] < 0 && guard++ < TFD_MAX_CALL_DEPTH + 5;
	     x = c->calls.v[x].parent) {
		top[x] = r;
		if (c->calls.v[x].parent < 0)
			break;
	}
	return r;
}

/* Whether call k ran for an element that no call took: linked to nothing,
 * though its iterator has a parent. */
static bool ran_ahead(const struct host_ctx *c, size_t k)
{
	return c->calls.v[k].link == TFD_LINK_NONE && c->calls.v[k].parent < 0 &&
	       c->iters.v[call_iter(c, k)].parent >= 0;
}

void tfd_inflight_report(const struct host_ctx *c)
{
	size_t n = c->calls.n, ahead = 0, tops = 0, held, running;
	int64_t at = 0, unused, *start, *until, *end;
	int *top;

	if (!n)
		return;
	top = xmalloc(n * sizeof(*top));
	start = xmalloc(n * sizeof(*start));
	until = xmalloc(n * sizeof(*until));
	end = xmalloc(n * sizeof(*end));
	memset(top, 0xff, n * sizeof(*top));
	for (size_t k = 0; k < n; k++) {
		int t = top_of(c, top, (int)k);

		start[k] = call_start(c, k);
		end[k] = call_end(c, k);
		until[k] = call_end(c, (size_t)t);
		if (ran_ahead(c, (size_t)t)) {
			/* its taker would be a call of the parent iterator */
			until[k] = c->iters.v[c->iters.v[call_iter(c, (size_t)t)].parent].last_end;
			ahead++;
		}
		tops += (size_t)t == k;
		if (until[k] < end[k])
			until[k] = end[k];
	}
	free(top);
	held = tfd_most_open(start, until, n, &at);
	running = tfd_most_open(start, end, n, &unused);
	fprintf(stderr,
		"tfdoctor: inflight: %s: %zu calls (%zu tops, %zu ran ahead untaken): "
		"held at most %zu at %lld ns (%.2f %% of the calls), running at most %zu\n",
		c->h->name ? c->h->name : "?", n, tops, ahead, held, (long long)at,
		100.0 * (double)held / (double)n, running);
	free(start);
	free(until);
	free(end);
}
