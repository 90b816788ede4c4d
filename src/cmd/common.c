/* common.c - helpers shared by the subcommands. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tfd/cli.h"
#include "tfd/rules.h"

int tfd_cli_report(const struct tfd_err *err)
{
	fprintf(stderr, "tfdoctor: %s\n", err->msg[0] ? err->msg : "unknown error");
	return tfd_status_exit_code(err->status ? err->status : TFD_E_INTERNAL);
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

enum tfd_status tfd_write_output(const char *path, const char *buf, size_t len, struct tfd_err *err)
{
	char *tmp;
	FILE *f;
	size_t n;

	if (!path || strcmp(path, "-") == 0) {
		if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0)
			return tfd_fail(err, TFD_E_IO, "writing standard output: %s", strerror(errno));
		return TFD_OK;
	}
	n = strlen(path) + 32;
	tmp = xmalloc(n);
	snprintf(tmp, n, "%s.tmp.%ld", path, (long)getpid());
	f = fopen(tmp, "wb");
	if (!f) {
		tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
		free(tmp);
		return TFD_E_IO;
	}
	if (fwrite(buf, 1, len, f) != len || fclose(f) != 0) {
		tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return TFD_E_IO;
	}
	if (rename(tmp, path) != 0) {
		tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
		unlink(tmp);
		free(tmp);
		return TFD_E_IO;
	}
	free(tmp);
	return TFD_OK;
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
		fprintf(stderr, "\r\033[Ktfdoctor: reading %zu/%zu %s ...", index + 1, nfiles, file);
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
			return tfd_cli_usage(cmd, "unknown severity in '--fail-on %s' (info, low, "
						  "medium, high)",
					     spec);
		return 0;
	}
	if (strcmp(spec, "input-bound") == 0 || (allow_regression && strcmp(spec, "regression") == 0))
		return 0;
	return tfd_cli_usage(cmd, "unknown --fail-on condition '%s' (input-bound%s or severity=LEVEL)",
			     spec, allow_regression ? ", regression" : "");
}
