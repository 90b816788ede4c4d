/* rules.c - `tfdoctor rules list|check`. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tfd/cli.h"
#include "tfd/rules.h"

static void help(FILE *f)
{
	fputs("usage: tfdoctor rules list [--rules DIR]\n"
	      "       tfdoctor rules check DIR\n"
	      "\n"
	      "'list' prints the rules in force: the built-in table, plus the rules in\n"
	      "DIR/*.json (a rule with a built-in id replaces it). 'check' validates the\n"
	      "*.json rule files in DIR on their own and prints 'DIR: N rules ok', or one\n"
	      "line naming the file, rule and field of the first error and exits 1.\n"
	      "\n"
	      "      --rules DIR       with list: add the rules in DIR/*.json\n"
	      "  -h, --help            show this help\n"
	      "\n"
	      "Exit codes: 0 ok, 1 a bad rule file, 2 usage.\n",
	      f);
}

int cmd_rules(int argc, char **argv)
{
	static const struct option lopts[] = {{"rules", required_argument, NULL, 'r'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	const char *dir = NULL, *sub;
	struct tfd_ruleset *rs = NULL;
	struct tfd_err err = {0};
	int c;

	if (tfd_cli_list_options(argc, argv, lopts, "h", NULL))
		return 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", lopts, NULL)) != -1) {
		if (c == 'r')
			dir = optarg;
		else if (c == 'h') {
			help(stdout);
			return 0;
		} else
			return tfd_cli_usage("rules", "unknown option '%s'", argv[optind - 1]);
	}
	if (optind >= argc)
		return tfd_cli_usage("rules", "say 'list' or 'check DIR'");
	sub = argv[optind++];
	/* options may also follow the subcommand */
	while ((c = getopt_long(argc, argv, "+h", lopts, NULL)) != -1) {
		if (c == 'r')
			dir = optarg;
		else
			return tfd_cli_usage("rules", "unknown option '%s'", argv[optind - 1]);
	}
	if (strcmp(sub, "check") == 0) {
		if (optind < argc)
			dir = argv[optind++];
		if (!dir || optind < argc)
			return tfd_cli_usage("rules", "check takes one directory");
		if (tfd_rules_load_dir(NULL, dir, &rs, &err))
			return tfd_cli_report(&err);
		printf("%s: %zu rule%s ok\n", dir, tfd_rules_count(rs),
		       tfd_rules_count(rs) == 1 ? "" : "s");
		tfd_rules_free(rs);
		return 0;
	}
	if (strcmp(sub, "list") != 0 || optind < argc)
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
