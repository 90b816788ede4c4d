/* xprof.c - the reference algorithm (xprof-reference.md section 1) over the
 * capture model, for --mode xprof and the peer suite. See xprof.h for the
 * deliberate, deterministic departures from upstream. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/analysis.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/vec.h"
#include "tfd/xprof.h"

#define PS_PER_NS 1000
#define SLOW_CALL_PS 50000000LL

enum ntype { N_OTHER, N_ITER, N_DIPSI, N_PRODUCE, N_CONSUME };

struct node {
	struct tfd_event ev; /* a copy */
	int64_t start, end;  /* ps */
	uint8_t type;
	int nest_parent; /* parents[0], -1 */
	VEC(int) kids;
};

struct forest {
	VEC(struct node) nodes;	   /* thread order, then event order: upstream's deque order */
	unsigned long long visits; /* by process_iterator, against XPROF_MAX_VISITS */
};

static bool is_tfdata(const char *name)
{
	/* "Iterator::..." : text before the first ':' is exactly "Iterator" */
	return strncmp(name, "Iterator::", 10) == 0;
}

static int64_t overlap_ps(const struct node *a, const struct node *b)
{
	/* Timespan overlap: inclusive test, touching spans give 0 */
	int64_t s = a->start > b->start ? a->start : b->start;
	int64_t e = a->end < b->end ? a->end : b->end;

	if (!(a->start <= b->end && b->start <= a->end))
		return 0;
	return e - s;
}

static void add_child(struct forest *f, int parent, int child)
{
	vec_push(&f->nodes.v[parent].kids, child);
	if (f->nodes.v[child].nest_parent < 0)
		f->nodes.v[child].nest_parent = -2 - parent; /* non-nesting parent */
}

static void build_forest(const struct tfd_host *h, struct forest *f)
{
	VEC(int) stack = {0};
	/* Saved captures are normalized to the profile's start, so times in ps
	 * fit int64 as they are. Raw ones (epoch ns) would overflow: rebase
	 * those to their first event. */
	int64_t base = h->span_start_ns > (1ll << 52) || h->span_start_ns < -(1ll << 52)
			   ? h->span_start_ns
			   : 0;

	for (size_t t = 0; t < h->nthreads; t++) {
		stack.n = 0;
		struct tfd_ev_mcursor cur;
		struct tfd_event ev;

		for (tfd_evm_begin(&cur, h, t); tfd_evm_next(&cur, &ev);) {
			const struct tfd_event *e = &ev;
			struct node n;
			int idx;

			memset(&n, 0, sizeof(n));
			n.ev = *e;
			n.start = (e->start_ns - base) * PS_PER_NS;
			n.end = (e->start_ns + e->dur_ns - base) * PS_PER_NS;
			n.nest_parent = -1;
			if (strcmp(e->sig->name, "Iterator::Prefetch::Generator") == 0)
				n.type = N_DIPSI;
			else if (e->kind == TFD_EV_ITERATOR)
				n.type = N_ITER;
			else if (e->kind == TFD_EV_PRODUCE)
				n.type = N_PRODUCE;
			else if (e->kind == TFD_EV_CONSUME)
				n.type = N_CONSUME;
			vec_push(&f->nodes, n);
			idx = (int)f->nodes.n - 1;
			if (e->flags & TFD_EVF_ASYNC)
				continue;
			while (stack.n) {
				const struct node *top = &f->nodes.v[stack.v[stack.n - 1]];

				if (top->start <= f->nodes.v[idx].start &&
				    f->nodes.v[idx].end <= top->end) {
					vec_push(&f->nodes.v[stack.v[stack.n - 1]].kids, idx);
					f->nodes.v[idx].nest_parent = stack.v[stack.n - 1];
					break;
				}
				stack.n--;
			}
			vec_push(&stack, idx);
		}
		tfd_evm_end(&cur);
	}
	vec_free(&stack);
}

/* The Produce/Consume event kinds, in the families table's order (XProf
 * links them kind by kind). */
static bool produce_at(const char *name, size_t t)
{
	size_t k;

	return tfd_family_of_produce(name, &k) && k == t;
}

static bool consume_at(const char *name, size_t t)
{
	size_t k;

	return tfd_family_of_consume(name, &k) && k == t;
}

static size_t nevent_kinds(void)
{
	size_t n = 0;

	for (size_t i = 0; i < tfd_nfamilies; i++)
		n += tfd_families[i].produce != NULL;
	return n;
}

struct pkey {
	int64_t parent_id, element_id;
	int node;
};

typedef VEC(struct pkey) pkey_vec;

/* XProf's produce map: for each Produce event (kind by kind, as it walks
 * them), the iterator it holds, keyed by (that iterator's parent id, the
 * element id). */
static void produce_map(const struct forest *f, size_t nkinds, pkey_vec *pm)
{
	for (size_t t = 0; t < nkinds; t++)
		for (size_t i = 0; i < f->nodes.n; i++) {
			const struct node *p = &f->nodes.v[i];

			if (p->type != N_PRODUCE || !produce_at(p->ev.sig->name, t) ||
			    !(p->ev.flags & TFD_EVF_ELEMENT))
				continue;
			for (size_t k = 0; k < p->kids.n; k++) {
				const struct node *c = &f->nodes.v[p->kids.v[k]];

				if (c->type == N_ITER || c->type == N_DIPSI) {
					if (c->ev.flags & TFD_EVF_PARENT)
						vec_push(pm, ((struct pkey){
								 (int64_t)c->ev.sig->parent_id,
								 (int64_t)p->ev.element_id,
								 p->kids.v[k]}));
					break;
				}
			}
		}
}

static void connect_tfdata(struct forest *f)
{
	const size_t nkinds = nevent_kinds();
	pkey_vec pm = {0};
	/* the produce map indexed by key: hostile captures hold many of both */
	struct imap idx = {0};
	VEC(int) chain = {0};

	produce_map(f, nkinds, &pm);
	for (size_t j = 0; j < pm.n; j++) {
		uint64_t key = imap_hash((uint64_t)pm.v[j].parent_id) ^
			       ((uint64_t)pm.v[j].element_id * 0x9e3779b97f4a7c15ull);
		size_t head;

		vec_push(&chain, imap_get(&idx, key, &head) ? (int)head : -1);
		imap_put(&idx, key, j);
	}
	/* each Consume event's iterator gets the produced iterators as kids */
	for (size_t t = 0; t < nkinds; t++)
		for (size_t i = 0; i < f->nodes.n; i++) {
			const struct node *k = &f->nodes.v[i];
			const struct node *ci;
			VEC(int) hits = {0};
			size_t head;
			uint64_t key;

			if (k->type != N_CONSUME || !consume_at(k->ev.sig->name, t) ||
			    !(k->ev.flags & TFD_EVF_ELEMENT) || k->nest_parent < 0)
				continue;
			ci = &f->nodes.v[k->nest_parent];
			if ((ci->type != N_ITER && ci->type != N_DIPSI) ||
			    !(ci->ev.flags & TFD_EVF_ID))
				continue;
			key = imap_hash(ci->ev.id) ^ (k->ev.element_id * 0x9e3779b97f4a7c15ull);
			if (imap_get(&idx, key, &head))
				for (int j = (int)head; j >= 0; j = chain.v[j])
					if (pm.v[j].parent_id == (int64_t)ci->ev.id &&
					    pm.v[j].element_id == (int64_t)k->ev.element_id)
						vec_push(&hits, pm.v[j].node);
			/* the chain is newest first: link in insertion order */
			for (size_t h = hits.n; h-- > 0;)
				add_child(f, k->nest_parent, hits.v[h]);
			vec_free(&hits);
		}
	imap_free(&idx);
	vec_free(&chain);
	vec_free(&pm);
}

/* ---- per-host processing ------------------------------------------------ */

/* The iterator stats of one root call, indexed by id. */
typedef struct {
	struct tfd_xp_iter_stat *v;
	size_t n, cap;
	struct imap index; /* id -> position */
} statvec;

static struct tfd_xp_iter_stat *stat_get(statvec *sv, int64_t id, bool *fresh)
{
	size_t i;

	if (imap_get(&sv->index, (uint64_t)id, &i)) {
		*fresh = false;
		return &sv->v[i];
	}
	vec_push(sv, ((struct tfd_xp_iter_stat){.id = id}));
	imap_put(&sv->index, (uint64_t)id, sv->n - 1);
	*fresh = true;
	return &sv->v[sv->n - 1];
}

/* Upstream walks a DAG (a producer linked to several consumers is visited
 * once per path). Hostile element ids make that explode; past this many
 * visits per host the xprof mode gives up with an error. */
#define XPROF_MAX_VISITS 50000000ull

static void process_iterator(struct forest *f, int ni, statvec *sv, bool blocking, int level)
{
	if (++f->visits > XPROF_MAX_VISITS)
		return;
	const struct node *n = &f->nodes.v[ni];
	struct tfd_xp_iter_stat *s;
	int64_t self, id;
	bool fresh;

	if (level > 100 || !(n->ev.flags & TFD_EVF_ID))
		return;
	id = (int64_t)n->ev.id;
	s = stat_get(sv, id, &fresh);
	if (fresh)
		s->start_time_ps = n->start;
	s->duration_ps = sat_add(s->duration_ps, n->end - n->start);
	self = n->end - n->start;
	for (size_t k = 0; k < n->kids.n; k++) {
		const struct node *c = &f->nodes.v[n->kids.v[k]];
		int64_t ov;

		if (!is_tfdata(c->ev.sig->name))
			continue;
		ov = overlap_ps(n, c);
		process_iterator(f, n->kids.v[k], sv, blocking && ov != 0, level + 1);
		self = sat_sub(self, ov); /* XProf: assumes children never overlap */
	}
	s = stat_get(sv, id, &fresh); /* the vector may have moved */
	s->self_time_ps = sat_add(s->self_time_ps, self);
	s->is_blocking = s->is_blocking || blocking;
	s->num_calls++;
}

static int stat_cmp(const void *a, const void *b)
{
	const struct tfd_xp_iter_stat *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int meta_cmp(const void *a, const void *b)
{
	const struct tfd_xp_meta *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

struct rootcall {
	int node;
	int64_t dur, start;
};

struct rootcalls {
	struct rootcall *v;
	size_t n, cap;
};

struct rootkey {
	int64_t first, id;
};

static int rootkey_cmp(const void *a, const void *b)
{
	const struct rootkey *x = a, *y = b;

	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int rootcall_cmp(const void *a, const void *b)
{
	const struct rootcall *x = a, *y = b;

	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->node - y->node;
}

/* metas are sorted by id */
const struct tfd_xp_meta *tfd_xprof_find_meta(const struct tfd_xp_host *h, int64_t id)
{
	size_t lo = 0, hi = h->nmetas;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->metas[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nmetas && h->metas[lo].id == id ? &h->metas[lo] : NULL;
}

static bool async_name(const char *n)
{
	return tfd_family_has(n, TFD_FAM_XPROF_ASYNC);
}

/* What process_host() gathers before the pipelines. */
struct host_scan {
	struct forest f;
	VEC(struct tfd_xp_meta) metas;
	VEC(struct rootkey) roots;
	struct imap meta_seen, root_of, dev_ids;
};

/* Iterator metadata (first sighting wins; host iterators, then device ones)
 * and the root iterators with their first call. */
static void collect_iterators(struct host_scan *hs)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < hs->f.nodes.n; i++) {
			const struct node *n = &hs->f.nodes.v[i];
			int64_t id = (int64_t)n->ev.id;
			size_t r;

			if ((pass == 0 && n->type != N_ITER) || (pass == 1 && n->type != N_DIPSI) ||
			    !(n->ev.flags & TFD_EVF_ID))
				continue;
			if (!imap_get(&hs->meta_seen, (uint64_t)id, NULL)) {
				struct tfd_xp_meta md;

				md.id = id;
				md.parent_id = (n->ev.flags & TFD_EVF_PARENT)
						   ? (int64_t)n->ev.sig->parent_id
						   : 0;
				md.long_name = n->ev.sig->name;
				md.name = tfd_iter_short(n->ev.sig->name);
				md.is_async = async_name(md.name);
				vec_push(&hs->metas, md);
				imap_put(&hs->meta_seen, (uint64_t)id, 1);
				if (pass == 1 && (n->ev.flags & TFD_EVF_PARENT))
					imap_put(&hs->dev_ids, n->ev.sig->parent_id, 1);
			}
			if (pass == 0 && tfd_iter_parts(n->ev.sig->name) == 2) {
				if (!imap_get(&hs->root_of, (uint64_t)id, &r)) {
					imap_put(&hs->root_of, (uint64_t)id, hs->roots.n);
					vec_push(&hs->roots, ((struct rootkey){n->start, id}));
				} else if (n->start < hs->roots.v[r].first) {
					hs->roots.v[r].first = n->start;
				}
			}
		}
}

/* One pipeline's statistics over its root calls: per call, every
 * iterator's stats and the bottleneck; latencies over the calls. */
static void pipeline_stats(struct forest *f, struct tfd_xp_pipeline *p, struct rootcalls calls)
{
	int64_t sum = 0;

	if (calls.n > 1)
		qsort(calls.v, calls.n, sizeof(*calls.v), rootcall_cmp);
	p->stats = xcalloc(calls.n + 1, sizeof(*p->stats));
	p->nstats = calls.n;
	p->min_latency_ps = INT64_MAX;
	for (size_t c = 0; c < calls.n; c++) {
		statvec sv = {0};
		struct tfd_xp_call *st = &p->stats[c];
		int64_t best = 0, lat = calls.v[c].dur;

		process_iterator(f, calls.v[c].node, &sv, true, 0);
		imap_free(&sv.index);
		if (sv.n > 1)
			qsort(sv.v, sv.n, sizeof(*sv.v), stat_cmp);
		st->iters = sv.v;
		st->niters = sv.n;
		for (size_t k = 0; k < sv.n; k++) /* ties: smaller id (sorted) */
			if (sv.v[k].is_blocking && sv.v[k].self_time_ps > best) {
				best = sv.v[k].self_time_ps;
				st->bottleneck_iterator_id = sv.v[k].id;
			}
		st->bottleneck_iterator_latency_ps = best;
		sum = sat_add(sum, lat);
		if (lat < p->min_latency_ps)
			p->min_latency_ps = lat;
		if (lat > p->max_latency_ps)
			p->max_latency_ps = lat;
		p->num_slow_calls += lat > SLOW_CALL_PS;
	}
	if (!calls.n)
		p->min_latency_ps = 0;
	p->avg_latency_ps = calls.n ? sum / (int64_t)calls.n : 0;
}

static bool process_host(const struct tfd_host *h, struct tfd_xp_host *xh)
{
	struct host_scan hs;
	struct rootcalls *per;
	int nhost = 0, ndev = 0;

	memset(&hs, 0, sizeof(hs));
	build_forest(h, &hs.f);
	connect_tfdata(&hs.f);
	xh->host = h->name;
	collect_iterators(&hs);
	if (hs.metas.n > 1)
		qsort(hs.metas.v, hs.metas.n, sizeof(*hs.metas.v), meta_cmp);
	xh->metas = hs.metas.v;
	xh->nmetas = hs.metas.n;
	/* deterministic root order: first call, then id */
	if (hs.roots.n > 1)
		qsort(hs.roots.v, hs.roots.n, sizeof(*hs.roots.v), rootkey_cmp);
	for (size_t r = 0; r < hs.roots.n; r++)
		imap_put(&hs.root_of, (uint64_t)hs.roots.v[r].id, r);
	/* each pipeline's root calls, in one pass over the nodes */
	per = xcalloc(hs.roots.n + 1, sizeof(*per));
	for (size_t i = 0; i < hs.f.nodes.n; i++) {
		const struct node *n = &hs.f.nodes.v[i];
		size_t r;

		if (n->type == N_ITER && (n->ev.flags & TFD_EVF_ID) &&
		    tfd_iter_parts(n->ev.sig->name) == 2 && imap_get(&hs.root_of, n->ev.id, &r))
			vec_push(&per[r], ((struct rootcall){(int)i, n->end - n->start, n->start}));
	}
	xh->pipelines = xcalloc(hs.roots.n + 1, sizeof(*xh->pipelines));
	xh->npipelines = hs.roots.n;
	for (size_t r = 0; r < hs.roots.n; r++) {
		struct tfd_xp_pipeline *p = &xh->pipelines[r];

		p->id = hs.roots.v[r].id;
		p->is_device = imap_get(&hs.dev_ids, (uint64_t)p->id, NULL);
		snprintf(p->name, sizeof(p->name), "%s:%d", p->is_device ? "Device" : "Host",
			 p->is_device ? ndev++ : nhost++);
		pipeline_stats(&hs.f, p, per[r]);
	}
	for (size_t i = 0; i < hs.f.nodes.n; i++)
		vec_free(&hs.f.nodes.v[i].kids);
	vec_free(&hs.f.nodes);
	for (size_t r = 0; r < hs.roots.n; r++)
		vec_free(&per[r]);
	free(per);
	vec_free(&hs.roots);
	imap_free(&hs.meta_seen);
	imap_free(&hs.root_of);
	imap_free(&hs.dev_ids);
	return hs.f.visits <= XPROF_MAX_VISITS;
}

/* XProf matched the captured name exactly (BatchV2 is not Batch): the
 * families table keeps those names. */
enum tfd_xp_type tfd_xprof_type(const char *n)
{
	static const enum tfd_xp_type map[] = {
	    [TFD_FX_OTHER] = TFD_XP_OTHER,
	    [TFD_FX_SOURCE] = TFD_XP_SLOW_SOURCE,
	    [TFD_FX_DATA_SERVICE] = TFD_XP_SLOW_DATA_SERVICE,
	    [TFD_FX_REMOTE_SOURCE] = TFD_XP_SLOW_REMOTE_SOURCE,
	    [TFD_FX_WITH_PARALLEL] = TFD_XP_SLOW_TRANSFORMATION_WITH_PARALLEL_VERSION,
	    [TFD_FX_WITHOUT_PARALLEL] = TFD_XP_SLOW_TRANSFORMATION_WITHOUT_PARALLEL_VERSION,
	};

	for (size_t i = 0; i < tfd_nfamilies; i++) {
		const char *w = tfd_families[i].xprof_names;
		size_t len = strlen(n);

		while (w && *w) {
			size_t k = strcspn(w, " ");

			if (k == len && strncmp(w, n, len) == 0)
				return map[tfd_families[i].xprof];
			w += k;
			w += *w == ' ';
		}
	}
	return TFD_XP_OTHER;
}

#define GUIDE "https://www.tensorflow.org/guide/data_performance"
#define ANALYSIS "https://www.tensorflow.org/guide/data_performance_analysis"
#define A(url, text) "<a href=\"" url "\" target=\"_blank\">" text "</a>"

const char *tfd_xprof_suggestion(enum tfd_xp_type t)
{
	switch (t) {
	case TFD_XP_SLOW_SOURCE:
		return "1. Make sure the input data is stored close to the host that reads it "
		       "(same cell or region); see " A(
			   ANALYSIS "#source_datasets",
			   "here") ".<br/>"
				   "2. Read from this source in parallel; see " A(
				       GUIDE "#parallelizing_data_extraction", "here") ".<br/>";
	case TFD_XP_SLOW_DATA_SERVICE:
		return "1. Reading from the tf.data service is slow: profile the tf.data service "
		       "worker.<br/>2. About the tf.data service: " A(
			   "https://www.tensorflow.org/api_docs/python/tf/data/experimental/"
			   "service?version=nightly",
			   "this") ".<br/>3. Other suggestions: " A(ANALYSIS, "this") ".";
	case TFD_XP_SLOW_REMOTE_SOURCE:
		return "1. The remote data source is slow: profile the host that serves it.<br/>"
		       "2. Other suggestions: " A(ANALYSIS, "this") ".";
	case TFD_XP_SLOW_TRANSFORMATION_WITH_PARALLEL_VERSION:
		return "1. Run this transformation in parallel with "
		       "<code>num_parallel_calls=tf.data.experimental.AUTOTUNE</code>; see " A(
			   GUIDE "#parallelizing_data_transformation",
			   "this") ".<br/>"
				   "2. If the data fits in memory and nothing random runs before "
				   "it (e.g. "
				   "<code>shuffle</code>), add <code>cache</code> after it; see " A(
				       GUIDE "#caching",
				       "this") ".<br/>"
					       "3. More: " A(ANALYSIS "#transformation_datasets",
							     "here") ".";
	case TFD_XP_SLOW_TRANSFORMATION_WITHOUT_PARALLEL_VERSION:
		return "1. This transformation is sequential: run several copies of the pipeline "
		       "over shards of the input and interleave them (outer parallelism); see " A(
			   ANALYSIS "#transformation_datasets",
			   "this") ".<br/>"
				   "2. If the data fits in memory and nothing random runs before "
				   "it, add "
				   "<code>cache</code> after it; see " A(
				       GUIDE "#caching",
				       "this") ".<br/>"
					       "3. More: " A(
						   ANALYSIS
						   "#3_are_you_reaching_high_cpu_utilization",
						   "here") ".";
	default:
		return "See " A(ANALYSIS, "this") " for suggestions.";
	}
}

struct rowkey {
	int64_t latency;
	size_t pos;
};

static int rowkey_cmp(const void *a, const void *b)
{
	const struct rowkey *x = a, *y = b;

	if (x->latency != y->latency)
		return x->latency > y->latency ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

enum tfd_status tfd_xprof_run(const struct tfd_capture *cap, struct tfd_xprof **out,
			      struct tfd_err *err)
{
	struct tfd_xprof *x = xcalloc(1, sizeof(*x));
	size_t nrows = 0;

	x->hosts = xcalloc(cap->nhosts + 1, sizeof(*x->hosts));
	x->nhosts = cap->nhosts;
	for (size_t i = 0; i < cap->nhosts; i++) {
		const struct tfd_host *hh = &cap->hosts[i];

		/* times become int64 picoseconds: a span beyond 2^52 ns (52 days)
		 * cannot be expressed; no real capture comes near it */
		if (hh->span_end_ns - hh->span_start_ns > (1ll << 52) ||
		    (hh->span_start_ns <= (1ll << 52) && hh->span_end_ns > (1ll << 52))) {
			x->nhosts = i;
			tfd_xprof_free(x);
			return tfd_fail(
			    err, TFD_E_LIMIT,
			    "%s: events span more than 52 days: too long for picosecond "
			    "times in --mode xprof",
			    hh->path);
		}
		if (!process_host(&cap->hosts[i], &x->hosts[i])) {
			x->nhosts = i + 1;
			tfd_xprof_free(x);
			return tfd_fail(err, TFD_E_LIMIT,
					"%s: the xprof call graph needs more than %llu visits "
					"(repeated element ids); use the default mode",
					cap->hosts[i].path, XPROF_MAX_VISITS);
		}
		for (size_t p = 0; p < x->hosts[i].npipelines; p++)
			nrows +=
			    !x->hosts[i].pipelines[p].is_device && x->hosts[i].pipelines[p].nstats;
	}
	x->rows = xcalloc(nrows + 1, sizeof(*x->rows));
	for (size_t i = 0; i < x->nhosts; i++)
		for (size_t p = 0; p < x->hosts[i].npipelines; p++) {
			const struct tfd_xp_pipeline *pl = &x->hosts[i].pipelines[p];
			const struct tfd_xp_call *st;
			const struct tfd_xp_meta *md;
			struct tfd_xp_row *r;

			if (pl->is_device || !pl->nstats)
				continue;
			st = &pl->stats[0];
			md = tfd_xprof_find_meta(&x->hosts[i], st->bottleneck_iterator_id);
			r = &x->rows[x->nrows++];
			r->host = x->hosts[i].host;
			r->input_pipeline = pl->name;
			r->max_latency_ps = pl->max_latency_ps;
			r->iterator_name = md ? md->name : "";
			r->iterator_long_name = md ? md->long_name : "";
			r->iterator_latency_ps = st->bottleneck_iterator_latency_ps;
			r->suggestion = tfd_xprof_suggestion(tfd_xprof_type(r->iterator_name));
		}
	/* by max latency; equal latencies keep host and pipeline order */
	if (x->nrows > 1) {
		struct rowkey *k = xmalloc(x->nrows * sizeof(*k));
		struct tfd_xp_row *sorted = xmalloc((x->nrows + 1) * sizeof(*sorted));

		for (size_t i = 0; i < x->nrows; i++)
			k[i] = (struct rowkey){x->rows[i].max_latency_ps, i};
		qsort(k, x->nrows, sizeof(*k), rowkey_cmp);
		for (size_t i = 0; i < x->nrows; i++)
			sorted[i] = x->rows[k[i].pos];
		free(x->rows);
		x->rows = sorted;
		free(k);
	}
	{
		int64_t m = x->nrows ? x->rows[0].max_latency_ps : 0;

		x->is_input_bound = m > SLOW_CALL_PS;
		x->summary = m > SLOW_CALL_PS ? TFD_XP_SUMMARY_SLOW
			     : m > 0	      ? TFD_XP_SUMMARY_FAST
					      : TFD_XP_SUMMARY_NONE;
	}
	*out = x;
	return TFD_OK;
}

bool tfd_xprof_is_input_bound(const struct tfd_xprof *x)
{
	return x->is_input_bound;
}

void tfd_xprof_free(struct tfd_xprof *x)
{
	if (!x)
		return;
	for (size_t i = 0; i < x->nhosts; i++) {
		for (size_t p = 0; p < x->hosts[i].npipelines; p++) {
			for (size_t s = 0; s < x->hosts[i].pipelines[p].nstats; s++)
				free(x->hosts[i].pipelines[p].stats[s].iters);
			free(x->hosts[i].pipelines[p].stats);
		}
		free(x->hosts[i].pipelines);
		free(x->hosts[i].metas);
	}
	free(x->hosts);
	free(x->rows);
	free(x);
}
