/* test_xprof.c - the upstream acceptance tests (xprof-reference.md section
 * 4), ported as a peer suite with the exact expected numbers. */
#include "fixture.h"
#include "t.h"
#include "tfd/xprof.h"

#define US 1000000LL

static const struct tfd_xp_iter_stat *it_stat(const struct tfd_xp_call *c, int64_t id)
{
	for (size_t i = 0; i < c->niters; i++)
		if (c->iters[i].id == id)
			return &c->iters[i];
	return NULL;
}

static const struct tfd_xp_meta *meta(const struct tfd_xp_host *h, int64_t id)
{
	for (size_t i = 0; i < h->nmetas; i++)
		if (h->metas[i].id == id)
			return &h->metas[i];
	return NULL;
}

#define T_ITER(c, ID, START, DUR, SELF, BLOCK, CALLS)                   \
	do {                                                             \
		const struct tfd_xp_iter_stat *s_ = it_stat((c), (ID));    \
		T_TRUE(s_ != NULL);                                      \
		T_EQ_I64(s_->start_time_ps, (START));                    \
		T_EQ_I64(s_->duration_ps, (DUR));                        \
		T_EQ_I64(s_->self_time_ps, (SELF));                      \
		T_EQ_I64(s_->is_blocking, (BLOCK));                      \
		T_EQ_I64(s_->num_calls, (CALLS));                        \
	} while (0)

static struct tfd_xprof *run(struct t *t, struct fx *f)
{
	struct tfd_xprof *x = NULL;
	struct tfd_err err = {0};

	fx_finish(f);
	T_OK(tfd_xprof_run(f->cap, &x, &err), &err);
	return x;
}

static void host_input_pipeline(struct t *t)
{
	struct fx f;
	struct tfd_xprof *x;
	const struct tfd_xp_host *h;
	const struct tfd_xp_pipeline *p;
	const struct tfd_xp_meta *m;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Prefetch", 0, 100 * US, "id=123", NULL);
	fx_ev(&f, 0, "PrefetchConsume", 80 * US, 20 * US, "element_id=100", NULL);
	fx_ev(&f, 0, "Iterator::Prefetch", 200 * US, 20 * US, "id=123", NULL);
	fx_ev(&f, 0, "PrefetchConsume", 210 * US, 10 * US, "element_id=200", NULL);
	fx_ev(&f, 1, "PrefetchProduce", 0, 80 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "Iterator::Prefetch::Range", 0, 80 * US, "id=456", "parent_id=123", NULL);
	fx_ev(&f, 1, "PrefetchProduce", 100 * US, 80 * US, "element_id=200", NULL);
	fx_ev(&f, 1, "Iterator::Prefetch::Range", 100 * US, 80 * US, "id=456", "parent_id=123",
	      NULL);
	x = run(t, &f);
	T_EQ_I64(x->nrows, 1);
	T_EQ_STR(x->rows[0].host, "host1");
	T_EQ_STR(x->rows[0].input_pipeline, "Host:0");
	T_EQ_I64(x->rows[0].max_latency_ps, 100 * US);
	T_EQ_STR(x->rows[0].iterator_name, "Range");
	T_EQ_STR(x->rows[0].iterator_long_name, "Iterator::Prefetch::Range");
	T_EQ_I64(x->rows[0].iterator_latency_ps, 80 * US);
	T_EQ_STR(x->rows[0].suggestion,
		 "See <a href=\"https://www.tensorflow.org/guide/data_performance_analysis\" "
		 "target=\"_blank\">this</a> for suggestions.");
	h = &x->hosts[0];
	m = meta(h, 123);
	T_TRUE(m && m->parent_id == 0 && m->is_async);
	T_EQ_STR(m->name, "Prefetch");
	T_EQ_STR(m->long_name, "Iterator::Prefetch");
	m = meta(h, 456);
	T_TRUE(m && m->parent_id == 123 && !m->is_async);
	T_EQ_STR(m->name, "Range");
	T_EQ_I64(h->npipelines, 1);
	p = &h->pipelines[0];
	T_EQ_I64(p->id, 123);
	T_TRUE(!p->is_device);
	T_EQ_STR(p->name, "Host:0");
	T_EQ_I64(p->avg_latency_ps, 60 * US);
	T_EQ_I64(p->min_latency_ps, 20 * US);
	T_EQ_I64(p->max_latency_ps, 100 * US);
	T_EQ_I64(p->num_slow_calls, 1);
	T_EQ_I64(p->nstats, 2);
	T_EQ_I64(p->stats[0].bottleneck_iterator_id, 456);
	T_EQ_I64(p->stats[0].bottleneck_iterator_latency_ps, 80 * US);
	T_ITER(&p->stats[0], 123, 0, 100 * US, 20 * US, 1, 1);
	T_ITER(&p->stats[0], 456, 0, 80 * US, 80 * US, 1, 1);
	T_EQ_I64(p->stats[1].bottleneck_iterator_id, 123);
	T_EQ_I64(p->stats[1].bottleneck_iterator_latency_ps, 20 * US);
	T_ITER(&p->stats[1], 123, 200 * US, 20 * US, 20 * US, 1, 1);
	T_ITER(&p->stats[1], 456, 100 * US, 80 * US, 80 * US, 0, 1);
	T_TRUE(x->is_input_bound);
	T_EQ_STR(x->summary, TFD_XP_SUMMARY_SLOW);
	tfd_xprof_free(x);
	tfd_capture_free(f.cap);
}

static void device_input_pipeline(struct t *t)
{
	struct fx f;
	struct tfd_xprof *x;
	const struct tfd_xp_pipeline *p;
	const struct tfd_xp_meta *m;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Prefetch", 0, 30 * US, "id=123", NULL);
	fx_ev(&f, 0, "Iterator::Prefetch", 100 * US, 100 * US, "id=123", NULL);
	fx_ev(&f, 0, "PrefetchConsume", 180 * US, 20 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "PrefetchProduce", 100 * US, 80 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "Iterator::Prefetch::Generator", 100 * US, 80 * US, "id=456",
	      "parent_id=123", NULL);
	x = run(t, &f);
	T_EQ_I64(x->nrows, 0);
	T_TRUE(!x->is_input_bound);
	T_EQ_STR(x->summary, TFD_XP_SUMMARY_NONE);
	m = meta(&x->hosts[0], 123);
	T_TRUE(m && m->is_async);
	T_EQ_STR(m->name, "Prefetch");
	m = meta(&x->hosts[0], 456);
	T_TRUE(m && m->parent_id == 123 && !m->is_async);
	T_EQ_STR(m->name, "Generator");
	T_EQ_STR(m->long_name, "Iterator::Prefetch::Generator");
	p = &x->hosts[0].pipelines[0];
	T_TRUE(p->is_device);
	T_EQ_STR(p->name, "Device:0");
	T_EQ_I64(p->avg_latency_ps, 65 * US);
	T_EQ_I64(p->min_latency_ps, 30 * US);
	T_EQ_I64(p->max_latency_ps, 100 * US);
	T_EQ_I64(p->num_slow_calls, 1);
	T_EQ_I64(p->nstats, 2);
	T_EQ_I64(p->stats[0].bottleneck_iterator_id, 456);
	T_EQ_I64(p->stats[0].bottleneck_iterator_latency_ps, 80 * US);
	T_ITER(&p->stats[0], 123, 100 * US, 100 * US, 20 * US, 1, 1);
	T_ITER(&p->stats[0], 456, 100 * US, 80 * US, 80 * US, 1, 1);
	T_EQ_I64(p->stats[1].bottleneck_iterator_id, 123);
	T_EQ_I64(p->stats[1].bottleneck_iterator_latency_ps, 30 * US);
	T_EQ_I64(p->stats[1].niters, 1);
	T_ITER(&p->stats[1], 123, 0, 30 * US, 30 * US, 1, 1);
	tfd_xprof_free(x);
	tfd_capture_free(f.cap);
}

static void map_and_batch(struct t *t)
{
	struct fx f;
	struct tfd_xprof *x;
	const struct tfd_xp_pipeline *p;
	const struct tfd_xp_meta *m;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::MapAndBatch", 0, 100 * US, "id=123", NULL);
	fx_ev(&f, 0, "MapAndBatchConsume", 80 * US, 20 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "MapAndBatchProduce", 0, 30 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "Iterator::MapAndBatch::Range", 0, 30 * US, "id=456", "parent_id=123", NULL);
	fx_ev(&f, 1, "MapAndBatchProduce", 40 * US, 30 * US, "element_id=100", NULL);
	fx_ev(&f, 1, "Iterator::MapAndBatch::Range", 40 * US, 30 * US, "id=456", "parent_id=123",
	      NULL);
	x = run(t, &f);
	T_EQ_I64(x->nrows, 1);
	T_EQ_I64(x->rows[0].max_latency_ps, 100 * US);
	T_EQ_STR(x->rows[0].iterator_name, "Range");
	T_EQ_STR(x->rows[0].iterator_long_name, "Iterator::MapAndBatch::Range");
	T_EQ_I64(x->rows[0].iterator_latency_ps, 60 * US);
	m = meta(&x->hosts[0], 123);
	T_TRUE(m && m->is_async);
	T_EQ_STR(m->name, "MapAndBatch");
	m = meta(&x->hosts[0], 456);
	T_TRUE(m && !m->is_async && m->parent_id == 123);
	p = &x->hosts[0].pipelines[0];
	T_EQ_I64(p->avg_latency_ps, 100 * US);
	T_EQ_I64(p->min_latency_ps, 100 * US);
	T_EQ_I64(p->max_latency_ps, 100 * US);
	T_EQ_I64(p->num_slow_calls, 1);
	T_EQ_I64(p->stats[0].bottleneck_iterator_id, 456);
	T_EQ_I64(p->stats[0].bottleneck_iterator_latency_ps, 60 * US);
	T_ITER(&p->stats[0], 123, 0, 100 * US, 40 * US, 1, 1);
	T_ITER(&p->stats[0], 456, 0, 60 * US, 60 * US, 1, 2);
	T_TRUE(x->is_input_bound);
	T_EQ_STR(x->summary, TFD_XP_SUMMARY_SLOW);
	tfd_xprof_free(x);
	tfd_capture_free(f.cap);
}

/* Section 8.7: a call with no blocking iterator gives bottleneck id 0,
 * which has no metadata: upstream aborts, we give empty names. */
static void bottleneck_without_metadata(struct t *t)
{
	struct fx f;
	struct tfd_xprof *x;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 0, 0, "id=7", NULL);
	x = run(t, &f);
	T_EQ_I64(x->nrows, 1);
	T_EQ_STR(x->rows[0].iterator_name, "");
	T_EQ_I64(x->rows[0].iterator_latency_ps, 0);
	T_EQ_STR(x->summary, TFD_XP_SUMMARY_NONE);
	tfd_xprof_free(x);
	tfd_capture_free(f.cap);
}

/* Section 8.2: equal durations and ties resolve the same way every run. */
static void deterministic_ties(struct t *t)
{
	struct fx f;
	struct tfd_xprof *x;
	const struct tfd_xp_pipeline *p;

	fx_init(&f);
	fx_ev(&f, 0, "Iterator::Model", 200 * US, 60 * US, "id=9", NULL);
	fx_ev(&f, 1, "Iterator::Root", 100 * US, 60 * US, "id=5", NULL);
	fx_ev(&f, 1, "Iterator::Root", 300 * US, 60 * US, "id=5", NULL);
	x = run(t, &f);
	T_EQ_STR(x->hosts[0].pipelines[0].name, "Host:0");
	T_EQ_I64(x->hosts[0].pipelines[0].id, 5); /* first call wins the lower number */
	p = &x->hosts[0].pipelines[0];
	T_EQ_I64(p->stats[0].iters[0].start_time_ps, 100 * US); /* equal length: time order */
	T_EQ_STR(x->rows[0].input_pipeline, "Host:0");
	T_EQ_STR(x->rows[1].input_pipeline, "Host:1");
	tfd_xprof_free(x);
	tfd_capture_free(f.cap);
}

static void type_table(struct t *t)
{
	T_EQ_I64(tfd_xprof_type("TFRecord"), TFD_XP_SLOW_SOURCE);
	T_EQ_I64(tfd_xprof_type("Generator"), TFD_XP_SLOW_SOURCE);
	T_EQ_I64(tfd_xprof_type("DataService"), TFD_XP_SLOW_DATA_SERVICE);
	T_EQ_I64(tfd_xprof_type("Courier"), TFD_XP_SLOW_REMOTE_SOURCE);
	T_EQ_I64(tfd_xprof_type("Map"), TFD_XP_SLOW_TRANSFORMATION_WITH_PARALLEL_VERSION);
	T_EQ_I64(tfd_xprof_type("Unbatch"), TFD_XP_SLOW_TRANSFORMATION_WITHOUT_PARALLEL_VERSION);
	T_EQ_I64(tfd_xprof_type("BatchV2"), TFD_XP_OTHER); /* exact match upstream */
	T_EQ_I64(tfd_xprof_type("ParallelMapV2"), TFD_XP_OTHER);
}

const struct t_case xprof_cases[] = {
	T(host_input_pipeline),
	T(device_input_pipeline),
	T(map_and_batch),
	T(bottleneck_without_metadata),
	T(deterministic_ties),
	T(type_table),
	{0},
};
