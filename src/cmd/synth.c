/* synth.c - `tfdoctor synth SPEC.json -o DIR`. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/cli.h"
#include "tfd/synth.h"

static void help(FILE *f)
{
	fputs("usage: tfdoctor synth [options] -o DIR SPEC.json\n"
	      "\n"
	      "Simulates the pipeline described in SPEC.json and writes realistic captures\n"
	      "to DIR/plugins/profile/<run>/ (one *.xplane.pb and/or *.trace.json per host).\n"
	      "The spec format is in docs/cli.md.\n"
	      "\n"
	      "  -o, --output DIR      output log directory (required)\n"
	      "      --scale X         multiply the spec's steps by X (benchmarks)\n"
	      "  -q, --quiet           no summary line\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit codes: 0 ok, 1 bad spec or write error, 2 usage.\n",
	      f);
}

int cmd_synth(int argc, char **argv)
{
	static const struct option lopts[] = {{"output", required_argument, NULL, 'o'},
					      {"scale", required_argument, NULL, 's'},
					      {"quiet", no_argument, NULL, 'q'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	int quiet = 0;
	const char *out = NULL;
	double scale = 1.0;
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	char *end;
	int c;

	if (tfd_cli_list_options(argc, argv, lopts, "o:qh", NULL))
		return 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qh", lopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case 'o':
			out = optarg;
			break;
		case 's':
			scale = strtod(optarg, &end);
			if (*end || !(scale > 0) || scale > 1e6)
				return tfd_cli_usage("synth", "--scale needs a number > 0");
			break;
		case 'h':
			help(stdout);
			return 0;
		default:
			return tfd_cli_bad_option("synth", lopts, "o:qh", argv);
		}
	}
	if (!out || optind + 1 != argc)
		return tfd_cli_usage("synth", "give -o DIR and one SPEC.json");
	if (tfd_synth_run(argv[optind], out, scale, &res, &err))
		return tfd_cli_report(&err);
	if (!quiet)
		printf("%s: %zu host%s, %" PRIu64 " events, %" PRIu64 " bytes%s%s\n", res.run_dir,
		       res.hosts, res.hosts == 1 ? "" : "s", res.events, res.bytes,
		       res.expect[0] ? ", planted bottleneck: " : "", res.expect);
	return 0;
}
