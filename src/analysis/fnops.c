/* fnops.c - the ops inside each async map's function: the host's function
 * op records (tfd_host.fn_ops, by step) summed per function thread while
 * the capacity pass reads the function calls, then per map by the threads
 * its calls ran on. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"

/* The index's key of a record's (key, by_thread): a thread's id is
 * hashed apart from the step ids; a chain is checked record by record. */
static uint64_t index_key(uint64_t key, bool by_thread)
{
	return by_thread ? imap_hash(key ^ 0x9e3779b97f4a7c15ull) : key;
}

void tfd_op_index_build(const struct tfd_host *h, struct tfd_op_index *x)
{
	memset(x, 0, sizeof(*x));
	if (!h->fn_ops.n)
		return;
	x->next = xmalloc(h->fn_ops.n * sizeof(*x->next));
	x->thread_done = xcalloc(h->nthreads + 1, sizeof(bool));
	for (size_t i = 0; i < h->fn_ops.n; i++) {
		uint64_t k = index_key(h->fn_ops.v[i].key, h->fn_ops.v[i].by_thread);
		size_t prev;

		x->next[i] = imap_get(&x->head, k, &prev) ? (int)prev : -1;
		imap_put(&x->head, k, i);
	}
}

void tfd_op_index_free(struct tfd_op_index *x)
{
	imap_free(&x->head);
	imap_free(&x->at);
	free(x->next);
	free(x->thread_done);
}

/* Add record o's time to out's sum of (thread t, its name). */
static void add_record(struct tfd_op_index *x, uint32_t t, const struct tfd_fn_op *o,
		       struct tfd_fns *out)
{
	uint64_t k = imap_hash((uint64_t)(uintptr_t)o->name) ^ t;
	size_t j;

	/* another (thread, name) under the same key takes the next one */
	while (imap_get(&x->at, k, &j) && (out->ops[j].thread != t || out->ops[j].name != o->name))
		k++;
	if (!imap_get(&x->at, k, &j)) {
		j = out->nops++;
		out->ops = xrealloc(out->ops, out->nops * sizeof(*out->ops));
		out->ops[j] = (struct tfd_fn_thread_op){t, o->name, 0, 0};
		imap_put(&x->at, k, j);
	}
	out->ops[j].self_ns = sat_add(out->ops[j].self_ns, o->self_ns);
	out->ops[j].count += o->count;
}

void tfd_op_index_add(const struct tfd_host *h, struct tfd_op_index *x, uint32_t t,
		      const struct tfd_event *e, struct tfd_fns *out)
{
	bool by_thread = !(e->flags & TFD_EVF_ID);
	uint64_t key = by_thread ? (uint64_t)h->threads[t].id : e->id;
	size_t i;

	if (!x->next || !imap_get(&x->head, index_key(key, by_thread), &i))
		return;
	if (by_thread) { /* a Run without a step id: its thread's, once */
		if (x->thread_done[t])
			return;
		x->thread_done[t] = true;
	}
	for (int r = (int)i; r >= 0; r = x->next[r])
		if (h->fn_ops.v[r].key == key && h->fn_ops.v[r].by_thread == by_thread)
			add_record(x, t, &h->fn_ops.v[r], out);
}

static int owner_of(const struct tfd_op_owners *ow, uint32_t t)
{
	if (ow->owner[t] >= 0)
		return ow->owner[t];
	return !ow->has_calls[t] && ow->nmaps == 1 ? ow->only_map : -1;
}

void tfd_stage_fn_ops(struct tfd_pipeline *p, const struct tfd_fns *fns,
		      const struct tfd_op_owners *ow)
{
	struct tfd_fn_op *recs;

	if (!fns->nops)
		return;
	recs = xmalloc(fns->nops * sizeof(*recs));
	for (size_t q = 0; q < p->nstages; q++) {
		size_t n = 0;
		double ops = 0, work = 0;

		if (ow->fn_of[q] < 0)
			continue;
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

double tfd_stage_gil_parallelism(const struct tfd_pipeline *p, int si, double *workers)
{
	const struct tfd_stage *s = &p->stages[si];
	double all = 0, share, w = 0;

	if (!s->nfn_ops || !tfd_op_is_python(s->fn_ops[0].type))
		return NAN;
	for (size_t g = 0; g < p->nsegments; g++)
		if (p->segments[g].kind == TFD_SEG_FUNCTION && p->segments[g].owner == si)
			w = p->segments[g].parallelism;
	if (!(w >= 1))
		return NAN;
	for (size_t i = 0; i < s->nfn_ops; i++)
		all += (double)s->fn_ops[i].self_ns;
	share = all > 0 ? (double)s->fn_ops[0].self_ns / all : 0;
	*workers = w;
	return 1.0 / (share + (1.0 - share) / w);
}
