/* capwalk.c - the host's calls, or a pipeline's, walked in the calls'
 * order for the passes that read calls one after another (owners.c,
 * capwindow.c): from the call table, or from the host's events walked
 * again thread by thread with no call kept (the iterators made again in
 * the scan's order: the same numbers). See docs/performance.md, "The
 * stream's own state, and the pipeline pass's sums from it". */
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"

void tfd_host_walk_begin(struct tfd_host_walk *w, const struct host_ctx *c, bool events)
{
	memset(w, 0, sizeof(*w));
	w->c = c;
	w->events = events;
	if (events) {
		w->again = xmalloc(sizeof(*w->again));
		tfd_graph_iters_begin(w->again, c->h);
	}
}

bool tfd_host_walk_next_event(struct tfd_host_walk *w, struct tfd_call_rec *r)
{
	const struct tfd_host *h = w->c->h;
	struct tfd_event e;

	while (w->t < h->nthreads) {
		if (!w->open) {
			tfd_evm_begin(&w->cur, h, w->t);
			w->open = true;
		}
		while (tfd_evm_next(&w->cur, &e))
			if (tfd_graph_call_event(&e)) {
				*r = (struct tfd_call_rec){tfd_graph_iter_of(w->again, &e),
							   (uint32_t)w->t, e.start_ns,
							   e.start_ns + e.dur_ns};
				return true;
			}
		tfd_evm_end(&w->cur);
		w->open = false;
		w->t++;
	}
	return false;
}

void tfd_host_walk_end(struct tfd_host_walk *w)
{
	if (w->open)
		tfd_evm_end(&w->cur);
	if (w->again) {
		tfd_graph_iters_end(w->again);
		free(w->again);
	}
	memset(w, 0, sizeof(*w));
}

void tfd_cap_walk_begin(struct tfd_cap_walk *w, const struct tfd_cap_calls *in, bool events)
{
	memset(w, 0, sizeof(*w));
	w->in = in;
	w->events = events;
	if (events)
		tfd_host_walk_begin(&w->hw, in->hc, true);
}

bool tfd_cap_walk_next_event(struct tfd_cap_walk *w, struct tfd_cap_call *c)
{
	const struct tfd_cap_calls *in = w->in;
	struct tfd_call_rec r;

	/* the pipeline's: an iterator of its root's with a stage */
	while (tfd_host_walk_next_event(&w->hw, &r))
		if ((size_t)r.iter < in->niters && in->iter_root[r.iter] == in->root &&
		    in->iter_stage[r.iter] >= 0) {
			*c =
			    (struct tfd_cap_call){in->iter_stage[r.iter], r.thread, r.start, r.end};
			return true;
		}
	return false;
}

void tfd_cap_walk_end(struct tfd_cap_walk *w)
{
	if (w->events)
		tfd_host_walk_end(&w->hw);
	memset(w, 0, sizeof(*w));
}
