/* xspace_source.c - a host plane's iterator, Produce and Consume events
 * decoded again from the file, line by line, none kept, and checked
 * against the events the read packed (TFDOCTOR_SOURCE_CHECK=1; see
 * docs/performance.md, "Calls held in time order").
 *
 * A reader that folds the calls as they come, instead of keeping them,
 * reads these events twice: once for what must be known before the calls
 * (the iterators' numbers and parents, the root calls), once merged by
 * time to make and link the calls. Neither may pack them: the packed
 * events alone are most of an iterator-dense capture's peak. Here each
 * line's events are walked again in the mapped file (its pages given
 * back as it goes, as the read does), each decoded into a struct
 * tfd_event of its own by the read's own code (tfd_xs_decode_iter()), and
 * compared with the thread's packed events, in order: kind, times,
 * signature (interned in the same capture: the same name, parameters and
 * parent_id give the same pointer), flags and value. One line on stderr
 * says whether they agree, and how long the walk took. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tfd/capbuild.h"
#include "tfd/err.h"
#include "tfd/graph.h"
#include "tfd/pages.h"
#include "xspace_impl.h"
#include "xspace_parse.h"

int tfd_xs_decode_iter(struct scan *sc, int64_t ts_ns, const uint8_t *p, const uint8_t *end,
		       struct tfd_event *e)
{
	uint64_t mid = 0, off = 0, dur = 0;
	const uint8_t *stats = NULL;
	const struct meta *m;
	size_t mi;
	int64_t start_ns;
	struct stats_seen *seen = NULL;
	bool has_group = false, hit = false;
	int64_t group = 0;

	if (!event_fields(p, end, &mid, &off, &dur, &stats) || off / 1000 > TFD_MAX_TIME_NS ||
	    dur / 1000 > TFD_MAX_DURATION_NS)
		return -1;
	if (!meta_index(&sc->ev_meta, sc->meta_by_id, sc->nmeta_by_id, mid, &mi))
		return 0;
	m = &sc->metas.v[mi];
	if ((m->kind != TFD_EV_ITERATOR && m->kind != TFD_EV_PRODUCE &&
	     m->kind != TFD_EV_CONSUME) ||
	    !tfd_keep_kind((enum tfd_ev_kind)m->kind, sc->opts))
		return 0;
	/* as scan_event() times it */
	start_ns = ts_ns + (int64_t)(off / 1000);
	tfd_event_begin(sc->cap, e, m->name, (enum tfd_ev_kind)m->kind, start_ns,
			(int64_t)((off % 1000 + dur) / 1000));
	if (e->kind == TFD_EV_ITERATOR && stats) {
		seen = tfd_xs_stats_seen(sc, mi, stats, end, e, &has_group, &group, &hit);
		if (hit)
			return 1;
	}
	for (struct stat_walk w = stat_walk(stats, end); next_stat(&w);) {
		struct xstat xs;

		if (walk_stat(sc, &w, &xs) != 0)
			return -1;
		apply_xstat(sc, e, &xs);
		if (xs.type == 4 && smeta_of(sc, xs.mid) &&
		    smeta_of(sc, xs.mid)->code == TFD_STAT_GROUP) {
			has_group = true;
			group = (int64_t)xs.u;
		}
	}
	if (seen)
		tfd_xs_stats_seen_keep(seen, mi, stats, end, e, has_group, group);
	return 1;
}

/* What the source check found on a host plane. */
struct src_tally {
	size_t events, differ, malformed, missing, extra;
	size_t first_thread, first_at; /* the first that differs */
};

static bool scanned_kind(const struct tfd_event *e)
{
	return e->kind == TFD_EV_ITERATOR || e->kind == TFD_EV_PRODUCE || e->kind == TFD_EV_CONSUME;
}

/* The thread's next packed event of those kinds, false: none left. */
static bool packed_next(struct tfd_ev_cursor *c, struct tfd_event *e)
{
	while (tfd_ev_next(c, e))
		if (scanned_kind(e))
			return true;
	return false;
}

static bool same_event(const struct tfd_event *a, const struct tfd_event *b)
{
	return a->kind == b->kind && a->start_ns == b->start_ns && a->dur_ns == b->dur_ns &&
	       a->sig == b->sig && a->flags == b->flags &&
	       (!(a->flags & (TFD_EVF_ID | TFD_EVF_ELEMENT)) || a->id == b->id);
}

/* The plane's iterator, Produce and Consume events decoded again from the
 * file, line after line (struct tfd_event_source): where it is, what it
 * found malformed. */
struct file_src {
	struct scan *sc;
	size_t line;
	const uint8_t *p, *end; /* in the line, NULL before it */
	int64_t id, ts;
	bool ts_seen, have_thread;
	uint32_t th;
	size_t malformed;
};

static void file_begin(struct file_src *fs, struct scan *sc)
{
	memset(fs, 0, sizeof(*fs));
	fs->sc = sc;
	/* the pages the walk reads go back behind it, as the read's do */
	sc->released = sc->lines.n ? sc->lines.v[0].p : NULL;
}

static bool file_next(void *ctx, uint32_t *thread, struct tfd_event *e)
{
	struct file_src *fs = ctx;
	struct scan *sc = fs->sc;
	struct pb_field f;

	for (;;) {
		struct span line;

		if (!fs->p || fs->p >= fs->end) {
			if (fs->p)
				fs->line++;
			if (fs->line >= sc->lines.n)
				return false;
			line = sc->lines.v[fs->line];
			fs->p = line.p;
			fs->end = line.p + line.len;
			fs->id = fs->ts = 0;
			fs->ts_seen = fs->have_thread = false;
			if (!line.len) {
				fs->p = NULL;
				fs->line++;
				continue;
			}
		}
		line = sc->lines.v[fs->line];
		/* those before this field, which is read next */
		if (sc->mapped && fs->p > sc->released + sc->release_step)
			tfd_pages_release(&sc->released, fs->p, 0);
		if (!tfd_pb_next(&fs->p, fs->end, &f)) {
			fs->p = fs->end; /* (the read checked the framing) */
			continue;
		}
		if (f.field == 1 && f.wt == 0) {
			fs->id = (int64_t)f.v;
		} else if (f.field == 3 && f.wt == 0) {
			fs->ts = (int64_t)f.v;
			fs->ts_seen = true;
		} else if (f.field == 4 && f.wt == 2) {
			int r;

			if (!fs->have_thread) {
				if (!fs->ts_seen) {
					/* as the read takes it for an event before any
					 * timestamp field; the walk for it faulted the
					 * line's pages in */
					const uint8_t *from = f.s.p + f.s.len;
					struct line_hdr lh = {0};

					tfd_pb_walk(line.p, line.len, line_hdr_field, &lh);
					fs->ts = lh.ts_ns;
					if (sc->mapped)
						tfd_pages_release(&from, fs->end, 0);
				}
				fs->ts_seen = true;
				fs->th = tfd_host_thread(sc->cap, &sc->cap->hosts[sc->host_idx],
							 fs->id, NULL);
				fs->have_thread = true;
			}
			r = tfd_xs_decode_iter(sc, fs->ts, f.s.p, f.s.p + f.s.len, e);
			fs->malformed += r < 0;
			if (r > 0) {
				*thread = fs->th;
				return true;
			}
		}
	}
}

/* The seconds since t0. */
static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Every event the file gives against its thread's packed ones, in order;
 * the walk's time. */
static double compare_events(struct scan *sc, struct src_tally *t)
{
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	size_t nth = h->nthreads;
	struct tfd_ev_cursor *cur = xcalloc(nth + 1, sizeof(*cur));
	size_t *counted = xcalloc(nth + 1, sizeof(*counted));
	struct file_src fs;
	struct timespec t0;
	struct tfd_event e, pk;
	uint32_t th;
	double took;

	for (size_t i = 0; i < nth; i++)
		tfd_ev_begin(&cur[i], h, &h->threads[i]);
	file_begin(&fs, sc);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (file_next(&fs, &th, &e)) {
		t->events++;
		if (th >= nth || !packed_next(&cur[th], &pk)) {
			t->missing++;
			continue;
		}
		if (!same_event(&e, &pk) && !t->differ++) {
			t->first_thread = th;
			t->first_at = counted[th];
		}
		counted[th]++;
	}
	took = since(&t0);
	t->malformed = fs.malformed;
	/* (a line the read made no thread for has no events) */
	for (size_t i = 0; i < nth && i < h->nthreads; i++)
		while (packed_next(&cur[i], &pk))
			t->extra++;
	free(cur);
	free(counted);
	return took;
}

/* The pass before a stream (tfd_graph_prepass()) over the file's events
 * against the same over the packed ones: what differs, or NULL; *took,
 * the file's pass's time. */
static const char *compare_prepass(struct scan *sc, double *took)
{
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	struct host_ctx a, b;
	struct tfd_prepass pa, pb;
	struct tfd_err err = {0};
	struct file_src fs;
	struct tfd_event_source src = {&fs, file_next};
	struct timespec t0;
	const char *bad = NULL;
	enum tfd_status sa, sb;

	file_begin(&fs, sc);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sa = tfd_graph_prepass_from(&a, h, &src, &pa, &err);
	*took = since(&t0);
	sb = tfd_graph_prepass(&b, h, &pb, &err);
	if (sa != sb)
		bad = "one failed";
	else if (!sa)
		bad = tfd_prepass_differs(&a, &pa, &b, &pb);
	tfd_prepass_free(&pa);
	tfd_prepass_free(&pb);
	tfd_graph_release(&a);
	tfd_graph_release(&b);
	return bad;
}

void tfd_xs_source_check(struct scan *sc)
{
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	struct src_tally t;
	double walk, pass = 0;
	const char *prepass = NULL;

	/* the events still held for their stats go in first */
	tfd_host_pack_pending(sc->cap, h);
	memset(&t, 0, sizeof(t));
	walk = compare_events(sc, &t);
	if (!(t.differ || t.malformed || t.missing || t.extra))
		prepass = compare_prepass(sc, &pass);
	if (t.differ || t.malformed || t.missing || t.extra || prepass)
		fprintf(stderr,
			"tfdoctor: source: %s: differs: %zu of %zu events (first: thread %zu, its "
			"event %zu), %zu malformed, %zu not packed, %zu packed only; the pass "
			"before from the file: %s\n",
			h->name ? h->name : "?", t.differ, t.events, t.first_thread, t.first_at,
			t.malformed, t.missing, t.extra, prepass ? prepass : "not compared");
	else
		fprintf(stderr,
			"tfdoctor: source: %s: %zu iterator, Produce and Consume events decoded "
			"again from the file as packed, in %.3f s; the pass before from the file "
			"as from the packed events, in %.3f s\n",
			h->name ? h->name : "?", t.events, walk, pass);
}
