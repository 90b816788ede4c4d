/* test_capacity.c - the throughput view: limiter, evidence, what-if. */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/passes.h"
#include "t.h"
#include "tfd/analysis.h"
#include "tfd/capture.h"
#include "tfd/synth.h"

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *f)
{
	(void)sb;
	(void)flag;
	(void)f;
	return remove(p);
}

struct run {
	char dir[32];
	struct tfd_capture *cap;
	struct tfd_analysis *a;
	const struct tfd_pipeline *p;
};

static void run_spec(struct t *t, const char *spec, struct run *r)
{
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	const char *paths[1];
	const struct tfd_host_result *h;

	memset(r, 0, sizeof(*r));
	snprintf(r->dir, sizeof(r->dir), "/tmp/tfd-unit-XXXXXX");
	T_TRUE(mkdtemp(r->dir) != NULL);
	T_OK(tfd_synth_run(spec, r->dir, 1.0, &res, &err), &err);
	paths[0] = res.run_dir;
	T_OK(tfd_capture_load(paths, 1, NULL, &r->cap, &err), &err);
	T_OK(tfd_analyze(r->cap, NULL, &r->a, &err), &err);
	h = &r->a->hosts[0];
	T_TRUE(h->focus >= 0);
	r->p = &h->pipelines[h->focus];
}

static void done(struct run *r)
{
	tfd_analysis_free(r->a);
	tfd_capture_free(r->cap);
	nftw(r->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int stage_named(const struct tfd_pipeline *p, const char *name)
{
	for (size_t i = 0; i < p->nstages; i++)
		if (strcmp(p->stages[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* class 1: the reader limits; the map holds the wait (latency view) */
static void reader_behind_parallel_map(struct t *t)
{
	struct run r;
	const struct tfd_capacity *cp;
	int rec, batch, pmap;
	double now, after;

	run_spec(t, "tests/synth/24-source-behind-pmap.json", &r);
	cp = &r.p->capacity;
	T_TRUE(cp->valid);
	rec = stage_named(r.p, "TFRecord");
	batch = stage_named(r.p, "BatchV2");
	pmap = stage_named(r.p, "ParallelMapV2");
	T_EQ_I64(r.p->bottleneck, rec);
	T_EQ_I64(r.p->latency_bottleneck, pmap);
	T_EQ_I64(r.p->segments[cp->limiter].kind, TFD_SEG_INPUT);
	T_EQ_I64(r.p->segments[cp->runner_up].kind, TFD_SEG_FUNCTION);
	T_TRUE(!cp->inferred);
	T_TRUE(cp->margin > 3.0);
	T_TRUE(r.p->segments[cp->limiter].utilization > 0.9);
	T_TRUE(strstr(cp->evidence, "busy") != NULL);
	/* observed and modelled throughput agree */
	T_EQ_DBL(cp->model_throughput / cp->throughput, 1.0, 0.05);
	/* a faster batch does not touch the limit: ~1.0x */
	now = cp->model_throughput;
	after = tfd_capacity_whatif(r.p, batch, 4.0, 1.0);
	T_EQ_DBL(after / now, 1.0, 0.02);
	/* a cheaper map function neither */
	after = tfd_capacity_whatif(r.p, pmap, 2.0, 1.0);
	T_EQ_DBL(after / now, 1.0, 0.02);
	/* reads 4x faster: 4x, just below the map's slots */
	after = tfd_capacity_whatif(r.p, rec, 4.0, 1.0);
	T_EQ_DBL(after / now, 4.0, 0.2);
	done(&r);
}

/* a map whose function left no events: inferred from the idle reader */
static void function_not_captured_is_inferred(struct t *t)
{
	struct run r;

	run_spec(t, "tests/synth/37-pmap-function-not-captured.json", &r);
	T_TRUE(r.p->capacity.valid);
	T_TRUE(r.p->capacity.inferred);
	T_EQ_STR(r.p->stages[r.p->bottleneck].name, "ParallelMapV2");
	T_TRUE(!r.p->segments[r.p->capacity.limiter].known);
	done(&r);
}

/* one root call is too little for a throughput model: the latency view stands */
static void single_call_keeps_latency_view(struct t *t)
{
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *a = NULL;
	struct tfd_err err = {0};
	const char *paths[] = {"examples/smdebug-8gpu/ip-172-31-19-241.trace.json"};
	const struct tfd_pipeline *p;

	T_OK(tfd_capture_load(paths, 1, NULL, &cap, &err), &err);
	T_OK(tfd_analyze(cap, NULL, &a, &err), &err);
	p = &a->hosts[0].pipelines[a->hosts[0].focus];
	T_TRUE(!p->capacity.valid);
	T_EQ_I64(p->bottleneck, p->latency_bottleneck);
	T_EQ_DBL(tfd_capacity_whatif(p, p->bottleneck, 2.0, 1.0), 0.0, 0.0);
	tfd_analysis_free(a);
	tfd_capture_free(cap);
}

const struct t_case capacity_cases[] = {
	T(reader_behind_parallel_map),
	T(function_not_captured_is_inferred),
	T(single_call_keeps_latency_view),
	{0},
};
