/* timesel.c - the root calls a stream in time order would select, from
 * the pass before, and its sums against the pipeline pass's
 * (TFDOCTOR_TIMELINK_CHECK=1; see docs/performance.md, "Groups folded as
 * they close").
 *
 * What the pipeline pass sums under its analyzed root calls (the steady
 * state's slow ones), the slowest root call's own blocking and the
 * capacity window's sums depend on every root call of the pipeline: the
 * median that tells the warm-up, the slowest, the window's span. The pass
 * before the stream lists the root calls (struct tfd_prepass.roots), so
 * the selection is made before the stream starts, by the pipeline pass's
 * own code on those lists (tfd_root_stats(), with the default options:
 * no --rank, warm-up on), and each root call the stream meets gets its
 * rank in it. The stream's folds then sum per iterator
 * what the pipeline pass sums per stage, and each pipeline's build
 * compares the two (tfd_stream_pipeline_check()). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "pipeline_impl.h"
#include "tfd/satmath.h"
#include "timelink_impl.h"

/* The pipeline pass's selection of r's n calls (by start: tfd_root_stats()
 * with the default options), the slowest (the first of the longest) and
 * the capacity window. */
static void select_roots(struct tl_roots *r, const struct tfd_analyze_opts *given)
{
	struct tfd_root_spans rs = {.n = r->n, .s = r->s, .e = r->e};
	struct tfd_analyze_opts opts;
	struct tfd_pipeline *p = xcalloc(1, sizeof(*p));
	int64_t *d = xmalloc((r->n + 1) * sizeof(*d));

	memset(&opts, 0, sizeof(opts));
	tfd_root_stats(&rs, given ? given : &opts, p, d, r->sel);
	r->nwarmup = p->nwarmup; /* (none with --rank) */
	r->slowest = tfd_root_slowest(d, r->n);
	r->has_window = tfd_capacity_window(&rs, r->nwarmup, &r->t0, &r->t1);
	free(p);
	free(d);
}

void tfd_tls_begin(struct tl *t)
{
	const struct tfd_prepass *pp = &t->pp;
	size_t ni = t->pre->iters.n;
	/* (keyed: a root call's start, then its place in the pass before's
	 * list, the calls' order: root_stats()'s order) */
	struct keyed *k = xmalloc((pp->roots.n + 1) * sizeof(*k));
	size_t *at = xcalloc(ni + 2, sizeof(*at));

	t->roots = xcalloc(ni + 1, sizeof(*t->roots));
	for (size_t i = 0; i < pp->roots.n; i++)
		if ((size_t)pp->roots.v[i].iter < ni)
			at[pp->roots.v[i].iter + 1]++;
	for (size_t i = 0; i < ni; i++)
		at[i + 1] += at[i];
	/* each root iterator's calls, in the list's order, then by start */
	for (size_t i = 0; i < pp->roots.n; i++) {
		const struct tfd_root_call *rc = &pp->roots.v[i];

		if ((size_t)rc->iter < ni)
			k[at[rc->iter]++] = (struct keyed){rc->start_ns, (int64_t)i};
	}
	for (size_t i = ni; i > 0; i--)
		at[i] = at[i - 1];
	at[0] = 0;
	for (size_t i = 0; i < ni; i++) {
		struct tl_roots *r = &t->roots[i];

		r->n = at[i + 1] - at[i];
		r->slowest = -1;
		if (!r->n)
			continue;
		qsort(k + at[i], r->n, sizeof(*k), keyed_cmp);
		r->s = xmalloc(r->n * sizeof(*r->s));
		r->e = xmalloc(r->n * sizeof(*r->e));
		r->sel = xcalloc(r->n, sizeof(*r->sel));
		for (size_t j = 0; j < r->n; j++) {
			const struct tfd_root_call *rc = &pp->roots.v[k[at[i] + j].idx];

			r->s[j] = rc->start_ns;
			r->e[j] = rc->end_ns;
		}
		select_roots(r, t->opts);
	}
	free(k);
	free(at);
}

void tfd_tls_free(struct tl *t)
{
	for (size_t i = 0; t->roots && i < t->pre->iters.n; i++) {
		free(t->roots[i].s);
		free(t->roots[i].e);
		free(t->roots[i].sel);
	}
	free(t->roots);
	t->roots = NULL;
}

int tfd_tls_rank(struct tl *t, int it, int64_t s, int64_t e)
{
	struct tl_roots *r = &t->roots[it];
	size_t k = r->seen++;

	if (k >= r->n || r->s[k] != s || r->e[k] != e) {
		t->root_order++;
		return -1;
	}
	return (int)k;
}

void tfd_stream_sums_free(struct tfd_stream_sums *ss)
{
	if (!ss)
		return;
	for (size_t i = 0; ss->root_s && i < ss->niters; i++) {
		free(ss->root_s[i]);
		free(ss->root_e[i]);
	}
	free(ss->root_s);
	free(ss->root_e);
	free(ss->nroots);
	free(ss->s);
	free(ss->nwarmup);
	vec_free(&ss->edges);
	vec_free(&ss->pairs);
	vec_free(&ss->roots);
	free(ss);
}

/* ---- against the pipeline pass ---- */

/* The stage of iterator it in b's pipeline, -1: not one of its (a
 * pipeline's iterators, its bucket, are those of its root). */
static int stage_in(const struct pbuild *b, int it)
{
	const struct host_ctx *c = b->c;

	return c->root[it] == b->root_iter ? c->iters.v[it].stage : -1;
}

/* A key's first call, keys mapped to the pipeline's (stage, ...) pairs:
 * the lowest first of each, in the order of their first calls. */
struct sfirst {
	uint64_t key;
	int first;
};

static int sfirst_cmp(const void *a, const void *b)
{
	const struct sfirst *x = a, *y = b;

	return (x->first > y->first) - (x->first < y->first);
}

/* v's n keys (mapped) made one each, the lowest first kept, by first. */
static size_t sfirst_unique(struct sfirst *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j = 0;

		while (j < m && v[j].key != v[i].key)
			j++;
		if (j == m)
			v[m++] = v[i];
		else if (v[i].first < v[j].first)
			v[j].first = v[i].first;
	}
	if (m > 1)
		qsort(v, m, sizeof(*v), sfirst_cmp);
	return m;
}

/* The stream's sums per iterator into q, per stage of b's pipeline; per
 * stage the iterator of its first call into first_it (-1 none; NULL: not
 * asked for): the stage's sample is that iterator's first call, as
 * aggregate() takes it. */
static void stage_sums(const struct pbuild *b, const struct tfd_stream_sums *ss,
		       struct tfd_stream_isum *q, int *first_it)
{
	size_t ns = b->sb.stages.n;

	for (size_t si = 0; si <= ns; si++) {
		q[si].first = -1;
		if (first_it)
			first_it[si] = -1;
	}
	for (size_t it = 0; it < ss->niters && it < b->c->iters.n; it++) {
		const struct tfd_stream_isum *a = &ss->s[it];
		int si = stage_in(b, (int)it);
		struct tfd_stream_isum *z;

		if (si < 0 || (size_t)si >= ns)
			continue;
		z = &q[si];
		z->calls += a->calls;
		z->total_ns = sat_add(z->total_ns, a->total_ns);
		z->self_ns = sat_add(z->self_ns, a->self_ns);
		z->calls_an += a->calls_an;
		z->total_an_ns = sat_add(z->total_an_ns, a->total_an_ns);
		z->self_an_ns = sat_add(z->self_an_ns, a->self_an_ns);
		z->blk_ns = sat_add(z->blk_ns, a->blk_ns);
		z->blk_calls += a->blk_calls;
		z->win_calls += a->win_calls;
		z->win_self_ns = sat_add(z->win_self_ns, a->win_self_ns);
		z->slow_blk_ns = sat_add(z->slow_blk_ns, a->slow_blk_ns);
		if ((int)it != b->root_iter)
			for (int l = 0; l < TFD_LINK__COUNT; l++)
				z->links[l] += a->links[l];
		if (a->first >= 0 && (z->first < 0 || a->first < z->first)) {
			z->first = a->first;
			if (first_it)
				first_it[si] = (int)it;
		}
	}
}

/* The stream's keys (edges between iterators, the high half's first; or
 * (iterator, thread) pairs: both) made the pipeline's (stage, ...) into
 * out, each once with its lowest first call, by first; how many. */
static size_t stage_keys(const struct pbuild *b, const tfd_stream_firsts *v, bool both,
			 struct sfirst *out)
{
	size_t n = 0;

	for (size_t i = 0; i < v->n; i++) {
		int hi = stage_in(b, (int)(v->v[i].key >> 32));
		int lo = both ? stage_in(b, (int)(uint32_t)v->v[i].key) : 0;

		if (hi >= 0 && lo >= 0)
			out[n++] =
			    (struct sfirst){(uint64_t)(uint32_t)hi << 32 |
						(both ? (uint32_t)lo : (uint32_t)v->v[i].key),
					    v->v[i].first};
	}
	return sfirst_unique(out, n);
}

/* Whether the stream's root calls of b's root iterator, as the lists a
 * struct tfd_root_spans reads, are b's, in its order. */
static bool same_roots(const struct pbuild *b, const struct tfd_stream_sums *ss)
{
	int ri = b->root_iter;
	struct tfd_root_spans x = pbuild_root_spans(b);
	struct tfd_root_spans y = {.n = ss->nroots[ri], .s = ss->root_s[ri], .e = ss->root_e[ri]};

	if (x.n != y.n)
		return false;
	for (size_t r = 0; r < x.n; r++)
		if (tfd_root_start(&x, r) != tfd_root_start(&y, r) ||
		    tfd_root_end(&x, r) != tfd_root_end(&y, r))
			return false;
	return true;
}

/* The first difference between the stream's sums and b's, or NULL. */
static const char *stream_differs(const struct pbuild *b, const struct tfd_stream_sums *ss)
{
	size_t ns = b->sb.stages.n, ne, np;
	struct tfd_stream_isum *q = xcalloc(ns + 1, sizeof(*q));
	struct sfirst *ev = xmalloc((ss->edges.n + 1) * sizeof(*ev));
	struct sfirst *pv = xmalloc((ss->pairs.n + 1) * sizeof(*pv));
	int64_t best = -1;
	int slow = -1;
	const char *what = NULL;

	stage_sums(b, ss, q, NULL);
	for (size_t si = 0; si < ns && !what; si++) {
		what = tfd_stage_sums_differ(b, si, &q[si]);
		if (q[si].slow_blk_ns > best) {
			best = q[si].slow_blk_ns;
			slow = (int)si;
		}
	}
	if (!what && (best > 0 ? slow : -1) != b->p->slowest_bottleneck)
		what = "the slowest root call's bottleneck";
	if (!what && ss->nwarmup[b->root_iter] != b->p->nwarmup)
		what = "the warm-up";
	if (!what && !same_roots(b, ss))
		what = "the root calls or their order";
	/* the edges between stages and the window's (stage, thread) pairs, in
	 * the order of their first calls (host call numbers: a pipeline's
	 * local numbers keep their order) */
	ne = stage_keys(b, &ss->edges, true, ev);
	np = stage_keys(b, &ss->pairs, false, pv);
	if (!what && (ne != b->ef.n || np != b->win_threads.n))
		what = "the number of blocking edges or window pairs";
	for (size_t i = 0; i < ne && !what; i++)
		if (ev[i].key != ((uint64_t)(uint32_t)b->ef.v[i] << 32 | (uint32_t)b->et.v[i]))
			what = "the blocking edges or their order";
	for (size_t i = 0; i < np && !what; i++)
		if (pv[i].key != b->win_threads.v[i])
			what = "the window's (stage, thread) pairs or their order";
	free(q);
	free(ev);
	free(pv);
	return what;
}

void tfd_stream_pipeline_check(const struct pbuild *b)
{
	const char *what = stream_differs(b, b->c->stream);

	fprintf(stderr, "tfdoctor: stream: %s: pipeline %llu: its sums %s%s\n",
		b->c->h->name ? b->c->h->name : "?", (unsigned long long)b->p->root_id,
		what ? "differ: " : "as the pipeline pass's", what ? what : "");
}

/* ---- the pipeline built from the stream's sums (TFDOCTOR_STREAM=1) ---- */

void tfd_stream_stages(struct pbuild *b, const struct bucket *bk)
{
	struct host_ctx *c = b->c;

	tfd_stage_for(c, &b->sb, b->root_iter, 0);
	for (size_t i = 0; i < bk->niters; i++)
		tfd_stage_for(c, &b->sb, bk->iters[i], 0);
	for (size_t it = 0; it < b->ss->niters && it < c->iters.n; it++)
		if (stage_in(b, (int)it) >= 0)
			b->n += b->ss->s[it].calls;
}

/* Stage si of b takes the stream's sums q (and p its links). */
static void stage_takes(struct pbuild *b, size_t si, const struct tfd_stream_isum *q, int first_it)
{
	struct tfd_stage *s = &b->sb.stages.v[si];
	struct tfd_pipeline *p = b->p;

	if (!s->sample && first_it >= 0)
		s->sample = b->c->iters.v[first_it].sample;
	s->calls_all += q->calls;
	s->total_all_ns = sat_add(s->total_all_ns, q->total_ns);
	s->self_all_ns = sat_add(s->self_all_ns, q->self_ns);
	s->calls += q->calls_an;
	s->total_ns = sat_add(s->total_ns, q->total_an_ns);
	s->self_ns = sat_add(s->self_ns, q->self_an_ns);
	s->blocking_ns = sat_add(s->blocking_ns, q->blk_ns);
	s->blocking_calls += q->blk_calls;
	for (int l = 0; l < TFD_LINK__COUNT; l++) {
		s->links[l] += q->links[l];
		p->links[l] += q->links[l];
	}
	b->win[si].calls += q->win_calls;
	b->win[si].self_ns = sat_add(b->win[si].self_ns, q->win_self_ns);
}

void tfd_stream_aggregate(struct pbuild *b)
{
	const struct tfd_stream_sums *ss = b->ss;
	struct tfd_pipeline *p = b->p;
	size_t ns = b->sb.stages.n, nk;
	struct tfd_stream_isum *q = xcalloc(ns + 1, sizeof(*q));
	int *first_it = xmalloc((ns + 1) * sizeof(*first_it));
	struct sfirst *v =
	    xmalloc((ss->edges.n > ss->pairs.n ? ss->edges.n : ss->pairs.n) * sizeof(*v) + 1);
	int64_t best = -1;

	stage_sums(b, ss, q, first_it);
	b->win = xcalloc(ns + 1, sizeof(*b->win));
	p->slowest_bottleneck = -1;
	for (size_t si = 0; si < ns; si++) {
		stage_takes(b, si, &q[si], first_it[si]);
		if (q[si].slow_blk_ns > best) {
			best = q[si].slow_blk_ns;
			p->slowest_bottleneck = best > 0 ? (int)si : -1;
		}
	}
	nk = stage_keys(b, &ss->edges, true, v);
	for (size_t i = 0; i < nk; i++) {
		vec_push(&b->ef, (int)(v[i].key >> 32));
		vec_push(&b->et, (int)(uint32_t)v[i].key);
	}
	nk = stage_keys(b, &ss->pairs, false, v);
	for (size_t i = 0; i < nk; i++)
		vec_push(&b->win_threads, v[i].key);
	free(q);
	free(first_it);
	free(v);
}

void tfd_stream_walk_check(const struct tfd_cap_calls *in, uint64_t root_id)
{
	struct tfd_cap_walk a, b;
	struct tfd_cap_call x, y;
	size_t n = 0, at = SIZE_MAX;
	bool ma, mb;

	tfd_cap_walk_begin(&a, in, false);
	tfd_cap_walk_begin(&b, in, true);
	for (;;) {
		ma = tfd_cap_walk_next(&a, &x);
		mb = tfd_cap_walk_next(&b, &y);
		if (!ma || !mb)
			break;
		tfd_cap_walk_times(&a, &x);
		tfd_cap_walk_times(&b, &y);
		if (x.stage != y.stage || x.thread != y.thread || x.start != y.start ||
		    x.end != y.end) {
			at = n;
			break;
		}
		n++;
	}
	if (at == SIZE_MAX && ma != mb)
		at = n;
	tfd_cap_walk_end(&a);
	tfd_cap_walk_end(&b);
	if (at == SIZE_MAX)
		fprintf(stderr,
			"tfdoctor: stream: %s: pipeline %llu: its %zu calls walked again from the "
			"events as from the table\n",
			in->host->name ? in->host->name : "?", (unsigned long long)root_id, n);
	else
		fprintf(
		    stderr,
		    "tfdoctor: stream: %s: pipeline %llu: its calls walked again from the events "
		    "differ from the table's at call %zu\n",
		    in->host->name ? in->host->name : "?", (unsigned long long)root_id, at);
}

void tfd_stream_troots_check(const struct host_ctx *c, const struct tfd_graph_groups *g,
			     const struct tfd_thread_roots *tr)
{
	struct tfd_thread_roots ev;
	size_t nt = tr->nthreads, nr = tr->off ? tr->off[nt] : 0;
	bool same;

	tfd_thread_roots_make(c, g, &ev, true);
	same = ev.nthreads == nt && (!tr->off) == (!ev.off);
	if (same && tr->off)
		same = memcmp(tr->off, ev.off, (nt + 1) * sizeof(*tr->off)) == 0 &&
		       memcmp(tr->last_end, ev.last_end, c->iters.n * sizeof(*tr->last_end)) == 0;
	for (size_t i = 0; same && i < nr; i++)
		same = tr->runs[i].end_ns == ev.runs[i].end_ns &&
		       tr->runs[i].owner == ev.runs[i].owner;
	fprintf(stderr,
		"tfdoctor: stream: %s: its thread roots (%zu runs) walked again from the "
		"events %s\n",
		c->h->name ? c->h->name : "?", nr, same ? "as from the table" : "differ");
	tfd_thread_roots_free(&ev);
}
