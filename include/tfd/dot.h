/* dot.h - the pipeline graph as Graphviz (cgraph), rendered in-process by gvc.
 *
 * One node per stage labelled with its name, calls, total and self time and
 * share of blocking time; critical-path nodes bold, the bottleneck red, the
 * rest dashed gray; edges whose child runs on another thread (async) are
 * dashed blue, same-thread (sync) edges solid. Nodes and attributes are
 * added in a fixed order, so the DOT text is deterministic.
 */
#ifndef TFD_DOT_H
#define TFD_DOT_H

#include "tfd/analysis.h"
#include "tfd/buf.h"
#include "tfd/err.h"

/* A pipeline of more stages than this is drawn with stages collapsed (the
 * bottleneck and the root never are): siblings of one family, and a
 * stage that is its parent's only child with it, become one node with a
 * count; when that still leaves too many nodes, siblings and chains of any
 * family. The title says so. dot's layout grows faster than the square of
 * the nodes (2,000 siblings took 1.6 s, 10,000 nearly three minutes). */
#define TFD_DOT_MAX_NODES 200

/* format: "dot" (the graph as written by cgraph, no layout), or any gvc
 * output format such as "svg" or "png" (laid out with dot). */
enum tfd_status tfd_dot_render(const struct tfd_host_result *h, const struct tfd_pipeline *p,
			       const char *format, struct tfd_buf *out, struct tfd_err *err);

#endif
