/* synth.c - `tfdoctor synth SPEC.json -o DIR`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "tfd/cli.h"
#include "tfd/synth.h"

int tfd_cmd_synth(int argc, char **argv)
{
	struct cli_opts o;
	double scale = 1.0;
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	int rc = tfd_cli_parse(&tfd_spec_synth, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (o.v[OPT_SCALE]) {
		char *end;

		scale = strtod(o.v[OPT_SCALE], &end);
		if (*end || !(scale > 0) || scale > 1e6)
			return tfd_cli_usage("synth", "--scale needs a number > 0");
	}
	if (!o.v[OPT_OUTPUT] || o.args + 1 != argc)
		return tfd_cli_usage("synth", "give -o DIR and one SPEC.json");
	if (tfd_synth_run(argv[o.args], o.v[OPT_OUTPUT], scale, &res, &err))
		return tfd_cli_report(&err);
	if (!o.v[OPT_QUIET])
		printf("%s: %zu host%s, %" PRIu64 " events, %" PRIu64 " bytes%s%s\n", res.run_dir,
		       res.hosts, res.hosts == 1 ? "" : "s", res.events, res.bytes,
		       res.expect[0] ? ", planted bottleneck: " : "", res.expect);
	return 0;
}
