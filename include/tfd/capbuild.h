/* capbuild.h - building a capture: the side of the capture model
 * (src/model/capture.c) that its readers (src/input) and merges use.
 *
 * Everything here works on a capture under construction and owns nothing
 * beyond it: events, threads, names and parameters live in the capture's
 * arena and are freed with it (tfd_capture_free). None of these fail
 * except by running out of memory (xmalloc: one line, exit 1).
 */
#ifndef TFD_CAPBUILD_H
#define TFD_CAPBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/capture.h"
#include "tfd/imap.h"

/* tfd_host_add_event() for a name already interned in cap's arena (or in
 * an arena that outlives cap's use of it) and its kind known: the readers
 * classify each metadata name once, not each event. */
struct tfd_event *tfd_host_add_event_as(struct tfd_capture *cap, struct tfd_host *h,
					uint32_t thread, const char *name, enum tfd_ev_kind kind,
					int64_t start_ns, int64_t dur_ns);
/* An event named name (interned) of that kind and time, its signature the
 * name's alone, into *e, which the capture does not hold: its stats set as
 * a held event's are (tfd_event_set_stat_as()); a reader's events decoded
 * again, never packed (src/input/xspace_source.c). */
void tfd_event_begin(struct tfd_capture *cap, struct tfd_event *e, const char *name,
		     enum tfd_ev_kind kind, int64_t start_ns, int64_t dur_ns);

/* From now on h's iterator, Produce and Consume events are left in the
 * file that is being read, each noted by a bit of its thread's
 * (struct tfd_thread.nfile): the reader keeps h's source (struct
 * tfd_source) for the passes that read them (TFDOCTOR_SOURCE_LEAVE=1). A
 * thread that had events packed already keeps packing them. */
void tfd_host_leave_graph(struct tfd_capture *cap, struct tfd_host *h);

/* Move the events, threads, steps and span of part's one host into h, as if
 * they had been added to h after its own (threads by id, in part's order).
 * Event names must already be strings of cap (or outlive it); parameter
 * arrays and thread names are rebuilt in cap. part keeps its arena and is
 * freed by the caller. */
void tfd_host_absorb(struct tfd_capture *cap, struct tfd_host *h, struct tfd_capture *part);

/* The same for several parts on up to nthreads threads side by side
 * (every part's threads given cap's indexes, then each thread of h's
 * appended to in part order): tfd_absorb_new() for n parts,
 * tfd_absorb_add() each in order (its threads made h's then, as
 * tfd_host_absorb() makes them), tfd_absorb_run() moves them all and
 * frees the handle; the parts are the caller's to free after. h gets what
 * tfd_host_absorb() of each part in turn gives it. */
struct tfd_absorb;
struct tfd_absorb *tfd_absorb_new(struct tfd_capture *cap, struct tfd_host *h, size_t nparts);
void tfd_absorb_add(struct tfd_absorb *ab, struct tfd_capture *part);
void tfd_absorb_run(struct tfd_absorb *ab, size_t nthreads);
/* From now on the executor chunks with an id in x (and a duration of 0 or
 * more) are summed there as they are packed, not kept: under the thread
 * index tids gives their thread's id (the host's index of the thread, for
 * a capture that reads a part of a host's lines), else their own thread's
 * index. x is shared by the captures reading one host's lines at once
 * (its sums are updated atomically); NULL stops the summing. */
void tfd_capture_sum_exec(struct tfd_capture *cap, struct tfd_exec_sums *x,
			  const struct imap *tids);
/* Add a chunk of step id, dur_ns (>= 0) long, that ran on thread: false
 * when it does not go in (an id x does not hold, a sum or thread index
 * too large), and is to be kept as an event. */
bool tfd_exec_sums_add(struct tfd_exec_sums *x, uint64_t id, int64_t dur_ns, size_t thread);
/* Pack the events h's threads hold back for their stats (a reader that
 * counts what it kept, after a run of chunks may fold). */
void tfd_host_pack_pending(struct tfd_capture *cap, struct tfd_host *h);

/* The step breakdown of h from its device spans (the sources, each in time
 * order) and its host wait (the union of its IteratorGetNext* events, as
 * read so far): a k-way merge over the sources feeds each step's own
 * sweep, where each instant goes to the kind of highest priority (steps as
 * noted so far). A span with the group_id of a step is that step's alone;
 * one without (the host wait, a copy without a group) is every step's
 * whose extent it overlaps; each is cut to the step's extent. Memory is
 * the sources, a sweep state per step and the spans open at once, not the
 * spans. h's held-back events must be packed (tfd_host_pack_pending)
 * before: the sweep reads its waits. Returns the index of a source that went back in
 * time (then h->dev is as before: give that source sorted and sweep again), or n. */
size_t tfd_device_sweep(struct tfd_capture *cap, struct tfd_host *h, struct tfd_dev_source *src,
			size_t n);

/* The same sweep in three parts, so that it may run on another thread
 * while the host goes on (its events read, shed, freed): made on the
 * host's thread, it copies what it reads of h (its waits, steps, span and
 * device counts) and takes h's own copies to the device; run on any
 * thread, as often as a source goes back in time (the return value is
 * tfd_device_sweep's); installed into h on the host's thread once a run
 * went through. */
struct tfd_dev_sweep;
struct tfd_dev_sweep *tfd_dev_sweep_new(struct tfd_host *h);
size_t tfd_dev_sweep_run(struct tfd_dev_sweep *s, struct tfd_dev_source *src, size_t n);
void tfd_dev_sweep_install(struct tfd_dev_sweep *s, struct tfd_host *h);
void tfd_dev_sweep_free(struct tfd_dev_sweep *s);

/* A host-side copy to the device (tfd_host_op_is_h2d) from start_ns to
 * end_ns, of step group when has_group, for the next tfd_device_sweep()
 * of h. */
void tfd_device_host_op(struct tfd_host *h, int64_t start_ns, int64_t end_ns, bool has_group,
			int64_t group);

/* ---- the ops inside dataset functions ----------------------------------

 * A reader follows one thread's events in time order with a tracker: a
 * function scope opens at a dataset function's event (a Run call or a kept
 * executor chunk), and an op event ("name:type") inside it adds its time
 * to h's fn_ops, less the time of the ops nested in it. An event out of
 * time order, or past the scope, closes it (its ops are not counted). */
#define TFD_OPSCOPE_DEPTH 8

struct tfd_opscope {
	uint64_t key;
	bool by_thread; /* key is the thread's id (a Run without a step id) */
	int64_t start, end, last_start;
	bool open;
	int nops;			   /* enclosing ops of the next one */
	int64_t op_end[TFD_OPSCOPE_DEPTH]; /* ... their ends */
	size_t op_rec[TFD_OPSCOPE_DEPTH];  /* ... and records, */
	/* ... in the fn_ops of these hosts (a line read in parts on several
	 * threads: a scope left open by one part holds ops of the next,
	 * which another capture read) */
	struct tfd_host *op_host[TFD_OPSCOPE_DEPTH];
};

/* Close the tracker's scope (a new line or thread begins). */
static inline void tfd_opscope_reset(struct tfd_opscope *s)
{
	s->open = false;
	s->nops = 0;
}

/* A dataset function's scope from start to end on the tracker's thread
 * (key: its step id, or with by_thread the thread's id). */
void tfd_opscope_open(struct tfd_opscope *s, uint64_t key, bool by_thread, int64_t start,
		      int64_t end);

/* The type of an op event's name ("map/decode:DecodeJpegV2" ->
 * "DecodeJpegV2"), or NULL when the name is not of that form ("a::b",
 * no ':' or nothing after it). */
const char *tfd_op_type(const char *name);

/* Whether type is an op type as tfd_op_type() finds them: an identifier
 * ("DecodeJpegV2", "_Send"), not starting with a digit. */
bool tfd_op_type_ok(const char *type);

/* What an op event's name tells: its type as tfd_op_type() finds it (NULL:
 * none) and whether that is a Python op's (tfd_op_is_python). */
struct tfd_op_kind {
	const char *type;
	bool py;
};

/* *k for name (k->type points into name). */
void tfd_op_kind_of(const char *name, struct tfd_op_kind *k);

/* An event that is not a dataset function's on the tracker's thread: when
 * it is an op inside the open scope, its time goes to h's fn_ops. known:
 * NULL when name is the caller's for this call only (it is read and
 * interned in cap), else what tfd_op_kind_of() told of name, already
 * cap's (an XSpace plane's metadata: read once, not at every event). */
void tfd_opscope_event(struct tfd_capture *cap, struct tfd_host *h, struct tfd_opscope *s,
		       const char *name, const struct tfd_op_kind *known, int64_t start,
		       int64_t end);
/* Move part ph's function ops (their names made cap's) and Python op
 * extents (tfd_host.py_ops) after h's. */
void tfd_fn_ops_absorb(struct tfd_capture *cap, struct tfd_host *h, struct tfd_host *ph);
/* Room in o for n records and nruns runs in all (absorbing parts read
 * apart: one allocation, no copy of a grown array beside the parts'). */
void tfd_fn_ops_reserve(struct tfd_fn_ops *o, size_t n, size_t nruns);
/* Room in h for markers step markers and fnruns FunctionRuns in all. */
void tfd_host_reserve(struct tfd_host *h, size_t markers, size_t fnruns);
/* Put the records and runs of from into o: its records at record at, its
 * runs at run run_at (a run's start: the runs after it move up), each
 * name interned in intern first (NULL: from's names are o's capture's).
 * give_back: from's records' pages go as they are copied (from is only
 * freed after). */
void tfd_fn_ops_insert(struct tfd_fn_ops *o, size_t at, size_t run_at, struct tfd_fn_ops *from,
		       struct tfd_arena *intern, bool give_back);

/* The step ids of h's function ops as x codes them (a reader that codes
 * the function and executor events' ids, before x's keys go); a record of
 * a step x does not hold is dropped. */
void tfd_fn_ops_code(struct tfd_host *h, const struct tfd_exec_sums *x);

/* Once h is read (tfd_capture_finish): its fn_ops summed by type
 * (fn_op_types) and per function thread or inline iterator (fn_sums:
 * struct tfd_fn_op_sum), the records freed. */
void tfd_fn_ops_resolve(struct tfd_host *h);

/* Undo the last tfd_capture_add_host() (capture.c), for a file that failed. */
void tfd_capture_drop_last_host(struct tfd_capture *cap);

/* Move every host of part into cap (path: the file they came from), keeping
 * part alive for the strings its arena holds; cap frees it. */
void tfd_capture_adopt(struct tfd_capture *cap, struct tfd_capture *part, const char *path);
/* How many captures cap adopted (tests of parallel loading). */
size_t tfd_capture_nparts(const struct tfd_capture *cap);

/* The kept-event limit in force. */
static inline size_t tfd_max_events(const struct tfd_load_opts *opts)
{
	return opts && opts->max_events ? opts->max_events : TFD_MAX_EVENTS_PER_HOST;
}

/* True if the event kind is worth keeping under opts. */
static inline int tfd_keep_kind(enum tfd_ev_kind k, const struct tfd_load_opts *opts)
{
	return k != TFD_EV_OTHER || (opts && opts->keep_other);
}

#endif
