/* passes.h - analysis passes shared inside the library (not installed).
 *
 * Each pass fills part of a struct tfd_host_result; results own their
 * arrays and tfd_analysis_free() releases them.
 */
#ifndef TFD_PASSES_H
#define TFD_PASSES_H

#include "tfd/analysis.h"
#include "tfd/capture.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/times.h"
#include "tfd/vec.h"

struct host_ctx;

/* Strings the result owns (stage paths, families), freed with it. */
struct analysis_priv {
	VEC(char *) strings;
	VEC(void *) blocks;	/* other memory of the result's lifetime */
	struct tfd_arena arena; /* a merged result's names (merge.c) */
};

/* The result and what it owns privately; tfd_analyze() hands out &pub. */
struct analysis_full {
	struct tfd_analysis pub;
	struct analysis_priv priv;
};

/* An empty analysis with room for nhosts host results (freed by
 * tfd_analysis_free), a note on it, and the cross-host steps that end
 * tfd_analyze() (ranking, --host, the verdict). */
struct tfd_analysis *tfd_analysis_new(size_t nhosts);
void tfd_analysis_diag(struct tfd_analysis *a, const char *host, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
enum tfd_status tfd_analysis_finish(struct tfd_analysis *a, const struct tfd_analyze_opts *opts,
				    struct tfd_err *err);
/* The stragglers of a's hosts (a->stragglers, made anew; straggler.c):
 * after the hosts are in their final order. */
void tfd_stragglers_find(struct tfd_analysis *a);

/* A stage's sample as a result keeps it (merge.c): an iterator event in
 * arena a that holds n parameters and nothing else (what a report reads
 * of it). *params is its parameter array, zeroed, for the caller to fill. */
const struct tfd_event *tfd_sample_new(struct tfd_arena *a, uint16_t n, struct tfd_param **params);

/* Keep a copy of s for the result's lifetime. */
const char *tfd_analysis_keep_string(struct analysis_priv *pv, const char *s);

/* The iterators and calls of one pipeline, in index order. */
struct bucket {
	const int *iters;
	const int *calls; /* NULL: every call of the host, in order */
	size_t niters, ncalls;
};

/* Critical path (critpath.c, igraph): the path of stages from the root to
 * `target` that carries the most blocking time, over edges observed between
 * linked calls (parent stage -> child stage). Falls back to the stage tree.
 * Fills p->critpath. */
enum tfd_status tfd_critpath_compute(struct tfd_pipeline *p, const int *edge_from,
				     const int *edge_to, size_t nedges, int target,
				     struct tfd_err *err);

/* Confidence of the host's verdict and of every pipeline's bottleneck
 * (confidence.c). */
void tfd_confidence_compute(struct tfd_host_result *hr);

/* Call linking (link.c): each call's parent call and how it was found; the
 * consumer index and the call lists are gone after. */
void tfd_link_calls(struct host_ctx *c);
/* The overlap of [s, e) with call k; whether call cand is a better parent
 * than call best (-1: none) for the call over [s, e): more overlap, then
 * the earlier start, then the lower index (link.c's order). */
int64_t tfd_link_overlap(const struct host_ctx *c, int64_t s, int64_t e, int k);
bool tfd_link_better(const struct host_ctx *c, int64_t s, int64_t e, int cand, int best);

/* The same over spans given (the time-order check's, which keeps no call
 * of the graph): the overlap of [s, e) with [ks, ke), and whether call
 * cand over [cs, ce) is a better parent than best (-1: none) over
 * [bs, be). */
static inline int64_t tfd_span_overlap(int64_t s, int64_t e, int64_t ks, int64_t ke)
{
	int64_t lo = ks > s ? ks : s, hi = ke < e ? ke : e;

	return hi > lo ? hi - lo : 0;
}

static inline bool tfd_span_better(int64_t s, int64_t e, int cand, int64_t cs, int64_t ce, int best,
				   int64_t bs, int64_t be)
{
	int64_t oc, ob;

	if (best < 0)
		return true;
	oc = tfd_span_overlap(s, e, cs, ce);
	ob = tfd_span_overlap(s, e, bs, be);
	if (oc != ob)
		return oc > ob;
	if (cs != bs)
		return cs < bs;
	return cand < best;
}

/* TFDOCTOR_INFLIGHT=1: the most linked calls an analysis reading the host
 * in time order would hold at once, a line on stderr (inflight.c). */
void tfd_inflight_report(const struct host_ctx *c);
/* The most spans [start[i], end[i]) open at one instant, and that
 * instant (*at): both arrays are sorted in place (an end at t closes
 * before a start at t). */
size_t tfd_most_open(int64_t *start, int64_t *end, size_t n, int64_t *at);

/* The host's calls made and linked again in time order (timelink.c),
 * compared with the links tfd_link_calls() made: how many differ (the
 * first: its link in time order), how many were numbered otherwise than
 * the scan numbers them, how many events came out of time order; how
 * many calls waited for their link, and the most at once; how many were
 * produced for an element no call took, and how many of those then had
 * a parent call by overlap (link.c's fallback). Needs the
 * host's events (not a lean analysis's). */
struct tfd_timelink {
	size_t calls, counted, differ, first, numbering, out_of_order, waited, most_waiting;
	size_t untaken, untaken_linked; /* produced, no taker; then linked by overlap */
	/* the iterators made again in time order: how many, against today's,
	 * and the calls found under another partition (not a failure: today's
	 * numbering is the one the reports show) */
	size_t iters, iters_again, iter_differ;
	/* the pass before the stream (tfd_graph_prepass()): what differs from
	 * the scan's graph (NULL: nothing), and the root calls it found */
	const char *prepass;
	size_t roots;
	/* the stream's own state at most, in bytes (its tables' room), apart
	 * from the keys and takers of the elements taken (keys_bytes, which
	 * grow with them) and the check's per-call arrays; the most calls seen
	 * kept at once for the walks by overlap */
	size_t state_bytes, keys_bytes, seen_most;
	int parent;
	unsigned link;
	/* the events the file's cursors found malformed (src given) */
	size_t malformed;
	/* the groups closed as the stream went (each once its top settled
	 * with no parent, the stream past its last end, and no waiting call
	 * could land in it): how many, the most calls in groups not closed at
	 * once and when; the calls that landed in a group already closed
	 * (late), and those in no closed group at the end (unclosed): both 0
	 * when a streaming pass could fold each group as it closes */
	size_t groups, open_most, late, unclosed;
	int64_t open_most_at;
	/* each group folded as it closed, from the records the stream held
	 * (timefold.c): what differs from one tree of the host's calls (NULL:
	 * nothing), and the most records held at once */
	const char *fold;
	size_t fold_held;
	/* the stream's time: the merge by time, the links, the groups and
	 * their folds; and the pass before's, which counts each thread's calls
	 * and makes the iterators first */
	double stream_s, prepass_s;
	/* the root calls met out of the pass before's order (by start); the
	 * stream's sums, the caller's to free (tfd_stream_sums_free()) */
	size_t root_order;
	struct tfd_stream_sums *sums;
};
/* What the stream's folds sum per iterator (today's numbers) beside what
 * the check compares with one tree of the host's calls: the pipeline
 * pass's sums, made with the root calls the pass before lists and the
 * selection the pipeline pass makes of them (timesel.c), compared with
 * the pipeline pass's own (tfd_stream_pipeline_check()). Analyzed: under
 * a root call selected (the steady state's slow calls), within reach of
 * it. */
struct tfd_stream_isum {
	uint64_t calls, calls_an, blk_calls, win_calls;
	int64_t total_ns, self_ns, blocking_ns; /* blocking: under every root call */
	int64_t total_an_ns, self_an_ns, blk_ns, win_self_ns, slow_blk_ns;
	size_t links[TFD_LINK__COUNT];
	int first; /* the lowest call number, -1 */
};
/* A key (an edge between two iterators, parent's first; an (iterator,
 * thread) pair in the capacity window) and the lowest call showing it. */
struct tfd_stream_first {
	uint64_t key;
	int first;
};
typedef VEC(struct tfd_stream_first) tfd_stream_firsts;
struct tfd_stream_sums {
	size_t niters;
	struct tfd_stream_isum *s;
	tfd_stream_firsts edges; /* under analyzed root calls */
	tfd_stream_firsts pairs;
	size_t *nwarmup; /* per iterator (a root iterator's): its warm-up calls */
	/* per iterator (a root iterator's): its root calls, by start, as
	 * lists a struct tfd_root_spans reads */
	size_t *nroots;
	int64_t **root_s, **root_e;
	/* the host's root calls in the calls' order (the pass before's) */
	tfd_root_calls roots;
};
void tfd_stream_sums_free(struct tfd_stream_sums *ss);

/* key's first call (the lowest) in keys v, at: key -> its index in v. */
static inline void tfd_first_of(struct imap *at, tfd_stream_firsts *v, uint64_t key, int call)
{
	size_t i;

	if (!imap_get(at, key, &i)) {
		imap_put(at, key, v->n);
		vec_push(v, ((struct tfd_stream_first){key, call}));
	} else if (call < v->v[i].first) {
		v->v[i].first = call;
	}
}

/* The counts that fail the check, summed (the pass before counts one): 0
 * when it holds. src: the host's events read from the file with its
 * cursors over each thread, merged by time (NULL: the packed events). */
size_t tfd_timelink(const struct host_ctx *c, struct tfd_source *src,
		    const struct tfd_analyze_opts *opts, struct tfd_timelink *out);
/* ---- a host's graph (hostgraph.c) ---- */

/* Host h's graph into c (lean: as tfd_graph_build() takes it): its
 * iterators and calls; or (--low-memory, h read for it, or
 * TFDOCTOR_STREAM=1; not with the checks, which compare the stream with
 * the call table) its iterators alone and c->stream, the sums its
 * pipelines are built from (c->from_stream), where the stream holds and
 * saves memory. *by_name and *orphans as tfd_graph_build() counts them. */
enum tfd_status tfd_host_graph(struct host_ctx *c, const struct tfd_host *h, struct tfd_host *lean,
			       const struct tfd_analyze_opts *opts, size_t *by_name,
			       size_t *orphans, struct tfd_err *err);
/* c's pipelines built from its stream's sums (c->stream), its root walks
 * reading the pass before's root calls. */
void tfd_build_from_stream(struct host_ctx *c);
/* The calls of c's iterators. */
size_t tfd_graph_calls(const struct host_ctx *c);

/* TFDOCTOR_TIMELINK_CHECK=1: tfd_timelink()'s result (the root calls
 * selected as opts select them), a line on stderr; where it holds,
 * c->stream: the stream's sums, which each pipeline's build compares with
 * its own or (TFDOCTOR_STREAM=1 too) is built from (the caller frees
 * them). */
void tfd_timelink_check(struct host_ctx *c, const struct tfd_analyze_opts *opts);
/* The stream over host c with no call table (c's iterators made by the
 * scan that counted, as the pass before does, what *pp holds: handed over,
 * *pp left empty), its events read from src's cursors (NULL: the packed
 * events): its sums (the root calls selected as opts select them), the
 * caller's to free, or NULL and *why it cannot be used. */
struct tfd_stream_sums *tfd_stream_run(const struct host_ctx *c, struct tfd_prepass *pp,
				       struct tfd_source *src, const struct tfd_analyze_opts *opts,
				       const char **why);
/* ... and where it held, the thread roots tr (of c's groups g) made again
 * from the host's events walked again (struct tfd_host_walk): a line on
 * stderr says whether they are the same. */
void tfd_stream_troots_check(const struct host_ctx *c, const struct tfd_graph_groups *g,
			     const struct tfd_thread_roots *tr);

/* One pipeline (pipeline.c): the bucket's calls are in index order. */
enum tfd_status tfd_pipeline_build(struct host_ctx *c, int root_iter, const struct bucket *bk,
				   struct tfd_pipeline *p, struct analysis_priv *pv,
				   const struct tfd_analyze_opts *opts, struct tfd_err *err);

/* Latency view (bottleneck.c): most blocking time, the critical path to it;
 * sets p->bottleneck and p->latency_bottleneck. ef/et: observed blocking
 * edges between stages. */
enum tfd_status tfd_bottleneck_latency(struct tfd_pipeline *p, const int *ef, const int *et,
				       size_t ne, struct tfd_err *err);
/* Throughput view: after the capacity pass, the limiter's busiest stage
 * becomes p->bottleneck when the model is valid. */
void tfd_bottleneck_choose(struct tfd_pipeline *p);

/* Input-bound share of host h (share.c): hr->input_pct, the tf, steady and
 * all shares, per-step waits and their summary, the verdict band. */
void tfd_share_compute(const struct tfd_host *h, struct tfd_host_result *hr);
/* The spans the share counted as steps, sorted by start (the caller frees
 * them; NULL and *n 0 when its basis is not the steps). */
struct tfd_interval *tfd_share_step_spans(const struct tfd_host *h,
					  const struct tfd_host_result *hr, size_t *n);
/* The same with the host's waits read before (tfd_host_waits_read(): its
 * events may have gone since), taken (freed); their union of every wait
 * is not read when the device sweep made the steps' waits. */
void tfd_share_compute_with(const struct tfd_host *h, struct tfd_host_result *hr,
			    struct tfd_host_waits *hw);

/* repeats.c: host pipelines that are one dataset iterated anew (struct
 * tfd_pipeline.repeat_of1), each group's own the one that shows the most
 * of its stages, then holds the loop up most; then the pipeline analyzed
 * first (hr->focus): the host pipeline that holds the loop up most, or
 * the one that stands for its group. */
void tfd_mark_repeats(struct tfd_host_result *hr);
void tfd_pick_focus(struct tfd_host_result *hr);

/* Once the host's pipelines are known: a ramp (leading steps that waited
 * more) that put the verdict in a lower band than TensorFlow's convention
 * does so only when some pipeline of the host was still being tuned
 * (tuned_in_capture): else the verdict goes back to the convention, the
 * ramp still said (a profile started in a running job can open with steps
 * that wait as the job did before the profiler slowed its step). */
void tfd_share_settle_ramp(struct tfd_host_result *hr);

/* A dataset function's call as the capacity pass counts it: a function
 * event not inside an iterator call on its thread (those ran inline, in a
 * stage's self time), with its work. What does not depend on the pipeline
 * is read once per host (tfd_capacity_functions), so the function and
 * executor events need not stay for the pipelines. */
struct tfd_fn_call {
	int64_t start_ns;
	int64_t work_ns;      /* its executor chunks' sum, or its own duration */
	uint32_t thread;      /* the function event's */
	uint32_t work_thread; /* one thread its work ran on; TFD_FN_UNKNOWN: an
			       * async dispatch whose work was not captured */
};

#define TFD_FN_UNKNOWN UINT32_MAX

struct tfd_fns; /* graph.h */

/* The function calls of a host into *out (the caller frees out->buf).
 * lean: h itself, or NULL; then its executor chunks are dropped once
 * summed (before the calls are packed beside the events), and each
 * thread whose function calls are read keeps only its iterator, Produce
 * and Consume events. */
void tfd_capacity_functions(const struct tfd_host *h, struct tfd_host *lean, struct tfd_fns *out);
/* Which map a function thread's calls belong to (the capacity pass's
 * choice): owner[t] (a stage, -1), else the one map of the pipeline (the
 * calls counted are never inside an iterator call); fn_of[q] >= 0 for a
 * map with a function. */
struct tfd_op_owners {
	const int *owner;
	int nmaps, only_map;
	const int *fn_of;
	/* per thread, or NULL: the input calls of a thread that worked for
	 * several stages over time (TensorFlow's pools hand an ended
	 * iterator's threads to the next one's roles), by their ends; n 0 for
	 * a thread of one stage */
	struct tfd_role_line *roles;
	size_t nthreads;
};
/* A call's end and whom it ran for: a stage (a thread's roles), a root
 * iterator (tfd_thread_roots' runs) */
struct tfd_role {
	int64_t end_ns;
	int owner;
};
/* How many of v[0..n) (by end) had ended by at: v[k - 1] the last, none
 * when k is 0. */
size_t tfd_roles_ended(const struct tfd_role *v, size_t n, int64_t at);
struct tfd_role_line {
	size_t n;
	struct tfd_role *v;
};
/* owner[t] of a thread whose function calls ran for another pipeline
 * (tfd_fn_foreign): no map's */
#define TFD_OWNER_FOREIGN (-2)

/* Which pipeline each thread that ran function calls worked for last: its
 * iterator calls' roots (iterator indexes, the runs' owners) by their
 * ends, in runs of one root, each at its earliest end; made when a host
 * has several pipelines (tfd_thread_roots_make). */
struct tfd_thread_roots {
	uint32_t *off; /* thread t's runs: runs[off[t] .. off[t + 1]) */
	struct tfd_role *runs;
	int64_t *last_end; /* per iterator: a root's last call's end */
	size_t nthreads;
	/* the host's function calls (struct tfd_fns, in thread order) by
	 * thread, for the passes of each pipeline, which read a few threads
	 * whole and the others in the pipeline's window (a capture of
	 * hundreds of pipelines, an evaluation's each time, had read them all
	 * for each): thread t's calls from marks[mark_off[t]], a mark every
	 * TFD_FNS_MARK calls; fn_sorted[t], their starts never go back */
	struct tfd_fns_mark *marks;
	uint32_t *mark_off;
	bool *fn_sorted;
	/* per thread: its calls, those tfd_fn_foreign() finds another root's
	 * for some root (the root of the run before them still running), and
	 * by that root (thread << 32 | root -> calls) */
	uint32_t *fn_n, *fn_active;
	struct imap fn_active_root;
};
/* A place in struct tfd_fns: call k of a thread at byte off, the decoder's
 * state before it (tfd_fns_next()), its start. */
struct tfd_fns_mark {
	size_t off;
	struct tfd_fn_call prev;
	int64_t start;
};
#define TFD_FNS_MARK 64
/* Thread t's function calls tfd_fn_foreign() finds another root's than
 * root's, less the others (by the tallies of tfd_fns_index(): 0 without). */
int64_t tfd_fn_foreign_score(const struct tfd_thread_roots *tr, uint32_t t, int root);
/* Where a pass reads one thread's calls (tfd_fns_thread()). */
struct tfd_fns_cursor {
	const uint8_t *p, *end;
	struct tfd_fn_call f; /* the call read last */
	int64_t until;	      /* (a thread in time order) reading stops at it */
	bool sorted;
};
/* Thread t's calls of fns in *cur: those starting in [from, until), and
 * maybe calls either side of them (the thread's calls in time order: from
 * the last mark before from; else all of them); false: it has none. */
bool tfd_fns_thread(const struct tfd_thread_roots *tr, const struct tfd_fns *fns, uint32_t t,
		    int64_t from, int64_t until, struct tfd_fns_cursor *cur);
/* The next call of cur in cur->f; false: no more. */
bool tfd_fns_cursor_next(struct tfd_fns_cursor *cur);
/* The host's function calls fns indexed by thread in tr (its runs made):
 * the marks, and the tallies foreign_threads() reads; none (tr->marks
 * NULL) when fns is not in thread order. TFDOCTOR_FN_CALLS=whole: none
 * (every pipeline reads them all: the tests compare the two). */
void tfd_fns_index(const struct tfd_fns *fns, struct tfd_thread_roots *tr);
struct tfd_graph_groups;
void tfd_thread_roots_make(const struct host_ctx *c, const struct tfd_graph_groups *g,
			   struct tfd_thread_roots *tr, bool events);
void tfd_thread_roots_free(struct tfd_thread_roots *tr);
/* Whether a function call that started at `at` on thread t ran for
 * another pipeline than root's: the last iterator call that had ended on
 * the thread by then was another pipeline's, still running (its calls go
 * on past `at`). A worker runs the function on the element its input call
 * returned; a pool thread an ended iterator used works for any pipeline
 * after it. tr NULL or empty: never. */
bool tfd_fn_foreign(const struct tfd_thread_roots *tr, uint32_t t, int64_t at, int root);
/* The stage thread t's function calls belong to, or -1. */
int tfd_op_owner(const struct tfd_op_owners *ow, uint32_t t);
/* The stage a function call that started at `at` on thread t belongs to:
 * on a thread of several roles, the owner of the last input call that had
 * ended by then (a worker runs the function on the element its input call
 * returned; an inner call nested in that one ended before it); else
 * tfd_op_owner(). */
int tfd_op_owner_at(const struct tfd_op_owners *ow, uint32_t t, int64_t at);
/* Each map stage's fn_ops (by type) from the per-thread sums of fns. */
void tfd_stage_fn_ops(struct tfd_pipeline *p, const struct tfd_fns *fns,
		      const struct tfd_op_owners *ow);

/* The call after *f (start with all zeros) of the packed calls at *p,
 * before end, into *f; false at the end. */
bool tfd_fns_next(const uint8_t **p, const uint8_t *end, struct tfd_fn_call *f);

/* Whether stage s's function is its work, as a map's or a filter's is
 * (fnops.c): other stages' functions make the datasets whose iterators
 * they run (a flat_map's) or pick a shard while they write (a
 * snapshot's). */
bool tfd_fn_is_work(const struct tfd_stage *s);
/* Pipeline evidence text, cut to the room cp->evidence has (capacity.c). */
void tfd_cap_set_evidence(struct tfd_capacity *cp, const char *text);

/* Whether the interpreter's lock bounds a map's workers that run Python:
 * its calls were seen taking turns at it, or it has one worker (one call
 * at a time, whether it holds the lock or lets go of it). */
bool tfd_gil_binds(const struct tfd_capacity *cp, double workers);

/* Stage s's fn_p50_ns and fn_uneven_share from the work of its n function
 * calls w (reordered); left 0 with fewer than TFD_UNEVEN_MIN_CALLS. */
void tfd_stage_uneven_calls(struct tfd_stage *s, int64_t *w, size_t n);

struct call;
struct call_pair;
struct tfd_par_change;

/* One stage's calls that started in the capacity window (its own sums,
 * made while the pipeline's calls are aggregated, so that no call keeps
 * its self time past that). */
struct tfd_cap_window {
	uint64_t calls;
	int64_t self_ns;
};

/* A pipeline's root calls in root_stats()'s order (by start, then call),
 * each one's span: the call table's (idx: their calls' indices in tm), or
 * two lists (s and e, idx NULL: the pass before's root calls, selected as
 * a stream in time order selects them, src/analysis/timesel.c). */
struct tfd_root_spans {
	size_t n;
	const int *idx;
	struct tfd_times tm;
	const int64_t *s, *e;
};

static inline int64_t tfd_root_start(const struct tfd_root_spans *rs, size_t r)
{
	return rs->idx ? tfd_times_start(&rs->tm, (size_t)rs->idx[r]) : rs->s[r];
}

static inline int64_t tfd_root_end(const struct tfd_root_spans *rs, size_t r)
{
	return rs->idx ? tfd_times_end(&rs->tm, (size_t)rs->idx[r]) : rs->e[r];
}

/* The calls of one pipeline as the capacity pass needs them: per call its
 * stage (index into p->stages), thread, span and self time; the root calls
 * in time order and how many leading ones are warm-up. */
struct tfd_cap_calls {
	const struct tfd_host *host;
	const struct tfd_fns *fns; /* tfd_capacity_functions() of host */
	size_t n;
	/* call k is the host's calls[pcalls ? pcalls[k] : k]; its stage is
	 * iter_stage[its iterator] (an index into p->stages, -1 none) */
	const struct call *calls;
	const struct call_pair *pairs;	/* of the calls */
	const struct call_pairs *cpair; /* each call's pair */
	const int *pcalls;
	const int *iter_stage;
	struct tfd_times tm; /* by call */
	struct tfd_root_spans roots;
	size_t nwarmup;
	/* per stage of p: its window sums, and the (stage, thread) pairs of
	 * its window calls, each once */
	const struct tfd_cap_window *window;
	const uint64_t *stage_threads; /* stage << 32 | thread */
	size_t nstage_threads;
	/* the iterators' parallelism over time, by iterator then time */
	const struct tfd_par_change *par;
	size_t npar;
	/* the host's training steps per second with free input (their time
	 * less the input wait) and how many the capture holds; 0 unknown */
	double step_rate;
	size_t nsteps;
	enum tfd_py_overlap py_overlap; /* of the host's Python ops */
	/* the pipeline's root iterator, and which pipeline each function
	 * thread worked for over time (NULL: the host has one pipeline) */
	int root;
	const int *iter_root;	   /* per iterator: its root (host_ctx.root) */
	size_t niters;		   /* the host's iterators */
	const struct host_ctx *hc; /* the host's graph (its walk) */
	/* the calls walked from the host's events (struct tfd_cap_walk), not
	 * from the call table: a pipeline built from a stream's sums */
	bool events;
	const struct tfd_thread_roots *troots;
	/* the steps the pipelines are read against (host_ctx's), by start
	 * (none: no steps) */
	const struct tfd_interval *step_spans;
	size_t nstep_spans;
};

/* Call k of the pipeline: its host call's index, the call, its stage and
 * thread. */
static inline size_t cap_host_call(const struct tfd_cap_calls *in, size_t k)
{
	return in->pcalls ? (size_t)in->pcalls[k] : k;
}

static inline const struct call *cap_call(const struct tfd_cap_calls *in, size_t k)
{
	return &in->calls[cap_host_call(in, k)];
}

static inline int cap_stage(const struct tfd_cap_calls *in, size_t k)
{
	return in->iter_stage[in->pairs[call_pairs_at(in->cpair, cap_host_call(in, k))].iter];
}

static inline uint32_t cap_thread(const struct tfd_cap_calls *in, size_t k)
{
	return in->pairs[call_pairs_at(in->cpair, cap_host_call(in, k))].thread;
}

/* One of the pipeline's calls as the passes after its sums read it
 * (owners.c, capwindow.c): its stage (in p->stages), thread and times. */
struct tfd_cap_call {
	int stage;
	uint32_t thread;
	int64_t start, end;
};
/* One of the host's calls as a walk gives it: its iterator (today's
 * number), thread and times. */
struct tfd_call_rec {
	int iter;
	uint32_t thread;
	int64_t start, end;
};
/* The host's calls in the calls' order (thread by thread, each thread's
 * in time order): from its call table, or from its events walked again,
 * none kept, each call's iterator made again as the scan makes it (a
 * fresh context in the same order: the same numbers). What a reader that
 * keeps no call table gives the passes that walk the calls
 * (TFDOCTOR_TIMELINK_CHECK=1 compares the two: timesel.c). */
struct tfd_host_walk {
	const struct host_ctx *c;
	size_t k;
	bool events;
	size_t t;		/* (events) the thread read */
	bool open;		/* ... its cursor is */
	struct host_ctx *again; /* ... the iterators made again */
	struct tfd_ev_mcursor cur;
};
void tfd_host_walk_begin(struct tfd_host_walk *w, const struct host_ctx *c, bool events);
void tfd_host_walk_end(struct tfd_host_walk *w);
/* The next call from the host's events (capwalk.c). */
bool tfd_host_walk_next_event(struct tfd_host_walk *w, struct tfd_call_rec *r);

/* The walk's next call into *r, its iterator and thread (its times:
 * tfd_host_walk_times()); false at the end. */
static inline bool tfd_host_walk_next(struct tfd_host_walk *w, struct tfd_call_rec *r)
{
	size_t k = w->k;

	if (w->events)
		return tfd_host_walk_next_event(w, r);
	if (k >= w->c->calls.n)
		return false;
	w->k++;
	*r = (struct tfd_call_rec){call_iter(w->c, k), call_thread(w->c, k), 0, 0};
	return true;
}

/* The times of the call the walk gave last into *r (a table's cost a
 * decode: asked for where they are read). */
static inline void tfd_host_walk_times(const struct tfd_host_walk *w, struct tfd_call_rec *r)
{
	if (!w->events) {
		r->start = call_start(w->c, w->k - 1);
		r->end = call_end(w->c, w->k - 1);
	}
}

/* A walk over the pipeline's calls in the calls' order: from the call
 * table (its own calls), or the host's walked from its events (struct
 * tfd_host_walk), those of an iterator of its root with a stage. */
struct tfd_cap_walk {
	const struct tfd_cap_calls *in;
	size_t k;
	bool events;
	struct tfd_host_walk hw; /* (events) */
};
/* w over in's calls: from its table, or (events) from its host's events
 * (c: the host's, whose iterators the walk makes again). */
void tfd_cap_walk_begin(struct tfd_cap_walk *w, const struct tfd_cap_calls *in, bool events);
void tfd_cap_walk_end(struct tfd_cap_walk *w);
/* The walk's next call from the host's events (capwalk.c). */
bool tfd_cap_walk_next_event(struct tfd_cap_walk *w, struct tfd_cap_call *c);

/* The walk's next call into *c, its stage and thread (its times:
 * tfd_cap_walk_times()): false at the end (the table's inline: it runs
 * once a call per pass). */
static inline bool tfd_cap_walk_next(struct tfd_cap_walk *w, struct tfd_cap_call *c)
{
	const struct tfd_cap_calls *in = w->in;
	size_t k = w->k;

	if (w->events)
		return tfd_cap_walk_next_event(w, c);
	if (k >= in->n)
		return false;
	w->k++;
	*c = (struct tfd_cap_call){cap_stage(in, k), cap_thread(in, k), 0, 0};
	return true;
}

/* The start and end of the call the walk gave last into *c (a table's
 * times cost a decode: asked for where they are read). */
static inline void tfd_cap_walk_times(const struct tfd_cap_walk *w, struct tfd_cap_call *c)
{
	if (!w->events) {
		c->start = tfd_times_start(&w->in->tm, w->k - 1);
		c->end = tfd_times_end(&w->in->tm, w->k - 1);
	}
}

/* What owners.c chooses threads' owners from: the pipeline's calls, each
 * stage's segment and function segment (-1 none), the segments. */
struct tfd_owner_in {
	const struct tfd_cap_calls *in;
	size_t nstages;
	const int *seg_of, *fn_of;
	const struct tfd_segment *segs;
};
/* Which map each function thread's calls belong to (tfd_owners_free() it). */
struct tfd_op_owners tfd_owners_make(const struct tfd_owner_in *oi);
void tfd_owners_free(struct tfd_op_owners *ow);
struct imap;
/* Each map's function ops by ow; a thread of several roles gives its sums
 * to the map with most of its function calls (runs: (thread << 32 | map)
 * -> calls). */
void tfd_owners_fn_ops(struct tfd_pipeline *p, const struct tfd_fns *fns,
		       const struct tfd_op_owners *ow, struct imap *runs);

/* The capacity window of root calls [nwarmup, rs->n): [*t0, *t1), from
 * the first's start to the latest end; false when there are too few root
 * calls for a model. */
bool tfd_capacity_window(const struct tfd_root_spans *rs, size_t nwarmup, int64_t *t0, int64_t *t1);
/* The pauses in the window [t0, t1) of a pipeline read inside the steps
 * (capwindow.c): the step gaps in which no root call read, each from the
 * end of the last call that started in it; their time, their number in
 * *n, the gaps' whole time in *away. */
int64_t tfd_cap_pauses(const struct tfd_pipeline *p, const struct tfd_cap_calls *in, int64_t t0,
		       int64_t t1, uint32_t *n, int64_t *away);
/* The steps' demand in cp->demand instead of the consumer's when the
 * consumer takes elements far faster than the training steps do
 * (capwindow.c): a MultiDeviceIterator's thread, a tf.data service
 * worker. */
void tfd_cap_steps_demand(const struct tfd_pipeline *p, struct tfd_capacity *cp,
			  const struct tfd_cap_calls *in);

/* The capacity model of pipeline p (capacity.c): per-stage work, segments,
 * capacities, the limiter. Fills p->segments, p->capacity and the stages'
 * capacity fields; p->stages must be final. */
void tfd_capacity_compute(struct tfd_pipeline *p, const struct tfd_cap_calls *in);

/* Predicted root elements per second after dividing stage si's work by
 * work_factor and multiplying its segment's parallelism by par_factor (1: no
 * change); saves_cpu: the divided work is CPU the host no longer spends
 * (cheaper calls), not the same work spread over more workers. 0 when p has
 * no valid capacity model. *step_share (may be NULL): the step's compute
 * time after, over before, the rate assumes (tfd_capacity_step_share). */
double tfd_capacity_whatif(const struct tfd_pipeline *p, int si, double work_factor,
			   double par_factor, bool saves_cpu, double *step_share);

/* The capacity model's parts the what-ifs reuse (capacity.c): the rate the
 * model gives with caps replacing the segments' capacities (when given),
 * the CPU time per root element cpu_ns and the step's compute scaled by
 * step_share; the read time held in async stage q's worker slots; the
 * time and the CPU time stage i took in the window. */
double tfd_cap_model_rate(const struct tfd_segment *sg, size_t n, const struct tfd_capacity *cp,
			  const double *caps, double cpu_ns, double step_share);
double tfd_cap_reads_of(const struct tfd_pipeline *p, int q);
double tfd_cap_stage_time_ns(const struct tfd_pipeline *p, size_t i);
double tfd_cap_stage_cpu_ns(const struct tfd_pipeline *p, size_t i);
/* The share of stage s's function op time that Python ops take (0 without
 * op events). */
double tfd_cap_py_share(const struct tfd_stage *s);
/* A positive number stage s's first call states for key, or 0. */
double tfd_cap_param_pos(const struct tfd_stage *s, const char *key);
/* The host's cores as p's root states them: both its cpu_budget and its
 * threadpool_size (the threads of the pool its functions run on) are the
 * schedulable cores unless an option made one smaller
 * (options.autotune.cpu_budget, a private pool): the larger; 0 unknown. */
double tfd_cap_cores(const struct tfd_pipeline *p);
/* The cores' part of p's model once its segments are in (capcpu.c): its
 * cpu_budget, the CPU per root element and the rate the cores allow. */
void tfd_cap_cpu_model(struct tfd_pipeline *p, const struct tfd_cap_calls *in);

/* The CPU time per root element after the same change (the model's
 * cpu_ns without one). */
double tfd_capacity_cpu_after(const struct tfd_pipeline *p, int si, double work_factor,
			      bool saves_cpu);

/* The step's compute time after the pipeline's CPU per root element goes
 * to cpu_after_ns (from the model's cpu_ns and hidden_ns more, CPU the
 * model does not see) and the rate `speedup` times up, over what it was: on a
 * host without device activity the step's ops share the cores with the
 * pipeline. TensorFlow's intra-op pool is the cores: the step is taken to
 * keep N threads runnable, the pipeline u on average (its CPU per element
 * over the period), and the scheduler to share the N cores among them
 * alike, so the step's time goes as (N + u) / N, and (N + u') / N after.
 * 1 without a cores model, on a device host, or when no CPU is freed. */
double tfd_capacity_step_share(const struct tfd_pipeline *p, double hidden_ns, double cpu_after_ns,
			       double speedup);

/* The rate the host's cores allow after the same change (INFINITY without
 * a CPU budget). */
double tfd_capacity_whatif_cores(const struct tfd_pipeline *p, int si, double work_factor,
				 bool saves_cpu);

/* The same what-ifs once stage si and every stage below it do only the
 * share keep of their work (0: they stop running, read back from a
 * snapshot or a cache; a quarter: a shard of 4 taken before them, not
 * after): the rest leaves every segment, the worker slots of a map among
 * them do that share of theirs, and their CPU goes with it. The rate (0
 * without a valid model; *step_share as above, may be NULL), the CPU time
 * per root element, and the rate the host's cores allow. */
double tfd_capacity_whatif_kept(const struct tfd_pipeline *p, int si, double keep,
				double *step_share);
double tfd_capacity_cpu_kept(const struct tfd_pipeline *p, int si, double keep);
double tfd_capacity_whatif_kept_cores(const struct tfd_pipeline *p, int si, double keep);

/* The stage above stage si that drops elements its input made: the
 * nearest one above si of the nfams families fams (a Shard when nfams is
 * 0; a Filter), the stage below it on the way to si (*root) and the share
 * of its input's elements it passes on over the capacity window (*keep,
 * 0..1); -1 when there is none or its input's count is unknown. */
int tfd_dropped_above(const struct tfd_pipeline *p, int si, const char *const *fams, size_t nfams,
		      int *root, double *keep);

/* Elements stage si (a flat_map or an interleave) delivered per inner
 * dataset it made over the capacity window: each inner dataset's stages
 * take one call per element and one for its end, so the inner datasets
 * are their calls less the stage's; NAN when si makes none or too few
 * calls say (under 8). */
double tfd_elements_per_inner(const struct tfd_pipeline *p, int si);

/* The same (a Shard) for host h's focus pipeline and its slowest stage, and the
 * cores beside the step (tfd_pipeline_cpu_share's u) the stages below that
 * shard would no longer keep busy if they did the kept share of their work
 * (*cores, may be NULL); -1 when there is none. */
int tfd_focus_dropped(const struct tfd_host_result *h, double *keep, double *cores);
/* Whether stage j is si or lies below it. */
bool tfd_stage_within(const struct tfd_pipeline *p, int j, int si);

/* Whether stage si runs synchronously on the consumer's own thread: between
 * the steps, never beside the step's compute (whatif.c). */
bool tfd_stage_between_steps(const struct tfd_pipeline *p, int si);

/* Whether a remote stage (tf.data service, a remote source) sets the
 * pipeline's rate where its capacity model sees none of that work
 * (bottleneck.c): its delivery is then the rate seen. */
bool tfd_remote_limits(const struct tfd_pipeline *p);

/* The stages of a pipeline being built (stages.c). */
struct stage_build {
	VEC(struct tfd_stage) stages;
	VEC(char *) paths; /* owned copies, parallel to stages */
	struct imap index; /* hash(parent stage, path) -> last stage with it ... */
	VEC(int) next;	   /* ... and the one before, per stage */
};

/* The stage of iterator `iter` (creating it and its ancestors' stages). */
int tfd_stage_for(struct host_ctx *c, struct stage_build *sb, int iter, int depth_guard);
void tfd_stage_build_release(struct stage_build *sb);

/* Pre-order of the stage tree from root, children by first appearance;
 * stages not reached are appended. order has n slots. */
void tfd_stage_order(const struct tfd_stage *st, size_t n, int root, int *order);

#endif
