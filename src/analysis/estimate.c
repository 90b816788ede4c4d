/* estimate.c - what a finding's fix is worth.
 *
 * Estimate model (docs/rules.md): L is the mean latency of the analyzed
 * root calls and B the bottleneck's blocking time per analyzed call.
 *   scale k:  the stage's blocking time is divided by k (parallelism,
 *             vectorization): L' = L - B + B/k. Other stages keep their
 *             blocking time, so the next critical stage becomes the bound.
 *   remove:   the stage's blocking time disappears (cache, offload): L' = L - B.
 *   overlap:  a prefetch buffer hides the pipeline behind the step's other
 *             work C = (step time - input wait) per step (no steps: the
 *             consumer's own time per root element): L' = max(0, L - C).
 *   vectorize: the stage's calls merged by the batch size, from the rate
 *             seen (the fixed cost of a call is no work in the capture).
 *   none:     no estimate.
 * The input-bound share after the fix scales the host's input wait by L'/L.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "rules_impl.h"

/* How much faster than the consumer asks the slowest producer segment can
 * deliver (or the host's cores, when they allow less); missing without a
 * capacity model or an unbounded demand. */
struct val tfd_producer_over_demand(const struct tfd_pipeline *p)
{
	struct val v = {0};
	double low = INFINITY;

	if (!p || !TFD_CAPACITY_USABLE(p) || !isfinite(p->capacity.demand) ||
	    p->capacity.demand <= 0)
		return v;
	for (size_t g = 1; g < p->nsegments; g++)
		if (!isnan(p->segments[g].capacity) && p->segments[g].capacity < low)
			low = p->segments[g].capacity;
	/* the host's cores, shared with the step, may allow less than any
	 * stage could deliver with them to itself */
	if (tfd_cores_limit(p) && p->capacity.cpu_rate < low)
		low = p->capacity.cpu_rate;
	/* a remote stage delivers what was seen */
	if (tfd_remote_limits(p) && p->capacity.throughput < low)
		low = p->capacity.throughput;
	if (!isfinite(low))
		return v;
	v.present = true;
	v.num = low / p->capacity.demand;
	return v;
}

/* The calls one vectorized call replaces: the batch size of the stage (a
 * MapAndBatch) or of the nearest batch above it, else the rule's factor. */
static double vectorize_factor(const struct rule *r, const struct tfd_pipeline *p, int si)
{
	int guard = 0;

	for (int a = si; a >= 0 && guard++ < 10000; a = p->stages[a].parent) {
		const char *b =
		    p->stages[a].sample ? tfd_event_param(p->stages[a].sample, "batch_size") : NULL;
		double n = b ? strtod(b, NULL) : 0;

		if (n >= 1)
			return n;
	}
	return r->est_factor >= 1 ? r->est_factor : 2;
}

/* The factor of a "to" estimate: the parallelism the fix sets over the
 * stage's function workers seen (its segment's, for a stage without a
 * function), at least 1; the rule's factor otherwise. */
static double to_factor(const struct rule *r, const struct tfd_pipeline *p, int si)
{
	const struct tfd_segment *g = si >= 0 ? tfd_stage_function_segment(p, si) : NULL;
	double par;

	if (!(r->est_to >= 1.0))
		return r->est_factor;
	if (!g && si >= 0 && p->stages[si].segment >= 0 &&
	    (size_t)p->stages[si].segment < p->nsegments)
		g = &p->segments[p->stages[si].segment];
	par = g && g->parallelism > 0 ? g->parallelism : 1.0;
	return fmax(1.0, r->est_to / par);
}

/* The subtree a "remove" of a subtree or of dropped elements changes: its
 * root (*root) and the share of its work that stays (*keep); false for
 * another model, or with no shard or filter (the rule's `under` families)
 * dropping elements above si. */
static bool subtree_of(const struct rule *r, const struct tfd_pipeline *p, int si, int *root,
		       double *keep)
{
	*root = si;
	*keep = 0;
	if (r->est_subtree)
		return true;
	return r->est_dropped && tfd_dropped_above(p, si, (const char *const *)r->under.v,
						   r->under.n, root, keep) >= 0;
}

/* The finding's factor: the rule's (to_factor), or for the elements a
 * shard or a filter drops, the elements made below it per element it
 * keeps (0 unknown; e->dropped_by names that stage). */
static double factor_of(const struct rule *r, const struct tfd_pipeline *p, int si,
			struct tfd_estimate *e)
{
	int root;
	double keep;

	if (!r->est_dropped)
		return to_factor(r, p, si);
	if (!subtree_of(r, p, si, &root, &keep) || !(keep > 0))
		return 0;
	e->dropped_by = p->stages[p->stages[root].parent].name;
	return round(100.0 / keep) / 100.0;
}

/* Whether the pool's threads limit p: its bottleneck was named for
 * holding them most while the limiting thread waits for one. */
static bool pool_limits(const struct tfd_pipeline *p)
{
	return p->bottleneck >= 0 && tfd_pool_heaviest(p) == p->bottleneck;
}

/* A capacity estimate when the pool limits (pool_limits()), from the rate
 * seen, bounded by the cores (cores) and the step's demand: cheaper work
 * of stage si frees the pool by its ops' share; a pool as large as the
 * fix sets it serves the waiting thread until its own work limits; more
 * workers or more calls at once on the same pool wait for its threads
 * (the model's estimate stays, marked). On real pipelines whose limiting
 * thread mostly waited for the pool, what halving the work of the stage
 * holding it most measured was within 25 % of this on 5 of 5. */
static void pool_estimate(const struct rule *r, const struct tfd_pipeline *p, int si, double k,
			  bool vec, double cores, double *now, double *after,
			  struct tfd_estimate *e)
{
	const struct tfd_capacity *cp = &p->capacity;
	double all = tfd_pool_ops_ns(p), o = si >= 0 ? tfd_fn_ops_time(&p->stages[si]) : 0;
	double left;

	e->capped_by_pool = true;
	if (r->est_parallelism && r->est_to > cp->cpu_budget && cp->runner_up == cp->limiter) {
		/* a larger pool (as the fix sets it) until the waiting thread's
		 * own work limits (bottleneck.c: the margin) */
		*now = cp->throughput;
		*after = cp->throughput * fmin(r->est_to / cp->cpu_budget, cp->margin);
	} else if (r->est_workers || r->est_parallelism || vec || !(o > 0) || !(all > 0) ||
		   !(k > 1)) {
		return;
	} else {
		left = all - o * (1.0 - 1.0 / k);
		if (!(left > 0))
			return;
		*now = cp->throughput;
		*after = cp->throughput * all / left;
	}
	if (isfinite(cores))
		*after = fmin(*after, fmax(cores, cp->throughput));
	if (isfinite(cp->demand))
		*after = fmin(*after, fmax(cp->demand, cp->throughput));
}

/* What-if through the capacity model: the stage's work / factor (remove: no
 * work), the new lowest capacity capped by the consumer's demand, anchored
 * to the observed time per root element (throughput-model.md 5). */
static void capacity_estimate(const struct rule *r, const struct tfd_host_result *h,
			      const struct tfd_pipeline *p, int si, struct tfd_estimate *e)
{
	const struct tfd_capacity *cp = &p->capacity;
	bool vec = strcmp(r->est_model, "vectorize") == 0;
	double k = strcmp(r->est_model, "remove") == 0 ? 1e12
		   : vec			       ? vectorize_factor(r, p, si)
						       : to_factor(r, p, si);
	/* vectorizing removes the fixed cost of each call, which the model
	 * does not see as work (what it leaves unexplained): from the rate seen */
	double now = vec ? cp->throughput : cp->model_throughput;
	double share = 1.0; /* the step's compute after, over before */
	double keep, after, cores, T = 1e9 / cp->throughput, Tn, c;
	int root;

	if (subtree_of(r, p, si, &root, &keep)) {
		after = tfd_capacity_whatif_kept(p, root, keep, &share);
		cores = tfd_capacity_whatif_kept_cores(p, root, keep);
	} else if (r->est_subtree || r->est_dropped) {
		return;
	} else if (r->est_parallelism) {
		after = tfd_capacity_whatif(p, si, 1.0, k, false, &share);
		cores = tfd_capacity_whatif_cores(p, si, 1.0, false);
	} else {
		after = tfd_capacity_whatif(p, si, k, 1.0, !r->est_workers, &share);
		cores = tfd_capacity_whatif_cores(p, si, k, !r->est_workers);
	}
	if (!(now > 0) || !(after > 0))
		return;
	/* workers overlap a sequential stage's waits for its input: from the
	 * rate seen, k times it at most */
	if (r->est_workers && !vec && tfd_serial_below_cores(p, si)) {
		after = fmin(after, k * cp->throughput);
		now = cp->throughput;
	}
	if (pool_limits(p))
		pool_estimate(r, p, si, k, vec, cores, &now, &after, e);
	e->basis = "capacity";
	e->known = true;
	e->speedup = after / now;
	if (e->speedup < 1.0)
		e->speedup = 1.0;
	Tn = T / e->speedup;
	e->latency_ns = (int64_t)llround(T);
	e->new_latency_ns = (int64_t)llround(Tn);
	e->throughput = cp->throughput;
	e->new_throughput = cp->throughput * e->speedup;
	e->step_speedup = e->speedup;
	e->capped_by_demand = isfinite(cp->demand) && after >= cp->demand / share * 0.999;
	e->capped_by_cores = !e->capped_by_demand && isfinite(cores) && after >= cores * 0.999;
	e->misses_limit = e->speedup < 1.02;
	e->input_bound_by_demand = cp->step_limits;
	/* waiting per root element before and after, over the consumer's own time */
	c = isfinite(cp->demand) ? share * 1e9 / cp->demand : 0;
	if (!isnan(h->input_pct) && T > 0 && c >= 0) {
		double w = fmax(0.0, Tn - c);

		e->input_percent_after = w + c > 0 ? 100.0 * w / (w + c) : 0.0;
	}
}

/* Copies to the device moved off the step (prefetched to the device, they
 * run while the device computes the step before): of the exposed copy
 * time E per step, what the step's other work R (neither input nor copy)
 * can hide goes; the host wait W stays. Step S -> S - min(E, R). */
static void copy_estimate(const struct tfd_host_result *h, struct tfd_estimate *e)
{
	double n = (double)h->nsteps, S, W, E, R, hidden;

	if (!h->has_device || !h->nsteps || h->step_ns <= 0)
		return;
	S = (double)h->step_ns / n;
	W = (double)h->wait_ns / n;
	E = (double)h->h2d_ns / n;
	R = fmax(0.0, S - W - E);
	hidden = fmin(E, R);
	e->basis = "steps";
	e->known = true;
	e->latency_ns = (int64_t)llround(S);
	e->new_latency_ns = (int64_t)llround(S - hidden);
	e->speedup = S - hidden > 0 ? S / (S - hidden) : 0.0;
	e->step_speedup = e->speedup;
	e->input_percent_after = S - hidden > 0 ? 100.0 * (W + E - hidden) / (S - hidden) : 0.0;
}

/* The focus pipeline's CPU work divided by the rule's factor k, on a host
 * whose step computes on the same cores: the step's other time C goes to
 * C (N + u/k) / (N + u), N the cores and u those the pipeline kept busy
 * (tfd_capacity_step_share's model); the waits stay. */
static void cpu_estimate(const struct rule *r, const struct tfd_host_result *h,
			 struct tfd_estimate *e)
{
	const struct tfd_pipeline *p = h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
	double n = (double)h->nsteps, k = r->est_factor > 1 ? r->est_factor : 2, u, N, S, W, C;

	/* without step markers the span the input was read over stands for
	 * the steps (the input share's own basis), each root element one
	 * step: the speed-up is the same ratio, its times per element */
	if (p && !h->nsteps && h->input_basis && strcmp(h->input_basis, "capture span") == 0) {
		n = (double)p->ncalls;
		e->per_element = true;
	}
	if (!p || !(n > 0) || h->step_ns <= 0 || !(p->capacity.cpu_budget > 0))
		return;
	N = p->capacity.cpu_budget;
	u = tfd_pipeline_cpu_share(h) * N;
	if (!(u > 0))
		return;
	if (r->est_dropped) { /* the stages below a shard: the kept share */
		double keep, freed;

		if (tfd_focus_dropped(h, &keep, &freed) < 0 || !(freed > 0))
			return;
		k = round(100.0 * u / fmax(u - freed, u * 1e-3)) / 100.0;
	}
	S = (double)h->step_ns / n;
	W = fmin(S, (double)h->wait_ns / n);
	C = (S - W) * (N + u / k) / (N + u);
	e->basis = "steps";
	e->known = true;
	e->factor = k;
	e->latency_ns = (int64_t)llround(S);
	e->new_latency_ns = (int64_t)llround(W + C);
	e->speedup = W + C > 0 ? S / (W + C) : 0.0;
	e->step_speedup = e->speedup;
	e->input_percent_after = W + C > 0 ? 100.0 * W / (W + C) : 0.0;
}

/* A loop inside a tf.function pulled from one iterator instead: each
 * step's start-up (the time before the loop's first element: the body
 * instantiated, the iterator started empty) goes, its waits stay. Over
 * the steps that hold the loop (U of their S). */
static void startup_estimate(const struct tfd_host_result *h, struct tfd_estimate *e)
{
	double S = (double)h->loop_steps_ns, U = (double)h->loop_startup_ns, W;

	if (!h->loop_in_function || !(S > 0) || !(U > 0) || U >= S)
		return;
	W = h->step_ns > 0 ? (double)h->wait_ns / (double)h->step_ns * S : 0.0;
	e->basis = "steps";
	e->known = true;
	e->latency_ns = (int64_t)llround(S / (double)h->nsteps);
	e->new_latency_ns = (int64_t)llround((S - U) / (double)h->nsteps);
	e->speedup = S / (S - U);
	e->step_speedup = e->speedup;
	e->input_percent_after = fmin(100.0, 100.0 * W / (S - U));
}

/* The long gaps between the steps K times rarer (fewer, longer epochs;
 * validation or evaluation every K times): over the span of the steps S,
 * of which the gaps take G, S / (S - G (1 - 1/K)); the steps' waits stay. */
static void gaps_estimate(const struct rule *r, const struct tfd_host_result *h,
			  struct tfd_estimate *e)
{
	double S = (double)h->steps_span_ns, G = (double)h->between_ns,
	       after = S - G * (1.0 - 1.0 / r->est_factor), n = (double)h->all.nsteps;

	if (!(S > 0) || !(G > 0) || !(after > 0) || !(n > 0))
		return;
	e->basis = "steps";
	e->known = true;
	e->factor = r->est_factor;
	/* per step of the span: every step in it */
	e->latency_ns = (int64_t)llround(S / n);
	e->new_latency_ns = (int64_t)llround(after / n);
	e->speedup = S / after;
	e->step_speedup = e->speedup;
	e->input_percent_after = h->input_pct;
}

/* An estimate on basis `steps`: a step of `before` ns takes `after`, of
 * which `other` is not input (the step's own time). */
static void steps_estimate(struct tfd_estimate *e, double before, double after, double other)
{
	e->basis = "steps";
	e->known = true;
	e->latency_ns = (int64_t)llround(before);
	e->new_latency_ns = (int64_t)llround(after);
	e->speedup = before / after;
	e->step_speedup = e->speedup;
	e->input_percent_after = 100.0 * fmax(0.0, after - other) / after;
}

/* The loop keeps one iterator instead of making one each step: the time
 * spent making iterators goes, and a running pipeline, which works while
 * the step computes, leaves a step waiting only for what its element
 * takes past the step's other time. A new iterator's first element (what
 * the steps waited in GetNext) is the pipeline's time for one element
 * from empty, an upper bound on a running one's: each step then takes the
 * longer of its other time and that (copies to the device stay). */
static void one_iterator_estimate(const struct tfd_host_result *h, struct tfd_estimate *e)
{
	double n = (double)h->nsteps, S = (double)h->step_ns, C = (double)h->create_ns,
	       W = (double)h->wait_ns - C, D = (double)h->h2d_ns, o, w, after;

	if (!(n > 0) || !(S > 0) || !(C > 0) || W < 0)
		return;
	o = (S - (double)h->wait_ns - D) / n;
	w = W / n;
	if (!(o > 0))
		return;
	after = fmax(o, w) + D / n;
	steps_estimate(e, S / n, after, o);
}

/* The loop keeps one iterator (of a dataset made once) over the epochs
 * instead of one each epoch: the time the steps spent making iterators
 * goes, and so does each iterator's start from empty, what its first
 * element took beyond its typical one (a shuffle buffer filled, the
 * prefetch and parallel calls started), over the focus pipeline's group
 * of repeats; together at most what the steps waited. What a start
 * produced ahead (a shuffle buffer holds the elements of the steps after
 * it) the pipeline still has to make: a step takes at least a root
 * element at the rate its slowest stage, or the host's cores, allow. The
 * stretches between the steps are not counted (H12 and H11 say). */
static void epoch_starts_estimate(const struct tfd_host_result *h, struct tfd_estimate *e)
{
	double S = (double)h->step_ns, W = (double)h->wait_ns, C = (double)h->create_ns, R = 0.0,
	       n = (double)h->nsteps, after, rate = INFINITY;
	const struct tfd_pipeline *f;

	if (h->focus < 0 || !(n > 0) || !(S > 0) || W < C)
		return;
	f = &h->pipelines[h->focus];
	/* what the starts made ahead runs beside the steps after: with a
	 * segment's work not captured (its threads ended with an epoch's
	 * iterator) there is no CPU to weigh against the step */
	for (size_t g = 0; g < f->nsegments; g++)
		if (!f->segments[g].known)
			return;
	for (size_t i = 0; i < h->npipelines; i++) {
		const struct tfd_pipeline *p = &h->pipelines[i];

		if (((int)i == h->focus || p->repeat_of1 == h->focus + 1) &&
		    p->first_call_ns > p->p50_ns)
			R += (double)(p->first_call_ns - p->p50_ns);
	}
	R = fmin(R, W - C);
	if (!(C + R > 0) || !(S - C - R > 0))
		return;
	after = (S - C - R) / n;
	/* the pipeline's CPU beside the step (u of the N cores) at the
	 * faster rate: the step's own compute shares the cores with it
	 * (tfd_capacity_step_share's model, the other way) */
	if (f->capacity.cpu_budget > 0 && tfd_pipeline_cpu_share(h) > 0) {
		double N = f->capacity.cpu_budget, u = tfd_pipeline_cpu_share(h) * N,
		       o = (S - W) / n, w = after - o;

		for (int it = 0; it < 2; it++)
			after = w + o * (N + u * (S / n) / after) / (N + u);
	}
	if (TFD_CAPACITY_USABLE(f)) {
		if (f->capacity.model_throughput > 0)
			rate = f->capacity.model_throughput;
		if (f->capacity.cpu_rate > 0 && f->capacity.cpu_rate < rate)
			rate = f->capacity.cpu_rate;
		if (isfinite(rate))
			after = fmin(fmax(after, 1e9 / rate), S / n);
	}
	steps_estimate(e, S / n, after, (S - W) / n);
}

/* The step's speed-up of a latency estimate: the step's other time is
 * `share` of what it was (the cores the change frees), its input share
 * goes to `after`; at most what the host's cores allow (the pipeline's CPU
 * work and, without a device, the step's compute) and, with a capacity
 * model, what its slowest producer delivers (a prefetch overlaps the
 * pipeline with the step, it does not make it faster). */
static void latency_step_speedup(const struct rule *r, const struct tfd_host_result *h,
				 const struct tfd_pipeline *p, int si, double cheaper, double share,
				 struct tfd_estimate *e)
{
	const struct tfd_capacity *cp = &p->capacity;
	struct val low = tfd_producer_over_demand(p);
	double sp, cores = INFINITY, prod = INFINITY, in = h->input_pct, keep;
	int root;

	if (isnan(in) || isnan(e->input_percent_after) || in >= 100.0 ||
	    e->input_percent_after >= 100.0)
		return;
	sp = (100.0 - e->input_percent_after) / (100.0 - in) / share;
	/* the CPU after the change: calls `cheaper` times cheaper free cores */
	if (cp->valid && cp->cpu_budget > 0 && cp->cpu_ns > 0 && cp->throughput > 0)
		cores =
		    si < 0 ? (1e9 / cp->throughput) / (cp->cpu_ns / cp->cpu_budget)
		    : subtree_of(r, p, si, &root, &keep)
			? tfd_capacity_whatif_kept_cores(p, root, keep) / cp->throughput
			: tfd_capacity_whatif_cores(p, si, cheaper, cheaper > 1.0) / cp->throughput;
	if (low.present && cp->throughput > 0)
		prod = low.num * cp->demand / cp->throughput;
	if (sp > fmin(cores, prod)) {
		e->capped_by_cores = cores <= prod;
		e->capped_by_producer = prod < cores;
		sp = fmax(1.0, fmin(cores, prod));
		/* the step's other time as above: the wait is what is left */
		e->input_percent_after = fmax(0.0, 100.0 * (1.0 - (1.0 - in / 100.0) * share * sp));
	}
	e->step_speedup = sp;
}

/* The pipeline delivers faster than the step consumes on average, yet the
 * host waits: the waits are bursts, the tails of uneven work (a slow
 * element holding ordered output), which the rates do not see. Cheaper or
 * removed work shortens those tails: the latency view's estimate, not the
 * capacity model's ~1.0x. More workers are left to the capacity model. */
static bool bursts(const struct rule *r, const struct tfd_host_result *h,
		   const struct tfd_pipeline *p)
{
	return p->capacity.step_limits && !r->est_parallelism && !r->est_workers &&
	       tfd_bound_of(h->input_pct) >= TFD_BOUND_MODERATE;
}

/* The step's other time after the fix over before (S: the steps' time,
 * wait: their wait after the fix, other: their other time before): the
 * cores the cheaper calls free go to the step's compute, its share taken
 * at the new rate, once more at the rate that gives. */
static double step_share(const struct rule *r, const struct tfd_pipeline *p, int si, double cheaper,
			 double S, double wait, double other)
{
	const struct tfd_capacity *cp = &p->capacity;
	double cpu, hidden = 0, share = 1.0, keep;
	int root;

	/* a synchronous stage on the consumer's own thread runs between the
	 * steps: the CPU it frees was never beside the step's compute */
	if (si < 0 || !(cheaper > 1.0) || !cp->valid || tfd_stage_between_steps(p, si))
		return 1.0;
	cpu = subtree_of(r, p, si, &root, &keep) ? tfd_capacity_cpu_kept(p, root, keep)
						 : tfd_capacity_cpu_after(p, si, cheaper, true);
	/* vectorizing merges the calls: their fixed cost, the rate's part the
	 * model leaves unexplained, is CPU the merged calls no longer spend */
	if (strcmp(r->est_model, "vectorize") == 0 && cp->explained > 0 && cp->explained < 1 &&
	    cp->root_elements)
		hidden = tfd_cap_stage_cpu_ns(p, (size_t)si) / (double)cp->root_elements *
			 (1.0 / cp->explained - 1.0);
	for (int it = 0; it < 2; it++) {
		double after = wait + other * share;

		share = tfd_capacity_step_share(p, hidden, cpu, after > 0 ? S / after : 1.0);
	}
	return share;
}

/* The latency view's mean root-call latency after the fix (L -> *Lp) and
 * how many times cheaper the stage's calls get (*cheaper: the CPU they
 * free); false when the model has nothing to say here. */
static bool latency_after(const struct rule *r, const struct tfd_host_result *h,
			  const struct tfd_pipeline *p, int si, double L, double *Lp,
			  double *cheaper)
{
	double B = si >= 0 ? (double)p->stages[si].blocking_ns / (double)p->nanalyzed : 0, keep = 0;
	int root = si;

	/* the stages below it stop too (or do the kept share of their work):
	 * their blocking goes with its own */
	if (si >= 0 && (r->est_subtree || r->est_dropped)) {
		if (!subtree_of(r, p, si, &root, &keep))
			return false;
		B = 0;
		for (size_t j = 0; j < p->nstages; j++)
			if (tfd_stage_within(p, (int)j, root))
				B += (double)p->stages[j].blocking_ns / (double)p->nanalyzed *
				     (1.0 - keep);
	}

	*cheaper = 1.0;
	if (strcmp(r->est_model, "overlap") == 0) {
		double C; /* the step's other work per step */

		if (h->nsteps && h->step_ns > h->wait_ns)
			C = (double)(h->step_ns - h->wait_ns) / (double)h->nsteps;
		else if (!h->nsteps && p->capacity.valid && isfinite(p->capacity.demand) &&
			 p->capacity.demand > 0)
			C = 1e9 / p->capacity.demand; /* no markers: the consumer's own time
						       * per root element */
		else
			return false;
		*Lp = fmax(0.0, L - C);
		return true;
	}
	if (si < 0)
		return false;
	if (strcmp(r->est_model, "scale") == 0) {
		double k = to_factor(r, p, si);

		*Lp = L - B + B / k;
		if (!r->est_parallelism && !r->est_workers)
			*cheaper = k;
	} else if (strcmp(r->est_model, "vectorize") == 0) {
		*cheaper = vectorize_factor(r, p, si);
		*Lp = L - B + B / *cheaper;
	} else if (strcmp(r->est_model, "remove") == 0) {
		*Lp = L - B;
		*cheaper = keep > 0 ? 1.0 / keep : 1e12;
	} else {
		return false;
	}
	return true;
}

void tfd_estimate(const struct rule *r, const struct tfd_host_result *h,
		  const struct tfd_pipeline *p, int si, struct tfd_estimate *e)
{
	double L, Lp, cheaper; /* the stage's calls this many times cheaper */

	memset(e, 0, sizeof(*e));
	e->model = r->est_model;
	e->factor = p ? factor_of(r, p, si, e) : r->est_factor;
	e->of = r->est_parallelism ? "parallelism"
		: r->est_workers   ? "workers"
		: r->est_subtree   ? "subtree"
		: r->est_dropped   ? "dropped"
				   : "work";
	e->input_percent_after = NAN;
	if (strcmp(r->est_model, "copy_overlap") == 0) {
		copy_estimate(h, e);
		return;
	}
	if (strcmp(r->est_model, "loop_startup") == 0) {
		startup_estimate(h, e);
		return;
	}
	if (strcmp(r->est_model, "fewer_gaps") == 0) {
		gaps_estimate(r, h, e);
		return;
	}
	if (strcmp(r->est_model, "one_iterator") == 0) {
		one_iterator_estimate(h, e);
		return;
	}
	if (strcmp(r->est_model, "epoch_starts") == 0) {
		epoch_starts_estimate(h, e);
		return;
	}
	if (strcmp(r->est_model, "free_cpu") == 0) {
		cpu_estimate(r, h, e);
		return;
	}
	if (!p || !p->nanalyzed || strcmp(r->est_model, "none") == 0)
		return;
	e->basis = "latency";
	if (si >= 0 && TFD_CAPACITY_USABLE(p) && !bursts(r, h, p) &&
	    (strcmp(r->est_model, "scale") == 0 || strcmp(r->est_model, "remove") == 0 ||
	     strcmp(r->est_model, "vectorize") == 0)) {
		capacity_estimate(r, h, p, si, e);
		return;
	}
	L = (double)p->analyzed_ns / (double)p->nanalyzed;
	if (!latency_after(r, h, p, si, L, &Lp, &cheaper))
		return;
	e->known = true;
	e->latency_ns = (int64_t)llround(L);
	e->new_latency_ns = (int64_t)llround(Lp);
	e->speedup = Lp > 0 ? L / Lp : 0.0; /* 0: fully hidden */
	if (!isnan(h->input_pct) && L > 0) {
		/* the copies to the device (device planes) stay input */
		double wait = (double)h->wait_ns * (Lp / L);
		double other = (double)(h->step_ns - h->wait_ns);
		double share = step_share(r, p, si, cheaper, (double)h->step_ns, wait, other);

		other *= share;
		e->input_percent_after =
		    wait + other > 0 ? 100.0 * (wait + (double)h->h2d_ns) / (wait + other) : 0.0;
		latency_step_speedup(r, h, p, si, cheaper, share, e);
	}
}
