/* bottleneck.c - the two views of a pipeline's bottleneck.
 *
 * Latency view (XProf's): the stage with the most blocking time over the
 * analyzed root calls, ties to the shallower then earlier stage; the
 * critical path runs from the root to it. Throughput view: the busiest
 * stage of the segment with the lowest capacity (capacity.c), when the
 * capacity model has enough steady-state calls; it is the bottleneck the
 * report names and the rules act on. Both are kept so the report can say
 * when they disagree.
 */
#include <math.h>
#include <stdio.h>

#include "passes.h"
#include "tfd/families.h"

enum tfd_status tfd_bottleneck_latency(struct tfd_pipeline *p, const int *ef, const int *et,
				       size_t ne, struct tfd_err *err)
{
	int64_t best = 0;
	double sum = 0;
	enum tfd_status st;

	p->latency_bottleneck = -1;
	for (size_t i = 0; i < p->nstages; i++) {
		sum += p->stages[i].blocking_share;
		if (p->stages[i].blocking_ns > best) {
			best = p->stages[i].blocking_ns;
			p->latency_bottleneck = (int)i;
		}
	}
	p->unattributed_share = p->analyzed_ns ? 1.0 - sum : 0.0;
	p->bottleneck = p->latency_bottleneck;
	if (p->latency_bottleneck < 0)
		return TFD_OK;
	st = tfd_critpath_compute(p, ef, et, ne, p->latency_bottleneck, err);
	if (st)
		return st;
	for (size_t i = 0; i < p->ncritpath; i++)
		p->stages[p->critpath[i]].on_critical_path = true;
	return TFD_OK;
}

/* Whether stage si's data comes from another machine (tf.data service, a
 * remote source): what it delivers at is that machine's work, which no
 * event of this capture holds. */
static bool remote(const struct tfd_pipeline *p, int si)
{
	const struct tfd_family *f = si >= 0 ? tfd_family_lookup(p->stages[si].family) : NULL;

	return f && (f->xprof == TFD_FX_DATA_SERVICE || f->xprof == TFD_FX_REMOTE_SOURCE);
}

/* Whether a remote stage, the latency view's bottleneck, sets the rate: the
 * lowest segment the capacity model measured and the consumer's demand
 * are both well above the rate seen (REMOTE_SLACK times): the remote
 * work is the capacity the model cannot see (a client pipeline's map
 * before a tf.data service had been named at 11,600/s, with 70.5/s seen
 * and the step taking 106/s). */
#define REMOTE_SLACK 1.25

bool tfd_remote_limits(const struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;

	return TFD_CAPACITY_USABLE(p) && remote(p, p->latency_bottleneck) && cp->throughput > 0 &&
	       cp->demand > REMOTE_SLACK * cp->throughput &&
	       p->segments[cp->limiter].capacity > REMOTE_SLACK * cp->throughput;
}

/* The stage that holds the pipeline up by a call that outlasted the
 * capture, -1 none: the deepest of a run of stages none of whose calls
 * the capture holds (tfd_stage_outlasted) below the latency view's
 * choice, an async stage whose wait no producer call shows, or from the
 * root when it made no call at all (the loop waited for its first element
 * the whole capture). Stages come after their parents. */
static int outlasting(const struct tfd_pipeline *p)
{
	int l = p->latency_bottleneck, best = -1;
	int *top;

	if (!p->nstages || (l >= 0 ? !p->stages[l].is_async : !tfd_stage_outlasted(&p->stages[0])))
		return -1;
	top = xmalloc(p->nstages * sizeof(*top));
	for (size_t j = 0; j < p->nstages; j++) {
		const struct tfd_stage *s = &p->stages[j];
		bool run = s->parent >= 0 && tfd_stage_outlasted(&p->stages[s->parent]);

		top[j] = !tfd_stage_outlasted(s) ? -1 : run ? top[s->parent] : (int)j;
		if (top[j] >= 0 && (l >= 0 ? p->stages[top[j]].parent == l : top[j] == 0) &&
		    (best < 0 || s->depth > p->stages[best].depth))
			best = (int)j;
	}
	free(top);
	return best;
}

/* A stage mostly waits, taking no core, when its CPU time is under this
 * share of its time (a Python function that sleeps or reads, a Sleep) */
#define WAITS_MOSTLY 0.5
/* ... and the stage named instead takes at least this share of the CPU per
 * root element, the step's compute included (a Keras PyDataset's
 * generator waits on Python workers: the stages beside it take under 5 %) */
#define CPU_SHARE_MIN 0.15

/* The share of stage s's time its Python ops' events cover: of its self
 * time (a synchronous stage runs its function inside its calls), of its
 * function's work (an async map: its ops' coverage of it). */
static double python_time_share(const struct tfd_stage *s)
{
	double py = tfd_fn_python_time(s), all = tfd_fn_ops_time(s), whole;

	if (!(py > 0))
		return 0;
	if (s->is_async)
		whole = s->fn_ops_coverage > 0 ? all / s->fn_ops_coverage : 0;
	else
		whole = (double)s->self_ns;
	return whole > 0 ? fmin(1.0, py / whole) : 1.0;
}

/* The stage that takes the most CPU when the host's cores are the limit
 * and the limiting segment's busiest stage mostly waits, -1 otherwise:
 * its calls are long because they wait (for storage, for a core to wake
 * on), and speeding them up frees no core, where cheaper CPU work raises
 * the rate (real TensorFlow: reads sleeping 1.5 ms on 2 interleave threads,
 * busy 84 %, named over an AUTOTUNE map of matmuls on 2 cores; halving the
 * map's work measured 1.47x, halving the reads' sleep 1.11x). A function
 * holding the GIL keeps its name: its Python computes. */
static int cpu_heaviest(const struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *g = &p->segments[cp->limiter];
	int top = g->top_stage, best = -1;
	double top_cpu, best_cpu = 0, t;

	if (!tfd_cores_limit(p) || g->gil || top < 0)
		return -1;
	top_cpu = tfd_cap_stage_cpu_ns(p, (size_t)top);
	t = tfd_cap_stage_time_ns(p, (size_t)top);
	/* Python seen taking turns computes while its ops run: their time is
	 * work too (mostly waiting is then waiting outside them, for a thread
	 * to run on: a read's Python ops took 0.33 ms of its 5.4 ms calls, and
	 * halving the map beside it measured 1.20x, the reads' sleep 1.03x) */
	if (top_cpu + (cp->python_take_turns ? python_time_share(&p->stages[top]) * t : 0) >=
	    WAITS_MOSTLY * t)
		return -1;
	for (size_t i = 1; i < p->nstages; i++) {
		double c = tfd_cap_stage_cpu_ns(p, i);

		if (c > best_cpu) {
			best_cpu = c;
			best = (int)i;
		}
	}
	/* a stage that takes a real part of the cores (not the root's own
	 * bookkeeping beside a Python generator that waits on its workers) */
	if (best < 0 || best_cpu <= top_cpu || !cp->root_elements ||
	    best_cpu / (double)cp->root_elements < CPU_SHARE_MIN * cp->cpu_ns)
		return -1;
	return best;
}

/* The evidence and the next limit when the cores are the limit and stage
 * h takes the most of them (cpu_heaviest()): the limiting segment, which
 * mostly waits, is the next limit after the cores. */
static void cpu_evidence(struct tfd_pipeline *p, int h)
{
	struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *g = &p->segments[cp->limiter];
	double all = 0;
	char a[200], b[120], c[120];

	for (size_t i = 0; i < p->nstages; i++)
		all += tfd_cap_stage_cpu_ns(p, i);
	tfd_segment_name(p, g, a, sizeof(a));
	snprintf(cp->evidence, sizeof(cp->evidence),
		 "the %s %s busy %.0f%%, but %s mostly waits there, on no core (Python "
		 "that sleeps or reads, a thread to run on), while %s takes %.0f%% of the "
		 "stages' CPU",
		 a, g->parallelism > 1 ? "are" : "is", 100 * g->utilization,
		 tfd_stage_label(p, g->top_stage, b, sizeof(b)),
		 tfd_stage_label(p, h, c, sizeof(c)),
		 all > 0 ? 100 * tfd_cap_stage_cpu_ns(p, (size_t)h) / all : 0.0);
	if (cp->cpu_rate > 0 && isfinite(g->capacity)) {
		cp->runner_up = cp->limiter;
		cp->margin = g->capacity / cp->cpu_rate;
	}
}

void tfd_bottleneck_choose(struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;
	int o;

	if (TFD_CAPACITY_USABLE(p) && p->segments[cp->limiter].top_stage >= 0 &&
	    !tfd_remote_limits(p)) {
		p->bottleneck = p->segments[cp->limiter].top_stage;
		if ((o = cpu_heaviest(p)) >= 0) {
			p->bottleneck = o;
			cpu_evidence(p, o);
		}
	} else if ((o = outlasting(p)) >= 0)
		p->bottleneck = o;
	if (p->bottleneck >= 0)
		p->stages[p->bottleneck].is_bottleneck = true;
}
