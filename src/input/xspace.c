/* xspace.c - XSpace (*.xplane.pb) reader: the planes found, the host plane
 * planned into blocks and read on several threads, the functions pre-pass,
 * and the TF 2.0 Trace reader. xspace_scan.c decodes a plane's lines and
 * events in place; wire.c walks the protobuf framing.
 *
 * The top level is walked by hand so that planes are decoded one at a time
 * and device planes are skipped by length without decoding: captures reach
 * 1-2 GB and almost all of it is device activity. The "/host:CPU" plane's
 * metadata is unpacked with protobuf-c into a scratch arena that is dropped
 * as soon as its events are in the capture model. */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "input_impl.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include "tfd/vec.h"
#include "xplane.pb-c.h"
#include "xspace_impl.h"

#define HOST_PLANE "/host:CPU"

struct space_scan {
	struct span *planes;
	size_t nplanes, cap;
	struct span hostname;
	int has_hostname;
	uint32_t bad_field;
};

static int space_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct space_scan *sc = ctx;

	(void)v;
	if (field < 1 || field > 4 || wt != 2) {
		sc->bad_field = field;
		return 1;
	}
	if (field == 1) {
		if (sc->nplanes == sc->cap) {
			sc->cap = sc->cap ? sc->cap * 2 : 16;
			sc->planes = xrealloc(sc->planes, sc->cap * sizeof(*sc->planes));
		}
		sc->planes[sc->nplanes++] = s;
	} else if (field == 4 && !sc->has_hostname) {
		sc->hostname = s;
		sc->has_hostname = 1;
	}
	return 0;
}

struct plane_scan {
	struct span name;
	size_t nlines;
};

static int plane_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct plane_scan *ps = ctx;

	(void)v;
	if (field == 2 && wt == 2)
		ps->name = s;
	else if (field == 3 && wt == 2)
		ps->nlines++;
	return 0;
}

/* protobuf-c allocations go to a scratch arena; free is a no-op. */
static void *pb_alloc(void *data, size_t size)
{
	return tfd_arena_alloc(data, size);
}

static void pb_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

/* ---- the lines of a host plane on several threads ------------------------
 *
 * The plane is cut into pieces: a whole line, or for a line longer than a
 * block (one thread's line can hold most of a plane) a run of its events,
 * cut at event boundaries found by a framing-only pass over the line. The
 * pieces are grouped into blocks of about the same size, several per
 * thread. Each block is read into a capture of its own by the scan above,
 * sharing the plane's metadata read-only (event names are the main
 * capture's strings), and the blocks are then moved into the host in order:
 * the host gets what reading the lines one by one gives. */

struct block {
	size_t first, last; /* pieces [first, last) */
	size_t cost;	    /* its bytes, a tf.data thread's weighing more */
	struct tfd_capture *cap;
	struct tfd_err err;
	enum tfd_status st;
};

struct block_pool {
	const struct scan *proto;
	const char *host_name;
	const struct piece *pc;
	struct piece_out *po;
	struct block *b;
	size_t *order; /* blocks are handed out costliest first */
	size_t n;
	/* thread id -> the index the host gives it (executor sums) */
	struct imap tids;
};

struct line_tid {
	int64_t id;
	bool events;
};

/* A line's id as its thread is made with: the one read before its first
 * event; and whether it has one (else it makes no thread). */
static int line_tid_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct line_tid *lt = ctx;

	(void)s;
	if (wt == 0 && field == 1)
		lt->id = (int64_t)v;
	else if (wt == 2 && field == 4) {
		lt->events = true;
		return 1;
	}
	return 0;
}

/* The host's index of each thread, as the lines make them in order (the
 * executor sums name a chunk's thread by it while blocks are read). */
static void host_tids(const struct scan *sc, struct imap *tids)
{
	size_t n = 0;

	for (size_t i = 0; i < sc->lines.n; i++) {
		struct line_tid lt = {0, false};

		tfd_pb_walk(sc->lines.v[i].p, sc->lines.v[i].len, line_tid_field, &lt);
		if (lt.events && !imap_get(tids, (uint64_t)lt.id, NULL))
			imap_put(tids, (uint64_t)lt.id, n++);
	}
}

/* Every chunk is summed and every id coded (the events hold codes): the
 * step-id table's keys go, and the host takes no more chunks. */
static void drop_keys(struct scan *sc)
{
	tfd_fn_ops_code(&sc->cap->hosts[sc->host_idx], sc->sums);
	tfd_capture_sum_exec(sc->cap, NULL, NULL);
	free(sc->sums->key);
	sc->sums->key = NULL;
	sc->fn_steps.k = NULL; /* the same array */
}

static void read_block(struct block_pool *bp, struct block *bl)
{
	struct scan sc = *bp->proto;

	sc.cap = bl->cap = tfd_capture_new();
	sc.seen = NULL; /* (the proto's would be its capture's) */
	sc.param_cache = NULL;
	sc.cap->fold_exec = !(sc.opts && sc.opts->keep_other); /* as the host's */
	if (sc.sums) /* into the host's sums, under the host's thread indexes */
		tfd_capture_sum_exec(sc.cap, sc.sums, &bp->tids);
	tfd_capture_add_host(sc.cap, bp->host_name);
	sc.host_idx = 0;
	if (sc.left) /* (the host's source reads them, its lines all) */
		tfd_host_leave_graph(sc.cap, &sc.cap->hosts[0]);
	sc.released = bp->pc[bl->first].p;
	/* the names' answers noted as their events are read (struct
	 * meta.root) go into the block's own copy: the blocks run side by
	 * side */
	sc.metas.v = xmalloc((sc.metas.n + 1) * sizeof(*sc.metas.v));
	if (sc.metas.n) /* (a plane without metadata has no array) */
		memcpy(sc.metas.v, bp->proto->metas.v, sc.metas.n * sizeof(*sc.metas.v));
	sc.metas.cap = sc.metas.n;
	for (size_t i = bl->first; i < bl->last && !bl->st; i++) {
		const struct piece *pc = &bp->pc[i];

		bl->st = tfd_xs_scan_line(&sc, sc.lines.v[pc->line], pc->whole ? NULL : pc,
					  &bp->po[i], &bl->err);
		if (bl->st)
			tfd_err_prefix(&bl->err, "line %zu", pc->line);
		else if (sc.mapped)
			tfd_pages_release(&sc.released, pc->end, 0);
	}
	free(sc.metas.v);
	free(sc.seen);
	free(sc.param_cache);
	/* the events held back for their stats go in while the step-id
	 * table's keys are there (they go before the blocks move) */
	if (!bl->st)
		tfd_host_pack_pending(sc.cap, &sc.cap->hosts[0]);
}

static bool block_item(void *ctx, size_t worker, size_t i)
{
	struct block_pool *bp = ctx;

	(void)worker;
	read_block(bp, &bp->b[i]);
	return !bp->b[i].st;
}

/* The bytes of sc's lines. */
static size_t lines_bytes(const struct scan *sc)
{
	size_t n = 0;

	for (size_t i = 0; i < sc->lines.n; i++)
		n += sc->lines.v[i].len;
	return n;
}

/* The pieces and blocks of sc's lines, or 0 when one thread reads them. */
static size_t plan_blocks(const struct scan *sc, piece_vec *pcs, struct block **out)
{
	const struct tfd_load_opts *o = sc->opts;
	size_t nthreads = tfd_xs_plane_threads(o);
	size_t min_bytes = o && o->block_bytes ? o->block_bytes : (size_t)4 << 20;
	size_t total = lines_bytes(sc), want, acc = 0, n = 0;
	struct block *b;
	bool *heavy;

	if (nthreads < 2 || total < 2 * min_bytes)
		return 0;
	want = total / (16 * nthreads);
	if (want < min_bytes)
		want = min_bytes;
	/* a tf.data thread's events are kept: a byte of it costs more */
	heavy = xcalloc(sc->lines.n + 1, sizeof(*heavy));
	for (size_t i = 0; i < sc->lines.n; i++)
		heavy[i] = tfd_xs_tfdata_line(sc->lines.v[i]);
	for (size_t i = 0; i < sc->lines.n; i++)
		tfd_xs_line_pieces(sc->lines.v[i], i, want, pcs);
	b = xcalloc(pcs->n + 1, sizeof(*b));
	for (size_t i = 0; i < pcs->n; i++) {
		size_t bytes = (size_t)(pcs->v[i].end - pcs->v[i].p);

		if (!acc)
			b[n].first = i;
		acc += bytes;
		b[n].cost += bytes * (heavy[pcs->v[i].line] ? 3 : 1);
		if (acc >= want || i + 1 == pcs->n) {
			b[n++].last = i + 1;
			acc = 0;
		}
	}
	free(heavy);
	if (n < 2) {
		free(b);
		return 0;
	}
	*out = b;
	return n;
}

/* A part that held its line's display_name renames its thread, as the
 * name's arrival does when the line is read whole. */
static void part_names(struct scan *sc, const struct piece *pc, const struct piece_out *po,
		       const struct block *bl)
{
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];

	for (size_t k = bl->first; k < bl->last; k++)
		if (po[k].display_name.len) {
			struct span dn = po[k].display_name;
			uint32_t t = tfd_host_thread(sc->cap, h, pc[k].id, NULL);

			h->threads[t].name =
			    tfd_arena_intern(&sc->cap->arena, (const char *)dn.p, dn.len);
		}
}

/* Every block read, and the host's events in all of them within its
 * limit: moved into the host on the cores (tfd_absorb_run())
 * (false: one by one, below, which reports a failed block or the limit
 * where it falls). */
static bool absorb_side_by_side(struct scan *sc, const struct piece *pc, const struct piece_out *po,
				struct block *b, size_t n, size_t nthreads, size_t limit)
{
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	size_t events = h->nevents;
	struct tfd_absorb *ab;

	if (nthreads < 2 || n < 2)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (b[i].st || !b[i].cap)
			return false;
		events += b[i].cap->hosts[0].nevents;
	}
	if (events > limit)
		return false;
	ab = tfd_absorb_new(sc->cap, h, n);
	for (size_t i = 0; i < n; i++) {
		tfd_absorb_add(ab, b[i].cap);
		part_names(sc, pc, po, &b[i]);
	}
	tfd_absorb_run(ab, nthreads);
	return true;
}

/* Every block read: each part of a line gets what the parts before it left
 * open (tfd_xs_seams()), unless the plane is read again anyway (redo) or a
 * block failed; false: read the plane again on one thread. */
static bool seams(const struct piece *pc, struct piece_out *po, size_t npc, const struct block *b,
		  size_t n, bool redo)
{
	size_t *block_of = xmalloc((npc + 1) * sizeof(*block_of));
	struct tfd_capture **caps = xmalloc((n + 1) * sizeof(*caps));
	bool failed = redo, ok;

	for (size_t i = 0; i < n; i++) {
		caps[i] = b[i].cap;
		failed |= b[i].st || !b[i].cap;
		for (size_t k = b[i].first; k < b[i].last; k++)
			block_of[k] = i;
	}
	if (failed) { /* read again, or the error is reported: nothing to settle */
		for (size_t i = 0; i < npc; i++)
			vec_free(&po[i].lead);
		ok = true;
	} else {
		ok = tfd_xs_seams(pc, po, npc, block_of, caps);
	}
	free(block_of);
	free(caps);
	return ok;
}

/* Read the blocks on up to `jobs` threads and move them into the host in
 * order. *redo: a guessed cut was wrong (the host is untouched; read the
 * plane on one thread). */
static enum tfd_status read_lines_parallel(struct scan *sc, const struct piece *pc, size_t npc,
					   struct block *b, size_t n, bool *redo,
					   struct tfd_err *err)
{
	struct tfd_host *h;
	struct block_pool bp;
	size_t nthreads = tfd_xs_plane_threads(sc->opts), limit = tfd_max_events(sc->opts);
	enum tfd_status st = TFD_OK;

	memset(&bp, 0, sizeof(bp));
	bp.proto = sc;
	bp.host_name = sc->cap->hosts[sc->host_idx].name;
	bp.pc = pc;
	bp.po = xcalloc(npc + 1, sizeof(*bp.po));
	bp.b = b;
	bp.n = n;
	/* costliest first, so that the last block to finish is a short one
	 * (the tf.data threads' lines, where events are kept, had come last
	 * and left the other cores idle for a third of the read) */
	bp.order = xmalloc(n * sizeof(*bp.order));
	for (size_t i = 0; i < n; i++) {
		/* a few dozen blocks at the default size: insertion, stable
		 * (tiny test blocks, by the thousand, keep their order) */
		size_t j = i;

		for (; n <= 256 && j > 0 && b[bp.order[j - 1]].cost < b[i].cost; j--)
			bp.order[j] = bp.order[j - 1];
		bp.order[j] = i;
	}
	if (sc->sums)
		host_tids(sc, &bp.tids);
	/* after a failed block the later ones are not needed */
	tfd_pool_run(n, nthreads, bp.order, true, block_item, &bp);
	*redo = false;
	for (size_t i = 0; i < npc; i++)
		*redo |= bp.po[i].misaligned;
	if (!seams(pc, bp.po, npc, b, n, *redo))
		*redo = true;
	/* before the blocks move into the host (a plane read again needs
	 * the keys) */
	if (!*redo && sc->sums) {
		for (size_t i = 0; i < n; i++) /* the blocks' function ops too */
			if (b[i].cap && b[i].cap->nhosts)
				tfd_fn_ops_code(&b[i].cap->hosts[0], sc->sums);
		drop_keys(sc);
	}
	if (!*redo && absorb_side_by_side(sc, pc, bp.po, b, n, nthreads, limit)) {
		for (size_t i = 0; i < n; i++)
			tfd_capture_free(b[i].cap);
		n = 0;
	}
	for (size_t i = 0; i < n; i++) {
		if (!*redo && !st && b[i].st) {
			st = b[i].st;
			*err = b[i].err;
		}
		if (!*redo && !st && b[i].cap) {
			h = &sc->cap->hosts[sc->host_idx];
			if (h->nevents + b[i].cap->hosts[0].nevents > limit) {
				st = tfd_fail(err, TFD_E_LIMIT,
					      "more than %zu events on the host plane", limit);
				tfd_err_prefix(err, "line %zu", pc[b[i].first].line);
			} else {
				tfd_host_absorb(sc->cap, h, b[i].cap);
			}
			if (!st)
				part_names(sc, pc, bp.po, &b[i]);
		}
		tfd_capture_free(b[i].cap);
	}
	free(bp.po);
	free(bp.order);
	imap_free(&bp.tids);
	/* the readers' threads' heaps keep what the blocks grew through
	 * (below glibc's mmap threshold, 1 MB): given back, 1-2 MB at the
	 * phases after */
	malloc_trim(0);
	return st;
}

/* An index by id of the small ids TensorFlow uses (-1: none) for a
 * metadata map, *n entries; NULL when the map is empty or an id is large
 * (lookups then go through the map). */
static int32_t *dense_index(const struct imap *m, size_t *n)
{
	uint64_t maxid = 0;
	int32_t *ix;

	*n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].val1 && m->s[i].key > maxid)
			maxid = m->s[i].key;
	if (!m->n || maxid >= (1u << 20))
		return NULL;
	*n = (size_t)maxid + 1;
	ix = xmalloc(*n * sizeof(*ix));
	for (size_t i = 0; i < *n; i++)
		ix[i] = -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].val1)
			ix[m->s[i].key] = (int32_t)(m->s[i].val1 - 1);
	return ix;
}

/* A plane with dataset functions: their step ids first (the pre-pass),
 * and, unless every event is kept, the table their executor chunks are
 * summed in as they are read (the set's keys, a value per slot). */
static enum tfd_status functions_first(struct scan *sc, struct tfd_err *err)
{
	enum tfd_status st = tfd_xs_prepass(sc, err);

	if (st || (sc->opts && sc->opts->keep_other))
		return st;
	fn_steps_flush(&sc->fn_steps);
	sc->sums = xcalloc(1, sizeof(*sc->sums));
	sc->sums->key = sc->fn_steps.k;
	sc->sums->cap = sc->fn_steps.cap;
	sc->sums->has_zero = sc->fn_steps.has_zero;
	sc->sums->val = xcalloc_written(sc->fn_steps.cap ? sc->fn_steps.cap : 1, sizeof(uint64_t));
	sc->sums->coded = true;
	tfd_capture_sum_exec(sc->cap, sc->sums, NULL);
	return TFD_OK;
}

/* Whether a device plane of the same name as plane i was read already. */
static bool same_plane_read(const struct tfd_capture *cap, size_t host_idx, size_t i)
{
	const struct tfd_host *h = &cap->hosts[host_idx];

	for (size_t j = 0; j < i; j++)
		if (h->planes[j].decoded && strcmp(h->planes[j].name, h->planes[i].name) == 0)
			return true;
	return false;
}

/* The share of a host plane's bytes past which its analysis may take
 * more memory than that (an iterator-dense host's call table: about a
 * third of the file; every other kind of capture a tenth or less). */
#define SHORT_SHARE 0.4

/* The memory the process may still take (tfd_memory_budget()) when it is
 * short for sc's host plane (SHORT_SHARE of its lines' bytes), else
 * SIZE_MAX. */
static size_t short_budget(const struct scan *sc)
{
	size_t budget = tfd_memory_budget();

	return (double)budget < SHORT_SHARE * (double)lines_bytes(sc) ? budget : SIZE_MAX;
}

/* The plane's lines into the host: in blocks on several threads, or one by
 * one (a small plane, or one whose guessed cuts were wrong). */
static enum tfd_status read_lines(struct scan *sc, struct tfd_err *err)
{
	piece_vec pcs = {0};
	struct block *blocks = NULL;
	size_t nblocks;
	bool redo = false;
	enum tfd_status st = TFD_OK;

	/* a plane read into a host of its own, whose bytes outlive the read
	 * (a capture loaded for a lean analysis), may leave the iterator,
	 * Produce and Consume events in the file (its blocks' parts too) */
	if (sc->mapped && sc->opts && sc->opts->defer_device &&
	    !sc->cap->hosts[sc->host_idx].nevents) {
		struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
		/* (--low-memory decides it: the budget's files are not read) */
		size_t budget = sc->opts->leave_in_file ? SIZE_MAX : short_budget(sc);

		h->low_memory = sc->opts->leave_in_file || budget != SIZE_MAX;
		h->short_mb = budget != SIZE_MAX ? budget >> 20 : 0;
		if (h->low_memory || tfd_env_flag("TFDOCTOR_SOURCE_LEAVE")) {
			tfd_host_leave_graph(sc->cap, h);
			sc->left = true;
		}
	}
	nblocks = plan_blocks(sc, &pcs, &blocks);

	if (nblocks && sc->mapped && sc->lines.n) {
		/* the cuts were guessed by reading a little at each: the
		 * kernel mapped the file around them (a large folio can be
		 * megabytes), pages that stayed until a block passed by */
		const uint8_t *from = sc->lines.v[0].p;
		const struct span *last = &sc->lines.v[sc->lines.n - 1];

		tfd_pages_release(&from, last->p + last->len, 0);
	}

	if (nblocks)
		st = read_lines_parallel(sc, pcs.v, pcs.n, blocks, nblocks, &redo, err);
	free(blocks);
	vec_free(&pcs);
	if (nblocks && !redo)
		return st;
	if (redo && sc->sums) {
		/* the blocks' chunks went in: the lines are read again */
		memset(sc->sums->val, 0, (sc->sums->cap ? sc->sums->cap : 1) * sizeof(uint64_t));
		sc->sums->zero_val = 0;
	}
	for (size_t i = 0; i < sc->lines.n; i++) {
		st = tfd_xs_scan_line(sc, sc->lines.v[i], NULL, NULL, err);
		if (st) {
			tfd_err_prefix(err, "line %zu", i);
			return st;
		}
		if (sc->mapped)
			tfd_pages_release(&sc->released, sc->lines.v[i].p + sc->lines.v[i].len, 0);
	}
	return TFD_OK;
}

/* TFDOCTOR_SOURCE_CHECK=1: the plane's iterator, Produce and Consume
 * events read again from the file. Where its bytes outlive the read (a
 * capture loaded for a lean analysis: opts->defer_device), what the walk
 * needs is kept with the host and the analysis reads them at its start;
 * otherwise now (the events still held for their stats packed first). */
static void source_check(struct scan *sc)
{
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	struct tfd_source *src;

	if (sc->left || (sc->mapped && sc->opts && sc->opts->defer_device)) {
		h->source = tfd_xs_source(sc, true);
		return;
	}
	tfd_host_pack_pending(sc->cap, h);
	src = tfd_xs_source(sc, false);
	tfd_source_check(h, src, false);
	(void)tfd_source_free(src, NULL);
}

static enum tfd_status read_host_plane(struct tfd_capture *cap, size_t host_idx, struct span plane,
				       const struct tfd_load_opts *opts, bool mapped,
				       struct span file, struct tfd_err *err)
{
	struct scan sc;
	struct tfd_arena scratch;
	enum tfd_status st = TFD_OK;
	bool has_session_runs = false, has_function_runs = false;

	memset(&sc, 0, sizeof(sc));
	sc.cap = cap;
	sc.host_idx = host_idx;
	sc.opts = opts;
	sc.mapped = mapped;
	sc.release_step = tfd_pages_release_step(file.len, tfd_load_cores(opts));
	sc.released = file.p;
	tfd_arena_init(&scratch);
	sc.alloc.alloc = pb_alloc;
	sc.alloc.free = pb_free;
	sc.alloc.allocator_data = &scratch;
	if (tfd_pb_walk(plane.p, plane.len, tfd_xs_plane_collect, &sc) != SIZE_MAX || sc.bad) {
		st = tfd_fail(err, TFD_E_FORMAT, "corrupt XSpace protobuf: %s in plane '/host:CPU'",
			      sc.bad ? sc.bad : "malformed field");
		goto out;
	}
	for (size_t i = 0; i < sc.metas.n && !sc.has_functions; i++)
		sc.has_functions = sc.metas.v[i].kind == TFD_EV_FUNCTION;
	/* a GetNext op's run is noted only where session or function runs
	 * may step the host (a plane with neither has one a step), a
	 * function's eager call only where function runs may */
	for (size_t i = 0; i < sc.metas.n; i++) {
		has_session_runs |= sc.metas.v[i].runs == META_SESSION_RUN;
		has_function_runs |= sc.metas.v[i].runs == META_FN_RUN;
	}
	for (size_t i = 0; i < sc.metas.n; i++)
		if ((sc.metas.v[i].runs == META_GET_NEXT && !has_session_runs &&
		     !has_function_runs) ||
		    (sc.metas.v[i].runs == META_FN_CALL && !has_function_runs))
			sc.metas.v[i].runs = 0;
	sc.meta_by_id = dense_index(&sc.ev_meta, &sc.nmeta_by_id);
	sc.smeta_by_id = dense_index(&sc.stat_meta, &sc.nsmeta_by_id);
	if (sc.has_functions)
		st = functions_first(&sc, err);
	if (!st)
		st = read_lines(&sc, err);
	if (!st)
		st = tfd_fn_ops_check(&cap->hosts[host_idx], err);
	if (!st && (sc.left || tfd_env_flag("TFDOCTOR_SOURCE_CHECK")))
		source_check(&sc);
out:
	/* the pre-pass's step ids are those of functions kept on the host */
	if (!st && !(opts && opts->keep_other))
		cap->hosts[host_idx].exec_filtered = true;
	if (sc.sums) {
		/* the events held back for their stats are packed (summed) now,
		 * while the table takes them */
		tfd_host_pack_pending(cap, &cap->hosts[host_idx]);
		drop_keys(&sc);
		if (!st && !cap->hosts[host_idx].exec_sums)
			cap->hosts[host_idx].exec_sums = sc.sums;
		else
			tfd_exec_sums_free(sc.sums);
	}
	tfd_arena_release(&scratch);
	imap_free(&sc.ev_meta);
	imap_free(&sc.stat_meta);
	fn_steps_free(&sc.fn_steps);
	free(sc.meta_by_id);
	free(sc.smeta_by_id);
	vec_free(&sc.metas);
	vec_free(&sc.smetas);
	vec_free(&sc.lines);
	free(sc.seen);
	free(sc.param_cache);
	return st;
}

enum tfd_status tfd_xspace_read(struct tfd_capture *cap, const uint8_t *data, size_t len,
				const char *path, const char *default_host,
				const struct tfd_load_opts *opts, bool mapped, struct tfd_err *err)
{
	struct space_scan sc;
	struct tfd_dev_reader *dev = tfd_dev_reader_new(mapped);
	enum tfd_status st = TFD_OK;
	size_t bad, host_idx;
	struct tfd_host *h;
	char *hostname;

	(void)path;
	cap->fold_exec = !(opts && opts->keep_other);
	memset(&sc, 0, sizeof(sc));
	bad = tfd_pb_walk(data, len, space_field, &sc);
	if (bad != SIZE_MAX) {
		if (sc.bad_field)
			st = tfd_fail(err, TFD_E_FORMAT,
				      "not an XSpace protobuf (unexpected field %u at offset %zu)",
				      sc.bad_field, bad);
		else
			st = tfd_fail(err, TFD_E_FORMAT,
				      "truncated or corrupt XSpace protobuf at offset %zu of %zu",
				      bad, len);
		goto out;
	}
	if (sc.nplanes == 0) {
		st = tfd_fail(err, TFD_E_FORMAT, "not an XSpace capture (no planes)");
		goto out;
	}
	/* the host's name whole, however long */
	if (sc.has_hostname && sc.hostname.len > 0) {
		hostname = xmalloc(sc.hostname.len + 1);
		memcpy(hostname, sc.hostname.p, sc.hostname.len);
		hostname[sc.hostname.len] = '\0';
	} else {
		hostname = xstrdup(default_host ? default_host : "");
	}
	h = tfd_capture_add_host(cap, hostname);
	free(hostname);
	host_idx = cap->nhosts - 1;
	h->format = TFD_FMT_XSPACE;
	h->planes = xcalloc(sc.nplanes, sizeof(*h->planes));
	h->nplanes = sc.nplanes;
	for (size_t i = 0; i < sc.nplanes; i++) {
		struct plane_scan ps;
		struct tfd_plane_info *pi;

		memset(&ps, 0, sizeof(ps));
		bad = tfd_pb_walk(sc.planes[i].p, sc.planes[i].len, plane_field, &ps);
		if (bad != SIZE_MAX) {
			st = tfd_fail(err, TFD_E_FORMAT,
				      "corrupt XSpace protobuf: plane %zu is malformed at byte %zu",
				      i, bad);
			goto out;
		}
		h = &cap->hosts[host_idx];
		pi = &h->planes[i];
		pi->name = tfd_arena_intern(&cap->arena, (const char *)ps.name.p, ps.name.len);
		pi->nlines = ps.nlines;
		if (strcmp(pi->name, HOST_PLANE) == 0) {
			size_t before;

			/* the function step ids of a host's events are codes
			 * of its one table (struct tfd_exec_sums) */
			if (h->has_host_plane) {
				st = tfd_fail(err, TFD_E_FORMAT,
					      "corrupt XSpace protobuf: a second '" HOST_PLANE
					      "' plane (plane %zu)",
					      i);
				goto out;
			}
			tfd_host_pack_pending(cap, h);
			before = h->nevents;
			st = read_host_plane(cap, host_idx, sc.planes[i], opts, mapped,
					     (struct span){data, len}, err);
			if (st)
				goto out;
			/* what was kept, the last chunk run folded */
			tfd_host_pack_pending(cap, &cap->hosts[host_idx]);
			pi = &cap->hosts[host_idx].planes[i];
			pi->nevents = cap->hosts[host_idx].nevents - before;
			h = &cap->hosts[host_idx];
			h->has_host_plane = true;
			h->planes[i].decoded = true;
		} else if (tfd_is_device_plane(pi->name) && !same_plane_read(cap, host_idx, i)) {
			/* reduced once the host plane (its steps and waits) is in; a
			 * device's plane written twice is read once (its copies were
			 * counted twice) */
			st = tfd_dev_reader_plane(dev, sc.planes[i].p, sc.planes[i].len, pi->name,
						  i, err);
			if (st)
				goto out;
			pi->decoded = true;
		}
	}
	/* a raw capture's steps are its markers: before the device sweep */
	tfd_host_steps_from_markers(cap, &cap->hosts[host_idx]);
	if (opts && opts->defer_device)
		st = tfd_dev_reader_defer(&dev, cap, &cap->hosts[host_idx], opts, err);
	else
		st = tfd_dev_reader_finish(dev, cap, &cap->hosts[host_idx], err);
out:
	tfd_dev_reader_free(dev);
	free(sc.planes);
	return st;
}

enum tfd_status tfd_trace_read(struct tfd_capture *cap, const uint8_t *data, size_t len,
			       const char *path, const char *default_host,
			       const struct tfd_load_opts *opts, struct tfd_err *err)
{
	struct tfd_arena scratch;
	ProtobufCAllocator alloc;
	Tfdpb__Trace *tr;
	struct tfd_host *h;
	size_t host_idx;
	enum tfd_status st = TFD_OK;

	(void)path;
	tfd_arena_init(&scratch);
	alloc.alloc = pb_alloc;
	alloc.free = pb_free;
	alloc.allocator_data = &scratch;
	tr = tfdpb__trace__unpack(&alloc, len, data);
	if (!tr) {
		tfd_arena_release(&scratch);
		return tfd_fail(err, TFD_E_FORMAT, "truncated or corrupt TF 2.0 Trace protobuf");
	}
	h = tfd_capture_add_host(cap, default_host);
	host_idx = cap->nhosts - 1;
	h->format = TFD_FMT_TF2_TRACE;
	h->planes = xcalloc(tr->n_devices ? tr->n_devices : 1, sizeof(*h->planes));
	for (size_t d = 0; d < tr->n_devices; d++) {
		const Tfdpb__Device *dev = tr->devices[d]->value;
		struct tfd_plane_info *pi = &h->planes[h->nplanes++];

		pi->name = tfd_arena_intern_cstr(&cap->arena, dev && dev->name ? dev->name : "");
		pi->nlines = dev ? dev->n_resources : 0;
		/* a Trace has no planes to skip: every device's events are read */
		pi->decoded = true;
	}
	for (size_t i = 0; i < tr->n_trace_events; i++) {
		const Tfdpb__TraceEvent *te = tr->trace_events[i];
		const Tfdpb__Device *dev = NULL;
		const char *rname = "";
		int64_t start, end;
		uint32_t th;
		struct tfd_event *e;

		for (size_t d = 0; d < tr->n_devices; d++)
			if (tr->devices[d]->key == te->device_id)
				dev = tr->devices[d]->value;
		/* host activity lives on the device whose name ends in /host:CPU or
		 * /device:CPU:0 (TF 2.0 named both) */
		if (!dev || !dev->name ||
		    (!strstr(dev->name, "/host:CPU") && !strstr(dev->name, "device:CPU")))
			continue;
		for (size_t r = 0; r < dev->n_resources; r++)
			if (dev->resources[r]->key == te->resource_id && dev->resources[r]->value)
				rname = dev->resources[r]->value->name;
		if (te->timestamp_ps / 1000 > TFD_MAX_TIME_NS ||
		    te->duration_ps / 1000 > TFD_MAX_DURATION_NS) {
			st = tfd_fail(err, TFD_E_FORMAT, "event %zu: time out of range", i);
			goto out;
		}
		h = &cap->hosts[host_idx];
		h->has_host_plane = true;
		start = (int64_t)(te->timestamp_ps / 1000);
		end = start + (int64_t)((te->timestamp_ps % 1000 + te->duration_ps) / 1000);
		tfd_host_note(cap, h, false, 0, start, end);
		if (!tfd_keep_kind(tfd_event_kind_of(te->name ? te->name : ""), opts))
			continue;
		th = tfd_host_thread(cap, h, ((int64_t)te->device_id << 32) | te->resource_id,
				     rname);
		e = tfd_host_add_event(cap, h, th, te->name ? te->name : "", start, end - start);
		for (size_t a = 0; a < te->n_args; a++)
			if (te->args[a]->key && te->args[a]->value)
				tfd_event_set_stat_str(cap, e, te->args[a]->key,
						       te->args[a]->value);
	}
out:
	tfd_arena_release(&scratch);
	return st;
}
