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

static int64_t overlap(const struct tfd_event *a, const struct tfd_event *b)
{
	int64_t s = a->start_ns > b->start_ns ? a->start_ns : b->start_ns;
	int64_t ea = a->start_ns + a->dur_ns, eb = b->start_ns + b->dur_ns;
	int64_t e = ea < eb ? ea : eb;

	return e > s ? e - s : 0;
}

/* Better parent candidate: more overlap, then earlier start, then lower index. */
static int better(const struct host_ctx *c, const struct tfd_event *child, int cand, int best)
{
	int64_t oc, ob;

	if (best < 0)
		return 1;
	const struct tfd_event *ec = call_ev(c, &c->calls.v[cand]);
	const struct tfd_event *eb = call_ev(c, &c->calls.v[best]);

	oc = overlap(child, ec);
	ob = overlap(child, eb);
	if (oc != ob)
		return oc > ob;
	if (ec->start_ns != eb->start_ns)
		return ec->start_ns < eb->start_ns;
	return cand < best;
}

void tfd_link_calls(struct host_ctx *c)
{
	for (size_t i = 0; i < c->calls.n; i++) {
		struct call *cl = &c->calls.v[i];
		const struct iter *it = &c->iters.v[cl->iter];
		const struct tfd_event *ev = call_ev(c, cl);
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
			uint64_t elem = call_produce(c, i)->element_id;

			/* a bucket holds other elements too; better() orders the
			 * candidates fully, so the walk's order does not matter */
			for (int k = c->cons_head[cons_bucket(c, p->id, elem)]; k >= 0;
			     k = c->cons_next.v[k]) {
				int cc = c->cons_call.v[k];

				if (c->cons_elem.v[k] != elem || c->calls.v[cc].iter != it->parent)
					continue;
				if (better(c, ev, cc, best))
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
			int64_t s0 = ev->start_ns, e0 = s0 + ev->dur_ns;
			const int *pc = c->icalls + p->call_off;
			size_t lo = 0, hi = p->ncalls;

			while (lo < hi) { /* first call starting after e0 */
				size_t mid = lo + (hi - lo) / 2;

				if (call_ev(c, &c->calls.v[pc[mid]])->start_ns <= e0)
					lo = mid + 1;
				else
					hi = mid;
			}
			while (lo-- > 0) {
				int cc = pc[lo];
				const struct tfd_event *ce = call_ev(c, &c->calls.v[cc]);

				if (ce->start_ns < s0 - p->max_dur)
					break;
				if (overlap(ev, ce) > 0 && better(c, ev, cc, best))
					best = cc;
			}
		}
		cl->parent = best;
		cl->link = best >= 0 ? TFD_LINK_OVERLAP : TFD_LINK_NONE;
	}
}
