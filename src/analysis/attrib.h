/* attrib.h - call trees in compressed form: self and blocking time (attrib.c),
 * used by the pipeline pass (pipeline.c). */
#ifndef TFD_ATTRIB_H
#define TFD_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/times.h"

#define TFD_MAX_CALL_DEPTH 1000

struct call;
struct call_pair;
struct call_pairs;

/* A call tree: node i's children either listed (kid_off, kids) or, for a
 * tree over a host's own calls (tfd_tree_build_scan), found where they
 * are: the calls after i on its thread, up to the first that starts after
 * its end, whose parent is i,
 * and the few others (far: a consumer's producer calls on another thread)
 * in a short list. The second form keeps no 8 bytes per call, at the peak
 * of an iterator-dense host. Both give each node the same set of
 * children; every reader sorts them. */
struct tfd_tree {
	size_t n;
	struct tfd_times tm;
	int *kid_off; /* children of i: kids[kid_off[i] .. kid_off[i+1]), or NULL */
	int *kids;
	/* the scanned form: the host's calls (their parents); where each run
	 * of calls on one thread ends (nruns, ascending); the children not in
	 * a node's window, as (parent, child) pairs by parent then child */
	const struct call *calls;
	size_t *run_ends, nruns;
	int *far;
	size_t nfar;
	uint64_t *has_far; /* a bit per node with far children */
};

void tfd_tree_build(struct tfd_tree *t, size_t n, const int64_t *start, const int64_t *end,
		    const int *parent);
/* The same with the times as the call graph keeps them, and node i's
 * parent (-1 for none) told by parent_of(ctx, i). */
typedef int (*tfd_parent_fn)(const void *ctx, size_t i);
void tfd_tree_build_from(struct tfd_tree *t, size_t n, const struct tfd_times *tm,
			 tfd_parent_fn parent_of, const void *ctx);
/* The tree over every call of a host (node i is call i, its parent the
 * call's): in the scanned form, or listed when list is set (the lists fit
 * in memory: they are faster to read) or scanning would look at more than
 * a few calls per call (a thread of many calls at one instant). */
void tfd_tree_build_scan(struct tfd_tree *t, size_t n, const struct tfd_times *tm,
			 const struct call *calls, const struct call_pairs *cpair,
			 const struct call_pair *pairs, bool list);
void tfd_tree_release(struct tfd_tree *t);
/* A call's duration less the union of its children's clipped spans. */
int64_t tfd_tree_self(const struct tfd_tree *t, int node);
/* Adds blocking time into blocking_ns[] and sets self_ns[] for every call
 * reachable from root. */
void tfd_tree_attribute(const struct tfd_tree *t, int root, int64_t *self_ns, int64_t *blocking_ns);
/* The same, with each call's blocking time handed to add() instead: once
 * per call that the root's time reaches (a call's whole share, possibly
 * 0), so that no per-call array is needed; self_ns may be NULL (none set). */
typedef void (*tfd_blocking_fn)(void *ctx, int node, int64_t ns);
void tfd_tree_attribute_to(const struct tfd_tree *t, int root, int64_t *self_ns,
			   tfd_blocking_fn add, void *ctx);

/* One root call's attribution over a call tree given as parallel arrays
 * (start, end, parent index, -1 for root): fills self_ns and blocking_ns
 * for every call reachable from `root` (unit tests). */
void tfd_attribute_tree(size_t n, const int64_t *start, const int64_t *end, const int *parent,
			int root, int64_t *self_ns, int64_t *blocking_ns);

#endif
