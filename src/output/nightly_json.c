/* nightly_json.c - the pipeline-health report as JSON (nightly.h): each
 * job's verdict, regressions and recorded history, for dashboards. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tfd/history.h"
#include "tfd/jsonmem.h"
#include "tfd/nightly.h"
#include "tfd/render.h"

void tfd_nightly_json(const struct tfd_job *jobs, size_t n, struct tfd_buf *b)
{
	cJSON *root = cJSON_CreateObject(), *arr;

	tfd_json_add_num(root, "schema_version", 1);
	cJSON_AddStringToObject(root, "kind", "pipeline-health");
	arr = cJSON_AddArrayToObject(root, "jobs");
	for (size_t j = 0; j < n; j++) {
		const struct tfd_job *job = &jobs[j];
		cJSON *o = cJSON_CreateObject(), *regs, *hist;

		cJSON_AddStringToObject(o, "job", job->name);
		if (job->error) {
			cJSON_AddStringToObject(o, "error", job->error);
			cJSON_AddItemToArray(arr, o);
			continue;
		}
		cJSON_AddStringToObject(o, "run", job->current.run);
		cJSON_AddStringToObject(o, "recorded_at", job->current.recorded_at);
		cJSON_AddBoolToObject(o, "input_bound", job->analysis->input_bound);
		regs = cJSON_AddArrayToObject(o, "regressions");
		for (size_t r = 0; r < job->nregs; r++) {
			cJSON *x = cJSON_CreateObject();

			cJSON_AddStringToObject(x, "kind", job->regs[r].kind);
			cJSON_AddStringToObject(x, "against", job->regs[r].against);
			cJSON_AddStringToObject(x, "text", job->regs[r].text);
			cJSON_AddItemToArray(regs, x);
		}
		hist = cJSON_AddArrayToObject(o, "history");
		for (size_t i = 0; i < job->nhistory; i++) {
			const struct tfd_hist_run *r = &job->history[i];
			cJSON *x = cJSON_CreateObject();

			tfd_json_add_num(x, "id", (double)r->id);
			cJSON_AddStringToObject(x, "run", r->run);
			cJSON_AddStringToObject(x, "recorded_at", r->recorded_at);
			if (r->nhosts) {
				const struct tfd_hist_host *h = &r->hosts[0];

				cJSON_AddStringToObject(x, "host", h->host);
				if (isnan(h->input_percent))
					cJSON_AddNullToObject(x, "input_percent");
				else
					tfd_json_add_num(x, "input_percent",
							 round(h->input_percent * 100) / 100);
				tfd_json_add_num(x, "p50_ns", (double)h->p50_ns);
				tfd_json_add_num(x, "max_latency_ns", (double)h->max_latency_ns);
				cJSON_AddStringToObject(x, "bottleneck", h->bottleneck);
				cJSON_AddStringToObject(x, "top_rule", h->top_rule);
				cJSON_AddStringToObject(x, "top_severity", h->top_severity);
			}
			cJSON_AddItemToArray(hist, x);
		}
		cJSON_AddItemToArray(arr, o);
	}
	tfd_json_pretty_tree(b, root);
	cJSON_Delete(root);
}
