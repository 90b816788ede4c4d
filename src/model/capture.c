/* capture.c - the in-memory capture model: hosts, threads, events, their
 * stats and steps, built by the readers (xspace.c, chrome.c) and finished
 * (sorted, executor chunks filtered) once a file is read. File reading,
 * format sniffing and directory discovery are in discover.c, which calls
 * the readers: dependencies run discover -> readers -> capture. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/vec.h"

/* ---- model building ---------------------------------------------------- */

/* A packed event is at most 10 + 10 + 5 + 8 bytes. */
#define EV_MAXLEN 40

/* What the builder keeps per thread while a file is read. */
struct th_build {
	size_t cap;		      /* evbuf has room for this many bytes */
	int64_t last_start;	      /* of the last event packed (starts are deltas) */
	int64_t prev_start, prev_dur; /* of the last event added */
	/* the event added last: its stats come after it, so it is packed
	 * when the next one is added or the file is finished */
	struct tfd_event pend;
	bool has_pend;
	/* its events may be out of order (1), or are known to be in order
	 * (0): the finish sorts only the former */
	uint8_t unsorted;
	/* the last event packed, when it is an executor chunk that the next
	 * may fold into (tfd_capture.fold_exec): as it is now, at fold_off,
	 * packed after an event that started at fold_prev */
	bool has_fold;
	struct tfd_event fold;
	size_t fold_off;
	int64_t fold_prev;
};

/* What the builder needs only while files are read: thread and step indexes
 * and the threads' builders, per host. Freed by tfd_capture_finish(). */
struct host_build {
	struct imap tid;   /* thread id -> index */
	struct imap group; /* group_id -> step index */
	size_t steps_cap;  /* h->steps has room for this many */
	/* the step noted last: a thread's events come a step at a time */
	bool has_last;
	int64_t last_group;
	size_t last_step;
	struct th_build *tb;
	size_t ncap;
};

/* The capture with its private parts; tfd_capture_new() allocates this and
 * hands out &pub (the first member). */
/* A parameter array is shared by every event with the same parameters (an
 * iterator's calls repeat them millions of times): `result` is the array
 * `prev` (of length n) with (key, val) appended; all strings are interned. */
struct pcons {
	const struct tfd_param *prev, *result;
	const char *key, *val;
	int next; /* the previous record with the same hash, -1 */
};

/* The signatures in use, by hash of their fields (a chain per hash). */
struct sig_rec {
	const struct tfd_sig *sig;
	int next; /* the previous record with the same hash, -1 */
};

/* events added by name: the last signature of each name, direct-mapped */
#define SIG_CACHE 256
/* forms looked up last, direct-mapped (a thread's events cycle through a
 * few); the index is the top 8 bits of a product */
#define FORM_CACHE 256

/* A signature given a parent_id: the last result of each (signature,
 * parent_id), direct-mapped (an iterator's calls repeat the pair). */
struct parent_step {
	const struct tfd_sig *from, *to;
	uint64_t parent_id;
};

struct capture_impl {
	struct tfd_capture pub;
	VEC(struct host_build) hb; /* parallel to pub.hosts while building */
	struct imap pcons_head;	   /* hash(prev, key, val) -> newest record */
	VEC(struct pcons) pcons;
	struct imap sig_head; /* sig_hash() -> newest record */
	VEC(struct sig_rec) sigs;
	const struct tfd_sig *sig_cache[SIG_CACHE];
	struct parent_step parent_cache[SIG_CACHE];
	/* what its hosts' packed events refer to; iterator id -> its index
	 * among the ids given forms, and the last lookups, direct-mapped */
	struct tfd_evtab *tab;
	size_t nsig;	      /* signatures made: the next one's idx */
	struct imap form_idx; /* a form's key (form_index()) -> its index in tab->form */
	struct {
		uint64_t key;
		uint32_t idx1; /* its index + 1, 0 for an empty entry */
	} form_cache[FORM_CACHE];
	struct imap val_idx;
	size_t nval_asked; /* iterator events with an id packed */
	struct {
		uint64_t val;
		uint32_t idx;
	} val_cache[SIG_CACHE];
	VEC(struct tfd_capture *)
	parts; /* captures whose hosts were adopted: their
		* arenas hold those hosts' strings */
	/* executor chunks summed instead of packed (tfd_capture_sum_exec) */
	struct tfd_exec_sums *sum_into;
	const struct imap *sum_tids;
};

static struct capture_impl *impl(struct tfd_capture *cap)
{
	return (struct capture_impl *)cap;
}

static const struct tfd_param *param_cons(struct tfd_capture *cap, const struct tfd_param *prev,
					  uint16_t n, const char *key, const char *val);

static uint64_t sig_hash(const struct tfd_sig *s)
{
	return imap_hash((uint64_t)(uintptr_t)s->name ^
			 imap_hash((uint64_t)(uintptr_t)s->params ^
				   imap_hash(s->parent_id ^ ((uint64_t)s->nparams << 48))));
}

/* The interned signature equal to *want (its strings and parameter array
 * are cap's, interned). */
static const struct tfd_sig *sig_get(struct tfd_capture *cap, const struct tfd_sig *want)
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
	s->idx = (uint32_t)ci->nsig++;
	vec_push(&ci->sigs, ((struct sig_rec){s, next}));
	imap_put(&ci->sig_head, h, ci->sigs.n - 1);
	return s;
}

/* The signature of an event named name (interned) with nothing else. */
static const struct tfd_sig *sig_of_name(struct tfd_capture *cap, const char *name)
{
	struct capture_impl *ci = impl(cap);
	const struct tfd_sig **slot =
	    &ci->sig_cache[imap_hash((uint64_t)(uintptr_t)name) % SIG_CACHE];
	struct tfd_sig want = {name, NULL, 0, 0, 0};

	if (!*slot || (*slot)->name != name)
		*slot = sig_get(cap, &want);
	return *slot;
}

static struct host_build *build_of(struct tfd_capture *cap, const struct tfd_host *h)
{
	struct capture_impl *ci = impl(cap);
	size_t idx = (size_t)(h - cap->hosts);

	while (ci->hb.n <= idx) {
		struct host_build zero;

		memset(&zero, 0, sizeof(zero));
		vec_push(&ci->hb, zero);
	}
	return &ci->hb.v[idx];
}

static void build_release(struct host_build *b)
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
		build_release(&ci->hb.v[i]);
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

static void pack_pending(struct tfd_capture *cap, struct tfd_host *h);
static void trim_threads(struct tfd_capture *cap, struct tfd_host *h);

void tfd_capture_adopt(struct tfd_capture *cap, struct tfd_capture *part, const char *path)
{
	for (size_t i = 0; i < part->nhosts; i++) {
		/* its builder stays behind: what it holds back goes in now */
		pack_pending(part, &part->hosts[i]);
		trim_threads(part, &part->hosts[i]);
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

static const char *const *sort_names; /* qsort context (callers are single-threaded) */

static int name_idx_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int c = strcmp(sort_names[i], sort_names[j]);

	return c ? c : (i > j) - (i < j);
}

size_t tfd_host_names_apart(const char *const *names, const char *const *paths, size_t n,
			    char **out, char *note, size_t len)
{
	size_t *ord = xmalloc((n ? n : 1) * sizeof(*ord)), renamed = 0, shown = 0, at = 0;

	for (size_t i = 0; i < n; i++) {
		ord[i] = i;
		out[i] = NULL;
	}
	sort_names = names;
	qsort(ord, n, sizeof(*ord), name_idx_cmp);
	sort_names = NULL;
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
	build_release(build_of(cap, h));
	return h;
}

uint32_t tfd_host_thread(struct tfd_capture *cap, struct tfd_host *h, int64_t tid, const char *name)
{
	struct host_build *b = build_of(cap, h);
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

enum tfd_ev_kind tfd_event_kind_of(const char *name)
{
	if (strncmp(name, "Iterator", 8) == 0 &&
	    (name[8] == '\0' || strncmp(name + 8, "::", 2) == 0))
		return TFD_EV_ITERATOR;
	{
		size_t n = strlen(name);

		/* PrefetchProduce, ParallelMapConsume, ...: the families table */
		if (n > 7 && strcmp(name + n - 7, "Produce") == 0 &&
		    tfd_family_of_produce(name, NULL))
			return TFD_EV_PRODUCE;
		if (n > 7 && strcmp(name + n - 7, "Consume") == 0 &&
		    tfd_family_of_consume(name, NULL))
			return TFD_EV_CONSUME;
	}
	/* XProf: a name starting with IteratorGetNext (any case) waits for input. */
	if (strncasecmp(name, "IteratorGetNext", 15) == 0)
		return TFD_EV_GETNEXT;
	/* a dataset function and the executor chunks that run its ops: the map
	 * work that iterator events do not show (throughput-model.md 4) */
	if (strncmp(name, "InstantiatedCapturedFunction::", 30) == 0)
		return TFD_EV_FUNCTION;
	if (strcmp(name, "ExecutorState::Process") == 0)
		return TFD_EV_EXEC;
	return TFD_EV_OTHER;
}

/* Is an event at (s1, d1) before one at (s2, d2): start ascending,
 * duration descending? */
static bool ev_before_at(int64_t s1, int64_t d1, int64_t s2, int64_t d2)
{
	return s1 != s2 ? s1 < s2 : d1 > d2;
}

/* Start deltas wrap around in uint64 (readers allow starts up to 2^62
 * apart), and the cursor adds them back the same way. */
static int64_t start_delta(int64_t to, int64_t from)
{
	return (int64_t)((uint64_t)to - (uint64_t)from);
}

/* An iterator id not given forms (VAL_NONE) is stored as it is. */
#define VAL_NONE UINT32_MAX
#define VAL_FREE 4096	 /* ids given forms before they must pay */
#define FORM_VAL_BITS 22 /* an id's index in a form's key */

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
static uint32_t form_index(struct capture_impl *ci, const struct tfd_sig *sig, unsigned kind,
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
		    (struct tfd_form){sig, how == TFD_VAL_FORM ? val : 0, (uint8_t)kind,
				      (uint8_t)flags, (uint8_t)how};
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
static enum tfd_val_how value_how(struct capture_impl *ci, uint64_t v, bool iterator, uint32_t *vi)
{
	if (v && iterator && (*vi = val_index(ci, v)) != VAL_NONE)
		return TFD_VAL_FORM;
	*vi = 0;
	return how_inline(v);
}

/* Write value v at q as how says (nothing for none or a form's). */
static uint8_t *put_value(uint8_t *q, enum tfd_val_how how, uint64_t v)
{
	if (how == TFD_VAL_VARINT)
		return tfd_ev_put_varint(q, v);
	if (how == TFD_VAL_FIXED)
		for (int i = 0; i < 8; i++)
			*q++ = (uint8_t)(v >> (8 * i));
	return q;
}

/* Pack e (its signature one of cap's) at q, its start a delta from
 * *last; the end of what was written. */
static uint8_t *put_event(struct capture_impl *ci, uint8_t *q, const struct tfd_event *e,
			  int64_t *last)
{
	uint64_t v = e->id;
	uint32_t vi;
	enum tfd_val_how how = value_how(ci, v, e->kind == TFD_EV_ITERATOR, &vi);

	q = tfd_ev_put_varint(q, tfd_ev_zig(start_delta(e->start_ns, *last)));
	*last = e->start_ns;
	q = tfd_ev_put_varint(q, tfd_ev_zig(e->dur_ns));
	q = tfd_ev_put_varint(q, form_index(ci, e->sig, e->kind, e->flags, how, vi, v));
	return put_value(q, how, v);
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
static bool fold_into_last(struct capture_impl *ci, struct tfd_thread *t, struct th_build *tb,
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
static void note_last(struct capture_impl *ci, struct th_build *tb, const struct tfd_event *e,
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

	if (fold_into_last(ci, t, tb, e))
		return false;
	if (t->evlen + EV_MAXLEN > tb->cap) {
		size_t nc = tb->cap + tb->cap / 2;

		if (nc < t->evlen + EV_MAXLEN)
			nc = t->evlen + EV_MAXLEN < 256 ? 256 : t->evlen + EV_MAXLEN;
		t->evbuf = xrealloc(t->evbuf, nc);
		tb->cap = nc;
	}
	t->evlen = (size_t)(put_event(ci, t->evbuf + t->evlen, e, &tb->last_start) - t->evbuf);
	note_last(ci, tb, e, off, prev);
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

/* Pack the event tb holds back for its stats (one event less on t and h
 * when it folds, is summed or dropped). */
static void pack_held(struct capture_impl *ci, struct tfd_host *h, struct tfd_thread *t,
		      struct th_build *tb)
{
	if (sum_held(ci, h, t, &tb->pend) || !code_held(ci, &tb->pend) ||
	    !pack_event(ci, t, tb, &tb->pend)) {
		t->nevents--;
		h->nevents--;
	}
	tb->has_pend = false;
}

struct tfd_event *tfd_thread_unpack(const struct tfd_host *h, const struct tfd_thread *th)
{
	struct tfd_event *v = th->nevents ? xmalloc(th->nevents * sizeof(*v)) : NULL;
	struct tfd_ev_cursor c;
	size_t n = 0;

	for (tfd_ev_begin(&c, h, th); n < th->nevents && tfd_ev_next(&c, &v[n]);)
		n++;
	return v;
}

/* The builders of threads up to `thread` (threads added since the last
 * are given theirs; one with events packed elsewhere is exactly full and
 * continues after its last event). */
static void cap_cover(struct host_build *b, const struct tfd_host *h, uint32_t thread)
{
	if (b->ncap <= thread) {
		size_t n = h->nthreads > thread ? h->nthreads : thread + 1;

		b->tb = xrealloc(b->tb, n * sizeof(*b->tb));
		for (size_t i = b->ncap; i < n; i++) {
			const struct tfd_thread *th = &h->threads[i];
			struct th_build *tb = &b->tb[i];

			memset(tb, 0, sizeof(*tb));
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
static void note_order(struct th_build *tb, size_t before, int64_t start, int64_t dur)
{
	if (before && ev_before_at(start, dur, tb->prev_start, tb->prev_dur))
		tb->unsorted = 1;
	tb->prev_start = start;
	tb->prev_dur = dur;
}

/* Pack the event each thread of h holds back for its stats. */
static void pack_pending(struct tfd_capture *cap, struct tfd_host *h)
{
	struct host_build *b = build_of(cap, h);

	for (size_t t = 0; t < b->ncap && t < h->nthreads; t++)
		if (b->tb[t].has_pend)
			pack_held(impl(cap), h, &h->threads[t], &b->tb[t]);
}

void tfd_host_pack_pending(struct tfd_capture *cap, struct tfd_host *h)
{
	pack_pending(cap, h);
}

struct tfd_event *tfd_host_add_event_as(struct tfd_capture *cap, struct tfd_host *h,
					uint32_t thread, const char *name, enum tfd_ev_kind kind,
					int64_t start_ns, int64_t dur_ns)
{
	struct tfd_thread *t = &h->threads[thread];
	struct host_build *b = build_of(cap, h);
	struct th_build *tb;
	struct tfd_event *e;

	cap_cover(b, h, thread);
	tb = &b->tb[thread];
	if (tb->has_pend)
		pack_held(impl(cap), h, t, tb);
	tb->has_pend = true;
	e = &tb->pend;
	t->kinds |= TFD_KIND_BIT(kind);
	memset(e, 0, sizeof(*e));
	e->sig = sig_of_name(cap, name);
	e->kind = (uint8_t)kind;
	e->start_ns = start_ns;
	/* the readers reject longer ones; programmatic captures are clamped to
	 * what the field holds */
	if (dur_ns > (int64_t)TFD_MAX_DURATION_NS)
		dur_ns = (int64_t)TFD_MAX_DURATION_NS;
	else if (dur_ns < -(int64_t)TFD_MAX_DURATION_NS)
		dur_ns = -(int64_t)TFD_MAX_DURATION_NS;
	e->dur_ns = dur_ns;
	note_order(tb, t->nevents++, start_ns, dur_ns);
	h->nevents++;
	if (kind == TFD_EV_ITERATOR)
		h->niterators++;
	else if (kind == TFD_EV_PRODUCE || kind == TFD_EV_CONSUME)
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

/* A signature of part's arena rebuilt as one of cap's (its name is a
 * string of cap already; its parameters are rebuilt from cap's arrays). */
static const struct tfd_sig *sig_move(struct tfd_capture *cap, struct imap *done,
				      const struct tfd_sig *s)
{
	struct tfd_sig want = *s;
	const struct tfd_param *q = NULL;
	size_t v;

	if (imap_get(done, (uint64_t)(uintptr_t)s, &v))
		return (const struct tfd_sig *)(uintptr_t)v;
	for (uint16_t i = 0; i < s->nparams; i++)
		q = param_cons(cap, q, i, tfd_arena_intern_cstr(&cap->arena, s->params[i].key),
			       tfd_arena_intern_cstr(&cap->arena, s->params[i].val));
	want.params = q;
	v = (size_t)(uintptr_t)sig_get(cap, &want);
	imap_put(done, (uint64_t)(uintptr_t)s, v);
	return (const struct tfd_sig *)(uintptr_t)v;
}

/* The moves of one absorb: every signature moved (done), and the last move
 * of each, direct-mapped (a thread's events cycle through a few). */
struct sig_moves {
	struct imap done;
	struct {
		const struct tfd_sig *from, *to;
	} last[64];
};

static const struct tfd_sig *moved_sig(struct tfd_capture *cap, struct sig_moves *mv,
				       const struct tfd_sig *s)
{
	size_t m = ((uintptr_t)s >> 5) % (sizeof(mv->last) / sizeof(mv->last[0]));

	if (mv->last[m].from != s) {
		mv->last[m].from = s;
		mv->last[m].to = sig_move(cap, &mv->done, s);
	}
	return mv->last[m].to;
}

/* Form f of a part as cap's: the same but for its signature, moved, and
 * an id that cap gives no form (VAL_NONE) to be stored as it is. */
static uint32_t moved_form(struct tfd_capture *cap, struct sig_moves *mv, const struct tfd_form *f)
{
	struct capture_impl *ci = impl(cap);
	uint32_t vi = 0;
	enum tfd_val_how how =
	    f->how == TFD_VAL_FORM ? value_how(ci, f->val, true, &vi) : (enum tfd_val_how)f->how;

	return form_index(ci, moved_sig(cap, mv, f->sig), f->kind, f->flags, how, vi, f->val);
}

/* Append the packed events of src (a thread of part's host ph) to dst
 * (cap's), with cap's indexes: each event's bytes are copied but for its
 * start delta and the indexes in it. src's pages go as they are read (it
 * is freed after): a long thread is not held twice. */
static size_t repack(struct tfd_capture *cap, const struct tfd_host *ph, struct sig_moves *mv,
		     uint32_t *map, struct tfd_thread *src, struct tfd_thread *dst,
		     struct th_build *tb)
{
	const uint8_t *p = src->evbuf, *end, *released = src->evbuf;
	int64_t start = 0, prev = 0;
	size_t folded = 0, off = SIZE_MAX;

	if (!src->evlen)
		return 0;
	end = p + src->evlen;
	/* about as long with cap's indexes */
	if (dst->evlen + src->evlen + EV_MAXLEN > tb->cap) {
		tb->cap = dst->evlen + src->evlen + src->evlen / 8 + EV_MAXLEN;
		dst->evbuf = xrealloc(dst->evbuf, tb->cap);
	}
	if (tb->has_fold) {
		/* the seam of a line read in parts: its first event may be a
		 * chunk of the run the line's previous part ended with */
		struct tfd_ev_cursor c;
		struct tfd_event e = {0};

		tfd_ev_begin(&c, ph, src);
		tfd_ev_next(&c, &e);
		e.sig = moved_sig(cap, mv, e.sig);
		if (fold_into_last(impl(cap), dst, tb, &e)) {
			note_order(tb, dst->nevents, e.start_ns, e.dur_ns);
			p = c.p;
			start = e.start_ns;
			folded = 1;
		}
		tb->has_fold = false;
	}
	while (p < end) {
		uint8_t *q;
		const uint8_t *dur;
		const struct tfd_form *pf;
		int64_t d;
		uint64_t fi;

		if ((size_t)(p - released) > (1u << 20))
			tfd_pages_release(&released, p, 1u << 20);
		start = (int64_t)((uint64_t)start + (uint64_t)tfd_ev_unzig(tfd_ev_varint(&p)));
		dur = p;
		d = tfd_ev_unzig(tfd_ev_varint(&p));
		note_order(tb, dst->nevents++, start, d);
		if (dst->evlen + EV_MAXLEN > tb->cap) {
			tb->cap += tb->cap / 2 + EV_MAXLEN;
			dst->evbuf = xrealloc(dst->evbuf, tb->cap);
		}
		off = dst->evlen;
		prev = tb->last_start;
		q = dst->evbuf + dst->evlen;
		q = tfd_ev_put_varint(q, tfd_ev_zig(start_delta(start, tb->last_start)));
		tb->last_start = start;
		memcpy(q, dur, (size_t)(p - dur));
		q += p - dur;
		fi = tfd_ev_varint(&p);
		pf = &ph->tab->form[fi];
		if (map[fi] == UINT32_MAX)
			map[fi] = moved_form(cap, mv, pf);
		q = tfd_ev_put_varint(q, map[fi]);
		if (pf->how == TFD_VAL_FORM) {
			/* nothing, or the id as it is where cap gives it no form */
			q = put_value(q, (enum tfd_val_how)impl(cap)->tab->form[map[fi]].how,
				      pf->val);
		} else if (pf->how == TFD_VAL_VARINT) {
			const uint8_t *v = p;

			tfd_ev_varint(&p);
			memcpy(q, v, (size_t)(p - v));
			q += p - v;
		} else if (pf->how == TFD_VAL_FIXED) {
			memcpy(q, p, 8);
			q += 8;
			p += 8;
		}
		dst->evlen = (size_t)(q - dst->evbuf);
	}
	if (off != SIZE_MAX && impl(cap)->pub.fold_exec) {
		/* the last event moved, read back with cap's tables: the next
		 * part's first may fold into it */
		struct tfd_ev_cursor c;
		struct tfd_event e;

		c.p = dst->evbuf + off;
		c.end = dst->evbuf + dst->evlen;
		c.start = prev;
		c.form = impl(cap)->tab->form;
		tfd_ev_next(&c, &e);
		note_last(impl(cap), tb, &e, off, prev);
	}
	return folded;
}

void tfd_host_absorb(struct tfd_capture *cap, struct tfd_host *h, struct tfd_capture *part)
{
	struct tfd_host *ph = &part->hosts[0];
	struct sig_moves mv;
	uint32_t *map;	   /* a part's form as cap's, UINT32_MAX: not seen yet */
	size_t folded = 0; /* chunks folded at the seams */

	memset(&mv, 0, sizeof(mv));
	pack_pending(part, ph);
	map = xmalloc((ph->tab->nform + 1) * sizeof(*map));
	memset(map, 0xff, (ph->tab->nform + 1) * sizeof(*map));
	for (size_t t = 0; t < ph->nthreads; t++) {
		struct tfd_thread *src = &ph->threads[t];
		uint32_t idx = tfd_host_thread(cap, h, src->id, src->name);
		struct tfd_thread *dst = &h->threads[idx];
		struct host_build *b = build_of(cap, h);
		struct th_build *tb;

		cap_cover(b, h, idx);
		tb = &b->tb[idx];
		if (tb->has_pend)
			pack_held(impl(cap), h, dst, tb);
		dst->kinds |= src->kinds;
		folded += repack(cap, ph, &mv, map, src, dst, tb);
		free(src->evbuf);
		src->evbuf = NULL;
		src->evlen = 0;
		src->nevents = 0;
	}
	h->nevents += ph->nevents - folded;
	h->niterators += ph->niterators;
	h->nproduce += ph->nproduce;
	h->nfunctions += ph->nfunctions;
	ph->nevents = ph->niterators = ph->nproduce = ph->nfunctions = 0;
	for (size_t i = 0; i < ph->nsteps; i++)
		tfd_host_note(cap, h, true, ph->steps[i].group_id, ph->steps[i].start_ns,
			      ph->steps[i].end_ns);
	if (ph->span_start_ns <= ph->span_end_ns)
		tfd_host_note(cap, h, false, 0, ph->span_start_ns, ph->span_end_ns);
	imap_free(&mv.done);
	free(map);
}

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
	b = build_of(cap, h);
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

/* The shared array of prev[0..n) followed by (key, val); key and val are
 * interned, so records compare by pointer. */
static const struct tfd_param *param_cons(struct tfd_capture *cap, const struct tfd_param *prev,
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
				p = param_cons(cap, p, j, want.params[j].key,
					       j == i ? val : want.params[j].val);
			want.params = p;
			e->sig = sig_get(cap, &want);
			return;
		}
	}
	if (want.nparams >= TFD_MAX_PARAMS)
		return;
	want.params = param_cons(cap, want.params, want.nparams, key, val);
	want.nparams++;
	e->sig = sig_get(cap, &want);
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
	return strcmp(key, "id") == 0		? TFD_STAT_ID
	       : strcmp(key, "parent_id") == 0	? TFD_STAT_PARENT
	       : strcmp(key, "element_id") == 0 ? TFD_STAT_ELEMENT
	       : strcmp(key, "group_id") == 0	? TFD_STAT_GROUP
	       : strcmp(key, "_a") == 0		? TFD_STAT_ASYNC
	       : is_meta_stat(key)		? TFD_STAT_META
						: TFD_STAT_PARAM;
}

void tfd_event_set_stat_int(struct tfd_capture *cap, struct tfd_event *e, const char *key,
			    int64_t v)
{
	tfd_event_set_stat_as(cap, e, tfd_stat_of(key), key, v);
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
			*ps = (struct parent_step){e->sig, sig_get(cap, &want), (uint64_t)v};
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

/* Parse a decimal id, signed or unsigned, into its 64-bit pattern. */
static int parse_id(const char *s, int64_t *out)
{
	char *end;

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
	int64_t n;

	if (strcmp(key, "id") == 0 || strcmp(key, "parent_id") == 0 ||
	    strcmp(key, "element_id") == 0 || strcmp(key, "group_id") == 0 ||
	    strcmp(key, "_a") == 0) {
		if (parse_id(v, &n) == 0)
			tfd_event_set_stat_int(cap, e, key, n);
		return;
	}
	if (e->kind == TFD_EV_ITERATOR && !is_meta_stat(key))
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

static int step_cmp(const void *a, const void *b)
{
	const struct tfd_step *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	return x->group_id < y->group_id ? -1 : x->group_id > y->group_id;
}

size_t tfd_thread_filter(const struct tfd_host *h, struct tfd_thread *th,
			 bool (*keep)(const struct tfd_event *e, void *ctx), void *ctx)
{
	struct tfd_ev_cursor c;
	struct tfd_event e;
	uint8_t *w = th->evbuf;
	const uint8_t *at;
	int64_t last = 0;
	size_t n = 0, dropped;

	if (!th->nevents)
		return 0;
	/* a kept event is its start as a delta from the last kept one, then
	 * its other fields' bytes as they were: the delta's varint is never
	 * longer than those of the deltas it sums and the dropped events'
	 * bytes, so the writes stay behind the reads */
	for (tfd_ev_begin(&c, h, th), at = c.p; tfd_ev_next(&c, &e); at = c.p) {
		const uint8_t *rest = at;

		if (!keep(&e, ctx))
			continue;
		tfd_ev_varint(&rest);
		w = tfd_ev_put_varint(w, tfd_ev_zig(start_delta(e.start_ns, last)));
		last = e.start_ns;
		memmove(w, rest, (size_t)(c.p - rest));
		w += c.p - rest;
		n++;
	}
	dropped = th->nevents - n;
	th->nevents = n;
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
	if (f->how == TFD_VAL_VARINT)
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

/* No room left over: the buffers grew by half, and the analysis peaks
 * beside them. */
static void trim_threads(struct tfd_capture *cap, struct tfd_host *h)
{
	struct host_build *b = build_of(cap, h);

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

enum tfd_status tfd_capture_finish(struct tfd_capture *cap, struct tfd_err *err)
{
	for (size_t i = 0; i < cap->nhosts; i++) {
		struct tfd_host *h = &cap->hosts[i];
		const struct host_build *b = i < impl(cap)->hb.n ? &impl(cap)->hb.v[i] : NULL;

		if (b)
			pack_pending(cap, h);
		if (!h->exec_filtered)
			drop_foreign_exec(h);

		if (b)
			trim_threads(cap, h);
		for (size_t t = 0; t < h->nthreads; t++) {
			struct tfd_thread *th = &h->threads[t];
			struct tfd_ev_cursor c;
			struct tfd_event e;
			int64_t ps = 0, pd = 0;
			size_t k;

			if (th->nevents < 2 || (b && t < b->ncap && !b->tb[t].unsorted))
				continue; /* in order as read (TensorFlow writes lines sorted) */
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
		if (h->nsteps > 1)
			qsort(h->steps, h->nsteps, sizeof(*h->steps), step_cmp);
		if (h->nsteps)
			h->steps = xrealloc(h->steps, h->nsteps * sizeof(*h->steps));
		/* the file is read: the builder's indexes are not needed any more */
		if (i < impl(cap)->hb.n)
			build_release(&impl(cap)->hb.v[i]);
		if (h->span_start_ns > h->span_end_ns)
			h->span_start_ns = h->span_end_ns = 0;
	}
	(void)err;
	return TFD_OK;
}

/* Undo tfd_capture_add_host() for a file that failed to load. */
void tfd_capture_drop_last_host(struct tfd_capture *cap)
{
	struct tfd_host *h = &cap->hosts[cap->nhosts - 1];

	for (size_t t = 0; t < h->nthreads; t++)
		free(h->threads[t].evbuf);
	free(h->threads);
	free(h->planes);
	free(h->steps);
	tfd_exec_sums_free(h->exec_sums);
	if (cap->nhosts - 1 < impl(cap)->hb.n)
		build_release(&impl(cap)->hb.v[cap->nhosts - 1]);
	cap->nhosts--;
}
