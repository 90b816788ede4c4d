/* rules.c - `tfdoctor rules list|check`. */
#include <stdio.h>
#include <string.h>

#include "opts.h"
#include "tfd/cli.h"
#include "tfd/rules.h"

int tfd_cmd_rules(int argc, char **argv)
{
	struct cli_opts o, after;
	const char *dir, *sub;
	struct tfd_ruleset *rs = NULL;
	struct tfd_err err = {0};
	int first, rc = tfd_cli_parse(&tfd_spec_rules, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	if (o.args >= argc)
		return tfd_cli_usage("rules", "say 'list' or 'check DIR'");
	sub = argv[o.args];
	/* options may also follow the subcommand (parsed as if it were argv[0]) */
	rc = tfd_cli_parse(&tfd_spec_rules, argc - o.args, argv + o.args, &after);
	if (rc)
		return rc == 1 ? 0 : rc;
	dir = after.v[OPT_RULES] ? after.v[OPT_RULES] : o.v[OPT_RULES];
	first = o.args + after.args;
	if (strcmp(sub, "check") == 0) {
		if (first < argc)
			dir = argv[first++];
		if (!dir || first < argc)
			return tfd_cli_usage("rules", "check takes one directory");
		if (tfd_rules_load_dir(NULL, dir, &rs, &err))
			return tfd_cli_report(&err);
		printf("%s: %zu rule%s ok\n", dir, tfd_rules_count(rs),
		       tfd_rules_count(rs) == 1 ? "" : "s");
		tfd_rules_free(rs);
		return 0;
	}
	if (strcmp(sub, "list") != 0 || first < argc)
		return tfd_cli_usage("rules", "unknown subcommand '%s' (list or check)", sub);
	if (tfd_rules_load_default(dir, &rs, &err))
		return tfd_cli_report(&err);
	printf("%-9s %-8s %-11s %-26s %s\n", "id", "severity", "target", "class", "title");
	for (size_t i = 0; i < tfd_rules_count(rs); i++) {
		struct tfd_rule_info ri;

		tfd_rules_info(rs, i, &ri);
		printf("%-9s %-8s %-11s %-26s %s\n", ri.id, tfd_severity_name(ri.severity),
		       ri.target, ri.class_name, ri.title);
		if (ri.nfamilies) {
			fputs("          families: ", stdout);
			for (size_t k = 0; k < ri.nfamilies; k++)
				printf("%s%s", k ? "," : "", ri.families[k]);
			putchar('\n');
		}
	}
	tfd_rules_free(rs);
	return 0;
}
