/* chrome.c - Chrome trace JSON reader (*.trace.json[.gz]); the only user of
 * cJSON on the input side.
 *
 * Two renderings exist: TF >= 2.3 writes the short iterator name in "name"
 * and the full path in args.long_name; TF 2.2 writes the long name in
 * "name". Produce/Consume events are dropped by the renderer, so analysis
 * falls back to parent_id plus time overlap for these captures.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "input_impl.h"
#include "tfd/imap.h"
#include "tfd/vec.h"

/* cJSON numbers and strings both occur for pid/tid/ts/dur. */
static int get_num(const cJSON *o, const char *key, double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return 1;
	}
	if (cJSON_IsString(v) && v->valuestring) {
		char *end;

		*out = strtod(v->valuestring, &end);
		return end != v->valuestring;
	}
	return 0;
}

/* A JSON number as an int64 key (pid, tid, group): out of range -> 0. */
static int64_t to_i64(double v)
{
	return isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0;
}

static int is_host_process(const char *name)
{
	return strcmp(name, "/host:CPU") == 0;
}

enum tfd_status tfd_chrome_read(struct tfd_capture *cap, const char *data, size_t len,
				const char *path, const char *default_host,
				const struct tfd_load_opts *opts, struct tfd_err *err)
{
	cJSON *root;
	const cJSON *events, *ev;
	const char *errp = NULL;
	struct imap host_pids = {0};
	enum tfd_status st = TFD_OK;
	struct tfd_host *h;
	size_t host_idx, nproc_named = 0;
	VEC(const cJSON *) thread_meta = {0};

	(void)path;
	root = cJSON_ParseWithLengthOpts(data, len, &errp, 0);
	if (!root) {
		size_t off = errp && errp >= data && errp <= data + len ? (size_t)(errp - data) : 0;

		if (off >= len)
			return tfd_fail(err, TFD_E_FORMAT, "invalid JSON: truncated document");
		return tfd_fail(err, TFD_E_FORMAT, "invalid JSON near byte %zu", off);
	}
	if (cJSON_IsArray(root))
		events = root;
	else
		events = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
	if (!cJSON_IsArray(events)) {
		cJSON_Delete(root);
		return tfd_fail(err, TFD_E_FORMAT,
				"not a Chrome trace: no \"traceEvents\" array");
	}
	{
		const cJSON *first = events->child;

		if (first && !cJSON_GetObjectItemCaseSensitive(first, "ph") &&
		    !cJSON_GetObjectItemCaseSensitive(first, "name")) {
			cJSON_Delete(root);
			return tfd_fail(err, TFD_E_FORMAT,
					"not a Chrome trace: events have no \"ph\" or \"name\"");
		}
	}
	h = tfd_capture_add_host(cap, default_host);
	host_idx = cap->nhosts - 1;
	h->format = TFD_FMT_CHROME_JSON;

	/* pass 1: process names decide which pids are the host */
	cJSON_ArrayForEach(ev, events)
	{
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *args, *an;
		double pid;

		if (!cJSON_IsObject(ev) || !cJSON_IsString(ph) || strcmp(ph->valuestring, "M") ||
		    !cJSON_IsString(nm) || !get_num(ev, "pid", &pid))
			continue;
		args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		an = args ? cJSON_GetObjectItemCaseSensitive(args, "name") : NULL;
		if (!cJSON_IsString(an))
			continue;
		if (strcmp(nm->valuestring, "process_name") == 0) {
			struct tfd_plane_info *pi;

			nproc_named++;
			if (is_host_process(an->valuestring))
				imap_put(&host_pids, (uint64_t)to_i64(pid), 1);
			h = &cap->hosts[host_idx];
			h->planes = xrealloc(h->planes, (h->nplanes + 1) * sizeof(*h->planes));
			pi = &h->planes[h->nplanes++];
			memset(pi, 0, sizeof(*pi));
			pi->name = tfd_arena_intern_cstr(&cap->arena, an->valuestring);
			pi->decoded = is_host_process(an->valuestring);
		} else if (strcmp(nm->valuestring, "thread_name") == 0) {
			vec_push(&thread_meta, ev);
		}
	}
	h = &cap->hosts[host_idx];
	/* a generic trace without process names: everything is host activity */
	h->has_host_plane = host_pids.n > 0 || nproc_named == 0;

	for (size_t i = 0; i < thread_meta.n; i++) {
		const cJSON *m = thread_meta.v[i];
		double pid, tid;
		const cJSON *an = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(m, "args"), "name");

		if (!get_num(m, "pid", &pid) || !get_num(m, "tid", &tid))
			continue;
		if (nproc_named && !imap_get(&host_pids, (uint64_t)to_i64(pid), NULL))
			continue;
		tfd_host_thread(cap, h, to_i64(tid), an->valuestring);
	}

	/* pass 2: complete events of host processes */
	cJSON_ArrayForEach(ev, events)
	{
		const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(ev, "name");
		const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
		const cJSON *ln = args ? cJSON_GetObjectItemCaseSensitive(args, "long_name") : NULL;
		const cJSON *a;
		double pid = 0, tid = 0, ts, dur = 0;
		const char *name;
		int64_t start, end, group = 0;
		int has_group = 0;
		uint32_t th;
		struct tfd_event *e;

		if (!cJSON_IsObject(ev) || !cJSON_IsString(ph) || strcmp(ph->valuestring, "X") ||
		    !cJSON_IsString(nm))
			continue;
		get_num(ev, "pid", &pid);
		if (nproc_named && !imap_get(&host_pids, (uint64_t)to_i64(pid), NULL))
			continue;
		get_num(ev, "tid", &tid);
		if (!get_num(ev, "ts", &ts)) {
			st = tfd_fail(err, TFD_E_FORMAT, "event '%s' has no \"ts\"", nm->valuestring);
			goto out;
		}
		get_num(ev, "dur", &dur);
		if (!isfinite(ts) || !isfinite(dur) || dur < 0 ||
		    fabs(ts) > (double)TFD_MAX_TIME_NS / 1000.0 ||
		    dur > (double)TFD_MAX_DURATION_NS / 1000.0) {
			st = tfd_fail(err, TFD_E_FORMAT, "event '%s' has an invalid ts/dur",
				      nm->valuestring);
			goto out;
		}
		name = cJSON_IsString(ln) && ln->valuestring[0] ? ln->valuestring : nm->valuestring;
		if (strlen(name) > TFD_MAX_NAME_LEN) {
			st = tfd_fail(err, TFD_E_LIMIT, "event name longer than %d bytes",
				      TFD_MAX_NAME_LEN);
			goto out;
		}
		/* microseconds as floats -> nanoseconds, rounded once here */
		start = llround(ts * 1000.0);
		end = llround((ts + dur) * 1000.0);
		if (args) {
			const cJSON *g = cJSON_GetObjectItemCaseSensitive(args, "group_id");
			double gv;

			if (g && get_num(args, "group_id", &gv)) {
				has_group = 1;
				group = to_i64(gv);
			}
		}
		h = &cap->hosts[host_idx];
		tfd_host_note(cap, h, has_group, group, start, end);
		if (!tfd_keep_kind(tfd_event_kind_of(name), opts))
			continue;
		if (h->nevents >= tfd_max_events(opts)) {
			st = tfd_fail(err, TFD_E_LIMIT, "more than %zu host events",
				      tfd_max_events(opts));
			goto out;
		}
		th = tfd_host_thread(cap, h, to_i64(tid), NULL);
		e = tfd_host_add_event(cap, h, th, name, start, end - start);
		if (!cJSON_IsObject(args))
			continue;
		cJSON_ArrayForEach(a, args)
		{
			if (!a->string)
				continue;
			if (cJSON_IsString(a))
				tfd_event_set_stat_str(cap, e, a->string, a->valuestring);
			else if (cJSON_IsNumber(a)) {
				char buf[64];

				/* ids as JSON numbers lose precision past 2^53;
				 * TensorFlow writes them as strings */
				snprintf(buf, sizeof(buf), "%.17g", a->valuedouble);
				if (a->valuedouble == floor(a->valuedouble) && fabs(a->valuedouble) < 9.2e18)
					snprintf(buf, sizeof(buf), "%lld", (long long)a->valuedouble);
				tfd_event_set_stat_str(cap, e, a->string, buf);
			} else if (cJSON_IsBool(a)) {
				tfd_event_set_stat_str(cap, e, a->string,
						       cJSON_IsTrue(a) ? "true" : "false");
			}
		}
	}
out:
	imap_free(&host_pids);
	vec_free(&thread_meta);
	cJSON_Delete(root);
	return st;
}
