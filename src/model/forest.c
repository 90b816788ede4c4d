/* forest.c - iterator graphs per host, call linking, aggregation.
 *
 * Iterators are keyed by their `id` stat (full 64-bit pattern). Real
 * captures also hold iterators without an id (MemoryCacheImpl has id 0) or
 * whose parent_id names no captured iterator; their parent is found by long
 * name instead (the long name minus its last component). A cycle of
 * parent ids is an error.
 *
 * Each iterator call is linked to at most one parent call, so calls form a
 * forest whose roots are the root-iterator calls:
 *   1. sync: the innermost enclosing iterator call on the same thread;
 *   2. produce: the call is inside an XxxProduce event whose element_id
 *      matches an XxxConsume inside a call of the parent iterator;
 *   3. overlap: the call of the parent iterator (any thread) that overlaps
 *      it most (Chrome JSON drops Produce/Consume, older TF never had them);
 *   4. none: no parent call overlaps: the element was produced ahead.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/passes.h"
#include "attrib.h"
#include "tfd/analysis.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/vec.h"

struct iter {
	uint64_t id;
	uint64_t parent_id;
	bool has_parent;
	const char *long_name;
	int parent;   /* iterator index, -1 */
	int stage;
	int state; /* cycle detection: 0 new, 1 on stack, 2 done */
	int64_t first_start;
	int64_t max_dur; /* longest call */
	VEC(int) calls;  /* sorted by start once all are in */
};

struct call {
	const struct tfd_event *ev;
	int iter;
	int parent; /* call index, -1 */
	int encl;   /* nearest enclosing iterator call on the thread, -1 */
	const struct tfd_event *produce; /* enclosing Produce, if that came first */
	uint8_t link;
};

struct host_ctx {
	const struct tfd_host *h;
	struct tfd_analysis *a;
	VEC(struct iter) iters;
	VEC(struct call) calls;
	struct imap by_id;
	struct imap by_name;  /* long name pointer -> the iterator without an id */
	struct imap by_lname; /* long name pointer -> last iterator with it ... */
	VEC(int) lname_next;  /* ... and the one before, per iterator */
	const struct tfd_arena *names; /* the capture's interned strings */
	int *root;            /* per iterator: its root iterator, or -1 */
	struct imap consume; /* hash(iterator id, element id) -> head in cons */
	VEC(int) cons_call;  /* consumer call index */
	VEC(uint64_t) cons_elem;
	VEC(int) cons_next;
};

static void diag(struct tfd_analysis *a, const char *host, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void diag(struct tfd_analysis *a, const char *host, const char *fmt, ...)
{
	va_list ap;
	struct tfd_diag *d;

	a->diags = xrealloc(a->diags, (a->ndiags + 1) * sizeof(*a->diags));
	d = &a->diags[a->ndiags++];
	d->host = host;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

/* ---- names ------------------------------------------------------------- */

const char *tfd_iter_short(const char *long_name)
{
	const char *p = long_name, *last = long_name;

	while ((p = strstr(p, "::")) != NULL) {
		p += 2;
		last = p;
	}
	return last;
}

int tfd_iter_parts(const char *name)
{
	int n = 1;
	const char *p = name;

	while ((p = strstr(p, "::")) != NULL) {
		p += 2;
		n++;
	}
	return n;
}

const char *tfd_iter_family(const char *short_name, char *buf, size_t len)
{
	static const struct {
		const char *from, *to;
	} alias[] = {
		{"MemoryCacheImpl", "MemoryCache"}, {"DiskCacheImpl", "DiskCache"},
		{"ForeverRepeat", "Repeat"},         {"FiniteRepeat", "Repeat"},
		{"ExperimentalParallelInterleave", "LegacyParallelInterleave"},
		{"ParallelInterleaveDataset", "ParallelInterleave"},
		{"FlatMapDataset", "FlatMap"},
	};
	size_t n = 0;

	/* copy up to a "[" (input index) */
	while (short_name[n] && short_name[n] != '[' && n + 1 < len) {
		buf[n] = short_name[n];
		n++;
	}
	buf[n] = '\0';
	/* drop a trailing V<digits> op version */
	if (n > 2) {
		size_t k = n;

		while (k > 0 && buf[k - 1] >= '0' && buf[k - 1] <= '9')
			k--;
		if (k < n && k > 1 && buf[k - 1] == 'V' && buf[k - 2] >= 'a' && buf[k - 2] <= 'z')
			buf[k - 1] = '\0';
	}
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcmp(buf, alias[i].from) == 0) {
			snprintf(buf, len, "%s", alias[i].to);
			break;
		}
	return buf;
}

bool tfd_family_is_async(const char *family)
{
	static const char *const async[] = {"Prefetch",     "ParallelInterleave",
					    "ParallelMap",  "ParseExample",
					    "MapAndBatch",  "DataService",
					    "LegacyParallelInterleave", "ParallelBatch",
					    "ParallelFilter"};

	for (size_t i = 0; i < sizeof(async) / sizeof(async[0]); i++)
		if (strcmp(family, async[i]) == 0)
			return true;
	return false;
}

bool tfd_stage_is_async_edge(const struct tfd_stage *s)
{
	/* a call not nested in its parent on the same thread ran on another one */
	size_t async = s->links[TFD_LINK_PRODUCE] + s->links[TFD_LINK_OVERLAP] +
		       s->links[TFD_LINK_NONE];

	return async > s->links[TFD_LINK_SYNC];
}

const char *tfd_bound_name(enum tfd_bound b)
{
	switch (b) {
	case TFD_BOUND_HIGH:
		return "highly";
	case TFD_BOUND_MODERATE:
		return "moderately";
	case TFD_BOUND_NOT:
		return "not";
	default:
		return "unknown";
	}
}

/* Long name without any "[N]" input index: the stage key. */
static char *strip_indices(const char *s)
{
	size_t n = strlen(s), j = 0;
	char *out = xmalloc(n + 1);

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '[') {
			size_t k = i + 1;

			while (k < n && s[k] >= '0' && s[k] <= '9')
				k++;
			if (k < n && s[k] == ']' && k > i + 1) {
				i = k;
				continue;
			}
		}
		out[j++] = s[i];
	}
	out[j] = '\0';
	return out;
}

/* Long name of the parent: drop the last component, then a trailing "[N]". */
static char *parent_long_name(const char *s)
{
	const char *last = tfd_iter_short(s);
	size_t n;
	char *out;

	if (last == s)
		return NULL;
	n = (size_t)(last - s) - 2;
	out = xmalloc(n + 1);
	memcpy(out, s, n);
	out[n] = '\0';
	if (n && out[n - 1] == ']') {
		char *b = strrchr(out, '[');

		if (b)
			*b = '\0';
	}
	return out;
}

/* ---- building the iterator table --------------------------------------- */

static uint64_t name_key(const char *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int iter_for_event(struct host_ctx *c, const struct tfd_event *e)
{
	size_t idx;
	bool by_id = (e->flags & TFD_EVF_ID) && e->id != 0;
	struct iter it;

	if (by_id) {
		if (imap_get(&c->by_id, e->id, &idx))
			return (int)idx;
	} else {
		/* no usable id: one iterator per long name */
		if (imap_get(&c->by_name, name_key(e->name), &idx))
			return (int)idx;
	}
	memset(&it, 0, sizeof(it));
	it.id = e->id;
	it.parent_id = e->parent_id;
	it.has_parent = (e->flags & TFD_EVF_PARENT) != 0;
	it.long_name = e->name;
	it.parent = -1;
	it.stage = -1;
	it.first_start = e->start_ns;
	vec_push(&c->iters, it);
	idx = c->iters.n - 1;
	if (by_id)
		imap_put(&c->by_id, e->id, idx);
	else
		imap_put(&c->by_name, name_key(e->name), idx);
	{
		size_t head;
		int next = imap_get(&c->by_lname, name_key(e->name), &head) ? (int)head : -1;

		vec_push(&c->lname_next, next);
		imap_put(&c->by_lname, name_key(e->name), idx);
	}
	return (int)idx;
}

/* Nearest enclosing events on each thread (iterator, Produce, Consume only). */
static void scan_threads(struct host_ctx *c)
{
	const struct tfd_host *h = c->h;
	VEC(const struct tfd_event *) stack = {0};
	VEC(int) stack_call = {0};

	for (size_t t = 0; t < h->nthreads; t++) {
		const struct tfd_thread *th = &h->threads[t];

		stack.n = stack_call.n = 0;
		for (size_t k = 0; k < th->nevents; k++) {
			const struct tfd_event *e = &th->events[k];
			int64_t end = e->start_ns + e->dur_ns;
			const struct tfd_event *top = NULL;
			int top_call = -1;

			if (e->kind != TFD_EV_ITERATOR && e->kind != TFD_EV_PRODUCE &&
			    e->kind != TFD_EV_CONSUME)
				continue;
			if (e->flags & TFD_EVF_ASYNC)
				continue;
			if (e->kind == TFD_EV_ITERATOR && strcmp(e->name, "Iterator") == 0)
				continue;
			while (stack.n) {
				const struct tfd_event *s = stack.v[stack.n - 1];

				if (s->start_ns <= e->start_ns && end <= s->start_ns + s->dur_ns)
					break;
				stack.n--;
				stack_call.n--;
			}
			if (stack.n) {
				top = stack.v[stack.n - 1];
				top_call = stack_call.v[stack_call.n - 1];
			}
			if (e->kind == TFD_EV_ITERATOR) {
				struct call cl;

				memset(&cl, 0, sizeof(cl));
				cl.ev = e;
				cl.iter = iter_for_event(c, e);
				cl.parent = -1;
				cl.encl = -1;
				if (top && top->kind == TFD_EV_ITERATOR)
					cl.encl = top_call;
				else if (top && top->kind == TFD_EV_PRODUCE &&
					 (top->flags & TFD_EVF_ELEMENT))
					cl.produce = top;
				vec_push(&c->calls, cl);
				vec_push(&c->iters.v[cl.iter].calls, (int)(c->calls.n - 1));
				if (e->dur_ns > c->iters.v[cl.iter].max_dur)
					c->iters.v[cl.iter].max_dur = e->dur_ns;
				if (e->start_ns < c->iters.v[cl.iter].first_start)
					c->iters.v[cl.iter].first_start = e->start_ns;
				vec_push(&stack, e);
				vec_push(&stack_call, (int)(c->calls.n - 1));
			} else if (e->kind == TFD_EV_CONSUME) {
				if (top && top->kind == TFD_EV_ITERATOR &&
				    (e->flags & TFD_EVF_ELEMENT)) {
					/* register the consumer call under (its id, element) */
					const struct call *cc = &c->calls.v[top_call];
					uint64_t key = imap_hash(c->iters.v[cc->iter].id) ^
						       (e->element_id * 0x9e3779b97f4a7c15ull);
					size_t head;
					int next = -1;

					if (imap_get(&c->consume, key, &head))
						next = (int)head;
					vec_push(&c->cons_call, top_call);
					vec_push(&c->cons_elem, e->element_id);
					vec_push(&c->cons_next, next);
					imap_put(&c->consume, key, c->cons_call.n - 1);
				}
				/* Consume events are leaves */
			} else {
				vec_push(&stack, e);
				vec_push(&stack_call, -1);
			}
		}
	}
	vec_free(&stack);
	vec_free(&stack_call);
}

static const struct host_ctx *sort_ctx;

static int call_start_cmp(const void *a, const void *b)
{
	const struct call *x = &sort_ctx->calls.v[*(const int *)a];
	const struct call *y = &sort_ctx->calls.v[*(const int *)b];

	if (x->ev->start_ns != y->ev->start_ns)
		return x->ev->start_ns < y->ev->start_ns ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

/* Each iterator's calls in start order (threads were scanned one by one). */
static void sort_calls(struct host_ctx *c)
{
	sort_ctx = c;
	for (size_t i = 0; i < c->iters.n; i++)
		if (c->iters.v[i].calls.n > 1)
			qsort(c->iters.v[i].calls.v, c->iters.v[i].calls.n, sizeof(int),
			      call_start_cmp);
	sort_ctx = NULL;
}

static enum tfd_status resolve_parents(struct host_ctx *c, size_t *by_name, size_t *orphans,
				       struct tfd_err *err)
{
	for (size_t i = 0; i < c->iters.n; i++) {
		struct iter *it = &c->iters.v[i];
		size_t idx;
		char *pn;

		if (tfd_iter_parts(it->long_name) <= 2)
			continue; /* a root: Iterator::X */
		if (it->has_parent && imap_get(&c->by_id, it->parent_id, &idx) && idx != i) {
			it->parent = (int)idx;
			continue;
		}
		/* fall back to the long name: the iterator with that name and the most
		 * calls (names are interned, so the index is keyed by pointer) */
		pn = parent_long_name(it->long_name);
		it->parent = -1;
		if (pn) {
			const char *key = tfd_arena_lookup(c->names, pn);
			size_t head;

			if (key && imap_get(&c->by_lname, name_key(key), &head))
				for (int j = (int)head; j >= 0; j = c->lname_next.v[j])
					if ((size_t)j != i &&
					    (it->parent < 0 ||
					     c->iters.v[j].calls.n > c->iters.v[it->parent].calls.n))
						it->parent = j;
			free(pn);
		}
		if (it->parent >= 0)
			(*by_name)++;
		else
			(*orphans)++;
	}
	/* cycles: follow parents with a three-colour walk */
	for (size_t i = 0; i < c->iters.n; i++) {
		int cur = (int)i;
		size_t steps = 0;

		while (cur >= 0 && c->iters.v[cur].state == 0) {
			c->iters.v[cur].state = 1;
			cur = c->iters.v[cur].parent;
			if (++steps > c->iters.n + 1)
				break;
		}
		if (cur >= 0 && c->iters.v[cur].state == 1) {
			return tfd_fail(err, TFD_E_FORMAT,
					"cycle in iterator parent ids (iterator %lld '%s')",
					(long long)c->iters.v[cur].id, c->iters.v[cur].long_name);
		}
		cur = (int)i;
		while (cur >= 0 && c->iters.v[cur].state == 1) {
			c->iters.v[cur].state = 2;
			cur = c->iters.v[cur].parent;
		}
	}
	return TFD_OK;
}

/* Root iterator of every iterator, once (parents form a forest: checked). */
static void compute_roots(struct host_ctx *c)
{
	VEC(int) path = {0};

	c->root = xmalloc((c->iters.n + 1) * sizeof(int));
	for (size_t i = 0; i < c->iters.n; i++)
		c->root[i] = -2; /* unknown */
	for (size_t i = 0; i < c->iters.n; i++) {
		int cur = (int)i, r;

		path.n = 0;
		while (cur >= 0 && c->root[cur] == -2) {
			vec_push(&path, cur);
			cur = c->iters.v[cur].parent;
		}
		if (cur >= 0)
			r = c->root[cur];
		else /* the top of the chain: a root if its name says so */
			r = tfd_iter_parts(c->iters.v[path.v[path.n - 1]].long_name) <= 2
				    ? path.v[path.n - 1]
				    : -1;
		for (size_t k = 0; k < path.n; k++)
			c->root[path.v[k]] = r;
	}
	vec_free(&path);
}

static int root_of(struct host_ctx *c, int i)
{
	return c->root[i];
}

static int64_t overlap(const struct tfd_event *a, const struct tfd_event *b)
{
	int64_t s = a->start_ns > b->start_ns ? a->start_ns : b->start_ns;
	int64_t ea = a->start_ns + a->dur_ns, eb = b->start_ns + b->dur_ns;
	int64_t e = ea < eb ? ea : eb;

	return e > s ? e - s : 0;
}

/* Better parent candidate: more overlap, then earlier start, then lower index. */
static int better(const struct host_ctx *c, const struct tfd_event *child, int cand, int best)
{
	int64_t oc, ob;

	if (best < 0)
		return 1;
	oc = overlap(child, c->calls.v[cand].ev);
	ob = overlap(child, c->calls.v[best].ev);
	if (oc != ob)
		return oc > ob;
	if (c->calls.v[cand].ev->start_ns != c->calls.v[best].ev->start_ns)
		return c->calls.v[cand].ev->start_ns < c->calls.v[best].ev->start_ns;
	return cand < best;
}

static void link_calls(struct host_ctx *c)
{
	for (size_t i = 0; i < c->calls.n; i++) {
		struct call *cl = &c->calls.v[i];
		const struct iter *it = &c->iters.v[cl->iter];
		int best = -1;

		if (it->parent < 0) {
			cl->link = TFD_LINK_NONE;
			continue;
		}
		if (cl->encl >= 0) {
			cl->parent = cl->encl;
			cl->link = TFD_LINK_SYNC;
			continue;
		}
		if (cl->produce) {
			const struct iter *p = &c->iters.v[it->parent];
			uint64_t key = imap_hash(p->id) ^
				       (cl->produce->element_id * 0x9e3779b97f4a7c15ull);
			size_t head;

			if (imap_get(&c->consume, key, &head)) {
				for (int k = (int)head; k >= 0; k = c->cons_next.v[k]) {
					int cc = c->cons_call.v[k];

					if (c->cons_elem.v[k] != cl->produce->element_id ||
					    c->calls.v[cc].iter != it->parent)
						continue;
					if (better(c, cl->ev, cc, best))
						best = cc;
				}
			}
			if (best >= 0) {
				cl->parent = best;
				cl->link = TFD_LINK_PRODUCE;
				continue;
			}
		}
		/* time overlap with a call of the parent iterator: its calls are
		 * sorted by start, so only those starting in [s - maxdur, e] qualify */
		{
			const struct iter *p = &c->iters.v[it->parent];
			int64_t s0 = cl->ev->start_ns, e0 = s0 + cl->ev->dur_ns;
			size_t lo = 0, hi = p->calls.n;

			while (lo < hi) { /* first call starting after e0 */
				size_t mid = lo + (hi - lo) / 2;

				if (c->calls.v[p->calls.v[mid]].ev->start_ns <= e0)
					lo = mid + 1;
				else
					hi = mid;
			}
			while (lo-- > 0) {
				int cc = p->calls.v[lo];

				if (c->calls.v[cc].ev->start_ns < s0 - p->max_dur)
					break;
				if (overlap(cl->ev, c->calls.v[cc].ev) > 0 && better(c, cl->ev, cc, best))
					best = cc;
			}
		}
		cl->parent = best;
		cl->link = best >= 0 ? TFD_LINK_OVERLAP : TFD_LINK_NONE;
	}
}

/* ---- pipelines and stages ---------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* A sort key and the index it belongs to; ties go to the smaller index. */
struct keyed {
	int64_t key;
	int64_t idx;
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int64_t percentile(const int64_t *sorted, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)ceil(q * (double)n);
	if (k < 1)
		k = 1;
	return sorted[k - 1];
}

struct stage_build {
	VEC(struct tfd_stage) stages;
	VEC(char *) paths; /* owned copies, parallel to stages */
	struct imap index; /* hash(parent stage, path) -> last stage with it ... */
	VEC(int) next;     /* ... and the one before, per stage */
};

static uint64_t stage_key(int parent, const char *path)
{
	uint64_t h = 1469598103934665603ull;

	for (const char *q = path; *q; q++)
		h = (h ^ (unsigned char)*q) * 1099511628211ull;
	return imap_hash(h ^ (uint64_t)(int64_t)parent);
}

static int stage_for(struct host_ctx *c, struct stage_build *sb, int iter, int depth_guard)
{
	struct iter *it = &c->iters.v[iter];
	char *path;
	int parent_stage = -1;
	struct tfd_stage st;
	char fam[128];
	uint64_t key;
	size_t head;

	if (it->stage >= 0)
		return it->stage;
	if (it->parent >= 0 && depth_guard < 10000)
		parent_stage = stage_for(c, sb, it->parent, depth_guard + 1);
	path = strip_indices(it->long_name);
	key = stage_key(parent_stage, path);
	if (imap_get(&sb->index, key, &head))
		for (int s = (int)head; s >= 0; s = sb->next.v[s])
			if (sb->stages.v[s].parent == parent_stage && strcmp(sb->paths.v[s], path) == 0) {
				free(path);
				it->stage = s;
				sb->stages.v[s].niterators++;
				return it->stage;
			}
	memset(&st, 0, sizeof(st));
	st.long_name = it->long_name;
	st.name = tfd_iter_short(it->long_name);
	st.parent = parent_stage;
	st.depth = parent_stage >= 0 ? sb->stages.v[parent_stage].depth + 1 : 0;
	tfd_iter_family(st.name, fam, sizeof(fam));
	st.family = NULL; /* set when the pipeline is finished (needs stable storage) */
	st.is_async = tfd_family_is_async(fam);
	st.is_device_generator = strcmp(it->long_name, "Iterator::Prefetch::Generator") == 0;
	st.niterators = 1;
	vec_push(&sb->stages, st);
	vec_push(&sb->paths, path);
	vec_push(&sb->next, imap_get(&sb->index, key, &head) ? (int)head : -1);
	it->stage = (int)(sb->stages.n - 1);
	imap_put(&sb->index, key, (size_t)it->stage);
	return it->stage;
}

struct analysis_priv {
	VEC(char *) strings; /* owned strings referenced by stages */
};

static const char *keep_string(struct analysis_priv *pv, const char *s)
{
	char *d = xstrdup(s);

	vec_push(&pv->strings, d);
	return d;
}

/* Pre-order of the stage tree, children by first appearance (iterative:
 * hostile captures can chain thousands of stages). */
static void stage_order(const struct tfd_stage *st, size_t n, int root, int *order, size_t *k)
{
	int *first = xmalloc((n + 1) * sizeof(int)), *next = xmalloc((n + 1) * sizeof(int));
	int *last = xmalloc((n + 1) * sizeof(int));
	VEC(int) stack = {0};

	for (size_t i = 0; i < n; i++)
		first[i] = last[i] = next[i] = -1;
	for (size_t i = 0; i < n; i++) {
		int p = st[i].parent;

		if (p < 0)
			continue;
		if (last[p] < 0)
			first[p] = (int)i;
		else
			next[last[p]] = (int)i;
		last[p] = (int)i;
	}
	vec_push(&stack, root);
	while (stack.n) {
		int x = stack.v[--stack.n];
		size_t mark = stack.n;

		order[(*k)++] = x;
		for (int ch = first[x]; ch >= 0; ch = next[ch])
			vec_push(&stack, ch);
		/* reverse the children just pushed so the first is visited first */
		for (size_t a = mark, b = stack.n; a + 1 < b; a++, b--) {
			int t = stack.v[a];

			stack.v[a] = stack.v[b - 1];
			stack.v[b - 1] = t;
		}
	}
	vec_free(&stack);
	free(first);
	free(next);
	free(last);
}

/* Feed the capacity pass the pipeline's calls with their final stage indices. */
static void capacity_pass(struct host_ctx *c, struct tfd_pipeline *p, const int *pcalls,
			  size_t ncalls, const int *inv, const int64_t *start, const int64_t *end,
			  const int64_t *self, const int *roots, size_t nroots, size_t nwarmup)
{
	struct tfd_cap_calls in;
	int *stage = xmalloc((ncalls + 1) * sizeof(int));
	uint32_t *thread = xmalloc((ncalls + 1) * sizeof(uint32_t));

	for (size_t k = 0; k < ncalls; k++) {
		const struct call *cl = &c->calls.v[pcalls[k]];
		int s = c->iters.v[cl->iter].stage;

		stage[k] = s >= 0 ? inv[s] : -1;
		thread[k] = cl->ev->thread;
	}
	memset(&in, 0, sizeof(in));
	in.host = c->h;
	in.n = ncalls;
	in.stage = stage;
	in.thread = thread;
	in.start = start;
	in.end = end;
	in.self = self;
	in.roots = roots;
	in.nroots = nroots;
	in.nwarmup = nwarmup;
	tfd_capacity_compute(p, &in);
	free(stage);
	free(thread);
}

/* The iterators and calls of one pipeline, in index order. */
struct bucket {
	const int *iters, *calls;
	size_t niters, ncalls;
};

/* map: per host call, its index in the pipeline being built; -1 on entry
 * and on return. */
static enum tfd_status build_pipeline(struct host_ctx *c, int root_iter, const struct bucket *bk,
				      int *map, struct tfd_pipeline *p, struct analysis_priv *pv,
				      const struct tfd_analyze_opts *opts, struct tfd_err *err)
{
	struct stage_build sb = {0};
	VEC(int) pcalls = {0}; /* calls of this pipeline */
	VEC(int) roots = {0};
	int *order = NULL, *inv = NULL;
	int64_t *start = NULL, *end = NULL, *self = NULL, *blk = NULL, *durs = NULL;
	int *parent = NULL;
	bool *selected = NULL;
	struct tfd_tree tree;
	VEC(int) ef = {0};
	VEC(int) et = {0};
	enum tfd_status st = TFD_OK;
	size_t n;

	memset(&tree, 0, sizeof(tree));
	p->root_id = c->iters.v[root_iter].id;
	p->bottleneck = -1;
	p->slowest_bottleneck = -1;
	/* stages: root first, then every iterator whose root is root_iter */
	stage_for(c, &sb, root_iter, 0);
	for (size_t i = 0; i < bk->niters; i++)
		stage_for(c, &sb, bk->iters[i], 0);
	/* calls of the pipeline, as local indices */
	for (size_t i = 0; i < bk->ncalls; i++) {
		int k = bk->calls[i];

		if (c->iters.v[c->calls.v[k].iter].stage >= 0) {
			map[k] = (int)pcalls.n;
			vec_push(&pcalls, k);
		}
	}
	n = pcalls.n;
	start = xmalloc((n + 1) * sizeof(int64_t));
	end = xmalloc((n + 1) * sizeof(int64_t));
	self = xcalloc(n + 1, sizeof(int64_t));
	blk = xcalloc(n + 1, sizeof(int64_t));
	parent = xmalloc((n + 1) * sizeof(int));
	for (size_t k = 0; k < n; k++) {
		const struct call *cl = &c->calls.v[pcalls.v[k]];
		int pc = cl->parent >= 0 ? map[cl->parent] : -1;

		start[k] = cl->ev->start_ns;
		end[k] = cl->ev->start_ns + cl->ev->dur_ns;
		parent[k] = pc;
		if (cl->iter == root_iter) {
			parent[k] = -1;
			vec_push(&roots, (int)k);
		} else {
			p->links[cl->link]++;
		}
	}
	tfd_tree_build(&tree, n, start, end, parent);

	/* root-call statistics (roots are in thread order; sort by start) */
	{
		struct keyed *kv = xmalloc((roots.n + 1) * sizeof(*kv));

		for (size_t i = 0; i < roots.n; i++)
			kv[i] = (struct keyed){start[roots.v[i]], roots.v[i]};
		if (roots.n > 1)
			qsort(kv, roots.n, sizeof(*kv), keyed_cmp);
		for (size_t i = 0; i < roots.n; i++)
			roots.v[i] = (int)kv[i].idx;
		free(kv);
	}
	p->ncalls = roots.n;
	durs = xmalloc((roots.n + 1) * sizeof(int64_t));
	selected = xcalloc(roots.n + 1, sizeof(bool));
	for (size_t i = 0; i < roots.n; i++) {
		int64_t d = end[roots.v[i]] - start[roots.v[i]];

		durs[i] = d;
		p->total_ns = sat_add(p->total_ns, d);
		p->nslow += d > TFD_SLOW_CALL_NS;
	}
	if (roots.n) {
		int64_t *sorted = xmalloc(roots.n * sizeof(int64_t)), med;

		memcpy(sorted, durs, roots.n * sizeof(int64_t));
		qsort(sorted, roots.n, sizeof(int64_t), cmp_i64);
		p->min_ns = sorted[0];
		p->max_ns = sorted[roots.n - 1];
		p->avg_ns = p->total_ns / (int64_t)roots.n;
		p->p50_ns = percentile(sorted, roots.n, 0.5);
		p->p95_ns = percentile(sorted, roots.n, 0.95);
		p->first_start_ns = start[roots.v[0]];
		med = p->p50_ns;
		/* warm-up: leading calls (at most 10 %) more than twice the median,
		 * e.g. the first GetNext that fills a shuffle buffer or opens files */
		if (!opts->no_warmup && roots.n >= 4) {
			size_t limit = (roots.n + 9) / 10;

			while (p->nwarmup < limit && durs[p->nwarmup] > 2 * med)
				p->nwarmup++;
		}
		free(sorted);
		p->analyzed_rank = -1;
		if (opts->rank_set) {
			/* rank r: the r-th slowest call, ties in time order (the
			 * key is -duration, then the call's place in time) */
			size_t pick = 0;
			struct keyed *byslow = xmalloc((roots.n + 1) * sizeof(*byslow));

			for (size_t i = 0; i < roots.n; i++)
				byslow[i] = (struct keyed){-durs[i], (int64_t)i};
			if (roots.n > 1)
				qsort(byslow, roots.n, sizeof(*byslow), keyed_cmp);
			if (opts->rank >= 0 && (size_t)opts->rank < roots.n) {
				pick = (size_t)byslow[opts->rank].idx;
				selected[pick] = true;
				p->analyzed_rank = opts->rank;
				p->analyzed_slow_only = durs[pick] > TFD_SLOW_CALL_NS;
			}
			p->nwarmup = 0;
			free(byslow);
		} else {
			for (size_t i = p->nwarmup; i < roots.n; i++)
				if (durs[i] > TFD_SLOW_CALL_NS) {
					selected[i] = true;
					p->analyzed_slow_only = true;
				}
			if (!p->analyzed_slow_only)
				for (size_t i = p->nwarmup; i < roots.n; i++)
					selected[i] = true;
		}
	}

	/* attribution per root call; calls outside every root call keep
	 * self time only */
	for (size_t r = 0; r < roots.n; r++)
		tfd_tree_attribute(&tree, roots.v[r], self, blk);
	{
		/* which root call (if any) owns each call: walk up */
		int *owner = xmalloc((n + 1) * sizeof(int));
		int *root_rank = xmalloc((n + 1) * sizeof(int));
		int64_t best_call_blk = -1;
		int slowest = -1;
		int64_t *slow_blk = xcalloc(sb.stages.n + 1, sizeof(int64_t));

		for (size_t k = 0; k < n; k++)
			root_rank[k] = -1;
		for (size_t r = 0; r < roots.n; r++)
			root_rank[roots.v[r]] = (int)r;
		for (size_t k = 0; k < n; k++) {
			int x = (int)k, guard = 0;

			while (parent[x] >= 0 && guard++ < TFD_MAX_CALL_DEPTH + 5)
				x = parent[x];
			owner[k] = root_rank[x];
		}
		for (size_t r = 0; r < roots.n; r++)
			if (slowest < 0 || durs[r] > durs[slowest])
				slowest = (int)r;
		for (size_t k = 0; k < n; k++) {
			const struct call *cl = &c->calls.v[pcalls.v[k]];
			struct tfd_stage *s = &sb.stages.v[c->iters.v[cl->iter].stage];
			int64_t d = end[k] - start[k];

			if (owner[k] < 0)
				self[k] = tfd_tree_self(&tree, (int)k);
			s->calls_all++;
			s->total_all_ns = sat_add(s->total_all_ns, d);
			if (cl->iter != root_iter)
				s->links[cl->link]++;
			if (!s->sample)
				s->sample = cl->ev;
			if (owner[k] >= 0 && selected[owner[k]]) {
				s->calls++;
				s->total_ns = sat_add(s->total_ns, d);
				s->self_ns = sat_add(s->self_ns, self[k]);
				s->blocking_ns = sat_add(s->blocking_ns, blk[k]);
				s->blocking_calls += blk[k] > 0;
				/* observed edge for the critical-path graph */
				if (parent[k] >= 0 && blk[k] > 0) {
					const struct call *pcl = &c->calls.v[pcalls.v[parent[k]]];

					vec_push(&ef, c->iters.v[pcl->iter].stage);
					vec_push(&et, c->iters.v[cl->iter].stage);
				}
			}
			if (owner[k] == slowest)
				slow_blk[c->iters.v[cl->iter].stage] =
					sat_add(slow_blk[c->iters.v[cl->iter].stage], blk[k]);
		}
		for (size_t k = 0; k < n; k++) {
			const struct call *cl = &c->calls.v[pcalls.v[k]];

			sb.stages.v[c->iters.v[cl->iter].stage].self_all_ns =
				sat_add(sb.stages.v[c->iters.v[cl->iter].stage].self_all_ns, self[k]);
		}
		for (size_t r = 0; r < roots.n; r++)
			if (selected[r]) {
				p->nanalyzed++;
				p->analyzed_ns = sat_add(p->analyzed_ns, durs[r]);
			}
		for (size_t s = 0; s < sb.stages.n; s++)
			if (slow_blk[s] > best_call_blk) {
				best_call_blk = slow_blk[s];
				p->slowest_bottleneck = (int)s;
			}
		if (best_call_blk <= 0)
			p->slowest_bottleneck = -1;
		free(slow_blk);
		free(owner);
		free(root_rank);
	}

	/* order stages (pre-order) and finish them */
	order = xmalloc((sb.stages.n + 1) * sizeof(int));
	inv = xmalloc((sb.stages.n + 1) * sizeof(int));
	{
		size_t k = 0;

		stage_order(sb.stages.v, sb.stages.n, 0, order, &k);
		for (size_t i = 0; i < sb.stages.n; i++) {
			bool seen = false;

			for (size_t j = 0; j < k; j++)
				seen |= order[j] == (int)i;
			if (!seen)
				order[k++] = (int)i;
		}
	}
	for (size_t i = 0; i < sb.stages.n; i++)
		inv[order[i]] = (int)i;
	p->nstages = sb.stages.n;
	p->stages = xcalloc(sb.stages.n + 1, sizeof(*p->stages));
	for (size_t i = 0; i < sb.stages.n; i++) {
		struct tfd_stage *s = &p->stages[i];
		char fam[128];

		*s = sb.stages.v[order[i]];
		if (s->parent >= 0)
			s->parent = inv[s->parent];
		s->path = keep_string(pv, sb.paths.v[order[i]]);
		s->family = keep_string(pv, tfd_iter_family(s->name, fam, sizeof(fam)));
		s->blocking_share = p->analyzed_ns ? (double)s->blocking_ns / (double)p->analyzed_ns
						   : 0.0;
	}
	if (p->slowest_bottleneck >= 0)
		p->slowest_bottleneck = inv[p->slowest_bottleneck];
	for (size_t i = 0; i < ef.n; i++) {
		ef.v[i] = inv[ef.v[i]];
		et.v[i] = inv[et.v[i]];
	}
	/* latency view: most blocking time; ties to the shallower, then earlier stage */
	{
		int64_t best = 0;
		double sum = 0;

		for (size_t i = 0; i < p->nstages; i++) {
			sum += p->stages[i].blocking_share;
			if (p->stages[i].blocking_ns > best) {
				best = p->stages[i].blocking_ns;
				p->bottleneck = (int)i;
			}
		}
		p->unattributed_share = p->analyzed_ns ? 1.0 - sum : 0.0;
	}
	p->latency_bottleneck = p->bottleneck;
	if (p->bottleneck >= 0) {
		st = tfd_critpath_compute(p, ef.v, et.v, ef.n, p->bottleneck, err);
		if (st)
			goto out;
		for (size_t i = 0; i < p->ncritpath; i++)
			p->stages[p->critpath[i]].on_critical_path = true;
	}
	/* throughput view: the capacity model names the stage whose speed-up
	 * raises throughput; without enough steady-state calls the latency
	 * view stands */
	capacity_pass(c, p, pcalls.v, pcalls.n, inv, start, end, self, roots.v, roots.n,
		      opts->rank_set ? 0 : p->nwarmup);
	if (p->capacity.valid && p->capacity.limiter >= 0 &&
	    p->segments[p->capacity.limiter].top_stage >= 0)
		p->bottleneck = p->segments[p->capacity.limiter].top_stage;
	if (p->bottleneck >= 0)
		p->stages[p->bottleneck].is_bottleneck = true;
out:
	tfd_tree_release(&tree);
	for (size_t i = 0; i < sb.paths.n; i++)
		free(sb.paths.v[i]);
	vec_free(&sb.paths);
	vec_free(&sb.stages);
	vec_free(&sb.next);
	imap_free(&sb.index);
	vec_free(&roots);
	vec_free(&ef);
	vec_free(&et);
	for (size_t i = 0; i < pcalls.n; i++)
		map[pcalls.v[i]] = -1;
	vec_free(&pcalls);
	free(order);
	free(inv);
	free(start);
	free(end);
	free(self);
	free(blk);
	free(parent);
	free(durs);
	free(selected);
	return st;
}

/* ---- per host ----------------------------------------------------------- */

struct root_sort {
	struct host_ctx *c;
	int idx;
};

static int root_cmp(const void *a, const void *b)
{
	const struct root_sort *x = a, *y = b;
	const struct iter *ix = &x->c->iters.v[x->idx], *iy = &y->c->iters.v[y->idx];

	if (ix->first_start != iy->first_start)
		return ix->first_start < iy->first_start ? -1 : 1;
	if (ix->id != iy->id)
		return ix->id < iy->id ? -1 : 1;
	return x->idx - y->idx;
}

static enum tfd_status analyze_host(const struct tfd_capture *cap, const struct tfd_host *h,
				    struct tfd_host_result *hr,
				    struct tfd_analysis *a, struct analysis_priv *pv,
				    const struct tfd_analyze_opts *opts, struct tfd_err *err)
{
	struct host_ctx c;
	size_t by_name = 0, orphans = 0, nroots = 0, nhost = 0, ndev = 0;
	struct root_sort *rs = NULL;
	bool *is_dev = NULL;
	int *slot = NULL, *ilist = NULL, *clist = NULL, *map = NULL;
	size_t *ioff = NULL, *coff = NULL;
	struct bucket bk;
	enum tfd_status st;

	memset(&c, 0, sizeof(c));
	c.h = h;
	c.a = a;
	hr->host = h;
	hr->focus = -1;
	tfd_share_compute(h, hr);
	c.names = &cap->arena;
	scan_threads(&c);
	sort_calls(&c);
	st = resolve_parents(&c, &by_name, &orphans, err);
	if (st)
		goto out;
	compute_roots(&c);
	if (by_name)
		diag(a, h->name, "%zu iterator(s) linked by long name (parent_id missing or "
				 "dangling)", by_name);
	if (orphans)
		diag(a, h->name, "%zu iterator(s) with no known parent ignored", orphans);
	link_calls(&c);
	for (size_t i = 0; i < c.iters.n; i++)
		if (tfd_iter_parts(c.iters.v[i].long_name) <= 2 && c.iters.v[i].calls.n)
			nroots++;
	rs = xcalloc(nroots + 1, sizeof(*rs));
	is_dev = xcalloc(nroots + 1, sizeof(bool));
	nroots = 0;
	for (size_t i = 0; i < c.iters.n; i++)
		if (tfd_iter_parts(c.iters.v[i].long_name) <= 2 && c.iters.v[i].calls.n)
			rs[nroots++] = (struct root_sort){&c, (int)i};
	if (nroots > 1)
		qsort(rs, nroots, sizeof(*rs), root_cmp);
	/* each iterator's pipeline (its root's place in rs) */
	slot = xmalloc((c.iters.n + 1) * sizeof(int));
	for (size_t i = 0; i < c.iters.n; i++)
		slot[i] = -1;
	for (size_t r = 0; r < nroots; r++)
		slot[rs[r].idx] = (int)r;
	for (size_t i = 0; i < c.iters.n; i++)
		slot[i] = root_of(&c, (int)i) >= 0 ? slot[root_of(&c, (int)i)] : -1;
	/* XProf: a root is a device pipeline if an Iterator::Prefetch::Generator
	 * names it as parent */
	for (size_t i = 0; i < c.iters.n; i++) {
		int pa = c.iters.v[i].parent;

		if (pa >= 0 && slot[pa] >= 0 && rs[slot[pa]].idx == pa &&
		    strcmp(c.iters.v[i].long_name, "Iterator::Prefetch::Generator") == 0)
			is_dev[slot[pa]] = true;
	}
	/* bucket iterators and calls by pipeline (counting sort keeps index order),
	 * so building a pipeline costs its own size, not the host's */
	ioff = xcalloc(nroots + 2, sizeof(size_t));
	coff = xcalloc(nroots + 2, sizeof(size_t));
	ilist = xmalloc((c.iters.n + 1) * sizeof(int));
	clist = xmalloc((c.calls.n + 1) * sizeof(int));
	map = xmalloc((c.calls.n + 1) * sizeof(int));
	for (size_t i = 0; i < c.iters.n; i++)
		if (slot[i] >= 0)
			ioff[slot[i] + 1]++;
	for (size_t k = 0; k < c.calls.n; k++) {
		map[k] = -1;
		if (slot[c.calls.v[k].iter] >= 0)
			coff[slot[c.calls.v[k].iter] + 1]++;
	}
	for (size_t r = 0; r < nroots; r++) {
		ioff[r + 1] += ioff[r];
		coff[r + 1] += coff[r];
	}
	{
		size_t *ifill = xcalloc(nroots + 1, sizeof(size_t));
		size_t *cfill = xcalloc(nroots + 1, sizeof(size_t));

		for (size_t i = 0; i < c.iters.n; i++)
			if (slot[i] >= 0)
				ilist[ioff[slot[i]] + ifill[slot[i]]++] = (int)i;
		for (size_t k = 0; k < c.calls.n; k++) {
			int r = slot[c.calls.v[k].iter];

			if (r >= 0)
				clist[coff[r] + cfill[r]++] = (int)k;
		}
		free(ifill);
		free(cfill);
	}
	hr->pipelines = xcalloc(nroots + 1, sizeof(*hr->pipelines));
	/* host pipelines first, then device pipelines, each by first call */
	for (int pass = 0; pass < 2; pass++)
		for (size_t r = 0; r < nroots; r++) {
			struct tfd_pipeline *p;

			if (is_dev[r] != (pass == 1))
				continue;
			p = &hr->pipelines[hr->npipelines++];
			p->is_device = is_dev[r];
			snprintf(p->name, sizeof(p->name), "%s:%zu", is_dev[r] ? "Device" : "Host",
				 is_dev[r] ? ndev++ : nhost++);
			bk.iters = ilist + ioff[r];
			bk.niters = ioff[r + 1] - ioff[r];
			bk.calls = clist + coff[r];
			bk.ncalls = coff[r + 1] - coff[r];
			st = build_pipeline(&c, rs[r].idx, &bk, map, p, pv, opts, err);
			if (st)
				goto out;
		}
	hr->nhost_pipelines = nhost;
	for (size_t i = 0; i < hr->npipelines; i++) {
		const struct tfd_pipeline *p = &hr->pipelines[i];

		if (!p->is_device && p->max_ns > hr->max_latency_ns)
			hr->max_latency_ns = p->max_ns;
		if (p->is_device)
			continue;
		if (hr->focus < 0 || p->max_ns > hr->pipelines[hr->focus].max_ns)
			hr->focus = (int)i;
	}
	if (hr->focus < 0 && hr->npipelines)
		hr->focus = 0;
	if (c.calls.n && h->nproduce == 0 && h->format == TFD_FMT_XSPACE)
		diag(a, h->name, "no Produce/Consume events: threads linked by parent_id and "
				 "time overlap");
out:
	for (size_t i = 0; i < c.iters.n; i++)
		vec_free(&c.iters.v[i].calls);
	vec_free(&c.iters);
	vec_free(&c.calls);
	imap_free(&c.by_id);
	imap_free(&c.by_name);
	imap_free(&c.by_lname);
	vec_free(&c.lname_next);
	free(c.root);
	imap_free(&c.consume);
	vec_free(&c.cons_call);
	vec_free(&c.cons_elem);
	vec_free(&c.cons_next);
	free(rs);
	free(is_dev);
	free(slot);
	free(ioff);
	free(coff);
	free(ilist);
	free(clist);
	free(map);
	return st;
}

static int host_rank_cmp(const void *a, const void *b)
{
	const struct tfd_host_result *x = a, *y = b;
	bool kx = !isnan(x->input_pct), ky = !isnan(y->input_pct);

	if (kx != ky)
		return kx ? -1 : 1;
	if (kx && x->input_pct != y->input_pct)
		return x->input_pct > y->input_pct ? -1 : 1;
	if (x->max_latency_ns != y->max_latency_ns)
		return x->max_latency_ns > y->max_latency_ns ? -1 : 1;
	return strcmp(x->host->name, y->host->name);
}

enum tfd_status tfd_analyze(const struct tfd_capture *cap, const struct tfd_analyze_opts *opts,
			    struct tfd_analysis **out, struct tfd_err *err)
{
	struct tfd_analysis *a = xcalloc(1, sizeof(*a));
	struct analysis_priv *pv = xcalloc(1, sizeof(*pv));
	struct tfd_analyze_opts defaults = {0};
	enum tfd_status st = TFD_OK;

	if (!opts)
		opts = &defaults;
	*out = NULL;
	a->hosts = xcalloc(cap->nhosts + 1, sizeof(*a->hosts));
	/* the private string list hangs off the last diag slot's owner */
	a->nhosts = 0;
	for (size_t i = 0; i < cap->nhosts; i++) {
		st = analyze_host(cap, &cap->hosts[i], &a->hosts[a->nhosts], a, pv, opts, err);
		a->nhosts++;
		if (st) {
			tfd_err_prefix(err, "%s", cap->hosts[i].path);
			goto out;
		}
		if (!cap->hosts[i].has_host_plane)
			diag(a, cap->hosts[i].name, "no /host:CPU plane in this capture");
	}
	qsort(a->hosts, a->nhosts, sizeof(*a->hosts), host_rank_cmp);
	if (opts->host) {
		size_t k;

		for (k = 0; k < a->nhosts; k++)
			if (strcmp(a->hosts[k].host->name, opts->host) == 0)
				break;
		if (k == a->nhosts) {
			st = tfd_fail(err, TFD_E_USAGE, "no host named '%s' in the capture",
				      opts->host);
			goto out;
		}
		if (k) {
			struct tfd_host_result tmp = a->hosts[k];

			memmove(a->hosts + 1, a->hosts, k * sizeof(*a->hosts));
			a->hosts[0] = tmp;
		}
	}
	for (size_t i = 0; i < a->nhosts; i++)
		a->any_tfdata |= a->hosts[i].npipelines > 0;
	if (a->nhosts) {
		const struct tfd_host_result *f = &a->hosts[0];

		a->input_bound = f->bound == TFD_BOUND_HIGH || f->bound == TFD_BOUND_MODERATE ||
				 (f->bound == TFD_BOUND_UNKNOWN && f->max_latency_ns > TFD_SLOW_CALL_NS);
	}
out:
	a->priv = pv;
	if (st) {
		tfd_analysis_free(a);
		return st;
	}
	*out = a;
	return TFD_OK;
}

void tfd_analysis_free(struct tfd_analysis *a)
{
	struct analysis_priv *pv;

	if (!a)
		return;
	for (size_t i = 0; i < a->nhosts; i++) {
		for (size_t p = 0; p < a->hosts[i].npipelines; p++) {
			free(a->hosts[i].pipelines[p].stages);
			free(a->hosts[i].pipelines[p].critpath);
			free(a->hosts[i].pipelines[p].segments);
		}
		free(a->hosts[i].pipelines);
		free(a->hosts[i].step_waits);
	}
	free(a->hosts);
	free(a->diags);
	pv = a->priv;
	if (pv) {
		for (size_t i = 0; i < pv->strings.n; i++)
			free(pv->strings.v[i]);
		vec_free(&pv->strings);
		free(pv);
	}
	free(a);
}
