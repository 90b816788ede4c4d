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

/* The format: -f, else the output's suffix (they must agree), else dot;
 * PNG never to a terminal. 0, or 2 after the usage error. */
static int dot_format(const char *outpath, const char **format)
{
	const char *want = suffix_format(outpath);

	if (want && !*want)
		return tfd_cli_usage("dot",
				     "cannot tell the format of '%s' (use .dot, .svg or .png, "
				     "or -f)",
				     outpath);
	if (*format && want && strcmp(*format, want))
		return tfd_cli_usage("dot", "-f %s does not match the file name '%s'", *format,
				     outpath);
	if (!*format)
		*format = want ? want : "dot";
	if ((!outpath || strcmp(outpath, "-") == 0) && strcmp(*format, "png") == 0 &&
	    isatty(STDOUT_FILENO))
		return tfd_cli_usage("dot", "-f png writes binary data: give -o FILE.png or "
					    "redirect standard output");
	if (strcmp(*format, "dot") && strcmp(*format, "svg") && strcmp(*format, "png") &&
	    strcmp(*format, "pdf"))
		return tfd_cli_usage("dot", "unknown format '%s' (dot, svg or png)", *format);
	return 0;
}

/* The pipeline to draw on host h: --pipeline's, else the focus one. 0, or
 * the exit code after the error. */
static int pick_pipeline(const struct tfd_host_result *h, const char *name,
			 const struct tfd_pipeline **out)
{
	struct tfd_err err = {0};

	*out = NULL;
	if (!name) {
		if (h->focus >= 0)
			*out = &h->pipelines[h->focus];
	} else {
		for (size_t i = 0; i < h->npipelines; i++)
			if (strcmp(h->pipelines[i].name, name) == 0)
				*out = &h->pipelines[i];
		if (!*out) {
			char list[256] = "";
			size_t at = 0;

			for (size_t i = 0; i < h->npipelines && at < sizeof(list); i++)
				at += (size_t)snprintf(list + at, sizeof(list) - at, "%s%s",
						       i ? ", " : "", h->pipelines[i].name);
			return tfd_cli_usage("dot",
					     "no pipeline '%s' on host %s; its pipelines: %s", name,
					     h->host->name, h->npipelines ? list : "none");
		}
	}
	if (!*out) {
		tfd_fail(&err, TFD_E_FORMAT, "%s: no tf.data input pipeline to draw",
			 h->host->path);
		return tfd_cli_report(&err);
	}
	return 0;
}

int tfd_cmd_dot(int argc, char **argv)
{
	struct cli_opts o;
	struct tfd_load_opts lo = {0};
	struct tfd_analyze_opts ao = {0};
	struct tfd_analysis *an = NULL;
	struct tfd_err err = {0};
	struct tfd_buf b;
	const char *outpath, *format, *const *paths;
	const struct tfd_pipeline *p = NULL;
	size_t npaths;
	int rc = tfd_cli_parse(&tfd_spec_dot, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	/* -q is accepted like every command's: dot prints no notes */
	format = o.v[OPT_FORMAT] ? o.v[OPT_FORMAT] : o.v[OPT_T];
	outpath = o.v[OPT_OUTPUT];
	ao.host = o.v[OPT_HOST];
	if (tfd_cli_load_opts("dot", &o, &lo))
		return 2;
	if (o.v[OPT_RANK] && tfd_cli_rank("dot", o.v[OPT_RANK], &ao.rank))
		return 2;
	ao.rank_set = o.v[OPT_RANK] != NULL;
	if (o.args >= argc)
		return tfd_cli_usage("dot", "no capture given");
	paths = (const char *const *)argv + o.args;
	npaths = (size_t)(argc - o.args);
	rc = tfd_cli_guard_output(outpath, paths, npaths, NULL, NULL, NULL, NULL);
	if (!rc)
		rc = dot_format(outpath, &format);
	if (rc)
		return rc;
	lo.progress = tfd_cli_progress;
	tfd_buf_init(&b);
	if (tfd_partial_path(paths[0]) && (ao.rank_set || lo.run)) {
		/* the diagram of a merged run: partials carry --rank themselves */
		rc = tfd_cli_usage("dot", "partials carry --rank and --run: give them to "
					  "'analyze --partial'");
		goto out;
	}
	if (tfd_partial_path(paths[0]) ? tfd_partial_merge(paths, npaths, &ao, &an, &err)
				       : tfd_analyze_paths(paths, npaths, &lo, &ao, &an, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	rc = pick_pipeline(&an->hosts[0], o.v[OPT_PIPELINE], &p);
	if (!rc && ao.rank_set && p->analyzed_rank < 0)
		rc = tfd_cli_usage("dot", "pipeline %s has %" PRIu64 " root calls; no rank %d",
				   p->name, p->ncalls, ao.rank);
	if (!rc && tfd_cli_guard_output(outpath, NULL, 0, NULL, NULL, NULL, an))
		rc = 2;
	else if (!rc && (tfd_dot_render(&an->hosts[0], p, format, &b, &err) ||
			 tfd_output_write(outpath, b.s, b.len, &err)))
		rc = tfd_cli_report(&err);
out:
	tfd_buf_release(&b);
	tfd_analysis_free(an);
	return rc;
}
