/* link.c - call linking: every iterator call gets at most one parent call,
 * so calls form a forest whose roots are the root-iterator calls:
 *   1. sync: the innermost enclosing iterator call on the same thread;
 *   2. produce: the call is inside an XxxProduce event whose element_id
 *      matches an XxxConsume inside a call of the parent iterator;
 *   3. overlap: the call of the parent iterator (any thread) that overlaps
 *      it most (Chrome JSON drops Produce/Consume, older TF never had them);
 *   4. none: no parent call overlaps: the element was produced ahead.
 */
#include "passes.h"
#include "tfd/graph.h"

/* a call keeps how it was linked in 3 bits (struct call.link) */
_Static_assert(TFD_LINK__COUNT <= 8, "link bits");

/* The overlap of [s, e) with call k. */
static int64_t overlap(const struct host_ctx *c, int64_t s, int64_t e, int k)
{
	int64_t ks = call_start(c, (size_t)k), lo = ks > s ? ks : s;
	int64_t end = call_end(c, (size_t)k), hi = end < e ? end : e;

	return hi > lo ? hi - lo : 0;
}

/* Better parent candidate for the call over [s, e): more overlap, then
 * earlier start, then lower index. */
static int better(const struct host_ctx *c, int64_t s, int64_t e, int cand, int best)
{
	int64_t oc, ob;

	if (best < 0)
		return 1;
	oc = overlap(c, s, e, cand);
	ob = overlap(c, s, e, best);
	if (oc != ob)
		return oc > ob;
	if (call_start(c, (size_t)cand) != call_start(c, (size_t)best))
		return call_start(c, (size_t)cand) < call_start(c, (size_t)best);
	return cand < best;
}

/* A call that the first pass left to the time-overlap pass. */
#define LINK_PENDING 7
_Static_assert(TFD_LINK__COUNT <= LINK_PENDING, "a link value is free");

/* Whether call k may be linked by its Produce element (ec: at the
 * element of the first produced call from k on): the bucket, then. */
static bool by_element(const struct host_ctx *c, size_t k, struct elem_cursor *ec, size_t *b)
{
	const struct call *cl = &c->calls.v[k];
	const struct iter *it = &c->iters.v[call_iter(c, k)];
	uint64_t elem;

	if (!call_produced(c, k))
		return false;
	elem = elem_next(ec);
	if (it->parent < 0 || cl->parent >= 0)
		return false;
	*b = cons_bucket(c, c->iters.v[it->parent].id, elem);
	return true;
}

/* Lookups run ahead of the links (a prefetch only): an element's first
 * slot FAR calls ahead, the call it holds NEAR calls ahead. */
enum { FAR = 16, NEAR = 8 };

static void fetch_ahead(const struct host_ctx *c, size_t i, struct elem_cursor ec[2])
{
	size_t b;
	int cc;

	if (i + FAR < c->calls.n && by_element(c, i + FAR, &ec[0], &b)) {
		__builtin_prefetch(&c->cons_call[b]);
		__builtin_prefetch(&c->cons_elem[b]);
	}
	if (i + NEAR < c->calls.n && by_element(c, i + NEAR, &ec[1], &b) &&
	    (cc = c->cons_call[b]) >= 0) {
		__builtin_prefetch(&c->calls.v[cc]);
		__builtin_prefetch(c->cstart40 ? (const void *)(c->cstart40 + 5 * (size_t)cc)
					       : (const void *)&c->cstart[cc]);
		__builtin_prefetch(&c->cdur[cc]);
	}
}

/* The links that need no time search (1, 2 and roots); the number of calls
 * left for the overlap pass, their link LINK_PENDING. */
static size_t link_direct(struct host_ctx *c)
{
	size_t pending = 0;
	struct elem_cursor el = elem_begin(c), ahead[2] = {elem_begin(c), elem_begin(c)};

	/* the look-ahead cursors start past the calls before them */
	for (size_t k = 0; k < c->calls.n && k < FAR; k++) {
		size_t b;

		by_element(c, k, &ahead[0], &b);
		if (k < NEAR)
			by_element(c, k, &ahead[1], &b);
	}
	for (size_t i = 0; i < c->calls.n; i++) {
		struct call *cl = &c->calls.v[i];
		const struct iter *it = &c->iters.v[call_iter(c, i)];
		int64_t s0 = call_start(c, i), e0 = call_end(c, i);
		int best = -1;
		bool produced = call_produced(c, i);
		uint64_t elem = produced ? elem_next(&el) : 0; /* this call's element */

		fetch_ahead(c, i, ahead);

		if (it->parent < 0) {
			cl->parent = -1;
			cl->link = TFD_LINK_NONE;
			continue;
		}
		if (cl->parent >= 0) { /* the enclosing iterator call */
			cl->link = TFD_LINK_SYNC;
			continue;
		}
		if (produced) {
			const struct iter *p = &c->iters.v[it->parent];

			/* the run of slots holds other elements too; better()
			 * orders the candidates fully, so the walk's order does
			 * not matter */
			for (size_t k = cons_bucket(c, p->id, elem); c->cons_call[k] >= 0;
			     k = cons_next(c, k)) {
				int cc = c->cons_call[k];

				if (c->cons_elem[k] != elem ||
				    call_iter(c, (size_t)cc) != it->parent)
					continue;
				if (better(c, s0, e0, cc, best))
					best = cc;
			}
			if (best >= 0) {
				cl->parent = best;
				cl->link = TFD_LINK_PRODUCE;
				continue;
			}
		}
		cl->link = LINK_PENDING;
		pending++;
	}
	return pending;
}

/* 3 and 4: time overlap with a call of the parent iterator, whose calls
 * are sorted by start, so only those starting in [s - maxdur, e] qualify. */
static void link_overlap(struct host_ctx *c)
{
	for (size_t i = 0; i < c->calls.n; i++) {
		struct call *cl = &c->calls.v[i];
		const struct iter *p;
		const int *pc;
		int64_t s0 = call_start(c, i), e0 = call_end(c, i);
		size_t lo = 0, hi;
		int best = -1;

		if (cl->link != LINK_PENDING)
			continue;
		p = &c->iters.v[c->iters.v[call_iter(c, i)].parent];
		pc = c->icalls + p->call_off;
		hi = p->ncalls;
		while (lo < hi) { /* first call starting after e0 */
			size_t mid = lo + (hi - lo) / 2;

			if (call_start(c, (size_t)pc[mid]) <= e0)
				lo = mid + 1;
			else
				hi = mid;
		}
		while (lo-- > 0) {
			int cc = pc[lo];

			if (call_start(c, (size_t)cc) < s0 - p->max_dur)
				break;
			if (overlap(c, s0, e0, cc) > 0 && better(c, s0, e0, cc, best))
				best = cc;
		}
		cl->parent = best;
		cl->link = best >= 0 ? TFD_LINK_OVERLAP : TFD_LINK_NONE;
	}
}

void tfd_link_calls(struct host_ctx *c)
{
	size_t pending = link_direct(c);

	/* the consumer index goes before the call lists are made: the two
	 * are not held at once (a tf.data-heavy host's peak), and most hosts
	 * with Produce/Consume events need no lists */
	tfd_graph_release_consumers(c);
	if (pending) {
		tfd_graph_list_calls(c);
		link_overlap(c);
	}
	/* the pipelines need each call's iterator, not each iterator's calls */
	tfd_graph_release_call_lists(c);
}
