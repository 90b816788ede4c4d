/* partial.c - per-host partial results (JSON) and their merge; see
 * include/tfd/partial.h. partial_write.c writes them; this
 * file reads and merges them, checking types, ranges and indices, so a damaged or foreign
 * file gives one error line naming it and the field, never a wrong answer.
 */
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
#include "tfd/infile.h"
#include "tfd/partial.h"
#include "tfd/vec.h"

/* ---- reading ---- */

struct rd {
	const char *file;
	int version;		 /* the partial's */
	struct tfd_arena *arena; /* the merge's: names are interned there */
	struct tfd_err *err;
	enum tfd_status st;
	char where[96];
	/* the object last read from, and where its next member is likely */
	const cJSON *hint_obj, *hint; /* "host 2 pipeline 0 stage 3" */
};

static void rd_fail(struct rd *r, const char *key, const char *problem)
{
	if (r->st)
		return;
	r->st = tfd_fail(r->err, TFD_E_FORMAT, "%s: not a valid tfdoctor partial: %s%s%s %s",
			 r->file, r->where, *r->where ? " " : "", key, problem);
}

static const cJSON *field(struct rd *r, const cJSON *o, const char *k)
{
	const cJSON *v;

	if (r->hint_obj != o) {
		r->hint_obj = o;
		r->hint = NULL;
	}
	v = tfd_pf_item_from(o, k, &r->hint);

	if (!v)
		rd_fail(r, k, "is missing");
	return v;
}

/* The integer v holds (named k in messages), within [lo, hi]. */
static int64_t int_of(struct rd *r, const cJSON *v, const char *k, int64_t lo, int64_t hi)
{
	int64_t x = 0;

	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		if (d != floor(d) || d <= -(double)EXACT_INT || d >= (double)EXACT_INT) {
			rd_fail(r, k, "is not an integer");
			return 0;
		}
		x = (int64_t)d;
	} else if (cJSON_IsString(v)) {
		char *end;

		errno = 0;
		x = strtoll(v->valuestring, &end, 10);
		if (errno || end == v->valuestring || *end) {
			rd_fail(r, k, "is not an integer");
			return 0;
		}
	} else {
		rd_fail(r, k, "is not an integer");
		return 0;
	}
	if (x < lo || x > hi) {
		rd_fail(r, k, "is out of range");
		return 0;
	}
	return x;
}

static int64_t get_i(struct rd *r, const cJSON *o, const char *k, int64_t lo, int64_t hi)
{
	const cJSON *v = field(r, o, k);

	return v ? int_of(r, v, k, lo, hi) : 0;
}

static uint64_t get_u(struct rd *r, const cJSON *o, const char *k)
{
	const cJSON *v = field(r, o, k);

	if (v && cJSON_IsString(v)) {
		char *end;
		uint64_t x;

		errno = 0;
		x = strtoull(v->valuestring, &end, 10);
		if (errno || end == v->valuestring || *end || v->valuestring[0] == '-') {
			rd_fail(r, k, "is not a count");
			return 0;
		}
		return x;
	}
	return v ? (uint64_t)int_of(r, v, k, 0, INT64_MAX) : 0;
}

static double get_d(struct rd *r, const cJSON *o, const char *k)
{
	const cJSON *v = field(r, o, k);

	if (!v)
		return 0;
	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsString(v)) {
		if (strcmp(v->valuestring, "nan") == 0)
			return NAN;
		if (strcmp(v->valuestring, "inf") == 0)
			return INFINITY;
		if (strcmp(v->valuestring, "-inf") == 0)
			return -INFINITY;
	}
	rd_fail(r, k, "is not a number");
	return 0;
}

static bool get_b(struct rd *r, const cJSON *o, const char *k)
{
	const cJSON *v = field(r, o, k);

	if (v && !cJSON_IsBool(v))
		rd_fail(r, k, "is not true or false");
	return v && cJSON_IsTrue(v);
}

/* A string copied into the merge's arena; NULL stays NULL when allowed. */
static const char *get_s(struct rd *r, const cJSON *o, const char *k, bool null_ok)
{
	const cJSON *v = field(r, o, k);

	if (!v)
		return NULL;
	if (cJSON_IsNull(v) && null_ok)
		return NULL;
	if (!cJSON_IsString(v)) {
		rd_fail(r, k, "is not a string");
		return NULL;
	}
	return tfd_arena_intern_cstr(r->arena, v->valuestring);
}

static void get_buf(struct rd *r, const cJSON *o, const char *k, char *dst, size_t len)
{
	const cJSON *v = field(r, o, k);

	*dst = '\0';
	if (!v)
		return;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= len)
		rd_fail(r, k, "is not a string that fits");
	else
		memcpy(dst, v->valuestring, strlen(v->valuestring) + 1);
}

static const cJSON *get_arr(struct rd *r, const cJSON *o, const char *k)
{
	const cJSON *v = field(r, o, k);

	if (v && !cJSON_IsArray(v)) {
		rd_fail(r, k, "is not an array");
		return NULL;
	}
	return v;
}

static const cJSON *get_obj(struct rd *r, const cJSON *o, const char *k)
{
	const cJSON *v = field(r, o, k);

	if (v && !cJSON_IsObject(v)) {
		rd_fail(r, k, "is not an object");
		return NULL;
	}
	return v;
}

static void get_links(struct rd *r, const cJSON *o, size_t *links)
{
	const cJSON *l = get_obj(r, o, "links");

	for (int i = 0; l && i < TFD_LINK__COUNT; i++)
		links[i] = get_u(r, l, tfd_pf_link_keys[i]);
}

/* The rows of f from o into base; stage and segment indices are checked
 * against the pipeline's counts. */
static void get_fields(struct rd *r, const cJSON *o, void *base, const struct fdesc *f, size_t n,
		       size_t nstages, size_t nsegments)
{
	for (size_t i = 0; i < n; i++) {
		void *at = (char *)base + f[i].off;

		if (f[i].since > r->version) {
			memset(at, 0, f[i].size); /* not in this version */
			continue;
		}
		switch (f[i].kind) {
		case FK_I64: /* every one a time or a duration, never negative */
			*(int64_t *)at = get_i(r, o, f[i].key, 0, INT64_MAX);
			break;
		case FK_U64:
			*(uint64_t *)at = get_u(r, o, f[i].key);
			break;
		case FK_SIZE:
			*(size_t *)at = (size_t)get_u(r, o, f[i].key);
			break;
		case FK_INT:
			*(int *)at = (int)get_i(r, o, f[i].key, f[i].lo, f[i].hi);
			break;
		case FK_STAGE:
			*(int *)at = (int)get_i(r, o, f[i].key, -1, (int64_t)nstages - 1);
			break;
		case FK_SEG:
			*(int *)at = (int)get_i(r, o, f[i].key, -1, (int64_t)nsegments - 1);
			break;
		case FK_DBL:
			*(double *)at = get_d(r, o, f[i].key);
			break;
		case FK_PCT: {
			double d = get_d(r, o, f[i].key);

			if (!isnan(d) && !(d >= 0 && d <= 100)) {
				rd_fail(r, f[i].key, "is not a percentage (0 to 100)");
				d = NAN;
			}
			*(double *)at = d;
			break;
		}
		case FK_BOOL:
			*(bool *)at = get_b(r, o, f[i].key);
			break;
		case FK_STR:
			*(const char **)at = get_s(r, o, f[i].key, false);
			break;
		case FK_BUF:
			get_buf(r, o, f[i].key, at, f[i].size);
			break;
		}
	}
}

static void get_obj_fields(struct rd *r, const cJSON *o, const char *k, void *base,
			   const struct fdesc *f, size_t n, size_t nstages, size_t nsegments)
{
	const cJSON *c = get_obj(r, o, k);

	if (c)
		get_fields(r, c, base, f, n, nstages, nsegments);
}

static void get_sure(struct rd *r, const cJSON *o, const char *k, struct tfd_sureness *s)
{
	get_obj_fields(r, o, k, s, tfd_pf_sure.v, tfd_pf_sure.n, 0, 0);
}

static void get_share(struct rd *r, const cJSON *o, const char *k, struct tfd_share *s)
{
	get_obj_fields(r, o, k, s, tfd_pf_share.v, tfd_pf_share.n, 0, 0);
}

static const struct tfd_event *get_params(struct rd *r, const cJSON *o)
{
	const cJSON *ps = field(r, o, "params"), *kv;
	const struct tfd_event *e;
	struct tfd_param *params;
	int n, i = 0;

	if (!ps || cJSON_IsNull(ps))
		return NULL;
	n = cJSON_GetArraySize(ps);
	if (!cJSON_IsArray(ps) || n > TFD_MAX_PARAMS) {
		rd_fail(r, "params", "is not a list of [key, value] pairs");
		return NULL;
	}
	e = tfd_sample_new(r->arena, (uint16_t)n, &params);
	cJSON_ArrayForEach (kv, ps) {
		const cJSON *k = cJSON_GetArrayItem(kv, 0), *v = cJSON_GetArrayItem(kv, 1);

		if (!cJSON_IsArray(kv) || cJSON_GetArraySize(kv) != 2 || !cJSON_IsString(k) ||
		    !cJSON_IsString(v)) {
			rd_fail(r, "params", "is not a list of [key, value] pairs");
			return NULL;
		}
		params[i].key = tfd_arena_intern_cstr(r->arena, k->valuestring);
		params[i].val = tfd_arena_intern_cstr(r->arena, v->valuestring);
		i++;
	}
	return e;
}

static void stage_in(struct rd *r, const cJSON *o, struct tfd_stage *s, size_t k, size_t nstages,
		     size_t nsegments)
{
	get_fields(r, o, s, tfd_pf_stage.v, tfd_pf_stage.n, nstages, nsegments);
	/* stages are in pre-order: the root first, a parent before its
	 * children, so no parent chain can loop */
	if (!r->st && ((k == 0) != (s->parent < 0) || s->parent >= (int)k))
		rd_fail(r, "parent", "breaks the stage tree (a stage's parent comes before it)");
	s->sample = get_params(r, o);
	get_links(r, o, s->links);
	if (!r->st) {
		const char *bad = tfd_pf_fn_ops_in(o, s, r->arena);

		if (bad)
			rd_fail(r, "function_ops", bad);
	}
}

static void pipeline_in(struct rd *r, const cJSON *o, struct tfd_pipeline *p, size_t hi, size_t pi)
{
	const cJSON *stages = get_arr(r, o, "stages"), *segs = get_arr(r, o, "segments");
	const cJSON *cp = get_arr(r, o, "critpath"), *x;
	size_t k;

	if (!stages || !segs || !cp)
		return;
	p->nstages = (size_t)cJSON_GetArraySize(stages);
	p->nsegments = (size_t)cJSON_GetArraySize(segs);
	if (p->nstages == 0) {
		rd_fail(r, "stages", "is empty");
		return;
	}
	get_fields(r, o, p, tfd_pf_pipeline.v, tfd_pf_pipeline.n, p->nstages, p->nsegments);
	p->stages = xcalloc(p->nstages, sizeof(*p->stages));
	p->segments = xcalloc(p->nsegments + 1, sizeof(*p->segments));
	k = 0;
	cJSON_ArrayForEach (x, stages) {
		snprintf(r->where, sizeof(r->where), "host %zu pipeline %zu stage %zu", hi, pi, k);
		stage_in(r, x, &p->stages[k], k, p->nstages, p->nsegments);
		k++;
	}
	k = 0;
	cJSON_ArrayForEach (x, segs) {
		snprintf(r->where, sizeof(r->where), "host %zu pipeline %zu segment %zu", hi, pi,
			 k);
		get_fields(r, x, &p->segments[k++], tfd_pf_segment.v, tfd_pf_segment.n, p->nstages,
			   p->nsegments);
	}
	snprintf(r->where, sizeof(r->where), "host %zu pipeline %zu", hi, pi);
	p->ncritpath = (size_t)cJSON_GetArraySize(cp);
	p->critpath = xcalloc(p->ncritpath + 1, sizeof(*p->critpath));
	k = 0;
	cJSON_ArrayForEach (x, cp) {
		if (!cJSON_IsNumber(x) || x->valuedouble < 0 ||
		    x->valuedouble >= (double)p->nstages || x->valuedouble != floor(x->valuedouble))
			rd_fail(r, "critpath", "holds a stage index out of range");
		else
			p->critpath[k++] = (int)x->valuedouble;
	}
	get_links(r, o, p->links);
	get_obj_fields(r, o, "capacity", &p->capacity, tfd_pf_capacity.v, tfd_pf_capacity.n,
		       p->nstages, p->nsegments);
	get_sure(r, o, "confidence", &p->confidence);
}

static const char *const bases[] = {"steps", "capture span", "none", "tf-convention",
				    "steady-state"};

/* The verdict bases are literals elsewhere; keep the same text. */
static const char *get_basis(struct rd *r, const cJSON *o, const char *k)
{
	const char *s = get_s(r, o, k, true);

	for (size_t i = 0; s && i < sizeof(bases) / sizeof(bases[0]); i++)
		if (strcmp(s, bases[i]) == 0)
			return bases[i];
	return s;
}

/* The step points of nsteps steps, grouped as the analysis groups them. */
static void points_in(struct rd *r, const cJSON *o, const char *k, size_t nsteps, size_t max,
		      struct tfd_step_points *pt)
{
	const cJSON *c = get_obj(r, o, k), *st, *wt, *a, *b;
	const char *why;
	size_t per = nsteps > max ? (nsteps + max - 1) / max : 1;
	size_t n = nsteps ? (nsteps + per - 1) / per : 0;

	if (!c)
		return;
	st = get_arr(r, c, "step_ns");
	wt = get_arr(r, c, "wait_ns");
	if (!st || !wt)
		return;
	if (get_u(r, c, "per") != per && nsteps)
		rd_fail(r, k, "groups the steps otherwise than this tfdoctor");
	if ((size_t)cJSON_GetArraySize(st) != n || (size_t)cJSON_GetArraySize(wt) != n)
		rd_fail(r, k, "does not have one point per group of steps");
	if (r->st || !n)
		return;
	pt->per = per;
	pt->n = n;
	pt->step_ns = xcalloc(n + 1, sizeof(*pt->step_ns));
	pt->wait_ns = xcalloc(n + 1, sizeof(*pt->wait_ns));
	/* the two arrays side by side (same length, checked above) */
	a = st->child;
	b = wt->child;
	for (size_t i = 0; i < n && !r->st; i++, a = a->next, b = b->next) {
		pt->step_ns[i] = int_of(r, a, k, 0, INT64_MAX);
		pt->wait_ns[i] = int_of(r, b, k, 0, INT64_MAX);
	}
	if ((why = tfd_pf_points_dev_in(c, pt)) != NULL)
		rd_fail(r, k, why);
}

static void host_in(struct rd *r, const cJSON *o, struct tfd_host_result *h, struct tfd_host *host,
		    size_t hi, const cJSON **notes)
{
	const cJSON *pl, *x;
	const char *why;
	size_t k;

	h->host = host;
	host->path = get_s(r, o, "path", false);
	host->format = (enum tfd_format)get_i(r, o, "format", TFD_FMT_XSPACE, TFD_FMT_TF2_TRACE);
	host->has_host_plane = get_b(r, o, "has_host_plane");
	if ((why = tfd_pf_dev_host_in(o, host)) != NULL)
		rd_fail(r, "device", why);
	*notes = get_arr(r, o, "notes");
	get_fields(r, o, h, tfd_pf_host.v, tfd_pf_host.n, 0, 0);
	h->input_basis = get_basis(r, o, "input_basis");
	h->verdict_basis = get_basis(r, o, "verdict_basis");
	get_share(r, o, "tf", &h->tf);
	get_share(r, o, "steady", &h->steady);
	get_share(r, o, "all", &h->all);
	points_in(r, o, "step_points", h->nstep_waits, TFD_STEP_POINTS, &h->step_points);
	points_in(r, o, "step_bars", h->nstep_waits, TFD_STEP_BARS, &h->step_bars);
	get_sure(r, o, "confidence", &h->confidence);
	pl = get_arr(r, o, "pipelines");
	if (!pl)
		return;
	h->npipelines = (size_t)cJSON_GetArraySize(pl);
	/* (a pipeline is 1.2 KB, and a fleet's merge holds every host's) */
	h->pipelines = xcalloc(h->npipelines ? h->npipelines : 1, sizeof(*h->pipelines));
	h->nhost_pipelines = get_u(r, o, "nhost_pipelines");
	if (h->nhost_pipelines > h->npipelines)
		rd_fail(r, "nhost_pipelines", "is more than the pipelines");
	/* no focus (-1) only without pipelines */
	h->focus = (int)get_i(r, o, "focus", h->npipelines ? 0 : -1, (int64_t)h->npipelines - 1);
	k = 0;
	cJSON_ArrayForEach (x, pl) {
		snprintf(r->where, sizeof(r->where), "host %zu pipeline %zu", hi, k);
		if (!cJSON_IsObject(x)) {
			rd_fail(r, "", "is not an object");
			break;
		}
		pipeline_in(r, x, &h->pipelines[k], hi, k);
		k++;
		if (r->st)
			break;
	}
	/* a repeat names another pipeline of the host, one that repeats none */
	for (k = 0; k < h->npipelines && !r->st; k++) {
		int of = h->pipelines[k].repeat_of1;

		if (of && ((size_t)of > h->npipelines || (size_t)of == k + 1 ||
			   h->pipelines[of - 1].repeat_of1)) {
			snprintf(r->where, sizeof(r->where), "host %zu pipeline %zu", hi, k);
			rd_fail(r, "repeat_of1", "names no pipeline of its own");
		}
	}
	snprintf(r->where, sizeof(r->where), "host %zu", hi);
}

/* ---- merging ---- */

static enum tfd_status check_header(const cJSON *doc, const char *file, struct tfd_err *err)
{
	const cJSON *f = tfd_pf_item(doc, "format");
	const cJSON *v = tfd_pf_item(doc, "version");

	if (!cJSON_IsObject(doc) || !cJSON_IsString(f) ||
	    strcmp(f->valuestring, TFD_PARTIAL_FORMAT))
		return tfd_fail(err, TFD_E_FORMAT,
				"%s: not a tfdoctor partial (no \"format\": "
				"\"%s\"); make one with 'tfdoctor analyze "
				"--partial'",
				file, TFD_PARTIAL_FORMAT);
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) ||
	    v->valuedouble < TFD_PARTIAL_VERSION_MIN || v->valuedouble > TFD_PARTIAL_VERSION)
		return tfd_fail(err, TFD_E_FORMAT,
				"%s: partial version %g, this tfdoctor reads "
				"versions %d to %d: make the partials and merge "
				"them with the same release",
				file, cJSON_IsNumber(v) ? v->valuedouble : -1.0,
				TFD_PARTIAL_VERSION_MIN, TFD_PARTIAL_VERSION);
	return TFD_OK;
}

/* A merge in progress: what the partials' headers said, their hosts. */
struct merge {
	VEC(const char *) paths;    /* the hosts' capture files (interned) */
	struct tfd_analyze_opts mo; /* the per-host options the partials carry */
	const char *run, *source;
	bool run_set, source_agrees;
	/* the run each partial is of (its run, else its source): the first
	 * one's, and whether another differed (allowed: a note says so) */
	const char *of_run, *of_file, *mixed_run, *mixed_file;
	bool allow_mixed;
	struct tfd_merger *merger;
	struct tfd_arena *arena; /* the merger's */
	const char *label;	 /* the name a report gives the run (run_name) */
};

/* Partials of different runs (or jobs) are not merged into one report
 * unless asked (--allow-mixed): a partial is of its "run" when it names
 * one (made from a log directory), else of the directory its first host
 * file is in, by name (a run directory's name is the run's). */
static enum tfd_status same_run(struct merge *m, const cJSON *doc, const char *file,
				struct tfd_err *err)
{
	const cJSON *r = tfd_pf_item(doc, "run");
	const cJSON *hs = tfd_pf_item(doc, "hosts");
	const cJSON *h = cJSON_IsArray(hs) ? hs->child : NULL;
	const cJSON *p = cJSON_IsObject(h) ? tfd_pf_item(h, "path") : NULL;
	const char *of = NULL;

	if (cJSON_IsString(r)) {
		of = tfd_arena_intern_cstr(m->arena, r->valuestring);
	} else if (cJSON_IsString(p)) {
		/* the directory's name alone: tasks may name one directory by
		 * other paths (relative, absolute, another mount) */
		const char *sl = strrchr(p->valuestring, '/'), *b = sl;

		while (b && b > p->valuestring && b[-1] != '/')
			b--;
		of = sl && sl > b ? tfd_arena_intern(m->arena, b, (size_t)(sl - b)) : ".";
	}
	if (!of)
		return TFD_OK;
	if (!m->of_run) {
		m->of_run = of;
		m->of_file = file;
		return TFD_OK;
	}
	if (strcmp(of, m->of_run) == 0 || m->mixed_run)
		return TFD_OK;
	if (!m->allow_mixed)
		return tfd_fail(err, TFD_E_USAGE,
				"%s: a partial of run '%s', but %s is of run '%s': partials of "
				"different runs are not merged (--allow-mixed merges them)",
				file, of, m->of_file, m->of_run);
	m->mixed_run = of;
	m->mixed_file = file;
	return TFD_OK;
}

/* One partial's header: its options (which must agree), run, source and
 * the hosts it holds (by reference). */
static enum tfd_status read_header(struct merge *m, const cJSON *doc, size_t i,
				   const char *const *names, struct tfd_err *err)
{
	struct rd r = {
	    .file = names[i], .version = TFD_PARTIAL_VERSION, .arena = m->arena, .err = err};
	const cJSON *o, *hs, *x;
	enum tfd_status st = check_header(doc, names[i], err);

	if (st)
		return st;
	o = get_obj(&r, doc, "options");
	if (o) {
		struct tfd_analyze_opts po = {0};

		po.no_warmup = get_b(&r, o, "no_warmup");
		po.rank_set = get_b(&r, o, "rank_set");
		po.rank = (int)get_i(&r, o, "rank", 0, INT32_MAX);
		if (!r.st && i > 0 &&
		    (po.no_warmup != m->mo.no_warmup || po.rank_set != m->mo.rank_set ||
		     po.rank != m->mo.rank))
			return tfd_fail(err, TFD_E_USAGE,
					"%s: made with other analyze options "
					"(--no-warmup, --rank) than %s",
					names[i], names[0]);
		m->mo = po;
	}
	x = tfd_pf_item(doc, "run");
	if (!cJSON_IsNull(x) && !cJSON_IsString(x))
		rd_fail(&r, "run", "is not a string");
	else if (!m->run_set)
		m->run = cJSON_IsString(x) ? tfd_arena_intern_cstr(m->arena, x->valuestring) : NULL,
		m->run_set = true;
	else if (m->run && (!cJSON_IsString(x) || strcmp(m->run, x->valuestring)))
		m->run = NULL; /* partials of different runs: no single run */
	x = tfd_pf_item(doc, "source");
	if (x && !cJSON_IsNull(x) && !cJSON_IsString(x))
		rd_fail(&r, "source", "is not a string");
	else if (!cJSON_IsString(x) || (m->source && strcmp(m->source, x->valuestring)))
		m->source_agrees = false;
	else
		m->source = tfd_arena_intern_cstr(m->arena, x->valuestring);
	st = same_run(m, doc, names[i], err);
	if (st)
		return st;
	hs = get_arr(&r, doc, "hosts");
	if (hs)
		cJSON_ArrayForEach (x, hs) {
			const cJSON *p = cJSON_IsObject(x) ? tfd_pf_item(x, "path") : NULL;

			if (!cJSON_IsString(p)) {
				rd_fail(&r, "hosts", "holds a host without a path");
				break;
			}
			vec_push(&m->paths, tfd_arena_intern_cstr(m->arena, p->valuestring));
		}
	get_arr(&r, doc, "notes");
	return r.st;
}

/* The run name a report gives: the partials' source when they agree, else
 * the directory the host files share, else none. */
static void run_name(struct merge *m)
{
	m->label = NULL;
	for (size_t i = 0; i < m->paths.n; i++) {
		const char *p = m->paths.v[i], *sl = strrchr(p, '/'), *b;
		size_t len;

		if (!sl) {
			m->label = NULL;
			break;
		}
		for (b = sl; b > p && b[-1] != '/';)
			b--;
		len = (size_t)(sl - b);
		if (i == 0)
			m->label = tfd_arena_intern(m->arena, b, len);
		else if (!m->label || strlen(m->label) != len || strncmp(m->label, b, len))
			m->label = NULL;
	}
	if (m->source_agrees && m->source)
		m->label = tfd_arena_intern_cstr(m->arena, m->source);
}

/* The partial docs[i]'s hosts, read into an analysis of their own with
 * its notes (the document's, then each host's), for the merge. */
static enum tfd_status read_doc(struct merge *m, const cJSON *doc, size_t i, const char *file,
				struct tfd_analysis **out, struct tfd_err *err)
{
	const cJSON *hs = tfd_pf_item(doc, "hosts"), *x, *n;
	struct tfd_analysis *part = tfd_analysis_new((size_t)cJSON_GetArraySize(hs));
	struct rd r = {.file = file,
		       .version = (int)tfd_pf_item(doc, "version")->valuedouble,
		       .arena = m->arena,
		       .err = err};
	const cJSON *rn = tfd_pf_item(doc, "run");

	part->run = cJSON_IsString(rn) ? tfd_arena_intern_cstr(m->arena, rn->valuestring) : NULL;
	n = tfd_pf_item(doc, "notes");
	cJSON_ArrayForEach (x, n) {
		if (!cJSON_IsString(x)) {
			rd_fail(&r, "notes", "holds a non-string");
			break;
		}
		tfd_analysis_diag(part, "input", "%s", x->valuestring);
	}
	cJSON_ArrayForEach (x, hs) {
		const cJSON *nm = tfd_pf_item(x, "name"), *notes = NULL, *y;
		const cJSON *path = tfd_pf_item(x, "path");
		struct tfd_host *h;

		if (r.st)
			break;
		snprintf(r.where, sizeof(r.where), "host %s", path->valuestring);
		if (!cJSON_IsString(nm)) {
			rd_fail(&r, "name", "is missing");
			break;
		}
		h = tfd_arena_alloc(m->arena, sizeof(*h));
		h->name = tfd_arena_intern_cstr(m->arena, nm->valuestring);
		host_in(&r, x, &part->hosts[part->nhosts], h, i, &notes);
		part->nhosts++;
		cJSON_ArrayForEach (y, notes) {
			if (cJSON_IsString(y))
				tfd_analysis_diag(part, h->name, "%s", y->valuestring);
			else
				rd_fail(&r, "notes", "holds a non-string");
		}
	}
	if (r.st) {
		tfd_analysis_free(part);
		return r.st;
	}
	*out = part;
	return TFD_OK;
}

/* A key no reader looked up: a partial from a newer tfdoctor, or edited,
 * whose data would otherwise be dropped without a word; or a key given
 * twice in one object (cJSON keeps both and a lookup finds the first:
 * "hosts":[] before the real hosts would drop them). */
static enum tfd_status unknown_keys(const cJSON *doc, const char *file, struct tfd_err *err)
{
	char path[256];

	switch (tfd_pf_unread(doc, path, sizeof(path))) {
	case TFD_PF_ALL_READ:
		return TFD_OK;
	case TFD_PF_TWICE:
		return tfd_fail(err, TFD_E_FORMAT, "%s: key \"%s\" given twice in one object", file,
				path);
	default:
		return tfd_fail(err, TFD_E_FORMAT,
				"%s: not a valid tfdoctor partial: unknown key %s (made by "
				"another tfdoctor version, or edited?)",
				file, path);
	}
}

/* Where the partials come from: parsed one at a time, so that a merge of
 * thousands holds one document at once. */
struct doc_source {
	const char *const *names;
	size_t n;
	struct tfd_json_tree *one;  /* a single document in memory (names[0]), or NULL: files */
	struct tfd_pf_ahead *ahead; /* files parsed on a second thread, or NULL */
};

static enum tfd_status doc_get(const struct doc_source *ds, size_t i, struct tfd_json_tree **doc,
			       struct tfd_err *err)
{
	if (ds->one) {
		*doc = ds->one;
		return TFD_OK;
	}
	if (ds->ahead)
		return tfd_pf_ahead_next(ds->ahead, i, doc, err);
	return tfd_partial_read_doc(ds->names[i], doc, err);
}

static void doc_put(const struct doc_source *ds, struct tfd_json_tree *doc)
{
	if (ds->one)
		return;
	if (ds->ahead)
		tfd_pf_ahead_done(ds->ahead, doc);
	else
		tfd_pf_doc_free(doc);
}

/* Document i: its header checked against the ones before, its hosts read
 * and added to the merge. */
static enum tfd_status merge_one(struct merge *m, const struct tfd_json_tree *tree, size_t i,
				 const char *const *names, struct tfd_err *err)
{
	const cJSON *doc = tree->root;
	struct tfd_analysis *part = NULL;
	enum tfd_status st;

	tfd_pf_marks_take();
	st = read_header(m, doc, i, names, err);
	if (!st)
		st = read_doc(m, doc, i, names[i], &part, err);
	/* every member looked up: none unknown, none given twice */
	if (!st && tfd_pf_marks_take() != tree->members)
		st = unknown_keys(doc, names[i], err);
	if (st) {
		tfd_analysis_free(part);
		return st;
	}
	tfd_merger_add(m->merger, part, i, names[i]);
	return TFD_OK;
}

/* The merge of parsed partials docs[i], read from names[i]. */
static enum tfd_status merge_docs(const struct doc_source *ds, const struct tfd_analyze_opts *opts,
				  struct tfd_analysis **out, struct tfd_err *err)
{
	struct merge m;
	enum tfd_status st = TFD_OK;
	char mixed[600] = "";
	const char *extra[1] = {mixed};

	memset(&m, 0, sizeof(m));
	m.merger = tfd_merger_new();
	m.arena = tfd_merger_arena(m.merger);
	m.source_agrees = true;
	m.allow_mixed = opts && opts->allow_mixed;
	*out = NULL;
	for (size_t i = 0; i < ds->n && !st; i++) {
		struct tfd_json_tree *doc;

		st = doc_get(ds, i, &doc, err);
		if (st)
			break;
		st = merge_one(&m, doc, i, ds->names, err);
		doc_put(ds, doc);
	}
	if (!st && m.paths.n == 0)
		st = tfd_fail(err, TFD_E_FORMAT, "%s: no hosts in the partial%s", ds->names[0],
			      ds->n > 1 ? "s" : "");
	if (!st) {
		struct tfd_analyze_opts fo = m.mo;

		run_name(&m);
		if (m.mixed_run)
			snprintf(mixed, sizeof(mixed),
				 "partials of different runs merged (--allow-mixed): '%s' (%s), "
				 "'%s' (%s)%s",
				 m.of_run, m.of_file, m.mixed_run, m.mixed_file,
				 ds->n > 2 ? " and others" : "");
		fo.host = opts ? opts->host : NULL;
		vec_free(&m.paths);
		st = tfd_merger_finish(m.merger, extra, m.mixed_run ? 1 : 0, &fo, out, err);
		if (!st)
			(*out)->label = m.label;
		return st;
	}
	vec_free(&m.paths);
	tfd_merger_free(m.merger);
	return st;
}

enum tfd_status tfd_partial_merge(const char *const *paths, size_t npaths,
				  const struct tfd_analyze_opts *opts, struct tfd_analysis **out,
				  struct tfd_err *err)
{
	strvec files = {0};
	enum tfd_status st = TFD_OK;

	*out = NULL;
	for (size_t i = 0; i < npaths && !st; i++)
		st = tfd_partial_expand(paths[i], &files, err);
	if (!st) {
		struct doc_source ds = {(const char *const *)files.v, files.n, NULL, NULL};

		ds.ahead = tfd_pf_ahead_start(ds.names, ds.n);
		st = merge_docs(&ds, opts, out, err);
		tfd_pf_ahead_stop(ds.ahead);
	}
	for (size_t i = 0; i < files.n; i++)
		free(files.v[i]);
	vec_free(&files);
	return st;
}

enum tfd_status tfd_partial_merge_mem(const char *data, size_t len, const char *name,
				      const struct tfd_analyze_opts *opts,
				      struct tfd_analysis **out, struct tfd_err *err)
{
	struct tfd_json_tree *doc = tfd_pf_parse(data, len, NULL);
	struct doc_source ds = {&name, 1, doc, NULL};
	enum tfd_status st;

	*out = NULL;
	if (!doc)
		return tfd_fail(err, TFD_E_FORMAT, "%s: broken JSON (not a tfdoctor partial)",
				name);
	st = merge_docs(&ds, opts, out, err);
	tfd_pf_doc_free(doc);
	return st;
}
