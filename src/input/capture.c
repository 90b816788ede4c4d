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

#include "input_impl.h"
#include "tfd/capture.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/vec.h"

/* ---- model building ---------------------------------------------------- */


/* What the builder needs only while files are read: thread and step indexes
 * and the events arrays' capacities, per host. Freed by tfd_capture_finish(). */
struct host_build {
	struct imap tid;   /* thread id -> index */
	struct imap group; /* group_id -> step index */
	size_t steps_cap;  /* h->steps has room for this many */
	size_t *ev_cap;    /* per thread */
	/* per thread: its events may be out of order (1), or are known to be
	 * in order (0): the finish sorts only the former */
	uint8_t *unsorted;
	size_t ncap;
};

static int ev_before(const struct tfd_event *a, const struct tfd_event *b);

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

/* A signature given a parent_id: the last result of each (signature,
 * parent_id), direct-mapped (an iterator's calls repeat the pair). */
struct parent_step {
	const struct tfd_sig *from, *to;
	uint64_t parent_id;
};

struct capture_impl {
	struct tfd_capture pub;
	VEC(struct host_build) hb;    /* parallel to pub.hosts while building */
	struct imap pcons_head;       /* hash(prev, key, val) -> newest record */
	VEC(struct pcons) pcons;
	struct imap sig_head; /* sig_hash() -> newest record */
	VEC(struct sig_rec) sigs;
	const struct tfd_sig *sig_cache[SIG_CACHE];
	struct parent_step parent_cache[SIG_CACHE];
	VEC(struct tfd_capture *) parts; /* captures whose hosts were adopted: their
					  * arenas hold those hosts' strings */
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
	struct tfd_sig want = {name, NULL, 0, 0};

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
	free(b->ev_cap);
	free(b->unsorted);
	memset(b, 0, sizeof(*b));
}

struct tfd_capture *tfd_capture_new(void)
{
	struct capture_impl *ci = xcalloc(1, sizeof(*ci));

	tfd_arena_init(&ci->pub.arena);
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
	for (size_t i = 0; i < ci->parts.n; i++)
		tfd_capture_free(ci->parts.v[i]);
	vec_free(&ci->parts);
	tfd_arena_release(&cap->arena);
	free(ci);
}

void tfd_capture_adopt(struct tfd_capture *cap, struct tfd_capture *part, const char *path)
{
	for (size_t i = 0; i < part->nhosts; i++) {
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
	if (strncmp(name, "Iterator", 8) == 0 && (name[8] == '\0' || strncmp(name + 8, "::", 2) == 0))
		return TFD_EV_ITERATOR;
	{
		size_t n = strlen(name);

		/* PrefetchProduce, ParallelMapConsume, ...: the families table */
		if (n > 7 && strcmp(name + n - 7, "Produce") == 0 && tfd_family_of_produce(name, NULL))
			return TFD_EV_PRODUCE;
		if (n > 7 && strcmp(name + n - 7, "Consume") == 0 && tfd_family_of_consume(name, NULL))
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

/* Room for the events of thread `thread` in the builder's capacities
 * (threads added since are exactly full: their arrays have no slack). */
static void cap_cover(struct host_build *b, const struct tfd_host *h, uint32_t thread)
{
	if (b->ncap <= thread) {
		size_t n = h->nthreads > thread ? h->nthreads : thread + 1;

		b->ev_cap = xrealloc(b->ev_cap, n * sizeof(*b->ev_cap));
		b->unsorted = xrealloc(b->unsorted, n);
		for (size_t i = b->ncap; i < n; i++) {
			b->ev_cap[i] = h->threads[i].nevents; /* unknown: exactly full */
			b->unsorted[i] = h->threads[i].nevents > 1; /* unknown order */
		}
		b->ncap = n;
	}
}

struct tfd_event *tfd_host_add_event_as(struct tfd_capture *cap, struct tfd_host *h,
					uint32_t thread, const char *name, enum tfd_ev_kind kind,
					int64_t start_ns, int64_t dur_ns)
{
	struct tfd_thread *t = &h->threads[thread];
	struct host_build *b = build_of(cap, h);
	struct tfd_event *e;

	cap_cover(b, h, thread);
	if (t->nevents == b->ev_cap[thread]) {
		/* 1.5x: less slack than doubling for the millions kept from big captures */
		size_t nc = b->ev_cap[thread] ? b->ev_cap[thread] + b->ev_cap[thread] / 2 : 64;

		t->events = xrealloc(t->events, nc * sizeof(*t->events));
		b->ev_cap[thread] = nc;
	}
	e = &t->events[t->nevents++];
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
	if (t->nevents > 1 && ev_before(e, e - 1))
		b->unsorted[thread] = 1;
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

void tfd_host_absorb(struct tfd_capture *cap, struct tfd_host *h, struct tfd_capture *part)
{
	struct tfd_host *ph = &part->hosts[0];
	struct host_build *pb = build_of(part, ph);
	struct sig_moves mv;

	memset(&mv, 0, sizeof(mv));
	for (size_t t = 0; t < ph->nthreads; t++) {
		struct tfd_thread *src = &ph->threads[t];
		uint32_t idx = tfd_host_thread(cap, h, src->id, src->name);
		struct tfd_thread *dst = &h->threads[idx];
		struct host_build *b = build_of(cap, h);

		cap_cover(b, h, idx);
		dst->kinds |= src->kinds;
		if (src->nevents)
			b->unsorted[idx] |= (t < pb->ncap ? pb->unsorted[t] : src->nevents > 1) ||
					    (dst->nevents &&
					     ev_before(&src->events[0], &dst->events[dst->nevents - 1]));
		if (!dst->nevents) {
			/* the usual case, one line per thread: the array moves */
			for (size_t k = 0; k < src->nevents; k++)
				src->events[k].sig = moved_sig(cap, &mv, src->events[k].sig);
			free(dst->events);
			dst->events = src->events;
			dst->nevents = src->nevents;
			b->ev_cap[idx] = t < pb->ncap ? pb->ev_cap[t] : src->nevents;
		} else if (src->nevents) {
			/* a part of a line: appended, signatures moved as copied */
			struct tfd_event *to;

			dst->events = xrealloc(dst->events,
					       (dst->nevents + src->nevents) * sizeof(*dst->events));
			to = dst->events + dst->nevents;
			for (size_t k = 0; k < src->nevents; k++) {
				to[k] = src->events[k];
				to[k].sig = moved_sig(cap, &mv, src->events[k].sig);
			}
			dst->nevents += src->nevents;
			b->ev_cap[idx] = dst->nevents;
			free(src->events);
		}
		src->events = NULL;
		src->nevents = 0;
	}
	h->nevents += ph->nevents;
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
}

void tfd_host_note(struct tfd_capture *cap, struct tfd_host *h, bool has_group, int64_t group_id,
		   int64_t start_ns, int64_t end_ns)
{
	struct host_build *b;
	struct imap *gi;
	size_t idx;

	if (start_ns < h->span_start_ns)
		h->span_start_ns = start_ns;
	if (end_ns > h->span_end_ns)
		h->span_end_ns = end_ns;
	if (!has_group)
		return;
	b = build_of(cap, h);
	gi = &b->group;
	if (!imap_get(gi, (uint64_t)group_id, &idx)) {
		idx = h->nsteps;
		if (h->nsteps >= b->steps_cap) {
			/* doubling: a realloc per step copied the steps once per
			 * step (a build released and begun again knows no room) */
			b->steps_cap = h->nsteps < 32 ? 64 : 2 * h->nsteps;
			h->steps = xrealloc(h->steps, b->steps_cap * sizeof(*h->steps));
		}
		h->steps[idx].group_id = group_id;
		h->steps[idx].start_ns = start_ns;
		h->steps[idx].end_ns = end_ns;
		h->nsteps++;
		imap_put(gi, (uint64_t)group_id, idx);
		return;
	}
	if (start_ns < h->steps[idx].start_ns)
		h->steps[idx].start_ns = start_ns;
	if (end_ns > h->steps[idx].end_ns)
		h->steps[idx].end_ns = end_ns;
}

/* The shared array of prev[0..n) followed by (key, val); key and val are
 * interned, so records compare by pointer. */
static const struct tfd_param *param_cons(struct tfd_capture *cap, const struct tfd_param *prev,
					  uint16_t n, const char *key, const char *val)
{
	struct capture_impl *ci = impl(cap);
	uint64_t h = imap_hash((uint64_t)(uintptr_t)prev ^
			       imap_hash((uint64_t)(uintptr_t)key ^
					 imap_hash((uint64_t)(uintptr_t)val)));
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

static void add_param(struct tfd_capture *cap, struct tfd_event *e, const char *key, const char *val)
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
					   "_r",        "_p",       "_c",       "_pt",
					   "_ct",       "_pid",     "tf_op",    "group_id"};

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
	return strcmp(key, "id") == 0	       ? TFD_STAT_ID
	       : strcmp(key, "parent_id") == 0  ? TFD_STAT_PARENT
	       : strcmp(key, "element_id") == 0 ? TFD_STAT_ELEMENT
	       : strcmp(key, "group_id") == 0   ? TFD_STAT_GROUP
	       : strcmp(key, "_a") == 0	       ? TFD_STAT_ASYNC
	       : is_meta_stat(key)	       ? TFD_STAT_META
					       : TFD_STAT_PARAM;
}

void tfd_event_set_stat_int(struct tfd_capture *cap, struct tfd_event *e, const char *key, int64_t v)
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

/* Stable merge sort by (start asc, duration desc). */
static int ev_before(const struct tfd_event *a, const struct tfd_event *b)
{
	if (a->start_ns != b->start_ns)
		return a->start_ns < b->start_ns;
	return a->dur_ns > b->dur_ns;
}

static void merge_sort(struct tfd_event *v, struct tfd_event *tmp, size_t n)
{
	size_t mid, i, j, k;

	if (n < 2)
		return;
	if (n <= 16) {
		for (i = 1; i < n; i++) {
			struct tfd_event x = v[i];

			for (j = i; j > 0 && ev_before(&x, &v[j - 1]); j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	mid = n / 2;
	merge_sort(v, tmp, mid);
	merge_sort(v + mid, tmp, n - mid);
	if (!ev_before(&v[mid], &v[mid - 1]))
		return;
	i = 0;
	j = mid;
	k = 0;
	while (i < mid && j < n)
		tmp[k++] = ev_before(&v[j], &v[i]) ? v[j++] : v[i++];
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

/* Keep executor chunks only for the dataset functions captured on the host
 * (the training step's own executor events would cost memory for nothing). */
static void drop_foreign_exec(struct tfd_host *h)
{
	struct imap fn = {0};
	size_t dummy;
	bool exec = false;

	/* only threads with the kinds a step reads are walked (the XSpace
	 * reader's pre-pass leaves nothing to drop, but a walk of every event
	 * that copied each over itself cost 8 % of a tf.data-heavy analysis) */
	for (size_t t = 0; t < h->nthreads; t++)
		exec |= (h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_EXEC)) != 0;
	if (!exec)
		return;
	for (size_t t = 0; t < h->nthreads; t++) {
		if (!(h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_FUNCTION)))
			continue;
		for (size_t k = 0; k < h->threads[t].nevents; k++) {
			const struct tfd_event *e = &h->threads[t].events[k];

			if (e->kind == TFD_EV_FUNCTION && (e->flags & TFD_EVF_ID))
				imap_put(&fn, e->id, 0);
		}
	}
	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_thread *th = &h->threads[t];
		size_t w = 0;

		if (!(th->kinds & TFD_KIND_BIT(TFD_EV_EXEC)))
			continue;
		for (size_t k = 0; k < th->nevents; k++) {
			const struct tfd_event *e = &th->events[k];

			if (e->kind == TFD_EV_EXEC &&
			    (!(e->flags & TFD_EVF_ID) || !imap_get(&fn, e->id, &dummy))) {
				h->nevents--;
				continue;
			}
			if (w != k)
				th->events[w] = *e;
			w++;
		}
		th->nevents = w;
	}
	imap_free(&fn);
}

enum tfd_status tfd_capture_finish(struct tfd_capture *cap, struct tfd_err *err)
{
	for (size_t i = 0; i < cap->nhosts; i++) {
		struct tfd_host *h = &cap->hosts[i];

		if (!h->exec_filtered)
			drop_foreign_exec(h);

		for (size_t t = 0; t < h->nthreads; t++) {
			struct tfd_thread *th = &h->threads[t];
			struct tfd_event *tmp;
			const struct host_build *b =
			    i < impl(cap)->hb.n ? &impl(cap)->hb.v[i] : NULL;
			size_t k;

			/* no room left over: the arrays grew by half, and the
			 * analysis peaks beside them */
			if (b && t < b->ncap && b->ev_cap[t] > th->nevents) {
				if (th->nevents) {
					th->events = xrealloc(th->events,
							      th->nevents * sizeof(*th->events));
				} else {
					free(th->events);
					th->events = NULL;
				}
			}
			if (th->nevents < 2 || (b && t < b->ncap && !b->unsorted[t]))
				continue; /* in order as read (TensorFlow writes lines sorted) */
			/* else check before paying for a copy */
			for (k = 1; k < th->nevents && !ev_before(&th->events[k], &th->events[k - 1]);
			     k++)
				;
			if (k == th->nevents)
				continue;
			tmp = xmalloc(th->nevents * sizeof(*tmp));
			merge_sort(th->events, tmp, th->nevents);
			free(tmp);
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
		free(h->threads[t].events);
	free(h->threads);
	free(h->planes);
	free(h->steps);
	if (cap->nhosts - 1 < impl(cap)->hb.n)
		build_release(&impl(cap)->hb.v[cap->nhosts - 1]);
	cap->nhosts--;
}
