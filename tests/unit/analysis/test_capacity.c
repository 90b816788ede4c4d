/* test_capacity.c - the throughput view: limiter, evidence, what-if. */
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "rules_impl.h"
#include "t.h"
#include "tfd/analysis.h"
#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/graph.h"
#include "tfd/load.h"
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

/* Each dataset function's work is the sum of its executor chunks (on any
 * thread; the thread kept is its first chunk's in capture order), else its
 * own duration, or unknown for an async dispatch; a function inside an
 * iterator call is not a call of its own: its wait for its ops, when they
 * ran on another thread, is its iterator's (struct tfd_fns' waits). 3000 functions with random step
 * ids on four threads, read plainly and as a lean host drops the chunks. */
static void functions_get_their_chunk_sums(struct t *t)
{
	enum { F = 3000, T = 4 };
	struct want {
		int64_t start, work;
		uint32_t thread, work_thread;
		bool counted;
	} *w = xcalloc(F, sizeof(*w));
	uint64_t y = 99;

	/* plain and lean; chunks kept as events, then summed as they are
	 * packed (the XSpace reader's way) into a table that holds six in
	 * seven of the functions (the others' chunks stay events), where
	 * the huge chunks of every 19th function overflow a sum (the rest of
	 * it stays events); and coded, as the XSpace reader sums them: the
	 * events hold codes, the keys go once the host is read, and the chunks of
	 * the functions the table lacks are dropped (those functions' work is
	 * their own duration) */
	for (int mode = 0; mode < 6; mode++) {
		int lean = mode & 1, summed = mode >> 1, coded = summed == 2;
		struct tfd_capture *cap = tfd_capture_new();
		struct tfd_host *h = tfd_capture_add_host(cap, "h");
		struct tfd_exec_sums *x = NULL;
		uint64_t y0 = y;
		struct tfd_err err = {0};
		struct tfd_fns out;
		struct tfd_fn_call fc = {0, 0, 0, 0};
		const uint8_t *p;
		size_t bad = 0, seen = 0;
		int64_t chunk_start[T] = {0};

		h->has_host_plane = true;
		for (uint32_t th = 0; th < T; th++)
			tfd_host_thread(cap, h, th, "tf_data_w");
		if (summed) {
			x = xcalloc(1, sizeof(*x));
			x->cap = 2 * 4096;
			x->key = xcalloc(x->cap, sizeof(uint64_t));
			x->val = xcalloc(x->cap, sizeof(uint64_t));
			x->coded = coded;
			for (int f = 0; f < F; f++) { /* the ids the loop below makes */
				uint64_t id;

				y0 = y0 * 6364136223846793005ull + 1442695040888963407ull;
				id = y0 | 1;
				if (f % 7 == 0)
					continue;
				x->key[tfd_key_slot(x->key, x->cap, id)] = id;
			}
			tfd_capture_sum_exec(cap, x, NULL);
		}
		for (int f = 0; f < F; f++) {
			uint32_t th = (uint32_t)(f % T);
			int64_t s = (int64_t)f * 1000;
			int k = f % 5, async = f % 11 == 0;
			uint64_t id;
			struct tfd_event *e;

			y = y * 6364136223846793005ull + 1442695040888963407ull;
			id = y | 1;
			if (f % 13 == 0) /* inside an iterator call: inline */
				tfd_host_add_event(cap, h, th, "Iterator::Model::Map", s - 1, 600);
			e = tfd_host_add_event(cap, h, th,
					       async ? "InstantiatedCapturedFunction::RunAsync"
						     : "InstantiatedCapturedFunction::Run",
					       s, 500);
			tfd_event_set_stat_int(cap, e, "id", (int64_t)id);
			w[f] = (struct want){s, async ? 0 : 500, th, async ? TFD_FN_UNKNOWN : th,
					     f % 13 != 0};
			if (f % 19 == 0 && !async)
				k = 5; /* of 2^45 ns: 2^47 and more in all */
			for (int j = 0; j < (async ? 0 : k); j++) {
				uint32_t ct = (uint32_t)((f + 1 + j * 3) % T);
				int64_t d =
				    f % 19 == 0 ? (int64_t)TFD_MAX_DURATION_NS : 7 + j + f % 17;

				if (chunk_start[ct] < s + 600)
					chunk_start[ct] = s + 600;
				e = tfd_host_add_event(cap, h, ct, "ExecutorState::Process",
						       chunk_start[ct], d);
				chunk_start[ct] += d + 5;
				tfd_event_set_stat_int(cap, e, "id", (int64_t)id);
				if (j == 0)
					w[f].work = 0;
				w[f].work += d;
				/* the first in capture order: thread by thread */
				if (j == 0 || ct < w[f].work_thread)
					w[f].work_thread = ct;
			}
			if (coded && f % 7 == 0 && !async) { /* its chunks dropped */
				w[f].work = 500;
				w[f].work_thread = th;
			}
		}
		T_OK(tfd_capture_finish(cap, &err), &err);
		if (summed) {
			size_t kept = 0;

			tfd_capture_sum_exec(cap, NULL, NULL);
			h->exec_sums = x;
			if (coded) { /* not read again */
				free(x->key);
				x->key = NULL;
			}
			/* the chunks of the functions the table lacks, and those
			 * past a sum's 2^47 ns, are events */
			for (uint32_t th = 0; th < T; th++) {
				struct tfd_ev_cursor cur;
				struct tfd_event ev;

				for (tfd_ev_begin(&cur, h, &h->threads[th]);
				     tfd_ev_next(&cur, &ev);)
					kept += ev.kind == TFD_EV_EXEC;
			}
			T_TRUE(kept > 0 && kept < 2000);
		}
		tfd_capacity_functions(h, lean ? h : NULL, &out);
		p = out.buf;
		/* the calls come thread by thread, in time order */
		for (uint32_t th = 0; th < T; th++)
			for (int f = (int)th; f < F; f += T) {
				if (!w[f].counted)
					continue;
				seen++;
				if (!tfd_fns_next(&p, out.buf + out.len, &fc) || fc.thread != th ||
				    fc.start_ns != w[f].start || fc.work_ns != w[f].work ||
				    fc.work_thread != w[f].work_thread) {
					if (bad++ < 3)
						T_FAILF("mode %d, function %d: thread %u start "
							"%lld work "
							"%lld on %u, want %u %lld %lld on %u",
							mode, f, fc.thread, (long long)fc.start_ns,
							(long long)fc.work_ns, fc.work_thread, th,
							(long long)w[f].start, (long long)w[f].work,
							w[f].work_thread);
				}
			}
		T_EQ_I64((int64_t)out.n, (int64_t)seen);
		T_TRUE(!tfd_fns_next(&p, out.buf + out.len, &fc));
		{
			/* the inline ones: each its Map call's, the wait of those
			 * whose ops ran on another thread told apart */
			uint64_t calls = 0;
			int64_t run = 0, wait = 0;

			for (int f = 0; f < F; f++) {
				if (w[f].counted)
					continue;
				calls++;
				if (w[f].work_thread == TFD_FN_UNKNOWN ||
				    w[f].work_thread == w[f].thread)
					continue;
				run += 500;
				wait += w[f].work < 500 ? 500 - w[f].work : 0;
			}
			T_EQ_I64((int64_t)out.waits.n, 1);
			if (out.waits.n == 1) {
				T_TRUE(strcmp(out.waits.v[0].iter, "Iterator::Model::Map") == 0);
				T_EQ_I64((int64_t)out.waits.v[0].calls, (int64_t)calls);
				T_EQ_I64(out.waits.v[0].run_ns, run);
				T_EQ_I64(out.waits.v[0].wait_ns, wait);
			}
			T_TRUE(run > 0 && wait > 0);
		}
		free(out.buf);
		vec_free(&out.waits);
		tfd_capture_free(cap);
	}
	free(w);
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
	after = tfd_capacity_whatif(r.p, batch, 4.0, 1.0, true, NULL);
	T_EQ_DBL(after / now, 1.0, 0.02);
	/* a cheaper map function neither */
	after = tfd_capacity_whatif(r.p, pmap, 2.0, 1.0, true, NULL);
	T_EQ_DBL(after / now, 1.0, 0.02);
	/* reads 4x faster: 4x, just below the map's slots */
	after = tfd_capacity_whatif(r.p, rec, 4.0, 1.0, true, NULL);
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
	T_EQ_DBL(tfd_capacity_whatif(p, p->bottleneck, 2.0, 1.0, true, NULL), 0.0, 0.0);
	tfd_analysis_free(a);
	tfd_capture_free(cap);
}

/* a stage's name in the reports, made unique within its pipeline by the
 * shortest tail of its path another stage of that name does not share */
static void stage_labels_tell_namesakes_apart(struct t *t)
{
	struct tfd_stage st[] = {
	    {.name = "Root", .path = "Iterator::Root"},
	    {.name = "ParallelMapV2", .path = "Iterator::Root::BatchV2::ParallelMapV2"},
	    {.name = "ParallelMapV2",
	     .path = "Iterator::Root::BatchV2::ParallelMapV2::ParallelMapV2"},
	    {.name = "Map",
	     .path = "Iterator::Root::BatchV2::ParallelMapV2::ParallelMapV2::Zip[0]::Map"},
	    {.name = "Map",
	     .path = "Iterator::Root::BatchV2::ParallelMapV2::ParallelMapV2::Zip[1]::Map"},
	    {.name = "Range",
	     .path = "Iterator::Root::BatchV2::ParallelMapV2::ParallelMapV2::Zip[1]::Map::Range"},
	    {.name = "Shard", .path = "A::X::Shard"},
	    {.name = "Shard", .path = "B::X::Shard"},
	};
	struct tfd_pipeline p = {.stages = st, .nstages = sizeof(st) / sizeof(st[0])};
	char b[120];

	T_EQ_STR(tfd_stage_label(&p, 0, b, sizeof(b)), "Root");
	T_EQ_STR(tfd_stage_label(&p, 1, b, sizeof(b)), "BatchV2::ParallelMapV2");
	T_EQ_STR(tfd_stage_label(&p, 2, b, sizeof(b)), "ParallelMapV2::ParallelMapV2");
	T_EQ_STR(tfd_stage_label(&p, 3, b, sizeof(b)), "Zip[0]::Map");
	T_EQ_STR(tfd_stage_label(&p, 4, b, sizeof(b)), "Zip[1]::Map");
	T_EQ_STR(tfd_stage_label(&p, 5, b, sizeof(b)), "Range");
	T_EQ_STR(tfd_stage_label(&p, 6, b, sizeof(b)), "A::X::Shard");
	T_EQ_STR(tfd_stage_label(&p, 7, b, sizeof(b)), "B::X::Shard");
	/* a buffer too small cuts the label, never overruns */
	T_EQ_STR(tfd_stage_label(&p, 2, b, 8), "Paralle");
	/* a generated pipeline of thousands of stages keeps its names (each
	 * label looks at every stage) */
	{
		size_t n = 2001;
		struct tfd_stage *many = calloc(n, sizeof(*many));

		T_TRUE(many != NULL);
		for (size_t i = 0; i < n; i++)
			many[i] =
			    (struct tfd_stage){.name = "Map", .path = i % 2 ? "A::Map" : "B::Map"};
		p = (struct tfd_pipeline){.stages = many, .nstages = n};
		T_EQ_STR(tfd_stage_label(&p, 1, b, sizeof(b)), "Map");
		p.nstages = 2000;
		T_EQ_STR(tfd_stage_label(&p, 1, b, sizeof(b)), "A::Map");
		free(many);
	}
}

/* The step's share of the cores after the pipeline frees some: N
 * threads of the step and u of the pipeline share N cores alike, so the
 * step's time goes as (N + u) / N. 2 cores, a pipeline using 1 of them
 * (5 ms of CPU per 5-ms root element) beside the step's 4 ms. */
static void step_gets_the_cores_freed(struct t *t)
{
	struct tfd_stage st[] = {{.name = "Root", .path = "Iterator::Root", .family = "Root"}};
	struct tfd_pipeline p = {.stages = st, .nstages = 1};
	struct tfd_capacity *cp = &p.capacity;

	cp->valid = true;
	cp->cpu_budget = 2;
	cp->throughput = 200;  /* T = 5 ms */
	cp->cpu_step_ns = 4e6; /* the step, on a host without a device */
	cp->cpu_ns = 9e6;      /* + 5 ms of the pipeline's: u = 1 */
	/* all of it freed: (2 + 0) / (2 + 1) */
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 4e6, 1.0), 2.0 / 3.0, 1e-9);
	/* half of it, at the same rate: u' = 0.5 */
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 6.5e6, 1.0), 2.5 / 3.0, 1e-9);
	/* 5 ms of hidden CPU a root element (a vectorized map's fixed cost per
	 * call) counts before: u = 2, all freed: (2 + 0) / (2 + 2) */
	T_EQ_DBL(tfd_capacity_step_share(&p, 5e6, 4e6, 1.0), 0.5, 1e-9);
	/* the same CPU over a period 2x shorter: u' = 1, nothing gained */
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 6.5e6, 2.0), 1.0, 1e-9);
	/* no CPU freed, or more used: the step keeps its time */
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 9e6, 1.0), 1.0, 0.0);
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 12e6, 1.0), 1.0, 0.0);
	/* 1 ms of it a synchronous stage on the consumer's own thread: it runs
	 * between the steps, never beside them: u = 0.8, all else freed */
	cp->root_elements = 1;
	st[0].work_ns = 1000000;
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 5e6, 1.0), 2.0 / 2.8, 1e-9);
	st[0].work_ns = 0;
	/* a host with a device: the step waits for it, not for the cores */
	cp->cpu_step_ns = 0;
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 0, 1.0), 1.0, 0.0);
	/* no cores said */
	cp->cpu_step_ns = 4e6;
	cp->cpu_budget = 0;
	T_EQ_DBL(tfd_capacity_step_share(&p, 0, 4e6, 1.0), 1.0, 0.0);
}

/* A tf.data service client: its map's workers, measured, could deliver
 * far more than the 60/s seen, the step would take 94/s, and the
 * DataService stage blocks most: the remote work sets the rate. */
static void remote_stage_limits_where_unseen(struct t *t)
{
	struct tfd_stage st[] = {
	    {.name = "Root", .path = "Iterator::Root", .family = "Root"},
	    {.name = "ParallelMapV2",
	     .path = "Iterator::Root::ParallelMapV2",
	     .family = "ParallelMap",
	     .parent = 0},
	    {.name = "DataService",
	     .path = "Iterator::Root::ParallelMapV2::DataService",
	     .family = "DataService",
	     .parent = 1},
	};
	struct tfd_segment sg[] = {{.kind = TFD_SEG_CONSUMER, .top_stage = 0, .capacity = 68000},
				   {.kind = TFD_SEG_FUNCTION,
				    .owner = 1,
				    .top_stage = 1,
				    .capacity = 7900,
				    .known = true}};
	struct tfd_pipeline p = {.stages = st, .nstages = 3, .segments = sg, .nsegments = 2};
	struct tfd_capacity *cp = &p.capacity;

	cp->valid = true;
	cp->limiter = 1;
	cp->throughput = 60;
	cp->demand = 94;
	p.latency_bottleneck = p.bottleneck = 2; /* as the latency view left it */
	T_TRUE(tfd_remote_limits(&p));
	tfd_bottleneck_choose(&p);
	T_EQ_I64(p.bottleneck, 2);
	T_EQ_DBL(tfd_producer_over_demand(&p).num, 60.0 / 94.0, 1e-9);
	/* the step takes about what was seen: the remote keeps up */
	cp->demand = 70;
	T_TRUE(!tfd_remote_limits(&p));
	/* a measured segment near the rate seen is the limit */
	cp->demand = 94;
	sg[1].capacity = 70;
	T_TRUE(!tfd_remote_limits(&p));
	/* a source on this host is the model's to judge */
	sg[1].capacity = 7900;
	st[2].family = "TFRecord";
	T_TRUE(!tfd_remote_limits(&p));
	p.bottleneck = -1;
	st[1].is_bottleneck = false;
	tfd_bottleneck_choose(&p);
	T_EQ_I64(p.bottleneck, 1);
}

/* shard(4, 0) above a map: the shard skips three elements in one call of
 * its input, so the map's own calls say two for each element kept; its
 * function's runs, or the calls of the stage below a one-to-one stage, say
 * four. The what-if of a quarter of the work below the shard lies between
 * none of it (the subtree gone) and all of it. */
static void late_shard_keeps_a_quarter(struct t *t)
{
	struct tfd_stage st[] = {
	    {.name = "Root", .path = "R", .family = "Root", .parent = -1, .segment = 0},
	    {.name = "Shard", .path = "R::S", .family = "Shard", .parent = 0, .segment = 0},
	    {.name = "Map", .path = "R::S::M", .family = "Map", .parent = 1, .segment = 0},
	    {.name = "TFRecord", .path = "R::S::M::T", .family = "TFRecord", .parent = 2},
	};
	struct tfd_segment sg[] = {{.kind = TFD_SEG_CONSUMER,
				    .owner = -1,
				    .top_stage = 2,
				    .parallelism = 1,
				    .busy_ns = 1000000000,
				    .capacity = 100,
				    .known = true}};
	struct tfd_pipeline p = {.stages = st, .nstages = 4, .segments = sg, .nsegments = 1};
	struct tfd_capacity *cp = &p.capacity;
	int root = -9;
	double keep = -1, gone, quarter, all;

	cp->valid = true;
	cp->limiter = 0;
	cp->throughput = cp->model_throughput = 100;
	cp->demand = INFINITY; /* the step takes whatever comes */
	cp->root_elements = 100;
	st[0].window_calls = st[1].window_calls = 100;
	st[2].window_calls = 200; /* GetNext and Skip */
	st[3].window_calls = 400;
	st[2].work_ns = 800000000;
	st[3].work_ns = 100000000;
	T_EQ_I64(tfd_dropped_above(&p, 2, NULL, 0, &root, &keep), 1);
	T_EQ_I64(root, 2);
	T_EQ_DBL(keep, 0.25, 1e-12);
	/* from the reader too: the same shard, the same count */
	T_EQ_I64(tfd_dropped_above(&p, 3, NULL, 0, &root, &keep), 1);
	T_EQ_DBL(keep, 0.25, 1e-12);
	/* the rate: 0.9 s of the segment's 1 s below the shard */
	gone = tfd_capacity_whatif_kept(&p, 2, 0.0, NULL);
	quarter = tfd_capacity_whatif_kept(&p, 2, 0.25, NULL);
	all = tfd_capacity_whatif_kept(&p, 2, 1.0, NULL);
	T_EQ_DBL(gone, 1000.0, 1e-6);
	T_EQ_DBL(quarter, 100.0 / (0.1 + 0.9 * 0.25), 1e-6);
	T_EQ_DBL(all, 100.0, 1e-6);
	/* the shard itself, and a stage above it, have no shard above */
	T_EQ_I64(tfd_dropped_above(&p, 1, NULL, 0, &root, &keep), -1);
	T_EQ_I64(tfd_dropped_above(&p, 0, NULL, 0, &root, &keep), -1);
	/* an async map's function runs count what its calls do not */
	st[2].family = "ParallelMap";
	st[2].fn_calls = 400;
	st[3].window_calls = 0;
	T_EQ_I64(tfd_dropped_above(&p, 2, NULL, 0, &root, &keep), 1);
	T_EQ_DBL(keep, 0.25, 1e-12);
	/* nothing counted below it: unknown, not "keeps all" */
	st[2].window_calls = st[2].fn_calls = 0;
	T_EQ_I64(tfd_dropped_above(&p, 2, NULL, 0, &root, &keep), -1);
	/* a shard that passes every element on keeps 1 */
	st[2].window_calls = 100;
	T_EQ_I64(tfd_dropped_above(&p, 2, NULL, 0, &root, &keep), 1);
	T_EQ_DBL(keep, 1.0, 1e-12);
	/* a filter's families, named: the shard is none of them */
	{
		const char *const filt[] = {"Filter", "ParallelFilter"};

		T_EQ_I64(tfd_dropped_above(&p, 2, filt, 2, &root, &keep), -1);
		st[1].family = "Filter";
		T_EQ_I64(tfd_dropped_above(&p, 2, filt, 2, &root, &keep), 1);
		T_EQ_I64(tfd_dropped_above(&p, 2, NULL, 0, &root, &keep), -1);
		st[1].family = "Shard";
	}
	/* an interleave below the shard: its inner datasets' calls */
	st[2].family = "ParallelInterleave";
	st[2].window_calls = 200;
	st[2].fn_calls = 0;
	st[3].window_calls = 400;
	T_EQ_I64(tfd_dropped_above(&p, 2, NULL, 0, &root, &keep), 1);
	T_EQ_DBL(keep, 0.25, 1e-12);
	/* no model, no answer */
	cp->valid = false;
	T_EQ_I64(tfd_dropped_above(&p, 2, NULL, 0, &root, &keep), -1);
}

/* A flat_map's inner datasets: each takes one call per element and one for
 * its end, so a window of one batch each makes two calls per element
 * delivered; files of many records make one and a little more. The input
 * (FlatMap::Window) and the inner (FlatMap[7]::Batch) are told apart by
 * the instance index in the inner's long name. */
static void flat_map_elements_per_inner(struct t *t)
{
	struct tfd_stage st[] = {
	    {.name = "Root",
	     .long_name = "Iterator::Root",
	     .path = "R",
	     .family = "Root",
	     .parent = -1},
	    {.name = "FlatMap",
	     .long_name = "Iterator::Root::FlatMap",
	     .path = "R::F",
	     .family = "FlatMap",
	     .parent = 0},
	    {.name = "Window",
	     .long_name = "Iterator::Root::FlatMap::Window",
	     .path = "R::F::W",
	     .family = "Window",
	     .parent = 1},
	    {.name = "BatchV2",
	     .long_name = "Iterator::Root::FlatMap[7]::BatchV2",
	     .path = "R::F::B",
	     .family = "Batch",
	     .parent = 1},
	};
	struct tfd_pipeline p = {.stages = st, .nstages = 4};

	st[1].window_calls = 1000;
	st[2].window_calls = 5000; /* the input's own calls are no inner datasets */
	st[3].window_calls = 2000; /* 1000 windows of one batch each, and their ends */
	T_EQ_DBL(tfd_elements_per_inner(&p, 1), 1.0, 1e-12);
	st[3].window_calls = 1004; /* 4 files of 250 records */
	T_EQ_DBL(tfd_elements_per_inner(&p, 1), 250.0, 1e-12);
	/* no inner call beyond the stage's own: unknown */
	st[3].window_calls = 1000;
	T_TRUE(isnan(tfd_elements_per_inner(&p, 1)));
	/* no inner stage at all (the input only): unknown */
	st[3].long_name = "Iterator::Root::FlatMap::BatchV2";
	st[3].window_calls = 2000;
	T_TRUE(isnan(tfd_elements_per_inner(&p, 1)));
	/* too few calls to say */
	st[3].long_name = "Iterator::Root::FlatMap[7]::BatchV2";
	st[1].window_calls = 4;
	st[3].window_calls = 8;
	T_TRUE(isnan(tfd_elements_per_inner(&p, 1)));
}

/* A thread that changed roles: each function call is the stage's whose
 * input call ended last before it; before any, the thread's owner. */
static void function_owner_by_time(struct t *t)
{
	int owner[2] = {3, -1}, fn_of[8] = {-1, -1, -1, 1, -1, -1, 2, -1};
	struct tfd_role r0[4] = {{100, 3}, {200, 6}, {210, 6}, {500, 3}};
	struct tfd_role_line roles[2] = {{4, r0}, {0, NULL}};
	struct tfd_op_owners ow = {owner, 2, -1, fn_of, roles, 2};

	T_EQ_I64(tfd_op_owner_at(&ow, 0, 50), 3);  /* no call ended yet */
	T_EQ_I64(tfd_op_owner_at(&ow, 0, 100), 3); /* the one that just ended */
	T_EQ_I64(tfd_op_owner_at(&ow, 0, 205), 6);
	T_EQ_I64(tfd_op_owner_at(&ow, 0, 499), 6);
	T_EQ_I64(tfd_op_owner_at(&ow, 0, 9000), 3);
	/* a thread of one role: its owner, or none */
	T_EQ_I64(tfd_op_owner_at(&ow, 1, 300), -1);
	ow.roles = NULL;
	T_EQ_I64(tfd_op_owner_at(&ow, 0, 300), 3);
}

/* A function call on a thread whose last ended iterator call was another
 * pipeline's, still running, is that pipeline's; one of an ended pipeline
 * (a pool thread handed on) is not. Roots are iterators 0 and 5. */
static void function_foreign_by_time(struct t *t)
{
	uint32_t off[3] = {0, 3, 3};
	struct tfd_role runs[3] = {{100, 0}, {300, 5}, {700, 0}};
	int64_t last_end[6] = {900, INT64_MIN, INT64_MIN, INT64_MIN, INT64_MIN, 400};
	struct tfd_thread_roots tr;

	memset(&tr, 0, sizeof(tr));
	tr.off = off;
	tr.runs = runs;
	tr.last_end = last_end;
	tr.nthreads = 2;

	T_TRUE(!tfd_fn_foreign(&tr, 0, 50, 0)); /* no call ended yet */
	T_TRUE(!tfd_fn_foreign(&tr, 0, 150, 0));
	T_TRUE(tfd_fn_foreign(&tr, 0, 150, 5));
	T_TRUE(tfd_fn_foreign(&tr, 0, 350, 0)); /* pipeline 5 still runs */
	T_TRUE(!tfd_fn_foreign(&tr, 0, 350, 5));
	T_TRUE(!tfd_fn_foreign(&tr, 0, 500, 0)); /* pipeline 5 ended at 400 */
	T_TRUE(tfd_fn_foreign(&tr, 0, 800, 5));
	T_TRUE(!tfd_fn_foreign(&tr, 1, 800, 5)); /* no runs on the thread */
	T_TRUE(!tfd_fn_foreign(NULL, 0, 800, 5));
}

/* A function thread's owner is the owner of most of its input calls, the
 * first to get there on a tie (the votes are counted a run of calls at a
 * time). Stages 0 and 1 are input segments owned by the async stages 1
 * and 0 (an owner is a stage), stage 2 the consumer's; iterator i is
 * stage i. */
static void thread_owner_first_to_most_calls(struct t *t)
{
	/* owners, thread 0: 1 1 0 0 (a tie: 1 got there first); thread 1:
	 * 0 1 1; thread 2: 1 0 1 0 0 and a consumer call */
	static const int stage[] = {0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 2};
	static const uint32_t thread[] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2};
	enum { N = sizeof(stage) / sizeof(stage[0]) };
	struct call calls[N];
	struct call_pair pairs[N];
	uint8_t cpr[N];
	struct call_pairs cp = {cpr, 1};
	int64_t start[N], end[N];
	int iter_stage[3] = {0, 1, 2}, seg_of[3] = {0, 1, 2}, fn_of[3] = {-1, -1, -1};
	struct tfd_segment segs[3] = {{.kind = TFD_SEG_INPUT, .owner = 1},
				      {.kind = TFD_SEG_INPUT, .owner = 0},
				      {.kind = TFD_SEG_CONSUMER, .owner = -1}};
	struct tfd_host h;
	struct tfd_fns fns;
	struct tfd_cap_calls in;
	struct tfd_owner_in oi = {&in, 3, seg_of, fn_of, segs};
	struct tfd_op_owners ow;

	memset(&h, 0, sizeof(h));
	memset(&fns, 0, sizeof(fns));
	memset(&in, 0, sizeof(in));
	h.nthreads = 3;
	for (size_t k = 0; k < N; k++) {
		calls[k] = (struct call){.parent = -1};
		cpr[k] = (uint8_t)k;
		pairs[k] = (struct call_pair){stage[k], thread[k]};
		start[k] = 100 * (int64_t)k;
		end[k] = start[k] + 50;
	}
	in.host = &h;
	in.fns = &fns;
	in.n = N;
	in.calls = calls;
	in.pairs = pairs;
	in.cpair = &cp;
	in.iter_stage = iter_stage;
	in.tm.start = start;
	in.tm.end = end;
	in.root = -1;
	ow = tfd_owners_make(&oi);
	T_EQ_I64(ow.owner[0], 1);
	T_EQ_I64(ow.owner[1], 1);
	T_EQ_I64(ow.owner[2], 0);
	/* each a thread of two roles, its calls by their ends */
	T_TRUE(ow.roles && ow.roles[0].n == 4 && ow.roles[2].n == 5);
	tfd_owners_free(&ow);
}

/* A host's function calls indexed by thread (tfd_fns_index): a pass that
 * reads one thread from a time on gets every call that starts in its
 * window, in order, and only that thread's; the tallies give each
 * thread's score for every root as tfd_fn_foreign() call by call does.
 * Random threads of calls, one not in time order, random runs. */
static void function_calls_by_thread(struct t *t)
{
	enum { NT = 6, NR = 4, MAXC = 400 };
	struct tfd_fns fns;
	struct tfd_fn_call all[NT * MAXC];
	size_t n = 0, cap = NT * MAXC * 40;
	uint8_t *buf = malloc(cap), *q = buf;
	uint32_t off[NT + 1];
	struct tfd_role runs[NT * 8];
	int64_t last_end[NR];
	struct tfd_thread_roots tr;
	unsigned seed = 99;
	uint32_t pt = 0;
	int64_t ps = 0;

	memset(&fns, 0, sizeof(fns));
	memset(&tr, 0, sizeof(tr));
	off[0] = 0;
	for (int th = 0; th < NT; th++) {
		int nc = th == 2 ? 0 : (int)(rand_r(&seed) % MAXC);
		int64_t at = 1000;

		for (int k = 0; k < nc; k++) {
			struct tfd_fn_call f;

			/* thread 4 goes back in time now and then */
			/* (a fifth at the same time as the one before) */
			at += th == 4 && k % 7 == 3    ? -500
			      : rand_r(&seed) % 5 == 0 ? 0
						       : (int64_t)(rand_r(&seed) % 900);
			f.thread = (uint32_t)th;
			f.start_ns = at;
			f.work_ns = rand_r(&seed) % 100;
			f.work_thread = k % 3 ? f.thread : TFD_FN_UNKNOWN;
			all[n++] = f;
			q = tfd_ev_put_varint(q, f.thread - pt);
			q = tfd_ev_put_varint(q, tfd_ev_zig(f.start_ns - ps));
			q = tfd_ev_put_varint(q, tfd_ev_zig(f.work_ns));
			q = tfd_ev_put_varint(
			    q, f.work_thread == TFD_FN_UNKNOWN
				   ? 0
				   : 1 + tfd_ev_zig((int64_t)f.work_thread - (int64_t)f.thread));
			pt = f.thread;
			ps = f.start_ns;
		}
		/* runs: up to 8 roots' ends on the thread, by end */
		off[th + 1] = off[th] + (uint32_t)(th % 3 == 1 ? 0 : 8);
		for (uint32_t r = off[th]; r < off[th + 1]; r++)
			runs[r] = (struct tfd_role){1000 + 30000 * (int64_t)(r - off[th]),
						    (int)(rand_r(&seed) % NR)};
	}
	/* each root ends where a call starts after one of its runs
	 * (tfd_fn_foreign's bound) */
	for (int r = 0; r < NR; r++) {
		size_t k = (size_t)(r + 1) * n / (NR + 1), j;
		uint32_t th;

		last_end[r] = 0;
		if (k >= n)
			continue;
		th = all[k].thread;
		j = tfd_roles_ended(runs + off[th], off[th + 1] - off[th], all[k].start_ns);
		if (j)
			runs[off[th] + j - 1].owner = r;
		last_end[r] = all[k].start_ns;
	}
	fns.buf = buf;
	fns.len = (size_t)(q - buf);
	fns.n = n;
	tr.off = off;
	tr.runs = runs;
	tr.last_end = last_end;
	tr.nthreads = NT;
	tfd_fns_index(&fns, &tr);
	T_TRUE(tr.marks != NULL);
	for (uint32_t th = 0; th < NT && tr.marks; th++) {
		int64_t from[7 + 2 * MAXC / 64 + 2] = {INT64_MIN, 0,	 1000,	 5000,
						       33333,	  90000, 1 << 30};
		size_t nfrom = 7;
		int64_t score[NR] = {0};
		size_t nth = 0;

		for (size_t k = 0; k < n; k++)
			if (all[k].thread == th) {
				/* and at each mark's call, and just past it */
				if (nth % 64 == 0) {
					from[nfrom++] = all[k].start_ns;
					from[nfrom++] = all[k].start_ns + 1;
				}
				nth++;
				for (int r = 0; r < NR; r++)
					score[r] +=
					    tfd_fn_foreign(&tr, th, all[k].start_ns, r) ? 1 : -1;
			}
		for (int r = 0; r < NR; r++)
			T_EQ_I64(tfd_fn_foreign_score(&tr, th, r), score[r]);
		T_EQ_U64(tr.fn_n[th], nth);
		for (size_t w = 0; w < nfrom; w++) {
			int64_t until = from[w] == INT64_MIN ? INT64_MAX : from[w] + 20000;
			struct tfd_fns_cursor cur;
			size_t k = 0, got = 0, want = 0, at;
			bool ok = tfd_fns_thread(&tr, &fns, th, from[w], until, &cur);

			while (k < n && all[k].thread != th)
				k++;
			T_EQ_U64(ok, k < n);
			for (size_t j = k; j < n && all[j].thread == th; j++)
				want += all[j].start_ns >= from[w] && all[j].start_ns < until;
			/* the calls read: a run of the thread's, in order */
			while (ok && tfd_fns_cursor_next(&cur)) {
				if (!got) { /* where the run starts: at a mark, every 64th call */
					for (at = k; at < n && all[at].thread == th &&
						     (all[at].start_ns != cur.f.start_ns ||
						      all[at].work_ns != cur.f.work_ns);)
						at += 64;
					k = at;
				}
				T_TRUE(k < n && all[k].thread == th &&
				       all[k].start_ns == cur.f.start_ns &&
				       all[k].work_ns == cur.f.work_ns &&
				       all[k].work_thread == cur.f.work_thread);
				got += cur.f.start_ns >= from[w] && cur.f.start_ns < until;
				k++;
			}
			T_EQ_U64(got, want);
		}
	}
	free(tr.marks);
	free(tr.mark_off);
	free(tr.fn_sorted);
	free(tr.fn_n);
	free(tr.fn_active);
	imap_free(&tr.fn_active_root);
	free(buf);
}

const struct t_case capacity_cases[] = {
    T(functions_get_their_chunk_sums),	  T(reader_behind_parallel_map),
    T(function_not_captured_is_inferred), T(single_call_keeps_latency_view),
    T(stage_labels_tell_namesakes_apart), T(step_gets_the_cores_freed),
    T(remote_stage_limits_where_unseen),  T(late_shard_keeps_a_quarter),
    T(flat_map_elements_per_inner),	  T(function_owner_by_time),
    T(function_foreign_by_time),	  T(function_calls_by_thread),
    T(thread_owner_first_to_most_calls),  {0},
};
