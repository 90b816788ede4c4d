/* history.c - `tfdoctor history`: check a report history database and list
 * its runs. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/cli.h"
#include "tfd/history.h"

static void help(FILE *f)
{
	fprintf(f, "usage: tfdoctor history [--job NAME] DB\n"
		   "\n"
		   "Runs SQLite's integrity check on a report history database and counts its\n"
		   "runs; --job NAME lists that job's runs (oldest first).\n");
}

int cmd_history(int argc, char **argv)
{
	static const struct option lopts[] = {{"job", required_argument, NULL, 'J'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	const char *job = NULL;
	struct tfd_history *db = NULL;
	struct tfd_hist_run *runs = NULL;
	struct tfd_err err = {0};
	size_t nruns = 0, n = 0;
	int c, rc = 0;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		if (c == 'J')
			job = optarg;
		else if (c == 'h') {
			help(stdout);
			return 0;
		} else
			return tfd_cli_bad_option("history", lopts, "h", argv);
	}
	if (optind + 1 != argc)
		return tfd_cli_usage("history", "give one history database");
	if (tfd_history_open(argv[optind], &db, &err) || tfd_history_check(db, &nruns, &err)) {
		rc = tfd_cli_report(&err);
		goto out;
	}
	printf("%s: integrity ok, schema %d, %zu runs\n", argv[optind], TFD_HISTORY_SCHEMA, nruns);
	if (job) {
		if (tfd_history_runs(db, job, 1000000, &runs, &n, &err)) {
			rc = tfd_cli_report(&err);
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			const struct tfd_hist_host *x = runs[i].nhosts ? &runs[i].hosts[0] : NULL;

			printf("%" PRId64 "\t%s\t%s\t%s\t%s\t%" PRId64 "\t%s\n", runs[i].id, runs[i].run,
			       runs[i].recorded_at, x ? x->host : "-", x ? x->bound : "-",
			       x ? x->max_latency_ns : 0, x ? x->bottleneck : "-");
		}
	}
out:
	tfd_hist_runs_free(runs, n);
	tfd_history_close(db);
	return rc;
}
