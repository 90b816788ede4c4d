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

void tfd_graph_iters_begin(struct host_ctx *c, const struct tfd_host *h)
{
	memset(c, 0, sizeof(*c));
	c->h = h;
	c->nmemo = SIG_MEMO;
	c->memo = xcalloc(c->nmemo, sizeof(*c->memo));
}

int tfd_graph_iter_of(struct host_ctx *c, const struct tfd_event *e)
{
	return iter_for_event(c, e);
}

void tfd_graph_iters_end(struct host_ctx *c)
{
	free(c->memo);
	c->memo = NULL;
	tfd_graph_release(c);
}

/* The events the threads' scan makes calls of (graph.c scan_thread()). */
static bool a_call(const struct tfd_event *e)
{
	return e->kind == TFD_EV_ITERATOR && !(e->flags & TFD_EVF_ASYNC) &&
	       e->sig->role != TFD_SIG_BARE_ITERATOR && e->sig->role != TFD_SIG_LOOP_ROOT;
}

enum tfd_status tfd_graph_prepass(struct host_ctx *c, const struct tfd_host *h,
				  struct tfd_prepass *pp, struct tfd_err *err)
{
	size_t by_name = 0, orphans = 0;
	/* per iterator: whether its long name is a root's (Iterator::X), -1
	 * not yet known */
	VEC(signed char) two = {0};

	memset(pp, 0, sizeof(*pp));
	tfd_graph_iters_begin(c, h);
	pp->thread_calls = xcalloc(h->nthreads + 1, sizeof(size_t));
	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_ev_cursor cur;
		struct tfd_event e;

		for (tfd_ev_begin(&cur, h, &h->threads[t]); tfd_ev_next(&cur, &e);) {
			struct iter *it;
			int i;

			if (!a_call(&e))
				continue;
			i = iter_for_event(c, &e);
			it = &c->iters.v[i];
			it->ncalls++;
			if (e.dur_ns > it->max_dur)
				it->max_dur = e.dur_ns;
			if (e.start_ns < it->first_start)
				it->first_start = e.start_ns;
			if (e.start_ns + e.dur_ns > it->last_end)
				it->last_end = e.start_ns + e.dur_ns;
			pp->thread_calls[t]++;
			while (two.n <= (size_t)i)
				vec_push(&two, (signed char)-1);
			if (two.v[i] < 0)
				two.v[i] = tfd_iter_parts(it->long_name) <= 2;
			if (two.v[i])
				vec_push(&pp->roots, ((struct tfd_root_call){
							 i, e.start_ns, e.start_ns + e.dur_ns}));
		}
	}
	vec_free(&two);
	free(c->memo);
	c->memo = NULL;
	return tfd_graph_resolve(c, &by_name, &orphans, err);
}

void tfd_prepass_free(struct tfd_prepass *pp)
{
	free(pp->thread_calls);
	vec_free(&pp->roots);
	memset(pp, 0, sizeof(*pp));
}
