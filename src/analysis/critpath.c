/* critpath.c - the critical path over the stage graph; the only user of
 * igraph.
 *
 * Vertices are the stages of one pipeline. Edges are the parent-stage ->
 * child-stage pairs observed between linked calls that carried blocking
 * time, plus the stage tree itself, so the root always reaches every stage.
 * The critical path is the root -> bottleneck path that carries the most
 * blocking time: a shortest path with weight -(blocking time of the edge's
 * head), solved by Bellman-Ford (no cycles in a call forest, and a negative
 * cycle makes igraph fail, in which case the plain tree path is used).
 *
 * Debian's igraph is built without thread-local state
 * (IGRAPH_THREAD_SAFE is 0), and hosts are analyzed on several threads at
 * once: every use of igraph holds igraph_mu.
 */
#include <igraph.h>
#include <pthread.h>

#include "passes.h"
#include "tfd/analysis.h"

static pthread_mutex_t igraph_mu = PTHREAD_MUTEX_INITIALIZER;

static enum tfd_status tree_path(struct tfd_pipeline *p, int target)
{
	size_t n = 0;
	int cur = target;

	while (cur >= 0 && n <= p->nstages) {
		n++;
		cur = p->stages[cur].parent;
	}
	free(p->critpath);
	p->critpath = xmalloc((n + 1) * sizeof(int));
	p->ncritpath = n;
	cur = target;
	for (size_t i = n; i-- > 0;) {
		p->critpath[i] = cur;
		cur = p->stages[cur].parent;
	}
	return TFD_OK;
}

enum tfd_status tfd_critpath_compute(struct tfd_pipeline *p, const int *edge_from,
				     const int *edge_to, size_t nedges, int target,
				     struct tfd_err *err)
{
	igraph_t g;
	igraph_vector_int_t edges, vpath;
	igraph_vector_t w;
	igraph_error_t rc;
	size_t ne = 0;
	bool ok = false;

	(void)err;
	if (target < 0 || (size_t)target >= p->nstages)
		return tfd_fail(err, TFD_E_INTERNAL, "critical path target out of range");
	pthread_mutex_lock(&igraph_mu);
	if (igraph_vector_int_init(&edges, 0) != IGRAPH_SUCCESS) {
		pthread_mutex_unlock(&igraph_mu);
		return tree_path(p, target);
	}
	igraph_vector_init(&w, 0);
	igraph_vector_int_init(&vpath, 0);
	for (size_t i = 0; i < p->nstages; i++) {
		if (p->stages[i].parent < 0)
			continue;
		igraph_vector_int_push_back(&edges, p->stages[i].parent);
		igraph_vector_int_push_back(&edges, (igraph_integer_t)i);
		igraph_vector_push_back(&w, -(double)p->stages[i].blocking_ns);
		ne++;
	}
	for (size_t i = 0; i < nedges; i++) {
		if (edge_from[i] == edge_to[i])
			continue;
		igraph_vector_int_push_back(&edges, edge_from[i]);
		igraph_vector_int_push_back(&edges, edge_to[i]);
		igraph_vector_push_back(&w, -(double)p->stages[edge_to[i]].blocking_ns);
		ne++;
	}
	rc = igraph_create(&g, &edges, (igraph_integer_t)p->nstages, IGRAPH_DIRECTED);
	if (rc == IGRAPH_SUCCESS) {
		igraph_bool_t dag = 0;

		if (igraph_is_dag(&g, &dag) == IGRAPH_SUCCESS && dag) {
			rc = igraph_get_shortest_path_bellman_ford(&g, &vpath, NULL, 0, target, &w,
								   IGRAPH_OUT);
			ok = rc == IGRAPH_SUCCESS && igraph_vector_int_size(&vpath) > 0 &&
			     VECTOR(vpath)[0] == 0;
		}
		igraph_destroy(&g);
	}
	if (ok) {
		igraph_integer_t n = igraph_vector_int_size(&vpath);

		free(p->critpath);
		p->critpath = xmalloc((size_t)n * sizeof(int));
		p->ncritpath = (size_t)n;
		for (igraph_integer_t i = 0; i < n; i++)
			p->critpath[i] = (int)VECTOR(vpath)[i];
	}
	igraph_vector_int_destroy(&edges);
	igraph_vector_int_destroy(&vpath);
	igraph_vector_destroy(&w);
	pthread_mutex_unlock(&igraph_mu);
	(void)ne;
	return ok ? TFD_OK : tree_path(p, target);
}
