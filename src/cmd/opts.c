/* opts.c - the option table, each command's options, and the one parser
 * (opts.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/err.h"

static const struct {
	const char *name; /* long name, or NULL */
	char letter;	  /* short name, or 0 */
	const char *arg;  /* the argument's name in help; NULL: a flag */
} table[OPT__COUNT] = {
    [OPT_FORMAT] = {"format", 'f', "FMT"},
    [OPT_OUTPUT] = {"output", 'o', "FILE"},
    [OPT_HOST] = {"host", 'H', "NAME"},
    [OPT_RUN] = {"run", 'r', "NAME"},
    [OPT_ALL_RUNS] = {"all-runs", 0, NULL},
    [OPT_MODE] = {"mode", 0, "MODE"},
    [OPT_NO_WARMUP] = {"no-warmup", 0, NULL},
    [OPT_ALLOW_MIXED] = {"allow-mixed", 0, NULL},
    [OPT_RANK] = {"rank", 0, "N"},
    [OPT_RULES] = {"rules", 0, "DIR"},
    [OPT_FAIL_ON] = {"fail-on", 0, "WHAT"},
    [OPT_PARTIAL] = {"partial", 0, NULL},
    [OPT_SHARD] = {"shard", 0, "I/N"},
    [OPT_QUIET] = {"quiet", 'q', NULL},
    [OPT_HELP] = {"help", 'h', NULL},
    [OPT_JSON] = {"json", 0, NULL},
    [OPT_ALL] = {"all", 0, NULL},
    [OPT_T] = {NULL, 'T', "FMT"},
    [OPT_PIPELINE] = {"pipeline", 0, "NAME"},
    [OPT_HISTORY] = {"history", 0, "DB"},
    [OPT_JOB] = {"job", 0, "NAME"},
    [OPT_BASELINE] = {"baseline", 0, "RUN"},
    [OPT_REGRESS_PCT] = {"regress-pct", 0, "N"},
    [OPT_NO_RECORD] = {"no-record", 0, NULL},
    [OPT_TIMESTAMP] = {"timestamp", 0, "TIME"},
    [OPT_OUT_DIR] = {"out-dir", 0, "DIR"},
    [OPT_EXEC] = {"exec", 0, "CMD"},
    [OPT_HOSTS] = {"hosts", 0, "N"},
    [OPT_SETTLE] = {"settle", 0, "SECONDS"},
    [OPT_POLL] = {"poll", 0, "SECONDS"},
    [OPT_TIMEOUT] = {"timeout", 0, "SECONDS"},
    [OPT_EXISTING] = {"existing", 0, NULL},
    [OPT_ONCE] = {"once", 0, NULL},
    [OPT_SCALE] = {"scale", 0, "X"},
    [OPT_MAX_INFLATED] = {"max-inflated", 0, "SIZE"},
    [OPT_MARGIN] = {"margin", 0, "N"},
    [OPT_LOW_MEMORY] = {"low-memory", 0, NULL},
};

static bool refused(const struct cmd_spec *s, enum opt id)
{
	for (const enum opt *p = s->refuse; p && *p != OPT__COUNT; p++)
		if (*p == id)
			return true;
	return false;
}

static void getopt_add(enum opt id, struct option *lo, size_t *n, char **sp, enum opt *by_letter)
{
	if (table[id].name)
		lo[(*n)++] =
		    (struct option){table[id].name, table[id].arg ? required_argument : no_argument,
				    NULL, 256 + (int)id};
	if (table[id].letter) {
		*(*sp)++ = table[id].letter;
		if (table[id].arg)
			*(*sp)++ = ':';
		by_letter[(unsigned char)table[id].letter] = id;
	}
}

/* What getopt is told: the command's options, then those it refuses. */
static void getopt_tables(const struct cmd_spec *s, struct option *lo, char *shorts,
			  enum opt *by_letter)
{
	size_t n = 0;
	char *sp = shorts;

	if (s->stop_at_arg)
		*sp++ = '+';
	for (const struct opt_use *u = s->opts; u->id != OPT__COUNT; u++)
		getopt_add(u->id, lo, &n, &sp, by_letter);
	for (const enum opt *p = s->refuse; p && *p != OPT__COUNT; p++)
		getopt_add(*p, lo, &n, &sp, by_letter);
	lo[n] = (struct option){NULL, 0, NULL, 0};
	*sp = '\0';
}

/* --list-options: the names the command takes, long ones first */
static void list_options(const struct cmd_spec *s)
{
	for (const struct opt_use *u = s->opts; u->id != OPT__COUNT; u++)
		if (table[u->id].name)
			printf("--%s\n", table[u->id].name);
	for (const struct opt_use *u = s->opts; u->id != OPT__COUNT; u++)
		if (table[u->id].letter)
			printf("-%c\n", table[u->id].letter);
}

int tfd_cli_parse(const struct cmd_spec *s, int argc, char **argv, struct cli_opts *o)
{
	struct option lo[OPT__COUNT + 1];
	char shorts[2 * OPT__COUNT + 2];
	enum opt by_letter[256];
	int c;

	memset(o, 0, sizeof(*o));
	getopt_tables(s, lo, shorts, by_letter);
	if (argc == 2 && strcmp(argv[1], "--list-options") == 0) {
		list_options(s);
		return 1;
	}
	optind = 0; /* 0, not 1: glibc starts afresh (a second parse, rules SUB) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		enum opt id;

		if (c == '?' || c == ':')
			return tfd_cli_bad_option(s->name, lo, shorts, argv);
		id = c >= 256 ? (enum opt)(c - 256) : by_letter[(unsigned char)c];
		if (refused(s, id))
			return tfd_cli_usage(s->name, "%s %s", argv[optind - 1], s->refuse_why);
		if (id == OPT_HELP) {
			tfd_cli_help(s, stdout);
			return 1;
		}
		o->v[id] = table[id].arg ? optarg : "";
	}
	o->args = optind;
	return 0;
}

int tfd_cli_rank(const char *cmd, const char *value, int *rank)
{
	char *end;
	long v = strtol(value, &end, 10);

	if (*end || !*value || v < 0 || v > 1000000000)
		return tfd_cli_usage(cmd, "--rank needs a number >= 0");
	*rank = (int)v;
	return 0;
}

int tfd_cli_load_opts(const char *cmd, const struct cli_opts *o, struct tfd_load_opts *lo)
{
	const char *v = o->v[OPT_MAX_INFLATED];
	char *end;
	double n;

	lo->run = o->v[OPT_RUN];
	if (!v)
		return 0;
	n = strtod(v, &end);
	switch (*end) {
	case 'T':
		n *= 1024.0;
		/* fall through */
	case 'G':
		n *= 1024.0;
		/* fall through */
	case 'M':
		n *= 1024.0;
		/* fall through */
	case 'K':
		n *= 1024.0;
		end++;
		break;
	default:
		break;
	}
	if (end == v || *end || !(n >= 1.0) || n > 1e18)
		return tfd_cli_usage(cmd,
				     "--max-inflated: '%s' is not a size (bytes, or with K, M, "
				     "G or T: 16G)",
				     v);
	lo->max_inflated = (size_t)n;
	return 0;
}

#define HELP_COLUMN 24

void tfd_cli_help(const struct cmd_spec *s, FILE *f)
{
	fprintf(f, "%s\n\n", s->usage);
	if (s->about[0])
		fprintf(f, "%s\n\n", s->about);
	for (const struct opt_use *u = s->opts; u->id != OPT__COUNT; u++) {
		const char *arg = u->arg ? u->arg : table[u->id].arg, *h = u->help;
		char left[64];
		int n;

		if (table[u->id].letter && table[u->id].name)
			n = snprintf(left, sizeof(left), "  -%c, --%s", table[u->id].letter,
				     table[u->id].name);
		else if (table[u->id].name)
			n = snprintf(left, sizeof(left), "      --%s", table[u->id].name);
		else
			n = snprintf(left, sizeof(left), "  -%c", table[u->id].letter);
		if (arg)
			n += snprintf(left + n, sizeof(left) - (size_t)n, " %s", arg);
		/* the help's first line beside the option when it fits, else
		 * below it; continuation lines in the help's column */
		if (n < HELP_COLUMN - 1)
			fprintf(f, "%-*s", HELP_COLUMN, left);
		else
			fprintf(f, "%s\n%*s", left, HELP_COLUMN, "");
		for (;;) {
			const char *nl = strchr(h, '\n');

			fprintf(f, "%.*s\n", nl ? (int)(nl - h) : (int)strlen(h), h);
			if (!nl)
				break;
			h = nl + 1;
			fprintf(f, "%*s", HELP_COLUMN, "");
		}
	}
	if (s->tail[0])
		fprintf(f, "\n%s\n", s->tail);
}

/* ---- each command's options, in the order its help lists them ---------- */

static const enum opt merge_refuse[] = {OPT_RUN,      OPT_MODE,	      OPT_NO_WARMUP,
					OPT_ALL_RUNS, OPT_PARTIAL,    OPT_RANK,
					OPT_SHARD,    OPT_LOW_MEMORY, OPT__COUNT};

static const struct opt_use analyze_opts[] = {
    {OPT_FORMAT, NULL, "text (default) or json; gviz with --mode xprof"},
    {OPT_OUTPUT, NULL, "write the report to FILE (atomically) instead of stdout"},
    {OPT_HOST, NULL, "analyze this host first instead of the most input-bound"},
    {OPT_RUN, NULL, "pick this run under plugins/profile (default: newest)"},
    {OPT_ALL_RUNS, NULL,
     "analyze every run of a log directory, one section (or\nJSON array element) each"},
    {OPT_MODE, NULL,
     "default, or xprof: TensorFlow's own\ntf_data_bottleneck_analysis semantics (slowest "
     "call\nonly), JSON like CombinedTfDataStats"},
    {OPT_NO_WARMUP, NULL, "keep the first root calls instead of excluding warm-up"},
    {OPT_RANK, NULL, "analyze only the N-th slowest root call (0 = slowest)"},
    {OPT_RULES, NULL, "add the rules in DIR/*.json (an id replaces a built-in)"},
    {OPT_FAIL_ON, NULL,
     "exit 3 when WHAT holds: input-bound, or severity=LEVEL\n(a finding at LEVEL or above: info, "
     "low, medium, high)"},
    {OPT_PARTIAL, NULL,
     "write this capture's per-host partial result (JSON) for\n'tfdoctor merge' instead of a "
     "report"},
    {OPT_SHARD, NULL,
     "with --partial: only host files I, I+N, I+2N, ... of\nthose discovery picks (one task of a "
     "job array)"},
    {OPT_MAX_INFLATED, NULL,
     "refuse gzip data inflating past SIZE (e.g. 16G; default\n100 times the file, 64M..8G)"},
    {OPT_LOW_MEMORY, NULL,
     "least memory, more time: leave the iterator events in\nthe file and fold the calls "
     "as they close (the same report)"},
    {OPT_QUIET, NULL, "do not echo notes to stderr"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_analyze = {
    .name = "analyze",
    .usage = "usage: tfdoctor analyze [options] CAPTURE...",
    .about =
	"Finds the input-bound host, its tf.data pipelines, their critical path and\nbottleneck, "
	"and what to change. CAPTURE is a *.xplane.pb, *.trace.json[.gz],\nlocal.trace, a run "
	"directory (one *.xplane.pb per host) or a TensorBoard log\ndirectory; *.partial.json "
	"files, or directories of them, are merged as by\n'tfdoctor merge'.",
    .opts = analyze_opts,
    .tail = "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.",
};

static const struct opt_use merge_opts[] = {
    {OPT_FORMAT, NULL, "text (default) or json"},
    {OPT_OUTPUT, NULL, "write the report to FILE (atomically) instead of stdout"},
    {OPT_HOST, NULL, "analyze this host first instead of the most input-bound"},
    {OPT_RULES, NULL, "add the rules in DIR/*.json (an id replaces a built-in)"},
    {OPT_FAIL_ON, NULL, "exit 3 when WHAT holds: input-bound, or severity=LEVEL"},
    {OPT_ALLOW_MIXED, NULL,
     "merge partials of different runs into one report (a\nnote names them); refused "
     "otherwise"},
    {OPT_QUIET, NULL, "do not echo notes to stderr"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_merge = {
    .name = "merge",
    .usage = "usage: tfdoctor merge [options] PARTIAL...",
    .about = "Merges the per-host partial results written by 'tfdoctor analyze --partial'\n(files, "
	     "or directories of *.partial.json) into the report that analyzing all\nthe hosts' "
	     "captures at once gives: the same ranking, verdict, findings and\nexit codes. Fleet "
	     "use: one 'analyze --partial' task per host, then one merge.",
    .opts = merge_opts,
    .tail = "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.",
    .refuse = merge_refuse,
    .refuse_why = "is an option of 'analyze --partial': the partials carry it",
};

static const struct opt_use dump_opts[] = {
    {OPT_FORMAT, NULL, "text (default) or json (schema_version 1)"},
    {OPT_JSON, NULL, "the same as -f json"},
    {OPT_ALL, NULL, "list every kept host event, not only iterators"},
    {OPT_RUN, NULL, "pick this run under plugins/profile (default: newest)"},
    {OPT_OUTPUT, NULL, "write to FILE (atomically) instead of stdout"},
    {OPT_MAX_INFLATED, NULL,
     "refuse gzip data inflating past SIZE (e.g. 16G; default\n100 times the file, 64M..8G)"},
    {OPT_QUIET, NULL, "accepted for symmetry (dump prints no notes)"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_dump = {
    .name = "dump",
    .usage = "usage: tfdoctor dump [options] CAPTURE...",
    .about = "Lists the hosts, planes, steps, threads and iterator events of a capture,\nwith ids, "
	     "parent ids and parameters.",
    .opts = dump_opts,
    .tail = "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage.",
};

static const struct opt_use dot_opts[] = {
    {OPT_FORMAT, NULL, "dot (default; no layout), svg or png (rendered\nin-process)"},
    {OPT_T, NULL, "the same as -f"},
    {OPT_OUTPUT, NULL,
     "write to FILE (FMT follows its .dot/.gv, .svg or .png\nsuffix; a different -f is an error)"},
    {OPT_HOST, NULL, "the host (default: the most input-bound)"},
    {OPT_PIPELINE, NULL,
     "the pipeline, e.g. Host:1 or Device:0 (default: the\nslowest host pipeline)"},
    {OPT_RANK, NULL, "draw only the N-th slowest root call (0 = slowest)"},
    {OPT_RUN, NULL, "pick this run under plugins/profile (default: newest)"},
    {OPT_MAX_INFLATED, NULL,
     "refuse gzip data inflating past SIZE (e.g. 16G; default\n100 times the file, 64M..8G)"},
    {OPT_QUIET, NULL, "accepted for symmetry (dot prints no notes)"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_dot = {
    .name = "dot",
    .usage = "usage: tfdoctor dot [options] CAPTURE...",
    .about = "Draws one input pipeline: a node per stage with calls, total and self time\nand "
	     "share of blocking time; the critical path bold, the bottleneck red, other\nstages "
	     "dashed gray; edges to stages on another thread dashed blue. CAPTURE\nmay be "
	     "*.partial.json files (analyze --partial): merged first.",
    .opts = dot_opts,
    .tail = "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage.",
};

static const struct opt_use diff_opts[] = {
    {OPT_FORMAT, NULL, "text (default), json or md"},
    {OPT_OUTPUT, NULL, "write to FILE (atomically) instead of stdout"},
    {OPT_HOST, NULL,
     "compare this host (default: the first capture's most\ninput-bound host, and the host of "
     "that name in the\nsecond)"},
    {OPT_MARGIN, NULL,
     "worse or better beyond N points of input share or N %\nof step time (default 5)"},
    {OPT_FAIL_ON, NULL, "exit 3 on: worse"},
    {OPT_RULES, NULL, "add the rules in DIR/*.json (an id replaces a built-in)"},
    {OPT_RUN, NULL, "pick this run under plugins/profile in both (default:\nnewest)"},
    {OPT_MAX_INFLATED, NULL,
     "refuse gzip data inflating past SIZE (e.g. 16G; default\n100 times the file, 64M..8G)"},
    {OPT_QUIET, NULL, "do not echo notes to stderr"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_diff = {
    .name = "diff",
    .usage = "usage: tfdoctor diff [options] BEFORE AFTER",
    .about = "Did the change help? Analyzes two captures of one job (log directories, runs,\n"
	     "capture files or *.partial.json) and puts them side by side: the verdict and\n"
	     "input share, the step time and rate, the bottleneck then and now (same, moved,\n"
	     "removed, new), each stage's capacity and utilization, the findings resolved,\n"
	     "new and still there, and what each finding of BEFORE estimated against the\n"
	     "step time measured in AFTER.",
    .opts = diff_opts,
    .tail = "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.",
};

static const struct opt_use report_opts[] = {
    {OPT_HISTORY, NULL,
     "the history: a SQLite file (created if missing) or a\npostgresql:// URL; without it the "
     "report covers the\ncurrent run only"},
    {OPT_JOB, NULL, "job name (one CAPTURE only; default: its base name)"},
    {OPT_FORMAT, NULL, "html (default), md or json"},
    {OPT_OUTPUT, NULL, "write the report to FILE (atomically)"},
    {OPT_BASELINE, NULL, "compare with this recorded run (default: the first one)"},
    {OPT_REGRESS_PCT, NULL, "a latency increase above N % is a regression\n(default 20)"},
    {OPT_FAIL_ON, NULL, "exit 3 on: input-bound, regression, severity=LEVEL"},
    {OPT_NO_RECORD, NULL, "compare with the history without adding this run"},
    {OPT_TIMESTAMP, NULL, "record this time instead of now (ISO 8601)"},
    {OPT_RULES, NULL, "add the rules in DIR/*.json (an id replaces a built-in)"},
    {OPT_RUN, NULL, "pick this run under plugins/profile (default: newest)"},
    {OPT_MAX_INFLATED, NULL,
     "refuse gzip data inflating past SIZE (e.g. 16G; default\n100 times the file, 64M..8G)"},
    {OPT_QUIET, NULL, "do not echo notes to stderr"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_report = {
    .name = "report",
    .usage = "usage: tfdoctor report [options] CAPTURE...",
    .about = "A pipeline-health report: each CAPTURE (log directory, run directory or file)\nis a "
	     "job; its current run is analyzed, recorded in the history database, and\ncompared "
	     "with the previous run and a baseline. A CAPTURE may also be a\ndirectory of "
	     "*.partial.json (analyze --partial, one per host): merged.",
    .opts = report_opts,
    .tail = "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage, 3 --fail-on tripped.",
};

static const struct opt_use history_opts[] = {
    {OPT_JOB, NULL, "the runs of this job"},
    {OPT_FORMAT, NULL, "text (default), json or csv"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_history = {
    .name = "history",
    .usage = "usage: tfdoctor history [options] DB",
    .about =
	"Reads a report history database (never creates or changes one): runs\nSQLite's integrity "
	"check (PostgreSQL: every run has its hosts), lists its\njobs, or with --job NAME that "
	"job's runs, oldest first. DB is a SQLite file\nor a postgresql:// URL.",
    .opts = history_opts,
    .tail = "Exit codes: 0 ok, 1 bad input or runtime error, 2 usage.",
};

static const struct opt_use watch_opts[] = {
    {OPT_FORMAT, NULL, "text (default), json, or md (the nightly report's)"},
    {OPT_OUT_DIR, NULL,
     "write each run's report to DIR/RUN.txt|json|md\n(atomically) instead of standard output"},
    {OPT_EXEC, NULL,
     "run CMD (sh -c) after each analysis, with TFDOCTOR_RUN,\nTFDOCTOR_RUN_DIR, TFDOCTOR_REPORT, "
     "TFDOCTOR_VERDICT,\nTFDOCTOR_BOTTLENECK (empty when not input-bound) "
     "and\nTFDOCTOR_SLOWEST_STAGE in its environment"},
    {OPT_HISTORY, NULL, "also record each run as 'report --history' does"},
    {OPT_JOB, NULL, "the job name to record (default: the run's name)"},
    {OPT_HOSTS, NULL, "a run is complete with N host files"},
    {OPT_SETTLE, NULL, "files unchanged this long are complete (default 5)"},
    {OPT_POLL, NULL, "scan this often (default 1; inotify wakes it earlier)"},
    {OPT_TIMEOUT, NULL, "report a run still incomplete after this long\n(default 600; 0: never)"},
    {OPT_EXISTING, NULL, "also analyze the runs present at the start"},
    {OPT_ONCE, NULL,
     "analyze the complete runs present now and exit (for\ncron; with --out-dir, runs with a "
     "report are skipped)"},
    {OPT_RULES, NULL, "add the rules in DIR/*.json (an id replaces a built-in)"},
    {OPT_QUIET, NULL, "no progress lines on standard error"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_watch = {
    .name = "watch",
    .usage = "usage: tfdoctor watch [options] LOGDIR...",
    .about = "Waits for new runs under LOGDIR/.../plugins/profile and analyzes each one\nonce it "
	     "is complete: every host file unchanged for --settle seconds (and\n--hosts of them, "
	     "when given), and it loads. Runs present at the start are\nskipped unless --existing. "
	     "Stops on SIGINT or SIGTERM.",
    .opts = watch_opts,
    .tail = "Exit codes: 0 ok (also when stopped by SIGINT or SIGTERM), 1 runtime error,\n2 usage.",
};

static const struct opt_use synth_opts[] = {
    {OPT_OUTPUT, "DIR", "output log directory (required)"},
    {OPT_SCALE, NULL, "multiply the spec's steps by X (benchmarks)"},
    {OPT_QUIET, NULL, "no summary line"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_synth = {
    .name = "synth",
    .usage = "usage: tfdoctor synth [options] -o DIR SPEC.json",
    .about = "Simulates the pipeline described in SPEC.json and writes realistic captures\nto "
	     "DIR/plugins/profile/<run>/ (one *.xplane.pb and/or *.trace.json per host).\nThe spec "
	     "format is in docs/cli.md.",
    .opts = synth_opts,
    .tail = "Exit codes: 0 ok, 1 bad spec or write error, 2 usage.",
};

static const struct opt_use rules_opts[] = {
    {OPT_RULES, NULL, "with list: add the rules in DIR/*.json"},
    {OPT_HELP, NULL, "show this help"},
    {OPT__COUNT, NULL, NULL},
};

const struct cmd_spec tfd_spec_rules = {
    .name = "rules",
    .usage = "usage: tfdoctor rules list [--rules DIR]\n       tfdoctor rules check DIR",
    .about = "'list' prints the rules in force: the built-in table, plus the rules in\nDIR/*.json "
	     "(a rule with a built-in id replaces it). 'check' validates the\n*.json rule files in "
	     "DIR on their own and prints 'DIR: N rules ok', or one\nline naming the file, rule "
	     "and field of the first error and exits 1.",
    .opts = rules_opts,
    .tail = "Exit codes: 0 ok, 1 a bad rule file, 2 usage.",
    .stop_at_arg = true,
};
