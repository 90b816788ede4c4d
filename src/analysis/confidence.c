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

static void bottleneck(struct tfd_pipeline *p)
{
	struct tfd_sureness *s = &p->confidence;
	const struct tfd_capacity *cp = &p->capacity;
	size_t weak = p->links[TFD_LINK_OVERLAP] + p->links[TFD_LINK_NONE];
	size_t all = weak + p->links[TFD_LINK_SYNC] + p->links[TFD_LINK_PRODUCE];

	s->level = TFD_CONF_HIGH;
	if (p->bottleneck < 0) {
		cap_at(s, TFD_CONF_LOW, "no stage holds the time");
		return;
	}
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

bool tfd_too_short(const struct tfd_host_result *h, char *buf, size_t len)
{
	if (!h || strcmp(h->input_basis, "steps") != 0 || h->all.nsteps >= TFD_SHORT_STEPS ||
	    loop_iterations(h) >= TFD_SHORT_STEPS)
		return false;
	snprintf(buf, len,
		 "capture too short to judge: %zu step%s. Profile %d steps or more after "
		 "warm-up: with Keras, TensorBoard(log_dir, profile_batch=(10, 30)); in a custom "
		 "loop, tf.profiler.experimental.start(log_dir) before step 10 and .stop() after "
		 "step 30, each step, its next() included, inside "
		 "tf.profiler.experimental.Trace(\"train\", "
		 "step_num=step, _r=1). What follows is a first look",
		 h->all.nsteps, h->all.nsteps == 1 ? "" : "s", TFD_WANT_STEPS);
	return true;
}

bool tfd_analysis_too_short(const struct tfd_analysis *a, char *buf, size_t len)
{
	return a->any_tfdata && a->nhosts && tfd_too_short(&a->hosts[0], buf, len);
}
