/* fnops.c - the ops inside each async map's function: the host's op sums
 * per function thread or inline iterator (tfd_host.fn_sums, made when it
 * was read), summed per map by the threads its function calls ran on, or
 * (a sequential map) by its own iterator calls. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/select.h"

int tfd_op_owner(const struct tfd_op_owners *ow, uint32_t t)
{
	if (ow->owner[t] >= 0)
		return ow->owner[t];
	if (ow->owner[t] == TFD_OWNER_FOREIGN)
		return -1;
	return ow->nmaps == 1 ? ow->only_map : -1;
}

size_t tfd_roles_ended(const struct tfd_role *v, size_t n, int64_t at)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].end_ns <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int tfd_op_owner_at(const struct tfd_op_owners *ow, uint32_t t, int64_t at)
{
	const struct tfd_role_line *r = ow->roles ? &ow->roles[t] : NULL;
	size_t k = r ? tfd_roles_ended(r->v, r->n, at) : 0;

	return k ? r->v[k - 1].owner : tfd_op_owner(ow, t);
}

/* Whether sum k of fns is stage q's: a sum of its function threads (an
 * async map, fn_of[q] >= 0), or of its own iterator calls (a function
 * called inline: a sequential map), of any of its instances (path: the
 * sum's iterator's stage path, model/graph.c). A sequential map inside an
 * interleave runs one instance per open input, each its own long name
 * (ParallelInterleaveV4[0]::Map .. [3]::Map): one instance's ops had been
 * a quarter of a cycle 4's, the map read as waiting 90 % of its time. */
static bool sum_of_stage(const struct tfd_fn_op_sum *k, const char *path, const struct tfd_stage *s,
			 int q, const struct tfd_op_owners *ow)
{
	if (k->iter)
		return ow->fn_of[q] < 0 && path && strcmp(path, s->path) == 0;
	return ow->fn_of[q] >= 0 && tfd_op_owner(ow, k->thread) == q;
}

void tfd_stage_fn_ops(struct tfd_pipeline *p, const struct tfd_fns *fns,
		      const struct tfd_op_owners *ow)
{
	struct tfd_op_named *recs;
	char **paths;

	if (!fns->nsums)
		return;
	recs = xmalloc(fns->nsums * sizeof(*recs));
	paths = xcalloc(fns->nsums, sizeof(*paths));
	for (size_t k = 0; k < fns->nsums; k++)
		if (fns->sums[k].iter)
			paths[k] = tfd_iter_stage_path(fns->sums[k].iter);
	for (size_t q = 0; q < p->nstages; q++) {
		struct tfd_stage *s = &p->stages[q];
		size_t n = 0;
		double ops = 0, work = 0;

		for (size_t k = 0; k < fns->nsums; k++)
			if (sum_of_stage(&fns->sums[k], paths[k], s, (int)q, ow)) {
				recs[n++] = (struct tfd_op_named){
				    fns->sums[k].name, fns->sums[k].self_ns, fns->sums[k].count};
				ops += (double)fns->sums[k].self_ns;
			}
		if (!n)
			continue;
		/* an async map's work is its function calls'; a sequential
		 * map's is its self time: not compared (coverage 0) */
		for (size_t t = 0; ow->fn_of[q] >= 0 && fns->work_by_thread && t < fns->nthreads;
		     t++)
			if (tfd_op_owner(ow, (uint32_t)t) == (int)q)
				work += (double)fns->work_by_thread[t];
		free(s->fn_ops);
		s->nfn_ops = tfd_fn_ops_by_type(recs, n, &s->fn_ops);
		s->fn_ops_coverage = work > 0 ? fmin(1.0, ops / work) : 0;
	}
	for (size_t k = 0; k < fns->nsums; k++)
		free(paths[k]);
	free(paths);
	free(recs);
}

bool tfd_fn_is_work(const struct tfd_stage *s)
{
	return tfd_family_has(s->family, TFD_FAM_MAP_FN) || strcmp(s->family, "Map") == 0 ||
	       strcmp(s->family, "Filter") == 0;
}

double tfd_fn_ops_time(const struct tfd_stage *s)
{
	double all = 0;

	for (size_t i = 0; i < s->nfn_ops; i++)
		all += (double)s->fn_ops[i].self_ns;
	return all;
}

double tfd_fn_python_time(const struct tfd_stage *s)
{
	double py = 0;

	for (size_t i = 0; i < s->nfn_ops; i++)
		if (tfd_op_is_python(s->fn_ops[i].type))
			py += (double)s->fn_ops[i].self_ns;
	return py;
}

const struct tfd_segment *tfd_stage_function_segment(const struct tfd_pipeline *p, int si)
{
	for (size_t g = 0; g < p->nsegments; g++)
		if (p->segments[g].kind == TFD_SEG_FUNCTION && p->segments[g].owner == si)
			return &p->segments[g];
	return NULL;
}

bool tfd_gil_binds(const struct tfd_capacity *cp, double workers)
{
	return cp->python_take_turns || workers < 1.5;
}

double tfd_stage_effective_parallelism(const struct tfd_pipeline *p, int si, double *workers,
				       bool *python)
{
	const struct tfd_stage *s = &p->stages[si];
	const struct tfd_segment *fg = tfd_stage_function_segment(p, si);
	double all = tfd_fn_ops_time(s), share;

	*python = false;
	if (!fg || !fg->known || !(fg->parallelism >= 1) || !p->capacity.valid)
		return NAN;
	*workers = fg->parallelism;
	if (!s->nfn_ops || !tfd_op_is_python(s->fn_ops[0].type) ||
	    !tfd_gil_binds(&p->capacity, fg->parallelism))
		return fg->utilization * fg->parallelism;
	share = all > 0 ? (double)s->fn_ops[0].self_ns / all : 0;
	*python = true;
	return 1.0 / (share + (1.0 - share) / fg->parallelism);
}

enum tfd_confidence tfd_top_op_confidence(const struct tfd_stage *s, const char **why)
{
	*why = "";
	if (s->fn_ops_coverage == 0 || s->fn_ops_coverage >= 0.7)
		return TFD_CONF_HIGH; /* a sequential map's is not compared */
	*why = "the op events cover little of the function's time";
	return s->fn_ops_coverage >= 0.4 ? TFD_CONF_MEDIUM : TFD_CONF_LOW;
}

double tfd_python_busy_share(const struct tfd_host_result *h)
{
	const struct tfd_pipeline *p = h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
	double py = 0;

	if (!p || !p->capacity.valid || p->capacity.window_ns <= 0)
		return 0; /* nothing measured: no Python seen */
	for (size_t i = 0; i < p->nstages; i++) {
		const struct tfd_stage *s = &p->stages[i];
		const struct tfd_segment *fg;
		double all = tfd_fn_ops_time(s), pyops = tfd_fn_python_time(s);

		if (strcmp(s->family, "Generator") == 0)
			py += (double)s->work_ns;
		fg = tfd_stage_function_segment(p, (int)i);
		if (all > 0 && pyops > 0 && fg)
			py += (double)fg->busy_ns * pyops / all;
	}
	/* a map's Python events span the wait for the lock too, and one lock
	 * is held at most all the time */
	return fmin(1.0, py / (double)p->capacity.window_ns);
}

size_t tfd_fn_ops_summary(const struct tfd_stage *s, size_t n, char *buf, size_t len)
{
	double all = tfd_fn_ops_time(s);
	size_t k = 0, at = 0;

	if (len)
		buf[0] = '\0';
	for (; k < n && k < s->nfn_ops && all > 0 && at < len; k++) {
		int w = snprintf(buf + at, len - at, "%s%s %.0f%%", k ? ", " : "",
				 s->fn_ops[k].type, 100.0 * (double)s->fn_ops[k].self_ns / all);

		if (w < 0)
			break;
		at += (size_t)w;
	}
	return k;
}

/* A Python call as tfd_python_overlap() weighs it: its function, how many
 * calls were still running when it started, and its duration. */
struct py_row {
	uint64_t fn;
	double ahead, d;
};

static int py_op_cmp(const void *a, const void *b)
{
	const struct tfd_py_op *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->e < y->e ? -1 : x->e > y->e;
}

static int py_row_cmp(const void *a, const void *b)
{
	const struct py_row *x = a, *y = b;

	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* Whether the n calls r last about alike, as waits do: the slowest tenth
 * within TFD_PY_OVERLAP_SPREAD times the median and a scheduler's
 * jitter. */
static bool steady(const struct py_row *r, size_t n)
{
	int64_t *d = xmalloc(n * sizeof(*d));
	bool ok;

	for (size_t i = 0; i < n; i++)
		d[i] = (int64_t)r[i].d;
	tfd_sort_i64(d, n);
	ok = (double)d[n * 9 / 10] <=
	     TFD_PY_OVERLAP_SPREAD * (double)d[n / 2] + (double)TFD_PY_OVERLAP_JITTER_NS;
	free(d);
	return ok;
}

/* What n calls say whose calls ahead sum to sa and durations to sd, with
 * sums of squares and products sxx, sxy about their means (steady_calls:
 * they last about alike): unknown with too little spread in how many were
 * ahead; else by the growth per call ahead over a call with none. */
static enum tfd_py_overlap fit_says(double sa, double sd, double sxx, double sxy, size_t n,
				    bool steady_calls)
{
	double slope, d0;

	if (sxx / (double)n < TFD_PY_OVERLAP_MIN_SD * TFD_PY_OVERLAP_MIN_SD)
		return TFD_PY_UNKNOWN;
	slope = sxy / sxx;
	d0 = sd / (double)n - slope * sa / (double)n; /* a call with none ahead */
	if (d0 > 0 && slope / d0 <= TFD_PY_OVERLAP_SIDE && steady_calls)
		return TFD_PY_SIDE_BY_SIDE;
	if (d0 > 0 && slope / d0 >= TFD_PY_OVERLAP_TURNS)
		return TFD_PY_TAKE_TURNS;
	return TFD_PY_UNKNOWN;
}

/* The calls' duration against the calls ahead of them, within each
 * function (rows sorted by it): a function's calls are compared with its
 * own, as a sleep of 0.4 ms is not a sleep of 2.6 ms that waited. *sxx and
 * *sxy the sums of squares and products about each function's means;
 * *steady whether every function with enough calls to tell (all of them
 * together when none has) lasts about alike; *one_turns whether one
 * function's calls by themselves take turns (Python that computes holds
 * the one lock whatever waits beside it). */
static void within_functions(const struct py_row *r, size_t n, double *sxx, double *sxy,
			     bool *steady_calls, bool *one_turns)
{
	size_t told = 0;

	*sxx = *sxy = 0;
	*steady_calls = true;
	*one_turns = false;
	for (size_t g0 = 0, g1; g0 < n; g0 = g1) {
		double sa = 0, sd = 0, gxx = 0, gxy = 0, ga, gd;

		for (g1 = g0; g1 < n && r[g1].fn == r[g0].fn; g1++) {
			sa += r[g1].ahead;
			sd += r[g1].d;
		}
		ga = sa / (double)(g1 - g0);
		gd = sd / (double)(g1 - g0);
		for (size_t k = g0; k < g1; k++) {
			gxx += (r[k].ahead - ga) * (r[k].ahead - ga);
			gxy += (r[k].ahead - ga) * (r[k].d - gd);
		}
		*sxx += gxx;
		*sxy += gxy;
		if (g1 - g0 < TFD_PY_OVERLAP_MIN_CALLS)
			continue;
		told++;
		*steady_calls = *steady_calls && steady(r + g0, g1 - g0);
		if (fit_says(sa, sd, gxx, gxy, g1 - g0, false) == TFD_PY_TAKE_TURNS)
			*one_turns = true;
	}
	if (!told)
		*steady_calls = steady(r, n);
}

enum tfd_py_overlap tfd_python_overlap(const struct tfd_host *h)
{
	size_t n = h->npy_ops, done = 0;
	struct tfd_py_op *v;
	struct py_row *r;
	int64_t *ends;
	double sa = 0, sd = 0, sxx, sxy;
	bool even, one_turns;
	enum tfd_py_overlap res;

	if (n < TFD_PY_OVERLAP_MIN_CALLS)
		return TFD_PY_UNKNOWN;
	v = xmalloc(n * sizeof(*v));
	memcpy(v, h->py_ops, n * sizeof(*v));
	qsort(v, n, sizeof(*v), py_op_cmp);
	ends = xmalloc(n * sizeof(*ends));
	for (size_t i = 0; i < n; i++)
		ends[i] = v[i].e;
	tfd_sort_i64(ends, n);
	r = xmalloc(n * sizeof(*r));
	/* each call's duration against the calls still running when it
	 * started (ahead of it at the lock): calls that take turns wait for
	 * those, calls that wait on something else do not. Of the i calls
	 * that started before it, those ended by then are the `done` first
	 * ends. */
	for (size_t i = 0; i < n; i++) {
		while (done < n && ends[done] <= v[i].s)
			done++;
		r[i] = (struct py_row){v[i].fn, i > done ? (double)(i - done) : 0.0,
				       (double)v[i].e - (double)v[i].s};
		sa += r[i].ahead;
		sd += r[i].d;
	}
	qsort(r, n, sizeof(*r), py_row_cmp);
	within_functions(r, n, &sxx, &sxy, &even, &one_turns);
	res = one_turns ? TFD_PY_TAKE_TURNS : fit_says(sa, sd, sxx, sxy, n, even);
	free(v);
	free(r);
	free(ends);
	return res;
}
