/* analyze.c - `tfdoctor analyze`: is the job input-bound, where, and why. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/analysis.h"
#include "tfd/app.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/outfile.h"
#include "tfd/partial.h"
#include "tfd/render.h"
#include "tfd/rules.h"
#include "tfd/xprof.h"

static void help(FILE *f)
{
	fputs("usage: tfdoctor analyze [options] CAPTURE...\n"
	      "\n"
	      "Finds the input-bound host, its tf.data pipelines, their critical path and\n"
	      "bottleneck, and what to change. CAPTURE is a *.xplane.pb, *.trace.json[.gz],\n"
	      "local.trace, a run directory (one *.xplane.pb per host) or a TensorBoard log\n"
	      "directory; *.partial.json files, or directories of them, are merged as by\n"
	      "'tfdoctor merge'.\n"
	      "\n"
	      "  -f, --format FMT      text (default) or json; gviz with --mode xprof\n"
	      "  -o, --output FILE     write the report to FILE (atomically) instead of stdout\n"
	      "  -H, --host NAME       analyze this host first instead of the most input-bound\n"
	      "  -r, --run NAME        pick this run under plugins/profile (default: newest)\n"
	      "      --all-runs        analyze every run of a log directory, one section (or\n"
	      "                        JSON array element) each\n"
	      "      --mode MODE       default, or xprof: TensorFlow's own\n"
	      "                        tf_data_bottleneck_analysis semantics (slowest call\n"
	      "                        only), JSON like CombinedTfDataStats\n"
	      "      --no-warmup       keep the first root calls instead of excluding warm-up\n"
	      "      --rank N          analyze only the N-th slowest root call (0 = slowest)\n"
	      "      --rules DIR       add the rules in DIR/*.json (an id replaces a built-in)\n"
	      "      --fail-on WHAT    exit 3 when WHAT holds: input-bound, or severity=LEVEL\n"
	      "                        (a finding at LEVEL or above: info, low, medium, high)\n"
	      "      --partial         write this capture's per-host partial result (JSON) for\n"
	      "                        'tfdoctor merge' instead of a report\n"
	      "      --shard I/N       with --partial: only host files I, I+N, I+2N, ... of\n"
	      "                        those discovery picks (one task of a job array)\n"
	      "  -q, --quiet           do not echo notes to stderr\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.\n",
	      f);
}

static void merge_help(FILE *f)
{
	fputs("usage: tfdoctor merge [options] PARTIAL...\n"
	      "\n"
	      "Merges the per-host partial results written by 'tfdoctor analyze --partial'\n"
	      "(files, or directories of *.partial.json) into the report that analyzing all\n"
	      "the hosts' captures at once gives: the same ranking, verdict, findings and\n"
	      "exit codes. Fleet use: one 'analyze --partial' task per host, then one merge.\n"
	      "\n"
	      "  -f, --format FMT      text (default) or json\n"
	      "  -o, --output FILE     write the report to FILE (atomically) instead of stdout\n"
	      "  -H, --host NAME       analyze this host first instead of the most input-bound\n"
	      "      --rules DIR       add the rules in DIR/*.json (an id replaces a built-in)\n"
	      "      --fail-on WHAT    exit 3 when WHAT holds: input-bound, or severity=LEVEL\n"
	      "  -q, --quiet           do not echo notes to stderr\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.\n",
	      f);
}

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

/* Load, analyze and render one capture (or run) into b: 0, 3 (a gate
 * tripped), or 1/2 after printing the error. */
static int analyze_one(const struct run_ctx *rx, const char *const *paths, size_t npaths,
		       struct tfd_buf *b)
{
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *an = NULL;
	struct tfd_findings findings = {0};
	struct tfd_err err = {0};
	int rc = 0;

	if (rx->merging) {
		if (tfd_partial_merge(paths, npaths, rx->ao, &cap, &an, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		goto render;
	}
	if (strcmp(rx->mode, "xprof") != 0 && npaths == 1) {
		/* a run or log directory (or a shard of one): host files one at a
		 * time; a partial is written from the merged result as from one
		 * load (unit test by_file_matches_one_load) */
		if (tfd_analyze_paths(paths, npaths, rx->lo, rx->ao, &cap, &an, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		if (tfd_cli_guard_output(rx->outpath, NULL, 0, NULL, NULL, cap)) {
			rc = 2;
			goto out;
		}
		goto analyzed;
	}
	if (tfd_capture_load(paths, npaths, rx->lo, &cap, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	if (tfd_cli_guard_output(rx->outpath, NULL, 0, NULL, NULL, cap)) {
		rc = 2;
		goto out;
	}
	if (strcmp(rx->mode, "xprof") == 0) {
		struct tfd_xprof *xp = NULL;

		if (tfd_xprof_run(cap, &xp, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		if (strcmp(rx->format, "gviz") == 0)
			tfd_xprof_gviz(xp, b);
		else if (strcmp(rx->format, "json") == 0)
			tfd_xprof_json(xp, b);
		else
			tfd_xprof_text(xp, b);
		if (rx->fail_on && rx->fail_sev < 0 && tfd_xprof_is_input_bound(xp))
			rc = 3;
		tfd_xprof_free(xp);
		goto out;
	}
	if (tfd_analyze(cap, rx->ao, &an, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
analyzed:
	if (rx->ao->rank_set && an->nhosts && an->hosts[0].focus >= 0 &&
	    an->hosts[0].pipelines[an->hosts[0].focus].analyzed_rank < 0) {
		const struct tfd_pipeline *p = &an->hosts[0].pipelines[an->hosts[0].focus];

		rc = tfd_cli_usage("analyze",
				   "pipeline %s has %" PRIu64 " root call%s; no rank %d "
				   "(ranks start at 0)",
				   p->name, p->ncalls, p->ncalls == 1 ? "" : "s", rx->ao->rank);
		goto out;
	}
	if (rx->partial) {
		char tmp[512];

		tfd_partial_write(
		    cap, an, rx->ao,
		    npaths == 1 ? tfd_cli_base_name(paths[0], tmp, sizeof(tmp)) : NULL, b);
		for (size_t i = 0; !rx->quiet && i < an->ndiags; i++)
			tfd_cli_note(an->diags[i].host, an->diags[i].msg);
		goto out;
	}
render:
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
out:
	tfd_findings_free(&findings);
	tfd_analysis_free(an);
	tfd_capture_free(cap);
	return rc;
}

static int analyze_main(int argc, char **argv, int merge)
{
	static const struct option lopts[] = {{"format", required_argument, NULL, 'f'},
					      {"output", required_argument, NULL, 'o'},
					      {"host", required_argument, NULL, 'H'},
					      {"run", required_argument, NULL, 'r'},
					      {"mode", required_argument, NULL, 'm'},
					      {"no-warmup", no_argument, NULL, 'W'},
					      {"fail-on", required_argument, NULL, 'F'},
					      {"quiet", no_argument, NULL, 'q'},
					      {"rules", required_argument, NULL, 'R'},
					      {"rank", required_argument, NULL, 'k'},
					      {"all-runs", no_argument, NULL, 'A'},
					      {"partial", no_argument, NULL, 'P'},
					      {"shard", required_argument, NULL, 'S'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	struct tfd_load_opts lo = {0};
	struct tfd_analyze_opts ao = {0};
	struct run_ctx run;
	struct tfd_err err = {0};
	struct tfd_buf b;
	int all_runs = 0;
	const char *format = "text", *outpath = NULL, *mode = "default", *fail_on = NULL;
	const char *rules_dir = NULL;
	struct tfd_ruleset *rules = NULL;
	int fail_sev = -1;
	int c, rc = 0, quiet = 0, partial = 0, inputs;
	const char *cmd = merge ? "merge" : "analyze";

	if (tfd_cli_list_options(argc, argv, lopts, "f:o:qhH:r:", merge ? "rmWAPkS" : NULL))
		return 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "f:o:qhH:r:", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'H':
			ao.host = optarg;
			break;
		case 'r':
			lo.run = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'W':
			ao.no_warmup = true;
			break;
		case 'A':
			all_runs = 1;
			break;
		case 'P':
			partial = 1;
			break;
		case 'S': {
			unsigned long i, n;
			char slash, extra;

			if (sscanf(optarg, "%lu%c%lu%c", &i, &slash, &n, &extra) != 3 ||
			    slash != '/' || n == 0 || i >= n || n > 1000000 || optarg[0] == '-' ||
			    strchr(optarg, '-'))
				return tfd_cli_usage(cmd, "--shard needs I/N with 0 <= I < N, e.g. "
							  "--shard 3/8");
			lo.shard_index = i;
			lo.shard_count = n;
			break;
		}
		case 'F':
			fail_on = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'R':
			rules_dir = optarg;
			break;
		case 'k': {
			char *end;

			ao.rank = (int)strtol(optarg, &end, 10);
			if (*end || ao.rank < 0)
				return tfd_cli_usage("analyze", "--rank needs a number >= 0");
			ao.rank_set = true;
			break;
		}
		case 'h':
			if (merge)
				merge_help(stdout);
			else
				help(stdout);
			return 0;
		case '?':
		default:
			return tfd_cli_bad_option(cmd, lopts, "f:o:qhH:r:", argv);
		}
		/* merge takes the report options only: the per-host ones are in
		 * the partials */
		if (merge && strchr("rmWAPkS", c))
			return tfd_cli_usage("merge",
					     "%s is an option of 'analyze --partial': "
					     "the partials carry it",
					     argv[optind - 1]);
	}
	if (strcmp(mode, "default") && strcmp(mode, "xprof"))
		return tfd_cli_usage("analyze", "unknown mode '%s' (default or xprof)", mode);
	if (strcmp(format, "text") && strcmp(format, "json") &&
	    (strcmp(format, "gviz") || strcmp(mode, "xprof")))
		return tfd_cli_usage("analyze",
				     "unknown format '%s' (text or json; gviz with --mode "
				     "xprof)",
				     format);
	if (tfd_cli_fail_on("analyze", fail_on, 0, &fail_sev))
		return 2;
	if (optind >= argc)
		return tfd_cli_usage(cmd, merge ? "no partial given" : "no capture given");
	if (lo.shard_count && !partial)
		return tfd_cli_usage("analyze", "--shard goes with --partial (one fleet task's "
						"share of the host files)");
	if (partial &&
	    (strcmp(mode, "default") || all_runs || fail_on || rules_dir || strcmp(format, "text")))
		return tfd_cli_usage("analyze",
				     "--partial writes the partial result only: no "
				     "--mode, --all-runs, --format, --rules or --fail-on "
				     "(give those to merge)");
	inputs = partial_inputs((const char *const *)argv + optind, (size_t)(argc - optind));
	switch (inputs) {
	case -1:
		return tfd_cli_usage(cmd,
				     "give either captures or *.partial.json partials, not both");
	case 1:
		if (merge)
			return tfd_cli_usage("merge",
					     "'%s' is not a partial result (*%s, or a "
					     "directory of them); make them with "
					     "'tfdoctor analyze --partial'",
					     argv[optind], TFD_PARTIAL_SUFFIX);
		break;
	default:
		if (partial || strcmp(mode, "default") || all_runs)
			return tfd_cli_usage(cmd, "partials are merged: no --partial, --mode or "
						  "--all-runs with them");
	}
	lo.keep_other = strcmp(mode, "xprof") == 0;
	lo.progress = tfd_cli_progress;
	rc = tfd_cli_guard_output(outpath, (const char *const *)argv + optind,
				  (size_t)(argc - optind), rules_dir, NULL, NULL);
	if (rc)
		return rc;
	if (tfd_rules_load_default(rules_dir, &rules, &err))
		return tfd_cli_report(&err);
	run.lo = &lo;
	run.ao = &ao;
	run.rules = rules;
	run.format = format;
	run.mode = mode;
	run.fail_on = fail_on;
	run.fail_sev = fail_sev;
	/* a report going to the terminal holds its notes: not twice */
	run.quiet = quiet || (!partial && tfd_cli_to_terminal(outpath));
	run.outpath = outpath;
	run.partial = partial;
	run.merging = inputs == 0;
	tfd_buf_init(&b);
	if (!all_runs) {
		rc = analyze_one(&run, (const char *const *)argv + optind, (size_t)(argc - optind),
				 &b);
	} else {
		char **runs = NULL;
		size_t nruns = 0;

		if (argc - optind != 1) {
			rc = tfd_cli_usage("analyze", "--all-runs takes one log directory");
			goto out;
		}
		if (tfd_capture_runs(argv[optind], &runs, &nruns, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		if (strcmp(format, "text"))
			tfd_buf_puts(&b, "[\n");
		for (size_t r = 0; r < nruns && rc != 1 && rc != 2; r++) {
			int one;

			lo.run = runs[r];
			if (strcmp(format, "text") == 0)
				tfd_buf_printf(&b, "%s== run %s\n\n", r ? "\n" : "", runs[r]);
			else if (r)
				tfd_buf_puts(&b, ",\n");
			one = analyze_one(&run, (const char *const *)argv + optind, 1, &b);
			if (one > rc)
				rc = one;
		}
		if (strcmp(format, "text"))
			tfd_buf_puts(&b, "]\n");
		for (size_t r = 0; r < nruns; r++)
			free(runs[r]);
		free(runs);
	}
	if (rc == 1 || rc == 2)
		goto out;
	if (strcmp(format, "text") == 0)
		tfd_buf_escape_controls(&b); /* names come from the capture */
	if (tfd_output_write(outpath, b.s, b.len, &err))
		rc = tfd_cli_report(&err);
out:
	tfd_rules_free(rules);
	tfd_buf_release(&b);
	return rc;
}

int cmd_analyze(int argc, char **argv)
{
	return analyze_main(argc, argv, 0);
}

int cmd_merge(int argc, char **argv)
{
	return analyze_main(argc, argv, 1);
}
