/* graph_again.c - a host's iterators made again on a context of their own
 * from iterator events handed over in any order (tfd_graph_iters_begin();
 * the check of src/analysis/timelink.c makes them in time order), with the
 * scan's own lookup (graph_iters.h). */
#include <stdlib.h>
#include <string.h>

#include "graph_iters.h"
#include "tfd/err.h"

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
