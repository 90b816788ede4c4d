/* capwalk.c - a pipeline's calls walked in the calls' order for the passes
 * after its sums (owners.c, capwindow.c): from the call table, or from the
 * host's events walked again thread by thread with no call kept (the
 * iterators made again in the scan's order: the same numbers). See
 * docs/performance.md, "The stream's own state, and the pipeline pass's
 * sums from it". */
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"

void tfd_cap_walk_begin(struct tfd_cap_walk *w, const struct tfd_cap_calls *in, bool events)
{
	memset(w, 0, sizeof(*w));
	w->in = in;
	w->events = events;
	if (events) {
		w->again = xmalloc(sizeof(*w->again));
		tfd_graph_iters_begin(w->again, in->host);
	}
}

/* The next call event of the host's, thread after thread: its iterator
 * (today's number) in *it. */
static bool next_event(struct tfd_cap_walk *w, struct tfd_event *e, int *it)
{
	const struct tfd_host *h = w->in->host;

	while (w->t < h->nthreads) {
		if (!w->open) {
			tfd_evm_begin(&w->cur, h, w->t);
			w->open = true;
		}
		while (tfd_evm_next(&w->cur, e))
			if (tfd_graph_call_event(e)) {
				*it = tfd_graph_iter_of(w->again, e);
				return true;
			}
		tfd_evm_end(&w->cur);
		w->open = false;
		w->t++;
	}
	return false;
}

bool tfd_cap_walk_next_event(struct tfd_cap_walk *w, struct tfd_cap_call *c)
{
	const struct tfd_cap_calls *in = w->in;
	struct tfd_event e;
	int it;

	/* the pipeline's: an iterator of its root's with a stage */
	while (next_event(w, &e, &it))
		if ((size_t)it < in->niters && in->iter_root[it] == in->root &&
		    in->iter_stage[it] >= 0) {
			*c = (struct tfd_cap_call){in->iter_stage[it], (uint32_t)w->t, e.start_ns,
						   e.start_ns + e.dur_ns};
			return true;
		}
	return false;
}

void tfd_cap_walk_end(struct tfd_cap_walk *w)
{
	if (w->open)
		tfd_evm_end(&w->cur);
	if (w->again) {
		tfd_graph_iters_end(w->again);
		free(w->again);
	}
	memset(w, 0, sizeof(*w));
}
