/* graph.c - iterator graphs per host: iterators, parents, roots, calls,
 * stages and the pipelines they form (see graph.h).
 *
 * Iterators are keyed by their `id` stat (full 64-bit pattern). Real
 * captures also hold iterators without an id (MemoryCacheImpl has id 0) or
 * whose parent_id names no captured iterator; their parent is found by long
 * name instead (the long name minus its last component). A cycle of parent
 * ids is an error.
 */
#include "tfd/graph.h"
#include "tfd/err.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_iters.h"

/* ---- names ------------------------------------------------------------- */

/* Whether the component of s that ends at s[at] (its "[N]" follows) is a
 * dataset with distinct inputs (TFD_FAM_MULTI_INPUT). */
static bool distinct_inputs(const char *s, size_t at)
{
	size_t b = at;
	char name[128], fam[128];

	while (b > 0 && !(s[b - 1] == ':' && b >= 2 && s[b - 2] == ':'))
		b--;
	if (at - b == 0 || at - b >= sizeof(name))
		return false;
	memcpy(name, s + b, at - b);
	name[at - b] = '\0';
	tfd_iter_family(name, fam, sizeof(fam));
	return tfd_family_has(fam, TFD_FAM_MULTI_INPUT);
}

/* Long name less the "[N]" indices that number instances (interleave's
 * inputs, repeat's epochs) and the "/_N" shard numbers of a saved
 * dataset's readers (SnapshotDatasetReader/_3: one reader per shard, the
 * inputs of one interleave): the stage key. The input index of a dataset
 * with distinct inputs (Zip[1], Concatenate[0], DirectedInterleave[1])
 * stays: each input is its own stage. */
char *tfd_iter_stage_path(const char *s)
{
	size_t n = strlen(s), j = 0;
	char *out = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '/' && i + 2 < n && s[i + 1] == '_') {
			size_t k = i + 2;

			while (k < n && s[k] >= '0' && s[k] <= '9')
				k++;
			if (k > i + 2 &&
			    (k == n || (s[k] == ':' && k + 1 < n && s[k + 1] == ':'))) {
				i = k - 1;
				continue;
			}
		}
		if (s[i] == '[') {
			size_t k = i + 1;

			while (k < n && s[k] >= '0' && s[k] <= '9')
				k++;
			if (k < n && s[k] == ']' && k > i + 1 && !distinct_inputs(s, i)) {
				i = k;
				continue;
			}
		}
		out[j++] = s[i];
	}
	out[j] = '\0';
	return out;
}

/* Long name of the parent: drop the last component, then a trailing "[N]". */
static char *parent_long_name(const char *s)
{
	const char *last = tfd_iter_short(s);
	size_t n;
	char *out;

	if (last == s)
		return NULL;
	n = (size_t)(last - s) - 2;
	out = xmalloc(n + 1);
	memcpy(out, s, n);
	out[n] = '\0';
	if (n && out[n - 1] == ']') {
		char *b = strrchr(out, '[');

		if (b)
			*b = '\0';
	}
	return out;
}

/* ---- building the iterator table --------------------------------------- */

/* An open event on a thread's nesting stack: a copy, as a lean scan gives
 * back the pages of the events it has read. */
struct open_ev {
	int64_t start, end;
	uint64_t element_id;
	int call;     /* its call, -1 for a Produce event */
	bool element; /* a Produce event with an element_id */
};

/* Consumers wait in a ring before they are registered, their first slot
 * fetched ahead: the slots are far apart in a large capture, each touched
 * about once (a prefetch only: they are registered in the same order). */
#define CONS_LAG 16
struct pending_cons {
	unsigned n;
	struct {
		int call;
		uint64_t elem;
		size_t b, cap; /* its first slot in a table of cap slots */
	} ring[CONS_LAG];
};

/* The elements in 8 bytes from now on (one lies too far from the first). */
static void cons_widen(struct host_ctx *c)
{
	uint64_t *wide = xmalloc(c->cons_cap * sizeof(uint64_t));

	for (size_t j = 0; j < c->cons_cap; j++)
		wide[j] = c->cons_call[j] >= 0 ? cons_elem_at(c, j) : 0;
	free(c->cons_elem40);
	c->cons_elem40 = NULL;
	c->cons_elem = wide;
}

static void cons_put(struct host_ctx *c, int call, uint64_t elem, size_t b)
{
	if (!c->cons_based) {
		c->cons_base = elem;
		c->cons_based = true;
	}
	if (c->cons_elem40 && elem - c->cons_base + TFD_ELEM40_HALF >= 2 * TFD_ELEM40_HALF)
		cons_widen(c);
	while (c->cons_call[b] >= 0)
		b = cons_next(c, b);
	c->cons_call[b] = call;
	if (c->cons_elem40)
		tfd_start40_put(c->cons_elem40, b, elem - c->cons_base + TFD_ELEM40_HALF);
	else
		c->cons_elem[b] = elem;
	c->cons_n++;
}

/* A table of cap slots, empty (entries go in again on growth), its
 * elements in 5 bytes unless wide. */
static void cons_alloc(struct host_ctx *c, size_t cap, bool wide)
{
	c->cons_cap = cap;
	c->cons_n = 0;
	c->cons_call = xmalloc(cap * sizeof(int));
	c->cons_elem = wide ? xmalloc(cap * sizeof(uint64_t)) : NULL;
	c->cons_elem40 = wide ? NULL : xmalloc(5 * cap);
	for (size_t j = 0; j < cap; j++)
		c->cons_call[j] = -1;
}

/* Register a consumer call whose first slot was b when the table had cap
 * slots (it may have grown since). */
static void cons_register(struct host_ctx *c, int call, uint64_t elem, size_t b, size_t cap)
{
	if ((c->cons_n + 1) * 4 > c->cons_cap * 3) {
		/* more Consume events than the count let expect: twice the room */
		struct host_ctx old = *c;

		cons_alloc(c, 2 * old.cons_cap, old.cons_elem != NULL);
		for (size_t j = 0; j < old.cons_cap; j++) {
			int oc = old.cons_call[j];
			uint64_t e;

			if (oc < 0)
				continue;
			e = cons_elem_at(&old, j);
			cons_put(c, oc, e,
				 cons_bucket(c, c->iters.v[call_iter(c, (size_t)oc)].id, e));
		}
		free(old.cons_call);
		free(old.cons_elem);
		free(old.cons_elem40);
	}
	if (cap != c->cons_cap)
		b = cons_bucket(c, c->iters.v[call_iter(c, (size_t)call)].id, elem);
	cons_put(c, call, elem, b);
}

static void cons_later(struct host_ctx *c, struct pending_cons *pc, int call, uint64_t elem,
		       size_t b)
{
	unsigned k = pc->n++ % CONS_LAG;
	size_t cap = c->cons_cap; /* b's, before the oldest goes in (it may grow the table) */

	if (pc->n > CONS_LAG)
		cons_register(c, pc->ring[k].call, pc->ring[k].elem, pc->ring[k].b,
			      pc->ring[k].cap);
	pc->ring[k].call = call;
	pc->ring[k].elem = elem;
	pc->ring[k].b = b;
	pc->ring[k].cap = cap;
	__builtin_prefetch(&c->cons_call[b], 1);
	__builtin_prefetch(cons_elem_addr(c, b), 1);
}

static void cons_rest(struct host_ctx *c, struct pending_cons *pc)
{
	for (unsigned i = pc->n > CONS_LAG ? pc->n - CONS_LAG : 0; i < pc->n; i++)
		cons_register(c, pc->ring[i % CONS_LAG].call, pc->ring[i % CONS_LAG].elem,
			      pc->ring[i % CONS_LAG].b, pc->ring[i % CONS_LAG].cap);
	pc->n = 0;
}

/* The state of scan_threads() across a host's threads. */
struct scan_state {
	VEC(struct open_ev) stack;
	size_t nwords;	    /* of c->produced */
	size_t give_back;   /* (lean) bytes of read events given back at a time */
	uint64_t last_elem; /* of c->pelem */
	struct pending_cons pc;
	/* no call kept (tfd_graph_build_iters()): what the pass before a
	 * stream counts, and per iterator whether its long name is a root's
	 * (Iterator::X; -1 not yet known) */
	struct tfd_prepass *pp;
	root_names two;
};

/* The calls' tables, sized once from the host's counts. */
static void scan_alloc(struct host_ctx *c, struct scan_state *ss)
{
	const struct tfd_host *h = c->h;

	tfd_ptimes_init(&c->times, h->niterators + 1);
	/* one call per iterator event (fewer when some are async): the tables
	 * are sized once instead of doubling, which left up to half unused */
	vec_reserve_exact(&c->calls, h->niterators);
	c->cpair_cap = h->niterators + 1;
	c->cpair.w = 1;
	c->cpair.v = xmalloc(c->cpair_cap);
	if (h->nproduce) { /* else no call has a Produce event: no table */
		ss->nwords = h->niterators / 64 + 1;
		c->produced = xcalloc(ss->nwords, sizeof(uint64_t));
	}
	/* at most one consumer per Consume event, about half of the host's
	 * Produce/Consume events: room for those at a load of 3/4 */
	cons_alloc(c, 16 + h->nproduce / 2 * 4 / 3, false);
}

/* Call k runs inside a Produce of element id: remember it, as a varint
 * difference from the last one. */
static void mark_produced(struct host_ctx *c, struct scan_state *ss, size_t k, uint64_t id)
{
	if (k / 64 >= ss->nwords) { /* not from the count: grow */
		c->produced = xrealloc(c->produced, 2 * ss->nwords * sizeof(uint64_t));
		memset(c->produced + ss->nwords, 0, ss->nwords * sizeof(uint64_t));
		ss->nwords *= 2;
	}
	if (c->pelem_len + 10 > c->pelem_cap) {
		c->pelem_cap = c->pelem_cap < 4096 ? 4096 : c->pelem_cap + c->pelem_cap / 2;
		c->pelem = xrealloc(c->pelem, c->pelem_cap);
	}
	c->pelem_len = (size_t)(tfd_ev_put_varint(c->pelem + c->pelem_len,
						  tfd_ev_zig((int64_t)(id - ss->last_elem))) -
				c->pelem);
	ss->last_elem = id;
	c->produced[k / 64] |= (uint64_t)1 << (k % 64);
}

/* A call's parameters AUTOTUNE changes, when its parameters differ from
 * the call before. */
static void note_par(struct host_ctx *c, int i, const struct tfd_event *e)
{
	struct iter *it = &c->iters.v[i];
	const struct sig_memo *m = sig_facts(c, e);

	it->last_sig = e->sig;
	for (int w = 0; w < 3; w++) {
		double d = m->par[w];

		if (!(d > 0) || d == it->last_par[w])
			continue;
		it->last_par[w] = d;
		vec_push(&c->par, ((struct tfd_par_change){i, w, e->start_ns, d}));
	}
}

/* Call k's pair (k: the call just made), the array widened to its bytes
 * (or grown) first where it needs to be. */
static void put_pair(struct host_ctx *c, size_t k, uint32_t pair)
{
	unsigned w = pair < 256 ? 1 : pair < 65536 ? 2 : 4;

	if (w > c->cpair.w || k >= c->cpair_cap) {
		struct call_pairs to = {NULL, w > c->cpair.w ? w : c->cpair.w};
		size_t cap = k >= c->cpair_cap ? 2 * k + 64 : c->cpair_cap;

		to.v = xmalloc(cap * to.w);
		for (size_t i = 0; i < k; i++)
			call_pairs_put(&to, i, call_pairs_at(&c->cpair, i));
		free(c->cpair.v);
		c->cpair = to;
		c->cpair_cap = cap;
	}
	call_pairs_put(&c->cpair, k, pair);
}

/* An iterator event on thread t, inside top (or none): a call. */
static inline void add_call(struct host_ctx *c, struct scan_state *ss, const struct tfd_event *e,
			    const struct open_ev *top, size_t t)
{
	struct call cl;
	int i = iter_for_event(c, e);
	struct iter *it = &c->iters.v[i];

	new_pair(c, it, i, t);
	if (e->sig != it->last_sig)
		note_par(c, i, e);
	memset(&cl, 0, sizeof(cl));
	cl.parent = -1;
	if (top && top->call >= 0)
		cl.parent = top->call;
	else if (top && top->element && c->produced)
		mark_produced(c, ss, c->calls.n, top->element_id);
	vec_push(&c->calls, cl);
	put_pair(c, c->calls.n - 1, (uint32_t)it->pair);
	tfd_ptimes_push(&c->times, e->start_ns, e->dur_ns);
	iter_count_call(it, e);
	vec_push(&ss->stack, ((struct open_ev){e->start_ns, e->start_ns + e->dur_ns, 0,
					       (int)(c->calls.n - 1), false}));
}

/* An iterator event on thread t, no call kept: its iterator, its pair
 * with the thread and its parameters as add_call() makes them; what the
 * pass before a stream counts (its thread's calls, the iterator's first
 * call on the thread, a root iterator's call). */
static void count_call(struct host_ctx *c, struct scan_state *ss, const struct tfd_event *e,
		       size_t t)
{
	struct tfd_prepass *pp = ss->pp;
	/* (out of line: graph_lookup.c) */
	int i = tfd_graph_iter_of(c, e);
	struct iter *it = &c->iters.v[i];

	if (new_pair(c, it, i, t)) {
		vec_push(&pp->firsts,
			 ((struct tfd_first_call){pp->thread_calls[t], (uint32_t)t, i}));
		vec_push(&c->pair_calls, 0);
	}
	c->pair_calls.v[it->pair]++;
	if (e->sig != it->last_sig)
		note_par(c, i, e);
	iter_count_call(it, e);
	prepass_count(c, pp, &ss->two, i, e, (uint32_t)t);
}

static int par_cmp(const void *a, const void *b)
{
	const struct tfd_par_change *x = a, *y = b;

	if (x->iter != y->iter)
		return x->iter < y->iter ? -1 : 1;
	if (x->what != y->what)
		return x->what < y->what ? -1 : 1;
	return x->t_ns < y->t_ns ? -1 : x->t_ns > y->t_ns;
}

/* The first call of a loop inside a tf.function's own root: not its
 * input's; its options are (host_ctx.loop_root). */
static void note_loop_root(struct host_ctx *c, const struct tfd_event *e)
{
	if (!c->has_loop_root) {
		c->loop_root = *e;
		c->has_loop_root = true;
	}
}

/* One thread's iterator, Produce and Consume events, nesting on a stack. */
static void scan_thread(struct host_ctx *c, struct scan_state *ss, size_t t, bool lean)
{
	const struct tfd_host *h = c->h;
	const struct tfd_thread *th = &h->threads[t];
	/* (lean) pages of the events below went: nothing reads them again,
	 * and the array is freed once the thread is scanned (free() writes
	 * only at the block's ends) */
	const uint8_t *released = th->evbuf;
	struct tfd_ev_mcursor cur;
	struct tfd_event ev;

	ss->stack.n = 0;
	for (tfd_evm_begin(&cur, h, t); tfd_evm_next(&cur, &ev);) {
		const struct tfd_event *e = &ev;
		int64_t end = e->start_ns + e->dur_ns;
		const struct open_ev *top = NULL;

		/* every 256 KB read (64 KB on one core, where no other core's
		 * TLB is flushed): the calls' tables are full when the last
		 * thread's events go, and a megabyte of them left the peak of a
		 * tf.data-heavy capture here, 0.6 MB above the read's */
		if (lean && (size_t)(cur.pk.p - released) > ss->give_back)
			tfd_pages_release(&released, cur.pk.p, ss->give_back);
		if (e->kind != TFD_EV_ITERATOR && e->kind != TFD_EV_PRODUCE &&
		    e->kind != TFD_EV_CONSUME)
			continue;
		if (e->flags & TFD_EVF_ASYNC)
			continue;
		if (e->kind == TFD_EV_ITERATOR && e->sig->role == TFD_SIG_BARE_ITERATOR)
			continue;
		if (e->kind == TFD_EV_ITERATOR && e->sig->role == TFD_SIG_LOOP_ROOT) {
			note_loop_root(c, e);
			continue;
		}
		while (ss->stack.n && !(ss->stack.v[ss->stack.n - 1].start <= e->start_ns &&
					end <= ss->stack.v[ss->stack.n - 1].end))
			ss->stack.n--;
		if (ss->stack.n)
			top = &ss->stack.v[ss->stack.n - 1];
		if (e->kind == TFD_EV_ITERATOR) {
			add_call(c, ss, e, top, t);
		} else if (e->kind == TFD_EV_CONSUME) {
			if (top && top->call >= 0 && (e->flags & TFD_EVF_ELEMENT)) {
				/* register the consumer call under (its id, element) */
				size_t b =
				    cons_bucket(c, c->iters.v[call_iter(c, (size_t)top->call)].id,
						e->element_id);

				cons_later(c, &ss->pc, top->call, e->element_id, b);
			}
			/* Consume events are leaves */
		} else {
			vec_push(&ss->stack, ((struct open_ev){e->start_ns, end, e->element_id, -1,
							       (e->flags & TFD_EVF_ELEMENT) != 0}));
		}
	}
	tfd_evm_end(&cur);
}

/* Thread t's iterator calls, no call kept (tfd_graph_build_iters()). */
static void scan_thread_iters(struct host_ctx *c, struct scan_state *ss, size_t t)
{
	struct tfd_ev_mcursor cur;
	struct tfd_event e;

	for (tfd_evm_begin(&cur, c->h, t); tfd_evm_next(&cur, &e);) {
		if (e.kind != TFD_EV_ITERATOR || (e.flags & TFD_EVF_ASYNC))
			continue;
		if (e.sig->role == TFD_SIG_LOOP_ROOT)
			note_loop_root(c, &e);
		else if (e.sig->role != TFD_SIG_BARE_ITERATOR)
			count_call(c, ss, &e, t);
	}
	tfd_evm_end(&cur);
}

/* Nearest enclosing events on each thread (iterator, Produce, Consume only);
 * each call's times. lean: h itself, whose events go as they are read: the
 * calls' tables grow into their room. */
static void scan_threads(struct host_ctx *c, struct tfd_host *lean, struct tfd_prepass *pp)
{
	const struct tfd_host *h = c->h;
	struct scan_state ss;

	memset(&ss, 0, sizeof(ss));
	ss.give_back = tfd_cpu_count() > 1 ? (size_t)256 << 10 : (size_t)64 << 10;
	ss.pp = pp;
	if (!pp)
		scan_alloc(c, &ss);
	c->nmemo = 16;
	while (c->nmemo < SIG_MEMO && c->nmemo < h->niterators)
		c->nmemo *= 2;
	c->memo = xcalloc(c->nmemo, sizeof(*c->memo));
	for (size_t t = 0; t < h->nthreads; t++) {
		const struct tfd_thread *th = &h->threads[t];

		/* threads without the events nesting is about are skipped */
		if (!(th->kinds & (TFD_KIND_BIT(TFD_EV_ITERATOR) | TFD_KIND_BIT(TFD_EV_PRODUCE) |
				   TFD_KIND_BIT(TFD_EV_CONSUME))))
			;
		else if (pp)
			scan_thread_iters(c, &ss, t);
		else
			scan_thread(c, &ss, t, lean != NULL);
		if (lean) {
			free(lean->threads[t].evbuf);
			lean->threads[t].evbuf = NULL;
			lean->threads[t].evlen = 0;
			lean->threads[t].nevents = 0;
			lean->threads[t].nfile = 0;
			free(lean->threads[t].kbits);
			lean->threads[t].kbits = NULL;
			lean->threads[t].nkbits = 0;
			lean->threads[t].kinds = 0;
		}
	}
	cons_rest(c, &ss.pc);
	vec_free(&ss.stack);
	vec_free(&ss.two);
	free(c->memo);
	c->memo = NULL;
	if (c->par.n > 1)
		qsort(c->par.v, c->par.n, sizeof(*c->par.v), par_cmp);
	for (size_t i = 0; i < c->iters.n; i++)
		c->iters.v[i].sample = &c->samples.v[i];
}

static bool keep_kinds(const struct tfd_event *e, void *ctx)
{
	return (TFD_KIND_BIT(e->kind) & *(const uint32_t *)ctx) != 0;
}

void tfd_thread_shed(const struct tfd_host *h, struct tfd_thread *th, uint32_t keep)
{
	keep |= TFD_KIND_BIT(TFD_EV_ITERATOR);
	if (!(th->kinds & ~keep))
		return; /* nothing to drop */
	tfd_thread_filter(h, th, keep_kinds, &keep);
	th->kinds &= keep;
}

struct shed_job {
	struct tfd_host *h;
	uint32_t keep;
};

static bool shed_item(void *ctx, size_t worker, size_t i)
{
	struct shed_job *j = ctx;

	(void)worker;
	tfd_thread_shed(j->h, &j->h->threads[i], j->keep);
	return true;
}

/* Fewer events' bytes than this are shed on one thread. */
#define SHED_SPLIT_MIN ((size_t)1 << 20)

void tfd_host_shed(struct tfd_host *h, uint32_t keep)
{
	size_t bytes = 0, cores = tfd_cpu_count();

	if (!(keep & TFD_KIND_BIT(TFD_EV_FUNCTION)))
		h->nfunctions = 0;
	for (size_t t = 0; t < h->nthreads; t++)
		bytes += h->threads[t].evlen;
	if (cores > 1 && h->nthreads > 1 && bytes >= SHED_SPLIT_MIN) {
		/* each thread's events are its own: threads shed on the cores
		 * at once, the largest first */
		size_t *len = xmalloc(h->nthreads * sizeof(*len)), *order;
		struct shed_job j = {h, keep};

		for (size_t t = 0; t < h->nthreads; t++)
			len[t] = h->threads[t].evlen;
		order = tfd_pool_costliest_first(len, h->nthreads);
		tfd_pool_run(h->nthreads, cores, order, false, shed_item, &j);
		free(len);
		free(order);
		return;
	}
	for (size_t t = 0; t < h->nthreads; t++)
		tfd_thread_shed(h, &h->threads[t], keep);
}

char **tfd_graph_take_names(struct host_ctx *c, size_t *n)
{
	char **v = c->absent_names.v;

	*n = c->absent_names.n;
	memset(&c->absent_names, 0, sizeof(c->absent_names));
	return v;
}

struct tfd_event *tfd_graph_take_samples(struct host_ctx *c)
{
	struct tfd_event *v = c->samples.v;

	memset(&c->samples, 0, sizeof(c->samples));
	return v;
}

/* The parent of iterator i among the iterators with its parent_id (head
 * the last made; the PARENT_CANDIDATES last made, so that a hostile file
 * of one id under many parents stays linear): the one whose calls' span
 * overlaps i's most, else the nearest in time (an id reused by an
 * iterator made later). SIZE_MAX: none but i. */
#define PARENT_CANDIDATES 256
static size_t parent_by_id(const struct host_ctx *c, int head, size_t i)
{
	const struct iter *it = &c->iters.v[i];
	size_t best = SIZE_MAX;
	int64_t best_score = INT64_MIN;
	int seen = 0;

	for (int j = head; j >= 0 && seen++ < PARENT_CANDIDATES; j = c->iters.v[j].id_next) {
		const struct iter *p = &c->iters.v[j];
		int64_t lo = p->first_start > it->first_start ? p->first_start : it->first_start;
		int64_t hi = p->last_end < it->last_end ? p->last_end : it->last_end;

		if ((size_t)j == i)
			continue;
		/* the overlap; a gap counts as a negative one */
		if (best == SIZE_MAX || hi - lo > best_score) {
			best = (size_t)j;
			best_score = hi - lo;
		}
	}
	return best;
}

/* The iterator with long name pn (not i) and the most calls, -1 none. */
static int parent_by_name(const struct host_ctx *c, size_t i, const char *pn)
{
	size_t head;
	int best = -1;

	if (imap_get(&c->by_lname, text_key(pn), &head))
		for (int j = (int)head; j >= 0; j = c->lname_next.v[j])
			if ((size_t)j != i && strcmp(c->iters.v[j].long_name, pn) == 0 &&
			    (best < 0 || c->iters.v[j].ncalls > c->iters.v[best].ncalls))
				best = j;
	return best;
}

/* At most this many absent iterators a host, each at most this many parts
 * deep (real pipelines run to about 20): a hostile file's names, one
 * iterator each, do not make a copy of each of their prefixes. */
#define ABSENT_MAX 4096
#define ABSENT_MAX_PARTS 64

/* The absent parent of iterator i, long name pn (taken): its parent_id
 * is its id, and it spans i's calls (each of its own began before the
 * capture or ended after it). Its own parent is found as any iterator's
 * is, after. */
static int absent_parent(struct host_ctx *c, size_t i, char *pn)
{
	const struct iter *ch = &c->iters.v[i];
	struct iter it;
	size_t head;
	int idx;

	memset(&it, 0, sizeof(it));
	it.id = ch->has_parent ? ch->parent_id : 0;
	it.long_name = pn;
	it.parent = -1;
	it.stage = -1;
	it.pair = -1;
	it.id_next = -1;
	it.first_start = ch->first_start;
	it.last_end = ch->last_end;
	it.absent = true;
	vec_push(&c->absent_names, pn);
	vec_push(&c->iters, it);
	idx = (int)(c->iters.n - 1);
	if (it.id && !imap_get(&c->by_id, it.id, &head))
		imap_put(&c->by_id, it.id, (size_t)idx);
	vec_push(&c->lname_next, imap_get(&c->by_lname, text_key(pn), &head) ? (int)head : -1);
	imap_put(&c->by_lname, text_key(pn), (size_t)idx);
	return idx;
}

static enum tfd_status resolve_parents(struct host_ctx *c, size_t *by_name, size_t *orphans,
				       struct tfd_err *err)
{
	for (size_t i = 0; i < c->iters.n; i++) {
		struct iter *it = &c->iters.v[i];
		size_t idx;
		char *pn;

		if (tfd_iter_parts(it->long_name) <= 2)
			continue; /* a root: Iterator::X */
		if (it->has_parent && imap_get(&c->by_id, it->parent_id, &idx) &&
		    (idx = parent_by_id(c, (int)idx, i)) != SIZE_MAX) {
			it->parent = (int)idx;
			continue;
		}
		/* fall back to the long name */
		pn = parent_long_name(it->long_name);
		it->parent = -1;
		if (pn) {
			it->parent = parent_by_name(c, i, pn);
			if (it->parent >= 0 || c->absent_names.n >= ABSENT_MAX ||
			    tfd_iter_parts(pn) > ABSENT_MAX_PARTS) {
				free(pn);
			} else {
				/* (it moves as the table grows) */
				int j = absent_parent(c, i, pn);

				c->iters.v[i].parent = j;
				continue;
			}
		}
		if (it->parent >= 0 && !it->absent)
			(*by_name)++;
		else if (it->parent < 0)
			(*orphans)++;
	}
	/* cycles: follow parents with a three-colour walk */
	for (size_t i = 0; i < c->iters.n; i++) {
		int cur = (int)i;
		size_t steps = 0;

		while (cur >= 0 && c->iters.v[cur].state == 0) {
			c->iters.v[cur].state = 1;
			cur = c->iters.v[cur].parent;
			if (++steps > c->iters.n + 1)
				break;
		}
		if (cur >= 0 && c->iters.v[cur].state == 1) {
			return tfd_fail(err, TFD_E_FORMAT,
					"cycle in iterator parent ids (iterator %lld '%s')",
					(long long)c->iters.v[cur].id, c->iters.v[cur].long_name);
		}
		cur = (int)i;
		while (cur >= 0 && c->iters.v[cur].state == 1) {
			c->iters.v[cur].state = 2;
			cur = c->iters.v[cur].parent;
		}
	}
	return TFD_OK;
}

/* Root iterator of every iterator, once (parents form a forest: checked). */
static void compute_roots(struct host_ctx *c)
{
	VEC(int) path = {0};

	c->root = xmalloc((c->iters.n + 1) * sizeof(int));
	for (size_t i = 0; i < c->iters.n; i++)
		c->root[i] = -2; /* unknown */
	for (size_t i = 0; i < c->iters.n; i++) {
		int cur = (int)i, r;

		path.n = 0;
		while (cur >= 0 && c->root[cur] == -2) {
			vec_push(&path, cur);
			cur = c->iters.v[cur].parent;
		}
		if (cur >= 0)
			r = c->root[cur];
		else /* the top of the chain: a root if its name says so */
			r = tfd_iter_parts(c->iters.v[path.v[path.n - 1]].long_name) <= 2
				? path.v[path.n - 1]
				: -1;
		for (size_t k = 0; k < path.n; k++)
			c->root[path.v[k]] = r;
	}
	vec_free(&path);
}

enum tfd_status tfd_graph_build(struct host_ctx *c, const struct tfd_host *h, struct tfd_host *lean,
				size_t *by_name, size_t *orphans, struct tfd_err *err)
{
	memset(c, 0, sizeof(*c));
	c->h = h;
	if (h->nthreads >= TFD_GRAPH_MAX_THREADS)
		return tfd_fail(err, TFD_E_LIMIT, "more than %u threads",
				TFD_GRAPH_MAX_THREADS - 1);
	scan_threads(c, lean, NULL);
	return tfd_graph_resolve(c, by_name, orphans, err);
}

enum tfd_status tfd_graph_build_iters(struct host_ctx *c, const struct tfd_host *h,
				      struct tfd_prepass *pp, size_t *by_name, size_t *orphans,
				      struct tfd_err *err)
{
	memset(c, 0, sizeof(*c));
	memset(pp, 0, sizeof(*pp));
	c->h = h;
	if (h->nthreads >= TFD_GRAPH_MAX_THREADS)
		return tfd_fail(err, TFD_E_LIMIT, "more than %u threads",
				TFD_GRAPH_MAX_THREADS - 1);
	pp->thread_calls = xcalloc(h->nthreads + 1, sizeof(size_t));
	scan_threads(c, NULL, pp);
	return tfd_graph_resolve(c, by_name, orphans, err);
}

enum tfd_status tfd_graph_resolve(struct host_ctx *c, size_t *by_name, size_t *orphans,
				  struct tfd_err *err)
{
	if (resolve_parents(c, by_name, orphans, err))
		return err->status;
	compute_roots(c);
	return TFD_OK;
}

void tfd_graph_release_consumers(struct host_ctx *c)
{
	free(c->produced);
	c->produced = NULL;
	free(c->pelem);
	c->pelem = NULL;
	c->pelem_len = c->pelem_cap = 0;
	free(c->cons_call);
	free(c->cons_elem);
	free(c->cons_elem40);
	c->cons_call = NULL;
	c->cons_elem = NULL;
	c->cons_elem40 = NULL;
	c->cons_cap = c->cons_n = 0;
}

void tfd_graph_release(struct host_ctx *c)
{
	free(c->fns.buf);
	vec_free(&c->fns.waits);
	free(c->fns.work_by_thread);
	tfd_graph_release_call_lists(c);
	vec_free(&c->iters);
	vec_free(&c->calls);
	free(c->cpair.v);
	memset(&c->cpair, 0, sizeof(c->cpair));
	c->cpair_cap = 0;
	vec_free(&c->pairs);
	vec_free(&c->pair_calls);
	imap_free(&c->by_id);
	imap_free(&c->by_idp);
	imap_free(&c->by_name);
	imap_free(&c->by_lname);
	vec_free(&c->lname_next);
	free(c->root);
	tfd_ptimes_free(&c->times);
	vec_free(&c->samples);
	for (size_t i = 0; i < c->absent_names.n; i++)
		free(c->absent_names.v[i]);
	vec_free(&c->absent_names);
	vec_free(&c->par);
	tfd_graph_release_consumers(c);
}
