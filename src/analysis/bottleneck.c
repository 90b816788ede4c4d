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
#include <string.h>

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
/* ... or, when it computes, it takes at least this many times its CPU */
#define CPU_HEAVIER 1.5

/* The time stage s's function's op events are a share of: its self time
 * over every call, as the ops are summed (a synchronous stage runs its
 * function inside its calls; the analyzed calls' self time, a part of it,
 * had put a read's Python at 53 % of its time for 42 %), its function's
 * work (an async map: its ops' coverage of it); 0 unknown. */
static double fn_whole(const struct tfd_stage *s)
{
	if (s->is_async)
		return s->fn_ops_coverage > 0 ? tfd_fn_ops_time(s) / s->fn_ops_coverage : 0;
	return (double)s->self_all_ns;
}

/* The share of stage s's time its Python ops' events cover. */
static double python_time_share(const struct tfd_stage *s)
{
	double py = tfd_fn_python_time(s), whole = fn_whole(s);

	if (!(py > 0))
		return 0;
	return whole > 0 ? fmin(1.0, py / whole) : 1.0;
}

/* The CPU time stage i took in the window as its function's ops show it:
 * the share of its time their events cover, the Python ops' left out
 * (tfd_cap_stage_cpu_ns()), for a map or a filter, whose function is its
 * work. The rest of its time is its wait for a thread of the pool its ops
 * run on, or for a core: on full cores a filter's predicate of matmuls
 * took 16.5 ms of its thread an element, its ops 5.6 ms, queued behind a
 * parallel map's ops of 9.1 ms; halving the map's work measured 1.14x, the
 * predicate's 1.04x. Other stages' functions are not their work (a
 * flat_map's makes the datasets whose iterators it runs, a snapshot's
 * picks a shard while it writes): their time as the window shows it is the
 * measure, as it is without op events. */
static double stage_compute_ns(const struct tfd_pipeline *p, size_t i)
{
	const struct tfd_stage *s = &p->stages[i];
	double ops = tfd_fn_ops_time(s) - tfd_fn_python_time(s), whole = fn_whole(s);

	if (!s->nfn_ops || !(whole > 0) || !tfd_fn_is_work(s))
		return tfd_cap_stage_cpu_ns(p, i);
	return tfd_cap_stage_time_ns(p, i) * fmin(1.0, ops / whole);
}

/* The CPU time the limiting segment's stages took in the window
 * (stage_compute_ns()): a function's workers, theirs and the read their
 * slots hold when that is their busiest part; a thread's, its synchronous
 * stages' (an async stage's function runs elsewhere). */
static double limit_compute_ns(const struct tfd_pipeline *p, int lim)
{
	const struct tfd_segment *g = &p->segments[lim];
	double c = 0;

	if (g->kind == TFD_SEG_FUNCTION)
		return (g->owner >= 0 ? stage_compute_ns(p, (size_t)g->owner) : 0) +
		       (g->top_stage != g->owner ? stage_compute_ns(p, (size_t)g->top_stage) : 0);
	for (size_t i = 0; i < p->nstages; i++)
		if (p->stages[i].segment == lim && !p->stages[i].is_async)
			c += stage_compute_ns(p, i);
	return c;
}

/* Whether stage i runs in the limiting segment lim. */
static bool in_limit(const struct tfd_pipeline *p, int lim, size_t i)
{
	const struct tfd_segment *g = &p->segments[lim];

	if (g->kind == TFD_SEG_FUNCTION)
		return (int)i == g->owner || (int)i == g->top_stage;
	return p->stages[i].segment == lim && !p->stages[i].is_async;
}

bool tfd_limit_mostly_waits(const struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;
	int top = cp->limiter >= 0 ? p->segments[cp->limiter].top_stage : -1;
	double t;

	if (top < 0)
		return false;
	t = tfd_cap_stage_time_ns(p, (size_t)top);
	/* Python seen taking turns computes while its ops run: their time is
	 * work too (mostly waiting is then waiting outside them, for a thread
	 * to run on: a read's Python ops took 0.33 ms of its 5.4 ms calls, and
	 * halving the map beside it measured 1.20x, the reads' sleep 1.03x) */
	return stage_compute_ns(p, (size_t)top) +
		   (cp->python_take_turns ? python_time_share(&p->stages[top]) * t : 0) <
	       WAITS_MOSTLY * t;
}

/* The stage that takes the most CPU when the host's cores are the limit
 * and the limiting segment's busiest stage mostly waits (*waits), or
 * computes but takes CPU_HEAVIER times less than it; -1 otherwise. A stage
 * that mostly waits has long calls because it waits (for storage, for a
 * core to wake on), and speeding it up frees no core, where cheaper CPU
 * work raises the rate (real TensorFlow: reads sleeping 1.5 ms on 2
 * interleave threads, busy 84 %, named over an AUTOTUNE map of matmuls on
 * 2 cores; halving the map's work measured 1.47x, halving the reads' sleep
 * 1.11x). On full cores a lighter stage's thread runs slower for the
 * heavier's work (random real pipelines of 2-4 stages on 2 full cores:
 * where another stage took 1.5x the CPU of the limiting segment's stages
 * or more, halving it gained at least as much on every one; any factor
 * from 1.4 to 2 picks the same ones). A function holding the GIL keeps its
 * name: its Python computes. */
static int cpu_heaviest(const struct tfd_pipeline *p, bool *waits)
{
	const struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *g = &p->segments[cp->limiter];
	int top = g->top_stage, best = -1;
	double top_cpu, best_cpu = 0;

	if (!tfd_cores_limit(p) || g->gil || top < 0)
		return -1;
	top_cpu = stage_compute_ns(p, (size_t)top);
	*waits = tfd_limit_mostly_waits(p);
	for (size_t i = 1; i < p->nstages; i++) {
		double c = stage_compute_ns(p, i);

		if (c > best_cpu && !(!*waits && in_limit(p, cp->limiter, i))) {
			best_cpu = c;
			best = (int)i;
		}
	}
	/* a stage that takes a real part of the cores (not the root's own
	 * bookkeeping beside a Python generator that waits on its workers) */
	if (best < 0 || best == top || !cp->root_elements ||
	    best_cpu / (double)cp->root_elements < CPU_SHARE_MIN * cp->cpu_ns)
		return -1;
	if (*waits ? best_cpu <= top_cpu
		   : best_cpu < CPU_HEAVIER * limit_compute_ns(p, cp->limiter))
		return -1;
	return best;
}

/* The evidence and the next limit when the cores are the limit and stage
 * h takes the most of them (cpu_heaviest()): the limiting segment, which
 * mostly waits (waits) or computes less, is the next limit after the
 * cores. */
static void cpu_evidence(struct tfd_pipeline *p, int h, bool waits)
{
	struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *g = &p->segments[cp->limiter];
	double all = 0, hc = stage_compute_ns(p, (size_t)h), t, tc;
	char a[200], b[120], c[120], e[1024];
	const char *lb, *lc;

	for (size_t i = 0; i < p->nstages; i++)
		all += stage_compute_ns(p, i);
	tfd_segment_name(p, g, a, sizeof(a));
	lb = tfd_stage_label(p, g->top_stage, b, sizeof(b));
	lc = tfd_stage_label(p, h, c, sizeof(c));
	t = tfd_cap_stage_time_ns(p, (size_t)g->top_stage);
	tc = stage_compute_ns(p, (size_t)g->top_stage);
	if (waits && tc != tfd_cap_stage_cpu_ns(p, (size_t)g->top_stage))
		snprintf(e, sizeof(e),
			 "the %s %s busy %.0f%%, but %s's ops run %.0f%% of its time there (the "
			 "rest waits for a thread of their pool or a core), while %s takes "
			 "%.0f%% of the stages' CPU",
			 a, g->parallelism > 1 ? "are" : "is", 100 * g->utilization, lb,
			 t > 0 ? 100 * tc / t : 0.0, lc, all > 0 ? 100 * hc / all : 0.0);
	else if (waits)
		snprintf(e, sizeof(e),
			 "the %s %s busy %.0f%%, but %s mostly waits there, on no core (Python "
			 "that sleeps or reads, a thread to run on), while %s takes %.0f%% of "
			 "the stages' CPU",
			 a, g->parallelism > 1 ? "are" : "is", 100 * g->utilization, lb, lc,
			 all > 0 ? 100 * hc / all : 0.0);
	else
		snprintf(e, sizeof(e),
			 "the %s %s busy %.0f%%, but on full cores %s takes %.0f%% of the "
			 "stages' CPU (its ops' events), %.1fx what runs there",
			 a, g->parallelism > 1 ? "are" : "is", 100 * g->utilization, lc,
			 all > 0 ? 100 * hc / all : 0.0,
			 hc / fmax(1.0, limit_compute_ns(p, cp->limiter)));
	tfd_cap_set_evidence(cp, e);
	if (cp->cpu_rate > 0 && isfinite(g->capacity)) {
		cp->runner_up = cp->limiter;
		cp->margin = g->capacity / cp->cpu_rate;
	}
}

/* The time stage i's function's ops held a thread of the pool in the
 * window: every op, Python's too (a sleep holds its thread as a matmul
 * does). */
static double pool_ops_ns(const struct tfd_pipeline *p, size_t i)
{
	return tfd_fn_ops_time(&p->stages[i]);
}

double tfd_pool_ops_ns(const struct tfd_pipeline *p)
{
	double all = 0;

	for (size_t i = 0; i < p->nstages; i++)
		all += pool_ops_ns(p, i);
	return all;
}

int tfd_pool_heaviest(const struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *g;
	const struct tfd_stage *t;
	int top, best = -1;
	double whole, best_ops = 0;
	bool waits = false;

	if (!TFD_CAPACITY_USABLE(p) || tfd_remote_limits(p) || cpu_heaviest(p, &waits) >= 0)
		return -1;
	g = &p->segments[cp->limiter];
	top = g->top_stage;
	if (g->kind != TFD_SEG_INPUT || g->gil || top < 0)
		return -1;
	t = &p->stages[top];
	whole = fn_whole(t);
	if (!t->nfn_ops || !(whole > 0) || !tfd_fn_is_work(t) ||
	    pool_ops_ns(p, (size_t)top) >= WAITS_MOSTLY * whole)
		return -1;
	for (size_t i = 1; i < p->nstages; i++)
		if ((int)i != top && pool_ops_ns(p, i) > best_ops) {
			best_ops = pool_ops_ns(p, i);
			best = (int)i;
		}
	if (best < 0 || best_ops <= pool_ops_ns(p, (size_t)top))
		return -1;
	/* Python ops wait for the interpreter's lock too, holding their
	 * thread of the pool: with Python in another stage's function, the
	 * lock may be what they wait for */
	if (tfd_fn_python_time(&p->stages[best]) > 0.5 * best_ops)
		for (size_t i = 1; i < p->nstages; i++)
			if ((int)i != best && tfd_fn_python_time(&p->stages[i]) > 0)
				return -1;
	return best;
}

/* The evidence when the limiting thread's busiest stage mostly waits for
 * a thread of the pool and stage h's ops hold the pool most
 * (tfd_pool_heaviest()); the thread is the next limit after the pool. */
static void pool_evidence(struct tfd_pipeline *p, int h)
{
	struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *g = &p->segments[cp->limiter];
	double all = tfd_pool_ops_ns(p), t = fn_whole(&p->stages[g->top_stage]);
	double pool = cp->cpu_budget, rate, own = 0;
	char a[200], b[120], c[120], e[1024];
	const char *lb, *lc;

	tfd_segment_name(p, g, a, sizeof(a));
	lb = tfd_stage_label(p, g->top_stage, b, sizeof(b));
	lc = tfd_stage_label(p, h, c, sizeof(c));
	snprintf(e, sizeof(e),
		 "the %s %s busy %.0f%%, but %s's ops run %.0f%% of its calls there: the rest "
		 "waits for a thread of the pool its ops run on, where %s's ops take the most "
		 "(%.0f%% of the time the stages' ops held it)",
		 a, g->parallelism > 1 ? "are" : "is", 100 * g->utilization, lb,
		 t > 0 ? 100 * pool_ops_ns(p, (size_t)g->top_stage) / t : 0.0, lc,
		 all > 0 ? 100 * pool_ops_ns(p, (size_t)h) / all : 0.0);
	tfd_cap_set_evidence(cp, e);
	/* the thread's own work (its busiest stage's ops, its other stages'
	 * time) is what would limit it without the wait */
	for (size_t i = 0; i < p->nstages; i++)
		if (p->stages[i].segment == cp->limiter && !p->stages[i].is_async)
			own += (int)i == g->top_stage ? pool_ops_ns(p, i)
						      : (double)p->stages[i].work_ns;
	rate = pool > 0 && all > 0 ? pool * 1e9 * (double)cp->root_elements / all : 0;
	if (rate > 0 && own > 0) {
		cp->runner_up = cp->limiter;
		cp->margin =
		    fmax(1.0, g->parallelism * 1e9 * (double)cp->root_elements / own / rate);
	}
}

void tfd_bottleneck_choose(struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;
	bool waits = false;
	int o;

	if (TFD_CAPACITY_USABLE(p) && p->segments[cp->limiter].top_stage >= 0 &&
	    !tfd_remote_limits(p)) {
		p->bottleneck = p->segments[cp->limiter].top_stage;
		if ((o = cpu_heaviest(p, &waits)) >= 0) {
			p->bottleneck = o;
			cpu_evidence(p, o, waits);
		} else if ((o = tfd_pool_heaviest(p)) >= 0) {
			p->bottleneck = o;
			pool_evidence(p, o);
		}
	} else if ((o = outlasting(p)) >= 0)
		p->bottleneck = o;
	if (p->bottleneck >= 0)
		p->stages[p->bottleneck].is_bottleneck = true;
}
