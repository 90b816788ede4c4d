/* steps.c - a host's steps: the extents of the events that share a
 * group_id (tfd_host_note), or, in a raw capture without group_id stats,
 * its step markers (the profiler's Trace(name, step_num=..., _r=1) events),
 * as TensorFlow's converter groups them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "capture_impl.h"
#include "tfd/capture.h"
#include "tfd/imap.h"
#include "tfd/select.h"

void tfd_host_note(struct tfd_capture *cap, struct tfd_host *h, bool has_group, int64_t group_id,
		   int64_t start_ns, int64_t end_ns)
{
	struct host_build *b;
	struct tfd_step *sp;

	if (start_ns < h->span_start_ns)
		h->span_start_ns = start_ns;
	if (end_ns > h->span_end_ns)
		h->span_end_ns = end_ns;
	if (!has_group)
		return;
	b = tfd_cm_build_of(cap, h);
	if (!b->has_last || b->last_group != group_id) {
		size_t idx;

		if (!imap_get(&b->group, (uint64_t)group_id, &idx)) {
			idx = h->nsteps;
			if (h->nsteps >= b->steps_cap) {
				/* doubling: a realloc per step copied the steps once
				 * per step (a build released and begun again knows
				 * no room) */
				b->steps_cap = h->nsteps < 32 ? 64 : 2 * h->nsteps;
				h->steps = xrealloc(h->steps, b->steps_cap * sizeof(*h->steps));
			}
			h->steps[idx] = (struct tfd_step){group_id, start_ns, end_ns};
			h->nsteps++;
			imap_put(&b->group, (uint64_t)group_id, idx);
		}
		b->has_last = true;
		b->last_group = group_id;
		b->last_step = idx;
	}
	sp = &h->steps[b->last_step];
	if (start_ns < sp->start_ns)
		sp->start_ns = start_ns;
	if (end_ns > sp->end_ns)
		sp->end_ns = end_ns;
}

bool tfd_step_marker_name(const char *name)
{
	/* TensorFlow's explicit host step markers; Keras 3's batch trace */
	if (strncmp(name, "train", 5) != 0 && strncmp(name, "test", 4) != 0 &&
	    strncmp(name, "TraceContext", 12) != 0)
		return strcmp(name, "Profiled batch") == 0;
	return strchr(name, '/') == NULL;
}

bool tfd_eval_marker_name(const char *name)
{
	static const char *const words[] = {"test",  "eval",	 "evaluate",   "evaluation", "val",
					    "valid", "validate", "validation", "predict"};
	size_t n = strcspn(name, " _-:0123456789");

	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (strlen(words[i]) == n && strncasecmp(name, words[i], n) == 0)
			return true;
	return false;
}

bool tfd_step_root_name(const char *name)
{
	return strcmp(name, "FunctionRun") != 0 && strcmp(name, "SessionRun") != 0 &&
	       strcmp(name, "RunGraph") != 0 && strcmp(name, "ExecutorState::Process") != 0;
}

bool tfd_get_next_run_name(const char *name)
{
	/* (an iterator's name, "Iterator::...", parts from both at "::") */
	return strncmp(name, "IteratorGetNext", 15) == 0 &&
	       (strcmp(name + 15, "Op::DoCompute") == 0 ||
		strcmp(name + 15, "AsOptionalOp::DoCompute") == 0);
}

bool tfd_fn_call_name(const char *name)
{
	return strncmp(name, "EagerLocalExecute: __inference_", 31) == 0;
}

void tfd_host_reserve(struct tfd_host *h, size_t markers, size_t fnruns)
{
	if (markers > h->markers_cap) {
		h->markers = xrealloc(h->markers, markers * sizeof(*h->markers));
		h->markers_cap = markers;
	}
	if (fnruns > h->fnruns_cap) {
		h->fnruns = xrealloc(h->fnruns, fnruns * sizeof(*h->fnruns));
		if (h->fnrun_groups) {
			h->fnrun_groups =
			    xrealloc(h->fnrun_groups, fnruns * sizeof(*h->fnrun_groups));
			memset(h->fnrun_groups + h->fnruns_cap, 0,
			       (fnruns - h->fnruns_cap) * sizeof(*h->fnrun_groups));
		}
		h->fnruns_cap = fnruns;
	}
}

void tfd_host_fnrun(struct tfd_host *h, int64_t thread_id, uint64_t id, int64_t start_ns,
		    bool has_group, int64_t group)
{
	if (h->nfnruns == h->fnruns_cap)
		tfd_host_reserve(h, 0, h->fnruns_cap ? 2 * h->fnruns_cap : 64);
	if (has_group && !h->fnrun_groups)
		h->fnrun_groups = xcalloc(h->fnruns_cap, sizeof(*h->fnrun_groups));
	if (h->fnrun_groups)
		h->fnrun_groups[h->nfnruns] =
		    (struct tfd_fnrun_group){has_group ? group : 0, has_group};
	h->fnruns[h->nfnruns++] = (struct tfd_fnrun){start_ns, thread_id, id};
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

bool tfd_host_loose_fn(const struct tfd_host *h, uint64_t id)
{
	return h->nloose_fn_ids &&
	       bsearch(&id, h->loose_fn_ids, h->nloose_fn_ids, sizeof(id), u64_cmp) != NULL;
}

/* The room for the step ids of the loose function runs (any set before,
 * a converted trace's when its groups made no step, goes), and their end:
 * the first k of them, sorted. */
static uint64_t *loose_begin(struct tfd_host *h)
{
	free(h->loose_fn_ids);
	h->nloose_fn_ids = 0;
	return h->loose_fn_ids = xmalloc((h->nfnruns + 1) * sizeof(*h->loose_fn_ids));
}

static void loose_end(struct tfd_host *h, size_t k)
{
	tfd_sort_u64(h->loose_fn_ids, k);
	h->nloose_fn_ids = k;
}

static int marker_cmp(const void *a, const void *b);

/* Markers mk[0..n) sorted by thread, then start, an outer one first
 * (marker_cmp), and the outermost of each thread kept at the front, in
 * that order (a marker inside the one before it on its thread is part of
 * it): their number. */
static size_t outermost_markers(struct tfd_marker *mk, size_t n)
{
	size_t k = 0;

	qsort(mk, n, sizeof(*mk), marker_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && mk[k - 1].thread_id == mk[i].thread_id && mk[i].end_ns <= mk[k - 1].end_ns)
			continue;
		mk[k++] = mk[i];
	}
	return k;
}

/* Of the outermost markers mk[0..n) (outermost_markers()), the one on the
 * thread of id thread_id that holds time t: its index + 1; 0 for none. */
static size_t marker_holding(const struct tfd_marker *mk, size_t n, int64_t thread_id, int64_t t)
{
	size_t lo = 0, hi = n;

	/* the last marker of the thread that starts by t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mk[mid].thread_id < thread_id ||
		    (mk[mid].thread_id == thread_id && mk[mid].start_ns <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && mk[lo - 1].thread_id == thread_id && t < mk[lo - 1].end_ns ? lo : 0;
}

/* The function runs outside every step marker (markers: the outermost of
 * each thread, by thread then start): their step ids. The runs are read
 * for the last time: the ids are written over their array as they are
 * read (id k of run i >= k: its 8 bytes end before run i + 1's 24 begin),
 * the array's rest is the sort's scratch, and it becomes the ids' (the
 * 89,699 runs of a real map's capture, every one outside the markers of
 * the thread that steps, had taken 0.7 MB for the ids and 0.7 MB for the
 * sort beside their own 2.1 MB, at its peak). */
static void loose_fns(struct tfd_host *h, const struct tfd_marker *mk, size_t n)
{
	size_t k = 0;
	uint64_t *ids = (uint64_t *)(void *)h->fnruns;

	free(h->loose_fn_ids);
	for (size_t i = 0; i < h->nfnruns; i++) {
		const struct tfd_fnrun r = h->fnruns[i];

		if (!marker_holding(mk, n, r.thread_id, r.start_ns))
			ids[k++] = r.id;
	}
	tfd_sort_u64_with(ids, k, ids + k);
	h->loose_fn_ids = xrealloc(ids, (k + 1) * sizeof(*ids));
	h->nloose_fn_ids = k;
	h->fnruns = NULL; /* (its array is the ids') */
	h->nfnruns = h->fnruns_cap = 0;
}

void tfd_host_add_marker(struct tfd_host *h, const struct tfd_marker *m)
{
	if (h->nmarkers == h->markers_cap)
		tfd_host_reserve(h, h->markers_cap ? 2 * h->markers_cap : 64, 0);
	h->markers[h->nmarkers++] = *m;
}

void tfd_host_step_marker(struct tfd_host *h, const char *name, int64_t thread_id, int64_t step_num,
			  int64_t start_ns, int64_t end_ns, bool has_group, int64_t group)
{
	tfd_host_add_marker(h, &(struct tfd_marker){.start_ns = start_ns,
						    .end_ns = end_ns,
						    .step_num = step_num,
						    .thread_id = thread_id,
						    .group = has_group ? group : 0,
						    .has_group = has_group,
						    .kind = tfd_eval_marker_name(name)
								? TFD_MARK_EVAL
								: TFD_MARK_STEP});
}

void tfd_host_session_run(struct tfd_host *h, int64_t thread_id, int64_t start_ns, int64_t end_ns,
			  bool has_group, int64_t group, bool has_id, uint64_t id)
{
	tfd_host_add_marker(h, &(struct tfd_marker){.start_ns = start_ns,
						    .end_ns = end_ns,
						    .step_num = -1,
						    .thread_id = thread_id,
						    .group = has_group ? group : 0,
						    .has_group = has_group,
						    .kind = TFD_MARK_SESSION_RUN,
						    .has_id = has_id,
						    .id = id});
}

size_t tfd_host_get_next(struct tfd_host *h, uint64_t id)
{
	tfd_host_add_marker(
	    h, &(struct tfd_marker){
		   .step_num = -1, .kind = TFD_MARK_GET_NEXT, .has_id = true, .id = id});
	return h->nmarkers - 1;
}

void tfd_host_get_next_open(struct tfd_host *h, struct tfd_get_next_open *o, int64_t thread_id,
			    uint64_t id, int64_t end_ns)
{
	*o = (struct tfd_get_next_open){true, thread_id, tfd_host_get_next(h, id), end_ns};
}

void tfd_host_get_next_iterator(struct tfd_host *h, struct tfd_get_next_open *o, int64_t thread_id,
				const struct tfd_event *e)
{
	struct tfd_marker *m = o->k < h->nmarkers ? &h->markers[o->k] : NULL;

	if (!o->open || thread_id != o->thread_id)
		return;
	if (m && m->kind == TFD_MARK_GET_NEXT && e->start_ns <= o->end_ns &&
	    (e->flags & TFD_EVF_ID)) {
		m->has_root = true;
		m->root = e->id;
	}
	o->open = false;
}

void tfd_host_fn_call(struct tfd_host *h, const char *name, int64_t thread_id, int64_t start_ns,
		      int64_t end_ns)
{
	tfd_host_add_marker(h, &(struct tfd_marker){.start_ns = start_ns,
						    .end_ns = end_ns,
						    .step_num = -1,
						    .thread_id = thread_id,
						    .kind = TFD_MARK_FN_CALL,
						    .fn = name});
}

/* Intervals by start (the session's runs of one loop do not overlap). */
static int run_start_cmp(const void *a, const void *b)
{
	const struct tfd_interval *x = a, *y = b;

	return x->s < y->s ? -1 : x->s > y->s;
}

/* The step ids GetNext ops ran under (the markers of kind
 * TFD_MARK_GET_NEXT), sorted; *n of them. */
static uint64_t *get_next_ids(const struct tfd_host *h, size_t *n)
{
	uint64_t *ids = xmalloc((h->nmarkers + 1) * sizeof(*ids));

	*n = 0;
	for (size_t i = 0; i < h->nmarkers; i++)
		if (h->markers[i].kind == TFD_MARK_GET_NEXT)
			ids[(*n)++] = h->markers[i].id;
	tfd_sort_u64(ids, *n);
	return ids;
}

/* A call that read input: its start, function, index among the calls,
 * and whether it begins a run of its function's calls (in time). */
struct rcall {
	int64_t start_ns;
	const char *fn;
	size_t i;
	bool begins_run;
};

static int rcall_fn_cmp(const void *a, const void *b)
{
	const struct rcall *x = a, *y = b;
	uintptr_t p = (uintptr_t)x->fn, q = (uintptr_t)y->fn;

	if (p != q)
		return p < q ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static int rcall_start_cmp(const void *a, const void *b)
{
	const struct rcall *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Of the n calls mk, those that read input (reads[i]) and are steps,
 * moved to the front in their order; their number. The steps are the
 * calls of the function most of them call (of two as many, the one called
 * first), and of any other whose calls do not come in runs (fewer than two
 * in a row on average, in time, among the calls that read input): two
 * step functions taking turns, a function traced again for an epoch's
 * last batch. Another function called in runs is an evaluation's (Keras'
 * test function at each epoch's end, a loop's eval every N steps):
 * between the steps. */
static size_t training_calls(struct tfd_marker *mk, const bool *reads, size_t n)
{
	struct rcall *rc = xmalloc((n + 1) * sizeof(*rc));
	bool *keep = xcalloc(n + 1, sizeof(*keep));
	size_t k = 0, kept = 0, most = 0;
	int64_t main_start = 0;
	const char *main_fn = NULL;

	for (size_t i = 0; i < n; i++)
		if (reads[i])
			rc[k++] = (struct rcall){mk[i].start_ns, mk[i].fn, i, false};
	qsort(rc, k, sizeof(*rc), rcall_start_cmp);
	for (size_t j = 0; j < k; j++)
		rc[j].begins_run = !j || rc[j - 1].fn != rc[j].fn;
	qsort(rc, k, sizeof(*rc), rcall_fn_cmp); /* each function's calls, in time */
	for (size_t i = 0, j; i < k; i = j) {
		for (j = i; j < k && rc[j].fn == rc[i].fn; j++)
			;
		if (j - i > most || (j - i == most && rc[i].start_ns < main_start)) {
			most = j - i;
			main_fn = rc[i].fn;
			main_start = rc[i].start_ns;
		}
	}
	for (size_t i = 0, j; i < k; i = j) {
		size_t runs = 0;

		for (j = i; j < k && rc[j].fn == rc[i].fn; j++)
			runs += rc[j].begins_run;
		if (rc[i].fn == main_fn || j - i < 2 * runs)
			for (size_t t = i; t < j; t++)
				keep[rc[t].i] = true;
	}
	for (size_t i = 0; i < n; i++)
		if (keep[i])
			mk[kept++] = mk[i];
	free(rc);
	free(keep);
	return kept;
}

/* A host with neither step markers nor session runs (TensorFlow 2): its
 * markers become the eager calls of its tf.functions (the outermost of
 * each thread) that hold a function run under whose step id a GetNext op
 * ran: each call of a Keras train function, of a loop's step function
 * that takes the iterator. None when fewer than TFD_FN_CALL_STEPS_MIN
 * read input, or when no call holds a run that did (an eager loop's
 * next(), outside the step's function, runs under no function's id). */
static void function_calls(struct tfd_host *h, const uint64_t *ids, size_t nids)
{
	size_t n = 0, nread = 0;
	bool *reads;

	for (size_t i = 0; i < h->nmarkers; i++)
		if (h->markers[i].kind == TFD_MARK_FN_CALL)
			h->markers[n++] = h->markers[i];
	n = outermost_markers(h->markers, n);
	reads = xcalloc(n + 1, sizeof(*reads));
	for (size_t i = 0; i < h->nfnruns && nids; i++) {
		const struct tfd_fnrun *f = &h->fnruns[i];
		size_t at;

		if (!bsearch(&f->id, ids, nids, sizeof(*ids), u64_cmp))
			continue;
		at = marker_holding(h->markers, n, f->thread_id, f->start_ns);
		if (at && !reads[at - 1]) {
			reads[at - 1] = true;
			nread++;
		}
	}
	h->nmarkers = nread >= TFD_FN_CALL_STEPS_MIN ? training_calls(h->markers, reads, n) : 0;
	h->steps_from_function_calls = h->nmarkers > 0;
	free(reads);
}

/* A GetNext op's run: the step id it ran under, the iterator it read. */
struct id_root {
	uint64_t id, root;
};

static int id_root_cmp(const void *a, const void *b)
{
	const struct id_root *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->root < y->root ? -1 : x->root > y->root;
}

/* The GetNext runs whose iterator is known, by id; *n of them. */
static struct id_root *get_next_roots(const struct tfd_host *h, size_t *n)
{
	struct id_root *v = xmalloc((h->nmarkers + 1) * sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < h->nmarkers; i++)
		if (h->markers[i].kind == TFD_MARK_GET_NEXT && h->markers[i].has_root)
			v[(*n)++] = (struct id_root){h->markers[i].id, h->markers[i].root};
	qsort(v, *n, sizeof(*v), id_root_cmp);
	return v;
}

/* The fewest runs of the iterator read most for others to be told an
 * evaluation's. */
#define EVAL_TRAINING_RUNS_MIN 6

/* An iterator the session's runs read: in how many runs alone, whether
 * a run read it beside another, the first and last such run's start. */
struct root_runs {
	size_t runs;
	bool beside, eval; /* eval: an evaluation's (drop_eval_runs()) */
	int64_t first, last;
};

/* The iterator each of the session's runs h->markers[0..n) read alone
 * (of[i]: its index in rr, -1 none, -2 several), counted in rr: how
 * many iterators. gr: the GetNext runs' iterators, by id. */
static size_t runs_iterators(const struct tfd_host *h, size_t n, const struct id_root *gr,
			     size_t ngr, struct root_runs *rr, long *of)
{
	struct imap at = {0}; /* iterator -> index in rr */
	size_t nr = 0;

	for (size_t i = 0; i < n; i++) {
		const struct tfd_marker *m = &h->markers[i];
		size_t lo = 0, hi = ngr;

		of[i] = -1;
		while (lo < hi) { /* its first GetNext run */
			size_t mid = lo + (hi - lo) / 2;

			if (gr[mid].id < m->id)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; m->has_id && lo < ngr && gr[lo].id == m->id; lo++) {
			size_t r;

			if (!imap_get(&at, gr[lo].root, &r)) {
				r = nr++;
				imap_put(&at, gr[lo].root, r);
			}
			if (of[i] == -1) {
				of[i] = (long)r;
			} else if (of[i] != (long)r) { /* read beside another */
				if (of[i] >= 0)
					rr[of[i]].beside = true;
				rr[r].beside = true;
				of[i] = -2;
			}
		}
		if (of[i] >= 0 && !rr[of[i]].runs++)
			rr[of[i]].first = m->start_ns;
		if (of[i] >= 0)
			rr[of[i]].last = m->start_ns;
	}
	imap_free(&at);
	return nr;
}

/* Of the session's runs that step host h (its markers 0..n, in the order
 * read), those of an evaluation are dropped (tfd_host_steps_from_markers():
 * a graph-mode Keras validation pass, a loop's eval iterator every N
 * steps, read in runs of its own between the training's); returns how
 * many runs stay. gr: the GetNext runs' iterators, by id. */
static size_t drop_eval_runs(struct tfd_host *h, size_t n, const struct id_root *gr, size_t ngr)
{
	struct root_runs *rr = xcalloc(n + 1, sizeof(*rr));
	long *of = xmalloc((n + 1) * sizeof(*of));
	size_t nr = runs_iterators(h, n, gr, ngr, rr, of), most = 0, k = 0, pass = 0;
	int64_t span_s = INT64_MAX, span_e = INT64_MIN;

	for (size_t r = 1; r < nr; r++)
		if (rr[r].runs > rr[most].runs)
			most = r;
	/* the training's: the iterators read in more than half as many runs
	 * as the one read most; between its first run and its last */
	for (size_t r = 0; r < nr; r++)
		if (rr[r].runs && 2 * rr[r].runs > rr[most].runs) {
			span_s = rr[r].first < span_s ? rr[r].first : span_s;
			span_e = rr[r].last > span_e ? rr[r].last : span_e;
		}
	/* an evaluation's: read alone, in at most half as many runs, between
	 * the training's runs; or before or after them all (a pass the
	 * capture's start or end cut into) in no more runs than a pass
	 * between them, which a training epoch the capture cut is not */
	for (size_t r = 0; r < nr; r++)
		rr[r].eval = rr[most].runs >= EVAL_TRAINING_RUNS_MIN && !rr[r].beside &&
			     2 * rr[r].runs <= rr[most].runs && rr[r].first > span_s &&
			     rr[r].last < span_e;
	for (size_t r = 0; r < nr; r++)
		if (rr[r].eval && rr[r].runs > pass)
			pass = rr[r].runs;
	for (size_t r = 0; r < nr; r++)
		if (!rr[r].eval && rr[r].runs <= pass && !rr[r].beside &&
		    (rr[r].first > span_e || rr[r].last < span_s))
			rr[r].eval = true;
	for (size_t i = 0; i < n; i++)
		if (of[i] >= 0 && rr[of[i]].eval)
			h->eval_runs++;
		else
			h->markers[k++] = h->markers[i];
	free(rr);
	free(of);
	return k;
}

/* The markers that step host h: its step markers (an evaluation's only
 * without others: Keras 2 marks a validation pass's batches "test", its
 * training batches "train"); without one, its
 * session's runs that read input (a GetNext op ran under their id), or
 * every run when none is known to (no GetNext op traced, or under other
 * ids); without those, its tf.functions' calls (function_calls()). A
 * host with markers drops the session's runs and the calls: they ran
 * inside the markers, or beside them (an evaluation, a hook's fetch). */
static void session_runs_or_markers(struct tfd_host *h)
{
	size_t n = 0, nruns = 0, ncalls = 0, nread = 0, nids = 0, neval = 0, ngr = 0;
	uint64_t *ids;
	struct id_root *gr;

	for (size_t i = 0; i < h->nmarkers; i++) {
		nruns += h->markers[i].kind == TFD_MARK_SESSION_RUN;
		ncalls += h->markers[i].kind == TFD_MARK_FN_CALL;
		neval += h->markers[i].kind == TFD_MARK_EVAL;
		if (h->markers[i].kind == TFD_MARK_STEP)
			h->markers[n++] = h->markers[i];
	}
	if (n) {
		h->eval_markers = neval;
	} else if (neval) { /* an evaluation alone: its batches are the steps */
		for (size_t i = 0; i < h->nmarkers; i++)
			if (h->markers[i].kind == TFD_MARK_EVAL) {
				h->markers[n] = h->markers[i];
				h->markers[n++].kind = TFD_MARK_STEP;
			}
	}
	if (n || (!nruns && !ncalls)) {
		h->nmarkers = n;
		return;
	}
	ids = get_next_ids(h, &nids);
	if (!nruns) {
		function_calls(h, ids, nids);
		free(ids);
		return;
	}
	for (size_t i = 0; i < h->nmarkers; i++) {
		const struct tfd_marker *m = &h->markers[i];

		nread += m->kind == TFD_MARK_SESSION_RUN && m->has_id && nids &&
			 bsearch(&m->id, ids, nids, sizeof(*ids), u64_cmp);
	}
	gr = get_next_roots(h, &ngr);
	free(h->idle_runs);
	h->idle_runs = xmalloc((h->nmarkers + 1) * sizeof(*h->idle_runs));
	h->nidle_runs = 0;
	for (size_t i = 0; i < h->nmarkers; i++) {
		const struct tfd_marker *m = &h->markers[i];

		if (m->kind != TFD_MARK_SESSION_RUN)
			continue;
		if (!nread || (m->has_id && bsearch(&m->id, ids, nids, sizeof(*ids), u64_cmp)))
			h->markers[n++] = *m;
		else
			h->idle_runs[h->nidle_runs++] =
			    (struct tfd_interval){m->start_ns, m->end_ns};
	}
	free(ids);
	if (nread && ngr)
		n = drop_eval_runs(h, n, gr, ngr);
	free(gr);
	h->nmarkers = n;
	h->steps_from_session_runs = true;
	/* the outermost: sorted by start, a run inside the one before dropped */
	qsort(h->idle_runs, h->nidle_runs, sizeof(*h->idle_runs), run_start_cmp);
	n = 0;
	for (size_t i = 0; i < h->nidle_runs; i++)
		if (!n || h->idle_runs[i].s >= h->idle_runs[n - 1].e)
			h->idle_runs[n++] = h->idle_runs[i];
		else if (h->idle_runs[i].e > h->idle_runs[n - 1].e)
			h->idle_runs[n - 1].e = h->idle_runs[i].e;
	h->nidle_runs = n;
}

static int marker_cmp(const void *a, const void *b)
{
	const struct tfd_marker *x = a, *y = b;

	/* by thread, then start; the longer first, so an outer marker comes
	 * before the ones it holds */
	if (x->thread_id != y->thread_id)
		return x->thread_id < y->thread_id ? -1 : 1;
	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->end_ns > y->end_ns ? -1 : x->end_ns < y->end_ns;
}

static int marker_start_cmp(const void *a, const void *b)
{
	const struct tfd_marker *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->thread_id < y->thread_id ? -1 : x->thread_id > y->thread_id;
}

/* A host with groups and markers (tfd_host_steps_from_markers()): only the
 * groups holding a marker stay steps, each over its markers' extent (the
 * group's can start before it: a GetNext the converter grouped with the
 * step, as TensorFlow's own analysis of the raw capture does not count),
 * or none when no marker has a group. */
static void markers_over_groups(struct tfd_capture *cap, struct tfd_host *h)
{
	struct imap marked = {0};
	struct host_build *b = tfd_cm_build_of(cap, h);
	size_t n = 0, at;

	for (size_t i = 0; i < h->nmarkers; i++) {
		const struct tfd_marker *m = &h->markers[i];

		if (!m->has_group)
			continue;
		if (!imap_get(&marked, (uint64_t)m->group, &at)) {
			imap_put(&marked, (uint64_t)m->group, i);
		} else { /* the group's first marker holds their extent */
			h->markers[at].start_ns = m->start_ns < h->markers[at].start_ns
						      ? m->start_ns
						      : h->markers[at].start_ns;
			h->markers[at].end_ns =
			    m->end_ns > h->markers[at].end_ns ? m->end_ns : h->markers[at].end_ns;
		}
	}
	if (marked.n && h->nfnruns) {
		/* the function runs in groups that are no step's: tf.data's */
		size_t k = 0;
		uint64_t *ids = loose_begin(h);

		int64_t group;

		for (size_t i = 0; i < h->nfnruns; i++)
			if (tfd_fnrun_group(h, i, &group) &&
			    !imap_get(&marked, (uint64_t)group, NULL))
				ids[k++] = h->fnruns[i].id;
		loose_end(h, k);
	}
	if (marked.n)
		for (size_t s = 0; s < h->nsteps; s++)
			if (imap_get(&marked, (uint64_t)h->steps[s].group_id, &at)) {
				h->steps[n] = h->steps[s];
				h->steps[n].start_ns = h->markers[at].start_ns;
				h->steps[n].end_ns = h->markers[at].end_ns;
				n++;
			}
	h->nsteps = n;
	imap_free(&marked);
	/* the builder's index of the groups is stale: rebuilt for what stays */
	imap_free(&b->group);
	memset(&b->group, 0, sizeof(b->group));
	for (size_t s = 0; s < n; s++)
		imap_put(&b->group, (uint64_t)h->steps[s].group_id, s);
	b->has_last = false;
}

void tfd_host_steps_from_markers(struct tfd_capture *cap, struct tfd_host *h)
{
	session_runs_or_markers(h);
	if (h->nmarkers && h->nsteps)
		markers_over_groups(cap, h);
	if (h->nmarkers && !h->nsteps) {
		size_t n = outermost_markers(h->markers, h->nmarkers);

		if (h->nfnruns)
			loose_fns(h, h->markers, n);
		/* group ids in time order across threads */
		qsort(h->markers, n, sizeof(*h->markers), marker_start_cmp);
		for (size_t i = 0; i < n; i++)
			tfd_host_note(cap, h, true, (int64_t)i, h->markers[i].start_ns,
				      h->markers[i].end_ns);
		h->steps_from_markers = n > 0;
	}
	free(h->markers);
	h->markers = NULL;
	h->nmarkers = h->markers_cap = 0;
	free(h->fnruns);
	free(h->fnrun_groups);
	h->fnruns = NULL;
	h->fnrun_groups = NULL;
	h->nfnruns = h->fnruns_cap = 0;
}
