/* link.c - call linking: every iterator call gets at most one parent call,
 * so calls form a forest whose roots are the root-iterator calls:
 *   1. sync: the innermost enclosing iterator call on the same thread;
 *   2. produce: the call is inside an XxxProduce event whose element_id
 *      matches an XxxConsume inside a call of the parent iterator;
 *   3. overlap: the call of the parent iterator (any thread) that overlaps
 *      it most (Chrome JSON drops Produce/Consume, older TF never had them);
 *   4. none: no parent call overlaps: the element was produced ahead.
 */
#include "../model/graph.h"
#include "passes.h"

/* The overlap of [s, e) with call k. */
static int64_t overlap(const struct host_ctx *c, int64_t s, int64_t e, int k)
{
	int64_t lo = c->cstart[k] > s ? c->cstart[k] : s;
	int64_t hi = c->cend[k] < e ? c->cend[k] : e;

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
	if (c->cstart[cand] != c->cstart[best])
		return c->cstart[cand] < c->cstart[best];
	return cand < best;
}

void tfd_link_calls(struct host_ctx *c)
{
	for (size_t i = 0; i < c->calls.n; i++) {
		struct call *cl = &c->calls.v[i];
		const struct iter *it = &c->iters.v[cl->iter];
		int64_t s0 = c->cstart[i], e0 = c->cend[i];
		int best = -1;

		if (it->parent < 0) {
			cl->parent = -1;
			cl->link = TFD_LINK_NONE;
			continue;
		}
		if (cl->parent >= 0) { /* the enclosing iterator call */
			cl->link = TFD_LINK_SYNC;
			continue;
		}
		if (c->produce.n && c->produce.v[i]) {
			const struct iter *p = &c->iters.v[it->parent];
			uint64_t elem = call_produce_elem(c, i);

			/* a bucket holds other elements too; better() orders the
			 * candidates fully, so the walk's order does not matter */
			for (int k = c->cons_head[cons_bucket(c, p->id, elem)]; k >= 0;
			     k = c->cons_next.v[k]) {
				int cc = c->cons_call.v[k];

				if (c->cons_elem.v[k] != elem || c->calls.v[cc].iter != it->parent)
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
		/* time overlap with a call of the parent iterator: its calls are
		 * sorted by start, so only those starting in [s - maxdur, e] qualify */
		{
			const struct iter *p = &c->iters.v[it->parent];
			const int *pc = c->icalls + p->call_off;
			size_t lo = 0, hi = p->ncalls;

			while (lo < hi) { /* first call starting after e0 */
				size_t mid = lo + (hi - lo) / 2;

				if (c->cstart[pc[mid]] <= e0)
					lo = mid + 1;
				else
					hi = mid;
			}
			while (lo-- > 0) {
				int cc = pc[lo];

				if (c->cstart[cc] < s0 - p->max_dur)
					break;
				if (overlap(c, s0, e0, cc) > 0 && better(c, s0, e0, cc, best))
					best = cc;
			}
		}
		cl->parent = best;
		cl->link = best >= 0 ? TFD_LINK_OVERLAP : TFD_LINK_NONE;
	}
}
