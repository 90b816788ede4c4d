/* hostgraph.c - a host's graph: its iterators and calls, as the analysis
 * has always made it; or (analyze --low-memory, memory short for its
 * plane, TFDOCTOR_STREAM=1) its iterators alone and the sums of a stream
 * over its events in time order, which its pipelines are built from (see
 * docs/performance.md, "The stream as the analysis"). */
#include <stdio.h>

#include "passes.h"
#include "tfd/graph.h"

/* c's pipelines built from its stream's sums (c->stream), its root walks
 * reading the pass before's root calls. */
void tfd_build_from_stream(struct host_ctx *c)
{
	c->from_stream = true;
	c->root_list = c->stream->roots.v;
	c->nroot_list = c->stream->roots.n;
}

/* The calls of c's iterators. */
size_t tfd_graph_calls(const struct host_ctx *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->iters.n; i++)
		n += c->iters.v[i].ncalls;
	return n;
}

/* Root iterators with calls past which --low-memory leaves a host to the
 * call table. Each pipeline's capacity pass walked the host's events
 * again (a TF1 capture of 745 pipelines took 12-14 s against 0.2 s); its
 * threads' owners are now counted instead where each thread works for
 * one (owners.c), and the rest of the walks (step gaps, several maps)
 * are rarer, but such a host's stream saves no memory: that TF1 capture
 * peaks at 25-26 MB through the stream against 24 MB through the table,
 * in 0.27 s against 0.20 s. */
#define STREAM_MAX_PIPELINES 32

/* Produce and Consume events per call past which --low-memory leaves a
 * host to the call table: the stream keeps a key per element taken (about
 * 100 bytes with its table, for as long as it runs: 14.7 MB on a
 * tf.data-heavy capture of 310,545 calls) where the table keeps about 12
 * bytes a call; an iterator-dense host has a few elements per hundred
 * calls. */
#define STREAM_MAX_ELEMENT_EVENTS_PER_CALL 0.125

/* Why the stream is not tried on c (its iterators alone; the hook tries it
 * on every host): NULL, it is. */
static const char *stream_refused(const struct host_ctx *c, bool hook)
{
	size_t n = 0;

	if (hook)
		return NULL;
	for (size_t i = 0; i < c->iters.n; i++)
		n += c->iters.v[i].ncalls && c->root[i] == (int)i;
	if (n > STREAM_MAX_PIPELINES)
		return "too many pipelines";
	if ((double)c->h->nproduce >
	    STREAM_MAX_ELEMENT_EVENTS_PER_CALL * (double)tfd_graph_calls(c))
		return "more elements than its calls would hold";
	return NULL;
}

/* Host h's graph into c: its iterators and calls, as today; or (--low-
 * memory, TFDOCTOR_STREAM=1; not with the checks, which compare the stream
 * with the call table) its iterators alone, and the pipelines built from
 * the sums of a stream over its events in time order (c->from_stream),
 * where the stream holds; where it does not, today's graph (and, under
 * the hook, a line on stderr saying why). */
enum tfd_status tfd_host_graph(struct host_ctx *c, const struct tfd_host *h, struct tfd_host *lean,
			       const struct tfd_analyze_opts *opts, size_t *by_name,
			       size_t *orphans, struct tfd_err *err)
{
	bool hook = tfd_env_flag("TFDOCTOR_STREAM");
	struct tfd_prepass pp;
	const char *why;
	enum tfd_status st;

	if ((!hook && !opts->low_memory && !h->low_memory) ||
	    tfd_env_flag("TFDOCTOR_TIMELINK_CHECK") || tfd_env_flag("TFDOCTOR_INFLIGHT"))
		return tfd_graph_build(c, h, lean, by_name, orphans, err);
	st = tfd_graph_build_iters(c, h, &pp, by_name, orphans, err);
	if (!st && !(why = stream_refused(c, hook)))
		c->stream = tfd_stream_run(c, &pp, NULL, opts, &why);
	tfd_prepass_free(&pp);
	if (c->stream)
		tfd_build_from_stream(c);
	if (st || c->stream)
		return st;
	if (hook)
		fprintf(stderr, "tfdoctor: stream: %s: not used: %s\n", h->name ? h->name : "?",
			why);
	tfd_graph_release(c);
	*by_name = *orphans = 0;
	return tfd_graph_build(c, h, lean, by_name, orphans, err);
}
