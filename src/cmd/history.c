/* history.c - `tfdoctor history`: check a report history database and list
 * its runs. */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "opts.h"
#include "tfd/buf.h"
#include "tfd/cli.h"
#include "tfd/history.h"
#include "tfd/jsonmem.h"
#include "tfd/render.h"

/* A CSV field: control bytes (a line break, ESC, CR) as \xNN, so a name
 * never forges a row nor reaches a terminal raw; quoted when it holds a
 * comma or a quote; a leading = + - @ (a spreadsheet formula:
 * =HYPERLINK(...)) behind a ' so that it stays text. */
static void csv_field(const char *raw)
{
	const char *s = tfd_name_on_line(raw);
	bool formula = s[0] && strchr("=+-@", s[0]) != NULL;
	bool quote = strpbrk(s, ",\"") != NULL;

	if (!quote) {
		if (formula)
			putchar('\'');
		fputs(s, stdout);
		return;
	}
	putchar('"');
	if (formula)
		putchar('\'');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void print_jobs(const struct tfd_hist_job *jobs, size_t n, const char *fmt)
{
	if (strcmp(fmt, "csv") == 0) {
		puts("job,runs,last_recorded");
		for (size_t i = 0; i < n; i++) {
			csv_field(jobs[i].name);
			printf(",%zu,%s\n", jobs[i].nruns, jobs[i].last);
		}
		return;
	}
	printf("%-32s %6s  %s\n", "job", "runs", "last recorded");
	for (size_t i = 0; i < n; i++)
		printf("%-32s %6zu  %s\n", tfd_name_on_line(jobs[i].name), jobs[i].nruns,
		       tfd_name_on_line(jobs[i].last));
}

static void print_runs(const struct tfd_hist_run *runs, size_t n, const char *fmt)
{
	char t1[32], t2[32], pct[16];

	if (strcmp(fmt, "csv") == 0)
		puts("id,run,recorded_at,host,verdict,input_percent,max_latency_ns,p50_ns,"
		     "bottleneck,top_rule");
	else
		printf("%6s  %-24s %-20s %-24s %-10s %7s %12s %12s  %s\n", "id", "run", "recorded",
		       "host", "verdict", "input %", "max call", "p50 call", "bottleneck");
	for (size_t i = 0; i < n; i++) {
		const struct tfd_hist_host *x = runs[i].nhosts ? &runs[i].hosts[0] : NULL;

		snprintf(pct, sizeof(pct), x && !isnan(x->input_percent) ? "%.1f" : "n/a",
			 x ? x->input_percent : 0.0);
		if (strcmp(fmt, "csv") == 0) {
			printf("%" PRId64 ",", runs[i].id);
			csv_field(runs[i].run);
			printf(",%s,", runs[i].recorded_at);
			csv_field(x ? x->host : "");
			printf(",%s,%s,%" PRId64 ",%" PRId64 ",", x ? x->bound : "",
			       strcmp(pct, "n/a") ? pct : "", x ? x->max_latency_ns : 0,
			       x ? x->p50_ns : 0);
			csv_field(x ? x->bottleneck : "");
			printf(",%s\n", x ? x->top_rule : "");
			continue;
		}
		printf("%6" PRId64 "  %-24s %-20s %-24s %-10s %7s %12s %12s  %s\n", runs[i].id,
		       tfd_name_on_line(runs[i].run), tfd_name_on_line(runs[i].recorded_at),
		       x ? tfd_name_on_line(x->host) : "-", x ? tfd_name_on_line(x->bound) : "-",
		       pct, x ? tfd_fmt_ns(x->max_latency_ns, t1, sizeof(t1)) : "-",
		       x ? tfd_fmt_ns(x->p50_ns, t2, sizeof(t2)) : "-",
		       x && x->bottleneck[0] ? tfd_name_on_line(x->bottleneck) : "-");
	}
}

static void print_json(const char *db, size_t nruns, const struct tfd_hist_job *jobs, size_t njobs,
		       const char *job, const struct tfd_hist_run *runs, size_t n)
{
	cJSON *root = cJSON_CreateObject(), *arr;
	struct tfd_buf b;

	tfd_json_add_num(root, "schema_version", 1);
	cJSON_AddStringToObject(root, "database", db);
	cJSON_AddStringToObject(root, "integrity", "ok");
	tfd_json_add_num(root, "history_schema", TFD_HISTORY_SCHEMA);
	tfd_json_add_num(root, "runs_total", (double)nruns);
	arr = cJSON_AddArrayToObject(root, "jobs");
	for (size_t i = 0; i < njobs; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "name", jobs[i].name);
		tfd_json_add_num(o, "runs", (double)jobs[i].nruns);
		cJSON_AddStringToObject(o, "last_recorded", jobs[i].last);
		cJSON_AddItemToArray(arr, o);
	}
	if (job) {
		cJSON_AddStringToObject(root, "job", job);
		arr = cJSON_AddArrayToObject(root, "runs");
		for (size_t i = 0; i < n; i++) {
			const struct tfd_hist_host *x = runs[i].nhosts ? &runs[i].hosts[0] : NULL;
			cJSON *o = cJSON_CreateObject();

			tfd_json_add_num(o, "id", (double)runs[i].id);
			cJSON_AddStringToObject(o, "run", runs[i].run);
			cJSON_AddStringToObject(o, "recorded_at", runs[i].recorded_at);
			if (x) {
				cJSON_AddStringToObject(o, "host", x->host);
				cJSON_AddStringToObject(o, "input_bound", x->bound);
				if (isnan(x->input_percent))
					cJSON_AddNullToObject(o, "input_percent");
				else
					tfd_json_add_num(o, "input_percent",
							 round(x->input_percent * 100) / 100);
				tfd_json_add_num(o, "max_latency_ns", (double)x->max_latency_ns);
				tfd_json_add_num(o, "p50_ns", (double)x->p50_ns);
				cJSON_AddStringToObject(o, "bottleneck", x->bottleneck);
				cJSON_AddStringToObject(o, "top_rule", x->top_rule);
			}
			cJSON_AddItemToArray(arr, o);
		}
	}
	tfd_buf_init(&b);
	tfd_json_pretty_tree(&b, root);
	fwrite(b.s, 1, b.len, stdout);
	tfd_buf_release(&b);
	cJSON_Delete(root);
}

int tfd_cmd_history(int argc, char **argv)
{
	struct cli_opts o;
	const char *job, *fmt, *db_path;
	char shown[512];
	struct tfd_history *db = NULL;
	struct tfd_hist_run *runs = NULL;
	struct tfd_hist_job *jobs = NULL;
	struct tfd_err err = {0};
	size_t nruns = 0, n = 0, njobs = 0;
	int rc = tfd_cli_parse(&tfd_spec_history, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	job = o.v[OPT_JOB];
	fmt = o.v[OPT_FORMAT] ? o.v[OPT_FORMAT] : "text";
	if (strcmp(fmt, "text") && strcmp(fmt, "json") && strcmp(fmt, "csv"))
		return tfd_cli_usage("history", "unknown format '%s' (text, json or csv)", fmt);
	if (o.args + 1 != argc)
		return tfd_cli_usage("history", "give one history database");
	db_path = argv[o.args];
	tfd_history_display(db_path, shown, sizeof(shown));
	if (tfd_history_open_existing(db_path, &db, &err) || tfd_history_check(db, &nruns, &err) ||
	    tfd_history_jobs(db, &jobs, &njobs, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	if (job) {
		size_t k;

		for (k = 0; k < njobs && strcmp(jobs[k].name, job); k++)
			;
		if (k == njobs) {
			char list[512] = "";

			for (size_t i = 0; i < njobs; i++)
				snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
					 i ? ", " : "", jobs[i].name);
			rc = tfd_cli_usage("history", "no job '%s' in %s (jobs: %s)", job, shown,
					   njobs ? list : "none");
			goto out;
		}
		if (tfd_history_runs(db, job, 1000000, &runs, &n, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
	}
	if (strcmp(fmt, "json") == 0) {
		print_json(shown, nruns, jobs, njobs, job, runs, n);
	} else {
		if (strcmp(fmt, "text") == 0)
			printf("%s: integrity ok, schema %d, %zu run%s, %zu job%s\n\n", shown,
			       TFD_HISTORY_SCHEMA, nruns, nruns == 1 ? "" : "s", njobs,
			       njobs == 1 ? "" : "s");
		if (job)
			print_runs(runs, n, fmt);
		else
			print_jobs(jobs, njobs, fmt);
	}
out:
	tfd_hist_jobs_free(jobs, njobs);
	tfd_hist_runs_free(runs, n);
	tfd_history_close(db);
	return rc;
}
