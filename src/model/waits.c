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
#include "tfd/satmath.h"
#include "tfd/select.h"
#include "tfd/vec.h"

typedef VEC(struct tfd_interval) ivec;

/* A host's waits as its threads are read, before their unions: every
 * wait, and the two parts of them the report names. */
struct parts {
	ivec all, creates, gil;
	size_t nroots_made;
};

static void add(ivec *v, int64_t s, int64_t e)
{
	vec_push(v, ((struct tfd_interval){s, e}));
}

int tfd_interval_cmp(const void *a, const void *b)
{
	const struct tfd_interval *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->e > y->e) - (x->e < y->e);
}

int64_t tfd_interval_overlap(const struct tfd_interval *u, size_t n, int64_t a, int64_t b)
{
	size_t lo = 0, hi = n;
	int64_t w = 0;

	/* a binary search for the first interval that ends after a, then a
	 * walk: linear in the steps overall */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u[mid].e <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && u[i].s < b; i++) {
		int64_t x = u[i].s > a ? u[i].s : a, y = u[i].e < b ? u[i].e : b;

		if (y > x)
			w = sat_add(w, y - x);
	}
	return w;
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

	/* tf.data's thread for the MakeIterator op of a graph (a tf.function
	 * that runs `iter(ds)`): the function waits for the iterator it makes
	 * there, as an eager loop waits for the one it makes on its own thread */
	return (h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_GETNEXT)) ||
	       (name && *name &&
		(strncmp(name, "tf_data", 7) != 0 ||
		 strncmp(name, "tf_data_make_iterator", 21) == 0));
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

/* Whether e, a dataset or an iterator the loop's thread made, was made for
 * the loop: outside the dataset function's run open on the thread (fn_end)
 * and the iterator's call (it_end). */
static bool made_for_loop(const struct tfd_event *e, int64_t fn_end, int64_t it_end)
{
	return e->kind == TFD_EV_LOOPOP && !is_py_call(e) && e->start_ns >= fn_end &&
	       e->start_ns >= it_end;
}

/* The loop's state on one thread as its events are read. */
struct scan {
	int64_t fn_end, it_end;	    /* the open dataset function's and iterator call's ends */
	int64_t py_s, py_e, gn_end; /* the open Python call, its GetNext's end (or INT64_MIN) */
	/* the stretches the loop waited for the interpreter's lock: from the
	 * end of the GetNext an eager Python call ran to the end of that
	 * call, which waits for the lock before it returns */
	ivec tails;
};

static void py_close(struct scan *sc)
{
	if (sc->gn_end != INT64_MIN && sc->py_e > sc->gn_end)
		add(&sc->tails, sc->gn_end, sc->py_e);
	sc->gn_end = INT64_MIN;
}

/* Each tail less the least of them (their 10th percentile: a call's own
 * return with the lock free, a few microseconds), into the waits and the
 * GIL's part. */
static void tails_out(const ivec *tl, struct parts *out)
{
	int64_t *len, floor;

	if (!tl->n)
		return;
	len = xmalloc(tl->n * sizeof(*len));
	for (size_t i = 0; i < tl->n; i++)
		len[i] = tl->v[i].e - tl->v[i].s;
	floor = tfd_kth_i64(len, tl->n, tl->n / 10);
	free(len);
	for (size_t i = 0; i < tl->n; i++) {
		if (tl->v[i].e - tl->v[i].s <= floor)
			continue;
		add(&out->all, tl->v[i].s + floor, tl->v[i].e);
		add(&out->gil, tl->v[i].s + floor, tl->v[i].e);
	}
}

/* Thread t's waits into out: the GetNexts the loop calls (fn_end: the end
 * of the dataset function's run open on the thread; a GetNext inside one
 * is the pipeline's own: a generator that pulls another iterator,
 * prefetch_to_device), the datasets and iterators made for it, a loop
 * inside a tf.function waiting for its input's root, and the GIL's tails. */
static void thread_waits(const struct tfd_host *h, size_t t, struct parts *out)
{
	struct tfd_ev_mcursor c;
	struct tfd_event e;
	const struct tfd_sig *last = NULL;
	bool last_is = false, loop = loop_thread(h, t);
	struct scan sc = {INT64_MIN, INT64_MIN, 0, 0, INT64_MIN, {NULL, 0, 0}};

	for (tfd_evm_begin_times(&c, h, t); tfd_evm_next(&c, &e);) {
		bool gn;

		if (e.kind == TFD_EV_EXEC || e.kind == TFD_EV_FUNCTION) {
			if (e.dur_ns > 0 && e.start_ns + e.dur_ns > sc.fn_end)
				sc.fn_end = e.start_ns + e.dur_ns;
			continue;
		}
		if (e.dur_ns <= 0)
			continue;
		if (e.kind == TFD_EV_ITERATOR && e.start_ns + e.dur_ns > sc.it_end)
			sc.it_end = e.start_ns + e.dur_ns;
		gn = loop && is_getnext(h, &e, sc.fn_end);
		if (loop && is_py_call(&e)) {
			py_close(&sc);
			sc.py_s = e.start_ns;
			sc.py_e = e.start_ns + e.dur_ns;
		} else if (gn && e.start_ns >= sc.py_s && e.start_ns + e.dur_ns <= sc.py_e &&
			   e.start_ns + e.dur_ns > sc.gn_end) {
			sc.gn_end = e.start_ns + e.dur_ns;
		}
		if (loop && made_for_loop(&e, sc.fn_end, sc.it_end)) {
			add(&out->all, e.start_ns, e.start_ns + e.dur_ns);
			add(&out->creates, e.start_ns, e.start_ns + e.dur_ns);
			out->nroots_made += strncmp(e.sig->name, "MakeIterator::Root", 18) == 0;
		} else if (gn || (e.kind == TFD_EV_ITERATOR && h->nloop_inputs &&
				  loop_input_root(&e, &last, &last_is))) {
			add(&out->all, e.start_ns, e.start_ns + e.dur_ns);
		}
	}
	tfd_evm_end(&c);
	py_close(&sc);
	tails_out(&sc.tails, out);
	vec_free(&sc.tails);
}

/* Every thread's waits, read once. */
static void read_parts(const struct tfd_host *h, struct parts *out)
{
	uint32_t want = TFD_KIND_BIT(TFD_EV_GETNEXT) | TFD_KIND_BIT(TFD_EV_LOOPOP) |
			(h->nloop_inputs ? TFD_KIND_BIT(TFD_EV_ITERATOR) : 0);

	memset(out, 0, sizeof(*out));
	for (size_t t = 0; t < h->nthreads; t++)
		if (h->threads[t].kinds & want)
			thread_waits(h, t, out);
}

size_t tfd_interval_union(struct tfd_interval *v, size_t n)
{
	size_t k = 0;

	if (n > 1)
		qsort(v, n, sizeof(*v), tfd_interval_cmp);
	for (size_t i = 0; i < n; i++) {
		if (k && v[i].s <= v[k - 1].e) {
			if (v[i].e > v[k - 1].e)
				v[k - 1].e = v[i].e;
		} else {
			v[k++] = v[i];
		}
	}
	return k;
}

void tfd_step_gap_medians(const struct tfd_interval *sp, size_t n, int64_t *med, int64_t *medgap)
{
	int64_t *v, reach;

	*med = *medgap = 0;
	if (n < 2)
		return;
	v = xmalloc(n * sizeof(int64_t));
	for (size_t i = 0; i < n; i++)
		v[i] = sp[i].e - sp[i].s;
	*med = tfd_kth_i64(v, n, n / 2);
	reach = sp[0].e;
	for (size_t i = 1; i < n; i++) {
		v[i - 1] = sp[i].s > reach ? sp[i].s - reach : 0;
		if (sp[i].e > reach)
			reach = sp[i].e;
	}
	*medgap = tfd_kth_i64(v, n - 1, (n - 1) / 2);
	free(v);
}

bool tfd_long_step_gap(int64_t gap, int64_t med, int64_t medgap)
{
	return med > 0 && gap > TFD_LONG_GAP_STEPS * (double)med &&
	       gap > TFD_LONG_GAP_GAPS * (double)medgap;
}

size_t tfd_intervals_started(const struct tfd_interval *u, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u[mid].s <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* v sorted and made disjoint, in place: its array (never NULL, the caller
 * frees it) and *n intervals. */
static struct tfd_interval *union_of(ivec *v, size_t *n)
{
	*n = tfd_interval_union(v->v, v->n);
	if (!v->v)
		v->v = xmalloc(sizeof(*v->v));
	return v->v;
}

void tfd_host_waits_read(const struct tfd_host *h, bool skip_all, struct tfd_host_waits *w)
{
	struct parts pt;

	read_parts(h, &pt);
	*w = (struct tfd_host_waits){0};
	if (skip_all)
		vec_free(&pt.all);
	else
		w->all = union_of(&pt.all, &w->nall);
	w->creates = union_of(&pt.creates, &w->ncreates);
	w->gil = union_of(&pt.gil, &w->ngil);
	w->nroots_made = pt.nroots_made;
}

void tfd_host_waits_free(struct tfd_host_waits *w)
{
	free(w->all);
	free(w->creates);
	free(w->gil);
	free(w->holes);
	*w = (struct tfd_host_waits){0};
}

struct tfd_interval *tfd_host_wait_union(const struct tfd_host *h, size_t *n)
{
	struct parts pt;

	read_parts(h, &pt);
	vec_free(&pt.creates);
	vec_free(&pt.gil);
	return union_of(&pt.all, n);
}
