/* worth.c - a finding's estimate on one line of a report ("worth:"), and
 * the rates the reports print. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output_impl.h"
#include "tfd/render.h"

void tfd_fmt_rate(double v, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "unbounded");
	else if (v >= 100)
		snprintf(buf, len, "%.0f/s", v);
	else
		snprintf(buf, len, "%.3g/s", v);
}

void tfd_fmt_rate_of(double v, const char *what, char *buf, size_t len)
{
	char r[32];

	tfd_fmt_rate(v, r, sizeof(r));
	if (isfinite(v))
		snprintf(buf, len, "%.*s %s/s", (int)(strlen(r) - 2), r, what);
	else
		snprintf(buf, len, "%s", r);
}

/* "1.65x throughput (84 elements/s -> 139 elements/s; ...)", the share of
 * the elements a shard or a filter keeps when the stages below it would
 * run for those only, and what limits then. */
static void throughput_gain(const struct tfd_estimate *e, const char *r1, const char *r2,
			    struct tfd_buf *b)
{
	char t1[32], t2[32];

	tfd_buf_printf(b, "%.2fx throughput (%s -> %s; %s -> %s per root element)", e->speedup, r1,
		       r2, tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)),
		       tfd_fmt_ns(e->new_latency_ns, t2, sizeof(t2)));
	if (e->of && strcmp(e->of, "dropped") == 0 && e->factor > 1 && e->dropped_by)
		tfd_buf_printf(b,
			       " with the stages below %s run for the 1 element in %.1f it keeps",
			       e->dropped_by, e->factor);
	tfd_buf_puts(b, e->capped_by_demand  ? ", then the step's own time limits"
			: e->capped_by_cores ? ", then the host's cores limit"
					     : "");
}

/* What caps a latency-basis estimate once the change is made: ", then
 * the host's cores limit", ", then the slowest stage limits" or "". */
static const char *then_limits(const struct tfd_estimate *e)
{
	return e->capped_by_cores      ? ", then the host's cores limit"
	       : e->capped_by_producer ? ", then the slowest stage limits"
				       : "";
}

bool tfd_fmt_worth(const struct tfd_estimate *e, struct tfd_buf *b)
{
	char t1[32], t2[32];

	if (!e->known)
		return false;
	if (strcmp(e->basis, "capacity") == 0) {
		char r1[48], r2[48];

		tfd_fmt_rate_of(e->throughput, "elements", r1, sizeof(r1));
		tfd_fmt_rate_of(e->new_throughput, "elements", r2, sizeof(r2));
		if (e->misses_limit && e->input_bound_by_demand)
			tfd_buf_puts(b, "~1.0x: the pipeline already delivers faster than the "
					"step consumes");
		else if (e->misses_limit && e->capped_by_cores)
			tfd_buf_puts(
			    b, "~1.0x: the host's cores are already the limit, so spreading "
			       "the work over more threads gains nothing (cheaper work would)");
		else if (e->misses_limit && e->capped_by_pool)
			tfd_buf_puts(b, "~1.0x: the threads of the pool the functions run on are "
					"the limit, so more calls at once wait for them (cheaper "
					"work would help)");
		else if (e->misses_limit)
			tfd_buf_puts(b, "~1.0x: this stage does not limit throughput, so the "
					"change alone gains nothing");
		else
			throughput_gain(e, r1, r2, b);
	} else if (strcmp(e->basis, "steps") == 0 && e->model && strcmp(e->model, "free_cpu") == 0)
		tfd_buf_printf(
		    b, "%.2fx step time with the pipeline's CPU work / %g (%s -> %s per %s)",
		    e->speedup, e->factor, tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)),
		    tfd_fmt_ns(e->new_latency_ns, t2, sizeof(t2)),
		    e->per_element ? "root element" : "step");
	else if (strcmp(e->basis, "steps") == 0 && e->model && strcmp(e->model, "fewer_gaps") == 0)
		tfd_buf_printf(b,
			       "%.2fx the time a step with the stretches between the steps, "
			       "%g times rarer (%s -> %s per step)",
			       e->speedup, e->factor, tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)),
			       tfd_fmt_ns(e->new_latency_ns, t2, sizeof(t2)));
	else if (strcmp(e->basis, "steps") == 0)
		tfd_buf_printf(b, "%.2fx step time (%s -> %s per step)", e->speedup,
			       tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)),
			       tfd_fmt_ns(e->new_latency_ns, t2, sizeof(t2)));
	else if (e->capped_by_producer && e->step_speedup < 1.02)
		tfd_buf_puts(b, "~1.0x: the slowest stage already sets the rate; overlapping it "
				"with the step does not make it faster");
	else if (e->speedup > 0 && e->step_speedup > 0)
		tfd_buf_printf(b, "~%.2fx step time (root call %s -> %s)%s", e->step_speedup,
			       tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)),
			       tfd_fmt_ns(e->new_latency_ns, t2, sizeof(t2)), then_limits(e));
	else if (e->speedup > 0)
		tfd_buf_printf(b, "root call %s -> %s (%.2fx)",
			       tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)),
			       tfd_fmt_ns(e->new_latency_ns, t2, sizeof(t2)), e->speedup);
	else if (e->step_speedup > 0)
		tfd_buf_printf(b,
			       "~%.2fx step time (root call %s -> hidden behind the step's other "
			       "work)%s",
			       e->step_speedup, tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)),
			       then_limits(e));
	else
		tfd_buf_printf(b, "root call %s -> hidden behind the step's other work",
			       tfd_fmt_ns(e->latency_ns, t1, sizeof(t1)));
	if (!isnan(e->input_percent_after))
		tfd_buf_printf(b, ", input wait ~%.1f%% of step time", e->input_percent_after);
	return true;
}
