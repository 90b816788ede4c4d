/* absorb.c - the events of a host read in parts (a large XSpace host
 * plane's blocks, each read into a capture of its own on a thread) moved
 * into the host: signatures and forms rebuilt as the host capture's, each
 * event's bytes copied but for its start delta and its form. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "capture_impl.h"
#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include "tfd/vec.h"

/* A signature of part's arena rebuilt as one of cap's (its name is a
 * string of cap already; its parameters are rebuilt from cap's arrays). */
static const struct tfd_sig *sig_move(struct tfd_capture *cap, struct imap *done,
				      const struct tfd_sig *s)
{
	struct tfd_sig want = *s;
	const struct tfd_param *q = NULL;
	size_t v;

	if (imap_get(done, (uint64_t)(uintptr_t)s, &v))
		return (const struct tfd_sig *)(uintptr_t)v;
	for (uint16_t i = 0; i < s->nparams; i++)
		q = tfd_cm_param_cons(cap, q, i,
				      tfd_arena_intern_cstr(&cap->arena, s->params[i].key),
				      tfd_arena_intern_cstr(&cap->arena, s->params[i].val));
	want.params = q;
	v = (size_t)(uintptr_t)tfd_cm_sig_get(cap, &want);
	imap_put(done, (uint64_t)(uintptr_t)s, v);
	return (const struct tfd_sig *)(uintptr_t)v;
}

/* Form f of a part as cap's: the same but for its signature, moved, an
 * id that cap gives no form (VAL_NONE) to be stored as it is, and an id
 * near its start stored from cap's constant (the part's, when cap has
 * none yet; precode() stores each value again). */
static uint32_t moved_form(struct tfd_capture *cap, struct imap *done, const struct tfd_form *f)
{
	struct capture_impl *ci = impl(cap);
	uint32_t vi = 0;
	uint64_t val = f->val;
	enum tfd_val_how how = f->how == TFD_VAL_FORM ? tfd_cm_value_how(ci, f->val, true, &vi)
						      : (enum tfd_val_how)f->how;

	if (how == TFD_VAL_NEAR) {
		if (!ci->has_near_base) {
			ci->near_base = f->val;
			ci->has_near_base = true;
		}
		val = ci->near_base;
	}
	return tfd_cm_form_index(ci, sig_move(cap, done, f->sig), f->kind, f->flags, how, vi, val);
}

/* The order of a part's thread's events as its read added them, those
 * it left in the file included (its builder's): whether they were in
 * order, and the times of the first and the last. known: the part's
 * thread had a builder (it had events). */
struct part_order {
	bool known, unsorted;
	int64_t first_start, first_dur, last_start, last_dur;
};

/* A part's thread's events with cap's form indexes (precode()), ready to
 * be appended to one of cap's threads: every byte as it goes into cap's
 * but the first event's start, a delta from 0 (the thread's first start). */
struct precoded {
	uint8_t *buf;
	size_t len, cap, nev;
	int64_t last_start, last_dur; /* of the last event */
	int64_t prev_start;	      /* of the one before it (nev > 1) */
	size_t last_off;	      /* where the last begins */
	bool unsorted;		      /* an event before the one before it */
	/* the source check's bits of the events (struct tfd_thread.kbits),
	 * taken from the part's thread; NULL: none, kbits_lost: not in order */
	uint8_t *kbits;
	size_t nkbits;
	bool kbits_lost;
	/* of the part's thread's events, those its read left in the file
	 * (struct tfd_thread.nfile: nev + nfile events, a bit each) */
	size_t nfile;
	struct part_order order;
};

/* pc's bits from `from` on appended to dst's (the source check's:
 * struct tfd_thread.kbits); pc's freed. */
static void append_kbits(struct precoded *pc, struct tfd_thread *dst, size_t from)
{
	if (pc->kbits_lost || pc->nkbits != pc->nev + pc->nfile || dst->nkbits != dst->nevents)
		dst->kbits_lost = true;
	for (size_t i = from; i < pc->nkbits && !dst->kbits_lost; i++)
		tfd_kbit_push(dst, tfd_bit8(pc->kbits, i));
	free(pc->kbits);
	pc->kbits = NULL;
}

/* src's events (a thread of part's host ph) into pc with cap's indexes
 * (map: each of the part's forms as cap's): each event's bytes copied but
 * for the indexes in it. src's pages go as they are read (it is freed
 * after): a long thread is not held twice. Run side by side: it reads
 * cap's form table only. */
static void precode(struct tfd_capture *cap, const struct tfd_host *ph, const uint32_t *map,
		    const struct tfd_thread *src, struct precoded *pc)
{
	const uint8_t *p = src->evbuf, *end, *released = src->evbuf;
	const struct tfd_form *forms = impl(cap)->tab->form;
	int64_t start = 0, prev_dur = 0;
	uint8_t *q;

	memset(pc, 0, sizeof(*pc));
	if (!src->evlen)
		return; /* (and no array: no pointer past it) */
	end = p + src->evlen;
	/* about as long with cap's indexes */
	pc->cap = src->evlen + src->evlen / 8 + EV_MAXLEN;
	pc->buf = xmalloc(pc->cap);
	q = pc->buf;
	while (p < end) {
		const uint8_t *from = p;
		const struct tfd_form *pf;
		int64_t d;
		uint64_t fi;

		if ((size_t)(p - released) > (1u << 20))
			tfd_pages_release(&released, p, 1u << 20);
		if ((size_t)(q - pc->buf) + EV_MAXLEN > pc->cap) {
			size_t at = (size_t)(q - pc->buf);

			pc->cap += pc->cap / 2 + EV_MAXLEN;
			pc->buf = xrealloc(pc->buf, pc->cap);
			q = pc->buf + at;
		}
		pc->prev_start = start;
		start = (int64_t)((uint64_t)start + (uint64_t)tfd_ev_unzig(tfd_ev_varint(&p)));
		d = tfd_ev_unzig(tfd_ev_varint(&p));
		if (pc->nev && ev_before_at(start, d, pc->last_start, prev_dur))
			pc->unsorted = true;
		pc->last_start = start;
		pc->last_dur = prev_dur = d;
		pc->last_off = (size_t)(q - pc->buf);
		pc->nev++;
		/* the start and duration as they are */
		memcpy(q, from, (size_t)(p - from));
		q += p - from;
		fi = tfd_ev_varint(&p);
		pf = &ph->tab->form[fi];
		q = tfd_ev_put_varint(q, map[fi]);
		if (pf->how == TFD_VAL_FORM) {
			/* nothing, or the id as it is where cap gives it no form */
			q = tfd_cm_put_value(q, (enum tfd_val_how)forms[map[fi]].how, pf->val);
		} else if (pf->how == TFD_VAL_VARINT) {
			const uint8_t *v = p;

			tfd_ev_varint(&p);
			memcpy(q, v, (size_t)(p - v));
			q += p - v;
		} else if (pf->how == TFD_VAL_FIXED) {
			memcpy(q, p, 8);
			q += 8;
			p += 8;
		} else if (pf->how == TFD_VAL_NEAR) {
			/* from the part's constant to cap's form's */
			uint64_t v =
			    (uint64_t)start + pf->val + (uint64_t)tfd_ev_unzig(tfd_ev_varint(&p));

			q = tfd_ev_put_varint(
			    q, tfd_ev_zig((int64_t)(v - (uint64_t)start - forms[map[fi]].val)));
		}
	}
	pc->len = (size_t)(q - pc->buf);
	/* (its last pages too: freed, they stay the process's) */
	tfd_pages_release(&released, end, 0);
}

/* Where pc or dst has events left in the file: the seam is in order when
 * pc's events were, those left included, and its first follows dst's
 * last, one left included (as the parts' reads added them); else the
 * finish checks, reading them again from the file (11 % of a two-core
 * --low-memory analysis of an iterator-dense capture, whose seams were
 * all in order). No chunk folds across one left. dst's last, left or
 * not, is then pc's. */
static void seam_left(const struct precoded *pc, const struct tfd_thread *dst, struct th_build *tb)
{
	const struct part_order *o = &pc->order;
	/* dst's last known (no event added since the part before) */
	bool last = tb->all_known && tb->all_n == dst->nevents;

	if (pc->nfile || dst->nfile) {
		if (!o->known || o->unsorted ||
		    (dst->nevents && (!last || ev_before_at(o->first_start, o->first_dur,
							    tb->all_start, tb->all_dur))))
			tb->unsorted = 1;
		if (pc->nkbits && tfd_bit8(pc->kbits, 0))
			tb->has_fold = false;
	}
	if (!pc->nev && !pc->nfile)
		return;
	tb->all_known = o->known && (last || !dst->nevents);
	tb->all_start = o->last_start;
	tb->all_dur = o->last_dur;
}

/* pc appended to dst when none of its packed events is left to copy
 * (none, or its one folded into dst's last): those left in the file, with
 * their bits; pc freed. folded, returned. */
static size_t append_left_only(struct precoded *pc, struct tfd_thread *dst, size_t folded)
{
	free(pc->buf);
	pc->buf = NULL;
	if (pc->nfile) {
		append_kbits(pc, dst, folded);
		dst->nevents += pc->nfile;
		dst->nfile += pc->nfile;
	}
	free(pc->kbits);
	pc->kbits = NULL;
	return folded;
}

/* pc's events appended to dst (cap's; tb its builder): the first one
 * folded into dst's last when it is a chunk of the same run (a line read
 * in parts: the seam; lock held while it folds), the first one packed
 * given its start as a delta from dst's last, the rest copied as they
 * are (into an empty thread, pc's bytes taken whole). pc's pages go as
 * they are copied; it is freed. The events folded (0 or 1). */
static size_t append(struct tfd_capture *cap, struct precoded *pc, struct tfd_thread *dst,
		     struct th_build *tb, pthread_mutex_t *lock)
{
	struct capture_impl *ci = impl(cap);
	struct tfd_ev_cursor c;
	struct tfd_event e = {0};
	const uint8_t *at, *rest, *released = pc->buf, *pend;
	size_t folded = 0, off;

	seam_left(pc, dst, tb);
	if (!pc->nev)
		return append_left_only(pc, dst, 0); /* (and no array: no pointer past it) */
	c = (struct tfd_ev_cursor){pc->buf, pc->buf + pc->len, 0, ci->tab->form};
	at = c.p;
	pend = c.end;
	tfd_ev_next(&c, &e);
	if (tb->has_fold) {
		bool fold;

		pthread_mutex_lock(lock);
		fold = tfd_cm_fold_into_last(ci, dst, tb, &e);
		pthread_mutex_unlock(lock);
		tb->has_fold = false;
		if (fold) {
			tfd_cm_note_order(tb, dst->nevents, e.start_ns, e.dur_ns);
			folded = 1;
			if (pc->nev == 1)
				return append_left_only(pc, dst, 1);
			at = c.p;
			tfd_ev_next(&c, &e);
		}
	}
	/* (the bits before the events: dst's count then is theirs) */
	if (ci->kbits || pc->nfile || dst->nfile)
		append_kbits(pc, dst, folded);
	else
		free(pc->kbits);
	/* e, at `at`, is the first event packed: its bytes after its start */
	rest = at;
	tfd_ev_varint(&rest);
	if (!folded)
		tfd_cm_note_order(tb, dst->nevents, e.start_ns, e.dur_ns);
	tb->unsorted |= pc->unsorted;
	tb->prev_start = pc->last_start;
	tb->prev_dur = pc->last_dur;
	if (!dst->evlen && !folded && !tb->last_start) {
		/* the thread's first events: pc's bytes as they are */
		free(dst->evbuf);
		dst->evbuf = pc->buf;
		dst->evlen = pc->len;
		tb->cap = pc->cap;
		off = pc->last_off;
	} else {
		uint8_t *q;
		size_t need = dst->evlen + 10 + (size_t)(pend - rest) + EV_MAXLEN, base;

		if (need > tb->cap) {
			tb->cap = need + need / 8;
			dst->evbuf = xrealloc(dst->evbuf, tb->cap);
		}
		off = dst->evlen;
		q = tfd_ev_put_varint(dst->evbuf + dst->evlen,
				      tfd_ev_zig(start_delta(e.start_ns, tb->last_start)));
		base = (size_t)(q - dst->evbuf);
		/* (a megabyte at a time: pc's pages go as they are copied) */
		for (const uint8_t *from = rest; from < pend;) {
			size_t n =
			    (size_t)(pend - from) < (1u << 20) ? (size_t)(pend - from) : 1u << 20;

			memcpy(q, from, n);
			q += n;
			from += n;
			tfd_pages_release(&released, from, 1u << 20);
		}
		tfd_pages_release(&released, pend, 0);
		dst->evlen = (size_t)(q - dst->evbuf);
		if (pc->nev - folded > 1) /* the last: one of those copied */
			off = base + (pc->last_off - (size_t)(rest - pc->buf));
		free(pc->buf);
	}
	if (ci->pub.fold_exec) {
		/* the last event moved, read back: the next part's first may
		 * fold into it (its start a delta from the event before it) */
		int64_t prev = pc->nev - folded > 1 ? pc->prev_start : tb->last_start;
		struct tfd_ev_cursor lc = {dst->evbuf + off, dst->evbuf + dst->evlen, prev,
					   ci->tab->form};
		struct tfd_event le;

		tfd_ev_next(&lc, &le);
		tfd_cm_note_last(ci, tb, &le, off, prev);
		/* (a part whose last event was left in the file) */
		if ((dst->nfile || pc->nfile) && dst->nkbits && tfd_kbit(dst, dst->nkbits - 1))
			tb->has_fold = false;
	}
	dst->nfile += pc->nfile;
	dst->nevents += pc->nev + pc->nfile - folded;
	tb->last_start = pc->last_start;
	pc->buf = NULL;
	return folded;
}

/* What part host ph holds besides its threads' events, into h; folded:
 * its events folded into h's at the seams. */
static void absorb_rest(struct tfd_capture *cap, struct tfd_host *h, struct tfd_host *ph,
			size_t folded)
{
	h->nevents += ph->nevents - folded;
	h->niterators += ph->niterators;
	h->nloop_inputs += ph->nloop_inputs;
	h->nproduce += ph->nproduce;
	h->nfunctions += ph->nfunctions;
	ph->nevents = ph->niterators = ph->nloop_inputs = ph->nproduce = ph->nfunctions = 0;
	for (size_t i = 0; i < ph->nsteps; i++)
		tfd_host_note(cap, h, true, ph->steps[i].group_id, ph->steps[i].start_ns,
			      ph->steps[i].end_ns);
	for (size_t i = 0; i < ph->nmarkers; i++)
		tfd_host_add_marker(h, &ph->markers[i]);
	tfd_pages_free(ph->markers, ph->nmarkers * sizeof(*ph->markers));
	ph->markers = NULL;
	ph->nmarkers = ph->markers_cap = 0;
	for (size_t i = 0; i < ph->nfnruns; i++) {
		int64_t group = 0;
		bool has_group = tfd_fnrun_group(ph, i, &group);

		tfd_host_fnrun(h, ph->fnruns[i].thread_id, ph->fnruns[i].id, ph->fnruns[i].start_ns,
			       has_group, group);
	}
	tfd_pages_free(ph->fnruns, ph->nfnruns * sizeof(*ph->fnruns));
	free(ph->fnrun_groups);
	ph->fnruns = NULL;
	ph->fnrun_groups = NULL;
	ph->nfnruns = ph->fnruns_cap = 0;
	if (ph->span_start_ns <= ph->span_end_ns)
		tfd_host_note(cap, h, false, 0, ph->span_start_ns, ph->span_end_ns);
	tfd_fn_ops_absorb(cap, h, ph);
	for (size_t i = 0; i < ph->dev.nhost_ops; i++)
		tfd_device_host_op(h, ph->dev.host_ops[i].start_ns, ph->dev.host_ops[i].end_ns,
				   ph->dev.host_ops[i].has_group, ph->dev.host_ops[i].group);
	free(ph->dev.host_ops);
	ph->dev.host_ops = NULL;
	ph->dev.nhost_ops = ph->dev.host_ops_cap = 0;
}

/* One part's thread as it goes into one of h's. */
struct absorb_move {
	size_t part;
	uint32_t src, dst; /* the part's thread, h's */
	struct part_order order;
};

struct absorb_part {
	struct tfd_host *ph;
	uint32_t *map; /* every form of the part's as cap's */
	size_t folded; /* its events folded at the seams (atomic) */
};

struct tfd_absorb {
	struct tfd_capture *cap;
	struct tfd_host *h;
	struct absorb_part *parts;
	size_t nparts, cap_parts;
	VEC(struct absorb_move) moves; /* in part order */
	/* per thread of h: its moves, by_dst[off[t] .. off[t + 1]) once
	 * sorted (run) */
	size_t *off;
	struct absorb_move *by_dst;
	struct precoded *pre; /* each move's events (by_dst order) with cap's indexes */
	pthread_mutex_t lock;
};

struct tfd_absorb *tfd_absorb_new(struct tfd_capture *cap, struct tfd_host *h, size_t nparts)
{
	struct tfd_absorb *ab = xcalloc(1, sizeof(*ab));

	ab->cap = cap;
	ab->h = h;
	ab->cap_parts = nparts ? nparts : 1;
	ab->parts = xcalloc(ab->cap_parts, sizeof(*ab->parts));
	pthread_mutex_init(&ab->lock, NULL);
	return ab;
}

void tfd_absorb_add(struct tfd_absorb *ab, struct tfd_capture *part)
{
	struct tfd_capture *cap = ab->cap;
	struct tfd_host *h = ab->h, *ph = &part->hosts[0];
	struct absorb_part *ap;
	struct imap done = {0}; /* the part's signatures moved: part's -> cap's */

	if (ab->nparts == ab->cap_parts) {
		ab->cap_parts *= 2;
		ab->parts = xrealloc(ab->parts, ab->cap_parts * sizeof(*ab->parts));
	}
	ap = &ab->parts[ab->nparts];
	memset(ap, 0, sizeof(*ap));
	ap->ph = ph;
	tfd_cm_pack_pending(part, ph);
	/* every form of the part made cap's now: side by side, the threads
	 * only read cap's tables */
	ap->map = xmalloc((ph->tab->nform + 1) * sizeof(*ap->map));
	for (size_t f = 0; f < ph->tab->nform; f++)
		ap->map[f] = moved_form(cap, &done, &ph->tab->form[f]);
	imap_free(&done);
	for (size_t t = 0; t < ph->nthreads; t++) {
		struct tfd_thread *src = &ph->threads[t];
		uint32_t idx = tfd_host_thread(cap, h, src->id, src->name);
		struct host_build *b = tfd_cm_build_of(cap, h), *pb = tfd_cm_build_of(part, ph);
		struct absorb_move m = {ab->nparts, (uint32_t)t, idx, {false, true, 0, 0, 0, 0}};

		tfd_cm_cap_cover(b, h, idx);
		tfd_cm_pack_all_held(impl(cap), h, &h->threads[idx], &b->tb[idx]);
		h->threads[idx].kinds |= src->kinds;
		if (t < pb->ncap) {
			const struct th_build *ptb = &pb->tb[t];

			m.order = (struct part_order){
			    true,	    ptb->unsorted != 0, ptb->first_start,
			    ptb->first_dur, ptb->prev_start,	ptb->prev_dur};
		}
		vec_push(&ab->moves, m);
	}
	ab->nparts++;
}

/* Move k's events with cap's indexes (side by side: a long line read in
 * parts is one of h's threads, its parts on every core). */
static bool precode_move(void *ctx, size_t worker, size_t k)
{
	struct tfd_absorb *ab = ctx;
	const struct absorb_move *m = &ab->by_dst[k];
	struct absorb_part *ap = &ab->parts[m->part];
	struct tfd_thread *src = &ap->ph->threads[m->src];

	(void)worker;
	precode(ab->cap, ap->ph, ap->map, src, &ab->pre[k]);
	ab->pre[k].kbits = src->kbits;
	ab->pre[k].nkbits = src->nkbits;
	ab->pre[k].kbits_lost = src->kbits_lost; /* (none at all: too few, lost then) */
	ab->pre[k].nfile = src->nfile;
	ab->pre[k].order = m->order;
	src->kbits = NULL;
	src->nkbits = 0;
	src->nfile = 0;
	free(src->evbuf);
	src->evbuf = NULL;
	src->evlen = 0;
	src->nevents = 0;
	return true;
}

/* Room in h for every part's markers, runs and function ops at once:
 * grown part by part, the arrays were copied as they doubled, beside the
 * parts' own. */
static void reserve_rest(struct tfd_absorb *ab)
{
	struct tfd_host *h = ab->h;
	size_t markers = h->nmarkers, fnruns = h->nfnruns, ops = h->fn_ops.n,
	       runs = h->fn_ops.nruns;

	for (size_t i = 0; i < ab->nparts; i++) {
		const struct tfd_host *ph = ab->parts[i].ph;

		markers += ph->nmarkers;
		fnruns += ph->nfnruns;
		ops += ph->fn_ops.n;
		runs += ph->fn_ops.nruns;
	}
	tfd_host_reserve(h, markers, fnruns);
	tfd_fn_ops_reserve(&h->fn_ops, ops, runs);
}

/* Every part's events of one of h's threads, in part order. */
static bool absorb_thread(void *ctx, size_t worker, size_t t)
{
	struct tfd_absorb *ab = ctx;
	struct host_build *b = tfd_cm_build_of(ab->cap, ab->h);

	(void)worker;
	for (size_t k = ab->off[t]; k < ab->off[t + 1]; k++) {
		size_t folded =
		    append(ab->cap, &ab->pre[k], &ab->h->threads[t], &b->tb[t], &ab->lock);

		b->tb[t].all_n = ab->h->threads[t].nevents;

		if (folded)
			__atomic_fetch_add(&ab->parts[ab->by_dst[k].part].folded, folded,
					   __ATOMIC_RELAXED);
	}
	return true;
}

void tfd_absorb_run(struct tfd_absorb *ab, size_t nthreads)
{
	size_t nt = ab->h->nthreads, nm = ab->moves.n, *order;
	size_t *cost = xcalloc(nt + 1, sizeof(*cost)); /* per thread of h: the bytes moved */
	size_t *mcost = xmalloc((nm + 1) * sizeof(*mcost));

	/* the moves by thread of h, each thread's in part order (a counting
	 * sort: moves are in part order) */
	ab->off = xcalloc(nt + 2, sizeof(*ab->off));
	ab->by_dst = xmalloc((nm + 1) * sizeof(*ab->by_dst));
	for (size_t k = 0; k < nm; k++) {
		const struct absorb_move *m = &ab->moves.v[k];

		ab->off[m->dst + 2]++;
		cost[m->dst] += ab->parts[m->part].ph->threads[m->src].evlen;
	}
	for (size_t t = 0; t < nt; t++)
		ab->off[t + 2] += ab->off[t + 1];
	for (size_t k = 0; k < nm; k++)
		ab->by_dst[ab->off[ab->moves.v[k].dst + 1]++] = ab->moves.v[k];
	vec_free(&ab->moves);
	/* each move's events with cap's indexes, costliest first; then each
	 * thread's appended in part order */
	ab->pre = xcalloc(nm + 1, sizeof(*ab->pre));
	for (size_t k = 0; k < nm; k++)
		mcost[k] = ab->parts[ab->by_dst[k].part].ph->threads[ab->by_dst[k].src].evlen;
	order = tfd_pool_costliest_first(mcost, nm);
	tfd_pool_run(nm, nthreads, order, false, precode_move, ab);
	free(order);
	free(mcost);
	order = tfd_pool_costliest_first(cost, nt);
	free(cost);
	tfd_pool_run(nt, nthreads, order, false, absorb_thread, ab);
	free(order);
	reserve_rest(ab);
	for (size_t i = 0; i < ab->nparts; i++) {
		absorb_rest(ab->cap, ab->h, ab->parts[i].ph, ab->parts[i].folded);
		free(ab->parts[i].map);
	}
	pthread_mutex_destroy(&ab->lock);
	free(ab->pre);
	free(ab->parts);
	free(ab->off);
	free(ab->by_dst);
	free(ab);
}

void tfd_host_absorb(struct tfd_capture *cap, struct tfd_host *h, struct tfd_capture *part)
{
	struct tfd_absorb *ab = tfd_absorb_new(cap, h, 1);

	tfd_absorb_add(ab, part);
	tfd_absorb_run(ab, 1);
}
