/* partial_fields.c - the rows of the partial format (partial_impl.h): every
 * plain field of the result structs, its key, how it is stored and where. */
#include <stddef.h>

#include "partial_impl.h"

const char *const tfd_pf_link_keys[TFD_LINK__COUNT] = {"sync", "produce", "overlap", "none"};

#define F(st, k, m, kind)                                                                          \
	{                                                                                          \
		k, kind, offsetof(st, m), sizeof(((st *)0)->m), 0, 0, 0                            \
	}
#define FR(st, k, m, lo, hi)                                                                       \
	{                                                                                          \
		k, FK_INT, offsetof(st, m), sizeof(((st *)0)->m), lo, hi, 0                        \
	}
/* a field added in partial version v */
#define FV(st, k, m, kind, v)                                                                      \
	{                                                                                          \
		k, kind, offsetof(st, m), sizeof(((st *)0)->m), 0, 0, v                            \
	}
/* an int within [lo, hi] added in partial version v */
#define FRV(st, k, m, lo, hi, v)                                                                   \
	{                                                                                          \
		k, FK_INT, offsetof(st, m), sizeof(((st *)0)->m), lo, hi, v                        \
	}
#define NF(t) (sizeof(t) / sizeof(t[0]))

static const struct fdesc stage_rows[] = {
    F(struct tfd_stage, "long_name", long_name, FK_STR),
    F(struct tfd_stage, "path", path, FK_STR),
    F(struct tfd_stage, "name", name, FK_STR),
    F(struct tfd_stage, "family", family, FK_STR),
    F(struct tfd_stage, "parent", parent, FK_STAGE),
    FR(struct tfd_stage, "depth", depth, 0, 1 << 20),
    F(struct tfd_stage, "is_async", is_async, FK_BOOL),
    F(struct tfd_stage, "is_device_generator", is_device_generator, FK_BOOL),
    F(struct tfd_stage, "niterators", niterators, FK_SIZE),
    F(struct tfd_stage, "calls_all", calls_all, FK_U64),
    F(struct tfd_stage, "total_all_ns", total_all_ns, FK_I64),
    F(struct tfd_stage, "self_all_ns", self_all_ns, FK_I64),
    F(struct tfd_stage, "calls", calls, FK_U64),
    F(struct tfd_stage, "total_ns", total_ns, FK_I64),
    F(struct tfd_stage, "self_ns", self_ns, FK_I64),
    F(struct tfd_stage, "blocking_ns", blocking_ns, FK_I64),
    F(struct tfd_stage, "blocking_calls", blocking_calls, FK_U64),
    F(struct tfd_stage, "blocking_share", blocking_share, FK_DBL),
    F(struct tfd_stage, "on_critical_path", on_critical_path, FK_BOOL),
    F(struct tfd_stage, "is_bottleneck", is_bottleneck, FK_BOOL),
    F(struct tfd_stage, "segment", segment, FK_SEG),
    F(struct tfd_stage, "window_calls", window_calls, FK_U64),
    F(struct tfd_stage, "work_ns", work_ns, FK_I64),
    F(struct tfd_stage, "fn_calls", fn_calls, FK_U64),
    F(struct tfd_stage, "fn_work_ns", fn_work_ns, FK_I64),
    FV(struct tfd_stage, "fn_p50_ns", fn_p50_ns, FK_I64, 7),
    FV(struct tfd_stage, "fn_uneven_share", fn_uneven_share, FK_DBL, 7),
};

static const struct fdesc segment_rows[] = {
    FR(struct tfd_segment, "kind", kind, TFD_SEG_CONSUMER, TFD_SEG_FUNCTION),
    F(struct tfd_segment, "owner", owner, FK_STAGE),
    F(struct tfd_segment, "top_stage", top_stage, FK_STAGE),
    F(struct tfd_segment, "parallelism", parallelism, FK_DBL),
    F(struct tfd_segment, "parallelism_observed", parallelism_observed, FK_BOOL),
    F(struct tfd_segment, "nthreads", nthreads, FK_SIZE),
    F(struct tfd_segment, "busy_ns", busy_ns, FK_I64),
    F(struct tfd_segment, "work_per_root_ns", work_per_root_ns, FK_DBL),
    F(struct tfd_segment, "utilization", utilization, FK_DBL),
    F(struct tfd_segment, "capacity", capacity, FK_DBL),
    F(struct tfd_segment, "known", known, FK_BOOL),
    F(struct tfd_segment, "par_lo", par_lo, FK_DBL),
    F(struct tfd_segment, "par_hi", par_hi, FK_DBL),
    FV(struct tfd_segment, "cyc_lo", cyc_lo, FK_DBL, 3),
    FV(struct tfd_segment, "cyc_hi", cyc_hi, FK_DBL, 3),
    FV(struct tfd_segment, "buf_lo", buf_lo, FK_DBL, 3),
    FV(struct tfd_segment, "buf_hi", buf_hi, FK_DBL, 3),
    F(struct tfd_segment, "gil", gil, FK_BOOL),
};

static const struct fdesc capacity_rows[] = {
    F(struct tfd_capacity, "valid", valid, FK_BOOL),
    F(struct tfd_capacity, "window_ns", window_ns, FK_I64),
    FV(struct tfd_capacity, "pause_ns", pause_ns, FK_I64, 10),
    FRV(struct tfd_capacity, "npauses", npauses, 0, INT32_MAX, 10),
    F(struct tfd_capacity, "root_elements", root_elements, FK_U64),
    F(struct tfd_capacity, "throughput", throughput, FK_DBL),
    F(struct tfd_capacity, "demand", demand, FK_DBL),
    FV(struct tfd_capacity, "demand_from_steps", demand_from_steps, FK_BOOL, 5),
    F(struct tfd_capacity, "model_throughput", model_throughput, FK_DBL),
    F(struct tfd_capacity, "step_limits", step_limits, FK_BOOL),
    F(struct tfd_capacity, "limiter", limiter, FK_SEG),
    F(struct tfd_capacity, "runner_up", runner_up, FK_SEG),
    F(struct tfd_capacity, "margin", margin, FK_DBL),
    F(struct tfd_capacity, "inferred", inferred, FK_BOOL),
    F(struct tfd_capacity, "evidence", evidence, FK_BUF),
    F(struct tfd_capacity, "cpu_budget", cpu_budget, FK_DBL),
    F(struct tfd_capacity, "cpu_ns", cpu_ns, FK_DBL),
    F(struct tfd_capacity, "cpu_step_ns", cpu_step_ns, FK_DBL),
    F(struct tfd_capacity, "cpu_rate", cpu_rate, FK_DBL),
    F(struct tfd_capacity, "cpu_limits", cpu_limits, FK_BOOL),
    F(struct tfd_capacity, "explained", explained, FK_DBL),
    F(struct tfd_capacity, "unexplained", unexplained, FK_BOOL),
    FV(struct tfd_capacity, "python_side_by_side", python_side_by_side, FK_BOOL, 7),
    FV(struct tfd_capacity, "python_take_turns", python_take_turns, FK_BOOL, 7),
};

static const struct fdesc pipeline_rows[] = {
    F(struct tfd_pipeline, "root_id", root_id, FK_U64),
    F(struct tfd_pipeline, "name", name, FK_BUF),
    F(struct tfd_pipeline, "is_device", is_device, FK_BOOL),
    F(struct tfd_pipeline, "ncalls", ncalls, FK_U64),
    F(struct tfd_pipeline, "nslow", nslow, FK_U64),
    F(struct tfd_pipeline, "min_ns", min_ns, FK_I64),
    F(struct tfd_pipeline, "max_ns", max_ns, FK_I64),
    F(struct tfd_pipeline, "avg_ns", avg_ns, FK_I64),
    F(struct tfd_pipeline, "p50_ns", p50_ns, FK_I64),
    F(struct tfd_pipeline, "p95_ns", p95_ns, FK_I64),
    F(struct tfd_pipeline, "total_ns", total_ns, FK_I64),
    F(struct tfd_pipeline, "first_start_ns", first_start_ns, FK_I64),
    FV(struct tfd_pipeline, "first_call_ns", first_call_ns, FK_I64, 13),
    FRV(struct tfd_pipeline, "repeat_of1", repeat_of1, 0, 1 << 30, 6),
    F(struct tfd_pipeline, "nwarmup", nwarmup, FK_SIZE),
    F(struct tfd_pipeline, "nanalyzed", nanalyzed, FK_SIZE),
    F(struct tfd_pipeline, "analyzed_ns", analyzed_ns, FK_I64),
    F(struct tfd_pipeline, "analyzed_slow_only", analyzed_slow_only, FK_BOOL),
    FR(struct tfd_pipeline, "analyzed_rank", analyzed_rank, -1, INT32_MAX),
    F(struct tfd_pipeline, "bottleneck", bottleneck, FK_STAGE),
    F(struct tfd_pipeline, "slowest_bottleneck", slowest_bottleneck, FK_STAGE),
    F(struct tfd_pipeline, "unattributed_share", unattributed_share, FK_DBL),
    F(struct tfd_pipeline, "latency_bottleneck", latency_bottleneck, FK_STAGE),
    FV(struct tfd_pipeline, "outside_steps", outside_steps, FK_BOOL, 9),
};

/* a per-kind time array (enum tfd_dev_kind) as dev_ns_K fields */
#define DEV_ROWS(st)                                                                               \
	F(st, "dev_ns_0", dev_ns[0], FK_I64), F(st, "dev_ns_1", dev_ns[1], FK_I64),                \
	    F(st, "dev_ns_2", dev_ns[2], FK_I64), F(st, "dev_ns_3", dev_ns[3], FK_I64),            \
	    F(st, "dev_ns_4", dev_ns[4], FK_I64), F(st, "dev_ns_5", dev_ns[5], FK_I64),            \
	    F(st, "dev_ns_6", dev_ns[6], FK_I64)

static const struct fdesc share_rows[] = {
    F(struct tfd_share, "pct", pct, FK_PCT),
    F(struct tfd_share, "step_ns", step_ns, FK_I64),
    F(struct tfd_share, "wait_ns", wait_ns, FK_I64),
    F(struct tfd_share, "h2d_ns", h2d_ns, FK_I64),
    DEV_ROWS(struct tfd_share),
    F(struct tfd_share, "nsteps", nsteps, FK_SIZE),
    FV(struct tfd_share, "create_ns", create_ns, FK_I64, 8),
    FV(struct tfd_share, "gil_ns", gil_ns, FK_I64, 8),
};

static const struct fdesc sure_rows[] = {
    FR(struct tfd_sureness, "level", level, TFD_CONF_LOW, TFD_CONF_HIGH),
    F(struct tfd_sureness, "reasons", reasons, FK_BUF),
};

/* the host result's plain fields (the basis strings are read by hand) */
static const struct fdesc host_rows[] = {
    F(struct tfd_host_result, "input_pct", input_pct, FK_PCT),
    F(struct tfd_host_result, "step_ns", step_ns, FK_I64),
    F(struct tfd_host_result, "wait_ns", wait_ns, FK_I64),
    F(struct tfd_host_result, "h2d_ns", h2d_ns, FK_I64),
    FV(struct tfd_host_result, "create_ns", create_ns, FK_I64, 8),
    FV(struct tfd_host_result, "gil_ns", gil_ns, FK_I64, 8),
    F(struct tfd_host_result, "has_device", has_device, FK_BOOL),
    F(struct tfd_host_result, "h2d_bytes_per_step", h2d_bytes_per_step, FK_DBL),
    DEV_ROWS(struct tfd_host_result),
    F(struct tfd_host_result, "nsteps", nsteps, FK_SIZE),
    F(struct tfd_host_result, "nwarmup_steps", nwarmup_steps, FK_SIZE),
    F(struct tfd_host_result, "warmup_wait_ns", warmup_wait_ns, FK_I64),
    F(struct tfd_host_result, "nramp_steps", nramp_steps, FK_SIZE),
    F(struct tfd_host_result, "ramp_pct", ramp_pct, FK_PCT),
    F(struct tfd_host_result, "settled_pct", settled_pct, FK_PCT),
    F(struct tfd_host_result, "warmup_inflated", warmup_inflated, FK_BOOL),
    FV(struct tfd_host_result, "gaps_counted", gaps_counted, FK_BOOL, 6),
    FV(struct tfd_host_result, "gap_wait_ns", gap_wait_ns, FK_I64, 6),
    FV(struct tfd_host_result, "markers_pct", markers_pct, FK_PCT, 6),
    FV(struct tfd_host_result, "loop_in_function", loop_in_function, FK_BOOL, 6),
    FV(struct tfd_host_result, "loop_startup_ns", loop_startup_ns, FK_I64, 6),
    FV(struct tfd_host_result, "loop_steps_ns", loop_steps_ns, FK_I64, 6),
    FV(struct tfd_host_result, "between_ns", between_ns, FK_I64, 11),
    FV(struct tfd_host_result, "steps_span_ns", steps_span_ns, FK_I64, 11),
    FRV(struct tfd_host_result, "nbetween", nbetween, 0, INT32_MAX, 11),
    FV(struct tfd_host_result, "between_pass_ns", between_pass_ns, FK_I64, 11),
    FV(struct tfd_host_result, "between_wait_ns", between_wait_ns, FK_I64, 11),
    FV(struct tfd_host_result, "between_create_ns", between_create_ns, FK_I64, 11),
    FV(struct tfd_host_result, "between_session_ns", between_session_ns, FK_I64, 13),
    FV(struct tfd_host_result, "iterators_made", iterators_made, FK_SIZE, 12),
    /* the steps: a count and what the reports draw, not every step, so a
     * partial's size does not grow with the capture's length */
    F(struct tfd_host_result, "nsteps_seen", nstep_waits, FK_SIZE),
    F(struct tfd_host_result, "first_step_wait_ns", first_step_wait_ns, FK_I64),
    F(struct tfd_host_result, "step_pct_min", step_pct_min, FK_PCT),
    F(struct tfd_host_result, "step_pct_p50", step_pct_p50, FK_PCT),
    F(struct tfd_host_result, "step_pct_p90", step_pct_p90, FK_PCT),
    FV(struct tfd_host_result, "step_p90_ns", step_p90_ns, FK_I64, 4),
    F(struct tfd_host_result, "step_pct_max", step_pct_max, FK_PCT),
    FR(struct tfd_host_result, "bound", bound, TFD_BOUND_UNKNOWN, TFD_BOUND_HIGH),
    F(struct tfd_host_result, "max_latency_ns", max_latency_ns, FK_I64),
};

_Static_assert(TFD_DEV__COUNT == 7, "a dev_ns_K row per device kind");
_Static_assert(sizeof(enum tfd_bound) == sizeof(int) &&
		   sizeof(enum tfd_confidence) == sizeof(int) &&
		   sizeof(enum tfd_segment_kind) == sizeof(int),
	       "FK_INT stores enums as int");

const struct fields tfd_pf_stage = {stage_rows, NF(stage_rows)};
const struct fields tfd_pf_segment = {segment_rows, NF(segment_rows)};
const struct fields tfd_pf_capacity = {capacity_rows, NF(capacity_rows)};
const struct fields tfd_pf_pipeline = {pipeline_rows, NF(pipeline_rows)};
const struct fields tfd_pf_share = {share_rows, NF(share_rows)};
const struct fields tfd_pf_sure = {sure_rows, NF(sure_rows)};
const struct fields tfd_pf_host = {host_rows, NF(host_rows)};
