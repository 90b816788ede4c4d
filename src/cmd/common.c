/* common.c - helpers shared by the subcommands. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "tfd/buf.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/history.h"
#include "tfd/outfile.h"
#include "tfd/rules.h"

int tfd_cli_report(const struct tfd_err *err)
{
	char msg[sizeof(err->msg) * 4];

	/* messages quote file and iterator names: nothing raw reaches the terminal */
	tfd_str_escape_controls(err->msg[0] ? err->msg : "unknown error", msg, sizeof(msg));
	fprintf(stderr, "tfdoctor: %s\n", msg);
	return tfd_status_exit_code(err->status ? err->status : TFD_E_INTERNAL);
}

const char *tfd_cli_base_name(const char *path, char *buf, size_t len)
{
	size_t n = strlen(path), b;

	while (n > 1 && path[n - 1] == '/')
		n--;
	/* only the last component is copied: a long path is not cut before it */
	for (b = n; b > 0 && path[b - 1] != '/';)
		b--;
	if (b == n && n) /* the path is "/" */
		b = n - 1;
	snprintf(buf, len, "%.*s", (int)(n - b), path + b);
	return buf;
}

void tfd_cli_note(const char *host, const char *msg)
{
	char h[1024], m[4096];

	tfd_str_escape_controls(host, h, sizeof(h));
	tfd_str_escape_controls(msg, m, sizeof(m));
	fprintf(stderr, "tfdoctor: note: %s: %s\n", h, m);
}

int tfd_cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tfdoctor: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see 'tfdoctor %s --help')\n", cmd);
	return 2;
}

/* path with its directory resolved (the file itself need not exist), in a
 * new string; NULL when the directory cannot be resolved. */
static char *place_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path + (slash == path))) : strdup(".");
	char *real = dir ? realpath(dir, NULL) : NULL;
	char *out = NULL;

	if (real) {
		size_t n = strlen(real) + strlen(slash ? slash + 1 : path) + 2;

		out = xmalloc(n);
		snprintf(out, n, "%s/%s", real, slash ? slash + 1 : path);
	}
	free(dir);
	free(real);
	return out;
}

/* An output that is one of SQLite's files beside the history database
 * (DB-wal, DB-shm, DB-journal) would be deleted by SQLite on close, even
 * when it does not exist yet: refused by name. */
static int guard_sidecars(const char *out, const char *db)
{
	static const char *const sfx[] = {"-wal", "-shm", "-journal"};
	char *o, *d;
	int rc = 0;

	if (tfd_history_is_url(db))
		return 0;
	o = place_of(out);
	d = place_of(db);
	for (size_t i = 0; o && d && i < sizeof(sfx) / sizeof(sfx[0]) && !rc; i++) {
		size_t n = strlen(d);

		if (strncmp(o, d, n) == 0 && strcmp(o + n, sfx[i]) == 0) {
			struct tfd_err err = {0};

			tfd_fail(&err, TFD_E_USAGE,
				 "refusing to write '%s': it is a file of the history database "
				 "'%s' (SQLite removes it)",
				 out, db);
			rc = tfd_cli_report(&err);
		}
	}
	free(o);
	free(d);
	return rc;
}

int tfd_cli_guard_output(const char *out, const char *const *inputs, size_t ninputs,
			 const char *rules_dir, const char *db, const struct tfd_capture *cap,
			 const struct tfd_analysis *an)
{
	struct tfd_outguard g = {0};
	struct tfd_err err = {0};
	int rc = 0;

	if (!out || strcmp(out, "-") == 0)
		return 0;
	/* before the work: an output that cannot be written fails now, not
	 * after minutes of analysis */
	if (inputs && tfd_output_check(out, &err))
		return tfd_cli_report(&err);
	for (size_t i = 0; i < ninputs; i++)
		tfd_outguard_add(&g, inputs[i], 0);
	tfd_outguard_add(&g, rules_dir, 1);
	if (db && (rc = guard_sidecars(out, db)) != 0)
		return rc;
	if (db) {
		static const char *const sfx[] = {"", "-wal", "-shm", "-journal"};
		char p[4096];

		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
			if (snprintf(p, sizeof(p), "%s%s", db, sfx[i]) < (int)sizeof(p))
				tfd_outguard_add(&g, p, 0);
	}
	for (size_t i = 0; cap && i < cap->nhosts; i++)
		tfd_outguard_add(&g, cap->hosts[i].path, 0);
	for (size_t i = 0; an && i < an->nhosts; i++)
		tfd_outguard_add(&g, an->hosts[i].host->path, 0);
	if (tfd_outguard_check(&g, out, &err))
		rc = tfd_cli_report(&err);
	tfd_outguard_release(&g);
	return rc;
}

int tfd_cli_to_terminal(const char *outpath)
{
	return (!outpath || strcmp(outpath, "-") == 0) && isatty(STDOUT_FILENO);
}

int tfd_cli_text_width(const char *outpath)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (!tfd_cli_to_terminal(outpath))
		return 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	if (cols && atoi(cols) >= 20)
		return atoi(cols);
	return 80;
}

void tfd_cli_progress(const char *file, size_t index, size_t nfiles, size_t events)
{
	static int tty = -1;

	if (tty < 0)
		tty = isatty(STDERR_FILENO);
	if (!tty)
		return;
	if (!file)
		fputs("\r\033[K", stderr);
	else if (!events)
		fprintf(stderr, "\r\033[Ktfdoctor: reading %zu/%zu %s ...", index + 1, nfiles,
			file);
	else
		fprintf(stderr, "\r\033[Ktfdoctor: read %zu/%zu %s: %zu host events", index + 1,
			nfiles, file, events);
	fflush(stderr);
}

int tfd_cli_fail_on(const char *cmd, const char *spec, int allow_regression, int *severity)
{
	*severity = -1;
	if (!spec)
		return 0;
	if (strncmp(spec, "severity=", 9) == 0) {
		*severity = tfd_severity_parse(spec + 9);
		if (*severity < 0)
			return tfd_cli_usage(cmd,
					     "unknown severity in '--fail-on %s' (info, low, "
					     "medium, high)",
					     spec);
		return 0;
	}
	if (strcmp(spec, "input-bound") == 0 ||
	    (allow_regression && strcmp(spec, "regression") == 0))
		return 0;
	return tfd_cli_usage(cmd,
			     "unknown --fail-on condition '%s' (input-bound%s or severity=LEVEL)",
			     spec, allow_regression ? ", regression" : "");
}

/* Levenshtein distance, for "did you mean" (short words only). */
int tfd_cli_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int row[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (int)j;
	for (size_t i = 1; i <= la; i++) {
		int prev = row[0], cur;

		row[0] = (int)i;
		for (size_t j = 1; j <= lb; j++) {
			cur = row[j];
			row[j] = a[i - 1] == b[j - 1]
				     ? prev
				     : 1 + (prev < row[j - 1]
						? (prev < row[j] ? prev : row[j])
						: (row[j - 1] < row[j] ? row[j - 1] : row[j]));
			prev = cur;
		}
	}
	return row[lb];
}

const char *tfd_cli_closest(const char *word, const char *const *cands, size_t n)
{
	const char *best = NULL;
	int bd = 99, lim = (int)strlen(word) / 3 + 1;

	for (size_t i = 0; i < n; i++) {
		int d = tfd_cli_edit_distance(word, cands[i]);

		if (strncmp(word, cands[i], strlen(word)) == 0 && strlen(word) >= 2)
			d = 1; /* a prefix */
		if (d < bd) {
			bd = d;
			best = cands[i];
		}
	}
	return bd <= lim ? best : NULL;
}

int tfd_cli_bad_option(const char *cmd, const struct option *lopts, const char *shorts, char **argv)
{
	const char *arg = argv[optind - 1] ? argv[optind - 1] : "";
	const char *names[64];
	const char *hint;
	char name[64];
	size_t n = 0, len;

	if (strncmp(arg, "--", 2) != 0) {
		if (optopt && strchr(shorts, optopt))
			return tfd_cli_usage(cmd, "option '-%c' needs a value", optopt);
		if (optopt && isprint(optopt))
			return tfd_cli_usage(cmd, "unknown option '-%c'", optopt);
		return tfd_cli_usage(cmd, "unknown option '%s'", arg);
	}
	len = strcspn(arg + 2, "=");
	snprintf(name, sizeof(name), "%.*s", (int)(len < 63 ? len : 63), arg + 2);
	for (const struct option *o = lopts; o->name && n < 64; o++) {
		if (strcmp(o->name, name) == 0)
			return tfd_cli_usage(cmd, "option '--%s' needs a value", name);
		names[n++] = o->name;
	}
	hint = tfd_cli_closest(name, names, n);
	if (hint)
		return tfd_cli_usage(cmd, "unknown option '--%s'; did you mean '--%s'?", name,
				     hint);
	return tfd_cli_usage(cmd, "unknown option '--%s'", name);
}
