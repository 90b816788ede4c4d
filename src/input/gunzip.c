/* gunzip.c - gzip data (one or more members) inflated in 1 MB chunks into a
 * sink: the whole-buffer inflate of discover.c and the streaming Chrome
 * reader share the loop, its limit and its error lines; with a second
 * core, the Chrome reader's inflate runs a few chunks ahead of its scan. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include "input_impl.h"
#include "tfd/pages.h"

#define OUT_CHUNK (1u << 20)

/* Takes a full chunk out[0..n) and gives the buffer to inflate into next
 * (OUT_CHUNK bytes), NULL to stop (the consumer stopped). */
typedef uint8_t *(*gz_take)(void *ctx, uint8_t *out, size_t n);

/* The inflate loop into out (the caller's, as are those take gives). */
static enum tfd_status gunzip_run(const uint8_t *src, size_t len, bool mapped, size_t limit,
				  uint8_t *out, gz_take take, void *ctx, struct tfd_err *err)
{
	enum tfd_status st = TFD_OK;
	size_t total = 0;
	const uint8_t *dropped = src; /* pages below went (mapped) */
	z_stream zs;
	int rc;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return tfd_fail(err, TFD_E_INTERNAL, "zlib init failed");
	zs.next_in = (Bytef *)src;
	for (;;) {
		size_t left = len - (size_t)(zs.next_in - src), got;

		zs.avail_in = left > 0x40000000u ? 0x40000000u : (uInt)left;
		zs.next_out = out;
		zs.avail_out = OUT_CHUNK;
		rc = inflate(&zs, Z_NO_FLUSH);
		got = OUT_CHUNK - zs.avail_out;
		if (mapped) /* read once per pass: the page cache keeps them */
			tfd_pages_release(&dropped, zs.next_in, 4u << 20);
		if (got) {
			if (total + got > limit) {
				st = tfd_fail(
				    err, TFD_E_LIMIT,
				    "gzip data inflates to more than %zu MiB (%.0f times "
				    "its %.1f MB: a gzip bomb?); --max-inflated SIZE sets "
				    "the ceiling",
				    limit >> 20, (double)limit / (double)len, (double)len / 1e6);
				break;
			}
			total += got;
			if (!(out = take(ctx, out, got)))
				break; /* the consumer stopped: its own state says why */
		}
		if (rc == Z_STREAM_END) {
			/* concatenated gzip members: continue with the next one */
			if ((size_t)(zs.next_in - src) < len && zs.next_in[0] == 0x1f) {
				inflateReset(&zs);
				continue;
			}
			break;
		}
		if (rc == Z_BUF_ERROR && zs.avail_in == 0 && (size_t)(zs.next_in - src) >= len) {
			st = tfd_fail(err, TFD_E_FORMAT, "truncated gzip data");
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			st = tfd_fail(err, TFD_E_FORMAT, "corrupt gzip data (%s)",
				      zs.msg ? zs.msg : "invalid data");
			break;
		}
	}
	inflateEnd(&zs);
	if (mapped && src + len > dropped) /* and the last, partial page */
		madvise((void *)dropped, (size_t)(src + len - dropped), MADV_DONTNEED);
	return st;
}

/* In line: the chunk to the sink, the same buffer again. */
struct in_line {
	tfd_gunzip_sink sink;
	void *ctx;
};

static uint8_t *take_in_line(void *ctx, uint8_t *out, size_t n)
{
	struct in_line *l = ctx;

	return l->sink(l->ctx, out, n) ? out : NULL;
}

enum tfd_status tfd_gunzip(const uint8_t *src, size_t len, bool mapped, size_t limit,
			   tfd_gunzip_sink sink, void *ctx, struct tfd_err *err)
{
	uint8_t *out = xmalloc(OUT_CHUNK);
	struct in_line l = {sink, ctx};
	enum tfd_status st = gunzip_run(src, len, mapped, limit, out, take_in_line, &l, err);

	free(out);
	return st;
}

/* ---- inflated ahead, on a thread of its own ------------------------------ */

#define AHEAD_BUFS 3		      /* the inflate's, and two full ones at most */
#define AHEAD_MIN ((size_t)768 << 10) /* less gzip data is inflated in line */

/* The chunks go from the inflate to the consumer through a ring of full
 * buffers (count of them from head), and back through the free ones. */
struct ahead {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t *bufs[AHEAD_BUFS]; /* every buffer, for the end */
	uint8_t *full[AHEAD_BUFS];
	size_t n[AHEAD_BUFS];
	size_t head, count;
	uint8_t *free_[AHEAD_BUFS];
	size_t nfree;
	bool done, stop; /* the inflate ended (st, err); the consumer stopped */
	enum tfd_status st;
	struct tfd_err err;
	const uint8_t *src;
	size_t len, limit;
	bool mapped;
};

/* The inflate's take: the chunk into the ring, a free buffer back once
 * there is one; NULL once the consumer stopped. */
static uint8_t *take_ahead(void *ctx, uint8_t *out, size_t n)
{
	struct ahead *a = ctx;
	size_t at;
	uint8_t *next = NULL;

	pthread_mutex_lock(&a->mu);
	at = (a->head + a->count) % AHEAD_BUFS;
	a->full[at] = out;
	a->n[at] = n;
	a->count++;
	pthread_cond_broadcast(&a->cv);
	while (!a->nfree && !a->stop)
		pthread_cond_wait(&a->cv, &a->mu);
	if (!a->stop)
		next = a->free_[--a->nfree];
	pthread_mutex_unlock(&a->mu);
	return next;
}

static void *ahead_thread(void *arg)
{
	struct ahead *a = arg;
	uint8_t *out;
	enum tfd_status st;

	pthread_mutex_lock(&a->mu);
	out = a->free_[--a->nfree];
	pthread_mutex_unlock(&a->mu);
	st = gunzip_run(a->src, a->len, a->mapped, a->limit, out, take_ahead, a, &a->err);
	pthread_mutex_lock(&a->mu);
	a->done = true;
	a->st = st;
	pthread_cond_broadcast(&a->cv);
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

/* The chunks to sink as they come; the inflate's status once it ended, or
 * TFD_OK when sink stopped first (as tfd_gunzip() in line). */
static enum tfd_status ahead_drain(struct ahead *a, tfd_gunzip_sink sink, void *ctx,
				   struct tfd_err *err)
{
	for (;;) {
		uint8_t *b;
		size_t n;
		bool more;

		pthread_mutex_lock(&a->mu);
		while (!a->count && !a->done)
			pthread_cond_wait(&a->cv, &a->mu);
		if (!a->count) {
			enum tfd_status st = a->st;

			pthread_mutex_unlock(&a->mu);
			if (st)
				*err = a->err;
			return st;
		}
		b = a->full[a->head];
		n = a->n[a->head];
		pthread_mutex_unlock(&a->mu);
		more = sink(ctx, b, n);
		pthread_mutex_lock(&a->mu);
		a->head = (a->head + 1) % AHEAD_BUFS;
		a->count--;
		a->free_[a->nfree++] = b;
		a->stop = !more;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (!more)
			return TFD_OK;
	}
}

enum tfd_status tfd_gunzip_ahead(const uint8_t *src, size_t len, bool mapped, size_t limit,
				 bool ahead, tfd_gunzip_sink sink, void *ctx, struct tfd_err *err)
{
	struct ahead *a;
	enum tfd_status st = TFD_OK;
	pthread_t th;
	bool threaded;

	if (!ahead || len < AHEAD_MIN)
		return tfd_gunzip(src, len, mapped, limit, sink, ctx, err);
	a = xcalloc(1, sizeof(*a));
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	for (size_t i = 0; i < AHEAD_BUFS; i++)
		a->free_[a->nfree++] = a->bufs[i] = xmalloc(OUT_CHUNK);
	a->src = src;
	a->len = len;
	a->limit = limit;
	a->mapped = mapped;
	threaded = pthread_create(&th, NULL, ahead_thread, a) == 0;
	if (threaded) {
		st = ahead_drain(a, sink, ctx, err);
		pthread_join(th, NULL);
	}
	for (size_t i = 0; i < AHEAD_BUFS; i++)
		free(a->bufs[i]);
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a);
	/* no thread to be had: in line */
	return threaded ? st : tfd_gunzip(src, len, mapped, limit, sink, ctx, err);
}
