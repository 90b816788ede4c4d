/* outfile.c - safe output files; see outfile.h for the rules. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tfd/buf.h"
#include "tfd/infile.h"
#include "tfd/outfile.h"

struct tfd_outguard_item {
	dev_t dev;
	ino_t ino;
	char *path;
};

static void guard_push(struct tfd_outguard *g, const struct stat *st, const char *path)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].dev == st->st_dev && g->v[i].ino == st->st_ino)
			return;
	if (g->n == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->v = xrealloc(g->v, g->cap * sizeof(*g->v));
	}
	g->v[g->n].dev = st->st_dev;
	g->v[g->n].ino = st->st_ino;
	g->v[g->n].path = xstrdup(path);
	g->n++;
}

void tfd_outguard_add(struct tfd_outguard *g, const char *path, int dir_files)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	if (!path || stat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		guard_push(g, &st, path);
		return;
	}
	if (!dir_files || !(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		char full[PATH_MAX];
		struct stat fst;

		if (de->d_name[0] == '.')
			continue;
		if (snprintf(full, sizeof(full), "%s/%s", path, de->d_name) >= (int)sizeof(full))
			continue;
		if (stat(full, &fst) == 0 && S_ISREG(fst.st_mode))
			guard_push(g, &fst, full);
	}
	closedir(d);
}

enum tfd_status tfd_outguard_check(const struct tfd_outguard *g, const char *out,
				   struct tfd_err *err)
{
	struct stat st;

	if (!out || strcmp(out, "-") == 0 || stat(out, &st) != 0)
		return TFD_OK;
	for (size_t i = 0; i < g->n; i++)
		if (g->v[i].dev == st.st_dev && g->v[i].ino == st.st_ino)
			return tfd_fail(err, TFD_E_USAGE,
					"refusing to write '%s': it is the input '%s'", out,
					g->v[i].path);
	return TFD_OK;
}

void tfd_outguard_release(struct tfd_outguard *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].path);
	free(g->v);
	g->v = NULL;
	g->n = g->cap = 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static void fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return;
	(void)fsync(fd); /* some file systems refuse (EINVAL): the rename stands anyway */
	close(fd);
}

static mode_t new_file_mode(void)
{
	mode_t um = umask(0);

	umask(um);
	return 0666 & ~um;
}

/* Open a fresh temporary file beside target for o (replaced at commit). */
static enum tfd_status open_replacing(struct tfd_output *o, const char *target,
				      const struct stat *old, const char *shown,
				      struct tfd_err *err)
{
	const char *slash = strrchr(target, '/');
	struct tfd_buf t;

	tfd_buf_init(&t);
	if (slash)
		tfd_buf_printf(&t, "%.*s", slash == target ? 1 : (int)(slash - target), target);
	else
		tfd_buf_puts(&t, ".");
	o->dir = t.s;
	tfd_buf_init(&t);
	/* the temporary name is the target's, hidden, unless that would pass
	 * the file system's name limit (a long report name) */
	if (strlen(slash ? slash + 1 : target) + 8 > 255)
		tfd_buf_printf(&t, "%s/.tfdoctor.XXXXXX", o->dir);
	else
		tfd_buf_printf(&t, "%s/.%s.XXXXXX", o->dir, slash ? slash + 1 : target);
	o->tmp = t.s;
	o->target = xstrdup(target);
	o->fd = mkstemp(o->tmp); /* O_EXCL, mode 0600: no planted file or link is followed */
	if (o->fd < 0) {
		enum tfd_status st = tfd_fail(err, TFD_E_IO, "%s: cannot create a file in '%s': %s",
					      shown, o->dir, strerror(errno));

		free(o->tmp);
		o->tmp = NULL; /* nothing to remove */
		return st;
	}
	if (fchmod(o->fd, old ? old->st_mode & 07777 : new_file_mode()) != 0)
		return tfd_fail(err, TFD_E_IO, "writing '%s': %s", shown, strerror(errno));
	if (old && geteuid() == 0)
		(void)fchown(o->fd, old->st_uid, old->st_gid); /* root keeps the owner */
	return TFD_OK;
}

/* Open path for writing by the rules of outfile.h (o->shown is path). */
static enum tfd_status open_path(struct tfd_output *o, const char *path, struct tfd_err *err)
{
	struct stat st, lst;
	enum tfd_status s;
	char *real;

	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return tfd_fail(err, TFD_E_IO, "%s: is a directory", path);
		if (!S_ISREG(st.st_mode)) { /* a device, FIFO or terminal: write through */
			o->fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
			return o->fd < 0 ? tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno))
					 : TFD_OK;
		}
	} else if (errno != ENOENT) {
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	} else if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		return tfd_fail(err, TFD_E_IO,
				"%s: is a symlink to a missing file; refusing to follow it", path);
	} else {
		return open_replacing(o, path, NULL, path, err);
	}
	/* an existing regular file, maybe behind symlinks: replace what they point at */
	if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode))
		return open_replacing(o, path, &st, path, err);
	real = realpath(path, NULL);
	if (!real)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	s = open_replacing(o, real, &st, path, err);
	free(real);
	return s;
}

enum tfd_status tfd_output_open(struct tfd_output *o, const char *path, struct tfd_err *err)
{
	enum tfd_status st;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || strcmp(path, "-") == 0) {
		o->shown = xstrdup("standard output");
		return TFD_OK;
	}
	o->shown = xstrdup(path);
	st = open_path(o, path, err);
	if (st)
		tfd_output_abort(o);
	return st;
}

enum tfd_status tfd_output_put(struct tfd_output *o, const char *buf, size_t len,
			       struct tfd_err *err)
{
	if (o->failed)
		return TFD_E_IO;
	if (o->fd < 0 ? fwrite(buf, 1, len, stdout) != len : write_all(o->fd, buf, len) != 0) {
		o->failed = true;
		if (o->fd < 0)
			return tfd_fail(err, TFD_E_IO, "writing standard output: %s",
					strerror(errno));
		return tfd_fail(err, TFD_E_IO, "writing '%s': %s", o->shown, strerror(errno));
	}
	return TFD_OK;
}

enum tfd_status tfd_output_commit(struct tfd_output *o, struct tfd_err *err)
{
	enum tfd_status st = TFD_OK;
	int rc;

	if (o->failed) {
		tfd_output_abort(o);
		return TFD_E_IO;
	}
	if (o->fd < 0) {
		if (fflush(stdout) != 0)
			st =
			    tfd_fail(err, TFD_E_IO, "writing standard output: %s", strerror(errno));
		tfd_output_abort(o);
		return st;
	}
	if (o->tmp && fsync(o->fd) != 0)
		goto fail;
	rc = close(o->fd);
	o->fd = -1;
	if (rc != 0 || (o->tmp && rename(o->tmp, o->target) != 0))
		goto fail;
	if (o->tmp) {
		fsync_dir(o->dir);
		free(o->tmp);
		o->tmp = NULL; /* renamed: nothing to remove */
	}
	tfd_output_abort(o);
	return TFD_OK;
fail:
	st = tfd_fail(err, TFD_E_IO, "writing '%s': %s", o->shown, strerror(errno));
	tfd_output_abort(o);
	return st;
}

void tfd_output_abort(struct tfd_output *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->dir);
	free(o->target);
	free(o->shown);
	memset(o, 0, sizeof(*o));
	o->fd = -1;
}

enum tfd_status tfd_output_check(const char *path, struct tfd_err *err)
{
	struct stat st;
	char dir[PATH_MAX];
	const char *slash;

	if (!path || strcmp(path, "-") == 0)
		return TFD_OK;
	if (stat(path, &st) == 0)
		return S_ISDIR(st.st_mode) ? tfd_fail(err, TFD_E_IO, "%s: is a directory", path)
					   : TFD_OK;
	if (lstat(path, &st) == 0) /* a symlink to nothing: refused when writing */
		return TFD_OK;
	slash = strrchr(path, '/');
	if (slash && (size_t)(slash - path) >= sizeof(dir))
		return tfd_fail(err, TFD_E_IO, "%s: path too long", path);
	tfd_path_dir(path, dir, sizeof(dir));
	if (stat(dir, &st) != 0)
		return tfd_fail(err, TFD_E_IO, "%s: cannot create a file in '%s': %s", path, dir,
				strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return tfd_fail(err, TFD_E_IO, "%s: cannot create a file in '%s': %s", path, dir,
				strerror(ENOTDIR));
	if (access(dir, W_OK | X_OK) != 0)
		return tfd_fail(err, TFD_E_IO, "%s: cannot create a file in '%s': %s", path, dir,
				strerror(errno));
	return TFD_OK;
}

enum tfd_status tfd_output_write_in_dir(const char *path, const char *buf, size_t len,
					struct tfd_err *err)
{
	struct tfd_output o;
	struct stat lst;
	enum tfd_status st;
	bool exists = lstat(path, &lst) == 0;

	if (!exists && errno != ENOENT)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	if (exists && !S_ISREG(lst.st_mode))
		return tfd_fail(err, TFD_E_IO,
				"%s: is %s, not a regular file; a report there is only written as "
				"a file (remove it)",
				path,
				S_ISLNK(lst.st_mode)	? "a symlink"
				: S_ISFIFO(lst.st_mode) ? "a FIFO"
				: S_ISDIR(lst.st_mode)	? "a directory"
							: "a device or socket");
	memset(&o, 0, sizeof(o));
	o.fd = -1;
	o.shown = xstrdup(path);
	st = open_replacing(&o, path, exists ? &lst : NULL, path, err);
	if (!st)
		st = tfd_output_put(&o, buf, len, err);
	if (st) {
		tfd_output_abort(&o);
		return st;
	}
	return tfd_output_commit(&o, err);
}

enum tfd_status tfd_output_write(const char *path, const char *buf, size_t len, struct tfd_err *err)
{
	struct tfd_output o;
	enum tfd_status st = tfd_output_open(&o, path, err);

	if (!st && (st = tfd_output_put(&o, buf, len, err)) != TFD_OK) {
		tfd_output_abort(&o);
		return st;
	}
	return st ? st : tfd_output_commit(&o, err);
}
