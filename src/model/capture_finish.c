/* capture_finish.c - the capture model's events' stats and parameters, and
 * the finish pass once a file is read: threads sorted, executor chunks of
 * other functions dropped, the builder's indexes freed (capture_impl.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "capture_impl.h"
#include "tfd/families.h"
#include "tfd/pages.h"

static void add_param(struct tfd_capture *cap, struct tfd_event *e, const char *key,
		      const char *val)
{
	struct tfd_sig want = *e->sig;
	const struct tfd_param *p = NULL;

	key = tfd_arena_intern_cstr(&cap->arena, key);
	val = tfd_arena_intern_cstr(&cap->arena, val);
	for (uint16_t i = 0; i < want.nparams; i++) {
		if (want.params[i].key == key) {
			/* a repeated key: the array with this value in its place */
			for (uint16_t j = 0; j < want.nparams; j++)
				p = tfd_cm_param_cons(cap, p, j, want.params[j].key,
						      j == i ? val : want.params[j].val);
			want.params = p;
			e->sig = tfd_cm_sig_get(cap, &want);
			return;
		}
	}
	if (want.nparams >= TFD_MAX_PARAMS)
		return;
	want.params = tfd_cm_param_cons(cap, want.params, want.nparams, key, val);
	want.nparams++;
	e->sig = tfd_cm_sig_get(cap, &want);
}

/* Produce and Consume events hold an element_id, the others an id. */
static bool holds_element(const struct tfd_event *e)
{
	return e->kind == TFD_EV_PRODUCE || e->kind == TFD_EV_CONSUME;
}

/* Stats that are bookkeeping rather than iterator parameters. */
static int is_meta_stat(const char *key)
{
	static const char *const skip[] = {"long_name", "iter_num", "is_eager", "step_name",
					   "_r",	"_p",	    "_c",	"_pt",
					   "_ct",	"_pid",	    "tf_op",	"group_id"};

	/* most parameters start with none of their first letters */
	if (!key[0] || !strchr("lis_tg", key[0]))
		return 0;
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (strcmp(key, skip[i]) == 0)
			return 1;
	return 0;
}

enum tfd_stat tfd_stat_of(const char *key)
{
	/* by the first byte first: a key is one strcmp at most here (most are
	 * a parameter's, none of these) */
	switch (key[0]) {
	case 'i':
		if (strcmp(key, "id") == 0)
			return TFD_STAT_ID;
		break;
	case 'p':
		if (strcmp(key, "parent_id") == 0)
			return TFD_STAT_PARENT;
		break;
	case 'e':
		if (strcmp(key, "element_id") == 0)
			return TFD_STAT_ELEMENT;
		break;
	case 'g':
		if (strcmp(key, "group_id") == 0)
			return TFD_STAT_GROUP;
		break;
	case '_':
		if (strcmp(key, "_a") == 0)
			return TFD_STAT_ASYNC;
		break;
	default:
		break;
	}
	return is_meta_stat(key) ? TFD_STAT_META : TFD_STAT_PARAM;
}

void tfd_event_set_stat_int(struct tfd_capture *cap, struct tfd_event *e, const char *key,
			    int64_t v)
{
	tfd_event_set_stat_as(cap, e, tfd_stat_of(key), key, v);
}

void tfd_event_begin(struct tfd_capture *cap, struct tfd_event *e, const char *name,
		     enum tfd_ev_kind kind, int64_t start_ns, int64_t dur_ns)
{
	memset(e, 0, sizeof(*e));
	e->sig = tfd_cm_sig_of_name(cap, name);
	e->kind = (uint8_t)kind;
	e->start_ns = start_ns;
	e->dur_ns = dur_ns;
}

void tfd_event_set_stat_as(struct tfd_capture *cap, struct tfd_event *e, enum tfd_stat what,
			   const char *key, int64_t v)
{
	char buf[32];

	if (what == TFD_STAT_ID) {
		/* the event's value: an element_id stat gives way to it */
		if (!holds_element(e) || !(e->flags & TFD_EVF_ELEMENT)) {
			e->id = (uint64_t)v;
			e->flags = (e->flags | TFD_EVF_ID) & ~TFD_EVF_ELEMENT;
		}
	} else if (what == TFD_STAT_PARENT) {
		struct parent_step *ps =
		    &impl(cap)->parent_cache[imap_hash((uint64_t)(uintptr_t)e->sig ^ (uint64_t)v) %
					     SIG_CACHE];

		if (ps->from != e->sig || ps->parent_id != (uint64_t)v || !ps->to) {
			struct tfd_sig want = *e->sig;

			want.parent_id = (uint64_t)v;
			*ps = (struct parent_step){e->sig, tfd_cm_sig_get(cap, &want), (uint64_t)v};
		}
		e->sig = ps->to;
		e->flags |= TFD_EVF_PARENT;
	} else if (what == TFD_STAT_ELEMENT) {
		if (holds_element(e) || !(e->flags & TFD_EVF_ID)) {
			e->element_id = (uint64_t)v;
			e->flags = (e->flags | TFD_EVF_ELEMENT) & ~TFD_EVF_ID;
		}
	} else if (what == TFD_STAT_GROUP) {
		e->flags |= TFD_EVF_GROUP; /* the reader notes the step itself */
	} else if (what == TFD_STAT_ASYNC) {
		if (v)
			e->flags |= TFD_EVF_ASYNC;
	} else if (what == TFD_STAT_PARAM && e->kind == TFD_EV_ITERATOR) {
		snprintf(buf, sizeof(buf), "%lld", (long long)v);
		add_param(cap, e, key, buf);
	}
}

/* The value of the 8 digits of v, each less '0', the first in its lowest
 * byte: pairs, fours and the eight summed in three multiplies. */
static inline uint64_t eight_digits(uint64_t v)
{
	const uint64_t lo = 0x000000FF000000FFu;

	v = v * 10 + (v >> 8);
	return ((v & lo) * (100 + (1000000ull << 32)) +
		((v >> 16) & lo) * (1 + (10000ull << 32))) >>
	       32;
}

/* Parse a decimal id, signed or unsigned, into its 64-bit pattern. */
static int parse_id(const char *s, int64_t *out)
{
	char *end;
	uint64_t digits = 0;
	size_t i = 0, n = strnlen(s, 20);
	bool all = n >= 1 && n <= 19;

	/* the usual id: up to 19 digits, nothing else (no overflow), 8 at a
	 * time within its length (TensorFlow's ids have 18-20) */
	for (; all && n - i >= 8; i += 8) {
		uint64_t w, v;

		memcpy(&w, s + i, 8);
		v = w - 0x3030303030303030u;
		all = ((v | (v + 0x7676767676767676u)) & 0x8080808080808080u) == 0;
		digits = digits * 100000000u + eight_digits(v);
	}
	for (; all && i < n; i++) {
		all = s[i] >= '0' && s[i] <= '9';
		digits = digits * 10 + (uint64_t)(s[i] - '0');
	}
	if (all) {
		*out = (int64_t)digits;
		return 0;
	}
	errno = 0;
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '-') {
		long long v = strtoll(s, &end, 10);

		if (errno || end == s || *end)
			return -1;
		*out = v;
	} else {
		unsigned long long v = strtoull(s, &end, 10);

		if (errno || end == s || *end)
			return -1;
		*out = (int64_t)v;
	}
	return 0;
}

void tfd_event_set_stat_str(struct tfd_capture *cap, struct tfd_event *e, const char *key,
			    const char *v)
{
	tfd_event_set_stat_str_as(cap, e, tfd_stat_of(key), key, v);
}

void tfd_event_set_stat_str_as(struct tfd_capture *cap, struct tfd_event *e, enum tfd_stat what,
			       const char *key, const char *v)
{
	int64_t n;

	if (what != TFD_STAT_PARAM && what != TFD_STAT_META) { /* an id stat */
		if (parse_id(v, &n) == 0)
			tfd_event_set_stat_as(cap, e, what, key, n);
		return;
	}
	if (e->kind == TFD_EV_ITERATOR && what == TFD_STAT_PARAM)
		add_param(cap, e, key, v);
}

const char *tfd_event_param(const struct tfd_event *e, const char *key)
{
	for (uint16_t i = 0; i < e->sig->nparams; i++)
		if (strcmp(e->sig->params[i].key, key) == 0)
			return e->sig->params[i].val;
	return NULL;
}

/* Where a packed event is, by its start and duration. */
struct ev_ref {
	int64_t start, dur;
	size_t off;
};

/* Stable merge sort by (start asc, duration desc). */
static bool ref_before(const struct ev_ref *a, const struct ev_ref *b)
{
	return ev_before_at(a->start, a->dur, b->start, b->dur);
}

static void merge_sort(struct ev_ref *v, struct ev_ref *tmp, size_t n)
{
	size_t mid, i, j, k;

	if (n < 2)
		return;
	if (n <= 16) {
		for (i = 1; i < n; i++) {
			struct ev_ref x = v[i];

			for (j = i; j > 0 && ref_before(&x, &v[j - 1]); j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	mid = n / 2;
	merge_sort(v, tmp, mid);
	merge_sort(v + mid, tmp, n - mid);
	if (!ref_before(&v[mid], &v[mid - 1]))
		return;
	i = 0;
	j = mid;
	k = 0;
	while (i < mid && j < n)
		tmp[k++] = ref_before(&v[j], &v[i]) ? v[j++] : v[i++];
	while (i < mid)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

int tfd_cm_step_cmp(const void *a, const void *b)
{
	const struct tfd_step *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->group_id < y->group_id ? -1 : x->group_id > y->group_id;
}

/* The events th's read left in the file before its next packed one, kept
 * (their bits moved down to n), each shown to keep() when fs is open. */
static void keep_left(struct tfd_thread *th, size_t *i, size_t *n, struct tfd_ev_mcursor *fs,
		      bool (*keep)(const struct tfd_event *e, void *ctx), void *ctx)
{
	struct tfd_event e;
	uint32_t t;

	while (*i < th->nkbits && tfd_kbit(th, *i)) {
		if (fs->src) {
			if (!fs->failed && fs->fs.next(fs->fs.ctx, &t, &e))
				(void)keep(&e, ctx); /* (they stay: see capture.h) */
			else
				fs->failed = true;
		}
		tfd_bit8_put(th->kbits, (*n)++, true);
		(*i)++;
	}
}

/* tfd_thread_filter(); all: keep() sees the events left in the file too
 * (h has th's source). */
static size_t filter(const struct tfd_host *h, struct tfd_thread *th,
		     bool (*keep)(const struct tfd_event *e, void *ctx), void *ctx, bool all)
{
	struct tfd_ev_cursor c;
	struct tfd_ev_mcursor fs = {0};
	struct tfd_event e;
	uint8_t *w = th->evbuf;
	const uint8_t *at, *gap, *given = th->evbuf;
	int64_t last = 0;
	size_t n = 0, i = 0, dropped;
	/* (the source check's bits go with their events; those of events
	 * left in the file say where they go among the packed ones) */
	bool bits = th->kbits && th->nkbits == th->nevents, left = bits && th->nfile;

	if (!th->nevents)
		return 0;
	if (left && all)
		tfd_evm_begin_times(&fs, h, (size_t)(th - h->threads));
	/* a kept event is its start as a delta from the last kept one, then
	 * its other fields' bytes as they were: the delta's varint is never
	 * longer than those of the deltas it sums and the dropped events'
	 * bytes, so the writes stay behind the reads */
	for (tfd_ev_begin(&c, h, th), at = c.p;; at = c.p) {
		if (left)
			keep_left(th, &i, &n, &fs, keep, ctx);
		if (!tfd_ev_next(&c, &e))
			break;
		const uint8_t *rest = at;
		bool on = bits && tfd_kbit(th, i++);

		/* the whole pages between the writes and the reads are dead:
		 * given back every 256 KB (a function thread's buffer stayed
		 * whole beside the calls made of it, at a tf.data-heavy
		 * capture's peak); a page written again comes back zeroed */
		if ((size_t)(at - given) > (1u << 18) && (size_t)(at - w) > (1u << 18)) {
			gap = w;
			tfd_pages_release(&gap, at, 1u << 18);
			given = at;
		}
		if (!keep(&e, ctx))
			continue;
		if (bits)
			tfd_bit8_put(th->kbits, n, on);
		tfd_ev_varint(&rest);
		w = tfd_ev_put_varint(w, tfd_ev_zig(start_delta(e.start_ns, last)));
		last = e.start_ns;
		memmove(w, rest, (size_t)(c.p - rest));
		w += c.p - rest;
		n++;
	}
	if (left)
		tfd_evm_end(&fs);
	dropped = th->nevents - n;
	th->nevents = n;
	if (bits)
		th->nkbits = n;
	th->evlen = (size_t)(w - th->evbuf);
	if (!dropped)
		return 0;
	if (th->evlen) {
		th->evbuf = xrealloc(th->evbuf, th->evlen);
	} else {
		free(th->evbuf);
		th->evbuf = NULL;
	}
	return dropped;
}

size_t tfd_thread_filter(const struct tfd_host *h, struct tfd_thread *th,
			 bool (*keep)(const struct tfd_event *e, void *ctx), void *ctx)
{
	return filter(h, th, keep, ctx, false);
}

size_t tfd_thread_filter_times(const struct tfd_host *h, struct tfd_thread *th,
			       bool (*keep)(const struct tfd_event *e, void *ctx), void *ctx)
{
	return filter(h, th, keep, ctx, true);
}

static bool keep_exec(const struct tfd_event *e, void *ctx)
{
	size_t dummy;

	return e->kind != TFD_EV_EXEC ||
	       ((e->flags & TFD_EVF_ID) && imap_get((const struct imap *)ctx, e->id, &dummy));
}

/* Keep executor chunks only for the dataset functions captured on the host
 * (the training step's own executor events would cost memory for nothing). */
static void drop_foreign_exec(struct tfd_host *h)
{
	struct imap fn = {0};
	bool exec = false;

	/* only threads with the kinds a step reads are walked (the XSpace
	 * reader's pre-pass leaves nothing to drop, but a walk of every event
	 * that copied each over itself cost 8 % of a tf.data-heavy analysis) */
	for (size_t t = 0; t < h->nthreads; t++)
		exec |= (h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_EXEC)) != 0;
	if (!exec)
		return;
	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_ev_cursor c;
		struct tfd_event e;

		if (!(h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_FUNCTION)))
			continue;
		for (tfd_ev_begin(&c, h, &h->threads[t]); tfd_ev_next(&c, &e);)
			if (e.kind == TFD_EV_FUNCTION && (e.flags & TFD_EVF_ID))
				imap_put(&fn, e.id, 0);
	}
	for (size_t t = 0; t < h->nthreads; t++)
		if (h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_EXEC))
			h->nevents -= tfd_thread_filter(h, &h->threads[t], keep_exec, &fn);
	imap_free(&fn);
}

/* The end of a packed event's fields after its start delta (at p), its
 * form one of form. */
static const uint8_t *ev_rest_end(const struct tfd_form *form, const uint8_t *p)
{
	const struct tfd_form *f;

	tfd_ev_varint(&p); /* duration */
	f = &form[tfd_ev_varint(&p)];
	if (f->how == TFD_VAL_VARINT || f->how == TFD_VAL_NEAR)
		tfd_ev_varint(&p);
	else if (f->how == TFD_VAL_FIXED)
		p += 8;
	return p;
}

/* Sort a thread's events that came out of order. An event's bytes after
 * its start delta stand alone: the events are sorted as (start, duration,
 * where) records, and written again with new deltas. */
static void sort_thread(const struct tfd_host *h, struct tfd_thread *th)
{
	/* (the file's order is gone: a stream would read this thread packed) */
	th->kbits_lost = th->kbits != NULL;
	struct ev_ref *v = xmalloc(th->nevents * sizeof(*v)),
		      *tmp = xmalloc(th->nevents * sizeof(*tmp));
	struct tfd_ev_cursor c;
	struct tfd_event e;
	const uint8_t *at;
	uint8_t *out, *q;
	size_t n = 0, len = 0;
	int64_t last = 0;

	for (tfd_ev_begin(&c, h, th), at = c.p; n < th->nevents && tfd_ev_next(&c, &e); at = c.p)
		v[n++] = (struct ev_ref){e.start_ns, e.dur_ns, (size_t)(at - th->evbuf)};
	merge_sort(v, tmp, n);
	free(tmp);
	for (size_t k = 0; k < n; k++) {
		uint8_t d[10];
		const uint8_t *rest = th->evbuf + v[k].off;

		tfd_ev_varint(&rest);
		len +=
		    (size_t)(ev_rest_end(h->tab->form, rest) - rest) +
		    (size_t)(tfd_ev_put_varint(d, tfd_ev_zig(start_delta(v[k].start, last))) - d);
		last = v[k].start;
	}
	q = out = xmalloc(len ? len : 1);
	last = 0;
	for (size_t k = 0; k < n; k++) {
		const uint8_t *rest = th->evbuf + v[k].off, *end;

		tfd_ev_varint(&rest);
		end = ev_rest_end(h->tab->form, rest);
		q = tfd_ev_put_varint(q, tfd_ev_zig(start_delta(v[k].start, last)));
		last = v[k].start;
		memcpy(q, rest, (size_t)(end - rest));
		q += end - rest;
	}
	free(th->evbuf);
	th->evbuf = out;
	th->evlen = len;
	free(v);
}

/* Whether thread t's events, some left in the file, are in order (the
 * file's read again with their times alone). */
static bool left_in_order(const struct tfd_host *h, size_t t)
{
	struct tfd_ev_mcursor c;
	struct tfd_event e;
	int64_t ps = 0, pd = 0;
	bool in_order = true;
	size_t k = 0;

	for (tfd_evm_begin_times(&c, h, t); in_order && tfd_evm_next(&c, &e); k++) {
		in_order = !k || !ev_before_at(e.start_ns, e.dur_ns, ps, pd);
		ps = e.start_ns;
		pd = e.dur_ns;
	}
	tfd_evm_end(&c);
	return in_order;
}

enum tfd_status tfd_capture_finish(struct tfd_capture *cap, struct tfd_err *err)
{
	for (size_t i = 0; i < cap->nhosts; i++) {
		struct tfd_host *h = &cap->hosts[i];
		const struct host_build *b = i < impl(cap)->hb.n ? &impl(cap)->hb.v[i] : NULL;

		if (b)
			tfd_cm_pack_pending(cap, h);
		if (!h->exec_filtered)
			drop_foreign_exec(h);

		if (b)
			tfd_cm_trim_threads(cap, h);
		for (size_t t = 0; t < h->nthreads; t++) {
			struct tfd_thread *th = &h->threads[t];
			struct tfd_ev_cursor c;
			struct tfd_event e;
			int64_t ps = 0, pd = 0;
			size_t k;

			if (th->nevents < 2 || (b && t < b->ncap && !b->tb[t].unsorted))
				continue; /* in order as read (TensorFlow writes lines sorted) */
			if (th->nfile) {
				/* sorted, the file's order would be gone: packed
				 * first, if out of order at all */
				if (left_in_order(h, t))
					continue;
				tfd_cm_pack_left(cap, h, t);
			}
			/* else check before paying for a copy */
			for (k = 0, tfd_ev_begin(&c, h, th); tfd_ev_next(&c, &e); k++) {
				if (k && ev_before_at(e.start_ns, e.dur_ns, ps, pd))
					break;
				ps = e.start_ns;
				pd = e.dur_ns;
			}
			if (k < th->nevents)
				sort_thread(h, th);
		}
		tfd_fn_ops_resolve(h); /* its threads are in time order now */
		tfd_host_steps_from_markers(cap, h);
		if (h->nsteps > 1)
			qsort(h->steps, h->nsteps, sizeof(*h->steps), tfd_cm_step_cmp);
		if (h->nsteps)
			h->steps = xrealloc(h->steps, h->nsteps * sizeof(*h->steps));
		/* the file is read: the builder's indexes are not needed any more */
		if (i < impl(cap)->hb.n)
			tfd_cm_build_release(&impl(cap)->hb.v[i]);
		if (h->span_start_ns > h->span_end_ns)
			h->span_start_ns = h->span_end_ns = 0;
	}
	(void)err;
	return TFD_OK;
}
