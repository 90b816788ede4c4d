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
#include "tfd/pool.h"

/* a call keeps how it was linked in 3 bits (struct call.link) */
_Static_assert(TFD_LINK__COUNT <= 8, "link bits");

int64_t tfd_link_overlap(const struct host_ctx *c, int64_t s, int64_t e, int k)
{
	return tfd_span_overlap(s, e, call_start(c, (size_t)k), call_end(c, (size_t)k));
}

bool tfd_link_better(const struct host_ctx *c, int64_t s, int64_t e, int cand, int best)
{
	if (best < 0)
		return true;
	return tfd_span_better(s, e, cand, call_start(c, (size_t)cand), call_end(c, (size_t)cand),
			       best, call_start(c, (size_t)best), call_end(c, (size_t)best));
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

/* A run of calls [k0, k1) linked by one worker: its cursor (at the element
 * of the first produced call from k0 on) and what it left pending. */
struct link_range {
	size_t k0, k1;
	struct elem_cursor el;
	size_t pending;
};

static void fetch_ahead(const struct host_ctx *c, size_t i, size_t end, struct elem_cursor ec[2])
{
	size_t b;
	int cc;

	/* only within the range: the calls past it are another worker's */
	if (i + FAR < end && by_element(c, i + FAR, &ec[0], &b)) {
		__builtin_prefetch(&c->cons_call[b]);
		__builtin_prefetch(cons_elem_addr(c, b));
	}
	if (i + NEAR < end && by_element(c, i + NEAR, &ec[1], &b) && (cc = c->cons_call[b]) >= 0) {
		__builtin_prefetch(&c->calls.v[cc]);
		__builtin_prefetch(c->times.rec + TFD_PT_REC * (size_t)cc);
	}
}

/* While ranges link on several threads, a call's link kind is not written:
 * it shares a word with the call's pair, which the other threads read of
 * the consumer calls. The parent says it instead, decoded once they are
 * done (link_settle()): a parent call index (produce), or one of these. */
#define PARENT_NONE (-1)    /* a call of a root iterator */
#define PARENT_PENDING (-2) /* left to the overlap pass */
#define PARENT_PRODUCED(k) (-3 - (k))
/* a call index is below 2^29 (graph.h): its code fits an int */
_Static_assert(TFD_MAX_EVENTS_PER_HOST < (1u << 30), "parent codes");

/* The links of calls [r->k0, r->k1) that need no time search (1, 2 and
 * roots), as parent codes; the calls left for the overlap pass are
 * counted. A call's link reads the consumers' iterators and times and its
 * own parent, never another call's parent: ranges link on several threads
 * at once. */
static void link_direct_range(struct host_ctx *c, struct link_range *r)
{
	struct elem_cursor el = r->el, ahead[2] = {r->el, r->el};

	/* the look-ahead cursors start past the calls before them */
	for (size_t k = r->k0; k < r->k1 && k < r->k0 + FAR; k++) {
		size_t b;

		by_element(c, k, &ahead[0], &b);
		if (k < r->k0 + NEAR)
			by_element(c, k, &ahead[1], &b);
	}
	for (size_t i = r->k0; i < r->k1; i++) {
		struct call *cl = &c->calls.v[i];
		const struct iter *it = &c->iters.v[call_iter(c, i)];
		int64_t s0 = call_start(c, i), e0 = call_end(c, i);
		int best = -1;
		bool produced = call_produced(c, i);
		uint64_t elem = produced ? elem_next(&el) : 0; /* this call's element */

		fetch_ahead(c, i, r->k1, ahead);

		if (it->parent < 0) {
			cl->parent = PARENT_NONE;
			continue;
		}
		if (cl->parent >= 0) /* the enclosing iterator call */
			continue;
		if (produced) {
			const struct iter *p = &c->iters.v[it->parent];

			/* the run of slots holds other elements too; tfd_link_better()
			 * orders the candidates fully, so the walk's order does
			 * not matter */
			for (size_t k = cons_bucket(c, p->id, elem); c->cons_call[k] >= 0;
			     k = cons_next(c, k)) {
				int cc = c->cons_call[k];

				if (cons_elem_at(c, k) != elem ||
				    call_iter(c, (size_t)cc) != it->parent)
					continue;
				if (tfd_link_better(c, s0, e0, cc, best))
					best = cc;
			}
			if (best >= 0) {
				cl->parent = PARENT_PRODUCED(best);
				continue;
			}
		}
		cl->parent = PARENT_PENDING;
		r->pending++;
	}
}

/* The parent codes of calls [r->k0, r->k1) as parents and link kinds. */
static void link_settle(struct host_ctx *c, const struct link_range *r)
{
	for (size_t i = r->k0; i < r->k1; i++) {
		struct call *cl = &c->calls.v[i];
		int p = cl->parent;

		if (p >= 0) {
			cl->link = TFD_LINK_SYNC;
		} else if (p == PARENT_NONE) {
			cl->link = TFD_LINK_NONE;
		} else if (p == PARENT_PENDING) {
			cl->parent = -1;
			cl->link = LINK_PENDING;
		} else {
			cl->parent = PARENT_PRODUCED(p); /* the code is its own inverse */
			cl->link = TFD_LINK_PRODUCE;
		}
	}
}

struct link_job {
	struct host_ctx *c;
	struct link_range *r;
	bool settle; /* the second run: the codes as links */
};

static bool link_item(void *ctx, size_t worker, size_t i)
{
	struct link_job *j = ctx;

	(void)worker;
	if (j->settle)
		link_settle(j->c, &j->r[i]);
	else
		link_direct_range(j->c, &j->r[i]);
	return true;
}

/* The produced calls among [k0, k1). */
static size_t produced_between(const struct host_ctx *c, size_t k0, size_t k1)
{
	size_t n = 0;

	if (!c->produced)
		return 0;
	for (; k0 < k1 && k0 % 64; k0++)
		n += call_produced(c, k0);
	for (; k0 + 64 <= k1; k0 += 64)
		n += (size_t)__builtin_popcountll(c->produced[k0 / 64]);
	for (; k0 < k1; k0++)
		n += call_produced(c, k0);
	return n;
}

/* Fewer calls than this are linked on one thread: a thread costs more
 * than it saves. */
#define LINK_SPLIT_MIN ((size_t)1 << 15)
/* Ranges of calls handed out to the cores in turn: a host's calls are in
 * thread order, and a producer thread's calls (each a lookup) cost several
 * times a consumer's (its enclosing call), so a range per core left one
 * core idle most of the pass. */
#define LINK_RANGES 32

/* Every call's direct link, the calls split into ranges linked on the
 * cores this process may use; the number of calls left for the overlap
 * pass, their link LINK_PENDING. */
static size_t link_direct(struct host_ctx *c)
{
	size_t n = c->calls.n, cores = tfd_cpu_count(), nr = 1, pending = 0;
	struct link_range r[LINK_RANGES];
	struct elem_cursor el = elem_begin(c);
	struct link_job job = {c, r, false};

	if (n >= LINK_SPLIT_MIN && cores > 1)
		nr = LINK_RANGES;
	for (size_t i = 0; i < nr; i++) {
		r[i] = (struct link_range){n * i / nr, n * (i + 1) / nr, el, 0};
		/* the next range's cursor: past this range's elements */
		for (size_t e = i + 1 < nr ? produced_between(c, r[i].k0, r[i].k1) : 0; e; e--)
			(void)elem_next(&el);
	}
	if (nr > 1) {
		tfd_pool_run(nr, cores, NULL, false, link_item, &job);
		job.settle = true;
		tfd_pool_run(nr, cores, NULL, false, link_item, &job);
	} else {
		link_direct_range(c, &r[0]);
		link_settle(c, &r[0]);
	}
	for (size_t i = 0; i < nr; i++)
		pending += r[i].pending;
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
			if (tfd_link_overlap(c, s0, e0, cc) > 0 &&
			    tfd_link_better(c, s0, e0, cc, best))
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
