/* graph.h - the iterator graph of one host: the model the analysis passes
 * (src/analysis) read; not part of the command line.
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

#include "tfd/capture.h"
#include "tfd/err.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/times.h"
#include "tfd/vec.h"

struct iter {
	uint64_t id;
	uint64_t parent_id;
	bool has_parent;
	const char *long_name;
	int parent; /* iterator index, -1 */
	int stage;
	int state;		       /* cycle detection: 0 new, 1 on stack, 2 done */
	int64_t first_start, last_end; /* its calls' first start, last end */
	int64_t max_dur;	       /* longest call */
	/* the iterator made before it with the same id (TensorFlow's ids are
	 * addresses: a later iterator can reuse a dead one's), -1 none */
	int id_next;
	/* its dataset's name (the `name` stat, "PrefetchDataset:15"), NULL
	 * none: another dataset's iterator at its address is another one;
	 * name_sig the last signature seen to carry it */
	const char *dname;
	const struct tfd_sig *name_sig;
	/* its calls: icalls[call_off .. call_off + ncalls), sorted by start,
	 * from tfd_graph_list_calls(); ncalls (counted by the build) stays
	 * when the list goes */
	size_t call_off, ncalls;
	/* a copy of its first call's event (host_ctx.samples), which outlives
	 * the host's events */
	const struct tfd_event *sample;
	/* while the threads are scanned: its pair with the thread being
	 * scanned (pair_thread), -1 before its first call */
	int pair;
	uint32_t pair_thread;
	/* the signature of its last call read (its parameters): a call with
	 * the same one changes no parameter */
	const struct tfd_sig *last_sig;
	/* the last numeric value read of each parameter AUTOTUNE changes
	 * (enum tfd_param_kind), 0 none */
	double last_par[3];
	/* made from its inputs (their long names and parent ids): the
	 * capture holds none of its calls, each outlasting it (a shuffle
	 * buffer filling, an element slower than the capture) */
	bool absent;
};

/* The parameters AUTOTUNE changes while a pipeline runs, as TensorFlow's
 * iterator events carry them. */
enum tfd_param_kind {
	TFD_PARAM_PARALLELISM = 0, /* `parallelism`: calls in flight */
	TFD_PARAM_CYCLE = 1,	   /* `cycle_length`: an interleave's open inputs */
	TFD_PARAM_BUFFER = 2,	   /* `buffer_limit`: a prefetch's elements */
};

/* The parameter names of enum tfd_param_kind, in its order. */
extern const char *const tfd_param_names[3];

/* A numeric parameter an iterator's call carried, where it differs from
 * its call before on that thread (AUTOTUNE changes it; TensorFlow writes
 * "unavailable" when its lock is busy: those calls are skipped). */
struct tfd_par_change {
	int iter;
	int what;     /* enum tfd_param_kind */
	int64_t t_ns; /* the call's start */
	double value;
};

/* What calls have in common: their iterator and thread. A host's calls
 * have few of these (an iterator's calls run on a few threads), one made
 * the first time an iterator's call is seen on a thread. */
struct call_pair {
	int iter;
	uint32_t thread; /* index into the host's threads */
};

/* 4 bytes: one per iterator event. Its times are the host_ctx's (its start
 * and duration), read while the threads are scanned: the events are not
 * read after (a lean build gives them back as it goes). Its iterator and
 * thread are its pair's (call_iter(), call_thread()), kept apart
 * (struct call_pairs: a byte a call where the host has fewer than 256
 * pairs; 8 bytes a call with the pair beside the parent, 38.7 % of an
 * iterator-dense capture's size at the peak). */
struct call {
	/* call index, -1; until tfd_link_calls(): the nearest enclosing
	 * iterator call on the thread (while linking: a code, link.c) */
	signed int parent : 29;
	unsigned int link : 3; /* enum tfd_link_kind (analysis: link.c) */
};

/* A host's threads are indexed in 29 bits (a host holds far fewer). */
#define TFD_GRAPH_MAX_THREADS (1u << 29)
_Static_assert(sizeof(struct call) == 4, "a call is 4 bytes");
/* a call index, and the codes of link.c (-3 - index), in 29 signed bits */
_Static_assert(TFD_MAX_EVENTS_PER_HOST < (1u << 28) - 3, "parent bits");

/* Each call's pair (an index into the pairs), in w bytes a call (1, 2 or
 * 4: as many as the host's number of pairs needs). */
struct call_pairs {
	void *v;
	unsigned w;
};

static inline uint32_t call_pairs_at(const struct call_pairs *cp, size_t k)
{
	if (cp->w == 1)
		return ((const uint8_t *)cp->v)[k];
	if (cp->w == 2)
		return ((const uint16_t *)cp->v)[k];
	return ((const uint32_t *)cp->v)[k];
}

/* Set call k's pair (it fits cp's width). */
static inline void call_pairs_put(struct call_pairs *cp, size_t k, uint32_t pair)
{
	if (cp->w == 1)
		((uint8_t *)cp->v)[k] = (uint8_t)pair;
	else if (cp->w == 2)
		((uint16_t *)cp->v)[k] = (uint16_t)pair;
	else
		((uint32_t *)cp->v)[k] = pair;
}

/* The calls of one iterator name (its long name, interned) that ran a
 * function inline whose ops ran on another thread, and how long those
 * functions waited for their ops (their time less the ops'). */
struct tfd_inline_wait {
	const char *iter;
	uint64_t calls;
	int64_t run_ns, wait_ns; /* those functions' time, and its wait */
};

/* A host's dataset-function calls (struct tfd_fn_call in
 * src/analysis/passes.h), packed in (thread, event) order, a few bytes each
 * (a tf.data-heavy host has one per map element): varints of the call's
 * thread less the previous call's, its start less the previous call's
 * (zigzag), its work (zigzag), and where the work ran (0 unknown, else 1 +
 * the zigzag of work_thread - thread). */
struct tfd_fns {
	uint8_t *buf;
	size_t len, n;
	/* the ops of those calls and of the functions called inline from
	 * iterators (the host's fn_sums, borrowed: the host outlives them) */
	const struct tfd_fn_op_sum *sums;
	size_t nsums;
	/* every call's work summed per function thread (nthreads of them,
	 * NULL when the host has no function ops): what the ops cover */
	int64_t *work_by_thread;
	size_t nthreads;
	/* per iterator name whose calls ran a function inline whose ops ran
	 * on another thread: a filter's predicate queued behind the map's
	 * work on the pool they share is no work of the filter's */
	VEC(struct tfd_inline_wait) waits;
};

struct tfd_thread_roots;

struct host_ctx {
	const struct tfd_host *h;
	VEC(struct iter) iters;
	VEC(struct call) calls;
	VEC(struct call_pair) pairs; /* of the calls */
	struct call_pairs cpair;     /* each call's pair, cpair_cap of room */
	size_t cpair_cap;
	/* (tfd_graph_build_iters(), no call kept) each pair's calls: what
	 * the passes that would walk the events again only to count a
	 * thread's calls by stage read instead (owners.c) */
	VEC(uint32_t) pair_calls;
	int *icalls; /* every iterator's calls, one after the other (struct iter) */
	/* until tfd_graph_release_consumers(): a bit per call, set when its
	 * nearest enclosing event is a Produce event with an element_id (NULL
	 * when the host has no Produce/Consume events: Chrome traces), and
	 * those element_ids in call order (a bit, not an index, per call: a
	 * tf.data-heavy host's peak), each the zigzag varint of its
	 * difference from the one before (read in order: elem_next(); a
	 * producer's elements follow each other: a few bytes, not eight) */
	uint64_t *produced;
	uint8_t *pelem;
	size_t pelem_len, pelem_cap;
	struct imap by_id;    /* id -> the last iterator made with it */
	struct imap by_idp;   /* (id, parent_id, dataset name) -> its iterator (id_key) */
	struct imap by_name;  /* long name pointer -> the iterator without an id */
	struct imap by_lname; /* long name text -> last iterator with it ... */
	VEC(int) lname_next;  /* ... and the one before, per iterator */
	int *root;	      /* per iterator: its root iterator, or -1 */
	/* consumer calls by (iterator id, element id): an open table of
	 * cons_cap slots, its size any number (not a power of two: 12 bytes
	 * a slot at a load of 3/4, where a chained table with a power of two
	 * of heads took 16 bytes an entry and 4 a head, at the peak) */
	int *cons_call; /* per slot: the consumer call, -1 for none */
	/* per slot: its element id, in 8 bytes (cons_elem), or in 5
	 * (cons_elem40, while every element registered lies within 2^39 of
	 * the first, cons_base: TensorFlow's ids of a host are a clock's,
	 * minutes apart at most), as its distance from cons_base plus 2^39
	 * (cons_elem_at()); NULL the one not used */
	uint64_t *cons_elem;
	uint8_t *cons_elem40;
	uint64_t cons_base;
	bool cons_based; /* cons_base is set */
	size_t cons_cap, cons_n;
	/* the host's dataset-function calls for the capacity pass, read before
	 * the function and executor events may go (struct tfd_fn_call) */
	struct tfd_fns fns;
	/* the host's training steps per second with free input and their
	 * number (struct tfd_cap_calls), 0 unknown: set before the pipelines
	 * are built */
	double step_rate;
	size_t nsteps;
	/* the steps the pipelines are read against (inside or outside them,
	 * pauses between them), sorted by start; none without steps: set
	 * before the pipelines are built. The spans the host's verdict counts
	 * as steps (each marker's, or to the next step's start when the waits
	 * between markers count), but the markers' own when the waits between
	 * them count and they still hold a pipeline's next() (what is read
	 * between them is something else: a custom loop's evaluation) */
	const struct tfd_interval *step_spans;
	size_t nstep_spans;
	/* how the host's Python ops shared the interpreter's lock, judged once
	 * for its pipelines (tfd_python_overlap) */
	enum tfd_py_overlap py_overlap;
	/* each call's start and duration (struct tfd_ptimes) */
	struct tfd_ptimes times;
	/* TFDOCTOR_TIMELINK_CHECK=1: the sums of a stream in time order,
	 * which each pipeline's build compares with its own (analysis/passes.h;
	 * NULL otherwise, freed by the analysis) */
	struct tfd_stream_sums *stream;
	/* TFDOCTOR_STREAM=1: the pipelines are built from the stream's sums,
	 * and the passes that read the calls one after another walk the
	 * host's events (from_stream); the root calls the root walks read
	 * (the pass before's list; NULL: the call table's) */
	bool from_stream;
	const struct tfd_root_call *root_list;
	size_t nroot_list;
	/* per iterator: its first call's event (iter.sample points here);
	 * tfd_graph_take_samples() hands the array over */
	VEC(struct tfd_event) samples;
	/* the long names of the absent iterators (iter.absent), which
	 * tfd_graph_take_names() hands over */
	VEC(char *) absent_names;
	/* the first call of a loop inside a tf.function's own root
	 * (tfd_loop_root_name): its parameters are its input pipeline's
	 * options (cpu_budget, threadpool_size), which the input's root,
	 * below the loop's scan, does not carry */
	struct tfd_event loop_root;
	bool has_loop_root;
	/* every iterator's parallelism changes (struct tfd_par_change), by
	 * iterator then time once the threads are scanned */
	VEC(struct tfd_par_change) par;
	/* while the pipelines are built, on a host of several: which one each
	 * function thread worked for over time (src/analysis/passes.h) */
	const struct tfd_thread_roots *troots;
	/* while the threads are scanned: what each signature's parameters
	 * tell (graph.c) */
	struct sig_memo *memo;
	size_t nmemo; /* a power of two */
};

/* Call k's iterator and thread. */
static inline int call_iter(const struct host_ctx *c, size_t k)
{
	return c->pairs.v[call_pairs_at(&c->cpair, k)].iter;
}

static inline uint32_t call_thread(const struct host_ctx *c, size_t k)
{
	return c->pairs.v[call_pairs_at(&c->cpair, k)].thread;
}

/* The calls' times, and call k's end. */
static inline struct tfd_times call_times(const struct host_ctx *c)
{
	return (struct tfd_times){.pt = &c->times};
}

static inline int64_t call_start(const struct host_ctx *c, size_t k)
{
	struct tfd_times tm = call_times(c);

	return tfd_times_start(&tm, k);
}

static inline int64_t call_end(const struct host_ctx *c, size_t k)
{
	struct tfd_times tm = call_times(c);

	return tfd_times_end(&tm, k);
}

/* Is call k inside a Produce event with an element_id? The n-th such call
 * (in index order) has the n-th element of pelem. */
static inline bool call_produced(const struct host_ctx *c, size_t k)
{
	return c->produced && (c->produced[k / 64] >> (k % 64) & 1);
}

/* The produced calls' elements, read in order. */
struct elem_cursor {
	const uint8_t *p;
	uint64_t prev;
};

static inline struct elem_cursor elem_begin(const struct host_ctx *c)
{
	return (struct elem_cursor){c->pelem, 0};
}

static inline uint64_t elem_next(struct elem_cursor *ec)
{
	ec->prev += (uint64_t)tfd_ev_unzig(tfd_ev_varint(&ec->p));
	return ec->prev;
}

/* The first slot of the consumers of an element of the iterator with this
 * id (the hash scaled to the table's size); the entries of one element
 * follow it, cons_next() on, up to an empty slot. */
static inline size_t cons_bucket(const struct host_ctx *c, uint64_t iter_id, uint64_t elem)
{
	uint64_t h = imap_hash(imap_hash(iter_id) ^ (elem * 0x9e3779b97f4a7c15ull));

	return (size_t)(((unsigned __int128)h * c->cons_cap) >> 64);
}

static inline size_t cons_next(const struct host_ctx *c, size_t j)
{
	return j + 1 == c->cons_cap ? 0 : j + 1;
}

/* Half the span of the elements cons_elem40 holds. */
#define TFD_ELEM40_HALF ((uint64_t)1 << 39)

/* The element of slot j. */
static inline uint64_t cons_elem_at(const struct host_ctx *c, size_t j)
{
	if (!c->cons_elem40)
		return c->cons_elem[j];
	return c->cons_base - TFD_ELEM40_HALF + tfd_start40_get(c->cons_elem40, j);
}

/* Where slot j's element is (to fetch it ahead). */
static inline const void *cons_elem_addr(const struct host_ctx *c, size_t j)
{
	return c->cons_elem40 ? (const void *)(c->cons_elem40 + 5 * j)
			      : (const void *)&c->cons_elem[j];
}

/* Iterators and calls of one host, parents resolved (a cycle is an error),
 * roots known. *by_name and *orphans count iterators linked by long name and
 * left without a parent; an iterator whose parent has no call in the
 * capture is given it, absent (iter.absent), up to its root. lean: h itself, or NULL; then every
 * event of h goes as it is read (the calls hold what is read after). */
enum tfd_status tfd_graph_build(struct host_ctx *c, const struct tfd_host *h, struct tfd_host *lean,
				size_t *by_name, size_t *orphans, struct tfd_err *err);
/* The long names of the absent iterators (*n of them, NULL none), the
 * caller's to free, each and the array; the iterators' long_name pointers
 * stay valid while it keeps them. */
char **tfd_graph_take_names(struct host_ctx *c, size_t *n);
/* Free everything tfd_graph_build() allocated, also after it failed. */
void tfd_graph_release(struct host_ctx *c);
/* Iterators made afresh on a context of their own (begin; end frees it),
 * from host h's iterator events handed over in any order: the iterator
 * of each, as the threads' scan makes and finds them (a check's:
 * src/analysis/timelink.c asks whether time order makes the same ones). */
void tfd_graph_iters_begin(struct host_ctx *c, const struct tfd_host *h);
int tfd_graph_iter_of(struct host_ctx *c, const struct tfd_event *e);
void tfd_graph_iters_end(struct host_ctx *c);

/* Whether the threads' scan makes a call of event e: an iterator event
 * that is not async, nor the bare iterator's, nor a loop's own root
 * (graph.c's scan_thread() tests the same inline, where it also notes the
 * loop's root); the checks and the pass before a stream read the events
 * with it. */
static inline bool tfd_graph_call_event(const struct tfd_event *e)
{
	return e->kind == TFD_EV_ITERATOR && !(e->flags & TFD_EVF_ASYNC) &&
	       e->sig->role != TFD_SIG_BARE_ITERATOR && e->sig->role != TFD_SIG_LOOP_ROOT;
}

/* A root call (of a root iterator) and its time. */
struct tfd_root_call {
	int iter;
	int64_t start_ns, end_ns;
};
typedef VEC(struct tfd_root_call) tfd_root_calls;
/* The host's root calls in the calls' order: from its call table, or
 * from a list of them (the pass before's, struct tfd_prepass.roots, which
 * the time-order check finds the table's): what the passes that read the
 * root calls alone walk (analyze.c, owners.c), so that a reader without a
 * call table can feed them. */
struct tfd_root_walk {
	const struct host_ctx *c;
	const struct tfd_root_call *list;
	size_t n, k;
};
/* w over c's root calls: list[0..n) when list is not NULL. */
static inline void tfd_root_walk_begin(struct tfd_root_walk *w, const struct host_ctx *c,
				       const struct tfd_root_call *list, size_t n)
{
	w->c = c;
	w->list = list;
	w->n = list ? n : c->calls.n;
	w->k = 0;
}
static inline bool tfd_root_walk_next(struct tfd_root_walk *w, struct tfd_root_call *rc)
{
	const struct host_ctx *c = w->c;

	if (w->list) {
		if (w->k >= w->n)
			return false;
		*rc = w->list[w->k++];
		return true;
	}
	while (w->k < w->n) {
		size_t k = w->k++;
		int i;

		if (c->calls.v[k].parent >= 0) /* (a root call has no parent call) */
			continue;
		i = call_iter(c, k);
		if (c->root[i] == i) {
			*rc = (struct tfd_root_call){i, call_start(c, k), call_end(c, k)};
			return true;
		}
	}
	return false;
}
/* An iterator's first call on a thread: its rank among the thread's calls
 * (its calls in time order). */
struct tfd_first_call {
	size_t rank;
	uint32_t thread;
	int iter;
};
/* What a reader that folds the calls as they come must know before its
 * stream, besides the iterators: each thread's count of calls (a call's
 * number is its thread's first plus its rank there), the root calls, by
 * thread then time, and each iterator's first call on each thread it ran
 * on, by thread then rank (a stream that makes the iterators again as it
 * meets their calls learns from them which of today's each one is). */
struct tfd_prepass {
	size_t *thread_calls;
	tfd_root_calls roots;
	VEC(struct tfd_first_call) firsts;
};
/* The pass before such a stream, over h's packed events thread by thread
 * as the scan goes, no call kept: the iterators (today's numbers, their
 * calls' counts and spans, their parents and roots) into c, which the
 * caller releases with tfd_graph_release() (also after a failure), and
 * *pp, freed with tfd_prepass_free(). A cycle of parents fails, as
 * tfd_graph_build() does. The check of src/analysis/timelink.c compares
 * them with the scan's. */
enum tfd_status tfd_graph_prepass(struct host_ctx *c, const struct tfd_host *h,
				  struct tfd_prepass *pp, struct tfd_err *err);
/* tfd_graph_build() with no call kept: c's iterators, parents, roots,
 * samples and parameter changes as it makes them, and what the pass
 * before a stream counts into *pp (as tfd_graph_prepass() does, in the
 * same scan; freed with tfd_prepass_free()). Every event of h stays: the
 * stream reads them after (src/analysis/timelink.c, tfd_stream_run()). */
enum tfd_status tfd_graph_build_iters(struct host_ctx *c, const struct tfd_host *h,
				      struct tfd_prepass *pp, size_t *by_name, size_t *orphans,
				      struct tfd_err *err);
/* Free what tfd_graph_prepass() put in pp. */
void tfd_prepass_free(struct tfd_prepass *pp);
/* tfd_graph_prepass() over the events src gives instead of h's packed
 * ones (h gives the threads; src/input/xspace_source.c reads them again
 * from the file). */
enum tfd_status tfd_graph_prepass_from(struct host_ctx *c, const struct tfd_host *h,
				       const struct tfd_event_source *src, struct tfd_prepass *pp,
				       struct tfd_err *err);
/* TFDOCTOR_SOURCE_CHECK=1: h's iterator, Produce and Consume events as
 * source s reads them again from the file, against those the read packed,
 * and the pass before over each; one line on stderr (kept: s was kept past
 * the read; src/model/source_check.c). */
void tfd_source_check(const struct tfd_host *h, struct tfd_source *s, bool kept);
/* What two passes before made differently (a's and b's, of one host):
 * the first that differs, or NULL. */
const char *tfd_prepass_differs(const struct host_ctx *a, const struct tfd_prepass *pa,
				const struct host_ctx *b, const struct tfd_prepass *pb);
/* Before a graph is built from h: drop its events whose kinds are not in
 * keep (TFD_KIND_BIT()s; iterator events always stay). */
void tfd_host_shed(struct tfd_host *h, uint32_t keep);
/* The same for one thread (the host's function count is left as it is). */
void tfd_thread_shed(const struct tfd_host *h, struct tfd_thread *th, uint32_t keep);
/* The iterators' samples (an event per iterator but the absent ones, which
 * come after them and have none; NULL when none), the caller's to
 * free; the sample pointers stay valid while it keeps them. */
struct tfd_event *tfd_graph_take_samples(struct host_ctx *c);
/* Drop the consumer index (cons_*) and the calls' Produce events once
 * calls are linked. */
void tfd_graph_release_consumers(struct host_ctx *c);
/* Each iterator's calls in start order (icalls), for the links by time
 * overlap; made after the consumer index went (the two are not held at
 * once). */
void tfd_graph_list_calls(struct host_ctx *c);
/* Drop the iterators' lists of calls (icalls) once calls are linked. */
void tfd_graph_release_call_lists(struct host_ctx *c);

/* The pipelines of a host: root iterators by first call, each with its
 * iterators and calls (index order), and whether it is a device pipeline. */
struct tfd_graph_groups {
	size_t n;
	int *root; /* iterator index of each root */
	bool *is_device;
	size_t *ioff, *coff; /* group g: iters[ioff[g]..ioff[g+1]), calls likewise */
	int *iters, *calls;  /* calls: NULL when one pipeline has every call */
};

/* Fill g (overwritten, owned by the caller) with c's pipelines; needs the
 * calls linked (roots known). */
/* Whether iterator i is a MultiDeviceIterator's per-device generator (the
 * one a distribution strategy puts on each device, fed from the host
 * pipeline): Iterator::Prefetch::Generator, or Iterator::Root::Prefetch::
 * Generator (Model: older names) whose root's dataset is named
 * device_prefetch, or, when the root names no dataset, on a host with
 * MultiDeviceIterator threads. Its pipeline is a device pipeline. */
bool tfd_graph_is_device_generator(const struct host_ctx *c, int i);
void tfd_graph_group(const struct host_ctx *c, struct tfd_graph_groups *g);
/* Free g's arrays and zero it. */
void tfd_graph_groups_release(struct tfd_graph_groups *g);

/* The stage path of a long name: the name less the "[N]" indices that
 * number instances (interleave's inputs, repeat's epochs); the input index
 * of a dataset with distinct inputs (Zip[1], Concatenate[0],
 * DirectedInterleave[1]) stays, each input its own stage. A new string
 * (the caller frees it). */
char *tfd_iter_stage_path(const char *long_name);

#endif
