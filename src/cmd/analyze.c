/* analyze.c - `tfdoctor analyze`: is the job input-bound, where, and why. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/analysis.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/outfile.h"
#include "tfd/render.h"
#include "tfd/rules.h"
#include "tfd/xprof.h"

static void help(FILE *f)
{
	fprintf(f,
		"usage: tfdoctor analyze [options] CAPTURE...\n"
		"\n"
		"Finds the input-bound host, its tf.data pipelines, their critical path and\n"
		"bottleneck. CAPTURE is a *.xplane.pb, *.trace.json[.gz], local.trace, a run\n"
		"directory (one *.xplane.pb per host) or a TensorBoard log directory.\n"
		"\n"
		"  -f, --format FMT    text (default) or json; gviz with --mode xprof\n"
		"  -o, --output FILE   write the report to FILE (atomically) instead of stdout\n"
		"  -H, --host NAME     analyze this host first instead of the most input-bound\n"
		"  -r, --run NAME      pick this run under plugins/profile (default: newest)\n"
		"      --mode MODE     default, or xprof: TensorFlow's own tf_data_bottleneck_analysis\n"
		"                      semantics (slowest call only), JSON like CombinedTfDataStats\n"
		"      --no-warmup     keep the first root calls instead of excluding warm-up\n"
		"      --rank N        analyze only the N-th slowest root call (0 = slowest)\n"
		"      --rules DIR     add the rules in DIR/*.json (same id: replaces a built-in)\n"
		"      --fail-on WHAT  exit 3 when WHAT holds: input-bound, or severity=LEVEL (a\n"
		"                      finding at LEVEL or above: info, low, medium, high)\n"
		"  -q, --quiet         do not echo notes to stderr\n"
		"\n"
		"Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.\n");
}

int cmd_analyze(int argc, char **argv)
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
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	struct tfd_load_opts lo = {0};
	struct tfd_analyze_opts ao = {0};
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *an = NULL;
	struct tfd_err err = {0};
	struct tfd_buf b;
	const char *format = "text", *outpath = NULL, *mode = "default", *fail_on = NULL;
	const char *rules_dir = NULL;
	struct tfd_ruleset *rules = NULL;
	struct tfd_findings findings = {0};
	int fail_sev = -1;
	int c, rc = 0, quiet = 0;

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
			help(stdout);
			return 0;
		case '?':
		default:
			return tfd_cli_bad_option("analyze", lopts, "f:o:qhH:r:", argv);
		}
	}
	if (strcmp(mode, "default") && strcmp(mode, "xprof"))
		return tfd_cli_usage("analyze", "unknown mode '%s' (default or xprof)", mode);
	if (strcmp(format, "text") && strcmp(format, "json") &&
	    (strcmp(format, "gviz") || strcmp(mode, "xprof")))
		return tfd_cli_usage("analyze", "unknown format '%s' (text or json; gviz with --mode "
						"xprof)", format);
	if (tfd_cli_fail_on("analyze", fail_on, 0, &fail_sev))
		return 2;
	if (optind >= argc)
		return tfd_cli_usage("analyze", "no capture given");
	lo.keep_other = strcmp(mode, "xprof") == 0;
	lo.progress = tfd_cli_progress;
	if (tfd_cli_guard_output(outpath, (const char *const *)argv + optind,
				 (size_t)(argc - optind), rules_dir, NULL, NULL))
		return 2;
	if (tfd_rules_load_default(rules_dir, &rules, &err))
		return tfd_cli_report(&err);
	tfd_buf_init(&b);
	if (tfd_capture_load((const char *const *)argv + optind, (size_t)(argc - optind), &lo, &cap,
			     &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	if (strcmp(mode, "xprof") == 0) {
		struct tfd_xprof *xp = NULL;

		if (tfd_xprof_run(cap, &xp, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		if (strcmp(format, "gviz") == 0)
			tfd_xprof_gviz(xp, &b);
		else if (strcmp(format, "json") == 0)
			tfd_xprof_json(xp, &b);
		else
			tfd_xprof_text(xp, &b);
		if (fail_on && fail_sev < 0 && tfd_xprof_is_input_bound(xp))
			rc = 3;
		tfd_xprof_free(xp);
	} else {
		if (tfd_analyze(cap, &ao, &an, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		tfd_rules_eval(rules, an, &findings);
		if (strcmp(format, "json") == 0)
			tfd_render_json(an, &findings, &b);
		else
			tfd_render_text(an, &findings, &b);
		if (!quiet)
			for (size_t i = 0; i < an->ndiags; i++)
				tfd_cli_note(an->diags[i].host, an->diags[i].msg);
		if (fail_on && fail_sev < 0 && an->input_bound)
			rc = 3;
		if (fail_sev >= 0 && findings.n && (int)findings.max_severity >= fail_sev)
			rc = 3;
	}
	if (strcmp(format, "text") == 0)
		tfd_buf_escape_controls(&b); /* names come from the capture */
	if (tfd_cli_guard_output(outpath, NULL, 0, NULL, NULL, cap))
		rc = 2;
	else if (tfd_output_write(outpath, b.s, b.len, &err))
		rc = tfd_cli_report(&err);
out:
	tfd_findings_free(&findings);
	tfd_rules_free(rules);
	tfd_buf_release(&b);
	tfd_analysis_free(an);
	tfd_capture_free(cap);
	return rc;
}
