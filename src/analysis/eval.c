/* eval.c - rules -> findings: the metric table, the rules' conditions, the
 * findings in order (what each is worth: estimate.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "rules_impl.h"
#include "tfd/satmath.h"
#include "tfd/vec.h"

static struct val param(const struct tfd_stage *s, const char *key, bool numeric)
{
	struct val v = {0};
	const char *p = s && s->sample ? tfd_event_param(s->sample, key) : NULL;

	if (!p)
		return v;
	v.present = true;
	v.str = p;
	if (numeric) {
		char *end;

		v.num = strtod(p, &end);
		if (end == p)
			v.present = false;
	}
	return v;
}

static bool has_final_prefetch(const struct tfd_pipeline *p)
{
	for (size_t i = 1; i < p->nstages; i++)
		if (p->stages[i].parent == 0 && strcmp(p->stages[i].family, "Prefetch") == 0)
			return true;
	return strcmp(p->stages[0].family, "Prefetch") == 0;
}

/* ---- the metric table: name, type, scope, how it is computed ---------------- */

static struct val num(double v)
{
	return (struct val){.present = true, .num = v};
}

static struct val boolean(bool v)
{
	return (struct val){.present = true, .b = v};
}

static struct val num_or_missing(double v)
{
	return (struct val){.present = !isnan(v), .num = v};
}

#define STAGE_NUM(fn, expr)                                                                        \
	static struct val fn(const struct metric_at *a)                                            \
	{                                                                                          \
		const struct tfd_stage *s = a->s;                                                  \
		return num(s ? (expr) : 0);                                                        \
	}
#define PIPE_NUM(fn, expr)                                                                         \
	static struct val fn(const struct metric_at *a)                                            \
	{                                                                                          \
		const struct tfd_pipeline *p = a->p;                                               \
		return num(expr);                                                                  \
	}
#define HOST(fn, expr)                                                                             \
	static struct val fn(const struct metric_at *a)                                            \
	{                                                                                          \
		const struct tfd_host_result *h = a->h;                                            \
		return expr;                                                                       \
	}

STAGE_NUM(m_blocking_share, s->blocking_share)
STAGE_NUM(m_blocking_us, a->nanalyzed ? (double)s->blocking_ns / a->nanalyzed / 1e3 : 0)
STAGE_NUM(m_calls_per_root, a->nanalyzed ? (double)s->calls / a->nanalyzed : 0)
STAGE_NUM(m_self_us, s->calls ? (double)s->self_ns / (double)s->calls / 1e3 : 0)
PIPE_NUM(m_p50_us, (double)p->p50_ns / 1e3)
PIPE_NUM(m_max_us, (double)p->max_ns / 1e3)
PIPE_NUM(m_slow_calls, (double)p->nslow)
PIPE_NUM(m_slow_share, p->ncalls ? (double)p->nslow / (double)p->ncalls : 0)
PIPE_NUM(m_warmup_calls, (double)p->nwarmup)
PIPE_NUM(m_warmup_over_p50, p->p50_ns ? (double)p->max_ns / (double)p->p50_ns : 0)
HOST(m_input_percent, num_or_missing(h->input_pct))
HOST(m_repeated_iterators, num((double)tfd_repeated_iterators(h)))
HOST(m_loop_in_function, boolean(h->loop_in_function))
HOST(m_iterators_per_step, num(tfd_iterators_per_step(h)))
HOST(m_gil_wait_percent, num_or_missing(tfd_host_part_pct(h, h->gil_ns)))
HOST(m_between_percent,
     num_or_missing(h->steps_span_ns > 0 ? 100.0 * (double)h->between_ns / (double)h->steps_span_ns
					 : NAN))
HOST(m_between_steps, num((double)h->nbetween))
HOST(m_iterator_create_percent, num_or_missing(tfd_host_part_pct(h, h->create_ns)))
/* with device planes: input is the host wait plus the copies to the device */
HOST(m_max_latency_us, num((double)h->max_latency_ns / 1e3))
HOST(m_host_pipelines, num((double)h->nhost_pipelines))
HOST(m_all_input_percent, num_or_missing(h->all.pct))
HOST(m_steady_input_percent, num_or_missing(h->steady.pct))
HOST(m_warmup_steps, num((double)h->nwarmup_steps))
HOST(m_warmup_inflated, boolean(h->warmup_inflated))
HOST(m_h2d_percent, num_or_missing(tfd_h2d_pct(h)))
HOST(m_host_wait_percent, num_or_missing(tfd_host_wait_pct(h)))
HOST(m_h2d_input_share,
     num_or_missing(h->has_device &&sat_add(h->wait_ns, h->h2d_ns) > 0
			? (double)h->h2d_ns / (double)sat_add(h->wait_ns, h->h2d_ns)
			: NAN))

static struct val m_python_busy_share(const struct metric_at *a)
{
	return num(tfd_python_busy_share(a->h));
}

static struct val m_pipeline_cpu_share(const struct metric_at *a)
{
	return num(tfd_pipeline_cpu_share(a->h));
}

/* kept_above of the focus pipeline's slowest stage (tfd_focus_dropped);
 * missing without a shard above it. */
static struct val m_focus_kept_above(const struct metric_at *a)
{
	double keep;

	return tfd_focus_dropped(a->h, &keep, NULL) >= 0 ? num(keep) : (struct val){0};
}

static struct val m_is_root(const struct metric_at *a)
{
	return boolean(a->si == 0);
}

/* The first root call (a shuffle buffer filling) over the host's step time */
static struct val m_first_call_share(const struct metric_at *a)
{
	return num(a->h->all.step_ns > 0
		       ? fmin(1.0, (double)a->p->first_call_ns / (double)a->h->all.step_ns)
		       : 0);
}

static struct val m_outlasted(const struct metric_at *a)
{
	return boolean(a->s && tfd_stage_outlasted(a->s));
}

static struct val m_param_str(const struct metric_at *a)
{
	return param(a->s, a->name, false);
}

static struct val m_param_num(const struct metric_at *a)
{
	return param(a->s, a->name, true);
}

/* The share of its function's op time the top op takes (missing without
 * function ops). */
static struct val m_top_op_share(const struct metric_at *a)
{
	double all = a->s ? tfd_fn_ops_time(a->s) : 0;

	if (!a->s || !a->s->nfn_ops)
		return (struct val){0};
	return all > 0 ? num((double)a->s->fn_ops[0].self_ns / all) : (struct val){0};
}

/* The share of its function's op time in the op types the rule names
 * (its "ops": decoding, augmentation, string work spread over several op
 * types, none of which need lead); missing without op events. */
static struct val m_ops_share(const struct metric_at *a)
{
	double all = a->s ? tfd_fn_ops_time(a->s) : 0, in = 0;

	if (!a->s || !a->s->nfn_ops || !(all > 0) || !a->rule)
		return (struct val){0};
	for (size_t k = 0; k < a->s->nfn_ops; k++)
		for (size_t j = 0; j < a->rule->ops.n; j++)
			if (strcmp(a->s->fn_ops[k].type, a->rule->ops.v[j]) == 0) {
				in += (double)a->s->fn_ops[k].self_ns;
				break;
			}
	return num(fmin(1.0, in / all));
}

/* The median of an async map's user-function calls, and the share of
 * their work in calls more than TFD_UNEVEN_X times as long (missing
 * without enough calls with their work known). */
static struct val m_fn_call_p50_us(const struct metric_at *a)
{
	if (!a->s || a->s->fn_p50_ns <= 0)
		return (struct val){0};
	return num((double)a->s->fn_p50_ns / 1e3);
}

/* Whether an async map's user-function calls are small: a median under
 * TFD_SMALL_CALL_US of work, which tf.data's fixed cost per call (about
 * 10 us) rivals, so batching before the map pays; false with larger calls
 * or none known (whole images batched measured several times slower). */
#define TFD_SMALL_CALL_US 50.0
static struct val m_small_calls(const struct metric_at *a)
{
	return boolean(a->s && a->s->fn_p50_ns > 0 &&
		       (double)a->s->fn_p50_ns / 1e3 < TFD_SMALL_CALL_US);
}

/* Whether its function ran a random op (tfd_op_is_random); missing when
 * no op event of its function was captured. */
static struct val m_fn_random(const struct metric_at *a)
{
	if (!a->s || !a->s->nfn_ops)
		return (struct val){0};
	for (size_t k = 0; k < a->s->nfn_ops; k++)
		if (tfd_op_is_random(a->s->fn_ops[k].type))
			return boolean(true);
	return boolean(false);
}

/* Whether a cache() that was read back lies below it: a cache stage among
 * the stages below it, none of them below that cache running in the
 * capacity window (a cache still filling reads its input). One walk up
 * from each stage that ran marks the caches above it as reading. */
static struct val m_cache_below(const struct metric_at *a)
{
	const struct tfd_pipeline *p = a->p;
	bool *reads, found = false;

	if (!p || a->si < 0)
		return boolean(false);
	reads = xcalloc(p->nstages ? p->nstages : 1, sizeof(*reads));
	for (size_t j = 0; j < p->nstages; j++) {
		int guard = 0;

		if (!p->stages[j].window_calls ||
		    tfd_family_has(p->stages[j].family, TFD_FAM_CACHE))
			continue;
		for (int x = p->stages[j].parent; x >= 0 && guard++ < 10000;
		     x = p->stages[x].parent)
			if (tfd_family_has(p->stages[x].family, TFD_FAM_CACHE))
				reads[x] = true;
	}
	for (size_t c = 0; c < p->nstages && !found; c++)
		found = (int)c != a->si && !reads[c] &&
			tfd_family_has(p->stages[c].family, TFD_FAM_CACHE) &&
			tfd_stage_within(p, (int)c, a->si);
	free(reads);
	return boolean(found);
}

/* The share of the elements its input made that the nearest stage above
 * it of the rule's `under` families (a shard when it names none) passes on
 * (tfd_dropped_above); missing without one. */
static struct val m_kept_above(const struct metric_at *a)
{
	const struct strlist *u = a->rule ? &a->rule->under : NULL;
	int root;
	double keep;

	if (!a->p || tfd_dropped_above(a->p, a->si, u ? (const char *const *)u->v : NULL,
				       u ? u->n : 0, &root, &keep) < 0)
		return (struct val){0};
	return num(keep);
}

static struct val m_uneven_work_share(const struct metric_at *a)
{
	if (!a->s || a->s->fn_p50_ns <= 0)
		return (struct val){0};
	return num(a->s->fn_uneven_share);
}

/* The share of the stage's self time (every call) its function's ops take:
 * a function a sequential op runs inline (scan, filter, a group's key). */
static struct val m_function_share(const struct metric_at *a)
{
	double all = a->s ? tfd_fn_ops_time(a->s) : 0;

	if (!a->s || !a->s->nfn_ops || !(all > 0) || a->s->self_all_ns <= 0)
		return (struct val){0};
	return num(fmin(1.0, all / (double)a->s->self_all_ns));
}

/* A flat_map or an interleave that makes an inner dataset for every
 * element or two (tfd_elements_per_inner at most TFD_PER_ELEMENT_MAX),
 * making them its cost: false when it makes fewer, the calls do not say,
 * or its function's ops take half its self time or more (the work of a
 * flat_map that returns Dataset.from_tensors(f(x)) is f's, which a map
 * would still do). */
#define TFD_PER_ELEMENT_MAX 2.0
static struct val m_dataset_per_element(const struct metric_at *a)
{
	double k = a->p ? tfd_elements_per_inner(a->p, a->si) : NAN;
	struct val fs = m_function_share(a);

	return boolean(!isnan(k) && k <= TFD_PER_ELEMENT_MAX && !(fs.present && fs.num >= 0.5));
}

static struct val m_final_prefetch(const struct metric_at *a)
{
	return boolean(has_final_prefetch(a->p));
}

/* Whether the stage below stage q runs on threads of its own, through
 * stages that pass their one input's elements on (a prefetch under
 * repeat() or take(), as `ds.prefetch(2).repeat()` ends a pipeline where
 * TensorFlow injects no prefetch of its own). */
static bool last_stage_async(const struct tfd_pipeline *p, int q, int depth)
{
	int child = -1, n = 0;

	for (size_t i = 1; i < p->nstages; i++)
		if (p->stages[i].parent == q && n++ == 0)
			child = (int)i;
	if (child < 0)
		return false;
	if (p->stages[child].is_async)
		return true;
	return n == 1 && depth < 64 && tfd_family_has(p->stages[child].family, TFD_FAM_PASS) &&
	       last_stage_async(p, child, depth + 1);
}

/* The stage right below the root runs on threads of its own (a prefetch,
 * a parallel map, interleave or batch, a fused map-and-batch, a data
 * service reader): it makes the next elements while the step runs, so the
 * step and the pipeline overlap without a final prefetch (TensorFlow's
 * inject_prefetch adds one only after a synchronous last stage). */
static struct val m_final_async(const struct metric_at *a)
{
	const struct tfd_pipeline *p = a->p;

	/* a root that runs on threads of its own is the last stage itself
	 * (Iterator::Prefetch::..., as older TensorFlow names a pipeline) */
	if (p->nstages && p->stages[0].is_async)
		return boolean(true);
	return boolean(last_stage_async(p, 0, 0));
}

/* Keras reading a PyDataset (or a Sequence) with workers: Keras turns
 * tf.data's autotuning (so its injected prefetch) off and gives the
 * dataset a private pool of one thread, and the generator waits for the
 * workers' batches. The root is that OptionsDataset, threadpool_size=1 and
 * no cpu_budget (autotuning off), over a generator and no prefetch. */
static struct val m_keras_workers(const struct metric_at *a)
{
	const struct tfd_pipeline *p = a->p;
	struct val name, pool;
	bool gen = false;

	if (!p || !p->nstages)
		return (struct val){0};
	name = param(&p->stages[0], "name", false);
	pool = param(&p->stages[0], "threadpool_size", true);
	if (!name.present || strncmp(name.str, "OptionsDataset", 14) != 0 || !pool.present ||
	    pool.num != 1 || param(&p->stages[0], "cpu_budget", false).present)
		return boolean(false);
	for (size_t i = 0; i < p->nstages; i++) {
		if (strcmp(p->stages[i].family, "Prefetch") == 0)
			return boolean(false);
		gen |= strcmp(p->stages[i].family, "Generator") == 0;
	}
	return boolean(gen);
}

/* The root's private thread pool over the CPU budget tf.data plans for
 * (both options its Root event carries): below 1, AUTOTUNE's parallelism
 * stops at the pool's size, short of the cores. */
static struct val m_threadpool_share(const struct metric_at *a)
{
	struct val pool, budget;

	if (!a->p || !a->p->nstages)
		return (struct val){0};
	pool = param(&a->p->stages[0], "threadpool_size", true);
	budget = param(&a->p->stages[0], "cpu_budget", true);
	if (!pool.present || !budget.present || !(pool.num > 0) || !(budget.num > 0))
		return (struct val){0};
	return num(pool.num / budget.num);
}

/* Whether the stage's function ran on one worker over the capacity window
 * (a map TensorFlow fused into MapAndBatch keeps the one worker of a map
 * without num_parallel_calls): false when it had more, or no model says */
static struct val m_one_worker(const struct metric_at *a)
{
	const struct tfd_segment *fg;

	if (!a->p || !a->s || !a->p->capacity.valid)
		return boolean(false);
	fg = tfd_stage_function_segment(a->p, a->si);
	return boolean(fg && fg->parallelism > 0 && fg->parallelism < 1.5);
}

/* Whether the bottleneck, a synchronous stage, ran on several threads at
 * once over the capacity window (the inputs of a parallel interleave
 * above it): its calls are parallel already, as a parallel map's are */
static struct val m_outer_parallel(const struct metric_at *a)
{
	const struct tfd_stage *s = a->s;

	if (!a->p || !s || s->is_async || !a->p->capacity.valid || s->segment < 0 ||
	    (size_t)s->segment >= a->p->nsegments)
		return boolean(false);
	return boolean(a->p->segments[s->segment].parallelism >= 1.5);
}

/* The nearest stage above stage si whose family has one of flags, -1. */
static int nearest_above(const struct tfd_pipeline *p, int si, unsigned flags)
{
	int guard = 0;

	for (int a = si >= 0 ? p->stages[si].parent : -1; a >= 0 && guard++ < 10000;
	     a = p->stages[a].parent)
		if (tfd_family_has(p->stages[a].family, flags))
			return a;
	return -1;
}

/* How many inputs the parallel interleave above stage si read at once:
 * its input segment's parallelism over the capacity window (the least of
 * cycle_length and parallelism, as AUTOTUNE moved them), else those two
 * parameters; 0 when unknown (neither said). */
static double reads_parallelism(const struct tfd_pipeline *p, int q)
{
	struct val cyc, par;

	if (p->capacity.valid)
		for (size_t g = 0; g < p->nsegments; g++)
			if (p->segments[g].kind == TFD_SEG_INPUT && p->segments[g].owner == q &&
			    p->segments[g].parallelism > 0 && !p->segments[g].parallelism_observed)
				return p->segments[g].parallelism;
	cyc = param(&p->stages[q], "cycle_length", true);
	par = param(&p->stages[q], "parallelism", true);
	if (cyc.present && cyc.num > 0 && par.present && par.num > 0)
		return fmin(cyc.num, par.num);
	return cyc.present && cyc.num > 0 ? cyc.num : par.present && par.num > 0 ? par.num : 0;
}

/* Whether the parallel interleave above the bottleneck read one input at a
 * time (false when it read more, when it does not say, or when there is
 * none): the reads are then as sequential as a bare reader's. */
static struct val m_reads_one_at_a_time(const struct metric_at *a)
{
	int q = a->p ? nearest_above(a->p, a->si, TFD_FAM_INTERLEAVE) : -1;
	double n = q >= 0 ? reads_parallelism(a->p, q) : 0;

	return boolean(n > 0 && n < 1.5);
}

/* Whether AUTOTUNE sets that interleave's parallelism (its autotune
 * parameter; false when it says no or there is none) */
static struct val m_reads_autotune(const struct metric_at *a)
{
	int q = a->p ? nearest_above(a->p, a->si, TFD_FAM_INTERLEAVE) : -1;
	struct val v = q >= 0 ? param(&a->p->stages[q], "autotune", false) : (struct val){0};

	return boolean(v.present && strcmp(v.str, "true") == 0);
}

/* Whether a repeat lies between the bottleneck and the nearest cache above
 * it (`ds.repeat().cache()`): the cache's input never ends, so it never
 * fills and the stages below it run every epoch. False without a cache
 * above. */
static struct val m_cache_endless(const struct metric_at *a)
{
	const struct tfd_pipeline *p = a->p;
	int guard = 0, c = p ? nearest_above(p, a->si, TFD_FAM_CACHE) : -1;

	for (int x = c >= 0 ? p->stages[a->si].parent : -1; x >= 0 && x != c && guard++ < 10000;
	     x = p->stages[x].parent)
		if (strcmp(p->stages[x].family, "Repeat") == 0)
			return boolean(true);
	return boolean(false);
}

/* Whether the host's Python ops (tf.py_function, numpy_function) were
 * seen running side by side: they let go of the interpreter's lock, as
 * Python that waits on a file or a service does (tfd_python_overlap) */
static struct val m_python_side_by_side(const struct metric_at *a)
{
	return boolean(a->p && a->p->capacity.valid && a->p->capacity.python_side_by_side);
}

static struct val m_python_take_turns(const struct metric_at *a)
{
	return boolean(a->p && a->p->capacity.valid && a->p->capacity.python_take_turns);
}

/* Whether the stage is a MapAndBatch TensorFlow fused from a map written
 * without num_parallel_calls (map_and_batch_fusion, on by default): its
 * `name` says "fused(MapDataset:..." (a parallel map's says ParallelMap...);
 * a TensorFlow that names no dataset leaves its parallelism of 1 to tell.
 * Such a stage keeps the map's one call at a time: no fixed number was
 * written, the map is sequential. False for every other stage. */
static struct val m_fused_sequential_map(const struct metric_at *a)
{
	const char *name;
	struct val par, auto_;

	if (!a->s || strcmp(a->s->family, "MapAndBatch") != 0)
		return boolean(false);
	name = a->s->sample ? tfd_event_param(a->s->sample, "name") : NULL;
	par = param(a->s, "parallelism", true);
	auto_ = param(a->s, "autotune", false);
	/* TensorFlow parallelizes a stateless map itself (map_parallelization)
	 * and keeps its MapDataset name in the fused one: AUTOTUNE and more
	 * than one call at a time say so */
	if ((auto_.present && strcmp(auto_.str, "true") == 0) || (par.present && par.num > 1))
		return boolean(false);
	if (name && strncmp(name, "fused(", 6) == 0)
		return boolean(strncmp(name + 6, "MapDataset:", 11) == 0);
	return boolean(par.present && par.num == 1);
}

/* Whether the stage's function ran on one worker because the pipeline
 * says so: a map fused from one without num_parallel_calls, or a fixed
 * parallelism (no AUTOTUNE). An AUTOTUNE map that stayed at one worker
 * (one core, a CPU budget of one) is not: its calls run as parallel as
 * tf.data lets them. */
static struct val m_one_worker_by_choice(const struct metric_at *a)
{
	struct val auto_ = param(a->s, "autotune", false);

	if (!m_one_worker(a).b)
		return boolean(false);
	return boolean(m_fused_sequential_map(a).b ||
		       (auto_.present && strcmp(auto_.str, "false") == 0));
}

/* Whether the training step consumes the pipeline's elements (true but
 * when its capacity model found a consumer that takes them as they come:
 * a MultiDeviceIterator's or tf.data service's thread) */
static struct val m_consumer_is_step(const struct metric_at *a)
{
	return boolean(!(a->p && a->p->capacity.valid && a->p->capacity.demand_from_steps));
}

static struct val m_producer_over_demand(const struct metric_at *a)
{
	return tfd_producer_over_demand(a->p);
}

const struct metric_def tfd_metrics[] = {
    /* the bottleneck stage */
    {"blocking_share", VT_NUM, TARGET_BOTTLENECK, "share of analyzed root time it blocks",
     m_blocking_share},
    {"blocking_us_per_call", VT_NUM, TARGET_BOTTLENECK, "its blocking time per root call",
     m_blocking_us},
    {"calls_per_root_call", VT_NUM, TARGET_BOTTLENECK, "its calls per analyzed root call",
     m_calls_per_root},
    {"self_us_per_call", VT_NUM, TARGET_BOTTLENECK, "its mean self time per call", m_self_us},
    {"is_root", VT_BOOL, TARGET_BOTTLENECK, "the bottleneck is the root iterator", m_is_root},
    {"outlasted", VT_BOOL, TARGET_BOTTLENECK, "no call of it ended in the capture", m_outlasted},
    {"parallelism", VT_NUM, TARGET_BOTTLENECK, "parameter (-1 means AUTOTUNE)", m_param_num},
    {"autotune", VT_STR, TARGET_BOTTLENECK, "parameter", m_param_str},
    {"deterministic", VT_STR, TARGET_BOTTLENECK, "parameter", m_param_str},
    {"cycle_length", VT_NUM, TARGET_BOTTLENECK, "parameter", m_param_num},
    {"block_length", VT_NUM, TARGET_BOTTLENECK, "parameter", m_param_num},
    {"buffer_limit", VT_NUM, TARGET_BOTTLENECK, "parameter (Prefetch)", m_param_num},
    {"buffer_size", VT_NUM, TARGET_BOTTLENECK, "parameter (Shuffle)", m_param_num},
    {"batch_size", VT_NUM, TARGET_BOTTLENECK, "parameter", m_param_num},
    {"top_op_share", VT_NUM, TARGET_BOTTLENECK,
     "share of its function's op time in its top op (missing: no op events)", m_top_op_share},
    {"ops_share", VT_NUM, TARGET_BOTTLENECK,
     "share of its function's op time in the op types of the rule's \"ops\" (missing: no op "
     "events)",
     m_ops_share},
    {"function_share", VT_NUM, TARGET_BOTTLENECK,
     "share of its self time its function's ops take (missing: no op events)", m_function_share},
    {"one_worker", VT_BOOL, TARGET_BOTTLENECK,
     "its function ran on one worker in the capacity window (false: more, or no model)",
     m_one_worker},
    {"one_worker_by_choice", VT_BOOL, TARGET_BOTTLENECK,
     "its function ran on one worker as the pipeline set it: a map fused from one without "
     "num_parallel_calls, or a fixed parallelism (false: AUTOTUNE's one worker, more, or no "
     "model)",
     m_one_worker_by_choice},
    {"outer_parallel", VT_BOOL, TARGET_BOTTLENECK,
     "a synchronous stage that ran on several threads at once (a parallel interleave's "
     "inputs: false when it ran on one, or no model)",
     m_outer_parallel},
    {"fused_sequential_map", VT_BOOL, TARGET_BOTTLENECK,
     "a MapAndBatch fused from a map without num_parallel_calls (false: any other stage)",
     m_fused_sequential_map},
    {"python_side_by_side", VT_BOOL, TARGET_BOTTLENECK,
     "the host's tf.py_function / numpy_function calls ran side by side (none waited for those "
     "running when it started): Python that waits lets go of the GIL",
     m_python_side_by_side},
    {"python_take_turns", VT_BOOL, TARGET_BOTTLENECK,
     "the host's tf.py_function / numpy_function calls took turns (each waited for those still "
     "running when it started): Python that computes holds the GIL",
     m_python_take_turns},
    {"reads_one_at_a_time", VT_BOOL, TARGET_BOTTLENECK,
     "the parallel interleave above it read one input at a time over the capacity window "
     "(cycle_length or parallelism 1; false: more, not said, or no parallel interleave above)",
     m_reads_one_at_a_time},
    {"reads_autotune", VT_BOOL, TARGET_BOTTLENECK,
     "AUTOTUNE sets the parallelism of the parallel interleave above it", m_reads_autotune},
    {"cache_endless", VT_BOOL, TARGET_BOTTLENECK,
     "a repeat lies between it and the nearest cache above it: the cache never fills (false "
     "without a cache above)",
     m_cache_endless},
    {"fn_call_p50_us", VT_NUM, TARGET_BOTTLENECK,
     "median work of an async map's user-function call (missing: fewer than 8 known)",
     m_fn_call_p50_us},
    {"small_calls", VT_BOOL, TARGET_BOTTLENECK,
     "an async map's user-function calls have a median under 50 us of work (false: larger, or "
     "fewer than 8 known)",
     m_small_calls},
    {"uneven_work_share", VT_NUM, TARGET_BOTTLENECK,
     "share of an async map's function work in calls over 4x the median (missing: fewer than 8 "
     "known)",
     m_uneven_work_share},
    {"fn_random", VT_BOOL, TARGET_BOTTLENECK,
     "its function ran a random op (RandomUniform, a stateless or stateful random op, a random "
     "crop's box, a shuffle; missing: no op event of its function)",
     m_fn_random},
    {"cache_below", VT_BOOL, TARGET_BOTTLENECK,
     "a cache() below it is read back: none of the stages below that cache ran in the capacity "
     "window (false: none, or still filling)",
     m_cache_below},
    {"dataset_per_element", VT_BOOL, TARGET_BOTTLENECK,
     "a flat_map or an interleave that makes an inner dataset for every element or two it "
     "delivers, over the capacity window (false: fewer, the calls do not say, or its function's "
     "ops take half its self time)",
     m_dataset_per_element},
    {"kept_above", VT_NUM, TARGET_BOTTLENECK,
     "share of the elements made below the nearest stage above it of the rule's \"under\" "
     "families (a shard when it names none) that the stage passes on, over the capacity window "
     "(missing: none above, or no model)",
     m_kept_above},
    /* the pipeline */
    {"latency_p50_us", VT_NUM, TARGET_PIPELINE, "median root-call latency", m_p50_us},
    {"latency_max_us", VT_NUM, TARGET_PIPELINE, "slowest root call", m_max_us},
    {"slow_calls", VT_NUM, TARGET_PIPELINE, "root calls slower than 50 us", m_slow_calls},
    {"slow_call_share", VT_NUM, TARGET_PIPELINE, "share of root calls slower than 50 us",
     m_slow_share},
    {"warmup_calls", VT_NUM, TARGET_PIPELINE, "leading calls excluded as warm-up", m_warmup_calls},
    {"warmup_over_p50", VT_NUM, TARGET_PIPELINE, "slowest call / median call", m_warmup_over_p50},
    {"first_call_share", VT_NUM, TARGET_PIPELINE, "first root call / host step time",
     m_first_call_share},
    {"has_final_prefetch", VT_BOOL, TARGET_PIPELINE, "a Prefetch right below the root",
     m_final_prefetch},
    {"final_async", VT_BOOL, TARGET_PIPELINE,
     "the root or the stage right below it runs on its own threads (a prefetch or another "
     "async stage): the step and the pipeline overlap",
     m_final_async},
    {"consumer_is_step", VT_BOOL, TARGET_PIPELINE,
     "the training step takes its elements (false: a thread that buffers them)",
     m_consumer_is_step},
    {"keras_workers", VT_BOOL, TARGET_PIPELINE,
     "Keras reads a PyDataset with workers: its generator waits for them, tf.data's own "
     "prefetch and autotuning off",
     m_keras_workers},
    {"threadpool_share", VT_NUM, TARGET_PIPELINE,
     "the root's thread pool size / its CPU budget (missing: not said)", m_threadpool_share},
    {"producer_over_demand", VT_NUM, TARGET_PIPELINE,
     "lowest producer capacity / the consumer's demand (capacity model)", m_producer_over_demand},
    /* the host */
    {"input_percent", VT_NUM, TARGET_HOST,
     "share of step time that is input (waiting, and copies to the device)", m_input_percent},
    {"max_latency_us", VT_NUM, TARGET_HOST, "slowest host-pipeline root call", m_max_latency_us},
    {"host_pipelines", VT_NUM, TARGET_HOST, "number of host input pipelines", m_host_pipelines},
    {"repeated_iterators", VT_NUM, TARGET_HOST,
     "host pipelines that iterate the focus pipeline's dataset again (an iterator per epoch)",
     m_repeated_iterators},
    {"iterators_per_step", VT_NUM, TARGET_HOST,
     "iterators of the focus pipeline's dataset made per step (its first and each repeat; 0 "
     "without steps)",
     m_iterators_per_step},
    {"between_steps_percent", VT_NUM, TARGET_HOST,
     "share of the time from the first step to the last in long gaps between the steps "
     "(missing: under 3 steps)",
     m_between_percent},
    {"between_steps", VT_NUM, TARGET_HOST, "long gaps between the steps", m_between_steps},
    {"gil_wait_percent", VT_NUM, TARGET_HOST,
     "share of the verdict's step time the loop waited for the GIL after an eager GetNext "
     "returned (missing: no input share)",
     m_gil_wait_percent},
    {"iterator_create_percent", VT_NUM, TARGET_HOST,
     "share of the verdict's step time spent making iterators for the loop (MakeIterator; "
     "missing: no input share)",
     m_iterator_create_percent},
    {"loop_in_function", VT_BOOL, TARGET_HOST,
     "the host ran a dataset's loop inside a tf.function (a ReduceDataset op)", m_loop_in_function},
    {"focus_kept_above", VT_NUM, TARGET_HOST,
     "kept_above of the slowest stage of the pipeline the host waits on most (missing: no "
     "shard above it)",
     m_focus_kept_above},
    {"all_steps_input_percent", VT_NUM, TARGET_HOST, "waiting share over every step",
     m_all_input_percent},
    {"steady_input_percent", VT_NUM, TARGET_HOST, "waiting share without warm-up steps",
     m_steady_input_percent},
    {"warmup_steps", VT_NUM, TARGET_HOST, "leading steps > 2x the median step", m_warmup_steps},
    {"warmup_inflated", VT_BOOL, TARGET_HOST,
     "counting every step would put the host in a higher band", m_warmup_inflated},
    {"host_to_device_percent", VT_NUM, TARGET_HOST,
     "share of step time copying input to the device (device planes)", m_h2d_percent},
    {"host_wait_percent", VT_NUM, TARGET_HOST, "share of step time the host waits for input",
     m_host_wait_percent},
    {"host_to_device_input_share", VT_NUM, TARGET_HOST,
     "host-to-device time / input time (device planes)", m_h2d_input_share},
    {"python_busy_share", VT_NUM, TARGET_HOST,
     "share of the window the focus pipeline runs Python (generator, Python ops)",
     m_python_busy_share},
    {"pipeline_cpu_share", VT_NUM, TARGET_HOST,
     "share of the host's cores the focus pipeline keeps busy where the step computes on them "
     "too (no device activity; 0 otherwise)",
     m_pipeline_cpu_share},
};
const size_t tfd_nmetrics = sizeof(tfd_metrics) / sizeof(tfd_metrics[0]);

static struct val metric(int m, const struct rule *r, const struct tfd_host_result *h,
			 const struct tfd_pipeline *p, int si)
{
	struct metric_at at = {
	    h, p, p && si >= 0 ? &p->stages[si] : NULL, si, 0, tfd_metrics[m].name, r};

	struct val v = {0};

	at.nanalyzed = p && p->nanalyzed ? (double)p->nanalyzed : 0;
	if (tfd_metrics[m].scope != TARGET_PIPELINE || p) {
		const struct val got = tfd_metrics[m].get(&at);

		v.present = got.present;
		v.num = got.num;
		v.b = got.b;
		v.str = got.str; /* points into the capture, never into `at` */
	}
	return v;
}

static bool cond_holds(const struct cond *c, const struct rule *r, const struct tfd_host_result *h,
		       const struct tfd_pipeline *p, int si)
{
	struct val v = metric(c->metric, r, h, p, si);

	if (c->op == OP_EXISTS)
		return v.present;
	if (c->op == OP_MISSING)
		return !v.present;
	if (!v.present)
		return false;
	switch (tfd_metrics[c->metric].type) {
	case VT_STR:
		return (strcmp(v.str, c->str) == 0) == (c->op == OP_EQ);
	case VT_BOOL:
		return (v.b == c->b) == (c->op == OP_EQ);
	case VT_NUM:
		switch (c->op) {
		case OP_EQ:
			return v.num == c->num;
		case OP_NE:
			return v.num != c->num;
		case OP_GE:
			return v.num >= c->num;
		case OP_GT:
			return v.num > c->num;
		case OP_LE:
			return v.num <= c->num;
		case OP_LT:
			return v.num < c->num;
		default:
			return false;
		}
	}
	return false;
}

static bool in_list(const struct strlist *l, const char *f)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i], f) == 0)
			return true;
	return false;
}

static bool any_ancestor_in(const struct tfd_pipeline *p, int si, const struct strlist *l)
{
	int guard = 0;

	for (int a = p->stages[si].parent; a >= 0 && guard++ < 10000; a = p->stages[a].parent)
		if (in_list(l, p->stages[a].family))
			return true;
	return false;
}

static bool pipeline_has_any(const struct tfd_pipeline *p, const struct strlist *l)
{
	for (size_t i = 0; i < p->nstages; i++)
		if (in_list(l, p->stages[i].family))
			return true;
	return false;
}

/* The rule's top_op / not_top_op against the type of the op the stage's
 * function spends most in (none: only a rule without top_op holds). */
static bool top_op_ok(const struct rule *r, const struct tfd_stage *s)
{
	const char *top = s->nfn_ops ? s->fn_ops[0].type : NULL;

	if (r->top_op.n && !(top && in_list(&r->top_op, top)))
		return false;
	return !(top && in_list(&r->not_top_op, top));
}

static bool matches(const struct rule *r, const struct tfd_host_result *h,
		    const struct tfd_pipeline *p, int si)
{
	/* a host rule's pipeline is the host's focus pipeline */
	const struct tfd_pipeline *fp =
	    p ? p
	      : (h->focus >= 0 && (size_t)h->focus < h->npipelines ? &h->pipelines[h->focus]
								   : NULL);

	if (r->target == TARGET_BOTTLENECK) {
		const char *fam = p->stages[si].family;

		if (r->family.n && !in_list(&r->family, fam))
			return false;
		if (in_list(&r->not_family, fam))
			return false;
		if (r->under.n && !any_ancestor_in(p, si, &r->under))
			return false;
		if (r->not_under.n && any_ancestor_in(p, si, &r->not_under))
			return false;
		if (!top_op_ok(r, &p->stages[si]))
			return false;
	}
	if (r->pipeline_has.n && !(fp && pipeline_has_any(fp, &r->pipeline_has)))
		return false;
	if (r->pipeline_lacks.n && !(fp && !pipeline_has_any(fp, &r->pipeline_lacks)))
		return false;
	for (size_t i = 0; i < r->nwhen; i++)
		if (!cond_holds(&r->when[i], r, h, p, si))
			return false;
	return true;
}

typedef VEC(struct tfd_finding) findvec;

static void add(findvec *fv, const struct rule *r, const struct tfd_host_result *h,
		const struct tfd_pipeline *p, int si)
{
	struct tfd_finding f;

	memset(&f, 0, sizeof(f));
	f.rule_id = r->id;
	f.title = r->title;
	f.class_name = r->class_name;
	f.suggestion = r->suggestion;
	f.code = r->code ? r->code : "";
	f.doc = r->doc ? r->doc : "";
	f.severity = r->severity;
	if (r->ndemote && f.severity > TFD_SEV_LOW) {
		bool all = true;

		for (size_t i = 0; i < r->ndemote && all; i++)
			all = cond_holds(&r->demote[i], r, h, p, si);
		if (all)
			f.severity = TFD_SEV_LOW;
	}
	f.host = h->host->name;
	f.pipeline = p ? p->name : "";
	f.stage = p && si >= 0 ? p->stages[si].name : "";
	f.stage_long_name = p && si >= 0 ? p->stages[si].long_name : "";
	f.stage_of = p && si >= 0 ? p : NULL;
	f.stage_index = p && si >= 0 ? si : -1;
	f.confidence = p ? p->confidence.level : h->confidence.level;
	tfd_estimate(r, h, p, si, &f.estimate);
	vec_push(fv, f);
}

double tfd_finding_gain(const struct tfd_finding *f)
{
	if (!f->estimate.known)
		return 1.0;
	if (f->estimate.step_speedup > 0)
		return f->estimate.step_speedup; /* what the training step gains */
	return f->estimate.speedup > 0 ? f->estimate.speedup : INFINITY;
}

struct order {
	double gain;
	int severity, confidence;
	size_t pos;
};

static int order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;

	if (x->gain != y->gain)
		return x->gain > y->gain ? -1 : 1;
	if (x->severity != y->severity)
		return x->severity > y->severity ? -1 : 1;
	if (x->confidence != y->confidence)
		return x->confidence > y->confidence ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Whether host h's pipeline pi gets stage and pipeline advice. */
static bool stage_advice(const struct tfd_host_result *h, size_t pi)
{
	const struct tfd_pipeline *p = &h->pipelines[pi];

	/* a stage whose calls outlasted the capture held its consumer up,
	 * whatever the root calls (none, when the loop waited for its first) */
	if (p->bottleneck >= 0 && tfd_stage_outlasted(&p->stages[p->bottleneck]))
		return !p->is_device && tfd_host_has_bottleneck(h) && !p->repeat_of1 &&
		       !(p->outside_steps && (int)pi != h->focus);

	/* stage advice only where the pipeline is slow (> 50 us calls) and
	 * the host waits on it: on a host that is not input-bound, a faster
	 * pipeline would not speed training up (rule TFD-H01 says so
	 * instead) */
	if (p->is_device || !p->analyzed_slow_only || !tfd_host_has_bottleneck(h))
		return false;
	/* a new iterator each step: each pipeline ran one element from empty
	 * (and the ids of iterators made anew can repeat), so its stages'
	 * figures are no steady state; TFD-H09 says so */
	if (tfd_iterator_per_step(h))
		return false;
	/* a dataset iterated anew (an iterator per epoch): its advice is said
	 * once, for the group's own pipeline */
	if (p->repeat_of1)
		return false;
	/* a pipeline read between the steps (a Keras validation pass): a
	 * faster one does not shorten them */
	return !(p->outside_steps && (int)pi != h->focus);
}

/* The pipeline and bottleneck rules on host h's pipeline pi. A first
 * epoch filling a cache a later one read back runs its stages below the
 * cache no more after it: only what says so (class cache_fill) is advice. */
static void pipeline_findings(const struct tfd_ruleset *rs, const struct tfd_host_result *h,
			      size_t pi, findvec *fv)
{
	const struct tfd_pipeline *p = &h->pipelines[pi];
	bool fill = tfd_cache_read_back(h, pi);
	/* a stage with no call in the capture (parameters unknown): its own rules */
	bool outlasted = p->bottleneck >= 0 && tfd_stage_outlasted(&p->stages[p->bottleneck]);

	for (size_t ri = 0; ri < rs->n; ri++) {
		const struct rule *r = &rs->v[ri];

		if (fill && strcmp(r->class_name, "cache_fill") != 0)
			continue;
		if (r->target == TARGET_PIPELINE && matches(r, h, p, -1))
			add(fv, r, h, p, -1);
		else if (r->target == TARGET_BOTTLENECK && p->bottleneck >= 0 &&
			 (!outlasted || strcmp(r->class_name, "outlasted_call") == 0) &&
			 matches(r, h, p, p->bottleneck))
			add(fv, r, h, p, p->bottleneck);
	}
}

void tfd_rules_eval(const struct tfd_ruleset *rs, const struct tfd_analysis *a,
		    struct tfd_findings *out)
{
	findvec fv = {0};

	memset(out, 0, sizeof(*out));
	for (size_t hi = 0; hi < a->nhosts; hi++) {
		const struct tfd_host_result *h = &a->hosts[hi];

		if (!h->npipelines)
			continue;
		for (size_t ri = 0; ri < rs->n; ri++)
			if (rs->v[ri].target == TARGET_HOST && matches(&rs->v[ri], h, NULL, -1))
				add(&fv, &rs->v[ri], h, NULL, -1);
		for (size_t pi = 0; pi < h->npipelines; pi++)
			if (stage_advice(h, pi))
				pipeline_findings(rs, h, pi, &fv);
	}
	/* the largest gain first, then severity, confidence and the order
	 * found (host rank, pipeline, rule); a gain under 1.02x is none (the
	 * reports say ~1.0x): it does not outrank more severe advice */
	if (fv.n > 1) {
		struct order *o = xmalloc(fv.n * sizeof(*o));
		struct tfd_finding *sorted = xmalloc(fv.n * sizeof(*sorted));

		for (size_t i = 0; i < fv.n; i++) {
			double g = tfd_finding_gain(&fv.v[i]);

			o[i] = (struct order){g < 1.02 ? 1.0 : g, (int)fv.v[i].severity,
					      (int)fv.v[i].confidence, i};
		}
		qsort(o, fv.n, sizeof(*o), order_cmp);
		for (size_t i = 0; i < fv.n; i++)
			sorted[i] = fv.v[o[i].pos];
		free(fv.v);
		fv.v = sorted;
		free(o);
	}
	out->v = fv.v;
	out->n = fv.n;
	for (size_t i = 0; i < fv.n; i++)
		if (fv.v[i].severity > out->max_severity)
			out->max_severity = fv.v[i].severity;
}
