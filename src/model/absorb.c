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

/* The moves of one absorb: every signature moved (done), and the last move
 * of each, direct-mapped (a thread's events cycle through a few). */
struct sig_moves {
	struct imap done;
	struct {
		const struct tfd_sig *from, *to;
	} last[64];
};

static const struct tfd_sig *moved_sig(struct tfd_capture *cap, struct sig_moves *mv,
				       const struct tfd_sig *s)
{
	size_t m = ((uintptr_t)s >> 5) % (sizeof(mv->last) / sizeof(mv->last[0]));

	if (mv->last[m].from != s) {
		mv->last[m].from = s;
		mv->last[m].to = sig_move(cap, &mv->done, s);
	}
	return mv->last[m].to;
}

/* Form f of a part as cap's: the same but for its signature, moved, and
 * an id that cap gives no form (VAL_NONE) to be stored as it is. */
static uint32_t moved_form(struct tfd_capture *cap, struct sig_moves *mv, const struct tfd_form *f)
{
	struct capture_impl *ci = impl(cap);
	uint32_t vi = 0;
	enum tfd_val_how how = f->how == TFD_VAL_FORM ? tfd_cm_value_how(ci, f->val, true, &vi)
						      : (enum tfd_val_how)f->how;

	return tfd_cm_form_index(ci, moved_sig(cap, mv, f->sig), f->kind, f->flags, how, vi,
				 f->val);
}

/* Append the packed events of src (a thread of part's host ph) to dst
 * (cap's), with cap's indexes (map: each of the part's forms as cap's):
 * each event's bytes are copied but for its start delta and the indexes
 * in it. src's pages go as they are read (it is freed after): a long
 * thread is not held twice. lock: held while the seam folds. The events
 * folded there (0 or 1). */
static size_t repack(struct tfd_capture *cap, const struct tfd_host *ph, struct sig_moves *mv,
		     const uint32_t *map, struct tfd_thread *src, struct tfd_thread *dst,
		     struct th_build *tb, pthread_mutex_t *lock)
{
	const uint8_t *p = src->evbuf, *end, *released = src->evbuf;
	int64_t start = 0, prev = 0;
	size_t folded = 0, off = SIZE_MAX;

	if (!src->evlen)
		return 0;
	end = p + src->evlen;
	/* about as long with cap's indexes */
	if (dst->evlen + src->evlen + EV_MAXLEN > tb->cap) {
		tb->cap = dst->evlen + src->evlen + src->evlen / 8 + EV_MAXLEN;
		dst->evbuf = xrealloc(dst->evbuf, tb->cap);
	}
	if (tb->has_fold) {
		/* the seam of a line read in parts: its first event may be a
		 * chunk of the run the line's previous part ended with */
		struct tfd_ev_cursor c;
		struct tfd_event e = {0};

		bool fold;

		tfd_ev_begin(&c, ph, src);
		tfd_ev_next(&c, &e);
		/* (side by side: the moves' and the forms' caches are shared;
		 * the chunk's form is cap's already, none is added) */
		pthread_mutex_lock(lock);
		e.sig = moved_sig(cap, mv, e.sig);
		fold = tfd_cm_fold_into_last(impl(cap), dst, tb, &e);
		pthread_mutex_unlock(lock);
		if (fold) {
			tfd_cm_note_order(tb, dst->nevents, e.start_ns, e.dur_ns);
			p = c.p;
			start = e.start_ns;
			folded = 1;
		}
		tb->has_fold = false;
	}
	while (p < end) {
		uint8_t *q;
		const uint8_t *dur;
		const struct tfd_form *pf;
		int64_t d;
		uint64_t fi;

		if ((size_t)(p - released) > (1u << 20))
			tfd_pages_release(&released, p, 1u << 20);
		start = (int64_t)((uint64_t)start + (uint64_t)tfd_ev_unzig(tfd_ev_varint(&p)));
		dur = p;
		d = tfd_ev_unzig(tfd_ev_varint(&p));
		tfd_cm_note_order(tb, dst->nevents++, start, d);
		if (dst->evlen + EV_MAXLEN > tb->cap) {
			tb->cap += tb->cap / 2 + EV_MAXLEN;
			dst->evbuf = xrealloc(dst->evbuf, tb->cap);
		}
		off = dst->evlen;
		prev = tb->last_start;
		q = dst->evbuf + dst->evlen;
		q = tfd_ev_put_varint(q, tfd_ev_zig(start_delta(start, tb->last_start)));
		tb->last_start = start;
		memcpy(q, dur, (size_t)(p - dur));
		q += p - dur;
		fi = tfd_ev_varint(&p);
		pf = &ph->tab->form[fi];
		q = tfd_ev_put_varint(q, map[fi]);
		if (pf->how == TFD_VAL_FORM) {
			/* nothing, or the id as it is where cap gives it no form */
			q = tfd_cm_put_value(q, (enum tfd_val_how)impl(cap)->tab->form[map[fi]].how,
					     pf->val);
		} else if (pf->how == TFD_VAL_VARINT) {
			const uint8_t *v = p;

			tfd_ev_varint(&p);
			memcpy(q, v, (size_t)(p - v));
			q += p - v;
		} else if (pf->how == TFD_VAL_FIXED) {
			memcpy(q, p, 8);
			q += 8;
			p += 8;
		}
		dst->evlen = (size_t)(q - dst->evbuf);
	}
	if (off != SIZE_MAX && impl(cap)->pub.fold_exec) {
		/* the last event moved, read back with cap's tables: the next
		 * part's first may fold into it */
		struct tfd_ev_cursor c;
		struct tfd_event e;

		c.p = dst->evbuf + off;
		c.end = dst->evbuf + dst->evlen;
		c.start = prev;
		c.form = impl(cap)->tab->form;
		tfd_ev_next(&c, &e);
		tfd_cm_note_last(impl(cap), tb, &e, off, prev);
	}
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
	free(ph->markers);
	ph->markers = NULL;
	ph->nmarkers = ph->markers_cap = 0;
	for (size_t i = 0; i < ph->nfnruns; i++)
		tfd_host_fnrun(h, ph->fnruns[i].thread_id, ph->fnruns[i].id, ph->fnruns[i].start_ns,
			       ph->fnruns[i].end_ns, ph->fnruns[i].has_group, ph->fnruns[i].group);
	free(ph->fnruns);
	ph->fnruns = NULL;
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
};

struct absorb_part {
	struct tfd_host *ph;
	struct sig_moves mv;
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
		ap->map[f] = moved_form(cap, &ap->mv, &ph->tab->form[f]);
	for (size_t t = 0; t < ph->nthreads; t++) {
		struct tfd_thread *src = &ph->threads[t];
		uint32_t idx = tfd_host_thread(cap, h, src->id, src->name);
		struct host_build *b = tfd_cm_build_of(cap, h);

		tfd_cm_cap_cover(b, h, idx);
		tfd_cm_pack_all_held(impl(cap), h, &h->threads[idx], &b->tb[idx]);
		h->threads[idx].kinds |= src->kinds;
		vec_push(&ab->moves, ((struct absorb_move){ab->nparts, (uint32_t)t, idx}));
	}
	ab->nparts++;
}

/* Every part's events of one of h's threads, in part order. */
static bool absorb_thread(void *ctx, size_t worker, size_t t)
{
	struct tfd_absorb *ab = ctx;
	struct host_build *b = tfd_cm_build_of(ab->cap, ab->h);

	(void)worker;
	for (size_t k = ab->off[t]; k < ab->off[t + 1]; k++) {
		const struct absorb_move *m = &ab->by_dst[k];
		struct absorb_part *ap = &ab->parts[m->part];
		struct tfd_thread *src = &ap->ph->threads[m->src];
		size_t folded = repack(ab->cap, ap->ph, &ap->mv, ap->map, src, &ab->h->threads[t],
				       &b->tb[t], &ab->lock);

		if (folded)
			__atomic_fetch_add(&ap->folded, folded, __ATOMIC_RELAXED);
		free(src->evbuf);
		src->evbuf = NULL;
		src->evlen = 0;
		src->nevents = 0;
	}
	return true;
}

void tfd_absorb_run(struct tfd_absorb *ab, size_t nthreads)
{
	size_t nt = ab->h->nthreads, *order;
	size_t *cost = xcalloc(nt + 1, sizeof(*cost)); /* per thread of h: the bytes moved */

	/* the moves by thread of h, each thread's in part order (a counting
	 * sort: moves are in part order) */
	ab->off = xcalloc(nt + 2, sizeof(*ab->off));
	ab->by_dst = xmalloc((ab->moves.n + 1) * sizeof(*ab->by_dst));
	for (size_t k = 0; k < ab->moves.n; k++) {
		const struct absorb_move *m = &ab->moves.v[k];

		ab->off[m->dst + 2]++;
		cost[m->dst] += ab->parts[m->part].ph->threads[m->src].evlen;
	}
	for (size_t t = 0; t < nt; t++)
		ab->off[t + 2] += ab->off[t + 1];
	for (size_t k = 0; k < ab->moves.n; k++)
		ab->by_dst[ab->off[ab->moves.v[k].dst + 1]++] = ab->moves.v[k];
	vec_free(&ab->moves);
	order = tfd_pool_costliest_first(cost, nt);
	free(cost);
	tfd_pool_run(nt, nthreads, order, false, absorb_thread, ab);
	free(order);
	for (size_t i = 0; i < ab->nparts; i++) {
		absorb_rest(ab->cap, ab->h, ab->parts[i].ph, ab->parts[i].folded);
		imap_free(&ab->parts[i].mv.done);
		free(ab->parts[i].map);
	}
	pthread_mutex_destroy(&ab->lock);
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
