/* graph.h - the iterator graph of one host (internal to the library).
 *
 * Built from a host's events: one iterator per `id` (or long name when the
 * id is missing), its parent, its root, and every iterator call with the
 * enclosing call on its thread and the Produce event around it. Pipelines
 * are the iterators grouped by root. The analysis passes (src/analysis/)
 * read it; nothing here measures time.
 *
 * Ownership: a struct host_ctx is initialized with tfd_graph_build() and
 * released with tfd_graph_release(); groups with tfd_graph_groups_release().
 */
#ifndef TFD_GRAPH_H
#define TFD_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/analysis.h"
#include "tfd/capture.h"
#include "tfd/imap.h"
#include "tfd/vec.h"

struct iter {
	uint64_t id;
	uint64_t parent_id;
	bool has_parent;
	const char *long_name;
	int parent;   /* iterator index, -1 */
	int stage;
	int state; /* cycle detection: 0 new, 1 on stack, 2 done */
	int64_t first_start;
	int64_t max_dur; /* longest call */
	/* its calls: icalls[call_off .. call_off + ncalls), sorted by start
	 * once all are in; ncalls stays when the list goes */
	size_t call_off, ncalls;
	/* once the host's events are gone (tfd_graph_drop_events): a copy of
	 * its first call's event */
	const struct tfd_event *sample;
};

/* 16 bytes: one per iterator event. The events are found by index, not
 * by pointer (call_ev()), which halves the table; the Produce event around
 * a call is in a table of its own, gone once calls are linked. */
struct call {
	uint32_t thread;  /* index into the host's threads */
	uint32_t ev : 29; /* the iterator event: index into the thread's events */
	uint32_t link : 3;
	int iter;
	/* call index, -1; until tfd_link_calls(): the nearest enclosing
	 * iterator call on the thread */
	int parent;
};

/* A thread's events are indexed in 29 bits (a host holds fewer). */
#define TFD_GRAPH_MAX_THREAD_EVENTS (1u << 29)
_Static_assert(TFD_MAX_EVENTS_PER_HOST < TFD_GRAPH_MAX_THREAD_EVENTS, "event index bits");
_Static_assert(TFD_LINK__COUNT <= 8, "link bits");
_Static_assert(sizeof(struct call) == 16, "a call is 16 bytes");

struct host_ctx {
	const struct tfd_host *h;
	struct tfd_analysis *a;
	VEC(struct iter) iters;
	VEC(struct call) calls;
	int *icalls; /* every iterator's calls, one after the other (struct iter) */
	/* per call until tfd_graph_release_consumers(): 1 + the thread's index
	 * of the enclosing Produce event, if that came first; 0: none. Empty
	 * when the host has no Produce/Consume events (Chrome traces). */
	VEC(uint32_t) produce;
	struct imap by_id;
	struct imap by_name;  /* long name pointer -> the iterator without an id */
	struct imap by_lname; /* long name text -> last iterator with it ... */
	VEC(int) lname_next;  /* ... and the one before, per iterator */
	int *root;            /* per iterator: its root iterator, or -1 */
	/* consumer calls by (iterator id, element id): a chained hash whose
	 * heads are sized once from the host's Produce/Consume count (an open
	 * table took twice the memory, at the peak) */
	int *cons_head; /* per bucket: the newest entry in cons_*, -1 */
	uint64_t cons_mask;
	VEC(int) cons_call; /* consumer call index */
	VEC(uint64_t) cons_elem;
	VEC(int) cons_next; /* the previous entry in the bucket, -1 */
	/* the host's dataset-function calls for the capacity pass, read before
	 * the function and executor events may go (struct tfd_fn_call) */
	struct tfd_fn_call *fns;
	size_t nfns;
	/* once the host's events are gone: each call's start and end */
	int64_t *cstart, *cend;
};

static inline const struct tfd_event *call_ev(const struct host_ctx *c, const struct call *cl)
{
	return &c->h->threads[cl->thread].events[cl->ev];
}

/* The Produce event around call k (c->produce.v[k] != 0). */
static inline const struct tfd_event *call_produce(const struct host_ctx *c, size_t k)
{
	return &c->h->threads[c->calls.v[k].thread].events[c->produce.v[k] - 1];
}

/* The consumer bucket of an element of the iterator with this id. */
static inline size_t cons_bucket(const struct host_ctx *c, uint64_t iter_id, uint64_t elem)
{
	return (size_t)(imap_hash(imap_hash(iter_id) ^ (elem * 0x9e3779b97f4a7c15ull)) &
			c->cons_mask);
}

/* Iterators and calls of one host, parents resolved (a cycle is an error),
 * roots known. *by_name and *orphans count iterators linked by long name and
 * left without a parent. */
enum tfd_status tfd_graph_build(struct host_ctx *c, const struct tfd_host *h, size_t *by_name,
				size_t *orphans, struct tfd_err *err);
void tfd_graph_release(struct host_ctx *c);
/* Before a graph is built from h: drop its events whose kinds are not in
 * keep (TFD_KIND_BIT()s; iterator events always stay). */
void tfd_host_shed(struct tfd_host *h, uint32_t keep);
/* Once calls are linked and the function calls read: each call's start
 * and end into cstart/cend, each iterator's first event copied into
 * samples (returned, iters.n of them, the caller's to free, NULL when no
 * call) as its sample, then every event of h (the host c was built from)
 * goes. call_ev() is not to be used after this. */
struct tfd_event *tfd_graph_drop_events(struct host_ctx *c, struct tfd_host *h);
/* Drop the consumer index (cons_*) and the calls' Produce events once
 * calls are linked. */
void tfd_graph_release_consumers(struct host_ctx *c);
/* Drop the iterators' lists of calls (icalls) once calls are linked. */
void tfd_graph_release_call_lists(struct host_ctx *c);

/* The pipelines of a host: root iterators by first call, each with its
 * iterators and calls (index order), and whether it is a device pipeline. */
struct tfd_graph_groups {
	size_t n;
	int *root;   /* iterator index of each root */
	bool *is_device;
	size_t *ioff, *coff; /* group g: iters[ioff[g]..ioff[g+1]), calls likewise */
	int *iters, *calls;
};

void tfd_graph_group(const struct host_ctx *c, struct tfd_graph_groups *g);
void tfd_graph_groups_release(struct tfd_graph_groups *g);

struct stage_build {
	VEC(struct tfd_stage) stages;
	VEC(char *) paths; /* owned copies, parallel to stages */
	struct imap index; /* hash(parent stage, path) -> last stage with it ... */
	VEC(int) next;     /* ... and the one before, per stage */
};

/* The stage of iterator `iter` (creating it and its ancestors' stages). */
int tfd_graph_stage_for(struct host_ctx *c, struct stage_build *sb, int iter, int depth_guard);
void tfd_graph_stage_build_release(struct stage_build *sb);

/* Pre-order of the stage tree from root, children by first appearance;
 * stages not reached are appended. order has n slots. */
void tfd_graph_stage_order(const struct tfd_stage *st, size_t n, int root, int *order);

#endif
