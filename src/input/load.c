/* load.c - one capture file into the capture model: read (mapped, or
 * inflated from gzip; a gzipped Chrome trace is handed to its reader still
 * compressed), its format sniffed from the bytes, derived tool files
 * refused, and the reader that fits called. discover.c finds the files. */
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
#include "tfd/load.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include "tfd/vec.h"

/* ---- reading files ----------------------------------------------------- */

#define SHRANK                                                                                     \
	"the file shrank while it was read (another process truncated or rewrote it); read it "    \
	"again once it is complete"

struct blob {
	const uint8_t *data;
	size_t len;
	void *map; /* mmap base, or NULL */
	size_t maplen;
	int guard;     /* its SIGBUS guard slot (mapguard.c), -1 none */
	uint8_t *heap; /* inflated bytes, or NULL */
};

static void blob_release(struct blob *b)
{
	if (b->map) {
		tfd_mapguard_remove(b->guard);
		munmap(b->map, b->maplen);
	}
	free(b->heap);
	memset(b, 0, sizeof(*b));
}

/* The ceiling on what gzip data of len bytes may inflate to: the one
 * --max-inflated gives, or TFD_INFLATE_RATIO times len (TFD_INFLATE_FLOOR
 * at least) and TFD_INFLATE_MAX at most. Real traces inflate 8-15 times;
 * a gzip bomb inflates a thousand times. */
static size_t inflate_limit(const struct tfd_load_opts *opts, size_t len)
{
	size_t rel;

	if (opts && opts->max_inflated)
		return opts->max_inflated;
	rel = len > TFD_INFLATE_MAX / TFD_INFLATE_RATIO ? TFD_INFLATE_MAX : len * TFD_INFLATE_RATIO;
	return rel < TFD_INFLATE_FLOOR ? TFD_INFLATE_FLOOR : rel;
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
	b->guard = tfd_mapguard_add(m, (size_t)st.st_size);
	b->map = m;
	b->maplen = (size_t)st.st_size;
	b->data = m;
	b->len = (size_t)st.st_size;
	return TFD_OK;
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
			if (tfd_ends_with(name, readers[r].scan[k]))
				return &readers[r];
	return NULL;
}

int tfd_capture_file_rank(const char *name)
{
	const struct reader *r = reader_for_name(name);

	return r ? r->rank : -1;
}

bool tfd_capture_file_name(const char *name)
{
	return reader_for_name(name) != NULL;
}

/* Host name from a file name: drop the reader's suffix. */
void tfd_host_from_path(const char *path, char *out, size_t outlen)
{
	const char *b = tfd_path_base(path);
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

int tfd_is_derived_tool_file(const char *path)
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
	if (st == TFD_E_FORMAT && tfd_is_derived_tool_file(path))
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

	tfd_host_from_path(path, host, sizeof(host));
	/* a UTF-8 byte-order mark (an editor's or a Windows tool's) before a
	 * JSON trace; never the start of a protobuf (wire type 7) */
	if (len >= 3 && data[0] == 0xef && data[1] == 0xbb && data[2] == 0xbf) {
		data += 3;
		len -= 3;
	}
	while (i < len && isspace(data[i]))
		i++;
	if (i == len)
		return tfd_fail(err, TFD_E_FORMAT,
				gzipped ? "empty after decompression"
				: len	? "only white space, no capture"
					: "empty file");
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
	tfd_host_from_path(path, host, sizeof(host));
	*st = tfd_chrome_read_gz(cap, gz, len, mapped, inflate_limit(opts, len), host, opts, err);
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
	st = inflate_gz(data, len, mapped, inflate_limit(opts, len), &z, err);
	if (!st) {
		/* the inflated bytes go below: nothing may read them later */
		struct tfd_load_opts now = tfd_load_opts_defer(opts, false);

		st = load_bytes(cap, z.data, z.len, 1, false, path, &now, err);
	}
	blob_release(&z);
	return st;
}

/* A file's bytes read after its read: by a host's pending device sweep,
 * by the source its reader kept (struct tfd_source), or by both. */
struct kept {
	struct blob b;
	int refs; /* its holders */
};

/* One holder done with the bytes, the file's shrinking meanwhile its
 * error; the last gives them back. */
static enum tfd_status release_kept(void *arg, struct tfd_err *err)
{
	struct kept *k = arg;
	enum tfd_status st = TFD_OK;

	if (k->b.map && tfd_mapguard_shrank(k->b.guard))
		st = tfd_fail(err, TFD_E_IO, SHRANK);
	if (__atomic_sub_fetch(&k->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		blob_release(&k->b);
		free(k);
	}
	return st;
}

/* The bytes of the host just read go with those that read them later
 * (true), or nobody does. */
static bool keep_bytes(struct tfd_host *h, const struct blob *b)
{
	struct kept *k;

	if (!h->pending && !h->source)
		return false;
	k = xmalloc(sizeof(*k));
	k->b = *b;
	k->refs = (h->pending != NULL) + (h->source != NULL);
	if (h->source)
		tfd_source_own(h->source, release_kept, k);
	/* (last: a sweep may be done with them at once) */
	if (h->pending)
		tfd_dev_job_own(h->pending, release_kept, k);
	return true;
}

enum tfd_status tfd_load_file(struct tfd_capture *cap, const char *path,
			      const struct tfd_load_opts *opts, struct tfd_err *err)
{
	struct blob b;
	enum tfd_status st;
	size_t before = cap->nhosts;

	st = read_file(path, &b, err);
	if (!st) {
		st = load_data(cap, b.data, b.len, b.map != NULL, path, opts, err);
		/* what was read past a shrunk file's end was zeros, not the file */
		if (b.map && tfd_mapguard_shrank(b.guard)) {
			if (!st)
				tfd_capture_drop_last_host(cap);
			st = tfd_fail(err, TFD_E_IO, SHRANK);
		}
		/* (a file makes one host at most) */
		if (st || cap->nhosts == before || !keep_bytes(&cap->hosts[cap->nhosts - 1], &b))
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
	if (len == 0) {
		st = tfd_fail(err, TFD_E_FORMAT, "empty file");
	} else {
		/* the caller's bytes: read now, not after this returns */
		struct tfd_load_opts now = tfd_load_opts_defer(opts, false);

		st = load_data(cap, data, len, false, name, &now, err);
	}
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
