/* xspace_cuts.c - a host plane's long lines cut into parts at guessed
 * event boundaries, and the functions' pre-pass over the tf.data lines'
 * parts on several threads (xspace.c reads the plane's blocks; both read
 * a part with xspace_scan.c). */
#include <stdlib.h>
#include <string.h>

#include "tfd/pages.h"
#include "tfd/pool.h"
#include "xspace_impl.h"

/* The threads a host plane is read on: the load's, at most PLANE_THREADS. */
#define PLANE_THREADS 8

/* Does an XEvent's field look like one: metadata_id, offset_ps,
 * duration_ps, num_occurrences (varints) or a stat (a message)? Counts
 * offset_ps, which an XStat cannot hold as a varint (its field 2 is a
 * double): the stats of an event are not taken for events. */
static int event_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	int *offsets = ctx;

	(void)v;
	(void)s;
	if (wt == 0 && (field == 1 || field == 2 || field == 3 || field == 5)) {
		*offsets += field == 2;
		return 0;
	}
	return !(wt == 2 && field == 4);
}

/* Is p (before end) the start of `need` events in a row, or of fewer that
 * end the line? An event is field 4 of a line: tag 0x22, a length, and a
 * message of event fields with an offset. */
static bool events_at(const uint8_t *p, const uint8_t *end, int need)
{
	for (int i = 0; i < need && p < end; i++) {
		uint64_t x;
		size_t n;
		int offsets = 0;

		if (*p != 0x22)
			return false;
		n = tfd_pb_varint(p + 1, end, &x);
		if (!n || x > (uint64_t)(end - p - 1 - n) ||
		    tfd_pb_walk(p + 1 + n, (size_t)x, event_field, &offsets) != SIZE_MAX ||
		    offsets != 1)
			return false;
		p += 1 + n + x;
	}
	return true;
}

/* A likely event boundary at or after `from` (before end), or NULL: a
 * guess, confirmed when the part before it ends there. Looks at most 64 KiB
 * ahead. */
const uint8_t *tfd_xs_find_cut(const uint8_t *from, const uint8_t *end)
{
	const uint8_t *lim = end - from > (65536 + 1) ? from + 65536 : end - 1;

	for (const uint8_t *p = from; p < lim; p++) {
		p = memchr(p, 0x22, (size_t)(lim - p));
		if (!p)
			return NULL;
		if (events_at(p, end, 8))
			return p;
	}
	return NULL;
}

void tfd_xs_line_pieces(struct span ln, size_t line, size_t want, piece_vec *pcs)
{
	struct piece head;
	size_t before = pcs->n;

	memset(&head, 0, sizeof(head));
	if (want && ln.len >= 2 * want && tfd_xs_line_head(ln, &head)) {
		/* parts of about `want` bytes from guessed event boundaries */
		const uint8_t *at = ln.p, *end = ln.p + ln.len, *cut;

		head.line = line;
		while (end - at >= (ptrdiff_t)(2 * want) &&
		       (cut = tfd_xs_find_cut(at + want, end))) {
			head.p = at;
			head.end = cut;
			vec_push(pcs, head);
			at = cut;
		}
		if (pcs->n > before) {
			head.p = at;
			head.end = end;
			vec_push(pcs, head);
		}
	}
	if (pcs->n == before)
		vec_push(pcs, ((struct piece){line, ln.p, ln.p + ln.len, true, 0, 0, {NULL, 0}}));
}

/* The header of a line (id, name, timestamp) when it comes before the
 * events, and where the events start; false otherwise. */
bool tfd_xs_line_head(struct span ln, struct piece *pc)
{
	const uint8_t *p = ln.p, *end = ln.p + ln.len;
	struct pb_field f;

	while (p < end) {
		if (!tfd_pb_next(&p, end, &f) || (f.wt != 0 && f.wt != 2))
			return false;
		if (f.field == 4) /* the events: the header came first */
			return f.wt == 2;
		if (f.wt == 0 && f.field == 1)
			pc->id = (int64_t)f.v;
		else if (f.wt == 0 && f.field == 3)
			pc->ts_ns = (int64_t)f.v;
		else if (f.wt == 2 && f.field == 2)
			pc->name = f.s;
	}
	return false;
}

size_t tfd_xs_plane_threads(const struct tfd_load_opts *o)
{
	size_t n = tfd_load_cores(o);

	return n < PLANE_THREADS ? n : PLANE_THREADS;
}

/* ---- the pre-pass on several threads ----------------------------------------
 *
 * The tf.data threads' lines are searched for function step ids in parts
 * (a long line cut like the blocks' lines), a part at a time on each
 * thread (longest first), each thread into a set of its own; the sets are
 * then fitted into one table. The pre-pass reads only: the host is not
 * touched (threads are made by the lines' main read), so the order the
 * parts are read in changes nothing but the time. */

struct prepass_pool {
	const struct scan *proto;
	const struct piece *pcs; /* item k: the k-th piece of the tf.data lines */
	struct piece_out *po;	 /* per item */
	struct fn_steps *steps;	 /* per worker, a set of its own */
	struct tfd_err *errs;	 /* per item */
	enum tfd_status *sts;	 /* per item */
};

static bool prepass_item(void *ctx, size_t worker, size_t k)
{
	struct prepass_pool *pp = ctx;
	struct scan sc = *pp->proto;
	const struct piece *pc = &pp->pcs[k];
	size_t li = pc->line;
	enum tfd_status st;

	sc.prepass = true;
	sc.fn_steps = pp->steps[worker];
	sc.pre_released = pc->p;
	memset(&pp->errs[k], 0, sizeof(pp->errs[k]));
	st = tfd_xs_scan_line(&sc, sc.lines.v[li], pc->whole ? NULL : pc, &pp->po[k], &pp->errs[k]);
	pp->steps[worker] = sc.fn_steps;
	if (st) {
		tfd_err_prefix(&pp->errs[k], "line %zu", li);
		pp->sts[k] = st;
		return false; /* the lines before it are still read */
	}
	if (sc.mapped)
		tfd_pages_release(&sc.pre_released, pc->end, 0);
	return true;
}

/* The pre-pass's pieces: each tf.data line whole, or (whole false, on
 * several threads) cut into parts of about a sixteenth of a thread's
 * share: one long line had left the other cores idle for most of a
 * tf.data-heavy pre-pass. The others are skipped by length, untouched. */
static void prepass_pieces(const struct scan *sc, size_t nthreads, bool whole, piece_vec *pcs)
{
	const struct tfd_load_opts *o = sc->opts;
	size_t total = 0, want, min = o && o->block_bytes ? o->block_bytes : (size_t)1 << 20;

	for (size_t i = 0; i < sc->lines.n; i++)
		if (tfd_xs_tfdata_line(sc->lines.v[i]))
			total += sc->lines.v[i].len;
	want = total / (16 * (nthreads ? nthreads : 1));
	if (want < min)
		want = min;
	for (size_t i = 0; i < sc->lines.n; i++) {
		struct span ln = sc->lines.v[i];

		if (tfd_xs_tfdata_line(ln))
			tfd_xs_line_pieces(ln, i, !whole && nthreads > 1 ? want : 0, pcs);
	}
}

/* ---- the workers' sets fitted into one table ------------------------------
 *
 * Each set is read once into the fitted table, its slots in order (its ids
 * near their home order: the writes go along the table); merging them into
 * the largest first, then fitting that, had read and written the ids twice
 * more, alone on one core. With several threads the table is filled in
 * ranges of home slots, one range a thread: an id goes in Robin Hood's way
 * while its walk stays in its range, and an id that would walk past the
 * range's end waits to go in after the ranges are done (a Robin Hood table
 * holds a set in one layout, whatever order its ids came in). */

struct fit_job {
	uint64_t *k;
	size_t cap, nparts;
	const struct fn_steps *sets;
	size_t nsets;
	size_t *dup;	      /* per part */
	VEC(uint64_t) * left; /* per part: ids to place after the ranges */
};

static bool fit_part(void *ctx, size_t worker, size_t r)
{
	struct fit_job *j = ctx;
	size_t lo = j->cap * r / j->nparts, hi = j->cap * (r + 1) / j->nparts;

	(void)worker;
	for (size_t t = 0; t < j->nsets; t++)
		for (size_t i = 0; i < j->sets[t].cap; i++) {
			uint64_t id = j->sets[t].k[i], left;
			size_t h;
			int got;

			if (!id)
				continue;
			h = tfd_key_home(j->cap, id);
			if (h < lo || h >= hi)
				continue;
			got = fn_steps_put_until(j->k, j->cap, hi, id, &left);
			if (got == 0)
				j->dup[r]++;
			else if (got < 0)
				vec_push(&j->left[r], left);
		}
	return true;
}

/* Fewer ids than this are fitted on one thread. */
#define FIT_SPLIT_MIN ((size_t)1 << 16)

void tfd_fn_steps_fit_sets(struct fn_steps *out, struct fn_steps *sets, size_t nsets,
			   size_t nthreads)
{
	size_t total = 0, dup = 0, cap;
	bool zero = false;
	uint64_t *k;

	for (size_t t = 0; t < nsets; t++) {
		fn_steps_flush(&sets[t]);
		total += sets[t].n;
		zero |= sets[t].has_zero;
	}
	memset(out, 0, sizeof(*out));
	out->has_zero = zero;
	if (!total) {
		for (size_t t = 0; t < nsets; t++)
			fn_steps_free(&sets[t]);
		return;
	}
	cap = total + total / 7 + 1;
	k = xcalloc_written(cap, sizeof(*k));
	if (nthreads > 1 && total >= FIT_SPLIT_MIN) {
		struct fit_job j = {k, cap, nthreads, sets, nsets, NULL, NULL};

		j.dup = xcalloc(nthreads, sizeof(*j.dup));
		j.left = xcalloc(nthreads, sizeof(*j.left));
		tfd_pool_run(nthreads, nthreads, NULL, false, fit_part, &j);
		/* the ids that met a range's end, in range order, on the whole
		 * table (they may walk on into the next range, or wrap around) */
		for (size_t r = 0; r < nthreads; r++) {
			dup += j.dup[r];
			for (size_t i = 0; i < j.left[r].n; i++)
				if (!fn_steps_put_ordered_new(k, cap, j.left[r].v[i]))
					dup++;
			vec_free(&j.left[r]);
		}
		free(j.dup);
		free(j.left);
	} else {
		for (size_t t = 0; t < nsets; t++)
			for (size_t i = 0; i < sets[t].cap; i++)
				if (sets[t].k[i] && !fn_steps_put_ordered_new(k, cap, sets[t].k[i]))
					dup++;
	}
	for (size_t t = 0; t < nsets; t++)
		fn_steps_free(&sets[t]);
	out->k = k;
	out->cap = cap;
	out->n = total - dup;
	/* an id two workers met: the table is sized for the ids it holds */
	if (dup)
		fn_steps_fit(out);
}

/* The pre-pass over pieces pcs[0..n) on up to nthreads threads, into
 * sc->fn_steps; *misaligned: a guessed cut was wrong (read the lines whole
 * again, from an empty set). */
static enum tfd_status prepass_run(struct scan *sc, const struct piece *pcs, size_t n,
				   size_t nthreads, bool *misaligned, struct tfd_err *err)
{
	struct prepass_pool pp;
	size_t *len = xmalloc((n + 1) * sizeof(*len)), *order;
	enum tfd_status st = TFD_OK;
	size_t failed;

	/* items are handed out longest first */
	for (size_t k = 0; k < n; k++)
		len[k] = (size_t)(pcs[k].end - pcs[k].p);
	order = tfd_pool_costliest_first(len, n);
	if (nthreads > n)
		nthreads = n ? n : 1;
	memset(&pp, 0, sizeof(pp));
	pp.proto = sc;
	pp.pcs = pcs;
	pp.po = xcalloc(n + 1, sizeof(*pp.po));
	pp.steps = xcalloc(nthreads, sizeof(*pp.steps));
	pp.steps[0] = sc->fn_steps; /* the others start empty */
	pp.errs = xcalloc(n + 1, sizeof(*pp.errs));
	pp.sts = xcalloc(n + 1, sizeof(*pp.sts));
	/* after a failed piece the later ones are not needed */
	failed = tfd_pool_run(n, nthreads, order, true, prepass_item, &pp);
	*misaligned = false;
	for (size_t k = 0; k < n; k++)
		*misaligned |= pp.po[k].misaligned;
	if (*misaligned) {
		for (size_t t = 0; t < nthreads; t++)
			fn_steps_free(&pp.steps[t]);
		sc->fn_steps = (struct fn_steps){0};
	} else {
		tfd_fn_steps_fit_sets(&sc->fn_steps, pp.steps, nthreads, nthreads);
	}
	if (!*misaligned && failed < n) {
		st = pp.sts[failed];
		*err = pp.errs[failed];
	}
	free(pp.po);
	free(pp.steps);
	free(pp.errs);
	free(pp.sts);
	free(len);
	free(order);
	return st;
}

enum tfd_status tfd_xs_prepass(struct scan *sc, struct tfd_err *err)
{
	size_t nthreads = tfd_xs_plane_threads(sc->opts);
	piece_vec pcs = {0};
	bool misaligned = false;
	enum tfd_status st;

	prepass_pieces(sc, nthreads, false, &pcs);
	st = prepass_run(sc, pcs.v, pcs.n, nthreads, &misaligned, err);
	if (misaligned) {
		/* a cut fell inside an event: the lines whole, from an empty set */
		fn_steps_free(&sc->fn_steps);
		memset(&sc->fn_steps, 0, sizeof(sc->fn_steps));
		pcs.n = 0;
		prepass_pieces(sc, nthreads, true, &pcs);
		st = prepass_run(sc, pcs.v, pcs.n, nthreads, &misaligned, err);
	}
	vec_free(&pcs);
	return st;
}
