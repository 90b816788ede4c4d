/* devsweep.c - the step breakdown of a host's device time as TensorFlow
 * makes it (device-input.md): each step's spans (its device events, its
 * host wait, its host-side copies) made non-overlapping, the kind of
 * higher priority owning an instant two kinds share (enum tfd_dev_kind is
 * in that order). The spans come from the readers' sources in time order
 * and are swept as they come, per step, so memory does not grow with the
 * events. */
#include <stdlib.h>
#include <string.h>

#include "capture_impl.h"
#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/err.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/vec.h"

void tfd_device_host_op(struct tfd_host *h, int64_t start_ns, int64_t end_ns, bool has_group,
			int64_t group)
{
	struct tfd_device *d = &h->dev;

	if (end_ns <= start_ns)
		return;
	if (d->nhost_ops == d->host_ops_cap) {
		d->host_ops_cap = d->host_ops_cap ? 2 * d->host_ops_cap : 64;
		d->host_ops = xrealloc(d->host_ops, d->host_ops_cap * sizeof(*d->host_ops));
	}
	d->host_ops[d->nhost_ops++] =
	    (struct tfd_dev_span){start_ns, end_ns, group, TFD_DEV_H2D, has_group};
}

static int span_start_cmp(const void *a, const void *b)
{
	const struct tfd_dev_span *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

static bool array_next(void *ctx, struct tfd_dev_span *out)
{
	struct tfd_dev_array *a = ctx;

	if (a->at >= a->n)
		return false;
	*out = a->v[a->at++];
	return true;
}

struct tfd_dev_source tfd_dev_array_source(struct tfd_dev_array *a)
{
	if (a->n > 1)
		qsort(a->v, a->n, sizeof(*a->v), span_start_cmp);
	a->at = 0;
	return (struct tfd_dev_source){array_next, a};
}

/* ---- a binary min-heap of (key, value) ---------------------------------- */

struct hitem {
	int64_t key;
	uint32_t val;
};

/* The first HEAP_INLINE items live in the heap itself: a step's sweep
 * rarely has more spans open at once, and a step needs no allocation. The
 * heap holds no pointer to itself (v is NULL while the items are inline):
 * the steps' states move when their vector grows. */
#define HEAP_INLINE 3
struct heap {
	struct hitem *v; /* allocated, or NULL: the items are in[] */
	uint32_t n, cap;
	struct hitem in[HEAP_INLINE];
};

static inline struct hitem *items(struct heap *h)
{
	return h->v ? h->v : h->in;
}

static void heap_push(struct heap *h, int64_t key, uint32_t val)
{
	struct hitem *v;
	uint32_t i;

	if (!h->cap)
		h->cap = HEAP_INLINE;
	if (h->n == h->cap) {
		h->cap *= 2;
		if (!h->v) {
			h->v = xmalloc(h->cap * sizeof(*h->v));
			memcpy(h->v, h->in, sizeof(h->in));
		} else {
			h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
		}
	}
	v = items(h);
	i = h->n++;
	while (i && v[(i - 1) / 2].key > key) {
		v[i] = v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	v[i] = (struct hitem){key, val};
}

static void heap_free(struct heap *h)
{
	free(h->v);
	h->v = NULL;
	h->n = h->cap = 0;
}

static struct hitem heap_pop(struct heap *h)
{
	struct hitem *v = items(h);
	struct hitem top = v[0], last = v[--h->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && v[c + 1].key < v[c].key)
			c++;
		if (v[c].key >= last.key)
			break;
		v[i] = v[c];
		i = c;
	}
	if (h->n)
		v[i] = last;
	return top;
}

/* ---- one step's sweep ---------------------------------------------------- */

/* The spans of one step open at time t, by kind, and their ends. */
struct sstate {
	int64_t t;
	int32_t count[TFD_DEV__COUNT];
	struct heap ends;
};

/* [a, b) to the highest kind open. */
static void own_top(const struct sstate *s, int64_t a, int64_t b, int64_t *owned)
{
	for (int k = TFD_DEV__COUNT - 1; k >= 0; k--) {
		if (s->count[k] > 0) {
			owned[k] += b - a;
			return;
		}
	}
}

/* The sweep of s on to time `to`: the spans ending by then close. */
static void advance(struct sstate *s, int64_t to, int64_t *owned)
{
	while (s->ends.n && items(&s->ends)[0].key <= to) {
		int64_t e = items(&s->ends)[0].key;

		if (e > s->t) {
			own_top(s, s->t, e, owned);
			s->t = e;
		}
		s->count[heap_pop(&s->ends).val]--;
	}
	if (to > s->t) {
		own_top(s, s->t, to, owned);
		s->t = to;
	}
	if (!s->ends.n && s->ends.v && s->ends.cap > 64) {
		/* a burst is over: its room goes */
		heap_free(&s->ends);
	}
}

/* Span [a, b) of kind k into s (its spans come in start order). */
static void feed(struct sstate *s, int64_t a, int64_t b, int k, int64_t *owned)
{
	if (b <= a)
		return;
	if (!s->ends.n && s->t < a)
		s->t = a; /* nothing open: nothing owned before a */
	advance(s, a, owned);
	s->count[k]++;
	heap_push(&s->ends, b, (uint32_t)k);
}

/* ---- the host's sweep ----------------------------------------------------- */

/* The host's wait as a source of spans of kind TFD_DEV_WAIT. */
struct waits {
	struct tfd_interval *v;
	size_t n, at;
};

static bool wait_next(void *ctx, struct tfd_dev_span *out)
{
	struct waits *w = ctx;

	if (w->at >= w->n)
		return false;
	*out = (struct tfd_dev_span){w->v[w->at].s, w->v[w->at].e, 0, TFD_DEV_WAIT, false};
	w->at++;
	return true;
}

/* The steps (by start), their results, the steps a span without a group
 * may overlap, and the host span's own sweep. A step's sweep state lives
 * only while spans may still come to it: once the spans start past its
 * end (they are cut to its extent) it is closed and its slot reused, so
 * the states are those of the steps open at once, not of every step. */
struct steps_sweep {
	struct tfd_step *steps;
	size_t nsteps, next;
	size_t *active, nactive;
	struct tfd_dev_step *out;
	struct imap by_group; /* group_id -> step */
	uint32_t *slot_of;    /* step -> its state's slot, NO_SLOT: none */
	VEC(struct sstate) slots;
	VEC(uint32_t) free_slots;
	struct heap open; /* steps with a state, by end */
	struct sstate span;
	int64_t span_start, span_end;
	int64_t span_owned[TFD_DEV__COUNT];
};

#define NO_SLOT UINT32_MAX

static struct sstate *state_of(struct steps_sweep *w, size_t i)
{
	uint32_t k = w->slot_of[i];

	if (k == NO_SLOT) {
		struct sstate z;

		memset(&z, 0, sizeof(z));
		z.t = INT64_MIN;
		if (w->free_slots.n) {
			k = w->free_slots.v[--w->free_slots.n];
			w->slots.v[k] = z;
		} else {
			k = (uint32_t)w->slots.n;
			vec_push(&w->slots, z);
		}
		w->slot_of[i] = k;
		heap_push(&w->open, w->steps[i].end_ns, (uint32_t)i);
	}
	return &w->slots.v[k];
}

/* Close the states of the steps that end by t: their spans run to their
 * ends, the result is final. */
static void close_upto(struct steps_sweep *w, int64_t t)
{
	while (w->open.n && items(&w->open)[0].key <= t) {
		uint32_t i = heap_pop(&w->open).val, k = w->slot_of[i];

		advance(&w->slots.v[k], INT64_MAX, w->out[i].owned);
		heap_free(&w->slots.v[k].ends);
		w->slot_of[i] = NO_SLOT;
		vec_push(&w->free_slots, k);
	}
}

static void feed_step(struct steps_sweep *w, size_t i, const struct tfd_dev_span *sp)
{
	const struct tfd_step *s = &w->steps[i];
	int64_t a = sp->start_ns > s->start_ns ? sp->start_ns : s->start_ns;
	int64_t b = sp->end_ns < s->end_ns ? sp->end_ns : s->end_ns;

	if (b > a)
		feed(state_of(w, i), a, b, sp->kind, w->out[i].owned);
}

/* A span to the host span's sweep and its steps'. */
static void route(struct steps_sweep *w, const struct tfd_dev_span *sp)
{
	size_t i, keep = 0;

	close_upto(w, sp->start_ns);
	if (!w->nsteps) /* the host's span stands for the steps */
		feed(&w->span, sp->start_ns > w->span_start ? sp->start_ns : w->span_start,
		     sp->end_ns < w->span_end ? sp->end_ns : w->span_end, sp->kind, w->span_owned);
	if (sp->has_group && imap_get(&w->by_group, (uint64_t)sp->group, &i)) {
		feed_step(w, i, sp);
		return;
	}
	/* the steps started before the span ends and not over before it starts */
	while (w->next < w->nsteps && w->steps[w->next].start_ns < sp->end_ns)
		w->active[w->nactive++] = w->next++;
	for (size_t k = 0; k < w->nactive; k++) {
		i = w->active[k];
		if (w->steps[i].end_ns <= sp->start_ns)
			continue; /* over for good: spans come in start order */
		w->active[keep++] = i;
		feed_step(w, i, sp);
	}
	w->nactive = keep;
}

/* Close every sweep: what is open runs to its end. */
static void close_all(struct steps_sweep *w)
{
	advance(&w->span, INT64_MAX, w->span_owned);
	heap_free(&w->span.ends);
	close_upto(w, INT64_MAX);
}

/* The k-way merge: sources 0..n-1 counted as the device's (n: the wait). */
static size_t merge(struct tfd_device *d, struct steps_sweep *w, struct tfd_dev_source *src,
		    size_t n)
{
	struct heap starts = {0};
	struct tfd_dev_span *cur = xcalloc(n + 1, sizeof(*cur));
	size_t bad = SIZE_MAX;

	for (size_t i = 0; i <= n; i++)
		if (src[i].next(src[i].ctx, &cur[i]))
			heap_push(&starts, cur[i].start_ns, (uint32_t)i);
	while (starts.n && bad == SIZE_MAX) {
		uint32_t i = heap_pop(&starts).val;
		int64_t last = cur[i].start_ns;

		route(w, &cur[i]);
		if (i < n) {
			d->kind_ns[cur[i].kind] += cur[i].end_ns - cur[i].start_ns;
			d->kind_n[cur[i].kind]++;
		}
		if (src[i].next(src[i].ctx, &cur[i])) {
			if (cur[i].start_ns < last)
				bad = i;
			else
				heap_push(&starts, cur[i].start_ns, i);
		}
	}
	heap_free(&starts);
	free(cur);
	return bad;
}

/* What a sweep reads of its host, copied when it is made: the host may
 * change (its events go) while the sweep runs on another thread. */
struct tfd_dev_sweep {
	struct tfd_device base;	  /* h->dev as it was, without its copies */
	struct tfd_dev_array ops; /* the host's own copies (taken from h) */
	struct tfd_interval *waits;
	size_t nwaits;
	struct tfd_step *steps; /* sorted by start */
	size_t nsteps;
	/* the steps' group ids are not the events' (the steps are markers):
	 * every span goes to the steps it overlaps */
	bool by_time;
	int64_t span_start, span_end;
	struct tfd_device out; /* a run's result, once one went through */
	bool done;
};

static void steps_init(struct steps_sweep *w, const struct tfd_dev_sweep *s)
{
	memset(w, 0, sizeof(*w));
	w->nsteps = s->nsteps;
	w->steps = xcalloc(s->nsteps + 1, sizeof(*w->steps));
	if (s->nsteps)
		memcpy(w->steps, s->steps, s->nsteps * sizeof(*w->steps));
	w->active = xcalloc(s->nsteps + 1, sizeof(*w->active));
	w->slot_of = xmalloc((s->nsteps + 1) * sizeof(*w->slot_of));
	w->out = xcalloc(s->nsteps + 1, sizeof(*w->out));
	for (size_t i = 0; i < s->nsteps; i++) {
		w->out[i].group_id = w->steps[i].group_id;
		w->slot_of[i] = NO_SLOT;
		if (!s->by_time)
			imap_put(&w->by_group, (uint64_t)w->steps[i].group_id, i);
	}
	w->span.t = INT64_MIN;
	w->span_start = s->span_start;
	w->span_end = s->span_end;
}

static void steps_free(struct steps_sweep *w)
{
	free(w->steps);
	free(w->active);
	free(w->slot_of);
	free(w->out);
	vec_free(&w->slots);
	vec_free(&w->free_slots);
	heap_free(&w->open);
	imap_free(&w->by_group);
}

struct tfd_dev_sweep *tfd_dev_sweep_new(struct tfd_host *h)
{
	struct tfd_dev_sweep *s = xcalloc(1, sizeof(*s));

	s->base = h->dev;
	s->ops = (struct tfd_dev_array){h->dev.host_ops, h->dev.nhost_ops, 0};
	h->dev.host_ops = NULL;
	h->dev.nhost_ops = h->dev.host_ops_cap = 0;
	s->base.host_ops = NULL;
	s->base.nhost_ops = s->base.host_ops_cap = 0;
	s->waits = tfd_host_wait_union(h, &s->nwaits);
	s->nsteps = h->nsteps;
	s->steps = xcalloc(h->nsteps + 1, sizeof(*s->steps));
	if (h->nsteps)
		memcpy(s->steps, h->steps, h->nsteps * sizeof(*s->steps));
	qsort(s->steps, s->nsteps, sizeof(*s->steps), tfd_cm_step_cmp);
	s->by_time = h->steps_from_markers;
	s->span_start = h->span_start_ns;
	s->span_end = h->span_end_ns;
	return s;
}

size_t tfd_dev_sweep_run(struct tfd_dev_sweep *s, struct tfd_dev_source *src, size_t n)
{
	struct tfd_device d = s->base;
	struct waits wait = {s->waits, s->nwaits, 0};
	struct tfd_dev_source *all = xcalloc(n + 2, sizeof(*all));
	struct steps_sweep w;
	size_t bad;

	memset(d.kind_ns, 0, sizeof(d.kind_ns));
	memset(d.kind_n, 0, sizeof(d.kind_n));
	memcpy(all, src, n * sizeof(*all));
	/* the host's own copies are one more device source; the wait last */
	all[n] = tfd_dev_array_source(&s->ops);
	all[n + 1] = (struct tfd_dev_source){wait_next, &wait};
	steps_init(&w, s);
	bad = merge(&d, &w, all, n + 1);
	close_all(&w);
	if (bad == SIZE_MAX) {
		d.steps = w.out;
		w.out = NULL;
		d.nsteps = s->nsteps;
		memcpy(d.span_owned, w.span_owned, sizeof(d.span_owned));
		d.read = false;
		for (int k = 0; k < TFD_DEV__COUNT; k++)
			d.read |= k != TFD_DEV_WAIT && d.kind_n[k] > 0;
		s->out = d;
		s->done = true;
		bad = n;
	}
	steps_free(&w);
	free(all);
	return bad;
}

void tfd_dev_sweep_install(struct tfd_dev_sweep *s, struct tfd_host *h)
{
	if (!s->done)
		return;
	free(h->dev.steps);
	free(h->dev.host_ops); /* none: taken when the sweep was made */
	h->dev = s->out;
	s->out.steps = NULL;
	s->done = false;
}

void tfd_dev_sweep_free(struct tfd_dev_sweep *s)
{
	if (!s)
		return;
	free(s->ops.v);
	free(s->waits);
	free(s->steps);
	free(s->out.steps);
	free(s);
}

size_t tfd_device_sweep(struct tfd_capture *cap, struct tfd_host *h, struct tfd_dev_source *src,
			size_t n)
{
	struct tfd_dev_sweep *s = tfd_dev_sweep_new(h);
	size_t bad = tfd_dev_sweep_run(s, src, n);

	(void)cap;
	if (bad == n) {
		tfd_dev_sweep_install(s, h);
	} else {
		/* as before: the copies stay the host's for the next sweep */
		h->dev.host_ops = s->ops.v;
		h->dev.nhost_ops = h->dev.host_ops_cap = s->ops.n;
		s->ops.v = NULL;
	}
	tfd_dev_sweep_free(s);
	return bad;
}
