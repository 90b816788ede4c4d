/* timefold.c - each group of calls folded as the time-order check
 * (timelink.c) closes it, from the records the stream holds, and the sums
 * checked against the whole host's call tree (docs/performance.md,
 * "Groups folded as they close").
 *
 * fold.c showed that a pipeline's sums can be made one group at a time
 * from the calls as linked today. A stream has to make them from what it
 * holds: each call's record (its start, end, iterator, and, once settled,
 * its parent and link kind) kept from the call's start until its group
 * closes, then folded and given back. Here the records live in a pool of
 * slots reused as groups close (the most in use at once is what a stream
 * would hold), each closed group gets a call tree over its records alone
 * (its calls in today's order), and the self time, link kinds and, under a
 * root call, the blocking time the attribution hands out are summed per
 * iterator. At the stream's end the sums are compared with the same sums
 * over one tree of every call of the host, linked by the link pass. */
#include <stdlib.h>
#include <string.h>

#include "attrib.h"
#include "passes.h"
#include "tfd/err.h"
#include "tfd/satmath.h"
#include "tfd/select.h"
#include "timelink_impl.h"

/* ---- the live calls' slots (struct tl_cmap) ---- */

static size_t cm_home(const struct tl_cmap *m, int k)
{
	return (size_t)((uint32_t)k * 2654435761u) & (m->cap - 1);
}

static void cm_put(struct tl_cmap *m, int k, int v);

static void cm_grow(struct tl_cmap *m)
{
	int *key = m->key, *val = m->val;
	size_t ocap = m->cap;

	m->cap = ocap ? 2 * ocap : 64;
	m->key = xmalloc(m->cap * sizeof(*m->key));
	m->val = xmalloc(m->cap * sizeof(*m->val));
	for (size_t i = 0; i < m->cap; i++)
		m->key[i] = -1;
	m->n = 0;
	for (size_t i = 0; i < ocap; i++)
		if (key[i] >= 0)
			cm_put(m, key[i], val[i]);
	free(key);
	free(val);
}

/* k (not in m) -> v */
static void cm_put(struct tl_cmap *m, int k, int v)
{
	size_t j;

	if (2 * (m->n + 1) > m->cap)
		cm_grow(m);
	for (j = cm_home(m, k); m->key[j] >= 0; j = (j + 1) & (m->cap - 1))
		;
	m->key[j] = k;
	m->val[j] = v;
	m->n++;
}

static size_t cm_find(const struct tl_cmap *m, int k)
{
	if (!m->cap)
		return SIZE_MAX;
	for (size_t j = cm_home(m, k); m->key[j] >= 0; j = (j + 1) & (m->cap - 1))
		if (m->key[j] == k)
			return j;
	return SIZE_MAX;
}

/* k out of m: the entries after it that would not be found past the hole
 * move back into it */
static void cm_del(struct tl_cmap *m, int k)
{
	size_t mask = m->cap - 1, j = cm_find(m, k), i;

	if (j == SIZE_MAX)
		return;
	for (i = (j + 1) & mask; m->key[i] >= 0; i = (i + 1) & mask) {
		size_t h = cm_home(m, m->key[i]);

		/* (i's entry may move to j when its home is not in (j, i]) */
		if (((i - h) & mask) >= ((i - j) & mask)) {
			m->key[j] = m->key[i];
			m->val[j] = m->val[i];
			j = i;
		}
	}
	m->key[j] = -1;
	m->n--;
}

int tfd_tlf_slot(const struct tl_fold *f, int k)
{
	size_t j = cm_find(&f->slot, k);

	return j == SIZE_MAX ? -1 : f->slot.val[j];
}

void tfd_tlf_begin(struct tl_fold *f, size_t niters)
{
	memset(f, 0, sizeof(*f));
	f->s = xcalloc(niters + 1, sizeof(*f->s));
	for (size_t i = 0; i <= niters; i++)
		f->s[i].first = -1;
	f->niters = niters;
}

void tfd_tlf_free(struct tl_fold *f)
{
	free(f->slot.key);
	free(f->slot.val);
	free(f->s);
	vec_free(&f->recs);
	vec_free(&f->spare);
	vec_free(&f->mem);
	vec_free(&f->st);
	vec_free(&f->en);
	vec_free(&f->par);
	vec_free(&f->depth);
	vec_free(&f->top);
	vec_free(&f->order);
	imap_free(&f->edge_at);
	imap_free(&f->pair_at);
	vec_free(&f->edges);
	vec_free(&f->pairs);
	memset(f, 0, sizeof(*f));
}

int tfd_tlf_make(struct tl_fold *f, int k, int64_t start, int64_t end, int iter)
{
	struct tl_rec r = {.start = start,
			   .end = end,
			   .call = k,
			   .iter = iter,
			   .parent = -1,
			   .rank = -1,
			   .local = -1,
			   .wait = -1,
			   .takes = -1};
	int s;

	if (f->spare.n) {
		s = f->spare.v[--f->spare.n];
		r.ver = f->recs.v[s].ver + 1; /* (its last user's wake-ups: stale) */
		f->recs.v[s] = r;
	} else {
		s = (int)f->recs.n;
		vec_push(&f->recs, r);
	}
	cm_put(&f->slot, k, s);
	if (++f->held > f->most_held)
		f->most_held = f->held;
	return s;
}

/* slots v by their calls ascending: (call, slot) pairs sorted by
 * tfd_sort_u64() (insertion below 64: a group is mostly small), in f's
 * scratch */
static void sort_slots(struct tl_fold *f, int *v, size_t n)
{
	uint64_t *p;

	vec_reserve(&f->order, 2 * n);
	p = f->order.v;
	for (size_t i = 0; i < n; i++)
		p[i] = (uint64_t)(uint32_t)f->recs.v[v[i]].call << 32 | (uint32_t)v[i];
	tfd_sort_u64_with(p, n, p + n);
	for (size_t i = 0; i < n; i++)
		v[i] = (int)(uint32_t)p[i];
}

/* What a root call's attribution hands out goes to: its iterators'
 * blocking under every root call; under an analyzed one, their blocking
 * and the edges from their parents' iterators; under the slowest, its
 * own bottleneck's sums. */
struct blk_to {
	struct tl_fold *f;
	bool selected, slowest;
};

/* attribute's hand-out: node is the group's index of a call */
static void add_blk(void *ctx, int node, int64_t ns)
{
	struct blk_to *bt = ctx;
	struct tl_fold *f = bt->f;
	const struct tl_rec *r = &f->recs.v[f->mem.v[node]];
	struct tfd_stream_isum *s = &f->s[r->iter];

	if (ns <= 0)
		return;
	s->blocking_ns = sat_add(s->blocking_ns, ns);
	if (bt->selected) {
		s->blk_ns = sat_add(s->blk_ns, ns);
		s->blk_calls++;
		if (f->par.v[node] >= 0)
			tfd_first_of(&f->edge_at, &f->edges,
				     (uint64_t)(uint32_t)f->recs.v[f->mem.v[f->par.v[node]]].iter
					     << 32 |
					 (uint32_t)r->iter,
				     r->call);
	}
	if (bt->slowest)
		s->slow_blk_ns = sat_add(s->slow_blk_ns, ns);
}

/* Each call's top in its pipeline's tree (f->top) and how many parents
 * up it is (f->depth): each call's parents climbed once. */
static void depths(struct tl_fold *f, size_t m)
{
	f->depth.n = f->top.n = 0;
	for (size_t i = 0; i < m; i++) {
		vec_push(&f->depth, -1);
		vec_push(&f->top, -1);
	}
	for (size_t i = 0; i < m; i++) {
		int x = (int)i, d, top;
		size_t n0 = f->mem.n;

		/* (the path up to a call known, on the scratch after mem) */
		while (f->depth.v[x] < 0 && f->par.v[x] >= 0) {
			vec_push(&f->mem, x);
			x = f->par.v[x];
		}
		if (f->depth.v[x] < 0) {
			f->depth.v[x] = 0;
			f->top.v[x] = x;
		}
		d = f->depth.v[x];
		top = f->top.v[x];
		while (f->mem.n > n0) {
			x = f->mem.v[--f->mem.n];
			f->depth.v[x] = ++d;
			f->top.v[x] = top;
		}
	}
}

/* A folded call's takers (from j on, through cnext) out of their keys'
 * lists, the first to start (then the lowest call) kept as the key's gone
 * one (struct tl_key), their slots given back. */
static void drop_takers(struct tl *t, int j)
{
	while (j >= 0) {
		struct tl_taker *tk = &t->takers.v[j];
		struct tl_key *key = &t->keys.v[tk->key];
		int *at = &key->takers, next = tk->cnext;

		while (*at >= 0 && *at != j)
			at = &t->takers.v[*at].next;
		if (*at == j)
			*at = tk->next;
		if (key->gone < 0 || tk->s < key->gone_s ||
		    (tk->s == key->gone_s && tk->call < key->gone)) {
			key->gone = tk->call;
			key->gone_s = tk->s;
		}
		tk->next = t->spare_taker;
		t->spare_taker = j;
		j = next;
	}
}

/* Whether a call of iterator it is cut from its parent call, of iterator
 * pit, in its pipeline's call tree: a root iterator's call tops it, and a
 * parent of another pipeline is none (the pipeline pass's trees hold
 * their own calls alone: an iterator's id reused under another root links
 * a call into a call of another pipeline). */
static bool cut_from(const int *root, const struct host_ctx *pre, int it, int pit)
{
	return pre->iters.v[it].parent < 0 || root[it] != root[pit];
}

/* The group's m calls (f->mem, their times and parents in f->st, en and
 * par) summed: per call, and each root iterator's call's hand-out. */
static void sum_group(struct tl *t, size_t m)
{
	struct tl_fold *f = &t->f;
	struct tfd_tree tree;

	tfd_tree_build(&tree, m, f->st.v, f->en.v, f->par.v);
	depths(f, m);
	for (size_t i = 0; i < m; i++) {
		const struct tl_rec *r = &f->recs.v[f->mem.v[i]];
		struct tfd_stream_isum *s = &f->s[r->iter];
		int64_t d = r->end - r->start, self = tfd_tree_self(&tree, (int)i);
		int ri = t->pre->root[r->iter];
		const struct tl_roots *w = ri >= 0 ? &t->roots[ri] : NULL;
		/* its top in its pipeline's tree: an analyzed root call's calls
		 * within reach count (the pass climbs at most
		 * TFD_MAX_CALL_DEPTH + 5 parents) */
		const struct tl_rec *top = &f->recs.v[f->mem.v[f->top.v[i]]];

		s->calls++;
		s->total_ns = sat_add(s->total_ns, d);
		s->self_ns = sat_add(s->self_ns, self);
		s->links[r->link]++;
		if (s->first < 0 || r->call < s->first)
			s->first = r->call;
		if (top->rank >= 0 && t->roots[top->iter].sel[top->rank] &&
		    f->depth.v[i] <= TFD_MAX_CALL_DEPTH + 5) {
			s->calls_an++;
			s->total_an_ns = sat_add(s->total_an_ns, d);
			s->self_an_ns = sat_add(s->self_an_ns, self);
		}
		if (w && w->has_window && r->start >= w->t0 && r->start < w->t1) {
			s->win_calls++;
			s->win_self_ns = sat_add(s->win_self_ns, self);
			tfd_first_of(&f->pair_at, &f->pairs,
				     (uint64_t)(uint32_t)r->iter << 32 | r->thread, r->call);
		}
	}
	/* each root iterator's call hands its time out */
	for (size_t i = 0; i < m; i++) {
		const struct tl_rec *r = &f->recs.v[f->mem.v[i]];
		const struct tl_roots *tr = r->rank >= 0 ? &t->roots[r->iter] : NULL;
		struct blk_to bt = {f, tr && tr->sel[r->rank], tr && r->rank == tr->slowest};

		if (t->pre->iters.v[r->iter].parent < 0)
			tfd_tree_attribute_to(&tree, (int)i, NULL, add_blk, &bt);
	}
	tfd_tree_release(&tree);
}

bool tfd_tlf_fold(struct tl *t, int rep)
{
	struct tl_fold *f = &t->f;
	size_t m;
	bool whole = true;

	f->mem.n = 0;
	for (int s = rep; s >= 0; s = f->recs.v[s].next)
		vec_push(&f->mem, s);
	m = f->mem.n;
	sort_slots(f, f->mem.v, m);
	for (size_t i = 0; i < m; i++)
		f->recs.v[f->mem.v[i]].local = (int)i;
	f->st.n = f->en.n = f->par.n = 0;
	for (size_t i = 0; i < m && whole; i++) {
		const struct tl_rec *r = &f->recs.v[f->mem.v[i]];
		int ps = r->parent >= 0 ? tfd_tlf_slot(f, r->parent) : -1;

		/* (a settled parent is a member: the group is its chain's;
		 * one folded before leaves the sums off) */
		if (r->parent >= 0 && ps < 0)
			whole = false;
		vec_push(&f->st, r->start);
		vec_push(&f->en, r->end);
		vec_push(&f->par,
			 ps >= 0 && !cut_from(t->pre->root, t->pre, r->iter, f->recs.v[ps].iter)
			     ? f->recs.v[ps].local
			     : -1);
	}
	if (whole) {
		sum_group(t, m);
		f->folded++;
	} else {
		f->lost++;
	}
	for (size_t i = 0; i < m; i++) {
		const struct tl_rec *r = &f->recs.v[f->mem.v[i]];

		drop_takers(t, r->takes);
		cm_del(&f->slot, r->call);
		vec_push(&f->spare, f->mem.v[i]);
	}
	f->held -= m;
	return whole;
}

/* The reference: one tree over every call of the host, linked by the link
 * pass; its sums per iterator, as the fold makes them. */
struct ref {
	const struct host_ctx *c;
	struct tfd_stream_isum *s;
};

static void ref_blk(void *ctx, int node, int64_t ns)
{
	struct ref *r = ctx;
	int it = call_iter(r->c, (size_t)node);

	if (ns > 0)
		r->s[it].blocking_ns = sat_add(r->s[it].blocking_ns, ns);
}

const char *tfd_tlf_differs(const struct tl *t)
{
	const struct host_ctx *c = t->c;
	const struct tl_fold *f = &t->f;
	size_t n = c->calls.n;
	struct tfd_times tm = call_times(c);
	struct ref r = {c, xcalloc(f->niters + 1, sizeof(*r.s))};
	struct tfd_tree tree;
	const char *what = NULL;
	int64_t *st, *en;
	int *par;

	if (f->lost)
		what = "a call's parent folded before it";
	else if (f->held)
		what = "calls held at the end";
	for (size_t i = 0; i <= f->niters; i++)
		r.s[i].first = -1;
	/* (as the fold cuts them: cut_from()) */
	st = xmalloc((n + 1) * sizeof(*st));
	en = xmalloc((n + 1) * sizeof(*en));
	par = xmalloc((n + 1) * sizeof(*par));
	for (size_t k = 0; k < n; k++) {
		int p = c->calls.v[k].parent;

		st[k] = tfd_times_start(&tm, k);
		en[k] = tfd_times_end(&tm, k);
		par[k] = p >= 0 && !cut_from(c->root, c, call_iter(c, k), call_iter(c, (size_t)p))
			     ? p
			     : -1;
	}
	tfd_tree_build(&tree, n, st, en, par);
	for (size_t k = 0; k < n; k++) {
		int it = call_iter(c, k);
		struct tfd_stream_isum *s = &r.s[it];

		s->calls++;
		s->total_ns = sat_add(s->total_ns, call_end(c, k) - call_start(c, k));
		s->self_ns = sat_add(s->self_ns, tfd_tree_self(&tree, (int)k));
		s->links[c->calls.v[k].link]++;
		if (s->first < 0)
			s->first = (int)k;
	}
	for (size_t k = 0; k < n; k++)
		if (c->iters.v[call_iter(c, k)].parent < 0)
			tfd_tree_attribute_to(&tree, (int)k, NULL, ref_blk, &r);
	tfd_tree_release(&tree);
	free(st);
	free(en);
	free(par);
	for (size_t i = 0; i < f->niters && !what; i++) {
		const struct tfd_stream_isum *a = &f->s[i], *b = &r.s[i];

		if (a->calls != b->calls || a->total_ns != b->total_ns)
			what = "an iterator's calls or total time";
		else if (a->self_ns != b->self_ns)
			what = "an iterator's self time";
		else if (a->blocking_ns != b->blocking_ns)
			what = "an iterator's blocking time";
		else if (memcmp(a->links, b->links, sizeof(a->links)) != 0)
			what = "an iterator's links";
		else if (a->first != b->first)
			what = "an iterator's first call";
	}
	free(r.s);
	return what;
}

static int sfirst_cmp(const void *a, const void *b)
{
	const struct tfd_stream_first *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

struct tfd_stream_sums *tfd_tlf_take(struct tl *t)
{
	struct tl_fold *f = &t->f;
	struct tfd_stream_sums *ss = xcalloc(1, sizeof(*ss));

	ss->niters = f->niters;
	ss->s = f->s;
	f->s = NULL;
	ss->edges = f->edges;
	ss->pairs = f->pairs;
	memset(&f->edges, 0, sizeof(f->edges));
	memset(&f->pairs, 0, sizeof(f->pairs));
	if (ss->edges.n > 1)
		qsort(ss->edges.v, ss->edges.n, sizeof(*ss->edges.v), sfirst_cmp);
	if (ss->pairs.n > 1)
		qsort(ss->pairs.v, ss->pairs.n, sizeof(*ss->pairs.v), sfirst_cmp);
	ss->nwarmup = xcalloc(f->niters + 1, sizeof(*ss->nwarmup));
	ss->nroots = xcalloc(f->niters + 1, sizeof(*ss->nroots));
	ss->root_s = xcalloc(f->niters + 1, sizeof(*ss->root_s));
	ss->root_e = xcalloc(f->niters + 1, sizeof(*ss->root_e));
	for (size_t i = 0; t->roots && i < f->niters; i++) {
		ss->nwarmup[i] = t->roots[i].nwarmup;
		ss->nroots[i] = t->roots[i].n;
		ss->root_s[i] = t->roots[i].s;
		ss->root_e[i] = t->roots[i].e;
		t->roots[i].s = t->roots[i].e = NULL; /* (handed over) */
	}
	ss->roots = t->pp.roots;
	memset(&t->pp.roots, 0, sizeof(t->pp.roots));
	return ss;
}
