/* attrib.c - per-call self time and blocking-time attribution.
 *
 * Self time: a call's duration less the union of its children's spans,
 * each clipped to the call (never negative, overlaps counted once).
 * Blocking time: each instant of a root call is owned by one call: the
 * deepest call covering it along the chain of children that end last.
 */
#include <stdlib.h>
#include <string.h>

#include "attrib.h"
#include "tfd/analysis.h"
#include "tfd/err.h"
#include "tfd/graph.h"
#include "tfd/pool.h"
#include "tfd/vec.h"

struct iv {
	int64_t s, e;
	int who;
};

static int iv_cmp(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e > y->e ? -1 : 1;
	return x->who - y->who;
}

static int own_cmp(const void *a, const void *b)
{
	const struct iv *x = a, *y = b;

	if (x->who != y->who)
		return x->who - y->who;
	return x->s < y->s ? -1 : x->s > y->s;
}

/* qsort(), unless v is in order already (a call's children on its own
 * thread are, and most calls have no others): both comparisons are total
 * orders, so the result is the same. */
static void sort_ivs(struct iv *v, size_t n, int (*cmp)(const void *, const void *))
{
	size_t i = 1;

	while (i < n && cmp(&v[i - 1], &v[i]) < 0)
		i++;
	if (i < n)
		qsort(v, n, sizeof(*v), cmp);
}

/* A node's children, one at a time (either form of the tree). */
struct kids {
	const struct tfd_tree *t;
	int node;
	size_t j, end; /* listed: kids[j..end); scanned: the next call to look at, its run's end */
	size_t f;      /* scanned: the next far pair, nfar for none */
	int64_t until; /* scanned: the node's end */
};

/* The run call k is in: the first whose end is past k. */
static size_t run_at(const struct tfd_tree *t, size_t k)
{
	size_t lo = 0, hi = t->nruns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->run_ends[mid] <= k)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The end of call k's run: the first call after it on another thread. */
static size_t run_end(const struct tfd_tree *t, size_t k)
{
	return t->run_ends[run_at(t, k)];
}

/* Whether node has children outside its window (far pairs; scanned form). */
static inline bool has_far(const struct tfd_tree *t, int node)
{
	return t->has_far[(size_t)node / 64] >> ((size_t)node % 64) & 1;
}

static inline void kids_begin(struct kids *it, const struct tfd_tree *t, int node, int64_t until)
{
	*it = (struct kids){.t = t, .node = node};
	if (t->kid_off) {
		it->j = (size_t)t->kid_off[node];
		it->end = (size_t)t->kid_off[node + 1];
		return;
	}
	it->j = (size_t)node + 1;
	it->end = run_end(t, (size_t)node);
	it->until = until;
	it->f = t->nfar;
	if (has_far(t, node)) {
		size_t lo = 0, hi = t->nfar;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (t->far[2 * mid] < node)
				lo = mid + 1;
			else
				hi = mid;
		}
		it->f = lo;
	}
}

/* The next child, -1 after the last. The window of a node: the calls
 * after it in its run up to the first that starts after its end. */
static inline int kids_next(struct kids *it)
{
	const struct tfd_tree *t = it->t;

	if (t->kid_off)
		return it->j < it->end ? t->kids[it->j++] : -1;
	while (it->j < it->end) {
		size_t j = it->j++;

		if (tfd_times_start(&t->tm, j) > it->until) {
			it->end = j;
			break;
		}
		if (t->calls[j].parent == it->node)
			return (int)j;
	}
	if (it->f < t->nfar && t->far[2 * it->f] == it->node) {
		it->f++;
		return t->far[2 * it->f - 1];
	}
	return -1;
}

/* Whether node has no child, known without its window's scan: listed, an
 * empty list; scanned, no far child and no call after it starting within
 * it (most calls: the leaves). */
static inline bool no_kids(const struct tfd_tree *t, int node, int64_t end)
{
	if (t->kid_off)
		return t->kid_off[node] == t->kid_off[node + 1];
	return !has_far(t, node) &&
	       ((size_t)node + 1 >= t->n || tfd_times_start(&t->tm, (size_t)node + 1) > end);
}

int64_t tfd_tree_self(const struct tfd_tree *t, int node)
{
	int64_t s0 = tfd_times_start(&t->tm, (size_t)node),
		e0 = tfd_times_end(&t->tm, (size_t)node), covered = 0, cs = 0, ce = 0;
	struct iv few[16], *v = few;
	size_t n = 0, cap = sizeof(few) / sizeof(few[0]);
	struct kids it;
	int started = 0;

	if (no_kids(t, node, e0))
		return e0 - s0;
	kids_begin(&it, t, node, e0);
	for (int c; (c = kids_next(&it)) >= 0;) {
		int64_t cs0 = tfd_times_start(&t->tm, (size_t)c), a = cs0 > s0 ? cs0 : s0;
		int64_t end = tfd_times_end(&t->tm, (size_t)c), b = end < e0 ? end : e0;

		if (a >= b)
			continue;
		if (n == cap) {
			struct iv *w = xmalloc(2 * cap * sizeof(*v));

			memcpy(w, v, n * sizeof(*v));
			if (v != few)
				free(v);
			v = w;
			cap *= 2;
		}
		v[n++] = (struct iv){a, b, c};
	}
	if (!n) {
		if (v != few)
			free(v);
		return e0 - s0;
	}
	sort_ivs(v, n, iv_cmp);
	for (size_t i = 0; i < n; i++) {
		if (!started || v[i].s > ce) {
			if (started)
				covered += ce - cs;
			cs = v[i].s;
			ce = v[i].e;
			started = 1;
		} else if (v[i].e > ce) {
			ce = v[i].e;
		}
	}
	if (started)
		covered += ce - cs;
	if (v != few)
		free(v);
	return (e0 - s0) - covered;
}

/* attribute()'s working room, shared down the recursion: a node's
 * children's clipped spans (kids, used up before it recurses) and the
 * spans each node hands its children (owned, a stack: a node's stay below
 * what its descendants push). One allocation each, however many calls,
 * where each call had grown two arrays of its own. */
struct attr_scratch {
	VEC(struct iv) kids;
	VEC(struct iv) owned;
};

/* Distribute the segments owned[seg0 .. seg0 + nsegs) of the scratch
 * (owned by node) among node and its children; recurse into children that
 * received time. The segments are read by offset: the stack grows, and may
 * move, while they are read. */
static void attribute(const struct tfd_tree *t, int node, struct attr_scratch *sc, size_t seg0,
		      size_t nsegs, int depth, tfd_blocking_fn add, void *ctx)
{
	struct kids first;
	int64_t own = 0, end0 = tfd_times_end(&t->tm, (size_t)node);
	size_t base = sc->owned.n;

	if (depth > TFD_MAX_CALL_DEPTH || no_kids(t, node, end0)) {
		/* every instant its own */
		for (size_t i = 0; i < nsegs; i++)
			own += sc->owned.v[seg0 + i].e - sc->owned.v[seg0 + i].s;
		add(ctx, node, own);
		return;
	}
	kids_begin(&first, t, node, end0);
	for (size_t si = 0; si < nsegs; si++) {
		int64_t lo = sc->owned.v[seg0 + si].s, hi = sc->owned.v[seg0 + si].e, cur = lo;
		size_t i = 0;
		int best = -1;
		struct kids it = first;
		const struct iv *kv;
		size_t kn;

		sc->kids.n = 0;
		for (int c; (c = kids_next(&it)) >= 0;) {
			int64_t cs0 = tfd_times_start(&t->tm, (size_t)c), a = cs0 > lo ? cs0 : lo;
			int64_t end = tfd_times_end(&t->tm, (size_t)c), b = end < hi ? end : hi;

			if (a < b)
				vec_push(&sc->kids, ((struct iv){a, b, c}));
		}
		sort_ivs(sc->kids.v, sc->kids.n, iv_cmp);
		kv = sc->kids.v;
		kn = sc->kids.n;
		while (cur < hi) {
			while (i < kn && kv[i].s <= cur) {
				if (best < 0 || kv[i].e > kv[best].e)
					best = (int)i;
				i++;
			}
			if (best >= 0 && kv[best].e > cur) {
				int64_t end = kv[best].e;

				/* a later child that outlasts best takes over where it starts */
				for (size_t j = i; j < kn && kv[j].s < end; j++)
					if (kv[j].e > end) {
						end = kv[j].s;
						break;
					}
				if (end > cur)
					vec_push(&sc->owned, ((struct iv){cur, end, kv[best].who}));
				cur = end;
				if (cur >= kv[best].e)
					best = -1;
			} else {
				int64_t next = i < kn && kv[i].s < hi ? kv[i].s : hi;

				best = -1;
				own += next - cur;
				cur = next;
			}
		}
	}
	add(ctx, node, own);
	sort_ivs(sc->owned.v + base, sc->owned.n - base, own_cmp);
	for (size_t a = base, top = sc->owned.n; a < top;) {
		size_t b = a;
		int who = sc->owned.v[a].who;

		while (b < top && sc->owned.v[b].who == who)
			b++;
		attribute(t, who, sc, a, b - a, depth + 1, add, ctx); /* pops what it pushed */
		a = b;
	}
	sc->owned.n = base;
}

static void self_all(const struct tfd_tree *t, int node, int depth, int64_t *self_ns)
{
	struct kids it;
	int64_t end0 = tfd_times_end(&t->tm, (size_t)node);

	self_ns[node] = tfd_tree_self(t, node);
	if (depth > TFD_MAX_CALL_DEPTH || no_kids(t, node, end0))
		return;
	kids_begin(&it, t, node, end0);
	for (int c; (c = kids_next(&it)) >= 0;)
		self_all(t, c, depth + 1, self_ns);
}

void tfd_tree_attribute_to(const struct tfd_tree *t, int root, int64_t *self_ns,
			   tfd_blocking_fn add, void *ctx)
{
	struct iv seg = {tfd_times_start(&t->tm, (size_t)root), tfd_times_end(&t->tm, (size_t)root),
			 root};

	if (self_ns)
		self_all(t, root, 0, self_ns);
	if (seg.e > seg.s) {
		struct attr_scratch sc = {0};

		/* room for most root calls' trees at once (grown if not) */
		vec_reserve(&sc.kids, 256);
		vec_reserve(&sc.owned, 256);
		vec_push(&sc.owned, seg);
		attribute(t, root, &sc, 0, 1, 0, add, ctx);
		vec_free(&sc.kids);
		vec_free(&sc.owned);
	}
}

static void add_to_array(void *ctx, int node, int64_t ns)
{
	((int64_t *)ctx)[node] += ns;
}

void tfd_tree_attribute(const struct tfd_tree *t, int root, int64_t *self_ns, int64_t *blocking_ns)
{
	tfd_tree_attribute_to(t, root, self_ns, add_to_array, blocking_ns);
}

void tfd_tree_build_from(struct tfd_tree *t, size_t n, const struct tfd_times *tm,
			 tfd_parent_fn parent_of, const void *ctx)
{
	memset(t, 0, sizeof(*t));
	t->n = n;
	t->tm = *tm;
	t->kid_off = xcalloc(n + 1, sizeof(int));
	t->kids = xcalloc(n ? n : 1, sizeof(int));
	for (size_t i = 0; i < n; i++)
		if (parent_of(ctx, i) >= 0)
			t->kid_off[parent_of(ctx, i) + 1]++;
	for (size_t i = 0; i < n; i++)
		t->kid_off[i + 1] += t->kid_off[i];
	/* kid_off[p] serves as p's cursor, ending at p + 1's start; one shift
	 * puts the starts back (no cursor array: this runs at the peak) */
	for (size_t i = 0; i < n; i++)
		if (parent_of(ctx, i) >= 0)
			t->kids[t->kid_off[parent_of(ctx, i)]++] = (int)i;
	for (size_t i = n; i > 0; i--)
		t->kid_off[i] = t->kid_off[i - 1];
	t->kid_off[0] = 0;
}

/* The far (parent, child) pairs sorted by parent, then child (they were
 * made in child order, so this is their stable order by parent), in place:
 * an MSD radix sort ("American flag") of the key parent << b | child (b
 * the bits a call index of n takes), 8 bits a pass from the top, a group
 * of 32 pairs or fewer by insertion. The LSD radix sort it replaced took a
 * buffer of the pairs' size, 1.2 MB at the peak of a 104 MB tf.data-heavy
 * capture's call tree (153,000 far pairs of 310,000 calls), and that had
 * replaced a qsort whose comparisons were 4.6 % of the run. The forms
 * suite fails when the sort is wrong. */
struct far_sort {
	int *far;
	unsigned b; /* bits of a call index */
};

static inline uint64_t far_key(const struct far_sort *fs, size_t i)
{
	return (uint64_t)(uint32_t)fs->far[2 * i] << fs->b | (uint32_t)fs->far[2 * i + 1];
}

static inline void far_swap(int *far, size_t a, size_t b)
{
	int p = far[2 * a], c = far[2 * a + 1];

	far[2 * a] = far[2 * b];
	far[2 * a + 1] = far[2 * b + 1];
	far[2 * b] = p;
	far[2 * b + 1] = c;
}

static void far_insertion(const struct far_sort *fs, size_t lo, size_t hi)
{
	for (size_t i = lo + 1; i < hi; i++)
		for (size_t j = i; j > lo && far_key(fs, j) < far_key(fs, j - 1); j--)
			far_swap(fs->far, j, j - 1);
}

static void far_flag(const struct far_sort *fs, size_t lo, size_t hi, int shift)
{
	size_t cnt[256] = {0}, end[256], next[256], at = lo;

	if (hi - lo <= 32 || shift < 0) {
		far_insertion(fs, lo, hi);
		return;
	}
	for (size_t i = lo; i < hi; i++)
		cnt[far_key(fs, i) >> shift & 255]++;
	for (size_t d = 0; d < 256; d++) {
		next[d] = at;
		at += cnt[d];
		end[d] = at;
	}
	/* each pair swapped into its digit's next free place */
	for (size_t d = 0; d < 256; d++)
		while (next[d] < end[d]) {
			size_t i = next[d], e = far_key(fs, i) >> shift & 255;

			if (e == d)
				next[d]++;
			else
				far_swap(fs->far, i, next[e]++);
		}
	for (size_t d = 0, from = lo; d < 256; from = end[d], d++)
		if (end[d] - from > 1)
			far_flag(fs, from, end[d], shift - 8);
}

static void sort_far(int *far, size_t nfar, size_t n)
{
	struct far_sort fs = {far, 1};
	int top;

	while (fs.b < 31 && ((size_t)1 << fs.b) < n)
		fs.b++;
	/* the key's top bit is 2b - 1: the first pass takes bits 2b - 1 down
	 * to 2b - 8 (the low bits, zero-padded, when the key is shorter) */
	top = 2 * (int)fs.b - 8;
	far_flag(&fs, 0, nfar, top > 0 ? top : 0);
}

/* The runs of calls on one thread: each run's end, ascending (the last
 * is n); false (none kept) when there are more than a few. */
static bool find_runs(struct tfd_tree *t, const struct call_pairs *cpair,
		      const struct call_pair *pairs)
{
	size_t n = t->n, cap = 16;

	t->run_ends = xmalloc(cap * sizeof(size_t));
	for (size_t k = 1; k <= n; k++) {
		if (k < n && pairs[call_pairs_at(cpair, k)].thread ==
				 pairs[call_pairs_at(cpair, k - 1)].thread)
			continue;
		if (t->nruns == cap) {
			if (cap > n / 16 + 16)
				return false;
			cap *= 2;
			t->run_ends = xrealloc(t->run_ends, cap * sizeof(size_t));
		}
		t->run_ends[t->nruns++] = k;
	}
	return true;
}

/* Fewer calls than this are scanned on one thread. */
#define SCAN_SPLIT_MIN ((size_t)1 << 15)
/* Ranges of calls handed out to the cores in turn (a range's cost is its
 * calls' windows). */
#define SCAN_RANGES 16
/* A range adds what it looked at to the shared count this often. */
#define SCAN_REPORT 4096

/* The scan of the calls' windows, in ranges of whole words of found[]: a
 * range sets the bits of its own calls' words; a child past the range's
 * end (the next range's word) goes on the range's spill list, set after. */
struct scan_job {
	struct tfd_tree *t;
	uint64_t *found;
	size_t nranges, budget;
	size_t looked; /* the ranges' reports, summed (atomic) */
	VEC(int) * spill;
	size_t *nfar; /* per range: the children it did not find */
};

static inline size_t scan_range_at(const struct scan_job *j, size_t i)
{
	return (j->t->n * i / j->nranges) & ~(size_t)63;
}

static bool scan_range(void *ctx, size_t worker, size_t i)
{
	struct scan_job *j = ctx;
	struct tfd_tree *t = j->t;
	const struct call *calls = t->calls;
	size_t lo = scan_range_at(j, i), hi = i + 1 == j->nranges ? t->n : scan_range_at(j, i + 1);
	size_t r = run_at(t, lo), looked = 0;

	(void)worker;
	for (size_t p = lo; p < hi; p++) {
		int64_t until = tfd_times_end(&t->tm, p);

		r += p == t->run_ends[r];
		for (size_t q = p + 1; q < t->run_ends[r] && tfd_times_start(&t->tm, q) <= until;
		     q++) {
			looked++;
			if (calls[q].parent != (int)p)
				continue;
			if (q < hi)
				j->found[q / 64] |= 1ull << (q % 64);
			else
				vec_push(&j->spill[i], (int)q);
		}
		if (looked >= SCAN_REPORT) {
			if (__atomic_add_fetch(&j->looked, looked, __ATOMIC_RELAXED) > j->budget)
				return true; /* (the listed form, then) */
			looked = 0;
		}
	}
	__atomic_add_fetch(&j->looked, looked, __ATOMIC_RELAXED);
	return true;
}

/* Range i's children not in their parent's window: counted (pass 0), or
 * listed from far[2 * at] on (pass 1), in call order. */
static void far_range(struct scan_job *j, size_t i, int pass, size_t at)
{
	const struct tfd_tree *t = j->t;
	const struct call *calls = t->calls;
	size_t lo = scan_range_at(j, i), hi = i + 1 == j->nranges ? t->n : scan_range_at(j, i + 1);
	size_t nf = 0;

	for (size_t k = lo; k < hi; k++) {
		if (calls[k].parent < 0 || (j->found[k / 64] >> (k % 64) & 1))
			continue;
		if (pass) {
			t->far[2 * (at + nf)] = calls[k].parent;
			t->far[2 * (at + nf) + 1] = (int)k;
		}
		nf++;
	}
	if (!pass)
		j->nfar[i] = nf;
}

static bool far_count(void *ctx, size_t worker, size_t i)
{
	(void)worker;
	far_range(ctx, i, 0, 0);
	return true;
}

static bool far_list(void *ctx, size_t worker, size_t i)
{
	struct scan_job *j = ctx;
	size_t at = 0;

	(void)worker;
	for (size_t k = 0; k < i; k++)
		at += j->nfar[k];
	far_range(j, i, 1, at);
	return true;
}

/* Each call's children in its window (on its thread, starting before it
 * ends) found, on the cores; false when that looked at more than the
 * budget (a few calls per call). */
static bool scan_windows(struct scan_job *j, size_t cores)
{
	size_t nr = j->nranges;

	j->spill = xcalloc(nr, sizeof(*j->spill));
	tfd_pool_run(nr, cores, NULL, false, scan_range, j);
	for (size_t i = 0; i < nr; i++) {
		for (size_t k = 0; k < j->spill[i].n; k++) {
			size_t q = (size_t)j->spill[i].v[k];

			j->found[q / 64] |= 1ull << (q % 64);
		}
		vec_free(&j->spill[i]);
	}
	free(j->spill);
	return j->looked <= j->budget;
}

/* Node i's parent: call i's, or an int array's entry i. */
static int call_parent(const void *ctx, size_t i)
{
	return ((const struct call *)ctx)[i].parent;
}

static int int_parent(const void *ctx, size_t i)
{
	return ((const int *)ctx)[i];
}

void tfd_tree_build_scan(struct tfd_tree *t, size_t n, const struct tfd_times *tm,
			 const struct call *calls, const struct call_pairs *cpair,
			 const struct call_pair *pairs, bool list)
{
	/* the windows are looked at again by each reader: past a few calls
	 * per call (calls at one instant, deep nesting on one thread, threads
	 * taking turns) the listed form is cheaper */
	size_t nw = n / 64 + 1, cores = tfd_cpu_count();
	struct scan_job j;

	memset(t, 0, sizeof(*t));
	memset(&j, 0, sizeof(j));
	t->n = n;
	t->tm = *tm;
	t->calls = calls;
	j.t = t;
	j.budget = 8 * n + 4096;
	j.nranges = n >= SCAN_SPLIT_MIN && cores > 1 ? SCAN_RANGES : 1;
	if (n && !list && find_runs(t, cpair, pairs)) {
		j.found = xcalloc(nw, sizeof(uint64_t));
		if (!scan_windows(&j, cores)) {
			free(j.found);
			j.found = NULL;
		}
	}
	if (!j.found) {
		free(t->run_ends);
		tfd_tree_build_from(t, n, tm, call_parent, calls);
		return;
	}
	j.nfar = xcalloc(j.nranges, sizeof(*j.nfar));
	tfd_pool_run(j.nranges, cores, NULL, false, far_count, &j);
	for (size_t i = 0; i < j.nranges; i++)
		t->nfar += j.nfar[i];
	t->far = xmalloc((2 * t->nfar + 1) * sizeof(int));
	tfd_pool_run(j.nranges, cores, NULL, false, far_list, &j);
	free(j.nfar);
	if (t->nfar > 1)
		sort_far(t->far, t->nfar, n);
	/* the found bits are done with: the same words mark the nodes with
	 * far children */
	memset(j.found, 0, nw * sizeof(uint64_t));
	for (size_t f = 0; f < t->nfar; f++)
		j.found[(size_t)t->far[2 * f] / 64] |= 1ull << ((size_t)t->far[2 * f] % 64);
	t->has_far = j.found;
}

void tfd_tree_build(struct tfd_tree *t, size_t n, const int64_t *start, const int64_t *end,
		    const int *parent)
{
	struct tfd_times tm = {.start = start, .end = end};

	tfd_tree_build_from(t, n, &tm, int_parent, parent);
}

void tfd_tree_release(struct tfd_tree *t)
{
	free(t->kid_off);
	free(t->kids);
	free(t->far);
	free(t->has_far);
	free(t->run_ends);
	memset(t, 0, sizeof(*t));
}

void tfd_attribute_tree(size_t n, const int64_t *start, const int64_t *end, const int *parent,
			int root, int64_t *self_ns, int64_t *blocking_ns)
{
	struct tfd_tree t;

	tfd_tree_build(&t, n, start, end, parent);
	tfd_tree_attribute(&t, root, self_ns, blocking_ns);
	tfd_tree_release(&t);
}
