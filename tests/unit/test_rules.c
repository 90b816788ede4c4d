/* test_rules.c - every default rule fires on a pipeline made for it and
 * stays quiet on a near miss; loading errors; the embedded copy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"
#include "t.h"
#include "tfd/analysis.h"
#include "tfd/buf.h"
#include "tfd/render.h"
#include "tfd/rules.h"
#include "tfd/rules_builtin.h"

#define US 1000000LL

static void set_params(struct fx *f, struct tfd_event *ev, const char *const *kv)
{
	for (const char *const *p = kv; p && *p; p++) {
		const char *eq = strchr(*p, '=');
		char key[64];

		snprintf(key, sizeof(key), "%.*s", (int)(eq - *p), *p);
		tfd_event_set_stat_str(f->cap, ev, key, eq + 1);
	}
}

/* Parameters of the root stage (the next chain's first event), as a Root
 * event carries tf.data's options; NULL-ended. */
static const char *const *root_kv;
static const char *const *above_kv; /* the bottleneck's parent's parameters */

/* A synchronous chain: stage i of `names` is Iterator::<names[0]>::...::
 * <names[i]>. Stage `b` owns most of the 1 ms root call; `kv` (NULL-ended)
 * are parameters of stage b. */
static void chain(struct fx *f, const char *const *names, int b, const char *const *kv,
		  int64_t base, int64_t root_us)
{
	char name[1024] = "Iterator";
	int n = 0;

	while (names[n])
		n++;
	for (int i = 0; i < n; i++) {
		char id[32], pid[32];
		int64_t s, e;
		struct tfd_event *ev;

		strncat(name, "::", sizeof(name) - strlen(name) - 1);
		strncat(name, names[i], sizeof(name) - strlen(name) - 1);
		if (i <= b) {
			s = base + i * 5 * US;
			e = base + root_us * US - i * 5 * US;
		} else {
			s = base + b * 5 * US + 10 * US + (i - b) * US;
			e = base + b * 5 * US + 30 * US - (i - b) * US;
		}
		snprintf(id, sizeof(id), "id=%d", 100 + i);
		snprintf(pid, sizeof(pid), "parent_id=%d", 99 + i);
		ev = fx_ev(f, 0, name, s, e - s, id, i ? pid : NULL, NULL);
		if (i == b)
			set_params(f, ev, kv);
		if (i == 0)
			set_params(f, ev, root_kv);
		if (i == b - 1)
			set_params(f, ev, above_kv);
	}
}

static bool fires(struct t *t, struct fx *f, const char *rule)
{
	struct tfd_analysis *a = NULL;
	struct tfd_ruleset *rs = NULL;
	struct tfd_findings fs;
	struct tfd_err err = {0};
	bool hit = false;

	fx_finish(f);
	T_OK(tfd_analyze(f->cap, NULL, &a, &err), &err);
	T_OK(tfd_rules_load_builtin(&rs, &err), &err);
	tfd_rules_eval(rs, a, &fs);
	for (size_t i = 0; i < fs.n; i++)
		hit |= strcmp(fs.v[i].rule_id, rule) == 0;
	tfd_findings_free(&fs);
	tfd_rules_free(rs);
	tfd_analysis_free(a);
	tfd_capture_free(f->cap);
	return hit;
}

struct rcase {
	const char *rule;
	bool fire;
	const char *names[6];
	int b;
	const char *kv[4];
	const char *root[3]; /* the root's parameters */
};

static const struct rcase cases[] = {
    {"TFD-S01", true, {"Model", "TFRecord"}, 1, {NULL}, {NULL}},
    {"TFD-S01", false, {"Model", "ParallelInterleaveV4", "TFRecord"}, 2, {NULL}, {NULL}},
    {"TFD-S02", true, {"Model", "ParallelInterleaveV4", "TFRecord"}, 2, {NULL}, {NULL}},
    {"TFD-S02", false, {"Model", "TFRecord"}, 1, {NULL}, {NULL}},
    {"TFD-S03", true, {"Model", "FlatMap", "Generator"}, 2, {NULL}, {NULL}},
    {"TFD-S03", false, {"Model", "TensorSlice"}, 1, {NULL}, {NULL}},
    /* Keras reading a PyDataset with workers: an OptionsDataset root with a
     * private pool of one thread, autotuning off (no cpu_budget) */
    {"TFD-S09",
     true,
     {"Root", "FlatMap", "Generator"},
     2,
     {NULL},
     {"name=OptionsDataset:2", "threadpool_size=1"}},
    {"TFD-S03",
     false,
     {"Root", "FlatMap", "Generator"},
     2,
     {NULL},
     {"name=OptionsDataset:2", "threadpool_size=1"}},
    {"TFD-P01",
     false,
     {"Root", "FlatMap", "Generator"},
     2,
     {NULL},
     {"name=OptionsDataset:2", "threadpool_size=1"}},
    {"TFD-S09",
     false,
     {"Root", "FlatMap", "Generator"},
     2,
     {NULL},
     {"name=OptionsDataset:2", "threadpool_size=2"}},
    {"TFD-S03",
     true,
     {"Root", "FlatMap", "Generator"},
     2,
     {NULL},
     {"name=OptionsDataset:2", "threadpool_size=2"}},
    {"TFD-P01",
     true,
     {"Root", "FlatMap", "Generator"},
     2,
     {NULL},
     {"name=OptionsDataset:2", "threadpool_size=2"}},
    {"TFD-S04", true, {"Model", "TensorSlice"}, 1, {NULL}, {NULL}},
    {"TFD-S04", false, {"Model", "TFRecord"}, 1, {NULL}, {NULL}},
    {"TFD-S05", true, {"Model", "ReverbDataset"}, 1, {NULL}, {NULL}},
    {"TFD-S05", false, {"Model", "TFRecord"}, 1, {NULL}, {NULL}},
    {"TFD-S06", true, {"Model", "DataService"}, 1, {NULL}, {NULL}},
    {"TFD-S06", false, {"Model", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-T01", true, {"Model", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-T01", false, {"Model", "ParallelMapV2"}, 1, {NULL}, {NULL}},
    {"TFD-T02", true, {"Model", "FlatMap"}, 1, {NULL}, {NULL}},
    {"TFD-T02", false, {"Model", "ParallelInterleaveV4"}, 1, {NULL}, {NULL}},
    {"TFD-T03", true, {"Model", "ParallelMapV2"}, 1, {"autotune=false", "parallelism=4"}, {NULL}},
    {"TFD-T03", false, {"Model", "ParallelMapV2"}, 1, {"autotune=true"}, {NULL}},
    /* a map without num_parallel_calls fused with its batch: the sequential
     * map it is (its name says so; a capture that names no dataset: its
     * parallelism of 1), not a fixed number the user wrote */
    {"TFD-T15",
     true,
     {"Root", "MapAndBatch"},
     1,
     {"autotune=false", "parallelism=1", "name=fused(MapDataset:2,BatchDatasetV2:3)"},
     {NULL}},
    {"TFD-T15", true, {"Root", "MapAndBatch"}, 1, {"autotune=false", "parallelism=1"}, {NULL}},
    /* a stateless map TensorFlow parallelized itself keeps its MapDataset
     * name in the fused op; AUTOTUNE and 2 calls at a time say it is not
     * sequential (the Keras MNIST tutorial's pipeline) */
    {"TFD-T15",
     false,
     {"Root", "MapAndBatch"},
     1,
     {"autotune=true", "parallelism=2", "name=fused(MapDataset:30,BatchDatasetV2:31)"},
     {NULL}},
    {"TFD-T15",
     false,
     {"Root", "MapAndBatch"},
     1,
     {"autotune=false", "parallelism=1", "name=fused(ParallelMapDatasetV2:2,BatchDatasetV2:3)"},
     {NULL}},
    {"TFD-T15", false, {"Root", "MapAndBatch"}, 1, {"autotune=false", "parallelism=2"}, {NULL}},
    {"TFD-T15", false, {"Root", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-T03",
     false,
     {"Root", "MapAndBatch"},
     1,
     {"autotune=false", "parallelism=1", "name=fused(MapDataset:2,BatchDatasetV2:3)"},
     {NULL}},
    {"TFD-T03",
     true,
     {"Root", "MapAndBatch"},
     1,
     {"autotune=false", "parallelism=2", "name=fused(ParallelMapDatasetV2:2,BatchDatasetV2:3)"},
     {NULL}},
    {"TFD-T14",
     false,
     {"Root", "MapAndBatch"},
     1,
     {"autotune=false", "name=fused(MapDataset:2,BatchDatasetV2:3)"},
     {"threadpool_size=1", "cpu_budget=8"}},
    {"TFD-T04", true, {"Model", "ParallelMapV2"}, 1, {"autotune=true"}, {NULL}},
    {"TFD-T04", false, {"Model", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-T14",
     true,
     {"Root", "ParallelMapV2"},
     1,
     {"autotune=true"},
     {"threadpool_size=1", "cpu_budget=8"}},
    {"TFD-T14",
     false,
     {"Root", "ParallelMapV2"},
     1,
     {"autotune=true"},
     {"threadpool_size=8", "cpu_budget=8"}},
    {"TFD-T14", false, {"Root", "ParallelMapV2"}, 1, {"autotune=true"}, {"cpu_budget=8"}},
    {"TFD-T14", false, {"Root", "Map"}, 1, {NULL}, {"threadpool_size=1", "cpu_budget=8"}},
    /* T05 needs the map's function calls to judge their costs uneven (the
     * CLI suite's real captures: it fires on one slow element in 64); a
     * chain without them is not judged */
    {"TFD-T05", false, {"Model", "ParallelMapV2"}, 1, {"deterministic=true"}, {NULL}},
    {"TFD-T05", false, {"Model", "ParallelMapV2"}, 1, {"deterministic=false"}, {NULL}},
    {"TFD-T16", true, {"Model", "ParallelInterleaveV4"}, 1, {"deterministic=true"}, {NULL}},
    {"TFD-T16", false, {"Model", "ParallelInterleaveV4"}, 1, {"deterministic=false"}, {NULL}},
    {"TFD-T16", false, {"Model", "ParallelMapV2"}, 1, {"deterministic=true"}, {NULL}},
    {"TFD-T06", true, {"Model", "ParallelInterleaveV4"}, 1, {NULL}, {NULL}},
    {"TFD-T06", false, {"Model", "Interleave"}, 1, {NULL}, {NULL}},
    {"TFD-T07", true, {"Model", "BatchV2"}, 1, {"batch_size=64"}, {NULL}},
    {"TFD-T07", false, {"Model", "PaddedBatchV2"}, 1, {NULL}, {NULL}},
    {"TFD-T08", true, {"Model", "PaddedBatchV2"}, 1, {NULL}, {NULL}},
    {"TFD-T08", false, {"Model", "BatchV2"}, 1, {NULL}, {NULL}},
    {"TFD-T09", true, {"Model", "ShuffleAndRepeat"}, 1, {NULL}, {NULL}},
    {"TFD-T09", false, {"Model", "ForeverRepeat"}, 1, {NULL}, {NULL}},
    {"TFD-T10", true, {"Model", "MemoryCacheImpl"}, 1, {NULL}, {NULL}},
    {"TFD-T10", false, {"Model", "Map"}, 1, {NULL}, {NULL}},
    /* a bigger buffer only when the producer keeps up on average: one root
     * call gives no capacity model, so no evidence of that */
    {"TFD-T11", false, {"Model", "Prefetch", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-T11", false, {"Model", "Prefetch", "Map"}, 2, {NULL}, {NULL}},
    {"TFD-T12", true, {"Model", "Map"}, 0, {NULL}, {NULL}},
    {"TFD-T12", false, {"Model", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-T99", true, {"Model", "AssertCardinality"}, 1, {NULL}, {NULL}},
    {"TFD-T99", false, {"Model", "BatchV2"}, 1, {NULL}, {NULL}},
    {"TFD-T99", false, {"Model", "ParallelMapV2"}, 1, {NULL}, {NULL}},
    {"TFD-T99", false, {"Model", "ParallelInterleaveV4"}, 1, {NULL}, {NULL}},
    /* a stage below a cache: its first epoch (T18), or every epoch when a
     * repeat below the cache makes its input endless (T19) */
    {"TFD-T18", true, {"Model", "MemoryCache", "Map"}, 2, {NULL}, {NULL}},
    {"TFD-T18", true, {"Model", "ForeverRepeat", "MemoryCache", "Map"}, 3, {NULL}, {NULL}},
    {"TFD-T18", false, {"Model", "MemoryCache", "ForeverRepeat", "Map"}, 3, {NULL}, {NULL}},
    {"TFD-T18", false, {"Model", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-T19", true, {"Model", "MemoryCache", "ForeverRepeat", "Map"}, 3, {NULL}, {NULL}},
    {"TFD-T19", true, {"Model", "FileCacheImpl", "FiniteRepeat", "Map"}, 3, {NULL}, {NULL}},
    {"TFD-T19", false, {"Model", "ForeverRepeat", "MemoryCache", "Map"}, 3, {NULL}, {NULL}},
    {"TFD-P01", true, {"Model", "Map"}, 1, {NULL}, {NULL}},
    {"TFD-P01", false, {"Model", "Prefetch", "Map"}, 2, {NULL}, {NULL}},
    /* an async last stage runs ahead of the step by itself; a root that is
     * itself the last stage (Iterator::Prefetch, no Model above it) too */
    {"TFD-P01", false, {"Model", "ParallelMapV2", "Map"}, 2, {NULL}, {NULL}},
    {"TFD-P01", false, {"Prefetch", "Map"}, 1, {NULL}, {NULL}},
    /* a prefetch under a repeat or a take (`.prefetch(2).repeat()` last,
     * with no prefetch injected) serves the step as one above them would */
    {"TFD-P01", false, {"Model", "ForeverRepeat", "Prefetch", "Map"}, 3, {NULL}, {NULL}},
    {"TFD-P01",
     false,
     {"Model", "FiniteTake", "ForeverRepeat", "Prefetch", "Map"},
     4,
     {NULL},
     {NULL}},
    {"TFD-P01", true, {"Model", "ForeverRepeat", "Map"}, 2, {NULL}, {NULL}},
    {"TFD-P01", true, {"Model", "Shuffle", "Prefetch", "Map"}, 3, {NULL}, {NULL}},
};

static void every_rule_fires_and_misses(struct t *t)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct fx f;
		bool got;

		fx_init(&f);
		root_kv = cases[i].root;
		chain(&f, cases[i].names, cases[i].b, cases[i].kv, 0, 1000);
		root_kv = NULL;
		got = fires(t, &f, cases[i].rule);
		if (got != cases[i].fire)
			T_FAILF("case %zu: %s on %s/%s should %sfire", i, cases[i].rule,
				cases[i].names[0], cases[i].names[cases[i].b],
				cases[i].fire ? "" : "not ");
	}
}

/* Reads under a parallel interleave whose parameters say how many files it
 * reads at once: one (AUTOTUNE kept it there: S07; a cycle_length of 1
 * written: S08), more (S02), or not said (S02, as before) */
struct reads_case {
	const char *rule;
	bool fire;
	const char *names[4];
	const char *above[4]; /* the interleave's parameters */
};

static const struct reads_case reads_cases[] = {
    {"TFD-S02",
     true,
     {"Model", "ParallelInterleaveV4", "TFRecord"},
     {"cycle_length=4", "parallelism=4", "autotune=true"}},
    {"TFD-S02",
     false,
     {"Model", "ParallelInterleaveV4", "TFRecord"},
     {"cycle_length=1", "parallelism=1", "autotune=true"}},
    {"TFD-S07",
     true,
     {"Model", "ParallelInterleaveV4", "TFRecord"},
     {"cycle_length=1", "parallelism=1", "autotune=true"}},
    {"TFD-S07",
     false,
     {"Model", "ParallelInterleaveV4", "TFRecord"},
     {"cycle_length=4", "parallelism=2", "autotune=true"}},
    {"TFD-S08",
     true,
     {"Model", "LegacyParallelInterleaveV2", "TFRecord"},
     {"cycle_length=1", "autotune=false"}},
    {"TFD-S08",
     false,
     {"Model", "ParallelInterleaveV4", "TFRecord"},
     {"cycle_length=1", "parallelism=1", "autotune=true"}},
    {"TFD-S07", false, {"Model", "ParallelInterleaveV4", "TFRecord"}, {NULL}},
};

static void reads_one_at_a_time(struct t *t)
{
	for (size_t i = 0; i < sizeof(reads_cases) / sizeof(reads_cases[0]); i++) {
		struct fx f;

		fx_init(&f);
		above_kv = reads_cases[i].above;
		chain(&f, reads_cases[i].names, 2, NULL, 0, 1000);
		above_kv = NULL;
		if (fires(t, &f, reads_cases[i].rule) != reads_cases[i].fire)
			T_FAILF("reads case %zu: %s should %sfire", i, reads_cases[i].rule,
				reads_cases[i].fire ? "" : "not ");
	}
}

/* shuffle warm-up: a slow first call, then steady ones */
static void warmup_rule(struct t *t)
{
	static const char *const with[] = {"Model", "ShuffleAndRepeat", "Map", NULL};
	static const char *const without[] = {"Model", "Repeat", "Map", NULL};

	for (int k = 0; k < 2; k++) {
		struct fx f;

		fx_init(&f);
		chain(&f, k ? without : with, 2, NULL, 0, 5000);
		for (int i = 1; i < 10; i++)
			chain(&f, k ? without : with, 2, NULL, i * 10000 * US, 100);
		T_TRUE(fires(t, &f, "TFD-P02") == (k == 0));
	}
}

/* host rules: input-bound share from step markers and GetNext events */
static void host_rules(struct t *t)
{
	static const char *const names[] = {"Model", "Map", NULL};
	struct fx f;

	/* 1 us of 1 ms waiting: 0.1 %, not input-bound */
	fx_init(&f);
	chain(&f, names, 1, NULL, 0, 1000);
	fx_ev(&f, 5, "StepMarker", 0, 1000 * US, "group_id=1", NULL);
	fx_ev(&f, 6, "IteratorGetNext:IteratorGetNext", 0, 1 * US, "group_id=1", NULL);
	T_TRUE(fires(t, &f, "TFD-H01"));
	/* half the step waiting */
	fx_init(&f);
	chain(&f, names, 1, NULL, 0, 1000);
	fx_ev(&f, 5, "StepMarker", 0, 1000 * US, "group_id=1", NULL);
	fx_ev(&f, 6, "IteratorGetNextOp::DoCompute", 0, 500 * US, "group_id=1", NULL);
	T_TRUE(!fires(t, &f, "TFD-H01"));
	/* no step data, every call fast */
	fx_init(&f);
	chain(&f, names, 1, NULL, 0, 30);
	T_TRUE(fires(t, &f, "TFD-H02"));
	fx_init(&f);
	chain(&f, names, 1, NULL, 0, 1000);
	T_TRUE(!fires(t, &f, "TFD-H02"));
}

/* ten 1 ms steps 0.2 ms apart; with gap_ms > 0, one stretch of gap_ms
 * between the fifth and the sixth */
static void gap_steps(struct fx *f, int gap_ms)
{
	static const char *const names[] = {"Model", "Map", NULL};
	int64_t t = 0;

	for (int i = 0; i < 10; i++) {
		char gid[32];

		snprintf(gid, sizeof(gid), "group_id=%d", i + 1);
		chain(f, names, 1, NULL, t, 100);
		fx_ev(f, 5, "StepMarker", t, 1000 * US, gid, NULL);
		fx_ev(f, 6, "IteratorGetNext:IteratorGetNext", t, 100 * US, gid, NULL);
		t += (i == 4 && gap_ms ? 1000 + gap_ms * 1000 : 1200) * US;
	}
}

/* TFD-H12: a long stretch between the steps (the share leaves it out),
 * worth its time four times rarer */
static void between_steps_rule(struct t *t)
{
	struct fx f;
	struct tfd_analysis *a = NULL;
	struct tfd_ruleset *rs = NULL;
	struct tfd_findings fs;
	struct tfd_err err = {0};
	const struct tfd_finding *h12 = NULL;
	double S, G;

	fx_init(&f);
	gap_steps(&f, 0);
	T_TRUE(!fires(t, &f, "TFD-H12"));
	fx_init(&f);
	gap_steps(&f, 20);
	fx_finish(&f);
	T_OK(tfd_analyze(f.cap, NULL, &a, &err), &err);
	T_EQ_I64(a->hosts[0].nbetween, 1);
	T_EQ_I64(a->hosts[0].between_ns, 20000000);
	T_EQ_I64(a->hosts[0].steps_span_ns, 9 * 1200000 + 1000000 + 20000000 - 200000);
	T_OK(tfd_rules_load_builtin(&rs, &err), &err);
	tfd_rules_eval(rs, a, &fs);
	for (size_t i = 0; i < fs.n; i++)
		if (strcmp(fs.v[i].rule_id, "TFD-H12") == 0)
			h12 = &fs.v[i];
	T_TRUE(h12 != NULL);
	S = (double)a->hosts[0].steps_span_ns;
	G = 20e6;
	T_TRUE(h12 && h12->estimate.known &&
	       fabs(h12->estimate.step_speedup - S / (S - G * 0.75)) < 1e-3);
	tfd_findings_free(&fs);
	tfd_rules_free(rs);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* a host rule's pipeline_has / pipeline_lacks: the host's focus pipeline */
static void host_rule_focus_families(struct t *t)
{
	static const char *const names[] = {"Model", "Map", NULL};
	static const char text[] =
	    "{\"rules\": ["
	    "{\"id\": \"HA\", \"title\": \"t\", \"class\": \"other\", \"suggestion\": \"s\", "
	    "\"target\": \"host\", \"pipeline_has\": [\"Map\"]},"
	    "{\"id\": \"HB\", \"title\": \"t\", \"class\": \"other\", \"suggestion\": \"s\", "
	    "\"target\": \"host\", \"pipeline_lacks\": [\"Map\"]},"
	    "{\"id\": \"HC\", \"title\": \"t\", \"class\": \"other\", \"suggestion\": \"s\", "
	    "\"target\": \"host\", \"pipeline_lacks\": [\"Generator\"]}]}";
	struct fx f;
	struct tfd_analysis *a = NULL;
	struct tfd_ruleset *rs = NULL;
	struct tfd_findings fs;
	struct tfd_err err = {0};
	char got[16] = "";

	fx_init(&f);
	chain(&f, names, 1, NULL, 0, 1000);
	fx_finish(&f);
	T_OK(tfd_analyze(f.cap, NULL, &a, &err), &err);
	T_OK(tfd_rules_load_mem(text, strlen(text), "r.json", &rs, &err), &err);
	tfd_rules_eval(rs, a, &fs);
	for (size_t i = 0; i < fs.n; i++)
		if (strlen(got) + strlen(fs.v[i].rule_id) + 2 < sizeof(got)) {
			strcat(got, fs.v[i].rule_id);
			strcat(got, " ");
		}
	T_EQ_STR(got, "HA HC ");
	tfd_findings_free(&fs);
	tfd_rules_free(rs);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

static void estimate_model(struct t *t)
{
	static const char *const names[] = {"Model", "Map", NULL};
	struct tfd_analysis *a = NULL;
	struct tfd_ruleset *rs = NULL;
	struct tfd_findings fs;
	struct tfd_err err = {0};
	struct fx f;
	const struct tfd_finding *t01 = NULL;

	fx_init(&f);
	chain(&f, names, 1, NULL, 0, 1000);
	fx_finish(&f);
	T_OK(tfd_analyze(f.cap, NULL, &a, &err), &err);
	T_OK(tfd_rules_load_builtin(&rs, &err), &err);
	tfd_rules_eval(rs, a, &fs);
	for (size_t i = 0; i < fs.n; i++)
		if (strcmp(fs.v[i].rule_id, "TFD-T01") == 0)
			t01 = &fs.v[i];
	T_TRUE(t01 != NULL);
	T_TRUE(t01->estimate.known);
	/* Map spans [5, 995] us and has no child: B = 990 us of L = 1000 us;
	 * scale 4: L' = 1000 - 990 + 990 / 4 = 257.5 us */
	T_EQ_I64(t01->estimate.latency_ns, 1000000);
	T_EQ_I64(t01->estimate.new_latency_ns, 257500);
	T_EQ_DBL(t01->estimate.speedup, 1000.0 / 257.5, 1e-9);
	T_EQ_STR(fs.v[0].rule_id, "TFD-T01"); /* high severity first */
	tfd_findings_free(&fs);
	tfd_rules_free(rs);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

static void load_errors(struct t *t)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
	    {"{\"rules\": [", "invalid JSON"},
	    {"[]", "a rule file is a JSON object"},
	    {"{\"rulez\": []}", "unknown top-level key 'rulez'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": \"s\", \"colour\": 1}]}",
	     "rule 'X1': unknown key 'colour'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": 5, \"class\": \"other\", \"suggestion\": "
	     "\"s\"}]}",
	     "rule 'X1': field 'title' must be a string"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"family\": [\"MapV9\"]}]}",
	     "rule 'X1': field 'family' names unknown iterator family 'MapV9'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\"}, {\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", \"suggestion\": "
	     "\"s\"}]}",
	     "rule 'X1': duplicate id"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"when\": [{\"metric\": \"speed\", \"op\": \">\", \"value\": 1}]}]}",
	     "rule 'X1': unknown metric 'speed'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"when\": [{\"metric\": \"blocking_share\", \"op\": \"~\", \"value\": 1}]}]}",
	     "unknown operator '~'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"when\": [{\"metric\": \"blocking_share\", \"op\": \">\", \"value\": "
	     "\"x\"}]}]}",
	     "needs a number value"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"demote_when\": {}}]}",
	     "rule 'X1': field 'demote_when' must be an array"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"slowness\", "
	     "\"suggestion\": "
	     "\"s\"}]}",
	     "unknown class 'slowness'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"severity\": \"urgent\"}]}",
	     "field 'severity' must be one of"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\"}]}",
	     "missing field 'suggestion'"},
	    /* found by fuzzing: a repeated key used to leak the first value */
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"title\": \"u\", \"class\": "
	     "\"other\", \"suggestion\": \"s\"}]}",
	     "rule 'X1': duplicate key 'title'"},
	    {"{\"rules\": [], \"rules\": []}", "duplicate top-level key 'rules'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"estimate\": {\"model\": \"scale\"}}]}",
	     "needs a 'factor'"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": "
	     "\"s\", \"target\": \"host\", \"when\": [{\"metric\": \"blocking_share\", \"op\": "
	     "\">\", "
	     "\"value\": 1}]}]}",
	     "needs a narrower target"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": \"s\", \"estimate\": {\"model\": \"remove\", \"to\": 16}}]}",
	     "'estimate.to' sets a parallelism"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": \"s\", \"estimate\": {\"model\": \"scale\", \"to\": 16}}]}",
	     "'estimate.to' sets a parallelism"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": \"s\", \"estimate\": {\"model\": \"scale\", \"of\": "
	     "\"parallelism\", \"to\": 0.5}}]}",
	     "'estimate.to' must be a number >= 1"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": \"s\", \"target\": \"host\", \"estimate\": {\"model\": "
	     "\"fewer_gaps\"}}]}",
	     "'fewer_gaps' needs a 'factor' above 1"},
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": \"s\", \"estimate\": {\"model\": \"fewer_gaps\", \"factor\": "
	     "4}}]}",
	     "'fewer_gaps' goes with target 'host' only"},
	    /* ops_share sums the rule's own "ops": without them it says nothing */
	    {"{\"rules\": [{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", "
	     "\"suggestion\": \"s\", \"when\": [{\"metric\": \"ops_share\", \"op\": \">=\", "
	     "\"value\": 0.4}]}]}",
	     "rule 'X1': metric 'ops_share' needs the rule's 'ops'"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct tfd_ruleset *rs = NULL;
		struct tfd_err err = {0};
		enum tfd_status st =
		    tfd_rules_load_mem(bad[i].text, strlen(bad[i].text), "r.json", &rs, &err);

		if (st != TFD_E_RULES || !strstr(err.msg, bad[i].want) ||
		    strncmp(err.msg, "r.json: ", 8) != 0)
			T_FAILF("case %zu: want '%s', got status %d '%s'", i, bad[i].want, st,
				err.msg);
		T_TRUE(rs == NULL);
	}
}

/* demote_when: the finding stays, at severity low, when all its conditions hold */
static void demote_when(struct t *t)
{
	static const char *const names[] = {"Model", "ParallelMapV2", NULL};
	const char *text =
	    "{\"rules\": ["
	    "{\"id\": \"X1\", \"title\": \"t\", \"class\": \"other\", \"suggestion\": \"s\", "
	    "\"severity\": \"high\", \"family\": [\"ParallelMap\"], \"demote_when\": "
	    "[{\"metric\": \"blocking_share\", \"op\": \">=\", \"value\": 0}]},"
	    "{\"id\": \"X2\", \"title\": \"t\", \"class\": \"other\", \"suggestion\": \"s\", "
	    "\"severity\": \"high\", \"family\": [\"ParallelMap\"], \"demote_when\": "
	    "[{\"metric\": \"blocking_share\", \"op\": \">=\", \"value\": 0}, "
	    "{\"metric\": \"blocking_share\", \"op\": \">\", \"value\": 2}]}]}";
	struct tfd_ruleset *rs = NULL;
	struct tfd_analysis *a = NULL;
	struct tfd_findings fs;
	struct tfd_err err = {0};
	struct fx f;
	int seen = 0;

	fx_init(&f);
	chain(&f, names, 1, NULL, 0, 1000);
	fx_finish(&f);
	T_OK(tfd_analyze(f.cap, NULL, &a, &err), &err);
	T_OK(tfd_rules_load_mem(text, strlen(text), "r.json", &rs, &err), &err);
	tfd_rules_eval(rs, a, &fs);
	for (size_t i = 0; i < fs.n; i++) {
		if (strcmp(fs.v[i].rule_id, "X1") == 0) {
			T_TRUE(fs.v[i].severity == TFD_SEV_LOW);
			seen++;
		} else if (strcmp(fs.v[i].rule_id, "X2") == 0) {
			T_TRUE(fs.v[i].severity == TFD_SEV_HIGH);
			seen++;
		}
	}
	T_TRUE(seen == 2);
	tfd_findings_free(&fs);
	tfd_rules_free(rs);
	tfd_analysis_free(a);
	tfd_capture_free(f.cap);
}

/* rules/ on disk is what the binary embeds */
static void builtin_matches_rules_dir(struct t *t)
{
	size_t n = 0;

	for (const struct tfd_rules_file *f = tfd_rules_builtin; f->name; f++) {
		char path[256], *buf;
		FILE *fp;
		long len;

		snprintf(path, sizeof(path), "rules/%s", f->name);
		fp = fopen(path, "rb");
		T_TRUE(fp != NULL);
		fseek(fp, 0, SEEK_END);
		len = ftell(fp);
		fseek(fp, 0, SEEK_SET);
		buf = calloc(1, (size_t)len + 1);
		T_TRUE(fread(buf, 1, (size_t)len, fp) == (size_t)len);
		fclose(fp);
		if (strcmp(buf, f->text) != 0) {
			free(buf);
			T_FAILF("rules/%s differs from the built-in copy: rebuild", f->name);
		}
		free(buf);
		n++;
	}
	T_TRUE(n >= 4);
}

/* A message cut to fit says so, and is never cut inside an "\xNN" or a
 * UTF-8 character (tfd_str_escape_controls) */
static void escaped_cut_says_so(struct t *t)
{
	char out[12];

	tfd_str_escape_controls("abc", out, sizeof(out));
	T_EQ_STR(out, "abc");
	tfd_str_escape_controls("abcdefgh\x1bxyz", out, sizeof(out)); /* abcdefgh\x1bxyz */
	T_EQ_STR(out, "abcdefgh...");
	tfd_str_escape_controls("abcdef\x1bxyz", out, sizeof(out)); /* the \x1b would be cut */
	T_EQ_STR(out, "abcdef...");
	tfd_str_escape_controls("abcdefg\xc3\xa9xyz", out, sizeof(out)); /* an e-acute at the cut */
	T_EQ_STR(out, "abcdefg...");
	tfd_str_escape_controls("abcdefghijk", out, sizeof(out)); /* fits exactly */
	T_EQ_STR(out, "abcdefghijk");
}

/* why a change is worth ~1.0x: the stage is not the limit, the pool's
 * threads are, the step already is, or the cores are (then more threads
 * gain nothing, while the stage is the limit) */
static void worth_says_why_nothing(struct t *t)
{
	struct tfd_estimate e = {.known = true,
				 .basis = "capacity",
				 .speedup = 1.0,
				 .misses_limit = true,
				 .input_percent_after = NAN};
	struct tfd_buf b;

	tfd_buf_init(&b);
	T_TRUE(tfd_fmt_worth(&e, &b));
	T_TRUE(strstr(b.s, "this stage does not limit throughput") != NULL);
	tfd_buf_release(&b);
	tfd_buf_init(&b);
	e.capped_by_pool = true;
	T_TRUE(tfd_fmt_worth(&e, &b));
	T_TRUE(strstr(b.s, "the threads of the pool the functions run on are the limit") != NULL);
	tfd_buf_release(&b);
	tfd_buf_init(&b);
	e.capped_by_pool = false;
	e.capped_by_cores = true;
	T_TRUE(tfd_fmt_worth(&e, &b));
	T_TRUE(strstr(b.s, "the host's cores are already the limit") != NULL);
	tfd_buf_release(&b);
	tfd_buf_init(&b);
	e.input_bound_by_demand = true;
	T_TRUE(tfd_fmt_worth(&e, &b));
	T_TRUE(strstr(b.s, "already delivers faster than the step consumes") != NULL);
	tfd_buf_release(&b);
}

const struct t_case rules_cases[] = {
    T(every_rule_fires_and_misses),
    T(reads_one_at_a_time),
    T(warmup_rule),
    T(host_rules),
    T(host_rule_focus_families),
    T(between_steps_rule),
    T(estimate_model),
    T(demote_when),
    T(load_errors),
    T(builtin_matches_rules_dir),
    T(escaped_cut_says_so),
    T(worth_says_why_nothing),
    {0},
};
