/* partial_write.c - a host result written as a partial (JSON; see
 * include/tfd/partial.h): every field copied, numbers exact. partial.c
 * reads partials back and merges them. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cjson/cJSON.h>

#include "partial_impl.h"
#include "tfd/jsonmem.h"
#include "tfd/partial.h"
#include "tfd/vec.h"

#define MAX_PARTIAL_BYTES (1024u * 1024u * 1024u)

/* ---- writing ---- */

/* a number when a double holds it exactly, else a decimal string */
static cJSON *num_i(int64_t v)
{
	char buf[32];

	if (v > -EXACT_INT && v < EXACT_INT)
		return tfd_json_num((double)v);
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	return cJSON_CreateString(buf);
}

static void put_i(cJSON *o, const char *k, int64_t v)
{
	cJSON_AddItemToObject(o, k, num_i(v));
}

static void put_u(cJSON *o, const char *k, uint64_t v)
{
	if (v < (uint64_t)EXACT_INT) {
		tfd_json_add_num(o, k, (double)v);
	} else {
		char buf[32];

		snprintf(buf, sizeof(buf), "%" PRIu64, v);
		cJSON_AddStringToObject(o, k, buf);
	}
}

/* A double in the fewest digits (15 to 17) that read back as the same
 * double, so finite doubles round-trip bit for bit: cJSON's own printing
 * keeps 15 when they read back within an epsilon, and a value a hair
 * under a half (1884498.4999999998) came back a half, rounded one
 * nanosecond up in the merged report. */
static void put_d(cJSON *o, const char *k, double v)
{
	char buf[40];

	if (isnan(v)) {
		cJSON_AddStringToObject(o, k, "nan");
	} else if (isinf(v)) {
		cJSON_AddStringToObject(o, k, v > 0 ? "inf" : "-inf");
	} else {
		for (int digits = 15; digits <= 17; digits++) {
			snprintf(buf, sizeof(buf), "%.*g", digits, v);
			if (strtod(buf, NULL) == v)
				break;
		}
		cJSON_AddRawToObject(o, k, buf);
	}
}

static void put_s(cJSON *o, const char *k, const char *s)
{
	if (s)
		cJSON_AddStringToObject(o, k, s);
	else
		cJSON_AddNullToObject(o, k);
}

static void put_b(cJSON *o, const char *k, bool v)
{
	cJSON_AddBoolToObject(o, k, v);
}

static void put_fields(cJSON *o, const void *base, const struct fdesc *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const void *at = (const char *)base + f[i].off;

		switch (f[i].kind) {
		case FK_I64:
			put_i(o, f[i].key, *(const int64_t *)at);
			break;
		case FK_U64:
			put_u(o, f[i].key, *(const uint64_t *)at);
			break;
		case FK_SIZE:
			put_u(o, f[i].key, *(const size_t *)at);
			break;
		case FK_INT:
		case FK_STAGE:
		case FK_SEG:
			put_i(o, f[i].key, *(const int *)at);
			break;
		case FK_DBL:
		case FK_PCT:
			put_d(o, f[i].key, *(const double *)at);
			break;
		case FK_BOOL:
			put_b(o, f[i].key, *(const bool *)at);
			break;
		case FK_STR:
			put_s(o, f[i].key, *(const char *const *)at);
			break;
		case FK_BUF:
			put_s(o, f[i].key, at);
			break;
		}
	}
}

static cJSON *fields_obj(const void *base, const struct fdesc *f, size_t n)
{
	cJSON *o = cJSON_CreateObject();

	put_fields(o, base, f, n);
	return o;
}

static void put_links(cJSON *o, const size_t *links)
{
	cJSON *l = cJSON_AddObjectToObject(o, "links");

	for (int i = 0; i < TFD_LINK__COUNT; i++)
		put_u(l, tfd_pf_link_keys[i], links[i]);
}

static void put_sure(cJSON *o, const char *k, const struct tfd_sureness *s)
{
	cJSON_AddItemToObject(o, k, fields_obj(s, tfd_pf_sure.v, tfd_pf_sure.n));
}

static void put_share(cJSON *o, const char *k, const struct tfd_share *s)
{
	cJSON_AddItemToObject(o, k, fields_obj(s, tfd_pf_share.v, tfd_pf_share.n));
}

static cJSON *stage_out(const struct tfd_stage *s)
{
	cJSON *o = fields_obj(s, tfd_pf_stage.v, tfd_pf_stage.n);

	if (s->sample) {
		cJSON *ps = cJSON_AddArrayToObject(o, "params");

		for (uint16_t i = 0; i < s->sample->sig->nparams; i++) {
			cJSON *kv = cJSON_CreateArray();

			cJSON_AddItemToArray(kv, cJSON_CreateString(s->sample->sig->params[i].key));
			cJSON_AddItemToArray(kv, cJSON_CreateString(s->sample->sig->params[i].val));
			cJSON_AddItemToArray(ps, kv);
		}
	} else {
		cJSON_AddNullToObject(o, "params");
	}
	put_links(o, s->links);
	tfd_pf_fn_ops_out(o, s);
	return o;
}

static cJSON *pipeline_out(const struct tfd_pipeline *p)
{
	cJSON *o = fields_obj(p, tfd_pf_pipeline.v, tfd_pf_pipeline.n);
	cJSON *a;

	a = cJSON_AddArrayToObject(o, "stages");
	for (size_t i = 0; i < p->nstages; i++)
		cJSON_AddItemToArray(a, stage_out(&p->stages[i]));
	a = cJSON_AddArrayToObject(o, "critpath");
	for (size_t i = 0; i < p->ncritpath; i++)
		cJSON_AddItemToArray(a, tfd_json_num(p->critpath[i]));
	put_links(o, p->links);
	a = cJSON_AddArrayToObject(o, "segments");
	for (size_t i = 0; i < p->nsegments; i++)
		cJSON_AddItemToArray(
		    a, fields_obj(&p->segments[i], tfd_pf_segment.v, tfd_pf_segment.n));
	cJSON_AddItemToObject(o, "capacity",
			      fields_obj(&p->capacity, tfd_pf_capacity.v, tfd_pf_capacity.n));
	put_sure(o, "confidence", &p->confidence);
	return o;
}

/* {"per": N, "step_ns": [...], "wait_ns": [...]} */
static void points_out(cJSON *o, const char *k, const struct tfd_step_points *pt)
{
	cJSON *c = cJSON_AddObjectToObject(o, k);
	cJSON *st = cJSON_AddArrayToObject(c, "step_ns"), *wt;

	put_u(c, "per", pt->per);
	wt = cJSON_AddArrayToObject(c, "wait_ns");
	for (size_t i = 0; i < pt->n; i++) {
		cJSON_AddItemToArray(st, num_i(pt->step_ns[i]));
		cJSON_AddItemToArray(wt, num_i(pt->wait_ns[i]));
	}
	tfd_pf_points_dev_out(c, pt);
}

static cJSON *host_out(const struct tfd_host_result *h, const struct tfd_analysis *a,
		       struct tfd_buf *text)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *arr;

	put_s(o, "name", h->host->name);
	put_s(o, "path", h->host->path);
	put_i(o, "format", h->host->format);
	put_b(o, "has_host_plane", h->host->has_host_plane);
	tfd_pf_dev_host_out(o, h->host);
	arr = cJSON_AddArrayToObject(o, "notes");
	for (size_t i = 0; i < a->ndiags; i++)
		if (a->diags[i].host == h->host->name)
			cJSON_AddItemToArray(arr, cJSON_CreateString(a->diags[i].msg));
	put_fields(o, h, tfd_pf_host.v, tfd_pf_host.n);
	put_s(o, "input_basis", h->input_basis);
	put_s(o, "verdict_basis", h->verdict_basis);
	put_share(o, "tf", &h->tf);
	put_share(o, "steady", &h->steady);
	put_share(o, "all", &h->all);
	points_out(o, "step_points", &h->step_points);
	points_out(o, "step_bars", &h->step_bars);
	put_sure(o, "confidence", &h->confidence);
	put_i(o, "focus", h->focus);
	put_u(o, "nhost_pipelines", h->nhost_pipelines);
	arr = cJSON_AddArrayToObject(o, "pipelines");
	for (size_t i = 0; i < h->npipelines; i++) {
		struct tfd_json_tree t;

		/* (a part of its own: the document's nodes are malloc'd) */
		tfd_json_part_begin(&t);
		cJSON_AddItemToArray(
		    arr, tfd_json_part_end(&t, pipeline_out(&h->pipelines[i]), NULL, text));
	}
	return o;
}

/* Whether note d is one of a's hosts' (else the run's: discovery's). */
static bool host_note(const struct tfd_analysis *a, const struct tfd_diag *d)
{
	for (size_t i = 0; i < a->nhosts; i++)
		if (d->host == a->hosts[i].host->name)
			return true;
	return false;
}

struct host_at {
	const char *path;
	size_t i;
};

static int by_path(const void *x, const void *y)
{
	const struct host_at *a = x, *b = y;
	int c = strcmp(a->path, b->path);

	return c ? c : (a->i > b->i) - (a->i < b->i);
}

static cJSON *partial_doc(const struct tfd_analysis *a, const struct tfd_analyze_opts *opts,
			  const char *source, struct tfd_buf *text)
{
	cJSON *root = cJSON_CreateObject(), *arr, *o;
	struct host_at *order = xmalloc((a->nhosts + 1) * sizeof(*order));

	put_s(root, "format", TFD_PARTIAL_FORMAT);
	put_i(root, "version", TFD_PARTIAL_VERSION);
	put_s(root, "run", a->run);
	put_s(root, "source", source);
	o = cJSON_AddObjectToObject(root, "options");
	put_b(o, "no_warmup", opts && opts->no_warmup);
	put_b(o, "rank_set", opts && opts->rank_set);
	put_i(o, "rank", opts && opts->rank_set ? opts->rank : 0);
	arr = cJSON_AddArrayToObject(root, "notes");
	for (size_t i = 0; i < a->ndiags; i++)
		if (!host_note(a, &a->diags[i]))
			cJSON_AddItemToArray(arr, cJSON_CreateString(a->diags[i].msg));
	/* hosts in file order, as tfd_analyze() met them */
	for (size_t i = 0; i < a->nhosts; i++)
		order[i] = (struct host_at){a->hosts[i].host->path, i};
	qsort(order, a->nhosts, sizeof(*order), by_path);
	arr = cJSON_AddArrayToObject(root, "hosts");
	for (size_t i = 0; i < a->nhosts; i++)
		cJSON_AddItemToArray(arr, host_out(&a->hosts[order[i].i], a, text));
	free(order);
	return root;
}

void tfd_partial_write(const struct tfd_analysis *a, const struct tfd_analyze_opts *opts,
		       const char *source, struct tfd_buf *b)
{
	struct tfd_buf text;
	cJSON *root;

	tfd_buf_init(&text);
	root = partial_doc(a, opts, source, &text);
	tfd_buf_release(&text);
	if (!tfd_json_print(b, root)) /* (its nodes are all printable) */
		abort();
	tfd_buf_puts(b, "\n");
	cJSON_Delete(root);
}
