/* diff.c - `tfdoctor diff BEFORE AFTER`: two captures of one job analyzed
 * and compared (analysis/diff.c), as text, JSON or Markdown; --fail-on
 * worse gates a CI job on a change that made the input pipeline worse. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "tfd/app.h"
#include "tfd/cli.h"
#include "tfd/diff.h"
#include "tfd/outfile.h"
#include "tfd/partial.h"
#include "tfd/render.h"
#include "tfd/rules.h"

struct side {
	struct tfd_analysis *an;
	struct tfd_findings f;
};

/* One side: partials merged, else a capture, log or run directory
 * analyzed; its notes said unless quiet. 0, or the exit code after the
 * error line. */
static int load_side(const char *path, const struct tfd_load_opts *lo,
		     const struct tfd_ruleset *rules, bool quiet, struct side *s)
{
	struct tfd_err err = {0};
	const char *paths[1] = {path};

	if (tfd_partial_path(path) ? tfd_partial_merge(paths, 1, NULL, &s->an, &err)
				   : tfd_analyze_paths(paths, 1, lo, NULL, &s->an, &err))
		return tfd_cli_report(&err);
	tfd_rules_eval(rules, s->an, &s->f);
	for (size_t i = 0; !quiet && i < s->an->ndiags; i++)
		tfd_cli_note(s->an->diags[i].host, s->an->diags[i].msg);
	return 0;
}

/* --margin N: 0 < N <= 100 into *m; else the usage error, 2. */
static int margin_arg(const char *v, double *m)
{
	char *end;

	*m = 5;
	if (!v)
		return 0;
	*m = strtod(v, &end);
	if (end == v || *end || !(*m > 0 && *m <= 100))
		return tfd_cli_usage("diff",
				     "--margin '%s' is not a number above 0 and at most 100", v);
	return 0;
}

static int check_args(const struct cli_opts *o, int argc, const char **format)
{
	*format = o->v[OPT_FORMAT] ? o->v[OPT_FORMAT] : "text";
	if (strcmp(*format, "text") && strcmp(*format, "json") && strcmp(*format, "md"))
		return tfd_cli_usage("diff", "unknown format '%s' (text, json or md)", *format);
	if (o->v[OPT_FAIL_ON] && strcmp(o->v[OPT_FAIL_ON], "worse"))
		return tfd_cli_usage("diff", "unknown --fail-on condition '%s' (worse)",
				     o->v[OPT_FAIL_ON]);
	if (argc - o->args != 2)
		return tfd_cli_usage("diff", "give two captures: BEFORE AFTER (%d given)",
				     argc - o->args);
	return 0;
}

int tfd_cmd_diff(int argc, char **argv)
{
	struct cli_opts o;
	struct tfd_load_opts lo = {0};
	struct tfd_ruleset *rules = NULL;
	struct side s[2];
	struct tfd_diff d;
	struct tfd_err err = {0};
	struct tfd_buf b;
	const char *format, *names[2];
	double margin;
	int rc = tfd_cli_parse(&tfd_spec_diff, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	if ((rc = check_args(&o, argc, &format)) || (rc = margin_arg(o.v[OPT_MARGIN], &margin)) ||
	    tfd_cli_load_opts("diff", &o, &lo))
		return rc ? rc : 2;
	names[0] = argv[o.args];
	names[1] = argv[o.args + 1];
	rc = tfd_cli_guard_output(o.v[OPT_OUTPUT], names, 2, o.v[OPT_RULES], NULL, NULL, NULL);
	if (rc)
		return rc;
	if (tfd_rules_load_default(o.v[OPT_RULES], &rules, &err))
		return tfd_cli_report(&err);
	memset(s, 0, sizeof(s));
	memset(&d, 0, sizeof(d));
	tfd_buf_init(&b);
	lo.progress = tfd_cli_progress;
	for (int i = 0; i < 2 && !rc; i++)
		rc = load_side(names[i], &lo, rules, o.v[OPT_QUIET] != NULL, &s[i]);
	if (!rc &&
	    tfd_diff_make(s[0].an, &s[0].f, s[1].an, &s[1].f, o.v[OPT_HOST], margin, &d, &err))
		rc = tfd_cli_report(&err);
	if (!rc) {
		if (strcmp(format, "json") == 0)
			tfd_render_diff_json(&d, names, &b);
		else if (strcmp(format, "md") == 0)
			tfd_render_diff_md(&d, names, &b);
		else
			tfd_render_diff_text(&d, names, &b);
		if (tfd_cli_guard_output(o.v[OPT_OUTPUT], NULL, 0, NULL, NULL, NULL, s[0].an) ||
		    tfd_cli_guard_output(o.v[OPT_OUTPUT], NULL, 0, NULL, NULL, NULL, s[1].an))
			rc = 2;
		else if (tfd_output_write(o.v[OPT_OUTPUT], b.s ? b.s : "", b.len, &err))
			rc = tfd_cli_report(&err);
		else if (o.v[OPT_FAIL_ON] && d.worse)
			rc = 3;
	}
	tfd_diff_free(&d);
	tfd_buf_release(&b);
	for (int i = 0; i < 2; i++) {
		tfd_findings_free(&s[i].f);
		tfd_analysis_free(s[i].an);
	}
	tfd_rules_free(rules);
	return rc;
}
