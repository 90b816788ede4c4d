/* fncalls.c - a host's dataset-function calls for the capacity pass: each
 * InstantiatedCapturedFunction::Run (or RunAsync) with the executor time of
 * its step (the ExecutorState::Process chunks that share its step id, on
 * whatever thread ran them), packed as struct tfd_fns (passes.h). Read before
 * the function and executor events may go; the capacity model (capacity.c)
 * sums them per map, and says how uneven a map's calls are
 * (tfd_stage_uneven_calls).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/select.h"
#include "tfd/vec.h"

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

/* The most bytes a call packs to (four varints), and what one takes
 * with room to spare (8 bytes on the bench's and real captures). */
#define FN_PACK_MAX 40
#define FN_PACK_GUESS 12

static void fn_pack(struct tfd_fns *out, size_t *cap, const struct tfd_fn_call *f,
		    struct tfd_fn_call *prev)
{
	uint8_t *q;

	if (out->len + FN_PACK_MAX > *cap) {
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
	/* a function called inline: 1 + its iterator's index in waits (its
	 * duration in f.work_ns until the ops are found), else 0 */
	size_t inline_of;
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
	int64_t dur = p->f.work_ns; /* its own duration, until its ops are found */

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
	if (p->inline_of) {
		/* its iterator's self time has it: only its wait for its ops,
		 * when they ran elsewhere, is told apart */
		struct tfd_inline_wait *w = &fd->out->waits.v[p->inline_of - 1];

		if ((x || summed) && p->f.work_thread != p->f.thread) {
			w->run_ns = sat_add(w->run_ns, dur);
			if (dur > p->f.work_ns)
				w->wait_ns = sat_add(w->wait_ns, dur - p->f.work_ns);
		}
		return;
	}
	if (fd->out->work_by_thread && p->f.thread < fd->out->nthreads)
		fd->out->work_by_thread[p->f.thread] =
		    sat_add(fd->out->work_by_thread[p->f.thread], p->f.work_ns);
	fn_pack(fd->out, &fd->cap, &p->f, &fd->prev);
}

static void find_later(struct finding *fd, const struct tfd_fn_call *f, const struct tfd_event *e,
		       size_t inline_of)
{
	struct pending_fn *p = &fd->ring[fd->n % LAG];
	const struct pending_fn *half;

	if (fd->n >= LAG)
		find_one(fd, p);
	p->f = *f;
	p->find = e->flags & TFD_EVF_ID;
	p->name = e->sig->name;
	p->inline_of = inline_of;
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

/* What a lean host's threads keep once their function calls are read
 * (iterator events always stay). */
#define SHED_KEEP (TFD_KIND_BIT(TFD_EV_PRODUCE) | TFD_KIND_BIT(TFD_EV_CONSUME))

/* An iterator call open on the thread being read. */
struct open_call {
	int64_t end;
	const char *name;
	bool counted; /* in its name's inline calls */
};

/* 1 + the index in out->waits of the name of iterator call c, which runs a
 * function inline (added if new; c counted once). */
static size_t inline_slot(struct tfd_fns *out, struct imap *wait_of, struct open_call *c)
{
	uint64_t key = (uint64_t)(uintptr_t)c->name;
	size_t k;

	if (!imap_get(wait_of, key, &k)) {
		vec_push(&out->waits, ((struct tfd_inline_wait){c->name, 0, 0, 0}));
		k = out->waits.n;
		imap_put(wait_of, key, k);
	}
	if (!c->counted) {
		out->waits.v[k - 1].calls++;
		c->counted = true;
	}
	return k;
}

typedef VEC(struct open_call) open_calls;

/* A thread's function calls as its events are read in order: the
 * iterator calls open around each, the names of those that ran functions
 * inline. */
struct fn_walk {
	struct finding *fd;
	struct tfd_fns *out;
	struct imap *wait_of;
	open_calls *open;
	uint32_t thread;
};

/* One event of the thread; true when a lean thread keeps it (what the
 * graph reads: iterator, Produce and Consume events). */
static bool fn_event(const struct tfd_event *e, void *ctx)
{
	struct fn_walk *w = ctx;
	open_calls *open = w->open;
	struct tfd_fn_call f = {e->start_ns, e->dur_ns, w->thread, w->thread};

	while (open->n && open->v[open->n - 1].end <= e->start_ns)
		open->n--;
	if (e->kind == TFD_EV_ITERATOR) {
		vec_push(open, ((struct open_call){e->start_ns + e->dur_ns, e->sig->name, false}));
		return true;
	}
	if (e->kind != TFD_EV_FUNCTION)
		return (TFD_KIND_BIT(e->kind) & SHED_KEEP) != 0;
	/* a function inside an iterator call ran inline: that stage's self
	 * time has it already, and its wait for its ops is told apart */
	find_later(w->fd, &f, e,
		   open->n ? inline_slot(w->out, w->wait_of, &open->v[open->n - 1]) : 0);
	return false;
}

void tfd_capacity_functions(const struct tfd_host *h, struct tfd_host *lean, struct tfd_fns *out)
{
	struct exec_index ex;
	struct finding fd = {.x = &ex, .sums = h->exec_sums, .out = out};
	open_calls open = {0};	   /* the enclosing iterator calls */
	struct imap wait_of = {0}; /* iterator name -> 1 + its index in waits */
	struct fn_walk w = {&fd, out, &wait_of, &open, 0};

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
	/* room for a call per function event at FN_PACK_GUESS bytes each
	 * (about 8 are written), once: grown by half from nothing, the list
	 * was copied at each step, at a 104 MB tf.data-heavy capture's peak
	 * on one core; more calls still grow it */
	fd.cap = FN_PACK_GUESS * h->nfunctions + FN_PACK_MAX;
	out->buf = xmalloc(fd.cap);
	exec_sums(h, lean, &ex);
	for (size_t t = 0; t < h->nthreads; t++) {
		if (!(h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_FUNCTION)))
			continue; /* no function events to count */
		open.n = 0;
		w.thread = (uint32_t)t;
		if (lean) {
			/* one walk: the calls are made as the thread's filter
			 * keeps only what the graph reads */
			tfd_thread_filter_times(lean, &lean->threads[t], fn_event, &w);
			lean->threads[t].kinds &= SHED_KEEP | TFD_KIND_BIT(TFD_EV_ITERATOR);
		} else {
			struct tfd_ev_mcursor cur;
			struct tfd_event ev;

			for (tfd_evm_begin_times(&cur, h, t); tfd_evm_next(&cur, &ev);)
				fn_event(&ev, &w);
			tfd_evm_end(&cur);
		}
		find_rest(&fd);
	}
	vec_free(&open);
	imap_free(&wait_of);
	free(ex.v);
	free(ex.bucket);
	if (lean) { /* (lean) the sums are read: only the calls stay */
		tfd_exec_sums_free(lean->exec_sums);
		lean->exec_sums = NULL;
	}
	/* no spare room through the pipelines */
	if (!out->len) { /* no call: no list, as before any was made */
		free(out->buf);
		out->buf = NULL;
	} else if (out->len < fd.cap) {
		out->buf = xrealloc(out->buf, out->len + 1);
	}
}

/* How uneven a map's function calls are: their median work, and the share
 * of their work in calls more than TFD_UNEVEN_X times as long (one slow
 * element in 64 holds 60 % of the work; even calls on a busy host keep
 * 5-10 % there, from being preempted). */
void tfd_stage_uneven_calls(struct tfd_stage *s, int64_t *w, size_t n)
{
	int64_t lim;
	double slow = 0, all = 0;

	if (n < TFD_UNEVEN_MIN_CALLS)
		return;
	s->fn_p50_ns = tfd_kth_i64(w, n, n / 2);
	lim = s->fn_p50_ns > INT64_MAX / TFD_UNEVEN_X ? INT64_MAX : s->fn_p50_ns * TFD_UNEVEN_X;
	for (size_t k = 0; k < n; k++) {
		all += (double)w[k];
		if (w[k] > lim)
			slow += (double)w[k];
	}
	s->fn_uneven_share = all > 0 ? slow / all : 0.0;
}
