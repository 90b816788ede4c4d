/* capture_impl.h - the capture model's private parts, shared by its
 * builder (capture.c) and its stats and finish pass (capture_finish.c).
 * src/model only. */
#ifndef TFD_CAPTURE_IMPL_H
#define TFD_CAPTURE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/imap.h"
#include "tfd/vec.h"

/* A packed event is at most 10 + 10 + 5 + 8 bytes. */
#define EV_MAXLEN 40

/* Events a thread holds back before packing them (see pend below). */
#define TFD_PEND_RING 4

/* What the builder keeps per thread while a file is read. */
struct th_build {
	size_t cap;		      /* evbuf has room for this many bytes */
	int64_t last_start;	      /* of the last event packed (starts are deltas) */
	int64_t prev_start, prev_dur; /* of the last event added */
	/* the events added last, oldest at pend[head]: an event's stats come
	 * after it, and a function event's step id is coded when it is packed
	 * (a table slot that was fetched meanwhile: a large table's slots
	 * miss the cache), so each waits until TFD_PEND_RING more are added
	 * or the file is finished */
	struct tfd_event pend[TFD_PEND_RING];
	uint8_t npend, head;
	/* its events may be out of order (1), or are known to be in order
	 * (0): the finish sorts only the former */
	uint8_t unsorted;
	/* (a thread made of parts, absorb.c) whether all_start and all_dur
	 * are its last event's, one left in the file included: the last
	 * part's, while the thread still has the all_n events it had then */
	bool all_known;
	int64_t all_start, all_dur;
	size_t all_n;
	int64_t first_start, first_dur; /* of the first event added */
	/* the last event packed, when it is an executor chunk that the next
	 * may fold into (tfd_capture.fold_exec): as it is now, at fold_off,
	 * packed after an event that started at fold_prev */
	bool has_fold;
	/* iterator, Produce and Consume events are left in the file, a bit
	 * each (struct tfd_thread.nfile; tfd_host_leave_graph()) */
	bool leave;
	struct tfd_event fold;
	size_t fold_off;
	int64_t fold_prev;
};

/* What the builder needs only while files are read: thread and step indexes
 * and the threads' builders, per host. Freed by tfd_capture_finish(). */
struct host_build {
	struct imap tid;   /* thread id -> index */
	struct imap group; /* group_id -> step index */
	size_t steps_cap;  /* h->steps has room for this many */
	/* the step noted last: a thread's events come a step at a time */
	bool has_last;
	int64_t last_group;
	size_t last_step;
	struct th_build *tb;
	size_t ncap;
	bool leave; /* (given to the threads' builders) */
};

/* A parameter array is shared by every event with the same parameters (an
 * iterator's calls repeat them millions of times): `result` is the array
 * `prev` (of length n) with (key, val) appended; all strings are interned. */
struct pcons {
	const struct tfd_param *prev, *result;
	const char *key, *val;
	int next; /* the previous record with the same hash, -1 */
};

/* The signatures in use, by hash of their fields (a chain per hash). */
struct sig_rec {
	const struct tfd_sig *sig;
	int next; /* the previous record with the same hash, -1 */
};

/* events added by name: the last signature of each name, direct-mapped */
#define SIG_CACHE 256
/* forms looked up last, direct-mapped (a thread's events cycle through a
 * few); the index is the top 8 bits of a product */
#define FORM_CACHE 256

/* A signature given a parent_id: the last result of each (signature,
 * parent_id), direct-mapped (an iterator's calls repeat the pair). */
struct parent_step {
	const struct tfd_sig *from, *to;
	uint64_t parent_id;
};

/* The capture with its private parts; tfd_capture_new() allocates this and
 * hands out &pub (the first member). */
struct capture_impl {
	struct tfd_capture pub;
	VEC(struct host_build) hb; /* parallel to pub.hosts while building */
	struct imap pcons_head;	   /* hash(prev, key, val) -> newest record */
	VEC(struct pcons) pcons;
	struct imap sig_head; /* sig_hash() -> newest record */
	VEC(struct sig_rec) sigs;
	const struct tfd_sig *sig_cache[SIG_CACHE];
	struct parent_step parent_cache[SIG_CACHE];
	/* what its hosts' packed events refer to; iterator id -> its index
	 * among the ids given forms, and the last lookups, direct-mapped */
	struct tfd_evtab *tab;
	size_t nsig;	      /* signatures made: the next one's idx */
	struct imap form_idx; /* a form's key (form_index()) -> its index in tab->form */
	struct {
		uint64_t key;
		uint32_t idx1; /* its index + 1, 0 for an empty entry */
	} form_cache[FORM_CACHE];
	struct imap val_idx;
	size_t nval_asked; /* iterator events with an id packed */
	/* the constant of the TFD_VAL_NEAR forms this capture makes: the first
	 * Produce or Consume event's id that took eight bytes, less its start */
	uint64_t near_base;
	bool has_near_base;
	struct {
		uint64_t val;
		uint32_t idx;
	} val_cache[SIG_CACHE];
	VEC(struct tfd_capture *)
	parts; /* captures whose hosts were adopted: their
		* arenas hold those hosts' strings */
	/* executor chunks summed instead of packed (tfd_capture_sum_exec) */
	struct tfd_exec_sums *sum_into;
	const struct imap *sum_tids;
	/* TFDOCTOR_SOURCE_CHECK=1: the threads note which packed events are
	 * iterator, Produce or Consume events (struct tfd_thread.kbits) */
	bool kbits;
};

static inline struct capture_impl *impl(struct tfd_capture *cap)
{
	return (struct capture_impl *)cap;
}

/* Is an event at (s1, d1) before one at (s2, d2): start ascending,
 * duration descending? */
static inline bool ev_before_at(int64_t s1, int64_t d1, int64_t s2, int64_t d2)
{
	return s1 != s2 ? s1 < s2 : d1 > d2;
}

/* Start deltas wrap around in uint64 (readers allow starts up to 2^62
 * apart), and the cursor adds them back the same way. */
static inline int64_t start_delta(int64_t to, int64_t from)
{
	return (int64_t)((uint64_t)to - (uint64_t)from);
}

/* The builder's state of host h (made on first use). Inline: the readers'
 * helpers in other files of the model (steps.c) use it without calling
 * into capture.c. */
static inline struct host_build *tfd_cm_build_of(struct tfd_capture *cap, const struct tfd_host *h)
{
	struct capture_impl *ci = impl(cap);
	size_t idx = (size_t)(h - cap->hosts);

	while (ci->hb.n <= idx) {
		struct host_build zero;

		memset(&zero, 0, sizeof(zero));
		vec_push(&ci->hb, zero);
	}
	return &ci->hb.v[idx];
}
/* Free what a host's builder holds. */
void tfd_cm_build_release(struct host_build *b);
/* Pack the events h's threads hold back for their stats. */
void tfd_cm_pack_pending(struct tfd_capture *cap, struct tfd_host *h);
/* Thread t of h with the events its read left in the file packed among
 * the others, as a read that left none would have (its order is to be
 * checked and sorted: the file's order goes with the bits). */
void tfd_cm_pack_left(struct tfd_capture *cap, struct tfd_host *h, size_t t);
/* The signature equal to want, made (interned) if new. */
const struct tfd_sig *tfd_cm_sig_get(struct tfd_capture *cap, const struct tfd_sig *want);

/* The signature of an event named name (interned) with nothing else: each
 * file's own copy (capture.c's per-event path inlines its only call). */
static inline const struct tfd_sig *tfd_cm_sig_of_name(struct tfd_capture *cap, const char *name)
{
	struct capture_impl *ci = impl(cap);
	const struct tfd_sig **slot =
	    &ci->sig_cache[imap_hash((uint64_t)(uintptr_t)name) % SIG_CACHE];
	struct tfd_sig want = {name, NULL, 0, 0, 0, 0};

	if (!*slot || (*slot)->name != name)
		*slot = tfd_cm_sig_get(cap, &want);
	return *slot;
}
/* The shared parameter array prev[0..n) followed by (key, val) (interned). */
const struct tfd_param *tfd_cm_param_cons(struct tfd_capture *cap, const struct tfd_param *prev,
					  uint16_t n, const char *key, const char *val);
/* Give back the room h's threads' event buffers do not use. */
void tfd_cm_trim_threads(struct tfd_capture *cap, struct tfd_host *h);

/* The order of a host's steps: by start, then group_id (qsort). */
int tfd_cm_step_cmp(const void *a, const void *b);

/* What moving a part's events into a host (absorb.c) shares with the
 * builder. The builders of h's threads up to `thread` (new threads get
 * theirs; one with events packed elsewhere continues after its last). */
void tfd_cm_cap_cover(struct host_build *b, const struct tfd_host *h, uint32_t thread);
/* Pack every event tb holds back for thread t, oldest first. */
void tfd_cm_pack_all_held(struct capture_impl *ci, struct tfd_host *h, struct tfd_thread *t,
			  struct th_build *tb);
/* Note that an event at (start, dur) follows the `before` events of tb's
 * thread (tb->unsorted when it does not). */
void tfd_cm_note_order(struct th_build *tb, size_t before, int64_t start, int64_t dur);
/* Fold e into the executor chunk packed last on t, when it is one of the
 * same step (tb->has_fold): false when it is not. */
bool tfd_cm_fold_into_last(struct capture_impl *ci, struct tfd_thread *t, struct th_build *tb,
			   const struct tfd_event *e);
/* Note e, packed at off after an event that started at prev, as the one
 * the next may fold into (when it can be). */
void tfd_cm_note_last(struct capture_impl *ci, struct th_build *tb, const struct tfd_event *e,
		      size_t off, int64_t prev);
/* Write value v at q as how says; the end of what was written. */
uint8_t *tfd_cm_put_value(uint8_t *q, enum tfd_val_how how, uint64_t v);
/* The index of form (sig, kind, flags, how, vi; val for TFD_VAL_FORM and
 * TFD_VAL_NEAR) in ci's table, added if new. The key holds no val for a
 * TFD_VAL_NEAR form: ci gives those one constant (its near_base, or that of
 * the first part whose form was moved in). */
uint32_t tfd_cm_form_index(struct capture_impl *ci, const struct tfd_sig *sig, unsigned kind,
			   unsigned flags, enum tfd_val_how how, uint32_t vi, uint64_t val);
/* How ci stores value v of an event (iterator: an iterator's id), *vi the
 * id's index when in a form. */
enum tfd_val_how tfd_cm_value_how(struct capture_impl *ci, uint64_t v, bool iterator, uint32_t *vi);

#endif
