/* capacity.c - the throughput view of a pipeline: which stage, if faster,
 * would raise the number of elements per second it delivers.
 *
 * Across an asynchronous boundary the consumer's wait shows only the tail
 * of the producer's work, so blocking time cannot name the limit there
 * (throughput-model.md 1). Instead, over the steady-state window (the root
 * calls after warm-up), every stage's own work is measured from all its
 * calls, not only those overlapping a wait:
 *   - a synchronous stage's work is its self time, on the thread it runs on;
 *   - an async stage's consumer-side calls only wait: no work;
 *   - an async map's user function is measured from its function events:
 *     InstantiatedCapturedFunction::Run on a worker, or ::RunAsync plus the
 *     ExecutorState::Process chunks that share its step id (TensorFlow runs
 *     the function's ops on the inter-op pool).
 * Stages that share threads form a segment: the consumer's stages, the input
 * side of each async stage (one reader thread for prefetch and parallel map,
 * cycle_length threads for parallel interleave), and each async map's
 * function (its parallelism in workers). A segment's capacity is
 * parallelism / work per root element; the lowest capacity limits the
 * pipeline, and its busiest stage is the bottleneck. When a map's function
 * left no events, its capacity is unknown; if every measured segment could
 * go faster than what was observed while the consumer waits, the map whose
 * consumer side waits most is inferred to be the limit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/families.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/select.h"
#include "tfd/vec.h"

/* a measured limit this much faster than observed leaves room for an
 * unmeasured one */
#define INFER_SLACK 1.25

static bool is_map_like(const char *family)
{
	return tfd_family_has(family, TFD_FAM_MAP_FN);
}

static bool is_interleave(const char *family)
{
	return tfd_family_has(family, TFD_FAM_INTERLEAVE);
}

struct ctx {
	struct tfd_pipeline *p;
	const struct tfd_cap_calls *in;
	VEC(struct tfd_segment) segs;
	int *seg_of;	      /* per stage */
	int *input_of;	      /* per stage: its input segment, -1 */
	int *fn_of;	      /* per stage: its function segment, -1 */
	int64_t *wait_ns;     /* per stage: consumer-side time of an async stage */
	uint64_t *fn_unknown; /* per stage: function runs whose work was not captured */
	int *over;	      /* per stage: the stage it named a thread over (own_top), -1 */
	/* the window's function runs placed with a map, and those on a thread
	 * no stage owns */
	uint64_t fn_placed, fn_unplaced;
	struct imap seg_threads; /* (segment, thread) seen */
	int64_t t0, t1;
	uint64_t n;
};

/* One iterator's parallelism series ch[0..n) (time order) over [t0, t1),
 * weighted by time: the value in force at t0 is the last change before it
 * (the first one when none is); *lo and *hi the least and most in force. */
static double series_over(const struct tfd_par_change *ch, size_t n, int64_t t0, int64_t t1,
			  double *lo, double *hi)
{
	size_t k = 0;
	double v = ch[0].value, sum = 0;
	int64_t at = t0;

	while (k + 1 < n && ch[k + 1].t_ns <= t0)
		k++;
	v = ch[k].value;
	*lo = *hi = v;
	for (k++; k < n && ch[k].t_ns < t1; k++) {
		sum += v * (double)(ch[k].t_ns - at);
		at = ch[k].t_ns;
		v = ch[k].value;
		*lo = fmin(*lo, v);
		*hi = fmax(*hi, v);
	}
	sum += v * (double)(t1 - at);
	return t1 > t0 ? sum / (double)(t1 - t0) : v;
}

/* Parameter `what` (enum tfd_param_kind) stage q's calls carried over the
 * window, weighted by time (its iterators' largest: instances of one
 * stage), 0 when no call said a number (parameters over time, not the
 * first call's: AUTOTUNE ramps up from 1, and TensorFlow writes
 * "unavailable" when the map's lock is busy). */
static double param_over(const struct ctx *c, int q, int what, double *lo, double *hi)
{
	const struct tfd_cap_calls *in = c->in;
	double best = 0;

	*lo = *hi = 0;
	for (size_t k = 0; k < in->npar;) {
		int it = in->par[k].iter, w = in->par[k].what;
		size_t e = k;

		while (e < in->npar && in->par[e].iter == it && in->par[e].what == w)
			e++;
		if (in->iter_stage[it] == q && w == what) {
			double l, h, v = series_over(in->par + k, e - k, c->t0, c->t1, &l, &h);

			if (v > best) {
				best = v;
				*lo = l;
				*hi = h;
			}
		}
		k = e;
	}
	return best;
}

static int new_seg(struct ctx *c, enum tfd_segment_kind kind, int owner)
{
	struct tfd_segment sg;

	memset(&sg, 0, sizeof(sg));
	sg.kind = kind;
	sg.owner = owner;
	sg.top_stage = -1;
	sg.parallelism = 1;
	sg.known = true;
	vec_push(&c->segs, sg);
	return (int)c->segs.n - 1;
}

static void seen_thread(struct ctx *c, int seg, uint32_t thread)
{
	uint64_t key = ((uint64_t)(uint32_t)seg << 32) | thread;
	size_t dummy;

	if (seg < 0 || imap_get(&c->seg_threads, key, &dummy))
		return;
	imap_put(&c->seg_threads, key, 0);
	c->segs.v[seg].nthreads++;
}

/* Segments follow the stage tree: an async stage's input starts a new one. */
static void assign_segments(struct ctx *c)
{
	struct tfd_pipeline *p = c->p;
	size_t left = p->nstages;

	new_seg(c, TFD_SEG_CONSUMER, -1);
	for (size_t i = 0; i < p->nstages; i++)
		c->seg_of[i] = c->input_of[i] = c->fn_of[i] = -1;
	c->seg_of[0] = 0;
	/* stages are in pre-order, so parents come first; a stage appended out
	 * of order (no path from the root) keeps -1 */
	for (size_t pass = 0; pass < 2 && left; pass++)
		for (size_t i = 1; i < p->nstages; i++) {
			const struct tfd_stage *s = &p->stages[i];
			int q = s->parent;

			if (c->seg_of[i] >= 0 || q < 0 || c->seg_of[q] < 0)
				continue;
			if (p->stages[q].is_async && !p->stages[q].is_device_generator) {
				if (c->input_of[q] < 0)
					c->input_of[q] = new_seg(c, TFD_SEG_INPUT, q);
				c->seg_of[i] = c->input_of[q];
			} else {
				c->seg_of[i] = c->seg_of[q];
			}
			left--;
		}
	for (size_t i = 0; i < p->nstages; i++)
		if (p->stages[i].is_async && is_map_like(p->stages[i].family))
			c->fn_of[i] = new_seg(c, TFD_SEG_FUNCTION, (int)i);
}

/* What a window call of filter stage s waited, on average, for the ops of
 * its predicate when they ran on another thread (struct tfd_fns' waits):
 * a predicate is cheap, and one whose ops were under a fifth of its time
 * (TFD_PREDICATE_WAIT_MIN of it waiting) queued behind other stages' work
 * on the pool they share, which is no work of the filter's (a filter after
 * an AUTOTUNE map had looked busier than the map: 272 ms of predicate runs
 * held 3.4 ms of ops). A map's or flat_map's function waits too, but
 * that wait can be its own calls' contention for the cores: it stays. */
static double predicate_wait_per_call(const struct tfd_fns *fns, const struct tfd_stage *s)
{
	uint64_t calls = 0;
	int64_t run = 0, wait = 0;

	if (!fns || !fns->waits.n || strcmp(s->family, "Filter") != 0)
		return 0.0;
	for (size_t k = 0; k < fns->waits.n; k++) {
		const struct tfd_inline_wait *w = &fns->waits.v[k];
		char *path = tfd_iter_stage_path(w->iter);

		if (strcmp(path, s->path) == 0) {
			calls += w->calls;
			run = sat_add(run, w->run_ns);
			wait = sat_add(wait, w->wait_ns);
		}
		free(path);
	}
	if (!calls || (double)wait < TFD_PREDICATE_WAIT_MIN * (double)run)
		return 0.0;
	return (double)wait / (double)calls;
}

/* Own work of every stage over the window, from every call that started in
 * it (summed as the pipeline's calls were aggregated); a filter's less its
 * predicate's wait for a thread to run its ops. */
static void stage_work(struct ctx *c)
{
	const struct tfd_cap_calls *in = c->in;

	for (size_t si = 0; si < c->p->nstages; si++) {
		struct tfd_stage *s = &c->p->stages[si];

		s->window_calls += in->window[si].calls;
		if (s->is_async) {
			c->wait_ns[si] = sat_add(c->wait_ns[si], in->window[si].self_ns);
		} else {
			double w =
			    predicate_wait_per_call(in->fns, s) * (double)in->window[si].calls;
			int64_t own = in->window[si].self_ns;

			own = w >= (double)own ? 0 : own - (int64_t)w;
			s->work_ns = sat_add(s->work_ns, own);
		}
	}
	for (size_t i = 0; i < in->nstage_threads; i++) {
		size_t si = (size_t)(in->stage_threads[i] >> 32);

		if (!c->p->stages[si].is_async || si == 0)
			seen_thread(c, c->seg_of[si], (uint32_t)in->stage_threads[i]);
	}
}

/* Whether map q's function only passes its input through (an identity,
 * a projection such as the one snapshot() and enumerate() add): TensorFlow
 * then skips running it and records no run (RunShortCircuit), so a map
 * with no run at all in a window where every run was placed and other maps'
 * were seen does no work of its own, rather than work not captured. */
static bool passes_through(const struct ctx *c, int q)
{
	return c->p->stages[q].fn_calls == 0 && c->fn_placed > 0 && c->fn_unplaced == 0;
}

typedef VEC(int64_t) int64_vec;

/* Function call f of the host: another pipeline's, or work of the map ow
 * finds for it (its runs on a thread of several roles counted in runs,
 * its work in work[] when it started in the window). */
static void function_call(struct ctx *c, const struct tfd_op_owners *ow,
			  const struct tfd_fn_call *f, struct imap *runs, int64_vec *work)
{
	int q = tfd_op_owner_at(ow, f->thread, f->start_ns);

	if (tfd_fn_foreign(c->in->troots, f->thread, f->start_ns, c->in->root))
		return; /* another pipeline's, on a thread both used */
	if (ow->roles && ow->roles[f->thread].n && q >= 0 && c->fn_of[q] >= 0) {
		uint64_t key = ((uint64_t)f->thread << 32) | (uint32_t)q;
		size_t v;

		imap_put(runs, key, imap_get(runs, key, &v) ? v + 1 : 1);
	}
	if (f->start_ns < c->t0 || f->start_ns >= c->t1)
		return;
	c->fn_unplaced += q < 0;
	if (q < 0 || c->fn_of[q] < 0)
		return;
	c->fn_placed++;
	c->p->stages[q].fn_calls++;
	if (f->work_thread == TFD_FN_UNKNOWN) {
		c->fn_unknown[q]++;
		return;
	}
	seen_thread(c, c->fn_of[q], f->work_thread);
	c->p->stages[q].fn_work_ns = sat_add(c->p->stages[q].fn_work_ns, f->work_ns);
	vec_push(&work[q], f->work_ns);
}

/* User-function work of every async map, from the host's function calls. */
static void function_work(struct ctx *c)
{
	struct tfd_owner_in oi = {c->in, c->p->nstages, c->seg_of, c->fn_of, c->segs.v};
	struct tfd_op_owners ow = tfd_owners_make(&oi);
	const uint8_t *fp = c->in->fns->buf, *fend = fp ? fp + c->in->fns->len : NULL;
	struct tfd_fn_call fc = {0, 0, 0, 0}, *f = &fc;
	int64_vec *work = xcalloc(c->p->nstages, sizeof(*work));
	struct imap runs = {0}; /* (thread, map): runs on a thread of several roles */

	if (c->in->troots && c->in->troots->marks) {
		/* thread by thread: a thread of several roles whole (its runs),
		 * the others from the window's start to its end */
		const struct tfd_thread_roots *tr = c->in->troots;
		struct tfd_fns_cursor cur;

		for (uint32_t t = 0; t < tr->nthreads; t++) {
			bool whole = ow.roles && ow.roles[t].n;

			if (!tfd_fns_thread(tr, c->in->fns, t, whole ? INT64_MIN : c->t0,
					    whole ? INT64_MAX : c->t1, &cur))
				continue;
			while (tfd_fns_cursor_next(&cur))
				function_call(c, &ow, &cur.f, &runs, work);
		}
	} else {
		while (tfd_fns_next(&fp, fend, f))
			function_call(c, &ow, f, &runs, work);
	}
	for (size_t q = 0; q < c->p->nstages; q++) {
		tfd_stage_uneven_calls(&c->p->stages[q], work[q].v, work[q].n);
		vec_free(&work[q]);
	}
	free(work);
	tfd_owners_fn_ops(c->p, c->in->fns, &ow, &runs);
	imap_free(&runs);
	tfd_owners_free(&ow);
}

/* Without a capacity window: only each map's function ops, by the same
 * thread ownership the model would use (its structure needs no window). */
static void ops_only(struct ctx *c)
{
	struct tfd_pipeline *p = c->p;
	struct tfd_op_owners ow;

	if (!c->in->fns->nsums)
		return;
	c->seg_of = xmalloc(p->nstages * sizeof(int));
	c->input_of = xmalloc(p->nstages * sizeof(int));
	c->fn_of = xmalloc(p->nstages * sizeof(int));
	assign_segments(c);
	{
		struct tfd_owner_in oi = {c->in, p->nstages, c->seg_of, c->fn_of, c->segs.v};

		ow = tfd_owners_make(&oi);
	}
	tfd_stage_fn_ops(p, c->in->fns, &ow);
	tfd_owners_free(&ow);
	vec_free(&c->segs);
	imap_free(&c->seg_threads);
	free(c->seg_of);
	free(c->input_of);
	free(c->fn_of);
}

/* What follows ancestor up's long name in stage si's: '[' when si is in a
 * numbered input of up (an interleave's instance, a zip's branch), ':' in
 * its one unnumbered input; '\0' when si's long name does not go on from
 * up's. */
static char after_ancestor(const struct tfd_pipeline *p, int up, int si)
{
	size_t n = strlen(p->stages[up].long_name);

	return strncmp(p->stages[si].long_name, p->stages[up].long_name, n) == 0
		   ? p->stages[si].long_name[n]
		   : '\0';
}

/* How many instances of input segment g's async stage run at once: one,
 * or, inside the datasets an interleave makes of its inputs (a parallel
 * map over each file's records), one an open input, each with its own
 * reader thread and worker slots: as many as its threads show, up to the
 * interleave's cycle length (the per-file maps of a cycle 2 had been one
 * thread busy 146 % and a limit below the rate seen; halving the maps'
 * work measured 1.33x, the reads' 1.06x). */
static double instances(const struct ctx *c, const struct tfd_segment *g)
{
	const struct tfd_pipeline *p = c->p;
	int below = g->owner, up = below >= 0 ? p->stages[below].parent : -1;
	double cyc;

	while (up >= 0 && !is_interleave(p->stages[up].family)) {
		below = up;
		up = p->stages[up].parent;
	}
	if (up < 0 || g->nthreads < 2 || after_ancestor(p, up, below) != '[')
		return 1; /* outside, or in the interleave's own input (its files) */
	cyc = tfd_cap_param_pos(&p->stages[up], "cycle_length");
	return cyc > 0 ? fmin(cyc, (double)g->nthreads) : (double)g->nthreads;
}

/* An async stage's input segment g: the buffer_limit over the window (said,
 * not used) and its parallelism: its instances (instances()), or, for a
 * parallel interleave, the least of its cycle_length and its parallelism
 * over the window (the first call's cycle_length when no call said one),
 * else the threads seen. */
static void input_params(const struct ctx *c, struct tfd_segment *g, const struct tfd_stage *o)
{
	double cyc, par;

	param_over(c, g->owner, TFD_PARAM_BUFFER, &g->buf_lo, &g->buf_hi);
	if (!is_interleave(o->family)) {
		g->parallelism = instances(c, g);
		return;
	}
	cyc = param_over(c, g->owner, TFD_PARAM_CYCLE, &g->cyc_lo, &g->cyc_hi);
	par = param_over(c, g->owner, TFD_PARAM_PARALLELISM, &g->par_lo, &g->par_hi);
	if (!(cyc > 0))
		cyc = tfd_cap_param_pos(o, "cycle_length");
	g->parallelism = cyc > 0 && par > 0 ? fmin(cyc, par) : cyc > 0 ? cyc : par;
	if (g->parallelism <= 0) {
		g->parallelism = g->nthreads ? (double)g->nthreads : 1;
		g->parallelism_observed = true;
	}
}

/* Work of the stages in segment sg (before segments are finished). */
static int64_t input_busy(const struct ctx *c, int sg)
{
	int64_t b = 0;

	for (size_t i = 0; i < c->p->nstages; i++)
		if (c->seg_of[i] == sg)
			b = sat_add(b, c->p->stages[i].work_ns);
	return b;
}

/* A map's function segment with instances (instances()): each instance
 * has its slots, held from the read through the function, but the
 * functions all run on the threads the capture shows them on (the shared
 * pool): the segment delivers at most those threads over the function's
 * own work (fn_busy). When that is the lower bound, the segment is those
 * threads (the per-file AUTOTUNE maps of a cycle 4, 8 slots busy 21 %,
 * run on 2 threads busy 82 %). */
static void pool_bound(struct tfd_segment *g, int64_t fn_busy)
{
	double thr = g->nthreads ? (double)g->nthreads : 1;

	if (fn_busy > 0 && thr * (double)g->busy_ns < g->parallelism * (double)fn_busy) {
		g->parallelism = thr;
		g->parallelism_observed = true;
		g->busy_ns = fn_busy;
	}
}

/* Stage i's own part of its time on its thread: for a map or a filter
 * whose function's op events cover its calls, what those ops ran (every
 * op, Python's too: a sleep is its own wait); the rest of its calls waits
 * for a thread of the pool its ops run on, which cheaper work beside it
 * shortens as well. Any other stage's time is its own. */
static double own_work(const struct tfd_pipeline *p, size_t i)
{
	const struct tfd_stage *s = &p->stages[i];
	double ops = tfd_fn_ops_time(s);

	if (!s->nfn_ops || s->is_async || s->self_all_ns <= 0 || !tfd_fn_is_work(s))
		return (double)s->work_ns;
	return (double)s->work_ns * fmin(1.0, ops / (double)s->self_all_ns);
}

/* The function work of the async map that stage i, a map or a filter
 * whose function's ops were seen, reads directly (its function segment's,
 * reads included), or 0; *map (may be NULL) that map, -1 for none: while
 * i consumes, that map's workers refill the elements it took, on the pool
 * i's function's ops run on. */
static double refill_work(const struct ctx *c, size_t i, int *map)
{
	const struct tfd_pipeline *p = c->p;
	const struct tfd_segment *f;
	size_t q = i + 1;

	if (map)
		*map = -1;
	if (!p->stages[i].nfn_ops || !tfd_fn_is_work(&p->stages[i]))
		return 0.0;
	while (q < p->nstages && p->stages[q].parent != (int)i)
		q++;
	if (q >= p->nstages || !p->stages[q].is_async || c->fn_of[q] < 0)
		return 0.0;
	f = &c->segs.v[c->fn_of[q]];
	if (!f->known || f->busy_ns <= 0)
		return 0.0;
	if (map)
		*map = (int)q;
	return (double)f->busy_ns;
}

/* What halving stage i's own work w saves of its thread's time over the
 * window. While it consumes from an async map, its ops and the map's
 * refills (a) share the pool's P threads: that part of the thread's
 * cycle takes max(w, (w + a) / P), and cheaper work of i's shortens it
 * only by what leaves the pool less to do. Another stage's work (a map on
 * the batch runs while the buffer below stands full) saves what it
 * halves. */
static double halving_saves(const struct ctx *c, size_t i, double pool)
{
	double w = own_work(c->p, i), a = pool > 1 ? refill_work(c, i, NULL) : 0.0;

	if (!(a > 0))
		return w / 2;
	return fmax(w, (w + a) / pool) - fmax(w / 2, (w / 2 + a) / pool);
}

/* A thread's segment is named by the stage whose work, halved, would
 * shorten it most. By its own work when the one with the most time mostly
 * waits for the pool: on a real pipeline a filter's calls took 724 ms of
 * the thread, their ops 234 ms, the map beside it 528 ms, its ops 489 ms;
 * halving the map's work measured 1.23x, the filter's 1.04x. And net of
 * the pool it shares (halving_saves()): a filter's predicate ops 360 ms,
 * reading a parallel map whose 2 workers' ops took 882 ms on the 2 threads
 * of the pool, the map on the batch beside it 246 ms: halving the map on
 * the batch measured 1.15x, the predicate 1.11x (5 runs each); without the
 * parallel map's work, 1.31x and 1.42x. */
static void own_top(struct ctx *c, int gi, struct tfd_segment *g)
{
	const struct tfd_pipeline *p = c->p;
	int top = g->top_stage;
	double pool = tfd_cap_cores(p);
	double best;

	if (top < 0 || ((pool <= 1 || !(refill_work(c, (size_t)top, NULL) > 0)) &&
			own_work(p, (size_t)top) >= 0.5 * (double)p->stages[top].work_ns))
		return;
	best = halving_saves(c, (size_t)top, pool);
	for (size_t i = 0; i < p->nstages; i++) {
		double saves;

		if (c->seg_of[i] != gi || p->stages[i].is_async)
			continue;
		saves = halving_saves(c, i, pool);
		if (saves > best) {
			best = saves;
			g->top_stage = (int)i;
		}
	}
	if (g->top_stage != top)
		c->over[g->top_stage] = top;
}

static void finish_segments(struct ctx *c)
{
	struct tfd_pipeline *p = c->p;
	double W = (double)p->capacity.window_ns;

	for (size_t i = 0; i < p->nstages; i++) {
		const struct tfd_stage *s = &p->stages[i];
		int sg = c->seg_of[i];

		if (sg >= 0 && s->work_ns > 0) {
			struct tfd_segment *g = &c->segs.v[sg];

			g->busy_ns = sat_add(g->busy_ns, s->work_ns);
			if (g->top_stage < 0 || s->work_ns > p->stages[g->top_stage].work_ns)
				g->top_stage = (int)i;
		}
	}
	for (size_t gi = 0; gi < c->segs.n; gi++) {
		struct tfd_segment *g = &c->segs.v[gi];
		const struct tfd_stage *o = g->owner >= 0 ? &p->stages[g->owner] : NULL;

		if (g->kind == TFD_SEG_INPUT) {
			input_params(c, g, o);
		} else if (g->kind == TFD_SEG_FUNCTION) {
			uint64_t known = o->fn_calls, unknown = c->fn_unknown[g->owner];
			double k;
			int64_t fn_busy;

			g->top_stage = g->owner;
			g->parallelism =
			    param_over(c, g->owner, TFD_PARAM_PARALLELISM, &g->par_lo, &g->par_hi);
			if (g->parallelism <= 0)
				g->parallelism = tfd_cap_param_pos(o, "num_parallel_calls");
			if (g->parallelism <= 0) {
				g->parallelism = g->nthreads ? (double)g->nthreads : 1;
				g->parallelism_observed = true;
			}
			/* each instance has its slots (pool_bound()) */
			k = c->input_of[g->owner] >= 0
				? instances(c, &c->segs.v[c->input_of[g->owner]])
				: 1;
			g->parallelism *= k;
			g->known = known > 0 || passes_through(c, g->owner);
			/* some runs measured, some not: scale up to all runs */
			g->busy_ns = known ? (int64_t)((double)o->fn_work_ns *
						       (double)(known + unknown) / (double)known)
					   : 0;
			/* TensorFlow takes a worker slot before it reads the input
			 * (num_calls_ counts from the read), so a slot is held for
			 * read + function: P slots deliver P / (read + function) */
			fn_busy = g->busy_ns;
			if (g->known && c->input_of[g->owner] >= 0)
				g->busy_ns =
				    sat_add(g->busy_ns, input_busy(c, c->input_of[g->owner]));
			if (k > 1 && g->known)
				pool_bound(g, fn_busy);
		}
		g->work_per_root_ns = (double)g->busy_ns / (double)c->n;
		/* at most fully busy: the work of the calls that started in the
		 * window includes the run-ahead that fills the buffers above,
		 * which can end past the window (105 % on a real capture) */
		g->utilization = W > 0 ? fmin(1.0, (double)g->busy_ns / (W * g->parallelism)) : 0;
		g->capacity =
		    g->busy_ns > 0 ? g->parallelism * 1e9 / g->work_per_root_ns : INFINITY;
		if (!g->known)
			g->capacity = NAN;
	}
	/* once the function segments' work is known (halving_saves()) */
	for (size_t gi = 0; gi < c->segs.n; gi++)
		if (c->segs.v[gi].kind == TFD_SEG_INPUT)
			own_top(c, (int)gi, &c->segs.v[gi]);
}

/* "the ..." of tfd_segment_name, for a sentence */
static const char *seg_label(const struct tfd_pipeline *p, const struct tfd_segment *g, char *buf,
			     size_t len)
{
	char n[200];

	snprintf(buf, len, "the %s", tfd_segment_name(p, g, n, sizeof(n)));
	return buf;
}

/* The cores limit when they allow less than this share of what the rest
 * of the model allows. */
#define CPU_LIMIT_MARGIN 0.95

/* The step limits when no producer is slower than the consumer's serial
 * part and the pipeline's share of that part is small. */
static bool step_limits(const struct ctx *c)
{
	const struct tfd_capacity *cp = &c->p->capacity;
	double compute = isfinite(cp->demand) ? 1e9 / cp->demand : 0;
	double w0 = c->segs.v[0].work_per_root_ns;

	for (size_t g = 1; g < c->segs.n; g++)
		if (!isnan(c->segs.v[g].capacity) && c->segs.v[g].capacity * (compute + w0) < 1e9)
			return false;
	return w0 <= 0.05 * (compute + w0);
}

/* The evidence when a stage's own work named thread segment l over the
 * stage with more time there (own_top()); a and b its label and the
 * runner-up's. */
static void over_evidence(struct ctx *c, const struct tfd_segment *l, const char *a, const char *b,
			  const struct tfd_segment *r)
{
	const struct tfd_pipeline *p = c->p;
	int w = c->over[l->top_stage];
	char e[1024], ow[120], ot[120], om[120];
	double pool = tfd_cap_cores(p);
	int m = -1;
	/* the pool's refills when the ops cover most of its calls */
	double refill = pool > 1 && own_work(p, (size_t)w) >= 0.5 * (double)p->stages[w].work_ns
			    ? refill_work(c, (size_t)w, &m)
			    : 0.0;

	if (refill > 0) {
		const char *wl = tfd_stage_label(p, w, ow, sizeof(ow));

		snprintf(e, sizeof(e),
			 "%s busy %.0f%%: %s's calls take more of it, but while they read %s its "
			 "workers refill on the same %g threads of the pool (%.0f ms of work in "
			 "the window to its own %.0f ms), so halving %s's work saves less of the "
			 "thread than halving %s's (%.0f ms); %s %s busy %.0f%%",
			 a, 100 * l->utilization, wl, tfd_stage_label(p, m, om, sizeof(om)), pool,
			 refill / 1e6, own_work(p, (size_t)w) / 1e6, wl,
			 tfd_stage_label(p, l->top_stage, ot, sizeof(ot)),
			 own_work(p, (size_t)l->top_stage) / 1e6, b,
			 r->parallelism > 1 ? "are" : "is", 100 * r->utilization);
		tfd_cap_set_evidence(&c->p->capacity, e);
		return;
	}
	snprintf(e, sizeof(e),
		 "%s busy %.0f%%: %s's calls take more of it, but their ops run %.0f%% of them "
		 "(the rest waits for a thread of their pool), %s's %.0f%%; %s %s busy %.0f%%",
		 a, 100 * l->utilization, tfd_stage_label(p, w, ow, sizeof(ow)),
		 100 * own_work(p, (size_t)w) / fmax(1.0, (double)p->stages[w].work_ns),
		 tfd_stage_label(p, l->top_stage, ot, sizeof(ot)),
		 100 * own_work(p, (size_t)l->top_stage) /
		     fmax(1.0, (double)p->stages[l->top_stage].work_ns),
		 b, r->parallelism > 1 ? "are" : "is", 100 * r->utilization);
	tfd_cap_set_evidence(&c->p->capacity, e);
}

void tfd_cap_set_evidence(struct tfd_capacity *cp, const char *text)
{
	size_t n = strlen(text);

	if (n >= sizeof(cp->evidence))
		n = sizeof(cp->evidence) - 1;
	memcpy(cp->evidence, text, n);
	cp->evidence[n] = '\0';
}

/* The evidence line: the limit's utilization beside the runner-up's. */
static void write_evidence(struct ctx *c, int lim, int run)
{
	struct tfd_pipeline *p = c->p;
	struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *l = &c->segs.v[lim], *r = run >= 0 ? &c->segs.v[run] : NULL;
	char a[200], b[200], ol[120];
	const char *py = l->owner >= 0 && p->stages[l->owner].nfn_ops
			     ? p->stages[l->owner].fn_ops[0].type
			     : "Python";

	seg_label(p, l, a, sizeof(a));
	if (r)
		seg_label(p, r, b, sizeof(b));
	if (cp->inferred)
		snprintf(cp->evidence, sizeof(cp->evidence),
			 "the consumer waits on %s while %s %s busy %.0f%%; its function's work "
			 "was not captured, so it is inferred to be the limit",
			 tfd_stage_label(p, l->owner, ol, sizeof(ol)), r ? b : "its readers",
			 r && r->parallelism > 1 ? "are" : "is", r ? 100 * r->utilization : 0.0);
	else if (l->gil && l->top_stage == l->owner) /* one worker: it may hold the lock or not */
		snprintf(cp->evidence, sizeof(cp->evidence),
			 l->parallelism > 1
			     ? "%s run %s, which holds the Python GIL: one call at a "
			       "time whatever the workers (busy %.0f%%, much of it "
			       "waiting for the lock)"
			     : "%s runs %s (Python), one call at a time (busy %.0f%%)",
			 a, py, 100 * l->utilization);
	else if (r && l->kind == TFD_SEG_FUNCTION && l->top_stage != l->owner && l->busy_ns > 0)
		/* slot_top(): the slots are mostly the read of their input */
		snprintf(cp->evidence, sizeof(cp->evidence),
			 "%s busy %.0f%%, %.0f%% of it reading %s (a slot is held from the "
			 "read of the input through the function) while %s %s busy %.0f%%",
			 a, 100 * l->utilization,
			 100.0 * (double)p->stages[l->top_stage].work_ns / (double)l->busy_ns,
			 tfd_stage_label(p, l->top_stage, ol, sizeof(ol)), b,
			 r->parallelism > 1 ? "are" : "is", 100 * r->utilization);
	else if (r && l->top_stage >= 0 && c->over[l->top_stage] >= 0)
		over_evidence(c, l, a, b, r);
	else if (r)
		snprintf(cp->evidence, sizeof(cp->evidence),
			 "%s busy %.0f%% while %s %s busy %.0f%%", a, 100 * l->utilization, b,
			 r->parallelism > 1 ? "are" : "is", 100 * r->utilization);
	else
		snprintf(cp->evidence, sizeof(cp->evidence), "%s busy %.0f%%", a,
			 100 * l->utilization);
}

/* A map whose function is mostly a Python op (tf.py_function,
 * numpy_function) whose calls were seen taking turns (or with one worker)
 * runs them one at a time under the interpreter's lock: its events span
 * the wait for the lock, so its workers look busy at no capacity. Its
 * capacity is one call at a time's, and when its calls' spans sum to more
 * than the window (they overlap, each waiting for the lock another holds)
 * the observed rate: it delivered that. Workers mostly idle keep the
 * capacity of one (2 workers busy 17% under a sequential filter busy 89%
 * had been named at the observed rate; halving the filter's work measured
 * 1.21x, the map's 1.08x). */
static void gil_bound(struct ctx *c, int64_t root_busy)
{
	struct tfd_capacity *cp = &c->p->capacity;

	cp->python_side_by_side = c->in->py_overlap == TFD_PY_SIDE_BY_SIDE;
	cp->python_take_turns = c->in->py_overlap == TFD_PY_TAKE_TURNS;
	if ((double)root_busy < 0.05 * (double)cp->window_ns)
		return;
	for (size_t gi = 0; gi < c->segs.n; gi++) {
		struct tfd_segment *g = &c->segs.v[gi];
		const struct tfd_stage *s = g->owner >= 0 ? &c->p->stages[g->owner] : NULL;

		if (g->kind != TFD_SEG_FUNCTION || !g->known || !s || !s->nfn_ops ||
		    !tfd_op_is_python(s->fn_ops[0].type) || tfd_cap_py_share(s) < 0.5 ||
		    !tfd_gil_binds(cp, g->parallelism))
			continue;
		g->gil = true;
		g->capacity = fmin(g->capacity, fmax(cp->throughput, 1e9 / g->work_per_root_ns));
	}
}

/* A map's worker slot is held from the read of its input through its
 * function (finish_segments()), so the slots' work is the function's and
 * the input's. When one stage of the input does more of it than the
 * function (a sequential map read under one or two slots: TFD-T15's fused
 * map over a heavier map), speeding that stage up raises the slots' rate
 * most: it is the slots' busiest stage (a sequential map of 3.9 ms read
 * under a fused map of 1.8 ms had named the fused map; halving the read's
 * work measured 1.28x, the fused map's 1.14x). A GIL-bound function with
 * one slot too: its read and its Python run one after the other (a Python
 * generator of 14 ms a root element read by a numpy_function map of 5 ms,
 * one worker: halving the generator's work measured 1.42x, the map's
 * 1.08x; a read sleeping 2.5 ms under a py_function of 0.7 ms: 1.55x
 * against 1.08x). With more slots the reads overlap the Python, which
 * takes turns on the lock, and the function keeps its name (the reads'
 * numpy_function waiting for the lock too: 1.02x, the function 1.31x). */
static void slot_top(struct ctx *c)
{
	struct tfd_pipeline *p = c->p;

	for (size_t gi = 0; gi < c->segs.n; gi++) {
		struct tfd_segment *g = &c->segs.v[gi];
		int in = g->owner >= 0 ? c->input_of[g->owner] : -1, top = -1;
		int64_t own;

		if (g->kind != TFD_SEG_FUNCTION || !g->known || in < 0 ||
		    (g->gil && g->parallelism >= 1.5))
			continue;
		own = g->busy_ns - input_busy(c, in);
		for (size_t i = 0; i < p->nstages; i++)
			if (c->seg_of[i] == in && p->stages[i].work_ns > own &&
			    (top < 0 || p->stages[i].work_ns > p->stages[top].work_ns))
				top = (int)i;
		if (top >= 0)
			g->top_stage = top;
	}
}

/* Whether stage si is the selector of a DirectedInterleave
 * (sample_from_datasets' draw of which input is next: tf.data's own map,
 * the one input the long names do not number). Its function leaves no
 * events, and it is never the inferred limit: it had been named on five
 * random real pipelines, where halving the work of a map the intervention
 * measured gained up to 1.27x (on 2 full cores: maps of 60 ms of CPU a
 * root element, 33 root elements/s at most, 41/s seen). */
static bool directed_selector(const struct tfd_pipeline *p, int si)
{
	int up = p->stages[si].parent;

	return up >= 0 && strcmp(p->stages[up].family, "DirectedInterleave") == 0 &&
	       after_ancestor(p, up, si) == ':';
}

static void choose_limiter(struct ctx *c, int64_t root_busy)
{
	struct tfd_pipeline *p = c->p;
	struct tfd_capacity *cp = &p->capacity;
	int lim = -1, run = -1, unk = -1;
	int64_t unk_wait = -1;

	for (size_t gi = 0; gi < c->segs.n; gi++) {
		const struct tfd_segment *g = &c->segs.v[gi];

		if (!g->known) {
			if (c->wait_ns[g->owner] > unk_wait && !directed_selector(p, g->owner)) {
				unk_wait = c->wait_ns[g->owner];
				unk = (int)gi;
			}
			continue;
		}
		if (!isfinite(g->capacity))
			continue;
		if (lim < 0 || g->capacity < c->segs.v[lim].capacity) {
			run = lim;
			lim = (int)gi;
		} else if (run < 0 || g->capacity < c->segs.v[run].capacity) {
			run = (int)gi;
		}
	}
	/* an unmeasured map function limits when every measured segment could
	 * deliver more than was seen while the consumer waited */
	if (unk >= 0 && (double)root_busy >= 0.05 * (double)cp->window_ns &&
	    (lim < 0 || c->segs.v[lim].capacity > INFER_SLACK * cp->throughput)) {
		run = lim;
		lim = unk;
		c->segs.v[lim].capacity = cp->throughput;
		cp->inferred = true;
	}
	cp->limiter = lim;
	cp->runner_up = run;
	if (lim < 0)
		return;
	cp->margin = run >= 0 ? c->segs.v[run].capacity / c->segs.v[lim].capacity : INFINITY;
	cp->model_throughput = tfd_cap_model_rate(c->segs.v, c->segs.n, cp, NULL, 0, 1.0);
	cp->step_limits = step_limits(c) && !cp->inferred;
	write_evidence(c, lim, run);
}

void tfd_capacity_compute(struct tfd_pipeline *p, const struct tfd_cap_calls *in)
{
	struct ctx c;
	struct tfd_capacity *cp = &p->capacity;
	int64_t root_busy = 0, away = 0;

	memset(cp, 0, sizeof(*cp));
	cp->limiter = cp->runner_up = -1;
	for (size_t i = 0; i < p->nstages; i++)
		p->stages[i].segment = -1;
	if (!p->nstages)
		return;
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.in = in;
	if (!tfd_capacity_window(&in->roots, in->nwarmup, &c.t0, &c.t1)) {
		ops_only(&c); /* too few root calls for a model: the ops still are the maps' */
		return;
	}
	for (size_t r = in->nwarmup; r < in->roots.n; r++)
		root_busy =
		    sat_add(root_busy, tfd_root_end(&in->roots, r) - tfd_root_start(&in->roots, r));
	c.n = in->roots.n - in->nwarmup;
	if (c.t1 <= c.t0)
		return;
	cp->pause_ns = tfd_cap_pauses(p, in, c.t0, c.t1, &cp->npauses, &away);
	if (away >= c.t1 - c.t0 - root_busy) {
		cp->pause_ns = away = 0;
		cp->npauses = 0;
	}
	cp->window_ns = c.t1 - c.t0 - cp->pause_ns;
	c.seg_of = xmalloc(p->nstages * sizeof(int));
	c.input_of = xmalloc(p->nstages * sizeof(int));
	c.fn_of = xmalloc(p->nstages * sizeof(int));
	c.wait_ns = xcalloc(p->nstages, sizeof(int64_t));
	c.fn_unknown = xcalloc(p->nstages, sizeof(uint64_t));
	c.over = xmalloc(p->nstages * sizeof(int));
	for (size_t i = 0; i < p->nstages; i++)
		c.over[i] = -1;
	assign_segments(&c);
	stage_work(&c);
	function_work(&c);
	finish_segments(&c);
	cp->valid = true;
	cp->root_elements = c.n;
	cp->throughput = (double)c.n * 1e9 / (double)cp->window_ns;
	/* the consumer's own time between root calls, less the gaps between
	 * steps it spent away from training (each pause whole, its buffers'
	 * refill included): what it would take if input were free */
	cp->demand = c.t1 - c.t0 - away > root_busy
			 ? (double)c.n * 1e9 / (double)(c.t1 - c.t0 - away - root_busy)
			 : INFINITY;
	tfd_cap_steps_demand(p, cp, in);
	gil_bound(&c, root_busy);
	slot_top(&c);
	choose_limiter(&c, root_busy);
	for (size_t i = 0; i < p->nstages; i++)
		p->stages[i].segment = c.seg_of[i];
	p->segments = c.segs.v;
	p->nsegments = c.segs.n;
	if (cp->limiter >= 0) {
		double m = cp->model_throughput;

		tfd_cap_cpu_model(p, in);
		cp->model_throughput =
		    tfd_cap_model_rate(p->segments, p->nsegments, cp, NULL, cp->cpu_ns, 1.0);
		/* by a clear margin: the cores, bound from below by what they
		 * delivered (cpu_model()), are no limit when the rest of the
		 * model allows about as much */
		cp->cpu_limits = cp->cpu_budget > 0 && cp->cpu_rate < CPU_LIMIT_MARGIN * m;
		if (cp->cpu_limits)
			cp->step_limits = false;
		cp->explained = cp->model_throughput > 0 && isfinite(cp->model_throughput)
				    ? cp->throughput / cp->model_throughput
				    : 1.0;
		cp->unexplained = cp->explained < TFD_EXPLAINED_MIN;
	}
	imap_free(&c.seg_threads);
	free(c.seg_of);
	free(c.input_of);
	free(c.fn_of);
	free(c.wait_ns);
	free(c.fn_unknown);
	free(c.over);
}
