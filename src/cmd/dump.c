/* dump.c - `tfdoctor dump`: what a capture holds, for users and debugging. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "opts.h"
#include "tfd/buf.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
#include "tfd/jsonmem.h"
#include "tfd/load.h"
#include "tfd/outfile.h"

static const char *format_name(const struct tfd_host *h)
{
	return h->format == TFD_FMT_XSPACE	? "xspace"
	       : h->format == TFD_FMT_TF2_TRACE ? "tf2-trace"
						: "chrome-json";
}

static int wanted(const struct tfd_event *e, int all)
{
	return all || e->kind == TFD_EV_ITERATOR;
}

/* The dump goes out in pieces of about this size: a capture of millions of
 * events is never held as one document. */
#define DUMP_PIECE (1u << 20)

struct dump_out {
	struct tfd_output o;
	struct tfd_buf b;      /* the piece being made */
	struct tfd_json_pp pp; /* JSON: the layout's state across pieces */
	int json;
	enum tfd_status st;
	struct tfd_err *err;
};

/* Send the piece made so far (text: control bytes escaped, names come from
 * the capture). */
static void flush_piece(struct dump_out *d)
{
	if (!d->json)
		tfd_buf_escape_controls(&d->b);
	if (!d->st && d->b.len)
		d->st = tfd_output_put(&d->o, d->b.s, d->b.len, d->err);
	d->b.len = 0;
	if (d->b.s)
		d->b.s[0] = '\0';
}

static void maybe_flush(struct dump_out *d)
{
	if (d->b.len >= DUMP_PIECE)
		flush_piece(d);
}

/* JSON: one compact piece through the layout. */
static void put_json(struct dump_out *d, const char *compact)
{
	tfd_json_pretty_feed(&d->pp, &d->b, compact);
	maybe_flush(d);
}

/* JSON: item as a compact piece (its closing brace left off with open). */
static void put_item(struct dump_out *d, cJSON *item, int open)
{
	struct tfd_buf s;

	tfd_buf_init(&s);
	if (!tfd_json_print(&s, item)) /* (its nodes are all printable) */
		abort();
	if (open)
		s.s[--s.len] = '\0';
	put_json(d, s.s);
	tfd_buf_release(&s);
}

static void text_event(struct tfd_buf *b, int64_t thread, const struct tfd_event *e)
{
	tfd_buf_printf(b, "    %-12" PRId64 " %14.3f %12.3f  %s", thread, (double)e->start_ns / 1e3,
		       (double)e->dur_ns / 1e3, tfd_name_on_line(e->sig->name));
	if (e->flags & TFD_EVF_ID)
		tfd_buf_printf(b, " id=%" PRId64, (int64_t)e->id);
	if (e->flags & TFD_EVF_PARENT)
		tfd_buf_printf(b, " parent_id=%" PRId64, (int64_t)e->sig->parent_id);
	if (e->flags & TFD_EVF_ELEMENT)
		tfd_buf_printf(b, " element_id=%" PRId64, (int64_t)e->element_id);
	for (uint16_t p = 0; p < e->sig->nparams; p++)
		tfd_buf_printf(b, " %s=%s", tfd_name_on_line(e->sig->params[p].key),
			       tfd_name_on_line(e->sig->params[p].val));
	tfd_buf_puts(b, "\n");
}

/* The events of h the dump lists. */
static size_t count_shown(const struct tfd_host *h, int all)
{
	size_t n = 0;

	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_ev_cursor cur;
		struct tfd_event ev;

		for (tfd_ev_begin(&cur, h, &h->threads[t]); tfd_ev_next(&cur, &ev);)
			n += wanted(&ev, all);
	}
	return n;
}

/* What the dataset functions' ops cost, by op type. */
static void text_fn_ops(struct tfd_buf *b, const struct tfd_host *h)
{
	const struct tfd_op_total *t = h->fn_op_types;
	size_t n = h->nfn_op_types;
	int64_t all = 0;

	for (size_t i = 0; i < n; i++)
		all += t[i].self_ns;
	if (n)
		tfd_buf_printf(b, "  ops inside dataset functions: %zu type%s\n", n,
			       n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		tfd_buf_printf(b, "    %-32s %14.3f us %6.1f%% %8" PRIu64 " events  e.g. %s\n",
			       tfd_name_on_line(t[i].type), (double)t[i].self_ns / 1e3,
			       all > 0 ? 100.0 * (double)t[i].self_ns / (double)all : 0.0,
			       t[i].count, tfd_name_on_line(t[i].name));
}

/* What the device planes held, by kind: time (spans summed, overlaps
 * counted twice) and, for copies to the device, their count and bytes. */
static void text_device(struct tfd_buf *b, const struct tfd_host *h)
{
	static const char *const names[TFD_DEV__COUNT] = {
	    "host-to-device",		"collectives",	  "host wait",
	    "device-to-device",		"device-to-host", "compute",
	    "device waiting for infeed"};
	const int64_t *ns = h->dev.kind_ns;
	const uint64_t *n = h->dev.kind_n;
	uint64_t all = 0;

	for (int k = 0; k < TFD_DEV__COUNT; k++)
		all += n[k];
	tfd_buf_printf(b, "  device spans: %" PRIu64 "\n", all);
	for (int k = 0; k < TFD_DEV__COUNT; k++) {
		if (!n[k])
			continue;
		tfd_buf_printf(b, "    %-26s %12.3f ms  %8" PRIu64 " spans", names[k],
			       (double)ns[k] / 1e6, n[k]);
		if (k == TFD_DEV_H2D && h->dev.h2d_bytes)
			tfd_buf_printf(b, "  %" PRIu64 " bytes", h->dev.h2d_bytes);
		tfd_buf_puts(b, "\n");
	}
}

static void text_host(struct dump_out *d, const struct tfd_host *h, int all)
{
	struct tfd_buf *b = &d->b;

	tfd_buf_printf(b, "\nhost %s\n  file: %s (%s%s)\n", tfd_name_on_line(h->name),
		       tfd_name_on_line(h->path), format_name(h), h->gzipped ? ", gzip" : "");
	tfd_buf_printf(b, "  planes: %zu\n", h->nplanes);
	for (size_t p = 0; p < h->nplanes; p++) {
		const struct tfd_plane_info *pi = &h->planes[p];

		if (pi->decoded && strstr(pi->name, "/device:") && h->format != TFD_FMT_TF2_TRACE)
			tfd_buf_printf(b, "    %-28s %6zu lines  device (%zu spans)\n",
				       tfd_name_on_line(pi->name), pi->nlines, pi->nevents);
		else
			tfd_buf_printf(b, "    %-28s %6zu lines  %s\n", tfd_name_on_line(pi->name),
				       pi->nlines,
				       !pi->decoded			? "skipped"
				       : h->format == TFD_FMT_TF2_TRACE ? "read"
									: "host (decoded)");
	}
	if (h->dev.read)
		text_device(b, h);
	tfd_buf_printf(b, "  steps: %zu  span: %.3f ms\n", h->nsteps,
		       (double)(h->span_end_ns - h->span_start_ns) / 1e6);
	tfd_buf_printf(b, "  threads: %zu\n", h->nthreads);
	for (size_t t = 0; t < h->nthreads; t++) {
		const struct tfd_thread *th = &h->threads[t];
		size_t nit = 0;
		struct tfd_ev_cursor cur;
		struct tfd_event ev;

		for (tfd_ev_begin(&cur, h, th); tfd_ev_next(&cur, &ev);)
			nit += ev.kind == TFD_EV_ITERATOR;
		tfd_buf_printf(b, "    %-12" PRId64 " %-48s %6zu events %6zu iterator\n", th->id,
			       tfd_name_on_line(th->name), th->nevents, nit);
	}
	text_fn_ops(b, h);
	tfd_buf_printf(b, "  %s events: %zu\n", all ? "kept" : "iterator", count_shown(h, all));
	tfd_buf_printf(b, "    %-12s %14s %12s  %s\n", "thread", "start_us", "dur_us", "name");
	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_ev_cursor cur;
		struct tfd_event ev;

		for (tfd_ev_begin(&cur, h, &h->threads[t]); tfd_ev_next(&cur, &ev);) {
			if (!wanted(&ev, all))
				continue;
			text_event(b, h->threads[t].id, &ev);
			maybe_flush(d);
		}
	}
}

static void dump_text(const struct tfd_capture *cap, int all, struct dump_out *d)
{
	tfd_buf_printf(&d->b, "capture: %zu host%s", cap->nhosts, cap->nhosts == 1 ? "" : "s");
	if (cap->run)
		tfd_buf_printf(&d->b, " (run %s)", tfd_name_on_line(cap->run));
	tfd_buf_puts(&d->b, "\n");
	for (size_t i = 0; i < cap->nhosts; i++)
		text_host(d, &cap->hosts[i], all);
}

static cJSON *id_json(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v);
	return cJSON_CreateString(buf);
}

static cJSON *event_json(int64_t thread, const struct tfd_event *e)
{
	cJSON *je = cJSON_CreateObject();

	cJSON_AddItemToObject(je, "thread", id_json((uint64_t)thread));
	tfd_json_add_num(je, "start_ns", (double)e->start_ns);
	tfd_json_add_num(je, "dur_ns", (double)e->dur_ns);
	cJSON_AddStringToObject(je, "name", e->sig->name);
	if (e->flags & TFD_EVF_ID)
		cJSON_AddItemToObject(je, "id", id_json(e->id));
	if (e->flags & TFD_EVF_PARENT)
		cJSON_AddItemToObject(je, "parent_id", id_json(e->sig->parent_id));
	if (e->flags & TFD_EVF_ELEMENT)
		cJSON_AddItemToObject(je, "element_id", id_json(e->element_id));
	if (e->sig->nparams) {
		cJSON *jp = cJSON_AddObjectToObject(je, "params");

		for (uint16_t p = 0; p < e->sig->nparams; p++)
			cJSON_AddStringToObject(jp, e->sig->params[p].key, e->sig->params[p].val);
	}
	return je;
}

/* "function_ops": the dataset functions' ops by type, the most time first. */
static void fn_ops_json(cJSON *jh, const struct tfd_host *h)
{
	const struct tfd_op_total *t = h->fn_op_types;
	size_t n = h->nfn_op_types;
	cJSON *arr = cJSON_AddArrayToObject(jh, "function_ops");

	for (size_t i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "type", t[i].type);
		cJSON_AddStringToObject(o, "name", t[i].name);
		tfd_json_add_num(o, "self_ns", (double)t[i].self_ns);
		tfd_json_add_num(o, "events", (double)t[i].count);
		cJSON_AddItemToArray(arr, o);
	}
}

/* What the device planes held, by kind: spans and their summed time. */
static cJSON *device_json(const struct tfd_host *h)
{
	static const char *const keys[TFD_DEV__COUNT] = {
	    "host_to_device", "collectives",	"host_wait",	   "device_to_device",
	    "device_to_host", "device_compute", "device_wait_host"};
	cJSON *d = cJSON_CreateObject(), *k;

	cJSON_AddStringToObject(d, "kind", tfd_device_word(&h->dev));
	tfd_json_add_num(d, "host_to_device_bytes", (double)h->dev.h2d_bytes);
	k = cJSON_AddObjectToObject(d, "kinds");
	for (int i = 0; i < TFD_DEV__COUNT; i++) {
		cJSON *o;

		if (!h->dev.kind_n[i])
			continue;
		o = cJSON_AddObjectToObject(k, keys[i]);
		tfd_json_add_num(o, "spans", (double)h->dev.kind_n[i]);
		tfd_json_add_num(o, "ns", (double)h->dev.kind_ns[i]);
	}
	return d;
}

/* A host's object but its events, which follow it piece by piece. */
static cJSON *host_json(const struct tfd_host *h)
{
	cJSON *jh = cJSON_CreateObject(), *planes, *threads;

	cJSON_AddStringToObject(jh, "name", h->name);
	cJSON_AddStringToObject(jh, "file", h->path);
	cJSON_AddStringToObject(jh, "format", format_name(h));
	cJSON_AddBoolToObject(jh, "gzip", h->gzipped);
	tfd_json_add_num(jh, "steps", (double)h->nsteps);
	planes = cJSON_AddArrayToObject(jh, "planes");
	for (size_t p = 0; p < h->nplanes; p++) {
		cJSON *jp = cJSON_CreateObject();

		cJSON_AddStringToObject(jp, "name", h->planes[p].name);
		tfd_json_add_num(jp, "lines", (double)h->planes[p].nlines);
		cJSON_AddBoolToObject(jp, "decoded", h->planes[p].decoded);
		if (h->planes[p].decoded && strstr(h->planes[p].name, "/device:") &&
		    h->format != TFD_FMT_TF2_TRACE)
			tfd_json_add_num(jp, "device_spans", (double)h->planes[p].nevents);
		cJSON_AddItemToArray(planes, jp);
	}
	if (h->dev.read)
		cJSON_AddItemToObject(jh, "device", device_json(h));
	threads = cJSON_AddArrayToObject(jh, "threads");
	for (size_t t = 0; t < h->nthreads; t++) {
		const struct tfd_thread *th = &h->threads[t];
		cJSON *jt = cJSON_CreateObject();

		cJSON_AddItemToObject(jt, "id", id_json((uint64_t)th->id));
		cJSON_AddStringToObject(jt, "name", th->name);
		tfd_json_add_num(jt, "events", (double)th->nevents);
		cJSON_AddItemToArray(threads, jt);
	}
	fn_ops_json(jh, h);
	return jh;
}

static void json_host(struct dump_out *d, const struct tfd_host *h, int all)
{
	cJSON *jh = host_json(h);
	bool first = true;

	put_item(d, jh, 1);
	cJSON_Delete(jh);
	put_json(d, all ? ",\"events\":" : ",\"iterator_events\":");
	if (!count_shown(h, all)) {
		put_json(d, "[]}");
		return;
	}
	put_json(d, "[");
	for (size_t t = 0; t < h->nthreads; t++) {
		struct tfd_ev_cursor cur;
		struct tfd_event ev;

		for (tfd_ev_begin(&cur, h, &h->threads[t]); tfd_ev_next(&cur, &ev);) {
			cJSON *je;

			if (!wanted(&ev, all))
				continue;
			if (!first)
				put_json(d, ",");
			first = false;
			je = event_json(h->threads[t].id, &ev);
			put_item(d, je, 0);
			cJSON_Delete(je);
		}
	}
	put_json(d, "]}");
}

static void dump_json(const struct tfd_capture *cap, int all, struct dump_out *d)
{
	cJSON *head = cJSON_CreateObject();

	tfd_json_add_num(head, "schema_version", 1);
	if (cap->run)
		cJSON_AddStringToObject(head, "run", cap->run);
	put_item(d, head, 1);
	cJSON_Delete(head);
	put_json(d, cap->nhosts ? ",\"hosts\":[" : ",\"hosts\":[]");
	for (size_t i = 0; i < cap->nhosts; i++) {
		if (i)
			put_json(d, ",");
		json_host(d, &cap->hosts[i], all);
	}
	put_json(d, cap->nhosts ? "]}" : "}");
	tfd_buf_puts(&d->b, "\n");
}

/* Write the dump of cap to outpath piece by piece. */
static int write_dump(const struct tfd_capture *cap, int json, int all, const char *outpath)
{
	struct tfd_err err = {0};
	struct dump_out d;

	memset(&d, 0, sizeof(d));
	d.json = json;
	d.err = &err;
	if (tfd_output_open(&d.o, outpath, &err))
		return tfd_cli_report(&err);
	tfd_buf_init(&d.b);
	if (json)
		dump_json(cap, all, &d);
	else
		dump_text(cap, all, &d);
	flush_piece(&d);
	tfd_buf_release(&d.b);
	if (d.st) {
		tfd_output_abort(&d.o);
		return tfd_cli_report(&err);
	}
	return tfd_output_commit(&d.o, &err) ? tfd_cli_report(&err) : 0;
}

int tfd_cmd_dump(int argc, char **argv)
{
	struct cli_opts o;
	struct tfd_load_opts lo = {0};
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};
	const char *outpath, *fmt;
	int json, all, first, rc = tfd_cli_parse(&tfd_spec_dump, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	fmt = o.v[OPT_FORMAT];
	if (fmt && strcmp(fmt, "json") && strcmp(fmt, "text"))
		return tfd_cli_usage("dump", "unknown format '%s' (text or json)", fmt);
	/* -q is accepted for symmetry: dump prints no notes */
	json = fmt ? strcmp(fmt, "json") == 0 : o.v[OPT_JSON] != NULL;
	all = o.v[OPT_ALL] != NULL;
	if (tfd_cli_load_opts("dump", &o, &lo))
		return 2;
	outpath = o.v[OPT_OUTPUT];
	first = o.args;
	if (first >= argc)
		return tfd_cli_usage("dump", "no capture given");
	lo.keep_other = all;
	lo.progress = tfd_cli_progress;
	rc = tfd_cli_guard_output(outpath, (const char *const *)argv + first,
				  (size_t)(argc - first), NULL, NULL, NULL, NULL);
	if (rc)
		return rc;
	if (tfd_capture_load((const char *const *)argv + first, (size_t)(argc - first), &lo, &cap,
			     &err))
		return tfd_cli_report(&err);
	if (tfd_cli_guard_output(outpath, NULL, 0, NULL, NULL, cap, NULL))
		rc = 2;
	else
		rc = write_dump(cap, json, all, outpath);
	tfd_capture_free(cap);
	return rc;
}
