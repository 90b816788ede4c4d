/* xspace_source.c - a host plane's iterator, Produce and Consume events
 * decoded again from the file, line by line, none kept (struct
 * tfd_source): checked against the events the read packed
 * (TFDOCTOR_SOURCE_CHECK=1, src/model/source_check.c; see
 * docs/performance.md, "Calls held in time order").
 *
 * A reader that folds the calls as they come, instead of keeping them,
 * reads these events twice: once for what must be known before the calls
 * (the iterators' numbers and parents, the root calls), once merged by
 * time to make and link the calls. Neither may pack them: the packed
 * events alone are most of an iterator-dense capture's peak. Here each
 * line's events are walked again in the mapped file (its pages given
 * back as it goes, as the read does), each decoded into a struct
 * tfd_event of its own by the read's own code (tfd_xs_decode_iter()).
 *
 * What the walk needs of the read (the plane's lines, its event and stat
 * metadata, the caches of stats and parameters) is kept past it, when
 * the file's bytes are (a capture loaded for a lean analysis): the
 * loader gives the source the mapping (tfd_source_own()), and the
 * analysis reads the events again at its start. Otherwise the walk runs
 * at the end of the read, on the read's own scan. */
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
	if (!tfd_graph_kind(m->kind) || !tfd_keep_kind((enum tfd_ev_kind)m->kind, sc->opts))
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

/* Those of tfd_xs_decode_iter() with their kind, times and the signature
 * of their name alone, their stats not read (no value, flags or
 * parameters): what the passes that look for the iterator call around
 * another event read of it. */
static int decode_times(struct scan *sc, int64_t ts_ns, const uint8_t *p, const uint8_t *end,
			struct tfd_event *e)
{
	uint64_t mid = 0, off = 0, dur = 0;
	const uint8_t *stats = NULL;
	const struct meta *m;
	size_t mi;

	if (!event_fields(p, end, &mid, &off, &dur, &stats) || off / 1000 > TFD_MAX_TIME_NS ||
	    dur / 1000 > TFD_MAX_DURATION_NS)
		return -1;
	if (!meta_index(&sc->ev_meta, sc->meta_by_id, sc->nmeta_by_id, mid, &mi))
		return 0;
	m = &sc->metas.v[mi];
	if (!tfd_graph_kind(m->kind) || !tfd_keep_kind((enum tfd_ev_kind)m->kind, sc->opts))
		return 0;
	tfd_event_begin(sc->cap, e, m->name, (enum tfd_ev_kind)m->kind,
			ts_ns + (int64_t)(off / 1000), (int64_t)((off % 1000 + dur) / 1000));
	return 1;
}

/* The plane's iterator, Produce and Consume events decoded again from the
 * file, line after line (struct tfd_event_source), or the lines of one
 * thread: where it is, what it found malformed. */
struct file_src {
	struct scan *sc;
	struct imap tids;	/* a thread's id -> its index in the host */
	size_t *only;		/* the lines it reads (NULL: every line) */
	size_t nonly, at;	/* ... how many, and the one it reads */
	struct span line;	/* that line */
	const uint8_t *p, *end; /* in the line, NULL before it */
	/* the pages below this went (each cursor gives back those of its
	 * own lines behind it, as the read does: several read at once) */
	const uint8_t *released;
	int64_t id, ts;
	bool ts_seen, have_thread;
	uint32_t th;
	/* a cursor over one thread's lines: its index (no map of ids) */
	bool one;
	/* decode_times() instead of tfd_xs_decode_iter() */
	bool times;
	size_t malformed;
};

/* The line the cursor reads (its index in the plane), false: none left. */
static bool file_line(const struct file_src *fs, size_t *line)
{
	if (fs->only) {
		if (fs->at >= fs->nonly)
			return false;
		*line = fs->only[fs->at];
		return true;
	}
	*line = fs->at;
	return fs->at < fs->sc->lines.n;
}

static bool file_next(void *ctx, uint32_t *thread, struct tfd_event *e)
{
	struct file_src *fs = ctx;
	struct scan *sc = fs->sc;
	struct pb_field f;
	size_t li;

	for (;;) {
		if (!fs->p || fs->p >= fs->end) {
			if (fs->p)
				fs->at++;
			if (!file_line(fs, &li))
				return false;
			fs->line = sc->lines.v[li];
			fs->p = fs->line.p;
			fs->end = fs->line.p + fs->line.len;
			fs->released = fs->line.p;
			fs->id = fs->ts = 0;
			fs->ts_seen = fs->have_thread = false;
			if (!fs->line.len) {
				fs->p = NULL;
				fs->at++;
				continue;
			}
		}
		/* those before this field, which is read next */
		if (sc->mapped && fs->p > fs->released + sc->release_step)
			tfd_pages_release(&fs->released, fs->p, 0);
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
				size_t idx;

				if (!fs->ts_seen) {
					/* as the read takes it for an event before any
					 * timestamp field; the walk for it faulted the
					 * line's pages in */
					const uint8_t *from = f.s.p + f.s.len;
					struct line_hdr lh = {0};

					tfd_pb_walk(fs->line.p, fs->line.len, line_hdr_field, &lh);
					fs->ts = lh.ts_ns;
					if (sc->mapped)
						tfd_pages_release(&from, fs->end, 0);
				}
				fs->ts_seen = true;
				/* a line the read made no thread for kept no event */
				if (!fs->one)
					fs->th = imap_get(&fs->tids, (uint64_t)fs->id, &idx)
						     ? (uint32_t)idx
						     : UINT32_MAX;
				fs->have_thread = true;
			}
			r = fs->times ? decode_times(sc, fs->ts, f.s.p, f.s.p + f.s.len, e)
				      : tfd_xs_decode_iter(sc, fs->ts, f.s.p, f.s.p + f.s.len, e);
			fs->malformed += r < 0;
			if (r > 0) {
				*thread = fs->th;
				return true;
			}
		}
	}
}

/* What a read keeps to walk its plane again (struct tfd_source): its
 * scan's metadata, lines and caches, moved out of the read, or borrowed
 * from a read that is still going on. */
struct xs_source {
	struct tfd_source base;
	struct scan sc;
	struct tfd_load_opts opts; /* sc.opts: the read's own went with it */
	bool borrowed;
	/* borrowed: the caches as lent (those the walk made are its own) */
	void *lent_seen, *lent_params;
	/* each line's id, read from its header on the first cursor over one
	 * thread (NULL before) */
	int64_t *line_id;
};

/* A line's id as file_next() takes it: its field 1 before its first
 * event (a line is written in field order, its id first: one page read). */
static int64_t line_id_of(struct span line)
{
	const uint8_t *p = line.p, *end = line.p + line.len;
	struct pb_field f;
	int64_t id = 0;

	while (tfd_pb_next(&p, end, &f) && !(f.field == 4 && f.wt == 2))
		if (f.field == 1 && f.wt == 0)
			id = (int64_t)f.v;
	return id;
}

/* A cursor over lines only[0..nonly) of thread t (only NULL: every line,
 * of the threads of h) into *out. */
static struct file_src *cursor_open(struct xs_source *xs, const struct tfd_host *h, size_t t,
				    size_t *only, size_t nonly, struct tfd_event_source *out)
{
	struct file_src *fs = xcalloc(1, sizeof(*fs));

	fs->sc = &xs->sc;
	fs->only = only;
	fs->nonly = nonly;
	fs->one = only != NULL;
	fs->th = (uint32_t)t;
	for (size_t i = 0; !only && i < h->nthreads; i++)
		imap_put(&fs->tids, (uint64_t)h->threads[i].id, i);
	out->ctx = fs;
	out->next = file_next;
	return fs;
}

static void xs_open(struct tfd_source *s, const struct tfd_host *h, struct tfd_event_source *out)
{
	cursor_open((struct xs_source *)s, h, 0, NULL, 0, out);
}

/* The lines of thread t (at least one slot, none of them may be its). */
static size_t *thread_lines(struct tfd_source *s, const struct tfd_host *h, size_t t, size_t *n)
{
	struct xs_source *xs = (struct xs_source *)s;
	const struct scan *sc = &xs->sc;
	size_t *only = xmalloc((sc->lines.n + 1) * sizeof(*only));

	if (!xs->line_id) {
		xs->line_id = xmalloc((sc->lines.n + 1) * sizeof(*xs->line_id));
		for (size_t i = 0; i < sc->lines.n; i++)
			xs->line_id[i] = line_id_of(sc->lines.v[i]);
	}
	for (size_t i = 0; i < sc->lines.n; i++)
		if (t < h->nthreads && xs->line_id[i] == h->threads[t].id)
			only[(*n)++] = i;
	return only;
}

static void xs_open_thread(struct tfd_source *s, const struct tfd_host *h, size_t t,
			   struct tfd_event_source *out)
{
	size_t n = 0, *only = thread_lines(s, h, t, &n);

	cursor_open((struct xs_source *)s, h, t, only, n, out);
}

static void xs_open_times(struct tfd_source *s, const struct tfd_host *h, size_t t,
			  struct tfd_event_source *out)
{
	size_t n = 0, *only = thread_lines(s, h, t, &n);

	cursor_open((struct xs_source *)s, h, t, only, n, out)->times = true;
}

static size_t xs_close(struct tfd_source *s, struct tfd_event_source *cur)
{
	struct file_src *fs = cur->ctx;
	size_t malformed = fs->malformed;

	(void)s;
	imap_free(&fs->tids);
	free(fs->only);
	free(fs);
	cur->ctx = NULL;
	return malformed;
}

static void xs_free(struct tfd_source *s)
{
	struct xs_source *xs = (struct xs_source *)s;
	struct scan *sc = &xs->sc;

	free(xs->line_id);
	if (!xs->borrowed) {
		imap_free(&sc->ev_meta);
		imap_free(&sc->stat_meta);
		free(sc->meta_by_id);
		free(sc->smeta_by_id);
		vec_free(&sc->metas);
		vec_free(&sc->smetas);
		vec_free(&sc->lines);
		free(sc->seen);
		free(sc->param_cache);
	} else {
		if (sc->seen != xs->lent_seen)
			free(sc->seen);
		if (sc->param_cache != xs->lent_params)
			free(sc->param_cache);
	}
	free(xs);
}

struct tfd_source *tfd_xs_source(struct scan *sc, bool keep)
{
	struct xs_source *xs = xcalloc(1, sizeof(*xs));

	xs->base.open = xs_open;
	xs->base.open_thread = xs_open_thread;
	xs->base.open_times = xs_open_times;
	xs->base.close = xs_close;
	xs->base.free = xs_free;
	xs->borrowed = !keep;
	if (sc->opts)
		xs->opts = *sc->opts;
	/* what the walk reads (the metadata and lines, the caches of stats
	 * and parameters), and no more: the read's function scopes, its
	 * pre-pass, its sums and its protobuf-c scratch stay behind */
	xs->sc.cap = sc->cap;
	xs->sc.host_idx = sc->host_idx;
	xs->sc.opts = &xs->opts;
	xs->sc.ev_meta = sc->ev_meta;
	xs->sc.stat_meta = sc->stat_meta;
	xs->sc.metas = sc->metas;
	xs->sc.smetas = sc->smetas;
	xs->sc.lines = sc->lines;
	xs->sc.mapped = sc->mapped;
	xs->sc.release_step = sc->release_step;
	xs->sc.meta_by_id = sc->meta_by_id;
	xs->sc.nmeta_by_id = sc->nmeta_by_id;
	xs->sc.smeta_by_id = sc->smeta_by_id;
	xs->sc.nsmeta_by_id = sc->nsmeta_by_id;
	xs->sc.seen = sc->seen;
	xs->sc.param_cache = sc->param_cache;
	xs->lent_seen = sc->seen;
	xs->lent_params = sc->param_cache;
	memcpy(xs->sc.group_mids, sc->group_mids, sizeof(sc->group_mids));
	xs->sc.ngroup_mids = sc->ngroup_mids;
	memcpy(xs->sc.id_mids, sc->id_mids, sizeof(sc->id_mids));
	xs->sc.nid_mids = sc->nid_mids;
	memcpy(xs->sc.root_mids, sc->root_mids, sizeof(sc->root_mids));
	xs->sc.nroot_mids = sc->nroot_mids;
	if (keep) {
		/* the read frees none of it now */
		memset(&sc->ev_meta, 0, sizeof(sc->ev_meta));
		memset(&sc->stat_meta, 0, sizeof(sc->stat_meta));
		memset(&sc->metas, 0, sizeof(sc->metas));
		memset(&sc->smetas, 0, sizeof(sc->smetas));
		memset(&sc->lines, 0, sizeof(sc->lines));
		sc->meta_by_id = sc->smeta_by_id = NULL;
		sc->nmeta_by_id = sc->nsmeta_by_id = 0;
		sc->seen = NULL;
		sc->param_cache = NULL;
	}
	return &xs->base;
}
