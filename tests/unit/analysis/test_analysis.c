/* test_analysis.c - default-mode analysis: attribution invariants,
 * hand-built forests, bad parent ids, and the real captures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrib.h"
#include "fixture.h"
#include "partial_impl.h"
#include "passes.h"
#include "t.h"
#include "tfd/analysis.h"
#include "tfd/arena.h"
#include "tfd/buf.h"
#include "tfd/graph.h"
#include "tfd/jsonmem.h"
#include "tfd/load.h"
#include "tfd/select.h"

#define US 1000000LL /* fixtures take picoseconds */

static struct tfd_analysis *analyze(struct t *t, struct fx *f)
{
	struct tfd_analysis *a = NULL;
	struct tfd_err err = {0};

	fx_finish(f);
	T_OK(tfd_analyze(f->cap, NULL, &a, &err), &err);
	return a;
}

static const struct tfd_stage *stage(const struct tfd_pipeline *p, const char *name)
{
	for (size_t i = 0; i < p->nstages; i++)
		if (strcmp(p->stages[i].name, name) == 0)
			return &p->stages[i];
	return NULL;
}

static void check_invariants(struct t *t, const struct tfd_pipeline *p)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nstages; i++) {
		const struct tfd_stage *s = &p->stages[i];

		T_TRUE(s->self_all_ns >= 0);
		T_TRUE(s->self_ns >= 0);
		T_TRUE(s->blocking_ns >= 0);
		T_TRUE(s->blocking_ns <= s->self_ns);
		T_TRUE(s->self_all_ns <= s->total_all_ns);
		sum += s->blocking_ns;
	}
	/* every analyzed nanosecond is owned by exactly one stage */
	T_EQ_I64(sum, p->analyzed_ns);
}

/* overlapping children: union for self time, latest-ending owner for blocking */
static void attribution_overlap(struct t *t)
{
	/* 0: root [0,100]; 1: [0,60]; 2: [10,90]; 3: [20,50]; 4: child of 2 [30,40] */
	int64_t start[] = {0, 0, 10, 20, 30}, end[] = {100, 60, 90, 50, 40};
	int parent[] = {-1, 0, 0, 0, 2};
	int64_t self[5] = {0}, blk[5] = {0};

	tfd_attribute_tree(5, start, end, parent, 0, self, blk);
	T_EQ_I64(self[0], 10); /* union [0,90] */
	T_EQ_I64(self[1], 60);
	T_EQ_I64(self[2], 70);
	T_EQ_I64(self[3], 30);
	T_EQ_I64(self[4], 10);
	T_EQ_I64(blk[0], 10);
	T_EQ_I64(blk[1], 10); /* [0,10), then 2 outlasts it */
	T_EQ_I64(blk[2], 70); /* [10,90) less its child */
	T_EQ_I64(blk[3], 0);  /* dominated by 2 */
	T_EQ_I64(blk[4], 10);
	T_EQ_I64(blk[0] + blk[1] + blk[2] + blk[3] + blk[4], 100);
}

/* The pipeline sums each call's blocking time as the attribution hands it
 * over: every call at most once per root call, its whole share, and the
 * shares add up to the root call. Random forests of nested and
 * overlapping calls, against the array form. */
struct seen_blk {
	int64_t ns[64];
	int times[64];
};

static void note_blk(void *ctx, int node, int64_t ns)
{
	struct seen_blk *sb = ctx;

	sb->ns[node] += ns;
	sb->times[node]++;
}

static void attribution_hands_each_call_once(struct t *t)
{
	uint64_t x = 88172645463325252ull;

	for (int round = 0; round < 300; round++) {
		int64_t start[64], end[64], self1[64] = {0}, self2[64] = {0}, blk[64] = {0};
		int parent[64], n = 2 + (int)(x % 60), nroots = 0;
		struct seen_blk sb;
		struct tfd_tree tr;

		memset(&sb, 0, sizeof(sb));
		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* a root now and then; else a child of an earlier call, near it */
			parent[i] = i == 0 || x % 7 == 0 ? -1 : (int)(x % (uint64_t)i);
			start[i] = parent[i] < 0 ? (int64_t)(x % 1000)
						 : start[parent[i]] + (int64_t)(x % 50) - 10;
			end[i] = start[i] + 1 + (int64_t)((x >> 20) % 200);
			nroots += parent[i] < 0;
		}
		tfd_tree_build(&tr, (size_t)n, start, end, parent);
		for (int r = 0; r < n; r++) {
			int64_t before = 0, after = 0;

			if (parent[r] >= 0)
				continue;
			for (int i = 0; i < n; i++)
				before += sb.ns[i];
			tfd_tree_attribute(&tr, r, self1, blk);
			tfd_tree_attribute_to(&tr, r, self2, note_blk, &sb);
			for (int i = 0; i < n; i++)
				after += sb.ns[i];
			T_EQ_I64(after - before, end[r] - start[r]);
		}
		for (int i = 0; i < n; i++) {
			T_TRUE(sb.times[i] <= 1);
			T_EQ_I64(sb.ns[i], blk[i]);
			T_EQ_I64(self2[i], self1[i]);
		}
		T_TRUE(nroots >= 1);
		tfd_tree_release(&tr);
	}
}

/* The blocking time of a root call whose tree hands out thousands of
 * segments, more than the attribution's working room holds at first, and
 * more while the calls above still hold theirs there (the room grows, and
 * may move, under them: under AddressSanitizer a pointer kept across a
 * child's turn fails here): each piece of the root call given to the
 * call found by walking down from the root to the child covering it that
 * ends last (the rule attribution_overlap() shows), against the
 * attribution. Ends are distinct, so no tie decides. */
static void attribution_deep_wide_tree(struct t *t)
{
	enum { N = 4000 };
	static int64_t start[N], end[N], self[N], blk[N], want[N], pts[2 * N];
	static int parent[N];
	int n = 1, first = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct tfd_tree tr;

	start[0] = 0;
	end[0] = 2000000;
	parent[0] = -1;
	/* 600 children of the root in turn, overlapping a little; the first
	 * has 500 of its own, every other one 3, some of them 1 more */
	for (int i = 0; i < 600; i++) {
		int c = n++;

		parent[c] = 0;
		start[c] = (int64_t)i * 3300 + 7;
		end[c] = start[c] + 3400 + i % 5;
		if (i == 0)
			first = c;
		for (int k = 0; k < (i ? 3 : 500) && n < N - 1; k++) {
			int g = n++;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			parent[g] = c;
			start[g] = start[c] + (i ? 1000 * k : 6 * k) + (int64_t)(x % 5);
			end[g] = start[g] + (i ? 900 : 5);
			if (i && k == 1 && n < N) {
				int gg = n++;

				parent[gg] = g;
				start[gg] = start[g] + 100;
				end[gg] = start[g] + 400 + k;
			}
		}
	}
	T_TRUE(first == 1);
	/* distinct ends: each scaled and nudged by its index */
	for (int i = 1; i < n; i++) {
		start[i] *= 4096;
		end[i] = end[i] * 4096 + i;
	}
	end[0] *= 4096;
	memset(want, 0, sizeof(want));
	/* the owner of each piece between two consecutive starts or ends
	 * (which calls cover an instant changes only there) */
	for (int i = 0; i < n; i++) {
		pts[2 * i] = start[i];
		pts[2 * i + 1] = end[i];
	}
	qsort(pts, (size_t)(2 * n), sizeof(*pts), tfd_cmp_i64);
	for (int k = 0; k + 1 < 2 * n; k++) {
		int64_t at = pts[k];
		int node = 0;

		if (pts[k + 1] == at || at < start[0] || at >= end[0])
			continue;
		for (;;) {
			int best = -1;

			for (int c = 1; c < n; c++)
				if (parent[c] == node && start[c] <= at && at < end[c] &&
				    (best < 0 || end[c] > end[best]))
					best = c;
			if (best < 0)
				break;
			node = best;
		}
		want[node] += pts[k + 1] - at;
	}
	tfd_tree_build(&tr, (size_t)n, start, end, parent);
	memset(self, 0, sizeof(self));
	memset(blk, 0, sizeof(blk));
	tfd_tree_attribute(&tr, 0, self, blk);
	for (int i = 0; i < n; i++)
		T_EQ_I64(blk[i], want[i]);
	{
		int64_t sum = 0;

		for (int i = 0; i < n; i++)
			sum += blk[i];
		T_EQ_I64(sum, end[0] - start[0]);
	}
	tfd_tree_release(&tr);
}

/* A tree over a host's calls gives each call the same children, self time
 * and blocking time whether it lists them or finds them by scanning its
 * thread (tfd_tree_build_scan): random hosts of a few threads whose calls
 * nest on their thread, overlap without nesting, start at one instant,
 * run out of start order, and have parents on other threads and later in
 * the index order; and a thread of thousands of calls at one instant,
 * where scanning gives way to the lists. */
static void call_tree_scan_is_the_lists(struct t *t)
{
	enum { N = 400 };
	uint64_t x = 0x2545f4914f6cdd1dull;
	static int64_t start[N], end[N];
	static struct call calls[N];
	static uint8_t cpr[N]; /* each call's pair */
	struct call_pairs cp = {cpr, 1};
	static struct seen_blk sb1, sb2;
	struct call_pair pairs[4] = {{0, 0}, {0, 1}, {0, 2}, {0, 3}};
	struct tfd_times tm = {.start = start, .end = end};

	for (int round = 0; round < 200; round++) {
		int n = 2 + (int)(x % 60), th = 0;
		int order[64], made = 0;
		struct tfd_tree a, b;

		/* calls in index order, a thread's run after another's; each
		 * made at a random time, so parents come before or after */
		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (i && x % 9 == 0 && th < 3)
				th++;
			cpr[i] = (uint8_t)th;
			calls[i].link = 0;
			calls[i].parent = -1;
			if (i && x % 11 == 0)
				start[i] = start[i - 1]; /* one instant */
			else if (i && x % 13 == 0)
				start[i] = start[i - 1] - (int64_t)(x % 30); /* out of order */
			else
				start[i] = i ? start[i - 1] + (int64_t)(x % 40) : 0;
			end[i] = start[i] + (x % 17 == 0 ? 0 : (int64_t)((x >> 20) % 300));
			order[i] = i;
		}
		/* parents: an earlier-made call, nearest enclosing on the thread
		 * or anywhere (a consumer's), so the forest has no cycle */
		for (int i = n - 1; i > 0; i--) {
			int j = (int)(x % (uint64_t)(i + 1)), o = order[i];

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			order[i] = order[j];
			order[j] = o;
		}
		for (int k = 0; k < n; k++) {
			int i = order[k], best = -1;

			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			for (int m = 0; m < made; m++) {
				int q = order[m];

				if (cpr[q] == cpr[i] && start[q] <= start[i] && end[i] <= end[q] &&
				    (best < 0 || start[q] >= start[best]))
					best = q;
			}
			if (made && (best < 0 || x % 5 == 0) && x % 3)
				best = order[x / 3 % (uint64_t)made];
			calls[i].parent = best;
			made++;
		}
		tfd_tree_build_scan(&a, (size_t)n, &tm, calls, &cp, pairs, true);
		tfd_tree_build_scan(&b, (size_t)n, &tm, calls, &cp, pairs, false);
		T_TRUE(a.kid_off != NULL);
		T_TRUE(b.kid_off == NULL);
		memset(&sb1, 0, sizeof(sb1));
		memset(&sb2, 0, sizeof(sb2));
		for (int i = 0; i < n; i++) {
			int64_t s1[64] = {0}, s2[64] = {0};

			T_EQ_I64(tfd_tree_self(&b, i), tfd_tree_self(&a, i));
			if (calls[i].parent >= 0)
				continue;
			tfd_tree_attribute_to(&a, i, s1, note_blk, &sb1);
			tfd_tree_attribute_to(&b, i, s2, note_blk, &sb2);
			for (int k = 0; k < n; k++)
				T_EQ_I64(s2[k], s1[k]);
		}
		for (int i = 0; i < n; i++) {
			T_EQ_I64(sb2.ns[i], sb1.ns[i]);
			T_EQ_I64(sb2.times[i], sb1.times[i]);
		}
		tfd_tree_release(&a);
		tfd_tree_release(&b);
	}
	/* parents on one thread, their children on another (far: no window
	 * holds them), one parent with hundreds: the far pairs come out in
	 * (parent, child) order, as the lists hold them (the in-place radix
	 * sort's passes down to the child's bits, and its insertion) */
	{
		enum { M = 6000 };
		static int64_t fs[M], fe[M];
		static struct call fc[M];
		static uint8_t fpr[M];
		struct call_pairs fcp = {fpr, 1};
		struct tfd_times ftm = {.start = fs, .end = fe};
		struct tfd_tree a, b;

		for (int i = 0; i < M; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			fs[i] = i < M / 3 ? (int64_t)i * 10 : (int64_t)(i - M / 3) * 5;
			fe[i] = fs[i] + (i < M / 3 ? 8 : 3);
			fc[i] = (struct call){.parent = i < M / 3    ? -1
							: x % 4 == 0 ? 7
								     : (int)(x % (M / 3))};
			fpr[i] = i < M / 3 ? 0 : 1;
		}
		tfd_tree_build_scan(&a, M, &ftm, fc, &fcp, pairs, true);
		tfd_tree_build_scan(&b, M, &ftm, fc, &fcp, pairs, false);
		T_TRUE(b.kid_off == NULL && b.nfar == (size_t)(M - M / 3));
		for (size_t f = 1; f < b.nfar; f++)
			if (b.far[2 * f - 2] > b.far[2 * f] ||
			    (b.far[2 * f - 2] == b.far[2 * f] &&
			     b.far[2 * f - 1] >= b.far[2 * f + 1]))
				T_FAILF("far pair %zu (%d, %d) after (%d, %d)", f, b.far[2 * f],
					b.far[2 * f + 1], b.far[2 * f - 2], b.far[2 * f - 1]);
		for (int i = 0; i < M / 3; i++)
			T_EQ_I64(tfd_tree_self(&b, i), tfd_tree_self(&a, i));
		tfd_tree_release(&a);
		tfd_tree_release(&b);
	}
	/* N calls at one instant, each the first one's child: every window
	 * holds the rest of the thread, so the tree keeps its lists */
	for (int i = 0; i < N; i++) {
		start[i] = end[i] = 500;
		calls[i] = (struct call){.parent = i ? 0 : -1};
		cpr[i] = 0;
	}
	{
		struct tfd_tree b;

		tfd_tree_build_scan(&b, N, &tm, calls, &cp, pairs, false);
		T_TRUE(b.kid_off != NULL);
		T_EQ_I64(tfd_tree_self(&b, 0), 0);
		tfd_tree_release(&b);
	}
}

/* A large host's calls are scanned in ranges on the cores: a parent whose
 * children run past its range's end still finds them in its window (the
 * range's spill), so no child of a nested call is left for the far list,
 * and each call's self time is the lists'. Two threads of 40,000 calls in
 * all, each parent followed by up to 90 nested children. */
static void call_tree_scan_in_ranges(struct t *t)
{
	enum { M = 40000 };
	static int64_t fs[M], fe[M];
	static struct call fc[M];
	static uint8_t fpr[M];
	struct call_pairs fcp = {fpr, 1};
	struct call_pair pairs[2] = {{0, 0}, {0, 1}};
	struct tfd_times ftm = {.start = fs, .end = fe};
	struct tfd_tree a, b;
	uint64_t x = 0x853c49e6748fea9bull;
	size_t nested = 0;

	for (int i = 0; i < M;) {
		int k, p = i;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		k = (int)(x % 91);
		if (p + k >= M || (p < M / 2 && p + k >= M / 2))
			k = 0; /* (no parent across the threads' seam) */
		fs[p] = p ? fe[p - 1] + 5 : 0;
		fe[p] = fs[p] + 10 * k + 7;
		fc[p] = (struct call){.parent = -1};
		fpr[p] = p < M / 2 ? 0 : 1;
		for (int c = 1; c <= k; c++) {
			fs[p + c] = fs[p] + 10 * c - 7;
			fe[p + c] = fs[p + c] + 6;
			fc[p + c] = (struct call){.parent = p};
			fpr[p + c] = fpr[p];
		}
		nested += (size_t)k;
		i = p + k + 1;
	}
	T_TRUE(nested > M / 2);
	tfd_tree_build_scan(&a, M, &ftm, fc, &fcp, pairs, true);
	tfd_tree_build_scan(&b, M, &ftm, fc, &fcp, pairs, false);
	T_TRUE(b.kid_off == NULL);
	T_EQ_I64((int64_t)b.nfar, 0);
	for (int i = 0; i < M; i++)
		T_EQ_I64(tfd_tree_self(&b, i), tfd_tree_self(&a, i));
	tfd_tree_release(&a);
	tfd_tree_release(&b);
}

/* Self time is the call less the union of its children clipped to it,
 * against a nanosecond-by-nanosecond count: random trees whose calls have
 * up to 40 children, in start order or not (the sort is skipped when they
 * are in order, and a call with more than 16 children takes the heap). */
static void self_time_is_the_uncovered_span(struct t *t)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int round = 0; round < 400; round++) {
		int64_t start[128], end[128];
		int parent[128], n = 2 + (int)(x % 120);
		bool in_order = round % 2 == 0;
		struct tfd_tree tr;

		for (int i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			/* a few parents with many children each */
			parent[i] = i == 0 ? -1 : (int)(x % (uint64_t)(i < 4 ? i : 4));
			start[i] = i == 0 ? 0 : start[parent[i]] + (int64_t)(x % 300) - 20;
			if (in_order && i > 0 && start[i] < start[i - 1])
				start[i] = start[i - 1];
			end[i] = start[i] + 1 + (int64_t)((x >> 24) % 150);
		}
		tfd_tree_build(&tr, (size_t)n, start, end, parent);
		for (int v = 0; v < n; v++) {
			int64_t uncovered = 0;

			for (int64_t ns = start[v]; ns < end[v]; ns++) {
				bool covered = false;

				for (int c = 0; c < n && !covered; c++)
					covered = parent[c] == v && start[c] <= ns && ns < end[c];
				uncovered += !covered;
			}
			T_EQ_I64(tfd_tree_self(&tr, v), uncovered);
		}
		tfd_tree_release(&tr);
	}
}

/* children reaching outside their parent are clipped, never negative */
static void attribution_clips(struct t *t)
{
	int64_t start[] = {100, 50, 180}, end[] = {200, 150, 260};
	int parent[] = {-1, 0, 0};
	int64_t self[3] = {0}, blk[3] = {0};

	tfd_attribute_tree(3, start, end, parent, 0, self, blk);
	T_EQ_I64(self[0], 30);
	T_EQ_I64(blk[1], 50);
	T_EQ_I64(blk[2], 20);
	T_EQ_I64(blk[0] + blk[1] + blk[2], 100);
}

static void nested_sync_chain(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_init(&f);
	for (int i = 0; i < 3; i++) {
		int64_t b = i * 1000 * US;

		fx_ev(&f, 0, "Iterator::Model", b, 300 * US, "id=1", NULL);
		fx_ev(&f, 0, "Iterator::Model::MapV2", b + 10 * US, 280 * US, "id=2", "parent_id=1",
		      NULL);
		fx_ev(&f, 0, "Iterator::Model::MapV2::BatchV2", b + 20 * US, 250 * US, "id=3",
		      "parent_id=2", "batch_size=32", NULL);
		fx_ev(&f, 0, "Iterator::Model::MapV2::BatchV2::TFRecord", b + 30 * US, 200 * US,
		      "id=4", "parent_id=3", NULL);
	}
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(a->hosts[0].npipelines, 1);
	T_EQ_I64(p->ncalls, 3);
	T_EQ_I64(p->nslow, 3);
	T_EQ_I64(p->nstages, 4);
	T_EQ_STR(p->stages[p->bottleneck].name, "TFRecord");
	T_EQ_STR(p->stages[p->bottleneck].family, "TFRecord");
	T_EQ_STR(stage(p, "BatchV2")->family, "Batch");
	T_EQ_STR(stage(p, "MapV2")->family, "Map");
	T_EQ_I64(p->ncritpath, 4);
	T_EQ_STR(p->stages[p->critpath[0]].name, "Model");
	T_EQ_STR(p->stages[p->critpath[3]].name, "TFRecord");
	T_EQ_I64(stage(p, "TFRecord")->blocking_ns, 3 * 200 * 1000);
	T_EQ_I64(stage(p, "BatchV2")->blocking_ns, 3 * 50 * 1000);
	T_EQ_I64(p->links[TFD_LINK_SYNC], 9);
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* A chain of nested iterator calls deeper than the blocking attribution
 * follows (TFD_MAX_CALL_DEPTH): every call still has its self time, and
 * the stages' self times add up to the root calls' time. The self times
 * of the four levels below the attribution's reach had been 0. */
static void self_time_below_the_depth_limit(struct t *t)
{
	enum { DEPTH = TFD_MAX_CALL_DEPTH + 10 };
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;
	char *name = malloc(16 + 5 * (size_t)DEPTH), id[32], parent[32];
	int64_t sum = 0;

	T_TRUE(name != NULL);
	if (!name)
		return;
	fx_init(&f);
	for (int i = 0; i < 5; i++) {
		int64_t b = i * 100 * US;

		strcpy(name, "Iterator::Model");
		for (int d = 0; d < DEPTH; d++) {
			if (d)
				strcat(name, "::Map");
			snprintf(id, sizeof(id), "id=%d", 100 + d);
			snprintf(parent, sizeof(parent), "parent_id=%d", 99 + d);
			/* each level starts 10 ns after its parent and ends 10 ns before */
			fx_ev(&f, 0, name, b + d * 10000, 50 * US - d * 20000, id,
			      d ? parent : NULL, NULL);
		}
	}
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(p->nstages, DEPTH);
	for (size_t s = 0; s < p->nstages; s++) {
		if (p->stages[s].self_all_ns <= 0)
			T_FAILF("stage %zu of %d: no self time", s, DEPTH);
		sum += p->stages[s].self_all_ns;
	}
	T_EQ_I64(sum, 5 * 50 * 1000);
	/* (past the limit, the attribution gives a subtree's rest to its top
	 * call: blocking exceeds self there, so check_invariants() does not
	 * hold) */
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
	free(name);
}

/* the upstream HostInputPipeline capture in default mode */
static void prefetch_other_thread(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_host_input_pipeline(&f, true);
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(p->links[TFD_LINK_PRODUCE], 2);
	T_EQ_I64(p->nanalyzed, 1); /* only the slow call */
	T_TRUE(p->analyzed_slow_only);
	T_EQ_STR(p->stages[p->bottleneck].name, "Range");
	T_EQ_I64(stage(p, "Range")->blocking_ns, 80 * 1000);
	T_EQ_I64(stage(p, "Prefetch")->blocking_ns, 20 * 1000);
	T_TRUE(stage(p, "Prefetch")->is_async);
	/* the second producer ran ahead: counted, never blocking */
	T_EQ_I64(stage(p, "Range")->calls_all, 2);
	T_EQ_I64(stage(p, "Range")->blocking_calls, 1);
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* Element i's id: large (as TensorFlow's, times in ns), small and going
 * down, or negative (ids past 2^63): the ids kept in call order are
 * differences from the one before. */
static int64_t element_of(int i)
{
	return i % 3 == 0   ? 1700000000000000000LL + (int64_t)i * 1000003
	       : i % 3 == 1 ? 1000 + (int64_t)(400 - i)
			    : -(int64_t)(i + 1) * 7919;
}

/* Every produced element is linked to its consumer by element_id, the
 * last ones too (consumers are registered after a lag, in order): 300
 * prefetched elements, each made ahead of its Consume; and again after
 * twice as many Consume events of no Produce, where the consumer table,
 * sized for half of the Produce/Consume events, grows as it fills. The
 * table keeps elements within 2^39 of its first in 5 bytes: the ids of
 * element_of() are farther apart (it goes to 8 bytes, before or after it
 * grew); the third round's are near (it grows in 5). */
static void produce_links_every_element(struct t *t)
{
	enum { N = 300 };

	for (int round = 0; round < 3; round++) {
		struct fx f;
		struct tfd_analysis *a;
		const struct tfd_pipeline *p;
		char el[32];
		int extra = round > 0;

		fx_init(&f);
		/* first: the table fills while the linked ones go in */
		for (int i = 0; extra && i < 2 * N; i++) {
			int64_t at = ((int64_t)i * 200 - 2 * N * 200 - 1000) * US;

			snprintf(el, sizeof(el), "element_id=%d", 100000 + i);
			fx_ev(&f, 0, "Iterator::Prefetch", at, 100 * US, "id=123", NULL);
			fx_ev(&f, 0, "PrefetchConsume", at + 50 * US, 40 * US, el, NULL);
		}
		for (int i = 0; i < N; i++) {
			snprintf(el, sizeof(el), "element_id=%lld",
				 round == 2 ? 900000LL - i : (long long)element_of(i));
			fx_ev(&f, 0, "Iterator::Prefetch", (int64_t)i * 1000 * US, 100 * US,
			      "id=123", NULL);
			fx_ev(&f, 0, "PrefetchConsume", ((int64_t)i * 1000 + 50) * US, 40 * US, el,
			      NULL);
		}
		for (int i = 0; i < N; i++) {
			snprintf(el, sizeof(el), "element_id=%lld",
				 round == 2 ? 900000LL - i : (long long)element_of(i));
			fx_ev(&f, 1, "PrefetchProduce", ((int64_t)i * 1000 - 400) * US, 300 * US,
			      el, NULL);
			fx_ev(&f, 1, "Iterator::Prefetch::Range", ((int64_t)i * 1000 - 400) * US,
			      300 * US, "id=456", "parent_id=123", NULL);
		}
		a = analyze(t, &f);
		p = &a->hosts[0].pipelines[0];
		T_EQ_I64(p->links[TFD_LINK_PRODUCE], N);
		tfd_analysis_free(a);
		tfd_capture_free(f.cap);
	}
}

/* without Produce/Consume (Chrome JSON, old TF): parent_id + time overlap */
static void prefetch_by_overlap(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_host_input_pipeline(&f, false);
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(p->links[TFD_LINK_OVERLAP], 1);
	T_EQ_I64(p->links[TFD_LINK_NONE], 1);
	T_EQ_STR(p->stages[p->bottleneck].name, "Range");
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* parallel map: producers on three threads overlap each other */
static void parallel_map_overlapping(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 0, 100 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::ParallelMapV2", 0, 100 * US, "id=2", "parent_id=1",
	      "parallelism=4", "autotune=true", NULL);
	fx_ev(&f, 1, "Iterator::Model::ParallelMapV2::TFRecord", 0, 60 * US, "id=3", "parent_id=2",
	      NULL);
	fx_ev(&f, 2, "Iterator::Model::ParallelMapV2::TFRecord", 10 * US, 80 * US, "id=3",
	      "parent_id=2", NULL);
	fx_ev(&f, 3, "Iterator::Model::ParallelMapV2::TFRecord", 20 * US, 30 * US, "id=3",
	      "parent_id=2", NULL);
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(stage(p, "ParallelMapV2")->self_ns, 10 * 1000); /* union, not sum */
	T_EQ_I64(stage(p, "TFRecord")->blocking_ns, 90 * 1000);
	T_EQ_STR(stage(p, "ParallelMapV2")->family, "ParallelMap");
	T_TRUE(stage(p, "ParallelMapV2")->is_async);
	T_EQ_STR(tfd_event_param(stage(p, "ParallelMapV2")->sample, "parallelism"), "4");
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* A call of the root iterator nested in another call of its pipeline (a
 * pipeline iterated from inside its own map function, or a damaged capture)
 * starts a call tree of its own (the linking gives a root iterator's calls
 * no parent): the call around it keeps its whole time as self time. The
 * same whether the pipeline has every call of the host (its tree is made
 * from the host's links) or shares the host with another. */
static void nested_root_call_is_a_root(struct t *t)
{
	for (int other = 0; other < 2; other++) {
		struct fx f;
		struct tfd_analysis *a;
		const struct tfd_pipeline *p = NULL;

		fx_init(&f);
		fx_ev(&f, 0, "Iterator::Model", 0, 100 * US, "id=1", NULL);
		fx_ev(&f, 0, "Iterator::Model::MapV2", 10 * US, 80 * US, "id=2", "parent_id=1",
		      NULL);
		fx_ev(&f, 0, "Iterator::Model", 20 * US, 10 * US, "id=1", NULL);
		if (other) /* a second pipeline on another thread */
			fx_ev(&f, 1, "Iterator::Model", 0, 50 * US, "id=9", NULL);
		a = analyze(t, &f);
		for (size_t i = 0; i < a->hosts[0].npipelines; i++)
			if (stage(&a->hosts[0].pipelines[i], "MapV2"))
				p = &a->hosts[0].pipelines[i];
		T_EQ_U64(a->hosts[0].npipelines, (uint64_t)(1 + other));
		T_TRUE(p != NULL);
		if (p) {
			T_EQ_I64(stage(p, "MapV2")->self_all_ns, 80 * 1000);
			check_invariants(t, p);
		}
		tfd_analysis_free(a);
		tfd_capture_free(f.cap);
	}
}

/* Each call keeps its own iterator and thread, where calls share one
 * record per (iterator, thread): an iterator whose calls run on three
 * threads, one of them twice apart, and another iterator on two. */
static void calls_keep_iterator_and_thread(struct t *t)
{
	static const struct {
		int line;
		const char *name, *id;
	} ev[] = {
	    {0, "Iterator::Model", "id=1"},	 {1, "Iterator::Model::Map", "id=2"},
	    {2, "Iterator::Model::Map", "id=2"}, {1, "Iterator::Model", "id=1"},
	    {1, "Iterator::Model::Map", "id=2"}, {3, "Iterator::Model::Map", "id=2"},
	    {2, "Iterator::Model", "id=1"},	 {0, "Iterator::Model::Map", "id=2"},
	};
	struct fx f;
	struct host_ctx c;
	struct tfd_err err = {0};
	size_t by_name = 0, orphans = 0, k = 0;

	fx_init(&f);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		fx_ev(&f, ev[i].line, ev[i].name, (int64_t)i * 100 * US, 50 * US, ev[i].id,
		      strcmp(ev[i].id, "id=2") == 0 ? "parent_id=1" : NULL, NULL);
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	/* calls come thread by thread, each thread's in time order */
	for (size_t th = 0; th < f.h->nthreads; th++)
		for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
			if (f.h->threads[th].id != ev[i].line)
				continue;
			T_TRUE(k < c.calls.n);
			if (k >= c.calls.n)
				break;
			T_EQ_U64(call_thread(&c, k), th);
			T_EQ_U64(c.iters.v[call_iter(&c, k)].id, strcmp(ev[i].id, "id=1") ? 2 : 1);
			k++;
		}
	T_EQ_U64(k, c.calls.n);
	T_EQ_U64(c.pairs.n, 7); /* (1: lines 0, 1, 2), (2: lines 0, 1, 2, 3) */
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

/* The host's calls linked again in time order (timelink.c): as the link
 * pass linked them, on f's capture, with at most `open` calls in the
 * groups closed as the stream went (timegroups.c) and as many records
 * held (timefold.c); the calls that waited for a link. */
static size_t links_in_time_order(struct t *t, struct fx *f, struct host_ctx *c, size_t open)
{
	struct tfd_err err = {0};
	struct tfd_timelink r;
	size_t by_name = 0, orphans = 0;

	fx_finish(f);
	memset(c, 0, sizeof(*c));
	T_OK(tfd_graph_build(c, f->h, NULL, &by_name, &orphans, &err), &err);
	tfd_link_calls(c);
	T_EQ_U64(tfd_timelink(c, NULL, NULL, &r), 0);
	T_EQ_U64(r.differ, 0);
	T_EQ_U64(r.calls, c->calls.n);
	T_EQ_U64(r.iter_differ, 0);
	/* the groups closed as the stream went, none of them landed in late */
	T_EQ_U64(r.open_most, open);
	T_EQ_U64(r.fold_held, open);
	T_EQ_U64(r.late, 0);
	T_EQ_U64(r.unclosed, 0);
	T_TRUE(r.fold == NULL);
	T_TRUE(r.state_bytes > 0);
	T_EQ_U64(r.root_order, 0);
	T_TRUE(r.sums != NULL);
	tfd_stream_sums_free(r.sums);
	return r.waited;
}

/* A group closed as the stream went, then landed in: a producer whose
 * element was taken by a root call that ended before the producer started
 * (clocks apart across threads) links to that call (link.c takes the
 * taker), after its group could be folded. The check counts it late: a
 * streaming pass would have to read the host again. */
static void groups_closed_late(struct t *t)
{
	struct fx f;
	struct host_ctx c;
	struct tfd_err err = {0};
	struct tfd_timelink r;
	size_t by_name = 0, orphans = 0;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Prefetch", 0, 100 * US, "id=123", NULL);
	fx_ev(&f, 0, "PrefetchConsume", 50 * US, 10 * US, "element_id=7", NULL);
	fx_ev(&f, 1, "PrefetchProduce", 200 * US, 80 * US, "element_id=7", NULL);
	fx_ev(&f, 1, "Iterator::Prefetch::Range", 200 * US, 80 * US, "id=456", "parent_id=123",
	      NULL);
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	tfd_link_calls(&c);
	T_EQ_U64(tfd_timelink(&c, NULL, NULL, &r), 2);
	T_EQ_U64(r.differ, 0); /* (linked as the link pass links it) */
	T_EQ_U64(r.late, 1);
	/* ... and its group's fold is off (timefold.c): the group was folded
	 * before the producer landed in it */
	T_TRUE(r.fold != NULL);
	T_EQ_U64(r.unclosed, 0);
	T_EQ_U64(r.groups, 1);
	tfd_stream_sums_free(r.sums);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

/* The root calls a stream selects from the pass before's list, as the
 * pipeline pass does (timesel.c): a first call that fills a buffer (over
 * twice the median) is the warm-up, the steady state's calls slower than
 * 50 us are analyzed, the slowest hands out its own bottleneck, and the
 * capacity window starts after the warm-up. Six root calls, each with a
 * child inside it on its thread (a sync link); one more outside them. */
static void stream_selects_roots(struct t *t)
{
	struct fx f;
	struct host_ctx c;
	struct tfd_err err = {0};
	struct tfd_timelink r;
	size_t by_name = 0, orphans = 0;
	int root = -1, child = -1;

	fx_init(&f);
	for (int i = 0; i < 6; i++) {
		int64_t s = i * 10000 * US, d = (i ? 100 + 10 * i : 5000) * US;

		fx_ev(&f, 0, "Iterator::Prefetch", s, d, "id=1", NULL);
		fx_ev(&f, 0, "Iterator::Prefetch::Range", s + 1 * US, d - 40 * US, "id=2",
		      "parent_id=1", NULL);
	}
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	tfd_link_calls(&c);
	T_EQ_U64(tfd_timelink(&c, NULL, NULL, &r), 0);
	for (size_t i = 0; i < c.iters.n; i++)
		if (c.iters.v[i].parent < 0)
			root = (int)i;
		else
			child = (int)i;
	T_TRUE(root >= 0 && child >= 0 && r.sums != NULL);
	if (r.sums && root >= 0 && child >= 0) {
		const struct tfd_stream_isum *a = &r.sums->s[root], *b = &r.sums->s[child];

		T_EQ_U64(r.sums->nwarmup[root], 1);
		T_EQ_U64(a->calls, 6);
		T_EQ_U64(a->calls_an, 5); /* (the warm-up's not) */
		T_EQ_U64(b->calls_an, 5);
		/* the root calls' own time, 40 us each, handed out under the
		 * analyzed ones; the slowest (the warm-up) hands out its own
		 * (in ns; the fixture's times are picoseconds) */
		T_EQ_U64((uint64_t)a->blk_ns, 5 * 40 * 1000);
		T_EQ_U64((uint64_t)a->slow_blk_ns, 40 * 1000);
		T_EQ_U64((uint64_t)b->slow_blk_ns, 4960 * 1000);
		/* the window: from the first call after the warm-up, its calls
		 * on their thread */
		T_EQ_U64(a->win_calls, 5);
		T_EQ_U64(b->win_calls, 5);
		T_EQ_U64(r.sums->pairs.n, 2);
		T_EQ_U64(r.sums->edges.n, 1);
	}
	tfd_stream_sums_free(r.sums);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

/* The graph made with no call kept (tfd_graph_build_iters()) counts what
 * the pass before the stream counts (tfd_graph_prepass()) and makes the
 * same iterators; the stream run on it alone (tfd_stream_run()) sums what
 * the check's stream sums over the call table. */
static void stream_without_calls(struct t *t)
{
	struct fx f;
	struct host_ctx c, full, pre;
	struct tfd_prepass pp, pp2;
	struct tfd_err err = {0};
	struct tfd_timelink r;
	struct tfd_stream_sums *ss;
	const char *why = "";
	size_t by_name = 0, orphans = 0;

	fx_init(&f);
	for (int i = 0; i < 6; i++) {
		int64_t s = i * 10000 * US, d = (i ? 100 + 10 * i : 5000) * US;

		fx_ev(&f, 0, "Iterator::Prefetch", s, d, "id=1", NULL);
		fx_ev(&f, 0, "PrefetchConsume", s + d - 20 * US, 10 * US, "element_id=7", NULL);
		fx_ev(&f, 1, "PrefetchProduce", s + 2 * US, 50 * US, "element_id=7", NULL);
		fx_ev(&f, 1, "Iterator::Prefetch::Range", s + 2 * US, 50 * US, "id=2",
		      "parent_id=1", NULL);
	}
	fx_finish(&f);
	T_OK(tfd_graph_build_iters(&c, f.h, &pp, &by_name, &orphans, &err), &err);
	T_EQ_U64(c.calls.n, 0);
	T_OK(tfd_graph_prepass(&pre, f.h, &pp2, &err), &err);
	T_TRUE(tfd_prepass_differs(&c, &pp, &pre, &pp2) == NULL);
	T_EQ_U64(pp.roots.n, 6);
	memset(&full, 0, sizeof(full));
	T_OK(tfd_graph_build(&full, f.h, NULL, &by_name, &orphans, &err), &err);
	tfd_link_calls(&full);
	T_EQ_U64(tfd_timelink(&full, NULL, NULL, &r), 0);
	ss = tfd_stream_run(&c, &pp, NULL, NULL, &why);
	T_TRUE(ss != NULL && why == NULL);
	T_TRUE(pp.roots.n == 0 && pp.thread_calls == NULL); /* (handed over) */
	T_TRUE(r.sums != NULL);
	if (ss && r.sums) {
		T_EQ_U64(ss->niters, r.sums->niters);
		T_TRUE(memcmp(ss->s, r.sums->s, ss->niters * sizeof(*ss->s)) == 0);
		T_EQ_U64(ss->edges.n, r.sums->edges.n);
		T_EQ_U64(ss->pairs.n, r.sums->pairs.n);
		T_EQ_U64(ss->roots.n, 6);
	}
	tfd_stream_sums_free(ss);
	tfd_stream_sums_free(r.sums);
	tfd_prepass_free(&pp);
	tfd_prepass_free(&pp2);
	tfd_graph_release(&pre);
	tfd_graph_release(&full);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

/* A stream that cannot be used says why, and the analysis built on it
 * (TFDOCTOR_STREAM=1) falls back to today's graph: the same pipeline as
 * without it. The scene of groups_closed_late(): a producer whose element
 * was taken by a root call that ended before it started. */
static void stream_falls_back(struct t *t)
{
	struct fx f;
	struct host_ctx c;
	struct tfd_prepass pp;
	struct tfd_err err = {0};
	struct tfd_analysis *a = NULL, *b = NULL;
	const char *why = NULL;
	size_t by_name = 0, orphans = 0;

	fx_init(&f);
	for (int i = 0; i < 3; i++) {
		int64_t s = i * 1000 * US;

		fx_ev(&f, 0, "Iterator::Prefetch", s, 100 * US, "id=123", NULL);
		fx_ev(&f, 0, "PrefetchConsume", s + 50 * US, 10 * US, "element_id=7", NULL);
		fx_ev(&f, 1, "PrefetchProduce", s + 200 * US, 80 * US, "element_id=7", NULL);
		fx_ev(&f, 1, "Iterator::Prefetch::Range", s + 200 * US, 80 * US, "id=456",
		      "parent_id=123", NULL);
	}
	fx_finish(&f);
	T_OK(tfd_graph_build_iters(&c, f.h, &pp, &by_name, &orphans, &err), &err);
	T_TRUE(tfd_stream_run(&c, &pp, NULL, NULL, &why) == NULL);
	T_TRUE(why != NULL && strstr(why, "already folded") != NULL);
	tfd_prepass_free(&pp);
	tfd_graph_release(&c);
	T_OK(tfd_analyze(f.cap, NULL, &a, &err), &err);
	setenv("TFDOCTOR_STREAM", "1", 1);
	T_OK(tfd_analyze(f.cap, NULL, &b, &err), &err);
	unsetenv("TFDOCTOR_STREAM");
	T_TRUE(a && b && a->nhosts == 1 && b->nhosts == 1);
	if (a && b && a->nhosts == 1 && b->nhosts == 1) {
		const struct tfd_pipeline *p = &a->hosts[0].pipelines[0],
					  *q = &b->hosts[0].pipelines[0];

		T_EQ_U64(p->nstages, q->nstages);
		for (size_t s = 0; s < p->nstages && s < q->nstages; s++) {
			T_EQ_U64(p->stages[s].calls_all, q->stages[s].calls_all);
			T_EQ_U64((uint64_t)p->stages[s].self_all_ns,
				 (uint64_t)q->stages[s].self_all_ns);
			T_EQ_U64((uint64_t)p->stages[s].blocking_ns,
				 (uint64_t)q->stages[s].blocking_ns);
		}
		T_EQ_U64((uint64_t)p->bottleneck, (uint64_t)q->bottleneck);
	}
	tfd_analysis_free(a);
	tfd_analysis_free(b);
	tfd_capture_free(f.cap);
}

/* Links settled in time order, each at the first instant the stream can
 * know it: an element taken by two calls of the parent iterator, where the
 * one that overlaps the producer (and so wins, link.c) started first but
 * took the element last: the link waits for it. And the scenes of the
 * link pass's tests: produced ahead and taken later, by overlap, the
 * parallel map's producers, none. */
static void links_in_time_order_wait(struct t *t)
{
	struct fx f;
	struct host_ctx c;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Prefetch", 0, 500 * US, "id=123", NULL);
	fx_ev(&f, 0, "PrefetchConsume", 450 * US, 10 * US, "element_id=100", NULL);
	fx_ev(&f, 2, "Iterator::Prefetch", 100 * US, 100 * US, "id=123", NULL);
	fx_ev(&f, 2, "PrefetchConsume", 150 * US, 10 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "PrefetchProduce", 0, 80 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "Iterator::Prefetch::Range", 0, 80 * US, "id=456", "parent_id=123", NULL);
	T_EQ_U64(links_in_time_order(t, &f, &c, 3), 1);
	/* the producer's taker is the call that started at 0 */
	for (size_t k = 0; k < c.calls.n; k++) {
		if (c.iters.v[call_iter(&c, k)].parent < 0)
			continue;
		T_EQ_U64(c.calls.v[k].link, TFD_LINK_PRODUCE);
		T_TRUE(c.calls.v[k].parent >= 0 &&
		       call_start(&c, (size_t)c.calls.v[k].parent) == 0);
	}
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);

	fx_host_input_pipeline(&f, true); /* produced ahead, taken later */
	T_EQ_U64(links_in_time_order(t, &f, &c, 3), 2);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);

	/* one by overlap, one with none; the first call's group closes at
	 * its end, 100, when the second producer starts, but the stream
	 * closes it only past 100 (a call of no length at 100 on its thread
	 * would still be its child): three calls open at once */
	fx_host_input_pipeline(&f, false);
	T_EQ_U64(links_in_time_order(t, &f, &c, 3), 2);
	T_EQ_U64(c.calls.v[2].link, TFD_LINK_OVERLAP); /* line 1's, after line 0's */
	T_EQ_U64(c.calls.v[3].link, TFD_LINK_NONE);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);

	fx_init(&f); /* a produced element nobody took: by overlap at the end */
	fx_ev(&f, 0, "Iterator::Prefetch", 0, 100 * US, "id=123", NULL);
	fx_ev(&f, 1, "PrefetchProduce", 50 * US, 80 * US, "element_id=7", NULL);
	fx_ev(&f, 1, "Iterator::Prefetch::Range", 50 * US, 80 * US, "id=456", "parent_id=123",
	      NULL);
	T_EQ_U64(links_in_time_order(t, &f, &c, 2), 1);
	T_EQ_U64(c.calls.v[1].link, TFD_LINK_OVERLAP);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);

	/* a call that overlaps two calls of the parent on two threads, an
	 * element nobody took (produce) or outside any Produce event (a
	 * Chrome trace): it goes to the one it overlaps most (line 0's
	 * first), but until its link is settled (its element has no taker for
	 * sure at the parent's last call's end, at 150; or, by overlap, once
	 * the stream is past its end, here at the stream's end) the other's
	 * group is held too: all four calls at once */
	for (int produce = 0; produce < 2; produce++) {
		fx_init(&f);
		fx_ev(&f, 0, "Iterator::Prefetch", 0, 100 * US, "id=123", NULL);
		fx_ev(&f, 0, "Iterator::Prefetch", (produce ? 140 : 120) * US,
		      (produce ? 10 : 30) * US, "id=123", NULL);
		fx_ev(&f, 2, "Iterator::Prefetch", 60 * US, 30 * US, "id=123", NULL);
		if (produce)
			fx_ev(&f, 1, "PrefetchProduce", 50 * US, 80 * US, "element_id=7", NULL);
		fx_ev(&f, 1, "Iterator::Prefetch::Range", 50 * US, 80 * US, "id=456",
		      "parent_id=123", NULL);
		T_EQ_U64(links_in_time_order(t, &f, &c, 4), 1);
		T_EQ_I64(c.calls.v[3].parent, 0);
		T_EQ_U64(c.calls.v[3].link, TFD_LINK_OVERLAP);
		tfd_graph_release(&c);
		tfd_capture_free(f.cap);
	}
}

/* A call's pair is kept apart in a byte, two or four, as many as the
 * host's pairs need: 70,000 iterators on one thread widen the array twice
 * (past 256 and 65,536 pairs), and every call still names its own. */
static void call_pairs_widen(struct t *t)
{
	enum { N = 70000 };
	struct fx f;
	struct host_ctx c;
	struct tfd_err err = {0};
	size_t by_name = 0, orphans = 0, bad = 0;
	char id[32];

	fx_init(&f);
	for (int i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "id=%d", i + 1);
		fx_ev(&f, 0, "Iterator::Model", (int64_t)i * 10 * US, US, id, NULL, NULL);
	}
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	T_EQ_U64(c.calls.n, N);
	T_EQ_U64(c.pairs.n, N);
	T_EQ_U64(c.cpair.w, 4);
	for (size_t k = 0; k < c.calls.n; k++)
		bad += c.iters.v[call_iter(&c, k)].id != k + 1 || call_thread(&c, k) != 0;
	T_EQ_U64(bad, 0);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

/* Each iterator's list of calls is in start order, ties by call index:
 * its calls on five threads, each thread's in order, the threads' starts
 * interleaved and some equal across threads, merged as one sort of them
 * all would order them; an absent iterator (a parent without a call in
 * the capture) has an empty list. */
static void iterator_calls_listed_in_start_order(struct t *t)
{
	struct fx f;
	struct host_ctx c;
	struct tfd_err err = {0};
	size_t by_name = 0, orphans = 0, absent = 0;
	unsigned seed = 7;

	fx_init(&f);
	for (int line = 0; line < 5; line++) {
		int64_t at = line * 3;

		for (int i = 0; i < 200; i++) {
			seed = seed * 1103515245u + 12345u;
			at += 1 + (int64_t)(seed >> 16) % 7; /* equal starts across lines */
			fx_ev(&f, line, "Iterator::Model::Map", at * US, US / 2, "id=2",
			      "parent_id=1", NULL);
		}
	}
	fx_ev(&f, 0, "Iterator::Model", 0, 100000 * US, "id=1", NULL, NULL);
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	tfd_graph_list_calls(&c);
	for (size_t i = 0; i < c.iters.n; i++) {
		const struct iter *it = &c.iters.v[i];
		const int *v = c.icalls + it->call_off;
		size_t bad = 0;

		for (size_t k = 1; k < it->ncalls; k++) {
			int64_t a = call_start(&c, (size_t)v[k - 1]),
				b = call_start(&c, (size_t)v[k]);

			bad += a > b || (a == b && v[k - 1] >= v[k]);
		}
		T_EQ_U64(bad, 0);
		if (it->id == 2)
			T_EQ_U64(it->ncalls, 1000);
	}
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
	/* one thread's calls, in order, and their absent parent: no list to
	 * merge (UBSan saw a copy from no buffer for the empty one) */
	fx_init(&f);
	fx_ev(&f, 6, "Iterator::Root::Prefetch::Map", 10 * US, US, "id=7", "parent_id=8", NULL);
	fx_ev(&f, 6, "Iterator::Root::Prefetch::Map", 20 * US, US, "id=7", "parent_id=8", NULL);
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	tfd_graph_list_calls(&c);
	for (size_t i = 0; i < c.iters.n; i++)
		absent += c.iters.v[i].absent && c.iters.v[i].ncalls == 0;
	T_TRUE(absent > 0);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

/* A bare `Iterator` event (an iterator's outer call as TensorFlow 1 writes
 * it) and a loop's own root (`ReduceIterator::Root`) are no calls of the
 * graph: the pipeline's calls inside them are, parented to each other, and
 * the loop root's first call is kept for its options. */
static void bare_and_loop_roots_are_no_calls(struct t *t)
{
	struct fx f;
	struct host_ctx c;
	struct tfd_err err = {0};
	size_t by_name = 0, orphans = 0;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator", 0, 500 * US, NULL);
	fx_ev(&f, 0, "Iterator::Model", 10 * US, 400 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::Map", 20 * US, 300 * US, "id=2", "parent_id=1", NULL);
	fx_ev(&f, 1, "ReduceIterator::Root", 0, 900 * US, "id=7", NULL);
	fx_ev(&f, 1, "Iterator::Model", 600 * US, 100 * US, "id=1", NULL);
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	T_EQ_U64(c.calls.n, 3);
	T_EQ_U64(c.iters.n, 2);
	for (size_t k = 0; k < c.calls.n; k++)
		T_TRUE(strncmp(c.iters.v[call_iter(&c, k)].long_name, "Iterator::Model", 15) == 0);
	/* the Map's call is inside the Model's, not the bare one's */
	T_TRUE(c.calls.v[1].parent == 0 && c.calls.v[0].parent < 0 && c.calls.v[2].parent < 0);
	T_TRUE(c.has_loop_root && strcmp(c.loop_root.sig->name, "ReduceIterator::Root") == 0);
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

/* A call's start and duration come back whole from their 7 bytes
 * (struct tfd_ptimes): durations of 2^24 ns and more (a block's high
 * bytes), ones that do not fit 32 bits (2^32 - 1 ns and more, negative
 * ones: a map), starts more than 2^31 ns from their block's first, before
 * or after it (the block's starts go whole), for the linking and for the
 * pipelines (which read the host's times), whose root calls are the calls
 * here. */
static void calls_keep_their_ends(struct t *t)
{
	static const int64_t dur[] = {5,
				      (int64_t)UINT32_MAX - 1,
				      (int64_t)UINT32_MAX,
				      (int64_t)UINT32_MAX + 1,
				      (int64_t)1 << 40,
				      0,
				      -7,
				      (int64_t)UINT32_MAX * 3 + 11};
	const size_t n = sizeof(dur) / sizeof(dur[0]);

	/* starts 2^50 ps apart, 1 s apart (both past 2^31 ns from the
	 * block's first: its starts go whole), and 2^50 ps apart in a span
	 * said to be 1 ns long */
	for (int variant = 0; variant < 3; variant++) {
		int64_t gap = variant == 1 ? 1000000000000 : (int64_t)1 << 50;
		struct fx f;
		struct host_ctx c;
		struct tfd_err err = {0};
		size_t by_name = 0, orphans = 0;

		fx_init(&f);
		for (size_t i = 0; i < n; i++) /* in time order */
			fx_ev(&f, 0, "Iterator::Model", (int64_t)i * gap, dur[i] * 1000, "id=1",
			      NULL);
		fx_finish(&f);
		if (variant) {
			f.h->span_start_ns = 0;
			f.h->span_end_ns = variant == 1 ? (int64_t)n * gap / 1000 : 1;
		}
		memset(&c, 0, sizeof(c));
		T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
		T_EQ_U64(c.calls.n, n);
		T_EQ_U64(c.times.nwide, 1);
		T_EQ_U64(c.times.nhi, 1);
		for (size_t k = 0; k < n && k < c.calls.n; k++) {
			T_EQ_I64(call_start(&c, k), (int64_t)k * gap / 1000);
			T_EQ_I64(call_end(&c, k), call_start(&c, k) + dur[k]);
		}
		tfd_graph_release(&c);
		{
			struct tfd_analysis *a = NULL;
			const struct tfd_pipeline *p;
			int64_t total = 0;

			T_OK(tfd_analyze(f.cap, NULL, &a, &err), &err);
			p = &a->hosts[0].pipelines[0];
			for (size_t k = 0; k < n; k++)
				total += dur[k];
			T_EQ_U64(p->ncalls, n);
			T_EQ_I64(p->max_ns, dur[4]);
			T_EQ_I64(p->first_start_ns, 0);
			T_EQ_I64(stage(p, "Model")->total_all_ns, total);
			tfd_analysis_free(a);
		}
		tfd_capture_free(f.cap);
	}
}

/* The 7-byte store of calls' times gives back every start and duration
 * as put, across blocks of 64 and past the room it was made with: starts
 * before their block's first and after it, within 2^31 ns and past it
 * (the block's starts go whole, those put before too), at the ends of
 * int64; durations under 2^24 ns, up to 2^32 - 2 (high bytes), past
 * 32 bits and negative (the map). */
static void times_store_round_trip(struct t *t)
{
	enum { N = 1000 };
	static int64_t start[N], dur[N];
	struct tfd_ptimes pt;
	uint64_t x = 88172645463325252ull;
	size_t wide_blocks = 0;

	for (size_t k = 0; k < N; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		switch (k / 64 % 4) {
		case 0: /* a thread's calls, about 1 ms apart */
			start[k] = (int64_t)k * 1000000 + (int64_t)(x % 1000);
			break;
		case 1: /* within a second of the block's first, before and after */
			start[k] = (int64_t)(k & ~(size_t)63) * 1000 + (int64_t)(x % 1000000000u) -
				   500000000;
			break;
		case 2: /* seconds apart: whole */
			start[k] = (int64_t)(x >> 1) % ((int64_t)1 << 50);
			break;
		default: /* the ends of int64 */
			start[k] =
			    x & 1 ? INT64_MAX - (int64_t)(x % 7) : INT64_MIN + (int64_t)(x % 7);
		}
		switch (x >> 40 & 7) {
		case 0:
			dur[k] = (int64_t)UINT32_MAX - 1 - (int64_t)(x >> 50 & 1);
			break;
		case 1:
			dur[k] = (int64_t)UINT32_MAX + (int64_t)(x >> 50 & 3);
			break;
		case 2:
			dur[k] = -(int64_t)(x >> 50 & 255);
			break;
		case 3:
			dur[k] = ((int64_t)1 << 24) + (int64_t)(x >> 50 & 255);
			break;
		default:
			dur[k] = (int64_t)(x >> 44 & 0xffffff);
		}
	}
	tfd_ptimes_init(&pt, 10);
	for (size_t k = 0; k < N; k++)
		tfd_ptimes_push(&pt, start[k], dur[k]);
	T_EQ_U64(pt.n, N);
	for (size_t k = 0; k < N; k++) {
		struct tfd_times tm = {.pt = &pt};

		if (tfd_ptimes_start(&pt, k) != start[k] || tfd_ptimes_dur(&pt, k) != dur[k]) {
			T_FAILF("call %zu: %lld %lld, put %lld %lld", k,
				(long long)tfd_ptimes_start(&pt, k),
				(long long)tfd_ptimes_dur(&pt, k), (long long)start[k],
				(long long)dur[k]);
			break;
		}
		if (k / 64 % 4 != 3) /* (no end past int64) */
			T_EQ_I64(tfd_times_end(&tm, k), start[k] + dur[k]);
	}
	for (size_t b = 0; b < (N + 63) / 64; b++)
		wide_blocks += pt.blk[b].wide != 0;
	/* the calls 1-1000 us apart and those within 2^31 ns of their
	 * block's first are not */
	T_EQ_U64(wide_blocks, pt.nwide);
	T_EQ_U64(pt.nwide, 8);
	T_TRUE(pt.nhi > 0 && pt.long_dur.n > 0);
	tfd_ptimes_free(&pt);
}

static void zip_two_inputs(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 0, 100 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::Zip", 0, 100 * US, "id=2", "parent_id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::Zip[0]::Range", 5 * US, 40 * US, "id=3", "parent_id=2",
	      NULL);
	fx_ev(&f, 0, "Iterator::Model::Zip[1]::TextLine", 50 * US, 45 * US, "id=4", "parent_id=2",
	      NULL);
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(stage(p, "Zip")->blocking_ns, 15 * 1000);
	T_EQ_I64(stage(p, "Range")->blocking_ns, 40 * 1000);
	T_EQ_STR(p->stages[p->bottleneck].name, "TextLine");
	T_EQ_STR(stage(p, "Range")->path, "Iterator::Model::Zip[0]::Range");
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* a zip's (or concatenate's) inputs are distinct datasets: branches whose
 * stages have the same names stay apart, and the slower branch's map is
 * the bottleneck (merged, they were one stage named by the first) */
static void zip_same_named_branches(struct t *t)
{
	static const char *const parents[] = {"Zip", "Concatenate", "DirectedInterleave"};

	for (size_t k = 0; k < 3; k++) {
		struct fx f;
		struct tfd_analysis *a;
		const struct tfd_pipeline *p;
		char n0[96], n1[96], z[64];
		size_t nmap = 0;

		snprintf(z, sizeof(z), "Iterator::Model::%s", parents[k]);
		snprintf(n0, sizeof(n0), "%s[0]::Map", z);
		snprintf(n1, sizeof(n1), "%s[1]::Map", z);
		fx_init(&f);
		fx_ev(&f, 0, "Iterator::Model", 0, 100 * US, "id=1", NULL);
		fx_ev(&f, 0, z, 0, 100 * US, "id=2", "parent_id=1", NULL);
		fx_ev(&f, 0, n0, 5 * US, 20 * US, "id=3", "parent_id=2", NULL);
		fx_ev(&f, 0, n1, 30 * US, 60 * US, "id=4", "parent_id=2", NULL);
		a = analyze(t, &f);
		p = &a->hosts[0].pipelines[0];
		for (size_t i = 0; i < p->nstages; i++)
			nmap += strcmp(p->stages[i].name, "Map") == 0;
		T_EQ_U64(nmap, 2);
		T_EQ_STR(p->stages[p->bottleneck].long_name, n1);
		check_invariants(t, p);
		tfd_analysis_free(a);
		tfd_capture_free(f.cap);
	}
}

/* interleave: ten input iterators (distinct ids, "[N]" names) merge into
 * one stage */
static void interleave_many_inputs(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;
	char id[32], name[96];

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 0, 200 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::ParallelInterleaveV4", 0, 200 * US, "id=2", "parent_id=1",
	      "cycle_length=10", NULL);
	for (int i = 0; i < 10; i++) {
		snprintf(id, sizeof(id), "id=%d", 100 + i);
		snprintf(name, sizeof(name), "Iterator::Model::ParallelInterleaveV4[%d]::TFRecord",
			 i);
		fx_ev(&f, 1 + i, name, (int64_t)i * 15 * US, 60 * US, id, "parent_id=2", NULL);
	}
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(p->nstages, 3);
	T_EQ_I64(stage(p, "TFRecord")->niterators, 10);
	T_EQ_I64(stage(p, "TFRecord")->calls_all, 10);
	T_EQ_STR(stage(p, "ParallelInterleaveV4")->family, "ParallelInterleave");
	T_EQ_STR(p->stages[p->bottleneck].name, "TFRecord");
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* everything was prefetched ahead: only the root blocks */
static void no_blocking_child(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_init(&f);
	fx_ev(&f, 1, "Iterator::Prefetch::Map", 0, 90 * US, "id=2", "parent_id=1", NULL);
	fx_ev(&f, 0, "Iterator::Prefetch", 100 * US, 10 * US, "id=1", NULL);
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_STR(p->stages[p->bottleneck].name, "Prefetch");
	T_EQ_I64(stage(p, "Map")->blocking_ns, 0);
	T_EQ_I64(p->links[TFD_LINK_NONE], 1);
	T_TRUE(!a->input_bound);
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

static void parent_id_cycle_is_an_error(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a = NULL;
	struct tfd_err err = {0};

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 0, 100 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::Map", 0, 90 * US, "id=2", "parent_id=3", NULL);
	fx_ev(&f, 0, "Iterator::Model::Map::Range", 0, 80 * US, "id=3", "parent_id=2", NULL);
	fx_finish(&f);
	T_TRUE(tfd_analyze(f.cap, NULL, &a, &err) == TFD_E_FORMAT);
	T_TRUE(strstr(err.msg, "cycle in iterator parent ids") != NULL);
	T_TRUE(a == NULL);
	tfd_capture_free(f.cap);
}

/* TensorFlow's iterator ids are addresses: the next epoch's inner iterator
 * got the dead one's id under another parent. Each epoch's pipeline keeps
 * its own calls (they had all gone to the first pipeline). */
static void reused_id_is_another_iterator(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p0, *p1;

	fx_init(&f);
	for (int ep = 0; ep < 2; ep++) {
		char root[32], fm[32], fmp[32], gp[32];
		int64_t b = ep * 10000 * US;

		snprintf(root, sizeof(root), "id=%d", 100 + ep);
		snprintf(fm, sizeof(fm), "id=%d", 200 + ep);
		snprintf(fmp, sizeof(fmp), "parent_id=%d", 100 + ep);
		snprintf(gp, sizeof(gp), "parent_id=%d", 200 + ep);
		for (int i = 0; i < 4; i++) {
			int64_t c = b + i * 1000 * US;

			fx_ev(&f, 0, "Iterator::Root", c, 900 * US, root, NULL);
			fx_ev(&f, 0, "Iterator::Root::FlatMap", c + 10 * US, 880 * US, fm, fmp,
			      NULL);
			fx_ev(&f, 0, "Iterator::Root::FlatMap[0]::Generator", c + 20 * US,
			      (ep ? 800 : 400) * US, "id=300", gp, NULL);
		}
	}
	a = analyze(t, &f);
	T_EQ_I64(a->hosts[0].npipelines, 2);
	p0 = &a->hosts[0].pipelines[0];
	p1 = &a->hosts[0].pipelines[1];
	T_TRUE(stage(p0, "Generator") != NULL && stage(p1, "Generator") != NULL);
	T_EQ_I64(stage(p0, "Generator")->calls, 4);
	T_EQ_I64(stage(p1, "Generator")->calls, 4);
	T_EQ_I64(stage(p0, "Generator")->total_ns + stage(p1, "Generator")->total_ns,
		 4 * 1200 * US / 1000);
	check_invariants(t, p0);
	check_invariants(t, p1);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* A root's address reused by another dataset's iterator: a Keras epoch's
 * training iterator made where the validation pass's had been (the `name`
 * stat says which dataset). Each dataset keeps its own pipeline; a root
 * reused by the same dataset stays one iterator, as before. */
static void reused_root_of_another_dataset(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	size_t train = 0, val = 0;

	fx_init(&f);
	for (int pass = 0; pass < 3; pass++) {
		/* pass 0: training (root 100), 1: validation (root 101), 2: the
		 * next epoch's training at the validation iterator's address */
		const char *name =
		    pass == 1 ? "name=PrefetchDataset:15" : "name=PrefetchDataset:16";
		const char *root = pass == 0 ? "id=100" : "id=101";
		const char *child = pass == 0 ? "id=200" : pass == 1 ? "id=201" : "id=202";
		const char *cpar = pass == 0 ? "parent_id=100" : "parent_id=101";

		for (int i = 0; i < 4; i++) {
			int64_t c = pass * 10000 * US + i * 1000 * US;

			fx_ev(&f, 0, "Iterator::Root", c, 500 * US, root, name, NULL);
			fx_ev(&f, 0, "Iterator::Root::Prefetch", c + 10 * US, 480 * US, child, cpar,
			      name, NULL);
		}
	}
	a = analyze(t, &f);
	T_EQ_I64(a->hosts[0].npipelines, 3);
	for (size_t i = 0; i < a->hosts[0].npipelines; i++) {
		const struct tfd_pipeline *p = &a->hosts[0].pipelines[i];
		const char *n = tfd_event_param(p->stages[0].sample, "name");

		T_EQ_I64(p->stages[0].calls, 4);
		if (n && strcmp(n, "PrefetchDataset:15") == 0)
			val++;
		else if (n && strcmp(n, "PrefetchDataset:16") == 0)
			train++;
	}
	T_EQ_I64(train, 2);
	T_EQ_I64(val, 1);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* A producer that made clearly fewer elements than its consumer took: its
 * thread's events were lost (TensorFlow 2.15 keeps none of a thread that
 * ended before the profile stopped). The bottleneck's confidence says so;
 * with every element there it does not. */
static void lost_producer_events(struct t *t)
{
	for (int lose = 0; lose < 2; lose++) {
		struct fx f;
		struct tfd_analysis *a;
		const struct tfd_pipeline *p;

		fx_init(&f);
		for (int i = 0; i < 24; i++) {
			int64_t c = i * 1000 * US;

			fx_ev(&f, 0, "Iterator::Root", c, 600 * US, "id=1", NULL);
			fx_ev(&f, 0, "Iterator::Root::Prefetch", c + 10 * US, 580 * US, "id=2",
			      "parent_id=1", "buffer_limit=1", NULL);
			if (!lose || i % 2 == 0)
				fx_ev(&f, 1, "Iterator::Root::Prefetch::Map", c + 20 * US, 900 * US,
				      "id=3", "parent_id=2", NULL);
		}
		a = analyze(t, &f);
		p = &a->hosts[0].pipelines[0];
		T_TRUE((strstr(p->confidence.reasons, "events were lost") != NULL) == (lose == 1));
		if (lose)
			T_EQ_I64(p->confidence.level, TFD_CONF_LOW);
		tfd_analysis_free(a);
		tfd_capture_free(f.cap);
	}
}

/* Pipeline k's root call at `at` (an id of its own, its dataset's name
 * `name`) and its prefetch's below it. */
static void root_and_prefetch(struct fx *f, int k, const char *name, int64_t at)
{
	char id[32], cid[32], pid[32];

	snprintf(id, sizeof(id), "id=%d", 100 + k);
	snprintf(cid, sizeof(cid), "id=%d", 200 + k);
	snprintf(pid, sizeof(pid), "parent_id=%d", 100 + k);
	fx_ev(f, 0, "Iterator::Root", at, 600 * US, id, name, NULL);
	fx_ev(f, 0, "Iterator::Root::Prefetch", at + 10 * US, 580 * US, cid, pid, NULL);
}

/* f analyzed (and freed): its n pipelines' repeats of another. */
static size_t repeats_of(struct t *t, struct fx *f, int n)
{
	struct tfd_analysis *a = analyze(t, f);
	const struct tfd_host_result *h = &a->hosts[0];
	size_t repeats = 0;

	T_EQ_I64(h->npipelines, n);
	for (size_t i = 0; i < h->npipelines; i++)
		repeats += h->pipelines[i].repeat_of1 != 0;
	tfd_analysis_free(a);
	tfd_capture_free(f->cap);
	return repeats;
}

/* TensorFlow 2.12 and 2.15 number every root's dataset (RootDataset:57):
 * `ds.take(1)` made each step gets a new number, so one-shot pipelines
 * (each root called at most twice) of the same shape are one pipeline
 * made anew; two datasets read for long keep their own numbers and stay
 * apart however alike their shapes. */
static void numbered_one_shot_roots_repeat(struct t *t)
{
	for (int longread = 0; longread < 2; longread++) {
		struct fx f;
		int n = longread ? 2 : 10;

		fx_init(&f);
		for (int k = 0; k < n; k++) {
			char name[48];

			snprintf(name, sizeof(name), "name=RootDataset:%d", 55 + 2 * k);
			for (int c = 0; c < (longread ? 12 : 1); c++)
				root_and_prefetch(&f, k, name, (k * 20 + c) * 1000 * US);
		}
		T_EQ_I64(repeats_of(t, &f, n), longread ? 0 : n - 1);
	}
}

/* A dataset made anew for each iterator (a graph's iterator.initializer
 * run each epoch rebuilds it: PrefetchDataset:24, :29, :34): three or more
 * pipelines of one shape, each a new number, read one after another, are
 * one pipeline made anew; read side by side, or two of them, they stay
 * apart. */
static void remade_datasets_repeat(struct t *t)
{
	for (int side = 0; side < 3; side++) {
		struct fx f;
		int n = side == 2 ? 2 : 3;

		fx_init(&f);
		for (int k = 0; k < n; k++) {
			char name[48];

			snprintf(name, sizeof(name), "name=PrefetchDataset:%d", 24 + 5 * k);
			/* side by side: the pipelines' calls interleave */
			for (int c = 0; c < 12; c++)
				root_and_prefetch(&f, k, name,
						  (side == 1 ? c * 20 + k * 5 : k * 400 + c * 20) *
						      1000 * US);
		}
		T_EQ_I64(repeats_of(t, &f, n), side == 0 ? n - 1 : 0);
	}
}

/* one id under thousands of parents (a hostile file): one iterator per
 * (id, parent) pair, found by the pair, and the children of that id are
 * linked to one of the last made with it, never to all in turn */
static void one_id_many_parents(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 0, 100000 * US, "id=1", NULL);
	for (int i = 0; i < 3000; i++) {
		char pid[32], cid[32];

		snprintf(pid, sizeof(pid), "parent_id=%d", 100 + i);
		snprintf(cid, sizeof(cid), "id=%d", 10000 + i);
		fx_ev(&f, 0, "Iterator::Model::Map", i * 10 * US, 5 * US, "id=7", pid, NULL);
		fx_ev(&f, 0, "Iterator::Model::Map::Range", i * 10 * US + US, 2 * US, cid,
		      "parent_id=7", NULL);
	}
	a = analyze(t, &f);
	T_EQ_I64(a->hosts[0].npipelines, 1);
	T_EQ_I64(a->hosts[0].pipelines[0].nstages, 3);
	T_EQ_I64(stage(&a->hosts[0].pipelines[0], "Range")->calls, 3000);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

static void dangling_parent_uses_long_name(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 0, 100 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::Map", 0, 90 * US, "id=2", "parent_id=999", NULL);
	fx_ev(&f, 0, "Iterator::Model::Map::MemoryCacheImpl", 0, 80 * US, "id=0", NULL);
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(p->nstages, 3);
	T_EQ_STR(stage(p, "MemoryCacheImpl")->family, "MemoryCache");
	T_TRUE(a->ndiags >= 1);
	T_TRUE(strstr(a->diags[0].msg, "linked by long name") != NULL);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* A capture stopped while a shuffle filled its buffer: only the map below
 * it made calls, their parent_id naming no iterator captured. The shuffle
 * and those above it are made from the map's long name (absent, no call),
 * the first with the map's parent_id, so that a second map iterator with
 * it hangs under the same one; the pipeline's root is absent too, and the
 * shuffle is its bottleneck. */
static void absent_parents_from_long_names(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;
	const struct tfd_stage *sh;

	fx_init(&f);
	for (int i = 0; i < 40; i++)
		fx_ev(&f, i % 2, "Iterator::Root::Prefetch::Shuffle::ParallelMapV2",
		      (int64_t)i * 1000 * US, 900 * US, "id=7", "parent_id=5", NULL);
	a = analyze(t, &f);
	T_EQ_I64(a->hosts[0].npipelines, 1);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(p->nstages, 4);
	T_TRUE(tfd_stage_outlasted(&p->stages[0]));
	sh = stage(p, "Shuffle");
	T_TRUE(sh && tfd_stage_outlasted(sh));
	T_EQ_U64(stage(p, "ParallelMapV2")->calls_all, 40);
	T_TRUE(p->bottleneck >= 0 && &p->stages[p->bottleneck] == sh);
	T_TRUE(a->ndiags >= 1);
	T_TRUE(strstr(a->diags[0].msg, "3 iterator(s) known from their inputs alone") != NULL);
	/* the loop waited through the capture: no IteratorGetNext shows it */
	T_TRUE(a->hosts[0].input_pct > 90);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* The parent of an iterator that no call shows, made from a child's long
 * name, gets that child's parent_id: a sibling with the same parent_id
 * finds it by id, and an iterator whose parent does show is left alone. */
static void absent_parent_takes_the_parent_id(struct t *t)
{
	struct fx f;
	struct host_ctx c;
	struct tfd_err err = {0};
	size_t by_name = 0, orphans = 0, absent = 0;
	int shuffle = -1;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Root", 0, 100 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Root::Prefetch", 0, 90 * US, "id=2", "parent_id=1", NULL);
	fx_ev(&f, 1, "Iterator::Root::Prefetch::Shuffle::Map", 0, 10 * US, "id=4", "parent_id=3",
	      NULL);
	fx_ev(&f, 2, "Iterator::Root::Prefetch::Shuffle::Map", 0, 10 * US, "id=5", "parent_id=3",
	      NULL);
	fx_finish(&f);
	memset(&c, 0, sizeof(c));
	T_OK(tfd_graph_build(&c, f.h, NULL, &by_name, &orphans, &err), &err);
	T_EQ_U64(by_name, 0);
	T_EQ_U64(orphans, 0);
	for (size_t i = 0; i < c.iters.n; i++)
		if (c.iters.v[i].absent) {
			absent++;
			shuffle = (int)i;
		}
	T_EQ_U64(absent, 1);
	T_TRUE(shuffle >= 0);
	if (shuffle >= 0) {
		T_EQ_U64(c.iters.v[shuffle].id, 3);
		T_EQ_STR(c.iters.v[shuffle].long_name, "Iterator::Root::Prefetch::Shuffle");
		T_EQ_U64(c.iters.v[c.iters.v[shuffle].parent].id, 2);
		for (size_t i = 0; i < c.iters.n; i++)
			if (c.iters.v[i].id == 4 || c.iters.v[i].id == 5)
				T_EQ_I64(c.iters.v[i].parent, shuffle);
	}
	tfd_graph_release(&c);
	tfd_capture_free(f.cap);
}

static void warmup_excluded(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;

	fx_init(&f);
	/* first call fills a shuffle buffer: 5 ms; then nine 100 us calls */
	fx_ev(&f, 0, "Iterator::Model", 0, 5000 * US, "id=1", NULL);
	fx_ev(&f, 0, "Iterator::Model::Shuffle", 0, 4990 * US, "id=2", "parent_id=1", NULL);
	for (int i = 1; i < 10; i++) {
		int64_t b = i * 10000 * US;

		fx_ev(&f, 0, "Iterator::Model", b, 100 * US, "id=1", NULL);
		fx_ev(&f, 0, "Iterator::Model::Shuffle", b, 90 * US, "id=2", "parent_id=1", NULL);
		fx_ev(&f, 0, "Iterator::Model::Shuffle::MapV2", b, 80 * US, "id=3", "parent_id=2",
		      NULL);
	}
	a = analyze(t, &f);
	p = &a->hosts[0].pipelines[0];
	T_EQ_I64(p->nwarmup, 1);
	T_EQ_I64(p->nanalyzed, 9);
	T_EQ_STR(p->stages[p->bottleneck].name, "MapV2");
	T_EQ_I64(p->max_ns, 5000 * 1000);
	check_invariants(t, p);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* --rank: the r-th slowest root call alone, ties in time order */
static void rank_picks_one_call(struct t *t)
{
	static const int64_t dur_us[] = {300, 900, 100, 900, 500};
	struct tfd_analysis *a = NULL;
	struct tfd_analyze_opts o = {0};
	struct tfd_err err = {0};
	struct fx f;
	const struct tfd_pipeline *p;

	fx_init(&f);
	for (int i = 0; i < 5; i++) {
		int64_t b = i * 10000 * US;

		fx_ev(&f, 0, "Iterator::Model", b, dur_us[i] * US, "id=1", NULL);
		fx_ev(&f, 0, "Iterator::Model::MapV2", b, (dur_us[i] - 10) * US, "id=2",
		      "parent_id=1", NULL);
	}
	fx_finish(&f);
	o.rank_set = true;
	for (int r = 0; r < 3; r++) {
		static const int64_t want_us[] = {900, 900, 500};

		o.rank = r;
		T_OK(tfd_analyze(f.cap, &o, &a, &err), &err);
		p = &a->hosts[0].pipelines[0];
		T_EQ_I64(p->analyzed_rank, r);
		T_EQ_I64(p->nanalyzed, 1);
		T_EQ_I64(p->analyzed_ns, want_us[r] * 1000);
		tfd_analysis_free(a);
	}
	o.rank = 5; /* past the last call: nothing analyzed */
	T_OK(tfd_analyze(f.cap, &o, &a, &err), &err);
	T_EQ_I64(a->hosts[0].pipelines[0].analyzed_rank, -1);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

static void families(struct t *t)
{
	char b[64];

	T_EQ_STR(tfd_iter_family("ParallelInterleaveV4[0]", b, sizeof(b)), "ParallelInterleave");
	T_EQ_STR(tfd_iter_family("LegacyParallelInterleaveV2", b, sizeof(b)),
		 "LegacyParallelInterleave");
	T_EQ_STR(tfd_iter_family("FixedLengthRecordV2", b, sizeof(b)), "FixedLengthRecord");
	T_EQ_STR(tfd_iter_family("TFRecord", b, sizeof(b)), "TFRecord");
	T_EQ_STR(tfd_iter_family("ForeverRepeat", b, sizeof(b)), "Repeat");
	T_EQ_STR(tfd_iter_family("PaddedBatchV2", b, sizeof(b)), "PaddedBatch");
	T_EQ_STR(tfd_iter_short("Iterator::Model::Zip[1]::FromTensor"), "FromTensor");
}

/* The critical path weighs an edge by its head's blocking time, so an
 * observed edge seen many times counts as once: the pipeline passes each
 * edge once, and a path (ties included) must not change with repeats. */
static void critpath_ignores_repeated_edges(struct t *t)
{
	/* 0 Model -> {1 A, 2 B}, 3 C under A; B -> C observed. Path via A or B:
	 * a tie when both block the same, B's when B blocks more */
	static const int parent[] = {-1, 0, 0, 1}, ef[] = {2, 1, 2}, et[] = {3, 3, 3};
	static const int64_t blk[][4] = {{0, 10, 10, 5}, {0, 10, 50, 5}, {0, 50, 10, 5}};
	static const int want_mid[] = {-1, 2, 1};

	for (size_t c = 0; c < 3; c++) {
		struct tfd_pipeline p1, p2;
		struct tfd_stage st1[4], st2[4];
		int rf[30], rt[30];
		struct tfd_err err = {0};

		memset(&p1, 0, sizeof(p1));
		memset(st1, 0, sizeof(st1));
		for (int i = 0; i < 4; i++) {
			st1[i].parent = parent[i];
			st1[i].blocking_ns = blk[c][i];
		}
		memcpy(st2, st1, sizeof(st1));
		p1.stages = st1;
		p1.nstages = 4;
		p2 = p1;
		p2.stages = st2;
		for (int i = 0; i < 30; i++) { /* every edge ten times, interleaved */
			rf[i] = ef[i % 3];
			rt[i] = et[i % 3];
		}
		T_OK(tfd_critpath_compute(&p1, ef + 1, et + 1, 2, 3, &err), &err);
		T_OK(tfd_critpath_compute(&p2, rf, rt, 30, 3, &err), &err);
		T_EQ_I64(p1.ncritpath, 3);
		T_EQ_I64(p2.ncritpath, p1.ncritpath);
		for (size_t k = 0; k < p1.ncritpath; k++)
			T_EQ_I64(p2.critpath[k], p1.critpath[k]);
		if (want_mid[c] >= 0)
			T_EQ_I64(p1.critpath[1], want_mid[c]);
		free(p1.critpath);
		free(p2.critpath);
	}
}

/* ---- real captures --------------------------------------------------- */

/* real captures in the repository (their sources: tests/cases/ok/README.md) */
#define CAPS "examples/"

static struct tfd_analysis *load_and_analyze(struct t *t, const char *path,
					     struct tfd_capture **cap)
{
	struct tfd_analysis *a = NULL;
	struct tfd_err err = {0};
	const char *paths[] = {path};

	T_OK(tfd_capture_load(paths, 1, NULL, cap, &err), &err);
	T_OK(tfd_analyze(*cap, NULL, &a, &err), &err);
	return a;
}

static void smdebug_8gpu_invariants(struct t *t)
{
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *a =
	    load_and_analyze(t, CAPS "smdebug-8gpu/ip-172-31-19-241.trace.json", &cap);
	const struct tfd_pipeline *p = &a->hosts[0].pipelines[a->hosts[0].focus];
	double share = 0;

	T_EQ_STR(p->stages[0].long_name, "Iterator::Model");
	T_TRUE(p->bottleneck >= 0);
	T_EQ_STR(p->stages[p->bottleneck].long_name, "Iterator::Model::ForeverRepeat::Map");
	T_EQ_I64(p->ncritpath, 3);
	T_EQ_STR(p->stages[p->critpath[1]].name, "ForeverRepeat");
	for (size_t i = 0; i < p->nstages; i++)
		share += p->stages[i].blocking_share;
	T_EQ_DBL(share, 1.0, 0.01); /* blocking times sum to the root latency */
	check_invariants(t, p);
	T_TRUE(a->input_bound);
	tfd_analysis_free(a);
	tfd_capture_free(cap);
}

/* the same capture as XSpace and as Chrome JSON gives the same answer */
static void ai_notebook_formats_agree(struct t *t)
{
	struct tfd_capture *c1 = NULL, *c2 = NULL;
	struct tfd_analysis *a1 =
	    load_and_analyze(t, "examples/ai-notebook/ai-notebook.xplane.pb", &c1);
	struct tfd_analysis *a2 =
	    load_and_analyze(t, "examples/ai-notebook/ai-notebook.trace.json.gz", &c2);
	const struct tfd_host_result *h1 = &a1->hosts[0], *h2 = &a2->hosts[0];

	T_EQ_I64(h1->npipelines, 2);
	T_EQ_I64(h2->npipelines, h1->npipelines);
	for (size_t i = 0; i < h1->npipelines; i++) {
		const struct tfd_pipeline *p1 = &h1->pipelines[i], *p2 = &h2->pipelines[i];

		T_EQ_STR(p2->name, p1->name);
		T_EQ_U64(p2->root_id, p1->root_id);
		T_EQ_I64(p2->nstages, p1->nstages);
		T_EQ_I64(p2->max_ns, p1->max_ns);
		T_EQ_STR(p2->stages[p2->bottleneck].long_name,
			 p1->stages[p1->bottleneck].long_name);
		T_EQ_I64(p2->ncritpath, p1->ncritpath);
		for (size_t k = 0; k < p1->ncritpath; k++)
			T_EQ_STR(p2->stages[p2->critpath[k]].long_name,
				 p1->stages[p1->critpath[k]].long_name);
		for (size_t k = 0; k < p1->nstages; k++)
			T_EQ_I64(p2->stages[k].blocking_ns, p1->stages[k].blocking_ns);
	}
	/* the spec's derived numbers: Model self 22.129 us, Prefetch 14.650 us */
	T_EQ_STR(h1->pipelines[0].stages[h1->pipelines[0].bottleneck].name, "Model");
	T_EQ_I64(h1->pipelines[0].stages[0].blocking_ns, 22129);
	T_TRUE(h1->pipelines[1].is_device);
	tfd_analysis_free(a1);
	tfd_analysis_free(a2);
	tfd_capture_free(c1);
	tfd_capture_free(c2);
}

/* The k-th smallest by selection is the sorted array's k-th, for every k of
 * arrays of 1 to 120 values, few distinct (ties) and many, in order,
 * reversed and shuffled; and the selection leaves no larger value before
 * it, no smaller after. */
static void selection_matches_sort(struct t *t)
{
	unsigned seed = 12345;
	int64_t v[120], w[120], s[120];
	double d[120];

	for (size_t n = 1; n <= 120; n += (n < 10 ? 1 : 7))
		for (int shape = 0; shape < 4; shape++) {
			for (size_t i = 0; i < n; i++) {
				seed = seed * 1103515245u + 12345u;
				v[i] = shape == 0   ? (int64_t)(seed >> 16) % 5 - 2
				       : shape == 1 ? (int64_t)i
				       : shape == 2 ? (int64_t)(n - i)
						    : (int64_t)(seed >> 8) * 977 - (1ll << 40);
			}
			memcpy(s, v, n * sizeof(*v));
			qsort(s, n, sizeof(*s), tfd_cmp_i64);
			for (size_t k = 0; k < n; k++) {
				int64_t got;

				memcpy(w, v, n * sizeof(*v));
				got = tfd_kth_i64(w, n, k);
				for (size_t i = 0; i < n; i++)
					d[i] = (double)v[i];
				if (got != s[k] || tfd_kth_dbl(d, n, k) != (double)s[k])
					T_FAILF("n %zu shape %d k %zu: %lld, sorted %lld", n, shape,
						k, (long long)got, (long long)s[k]);
				for (size_t i = 0; i < n; i++)
					if ((i < k && w[i] > got) || (i > k && w[i] < got))
						T_FAILF("n %zu shape %d k %zu: %lld at %zu", n,
							shape, k, (long long)w[i], i);
			}
		}
}

static int u64_order(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* 64-bit keys sorted by their bytes (tfd_sort_u64, tfd_sort_i64) as qsort
 * sorts them: sizes about the insertion bound (64) and far past it; keys
 * sharing their high bytes (a pass skipped), random ones, negative and
 * positive, duplicates, the extremes; keys in order already (no pass at
 * all), and in order but for their last two. */
static void radix_sort_matches_qsort(struct t *t)
{
	static const size_t sizes[] = {0, 1, 2, 63, 64, 65, 1000, 70000};
	unsigned seed = 4242;

	for (size_t z = 0; z < sizeof(sizes) / sizeof(*sizes); z++)
		for (int shape = 0; shape < 7; shape++) {
			size_t n = sizes[z];
			int64_t *v = malloc((n + 1) * sizeof(*v)),
				*s = malloc((n + 1) * sizeof(*s));
			uint64_t *u = malloc((n + 1) * sizeof(*u)),
				 *us = malloc((n + 1) * sizeof(*us));

			for (size_t i = 0; i < n; i++) {
				uint64_t r = (uint64_t)rand_r(&seed) << 33 ^
					     (uint64_t)rand_r(&seed) << 11 ^
					     (uint64_t)rand_r(&seed);

				/* (shape 4: three bytes differ, an odd number of passes) */
				v[i] = shape == 0   ? (int64_t)(r % 1000) + 1700000000000000000ll
				       : shape == 4 ? (int64_t)(r % 16777216)
				       : shape == 1 ? (int64_t)r
				       : shape == 2 ? (int64_t)(r % 7) - 3
						    : (i % 3 ? INT64_MIN + (int64_t)(r % 3)
							     : INT64_MAX - (int64_t)(r % 3));
				if (shape >= 5) /* (in order: a stream's groups) */
					v[i] = (int64_t)i * 5 - 1000;
				u[i] = (uint64_t)v[i];
			}
			if (shape == 6 && n > 1) {
				int64_t x = v[n - 1];

				v[n - 1] = v[n - 2];
				v[n - 2] = x;
				u[n - 1] = (uint64_t)v[n - 1];
				u[n - 2] = (uint64_t)v[n - 2];
			}
			memcpy(s, v, n * sizeof(*v));
			memcpy(us, u, n * sizeof(*u));
			qsort(s, n, sizeof(*s), tfd_cmp_i64);
			qsort(us, n, sizeof(*us), u64_order);
			tfd_sort_i64(v, n);
			tfd_sort_u64(u, n);
			if (n && memcmp(v, s, n * sizeof(*v)))
				T_FAILF("n %zu shape %d: int64_t keys out of order", n, shape);
			if (n && memcmp(u, us, n * sizeof(*u)))
				T_FAILF("n %zu shape %d: uint64_t keys out of order", n, shape);
			free(v);
			free(s);
			free(u);
			free(us);
		}
}

/* Synchronous stragglers: steps as long on every host, the named ones wait
 * for input 10 points or more above the median of the other hosts (each
 * host's own share taken out of that median); hosts of a fleet that wait
 * alike are not named. */
static void synchronous_stragglers_by_input(struct t *t)
{
	static const double pcts[][6] = {
	    {60, 2, 3, 4, 1, -1},  /* one: the others' median 2.5 */
	    {60, 58, 1, 2, 3, -1}, /* two: each against 2.5 (the other's share out) */
	    {30, 29, 28, 27, 26, -1},
	    {12, 2, -1}, /* two hosts: 10 points apart */
	};
	static const size_t want[] = {1, 2, 0, 1};

	for (size_t c = 0; c < sizeof(want) / sizeof(want[0]); c++) {
		struct tfd_host_result hs[6];
		struct tfd_analysis a = {.hosts = hs};

		memset(hs, 0, sizeof(hs));
		for (size_t i = 0; pcts[c][i] >= 0; i++, a.nhosts++) {
			hs[i].input_pct = pcts[c][i];
			hs[i].bound = tfd_bound_of(pcts[c][i]);
			hs[i].input_basis = "steps";
			hs[i].nsteps = 20;
			hs[i].step_ns = 20 * 10000000LL;
		}
		tfd_stragglers_find(&a);
		T_EQ_U64(a.nstragglers, want[c]);
		for (size_t k = 0; k < a.nstragglers; k++) {
			T_EQ_U64(a.stragglers[k].host, k);
			T_TRUE(a.stragglers[k].synchronous);
			T_EQ_DBL(a.stragglers[k].peers_input_pct, c == 3 ? 2.0 : 2.5, 1e-9);
		}
		free(a.stragglers);
	}
}

/* One host: 8 step markers 10 ms long, 10 ms apart; a wait of `gap` ms
 * before each step (between the markers) and one of `in` ms inside it;
 * with over_us, the fourth runs that far into the fifth (its gap's wait
 * inside it). */
static struct tfd_analysis *marker_steps(struct t *t, int64_t gap, int64_t in, int64_t over_us)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint32_t th = tfd_host_thread(cap, h, 1, "python");
	struct tfd_analysis *a = NULL;
	struct tfd_err err = {0};
	const int64_t ms = 1000000;

	for (int64_t i = 0; i < 8; i++) {
		int64_t s = i * 20 * ms + 10 * ms;

		if (gap)
			tfd_host_add_event(cap, h, th, "IteratorGetNext", s - gap * ms, gap * ms);
		if (in)
			tfd_host_add_event(cap, h, th, "IteratorGetNext", s, in * ms);
		tfd_host_step_marker(h, "train", 1, i, s,
				     i == 3 && over_us ? s + 20 * ms + over_us * 1000 : s + 10 * ms,
				     false, 0);
		tfd_host_note(cap, h, false, 0, s - 10 * ms, s + 10 * ms);
	}
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_OK(tfd_analyze(cap, NULL, &a, &err), &err);
	tfd_capture_free(cap);
	return a;
}

/* next() before the step marker: the waits between the markers count,
 * each step running to the next step's start; TensorFlow's convention
 * over the markers alone is kept beside; waits inside the markers, or too
 * few between them, leave the markers as they are */
static void waits_between_markers(struct t *t)
{
	struct tfd_analysis *a = marker_steps(t, 6, 0, 0);
	const struct tfd_host_result *h = &a->hosts[0];

	T_TRUE(h->gaps_counted);
	T_EQ_I64(h->gap_wait_ns, 7 * 6000000LL); /* the first step's is before them */
	T_EQ_DBL(h->markers_pct, 0.0, 1e-9);
	/* the tf steps: the 6 middle ones of 20 ms, each with the next one's wait */
	T_EQ_DBL(h->tf.pct, 30.0, 1e-9);
	T_EQ_I64(h->bound, TFD_BOUND_HIGH);
	tfd_analysis_free(a);
	a = marker_steps(t, 6, 7, 0); /* more inside than between */
	T_TRUE(!a->hosts[0].gaps_counted);
	T_EQ_DBL(a->hosts[0].tf.pct, 70.0, 1e-9);
	tfd_analysis_free(a);
	/* a step overlapping the next by 0.5 ms, a fortieth of itself (a
	 * group's last async ops, in a converted trace): the steps still
	 * follow each other; by 3 ms, more than a tenth of it, they do not */
	a = marker_steps(t, 6, 0, 500);
	T_TRUE(a->hosts[0].gaps_counted);
	T_EQ_I64(a->hosts[0].gap_wait_ns, 6 * 6000000LL);
	tfd_analysis_free(a);
	a = marker_steps(t, 6, 0, 3000);
	T_TRUE(!a->hosts[0].gaps_counted);
	tfd_analysis_free(a);
	a = marker_steps(t, 0, 0, 0);
	T_TRUE(!a->hosts[0].gaps_counted);
	T_TRUE(isnan(a->hosts[0].markers_pct));
	tfd_analysis_free(a);
}

/* Python ops that take turns at the interpreter's lock wait for the one
 * still running when they start; ops that wait on something else last as
 * long either way; one at a time, or too few, says nothing. */
static void python_overlap(struct t *t)
{
	struct tfd_py_op iv[64];
	struct tfd_host h;
	size_t n = 0;
	int64_t at = 0;

	memset(&h, 0, sizeof(h));
	h.py_ops = iv;
	/* taking turns: 1 ms of Python each; of two started at once, the
	 * second waits for the first */
	for (int i = 0; i < 16; i++, at += 10000000) {
		iv[n++] = (struct tfd_py_op){at, at + 1000000, 0, false};
		iv[n++] = (struct tfd_py_op){at + 3000000, at + 4000000, 0, false};
		iv[n++] = (struct tfd_py_op){at + 3000000, at + 5000000, 0, false};
	}
	h.npy_ops = n;
	T_TRUE(tfd_python_overlap(&h) == TFD_PY_TAKE_TURNS);
	/* side by side: 2 ms whatever runs beside */
	n = 0;
	for (int i = 0; i < 16; i++, at += 10000000) {
		iv[n++] = (struct tfd_py_op){at, at + 2000000, 0, false};
		iv[n++] = (struct tfd_py_op){at + 3000000, at + 5000000, 0, false};
		iv[n++] = (struct tfd_py_op){at + 3000000, at + 5000000, 0, false};
	}
	h.npy_ops = n;
	T_TRUE(tfd_python_overlap(&h) == TFD_PY_SIDE_BY_SIDE);
	/* one at a time: no spread in how many run at once */
	n = 0;
	for (int i = 0; i < 32; i++, at += 3000000)
		iv[n++] = (struct tfd_py_op){at, at + 1000000 + (i % 3) * 100000, 0, false};
	h.npy_ops = n;
	T_TRUE(tfd_python_overlap(&h) == TFD_PY_UNKNOWN);
	/* too few calls */
	h.npy_ops = 12;
	T_TRUE(tfd_python_overlap(&h) == TFD_PY_UNKNOWN);
	/* two functions that sleep, 0.4 ms and 2.6 ms whatever runs beside:
	 * the long ones happen to start with more calls running, so over all
	 * calls together the duration grows with the calls ahead (mixb_120's
	 * reads and map) while within each function it does not */
	n = 0;
	for (int i = 0; i < 16; i++, at += 20000000) {
		iv[n++] = (struct tfd_py_op){at, at + 400000, 1, false};
		iv[n++] = (struct tfd_py_op){at + 100000, at + 2700000, 2, false};
		iv[n++] = (struct tfd_py_op){at + 1000000, at + 1400000, 1, false};
		iv[n++] = (struct tfd_py_op){at + 1100000, at + 3700000, 2, false};
	}
	h.npy_ops = n;
	T_TRUE(tfd_python_overlap(&h) == TFD_PY_SIDE_BY_SIDE);
	for (size_t i = 0; i < n; i++)
		iv[i].fn = 0;
	T_TRUE(tfd_python_overlap(&h) == TFD_PY_TAKE_TURNS);
}

/* An arena given back with tfd_arena_recycle() leaves its chunk to the
 * next arena, which gets it zeroed, where it left it written. */
static void arena_recycle_reuses_chunks(struct t *t)
{
	struct tfd_arena a, b;
	size_t s0 = tfd_arena_spare_bytes();
	unsigned char *p, *q;
	bool zero = true;

	tfd_arena_init(&a);
	p = tfd_arena_alloc(&a, 100);
	memset(p, 0xab, 100);
	tfd_arena_recycle(&a);
	T_TRUE(tfd_arena_spare_bytes() > s0);
	tfd_arena_init(&b);
	q = tfd_arena_alloc(&b, 100);
	T_TRUE(q == p); /* the chunk kept last is taken first */
	T_EQ_U64(tfd_arena_spare_bytes(), s0);
	for (size_t i = 0; i < 100; i++)
		zero = zero && q[i] == 0;
	T_TRUE(zero);
	tfd_arena_release(&b);
}

/* A rewound arena hands its newest chunk out again from the start, zeroed,
 * and keeps no other: a scratch arena reused message by message (the
 * XSpace reader's metadata) holds one message's memory, not all of them. */
static void arena_rewind_reuses_newest(struct t *t)
{
	struct tfd_arena a;
	unsigned char *p, *big, *q;
	bool zero = true;

	tfd_arena_init(&a);
	tfd_arena_rewind(&a); /* (empty: nothing to do) */
	p = tfd_arena_alloc(&a, 100);
	memset(p, 0xab, 100);
	big = tfd_arena_alloc(&a, 200000); /* a chunk of its own, the newest */
	memset(big, 0xcd, 200000);
	tfd_arena_rewind(&a);
	q = tfd_arena_alloc(&a, 150000);
	T_TRUE(q == big);
	for (size_t i = 0; i < 150000; i++)
		zero = zero && q[i] == 0;
	T_TRUE(zero);
	tfd_arena_rewind(&a); /* the first chunk went: the newest is reused */
	T_TRUE(tfd_arena_alloc(&a, 100) == big);
	tfd_arena_release(&a);
}

/* A partial's JSON is parsed into an arena of its own (cJSON's hooks are
 * tfdoctor's in the unit runner, as in main()); a broken one gives NULL
 * and where the parse stopped, and leaves nothing behind (sanitizers). */
static void partial_doc_in_arena(struct t *t)
{
	const char good[] = "{\"a\": [1, 2.5, {\"b\": \"x\"}], \"c\": \"-7\"}";
	const char bad[] = "{\"a\": [1, 2";
	const char *end = NULL;
	struct tfd_json_tree *d = tfd_pf_parse(good, sizeof(good) - 1, NULL);
	const cJSON *arr, *obj;

	T_TRUE(d != NULL);
	T_TRUE(d->in_arena);
	arr = cJSON_GetObjectItemCaseSensitive(d->root, "a");
	T_TRUE(cJSON_GetArraySize(arr) == 3);
	T_EQ_DBL(cJSON_GetArrayItem(arr, 1)->valuedouble, 2.5, 0);
	obj = cJSON_GetArrayItem(arr, 2);
	T_EQ_STR(cJSON_GetObjectItemCaseSensitive(obj, "b")->valuestring, "x");
	T_EQ_STR(cJSON_GetObjectItemCaseSensitive(d->root, "c")->valuestring, "-7");
	T_TRUE(d->arena.bytes > 0);
	tfd_pf_doc_free(d);
	T_TRUE(tfd_pf_parse(bad, sizeof(bad) - 1, &end) == NULL);
	T_TRUE(end != NULL && end > bad && end <= bad + sizeof(bad) - 1);
}

/* The JSON layout: a line per member, two spaces a level, empty objects
 * and arrays kept on their line, and strings copied as they are (their
 * brackets, commas, colons and escaped quotes included), whole or fed in
 * pieces. */
static void json_pretty_layout(struct t *t)
{
	const char *in = "{\"a\":[1,{}],\"b\":\"x,{y}:\\\"z\\\\\",\"c\":[],\"d\":{\"e\":-2.5}}";
	const char *want = "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": \"x,{y}:\\\"z\\\\\",\n"
			   "  \"c\": [],\n  \"d\": {\n    \"e\": -2.5\n  }\n}\n";
	struct tfd_buf whole, parts;
	struct tfd_json_pp pp = {0, 0};
	char piece[64];
	size_t cut = 20; /* inside "b"'s string */

	tfd_buf_init(&whole);
	tfd_buf_json_pretty(&whole, in);
	T_EQ_STR(whole.s, want);
	tfd_buf_init(&parts);
	memcpy(piece, in, cut);
	piece[cut] = '\0';
	tfd_json_pretty_feed(&pp, &parts, piece);
	tfd_json_pretty_feed(&pp, &parts, in + cut);
	tfd_buf_add(&parts, "\n", 1);
	T_EQ_STR(parts.s, want);
	tfd_buf_release(&whole);
	tfd_buf_release(&parts);
}

/* tfd_json_num() prints every number as cJSON_CreateNumber() does: whole
 * numbers below 10^15 by its own digits, the rest by cJSON. */
static void json_numbers_as_cjson(struct t *t)
{
	const double v[] = {0.0,
			    -0.0,
			    1.0,
			    -1.0,
			    2147483647.0,
			    2147483648.0,
			    -2147483649.0,
			    123456789012345.0,
			    -999999999999999.0,
			    1e15,
			    1e15 + 1.0,
			    9007199254740993.0,
			    0.5,
			    -2.25,
			    0.1234,
			    1e300,
			    1e-7,
			    NAN,
			    INFINITY};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		cJSON *a = cJSON_CreateNumber(v[i]), *b = tfd_json_num(v[i]);
		char *sa = cJSON_PrintUnformatted(a), *sb = cJSON_PrintUnformatted(b);
		bool same = strcmp(sa, sb) == 0;

		if (!same)
			fprintf(stderr, "%.17g: cJSON %s, tfd_json_num %s\n", v[i], sa, sb);
		cJSON_free(sa);
		cJSON_free(sb);
		cJSON_Delete(a);
		cJSON_Delete(b);
		T_TRUE(same);
	}
}

const struct t_case analysis_cases[] = {
    T(python_overlap),
    T(waits_between_markers),
    T(synchronous_stragglers_by_input),
    T(selection_matches_sort),
    T(radix_sort_matches_qsort),
    T(attribution_overlap),
    T(attribution_clips),
    T(self_time_is_the_uncovered_span),
    T(attribution_hands_each_call_once),
    T(attribution_deep_wide_tree),
    T(call_tree_scan_is_the_lists),
    T(call_tree_scan_in_ranges),
    T(nested_sync_chain),
    T(self_time_below_the_depth_limit),
    T(prefetch_other_thread),
    T(produce_links_every_element),
    T(prefetch_by_overlap),
    T(parallel_map_overlapping),
    T(nested_root_call_is_a_root),
    T(calls_keep_iterator_and_thread),
    T(iterator_calls_listed_in_start_order),
    T(call_pairs_widen),
    T(links_in_time_order_wait),
    T(groups_closed_late),
    T(stream_selects_roots),
    T(stream_without_calls),
    T(stream_falls_back),
    T(bare_and_loop_roots_are_no_calls),
    T(calls_keep_their_ends),
    T(times_store_round_trip),
    T(zip_two_inputs),
    T(zip_same_named_branches),
    T(interleave_many_inputs),
    T(no_blocking_child),
    T(parent_id_cycle_is_an_error),
    T(reused_id_is_another_iterator),
    T(reused_root_of_another_dataset),
    T(lost_producer_events),
    T(numbered_one_shot_roots_repeat),
    T(remade_datasets_repeat),
    T(one_id_many_parents),
    T(dangling_parent_uses_long_name),
    T(absent_parents_from_long_names),
    T(absent_parent_takes_the_parent_id),
    T(warmup_excluded),
    T(rank_picks_one_call),
    T(families),
    T(critpath_ignores_repeated_edges),
    T(smdebug_8gpu_invariants),
    T(ai_notebook_formats_agree),
    T(arena_recycle_reuses_chunks),
    T(arena_rewind_reuses_newest),
    T(partial_doc_in_arena),
    T(json_pretty_layout),
    T(json_numbers_as_cjson),
    {0},
};
