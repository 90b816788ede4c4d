/* diff.c - the reports of `tfdoctor diff` (struct tfd_diff): text for the
 * terminal, JSON for automation (docs/json.md, "kind": "diff") and
 * Markdown for a pull request or a chat. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tfd/diff.h"
#include "tfd/jsonmem.h"
#include "tfd/render.h"

/* A name from the capture, safe on one line of the report (buf.h). */
#define N(s) tfd_name_on_line(s)

static const char *band(double pct)
{
	enum tfd_bound b = tfd_bound_of(pct);

	return b == TFD_BOUND_HIGH	 ? "HIGHLY input-bound"
	       : b == TFD_BOUND_MODERATE ? "MODERATELY input-bound"
	       : b == TFD_BOUND_NOT	 ? "NOT input-bound"
					 : "input share unknown";
}

static const char *pct_text(double pct, char *buf, size_t len)
{
	if (isnan(pct))
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f%%", pct);
	return buf;
}

static const char *step_text(int64_t ns, char *buf, size_t len)
{
	return ns > 0 ? tfd_fmt_ns(ns, buf, len) : (snprintf(buf, len, "n/a"), buf);
}

static const char *rate_text(double r, char *buf, size_t len)
{
	if (isinf(r))
		snprintf(buf, len, "unbounded");
	else if (r > 0)
		snprintf(buf, len, "%.0f/s", r);
	else
		snprintf(buf, len, "?");
	return buf;
}

/* Whether the side's loop made a new iterator each step (TFD-H09): that,
 * not its focus pipeline's stage, was the bottleneck. */
static bool renewed(const struct tfd_diff_side *s)
{
	return s->bn_name && tfd_iterator_per_step(s->host);
}

static const char *const RENEWED = "a new iterator each step";

/* "ParallelMapV2 (inside: Transpose)", "a new iterator each step" or "none" */
static void bn_text(const struct tfd_diff_side *s, struct tfd_buf *b)
{
	if (!s->bn_name) {
		tfd_buf_puts(b, "none");
		return;
	}
	if (renewed(s)) {
		tfd_buf_puts(b, RENEWED);
		return;
	}
	tfd_buf_puts(b, N(s->bn_name));
	if (s->bn_top_op)
		tfd_buf_printf(b, " (inside: %s)", N(s->bn_top_op));
}

/* Whether a finding of the first run carried a step estimate. */
static bool has_estimate(const struct tfd_finding *was)
{
	return was && was->estimate.known && was->estimate.step_speedup > 0;
}

/* The resolved findings that carried an estimate. */
static size_t resolved_estimates(const struct tfd_diff *d)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nfindings; i++)
		n += d->findings[i].status == TFD_DIFF_RESOLVED && has_estimate(d->findings[i].was);
	return n;
}

/* "it estimated the step 2.00x faster; measured 1.82x (the estimate was 10%
 * high)" for a finding of the first run that carried an estimate and is
 * gone in the second (its change was made, or another's removed it). With
 * several such findings the step's change is no one's measure: it is said
 * without an error. */
static bool estimate_text(const struct tfd_diff *d, const struct tfd_finding *was,
			  struct tfd_buf *b)
{
	double est = was ? was->estimate.step_speedup : 0, got = d->step_speedup;
	size_t n = resolved_estimates(d);
	/* the stretches between the steps (TFD-H12) are measured by the time
	 * a step with them, not by the steps' own */
	bool gaps = was && strcmp(was->class_name, "between_steps") == 0;

	if (!has_estimate(was))
		return false;
	if (gaps)
		got = d->side[0].span_step_ns > 0 && d->side[1].span_step_ns > 0
			  ? (double)d->side[0].span_step_ns / (double)d->side[1].span_step_ns
			  : 0;
	tfd_buf_printf(b, "it estimated %s %.2fx faster",
		       gaps ? "a step with the stretches between them" : "the step", est);
	if (got > 0 && n > 1)
		tfd_buf_printf(b,
			       "; measured %.2fx with %zu estimates resolved at once (whose "
			       "change it measures is not known)",
			       got, n);
	else if (got > 0)
		tfd_buf_printf(b, "; measured %.2fx (the estimate was %.0f%% %s)", got,
			       fabs(est / got - 1) * 100, est >= got ? "high" : "low");
	return true;
}

/* What the reports call a diff row's stage: its label in the after
 * pipeline when it is there, else in the before one; a stage the change
 * renamed (a Map made a ParallelMapV2) by both ("Map -> ParallelMapV2"). */
static const char *row_label(const struct tfd_diff *d, const struct tfd_diff_stage *r, char *buf,
			     size_t len)
{
	if (r->after >= 0 && r->before >= 0 && d->side[0].pipeline && d->side[1].pipeline &&
	    strcmp(d->side[0].pipeline->stages[r->before].name,
		   d->side[1].pipeline->stages[r->after].name) != 0) {
		char was[256], now[256];

		snprintf(buf, len, "%s -> %s",
			 tfd_stage_label(d->side[0].pipeline, r->before, was, sizeof(was)),
			 tfd_stage_label(d->side[1].pipeline, r->after, now, sizeof(now)));
		return buf;
	}
	if (r->after >= 0 && d->side[1].pipeline)
		return tfd_stage_label(d->side[1].pipeline, r->after, buf, len);
	if (r->before >= 0 && d->side[0].pipeline)
		return tfd_stage_label(d->side[0].pipeline, r->before, buf, len);
	return r->name;
}

static void stages_text(const struct tfd_diff *d, struct tfd_buf *b)
{
	char c1[32] = "", c2[32] = "", lb[120];

	if (!d->nstages)
		return;
	tfd_buf_puts(b, "\nstages of the focus pipeline (capacity of the stage's segment, its "
			"utilization;\n[B] the bottleneck):\n");
	tfd_buf_printf(b, "  %-40s %-20s %s\n", "stage", "before", "after");
	for (size_t i = 0; i < d->nstages; i++) {
		const struct tfd_diff_stage *r = &d->stages[i];
		char side[2][96];

		for (int k = 0; k < 2; k++) {
			int at = k ? r->after : r->before;
			double u = fmin(fmax(100 * r->util[k], 0), 999);

			if (at < 0)
				snprintf(side[k], sizeof(side[k]), "-");
			else if (r->cap[k] > 0)
				snprintf(side[k], sizeof(side[k]), "%s %3.0f%%%s",
					 rate_text(r->cap[k], k ? c2 : c1, 32), u,
					 r->bottleneck[k] ? " [B]" : "");
			else
				snprintf(side[k], sizeof(side[k]), "?%s",
					 r->bottleneck[k] ? " [B]" : "");
		}
		tfd_buf_printf(b, "  %-40s %-20s %s\n", N(row_label(d, r, lb, sizeof(lb))), side[0],
			       side[1]);
	}
}

static void findings_text(const struct tfd_diff *d, struct tfd_buf *b)
{
	if (!d->nfindings) {
		tfd_buf_puts(b, "\nfindings: none either time\n");
		return;
	}
	tfd_buf_puts(b, "\nfindings:\n");
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct tfd_diff_finding *x = &d->findings[i];
		struct tfd_buf e;
		char lb[120];

		tfd_buf_printf(b, "  %-9s [%s] %s %s", tfd_diff_status_name(x->status),
			       tfd_severity_name(x->f->severity), x->f->rule_id, x->f->title);
		if (x->f->stage && *x->f->stage)
			tfd_buf_printf(b, " (%s)", N(tfd_finding_stage(x->f, lb, sizeof(lb))));
		tfd_buf_puts(b, "\n");
		tfd_buf_init(&e);
		if (x->status == TFD_DIFF_RESOLVED && estimate_text(d, x->was, &e))
			tfd_buf_printf(b, "            %s\n", e.s);
		tfd_buf_release(&e);
	}
}

void tfd_render_diff_text(const struct tfd_diff *d, const char *const names[2], struct tfd_buf *b)
{
	const struct tfd_diff_side *s0 = &d->side[0], *s1 = &d->side[1];
	char t0[32], t1[32], p0[16], p1[16];

	tfd_buf_printf(b, "diff: %s -> %s\n", N(names[0]), N(names[1]));
	tfd_buf_printf(b, "  host         %s", N(s0->host->host->name));
	if (strcmp(s0->host->host->name, s1->host->host->name))
		tfd_buf_printf(b, " -> %s", N(s1->host->host->name));
	tfd_buf_printf(b, "\n  verdict      %s %s -> %s %s\n", band(s0->input_pct),
		       pct_text(s0->input_pct, p0, sizeof(p0)), band(s1->input_pct),
		       pct_text(s1->input_pct, p1, sizeof(p1)));
	tfd_buf_printf(b, "  step time    %s -> %s", step_text(s0->step_ns, t0, sizeof(t0)),
		       step_text(s1->step_ns, t1, sizeof(t1)));
	if (d->step_speedup > 0)
		tfd_buf_printf(b, " (%.2fx %s)",
			       d->step_speedup >= 1 ? d->step_speedup : 1 / d->step_speedup,
			       d->step_speedup >= 1 ? "faster" : "slower");
	if (d->between)
		tfd_buf_printf(b,
			       "\n  between      %s -> %s of the time from the first step to the "
			       "last (a step with them: %s -> %s)",
			       pct_text(s0->between_pct, p0, sizeof(p0)),
			       pct_text(s1->between_pct, p1, sizeof(p1)),
			       step_text(s0->span_step_ns, t0, sizeof(t0)),
			       step_text(s1->span_step_ns, t1, sizeof(t1)));
	tfd_buf_printf(b, "\n  rate         %s -> %s root elements\n",
		       rate_text(s0->throughput, t0, sizeof(t0)),
		       rate_text(s1->throughput, t1, sizeof(t1)));
	tfd_buf_puts(b, "  bottleneck   ");
	bn_text(s0, b);
	tfd_buf_puts(b, " -> ");
	bn_text(s1, b);
	tfd_buf_printf(b, " (%s)\n", tfd_diff_move_name(d->move));
	tfd_buf_printf(b, "  result       %s%s%s (margin %g points / %%)\n",
		       d->worse	   ? "WORSE"
		       : d->better ? "better"
				   : "no change beyond the margin",
		       d->why[0] ? ": " : "", d->why, d->margin);
	stages_text(d, b);
	findings_text(d, b);
}

/* ---- JSON ---- */

/* v rounded to 4 decimals (a stable document), null when not finite. */
static cJSON *num_or_null(double v)
{
	return isnan(v) || isinf(v) ? cJSON_CreateNull() : tfd_json_num(round(v * 1e4) / 1e4);
}

static cJSON *side_json(const struct tfd_diff_side *s, const char *path)
{
	cJSON *o = cJSON_CreateObject(), *bn;

	cJSON_AddStringToObject(o, "path", path);
	cJSON_AddStringToObject(o, "host", s->host->host->name);
	cJSON_AddStringToObject(o, "verdict", tfd_bound_name(tfd_bound_of(s->input_pct)));
	cJSON_AddItemToObject(o, "input_pct", num_or_null(s->input_pct));
	cJSON_AddItemToObject(
	    o, "step_ns", s->step_ns > 0 ? tfd_json_num((double)s->step_ns) : cJSON_CreateNull());
	tfd_json_add_num(o, "steps", (double)s->nsteps);
	cJSON_AddItemToObject(o, "between_steps_pct", num_or_null(s->between_pct));
	cJSON_AddItemToObject(o, "span_step_ns",
			      s->span_step_ns > 0 ? tfd_json_num((double)s->span_step_ns)
						  : cJSON_CreateNull());
	cJSON_AddItemToObject(o, "throughput",
			      s->throughput > 0 ? num_or_null(s->throughput) : cJSON_CreateNull());
	cJSON_AddStringToObject(o, "pipeline", s->pipeline ? s->pipeline->name : "");
	if (!s->bn_name) {
		cJSON_AddNullToObject(o, "bottleneck");
		return o;
	}
	bn = cJSON_AddObjectToObject(o, "bottleneck");
	cJSON_AddBoolToObject(bn, "new_iterator_each_step", renewed(s));
	cJSON_AddStringToObject(bn, "stage", s->bn_name);
	cJSON_AddStringToObject(bn, "path", s->bn_path);
	if (s->bn_top_op)
		cJSON_AddStringToObject(bn, "top_op", s->bn_top_op);
	else
		cJSON_AddNullToObject(bn, "top_op");
	return o;
}

static cJSON *stage_side(const struct tfd_diff_stage *r, int k)
{
	cJSON *o;

	if ((k ? r->after : r->before) < 0)
		return cJSON_CreateNull();
	o = cJSON_CreateObject();
	cJSON_AddItemToObject(o, "capacity",
			      r->cap[k] > 0 ? num_or_null(r->cap[k]) : cJSON_CreateNull());
	tfd_json_add_num(o, "utilization", round(r->util[k] * 1e4) / 1e4);
	tfd_json_add_num(o, "blocking_share", round(r->share[k] * 1e4) / 1e4);
	cJSON_AddBoolToObject(o, "bottleneck", r->bottleneck[k]);
	return o;
}

static cJSON *finding_json(const struct tfd_diff *d, const struct tfd_diff_finding *x)
{
	cJSON *o = cJSON_CreateObject();
	const struct tfd_finding *w = x->was;

	cJSON_AddStringToObject(o, "status", tfd_diff_status_name(x->status));
	cJSON_AddStringToObject(o, "rule", x->f->rule_id);
	cJSON_AddStringToObject(o, "severity", tfd_severity_name(x->f->severity));
	cJSON_AddStringToObject(o, "title", x->f->title);
	cJSON_AddStringToObject(o, "stage", x->f->stage ? x->f->stage : "");
	if (w && w->estimate.known && w->estimate.step_speedup > 0)
		tfd_json_add_num(o, "estimated_step_speedup",
				 round(w->estimate.step_speedup * 1e4) / 1e4);
	else
		cJSON_AddNullToObject(o, "estimated_step_speedup");
	return o;
}

void tfd_render_diff_json(const struct tfd_diff *d, const char *const names[2], struct tfd_buf *b)
{
	cJSON *root = cJSON_CreateObject(), *arr;

	tfd_json_add_num(root, "schema_version", 1);
	cJSON_AddStringToObject(root, "tool", "tfdoctor");
	cJSON_AddStringToObject(root, "kind", "diff");
	cJSON_AddItemToObject(root, "before", side_json(&d->side[0], names[0]));
	cJSON_AddItemToObject(root, "after", side_json(&d->side[1], names[1]));
	cJSON_AddStringToObject(root, "bottleneck_move", tfd_diff_move_name(d->move));
	cJSON_AddItemToObject(root, "step_speedup",
			      d->step_speedup > 0 ? tfd_json_num(round(d->step_speedup * 1e4) / 1e4)
						  : cJSON_CreateNull());
	tfd_json_add_num(root, "margin", d->margin);
	cJSON_AddStringToObject(root, "result", d->worse ? "worse" : d->better ? "better" : "same");
	cJSON_AddStringToObject(root, "why", d->why);
	arr = cJSON_AddArrayToObject(root, "stages");
	for (size_t i = 0; i < d->nstages; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "path", d->stages[i].path);
		cJSON_AddStringToObject(o, "name", d->stages[i].name);
		cJSON_AddItemToObject(o, "before", stage_side(&d->stages[i], 0));
		cJSON_AddItemToObject(o, "after", stage_side(&d->stages[i], 1));
		cJSON_AddItemToArray(arr, o);
	}
	arr = cJSON_AddArrayToObject(root, "findings");
	for (size_t i = 0; i < d->nfindings; i++)
		cJSON_AddItemToArray(arr, finding_json(d, &d->findings[i]));
	tfd_json_pretty_tree(b, root);
	cJSON_Delete(root);
}

/* ---- Markdown ---- */

void tfd_render_diff_md(const struct tfd_diff *d, const char *const names[2], struct tfd_buf *b)
{
	const struct tfd_diff_side *s0 = &d->side[0], *s1 = &d->side[1];
	char t0[32], t1[32], p0[16], p1[16];

	tfd_buf_puts(b, "### tfdoctor diff: ");
	tfd_buf_put_md(b, names[0]);
	tfd_buf_puts(b, " → ");
	tfd_buf_put_md(b, names[1]);
	tfd_buf_printf(b, "\n\n**%s**%s%s\n\n| | before | after |\n|---|---|---|\n",
		       d->worse	   ? "Worse"
		       : d->better ? "Better"
				   : "No change beyond the margin",
		       d->why[0] ? ": " : "", d->why);
	tfd_buf_puts(b, "| host | ");
	tfd_buf_put_md(b, s0->host->host->name);
	tfd_buf_puts(b, " | ");
	tfd_buf_put_md(b, s1->host->host->name);
	tfd_buf_printf(b, " |\n| verdict | %s %s | %s %s |\n", band(s0->input_pct),
		       pct_text(s0->input_pct, p0, sizeof(p0)), band(s1->input_pct),
		       pct_text(s1->input_pct, p1, sizeof(p1)));
	tfd_buf_printf(b, "| step time | %s | %s |\n", step_text(s0->step_ns, t0, sizeof(t0)),
		       step_text(s1->step_ns, t1, sizeof(t1)));
	if (d->between)
		tfd_buf_printf(b, "| between the steps | %s, a step with them %s | %s, %s |\n",
			       pct_text(s0->between_pct, p0, sizeof(p0)),
			       step_text(s0->span_step_ns, t0, sizeof(t0)),
			       pct_text(s1->between_pct, p1, sizeof(p1)),
			       step_text(s1->span_step_ns, t1, sizeof(t1)));
	tfd_buf_printf(b, "| rate (root elements) | %s | %s |\n",
		       rate_text(s0->throughput, t0, sizeof(t0)),
		       rate_text(s1->throughput, t1, sizeof(t1)));
	tfd_buf_puts(b, "| bottleneck | ");
	for (int i = 0; i < 2; i++) {
		const struct tfd_diff_side *s = i ? s1 : s0;

		if (i)
			tfd_buf_puts(b, " | ");
		if (renewed(s))
			tfd_buf_puts(b, RENEWED);
		else if (s->bn_name)
			tfd_buf_put_md(b, s->bn_name);
		else
			tfd_buf_puts(b, "none");
	}
	tfd_buf_printf(b, " (%s) |\n", tfd_diff_move_name(d->move));
	if (d->nfindings)
		tfd_buf_puts(b, "\n");
	for (size_t i = 0; i < d->nfindings; i++) {
		const struct tfd_diff_finding *x = &d->findings[i];
		struct tfd_buf e;

		tfd_buf_printf(b, "- **%s** `%s` ", tfd_diff_status_name(x->status), x->f->rule_id);
		tfd_buf_put_md(b, x->f->title);
		tfd_buf_init(&e);
		if (x->status == TFD_DIFF_RESOLVED && estimate_text(d, x->was, &e)) {
			tfd_buf_puts(b, ": ");
			tfd_buf_put_md(b, e.s);
		}
		tfd_buf_release(&e);
		tfd_buf_puts(b, "\n");
	}
}
