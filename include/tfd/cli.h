/* cli.h - subcommand entry points and shared CLI helpers.
 *
 * Each cmd_<x> parses its own options and returns the process exit code:
 * 0 ok, 1 runtime or input error, 2 usage error, 3 a --fail-on gate tripped.
 * Errors are printed by the helpers below as one line on stderr.
 */
#ifndef TFD_CLI_H
#define TFD_CLI_H

#include <stddef.h>

#include "tfd/err.h"

struct tfd_capture;
struct tfd_analysis;

struct option;

/* The commands: argv[0] is the command, the rest its options and
 * arguments. Each returns the exit code (0, 1, 2, 3) and prints its own
 * errors, one line each. */
int tfd_cmd_analyze(int argc, char **argv);
int tfd_cmd_merge(int argc, char **argv);
int tfd_cmd_dump(int argc, char **argv);
int tfd_cmd_rules(int argc, char **argv);
int tfd_cmd_dot(int argc, char **argv);
int tfd_cmd_diff(int argc, char **argv);
int tfd_cmd_report(int argc, char **argv);
int tfd_cmd_history(int argc, char **argv);
int tfd_cmd_watch(int argc, char **argv);
int tfd_cmd_synth(int argc, char **argv);

/* Print "tfdoctor: <msg>" for err and return its exit code. */
int tfd_cli_report(const struct tfd_err *err);
/* The last component of path (trailing slashes dropped), copied into buf:
 * what a report names a job or a run given as a CAPTURE. */
const char *tfd_cli_base_name(const char *path, char *buf, size_t len);
/* Print "tfdoctor: note: <host>: <msg>" (unless the caller is quiet). */
void tfd_cli_note(const char *host, const char *msg);
/* Print "tfdoctor: <cmd>: <msg>" and a hint, return 2. */
int tfd_cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Check a --fail-on value: "input-bound", "regression" (when allowed) or
 * "severity=LEVEL". Sets *severity to the level, or -1 for the others.
 * Returns 0, or 2 after printing the usage error. */
int tfd_cli_fail_on(const char *cmd, const char *spec, int allow_regression, int *severity);
/* After getopt_long() returned '?' (opterr = 0): print "unknown option
 * '--hots'; did you mean '--host'?" or "option '-o' needs a value" and
 * return 2. shorts is the getopt short-option string. */
int tfd_cli_bad_option(const char *cmd, const struct option *lopts, const char *shorts,
		       char **argv);
/* The candidate closest to word (edit distance, or word is a prefix of it),
 * or NULL when none is close. */
const char *tfd_cli_closest(const char *word, const char *const *cands, size_t n);
int tfd_cli_edit_distance(const char *a, const char *b);
/* Whether output to outpath (NULL or "-": standard output) lands on a
 * terminal. */
int tfd_cli_to_terminal(const char *outpath);
/* The width to wrap prose to for output to outpath: the terminal's (its
 * window size, else $COLUMNS) when it is one, else 80. */
int tfd_cli_text_width(const char *outpath);
/* Progress for tfd_load_opts.progress: one self-erasing line on stderr,
 * only when stderr is a terminal. */
void tfd_cli_progress(const char *file, size_t index, size_t nfiles, size_t events);
/* Refuse an output path that is one of the command's inputs: the paths
 * given, the files in rules_dir, the history database db (and its journal
 * files), and every file cap was loaded from or an analyzed (each may be
 * NULL). Prints the
 * one-line error and returns 2, or returns 0. Call it before the work (the
 * paths as given, inputs not NULL: then an output that cannot be written,
 * such as one in a missing directory, is also an error now, exit 1) and
 * again before writing (the files really read). */
int tfd_cli_guard_output(const char *out, const char *const *inputs, size_t ninputs,
			 const char *rules_dir, const char *db, const struct tfd_capture *cap,
			 const struct tfd_analysis *an);

#endif
