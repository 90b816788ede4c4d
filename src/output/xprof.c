/* xprof.c - renderers of xprof mode: TensorFlow's CombinedTfDataStats as
 * JSON (proto3 JSON conventions), a text summary, and the Google-charts
 * DataTables its tool emitted (xprof-reference.md 6.1). The analysis is in
 * src/model/xprof.c. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tfd/buf.h"
#include "tfd/jsonmem.h"
#include "tfd/xprof.h"

static void add_i64(cJSON *o, const char *k, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, v);
	cJSON_AddStringToObject(o, k, buf); /* proto3 JSON: int64 as string */
}

void tfd_xprof_json(const struct tfd_xprof *x, struct tfd_buf *b)
{
	cJSON *root = cJSON_CreateObject(), *rows, *hosts;

	cJSON_AddStringToObject(root, "mode", "xprof");
	rows = cJSON_AddArrayToObject(root, "bottleneck_analysis");
	for (size_t i = 0; i < x->nrows; i++) {
		cJSON *r = cJSON_CreateObject();

		cJSON_AddStringToObject(r, "host", x->rows[i].host);
		cJSON_AddStringToObject(r, "input_pipeline", x->rows[i].input_pipeline);
		add_i64(r, "max_latency_ps", x->rows[i].max_latency_ps);
		cJSON_AddStringToObject(r, "iterator_name", x->rows[i].iterator_name);
		cJSON_AddStringToObject(r, "iterator_long_name", x->rows[i].iterator_long_name);
		add_i64(r, "iterator_latency_ps", x->rows[i].iterator_latency_ps);
		cJSON_AddStringToObject(r, "suggestion", x->rows[i].suggestion);
		cJSON_AddItemToArray(rows, r);
	}
	hosts = cJSON_AddObjectToObject(root, "tf_data_stats");
	for (size_t i = 0; i < x->nhosts; i++) {
		const struct tfd_xp_host *h = &x->hosts[i];
		cJSON *th = cJSON_AddObjectToObject(hosts, h->host), *ips, *md;

		md = cJSON_AddObjectToObject(th, "iterator_metadata");
		for (size_t m = 0; m < h->nmetas; m++) {
			char key[32];
			cJSON *o;

			snprintf(key, sizeof(key), "%" PRId64, h->metas[m].id);
			o = cJSON_AddObjectToObject(md, key);
			add_i64(o, "id", h->metas[m].id);
			add_i64(o, "parent_id", h->metas[m].parent_id);
			cJSON_AddStringToObject(o, "name", h->metas[m].name);
			cJSON_AddStringToObject(o, "long_name", h->metas[m].long_name);
			cJSON_AddBoolToObject(o, "is_async", h->metas[m].is_async);
		}
		ips = cJSON_AddObjectToObject(th, "input_pipelines");
		for (size_t p = 0; p < h->npipelines; p++) {
			const struct tfd_xp_pipeline *pl = &h->pipelines[p];
			char key[32];
			cJSON *o, *meta, *stats;

			snprintf(key, sizeof(key), "%" PRId64, pl->id);
			o = cJSON_AddObjectToObject(ips, key);
			meta = cJSON_AddObjectToObject(o, "metadata");
			add_i64(meta, "id", pl->id);
			cJSON_AddStringToObject(meta, "type", pl->is_device ? "DEVICE" : "HOST");
			cJSON_AddStringToObject(meta, "name", pl->name);
			add_i64(o, "avg_latency_ps", pl->avg_latency_ps);
			add_i64(o, "min_latency_ps", pl->min_latency_ps);
			add_i64(o, "max_latency_ps", pl->max_latency_ps);
			add_i64(o, "num_slow_calls", pl->num_slow_calls);
			stats = cJSON_AddArrayToObject(o, "stats");
			for (size_t c = 0; c < pl->nstats; c++) {
				const struct tfd_xp_call *st = &pl->stats[c];
				cJSON *so = cJSON_CreateObject(), *its;

				add_i64(so, "bottleneck_iterator_id", st->bottleneck_iterator_id);
				add_i64(so, "bottleneck_iterator_latency_ps",
					st->bottleneck_iterator_latency_ps);
				its = cJSON_AddObjectToObject(so, "iterator_stats");
				for (size_t k = 0; k < st->niters; k++) {
					const struct tfd_xp_iter_stat *is = &st->iters[k];
					cJSON *io;

					snprintf(key, sizeof(key), "%" PRId64, is->id);
					io = cJSON_AddObjectToObject(its, key);
					add_i64(io, "id", is->id);
					add_i64(io, "start_time_ps", is->start_time_ps);
					add_i64(io, "duration_ps", is->duration_ps);
					add_i64(io, "self_time_ps", is->self_time_ps);
					cJSON_AddBoolToObject(io, "is_blocking", is->is_blocking);
					add_i64(io, "num_calls", is->num_calls);
				}
				cJSON_AddItemToArray(stats, so);
			}
		}
	}
	cJSON_AddBoolToObject(root, "is_input_bound", x->is_input_bound);
	cJSON_AddStringToObject(root, "summary", x->summary);
	tfd_json_pretty_tree(b, root);
	cJSON_Delete(root);
}

/* The suggestion HTML as indented text: <br/> ends a line, a link keeps its
 * text and its address, other tags go. */
static void html_as_text(const char *h, struct tfd_buf *b)
{
	char href[512] = "";

	tfd_buf_puts(b, "    ");
	while (h && *h) {
		if (strncmp(h, "<br/>", 5) == 0) {
			h += 5;
			tfd_buf_puts(b, *h ? "\n    " : "");
		} else if (strncmp(h, "<a href=\"", 9) == 0) {
			const char *e = strchr(h + 9, '"');
			size_t n = e ? (size_t)(e - h - 9) : 0;

			snprintf(href, sizeof(href), "%.*s", (int)n, h + 9);
			h = strchr(h, '>');
			h = h ? h + 1 : "";
		} else if (strncmp(h, "</a>", 4) == 0) {
			tfd_buf_printf(b, " (%s)", href);
			h += 4;
		} else if (*h == '<') {
			const char *e = strchr(h, '>');

			h = e ? e + 1 : "";
		} else {
			tfd_buf_add(b, h, 1);
			h++;
		}
	}
	tfd_buf_puts(b, "\n");
}

void tfd_xprof_text(const struct tfd_xprof *x, struct tfd_buf *b)
{
	tfd_buf_printf(b, "mode: xprof (TensorFlow tf_data_bottleneck_analysis semantics)\n%s\n",
		       x->summary);
	for (size_t i = 0; i < x->nrows; i++) {
		const struct tfd_xp_row *r = &x->rows[i];

		tfd_buf_printf(b, "\n%s %s: max latency %.3f us\n  bottleneck %s (%s), %.3f us\n",
			       r->host, r->input_pipeline, (double)r->max_latency_ps / 1e6,
			       r->iterator_name[0] ? r->iterator_name : "(none)",
			       r->iterator_long_name, (double)r->iterator_latency_ps / 1e6);
		if (r->iterator_name[0]) {
			tfd_buf_puts(b, "  suggestion:\n");
			html_as_text(r->suggestion
					 ? r->suggestion
					 : tfd_xprof_suggestion(tfd_xprof_type(r->iterator_name)),
				     b);
		}
	}
	for (size_t i = 0; i < x->nhosts; i++)
		for (size_t p = 0; p < x->hosts[i].npipelines; p++) {
			const struct tfd_xp_pipeline *pl = &x->hosts[i].pipelines[p];

			tfd_buf_printf(
			    b,
			    "\n%s %s: %zu call%s, min %.3f avg %.3f max %.3f us, %" PRId64
			    " slow\n",
			    x->hosts[i].host, pl->name, pl->nstats, pl->nstats == 1 ? "" : "s",
			    (double)pl->min_latency_ps / 1e6, (double)pl->avg_latency_ps / 1e6,
			    (double)pl->max_latency_ps / 1e6, pl->num_slow_calls);
		}
}

/* ---- the three DataTables the removed Python converter produced (6.1) -- */

static void gviz_col(cJSON *cols, const char *id, const char *label, const char *type)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "id", id);
	cJSON_AddStringToObject(c, "label", label);
	cJSON_AddStringToObject(c, "type", type);
	cJSON_AddItemToArray(cols, c);
}

static cJSON *cell_str(const char *v)
{
	cJSON *c = cJSON_CreateObject();

	cJSON_AddStringToObject(c, "v", v);
	return c;
}

static cJSON *cell_num(double v)
{
	cJSON *c = cJSON_CreateObject();

	tfd_json_add_num(c, "v", v);
	return c;
}

/* int(ps / 1e6): microseconds truncated toward zero */
static long long ps_to_us(int64_t ps)
{
	return (long long)(ps / 1000000);
}

static void thousands(long long v, char *buf, size_t len)
{
	char raw[32];
	size_t n, j = 0;
	int neg = v < 0;

	snprintf(raw, sizeof(raw), "%lld", neg ? -v : v);
	n = strlen(raw);
	if (neg && j + 1 < len)
		buf[j++] = '-';
	for (size_t i = 0; i < n && j + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = raw[i];
	}
	buf[j] = '\0';
}

static cJSON *gviz_table(cJSON **rows_out)
{
	cJSON *t = cJSON_CreateObject();

	cJSON_AddArrayToObject(t, "cols");
	*rows_out = cJSON_AddArrayToObject(t, "rows");
	return t;
}

static void add_row(cJSON *rows, cJSON *cells)
{
	cJSON *r = cJSON_CreateObject();

	cJSON_AddItemToObject(r, "c", cells);
	cJSON_AddItemToArray(rows, r);
}

void tfd_xprof_gviz(const struct tfd_xprof *x, struct tfd_buf *b)
{
	cJSON *all = cJSON_CreateArray(), *t0, *t1, *t2, *rows, *p;

	/* t0: the graph table, one row per iterator per root call */
	t0 = gviz_table(&rows);
	gviz_col(cJSON_GetObjectItem(t0, "cols"), "host", "Host", "string");
	gviz_col(cJSON_GetObjectItem(t0, "cols"), "input_pipeline", "Input Pipeline", "string");
	gviz_col(cJSON_GetObjectItem(t0, "cols"), "rank", "Rank", "number");
	gviz_col(cJSON_GetObjectItem(t0, "cols"), "name", "Name", "string");
	gviz_col(cJSON_GetObjectItem(t0, "cols"), "parent", "Parent", "string");
	gviz_col(cJSON_GetObjectItem(t0, "cols"), "type", "Type", "number");
	for (size_t h = 0; h < x->nhosts; h++)
		for (size_t pi = 0; pi < x->hosts[h].npipelines; pi++) {
			const struct tfd_xp_pipeline *pl = &x->hosts[h].pipelines[pi];

			for (size_t r = 0; r < pl->nstats; r++)
				for (size_t k = 0; k < pl->stats[r].niters; k++) {
					const struct tfd_xp_iter_stat *is = &pl->stats[r].iters[k];
					const struct tfd_xp_meta *md =
					    tfd_xprof_find_meta(&x->hosts[h], is->id);
					cJSON *cells = cJSON_CreateArray(), *name;
					char id[32], parent[32], label[512];
					int type = !is->is_blocking ? 0
						   : is->id == pl->stats[r].bottleneck_iterator_id
						       ? 2
						       : 1;

					snprintf(id, sizeof(id), "%" PRId64, is->id);
					parent[0] = '\0';
					if (md && md->parent_id)
						snprintf(parent, sizeof(parent), "%" PRId64,
							 md->parent_id);
					snprintf(label, sizeof(label),
						 "<div style='padding: 1px;'><b>%s</b><br/><div "
						 "style='text-align: left;'>Start Time: %lld "
						 "us<br/>Total "
						 "Duration: %lld us<br/>Self Duration: %lld "
						 "us<br/># Calls: "
						 "%" PRId64 "</div></div>",
						 md ? md->name : "", ps_to_us(is->start_time_ps),
						 ps_to_us(is->duration_ps),
						 ps_to_us(is->self_time_ps), is->num_calls);
					cJSON_AddItemToArray(cells, cell_str(x->hosts[h].host));
					cJSON_AddItemToArray(cells, cell_str(pl->name));
					cJSON_AddItemToArray(cells, cell_num((double)r));
					name = cell_str(id);
					cJSON_AddStringToObject(name, "f", label);
					cJSON_AddItemToArray(cells, name);
					cJSON_AddItemToArray(cells, cell_str(parent));
					cJSON_AddItemToArray(cells, cell_num(type));
					add_row(rows, cells);
				}
		}
	cJSON_AddItemToArray(all, t0);
	/* t1: one summary row per input pipeline (device ones included) */
	t1 = gviz_table(&rows);
	gviz_col(cJSON_GetObjectItem(t1, "cols"), "host", "Host", "string");
	gviz_col(cJSON_GetObjectItem(t1, "cols"), "input_pipeline", "Input Pipeline", "string");
	gviz_col(cJSON_GetObjectItem(t1, "cols"), "min", "Min (us)", "number");
	gviz_col(cJSON_GetObjectItem(t1, "cols"), "mean", "Avg (us)", "number");
	gviz_col(cJSON_GetObjectItem(t1, "cols"), "max", "Max (us)", "number");
	gviz_col(cJSON_GetObjectItem(t1, "cols"), "num_calls", "# calls", "number");
	gviz_col(cJSON_GetObjectItem(t1, "cols"), "num_slow_calls", "# slow calls", "number");
	for (size_t h = 0; h < x->nhosts; h++)
		for (size_t pi = 0; pi < x->hosts[h].npipelines; pi++) {
			const struct tfd_xp_pipeline *pl = &x->hosts[h].pipelines[pi];
			cJSON *cells = cJSON_CreateArray();

			cJSON_AddItemToArray(cells, cell_str(x->hosts[h].host));
			cJSON_AddItemToArray(cells, cell_str(pl->name));
			cJSON_AddItemToArray(cells, cell_num((double)ps_to_us(pl->min_latency_ps)));
			cJSON_AddItemToArray(cells, cell_num((double)ps_to_us(pl->avg_latency_ps)));
			cJSON_AddItemToArray(cells, cell_num((double)ps_to_us(pl->max_latency_ps)));
			cJSON_AddItemToArray(cells, cell_num((double)pl->nstats));
			cJSON_AddItemToArray(cells, cell_num((double)pl->num_slow_calls));
			add_row(rows, cells);
		}
	cJSON_AddItemToArray(all, t1);
	/* t2: the bottleneck table with the verdict as table properties */
	t2 = gviz_table(&rows);
	gviz_col(cJSON_GetObjectItem(t2, "cols"), "host", "Host", "string");
	gviz_col(cJSON_GetObjectItem(t2, "cols"), "input_pipeline", "Input Pipeline", "string");
	gviz_col(cJSON_GetObjectItem(t2, "cols"), "max_latency", "Max Latency (us)", "number");
	gviz_col(cJSON_GetObjectItem(t2, "cols"), "bottleneck", "Bottleneck", "string");
	gviz_col(cJSON_GetObjectItem(t2, "cols"), "suggestion", "Suggestion", "string");
	for (size_t i = 0; i < x->nrows; i++) {
		const struct tfd_xp_row *r = &x->rows[i];
		cJSON *cells = cJSON_CreateArray();
		char lat[40], cell[1024];

		thousands(ps_to_us(r->iterator_latency_ps), lat, sizeof(lat));
		snprintf(
		    cell, sizeof(cell),
		    "<u>Iterator Type</u>: <b>%s</b><br/><u>Long Name</u>: %s<br/><u>Latency</u>: "
		    "%s us",
		    r->iterator_name, r->iterator_long_name, lat);
		cJSON_AddItemToArray(cells, cell_str(r->host));
		cJSON_AddItemToArray(cells, cell_str(r->input_pipeline));
		cJSON_AddItemToArray(cells, cell_num((double)ps_to_us(r->max_latency_ps)));
		cJSON_AddItemToArray(cells, cell_str(cell));
		cJSON_AddItemToArray(cells, cell_str(r->suggestion));
		add_row(rows, cells);
	}
	p = cJSON_AddObjectToObject(t2, "p");
	cJSON_AddStringToObject(p, "is_input_bound", x->is_input_bound ? "true" : "false");
	cJSON_AddStringToObject(p, "summary_message", x->summary);
	cJSON_AddItemToArray(all, t2);
	if (!tfd_json_print(b, all)) /* (its nodes are all printable) */
		abort();
	tfd_buf_puts(b, "\n");
	cJSON_Delete(all);
}
