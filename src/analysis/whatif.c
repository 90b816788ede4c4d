/* whatif.c - the capacity model's what-ifs: the rate a pipeline would
 * deliver with one stage's work divided or its parallelism multiplied, the
 * rate the host's cores would allow, and the share of the cores the step's
 * compute gets back when the pipeline spends less CPU (capacity.c builds
 * the model they change).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/families.h"
#include "tfd/vec.h"

/* The CPU time per root element after stage si's work is divided by
 * work_factor (saves_cpu: cheaper calls; else the same work spread). */
static double cpu_after(const struct tfd_pipeline *p, int si, double work_factor, bool saves_cpu)
{
	const struct tfd_capacity *cp = &p->capacity;
	double cpu = cp->cpu_ns;

	if (saves_cpu && cp->root_elements)
		cpu -= tfd_cap_stage_cpu_ns(p, (size_t)si) / (double)cp->root_elements *
		       (1.0 - 1.0 / work_factor);
	return cpu;
}

/* The rate the host's cores allow at cpu_ns of CPU per root element
 * (INFINITY without a CPU budget or a stage si to change). */
static double cores_rate(const struct tfd_pipeline *p, int si, double cpu_ns)
{
	const struct tfd_capacity *cp = &p->capacity;

	if (!cp->valid || !(cp->cpu_budget > 0) || si < 0 || (size_t)si >= p->nstages)
		return INFINITY;
	return cpu_ns > 0 ? cp->cpu_budget * 1e9 / cpu_ns : INFINITY;
}

double tfd_capacity_whatif_cores(const struct tfd_pipeline *p, int si, double work_factor,
				 bool saves_cpu)
{
	return cores_rate(p, si, cpu_after(p, si, work_factor, saves_cpu));
}

/* The rate the model gives with the first n segments' capacities in caps
 * and cpu_ns of CPU per root element, the step's compute given the cores
 * the change to stage si frees: its share at the new rate, once more at
 * the rate that gives (none from a synchronous stage on the consumer's own
 * thread, which runs between the steps). *step_share (may be NULL): the
 * share the rate assumes. */
static double rate_after(const struct tfd_pipeline *p, int si, const double *caps, size_t n,
			 double cpu_ns, double *step_share)
{
	const struct tfd_capacity *cp = &p->capacity;
	double rate = tfd_cap_model_rate(p->segments, n, cp, caps, cpu_ns, 1.0), share = 1.0;

	for (int it = 0; it < 2 && cp->throughput > 0 && !tfd_stage_between_steps(p, si); it++) {
		share = tfd_capacity_step_share(p, 0, cpu_ns, rate / cp->throughput);
		rate = tfd_cap_model_rate(p->segments, n, cp, caps, cpu_ns, share);
	}
	if (step_share)
		*step_share = share;
	return rate;
}

/* Whether stage j lies below stage si. */
static bool below(const struct tfd_pipeline *p, int j, int si)
{
	int guard = 0;

	for (int a = p->stages[j].parent; a >= 0 && guard++ < 10000; a = p->stages[a].parent)
		if (a == si)
			return true;
	return false;
}

/* The known function segment (the worker slots) of the async map whose
 * input segment is g, NULL when g is no such input. */
static const struct tfd_segment *slots_reading(const struct tfd_pipeline *p, int g)
{
	if (g < 0 || (size_t)g >= p->nsegments || p->segments[g].kind != TFD_SEG_INPUT)
		return NULL;
	for (size_t f = 0; f < p->nsegments; f++)
		if (p->segments[f].kind == TFD_SEG_FUNCTION && p->segments[f].known &&
		    p->segments[f].owner == p->segments[g].owner)
			return &p->segments[f];
	return NULL;
}

/* A synchronous stage spread over k workers becomes an asynchronous one
 * (a parallel map): it and the stages below it on its thread leave that
 * thread's segment; one thread reads its input (those stages' work D),
 * and its k worker slots, held from the read through the function as
 * TensorFlow holds them, deliver k / (its work + D). Read by an async
 * map's input thread, those reads had held the map's slots: they no longer
 * do. caps has room for the two new segments; returns how many segments
 * caps now holds. */
static size_t goes_async(const struct tfd_pipeline *p, int si, double k, double *caps)
{
	const struct tfd_capacity *cp = &p->capacity;
	int g0 = p->stages[si].segment;
	double D = 0, own = (double)p->stages[si].work_ns, busy, n = (double)cp->root_elements;
	const struct tfd_segment *f = slots_reading(p, g0);

	for (size_t j = 0; j < p->nstages; j++)
		if ((int)j != si && p->stages[j].segment == g0 && below(p, (int)j, si))
			D += (double)p->stages[j].work_ns;
	busy = (double)p->segments[g0].busy_ns - own - D;
	if (p->segments[g0].known)
		caps[g0] = busy > 0 ? p->segments[g0].parallelism * 1e9 * n / busy : INFINITY;
	if (f) {
		busy = (double)f->busy_ns - own - D;
		caps[f - p->segments] = busy > 0 ? f->parallelism * 1e9 * n / busy : INFINITY;
	}
	caps[p->nsegments] = D > 0 ? 1e9 * n / D : INFINITY;
	caps[p->nsegments + 1] = own + D > 0 ? k * 1e9 * n / (own + D) : INFINITY;
	return p->nsegments + 2;
}

/* Each segment's capacity after stage si's work is divided by work_factor
 * and its parallelism multiplied by par_factor, into caps. */
static void segment_caps(const struct tfd_pipeline *p, int si, double work_factor,
			 double par_factor, double *caps)
{
	const struct tfd_capacity *cp = &p->capacity;

	for (size_t gi = 0; gi < p->nsegments; gi++) {
		const struct tfd_segment *g = &p->segments[gi];
		double cap = g->capacity, busy = (double)g->busy_ns, par = g->parallelism;
		bool mine = false;

		if (g->kind == TFD_SEG_FUNCTION && g->owner == si) {
			/* the function part of the slot time; the reads stay */
			double fn = busy - tfd_cap_reads_of(p, g->owner);

			mine = true;
			busy = busy - fn + fn / work_factor;
		} else if (g->kind != TFD_SEG_FUNCTION && p->stages[si].segment == (int)gi) {
			mine = true;
			busy -= (double)p->stages[si].work_ns * (1.0 - 1.0 / work_factor);
		} else if (g == slots_reading(p, p->stages[si].segment)) {
			/* faster reads free the map's slots sooner too */
			busy -= (double)p->stages[si].work_ns * (1.0 - 1.0 / work_factor);
			cap = busy > 0 ? par * 1e9 * (double)cp->root_elements / busy : INFINITY;
		}
		if (mine) {
			par *= par_factor;
			if (!g->known) /* inferred: scale what was observed */
				cap = cp->throughput * par_factor * work_factor;
			else
				cap = busy > 0 ? par * 1e9 * (double)cp->root_elements / busy
					       : INFINITY;
		}
		caps[gi] = cap;
	}
}

double tfd_capacity_whatif(const struct tfd_pipeline *p, int si, double work_factor,
			   double par_factor, bool saves_cpu, double *step_share)
{
	const struct tfd_capacity *cp = &p->capacity;
	double *caps, rate;
	size_t n = p->nsegments;

	if (!cp->valid || cp->limiter < 0 || si < 0 || (size_t)si >= p->nstages)
		return 0;
	caps = xmalloc((p->nsegments + 2) * sizeof(double));
	segment_caps(p, si, work_factor, par_factor, caps);
	/* a sequential stage given workers runs apart from its consumer */
	if (!saves_cpu && par_factor == 1.0 && work_factor > 1.0 && !p->stages[si].is_async &&
	    p->stages[si].segment >= 0 && (size_t)p->stages[si].segment < p->nsegments)
		n = goes_async(p, si, work_factor, caps);
	/* the CPU the change saves: a stage's work divided (more workers
	 * save none) */
	rate = rate_after(p, si, caps, n, cpu_after(p, si, work_factor, saves_cpu), step_share);
	free(caps);
	return rate;
}

bool tfd_stage_within(const struct tfd_pipeline *p, int j, int si)
{
	return j == si || below(p, j, si);
}

double tfd_capacity_cpu_kept(const struct tfd_pipeline *p, int si, double keep)
{
	const struct tfd_capacity *cp = &p->capacity;
	double cpu = cp->cpu_ns;

	if (!cp->valid || !cp->root_elements || si < 0 || (size_t)si >= p->nstages)
		return cpu;
	for (size_t j = 0; j < p->nstages; j++)
		if (tfd_stage_within(p, (int)j, si))
			cpu -=
			    tfd_cap_stage_cpu_ns(p, j) / (double)cp->root_elements * (1.0 - keep);
	return fmax(0.0, cpu);
}

double tfd_capacity_whatif_kept_cores(const struct tfd_pipeline *p, int si, double keep)
{
	return cores_rate(p, si, tfd_capacity_cpu_kept(p, si, keep));
}

/* Each segment's capacity once stage si and the stages below it do only
 * the share keep of their work (0: none), into caps: the worker slots of a
 * map among them do that share of theirs (none: they go); every other
 * segment loses the rest of their work on its threads, and the slots of a
 * map reading from those threads the reads they held. */
static void kept_caps(const struct tfd_pipeline *p, int si, double keep, double *caps)
{
	double n = (double)p->capacity.root_elements;

	for (size_t gi = 0; gi < p->nsegments; gi++) {
		const struct tfd_segment *g = &p->segments[gi];
		double busy = (double)g->busy_ns;
		bool changed = false;

		if (g->kind == TFD_SEG_FUNCTION && g->owner >= 0 &&
		    tfd_stage_within(p, g->owner, si)) {
			caps[gi] = !(keep > 0) ? INFINITY : g->capacity / keep;
			continue;
		}
		for (size_t j = 0; j < p->nstages; j++) {
			int sj = p->stages[j].segment;

			if (!tfd_stage_within(p, (int)j, si) ||
			    !((g->kind != TFD_SEG_FUNCTION && sj == (int)gi) ||
			      g == slots_reading(p, sj)))
				continue;
			busy -= (double)p->stages[j].work_ns * (1.0 - keep);
			changed = true;
		}
		caps[gi] = !changed || !g->known ? g->capacity
			   : busy > 0		 ? g->parallelism * 1e9 * n / busy
						 : INFINITY;
	}
}

double tfd_capacity_whatif_kept(const struct tfd_pipeline *p, int si, double keep,
				double *step_share)
{
	const struct tfd_capacity *cp = &p->capacity;
	double *caps, rate;

	if (!cp->valid || cp->limiter < 0 || si < 0 || (size_t)si >= p->nstages)
		return 0;
	caps = xmalloc((p->nsegments + 1) * sizeof(double));
	kept_caps(p, si, keep, caps);
	rate =
	    rate_after(p, si, caps, p->nsegments, tfd_capacity_cpu_kept(p, si, keep), step_share);
	free(caps);
	return rate;
}

double tfd_capacity_cpu_after(const struct tfd_pipeline *p, int si, double work_factor,
			      bool saves_cpu)
{
	if (!p->capacity.valid || si < 0 || (size_t)si >= p->nstages)
		return p->capacity.cpu_ns;
	return cpu_after(p, si, work_factor, saves_cpu);
}

bool tfd_stage_between_steps(const struct tfd_pipeline *p, int si)
{
	return si >= 0 && p->stages[si].segment == 0 && !p->stages[si].is_async;
}

/* The CPU time per root element of the synchronous stages on the
 * consumer's own thread, which run between the steps (an async stage there
 * only waits; its function's workers and its input's thread do run beside
 * the step). */
static double consumer_cpu(const struct tfd_pipeline *p)
{
	double w = 0;

	for (size_t i = 0; i < p->nstages; i++)
		if (tfd_stage_between_steps(p, (int)i) && strcmp(p->stages[i].family, "Sleep") != 0)
			w += (double)p->stages[i].work_ns;
	return p->capacity.root_elements ? w / (double)p->capacity.root_elements : 0;
}

/* The cores the pipeline keeps busy beside the step at the rate seen, with
 * cpu_ns of CPU per root element (the step's own and the consumer thread's
 * left out); NAN without a cores model or on a host whose step waits for a
 * device (no step CPU counted). */
static double cores_beside_step(const struct tfd_pipeline *p, double cpu_ns)
{
	const struct tfd_capacity *cp = &p->capacity;

	if (!cp->valid || !(cp->cpu_budget > 0) || !(cp->cpu_step_ns > 0) || !(cp->throughput > 0))
		return NAN;
	return fmax(0.0, cpu_ns - cp->cpu_step_ns - consumer_cpu(p)) * cp->throughput / 1e9;
}

double tfd_capacity_step_share(const struct tfd_pipeline *p, double hidden_ns, double cpu_after_ns,
			       double speedup)
{
	const struct tfd_capacity *cp = &p->capacity;
	double N = cp->cpu_budget, u = cores_beside_step(p, cp->cpu_ns + hidden_ns), u2;

	if (isnan(u) || !(cpu_after_ns < cp->cpu_ns + hidden_ns))
		return 1.0;
	u2 = cores_beside_step(p, cpu_after_ns) * fmax(1.0, speedup);
	return u2 < u ? (N + u2) / (N + u) : 1.0;
}

/* The CPU per root element of the stages below a cache the capture saw
 * fill and read back (tfd_cache_filled_in_capture): they run no more
 * once it is full, so the steady state does without it. */
static double cache_fill_cpu_ns(const struct tfd_pipeline *p)
{
	int below = tfd_cache_filled_in_capture(p);
	double w = 0;
	const struct tfd_capacity *cp = &p->capacity;

	if (below < 0 || !cp->root_elements)
		return 0;
	for (size_t j = 0; j < p->nstages; j++)
		if (tfd_stage_within(p, (int)j, below))
			w += tfd_cap_stage_cpu_ns(p, j);
	return w / (double)cp->root_elements;
}

double tfd_pipeline_cpu_share(const struct tfd_host_result *h)
{
	const struct tfd_pipeline *p = h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
	double u = p ? cores_beside_step(p, p->capacity.cpu_ns - cache_fill_cpu_ns(p)) : NAN;

	/* Python the pipeline runs is no CPU of the model's (a Python wait
	 * holds no core, and the lock, not the cores, bounds it), but Python
	 * seen taking turns at the lock computes while it holds it: one core
	 * at most, for the share of the time it ran (four generators spinning
	 * on 2 cores: 12.9 ms a step, 7.1 ms with their work gone) */
	if (!isnan(u) && p->capacity.python_take_turns)
		u += tfd_python_busy_share(h);

	return isnan(u) ? 0 : u / p->capacity.cpu_budget;
}

/* Whether stage i hands on one element for each its input makes (a map,
 * a prefetch, a repeat): its input's count is its own. */
static bool one_to_one(const struct tfd_pipeline *p, size_t i)
{
	const char *f = p->stages[i].family;

	return strcmp(f, "Map") == 0 || strcmp(f, "ParallelMap") == 0 ||
	       strcmp(f, "ParseExample") == 0 || strcmp(f, "Prefetch") == 0 ||
	       tfd_family_has(f, TFD_FAM_PASS);
}

/* The only stage whose parent is i, -1 for none or several. */
static int only_child(const struct tfd_pipeline *p, int i)
{
	int c = -1;

	for (size_t j = 0; j < p->nstages; j++)
		if (p->stages[j].parent == i) {
			if (c >= 0)
				return -1;
			c = (int)j;
		}
	return c;
}

/* The batch size of a batching stage (its batch_size), 0 for another
 * stage or when it does not say. */
static double batch_of(const struct tfd_pipeline *p, int x)
{
	const char *f = p->stages[x].family;
	double b;

	if (strcmp(f, "Batch") && strcmp(f, "PaddedBatch") && strcmp(f, "MapAndBatch") &&
	    strcmp(f, "ParallelBatch"))
		return 0;
	b = tfd_cap_param_pos(&p->stages[x], "batch_size");
	return b >= 1 && b < 1e9 ? b : 0;
}

/* The most calls in the capacity window of a stage whose parent is x: an
 * interleave's or a flat_map's inner datasets (one stage for all their
 * instances) hand it every element it makes. */
static double inner_calls(const struct tfd_pipeline *p, int x)
{
	double n = 0;

	for (size_t j = 0; j < p->nstages; j++)
		if (p->stages[j].parent == x)
			n = fmax(n, (double)p->stages[j].window_calls);
	return n;
}

/* Whether stage j is an inner dataset of its parent (a flat_map's or an
 * interleave's): its long name numbers the parent's instance,
 * "FlatMap[12]::BatchV2", where the parent's input is "FlatMap::Window". */
static bool is_inner(const struct tfd_pipeline *p, size_t j)
{
	const char *ln = p->stages[j].long_name, *last = ln ? tfd_iter_short(ln) : NULL;

	/* last: past the "::" before the stage's own name */
	return last && last - ln >= 3 && last[-3] == ']';
}

double tfd_elements_per_inner(const struct tfd_pipeline *p, int si)
{
	double e, in = 0;

	if (si < 0 || (size_t)si >= p->nstages)
		return NAN;
	e = (double)p->stages[si].window_calls;
	for (size_t j = 0; j < p->nstages; j++)
		if (p->stages[j].parent == si && is_inner(p, j))
			in = fmax(in, (double)p->stages[j].window_calls);
	if (e < 8 || !(in - e >= 1))
		return NAN;
	return e / (in - e);
}

/* How many elements stage x (a shard's input) made over the capacity
 * window: a shard skips the elements it drops in one call of its input
 * (Skip), so its input's calls undercount them; its function's runs count
 * every one, as do the calls of the stages below it while each hands on
 * one element for each it reads (a batch one for its batch size), and the
 * inner datasets of an interleave right below the shard. The most any of
 * them says; 0 unknown. */
static double elements_made(const struct tfd_pipeline *p, int x, int depth)
{
	double n, b = batch_of(p, x), fn = (double)p->stages[x].fn_calls;
	int c;

	n = fmax((double)p->stages[x].window_calls, b > 0 ? fn / b : fn);
	/* right below the shard only: deeper, the stage's own calls count its
	 * elements, and its inner datasets' add an end-of-input call each */
	if (depth == 0 && (tfd_family_has(p->stages[x].family, TFD_FAM_INTERLEAVE) ||
			   strcmp(p->stages[x].family, "FlatMap") == 0))
		n = fmax(n, inner_calls(p, x));
	if (depth < 64 && (c = only_child(p, x)) >= 0) {
		if (one_to_one(p, (size_t)x))
			n = fmax(n, elements_made(p, c, depth + 1));
		else if (b > 0)
			n = fmax(n, elements_made(p, c, depth + 1) / b);
	}
	return n;
}

/* Whether family f is one of the n families fams (Shard when n is 0). */
static bool drops(const char *f, const char *const *fams, size_t n)
{
	if (!n)
		return strcmp(f, "Shard") == 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(f, fams[i]) == 0)
			return true;
	return false;
}

int tfd_dropped_above(const struct tfd_pipeline *p, int si, const char *const *fams, size_t nfams,
		      int *root, double *keep)
{
	int guard = 0, under = si;
	double made;

	if (!p->capacity.valid || si < 0 || (size_t)si >= p->nstages)
		return -1;
	for (int a = p->stages[si].parent; a >= 0 && guard++ < 10000;
	     under = a, a = p->stages[a].parent) {
		if (!drops(p->stages[a].family, fams, nfams))
			continue;
		made = elements_made(p, under, 0);
		if (!(made > 0) || !p->stages[a].window_calls)
			return -1;
		*root = under;
		*keep = fmin(1.0, (double)p->stages[a].window_calls / made);
		return a;
	}
	return -1;
}

int tfd_focus_dropped(const struct tfd_host_result *h, double *keep, double *cores)
{
	const struct tfd_pipeline *p =
	    h->focus >= 0 && (size_t)h->focus < h->npipelines ? &h->pipelines[h->focus] : NULL;
	const struct tfd_capacity *cp = p ? &p->capacity : NULL;
	int root, q = p ? tfd_dropped_above(p, p->bottleneck, NULL, 0, &root, keep) : -1;

	if (q >= 0 && cores)
		*cores = cp->throughput > 0
			     ? fmax(0.0, cp->cpu_ns - tfd_capacity_cpu_kept(p, root, *keep)) *
				   cp->throughput / 1e9
			     : 0;
	return q;
}
