/* opts.h - one option table and one parser for every command (src/cmd only).
 *
 * Each option is one row of a table (its long name, short letter and the
 * name of its argument); each command lists the options it takes, with the
 * help line it gives them, in the order its help shows them. `tfdoctor
 * help CMD`, `tfdoctor CMD --list-options` (the bash completion) and the man
 * pages (made from the help) all come from these lists, so they cannot
 * drift from what the parser accepts.
 */
#ifndef TFD_CMD_OPTS_H
#define TFD_CMD_OPTS_H

#include <stdbool.h>
#include <stdio.h>

enum opt {
	OPT_FORMAT,
	OPT_OUTPUT,
	OPT_HOST,
	OPT_RUN,
	OPT_ALL_RUNS,
	OPT_MODE,
	OPT_NO_WARMUP,
	OPT_ALLOW_MIXED,
	OPT_RANK,
	OPT_RULES,
	OPT_FAIL_ON,
	OPT_PARTIAL,
	OPT_SHARD,
	OPT_QUIET,
	OPT_HELP,
	OPT_JSON,
	OPT_ALL,
	OPT_T,
	OPT_PIPELINE,
	OPT_HISTORY,
	OPT_JOB,
	OPT_BASELINE,
	OPT_REGRESS_PCT,
	OPT_NO_RECORD,
	OPT_TIMESTAMP,
	OPT_OUT_DIR,
	OPT_EXEC,
	OPT_HOSTS,
	OPT_SETTLE,
	OPT_POLL,
	OPT_TIMEOUT,
	OPT_EXISTING,
	OPT_ONCE,
	OPT_SCALE,
	OPT_MAX_INFLATED,
	OPT_MARGIN,
	OPT_LOW_MEMORY,
	OPT__COUNT,
};

/* One option of one command: its help (continuation lines after "\n"),
 * and the name of its argument when the command names it differently. */
struct opt_use {
	enum opt id;
	const char *arg; /* NULL: the table's */
	const char *help;
};

struct cmd_spec {
	const char *name;
	const char *usage;	    /* "usage: ..." lines */
	const char *about;	    /* what the command does */
	const struct opt_use *opts; /* ends with {OPT__COUNT} */
	const char *tail;	    /* after the options: "Exit codes: ..." */
	bool stop_at_arg;	    /* options end at the first argument (a subcommand) */
	/* options the command refuses with a message of its own (merge: the
	 * per-host options the partials carry); not in its help */
	const enum opt *refuse;
	const char *refuse_why;
};

/* What a command was given: each option's last value ("" for a flag that
 * is set) or NULL, and where the arguments start. */
struct cli_opts {
	const char *v[OPT__COUNT];
	int args; /* argv index of the first argument */
};

/* Parse argv (argv[0] is the command) by spec. Returns 0; or 1 when it
 * printed the help or the option list (exit 0); or 2 after printing a
 * usage error (an unknown option, with a suggestion; a missing value). */
int tfd_cli_parse(const struct cmd_spec *spec, int argc, char **argv, struct cli_opts *o);
/* --rank N: N >= 0 into *rank; else print the usage error and return 2. */
int tfd_cli_rank(const char *cmd, const char *value, int *rank);
/* The loading options every command that reads captures takes (--run,
 * --max-inflated) into lo; 2 after printing a usage error. */
struct tfd_load_opts;
int tfd_cli_load_opts(const char *cmd, const struct cli_opts *o, struct tfd_load_opts *lo);
/* The command's help, from its spec. */
void tfd_cli_help(const struct cmd_spec *spec, FILE *f);

extern const struct cmd_spec tfd_spec_analyze;
extern const struct cmd_spec tfd_spec_merge;
extern const struct cmd_spec tfd_spec_dump;
extern const struct cmd_spec tfd_spec_dot;
extern const struct cmd_spec tfd_spec_report;
extern const struct cmd_spec tfd_spec_history;
extern const struct cmd_spec tfd_spec_watch;
extern const struct cmd_spec tfd_spec_synth;
extern const struct cmd_spec tfd_spec_rules;
extern const struct cmd_spec tfd_spec_diff;

#endif
