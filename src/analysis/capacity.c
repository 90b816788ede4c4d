/* capacity.c - the throughput view of a pipeline: which stage, if faster,
 * would raise the number of elements per second it delivers.
 *
 * Across an asynchronous boundary the consumer's wait shows only the tail
 * of the producer's work, so blocking time cannot name the limit there
 * (throughput-model.md 1). Instead, over the steady-state window (the root
 * calls after warm-up), every stage's own work is measured from all its
 * calls, not only those overlapping a wait:
 *   - a synchronous stage's work is its self time, on the thread it runs on;
 *   - an async stage's consumer-side calls only wait: no work;
 *   - an async map's user function is measured from its function events:
 *     InstantiatedCapturedFunction::Run on a worker, or ::RunAsync plus the
 *     ExecutorState::Process chunks that share its step id (TensorFlow runs
 *     the function's ops on the inter-op pool).
 * Stages that share threads form a segment: the consumer's stages, the input
 * side of each async stage (one reader thread for prefetch and parallel map,
 * cycle_length threads for parallel interleave), and each async map's
 * function (its parallelism in workers). A segment's capacity is
 * parallelism / work per root element; the lowest capacity limits the
 * pipeline, and its busiest stage is the bottleneck. When a map's function
 * left no events, its capacity is unknown; if every measured segment could
 * go faster than what was observed while the consumer waits, the map whose
 * consumer side waits most is inferred to be the limit.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/families.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/vec.h"

/* root elements needed before the model says anything */
#define MIN_ROOT_ELEMENTS 4
/* a measured limit this much faster than observed leaves room for an
 * unmeasured one */
#define INFER_SLACK 1.25

static bool is_map_like(const char *family)
{
	return tfd_family_has(family, TFD_FAM_MAP_FN);
}

static bool is_interleave(const char *family)
{
	return tfd_family_has(family, TFD_FAM_INTERLEAVE);
}

static double param_pos(const struct tfd_stage *s, const char *key)
{
	const char *v = s->sample ? tfd_event_param(s->sample, key) : NULL;
	double d = v ? strtod(v, NULL) : 0;

	return d > 0 ? d : 0;
}

struct ctx {
	struct tfd_pipeline *p;
	const struct tfd_cap_calls *in;
	VEC(struct tfd_segment) segs;
	int *seg_of;		 /* per stage */
	int *input_of;		 /* per stage: its input segment, -1 */
	int *fn_of;		 /* per stage: its function segment, -1 */
	int64_t *wait_ns;	 /* per stage: consumer-side time of an async stage */
	uint64_t *fn_unknown;	 /* per stage: function runs whose work was not captured */
	struct imap seg_threads; /* (segment, thread) seen */
	int64_t t0, t1;
	uint64_t n;
};

/* One iterator's parallelism series ch[0..n) (time order) over [t0, t1),
 * weighted by time: the value in force at t0 is the last change before it
 * (the first one when none is); *lo and *hi the least and most in force. */
static double series_over(const struct tfd_par_change *ch, size_t n, int64_t t0, int64_t t1,
			  double *lo, double *hi)
{
	size_t k = 0;
	double v = ch[0].value, sum = 0;
	int64_t at = t0;

	while (k + 1 < n && ch[k + 1].t_ns <= t0)
		k++;
	v = ch[k].value;
	*lo = *hi = v;
	for (k++; k < n && ch[k].t_ns < t1; k++) {
		sum += v * (double)(ch[k].t_ns - at);
		at = ch[k].t_ns;
		v = ch[k].value;
		*lo = fmin(*lo, v);
		*hi = fmax(*hi, v);
	}
	sum += v * (double)(t1 - at);
	return t1 > t0 ? sum / (double)(t1 - t0) : v;
}

/* The parallelism stage q's calls carried over the window, weighted by
 * time (its iterators' largest: instances of one stage), 0 when no call
 * said a number (parameters over time, not the first call's: AUTOTUNE
 * ramps up from 1, and TensorFlow writes "unavailable" when the map's
 * lock is busy). */
static double par_over(const struct ctx *c, int q, double *lo, double *hi)
{
	const struct tfd_cap_calls *in = c->in;
	double best = 0;

	*lo = *hi = 0;
	for (size_t k = 0; k < in->npar;) {
		int it = in->par[k].iter;
		size_t e = k;

		while (e < in->npar && in->par[e].iter == it)
			e++;
		if (in->iter_stage[it] == q) {
			double l, h, v = series_over(in->par + k, e - k, c->t0, c->t1, &l, &h);

			if (v > best) {
				best = v;
				*lo = l;
				*hi = h;
			}
		}
		k = e;
	}
	return best;
}

static int new_seg(struct ctx *c, enum tfd_segment_kind kind, int owner)
{
	struct tfd_segment sg;

	memset(&sg, 0, sizeof(sg));
	sg.kind = kind;
	sg.owner = owner;
	sg.top_stage = -1;
	sg.parallelism = 1;
	sg.known = true;
	vec_push(&c->segs, sg);
	return (int)c->segs.n - 1;
}

static void seen_thread(struct ctx *c, int seg, uint32_t thread)
{
	uint64_t key = ((uint64_t)(uint32_t)seg << 32) | thread;
	size_t dummy;

	if (seg < 0 || imap_get(&c->seg_threads, key, &dummy))
		return;
	imap_put(&c->seg_threads, key, 0);
	c->segs.v[seg].nthreads++;
}

/* Segments follow the stage tree: an async stage's input starts a new one. */
static void assign_segments(struct ctx *c)
{
	struct tfd_pipeline *p = c->p;
	size_t left = p->nstages;

	new_seg(c, TFD_SEG_CONSUMER, -1);
	for (size_t i = 0; i < p->nstages; i++)
		c->seg_of[i] = c->input_of[i] = c->fn_of[i] = -1;
	c->seg_of[0] = 0;
	/* stages are in pre-order, so parents come first; a stage appended out
	 * of order (no path from the root) keeps -1 */
	for (size_t pass = 0; pass < 2 && left; pass++)
		for (size_t i = 1; i < p->nstages; i++) {
			const struct tfd_stage *s = &p->stages[i];
			int q = s->parent;

			if (c->seg_of[i] >= 0 || q < 0 || c->seg_of[q] < 0)
				continue;
			if (p->stages[q].is_async && !p->stages[q].is_device_generator) {
				if (c->input_of[q] < 0)
					c->input_of[q] = new_seg(c, TFD_SEG_INPUT, q);
				c->seg_of[i] = c->input_of[q];
			} else {
				c->seg_of[i] = c->seg_of[q];
			}
			left--;
		}
	for (size_t i = 0; i < p->nstages; i++)
		if (p->stages[i].is_async && is_map_like(p->stages[i].family))
			c->fn_of[i] = new_seg(c, TFD_SEG_FUNCTION, (int)i);
}

/* Call k of the pipeline: its host call, stage and thread. */
static inline const struct call *cap_call(const struct tfd_cap_calls *in, size_t k)
{
	return &in->calls[in->pcalls ? (size_t)in->pcalls[k] : k];
}

static inline int cap_stage(const struct tfd_cap_calls *in, size_t k)
{
	return in->iter_stage[in->pairs[cap_call(in, k)->pair].iter];
}

static inline uint32_t cap_thread(const struct tfd_cap_calls *in, size_t k)
{
	return in->pairs[cap_call(in, k)->pair].thread;
}

/* Own work of every stage over the window, from every call that started in
 * it (summed as the pipeline's calls were aggregated). */
static void stage_work(struct ctx *c)
{
	const struct tfd_cap_calls *in = c->in;

	for (size_t si = 0; si < c->p->nstages; si++) {
		struct tfd_stage *s = &c->p->stages[si];

		s->window_calls += in->window[si].calls;
		if (s->is_async)
			c->wait_ns[si] = sat_add(c->wait_ns[si], in->window[si].self_ns);
		else
			s->work_ns = sat_add(s->work_ns, in->window[si].self_ns);
	}
	for (size_t i = 0; i < in->nstage_threads; i++) {
		size_t si = (size_t)(in->stage_threads[i] >> 32);

		if (!c->p->stages[si].is_async || si == 0)
			seen_thread(c, c->seg_of[si], (uint32_t)in->stage_threads[i]);
	}
}

/* Which async stage each thread works for: the owner of the input segment
 * most of its calls belong to (-1: the consumer's, or no calls). */
static int *thread_owners(struct ctx *c)
{
	const struct tfd_cap_calls *in = c->in;
	size_t nt = in->host->nthreads;
	int *owner = xmalloc((nt + 1) * sizeof(int));
	uint64_t *best = xcalloc(nt + 1, sizeof(uint64_t));
	struct imap votes = {0};

	for (size_t t = 0; t < nt; t++)
		owner[t] = -1;
	for (size_t k = 0; k < in->n; k++) {
		int si = cap_stage(in, k), sg = si >= 0 ? c->seg_of[si] : -1;
		uint64_t key;
		size_t v;
		uint32_t t = cap_thread(in, k);

		if (sg < 0 || c->segs.v[sg].kind != TFD_SEG_INPUT || t >= nt)
			continue;
		key = ((uint64_t)t << 32) | (uint32_t)c->segs.v[sg].owner;
		v = imap_get(&votes, key, &v) ? v + 1 : 1;
		imap_put(&votes, key, v);
		if (v > best[t]) {
			best[t] = v;
			owner[t] = c->segs.v[sg].owner;
		}
	}
	imap_free(&votes);
	free(best);
	return owner;
}

struct exec_sum {
	uint64_t id;
	int64_t ns;
	uint32_t thread; /* one thread it ran on (for the thread count) */
};

/* Executor time per function step id: the ops a function ran, wherever.
 * One record per step id, grouped in buckets by the top bits of the id's
 * hash (imap_hash: even buckets whatever the ids look like), with an index
 * of where each bucket starts: a hash table without empty slots, about a
 * third of an open-addressing table's memory at the peak, where the
 * capacity pass runs, and one bucket's records to look at per lookup. */
struct exec_index {
	struct exec_sum *v;
	uint32_t *bucket; /* records of bucket b: [bucket[b], bucket[b + 1]) */
	int bits;
};

static size_t exec_bucket(const struct exec_index *x, uint64_t id)
{
	return (size_t)(imap_hash(id) >> (64 - x->bits));
}

/* The index's records are far apart in a large capture, each touched
 * once: chunks wait in a ring of LAG, their bucket's start fetched ahead
 * when they come and the record's room halfway (a prefetch, no result
 * changes: they are placed oldest first, in capture order). */
#define LAG 16
struct pending_chunk {
	uint64_t id;
	int64_t ns;
	uint32_t thread;
	uint32_t b;
};

struct placing {
	struct exec_index *x;
	uint32_t thread;
	unsigned n; /* chunks come: ring[n % LAG] the newest */
	struct pending_chunk ring[LAG];
};

static void place_one(struct exec_index *x, const struct pending_chunk *c)
{
	x->v[x->bucket[c->b]++] = (struct exec_sum){c->id, c->ns, c->thread};
}

/* Place an executor chunk with an id into its bucket (the last walk). */
static void place_chunk(struct placing *pl, const struct tfd_event *e)
{
	struct pending_chunk *c = &pl->ring[pl->n % LAG];

	if (pl->n >= LAG)
		place_one(pl->x, c);
	*c = (struct pending_chunk){e->id, e->dur_ns, pl->thread,
				    (uint32_t)exec_bucket(pl->x, e->id)};
	__builtin_prefetch(&pl->x->bucket[c->b]);
	if (pl->n >= LAG / 2)
		__builtin_prefetch(&pl->x->v[pl->x->bucket[pl->ring[(pl->n - LAG / 2) % LAG].b]],
				   1);
	pl->n++;
}

/* The chunks still in the ring, oldest first. */
static void place_rest(struct placing *pl)
{
	for (unsigned i = pl->n > LAG ? pl->n - LAG : 0; i < pl->n; i++)
		place_one(pl->x, &pl->ring[i % LAG]);
	pl->n = 0;
}

/* The last walk of a lean host, as its thread's filter: place, then drop. */
static bool place_and_drop(const struct tfd_event *e, void *ctx)
{
	if (e->kind != TFD_EV_EXEC)
		return true;
	if (e->flags & TFD_EVF_ID)
		place_chunk(ctx, e);
	return false;
}

/* Three walks over the executor chunks: count them, count them per bucket,
 * place them (in capture order within a bucket, no sort and no scratch
 * copy); then each bucket's chunks of one id are summed into its first
 * (sums add in capture order; the thread kept is the first chunk's).
 * lean: h itself, whose chunks go as they are placed, a thread at a time
 * (not all of them beside the whole index). */
static void exec_sums(const struct tfd_host *h, struct tfd_host *lean, struct exec_index *x)
{
	size_t m = 0, nb = 0, w = 0, begin = 0;
	struct placing pl = {.x = x};

	memset(x, 0, sizeof(*x));
	for (int pass = 0; pass < 3; pass++) {
		if (pass == 1) {
			for (x->bits = 1; x->bits < 31 && ((size_t)1 << x->bits) < m; x->bits++)
				;
			nb = (size_t)1 << x->bits;
			x->bucket = xcalloc(nb + 1, sizeof(uint32_t));
			x->v = xmalloc((m + 1) * sizeof(*x->v));
		} else if (pass == 2) {
			for (size_t b = 0; b < nb; b++) /* starts; placing moves them to ends */
				x->bucket[b + 1] += x->bucket[b];
		}
		for (size_t t = 0; t < h->nthreads; t++) {
			if (!(h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_EXEC)))
				continue; /* no executor chunks */
			struct tfd_ev_cursor cur;
			struct tfd_event ev;

			pl.thread = (uint32_t)t;
			if (pass == 2 && lean) {
				/* one walk: each chunk is placed as the thread's
				 * filter drops it */
				tfd_thread_filter(lean, &lean->threads[t], place_and_drop, &pl);
				place_rest(&pl);
				lean->threads[t].kinds &= ~TFD_KIND_BIT(TFD_EV_EXEC);
				continue;
			}
			for (tfd_ev_begin(&cur, h, &h->threads[t]); tfd_ev_next(&cur, &ev);) {
				const struct tfd_event *e = &ev;

				if (e->kind != TFD_EV_EXEC || !(e->flags & TFD_EVF_ID))
					continue;
				if (pass == 0)
					m++;
				else if (pass == 1)
					x->bucket[exec_bucket(x, e->id) + 1]++;
				else
					place_chunk(&pl, e);
			}
			place_rest(&pl);
		}
	}
	/* bucket[b] is now where b ends: merge each bucket toward the front */
	for (size_t b = 0; b < nb; b++) {
		size_t end = x->bucket[b], first = w;

		for (size_t i = begin; i < end; i++) {
			size_t j = first;

			while (j < w && x->v[j].id != x->v[i].id)
				j++;
			if (j < w)
				x->v[j].ns = sat_add(x->v[j].ns, x->v[i].ns);
			else
				x->v[w++] = x->v[i];
		}
		x->bucket[b] = (uint32_t)first;
		begin = end;
	}
	x->bucket[nb] = (uint32_t)w;
}

/* The sum of function step id, or NULL. */
static const struct exec_sum *exec_find(const struct exec_index *x, uint64_t id)
{
	size_t b = exec_bucket(x, id);

	for (uint32_t i = x->bucket[b]; i < x->bucket[b + 1]; i++)
		if (x->v[i].id == id)
			return &x->v[i];
	return NULL;
}

static void fn_pack(struct tfd_fns *out, size_t *cap, const struct tfd_fn_call *f,
		    struct tfd_fn_call *prev)
{
	uint8_t *q;

	if (out->len + 40 > *cap) {
		*cap = *cap < 4096 ? 4096 : *cap + *cap / 2;
		out->buf = xrealloc(out->buf, *cap);
	}
	q = out->buf + out->len;
	q = tfd_ev_put_varint(q, f->thread - prev->thread); /* threads ascend */
	q = tfd_ev_put_varint(
	    q, tfd_ev_zig((int64_t)((uint64_t)f->start_ns - (uint64_t)prev->start_ns)));
	q = tfd_ev_put_varint(q, tfd_ev_zig(f->work_ns));
	q = tfd_ev_put_varint(q, f->work_thread == TFD_FN_UNKNOWN
				     ? 0
				     : 1 + tfd_ev_zig((int64_t)f->work_thread - f->thread));
	out->len = (size_t)(q - out->buf);
	out->n++;
	*prev = *f;
}

bool tfd_fns_next(const uint8_t **p, const uint8_t *end, struct tfd_fn_call *f)
{
	uint64_t w;

	if (*p >= end)
		return false;
	f->thread += (uint32_t)tfd_ev_varint(p);
	f->start_ns = (int64_t)((uint64_t)f->start_ns + (uint64_t)tfd_ev_unzig(tfd_ev_varint(p)));
	f->work_ns = tfd_ev_unzig(tfd_ev_varint(p));
	w = tfd_ev_varint(p);
	f->work_thread = w ? (uint32_t)((int64_t)f->thread + tfd_ev_unzig(w - 1)) : TFD_FN_UNKNOWN;
	return true;
}

/* A function call waiting for its sum (the lookups' ring, as the
 * placing's: the bucket fetched ahead, then its records). */
struct pending_fn {
	struct tfd_fn_call f;
	uint64_t id;
	uint32_t b;
	bool find;	  /* an id to look up */
	const char *name; /* its signature's (interned: it outlives the events) */
};

struct finding {
	const struct exec_index *x;
	const struct tfd_exec_sums *sums; /* the reader's, or NULL */
	struct tfd_fns *out;
	size_t cap;
	struct tfd_fn_call prev;
	unsigned n;
	struct pending_fn ring[LAG];
};

static void find_one(struct finding *fd, struct pending_fn *p)
{
	const struct exec_sum *x = p->find ? exec_find(fd->x, p->id) : NULL;
	int64_t ns = 0;
	uint32_t th = 0;
	bool summed = p->find && tfd_exec_sums_get(fd->sums, p->id, &ns, &th);

	if (x && summed) {
		/* chunks summed as read and chunks kept (a sum too large for
		 * the table): all of them, the lowest thread */
		p->f.work_ns = sat_add(ns, x->ns);
		p->f.work_thread = x->thread < th ? x->thread : th;
	} else if (x) {
		p->f.work_ns = x->ns;
		p->f.work_thread = x->thread;
	} else if (summed) {
		p->f.work_ns = ns;
		p->f.work_thread = th;
	} else if (strstr(p->name, "Async")) {
		/* dispatch only: the work ran elsewhere, uncaptured */
		p->f.work_ns = 0;
		p->f.work_thread = TFD_FN_UNKNOWN;
	}
	if (fd->out->work_by_thread && p->f.thread < fd->out->nthreads)
		fd->out->work_by_thread[p->f.thread] =
		    sat_add(fd->out->work_by_thread[p->f.thread], p->f.work_ns);
	fn_pack(fd->out, &fd->cap, &p->f, &fd->prev);
}

static void find_later(struct finding *fd, const struct tfd_fn_call *f, const struct tfd_event *e)
{
	struct pending_fn *p = &fd->ring[fd->n % LAG];
	const struct pending_fn *half;

	if (fd->n >= LAG)
		find_one(fd, p);
	p->f = *f;
	p->find = e->flags & TFD_EVF_ID;
	p->name = e->sig->name;
	if (p->find) {
		p->id = e->id;
		p->b = (uint32_t)exec_bucket(fd->x, e->id);
		__builtin_prefetch(&fd->x->bucket[p->b]);
		if (fd->sums && fd->sums->coded) {
			if (e->id >= 2 && e->id - 2 < fd->sums->cap)
				__builtin_prefetch(&fd->sums->val[e->id - 2]);
		} else if (fd->sums && fd->sums->cap) {
			size_t j = tfd_key_home(fd->sums->cap, e->id);

			__builtin_prefetch(&fd->sums->key[j]);
			__builtin_prefetch(&fd->sums->val[j]);
		}
	}
	half = &fd->ring[(fd->n + LAG / 2) % LAG];
	if (fd->n >= LAG / 2 && half->find)
		__builtin_prefetch(&fd->x->v[fd->x->bucket[half->b]]);
	fd->n++;
}

static void find_rest(struct finding *fd)
{
	for (unsigned i = fd->n > LAG ? fd->n - LAG : 0; i < fd->n; i++)
		find_one(fd, &fd->ring[i % LAG]);
	fd->n = 0;
}

void tfd_capacity_functions(const struct tfd_host *h, struct tfd_host *lean, struct tfd_fns *out)
{
	struct exec_index ex;
	struct finding fd = {.x = &ex, .sums = h->exec_sums, .out = out};
	VEC(int64_t) open = {0}; /* ends of the enclosing iterator calls */

	memset(out, 0, sizeof(*out));
	out->sums = h->fn_sums;
	out->nsums = h->nfn_sums;
	if (h->nfn_sums) { /* what the ops cover: the calls' work per thread */
		out->nthreads = h->nthreads;
		out->work_by_thread = xcalloc(h->nthreads + 1, sizeof(int64_t));
	}
	/* the chunks are summed: (lean) they are gone before the calls are
	 * made. Only iterator and function events are read below; an iterator
	 * call left open is closed by the next of those as by any event
	 * between. */
	exec_sums(h, lean, &ex);
	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_ev_cursor cur;
		struct tfd_event ev;

		if (!(h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_FUNCTION)))
			continue; /* no function events to count */
		open.n = 0;
		for (tfd_ev_begin(&cur, h, &h->threads[t]); tfd_ev_next(&cur, &ev);) {
			const struct tfd_event *e = &ev;
			struct tfd_fn_call f = {e->start_ns, e->dur_ns, (uint32_t)t, (uint32_t)t};

			while (open.n && open.v[open.n - 1] <= e->start_ns)
				open.n--;
			if (e->kind == TFD_EV_ITERATOR) {
				vec_push(&open, e->start_ns + e->dur_ns);
				continue;
			}
			/* a function inside an iterator call ran inline: that
			 * stage's self time has it already */
			if (e->kind != TFD_EV_FUNCTION || open.n)
				continue;
			find_later(&fd, &f, e);
		}
		find_rest(&fd); /* the thread's events go below */
		if (lean)	/* its calls are made: only what the graph reads stays */
			tfd_thread_shed(lean, &lean->threads[t],
					TFD_KIND_BIT(TFD_EV_PRODUCE) |
					    TFD_KIND_BIT(TFD_EV_CONSUME));
	}
	vec_free(&open);
	free(ex.v);
	free(ex.bucket);
	if (lean) { /* (lean) the sums are read: only the calls stay */
		tfd_exec_sums_free(lean->exec_sums);
		lean->exec_sums = NULL;
	}
	/* no spare room through the pipelines */
	if (out->len < fd.cap)
		out->buf = xrealloc(out->buf, out->len + 1);
}

/* Which map each function thread's calls belong to (owners_free() it): the
 * input segment owning the thread, else, for a function on a pool thread
 * that runs no iterator calls (TensorFlow without inter-op parallelism
 * runs it there), the pipeline's one map when there is one. */
static struct tfd_op_owners owners_make(struct ctx *c)
{
	const struct tfd_host *h = c->in->host;
	bool *has_calls = xcalloc(h->nthreads + 1, sizeof(bool));
	struct tfd_op_owners ow = {thread_owners(c), has_calls, 0, -1, c->fn_of};

	for (size_t k = 0; k < c->in->n; k++)
		if (cap_thread(c->in, k) < h->nthreads)
			has_calls[cap_thread(c->in, k)] = true;
	for (size_t i = 0; i < c->p->nstages; i++)
		if (c->fn_of[i] >= 0) {
			ow.only_map = (int)i;
			ow.nmaps++;
		}
	return ow;
}

static void owners_free(struct tfd_op_owners *ow)
{
	free((void *)ow->owner);
	free((void *)ow->has_calls);
}

/* User-function work of every async map, from the host's function calls. */
static void function_work(struct ctx *c)
{
	struct tfd_op_owners ow = owners_make(c);
	const uint8_t *fp = c->in->fns->buf, *fend = fp ? fp + c->in->fns->len : NULL;
	struct tfd_fn_call fc = {0, 0, 0, 0}, *f = &fc;

	while (tfd_fns_next(&fp, fend, f)) {
		int q = tfd_op_owner(&ow, f->thread);

		if (q < 0 || c->fn_of[q] < 0)
			continue;
		if (f->start_ns < c->t0 || f->start_ns >= c->t1)
			continue;
		c->p->stages[q].fn_calls++;
		if (f->work_thread == TFD_FN_UNKNOWN) {
			c->fn_unknown[q]++;
			continue;
		}
		seen_thread(c, c->fn_of[q], f->work_thread);
		c->p->stages[q].fn_work_ns = sat_add(c->p->stages[q].fn_work_ns, f->work_ns);
	}
	tfd_stage_fn_ops(c->p, c->in->fns, &ow);
	owners_free(&ow);
}

/* Without a capacity window: only each map's function ops, by the same
 * thread ownership the model would use (its structure needs no window). */
static void ops_only(struct ctx *c)
{
	struct tfd_pipeline *p = c->p;
	struct tfd_op_owners ow;

	if (!c->in->fns->nsums)
		return;
	c->seg_of = xmalloc(p->nstages * sizeof(int));
	c->input_of = xmalloc(p->nstages * sizeof(int));
	c->fn_of = xmalloc(p->nstages * sizeof(int));
	assign_segments(c);
	ow = owners_make(c);
	tfd_stage_fn_ops(p, c->in->fns, &ow);
	owners_free(&ow);
	vec_free(&c->segs);
	imap_free(&c->seg_threads);
	free(c->seg_of);
	free(c->input_of);
	free(c->fn_of);
}

/* Work of the stages in segment sg (before segments are finished). */
static int64_t input_busy(const struct ctx *c, int sg)
{
	int64_t b = 0;

	for (size_t i = 0; i < c->p->nstages; i++)
		if (c->seg_of[i] == sg)
			b = sat_add(b, c->p->stages[i].work_ns);
	return b;
}

static void finish_segments(struct ctx *c)
{
	struct tfd_pipeline *p = c->p;
	double W = (double)(c->t1 - c->t0);

	for (size_t i = 0; i < p->nstages; i++) {
		const struct tfd_stage *s = &p->stages[i];
		int sg = c->seg_of[i];

		if (sg >= 0 && s->work_ns > 0) {
			struct tfd_segment *g = &c->segs.v[sg];

			g->busy_ns = sat_add(g->busy_ns, s->work_ns);
			if (g->top_stage < 0 || s->work_ns > p->stages[g->top_stage].work_ns)
				g->top_stage = (int)i;
		}
	}
	for (size_t gi = 0; gi < c->segs.n; gi++) {
		struct tfd_segment *g = &c->segs.v[gi];
		const struct tfd_stage *o = g->owner >= 0 ? &p->stages[g->owner] : NULL;

		if (g->kind == TFD_SEG_INPUT && is_interleave(o->family)) {
			double cyc = param_pos(o, "cycle_length"),
			       par = par_over(c, g->owner, &g->par_lo, &g->par_hi);

			g->parallelism = cyc > 0 && par > 0 ? fmin(cyc, par) : cyc > 0 ? cyc : par;
			if (g->parallelism <= 0) {
				g->parallelism = g->nthreads ? (double)g->nthreads : 1;
				g->parallelism_observed = true;
			}
		} else if (g->kind == TFD_SEG_FUNCTION) {
			uint64_t known = o->fn_calls, unknown = c->fn_unknown[g->owner];

			g->top_stage = g->owner;
			g->parallelism = par_over(c, g->owner, &g->par_lo, &g->par_hi);
			if (g->parallelism <= 0)
				g->parallelism = param_pos(o, "num_parallel_calls");
			if (g->parallelism <= 0) {
				g->parallelism = g->nthreads ? (double)g->nthreads : 1;
				g->parallelism_observed = true;
			}
			g->known = known > 0;
			/* some runs measured, some not: scale up to all runs */
			g->busy_ns = known ? (int64_t)((double)o->fn_work_ns *
						       (double)(known + unknown) / (double)known)
					   : 0;
			/* TensorFlow takes a worker slot before it reads the input
			 * (num_calls_ counts from the read), so a slot is held for
			 * read + function: P slots deliver P / (read + function) */
			if (g->known && c->input_of[g->owner] >= 0)
				g->busy_ns =
				    sat_add(g->busy_ns, input_busy(c, c->input_of[g->owner]));
		}
		g->work_per_root_ns = (double)g->busy_ns / (double)c->n;
		g->utilization = W > 0 ? (double)g->busy_ns / (W * g->parallelism) : 0;
		g->capacity =
		    g->busy_ns > 0 ? g->parallelism * 1e9 / g->work_per_root_ns : INFINITY;
		if (!g->known)
			g->capacity = NAN;
	}
}

const char *tfd_segment_name(const struct tfd_pipeline *p, const struct tfd_segment *g, char *buf,
			     size_t len)
{
	const char *top = g->top_stage >= 0 ? p->stages[g->top_stage].name : "?";
	const char *own = g->owner >= 0 ? p->stages[g->owner].name : "";

	if (g->kind == TFD_SEG_CONSUMER)
		snprintf(buf, len, "consumer's thread (%s)", top);
	else if (g->kind == TFD_SEG_FUNCTION)
		snprintf(buf, len, "%g %s worker%s%s", g->parallelism, own,
			 g->parallelism == 1 ? "" : "s",
			 g->parallelism_observed ? " (AUTOTUNE)" : "");
	else if (g->parallelism == 1)
		snprintf(buf, len, "thread feeding %s (runs %s)", own, top);
	else
		snprintf(buf, len, "%g threads feeding %s (run %s)", g->parallelism, own, top);
	return buf;
}

/* "the ..." of tfd_segment_name, for a sentence */
static const char *seg_label(const struct tfd_pipeline *p, const struct tfd_segment *g, char *buf,
			     size_t len)
{
	char n[200];

	snprintf(buf, len, "the %s", tfd_segment_name(p, g, n, sizeof(n)));
	return buf;
}

/* Root elements per second the pipeline delivers by the model. The consumer
 * runs its step and the stages of its own segment one after the other (no
 * prefetch between them), so that part takes compute + their work; every
 * other segment works in parallel and delivers at its capacity. caps, when
 * given, replaces the segments' capacities (what-if). */
static double model_rate(const struct tfd_segment *sg, size_t n, const struct tfd_capacity *cp,
			 const double *caps, double cpu_ns)
{
	double compute = isfinite(cp->demand) ? 1e9 / cp->demand : 0;
	double T = compute, cap0 = caps ? caps[0] : sg[0].capacity;

	if (n && isfinite(cap0) && cap0 > 0)
		T += 1e9 / cap0;
	for (size_t g = 1; g < n; g++) {
		double cap = caps ? caps[g] : sg[g].capacity;

		if (!isnan(cap) && cap > 0 && isfinite(cap) && 1e9 / cap > T)
			T = 1e9 / cap;
	}
	/* the cores: all that CPU work shares cpu_budget of them */
	if (cp->cpu_budget > 0 && cpu_ns / cp->cpu_budget > T)
		T = cpu_ns / cp->cpu_budget;
	return T > 0 ? 1e9 / T : INFINITY;
}

/* The share of stage s's function op time that Python ops take (0 without
 * op events). */
static double py_share(const struct tfd_stage *s)
{
	double all = 0, py = 0;

	for (size_t k = 0; k < s->nfn_ops; k++) {
		all += (double)s->fn_ops[k].self_ns;
		if (tfd_op_is_python(s->fn_ops[k].type))
			py += (double)s->fn_ops[k].self_ns;
	}
	return all > 0 ? py / all : 0;
}

/* The read time held in async stage q's worker slots: its input segment's work. */
static double reads_of(const struct tfd_pipeline *p, int q)
{
	for (size_t gi = 0; gi < p->nsegments; gi++)
		if (p->segments[gi].kind == TFD_SEG_INPUT && p->segments[gi].owner == q)
			return (double)p->segments[gi].busy_ns;
	return 0;
}

/* The CPU time stage i took in the window: its own work and, for an async
 * map, its function's runs (the reads its slots held are its input
 * segment's own). Left out: the share of Python ops (the GIL, not the
 * cores, bounds them, and a Python wait holds no core) and a Sleep's. */
static double stage_cpu_ns(const struct tfd_pipeline *p, size_t i)
{
	const struct tfd_stage *s = &p->stages[i];
	double w = (double)s->work_ns;

	if (strcmp(s->family, "Sleep") == 0)
		return 0;
	for (size_t gi = 0; gi < p->nsegments; gi++) {
		const struct tfd_segment *g = &p->segments[gi];

		if (g->kind == TFD_SEG_FUNCTION && g->owner == (int)i && g->known)
			w += fmax(0.0, (double)g->busy_ns - reads_of(p, (int)i));
	}
	return w * (1.0 - py_share(s));
}

/* The cores' part of the model (p's segments are in): the budget the
 * pipeline root states and the CPU time per root element. The step's own
 * time counts on a host without device activity (its compute is the
 * host's); on a host with a device it waits for the device. */
static void cpu_model(struct tfd_pipeline *p, const struct tfd_cap_calls *in)
{
	struct tfd_capacity *cp = &p->capacity;
	double w = 0;

	cp->cpu_budget = param_pos(&p->stages[0], "cpu_budget");
	if (!(cp->cpu_budget > 0) || !cp->root_elements)
		return;
	for (size_t i = 0; i < p->nstages; i++)
		w += stage_cpu_ns(p, i);
	cp->cpu_step_ns = !in->host->dev.read && !in->host->dev.nplanes && isfinite(cp->demand)
			      ? 1e9 / cp->demand
			      : 0;
	cp->cpu_ns = w / (double)cp->root_elements + cp->cpu_step_ns;
	cp->cpu_rate = cp->cpu_ns > 0 ? cp->cpu_budget * 1e9 / cp->cpu_ns : INFINITY;
}

/* The step limits when no producer is slower than the consumer's serial
 * part and the pipeline's share of that part is small. */
static bool step_limits(const struct ctx *c)
{
	const struct tfd_capacity *cp = &c->p->capacity;
	double compute = isfinite(cp->demand) ? 1e9 / cp->demand : 0;
	double w0 = c->segs.v[0].work_per_root_ns;

	for (size_t g = 1; g < c->segs.n; g++)
		if (!isnan(c->segs.v[g].capacity) && c->segs.v[g].capacity * (compute + w0) < 1e9)
			return false;
	return w0 <= 0.05 * (compute + w0);
}

/* The evidence line: the limit's utilization beside the runner-up's. */
static void write_evidence(struct ctx *c, int lim, int run)
{
	struct tfd_pipeline *p = c->p;
	struct tfd_capacity *cp = &p->capacity;
	const struct tfd_segment *l = &c->segs.v[lim], *r = run >= 0 ? &c->segs.v[run] : NULL;
	char a[200], b[200];

	seg_label(p, l, a, sizeof(a));
	if (r)
		seg_label(p, r, b, sizeof(b));
	if (cp->inferred)
		snprintf(cp->evidence, sizeof(cp->evidence),
			 "the consumer waits on %s while %s %s busy %.0f%%; its function's work "
			 "was not captured, so it is inferred to be the limit",
			 p->stages[l->owner].name, r ? b : "its readers",
			 r && r->parallelism > 1 ? "are" : "is", r ? 100 * r->utilization : 0.0);
	else if (r)
		snprintf(cp->evidence, sizeof(cp->evidence),
			 "%s busy %.0f%% while %s %s busy %.0f%%", a, 100 * l->utilization, b,
			 r->parallelism > 1 ? "are" : "is", 100 * r->utilization);
	else
		snprintf(cp->evidence, sizeof(cp->evidence), "%s busy %.0f%%", a,
			 100 * l->utilization);
}

static void choose_limiter(struct ctx *c, int64_t root_busy)
{
	struct tfd_pipeline *p = c->p;
	struct tfd_capacity *cp = &p->capacity;
	int lim = -1, run = -1, unk = -1;
	int64_t unk_wait = -1;

	for (size_t gi = 0; gi < c->segs.n; gi++) {
		const struct tfd_segment *g = &c->segs.v[gi];

		if (!g->known) {
			if (c->wait_ns[g->owner] > unk_wait) {
				unk_wait = c->wait_ns[g->owner];
				unk = (int)gi;
			}
			continue;
		}
		if (!isfinite(g->capacity))
			continue;
		if (lim < 0 || g->capacity < c->segs.v[lim].capacity) {
			run = lim;
			lim = (int)gi;
		} else if (run < 0 || g->capacity < c->segs.v[run].capacity) {
			run = (int)gi;
		}
	}
	/* an unmeasured map function limits when every measured segment could
	 * deliver more than was seen while the consumer waited */
	if (unk >= 0 && (double)root_busy >= 0.05 * (double)cp->window_ns &&
	    (lim < 0 || c->segs.v[lim].capacity > INFER_SLACK * cp->throughput)) {
		run = lim;
		lim = unk;
		c->segs.v[lim].capacity = cp->throughput;
		cp->inferred = true;
	}
	cp->limiter = lim;
	cp->runner_up = run;
	if (lim < 0)
		return;
	cp->margin = run >= 0 ? c->segs.v[run].capacity / c->segs.v[lim].capacity : INFINITY;
	cp->model_throughput = model_rate(c->segs.v, c->segs.n, cp, NULL, 0);
	cp->step_limits = step_limits(c) && !cp->inferred;
	write_evidence(c, lim, run);
}

bool tfd_capacity_window(const struct tfd_times *tm, const int *roots, size_t nroots,
			 size_t nwarmup, int64_t *t0, int64_t *t1)
{
	if (nroots < nwarmup + MIN_ROOT_ELEMENTS)
		return false;
	*t0 = tfd_times_start(tm, (size_t)roots[nwarmup]);
	*t1 = *t0;
	for (size_t r = nwarmup; r < nroots; r++) {
		int64_t end = tfd_times_end(tm, (size_t)roots[r]);

		if (end > *t1)
			*t1 = end;
	}
	return true;
}

void tfd_capacity_compute(struct tfd_pipeline *p, const struct tfd_cap_calls *in)
{
	struct ctx c;
	struct tfd_capacity *cp = &p->capacity;
	int64_t root_busy = 0;

	memset(cp, 0, sizeof(*cp));
	cp->limiter = cp->runner_up = -1;
	for (size_t i = 0; i < p->nstages; i++)
		p->stages[i].segment = -1;
	if (!p->nstages)
		return;
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.in = in;
	if (!tfd_capacity_window(&in->tm, in->roots, in->nroots, in->nwarmup, &c.t0, &c.t1)) {
		ops_only(&c); /* too few root calls for a model: the ops still are the maps' */
		return;
	}
	for (size_t r = in->nwarmup; r < in->nroots; r++) {
		size_t k = (size_t)in->roots[r];

		root_busy =
		    sat_add(root_busy, tfd_times_end(&in->tm, k) - tfd_times_start(&in->tm, k));
	}
	c.n = in->nroots - in->nwarmup;
	if (c.t1 <= c.t0)
		return;
	c.seg_of = xmalloc(p->nstages * sizeof(int));
	c.input_of = xmalloc(p->nstages * sizeof(int));
	c.fn_of = xmalloc(p->nstages * sizeof(int));
	c.wait_ns = xcalloc(p->nstages, sizeof(int64_t));
	c.fn_unknown = xcalloc(p->nstages, sizeof(uint64_t));
	assign_segments(&c);
	stage_work(&c);
	function_work(&c);
	finish_segments(&c);
	cp->valid = true;
	cp->window_ns = c.t1 - c.t0;
	cp->root_elements = c.n;
	cp->throughput = (double)c.n * 1e9 / (double)cp->window_ns;
	/* the consumer's own time between root calls: what it would take if
	 * input were free */
	cp->demand = cp->window_ns > root_busy
			 ? (double)c.n * 1e9 / (double)(cp->window_ns - root_busy)
			 : INFINITY;
	choose_limiter(&c, root_busy);
	for (size_t i = 0; i < p->nstages; i++)
		p->stages[i].segment = c.seg_of[i];
	p->segments = c.segs.v;
	p->nsegments = c.segs.n;
	if (cp->limiter >= 0) {
		double m = cp->model_throughput;

		cpu_model(p, in);
		cp->model_throughput = model_rate(p->segments, p->nsegments, cp, NULL, cp->cpu_ns);
		cp->cpu_limits = cp->cpu_budget > 0 && cp->cpu_rate < m;
		if (cp->cpu_limits)
			cp->step_limits = false;
	}
	imap_free(&c.seg_threads);
	free(c.seg_of);
	free(c.input_of);
	free(c.fn_of);
	free(c.wait_ns);
	free(c.fn_unknown);
}

double tfd_capacity_whatif(const struct tfd_pipeline *p, int si, double work_factor,
			   double par_factor, bool saves_cpu)
{
	const struct tfd_capacity *cp = &p->capacity;
	double *caps, rate, cpu;

	if (!cp->valid || cp->limiter < 0 || si < 0 || (size_t)si >= p->nstages)
		return 0;
	caps = xmalloc((p->nsegments + 1) * sizeof(double));
	for (size_t gi = 0; gi < p->nsegments; gi++) {
		const struct tfd_segment *g = &p->segments[gi];
		double cap = g->capacity, busy = (double)g->busy_ns, par = g->parallelism;
		bool mine = false;

		if (g->kind == TFD_SEG_FUNCTION && g->owner == si) {
			/* the function part of the slot time; the reads stay */
			double fn = busy - reads_of(p, g->owner);

			mine = true;
			busy = busy - fn + fn / work_factor;
		} else if (g->kind != TFD_SEG_FUNCTION && p->stages[si].segment == (int)gi) {
			mine = true;
			busy -= (double)p->stages[si].work_ns * (1.0 - 1.0 / work_factor);
		} else if (g->kind == TFD_SEG_FUNCTION && g->known && p->stages[si].segment >= 0 &&
			   p->segments[p->stages[si].segment].kind == TFD_SEG_INPUT &&
			   p->segments[p->stages[si].segment].owner == g->owner) {
			/* faster reads free the map's slots sooner too */
			busy -= (double)p->stages[si].work_ns * (1.0 - 1.0 / work_factor);
			cap = busy > 0 ? par * 1e9 * (double)cp->root_elements / busy : INFINITY;
		}
		if (mine) {
			par *= par_factor;
			if (!g->known) /* inferred: scale what was observed */
				cap = cp->throughput * par_factor * work_factor;
			else
				cap = busy > 0 ? par * 1e9 * (double)cp->root_elements / busy
					       : INFINITY;
		}
		caps[gi] = cap;
	}
	/* the CPU the change saves: a stage's work divided (more workers
	 * save none) */
	cpu = cp->cpu_ns;
	if (saves_cpu)
		cpu -= stage_cpu_ns(p, (size_t)si) / (double)cp->root_elements *
		       (1.0 - 1.0 / work_factor);
	rate = model_rate(p->segments, p->nsegments, cp, caps, cpu);
	free(caps);
	return rate;
}
