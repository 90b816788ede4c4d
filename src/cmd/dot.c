/* dot.c - `tfdoctor dot`: the critical-path diagram of one pipeline. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfd/analysis.h"
#include "tfd/app.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/dot.h"
#include "tfd/outfile.h"
#include "tfd/partial.h"

static void help(FILE *f)
{
	fputs("usage: tfdoctor dot [options] CAPTURE...\n"
	      "\n"
	      "Draws one input pipeline: a node per stage with calls, total and self time\n"
	      "and share of blocking time; the critical path bold, the bottleneck red, other\n"
	      "stages dashed gray; edges to stages on another thread dashed blue. CAPTURE\n"
	      "may be *.partial.json files (analyze --partial): merged first.\n"
	      "\n"
	      "  -f, --format FMT      dot (default; no layout), svg or png (rendered\n"
	      "                        in-process)\n"
	      "  -T FMT                the same as -f\n"
	      "  -o, --output FILE     write to FILE (FMT follows its .dot/.gv, .svg or .png\n"
	      "                        suffix; a different -f is an error)\n"
	      "  -H, --host NAME       the host (default: the most input-bound)\n"
	      "      --pipeline NAME   the pipeline, e.g. Host:1 or Device:0 (default: the\n"
	      "                        slowest host pipeline)\n"
	      "      --rank N          draw only the N-th slowest root call (0 = slowest)\n"
	      "  -r, --run NAME        pick this run under plugins/profile (default: newest)\n"
	      "  -q, --quiet           accepted for symmetry (dot prints no notes)\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage.\n",
	      f);
}

/* The format an output file name asks for: NULL for no file or no suffix,
 * "" for a suffix that is not a diagram format. */
static const char *suffix_format(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *dot = path ? strrchr(slash ? slash : path, '.') : NULL;

	if (!path || strcmp(path, "-") == 0 || !dot || dot[1] == '\0')
		return NULL;
	if (strcmp(dot, ".svg") == 0 || strcmp(dot, ".png") == 0 || strcmp(dot, ".dot") == 0 ||
	    strcmp(dot, ".gv") == 0 || strcmp(dot, ".pdf") == 0)
		return strcmp(dot, ".gv") == 0 ? "dot" : dot + 1;
	return "";
}

int cmd_dot(int argc, char **argv)
{
	static const struct option lopts[] = {{"host", required_argument, NULL, 'H'},
					      {"pipeline", required_argument, NULL, 'P'},
					      {"rank", required_argument, NULL, 'k'},
					      {"run", required_argument, NULL, 'r'},
					      {"output", required_argument, NULL, 'o'},
					      {"format", required_argument, NULL, 'f'},
					      {"quiet", no_argument, NULL, 'q'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	static const char shorts[] = "T:f:o:H:r:qh";
	const char *want;
	struct tfd_load_opts lo = {0};
	struct tfd_analyze_opts ao = {0};
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *an = NULL;
	struct tfd_err err = {0};
	struct tfd_buf b;
	const char *outpath = NULL, *format = NULL, *pipeline = NULL;
	const struct tfd_host_result *h;
	const struct tfd_pipeline *p = NULL;
	int c, rc = 0;
	char *end;

	if (tfd_cli_list_options(argc, argv, lopts, shorts, NULL))
		return 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		switch (c) {
		case 'T':
		case 'f':
			format = optarg;
			break;
		case 'q':
			break; /* dot prints no notes; accepted like every command */
		case 'o':
			outpath = optarg;
			break;
		case 'H':
			ao.host = optarg;
			break;
		case 'P':
			pipeline = optarg;
			break;
		case 'k':
			ao.rank = (int)strtol(optarg, &end, 10);
			if (*end || ao.rank < 0)
				return tfd_cli_usage("dot", "--rank needs a number >= 0");
			ao.rank_set = true;
			break;
		case 'r':
			lo.run = optarg;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return tfd_cli_bad_option("dot", lopts, shorts, argv);
		}
	}
	if (optind >= argc)
		return tfd_cli_usage("dot", "no capture given");
	rc = tfd_cli_guard_output(outpath, (const char *const *)argv + optind,
				  (size_t)(argc - optind), NULL, NULL, NULL);
	if (rc)
		return rc;
	/* the format follows -f, else the file's suffix; they must agree */
	want = suffix_format(outpath);
	if (want && !*want)
		return tfd_cli_usage("dot",
				     "cannot tell the format of '%s' (use .dot, .svg or .png, "
				     "or -f)",
				     outpath);
	if (format && want && strcmp(format, want))
		return tfd_cli_usage("dot", "-f %s does not match the file name '%s'", format,
				     outpath);
	if (!format)
		format = want ? want : "dot";
	if ((!outpath || strcmp(outpath, "-") == 0) && strcmp(format, "png") == 0 &&
	    isatty(STDOUT_FILENO))
		return tfd_cli_usage("dot", "-f png writes binary data: give -o FILE.png or "
					    "redirect standard output");
	lo.progress = tfd_cli_progress;
	if (strcmp(format, "dot") && strcmp(format, "svg") && strcmp(format, "png") &&
	    strcmp(format, "pdf"))
		return tfd_cli_usage("dot", "unknown format '%s' (dot, svg or png)", format);
	tfd_buf_init(&b);
	if (tfd_partial_path(argv[optind])) {
		/* the diagram of a merged run (partials carry --rank themselves) */
		if (ao.rank_set || lo.run) {
			rc = tfd_cli_usage("dot", "partials carry --rank and --run: give them to "
						  "'analyze --partial'");
			goto out;
		}
		if (tfd_partial_merge((const char *const *)argv + optind, (size_t)(argc - optind),
				      &ao, &cap, &an, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
	} else if (tfd_analyze_paths((const char *const *)argv + optind, (size_t)(argc - optind),
				     &lo, &ao, &cap, &an, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	h = &an->hosts[0];
	if (pipeline) {
		for (size_t i = 0; i < h->npipelines; i++)
			if (strcmp(h->pipelines[i].name, pipeline) == 0)
				p = &h->pipelines[i];
		if (!p) {
			char list[256] = "";
			size_t at = 0;

			for (size_t i = 0; i < h->npipelines && at < sizeof(list); i++)
				at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
						       i ? ", " : "", h->pipelines[i].name);
			rc = tfd_cli_usage("dot", "no pipeline '%s' on host %s; its pipelines: %s",
					   pipeline, h->host->name, h->npipelines ? list : "none");
			goto out;
		}
	} else if (h->focus >= 0) {
		p = &h->pipelines[h->focus];
	}
	if (!p) {
		tfd_fail(&err, TFD_E_FORMAT, "%s: no tf.data input pipeline to draw",
			 h->host->path);
		rc = tfd_cli_report(&err);
		goto out;
	}
	if (ao.rank_set && p->analyzed_rank < 0) {
		rc = tfd_cli_usage("dot", "pipeline %s has %" PRIu64 " root calls; no rank %d",
				   p->name, p->ncalls, ao.rank);
		goto out;
	}
	if (tfd_cli_guard_output(outpath, NULL, 0, NULL, NULL, cap))
		rc = 2;
	else if (tfd_dot_render(h, p, format, &b, &err) ||
		 tfd_output_write(outpath, b.s, b.len, &err))
		rc = tfd_cli_report(&err);
out:
	tfd_buf_release(&b);
	tfd_analysis_free(an);
	tfd_capture_free(cap);
	return rc;
}
