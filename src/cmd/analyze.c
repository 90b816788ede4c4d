/* analyze.c - `tfdoctor analyze`: is the job input-bound, where, and why. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "tfd/analysis.h"
#include "tfd/app.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/load.h"
#include "tfd/outfile.h"
#include "tfd/partial.h"
#include "tfd/render.h"
#include "tfd/rules.h"
#include "tfd/xprof.h"

struct run_ctx {
	struct tfd_load_opts *lo;
	const struct tfd_analyze_opts *ao;
	const struct tfd_ruleset *rules;
	const char *format, *mode, *fail_on, *outpath;
	int fail_sev, quiet, partial;
	bool merging; /* the inputs are partial results (checked once, in main) */
};

/* All of paths are partial results (0), none are (1), or a mix (-1). */
static int partial_inputs(const char *const *paths, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += tfd_partial_path(paths[i]);
	return k == 0 ? 1 : k == n ? 0 : -1;
}

/* --mode xprof: TensorFlow's removed analysis on a loaded capture. */
static int xprof_one(const struct run_ctx *rx, const struct tfd_capture *cap, struct tfd_buf *b)
{
	struct tfd_xprof *xp = NULL;
	struct tfd_err err = {0};
	int rc = 0;

	if (tfd_xprof_run(cap, &xp, &err))
		return tfd_cli_report(&err);
	if (strcmp(rx->format, "gviz") == 0)
		tfd_xprof_gviz(xp, b);
	else if (strcmp(rx->format, "json") == 0)
		tfd_xprof_json(xp, b);
	else
		tfd_xprof_text(xp, b);
	if (rx->fail_on && rx->fail_sev < 0 && tfd_xprof_is_input_bound(xp))
		rc = 3;
	tfd_xprof_free(xp);
	return rc;
}

/* The analysis of paths into *an: partials merged, a run or log directory
 * one host file at a time (its partial written from the merged result as
 * from one load: unit test by_file_matches_one_load), else one load; or
 * (xprof mode) the capture into *cap, rendered already (*done). 0 or an
 * exit code. */
static int load_one(const struct run_ctx *rx, const char *const *paths, size_t npaths,
		    struct tfd_capture **cap, struct tfd_analysis **an, struct tfd_buf *b,
		    bool *done)
{
	struct tfd_err err = {0};
	bool xprof = strcmp(rx->mode, "xprof") == 0;

	*done = false;
	if (rx->merging)
		return tfd_partial_merge(paths, npaths, rx->ao, an, &err) ? tfd_cli_report(&err)
									  : 0;
	if (!xprof) {
		if (tfd_analyze_paths(paths, npaths, rx->lo, rx->ao, an, &err))
			return tfd_cli_report(&err);
		return tfd_cli_guard_output(rx->outpath, NULL, 0, NULL, NULL, NULL, *an) ? 2 : 0;
	}
	if (tfd_capture_load(paths, npaths, rx->lo, cap, &err))
		return tfd_cli_report(&err);
	if (tfd_cli_guard_output(rx->outpath, NULL, 0, NULL, NULL, *cap, NULL))
		return 2;
	*done = true;
	return xprof_one(rx, *cap, b);
}

/* Render an analysis: the findings, the report, the notes; 3 when a
 * --fail-on gate trips. */
static int render_one(const struct run_ctx *rx, const struct tfd_analysis *an, struct tfd_buf *b)
{
	struct tfd_findings findings = {0};
	int rc = 0;

	tfd_rules_eval(rx->rules, an, &findings);
	if (strcmp(rx->format, "json") == 0)
		tfd_render_json(an, &findings, b);
	else
		tfd_render_text_w(an, &findings, tfd_cli_text_width(rx->outpath), b);
	for (size_t i = 0; !rx->quiet && i < an->ndiags; i++)
		tfd_cli_note(an->diags[i].host, an->diags[i].msg);
	if (rx->fail_on && rx->fail_sev < 0 && an->input_bound)
		rc = 3;
	if (rx->fail_sev >= 0 && findings.n && (int)findings.max_severity >= rx->fail_sev)
		rc = 3;
	tfd_findings_free(&findings);
	return rc;
}

/* Load, analyze and render one capture (or run) into b: 0, 3 (a gate
 * tripped), or 1/2 after printing the error. */
static int analyze_one(const struct run_ctx *rx, const char *const *paths, size_t npaths,
		       struct tfd_buf *b)
{
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *an = NULL;
	bool done;
	int rc = load_one(rx, paths, npaths, &cap, &an, b, &done);

	if (rc || done)
		goto out;
	if (!rx->merging && rx->ao->rank_set && an->nhosts && an->hosts[0].focus >= 0 &&
	    an->hosts[0].pipelines[an->hosts[0].focus].analyzed_rank < 0) {
		const struct tfd_pipeline *p = &an->hosts[0].pipelines[an->hosts[0].focus];

		rc = tfd_cli_usage("analyze",
				   "pipeline %s has %" PRIu64 " root call%s; no rank %d "
				   "(ranks start at 0)",
				   p->name, p->ncalls, p->ncalls == 1 ? "" : "s", rx->ao->rank);
	} else if (!rx->merging && rx->partial) {
		char tmp[512];

		tfd_partial_write(
		    an, rx->ao, npaths == 1 ? tfd_cli_base_name(paths[0], tmp, sizeof(tmp)) : NULL,
		    b);
		for (size_t i = 0; !rx->quiet && i < an->ndiags; i++)
			tfd_cli_note(an->diags[i].host, an->diags[i].msg);
	} else {
		rc = render_one(rx, an, b);
	}
out:
	tfd_analysis_free(an);
	tfd_capture_free(cap);
	return rc;
}

/* What the command line asked, checked. */
struct args {
	struct tfd_load_opts lo;
	struct tfd_analyze_opts ao;
	const char *format, *outpath, *mode, *fail_on, *rules_dir;
	int fail_sev, quiet, partial, all_runs, inputs, first;
};

/* --shard I/N into lo; 0, or 2 after the usage error. */
static int shard_arg(const char *v, struct tfd_load_opts *lo)
{
	unsigned long i, n;
	char slash, extra;

	if (sscanf(v, "%lu%c%lu%c", &i, &slash, &n, &extra) != 3 || slash != '/' || n == 0 ||
	    i >= n || n > 1000000 || v[0] == '-' || strchr(v, '-'))
		return tfd_cli_usage("analyze", "--shard needs I/N with 0 <= I < N, e.g. "
						"--shard 3/8");
	lo->shard_index = i;
	lo->shard_count = n;
	return 0;
}

/* The combinations of options and inputs analyze and merge refuse. */
static int check_args(const struct args *a, const char *cmd, int merge, int argc, char **argv)
{
	if (strcmp(a->mode, "default") && strcmp(a->mode, "xprof"))
		return tfd_cli_usage("analyze", "unknown mode '%s' (default or xprof)", a->mode);
	if (strcmp(a->format, "text") && strcmp(a->format, "json") &&
	    (strcmp(a->format, "gviz") || strcmp(a->mode, "xprof")))
		return tfd_cli_usage("analyze",
				     "unknown format '%s' (text or json; gviz with --mode "
				     "xprof)",
				     a->format);
	if (a->first >= argc)
		return tfd_cli_usage(cmd, merge ? "no partial given" : "no capture given");
	if (a->lo.shard_count && !a->partial)
		return tfd_cli_usage("analyze", "--shard goes with --partial (one fleet task's "
						"share of the host files)");
	if (a->partial && (strcmp(a->mode, "default") || a->all_runs || a->fail_on ||
			   a->rules_dir || strcmp(a->format, "text")))
		return tfd_cli_usage("analyze",
				     "--partial writes the partial result only: no "
				     "--mode, --all-runs, --format, --rules or --fail-on "
				     "(give those to merge)");
	if (a->inputs < 0)
		return tfd_cli_usage(cmd,
				     "give either captures or *.partial.json partials, not both");
	if (a->inputs == 1 && merge)
		return tfd_cli_usage("merge",
				     "'%s' is not a partial result (*%s, or a "
				     "directory of them); make them with "
				     "'tfdoctor analyze --partial'",
				     argv[a->first], TFD_PARTIAL_SUFFIX);
	if (a->inputs == 0 && (a->partial || strcmp(a->mode, "default") || a->all_runs))
		return tfd_cli_usage(cmd, "partials are merged: no --partial, --mode or "
					  "--all-runs with them");
	return 0;
}

/* The options into a; 0, or the exit code of a usage error or --help (-1: 0). */
static int analyze_args(struct args *a, int argc, char **argv, int merge)
{
	const char *cmd = merge ? "merge" : "analyze";
	struct cli_opts o;
	int rc = tfd_cli_parse(merge ? &tfd_spec_merge : &tfd_spec_analyze, argc, argv, &o);

	if (rc)
		return rc == 1 ? -1 : rc;
	memset(a, 0, sizeof(*a));
	a->format = o.v[OPT_FORMAT] ? o.v[OPT_FORMAT] : "text";
	a->outpath = o.v[OPT_OUTPUT];
	a->mode = o.v[OPT_MODE] ? o.v[OPT_MODE] : "default";
	a->fail_on = o.v[OPT_FAIL_ON];
	a->rules_dir = o.v[OPT_RULES];
	a->quiet = o.v[OPT_QUIET] != NULL;
	a->partial = o.v[OPT_PARTIAL] != NULL;
	a->all_runs = o.v[OPT_ALL_RUNS] != NULL;
	a->ao.host = o.v[OPT_HOST];
	a->ao.no_warmup = o.v[OPT_NO_WARMUP] != NULL;
	a->ao.allow_mixed = o.v[OPT_ALLOW_MIXED] != NULL;
	if (tfd_cli_load_opts("analyze", &o, &a->lo))
		return 2;
	a->ao.low_memory = a->lo.leave_in_file = o.v[OPT_LOW_MEMORY] != NULL;
	if (o.v[OPT_SHARD] && shard_arg(o.v[OPT_SHARD], &a->lo))
		return 2;
	if (o.v[OPT_RANK] && tfd_cli_rank("analyze", o.v[OPT_RANK], &a->ao.rank))
		return 2;
	a->ao.rank_set = o.v[OPT_RANK] != NULL;
	if (tfd_cli_fail_on("analyze", a->fail_on, 0, &a->fail_sev))
		return 2;
	a->first = o.args;
	if (a->first < argc)
		a->inputs =
		    partial_inputs((const char *const *)argv + a->first, (size_t)(argc - a->first));
	return check_args(a, cmd, merge, argc, argv);
}

/* --all-runs: every run of one log directory, one section (or JSON array
 * element) each; the worst exit code. */
static int analyze_all_runs(struct run_ctx *run, struct tfd_load_opts *lo, const char *dir,
			    struct tfd_buf *b)
{
	struct tfd_err err = {0};
	char **runs = NULL;
	size_t nruns = 0;
	bool text = strcmp(run->format, "text") == 0;
	int rc = 0;

	if (tfd_capture_runs(dir, &runs, &nruns, &err))
		return tfd_cli_report(&err);
	if (!text)
		tfd_buf_puts(b, "[\n");
	for (size_t r = 0; r < nruns && rc != 1 && rc != 2; r++) {
		int one;

		lo->run = runs[r];
		if (text)
			tfd_buf_printf(b, "%s== run %s\n\n", r ? "\n" : "", runs[r]);
		else if (r)
			tfd_buf_puts(b, ",\n");
		one = analyze_one(run, &dir, 1, b);
		if (one > rc)
			rc = one;
	}
	if (!text)
		tfd_buf_puts(b, "]\n");
	for (size_t r = 0; r < nruns; r++)
		free(runs[r]);
	free(runs);
	return rc;
}

/* A JSON report written out as it is made (tfd_buf_drain(): a fleet's
 * report is tens of megabytes), its output opened at the first write. */
struct report_out {
	struct tfd_buf_out base;
	const char *path;
	struct tfd_output o;
	bool opened;
	struct tfd_err err;
};

static bool report_write(void *ctx, const char *s, size_t len)
{
	struct report_out *r = ctx;

	if (!r->opened) {
		if (tfd_output_open(&r->o, r->path, &r->err))
			return false;
		r->opened = true;
	}
	return tfd_output_put(&r->o, s, len, &r->err) == TFD_OK;
}

/* b's text to the output: what is left of it, or all of it (no write
 * yet). 0, or the exit code of the error reported. */
static int report_finish(struct report_out *r, const struct tfd_buf *b)
{
	if (r->base.failed) {
		if (r->opened)
			tfd_output_abort(&r->o);
		return tfd_cli_report(&r->err);
	}
	if (!r->opened)
		return tfd_output_write(r->path, b->s, b->len, &r->err) ? tfd_cli_report(&r->err)
									: 0;
	if (tfd_output_put(&r->o, b->s, b->len, &r->err) || tfd_output_commit(&r->o, &r->err))
		return tfd_cli_report(&r->err);
	return 0;
}

static int analyze_main(int argc, char **argv, int merge)
{
	struct args a;
	struct run_ctx run;
	struct tfd_err err = {0};
	struct tfd_buf b;
	struct report_out out;
	struct tfd_ruleset *rules = NULL;
	const char *const *paths;
	size_t npaths;
	int rc = analyze_args(&a, argc, argv, merge);

	if (rc)
		return rc < 0 ? 0 : rc;
	paths = (const char *const *)argv + a.first;
	npaths = (size_t)(argc - a.first);
	a.lo.keep_other = strcmp(a.mode, "xprof") == 0;
	a.lo.progress = tfd_cli_progress;
	rc = tfd_cli_guard_output(a.outpath, paths, npaths, a.rules_dir, NULL, NULL, NULL);
	if (rc)
		return rc;
	if (tfd_rules_load_default(a.rules_dir, &rules, &err))
		return tfd_cli_report(&err);
	memset(&run, 0, sizeof(run));
	run.lo = &a.lo;
	run.ao = &a.ao;
	run.rules = rules;
	run.format = a.format;
	run.mode = a.mode;
	run.fail_on = a.fail_on;
	run.fail_sev = a.fail_sev;
	/* a report going to the terminal holds its notes: not twice */
	run.quiet = a.quiet || (!a.partial && tfd_cli_to_terminal(a.outpath));
	run.outpath = a.outpath;
	run.partial = a.partial;
	run.merging = a.inputs == 0;
	tfd_buf_init(&b);
	memset(&out, 0, sizeof(out));
	out.base = (struct tfd_buf_out){report_write, &out, false};
	out.path = a.outpath;
	/* (one run's JSON: several runs' stay whole, a later one may fail) */
	if (strcmp(a.format, "json") == 0 && !a.all_runs)
		b.out = &out.base;
	if (!a.all_runs)
		rc = analyze_one(&run, paths, npaths, &b);
	else if (npaths != 1)
		rc = tfd_cli_usage("analyze", "--all-runs takes one log directory");
	else
		rc = analyze_all_runs(&run, &a.lo, paths[0], &b);
	if (rc == 1 || rc == 2) {
		if (out.opened)
			tfd_output_abort(&out.o);
		goto out;
	}
	if (strcmp(a.format, "text") == 0)
		tfd_buf_escape_controls(&b); /* names come from the capture */
	{
		int wrc = report_finish(&out, &b);

		if (wrc)
			rc = wrc;
	}
out:
	tfd_rules_free(rules);
	tfd_buf_release(&b);
	return rc;
}

int tfd_cmd_analyze(int argc, char **argv)
{
	return analyze_main(argc, argv, 0);
}

int tfd_cmd_merge(int argc, char **argv)
{
	return analyze_main(argc, argv, 1);
}
