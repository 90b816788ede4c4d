/* regress.c - a job's run against its history: what is recorded, the
 * window of past runs, and the regressions (nightly.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tfd/families.h"
#include "tfd/fmt.h"
#include "tfd/history.h"
#include "tfd/imap.h"
#include "tfd/regress.h"

/* ---- recording and comparing -------------------------------------------- */

/* The identity of what was analyzed: each host file's path, size and
 * modification time (when it can be seen), summed so the hosts' order does
 * not matter. The same run analyzed twice has the same identity; a file
 * rewritten in place does not. */
static void capture_identity(const struct tfd_analysis *a, char *out, size_t len)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < a->nhosts; i++) {
		const struct tfd_host *host = a->hosts[i].host;
		uint64_t h = tfd_fnv_bytes(TFD_FNV_BASIS, host->path, strlen(host->path) + 1);
		struct stat st;

		h = tfd_fnv_bytes(h, host->name, strlen(host->name) + 1);
		if (stat(host->path, &st) == 0) {
			int64_t v[3] = {(int64_t)st.st_size, (int64_t)st.st_mtim.tv_sec,
					(int64_t)st.st_mtim.tv_nsec};

			h = tfd_fnv_bytes(h, v, sizeof(v));
		}
		sum += h;
	}
	snprintf(out, len, "%016" PRIx64, sum);
}

void tfd_nightly_record(struct tfd_job *job, const char *run, const char *source,
			const char *recorded_at)
{
	const struct tfd_analysis *a = job->analysis;
	struct tfd_hist_run *r = &job->current;

	memset(r, 0, sizeof(*r));
	tfd_hist_set(&r->job, job->name);
	tfd_hist_set(&r->run, run);
	tfd_hist_set(&r->source, source);
	snprintf(r->recorded_at, sizeof(r->recorded_at), "%s", recorded_at);
	capture_identity(a, r->capture, sizeof(r->capture));
	r->hosts = xcalloc(a->nhosts + 1, sizeof(*r->hosts));
	r->nhosts = a->nhosts;
	for (size_t i = 0; i < a->nhosts; i++) {
		const struct tfd_host_result *h = &a->hosts[i];
		struct tfd_hist_host *x = &r->hosts[i];

		tfd_hist_set(&x->host, h->host->name);
		tfd_hist_set(&x->bottleneck, "");
		tfd_hist_set(&x->bottleneck_long_name, "");
		tfd_hist_set(&x->top_rule, "");
		tfd_hist_set(&x->top_title, "");
		x->rank = (int)i;
		x->input_percent = h->input_pct;
		snprintf(x->bound, sizeof(x->bound), "%s", tfd_bound_name(h->bound));
		if (h->focus >= 0) {
			const struct tfd_pipeline *p = &h->pipelines[h->focus];

			x->max_latency_ns = p->max_ns;
			x->p50_ns = p->p50_ns;
			x->p95_ns = p->p95_ns;
			x->calls = (int64_t)p->ncalls;
			x->slow_calls = (int64_t)p->nslow;
			snprintf(x->pipeline, sizeof(x->pipeline), "%s", p->name);
			/* a host that is not input-bound has no bottleneck to
			 * record (its slowest stage moving is no regression) */
			if (tfd_host_has_bottleneck(h) && tfd_h2d_dominates(h)) {
				/* the input is mostly copies to the device: that
				 * is what limits, not a pipeline stage */
				tfd_hist_set(&x->bottleneck, "copies to the device");
				tfd_hist_set(&x->bottleneck_long_name, "host-to-device");
				x->bottleneck_share = 0;
			} else if (p->bottleneck >= 0 && tfd_host_has_bottleneck(h)) {
				tfd_hist_set(&x->bottleneck, p->stages[p->bottleneck].name);
				tfd_hist_set(&x->bottleneck_long_name,
					     p->stages[p->bottleneck].long_name);
				x->bottleneck_share = p->stages[p->bottleneck].blocking_share;
			}
		}
		/* the most severe finding about this host (the first of them in
		 * the findings' order, which is by gain) */
		{
			const struct tfd_finding *top = NULL;

			for (size_t k = 0; job->findings && k < job->findings->n; k++) {
				const struct tfd_finding *f = &job->findings->v[k];

				if (strcmp(f->host, h->host->name) == 0 &&
				    (!top || f->severity > top->severity))
					top = f;
			}
			if (top) {
				tfd_hist_set(&x->top_rule, top->rule_id);
				snprintf(x->top_severity, sizeof(x->top_severity), "%s",
					 tfd_severity_name(top->severity));
				tfd_hist_set(&x->top_title, top->title);
			}
		}
	}
}

static void add_reg(struct tfd_job *job, const char *kind, const char *against, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));

static void add_reg(struct tfd_job *job, const char *kind, const char *against, const char *fmt,
		    ...)
{
	struct tfd_regression *r;
	va_list ap;

	job->regs = xrealloc(job->regs, (job->nregs + 1) * sizeof(*job->regs));
	r = &job->regs[job->nregs++];
	snprintf(r->kind, sizeof(r->kind), "%s", kind);
	snprintf(r->against, sizeof(r->against), "%s", against);
	va_start(ap, fmt);
	vsnprintf(r->text, sizeof(r->text), fmt, ap);
	va_end(ap);
}

static const struct tfd_hist_host *same_host(const struct tfd_hist_run *r,
					     const struct tfd_hist_host *x)
{
	for (size_t i = 0; i < r->nhosts; i++)
		if (strcmp(r->hosts[i].host, x->host) == 0)
			return &r->hosts[i];
	return r->nhosts ? &r->hosts[0] : NULL; /* hosts renamed: compare the focus hosts */
}

/* One run to compare with: the previous run or the baseline. */
struct cmp {
	const struct tfd_hist_run *run;
	const struct tfd_hist_host *host; /* its counterpart of the focus host */
	const char *against;		  /* "previous" or "baseline" */
	const char *since;		  /* "since the previous run (R)" ... */
	char label[160];
};

static bool grew(int64_t now, int64_t then, double pct)
{
	return then > 0 && (double)now > (double)then * (1.0 + pct / 100.0);
}

/* Append "; " between the comparisons that hold. */
static void part(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void part(char *buf, size_t len, const char *fmt, ...)
{
	size_t l = strlen(buf);
	va_list ap;

	if (l && l + 2 < len) {
		memcpy(buf + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + l, len - l, fmt, ap);
	va_end(ap);
}

/* One regression per fact, naming every comparison it holds against. */
static void compare_latency(struct tfd_job *job, const struct tfd_hist_host *x, const struct cmp *c,
			    size_t nc, double pct, bool median)
{
	char parts[256] = "", against[32] = "", t1[32], t2[32];
	int64_t now = median ? x->p50_ns : x->max_latency_ns;

	for (size_t i = 0; i < nc; i++) {
		int64_t then = median ? c[i].host->p50_ns : c[i].host->max_latency_ns;

		if (!grew(now, then, pct))
			continue;
		if ((double)now >= 10.0 * (double)then)
			part(parts, sizeof(parts), "%.0fx %s (%s)", (double)now / (double)then,
			     c[i].label, tfd_fmt_ns(then, t1, sizeof(t1)));
		else
			part(parts, sizeof(parts), "%+.0f%% %s (%s)",
			     100.0 * ((double)now / (double)then - 1.0), c[i].label,
			     tfd_fmt_ns(then, t1, sizeof(t1)));
		part(against, sizeof(against), "%s", c[i].against);
	}
	if (parts[0])
		add_reg(job, "latency", against, "%s: %s latency %s: %s", x->host,
			median ? "median" : "max", tfd_fmt_ns(now, t2, sizeof(t2)), parts);
}

static void compare_rest(struct tfd_job *job, const struct tfd_hist_host *x, const struct cmp *c,
			 size_t nc)
{
	char pin[256] = "", ain[32] = "", pbn[256] = "", abn[32] = "", psv[256] = "", asv[32] = "";

	for (size_t i = 0; i < nc; i++) {
		const struct tfd_hist_host *o = c[i].host;

		if (!isnan(x->input_percent) && !isnan(o->input_percent) &&
		    x->input_percent >= o->input_percent + 5.0) {
			part(pin, sizeof(pin), "%+.1f points %s (%.1f%%)",
			     x->input_percent - o->input_percent, c[i].label, o->input_percent);
			part(ain, sizeof(ain), "%s", c[i].against);
		}
		/* the same stage made parallel (Map -> ParallelMapV2), or under a
		 * prefetch or a repeat() added above it, did not move */
		if (o->bottleneck[0] && x->bottleneck[0] &&
		    strcmp(o->bottleneck_long_name, x->bottleneck_long_name) &&
		    !tfd_same_stage_moved(o->bottleneck_long_name, x->bottleneck_long_name)) {
			part(pbn, sizeof(pbn), "from %s %s", o->bottleneck, c[i].label);
			part(abn, sizeof(abn), "%s", c[i].against);
		}
		/* a more severe top finding, or another rule at the same
		 * severity (a new problem of that weight), unless the host waits
		 * 5 points less than then: the old problem was fixed and the
		 * next limit shows (a map made parallel: T01, then T04) */
		if ((tfd_severity_parse(x->top_severity) > tfd_severity_parse(o->top_severity) ||
		     (tfd_severity_parse(x->top_severity) == tfd_severity_parse(o->top_severity) &&
		      x->top_rule[0] && o->top_rule[0] && strcmp(x->top_rule, o->top_rule) != 0 &&
		      !(x->input_percent <= o->input_percent - 5.0))) &&
		    tfd_severity_parse(x->top_severity) >= TFD_SEV_MEDIUM) {
			part(psv, sizeof(psv), "%s", c[i].label);
			part(asv, sizeof(asv), "%s", c[i].against);
		}
	}
	if (pin[0])
		add_reg(job, "input", ain, "%s: waiting for input %.1f%% of step time: %s", x->host,
			x->input_percent, pin);
	if (pbn[0])
		add_reg(job, "bottleneck", abn, "%s: bottleneck moved to %s (%s)", x->host,
			x->bottleneck, pbn);
	if (psv[0])
		add_reg(job, "severity", asv, "%s: new %s finding %s (%s): %s", x->host,
			x->top_severity, x->top_rule, x->top_title, psv);
}

void tfd_nightly_compare(struct tfd_job *job, double pct)
{
	struct cmp c[2];
	size_t nc = 0;
	const struct tfd_hist_host *x;

	if (!job->current.nhosts)
		return;
	x = &job->current.hosts[0]; /* the focus host */
	if (job->previous && (c[nc].host = same_host(job->previous, x)) != NULL) {
		c[nc].run = job->previous;
		c[nc].against = "previous";
		snprintf(c[nc].label, sizeof(c[nc].label), "since the previous run, %s",
			 job->previous->run);
		nc++;
	}
	if (job->baseline && job->baseline != job->previous &&
	    (c[nc].host = same_host(job->baseline, x)) != NULL) {
		c[nc].run = job->baseline;
		c[nc].against = "baseline";
		snprintf(c[nc].label, sizeof(c[nc].label), "against the baseline, %s",
			 job->baseline->run);
		nc++;
	}
	if (!nc)
		return;
	compare_latency(job, x, c, nc, pct, false);
	compare_latency(job, x, c, nc, pct, true);
	compare_rest(job, x, c, nc);
}

enum tfd_status tfd_nightly_window(struct tfd_job *j, struct tfd_history *db, bool recorded,
				   const char *baseline, size_t limit, struct tfd_err *err)
{
	size_t cur;

	if (db && tfd_history_runs(db, j->name, limit, &j->history, &j->nhistory, err))
		return err->status;
	j->nrecorded = j->nhistory;
	if (!recorded) {
		/* show the current run as the newest point without storing it */
		j->history = xrealloc(j->history, (j->nhistory + 1) * sizeof(*j->history));
		tfd_hist_run_copy(&j->history[j->nhistory], &j->current);
		j->nhistory++;
	}
	cur = j->nhistory - 1;
	j->previous = cur > 0 ? &j->history[cur - 1] : NULL;
	j->baseline = cur > 0 ? &j->history[0] : NULL;
	if (!baseline)
		return TFD_OK;
	j->baseline = NULL;
	for (size_t k = cur; k-- > 0;)
		if (strcmp(j->history[k].run, baseline) == 0) {
			j->baseline = &j->history[k];
			return TFD_OK;
		}
	return tfd_fail(err, TFD_E_USAGE, "report: no recorded run '%s' for job '%s'", baseline,
			j->name);
}

void tfd_nightly_job_release(struct tfd_job *job)
{
	tfd_hist_run_release(&job->current);
	tfd_hist_runs_free(job->history, job->nhistory);
	free(job->regs);
	free(job->critpath_svg);
	memset(job, 0, sizeof(*job));
}
