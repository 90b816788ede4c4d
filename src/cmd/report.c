/* report.c - `tfdoctor report`: argument handling of the nightly pipeline-health
 * report (the report itself is src/report/). */
#include <ctype.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static void help(FILE *f)
{
	fputs("usage: tfdoctor report [options] CAPTURE...\n"
	      "\n"
	      "A pipeline-health report: each CAPTURE (log directory, run directory or file)\n"
	      "is a job; its current run is analyzed, recorded in the history database, and\n"
	      "compared with the previous run and a baseline. A CAPTURE may also be a\n"
	      "directory of *.partial.json (analyze --partial, one per host): merged.\n"
	      "\n"
	      "      --history DB      the history: a SQLite file (created if missing) or a\n"
	      "                        postgresql:// URL; without it the report covers the\n"
	      "                        current run only\n"
	      "      --job NAME        job name (one CAPTURE only; default: its base name)\n"
	      "  -f, --format FMT      html (default), md or json\n"
	      "  -o, --output FILE     write the report to FILE (atomically)\n"
	      "      --baseline RUN    compare with this recorded run (default: the first one)\n"
	      "      --regress-pct N   a latency increase above N % is a regression\n"
	      "                        (default 20)\n"
	      "      --fail-on WHAT    exit 3 on: input-bound, regression, severity=LEVEL\n"
	      "      --no-record       compare with the history without adding this run\n"
	      "      --timestamp TIME  record this time instead of now (ISO 8601)\n"
	      "      --rules DIR       add the rules in DIR/*.json (an id replaces a built-in)\n"
	      "  -r, --run NAME        pick this run under plugins/profile (default: newest)\n"
	      "  -q, --quiet           do not echo notes to stderr\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.\n",
	      f);
}

/* YYYY-MM-DDTHH:MM:SS[.fff][Z|+HH:MM|-HH:MM] (no zone: UTC), fields in range, at
 * most 64 characters */
static bool iso8601(const char *t)
{
	int y, mo, d, h, mi, sec, n = 0;
	const char *p;

	if (strlen(t) < 19 || strlen(t) > 64 ||
	    sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 || n != 19)
		return false;
	for (int i = 0; i < 19; i++)
		if (!((i == 4 || i == 7)     ? t[i] == '-'
		      : i == 10		     ? t[i] == 'T'
		      : (i == 13 || i == 16) ? t[i] == ':'
					     : isdigit((unsigned char)t[i])))
			return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	p = t + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return false;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (strcmp(p, "Z") == 0 || *p == '\0') /* no zone: taken as UTC */
		return true;
	return (p[0] == '+' || p[0] == '-') && isdigit((unsigned char)p[1]) &&
	       isdigit((unsigned char)p[2]) && p[3] == ':' && isdigit((unsigned char)p[4]) &&
	       isdigit((unsigned char)p[5]) && p[6] == '\0';
}

/* The SVG of gvc without its XML prolog and doctype, to inline in HTML. */
static char *inline_svg(const struct tfd_analysis *a)
{
	const struct tfd_host_result *h = a->nhosts ? &a->hosts[0] : NULL;
	struct tfd_buf b;
	struct tfd_err err = {0};
	char *s = NULL, *start;

	if (!h || h->focus < 0)
		return NULL;
	tfd_buf_init(&b);
	if (tfd_dot_render(h, &h->pipelines[h->focus], "svg", &b, &err) == TFD_OK && b.s &&
	    (start = strstr(b.s, "<svg")) != NULL)
		s = xstrdup(start);
	tfd_buf_release(&b);
	return s;
}

struct job_data {
	struct tfd_capture *cap;
	struct tfd_analysis *an;
	struct tfd_findings findings;
	char *name;					    /* the job's name, whole */
	char error[sizeof(((struct tfd_err *)0)->msg) * 4]; /* the job failed: why */
};

int cmd_report(int argc, char **argv)
{
	static const struct option lopts[] = {{"history", required_argument, NULL, 'D'},
					      {"job", required_argument, NULL, 'J'},
					      {"format", required_argument, NULL, 'f'},
					      {"output", required_argument, NULL, 'o'},
					      {"baseline", required_argument, NULL, 'B'},
					      {"regress-pct", required_argument, NULL, 'p'},
					      {"fail-on", required_argument, NULL, 'F'},
					      {"no-record", no_argument, NULL, 'N'},
					      {"timestamp", required_argument, NULL, 't'},
					      {"rules", required_argument, NULL, 'R'},
					      {"run", required_argument, NULL, 'r'},
					      {"quiet", no_argument, NULL, 'q'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	static const char shorts[] = "f:o:r:qh";
	const char *dbpath = NULL, *jobname = NULL, *format = "html", *outpath = NULL;
	const char *baseline = NULL, *fail_on = NULL, *stamp = NULL, *rules_dir = NULL;
	struct tfd_load_opts lo = {0};
	struct tfd_ruleset *rules = NULL;
	struct tfd_history *db = NULL;
	struct tfd_err err = {0};
	struct job_data *jd = NULL;
	struct tfd_job *jobs = NULL;
	struct tfd_hist_run *recs = NULL;
	struct tfd_buf b;
	double pct = 20.0;
	int c, rc = 0, record = 1, fail_sev = -1, quiet = 0;
	size_t njobs, nfailed = 0;
	char now[80];

	if (tfd_cli_list_options(argc, argv, lopts, shorts, NULL))
		return 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case 'D':
			dbpath = optarg;
			break;
		case 'J':
			jobname = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'B':
			baseline = optarg;
			break;
		case 'p':
			pct = strtod(optarg, &end);
			if (*end || pct < 0)
				return tfd_cli_usage("report", "--regress-pct needs a number >= 0");
			break;
		case 'F':
			fail_on = optarg;
			break;
		case 'N':
			record = 0;
			break;
		case 't':
			stamp = optarg;
			break;
		case 'R':
			rules_dir = optarg;
			break;
		case 'r':
			lo.run = optarg;
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return tfd_cli_bad_option("report", lopts, shorts, argv);
		}
	}
	if (strcmp(format, "html") && strcmp(format, "md") && strcmp(format, "json"))
		return tfd_cli_usage("report", "unknown format '%s' (html, md or json)", format);
	if (tfd_cli_fail_on("report", fail_on, 1, &fail_sev))
		return 2;
	if (optind >= argc)
		return tfd_cli_usage("report", "no capture given");
	njobs = (size_t)(argc - optind);
	if (jobname && njobs > 1)
		return tfd_cli_usage("report", "--job names one job; give one CAPTURE");
	if (stamp && !iso8601(stamp))
		return tfd_cli_usage("report",
				     "--timestamp '%s' is not an ISO 8601 time such as "
				     "2026-11-20T02:00:00Z",
				     stamp);
	if (stamp) {
		/* a time without a zone is UTC, recorded as such */
		snprintf(now, sizeof(now), "%s%s", stamp,
			 isdigit((unsigned char)stamp[strlen(stamp) - 1]) ? "Z" : "");
	} else {
		time_t t = time(NULL);
		struct tm tmv;

		gmtime_r(&t, &tmv);
		strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tmv);
	}
	lo.progress = tfd_cli_progress;
	rc = tfd_cli_guard_output(outpath, (const char *const *)argv + optind, njobs, rules_dir,
				  dbpath, NULL);
	if (rc)
		return rc;
	tfd_buf_init(&b);
	jd = xcalloc(njobs, sizeof(*jd));
	jobs = xcalloc(njobs, sizeof(*jobs));
	recs = xcalloc(njobs, sizeof(*recs));
	if (tfd_rules_load_default(rules_dir, &rules, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	/* a bad history database fails before any analysis */
	if (dbpath && tfd_history_open(dbpath, &db, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	for (size_t i = 0; i < njobs; i++) {
		const char *path = argv[optind + (int)i];
		const char *paths[1] = {path};
		char tmp[512];
		const char *runname;

		jd[i].name = xstrdup(jobname ? jobname : tfd_cli_base_name(path, tmp, sizeof(tmp)));
		jobs[i].name = jd[i].name;
		if (tfd_partial_path(path)
			? tfd_partial_merge(paths, 1, NULL, &jd[i].cap, &jd[i].an, &err)
			: tfd_analyze_paths(paths, 1, &lo, NULL, &jd[i].cap, &jd[i].an, &err)) {
			/* one odd job does not fail the batch: the others are
			 * reported and recorded, this one is named with its error,
			 * and the exit status is 1 */
			rc = tfd_cli_report(&err);
			tfd_str_escape_controls(err.msg, jd[i].error, sizeof(jd[i].error));
			jobs[i].error = jd[i].error;
			nfailed++;
			continue;
		}
		tfd_rules_eval(rules, jd[i].an, &jd[i].findings);
		for (size_t k = 0; !quiet && k < jd[i].an->ndiags; k++)
			tfd_cli_note(jd[i].an->diags[k].host, jd[i].an->diags[k].msg);
		jobs[i].analysis = jd[i].an;
		jobs[i].findings = &jd[i].findings;
		runname = jd[i].an->run	   ? jd[i].an->run
			  : jd[i].cap->run ? jd[i].cap->run
					   : tfd_cli_base_name(path, tmp, sizeof(tmp));
		tfd_nightly_record(&jobs[i], runname, path, now);
		jobs[i].critpath_svg = inline_svg(jd[i].an);
	}
	if (nfailed == njobs)
		goto out; /* nothing to report: each error is said */
	if (db) {
		if (record) {
			/* all jobs of this report in one transaction */
			size_t nrec = 0;

			for (size_t i = 0; i < njobs; i++)
				if (!jobs[i].error)
					recs[nrec++] = jobs[i].current;
			if (tfd_history_record(db, recs, nrec, &err)) {
				rc = tfd_cli_report(&err);
				goto out;
			}
			for (size_t i = 0, k = 0; i < njobs; i++) {
				char m[400];

				if (jobs[i].error)
					continue;
				jobs[i].current.id = recs[k].id;
				if (recs[k++].already && !quiet) {
					snprintf(m, sizeof(m),
						 "run '%s' is already in the history (the same "
						 "capture): not recorded again",
						 jobs[i].current.run);
					tfd_cli_note(jobs[i].name, m);
				}
			}
		}
	}
	for (size_t i = 0; i < njobs; i++) {
		struct tfd_job *j = &jobs[i];

		if (j->error)
			continue;
		if (tfd_nightly_window(j, db, record && db, baseline, HISTORY_LIMIT, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		tfd_nightly_compare(j, pct);
	}
	if (strcmp(format, "md") == 0)
		tfd_nightly_md(jobs, njobs, &b);
	else if (strcmp(format, "json") == 0)
		tfd_nightly_json(jobs, njobs, &b);
	else
		tfd_nightly_html(jobs, njobs, &b);
	for (size_t i = 0; i < njobs; i++)
		if (jd[i].cap && tfd_cli_guard_output(outpath, NULL, 0, NULL, NULL, jd[i].cap)) {
			rc = 2;
			goto out;
		}
	if (tfd_output_write(outpath, b.s, b.len, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	for (size_t i = 0; i < njobs && fail_on; i++) {
		if (jobs[i].error)
			continue;
		if (strcmp(fail_on, "input-bound") == 0 && jd[i].an->input_bound)
			rc = 3;
		if (strcmp(fail_on, "regression") == 0 && jobs[i].nregs)
			rc = 3;
		if (fail_sev >= 0 && jd[i].findings.n &&
		    (int)jd[i].findings.max_severity >= fail_sev)
			rc = 3;
	}
	if (nfailed)
		rc = 1; /* the report is written; the failed jobs were said */
out:
	for (size_t i = 0; i < njobs; i++) {
		tfd_nightly_job_release(&jobs[i]);
		tfd_findings_free(&jd[i].findings);
		tfd_analysis_free(jd[i].an);
		tfd_capture_free(jd[i].cap);
		free(jd[i].name);
	}
	free(jobs);
	free(jd);
	free(recs);
	tfd_history_close(db);
	tfd_rules_free(rules);
	tfd_buf_release(&b);
	return rc;
}
