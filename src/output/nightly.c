/* nightly.c - the HTML, Markdown and JSON pipeline-health reports
 * (nightly.h); the regressions they show are regress.c's. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "tfd/history.h"
#include "tfd/nightly.h"
#include "tfd/render.h"

/* ---- HTML ---------------------------------------------------------------- */

static void esc(struct tfd_buf *b, const char *s)
{
	tfd_buf_put_html(b, s);
}

/* "11-22", or "11-22 02:00" when another run shares the day */
static void date_label(struct tfd_buf *b, const struct tfd_hist_run *runs, size_t n, size_t i)
{
	const char *t = runs[i].recorded_at;
	bool shared = false;

	if (strlen(t) < 16) {
		esc(b, t);
		return;
	}
	for (size_t k = 0; k < n; k++)
		if (k != i && strncmp(runs[k].recorded_at, t, 10) == 0)
			shared = true;
	{
		char d[6], h[6];

		snprintf(d, sizeof(d), "%.5s", t + 5);
		snprintf(h, sizeof(h), "%.5s", t + 11);
		esc(b, d);
		if (shared) {
			tfd_buf_puts(b, " ");
			esc(b, h);
		}
	}
}

/* A line chart's frame (viewBox units) and scale. */
struct chart {
	double W, H, L, R, T, B; /* size, and the margins left, right, top, bottom */
	double maxv;		 /* the top of the y axis */
	size_t n;		 /* runs */
};

static double chart_x(const struct chart *c, size_t i)
{
	return c->n > 1 ? c->L + (c->W - c->L - c->R) * (double)i / (double)(c->n - 1)
			: c->L + (c->W - c->L - c->R) / 2;
}

static double chart_y(const struct chart *c, double v)
{
	return c->T + (c->H - c->T - c->B) * (1.0 - v / c->maxv);
}

/* The x labels: one per ~90 units at most, so none overlap; first and last
 * always (the regular label just before the last goes when the two would
 * crowd). */
static void chart_x_labels(struct tfd_buf *b, const struct chart *c,
			   const struct tfd_hist_run *runs)
{
	size_t n = c->n, every = 1, maxl = (size_t)((c->W - c->L - c->R) / 90.0) + 1;
	size_t lastreg;

	while (n > 1 && (n - 1) / every + 1 > maxl)
		every++;
	lastreg = n ? (n - 1) / every * every : 0;
	for (size_t i = 0; i < n; i++) {
		const char *anchor = n < 2	  ? "middle"
				     : i == 0	  ? "start"
				     : i + 1 == n ? "end"
						  : "middle";

		if (i + 1 != n && (i % every || (i == lastreg && i && (n - 1 - i) * 2 < every + 1)))
			continue;
		tfd_buf_printf(b,
			       "<text x=\"%.1f\" y=\"%.0f\" class=\"ax xl\" "
			       "text-anchor=\"%s\"><title>",
			       chart_x(c, i), c->H - c->B + 16, anchor);
		esc(b, runs[i].run);
		tfd_buf_puts(b, "</title>");
		date_label(b, runs, n, i);
		tfd_buf_puts(b, "</text>");
	}
}

/* Series s: its line, a dot per run with the value on hover, its legend. */
static void chart_series(struct tfd_buf *b, const struct chart *c, const struct tfd_hist_run *runs,
			 int s, const char *name, const char *color, const char *unit,
			 double (*get)(const struct tfd_hist_host *, int))
{
	tfd_buf_printf(b,
		       "<polyline class=\"series\" fill=\"none\" stroke=\"%s\" "
		       "stroke-width=\"2\" points=\"",
		       color);
	for (size_t i = 0; i < c->n; i++) {
		double v = runs[i].nhosts ? get(&runs[i].hosts[0], s) : NAN;

		if (!isnan(v))
			tfd_buf_printf(b, "%.1f,%.1f ", chart_x(c, i), chart_y(c, v));
	}
	tfd_buf_puts(b, "\"/>");
	for (size_t i = 0; i < c->n; i++) {
		double v = runs[i].nhosts ? get(&runs[i].hosts[0], s) : NAN;

		if (isnan(v))
			continue;
		tfd_buf_printf(b,
			       "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\">"
			       "<title>",
			       chart_x(c, i), chart_y(c, v), color);
		esc(b, runs[i].run);
		tfd_buf_printf(b, ": %s %.3g %s</title></circle>", name, v, unit);
	}
	tfd_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" class=\"lg\" fill=\"%s\">%s</text>",
		       c->L + 10 + 110.0 * s, c->H - 6, color, name);
}

/* A line chart of up to 3 series over the history, as inline SVG. */
static void svg_chart(struct tfd_buf *b, const char *id, const char *title, const char *unit,
		      const struct tfd_hist_run *runs, size_t n, const char *const *names,
		      const char *const *colors, double (*get)(const struct tfd_hist_host *, int),
		      int nseries)
{
	struct chart c = {1000, 240, 60, 30, 30, 40, 0, n};

	for (size_t i = 0; i < n; i++)
		for (int s = 0; s < nseries; s++) {
			double v = runs[i].nhosts ? get(&runs[i].hosts[0], s) : NAN;

			if (!isnan(v) && v > c.maxv)
				c.maxv = v;
		}
	if (c.maxv <= 0)
		c.maxv = 1;
	c.maxv *= 1.1;
	tfd_buf_printf(b,
		       "<svg id=\"%s\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
		       "viewBox=\"0 0 %.0f %.0f\" preserveAspectRatio=\"xMinYMin meet\" "
		       "role=\"img\" aria-label=\"",
		       id, c.W, c.H);
	esc(b, title);
	tfd_buf_printf(b, "\"><text x=\"%.0f\" y=\"18\" class=\"ct\">", c.L);
	esc(b, title);
	tfd_buf_printf(b, " (%s)</text>", unit);
	/* axes and grid */
	for (int g = 0; g <= 4; g++) {
		double y = c.T + (c.H - c.T - c.B) * (1.0 - g / 4.0);

		tfd_buf_printf(b,
			       "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" "
			       "class=\"grid\"/><text x=\"%.0f\" y=\"%.1f\" class=\"ax\" "
			       "text-anchor=\"end\">%.3g</text>",
			       c.L, y, c.W - c.R, y, c.L - 6, y + 4, c.maxv * g / 4.0);
	}
	chart_x_labels(b, &c, runs);
	for (int s = 0; s < nseries; s++)
		chart_series(b, &c, runs, s, names[s], colors[s], unit, get);
	tfd_buf_puts(b, "</svg>\n");
}

static double lat_ms(const struct tfd_hist_host *x, int s)
{
	return (double)(s == 0 ? x->p50_ns : s == 1 ? x->p95_ns : x->max_latency_ns) / 1e6;
}

static double input_pct(const struct tfd_hist_host *x, int s)
{
	(void)s;
	return x->input_percent;
}

static const char *verdict_word(const struct tfd_host_result *h)
{
	switch (h->bound) {
	case TFD_BOUND_HIGH:
		return "HIGHLY input-bound";
	case TFD_BOUND_MODERATE:
		return "MODERATELY input-bound";
	case TFD_BOUND_NOT:
		return "not input-bound";
	default:
		return h->max_latency_ns > TFD_SLOW_CALL_NS ? "slow input pipeline" : "unknown";
	}
}

static const char *verdict_class(const struct tfd_host_result *h)
{
	if (h->bound == TFD_BOUND_HIGH)
		return "bad";
	if (h->bound == TFD_BOUND_MODERATE ||
	    (h->bound == TFD_BOUND_UNKNOWN && h->max_latency_ns > TFD_SLOW_CALL_NS))
		return "warn";
	return "good";
}

/* Why the stage was picked: the throughput model's evidence, else the
 * latency view's share of blocking time. */
static void why_text(const struct tfd_pipeline *p, char *buf, size_t len)
{
	char ops[200], lb[120];
	size_t at;

	if (TFD_CAPACITY_USABLE(p) && p->capacity.evidence[0])
		snprintf(buf, len, "%s", p->capacity.evidence);
	else if (tfd_stage_outlasted(&p->stages[p->bottleneck]))
		tfd_outlasted_why(p, buf, len);
	else if (p->capacity.valid && p->capacity.unexplained)
		snprintf(buf, len,
			 "%.1f%% of the pipeline's blocking time (latency view: the work the "
			 "capture shows explains %.0f%% of the rate)",
			 100.0 * p->stages[p->bottleneck].blocking_share,
			 100.0 * p->capacity.explained);
	else
		snprintf(buf, len,
			 "%.1f%% of the pipeline's blocking time (latency view: too few "
			 "steady-state calls for a throughput model)",
			 100.0 * p->stages[p->bottleneck].blocking_share);
	/* what its function spends its time in, as every format says it */
	at = strlen(buf);
	if (tfd_fn_ops_summary(&p->stages[p->bottleneck], 3, ops, sizeof(ops)) && at < len)
		snprintf(buf + at, len - at, "; inside %s's function: %s",
			 tfd_stage_label(p, p->bottleneck, lb, sizeof(lb)), ops);
}

/* "low (1 step captured: profile longer)" */
static void sure_text(const struct tfd_sureness *c, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s%s", tfd_confidence_name(c->level), c->reasons[0] ? " (" : "",
		 c->reasons, c->reasons[0] ? ")" : "");
}

static const char css[] =
    "body{font:14px/1.45 system-ui,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1100px;"
    "color:#1d1d1f;padding:0 16px}h1{font-size:22px}h2{font-size:18px;border-bottom:1px solid "
    "#ddd;padding-bottom:4px;margin-top:32px}h3{font-size:15px}table{border-collapse:collapse;"
    "margin:8px 0}td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:"
    "top}th{background:#f5f5f7}.good{color:#1a7f37;font-weight:600}.warn{color:#9a6700;"
    "font-weight:600}.bad{color:#cf222e;font-weight:600}.reg{background:#fff1f0;border-left:4px "
    "solid #cf222e;padding:6px 10px;margin:4px 0}.ok{background:#f0fff4;border-left:4px solid "
    "#1a7f37;padding:6px 10px}pre{background:#f6f8fa;padding:8px;overflow:auto}.chart{border:"
    "1px solid #eee;margin:6px 0;width:100%;height:auto;display:block}.summary li{margin:4px "
    "0}.ct{font-size:13px;font-weight:600}.ax{font-size:10px;"
    "fill:#555}.lg{font-size:11px;font-weight:600}.grid{stroke:#eee}.cp{border:1px"
    " solid #eee;padding:4px}.cp "
    "svg{max-width:100%;height:auto;display:block;margin:auto}.sev-high{color:#cf222e}.sev-medium{"
    "color:#9a6700}"
    ".muted{color:#666}";

/* The current run's steps as stacked bars: waiting for input (orange),
 * with device planes the copies to the device (blue) above it, and the
 * rest (grey), so a reader sees whether input time is steady or spiky. At
 * most 250 bars: longer captures are cut into groups of consecutive steps. */
static void step_chart(struct tfd_buf *b, const struct tfd_host_result *h)
{
	const double W = 1000, H = 170, L = 60, R = 20, T = 30, B = 24;
	size_t n, per;
	double maxv = 0, bw;
	bool dev = h && h->step_bars.h2d_ns;

	if (!h || !h->step_bars.n) {
		tfd_buf_puts(b, "<p class=\"muted\">No step markers in this capture: no per-step "
				"view.</p>\n");
		return;
	}
	per = h->step_bars.per;
	n = h->step_bars.n;
	for (size_t i = 0; i < n; i++)
		if ((double)h->step_bars.step_ns[i] > maxv)
			maxv = (double)h->step_bars.step_ns[i];
	if (maxv <= 0)
		maxv = 1;
	bw = (W - L - R) / (double)n;
	tfd_buf_printf(b,
		       "<h3>Steps of this run</h3>\n<svg id=\"per-step\" class=\"chart\" "
		       "xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
		       "preserveAspectRatio=\"xMinYMin meet\" role=\"img\" aria-label=\"step "
		       "time split into waiting for input%s and the rest\"><text x=\"%.0f\" "
		       "y=\"18\" class=\"ct\">step time: waiting for input (orange)%s and the rest "
		       "(grey)%s</text>",
		       W, H, dev ? ", copying to the device" : "", L,
		       dev ? ", copying it to the device (blue)" : "",
		       per > 1 ? ", consecutive steps grouped" : "");
	tfd_buf_printf(b,
		       "<text x=\"%.0f\" y=\"%.0f\" class=\"ax\" text-anchor=\"end\">"
		       "%.3g ms</text>",
		       L - 6, T + 4, maxv / 1e6);
	for (size_t i = 0; i < n; i++) {
		double t = (double)h->step_bars.step_ns[i], w = (double)h->step_bars.wait_ns[i];
		double c = dev ? (double)h->step_bars.h2d_ns[i] : 0;
		double x = L + bw * (double)i, ht, hw, hc;

		ht = (H - T - B) * t / maxv;
		hw = (H - T - B) * w / maxv;
		hc = (H - T - B) * c / maxv;
		if (!dev) {
			tfd_buf_printf(
			    b,
			    "<g class=\"step\"><title>step %zu%s: %.3f ms, %.1f%% waiting"
			    "</title><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" "
			    "height=\"%.2f\" fill=\"#c8ccd1\"/><rect class=\"wait\" x=\"%.2f\" "
			    "y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#d4750b\"/></g>",
			    i * per, per > 1 ? "+" : "", t / 1e6, t > 0 ? 100 * w / t : 0.0, x,
			    H - B - ht, bw * 0.85, ht - hw, x, H - B - hw, bw * 0.85, hw);
			continue;
		}
		tfd_buf_printf(
		    b,
		    "<g class=\"step\"><title>step %zu%s: %.3f ms, %.1f%% waiting, %.1f%% "
		    "copying to the device</title><rect x=\"%.2f\" y=\"%.2f\" "
		    "width=\"%.2f\" height=\"%.2f\" fill=\"#c8ccd1\"/><rect class=\"wait\" "
		    "x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
		    "fill=\"#d4750b\"/><rect class=\"h2d\" x=\"%.2f\" y=\"%.2f\" "
		    "width=\"%.2f\" height=\"%.2f\" fill=\"#2f6fb5\"/></g>",
		    i * per, per > 1 ? "+" : "", t / 1e6, t > 0 ? 100 * w / t : 0.0,
		    t > 0 ? 100 * c / t : 0.0, x, H - B - ht, bw * 0.85, fmax(0.0, ht - hw - hc), x,
		    H - B - hw, bw * 0.85, hw, x, H - B - hw - hc, bw * 0.85, hc);
	}
	tfd_buf_printf(b,
		       "<text x=\"%.0f\" y=\"%.0f\" class=\"ax\">first step</text>"
		       "<text x=\"%.0f\" y=\"%.0f\" class=\"ax\" text-anchor=\"end\">last "
		       "step</text></svg>\n",
		       L, H - 8, W - R, H - 8);
}

/* The summary's bottleneck clause: the host side's only when copies to
 * the device are most of the input. */
static void summary_bottleneck(const struct tfd_host_result *h, const struct tfd_pipeline *p,
			       struct tfd_buf *b)
{
	bool copies = tfd_h2d_dominates(h);

	tfd_buf_puts(b, copies ? "; copies to the device dominate the input (host-side bottleneck "
			       : "; bottleneck ");
	esc(b, p->stages[p->bottleneck].name);
	tfd_buf_printf(b, " (confidence %s)%s", tfd_confidence_name(p->confidence.level),
		       copies ? ")" : "");
}

/* "; first change: TITLE (worth about 1.4x step time)." and the item's end */
static void summary_fix(const struct tfd_finding *fix, struct tfd_buf *b)
{
	double gain = tfd_finding_gain(fix);

	tfd_buf_puts(b, "; first change: ");
	esc(b, fix->title);
	if (fix->estimate.known && gain > 1.02 && isfinite(gain))
		tfd_buf_printf(b, " (worth about %.2f&times; step time)", gain);
	else if (fix->estimate.known && fix->estimate.speedup == 0)
		tfd_buf_puts(b, " (the input pipeline would be hidden behind the step)");
	tfd_buf_puts(b, ".</li>\n");
}

/* One sentence per job: the verdict, the bottleneck, the first thing to change. */
static void summary(const struct tfd_job *jobs, size_t n, struct tfd_buf *b)
{
	tfd_buf_puts(b, "<ul class=\"summary\" id=\"summary\">\n");
	for (size_t j = 0; j < n; j++) {
		const struct tfd_job *job = &jobs[j];
		const struct tfd_analysis *a = job->analysis;
		const struct tfd_host_result *h = a && a->nhosts ? &a->hosts[0] : NULL;
		const struct tfd_pipeline *p = h && h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
		const struct tfd_finding *fix = NULL;

		for (size_t k = 0; job->findings && k < job->findings->n && !fix; k++)
			if (job->findings->v[k].severity > TFD_SEV_INFO)
				fix = &job->findings->v[k];
		tfd_buf_puts(b, "<li class=\"job-summary\"><b>");
		esc(b, job->name);
		tfd_buf_puts(b, "</b>: ");
		if (job->error) {
			tfd_buf_puts(b, "<span class=\"bad\">could not be analyzed</span>: ");
			esc(b, job->error);
			tfd_buf_puts(b, "</li>\n");
			continue;
		}
		if (!h || !a->any_tfdata) {
			tfd_buf_puts(b, "no tf.data activity captured.</li>\n");
			continue;
		}
		tfd_buf_printf(b, "<span class=\"%s\">%s</span>", verdict_class(h),
			       verdict_word(h));
		if (!isnan(h->input_pct) && h->has_device)
			tfd_buf_printf(b,
				       " (%.1f%% of step time is input: %.1f%% copying it to the "
				       "device, %.1f%% waiting for it, on ",
				       h->input_pct, tfd_h2d_pct(h), tfd_host_wait_pct(h));
		else if (!isnan(h->input_pct))
			tfd_buf_printf(b, " (%.1f%% of step time waiting for input on ",
				       h->input_pct);
		else
			tfd_buf_puts(b, " (on ");
		esc(b, h->host->name);
		tfd_buf_printf(b, "; confidence %s)", tfd_confidence_name(h->confidence.level));
		if (p && p->bottleneck >= 0 && tfd_host_has_bottleneck(h))
			summary_bottleneck(h, p, b);
		if (fix && tfd_host_has_bottleneck(h)) {
			summary_fix(fix, b);
		} else if (h->bound == TFD_BOUND_NOT &&
			   tfd_python_busy_share(h) >= TFD_PYTHON_BUSY_SAYS) {
			tfd_buf_puts(b, ": little waiting for input, but the pipeline's Python "
					"holds the GIL the training loop needs (TFD-H04).</li>\n");
		} else {
			tfd_buf_puts(b, h->bound == TFD_BOUND_NOT
					    ? ": nothing to change in the input pipeline.</li>\n"
					    : ".</li>\n");
		}
	}
	tfd_buf_puts(b, "</ul>\n");
}

/* The verdict's and the bottleneck's confidence with their reasons, for the
 * host analyzed first. */
static void confidence_html(const struct tfd_analysis *a, struct tfd_buf *b)
{
	const struct tfd_host_result *h = a->nhosts ? &a->hosts[0] : NULL;
	const struct tfd_pipeline *p = h && h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
	char t[600];

	if (!h || !a->any_tfdata)
		return;
	tfd_buf_puts(b, "<p class=\"confidence\">Confidence in the verdict: ");
	sure_text(&h->confidence, t, sizeof(t));
	esc(b, t);
	if (p && p->bottleneck >= 0) {
		tfd_buf_printf(b, ". Confidence in the %s: ",
			       tfd_host_has_bottleneck(h) ? "bottleneck" : "slowest stage");
		sure_text(&p->confidence, t, sizeof(t));
		esc(b, t);
	}
	tfd_buf_puts(b, ".</p>\n");
}

/* Where a finding holds: "host Host:0, Map", or for a group "Host:0, Map on
 * 8 of 8 hosts: worker-0, worker-1, ..., worker-7" (esc applied). */
static void where_html(const struct tfd_findings *fs, const size_t *g, size_t i, size_t nhosts,
		       struct tfd_buf *b)
{
	const struct tfd_finding *f = &fs->v[i];
	size_t shown[4], k, n = tfd_findings_group_shown(fs, g, i, shown, &k);
	char lb[120];

	if (n == 1) {
		esc(b, f->host);
		if (f->pipeline[0])
			tfd_buf_printf(b, " %s", f->pipeline);
	} else if (f->pipeline[0])
		tfd_buf_puts(b, f->pipeline);
	if (f->stage[0]) {
		tfd_buf_puts(b, ", ");
		esc(b, tfd_finding_stage(f, lb, sizeof(lb)));
	}
	if (n == 1)
		return;
	tfd_buf_printf(b, "%son %zu of %zu hosts: ", f->pipeline[0] ? " " : "", n, nhosts);
	for (size_t m = 0; m < k; m++) {
		tfd_buf_puts(b, m == 0 ? "" : m == 2 && n > 4 ? ", ..., " : ", ");
		esc(b, fs->v[shown[m]].host);
	}
}

/* What to change: the findings in their order (largest estimated gain
 * first), identical ones on several hosts once. */
static void findings_html(const struct tfd_job *job, size_t nhosts, struct tfd_buf *b)
{
	const struct tfd_findings *fs = job->findings;
	size_t *g, shown_groups = 0;

	tfd_buf_puts(b, "<h3>What to change <span class=\"muted\">(largest estimated gain "
			"first)</span></h3>\n");
	if (!fs || !fs->n) {
		tfd_buf_puts(b, "<p>No findings.</p>\n");
		return;
	}
	g = tfd_findings_groups(fs);
	for (size_t k = 0; k < fs->n && shown_groups < 6; k++) {
		const struct tfd_finding *f = &fs->v[k];
		struct tfd_buf w;

		if (g[k] != k)
			continue;
		shown_groups++;
		tfd_buf_printf(b, "<div class=\"finding\"><b class=\"sev-%s\">[%s]</b> <b>%s</b> ",
			       tfd_severity_name(f->severity), tfd_severity_name(f->severity),
			       f->rule_id);
		esc(b, f->title);
		tfd_buf_puts(b, " <span class=\"muted\">(");
		where_html(fs, g, k, nhosts, b);
		tfd_buf_puts(b, ")</span><p>");
		esc(b, f->suggestion);
		tfd_buf_puts(b, "</p>");
		if (f->code[0]) {
			tfd_buf_puts(b, "<pre>");
			esc(b, f->code);
			tfd_buf_puts(b, "</pre>");
		}
		tfd_buf_init(&w);
		if (tfd_fmt_worth(&f->estimate, &w)) {
			tfd_buf_puts(b, "<p>Worth: ");
			esc(b, w.s);
			tfd_buf_puts(b, ".</p>");
		}
		tfd_buf_release(&w);
		tfd_buf_printf(b, "<p class=\"muted\">Confidence: %s.</p>",
			       tfd_confidence_name(f->confidence));
		if (f->doc[0]) {
			tfd_buf_puts(b, "<p><a href=\"");
			esc(b, f->doc);
			tfd_buf_puts(b, "\">");
			esc(b, f->doc);
			tfd_buf_puts(b, "</a></p>");
		}
		tfd_buf_puts(b, "</div>\n");
	}
	free(g);
}

/* The stragglers under the hosts table (at most three), as a list. */
static void stragglers_md(const struct tfd_analysis *a, struct tfd_buf *b)
{
	for (size_t k = 0; k < a->nstragglers && k < 3; k++) {
		struct tfd_buf t;

		tfd_buf_init(&t);
		tfd_straggler_sentence(a, &a->stragglers[k], &t);
		tfd_buf_puts(b, k ? "- " : "\n**Stragglers:**\n\n- ");
		tfd_buf_put_md(b, t.s);
		tfd_buf_puts(b, "\n");
		tfd_buf_release(&t);
	}
}

static void stragglers_html(const struct tfd_analysis *a, struct tfd_buf *b)
{
	for (size_t k = 0; k < a->nstragglers && k < 3; k++) {
		struct tfd_buf t;

		tfd_buf_init(&t);
		tfd_straggler_sentence(a, &a->stragglers[k], &t);
		tfd_buf_puts(b, "<p><b>straggler:</b> ");
		esc(b, t.s);
		tfd_buf_puts(b, "</p>\n");
		tfd_buf_release(&t);
	}
}

/* One row per host: verdict, input share, pipeline, stage and why. */
static void hosts_html(const struct tfd_analysis *a, struct tfd_buf *b)
{
	char t1[32], t2[32];

	tfd_buf_puts(b, "<table class=\"hosts\"><tr><th>host</th><th>verdict</th><th>input "
			"%</th><th>pipeline</th><th>p50</th><th>max</th><th>stage</th>"
			"<th>why</th></tr>\n");
	for (size_t i = 0; i < a->nhosts; i++) {
		const struct tfd_host_result *h = &a->hosts[i];
		const struct tfd_pipeline *p = h->focus >= 0 ? &h->pipelines[h->focus] : NULL;

		tfd_buf_puts(b, "<tr><td>");
		esc(b, h->host->name);
		tfd_buf_printf(b, "</td><td class=\"%s\">%s", verdict_class(h),
			       a->any_tfdata ? verdict_word(h) : "no tf.data activity");
		if (a->any_tfdata)
			tfd_buf_printf(b, "<br><span class=\"muted\">confidence %s</span>",
				       tfd_confidence_name(h->confidence.level));
		tfd_buf_puts(b, "</td><td>");
		if (isnan(h->input_pct))
			tfd_buf_puts(b, "n/a");
		else
			tfd_buf_printf(b, "%.1f", h->input_pct);
		tfd_buf_puts(b, "</td>");
		if (p) {
			tfd_buf_printf(b, "<td>%s</td><td>%s</td><td>%s</td><td>", p->name,
				       p->ncalls ? tfd_fmt_ns(p->p50_ns, t1, sizeof(t1)) : "-",
				       p->ncalls ? tfd_fmt_ns(p->max_ns, t2, sizeof(t2)) : "-");
			if (p->bottleneck >= 0) {
				char why[600];

				tfd_buf_puts(b, !tfd_host_has_bottleneck(h)
						    ? "slowest stage (the host is not "
						      "input-bound): "
						: tfd_h2d_dominates(h)
						    ? "copies to the device dominate the input; "
						      "host-side bottleneck: "
						    : "bottleneck: ");
				tfd_buf_puts(b, "<b>");
				esc(b, p->stages[p->bottleneck].name);
				tfd_buf_puts(b, "</b><br><span class=\"muted\">");
				esc(b, p->stages[p->bottleneck].long_name);
				tfd_buf_printf(b, "<br>confidence %s</span></td><td>",
					       tfd_confidence_name(p->confidence.level));
				why_text(p, why, sizeof(why));
				esc(b, why);
				tfd_buf_puts(b, "</td>");
			} else {
				tfd_buf_puts(b, "&mdash;</td><td></td>");
			}
		} else {
			tfd_buf_puts(b, "<td colspan=\"5\">no tf.data input pipeline</td>");
		}
		tfd_buf_puts(b, "</tr>\n");
	}
	tfd_buf_puts(b, "</table>\n");
}

/* The regressions against the previous run and the baseline, a line each. */
static void regressions_html(const struct tfd_job *job, struct tfd_buf *b)
{
	tfd_buf_puts(b, "<h3>Regressions</h3>\n");
	if (!job->nregs) {
		tfd_buf_printf(b, "<div class=\"ok\">No regression %s.</div>\n",
			       job->previous ? "against the previous run or the baseline"
					     : "(first recorded run)");
	}
	for (size_t r = 0; r < job->nregs; r++) {
		tfd_buf_printf(b, "<div class=\"reg\" data-kind=\"%s\">", job->regs[r].kind);
		esc(b, job->regs[r].text);
		tfd_buf_puts(b, "</div>\n");
	}
}

/* The latency and input-wait trends, and this run's steps. */
static void trends_html(const struct tfd_job *job, struct tfd_buf *b)
{
	static const char *const lat_names[] = {"p50", "p95", "max"};
	static const char *const lat_colors[] = {"#0969da", "#8250df", "#cf222e"};
	static const char *const in_names[] = {"input %"};
	static const char *const in_colors[] = {"#9a6700"};
	const struct tfd_analysis *a = job->analysis;

	if (!job->nrecorded)
		tfd_buf_puts(b, "<h3>Trend: this run only (not recorded)</h3>\n"
				"<div class=\"charts\">");
	else
		tfd_buf_printf(b,
			       "<h3>Trend over %zu recorded run%s%s</h3>\n"
			       "<div class=\"charts\">",
			       job->nrecorded, job->nrecorded == 1 ? "" : "s",
			       job->nrecorded < job->nhistory ? " and this one (not recorded)"
							      : "");
	svg_chart(b, "trend-latency", "root-call latency of the focus pipeline", "ms", job->history,
		  job->nhistory, lat_names, lat_colors, lat_ms, 3);
	svg_chart(b, "trend-input", "step time that is input", "%", job->history, job->nhistory,
		  in_names, in_colors, input_pct, 1);
	tfd_buf_puts(b, "</div>\n");
	step_chart(b, a->nhosts ? &a->hosts[0] : NULL);
	/* critical path */
	tfd_buf_puts(b, "<h3>Critical path</h3>\n");
	if (job->critpath_svg) {
		tfd_buf_puts(b, "<div class=\"cp\" id=\"critical-path\">");
		tfd_buf_puts(b, job->critpath_svg);
		tfd_buf_puts(b, "</div>\n");
	} else {
		tfd_buf_puts(b, "<p>No tf.data input pipeline to draw.</p>\n");
	}
}

/* The recorded runs, newest first. */
static void history_html(const struct tfd_job *job, struct tfd_buf *b)
{
	char t1[32], t2[32];

	tfd_buf_puts(b, "<h3>History</h3>\n<table class=\"history\"><tr><th>#</th><th>run"
			"</th><th>recorded</th><th>host</th><th>input %</th><th>p50</th><th>max"
			"</th><th>bottleneck</th><th>top finding</th></tr>\n");
	for (size_t i = job->nhistory; i-- > 0;) {
		const struct tfd_hist_run *r = &job->history[i];
		const struct tfd_hist_host *x = r->nhosts ? &r->hosts[0] : NULL;

		tfd_buf_printf(b, "<tr><td>%" PRId64 "</td><td>", r->id);
		esc(b, r->run);
		tfd_buf_puts(b, "</td><td>");
		esc(b, r->recorded_at);
		tfd_buf_puts(b, "</td>");
		if (x) {
			tfd_buf_puts(b, "<td>");
			esc(b, x->host);
			if (isnan(x->input_percent))
				tfd_buf_puts(b, "</td><td>n/a</td>");
			else
				tfd_buf_printf(b, "</td><td>%.1f</td>", x->input_percent);
			tfd_buf_printf(b, "<td>%s</td><td>%s</td><td>",
				       tfd_fmt_ns(x->p50_ns, t1, sizeof(t1)),
				       tfd_fmt_ns(x->max_latency_ns, t2, sizeof(t2)));
			esc(b, x->bottleneck);
			tfd_buf_puts(b, "</td><td>");
			esc(b, x->top_severity);
			tfd_buf_puts(b, " ");
			esc(b, x->top_rule);
			tfd_buf_puts(b, "</td>");
		} else {
			tfd_buf_puts(b, "<td colspan=\"6\">no host</td>");
		}
		tfd_buf_puts(b, "</tr>\n");
	}
}

/* A capture too short to judge leads its job: what to profile instead. */
static void too_short_html(const struct tfd_analysis *a, struct tfd_buf *b)
{
	char hint[512];

	if (tfd_analysis_too_short(a, hint, sizeof(hint))) {
		tfd_buf_puts(b, "<p class=\"reg\" data-kind=\"too-short\">");
		esc(b, hint);
		tfd_buf_puts(b, ".</p>\n");
	}
}

void tfd_nightly_html(const struct tfd_job *jobs, size_t n, struct tfd_buf *b)
{
	tfd_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
			"<title>tf.data pipeline health</title><style>");
	tfd_buf_puts(b, css);
	tfd_buf_puts(b, "</style></head><body>\n<h1>tf.data pipeline health</h1>\n");
	summary(jobs, n, b);
	for (size_t j = 0; j < n; j++) {
		const struct tfd_job *job = &jobs[j];
		const struct tfd_analysis *a = job->analysis;

		if (job->error) {
			tfd_buf_puts(b, "<section class=\"job\"><h2>Job ");
			esc(b, job->name);
			tfd_buf_puts(b,
				     "</h2>\n<div class=\"reg\" data-kind=\"error\">Could not be "
				     "analyzed, nothing recorded: ");
			esc(b, job->error);
			tfd_buf_puts(b, "</div></section>\n");
			continue;
		}
		tfd_buf_puts(b, "<section class=\"job\"><h2>Job ");
		esc(b, job->name);
		tfd_buf_puts(b, " &mdash; run ");
		esc(b, job->current.run);
		tfd_buf_puts(b, " <span class=\"muted\">(");
		esc(b, job->current.recorded_at);
		tfd_buf_puts(b, ")</span></h2>\n");
		too_short_html(a, b);
		hosts_html(a, b);
		stragglers_html(a, b);
		confidence_html(a, b);
		regressions_html(job, b);
		findings_html(job, a->nhosts, b);
		trends_html(job, b);
		history_html(job, b);
		tfd_buf_puts(b, "</table></section>\n");
	}
	tfd_buf_puts(b, "<p class=\"muted\">Generated by tfdoctor.</p></body></html>\n");
}

/* ---- Markdown and JSON ---------------------------------------------------- */

/* one Markdown table cell: " TEXT |" with TEXT escaped */
static void md_cell(struct tfd_buf *b, const char *s)
{
	tfd_buf_add(b, " ", 1);
	tfd_buf_put_md(b, s);
	tfd_buf_puts(b, " |");
}

/* Under the hosts table: why the focus stage was picked and how sure the
 * verdict and the stage are. */
static void evidence_md(const struct tfd_analysis *a, struct tfd_buf *b)
{
	const struct tfd_host_result *h = a->nhosts ? &a->hosts[0] : NULL;
	const struct tfd_pipeline *p = h && h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
	char t[600];

	if (!h || !a->any_tfdata)
		return;
	if (p && p->bottleneck >= 0) {
		tfd_buf_puts(b, "\n**Evidence:** ");
		why_text(p, t, sizeof(t));
		tfd_buf_put_md(b, t);
		tfd_buf_puts(b, ".\n");
	}
	tfd_buf_puts(b, "\n**Confidence:** verdict ");
	sure_text(&h->confidence, t, sizeof(t));
	tfd_buf_put_md(b, t);
	if (p && p->bottleneck >= 0) {
		tfd_buf_printf(b, "; %s ",
			       tfd_host_has_bottleneck(h) ? "bottleneck" : "slowest stage");
		sure_text(&p->confidence, t, sizeof(t));
		tfd_buf_put_md(b, t);
	}
	tfd_buf_puts(b, ".\n");
}

/* A fenced code block indented under a list item, its fence longer than any
 * run of backticks in the code. */
static void code_md(const char *code, struct tfd_buf *b)
{
	size_t run = 0, most = 2;

	for (const char *c = code; *c; c++) {
		run = *c == '`' ? run + 1 : 0;
		if (run > most)
			most = run;
	}
	tfd_buf_puts(b, "\n  ");
	for (size_t i = 0; i <= most; i++)
		tfd_buf_puts(b, "`");
	tfd_buf_puts(b, "python\n  ");
	for (const char *c = code; *c; c++) {
		if (*c == '\n')
			tfd_buf_puts(b, "\n  ");
		else if ((unsigned char)*c >= 0x20 || *c == '\t')
			tfd_buf_add(b, c, 1);
	}
	tfd_buf_puts(b, "\n  ");
	for (size_t i = 0; i <= most; i++)
		tfd_buf_puts(b, "`");
	tfd_buf_puts(b, "\n");
}

/* What to change, as a PR comment needs it: the findings in their order
 * (largest estimated gain first), identical ones on several hosts once,
 * each with its code and what it is worth. */
static void findings_md(const struct tfd_findings *fs, size_t nhosts, struct tfd_buf *b)
{
	size_t *g, shown_groups = 0;

	if (!fs || !fs->n)
		return;
	g = tfd_findings_groups(fs);
	tfd_buf_puts(b, "\n**What to change** (largest estimated gain first):\n");
	for (size_t k = 0; k < fs->n && shown_groups < 5; k++) {
		const struct tfd_finding *f = &fs->v[k];
		size_t shown[4], ns, n;
		struct tfd_buf w;
		char lb[120];

		if (g[k] != k)
			continue;
		shown_groups++;
		n = tfd_findings_group_shown(fs, g, k, shown, &ns);
		tfd_buf_printf(b, "\n- **\\[%s\\] ", tfd_severity_name(f->severity));
		tfd_buf_put_md(b, f->rule_id);
		tfd_buf_puts(b, "** ");
		tfd_buf_put_md(b, f->title);
		tfd_buf_puts(b, " (");
		if (n == 1) {
			tfd_buf_put_md(b, f->host);
			tfd_buf_puts(b, f->pipeline[0] ? " " : "");
		}
		tfd_buf_put_md(b, f->pipeline);
		if (f->stage[0]) {
			tfd_buf_puts(b, ", ");
			tfd_buf_put_md(b, tfd_finding_stage(f, lb, sizeof(lb)));
		}
		if (n > 1) {
			tfd_buf_printf(b, "%son %zu of %zu hosts: ", f->pipeline[0] ? " " : "", n,
				       nhosts);
			for (size_t m = 0; m < ns; m++) {
				tfd_buf_puts(b, m == 0 ? "" : m == 2 && n > 4 ? ", ..., " : ", ");
				tfd_buf_put_md(b, fs->v[shown[m]].host);
			}
		}
		tfd_buf_puts(b, "): ");
		tfd_buf_put_md(b, f->suggestion);
		tfd_buf_puts(b, "\n");
		if (f->code[0])
			code_md(f->code, b);
		tfd_buf_init(&w);
		if (tfd_fmt_worth(&f->estimate, &w)) {
			/* our own words and numbers: nothing to escape, and "->"
			 * stays readable */
			tfd_buf_puts(b, "\n  Worth: ");
			tfd_buf_puts(b, w.s);
			tfd_buf_printf(b, ". Confidence: %s.\n",
				       tfd_confidence_name(f->confidence));
		} else
			tfd_buf_printf(b, "\n  Confidence: %s.\n",
				       tfd_confidence_name(f->confidence));
		tfd_buf_release(&w);
	}
	free(g);
}

static void too_short_md(const struct tfd_analysis *a, struct tfd_buf *b)
{
	char hint[512];

	if (tfd_analysis_too_short(a, hint, sizeof(hint))) {
		tfd_buf_puts(b, "**");
		tfd_buf_put_md(b, hint);
		tfd_buf_puts(b, ".**\n\n");
	}
}

void tfd_nightly_md(const struct tfd_job *jobs, size_t n, struct tfd_buf *b)
{
	char t1[32], t2[32];

	tfd_buf_puts(b, "# tf.data pipeline health\n");
	for (size_t j = 0; j < n; j++) {
		const struct tfd_job *job = &jobs[j];
		const struct tfd_analysis *a = job->analysis;

		if (job->error) {
			tfd_buf_puts(b, "\n## ");
			tfd_buf_put_md(b, job->name);
			tfd_buf_puts(b, "\n\n**Could not be analyzed**, nothing recorded: ");
			tfd_buf_put_md(b, job->error);
			tfd_buf_puts(b, "\n");
			continue;
		}
		tfd_buf_puts(b, "\n## ");
		tfd_buf_put_md(b, job->name);
		tfd_buf_puts(b, ": run ");
		tfd_buf_put_md(b, job->current.run);
		tfd_buf_puts(b, " (");
		tfd_buf_put_md(b, job->current.recorded_at);
		tfd_buf_puts(b, ")\n\n");
		too_short_md(a, b);
		tfd_buf_puts(b, "| host | verdict | input % | pipeline | p50 | max | stage |\n"
				"|---|---|---|---|---|---|---|\n");
		for (size_t i = 0; i < a->nhosts; i++) {
			const struct tfd_host_result *h = &a->hosts[i];
			const struct tfd_pipeline *p =
			    h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
			char pct[16];

			snprintf(pct, sizeof(pct), isnan(h->input_pct) ? "n/a" : "%.1f",
				 h->input_pct);
			tfd_buf_puts(b, "|");
			md_cell(b, h->host->name);
			if (a->any_tfdata) {
				char v[96];

				snprintf(v, sizeof(v), "%s (confidence %s)", verdict_word(h),
					 tfd_confidence_name(h->confidence.level));
				md_cell(b, v);
			} else
				md_cell(b, "no tf.data activity");
			md_cell(b, pct);
			md_cell(b, p ? p->name : "-");
			/* (a root with no call in the capture: no latency) */
			md_cell(b, p && p->ncalls ? tfd_fmt_ns(p->p50_ns, t1, sizeof(t1)) : "-");
			md_cell(b, p && p->ncalls ? tfd_fmt_ns(p->max_ns, t2, sizeof(t2)) : "-");
			if (p && p->bottleneck >= 0) {
				char v[400];

				snprintf(
				    v, sizeof(v), "%s%s (confidence %s)",
				    !tfd_host_has_bottleneck(h) ? "slowest stage "
				    : tfd_h2d_dominates(h)
					? "copies to the device dominate; host-side bottleneck "
					: "bottleneck ",
				    p->stages[p->bottleneck].name,
				    tfd_confidence_name(p->confidence.level));
				md_cell(b, v);
			} else
				md_cell(b, "-");
			tfd_buf_puts(b, "\n");
		}
		evidence_md(a, b);
		stragglers_md(a, b);
		tfd_buf_puts(b, "\n**Regressions:**");
		if (!job->nregs)
			tfd_buf_puts(b, " none.\n");
		else
			tfd_buf_puts(b, "\n\n");
		for (size_t r = 0; r < job->nregs; r++) {
			tfd_buf_puts(b, "- ");
			tfd_buf_put_md(b, job->regs[r].text);
			tfd_buf_puts(b, "\n");
		}
		findings_md(job->findings, a->nhosts, b);
		tfd_buf_printf(b, "\n_%zu recorded run%s%s._\n", job->nrecorded,
			       job->nrecorded == 1 ? "" : "s",
			       job->nrecorded < job->nhistory ? "; this run was not recorded" : "");
	}
}
