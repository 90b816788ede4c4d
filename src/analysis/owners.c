/* owners.c - which stage each thread works for, for the capacity model:
 * a map's function calls count as its work on the threads it owns.
 *
 * A thread belongs to the input segment most of its iterator calls are
 * in; a pool thread with no such calls, to the map that dispatched its
 * function calls. TensorFlow's pools hand an ended iterator's threads on
 * (repeat() and every new iterator start new ones), so a thread can work
 * for several stages over a capture: such a thread's calls are kept in
 * time order and each function call is the stage's whose input call ended
 * last before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/err.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/select.h"
#include "tfd/vec.h"

/* Thread t's input calls, over the owners' votes (owners are stages). */
static size_t roles_on(struct imap *votes, uint32_t t, size_t nstages)
{
	size_t all = 0, v;

	for (size_t q = 0; q < nstages; q++)
		if (imap_get(votes, ((uint64_t)t << 32) | (uint32_t)q, &v))
			all += v;
	return all;
}

static int cmp_role(const void *a, const void *b)
{
	const struct tfd_role *x = a, *y = b;

	return (x->end_ns > y->end_ns) - (x->end_ns < y->end_ns);
}

/* n calls of thread t for owner o in a row: their votes; o becomes t's
 * owner when it passes the most votes any owner of t had. */
static void vote_run(struct imap *votes, uint64_t *best, int *owner, uint32_t t, int o, size_t n)
{
	uint64_t key = ((uint64_t)t << 32) | (uint32_t)o;
	size_t v = imap_get(votes, key, &v) ? v + n : n;

	imap_put(votes, key, v);
	if (v > best[t]) {
		best[t] = v;
		owner[t] = o;
	}
}

/* Each thread's owner from the counts of its calls by iterator (a host
 * with no call kept has them, host_ctx.pair_calls), as thread_owners()'s
 * walk finds it where every thread's input calls belong to one owner;
 * false where a thread's belong to several (the walk orders their votes
 * and times their roles) or there are no counts. The walk read the host's
 * events again from the file for each pipeline (13 % of an
 * iterator-dense capture's --low-memory analysis). */
static bool owners_from_counts(const struct tfd_owner_in *oi, int *owner)
{
	const struct tfd_cap_calls *in = oi->in;
	const struct host_ctx *c = in->hc;
	size_t nt = in->host->nthreads;

	if (!in->events || !c || c->pair_calls.n != c->pairs.n)
		return false;
	for (size_t k = 0; k < c->pairs.n; k++) {
		int i = c->pairs.v[k].iter, si, sg, o;
		uint32_t t = c->pairs.v[k].thread;

		/* the calls tfd_cap_walk_next() gives, and thread_owners() counts */
		if (!c->pair_calls.v[k] || i < 0 || (size_t)i >= in->niters ||
		    in->iter_root[i] != in->root || (si = in->iter_stage[i]) < 0)
			continue;
		sg = oi->seg_of[si];
		if (sg < 0 || oi->segs[sg].kind != TFD_SEG_INPUT || t >= nt)
			continue;
		o = oi->segs[sg].owner;
		if (owner[t] != -1 && owner[t] != o)
			return false;
		owner[t] = o;
	}
	return true;
}

/* Which async stage each thread works for: the owner of the input segment
 * most of its calls belong to (-1: the consumer's, or no calls). A thread
 * whose calls belong to several owners changed roles over time (a pool's
 * thread handed on when an iterator ended: repeat() and new iterators make
 * new ones): it also gets its calls' owners by their ends (*roles). The
 * pipeline's calls walked. */
static int *walk_owners(const struct tfd_owner_in *oi, struct tfd_role_line **roles)
{
	const struct tfd_cap_calls *in = oi->in;
	size_t nt = in->host->nthreads;
	int *owner = xmalloc((nt + 1) * sizeof(int)), *first = xmalloc((nt + 1) * sizeof(int));
	uint64_t *best = xcalloc(nt + 1, sizeof(uint64_t));
	struct tfd_role_line *rl = NULL;
	struct imap votes = {0};
	bool mixed = false; /* a thread of several owners: a second walk for its roles */
	/* a run of calls of one thread and owner counted before its votes go
	 * in (a thread's calls come together, mostly of one owner): the
	 * owner is the same as when each call's vote goes in alone, the first
	 * to reach the thread's most votes */
	uint32_t rt = UINT32_MAX;
	int ro = -1;
	size_t rn = 0;

	struct tfd_cap_walk w;
	struct tfd_cap_call cc;

	for (size_t t = 0; t < nt; t++)
		owner[t] = first[t] = -1;
	for (tfd_cap_walk_begin(&w, in, in->events); tfd_cap_walk_next(&w, &cc);) {
		int si = cc.stage, sg = si >= 0 ? oi->seg_of[si] : -1, o;
		uint32_t t = cc.thread;

		if (sg < 0 || oi->segs[sg].kind != TFD_SEG_INPUT || t >= nt)
			continue;
		o = oi->segs[sg].owner;
		if (rn && (t != rt || o != ro)) {
			vote_run(&votes, best, owner, rt, ro, rn);
			rn = 0;
		}
		if (first[t] == -1) {
			first[t] = o;
		} else if (first[t] != o && first[t] != -2) {
			first[t] = -2; /* several owners */
			mixed = true;
		}
		rt = t;
		ro = o;
		rn++;
	}
	tfd_cap_walk_end(&w);
	if (rn)
		vote_run(&votes, best, owner, rt, ro, rn);
	for (tfd_cap_walk_begin(&w, in, in->events); mixed && tfd_cap_walk_next(&w, &cc);) {
		int si = cc.stage, sg = si >= 0 ? oi->seg_of[si] : -1;
		uint32_t t = cc.thread;

		if (sg < 0 || oi->segs[sg].kind != TFD_SEG_INPUT || t >= nt || first[t] != -2)
			continue;
		if (!rl)
			rl = xcalloc(nt + 1, sizeof(*rl));
		/* sized by the votes: the thread's calls counted above */
		if (!rl[t].v)
			rl[t].v = xmalloc(roles_on(&votes, t, oi->nstages) * sizeof(*rl[t].v));
		tfd_cap_walk_times(&w, &cc);
		rl[t].v[rl[t].n++] = (struct tfd_role){cc.end, oi->segs[sg].owner};
	}
	tfd_cap_walk_end(&w);
	for (size_t t = 0; rl && t < nt; t++)
		if (rl[t].n)
			qsort(rl[t].v, rl[t].n, sizeof(*rl[t].v), cmp_role);
	imap_free(&votes);
	free(best);
	free(first);
	*roles = rl;
	return owner;
}

/* TFDOCTOR_STREAM=1: the owners counted (owners_from_counts()) against
 * those the walk finds, a line on stderr. */
static void owners_check(const struct tfd_owner_in *oi, const int *counted)
{
	struct tfd_role_line *rl = NULL;
	int *walked = walk_owners(oi, &rl);
	size_t nt = oi->in->host->nthreads, t = 0;
	const char *host = oi->in->host->name ? oi->in->host->name : "?";

	while (t < nt && walked[t] == counted[t])
		t++;
	if (t == nt && !rl)
		fprintf(stderr,
			"tfdoctor: stream: %s: root %d: its %zu threads' owners counted as "
			"walked\n",
			host, oi->in->root, nt);
	else if (t == nt) /* (the walk found a thread of several owners) */
		fprintf(stderr,
			"tfdoctor: stream: %s: root %d: its threads' owners counted differ from "
			"the walk's, which found roles\n",
			host, oi->in->root);
	else
		fprintf(stderr,
			"tfdoctor: stream: %s: root %d: its threads' owners counted differ from "
			"the walk's at thread %zu\n",
			host, oi->in->root, t);
	for (size_t k = 0; rl && k < nt; k++)
		free(rl[k].v);
	free(rl);
	free(walked);
}

/* Each thread's owner (walk_owners()), from the counts of its calls
 * where they tell it. */
static int *thread_owners(const struct tfd_owner_in *oi, struct tfd_role_line **roles)
{
	size_t nt = oi->in->host->nthreads;
	int *owner = xmalloc((nt + 1) * sizeof(int));

	for (size_t t = 0; t < nt; t++)
		owner[t] = -1;
	if (!owners_from_counts(oi, owner)) {
		free(owner);
		return walk_owners(oi, roles);
	}
	if (tfd_env_flag("TFDOCTOR_STREAM"))
		owners_check(oi, owner);
	*roles = NULL;
	return owner;
}

/* A function thread no input segment owns (TensorFlow runs a function
 * without inter-op parallelism on a pool thread, the inter-op pool's or
 * the private one, which may also run the consumer's calls or another
 * map's function): with several maps, each of its calls votes for the map
 * whose input side ended a call last before it started (the element it was
 * given to run); the thread is a map's when at least DISPATCH_SHARE of its
 * votes are, else it stays unattributed (maps sharing one pool cannot be
 * told apart by thread). */
#define DISPATCH_SHARE 0.75

/* The latest of v[0..n) (sorted) at or before t, or INT64_MIN. */
static int64_t latest_before(const int64_t *v, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? v[lo - 1] : INT64_MIN;
}

static void dispatch_votes(const struct tfd_owner_in *oi, int *owner)
{
	const struct tfd_cap_calls *in = oi->in;
	size_t nt = in->host->nthreads, ns = oi->nstages;
	VEC(int64_t) *ends = xcalloc(ns, sizeof(*ends));
	uint32_t *votes = xcalloc(nt * ns, sizeof(uint32_t));
	const uint8_t *fp = in->fns->buf, *fend = fp ? fp + in->fns->len : NULL;
	struct tfd_fn_call f = {0, 0, 0, 0};

	struct tfd_cap_walk w;
	struct tfd_cap_call cc;

	for (tfd_cap_walk_begin(&w, in, in->events); tfd_cap_walk_next(&w, &cc);) {
		uint32_t t = cc.thread;

		if (t < nt && owner[t] >= 0 && oi->fn_of[owner[t]] >= 0) {
			tfd_cap_walk_times(&w, &cc);
			vec_push(&ends[owner[t]], cc.end);
		}
	}
	tfd_cap_walk_end(&w);
	for (size_t q = 0; q < ns; q++)
		if (ends[q].n)
			tfd_sort_i64(ends[q].v, ends[q].n);
	while (tfd_fns_next(&fp, fend, &f)) {
		int64_t best = INT64_MIN;
		int bq = -1;

		if (f.thread >= nt || owner[f.thread] != -1 ||
		    tfd_fn_foreign(in->troots, f.thread, f.start_ns, in->root))
			continue;
		for (size_t q = 0; q < ns; q++) {
			int64_t e = latest_before(ends[q].v, ends[q].n, f.start_ns);

			if (ends[q].n && e > best) {
				best = e;
				bq = (int)q;
			}
		}
		if (bq >= 0)
			votes[(size_t)f.thread * ns + (size_t)bq]++;
	}
	for (size_t t = 0; t < nt; t++) {
		uint64_t all = 0, top = 0;
		int tq = -1;

		if (owner[t] != -1)
			continue;
		for (size_t q = 0; q < ns; q++) {
			all += votes[t * ns + q];
			if (votes[t * ns + q] > top) {
				top = votes[t * ns + q];
				tq = (int)q;
			}
		}
		if (tq >= 0 && (double)top >= DISPATCH_SHARE * (double)all)
			owner[t] = tq;
	}
	for (size_t q = 0; q < ns; q++)
		vec_free(&ends[q]);
	free(ends);
	free(votes);
}

/* A thread no input segment of the pipeline owns, whose function calls
 * mostly ran for another pipeline (a validation pass's workers beside the
 * training pipeline's), is no map's: one of the pipeline's maps would have
 * taken it by its dispatches, or as its only map. */
static void foreign_threads(const struct tfd_owner_in *oi, int *owner)
{
	const struct tfd_cap_calls *in = oi->in;
	size_t nt = in->host->nthreads;
	const uint8_t *fp = in->fns->buf, *fend = fp ? fp + in->fns->len : NULL;
	struct tfd_fn_call f = {0, 0, 0, 0};
	int64_t *score; /* per thread: foreign calls less its own */

	if (!in->troots || !in->troots->runs)
		return;
	score = xcalloc(nt + 1, sizeof(int64_t));
	if (in->troots->fn_n) {
		/* from the host's tallies: a call is another root's when the run
		 * before it was a root's still running, and not this root's */
		const struct tfd_thread_roots *tr = in->troots;

		for (size_t t = 0; t < nt && t < tr->nthreads; t++)
			if (owner[t] == -1)
				score[t] = tfd_fn_foreign_score(tr, (uint32_t)t, in->root);
	} else {
		while (tfd_fns_next(&fp, fend, &f))
			if (f.thread < nt && owner[f.thread] == -1)
				score[f.thread] +=
				    tfd_fn_foreign(in->troots, f.thread, f.start_ns, in->root) ? 1
											       : -1;
	}
	for (size_t t = 0; t < nt; t++)
		if (owner[t] == -1 && score[t] > 0)
			owner[t] = TFD_OWNER_FOREIGN;
	free(score);
}

/* Which map each function thread's calls belong to (tfd_owners_free() it): the
 * input segment owning the thread; else, for a function call on a pool
 * thread (not inside an iterator call: those ran inline and are their
 * stage's), the pipeline's one map when there is one, or the map that
 * dispatched its calls (dispatch_votes). */
struct tfd_op_owners tfd_owners_make(const struct tfd_owner_in *oi)
{
	struct tfd_op_owners ow = {NULL, 0, -1, oi->fn_of, NULL, oi->in->host->nthreads};

	ow.owner = thread_owners(oi, &ow.roles);
	foreign_threads(oi, (int *)ow.owner);
	for (size_t i = 0; i < oi->nstages; i++)
		if (oi->fn_of[i] >= 0) {
			ow.only_map = (int)i;
			ow.nmaps++;
		}
	if (ow.nmaps > 1)
		dispatch_votes(oi, (int *)ow.owner);
	return ow;
}

void tfd_owners_free(struct tfd_op_owners *ow)
{
	for (size_t t = 0; ow->roles && t < ow->nthreads; t++)
		free(ow->roles[t].v);
	free(ow->roles);
	free((void *)ow->owner);
}

/* Each map's function ops (tfd_stage_fn_ops): they are summed per thread,
 * so a thread of several roles gives its sums to the map that ran most of
 * its function calls (`runs`, per thread and map). */
void tfd_owners_fn_ops(struct tfd_pipeline *p, const struct tfd_fns *fns,
		       const struct tfd_op_owners *ow, struct imap *runs)
{
	size_t nt = ow->nthreads;
	struct tfd_op_owners by = *ow;
	int *owner = NULL;

	for (size_t t = 0; ow->roles && t < nt; t++) {
		size_t top = 0, v;

		if (!ow->roles[t].n)
			continue;
		if (!owner) {
			owner = xmalloc((nt + 1) * sizeof(int));
			memcpy(owner, ow->owner, nt * sizeof(int));
		}
		for (size_t q = 0; q < p->nstages; q++)
			if (imap_get(runs, ((uint64_t)t << 32) | (uint32_t)q, &v) && v > top) {
				top = v;
				owner[t] = (int)q;
			}
	}
	if (owner)
		by.owner = owner;
	by.roles = NULL;
	tfd_stage_fn_ops(p, fns, &by);
	free(owner);
}

/* The runs of calls of one root on the threads that ran function calls:
 * the host's calls are a thread's after another, each thread's by start;
 * a run is kept as the earliest end among its calls. Counted (runs NULL)
 * or written; how many. */
static size_t root_runs(const struct host_ctx *c, bool events, const bool *runs_fns,
			struct tfd_thread_roots *tr, struct tfd_role *runs)
{
	size_t w = 0;
	uint32_t pt = UINT32_MAX;
	int pr = -1;
	struct tfd_host_walk hw;
	struct tfd_call_rec cr;

	for (tfd_host_walk_begin(&hw, c, events); tfd_host_walk_next(&hw, &cr);) {
		int r = (size_t)cr.iter < c->iters.n ? c->root[cr.iter] : -1;
		uint32_t t = cr.thread;

		if (r < 0 || !runs_fns[t])
			continue;
		if (t != pt || r != pr) {
			pt = t;
			pr = r;
			w++;
			if (!runs)
				tr->off[t + 1]++;
			else
				runs[w - 1] = (struct tfd_role){INT64_MAX, r};
		}
		if (runs) {
			tfd_host_walk_times(&hw, &cr);
			if (cr.end < runs[w - 1].end_ns)
				runs[w - 1].end_ns = cr.end;
		}
	}
	tfd_host_walk_end(&hw);
	return w;
}

/* The root of the last run that had ended on thread t by `at`, when that
 * root's pipeline still runs then (its last call ends at or after `at`);
 * -1: none (no run ended yet, or its pipeline ended). */
static int running_root(const struct tfd_thread_roots *tr, uint32_t t, int64_t at)
{
	const struct tfd_role *v = tr->runs + tr->off[t];
	size_t k = tfd_roles_ended(v, tr->off[t + 1] - tr->off[t], at);

	return k && tr->last_end[v[k - 1].owner] >= at ? v[k - 1].owner : -1;
}

static void fns_unindex(struct tfd_thread_roots *tr)
{
	free(tr->marks);
	free(tr->mark_off);
	free(tr->fn_sorted);
	free(tr->fn_n);
	free(tr->fn_active);
	imap_free(&tr->fn_active_root);
	tr->marks = NULL;
	tr->mark_off = NULL;
	tr->fn_sorted = NULL;
	tr->fn_n = tr->fn_active = NULL;
}

void tfd_fns_index(const struct tfd_fns *fns, struct tfd_thread_roots *tr)
{
	size_t nt = tr->nthreads, nm = 0, cap = fns->n / TFD_FNS_MARK + nt + 1;
	const uint8_t *fp = fns->buf, *fend = fp ? fp + fns->len : NULL, *at = fp;
	const char *form = getenv("TFDOCTOR_FN_CALLS");
	struct tfd_fn_call f = {0, 0, 0, 0}, prev = f;
	uint32_t pt = UINT32_MAX, k = 0;
	int64_t last = INT64_MIN;

	if (form && strcmp(form, "whole") == 0)
		return;
	tr->marks = xmalloc(cap * sizeof(*tr->marks));
	tr->mark_off = xcalloc(nt + 2, sizeof(uint32_t));
	tr->fn_sorted = xmalloc((nt + 1) * sizeof(bool));
	tr->fn_n = xcalloc(nt + 1, sizeof(uint32_t));
	tr->fn_active = xcalloc(nt + 1, sizeof(uint32_t));
	for (size_t t = 0; t <= nt; t++)
		tr->fn_sorted[t] = true;
	for (; tfd_fns_next(&fp, fend, &f); prev = f, at = fp) {
		int q;

		if (f.thread >= nt || (pt != UINT32_MAX && f.thread < pt)) {
			fns_unindex(tr); /* not in thread order: read whole */
			return;
		}
		if (f.thread != pt) {
			for (uint32_t t = pt == UINT32_MAX ? 0 : pt + 1; t <= f.thread; t++)
				tr->mark_off[t] = (uint32_t)nm;
			pt = f.thread;
			k = 0;
			last = INT64_MIN;
		}
		if (k++ % TFD_FNS_MARK == 0) {
			if (nm == cap) {
				cap *= 2;
				tr->marks = xrealloc(tr->marks, cap * sizeof(*tr->marks));
			}
			tr->marks[nm++] =
			    (struct tfd_fns_mark){(size_t)(at - fns->buf), prev, f.start_ns};
		}
		tr->fn_sorted[f.thread] &= f.start_ns >= last;
		last = f.start_ns;
		tr->fn_n[f.thread]++;
		/* tfd_fn_foreign()'s test, by root */
		if ((q = running_root(tr, f.thread, f.start_ns)) >= 0) {
			uint64_t key = (uint64_t)f.thread << 32 | (uint32_t)q;
			size_t n = 0;

			tr->fn_active[f.thread]++;
			imap_get(&tr->fn_active_root, key, &n);
			imap_put(&tr->fn_active_root, key, n + 1);
		}
	}
	for (uint32_t t = pt == UINT32_MAX ? 0 : pt + 1; t <= nt; t++)
		tr->mark_off[t] = (uint32_t)nm;
	tr->mark_off[nt + 1] = (uint32_t)nm;
}

int64_t tfd_fn_foreign_score(const struct tfd_thread_roots *tr, uint32_t t, int root)
{
	size_t mine = 0;

	if (!tr->fn_n || t >= tr->nthreads)
		return 0;
	imap_get(&tr->fn_active_root, (uint64_t)t << 32 | (uint32_t)root, &mine);
	return 2 * ((int64_t)tr->fn_active[t] - (int64_t)mine) - tr->fn_n[t];
}

bool tfd_fns_thread(const struct tfd_thread_roots *tr, const struct tfd_fns *fns, uint32_t t,
		    int64_t from, int64_t until, struct tfd_fns_cursor *cur)
{
	size_t lo, hi;

	if (!tr->marks || t >= tr->nthreads || tr->mark_off[t] == tr->mark_off[t + 1])
		return false;
	lo = tr->mark_off[t];
	hi = tr->mark_off[t + 1];
	/* the last mark before from: the calls before it start earlier */
	if (tr->fn_sorted[t] && from != INT64_MIN)
		while (hi - lo > 1) {
			size_t mid = lo + (hi - lo) / 2;

			if (tr->marks[mid].start < from)
				lo = mid;
			else
				hi = mid;
		}
	cur->p = fns->buf + tr->marks[lo].off;
	cur->f = tr->marks[lo].prev;
	hi = tr->mark_off[t + 1];
	cur->end =
	    hi < tr->mark_off[tr->nthreads] ? fns->buf + tr->marks[hi].off : fns->buf + fns->len;
	cur->until = until;
	cur->sorted = tr->fn_sorted[t];
	return true;
}

bool tfd_fns_cursor_next(struct tfd_fns_cursor *cur)
{
	return tfd_fns_next(&cur->p, cur->end, &cur->f) &&
	       (!cur->sorted || cur->f.start_ns < cur->until);
}

void tfd_thread_roots_make(const struct host_ctx *c, const struct tfd_graph_groups *g,
			   struct tfd_thread_roots *tr, bool events)
{
	size_t nt = c->h->nthreads, w;
	const uint8_t *fp = c->fns.buf, *fend = fp ? fp + c->fns.len : NULL;
	struct tfd_fn_call f = {0, 0, 0, 0};
	bool *runs_fns;
	struct tfd_root_walk rw;
	struct tfd_root_call rc;

	memset(tr, 0, sizeof(*tr));
	if (g->n < 2 || !c->fns.n)
		return;
	runs_fns = xcalloc(nt + 1, sizeof(bool));
	while (tfd_fns_next(&fp, fend, &f))
		if (f.thread < nt)
			runs_fns[f.thread] = true;
	tr->nthreads = nt;
	tr->last_end = xmalloc((c->iters.n + 1) * sizeof(int64_t));
	for (size_t i = 0; i < c->iters.n; i++)
		tr->last_end[i] = INT64_MIN;
	/* a pipeline runs until its consumer's last call ends: by the root's
	 * own calls (an iterator whose id repeats in each epoch's pipeline,
	 * a source's, is kept as one, under the first epoch's root) */
	for (tfd_root_walk_begin(&rw, c, c->root_list, c->nroot_list);
	     tfd_root_walk_next(&rw, &rc);)
		if (rc.end_ns > tr->last_end[rc.iter])
			tr->last_end[rc.iter] = rc.end_ns;
	tr->off = xcalloc(nt + 1, sizeof(uint32_t));
	w = root_runs(c, events, runs_fns, tr, NULL);
	for (size_t t = 0; t < nt; t++)
		tr->off[t + 1] += tr->off[t];
	tr->runs = xmalloc((w + 1) * sizeof(*tr->runs));
	root_runs(c, events, runs_fns, tr, tr->runs);
	for (size_t t = 0; t < nt; t++)
		if (tr->off[t + 1] - tr->off[t] > 1)
			qsort(tr->runs + tr->off[t], tr->off[t + 1] - tr->off[t], sizeof(*tr->runs),
			      cmp_role);
	free(runs_fns);
	tfd_fns_index(&c->fns, tr);
}

void tfd_thread_roots_free(struct tfd_thread_roots *tr)
{
	free(tr->off);
	free(tr->runs);
	free(tr->last_end);
	fns_unindex(tr);
	memset(tr, 0, sizeof(*tr));
}

bool tfd_fn_foreign(const struct tfd_thread_roots *tr, uint32_t t, int64_t at, int root)
{
	int q;

	if (!tr || !tr->runs || t >= tr->nthreads)
		return false;
	q = running_root(tr, t, at);
	return q >= 0 && q != root;
}
