/* rootstats.c - a pipeline's root calls' latency statistics and the
 * selection of the calls the analysis reads (the warm-up, the --rank pick
 * or the steady state's slow calls), from their spans: the pipeline pass's
 * (pipeline.c) and a stream's in time order over the pass before's root
 * calls (timesel.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "pipeline_impl.h"
#include "tfd/satmath.h"
#include "tfd/select.h"

/* The q-th quantile of v[0..n) (nearest rank), v reordered. */
static int64_t percentile(int64_t *v, size_t n, double q)
{
	size_t k;

	if (!n)
		return 0;
	k = (size_t)ceil(q * (double)n);
	if (k < 1)
		k = 1;
	return tfd_kth_i64(v, n, k - 1);
}

/* Leading warm-up calls and the --rank pick or the steady-state selection
 * of nr root calls of durations durs (by start) into selected[]. */
static void select_calls(struct tfd_pipeline *p, const int64_t *durs, size_t nr, bool *selected,
			 const struct tfd_analyze_opts *opts)
{
	/* warm-up: leading calls (at most 10 %) more than twice the median,
	 * e.g. the first GetNext that fills a shuffle buffer or opens files */
	if (!opts->no_warmup && nr >= 4) {
		size_t limit = (nr + 9) / 10;

		while (p->nwarmup < limit && durs[p->nwarmup] > 2 * p->p50_ns)
			p->nwarmup++;
	}
	p->analyzed_rank = -1;
	if (opts->rank_set) {
		/* rank r: the r-th slowest call, ties in time order (the key is
		 * -duration, then the call's place in time) */
		struct keyed *byslow = xmalloc((nr + 1) * sizeof(*byslow));

		for (size_t i = 0; i < nr; i++)
			byslow[i] = (struct keyed){-durs[i], (int64_t)i};
		if (nr > 1)
			qsort(byslow, nr, sizeof(*byslow), keyed_cmp);
		if (opts->rank >= 0 && (size_t)opts->rank < nr) {
			size_t pick = (size_t)byslow[opts->rank].idx;

			selected[pick] = true;
			p->analyzed_rank = opts->rank;
			p->analyzed_slow_only = durs[pick] > TFD_SLOW_CALL_NS;
		}
		p->nwarmup = 0;
		free(byslow);
		return;
	}
	for (size_t i = p->nwarmup; i < nr; i++)
		if (durs[i] > TFD_SLOW_CALL_NS) {
			selected[i] = true;
			p->analyzed_slow_only = true;
		}
	if (!p->analyzed_slow_only)
		for (size_t i = p->nwarmup; i < nr; i++)
			selected[i] = true;
}

void tfd_root_stats(const struct tfd_root_spans *rs, const struct tfd_analyze_opts *opts,
		    struct tfd_pipeline *p, int64_t *durs, bool *selected)
{
	size_t nr = rs->n;
	int64_t *sorted;

	p->ncalls = nr;
	for (size_t i = 0; i < nr; i++) {
		int64_t end = tfd_root_end(rs, i), d = end - tfd_root_start(rs, i);

		durs[i] = d;
		if (!i || end > p->last_end_ns)
			p->last_end_ns = end;
		p->total_ns = sat_add(p->total_ns, d);
		p->nslow += d > TFD_SLOW_CALL_NS;
	}
	if (!nr)
		return;
	sorted = xmalloc(nr * sizeof(int64_t));
	memcpy(sorted, durs, nr * sizeof(int64_t));
	p->min_ns = p->max_ns = sorted[0];
	for (size_t i = 1; i < nr; i++) {
		p->min_ns = sorted[i] < p->min_ns ? sorted[i] : p->min_ns;
		p->max_ns = sorted[i] > p->max_ns ? sorted[i] : p->max_ns;
	}
	p->avg_ns = p->total_ns / (int64_t)nr;
	p->p50_ns = percentile(sorted, nr, 0.5);
	p->p95_ns = percentile(sorted, nr, 0.95);
	p->first_start_ns = tfd_root_start(rs, 0);
	p->first_call_ns = durs[0];
	free(sorted);
	select_calls(p, durs, nr, selected, opts);
	for (size_t i = 0; i < nr; i++)
		if (selected[i]) {
			p->nanalyzed++;
			p->analyzed_ns = sat_add(p->analyzed_ns, durs[i]);
		}
}

int tfd_root_slowest(const int64_t *durs, size_t n)
{
	int slowest = -1;

	for (size_t r = 0; r < n; r++)
		if (slowest < 0 || durs[r] > durs[slowest])
			slowest = (int)r;
	return slowest;
}
