/* timegroups.c - the groups of a host's calls closed as the time-order
 * check (timelink.c) goes: what a streaming pass would fold, and forget,
 * as it reads (docs/performance.md, "Calls held in time order").
 *
 * Each call made starts a group of its own; when its link settles on a
 * parent, its group joins the parent's (a union-find forest, each group's
 * members in a list). A group whose top is settled with no parent (a root
 * iterator's call, or one linked to none) is tried once the stream is past
 * the last end of its members: no call inside one of them can still come.
 * It closes then unless a call still waiting for its link could land in
 * it: on a member that took its element (until it settles), or, while no
 * call took its element, on a member of its parent iterator it overlaps
 * (link.c's fallback by overlap). A group so held is tried again once a
 * wait settles or finds a taker. A call that lands in a group already
 * closed is counted (late): a streaming pass would have to read the host
 * again; so is a call in no closed group at the end. */
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/err.h"
#include "timelink_impl.h"

/* The first of iterator pit's calls seen so far (by start, those kept)
 * that starts after e0, as an index in its list. */
static size_t first_after(const struct tl *t, int pit, int64_t e0)
{
	size_t lo = t->seen_head[pit], hi = t->seen[pit].n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->seen[pit].v[mid].start <= e0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tfd_tl_overlapping(const struct tl *t, const struct tl_wait *x,
		       bool (*visit)(void *ctx, const struct tl_seen *c), void *ctx)
{
	int pit = x->pit;
	size_t head = t->seen_head[pit];

	if (x->snapped) {
		for (size_t i = 0; i < x->nsnap; i++)
			if (visit(ctx, &x->snap[i]))
				return x->snap[i].call;
		return -1;
	}
	/* (none can reach it once every call up to one ended by its start;
	 * the calls dropped before head all did) */
	for (size_t at = first_after(t, pit, x->e0); at-- > head;) {
		const struct tl_seen *sc = &t->seen[pit].v[at];

		if (sc->pmax <= x->s0)
			break;
		if (tfd_span_overlap(x->s0, x->e0, sc->start, sc->end) > 0 && visit(ctx, sc))
			return sc->call;
	}
	return -1;
}

void tfd_tlg_begin(struct tl_groups *g)
{
	memset(g, 0, sizeof(*g));
	g->spare_hold = -1;
}

void tfd_tlg_free(struct tl_groups *g)
{
	vec_free(&g->holds);
	vec_free(&g->heap);
	vec_free(&g->held);
	vec_free(&g->active);
}

void tfd_tlg_wait(struct tl *t, int s, int w)
{
	t->f.recs.v[s].wait = w;
	vec_push(&t->g.active, w);
	while (t->g.held.n <= (size_t)w)
		vec_push(&t->g.held, -1);
}

/* The representative of slot s's group. */
static int g_find(struct tl_rec *r, int s)
{
	int top = s;

	while (r[top].uf != top)
		top = r[top].uf;
	while (r[s].uf != top) {
		int up = r[s].uf;

		r[s].uf = top;
		s = up;
	}
	return top;
}

static bool gwake_before(const struct tl_gwake *a, const struct tl_gwake *b)
{
	return a->at != b->at ? a->at < b->at : a->rep < b->rep;
}

/* Group rep (its top settled, no parent) to be tried once the stream is
 * past its last end. */
static void g_push(struct tl *t, int rep)
{
	struct tl_groups *g = &t->g;
	struct tl_rec *r = &t->f.recs.v[rep];
	size_t i;

	vec_push(&g->heap, ((struct tl_gwake){r->last, rep, ++r->ver}));
	for (i = g->heap.n - 1; i > 0;) {
		size_t p = (i - 1) / 2;
		struct tl_gwake tmp;

		if (!gwake_before(&g->heap.v[i], &g->heap.v[p]))
			break;
		tmp = g->heap.v[i];
		g->heap.v[i] = g->heap.v[p];
		g->heap.v[p] = tmp;
		i = p;
	}
}

static struct tl_gwake g_pop(struct tl_groups *g)
{
	struct tl_gwake top = g->heap.v[0];
	size_t i = 0, n = --g->heap.n;

	g->heap.v[0] = g->heap.v[n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct tl_gwake tmp;

		if (l < n && gwake_before(&g->heap.v[l], &g->heap.v[m]))
			m = l;
		if (l + 1 < n && gwake_before(&g->heap.v[l + 1], &g->heap.v[m]))
			m = l + 1;
		if (m == i)
			break;
		tmp = g->heap.v[i];
		g->heap.v[i] = g->heap.v[m];
		g->heap.v[m] = tmp;
		i = m;
	}
	return top;
}

/* The call in slot s, just made: a group of its own. */
void tfd_tlg_make(struct tl *t, int s)
{
	struct tl_groups *g = &t->g;
	struct tl_rec *r = &t->f.recs.v[s];

	r->uf = r->tail = s;
	r->next = -1;
	r->last = r->end;
	r->state = 0;
	if (++g->live > g->most_live) {
		g->most_live = g->live;
		g->most_live_at = t->tau;
	}
}

/* The call in slot s settled on parent (a call; -1: none, it tops its
 * group). */
void tfd_tlg_settle(struct tl *t, int s, int parent)
{
	struct tl_groups *g = &t->g;
	struct tl_rec *r = t->f.recs.v;
	int rk = g_find(r, s), rp;

	if (r[s].wait >= 0) {
		/* (swap-removed from the active waits) */
		for (size_t i = 0; i < g->active.n; i++)
			if (g->active.v[i] == r[s].wait) {
				g->active.v[i] = g->active.v[--g->active.n];
				break;
			}
		tfd_tlg_release(t, r[s].wait);
		r[s].wait = -1;
	}
	rp = parent >= 0 ? tfd_tlf_slot(&t->f, parent) : -1;
	if (parent >= 0 && rp < 0) {
		/* it lands in a group already folded: a streaming pass would
		 * have to read the host again (its own group closes as a top's,
		 * its fold is off) */
		g->late++;
		parent = -1;
	}
	if (parent < 0) {
		r[rk].state = 1;
		g_push(t, rk);
		return;
	}
	rp = g_find(r, rp);
	r[rk].uf = rp;
	r[r[rp].tail].next = rk;
	r[rp].tail = r[rk].tail;
	if (r[rk].last > r[rp].last)
		r[rp].last = r[rk].last;
	if (r[rp].state == 1)
		g_push(t, rp);
}

void tfd_tlg_release(struct tl *t, int w)
{
	struct tl_groups *g = &t->g;
	int h = g->held.v[w];

	g->held.v[w] = -1;
	while (h >= 0) {
		int next = g->holds.v[h].next, rep = g->holds.v[h].rep;

		/* (a slot since reused tries its new group early: no harm, it
		 * closes only when due) */
		if (t->f.recs.v[rep].state == 1 && t->f.recs.v[rep].uf == rep)
			g_push(t, rep); /* (due: tried at the next event) */
		g->holds.v[h].next = g->spare_hold;
		g->spare_hold = h;
		h = next;
	}
}

/* A group and the records that tell its members (g_pinned()). */
struct in_group {
	struct tl *t;
	int rep;
};

static bool member(void *ctx, const struct tl_seen *c)
{
	struct in_group *ig = ctx;
	int s = tfd_tlf_slot(&ig->t->f, c->call);

	return s >= 0 && g_find(ig->t->f.recs.v, s) == ig->rep;
}

/* The wait of a call that could still land in group rep, -1: none. It
 * lands on a call of the group that took its element; while no call took
 * it, on a call of its parent iterator it overlaps (link.c's order by
 * overlap). */
static int g_pinned(struct tl *t, int rep)
{
	struct tl_groups *g = &t->g;
	struct in_group ig = {t, rep};

	for (size_t i = 0; i < g->active.n; i++) {
		const struct tl_wait *x = &t->waits.v[g->active.v[i]];

		if (x->key >= 0)
			for (int j = t->keys.v[x->key].takers; j >= 0; j = t->takers.v[j].next) {
				int s = tfd_tlf_slot(&t->f, t->takers.v[j].call);

				if (s >= 0 && g_find(t->f.recs.v, s) == rep)
					return g->active.v[i];
			}
		if (x->mode == TL_TAKER && x->best >= 0)
			continue;
		if (tfd_tl_overlapping(t, x, member, &ig) >= 0)
			return g->active.v[i];
	}
	return -1;
}

/* The groups the stream is past (every one, at its end: all) closed,
 * unless a waiting call could still land in them. */
void tfd_tlg_close_due(struct tl *t, bool all)
{
	struct tl_groups *g = &t->g;

	while (g->heap.n && (all || g->heap.v[0].at < t->tau)) {
		struct tl_gwake w = g_pop(g);
		struct tl_rec *r = &t->f.recs.v[w.rep];
		size_t m = 0;
		int pin;

		if (w.ver != r->ver || r->state != 1 || r->uf != w.rep)
			continue;
		if (!all && (pin = g_pinned(t, w.rep)) >= 0) {
			/* held for that wait: tried again at its next turn */
			struct tl_hold hd = {w.rep, g->held.v[pin]};
			int h = g->spare_hold;

			if (h >= 0) {
				g->spare_hold = g->holds.v[h].next;
				g->holds.v[h] = hd;
			} else {
				h = (int)g->holds.n;
				vec_push(&g->holds, hd);
			}
			g->held.v[pin] = h;
			continue;
		}
		r->state = 0;
		for (int k = w.rep; k >= 0; k = t->f.recs.v[k].next)
			m++;
		g->groups += tfd_tlf_fold(t, w.rep);
		g->live -= m;
	}
}
