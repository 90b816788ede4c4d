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
	struct tfd_ev_cursor cur;
	struct tfd_event_source src;
	struct tfd_event ev;
	VEC(struct tl_open) stack;
	size_t off, rank;
};

/* A call whose link waits. */
enum tl_mode { TL_TAKER, TL_OVERLAP };
struct tl_wait {
	int call, pit;	/* the call, its iterator's parent iterator */
	int64_t s0, e0; /* the call's start and end */
	uint64_t elem;
	enum tl_mode mode;
	int best;	  /* TL_TAKER: the best taker so far, -1 */
	int64_t bs, be;	  /* ... its start and end */
	bool settled;	  /* TL_TAKER with a taker: past max(end, its start) */
	int key;	  /* TL_TAKER: its (iterator, element), -1 */
	int64_t taken_at; /* when it first had a taker, INT64_MAX: never */
	bool untaken;	  /* TL_OVERLAP, after no taker came */
	int64_t until;
	unsigned ver; /* of its latest wake-up */
	int next;     /* the next waiting on the same (iterator, element) */
};

/* The takers and waiting calls of one (iterator, element). */
struct tl_key {
	int iter;
	uint64_t elem;
	int takers;  /* head of a list in tl.takers */
	int waiting; /* head of a list of tl_wait */
	int next;    /* the next key of the same element */
};

struct tl_taker {
	int call, next;
	int64_t s, e; /* the call's start and end */
};

struct tl_wake {
	int64_t until;
	int w;
	unsigned ver;
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
 * of the call its link settles on (a union-find forest over the calls),
 * and a group whose top is settled with no parent closes once the stream
 * is past its last end and no call still waiting for its link could land
 * in it (what a streaming pass would fold then, and forget). */
struct tl_groups {
	int *uf;		   /* per call: toward its group's representative */
	int *next;		   /* per call: the next member of its group, -1 */
	int *tail;		   /* per representative: its last member */
	int64_t *last;		   /* per representative: the latest end of its members */
	unsigned *ver;		   /* per representative: bumped as it grows */
	unsigned char *state;	   /* per representative: 1 a top settled, 2 closed */
	int *wait_of;		   /* per call: its wait, -1 */
	VEC(struct tl_gwake) heap; /* tops to try, by last end */
	VEC(int) active;	   /* the waits not settled yet */
	/* per wait: the groups held while it could land in them, a list in
	 * holds (a group held again for another wait is in two lists: the
	 * heap's versions try it once) */
	VEC(int) held;
	VEC(struct tl_hold) holds;
	size_t live, most_live, groups, late;
	int64_t most_live_at;
};

/* A call's record as the stream holds it until its group folds
 * (timefold.c): its times and iterator from its start, its parent (a call,
 * -1) and link kind once settled. */
struct tl_rec {
	int64_t start, end;
	int call, iter, parent;
	int local; /* while its group folds: its index among the members */
	unsigned char link;
};

/* What the folded groups sum to per iterator (today's numbers: the pass
 * before's). */
struct tl_isum {
	uint64_t calls;
	int64_t total_ns, self_ns, blocking_ns; /* blocking: under every root call */
	size_t links[TFD_LINK__COUNT];
	int first; /* the lowest call number, -1 */
};

/* The groups folded as they close, from the records in a pool of slots
 * given back as they fold (held: in use; most_held: the most at once). */
struct tl_fold {
	int *slot; /* per call: its record's slot, -1 (the check's index) */
	VEC(struct tl_rec) recs;
	VEC(int) spare; /* slots given back */
	struct tl_isum *s;
	size_t niters, held, most_held, folded, lost;
	/* scratch of one group: its calls ascending, their times and parents
	 * as indices among them */
	VEC(int) mem;
	VEC(int64_t) st;
	VEC(int64_t) en;
	VEC(int) par;
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
	VEC(int) heap; /* of thread indices, by next event's start */
	VEC(struct tl_wake) wakes;
	VEC(struct tl_wait) waits;
	VEC(struct tl_key) keys;
	VEC(struct tl_taker) takers;
	struct imap by_elem;	    /* element -> its first key */
	VEC(struct tl_seen) * seen; /* per iterator: its calls so far, by start */
	int64_t *maxend;	    /* per iterator: the latest end of its calls so far */
	int *parent;		    /* per call: the link settled, as link.c leaves it */
	int64_t *settled_at;	    /* per call: the stream's time when it was */
	unsigned char *link, *made;
	int64_t tau, last_end; /* the stream's time; the latest end of a call made */
	size_t out_of_order, open, most_open, numbering;
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
	struct host_ctx pre;
	struct tfd_prepass pp;
	size_t *first_at;
	size_t malformed; /* events the file's cursors found malformed */
	/* groups closed as the stream goes (see "groups" below) */
	struct tl_groups g;
	/* and folded as they close (timefold.c) */
	struct tl_fold f;
};

/* The calls of the parent iterator seen so far that waiting call x
 * overlaps (link.c's overlap), the latest started first, each handed to
 * visit(ctx, it) until it returns true: that call, or -1 (timegroups.c). */
int tfd_tl_overlapping(const struct tl *t, const struct tl_wait *x,
		       bool (*visit)(void *ctx, const struct tl_seen *c), void *ctx);

/* ---- the groups (timegroups.c) ---- */

/* g made for n calls, none made yet; tfd_tlg_free() frees it. */
void tfd_tlg_begin(struct tl_groups *g, size_t n);
void tfd_tlg_free(struct tl_groups *g);
/* Call k, just made, ending at end: a group of its own. */
void tfd_tlg_make(struct tl *t, int k, int64_t end);
/* Call k waits for its link (wait w). */
void tfd_tlg_wait(struct tl *t, int k, int w);
/* Wait w took a new turn (it settled, or its element found a taker): the
 * groups held for it are tried again. */
void tfd_tlg_release(struct tl *t, int w);
/* Call k's link settled on parent (-1: none, k tops its group). */
void tfd_tlg_settle(struct tl *t, int k, int parent);
/* The groups the stream is past (every one, at its end: all) closed,
 * unless a waiting call could still land in them. */
void tfd_tlg_close_due(struct tl *t, bool all);

/* ---- the groups folded (timefold.c) ---- */

/* f made for n calls of niters iterators; tfd_tlf_free() frees it. */
void tfd_tlf_begin(struct tl_fold *f, size_t n, size_t niters);
void tfd_tlf_free(struct tl_fold *f);
/* Call k made: its record, held until its group folds. */
void tfd_tlf_make(struct tl_fold *f, int k, int64_t start, int64_t end, int iter);
/* Call k's link settled: its parent (-1 none) and kind in its record. */
void tfd_tlf_settle(struct tl_fold *f, int k, int parent, unsigned link);
/* Group rep (its top) closed: folded into the sums, its records given back. */
void tfd_tlf_fold(struct tl *t, int rep);
/* At the stream's end: what differs between the folded sums and one tree
 * of every call of the host's, or NULL. */
const char *tfd_tlf_differs(const struct tl *t);

#endif
