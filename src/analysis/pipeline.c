/* pipeline.c - one pipeline from its iterators and calls: stages, root-call
 * statistics and the steady-state selection, self and blocking time per
 * stage, then the bottleneck passes (bottleneck.c, capacity.c).
 *
 * Root calls: warm-up is the leading calls (at most 10 %) longer than twice
 * the median, e.g. the first GetNext that fills a shuffle buffer or opens
 * files; the analyzed calls are the steady-state ones slower than 50 us
 * (all of them when none is), or the one call of --rank.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"
#include "passes.h"
#include "pipeline_impl.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include "tfd/satmath.h"
#include "tfd/select.h"

const char *tfd_analysis_keep_string(struct analysis_priv *pv, const char *s)
{
	char *d = xstrdup(s);

	vec_push(&pv->strings, d);
	return d;
}

/* The local index of host call k, -1 if it is not one of the pipeline's
 * (pcalls ascend: a bucket's calls are in index order). */
static int local_of(const struct pbuild *b, int k)
{
	size_t lo = 0, hi = b->pcalls.n;

	if (b->identity)
		return k;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->pcalls.v[mid] < k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->pcalls.n && b->pcalls.v[lo] == k ? (int)lo : -1;
}

/* Whether a tree over the host's n calls keeps its lists of children (8
 * bytes a call, faster to read) or finds them where they are: the lists
 * unless they would take the process past its peak so far (an
 * iterator-dense host, where the calls are most of the memory). The
 * answer is the same; TFDOCTOR_CALL_TREE=lists or =scan picks one (the
 * tests compare them). */
static bool tree_lists(size_t n)
{
	const char *form = getenv("TFDOCTOR_CALL_TREE");

	if (form && strcmp(form, "lists") == 0)
		return true;
	if (form && strcmp(form, "scan") == 0)
		return false;
	return !tfd_pages_would_raise_peak(2 * n * sizeof(int));
}

/* Fewer calls than this are summed on one thread. */
#define AGG_SPLIT_MIN ((size_t)1 << 15)
/* Runs handed out to the cores in turn (a run's cost depends on its
 * threads' calls: see link.c). */
#define AGG_RUNS 16

/* The pipeline's calls among a bucket's, counted or listed in runs: run i
 * is the bucket's calls [i * n / nruns, (i + 1) * n / nruns). */
struct call_runs {
	const struct host_ctx *c;
	const struct bucket *bk;
	int root_iter;
	size_t nruns;
	size_t *n;	  /* per run: its calls of a stage (pass 0) */
	VEC(int) * roots; /* per run: its root calls (pass 1, every call the pipeline's) */
};

static bool count_run(void *ctx, size_t worker, size_t i)
{
	struct call_runs *cr = ctx;
	const struct host_ctx *c = cr->c;
	size_t k0 = cr->bk->ncalls * i / cr->nruns, k1 = cr->bk->ncalls * (i + 1) / cr->nruns,
	       n = 0;

	(void)worker;
	for (size_t k = k0; k < k1; k++)
		n += c->iters.v[call_iter(c, cr->bk->calls ? (size_t)cr->bk->calls[k] : k)].stage >=
		     0;
	cr->n[i] = n;
	return true;
}

static bool roots_run(void *ctx, size_t worker, size_t i)
{
	struct call_runs *cr = ctx;
	size_t k0 = cr->bk->ncalls * i / cr->nruns, k1 = cr->bk->ncalls * (i + 1) / cr->nruns;

	(void)worker;
	for (size_t k = k0; k < k1; k++)
		if (call_iter(cr->c, k) == cr->root_iter)
			vec_push(&cr->roots[i], (int)k);
	return true;
}

/* Stages, the pipeline's calls and their call tree (its links are its
 * stages', summed by aggregate()). */
static void collect(struct pbuild *b, const struct bucket *bk)
{
	struct host_ctx *c = b->c;
	size_t n = 0, cores = tfd_cpu_count();
	struct call_runs cr = {c, bk, b->root_iter, 1, NULL, NULL};

	tfd_stage_for(c, &b->sb, b->root_iter, 0);
	for (size_t i = 0; i < bk->niters; i++)
		tfd_stage_for(c, &b->sb, bk->iters[i], 0);
	if (bk->ncalls >= AGG_SPLIT_MIN && cores > 1)
		cr.nruns = AGG_RUNS;
	cr.n = xcalloc(cr.nruns, sizeof(*cr.n));
	tfd_pool_run(cr.nruns, cores, NULL, false, count_run, &cr);
	for (size_t i = 0; i < cr.nruns; i++)
		n += cr.n[i];
	free(cr.n);
	/* a pipeline with every call of the host (the usual one): its local
	 * indices are the host's, and it reads the host's times */
	b->identity = n == c->calls.n;
	if (!b->identity) {
		vec_reserve_exact(&b->pcalls, n);
		for (size_t i = 0; i < bk->ncalls; i++) {
			int k = bk->calls ? bk->calls[i] : (int)i;

			if (c->iters.v[call_iter(c, (size_t)k)].stage >= 0)
				vec_push(&b->pcalls, k);
		}
	}
	b->n = n;
	/* (no times when the host has no call) */
	b->borrowed = b->identity && c->times.rec;
	if (b->borrowed) {
		/* every call of the host: its root calls found in runs, the
		 * tree made from the host's calls, no array per call */
		b->tm = call_times(c);
		cr.roots = xcalloc(cr.nruns, sizeof(*cr.roots));
		tfd_pool_run(cr.nruns, cores, NULL, false, roots_run, &cr);
		for (size_t i = 0; i < cr.nruns; i++) {
			vec_reserve_exact(&b->roots, b->roots.n + cr.roots[i].n);
			for (size_t r = 0; r < cr.roots[i].n; r++)
				vec_push(&b->roots, cr.roots[i].v[r]);
			vec_free(&cr.roots[i]);
		}
		free(cr.roots);
		tfd_tree_build_scan(&b->tree, n, &b->tm, c->calls.v, &c->cpair, c->pairs.v,
				    tree_lists(n));
		return;
	}
	b->start = xmalloc((n + 1) * sizeof(int64_t));
	b->end = xmalloc((n + 1) * sizeof(int64_t));
	b->tm = (struct tfd_times){.start = b->start, .end = b->end};
	/* with every call of the host, parent_of() reads the host's calls and
	 * the tree is made from them */
	if (!b->identity)
		b->parent = xmalloc((n + 1) * sizeof(int));
	for (size_t k = 0; k < n; k++) {
		int hk = host_call(b, k);
		const struct call *cl = &c->calls.v[hk];
		int iter = call_iter(c, (size_t)hk);

		b->start[k] = call_start(c, (size_t)hk);
		b->end[k] = call_end(c, (size_t)hk);
		if (b->parent)
			b->parent[k] =
			    cl->parent >= 0 && iter != b->root_iter ? local_of(b, cl->parent) : -1;
		if (iter == b->root_iter)
			vec_push(&b->roots, (int)k);
	}
	if (b->parent)
		tfd_tree_build(&b->tree, n, b->start, b->end, b->parent);
	else
		tfd_tree_build_scan(&b->tree, n, &b->tm, c->calls.v, &c->cpair, c->pairs.v,
				    tree_lists(n));
}

/* Root call i's sort key: its start, then its local index. */
static struct keyed root_key(const struct pbuild *b, size_t i)
{
	return (struct keyed){tfd_times_start(&b->tm, (size_t)b->roots.v[i]), b->roots.v[i]};
}

/* b's root calls (from its calls, in thread order) sorted by start, then
 * index, unless they are in that order already, as when they ran on one
 * thread. */
static void sort_roots(struct pbuild *b)
{
	size_t nr = b->roots.n, k = 1;

	for (struct keyed prev = nr ? root_key(b, 0) : (struct keyed){0, 0}, cur; k < nr; k++) {
		cur = root_key(b, k);
		if (keyed_cmp(&prev, &cur) >= 0)
			break;
		prev = cur;
	}
	if (k < nr) {
		struct keyed *kv = xmalloc((nr + 1) * sizeof(*kv));

		for (size_t i = 0; i < nr; i++)
			kv[i] = root_key(b, i);
		qsort(kv, nr, sizeof(*kv), keyed_cmp);
		for (size_t i = 0; i < nr; i++)
			b->roots.v[i] = (int)kv[i].idx;
		free(kv);
	}
}

/* Root calls in time order (the stream's are), their latency statistics
 * and the selection. */
static void root_stats(struct pbuild *b, const struct tfd_analyze_opts *opts)
{
	struct tfd_root_spans rs;

	if (!b->ss)
		sort_roots(b);
	rs = pbuild_root_spans(b);
	b->durs = xmalloc((rs.n + 1) * sizeof(int64_t));
	b->selected = xcalloc(rs.n + 1, sizeof(bool));
	tfd_root_stats(&rs, opts, b->p, b->durs, b->selected);
}

/* Share of its root calls' time under which a pipeline whose calls fall
 * between the steps counted is outside them (a call may straddle a
 * marker's edge). */
#define OUTSIDE_STEPS_SHARE 0.01

/* Whether the pipeline's root calls fall between the host's steps (their
 * time inside them under OUTSIDE_STEPS_SHARE of theirs; host_ctx's
 * step_spans). */
static void steps_overlap(struct pbuild *b)
{
	struct tfd_pipeline *p = b->p;
	const struct tfd_interval *sp = b->c->step_spans;
	size_t n = b->c->nstep_spans, gaps = 0;
	int64_t in = 0;
	uint8_t *seen;
	struct tfd_root_spans rs = pbuild_root_spans(b);

	if (!n || !rs.n)
		return;
	seen = xcalloc(n + 1, 1);
	for (size_t r = 0; r < rs.n; r++) {
		int64_t s = tfd_root_start(&rs, r), e = tfd_root_end(&rs, r),
			own = tfd_interval_overlap(sp, n, s, e);
		/* the gap after the last span starting by s */
		size_t lo = tfd_intervals_started(sp, n, s);

		in = sat_add(in, own < e - s ? own : e - s);
		if (lo && lo < n && !seen[lo]) {
			seen[lo] = 1;
			gaps++;
		}
	}
	free(seen);
	/* read between the steps in half the gaps or more, it is the loop's
	 * own cadence (a second dataset's next() before each marker) */
	p->outside_steps = p->total_ns > 0 &&
			   (double)in < OUTSIDE_STEPS_SHARE * (double)p->total_ns &&
			   (!gaps || 2 * gaps < n - 1);
}

/* A root call's local index and its rank (by start). */
struct root_rank {
	int local, rank;
};

static int root_rank_cmp(const void *a, const void *b)
{
	const struct root_rank *x = a, *y = b;

	return (x->local > y->local) - (x->local < y->local);
}

/* The last top of a chain of parents owner_of() looked up, and its
 * answer: a thread's calls come one after another under one root call. */
struct owner_memo {
	int top, rank;
};

/* Which root call (its rank) owns call k: the top of k's chain of parents,
 * if that is a root call; -1 for none. rr: the root calls by local index
 * (no per-call array: this runs at the peak); m: the caller's memo of the
 * last lookup, {-1, -1} before the first. */
static int owner_of(const struct pbuild *b, const struct root_rank *rr, size_t nr, size_t k,
		    struct owner_memo *m)
{
	bool near;
	int x = pbuild_top(b, k, &near);
	size_t lo = 0, hi = nr;

	if (!near)
		return -1;
	if (x == m->top)
		return m->rank;
	m->top = x;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rr[mid].local < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	m->rank = lo < nr && rr[lo].local == x ? rr[lo].rank : -1;
	return m->rank;
}

/* An observed blocking edge (parent stage -> child stage) and the first
 * call it was seen at. */
struct edge_seen {
	int from, to;
	size_t first;
};

static int edge_seen_cmp(const void *a, const void *b)
{
	const struct edge_seen *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* One stage's sums over a run of calls (and of root calls' attribution). */
struct stage_sums {
	const struct tfd_event *sample; /* its first call's, in index order */
	uint64_t calls_all, calls, blocking_calls, win_calls;
	int64_t total_all_ns, self_all_ns, total_ns, self_ns, blocking_ns, win_self_ns;
	size_t links[TFD_LINK__COUNT];
};

/* What one run of root calls (their attribution) and one run of calls add
 * up to: per stage sums, the blocking edges with the first call showing
 * each, the slowest root call's own blocking per stage, and the (stage,
 * thread) pairs of the capacity window's calls in the order they first
 * appear. Runs are summed on several threads at once and merged in order:
 * the result is the one run's. */
struct agg_part {
	struct stage_sums *ss;
	int64_t *slow_blk;
	struct imap seen; /* edge key -> index in edges */
	VEC(struct edge_seen) edges;
	struct imap win_seen;
	VEC(uint64_t) win_threads;
	/* the keys of seen and win_seen met last, direct-mapped: a call's
	 * edge and (stage, thread) pair are nearly always one of a few */
	struct seen_memo {
		uint64_t key[32];
		size_t val1[32]; /* the key's value + 1; 0: an empty entry */
	} edge_memo, win_memo;
};

static inline size_t memo_slot(uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 59);
}

/* Whether key is in m (*val: its value), looked for in memo first. */
static inline bool seen_get(const struct imap *m, struct seen_memo *memo, uint64_t key, size_t *val)
{
	size_t h = memo_slot(key);

	if (memo->val1[h] && memo->key[h] == key) {
		*val = memo->val1[h] - 1;
		return true;
	}
	if (!imap_get(m, key, val))
		return false;
	memo->key[h] = key;
	memo->val1[h] = *val + 1;
	return true;
}

static inline void seen_put(struct imap *m, struct seen_memo *memo, uint64_t key, size_t val)
{
	size_t h = memo_slot(key);

	imap_put(m, key, val);
	memo->key[h] = key;
	memo->val1[h] = val + 1;
}

/* Where one root call's attribution puts each call's blocking time: the
 * part's stage sums (an analyzed call), the slowest call's own sums, and
 * the blocking edges, each once (the critical path weighs an edge by its
 * head's blocking time, so a repeat adds nothing). No per-call array. */
struct blk_sink {
	const struct pbuild *b;
	bool selected, slowest;
	struct agg_part *part;
};

static void add_blocking(void *ctx, int node, int64_t ns)
{
	struct blk_sink *bs = ctx;
	const struct pbuild *b = bs->b;
	const struct host_ctx *c = b->c;
	struct agg_part *pt = bs->part;
	int si;
	struct stage_sums *s;

	if (ns <= 0)
		return;
	si = c->iters.v[call_iter(c, (size_t)host_call(b, (size_t)node))].stage;
	s = &pt->ss[si];
	if (bs->selected) {
		s->blocking_ns = sat_add(s->blocking_ns, ns);
		s->blocking_calls++;
		if (parent_of(b, (size_t)node) >= 0) {
			int from = c->iters
				       .v[call_iter(c, (size_t)host_call(
							   b, (size_t)parent_of(b, (size_t)node)))]
				       .stage;
			uint64_t key = (uint64_t)(uint32_t)from << 32 | (uint32_t)si;
			size_t e;

			if (!seen_get(&pt->seen, &pt->edge_memo, key, &e)) {
				seen_put(&pt->seen, &pt->edge_memo, key, pt->edges.n);
				vec_push(&pt->edges, ((struct edge_seen){from, si, (size_t)node}));
			} else if ((size_t)node < pt->edges.v[e].first) {
				pt->edges.v[e].first = (size_t)node;
			}
		}
	}
	if (bs->slowest)
		pt->slow_blk[si] = sat_add(pt->slow_blk[si], ns);
}

/* The aggregation's shared inputs and its runs: runs [i * n / nruns, (i +
 * 1) * n / nruns) of the root calls and of the calls. */
struct agg_job {
	const struct pbuild *b;
	const struct root_rank *rr;
	int slowest;
	bool has_window;
	int64_t t0, t1;
	size_t nruns;
	struct agg_part *parts;
};

static void agg_roots(const struct agg_job *j, struct agg_part *pt, size_t r0, size_t r1)
{
	const struct pbuild *b = j->b;
	struct blk_sink bs = {b, false, false, pt};

	for (size_t r = r0; r < r1; r++) {
		bs.selected = b->selected[r];
		bs.slowest = (int)r == j->slowest;
		tfd_tree_attribute_to(&b->tree, b->roots.v[r], NULL, add_blocking, &bs);
	}
}

static void agg_calls(const struct agg_job *j, struct agg_part *pt, size_t k0, size_t k1)
{
	const struct pbuild *b = j->b;
	const struct host_ctx *c = b->c;
	size_t nr = b->roots.n;
	struct owner_memo memo = {-1, -1};

	for (size_t k = k0; k < k1; k++) {
		int hk = host_call(b, k);
		const struct call *cl = &c->calls.v[hk];
		int iter = call_iter(c, (size_t)hk);
		int si = c->iters.v[iter].stage;
		struct stage_sums *s = &pt->ss[si];
		int64_t ks = tfd_times_start(&b->tm, k), d = tfd_times_end(&b->tm, k) - ks;
		/* found here, not kept per call (the attribution's depth limit
		 * does not apply: every call has its self time) */
		int64_t self = tfd_tree_self(&b->tree, (int)k);
		int owner = owner_of(b, j->rr, nr, k, &memo);

		s->calls_all++;
		s->total_all_ns = sat_add(s->total_all_ns, d);
		s->self_all_ns = sat_add(s->self_all_ns, self);
		if (iter != b->root_iter)
			s->links[cl->link]++;
		/* the stage's first call; the first of its iterator's calls, too */
		if (!s->sample)
			s->sample = c->iters.v[iter].sample;
		if (owner >= 0 && b->selected[owner]) {
			s->calls++;
			s->total_ns = sat_add(s->total_ns, d);
			s->self_ns = sat_add(s->self_ns, self);
		}
		if (j->has_window && ks >= j->t0 && ks < j->t1) {
			uint64_t key = (uint64_t)(uint32_t)si << 32 | call_thread(c, (size_t)hk);
			size_t v;

			s->win_calls++;
			s->win_self_ns = sat_add(s->win_self_ns, self);
			if (!seen_get(&pt->win_seen, &pt->win_memo, key, &v)) {
				seen_put(&pt->win_seen, &pt->win_memo, key, 0);
				vec_push(&pt->win_threads, key);
			}
		}
	}
}

static bool agg_item(void *ctx, size_t worker, size_t i)
{
	const struct agg_job *j = ctx;
	size_t nr = j->b->roots.n, n = j->b->n;

	(void)worker;
	agg_roots(j, &j->parts[i], nr * i / j->nruns, nr * (i + 1) / j->nruns);
	agg_calls(j, &j->parts[i], n * i / j->nruns, n * (i + 1) / j->nruns);
	return true;
}

/* Per-stage sums over every call and over the analyzed root calls; the
 * observed blocking edges for the critical path, in the order of the
 * calls first showing them; the slowest call's own bottleneck. Attribution
 * runs per root call; calls outside every root call keep self time only. */
static void aggregate(struct pbuild *b)
{
	struct tfd_pipeline *p = b->p;
	size_t nr = b->roots.n, ns = b->sb.stages.n, cores = tfd_cpu_count();
	struct root_rank *rr = xmalloc((nr + 1) * sizeof(*rr));
	int64_t best = -1, *slow_blk = xcalloc(ns + 1, sizeof(int64_t));
	struct agg_job j;
	struct tfd_root_spans rs;
	struct imap seen = {0}, win_seen = {0};
	VEC(struct edge_seen) edges = {0};

	memset(&j, 0, sizeof(j));
	j.b = b;
	j.rr = rr;
	j.slowest = tfd_root_slowest(b->durs, nr);
	for (size_t r = 0; r < nr; r++)
		rr[r] = (struct root_rank){b->roots.v[r], (int)r};
	if (nr > 1)
		qsort(rr, nr, sizeof(*rr), root_rank_cmp);
	rs = pbuild_root_spans(b);
	j.has_window = tfd_capacity_window(&rs, b->cap_warmup, &j.t0, &j.t1);
	j.nruns = b->n >= AGG_SPLIT_MIN && cores > 1 ? AGG_RUNS : 1;
	j.parts = xcalloc(j.nruns, sizeof(*j.parts));
	for (size_t i = 0; i < j.nruns; i++) {
		j.parts[i].ss = xcalloc(ns + 1, sizeof(*j.parts[i].ss));
		j.parts[i].slow_blk = xcalloc(ns + 1, sizeof(int64_t));
	}
	tfd_pool_run(j.nruns, cores, NULL, false, agg_item, &j);
	b->win = xcalloc(ns + 1, sizeof(*b->win));
	for (size_t i = 0; i < j.nruns; i++) {
		struct agg_part *pt = &j.parts[i];

		for (size_t si = 0; si < ns; si++) {
			const struct stage_sums *q = &pt->ss[si];
			struct tfd_stage *s = &b->sb.stages.v[si];

			if (!s->sample)
				s->sample = q->sample;
			s->calls_all += q->calls_all;
			s->total_all_ns = sat_add(s->total_all_ns, q->total_all_ns);
			s->self_all_ns = sat_add(s->self_all_ns, q->self_all_ns);
			s->calls += q->calls;
			s->total_ns = sat_add(s->total_ns, q->total_ns);
			s->self_ns = sat_add(s->self_ns, q->self_ns);
			s->blocking_ns = sat_add(s->blocking_ns, q->blocking_ns);
			s->blocking_calls += q->blocking_calls;
			for (int l = 0; l < TFD_LINK__COUNT; l++) {
				s->links[l] += q->links[l];
				p->links[l] += q->links[l];
			}
			b->win[si].calls += q->win_calls;
			b->win[si].self_ns = sat_add(b->win[si].self_ns, q->win_self_ns);
			slow_blk[si] = sat_add(slow_blk[si], pt->slow_blk[si]);
		}
		for (size_t e = 0; e < pt->edges.n; e++) {
			const struct edge_seen *es = &pt->edges.v[e];
			uint64_t key = (uint64_t)(uint32_t)es->from << 32 | (uint32_t)es->to;
			size_t at;

			if (!imap_get(&seen, key, &at)) {
				imap_put(&seen, key, edges.n);
				vec_push(&edges, *es);
			} else if (es->first < edges.v[at].first) {
				edges.v[at].first = es->first;
			}
		}
		for (size_t w = 0; w < pt->win_threads.n; w++)
			if (!imap_get(&win_seen, pt->win_threads.v[w], NULL)) {
				imap_put(&win_seen, pt->win_threads.v[w], 0);
				vec_push(&b->win_threads, pt->win_threads.v[w]);
			}
		free(pt->ss);
		free(pt->slow_blk);
		imap_free(&pt->seen);
		vec_free(&pt->edges);
		imap_free(&pt->win_seen);
		vec_free(&pt->win_threads);
	}
	free(j.parts);
	if (edges.n > 1)
		qsort(edges.v, edges.n, sizeof(*edges.v), edge_seen_cmp);
	for (size_t e = 0; e < edges.n; e++) {
		vec_push(&b->ef, edges.v[e].from);
		vec_push(&b->et, edges.v[e].to);
	}
	for (size_t s = 0; s < ns; s++)
		if (slow_blk[s] > best) {
			best = slow_blk[s];
			p->slowest_bottleneck = (int)s;
		}
	if (best <= 0)
		p->slowest_bottleneck = -1;
	free(slow_blk);
	imap_free(&seen);
	imap_free(&win_seen);
	vec_free(&edges);
	free(rr);
}

/* Stages in pre-order, with their names, families and shares, into p. */
static void finish_stages(struct pbuild *b, struct analysis_priv *pv)
{
	struct tfd_pipeline *p = b->p;
	size_t ns = b->sb.stages.n;

	b->order = xmalloc((ns + 1) * sizeof(int));
	b->inv = xmalloc((ns + 1) * sizeof(int));
	tfd_stage_order(b->sb.stages.v, ns, 0, b->order);
	for (size_t i = 0; i < ns; i++)
		b->inv[b->order[i]] = (int)i;
	p->nstages = ns;
	p->stages = xcalloc(ns + 1, sizeof(*p->stages));
	for (size_t i = 0; i < ns; i++) {
		struct tfd_stage *s = &p->stages[i];
		char fam[128];

		*s = b->sb.stages.v[b->order[i]];
		if (s->parent >= 0)
			s->parent = b->inv[s->parent];
		s->path = tfd_analysis_keep_string(pv, b->sb.paths.v[b->order[i]]);
		/* named as its path ends: a saved dataset's shard readers are
		 * one stage, named without the first one's "/_N" */
		s->name = tfd_iter_short(s->path);
		s->family =
		    tfd_analysis_keep_string(pv, tfd_iter_family(s->name, fam, sizeof(fam)));
		s->blocking_share =
		    p->analyzed_ns ? (double)s->blocking_ns / (double)p->analyzed_ns : 0.0;
	}
	if (p->slowest_bottleneck >= 0)
		p->slowest_bottleneck = b->inv[p->slowest_bottleneck];
	for (size_t i = 0; i < b->ef.n; i++) {
		b->ef.v[i] = b->inv[b->ef.v[i]];
		b->et.v[i] = b->inv[b->et.v[i]];
	}
}

/* Whether a parameter AUTOTUNE sets (a parallelism, a cycle_length, a
 * buffer_limit) took two values over the capture in one of the iterators
 * whose stage is in iter_stage (by iterator, -1 none): the pipeline was
 * still being tuned while it was profiled. */
static bool tuned(const struct tfd_par_change *par, size_t n, const int *iter_stage)
{
	for (size_t k = 0; k + 1 < n; k++)
		if (par[k].iter == par[k + 1].iter && par[k].what == par[k + 1].what &&
		    iter_stage[par[k].iter] >= 0 && par[k].value != par[k + 1].value)
			return true;
	return false;
}

/* The capacity pass gets the calls, their stages in final order (per
 * iterator, from the host's calls), and the window sums. */
static void capacity(struct pbuild *b)
{
	struct host_ctx *c = b->c;
	struct tfd_cap_calls in;
	size_t ns = b->p->nstages; /* the stage build is gone: as many */
	int *iter_stage = xmalloc((c->iters.n + 1) * sizeof(int));
	struct tfd_cap_window *win = xcalloc(ns + 1, sizeof(*win));

	for (size_t i = 0; i < c->iters.n; i++) {
		int s = c->iters.v[i].stage;

		/* another pipeline's iterator keeps its own stage: never read */
		iter_stage[i] = s >= 0 && (size_t)s < ns ? b->inv[s] : -1;
	}
	for (size_t s = 0; s < ns; s++)
		win[b->inv[s]] = b->win[s];
	for (size_t i = 0; i < b->win_threads.n; i++) {
		uint64_t key = b->win_threads.v[i];

		b->win_threads.v[i] = (uint64_t)(uint32_t)b->inv[key >> 32] << 32 | (uint32_t)key;
	}
	memset(&in, 0, sizeof(in));
	in.host = c->h;
	in.fns = &c->fns;
	in.n = b->n;
	in.calls = c->calls.v;
	in.pairs = c->pairs.v;
	in.cpair = &c->cpair;
	in.pcalls = b->identity ? NULL : b->pcalls.v;
	in.iter_stage = iter_stage;
	in.tm = b->tm;
	in.roots = pbuild_root_spans(b);
	in.nwarmup = b->cap_warmup;
	in.window = win;
	in.stage_threads = b->win_threads.v;
	in.nstage_threads = b->win_threads.n;
	in.par = c->par.v;
	in.npar = c->par.n;
	in.step_rate = c->step_rate;
	in.nsteps = c->nsteps;
	in.py_overlap = c->py_overlap;
	in.root = b->root_iter;
	in.iter_root = c->root;
	in.niters = c->iters.n;
	in.hc = c;
	in.troots = c->troots;
	in.step_spans = c->step_spans;
	in.nstep_spans = c->nstep_spans;
	in.events = b->ss != NULL;
	if (c->stream && !b->ss)
		tfd_stream_walk_check(&in, b->p->root_id);
	tfd_capacity_compute(b->p, &in);
	b->p->tuned_in_capture = tuned(c->par.v, c->par.n, iter_stage);
	free(iter_stage);
	free(win);
}

enum tfd_status tfd_pipeline_build(struct host_ctx *c, int root_iter, const struct bucket *bk,
				   struct tfd_pipeline *p, struct analysis_priv *pv,
				   const struct tfd_analyze_opts *opts, struct tfd_err *err)
{
	struct pbuild b;
	enum tfd_status st;

	memset(&b, 0, sizeof(b));
	b.c = c;
	b.p = p;
	b.root_iter = root_iter;
	p->root_id = c->iters.v[root_iter].id;
	p->bottleneck = p->latency_bottleneck = -1;
	p->slowest_bottleneck = -1;
	b.ss = c->from_stream ? c->stream : NULL;
	if (b.ss)
		tfd_stream_stages(&b, bk);
	else
		collect(&b, bk);
	root_stats(&b, opts);
	steps_overlap(&b);
	b.cap_warmup = opts->rank_set ? 0 : p->nwarmup;
	if (b.ss) {
		tfd_stream_aggregate(&b);
		if (tfd_env_flag("TFDOCTOR_STREAM"))
			fprintf(
			    stderr,
			    "tfdoctor: stream: %s: pipeline %llu: built from the stream's sums\n",
			    c->h->name ? c->h->name : "?", (unsigned long long)p->root_id);
	} else {
		aggregate(&b);
		if (tfd_env_flag("TFDOCTOR_FOLD_CHECK"))
			tfd_fold_check(&b);
		/* (the stream's sums are made with the options' selection) */
		if (c->stream)
			tfd_stream_pipeline_check(&b);
	}
	finish_stages(&b, pv);
	/* what the critical path and the capacity pass do not read goes first:
	 * they run at the peak */
	tfd_tree_release(&b.tree);
	tfd_stage_build_release(&b.sb);
	free(b.parent);
	free(b.durs);
	free(b.selected);
	st = tfd_bottleneck_latency(p, b.ef.v, b.et.v, b.ef.n, err);
	vec_free(&b.ef);
	vec_free(&b.et);
	if (!st) {
		capacity(&b);
		tfd_bottleneck_choose(p);
	}
	vec_free(&b.pcalls);
	vec_free(&b.roots);
	free(b.order);
	free(b.inv);
	if (!b.borrowed) {
		free(b.start);
		free(b.end);
	}
	free(b.win);
	vec_free(&b.win_threads);
	return st;
}
