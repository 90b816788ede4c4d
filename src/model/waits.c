/* waits.c - the time a training loop waits for its input, from a host's
 * events: the GetNext ops it calls (XProf's rule), the datasets and
 * iterators it makes (MakeIterator, the eager dataset ops), and the
 * interpreter's lock it waits for after an eager GetNext returned; each as
 * a sorted union of intervals (tfd/capture.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/capture.h"
#include "tfd/err.h"
#include "tfd/families.h"
#include "tfd/select.h"

/* What a union holds. */
enum wait_what {
	WAIT_ALL,     /* every wait */
	WAIT_CREATES, /* the datasets and iterators made for the loop */
	WAIT_GIL,     /* the interpreter's lock after an eager GetNext */
};

int tfd_interval_cmp(const void *a, const void *b)
{
	const struct tfd_interval *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e > y->e) - (x->e < y->e);
}

/* Whether e is a call of the root of a loop inside a tf.function's input
 * ("Scan::X"): the loop's body waits in it for its next element, as a loop
 * outside a function waits in IteratorGetNext. last/last_is cache the
 * answer for the signature read before. */
static bool loop_input_root(const struct tfd_event *e, const struct tfd_sig **last, bool *last_is)
{
	if (e->sig != *last) {
		const char *l = tfd_loop_input_name(e->sig->name);

		*last = e->sig;
		*last_is = l && tfd_iter_parts(l) == 2;
	}
	return *last_is;
}

/* Whether thread t may run the training loop: it calls GetNext, or it is
 * named and not one of tf.data's own threads (the Python thread that makes
 * an iterator an epoch for a train function whose GetNext runs on the
 * inter-op threads). Iterators made on it (MakeIterator), outside any
 * iterator's call, are made for the loop, which waits for them; made on
 * tf.data's threads (an interleave's inputs) or inside an iterator's call
 * (a flat_map's inner datasets) they are the pipeline's work. */
static bool loop_thread(const struct tfd_host *h, size_t t)
{
	const char *name = h->threads[t].name;

	return (h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_GETNEXT)) ||
	       (name && *name && strncmp(name, "tf_data", 7) != 0);
}

/* The Python call around an eager op (pywrap_tfe): it ends once the
 * calling thread holds the interpreter's lock again. */
static bool is_py_call(const struct tfd_event *e)
{
	return e->kind == TFD_EV_LOOPOP && strcmp(e->sig->name, "TFE_Py_FastPathExecute_C") == 0;
}

/* A GetNext the loop calls (not one inside a dataset function). */
static bool is_getnext(const struct tfd_host *h, const struct tfd_event *e, int64_t fn_end)
{
	return e->kind == TFD_EV_GETNEXT && e->start_ns >= fn_end &&
	       !((e->flags & TFD_EVF_ID) && tfd_host_loose_fn(h, e->id));
}

/* Whether e, an event of a thread that may run the loop, is time the loop
 * waits for input; fn_end the end of the dataset function's run open on
 * the thread (a GetNext inside one is the pipeline's own: a generator that
 * pulls another iterator, prefetch_to_device), it_end the iterator call's. */
static bool waits_for_input(const struct tfd_host *h, const struct tfd_event *e, int64_t fn_end,
			    int64_t it_end, enum wait_what what)
{
	if (e->kind == TFD_EV_LOOPOP)
		return what != WAIT_GIL && !is_py_call(e) && e->start_ns >= fn_end &&
		       e->start_ns >= it_end;
	return what == WAIT_ALL && is_getnext(h, e, fn_end);
}

/* The stretches a thread's loop waited for the interpreter's lock: from
 * the end of the GetNext an eager Python call ran to the end of that call,
 * which waits for the lock before it returns. */
struct tails {
	struct tfd_interval *v;
	size_t n, cap;
};

static void tail_add(struct tails *tl, int64_t s, int64_t e)
{
	if (e <= s)
		return;
	if (tl->n == tl->cap) {
		tl->cap = tl->cap ? 2 * tl->cap : 64;
		tl->v = xrealloc(tl->v, tl->cap * sizeof(*tl->v));
	}
	tl->v[tl->n++] = (struct tfd_interval){s, e};
}

/* The loop's state on one thread as its events are read. */
struct scan {
	int64_t fn_end, it_end;	    /* the open dataset function's and iterator call's ends */
	int64_t py_s, py_e, gn_end; /* the open Python call, its GetNext's end (or INT64_MIN) */
	struct tails tails;
};

static void py_close(struct scan *sc)
{
	if (sc->gn_end != INT64_MIN)
		tail_add(&sc->tails, sc->gn_end, sc->py_e);
	sc->gn_end = INT64_MIN;
}

/* Each tail less the least of them (their 10th percentile: a call's own
 * return with the lock free, a few microseconds) into v, or only counted
 * when v is NULL: how many. */
static size_t tails_out(struct tails *tl, struct tfd_interval *v)
{
	int64_t *len, floor;
	size_t m = 0;

	if (!tl->n)
		return 0;
	len = xmalloc(tl->n * sizeof(*len));
	for (size_t i = 0; i < tl->n; i++)
		len[i] = tl->v[i].e - tl->v[i].s;
	floor = tfd_kth_i64(len, tl->n, tl->n / 10);
	free(len);
	for (size_t i = 0; i < tl->n; i++) {
		if (tl->v[i].e - tl->v[i].s <= floor)
			continue;
		if (v)
			v[m] = (struct tfd_interval){tl->v[i].s + floor, tl->v[i].e};
		m++;
	}
	return m;
}

/* Thread t's waits of kind what into v, or only counted when v is NULL:
 * how many. */
static size_t thread_waits(const struct tfd_host *h, size_t t, enum wait_what what,
			   struct tfd_interval *v)
{
	struct tfd_ev_cursor c;
	struct tfd_event e;
	const struct tfd_sig *last = NULL;
	bool last_is = false, loop = loop_thread(h, t);
	struct scan sc = {INT64_MIN, INT64_MIN, 0, 0, INT64_MIN, {NULL, 0, 0}};
	size_t m = 0;

	for (tfd_ev_begin(&c, h, &h->threads[t]); tfd_ev_next(&c, &e);) {
		if (e.kind == TFD_EV_EXEC || e.kind == TFD_EV_FUNCTION) {
			if (e.dur_ns > 0 && e.start_ns + e.dur_ns > sc.fn_end)
				sc.fn_end = e.start_ns + e.dur_ns;
			continue;
		}
		if (e.dur_ns <= 0)
			continue;
		if (e.kind == TFD_EV_ITERATOR && e.start_ns + e.dur_ns > sc.it_end)
			sc.it_end = e.start_ns + e.dur_ns;
		if (loop && is_py_call(&e)) {
			py_close(&sc);
			sc.py_s = e.start_ns;
			sc.py_e = e.start_ns + e.dur_ns;
		} else if (loop && is_getnext(h, &e, sc.fn_end) && e.start_ns >= sc.py_s &&
			   e.start_ns + e.dur_ns <= sc.py_e && e.start_ns + e.dur_ns > sc.gn_end) {
			sc.gn_end = e.start_ns + e.dur_ns;
		}
		if (!(loop && waits_for_input(h, &e, sc.fn_end, sc.it_end, what)) &&
		    !(what == WAIT_ALL && e.kind == TFD_EV_ITERATOR && h->nloop_inputs &&
		      loop_input_root(&e, &last, &last_is)))
			continue;
		if (v)
			v[m] = (struct tfd_interval){e.start_ns, e.start_ns + e.dur_ns};
		m++;
	}
	py_close(&sc);
	if (what != WAIT_CREATES)
		m += tails_out(&sc.tails, v ? v + m : NULL);
	free(sc.tails.v);
	return m;
}

/* Whether thread t can hold waits of kind what. */
static bool thread_may_wait(const struct tfd_host *h, size_t t, enum wait_what what)
{
	uint32_t k = h->threads[t].kinds;

	switch (what) {
	case WAIT_CREATES:
		return loop_thread(h, t) && (k & TFD_KIND_BIT(TFD_EV_LOOPOP));
	case WAIT_GIL:
		return (k & TFD_KIND_BIT(TFD_EV_GETNEXT)) && (k & TFD_KIND_BIT(TFD_EV_LOOPOP));
	default:
		return (k & (TFD_KIND_BIT(TFD_EV_GETNEXT) | TFD_KIND_BIT(TFD_EV_LOOPOP) |
			     (h->nloop_inputs ? TFD_KIND_BIT(TFD_EV_ITERATOR) : 0))) != 0;
	}
}

/* The union of the waits of kind what, counted first so that the array
 * is made once. */
static struct tfd_interval *wait_union(const struct tfd_host *h, enum wait_what what, size_t *n)
{
	struct tfd_interval *v = NULL;
	size_t m = 0, k = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t t = 0; t < h->nthreads; t++)
			if (thread_may_wait(h, t, what))
				m += thread_waits(h, t, what, pass ? v + m : NULL);
		if (!pass) {
			v = xmalloc((m + 1) * sizeof(*v));
			m = 0;
		}
	}
	if (m > 1)
		qsort(v, m, sizeof(*v), tfd_interval_cmp);
	for (size_t i = 0; i < m; i++) {
		if (k && v[i].s <= v[k - 1].e) {
			if (v[i].e > v[k - 1].e)
				v[k - 1].e = v[i].e;
		} else {
			v[k++] = v[i];
		}
	}
	*n = k;
	return v;
}

struct tfd_interval *tfd_host_wait_union(const struct tfd_host *h, size_t *n)
{
	return wait_union(h, WAIT_ALL, n);
}

struct tfd_interval *tfd_host_create_union(const struct tfd_host *h, size_t *n)
{
	return wait_union(h, WAIT_CREATES, n);
}

struct tfd_interval *tfd_host_gil_union(const struct tfd_host *h, size_t *n)
{
	return wait_union(h, WAIT_GIL, n);
}

void tfd_host_waits_read(const struct tfd_host *h, bool skip_all, struct tfd_host_waits *w)
{
	*w = (struct tfd_host_waits){0};
	if (!skip_all)
		w->all = tfd_host_wait_union(h, &w->nall);
	w->creates = tfd_host_create_union(h, &w->ncreates);
	w->gil = tfd_host_gil_union(h, &w->ngil);
}

void tfd_host_waits_free(struct tfd_host_waits *w)
{
	free(w->all);
	free(w->creates);
	free(w->gil);
	*w = (struct tfd_host_waits){0};
}
