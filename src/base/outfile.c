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

/* A device, FIFO or terminal: write into it, never replace it. */
static enum tfd_status write_through(const char *path, const char *buf, size_t len,
				     struct tfd_err *err)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	if (write_all(fd, buf, len) != 0) {
		int e = errno;

		close(fd);
		return tfd_fail(err, TFD_E_IO, "writing '%s': %s", path, strerror(e));
	}
	if (close(fd) != 0)
		return tfd_fail(err, TFD_E_IO, "writing '%s': %s", path, strerror(errno));
	return TFD_OK;
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

/* Replace (or create) the regular file at target atomically. */
static enum tfd_status replace_file(const char *target, const struct stat *old, const char *shown,
				    const char *buf, size_t len, struct tfd_err *err)
{
	const char *slash = strrchr(target, '/');
	char dir[PATH_MAX], tmp[PATH_MAX];
	int fd, e;

	if (slash) {
		size_t dl = slash == target ? 1 : (size_t)(slash - target);

		if (dl >= sizeof(dir))
			return tfd_fail(err, TFD_E_IO, "%s: path too long", shown);
		memcpy(dir, target, dl);
		dir[dl] = 0;
	} else {
		strcpy(dir, ".");
	}
	if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, slash ? slash + 1 : target) >=
	    (int)sizeof(tmp))
		return tfd_fail(err, TFD_E_IO, "%s: path too long", shown);
	fd = mkstemp(tmp); /* O_EXCL, mode 0600: no planted file or link is followed */
	if (fd < 0)
		return tfd_fail(err, TFD_E_IO, "%s: cannot create a file in '%s': %s", shown, dir,
				strerror(errno));
	if (fchmod(fd, old ? old->st_mode & 07777 : new_file_mode()) != 0 ||
	    write_all(fd, buf, len) != 0 || fsync(fd) != 0)
		goto fail;
	if (old && geteuid() == 0)
		(void)fchown(fd, old->st_uid, old->st_gid); /* root keeps the owner */
	if (close(fd) != 0) {
		fd = -1;
		goto fail;
	}
	fd = -1;
	if (rename(tmp, target) != 0)
		goto fail;
	fsync_dir(dir);
	return TFD_OK;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	return tfd_fail(err, TFD_E_IO, "writing '%s': %s", shown, strerror(e));
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
	if (!slash)
		strcpy(dir, ".");
	else if ((size_t)(slash - path) >= sizeof(dir))
		return tfd_fail(err, TFD_E_IO, "%s: path too long", path);
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
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

enum tfd_status tfd_output_write(const char *path, const char *buf, size_t len, struct tfd_err *err)
{
	struct stat st, lst;
	char *real;
	enum tfd_status s;

	if (!path || strcmp(path, "-") == 0) {
		if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0)
			return tfd_fail(err, TFD_E_IO, "writing standard output: %s",
					strerror(errno));
		return TFD_OK;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode))
			return tfd_fail(err, TFD_E_IO, "%s: is a directory", path);
		if (!S_ISREG(st.st_mode))
			return write_through(path, buf, len, err);
	} else if (errno != ENOENT) {
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	} else if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
		return tfd_fail(err, TFD_E_IO,
				"%s: is a symlink to a missing file; refusing to follow it", path);
	} else {
		return replace_file(path, NULL, path, buf, len, err);
	}
	/* an existing regular file, maybe behind symlinks: replace what they point at */
	if (lstat(path, &lst) != 0 || !S_ISLNK(lst.st_mode))
		return replace_file(path, &st, path, buf, len, err);
	real = realpath(path, NULL);
	if (!real)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	s = replace_file(real, &st, path, buf, len, err);
	free(real);
	return s;
}
