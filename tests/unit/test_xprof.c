/* test_xprof.c - the upstream acceptance tests (xprof-reference.md section
 * 4), ported as a peer suite with the exact expected numbers. */
#include <cjson/cJSON.h>

#include "fixture.h"
#include "t.h"
#include "tfd/buf.h"
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

#define T_ITER(c, ID, START, DUR, SELF, BLOCK, CALLS)                                              \
	do {                                                                                       \
		const struct tfd_xp_iter_stat *s_ = it_stat((c), (ID));                            \
		T_TRUE(s_ != NULL);                                                                \
		T_EQ_I64(s_->start_time_ps, (START));                                              \
		T_EQ_I64(s_->duration_ps, (DUR));                                                  \
		T_EQ_I64(s_->self_time_ps, (SELF));                                                \
		T_EQ_I64(s_->is_blocking, (BLOCK));                                                \
		T_EQ_I64(s_->num_calls, (CALLS));                                                  \
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

	fx_host_input_pipeline(&f, true);
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
	fx_ev(&f, 1, "Iterator::Prefetch::Generator", 100 * US, 80 * US, "id=456", "parent_id=123",
	      NULL);
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

/* ---- the Python converter cases (4.4) over the mock proto ------------- */

static cJSON *gviz(struct t *t, const struct tfd_xprof *x)
{
	struct tfd_buf b;
	cJSON *j;

	tfd_buf_init(&b);
	tfd_xprof_gviz(x, &b);
	j = cJSON_Parse(b.s);
	tfd_buf_release(&b);
	T_TRUE(cJSON_IsArray(j) && cJSON_GetArraySize(j) == 3);
	return j;
}

static const cJSON *cell(const cJSON *table, int row, int col)
{
	const cJSON *r = cJSON_GetArrayItem(cJSON_GetObjectItem(table, "rows"), row);

	return cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "c"), col), "v");
}

/* The mock CombinedTfDataStats of the upstream converter test. */
struct mock {
	struct tfd_xprof x;
	struct tfd_xp_host h;
	struct tfd_xp_meta m[2];
	struct tfd_xp_pipeline p;
	struct tfd_xp_call c;
	struct tfd_xp_iter_stat is[2];
	struct tfd_xp_row row;
};

static void mock_init(struct mock *k)
{
	memset(k, 0, sizeof(*k));
	k->m[0] = (struct tfd_xp_meta){123, 0, "Iterator::Prefetch", "Iterator::Prefetch", true};
	k->m[1] = (struct tfd_xp_meta){456, 123, "Iterator::Map", "Iterator::Prefetch::Map", false};
	k->is[0] = (struct tfd_xp_iter_stat){123, 10 * US, 100 * US, 30 * US, 1, true};
	k->is[1] = (struct tfd_xp_iter_stat){456, 20 * US, 70 * US, 70 * US, 1, true};
	k->c = (struct tfd_xp_call){k->is, 2, 456, 0};
	k->p.id = 123;
	snprintf(k->p.name, sizeof(k->p.name), "Host:0");
	k->p.stats = &k->c;
	k->p.nstats = 1;
	k->p.avg_latency_ps = k->p.min_latency_ps = k->p.max_latency_ps = 100 * US;
	k->p.num_slow_calls = 1;
	k->h = (struct tfd_xp_host){"host1", k->m, 2, &k->p, 1};
	k->row = (struct tfd_xp_row){"bottleneck_host",
				     "bottleneck_input_pipeline",
				     "Iterator::Map",
				     "Iterator::Prefetch::Map",
				     "Suggestion",
				     100 * US,
				     80 * US};
	k->x = (struct tfd_xprof){&k->h, 1, &k->row, 1, true, "Summary"};
}

static void gviz_empty(struct t *t)
{
	struct tfd_xprof x = {NULL, 0, NULL, 0, false, TFD_XP_SUMMARY_NONE};
	cJSON *j = gviz(t, &x);
	const cJSON *t1 = cJSON_GetArrayItem(j, 1);

	T_EQ_I64(cJSON_GetArraySize(cJSON_GetObjectItem(t1, "rows")), 0);
	T_EQ_I64(cJSON_GetArraySize(cJSON_GetObjectItem(t1, "cols")), 7);
	cJSON_Delete(j);
}

static void gviz_graph_table(struct t *t)
{
	struct mock k;
	cJSON *j;
	const cJSON *t0;

	mock_init(&k);
	j = gviz(t, &k.x);
	t0 = cJSON_GetArrayItem(j, 0);
	T_EQ_I64(cJSON_GetArraySize(cJSON_GetObjectItem(t0, "rows")), 2);
	T_EQ_STR(cell(t0, 0, 0)->valuestring, "host1");
	T_EQ_STR(cell(t0, 0, 1)->valuestring, "Host:0");
	T_EQ_I64(cell(t0, 0, 2)->valueint, 0);
	T_EQ_STR(cell(t0, 0, 3)->valuestring, "123");
	T_EQ_STR(cell(t0, 0, 4)->valuestring, "");
	T_EQ_I64(cell(t0, 0, 5)->valueint, 1);
	T_EQ_STR(cell(t0, 1, 0)->valuestring, "host1");
	T_EQ_STR(cell(t0, 1, 1)->valuestring, "Host:0");
	T_EQ_I64(cell(t0, 1, 2)->valueint, 0);
	T_EQ_STR(cell(t0, 1, 3)->valuestring, "456");
	T_EQ_STR(cell(t0, 1, 4)->valuestring, "123");
	T_EQ_I64(cell(t0, 1, 5)->valueint, 2);
	cJSON_Delete(j);
}

static void gviz_summary_table(struct t *t)
{
	struct mock k;
	cJSON *j;
	const cJSON *t1;

	mock_init(&k);
	j = gviz(t, &k.x);
	t1 = cJSON_GetArrayItem(j, 1);
	T_EQ_I64(cJSON_GetArraySize(cJSON_GetObjectItem(t1, "rows")), 1);
	T_EQ_STR(cell(t1, 0, 0)->valuestring, "host1");
	T_EQ_STR(cell(t1, 0, 1)->valuestring, "Host:0");
	T_EQ_I64(cell(t1, 0, 2)->valueint, 100);
	T_EQ_I64(cell(t1, 0, 3)->valueint, 100);
	T_EQ_I64(cell(t1, 0, 4)->valueint, 100);
	T_EQ_I64(cell(t1, 0, 5)->valueint, 1);
	T_EQ_I64(cell(t1, 0, 6)->valueint, 1);
	cJSON_Delete(j);
}

static void gviz_bottleneck_table(struct t *t)
{
	struct mock k;
	cJSON *j;
	const cJSON *t2, *p;

	mock_init(&k);
	j = gviz(t, &k.x);
	t2 = cJSON_GetArrayItem(j, 2);
	T_EQ_STR(cell(t2, 0, 0)->valuestring, "bottleneck_host");
	T_EQ_STR(cell(t2, 0, 1)->valuestring, "bottleneck_input_pipeline");
	T_EQ_I64(cell(t2, 0, 2)->valueint, 100);
	T_EQ_STR(cell(t2, 0, 3)->valuestring,
		 "<u>Iterator Type</u>: <b>Iterator::Map</b><br/><u>Long Name</u>: "
		 "Iterator::Prefetch::Map<br/><u>Latency</u>: 80 us");
	T_EQ_STR(cell(t2, 0, 4)->valuestring, "Suggestion");
	p = cJSON_GetObjectItem(t2, "p");
	T_EQ_STR(cJSON_GetObjectItem(p, "is_input_bound")->valuestring, "true");
	T_EQ_STR(cJSON_GetObjectItem(p, "summary_message")->valuestring, "Summary");
	/* latencies get thousands separators */
	k.row.iterator_latency_ps = 1234567 * US;
	cJSON_Delete(j);
	j = gviz(t, &k.x);
	t2 = cJSON_GetArrayItem(j, 2);
	T_TRUE(strstr(cell(t2, 0, 3)->valuestring, "<u>Latency</u>: 1,234,567 us") != NULL);
	cJSON_Delete(j);
}

const struct t_case xprof_cases[] = {
    T(host_input_pipeline),
    T(device_input_pipeline),
    T(map_and_batch),
    T(bottleneck_without_metadata),
    T(deterministic_ties),
    T(type_table),
    T(gviz_empty),
    T(gviz_graph_table),
    T(gviz_summary_table),
    T(gviz_bottleneck_table),
    {0},
};
