/* fold.c - a pipeline's sums folded one group of calls at a time and
 * checked against the pipeline pass's (TFDOCTOR_FOLD_CHECK=1; see
 * docs/performance.md, "Calls held in time order").
 *
 * The pipeline pass keeps every call until its sums are made. A reader
 * that walked a host in time order could hold only the calls whose root
 * call has not ended: each call's group is the top of its chain of parents
 * (a root call, or a call that ran ahead untaken), and everything the
 * pass sums of a call - its stage's calls, total and self time, the
 * analyzed root calls' blocking time, the blocking edges and the calls
 * that first show each, the capacity window's sums and (stage, thread)
 * pairs, the slowest root call's own bottleneck - depends only on its
 * group. Here each group gets a call tree of its own (its calls in
 * today's order, the same self time and attribution code), its sums are
 * added, and the totals are compared with aggregate()'s: what a streaming
 * pass would fold, proven equal on the calls as linked today, before any
 * such pass exists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline_impl.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/vec.h"

struct fold {
	const struct pbuild *b;
	struct tfd_stream_isum *s; /* per stage (first: a host call) */
	struct imap edges, pairs;  /* key -> index in e / w */
	tfd_stream_firsts e, w;	   /* (first: a local call) */
	/* the group being folded: its calls (local indices, ascending) */
	const int *mem;
	bool selected, slowest;
};

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int stage_of(const struct pbuild *b, size_t k)
{
	const struct host_ctx *c = b->c;

	return c->iters.v[call_iter(c, (size_t)host_call(b, k))].stage;
}

/* attribute()'s hand-out: node is the group's index of a call. */
static void add_blk(void *ctx, int node, int64_t ns)
{
	struct fold *f = ctx;
	size_t k = (size_t)f->mem[node];
	int si, par;

	if (ns <= 0)
		return;
	si = stage_of(f->b, k);
	if (f->selected) {
		f->s[si].blk_ns = sat_add(f->s[si].blk_ns, ns);
		f->s[si].blk_calls++;
		if ((par = parent_of(f->b, k)) >= 0)
			tfd_first_of(&f->edges, &f->e,
				     (uint64_t)(uint32_t)stage_of(f->b, (size_t)par) << 32 |
					 (uint32_t)si,
				     (int)k);
	}
	if (f->slowest)
		f->s[si].slow_blk_ns = sat_add(f->s[si].slow_blk_ns, ns);
}

/* One group: its calls mem[0..m) (ascending), whose top is root call
 * `rank` (-1: none) of the pipeline; near[i]: the pass finds that top. */
static void fold_group(struct fold *f, const int *mem, const bool *near, size_t m, int rank,
		       int slowest, bool has_window, int64_t t0, int64_t t1)
{
	const struct pbuild *b = f->b;
	const struct host_ctx *c = b->c;
	int64_t *st = xmalloc(m * sizeof(*st)), *en = xmalloc(m * sizeof(*en));
	int *par = xmalloc(m * sizeof(*par)), root = -1;
	struct tfd_tree t;

	for (size_t i = 0; i < m; i++) {
		int p = parent_of(b, (size_t)mem[i]);
		const int *at = p >= 0 ? bsearch(&p, mem, m, sizeof(*mem), int_cmp) : NULL;

		st[i] = tfd_times_start(&b->tm, (size_t)mem[i]);
		en[i] = tfd_times_end(&b->tm, (size_t)mem[i]);
		par[i] = at ? (int)(at - mem) : -1;
		if (rank >= 0 && mem[i] == b->roots.v[rank])
			root = (int)i;
	}
	tfd_tree_build(&t, m, st, en, par);
	for (size_t i = 0; i < m; i++) {
		size_t k = (size_t)mem[i];
		int hk = host_call(b, k), iter = call_iter(c, (size_t)hk), si = stage_of(b, k);
		struct tfd_stream_isum *s = &f->s[si];
		int64_t d = en[i] - st[i], self = tfd_tree_self(&t, (int)i);

		s->calls++;
		s->total_ns = sat_add(s->total_ns, d);
		s->self_ns = sat_add(s->self_ns, self);
		if (iter != b->root_iter)
			s->links[c->calls.v[hk].link]++;
		if (s->first < 0 || hk < s->first)
			s->first = hk;
		if (rank >= 0 && near[i] && b->selected[rank]) {
			s->calls_an++;
			s->total_an_ns = sat_add(s->total_an_ns, d);
			s->self_an_ns = sat_add(s->self_an_ns, self);
		}
		if (has_window && st[i] >= t0 && st[i] < t1) {
			s->win_calls++;
			s->win_self_ns = sat_add(s->win_self_ns, self);
			tfd_first_of(&f->pairs, &f->w,
				     (uint64_t)(uint32_t)si << 32 | call_thread(c, (size_t)hk),
				     (int)k);
		}
	}
	if (root >= 0) {
		f->mem = mem;
		f->selected = b->selected[rank];
		f->slowest = rank == slowest;
		tfd_tree_attribute_to(&t, root, NULL, add_blk, f);
	}
	tfd_tree_release(&t);
	free(st);
	free(en);
	free(par);
}

static int first_cmp(const void *a, const void *b)
{
	const struct tfd_stream_first *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

const char *tfd_stage_sums_differ(const struct pbuild *b, size_t si,
				  const struct tfd_stream_isum *z)
{
	const struct tfd_stage *s = &b->sb.stages.v[si];

	if (z->calls != s->calls_all || z->total_ns != s->total_all_ns ||
	    z->self_ns != s->self_all_ns)
		return "a stage's calls, total or self time";
	if (z->calls_an != s->calls || z->total_an_ns != s->total_ns || z->self_an_ns != s->self_ns)
		return "a stage's analyzed calls, total or self time";
	if (z->blk_ns != s->blocking_ns || z->blk_calls != s->blocking_calls)
		return "a stage's blocking time";
	if (memcmp(z->links, s->links, sizeof(z->links)) != 0)
		return "a stage's links";
	if (z->calls && s->sample != b->c->iters.v[call_iter(b->c, (size_t)z->first)].sample)
		return "a stage's sample call";
	if (z->win_calls != b->win[si].calls || z->win_self_ns != b->win[si].self_ns)
		return "a stage's capacity window sums";
	return NULL;
}

/* The first difference between the fold's sums and the pass's, or NULL. */
static const char *differs(const struct fold *f, size_t ns, struct tfd_pipeline *p)
{
	const struct pbuild *b = f->b;
	int64_t best = -1;
	int slow = -1;

	for (size_t si = 0; si < ns; si++) {
		const char *what = tfd_stage_sums_differ(b, si, &f->s[si]);

		if (what)
			return what;
		if (f->s[si].slow_blk_ns > best) {
			best = f->s[si].slow_blk_ns;
			slow = (int)si;
		}
	}
	if ((best > 0 ? slow : -1) != p->slowest_bottleneck)
		return "the slowest root call's bottleneck";
	if (f->e.n != b->ef.n || f->w.n != b->win_threads.n)
		return "the number of blocking edges or window pairs";
	for (size_t i = 0; i < f->e.n; i++)
		if (f->e.v[i].key != ((uint64_t)(uint32_t)b->ef.v[i] << 32 | (uint32_t)b->et.v[i]))
			return "the blocking edges or their order";
	for (size_t i = 0; i < f->w.n; i++)
		if (f->w.v[i].key != b->win_threads.v[i])
			return "the window's (stage, thread) pairs or their order";
	return NULL;
}

void tfd_fold_check(const struct pbuild *b)
{
	size_t n = b->n, nr = b->roots.n, ns = b->sb.stages.n, ngroups = 0, most = 0;
	int *top = xmalloc((n + 1) * sizeof(*top)), *mem = xmalloc((n + 1) * sizeof(*mem));
	int *rank_of = xmalloc((n + 1) * sizeof(*rank_of)), slowest;
	size_t *at = xcalloc(n + 2, sizeof(*at));
	/* near: per call; nearm: in mem's order */
	bool *near = xmalloc((n + 1) * sizeof(*near)), *nearm = xmalloc((n + 1) * sizeof(*nearm));
	bool has_window;
	struct fold f = {.b = b};
	struct tfd_root_spans rs;
	int64_t t0 = 0, t1 = 0;
	const char *what;

	f.s = xcalloc(ns + 1, sizeof(*f.s));
	for (size_t si = 0; si <= ns; si++)
		f.s[si].first = -1;
	for (size_t k = 0; k < n; k++)
		rank_of[k] = -1;
	for (size_t r = 0; r < nr; r++)
		rank_of[b->roots.v[r]] = (int)r;
	slowest = tfd_root_slowest(b->durs, nr);
	rs = pbuild_root_spans(b);
	has_window = tfd_capacity_window(&rs, b->cap_warmup, &t0, &t1);
	/* the groups, each's calls ascending (a counting sort by top) */
	for (size_t k = 0; k < n; k++) {
		top[k] = pbuild_top(b, k, &near[k]);
		at[top[k] + 1]++;
	}
	for (size_t k = 0; k < n; k++)
		at[k + 1] += at[k];
	for (size_t k = 0; k < n; k++) {
		nearm[at[top[k]]] = near[k];
		mem[at[top[k]]++] = (int)k;
	}
	for (size_t k = n; k > 0; k--)
		at[k] = at[k - 1];
	at[0] = 0;
	for (size_t g = 0; g < n; g++) {
		size_t m = at[g + 1] - at[g];

		if (!m)
			continue;
		fold_group(&f, mem + at[g], nearm + at[g], m, rank_of[g], slowest, has_window, t0,
			   t1);
		ngroups++;
		most = m > most ? m : most;
	}
	if (f.e.n > 1)
		qsort(f.e.v, f.e.n, sizeof(*f.e.v), first_cmp);
	if (f.w.n > 1)
		qsort(f.w.v, f.w.n, sizeof(*f.w.v), first_cmp);
	what = differs(&f, ns, b->p);
	fprintf(stderr,
		"tfdoctor: fold: pipeline %llu: %zu calls in %zu groups (the largest %zu): %s%s\n",
		(unsigned long long)b->p->root_id, n, ngroups, most,
		what ? "differs: " : "the same sums", what ? what : "");
	imap_free(&f.edges);
	imap_free(&f.pairs);
	vec_free(&f.e);
	vec_free(&f.w);
	free(f.s);
	free(top);
	free(mem);
	free(rank_of);
	free(at);
	free(near);
	free(nearm);
}
