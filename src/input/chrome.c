/* chrome.c - Chrome trace JSON reader (*.trace.json[.gz]), streaming: the
 * only user of yajl.
 *
 * Two renderings exist: TF >= 2.3 writes the short iterator name in "name"
 * and the full path in args.long_name; TF 2.2 writes the long name in
 * "name". Produce/Consume events are dropped by the renderer, so analysis
 * falls back to parent_id plus time overlap for these captures.
 *
 * The document is read twice, never built as a tree: pass 1 reads only the
 * process and thread names (which pids are the host) and the dataset
 * functions' step ids, pass 2 keeps the complete events of host processes.
 * Both are a byte scan (chrome_scan.c) that finds the event objects; pass
 * 1 gives yajl's SAX parser only the few events that may matter, pass 2
 * reads each event with a reader of its own (chrome_fast.c), gives yajl
 * the rest and has yajl check the whole document; where the scan cannot,
 * yajl parses everything with the callbacks below. Memory is the
 * kept events, not the document: the input is fed in chunks, and pages of
 * a mapped file are dropped once read; gzip data is inflated chunk by
 * chunk on each pass, never whole. With a second core, pass 2's reading
 * runs on a thread of its own and hands the reader its events as records,
 * kept in the document's order.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <yajl/yajl_parse.h>

#include "chrome_impl.h"
#include "input_impl.h"
#include "tfd/buf.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/vec.h"

/* pid/tid/ts/dur may be JSON numbers or strings holding them. */
static bool num_of(const struct jev *e, size_t off1, double *out)
{
	const char *s = tfd_jev_str(e, off1);
	char *end;

	if (!s)
		return false;
	if (tfd_fast_decimal(s, out))
		return true;
	*out = strtod(s, &end);
	return end != s;
}

/* Numeric field f of the event (pid, tid, ts, dur): its value as the fast
 * read found it, else its text's. */
static bool field_num(const struct jev *e, enum field f, double *out)
{
	if (e->num_ok & (1u << (f - F_NUM_FIRST))) {
		*out = e->num[f - F_NUM_FIRST];
		return true;
	}
	return num_of(e, tfd_jev_field(e, f), out);
}

/* A JSON number as an int64 key (pid, tid, group): out of range -> 0. */
static int64_t to_i64(double v)
{
	return isfinite(v) && fabs(v) < 9.2e18 ? (int64_t)v : 0;
}

/* A group_id: a whole number a 64-bit step id can hold; another (2^64,
 * 1e308, 1.5) names no step (it read as 0, and every span went to step 0). */
static bool group_of(double v, int64_t *out)
{
	if (!(isfinite(v) && fabs(v) < 9.2e18 && v == floor(v)))
		return false;
	*out = (int64_t)v;
	return true;
}

static int is_host_process(const char *name)
{
	return strcmp(name, "/host:CPU") == 0;
}

static bool in_event(const struct parse *p)
{
	return p->events_depth && p->depth == p->events_depth + 1;
}

static bool in_args(const struct parse *p)
{
	return p->events_depth && p->depth == p->events_depth + 2 && p->ev.has_args &&
	       p->field == F_ARGS;
}

/* A scalar value: an event field, an args entry, or something ignored. */
static int scalar(struct parse *p, const unsigned char *s, size_t n, bool num)
{
	struct jev *e = &p->ev;

	if (in_event(p)) {
		tfd_jev_set(e, p->field, s, n);
		p->field = F_OTHER;
	} else if (in_args(p) && p->arg_key) {
		struct arg a = {p->arg_key, tfd_jev_keep(e, s, n), num};

		vec_push(&e->args, a);
		p->arg_key = 0;
	}
	return 1;
}

static int cb_null(void *ctx)
{
	struct parse *p = ctx;

	if (in_event(p))
		p->field = F_OTHER;
	p->arg_key = 0;
	return 1;
}

static int cb_bool(void *ctx, int v)
{
	return scalar(ctx, (const unsigned char *)(v ? "true" : "false"), v ? 4 : 5, false);
}

static int cb_number(void *ctx, const char *s, size_t n)
{
	return scalar(ctx, (const unsigned char *)s, n, true);
}

static int cb_string(void *ctx, const unsigned char *s, size_t n)
{
	return scalar(ctx, s, n, false);
}

static int cb_map_key(void *ctx, const unsigned char *k, size_t n)
{
	struct parse *p = ctx;

#define KEY(lit) (n == sizeof(lit) - 1 && memcmp(k, lit, n) == 0)
	if (p->depth == 1 && !p->events_depth)
		p->root_key_events = KEY("traceEvents");
	else if (in_event(p))
		p->field = KEY("ph")	 ? F_PH
			   : KEY("name") ? F_NAME
			   : KEY("pid")	 ? F_PID
			   : KEY("tid")	 ? F_TID
			   : KEY("ts")	 ? F_TS
			   : KEY("dur")	 ? F_DUR
			   : KEY("args") ? F_ARGS
					 : F_OTHER;
	else if (in_args(p))
		p->arg_key = tfd_jev_keep(&p->ev, k, n);
#undef KEY
	return 1;
}

static int cb_start_map(void *ctx)
{
	struct parse *p = ctx;

	if (p->events_depth && p->depth == p->events_depth) {
		tfd_jev_reset(&p->ev); /* an event begins */
		p->field = F_OTHER;
	} else if (in_event(p) && p->field == F_ARGS) {
		p->ev.has_args = true; /* field stays F_ARGS while inside */
	} else if (in_args(p)) {
		p->arg_key = 0; /* a nested object in args: ignored */
	}
	p->depth++;
	return 1;
}

static int cb_start_array(void *ctx)
{
	struct parse *p = ctx;

	if (!p->events_depth && ((p->depth == 1 && p->root_key_events) || p->depth == 0)) {
		p->events_depth = p->depth + 1;
		p->found_events = true;
	} else if (in_event(p)) {
		p->field = F_OTHER;
	} else if (in_args(p)) {
		p->arg_key = 0;
	}
	p->depth++;
	return 1;
}

static int cb_end_array(void *ctx)
{
	struct parse *p = ctx;

	p->depth--;
	if (p->events_depth && p->depth + 1 == p->events_depth)
		p->events_depth = -1; /* done: ignore the rest of the document */
	return 1;
}

static int finish_event(struct parse *p);

static int cb_end_map(void *ctx)
{
	struct parse *p = ctx;

	p->depth--;
	if (p->events_depth > 0 && p->depth == p->events_depth + 1 && p->field == F_ARGS) {
		p->field = F_OTHER; /* end of args */
		return 1;
	}
	if (p->events_depth > 0 && p->depth == p->events_depth)
		return finish_event(p);
	return 1;
}

const yajl_callbacks tfd_chrome_callbacks = {
    cb_null,	  cb_bool,    NULL,	  NULL,		  cb_number,	cb_string,
    cb_start_map, cb_map_key, cb_end_map, cb_start_array, cb_end_array,
};

/* The event's args.id as its 64-bit pattern, 0 if none. */
static uint64_t arg_id(const struct jev *e)
{
	uint64_t id;

	tfd_chrome_arg_id(e, &id);
	return id;
}

/* Pass 1: process names decide which pids are the host; the step ids of
 * dataset functions decide which executor chunks are worth keeping. */
static int meta_event(struct parse *p)
{
	const struct jev *e = &p->ev;
	const char *ph = tfd_jev_str(e, e->ph), *nm = tfd_jev_str(e, e->name), *an = NULL;
	double pid, tid;

	if (!p->checked_first) {
		p->checked_first = true;
		if (!ph && !nm) {
			p->st = tfd_fail(p->err, TFD_E_FORMAT,
					 "not a Chrome trace: events have no \"ph\" or \"name\"");
			return 0;
		}
	}
	if (ph && strcmp(ph, "X") == 0 && nm &&
	    strncmp(nm, "InstantiatedCapturedFunction::", 30) == 0) {
		uint64_t id = arg_id(e);

		if (id)
			fn_steps_add(&p->fn_steps, id);
		return 1;
	}
	if (!ph || strcmp(ph, "M") || !nm || !field_num(e, F_PID, &pid))
		return 1;
	for (size_t i = 0; i < e->args.n; i++)
		if (strcmp(tfd_jev_str(e, e->args.v[i].key), "name") == 0 && !e->args.v[i].num)
			an = tfd_jev_str(e, e->args.v[i].val);
	if (!an)
		return 1;
	if (strcmp(nm, "process_name") == 0) {
		struct tfd_host *h = &p->cap->hosts[p->host_idx];
		struct tfd_plane_info *pi;

		p->nproc_named++;
		if (is_host_process(an))
			imap_put(&p->host_pids, (uint64_t)to_i64(pid), 1);
		else if (tfd_is_device_plane(an))
			imap_put(&p->dev_pids, (uint64_t)to_i64(pid),
				 2 * h->nplanes + (tfd_is_device_plane(an) == TFD_DEVPLANE_TPU));
		h->planes = xrealloc(h->planes, (h->nplanes + 1) * sizeof(*h->planes));
		pi = &h->planes[h->nplanes++];
		memset(pi, 0, sizeof(*pi));
		pi->name = tfd_arena_intern_cstr(&p->cap->arena, an);
		pi->decoded = is_host_process(an) || tfd_is_device_plane(an);
	} else if (strcmp(nm, "thread_name") == 0 && field_num(e, F_TID, &tid)) {
		struct thread_meta t = {to_i64(pid), to_i64(tid), xstrdup(an)};

		vec_push(&p->threads, t);
	}
	return 1;
}

/* An args value as the stat text: ids keep every digit (TensorFlow writes
 * them as strings; a JSON number's own text is kept too). */
static const char *arg_text(const struct jev *e, const struct arg *a, char *buf, size_t len)
{
	const char *v = tfd_jev_str(e, a->val);
	double d;
	char *end;

	if (!a->num || strspn(v, "-0123456789") == strlen(v))
		return v;
	d = strtod(v, &end);
	if (d == floor(d) && fabs(d) < 9.2e18)
		snprintf(buf, len, "%lld", (long long)d);
	else
		snprintf(buf, len, "%.17g", d);
	return buf;
}

/* A dataset function's event (a kept executor chunk is one) opens a scope
 * for the ops after it on its thread (the executor chunks of other steps
 * too when every event is kept: only a dataset function's step counts). */
static void open_scope(struct parse *p, const struct tfd_event *ev, int64_t tid, int64_t start,
		       int64_t end)
{
	size_t k;
	bool by_id = (ev->flags & TFD_EVF_ID) != 0;

	if (ev->kind == TFD_EV_EXEC &&
	    (!(ev->flags & TFD_EVF_ID) || !fn_steps_has(&p->fn_steps, ev->id)))
		return;
	if (!imap_get(&p->op_tids, (uint64_t)tid, &k)) {
		struct tfd_opscope z;

		memset(&z, 0, sizeof(z));
		k = p->opscopes.n;
		vec_push(&p->opscopes, z);
		imap_put(&p->op_tids, (uint64_t)tid, k);
	}
	tfd_opscope_open(&p->opscopes.v[k], by_id ? ev->id : (uint64_t)tid, !by_id, start, end);
}

static uint64_t dev_thread_key(int64_t pid, int64_t tid)
{
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
}

/* After pass 1: the threads of device processes to read, by the classes
 * of their process's threads (tfd_dev_line_wanted). */
static void dev_threads_pick(struct parse *p)
{
	struct imap cls = {0}; /* pid -> the classes of its threads */
	size_t c;

	for (size_t i = 0; i < p->threads.n; i++) {
		const struct thread_meta *t = &p->threads.v[i];

		if (!imap_get(&p->dev_pids, (uint64_t)t->pid, NULL))
			continue;
		if (!imap_get(&cls, (uint64_t)t->pid, &c))
			c = 0;
		imap_put(&cls, (uint64_t)t->pid, c | tfd_dev_line_class(t->name, strlen(t->name)));
	}
	for (size_t i = 0; i < p->threads.n; i++) {
		const struct thread_meta *t = &p->threads.v[i];

		if (imap_get(&cls, (uint64_t)t->pid, &c))
			imap_put(&p->dev_threads, dev_thread_key(t->pid, t->tid),
				 tfd_dev_line_wanted(t->name, strlen(t->name), (unsigned)c));
	}
	imap_free(&cls);
}

/* Pass 2: a complete event of a device process: a span of the host's
 * device activity (struct tfd_device). */
static int device_event(struct parse *p, int64_t pid, size_t dp)
{
	bool tpu = dp & 1;
	const struct jev *e = &p->ev;
	const char *nm = tfd_jev_str(e, e->name);
	double tid = 0, ts, dur = 0, gv;
	struct tfd_dev_span sp = {0};
	struct tfd_host *h = &p->cap->hosts[p->host_idx];
	uint64_t bytes = 0;
	size_t want = 1;

	field_num(e, F_TID, &tid);
	if (imap_get(&p->dev_threads, dev_thread_key(pid, to_i64(tid)), &want) && !want)
		return 1;
	if (!field_num(e, F_TS, &ts) || !isfinite(ts) ||
	    fabs(ts) > (double)TFD_MAX_TIME_NS / 1000.0)
		return 1;
	field_num(e, F_DUR, &dur);
	if (!isfinite(dur) || dur <= 0)
		return 1;
	if (dur > (double)TFD_MAX_DURATION_NS / 1000.0)
		dur = (double)TFD_MAX_DURATION_NS / 1000.0;
	for (size_t i = 0; i < e->args.n; i++) {
		const char *k = tfd_jev_str(e, e->args.v[i].key),
			   *v = tfd_jev_str(e, e->args.v[i].val);

		if (strcmp(k, "memcpy_details") == 0) {
			bytes = tfd_memcpy_bytes(v, strlen(v));
		} else if (strcmp(k, "group_id") == 0 && num_of(e, e->args.v[i].val, &gv)) {
			sp.has_group = group_of(gv, &sp.group);
		}
	}
	sp.start_ns = llround(ts * 1000.0);
	sp.end_ns = llround((ts + dur) * 1000.0);
	sp.kind = (uint8_t)tfd_dev_kind_of(nm, strlen(nm), tpu);
	if (sp.kind == TFD_DEV_H2D)
		h->dev.h2d_bytes += bytes;
	vec_push(&p->dev_spans, sp);
	if (dp / 2 < h->nplanes)
		h->planes[dp / 2].nevents++;
	return 1;
}

/* An event's start and end in nanoseconds from its "ts" and "dur"
 * (microseconds as floats, rounded once here); false with p->st set when
 * they are missing or out of range. */
static bool event_span(struct parse *p, const struct jev *e, const char *nm, int64_t *start,
		       int64_t *end)
{
	double ts, dur = 0;

	if (!field_num(e, F_TS, &ts)) {
		p->st = tfd_fail(p->err, TFD_E_FORMAT, "event '%s' has no \"ts\"", nm);
		return false;
	}
	field_num(e, F_DUR, &dur);
	if (!isfinite(ts) || !isfinite(dur) || dur < 0 ||
	    fabs(ts) > (double)TFD_MAX_TIME_NS / 1000.0 ||
	    dur > (double)TFD_MAX_DURATION_NS / 1000.0) {
		p->st = tfd_fail(p->err, TFD_E_FORMAT, "event '%s' has an invalid ts/dur", nm);
		return false;
	}
	*start = llround(ts * 1000.0);
	*end = llround((ts + dur) * 1000.0);
	return true;
}

/* The event's long name (its "long_name" arg, else nm) and its step (a
 * "group_id" arg): whether it has one. */
static bool event_names(const struct jev *e, const char *nm, const char **name, int64_t *group)
{
	bool has_group = false;
	double gv;

	*name = nm;
	for (size_t i = 0; i < e->args.n; i++) {
		const char *k = tfd_jev_str(e, e->args.v[i].key);

		if (k[0] == 'l' && strcmp(k, "long_name") == 0 && !e->args.v[i].num &&
		    *tfd_jev_str(e, e->args.v[i].val))
			*name = tfd_jev_str(e, e->args.v[i].val);
		else if (k[0] == 'g' && strcmp(k, "group_id") == 0 &&
			 num_of(e, e->args.v[i].val, &gv))
			has_group = group_of(gv, group);
	}
	return has_group;
}

/* A step marker, noted with its step number and group: a step marker's
 * name (tfd_step_marker_name()) with a "step_num" or "_r" arg, or any
 * other name but TensorFlow's own roots' (tfd_step_root_name()) with a
 * "_r" arg (a raw trace) or the "step_name" TensorFlow's converter gives
 * a step's root (it names the event with its number too: "train 25",
 * "step 25"). */
static void note_marker(struct tfd_host *h, const struct jev *e, const char *nm, double tid,
			int64_t start, int64_t end, bool has_group, int64_t group)
{
	int64_t step = -1;
	bool root = false, num = false;
	double v;

	for (size_t i = 0; i < e->args.n; i++) {
		const char *k = tfd_jev_str(e, e->args.v[i].key);

		if (k[0] != '_' && k[0] != 's')
			continue; /* (most args) */
		if (strcmp(k, "_r") == 0 || strcmp(k, "step_name") == 0) {
			root = true;
		} else if (strcmp(k, "step_num") == 0) {
			num = true;
			if (num_of(e, e->args.v[i].val, &v) && group_of(v, &step) && step < 0)
				step = -1;
		}
	}
	if (!root && !num)
		return;
	if (tfd_step_marker_name(nm) || (root && tfd_step_root_name(nm)))
		tfd_host_step_marker(h, nm, to_i64(tid), step, start, end, has_group, group);
}

/* Pass 2: a complete event of a host process. */
static int host_event(struct parse *p)
{
	const struct jev *e = &p->ev;
	const char *ph = tfd_jev_str(e, e->ph), *nm = tfd_jev_str(e, e->name), *name;
	double pid = 0, tid = 0;
	int64_t start, end, group = 0;
	bool has_group;
	struct tfd_host *h;
	struct tfd_event *ev;
	enum tfd_ev_kind kind;
	uint32_t th;
	size_t tk, nlen;
	struct name_slot *ns;
	bool held;

	if (!ph || strcmp(ph, "X") || !nm)
		return 1;
	field_num(e, F_PID, &pid);
	if (p->nproc_named && !imap_get(&p->host_pids, (uint64_t)to_i64(pid), NULL)) {
		size_t dp;

		if (imap_get(&p->dev_pids, (uint64_t)to_i64(pid), &dp))
			return device_event(p, to_i64(pid), dp);
		return 1;
	}
	field_num(e, F_TID, &tid);
	if (!event_span(p, e, nm, &start, &end))
		return 0;
	has_group = event_names(e, nm, &name, &group);
	nlen = strlen(name);
	if (nlen > TFD_MAX_NAME_LEN) {
		p->st = tfd_fail(p->err, TFD_E_LIMIT, "event name longer than %d bytes",
				 TFD_MAX_NAME_LEN);
		return 0;
	}
	h = &p->cap->hosts[p->host_idx];
	tfd_host_note(p->cap, h, has_group, group, start, end);
	note_marker(h, e, nm, tid, start, end, has_group, group);
	tfd_chrome_note_run(p, h, nm, to_i64(tid), start, end, has_group, group);
	if (tfd_host_op_is_h2d(name, nlen))
		tfd_device_host_op(h, start, end, has_group, group);
	ns = tfd_chrome_name_slot(p, name, nlen);
	kind = tfd_chrome_name_kind(ns, name, nlen, &held);
	if (kind == TFD_EV_OTHER && p->opscopes.n &&
	    imap_get(&p->op_tids, (uint64_t)to_i64(tid), &tk))
		tfd_opscope_event(p->cap, h, &p->opscopes.v[tk], name, NULL, start, end);
	if (!tfd_keep_kind(kind, p->opts))
		return 1;
	/* only the executor chunks of dataset functions (not the training step's) */
	if (!(p->opts && p->opts->keep_other) && kind == TFD_EV_EXEC &&
	    !fn_steps_has(&p->fn_steps, arg_id(e)))
		return 1;
	if (h->nevents >= tfd_max_events(p->opts)) {
		p->st = tfd_fail(p->err, TFD_E_LIMIT, "more than %zu host events",
				 tfd_max_events(p->opts));
		return 0;
	}
	th = tfd_host_thread(p->cap, h, to_i64(tid), NULL);
	ev = tfd_chrome_add_named(p, h, th, ns, held, name, nlen, kind, start, end - start);
	for (size_t i = 0; i < e->args.n; i++) {
		char buf[64];

		tfd_event_set_stat_str(p->cap, ev, tfd_jev_str(e, e->args.v[i].key),
				       arg_text(e, &e->args.v[i], buf, sizeof(buf)));
	}
	if (kind == TFD_EV_FUNCTION || kind == TFD_EV_EXEC)
		open_scope(p, ev, to_i64(tid), start, end);
	if (p->gn.open && kind == TFD_EV_ITERATOR)
		tfd_host_get_next_iterator(h, &p->gn, to_i64(tid), ev);
	return 1;
}

static int queue_event(struct parse *p);

static int finish_event(struct parse *p)
{
	if (p->pass == 1)
		return meta_event(p);
	if (p->check_only)
		return 1;
	if (p->q) /* parsed on a thread of its own: kept by the reader's */
		return queue_event(p);
	if (p->deferred)
		return 1; /* an event was bad: only the JSON is still checked */
	if (!host_event(p)) {
		/* a bad event: the rest of the document is still parsed, so that
		 * invalid JSON anywhere is the error, as when the first pass read
		 * every byte (the scan does not) */
		p->deferred = p->st;
		p->deferred_err = *p->err;
		p->st = TFD_OK;
	}
	return 1;
}

/* The document: bytes in memory (mapped or not), or gzip data inflated
 * chunk by chunk on every pass, so the inflated document is never held. */

/* Feeds one chunk; false when yajl stopped. */
static bool feed(yajl_handle y, yajl_status *ys, const unsigned char *b, size_t n)
{
	*ys = yajl_parse(y, b, n);
	return *ys == yajl_status_ok;
}

/* Bytes of the document into yajl, chunk by chunk (a feed_plain consumer
 * and a tfd_gunzip sink alike): chunk_start is where the chunk begins in
 * the document, for error messages. */
struct yajl_feed {
	yajl_handle y;
	yajl_status *ys;
	size_t *chunk_start, fed;
};

static bool yajl_sink(void *ctx, const unsigned char *b, size_t n)
{
	struct yajl_feed *f = ctx;

	*f->chunk_start = f->fed;
	f->fed += n;
	return feed(f->y, f->ys, b, n);
}

/* A consumer of the document's bytes, chunk by chunk; false: stop. */

/* A pass that ended well reports the first bad event, if any (invalid
 * JSON anywhere is the error before it). */
static void take_deferred(struct parse *p)
{
	if (p->st == TFD_OK && p->deferred) {
		p->st = p->deferred;
		*p->err = p->deferred_err;
	}
}

/* One pass over the document, fed in chunks. */
static enum tfd_status run_pass(struct parse *p, const struct source *src)
{
	yajl_handle y = yajl_alloc(&tfd_chrome_callbacks, NULL, p);
	yajl_status ys = yajl_status_ok;
	size_t chunk_start = 0;
	struct yajl_feed f = {y, &ys, &chunk_start, 0};
	bool at_end = false;

	yajl_config(y, yajl_allow_multiple_values, 0);
	if (src->gz) {
		enum tfd_status st =
		    tfd_gunzip_ahead((const uint8_t *)src->data, src->len, src->mapped, src->limit,
				     tfd_load_cores(p->opts) > 1, yajl_sink, &f, p->err);

		if (st) {
			yajl_free(y);
			return p->st = st;
		}
	} else {
		tfd_chrome_feed_plain(src, yajl_sink, &f);
	}
	if (ys == yajl_status_ok) {
		ys = yajl_complete_parse(y);
		at_end = true;
	}
	if (ys == yajl_status_error && p->st == TFD_OK) {
		if (at_end)
			p->st = tfd_fail(p->err, TFD_E_FORMAT, "invalid JSON: truncated document");
		else
			p->st = tfd_fail(p->err, TFD_E_FORMAT, "invalid JSON near byte %zu",
					 chunk_start + yajl_get_bytes_consumed(y));
	}
	take_deferred(p);
	yajl_free(y);
	return p->st;
}

/* The parser's place back to the document's start, for a pass from it. */
static void parse_restart(struct parse *p)
{
	p->depth = p->events_depth = 0;
	p->root_key_events = false;
	p->field = F_OTHER;
	p->arg_key = 0;
}

/* Pass 2 by the scan (the parser reads only the events it leaves), unless
 * the tests ask for the full parse; the full parse when the scan cannot,
 * and again, keeping no events, to find the error of JSON the scan found
 * bad after it had read events. Should the parser find none, p->rescan:
 * the caller reads the file again with the parser alone. */
static enum tfd_status run_pass2(struct parse *p, const struct source *src)
{
	enum scan_result r = SCAN_CANT;
	size_t bad_at = 0;

	if (!(p->opts && p->opts->chrome_no_scan))
		r = tfd_chrome_scan_pass(p, src, &tfd_chrome_callbacks, finish_event, &bad_at);
	if (r == SCAN_DONE) {
		take_deferred(p);
		return p->st;
	}
	parse_restart(p);
	if (r == SCAN_CANT)
		return run_pass(p, src);
	p->check_only = true;
	p->deferred = TFD_OK;
	if (run_pass(p, src) == TFD_OK) { /* the scan saw what the parser did not */
		if (p->opts && p->opts->chrome_scan_strict)
			p->st =
			    tfd_fail(p->err, TFD_E_FORMAT, "invalid JSON near byte %zu", bad_at);
		p->rescan = true;
	}
	return p->st;
}

/* ---- pass 2 on two threads ------------------------------------------------
 *
 * With a second core, pass 2's parse (the bytes fed, inflated, parsed, each
 * event's fields gathered by the callbacks) runs on a thread of its own,
 * and its events go to the reader's thread as records, which it keeps in
 * the document's order (finish_event()): the capture and any error are
 * the one thread's. The queue holds a few buffers of records, so memory
 * does not grow with the document. */

#define QBUF ((size_t)256 << 10)   /* a buffer of records */
#define QSLOTS 4		   /* buffers the parse may be ahead */
#define PIPE_MIN ((size_t)8 << 20) /* a smaller document is read on one thread */

struct evq {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct tfd_buf slot[QSLOTS]; /* full buffers, a ring from head */
	size_t head, n;
	struct tfd_buf cur; /* the parse's buffer being filled */
	bool done;	    /* the parse's end: its status and error */
	enum tfd_status st;
	struct tfd_err err;
	struct parse w; /* the parse's own state (the thread's) */
	const struct source *src;
};

/* An event's record: its fields, then its args, then its strings. */
struct rec {
	size_t ph, name, pid, tid, ts, dur, nargs, nscratch;
	double num[4];
	unsigned num_ok;
	bool has_args;
};

/* The full buffer into the ring (waiting for room), a new one begun. */
static void queue_flush(struct evq *q)
{
	pthread_mutex_lock(&q->mu);
	while (q->n == QSLOTS)
		pthread_cond_wait(&q->cv, &q->mu);
	q->slot[(q->head + q->n++) % QSLOTS] = q->cur;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	tfd_buf_init(&q->cur);
}

static int queue_event(struct parse *p)
{
	struct evq *q = p->q;
	const struct jev *e = &p->ev;
	struct rec r;

	memset(&r, 0, sizeof(r)); /* no stray padding bytes in the buffer */
	r.ph = e->ph;
	r.name = e->name;
	r.pid = e->pid;
	r.tid = e->tid;
	r.ts = e->ts;
	r.dur = e->dur;
	r.nargs = e->args.n;
	r.nscratch = e->scratch.len;
	memcpy(r.num, e->num, sizeof(r.num));
	r.num_ok = e->num_ok;
	r.has_args = e->has_args;
	tfd_buf_add(&q->cur, (const char *)&r, sizeof(r));
	if (e->args.n)
		tfd_buf_add(&q->cur, (const char *)e->args.v, e->args.n * sizeof(*e->args.v));
	if (e->scratch.len)
		tfd_buf_add(&q->cur, e->scratch.s, e->scratch.len);
	if (q->cur.len >= QBUF)
		queue_flush(q);
	return 1;
}

static void *parse_thread(void *arg)
{
	struct evq *q = arg;
	enum tfd_status st = run_pass2(&q->w, q->src);

	if (q->cur.len)
		queue_flush(q);
	pthread_mutex_lock(&q->mu);
	q->done = true;
	q->st = st;
	pthread_cond_broadcast(&q->cv);
	pthread_mutex_unlock(&q->mu);
	return NULL;
}

/* The records of buffer b kept, in order. */
static void keep_records(struct parse *p, const struct tfd_buf *b)
{
	size_t at = 0;

	while (at < b->len) {
		struct rec r;
		struct jev *e = &p->ev;

		memcpy(&r, b->s + at, sizeof(r));
		at += sizeof(r);
		e->ph = r.ph;
		e->name = r.name;
		e->pid = r.pid;
		e->tid = r.tid;
		e->ts = r.ts;
		e->dur = r.dur;
		memcpy(e->num, r.num, sizeof(e->num));
		e->num_ok = r.num_ok;
		e->has_args = r.has_args;
		e->args.n = 0;
		for (size_t i = 0; i < r.nargs; i++) {
			struct arg a;

			memcpy(&a, b->s + at, sizeof(a));
			at += sizeof(a);
			vec_push(&e->args, a);
		}
		e->scratch.len = 0;
		if (r.nscratch)
			tfd_buf_add(&e->scratch, b->s + at, r.nscratch);
		at += r.nscratch;
		finish_event(p);
	}
}

static void queue_free(struct evq *q)
{
	vec_free(&q->w.ev.args);
	tfd_buf_release(&q->w.ev.scratch);
	tfd_buf_release(&q->cur);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cv);
	free(q);
}

/* Pass 2 with its parse on another thread; false: no thread to be had
 * (nothing was read). */
static bool run_pass_piped(struct parse *p, const struct source *src, enum tfd_status *st)
{
	struct evq *q = xcalloc(1, sizeof(*q));
	pthread_t th;

	pthread_mutex_init(&q->mu, NULL);
	pthread_cond_init(&q->cv, NULL);
	tfd_buf_init(&q->cur);
	q->src = src;
	q->w.pass = 2;
	q->w.cap = p->cap;
	q->w.host_idx = p->host_idx;
	q->w.opts = p->opts;
	q->w.err = &q->err;
	q->w.q = q;
	tfd_buf_init(&q->w.ev.scratch);
	if (pthread_create(&th, NULL, parse_thread, q) != 0) {
		queue_free(q);
		return false;
	}
	for (;;) {
		struct tfd_buf b;

		pthread_mutex_lock(&q->mu);
		while (!q->n && !q->done)
			pthread_cond_wait(&q->cv, &q->mu);
		if (!q->n) {
			pthread_mutex_unlock(&q->mu);
			break;
		}
		b = q->slot[q->head];
		q->head = (q->head + 1) % QSLOTS;
		q->n--;
		pthread_cond_broadcast(&q->cv);
		pthread_mutex_unlock(&q->mu);
		keep_records(p, &b);
		tfd_buf_release(&b);
	}
	pthread_join(th, NULL);
	/* as run_pass(): the JSON's error first, then the first bad event's */
	if (q->st) {
		p->st = q->st;
		*p->err = q->err;
	}
	p->rescan = q->w.rescan;
	take_deferred(p);
	*st = p->st;
	queue_free(q);
	return true;
}

/* ---- pass 1 by a structural scan ---------------------------------------- */

/* Pass 1's results back to none (the scan gave up part way). */
static void pass1_reset(struct parse *p)
{
	struct tfd_host *h = &p->cap->hosts[p->host_idx];

	for (size_t i = 0; i < p->threads.n; i++)
		free(p->threads.v[i].name);
	p->threads.n = 0;
	imap_free(&p->host_pids);
	imap_free(&p->dev_pids);
	fn_steps_free(&p->fn_steps);
	h->nplanes = 0;
	p->nproc_named = 0;
	p->found_events = p->checked_first = false;
	parse_restart(p);
}

static enum tfd_status read_source(struct tfd_capture *cap, const struct source *src,
				   const char *default_host, const struct tfd_load_opts *opts,
				   struct tfd_err *err)
{
	struct parse p;
	struct tfd_host *h;
	enum tfd_status st;
	/* the document's length as pass 1's scan read it (gzip data
	 * inflated), else the source's */
	size_t bad_at, doc_len = src->len;

	cap->fold_exec = !(opts && opts->keep_other);
	memset(&p, 0, sizeof(p));
	p.cap = cap;
	p.opts = opts;
	p.err = err;
	tfd_buf_init(&p.ev.scratch);
	h = tfd_capture_add_host(cap, default_host);
	p.host_idx = cap->nhosts - 1;
	h->format = TFD_FMT_CHROME_JSON;
	p.pass = 1;
	st = TFD_OK;
	if ((opts && opts->chrome_no_scan) ||
	    tfd_chrome_scan_pass(&p, src, &tfd_chrome_callbacks, NULL, &bad_at) != SCAN_DONE) {
		pass1_reset(&p);
		st = run_pass(&p, src);
	} else {
		doc_len = bad_at;
	}
	if (!st && !p.found_events)
		st = tfd_fail(err, TFD_E_FORMAT, "not a Chrome trace: no \"traceEvents\" array");
	if (st)
		goto out;
	h = &cap->hosts[p.host_idx];
	/* a generic trace without process names: everything is host activity */
	h->has_host_plane = p.host_pids.n > 0 || p.nproc_named == 0;
	for (size_t i = 0; i < p.threads.n; i++)
		if (!p.nproc_named || imap_get(&p.host_pids, (uint64_t)p.threads.v[i].pid, NULL))
			tfd_host_thread(cap, h, p.threads.v[i].tid, p.threads.v[i].name);
	dev_threads_pick(&p);
	h->dev.nplanes += p.dev_pids.n;
	for (size_t i = 0; i < h->nplanes; i++)
		h->dev.tpu |= tfd_is_device_plane(h->planes[i].name) == TFD_DEVPLANE_TPU;
	p.pass = 2; /* run_pass2() restarts the parser's place where it parses */
	if (doc_len < PIPE_MIN || tfd_load_cores(opts) < 2 || !run_pass_piped(&p, src, &st))
		st = run_pass2(&p, src);
	if (!st && p.rescan)
		goto out;
	if (!st)
		st = tfd_fn_ops_check(&cap->hosts[p.host_idx], err);
	if (!st && (p.dev_spans.n || cap->hosts[p.host_idx].dev.nhost_ops)) {
		/* the host's steps and waits are in: the device's breakdown */
		struct tfd_dev_array a = {p.dev_spans.v, p.dev_spans.n, 0};
		struct tfd_dev_source s1 = tfd_dev_array_source(&a);

		tfd_host_pack_pending(cap, &cap->hosts[p.host_idx]); /* the sweep reads the waits */
		tfd_device_sweep(cap, &cap->hosts[p.host_idx], &s1, 1);
	}
out:
	vec_free(&p.dev_spans);
	for (size_t i = 0; i < p.threads.n; i++)
		free(p.threads.v[i].name);
	vec_free(&p.threads);
	vec_free(&p.ev.args);
	tfd_buf_release(&p.ev.scratch);
	imap_free(&p.host_pids);
	imap_free(&p.dev_pids);
	imap_free(&p.dev_threads);
	fn_steps_free(&p.fn_steps);
	imap_free(&p.op_tids);
	vec_free(&p.opscopes);
	if (!st && p.rescan) { /* the host again, read by yajl alone */
		struct tfd_load_opts full = opts ? *opts : (struct tfd_load_opts){0};

		full.chrome_no_scan = true;
		tfd_capture_drop_last_host(cap);
		return read_source(cap, src, default_host, &full, err);
	}
	return st;
}

enum tfd_status tfd_chrome_read(struct tfd_capture *cap, const char *data, size_t len,
				const char *path, const char *default_host,
				const struct tfd_load_opts *opts, bool mapped, struct tfd_err *err)
{
	const struct source src = {data, len, mapped, false, 0};

	(void)path;
	return read_source(cap, &src, default_host, opts, err);
}

enum tfd_status tfd_chrome_read_gz(struct tfd_capture *cap, const uint8_t *gz, size_t len,
				   bool mapped, size_t limit, const char *default_host,
				   const struct tfd_load_opts *opts, struct tfd_err *err)
{
	const struct source src = {(const char *)gz, len, mapped, true, limit};

	return read_source(cap, &src, default_host, opts, err);
}
