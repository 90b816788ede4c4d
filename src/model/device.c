/* device.c - what a device plane's events are for the step breakdown of
 * input time (device-input.md): the kind of a copy or kernel by its name,
 * which lines hold the device's own events, and the host's spans. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/err.h"

static bool starts_nocase(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && strncasecmp(s, prefix, n) == 0;
}

static bool has_nocase(const char *s, size_t len, const char *what)
{
	size_t n = strlen(what);

	for (size_t i = 0; i + n <= len; i++)
		if (strncasecmp(s + i, what, n) == 0)
			return true;
	return false;
}

enum tfd_dev_kind tfd_dev_kind_of(const char *name, size_t len, bool tpu)
{
	if (tpu) {
		/* TPU ops: infeed is the device waiting on the host, outfeed
		 * the copy back */
		if (has_nocase(name, len, "infeed"))
			return TFD_DEV_WAIT_HOST;
		if (has_nocase(name, len, "outfeed"))
			return TFD_DEV_D2H;
	}
	if (starts_nocase(name, len, "memcpy")) {
		const char *r = name + 6;
		size_t n = len - 6;

		while (n && (*r == ' ' || *r == '_')) {
			r++;
			n--;
		}
		if (starts_nocase(r, n, "h2d") || starts_nocase(r, n, "htod"))
			return TFD_DEV_H2D;
		if (starts_nocase(r, n, "d2h") || starts_nocase(r, n, "dtoh"))
			return TFD_DEV_D2H;
		if (starts_nocase(r, n, "d2d") || starts_nocase(r, n, "dtod") ||
		    starts_nocase(r, n, "p2p") || starts_nocase(r, n, "ptop"))
			return TFD_DEV_D2D;
	}
	if (starts_nocase(name, len, "nccl"))
		return TFD_DEV_COLLECTIVE;
	return TFD_DEV_COMPUTE;
}

bool tfd_host_op_is_h2d(const char *name, size_t len)
{
	return (len >= 13 && memcmp(name, "InfeedEnqueue", 13) == 0) ||
	       (len == 9 && memcmp(name, "MemcpyH2D", 9) == 0);
}

/* Lines TensorFlow derives from a device's own events (they repeat them). */
static const char *const derived_lines[] = {
    "Steps",	    "TensorFlow Ops", "TensorFlow Name Scope",
    "XLA Modules",  "XLA TraceMe",    "Launch Stats",
    "Source",	    "Framework Ops",  "Framework Name Scope",
    "Host Threads", "Sparse Core",
};

bool tfd_dev_line_wanted(const char *name, size_t len, bool has_streams, bool has_ops)
{
	if (has_streams)
		return len >= 8 && memcmp(name, "Stream #", 8) == 0;
	if (has_ops)
		return len == 7 && memcmp(name, "XLA Ops", 7) == 0;
	for (size_t i = 0; i < sizeof(derived_lines) / sizeof(*derived_lines); i++)
		if (strlen(derived_lines[i]) == len && memcmp(name, derived_lines[i], len) == 0)
			return false;
	return true;
}

uint64_t tfd_memcpy_bytes(const char *details, size_t len)
{
	for (size_t i = 0; i + 5 <= len; i++) {
		if (memcmp(details + i, "size:", 5) == 0 && (i == 0 || details[i - 1] == ' ')) {
			uint64_t v = 0;

			for (i += 5; i < len && details[i] >= '0' && details[i] <= '9'; i++) {
				if (v > (UINT64_MAX - 9) / 10)
					return 0;
				v = v * 10 + (uint64_t)(details[i] - '0');
			}
			return v;
		}
	}
	return 0;
}

/* ---- the sweep ------------------------------------------------------------ */

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

/* A binary min-heap of (key, value) pairs. */
struct heap {
	struct hitem {
		int64_t key;
		size_t val;
	} * v;
	size_t n, cap;
};

static void heap_push(struct heap *h, int64_t key, size_t val)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? 2 * h->cap : 16;
		h->v = xrealloc(h->v, h->cap * sizeof(*h->v));
	}
	i = h->n++;
	while (i && h->v[(i - 1) / 2].key > key) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = (struct hitem){key, val};
}

static struct hitem heap_pop(struct heap *h)
{
	struct hitem top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= h->n)
			break;
		if (c + 1 < h->n && h->v[c + 1].key < h->v[c].key)
			c++;
		if (h->v[c].key >= last.key)
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

/* The host's wait for input: the union of its IteratorGetNext* spans,
 * sorted and disjoint, as spans of kind TFD_DEV_WAIT. */
static struct tfd_dev_array wait_spans(const struct tfd_host *h)
{
	struct tfd_dev_array a = {0};
	size_t cap = 0, k = 0;

	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_ev_cursor c;
		struct tfd_event e;

		if (!(h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_GETNEXT)))
			continue;
		for (tfd_ev_begin(&c, h, &h->threads[t]); tfd_ev_next(&c, &e);) {
			if (e.kind != TFD_EV_GETNEXT || e.dur_ns <= 0)
				continue;
			if (a.n == cap) {
				cap = cap ? 2 * cap : 64;
				a.v = xrealloc(a.v, cap * sizeof(*a.v));
			}
			a.v[a.n++] =
			    (struct tfd_dev_span){e.start_ns, e.start_ns + e.dur_ns, TFD_DEV_WAIT};
		}
	}
	if (a.n > 1)
		qsort(a.v, a.n, sizeof(*a.v), span_start_cmp);
	for (size_t i = 0; i < a.n; i++) {
		if (k && a.v[i].start_ns <= a.v[k - 1].end_ns) {
			if (a.v[i].end_ns > a.v[k - 1].end_ns)
				a.v[k - 1].end_ns = a.v[i].end_ns;
		} else {
			a.v[k++] = a.v[i];
		}
	}
	a.n = k;
	return a;
}

static int step_start_cmp(const void *a, const void *b)
{
	const struct tfd_step *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->group_id < y->group_id ? -1 : x->group_id > y->group_id;
}

/* Where the owned time goes: the steps in start order, those whose extent
 * holds the instant being swept, and the result. */
struct owner {
	const struct tfd_step *steps; /* sorted by start */
	size_t nsteps, next;
	size_t *active, nactive;
	struct tfd_dev_step *out; /* parallel to steps */
	int64_t span_start, span_end;
	int64_t span_owned[TFD_DEV__COUNT];
};

/* [a, b) is owned by kind k: to every step holding it, and the span. */
static void own(struct owner *o, int64_t a, int64_t b, int k)
{
	size_t w = 0;
	int64_t x = a > o->span_start ? a : o->span_start, y = b < o->span_end ? b : o->span_end;

	if (y > x)
		o->span_owned[k] += y - x;
	while (o->next < o->nsteps && o->steps[o->next].start_ns < b)
		o->active[o->nactive++] = o->next++;
	for (size_t i = 0; i < o->nactive; i++) {
		const struct tfd_step *s = &o->steps[o->active[i]];

		if (s->end_ns <= a)
			continue; /* over: dropped */
		o->active[w++] = o->active[i];
		x = a > s->start_ns ? a : s->start_ns;
		y = b < s->end_ns ? b : s->end_ns;
		if (y > x)
			o->out[o->active[i]].owned[k] += y - x;
	}
	o->nactive = w;
}

/* The sweep proper: sources 0..n-1 the device's, n the wait. */
static size_t sweep(struct tfd_device *d, struct owner *o, struct tfd_dev_source *src, size_t n)
{
	struct heap starts = {0}, ends = {0};
	struct tfd_dev_span *cur = xcalloc(n + 1, sizeof(*cur));
	int64_t *last = xcalloc(n + 1, sizeof(*last)), t = INT64_MIN;
	int count[TFD_DEV__COUNT] = {0};
	size_t bad = n;

	for (size_t i = 0; i <= n; i++)
		if (src[i].next(src[i].ctx, &cur[i]))
			heap_push(&starts, cur[i].start_ns, i);
	while ((starts.n || ends.n) && bad == n) {
		bool take_end = ends.n && (!starts.n || ends.v[0].key <= starts.v[0].key);
		int64_t at = take_end ? ends.v[0].key : starts.v[0].key;

		if (t != INT64_MIN && at > t) {
			for (int k = TFD_DEV__COUNT - 1; k >= 0; k--) {
				if (count[k] > 0) {
					own(o, t, at, k);
					break;
				}
			}
		}
		t = at;
		if (take_end) {
			count[heap_pop(&ends).val]--;
			continue;
		}
		size_t i = heap_pop(&starts).val;
		struct tfd_dev_span sp = cur[i];

		count[sp.kind]++;
		heap_push(&ends, sp.end_ns, sp.kind);
		if (i < n) {
			d->kind_ns[sp.kind] += sp.end_ns - sp.start_ns;
			d->kind_n[sp.kind]++;
		}
		last[i] = sp.start_ns;
		if (src[i].next(src[i].ctx, &cur[i])) {
			if (cur[i].start_ns < last[i])
				bad = i;
			else
				heap_push(&starts, cur[i].start_ns, i);
		}
	}
	free(starts.v);
	free(ends.v);
	free(cur);
	free(last);
	return bad;
}

size_t tfd_device_sweep(struct tfd_capture *cap, struct tfd_host *h, struct tfd_dev_source *src,
			size_t n)
{
	struct tfd_device d;
	struct tfd_dev_array wait;

	struct tfd_dev_source *all = xcalloc(n + 1, sizeof(*all));
	struct tfd_step *steps = xcalloc(h->nsteps + 1, sizeof(*steps));
	struct owner o = {0};
	size_t bad;

	tfd_host_pack_pending(cap, h);
	d = h->dev;
	wait = wait_spans(h);
	memcpy(all, src, n * sizeof(*all));
	all[n] = tfd_dev_array_source(&wait);
	if (h->nsteps)
		memcpy(steps, h->steps, h->nsteps * sizeof(*steps));
	qsort(steps, h->nsteps, sizeof(*steps), step_start_cmp);
	o.steps = steps;
	o.nsteps = h->nsteps;
	o.active = xcalloc(h->nsteps + 1, sizeof(*o.active));
	o.out = xcalloc(h->nsteps + 1, sizeof(*o.out));
	o.span_start = h->span_start_ns;
	o.span_end = h->span_end_ns;
	memset(d.kind_ns, 0, sizeof(d.kind_ns));
	memset(d.kind_n, 0, sizeof(d.kind_n));
	bad = sweep(&d, &o, all, n);
	if (bad == n) {
		for (size_t i = 0; i < h->nsteps; i++)
			o.out[i].group_id = steps[i].group_id;
		free(h->dev.steps);
		d.steps = o.out;
		d.nsteps = h->nsteps;
		memcpy(d.span_owned, o.span_owned, sizeof(d.span_owned));
		d.read = false;
		for (int k = 0; k < TFD_DEV__COUNT; k++)
			d.read |= k != TFD_DEV_WAIT && d.kind_n[k] > 0;
		h->dev = d;
	} else {
		free(o.out);
	}
	free(o.active);
	free(steps);
	free(wait.v);
	free(all);
	return bad;
}
