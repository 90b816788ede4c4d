/* timelink.c - a host's calls made and linked in time order, checked
 * against the link pass (TFDOCTOR_TIMELINK_CHECK=1; see
 * docs/performance.md, "Calls held in time order").
 *
 * Today a host's calls are made thread by thread, then linked with every
 * call at hand. A reader that merged the host's lines by time could make
 * and link each call as it comes and forget it once folded, if every link
 * can be settled from what the stream has shown so far. Here the host's
 * threads are merged by start time (each thread's own order kept), each
 * call gets the number today's scan gives it (its thread's first number
 * plus its rank on the thread: the counts a pass before the stream would
 * make), and each link is settled at the first instant the stream can
 * know it final:
 *   - a root iterator's call, or a call inside another on its thread: at
 *     its start;
 *   - a call inside a Produce event: among the parent iterator's calls
 *     that took its element (a Consume inside them), the one with the most
 *     overlap, then the earliest start, then the lowest number (link.c's
 *     order). With a taker B known, no call that starts after
 *     max(its end, B's start) can beat B; once every call of the parent
 *     iterator that started by then has ended, all their Consume events
 *     have been read. Without a taker, it waits for the parent iterator's
 *     last call to end (a count the pass before makes), then is linked by
 *     overlap;
 *   - any other call: by overlap with the parent iterator's calls, once
 *     the stream is past its end (every call that could overlap it has
 *     started).
 * The links so settled are compared with the link pass's, call by call;
 * a line on stderr says whether they agree and how many calls waited at
 * once. The stream's own state is bounded by what is open, not by the
 * calls read: a call's record (struct tl_rec, timefold.c) lives in a slot
 * from its start until its group folds, found by its number in a map of
 * the live calls; a wait's slot is given back as it settles; an
 * iterator's calls seen are dropped once no waiting call, nor one to
 * come, can overlap them. What still grows with the capture: the keys
 * and takers of the elements taken (state_bytes() counts them apart),
 * and the per-call arrays the check compares with the link pass. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attrib.h"
#include "passes.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/vec.h"
#include "timelink_impl.h"

static bool tl_earlier(const struct tl *t, int a, int b)
{
	const struct tfd_event *x = &t->th[a].ev, *y = &t->th[b].ev;

	return x->start_ns != y->start_ns ? x->start_ns < y->start_ns : a < b;
}

static void th_sift(struct tl *t, size_t i)
{
	size_t n = t->heap.n;

	for (;;) {
		size_t l = 2 * i + 1, m = i;
		int tmp;

		if (l < n && tl_earlier(t, t->heap.v[l], t->heap.v[m]))
			m = l;
		if (l + 1 < n && tl_earlier(t, t->heap.v[l + 1], t->heap.v[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = t->heap.v[i];
		t->heap.v[i] = t->heap.v[m];
		t->heap.v[m] = tmp;
		i = m;
	}
}

/* The events graph.c's scan reads: iterator calls (not async, not the
 * bare iterator's nor a loop's own root), Produce and Consume events. */
static bool scanned(const struct tfd_event *e)
{
	return tfd_graph_call_event(e) ||
	       ((e->kind == TFD_EV_PRODUCE || e->kind == TFD_EV_CONSUME) &&
		!(e->flags & TFD_EVF_ASYNC));
}

static bool packed_next(void *ctx, uint32_t *thread, struct tfd_event *e)
{
	*thread = 0;
	return tfd_evm_next(ctx, e);
}

static bool th_next(struct tl_thread *th)
{
	uint32_t thread;

	while (th->src.next(th->src.ctx, &thread, &th->ev))
		if (scanned(&th->ev))
			return true;
	return false;
}

/* Thread i's cursor from its start: s's over its lines in the file, or
 * its events' (the packed ones, and those the read left in the file). */
static void th_open(struct tl *t, struct tfd_source *s, size_t i)
{
	const struct tfd_host *h = t->c->h;
	struct tl_thread *th = &t->th[i];

	if (s) {
		s->open_thread(s, h, i, &th->src);
		return;
	}
	tfd_evm_begin(&th->cur, h, i);
	th->src = (struct tfd_event_source){&th->cur, packed_next};
}

/* ... done with: the events s found malformed added up */
static void th_close(struct tl *t, struct tfd_source *s, size_t i)
{
	if (s && t->th[i].src.ctx)
		t->malformed += s->close(s, &t->th[i].src);
	else if (t->th[i].src.ctx)
		tfd_evm_end(&t->th[i].cur);
	t->th[i].src.ctx = NULL;
}

/* ---- wake-ups: a heap by time ---------------------------------------- */

static bool wake_before(const struct tl *t, int a, int b)
{
	const struct tl_wait *x = &t->waits.v[a], *y = &t->waits.v[b];

	return x->until != y->until ? x->until < y->until : a < b;
}

static void wake_set(struct tl *t, size_t i, int w)
{
	t->wakes.v[i] = w;
	t->waits.v[w].hpos = (int)i;
}

static void wake_up(struct tl *t, size_t i)
{
	int w = t->wakes.v[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (!wake_before(t, w, t->wakes.v[p]))
			break;
		wake_set(t, i, t->wakes.v[p]);
		i = p;
	}
	wake_set(t, i, w);
}

static void wake_down(struct tl *t, size_t i)
{
	size_t n = t->wakes.n;
	int w = t->wakes.v[i];

	for (;;) {
		size_t l = 2 * i + 1, m = l;

		if (l >= n)
			break;
		if (l + 1 < n && wake_before(t, t->wakes.v[l + 1], t->wakes.v[l]))
			m = l + 1;
		if (!wake_before(t, t->wakes.v[m], w))
			break;
		wake_set(t, i, t->wakes.v[m]);
		i = m;
	}
	wake_set(t, i, w);
}

/* Wait w due at until: in the heap, or moved in it. */
static void wake_push(struct tl *t, int w, int64_t until)
{
	struct tl_wait *x = &t->waits.v[w];

	x->until = until;
	if (x->hpos < 0) {
		vec_push(&t->wakes, w);
		x->hpos = (int)t->wakes.n - 1;
	}
	wake_up(t, (size_t)x->hpos);
	wake_down(t, (size_t)t->waits.v[w].hpos);
}

static int wake_pop(struct tl *t)
{
	int top = t->wakes.v[0];
	int last = t->wakes.v[--t->wakes.n];

	t->waits.v[top].hpos = -1;
	if (t->wakes.n) {
		wake_set(t, 0, last);
		wake_down(t, 0);
	}
	return top;
}

/* The key of (iter, elem), made when make. */
static int key_of(struct tl *t, int iter, uint64_t elem, bool make)
{
	size_t head;
	int k = imap_get(&t->by_elem, elem, &head) ? (int)head : -1, first = k;

	for (; k >= 0; k = t->keys.v[k].next)
		if (t->keys.v[k].iter == iter)
			return k;
	if (!make)
		return -1;
	vec_push(&t->keys, ((struct tl_key){iter, elem, -1, -1, first, -1, 0}));
	imap_put(&t->by_elem, elem, t->keys.n - 1);
	return (int)t->keys.n - 1;
}

static void settle(struct tl *t, int call, int parent, enum tfd_link_kind link)
{
	int s = tfd_tlf_slot(&t->f, call), w;

	if (t->made) { /* (the check's) */
		t->parent[call] = parent;
		t->link[call] = (unsigned char)link;
		t->made[call] |= 2;
	}
	/* (a call not settled is live: its group cannot close before) */
	t->f.recs.v[s].parent = parent;
	t->f.recs.v[s].link = (unsigned char)link;
	w = t->f.recs.v[s].wait;
	tfd_tlg_settle(t, s, parent);
	if (w >= 0) {
		/* its wait's slot given back, out of its element's list */
		struct tl_wait *x = &t->waits.v[w];

		if (x->key >= 0) {
			int *at = &t->keys.v[x->key].waiting;

			while (*at >= 0 && *at != w)
				at = &t->waits.v[*at].next;
			if (*at == w)
				*at = x->next;
		}
		x->done = true;
		t->seen_live -= x->nsnap;
		free(x->snap);
		x->snap = NULL;
		x->nsnap = 0;
		vec_push(&t->spare_waits, w);
	}
}

/* Wait w (a taker found) until no call that started by max(its end, the
 * taker's start) can still take the element. */
static void wait_taker(struct tl *t, int w)
{
	struct tl_wait *x = &t->waits.v[w];

	x->settled = false;
	wake_push(t, w, x->e0 > x->bs ? x->e0 : x->bs);
}

/* Call k of [s0, e0), of iterator pit's child, waits for its link. */
static void wait_new(struct tl *t, int k, int64_t s0, int64_t e0, int pit, bool produced,
		     uint64_t elem)
{
	struct tl_wait x = {.call = k,
			    .pit = pit,
			    .s0 = s0,
			    .e0 = e0,
			    .elem = elem,
			    .mode = produced ? TL_TAKER : TL_OVERLAP,
			    .best = -1,
			    .next = -1,
			    .key = -1,
			    .taken_at = INT64_MAX,
			    .hpos = -1};
	int w;

	if (t->spare_waits.n) {
		w = t->spare_waits.v[--t->spare_waits.n];
	} else {
		w = (int)t->waits.n;
		vec_push(&t->waits, x);
	}
	t->waited++;
	if (++t->open > t->most_open)
		t->most_open = t->open;
	tfd_tlg_wait(t, tfd_tlf_slot(&t->f, k), w);
	if (produced) {
		int key = key_of(t, pit, elem, true);

		const struct tl_key *ky = &t->keys.v[key];

		for (int j = ky->takers; j >= 0; j = t->takers.v[j].next) {
			const struct tl_taker *tk = &t->takers.v[j];

			if (tfd_span_better(s0, e0, tk->call, tk->s, tk->e, x.best, x.bs, x.be)) {
				x.best = tk->call;
				x.bs = tk->s;
				x.be = tk->e;
			}
		}
		/* (a taker dropped as its group folded, which it overlaps not
		 * at all, as an instant: it lands there, late) */
		if (ky->gone >= 0 &&
		    tfd_span_better(s0, e0, ky->gone, ky->gone_s, ky->gone_s, x.best, x.bs, x.be)) {
			x.best = ky->gone;
			x.bs = x.be = ky->gone_s;
		}
		if (x.best >= 0)
			x.taken_at = t->tau;
		x.key = key;
		x.next = t->keys.v[key].waiting;
		t->keys.v[key].waiting = w;
	}
	t->waits.v[w] = x;
	if (!produced)
		wake_push(t, w, e0);
	else if (x.best >= 0)
		wait_taker(t, w);
	else /* none may come before the parent iterator's last call ends */
		wake_push(t, w, t->pre->iters.v[pit].last_end);
}

/* Call k of [s, e), of iterator it, took element elem: the calls waiting
 * for it see a new taker. */
static void taker(struct tl *t, int k, int64_t s, int64_t e, int it, uint64_t elem)
{
	int key = key_of(t, it, elem, true), j = t->spare_taker;
	struct tl_rec *r = &t->f.recs.v[tfd_tlf_slot(&t->f, k)];
	struct tl_taker tk = {k, t->keys.v[key].takers, key, r->takes, s, e};

	if (j >= 0) {
		t->spare_taker = t->takers.v[j].next;
		t->takers.v[j] = tk;
	} else {
		j = (int)t->takers.n;
		vec_push(&t->takers, tk);
	}
	t->keys.v[key].takers = j;
	r->takes = j;
	for (int w = t->keys.v[key].waiting; w >= 0; w = t->waits.v[w].next) {
		struct tl_wait *x = &t->waits.v[w];

		if (x->mode != TL_TAKER || x->done ||
		    !tfd_span_better(x->s0, x->e0, k, s, e, x->best, x->bs, x->be))
			continue;
		if (x->best < 0) {
			x->taken_at = t->tau;
			tfd_tlg_release(t, w); /* (it lands on a taker now) */
		}
		x->best = k;
		x->bs = s;
		x->be = e;
		if (!x->settled)
			wait_taker(t, w);
	}
}

/* The best so far of the calls a waiting call overlaps (best_overlap()). */
struct overlap_best {
	const struct tl_wait *x;
	const struct tl_seen *best;
};

static bool better(void *ctx, const struct tl_seen *c)
{
	struct overlap_best *ob = ctx;
	const struct tl_seen *b = ob->best;

	if (!b || tfd_span_better(ob->x->s0, ob->x->e0, c->call, c->start, c->end, b->call,
				  b->start, b->end))
		ob->best = c;
	return false;
}

/* The best call of its parent iterator waiting call x overlaps, -1: none. */
static int best_overlap(const struct tl *t, const struct tl_wait *x)
{
	struct overlap_best ob = {x, NULL};

	(void)tfd_tl_overlapping(t, x, better, &ob);
	return ob.best ? ob.best->call : -1;
}

/* Wait w's time has come (the stream is past it, or at its end). */
static void wake(struct tl *t, int w)
{
	struct tl_wait *x = &t->waits.v[w];
	int b;

	if (x->mode == TL_TAKER && x->best < 0) {
		/* no taker by the parent iterator's last call: by overlap,
		 * once the stream is past its end (link.c's pending calls) */
		x->mode = TL_OVERLAP;
		x->untaken = true;
		t->untaken++;
		wake_push(t, w, x->e0);
		return;
	}
	if (x->mode == TL_TAKER && !x->settled) {
		/* every call of the parent iterator that could beat the taker
		 * has started: its Consume events are read by the latest end */
		x->settled = true;
		wake_push(t, w, t->maxend[x->pit]);
		return;
	}
	if (x->mode == TL_TAKER) {
		settle(t, x->call, x->best, TFD_LINK_PRODUCE);
	} else {
		b = best_overlap(t, x);
		t->untaken_linked += x->untaken && b >= 0;
		settle(t, x->call, b, b >= 0 ? TFD_LINK_OVERLAP : TFD_LINK_NONE);
	}
	t->open--;
}

/* The wake-ups due before the stream's time (all of them at its end). */
static void wake_due(struct tl *t, bool all)
{
	while (t->wakes.n && (all || t->waits.v[t->wakes.v[0]].until < t->tau))
		wake(t, wake_pop(t));
}

/* A waiting call's candidate parents (its parent iterator's calls it
 * overlaps), copied out one by one in a walk's order. */
static bool snap_one(void *ctx, const struct tl_seen *c)
{
	struct tl_wait *x = ctx;

	x->snap = xrealloc(x->snap, (x->nsnap + 1) * sizeof(*x->snap));
	x->snap[x->nsnap++] = *c;
	return false;
}

/* Iterator it's calls seen that no waiting call, nor one to come, can
 * overlap, dropped: those before the first whose latest end so far (pmax)
 * is after the stream's time (a call to come starts at or after it) or
 * the start of a waiting call that may yet be linked by overlap to one of
 * it (a call of its child iterator, with no taker of its element). A
 * walk back for a waiting call stops at the first of them it meets
 * (tfd_tl_overlapping()). A waiting call past its end gets its own copy
 * of its candidates instead (snap_one()): they are final. Called as the
 * list doubles since the last drop: a pass over the waits each time. */
static void seen_drop(struct tl *t, int it)
{
	int64_t bound = t->tau;
	size_t h = t->seen_head[it], n = t->seen[it].n;

	for (size_t i = 0; i < t->g.active.n; i++) {
		struct tl_wait *x = &t->waits.v[t->g.active.v[i]];

		if (x->pit != it || (x->mode == TL_TAKER && x->best >= 0) || x->snapped)
			continue;
		if (x->e0 < t->tau) {
			/* (every call it overlaps has started: copied out) */
			(void)tfd_tl_overlapping(t, x, snap_one, x);
			x->snapped = true;
			t->seen_live += x->nsnap;
			if (t->seen_live > t->seen_most)
				t->seen_most = t->seen_live;
			continue;
		}
		if (x->s0 < bound)
			bound = x->s0;
	}
	while (h < n && t->seen[it].v[h].pmax <= bound)
		h++;
	t->seen_live -= h - t->seen_head[it];
	if (h > n / 2) {
		/* (moved down: the list holds what is kept) */
		memmove(t->seen[it].v, t->seen[it].v + h, (n - h) * sizeof(*t->seen[it].v));
		t->seen[it].n = n - h;
		h = 0;
	}
	t->seen_head[it] = h;
	t->seen_kept[it] = t->seen[it].n - h;
}

/* Which of today's iterators (the pass before's) the call at rank r of
 * thread i is, e being its event: the one the stream makes or finds for
 * it (as it meets the calls, with the scan's lookup), known by its first
 * call on a thread (the pass before's list); -1 when the two disagree. */
static int iterator_of(struct tl *t, size_t i, size_t r, const struct tfd_event *e)
{
	int a = tfd_graph_iter_of(&t->again, e), it = -1;
	const struct tfd_prepass *pp = &t->pp;
	size_t *f = &t->first_at[i];

	if ((size_t)a >= t->nagain) {
		size_t n = 2 * (size_t)a + 16;

		t->from_again = xrealloc(t->from_again, n * sizeof(int));
		for (size_t j = t->nagain; j < n; j++)
			t->from_again[j] = -1;
		t->nagain = n;
	}
	if (*f < pp->firsts.n && pp->firsts.v[*f].thread == i && pp->firsts.v[*f].rank == r) {
		it = pp->firsts.v[(*f)++].iter;
		if (t->from_again[a] < 0)
			t->from_again[a] = it;
		else if (t->from_again[a] != it)
			return -1;
		return it;
	}
	return t->from_again[a];
}

/* Call k of iterator it, on thread i, of [s, e), made: its record, its
 * group, its rank among its root iterator's calls (a root call), and its
 * place among its iterator's calls seen. */
static void make_call(struct tl *t, int k, size_t i, int it, int64_t s, int64_t e)
{
	int slot = tfd_tlf_make(&t->f, k, s, e, it);
	int64_t pmax = t->seen[it].n ? t->seen[it].v[t->seen[it].n - 1].pmax : e;

	tfd_tlg_make(t, slot);
	t->f.recs.v[slot].thread = (uint32_t)i;
	if (t->pre->iters.v[it].parent < 0)
		t->f.recs.v[slot].rank = tfd_tls_rank(t, it, s, e);
	vec_push(&t->seen[it], ((struct tl_seen){s, e, pmax > e ? pmax : e, k}));
	if (++t->seen_live > t->seen_most)
		t->seen_most = t->seen_live;
	if (t->seen[it].n - t->seen_head[it] >= 2 * t->seen_kept[it] + 64)
		seen_drop(t, it);
	if (e > t->maxend[it])
		t->maxend[it] = e;
	if (e > t->last_end)
		t->last_end = e;
}

/* The check's: whether call k (on thread i, its event e, *it its
 * iterator as the stream knows it) is the scan's call k, its iterator
 * then the scan's (a different one counted). */
static bool scan_call(struct tl *t, size_t k, size_t i, const struct tfd_event *e, int *it)
{
	const struct host_ctx *c = t->c;

	if (k >= c->calls.n || call_thread(c, k) != i || call_start(c, k) != e->start_ns ||
	    call_end(c, k) != e->start_ns + e->dur_ns || (t->made[k] & 1))
		return false;
	if (*it != call_iter(c, k)) {
		t->iter_differ++;
		*it = call_iter(c, k);
	}
	t->made[k] |= 1;
	return true;
}

/* One event of thread i, read in time order. */
static void step(struct tl *t, size_t i)
{
	struct tl_thread *th = &t->th[i];
	const struct tfd_event *e = &th->ev;
	int64_t end = e->start_ns + e->dur_ns;
	const struct tl_open *top = NULL;

	if (e->start_ns < t->tau)
		t->out_of_order++;
	else
		t->tau = e->start_ns;
	wake_due(t, false);
	tfd_tlg_close_due(t, false);
	while (th->stack.n && !(th->stack.v[th->stack.n - 1].start <= e->start_ns &&
				end <= th->stack.v[th->stack.n - 1].end))
		th->stack.n--;
	if (th->stack.n)
		top = &th->stack.v[th->stack.n - 1];
	if (e->kind == TFD_EV_ITERATOR) {
		size_t k = th->off + th->rank++;
		int it, pit;

		it = iterator_of(t, i, th->rank - 1, e);
		if (t->made ? !scan_call(t, k, i, e, &it) : th->rank > t->pp.thread_calls[i]) {
			t->numbering++;
			return;
		}
		if (it < 0) {
			t->iter_differ++;
			return;
		}
		pit = t->pre->iters.v[it].parent;
		make_call(t, (int)k, i, it, e->start_ns, end);
		if (pit < 0)
			settle(t, (int)k, -1, TFD_LINK_NONE);
		else if (top && top->call >= 0)
			settle(t, (int)k, top->call, TFD_LINK_SYNC);
		else
			wait_new(t, (int)k, e->start_ns, end, pit, top && top->element,
				 top ? top->elem : 0);
		vec_push(&th->stack, ((struct tl_open){e->start_ns, end, 0, (int)k, it, false}));
	} else if (e->kind == TFD_EV_CONSUME) {
		if (top && top->call >= 0 && (e->flags & TFD_EVF_ELEMENT))
			taker(t, top->call, top->start, top->end, top->iter, e->element_id);
	} else {
		vec_push(&th->stack, ((struct tl_open){e->start_ns, end, e->element_id, -1, -1,
						       (e->flags & TFD_EVF_ELEMENT) != 0}));
	}
}

static double seconds(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void tl_free(struct tl *t)
{
	for (size_t i = 0; i < t->nth; i++)
		vec_free(&t->th[i].stack);
	for (size_t i = 0; t->seen && i < t->pre->iters.n; i++)
		vec_free(&t->seen[i]);
	free(t->th);
	free(t->seen);
	free(t->seen_head);
	free(t->seen_kept);
	free(t->maxend);
	free(t->parent);
	free(t->link);
	free(t->made);
	vec_free(&t->heap);
	vec_free(&t->wakes);
	for (size_t w = 0; w < t->waits.n; w++)
		free(t->waits.v[w].snap);
	vec_free(&t->waits);
	vec_free(&t->spare_waits);
	vec_free(&t->keys);
	vec_free(&t->takers);
	imap_free(&t->by_elem);
	free(t->from_again);
	free(t->first_at);
	tfd_graph_iters_end(&t->again);
	tfd_tls_free(t); /* (reads the pass before's count of iterators) */
	tfd_prepass_free(&t->pp);
	tfd_graph_release(&t->pre_own);
	tfd_tlg_free(&t->g);
	tfd_tlf_free(&t->f);
}

/* What the stream's own state came to at most (its tables' room at the
 * end: none gives any back), apart from what grows with the elements
 * taken (their keys and takers), the waiting calls' copies of their
 * candidates (counted among the calls seen kept) and the per-call arrays
 * of the check. */
static void state_bytes(const struct tl *t, struct tfd_timelink *out)
{
	size_t b = 0, seen = 0;

	for (size_t i = 0; i < t->nth; i++)
		b += t->th[i].stack.cap * sizeof(struct tl_open);
	b += t->nth * sizeof(struct tl_thread) + t->heap.cap * sizeof(int);
	for (size_t i = 0; i < t->pre->iters.n; i++)
		seen += t->seen[i].cap;
	b += seen * sizeof(struct tl_seen);
	b += t->pre->iters.n * (sizeof(*t->seen) + 2 * sizeof(size_t) + sizeof(int64_t));
	b += t->wakes.cap * sizeof(int) + t->waits.cap * sizeof(struct tl_wait) +
	     t->spare_waits.cap * sizeof(int);
	b += t->g.heap.cap * sizeof(struct tl_gwake) + t->g.active.cap * sizeof(int) +
	     t->g.held.cap * sizeof(int) + t->g.holds.cap * sizeof(struct tl_hold);
	b += t->f.recs.cap * sizeof(struct tl_rec) + t->f.spare.cap * sizeof(int) +
	     t->f.slot.cap * 2 * sizeof(int);
	b += (t->f.mem.cap + t->f.par.cap + t->f.depth.cap + t->f.top.cap) * sizeof(int) +
	     (t->f.st.cap + t->f.en.cap + t->f.order.cap) * sizeof(int64_t);
	out->state_bytes = b;
	out->seen_most = t->seen_most;
	out->keys_bytes = t->keys.cap * sizeof(struct tl_key) +
			  t->takers.cap * sizeof(struct tl_taker) +
			  t->by_elem.cap * sizeof(struct imap_slot);
}

/* What the pass before gives besides the iterators, as the scan's calls
 * have it: each thread's count of calls, the calls of root iterators in
 * the calls' order (tfd_root_walk's). */
static void scan_prepass(const struct host_ctx *c, struct tfd_prepass *pp)
{
	struct imap pairs = {0};
	size_t seen;
	struct tfd_root_walk w;
	struct tfd_root_call rc;

	memset(pp, 0, sizeof(*pp));
	pp->thread_calls = xcalloc(c->h->nthreads + 1, sizeof(size_t));
	for (size_t k = 0; k < c->calls.n; k++) {
		int i = call_iter(c, k);
		uint32_t th = call_thread(c, k);
		uint64_t pair = (uint64_t)(uint32_t)i << 32 | th;

		if (!imap_get(&pairs, pair, &seen)) {
			imap_put(&pairs, pair, 1);
			vec_push(&pp->firsts,
				 ((struct tfd_first_call){pp->thread_calls[th], th, i}));
		}
		pp->thread_calls[th]++;
	}
	imap_free(&pairs);
	/* (the walk the passes that read root calls alone read: a list of
	 * them, as the pass before's, feeds them the same) */
	for (tfd_root_walk_begin(&w, c, NULL, 0); tfd_root_walk_next(&w, &rc);)
		vec_push(&pp->roots, rc);
}

/* The pass before the stream (the stream's, t->pre and t->pp) against the
 * scan's graph (tfd_prepass_differs()): the first that differs, or NULL;
 * *nroots, the root calls. */
static const char *prepass_differs(const struct tl *t, size_t *nroots)
{
	struct tfd_prepass scan;
	const char *bad;

	scan_prepass(t->c, &scan);
	*nroots = scan.roots.n;
	bad = tfd_prepass_differs(t->c, &scan, t->pre, &t->pp);
	tfd_prepass_free(&scan);
	return bad;
}

/* Each thread's next first call of an iterator, from the pass before's
 * list (t->pp). */
static void firsts_at(struct tl *t)
{
	const struct tfd_host *h = t->c->h;

	t->first_at = xcalloc(h->nthreads + 1, sizeof(*t->first_at));
	for (size_t f = t->pp.firsts.n; f-- > 0;)
		if (t->pp.firsts.v[f].thread < h->nthreads)
			t->first_at[t->pp.firsts.v[f].thread] = f;
}

/* The pass before the stream, over src's cursor of the host's events in
 * the file (NULL: its packed events): NULL, or why it cannot be used. */
static const char *prepass(struct tl *t, struct tfd_source *src)
{
	const struct tfd_host *h = t->c->h;
	struct tfd_err err = {0};
	enum tfd_status st;

	t->pre = &t->pre_own;
	if (src) {
		struct tfd_event_source es;

		src->open(src, h, &es);
		st = tfd_graph_prepass_from(&t->pre_own, h, &es, &t->pp, &err);
		t->malformed += src->close(src, &es);
	} else {
		st = tfd_graph_prepass(&t->pre_own, h, &t->pp, &err);
	}
	if (st)
		return "failed";
	if (t->pre->iters.n != t->c->iters.n)
		return "iterators";
	firsts_at(t);
	return NULL;
}

/* The stream's state, once the pass before is in t->pre and t->pp (and
 * t->c, t->opts set): each thread's first call number from the pass
 * before's counts, its cursor (src's, NULL: its packed events) and the
 * threads' heap; how many calls the pass before counted. */
static size_t tl_begin(struct tl *t, struct tfd_source *src)
{
	const struct tfd_host *h = t->c->h;
	size_t ni = t->pre->iters.n, off = 0;

	t->nth = h->nthreads;
	t->th = xcalloc(t->nth + 1, sizeof(*t->th));
	t->seen = xcalloc(ni + 1, sizeof(*t->seen));
	t->seen_head = xcalloc(ni + 1, sizeof(*t->seen_head));
	t->seen_kept = xcalloc(ni + 1, sizeof(*t->seen_kept));
	t->maxend = xcalloc(ni + 1, sizeof(*t->maxend));
	tfd_tlg_begin(&t->g);
	tfd_tlf_begin(&t->f, ni);
	tfd_tls_begin(t);
	t->tau = t->last_end = INT64_MIN;
	t->spare_taker = -1;
	for (size_t i = 0; i < ni; i++)
		t->maxend[i] = INT64_MIN;
	tfd_graph_iters_begin(&t->again, h);
	for (size_t i = 0; i < t->nth; i++) {
		struct tl_thread *th = &t->th[i];

		th->off = off;
		off += t->pp.thread_calls[i];
		th_open(t, src, i);
		if (th_next(th))
			vec_push(&t->heap, (int)i);
		else
			th_close(t, src, i);
	}
	return off;
}

/* The stream: the threads' events merged by time, each stepped; at the
 * end every wait woken and every group closed. */
static void tl_run(struct tl *t, struct tfd_source *src)
{
	for (size_t i = t->heap.n / 2 + 1; i-- > 0;)
		th_sift(t, i);
	while (t->heap.n) {
		size_t i = (size_t)t->heap.v[0];

		step(t, i);
		if (!th_next(&t->th[i])) {
			th_close(t, src, i);
			t->heap.v[0] = t->heap.v[--t->heap.n];
		}
		if (t->heap.n)
			th_sift(t, 0);
	}
	/* the stream's end: past every call */
	if (t->last_end >= t->tau)
		t->tau = t->last_end + 1;
	wake_due(t, true);
	tfd_tlg_close_due(t, true);
}

size_t tfd_timelink(const struct host_ctx *c, struct tfd_source *src,
		    const struct tfd_analyze_opts *opts, struct tfd_timelink *out)
{
	size_t n = c->calls.n, off;
	struct tl t;
	struct timespec t0, t1;

	memset(out, 0, sizeof(*out));
	out->first = SIZE_MAX;
	out->calls = n;
	if (!n)
		return 0;
	memset(&t, 0, sizeof(t));
	t.c = c;
	t.opts = opts;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if ((out->prepass = prepass(&t, src)) != NULL) {
		tl_free(&t);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->prepass_s = seconds(&t0, &t1);
	t.parent = xmalloc(n * sizeof(*t.parent));
	t.link = xcalloc(n, 1);
	t.made = xcalloc(n, 1);
	off = tl_begin(&t, src);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	tl_run(&t, src);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	out->stream_s = seconds(&t0, &t1);
	for (size_t k = 0; k < n; k++) {
		if ((t.made[k] & 2) && t.parent[k] == c->calls.v[k].parent &&
		    t.link[k] == c->calls.v[k].link)
			continue;
		if (!out->differ++) {
			out->first = k;
			out->parent = t.made[k] & 2 ? t.parent[k] : -1;
			out->link = t.link[k];
		}
	}
	state_bytes(&t, out);
	out->counted = off;
	out->numbering = t.numbering + (off != n);
	out->out_of_order = t.out_of_order;
	out->waited = t.waited;
	out->prepass = prepass_differs(&t, &out->roots);
	out->iter_differ = t.iter_differ;
	out->iters = c->iters.n;
	out->iters_again = t.again.iters.n;
	out->most_waiting = t.most_open;
	out->untaken = t.untaken;
	out->untaken_linked = t.untaken_linked;
	out->malformed = t.malformed;
	out->groups = t.g.groups;
	out->open_most = t.g.most_live;
	out->open_most_at = t.g.most_live_at;
	out->late = t.g.late;
	/* every call made, every one folded once */
	out->unclosed = t.g.live;
	out->fold = tfd_tlf_differs(&t);
	out->fold_held = t.f.most_held;
	out->root_order = t.root_order;
	out->sums = tfd_tlf_take(&t);
	tl_free(&t);
	return out->differ + out->numbering + out->out_of_order + out->malformed + out->late +
	       out->unclosed + (out->prepass != NULL) + (out->fold != NULL) + out->root_order;
}

struct tfd_stream_sums *tfd_stream_run(const struct host_ctx *c, struct tfd_prepass *pp,
				       struct tfd_source *src, const struct tfd_analyze_opts *opts,
				       const char **why)
{
	struct tl t;
	struct tfd_stream_sums *ss = NULL;
	size_t bad;

	memset(&t, 0, sizeof(t));
	t.c = c;
	t.pre = c;
	t.opts = opts;
	t.pp = *pp; /* (handed over) */
	memset(pp, 0, sizeof(*pp));
	firsts_at(&t);
	tl_begin(&t, src);
	tl_run(&t, src);
	for (size_t i = 0; i < t.nth; i++)
		t.numbering += t.th[i].rank != t.pp.thread_calls[i];
	bad = t.numbering + t.out_of_order + t.malformed + t.g.late + t.g.live + t.root_order +
	      t.iter_differ;
	*why = t.numbering	? "a thread's calls counted otherwise"
	       : t.out_of_order ? "events out of time order"
	       : t.malformed	? "malformed events in the file"
	       : t.g.late	? "a call in a group already folded"
	       : t.g.live	? "a group never closed"
	       : t.root_order	? "a root call out of the pass before's order"
	       : t.iter_differ	? "a call of an iterator not known"
				: NULL;
	if (!bad)
		ss = tfd_tlf_take(&t);
	tl_free(&t);
	return ss;
}

void tfd_timelink_check(struct host_ctx *c, const struct tfd_analyze_opts *opts)
{
	struct tfd_timelink r;
	const char *name = c->h->name ? c->h->name : "?";
	/* the host's events read again from the file, where its reader kept
	 * what that takes (TFDOCTOR_SOURCE_CHECK=1: struct tfd_source) */
	struct tfd_source *src = c->h->source;
	const char *from = src ? "from the file: " : "";

	if (!c->calls.n)
		return;
	if (tfd_timelink(c, src, opts, &r)) {
		size_t k = r.first;

		fprintf(stderr,
			"tfdoctor: timelink: %s: %sdiffers: %zu of %zu calls (first %zu: parent %d "
			"link %u, in time order %d link %u), %zu numbered otherwise, %zu out of "
			"time order, %zu malformed; %zu calls in a group already closed, %zu in "
			"none at the end; the pass before: %s; folded as they closed: %s; %zu root "
			"calls out of the pass before's order\n",
			name, from, r.differ, r.calls, k, k < r.calls ? c->calls.v[k].parent : 0,
			k < r.calls ? (unsigned)c->calls.v[k].link : 0u, r.parent, r.link,
			r.numbering, r.out_of_order, r.malformed, r.late, r.unclosed,
			r.prepass ? r.prepass : "the scan's",
			r.fold ? r.fold : "the whole tree's sums", r.root_order);
		tfd_stream_sums_free(r.sums);
		return;
	}
	c->stream = r.sums;
	fprintf(stderr,
		"tfdoctor: timelink: %s: %s%zu calls linked in time order as by the link pass; %zu "
		"waited for a link, at most %zu at once; %zu produced elements untaken, %zu of "
		"them then linked by overlap; iterators made in time order: %zu of %zu, %zu calls "
		"under another; the pass before: %zu root calls as the scan's; closed as the "
		"stream went: %zu groups, at most %zu calls open at %lld ns, none late; folded as "
		"they closed, the sums per iterator of the whole tree, at most %zu records held; "
		"the stream's own state at most %zu bytes, %zu calls seen kept at once, the "
		"elements' keys and takers %zu bytes; the stream took %.3f s after the pass "
		"before's %.3f s\n",
		name, from, r.calls, r.waited, r.most_waiting, r.untaken, r.untaken_linked,
		r.iters_again, r.iters, r.iter_differ, r.roots, r.groups, r.open_most,
		(long long)r.open_most_at, r.fold_held, r.state_bytes, r.seen_most, r.keys_bytes,
		r.stream_s, r.prepass_s);
}
