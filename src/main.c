/* main.c - command table, global options, status -> exit code. */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/load.h"
#include "tfd/render.h"
#include "tfd/version.h"

struct tfd_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

/* Big captures are read into a few large arrays, filled front to back;
 * with 4 KiB pages that is one page fault per 4 KiB. glibc backs its large
 * blocks with transparent huge pages when the tunable glibc.malloc.hugetlb=1
 * is set at start-up, so the commands that read captures can set it and
 * start again (one exec, a few ms), then restore the caller's environment
 * for child processes (watch --exec). That paid when the arrays were large
 * (the 1 GB tf.data-heavy capture 3.44 -> 3.12 s on one core, two rounds
 * ago) and no longer does now that they are small (least of nine: 2.91 ->
 * 2.90 s on one core; 2.00 -> 2.04 s on two, and the 1 GB host-heavy one
 * 1.03 -> 1.05 s on two), while huge pages pad each large block to 2 MB
 * (4-6 MB of peak RSS). So they are off unless asked for:
 * TFDOCTOR_HUGEPAGES_MIN_MB=N turns them on for analyze, report, dump and
 * dot when a capture file of N MB or more is named (gzipped: 8 times its
 * size), and for watch, whose captures come later, always. Never under
 * valgrind or a sanitizer (their own allocators), when the caller chose a
 * hugetlb value, under an address-space limit, or with
 * TFDOCTOR_NO_HUGEPAGES=1. */
#define TUNE_KEY "glibc.malloc.hugetlb"
#define TUNE_ORIG "TFDOCTOR_TUNABLES_ORIG"

/* Whether this start should turn huge pages on (see above). */
static bool want_huge_pages(int argc, char **argv, const char *orig)
{
	static const char *const heavy[] = {"analyze", "report", "watch", "dump", "dot", "diff"};
	const char *pre = getenv("LD_PRELOAD"), *want = getenv("TFDOCTOR_HUGEPAGES_MIN_MB");
	bool is_heavy = false;
	struct rlimit rl;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return false;
#endif
	for (size_t i = 0; i < sizeof(heavy) / sizeof(heavy[0]); i++)
		is_heavy |= strcmp(argv[1], heavy[i]) == 0;
	if (!is_heavy || !want || !*want || (orig && strstr(orig, TUNE_KEY)) ||
	    (pre && strstr(pre, "vgpreload")) || getenv("TFDOCTOR_NO_HUGEPAGES"))
		return false;
	/* every argument is looked at: an option's value names no capture, or
	 * is one (-o FILE) that sizes nothing */
	if (strcmp(argv[1], "watch") != 0 &&
	    tfd_capture_largest((const char *const *)argv + 2, (size_t)argc - 2) <
		strtoull(want, NULL, 10) << 20)
		return false;
	/* nor under an address-space limit (ulimit -v): huge pages pad each
	 * large block's range to 2 MB, and a library's start-up that runs out
	 * of room before main() crashes where nothing can report it */
	return !(getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY);
}

static void huge_pages(int argc, char **argv)
{
	const char *orig = getenv("GLIBC_TUNABLES"), *marker = getenv(TUNE_ORIG);
	char *val;
	size_t n;

	if (marker) {
		/* the second start: the tunable took effect; children get the
		 * environment the caller gave */
		if (*marker)
			setenv("GLIBC_TUNABLES", marker, 1);
		else
			unsetenv("GLIBC_TUNABLES");
		unsetenv(TUNE_ORIG);
		return;
	}
	if (!want_huge_pages(argc, argv, orig))
		return;
	n = (orig ? strlen(orig) + 1 : 0) + sizeof(TUNE_KEY "=1");
	val = malloc(n);
	if (!val)
		return;
	snprintf(val, n, "%s%s" TUNE_KEY "=1", orig ? orig : "", orig ? ":" : "");
	if (setenv(TUNE_ORIG, orig ? orig : "", 1) == 0 && setenv("GLIBC_TUNABLES", val, 1) == 0)
		execv("/proc/self/exe", argv);
	/* no /proc or no exec: go on as we are, with the caller's environment */
	free(val);
	if (orig)
		setenv("GLIBC_TUNABLES", orig, 1);
	else
		unsetenv("GLIBC_TUNABLES");
	unsetenv(TUNE_ORIG);
}

/* Room to start: the libraries' own start-up runs before main(), and
 * libgfortran's (igraph's LAPACK, loaded when igraph is linked as a shared
 * library: see the Makefile) loops until the stack overflows when its
 * first calloc fails: under an address-space limit (ulimit -v) that leaves
 * the loader just enough room, the program died of SIGSEGV with nothing
 * said. The executable's pre-initializers run before any library's, so
 * this one asks for 1 MB of address space first and, without it, says so
 * in one line and exits 1. */
#define ROOM_TO_START ((size_t)1 << 20)

static void room_to_start(int argc, char **argv, char **envp)
{
	static const char msg[] = "tfdoctor: error: out of memory: the address-space limit "
				  "(ulimit -v) leaves no room to start\n";
	void *p = mmap(NULL, ROOM_TO_START, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)argc;
	(void)argv;
	(void)envp;
	if (p == MAP_FAILED) {
		if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
			_exit(1);
		_exit(1);
	}
	munmap(p, ROOM_TO_START);
}

__attribute__((section(".preinit_array"),
	       used)) static void (*const preinit_room)(int, char **, char **) = room_to_start;

/* glibc raises its mmap threshold as large blocks are freed (up to 32 MB);
 * the analysis's arrays then come from the heap, where a growing one is
 * copied and a freed one stays resident. A fixed 1 MB keeps them mapped:
 * grown in place, returned when freed (peak RSS 4-9 % lower on the bench
 * captures, about the same time; 128 KB saves a little more but costs up to
 * a tenth of the time in page faults). */
static void fixed_mmap_threshold(void)
{
#ifdef M_MMAP_THRESHOLD
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
}

static const struct tfd_cmd cmds[] = {
    {"analyze", tfd_cmd_analyze, "find the input-pipeline bottleneck and what to change"},
    {"merge", tfd_cmd_merge, "merge per-host partial results (analyze --partial) into one report"},
    {"dump", tfd_cmd_dump, "list hosts, planes, threads and iterator events of a capture"},
    {"dot", tfd_cmd_dot, "draw a pipeline's critical path (DOT, SVG or PNG)"},
    {"diff", tfd_cmd_diff, "did a change help: two captures of one job side by side"},
    {"report", tfd_cmd_report, "nightly pipeline-health report with history and regressions"},
    {"history", tfd_cmd_history, "check a report history database and list its runs"},
    {"watch", tfd_cmd_watch, "analyze each new profiler run as soon as it is complete"},
    {"synth", tfd_cmd_synth, "write realistic captures from a pipeline description"},
    {"rules", tfd_cmd_rules, "list the rule table, or check a directory of rule files"},
};

/* "unknown command 'analyse'; did you mean 'analyze'?" on stderr; 2. */
static int unknown_command(const char *name)
{
	const char *names[sizeof(cmds) / sizeof(cmds[0]) + 2];
	size_t n = 0;
	const char *hint;

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		names[n++] = cmds[i].name;
	names[n++] = "help";
	names[n++] = "version";
	hint = tfd_cli_closest(name, names, n);
	if (hint)
		fprintf(stderr, "tfdoctor: unknown command '%s'; did you mean '%s'?\n", name, hint);
	else
		fprintf(stderr, "tfdoctor: unknown command '%s' (see 'tfdoctor help')\n", name);
	return 2;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tfdoctor <command> [options] CAPTURE...\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-10s %s\n", cmds[i].name, cmds[i].help);
	fprintf(f, "  %-10s %s\n", "help", "show this help, or 'help CMD' for a command");
	fprintf(f, "  %-10s %s\n", "version", "print the version (also -V, --version)");
	fprintf(f, "\nCAPTURE is a *.xplane.pb, *.trace.json[.gz], a run directory or a\n"
		   "TensorBoard log directory. Exit codes: 0 ok, 1 bad input or runtime error,\n"
		   "2 usage error, 3 a --fail-on gate tripped.\n");
}

/* Every command's output to standard output is checked once, here: a
 * command that succeeded (or tripped a gate) but whose output could not be
 * written (a full disk, >/dev/full, a closed pipe) fails with one line.
 * A command that failed already said why. */
static int stdout_checked(int rc)
{
	int e = 0;

	if (fflush(stdout) != 0)
		e = errno;
	if (!e && !ferror(stdout))
		return rc;
	if (!e) {
		/* a write inside printf failed and stdio kept no errno: ask the
		 * output again (one byte more of an output already cut short) */
		clearerr(stdout);
		if (fputc('\n', stdout) == EOF || fflush(stdout) != 0)
			e = errno;
	}
	if (rc == 0 || rc == 3)
		fprintf(stderr, "tfdoctor: writing standard output: %s\n",
			e ? strerror(e) : "write error");
	return rc == 0 || rc == 3 ? 1 : rc;
}

static int run_help(int argc, char **argv)
{
	if (argc > 2) {
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			if (strcmp(argv[2], cmds[i].name) == 0) {
				char *av[] = {argv[2], "--help", NULL};

				return cmds[i].fn(2, av);
			}
		return unknown_command(argv[2]);
	}
	usage(stdout);
	return 0;
}

static int dispatch(int argc, char **argv)
{
	const char *name = argv[1];

	if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0)
		return run_help(argc, argv);
	if (strcmp(name, "version") == 0 || strcmp(name, "--version") == 0 ||
	    strcmp(name, "-V") == 0) {
		printf("tfdoctor %s\n", TFD_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(name, cmds[i].name) == 0)
			return cmds[i].fn(argc - 1, argv + 1);
	return unknown_command(name);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	huge_pages(argc, argv);
	fixed_mmap_threshold();
	/* over a file-size limit (ulimit -f) a write fails with EFBIG, which
	 * every writer reports naming its file and cleans up after, instead of
	 * the process dying mid-write */
	signal(SIGXFSZ, SIG_IGN);
	tfd_json_init();
	return stdout_checked(dispatch(argc, argv));
}
