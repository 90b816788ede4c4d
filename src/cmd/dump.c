/* dump.c - `tfdoctor dump`: what a capture holds, for users and debugging. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "opts.h"
#include "tfd/buf.h"
#include "tfd/capture.h"
#include "tfd/cli.h"
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

static void dump_text(const struct tfd_capture *cap, int all, struct tfd_buf *b)
{
	tfd_buf_printf(b, "capture: %zu host%s", cap->nhosts, cap->nhosts == 1 ? "" : "s");
	if (cap->run)
		tfd_buf_printf(b, " (run %s)", tfd_name_on_line(cap->run));
	tfd_buf_puts(b, "\n");
	for (size_t i = 0; i < cap->nhosts; i++) {
		const struct tfd_host *h = &cap->hosts[i];
		size_t nshown = 0;

		tfd_buf_printf(b, "\nhost %s\n  file: %s (%s%s)\n", tfd_name_on_line(h->name),
			       tfd_name_on_line(h->path), format_name(h),
			       h->gzipped ? ", gzip" : "");
		tfd_buf_printf(b, "  planes: %zu\n", h->nplanes);
		for (size_t p = 0; p < h->nplanes; p++)
			tfd_buf_printf(b, "    %-28s %6zu lines  %s\n",
				       tfd_name_on_line(h->planes[p].name), h->planes[p].nlines,
				       !h->planes[p].decoded		? "skipped"
				       : h->format == TFD_FMT_TF2_TRACE ? "read"
									: "host (decoded)");
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
			tfd_buf_printf(b, "    %-12" PRId64 " %-48s %6zu events %6zu iterator\n",
				       th->id, tfd_name_on_line(th->name), th->nevents, nit);
		}
		for (size_t t = 0; t < h->nthreads; t++) {
			struct tfd_ev_cursor cur;
			struct tfd_event ev;

			for (tfd_ev_begin(&cur, h, &h->threads[t]); tfd_ev_next(&cur, &ev);)
				nshown += wanted(&ev, all);
		}
		tfd_buf_printf(b, "  %s events: %zu\n", all ? "kept" : "iterator", nshown);
		tfd_buf_printf(b, "    %-12s %14s %12s  %s\n", "thread", "start_us", "dur_us",
			       "name");
		for (size_t t = 0; t < h->nthreads; t++) {
			const struct tfd_thread *th = &h->threads[t];

			struct tfd_ev_cursor cur;
			struct tfd_event ev;

			for (tfd_ev_begin(&cur, h, th); tfd_ev_next(&cur, &ev);) {
				const struct tfd_event *e = &ev;

				if (!wanted(e, all))
					continue;
				tfd_buf_printf(b, "    %-12" PRId64 " %14.3f %12.3f  %s", th->id,
					       (double)e->start_ns / 1e3, (double)e->dur_ns / 1e3,
					       tfd_name_on_line(e->sig->name));
				if (e->flags & TFD_EVF_ID)
					tfd_buf_printf(b, " id=%" PRId64, (int64_t)e->id);
				if (e->flags & TFD_EVF_PARENT)
					tfd_buf_printf(b, " parent_id=%" PRId64,
						       (int64_t)e->sig->parent_id);
				if (e->flags & TFD_EVF_ELEMENT)
					tfd_buf_printf(b, " element_id=%" PRId64,
						       (int64_t)e->element_id);
				for (uint16_t p = 0; p < e->sig->nparams; p++)
					tfd_buf_printf(b, " %s=%s",
						       tfd_name_on_line(e->sig->params[p].key),
						       tfd_name_on_line(e->sig->params[p].val));
				tfd_buf_puts(b, "\n");
			}
		}
	}
}

static cJSON *id_json(uint64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)v);
	return cJSON_CreateString(buf);
}

static char *dump_json(const struct tfd_capture *cap, int all)
{
	cJSON *root = cJSON_CreateObject(), *hosts;
	char *out;

	cJSON_AddNumberToObject(root, "schema_version", 1);
	if (cap->run)
		cJSON_AddStringToObject(root, "run", cap->run);
	hosts = cJSON_AddArrayToObject(root, "hosts");
	for (size_t i = 0; i < cap->nhosts; i++) {
		const struct tfd_host *h = &cap->hosts[i];
		cJSON *jh = cJSON_CreateObject(), *planes, *threads, *events;

		cJSON_AddItemToArray(hosts, jh);
		cJSON_AddStringToObject(jh, "name", h->name);
		cJSON_AddStringToObject(jh, "file", h->path);
		cJSON_AddStringToObject(jh, "format", format_name(h));
		cJSON_AddBoolToObject(jh, "gzip", h->gzipped);
		cJSON_AddNumberToObject(jh, "steps", (double)h->nsteps);
		planes = cJSON_AddArrayToObject(jh, "planes");
		for (size_t p = 0; p < h->nplanes; p++) {
			cJSON *jp = cJSON_CreateObject();

			cJSON_AddStringToObject(jp, "name", h->planes[p].name);
			cJSON_AddNumberToObject(jp, "lines", (double)h->planes[p].nlines);
			cJSON_AddBoolToObject(jp, "decoded", h->planes[p].decoded);
			cJSON_AddItemToArray(planes, jp);
		}
		threads = cJSON_AddArrayToObject(jh, "threads");
		events = cJSON_CreateArray();
		for (size_t t = 0; t < h->nthreads; t++) {
			const struct tfd_thread *th = &h->threads[t];
			cJSON *jt = cJSON_CreateObject();

			cJSON_AddItemToObject(jt, "id", id_json((uint64_t)th->id));
			cJSON_AddStringToObject(jt, "name", th->name);
			cJSON_AddNumberToObject(jt, "events", (double)th->nevents);
			struct tfd_ev_cursor cur;
			struct tfd_event ev;

			cJSON_AddItemToArray(threads, jt);
			for (tfd_ev_begin(&cur, h, th); tfd_ev_next(&cur, &ev);) {
				const struct tfd_event *e = &ev;
				cJSON *je;

				if (!wanted(e, all))
					continue;
				je = cJSON_CreateObject();
				cJSON_AddItemToObject(je, "thread", id_json((uint64_t)th->id));
				cJSON_AddNumberToObject(je, "start_ns", (double)e->start_ns);
				cJSON_AddNumberToObject(je, "dur_ns", (double)e->dur_ns);
				cJSON_AddStringToObject(je, "name", e->sig->name);
				if (e->flags & TFD_EVF_ID)
					cJSON_AddItemToObject(je, "id", id_json(e->id));
				if (e->flags & TFD_EVF_PARENT)
					cJSON_AddItemToObject(je, "parent_id",
							      id_json(e->sig->parent_id));
				if (e->flags & TFD_EVF_ELEMENT)
					cJSON_AddItemToObject(je, "element_id",
							      id_json(e->element_id));
				if (e->sig->nparams) {
					cJSON *jp = cJSON_AddObjectToObject(je, "params");

					for (uint16_t p = 0; p < e->sig->nparams; p++)
						cJSON_AddStringToObject(jp, e->sig->params[p].key,
									e->sig->params[p].val);
				}
				cJSON_AddItemToArray(events, je);
			}
		}
		cJSON_AddItemToObject(jh, all ? "events" : "iterator_events", events);
	}
	out = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	return out;
}

int cmd_dump(int argc, char **argv)
{
	struct cli_opts o;
	struct tfd_load_opts lo = {0};
	struct tfd_capture *cap = NULL;
	struct tfd_err err = {0};
	struct tfd_buf b;
	const char *outpath, *fmt;
	int json, all, first, rc = cli_parse(&cli_dump, argc, argv, &o);

	if (rc)
		return rc == 1 ? 0 : rc;
	fmt = o.v[OPT_FORMAT];
	if (fmt && strcmp(fmt, "json") && strcmp(fmt, "text"))
		return tfd_cli_usage("dump", "unknown format '%s' (text or json)", fmt);
	/* -q is accepted for symmetry: dump prints no notes */
	json = fmt ? strcmp(fmt, "json") == 0 : o.v[OPT_JSON] != NULL;
	all = o.v[OPT_ALL] != NULL;
	lo.run = o.v[OPT_RUN];
	outpath = o.v[OPT_OUTPUT];
	first = o.args;
	if (first >= argc)
		return tfd_cli_usage("dump", "no capture given");
	lo.keep_other = all;
	lo.progress = tfd_cli_progress;
	rc = tfd_cli_guard_output(outpath, (const char *const *)argv + first,
				  (size_t)(argc - first), NULL, NULL, NULL);
	if (rc)
		return rc;
	if (tfd_capture_load((const char *const *)argv + first, (size_t)(argc - first), &lo, &cap,
			     &err))
		return tfd_cli_report(&err);
	tfd_buf_init(&b);
	if (json) {
		char *s = dump_json(cap, all);

		tfd_buf_json_pretty(&b, s);
		cJSON_free(s);
	} else {
		dump_text(cap, all, &b);
		tfd_buf_escape_controls(&b); /* names come from the capture */
	}
	if (tfd_cli_guard_output(outpath, NULL, 0, NULL, NULL, cap))
		rc = 2;
	else
		rc = tfd_output_write(outpath, b.s, b.len, &err) ? tfd_cli_report(&err) : 0;
	tfd_buf_release(&b);
	tfd_capture_free(cap);
	return rc;
}
