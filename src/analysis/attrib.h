/* attrib.h - call trees in compressed form: self and blocking time (attrib.c),
 * used by the pipeline pass (pipeline.c). */
#ifndef TFD_ATTRIB_H
#define TFD_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

#include "tfd/times.h"

#define TFD_MAX_CALL_DEPTH 1000

struct tfd_tree {
	size_t n;
	struct tfd_times tm;
	int *kid_off; /* children of i: kids[kid_off[i] .. kid_off[i+1]) */
	int *kids;
};

void tfd_tree_build(struct tfd_tree *t, size_t n, const int64_t *start, const int64_t *end,
		    const int *parent);
/* The same with the times as the call graph keeps them, and node i's
 * parent (an int, -1 for none) read stride bytes after node i - 1's, from
 * parent on: a field of an array of structs. */
void tfd_tree_build_from(struct tfd_tree *t, size_t n, const struct tfd_times *tm,
			 const void *parent, size_t stride);
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
