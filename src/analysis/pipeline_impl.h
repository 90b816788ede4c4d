/* pipeline_impl.h - one pipeline under construction, shared by the
 * pipeline pass (pipeline.c) and the check of its sums folded per root
 * call's group (fold.c). Internal to src/analysis. */
#ifndef TFD_PIPELINE_IMPL_H
#define TFD_PIPELINE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attrib.h"
#include "passes.h"
#include "tfd/graph.h"

/* One pipeline under construction; calls are local indices 0..n-1. */
struct pbuild {
	struct host_ctx *c;
	struct tfd_pipeline *p;
	int root_iter;
	struct stage_build sb;
	VEC(int) pcalls; /* host call index of each local call ... */
	bool identity;	 /* ... unless it has every call of the host: the same */
	VEC(int) roots;	 /* local indices of the root calls, by start */
	size_t n;
	/* the calls' times (local indices): the host's (struct tfd_ptimes) when
	 * borrowed, else start and end arrays of the pipeline's own */
	struct tfd_times tm;
	int64_t *start, *end, *durs;
	bool borrowed;
	int *parent;
	bool *selected; /* per root call: in the aggregate */
	struct tfd_tree tree;
	VEC(int) ef, et; /* observed parent -> child stage edges (blocking) */
	int *order, *inv;
	/* the capacity window's sums per stage (stage-build order), and the
	 * (stage, thread) pairs of its calls, each once */
	size_t cap_warmup; /* the root calls before the window */
	struct tfd_cap_window *win;
	VEC(uint64_t) win_threads;
	/* the sums of a stream in time order (NULL: summed here from the
	 * calls): the root calls, the stages' sums, edges and window pairs
	 * are its (timesel.c), and the capacity pass walks the events */
	const struct tfd_stream_sums *ss;
};

/* A sort key and the index it belongs to; ties go to the smaller index. */
struct keyed {
	int64_t key;
	int64_t idx;
};

static inline int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* b's root calls, by start, as the capacity pass reads them. */
static inline struct tfd_root_spans pbuild_root_spans(const struct pbuild *b)
{
	if (b->ss)
		return (struct tfd_root_spans){.n = b->ss->nroots[b->root_iter],
					       .s = b->ss->root_s[b->root_iter],
					       .e = b->ss->root_e[b->root_iter]};
	return (struct tfd_root_spans){.n = b->roots.n, .idx = b->roots.v, .tm = b->tm};
}

/* A pipeline's latency statistics of its root calls rs (by start) into
 * p (ncalls, total, min, max, mean, p50, p95, first call, last end,
 * slow calls), and the selection of them (root_stats()'s: the warm-up,
 * the --rank pick or the analyzed calls, their number and time) into p
 * and selected[]; their
 * durations into durs[] (both of rs->n). Also what a stream selects
 * from the pass before's root calls (timesel.c). */
void tfd_root_stats(const struct tfd_root_spans *rs, const struct tfd_analyze_opts *opts,
		    struct tfd_pipeline *p, int64_t *durs, bool *selected);
/* The slowest of n root calls of durations durs: the first of the
 * longest, -1 none (its own bottleneck is the pipeline's slowest call's). */
int tfd_root_slowest(const int64_t *durs, size_t n);

/* The host call index of local call k. */
static inline int host_call(const struct pbuild *b, size_t k)
{
	return b->identity ? (int)k : b->pcalls.v[k];
}

/* The parent (local index) of local call k, -1 for none: the host's link
 * itself when the pipeline has every call of the host (its root calls
 * have none), whose array goes once the tree is built */
static inline int parent_of(const struct pbuild *b, size_t k)
{
	return b->parent ? b->parent[k] : b->c->calls.v[k].parent;
}

/* The top of local call k's chain of parents; *near: whether the chain
 * ends there within the depth a call tree is followed to (a deeper chain
 * has no top the pass counts: x is then where the walk stopped). */
static inline int pbuild_top(const struct pbuild *b, size_t k, bool *near)
{
	int x = (int)k, guard = 0;

	while (parent_of(b, (size_t)x) >= 0 && guard++ < TFD_MAX_CALL_DEPTH + 5)
		x = parent_of(b, (size_t)x);
	*near = parent_of(b, (size_t)x) < 0;
	return x;
}

/* Stage si's sums z (struct tfd_stream_isum's, per stage; first: a
 * host call) against b's: what differs first, NULL: nothing (fold.c;
 * the fold's check and the stream's, timesel.c). */
const char *tfd_stage_sums_differ(const struct pbuild *b, size_t si,
				  const struct tfd_stream_isum *z);

/* b's stages (its root's and its bucket's iterators'), and its number of
 * calls from the stream's sums (b->ss), in place of the calls' tree. */
void tfd_stream_stages(struct pbuild *b, const struct bucket *bk);
/* b's stages' sums over every call and over the analyzed ones, its
 * blocking edges and capacity window's (stage, thread) pairs in the
 * order of their first calls, its analyzed root calls and the slowest
 * one's own bottleneck, from the stream's sums (b->ss): what aggregate()
 * sums from the calls (b's root statistics made first). */
void tfd_stream_aggregate(struct pbuild *b);

/* TFDOCTOR_FOLD_CHECK=1: the pipeline's sums folded again, one root
 * call's group of calls at a time, and compared with aggregate()'s; a
 * line on stderr says which agree (fold.c). */
void tfd_fold_check(const struct pbuild *b);

/* TFDOCTOR_TIMELINK_CHECK=1, where the stream held (c->stream): its sums
 * against b's; a line on stderr (timesel.c). */
void tfd_stream_pipeline_check(const struct pbuild *b);
/* ... and the pipeline's calls walked from the host's events (struct
 * tfd_cap_walk) against the table's, for the passes after its sums. */
void tfd_stream_walk_check(const struct tfd_cap_calls *in, uint64_t root_id);

#endif
