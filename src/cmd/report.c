/* report.c - `tfdoctor report`: argument handling of the nightly pipeline-health
 * report (the report itself is src/report/). */
#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "opts.h"
#include "tfd/analysis.h"
#include "tfd/app.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/dot.h"
#include "tfd/history.h"
#include "tfd/nightly.h"
#include "tfd/outfile.h"
#include "tfd/partial.h"
#include "tfd/rules.h"

#define HISTORY_LIMIT 60

/* Whether t[0..19) has the shape YYYY-MM-DDTHH:MM:SS (digits and
 * separators in place). */
static bool iso_shape(const char *t)
{
	static const char shape[] = "dddd-dd-ddTdd:dd:dd";

	for (int i = 0; i < 19; i++)
		if (shape[i] == 'd' ? !isdigit((unsigned char)t[i]) : t[i] != shape[i])
			return false;
	return true;
}

/* Whether p is what may follow the seconds: [.fff] then Z, nothing (UTC),
 * or +HH:MM / -HH:MM. */
static bool iso_tail(const char *p)
{
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (strcmp(p, "Z") == 0 || *p == '\0') /* no zone: taken as UTC */
		return true;
	return (p[0] == '+' || p[0] == '-') && strlen(p) == 6 && isdigit((unsigned char)p[1]) &&
	       isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
	       isdigit((unsigned char)p[5]);
}

/* YYYY-MM-DDTHH:MM:SS[.fff][Z|+HH:MM|-HH:MM] (no zone: UTC), fields in range, at
 * most 64 characters */
static bool iso8601(const char *t)
{
	int y, mo, d, h, mi, sec, n = 0;

	if (strlen(t) < 19 || strlen(t) > 64 || !iso_shape(t) ||
	    sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
		return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	return iso_tail(t + 19);
}

/* The SVG of gvc without its XML prolog and doctype, to inline in HTML. */
static char *inline_svg(const struct tfd_analysis *a, const char *job, bool quiet)
{
	static char said[sizeof(((struct tfd_err *)0)->msg)];
	const struct tfd_host_result *h = a->nhosts ? &a->hosts[0] : NULL;
	struct tfd_buf b;
	struct tfd_err err = {0};
	char *s = NULL, *start;

	if (!h || h->focus < 0)
		return NULL;
	tfd_buf_init(&b);
	if (tfd_dot_render(h, &h->pipelines[h->focus], "svg", &b, &err) == TFD_OK) {
		if (b.s && (start = strstr(b.s, "<svg")) != NULL)
			s = xstrdup(start);
	} else if (!quiet && strcmp(err.msg, said) != 0) {
		/* the report goes without it (said once for a reason all the
		 * jobs share: Graphviz missing) */
		char m[sizeof(err.msg) + 64];

		snprintf(m, sizeof(m), "the report has no critical-path diagram: %s", err.msg);
		tfd_cli_note(job, m);
		snprintf(said, sizeof(said), "%s", err.msg);
	}
	tfd_buf_release(&b);
	return s;
}

struct job_data {
	struct tfd_analysis *an;
	struct tfd_findings findings;
	char *name;					    /* the job's name, whole */
	char error[sizeof(((struct tfd_err *)0)->msg) * 4]; /* the job failed: why */
};

/* One report: what the command line asked, and the jobs' state. */
struct report {
	const char *dbpath, *jobname, *format, *outpath, *baseline, *fail_on, *rules_dir;
	struct tfd_load_opts lo;
	double pct;
	int record, fail_sev, quiet;
	char now[80];
	const char *const *paths;
	size_t njobs, nfailed;
	int fail_rc; /* the exit code of the last job that failed */
	struct tfd_ruleset *rules;
	struct tfd_history *db;
	struct job_data *jd;
	struct tfd_job *jobs;
};

/* The report format a file name's suffix names (.html/.htm, .md, .json),
 * NULL for another or none. */
static const char *report_suffix_format(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *dot = path ? strrchr(slash ? slash : path, '.') : NULL;

	if (!dot)
		return NULL;
	if (strcmp(dot, ".html") == 0 || strcmp(dot, ".htm") == 0)
		return "html";
	if (strcmp(dot, ".md") == 0 || strcmp(dot, ".markdown") == 0)
		return "md";
	if (strcmp(dot, ".json") == 0)
		return "json";
	return NULL;
}

/* The options into r; 0, or the exit code of a usage error or --help (-1: 0). */
static int report_args(struct report *r, int argc, char **argv)
{
	struct cli_opts o;
	const char *stamp;
	int rc = tfd_cli_parse(&tfd_spec_report, argc, argv, &o);

	if (rc)
		return rc == 1 ? -1 : rc;
	r->quiet = o.v[OPT_QUIET] != NULL;
	r->dbpath = o.v[OPT_HISTORY];
	r->jobname = o.v[OPT_JOB];
	r->outpath = o.v[OPT_OUTPUT];
	r->format = o.v[OPT_FORMAT];
	{
		/* the format and the file name agree: -f, else the suffix, else
		 * html; never an HTML report in rep.md (as dot refuses) */
		const char *want = report_suffix_format(r->outpath);

		if (r->format && want && strcmp(r->format, want) != 0)
			return tfd_cli_usage("report", "-f %s does not match the file name '%s'",
					     r->format, r->outpath);
		if (!r->format)
			r->format = want ? want : "html";
	}
	r->baseline = o.v[OPT_BASELINE];
	r->fail_on = o.v[OPT_FAIL_ON];
	r->record = !o.v[OPT_NO_RECORD];
	r->rules_dir = o.v[OPT_RULES];
	if (tfd_cli_load_opts("report", &o, &r->lo))
		return 2;
	r->pct = 20.0;
	if (o.v[OPT_REGRESS_PCT]) {
		char *end;

		r->pct = strtod(o.v[OPT_REGRESS_PCT], &end);
		if (*end || !*o.v[OPT_REGRESS_PCT] || r->pct < 0)
			return tfd_cli_usage("report", "--regress-pct needs a number >= 0");
	}
	if (strcmp(r->format, "html") && strcmp(r->format, "md") && strcmp(r->format, "json"))
		return tfd_cli_usage("report", "unknown format '%s' (html, md or json)", r->format);
	if (tfd_cli_fail_on("report", r->fail_on, 1, &r->fail_sev))
		return 2;
	if (o.args >= argc)
		return tfd_cli_usage("report", "no capture given");
	r->paths = (const char *const *)argv + o.args;
	r->njobs = (size_t)(argc - o.args);
	if (r->jobname && r->njobs > 1)
		return tfd_cli_usage("report", "--job names one job; give one CAPTURE");
	stamp = o.v[OPT_TIMESTAMP];
	if (stamp && !iso8601(stamp))
		return tfd_cli_usage("report",
				     "--timestamp '%s' is not an ISO 8601 time such as "
				     "2026-11-20T02:00:00Z",
				     stamp);
	if (stamp) {
		/* a time without a zone is UTC, recorded as such */
		snprintf(r->now, sizeof(r->now), "%s%s", stamp,
			 isdigit((unsigned char)stamp[strlen(stamp) - 1]) ? "Z" : "");
	} else {
		time_t t = time(NULL);
		struct tm tmv;

		gmtime_r(&t, &tmv);
		strftime(r->now, sizeof(r->now), "%Y-%m-%dT%H:%M:%SZ", &tmv);
	}
	return 0;
}

/* Analyze job i. One odd job does not fail the batch: the others are
 * reported and recorded, this one is named with its error (exit 1). */
static void analyze_job(struct report *r, size_t i)
{
	const char *path = r->paths[i], *paths[1] = {path}, *runname;
	struct job_data *d = &r->jd[i];
	struct tfd_job *j = &r->jobs[i];
	struct tfd_err err = {0};
	char tmp[512];

	d->name = xstrdup(r->jobname ? r->jobname : tfd_cli_base_name(path, tmp, sizeof(tmp)));
	j->name = d->name;
	if (tfd_partial_path(path) ? tfd_partial_merge(paths, 1, NULL, &d->an, &err)
				   : tfd_analyze_paths(paths, 1, &r->lo, NULL, &d->an, &err)) {
		r->fail_rc = tfd_cli_report(&err);
		tfd_str_escape_controls(err.msg, d->error, sizeof(d->error));
		j->error = d->error;
		r->nfailed++;
		return;
	}
	tfd_rules_eval(r->rules, d->an, &d->findings);
	for (size_t k = 0; !r->quiet && k < d->an->ndiags; k++)
		tfd_cli_note(d->an->diags[k].host, d->an->diags[k].msg);
	j->analysis = d->an;
	j->findings = &d->findings;
	runname = d->an->run	 ? d->an->run
		  : d->an->label ? d->an->label
				 : tfd_cli_base_name(path, tmp, sizeof(tmp));
	tfd_nightly_record(j, runname, path, r->now);
	j->critpath_svg = inline_svg(d->an, d->name, r->quiet);
}

/* The jobs that were analyzed, in one transaction held open until the
 * report is written (tfd_cmd_report settles it); a run already there is not
 * recorded twice (said). */
static int record_runs(struct report *r)
{
	struct tfd_hist_run *recs = xcalloc(r->njobs + 1, sizeof(*recs));
	struct tfd_err err = {0};
	size_t nrec = 0;

	for (size_t i = 0; i < r->njobs; i++)
		if (!r->jobs[i].error)
			recs[nrec++] = r->jobs[i].current;
	if (tfd_history_record_held(r->db, recs, nrec, &err)) {
		free(recs);
		return tfd_cli_report(&err);
	}
	for (size_t i = 0, k = 0; i < r->njobs; i++) {
		char m[400];

		if (r->jobs[i].error)
			continue;
		r->jobs[i].current.id = recs[k].id;
		if (recs[k++].already && !r->quiet) {
			snprintf(m, sizeof(m),
				 "run '%s' is already in the history (the same capture): not "
				 "recorded again",
				 r->jobs[i].current.run);
			tfd_cli_note(r->jobs[i].name, m);
		}
	}
	free(recs);
	return 0;
}

/* Each job against its history: the window of past runs, the regressions. */
static int compare_jobs(struct report *r)
{
	struct tfd_err err = {0};

	for (size_t i = 0; i < r->njobs; i++) {
		struct tfd_job *j = &r->jobs[i];

		if (j->error)
			continue;
		if (tfd_nightly_window(j, r->db, r->record && r->db, r->baseline, HISTORY_LIMIT,
				       &err))
			return tfd_cli_report(&err);
		tfd_nightly_compare(j, r->pct);
	}
	return 0;
}

/* Render and write the report; 0, or the exit code of an error. */
static int write_report(struct report *r)
{
	struct tfd_err err = {0};
	struct tfd_buf b;
	int rc = 0;

	tfd_buf_init(&b);
	if (strcmp(r->format, "md") == 0)
		tfd_nightly_md(r->jobs, r->njobs, &b);
	else if (strcmp(r->format, "json") == 0)
		tfd_nightly_json(r->jobs, r->njobs, &b);
	else
		tfd_nightly_html(r->jobs, r->njobs, &b);
	for (size_t i = 0; i < r->njobs && !rc; i++)
		if (r->jd[i].an &&
		    tfd_cli_guard_output(r->outpath, NULL, 0, NULL, NULL, NULL, r->jd[i].an))
			rc = 2;
	if (!rc && tfd_output_write(r->outpath, b.s, b.len, &err))
		rc = tfd_cli_report(&err);
	tfd_buf_release(&b);
	return rc;
}

/* 3 when a --fail-on condition holds for any job. */
static int gate(const struct report *r)
{
	int rc = 0;

	for (size_t i = 0; i < r->njobs && r->fail_on; i++) {
		const struct job_data *d = &r->jd[i];

		if (r->jobs[i].error)
			continue;
		if (strcmp(r->fail_on, "input-bound") == 0 && d->an->input_bound)
			rc = 3;
		if (strcmp(r->fail_on, "regression") == 0 && r->jobs[i].nregs)
			rc = 3;
		if (r->fail_sev >= 0 && d->findings.n &&
		    (int)d->findings.max_severity >= r->fail_sev)
			rc = 3;
	}
	return rc;
}

/* The history, read-only for --no-record when it is a file at this
 * version (a read-only file system or a shared file is enough then); else
 * opened to write, created or migrated. */
static enum tfd_status open_history(struct report *r, struct tfd_err *err)
{
	struct stat sb;

	if (!r->record && stat(r->dbpath, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    tfd_history_open_existing(r->dbpath, &r->db, err) == TFD_OK)
		return TFD_OK;
	memset(err, 0, sizeof(*err));
	return tfd_history_open(r->dbpath, &r->db, err);
}

int tfd_cmd_report(int argc, char **argv)
{
	struct report r;
	struct tfd_err err = {0};
	int rc;

	memset(&r, 0, sizeof(r));
	rc = report_args(&r, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	r.lo.progress = tfd_cli_progress;
	rc = tfd_cli_guard_output(r.outpath, r.paths, r.njobs, r.rules_dir, r.dbpath, NULL, NULL);
	if (rc)
		return rc;
	r.jd = xcalloc(r.njobs, sizeof(*r.jd));
	r.jobs = xcalloc(r.njobs, sizeof(*r.jobs));
	/* a bad rule file or history database fails before any analysis */
	if (tfd_rules_load_default(r.rules_dir, &r.rules, &err) ||
	    (r.dbpath && open_history(&r, &err))) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	for (size_t i = 0; i < r.njobs; i++)
		analyze_job(&r, i);
	if (r.nfailed == r.njobs) {
		rc = r.fail_rc; /* nothing to report: each error is said */
		goto out;
	}
	rc = r.db && r.record ? record_runs(&r) : 0;
	if (!rc)
		rc = compare_jobs(&r);
	if (!rc)
		rc = write_report(&r);
	/* the runs are recorded only with the report written */
	if (r.db && tfd_history_settle(r.db, rc == 0, &err) && !rc)
		rc = tfd_cli_report(&err);
	if (!rc)
		rc = gate(&r);
	if ((!rc || rc == 3) && r.nfailed)
		rc = 1; /* the report is written; the failed jobs were said */
out:
	for (size_t i = 0; i < r.njobs && r.jd; i++) {
		tfd_nightly_job_release(&r.jobs[i]);
		tfd_findings_free(&r.jd[i].findings);
		tfd_analysis_free(r.jd[i].an);
		free(r.jd[i].name);
	}
	free(r.jobs);
	free(r.jd);
	tfd_history_close(r.db);
	tfd_rules_free(r.rules);
	return rc;
}
