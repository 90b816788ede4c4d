/* graph_again.c - a host's iterators made again on a context of their own,
 * with the scan's own lookup (graph_iters.h): from iterator events handed
 * over in any order (tfd_graph_iters_begin(); the check of
 * src/analysis/timelink.c makes them in time order), or thread by thread
 * with what a reader in time order must know before its stream and no
 * call kept (tfd_graph_prepass()). */
#include <stdlib.h>
#include <string.h>

#include "graph_iters.h"
#include "tfd/err.h"
#include "tfd/families.h"
#include "tfd/imap.h"

void tfd_graph_iters_begin(struct host_ctx *c, const struct tfd_host *h)
{
	memset(c, 0, sizeof(*c));
	c->h = h;
	c->nmemo = SIG_MEMO;
	c->memo = xcalloc(c->nmemo, sizeof(*c->memo));
}

void tfd_graph_iters_end(struct host_ctx *c)
{
	free(c->memo);
	c->memo = NULL;
	tfd_graph_release(c);
}

/* What the pass before keeps while it goes: per iterator, whether its long
 * name is a root's (Iterator::X), -1 not yet known; the (iterator, thread)
 * pairs met. */
struct prepass_state {
	root_names two;
	struct imap pairs;
};

/* One event of thread t into the pass before. */
static void prepass_event(struct host_ctx *c, struct tfd_prepass *pp, struct prepass_state *ps,
			  uint32_t t, const struct tfd_event *e)
{
	struct iter *it;
	int i;
	size_t seen;
	uint64_t pair;

	if (!tfd_graph_call_event(e))
		return;
	i = iter_for_event(c, e);
	it = &c->iters.v[i];
	iter_count_call(it, e);
	pair = (uint64_t)(uint32_t)i << 32 | t;
	if (!imap_get(&ps->pairs, pair, &seen)) {
		imap_put(&ps->pairs, pair, 1);
		vec_push(&pp->firsts, ((struct tfd_first_call){pp->thread_calls[t], t, i}));
	}
	prepass_count(c, pp, &ps->two, i, e, t);
}

enum tfd_status tfd_graph_prepass_from(struct host_ctx *c, const struct tfd_host *h,
				       const struct tfd_event_source *src, struct tfd_prepass *pp,
				       struct tfd_err *err)
{
	size_t by_name = 0, orphans = 0;
	struct prepass_state ps;
	struct tfd_event e;
	uint32_t t;

	memset(pp, 0, sizeof(*pp));
	memset(&ps, 0, sizeof(ps));
	tfd_graph_iters_begin(c, h);
	pp->thread_calls = xcalloc(h->nthreads + 1, sizeof(size_t));
	while (src->next(src->ctx, &t, &e))
		if (t < h->nthreads)
			prepass_event(c, pp, &ps, t, &e);
	vec_free(&ps.two);
	imap_free(&ps.pairs);
	free(c->memo);
	c->memo = NULL;
	return tfd_graph_resolve(c, &by_name, &orphans, err);
}

/* The events, thread after thread (those left in the file read there). */
struct packed_src {
	const struct tfd_host *h;
	uint32_t t;
	bool begun;
	struct tfd_ev_mcursor cur;
};

static bool packed_next(void *ctx, uint32_t *thread, struct tfd_event *e)
{
	struct packed_src *ps = ctx;

	while (ps->t < ps->h->nthreads) {
		if (!ps->begun) {
			tfd_evm_begin(&ps->cur, ps->h, ps->t);
			ps->begun = true;
		}
		if (tfd_evm_next(&ps->cur, e)) {
			*thread = ps->t;
			return true;
		}
		tfd_evm_end(&ps->cur);
		ps->t++;
		ps->begun = false;
	}
	return false;
}

enum tfd_status tfd_graph_prepass(struct host_ctx *c, const struct tfd_host *h,
				  struct tfd_prepass *pp, struct tfd_err *err)
{
	struct packed_src ps = {.h = h};
	struct tfd_event_source src = {&ps, packed_next};

	return tfd_graph_prepass_from(c, h, &src, pp, err);
}

const char *tfd_prepass_differs(const struct host_ctx *a, const struct tfd_prepass *pa,
				const struct host_ctx *b, const struct tfd_prepass *pb)
{
	if (a->iters.n != b->iters.n)
		return "iterators";
	for (size_t i = 0; i < a->iters.n; i++) {
		const struct iter *x = &a->iters.v[i], *y = &b->iters.v[i];

		if (x->id != y->id || strcmp(x->long_name, y->long_name) != 0 ||
		    x->parent != y->parent || x->ncalls != y->ncalls ||
		    x->first_start != y->first_start || x->last_end != y->last_end ||
		    x->max_dur != y->max_dur || x->absent != y->absent)
			return "an iterator";
		if (a->root[i] != b->root[i])
			return "a root";
	}
	for (size_t t = 0; t < a->h->nthreads; t++)
		if (pa->thread_calls[t] != pb->thread_calls[t])
			return "a thread's calls";
	if (pa->roots.n != pb->roots.n)
		return "the root calls";
	for (size_t r = 0; r < pa->roots.n; r++)
		if (pa->roots.v[r].iter != pb->roots.v[r].iter ||
		    pa->roots.v[r].start_ns != pb->roots.v[r].start_ns ||
		    pa->roots.v[r].end_ns != pb->roots.v[r].end_ns)
			return "a root call";
	if (pa->firsts.n != pb->firsts.n)
		return "the iterators' first calls on their threads";
	for (size_t f = 0; f < pa->firsts.n; f++)
		if (pa->firsts.v[f].rank != pb->firsts.v[f].rank ||
		    pa->firsts.v[f].thread != pb->firsts.v[f].thread ||
		    pa->firsts.v[f].iter != pb->firsts.v[f].iter)
			return "an iterator's first call on a thread";
	return NULL;
}

void tfd_prepass_free(struct tfd_prepass *pp)
{
	free(pp->thread_calls);
	vec_free(&pp->roots);
	vec_free(&pp->firsts);
	memset(pp, 0, sizeof(*pp));
}
