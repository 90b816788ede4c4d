/* device.c - the XSpace device planes ("/device:GPU:N", "/device:TPU:N")
 * of a host, read in place and reduced to the step breakdown of input time
 * (tfd_device_sweep): each wanted line (tfd_dev_line_wanted) is a source
 * of spans in time order, decoded as the sweep asks for them, so memory is
 * the planes' metadata and one cursor per line, whatever the events. An
 * event's kind comes from its metadata's name, its step from its group_id
 * stat; a copy to the device adds the bytes its memcpy_details stat says.
 * A line found out of time order is read through a reordering window;
 * failing that, as blocks of events whose time ranges do not overlap (a
 * line written latest first), each decoded and sorted when the sweep gets
 * to it; failing that, decoded whole and sorted. Each time the sweep is
 * made again. For a capture to be analyzed lean, large lines are swept on
 * a thread of their own while the analysis goes on (tfd_dev_reader_defer;
 * the host's pending work, settled by the analysis). */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "input_impl.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "xspace_impl.h"

struct dplane {
	const char *name;	 /* interned in the capture */
	struct imap kinds;	 /* event metadata id -> kind + 1 */
	uint8_t dense[256];	 /* the same for ids below 256 (0: none) */
	struct imap memcpy_mids; /* stat metadata ids of memcpy_details */
	struct imap group_mids;	 /* and of group_id */
	bool tpu;
};

/* One line as a source of spans. */
struct dline {
	struct tfd_dev_reader *r;
	const struct dplane *pl;
	size_t plane, index; /* the plane's index in the file, the line's in it */
	const uint8_t *start, *p, *end;
	const uint8_t *released; /* a mapped file's pages before it were dropped */
	int64_t ts_ns;
	bool bad; /* an event is malformed */
	/* how it is read: 0 as it comes, 1 through a reordering window
	 * (win, a min-heap by start), 2 whole and sorted (sorted), 3 by
	 * blocks in time order (blk, each decoded into win and sorted) */
	int mode;
	struct tfd_dev_span *win;
	size_t nwin;
	struct dblock *blk;
	size_t nblk, blk_i, win_at;
	struct tfd_dev_array sorted;
	uint64_t sorted_bytes; /* its copies' bytes when read whole */
	size_t nspans;	       /* given to the sweep */
};

/* BLOCK events of a line from offset off, their starts within [lo, hi]. */
struct dblock {
	size_t off, n;
	int64_t lo, hi;
};

struct tfd_dev_reader {
	bool mapped; /* the bytes are a file mapping: drop pages once read */
	VEC(struct dplane *) planes;
	VEC(struct dline *) lines;
	uint64_t h2d_bytes; /* of the sweep going on */
};

struct kv {
	uint64_t key;
	struct span val;
	bool has_val;
};

static int kv_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct kv *kv = ctx;

	if (field == 1 && wt == 0) {
		kv->key = v;
	} else if (field == 2 && wt == 2) {
		kv->val = s;
		kv->has_val = true;
	}
	return 0;
}

/* XEventMetadata / XStatMetadata: id (1) and name (2). */
struct idname {
	uint64_t id;
	struct span name;
};

static int idname_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct idname *m = ctx;

	if (field == 1 && wt == 0)
		m->id = v;
	else if (field == 2 && wt == 2)
		m->name = s;
	return 0;
}

/* A metadata map entry {key, {id, name}}: the id is the key when absent. */
static bool entry(struct span s, struct idname *m)
{
	struct kv kv = {0};

	memset(m, 0, sizeof(*m));
	if (tfd_pb_walk(s.p, s.len, kv_field, &kv) != SIZE_MAX)
		return false;
	if (kv.has_val && tfd_pb_walk(kv.val.p, kv.val.len, idname_field, m) != SIZE_MAX)
		return false;
	if (!m->id)
		m->id = kv.key;
	return true;
}

static bool span_is(struct span s, const char *what)
{
	return s.len == strlen(what) && memcmp(s.p, what, s.len) == 0;
}

struct plane_walk {
	struct dplane *pl;
	VEC(struct span) lines;
	const char *bad;
};

static int plane_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct plane_walk *w = ctx;
	struct idname m;

	(void)v;
	if (wt != 2)
		return 0;
	if (field == 3) {
		vec_push(&w->lines, s);
	} else if (field == 4 || field == 5) {
		if (!entry(s, &m)) {
			w->bad =
			    field == 4 ? "a malformed event metadata" : "a malformed stat metadata";
			return 1;
		}
		if (field == 4) {
			size_t k = (size_t)tfd_dev_kind_of((const char *)m.name.p, m.name.len,
							   w->pl->tpu) +
				   1;

			imap_put(&w->pl->kinds, m.id, k);
			if (m.id < sizeof(w->pl->dense))
				w->pl->dense[m.id] = (uint8_t)k;
		} else if (span_is(m.name, "memcpy_details"))
			imap_put(&w->pl->memcpy_mids, m.id, 0);
		else if (span_is(m.name, "group_id"))
			imap_put(&w->pl->group_mids, m.id, 0);
	}
	return 0;
}

/* A line's header: its name and timestamp. Protobuf writers put fields
 * in the order of their numbers, so both come before the events (field
 * 4): the walk stops at the first event once it has both, so that finding
 * the lines does not touch every page of a large plane. Any order is legal
 * protobuf, though: one that lacks either at its first event is walked to
 * its end for them (an absent timestamp is 0). */
struct line_head {
	struct span name;
	int64_t ts_ns;
	bool has_name, has_ts;
	bool stopped;
};

static int head_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct line_head *l = ctx;

	if (field == 2 && wt == 2) {
		l->name = s;
		l->has_name = true;
	} else if (field == 3 && wt == 0) {
		l->ts_ns = (int64_t)v;
		l->has_ts = true;
	} else if (field == 4 && l->has_name && l->has_ts) {
		l->stopped = true;
		return 1;
	}
	return 0;
}

static bool read_head(struct span line, struct line_head *lh)
{
	memset(lh, 0, sizeof(*lh));
	return tfd_pb_walk(line.p, line.len, head_field, lh) == SIZE_MAX || lh->stopped;
}

/* ---- an event ------------------------------------------------------------ */

struct dev_ev {
	const struct dplane *pl;
	uint64_t mid;
	int64_t off_ps, dur_ps;
	uint64_t bytes;
	bool has_group;
	int64_t group;
};

struct stat_read {
	uint64_t mid;
	struct span str;
	bool has_str, has_int;
	uint64_t u;
};

static int stat_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct stat_read *st = ctx;

	if (field == 1 && wt == 0) {
		st->mid = v;
	} else if (field == 5 && wt == 2) {
		st->str = s;
		st->has_str = true;
	} else if ((field == 3 || field == 4) && wt == 0) {
		st->u = v;
		st->has_int = true;
	}
	return 0;
}

/* A stat of an event (field 4): the bytes of a memcpy_details, the step
 * of a group_id; nonzero when it is malformed. */
static int event_stat(struct dev_ev *e, struct span s)
{
	struct stat_read st = {0};

	if (tfd_pb_walk(s.p, s.len, stat_field, &st) != SIZE_MAX)
		return 1;
	if (st.has_str && imap_get(&e->pl->memcpy_mids, st.mid, NULL)) {
		e->bytes = tfd_memcpy_bytes((const char *)st.str.p, st.str.len);
	} else if (st.has_int && imap_get(&e->pl->group_mids, st.mid, NULL)) {
		e->has_group = true;
		e->group = (int64_t)st.u;
	}
	return 0;
}

/* An event's fields, read in place (the common case: TensorFlow writes
 * metadata_id, offset_ps, duration_ps and the stats as plain fields);
 * false when it is malformed. */
static bool read_event(const struct dplane *pl, const uint8_t *p, const uint8_t *end,
		       struct dev_ev *e)
{
	struct pb_field f;

	while (p < end) {
		if (!tfd_pb_next(&p, end, &f))
			return false;
		if (f.wt == 0 && f.field == 1)
			e->mid = f.v;
		else if (f.wt == 0 && f.field == 2)
			e->off_ps = (int64_t)f.v;
		else if (f.wt == 0 && f.field == 3)
			e->dur_ps = (int64_t)f.v;
		else if (f.wt == 2 && f.field == 4 && (pl->memcpy_mids.n || pl->group_mids.n) &&
			 event_stat(e, f.s))
			return false;
	}
	return true;
}

/* The event at s as a span of line l: false when it is not one (no kind,
 * no time, out of range; l->bad when it is malformed). */
static bool event_span(struct dline *l, struct span s, struct tfd_dev_span *out, uint64_t *bytes)
{
	struct dev_ev e = {.pl = l->pl};
	size_t kind;
	int64_t dur;

	if (!read_event(l->pl, s.p, s.p + s.len, &e)) {
		l->bad = true;
		return false;
	}
	if (e.mid < sizeof(l->pl->dense))
		kind = l->pl->dense[e.mid];
	else if (!imap_get(&l->pl->kinds, e.mid, &kind))
		kind = 0;
	if (!kind || e.dur_ps <= 0 || e.off_ps < 0 || e.off_ps / 1000 > (int64_t)TFD_MAX_TIME_NS)
		return false;
	dur = e.dur_ps / 1000 < (int64_t)TFD_MAX_DURATION_NS ? e.dur_ps / 1000
							     : (int64_t)TFD_MAX_DURATION_NS;
	out->start_ns = l->ts_ns + e.off_ps / 1000;
	out->end_ns = out->start_ns + dur;
	out->kind = (uint8_t)(kind - 1);
	out->has_group = e.has_group;
	out->group = e.group;
	*bytes = out->kind == TFD_DEV_H2D ? e.bytes : 0;
	return out->end_ns > out->start_ns;
}

/* The next span of line l from its bytes (false at its end, or with
 * l->bad at a malformed field). */
static bool line_read(struct dline *l, struct tfd_dev_span *out, uint64_t *bytes)
{
	struct pb_field f;

	while (l->p < l->end) {
		if (!tfd_pb_next(&l->p, l->end, &f)) {
			l->bad = true;
			return false;
		}
		if (f.wt == 2 && f.field == 4 && event_span(l, f.s, out, bytes))
			return true;
		if (l->bad)
			return false;
	}
	return false;
}

/* The reordering window: spans read ahead, the earliest given first. */
#define REORDER 4096
/* events per block of a line read by blocks (it decodes one at a time) */
#define BLOCK 4096
_Static_assert(BLOCK <= REORDER, "a block is decoded into the window's array");

static void win_push(struct dline *l, const struct tfd_dev_span *sp)
{
	size_t i = l->nwin++;

	while (i && l->win[(i - 1) / 2].start_ns > sp->start_ns) {
		l->win[i] = l->win[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	l->win[i] = *sp;
}

static struct tfd_dev_span win_pop(struct dline *l)
{
	struct tfd_dev_span top = l->win[0], last = l->win[--l->nwin];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= l->nwin)
			break;
		if (c + 1 < l->nwin && l->win[c + 1].start_ns < l->win[c].start_ns)
			c++;
		if (l->win[c].start_ns >= last.start_ns)
			break;
		l->win[i] = l->win[c];
		i = c;
	}
	if (l->nwin)
		l->win[i] = last;
	return top;
}

/* Spans by start, then by every field: the order of equal starts does
 * not depend on the sort's. */
static int span_cmp(const void *a, const void *b)
{
	const struct tfd_dev_span *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns < y->end_ns ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->has_group != y->has_group)
		return x->has_group ? 1 : -1;
	return (x->group > y->group) - (x->group < y->group);
}

/* The next span of a line read by blocks: the next block in time order is
 * decoded into win and sorted when the one before is used up. */
static bool block_next(struct dline *l, struct tfd_dev_span *out)
{
	while (l->win_at >= l->nwin) {
		const struct dblock *b;
		struct tfd_dev_span sp;
		uint64_t bytes = 0;
		const uint8_t *done;

		if (l->blk_i >= l->nblk)
			return false;
		b = &l->blk[l->blk_i++];
		l->p = l->start + b->off;
		done = l->p;
		l->nwin = l->win_at = 0;
		while (l->nwin < b->n && line_read(l, &sp, &bytes)) {
			l->r->h2d_bytes += bytes;
			l->win[l->nwin++] = sp;
		}
		qsort(l->win, l->nwin, sizeof(*l->win), span_cmp);
		if (l->r->mapped)
			tfd_pages_release(&done, l->p, 0);
	}
	*out = l->win[l->win_at++];
	l->nspans++;
	return true;
}

static bool line_next(void *ctx, struct tfd_dev_span *out)
{
	struct dline *l = ctx;
	uint64_t bytes = 0;

	if (l->mode == 1) {
		struct tfd_dev_span sp;

		while (l->nwin < REORDER && line_read(l, &sp, &bytes)) {
			l->r->h2d_bytes += bytes;
			win_push(l, &sp);
		}
		if (!l->nwin)
			return false;
		*out = win_pop(l);
		l->nspans++;
		if (l->r->mapped)
			tfd_pages_release(&l->released, l->p, (size_t)64 << 10);
		return true;
	}
	if (l->mode == 3)
		return block_next(l, out);
	if (l->mode == 2) {
		if (l->sorted.at >= l->sorted.n)
			return false;
		*out = l->sorted.v[l->sorted.at++];
		l->nspans++;
		return true;
	}
	if (!line_read(l, out, &bytes))
		return false;
	l->r->h2d_bytes += bytes;
	l->nspans++;
	/* read once: a mapped file's pages behind the line go (read back
	 * from the file should the line be read again) */
	if (l->r->mapped)
		tfd_pages_release(&l->released, l->p, (size_t)64 << 10);
	return true;
}

/* Line l read whole into its sorted array (its copies' bytes counted then). */
static void line_sort(struct dline *l)
{
	struct tfd_dev_span sp;
	size_t cap = 0;
	uint64_t bytes;

	l->p = l->start;
	while (line_read(l, &sp, &bytes)) {
		l->sorted_bytes += bytes;
		if (l->sorted.n == cap) {
			cap = cap ? 2 * cap : 256;
			l->sorted.v = xrealloc(l->sorted.v, cap * sizeof(*l->sorted.v));
		}
		l->sorted.v[l->sorted.n++] = sp;
	}
	tfd_dev_array_source(&l->sorted);
	free(l->win);
	l->win = NULL;
	l->mode = 2;
}

static int block_cmp(const void *a, const void *b)
{
	const struct dblock *x = a, *y = b;

	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* Line l as blocks of BLOCK events (their offsets and time ranges, one pass
 * that keeps no span), put in time order: true when no two blocks' ranges
 * overlap, so that sorting each block alone gives the line in order (a
 * line written latest first, or in shuffled chunks); the memory is one
 * block's, whatever the line's length. */
static bool line_blocks(struct dline *l)
{
	struct tfd_dev_span sp;
	uint64_t bytes;
	size_t cap = 0;

	l->p = l->released = l->start;
	l->nblk = 0;
	for (;;) {
		size_t off = (size_t)(l->p - l->start);
		bool got = line_read(l, &sp, &bytes);

		if (!got)
			break;
		if (!l->nblk || l->blk[l->nblk - 1].n == BLOCK) {
			if (l->nblk == cap) {
				cap = cap ? 2 * cap : 64;
				l->blk = xrealloc(l->blk, cap * sizeof(*l->blk));
			}
			l->blk[l->nblk++] = (struct dblock){off, 0, sp.start_ns, sp.start_ns};
		}
		l->blk[l->nblk - 1].n++;
		if (sp.start_ns < l->blk[l->nblk - 1].lo)
			l->blk[l->nblk - 1].lo = sp.start_ns;
		if (sp.start_ns > l->blk[l->nblk - 1].hi)
			l->blk[l->nblk - 1].hi = sp.start_ns;
		if (l->r->mapped)
			tfd_pages_release(&l->released, l->p, (size_t)64 << 10);
	}
	if (l->bad)
		return true; /* said by the caller; nothing more to read */
	if (l->nblk > 1)
		qsort(l->blk, l->nblk, sizeof(*l->blk), block_cmp);
	for (size_t i = 1; i < l->nblk; i++)
		if (l->blk[i].lo < l->blk[i - 1].hi)
			return false;
	if (!l->win)
		l->win = xmalloc(BLOCK * sizeof(*l->win));
	return true;
}

/* Line l found out of order: read through the window, else by blocks,
 * else whole. */
static void line_reorder(struct dline *l)
{
	if (l->mode == 0) {
		l->win = xmalloc(REORDER * sizeof(*l->win));
		l->mode = 1;
	} else if (l->mode == 1 && line_blocks(l)) {
		l->mode = 3;
	} else {
		free(l->blk);
		l->blk = NULL;
		l->nblk = 0;
		line_sort(l);
	}
}

/* ---- the reader ------------------------------------------------------------ */

struct tfd_dev_reader *tfd_dev_reader_new(bool mapped)
{
	struct tfd_dev_reader *r = xcalloc(1, sizeof(*r));

	r->mapped = mapped;
	return r;
}

void tfd_dev_reader_free(struct tfd_dev_reader *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->planes.n; i++) {
		imap_free(&r->planes.v[i]->kinds);
		imap_free(&r->planes.v[i]->memcpy_mids);
		imap_free(&r->planes.v[i]->group_mids);
		free(r->planes.v[i]);
	}
	for (size_t i = 0; i < r->lines.n; i++) {
		free(r->lines.v[i]->sorted.v);
		free(r->lines.v[i]->win);
		free(r->lines.v[i]->blk);
		free(r->lines.v[i]);
	}
	vec_free(&r->planes);
	vec_free(&r->lines);
	free(r);
}

/* The wanted lines of plane w into r (the line names decide: a stream
 * line, else XLA Ops, else any line TensorFlow does not derive). */
static enum tfd_status add_lines(struct tfd_dev_reader *r, struct plane_walk *w, size_t plane_index,
				 struct tfd_err *err)
{
	unsigned plane = 0;
	struct line_head lh;

	for (size_t i = 0; i < w->lines.n; i++) {
		if (!read_head(w->lines.v[i], &lh))
			return tfd_fail(
			    err, TFD_E_FORMAT,
			    "corrupt XSpace protobuf: line %zu of plane '%s' is malformed", i,
			    w->pl->name);
		plane |= tfd_dev_line_class((const char *)lh.name.p, lh.name.len);
	}
	for (size_t i = 0; i < w->lines.n; i++) {
		struct dline *l;

		read_head(w->lines.v[i], &lh);
		if (!tfd_dev_line_wanted((const char *)lh.name.p, lh.name.len, plane))
			continue;
		/* as a host line's: a time past what the model holds is an
		 * error, not a plane dropped with no word */
		if (lh.ts_ns < -(int64_t)TFD_MAX_TIME_NS || lh.ts_ns > (int64_t)TFD_MAX_TIME_NS)
			return tfd_fail(err, TFD_E_FORMAT,
					"line %zu of plane '%s': timestamp out of range (%" PRId64
					" ns)",
					i, w->pl->name, lh.ts_ns);
		l = xcalloc(1, sizeof(*l));
		*l = (struct dline){.r = r,
				    .pl = w->pl,
				    .plane = plane_index,
				    .index = i,
				    .start = w->lines.v[i].p,
				    .p = w->lines.v[i].p,
				    .end = w->lines.v[i].p + w->lines.v[i].len,
				    .ts_ns = lh.ts_ns};
		vec_push(&r->lines, l);
	}
	return TFD_OK;
}

enum tfd_status tfd_dev_reader_plane(struct tfd_dev_reader *r, const uint8_t *p, size_t len,
				     const char *plane_name, size_t plane_index,
				     struct tfd_err *err)
{
	struct plane_walk w = {0};
	enum tfd_status st;

	w.pl = xcalloc(1, sizeof(*w.pl));
	w.pl->name = plane_name;
	w.pl->tpu = tfd_is_device_plane(plane_name) == TFD_DEVPLANE_TPU;
	vec_push(&r->planes, w.pl);
	if (tfd_pb_walk(p, len, plane_field, &w) != SIZE_MAX)
		st = tfd_fail(err, TFD_E_FORMAT, "corrupt XSpace protobuf: %s in plane '%s'",
			      w.bad ? w.bad : "a malformed field", plane_name);
	else
		st = add_lines(r, &w, plane_index, err);
	vec_free(&w.lines);
	return st;
}

/* The sweep of r's lines made ready (NULL: nothing to sweep, the host's
 * wait is its input). */
static struct tfd_dev_sweep *sweep_begin(struct tfd_dev_reader *r, struct tfd_capture *cap,
					 struct tfd_host *h)
{
	h->dev.nplanes += r->planes.n;
	for (size_t i = 0; i < r->planes.n; i++)
		h->dev.tpu |= r->planes.v[i]->tpu;
	if (!r->lines.n && !h->dev.nhost_ops)
		return NULL;	       /* nothing on a device: input is the host's wait */
	tfd_host_pack_pending(cap, h); /* the sweep reads the host's waits */
	return tfd_dev_sweep_new(h);
}

/* Sweep r's lines until no line goes back in time (each that did is read
 * again in order): on any thread, touching only r and sw. */
static void sweep_lines(struct tfd_dev_reader *r, struct tfd_dev_sweep *sw)
{
	struct tfd_dev_source *src = xcalloc(r->lines.n + 1, sizeof(*src));

	for (;;) {
		size_t bad;

		r->h2d_bytes = 0;
		for (size_t i = 0; i < r->lines.n; i++) {
			struct dline *l = r->lines.v[i];

			l->p = l->released = l->start;
			l->sorted.at = 0;
			l->nwin = 0;
			l->blk_i = l->win_at = 0;
			l->nspans = 0;
			src[i] = (struct tfd_dev_source){line_next, l};
		}
		bad = tfd_dev_sweep_run(sw, src, r->lines.n);
		if (bad == r->lines.n)
			break;
		line_reorder(r->lines.v[bad]);
	}
	free(src);
}

/* The swept lines into h: the breakdown, the planes' event counts, the
 * copies' bytes; the first malformed line, if any, as the error. */
static enum tfd_status sweep_end(struct tfd_dev_reader *r, struct tfd_dev_sweep *sw,
				 struct tfd_host *h, struct tfd_err *err)
{
	enum tfd_status st = TFD_OK;

	tfd_dev_sweep_install(sw, h);
	tfd_dev_sweep_free(sw);
	for (size_t i = 0; i < r->lines.n && !st; i++) {
		const struct dline *l = r->lines.v[i];

		if (l->bad)
			st = tfd_fail(err, TFD_E_FORMAT,
				      "corrupt XSpace protobuf: an event of line %zu of plane '%s' "
				      "is malformed",
				      l->index, l->pl->name);
	}
	for (size_t i = 0; i < r->lines.n; i++) {
		const struct dline *l = r->lines.v[i];

		if (l->plane < h->nplanes)
			h->planes[l->plane].nevents += l->nspans;
		/* a line read whole counted its copies' bytes once, then */
		h->dev.h2d_bytes += l->mode == 2 ? l->sorted_bytes : 0;
	}
	h->dev.h2d_bytes += r->h2d_bytes;
	return st;
}

enum tfd_status tfd_dev_reader_finish(struct tfd_dev_reader *r, struct tfd_capture *cap,
				      struct tfd_host *h, struct tfd_err *err)
{
	struct tfd_dev_sweep *sw = sweep_begin(r, cap, h);

	if (!sw)
		return TFD_OK;
	sweep_lines(r, sw);
	return sweep_end(r, sw, h, err);
}

/* ---- the sweep on another thread ------------------------------------------ */

/* A host's device sweep running on a thread of its own. */
struct dev_job {
	struct tfd_pending pd; /* first: the host holds &pd */
	struct tfd_dev_reader *r;
	struct tfd_dev_sweep *sw;
	pthread_t th;
	/* the bytes the lines are read from, released once the sweep is done
	 * (with the file's own error, should it have shrunk meanwhile) */
	enum tfd_status (*release)(void *arg, struct tfd_err *err);
	void *release_arg;
};

static void *job_run(void *arg)
{
	struct dev_job *j = arg;

	sweep_lines(j->r, j->sw);
	return NULL;
}

static enum tfd_status job_settle(struct tfd_pending *pd, struct tfd_host *h, struct tfd_err *err)
{
	struct dev_job *j = (struct dev_job *)pd;
	enum tfd_status st;

	pthread_join(j->th, NULL);
	st = sweep_end(j->r, j->sw, h, err);
	if (j->release) {
		struct tfd_err rerr;

		/* a file that shrank is the error, whatever was read of its zeros */
		if (j->release(j->release_arg, &rerr) != TFD_OK) {
			st = rerr.status;
			*err = rerr;
		}
	}
	tfd_dev_reader_free(j->r);
	free(j);
	return st;
}

/* Fewer bytes of device lines than this are swept on the spot. */
#define DEFER_MIN_BYTES ((size_t)1 << 20)

enum tfd_status tfd_dev_reader_defer(struct tfd_dev_reader **rp, struct tfd_capture *cap,
				     struct tfd_host *h, const struct tfd_load_opts *opts,
				     struct tfd_err *err)
{
	struct tfd_dev_reader *r = *rp;
	size_t bytes = 0;
	struct dev_job *j;

	for (size_t i = 0; i < r->lines.n; i++)
		bytes += (size_t)(r->lines.v[i]->end - r->lines.v[i]->start);
	if (bytes < DEFER_MIN_BYTES || tfd_load_cores(opts) < 2)
		return tfd_dev_reader_finish(r, cap, h, err);
	j = xcalloc(1, sizeof(*j));
	j->sw = sweep_begin(r, cap, h);
	if (!j->sw) {
		free(j);
		return TFD_OK;
	}
	j->r = r;
	j->pd.settle = job_settle;
	if (pthread_create(&j->th, NULL, job_run, j) != 0) {
		/* no thread to be had: on the spot */
		enum tfd_status st;

		sweep_lines(r, j->sw);
		st = sweep_end(r, j->sw, h, err);
		free(j);
		return st;
	}
	*rp = NULL; /* the job's now */
	h->pending = &j->pd;
	return TFD_OK;
}

void tfd_dev_job_own(struct tfd_pending *pd, enum tfd_status (*release)(void *, struct tfd_err *),
		     void *arg)
{
	struct dev_job *j = (struct dev_job *)pd;

	j->release = release;
	j->release_arg = arg;
}
