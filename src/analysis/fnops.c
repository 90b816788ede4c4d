/* fnops.c - the ops inside each async map's function: the host's op sums
 * per function thread (tfd_host.fn_thread_ops, made when it was read),
 * summed per map by the threads its function calls ran on. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"

static int owner_of(const struct tfd_op_owners *ow, uint32_t t)
{
	if (ow->owner[t] >= 0)
		return ow->owner[t];
	return !ow->has_calls[t] && ow->nmaps == 1 ? ow->only_map : -1;
}

/* A stage that calls its function inline (a sequential map): the ops of
 * the functions called from its iterator calls (recs: room for them). */
static void inline_ops(struct tfd_stage *s, const struct tfd_fns *fns, struct tfd_fn_op *recs)
{
	size_t n = 0;

	for (size_t k = 0; k < fns->niter_ops; k++)
		if (strcmp(fns->iter_ops[k].iter, s->long_name) == 0)
			recs[n++] =
			    (struct tfd_fn_op){0, fns->iter_ops[k].name, fns->iter_ops[k].self_ns,
					       (uint32_t)fns->iter_ops[k].count, false};
	if (!n)
		return;
	free(s->fn_ops);
	s->nfn_ops = tfd_fn_ops_by_type(recs, n, &s->fn_ops);
	s->fn_ops_coverage = 0; /* its work is its self time: not compared */
}

void tfd_stage_fn_ops(struct tfd_pipeline *p, const struct tfd_fns *fns,
		      const struct tfd_op_owners *ow)
{
	struct tfd_fn_op *recs;

	if (!fns->nops && !fns->niter_ops)
		return;
	recs =
	    xmalloc((fns->nops > fns->niter_ops ? fns->nops : fns->niter_ops) * sizeof(*recs) + 1);
	for (size_t q = 0; q < p->nstages; q++) {
		size_t n = 0;
		double ops = 0, work = 0;

		if (ow->fn_of[q] < 0) {
			inline_ops(&p->stages[q], fns, recs);
			continue;
		}
		for (size_t t = 0; fns->work_by_thread && t < fns->nthreads; t++)
			if (owner_of(ow, (uint32_t)t) == (int)q)
				work += (double)fns->work_by_thread[t];
		for (size_t k = 0; k < fns->nops; k++)
			if (owner_of(ow, fns->ops[k].thread) == (int)q) {
				recs[n++] =
				    (struct tfd_fn_op){0, fns->ops[k].name, fns->ops[k].self_ns,
						       (uint32_t)fns->ops[k].count, false};
				ops += (double)fns->ops[k].self_ns;
			}
		free(p->stages[q].fn_ops);
		p->stages[q].nfn_ops = tfd_fn_ops_by_type(recs, n, &p->stages[q].fn_ops);
		p->stages[q].fn_ops_coverage = work > 0 ? fmin(1.0, ops / work) : 0;
	}
	free(recs);
}

bool tfd_op_is_python(const char *type)
{
	return strcmp(type, "EagerPyFunc") == 0 || strcmp(type, "PyFunc") == 0 ||
	       strcmp(type, "PyFuncStateless") == 0;
}

double tfd_stage_effective_parallelism(const struct tfd_pipeline *p, int si, double *workers,
				       bool *python)
{
	const struct tfd_stage *s = &p->stages[si];
	const struct tfd_segment *fg = NULL;
	double all = 0, share;

	*python = false;
	for (size_t g = 0; g < p->nsegments; g++)
		if (p->segments[g].kind == TFD_SEG_FUNCTION && p->segments[g].owner == si)
			fg = &p->segments[g];
	if (!fg || !fg->known || !(fg->parallelism >= 1) || !p->capacity.valid)
		return NAN;
	*workers = fg->parallelism;
	if (!s->nfn_ops || !tfd_op_is_python(s->fn_ops[0].type))
		return fg->utilization * fg->parallelism;
	for (size_t i = 0; i < s->nfn_ops; i++)
		all += (double)s->fn_ops[i].self_ns;
	share = all > 0 ? (double)s->fn_ops[0].self_ns / all : 0;
	*python = true;
	return 1.0 / (share + (1.0 - share) / fg->parallelism);
}

enum tfd_confidence tfd_top_op_confidence(const struct tfd_stage *s, const char **why)
{
	*why = "";
	if (s->fn_ops_coverage == 0 || s->fn_ops_coverage >= 0.7)
		return TFD_CONF_HIGH; /* a sequential map's is not compared */
	*why = "the op events cover little of the function's time";
	return s->fn_ops_coverage >= 0.4 ? TFD_CONF_MEDIUM : TFD_CONF_LOW;
}
