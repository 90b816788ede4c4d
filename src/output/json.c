/* json.c - the JSON report (schema in docs/json.md). Keys are
 * added in a fixed order; ids are decimal strings (64-bit); times are
 * integer nanoseconds; shares are rounded to 4 decimals. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tfd/render.h"

static const char *link_keys[TFD_LINK__COUNT] = {"sync", "produce_consume", "overlap", "unlinked"};

static void add_id(cJSON *o, const char *k, uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v);
	cJSON_AddStringToObject(o, k, buf);
}

static void add_ns(cJSON *o, const char *k, int64_t v)
{
	tfd_json_add_num(o, k, (double)v);
}

static double r4(double x)
{
	return round(x * 10000.0) / 10000.0;
}

/* [lo, hi] of a parameter AUTOTUNE changed in the window (omitted when it
 * did not change or no call said it). */
static void add_range(cJSON *o, const char *key, double lo, double hi)
{
	cJSON *a;

	if (!(lo > 0 && hi > lo))
		return;
	a = cJSON_AddArrayToObject(o, key);
	cJSON_AddItemToArray(a, tfd_json_num(lo));
	cJSON_AddItemToArray(a, tfd_json_num(hi));
}

/* The ops of a map's function by type: self time and share of its ops'
 * time, the most first. */
static cJSON *fn_ops_json(const struct tfd_stage *s)
{
	cJSON *a = cJSON_CreateArray();
	double all = tfd_fn_ops_time(s);

	for (size_t i = 0; i < s->nfn_ops; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "type", s->fn_ops[i].type);
		cJSON_AddStringToObject(o, "name", s->fn_ops[i].name);
		add_ns(o, "self_ns", s->fn_ops[i].self_ns);
		tfd_json_add_num(o, "share", all > 0 ? r4((double)s->fn_ops[i].self_ns / all) : 0);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *stage_json(const struct tfd_pipeline *p, size_t idx)
{
	const struct tfd_stage *s = &p->stages[idx];
	cJSON *o = cJSON_CreateObject();

	tfd_json_add_num(o, "index", (double)idx);
	cJSON_AddStringToObject(o, "name", s->name);
	cJSON_AddStringToObject(o, "family", s->family);
	cJSON_AddStringToObject(o, "long_name", s->long_name);
	tfd_json_add_num(o, "parent", s->parent);
	tfd_json_add_num(o, "depth", s->depth);
	cJSON_AddBoolToObject(o, "async", s->is_async);
	tfd_json_add_num(o, "iterators", (double)s->niterators);
	tfd_json_add_num(o, "calls", (double)s->calls_all);
	add_ns(o, "total_ns", s->total_all_ns);
	add_ns(o, "self_ns", s->self_all_ns);
	tfd_json_add_num(o, "analyzed_calls", (double)s->calls);
	add_ns(o, "analyzed_self_ns", s->self_ns);
	add_ns(o, "blocking_ns", s->blocking_ns);
	tfd_json_add_num(o, "blocking_share", r4(s->blocking_share));
	cJSON_AddBoolToObject(o, "critical", s->on_critical_path);
	cJSON_AddBoolToObject(o, "bottleneck", s->is_bottleneck);
	if (s->segment >= 0)
		tfd_json_add_num(o, "segment", s->segment);
	else
		cJSON_AddNullToObject(o, "segment");
	tfd_json_add_num(o, "window_calls", (double)s->window_calls);
	add_ns(o, "work_ns", s->work_ns);
	tfd_json_add_num(o, "work_per_call_ns",
			 s->window_calls ? round((double)s->work_ns / (double)s->window_calls) : 0);
	if (s->fn_calls) {
		tfd_json_add_num(o, "function_calls", (double)s->fn_calls);
		add_ns(o, "function_work_ns", s->fn_work_ns);
		if (s->fn_p50_ns > 0) {
			add_ns(o, "function_call_p50_ns", s->fn_p50_ns);
			tfd_json_add_num(o, "function_uneven_share", r4(s->fn_uneven_share));
		}
	}
	if (s->nfn_ops) {
		double workers = 0, eff;
		bool python;

		eff = tfd_stage_effective_parallelism(p, (int)idx, &workers, &python);

		cJSON_AddItemToObject(o, "function_ops", fn_ops_json(s));
		if (s->fn_ops_coverage > 0) /* an async map: its function calls' work */
			tfd_json_add_num(o, "function_ops_coverage", r4(s->fn_ops_coverage));
		else
			cJSON_AddNullToObject(o, "function_ops_coverage");
		if (isnan(eff))
			cJSON_AddNullToObject(o, "effective_parallelism");
		else
			tfd_json_add_num(o, "effective_parallelism", round(eff * 100) / 100);
	}
	if (s->sample && s->sample->sig->nparams) {
		cJSON *pp = cJSON_AddObjectToObject(o, "params");

		for (uint16_t i = 0; i < s->sample->sig->nparams; i++)
			cJSON_AddStringToObject(pp, s->sample->sig->params[i].key,
						s->sample->sig->params[i].val);
	}
	return o;
}

static cJSON *sureness_json(const struct tfd_sureness *c)
{
	cJSON *o = cJSON_CreateObject(), *r = cJSON_AddArrayToObject(o, "reasons");
	const char *p = c->reasons;

	cJSON_AddStringToObject(o, "level", tfd_confidence_name(c->level));
	while (*p) {
		const char *e = strstr(p, "; ");
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char buf[sizeof(c->reasons)];

		snprintf(buf, sizeof(buf), "%.*s", (int)n, p);
		cJSON_AddItemToArray(r, cJSON_CreateString(buf));
		p += n;
		if (*p)
			p += 2;
	}
	return o;
}

/* a rate or capacity: null when unknown or unbounded */
static cJSON *rate_json(double v)
{
	return isfinite(v) ? tfd_json_num(round(v * 10) / 10) : cJSON_CreateNull();
}

static const char *const seg_kinds[] = {"consumer", "input", "function"};

static cJSON *capacity_json(const struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;
	cJSON *o = cJSON_CreateObject(), *segs;

	cJSON_AddBoolToObject(o, "valid", cp->valid);
	if (!cp->valid)
		return o;
	add_ns(o, "window_ns", cp->window_ns);
	add_ns(o, "pause_ns", cp->pause_ns);
	tfd_json_add_num(o, "pauses", cp->npauses);
	tfd_json_add_num(o, "root_elements", (double)cp->root_elements);
	cJSON_AddItemToObject(o, "throughput", rate_json(cp->throughput));
	cJSON_AddItemToObject(o, "demand", rate_json(cp->demand));
	cJSON_AddItemToObject(o, "model_throughput", rate_json(cp->model_throughput));
	if (cp->limiter >= 0)
		tfd_json_add_num(o, "limiter", cp->limiter);
	else
		cJSON_AddNullToObject(o, "limiter");
	if (cp->runner_up >= 0)
		tfd_json_add_num(o, "runner_up", cp->runner_up);
	else
		cJSON_AddNullToObject(o, "runner_up");
	cJSON_AddItemToObject(o, "margin", rate_json(cp->margin));
	cJSON_AddBoolToObject(o, "inferred", cp->inferred);
	cJSON_AddBoolToObject(o, "step_limits", cp->step_limits);
	cJSON_AddBoolToObject(o, "demand_from_steps", cp->demand_from_steps);
	cJSON_AddBoolToObject(o, "views_disagree", p->bottleneck != p->latency_bottleneck);
	cJSON_AddStringToObject(o, "evidence", cp->evidence);
	tfd_json_add_num(o, "explained", r4(cp->explained));
	cJSON_AddBoolToObject(o, "unexplained", cp->unexplained);
	if (cp->python_side_by_side || cp->python_take_turns)
		cJSON_AddStringToObject(o, "python_calls",
					cp->python_side_by_side ? "side_by_side" : "take_turns");
	else
		cJSON_AddNullToObject(o, "python_calls");
	if (cp->cpu_budget > 0) {
		cJSON *u = cJSON_AddObjectToObject(o, "cpu");

		tfd_json_add_num(u, "budget", cp->cpu_budget);
		tfd_json_add_num(u, "work_per_root_element_ns", round(cp->cpu_ns));
		tfd_json_add_num(u, "step_per_root_element_ns", round(cp->cpu_step_ns));
		cJSON_AddItemToObject(u, "capacity", rate_json(cp->cpu_rate));
		cJSON_AddBoolToObject(u, "limits", tfd_cores_limit(p));
	} else {
		cJSON_AddNullToObject(o, "cpu");
	}
	segs = cJSON_AddArrayToObject(o, "segments");
	for (size_t i = 0; i < p->nsegments; i++) {
		const struct tfd_segment *g = &p->segments[i];
		cJSON *x = cJSON_CreateObject();

		cJSON_AddStringToObject(x, "kind", seg_kinds[g->kind]);
		if (g->owner >= 0)
			tfd_json_add_num(x, "owner", g->owner);
		else
			cJSON_AddNullToObject(x, "owner");
		if (g->top_stage >= 0)
			tfd_json_add_num(x, "top_stage", g->top_stage);
		else
			cJSON_AddNullToObject(x, "top_stage");
		tfd_json_add_num(x, "parallelism", g->parallelism);
		cJSON_AddBoolToObject(x, "parallelism_observed", g->parallelism_observed);
		add_range(x, "parallelism_range", g->par_lo, g->par_hi);
		add_range(x, "cycle_length_range", g->cyc_lo, g->cyc_hi);
		add_range(x, "buffer_limit_range", g->buf_lo, g->buf_hi);
		tfd_json_add_num(x, "threads", (double)g->nthreads);
		add_ns(x, "busy_ns", g->busy_ns);
		tfd_json_add_num(x, "work_per_root_element_ns", round(g->work_per_root_ns));
		tfd_json_add_num(x, "utilization", r4(g->utilization));
		cJSON_AddItemToObject(x, "capacity", rate_json(g->capacity));
		cJSON_AddBoolToObject(x, "measured", g->known);
		cJSON_AddItemToArray(segs, x);
	}
	return o;
}

static cJSON *pipeline_json(const struct tfd_host_result *h, const struct tfd_pipeline *p)
{
	cJSON *o = cJSON_CreateObject(), *lat, *links, *stages, *cp;

	cJSON_AddStringToObject(o, "name", p->name);
	cJSON_AddStringToObject(o, "type", p->is_device ? "device" : "host");
	if (p->repeat_of1)
		cJSON_AddStringToObject(o, "repeats", h->pipelines[p->repeat_of1 - 1].name);
	else
		cJSON_AddNullToObject(o, "repeats");
	add_id(o, "root_id", p->root_id);
	cJSON_AddStringToObject(o, "root", p->stages[0].long_name);
	cJSON_AddBoolToObject(o, "outside_steps", p->outside_steps);
	tfd_json_add_num(o, "calls", (double)p->ncalls);
	tfd_json_add_num(o, "slow_calls", (double)p->nslow);
	lat = cJSON_AddObjectToObject(o, "latency_ns");
	add_ns(lat, "min", p->min_ns);
	add_ns(lat, "p50", p->p50_ns);
	add_ns(lat, "avg", p->avg_ns);
	add_ns(lat, "p95", p->p95_ns);
	add_ns(lat, "max", p->max_ns);
	tfd_json_add_num(o, "warmup_calls", (double)p->nwarmup);
	tfd_json_add_num(o, "analyzed_calls", (double)p->nanalyzed);
	add_ns(o, "analyzed_ns", p->analyzed_ns);
	cJSON_AddStringToObject(o, "analyzed", p->analyzed_slow_only ? "slow" : "all");
	links = cJSON_AddObjectToObject(o, "linking");
	for (int k = 0; k < TFD_LINK__COUNT; k++)
		tfd_json_add_num(links, link_keys[k], (double)p->links[k]);
	if (p->bottleneck >= 0) {
		cJSON *bn = cJSON_AddObjectToObject(o, "bottleneck");
		const struct tfd_stage *s = &p->stages[p->bottleneck];

		tfd_json_add_num(bn, "stage", p->bottleneck);
		cJSON_AddStringToObject(bn, "name", s->name);
		cJSON_AddStringToObject(bn, "family", s->family);
		cJSON_AddStringToObject(bn, "long_name", s->long_name);
		add_ns(bn, "blocking_ns", s->blocking_ns);
		tfd_json_add_num(bn, "blocking_share", r4(s->blocking_share));
	} else {
		cJSON_AddNullToObject(o, "bottleneck");
	}
	if (p->slowest_bottleneck >= 0)
		cJSON_AddStringToObject(o, "slowest_call_bottleneck",
					p->stages[p->slowest_bottleneck].name);
	cp = cJSON_AddArrayToObject(o, "critical_path");
	for (size_t i = 0; i < p->ncritpath; i++)
		cJSON_AddItemToArray(cp, tfd_json_num(p->critpath[i]));
	if (p->latency_bottleneck >= 0)
		tfd_json_add_num(o, "latency_bottleneck", p->latency_bottleneck);
	else
		cJSON_AddNullToObject(o, "latency_bottleneck");
	cJSON_AddItemToObject(o, "capacity", capacity_json(p));
	cJSON_AddItemToObject(o, "confidence", sureness_json(&p->confidence));
	stages = cJSON_AddArrayToObject(o, "stages");
	for (size_t i = 0; i < p->nstages; i++)
		cJSON_AddItemToArray(stages, stage_json(p, i));
	return o;
}

static cJSON *findings_json(const struct tfd_findings *fs)
{
	cJSON *arr = cJSON_CreateArray();

	for (size_t i = 0; fs && i < fs->n; i++) {
		const struct tfd_finding *x = &fs->v[i];
		cJSON *o = cJSON_CreateObject(), *e;

		cJSON_AddStringToObject(o, "rule", x->rule_id);
		cJSON_AddStringToObject(o, "class", x->class_name);
		cJSON_AddStringToObject(o, "severity", tfd_severity_name(x->severity));
		cJSON_AddStringToObject(o, "confidence", tfd_confidence_name(x->confidence));
		cJSON_AddStringToObject(o, "title", x->title);
		cJSON_AddStringToObject(o, "host", x->host);
		cJSON_AddStringToObject(o, "pipeline", x->pipeline);
		cJSON_AddStringToObject(o, "stage", x->stage);
		cJSON_AddStringToObject(o, "stage_long_name", x->stage_long_name);
		cJSON_AddStringToObject(o, "suggestion", x->suggestion);
		cJSON_AddStringToObject(o, "code", x->code);
		cJSON_AddStringToObject(o, "doc", x->doc);
		e = cJSON_AddObjectToObject(o, "estimate");
		cJSON_AddStringToObject(e, "model", x->estimate.model);
		cJSON_AddBoolToObject(e, "known", x->estimate.known);
		if (x->estimate.known) {
			cJSON_AddStringToObject(e, "basis", x->estimate.basis);
			add_ns(e, "latency_ns", x->estimate.latency_ns);
			add_ns(e, "new_latency_ns", x->estimate.new_latency_ns);
			if (x->estimate.speedup > 0)
				tfd_json_add_num(e, "speedup", r4(x->estimate.speedup));
			else
				cJSON_AddNullToObject(e, "speedup"); /* fully hidden */
			if (x->estimate.step_speedup > 0)
				tfd_json_add_num(e, "step_speedup", r4(x->estimate.step_speedup));
			else
				cJSON_AddNullToObject(e, "step_speedup");
			if (isnan(x->estimate.input_percent_after))
				cJSON_AddNullToObject(e, "input_percent_after");
			else
				tfd_json_add_num(e, "input_percent_after",
						 round(x->estimate.input_percent_after * 100) /
						     100);
			if (strcmp(x->estimate.basis, "capacity") == 0) {
				cJSON_AddStringToObject(e, "of", x->estimate.of);
				tfd_json_add_num(e, "factor", x->estimate.factor);
				cJSON_AddItemToObject(e, "throughput",
						      rate_json(x->estimate.throughput));
				cJSON_AddItemToObject(e, "new_throughput",
						      rate_json(x->estimate.new_throughput));
				cJSON_AddBoolToObject(e, "capped_by_demand",
						      x->estimate.capped_by_demand);
				cJSON_AddBoolToObject(e, "capped_by_cores",
						      x->estimate.capped_by_cores);
				cJSON_AddBoolToObject(e, "capped_by_pool",
						      x->estimate.capped_by_pool);
				cJSON_AddBoolToObject(e, "misses_limit", x->estimate.misses_limit);
				cJSON_AddBoolToObject(e, "step_limits_already",
						      x->estimate.input_bound_by_demand);
			}
		}
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

static cJSON *pct_json(double v)
{
	return isnan(v) ? cJSON_CreateNull() : tfd_json_num(round(v * 100) / 100);
}

static cJSON *one_share(const struct tfd_share *s, bool device)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "percent", pct_json(s->pct));
	tfd_json_add_num(o, "steps", (double)s->nsteps);
	add_ns(o, "wait_ns", s->wait_ns);
	add_ns(o, "iterator_create_ns", s->create_ns);
	add_ns(o, "gil_wait_ns", s->gil_ns);
	if (device)
		add_ns(o, "host_to_device_ns", s->h2d_ns);
	add_ns(o, "step_ns", s->step_ns);
	return o;
}

/* What the device planes held and where the verdict's step time went, by
 * TensorFlow's kinds (each instant owned by one). */
static cJSON *device_json(const struct tfd_host_result *h)
{
	static const char *const keys[TFD_DEV__COUNT] = {
	    "host_to_device_ns", "collectives_ns",    "host_wait_ns",	    "device_to_device_ns",
	    "device_to_host_ns", "device_compute_ns", "device_wait_host_ns"};
	cJSON *o = cJSON_CreateObject(), *bk;

	cJSON_AddStringToObject(o, "kind", tfd_device_word(&h->host->dev));
	tfd_json_add_num(o, "planes", (double)h->host->dev.nplanes);
	uint64_t spans = 0;

	for (int k = 0; k < TFD_DEV__COUNT; k++)
		spans += h->host->dev.kind_n[k];
	tfd_json_add_num(o, "spans", (double)spans);
	tfd_json_add_num(o, "host_to_device_copies", (double)h->host->dev.kind_n[TFD_DEV_H2D]);
	add_ns(o, "host_to_device_copy_ns", h->host->dev.kind_ns[TFD_DEV_H2D]);
	if (h->h2d_bytes_per_step > 0)
		tfd_json_add_num(o, "host_to_device_bytes_per_step", round(h->h2d_bytes_per_step));
	else
		cJSON_AddNullToObject(o, "host_to_device_bytes_per_step");
	bk = cJSON_AddObjectToObject(o, "breakdown");
	for (int k = 0; k < TFD_DEV__COUNT; k++)
		add_ns(bk, keys[k], h->dev_ns[k]);
	add_ns(bk, "other_ns", tfd_host_other_ns(h));
	return o;
}

/* Every step's time and waiting, in time order; long captures are cut into
 * at most 500 points of consecutive steps (sums), as a chart needs. */
static cJSON *per_step_json(const struct tfd_host_result *h)
{
	cJSON *o = cJSON_CreateObject(), *pts;
	const struct tfd_step_points *sp = &h->step_points;

	tfd_json_add_num(o, "steps_per_point", (double)(sp->n ? sp->per : 1));
	pts = cJSON_AddArrayToObject(o, "points");
	for (size_t i = 0; i < sp->n; i++) {
		cJSON *p = cJSON_CreateObject();

		tfd_json_add_num(p, "first_step", (double)(i * sp->per));
		add_ns(p, "step_ns", sp->step_ns[i]);
		add_ns(p, "wait_ns", sp->wait_ns[i]);
		if (sp->h2d_ns) {
			add_ns(p, "host_to_device_ns", sp->h2d_ns[i]);
			add_ns(p, "device_compute_ns", sp->compute_ns[i]);
		}
		cJSON_AddItemToArray(pts, p);
	}
	return o;
}

/* the input-bound share by TensorFlow's convention, the steady state and
 * every step, and the per-step distribution */
static cJSON *share_json(const struct tfd_host_result *h)
{
	cJSON *o = cJSON_CreateObject(), *st, *ps;

	cJSON_AddStringToObject(o, "verdict_basis", h->verdict_basis);
	cJSON_AddItemToObject(o, "tf_convention", one_share(&h->tf, h->has_device));
	st = one_share(&h->steady, h->has_device);
	tfd_json_add_num(st, "warmup_steps", (double)h->nwarmup_steps);
	add_ns(st, "warmup_wait_ns", h->warmup_wait_ns);
	cJSON_AddItemToObject(o, "steady_state", st);
	cJSON_AddItemToObject(o, "all_steps", one_share(&h->all, h->has_device));
	cJSON_AddBoolToObject(o, "warmup_inflated", h->warmup_inflated);
	if (h->gaps_counted) {
		cJSON *g = cJSON_AddObjectToObject(o, "between_steps");

		add_ns(g, "wait_ns", h->gap_wait_ns);
		cJSON_AddItemToObject(g, "markers_only_percent", pct_json(h->markers_pct));
	} else {
		cJSON_AddNullToObject(o, "between_steps");
	}
	cJSON_AddItemToObject(o, "per_step", per_step_json(h));
	ps = cJSON_AddObjectToObject(o, "per_step_percent");
	cJSON_AddItemToObject(ps, "min", pct_json(h->step_pct_min));
	cJSON_AddItemToObject(ps, "median", pct_json(h->step_pct_p50));
	cJSON_AddItemToObject(ps, "p90", pct_json(h->step_pct_p90));
	cJSON_AddItemToObject(ps, "max", pct_json(h->step_pct_max));
	return o;
}

/* The stragglers (straggler.c), the slowest first, at most 100. */
static cJSON *stragglers_json(const struct tfd_analysis *a)
{
	static const char *const why[] = {"input", "device", "step"};
	cJSON *arr = cJSON_CreateArray();

	for (size_t k = 0; k < a->nstragglers && k < 100; k++) {
		const struct tfd_straggler *s = &a->stragglers[k];
		const struct tfd_host_result *h = &a->hosts[s->host];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "host", h->host->name);
		tfd_json_add_num(o, "ratio", r4(s->ratio));
		add_ns(o, "mean_step_ns", (int64_t)tfd_host_mean_step_ns(h));
		add_ns(o, "p90_step_ns", h->step_p90_ns);
		add_ns(o, "median_host_step_ns", (int64_t)s->peers_step_ns);
		cJSON_AddStringToObject(o, "why", why[tfd_straggler_why(a, s)]);
		cJSON_AddBoolToObject(o, "synchronous", s->synchronous);
		cJSON_AddItemToArray(arr, o);
	}
	return arr;
}

/* The summary's part about the first (most input-bound) host. */
static void summary_host_json(const struct tfd_analysis *a, cJSON *sum)
{
	const struct tfd_host_result *f = &a->hosts[0];
	char hint[512];

	cJSON_AddStringToObject(sum, "host", f->host->name);
	cJSON_AddItemToObject(sum, "stragglers", stragglers_json(a));
	/* a capture too short to judge: what to profile instead */
	if (tfd_analysis_too_short(a, hint, sizeof(hint))) {
		cJSON *ts = cJSON_AddObjectToObject(sum, "too_short");

		tfd_json_add_num(ts, "steps", (double)f->all.nsteps);
		tfd_json_add_num(ts, "want_steps", TFD_WANT_STEPS);
		cJSON_AddStringToObject(ts, "hint", hint);
	} else {
		cJSON_AddNullToObject(sum, "too_short");
	}
	/* which part of the input time is larger, with device activity:
	 * a bottleneck below is then only the host side's */
	if (f->has_device && !isnan(f->input_pct))
		cJSON_AddStringToObject(sum, "input_dominant",
					tfd_h2d_dominates(f) ? "host_to_device" : "host_wait");
	else
		cJSON_AddNullToObject(sum, "input_dominant");
	/* the loop makes a new iterator each step: that holds it up; the
	 * bottleneck below is then the slowest stage within one */
	cJSON_AddBoolToObject(sum, "new_iterator_each_step", tfd_iterator_per_step(f));
	if (f->focus >= 0) {
		const struct tfd_pipeline *p = &f->pipelines[f->focus];

		cJSON_AddStringToObject(sum, "pipeline", p->name);
		/* a host that is not input-bound has a slowest stage,
		 * not a bottleneck */
		if (p->bottleneck >= 0 && tfd_host_has_bottleneck(f)) {
			cJSON_AddStringToObject(sum, "bottleneck", p->stages[p->bottleneck].name);
			cJSON_AddStringToObject(sum, "bottleneck_long_name",
						p->stages[p->bottleneck].long_name);
		} else if (p->bottleneck >= 0) {
			cJSON_AddNullToObject(sum, "bottleneck");
			cJSON_AddNullToObject(sum, "bottleneck_long_name");
		}
		if (p->bottleneck >= 0) {
			cJSON_AddStringToObject(sum, "slowest_stage",
						p->stages[p->bottleneck].name);
			cJSON_AddStringToObject(sum, "slowest_stage_long_name",
						p->stages[p->bottleneck].long_name);
		}
		/* what its function spends most in, for a map-like
		 * bottleneck whose op events were captured */
		if (p->bottleneck >= 0 && tfd_host_has_bottleneck(f) &&
		    p->stages[p->bottleneck].nfn_ops) {
			const char *why;
			enum tfd_confidence c =
			    tfd_top_op_confidence(&p->stages[p->bottleneck], &why);

			cJSON_AddStringToObject(sum, "bottleneck_top_op",
						p->stages[p->bottleneck].fn_ops[0].type);
			cJSON_AddStringToObject(sum, "bottleneck_top_op_confidence",
						tfd_confidence_name(c));
		} else {
			cJSON_AddNullToObject(sum, "bottleneck_top_op");
			cJSON_AddNullToObject(sum, "bottleneck_top_op_confidence");
		}
	}
}

/* A host's pipelines up to this many are nodes of its tree; more, each
 * is a part of its own (laid out again from its compact text: a fleet's
 * one pipeline a host printed so had taken a sixth more instructions). */
#define PIPELINE_NODES_MAX 16

/* That bound, or TFDOCTOR_JSON_NODES's (the tests print a report both
 * ways and compare). */
static size_t pipeline_nodes_max(void)
{
	const char *v = getenv("TFDOCTOR_JSON_NODES");
	char *end;
	unsigned long long n = v && *v ? strtoull(v, &end, 10) : 0;

	return v && *v && !*end ? (size_t)n : PIPELINE_NODES_MAX;
}

/* Host i of a (its tree host's, being made); its pipelines nodes of its
 * tree up to nodes_max of them, else parts. */
static cJSON *host_json(const struct tfd_analysis *a, size_t i, struct tfd_json_tree *host,
			size_t nodes_max, struct tfd_buf *text)
{
	const struct tfd_host_result *h = &a->hosts[i];
	cJSON *o = cJSON_CreateObject(), *ps;

	cJSON_AddStringToObject(o, "host", h->host->name);
	cJSON_AddStringToObject(o, "file", h->host->path);
	tfd_json_add_num(o, "rank", (double)i);
	if (isnan(h->input_pct))
		cJSON_AddNullToObject(o, "input_percent");
	else
		tfd_json_add_num(o, "input_percent", round(h->input_pct * 100) / 100);
	cJSON_AddItemToObject(o, "host_wait_percent", pct_json(tfd_host_wait_pct(h)));
	cJSON_AddItemToObject(o, "host_to_device_percent", pct_json(tfd_h2d_pct(h)));
	cJSON_AddStringToObject(o, "input_bound", tfd_bound_name(h->bound));
	cJSON_AddStringToObject(o, "input_basis", h->input_basis);
	cJSON_AddItemToObject(o, "confidence", sureness_json(&h->confidence));
	add_ns(o, "wait_ns", h->wait_ns);
	add_ns(o, "iterator_create_ns", h->create_ns);
	add_ns(o, "gil_wait_ns", h->gil_ns);
	if (h->has_device)
		add_ns(o, "host_to_device_ns", h->h2d_ns);
	add_ns(o, "step_ns", h->step_ns);
	tfd_json_add_num(o, "steps", (double)h->nsteps);
	add_ns(o, "max_latency_ns", h->max_latency_ns);
	if (h->loop_in_function) {
		cJSON *lp = cJSON_AddObjectToObject(o, "loop_in_function");

		add_ns(lp, "startup_ns", h->loop_startup_ns);
		add_ns(lp, "steps_ns", h->loop_steps_ns);
	} else {
		cJSON_AddNullToObject(o, "loop_in_function");
	}
	tfd_json_add_num(o, "iterators_per_step", round(tfd_iterators_per_step(h) * 1000) / 1000);
	add_ns(o, "steps_span_ns", h->steps_span_ns);
	add_ns(o, "between_steps_ns", h->between_ns);
	tfd_json_add_num(o, "between_steps", (double)h->nbetween);
	add_ns(o, "between_steps_pass_ns", h->between_pass_ns);
	add_ns(o, "between_steps_wait_ns", h->between_wait_ns);
	add_ns(o, "between_steps_create_ns", h->between_create_ns);
	add_ns(o, "between_steps_session_ns", h->between_session_ns);
	if (strcmp(h->input_basis, "steps") == 0)
		cJSON_AddItemToObject(o, "input_share", share_json(h));
	if (h->has_device)
		cJSON_AddItemToObject(o, "device", device_json(h));
	if (h->focus >= 0)
		cJSON_AddStringToObject(o, "focus_pipeline", h->pipelines[h->focus].name);
	ps = cJSON_AddArrayToObject(o, "pipelines");
	for (size_t p = 0; p < h->npipelines; p++) {
		struct tfd_json_tree t;

		if (h->npipelines <= nodes_max) {
			cJSON_AddItemToArray(ps, pipeline_json(h, &h->pipelines[p]));
			continue;
		}
		tfd_json_part_begin(&t);
		cJSON_AddItemToArray(
		    ps, tfd_json_part_end(&t, pipeline_json(h, &h->pipelines[p]), host, text));
	}
	return o;
}

/* A piece of the document's compact text into b: as it is (line), or
 * laid out from where the last piece left off. */
static void emit(bool line, struct tfd_json_pp *pp, struct tfd_buf *b, const char *piece)
{
	if (line)
		tfd_buf_puts(b, piece);
	else
		tfd_json_pretty_feed(pp, b, piece);
}

/* A value of the document into b, its tree's: compact (line), or laid out
 * where the last piece left off. */
static void emit_tree(bool line, const struct tfd_json_pp *pp, struct tfd_buf *b, const cJSON *item)
{
	if (!line)
		tfd_json_pretty_at(b, item, pp->depth);
	else if (!tfd_json_print(b, item)) /* (its nodes are all printable) */
		abort();
}

/* The document written piece by piece, as its tree would print: the
 * members before the hosts; each host, made and printed and gone (a
 * fleet's report had held every host's nodes, then its text, to the
 * end; b may write out what it holds after each); the notes. */
static void render_json(const struct tfd_analysis *a, const struct tfd_findings *fs, bool line,
			struct tfd_buf *b)
{
	cJSON *root, *diags, *sum;
	struct tfd_json_tree tree;
	struct tfd_buf text;
	struct tfd_json_pp pp = {0, 0};
	size_t nodes_max = pipeline_nodes_max();

	tfd_buf_init(&text);
	tfd_json_tree_begin(&tree);
	root = tree.root = cJSON_CreateObject();
	tfd_json_add_num(root, "schema_version", TFD_JSON_SCHEMA_VERSION);
	cJSON_AddStringToObject(root, "tool", "tfdoctor");
	if (a->run)
		cJSON_AddStringToObject(root, "run", a->run);
	sum = cJSON_AddObjectToObject(root, "summary");
	cJSON_AddBoolToObject(sum, "tfdata_found", a->any_tfdata);
	cJSON_AddBoolToObject(sum, "loop_in_function", a->loop_in_function);
	cJSON_AddBoolToObject(sum, "input_bound", a->input_bound);
	if (a->nhosts)
		cJSON_AddStringToObject(sum, "verdict_confidence",
					tfd_confidence_name(a->hosts[0].confidence.level));
	if (a->nhosts)
		summary_host_json(a, sum);
	cJSON_AddItemToObject(root, "findings", findings_json(fs));
	tfd_json_tree_end();
	/* the root up to its last member, its closing brace gone (laid
	 * out, the brace's line too): then its hosts, one level in */
	emit_tree(line, &pp, b, root);
	b->len -= line ? 1 : 2;
	b->s[b->len] = '\0';
	pp.depth = 1;
	emit(line, &pp, b, ",\"hosts\":");
	tfd_json_tree_free(&tree, false);
	for (size_t i = 0; i < a->nhosts; i++) {
		cJSON *o;

		/* (a piece never ends inside "[]": the array opens with its
		 * first host) */
		tfd_json_tree_begin(&tree);
		o = host_json(a, i, &tree, nodes_max, &text);
		tfd_json_tree_end();
		emit(line, &pp, b, i ? "," : "[");
		emit_tree(line, &pp, b, o);
		tree.root = o;
		tfd_json_tree_free(&tree, true);
		tfd_buf_drain(b);
	}
	tfd_json_tree_begin(&tree);
	diags = tree.root = cJSON_CreateArray();
	for (size_t i = 0; i < a->ndiags; i++) {
		cJSON *d = cJSON_CreateObject();

		cJSON_AddStringToObject(d, "host", a->diags[i].host);
		cJSON_AddStringToObject(d, "message", a->diags[i].msg);
		cJSON_AddItemToArray(diags, d);
	}
	tfd_json_tree_end();
	emit(line, &pp, b, a->nhosts ? "],\"notes\":" : "[],\"notes\":");
	emit_tree(line, &pp, b, diags);
	emit(line, &pp, b, "}");
	tfd_buf_puts(b, "\n");
	tfd_json_tree_free(&tree, false);
	tfd_buf_release(&text);
}

void tfd_render_json(const struct tfd_analysis *a, const struct tfd_findings *fs, struct tfd_buf *b)
{
	render_json(a, fs, false, b);
}

void tfd_render_json_line(const struct tfd_analysis *a, const struct tfd_findings *fs,
			  struct tfd_buf *b)
{
	render_json(a, fs, true, b);
}
