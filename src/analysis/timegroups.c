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

/* The first of iterator pit's calls seen so far (by start) that starts
 * after e0, as an index in its list. */
static size_t first_after(const struct tl *t, int pit, int64_t e0)
{
	size_t lo = 0, hi = t->seen[pit].n;

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

	/* (none can reach it once every call up to one ended by its start) */
	for (size_t at = first_after(t, pit, x->e0); at-- > 0;) {
		const struct tl_seen *sc = &t->seen[pit].v[at];

		if (sc->pmax <= x->s0)
			break;
		if (tfd_span_overlap(x->s0, x->e0, sc->start, sc->end) > 0 && visit(ctx, sc))
			return sc->call;
	}
	return -1;
}

void tfd_tlg_begin(struct tl_groups *g, size_t n)
{
	memset(g, 0, sizeof(*g));
	g->uf = xmalloc((n + 1) * sizeof(*g->uf));
	g->next = xmalloc((n + 1) * sizeof(*g->next));
	g->tail = xmalloc((n + 1) * sizeof(*g->tail));
	g->last = xmalloc((n + 1) * sizeof(*g->last));
	g->ver = xcalloc(n + 1, sizeof(*g->ver));
	g->state = xcalloc(n + 1, 1);
	g->wait_of = xmalloc((n + 1) * sizeof(*g->wait_of));
	for (size_t k = 0; k < n; k++)
		g->wait_of[k] = -1;
}

void tfd_tlg_free(struct tl_groups *g)
{
	free(g->uf);
	free(g->next);
	free(g->tail);
	free(g->last);
	free(g->ver);
	free(g->state);
	free(g->wait_of);
	vec_free(&g->holds);
	vec_free(&g->heap);
	vec_free(&g->held);
	vec_free(&g->active);
}

void tfd_tlg_wait(struct tl *t, int k, int w)
{
	t->g.wait_of[k] = w;
	vec_push(&t->g.active, w);
	while (t->g.held.n <= (size_t)w)
		vec_push(&t->g.held, -1);
}

static int g_find(struct tl_groups *g, int k)
{
	int r = k;

	while (g->uf[r] != r)
		r = g->uf[r];
	while (g->uf[k] != r) {
		int up = g->uf[k];

		g->uf[k] = r;
		k = up;
	}
	return r;
}

static bool gwake_before(const struct tl_gwake *a, const struct tl_gwake *b)
{
	return a->at != b->at ? a->at < b->at : a->rep < b->rep;
}

/* Group rep (its top settled, no parent) to be tried once the stream is
 * past its last end. */
static void g_push(struct tl_groups *g, int rep)
{
	size_t i;

	vec_push(&g->heap, ((struct tl_gwake){g->last[rep], rep, ++g->ver[rep]}));
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

/* Call k, just made, ending at end: a group of its own. */
void tfd_tlg_make(struct tl *t, int k, int64_t end)
{
	struct tl_groups *g = &t->g;

	g->uf[k] = k;
	g->next[k] = -1;
	g->tail[k] = k;
	g->last[k] = end;
	if (++g->live > g->most_live) {
		g->most_live = g->live;
		g->most_live_at = t->tau;
	}
}

/* Call k's link settled on parent (-1: none, k tops its group). */
void tfd_tlg_settle(struct tl *t, int k, int parent)
{
	struct tl_groups *g = &t->g;
	int rk = g_find(g, k), rp;

	if (g->wait_of[k] >= 0) {
		/* (swap-removed from the active waits) */
		for (size_t i = 0; i < g->active.n; i++)
			if (g->active.v[i] == g->wait_of[k]) {
				g->active.v[i] = g->active.v[--g->active.n];
				break;
			}
		tfd_tlg_release(t, g->wait_of[k]);
	}
	if (parent < 0) {
		g->state[rk] = 1;
		g_push(g, rk);
		return;
	}
	rp = g_find(g, parent);
	if (g->state[rp] == 2) {
		/* it lands in a group already folded: a streaming pass would
		 * have to read the host again */
		g->late++;
		g->state[rp] = 1;
		g->groups--;
		for (int m = rp; m >= 0; m = g->next[m])
			g->live++; /* (held again) */
	}
	g->uf[rk] = rp;
	g->next[g->tail[rp]] = rk;
	g->tail[rp] = g->tail[rk];
	if (g->last[rk] > g->last[rp])
		g->last[rp] = g->last[rk];
	if (g->state[rp] == 1)
		g_push(g, rp);
}

void tfd_tlg_release(struct tl *t, int w)
{
	struct tl_groups *g = &t->g;
	int h = g->held.v[w];

	g->held.v[w] = -1;
	for (; h >= 0; h = g->holds.v[h].next)
		if (g->state[g->holds.v[h].rep] == 1)
			g_push(g, g->holds.v[h].rep); /* (due: tried at the next event) */
}

/* A group and the union-find that tells its members (g_pinned()). */
struct in_group {
	struct tl_groups *g;
	int rep;
};

static bool member(void *ctx, const struct tl_seen *c)
{
	struct in_group *ig = ctx;

	return g_find(ig->g, c->call) == ig->rep;
}

/* The wait of a call that could still land in group rep, -1: none. It
 * lands on a call of the group that took its element; while no call took
 * it, on a call of its parent iterator it overlaps (link.c's order by
 * overlap). */
static int g_pinned(struct tl *t, int rep)
{
	struct tl_groups *g = &t->g;
	struct in_group ig = {g, rep};

	for (size_t i = 0; i < g->active.n; i++) {
		const struct tl_wait *x = &t->waits.v[g->active.v[i]];

		if (x->key >= 0)
			for (int j = t->keys.v[x->key].takers; j >= 0; j = t->takers.v[j].next)
				if (g_find(g, t->takers.v[j].call) == rep)
					return g->active.v[i];
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
		int pin;

		if (w.ver != g->ver[w.rep] || g->state[w.rep] != 1 || g_find(g, w.rep) != w.rep)
			continue;
		if (!all && (pin = g_pinned(t, w.rep)) >= 0) {
			/* held for that wait: tried again at its next turn */
			vec_push(&g->holds, ((struct tl_hold){w.rep, g->held.v[pin]}));
			g->held.v[pin] = (int)g->holds.n - 1;
			continue;
		}
		g->state[w.rep] = 2;
		g->groups++;
		tfd_tlf_fold(t, w.rep);
		for (int k = w.rep; k >= 0; k = g->next[k])
			g->live--;
	}
}
