/* test_capture.c - the capture model, sniffing and the readers. */
#include <dirent.h>
#include <ftw.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "t.h"
#include "tfd/analysis.h"
#include "tfd/app.h"
#include "tfd/buf.h"
#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/families.h"
#include "tfd/graph.h"
#include "tfd/load.h"
#include "tfd/pages.h"
#include "tfd/partial.h"
#include "tfd/pool.h"
#include "tfd/render.h"
#include "tfd/rules.h"
#include "tfd/synth.h"
#include "xplane.pb-c.h"

/* An op event's name is "name:type": the type an identifier, the name a
 * path without spaces; iterator names and messages with colons are not. */
static void op_types(struct t *t)
{
	T_EQ_STR(tfd_op_type("map/decode_jpeg:DecodeJpegV2"), "DecodeJpegV2");
	T_EQ_STR(tfd_op_type("n/_2:_Send"), "_Send");
	T_TRUE(tfd_op_type("Iterator::Model::Map") == NULL);
	T_TRUE(tfd_op_type("RemoteCall: Instantiate: f on /job:w/replica:0") == NULL);
	T_TRUE(tfd_op_type("x:") == NULL && tfd_op_type(":Cast") == NULL);
	T_TRUE(tfd_op_type("x:2D") == NULL && tfd_op_type("Cast") == NULL);
}

/* Ops inside a function scope: self time net of the ops nested in them,
 * one record per scope and op in a row; nothing outside the scope, and an
 * event out of time order closes it. */
static void function_ops_self_time(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_opscope s;
	const char *a = "f/a:DecodePng", *b = "f/b:Cast";

	memset(&s, 0, sizeof(s));
	tfd_opscope_event(cap, h, &s, a, NULL, 0, 10); /* no scope yet */
	tfd_opscope_open(&s, 42, false, 100, 1000);
	tfd_opscope_event(cap, h, &s, a, NULL, 110, 500);
	tfd_opscope_event(cap, h, &s, b, NULL, 200, 300); /* inside a */
	tfd_opscope_event(cap, h, &s, b, NULL, 600, 700);
	tfd_opscope_event(cap, h, &s, "Iterator::Map", NULL, 700, 710);
	tfd_opscope_event(cap, h, &s, b, NULL, 650, 660); /* out of order */
	tfd_opscope_event(cap, h, &s, b, NULL, 800, 900); /* scope closed */
	/* a, then b (the nested one and the one after it: in a row) */
	T_EQ_I64((int64_t)h->fn_ops.n, 2);
	T_EQ_STR(tfd_fn_op_name(&h->fn_ops, 0), a);
	T_EQ_I64(tfd_fn_op_self(&h->fn_ops.v[0]), 390 - 100);
	T_EQ_I64(tfd_fn_op_self(&h->fn_ops.v[1]), 200);
	T_EQ_I64((int64_t)tfd_fn_op_count(&h->fn_ops.v[1]), 2);
	/* one run: the scope's */
	T_EQ_I64((int64_t)h->fn_ops.nruns, 1);
	T_EQ_I64((int64_t)h->fn_ops.runs[0].key, 42);
	T_EQ_I64((int64_t)tfd_fn_op_run_end(&h->fn_ops, 0), 2);
	{
		struct tfd_op_total *tot = NULL;
		struct tfd_op_named named[2];
		size_t n;

		for (size_t i = 0; i < 2; i++)
			named[i] = (struct tfd_op_named){tfd_fn_op_name(&h->fn_ops, i),
							 tfd_fn_op_self(&h->fn_ops.v[i]),
							 tfd_fn_op_count(&h->fn_ops.v[i])};
		n = tfd_fn_ops_by_type(named, 2, &tot);

		T_EQ_I64((int64_t)n, 2);
		T_EQ_STR(tot[0].type, "DecodePng");
		T_EQ_I64(tot[0].self_ns, 290);
		T_EQ_STR(tot[1].type, "Cast");
		T_EQ_I64(tot[1].self_ns, 200);
		T_EQ_I64((int64_t)tot[1].count, 2);
		free(tot);
	}
	tfd_capture_free(cap);
}

/* The same ops read with their kinds known (an XSpace plane's names, read
 * once per metadata, not at every event): the same records, a Python op
 * noted, a name without a type in none. */
static void function_ops_known_kinds(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_opscope s;
	const char *a = "f/a:DecodePng", *b = "f/b:Cast", *py = "f/p:EagerPyFunc",
		   *none = "Iterator::Map";
	struct tfd_op_kind ka, kb, kp, kn;

	tfd_op_kind_of(a, &ka);
	tfd_op_kind_of(b, &kb);
	tfd_op_kind_of(py, &kp);
	tfd_op_kind_of(none, &kn);
	T_EQ_STR(ka.type, "DecodePng");
	T_TRUE(!ka.py && kp.py && kn.type == NULL && !kn.py);
	memset(&s, 0, sizeof(s));
	tfd_opscope_open(&s, 42, false, 100, 1000);
	tfd_opscope_event(cap, h, &s, a, &ka, 110, 500);
	tfd_opscope_event(cap, h, &s, b, &kb, 200, 300); /* inside a */
	tfd_opscope_event(cap, h, &s, none, &kn, 320, 330);
	tfd_opscope_event(cap, h, &s, py, &kp, 600, 700);
	T_EQ_I64((int64_t)h->fn_ops.n, 3);
	T_TRUE(tfd_fn_op_name(&h->fn_ops, 0) == a && tfd_fn_op_name(&h->fn_ops, 2) == py);
	T_EQ_I64(tfd_fn_op_self(&h->fn_ops.v[0]), 390 - 100);
	T_EQ_I64(tfd_fn_op_self(&h->fn_ops.v[1]), 100);
	T_EQ_I64((int64_t)h->npy_ops, 1);
	T_EQ_I64(h->py_ops[0].s, 600);
	tfd_capture_free(cap);
}

/* A record folds at most TFD_FN_OP_COUNT op events of its name (600 in a
 * row: three records, their sums whole); a host whose records would index
 * more names than they can counts none of the rest, and its read fails
 * with a limit error; a part's that did fails the host it is moved into. */
static void function_op_records_split_and_limit(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h, *p;
	struct tfd_fn_ops *o;
	struct tfd_opscope s;
	static const char *const names[] = {"f/a:Cast", "f/b:Mul", "f/c:Add", "f/d:Sub"};
	struct tfd_op_kind k[4];
	struct tfd_err err = {0};
	int64_t self = 0;
	uint64_t count = 0;

	tfd_capture_add_host(cap, "h");
	tfd_capture_add_host(cap, "p"); /* (the hosts' array moves: pointers after) */
	h = &cap->hosts[0];
	p = &cap->hosts[1];
	o = &h->fn_ops;
	for (int i = 0; i < 4; i++)
		tfd_op_kind_of(names[i], &k[i]);
	memset(&s, 0, sizeof(s));
	tfd_opscope_open(&s, 1, false, 0, 100000);
	for (int i = 0; i < 600; i++)
		tfd_opscope_event(cap, h, &s, names[0], &k[0], 10 * i, 10 * i + 7);
	T_EQ_I64((int64_t)o->n, 3);
	T_EQ_I64((int64_t)o->nruns, 1);
	for (size_t i = 0; i < o->n; i++) {
		T_TRUE(tfd_fn_op_name(o, i) == names[0]);
		self += tfd_fn_op_self(&o->v[i]);
		count += tfd_fn_op_count(&o->v[i]);
	}
	T_EQ_I64(self, 600 * 7);
	T_EQ_I64((int64_t)count, 600);
	T_EQ_I64((int64_t)tfd_fn_op_count(&o->v[0]), TFD_FN_OP_COUNT);
	T_OK(tfd_fn_ops_check(h, &err), &err);
	/* three names at most: the fourth is not counted, and the read fails */
	o->names_max = 3;
	tfd_opscope_event(cap, h, &s, names[1], &k[1], 7000, 7001);
	tfd_opscope_event(cap, h, &s, names[2], &k[2], 7002, 7003);
	tfd_opscope_event(cap, h, &s, names[3], &k[3], 7004, 7005);
	T_EQ_I64((int64_t)o->nnames, 3);
	T_EQ_I64((int64_t)o->n, 5);
	T_TRUE(o->full);
	T_EQ_I64(tfd_fn_ops_check(h, &err), TFD_E_LIMIT);
	T_TRUE(strstr(err.msg, "more than 3 distinct op names") != NULL);
	/* a part that met the limit fails the host it goes into */
	memset(&s, 0, sizeof(s));
	p->fn_ops.full = true;
	tfd_fn_ops_free(o);
	T_OK(tfd_fn_ops_check(h, &err), &err);
	tfd_fn_ops_insert(o, 0, 0, &p->fn_ops, NULL, false);
	T_EQ_I64(tfd_fn_ops_check(h, &err), TFD_E_LIMIT);
	tfd_capture_free(cap);
}

/* A host's records in runs, one per scope in a row, their names each kept
 * once: a scope again after another's is a run of its own; a part of a
 * line (cut) starts one, its first record not folded into the one before;
 * records put in among others (a part's lead ops) move the runs after. */
static void function_op_runs(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_host scratch;
	struct tfd_fn_ops *o = &h->fn_ops;
	struct tfd_opscope s;
	const char *a = "f/a:Cast", *b = "f/b:Mul", *c = "f/c:Add", *d = "f/d:Sub";
	struct tfd_op_kind ka, kb, kc, kd;

	tfd_op_kind_of(a, &ka);
	tfd_op_kind_of(b, &kb);
	tfd_op_kind_of(c, &kc);
	tfd_op_kind_of(d, &kd);
	memset(&s, 0, sizeof(s));
	tfd_opscope_open(&s, 1, false, 0, 100);
	tfd_opscope_event(cap, h, &s, a, &ka, 10, 20);
	tfd_opscope_event(cap, h, &s, b, &kb, 20, 30);
	tfd_opscope_open(&s, 2, false, 100, 200);
	tfd_opscope_event(cap, h, &s, a, &ka, 110, 120);
	tfd_opscope_open(&s, 1, false, 200, 300);
	tfd_opscope_event(cap, h, &s, c, &kc, 210, 220);
	o->cut = true;
	tfd_opscope_event(cap, h, &s, c, &kc, 230, 250);
	T_EQ_I64((int64_t)o->n, 5);
	T_EQ_I64((int64_t)o->nruns, 4);
	T_EQ_I64((int64_t)o->nnames, 3);
	T_TRUE(tfd_fn_op_name_ix(&o->v[0]) == tfd_fn_op_name_ix(&o->v[2]));
	T_EQ_I64((int64_t)o->runs[2].key, 1);
	T_EQ_I64((int64_t)o->runs[3].first, 4);
	T_EQ_I64(tfd_fn_op_self(&o->v[4]), 20);
	T_EQ_I64((int64_t)tfd_fn_op_count(&o->v[4]), 1);
	/* a scope's ops put before the third run's */
	memset(&scratch, 0, sizeof(scratch));
	tfd_opscope_open(&s, 9, false, 0, 1000);
	tfd_opscope_event(NULL, &scratch, &s, d, &kd, 300, 310);
	tfd_opscope_event(NULL, &scratch, &s, a, &ka, 310, 330);
	tfd_fn_ops_insert(o, 3, 2, &scratch.fn_ops, NULL, false);
	tfd_fn_ops_free(&scratch.fn_ops);
	T_EQ_I64((int64_t)o->n, 7);
	T_EQ_I64((int64_t)o->nruns, 5);
	T_EQ_I64((int64_t)o->nnames, 4);
	T_EQ_I64((int64_t)o->runs[2].key, 9);
	T_EQ_I64((int64_t)o->runs[2].first, 3);
	T_EQ_I64((int64_t)o->runs[3].first, 5);
	T_EQ_I64((int64_t)o->runs[4].first, 6);
	T_EQ_STR(tfd_fn_op_name(o, 3), d);
	T_TRUE(tfd_fn_op_name(o, 4) == a &&
	       tfd_fn_op_name_ix(&o->v[4]) == tfd_fn_op_name_ix(&o->v[0]));
	T_EQ_I64(tfd_fn_op_self(&o->v[4]), 20);
	T_TRUE(tfd_fn_op_name(o, 5) == c && tfd_fn_op_name(o, 6) == c);
	T_EQ_I64((int64_t)tfd_fn_op_run_end(o, 4), 7);
	tfd_capture_free(cap);
}

/* Totals by op type: records of one name (one address, remembered) and of
 * the same type under another name or the same text at another address
 * are summed together; a name without a type goes nowhere. */
static void function_ops_by_type_names(struct t *t)
{
	char cast2[] = "g/b:Cast", b2[] = "f/b:Cast";
	const char *a = "f/a:DecodePng", *b = "f/b:Cast", *none = "Iterator::Map";
	struct tfd_op_named recs[] = {{b, 10, 1},   {none, 5, 1}, {b, 20, 2}, {cast2, 7, 1},
				      {none, 4, 1}, {a, 100, 1},  {b2, 3, 1}};
	struct tfd_op_total *tot = NULL;
	size_t n = tfd_fn_ops_by_type(recs, sizeof(recs) / sizeof(recs[0]), &tot);

	T_EQ_I64((int64_t)n, 2);
	T_EQ_STR(tot[0].type, "DecodePng");
	T_EQ_I64(tot[0].self_ns, 100);
	T_EQ_STR(tot[1].type, "Cast");
	T_EQ_I64(tot[1].self_ns, 40);
	T_EQ_I64((int64_t)tot[1].count, 5);
	free(tot);
}

/* tfd_pool_run with skip_after_failure: items are handed out in the order
 * given; once item 5 failed, item 9 (after it) is skipped, but the items
 * handed out after 9 that come before 5 still run, and item 2's failure,
 * the lowest, is the answer. (A worker used to stop at the first skipped
 * item: items 0-2 never ran and 5 was returned, so an XSpace file with
 * two corrupt lines could name either.) */
struct pool_probe {
	int ran[10];
};

static bool pool_item(void *ctx, size_t worker, size_t i)
{
	struct pool_probe *p = ctx;

	(void)worker;
	p->ran[i]++;
	return i != 5 && i != 2;
}

/* The memory the process may still take: what TFDOCTOR_MEM_BUDGET says,
 * else the least of MemAvailable and the address-space limit's room (a
 * process that runs has some). */
static void memory_budget(struct t *t)
{
	setenv("TFDOCTOR_MEM_BUDGET", "12345", 1);
	T_EQ_U64(tfd_memory_budget(), 12345);
	setenv("TFDOCTOR_MEM_BUDGET", "12x", 1); /* (not a number: ignored) */
	T_TRUE(tfd_memory_budget() > 12345);
	unsetenv("TFDOCTOR_MEM_BUDGET");
	T_TRUE(tfd_memory_budget() > 0);
}

static void pool_lowest_failure(struct t *t)
{
	static const size_t order[] = {5, 9, 0, 1, 2, 3, 4, 6, 7, 8};

	for (size_t threads = 1; threads <= 2; threads++) {
		struct pool_probe p;

		memset(&p, 0, sizeof(p));
		T_EQ_U64(tfd_pool_run(10, threads, order, true, pool_item, &p), 2);
		/* every item before the lowest failure ran, once */
		for (int i = 0; i <= 2; i++)
			T_EQ_I64(p.ran[i], 1);
		for (int i = 3; i < 10; i++)
			T_TRUE(p.ran[i] <= 1);
		T_EQ_I64(p.ran[5], 1);
	}
}

static enum tfd_dev_kind kind_of(const char *name, bool tpu)
{
	return tfd_dev_kind_of(name, strlen(name), tpu);
}

static void device_kinds(struct t *t)
{
	T_EQ_I64(kind_of("MemcpyH2D", false), TFD_DEV_H2D);
	T_EQ_I64(kind_of("Memcpy HtoD", false), TFD_DEV_H2D);
	T_EQ_I64(kind_of("MEMCPYHtoD", false), TFD_DEV_H2D);
	T_EQ_I64(kind_of("MemcpyD2H", false), TFD_DEV_D2H);
	T_EQ_I64(kind_of("MemcpyDtoD", false), TFD_DEV_D2D);
	T_EQ_I64(kind_of("MemcpyP2P", false), TFD_DEV_D2D);
	T_EQ_I64(kind_of("ncclAllReduceRingLLKernel_sum_f32", false), TFD_DEV_COLLECTIVE);
	T_EQ_I64(kind_of("volta_sgemm_128x64_nn", false), TFD_DEV_COMPUTE);
	T_EQ_I64(kind_of("Memcpy", false), TFD_DEV_COMPUTE);
	T_EQ_I64(kind_of("InfeedDequeueTuple", true), TFD_DEV_WAIT_HOST);
	T_EQ_I64(kind_of("InfeedDequeueTuple", false), TFD_DEV_COMPUTE);
	T_EQ_I64(kind_of("outfeed-enqueue", true), TFD_DEV_D2H);
	T_EQ_U64(tfd_memcpy_bytes("size:81118 dest:1 async:1", 25), 81118);
	T_EQ_U64(tfd_memcpy_bytes("dest:1 size:12", 14), 12);
	T_EQ_U64(tfd_memcpy_bytes("dest:1 xsize:12", 15), 0);
	T_EQ_U64(tfd_memcpy_bytes("size:99999999999999999999999", 28), 0);
	T_TRUE(tfd_dev_line_wanted("Stream #13(MemcpyH2D)", 21, TFD_DEVLINE_STREAM));
	T_TRUE(!tfd_dev_line_wanted("Steps", 5, TFD_DEVLINE_STREAM));
	T_TRUE(!tfd_dev_line_wanted("Steps", 5, 0));
	T_TRUE(!tfd_dev_line_wanted("TensorFlow Ops", 14, 0));
	T_TRUE(tfd_dev_line_wanted("XLA Ops", 7, TFD_DEVLINE_XLA_OPS));
	T_TRUE(!tfd_dev_line_wanted("XLA Modules", 11, TFD_DEVLINE_XLA_OPS));
	T_TRUE(tfd_dev_line_wanted("Kernels", 7, 0));
	T_TRUE(tfd_host_op_is_h2d("InfeedEnqueueTuple", 18));
	T_TRUE(!tfd_host_op_is_h2d("Infeed", 6));
}

/* A source of the spans of an array as they are (not sorted). */
static bool raw_next(void *ctx, struct tfd_dev_span *out)
{
	struct tfd_dev_array *a = ctx;

	if (a->at >= a->n)
		return false;
	*out = a->v[a->at++];
	return true;
}

/* One step [0, 1000) us: the host waits [0, 200), copies [150, 500) to the
 * device, the device computes [400, 900) in two kernels. By priority the
 * wait owns [0, 200), the copy [200, 400), compute [400, 900): input is
 * 40 %. A source out of time order is named, and nothing is kept. */
static void device_priority(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "gpu-host");
	struct tfd_analysis *a = NULL;
	struct tfd_err err = {0};
	uint32_t th = tfd_host_thread(cap, h, 1, "python");
	struct tfd_event *e;
	/* two sources: a line goes back in time (the sweep says which) */
	struct tfd_dev_span copies[] = {
	    {.start_ns = 150000, .end_ns = 500000, .kind = TFD_DEV_H2D}};
	struct tfd_dev_span kernels[] = {
	    {.start_ns = 600000, .end_ns = 900000, .kind = TFD_DEV_COMPUTE},
	    {.start_ns = 400000, .end_ns = 600000, .kind = TFD_DEV_COMPUTE}};
	struct tfd_dev_array ca = {copies, 1, 0}, kb = {kernels, 2, 0};
	struct tfd_dev_source src[2];

	e = tfd_host_add_event(cap, h, th, "train_function", 0, 1000000);
	tfd_event_set_stat_int(cap, e, "group_id", 7);
	tfd_host_note(cap, h, true, 7, 0, 1000000);
	e = tfd_host_add_event(cap, h, th, "IteratorGetNext", 0, 200000);
	tfd_event_set_stat_int(cap, e, "group_id", 7);
	src[0] = tfd_dev_array_source(&ca);
	src[1] = (struct tfd_dev_source){raw_next, &kb}; /* as given: out of order */
	tfd_host_pack_pending(cap, h);			 /* the sweep reads the waits */
	T_EQ_U64(tfd_device_sweep(cap, h, src, 2), 1);
	T_TRUE(!h->dev.read);
	src[0] = tfd_dev_array_source(&ca);
	src[1] = tfd_dev_array_source(&kb);
	T_EQ_U64(tfd_device_sweep(cap, h, src, 2), 2);
	T_TRUE(h->dev.read);
	T_EQ_U64(h->dev.kind_n[TFD_DEV_COMPUTE], 2);
	T_EQ_I64(h->dev.kind_ns[TFD_DEV_H2D], 350000);
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_OK(tfd_analyze(cap, NULL, &a, &err), &err);
	T_TRUE(a->hosts[0].has_device);
	T_EQ_I64(a->hosts[0].step_ns, 1000000);
	T_EQ_I64(a->hosts[0].wait_ns, 200000);
	T_EQ_I64(a->hosts[0].h2d_ns, 200000);
	T_EQ_I64(a->hosts[0].dev_ns[TFD_DEV_COMPUTE], 500000);
	T_EQ_DBL(a->hosts[0].input_pct, 40.0, 1e-9);
	T_EQ_DBL(tfd_h2d_pct(&a->hosts[0]), 20.0, 1e-9);
	T_EQ_I64(a->hosts[0].bound, TFD_BOUND_HIGH);
	T_EQ_I64(a->hosts[0].step_points.h2d_ns[0], 200000);
	tfd_analysis_free(a);
	tfd_capture_free(cap);
}

/* One kernel without a group_id that spans 50 steps: the steps' sweep
 * states are open together and their vector grows under them (a state's
 * heap pointed into itself and dangled when the vector moved: a crash on a
 * long GPU kernel). Each step is computed all its length. */
static void device_long_kernel(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "gpu-host");
	struct tfd_dev_span v[] = {
	    {.start_ns = 0, .end_ns = 200000000, .kind = TFD_DEV_COMPUTE},
	    {.start_ns = 1000, .end_ns = 2000, .kind = TFD_DEV_H2D},
	    {.start_ns = 100000000, .end_ns = 100001000, .kind = TFD_DEV_H2D}};
	struct tfd_dev_array a = {v, 3, 0};
	struct tfd_dev_source src;

	for (int i = 0; i < 100; i++)
		tfd_host_note(cap, h, true, i, i * 4000000LL, (i + 1) * 4000000LL);
	src = tfd_dev_array_source(&a);
	tfd_host_pack_pending(cap, h); /* the sweep reads the waits */
	T_EQ_U64(tfd_device_sweep(cap, h, &src, 1), 1);
	T_EQ_U64(h->dev.nsteps, 100);
	for (size_t i = 0; i < 50; i++)
		T_EQ_I64(h->dev.steps[i].owned[TFD_DEV_COMPUTE], 4000000);
	T_EQ_I64(h->dev.steps[60].owned[TFD_DEV_COMPUTE], 0);
	tfd_capture_free(cap);
}

/* Nested steps: step 7 [0, 1000) us holds step 8 [100, 300). A kernel of
 * group 7 at [100, 300) is step 7's alone: step 8's wait [100, 200) is not
 * hidden by it, step 7's is. A copy without a group at [300, 400) is step
 * 7's by time. */
static void device_groups(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "gpu-host");
	uint32_t th = tfd_host_thread(cap, h, 1, "python");
	struct tfd_dev_span v[] = {{.start_ns = 100000,
				    .end_ns = 300000,
				    .group = 7,
				    .kind = TFD_DEV_COMPUTE,
				    .has_group = true},
				   {.start_ns = 300000, .end_ns = 400000, .kind = TFD_DEV_H2D}};
	struct tfd_dev_array a = {v, 2, 0};
	struct tfd_dev_source src;
	struct tfd_event *e;

	tfd_host_note(cap, h, true, 7, 0, 1000000);
	tfd_host_note(cap, h, true, 8, 100000, 300000);
	e = tfd_host_add_event(cap, h, th, "IteratorGetNext", 100000, 100000);
	tfd_event_set_stat_int(cap, e, "group_id", 8);
	src = tfd_dev_array_source(&a);
	tfd_host_pack_pending(cap, h); /* the sweep reads the waits */
	T_EQ_U64(tfd_device_sweep(cap, h, &src, 1), 1);
	T_EQ_U64(h->dev.nsteps, 2);
	for (size_t i = 0; i < 2; i++) {
		const struct tfd_dev_step *s = &h->dev.steps[i];

		if (s->group_id == 7) {
			T_EQ_I64(s->owned[TFD_DEV_COMPUTE], 200000);
			T_EQ_I64(s->owned[TFD_DEV_WAIT], 0);
			T_EQ_I64(s->owned[TFD_DEV_H2D], 100000);
		} else {
			T_EQ_I64(s->group_id, 8);
			T_EQ_I64(s->owned[TFD_DEV_COMPUTE], 0);
			T_EQ_I64(s->owned[TFD_DEV_WAIT], 100000);
			T_EQ_I64(s->owned[TFD_DEV_H2D], 0);
		}
	}
	tfd_capture_free(cap);
}

/* Steps made of markers without a group_id beside groups: their ids (0,
 * 1, ...) are not the events' groups, so a kernel of group 0 that runs in
 * the second marker's step is that step's, by time. */
static void device_marker_steps_by_time(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "gpu-host");
	struct tfd_dev_span v[] = {{.start_ns = 1100000,
				    .end_ns = 1300000,
				    .group = 0,
				    .kind = TFD_DEV_COMPUTE,
				    .has_group = true}};
	struct tfd_dev_array a = {v, 1, 0};
	struct tfd_dev_source src;

	tfd_host_note(cap, h, true, 0, 1100000, 1300000); /* a function run's group */
	tfd_host_step_marker(h, "train", 7, 0, 0, 1000000, false, 0);
	tfd_host_step_marker(h, "train", 7, 1, 1000000, 2000000, false, 0);
	tfd_host_steps_from_markers(cap, h);
	T_TRUE(h->steps_from_markers);
	src = tfd_dev_array_source(&a);
	tfd_host_pack_pending(cap, h); /* the sweep reads the waits */
	T_EQ_U64(tfd_device_sweep(cap, h, &src, 1), 1);
	T_EQ_U64(h->dev.nsteps, 2);
	for (size_t i = 0; i < 2; i++)
		T_EQ_I64(h->dev.steps[i].owned[TFD_DEV_COMPUTE],
			 h->dev.steps[i].group_id == 1 ? 200000 : 0);
	tfd_capture_free(cap);
}

/* Without steps the host's span stands for them: a kernel [100, 300) us
 * hides half of the wait [0, 200). */
static void device_no_steps(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "gpu-host");
	uint32_t th = tfd_host_thread(cap, h, 1, "python");
	struct tfd_dev_span v[] = {{.start_ns = 100000, .end_ns = 300000, .kind = TFD_DEV_COMPUTE}};
	struct tfd_dev_array a = {v, 1, 0};
	struct tfd_dev_source src;

	tfd_host_add_event(cap, h, th, "IteratorGetNext", 0, 200000);
	tfd_host_note(cap, h, false, 0, 0, 400000);
	src = tfd_dev_array_source(&a);
	tfd_host_pack_pending(cap, h); /* the sweep reads the waits */
	T_EQ_U64(tfd_device_sweep(cap, h, &src, 1), 1);
	T_EQ_I64(h->dev.span_owned[TFD_DEV_WAIT], 100000);
	T_EQ_I64(h->dev.span_owned[TFD_DEV_COMPUTE], 200000);
	tfd_capture_free(cap);
}

static void kinds(struct t *t)
{
	T_EQ_I64(tfd_event_kind_of("Iterator::Model::Prefetch"), TFD_EV_ITERATOR);
	T_EQ_I64(tfd_event_kind_of("Iterator"), TFD_EV_ITERATOR);
	T_EQ_I64(tfd_event_kind_of("IteratorX"), TFD_EV_OTHER);
	/* a dataset's loop inside a tf.function: its input below autograph's
	 * scan, and its own root for its options; the rest of it is not */
	T_EQ_I64(tfd_event_kind_of("ReduceIterator::Root::Prefetch::Scan::FiniteTake"),
		 TFD_EV_ITERATOR);
	T_EQ_I64(tfd_event_kind_of("ReduceIterator::Root"), TFD_EV_ITERATOR);
	T_EQ_I64(tfd_event_kind_of("ReduceIterator::Root::Prefetch::Scan"), TFD_EV_OTHER);
	T_EQ_I64(tfd_event_kind_of("ReduceIterator::Root::Map"), TFD_EV_OTHER);
	T_EQ_I64(tfd_event_kind_of("ReduceIteratorX::Root"), TFD_EV_OTHER);
	T_EQ_I64(tfd_event_kind_of("PrefetchProduce"), TFD_EV_PRODUCE);
	T_EQ_I64(tfd_event_kind_of("MapAndBatchConsume"), TFD_EV_CONSUME);
	T_EQ_I64(tfd_event_kind_of("IteratorGetNextOp::DoCompute"), TFD_EV_GETNEXT);
	T_EQ_I64(tfd_event_kind_of("iteratorgetnext:IteratorGetNext"), TFD_EV_GETNEXT);
	T_EQ_I64(tfd_event_kind_of("ExecutorState::Process"), TFD_EV_EXEC);
	T_EQ_I64(tfd_event_kind_of("InstantiatedCapturedFunction::RunAsync"), TFD_EV_FUNCTION);
	T_EQ_I64(tfd_event_kind_of("InstantiatedCapturedFunction::Run"), TFD_EV_FUNCTION);
	T_EQ_I64(tfd_event_kind_of("ExecutorState::ProcessX"), TFD_EV_OTHER);
	T_EQ_I64(tfd_event_kind_of("MatMul"), TFD_EV_OTHER);
	/* the loop's own input work: datasets and iterators made, the
	 * Python call around an eager op */
	T_EQ_I64(tfd_event_kind_of("MakeIterator::RootDataset"), TFD_EV_LOOPOP);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: MakeIterator"), TFD_EV_LOOPOP);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: AnonymousIteratorV3"), TFD_EV_LOOPOP);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: TakeDataset"), TFD_EV_LOOPOP);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: BatchDatasetV2"), TFD_EV_LOOPOP);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: DeleteIterator"), TFD_EV_LOOPOP);
	T_EQ_I64(tfd_event_kind_of("TFE_Py_FastPathExecute_C"), TFD_EV_LOOPOP);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: MatMul"), TFD_EV_OTHER);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: IteratorGetNext"), TFD_EV_OTHER);
	T_EQ_I64(tfd_event_kind_of("EagerLocalExecute: DatasetCardinality"), TFD_EV_OTHER);
}

/* The loop's waits on its thread: GetNext, the iterators it makes (not
 * those an iterator's call or tf.data's threads make), and the tail of an
 * eager GetNext's Python call less the least such tail (the GIL). Ten
 * calls end 2 us after their GetNext, one 500 us after. */
static void loop_waits(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint32_t py = tfd_host_thread(cap, h, 1, "python"),
		 td = tfd_host_thread(cap, h, 2, "tf_data_parallel_interleave_worker");
	struct tfd_err err = {0};
	struct tfd_host_waits w;
	struct tfd_interval *u;
	size_t n;

	for (int i = 0; i < 11; i++) {
		int64_t a = i * 10000, tail = i == 10 ? 500000 : 2000;

		tfd_host_add_event(cap, h, py, "TFE_Py_FastPathExecute_C", a, 3000 + tail);
		tfd_host_add_event(cap, h, py, "IteratorGetNextOp::DoCompute", a + 1000, 2000);
	}
	/* made by the loop: 200 us; by an iterator's call on the loop's thread
	 * (a flat_map's input) and on tf.data's thread: not the loop's */
	tfd_host_add_event(cap, h, py, "EagerLocalExecute: MakeIterator", 2000000, 200000);
	tfd_host_add_event(cap, h, py, "MakeIterator::RootDataset", 2100000, 50000);
	tfd_host_add_event(cap, h, py, "Iterator::Root::FlatMap", 3000000, 100000);
	tfd_host_add_event(cap, h, py, "MakeIterator::TFRecordDataset", 3010000, 10000);
	tfd_host_add_event(cap, h, td, "MakeIterator::TFRecordDataset", 4000000, 10000);
	T_OK(tfd_capture_finish(cap, &err), &err);
	tfd_host_waits_read(h, false, &w);
	T_EQ_U64(w.ngil, 1);
	T_EQ_I64(w.gil[0].s, 100000 + 3000 + 2000);
	T_EQ_I64(w.gil[0].e, 100000 + 3000 + 500000);
	T_EQ_U64(w.ncreates, 1);
	T_EQ_I64(w.creates[0].s, 2000000);
	T_EQ_I64(w.creates[0].e, 2200000);
	T_EQ_U64(w.nall, 13);
	tfd_host_waits_free(&w);
	u = tfd_host_wait_union(h, &n);
	/* 11 GetNexts, the GIL tail after the last one (less the least
	 * tail), the iterator made; the flat_map's input is none */
	T_EQ_U64(n, 13);
	T_EQ_I64(u[10].s, 101000);
	T_EQ_I64(u[10].e, 103000);
	T_EQ_I64(u[11].s, 105000);
	T_EQ_I64(u[11].e, 603000);
	T_EQ_I64(u[12].s, 2000000);
	free(u);
	tfd_capture_free(cap);
}

/* executor chunks stay only when their id names a captured dataset function */
static void exec_kept_for_functions(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint32_t th = tfd_host_thread(cap, h, 1, "runner"), w = tfd_host_thread(cap, h, 2, "pool");
	struct tfd_event *f =
	    tfd_host_add_event(cap, h, th, "InstantiatedCapturedFunction::RunAsync", 100, 10);
	struct tfd_event *x;
	struct tfd_err err = {0};

	tfd_event_set_stat_int(cap, f, "id", 42);
	x = tfd_host_add_event(cap, h, w, "ExecutorState::Process", 105, 500);
	tfd_event_set_stat_int(cap, x, "id", 42);
	x = tfd_host_add_event(cap, h, w, "ExecutorState::Process", 700, 500); /* the train step */
	tfd_event_set_stat_int(cap, x, "id", 7);
	tfd_host_add_event(cap, h, w, "ExecutorState::Process", 1300, 5); /* no id */
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_U64(h->threads[1].nevents, 1);
	{
		struct tfd_event *v = tfd_thread_unpack(h, &h->threads[1]);

		T_EQ_U64(v[0].id, 42);
		free(v);
	}
	T_EQ_U64(h->nevents, 2);
	tfd_capture_free(cap);
}

/* The source check's bits (struct tfd_thread.kbits): one per packed
 * event, set for an iterator, Produce or Consume event, kept in step when
 * the finish drops executor chunks of no dataset function; a thread whose
 * events are sorted there loses them (its order is no longer the file's). */
static void source_bits(struct t *t)
{
	struct tfd_capture *cap;
	struct tfd_host *h;
	uint32_t run, w, late;
	struct tfd_event *x, *v;
	struct tfd_err err = {0};

	setenv("TFDOCTOR_SOURCE_CHECK", "1", 1);
	cap = tfd_capture_new();
	unsetenv("TFDOCTOR_SOURCE_CHECK");
	h = tfd_capture_add_host(cap, "h");
	run = tfd_host_thread(cap, h, 1, "runner");
	w = tfd_host_thread(cap, h, 2, "pool");
	late = tfd_host_thread(cap, h, 3, "late");
	x = tfd_host_add_event(cap, h, run, "InstantiatedCapturedFunction::RunAsync", 100, 10);
	tfd_event_set_stat_int(cap, x, "id", 42);
	tfd_host_add_event(cap, h, w, "Iterator::Map", 100, 50);
	x = tfd_host_add_event(cap, h, w, "ExecutorState::Process", 105, 5);
	tfd_event_set_stat_int(cap, x, "id", 42);
	x = tfd_host_add_event(cap, h, w, "ExecutorState::Process", 200, 500); /* dropped */
	tfd_event_set_stat_int(cap, x, "id", 7);
	tfd_host_add_event(cap, h, w, "Iterator::Map::Range", 800, 5);
	tfd_host_add_event(cap, h, w, "ExecutorState::Process", 900, 5); /* dropped: no id */
	tfd_host_add_event(cap, h, w, "ParallelMapProduce", 1000, 5);
	tfd_host_add_event(cap, h, late, "Iterator::Map", 500, 5);
	tfd_host_add_event(cap, h, late, "Iterator::Map", 100, 5); /* out of order */
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_U64(h->threads[w].nevents, 4);
	T_EQ_U64(h->threads[w].nkbits, 4);
	T_TRUE(!h->threads[w].kbits_lost);
	v = tfd_thread_unpack(h, &h->threads[w]);
	for (size_t i = 0; i < 4; i++)
		T_EQ_U64(tfd_kbit(&h->threads[w], i), v[i].kind != TFD_EV_EXEC);
	free(v);
	T_TRUE(h->threads[late].kbits_lost);
	tfd_capture_free(cap);
}

/* A source that gives, for each thread, the events listed for it (as a
 * file's would be decoded again: in cap, signatures by name). */
struct fake_ev {
	uint32_t thread;
	const char *name;
	int64_t start, dur;
};

struct fake_src {
	struct tfd_source s;
	struct tfd_capture *cap;
	const struct fake_ev *ev;
	size_t n;
	struct fake_cur {
		struct fake_src *f;
		uint32_t t;
		size_t at;
	} cur[4];
};

static bool fake_next(void *ctx, uint32_t *thread, struct tfd_event *e)
{
	struct fake_cur *c = ctx;

	for (; c->at < c->f->n; c->at++) {
		const struct fake_ev *v = &c->f->ev[c->at];

		if (v->thread != c->t)
			continue;
		tfd_event_begin(c->f->cap, e, tfd_arena_intern_cstr(&c->f->cap->arena, v->name),
				tfd_event_kind_of(v->name), v->start, v->dur);
		*thread = c->t;
		c->at++;
		return true;
	}
	return false;
}

static void fake_open_thread(struct tfd_source *s, const struct tfd_host *h, size_t t,
			     struct tfd_event_source *out)
{
	struct fake_src *f = (struct fake_src *)s;

	(void)h;
	f->cur[t] = (struct fake_cur){f, (uint32_t)t, 0};
	*out = (struct tfd_event_source){&f->cur[t], fake_next};
}

static size_t fake_close(struct tfd_source *s, struct tfd_event_source *cur)
{
	(void)s;
	(void)cur;
	return 0;
}

static void fake_free(struct tfd_source *s)
{
	(void)s;
}

/* f over the events ev[0..n) of cap, its times read by open_times. */
static void fake_src_init(struct fake_src *f, struct tfd_capture *cap, const struct fake_ev *ev,
			  size_t n,
			  void (*open_times)(struct tfd_source *, const struct tfd_host *, size_t,
					     struct tfd_event_source *))
{
	memset(f, 0, sizeof(*f));
	f->cap = cap;
	f->ev = ev;
	f->n = n;
	f->s.open_thread = fake_open_thread;
	f->s.open_times = open_times;
	f->s.close = fake_close;
	f->s.free = fake_free;
}

/* Events a read left in the file (tfd_host_leave_graph()): a thread in
 * order keeps them there, merged back where its bits say; one out of
 * order has them packed at the finish, then sorted, as a read that left
 * none would. */
static void left_and_sorted(struct t *t)
{
	static const struct fake_ev left[] = {{0, "Iterator::Map", 100, 50},
					      {0, "Iterator::Map", 400, 50},
					      {1, "Iterator::Map", 500, 5},
					      {1, "Iterator::Map", 100, 5}};
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct fake_src f;
	uint32_t a, b;
	struct tfd_event *v;
	struct tfd_err err = {0};

	fake_src_init(&f, cap, left, 4, fake_open_thread);
	tfd_host_leave_graph(cap, h);
	a = tfd_host_thread(cap, h, 1, "in order");
	b = tfd_host_thread(cap, h, 2, "out of order");
	tfd_host_add_event(cap, h, a, "Iterator::Map", 100, 50);
	tfd_host_add_event(cap, h, a, "Foo", 200, 10);
	tfd_host_add_event(cap, h, a, "Iterator::Map", 400, 50);
	tfd_host_add_event(cap, h, b, "Iterator::Map", 500, 5);
	tfd_host_add_event(cap, h, b, "Foo", 300, 5);
	tfd_host_add_event(cap, h, b, "Iterator::Map", 100, 5);
	h->source = &f.s;
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_U64(h->threads[a].nevents, 3);
	T_EQ_U64(h->threads[a].nfile, 2);
	v = tfd_thread_unpack(h, &h->threads[a]);
	T_EQ_I64(v[0].start_ns, 100);
	T_EQ_I64(v[1].start_ns, 200);
	T_EQ_STR(v[1].sig->name, "Foo");
	T_EQ_I64(v[2].start_ns, 400);
	T_EQ_U64(v[2].kind, TFD_EV_ITERATOR);
	free(v);
	T_EQ_U64(h->threads[b].nevents, 3);
	T_EQ_U64(h->threads[b].nfile, 0);
	T_TRUE(h->threads[b].kbits == NULL);
	v = tfd_thread_unpack(h, &h->threads[b]);
	T_EQ_I64(v[0].start_ns, 100);
	T_EQ_U64(v[0].kind, TFD_EV_ITERATOR);
	T_EQ_I64(v[1].start_ns, 300);
	T_EQ_I64(v[2].start_ns, 500);
	T_EQ_U64(v[2].kind, TFD_EV_ITERATOR);
	free(v);
	T_EQ_U64(f.s.failed, 0);
	tfd_capture_free(cap);
}

static size_t seam_opens;

static void seam_open_times(struct tfd_source *s, const struct tfd_host *h, size_t t,
			    struct tfd_event_source *out)
{
	seam_opens++;
	fake_open_thread(s, h, t, out);
}

/* A thread made of two parts whose reads left its iterator events in the
 * file: where the parts meet, its order is judged from what each part's
 * read added. Out of order only among the events left (the second part's
 * first iterator event before the first part's last; the packed ones in
 * order), the finish reads them again and sorts; in order, it does not
 * read them again. */
static void absorb_left_seam(struct t *t)
{
	static const struct fake_ev out_of_order[] = {{0, "Iterator::Map", 10, 1},
						      {0, "Iterator::Map", 30, 1},
						      {0, "Iterator::Map", 20, 1}},
				    in_order[] = {{0, "Iterator::Map", 10, 1},
						  {0, "Iterator::Map", 20, 1},
						  {0, "Iterator::Map", 30, 1}};
	static const int64_t sorted[] = {5, 10, 20, 30, 45};

	for (int round = 0; round < 2; round++) {
		const struct fake_ev *ev = round ? in_order : out_of_order;
		struct tfd_capture *cap = tfd_capture_new(), *p1 = tfd_capture_new(),
				   *p2 = tfd_capture_new();
		struct tfd_host *h = tfd_capture_add_host(cap, "h");
		struct tfd_host *h1 = tfd_capture_add_host(p1, "h"),
				*h2 = tfd_capture_add_host(p2, "h");
		struct fake_src f;
		uint32_t b1, b2;
		struct tfd_event *v;
		struct tfd_err err = {0};

		fake_src_init(&f, cap, ev, 3, seam_open_times);
		tfd_host_leave_graph(cap, h);
		tfd_host_leave_graph(p1, h1);
		tfd_host_leave_graph(p2, h2);
		b1 = tfd_host_thread(p1, h1, 2, "b");
		b2 = tfd_host_thread(p2, h2, 2, "b");
		tfd_host_add_event(p1, h1, b1, "Foo", 5, 1);
		tfd_host_add_event(p1, h1, b1, ev[0].name, ev[0].start, 1);
		tfd_host_add_event(p1, h1, b1, ev[1].name, ev[1].start, 1);
		tfd_host_add_event(p2, h2, b2, ev[2].name, ev[2].start, 1);
		tfd_host_add_event(p2, h2, b2, "Foo", 45, 1);
		tfd_host_absorb(cap, h, p1);
		tfd_host_absorb(cap, h, p2);
		h->source = &f.s;
		seam_opens = 0;
		T_OK(tfd_capture_finish(cap, &err), &err);
		T_EQ_I64(h->nthreads, 1);
		T_EQ_U64(h->threads[0].nevents, 5);
		if (round)
			T_EQ_U64(seam_opens, 0);
		else
			T_TRUE(seam_opens > 0);
		v = tfd_thread_unpack(h, &h->threads[0]);
		for (size_t i = 0; i < 5 && i < h->threads[0].nevents; i++)
			if (v[i].start_ns != sorted[i])
				T_FAILF("round %d: event %zu starts at %lld, not %lld", round, i,
					(long long)v[i].start_ns, (long long)sorted[i]);
		free(v);
		tfd_capture_free(p1);
		tfd_capture_free(p2);
		tfd_capture_free(cap);
	}
}

/* ... packed at the finish past the forms the capture had: the events
 * left there had none yet, and the form table grows under the cursor
 * that reads the packed ones */
static void left_packed_new_forms(struct t *t)
{
	enum { N = 400 };
	static struct fake_ev left[N];
	static char names[N][32];
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct fake_src f;
	uint32_t a;
	struct tfd_event *v;
	struct tfd_err err = {0};

	fake_src_init(&f, cap, left, N, fake_open_thread);
	tfd_host_leave_graph(cap, h);
	a = tfd_host_thread(cap, h, 1, "t");
	tfd_host_add_event(cap, h, a, "Foo", 10, 1);
	for (int i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "Iterator::Map%d", i);
		left[i] = (struct fake_ev){0, names[i], 20 + i, 1};
		tfd_host_add_event(cap, h, a, names[i], 20 + i, 1);
	}
	tfd_host_add_event(cap, h, a, "Bar", 5, 1); /* out of order */
	h->source = &f.s;
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_U64(h->threads[a].nevents, N + 2);
	T_EQ_U64(h->threads[a].nfile, 0);
	v = tfd_thread_unpack(h, &h->threads[a]);
	T_EQ_STR(v[0].sig->name, "Bar");
	T_EQ_STR(v[1].sig->name, "Foo");
	T_EQ_STR(v[2].sig->name, "Iterator::Map0");
	T_EQ_STR(v[N + 1].sig->name, names[N - 1]);
	T_EQ_I64(v[N + 1].start_ns, 20 + N - 1);
	free(v);
	tfd_capture_free(cap);
}

/* An id stat's text: the digits of up to 19 bytes read 8 at a time,
 * anything else as strtoll/strtoull read it (a sign, white space, 20
 * digits), text that is no number leaving the id unset. */
static void id_texts(struct t *t)
{
	static const struct {
		const char *text;
		bool ok;
		uint64_t id;
	} cases[] = {{"0", true, 0},
		     {"7", true, 7},
		     {"12345678", true, 12345678},
		     {"123456789", true, 123456789},
		     {"1421554348276686331", true, 1421554348276686331ull},
		     {"9999999999999999999", true, 9999999999999999999ull},
		     {"0000000000000000009", true, 9},
		     {"18446744073709551615", true, UINT64_MAX},
		     {"00000000000000000001", true, 1},
		     {"-3", true, (uint64_t)-3},
		     {" 42", true, 42},
		     {"", false, 0},
		     {"12a45678", false, 0},
		     {"1234567a", false, 0},
		     {"a2345678", false, 0},
		     {"12345678/", false, 0},
		     {"123456789012345678:", false, 0},
		     {"1234567890123456789 ", false, 0},
		     {"18446744073709551616", false, 0}};
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint32_t th = tfd_host_thread(cap, h, 1, "w");

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct tfd_event *x =
		    tfd_host_add_event(cap, h, th, "Iterator::Model", 10 * (int64_t)i, 5);

		tfd_event_set_stat_str(cap, x, "id", cases[i].text);
		T_EQ_I64((x->flags & TFD_EVF_ID) != 0, cases[i].ok);
		if (cases[i].ok)
			T_EQ_U64(x->id, cases[i].id);
	}
	tfd_capture_free(cap);
}

/* an event's name, parameters and parent are one interned signature, shared
 * by the calls that repeat them; its one value is element_id for Produce
 * and Consume, id for the rest */
static void signatures_and_values(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint32_t th = tfd_host_thread(cap, h, 1, "w");
	/* copies: an event added is the reader's until the next one comes */
	struct tfd_event A, B, C, *a = &A, *b = &B, *c = &C, *p, *q, *x;

	T_EQ_U64(sizeof(struct tfd_event), 32);
	x = tfd_host_add_event(cap, h, th, "Iterator::Model::Prefetch", 0, 10);
	tfd_event_set_stat_int(cap, x, "id", 5);
	tfd_event_set_stat_int(cap, x, "parent_id", 4);
	tfd_event_set_stat_str(cap, x, "buffer_limit", "2");
	A = *x;
	x = tfd_host_add_event(cap, h, th, "Iterator::Model::Prefetch", 20, 10);
	tfd_event_set_stat_str(cap, x, "buffer_limit", "2");
	tfd_event_set_stat_int(cap, x, "parent_id", 4);
	tfd_event_set_stat_int(cap, x, "id", 6);
	B = *x;
	x = tfd_host_add_event(cap, h, th, "Iterator::Model::Prefetch", 40, 10);
	tfd_event_set_stat_int(cap, x, "parent_id", 4);
	tfd_event_set_stat_str(cap, x, "buffer_limit", "3");
	tfd_event_set_stat_str(cap, x, "buffer_limit", "2"); /* a repeated key: the last */
	C = *x;
	/* the same fields in any order: one record */
	T_TRUE(a->sig == b->sig);
	T_TRUE(a->sig == c->sig);
	T_EQ_U64(a->sig->parent_id, 4);
	T_EQ_U64(a->sig->nparams, 1);
	T_EQ_STR(tfd_event_param(c, "buffer_limit"), "2");
	T_EQ_U64(a->id, 5);
	T_EQ_U64(b->id, 6);
	T_TRUE((b->flags & (TFD_EVF_ID | TFD_EVF_PARENT)) == (TFD_EVF_ID | TFD_EVF_PARENT));
	/* a Produce keeps its element_id over an id, before or after it */
	p = tfd_host_add_event(cap, h, th, "PrefetchProduce", 60, 5);
	tfd_event_set_stat_int(cap, p, "id", 99);
	tfd_event_set_stat_int(cap, p, "element_id", 7);
	tfd_event_set_stat_int(cap, p, "id", 98);
	T_EQ_U64(p->element_id, 7);
	T_TRUE((p->flags & (TFD_EVF_ID | TFD_EVF_ELEMENT)) == TFD_EVF_ELEMENT);
	/* an iterator keeps its id over an element_id */
	q = tfd_host_add_event(cap, h, th, "Iterator::Model", 70, 5);
	tfd_event_set_stat_int(cap, q, "element_id", 3);
	T_EQ_U64(q->element_id, 3); /* alone, it is kept */
	tfd_event_set_stat_int(cap, q, "id", 11);
	tfd_event_set_stat_int(cap, q, "element_id", 12);
	T_EQ_U64(q->id, 11);
	T_TRUE((q->flags & (TFD_EVF_ID | TFD_EVF_ELEMENT)) == TFD_EVF_ID);
	T_TRUE(q->sig != a->sig && strcmp(q->sig->name, "Iterator::Model") == 0);
	/* parent ids, repeated and colliding in the reader's cache of the last
	 * result per (signature, parent_id): each event gets its own, and an
	 * equal pair the same signature */
	{
		const struct tfd_sig *first[600] = {0};

		for (int r = 0; r < 3; r++)
			for (uint64_t k = 0; k < 600; k++) {
				struct tfd_event *e = tfd_host_add_event(
				    cap, h, th,
				    k % 2 ? "Iterator::Model::Map" : "Iterator::Model::Prefetch",
				    100 + (int64_t)k, 1);

				/* two names in turn under each parent */
				tfd_event_set_stat_int(cap, e, "parent_id",
						       (int64_t)(k / 2 * 977 + 1));
				T_EQ_U64(e->sig->parent_id, k / 2 * 977 + 1);
				T_EQ_STR(e->sig->name, k % 2 ? "Iterator::Model::Map"
							     : "Iterator::Model::Prefetch");
				if (r == 0)
					first[k] = e->sig;
				else if (e->sig != first[k])
					T_FAILF("parent_id %llu: a second signature",
						(unsigned long long)(k / 2 * 977 + 1));
			}
	}
	/* and as stored: packed, then read back */
	{
		struct tfd_err err = {0};
		struct tfd_event *v;

		T_OK(tfd_capture_finish(cap, &err), &err);
		T_EQ_U64(h->threads[th].nevents, 5 + 1800);
		v = tfd_thread_unpack(h, &h->threads[th]);
		T_TRUE(v[0].sig == a->sig && v[1].sig == b->sig && v[2].sig == c->sig);
		T_EQ_U64(v[0].id, 5);
		T_EQ_U64(v[1].id, 6);
		T_EQ_U64(v[3].element_id, 7);
		T_EQ_U64(v[3].flags, TFD_EVF_ELEMENT);
		T_EQ_U64(v[4].id, 11);
		T_EQ_I64(v[2].start_ns, 40);
		T_EQ_I64(v[2].dur_ns, 10);
		free(v);
	}
	tfd_capture_free(cap);
}

/* identical spans keep insertion order; otherwise (start asc, dur desc) */
static void sort_is_stable(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint32_t th = tfd_host_thread(cap, h, 7, "w");
	struct tfd_err err = {0};
	struct tfd_event *ev;

	tfd_host_add_event(cap, h, th, "B", 100, 10);
	tfd_host_add_event(cap, h, th, "PrefetchProduce", 0, 80);
	tfd_host_add_event(cap, h, th, "Iterator::Prefetch::Range", 0, 80);
	tfd_host_add_event(cap, h, th, "A", 0, 100);
	for (int i = 0; i < 40; i++)
		tfd_host_add_event(cap, h, th, "Z", 1000 - i, 1);
	T_OK(tfd_capture_finish(cap, &err), &err);
	ev = tfd_thread_unpack(h, &h->threads[th]);
	T_EQ_STR(ev[0].sig->name, "A");
	T_EQ_STR(ev[1].sig->name, "PrefetchProduce");
	T_EQ_STR(ev[2].sig->name, "Iterator::Prefetch::Range");
	T_EQ_STR(ev[3].sig->name, "B");
	for (size_t i = 5; i < h->threads[th].nevents; i++)
		T_TRUE(ev[i - 1].start_ns <= ev[i].start_ns);
	free(ev);
	tfd_capture_free(cap);
}

static void stats_keep_64_bit_ids(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint32_t th = tfd_host_thread(cap, h, 1, "w");
	struct tfd_event *e = tfd_host_add_event(cap, h, th, "Iterator::Model::Map", 0, 5);

	tfd_event_set_stat_str(cap, e, "id", "-8853763152062701988");
	tfd_event_set_stat_str(cap, e, "parent_id", "18446744073709551615");
	tfd_event_set_stat_str(cap, e, "parallelism", "32");
	T_EQ_I64((int64_t)e->id, -8853763152062701988LL);
	T_EQ_U64(e->sig->parent_id, UINT64_MAX);
	T_TRUE(e->flags & TFD_EVF_ID);
	T_EQ_STR(tfd_event_param(e, "parallelism"), "32");
	T_TRUE(tfd_event_param(e, "id") == NULL);
	tfd_capture_free(cap);
}

static void load_mem_errors(struct t *t)
{
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};
	static const unsigned char trunc_pb[] = {0x0a, 0x20, 0x12, 0x09, '/', 'h'};

	T_TRUE(tfd_capture_load_mem("", 0, "x.pb", NULL, &cap, &err) == TFD_E_FORMAT);
	T_TRUE(strstr(err.msg, "empty file") != NULL);
	T_TRUE(tfd_capture_load_mem("{\"traceEvents\": [", 17, "x.json", NULL, &cap, &err) ==
	       TFD_E_FORMAT);
	T_TRUE(strstr(err.msg, "invalid JSON") != NULL);
	T_TRUE(tfd_capture_load_mem(trunc_pb, sizeof(trunc_pb), "t.xplane.pb", NULL, &cap, &err) ==
	       TFD_E_FORMAT);
	T_TRUE(strstr(err.msg, "truncated") != NULL);
	T_TRUE(cap == NULL);
}

static void chrome_minimal(struct t *t)
{
	static const char doc[] =
	    "{\"traceEvents\":["
	    "{\"ph\":\"M\",\"pid\":5,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},"
	    "{\"ph\":\"M\",\"pid\":6,\"name\":\"process_name\",\"args\":{\"name\":\"/"
	    "device:GPU:0\"}},"
	    "{\"ph\":\"M\",\"pid\":5,\"tid\":9,\"name\":\"thread_name\",\"args\":{\"name\":\"tf_"
	    "data\"}},"
	    "{\"ph\":\"X\",\"pid\":5,\"tid\":9,\"ts\":1.5,\"dur\":2.25,\"name\":\"Iterator::Map\","
	    "\"args\":{\"id\":\"12\",\"parent_id\":\"-3\",\"long_name\":\"Iterator::Model::Map\"}},"
	    "{\"ph\":\"X\",\"pid\":6,\"tid\":1,\"ts\":1,\"dur\":2,\"name\":\"Iterator::Gpu\"},"
	    "{}]}";
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};
	struct tfd_event *e;

	T_OK(tfd_capture_load_mem(doc, sizeof(doc) - 1, "w0.trace.json", NULL, &cap, &err), &err);
	T_EQ_I64(cap->nhosts, 1);
	T_EQ_STR(cap->hosts[0].name, "w0");
	T_EQ_I64(cap->hosts[0].niterators, 1);
	T_EQ_STR(cap->hosts[0].threads[0].name, "tf_data");
	e = tfd_thread_unpack(&cap->hosts[0], &cap->hosts[0].threads[0]);
	T_EQ_STR(e->sig->name, "Iterator::Model::Map");
	T_EQ_I64(e->start_ns, 1500);
	T_EQ_I64(e->dur_ns, 2250);
	T_EQ_I64((int64_t)e->sig->parent_id, -3);
	free(e);
	tfd_capture_free(cap);
}

/* The reader keeps a kept event's interned name and kind by the name's
 * length and first and last 8 bytes: names alike in those (the same slot)
 * are told apart by their text, the kept and the dropped ones both. */
static void chrome_names_alike(struct t *t)
{
	static const char *const names[] = {"Iterator::Model::AAAA::Prefetch",
					    "Iterator::Model::BBBB::Prefetch",
					    "IteratorXXPrefetch",
					    "Iterator::Prefetch",
					    "IteratorXXPrefetch",
					    "Iterator::Model::BBBB::Prefetch",
					    "Iterator::Prefetch"};
	static const char *const want[] = {"Iterator::Model::AAAA::Prefetch",
					   "Iterator::Model::BBBB::Prefetch", "Iterator::Prefetch",
					   "Iterator::Model::BBBB::Prefetch", "Iterator::Prefetch"};
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};
	struct tfd_event *e;
	char doc[2048];
	size_t len = (size_t)snprintf(doc, sizeof(doc),
				      "{\"traceEvents\":[{\"ph\":\"M\",\"pid\":5,\"name\":"
				      "\"process_name\",\"args\":{\"name\":\"/host:CPU\"}},");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		len += (size_t)snprintf(doc + len, sizeof(doc) - len,
					"{\"ph\":\"X\",\"pid\":5,\"tid\":9,\"ts\":%zu,\"dur\":1,"
					"\"name\":\"%s\"},",
					2 * i + 1, names[i]);
	len += (size_t)snprintf(doc + len, sizeof(doc) - len, "{}]}");
	T_OK(tfd_capture_load_mem(doc, len, "w0.trace.json", NULL, &cap, &err), &err);
	/* IteratorXXPrefetch is no iterator's: not kept, wherever it falls */
	T_EQ_I64(cap->hosts[0].niterators, 5);
	T_EQ_I64(cap->hosts[0].threads[0].nevents, 5);
	e = tfd_thread_unpack(&cap->hosts[0], &cap->hosts[0].threads[0]);
	for (size_t i = 0; i < 5; i++) {
		T_EQ_STR(e[i].sig->name, want[i]);
		T_EQ_I64(e[i].kind, TFD_EV_ITERATOR);
	}
	free(e);
	tfd_capture_free(cap);
}

/* A document of n complete events whose pid, tid, ts and dur take the
 * forms of a JSON number in turn (integers, decimals, 15 digits and more,
 * exponents, a key given twice), bare or (quoted) each in a string: the
 * fast read keeps a bare number's value, a string's text is read later. */
static char *number_doc(size_t n, bool quoted, size_t *len)
{
	static const char *const dur[] = {"3", "2.75", "0", "0.001", "1e1", "12345678901.2345"};
	static const char *const tid[] = {"9", "9.0", "10", "9e0"};
	size_t cap = n * 240 + 512, k;
	char *d = malloc(cap), ts[64];
	const char *q = quoted ? "\"" : "";

	k = (size_t)snprintf(d, cap,
			     "{\"traceEvents\":[{\"ph\":\"M\",\"pid\":5,\"name\":"
			     "\"process_name\",\"args\":{\"name\":\"/host:CPU\"}}");
	for (size_t i = 0; i < n; i++) {
		size_t v = i * 10;

		switch (i % 6) {
		case 0:
			snprintf(ts, sizeof(ts), "%zu", v);
			break;
		case 1:
			snprintf(ts, sizeof(ts), "%zu.5", v);
			break;
		case 2:
			snprintf(ts, sizeof(ts), "%zu.123456789", v);
			break;
		case 3: /* past 15 digits */
			snprintf(ts, sizeof(ts), "%zu.1234567890123456", v);
			break;
		case 4:
			snprintf(ts, sizeof(ts), "%zu0e-1", v);
			break;
		default:
			snprintf(ts, sizeof(ts), "%zu.25E0", v);
		}
		/* the pid as 5 or 5.0; ts given twice every third event, the
		 * last one counting (a string after a number, or the other way) */
		k += (size_t)snprintf(
		    d + k, cap - k,
		    ",{\"ph\":\"X\",\"pid\":%s%s%s,\"tid\":%s%s%s,%s\"ts\":%s%s%s,"
		    "\"dur\":%s%s%s,\"name\":\"Iterator::Map\",\"args\":{\"id\":\"12\"}}",
		    q, i % 2 ? "5.0" : "5", q, q, tid[i % 4], q,
		    i % 3 == 0 ? (i % 2 ? "\"ts\":\"1\"," : "\"ts\":1,") : "", q, ts, q, q,
		    dur[(i / 2) % 6], q);
	}
	k += (size_t)snprintf(d + k, cap - k, "]}");
	*len = k;
	return d;
}

/* Numbers read by the fast read give what their text gives (strtod's
 * value), on one thread and with the parse on another (a document past
 * the size that pipes it). */
static void chrome_number_forms(struct t *t)
{
	size_t la, lb;
	char *a = number_doc(100000, false, &la), *b = number_doc(100000, true, &lb);
	struct tfd_load_opts one = {.jobs = 1}, two = {.jobs = 2};
	const struct tfd_load_opts *opts[] = {&one, &two};

	T_TRUE(la > 8u << 20);
	for (size_t o = 0; o < 2; o++) {
		struct tfd_capture *ca = NULL, *cb = NULL;
		struct tfd_err err = {0};

		T_OK(tfd_capture_load_mem(a, la, "w0.trace.json", opts[o], &ca, &err), &err);
		T_OK(tfd_capture_load_mem(b, lb, "w0.trace.json", opts[o], &cb, &err), &err);
		T_EQ_I64(ca->hosts[0].nevents, 100000);
		T_EQ_I64(ca->hosts[0].nthreads, cb->hosts[0].nthreads);
		for (size_t th = 0; th < ca->hosts[0].nthreads; th++) {
			const struct tfd_thread *x = &ca->hosts[0].threads[th],
						*y = &cb->hosts[0].threads[th];
			struct tfd_event *ex = tfd_thread_unpack(&ca->hosts[0], x),
					 *ey = tfd_thread_unpack(&cb->hosts[0], y);

			T_EQ_I64(x->id, y->id);
			T_EQ_I64(x->nevents, y->nevents);
			for (size_t i = 0; i < x->nevents && i < y->nevents; i++) {
				if (ex[i].start_ns != ey[i].start_ns ||
				    ex[i].dur_ns != ey[i].dur_ns) {
					T_FAILF("thread %zu event %zu: %lld+%lld, text %lld+%lld",
						th, i, (long long)ex[i].start_ns,
						(long long)ex[i].dur_ns, (long long)ey[i].start_ns,
						(long long)ey[i].dur_ns);
					break;
				}
			}
			free(ex);
			free(ey);
		}
		tfd_capture_free(ca);
		tfd_capture_free(cb);
	}
	free(a);
	free(b);
}

/* gzip (windowBits 31) of len bytes into a new buffer */
static uint8_t *gzip_of(const char *s, size_t len, size_t *out_len)
{
	z_stream zs;
	size_t cap = len + len / 100 + 1024;
	uint8_t *out = malloc(cap);

	memset(&zs, 0, sizeof(zs));
	deflateInit2(&zs, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY);
	zs.next_in = (Bytef *)s;
	zs.avail_in = (uInt)len;
	zs.next_out = out;
	zs.avail_out = (uInt)cap;
	deflate(&zs, Z_FINISH);
	*out_len = cap - zs.avail_out;
	deflateEnd(&zs);
	return out;
}

/* A document of n complete events, several MB: more than one inflate chunk. */
static char *big_doc(size_t n, size_t *len)
{
	size_t cap = n * 200 + 512, k;
	char *d = malloc(cap);

	k = (size_t)snprintf(d, cap,
			     "{\"traceEvents\":[{\"ph\":\"M\",\"pid\":5,\"name\":"
			     "\"process_name\",\"args\":{\"name\":\"/host:CPU\"}}");
	for (size_t i = 0; i < n; i++)
		k += (size_t)snprintf(d + k, cap - k,
				      ",{\"ph\":\"X\",\"pid\":5,\"tid\":9,\"ts\":%zu,\"dur\":3,"
				      "\"name\":\"Iterator::Map\",\"args\":{\"id\":\"12\","
				      "\"long_name\":\"Iterator::Model::Map\"}}",
				      i * 10);
	k += (size_t)snprintf(d + k, cap - k, "]}");
	*len = k;
	return d;
}

/* A gzipped Chrome trace is parsed while it inflates: the same events as the
 * plain document, concatenated members, and the same errors as before. */
static void chrome_gz_streamed(struct t *t)
{
	size_t len, zlen, zlen2, zfull, bad;
	char *doc = big_doc(40000, &len);
	uint8_t *z = gzip_of(doc, len, &zfull), *two;
	struct tfd_capture *a = NULL, *b = NULL;
	struct tfd_load_opts lo = {0};
	struct tfd_err err = {0};

	T_TRUE(len > 3u << 20);
	T_OK(tfd_capture_load_mem(doc, len, "w0.trace.json", NULL, &a, &err), &err);
	T_OK(tfd_capture_load_mem(z, zfull, "w0.trace.json.gz", NULL, &b, &err), &err);
	T_EQ_I64(b->hosts[0].nevents, a->hosts[0].nevents);
	T_EQ_I64(b->hosts[0].nevents, 40000);
	T_TRUE(b->hosts[0].gzipped);
	tfd_capture_free(b);
	/* two members: the document split in the middle of an event */
	{
		uint8_t *z1 = gzip_of(doc, len / 2, &zlen),
			*z2 = gzip_of(doc + len / 2, len - len / 2, &zlen2);

		two = malloc(zlen + zlen2);
		memcpy(two, z1, zlen);
		memcpy(two + zlen, z2, zlen2);
		free(z1);
		free(z2);
	}
	b = NULL;
	T_OK(tfd_capture_load_mem(two, zlen + zlen2, "w0.trace.json.gz", NULL, &b, &err), &err);
	T_EQ_I64(b->hosts[0].nevents, 40000);
	tfd_capture_free(b);
	free(two);
	/* the inflate limit, a truncated stream */
	b = NULL;
	lo.max_inflated = 1u << 20;
	T_TRUE(tfd_capture_load_mem(z, zfull, "w.trace.json.gz", &lo, &b, &err) == TFD_E_LIMIT);
	T_TRUE(strstr(err.msg, "gzip data inflates to more than 1 MiB") != NULL);
	T_TRUE(tfd_capture_load_mem(z, zfull / 2, "w.trace.json.gz", NULL, &b, &err) ==
	       TFD_E_FORMAT);
	T_TRUE(strstr(err.msg, "truncated gzip data") != NULL);
	/* broken JSON inside: the byte offset is that of the inflated document */
	bad = (size_t)(strstr(doc + len / 2, ",{") - doc);
	doc[bad] = '#';
	free(z);
	z = gzip_of(doc, len, &zlen);
	T_TRUE(tfd_capture_load_mem(z, zlen, "w.trace.json.gz", NULL, &b, &err) == TFD_E_FORMAT);
	{
		/* the same message as for the plain document */
		struct tfd_err plain = {0};
		char *at;

		T_TRUE(tfd_capture_load_mem(doc, len, "w.trace.json.gz", NULL, &b, &plain) ==
		       TFD_E_FORMAT);
		at = strstr(plain.msg, "invalid JSON near byte ");
		T_TRUE(at != NULL);
		if (!strstr(err.msg, at))
			T_FAILF("gz '%s', plain '%s'", err.msg, plain.msg);
		T_TRUE(strtoull(at + 23, NULL, 10) >= bad &&
		       strtoull(at + 23, NULL, 10) <= bad + 1);
	}
	T_TRUE(b == NULL);
	tfd_capture_free(a);
	free(z);
	free(doc);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* a multi-host run directory read on 4 threads equals reading it on one */
static void parallel_load_matches_sequential(struct t *t)
{
	char dir[] = "/tmp/tfd-unit-XXXXXX";
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	struct tfd_capture *a = NULL, *b = NULL;
	struct tfd_load_opts one = {0}, four = {0};
	const char *paths[1];

	T_TRUE(mkdtemp(dir) != NULL);
	T_OK(tfd_synth_run("tests/synth/16-multi-host-slow-worker.json", dir, 0.5, &res, &err),
	     &err);
	paths[0] = res.run_dir;
	one.jobs = 1;
	four.jobs = 4;
	T_OK(tfd_capture_load(paths, 1, &one, &a, &err), &err);
	T_OK(tfd_capture_load(paths, 1, &four, &b, &err), &err);
	T_EQ_I64(a->nhosts, 4);
	T_EQ_I64(b->nhosts, 4);
	T_EQ_I64(tfd_capture_nparts(b), 4);
	for (size_t i = 0; i < 4; i++) {
		T_EQ_STR(b->hosts[i].name, a->hosts[i].name);
		T_EQ_STR(b->hosts[i].path, a->hosts[i].path);
		T_EQ_I64(b->hosts[i].nevents, a->hosts[i].nevents);
		T_EQ_I64(b->hosts[i].nsteps, a->hosts[i].nsteps);
		T_EQ_I64(b->hosts[i].nthreads, a->hosts[i].nthreads);
	}
	tfd_capture_free(a);
	tfd_capture_free(b);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The report of an analysis (JSON and text) with the built-in rules. */
static void report_of(const struct tfd_analysis *a, struct tfd_buf *b)
{
	struct tfd_ruleset *rs = NULL;
	struct tfd_findings fs = {0};
	struct tfd_err err = {0};

	tfd_buf_init(b);
	if (tfd_rules_load_builtin(&rs, &err))
		abort();
	tfd_rules_eval(rs, a, &fs);
	tfd_render_json(a, &fs, b);
	tfd_render_text(a, &fs, b);
	tfd_findings_free(&fs);
	tfd_rules_free(rs);
}

/* Which of two analyses' outputs differ: "report" (JSON and text), then
 * "partial" (analyze --partial); NULL when both are the same. */
static const char *output_differs(const struct tfd_analysis *a1, const struct tfd_analysis *a2,
				  const struct tfd_analyze_opts *ao)
{
	struct tfd_buf b1, b2;
	const char *d = NULL;

	report_of(a1, &b1);
	report_of(a2, &b2);
	if (b1.len != b2.len || memcmp(b1.s, b2.s, b1.len))
		d = "report";
	b1.len = b2.len = 0;
	tfd_partial_write(a1, ao, "src", &b1);
	tfd_partial_write(a2, ao, "src", &b2);
	if (!d && (b1.len != b2.len || memcmp(b1.s, b2.s, b1.len)))
		d = "partial";
	tfd_buf_release(&b1);
	tfd_buf_release(&b2);
	return d;
}

/* Two events the same, each of its own capture (signatures by name). */
static bool same_ev(const struct tfd_event *a, const struct tfd_event *b)
{
	return a->kind == b->kind && a->start_ns == b->start_ns && a->dur_ns == b->dur_ns &&
	       a->flags == b->flags && a->id == b->id && strcmp(a->sig->name, b->sig->name) == 0;
}

static bool drop_all(const struct tfd_event *e, void *ctx)
{
	(void)e;
	(void)ctx;
	return false;
}

static bool count_seen(const struct tfd_event *e, void *ctx)
{
	*(size_t *)ctx += tfd_graph_kind(e->kind);
	return !tfd_graph_kind(e->kind) ? false : true;
}

/* A read that leaves the iterator, Produce and Consume events in the file
 * (TFDOCTOR_SOURCE_LEAVE=1, a capture loaded for a lean analysis): every
 * thread's events merged back (struct tfd_ev_mcursor) are those a plain
 * read packs, in its order; a filter keeps them (and shows them to keep()
 * when asked); the analysis is the same; a file cut short after the read
 * is the error, not a smaller answer. */
static void left_in_file(struct t *t)
{
	const char *real[] = {"examples/real-py-function-map/vm.xplane.pb",
			      "examples/real-loop-inside-function/vm.xplane.pb",
			      "examples/real-interleave-seq-slow-read/vm.xplane.pb"};
	struct tfd_analyze_opts ao = {0};
	struct tfd_err err = {0};

	/* read line by line, and in blocks of 16 KB on 4 threads (long lines
	 * cut into parts: the seams between the events left and packed) */
	for (size_t k = 0; k < 2 * sizeof(real) / sizeof(real[0]); k++) {
		const char *paths[1] = {real[k / 2]};
		struct tfd_load_opts lo = {0}, lean;
		struct tfd_capture *cp = NULL, *cl = NULL;
		struct tfd_analysis *a1 = NULL, *a2 = NULL;
		size_t left = 0, differ = 0;
		const char *d;

		lo.jobs = 1;
		T_OK(tfd_capture_load(paths, 1, &lo, &cp, &err), &err);
		if (k % 2) {
			lo.jobs = 4;
			lo.block_bytes = (size_t)16 << 10;
		}
		lean = tfd_load_opts_defer(&lo, true);
		setenv("TFDOCTOR_SOURCE_LEAVE", "1", 1);
		T_OK(tfd_capture_load(paths, 1, &lean, &cl, &err), &err);
		unsetenv("TFDOCTOR_SOURCE_LEAVE");
		T_EQ_U64(cl->nhosts, 1);
		T_EQ_U64(cl->hosts[0].nthreads, cp->hosts[0].nthreads);
		T_EQ_U64(cl->hosts[0].nevents, cp->hosts[0].nevents);
		for (size_t i = 0; i < cp->hosts[0].nthreads; i++) {
			struct tfd_host *hl = &cl->hosts[0], *hp = &cp->hosts[0];
			struct tfd_thread *th = &hl->threads[i];
			struct tfd_event *vp = tfd_thread_unpack(hp, &hp->threads[i]);
			struct tfd_event *vl = tfd_thread_unpack(hl, th);
			size_t n = hp->threads[i].nevents, ng = 0, seen = 0;

			T_EQ_U64(th->nevents, n);
			for (size_t j = 0; j < n && j < th->nevents; j++) {
				differ += !same_ev(&vp[j], &vl[j]);
				ng += tfd_graph_kind(vp[j].kind);
			}
			left += th->nfile;
			T_EQ_U64(th->nfile, ng);
			T_EQ_U64(th->nkbits, n);
			/* a filter keeps what is in the file, and shows it when asked */
			if (th->nfile && k < 2) {
				tfd_thread_filter_times(hl, th, count_seen, &seen);
				T_EQ_U64(seen, ng);
				tfd_thread_filter(hl, th, drop_all, NULL);
				T_EQ_U64(th->nevents, ng);
				T_EQ_U64(th->nfile, ng);
				free(vl);
				vl = tfd_thread_unpack(hl, th);
				for (size_t j = 0, m = 0; j < n; j++)
					if (tfd_graph_kind(vp[j].kind))
						differ += !same_ev(&vp[j], &vl[m++]);
			}
			free(vp);
			free(vl);
		}
		T_EQ_U64(differ, 0);
		if (!left)
			T_FAILF("%s: nothing was left in the file", real[k / 2]);
		T_EQ_U64(cl->hosts[0].source->failed, 0);
		tfd_capture_free(cp);
		tfd_capture_free(cl);
		/* the analysis, with and without */
		T_OK(tfd_analyze_paths(paths, 1, &lo, &ao, &a1, &err), &err);
		setenv("TFDOCTOR_SOURCE_LEAVE", "1", 1);
		T_OK(tfd_analyze_paths(paths, 1, &lo, &ao, &a2, &err), &err);
		unsetenv("TFDOCTOR_SOURCE_LEAVE");
		if ((d = output_differs(a1, a2, &ao)))
			T_FAILF("%s (jobs %d): the events left in the file give another %s",
				real[k / 2], lo.jobs, d);
		tfd_analysis_free(a1);
		tfd_analysis_free(a2);
	}
}

/* A file cut short between the read that left its events there and the
 * analysis that reads them: the error names it. */
static void left_in_file_cut(struct t *t)
{
	char dir[] = "/tmp/tfd-unit-XXXXXX", path[64];
	const char *paths[1] = {path};
	struct tfd_load_opts lo = {0}, lean = tfd_load_opts_defer(&lo, true);
	struct tfd_analyze_opts ao = {0};
	struct tfd_capture *cl = NULL;
	struct tfd_analysis *a = NULL;
	struct tfd_err err = {0};
	struct stat st;
	FILE *in, *out;
	int c;

	T_TRUE(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/vm.xplane.pb", dir);
	in = fopen("examples/real-interleave-seq-slow-read/vm.xplane.pb", "rb");
	out = fopen(path, "wb");
	T_TRUE(in && out);
	while (in && out && (c = getc(in)) != EOF)
		putc(c, out);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
	setenv("TFDOCTOR_SOURCE_LEAVE", "1", 1);
	T_OK(tfd_capture_load(paths, 1, &lean, &cl, &err), &err);
	unsetenv("TFDOCTOR_SOURCE_LEAVE");
	T_TRUE(stat(path, &st) == 0);
	T_TRUE(truncate(path, st.st_size / 2) == 0);
	T_EQ_I64(tfd_analyze_lean(cl, &ao, &a, &err), TFD_E_IO);
	T_TRUE(strstr(err.msg, "the file changed while it was analyzed") != NULL);
	T_TRUE(strstr(err.msg, path) != NULL);
	tfd_analysis_free(a);
	tfd_capture_free(cl);
	remove(path);
	rmdir(dir);
}

/* analyze DIR one host file at a time gives what one load of DIR gives */
static void check_by_file(struct t *t, const char *dir, const struct tfd_analyze_opts *ao, int jobs)
{
	const char *paths[1] = {dir};
	struct tfd_load_opts lo = {0};
	struct tfd_capture *c1 = NULL;
	struct tfd_analysis *a1 = NULL, *a2 = NULL;
	struct tfd_err e1 = {0}, e2 = {0};
	enum tfd_status s1, s2;
	const char *d;

	lo.jobs = jobs;
	s1 = tfd_capture_load(paths, 1, &lo, &c1, &e1);
	if (!s1)
		s1 = tfd_analyze(c1, ao, &a1, &e1);
	s2 = tfd_analyze_paths(paths, 1, &lo, ao, &a2, &e2);
	T_EQ_I64(s2, s1);
	if (s1 || s2) {
		T_EQ_STR(e2.msg, e1.msg);
		T_TRUE(!a2);
	} else {
		/* the report, and the partial it makes (analyze --partial) */
		if ((d = output_differs(a1, a2, ao)))
			T_FAILF("%s (jobs %d, host %s): one file at a time gives another %s than "
				"one load",
				dir, jobs, ao->host ? ao->host : "-", d);
		T_EQ_STR(a2->label ? a2->label : "-", c1->run ? c1->run : "-");
		T_EQ_I64(a2->nhosts, c1->nhosts);
		for (size_t i = 0; i < c1->nhosts && i < a2->nhosts; i++) {
			bool found = false;

			for (size_t k = 0; k < a2->nhosts; k++)
				found |= strcmp(a2->hosts[k].host->path, c1->hosts[i].path) == 0;
			T_TRUE(found);
		}
	}
	tfd_analysis_free(a1);
	tfd_capture_free(c1);
	/* the merged result holds no pointer into a capture: it renders on
	 * its own (the sanitizer build checks every read) */
	if (a2) {
		struct tfd_buf b;

		report_of(a2, &b);
		tfd_buf_release(&b);
	}
	tfd_analysis_free(a2);
}

static void copy_file(struct t *t, const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;

	T_TRUE(in && out);
	while (in && out && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		T_TRUE(fwrite(buf, 1, n, out) == n);
	if (in)
		fclose(in);
	if (out)
		fclose(out);
}

/* tfd_analyze_paths on run and log directories: multi-host synthesized runs
 * and real captures side by side, on one and two threads, with --host,
 * --no-warmup and --rank; a corrupt host file and an analysis error give
 * the error one load gives */
static void by_file_matches_one_load(struct t *t)
{
	static const char *const specs[] = {"tests/synth/16-multi-host-slow-worker.json",
					    "tests/synth/17-multi-host-parallel-map.json",
					    "tests/synth/40-multi-host-source-behind-pmap.json",
					    "tests/synth/23-device-planes.json"};
	static const char *const real[] = {
	    "examples/ai-notebook/ai-notebook.xplane.pb",
	    "tests/cases/ok/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb",
	    "examples/smdebug-8gpu/ip-172-31-19-241.trace.json",
	    "examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz",
	    "tests/cases/ok/tda-mnist-linear-tf20/local.trace"};
	char dir[] = "/tmp/tfd-unit-XXXXXX", sub[600], f[4400];
	struct tfd_analyze_opts plain = {0}, nowarm = {0}, rank = {0}, host = {0};
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	FILE *fp;

	nowarm.no_warmup = true;
	rank.rank_set = true;
	rank.rank = 1;
	host.host = "worker-2";
	T_TRUE(mkdtemp(dir) != NULL);
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		snprintf(sub, sizeof(sub), "%s/s%zu", dir, i);
		T_OK(tfd_synth_run(specs[i], sub, 0.3, &res, &err), &err);
		check_by_file(t, sub, &plain, 1); /* a log directory */
		check_by_file(t, res.run_dir, &plain, 2);
		check_by_file(t, res.run_dir, &nowarm, 2);
		check_by_file(t, res.run_dir, &rank, 2);
		check_by_file(t, res.run_dir, &host, 2);
	}
	/* real captures of several kinds as the hosts of one run */
	snprintf(sub, sizeof(sub), "%s/real", dir);
	T_TRUE(mkdir(sub, 0755) == 0);
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		const char *base = strrchr(real[i], '/') + 1;

		snprintf(f, sizeof(f), "%s/%s", sub, base);
		copy_file(t, real[i], f);
	}
	check_by_file(t, sub, &plain, 1);
	check_by_file(t, sub, &plain, 2);
	check_by_file(t, sub, &nowarm, 2);
	/* errors: a corrupt host file after a good one; a cycle of parent ids */
	snprintf(f, sizeof(f), "%s/zz.xplane.pb", sub);
	T_TRUE((fp = fopen(f, "wb")) != NULL);
	fputs("\x0a\xff\xff\x01junk", fp);
	fclose(fp);
	check_by_file(t, sub, &plain, 2);
	snprintf(sub, sizeof(sub), "%s/cyc", dir);
	T_OK(tfd_synth_run("tests/synth/16-multi-host-slow-worker.json", sub, 0.1, &res, &err),
	     &err);
	snprintf(f, sizeof(f), "%s/zz.trace.json", res.run_dir);
	T_TRUE((fp = fopen(f, "wb")) != NULL);
	fputs(
	    "{\"traceEvents\": [{\"ph\": \"M\", \"pid\": 1, \"name\": \"process_name\", "
	    "\"args\": {\"name\": \"/host:CPU\"}}, "
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 5, "
	    "\"name\": \"Iterator::Model::Map\", \"args\": {\"id\": \"2\", \"parent_id\": \"3\"}}, "
	    "{\"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 4, "
	    "\"name\": \"Iterator::Model::Map::Map\", \"args\": {\"id\": \"3\", \"parent_id\": "
	    "\"2\"}}]}",
	    fp);
	fclose(fp);
	check_by_file(t, res.run_dir, &plain, 2);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A thread of iterator calls long enough (over 100,000 events, 3 MB) for
 * the lean graph build to give back the pages of events it has read. */
static const char dense_spec[] =
    "{\"name\": \"iterator-dense\", \"expect\": \"TFRecord\", \"steps\": 3000,"
    " \"step_compute_us\": 200, \"large_ids\": true, \"stages\": ["
    "{\"kind\": \"TFRecord\", \"cost_us\": 20}, {\"kind\": \"Map\", \"cost_us\": 30},"
    "{\"kind\": \"Batch\", \"batch_size\": 32, \"cost_us\": 10},"
    "{\"kind\": \"Prefetch\", \"buffer\": 2}]}";

/* tfd_analyze_lean drops every event once calls are linked and gives what
 * tfd_analyze gives (reports, partials, the stages' parameters), on real
 * captures of four formats and synthesized ones with functions, executor
 * chunks, Chrome JSON, device planes and a long thread of iterator calls */
static void lean_matches_plain(struct t *t)
{
	static const char *specs[] = {"tests/synth/04-parallel-map-at-limit.json",
				      "tests/synth/12-map-and-batch.json",
				      "tests/synth/18-chrome-json-only.json",
				      "tests/synth/23-device-planes.json",
				      "tests/synth/34-pmap-behind-wide-interleave.json",
				      "tests/synth/37-pmap-function-not-captured.json",
				      NULL /* dense_spec */};
	static const char *const real[] = {
	    "examples/ai-notebook/ai-notebook.xplane.pb",
	    "examples/ai-notebook/ai-notebook.trace.json.gz",
	    "tests/cases/ok/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb",
	    "examples/smdebug-8gpu/ip-172-31-19-241.trace.json",
	    "tests/cases/ok/tda-mnist-linear-tf20/local.trace"};
	char dir[] = "/tmp/tfd-unit-XXXXXX", sub[600], dense[600];
	const char *paths[sizeof(specs) / sizeof(specs[0]) + sizeof(real) / sizeof(real[0])];
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	size_t n = 0, dropped = 0;

	T_TRUE(mkdtemp(dir) != NULL);
	snprintf(dense, sizeof(dense), "%s/dense.json", dir);
	{
		FILE *fp = fopen(dense, "w");

		T_TRUE(fp != NULL && fputs(dense_spec, fp) >= 0);
		if (fp)
			fclose(fp);
	}
	specs[sizeof(specs) / sizeof(specs[0]) - 1] = dense;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		snprintf(sub, sizeof(sub), "%s/s%zu", dir, i);
		T_OK(tfd_synth_run(specs[i], sub, specs[i] == dense ? 1.0 : 0.3, &res, &err), &err);
		paths[n++] = strdup(res.run_dir);
	}
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++)
		paths[n++] = strdup(real[i]);
	for (size_t i = 0; i < n; i++) {
		struct tfd_capture *c1 = NULL, *c2 = NULL;
		struct tfd_analysis *a1 = NULL, *a2 = NULL;
		size_t it1 = 0, ev1 = 0;
		const char *d;

		T_OK(tfd_capture_load(&paths[i], 1, NULL, &c1, &err), &err);
		T_OK(tfd_capture_load(&paths[i], 1, NULL, &c2, &err), &err);
		T_OK(tfd_analyze(c1, NULL, &a1, &err), &err);
		T_OK(tfd_analyze_lean(c2, NULL, &a2, &err), &err);
		if ((d = output_differs(a1, a2, NULL)))
			T_FAILF("%s: the lean analysis's %s differs", paths[i], d);
		for (size_t h = 0; h < c2->nhosts; h++) {
			T_EQ_I64(c2->hosts[h].nevents, c1->hosts[h].nevents); /* what was read */
			for (size_t k = 0; k < c2->hosts[h].nthreads; k++) {
				const struct tfd_thread *x = &c1->hosts[h].threads[k];
				const struct tfd_thread *y = &c2->hosts[h].threads[k];

				struct tfd_ev_cursor cur;
				struct tfd_event ev;

				for (tfd_ev_begin(&cur, &c1->hosts[h], x); tfd_ev_next(&cur, &ev);)
					it1 += ev.kind == TFD_EV_ITERATOR;
				T_EQ_I64(y->nevents, 0);
				T_TRUE(y->evbuf == NULL && y->evlen == 0 && y->kinds == 0);
				ev1 += x->nevents;
			}
		}
		T_TRUE(it1 > 0); /* each capture has calls whose events went */
		dropped += ev1;
		tfd_analysis_free(a1);
		tfd_analysis_free(a2);
		tfd_capture_free(c1);
		tfd_capture_free(c2);
		free((char *)paths[i]);
	}
	if (dropped < 500) /* the captures had such events to drop */
		T_FAILF("only %zu events dropped from %zu captures", dropped, n);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A one-byte damage at a pseudo-random place of data[from..len): one bit
 * flipped; *was keeps the byte to put back. */
static size_t damage_byte(uint8_t *data, size_t from, size_t len, unsigned *seed, uint8_t *was)
{
	size_t at;

	*seed = *seed * 1103515245u + 12345u;
	at = from + (size_t)(*seed >> 4) % (len - from);
	*was = data[at];
	data[at] = (uint8_t)(*was ^ (1u << ((*seed >> 1) & 7)));
	return at;
}

/* Two loads of the same bytes hold the same hosts, threads, events (with
 * their parameters), steps and planes, in the same order. */
/* Function op sums in a canonical order: by thread, iterator, name. */
static int fn_sum_cmp(const void *a, const void *b)
{
	const struct tfd_fn_op_sum *x = a, *y = b;
	int c;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if ((c = strcmp(x->iter ? x->iter : "", y->iter ? y->iter : "")))
		return c;
	return strcmp(x->name, y->name);
}

static int py_op_cmp(const void *a, const void *b)
{
	const struct tfd_py_op *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e < y->e ? -1 : 1;
	return x->fn < y->fn ? -1 : x->fn > y->fn;
}

/* A copy of v[0..n) (each size bytes) sorted by cmp; the caller frees it. */
static void *sorted_copy(const void *v, size_t n, size_t size,
			 int (*cmp)(const void *, const void *))
{
	void *c = xmalloc(n * size);

	memcpy(c, v, n * size);
	qsort(c, n, size, cmp);
	return c;
}

/* What the readers sum as they go, never kept as events: the ops inside
 * dataset functions (by type, by function thread or iterator, the Python
 * ones one by one) and the session runs that read no input. A function
 * scope or a GetNext op open where a line is cut into parts carries into
 * the next part. */
static void same_sums(struct t *t, const char *what, const struct tfd_host *x,
		      const struct tfd_host *y)
{
	if (x->nfn_op_types != y->nfn_op_types)
		T_FAILF("%s: op types %zu/%zu", what, x->nfn_op_types, y->nfn_op_types);
	for (size_t k = 0; k < x->nfn_op_types && x->nfn_op_types == y->nfn_op_types; k++)
		if (strcmp(x->fn_op_types[k].type, y->fn_op_types[k].type) ||
		    strcmp(x->fn_op_types[k].name, y->fn_op_types[k].name) ||
		    x->fn_op_types[k].self_ns != y->fn_op_types[k].self_ns ||
		    x->fn_op_types[k].count != y->fn_op_types[k].count)
			T_FAILF("%s: op type %zu differs: %s %lld ns %llu, %s %lld ns %llu", what,
				k, x->fn_op_types[k].name, (long long)x->fn_op_types[k].self_ns,
				(unsigned long long)x->fn_op_types[k].count, y->fn_op_types[k].name,
				(long long)y->fn_op_types[k].self_ns,
				(unsigned long long)y->fn_op_types[k].count);
	if (x->nfn_sums != y->nfn_sums) {
		T_FAILF("%s: function op sums %zu/%zu", what, x->nfn_sums, y->nfn_sums);
	} else if (x->nfn_sums) {
		struct tfd_fn_op_sum *u =
		    sorted_copy(x->fn_sums, x->nfn_sums, sizeof(*u), fn_sum_cmp);
		struct tfd_fn_op_sum *v =
		    sorted_copy(y->fn_sums, x->nfn_sums, sizeof(*v), fn_sum_cmp);

		for (size_t k = 0; k < x->nfn_sums; k++)
			if (fn_sum_cmp(&u[k], &v[k]) || u[k].self_ns != v[k].self_ns ||
			    u[k].count != v[k].count)
				T_FAILF(
				    "%s: function op sum %s differs: %lld ns %llu, %lld ns %llu",
				    what, u[k].name, (long long)u[k].self_ns,
				    (unsigned long long)u[k].count, (long long)v[k].self_ns,
				    (unsigned long long)v[k].count);
		free(u);
		free(v);
	}
	if (x->npy_ops != y->npy_ops) {
		T_FAILF("%s: Python ops %zu/%zu", what, x->npy_ops, y->npy_ops);
	} else if (x->npy_ops) {
		struct tfd_py_op *u = sorted_copy(x->py_ops, x->npy_ops, sizeof(*u), py_op_cmp);
		struct tfd_py_op *v = sorted_copy(y->py_ops, x->npy_ops, sizeof(*v), py_op_cmp);

		for (size_t k = 0; k < x->npy_ops; k++)
			if (py_op_cmp(&u[k], &v[k]))
				T_FAILF("%s: Python op %zu differs", what, k);
		free(u);
		free(v);
	}
	if (x->eval_runs != y->eval_runs)
		T_FAILF("%s: evaluation runs %zu/%zu", what, x->eval_runs, y->eval_runs);
	if (x->nidle_runs != y->nidle_runs ||
	    (x->nidle_runs &&
	     memcmp(x->idle_runs, y->idle_runs, x->nidle_runs * sizeof(*x->idle_runs))))
		T_FAILF("%s: idle session runs differ (%zu/%zu)", what, x->nidle_runs,
			y->nidle_runs);
}

static void same_capture(struct t *t, const char *what, const struct tfd_capture *a,
			 const struct tfd_capture *b)
{
	T_EQ_I64(b->nhosts, a->nhosts);
	for (size_t i = 0; i < a->nhosts; i++) {
		const struct tfd_host *x = &a->hosts[i], *y = &b->hosts[i];

		if (y->nthreads != x->nthreads || y->nevents != x->nevents ||
		    y->niterators != x->niterators || y->nproduce != x->nproduce ||
		    y->nsteps != x->nsteps || y->span_start_ns != x->span_start_ns ||
		    y->span_end_ns != x->span_end_ns || y->nplanes != x->nplanes)
			T_FAILF("%s: host %zu differs: threads %zu/%zu events %zu/%zu iterators "
				"%zu/%zu produce %zu/%zu steps %zu/%zu span %lld..%lld/%lld..%lld",
				what, i, x->nthreads, y->nthreads, x->nevents, y->nevents,
				x->niterators, y->niterators, x->nproduce, y->nproduce, x->nsteps,
				y->nsteps, (long long)x->span_start_ns, (long long)x->span_end_ns,
				(long long)y->span_start_ns, (long long)y->span_end_ns);
		for (size_t k = 0; k < x->nsteps; k++)
			if (memcmp(&x->steps[k], &y->steps[k], sizeof(x->steps[k])))
				T_FAILF("%s: step %zu differs", what, k);
		same_sums(t, what, x, y);
		/* the executor chunks summed as read: the same ids, sums, threads
		 * (coded: the same codes, the events holding them compared below) */
		if (!x->exec_sums != !y->exec_sums)
			T_FAILF("%s: executor sums in one capture only", what);
		if (x->exec_sums && y->exec_sums && (x->exec_sums->coded || y->exec_sums->coded)) {
			const struct tfd_exec_sums *p = x->exec_sums, *q = y->exec_sums;

			if (!p->coded || !q->coded || p->cap != q->cap ||
			    p->has_zero != q->has_zero || p->zero_val != q->zero_val ||
			    (p->cap && memcmp(p->val, q->val, p->cap * sizeof(uint64_t))))
				T_FAILF("%s: coded executor sums differ", what);
		}
		for (size_t side = 0; x->exec_sums && y->exec_sums && !x->exec_sums->coded &&
				      !y->exec_sums->coded && side < 2;
		     side++) {
			const struct tfd_exec_sums *p = side ? y->exec_sums : x->exec_sums;
			const struct tfd_exec_sums *q = side ? x->exec_sums : y->exec_sums;

			for (size_t k = 0; k <= p->cap; k++) {
				uint64_t id = k < p->cap ? p->key[k] : 0;
				int64_t n1 = -1, n2 = -1;
				uint32_t t1 = 0, t2 = 0;
				bool g1, g2;

				if (k < p->cap && !id)
					continue;
				g1 = tfd_exec_sums_get(p, id, &n1, &t1);
				g2 = tfd_exec_sums_get(q, id, &n2, &t2);
				if (g1 != g2 || n1 != n2 || t1 != t2)
					T_FAILF(
					    "%s: executor sum of step %llu differs: %lld on %u, "
					    "%lld on %u",
					    what, (unsigned long long)id, (long long)n1, t1,
					    (long long)n2, t2);
			}
		}
		for (size_t k = 0; k < x->nplanes; k++)
			if (x->planes[k].nevents != y->planes[k].nevents ||
			    strcmp(x->planes[k].name, y->planes[k].name))
				T_FAILF("%s: plane %zu differs", what, k);
		for (size_t th = 0; th < x->nthreads; th++) {
			const struct tfd_thread *u = &x->threads[th], *v = &y->threads[th];

			if (u->id != v->id || strcmp(u->name, v->name) || u->nevents != v->nevents)
				T_FAILF("%s: thread %zu differs ('%s' %zu events, '%s' %zu)", what,
					th, u->name, u->nevents, v->name, v->nevents);
			struct tfd_event *ue = tfd_thread_unpack(x, u);
			struct tfd_event *ve = tfd_thread_unpack(y, v);

			for (size_t k = 0; k < u->nevents && u->nevents == v->nevents; k++) {
				const struct tfd_event *e = &ue[k], *f = &ve[k];

				if (e->start_ns != f->start_ns || e->dur_ns != f->dur_ns ||
				    strcmp(e->sig->name, f->sig->name) || e->id != f->id ||
				    e->sig->parent_id != f->sig->parent_id || e->kind != f->kind ||
				    e->flags != f->flags || e->sig->nparams != f->sig->nparams)
					T_FAILF("%s: thread %zu event %zu differs", what, th, k);
				for (uint16_t q = 0; q < e->sig->nparams; q++)
					if (strcmp(e->sig->params[q].key, f->sig->params[q].key) ||
					    strcmp(e->sig->params[q].val, f->sig->params[q].val))
						T_FAILF("%s: thread %zu event %zu param %u differs",
							what, th, k, q);
			}
			free(ue);
			free(ve);
		}
		{
			/* and the counts kept as events were read are theirs */
			size_t nk[TFD_EV__COUNT] = {0};

			for (size_t th = 0; th < y->nthreads; th++) {
				struct tfd_ev_cursor cur;
				struct tfd_event ev;

				tfd_ev_begin(&cur, y, &y->threads[th]);
				while (tfd_ev_next(&cur, &ev))
					nk[ev.kind]++;
			}
			if (y->niterators != nk[TFD_EV_ITERATOR] ||
			    y->nproduce != nk[TFD_EV_PRODUCE] + nk[TFD_EV_CONSUME] ||
			    y->nfunctions != nk[TFD_EV_FUNCTION] || x->nfunctions != y->nfunctions)
				T_FAILF(
				    "%s: host %zu counts: iterators %zu (%zu events), produce %zu "
				    "(%zu), functions %zu (%zu; the other capture %zu)",
				    what, i, y->niterators, nk[TFD_EV_ITERATOR], y->nproduce,
				    nk[TFD_EV_PRODUCE] + nk[TFD_EV_CONSUME], y->nfunctions,
				    nk[TFD_EV_FUNCTION], x->nfunctions);
		}
	}
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0) {
		buf = malloc((size_t)n);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		*len = (size_t)n;
	}
	fclose(f);
	return buf;
}

/* A host plane read in blocks on 3 threads, long lines cut into parts at
 * guessed event boundaries, gives what reading it line by line gives; and
 * a damaged file the same error line (or the same capture). */
static void check_blocks(struct t *t, const char *path, int damage)
{
	size_t len = 0;
	uint8_t *data = slurp(path, &len);
	struct tfd_load_opts one = {0}, three = {0};
	unsigned seed = 12345;

	T_TRUE(data != NULL);
	one.jobs = 1;
	three.jobs = 3;
	three.block_bytes = 1; /* blocks of a twelfth of the plane */
	for (int round = 0; round <= damage; round++) {
		struct tfd_capture *a = NULL, *b = NULL;
		struct tfd_err ea = {0}, eb = {0};
		enum tfd_status sa, sb;
		size_t at = 0;
		uint8_t was = 0;
		char what[600];

		if (round) /* one byte changed in the back nine tenths */
			at = damage_byte(data, len / 10, len, &seed, &was);
		snprintf(what, sizeof(what), "%s (byte %zu changed: %d)", path, at, round > 0);
		sa = tfd_capture_load_mem(data, len, "h.xplane.pb", &one, &a, &ea);
		sb = tfd_capture_load_mem(data, len, "h.xplane.pb", &three, &b, &eb);
		if (sa != sb || (sa && strcmp(ea.msg, eb.msg)))
			T_FAILF("%s: one thread: %d '%s', blocks: %d '%s'", what, sa, ea.msg, sb,
				eb.msg);
		if (!sa)
			same_capture(t, what, a, b);
		tfd_capture_free(a);
		tfd_capture_free(b);
		if (round)
			data[at] = was;
	}
	free(data);
}

/* A Chrome trace read by the structural scan (its names, then its events),
 * and by yajl in both passes, gives the same capture or the same error
 * line; and so does the scan made to doubt every document it has read
 * events of, which yajl then reads again to check and to read. */
static void check_scan(struct t *t, const char *what, const void *data, size_t len,
		       const char *name)
{
	struct tfd_load_opts scan = {0}, full = {0}, doubt = {0};
	struct tfd_capture *a = NULL, *b = NULL, *c = NULL;
	struct tfd_err ea = {0}, eb = {0}, ec = {0};
	enum tfd_status sa, sb, sc;

	full.chrome_no_scan = true;
	scan.chrome_scan_strict = true;
	doubt.chrome_scan_doubt = true;
	sa = tfd_capture_load_mem(data, len, name, &full, &a, &ea);
	sb = tfd_capture_load_mem(data, len, name, &scan, &b, &eb);
	sc = tfd_capture_load_mem(data, len, name, &doubt, &c, &ec);
	if (sa != sb || (sa && strcmp(ea.msg, eb.msg)))
		T_FAILF("%s: full parser: %d '%s', scan: %d '%s'", what, sa, ea.msg, sb, eb.msg);
	else if (!sa)
		same_capture(t, what, a, b);
	if (sa != sc || (sa && strcmp(ea.msg, ec.msg)))
		T_FAILF("%s: full parser: %d '%s', doubted scan: %d '%s'", what, sa, ea.msg, sc,
			ec.msg);
	else if (!sa)
		same_capture(t, what, a, c);
	tfd_capture_free(a);
	tfd_capture_free(b);
	tfd_capture_free(c);
}

/* The one walk over an executor chunk's stats (its id, then its step),
 * with its short path for a stat that is a metadata id and an integer,
 * and the iterators' parameters taken from the signatures they gave before
 * (integers, doubles, short strings, references to another stat's name:
 * TensorFlow 2.21 gives most of its parameters' texts so), reads what two
 * walks with the general stat parser read: the same capture or the same
 * error line, on synthesized host-heavy and tf.data-heavy captures
 * (millions of such chunks and stats in the real thing) with 300 one-byte
 * damages each and on real XSpace captures (a window/flat_map pipeline's
 * inner iterators, a new long name per element; a loop's functions' ops) */
static void exec_walk_matches_two_walks(struct t *t)
{
	static const char *const real[] = {
	    "examples/ai-notebook/ai-notebook.xplane.pb",
	    "tests/cases/ok/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb",
	    "tests/cases/ok/tf221-window-flat-map/vm.xplane.pb",
	    "tests/cases/ok/tf221-loop-eval-every-10/vm.xplane.pb"};
	static const char *const specs[] = {"tests/bench/host-heavy.json",
					    "tests/bench/tfdata-heavy.json"};
	char dir[] = "/tmp/tfd-unit-XXXXXX", what[300], synth[2][4200];
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	const char *files[6];
	size_t nerr = 0;

	T_TRUE(mkdtemp(dir) != NULL);
	for (size_t i = 0; i < 2; i++) {
		char sub[300];

		snprintf(sub, sizeof(sub), "%s/%zu", dir, i);
		T_OK(tfd_synth_run(specs[i], sub, 0.05, &res, &err), &err);
		snprintf(synth[i], sizeof(synth[i]), "%s/worker-0.xplane.pb", res.run_dir);
		files[i] = synth[i];
	}
	for (size_t i = 0; i < 4; i++)
		files[2 + i] = real[i];
	for (size_t i = 0; i < 6; i++) {
		size_t len = 0;
		uint8_t *data = slurp(files[i], &len);
		unsigned seed = 4242;
		int rounds = i < 2 ? 300 : 40;

		T_TRUE(data != NULL);
		for (int round = 0; data && round <= rounds; round++) {
			struct tfd_load_opts one = {0}, two = {0};
			struct tfd_capture *a = NULL, *b = NULL;
			struct tfd_err ea = {0}, eb = {0};
			enum tfd_status sa, sb;
			size_t at = 0;
			uint8_t was = 0;

			if (round)
				at = damage_byte(data, 0, len, &seed, &was);
			two.xspace_two_walks = true;
			one.jobs = two.jobs = 1;
			sa = tfd_capture_load_mem(data, len, "w.xplane.pb", &two, &a, &ea);
			sb = tfd_capture_load_mem(data, len, "w.xplane.pb", &one, &b, &eb);
			snprintf(what, sizeof(what), "%s (byte %zu changed: %d)", files[i], at,
				 round > 0);
			if (sa != sb || (sa && strcmp(ea.msg, eb.msg)))
				T_FAILF("%s: two walks: %d '%s', one: %d '%s'", what, sa, ea.msg,
					sb, eb.msg);
			else if (!sa)
				same_capture(t, what, a, b);
			nerr += sa != 0;
			tfd_capture_free(a);
			tfd_capture_free(b);
			if (round)
				data[at] = was;
		}
		free(data);
	}
	T_TRUE(nerr > 10); /* damages that the readers reject were among them */
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#define HOSTM "{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}}"
#define GPUM                                                                                       \
	"{\"ph\":\"M\",\"pid\":2,\"name\":\"process_name\",\"args\":{\"name\":\"/device:GPU:0\"}}"
#define THRM                                                                                       \
	"{\"ph\":\"M\",\"pid\":1,\"tid\":7,\"name\":\"thread_name\",\"args\":{\"name\":\"tf_"      \
	"data\"}}"
#define ITER                                                                                       \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":1,\"dur\":5,\"name\":\"Iterator::Model::Map\","  \
	"\"args\":{\"id\":\"11\"}}"
#define GPUX                                                                                       \
	"{\"ph\":\"X\",\"pid\":2,\"tid\":1,\"ts\":1,\"dur\":5,\"name\":\"Iterator::Model::Map\"}"
#define ICFX                                                                                       \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":2,\"dur\":2,"                                    \
	"\"name\":\"InstantiatedCapturedFunction::Run\",\"args\":{\"id\":\"99\"}}"
#define EXEC                                                                                       \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":8,\"ts\":2,\"dur\":2,"                                    \
	"\"name\":\"ExecutorState::Process\",\"args\":{\"id\":\"99\"}}"
#define EXEC2                                                                                      \
	"{\"ph\":\"X\",\"pid\":1,\"tid\":8,\"ts\":3,\"dur\":1,"                                    \
	"\"name\":\"ExecutorState::Process\",\"args\":{\"id\":\"98\"}}"

static void scan_matches_full_pass(struct t *t)
{
	static const char *const docs[] = {
	    "{\"traceEvents\":[" HOSTM "," GPUM "," THRM "," ITER "," GPUX "," ICFX "," EXEC
	    "," EXEC2 "]}",
	    "[" ITER "," HOSTM "," THRM "," ICFX "," EXEC "]",
	    /* names spelled with escapes */
	    "{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"name\":\"process\\u005fname\",\"args\":{"
	    "\"name\":"
	    "\"\\/host:CPU\"}}," ITER
	    ",{\"ph\":\"\\u004d\",\"pid\":1,\"tid\":7,\"name\":\"thread_name\","
	    "\"args\":{\"name\":\"x\"}},{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":2,\"dur\":2,"
	    "\"name\":"
	    "\"Instantiated\\u0043apturedFunction::Run\",\"args\":{\"id\":\"99\"}}," EXEC "]}",
	    "{\"trace\\u0045vents\":[" HOSTM "," ITER "]}",
	    /* strings that look like structure; a nested traceEvents first */
	    "{\"meta\":{\"traceEvents\":[" GPUM "]},\"s\":\"]}{[\\\"\",\"traceEvents\":[" HOSTM ","
	    "{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":1,\"dur\":5,\"name\":\"a}]\\\"[{\"}," ITER
	    "],"
	    "\"traceEvents\":[" GPUM "]}",
	    "{\"displayTimeUnit\":\"ns\",\"traceEvents\":\"none\",\"x\":[" HOSTM "]}",
	    "{\"traceEvents\":[" HOSTM "," ITER "]} x",
	    "{\"traceEvents\":[" HOSTM "," ITER "]}{}",
	    "{\"traceEvents\":[" HOSTM ", tru, " ITER "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\" \"pid\":1}," ITER "]}",
	    /* a bad event, then bad JSON: the JSON is the error, as always */
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"name\":\"a\"}," ITER
	    ",tru]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"name\":\"a\"},"
	    "{\"name\":\"\xff\xfe\"}]}",
	    "{\"traceEvents\":[{\"x\":1}," HOSTM "]}",
	    "{\"traceEvents\":[1,\"s\",[" GPUM "],null," HOSTM "," THRM "," ITER "]}",
	    "{\"traceEvents\":[]}",
	    "[]",
	    /* pass 2 reads these forms itself: repeated keys, white space, an
	     * empty event, literals, numbers of every spelling, args of every
	     * kind of value; and leaves these to the parser: nested args, an
	     * array value, a non-ASCII name, a control byte, bad numbers (not
	     * last: pass 1 parses the events near a chunk's end) */
	    "{\"traceEvents\":[" HOSTM "," THRM ",{\"ph\":\"X\",\"ph\":\"X\",\"name\":\"a\","
	    "\"name\":\"Iterator::Model::Map\",\"pid\":1,\"tid\":7,\"ts\":1,\"ts\":2,\"dur\":1,"
	    "\"args\":{\"id\":\"5\"},\"args\":{\"parent_id\":\"4\"}}, { \"ph\" : \"X\" ,\r\n\t"
	    "\"pid\" : 1 , \"tid\" : 7 , \"ts\" : 3e0 , \"dur\" : -0 , \"name\" : \"b\" , "
	    "\"args\" : { \"x\" : true , \"y\" : false , \"z\" : null , \"\" : 1.5E+2 , "
	    "\"n\" : -12.25e-1 , \"t\" : \"\x7f\" } } ,{},{\"args\":null,\"ph\":\"X\",\"pid\":1,"
	    "\"tid\":7,\"ts\":\"4\",\"dur\":\"1\",\"name\":\"c\",\"other\":null,\"o2\":\"s\"},"
	    "{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":5,\"name\":\"d\",\"args\":\"s\"},"
	    "{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":6,\"name\":\"e\",\"args\":[1,{}]},"
	    "{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":7,\"name\":\"f\",\"args\":{\"a\":{\"b\":1},"
	    "\"c\":[2],\"d\":\"3\"}},{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":8,\"name\":"
	    "\"g\xc3\xa9\",\"meta\":{\"ph\":\"M\"},\"args\":{}},{\"ph\":\"X\",\"pid\":true,\"tid\":"
	    "7,"
	    "\"ts\":9,\"name\":\"h\",\"dur\":null}]}",
	    "{\"traceEvents\":[" HOSTM
	    ",{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":01,\"name\":\"a\"}," ITER "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM
	    ",{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":1.,\"name\":\"a\"}," ITER "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM
	    ",{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":1,\"name\":\"a\x01\"}," ITER "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"pid\":1,\"tid\":7,\"ts\":1,}," ITER
	    "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"args\":{\"a\":tru}}," ITER "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"args\":{\"a\":1 \"b\":2}}," ITER "," ITER
	    "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\" ,, \"pid\":1}," ITER "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"ts\":12a}," ITER "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"args\":{\"a\":truex}}," ITER "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"name\":\"a\x01,\"b\":1}," ITER "," ITER
	    "]}",
	    "{\"traceEvents\":[" HOSTM ",{\"ph\":\"X\",\"pid\"x1}," ITER "," ITER "]}",
	    /* brackets in strings, and strings that matter in the middle of 16
	     * bytes of plain ones (the first pass reads 16 bytes at a time) */
	    "{\"traceEvents\":[" HOSTM
	    ",{\"xxxxxxxxxxxxxxxxxxxxxxxx\":\"}}}]]]{{{[[[\",\"ph\":\"X\","
	    "\"pid\":1,\"tid\":7,\"ts\":1,\"name\":\"x{[]}x{[]}x{[]}x{[]}x{[]}x\"},{\"yyyyyyyyyyyyy"
	    "\":\"zzzzzzzzzzzzzzzzzzzzzzzzzzzz\",\"ph\":\"M\",\"pid\":1,\"name\":\"thread_name\","
	    "\"tid\":9,\"args\":{\"name\":\"late\"}},{\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyy\":\"zzzzzz\","
	    "\"ph\":\"X\",\"pid\":1,\"tid\":9,\"ts\":2,\"dur\":2,\"name\":"
	    "\"InstantiatedCapturedFunction::Run\",\"args\":{\"id\":\"77\"}},{\"ph\":\"X\","
	    "\"pid\":1,\"tid\":8,\"ts\":2,\"dur\":2,\"name\":\"ExecutorState::Process\","
	    "\"args\":{\"id\":\"77\"}}," ITER "," ITER "," ITER "]}",
	    /* yajl's white space is JSON's and \v and \f: after the document,
	     * between events, inside one */
	    "{\"traceEvents\":[" HOSTM "," ITER "," ITER "]}\v\f\n",
	    /* and takes a string cut by the end after the document for white
	     * space; a whole one is a second value */
	    "{\"traceEvents\":[" HOSTM "," ITER "," ITER "]}\"",
	    "{\"traceEvents\":[" HOSTM "," ITER "," ITER "]} \"ab",
	    "{\"traceEvents\":[" HOSTM "," ITER "," ITER "]} \"ab\"",
	    "[" HOSTM "," ITER "," ITER "]]",
	    "{\"traceEvents\":[" HOSTM "\v,\f" ITER ",{\f\"ph\"\v:\"X\",\"pid\":1,\"tid\":7,"
	    "\"ts\":3,\"name\":\"a\"\v}," ITER "," ITER "]}",
	    /* the items between events: every gap the scan stands in for */
	    "{\"traceEvents\":[" HOSTM "," ITER ",," ITER "]}",
	    "{\"traceEvents\":[" HOSTM " " ITER "]}",
	    "{\"traceEvents\":[" HOSTM " ,\n " ITER "\n,\t1, " ITER " ]}",
	    "{\"traceEvents\":[" HOSTM "," ITER ",]}",
	    "{\"traceEvents\":[," HOSTM "," ITER "]}",
	    "{\"traceEvents\":[" HOSTM "," ITER "],\"after\":[1,2,{\"a\":nul}]}",
	    "{\"traceEvents\":[" HOSTM "," ITER "],\"after\":[1,2,{\"a\":null}],\"m\":{}}",
	    "{\"traceEvents\":[" HOSTM "," ITER "],\"a\\u0062\":1}",
	    "\"traceEvents\"",
	    "{\"traceEvents\":[" HOSTM "," ITER "]",
	};
	static const char *const real[] = {
	    "examples/smdebug-8gpu/ip-172-31-19-241.trace.json",
	    "examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz",
	    "examples/ai-notebook/ai-notebook.trace.json.gz"};
	struct tfd_buf big;
	char what[200];

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		size_t n = strlen(docs[i]), gl;
		uint8_t *gz = gzip_of(docs[i], n, &gl);

		snprintf(what, sizeof(what), "doc %zu", i);
		check_scan(t, what, docs[i], n, "d.trace.json");
		check_scan(t, what, gz, gl, "d.trace.json.gz");
		free(gz);
		/* every prefix: truncated documents */
		for (size_t k = 0; k < n; k++) {
			snprintf(what, sizeof(what), "doc %zu cut at %zu", i, k);
			check_scan(t, what, docs[i], k, "d.trace.json");
		}
	}
	/* events across the 1 MB chunks, metadata and functions among them */
	tfd_buf_init(&big);
	tfd_buf_puts(&big, "{\"traceEvents\":[" HOSTM "," THRM);
	for (int i = 0; big.len < (5u << 20); i++) {
		tfd_buf_printf(&big,
			       ",{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":3,\"name\":"
			       "\"%s\",\"args\":{\"id\":\"%d\",\"s\":\"%.*s\"}}",
			       7 + i % 3, i,
			       i % 7 == 0   ? "InstantiatedCapturedFunction::Run"
			       : i % 7 == 1 ? "ExecutorState::Process"
					    : "Iterator::Model::Map",
			       i % 7 == 1 ? i - 1 : i, i % 61,
			       "{[\"]}\\\\xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
		if (i % 997 == 0)
			tfd_buf_printf(
			    &big,
			    ",{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\","
			    "\"args\":{\"name\":\"t%d\"}}",
			    7 + i % 3, i);
	}
	tfd_buf_puts(&big, "]}");
	check_scan(t, "5 MB of events", big.s, big.len, "big.trace.json");
	{
		size_t gl;
		uint8_t *gz = gzip_of(big.s, big.len, &gl);

		check_scan(t, "5 MB of events, gzipped", gz, gl, "big.trace.json.gz");
		free(gz);
	}
	/* and plain ones (pass 2 reads them without the parser), whose chunk
	 * boundaries fall in every part of an event */
	big.len = 0;
	tfd_buf_puts(&big, "{\"traceEvents\":[" HOSTM "," THRM);
	for (int i = 0; big.len < (3u << 20); i++)
		tfd_buf_printf(
		    &big,
		    ",\n{\"pid\":1,\"tid\":%d,\"ts\":%d.%03d,\"dur\":%d,\"ph\":\"X\",\"name\":"
		    "\"%s\",\"args\":{\"id\":\"%d\",\"b\":%s,\"s\":\"%.*s\"}}",
		    7 + i % 3, i, i % 1000, 1 + i % 5,
		    i % 7 == 0	 ? "InstantiatedCapturedFunction::Run"
		    : i % 7 == 1 ? "ExecutorState::Process"
				 : "Iterator::Model::Map",
		    i % 7 == 1 ? i - 1 : i, i % 2 ? "true" : "null", i % 97,
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
	for (int i = 0; i < 64; i++) /* a thread's name, its "M" at each place of 16 bytes */
		tfd_buf_printf(&big,
			       ",{\"k%.*s\":1,\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":"
			       "\"thread_name\",\"args\":{\"name\":\"m%d\"}}",
			       i % 32, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy", 100 + i, i);
	for (int i = 0; i < 2000; i++)
		tfd_buf_printf(&big,
			       ",{\"pid\":1,\"tid\":%d,\"ts\":%d,\"dur\":1,\"ph\":\"X\","
			       "\"name\":\"Iterator::Model::Map\"}",
			       100 + i % 64, i);
	tfd_buf_puts(&big, "]}");
	check_scan(t, "3 MB of plain events", big.s, big.len, "big.trace.json");
	/* 9 MB: read on two threads (8 MB or more, where there are two cores) */
	while (big.len < (9u << 20)) {
		big.len -= 2;
		tfd_buf_puts(&big, "," ITER "," ITER "," ITER "," ITER "]}");
	}
	check_scan(t, "9 MB of plain events", big.s, big.len, "big.trace.json");
	tfd_buf_release(&big);
	/* real traces, and 40 one-byte damages of each */
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		size_t len = 0;
		uint8_t *data = slurp(real[i], &len);
		unsigned seed = 777;

		T_TRUE(data != NULL);
		for (int round = 0; data && round <= 40; round++) {
			size_t at = 0;
			uint8_t was = 0;

			if (round)
				at = damage_byte(data, 0, len, &seed, &was);
			snprintf(what, sizeof(what), "%s (byte %zu changed: %d)", real[i], at,
				 round > 0);
			check_scan(t, what, data, len,
				   strstr(real[i], ".gz") ? "r.trace.json.gz" : "r.trace.json");
			if (round)
				data[at] = was;
		}
		free(data);
	}
}

/* An XSpace of one host plane pl (id 1, "/host:CPU") holding the n lines
 * lns, packed; its length in *len. The caller frees it. */
static uint8_t *pack_host_plane(Tfdpb__XPlane *pl, Tfdpb__XLine **lns, size_t n, size_t *len)
{
	Tfdpb__XSpace xs = TFDPB__XSPACE__INIT;
	Tfdpb__XPlane *pls[1] = {pl};
	uint8_t *out;

	pl->id = 1;
	pl->name = "/host:CPU";
	pl->n_lines = n;
	pl->lines = lns;
	xs.n_planes = 1;
	xs.planes = pls;
	*len = tfdpb__xspace__get_packed_size(&xs);
	out = xmalloc(*len);
	tfdpb__xspace__pack(&xs, out);
	return out;
}

/* Event metadata i + 1 named names[i], for i < n, into em, eme and emes
 * (a plane's event_metadata). */
static void event_metas(Tfdpb__XEventMetadata *em, Tfdpb__XPlane__EventMetadataEntry *eme,
			Tfdpb__XPlane__EventMetadataEntry **emes, const char *const *names, int n)
{
	for (int i = 0; i < n; i++) {
		Tfdpb__XEventMetadata m = TFDPB__XEVENT_METADATA__INIT;
		Tfdpb__XPlane__EventMetadataEntry e = TFDPB__XPLANE__EVENT_METADATA_ENTRY__INIT;

		m.id = i + 1;
		m.name = (char *)names[i];
		em[i] = m;
		e.key = i + 1;
		e.value = &em[i];
		eme[i] = e;
		emes[i] = &eme[i];
	}
}

/* A host plane with no event metadata at all (every event's name
 * unknown), read in blocks on three threads: each block copies the plane's
 * metadata, here none (a copy from no array at all, which UBSan reports
 * under make check SAN=1), and reads what one thread reads. */
static void blocks_without_metadata(struct t *t)
{
	char path[] = "/tmp/tfd-unit-nometa-XXXXXX";
	Tfdpb__XPlane pl = TFDPB__XPLANE__INIT;
	Tfdpb__XLine ln[4], *lns[4];
	Tfdpb__XEvent ev[4][64], *evs[4][64];
	uint8_t *out;
	size_t len;
	int fd;

	for (int l = 0; l < 4; l++) {
		Tfdpb__XLine x = TFDPB__XLINE__INIT;

		x.id = l + 1;
		x.name = "tf_data_worker";
		x.n_events = 64;
		x.events = evs[l];
		for (int i = 0; i < 64; i++) {
			Tfdpb__XEvent e = TFDPB__XEVENT__INIT;

			e.metadata_id = 7; /* no such metadata */
			e.data_case = TFDPB__XEVENT__DATA_OFFSET_PS;
			e.offset_ps = (int64_t)i * 1000000;
			e.duration_ps = 500000;
			ev[l][i] = e;
			evs[l][i] = &ev[l][i];
		}
		ln[l] = x;
		lns[l] = &ln[l];
	}
	out = pack_host_plane(&pl, lns, 4, &len);
	T_TRUE((fd = mkstemp(path)) >= 0);
	T_TRUE(write(fd, out, len) == (ssize_t)len);
	close(fd);
	check_blocks(t, path, 0);
	unlink(path);
	free(out);
}

/* The function ops resolved to their functions the same way whether the
 * step ids are coded (the records' heads and functions looked up by code)
 * or kept whole (keep_other: by hashed id): the same sums by thread and
 * iterator, each Python op given its function. */
static void function_ops_by_code_or_id(struct t *t)
{
	static const char *const files[] = {
	    "tests/cases/ok/tf221-python-share-every-call/vm.xplane.pb",
	    "examples/real-py-function-map/vm.xplane.pb",
	    "tests/cases/ok/tf221-marker-named-step/vm.xplane.pb"};

	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		struct tfd_load_opts coded = {0}, whole = {0};
		struct tfd_capture *a = NULL, *b = NULL;
		struct tfd_err ea = {0}, eb = {0};
		size_t len = 0, named = 0;
		uint8_t *data = slurp(files[i], &len);

		T_TRUE(data != NULL);
		whole.keep_other = true;
		T_OK(tfd_capture_load_mem(data, len, "h.xplane.pb", &coded, &a, &ea), &ea);
		T_OK(tfd_capture_load_mem(data, len, "h.xplane.pb", &whole, &b, &eb), &eb);
		if (a && b) {
			const struct tfd_host *x = &a->hosts[0];

			T_TRUE(x->exec_sums && x->exec_sums->coded);
			T_TRUE(x->nfn_sums > 0);
			for (size_t k = 0; k < x->npy_ops; k++)
				named += x->py_ops[k].fn != 0;
			T_EQ_U64(named, x->npy_ops);
			same_sums(t, files[i], x, &b->hosts[0]);
		}
		tfd_capture_free(a);
		tfd_capture_free(b);
		free(data);
	}
}

/* An event of a line built by seam_line(). */
static void seam_event(Tfdpb__XLine *ln, Tfdpb__XEvent *ev, Tfdpb__XStat *st, uint64_t meta,
		       int64_t start_ns, int64_t dur_ns, int64_t id)
{
	Tfdpb__XEvent e = TFDPB__XEVENT__INIT;
	Tfdpb__XStat x = TFDPB__XSTAT__INIT;

	e.metadata_id = meta;
	e.data_case = TFDPB__XEVENT__DATA_OFFSET_PS;
	e.offset_ps = start_ns * 1000;
	e.duration_ps = dur_ns * 1000;
	if (id >= 0) {
		x.metadata_id = 1; /* "id" */
		x.value_case = TFDPB__XSTAT__VALUE_INT64_VALUE;
		x.int64_value = id;
		*st = x;
		e.n_stats = 1;
	}
	ev[ln->n_events] = e;
	ln->n_events++;
}

/* The event names of seams_carry_line_state(), by metadata id - 1. */
static const char *const seam_names[] = {"SessionRun",
					 "IteratorGetNextOp::DoCompute",
					 "Filler",
					 "Iterator::Model",
					 "InstantiatedCapturedFunction::Run",
					 "map/mul:Mul",
					 "map/add:AddV2",
					 "map/py:EagerPyFunc"};
#define SEAM_TYPES 32 /* then "aJ:TypeJ" and "bJ:TypeJ", J < SEAM_TYPES */

/* A line read in parts starts without what the parts before it left open,
 * which reading it whole carries: a GetNext op's run waiting for its
 * iterator call (a TF1 session's runs, every third an evaluation's, read
 * by another iterator: dropped as such only when its GetNext is known to
 * read it), and a dataset function's scope, its ops (nested, Python
 * ones) counted in it, until an event out of time order closes it (an
 * op's or not: every third scope). Nearly every cut lands in one: 18-30
 * other events between each GetNext and its iterator call, an op holding
 * the others in each scope. A scope's last op and the next one's first
 * are of a type of their own (two names): the host's first name of a type
 * is the first op's in line order, so the ops a part hands back go before
 * its own. */
static void seams_carry_line_state(struct t *t)
{
	enum { RUNS = 60, FILL = 30, SCOPES = 2 * SEAM_TYPES, PAIRS = 8 };
	enum { NMETA = 8 + 4 * SEAM_TYPES };
	enum { N0 = RUNS * (3 + FILL), N1 = SCOPES * (2 + 2 * PAIRS + 2) };
	char path[] = "/tmp/tfd-unit-seams-XXXXXX";
	Tfdpb__XPlane pl = TFDPB__XPLANE__INIT;
	Tfdpb__XLine ln[2] = {TFDPB__XLINE__INIT, TFDPB__XLINE__INIT}, *lns[2] = {&ln[0], &ln[1]};
	Tfdpb__XEvent *ev0 = xcalloc(N0, sizeof(*ev0)), *ev1 = xcalloc(N1, sizeof(*ev1));
	Tfdpb__XEvent **evs0 = xcalloc(N0, sizeof(*evs0)), **evs1 = xcalloc(N1, sizeof(*evs1));
	Tfdpb__XStat *st = xcalloc(N0, sizeof(*st));
	Tfdpb__XStat **sts = xcalloc(N0, sizeof(*sts));
	Tfdpb__XEventMetadata em[NMETA];
	Tfdpb__XPlane__EventMetadataEntry eme[NMETA], *emes[NMETA];
	Tfdpb__XStatMetadata sm = TFDPB__XSTAT_METADATA__INIT;
	Tfdpb__XPlane__StatMetadataEntry sme = TFDPB__XPLANE__STAT_METADATA_ENTRY__INIT,
					 *smes[1] = {&sme};
	char tnames[4 * SEAM_TYPES][24];
	const char *names[NMETA];
	uint8_t *out;
	size_t len;
	int64_t at = 1000;
	int fd;

	for (int i = 0; i < NMETA; i++) {
		if (i >= 8)
			snprintf(tnames[i - 8], sizeof(tnames[i - 8]), "%c%d:Type%d",
				 (i - 8) % 2 ? 'b' : 'a', (i - 8) / 2, (i - 8) / 2);
		names[i] = i < 8 ? seam_names[i] : tnames[i - 8];
	}
	event_metas(em, eme, emes, names, NMETA);
	sm.id = 1;
	sm.name = "id";
	sme.key = 1;
	sme.value = &sm;
	ln[0].id = 1;
	ln[0].name = "python3";
	ln[0].events = evs0;
	for (int r = 0; r < RUNS; r++) {
		int64_t t0 = at;

		seam_event(&ln[0], ev0, &st[ln[0].n_events], 1, t0, 1000, 5000 + r);
		seam_event(&ln[0], ev0, &st[ln[0].n_events], 2, t0 + 1, 900, 5000 + r);
		/* (as many as the cuts fall anywhere in a run) */
		for (int f = 0; f < FILL - (r * 7) % 13; f++)
			seam_event(&ln[0], ev0, &st[ln[0].n_events], 3, t0 + 2 + 10 * f, 5, -1);
		/* the evaluation's iterator every third run, between the
		 * training's first and last */
		seam_event(&ln[0], ev0, &st[ln[0].n_events], 4, t0 + 2 + 10 * FILL, 100,
			   r % 3 == 1 ? 222 : 111);
		at += 2000;
	}
	for (size_t k = 0; k < ln[0].n_events; k++) {
		evs0[k] = &ev0[k];
		if (ev0[k].n_stats) {
			sts[k] = &st[k];
			ev0[k].stats = &sts[k];
		}
	}
	ln[1].id = 2;
	ln[1].name = "tf_data_private_threadpool";
	ln[1].events = evs1;
	for (int s = 0; s < SCOPES; s++) {
		int64_t t0 = at;
		/* the pair's type: the scope's last op or the next one's first */
		uint64_t pair = 9 + (uint64_t)(s / 2) * 2 + (uint64_t)(s % 2);

		seam_event(&ln[1], ev1, NULL, 5, t0, 10 * (PAIRS + 3), -1);
		if (s % 2)
			seam_event(&ln[1], ev1, NULL, pair, t0 + 1, 5, -1);
		/* one op holding the others: nearly every cut falls inside it */
		seam_event(&ln[1], ev1, NULL, 6, t0 + 5, 10 * PAIRS + 10, -1);
		for (int k = 0; k < PAIRS; k++)
			seam_event(&ln[1], ev1, NULL, 7, t0 + 12 + 10 * k, 3, -1);
		/* every third scope: an event of no op out of time order, which
		 * closes the scope (the ops after it are not counted) */
		if (s % 3 == 2)
			seam_event(&ln[1], ev1, NULL, 3, t0 + 3, 1, -1);
		seam_event(&ln[1], ev1, NULL, 8, t0 + 10 + 10 * PAIRS, 4, -1);
		if (!(s % 2))
			seam_event(&ln[1], ev1, NULL, pair, t0 + 16 + 10 * PAIRS, 3, -1);
		at += 20 * (PAIRS + 3);
	}
	for (size_t k = 0; k < ln[1].n_events; k++)
		evs1[k] = &ev1[k];
	pl.n_event_metadata = NMETA;
	pl.event_metadata = emes;
	pl.n_stat_metadata = 1;
	pl.stat_metadata = smes;
	out = pack_host_plane(&pl, lns, 2, &len);
	T_TRUE((fd = mkstemp(path)) >= 0);
	T_TRUE(write(fd, out, len) == (ssize_t)len);
	close(fd);
	check_blocks(t, path, 0);
	{
		struct tfd_capture *cap = NULL;
		struct tfd_err err = {0};

		/* what the plane holds, read whole */
		T_OK(tfd_capture_load_mem(out, len, "s.xplane.pb", NULL, &cap, &err), &err);
		if (cap) {
			T_EQ_U64(cap->hosts[0].eval_runs, RUNS / 3);
			T_EQ_U64(cap->hosts[0].nfn_op_types, 3 + SEAM_TYPES);
		}
		tfd_capture_free(cap);
	}
	unlink(path);
	free(out);
	free(ev0);
	free(ev1);
	free(evs0);
	free(evs1);
	free(st);
	free(sts);
}

/* One function scope of `ops` ops, each `outer`-th (0: none) an op holding
 * the outer - 1 after it (a Mul and a Python op in turn), read in blocks as a line is and whole:
 * the same sums. Returns the whole reading's capture. */
static struct tfd_capture *long_scope(struct t *t, int ops, int outer)
{
	enum { NMETA = 8 };
	char path[] = "/tmp/tfd-unit-seams-long-XXXXXX";
	Tfdpb__XPlane pl = TFDPB__XPLANE__INIT;
	Tfdpb__XLine ln = TFDPB__XLINE__INIT, *lns[1] = {&ln};
	Tfdpb__XEvent *ev = xcalloc((size_t)ops + 1, sizeof(*ev));
	Tfdpb__XEvent **evs = xcalloc((size_t)ops + 1, sizeof(*evs));
	Tfdpb__XEventMetadata em[NMETA];
	Tfdpb__XPlane__EventMetadataEntry eme[NMETA], *emes[NMETA];
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};
	uint8_t *out;
	size_t len;
	int fd;

	event_metas(em, eme, emes, seam_names, NMETA);
	ln.id = 1;
	ln.name = "tf_data_private_threadpool";
	ln.events = evs;
	seam_event(&ln, ev, NULL, 5, 1000, 10 * (int64_t)ops + 10, -1);
	for (int k = 0; k < ops; k++)
		if (outer && k % outer == 0) /* of two types in turn */
			seam_event(&ln, ev, NULL, k / outer % 2 ? 8 : 6, 1005 + 10 * k,
				   10 * (int64_t)outer - 5, -1);
		else
			seam_event(&ln, ev, NULL, outer ? 7 : 6, 1005 + 10 * k, 7, -1);
	for (size_t k = 0; k < ln.n_events; k++)
		evs[k] = &ev[k];
	pl.n_event_metadata = NMETA;
	pl.event_metadata = emes;
	out = pack_host_plane(&pl, lns, 1, &len);
	T_TRUE((fd = mkstemp(path)) >= 0);
	T_TRUE(write(fd, out, len) == (ssize_t)len);
	close(fd);
	check_blocks(t, path, 0);
	T_OK(tfd_capture_load_mem(out, len, "s.xplane.pb", NULL, &cap, &err), &err);
	unlink(path);
	free(out);
	free(ev);
	free(evs);
	return cap;
}

/* A function scope holding more ops than a part keeps for the scope before
 * it (LEAD_MAX, 1,024): the plane is read again on one thread, and every
 * op is counted. One of fewer ops spanning many parts, its ops nested:
 * a part ends inside an op that a part's kept ops opened, and the ops of
 * the parts after it are nested in that one. */
static void seams_long_scope(struct t *t)
{
	struct tfd_capture *cap = long_scope(t, 100000, 0);

	if (cap && cap->hosts[0].nfn_op_types == 1) {
		T_EQ_U64(cap->hosts[0].fn_op_types[0].count, 100000);
		T_EQ_I64(cap->hosts[0].fn_op_types[0].self_ns, 700000);
	} else {
		T_FAILF("long scope: %zu op types", cap ? cap->hosts[0].nfn_op_types : 0);
	}
	tfd_capture_free(cap);
	cap = long_scope(t, 3000, 100);
	T_TRUE(cap && cap->hosts[0].nfn_op_types == 3);
	tfd_capture_free(cap);
}

/* An iterator's events repeat their stats byte for byte, and the reader
 * takes what it made of them the last time (struct stats_seen): events of
 * two names with the same stats, the same stats again, stats differing
 * in one byte (a group_id, a parameter, a parent_id) or in length, give
 * the capture the general parser gives, group_id steps and all. */
static void repeated_stats_read_as_parsed(struct t *t)
{
	enum { N = 60 };
	Tfdpb__XPlane pl = TFDPB__XPLANE__INIT;
	Tfdpb__XLine ln = TFDPB__XLINE__INIT, *lns[1] = {&ln};
	Tfdpb__XEvent ev[N], *evs[N];
	Tfdpb__XStat st[N][4], *sts[N][4];
	Tfdpb__XEventMetadata em[65];
	Tfdpb__XStatMetadata sm[4];
	Tfdpb__XPlane__EventMetadataEntry eme[65], *emes[65];
	char dummy[65][16];
	const char *enames[65];
	Tfdpb__XPlane__StatMetadataEntry sme[4], *smes[4];
	static const char *const snames[4] = {"id", "parent_id", "group_id", "parallelism"};
	struct tfd_load_opts plain = {0}, two = {0};
	struct tfd_capture *a = NULL, *b = NULL;
	struct tfd_err ea = {0}, eb = {0};
	uint8_t *out;
	size_t len;

	/* the two iterators' names 64 apart: one slot for both */
	for (int i = 0; i < 65; i++) {
		snprintf(dummy[i], sizeof(dummy[i]), "Op%d", i);
		enames[i] = i == 0    ? "Iterator::Model::Map"
			    : i == 64 ? "Iterator::Model"
				      : dummy[i];
	}
	event_metas(em, eme, emes, enames, 65);
	for (int i = 0; i < 4; i++) {
		Tfdpb__XStatMetadata m = TFDPB__XSTAT_METADATA__INIT;
		Tfdpb__XPlane__StatMetadataEntry e = TFDPB__XPLANE__STAT_METADATA_ENTRY__INIT;

		m.id = i + 1;
		m.name = (char *)snames[i];
		sm[i] = m;
		e.key = i + 1;
		e.value = &sm[i];
		sme[i] = e;
		smes[i] = &sme[i];
	}
	for (int i = 0; i < N; i++) {
		Tfdpb__XEvent e = TFDPB__XEVENT__INIT;
		/* id, parent_id, group_id, parallelism: each event's values */
		int64_t v[4] = {i % 7 == 6 ? 11 : 10, i % 5 == 3 ? 21 : 20, i / 10 + 1, i % 3 + 1};
		size_t n = i % 4 == 2 ? 4 : 3;

		e.metadata_id = i % 9 == 8 ? 65 : 1;
		e.data_case = TFDPB__XEVENT__DATA_OFFSET_PS;
		e.offset_ps = (int64_t)i * 2000000;
		e.duration_ps = 1000000 + (i % 2) * 500000;
		for (size_t k = 0; k < n; k++) {
			Tfdpb__XStat x = TFDPB__XSTAT__INIT;

			x.metadata_id = k + 1;
			x.value_case = TFDPB__XSTAT__VALUE_INT64_VALUE;
			x.int64_value = v[k];
			st[i][k] = x;
			sts[i][k] = &st[i][k];
		}
		e.n_stats = n;
		e.stats = sts[i];
		ev[i] = e;
		evs[i] = &ev[i];
	}
	ln.id = 1;
	ln.name = "tf_data_iterator_get_next";
	ln.n_events = N;
	ln.events = evs;
	pl.n_event_metadata = 65;
	pl.event_metadata = emes;
	pl.n_stat_metadata = 4;
	pl.stat_metadata = smes;
	out = pack_host_plane(&pl, lns, 1, &len);
	two.xspace_two_walks = true;
	T_OK(tfd_capture_load_mem(out, len, "r.xplane.pb", &plain, &a, &ea), &ea);
	T_OK(tfd_capture_load_mem(out, len, "r.xplane.pb", &two, &b, &eb), &eb);
	if (a && b) {
		T_EQ_U64(a->hosts[0].niterators, N);
		T_TRUE(a->hosts[0].nsteps >= 5);
		same_capture(t, "repeated stats", a, b);
	}
	tfd_capture_free(a);
	tfd_capture_free(b);
	free(out);
}

static void blocks_match_lines(struct t *t)
{
	static const char *const specs[] = {
	    "tests/synth/02-tfrecord-parallel-interleave.json", "tests/synth/19-large-ids.json",
	    "tests/synth/23-device-planes.json", "tests/synth/37-pmap-function-not-captured.json",
	    "tests/synth/40-multi-host-source-behind-pmap.json"};
	/* the last: its steps are a marker of another name with `_r`, an
	 * answer the reader notes per name as it reads (the blocks had shared
	 * those notes: a data race, which a ThreadSanitizer build of this
	 * test reports) */
	static const char *const real[] = {
	    "examples/ai-notebook/ai-notebook.xplane.pb",
	    "tests/cases/ok/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb",
	    "tests/cases/ok/tf221-marker-named-step/vm.xplane.pb",
	    /* a GetNext op's run ended by the iterator call after it (TF1's
	     * session runs), Python ops inside dataset functions */
	    "tests/cases/ok/tf221-tf1-eval-every-10/vm.xplane.pb",
	    "tests/cases/ok/tf221-python-share-every-call/vm.xplane.pb"};
	char dir[] = "/tmp/tfd-unit-XXXXXX";

	T_TRUE(mkdtemp(dir) != NULL);
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++)
		check_blocks(t, real[i], 40);
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct tfd_synth_result res;
		struct tfd_err err = {0};
		char out[600];
		DIR *d;
		struct dirent *de;

		snprintf(out, sizeof(out), "%s/%zu", dir, i);
		T_OK(tfd_synth_run(specs[i], out, 1.0, &res, &err), &err);
		T_TRUE((d = opendir(res.run_dir)) != NULL);
		while ((de = readdir(d)))
			if (strstr(de->d_name, ".xplane.pb")) {
				char f[4400];

				snprintf(f, sizeof(f), "%s/%s", res.run_dir, de->d_name);
				check_blocks(t, f, 40);
			}
		closedir(d);
	}
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The synthesized parallel-map capture at this scale, made in dir (a
 * mkdtemp() template) and unpacked: its host plane; *data and *xs are the
 * caller's to free. */
static Tfdpb__XPlane *synth_host_plane(struct t *t, char *dir, double scale, uint8_t **data,
				       size_t *len, Tfdpb__XSpace **xs)
{
	char f[4400] = "";
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	Tfdpb__XPlane *host = NULL;
	DIR *d;
	struct dirent *de;

	*data = NULL;
	*xs = NULL;
	T_TRUE(mkdtemp(dir) != NULL);
	T_OK(tfd_synth_run("tests/synth/04-parallel-map-at-limit.json", dir, scale, &res, &err),
	     &err);
	T_TRUE((d = opendir(res.run_dir)) != NULL);
	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".xplane.pb"))
			snprintf(f, sizeof(f), "%s/%s", res.run_dir, de->d_name);
	if (d)
		closedir(d);
	T_TRUE((*data = slurp(f, len)) != NULL);
	T_TRUE((*xs = tfdpb__xspace__unpack(NULL, *len, *data)) != NULL);
	for (size_t i = 0; i < (*xs)->n_planes; i++)
		if (strcmp((*xs)->planes[i]->name, "/host:CPU") == 0)
			host = (*xs)->planes[i];
	T_TRUE(host != NULL);
	return host;
}

static void synth_host_plane_free(const char *dir, uint8_t *data, Tfdpb__XSpace *xs)
{
	if (xs)
		tfdpb__xspace__free_unpacked(xs, NULL);
	free(data);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The device breakdown of an XSpace capture in memory (h->dev copied
 * whole, its steps into *steps: the caller frees them). */
static struct tfd_device device_of(struct t *t, const uint8_t *p, size_t len,
				   struct tfd_dev_step **steps)
{
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};
	struct tfd_device d;

	T_OK(tfd_capture_load_mem(p, len, "gpu.xplane.pb", NULL, &cap, &err), &err);
	d = cap->hosts[0].dev;
	*steps = xcalloc(d.nsteps + 1, sizeof(**steps));
	memcpy(*steps, d.steps, d.nsteps * sizeof(**steps));
	tfd_capture_free(cap);
	return d;
}

/* A device line out of time order reads the same as in order: a few
 * events swapped (the reordering window), every event reversed (more than
 * the window holds: read by blocks, each sorted), and shuffled (blocks
 * overlap: the line is sorted whole). */
static void device_line_order(struct t *t)
{
	char dir[] = "/tmp/tfd-unit-XXXXXX", f[4400] = "";
	struct tfd_synth_result res;
	struct tfd_err err = {0};
	Tfdpb__XSpace *xs = NULL;
	Tfdpb__XLine *kl = NULL;
	uint8_t *data = NULL, *out = NULL;
	size_t len = 0, olen;
	struct tfd_dev_step *s0 = NULL, *s1 = NULL;
	struct tfd_device d0, d1;
	DIR *d;
	struct dirent *de;

	T_TRUE(mkdtemp(dir) != NULL);
	T_OK(tfd_synth_run("tests/bench/device-heavy.json", dir, 0.2, &res, &err), &err);
	T_TRUE((d = opendir(res.run_dir)) != NULL);
	while (d && (de = readdir(d)))
		if (strstr(de->d_name, ".xplane.pb"))
			snprintf(f, sizeof(f), "%s/%s", res.run_dir, de->d_name);
	if (d)
		closedir(d);
	T_TRUE((data = slurp(f, &len)) != NULL);
	T_TRUE((xs = tfdpb__xspace__unpack(NULL, len, data)) != NULL);
	for (size_t i = 0; i < xs->n_planes; i++)
		for (size_t k = 0; k < xs->planes[i]->n_lines; k++)
			if (strstr(xs->planes[i]->lines[k]->name, "(Compute)"))
				kl = xs->planes[i]->lines[k];
	T_TRUE(kl && kl->n_events > 3 * 4096);
	d0 = device_of(t, data, len, &s0);
	T_TRUE(d0.read && d0.nsteps > 0);
	for (int round = 0; round < 3; round++) {
		uint64_t rng = 0x9e3779b97f4a7c15u;

		if (round == 0) /* neighbours swapped */
			for (size_t i = 0; i + 1 < kl->n_events; i += 2) {
				Tfdpb__XEvent *x = kl->events[i];

				kl->events[i] = kl->events[i + 1];
				kl->events[i + 1] = x;
			}
		else if (round == 1) /* reversed (after the swaps) */
			for (size_t i = 0, j = kl->n_events - 1; i < j; i++, j--) {
				Tfdpb__XEvent *x = kl->events[i];

				kl->events[i] = kl->events[j];
				kl->events[j] = x;
			}
		else /* shuffled */
			for (size_t i = kl->n_events - 1; i > 0; i--) {
				size_t j;
				Tfdpb__XEvent *x = kl->events[i];

				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				j = (size_t)(rng % (i + 1));
				kl->events[i] = kl->events[j];
				kl->events[j] = x;
			}
		olen = tfdpb__xspace__get_packed_size(xs);
		out = xmalloc(olen);
		tfdpb__xspace__pack(xs, out);
		d1 = device_of(t, out, olen, &s1);
		free(out);
		T_EQ_U64(d1.nsteps, d0.nsteps);
		T_EQ_U64(d1.h2d_bytes, d0.h2d_bytes);
		for (int k = 0; k < TFD_DEV__COUNT; k++) {
			T_EQ_U64(d1.kind_n[k], d0.kind_n[k]);
			T_EQ_I64(d1.kind_ns[k], d0.kind_ns[k]);
		}
		for (size_t i = 0; i < d0.nsteps; i++)
			for (int k = 0; k < TFD_DEV__COUNT; k++)
				if (s1[i].owned[k] != s0[i].owned[k])
					T_FAILF("round %d, step %zu, kind %d: %" PRId64
						", in order %" PRId64,
						round, i, k, s1[i].owned[k], s0[i].owned[k]);
		free(s1);
		s1 = NULL;
	}
	free(s0);
	tfdpb__xspace__free_unpacked(xs, NULL);
	free(data);
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A host plane read in blocks that leaves its iterator, Produce and
 * Consume events in the file: where a long line's parts meet, the order
 * of its events is judged from what each part's read added, the events
 * left included, and the finish sorts what came out of order. A tf.data
 * line as written (in order), with its halves swapped (each part in
 * order, a seam not), and with two neighbours swapped (a part not in
 * order) reads the same events as a plain read line by line. */
static void left_in_file_seams(struct t *t)
{
	char dir[] = "/tmp/tfd-unit-XXXXXX", path[64];
	const char *paths[1] = {path};
	Tfdpb__XSpace *xs = NULL;
	Tfdpb__XPlane *host;
	Tfdpb__XLine *ln = NULL;
	uint8_t *data = NULL, *out;
	size_t len = 0;
	struct tfd_err err = {0};

	host = synth_host_plane(t, dir, 20.0, &data, &len, &xs);
	snprintf(path, sizeof(path), "%s/seams.xplane.pb", dir);
	for (size_t i = 0; host && i < host->n_lines; i++)
		if (strncmp(host->lines[i]->name, "tf_data", 7) == 0 &&
		    (!ln || host->lines[i]->n_events > ln->n_events))
			ln = host->lines[i];
	T_TRUE(ln && ln->n_events > 2000);
	for (int round = 0; ln && ln->n_events > 2000 && round < 3; round++) {
		struct tfd_load_opts lo = {0}, lean;
		struct tfd_capture *cp = NULL, *cl = NULL;
		size_t n = ln->n_events, left = 0, differ = 0;
		FILE *f;

		if (round == 1) { /* the halves swapped */
			Tfdpb__XEvent **v = xmalloc(n * sizeof(*v));

			for (size_t i = 0; i < n; i++)
				v[i] = ln->events[(i + n / 2) % n];
			memcpy(ln->events, v, n * sizeof(*v));
			free(v);
		} else if (round == 2) { /* back, then two neighbours swapped */
			Tfdpb__XEvent **v = xmalloc(n * sizeof(*v)), *x;

			for (size_t i = 0; i < n; i++)
				v[(i + n / 2) % n] = ln->events[i];
			memcpy(ln->events, v, n * sizeof(*v));
			free(v);
			x = ln->events[n / 3];
			ln->events[n / 3] = ln->events[n / 3 + 1];
			ln->events[n / 3 + 1] = x;
		}
		len = tfdpb__xspace__get_packed_size(xs);
		out = xmalloc(len);
		tfdpb__xspace__pack(xs, out);
		T_TRUE((f = fopen(path, "wb")) != NULL);
		if (f) {
			T_TRUE(fwrite(out, 1, len, f) == len);
			fclose(f);
		}
		free(out);
		lo.jobs = 1;
		T_OK(tfd_capture_load(paths, 1, &lo, &cp, &err), &err);
		lo.jobs = 3;
		lo.block_bytes = (size_t)16 << 10;
		lean = tfd_load_opts_defer(&lo, true);
		setenv("TFDOCTOR_SOURCE_LEAVE", "1", 1);
		T_OK(tfd_capture_load(paths, 1, &lean, &cl, &err), &err);
		unsetenv("TFDOCTOR_SOURCE_LEAVE");
		for (size_t i = 0; cp && cl && i < cp->hosts[0].nthreads; i++) {
			const struct tfd_host *hp = &cp->hosts[0], *hl = &cl->hosts[0];
			struct tfd_event *vp = tfd_thread_unpack(hp, &hp->threads[i]);
			struct tfd_event *vl = tfd_thread_unpack(hl, &hl->threads[i]);

			T_EQ_U64(hl->threads[i].nevents, hp->threads[i].nevents);
			for (size_t j = 0; j < hp->threads[i].nevents && j < hl->threads[i].nevents;
			     j++)
				differ += !same_ev(&vp[j], &vl[j]);
			left += hl->threads[i].nfile;
			free(vp);
			free(vl);
		}
		if (differ || !left)
			T_FAILF(
			    "round %d: %zu events differ from a plain read, %zu left in the file",
			    round, differ, left);
		tfd_capture_free(cp);
		tfd_capture_free(cl);
	}
	synth_host_plane_free(dir, data, xs);
}

/* The pre-pass reads the tf.data lines on several threads, longest first:
 * with two of them broken, the error names the first in the file, as one
 * thread reading them in order does (a synthesized parallel map's lines,
 * two given a timestamp out of range, which the pre-pass checks). */
static void prepass_errors_in_line_order(struct t *t)
{
	char dir[] = "/tmp/tfd-unit-XXXXXX", want[64];
	Tfdpb__XSpace *xs = NULL;
	Tfdpb__XPlane *host;
	size_t len = 0, first = 0, last = 0, ntf = 0;
	uint8_t *data = NULL, *out = NULL;

	host = synth_host_plane(t, dir, 1.0, &data, &len, &xs);
	for (size_t i = 0; i < host->n_lines; i++)
		if (strncmp(host->lines[i]->name, "tf_data", 7) == 0 && host->lines[i]->n_events) {
			if (!ntf++)
				first = i;
			last = i;
		}
	T_TRUE(ntf >= 3);
	if (ntf >= 3) {
		int jobs[] = {1, 2, 3, 8};

		host->lines[first]->timestamp_ns = INT64_MAX / 2;
		host->lines[last]->timestamp_ns = INT64_MAX / 2;
		len = tfdpb__xspace__get_packed_size(xs);
		out = xmalloc(len);
		tfdpb__xspace__pack(xs, out);
		snprintf(want, sizeof(want), "line %zu:", first);
		for (size_t j = 0; j < sizeof(jobs) / sizeof(jobs[0]); j++) {
			struct tfd_load_opts o = {0};
			struct tfd_capture *cap = NULL;
			struct tfd_err e = {0};

			o.jobs = jobs[j];
			T_TRUE(tfd_capture_load_mem(out, len, "h.xplane.pb", &o, &cap, &e) !=
			       TFD_OK);
			if (!strstr(e.msg, want) || !strstr(e.msg, "timestamp_ns"))
				T_FAILF("%d threads: '%s', not the first broken line (%s)", jobs[j],
					e.msg, want);
			tfd_capture_free(cap);
		}
	}
	free(out);
	synth_host_plane_free(dir, data, xs);
}

/* An iterator's parameters are read from each of its events (the
 * reader remembers the signature each (signature, stat, value) gave): on a
 * synthesized capture whose iterator events' parameters change from call to
 * call, as int64 and as uint64 stats (the same bits read as -1 and as
 * 2^64-1) and as strings (short ones cached, differing in their first 8
 * bytes or after them, and long ones), reading line by line and in blocks
 * on three threads gives every event the parameters the general reading
 * (xspace_two_walks, no cache) gives it */
static void params_follow_each_event(struct t *t)
{
	char dir[] = "/tmp/tfd-unit-XXXXXX";
	Tfdpb__XSpace *xs = NULL;
	Tfdpb__XPlane *host;
	size_t len = 0, changed = 0, nstr = 0;
	uint8_t *data = NULL, *out = NULL;

	host = synth_host_plane(t, dir, 0.5, &data, &len, &xs);
	for (size_t l = 0; l < host->n_lines; l++)
		for (size_t k = 0; k < host->lines[l]->n_events; k++) {
			Tfdpb__XEvent *ev = host->lines[l]->events[k];
			const char *name = NULL;

			for (size_t m = 0; m < host->n_event_metadata; m++)
				if (host->event_metadata[m]->key == ev->metadata_id)
					name = host->event_metadata[m]->value->name;
			if (!name || strncmp(name, "Iterator::", 10) != 0)
				continue;
			for (size_t s = 0; s < ev->n_stats; s++) {
				Tfdpb__XStat *st = ev->stats[s];
				const char *sname = NULL;

				for (size_t m = 0; m < host->n_stat_metadata; m++)
					if (host->stat_metadata[m]->key == st->metadata_id)
						sname = host->stat_metadata[m]->value->name;
				if (!sname || tfd_stat_of(sname) != TFD_STAT_PARAM)
					continue;
				if (st->value_case == TFDPB__XSTAT__VALUE_STR_VALUE) {
					/* short strings (in 8 bytes and after) and long */
					static const char *const strs[] = {"true",
									   "false",
									   "12345678a",
									   "12345678b",
									   "0123456789abcdefXYZ",
									   "0123456789abcdefXYW"};

					free(st->str_value);
					st->str_value = xstrdup(strs[nstr++ % 6]);
					continue;
				}
				if (st->value_case != TFDPB__XSTAT__VALUE_INT64_VALUE &&
				    st->value_case != TFDPB__XSTAT__VALUE_UINT64_VALUE)
					continue;
				/* 1 2 2^64-1 1 2 2^64-1 ... three as int64 (the
				 * last reads -1), three as uint64 */
				uint64_t v = changed % 3 == 2 ? UINT64_MAX : changed % 3 + 1;

				if (changed / 3 % 2) {
					st->value_case = TFDPB__XSTAT__VALUE_UINT64_VALUE;
					st->uint64_value = v;
				} else {
					st->value_case = TFDPB__XSTAT__VALUE_INT64_VALUE;
					st->int64_value = (int64_t)v;
				}
				changed++;
			}
		}
	T_TRUE(changed > 100 && nstr > 100);
	if (changed > 100) {
		struct tfd_load_opts ref = {0}, one = {0}, three = {0};
		struct tfd_capture *a = NULL, *b = NULL, *c = NULL;
		struct tfd_err ea = {0}, eb = {0}, ec = {0};

		len = tfdpb__xspace__get_packed_size(xs);
		out = xmalloc(len);
		tfdpb__xspace__pack(xs, out);
		ref.xspace_two_walks = true;
		ref.jobs = one.jobs = 1;
		three.jobs = 3;
		three.block_bytes = 1;
		T_OK(tfd_capture_load_mem(out, len, "h.xplane.pb", &ref, &a, &ea), &ea);
		T_OK(tfd_capture_load_mem(out, len, "h.xplane.pb", &one, &b, &eb), &eb);
		T_OK(tfd_capture_load_mem(out, len, "h.xplane.pb", &three, &c, &ec), &ec);
		if (a && b && c) {
			same_capture(t, "line by line", a, b);
			same_capture(t, "in blocks", a, c);
		}
		tfd_capture_free(a);
		tfd_capture_free(b);
		tfd_capture_free(c);
	}
	free(out);
	synth_host_plane_free(dir, data, xs);
}

/* Steps grow by doubling, and each group keeps the span of its events: a
 * capture with many steps, noted in two rounds, the second widening them */
static void many_steps_noted(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");

	for (int round = 0; round < 2; round++)
		for (int64_t g = 0; g < 5000; g++)
			tfd_host_note(cap, h, true, 1000 + g, g * 10 - round, g * 10 + 5 + round);
	tfd_host_note(cap, h, false, 0, -7, 3);
	T_EQ_I64(h->nsteps, 5000);
	for (size_t i = 0; i < h->nsteps; i++) {
		T_EQ_I64(h->steps[i].group_id, 1000 + (int64_t)i);
		T_EQ_I64(h->steps[i].start_ns, (int64_t)i * 10 - 1);
		T_EQ_I64(h->steps[i].end_ns, (int64_t)i * 10 + 6);
	}
	T_EQ_I64(h->span_start_ns, -7);
	T_EQ_I64(h->span_end_ns, 49996);
	tfd_capture_free(cap);
}

/* The finish sorts a thread only when its events came out of order: as
 * added one by one, as a part moved into an empty thread, and as parts
 * appended to a thread (each part in order, the two interleaved) */
static void finish_sorts_what_came_out_of_order(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new(), *p1 = tfd_capture_new(),
			   *p2 = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_host *h1 = tfd_capture_add_host(p1, "h"), *h2 = tfd_capture_add_host(p2, "h");
	uint32_t a = tfd_host_thread(cap, h, 1, "a"), b1 = tfd_host_thread(p1, h1, 2, "b"),
		 b2 = tfd_host_thread(p2, h2, 2, "b"), c1 = tfd_host_thread(p1, h1, 3, "c");
	static const int64_t in_a[] = {50, 10, 30, 20}, in_b1[] = {10, 30, 50}, in_b2[] = {20, 40},
			     in_c1[] = {9, 7};
	struct tfd_err err = {0};

	for (size_t i = 0; i < 4; i++)
		tfd_host_add_event(cap, h, a, "x", in_a[i], 1);
	for (size_t i = 0; i < 3; i++)
		tfd_host_add_event(p1, h1, b1, "x", in_b1[i], 1);
	for (size_t i = 0; i < 2; i++) {
		tfd_host_add_event(p2, h2, b2, "x", in_b2[i], 1);
		tfd_host_add_event(p1, h1, c1, "x", in_c1[i], 1);
	}
	tfd_host_absorb(cap, h, p1);
	tfd_host_absorb(cap, h, p2);
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_I64(h->nthreads, 3);
	for (size_t k = 0; k < h->nthreads; k++) {
		const struct tfd_thread *th = &h->threads[k];

		struct tfd_event *v = tfd_thread_unpack(h, th);

		T_TRUE(th->nevents >= 2);
		for (size_t e = 1; e < th->nevents; e++)
			T_TRUE(v[e - 1].start_ns <= v[e].start_ns);
		free(v);
	}
	T_EQ_I64(h->threads[1].nevents, 5);
	tfd_capture_free(p1);
	tfd_capture_free(p2);
	tfd_capture_free(cap);
}

/* A part's events keep their signatures when moved into a host: 500
 * distinct ones (name, parent_id, a parameter), in an order that revisits
 * them, more than the absorb's cache of recent moves holds */
static void absorb_keeps_signatures(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new(), *part = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h"), *ph = tfd_capture_add_host(part, "h");
	uint32_t th = tfd_host_thread(part, ph, 1, "w");
	static const char *const names[] = {"Iterator::Model::Map", "Iterator::Model::Prefetch",
					    "PrefetchProduce"};
	char val[32];

	for (int i = 0; i < 3000; i++) {
		int k = (i * 7919) % 500; /* each of 500 signatures, six times, scattered */
		struct tfd_event *e =
		    tfd_host_add_event(part, ph, th, names[k % 3], (int64_t)i * 10, 5);

		tfd_event_set_stat_int(part, e, "parent_id", 1000 + k);
		snprintf(val, sizeof(val), "%d", k % 7);
		tfd_event_set_stat_str(part, e, "buffer_limit", val);
	}
	tfd_host_absorb(cap, h, part);
	T_EQ_I64(h->nthreads, 1);
	T_EQ_I64(h->threads[0].nevents, 3000);
	struct tfd_event *v = h->nthreads ? tfd_thread_unpack(h, &h->threads[0]) : NULL;

	for (int i = 0; i < 3000 && v; i++) {
		const struct tfd_event *e = &v[i];
		int k = (i * 7919) % 500;

		T_EQ_STR(e->sig->name, names[k % 3]);
		T_EQ_U64(e->sig->parent_id, (uint64_t)(1000 + k));
		snprintf(val, sizeof(val), "%d", k % 7);
		if (e->kind == TFD_EV_ITERATOR)
			T_EQ_STR(tfd_event_param(e, "buffer_limit"), val);
		else
			T_TRUE(tfd_event_param(e, "buffer_limit") == NULL);
	}
	free(v);
	tfd_capture_free(part);
	tfd_capture_free(cap);
}

/* The largest capture file among paths, as huge pages are chosen by:
 * files given themselves, captures found in directories (a gzipped one
 * counting 8 times its size, a link to one its target's), not other
 * files there. */
static void largest_capture_file(struct t *t)
{
	char dir[] = "/tmp/tfd-unit-XXXXXX", p[1200], q[1200];
	static const struct {
		const char *name;
		size_t size;
	} files[] = {{"a.xplane.pb", 100},
		     {"sub/b.trace.json.gz", 30},
		     {"sub/notes.txt", 5000},
		     {"sub/deep/c.trace.json", 150}};

	T_TRUE(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/sub", dir);
	T_TRUE(mkdir(p, 0700) == 0);
	snprintf(p, sizeof(p), "%s/sub/deep", dir);
	T_TRUE(mkdir(p, 0700) == 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		FILE *f;

		snprintf(p, sizeof(p), "%s/%s", dir, files[i].name);
		T_TRUE((f = fopen(p, "wb")) != NULL);
		for (size_t k = 0; f && k < files[i].size; k++)
			fputc('x', f);
		if (f)
			fclose(f);
	}
	{
		const char *one[] = {dir};
		char sub[1200], txt[1200];
		const char *two[2] = {sub, txt};

		snprintf(sub, sizeof(sub), "%s/sub", dir);
		snprintf(txt, sizeof(txt), "%s/sub/notes.txt", dir);
		T_EQ_U64(tfd_capture_largest(one, 1), 240); /* b.trace.json.gz */
		T_EQ_U64(tfd_capture_largest(two, 1), 240);
		T_EQ_U64(tfd_capture_largest(two + 1, 1), 5000); /* named itself */
		snprintf(q, sizeof(q), "%s/big.xplane.pb", dir);
		T_TRUE(symlink("sub/notes.txt", q) == 0);
		T_EQ_U64(tfd_capture_largest(one, 1), 5000); /* a link's target */
		T_EQ_U64(tfd_capture_largest(NULL, 0), 0);
		one[0] = "/nonexistent/tfd";
		T_EQ_U64(tfd_capture_largest(one, 1), 0);
	}
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A mapped file is cut into windows the kernel keeps apart (a fault maps
 * at most the window's part of a page-cache folio), the bytes the same;
 * one of TFD_MAP_SPLIT_BELOW or more is left whole. */
static void file_maps_are_windows(struct t *t)
{
	char path[] = "/tmp/tfd-unit-XXXXXX", line[512];
	size_t len = 8 * TFD_MAP_WINDOW + TFD_MAP_WINDOW / 2, n, found = 0, sum = 0;
	int fd = mkstemp(path);
	uint8_t *m, *buf = xmalloc(len);
	FILE *maps;

	T_TRUE(fd >= 0);
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 131 >> 7);
	T_TRUE(write(fd, buf, len) == (ssize_t)len);
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	unlink(path);
	T_TRUE(m != MAP_FAILED);
	if (m == MAP_FAILED) {
		free(buf);
		return;
	}
	n = tfd_pages_split_map(m, len);
	T_EQ_U64(n, 9);
	T_TRUE((maps = fopen("/proc/self/maps", "r")) != NULL);
	while (maps && fgets(line, sizeof(line), maps)) {
		unsigned long a, b;

		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a >= (uintptr_t)m &&
		    b <= (uintptr_t)m + len) {
			found++;
			sum += b - a;
			T_TRUE(b - a <= TFD_MAP_WINDOW);
		}
	}
	if (maps)
		fclose(maps);
	T_EQ_U64(found, n);
	T_EQ_U64(sum, (len + 4095) & ~(size_t)4095);
	T_TRUE(memcmp(m, buf, len) == 0);
	T_EQ_U64(tfd_pages_split_map(m, TFD_MAP_WINDOW), 1); /* one window: nothing to cut */
	munmap(m, len);
	free(buf);
	/* a large file (sparse here) is mapped whole */
	memcpy(path + sizeof(path) - 7, "XXXXXX", 6);
	T_TRUE((fd = mkstemp(path)) >= 0);
	T_TRUE(ftruncate(fd, (off_t)TFD_MAP_SPLIT_BELOW) == 0);
	m = mmap(NULL, TFD_MAP_SPLIT_BELOW, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	unlink(path);
	T_TRUE(m != MAP_FAILED);
	if (m != MAP_FAILED) {
		T_EQ_U64(tfd_pages_split_map(m, TFD_MAP_SPLIT_BELOW), 1);
		/* 256 KB windows: 1 MB ones held a folio of up to 1 MB ahead
		 * of a reader */
		T_EQ_U64(tfd_pages_split_map(m, TFD_MAP_SPLIT_BELOW - 4096), 2048);
		munmap(m, TFD_MAP_SPLIT_BELOW);
	}
	/* a file mapped whole gives back its readers' pages a large folio at
	 * a time; a windowed one in quarters of that (its RSS as it was), and
	 * in eighths of those on one core (no other core's TLB to flush) */
	T_EQ_U64(tfd_pages_release_step(TFD_MAP_SPLIT_BELOW, 2), (size_t)2 << 20);
	T_EQ_U64(tfd_pages_release_step((size_t)1 << 30, 2), (size_t)2 << 20);
	T_EQ_U64(tfd_pages_release_step((size_t)1 << 30, 1), (size_t)2 << 20);
	T_EQ_U64(tfd_pages_release_step(TFD_MAP_SPLIT_BELOW - 1, 2), (size_t)512 << 10);
	T_EQ_U64(tfd_pages_release_step(100u << 20, 8), (size_t)512 << 10);
	T_EQ_U64(tfd_pages_release_step(100u << 20, 1), (size_t)128 << 10);
}

/* A table read before it is written is zeroed by writing: its pages are
 * resident at once (calloc()'s are not, and map the zero page when read,
 * whose first write then interrupts every core of the process), and zero. */
static void written_tables_are_resident(struct t *t)
{
	size_t len = (size_t)8 << 20, page = (size_t)sysconf(_SC_PAGESIZE), absent = 0, nonzero = 0;
	uint64_t *v = xcalloc_written(len / 8, 8);
	unsigned char *in = xmalloc(len / page + 1);
	uintptr_t a = ((uintptr_t)v + page - 1) & ~(uintptr_t)(page - 1);

	/* whole pages of it */
	T_TRUE(mincore((void *)a, (uintptr_t)v + len - a - page, in) == 0);
	for (size_t i = 0; i < ((uintptr_t)v + len - a - page) / page; i++)
		absent += !(in[i] & 1);
	for (size_t i = 0; i < len / 8; i++)
		nonzero += v[i] != 0;
	T_EQ_U64(absent, 0);
	T_EQ_U64(nonzero, 0);
	free(in);
	free(v);
}

/* Whether the allocator is glibc's: not under AddressSanitizer or
 * ThreadSanitizer (the out-of-memory and freed-pages tests). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define OOM_TEST 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define OOM_TEST 0
#endif
#endif
#ifndef OOM_TEST
#define OOM_TEST 1
#endif

/* The resident pages of this process, in bytes (0: unknown). */
static size_t resident_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%lu %lu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (size_t)res * (size_t)sysconf(_SC_PAGESIZE);
}

/* A block freed in the middle of the heap stays resident with free();
 * tfd_pages_free() gives its pages back first. In a child: its heap made
 * to hold large blocks (no mmap), a block after it so that the heap's top
 * cannot be trimmed. glibc's allocator's: not under a sanitizer's, which
 * maps large blocks apart (OOM_TEST tells). */
static void freed_pages_go_back(struct t *t)
{
	pid_t pid;
	int status = 0;

	if (!OOM_TEST)
		return;
	pid = fork();

	T_TRUE(pid >= 0);
	if (pid == 0) {
		size_t len = (size_t)8 << 20, r0, r1, r2;
		uint8_t *a, *b, *guard;

		mallopt(M_MMAP_THRESHOLD, 1 << 30);
		mallopt(M_TRIM_THRESHOLD, 1 << 30);
		a = xmalloc(len);
		b = xmalloc(len);
		guard = xmalloc(64);
		memset(a, 1, len);
		memset(b, 1, len);
		guard[0] = 1;
		r0 = resident_bytes();
		free(a);
		r1 = resident_bytes();
		tfd_pages_free(b, len);
		r2 = resident_bytes();
		free(guard);
		/* free() kept a's 8 MB; b's went (all but its edges' pages) */
		/* (reading the counts allocates: a few pages come back between) */
		_exit(r0 && r1 + (1u << 20) > r0 && r2 + len - (256u << 10) < r1 ? 0 : 1);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Packed events read back as they were added, with every way a value is
 * stored (none, a varint, eight bytes, an iterator id's index), starts up
 * to 2^62 apart and negative durations: after the finish's sort, after
 * dropping the executor chunks of no captured function, after an absorb
 * into a capture whose tables differ, and after a filter. */
static bool ref_before(const struct tfd_event *a, const struct tfd_event *b)
{
	return a->start_ns != b->start_ns ? a->start_ns < b->start_ns : a->dur_ns > b->dur_ns;
}

static void same_events(struct t *t, const char *what, const struct tfd_host *h,
			const struct tfd_thread *th, const struct tfd_event *want, size_t n)
{
	struct tfd_event *v = tfd_thread_unpack(h, th);

	T_EQ_I64((int64_t)th->nevents, (int64_t)n);
	for (size_t k = 0; k < n && k < th->nevents; k++) {
		const struct tfd_event *e = &v[k], *f = &want[k];

		if (e->start_ns != f->start_ns || e->dur_ns != f->dur_ns || e->kind != f->kind ||
		    e->flags != f->flags || e->id != f->id || strcmp(e->sig->name, f->sig->name) ||
		    e->sig->parent_id != f->sig->parent_id || e->sig->nparams != f->sig->nparams) {
			T_FAILF("%s: event %zu differs", what, k);
			break;
		}
	}
	free(v);
}

static bool keep_iterators(const struct tfd_event *e, void *ctx)
{
	(void)ctx;
	return e->kind == TFD_EV_ITERATOR;
}

/* A thread of megabytes moved by an absorb (whose pages go behind its
 * reads, as parallel reads of a long line are merged) reads back whole. */
static void long_thread_absorbed(struct t *t)
{
	enum { N = 500000 };
	struct tfd_capture *cap = tfd_capture_new(), *part = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_host *ph = tfd_capture_add_host(part, "h");
	uint32_t pth = tfd_host_thread(part, ph, 1, "w");
	struct tfd_event *want = xcalloc(N + 1, sizeof(*want));
	struct tfd_err err = {0};

	tfd_host_thread(cap, h, 2, "first"); /* other indexes than the part's */
	for (size_t i = 0; i < N; i++) {
		struct tfd_event *e = tfd_host_add_event(
		    part, ph, pth, i % 3 ? "Iterator::Model::Map" : "Iterator::Model",
		    (int64_t)i * 1000 + (int64_t)(i % 11), 500 + (int64_t)(i % 7));

		tfd_event_set_stat_int(part, e, "id", i % 3 ? 2 : 1);
		want[i] = *e;
	}
	tfd_host_absorb(cap, h, part);
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_I64(h->nthreads, 2);
	T_TRUE(h->threads[1].evlen > (2u << 20));
	same_events(t, "absorbed", h, &h->threads[1], want, N);
	free(want);
	tfd_capture_free(part);
	tfd_capture_free(cap);
}

/* Consecutive executor chunks of one step on a thread are one event (the
 * first's start, the durations summed) when fold_exec is set, and a line
 * read in parts and absorbed folds across the seams as when read whole,
 * the parts absorbed one by one or all at once, side by side. */
static void exec_runs_fold(struct t *t)
{
	enum { N = 3000 };
	struct tfd_event *want = xcalloc(N + 1, sizeof(*want));
	int64_t start[N], dur[N];
	int kind[N]; /* 0, 1: a chunk of step 5 or 6; 2: an iterator call */
	uint64_t y = 7;
	size_t n = 0;

	for (size_t i = 0; i < N; i++) {
		y = y * 6364136223846793005ull + 1442695040888963407ull;
		kind[i] = (y >> 60) % 8 == 0 ? 2 : (y >> 50) % 4 == 0;
		start[i] = (int64_t)i * 100;
		dur[i] = (y >> 30) % 16 == 0 ? -3 : (int64_t)((y >> 20) % 90);
	}
	for (int way = 0; way < 4; way++) {
		/* 0: one capture; 1: in parts, absorbed; 2: not folding; 3: in
		 * parts, absorbed at once (tfd_absorb_run) */
		struct tfd_capture *cap = tfd_capture_new();
		struct tfd_host *h = tfd_capture_add_host(cap, "h");
		struct tfd_err err = {0};
		struct tfd_capture *part = cap, *parts[N / 97 + 2];
		struct tfd_host *ph = h;
		const struct tfd_event *prev = NULL;
		size_t np = 0;
		const char *it = tfd_arena_intern_cstr(&cap->arena, "Iterator::Model");
		const char *ex = tfd_arena_intern_cstr(&cap->arena, "ExecutorState::Process");

		cap->fold_exec = way != 2;
		tfd_host_thread(cap, h, 1, "w");
		n = 0;
		for (size_t i = 0; i < N; i++) {
			struct tfd_event *e;

			if ((way == 1 || way == 3) && i % 97 == 13) { /* a new part */
				if (part != cap && way == 1)
					tfd_host_absorb(cap, h, part);
				/* kept until compared: want has their signatures */
				part = parts[np++] = tfd_capture_new();
				part->fold_exec = true;
				ph = tfd_capture_add_host(part, "h");
				tfd_host_thread(part, ph, 1, "w");
			}
			/* names of cap's, as the reader's blocks use */
			e = tfd_host_add_event_as(part, ph, 0, kind[i] == 2 ? it : ex,
						  kind[i] == 2 ? TFD_EV_ITERATOR : TFD_EV_EXEC,
						  start[i], dur[i]);
			tfd_event_set_stat_int(part, e, "id", kind[i] == 2 ? 9 : 5 + kind[i]);
			/* the expected events: a chunk folds into the one before */
			if (way != 2 && prev && kind[i] < 2 && e->dur_ns >= 0 &&
			    want[n - 1].dur_ns >= 0 && want[n - 1].kind == TFD_EV_EXEC &&
			    want[n - 1].id == e->id) {
				want[n - 1].dur_ns += e->dur_ns;
			} else {
				want[n++] = *e;
			}
			prev = e;
		}
		if (part != cap && way == 1)
			tfd_host_absorb(cap, h, part);
		if (way == 3) {
			struct tfd_absorb *ab = tfd_absorb_new(cap, h, np);

			for (size_t k = 0; k < np; k++)
				tfd_absorb_add(ab, parts[k]);
			tfd_absorb_run(ab, 2);
		}
		/* the steps' functions (chunks of none are dropped) */
		for (int f = 5; f <= 6; f++)
			tfd_event_set_stat_int(
			    cap,
			    tfd_host_add_event(cap, h, tfd_host_thread(cap, h, 2, "r"),
					       "InstantiatedCapturedFunction::Run", f, 1),
			    "id", (uint64_t)f);
		T_OK(tfd_capture_finish(cap, &err), &err);
		T_TRUE(way == 2 ? n == N : n < N * 3 / 4);
		T_EQ_I64((int64_t)h->nevents, (int64_t)n + 2);
		same_events(t,
			    way == 0   ? "whole"
			    : way == 1 ? "in parts"
			    : way == 3 ? "in parts, at once"
				       : "not folding",
			    h, &h->threads[0], want, n);
		tfd_capture_free(cap);
		for (size_t k = 0; k < np; k++)
			tfd_capture_free(parts[k]);
	}
	free(want);
}

/* Each thread holds its last few events back until more come (their
 * stats arrive after them): events added to threads in turn, each given
 * its id after it is added, and a part absorbed while the threads hold
 * some, read back in order with their ids, whatever a thread's count is
 * against the ring's depth. */
static void held_events_interleaved(struct t *t)
{
	enum { NT = 4, PER = 11 };
	struct tfd_capture *cap = tfd_capture_new(), *part = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_host *ph = tfd_capture_add_host(part, "h");
	struct tfd_event want[NT][PER * 2 + 2];
	size_t n[NT] = {0};
	struct tfd_err err = {0};
	const char *nm = tfd_arena_intern_cstr(&cap->arena, "Iterator::Model::Map");
	const char *pnm = tfd_arena_intern_cstr(&part->arena, "Iterator::Model::Map");
	uint32_t th[NT];

	for (size_t k = 0; k < NT; k++) {
		th[k] = tfd_host_thread(cap, h, (int64_t)k + 1, "w");
		T_EQ_I64(tfd_host_thread(part, ph, (int64_t)k + 1, "w"), th[k]);
	}
	/* thread k gets 3k + 1 events (1, 4, 7 and 10: under, at and past
	 * the ring's depth of 4), the threads taking turns */
	for (size_t r = 0; r < PER; r++)
		for (size_t k = 0; k < NT; k++)
			if (r <= k * 3) {
				struct tfd_event *e =
				    tfd_host_add_event_as(cap, h, th[k], nm, TFD_EV_ITERATOR,
							  (int64_t)(r * 1000 + k), 10);

				tfd_event_set_stat_int(cap, e, "id", 100 * k + r + 1);
				want[k][n[k]++] = *e;
			}
	/* a part read beside (a later stretch of the same lines): absorbed
	 * while the threads above still hold events back */
	for (size_t k = 0; k < NT; k++)
		for (size_t r = 0; r < k + 1; r++) {
			struct tfd_event *e = tfd_host_add_event_as(
			    part, ph, th[k], pnm, TFD_EV_ITERATOR, (int64_t)(100000 + r * 10), 5);

			tfd_event_set_stat_int(part, e, "id", 7000 + 10 * k + r);
			want[k][n[k]] = *e;
			want[k][n[k]++].sig = want[k][0].sig; /* the same name in cap */
		}
	tfd_host_absorb(cap, h, part);
	T_OK(tfd_capture_finish(cap, &err), &err);
	for (size_t k = 0; k < NT; k++)
		same_events(t, "interleaved", h, &h->threads[th[k]], want[k], n[k]);
	tfd_capture_free(part);
	tfd_capture_free(cap);
}

/* Element ids that are TensorFlow's clock (EnvTime::NowNanos() when the
 * element was made) are stored near their events' starts, a few bytes
 * each instead of eight, and read back the same: as packed, and moved in
 * from two parts whose constants differ from each other and from the
 * host's; ids far from their starts (and 0) stay as they were. */
static void element_ids_near_their_starts(struct t *t)
{
	enum { N = 3000 };
	const uint64_t clock0 = 1796324171913494000ull; /* a 2026 NowNanos() */
	struct tfd_capture *cap = tfd_capture_new(), *p1 = tfd_capture_new(),
			   *p2 = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_host *h1 = tfd_capture_add_host(p1, "h"), *h2 = tfd_capture_add_host(p2, "h");
	uint32_t a = tfd_host_thread(cap, h, 1, "consumer"), b = tfd_host_thread(p1, h1, 2, "p"),
		 c = tfd_host_thread(p2, h2, 3, "q");
	struct tfd_event *want[3];
	struct tfd_err err = {0};
	struct tfd_capture *into[3] = {cap, p1, p2};
	struct tfd_host *hosts[3] = {h, h1, h2};
	uint32_t ths[3] = {a, b, c};

	for (int k = 0; k < 3; k++) {
		want[k] = xcalloc(N + 1, sizeof(*want[k]));
		for (size_t i = 0; i < N; i++) {
			int64_t start = 5000000 + (int64_t)i * 1700 + k * 300;
			/* made 0-40 us before, the parts' first ones later than
			 * the host's (other constants); every 97th far off */
			uint64_t v =
			    clock0 + (uint64_t)start - (uint64_t)((i * 7919 + k * 13) % 40000);
			struct tfd_event *e;

			if (i % 97 == 5)
				v = 0xfedcba9876543210ull - i;
			else if (i % 101 == 7)
				v = 0;
			e = tfd_host_add_event(into[k], hosts[k], ths[k],
					       i % 2 ? "PrefetchConsume" : "PrefetchProduce", start,
					       200);
			if (v)
				tfd_event_set_stat_int(into[k], e, "element_id", (int64_t)v);
			want[k][i] = *e;
		}
	}
	tfd_host_absorb(cap, h, p1);
	tfd_host_absorb(cap, h, p2);
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_I64(h->nthreads, 3);
	for (int k = 0; k < 3; k++) {
		const struct tfd_thread *th = &h->threads[k];

		T_EQ_I64(th->id, k + 1);
		same_events(t, "near ids", h, th, want[k], N);
		/* start delta 2, duration 2, form 1, id 3 bytes: eight-byte ids
		 * took 13 */
		T_TRUE(th->evlen < (size_t)N * 9);
		free(want[k]);
	}
	tfd_capture_free(p1);
	tfd_capture_free(p2);
	tfd_capture_free(cap);
}

static void packed_events_round_trip(struct t *t)
{
	enum { N = 4000 };
	static const char *const names[] = {"Iterator::Model::Map", "PrefetchProduce",
					    "InstantiatedCapturedFunction::Run",
					    "ExecutorState::Process", "Other"};
	static const uint64_t big[] = {1,
				       127,
				       128,
				       (1ull << 49) - 1,
				       1ull << 49,
				       UINT64_MAX,
				       0x8000000000000000ull,
				       0xfedcba9876543210ull};
	struct tfd_capture *cap = tfd_capture_new(), *part = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_host *ph = tfd_capture_add_host(part, "h");
	struct tfd_host *h2;
	struct tfd_capture *cap2 = tfd_capture_new();
	uint32_t th = tfd_host_thread(cap, h, 1, "w"), pth = tfd_host_thread(part, ph, 1, "w");
	struct tfd_event *want = xcalloc(N + 1, sizeof(*want));
	struct tfd_err err = {0};
	uint64_t y = 42;
	size_t n = 0, m;

	for (size_t i = 0; i < N; i++) {
		struct tfd_event *e, *f;
		int k;
		int64_t start, dur;
		uint64_t v;

		y = y * 6364136223846793005ull + 1442695040888963407ull;
		k = (int)(y >> 61) % 5;
		/* starts clustered and far apart, durations of either sign */
		start = (y >> 20) % 3 == 0   ? (int64_t)(y >> 40) - (1ll << 23)
			: (y >> 20) % 3 == 1 ? (1ll << 61) - (int64_t)(y >> 44)
					     : -(1ll << 61) + (int64_t)(y >> 44);
		dur = (int64_t)((y >> 8) % 2000) - 500;
		v = (y >> 30) % 4 == 0 ? 0 : big[(y >> 33) % 8];
		e = tfd_host_add_event(cap, h, th, names[k], start, dur);
		f = tfd_host_add_event(part, ph, pth, names[k], start, dur);
		if (k == 3 && i % 3 == 0)
			v = 777; /* the step of no captured function: dropped */
		if (k == 2 || k == 3)
			v = k == 2 && i % 2 ? 777 + i : v ? v : 1;
		if (k == 0)
			v = big[i % 4] + 1000; /* an iterator's id repeats */
		if (v) {
			tfd_event_set_stat_int(cap, e, k == 1 ? "element_id" : "id", (int64_t)v);
			tfd_event_set_stat_int(part, f, k == 1 ? "element_id" : "id", (int64_t)v);
		}
		if (k == 0) {
			tfd_event_set_stat_int(cap, e, "parent_id", (int64_t)(i % 7));
			tfd_event_set_stat_int(part, f, "parent_id", (int64_t)(i % 7));
			tfd_event_set_stat_str(cap, e, "parallelism", i % 2 ? "4" : "8");
			tfd_event_set_stat_str(part, f, "parallelism", i % 2 ? "4" : "8");
		}
		if (i % 5 == 0) {
			tfd_event_set_stat_int(cap, e, "_a", 1);
			tfd_event_set_stat_int(part, f, "_a", 1);
		}
		want[n++] = *e;
	}
	/* the dataset function with step 777 + i is captured for the exec
	 * chunks whose id is one of its */
	{
		struct tfd_event *e =
		    tfd_host_add_event(cap, h, th, "InstantiatedCapturedFunction::Run", 0, 1);
		struct tfd_event *f =
		    tfd_host_add_event(part, ph, pth, "InstantiatedCapturedFunction::Run", 0, 1);

		tfd_event_set_stat_int(cap, e, "id", 1);
		tfd_event_set_stat_int(part, f, "id", 1);
		want[n++] = *e;
	}
	/* what the finish keeps, in its order (a stable sort) */
	{
		struct imap fn = {0};
		size_t w = 0, dummy;

		for (size_t k = 0; k < n; k++)
			if (want[k].kind == TFD_EV_FUNCTION && (want[k].flags & TFD_EVF_ID))
				imap_put(&fn, want[k].id, 0);
		for (size_t k = 0; k < n; k++)
			if (want[k].kind != TFD_EV_EXEC ||
			    ((want[k].flags & TFD_EVF_ID) && imap_get(&fn, want[k].id, &dummy)))
				want[w++] = want[k];
		imap_free(&fn);
		T_TRUE(w < n && w > n / 2);
		n = w;
		for (size_t i = 1; i < n; i++) { /* insertion sort: stable */
			struct tfd_event x = want[i];
			size_t j = i;

			for (; j > 0 && ref_before(&x, &want[j - 1]); j--)
				want[j] = want[j - 1];
			want[j] = x;
		}
	}
	T_OK(tfd_capture_finish(cap, &err), &err);
	same_events(t, "finished", h, &h->threads[th], want, n);
	/* into a capture with other signatures and ids first */
	h2 = tfd_capture_add_host(cap2, "h");
	{
		uint32_t o = tfd_host_thread(cap2, h2, 9, "other");

		for (int i = 0; i < 3; i++) { /* packed (the last waits for stats) */
			struct tfd_event *e =
			    tfd_host_add_event(cap2, h2, o, "Iterator::Model::Zip", i, 1);

			tfd_event_set_stat_int(cap2, e, "id", 5 + i);
			tfd_event_set_stat_int(cap2, e, "parent_id", 3);
		}
	}
	tfd_host_absorb(cap2, h2, part);
	T_OK(tfd_capture_finish(cap2, &err), &err);
	T_EQ_I64(h2->nthreads, 2);
	same_events(t, "absorbed", h2, &h2->threads[1], want, n);
	/* a filter keeps the rest in order */
	m = 0;
	for (size_t k = 0; k < n; k++)
		if (want[k].kind == TFD_EV_ITERATOR)
			want[m++] = want[k];
	T_EQ_I64((int64_t)tfd_thread_filter(h2, &h2->threads[1], keep_iterators, NULL),
		 (int64_t)(n - m));
	same_events(t, "filtered", h2, &h2->threads[1], want, m);
	free(want);
	tfd_capture_free(part);
	tfd_capture_free(cap2);
	tfd_capture_free(cap);
}

/* Iterator ids that do not repeat stay out of the table of ids (in it
 * they would cost more than as they are), read directly and after an
 * absorb; ids that repeat still go in. */
static void unrepeated_iterator_ids(struct t *t)
{
	enum { N = 30000 };
	struct tfd_capture *cap = tfd_capture_new(), *part = tfd_capture_new();
	struct tfd_capture *cap2 = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h"), *ph = tfd_capture_add_host(part, "h");
	struct tfd_host *h2 = tfd_capture_add_host(cap2, "h");
	uint32_t th = tfd_host_thread(cap, h, 1, "w"), pth = tfd_host_thread(part, ph, 1, "w");
	uint64_t *ids = xcalloc(N, sizeof(*ids)), y = 7;
	struct tfd_err err = {0};
	struct tfd_event *v;

	for (size_t i = 0; i < N; i++) {
		struct tfd_event *e =
		    tfd_host_add_event(cap, h, th, "Iterator::Model", (int64_t)i, 1);
		struct tfd_event *f =
		    tfd_host_add_event(part, ph, pth, "Iterator::Model", (int64_t)i, 1);

		y = y * 6364136223846793005ull + 1442695040888963407ull;
		ids[i] = i % 2 ? y | 1 : 1000 + i % 10; /* every other one repeats */
		tfd_event_set_stat_int(cap, e, "id", (int64_t)ids[i]);
		tfd_event_set_stat_int(part, f, "id", (int64_t)ids[i]);
	}
	T_OK(tfd_capture_finish(cap, &err), &err);
	tfd_host_absorb(cap2, h2, part);
	T_OK(tfd_capture_finish(cap2, &err), &err);
	for (int k = 0; k < 2; k++) {
		const struct tfd_host *x = k ? h2 : h;

		/* the 10 that repeat, and a quarter of the 30000 ids asked at most */
		T_TRUE(x->tab->nval >= 10 && x->tab->nval <= N / 4 + 1);
		T_TRUE(x->tab->nform <= x->tab->nval + 4);
		T_EQ_I64((int64_t)x->threads[0].nevents, N);
		v = tfd_thread_unpack(x, &x->threads[0]);
		for (size_t i = 0; i < N; i++)
			if (v[i].id != ids[i] || v[i].start_ns != (int64_t)i) {
				T_FAILF("%s: event %zu reads id %llu", k ? "absorbed" : "read", i,
					(unsigned long long)v[i].id);
				break;
			}
		free(v);
	}
	free(ids);
	tfd_capture_free(part);
	tfd_capture_free(cap2);
	tfd_capture_free(cap);
}

/* An id that a part gave a form of its own but the capture absorbing it
 * gives none (its ids are used up) is stored as it is, and reads back. */
static void absorbed_id_without_a_form(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new(), *part = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h"), *ph = tfd_capture_add_host(part, "h");
	uint32_t th = tfd_host_thread(cap, h, 1, "w"), pth = tfd_host_thread(part, ph, 1, "w");
	struct tfd_err err = {0};
	struct tfd_event *v;
	size_t n = 5000;

	for (size_t i = 0; i < n; i++) /* ids asked once each: no room is left */
		tfd_event_set_stat_int(
		    cap, tfd_host_add_event(cap, h, th, "Iterator::Model", (int64_t)i, 1), "id",
		    (int64_t)(100 + i));
	for (size_t i = 0; i < 4; i++)
		tfd_event_set_stat_int(
		    part,
		    tfd_host_add_event(part, ph, pth, "Iterator::Model::Map", (int64_t)(n + i), 1),
		    "id", i % 2 ? 7 : (int64_t)1 << 60);
	tfd_host_pack_pending(part, ph); /* the part's own forms made */
	T_TRUE(ph->tab->nval == 2);
	tfd_host_absorb(cap, h, part);
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_TRUE(h->tab->nval < n);
	T_EQ_I64((int64_t)h->threads[0].nevents, (int64_t)n + 4);
	v = tfd_thread_unpack(h, &h->threads[0]);
	for (size_t i = 0; v && i < n + 4; i++) {
		uint64_t want = i < n ? 100 + i : i % 2 ? 7 : (uint64_t)1 << 60;

		if (v[i].id != want || v[i].kind != TFD_EV_ITERATOR) {
			T_FAILF("event %zu reads id %llu", i, (unsigned long long)v[i].id);
			break;
		}
	}
	free(v);
	tfd_capture_free(part);
	tfd_capture_free(cap);
}

/* a raw capture's step markers are its steps when no event had a
 * group_id: the outermost marker of each thread, in time order; a marker
 * inside another on its thread is part of it (TensorFlow's grouping) */
static void step_markers_make_steps(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_err err;

	T_TRUE(tfd_step_marker_name("train"));
	T_TRUE(tfd_step_marker_name("test_step"));
	T_TRUE(tfd_step_marker_name("TraceContext"));
	T_TRUE(tfd_step_marker_name("Profiled batch"));
	T_TRUE(!tfd_step_marker_name("train/step"));
	T_TRUE(!tfd_step_marker_name("FunctionRun"));
	tfd_host_step_marker(h, "train", 7, 1, 1000, 2000, false, 0);
	tfd_host_step_marker(h, "train", 7, 0, 0, 900, false, 0);
	tfd_host_step_marker(h, "train", 7, -1, 100, 200, false, 0);  /* inside step 0 */
	tfd_host_step_marker(h, "train", 9, 5, 2500, 3000, false, 0); /* another thread */
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 3);
	T_TRUE(h->steps_from_markers);
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_I64(h->steps[0].start_ns, 0);
	T_EQ_I64(h->steps[0].end_ns, 900);
	T_EQ_I64(h->steps[1].start_ns, 1000);
	T_EQ_I64(h->steps[2].start_ns, 2500);
	T_EQ_I64(h->steps[2].group_id, 2);
	T_TRUE(h->markers == NULL);
	tfd_capture_free(cap);
}

/* Keras 2 marks its validation batches "test", its training ones "train":
 * beside training markers an evaluation's are no steps (the evaluation
 * runs between the steps); alone (a capture of evaluate()) they are */
static void eval_markers_step_a_host_only_alone(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h, *e;

	tfd_capture_add_host(cap, "h");
	tfd_capture_add_host(cap, "e");
	h = &cap->hosts[0];
	e = &cap->hosts[1];
	T_TRUE(tfd_eval_marker_name("test"));
	T_TRUE(tfd_eval_marker_name("test 25"));
	T_TRUE(tfd_eval_marker_name("Eval_step"));
	T_TRUE(tfd_eval_marker_name("validation"));
	T_TRUE(tfd_eval_marker_name("predict"));
	T_TRUE(!tfd_eval_marker_name("train"));
	T_TRUE(!tfd_eval_marker_name("testing"));
	T_TRUE(!tfd_eval_marker_name("TraceContext"));
	T_TRUE(!tfd_eval_marker_name("step"));
	tfd_host_step_marker(h, "train", 7, 0, 0, 900, false, 0);
	tfd_host_step_marker(h, "train", 7, 1, 1000, 1900, false, 0);
	tfd_host_step_marker(h, "test", 7, 0, 2000, 2300, false, 0);
	tfd_host_step_marker(h, "test", 7, 1, 2300, 2600, false, 0);
	tfd_host_step_marker(h, "train", 7, 0, 3000, 3900, false, 0);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 3);
	T_EQ_U64(h->eval_markers, 2);
	T_EQ_I64(h->steps[2].start_ns, 3000);

	tfd_host_step_marker(e, "test", 7, 0, 0, 300, false, 0);
	tfd_host_step_marker(e, "test", 7, 1, 300, 600, false, 0);
	tfd_host_steps_from_markers(cap, e);
	T_EQ_U64(e->nsteps, 2);
	T_EQ_U64(e->eval_markers, 0);
	T_TRUE(e->steps_from_markers);
	tfd_capture_free(cap);
}

/* A host stepped by its session's runs: the runs that read, alone, an
 * iterator read in at most half as many runs as the training's, between
 * the training's first run and last, are an evaluation's (a graph-mode
 * Keras validation pass): no steps; so are those of a pass after the
 * training's last run no longer than one between. A new iterator's runs
 * after the training's last, more than a pass's (an epoch cut by the
 * capture's end), stay steps. */
/* A session run of step id id on h's thread 7 at `at`, whose GetNext op
 * read iterator root (the iterator call inside it, as a reader sees it). */
static void run_reading(struct tfd_host *h, uint64_t id, int64_t at, uint64_t root)
{
	struct tfd_get_next_open o;
	struct tfd_event e = {.start_ns = at + 10, .flags = TFD_EVF_ID, .id = root};

	tfd_host_session_run(h, 7, at, at + 900, false, 0, true, id);
	tfd_host_get_next_open(h, &o, 7, id, at + 900);
	tfd_host_get_next_iterator(h, &o, 8, &e); /* another thread's: not its */
	tfd_host_get_next_iterator(h, &o, 7, &e);
}

static void eval_session_runs_are_no_steps(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint64_t id = 1;
	int64_t at = 0;

	for (int i = 0; i < 11; i++, id++, at += 1000) {
		/* 8 training runs; 3 of a validation pass after the 4th; then 3
		 * of another iterator, after the training's last */
		uint64_t root = i < 4 || (i >= 7 && i < 11) ? 100 : 200;

		run_reading(h, id, at, root);
	}
	for (int i = 0; i < 7; i++, id++, at += 1000) { /* 4 of one, 3 of another */
		run_reading(h, id, at, i < 4 ? 300 : 400);
	}
	tfd_host_session_run(h, 7, at, at + 900, false, 0, true, id); /* reads nothing */
	tfd_host_steps_from_markers(cap, h);
	T_TRUE(h->steps_from_session_runs);
	T_EQ_U64(h->eval_runs, 6);
	T_EQ_U64(h->nsteps, 12);
	T_EQ_U64(h->nidle_runs, 1);
	tfd_capture_free(cap);
}

/* TensorFlow 1's Session.run (SessionRun) steps a host without markers,
 * the outermost of each thread; beside a marker it is dropped (it runs
 * inside the markers, or beside them: an evaluation, a hook's fetch), and
 * a second call changes nothing */
static void session_runs_step_a_host_without_markers(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h, *m;

	tfd_capture_add_host(cap, "h");
	tfd_capture_add_host(cap, "m"); /* the hosts may move as one is added */
	h = &cap->hosts[0];
	m = &cap->hosts[1];
	T_TRUE(!tfd_step_marker_name("SessionRun"));
	tfd_host_session_run(h, 7, 0, 900, false, 0, true, 40);
	tfd_host_session_run(h, 7, 100, 200, false, 0, true, 41); /* inside the first */
	tfd_host_session_run(h, 7, 1000, 2000, false, 0, true, 42);
	tfd_host_steps_from_markers(cap, h);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 2);
	T_TRUE(h->steps_from_markers);
	T_TRUE(h->steps_from_session_runs);
	T_EQ_I64(h->steps[1].start_ns, 1000);
	T_EQ_I64(h->steps[1].end_ns, 2000);

	tfd_host_session_run(m, 7, 0, 900, false, 0, true, 40);
	tfd_host_step_marker(m, "train", 7, 3, 950, 2100, false, 0);
	tfd_host_session_run(m, 7, 1000, 2000, false, 0, true, 41);
	tfd_host_steps_from_markers(cap, m);
	T_EQ_U64(m->nsteps, 1);
	T_EQ_I64(m->steps[0].start_ns, 950);
	T_TRUE(!m->steps_from_session_runs);
	tfd_capture_free(cap);

	/* a GetNext op ran under the ids of two runs: the third (an
	 * iterator's initializer) is no step */
	cap = tfd_capture_new();
	h = tfd_capture_add_host(cap, "i");
	tfd_host_session_run(h, 7, 0, 900, false, 0, true, 50);
	tfd_host_get_next(h, 50);
	tfd_host_session_run(h, 7, 1000, 1900, false, 0, true, 51);
	tfd_host_session_run(h, 7, 2000, 2900, false, 0, true, 52);
	tfd_host_get_next(h, 52);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 2);
	T_EQ_I64(h->steps[1].start_ns, 2000);
	T_TRUE(h->steps_from_session_runs);
	tfd_capture_free(cap);
}

/* FunctionRuns keep their groups (a converted trace's) apart, made only
 * once a run has one: the runs before it have none, and the runs' room
 * grows with theirs. */
static void function_run_groups(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	int64_t g = -1;

	for (int i = 0; i < 10; i++)
		tfd_host_fnrun(h, 7, (uint64_t)i, 10 * i, false, 0);
	T_TRUE(h->fnrun_groups == NULL && !tfd_fnrun_group(h, 3, &g));
	for (int i = 10; i < 200; i++)
		tfd_host_fnrun(h, 7, (uint64_t)i, 10 * i, i % 2 == 0, 1000 + i);
	T_EQ_U64(h->nfnruns, 200);
	T_TRUE(!tfd_fnrun_group(h, 9, &g) && !tfd_fnrun_group(h, 11, &g));
	T_TRUE(tfd_fnrun_group(h, 10, &g) && g == 1010);
	T_TRUE(tfd_fnrun_group(h, 198, &g) && g == 1198);
	T_EQ_I64(h->fnruns[198].start_ns, 1980);
	T_EQ_U64(h->fnruns[198].id, 198);
	tfd_capture_free(cap);
}

/* n calls of fn on thread 7, 1 us apart, each holding a function run
 * under whose id a GetNext op ran */
static void reading_calls(struct tfd_host *h, const char *fn, int n)
{
	for (int i = 0; i < n; i++) {
		tfd_host_fn_call(h, fn, 7, 1000 * i, 1000 * i + 900);
		tfd_host_fnrun(h, 7, 5 + (uint64_t)i, 1000 * i + 10, false, 0);
		tfd_host_get_next(h, 5 + (uint64_t)i);
	}
}

/* The function runs outside every step marker of their thread are the
 * loose ones (tf.data's), told by id: 300 of them (a radix sort's worth,
 * in the runs' own array), the runs inside markers not. */
static void loose_runs_outside_markers(struct t *t)
{
	enum { STEPS = 10, LOOSE = 300 };
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint64_t y = 7, inside[STEPS], loose[LOOSE];

	for (int i = 0; i < STEPS; i++) {
		int64_t s = 10000 * i;

		tfd_host_step_marker(h, "train", 7, i, s, s + 9000, false, 0);
		inside[i] = 5000000 + (uint64_t)i;
		tfd_host_fnrun(h, 7, inside[i], s + 100, false, 0);
	}
	for (int i = 0; i < LOOSE; i++) {
		y = y * 6364136223846793005ull + 1442695040888963407ull;
		loose[i] = y | 1;
		/* on the stepping thread between its markers, or on another */
		tfd_host_fnrun(h, i % 3 ? 9 : 7, loose[i],
			       i % 3 ? 300 * i : 10000 * (i % 10) + 9500, false, 0);
	}
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, STEPS);
	T_EQ_U64(h->nloose_fn_ids, LOOSE);
	for (int i = 1; i < LOOSE; i++)
		T_TRUE(h->loose_fn_ids[i - 1] < h->loose_fn_ids[i]);
	for (int i = 0; i < LOOSE; i++)
		T_TRUE(tfd_host_loose_fn(h, loose[i]));
	for (int i = 0; i < STEPS; i++)
		T_TRUE(!tfd_host_loose_fn(h, inside[i]));
	T_TRUE(h->fnruns == NULL && h->nfnruns == 0);
	tfd_capture_free(cap);
}

/* TensorFlow 2 without markers: the eager calls of a tf.function whose
 * runs read input (a GetNext op ran under the FunctionRun's id) step the
 * host, over the call's extent (the FunctionRun ends when dispatched);
 * another function's calls that read input in runs (an evaluation) are
 * between the steps, one called once among them (traced again) is a
 * step; a call reading nothing is none; fewer than three calls, a marker
 * or a session run: no function steps */
static void function_calls_step_a_host_without_markers(struct t *t)
{
	const char *train = "EagerLocalExecute: __inference_train_1",
		   *test = "EagerLocalExecute: __inference_test_2",
		   *again = "EagerLocalExecute: __inference_train_3";
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	uint64_t id = 100;

	T_TRUE(tfd_fn_call_name(train) && !tfd_fn_call_name("EagerLocalExecute: MatMul"));
	T_TRUE(tfd_get_next_run_name("IteratorGetNextAsOptionalOp::DoCompute"));
	/* 4 training calls, 3 evaluation calls in a run, 1 retraced training
	 * call, 1 call of the training function reading nothing */
	for (int i = 0; i < 9; i++) {
		const char *fn = i < 4 ? train : i < 7 ? test : i == 7 ? again : train;
		int64_t s = 1000 * i;

		tfd_host_fn_call(h, fn, 7, s, s + 900);
		tfd_host_fnrun(h, 7, id, s + 10, false, 0);
		if (i != 8)
			tfd_host_get_next(h, id);
		tfd_host_fnrun(h, 9, id + 1000, s + 30, false, 0); /* tf.data's */
		id++;
	}
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 5);
	T_TRUE(h->steps_from_markers && h->steps_from_function_calls);
	T_EQ_I64(h->steps[0].start_ns, 0);
	T_EQ_I64(h->steps[0].end_ns, 900);
	T_EQ_I64(h->steps[4].start_ns, 7000);
	T_TRUE(tfd_host_loose_fn(h, 1000 + 100) && !tfd_host_loose_fn(h, 100));
	tfd_capture_free(cap);

	/* two reading calls: too few */
	cap = tfd_capture_new();
	h = tfd_capture_add_host(cap, "h");
	reading_calls(h, train, 2);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 0);
	T_TRUE(!h->steps_from_function_calls);
	tfd_capture_free(cap);

	/* a step marker wins */
	cap = tfd_capture_new();
	h = tfd_capture_add_host(cap, "h");
	reading_calls(h, train, 4);
	tfd_host_step_marker(h, "train", 7, 1, 0, 1950, false, 0);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 1);
	T_TRUE(!h->steps_from_function_calls);
	tfd_capture_free(cap);
}

/* with group_id stats and no marker: the steps are TensorFlow's groups as
 * written */
static void group_ids_without_markers(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");

	tfd_host_note(cap, h, true, 41, 0, 5000);
	tfd_host_note(cap, h, true, 42, 6000, 7000);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 2);
	T_EQ_I64(h->steps[0].group_id, 41);
	T_TRUE(!h->steps_from_markers);
	tfd_capture_free(cap);
}

/* a trace TensorFlow's converter wrote gives a group to every root event:
 * the steps' (a marker in each) and a tf.data function run's between them
 * (none); only the groups holding a marker are steps, with their group
 * ids, over their markers' extents, and a group noted after that goes on
 * growing its own step */
static void groups_holding_markers_are_the_steps(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");
	struct tfd_err err;

	tfd_host_note(cap, h, true, 0, 0, 1000);
	tfd_host_note(cap, h, true, 1, 900, 1900); /* a function run's group */
	tfd_host_note(cap, h, true, 2, 950, 2000); /* a GetNext grouped with it */
	tfd_host_note(cap, h, true, 3, 1900, 2900);
	tfd_host_step_marker(h, "train", 7, 25, 0, 1000, true, 0);
	tfd_host_step_marker(h, "train", 7, 26, 1000, 2000, true, 2);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 2);
	T_EQ_I64(h->steps[0].group_id, 0);
	T_EQ_I64(h->steps[1].group_id, 2);
	T_EQ_I64(h->steps[1].start_ns, 1000); /* the marker's extent */
	T_TRUE(!h->steps_from_markers);
	tfd_host_note(cap, h, true, 2, 1000, 2100);
	T_EQ_U64(h->nsteps, 2);
	T_EQ_I64(h->steps[1].end_ns, 2100);
	T_OK(tfd_capture_finish(cap, &err), &err);
	T_EQ_U64(h->nsteps, 2);
	tfd_capture_free(cap);
}

/* markers without a group_id beside groups (Keras 3's "Profiled batch",
 * which the converter does not group; its groups are the function runs
 * inside the batches): the markers are the steps, as in the raw capture */
static void ungrouped_markers_win_over_groups(struct t *t)
{
	struct tfd_capture *cap = tfd_capture_new();
	struct tfd_host *h = tfd_capture_add_host(cap, "h");

	tfd_host_note(cap, h, true, 0, 300, 800);
	tfd_host_note(cap, h, true, 1, 1300, 1800);
	tfd_host_step_marker(h, "train", 7, 0, 0, 1000, false, 0);
	tfd_host_step_marker(h, "train", 7, 1, 1000, 2000, false, 0);
	tfd_host_steps_from_markers(cap, h);
	T_EQ_U64(h->nsteps, 2);
	T_EQ_I64(h->steps[0].start_ns, 0);
	T_EQ_I64(h->steps[0].end_ns, 1000);
	T_EQ_I64(h->steps[1].end_ns, 2000);
	T_TRUE(h->steps_from_markers);
	tfd_capture_free(cap);
}

/* Out of memory on several threads at once: one line, exit 1 (two threads
 * printed it twice). In a child process: the failure exits. Not under
 * AddressSanitizer or ThreadSanitizer, whose allocators report a huge
 * request instead. */

static pthread_barrier_t oom_go;

static void *oom_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&oom_go);
	return xmalloc(SIZE_MAX / 2);
}

static void oom_said_once(struct t *t)
{
	int fd[2], status = 0;
	pid_t pid;
	char buf[4096];
	size_t len = 0;
	ssize_t r;

	if (!OOM_TEST)
		return;
	T_TRUE(pipe(fd) == 0);
	pid = fork();
	T_TRUE(pid >= 0);
	if (pid == 0) {
		pthread_t th[32];

		dup2(fd[1], 2);
		close(fd[0]);
		pthread_barrier_init(&oom_go, NULL, 32);
		for (int i = 0; i < 32; i++)
			pthread_create(&th[i], NULL, oom_thread, NULL);
		for (int i = 0; i < 32; i++)
			pthread_join(th[i], NULL);
		_exit(0);
	}
	close(fd[1]);
	while (len < sizeof(buf) - 1 && (r = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	close(fd[0]);
	waitpid(pid, &status, 0);
	T_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	T_EQ_STR(buf,
		 "tfdoctor: error: out of memory (the capture needs more than the memory limit "
		 "allows)\n");
}

/* a marker of any name with `_r` is a step, but TensorFlow's own roots */
static void step_root_names(struct t *t)
{
	T_TRUE(tfd_step_root_name("step") && tfd_step_root_name("epoch_step") &&
	       tfd_step_root_name("train/x"));
	T_TRUE(!tfd_step_root_name("FunctionRun") && !tfd_step_root_name("SessionRun") &&
	       !tfd_step_root_name("RunGraph") && !tfd_step_root_name("ExecutorState::Process"));
}

static void loop_input_names(struct t *t)
{
	/* the input of a loop inside a tf.function: from the scan on, through
	 * the root, the prefetch AUTOTUNE injects and a breaking loop's
	 * take_while (Model before TensorFlow 2.7) */
	T_EQ_STR(tfd_loop_input_name("ReduceIterator::Root::Prefetch::Scan::FiniteTake::Map"),
		 "Scan::FiniteTake::Map");
	T_EQ_STR(tfd_loop_input_name("ReduceIterator::Model::Scan::BatchV2"), "Scan::BatchV2");
	T_EQ_STR(tfd_loop_input_name("ReduceIterator::Root::Prefetch::TakeWhile::Scan::Range"),
		 "Scan::Range");
	T_TRUE(tfd_loop_input_name("ReduceIterator::Root::Prefetch::Scan") == NULL);
	T_TRUE(tfd_loop_input_name("ReduceIterator::Root::Map::Scan::Range") == NULL);
	T_TRUE(tfd_loop_input_name("Iterator::Root::Prefetch::Scan::Range") == NULL);
	T_TRUE(tfd_loop_input_name("ReduceIterator::Root::Root::Root::Root::Root::Scan::R") ==
	       NULL);
	T_EQ_STR(tfd_iter_long_name("Iterator::Root::Map"), "Iterator::Root::Map");
	T_TRUE(tfd_in_loop_input(tfd_iter_long_name("ReduceIterator::Root::Prefetch::Scan::Map")));
	T_TRUE(!tfd_in_loop_input(tfd_iter_long_name("Iterator::Root::Prefetch::Scan::Map")));
	T_TRUE(tfd_loop_root_name("ReduceIterator::Root") && !tfd_loop_root_name("Iterator::Root"));
}

/* a stage made parallel is the stage it was (diff's rows, the nightly
 * job's "bottleneck moved") */
static void same_stage_made_parallel(struct t *t)
{
	T_EQ_STR(tfd_serial_family("ParallelMap"), "Map");
	T_EQ_STR(tfd_serial_family("Parallel"), "Parallel");
	{
		char fam[64];

		/* Dataset.load's reader of shard N: one family for every shard */
		T_EQ_STR(tfd_iter_family("SnapshotDatasetReader/_3", fam, sizeof(fam)),
			 "SnapshotDatasetReader");
		T_TRUE(tfd_family_has("SnapshotDatasetReader", TFD_FAM_SOURCE));
		/* the names real captures give (Dataset.load, ignore_errors,
		 * CsvDataset), not the ops' */
		T_TRUE(tfd_family_has("Load", TFD_FAM_PASS));
		T_TRUE(tfd_family_has("IgnoreErrors", TFD_FAM_PASS));
		T_TRUE(tfd_family_has("CSV", TFD_FAM_SOURCE));
		T_EQ_STR(tfd_iter_family("ParallelInterleaveV4[2]", fam, sizeof(fam)),
			 "ParallelInterleave");
	}
	{
		/* and every shard's reader is one stage, as an interleave's
		 * inputs are; a "/" in another name stays */
		char *a = tfd_iter_stage_path(
		    "Iterator::Root::Load::ParallelInterleaveV4[3]::SnapshotDatasetReader/_12");
		char *b = tfd_iter_stage_path("Iterator::Root::X/_1::Map");
		char *c = tfd_iter_stage_path("Iterator::Root::X/_::Map/_2a");

		T_EQ_STR(a, "Iterator::Root::Load::ParallelInterleaveV4::SnapshotDatasetReader");
		T_EQ_STR(b, "Iterator::Root::X::Map");
		T_EQ_STR(c, "Iterator::Root::X/_::Map/_2a");
		free(a);
		free(b);
		free(c);
	}
	T_EQ_STR(tfd_serial_family("Batch"), "Batch");
	T_TRUE(tfd_same_stage_made_parallel("Iterator::Root::Prefetch::BatchV2::Map",
					    "Iterator::Root::Prefetch::BatchV2::ParallelMapV2"));
	T_TRUE(
	    tfd_same_stage_made_parallel("Iterator::Model::Interleave::Map",
					 "Iterator::Model::ParallelInterleaveV4::ParallelMapV2"));
	T_TRUE(!tfd_same_stage_made_parallel("Iterator::Root::Prefetch::BatchV2::Map",
					     "Iterator::Root::Prefetch::BatchV2::Filter"));
	T_TRUE(!tfd_same_stage_made_parallel("Iterator::Root::Prefetch::Map",
					     "Iterator::Root::Prefetch::BatchV2::ParallelMapV2"));
	T_TRUE(!tfd_same_stage_made_parallel("Iterator::Root::Map", "Iterator::Root"));
	/* a final prefetch or a repeat() added above a stage moves it nowhere
	 * (an epoch's index aside); the new prefetch itself is no stage it was */
	T_TRUE(tfd_same_stage_moved("Iterator::Root::BatchV2::ParallelMapV2",
				    "Iterator::Root::Prefetch::BatchV2::ParallelMapV2"));
	T_TRUE(tfd_same_stage_moved(
	    "Iterator::Root::Prefetch::BatchV2::Map",
	    "Iterator::Root::Prefetch::ForeverRepeat[3]::Prefetch::BatchV2::ParallelMapV2"));
	T_TRUE(!tfd_same_stage_made_parallel("Iterator::Root::BatchV2::Map",
					     "Iterator::Root::Prefetch::BatchV2::Map"));
	T_TRUE(!tfd_same_stage_moved("Iterator::Root::BatchV2", "Iterator::Root::Prefetch"));
	T_TRUE(!tfd_same_stage_moved("Iterator::Root::Prefetch::Map",
				     "Iterator::Root::Prefetch::BatchV2::Map"));
	T_TRUE(!tfd_same_stage_moved("Iterator::Root::Prefetch::Map",
				     "Iterator::Root::Map::Prefetch"));
}

/* the op types that make a function's result change from one epoch to the
 * next, and those that share their prefixes without drawing anything */
static void random_op_types(struct t *t)
{
	T_TRUE(tfd_op_is_random("RandomUniform") && tfd_op_is_random("RandomStandardNormal") &&
	       tfd_op_is_random("RandomUniformInt") && tfd_op_is_random("RandomShuffle") &&
	       tfd_op_is_random("StatelessRandomUniformV2") &&
	       tfd_op_is_random("StatelessRandomGetKeyCounter") &&
	       tfd_op_is_random("StatefulUniformFullInt") && tfd_op_is_random("RngReadAndSkip") &&
	       tfd_op_is_random("TruncatedNormal") && tfd_op_is_random("Multinomial") &&
	       tfd_op_is_random("SampleDistortedBoundingBoxV2"));
	T_TRUE(!tfd_op_is_random("StatelessIf") && !tfd_op_is_random("StatelessWhile") &&
	       !tfd_op_is_random("StatefulPartitionedCall") && !tfd_op_is_random("_MklMatMul") &&
	       !tfd_op_is_random("ParseExampleV2") && !tfd_op_is_random("DecodeJpeg"));
}

const struct t_case capture_cases[] = {
    T(random_op_types),
    T(device_long_kernel),
    T(same_stage_made_parallel),
    T(loop_input_names),
    T(step_root_names),
    T(oom_said_once),
    T(device_marker_steps_by_time),
    T(step_markers_make_steps),
    T(session_runs_step_a_host_without_markers),
    T(function_calls_step_a_host_without_markers),
    T(loose_runs_outside_markers),
    T(eval_markers_step_a_host_only_alone),
    T(eval_session_runs_are_no_steps),
    T(group_ids_without_markers),
    T(groups_holding_markers_are_the_steps),
    T(ungrouped_markers_win_over_groups),
    T(op_types),
    T(function_ops_self_time),
    T(function_ops_known_kinds),
    T(function_ops_by_type_names),
    T(function_op_runs),
    T(function_op_records_split_and_limit),
    T(function_run_groups),
    T(function_ops_by_code_or_id),
    T(absorbed_id_without_a_form),
    T(unrepeated_iterator_ids),
    T(packed_events_round_trip),
    T(element_ids_near_their_starts),
    T(long_thread_absorbed),
    T(exec_runs_fold),
    T(held_events_interleaved),
    T(largest_capture_file),
    T(file_maps_are_windows),
    T(written_tables_are_resident),
    T(freed_pages_go_back),
    T(finish_sorts_what_came_out_of_order),
    T(absorb_keeps_signatures),
    T(many_steps_noted),
    T(parallel_load_matches_sequential),
    T(by_file_matches_one_load),
    T(lean_matches_plain),
    T(exec_walk_matches_two_walks),
    T(repeated_stats_read_as_parsed),
    T(blocks_match_lines),
    T(blocks_without_metadata),
    T(seams_carry_line_state),
    T(seams_long_scope),
    T(prepass_errors_in_line_order),
    T(params_follow_each_event),
    T(scan_matches_full_pass),
    T(kinds),
    T(loop_waits),
    T(pool_lowest_failure),
    T(device_kinds),
    T(device_priority),
    T(device_groups),
    T(device_no_steps),
    T(device_line_order),
    T(exec_kept_for_functions),
    T(id_texts),
    T(signatures_and_values),
    T(sort_is_stable),
    T(source_bits),
    T(left_in_file),
    T(left_and_sorted),
    T(left_packed_new_forms),
    T(left_in_file_cut),
    T(left_in_file_seams),
    T(absorb_left_seam),
    T(stats_keep_64_bit_ids),
    T(load_mem_errors),
    T(chrome_minimal),
    T(chrome_names_alike),
    T(chrome_number_forms),
    T(chrome_gz_streamed),
    T(memory_budget),
    {0},
};
