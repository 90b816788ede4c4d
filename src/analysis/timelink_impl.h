/* timelink_impl.h - what the time-order check (timelink.c) shares with
 * its groups closed as the stream goes (timegroups.c); src/analysis only.
 * See docs/performance.md, "Calls held in time order". */
#ifndef TFD_TIMELINK_IMPL_H
#define TFD_TIMELINK_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/capture.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/vec.h"

/* An open event on a thread's stack (graph.c's scan keeps the same). */
struct tl_open {
	int64_t start, end;
	uint64_t elem;
	int call;     /* -1: a Produce event */
	int iter;     /* the call's iterator */
	bool element; /* a Produce event with an element_id */
};

/* One thread in the merge: its next event to read, from its packed events
 * (cur) or the source's cursor over its lines in the file. */
struct tl_thread {
	struct tfd_ev_mcursor cur; /* (no source given: the packed events and the file's) */
	struct tfd_event_source src;
	struct tfd_event ev;
	VEC(struct tl_open) stack;
	size_t off, rank;
};

/* A call whose link waits (its slot in tl.waits reused once it settles),
 * at most once in the heap of wake-ups, at until. */
enum tl_mode { TL_TAKER, TL_OVERLAP };
struct tl_wait {
	int call, pit;	/* the call, its iterator's parent iterator */
	int64_t s0, e0; /* the call's start and end */
	uint64_t elem;
	enum tl_mode mode;
	int best;	  /* TL_TAKER: the best taker so far, -1 */
	int64_t bs, be;	  /* ... its start and end */
	bool settled;	  /* TL_TAKER with a taker: past max(end, its start) */
	bool done;	  /* its link settled: the slot is free */
	int key;	  /* TL_TAKER: its (iterator, element), -1 */
	int64_t taken_at; /* when it first had a taker, INT64_MAX: never */
	bool untaken;	  /* TL_OVERLAP, after no taker came */
	int64_t until;
	int hpos; /* its place in tl.wakes, -1: none */
	/* once the stream is past its end, while it may still be linked by
	 * overlap: the calls of its parent iterator it overlaps, copied out
	 * in the order a walk visits them (its iterator's list then lets them
	 * go: see seen_drop()) */
	bool snapped;
	struct tl_seen *snap;
	size_t nsnap;
	int next; /* the next waiting on the same (iterator, element) */
};

/* The takers and waiting calls of one (iterator, element). */
/* The takers and waiting calls of one (iterator, element). A taker whose
 * group folded is dropped from the list: no call waiting then can land on
 * it (its group would have been held), and one to come starts after it
 * ended, so overlaps none of them and would take the one that started
 * first (link.c's order): gone keeps that one, -1: none. */
struct tl_key {
	int iter;
	uint64_t elem;
	int takers;	/* head of a list in tl.takers */
	int waiting;	/* head of a list of tl_wait */
	int next;	/* the next key of the same element */
	int gone;	/* the first of the takers dropped, -1 */
	int64_t gone_s; /* its start */
};

/* A call that took an element: in its key's list, and in its call's
 * (struct tl_rec.takes, through cnext); its slot given back as the call's
 * group folds. */
struct tl_taker {
	int call, next;
	int key, cnext;
	int64_t s, e; /* the call's start and end */
};

/* A group's closing time to try: its last end, at its version. */
struct tl_gwake {
	int64_t at;
	int rep;
	unsigned ver;
};

/* A group held for a wait (struct tl_groups.held), the next one. */
struct tl_hold {
	int rep, next;
};

/* The calls' groups as the stream makes them: each call joins the group
 * of the call its link settles on (a union-find forest over the records'
 * slots, struct tl_rec), and a group whose top is settled with no parent
 * closes once the stream is past its last end and no call still waiting
 * for its link could land in it: it is folded then, and its slots given
 * back. */
struct tl_groups {
	VEC(struct tl_gwake) heap; /* tops to try, by last end */
	VEC(int) active;	   /* the waits not settled yet */
	/* per wait: the groups held while it could land in them, a list in
	 * holds (a group held again for another wait is in two lists: the
	 * heap's versions try it once); holds' entries given back as a list
	 * is let go, from spare_hold on */
	VEC(int) held;
	VEC(struct tl_hold) holds;
	int spare_hold;
	size_t live, most_live, groups, late;
	int64_t most_live_at;
};

/* A call's record as the stream holds it, from its start until its group
 * folds (timefold.c), in a slot of a pool: its times and iterator, its
 * parent (a call, -1) and link kind once settled, and its group's
 * union-find (slots). */
struct tl_rec {
	int64_t start, end;
	int call, iter, parent;
	int rank;	 /* a root iterator's call: its rank among its calls, -1 */
	uint32_t thread; /* its thread */
	int local;	 /* while its group folds: its index among the members */
	unsigned char link;
	unsigned char state; /* as a group's top: 1 settled with no parent */
	int uf;		     /* toward its group's representative (a slot) */
	int next;	     /* the next member of its group, -1 */
	int tail;	     /* as representative: its last member */
	int wait;	     /* its wait, -1 */
	int takes;	     /* its takers' entries, -1 */
	int64_t last;	     /* as representative: the latest end of its members */
	unsigned ver;	     /* as representative: bumped as it grows (kept across users) */
};

/* The live calls' slots: call number -> slot, open addressing, an entry
 * taken out by shifting back the ones after it. */
struct tl_cmap {
	int *key, *val; /* key -1: empty */
	size_t cap, n;
};

/* A root iterator's calls as the pass before lists them, in the order
 * the pipeline pass sorts them (by start, then call), and the selection it
 * makes of them (timesel.c): the warm-up, the analyzed ones, the slowest,
 * the capacity window; seen: the ranks handed to its calls as the stream
 * meets them. */
struct tl_roots {
	size_t n, nwarmup, seen;
	int64_t *s, *e;
	bool *sel;
	int slowest;
	bool has_window;
	int64_t t0, t1;
};

/* The groups folded as they close, from the records in a pool of slots
 * given back as they fold (held: in use; most_held: the most at once). */
struct tl_fold {
	struct tl_cmap slot; /* the live calls' slots */
	VEC(struct tl_rec) recs;
	VEC(int) spare; /* slots given back */
	struct tfd_stream_isum *s;
	size_t niters, held, most_held, folded, lost;
	/* the blocking edges under analyzed root calls and the capacity
	 * window's (iterator, thread) pairs, each with its first call */
	struct imap edge_at, pair_at; /* key -> index */
	tfd_stream_firsts edges, pairs;
	/* scratch of one group: its calls ascending, their times and parents
	 * as indices among them */
	VEC(int) mem;
	VEC(int64_t) st;
	VEC(int64_t) en;
	VEC(int) par;
	VEC(int) depth;
	VEC(int) top;
	VEC(uint64_t) order; /* sort_slots()'s keys and scratch */
};

/* A call of an iterator as seen so far, by start: its start, and the
 * latest end of it and every call of the iterator before it (a walk back
 * for the calls overlapping an instant stops where that end is before it). */
struct tl_seen {
	int64_t start, end, pmax;
	int call;
};

struct tl {
	const struct host_ctx *c;
	struct tl_thread *th;
	size_t nth;
	VEC(int) heap;	/* of thread indices, by next event's start */
	VEC(int) wakes; /* the waits by until (then their slots): a heap */
	VEC(struct tl_wait) waits;
	VEC(struct tl_key) keys;
	VEC(struct tl_taker) takers;
	int spare_taker;      /* takers' slots given back, a list through next */
	struct imap by_elem;  /* element -> its first key */
	VEC(int) spare_waits; /* waits' slots given back */
	/* per iterator: its calls so far, by start, from seen_head on (those
	 * before it can overlap no waiting call, nor one to come: dropped) */
	VEC(struct tl_seen) * seen;
	size_t *seen_head, *seen_kept; /* ... and how many were kept at the last drop */
	size_t seen_live, seen_most;   /* calls seen and kept, now and at most */
	int64_t *maxend;	       /* per iterator: the latest end of its calls so far */
	/* the check's own, per call: the link settled, its kind, and whether
	 * the call was made (1) and settled (2); the stream reads none of it
	 * (NULL: a stream the analysis is built from, with no call table) */
	int *parent;
	unsigned char *link, *made;
	int64_t tau, last_end; /* the stream's time; the latest end of a call made */
	size_t out_of_order, open, most_open, numbering, waited;
	size_t untaken, untaken_linked; /* produced, no taker; of those, linked by overlap */
	/* the iterators made again as the stream meets their calls: today's
	 * iterator -> the stream's and back (-1 none yet), and the calls whose
	 * iterator is not the one their iterator's first call got */
	struct host_ctx again;
	int *from_again; /* the stream's iterator -> today's (-1 not yet known) */
	size_t nagain, iter_differ;
	/* the pass before the stream (tfd_graph_prepass()): today's
	 * iterators, numbered as the scan numbers them, with their parents
	 * and last ends; each thread's count of calls; each iterator's first
	 * call on each thread (first_at: per thread, the next of them) */
	struct host_ctx pre_own; /* (the check's: pre points here) */
	const struct host_ctx *pre;
	struct tfd_prepass pp;
	size_t *first_at;
	size_t malformed; /* events the file's cursors found malformed */
	/* groups closed as the stream goes (see "groups" below) */
	struct tl_groups g;
	/* and folded as they close (timefold.c) */
	struct tl_fold f;
	/* per iterator (a root iterator's): its root calls and their
	 * selection; the root calls met out of the pass before's order */
	struct tl_roots *roots;
	size_t root_order;
	const struct tfd_analyze_opts *opts; /* the selection's (NULL: the default) */
};

/* The calls of the parent iterator seen so far that waiting call x
 * overlaps (link.c's overlap), the latest started first, each handed to
 * visit(ctx, it) until it returns true: that call, or -1 (timegroups.c). */
int tfd_tl_overlapping(const struct tl *t, const struct tl_wait *x,
		       bool (*visit)(void *ctx, const struct tl_seen *c), void *ctx);

/* ---- the groups (timegroups.c) ---- */

/* g made, empty; tfd_tlg_free() frees it. */
void tfd_tlg_begin(struct tl_groups *g);
void tfd_tlg_free(struct tl_groups *g);
/* The call in slot s, just made: a group of its own. */
void tfd_tlg_make(struct tl *t, int s);
/* The call in slot s waits for its link (wait w). */
void tfd_tlg_wait(struct tl *t, int s, int w);
/* Wait w took a new turn (it settled, or its element found a taker): the
 * groups held for it are tried again. */
void tfd_tlg_release(struct tl *t, int w);
/* The call in slot s settled on parent (a call; -1: none, it tops its
 * group). */
void tfd_tlg_settle(struct tl *t, int s, int parent);
/* The groups the stream is past (every one, at its end: all) closed,
 * unless a waiting call could still land in them. */
void tfd_tlg_close_due(struct tl *t, bool all);

/* ---- the groups folded (timefold.c) ---- */

/* f made for calls of niters iterators; tfd_tlf_free() frees it. */
void tfd_tlf_begin(struct tl_fold *f, size_t niters);
void tfd_tlf_free(struct tl_fold *f);
/* Call k made: its record's slot, held until its group folds. */
int tfd_tlf_make(struct tl_fold *f, int k, int64_t start, int64_t end, int iter);
/* The stream's sums, handed over (the fold's, its edges and pairs sorted
 * by their first calls; each root iterator's warm-up): f's go. */
struct tfd_stream_sums *tfd_tlf_take(struct tl *t);
/* The slot of live call k (made, its group not folded), -1: none. */
int tfd_tlf_slot(const struct tl_fold *f, int k);
/* Group rep (the slot of its top) closed: folded into the sums, its
 * records given back; false when a member's parent was folded before
 * (the sums are off then). */
bool tfd_tlf_fold(struct tl *t, int rep);
/* At the stream's end: what differs between the folded sums and one tree
 * of every call of the host's, or NULL. */
const char *tfd_tlf_differs(const struct tl *t);

/* ---- the root calls' selection (timesel.c) ---- */

/* t->roots, from the pass before's root calls. */
void tfd_tls_begin(struct tl *t);
void tfd_tls_free(struct tl *t);
/* The rank of root iterator it's call of [s, e), met next: -1 (counted
 * in t->root_order) when it is not the pass before's next. */
int tfd_tls_rank(struct tl *t, int it, int64_t s, int64_t e);

#endif
