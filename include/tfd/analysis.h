/* analysis.h - iterator graphs, self time, critical path and bottleneck.
 *
 * tfd_analyze() turns a loaded capture into per-host results: the input
 * pipelines (one per root iterator id), their stages (one per dataset op,
 * i.e. per long name less the "[N]" input indices), per-call self and
 * blocking time, the critical path and the bottleneck, plus the share of
 * step time each host spends waiting for input.
 *
 * Time attribution (default mode): within one root call, every nanosecond
 * is owned by exactly one iterator call. A call owns the parts of its span
 * that no linked child call covers; where several children overlap, the
 * child that ends last owns the overlap (the consumer waits for it). So the
 * blocking times of one root call sum exactly to its duration. Self time is
 * the call's duration less the union of its children's (clipped) spans.
 *
 * Ownership: the result borrows names from the capture (keep the capture
 * alive while using it) and owns everything else; free it with
 * tfd_analysis_free().
 */
#ifndef TFD_ANALYSIS_H
#define TFD_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tfd/capture.h"
#include "tfd/err.h"
#include "tfd/families.h"

/* XProf: a root iterator call slower than this is a slow call. */
#define TFD_SLOW_CALL_NS 50000

/* A map's function calls are uneven when much of their work is in calls
 * more than TFD_UNEVEN_X times the median (struct tfd_stage); judged from
 * TFD_UNEVEN_MIN_CALLS calls with their work known */
#define TFD_UNEVEN_X 4
#define TFD_UNEVEN_MIN_CALLS 8

enum tfd_link_kind {
	TFD_LINK_SYNC = 0, /* nested on the same thread */
	TFD_LINK_PRODUCE,  /* Produce/Consume events with the same element_id */
	TFD_LINK_OVERLAP,  /* other thread, parent_id plus time overlap */
	TFD_LINK_NONE,	   /* ran ahead of any parent call (prefetched) */
	TFD_LINK__COUNT,
};

enum tfd_confidence {
	TFD_CONF_LOW = 0,
	TFD_CONF_MEDIUM,
	TFD_CONF_HIGH,
};

/* How sure a conclusion is, and why not more. */
struct tfd_sureness {
	enum tfd_confidence level;
	char reasons[320]; /* "; "-separated, empty when high */
};

struct tfd_stage {
	const char *long_name; /* as captured (first iterator seen) */
	const char *path;      /* long name without "[N]" indices: the stage key */
	const char *name;      /* last component as captured, e.g. ParallelMapV2 */
	const char *family;    /* normalized: ParallelMap, Batch, MemoryCache, ... */
	int parent;	       /* stage index, -1 for the root */
	int depth;	       /* 0 for the root */
	bool is_async;
	bool is_device_generator;	/* Iterator::Prefetch::Generator */
	size_t niterators;		/* iterator ids merged into this stage */
	const struct tfd_event *sample; /* first call, for parameters */
	/* over every call of the stage */
	uint64_t calls_all;
	int64_t total_all_ns, self_all_ns;
	/* over the analyzed root calls (steady state, slow) */
	uint64_t calls;
	int64_t total_ns, self_ns, blocking_ns;
	uint64_t blocking_calls;       /* calls that owned any blocking time */
	size_t links[TFD_LINK__COUNT]; /* how its calls were linked to their parents */
	double blocking_share;	       /* blocking_ns / pipeline analyzed_ns */
	bool on_critical_path;
	bool is_bottleneck; /* the throughput bottleneck (see tfd_capacity) */
	/* capacity model, over the steady-state window (throughput view) */
	int segment;	       /* index into the pipeline's segments, -1 none */
	uint64_t window_calls; /* calls that started in the window */
	int64_t work_ns;       /* own work in the window: self time of a sync
				* stage; 0 for an async stage's consumer side */
	uint64_t fn_calls;     /* user-function runs of an async map in the window */
	int64_t fn_work_ns;    /* their work (executor time, or run time) */
	/* their median work and the share of their work in calls longer than
	 * TFD_UNEVEN_X times it (0 both: fewer than TFD_UNEVEN_MIN_CALLS
	 * with their work known) */
	int64_t fn_p50_ns;
	double fn_uneven_share;
	/* the ops its user function ran (every call of an async map, from the
	 * op events inside its function events), by op type, the most time
	 * first; owned by the analysis */
	struct tfd_op_total *fn_ops;
	size_t nfn_ops;
	double fn_ops_coverage; /* their time / the function calls' work (0..1) */
};

enum tfd_segment_kind {
	TFD_SEG_CONSUMER = 0, /* stages that run in the consumer's GetNext */
	TFD_SEG_INPUT,	      /* the input side of an async stage (its reader thread(s)) */
	TFD_SEG_FUNCTION,     /* the user function of an async map, on its workers */
};

/* A set of stages that share threads: its capacity is the number of
 * elements per second it delivers at full use of its parallelism. */
struct tfd_segment {
	enum tfd_segment_kind kind;
	int owner;	    /* the async stage it serves; -1 for the consumer */
	int top_stage;	    /* the stage with the most work in it, -1 none */
	double parallelism; /* configured, or observed for AUTOTUNE: over the
			     * window, weighted by time */
	bool parallelism_observed;
	double par_lo, par_hi;	 /* the least and most in force in the window
				  * (equal: it did not change; 0: not said) */
	double cyc_lo, cyc_hi;	 /* the same of an interleave's cycle_length */
	double buf_lo, buf_hi;	 /* the same of its owner's buffer_limit */
	bool gil;		 /* a Python op holds most of its function: its capacity is
				  * the observed rate (capacity.c gil_bound) */
	size_t nthreads;	 /* threads seen doing its work */
	int64_t busy_ns;	 /* work in the window */
	double work_per_root_ns; /* busy / root elements */
	double utilization;	 /* busy / (window x parallelism) */
	double capacity;	 /* root elements per second; INFINITY without work */
	bool known;		 /* false: its work was not captured */
};

/* The throughput view of a pipeline (throughput-model.md 5). */
struct tfd_capacity {
	bool valid; /* enough steady-state root calls to say anything */
	/* the steady state's span, less its pauses: gaps between the training
	 * steps far longer than a step in which the pipeline's consumer took
	 * nothing (a Keras validation pass, an epoch's checkpoint), its
	 * buffers full and its workers idle */
	int64_t window_ns;
	int64_t pause_ns;
	uint32_t npauses;
	uint64_t root_elements; /* root calls in the window */
	double throughput;	/* observed root elements per second */
	double demand;		/* root elements per second the consumer would take */
	/* the demand is the training steps' (their rate with free input times
	 * the pipeline's root elements per step): its own consumer, a
	 * MultiDeviceIterator's or tf.data service's thread, takes elements as
	 * they come, far faster than the steps do */
	bool demand_from_steps;
	double model_throughput; /* the consumer's step plus its own stages in series,
				  * every other segment at its capacity: the slowest */
	bool step_limits;	 /* the step, not the input pipeline, sets the rate */
	int limiter;		 /* segment with the lowest capacity, -1 */
	int runner_up;		 /* the next lowest, -1 */
	double margin;		 /* runner-up capacity / limiter capacity */
	bool inferred;		 /* the limiter's work was not captured: inferred
				  * from the observed rate and idle readers */
	/* the host's cores: the pipeline root's cpu_budget (0: not said);
	 * the CPU time per root element the pipeline's stages and, on a host
	 * without device activity, the step's own compute take; the rate the
	 * cores allow (budget / cpu work); whether that is the lowest limit */
	double cpu_budget;
	double cpu_ns, cpu_step_ns;
	double cpu_rate;
	bool cpu_limits;
	/* observed throughput / model throughput; unexplained: under
	 * TFD_EXPLAINED_MIN, the work the capture shows does not account for
	 * the rate (per-element overhead no event covers): the throughput view
	 * is not used for the bottleneck or estimates, the latency view is */
	double explained;
	bool unexplained;
	/* the host's dataset-function Python ops ran side by side, or took
	 * turns at the interpreter's lock (tfd_python_overlap; neither:
	 * unknown) */
	bool python_side_by_side, python_take_turns;
	char evidence[512]; /* "reader busy 98 % while the 8 map workers ..." */
};

/* Below this share of the model's rate the observed rate is not explained
 * by the captured work (struct tfd_capacity.unexplained). */
#define TFD_EXPLAINED_MIN 0.6

/* Whether the throughput view names p's bottleneck: a valid model with a
 * limiter that explains the observed rate. */
#define TFD_CAPACITY_USABLE(p)                                                                     \
	((p)->capacity.valid && (p)->capacity.limiter >= 0 && !(p)->capacity.unexplained)

/* Whether the capture holds none of stage s's calls (each outlasted it:
 * a shuffle buffer filling, an element slower than the capture), the
 * stage known from its inputs' calls alone. */
static inline bool tfd_stage_outlasted(const struct tfd_stage *s)
{
	return s->calls_all == 0;
}

struct tfd_pipeline {
	uint64_t root_id;
	char name[24]; /* "Host:0", "Device:1" */
	bool is_device;
	struct tfd_stage *stages; /* stages[0] is the root */
	size_t nstages;
	/* root calls */
	uint64_t ncalls, nslow;
	int64_t min_ns, max_ns, avg_ns, p50_ns, p95_ns, total_ns;
	int64_t first_start_ns;
	int64_t last_end_ns;   /* its root calls' last end (the analysis only) */
	int64_t first_call_ns; /* its first root call's time: from empty, when it is new */
	size_t nwarmup;	       /* leading calls excluded as warm-up */
	size_t nanalyzed;      /* root calls in the aggregate */
	int64_t analyzed_ns;
	bool analyzed_slow_only; /* the aggregate holds only calls > 50 us */
	int analyzed_rank;	 /* -1, or the single rank analyzed (--rank) */
	int bottleneck;		 /* stage index, -1 if none: the stage whose
				  * speed-up raises throughput (capacity view),
				  * else the one with most blocking time */
	int slowest_bottleneck;	 /* bottleneck of the slowest call alone */
	int *critpath;		 /* stage indices, root first, bottleneck last */
	size_t ncritpath;
	size_t links[TFD_LINK__COUNT];
	double unattributed_share; /* 1 - sum of blocking shares (rounding) */
	/* the latency view's choice (most blocking time); bottleneck above is
	 * the throughput view's when the capacity model is valid */
	int latency_bottleneck;
	struct tfd_segment *segments;
	size_t nsegments;
	struct tfd_capacity capacity;
	/* a parameter AUTOTUNE sets (parallelism, cycle_length, buffer_limit)
	 * took two values over the capture: still being tuned (the direct
	 * analysis only; a merge keeps the verdict it led to) */
	bool tuned_in_capture;
	struct tfd_sureness confidence; /* of the bottleneck (confidence.c) */
	/* 1 + the index of the host pipeline this one repeats, 0 none (so a
	 * zeroed pipeline repeats none): the same dataset (its root's long
	 * name and dataset name), iterated anew (a loop that makes an iterator
	 * each epoch has a pipeline per epoch). Each group of repeats has one
	 * pipeline of its own, the one that holds the loop up most (its root
	 * calls' total time, analyze.c): the findings are that one's */
	int repeat_of1;
	/* its root calls fall outside the steps the verdict counts (a Keras
	 * validation pass runs between the training steps: the steps never
	 * wait on it) */
	bool outside_steps;
};

/* Whether the host's cores, shared with the step, limit pipeline p: the
 * model says they do by a clear margin, or, while the consumer waits (the
 * pipeline delivers under 95 % of what the step takes), they allow less
 * than the step takes and less than the slowest stage would deliver: its
 * waits are then no bursts a buffer evens out (a real map on 2 cores
 * allowing 0.96 of the demand measured nothing from a larger prefetch,
 * 1.3x from halving its work). */
#define TFD_CONSUMER_WAITS 0.95 /* delivered / demand under which the consumer waits */

static inline bool tfd_cores_limit(const struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;

	if (!(cp->cpu_budget > 0))
		return false;
	return cp->cpu_limits ||
	       (cp->limiter >= 0 && (size_t)cp->limiter < p->nsegments &&
		cp->throughput < TFD_CONSUMER_WAITS * cp->demand && cp->cpu_rate < cp->demand &&
		cp->cpu_rate < p->segments[cp->limiter].capacity);
}

/* Whether workers for stage si raise pipeline p from the rate seen rather
 * than the model's: si is a sequential map or filter (its segment one
 * thread), the host's cores set the model's rate (the calls' wall time over
 * the budget), and the pipeline delivered clearly less (under
 * TFD_CONSUMER_WAITS of it). A stage's capacity counts its own work, not its
 * calls' waits for their input, which a sequential stage sits through one
 * call after another and its workers (TFD-T01, T13) overlap: those waits,
 * not the cores, held the rate (a sequential map of matmuls on the batch,
 * its thread in its calls 97 % of the window and in its own work 68 %:
 * 38.7/s seen, the cores' 52.7/s; its workers measured 1.56x). */
static inline bool tfd_serial_below_cores(const struct tfd_pipeline *p, int si)
{
	const struct tfd_capacity *cp = &p->capacity;
	int g = si >= 0 && (size_t)si < p->nstages ? p->stages[si].segment : -1;

	return g >= 0 && (size_t)g < p->nsegments && !p->stages[si].is_async &&
	       (strcmp(p->stages[si].family, "Map") == 0 ||
		strcmp(p->stages[si].family, "Filter") == 0) &&
	       p->segments[g].parallelism <= 1.0 && cp->cpu_budget > 0 &&
	       cp->cpu_rate <= cp->model_throughput * 1.0001 && cp->throughput > 0 &&
	       cp->throughput < TFD_CONSUMER_WAITS * cp->cpu_rate;
}

enum tfd_bound {
	TFD_BOUND_UNKNOWN = 0,
	TFD_BOUND_NOT,
	TFD_BOUND_MODERATE,
	TFD_BOUND_HIGH,
};

/* The share of step time that is input over one set of steps: the host
 * waiting for input plus, with device planes, the copies to the device
 * (TensorFlow's input time, device-input.md). */
struct tfd_share {
	double pct;			/* 100 * (wait + h2d) / step; NAN when unknown */
	int64_t step_ns;		/* summed step time */
	int64_t wait_ns;		/* time in IteratorGetNext* (and MakeIterator, on
					 * the threads that call it) within those steps (with
					 * device planes: where no device op of a higher
					 * priority ran) */
	int64_t h2d_ns;			/* host-to-device time that nothing of a higher
					 * priority overlapped (0 without device planes) */
	int64_t dev_ns[TFD_DEV__COUNT]; /* per kind, what each owned */
	size_t nsteps;
	int64_t create_ns; /* of wait_ns: iterators being made for the loop */
	int64_t gil_ns;	   /* of wait_ns: the loop waiting for the GIL after GetNext */
};

/* One step: its time and the parts of it that are input. */
struct tfd_step_wait {
	int64_t start_ns, step_ns, wait_ns;
	int64_t create_ns;  /* of wait_ns: iterators being made (MakeIterator) */
	int64_t gil_ns;	    /* of wait_ns: waiting for the GIL after GetNext */
	int64_t h2d_ns;	    /* copies to the device (0 without device planes) */
	int64_t compute_ns; /* device compute (0 without device planes) */
	/* per kind what each owned of the step (the capture's: struct
	 * tfd_device), NULL without device planes */
	const int64_t *owned;
	bool well_formed; /* has time that is not waiting (TF: has compute;
			   * with device planes, device compute) */
};

/* Consecutive steps summed into at most a fixed number of points (a long
 * capture groups `per` steps a point): what the per-step charts draw.
 * h2d_ns and compute_ns are NULL for a host without device planes. */
struct tfd_step_points {
	size_t per, n;
	int64_t *step_ns, *wait_ns;
	int64_t *h2d_ns, *compute_ns;
};
#define TFD_STEP_POINTS 500 /* the JSON report's per_step points */
#define TFD_STEP_BARS 250   /* the HTML report's step bars */

struct tfd_host_result {
	const struct tfd_host *host;
	struct tfd_pipeline *pipelines; /* host pipelines first, by first call */
	size_t npipelines;
	size_t nhost_pipelines;
	/* the host ran a ReduceDataset op: a dataset's loop inside a
	 * tf.function (see struct tfd_analysis's loop_in_function) */
	bool loop_in_function;
	/* its steps' time before the loop's first element, summed over the
	 * steps that hold one (each call of the function builds the loop
	 * anew: the body instantiated, the iterator started empty), and those
	 * steps' time */
	int64_t loop_startup_ns, loop_steps_ns;
	/* the long gaps between its steps (tfd_long_step_gap: an epoch's end,
	 * a validation pass, an evaluation), their time and number, and the
	 * time from its first step's start to its last step's end */
	int64_t between_ns, steps_span_ns;
	uint32_t nbetween;
	/* of between_ns: passes over pipelines read only between the steps
	 * (a validation pass, an evaluation: the holes), and outside them the
	 * loop waiting in GetNext and making iterators (both 0 where the
	 * markers leave the input out: what is left out there is the passes) */
	int64_t between_pass_ns, between_wait_ns, between_create_ns;
	/* ... and the session's runs that read no input in them (TensorFlow
	 * 1: an iterator's initializer, a summary's fetch) */
	int64_t between_session_ns;
	/* the iterators the loop made over the capture (struct
	 * tfd_host_waits.nroots_made): a dataset made anew whose new iterators
	 * got the old ones' addresses counts fewer pipelines than iterators */
	size_t iterators_made;
	/* input-bound share: the figures the verdict uses (a copy of tf or
	 * steady below, or the capture span without step markers) */
	double input_pct;  /* NAN when unknown: host wait + host-to-device */
	int64_t step_ns;   /* summed step time (or capture span) */
	int64_t wait_ns;   /* time in IteratorGetNext* within it */
	int64_t h2d_ns;	   /* host-to-device time within it (device planes) */
	int64_t create_ns; /* of wait_ns: iterators being made for the loop */
	int64_t gil_ns;	   /* of wait_ns: the loop waiting for the GIL after GetNext */
	/* device spans were read for the host: input time is TensorFlow's,
	 * host wait + host-to-device, each overlap owned by one kind */
	bool has_device;
	/* per kind (enum tfd_dev_kind) the time each owned in the verdict's
	 * steps (TFD_DEV_WAIT: the host wait) */
	int64_t dev_ns[TFD_DEV__COUNT];
	/* bytes copied to the device per step (0: not said) */
	double h2d_bytes_per_step;
	size_t nsteps;
	const char *input_basis; /* "steps", "capture span" or "none" */
	/* "tf-convention", "steady-state", "capture span" or "none" */
	const char *verdict_basis;
	/* TensorFlow's convention: well-formed steps, the first and last dropped
	 * when there are more than 5 (xprof-reference.md 5.1) */
	struct tfd_share tf;
	/* the steady state: well-formed steps less the leading warm-up steps */
	struct tfd_share steady;
	struct tfd_share all;	/* every step */
	size_t nwarmup_steps;	/* leading steps > 2x the median step (at most 10 %),
				 * or before the share settled (a ramp) */
	int64_t warmup_wait_ns; /* waiting inside them */
	/* a ramp: the leading steps whose share, together, stood apart from
	 * the rest's (one change point), and the two shares; 0 none */
	size_t nramp_steps;
	double ramp_pct, settled_pct;
	/* the all-steps share is in a higher band than the verdict: warm-up,
	 * not the steady state, would have raised the alarm */
	bool warmup_inflated;
	/* the steps' markers left the input out (next() ran between them: the
	 * waits between steps are 5 % of the time or more, and more than the
	 * waits inside): each step was counted from its start to the next
	 * step's (share.c); gap_wait_ns is the waiting between the markers,
	 * markers_pct TensorFlow's convention over the markers alone (NAN
	 * when not counted) */
	bool gaps_counted;
	int64_t gap_wait_ns;
	double markers_pct;
	/* per step, in time order; NULL in an analysis merged from partial
	 * results or made by tfd_analyze_lean(), which keep only what the
	 * reports draw: the points below */
	struct tfd_step_wait *step_waits;
	size_t nstep_waits; /* steps (also when step_waits is NULL) */
	int64_t first_step_wait_ns;
	struct tfd_step_points step_points; /* at most TFD_STEP_POINTS */
	struct tfd_step_points step_bars;   /* at most TFD_STEP_BARS */
	/* per-step waiting share (100 * wait / step) over the tf steps */
	double step_pct_min, step_pct_p50, step_pct_p90, step_pct_max;
	int64_t step_p90_ns; /* the 90th percentile step time of those steps, 0 */
	enum tfd_bound bound;
	struct tfd_sureness confidence; /* of the verdict (confidence.c) */
	int focus;			/* pipeline index analyzed first, -1 if none */
	int64_t max_latency_ns;		/* slowest host-pipeline root call */
};

struct tfd_diag {
	const char *host;
	char msg[240];
};

/* A host whose steps are longer than the fleet's (straggler.c). */
struct tfd_straggler {
	size_t host;		 /* its index in hosts */
	double ratio;		 /* its mean step / the median host's */
	double peers_step_ns;	 /* the median host's mean step */
	double peers_input_pct;	 /* the median input share, NAN unknown */
	double peers_compute_ns; /* the median device compute per step, 0 none */
	/* its steps are no longer than the others' (a synchronous job: they
	 * wait for it in their collectives), but it waits for input
	 * TFD_STRAGGLER_INPUT_POINTS more than the median other host */
	bool synchronous;
};

struct tfd_analysis {
	struct tfd_host_result *hosts; /* ranked: most input-bound first */
	size_t nhosts;
	/* hosts whose mean step is over 1.2x the median host's (3 hosts with
	 * steps or more), the slowest first; then the input-bound hosts that
	 * wait for input far more than the others while their steps are as
	 * long (2 hosts with steps or more), the most waiting first */
	struct tfd_straggler *stragglers;
	size_t nstragglers;
	struct tfd_diag *diags;
	size_t ndiags;
	bool any_tfdata;
	/* a host ran a dataset's whole loop inside one op (a for loop over a
	 * dataset inside a tf.function, ds.reduce: a ReduceDataset), where no
	 * IteratorGetNext waits: the loop's input is analyzed when autograph's
	 * scan runs the body; without it no tf.data is found */
	bool loop_in_function;
	bool input_bound; /* focus host's verdict: >= 5 % waiting, or slow pipeline */
	const char *run;  /* the run analyzed when a log directory was given, or NULL */
	/* the name a report gives the run: the run above for what was loaded;
	 * for partials, the CAPTURE they were made from when they agree, else
	 * the directory their host files share, else NULL */
	const char *label;
};

struct tfd_analyze_opts {
	const char *host; /* analyze this host first (NULL: most input-bound) */
	bool no_warmup;	  /* keep every root call (no warm-up exclusion) */
	bool allow_mixed; /* merge: partials of different runs may be merged (said in a note) */
	int rank;	  /* >= 0: analyze only the root call of this slowness rank
			   * (0 = slowest), like XProf's Rank; -1 or 0-init
			   * ignored unless rank_set */
	bool rank_set;
	/* --low-memory: a host whose calls hold a stream in time order builds
	 * its pipelines from the stream's sums, with no call table (the same
	 * report; more time; see docs/performance.md) */
	bool low_memory;
};

/* 100 * ns / step over the verdict's steps: a part of a host's step time
 * (NAN when its input share is unknown). */
double tfd_host_part_pct(const struct tfd_host_result *h, int64_t ns);
/* The two parts of a host's input share: 100 * wait / step and 100 * h2d
 * / step over the verdict's steps (NAN when unknown). */
double tfd_host_wait_pct(const struct tfd_host_result *h);
double tfd_h2d_pct(const struct tfd_host_result *h);
/* Whether copies to the device are most of the host's input time. */
bool tfd_h2d_dominates(const struct tfd_host_result *h);

/* "low", "medium", "high" */
const char *tfd_confidence_name(enum tfd_confidence c);

/* The XProf band of an input-bound share: >= 20 % highly, >= 5 % moderately,
 * else not; unknown for NAN. */
enum tfd_bound tfd_bound_of(double pct);
/* Whether the host's slowest stage may be called its bottleneck: false
 * when the host is known not to be input-bound (a stage that does not hold
 * training back is only the slowest one), true otherwise. Every report says
 * "bottleneck" only where this holds. */
bool tfd_host_has_bottleneck(const struct tfd_host_result *h);

/* Analyze every host of cap: shares, pipelines, capacity, bottleneck and
 * confidence, hosts ranked most input-bound first. *out is new (free it
 * with tfd_analysis_free) and borrows names from cap: keep cap alive. On
 * error *out is NULL and err says why (TFD_E_USAGE: an unknown --host). */
enum tfd_status tfd_analyze(const struct tfd_capture *cap, const struct tfd_analyze_opts *opts,
			    struct tfd_analysis **out, struct tfd_err *err);
/* tfd_analyze() for a capture whose events the caller will not read again:
 * once a host's dataset-function calls are read, every event but the
 * iterator, Produce and Consume events is dropped from its threads, and
 * those too once its calls are linked (the graph and the pipelines are
 * the memory peak; the pipelines read each call's times and a copy of
 * each iterator's first event, which the result owns). Hosts, threads and
 * steps stay, as do the hosts' counts of what was read. Do not analyze cap
 * again: it has no events. */
enum tfd_status tfd_analyze_lean(struct tfd_capture *cap, const struct tfd_analyze_opts *opts,
				 struct tfd_analysis **out, struct tfd_err *err);
/* Free an analysis and what it owns; NULL is allowed. */
void tfd_analysis_free(struct tfd_analysis *a);

/* A host's mean step time over the steps its verdict counts (0: no steps). */
double tfd_host_mean_step_ns(const struct tfd_host_result *h);
/* Its device compute per step (0: no device planes). */
double tfd_host_compute_ns(const struct tfd_host_result *h);
/* Its step time that no device kind owns (dev_ns), 0 when they own it
 * all: the device idle while the host does not wait for input. */
int64_t tfd_host_other_ns(const struct tfd_host_result *h);

/* Why a straggler's steps are longer, from what the data gives. */
enum tfd_straggler_why {
	TFD_STRAGGLER_INPUT,  /* it waits for input TFD_STRAGGLER_INPUT_POINTS more */
	TFD_STRAGGLER_DEVICE, /* its device computes longer (over 1.2x) */
	TFD_STRAGGLER_STEP,   /* neither: the step's own work, not the input */
};
#define TFD_STRAGGLER_INPUT_POINTS 10.0
/* Why straggler s of a is slow (the first that holds, in the enum's order). */
enum tfd_straggler_why tfd_straggler_why(const struct tfd_analysis *a,
					 const struct tfd_straggler *s);

/* One analysis from many (merge.c): the per-file analyses of a run, or
 * the partials' hosts, merged in memory into what one load of all the
 * files gives: hosts in file order, named apart where their files carry
 * one name, discovery's notes once each, then ranked and finished as
 * tfd_analyze() does. Each part's hosts are made self-contained when
 * added (names, paths, device counts, stage names, parameters and op names
 * copied into the merge), so its capture may be freed right after. */
struct tfd_merger;

/* An empty merge (tfd_merger_finish or tfd_merger_free it). */
struct tfd_merger *tfd_merger_new(void);
/* The arena the merge keeps names in (a reader may intern into it). */
struct tfd_arena *tfd_merger_arena(struct tfd_merger *m);
/* Add every host of part (consumed: freed here) and its notes; seq orders
 * the parts' notes (the file's index), origin names the file in
 * messages. A note whose host pointer is one of part's host names is that
 * host's; the others are the part's own (discovery's). */
void tfd_merger_add(struct tfd_merger *m, struct tfd_analysis *part, size_t seq,
		    const char *origin);
/* The merged analysis into *out (m is consumed, also on error): extra
 * notes follow the parts' own; opts->host picks the host analyzed first.
 * The same host file twice is an error naming both origins. */
enum tfd_status tfd_merger_finish(struct tfd_merger *m, const char *const *extra, size_t nextra,
				  const struct tfd_analyze_opts *opts, struct tfd_analysis **out,
				  struct tfd_err *err);
/* Free a merge not finished; NULL is allowed. */
void tfd_merger_free(struct tfd_merger *m);

/* What a report calls stage si of p: its name, or, when another of its
 * stages has that name, the shortest tail of its stage path no other
 * shares ("BatchV2::ParallelMapV2"); written to buf when it is not the
 * name. A pipeline of over 2000 stages keeps its names. */
const char *tfd_stage_label(const struct tfd_pipeline *p, int si, char *buf, size_t len);
/* Whether the busiest stage of p's lowest segment mostly waits: under half
 * of its time is CPU work (Python that sleeps or reads, ops waiting for a
 * thread of their pool or a core), so on full cores the stage taking the
 * most CPU is named instead (bottleneck.c). */
bool tfd_limit_mostly_waits(const struct tfd_pipeline *p);
/* The pool as the limit: when the busiest stage of p's lowest segment, a
 * thread, is a map or a filter whose function's ops run under half of its
 * calls (the rest waits for a thread of the pool they run on), the stage
 * whose ops hold the pool most, if that is another; -1 otherwise (also
 * when the cores' rule names a stage first: bottleneck.c). Python ops
 * count: a sleep holds its thread of the pool. */
int tfd_pool_heaviest(const struct tfd_pipeline *p);
/* The time all of p's stages' function ops held the pool in the window. */
double tfd_pool_ops_ns(const struct tfd_pipeline *p);
/* Why p's bottleneck, a stage no call of which ended in the capture
 * (tfd_stage_outlasted), is named: "no call of it ended in the capture
 * ... while the stages below it made N calls: ...". Writes buf. */
const char *tfd_outlasted_why(const struct tfd_pipeline *p, char *buf, size_t len);
/* What a capacity segment is, for a reader: "consumer's thread (Model)",
 * "8 ParallelMapV2 workers", "thread feeding Prefetch (runs Map)",
 * "10 threads feeding ParallelInterleaveV4 (run TFRecord)". Writes buf. */
const char *tfd_segment_name(const struct tfd_pipeline *p, const struct tfd_segment *g, char *buf,
			     size_t len);
/* True when most of the stage's calls ran on another thread than their
 * parent call (Produce/Consume, overlap, or never linked). */
bool tfd_stage_is_async_edge(const struct tfd_stage *s);

/* "highly", "moderately", "not" or "unknown" (a static string). */
const char *tfd_bound_name(enum tfd_bound b);

/* Steps a capture should hold for a firm verdict; below TFD_SHORT_STEPS
 * the reports lead with what to profile instead. */
#define TFD_SHORT_STEPS 5
#define TFD_WANT_STEPS 20
/* Whether host h's capture is too short to judge (fewer than
 * TFD_SHORT_STEPS steps; without steps, fewer than that many elements
 * taken from its input pipeline): then the sentence that says so and
 * gives the span to profile instead ("capture too short to judge: 1 step.
 * Profile 20 steps or more after warm-up: ...") into buf. */
bool tfd_too_short(const struct tfd_host_result *h, char *buf, size_t len);
/* The same of a's first (focus) host, when a found tf.data: what the text,
 * HTML and Markdown reports lead with. */
bool tfd_analysis_too_short(const struct tfd_analysis *a, char *buf, size_t len);

/* Host h's pipelines that iterate its focus pipeline's dataset anew (an
 * iterator per epoch; a validation set's repeats are not the loop's own:
 * the focus is the pipeline that holds the loop up most). */
size_t tfd_repeated_iterators(const struct tfd_host_result *h);
/* Whether host h's pipeline pi fills a cache (a stage below it ran) that
 * a later iterator of the same dataset read back (its cache ran, nothing
 * below it), or that pi read back itself (tfd_cache_filled_in_capture):
 * its stages below the cache run no more after the first epoch. */
bool tfd_cache_read_back(const struct tfd_host_result *h, size_t pi);
/* Whether pipeline p's cache filled during the capture and was read back
 * by the same iterator (`ds.cache().repeat()`): the stage right below
 * the cache ran for clearly fewer calls than the cache (while it fills,
 * each call of the cache is one of that stage's; once full, none is).
 * That stage's index, -1 when none. */
int tfd_cache_filled_in_capture(const struct tfd_pipeline *p);
/* Iterators of that dataset: its first and the repeats, or, when the loop
 * made more (tfd_host_result.iterators_made: new iterators got the old
 * ones' addresses, so several are one pipeline), as many as it made, at
 * most one per call of its pipelines' roots. */
size_t tfd_focus_iterators(const struct tfd_host_result *h);
/* root calls per pipeline of a dataset made anew (on average) up to which
 * its pipelines may each hold several iterators made at one address */
#define TFD_FEW_CALLS_PER_ITERATOR 4
/* Those iterators per step of the capture: about 1 when the loop makes
 * one each step; 0 without steps. */
double tfd_iterators_per_step(const struct tfd_host_result *h);
/* From this many iterators a step the report may name the new iterators
 * as what holds the loop up (rule TFD-H09 fires from the same). */
#define TFD_ITERATORS_PER_STEP_SAYS 0.5
/* A filter's predicate runs whose ops ran on another thread and took under
 * a fifth of their time waited the rest for a thread of the pool: no work
 * of the filter's (capacity.c) */
#define TFD_PREDICATE_WAIT_MIN 0.8
/* Whether host h's loop makes a new iterator each step and that holds it
 * up: the host has a bottleneck (tfd_host_has_bottleneck), two or more
 * iterators, that many a step, making them 1 % of the verdict's step time
 * or more. */
bool tfd_iterator_per_step(const struct tfd_host_result *h);

/* The share of host h's focus pipeline's steady-state window in which its
 * Python runs (a from_generator source, the Python ops of a map's
 * function): the time the input pipeline holds the interpreter's lock that
 * the training loop needs too (at most 1: a map's Python events span the
 * wait for the lock as well). 0 without a capacity model. */
double tfd_python_busy_share(const struct tfd_host_result *h);

/* Whether the Python ops of a host's dataset functions ran side by side
 * (they let go of the interpreter's lock: Python that waits on a file, a
 * service, a sleep) or took turns at it (Python that computes), from how a
 * call's duration grows with the calls still running when it started:
 * taking turns, it waits for them; side by side, it does not. Unknown with
 * fewer than TFD_PY_OVERLAP_MIN_CALLS calls or too little spread in how
 * many were ahead (one worker: none ever). The growth is taken within
 * each function (struct tfd_py_op.fn), whose calls are compared with its
 * own: over all of them together, reads sleeping 2.5 ms that started
 * beside a map's 0.2 ms sleeps read as growth (0.81 per call ahead on a
 * real pipeline, -0.02 within each). On real TF 2.21 jobs the
 * duration's growth per call ahead, over a call with none, was 0.74 for a
 * computing py_function and 0.03 for sleeping numpy_functions. Side by
 * side needs steady calls too (the slowest tenth at most
 * TFD_PY_OVERLAP_SPREAD times the median and TFD_PY_OVERLAP_JITTER_NS,
 * a busy scheduler's delay; each function's calls by themselves when it
 * has enough of them): a call that waits lasts what it waits for
 * (the catalog's 4 ms sleeps 1.05-1.13 times the median, its 0.5 ms
 * reads 0.68 -> 1.17 ms), Python that computes with the lock let go
 * (NumPy's matmuls) runs side by side as well but stretches as the cores
 * are shared (1.14 -> 8.27 ms; computing py_functions 2.1-2.5 times):
 * more calls than cores would not help it. */
#define TFD_PY_OVERLAP_MIN_CALLS 20
#define TFD_PY_OVERLAP_MIN_SD 0.1
#define TFD_PY_OVERLAP_SIDE 0.25
#define TFD_PY_OVERLAP_TURNS 0.5
#define TFD_PY_OVERLAP_SPREAD 1.5
#define TFD_PY_OVERLAP_JITTER_NS 500000
/* h's Python ops as above: side by side, taking turns, or unknown; nothing
 * kept, no error. */
enum tfd_py_overlap tfd_python_overlap(const struct tfd_host *h);
/* From this share the report says so (rule TFD-H04 fires from the same). */
#define TFD_PYTHON_BUSY_SAYS 0.3
/* From this share of the steps' span in long gaps between them the report
 * says so (rule TFD-H12 fires from the same). */
#define TFD_BETWEEN_SAYS 10.0

/* The share of host h's cores its focus pipeline kept busy over the
 * steady-state window (its CPU time per root element over the time between
 * them, over the cores its root says; the synchronous stages on the
 * consumer's own thread left out: they run between the steps), on a host
 * without device activity,
 * where the step computes on the same cores: 0 on a host with a device or
 * without a cores model. */
double tfd_pipeline_cpu_share(const struct tfd_host_result *h);
/* From this share the report says the pipeline takes the step's cores
 * (rule TFD-H07 fires from the same): the catalog's jobs that were not
 * input-bound kept at most 0.14 busy and lost at most 11 % of their step
 * to it (the step with a free input against the real one); make_csv_dataset
 * with its defaults kept 0.27 and lost 32 %, the jobs that waited under
 * 10 % but lost a third or more 0.48-0.62. */
#define TFD_PIPELINE_CPU_SAYS 0.2

/* "DecodeJpegV2 69%, ResizeBilinear 21%, Cast 10%": the first n op types
 * stage s's function spends its op time in, into buf ("" when its op
 * events were not captured); returns how many were written. */
size_t tfd_fn_ops_summary(const struct tfd_stage *s, size_t n, char *buf, size_t len);

/* How many of an async map's function calls really run at once, and its
 * configured workers in *workers (NAN when it has no function segment).
 * When its top op is Python's (*python set), the GIL runs that share one
 * call at a time: Amdahl, 1 / (s + (1 - s) / P); else the time-weighted
 * overlap of its calls, busy time / window (utilization x P). */
double tfd_stage_effective_parallelism(const struct tfd_pipeline *p, int si, double *workers,
				       bool *python);

/* The segment of stage si's user function on its workers (an async map's),
 * NULL when it has none. */
const struct tfd_segment *tfd_stage_function_segment(const struct tfd_pipeline *p, int si);

/* The time of the stage's function ops (their self time summed, ns), and
 * of its Python ops among them (tf.py_function, numpy_function). */
double tfd_fn_ops_time(const struct tfd_stage *s);
double tfd_fn_python_time(const struct tfd_stage *s);

/* How sure the stage's top function op is: high when its op events cover
 * 70 % or more of an async map's function time (or it is not compared: a
 * sequential map),
 * medium from 40 %, low below; *why says so ("" when high). */
enum tfd_confidence tfd_top_op_confidence(const struct tfd_stage *s, const char **why);

#endif
