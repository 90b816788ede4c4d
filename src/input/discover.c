/* discover.c - from paths to a loaded capture: files read (mapped, or
 * inflated from gzip; a gzipped Chrome trace is handed to its reader still
 * compressed), formats sniffed from the bytes, derived tool files
 * refused, TensorBoard log directories and run directories expanded, and
 * several files read at once. Calls the readers; the model they build is
 * in capture.c. */
#define _GNU_SOURCE /* sched_getaffinity */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "input_impl.h"
#include "tfd/capture.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include "tfd/vec.h"

/* ---- reading files ----------------------------------------------------- */

struct blob {
	const uint8_t *data;
	size_t len;
	void *map; /* mmap base, or NULL */
	size_t maplen;
	uint8_t *heap; /* inflated bytes, or NULL */
};

static void blob_release(struct blob *b)
{
	if (b->map)
		munmap(b->map, b->maplen);
	free(b->heap);
	memset(b, 0, sizeof(*b));
}

#define TFD_MAX_INFLATED ((size_t)8 << 30)

/* The inflate limit in force. */
static size_t inflate_limit(const struct tfd_load_opts *opts)
{
	return opts && opts->max_inflated ? opts->max_inflated : TFD_MAX_INFLATED;
}

/* A growing buffer: the sink of a whole-document inflate. */
struct grow {
	uint8_t *p;
	size_t len, cap;
};

static bool grow_append(void *ctx, const uint8_t *p, size_t n)
{
	struct grow *g = ctx;

	if (g->len + n > g->cap) {
		while (g->len + n > g->cap)
			g->cap *= 2;
		g->p = xrealloc(g->p, g->cap);
	}
	memcpy(g->p + g->len, p, n);
	g->len += n;
	return true;
}

/* The process's mapped address space (what a ulimit -v counts), 0 if
 * unknown. */
static size_t mapped_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	long pg = sysconf(_SC_PAGESIZE);

	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pg > 0 ? (size_t)pages * (size_t)pg : 0;
}

/* The whole inflated document in memory (formats read in place). */
static enum tfd_status inflate_gz(const uint8_t *src, size_t len, bool mapped, size_t limit,
				  struct blob *out, struct tfd_err *err)
{
	struct grow g = {NULL, 0, len * 4 + 4096};
	enum tfd_status st;

	g.p = xmalloc(g.cap);
	st = tfd_gunzip(src, len, mapped, limit, grow_append, &g, err);
	if (st) {
		free(g.p);
		return st;
	}
	out->heap = g.p;
	out->data = g.p;
	out->len = g.len;
	return TFD_OK;
}

static enum tfd_status read_file(const char *path, struct blob *b, struct tfd_err *err)
{
	struct stat st;
	int fd;
	void *m;

	memset(b, 0, sizeof(*b));
	/* O_NONBLOCK: a FIFO must not block the open before it is refused below */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return tfd_fail(err, TFD_E_IO, "%s", strerror(errno));
	if (fstat(fd, &st) < 0) {
		close(fd);
		return tfd_fail(err, TFD_E_IO, "%s", strerror(errno));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return tfd_fail(err, TFD_E_IO, "is a directory");
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return tfd_fail(err, TFD_E_IO,
				"not a regular file (%s); a capture is a file or a "
				"directory of them",
				S_ISCHR(st.st_mode)    ? "a character device"
				: S_ISBLK(st.st_mode)  ? "a block device"
				: S_ISFIFO(st.st_mode) ? "a pipe"
						       : "a socket");
	}
	if (st.st_size == 0) {
		close(fd);
		return tfd_fail(err, TFD_E_FORMAT, "empty file");
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		int e = errno;
		struct rlimit rl;

		/* the usual cause: a ulimit -v (a container's limit) without
		 * room for the file besides what the process has mapped */
		if (e == ENOMEM && getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			return tfd_fail(err, TFD_E_IO,
					"cannot map the file (%.0f MB): the address-space limit "
					"(ulimit -v) is %.0f MB and %.0f MB of it is in use",
					(double)st.st_size / 1e6, (double)rl.rlim_cur / 1e6,
					(double)mapped_bytes() / 1e6);
		return tfd_fail(err, TFD_E_IO, "cannot map file: %s", strerror(e));
	}
	madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
	tfd_pages_split_map(m, (size_t)st.st_size);
	b->map = m;
	b->maplen = (size_t)st.st_size;
	b->data = m;
	b->len = (size_t)st.st_size;
	return TFD_OK;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* XSpace or TF 2.0 Trace? Both are protobufs whose field 1 holds a message
 * with a field 2: an XPlane's name (text such as "/host:CPU") or a Trace
 * devices-map entry's Device message (which starts with a tag byte). */
static int looks_like_tf2_trace(const uint8_t *p, size_t len)
{
	const uint8_t *end = p + len;

	while (p < end) {
		uint64_t key, l;
		size_t k = tfd_pb_varint(p, end, &key);

		if (!k)
			return 0;
		p += k;
		if ((key & 7) != 2) {
			if ((key & 7) == 0) {
				k = tfd_pb_varint(p, end, &l);
				if (!k)
					return 0;
				p += k;
				continue;
			}
			return 0;
		}
		k = tfd_pb_varint(p, end, &l);
		if (!k || l > (uint64_t)(end - p - k))
			return 0;
		p += k;
		if ((key >> 3) == 1) {
			const uint8_t *q = p, *qe = p + l;

			while (q < qe) {
				uint64_t k2, l2;
				size_t n2 = tfd_pb_varint(q, qe, &k2);

				if (!n2)
					return 0;
				q += n2;
				if ((k2 & 7) == 0) {
					n2 = tfd_pb_varint(q, qe, &l2);
					if (!n2)
						return 0;
					q += n2;
					continue;
				}
				if ((k2 & 7) != 2)
					return 0;
				n2 = tfd_pb_varint(q, qe, &l2);
				if (!n2 || l2 > (uint64_t)(qe - q - n2))
					return 0;
				q += n2;
				if ((k2 >> 3) == 2)
					return l2 > 0 && q[0] == 0x0a;
				q += l2;
			}
			return 0;
		}
		if ((key >> 3) == 4) /* XSpace hostnames are text; Trace events are messages */
			return l > 0 && p[0] < 0x20;
		p += l;
	}
	return 0;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcmp(s + n - k, suf) == 0;
}

static int sniff_json(const uint8_t *p, size_t len)
{
	size_t i = 0;

	while (i < len && isspace(p[i]))
		i++;
	return i < len && (p[i] == '{' || p[i] == '[');
}

static int sniff_any(const uint8_t *p, size_t len)
{
	(void)p;
	return len > 0;
}

static enum tfd_status read_chrome(struct tfd_capture *cap, const uint8_t *data, size_t len,
				   const char *path, const char *host,
				   const struct tfd_load_opts *opts, bool mapped,
				   struct tfd_err *err)
{
	return tfd_chrome_read(cap, (const char *)data, len, path, host, opts, mapped, err);
}

static enum tfd_status read_trace(struct tfd_capture *cap, const uint8_t *data, size_t len,
				  const char *path, const char *host,
				  const struct tfd_load_opts *opts, bool mapped,
				  struct tfd_err *err)
{
	(void)mapped;
	return tfd_trace_read(cap, data, len, path, host, opts, err);
}

/* The capture formats. Sniffing goes by bytes, in table order (the first
 * reader whose sniff claims the data reads it; a protobuf that is not a
 * TF 2.0 Trace falls through to XSpace). `scan` names the files a directory
 * scan picks up; `strip` the suffixes dropped to name the host. Within one
 * directory, a host's file of a lower `rank` shadows its others (the
 * trace.json is a rendering of the xplane.pb). */
static const struct reader {
	const char *name;
	const char *scan[4];
	const char *strip[4];
	int (*sniff)(const uint8_t *p, size_t len);
	enum tfd_status (*read)(struct tfd_capture *cap, const uint8_t *data, size_t len,
				const char *path, const char *host,
				const struct tfd_load_opts *opts, bool mapped, struct tfd_err *err);
	int rank;
} readers[] = {
    {"chrome-json",
     {".trace.json", ".trace.json.gz"},
     {".trace.json.gz", ".trace.json", ".json.gz", ".json"},
     sniff_json,
     read_chrome,
     1},
    {"tf2-trace", {"local.trace"}, {".trace"}, looks_like_tf2_trace, read_trace, 2},
    {"xspace",
     {".xplane.pb", ".xplane.pb.gz"},
     {".xplane.pb.gz", ".xplane.pb", ".pb", ".gz"},
     sniff_any,
     tfd_xspace_read,
     0},
};
#define NREADERS (sizeof(readers) / sizeof(readers[0]))

/* The reader a directory scan picks name up for, or NULL. */
static const struct reader *reader_for_name(const char *name)
{
	for (size_t r = 0; r < NREADERS; r++)
		for (size_t k = 0; k < 4 && readers[r].scan[k]; k++)
			if (ends_with(name, readers[r].scan[k]))
				return &readers[r];
	return NULL;
}

bool tfd_capture_file_name(const char *name)
{
	return reader_for_name(name) != NULL;
}

/* Host name from a file name: drop the reader's suffix. */
static void host_from_path(const char *path, char *out, size_t outlen)
{
	const char *b = base_name(path);
	size_t n = strlen(b), best = 0;

	for (size_t r = 0; r < NREADERS; r++)
		for (size_t k = 0; k < 4 && readers[r].strip[k]; k++) {
			size_t l = strlen(readers[r].strip[k]);

			if (n > l && l > best && strcmp(b + n - l, readers[r].strip[k]) == 0)
				best = l;
		}
	n -= best;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, b, n);
	out[n] = '\0';
}

static int is_derived_tool_file(const char *path)
{
	static const char *const suf[] = {".input_pipeline.pb",	  ".overview_page.pb",
					  ".tensorflow_stats.pb", ".input_pipeline.json",
					  ".kernel_stats.pb",	  ".memory_profile.json.gz"};
	size_t n = strlen(path);

	for (size_t i = 0; i < sizeof(suf) / sizeof(suf[0]); i++) {
		size_t k = strlen(suf[i]);

		if (n >= k && strcmp(path + n - k, suf[i]) == 0)
			return 1;
	}
	return 0;
}

/* After a reader: the derived-file hint, no half-read host, the gzip mark. */
static enum tfd_status loaded(struct tfd_capture *cap, size_t before, int gzipped, const char *path,
			      enum tfd_status st, struct tfd_err *err)
{
	if (st == TFD_E_FORMAT && is_derived_tool_file(path))
		st =
		    tfd_fail(err, TFD_E_FORMAT,
			     "a derived profiler tool file, not a raw capture (use the *.xplane.pb "
			     "of the same run)");
	while (st && cap->nhosts > before)
		tfd_capture_drop_last_host(cap);
	if (st == TFD_OK && cap->nhosts > before)
		cap->hosts[cap->nhosts - 1].gzipped = gzipped;
	return st;
}

static enum tfd_status load_bytes(struct tfd_capture *cap, const uint8_t *data, size_t len,
				  int gzipped, bool mapped, const char *path,
				  const struct tfd_load_opts *opts, struct tfd_err *err)
{
	char host[256];
	size_t i = 0;
	enum tfd_status st;
	size_t before = cap->nhosts;

	host_from_path(path, host, sizeof(host));
	while (i < len && isspace(data[i]))
		i++;
	if (i == len)
		return tfd_fail(err, TFD_E_FORMAT,
				gzipped ? "empty after decompression" : "empty file");
	st = TFD_E_FORMAT;
	for (size_t r = 0; r < NREADERS; r++) {
		if (!readers[r].sniff(data, len))
			continue;
		st = readers[r].read(cap, data, len, path, host, opts, mapped, err);
		if (st != TFD_E_FORMAT || readers[r].sniff == sniff_json)
			break;
		/* a protobuf that is not this format: try the next reader */
		while (cap->nhosts > before)
			tfd_capture_drop_last_host(cap);
		if (r + 1 < NREADERS && readers[r + 1].sniff == sniff_any) {
			st = readers[r + 1].read(cap, data, len, path, host, opts, mapped, err);
			if (st == TFD_E_FORMAT)
				st = tfd_fail(
				    err, TFD_E_FORMAT,
				    "not a profiler capture (neither an XSpace nor a TF 2.0 "
				    "Trace protobuf)");
			break;
		}
	}
	return loaded(cap, before, gzipped, path, st, err);
}

/* The first inflated bytes of gzip data, to sniff the format; 0 if none. */
static size_t gz_peek(const uint8_t *src, size_t len, uint8_t *out, size_t cap)
{
	z_stream zs;
	size_t n;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return 0;
	zs.next_in = (Bytef *)src;
	zs.avail_in = len > 0x40000000u ? 0x40000000u : (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	(void)inflate(&zs, Z_SYNC_FLUSH);
	n = cap - zs.avail_out;
	inflateEnd(&zs);
	return n;
}

/* A gzipped Chrome trace is parsed while it is inflated, never held whole;
 * false (nothing done) when the data does not start like JSON. */
static bool load_gz_json(struct tfd_capture *cap, const uint8_t *gz, size_t len, bool mapped,
			 const char *path, const struct tfd_load_opts *opts, enum tfd_status *st,
			 struct tfd_err *err)
{
	uint8_t head[4096];
	size_t n = gz_peek(gz, len, head, sizeof(head)), before = cap->nhosts;
	char host[256];

	if (!sniff_json(head, n))
		return false;
	host_from_path(path, host, sizeof(host));
	*st = tfd_chrome_read_gz(cap, gz, len, mapped, inflate_limit(opts), host, opts, err);
	*st = loaded(cap, before, 1, path, *st, err);
	return true;
}

/* Bytes of a file or of memory, gzipped or not, into cap: a gzipped Chrome
 * trace is parsed while it inflates, other gzip data is inflated whole. */
static enum tfd_status load_data(struct tfd_capture *cap, const uint8_t *data, size_t len,
				 bool mapped, const char *path, const struct tfd_load_opts *opts,
				 struct tfd_err *err)
{
	struct blob z;
	enum tfd_status st;

	if (len < 2 || data[0] != 0x1f || data[1] != 0x8b)
		return load_bytes(cap, data, len, 0, mapped, path, opts, err);
	if (load_gz_json(cap, data, len, mapped, path, opts, &st, err))
		return st;
	memset(&z, 0, sizeof(z));
	st = inflate_gz(data, len, mapped, inflate_limit(opts), &z, err);
	if (!st)
		st = load_bytes(cap, z.data, z.len, 1, false, path, opts, err);
	blob_release(&z);
	return st;
}

static enum tfd_status load_file(struct tfd_capture *cap, const char *path,
				 const struct tfd_load_opts *opts, struct tfd_err *err)
{
	struct blob b;
	enum tfd_status st;

	st = read_file(path, &b, err);
	if (!st) {
		st = load_data(cap, b.data, b.len, b.map != NULL, path, opts, err);
		blob_release(&b);
	}
	if (st)
		tfd_err_prefix(err, "%s", path);
	return st;
}

enum tfd_status tfd_capture_load_mem(const void *data, size_t len, const char *name,
				     const struct tfd_load_opts *opts, struct tfd_capture **out,
				     struct tfd_err *err)
{
	struct tfd_capture *cap = tfd_capture_new();
	enum tfd_status st;

	*out = NULL;
	if (len == 0)
		st = tfd_fail(err, TFD_E_FORMAT, "empty file");
	else
		st = load_data(cap, data, len, false, name, opts, err);
	if (!st)
		st = tfd_capture_finish(cap, err);
	if (st) {
		tfd_err_prefix(err, "%s", name);
		tfd_capture_free(cap);
		return st;
	}
	*out = cap;
	return TFD_OK;
}

/* ---- input discovery --------------------------------------------------- */

typedef VEC(char *) strvec;

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir), k = strlen(name);
	char *p = xmalloc(n + k + 2);

	memcpy(p, dir, n);
	if (n && dir[n - 1] != '/')
		p[n++] = '/';
	memcpy(p + n, name, k + 1);
	return p;
}

static int is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static uint64_t weighed(const char *name, const struct stat *st)
{
	return (uint64_t)st->st_size * (ends_with(name, ".gz") ? 8 : 1);
}

static uint64_t largest_in(const char *dir, int depth, size_t *budget)
{
	DIR *d;
	struct dirent *de;
	uint64_t best = 0;

	if (depth > 8 || !(d = opendir(dir)))
		return 0;
	while (*budget && (de = readdir(d))) {
		char *p;
		struct stat st;

		(*budget)--;
		if (de->d_name[0] == '.')
			continue;
		p = join(dir, de->d_name);
		if (lstat(p, &st) == 0) {
			uint64_t b = 0;

			if (S_ISDIR(st.st_mode))
				b = largest_in(p, depth + 1, budget);
			else if ((S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) &&
				 tfd_capture_file_name(de->d_name) && stat(p, &st) == 0 &&
				 S_ISREG(st.st_mode))
				b = weighed(de->d_name, &st);
			if (b > best)
				best = b;
		}
		free(p);
	}
	closedir(d);
	return best;
}

uint64_t tfd_capture_largest(const char *const *paths, size_t npaths)
{
	uint64_t best = 0;
	size_t budget = 100000;

	for (size_t i = 0; i < npaths; i++) {
		struct stat st;
		uint64_t b = 0;

		if (stat(paths[i], &st) != 0)
			continue;
		if (S_ISREG(st.st_mode))
			b = weighed(paths[i], &st);
		else if (S_ISDIR(st.st_mode))
			b = largest_in(paths[i], 0, &budget);
		if (b > best)
			best = b;
	}
	return best;
}

static char *note_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static char *note_printf(const char *fmt, ...)
{
	char buf[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return xstrdup(buf);
}

/* A derived tool file directly in dir (to point at the raw capture). */
static char *derived_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char *found = NULL;

	while (d && !found && (de = readdir(d)) != NULL)
		if (is_derived_tool_file(de->d_name))
			found = xstrdup(de->d_name);
	if (d)
		closedir(d);
	return found;
}

/* Capture files directly in dir, sorted; a host with an xplane.pb does not
 * also load its trace.json(.gz), which is a rendering of the same data. */
static void list_captures(const char *dir, strvec *out, strvec *notes)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	strvec names = {0};

	if (!d)
		return;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.' || !reader_for_name(de->d_name))
			continue;
		vec_push(&names, xstrdup(de->d_name));
	}
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), str_cmp);
	for (size_t i = 0; i < names.n; i++) {
		char host[256];
		int shadowed = 0;

		host_from_path(names.v[i], host, sizeof(host));
		for (size_t j = 0; j < names.n && !shadowed; j++) {
			char h2[256];

			if (j == i ||
			    reader_for_name(names.v[j])->rank >= reader_for_name(names.v[i])->rank)
				continue;
			host_from_path(names.v[j], h2, sizeof(h2));
			shadowed = strcmp(h2, host) == 0;
			if (shadowed && notes)
				vec_push(notes, note_printf("skipped %s: %s holds the same capture",
							    names.v[i], names.v[j]));
		}
		if (!shadowed)
			vec_push(out, join(dir, names.v[i]));
	}
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	vec_free(&names);
}

static int has_captures(const char *dir)
{
	strvec tmp = {0};
	size_t n;

	list_captures(dir, &tmp, NULL);
	n = tmp.n;
	for (size_t i = 0; i < tmp.n; i++)
		free(tmp.v[i]);
	vec_free(&tmp);
	return n > 0;
}

/* Find plugins/profile/<run> directories below root (depth-limited). */
static void find_runs(const char *root, int depth, strvec *runs)
{
	char *prof = join(root, "plugins/profile");
	DIR *d;
	struct dirent *de;

	if (is_dir(prof)) {
		d = opendir(prof);
		while (d && (de = readdir(d)) != NULL) {
			char *p;

			if (de->d_name[0] == '.')
				continue;
			p = join(prof, de->d_name);
			if (is_dir(p))
				vec_push(runs, p);
			else
				free(p);
		}
		if (d)
			closedir(d);
	}
	free(prof);
	if (depth <= 0)
		return;
	d = opendir(root);
	while (d && (de = readdir(d)) != NULL) {
		char *p;

		if (de->d_name[0] == '.' || strcmp(de->d_name, "plugins") == 0)
			continue;
		p = join(root, de->d_name);
		if (is_dir(p))
			find_runs(p, depth - 1, runs);
		free(p);
	}
	if (d)
		closedir(d);
}

static int run_cmp(const void *a, const void *b)
{
	const char *x = base_name(*(char *const *)a), *y = base_name(*(char *const *)b);
	int c = strcmp(x, y);

	return c ? c : strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the last component of path (trailing slashes aside) is name. */
static bool last_component_is(const char *path, const char *name)
{
	size_t n = strlen(path), k = strlen(name);

	while (n > 1 && path[n - 1] == '/')
		n--;
	return n >= k && memcmp(path + n - k, name, k) == 0 && (n == k || path[n - k - 1] == '/');
}

/* The run directories under dir: .../plugins/profile/<run> up to four levels
 * down, or, when dir is plugins/profile itself (or the plugins directory
 * above it), its subdirectories that hold captures. Unsorted. */
static void collect_runs(const char *dir, strvec *runs)
{
	DIR *d;
	struct dirent *de;

	find_runs(dir, 4, runs);
	if (!runs->n && last_component_is(dir, "plugins")) {
		char *prof = join(dir, "profile");

		if (is_dir(prof))
			collect_runs(prof, runs);
		free(prof);
	}
	if (runs->n || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)) != NULL) {
		char *p;

		if (de->d_name[0] == '.')
			continue;
		p = join(dir, de->d_name);
		if (is_dir(p) && has_captures(p))
			vec_push(runs, p);
		else
			free(p);
	}
	closedir(d);
}

static enum tfd_status expand_dir(const char *dir, const struct tfd_load_opts *opts, strvec *files,
				  const char **run_out, struct tfd_arena *arena, strvec *notes,
				  struct tfd_err *err)
{
	strvec runs = {0};
	enum tfd_status st = TFD_OK;
	size_t before = files->n;

	list_captures(dir, files, notes);
	if (files->n > before)
		return TFD_OK;
	collect_runs(dir, &runs);
	if (runs.n == 0) {
		char *derived = derived_in(dir);

		if (derived)
			st = tfd_fail(err, TFD_E_FORMAT,
				      "no profiler captures found, only derived tool files such as "
				      "'%s' (use the *.xplane.pb of the same run)",
				      derived);
		else
			st = tfd_fail(err, TFD_E_FORMAT,
				      "no profiler captures found (looked for *.xplane.pb, "
				      "*.trace.json[.gz] and plugins/profile/<run>/)");
		free(derived);
		goto out;
	}
	qsort(runs.v, runs.n, sizeof(char *), run_cmp);
	{
		const char *pick = NULL;

		if (opts && opts->run) {
			for (size_t i = runs.n; i-- > 0;)
				if (strcmp(base_name(runs.v[i]), opts->run) == 0) {
					pick = runs.v[i];
					break;
				}
			if (!pick) {
				st =
				    tfd_fail(err, TFD_E_USAGE, "no run named '%s' (newest is '%s')",
					     opts->run, base_name(runs.v[runs.n - 1]));
				goto out;
			}
		} else {
			/* newest run that holds captures (names are timestamps) */
			for (size_t i = runs.n; i-- > 0 && !pick;)
				if (has_captures(runs.v[i]))
					pick = runs.v[i];
			if (!pick) {
				st = tfd_fail(err, TFD_E_FORMAT,
					      "no profiler captures found in any of %zu run "
					      "directories",
					      runs.n);
				goto out;
			}
		}
		list_captures(pick, files, notes);
		if (files->n == before) {
			st = tfd_fail(err, TFD_E_FORMAT, "run '%s' holds no profiler captures",
				      base_name(pick));
			goto out;
		}
		*run_out = tfd_arena_intern_cstr(arena, base_name(pick));
		if (runs.n > 1 && notes && !(opts && opts->run)) {
			vec_push(notes, note_printf("analyzed run '%s': the newest of %zu runs by "
						    "name (run names are times)",
						    base_name(pick), runs.n));
			for (size_t i = runs.n; i-- > 0;)
				if (runs.v[i] != pick)
					vec_push(notes,
						 note_printf("skipped run '%s' (%s): use --run %s, "
							     "or --all-runs for every run",
							     base_name(runs.v[i]), runs.v[i],
							     base_name(runs.v[i])));
		}
	}
out:
	for (size_t i = 0; i < runs.n; i++)
		free(runs.v[i]);
	vec_free(&runs);
	return st;
}

/* ---- files on several threads --------------------------------------------- */

size_t tfd_load_cores(const struct tfd_load_opts *opts)
{
	return opts && opts->jobs > 0 ? (size_t)opts->jobs : tfd_cpu_count();
}

/* Discovery's notes, interned in cap. */
static void set_notes(struct tfd_capture *cap, const char *const *notes, size_t n)
{
	if (!n)
		return;
	cap->notes = tfd_arena_alloc(&cap->arena, n * sizeof(*cap->notes));
	for (size_t k = 0; k < n; k++)
		cap->notes[cap->nnotes++] = tfd_arena_intern_cstr(&cap->arena, notes[k]);
}

/* What happens to file i once it is loaded (into a capture of its own):
 * fn may keep it by setting *capp to NULL; else it is freed. */
typedef enum tfd_status (*loaded_fn)(struct tfd_capture **capp, size_t i, void *ctx,
				     struct tfd_err *err);

struct job {
	enum tfd_status load_st, fn_st;
	struct tfd_err load_err, fn_err;
};

struct pool {
	const char *const *files;
	size_t n;
	const struct tfd_load_opts *opts, *sub;
	const struct tfd_capture *found; /* discovery's notes and run, or NULL */
	bool finish; /* each capture is finished before fn (else the caller's) */
	loaded_fn fn;
	void *ctx;
	struct job *jobs;
	pthread_mutex_t mu;
};

static void progress(struct pool *pl, size_t i, size_t events)
{
	if (pl->opts && pl->opts->progress) {
		pthread_mutex_lock(&pl->mu);
		pl->opts->progress(pl->files[i], i, pl->n, events);
		pthread_mutex_unlock(&pl->mu);
	}
}

static void pool_one(struct pool *pl, size_t i)
{
	struct job *j = &pl->jobs[i];
	struct tfd_capture *cap = tfd_capture_new();

	if (pl->found) {
		set_notes(cap, pl->found->notes, pl->found->nnotes);
		if (pl->found->run)
			cap->run = tfd_arena_intern_cstr(&cap->arena, pl->found->run);
	}
	j->load_st = load_file(cap, pl->files[i], pl->sub, &j->load_err);
	if (!j->load_st) {
		for (size_t h = 0; h < cap->nhosts; h++)
			cap->hosts[h].path = tfd_arena_intern_cstr(&cap->arena, pl->files[i]);
		if (pl->finish)
			j->load_st = tfd_capture_finish(cap, &j->load_err);
	}
	if (!j->load_st) {
		progress(pl, i, cap->nhosts ? cap->hosts[cap->nhosts - 1].nevents : 0);
		j->fn_st = pl->fn(&cap, i, pl->ctx, &j->fn_err);
	}
	tfd_capture_free(cap);
}

static bool pool_item(void *ctx, size_t worker, size_t i)
{
	struct pool *pl = ctx;

	(void)worker;
	progress(pl, i, 0);
	pool_one(pl, i);
	return true; /* each file's error is its job's: every file is read */
}

/* Every file through pool_one() (finished first if finish), on up to one
 * thread per core (at most 8), each file getting the cores left over for
 * its lines; then the error one load gives: the first file, in order, that
 * does not load, else the first that fn failed on. */
static enum tfd_status run_pool(const char *const *files, size_t n,
				const struct tfd_load_opts *opts, const struct tfd_capture *found,
				bool finish, loaded_fn fn, void *ctx, struct tfd_err *err)
{
	size_t cores = tfd_load_cores(opts);
	size_t nthreads = cores < 8 ? cores : 8;
	struct tfd_load_opts sub;
	struct pool pl;
	enum tfd_status st = TFD_OK;

	if (nthreads > n)
		nthreads = n;
	if (opts)
		sub = *opts;
	else
		memset(&sub, 0, sizeof(sub));
	if (nthreads > 1)
		sub.jobs = (int)(cores / nthreads ? cores / nthreads : 1);
	memset(&pl, 0, sizeof(pl));
	pl.files = files;
	pl.n = n;
	pl.opts = opts;
	pl.sub = &sub;
	pl.found = found;
	pl.finish = finish;
	pl.fn = fn;
	pl.ctx = ctx;
	pl.jobs = xcalloc(n + 1, sizeof(*pl.jobs));
	pthread_mutex_init(&pl.mu, NULL);
	tfd_pool_run(n, nthreads, NULL, false, pool_item, &pl);
	pthread_mutex_destroy(&pl.mu);
	for (size_t i = 0; i < n && !st; i++)
		if (pl.jobs[i].load_st) {
			st = pl.jobs[i].load_st;
			*err = pl.jobs[i].load_err;
		}
	for (size_t i = 0; i < n && !st; i++)
		if (pl.jobs[i].fn_st) {
			st = pl.jobs[i].fn_st;
			*err = pl.jobs[i].fn_err;
		}
	free(pl.jobs);
	if (opts && opts->progress)
		opts->progress(NULL, n, n, 0);
	return st;
}

/* Keeps each file's capture in its slot. */
static enum tfd_status keep_loaded(struct tfd_capture **capp, size_t i, void *ctx,
				   struct tfd_err *err)
{
	struct tfd_capture **slots = ctx;

	(void)err;
	slots[i] = *capp;
	*capp = NULL;
	return TFD_OK;
}

/* Load files into cap in order; with several files, on several threads,
 * each into a capture of its own (no shared arena), moved into cap
 * afterwards. The first failing file, in order, is the error. */
static enum tfd_status load_files(struct tfd_capture *cap, const char *const *files, size_t n,
				  const struct tfd_load_opts *opts, struct tfd_err *err)
{
	size_t cores = tfd_load_cores(opts);
	struct tfd_capture **slots;
	enum tfd_status st;

	if (n <= 1 || cores <= 1) {
		/* one after another, straight into cap */
		for (size_t i = 0; i < n; i++) {
			if (opts && opts->progress)
				opts->progress(files[i], i, n, 0);
			st = load_file(cap, files[i], opts, err);
			if (st)
				return st;
			cap->hosts[cap->nhosts - 1].path =
			    tfd_arena_intern_cstr(&cap->arena, files[i]);
			if (opts && opts->progress)
				opts->progress(files[i], i, n, cap->hosts[cap->nhosts - 1].nevents);
		}
		if (opts && opts->progress && n)
			opts->progress(NULL, n, n, 0);
		return TFD_OK;
	}
	slots = xcalloc(n + 1, sizeof(*slots));
	st = run_pool(files, n, opts, NULL, false, keep_loaded, slots, err);
	for (size_t i = 0; i < n; i++) {
		if (slots[i] && st)
			tfd_capture_free(slots[i]); /* a load failed: nothing to keep */
		else if (slots[i])
			tfd_capture_adopt(cap, slots[i], files[i]); /* strings stay in its arena */
	}
	free(slots);
	return st;
}

enum tfd_status tfd_capture_runs(const char *path, char ***names, size_t *n, struct tfd_err *err)
{
	strvec runs = {0}, direct = {0};

	*names = NULL;
	*n = 0;
	if (!is_dir(path))
		return tfd_fail(err, TFD_E_USAGE, "%s: --all-runs needs a log directory", path);
	list_captures(path, &direct, NULL);
	if (direct.n) {
		/* a run directory itself: one run */
		for (size_t i = 0; i < direct.n; i++)
			free(direct.v[i]);
		vec_free(&direct);
		*names = xmalloc(sizeof(char *));
		(*names)[0] = xstrdup(base_name(path));
		*n = 1;
		return TFD_OK;
	}
	collect_runs(path, &runs);
	if (runs.n == 0)
		return tfd_fail(err, TFD_E_FORMAT, "%s: no profiler captures found", path);
	qsort(runs.v, runs.n, sizeof(char *), run_cmp);
	*names = xmalloc(runs.n * sizeof(char *));
	for (size_t i = 0; i < runs.n; i++) {
		(*names)[(*n)++] = xstrdup(base_name(runs.v[i]));
		free(runs.v[i]);
	}
	vec_free(&runs);
	return TFD_OK;
}

/* The host files paths name, in host order (the shard applied), with
 * discovery's notes and the run name set on cap. */
static enum tfd_status discover(const char *const *paths, size_t npaths,
				const struct tfd_load_opts *opts, struct tfd_capture *cap,
				strvec *files, struct tfd_err *err)
{
	strvec notes = {0};
	enum tfd_status st = TFD_OK;

	for (size_t i = 0; i < npaths && !st; i++) {
		struct stat sb;

		if (stat(paths[i], &sb) < 0) {
			st = tfd_fail(err, TFD_E_IO, "%s: %s", paths[i], strerror(errno));
		} else if (S_ISDIR(sb.st_mode)) {
			const char *run = NULL;

			st = expand_dir(paths[i], opts, files, &run, &cap->arena, &notes, err);
			if (st)
				tfd_err_prefix(err, "%s", paths[i]);
			else if (run)
				cap->run = run;
		} else {
			vec_push(files, xstrdup(paths[i]));
		}
	}
	if (!st)
		set_notes(cap, (const char *const *)notes.v, notes.n);
	if (!st && opts && opts->shard_count) {
		size_t k = 0;

		for (size_t i = 0; i < files->n; i++) {
			if (i % opts->shard_count == opts->shard_index)
				files->v[k++] = files->v[i];
			else
				free(files->v[i]);
		}
		files->n = k;
	}
	for (size_t k = 0; k < notes.n; k++)
		free(notes.v[k]);
	vec_free(&notes);
	return st;
}

static void free_files(strvec *files)
{
	for (size_t i = 0; i < files->n; i++)
		free(files->v[i]);
	vec_free(files);
}

enum tfd_status tfd_capture_load(const char *const *paths, size_t npaths,
				 const struct tfd_load_opts *opts, struct tfd_capture **out,
				 struct tfd_err *err)
{
	struct tfd_capture *cap = tfd_capture_new();
	strvec files = {0};
	enum tfd_status st;

	*out = NULL;
	st = discover(paths, npaths, opts, cap, &files, err);
	if (!st)
		st = load_files(cap, (const char *const *)files.v, files.n, opts, err);
	if (!st)
		st = tfd_capture_finish(cap, err);
	free_files(&files);
	if (st) {
		tfd_capture_free(cap);
		return st;
	}
	tfd_capture_name_hosts_apart(cap);
	*out = cap;
	return TFD_OK;
}

/* ---- one file at a time ------------------------------------------------- */

struct each {
	tfd_capture_fn fn;
	void *ctx;
	size_t n;
};

static enum tfd_status each_loaded(struct tfd_capture **capp, size_t i, void *ctx,
				   struct tfd_err *err)
{
	struct each *ea = ctx;

	return ea->fn(*capp, i, ea->n, ea->ctx, err);
}

enum tfd_status tfd_capture_each(const char *const *paths, size_t npaths,
				 const struct tfd_load_opts *opts, tfd_capture_fn fn, void *ctx,
				 struct tfd_err *err)
{
	struct tfd_capture *found = tfd_capture_new();
	strvec files = {0};
	struct each ea = {fn, ctx, 0};
	enum tfd_status st;

	st = discover(paths, npaths, opts, found, &files, err);
	if (!st) {
		ea.n = files.n;
		st = run_pool((const char *const *)files.v, files.n, opts, found, true, each_loaded,
			      &ea, err);
	}
	free_files(&files);
	tfd_capture_free(found);
	return st;
}
