/* graph_lookup.c - the scan's lookup of an event's iterator, out of line:
 * for the passes that make the iterators again (graph_again.c, the
 * stream's check, the walks of src/analysis/capwalk.c) and the scan that
 * keeps no call (graph.c's count_call()). The full scan's add_call() has
 * it inlined, its one call there (a second one had the compiler keep it
 * out of line, 3.6 M instructions more on the iterator-dense bench). */
#include "graph_iters.h"

/* (here, beside the lookup that reads them) */
const char *const tfd_param_names[3] = {"parallelism", "cycle_length", "buffer_limit"};

int tfd_graph_iter_of(struct host_ctx *c, const struct tfd_event *e)
{
	return iter_for_event(c, e);
}
