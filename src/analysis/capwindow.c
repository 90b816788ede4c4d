/* capwindow.c - the capacity model's window (the steady state's root
 * calls) and the pauses in it: the long gaps between steps in which the
 * consumer was away from training; the demand the training steps make
 * (capacity.c). */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

/* root elements needed before the model says anything */
#define MIN_ROOT_ELEMENTS 4

bool tfd_capacity_window(const struct tfd_root_spans *rs, size_t nwarmup, int64_t *t0, int64_t *t1)
{
	if (rs->n < nwarmup + MIN_ROOT_ELEMENTS)
		return false;
	*t0 = tfd_root_start(rs, nwarmup);
	*t1 = *t0;
	for (size_t r = nwarmup; r < rs->n; r++) {
		int64_t end = tfd_root_end(rs, r);

		if (end > *t1)
			*t1 = end;
	}
	return true;
}

/* Candidate pauses in [t0, t1): the long gaps between steps
 * (tfd_long_step_gap) that no root call (rc: by start, each with the
 * latest end up to it) overlaps, into gaps (sorted); how many. */
static size_t step_gaps(const struct tfd_cap_calls *in, const struct tfd_interval *rc, size_t nr,
			int64_t t0, int64_t t1, struct tfd_interval *gaps)
{
	const struct tfd_interval *sp = in->step_spans;
	size_t ns = in->nstep_spans, k = 0, n = 0;
	int64_t med, medgap, reach = sp[0].e;

	tfd_step_gap_medians(sp, ns, &med, &medgap);
	for (size_t i = 1; i < ns && med > 0; i++) {
		int64_t a = reach > t0 ? reach : t0, b = sp[i].s < t1 ? sp[i].s : t1;

		if (sp[i].e > reach)
			reach = sp[i].e;
		if (!tfd_long_step_gap(b - a, med, medgap))
			continue;
		while (k < nr && rc[k].s < b)
			k++;
		if (k && rc[k - 1].e > a)
			continue; /* the consumer read in it */
		gaps[n++] = (struct tfd_interval){a, b};
	}
	return n;
}

/* The pauses in the window [t0, t1) of a pipeline read inside the steps:
 * each step gap (step_gaps) from the end of the last of the pipeline's
 * calls that started in it (its workers filling its buffers for the
 * steps after) on; their time, their number in *n. A pipeline read
 * between the steps is its own demand's, paused or not. */
int64_t tfd_cap_pauses(const struct tfd_pipeline *p, const struct tfd_cap_calls *in, int64_t t0,
		       int64_t t1, uint32_t *n, int64_t *away)
{
	size_t nr = in->roots.n - in->nwarmup, ng;
	int64_t sum = 0;
	struct tfd_interval *rc, *gaps, *found;
	struct tfd_cap_walk w;
	struct tfd_cap_call cc;

	*n = 0;
	*away = 0;
	if (p->outside_steps || in->nstep_spans < 3 || !nr)
		return 0;
	rc = xmalloc(nr * sizeof(*rc));
	for (size_t r = 0; r < nr; r++)
		rc[r] = (struct tfd_interval){tfd_root_start(&in->roots, in->nwarmup + r),
					      tfd_root_end(&in->roots, in->nwarmup + r)};
	qsort(rc, nr, sizeof(*rc), tfd_interval_cmp);
	for (size_t r = 1; r < nr; r++)
		if (rc[r].e < rc[r - 1].e)
			rc[r].e = rc[r - 1].e;
	gaps = xmalloc(in->nstep_spans * sizeof(*gaps));
	ng = step_gaps(in, rc, nr, t0, t1, gaps);
	free(rc);
	/* the gaps as found, searched while their starts move */
	found = xmalloc((ng + 1) * sizeof(*found));
	memcpy(found, gaps, ng * sizeof(*gaps));
	for (size_t g = 0; g < ng; g++)
		*away += gaps[g].e - gaps[g].s;
	for (tfd_cap_walk_begin(&w, in, in->events); ng && tfd_cap_walk_next(&w, &cc);) {
		int64_t s, e;
		size_t lo;

		tfd_cap_walk_times(&w, &cc);
		s = cc.start;
		e = cc.end;
		lo = tfd_intervals_started(found, ng, s);
		if (!lo || s >= gaps[lo - 1].e)
			continue;
		if (e > gaps[lo - 1].s)
			gaps[lo - 1].s = e < gaps[lo - 1].e ? e : gaps[lo - 1].e;
	}
	tfd_cap_walk_end(&w);
	for (size_t g = 0; g < ng; g++)
		if (gaps[g].e > gaps[g].s) {
			sum += gaps[g].e - gaps[g].s;
			(*n)++;
		}
	free(gaps);
	free(found);
	return sum;
}

/* Demand more than this many times the steps' is not the training
 * step's: a consumer that takes elements as they come */
#define STEPS_DEMAND_GAP 3.0

/* The host's steps that overlap the pipeline's root calls (all of them,
 * when the host's steps are not at hand): a loop that makes an iterator
 * each epoch has a pipeline per epoch, each consumed by the steps of its
 * epoch alone (counted over every step, each epoch's demand was a third
 * of the steps' rate, and "its own consumer" said to buffer for them). */
static size_t steps_of_pipeline(const struct tfd_cap_calls *in)
{
	const struct tfd_host *h = in->host;
	int64_t a = INT64_MAX, b = INT64_MIN;
	size_t n = 0;

	if (!h || !h->steps || h->nsteps != in->nsteps)
		return in->nsteps;
	for (size_t r = 0; r < in->roots.n; r++) {
		int64_t s = tfd_root_start(&in->roots, r), e = tfd_root_end(&in->roots, r);

		a = s < a ? s : a;
		b = e > b ? e : b;
	}
	for (size_t s = 0; s < h->nsteps; s++)
		n += h->steps[s].start_ns < b && h->steps[s].end_ns > a;
	return n ? n : in->nsteps;
}

/* The steps' demand instead of the consumer's when the consumer takes
 * elements far faster than the training steps do: a MultiDeviceIterator's
 * thread fills the devices' buffers, a tf.data service worker its own. The
 * steps' rate with free input, times the pipeline's root elements per step
 * (a rebatched pipeline gives one per replica). */
void tfd_cap_steps_demand(const struct tfd_pipeline *p, struct tfd_capacity *cp,
			  const struct tfd_cap_calls *in)
{
	double d;

	/* a loop inside a tf.function: the consumer is the loop's body, and
	 * a step (a marker around the function's call) holds the loop's
	 * start-up too */
	if (tfd_in_loop_input(p->stages[0].long_name))
		return;
	/* read between the steps (a validation pass): they are not its consumer */
	if (p->outside_steps)
		return;
	if (!(in->step_rate > 0) || !in->nsteps || !in->roots.n)
		return;
	d = in->step_rate * (double)in->roots.n / (double)steps_of_pipeline(in);
	if (d > 0 && cp->demand > STEPS_DEMAND_GAP * d) {
		cp->demand = d;
		cp->demand_from_steps = true;
	}
}
