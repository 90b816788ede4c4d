/* capture.h - profiler captures loaded into one in-memory model.
 *
 * A capture is one or more hosts. Each host has the threads (XLines of the
 * "/host:CPU" plane, or Chrome trace tids of the host process) with their
 * events, sorted by (start asc, duration desc, file order). Only host events
 * are kept as events; a device plane's copies and kernels are reduced as
 * they are read to the step breakdown of input time (struct tfd_device).
 *
 * Times are nanoseconds relative to the host's own clock as stored in the
 * file (XSpace: line timestamp_ns + offset_ps/1000; Chrome: ts/dur in us).
 *
 * Ownership: everything reachable from a struct tfd_capture lives in its
 * arena and is freed by tfd_capture_free().
 */
#ifndef TFD_CAPTURE_H
#define TFD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/arena.h"
#include "tfd/err.h"
#include "tfd/imap.h"

enum tfd_ev_kind {
	TFD_EV_OTHER = 0,
	TFD_EV_ITERATOR, /* "Iterator" or "Iterator::..." (long name) */
	TFD_EV_PRODUCE,	 /* PrefetchProduce, ParallelMapProduce, ... */
	TFD_EV_CONSUME,	 /* PrefetchConsume, ParallelMapConsume, ... */
	TFD_EV_GETNEXT,	 /* consumer ops: IteratorGetNext*, MultiDeviceIteratorGetNext* */
	/* a dataset's user function: InstantiatedCapturedFunction::Run,
	 * ::RunAsync, ...; its `id` stat is the function's step id */
	TFD_EV_FUNCTION,
	/* ExecutorState::Process: a chunk of a function's ops on some thread,
	 * `id` = the step id of the function it runs; kept only when a
	 * TFD_EV_FUNCTION with that id was captured on the host */
	TFD_EV_EXEC,
	/* the loop's own input work besides GetNext: MakeIterator::<dataset>
	 * (an iterator being made, each dataset's nested in its parent's), the
	 * eager ops that make datasets and iterators, and the Python call
	 * around an eager op (TFE_Py_FastPathExecute_C, whose end after a
	 * GetNext's is the wait for the interpreter's lock): waits.c */
	TFD_EV_LOOPOP,
	TFD_EV__COUNT /* (not a kind: how many there are; at most 8, a form's key holds 3 bits) */
};

/* The kinds a host's iterator graph is made of (iterator, Produce and
 * Consume events): what a struct tfd_source reads again from the file. */
static inline bool tfd_graph_kind(unsigned kind)
{
	return kind == TFD_EV_ITERATOR || kind == TFD_EV_PRODUCE || kind == TFD_EV_CONSUME;
}

enum tfd_ev_flag {
	TFD_EVF_ID = 1 << 0,
	TFD_EVF_PARENT = 1 << 1,
	TFD_EVF_ELEMENT = 1 << 2,
	TFD_EVF_GROUP = 1 << 3, /* had a group_id stat (its value goes to the steps) */
	TFD_EVF_ASYNC = 1 << 4, /* "_a" stat: excluded from nesting */
};

struct tfd_param {
	const char *key; /* interned */
	const char *val;
};

/* What the events of one iterator repeat call after call: its name,
 * parameters and parent. Interned per capture (equal signatures are one
 * record), so millions of events share a few of these. */
struct tfd_sig {
	const char *name;		/* interned; the long name for iterators */
	const struct tfd_param *params; /* iterator parameters (parallelism, ...) */
	uint64_t parent_id;		/* iterators (TFD_EVF_PARENT on the event) */
	uint16_t nparams;		/* <= TFD_MAX_PARAMS */
	/* what its name is to the iterator graph (enum tfd_sig_role), set
	 * when the signature is made: read at every iterator event */
	uint8_t role;
	uint32_t idx; /* its index among the capture's signatures (in a form's key) */
};

/* struct tfd_sig.role: a name that is no pipeline's iterator of its own:
 * "Iterator" alone (an iterator's outer call, as TensorFlow 1 writes it)
 * or a loop's own root (tfd_loop_root_name). */
enum tfd_sig_role { TFD_SIG_PLAIN = 0, TFD_SIG_BARE_ITERATOR = 1, TFD_SIG_LOOP_ROOT = 2 };

/* One event as the passes read it (32 bytes). The duration, kind and flags
 * share one word (a duration is at most TFD_MAX_DURATION_NS, which the
 * readers enforce, and tfd_host_add_event clamps). An event's thread is the
 * thread whose stream holds it.
 *
 * An event has one 64-bit value: element_id for Produce and Consume events,
 * id for every other kind. A stat of the other name is kept only while the
 * event's own one is absent, and gives way to it (TensorFlow never writes
 * both on one event). */
struct tfd_event {
	int64_t start_ns;
	int64_t dur_ns : 47;
	uint64_t kind : 4;  /* enum tfd_ev_kind */
	uint64_t flags : 6; /* enum tfd_ev_flag */
	uint64_t : 7;
	const struct tfd_sig *sig; /* never NULL */
	union {
		uint64_t id;	     /* TFD_EVF_ID: iterator id, function step id (bit pattern) */
		uint64_t element_id; /* TFD_EVF_ELEMENT: Produce/Consume */
	};
};

/* A thread's events are stored packed, a few bytes each (captures keep
 * millions), and read in order with a cursor:
 *
 *	struct tfd_ev_cursor c;
 *	struct tfd_event e;
 *
 *	for (tfd_ev_begin(&c, h, th); tfd_ev_next(&c, &e);)
 *		...
 *
 * An event is varints: its start less the previous event's (zigzag), its
 * duration (zigzag) and the index of its form (struct tfd_form: what an
 * iterator's calls repeat, one byte for the first 128 forms), then its
 * value as the form says. */
struct tfd_thread {
	int64_t id;
	const char *name;
	uint8_t *evbuf; /* nevents packed events, sorted; see file comment */
	size_t evlen;	/* bytes */
	size_t nevents;
	/* bit 1 << kind for every kind of event added (a superset once events
	 * are dropped): passes skip threads without the kinds they read */
	uint32_t kinds;
	/* while the source check runs (TFDOCTOR_SOURCE_CHECK=1): a bit per
	 * packed event, set for an iterator, Produce or Consume event, nkbits
	 * of them: the order a read that leaves those events in the file must
	 * keep (docs/performance.md); kbits_lost: the events were sorted, the
	 * file's order is gone */
	uint8_t *kbits;
	size_t nkbits;
	bool kbits_lost;
	/* of nevents, those a read left in the file, unpacked (the bits set:
	 * TFDOCTOR_SOURCE_LEAVE=1; the host's source reads them, a struct
	 * tfd_ev_mcursor merges them back); nevents - nfile are in evbuf */
	size_t nfile;
};

/* The TFDOCTOR_SOURCE_CHECK bits (struct tfd_thread.kbits): kbit_room
 * bytes more each time they fill. */
#define TFD_KBIT_ROOM ((size_t)4096)

/* Bit i of the bytes v, read and written. */
static inline bool tfd_bit8(const uint8_t *v, size_t i)
{
	return (v[i / 8] >> (i % 8)) & 1;
}

static inline void tfd_bit8_put(uint8_t *v, size_t i, bool on)
{
	v[i / 8] = (uint8_t)((v[i / 8] & ~(1u << (i % 8))) | ((unsigned)on << (i % 8)));
}

/* Append to t's bits whether its next packed event is an iterator,
 * Produce or Consume event. */
static inline void tfd_kbit_push(struct tfd_thread *t, bool on)
{
	if (t->nkbits % (TFD_KBIT_ROOM * 8) == 0)
		t->kbits = (uint8_t *)xrealloc(t->kbits, t->nkbits / 8 + TFD_KBIT_ROOM);
	tfd_bit8_put(t->kbits, t->nkbits++, on);
}

static inline bool tfd_kbit(const struct tfd_thread *t, size_t i)
{
	return tfd_bit8(t->kbits, i);
}

#define TFD_KIND_BIT(k) (1u << (k))

struct tfd_plane_info {
	const char *name;
	size_t nlines;
	size_t nevents; /* 0 for planes that were skipped */
	bool decoded;
};

enum tfd_format {
	TFD_FMT_XSPACE,
	TFD_FMT_CHROME_JSON,
	TFD_FMT_TF2_TRACE, /* TF 2.0 local.trace */
};

/* The extent of one step: all host events (kept or not) with this group_id. */
struct tfd_step {
	int64_t group_id;
	int64_t start_ns, end_ns;
};

/* A step marker; a SessionRun; a GetNext op's run; a tf.function's eager
 * call (EagerLocalExecute of an __inference_ function: it holds the
 * function's run, whose FunctionRun ends when the run is dispatched). */
enum tfd_marker_kind {
	TFD_MARK_STEP,
	TFD_MARK_EVAL,
	TFD_MARK_SESSION_RUN,
	TFD_MARK_GET_NEXT,
	TFD_MARK_FN_CALL
};

/* A step marker as the profiler writes it (tfd_step_marker_name() and a
 * `_r` or `step_num` stat): what a capture without group_id stats (a raw
 * tf.profiler capture; TensorFlow's converter adds them later) has of its
 * steps. */
struct tfd_marker {
	int64_t start_ns, end_ns;
	int64_t step_num;  /* -1: none */
	int64_t thread_id; /* its thread's id (tfd_thread.id) */
	int64_t group;	   /* its group_id, when has_group */
	uint64_t id;	   /* when has_id: the run's step id (its `id` stat) */
	/* a GetNext op's run: the iterator it read (the id of the first
	 * iterator call inside it on its thread: its root), when has_root */
	uint64_t root;
	const char *fn; /* a call's event name, interned (one pointer a name) */
	/* what it is: a step marker; an evaluation's step marker
	 * (tfd_eval_marker_name(): Keras 2's "test"), a step only on a host
	 * without other step markers; a SessionRun (TensorFlow 1's
	 * Session.run, graph mode), a step only on a host without step
	 * markers; a GetNext op's run (IteratorGetNextOp::DoCompute), the
	 * session or function run of its id read input; or a tf.function's
	 * eager call, a step on a host with neither */
	enum tfd_marker_kind kind;
	/* (the flags last: 72 bytes, not 88 with them between the words; a
	 * real TensorFlow 1 capture holds 20,000 markers until it is read) */
	bool has_group, has_id, has_root;
};

/* A FunctionRun: a tf.function's run (its step id, its thread's id, its
 * start), read to tell a training step's functions from those tf.data
 * runs; 24 bytes (a real capture holds one per element a map's function
 * made, until the host is read). */
struct tfd_fnrun {
	int64_t start_ns;
	int64_t thread_id;
	uint64_t id;
};

/* A FunctionRun's group_id (a converted trace's), when has_group. */
struct tfd_fnrun_group {
	int64_t group;
	bool has_group;
};

/* How a packed event's value is stored: none (zero), a varint, eight bytes
 * (little-endian), in its form (an iterator's id: its calls repeat it), or
 * near the event's start: a zigzag varint of value - start - the form's
 * val. TensorFlow's element ids are the clock (EnvTime::NowNanos()) when
 * the element was made, its event times that clock less the profile's
 * start: a Produce or Consume event's id is its start plus a constant,
 * give or take the element's age (2-3 bytes instead of 8). */
enum tfd_val_how { TFD_VAL_NONE, TFD_VAL_VARINT, TFD_VAL_FIXED, TFD_VAL_FORM, TFD_VAL_NEAR };

/* What an event shares with others of its form: its signature, kind and
 * flags, how its value is stored and, for TFD_VAL_FORM, the value (for
 * TFD_VAL_NEAR, the constant the value is stored from). */
struct tfd_form {
	const struct tfd_sig *sig;
	uint64_t val;
	uint8_t kind, flags, how;
};

/* What packed events refer to: their forms by index. One per capture that
 * events were read into; it outlives the hosts using it. */
struct tfd_evtab {
	struct tfd_form *form;
	size_t nform, formcap;
	size_t nval; /* iterator ids given forms of their own */
};

/* Executor time of a host's dataset functions, summed while its XSpace
 * host plane is read, the chunks then not kept as events: the function
 * step ids the reader's pre-pass collected (an open-addressing set, 0 an
 * empty slot, the id 0 apart) and per slot the sum of its chunks'
 * durations and the lowest index of a thread they ran on, packed as
 * sum << 17 | (thread + 1), 0 for none. What does not fit (a sum of 2^47
 * ns or more, a thread index of 2^17 - 1 or more) stays an event. */
#define TFD_EXEC_THREAD_BITS 17
struct tfd_exec_sums {
	uint64_t *key; /* NULL once the host is read, when coded */
	uint64_t *val;
	size_t cap;
	bool has_zero;
	uint64_t zero_val;
	/* the function and executor events packed while the table took the
	 * chunks hold, in place of a step id, its code (tfd_exec_code()): a
	 * few bytes where a random 64-bit id takes eight, and the keys can go
	 * once the host is read. Chunks of an id not in the table are then
	 * dropped as they are packed, as the XSpace reader filters them. */
	bool coded;
};

/* An open-addressing set of cap keys (any number of slots, 0 an empty
 * slot), probed linearly from id's home slot, the hash scaled to the
 * table's size: the readers' set of function step ids, and the sums made
 * of it, look ids up alike. A table read in slot order gives its keys in
 * the order of their home slots in a table of any other size. */
static inline size_t tfd_key_home(size_t cap, uint64_t id)
{
	return (size_t)(((unsigned __int128)imap_hash(id) * cap) >> 64);
}

/* The slot of id (not 0): its own, or the empty one where it would go. */
static inline size_t tfd_key_slot(const uint64_t *key, size_t cap, uint64_t id)
{
	size_t j = tfd_key_home(cap, id);

	while (key[j] && key[j] != id)
		j = j + 1 == cap ? 0 : j + 1;
	return j;
}

/* The code of step id in x: 0 for an id not in it, 1 for the id 0, else
 * 2 + its slot. */
static inline uint64_t tfd_exec_code(const struct tfd_exec_sums *x, uint64_t id)
{
	size_t j;

	if (id == 0)
		return x->has_zero ? 1 : 0;
	if (!x->cap)
		return 0;
	j = tfd_key_slot(x->key, x->cap, id);
	return x->key[j] == id ? j + 2 : 0;
}

/* The summed time of step id (its code, when x is coded) and the thread
 * (false: none summed). */
bool tfd_exec_sums_get(const struct tfd_exec_sums *x, uint64_t id, int64_t *ns, uint32_t *thread);
/* Free executor sums; NULL is allowed. */
void tfd_exec_sums_free(struct tfd_exec_sums *x);

/* What a dataset function's ops cost: the "name:type" events read inside
 * its InstantiatedCapturedFunction::Run calls or its ExecutorState::Process
 * chunks (on the thread of the scope, in time order), each one's self time
 * (net of the ops nested in it). One record per scope and op name in a
 * row; the same scope may have several (chunks on several threads). A
 * record is 12 bytes: its scope is its run's (struct tfd_fn_op_run), its
 * self time in two halves, its name an index into the host's names
 * (tfd_fn_ops.names, 24 bits) beside the op events folded into it (8 bits;
 * a full record is followed by another of the same name); a real capture
 * holds one per op a function ran, until the host is read (371,000 in a
 * real map's capture). */
struct tfd_fn_op {
	uint32_t self_lo, self_hi; /* self time, ns (tfd_fn_op_self()) */
	uint32_t name_count;	   /* name index << 8 | op events */
};

#define TFD_FN_OP_NAMES ((size_t)1 << 24) /* names a host's records index */
#define TFD_FN_OP_COUNT 255u		  /* op events a record folds */

static inline int64_t tfd_fn_op_self(const struct tfd_fn_op *o)
{
	return (int64_t)((uint64_t)o->self_hi << 32 | o->self_lo);
}

/* Add ns to o's self time (it wraps as int64_t arithmetic would). */
static inline void tfd_fn_op_add_self(struct tfd_fn_op *o, int64_t ns)
{
	uint64_t v = (uint64_t)tfd_fn_op_self(o) + (uint64_t)ns;

	o->self_lo = (uint32_t)v;
	o->self_hi = (uint32_t)(v >> 32);
}

static inline uint32_t tfd_fn_op_name_ix(const struct tfd_fn_op *o)
{
	return o->name_count >> 8;
}

static inline uint32_t tfd_fn_op_count(const struct tfd_fn_op *o)
{
	return o->name_count & 0xff;
}

/* The records of one scope in a row: from first up to the next run's. */
struct tfd_fn_op_run {
	uint64_t key;	/* the function's step id, or (by_thread) the thread's
			 * id for a Run without one */
	uint32_t first; /* its first record */
	bool by_thread; /* key is a thread id */
};

/* Function ops summed by op type. */
struct tfd_op_total {
	const char *type; /* the suffix of name: "DecodeJpegV2" */
	const char *name; /* the first op of the type seen: "map/decode:DecodeJpegV2" */
	int64_t self_ns;
	uint64_t count;
};

/* Whether an op type is a Python function's (EagerPyFunc, PyFunc,
 * PyFuncStateless): it holds the interpreter's lock (the GIL). */
bool tfd_op_is_python(const char *type);

/* Whether an op of this type draws random numbers (RandomUniform, a
 * stateless or stateful random op, a random crop's bounding box, a
 * shuffle): a function that runs one gives another result each epoch. */
bool tfd_op_is_random(const char *type);

/* Ops of one name and their sums (what tfd_fn_ops_by_type() reads). */
struct tfd_op_named {
	const char *name; /* "map/decode_jpeg:DecodeJpegV2" */
	int64_t self_ns;
	uint64_t count;
};

/* The ops v[0..n) summed by op type into *out (the caller frees it), the
 * most time first (ties by type), each type named by its first op in v;
 * returns how many types. Ops whose name has no type are left out. */
size_t tfd_fn_ops_by_type(const struct tfd_op_named *v, size_t n, struct tfd_op_total **out);

/* A host's function-op records while it is read (struct tfd_fn_op), their
 * runs, and the names they index (each address once: the capture's
 * strings). */
struct tfd_fn_ops {
	struct tfd_fn_op *v;
	size_t n, cap;
	struct tfd_fn_op_run *runs;
	size_t nruns, runs_cap;
	const char **names;
	size_t nnames, names_cap;
	struct imap name_ix; /* a name's address -> its index */
	/* the next record starts a run of its own (a part of a line begins:
	 * its records are a run apart from the part's before it) */
	bool cut;
	/* a name past the records' names (TFD_FN_OP_NAMES, or names_max when
	 * set) was met: its ops were not counted, and the read fails
	 * (tfd_fn_ops_check()) */
	bool full;
	size_t names_max;
};

/* Record i's name, and where run r ends (one past its last record). */
static inline const char *tfd_fn_op_name(const struct tfd_fn_ops *o, size_t i)
{
	return o->names[tfd_fn_op_name_ix(&o->v[i])];
}

static inline size_t tfd_fn_op_run_end(const struct tfd_fn_ops *o, size_t r)
{
	return r + 1 < o->nruns ? o->runs[r + 1].first : o->n;
}

/* Free o's arrays and zero it. */
void tfd_fn_ops_free(struct tfd_fn_ops *o);

/* The function ops of a host once it is read, summed per op name and
 * per function thread (the thread of the InstantiatedCapturedFunction
 * event whose step ran them), or, for a function called inline from an
 * iterator (a sequential map's), per the innermost iterator call. */
struct tfd_fn_op_sum {
	uint32_t thread;  /* TFD_FN_INLINE for an iterator's */
	const char *iter; /* that iterator event's (long) name, else NULL */
	const char *name;
	int64_t self_ns;
	uint64_t count;
};

#define TFD_FN_INLINE UINT32_MAX

/* Where a device's time goes in a step (device-input.md), in TensorFlow's
 * order of priority: where spans of two kinds overlap, the later kind
 * owns the time. TFD_DEV_WAIT is the host waiting for input (the
 * IteratorGetNext* spans, added by the analysis); a reader gives the rest. */
enum tfd_dev_kind {
	TFD_DEV_H2D = 0,	/* host-to-device copies (MemcpyH2D, InfeedEnqueue*) */
	TFD_DEV_COLLECTIVE = 1, /* nccl* kernels */
	TFD_DEV_WAIT = 2,	/* the host waiting for input (not read from a device) */
	TFD_DEV_D2D = 3,	/* device-to-device and peer copies */
	TFD_DEV_D2H = 4,	/* device-to-host copies */
	TFD_DEV_COMPUTE = 5,	/* every other kernel or device op */
	TFD_DEV_WAIT_HOST = 6,	/* a TPU waiting for infeed: input, as host-to-device */
	TFD_DEV__COUNT
};

struct tfd_host;

/* A time interval [s, e) in nanoseconds. */
struct tfd_interval {
	int64_t s, e;
};

/* The host waiting for input: the union of its IteratorGetNext* events,
 * of the datasets and iterators made on the threads that may run the loop
 * (MakeIterator, eager dataset ops) and of its wait for the interpreter's
 * lock after an eager GetNext (the end of its Python call,
 * TFE_Py_FastPathExecute_C, less the least such ends), sorted and
 * disjoint, in a new array of *n intervals (never NULL; the caller frees
 * it). */
struct tfd_interval *tfd_host_wait_union(const struct tfd_host *h, size_t *n);

/* A host's waits and the two parts of them the report names (the
 * datasets and iterators made, the interpreter's lock), each a union as
 * above, read in one pass while its events are there (all NULL and 0 when
 * not read). */
struct tfd_host_waits {
	struct tfd_interval *all, *creates, *gil;
	size_t nall, ncreates, ngil;
	/* the iterators the loop made: its MakeIterator of a root dataset
	 * (MakeIterator::RootDataset), eager or inside a tf.function */
	size_t nroots_made;
	/* set by the analysis before the share: stretches between the step
	 * markers the training loop spent reading another pipeline (a
	 * validation pass), sorted and disjoint; their waits and their time
	 * are not the steps' */
	struct tfd_interval *holes;
	size_t nholes;
};
/* All three; all is not kept (NULL) when skip_all (the device sweep's
 * steps hold the waits). */
void tfd_host_waits_read(const struct tfd_host *h, bool skip_all, struct tfd_host_waits *w);
void tfd_host_waits_free(struct tfd_host_waits *w);

/* qsort's order for intervals: by start, then by end. */
int tfd_interval_cmp(const void *a, const void *b);
/* The time intervals u[0..n) (sorted by start, their ends too: a union,
 * or steps that follow each other) cover inside [a, b). */
int64_t tfd_interval_overlap(const struct tfd_interval *u, size_t n, int64_t a, int64_t b);
/* v[0..n) sorted and made disjoint in place (a union); how many remain. */
size_t tfd_interval_union(struct tfd_interval *v, size_t n);
/* How many of u[0..n) (sorted by start) start at or before t: u[k - 1] is
 * the last to, none when k is 0. */
size_t tfd_intervals_started(const struct tfd_interval *u, size_t n, int64_t t);

/* A gap between two steps longer than TFD_LONG_GAP_STEPS median steps
 * and TFD_LONG_GAP_GAPS median gaps is a long one (an epoch's end, a
 * validation pass, an evaluation): a loop whose Python works between
 * every two steps has that as its cadence, not as a long gap. */
#define TFD_LONG_GAP_STEPS 2.0
#define TFD_LONG_GAP_GAPS 4.0
/* The median step and the median gap between steps of the steps sp[0..n)
 * (sorted by start; a gap runs from the latest end so far); 0 with fewer
 * than two steps. */
void tfd_step_gap_medians(const struct tfd_interval *sp, size_t n, int64_t *med, int64_t *medgap);
/* Whether a gap of gap ns between two steps is a long one. */
bool tfd_long_step_gap(int64_t gap, int64_t med, int64_t medgap);

/* One span of device activity as a reader found it: its step by
 * group_id when the event had one. */
struct tfd_dev_span {
	int64_t start_ns, end_ns;
	int64_t group;
	uint8_t kind; /* enum tfd_dev_kind */
	bool has_group;
};

/* What a step's time went to, by kind (enum tfd_dev_kind: TFD_DEV_WAIT is
 * the host waiting for input), each instant owned by the kind of highest
 * priority active then. */
struct tfd_dev_step {
	int64_t group_id;
	int64_t owned[TFD_DEV__COUNT];
};

/* What a host's device planes held, reduced as they were read
 * (tfd_device_sweep): per step what each kind owned, the same over the
 * host's whole span (for a capture without steps), and per kind the
 * spans read and their summed time (overlaps counted twice). */
struct tfd_device {
	bool read;		    /* a device span was read: input is TensorFlow's */
	bool tpu;		    /* a /device:TPU plane was read */
	size_t nplanes;		    /* device planes or processes */
	uint64_t h2d_bytes;	    /* moved by copies to the device (memcpy_details) */
	struct tfd_dev_step *steps; /* one per host step; NULL for a host read
				     * from a partial (only its counts are kept) */
	size_t nsteps;
	int64_t span_owned[TFD_DEV__COUNT]; /* made only for a host without steps */
	int64_t kind_ns[TFD_DEV__COUNT];
	uint64_t kind_n[TFD_DEV__COUNT];
	/* the host's own copies to the device (InfeedEnqueue*, MemcpyH2D ops)
	 * as read, until the sweep takes them */
	struct tfd_dev_span *host_ops;
	size_t nhost_ops, host_ops_cap;
};

/* A source of device spans in time order (start, then any end), for
 * tfd_device_sweep(): next() gives the next one, false at the end. */
struct tfd_dev_source {
	bool (*next)(void *ctx, struct tfd_dev_span *out);
	void *ctx;
};

/* Spans in memory, given from `at` on. */
struct tfd_dev_array {
	struct tfd_dev_span *v;
	size_t n, at;
};
/* A source over a->v[0..n): the spans are sorted by start here and given
 * from the first (a is the source's ctx; it must outlive the sweep). */
struct tfd_dev_source tfd_dev_array_source(struct tfd_dev_array *a);

/* The kind of a device event by its name (TensorFlow's classification of
 * GPU events: MemcpyH2D / HtoD, MemcpyD2H / DtoH, MemcpyD2D / DtoD / P2P,
 * nccl* collectives, the rest compute; on a TPU an infeed op is the device
 * waiting for the host, an outfeed one a device-to-host copy). */
enum tfd_dev_kind tfd_dev_kind_of(const char *name, size_t len, bool tpu);
/* What the host's device is called in reports: "TPU", "GPU" (device
 * planes were read), or "device" (only host-side copies were seen). */
const char *tfd_device_word(const struct tfd_device *d);
/* Whether a host-plane op is a host-side copy to the device
 * (InfeedEnqueue*, MemcpyH2D). */
bool tfd_host_op_is_h2d(const char *name, size_t len);
/* What a device plane's line (a Chrome device process's thread) is, by
 * its name: a GPU stream ("Stream #N(...)"), a TPU's "XLA Ops", or
 * neither (0). */
enum { TFD_DEVLINE_STREAM = 1, TFD_DEVLINE_XLA_OPS = 2 };
unsigned tfd_dev_line_class(const char *name, size_t len);
/* Whether a line holds the device's own events, given the classes of
 * every line of its plane (plane, the tfd_dev_line_class() bits or'ed):
 * only the streams when the plane has one, else only XLA Ops when it has
 * it, else any line that is not one TensorFlow derives from them
 * ("Steps", "TensorFlow Ops", "TensorFlow Name Scope", "XLA Modules", ...). */
bool tfd_dev_line_wanted(const char *name, size_t len, unsigned plane);
/* The bytes of a copy from its memcpy_details text ("size:N dest:D ..."),
 * 0 when it has none. */
uint64_t tfd_memcpy_bytes(const char *details, size_t len);

/* A Python op a dataset function ran (struct tfd_host.py_ops). */
struct tfd_py_op {
	int64_t s, e;
	/* the function it ran in (one function's calls are alike, another's
	 * can last ten times as long): while the host is read its scope's key
	 * (a thread's id with by_thread, else a step id); once
	 * tfd_fn_ops_resolve() ran, 1 + the index of the thread of the
	 * function's event, or its inline iterator's stage path hashed with
	 * the top bit set, 0 unknown */
	uint64_t fn;
	bool by_thread;
};

/* Whether a host's Python ops (struct tfd_host.py_ops) ran side by side or
 * took turns at the interpreter's lock (tfd_python_overlap, analysis.h). */
enum tfd_py_overlap { TFD_PY_UNKNOWN, TFD_PY_SIDE_BY_SIDE, TFD_PY_TAKE_TURNS };

struct tfd_host {
	const char *name;	     /* XSpace hostnames[0], else the file name less its suffix */
	const struct tfd_evtab *tab; /* of its threads' events */
	const char *path;	     /* file it was read from */
	enum tfd_format format;
	bool gzipped;
	struct tfd_plane_info *planes;
	size_t nplanes;
	struct tfd_thread *threads;
	size_t nthreads;
	size_t nevents;		/* kept events on all threads */
	size_t niterators;	/* iterator events */
	size_t nloop_inputs;	/* of them, a loop inside a tf.function's input's */
	size_t nproduce;	/* Produce + Consume events */
	size_t nfunctions;	/* dataset-function events (a size hint) */
	bool has_host_plane;	/* a "/host:CPU" plane or process was found */
	struct tfd_step *steps; /* sorted by start; from group_id stats */
	size_t nsteps;
	/* step markers read (tfd_host_step_marker); made the steps by
	 * tfd_host_steps_from_markers() when no event had a group_id */
	struct tfd_marker *markers;
	size_t nmarkers, markers_cap;
	/* FunctionRun events read (tfd_host_fnrun), until the markers make the
	 * steps; then the step ids of those outside every step marker (in a
	 * group that is no step's, in a converted trace), sorted:
	 * functions tf.data runs (prefetch_to_device's generator pulls the host
	 * pipeline with an IteratorGetNext op in one), not a step's, whose
	 * GetNext is the pipeline's own, no wait of the training loop's */
	struct tfd_fnrun *fnruns;
	size_t nfnruns, fnruns_cap;
	/* their groups, one per run (fnruns_cap of room), NULL until a run
	 * has one */
	struct tfd_fnrun_group *fnrun_groups;
	uint64_t *loose_fn_ids;
	size_t nloose_fn_ids;
	/* the steps are the markers' extents (their group_ids, if any, are
	 * not the steps': a device span is routed to its steps by time) */
	bool steps_from_markers;
	/* ... and those markers are the session's runs (SessionRun): the host
	 * had no step marker */
	bool steps_from_session_runs;
	/* read for the least memory (--low-memory, or memory short for the
	 * host plane: tfd_memory_budget()), its iterator events left in the
	 * file; short_mb: the budget in MB when that was why (else 0) */
	bool low_memory;
	size_t short_mb;
	/* ... or the eager calls of the tf.functions whose runs read input
	 * (TensorFlow 2 without step markers: a Keras fit, a loop calling a
	 * step function that takes the iterator) */
	bool steps_from_function_calls;
	/* evaluation step markers (tfd_eval_marker_name()) left out of the
	 * steps beside training ones: the evaluation runs between the steps */
	size_t eval_markers;
	/* ... and, stepped by its session's runs, the runs left out as an
	 * evaluation's (tfd_host_steps_from_markers()) */
	size_t eval_runs;
	/* ... and its session's runs that read no input (an iterator's
	 * initializer, a summary's fetch): between the steps, sorted, the
	 * outermost of each thread */
	struct tfd_interval *idle_runs;
	size_t nidle_runs;
	int64_t span_start_ns, span_end_ns; /* extent of every host event */
	/* executor chunks summed as they were read (NULL: they are events) */
	struct tfd_exec_sums *exec_sums;
	/* set by a reader that kept executor chunks only for the functions
	 * captured on the host: tfd_capture_finish() need not check again */
	bool exec_filtered;
	/* the ops its dataset functions ran (read even when the op events
	 * themselves are not kept): per function scope while the host is read,
	 * then (tfd_capture_finish) summed per function thread or inline
	 * iterator and op name,
	 * and by op type over every scope (what dump lists) */
	struct tfd_fn_ops fn_ops;
	struct tfd_fn_op_sum *fn_sums;
	size_t nfn_sums;
	struct tfd_op_total *fn_op_types;
	size_t nfn_op_types;
	/* the Python ops (tf.py_function, numpy_function) its dataset
	 * functions ran, each's extent and function, in no order: whether they
	 * ran side by side or took turns at the interpreter's lock */
	struct tfd_py_op *py_ops;
	size_t npy_ops, py_ops_cap;
	/* its device planes, reduced to the step breakdown as they were read */
	struct tfd_device dev;
	/* a reader's work on it still running on another thread (the device
	 * planes' sweep of a capture loaded for analysis, opts->defer_device):
	 * dev and the device planes' event counts are known once
	 * tfd_host_settle() returns; NULL when nothing runs */
	struct tfd_pending *pending;
	/* what its reader kept to read its iterator, Produce and Consume
	 * events again from the file after the read (the file's bytes, the
	 * plane's metadata); NULL when it kept nothing */
	struct tfd_source *source;
};

/* A host's events, one thread after another, each thread's in order: the
 * next one and its thread into *thread and *e, false at the end. */
struct tfd_event_source {
	void *ctx;
	bool (*next)(void *ctx, uint32_t *thread, struct tfd_event *e);
};

/* A host's iterator, Produce and Consume events read again from its file
 * after the read, none packed (docs/performance.md, "Calls held in time
 * order"): what the XSpace reader keeps of a mapped host plane
 * (src/input/xspace_source.c). */
struct tfd_source {
	/* A cursor over h's events of those kinds, thread after thread in
	 * the file's order, into *out (h gives the threads); close() frees
	 * it and says how many events it found malformed. */
	void (*open)(struct tfd_source *s, const struct tfd_host *h, struct tfd_event_source *out);
	/* ... over thread t's events alone (several may be open at once) */
	void (*open_thread)(struct tfd_source *s, const struct tfd_host *h, size_t t,
			    struct tfd_event_source *out);
	/* ... the same, each event with its kind, times and the signature of
	 * its name alone (its stats not read: no value, flags or parameters;
	 * what a pass that looks for the iterator call around another event
	 * needs) */
	void (*open_times)(struct tfd_source *s, const struct tfd_host *h, size_t t,
			   struct tfd_event_source *out);
	size_t (*close)(struct tfd_source *s, struct tfd_event_source *cur);
	/* what the reader kept freed (not the bytes) */
	void (*free)(struct tfd_source *s);
	/* the bytes it reads, given by the loader (tfd_source_own()):
	 * release() gives them back and says whether the file shrank */
	enum tfd_status (*release)(void *arg, struct tfd_err *err);
	void *release_arg;
	/* events a merged cursor (struct tfd_ev_mcursor) missed in the file
	 * since the read (a file changed under the analysis): freeing the
	 * source reports them */
	size_t failed;
};

/* s reads bytes the loader gives it: release(arg) once it is freed. */
void tfd_source_own(struct tfd_source *s, enum tfd_status (*release)(void *, struct tfd_err *),
		    void *arg);
/* s (NULL: nothing) freed, its bytes given back: a file that shrank
 * meanwhile is the error. */
enum tfd_status tfd_source_free(struct tfd_source *s, struct tfd_err *err);

/* TFD_E_LIMIT when h's function-op records met more op names than they
 * index (tfd_fn_ops.full), naming how many. */
enum tfd_status tfd_fn_ops_check(const struct tfd_host *h, struct tfd_err *err);

/* Work a reader left running for a host: settle() waits for it, puts what
 * it made into h, frees it and says how it went (a malformed device plane
 * is an error then, as it is when the plane is read on the spot). */
struct tfd_pending {
	enum tfd_status (*settle)(struct tfd_pending *pd, struct tfd_host *h, struct tfd_err *err);
};

/* h's pending work settled (TFD_OK when there was none). */
enum tfd_status tfd_host_settle(struct tfd_host *h, struct tfd_err *err);

struct tfd_capture {
	struct tfd_arena arena;
	struct tfd_host *hosts;
	size_t nhosts;
	const char *run; /* run directory name when a log directory was given */
	/* what discovery chose and skipped, one line each ("analyzed run 'X':
	 * the newest of 3 runs by name", "skipped a.trace.json.gz: ...") */
	const char **notes;
	size_t nnotes;
	/* a run of executor chunks of one step on a thread, one after the
	 * other, is packed as one event: the first chunk's start, the sum of
	 * the durations (what the capacity pass reads of them; real captures
	 * run a dataset function as 5-20 chunks). The readers set it unless
	 * keep_other (xprof mode and `dump --all` see every chunk). */
	bool fold_exec;
};

/* The default ceiling on gzip inflation (tfd_load_opts.max_inflated). */
#define TFD_INFLATE_RATIO ((size_t)100)
#define TFD_INFLATE_FLOOR ((size_t)64 << 20)
#define TFD_INFLATE_MAX ((size_t)8 << 30)

struct tfd_load_opts {
	const char *run; /* pick this run under plugins/profile (NULL: newest) */
	bool keep_other; /* keep non-tf.data events (needed by --mode xprof) */
	/* called before each file (events == 0) and after it is decoded */
	void (*progress)(const char *file, size_t index, size_t nfiles, size_t events);
	/* tighter limits (0: the defaults below), e.g. for fuzzing */
	size_t max_events;   /* kept events per host */
	size_t max_inflated; /* bytes after gzip decompression; 0: the default
			      * ceiling (TFD_INFLATE_RATIO times the gzip
			      * data, within TFD_INFLATE_FLOOR..MAX) */
	/* threads that read (0: one per core the process may use, at most 8):
	 * files at once, and the lines of one host plane in blocks of about
	 * block_bytes (0: 4 MiB; a plane of less than two blocks is read on
	 * one thread) */
	int jobs;
	size_t block_bytes;
	/* tests: read a Chrome trace with yajl's full parse in both passes
	 * instead of the structural scan and its event reader (chrome.c) */
	bool chrome_no_scan;
	/* tests: a Chrome document the scan finds invalid and yajl does not is
	 * an error (the scan's mistake shown), not read again by yajl */
	bool chrome_scan_strict;
	/* tests: the scan takes every document for invalid once it has read
	 * events, so that yajl reads it again (to check, then to read) */
	bool chrome_scan_doubt;
	/* tests: read an XSpace executor chunk's id and step in two walks
	 * over its stats instead of one, every stat with the general parser,
	 * and every iterator parameter without the cache of those read
	 * before (xspace.c) */
	bool xspace_two_walks;
	/* shard_count > 0: of the host files discovery chose (in host order),
	 * load only those whose index k has k % shard_count == shard_index;
	 * the discovery notes are kept whole (fleet tasks: analyze --partial
	 * --shard) */
	size_t shard_index, shard_count;
	/* the capture is for a lean analysis (tfd_analyze_lean), which settles
	 * each host's pending work where it needs it: a large device plane
	 * may then be swept on another core while the analysis builds the
	 * host's iterator graph (struct tfd_host.pending) */
	bool defer_device;
	/* --low-memory: such a capture's mapped host planes leave their
	 * iterator, Produce and Consume events in the file, read again from
	 * there by each pass (struct tfd_ev_mcursor) */
	bool leave_in_file;
};

/* opts (NULL: the defaults) with defer_device set to defer. */
static inline struct tfd_load_opts tfd_load_opts_defer(const struct tfd_load_opts *opts, bool defer)
{
	struct tfd_load_opts o = opts ? *opts : (struct tfd_load_opts){0};

	o.defer_device = defer;
	return o;
}

/* Names for hosts whose files carry the same host name inside (the workers'
 * files of one run, all saying "localhost" or one address): out[i] is NULL
 * where names[i] is unique, else a new string "NAME (FILE)", FILE the base
 * name of paths[i] (free each). Returns how many hosts were renamed and,
 * in note (len bytes, may be NULL), one line saying so. */
size_t tfd_host_names_apart(const char *const *names, const char *const *paths, size_t n,
			    char **out, char *note, size_t len);
/* tfd_host_names_apart() on a loaded capture's hosts, in place, with its
 * note added to cap->notes. */
void tfd_capture_name_hosts_apart(struct tfd_capture *cap);

/* Free a capture, its arena and every host, thread and event; NULL is
 * allowed. Analyses made of it must be freed first. */
void tfd_capture_free(struct tfd_capture *cap);

/* Build a capture programmatically (unit-test fixtures and the synthesizer).
 * Events may be added in any order; tfd_capture_finish() sorts them. */
struct tfd_capture *tfd_capture_new(void);
/* A new, empty host named name (copied whole): valid until the next host is
 * added (the array may move). */
struct tfd_host *tfd_capture_add_host(struct tfd_capture *cap, const char *name);
/* Returns the index of the thread with this id, creating it if needed. */
uint32_t tfd_host_thread(struct tfd_capture *cap, struct tfd_host *h, int64_t tid,
			 const char *name);
/* Append an event; the name decides its kind. Returns it for stats: valid
 * until the next event or thread is added to the host, or it is finished. */
struct tfd_event *tfd_host_add_event(struct tfd_capture *cap, struct tfd_host *h, uint32_t thread,
				     const char *name, int64_t start_ns, int64_t dur_ns);
/* Record a stat by name: id, parent_id, element_id, group_id, _a, or an
 * iterator parameter (kept as text). A parameter or parent changes the
 * event's signature (e->sig) to the interned one with it. */
void tfd_event_set_stat_int(struct tfd_capture *cap, struct tfd_event *e, const char *key,
			    int64_t v);
/* What a stat's name makes of it (the readers classify a stat metadata's
 * name once, not each stat's). */
enum tfd_stat {
	TFD_STAT_PARAM = 0, /* an iterator parameter */
	TFD_STAT_ID,
	TFD_STAT_PARENT,
	TFD_STAT_ELEMENT,
	TFD_STAT_GROUP,
	TFD_STAT_ASYNC,
	TFD_STAT_META /* bookkeeping (long_name, step_name, ...): not kept */
};
/* What a stat key is for the model (id, parent_id, element_id, ...). */
enum tfd_stat tfd_stat_of(const char *key);
/* tfd_event_set_stat_int() with the name already classified: what =
 * tfd_stat_of(key). */
void tfd_event_set_stat_as(struct tfd_capture *cap, struct tfd_event *e, enum tfd_stat what,
			   const char *key, int64_t v);
/* The same for a string stat (a decimal id, or a parameter), interned in
 * cap; nothing is cut. */
void tfd_event_set_stat_str(struct tfd_capture *cap, struct tfd_event *e, const char *key,
			    const char *v);
/* tfd_event_set_stat_str() with the name already classified: what =
 * tfd_stat_of(key) (a parameter's name is looked for among the
 * bookkeeping ones: a dozen comparisons a stat). */
void tfd_event_set_stat_str_as(struct tfd_capture *cap, struct tfd_event *e, enum tfd_stat what,
			       const char *key, const char *v);
/* Note an event's extent for step and span accounting (also for events
 * that are not kept). */
void tfd_host_note(struct tfd_capture *cap, struct tfd_host *h, bool has_group, int64_t group_id,
		   int64_t start_ns, int64_t end_ns);
/* Whether an event name is a step marker's by its name alone, when it
 * carries a `_r` (root) or `step_num` stat: a name that starts with
 * "train", "test" or "TraceContext" and holds no '/', or Keras' "Profiled
 * batch". */
bool tfd_step_marker_name(const char *name);
/* Whether an event of this name that carries a `_r` (root) stat is a step
 * marker, whatever its name, as TensorFlow's converter takes one
 * (Trace("step", _r=1) marks a step as Trace("train", _r=1) does): every
 * name but those of the roots TensorFlow itself writes (FunctionRun,
 * SessionRun, RunGraph, ExecutorState::Process), which are no steps. */
bool tfd_step_root_name(const char *name);
/* Whether a step marker's name is an evaluation's: its first word (up to
 * a space, '_', '-', ':' or a digit) is test, eval, evaluate, evaluation,
 * val, valid, validate, validation or predict, in any case (Keras 2 marks
 * its validation and predict batches "test" and "predict", the training
 * ones "train"). Beside other step markers these are no steps. */
bool tfd_eval_marker_name(const char *name);
/* Whether an event of this name is a GetNext op's run, whose `id` is the
 * step id of the session or function run it read input for
 * (IteratorGetNextOp::DoCompute; IteratorGetNextAsOptionalOp::DoCompute,
 * Keras 3's steps_per_execution above 1). */
bool tfd_get_next_run_name(const char *name);
/* Whether an event of this name is a tf.function's eager call
 * (EagerLocalExecute: __inference_...). */
bool tfd_fn_call_name(const char *name);
/* Note a FunctionRun of step id id on host h, on the thread of id
 * thread_id, from start_ns, in the group group when has_group. */
void tfd_host_fnrun(struct tfd_host *h, int64_t thread_id, uint64_t id, int64_t start_ns,
		    bool has_group, int64_t group);
/* FunctionRun i's group in *group (false: none). */
static inline bool tfd_fnrun_group(const struct tfd_host *h, size_t i, int64_t *group)
{
	if (!h->fnrun_groups || !h->fnrun_groups[i].has_group)
		return false;
	*group = h->fnrun_groups[i].group;
	return true;
}
/* Whether id is the step id of a function run outside every step marker
 * (tfd_host.loose_fn_ids). */
bool tfd_host_loose_fn(const struct tfd_host *h, uint64_t id);
/* Note a step marker of the given name on host h, on the thread of id
 * thread_id, in the step of group_id group when has_group. */
void tfd_host_step_marker(struct tfd_host *h, const char *name, int64_t thread_id, int64_t step_num,
			  int64_t start_ns, int64_t end_ns, bool has_group, int64_t group);
/* Note a SessionRun (a TensorFlow 1 Session.run; its `id` when has_id)
 * on host h likewise: the steps of a host that has no step marker, those
 * that read input when a GetNext's run says so (tfd_host_get_next()). */
void tfd_host_session_run(struct tfd_host *h, int64_t thread_id, int64_t start_ns, int64_t end_ns,
			  bool has_group, int64_t group, bool has_id, uint64_t id);
/* Note that a GetNext op ran in the session or function run of step id id;
 * returns its marker's index in h->markers (tfd_host_get_next_open()). */
size_t tfd_host_get_next(struct tfd_host *h, uint64_t id);
/* A reader's last GetNext op's run whose iterator is not known yet: its
 * thread, its marker (tfd_host_get_next()) and its end. The first
 * iterator call after it on its thread, when it starts inside it, is the
 * iterator it read (its root); a thread's events come in time order. */
struct tfd_get_next_open {
	bool open;
	int64_t thread_id;
	size_t k;
	int64_t end_ns;
};
/* Note that a GetNext op ran in the run of step id id on host h, on the
 * thread of id thread_id, until end_ns: o waits for its iterator. */
void tfd_host_get_next_open(struct tfd_host *h, struct tfd_get_next_open *o, int64_t thread_id,
			    uint64_t id, int64_t end_ns);
/* An iterator call e on the thread of id thread_id: the iterator the open
 * GetNext o read when on its thread and inside it; either way the first
 * after it there, which closes o. */
void tfd_host_get_next_iterator(struct tfd_host *h, struct tfd_get_next_open *o, int64_t thread_id,
				const struct tfd_event *e);
/* Note a tf.function's eager call (EagerLocalExecute: __inference_...,
 * its event name name, interned) on host h, on the thread of id
 * thread_id: a step of a host without step markers or session runs when a
 * function run in it read input. */
void tfd_host_fn_call(struct tfd_host *h, const char *name, int64_t thread_id, int64_t start_ns,
		      int64_t end_ns);
/* Note marker m (a copy) on host h. */
void tfd_host_add_marker(struct tfd_host *h, const struct tfd_marker *m);
/* A host with step markers: each outermost marker becomes a step (group
 * ids 0, 1, ... in time order), as TensorFlow's converter groups a raw
 * capture; a marker inside another on its thread is part of it. A host
 * whose events carry group_ids too (a trace the converter wrote: it gives
 * a group to every root event, a tf.data function's run as well as a
 * step) keeps the groups that hold a marker and drops the others; when no
 * marker has a group (Keras 3's "Profiled batch", which the converter does
 * not take for a marker), the markers are the steps, as in the raw
 * capture. The session's runs (SessionRun) are the markers of a host
 * that has no other, but for an evaluation's: the runs reading, alone, an
 * iterator read in at most half as many runs as the one read most,
 * between the first and the last run of the iterators read more, or
 * before or after those in no more runs than a pass between (a
 * graph-mode Keras validation pass, a loop's eval iterator every N
 * steps); a host with markers drops them. A host with neither
 * takes the eager calls of its tf.functions whose runs read input (at
 * least TFD_FN_CALL_STEPS_MIN of them): those of the function called most,
 * and of another not called in runs (one called in runs is an
 * evaluation's, between the steps). Frees the markers either way. Called
 * by a reader before anything reads the steps (the device sweep), and by
 * tfd_capture_finish(); idempotent. */
void tfd_host_steps_from_markers(struct tfd_capture *cap, struct tfd_host *h);
/* Fewer function calls reading input than this step no host: one or two
 * calls are a loop run inside a function, not a loop of steps. */
#define TFD_FN_CALL_STEPS_MIN 3
/* Sort every thread's events; must be called once all events are in. */
enum tfd_status tfd_capture_finish(struct tfd_capture *cap, struct tfd_err *err);

/* Classify an event name. */
enum tfd_ev_kind tfd_event_kind_of(const char *name);
/* Look up an iterator parameter; NULL if absent. */
const char *tfd_event_param(const struct tfd_event *e, const char *key);

/* ---- reading packed events ---------------------------------------------- */

struct tfd_ev_cursor {
	const uint8_t *p, *end; /* p: the next event */
	int64_t start;
	const struct tfd_form *form;
};

static inline void tfd_ev_begin(struct tfd_ev_cursor *c, const struct tfd_host *h,
				const struct tfd_thread *th)
{
	c->p = th->evbuf;
	c->end = th->evbuf ? th->evbuf + th->evlen : NULL;
	c->start = 0;
	c->form = h->tab ? h->tab->form : NULL;
}

/* A varint the capture wrote itself (no checks). */
static inline uint64_t tfd_ev_varint(const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = p[0] & 0x7f;

	if (p[0] < 0x80) {
		*pp = p + 1;
		return v;
	}
	for (unsigned i = 1;; i++) {
		v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (p[i] < 0x80) {
			*pp = p + i + 1;
			return v;
		}
	}
}

static inline int64_t tfd_ev_unzig(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline uint64_t tfd_ev_zig(int64_t v)
{
	return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

/* Write v as a varint at q (room for 10 bytes); the end of it. */
static inline uint8_t *tfd_ev_put_varint(uint8_t *q, uint64_t v)
{
	while (v >= 0x80) {
		*q++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*q++ = (uint8_t)v;
	return q;
}

/* The next event into *e; false at the end. */
__attribute__((always_inline)) static inline bool tfd_ev_next(struct tfd_ev_cursor *c,
							      struct tfd_event *e)
{
	const uint8_t *p = c->p;
	const struct tfd_form *f;

	if (p >= c->end)
		return false;
	c->start += tfd_ev_unzig(tfd_ev_varint(&p));
	e->start_ns = c->start;
	e->dur_ns = tfd_ev_unzig(tfd_ev_varint(&p));
	f = &c->form[tfd_ev_varint(&p)];
	e->sig = f->sig;
	e->kind = f->kind;
	e->flags = f->flags;
	switch (f->how) {
	case TFD_VAL_NONE:
		e->id = 0;
		break;
	case TFD_VAL_VARINT:
		e->id = tfd_ev_varint(&p);
		break;
	case TFD_VAL_FIXED:
		e->id = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			(uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
			(uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
		p += 8;
		break;
	case TFD_VAL_NEAR:
		e->id = (uint64_t)c->start + f->val + (uint64_t)tfd_ev_unzig(tfd_ev_varint(&p));
		break;
	default:
		e->id = f->val;
		break;
	}
	c->p = p;
	return true;
}

/* A thread's events in order, those a read left in the file
 * (struct tfd_thread.nfile) taken from its host's source where the bits
 * say: every pass that reads a thread's events reads them so.
 *
 *	struct tfd_ev_mcursor c;
 *
 *	for (tfd_evm_begin(&c, h, t); tfd_evm_next(&c, &e);)
 *		...;
 *	tfd_evm_end(&c);
 */
struct tfd_ev_mcursor {
	struct tfd_ev_cursor pk;
	const struct tfd_thread *th;
	struct tfd_source *src; /* NULL: every event is packed */
	struct tfd_event_source fs;
	size_t i; /* the next event's bit */
	bool failed;
};

/* A cursor over thread t of h: a thread with events in the file opens a
 * cursor over its lines (h->source's; without a source none of them is
 * read, and the cursor counts as failed). */
void tfd_evm_begin(struct tfd_ev_mcursor *c, const struct tfd_host *h, size_t t);
/* The same, the events from the file with their kind, times and name
 * alone (struct tfd_source.open_times): for the passes that read no more
 * of an iterator, Produce or Consume event. */
void tfd_evm_begin_times(struct tfd_ev_mcursor *c, const struct tfd_host *h, size_t t);
/* tfd_evm_next() of a thread with events in the file: false at the end,
 * or at an event the file no longer holds (the cursor failed). */
bool tfd_evm_next_mixed(struct tfd_ev_mcursor *c, struct tfd_event *e);
/* The cursor closed: an event it missed in the file is counted on the
 * source (struct tfd_source.failed). */
void tfd_evm_end(struct tfd_ev_mcursor *c);

__attribute__((always_inline)) static inline bool tfd_evm_next(struct tfd_ev_mcursor *c,
							       struct tfd_event *e)
{
	if (__builtin_expect(c->src == NULL, 1))
		return tfd_ev_next(&c->pk, e);
	return tfd_evm_next_mixed(c, e);
}

/* Every event of thread th of h, unpacked (tests, dump): the caller frees
 * the array (NULL for none). */
struct tfd_event *tfd_thread_unpack(const struct tfd_host *h, const struct tfd_thread *th);

/* Keep only the events of th that keep(e, ctx) holds for, in place (h:
 * th's host); the number dropped. th->kinds stays as it was. The events a
 * read left in the file (th->nfile) are kept, and keep() does not see
 * them. */
size_t tfd_thread_filter(const struct tfd_host *h, struct tfd_thread *th,
			 bool (*keep)(const struct tfd_event *e, void *ctx), void *ctx);
/* The same, keep() seeing the events left in the file too, read back from
 * h's source in their place with their kind, times and name alone
 * (tfd_evm_begin_times(); they stay whatever it says: the iterator,
 * Produce and Consume events every caller keeps). */
size_t tfd_thread_filter_times(const struct tfd_host *h, struct tfd_thread *th,
			       bool (*keep)(const struct tfd_event *e, void *ctx), void *ctx);

/* Hard limits that keep a hostile file from exhausting memory. */
#define TFD_MAX_EVENTS_PER_HOST (200u * 1000u * 1000u)
#define TFD_MAX_PARAMS 32
#define TFD_MAX_NAME_LEN 65536
/* Event times (ns) lie within +-2^61 and last at most 2^45 ns (9.8 hours):
 * sums over millions of events then stay far from int64 overflow. */
#define TFD_MAX_TIME_NS (1ull << 61)
#define TFD_MAX_DURATION_NS (1ull << 45)

_Static_assert(sizeof(struct tfd_event) == 32, "an event is 32 bytes");
_Static_assert(TFD_MAX_DURATION_NS < (1ull << 46), "durations fit dur_ns's 47 bits");
_Static_assert(TFD_MAX_PARAMS < 65536 && TFD_EVF_ASYNC < 32 && TFD_EV_EXEC < 8,
	       "counts fit their bits, flags and kind one byte of a form's key");

#endif
