/* dot.c - `tfdoctor dot`: the critical-path diagram of one pipeline. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"
#include "tfd/analysis.h"
#include "tfd/app.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/dot.h"
#include "tfd/outfile.h"
#include "tfd/partial.h"

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
	struct cli_opts o;
	const char *want;
	struct tfd_load_opts lo = {0};
	struct tfd_analyze_opts ao = {0};
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *an = NULL;
	struct tfd_err err = {0};
	struct tfd_buf b;
	const char *outpath, *format, *pipeline;
	const struct tfd_host_result *h;
	const struct tfd_pipeline *p = NULL;
	int first, rc = cli_parse(&cli_dot, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	/* -q is accepted like every command's: dot prints no notes */
	format = o.v[OPT_FORMAT] ? o.v[OPT_FORMAT] : o.v[OPT_T];
	outpath = o.v[OPT_OUTPUT];
	ao.host = o.v[OPT_HOST];
	pipeline = o.v[OPT_PIPELINE];
	lo.run = o.v[OPT_RUN];
	if (o.v[OPT_RANK] && cli_rank("dot", o.v[OPT_RANK], &ao.rank))
		return 2;
	ao.rank_set = o.v[OPT_RANK] != NULL;
	first = o.args;
	if (first >= argc)
		return tfd_cli_usage("dot", "no capture given");
	rc = tfd_cli_guard_output(outpath, (const char *const *)argv + first,
				  (size_t)(argc - first), NULL, NULL, NULL);
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
	if (tfd_partial_path(argv[first])) {
		/* the diagram of a merged run (partials carry --rank themselves) */
		if (ao.rank_set || lo.run) {
			rc = tfd_cli_usage("dot", "partials carry --rank and --run: give them to "
						  "'analyze --partial'");
			goto out;
		}
		if (tfd_partial_merge((const char *const *)argv + first, (size_t)(argc - first),
				      &ao, &cap, &an, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
	} else if (tfd_analyze_paths((const char *const *)argv + first, (size_t)(argc - first), &lo,
				     &ao, &cap, &an, &err)) {
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
