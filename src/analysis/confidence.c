/* confidence.c - how sure the verdict and the bottleneck are, from the
 * evidence behind them, with the reasons in plain words.
 *
 * Verdict (the input-bound share): the steps it rests on. 20 or more is
 * high, 5 to 19 medium, fewer low; a share from the capture span (no step
 * markers) is low.
 * Bottleneck: the root calls analyzed (20+ high, 4-19 medium, fewer low);
 * with the capacity model, the margin to the next limit (under 1.15x low,
 * under 1.5x medium) and whether the limit was inferred (at most medium);
 * without it, the latency view of few calls (at most medium). Calls linked
 * only by time overlap or not at all lower it one level.
 */
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "passes.h"

const char *tfd_confidence_name(enum tfd_confidence c)
{
	return c == TFD_CONF_HIGH ? "high" : c == TFD_CONF_MEDIUM ? "medium" : "low";
}

static void cap_at(struct tfd_sureness *s, enum tfd_confidence max, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Lower s to at most max, and say why. */
static void cap_at(struct tfd_sureness *s, enum tfd_confidence max, const char *fmt, ...)
{
	size_t l = strlen(s->reasons);
	va_list ap;

	if (s->level > max)
		s->level = max;
	if (l && l + 2 < sizeof(s->reasons)) {
		memcpy(s->reasons + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(s->reasons + l, sizeof(s->reasons) - l, fmt, ap);
	va_end(ap);
}

/* Device planes whose spans all fall outside the steps (a clock offset
 * between the device and the host, a capture of the wrong window): the
 * device time the share should hold is missing, and the verdict says so. */
static void device_outside(const struct tfd_host_result *hr, struct tfd_sureness *s)
{
	const struct tfd_device *d = &hr->host->dev;
	uint64_t spans = 0;
	int64_t owned = 0;

	for (int k = 0; k < TFD_DEV__COUNT; k++) {
		spans += d->kind_n[k];
		if (k != TFD_DEV_WAIT)
			owned += hr->dev_ns[k];
	}
	if (d->nplanes && spans && !owned && hr->nsteps)
		cap_at(s, TFD_CONF_LOW,
		       "the device planes' %" PRIu64 " spans all fall outside the steps, so device "
		       "time is not counted: a clock offset between device and host?",
		       spans);
}

/* The iterations of the training loop the steps hold: the root calls of
 * the pipeline that holds the loop up most, when a step runs several (a
 * loop inside a tf.function, next() under tf.range or a for loop over the
 * dataset there, with a marker around each call; Keras'
 * steps_per_execution); 0 without one. */
static size_t loop_iterations(const struct tfd_host_result *hr)
{
	size_t calls;

	if (hr->focus < 0 || (size_t)hr->focus >= hr->npipelines)
		return 0;
	calls = 0; /* its own and its repeats' (an iterator each call) */
	for (size_t i = 0; i < hr->npipelines; i++)
		if ((int)i == hr->focus || hr->pipelines[i].repeat_of1 == hr->focus + 1)
			calls += (size_t)hr->pipelines[i].ncalls;
	/* two a step or more: a call or two outside the steps is no loop */
	return hr->all.nsteps && calls >= 2 * hr->all.nsteps ? calls : 0;
}

static void verdict(struct tfd_host_result *hr)
{
	struct tfd_sureness *s = &hr->confidence;
	size_t iters = loop_iterations(hr);

	s->level = TFD_CONF_HIGH;
	if (isnan(hr->input_pct)) {
		cap_at(s, TFD_CONF_LOW,
		       "no step markers and no IteratorGetNext events: the share "
		       "is unknown");
		return;
	}
	if (strcmp(hr->input_basis, "steps") != 0) {
		cap_at(s, TFD_CONF_LOW, "no step markers: the share is over the capture span");
		return;
	}
	if (iters > hr->all.nsteps) {
		/* the loop's iterations behind the share */
		if (iters < 20)
			cap_at(s, TFD_CONF_MEDIUM,
			       "%zu iterations of the loop behind the share: 20+ make it firmer",
			       iters);
	} else if (hr->all.nsteps < 5)
		cap_at(s, TFD_CONF_LOW, "%zu step%s captured: profile longer, e.g. 20+ steps",
		       hr->all.nsteps, hr->all.nsteps == 1 ? "" : "s");
	else if (hr->nsteps < 20)
		cap_at(s, TFD_CONF_MEDIUM, "%zu step%s behind the share: 20+ make it firmer",
		       hr->nsteps, hr->nsteps == 1 ? "" : "s");
	device_outside(hr, s);
}

/* Whether an iterator of family f asks its input for one element (or more)
 * for each it gives: its input's calls cannot be clearly fewer than its own
 * but for what its buffers held when the capture began. */
static bool takes_each(const char *f)
{
	static const char *const fam[] = {"Root",	 "Model",	"Prefetch",
					  "ParallelMap", "Map",		"MapAndBatch",
					  "Batch",	 "PaddedBatch", "Filter"};

	for (size_t i = 0; i < sizeof(fam) / sizeof(fam[0]); i++)
		if (f && strcmp(f, fam[i]) == 0)
			return true;
	return false;
}

/* A stage whose calls are clearly fewer than what the stage above it took
 * from it, beyond every buffer and call in flight between them: its
 * threads' events were lost (TensorFlow 2.12 and 2.15 kept none of a
 * thread that ended before the profile stopped, as an iterator made each
 * epoch does: a Keras 2 fit's ParallelMapV2 had made 10 elements for the
 * 21 its Prefetch gave), so its work and busy time count low. -1: none. */
static int lost_events(const struct tfd_pipeline *p)
{
	for (size_t i = 1; i < p->nstages; i++) {
		const struct tfd_stage *s = &p->stages[i], *up;
		double slack = 2;

		if (s->parent < 0 || (size_t)s->parent >= p->nstages)
			continue;
		up = &p->stages[s->parent];
		if (up->calls_all < 8 || !takes_each(up->family))
			continue;
		for (size_t g = 0; g < p->nsegments; g++)
			if (p->segments[g].owner == s->parent)
				slack +=
				    (isfinite(p->segments[g].buf_hi) ? p->segments[g].buf_hi : 0) +
				    (isfinite(p->segments[g].par_hi) ? p->segments[g].par_hi : 0);
		if ((double)s->calls_all + slack < 0.9 * (double)up->calls_all)
			return (int)i;
	}
	return -1;
}

static void bottleneck(struct tfd_pipeline *p)
{
	struct tfd_sureness *s = &p->confidence;
	const struct tfd_capacity *cp = &p->capacity;
	size_t weak = p->links[TFD_LINK_OVERLAP] + p->links[TFD_LINK_NONE];
	size_t all = weak + p->links[TFD_LINK_SYNC] + p->links[TFD_LINK_PRODUCE];
	int lost;

	/* the calls of a stage whose parent made none in the capture have
	 * no parent call to be linked to: no weak link */
	for (size_t i = 1; i < p->nstages; i++)
		if (p->stages[i].parent >= 0 &&
		    tfd_stage_outlasted(&p->stages[p->stages[i].parent])) {
			weak -= p->stages[i].links[TFD_LINK_NONE];
			all -= p->stages[i].links[TFD_LINK_NONE];
		}
	s->level = TFD_CONF_HIGH;
	if (p->bottleneck < 0) {
		cap_at(s, TFD_CONF_LOW, "no stage holds the time");
		return;
	}
	if (tfd_stage_outlasted(&p->stages[p->bottleneck]))
		cap_at(s, TFD_CONF_LOW, "no call of %s ended in the capture: profile longer",
		       p->stages[p->bottleneck].name);
	if (p->ncalls < 4)
		cap_at(s, TFD_CONF_LOW,
		       "%" PRIu64 " root call%s captured: profile longer, e.g. "
		       "20+ steps",
		       p->ncalls, p->ncalls == 1 ? "" : "s");
	else if (p->ncalls < 20)
		cap_at(s, TFD_CONF_MEDIUM, "%" PRIu64 " root calls: 20+ make it firmer", p->ncalls);
	if (cp->valid && cp->inferred)
		cap_at(s, TFD_CONF_MEDIUM,
		       "the limit is inferred: its function's work was not "
		       "captured");
	if (cp->valid && isfinite(cp->margin) && cp->margin < 1.15)
		cap_at(s, TFD_CONF_LOW, "the next limit is only %.2fx higher: both may need work",
		       cp->margin);
	else if (cp->valid && isfinite(cp->margin) && cp->margin < 1.5)
		cap_at(s, TFD_CONF_MEDIUM, "the next limit is %.2fx higher", cp->margin);
	if (!cp->valid && p->ncalls >= 4)
		cap_at(s, TFD_CONF_MEDIUM,
		       "latency view only: too few steady-state calls for a "
		       "throughput model");
	/* (a device pipeline is fed as the host pipeline delivers) */
	if (!p->is_device && (lost = lost_events(p)) >= 0)
		cap_at(s, TFD_CONF_LOW,
		       "%s made %" PRIu64 " elements for the %" PRIu64 " %s took: its threads' "
		       "events were lost (TensorFlow 2.12 and 2.15 keep none of a thread that ends "
		       "before the profile stops), so its work counts low",
		       p->stages[lost].name, p->stages[lost].calls_all,
		       p->stages[p->stages[lost].parent].calls_all,
		       p->stages[p->stages[lost].parent].name);
	if (all && weak * 2 > all) {
		enum tfd_confidence lower = s->level > TFD_CONF_LOW ? s->level - 1 : TFD_CONF_LOW;

		cap_at(s, lower,
		       "most calls linked by time overlap only: the capture has no "
		       "Produce/Consume events");
	}
}

void tfd_confidence_compute(struct tfd_host_result *hr)
{
	verdict(hr);
	for (size_t i = 0; i < hr->npipelines; i++)
		bottleneck(&hr->pipelines[i]);
}

/* Without steps (the capture's span stands for them): its input pipeline's
 * root calls, the elements the loop took, -1 when that does not apply. */
static int64_t span_elements(const struct tfd_host_result *h)
{
	if (strcmp(h->input_basis, "capture span") != 0 || h->focus < 0 ||
	    (size_t)h->focus >= h->npipelines)
		return -1;
	return (int64_t)h->pipelines[h->focus].ncalls;
}

bool tfd_too_short(const struct tfd_host_result *h, char *buf, size_t len)
{
	int64_t took;
	char what[96];

	if (!h)
		return false;
	took = span_elements(h);
	if (took >= 0 && took < TFD_SHORT_STEPS)
		snprintf(what, sizeof(what),
			 "no step, and %" PRId64 " element%s of the input taken", took,
			 took == 1 ? "" : "s");
	else if (strcmp(h->input_basis, "steps") != 0 || h->all.nsteps >= TFD_SHORT_STEPS ||
		 loop_iterations(h) >= TFD_SHORT_STEPS)
		return false;
	else
		snprintf(what, sizeof(what), "%zu step%s", h->all.nsteps,
			 h->all.nsteps == 1 ? "" : "s");
	snprintf(buf, len,
		 "capture too short to judge: %s. Profile %d steps or more after "
		 "warm-up: with Keras, TensorBoard(log_dir, profile_batch=(10, 30)); in a custom "
		 "loop, tf.profiler.experimental.start(log_dir) before step 10 and .stop() after "
		 "step 30, each step, its next() included, inside "
		 "tf.profiler.experimental.Trace(\"train\", "
		 "step_num=step, _r=1). What follows is a first look",
		 what, TFD_WANT_STEPS);
	return true;
}

bool tfd_analysis_too_short(const struct tfd_analysis *a, char *buf, size_t len)
{
	return a->any_tfdata && a->nhosts && tfd_too_short(&a->hosts[0], buf, len);
}
