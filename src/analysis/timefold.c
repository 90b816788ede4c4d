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
#include "timelink_impl.h"

void tfd_tlf_begin(struct tl_fold *f, size_t n, size_t niters)
{
	memset(f, 0, sizeof(*f));
	f->slot = xmalloc((n + 1) * sizeof(*f->slot));
	for (size_t k = 0; k < n; k++)
		f->slot[k] = -1;
	f->s = xcalloc(niters + 1, sizeof(*f->s));
	for (size_t i = 0; i <= niters; i++)
		f->s[i].first = -1;
	f->niters = niters;
}

void tfd_tlf_free(struct tl_fold *f)
{
	free(f->slot);
	free(f->s);
	vec_free(&f->recs);
	vec_free(&f->spare);
	vec_free(&f->mem);
	vec_free(&f->st);
	vec_free(&f->en);
	vec_free(&f->par);
	memset(f, 0, sizeof(*f));
}

void tfd_tlf_make(struct tl_fold *f, int k, int64_t start, int64_t end, int iter)
{
	struct tl_rec r = {start, end, k, iter, -1, -1, 0};
	int s;

	if (f->spare.n) {
		s = f->spare.v[--f->spare.n];
		f->recs.v[s] = r;
	} else {
		s = (int)f->recs.n;
		vec_push(&f->recs, r);
	}
	f->slot[k] = s;
	if (++f->held > f->most_held)
		f->most_held = f->held;
}

void tfd_tlf_settle(struct tl_fold *f, int k, int parent, unsigned link)
{
	if (f->slot[k] < 0)
		return; /* (folded already: counted late by the groups) */
	f->recs.v[f->slot[k]].parent = parent;
	f->recs.v[f->slot[k]].link = (unsigned char)link;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* v ascending: by insertion when short (a group's list is its top, then
 * each member's subtree as it joined: runs in order) */
static void sort_calls(int *v, size_t n)
{
	if (n > 96) {
		qsort(v, n, sizeof(*v), int_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		int x = v[i];
		size_t j = i;

		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* attribute's hand-out: node is the group's index of a call */
static void add_blk(void *ctx, int node, int64_t ns)
{
	struct tl_fold *f = ctx;
	const struct tl_rec *r = &f->recs.v[f->slot[f->mem.v[node]]];

	if (ns > 0)
		f->s[r->iter].blocking_ns = sat_add(f->s[r->iter].blocking_ns, ns);
}

void tfd_tlf_fold(struct tl *t, int rep)
{
	struct tl_fold *f = &t->f;
	const struct tl_groups *g = &t->g;
	size_t m = 0;
	int root = -1;
	struct tfd_tree tree;

	f->mem.n = 0;
	for (int k = rep; k >= 0; k = g->next[k]) {
		if (f->slot[k] < 0) {
			f->lost++; /* a member folded before: the sums are off */
			return;
		}
		vec_push(&f->mem, k);
	}
	m = f->mem.n;
	sort_calls(f->mem.v, m);
	for (size_t i = 0; i < m; i++)
		f->recs.v[f->slot[f->mem.v[i]]].local = (int)i;
	f->st.n = f->en.n = f->par.n = 0;
	for (size_t i = 0; i < m; i++) {
		const struct tl_rec *r = &f->recs.v[f->slot[f->mem.v[i]]];

		/* (a settled parent is a member: the group is its chain's) */
		vec_push(&f->st, r->start);
		vec_push(&f->en, r->end);
		vec_push(&f->par, r->parent >= 0 ? f->recs.v[f->slot[r->parent]].local : -1);
		/* (the group's top: a root iterator's call hands its time out) */
		if (f->mem.v[i] == rep && r->parent < 0 && t->pre.iters.v[r->iter].parent < 0)
			root = (int)i;
	}
	tfd_tree_build(&tree, m, f->st.v, f->en.v, f->par.v);
	for (size_t i = 0; i < m; i++) {
		const struct tl_rec *r = &f->recs.v[f->slot[f->mem.v[i]]];
		struct tl_isum *s = &f->s[r->iter];

		s->calls++;
		s->total_ns = sat_add(s->total_ns, r->end - r->start);
		s->self_ns = sat_add(s->self_ns, tfd_tree_self(&tree, (int)i));
		s->links[r->link]++;
		if (s->first < 0 || r->call < s->first)
			s->first = r->call;
	}
	if (root >= 0)
		tfd_tree_attribute_to(&tree, root, NULL, add_blk, f);
	tfd_tree_release(&tree);
	for (size_t i = 0; i < m; i++) {
		vec_push(&f->spare, f->slot[f->mem.v[i]]);
		f->slot[f->mem.v[i]] = -1;
	}
	f->held -= m;
	f->folded++;
}

/* The reference: one tree over every call of the host, linked by the link
 * pass; its sums per iterator, as the fold makes them. */
struct ref {
	const struct host_ctx *c;
	struct tl_isum *s;
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

	if (f->lost)
		what = "a group folded twice";
	else if (f->held)
		what = "calls held at the end";
	for (size_t i = 0; i <= f->niters; i++)
		r.s[i].first = -1;
	tfd_tree_build_scan(&tree, n, &tm, c->calls.v, &c->cpair, c->pairs.v, true);
	for (size_t k = 0; k < n; k++) {
		int it = call_iter(c, k);
		struct tl_isum *s = &r.s[it];

		s->calls++;
		s->total_ns = sat_add(s->total_ns, call_end(c, k) - call_start(c, k));
		s->self_ns = sat_add(s->self_ns, tfd_tree_self(&tree, (int)k));
		s->links[c->calls.v[k].link]++;
		if (s->first < 0)
			s->first = (int)k;
	}
	for (size_t k = 0; k < n; k++)
		if (c->calls.v[k].parent < 0 && c->iters.v[call_iter(c, k)].parent < 0)
			tfd_tree_attribute_to(&tree, (int)k, NULL, ref_blk, &r);
	tfd_tree_release(&tree);
	for (size_t i = 0; i < f->niters && !what; i++) {
		const struct tl_isum *a = &f->s[i], *b = &r.s[i];

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
