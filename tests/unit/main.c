/* main.c - runs every unit suite; `unit [-v] [FILTER]` runs the cases whose
 * "suite/case" name contains FILTER. Ends with "unit: N passed, N failed". */
#include <stdlib.h>

#include "t.h"
#include "tfd/render.h"

extern const struct t_case capture_cases[];
extern const struct t_case xprof_cases[];
extern const struct t_case analysis_cases[];
extern const struct t_case rules_cases[];
extern const struct t_case capacity_cases[];
extern const struct t_case input_cases[];
extern const struct t_case json_cases[];

static const struct {
	const char *suite;
	const struct t_case *cases;
} suites[] = {
    {"capture", capture_cases}, {"xprof", xprof_cases},	      {"analysis", analysis_cases},
    {"rules", rules_cases},	{"capacity", capacity_cases}, {"input", input_cases},
    {"json", json_cases},
};

static int run_case(const struct t_case *c, const char *full)
{
	struct t t;

	memset(&t, 0, sizeof(t));
	t.name = full;
	if (setjmp(t.jb) == 0)
		c->fn(&t);
	return t.failed;
}

int main(int argc, char **argv)
{
	const char *filter = NULL;
	int verbose = 0, pass = 0, fail = 0;

	tfd_json_init(); /* as main() does */

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else
			filter = argv[i];
	}
	for (size_t s = 0; s < sizeof(suites) / sizeof(suites[0]); s++) {
		for (const struct t_case *c = suites[s].cases; c->name; c++) {
			char full[256];
			int failed;

			snprintf(full, sizeof(full), "%s/%s", suites[s].suite, c->name);
			if (filter && !strstr(full, filter))
				continue;
			failed = run_case(c, full);
			if (failed)
				fail++;
			else
				pass++;
			if (verbose)
				printf("%s %s\n", failed ? "FAIL" : "ok  ", full);
		}
	}
	printf("unit: %d passed, %d failed\n", pass, fail);
	return fail ? 1 : 0;
}
