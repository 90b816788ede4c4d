/* text.c - the terminal report. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output_impl.h"
#include "tfd/render.h"
#include "tfd/satmath.h"

/* A name from the capture, safe on one line of the report (buf.h). */
#define N(s) tfd_name_on_line(s)

/* Append text to b, each of its lines broken at spaces to fit width (the
 * width prose is wrapped to; tables and code are not);
 * a continuation line starts with hang spaces. A line that fits, and a
 * word longer than a line (a URL, a long name), stay whole; the spaces
 * between words are kept where no break falls. */
static void wrap(struct tfd_buf *b, int width, const char *text, int hang)
{
	const char *s = text;

	while (*s) {
		const char *e = strchr(s, '\n'), *p = s, *sep = NULL;
		size_t col;

		if (!e)
			e = s + strlen(s);
		if (e - s <= width) {
			tfd_buf_add(b, s, (size_t)(e - s));
		} else {
			while (p < e && *p == ' ')
				p++;
			tfd_buf_add(b, s, (size_t)(p - s));
			col = (size_t)(p - s);
			while (p < e) {
				const char *w = p, *next;

				while (w < e && *w != ' ')
					w++;
				if (sep && col + (size_t)(w - sep) > (size_t)width) {
					tfd_buf_puts(b, "\n");
					for (int i = 0; i < hang; i++)
						tfd_buf_add(b, " ", 1);
					col = (size_t)hang;
				} else if (sep) {
					tfd_buf_add(b, sep, (size_t)(p - sep));
					col += (size_t)(p - sep);
				}
				tfd_buf_add(b, p, (size_t)(w - p));
				col += (size_t)(w - p);
				for (next = w; next < e && *next == ' ';)
					next++;
				sep = w; /* the spaces before the next word */
				p = next;
			}
		}
		if (!*e)
			break;
		tfd_buf_puts(b, "\n");
		s = e + 1;
	}
}

/* how a call found its parent call, as "N <phrase>" */
static const char *link_names[TFD_LINK__COUNT] = {"nested on their thread", "by Produce/Consume",
						  "by parent id and time overlap", "not linked"};

/* A mean step in the parts TensorBoard's overview names that the device
 * planes tell apart: device compute, input (host wait + copies to the
 * device), device-to-host, device-to-device and collectives (when any),
 * and the rest: the device idle while the host does not wait for input
 * (host compute, kernel launches, other host work), which no device event
 * covers and the host plane's op events are not read for. */
static void step_breakdown(const struct tfd_host_result *f, const char *what, struct tfd_buf *b)
{
	int64_t n = (int64_t)f->nsteps, rest = tfd_host_other_ns(f);
	int64_t d2d = sat_add(f->dev_ns[TFD_DEV_D2D], f->dev_ns[TFD_DEV_COLLECTIVE]);
	char t1[32], t2[32], t3[32], t4[32];

	tfd_buf_printf(b,
		       "         a step (mean over those steps): device compute %s, input %s "
		       "(host wait %s, %s %s)",
		       tfd_fmt_ns(f->dev_ns[TFD_DEV_COMPUTE] / n, t1, sizeof(t1)),
		       tfd_fmt_ns(sat_add(f->wait_ns, f->h2d_ns) / n, t2, sizeof(t2)),
		       tfd_fmt_ns(f->wait_ns / n, t3, sizeof(t3)), what,
		       tfd_fmt_ns(f->h2d_ns / n, t4, sizeof(t4)));
	if (f->dev_ns[TFD_DEV_D2H])
		tfd_buf_printf(b, ", device-to-host %s",
			       tfd_fmt_ns(f->dev_ns[TFD_DEV_D2H] / n, t1, sizeof(t1)));
	if (d2d)
		tfd_buf_printf(b, ", device-to-device and collectives %s",
			       tfd_fmt_ns(d2d / n, t1, sizeof(t1)));
	tfd_buf_printf(b,
		       "; the device idle with no input wait %s (%.0f%%): host compute, kernel "
		       "launches or other host work, which the device planes do not tell "
		       "apart.\n",
		       tfd_fmt_ns(rest / n, t1, sizeof(t1)),
		       f->step_ns > 0 ? 100.0 * (double)rest / (double)f->step_ns : 0.0);
}

/* The verdict of a host with device planes: input is TensorFlow's, the
 * host wait plus the copies to the device (on a TPU, its wait for
 * infeed), the larger part first. */
static void device_verdict(const struct tfd_host_result *f, const char *basis, struct tfd_buf *b)
{
	const char *dev = tfd_device_word(&f->host->dev);
	bool tpu = f->host->dev.tpu;
	double w = tfd_host_wait_pct(f), c = tfd_h2d_pct(f);
	char copy[64], wait[48], what[48];

	snprintf(what, sizeof(what), tpu ? "the TPU waiting for infeed" : "copying input to the %s",
		 dev);
	snprintf(copy, sizeof(copy), "%.1f%% %s", c, what);
	snprintf(wait, sizeof(wait), "%.1f%% waiting for the pipeline", w);
	tfd_buf_printf(b,
		       "verdict: %s input-bound: %.1f%% of step time on host %s is input: %s, "
		       "%s (%s).\n",
		       tfd_band_word(f->bound), f->input_pct, N(f->host->name),
		       tfd_h2d_dominates(f) ? copy : wait, tfd_h2d_dominates(f) ? wait : copy,
		       basis);
	if (f->nsteps)
		step_breakdown(f, what, b);
	if (f->bound != TFD_BOUND_NOT && tfd_h2d_dominates(f))
		tfd_buf_printf(b,
			       "         most of the input time is %s, not the tf.data pipeline: "
			       "the pipeline below is only the host side.\n",
			       what);
}

/* "inside ParallelMapV2's function (per call 1.9 ms): DecodeJpegV2 68%,
 * ResizeBilinear 21%, Cast 11%": the ops its user function ran, by type
 * (the first five; the rest summed), with what a Python op's GIL leaves
 * of the workers and how much of the function the op events cover. */
/* A pipeline whose throughput is this share of its consumer's demand keeps
 * up with it. */
#define KEEPS_UP 0.9

static void function_ops_line(const struct tfd_pipeline *p, int si, struct tfd_buf *b)
{
	const struct tfd_stage *s = &p->stages[si];
	double all = 0, rest = 0, workers = 0, eff;
	bool python;
	const char *why;
	char t1[32], lb[120];

	if (!s->nfn_ops && s->fn_calls && p->capacity.valid) {
		tfd_buf_printf(
		    b,
		    "         inside %s's function: no op events were captured, so what it "
		    "spends its time in is not known.\n",
		    N(tfd_stage_label(p, si, lb, sizeof(lb))));
		return;
	}
	if (!s->nfn_ops)
		return;
	all = tfd_fn_ops_time(s);
	if (!(all > 0))
		return;
	tfd_buf_printf(b, "         inside %s's function",
		       N(tfd_stage_label(p, si, lb, sizeof(lb))));
	if (s->fn_calls && s->fn_work_ns > 0)
		tfd_buf_printf(b, " (per call %s)",
			       tfd_fmt_ns(s->fn_work_ns / (int64_t)s->fn_calls, t1, sizeof(t1)));
	tfd_buf_puts(b, ":");
	for (size_t i = 0; i < s->nfn_ops; i++) {
		double share = 100.0 * (double)s->fn_ops[i].self_ns / all;

		if (i < 5)
			tfd_buf_printf(b, "%s %s %.0f%%", i ? "," : "", N(s->fn_ops[i].type),
				       share);
		else
			rest += share;
	}
	if (rest > 0)
		tfd_buf_printf(b, ", other ops %.0f%%", rest);
	eff = tfd_stage_effective_parallelism(p, si, &workers, &python);
	if (!isnan(eff) && python && workers < 1.5)
		tfd_buf_printf(
		    b, "; 1 worker: %s (Python) takes %.0f%% of the function, one call at a time",
		    N(s->fn_ops[0].type), 100.0 * (double)s->fn_ops[0].self_ns / all);
	else if (!isnan(eff) && python)
		tfd_buf_printf(b,
			       "; %.3g workers, effective parallelism %.1f: %s takes %.0f%% of the "
			       "function and holds the Python GIL, one call at a time",
			       workers, eff, N(s->fn_ops[0].type),
			       100.0 * (double)s->fn_ops[0].self_ns / all);
	else if (!isnan(eff) && workers >= 2 && eff >= 0.8 && eff < 1.5 &&
		 !(p->capacity.throughput >= KEEPS_UP * p->capacity.demand))
		/* (a pipeline that keeps up with its consumer leaves its
		 * workers idle: few calls at a time says nothing then) */
		tfd_buf_printf(
		    b,
		    "; %.3g workers, effective parallelism %.1f: its calls run about one "
		    "at a time",
		    workers, eff);
	if (tfd_top_op_confidence(s, &why) != TFD_CONF_HIGH)
		tfd_buf_printf(
		    b, " (confidence %s: the op events cover %.0f%% of the function's time)",
		    tfd_confidence_name(tfd_top_op_confidence(s, &why)),
		    100.0 * s->fn_ops_coverage);
	tfd_buf_puts(b, ".\n");
}

/* The throughput view: what limits the rate, by how much, and the evidence.
 * bn: the host waits on input, so the limit may be called its bottleneck;
 * py: the share of the time the pipeline runs Python (holds the GIL);
 * cpu: the share of the host's cores it keeps busy where the step computes
 * on them too; renewed: what the waits are when its dataset is iterated
 * anew in the capture ("" else: renewed_why). */
static void throughput_verdict(const struct tfd_pipeline *p, bool bn, double py, double cpu,
			       const char *renewed, struct tfd_buf *b)
{
	const struct tfd_capacity *cp = &p->capacity;
	const struct tfd_stage *s = &p->stages[p->bottleneck];
	char r0[32], r1[32], r2[32], nm[160];
	/* the rate the limit allows: its capacity, or the host's cores when
	 * they, shared with the step, allow less (said on the line after) */
	bool cores = tfd_cores_limit(p) && cp->cpu_rate < p->segments[cp->limiter].capacity;
	double lim = cores ? cp->cpu_rate : p->segments[cp->limiter].capacity;

	tfd_fmt_rate_of(p->segments[cp->limiter].capacity, "root elements", r0, sizeof(r0));
	tfd_fmt_rate_of(lim, "root elements", r1, sizeof(r1));
	tfd_fmt_rate(cp->demand, r2, sizeof(r2));
	if (!bn && py >= TFD_PYTHON_BUSY_SAYS)
		tfd_buf_printf(b,
			       "         slowest stage: %s (%s) in pipeline %s, the lowest "
			       "capacity at %s; the host waits little for input, but the "
			       "pipeline runs Python %.0f%% of the time and holds the GIL the "
			       "training loop needs (TFD-H04)",
			       N(s->name), N(s->long_name), N(p->name), r0, 100 * py);
	else if (!bn && cpu >= TFD_PIPELINE_CPU_SAYS)
		tfd_buf_printf(b,
			       "         slowest stage: %s (%s) in pipeline %s, the lowest "
			       "capacity at %s; the host waits little for input, but the "
			       "pipeline keeps %.2g of its %.3g cores busy, the cores the step "
			       "computes on (TFD-H07)",
			       N(s->name), N(s->long_name), N(p->name), r0, cpu * cp->cpu_budget,
			       cp->cpu_budget);
	else if (!bn)
		tfd_buf_printf(
		    b,
		    "         slowest stage: %s (%s) in pipeline %s, the lowest capacity "
		    "at %s; the host waits little, so it does not hold training back",
		    N(s->name), N(s->long_name), N(p->name), r0);
	else if (lim >= cp->demand)
		tfd_buf_printf(b,
			       "         bottleneck: %s (%s) in pipeline %s, the slowest stage, "
			       "could deliver %s, above the step's demand of %s: on average the "
			       "input pipeline keeps up%s",
			       N(s->name), N(s->long_name), N(p->name), r1, r2, renewed);
	else
		tfd_buf_printf(b,
			       "         bottleneck: %s (%s) in pipeline %s limits throughput%s "
			       "to %s against a demand of %s",
			       N(s->name), N(s->long_name), N(p->name),
			       cp->inferred ? " (inferred)" : "", r1, r2);
	if (cp->runner_up >= 0 && isfinite(cp->margin) && cp->margin < 100)
		tfd_buf_printf(b, "; the next limit, the %s, is %.1fx higher",
			       N(tfd_segment_name(p, &p->segments[cp->runner_up], nm, sizeof(nm))),
			       cp->margin);
	else if (cp->runner_up >= 0 && isfinite(cp->margin))
		tfd_buf_printf(b, "; the next limit, the %s, is over 100x higher",
			       N(tfd_segment_name(p, &p->segments[cp->runner_up], nm, sizeof(nm))));
	tfd_buf_puts(b, ".\n");
	tfd_buf_printf(b, "         evidence: %s.\n", N(cp->evidence));
	if (tfd_cores_limit(p)) {
		char t1[32], r3[32], r4[32], seen[128];
		/* the rate seen clearly under the cores': workers overlap the
		 * bottleneck's calls' waits, up to the cores */
		bool below = tfd_serial_below_cores(p, p->bottleneck);

		tfd_fmt_rate(cp->throughput, r4, sizeof(r4));
		snprintf(seen, sizeof(seen),
			 "help up to that, from the %s seen (they overlap its calls' waits "
			 "for their input)",
			 r4);
		tfd_fmt_rate_of(cp->cpu_rate, "root elements", r3, sizeof(r3));
		tfd_buf_printf(b,
			       "         the host's %g core%s the limit: %s of CPU per root "
			       "element%s (%s at most), so more workers %s; cheaper work "
			       "will%s.\n",
			       cp->cpu_budget, cp->cpu_budget == 1 ? " is" : "s are",
			       /* the CPU the cores' rate allows (the model's, unless
				* the throughput seen was higher: capacity.c) */
			       tfd_fmt_ns((int64_t)llround(cp->cpu_budget * 1e9 / cp->cpu_rate), t1,
					  sizeof(t1)),
			       cp->cpu_step_ns > 0
				   ? " (the stages' work and the step's own compute)"
				   : " (the stages' work)",
			       r3, below ? seen : "will not help", below ? " go further" : "");
	}
	function_ops_line(p, p->bottleneck, b);
	if (p->latency_bottleneck >= 0 && p->latency_bottleneck != p->bottleneck)
		tfd_buf_printf(b,
			       "         latency view: %s owns %.1f%% of the consumer's wait, but "
			       "that is the tail of the producer's work, not what sets the rate.\n",
			       N(tfd_stage_label(p, p->latency_bottleneck, nm, sizeof(nm))),
			       100.0 * p->stages[p->latency_bottleneck].blocking_share);
}

static void sureness_line(const char *what, const struct tfd_sureness *c, struct tfd_buf *b)
{
	tfd_buf_printf(b, "         confidence in the %s: %s%s%s%s\n", what,
		       tfd_confidence_name(c->level), c->reasons[0] ? " (" : "", c->reasons,
		       c->reasons[0] ? ")" : "");
}

/* Why the latency view names the bottleneck: no model, or one that does not
 * explain the rate. */
static const char *latency_why(const struct tfd_pipeline *p, char *buf, size_t len)
{
	if (p->capacity.valid && p->capacity.unexplained)
		snprintf(buf, len,
			 "the work the capture shows explains %.0f%% of the rate; the rest is "
			 "per-element overhead no event covers, such as thread hand-offs "
			 "between the stages",
			 100.0 * p->capacity.explained);
	else
		snprintf(buf, len, "too few steady-state calls for a throughput model");
	return buf;
}

/* throughput_verdict()'s renewed of host f: what its waits are when its
 * dataset is iterated anew (when making the iterators is half the wait or
 * more, Keras fit on NumPy arrays, being made too), with the id of the
 * finding of class iterator_per_epoch that says so (TFD-H05, TFD-H11 over
 * a generator), "" else. */
static const char *renewed_why(const struct tfd_host_result *f, const struct tfd_findings *fs,
			       char *buf, size_t size)
{
	const char *rid = NULL;

	if (!tfd_repeated_iterators(f))
		return "";
	for (size_t i = 0; fs && i < fs->n && !rid; i++)
		if (strcmp(fs->v[i].class_name, "iterator_per_epoch") == 0 &&
		    strcmp(fs->v[i].host, f->host->name) == 0)
			rid = fs->v[i].rule_id;
	snprintf(buf, size, ", and the waits are %s%s%s%s",
		 2 * f->create_ns >= f->wait_ns ? "each new iterator being made and starting empty"
						: "where each new iterator starts empty",
		 rid ? " (" : "", rid ? rid : "", rid ? ")" : "");
	return buf;
}

/* The loop makes a new iterator each step: that, not a stage, holds it up. */
static void renewed_each_step(const struct tfd_host_result *f, struct tfd_buf *b)
{
	size_t made = tfd_focus_iterators(f);

	tfd_buf_printf(b,
		       "         bottleneck: a new iterator each step (%zu iterators of pipeline "
		       "%s's dataset over %zu steps): making them took %.1f%% of the time, "
		       "and each new one waits for its first element from empty (TFD-H09).\n",
		       made, N(f->pipelines[f->focus].name), f->all.nsteps,
		       tfd_host_part_pct(f, f->create_ns));
}

/* Host f's focus pipeline hands out every element at once: it keeps up,
 * unless its Python or its CPU slows the step all the same. */
static void keeps_up_line(const struct tfd_host_result *f, struct tfd_buf *b)
{
	const struct tfd_pipeline *p = &f->pipelines[f->focus];
	double py = tfd_python_busy_share(f), cpu = tfd_pipeline_cpu_share(f);
	bool says_py = py >= TFD_PYTHON_BUSY_SAYS, says_cpu = cpu >= TFD_PIPELINE_CPU_SAYS;

	tfd_buf_puts(b, "         no tf.data root call is slower than 50 us on this host: the "
			"input pipeline keeps up");
	if (says_py)
		tfd_buf_printf(b,
			       ", but it runs Python %.0f%% of the time and holds the GIL the "
			       "training loop needs (TFD-H04)",
			       100 * py);
	if (says_cpu)
		tfd_buf_printf(b,
			       "%s keeps %.2g of its %.3g cores busy, the cores the step computes "
			       "on (TFD-H07)",
			       says_py ? ", and" : ", but it", cpu * p->capacity.cpu_budget,
			       p->capacity.cpu_budget);
	tfd_buf_puts(b, says_py || says_cpu ? "; prefetch will not help.\n"
					    : "; look elsewhere (prefetch will not help).\n");
}

/* The line saying host f's focus pipeline filled a cache read back after
 * it, its stages below the cache stopped (tfd_cache_read_back); none
 * when it did not. */
static void cache_fill_line(const struct tfd_host_result *f, struct tfd_buf *b)
{
	if (tfd_cache_filled_in_capture(&f->pipelines[f->focus]) >= 0)
		tfd_buf_puts(b, "         the first steps filled a cache that the later ones "
				"read back: its stages below the cache ran no more after "
				"that.\n");
	else if (tfd_cache_read_back(f, (size_t)f->focus))
		tfd_buf_puts(b, "         that is the first epoch: it filled a cache that the "
				"later epochs read back, and its stages below the cache run "
				"no more (TFD-T18).\n");
}

/* The verdict's lines on host f's focus pipeline: what holds it up, and
 * how sure that is. */
static void bottleneck_lines(const struct tfd_host_result *f, const struct tfd_findings *fs,
			     struct tfd_buf *b)
{
	char why[200];
	const struct tfd_pipeline *p = &f->pipelines[f->focus];
	bool bn = tfd_host_has_bottleneck(f);
	const char *role = bn ? "bottleneck" : "slowest stage";

	if (tfd_iterator_per_step(f))
		renewed_each_step(f, b);
	else if (p->bottleneck >= 0 && tfd_stage_outlasted(&p->stages[p->bottleneck])) {
		tfd_buf_printf(b, "         %s: %s (%s) in pipeline %s: %s.\n", role,
			       N(p->stages[p->bottleneck].name),
			       N(p->stages[p->bottleneck].long_name), N(p->name),
			       tfd_outlasted_why(p, why, sizeof(why)));
		sureness_line(role, &p->confidence, b);
	} else if (p->max_ns <= TFD_SLOW_CALL_NS)
		keeps_up_line(f, b);
	else if (p->bottleneck >= 0 && TFD_CAPACITY_USABLE(p)) {
		throughput_verdict(p, bn, tfd_python_busy_share(f), tfd_pipeline_cpu_share(f),
				   renewed_why(f, fs, why, sizeof(why)), b);
		cache_fill_line(f, b);
		sureness_line(role, &p->confidence, b);
	} else if (p->bottleneck >= 0) {
		tfd_buf_printf(b,
			       "         %s: %s (%s) in pipeline %s, %.1f%% of "
			       "blocking time (latency view: %s)%s.\n",
			       role, N(p->stages[p->bottleneck].name),
			       N(p->stages[p->bottleneck].long_name), N(p->name),
			       100.0 * p->stages[p->bottleneck].blocking_share,
			       latency_why(p, why, sizeof(why)),
			       bn ? ""
				  : "; the host waits little, so it does not hold "
				    "training back");
		sureness_line(role, &p->confidence, b);
	}
}

static void verdict(const struct tfd_analysis *a, const struct tfd_findings *fs, struct tfd_buf *b)
{
	const struct tfd_host_result *f = a->nhosts ? &a->hosts[0] : NULL;
	char t1[32], shortw[512];

	if (tfd_analysis_too_short(a, shortw, sizeof(shortw)))
		tfd_buf_printf(b, "%s.\n\n", shortw);
	if (!a->any_tfdata && a->loop_in_function) {
		tfd_buf_puts(b,
			     "verdict: no training loop's tf.data iterator captured: the dataset "
			     "is iterated inside a tf.function (a for loop over a dataset there, "
			     "or ds.reduce, runs the whole loop in one ReduceDataset op), where no "
			     "IteratorGetNext waits for it and neither tfdoctor nor TensorFlow's "
			     "own analyzer can tell its input time. Iterate it outside the "
			     "function (for x in ds: train_step(x)), or call next(it) inside it "
			     "(for _ in tf.range(n): train_step(next(it))), and profile again.\n");
		return;
	}
	if (!a->any_tfdata) {
		tfd_buf_puts(b, "verdict: no tf.data activity captured. If the job uses tf.data, "
				"capture a longer profile (and make sure the input pipeline runs "
				"during it).\n");
		return;
	}
	if (f && !isnan(f->input_pct)) {
		char basis[96];

		if (strcmp(f->verdict_basis, "tf-convention") == 0)
			snprintf(basis, sizeof(basis),
				 "%zu of %zu step%s, TensorFlow's convention%s", f->tf.nsteps,
				 f->all.nsteps, f->all.nsteps == 1 ? "" : "s",
				 /* (the markers left the input out: share.c) */
				 f->gaps_counted ? ", each step to the next one's start" : "");
		else if (strcmp(f->verdict_basis, "steady-state") == 0)
			snprintf(basis, sizeof(basis), "steady state, %zu of %zu steps",
				 f->steady.nsteps, f->all.nsteps);
		else
			snprintf(basis, sizeof(basis), "%s", f->verdict_basis);
		if (f->has_device)
			device_verdict(f, basis, b);
		else
			tfd_buf_printf(b,
				       "verdict: %s input-bound: %.1f%% of step time on host %s is "
				       "spent waiting for input (%s).\n",
				       tfd_band_word(f->bound), f->input_pct, N(f->host->name),
				       basis);
		tfd_share_lines(f, b);
		sureness_line("verdict", &f->confidence, b);
	} else if (f)
		tfd_buf_printf(b,
			       "verdict: input-bound share unknown (no step markers or "
			       "IteratorGetNext events); slowest host pipeline call %s.\n",
			       tfd_fmt_ns(f->max_latency_ns, t1, sizeof(t1)));
	if (f && f->focus >= 0)
		bottleneck_lines(f, fs, b);
}

/* A segment's capacity and index, to sort by (the lowest first, unknown
 * last, then by index). */
struct seg_at {
	double capacity;
	int i;
};

static int seg_cap_cmp(const void *a, const void *b)
{
	const struct seg_at *p = a, *q = b;
	double x = p->capacity, y = q->capacity;

	if (isnan(x) != isnan(y))
		return isnan(x) ? 1 : -1;
	if (x != y && !isnan(x))
		return x < y ? -1 : 1;
	return p->i - q->i;
}

/* Whether the segments table shows g: not a reader thread that ran no
 * stage of its own (it only waits on the async stage below it, whose work
 * shows in that stage's segments). */
static bool shown(const struct tfd_segment *g)
{
	return !(g->kind == TFD_SEG_INPUT && g->top_stage < 0 && g->busy_ns == 0);
}

/* The capacity model's throughput line: the window, its pauses, the rates. */
static void throughput_line(struct tfd_buf *b, const struct tfd_capacity *cp)
{
	char t1[32], t2[32], r1[32], r2[32], pause[96] = "";

	if (cp->npauses)
		snprintf(pause, sizeof(pause), ", leaving out %s of %s between the steps",
			 tfd_fmt_ns(cp->pause_ns, t2, sizeof(t2)),
			 cp->npauses == 1 ? "a pause" : "pauses");
	tfd_fmt_rate(cp->throughput, r1, sizeof(r1));
	tfd_fmt_rate(cp->demand, r2, sizeof(r2));
	tfd_buf_printf(b,
		       "  throughput (steady state, %" PRIu64 " root elements in %s%s): %s; "
		       "the %s would take %s%s\n",
		       cp->root_elements, tfd_fmt_ns(cp->window_ns, t1, sizeof(t1)), pause, r1,
		       cp->demand_from_steps ? "training steps" : "consumer", r2,
		       cp->demand_from_steps ? " (its own consumer, a thread that buffers "
					       "elements for them, takes them as they come)"
					     : "");
}

/* The mark beside the lowest segment in the capacity table. */
static const char *limit_mark(const struct tfd_pipeline *p, bool bn)
{
	const struct tfd_capacity *cp = &p->capacity;

	if (!bn)
		return "  <- lowest capacity";
	if (cp->inferred)
		return "  <- limits (inferred)";
	/* the cores limit and the bottleneck, the stage taking the most CPU, is
	 * not the lowest segment's busiest stage, which mostly waits or takes
	 * less CPU (bottleneck.c) */
	if (p->bottleneck >= 0 && tfd_cores_limit(p) &&
	    p->segments[cp->limiter].top_stage != p->bottleneck)
		return tfd_limit_mostly_waits(p) ? "  <- lowest capacity (mostly waits)"
						 : "  <- lowest capacity (less CPU)";
	return "  <- limits throughput";
}

/* Segments by capacity, lowest (the limit) first. */
static void capacity_table(const struct tfd_pipeline *p, bool bn, struct tfd_buf *b)
{
	const struct tfd_capacity *cp = &p->capacity;
	struct seg_at *ord;
	char r1[32], t2[32], nm[160];
	size_t w = 50;

	if (!cp->valid)
		return;
	throughput_line(b, cp);
	for (size_t i = 0; i < p->nsegments; i++) {
		size_t l = strlen(N(tfd_segment_name(p, &p->segments[i], nm, sizeof(nm))));

		if (shown(&p->segments[i]) && l > w)
			w = l;
	}
	tfd_buf_printf(b, "    %-*s %5s %12s %6s %12s\n", (int)w, "segment (threads)", "par",
		       "work/elem", "busy", "capacity");
	ord = xmalloc((p->nsegments + 1) * sizeof(*ord));
	for (size_t i = 0; i < p->nsegments; i++)
		ord[i] = (struct seg_at){p->segments[i].capacity, (int)i};
	qsort(ord, p->nsegments, sizeof(*ord), seg_cap_cmp);
	for (size_t k = 0; k < p->nsegments; k++) {
		const struct tfd_segment *g = &p->segments[ord[k].i];

		if (!shown(g))
			continue;
		if (g->known)
			tfd_fmt_rate(g->capacity, r1, sizeof(r1));
		else
			snprintf(r1, sizeof(r1), "not captured");
		if (!g->known)
			snprintf(t2, sizeof(t2), "?");
		else
			tfd_fmt_ns((int64_t)llround(g->work_per_root_ns), t2, sizeof(t2));
		tfd_buf_printf(
		    b, "  %s %-*s %5.3g %12s %5.0f%% %12s%s\n", ord[k].i == cp->limiter ? ">" : " ",
		    (int)w, N(tfd_segment_name(p, g, nm, sizeof(nm))), g->parallelism, t2,
		    100 * g->utilization, r1, ord[k].i != cp->limiter ? "" : limit_mark(p, bn));
	}
	for (size_t k = 0; k < p->nsegments; k++) {
		const struct tfd_segment *g = &p->segments[ord[k].i];

		if (g->par_lo > 0 && g->par_hi > g->par_lo)
			tfd_buf_printf(b,
				       "    %s: parallelism went from %g to %g in the window "
				       "(AUTOTUNE); the time-weighted %.3g is used\n",
				       N(tfd_segment_name(p, g, nm, sizeof(nm))), g->par_lo,
				       g->par_hi, g->parallelism);
		if (g->cyc_lo > 0 && g->cyc_hi > g->cyc_lo)
			tfd_buf_printf(
			    b,
			    "    %s: cycle_length went from %g to %g in the window "
			    "(AUTOTUNE); the time-weighted value bounds its parallelism\n",
			    N(tfd_segment_name(p, g, nm, sizeof(nm))), g->cyc_lo, g->cyc_hi);
		if (g->buf_lo > 0 && g->buf_hi > g->buf_lo)
			tfd_buf_printf(b,
				       "    %s: buffer_limit went from %g to %g in the window "
				       "(AUTOTUNE)\n",
				       N(tfd_segment_name(p, g, nm, sizeof(nm))), g->buf_lo,
				       g->buf_hi);
	}
	free(ord);
}

/* The critical path, root first, each stage by its label. */
static void critpath_text(const struct tfd_pipeline *p, bool bn, struct tfd_buf *b)
{
	char t1[32], t2[32], lb[120];
	int w = 28;

	if (!p->ncritpath)
		return;
	tfd_buf_printf(b,
		       "  critical path (latency view over the %zu analyzed call%s, root -> "
		       "most blocking):\n",
		       p->nanalyzed, p->nanalyzed == 1 ? "" : "s");
	for (size_t i = 0; i < p->ncritpath; i++) {
		int l = (int)strlen(N(tfd_stage_label(p, p->critpath[i], lb, sizeof(lb))));

		w = l > w ? l : w;
	}
	for (size_t i = 0; i < p->ncritpath; i++) {
		const struct tfd_stage *s = &p->stages[p->critpath[i]];

		tfd_buf_printf(
		    b, "    %s %-*s blocking %10s  %5.1f%%  self %10s  calls %" PRIu64 "%s\n",
		    i + 1 == p->ncritpath ? "*" : "-", w,
		    N(tfd_stage_label(p, p->critpath[i], lb, sizeof(lb))),
		    tfd_fmt_ns(s->blocking_ns, t1, sizeof(t1)), 100.0 * s->blocking_share,
		    tfd_fmt_ns(s->self_ns, t2, sizeof(t2)), s->calls,
		    !s->is_bottleneck ? ""
		    : bn	      ? "  <- bottleneck"
				      : "  <- slowest stage");
	}
}

/* A fleet's text report stays readable: the hosts table lists the most
 * input-bound TEXT_HOST_ROWS hosts and the pipelines of the first
 * TEXT_HOST_SECTIONS are drawn (JSON holds every host). */
#define TEXT_HOST_ROWS 64
#define TEXT_HOST_SECTIONS 16

/* What a pipeline is, under its heading: a device's, a dataset iterated
 * anew, one read between the steps. */
static void pipeline_kind_text(const struct tfd_host_result *hr, const struct tfd_pipeline *p,
			       struct tfd_buf *b)
{
	/* the findings skip it (eval.c) */
	bool outside = p->outside_steps && (int)(p - hr->pipelines) != hr->focus;
	const char *own = p->repeat_of1 ? N(hr->pipelines[p->repeat_of1 - 1].name) : "";

	if (p->is_device)
		tfd_buf_puts(b, "  a device's pipeline (a distribution strategy's "
				"MultiDeviceIterator): its Generator\n  waits on the host "
				"pipeline that feeds it, which is where to look for the limit\n");
	if (p->repeat_of1)
		tfd_buf_printf(b,
			       "  the dataset of %s iterated anew (a new iterator, as each epoch "
			       "of `for x in ds:`\n  or of Keras fit on a dataset that ends "
			       "makes)%s%s%s\n",
			       own, outside ? "" : ": the findings are ", outside ? "" : own,
			       outside ? "" : "'s");
	if (outside)
		tfd_buf_puts(b, "  read between the training steps (as Keras' validation passes "
				"are): the\n  steps never wait on it, so no advice is given for "
				"its stages\n");
}

static void pipeline_text(const struct tfd_host_result *hr, const struct tfd_pipeline *p,
			  struct tfd_buf *b)
{
	char t1[32], t2[32], t3[32], t4[32], t5[32];
	/* a device pipeline is never the bottleneck: its slowest stage waits
	 * on the host pipeline that feeds it */
	bool bn = tfd_host_has_bottleneck(hr) && !p->is_device;

	tfd_buf_printf(b, "\npipeline %s (%s, root %s id %" PRId64 ")\n", N(p->name),
		       p->is_device ? "device" : "host", N(p->stages[0].long_name),
		       (int64_t)p->root_id);
	pipeline_kind_text(hr, p, b);
	if (!p->ncalls)
		tfd_buf_puts(b, "  calls 0: no call of its root ended in the capture\n");
	else
		tfd_buf_printf(
		    b,
		    "  calls %" PRIu64 ", slow (>50 us) %" PRIu64
		    ": min %s  p50 %s  avg %s  p95 %s  max %s\n",
		    p->ncalls, p->nslow, tfd_fmt_ns(p->min_ns, t1, sizeof(t1)),
		    tfd_fmt_ns(p->p50_ns, t2, sizeof(t2)), tfd_fmt_ns(p->avg_ns, t3, sizeof(t3)),
		    tfd_fmt_ns(p->p95_ns, t4, sizeof(t4)), tfd_fmt_ns(p->max_ns, t5, sizeof(t5)));
	tfd_buf_printf(b, "  analyzed %zu call%s (%s)%s", p->nanalyzed,
		       p->nanalyzed == 1 ? "" : "s",
		       p->analyzed_slow_only ? "slow calls" : "all calls", p->nwarmup ? "" : "\n");
	if (p->nwarmup)
		tfd_buf_printf(b, ", %zu warm-up call%s excluded\n", p->nwarmup,
			       p->nwarmup == 1 ? "" : "s");
	tfd_buf_puts(b, "  calls linked to their parent call:");
	{
		int first = 1;

		for (int k = 0; k < TFD_LINK__COUNT; k++)
			if (p->links[k]) {
				tfd_buf_printf(b, "%s %zu %s", first ? "" : ",", p->links[k],
					       link_names[k]);
				first = 0;
			}
		if (first)
			tfd_buf_puts(b, " none (root calls only)");
	}
	tfd_buf_puts(b, "\n");
	capacity_table(p, bn, b);
	critpath_text(p, bn, b);
	/* two windows, said: every call for what each stage did, the analyzed
	 * calls for where the consumer waited */
	tfd_buf_printf(b,
		       "  stages (calls, total, self: every call%s; blocking, share: the %zu "
		       "analyzed call%s):\n",
		       p->nwarmup ? ", warm-up included" : "", p->nanalyzed,
		       p->nanalyzed == 1 ? "" : "s");
	tfd_buf_printf(b, "  %-4s %-56s %8s %12s %12s %12s %7s\n", "", "stage", "calls", "total",
		       "self", "blocking", "share");
	for (size_t i = 0; i < p->nstages; i++) {
		const struct tfd_stage *s = &p->stages[i];
		char label[160];
		int ind = s->depth * 2 > 40 ? 40 : s->depth * 2;

		snprintf(label, sizeof(label), "%*s%s%s", ind, "", N(s->name),
			 s->is_async ? " (async)" : "");
		tfd_buf_printf(b, "  %-4s %-56s %8" PRIu64 " %12s %12s %12s %6.1f%%\n",
			       s->is_bottleneck	     ? (bn ? "[B]" : "[S]")
			       : s->on_critical_path ? " * "
						     : "",
			       label, s->calls_all, tfd_fmt_ns(s->total_all_ns, t1, sizeof(t1)),
			       tfd_fmt_ns(s->self_all_ns, t2, sizeof(t2)),
			       tfd_fmt_ns(s->blocking_ns, t3, sizeof(t3)),
			       100.0 * s->blocking_share);
	}
}

/* " on 8 of 8 hosts (worker-0, worker-1, ..., worker-7)" for the group
 * whose first finding is i */
static void group_hosts(const struct tfd_findings *f, const size_t *g, size_t i, size_t nhosts,
			struct tfd_buf *b)
{
	size_t shown[4], k, n = tfd_findings_group_shown(f, g, i, shown, &k);

	tfd_buf_printf(b, " on %zu of %zu hosts (", n, nhosts);
	for (size_t m = 0; m < k; m++)
		tfd_buf_printf(b, "%s%s",
			       m == 0		 ? ""
			       : m == 2 && n > 4 ? ", ..., "
						 : ", ",
			       f->v[shown[m]].host);
	tfd_buf_puts(b, ")");
}

/* Where finding i holds (its group's, when many): "(host Host:0, Map)",
 * or "(Host:0, Map) on 3 of 4 hosts (...)". */
static void finding_place(const struct tfd_findings *f, const size_t *g, size_t i, bool many,
			  size_t nhosts, struct tfd_buf *w)
{
	const struct tfd_finding *x = &f->v[i];
	char lb[120];
	const char *stage = N(tfd_finding_stage(x, lb, sizeof(lb)));

	if (many && stage[0])
		tfd_buf_printf(w, "(%s, %s)", x->pipeline, stage);
	else if (many && x->pipeline[0])
		tfd_buf_printf(w, "(%s)", x->pipeline);
	else if (stage[0])
		tfd_buf_printf(w, "(%s %s, %s)", x->host, x->pipeline, stage);
	else if (x->pipeline[0])
		tfd_buf_printf(w, "(%s %s)", N(x->host), N(x->pipeline));
	else if (!many)
		tfd_buf_printf(w, "(%s)", N(x->host));
	if (many)
		group_hosts(f, g, i, nhosts, w);
}

/* A finding's title, place and suggestion, wrapped; its code as it is. */
static void finding_head(const struct tfd_finding *x, const struct tfd_buf *w, int width,
			 struct tfd_buf *b)
{
	struct tfd_buf t;

	tfd_buf_init(&t);
	tfd_buf_printf(&t, "  [%s] %s %s", tfd_severity_name(x->severity), x->rule_id, x->title);
	/* the place on the title's line when it fits, else on a line of its
	 * own (a host name is not broken in two) */
	if (w->len && t.len + 2 + w->len <= (size_t)width)
		tfd_buf_printf(&t, "  %s", w->s[0] == ' ' ? w->s + 1 : w->s);
	else if (w->len)
		tfd_buf_printf(&t, "\n    %s", w->s[0] == ' ' ? w->s + 1 : w->s);
	tfd_buf_printf(&t, "\n    %s", x->suggestion);
	tfd_buf_puts(b, "\n");
	wrap(b, width, t.s, 4);
	tfd_buf_puts(b, "\n");
	tfd_buf_release(&t);
	for (const char *p = x->code; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		tfd_buf_printf(b, "      %.*s\n", (int)n, p);
		p += n + (nl ? 1 : 0);
	}
}

/* Root calls in host h's host pipelines (none: each root call outlasted
 * the capture, and there is no latency to show). */
static uint64_t root_calls(const struct tfd_host_result *h)
{
	uint64_t n = 0;

	for (size_t p = 0; p < h->npipelines; p++)
		if (!h->pipelines[p].is_device)
			n += h->pipelines[p].ncalls;
	return n;
}

static void findings_text(const struct tfd_findings *f, size_t nhosts, int width, struct tfd_buf *b)
{
	struct tfd_buf t, w;
	size_t *g;

	if (!f || !f->n)
		return;
	g = tfd_findings_groups(f);
	tfd_buf_puts(b, "\nfindings (largest estimated gain first):\n");
	for (size_t i = 0; i < f->n; i++) {
		const struct tfd_finding *x = &f->v[i];
		bool many = false;

		if (g[i] != i)
			continue;
		for (size_t j = i + 1; j < f->n && !many; j++)
			many = g[j] == i;
		tfd_buf_init(&w);
		finding_place(f, g, i, many, nhosts, &w);
		finding_head(x, &w, width, b);
		tfd_buf_release(&w);
		if (x->estimate.known) {
			/* the model and its factor are in the JSON; the reader
			 * gets the sentence */
			tfd_buf_init(&t);
			if (many)
				tfd_buf_printf(
				    &t,
				    "    worth on %s, the host with the largest gain: ", x->host);
			else
				tfd_buf_puts(&t, "    worth: ");
			tfd_fmt_worth(&x->estimate, &t);
			wrap(b, width, t.s, 6);
			tfd_buf_puts(b, "\n");
			tfd_buf_release(&t);
		}
		if (x->doc[0])
			tfd_buf_printf(b, "    see %s\n", x->doc);
	}
	free(g);
}

void tfd_render_text(const struct tfd_analysis *a, const struct tfd_findings *f, struct tfd_buf *b)
{
	tfd_render_text_w(a, f, 80, b);
}

void tfd_render_text_w(const struct tfd_analysis *a, const struct tfd_findings *f, int width,
		       struct tfd_buf *b)
{
	char t1[32], t2[32], t3[32];
	size_t wname = 32;
	struct tfd_buf t;

	if (width < 40)
		width = 40;
	tfd_buf_init(&t);
	verdict(a, f, &t);
	wrap(b, width, t.s ? t.s : "", 9);
	tfd_buf_release(&t);
	tfd_buf_init(&t);
	tfd_stragglers_text(a, &t);
	if (t.len) {
		tfd_buf_puts(b, "\n");
		wrap(b, width, t.s, 11);
	}
	tfd_buf_release(&t);
	findings_text(f, a->nhosts, width, b);
	/* per step: a total over 38 steps read as one step's time */
	tfd_buf_puts(b, "\n");
	wrap(b, width,
	     "hosts (most input-bound first; waiting and step time are per step, over the "
	     "steps the verdict counts):\n",
	     2);
	/* the host column as wide as the longest name, up to 60; a longer
	 * name stands on its own line above its numbers */
	for (size_t i = 0; i < a->nhosts; i++) {
		size_t l = strlen(N(a->hosts[i].host->name));

		if (l > wname)
			wname = l > 60 ? 60 : l;
	}
	tfd_buf_printf(b, "  %-*s %9s %12s %12s %6s %10s  %s\n", (int)wname, "host", "input %",
		       "waiting", "step time", "steps", "pipelines", "slowest call");
	for (size_t i = 0; i < a->nhosts && i < TEXT_HOST_ROWS; i++) {
		const struct tfd_host_result *h = &a->hosts[i];
		bool per = strcmp(h->input_basis, "steps") == 0 && h->nsteps;
		char pct[16];

		if (isnan(h->input_pct))
			snprintf(pct, sizeof(pct), "n/a");
		else
			snprintf(pct, sizeof(pct), "%.1f", h->input_pct);
		if (per) {
			tfd_fmt_ns(h->wait_ns / (int64_t)h->nsteps, t1, sizeof(t1));
			tfd_fmt_ns(h->step_ns / (int64_t)h->nsteps, t2, sizeof(t2));
		} else {
			/* no steps: the capture span is the only basis, said as such */
			snprintf(t1, sizeof(t1), "-");
			snprintf(t2, sizeof(t2), "-");
		}
		if (strlen(N(h->host->name)) > wname)
			tfd_buf_printf(b, "  %s\n", N(h->host->name));
		tfd_buf_printf(b, "  %-*s %9s %12s %12s %6zu %10zu  %s\n", (int)wname,
			       strlen(N(h->host->name)) > wname ? "" : N(h->host->name), pct, t1,
			       t2, h->nsteps, h->npipelines,
			       !h->nhost_pipelines ? "- (device pipelines only)"
			       : root_calls(h)	   ? tfd_fmt_ns(h->max_latency_ns, t3, sizeof(t3))
						   : "- (no root call ended)");
	}
	if (a->nhosts > TEXT_HOST_ROWS)
		tfd_buf_printf(b,
			       "  ... and %zu more hosts, less input-bound (-f json lists every "
			       "host)\n",
			       a->nhosts - TEXT_HOST_ROWS);
	for (size_t i = 0; i < a->nhosts && i < TEXT_HOST_SECTIONS; i++) {
		const struct tfd_host_result *h = &a->hosts[i];

		if (!h->npipelines)
			continue;
		tfd_buf_printf(b, "\n== host %s%s\n", N(h->host->name),
			       i == 0 ? " (analyzed first)" : "");
		for (size_t p = 0; p < h->npipelines; p++)
			pipeline_text(h, &h->pipelines[p], b);
	}
	if (a->nhosts > TEXT_HOST_SECTIONS)
		tfd_buf_printf(b,
			       "\n(the pipelines of the %zu most input-bound hosts are shown; "
			       "-f json holds every host's)\n",
			       (size_t)TEXT_HOST_SECTIONS);
	if (a->ndiags) {
		tfd_buf_puts(b, "\nnotes:\n");
		for (size_t i = 0; i < a->ndiags; i++) {
			tfd_buf_init(&t);
			tfd_buf_printf(&t, "  %s: %s\n", a->diags[i].host, a->diags[i].msg);
			wrap(b, width, t.s, 4);
			tfd_buf_release(&t);
		}
	}
}
