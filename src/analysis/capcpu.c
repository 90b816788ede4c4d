/* capcpu.c - the cores' part of the capacity model (capacity.c): each
 * stage's time and CPU time over the window, the host's cores as the
 * pipeline's root states them, and the rate a set of segment capacities
 * allows with the cores and the step's compute.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"
#include "tfd/select.h"

double tfd_cap_param_pos(const struct tfd_stage *s, const char *key)
{
	const char *v = s->sample ? tfd_event_param(s->sample, key) : NULL;
	double d = v ? strtod(v, NULL) : 0;

	return d > 0 ? d : 0;
}

double tfd_cap_cores(const struct tfd_pipeline *p)
{
	return fmax(tfd_cap_param_pos(&p->stages[0], "cpu_budget"),
		    tfd_cap_param_pos(&p->stages[0], "threadpool_size"));
}

/* Root elements per second the pipeline delivers by the model. The consumer
 * runs its step and the stages of its own segment one after the other (no
 * prefetch between them), so that part takes compute + their work; every
 * other segment works in parallel and delivers at its capacity. caps, when
 * given, replaces the segments' capacities (what-if). */
double tfd_cap_model_rate(const struct tfd_segment *sg, size_t n, const struct tfd_capacity *cp,
			  const double *caps, double cpu_ns, double step_share)
{
	double compute = isfinite(cp->demand) ? step_share * 1e9 / cp->demand : 0;
	double T = compute, cap0 = caps ? caps[0] : sg[0].capacity;

	if (n && isfinite(cap0) && cap0 > 0)
		T += 1e9 / cap0;
	for (size_t g = 1; g < n; g++) {
		double cap = caps ? caps[g] : sg[g].capacity;

		if (!isnan(cap) && cap > 0 && isfinite(cap) && 1e9 / cap > T)
			T = 1e9 / cap;
	}
	/* the cores: all that CPU work shares cpu_budget of them */
	if (cp->cpu_budget > 0 && cpu_ns / cp->cpu_budget > T)
		T = cpu_ns / cp->cpu_budget;
	return T > 0 ? 1e9 / T : INFINITY;
}

/* The share of stage s's function op time that Python ops take (0 without
 * op events). */
double tfd_cap_py_share(const struct tfd_stage *s)
{
	double all = tfd_fn_ops_time(s);

	return all > 0 ? tfd_fn_python_time(s) / all : 0;
}

/* The read time held in async stage q's worker slots: its input segment's work. */
double tfd_cap_reads_of(const struct tfd_pipeline *p, int q)
{
	for (size_t gi = 0; gi < p->nsegments; gi++)
		if (p->segments[gi].kind == TFD_SEG_INPUT && p->segments[gi].owner == q)
			return (double)p->segments[gi].busy_ns;
	return 0;
}

/* The time stage i took in the window: its own work and, for an async
 * map, its function's runs (the reads its slots held are its input
 * segment's own). Its CPU time leaves out the share of Python ops (the
 * GIL, not the cores, bounds them, and a Python wait holds no core) and a
 * Sleep's. */
double tfd_cap_stage_time_ns(const struct tfd_pipeline *p, size_t i)
{
	const struct tfd_segment *g = tfd_stage_function_segment(p, (int)i);
	double w = (double)p->stages[i].work_ns;

	if (g && g->known)
		w += fmax(0.0, (double)g->busy_ns - tfd_cap_reads_of(p, (int)i));
	return w;
}

double tfd_cap_stage_cpu_ns(const struct tfd_pipeline *p, size_t i)
{
	const struct tfd_stage *s = &p->stages[i];

	if (strcmp(s->family, "Sleep") == 0)
		return 0;
	return tfd_cap_stage_time_ns(p, i) * (1.0 - tfd_cap_py_share(s));
}

/* The cores' part of the model (p's segments are in): the host's cores as
 * the pipeline root states them (tfd_cap_cores()) and the CPU time per
 * root element. The step's own time counts on a host
 * without device activity (its compute is the host's); on a host with a
 * device it waits for the device. */
void tfd_cap_cpu_model(struct tfd_pipeline *p, const struct tfd_cap_calls *in)
{
	struct tfd_capacity *cp = &p->capacity;
	double w = 0;

	cp->cpu_budget = tfd_cap_cores(p);
	if (!(cp->cpu_budget > 0) || !cp->root_elements)
		return;
	for (size_t i = 0; i < p->nstages; i++)
		w += tfd_cap_stage_cpu_ns(p, i);
	cp->cpu_step_ns = !in->host->dev.read && !in->host->dev.nplanes && isfinite(cp->demand)
			      ? 1e9 / cp->demand
			      : 0;
	cp->cpu_ns = w / (double)cp->root_elements + cp->cpu_step_ns;
	cp->cpu_rate = cp->cpu_ns > 0 ? cp->cpu_budget * 1e9 / cp->cpu_ns : INFINITY;
	/* the work is the calls' wall time: with more threads than cores it
	 * holds their waits for a core. The cores did deliver the throughput
	 * seen, so they allow that at least (16 map workers on 2 cores had put
	 * "at most 70.1/s" beside 82.2/s seen); the model's CPU per element
	 * stays for the what-ifs, whose ratios it calibrates */
	if (cp->throughput > cp->cpu_rate)
		cp->cpu_rate = cp->throughput;
}
