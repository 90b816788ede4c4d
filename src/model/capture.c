/* capture.c - the in-memory capture model: hosts, threads and their packed
 * events, built by the readers (src/input) through tfd/capbuild.h. An
 * event's stats, and the finish pass (sorted, executor chunks filtered)
 * once a file is read, are capture_finish.c, which calls in here and
 * never the other way. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "capture_impl.h"
#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/vec.h"

static uint64_t sig_hash(const struct tfd_sig *s)
{
	return imap_hash((uint64_t)(uintptr_t)s->name ^
			 imap_hash((uint64_t)(uintptr_t)s->params ^
				   imap_hash(s->parent_id ^ ((uint64_t)s->nparams << 48))));
}

/* The interned signature equal to *want (its strings and parameter array
 * are cap's, interned). */
const struct tfd_sig *tfd_cm_sig_get(struct tfd_capture *cap, const struct tfd_sig *want)
{
	struct capture_impl *ci = impl(cap);
	uint64_t h = sig_hash(want);
	size_t head;
	int next = -1;
	struct tfd_sig *s;

	if (imap_get(&ci->sig_head, h, &head)) {
		for (int j = (int)head; j >= 0; j = ci->sigs.v[j].next) {
			const struct tfd_sig *r = ci->sigs.v[j].sig;

			if (r->name == want->name && r->params == want->params &&
			    r->nparams == want->nparams && r->parent_id == want->parent_id)
				return r;
		}
		next = (int)head;
	}
	s = tfd_arena_alloc(&cap->arena, sizeof(*s));
	*s = *want;
	s->role = strcmp(s->name, "Iterator") == 0		     ? TFD_SIG_BARE_ITERATOR
		  : s->name[0] == 'R' && tfd_loop_root_name(s->name) ? TFD_SIG_LOOP_ROOT
								     : TFD_SIG_PLAIN;
	s->idx = (uint32_t)ci->nsig++;
	vec_push(&ci->sigs, ((struct sig_rec){s, next}));
	imap_put(&ci->sig_head, h, ci->sigs.n - 1);
	return s;
}

void tfd_cm_build_release(struct host_build *b)
{
	imap_free(&b->tid);
	imap_free(&b->group);
	free(b->tb);
	memset(b, 0, sizeof(*b));
}

struct tfd_capture *tfd_capture_new(void)
{
	struct capture_impl *ci = xcalloc(1, sizeof(*ci));

	tfd_arena_init(&ci->pub.arena);
	ci->tab = xcalloc(1, sizeof(*ci->tab));
	ci->kbits = tfd_env_flag("TFDOCTOR_SOURCE_CHECK");
	return &ci->pub;
}

void tfd_capture_free(struct tfd_capture *cap)
{
	struct capture_impl *ci;

	if (!cap)
		return;
	ci = impl(cap);
	while (cap->nhosts)
		tfd_capture_drop_last_host(cap);
	free(cap->hosts);
	for (size_t i = 0; i < ci->hb.n; i++)
		tfd_cm_build_release(&ci->hb.v[i]);
	vec_free(&ci->hb);
	imap_free(&ci->pcons_head);
	vec_free(&ci->pcons);
	imap_free(&ci->sig_head);
	vec_free(&ci->sigs);
	imap_free(&ci->val_idx);
	imap_free(&ci->form_idx);
	free(ci->tab->form);
	free(ci->tab);
	for (size_t i = 0; i < ci->parts.n; i++)
		tfd_capture_free(ci->parts.v[i]);
	vec_free(&ci->parts);
	tfd_arena_release(&cap->arena);
	free(ci);
}

void tfd_capture_adopt(struct tfd_capture *cap, struct tfd_capture *part, const char *path)
{
	for (size_t i = 0; i < part->nhosts; i++) {
		/* its builder stays behind: what it holds back goes in now */
		tfd_cm_pack_pending(part, &part->hosts[i]);
		tfd_cm_trim_threads(part, &part->hosts[i]);
		cap->hosts = xrealloc(cap->hosts, (cap->nhosts + 1) * sizeof(*cap->hosts));
		cap->hosts[cap->nhosts] = part->hosts[i];
		if (path)
			cap->hosts[cap->nhosts].path = tfd_arena_intern_cstr(&cap->arena, path);
		cap->nhosts++;
	}
	part->nhosts = 0;
	vec_push(&impl(cap)->parts, part);
}

size_t tfd_capture_nparts(const struct tfd_capture *cap)
{
	return ((const struct capture_impl *)cap)->parts.n;
}

static const char *base_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* A host's name and its index, sorted by name (then index). */
struct named {
	const char *name;
	size_t i;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->i > y->i) - (x->i < y->i);
}

size_t tfd_host_names_apart(const char *const *names, const char *const *paths, size_t n,
			    char **out, char *note, size_t len)
{
	struct named *by = xmalloc((n ? n : 1) * sizeof(*by));
	size_t *ord = xmalloc((n ? n : 1) * sizeof(*ord)), renamed = 0, shown = 0, at = 0;

	for (size_t i = 0; i < n; i++) {
		by[i] = (struct named){names[i], i};
		out[i] = NULL;
	}
	qsort(by, n, sizeof(*by), named_cmp);
	for (size_t i = 0; i < n; i++)
		ord[i] = by[i].i;
	free(by);
	if (note && len)
		note[0] = '\0';
	for (size_t k = 0; k < n;) {
		size_t e = k + 1;

		while (e < n && strcmp(names[ord[e]], names[ord[k]]) == 0)
			e++;
		for (size_t m = k; e - k > 1 && m < e; m++) {
			const char *nm = names[ord[m]], *f = base_of(paths[ord[m]]);
			size_t sz = strlen(nm) + strlen(f) + 4;

			out[ord[m]] = xmalloc(sz);
			snprintf(out[ord[m]], sz, "%s (%s)", nm, f);
			renamed++;
		}
		if (e - k > 1 && note && at < len && shown++ < 3)
			at += (size_t)snprintf(note + at, len - at,
					       "%s%zu files carry the host name '%s' (%s, ...): "
					       "each host is named by its file",
					       at ? "; " : "", e - k, names[ord[k]],
					       base_of(paths[ord[k]]));
		k = e;
	}
	free(ord);
	return renamed;
}

void tfd_capture_name_hosts_apart(struct tfd_capture *cap)
{
	const char **names = xmalloc((cap->nhosts + 1) * sizeof(*names));
	const char **paths = xmalloc((cap->nhosts + 1) * sizeof(*paths));
	char **out = xmalloc((cap->nhosts + 1) * sizeof(*out)), note[600];
	const char **notes;

	for (size_t i = 0; i < cap->nhosts; i++) {
		names[i] = cap->hosts[i].name;
		paths[i] = cap->hosts[i].path;
	}
	if (tfd_host_names_apart(names, paths, cap->nhosts, out, note, sizeof(note))) {
		for (size_t i = 0; i < cap->nhosts; i++)
			if (out[i]) {
				cap->hosts[i].name = tfd_arena_intern_cstr(&cap->arena, out[i]);
				free(out[i]);
			}
		notes = tfd_arena_alloc(&cap->arena, (cap->nnotes + 1) * sizeof(*notes));
		for (size_t i = 0; i < cap->nnotes; i++)
			notes[i] = cap->notes[i];
		notes[cap->nnotes++] = tfd_arena_intern_cstr(&cap->arena, note);
		cap->notes = notes;
	}
	free(names);
	free(paths);
	free(out);
}

struct tfd_host *tfd_capture_add_host(struct tfd_capture *cap, const char *name)
{
	struct tfd_host *h;

	cap->hosts = xrealloc(cap->hosts, (cap->nhosts + 1) * sizeof(*cap->hosts));
	h = &cap->hosts[cap->nhosts++];
	memset(h, 0, sizeof(*h));
	h->name = tfd_arena_intern_cstr(&cap->arena, name ? name : "");
	h->path = h->name;
	h->span_start_ns = INT64_MAX;
	h->span_end_ns = INT64_MIN;
	h->tab = impl(cap)->tab;
	tfd_cm_build_release(tfd_cm_build_of(cap, h));
	return h;
}

void tfd_source_own(struct tfd_source *s, enum tfd_status (*release)(void *, struct tfd_err *),
		    void *arg)
{
	s->release = release;
	s->release_arg = arg;
}

enum tfd_status tfd_source_free(struct tfd_source *s, struct tfd_err *err)
{
	enum tfd_status st = TFD_OK;

	if (!s)
		return TFD_OK;
	if (s->release)
		st = s->release(s->release_arg, err);
	s->free(s);
	return st;
}

uint32_t tfd_host_thread(struct tfd_capture *cap, struct tfd_host *h, int64_t tid, const char *name)
{
	struct host_build *b = tfd_cm_build_of(cap, h);
	size_t idx;
	struct tfd_thread *t;

	if (imap_get(&b->tid, (uint64_t)tid, &idx)) {
		t = &h->threads[idx];
		if (name && *name && (!t->name || !*t->name))
			t->name = tfd_arena_intern_cstr(&cap->arena, name);
		return (uint32_t)idx;
	}
	h->threads = xrealloc(h->threads, (h->nthreads + 1) * sizeof(*h->threads));
	t = &h->threads[h->nthreads];
	memset(t, 0, sizeof(*t));
	t->id = tid;
	t->name = tfd_arena_intern_cstr(&cap->arena, name ? name : "");
	imap_put(&b->tid, (uint64_t)tid, h->nthreads);
	return (uint32_t)h->nthreads++;
}

/* a form's key gives an event's kind 3 bits (form_index) */
_Static_assert(TFD_EV__COUNT <= 8, "event kinds outgrow a form's key");
_Static_assert(TFD_VAL_NEAR < 8, "value kinds outgrow a form's key (3 bits)");

/* An iterator id not given forms (VAL_NONE) is stored as it is. */
#define VAL_NONE UINT32_MAX
#define VAL_FREE 4096	 /* ids given forms before they must pay */
#define FORM_VAL_BITS 21 /* an id's index in a form's key (above how's 3 bits) */

/* The index of iterator id v among the ids given forms of their own
 * (TFD_VAL_FORM), added if new; VAL_NONE when no more are: ids that do not
 * repeat (no TensorFlow writes those, but a file may) would cost more in
 * forms than as they are, so past VAL_FREE ids they are given forms only
 * while the iterator events with an id number four times the ids. */
static uint32_t val_index(struct capture_impl *ci, uint64_t v)
{
	size_t m = (size_t)((v ^ (v >> 29) ^ (v >> 47)) % SIG_CACHE), idx;
	struct tfd_evtab *tab = ci->tab;

	ci->nval_asked++;
	if (ci->val_cache[m].val == v && v)
		return ci->val_cache[m].idx;
	if (!imap_get(&ci->val_idx, v, &idx)) {
		if (tab->nval >= ((size_t)1 << FORM_VAL_BITS) ||
		    (tab->nval >= VAL_FREE && tab->nval > ci->nval_asked / 4))
			return VAL_NONE;
		idx = tab->nval++;
		imap_put(&ci->val_idx, v, idx);
	}
	ci->val_cache[m].val = v;
	ci->val_cache[m].idx = (uint32_t)idx;
	return (uint32_t)idx;
}

/* The index of the form (sig, kind, flags, how; for TFD_VAL_FORM the id
 * val, of index vi) in cap's table, added if new. Its key: sig's index,
 * kind and flags in a byte (as enum tfd_ev_flag allows), how, vi. */
uint32_t tfd_cm_form_index(struct capture_impl *ci, const struct tfd_sig *sig, unsigned kind,
			   unsigned flags, enum tfd_val_how how, uint32_t vi, uint64_t val)
{
	uint64_t key = (uint64_t)sig->idx | (uint64_t)(kind | flags << 3) << 32 |
		       (uint64_t)how << 40 | (uint64_t)vi << (64 - FORM_VAL_BITS);
	size_t m = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 56), idx;
	struct tfd_evtab *tab = ci->tab;

	if (ci->form_cache[m].idx1 && ci->form_cache[m].key == key)
		return ci->form_cache[m].idx1 - 1;
	if (!imap_get(&ci->form_idx, key, &idx)) {
		if (tab->nform == tab->formcap) {
			tab->formcap = tab->formcap ? 2 * tab->formcap : 64;
			tab->form = xrealloc(tab->form, tab->formcap * sizeof(*tab->form));
		}
		tab->form[tab->nform] =
		    (struct tfd_form){sig, how == TFD_VAL_FORM || how == TFD_VAL_NEAR ? val : 0,
				      (uint8_t)kind, (uint8_t)flags, (uint8_t)how};
		idx = tab->nform++;
		imap_put(&ci->form_idx, key, idx);
	}
	ci->form_cache[m].key = key;
	ci->form_cache[m].idx1 = (uint32_t)idx + 1;
	return (uint32_t)idx;
}

/* How a value v not given a form is stored. */
static enum tfd_val_how how_inline(uint64_t v)
{
	return v == 0 ? TFD_VAL_NONE : v < (1ull << 49) ? TFD_VAL_VARINT : TFD_VAL_FIXED;
}

/* How ci stores value v of an event (iterator: an iterator's id): in a
 * form while ci gives ids forms, *vi then its index (else 0), or as it is. */
enum tfd_val_how tfd_cm_value_how(struct capture_impl *ci, uint64_t v, bool iterator, uint32_t *vi)
{
	if (v && iterator && (*vi = val_index(ci, v)) != VAL_NONE)
		return TFD_VAL_FORM;
	*vi = 0;
	return how_inline(v);
}

/* Write value v at q as how says (nothing for none or a form's). */
uint8_t *tfd_cm_put_value(uint8_t *q, enum tfd_val_how how, uint64_t v)
{
	if (how == TFD_VAL_VARINT)
		return tfd_ev_put_varint(q, v);
	if (how == TFD_VAL_FIXED)
		for (int i = 0; i < 8; i++)
			*q++ = (uint8_t)(v >> (8 * i));
	return q;
}

/* Whether element id v of an event starting at start takes fewer bytes
 * near it (TFD_VAL_NEAR) than its eight: *near the zigzag difference. The
 * first such id sets ci's constant. */
static bool element_near(struct capture_impl *ci, uint64_t v, int64_t start, uint64_t *near)
{
	if (!ci->has_near_base) {
		ci->near_base = v - (uint64_t)start;
		ci->has_near_base = true;
	}
	*near = tfd_ev_zig((int64_t)(v - (uint64_t)start - ci->near_base));
	return *near < (1ull << 49); /* a varint of 7 bytes at most (how_inline()) */
}

/* e's start as a delta from *last, and its duration, at q. */
static inline uint8_t *put_times(uint8_t *q, const struct tfd_event *e, int64_t *last)
{
	q = tfd_ev_put_varint(q, tfd_ev_zig(start_delta(e->start_ns, *last)));
	*last = e->start_ns;
	return tfd_ev_put_varint(q, tfd_ev_zig(e->dur_ns));
}

/* Pack e (its signature one of cap's) at q, its start a delta from
 * *last; the end of what was written. */
static uint8_t *put_event(struct capture_impl *ci, uint8_t *q, const struct tfd_event *e,
			  int64_t *last)
{
	uint64_t v = e->id, near;
	uint32_t vi;
	enum tfd_val_how how = tfd_cm_value_how(ci, v, e->kind == TFD_EV_ITERATOR, &vi);

	if (__builtin_expect(how == TFD_VAL_FIXED, 0) &&
	    (e->kind == TFD_EV_PRODUCE || e->kind == TFD_EV_CONSUME) &&
	    element_near(ci, v, e->start_ns, &near)) {
		q = put_times(q, e, last);
		q = tfd_ev_put_varint(q, tfd_cm_form_index(ci, e->sig, e->kind, e->flags,
							   TFD_VAL_NEAR, 0, ci->near_base));
		return tfd_ev_put_varint(q, near);
	}
	q = put_times(q, e, last);
	q = tfd_ev_put_varint(q, tfd_cm_form_index(ci, e->sig, e->kind, e->flags, how, vi, v));
	return tfd_cm_put_value(q, how, v);
}

/* Can e be folded into a run of chunks (fold_exec)? Negative durations
 * (damaged input) are not: sums of the others saturate the same in any
 * grouping, so a line read in parts folds as when read whole. */
static bool foldable(const struct tfd_event *e)
{
	return e->kind == TFD_EV_EXEC && (e->flags & TFD_EVF_ID) && e->dur_ns >= 0;
}

/* Fold e into the chunk packed last on t, if it is one of the same step
 * (tb->has_fold): it is packed again, its duration the sum. */
bool tfd_cm_fold_into_last(struct capture_impl *ci, struct tfd_thread *t, struct th_build *tb,
			   const struct tfd_event *e)
{
	struct tfd_event *f = &tb->fold;

	if (!tb->has_fold || !foldable(e) || f->id != e->id || f->sig != e->sig ||
	    f->flags != e->flags)
		return false;
	f->dur_ns = e->dur_ns > (int64_t)TFD_MAX_DURATION_NS - f->dur_ns
			? (int64_t)TFD_MAX_DURATION_NS
			: f->dur_ns + e->dur_ns;
	tb->last_start = tb->fold_prev;
	t->evlen = (size_t)(put_event(ci, t->evbuf + tb->fold_off, f, &tb->last_start) - t->evbuf);
	return true;
}

/* Note the event just packed at off (after one that started at prev) as
 * the one the next chunk may fold into. */
void tfd_cm_note_last(struct capture_impl *ci, struct th_build *tb, const struct tfd_event *e,
		      size_t off, int64_t prev)
{
	tb->has_fold = ci->pub.fold_exec && foldable(e);
	if (tb->has_fold) {
		tb->fold = *e;
		tb->fold_off = off;
		tb->fold_prev = prev;
	}
}

/* Append e to thread t's packed events (room grows by half); false when
 * it was folded into the chunk before it instead (one event less). */
static bool pack_event(struct capture_impl *ci, struct tfd_thread *t, struct th_build *tb,
		       const struct tfd_event *e)
{
	size_t off = t->evlen;
	int64_t prev = tb->last_start;

	if (tfd_cm_fold_into_last(ci, t, tb, e))
		return false;
	if (tb->leave && tfd_graph_kind(e->kind)) {
		/* read again from the file: no chunk folds across it */
		tfd_kbit_push(t, true);
		t->nfile++;
		tb->has_fold = false;
		return true;
	}
	if (t->evlen + EV_MAXLEN > tb->cap) {
		size_t nc = tb->cap + tb->cap / 2;

		if (nc < t->evlen + EV_MAXLEN)
			nc = t->evlen + EV_MAXLEN < 256 ? 256 : t->evlen + EV_MAXLEN;
		t->evbuf = xrealloc(t->evbuf, nc);
		tb->cap = nc;
	}
	t->evlen = (size_t)(put_event(ci, t->evbuf + t->evlen, e, &tb->last_start) - t->evbuf);
	tfd_cm_note_last(ci, tb, e, off, prev);
	if (__builtin_expect(ci->kbits || tb->leave || t->nfile, 0))
		tfd_kbit_push(t, !tb->leave && !t->nfile && tfd_graph_kind(e->kind));
	return true;
}

/* A sum's thread field: its low TFD_EXEC_THREAD_BITS bits, thread + 1. */
#define EXEC_THREAD_MASK (((uint64_t)1 << TFD_EXEC_THREAD_BITS) - 1)

/* The sum of the step with this code (tfd_exec_code()), NULL for none. */
static const uint64_t *sum_of_code(const struct tfd_exec_sums *x, uint64_t code)
{
	if (code == 1)
		return &x->zero_val;
	return code >= 2 && code - 2 < x->cap ? &x->val[code - 2] : NULL;
}

bool tfd_exec_sums_add(struct tfd_exec_sums *x, uint64_t id, int64_t dur_ns, size_t thread)
{
	const uint64_t tmask = EXEC_THREAD_MASK;
	uint64_t *v, old, nv;

	if (dur_ns < 0 || thread + 1 >= tmask)
		return false;
	/* (sum_of_code() is const to serve tfd_exec_sums_get() too) */
	v = (uint64_t *)(uintptr_t)sum_of_code(x, tfd_exec_code(x, id));
	if (!v)
		return false;
	old = __atomic_load_n(v, __ATOMIC_RELAXED);
	do {
		uint64_t sum = (old >> TFD_EXEC_THREAD_BITS) + (uint64_t)dur_ns;
		uint64_t th = old ? (old & tmask) - 1 : thread;

		if (sum >= (uint64_t)1 << (64 - TFD_EXEC_THREAD_BITS))
			return false; /* the event keeps the rest of the sum */
		nv = sum << TFD_EXEC_THREAD_BITS | ((th < thread ? th : thread) + 1);
	} while (
	    !__atomic_compare_exchange_n(v, &old, nv, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return true;
}

bool tfd_exec_sums_get(const struct tfd_exec_sums *x, uint64_t id, int64_t *ns, uint32_t *thread)
{
	const uint64_t *s;
	uint64_t v;

	if (!x || !(s = sum_of_code(x, x->coded ? id : tfd_exec_code(x, id))) || !(v = *s))
		return false;
	*ns = (int64_t)(v >> TFD_EXEC_THREAD_BITS);
	*thread = (uint32_t)((v & EXEC_THREAD_MASK) - 1);
	return true;
}

void tfd_exec_sums_free(struct tfd_exec_sums *x)
{
	if (!x)
		return;
	free(x->key);
	free(x->val);
	free(x);
}

void tfd_capture_sum_exec(struct tfd_capture *cap, struct tfd_exec_sums *x, const struct imap *tids)
{
	impl(cap)->sum_into = x;
	impl(cap)->sum_tids = tids;
}

/* Sum e, an event of thread t of h, into the capture's executor sums
 * instead of packing it, if it is a chunk that goes there. */
static bool sum_held(struct capture_impl *ci, const struct tfd_host *h, const struct tfd_thread *t,
		     const struct tfd_event *e)
{
	size_t th = (size_t)(t - h->threads);

	if (!ci->sum_into || e->kind != TFD_EV_EXEC || !(e->flags & TFD_EVF_ID))
		return false;
	if (ci->sum_tids && !imap_get(ci->sum_tids, (uint64_t)t->id, &th))
		return false;
	return tfd_exec_sums_add(ci->sum_into, e->id, e->dur_ns, th);
}

/* A function or executor event's step id as its code, when the sums it
 * goes with are coded; false for a chunk of a step they do not hold (it
 * is dropped). */
static bool code_held(const struct capture_impl *ci, struct tfd_event *e)
{
	if (!ci->sum_into || !ci->sum_into->coded || !(e->flags & TFD_EVF_ID) ||
	    (e->kind != TFD_EV_FUNCTION && e->kind != TFD_EV_EXEC))
		return true;
	e->id = tfd_exec_code(ci->sum_into, e->id);
	return e->id != 0 || e->kind != TFD_EV_EXEC;
}

/* Pack the oldest event tb holds back (one event less on t and h when it
 * folds, is summed or dropped). */
static void pack_held(struct capture_impl *ci, struct tfd_host *h, struct tfd_thread *t,
		      struct th_build *tb)
{
	struct tfd_event *e = &tb->pend[tb->head];

	if (sum_held(ci, h, t, e) || !code_held(ci, e) || !pack_event(ci, t, tb, e)) {
		t->nevents--;
		h->nevents--;
	}
	tb->head = (uint8_t)((tb->head + 1) % TFD_PEND_RING);
	tb->npend--;
}

/* Pack every event tb holds back, oldest first. */
void tfd_cm_pack_all_held(struct capture_impl *ci, struct tfd_host *h, struct tfd_thread *t,
			  struct th_build *tb)
{
	while (tb->npend)
		pack_held(ci, h, t, tb);
}

struct tfd_event *tfd_thread_unpack(const struct tfd_host *h, const struct tfd_thread *th)
{
	struct tfd_event *v = th->nevents ? xmalloc(th->nevents * sizeof(*v)) : NULL;
	struct tfd_ev_mcursor c;
	size_t n = 0;

	for (tfd_evm_begin(&c, h, (size_t)(th - h->threads));
	     n < th->nevents && tfd_evm_next(&c, &v[n]);)
		n++;
	tfd_evm_end(&c);
	return v;
}

void tfd_host_leave_graph(struct tfd_capture *cap, struct tfd_host *h)
{
	struct host_build *b = tfd_cm_build_of(cap, h);

	b->leave = true;
	for (size_t t = 0; t < b->ncap && t < h->nthreads; t++)
		b->tb[t].leave = !h->threads[t].nevents;
}

void tfd_cm_pack_left(struct tfd_capture *cap, struct tfd_host *h, size_t t)
{
	struct tfd_thread *th = &h->threads[t];
	struct tfd_ev_mcursor c;
	struct tfd_event e;
	uint8_t *buf = NULL;
	size_t room = 0, len = 0, n = 0;
	int64_t last = 0;

	for (tfd_evm_begin(&c, h, t); tfd_evm_next(&c, &e); n++) {
		if (len + EV_MAXLEN > room) {
			room = room ? room + room / 2 : th->evlen + 64 * th->nfile + EV_MAXLEN;
			buf = xrealloc(buf, room);
		}
		len = (size_t)(put_event(impl(cap), buf + len, &e, &last) - buf);
		/* (a form the left events had none of yet may have moved the
		 * table the cursor reads the packed ones with) */
		c.pk.form = h->tab->form;
	}
	tfd_evm_end(&c);
	free(th->evbuf);
	if (!len) {
		free(buf);
		buf = NULL;
	}
	th->evbuf = len ? xrealloc(buf, len) : NULL;
	th->evlen = len;
	h->nevents -= th->nevents - n; /* (none, unless the file changed) */
	th->nevents = n;
	th->nfile = 0;
	free(th->kbits);
	th->kbits = NULL;
	th->nkbits = 0;
	th->kbits_lost = impl(cap)->kbits;
}

/* The builders of threads up to `thread` (threads added since the last
 * are given theirs; one with events packed elsewhere is exactly full and
 * continues after its last event). */
void tfd_cm_cap_cover(struct host_build *b, const struct tfd_host *h, uint32_t thread)
{
	if (b->ncap <= thread) {
		size_t n = h->nthreads > thread ? h->nthreads : thread + 1;

		b->tb = xrealloc(b->tb, n * sizeof(*b->tb));
		for (size_t i = b->ncap; i < n; i++) {
			const struct tfd_thread *th = &h->threads[i];
			struct th_build *tb = &b->tb[i];

			memset(tb, 0, sizeof(*tb));
			tb->leave = b->leave && !th->nevents;
			tb->cap = th->evlen;
			tb->unsorted = th->nevents > 1; /* unknown order */
			if (th->nevents) {
				struct tfd_ev_cursor c;
				struct tfd_event e;

				for (tfd_ev_begin(&c, h, th); tfd_ev_next(&c, &e);) {
					tb->last_start = tb->prev_start = e.start_ns;
					tb->prev_dur = e.dur_ns;
				}
			}
		}
		b->ncap = n;
	}
}

/* Note that an event at (start, dur) follows the thread's others. */
void tfd_cm_note_order(struct th_build *tb, size_t before, int64_t start, int64_t dur)
{
	if (!before) {
		tb->first_start = start;
		tb->first_dur = dur;
	} else if (ev_before_at(start, dur, tb->prev_start, tb->prev_dur)) {
		tb->unsorted = 1;
	}
	tb->prev_start = start;
	tb->prev_dur = dur;
}

/* Pack the event each thread of h holds back for its stats. */
void tfd_cm_pack_pending(struct tfd_capture *cap, struct tfd_host *h)
{
	struct host_build *b = tfd_cm_build_of(cap, h);

	for (size_t t = 0; t < b->ncap && t < h->nthreads; t++)
		tfd_cm_pack_all_held(impl(cap), h, &h->threads[t], &b->tb[t]);
}

void tfd_host_pack_pending(struct tfd_capture *cap, struct tfd_host *h)
{
	tfd_cm_pack_pending(cap, h);
}

struct tfd_event *tfd_host_add_event_as(struct tfd_capture *cap, struct tfd_host *h,
					uint32_t thread, const char *name, enum tfd_ev_kind kind,
					int64_t start_ns, int64_t dur_ns)
{
	struct tfd_thread *t = &h->threads[thread];
	struct host_build *b = tfd_cm_build_of(cap, h);
	struct th_build *tb;
	struct tfd_event *e;

	tfd_cm_cap_cover(b, h, thread);
	tb = &b->tb[thread];
	if (tb->npend == TFD_PEND_RING)
		pack_held(impl(cap), h, t, tb);
	e = &tb->pend[(tb->head + tb->npend++) % TFD_PEND_RING];
	t->kinds |= TFD_KIND_BIT(kind);
	memset(e, 0, sizeof(*e));
	e->sig = tfd_cm_sig_of_name(cap, name);
	e->kind = (uint8_t)kind;
	e->start_ns = start_ns;
	/* the readers reject longer ones; programmatic captures are clamped to
	 * what the field holds */
	if (dur_ns > (int64_t)TFD_MAX_DURATION_NS)
		dur_ns = (int64_t)TFD_MAX_DURATION_NS;
	else if (dur_ns < -(int64_t)TFD_MAX_DURATION_NS)
		dur_ns = -(int64_t)TFD_MAX_DURATION_NS;
	e->dur_ns = dur_ns;
	tfd_cm_note_order(tb, t->nevents++, start_ns, dur_ns);
	h->nevents++;
	if (kind == TFD_EV_ITERATOR) {
		h->niterators++;
		h->nloop_inputs += name[0] == 'R'; /* tfd_event_kind_of */
	} else if (kind == TFD_EV_PRODUCE || kind == TFD_EV_CONSUME)
		h->nproduce++;
	else if (kind == TFD_EV_FUNCTION)
		h->nfunctions++;
	return e;
}

struct tfd_event *tfd_host_add_event(struct tfd_capture *cap, struct tfd_host *h, uint32_t thread,
				     const char *name, int64_t start_ns, int64_t dur_ns)
{
	name = tfd_arena_intern_cstr(&cap->arena, name);
	return tfd_host_add_event_as(cap, h, thread, name, tfd_event_kind_of(name), start_ns,
				     dur_ns);
}

/* ---- what the builder and the readers share with the finish (capture_finish.c
 * calls in here, never the other way) ---- */

/* The shared array of prev[0..n) followed by (key, val); key and val are
 * interned, so records compare by pointer. */
const struct tfd_param *tfd_cm_param_cons(struct tfd_capture *cap, const struct tfd_param *prev,
					  uint16_t n, const char *key, const char *val)
{
	struct capture_impl *ci = impl(cap);
	uint64_t h =
	    imap_hash((uint64_t)(uintptr_t)prev ^
		      imap_hash((uint64_t)(uintptr_t)key ^ imap_hash((uint64_t)(uintptr_t)val)));
	size_t head;
	int next = -1;
	struct tfd_param *p;

	if (imap_get(&ci->pcons_head, h, &head)) {
		for (int j = (int)head; j >= 0; j = ci->pcons.v[j].next) {
			const struct pcons *r = &ci->pcons.v[j];

			if (r->prev == prev && r->key == key && r->val == val)
				return r->result;
		}
		next = (int)head;
	}
	p = tfd_arena_alloc(&cap->arena, (n + 1u) * sizeof(*p));
	if (n)
		memcpy(p, prev, n * sizeof(*p));
	p[n].key = key;
	p[n].val = val;
	vec_push(&ci->pcons, ((struct pcons){prev, p, key, val, next}));
	imap_put(&ci->pcons_head, h, ci->pcons.n - 1);
	return p;
}

/* No room left over: the buffers grew by half, and the analysis peaks
 * beside them. */
void tfd_cm_trim_threads(struct tfd_capture *cap, struct tfd_host *h)
{
	struct host_build *b = tfd_cm_build_of(cap, h);

	for (size_t t = 0; t < h->nthreads && t < b->ncap; t++) {
		struct tfd_thread *th = &h->threads[t];

		if (b->tb[t].cap <= th->evlen)
			continue;
		if (th->evlen) {
			th->evbuf = xrealloc(th->evbuf, th->evlen);
		} else {
			free(th->evbuf);
			th->evbuf = NULL;
		}
		b->tb[t].cap = th->evlen;
	}
}

enum tfd_status tfd_host_settle(struct tfd_host *h, struct tfd_err *err)
{
	struct tfd_pending *pd = h->pending;

	if (!pd)
		return TFD_OK;
	h->pending = NULL;
	return pd->settle(pd, h, err);
}

/* Undo tfd_capture_add_host() for a file that failed to load. */
void tfd_capture_drop_last_host(struct tfd_capture *cap)
{
	struct tfd_host *h = &cap->hosts[cap->nhosts - 1];
	struct tfd_err ignored;

	/* what still runs on it is waited for (its error is not the host's
	 * to report: the host goes) */
	tfd_host_settle(h, &ignored);
	(void)tfd_source_free(h->source, &ignored);

	for (size_t t = 0; t < h->nthreads; t++) {
		free(h->threads[t].evbuf);
		free(h->threads[t].kbits);
	}
	free(h->threads);
	free(h->planes);
	free(h->steps);
	free(h->markers);
	free(h->fnruns);
	free(h->fnrun_groups);
	free(h->idle_runs);
	free(h->loose_fn_ids);
	tfd_exec_sums_free(h->exec_sums);
	tfd_fn_ops_free(&h->fn_ops);
	free(h->py_ops);
	free(h->fn_sums);
	free(h->fn_op_types);
	free(h->dev.steps);
	free(h->dev.host_ops);
	if (cap->nhosts - 1 < impl(cap)->hb.n)
		tfd_cm_build_release(&impl(cap)->hb.v[cap->nhosts - 1]);
	cap->nhosts--;
}
