/* bottleneck.c - the two views of a pipeline's bottleneck.
 *
 * Latency view (XProf's): the stage with the most blocking time over the
 * analyzed root calls, ties to the shallower then earlier stage; the
 * critical path runs from the root to it. Throughput view: the busiest
 * stage of the segment with the lowest capacity (capacity.c), when the
 * capacity model has enough steady-state calls; it is the bottleneck the
 * report names and the rules act on. Both are kept so the report can say
 * when they disagree.
 */
#include "passes.h"

enum tfd_status tfd_bottleneck_latency(struct tfd_pipeline *p, const int *ef, const int *et,
				       size_t ne, struct tfd_err *err)
{
	int64_t best = 0;
	double sum = 0;
	enum tfd_status st;

	p->latency_bottleneck = -1;
	for (size_t i = 0; i < p->nstages; i++) {
		sum += p->stages[i].blocking_share;
		if (p->stages[i].blocking_ns > best) {
			best = p->stages[i].blocking_ns;
			p->latency_bottleneck = (int)i;
		}
	}
	p->unattributed_share = p->analyzed_ns ? 1.0 - sum : 0.0;
	p->bottleneck = p->latency_bottleneck;
	if (p->latency_bottleneck < 0)
		return TFD_OK;
	st = tfd_critpath_compute(p, ef, et, ne, p->latency_bottleneck, err);
	if (st)
		return st;
	for (size_t i = 0; i < p->ncritpath; i++)
		p->stages[p->critpath[i]].on_critical_path = true;
	return TFD_OK;
}

void tfd_bottleneck_choose(struct tfd_pipeline *p)
{
	const struct tfd_capacity *cp = &p->capacity;

	if (TFD_CAPACITY_USABLE(p) && p->segments[cp->limiter].top_stage >= 0)
		p->bottleneck = p->segments[cp->limiter].top_stage;
	if (p->bottleneck >= 0)
		p->stages[p->bottleneck].is_bottleneck = true;
}
