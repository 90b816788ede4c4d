/* synth_spec.c - a synth spec read and checked (synth_impl.h; the format is
 * in docs/cli.md, "synth"). */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "synth_impl.h"
#include "tfd/capture.h"
#include "tfd/infile.h"

const struct kind_def tfd_synth_kinds[] = {
    {"TFRecord", "TFRecord", K_SOURCE, NULL},
    {"TextLine", "TextLine", K_SOURCE, NULL},
    {"FixedLengthRecord", "FixedLengthRecordV2", K_SOURCE, NULL},
    {"TensorSlice", "TensorSlice", K_SOURCE, NULL},
    {"FromTensor", "FromTensor", K_SOURCE, NULL},
    {"Range", "Range", K_SOURCE, NULL},
    {"Generator", "Generator", K_SOURCE, NULL},
    {"Map", "Map", K_MAP, NULL},
    {"Batch", "BatchV2", K_BATCH, NULL},
    {"PaddedBatch", "PaddedBatchV2", K_BATCH, NULL},
    {"Filter", "Filter", K_FILTER, NULL},
    {"Shuffle", "Shuffle", K_SHUFFLE, NULL},
    {"ShuffleAndRepeat", "ShuffleAndRepeat", K_SHUFFLE, NULL},
    {"Repeat", "ForeverRepeat", K_PASS, NULL},
    {"Cache", "MemoryCache", K_PASS, NULL},
    {"Interleave", "Interleave", K_PASS, NULL},
    /* async: Produce/Consume event names from the families table */
    {"Prefetch", "Prefetch", K_PREFETCH, "tf_data_prefetch"},
    {"ParallelMap", "ParallelMapV2", K_PMAP, "tf_data_parallel_map"},
    {"ParallelInterleave", "ParallelInterleaveV4", K_PINTERLEAVE,
     "tf_data_parallel_interleave_worker"},
    {"MapAndBatch", "MapAndBatch", K_MAPBATCH, "tf_data_map_and_batch"},
};
const size_t tfd_synth_nkinds = sizeof(tfd_synth_kinds) / sizeof(tfd_synth_kinds[0]);

/* ---- the spec ------------------------------------------------------------------- */

static enum tfd_status spec_err(struct tfd_err *err, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static enum tfd_status spec_err(struct tfd_err *err, const char *path, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tfd_fail(err, TFD_E_FORMAT, "%s: %s", path, msg);
}

static enum tfd_status spec_device(const cJSON *it, struct spec *sp, const char *path,
				   struct tfd_err *err);

static int num(const cJSON *o, const char *k, double *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!x)
		return 0;
	if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble))
		return -1;
	*v = x->valuedouble;
	return 1;
}

static const char *const top_keys[] = {"name",
				       "description",
				       "expect",
				       "expect_host",
				       "hosts",
				       "slow_host",
				       "steps",
				       "step_compute_us",
				       "seed",
				       "root",
				       "formats",
				       "run",
				       "large_ids",
				       "device_events_per_step",
				       "host_other_events_per_step",
				       "function_events",
				       "device_order",
				       "device",
				       "stages"};
static const char *const stage_keys[] = {
    "kind",	"cost_us",    "jitter",	    "first_call_us", "parallelism",
    "buffer",	"batch_size", "keep_ratio", "buffer_size",   "deterministic",
    "autotune", "ops",	      "ramp"};

/* The first key of object o not in keys (n of them), or NULL. */
static const char *unknown_key(const cJSON *o, const char *const *keys, size_t n)
{
	const cJSON *it;

	cJSON_ArrayForEach (it, o) {
		bool known = false;

		for (size_t i = 0; i < n && !known; i++)
			known = strcmp(it->string, keys[i]) == 0;
		if (!known)
			return it->string;
	}
	return NULL;
}

/* Spec text, parsed (path names it in errors). */
static enum tfd_status parse_text(const char *text, size_t len, const char *path, cJSON **root,
				  struct tfd_err *err)
{
	*root = NULL;
	if (len == 0)
		return spec_err(err, path, "empty spec");
	*root = cJSON_ParseWithLength(text, len);
	if (!cJSON_IsObject(*root))
		return spec_err(err, path, "invalid JSON (a spec is an object)");
	return TFD_OK;
}

/* A string field into dst (size len): not a string, or longer than dst,
 * is an error naming the field (never cut). */
static enum tfd_status spec_str(const cJSON *root, const char *key, char *dst, size_t len,
				const char *path, struct tfd_err *err)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, key);

	if (!x)
		return TFD_OK;
	if (!cJSON_IsString(x))
		return spec_err(err, path, "'%s' must be a string", key);
	if (strlen(x->valuestring) >= len)
		return spec_err(err, path, "'%s' is longer than %zu characters", key, len - 1);
	memcpy(dst, x->valuestring, strlen(x->valuestring) + 1);
	return TFD_OK;
}

/* The spec's strings: name, expectations, root and run (one path component). */
static enum tfd_status spec_strings(const cJSON *root, struct spec *sp, const char *path,
				    struct tfd_err *err)
{
	enum tfd_status st = spec_str(root, "name", sp->name, sizeof(sp->name), path, err);

	if (!st)
		st = spec_str(root, "expect", sp->expect, sizeof(sp->expect), path, err);
	if (!st)
		st = spec_str(root, "expect_host", sp->expect_host, sizeof(sp->expect_host), path,
			      err);
	if (!st)
		st = spec_str(root, "root", sp->root, sizeof(sp->root), path, err);
	if (!st)
		st = spec_str(root, "run", sp->run, sizeof(sp->run), path, err);
	if (st)
		return st;
	if (strcmp(sp->root, "Model") && strcmp(sp->root, "Root"))
		return spec_err(err, path, "'root' must be Model or Root");
	/* the run is a directory under plugins/profile: never a way out of -o */
	if (!sp->run[0] || strchr(sp->run, '/') || strcmp(sp->run, ".") == 0 ||
	    strcmp(sp->run, "..") == 0)
		return spec_err(err, path,
				"'run' must be one directory name (no '/', not . or ..)");
	return TFD_OK;
}

/* v as an int, out-of-range values pinned to the nearest end (a cast of
 * one would be undefined): the range checks after it then refuse them. */
static int to_int(double v)
{
	if (!(v > (double)INT_MIN)) /* NaN too */
		return INT_MIN;
	return v < (double)INT_MAX ? (int)v : INT_MAX;
}

/* The spec's numbers, function events, slow host and formats.
 * parser: one check per key of the spec, with its range (docs/cli.md). */
static enum tfd_status spec_numbers(const cJSON *root, struct spec *sp, const char *path,
				    struct tfd_err *err)
{
	const cJSON *it;
	double v;

	if (num(root, "hosts", &v) > 0)
		sp->hosts = to_int(v);
	if (num(root, "steps", &v) > 0)
		sp->steps = v > 1e9 ? 1000000000 : to_int(v);
	if (num(root, "step_compute_us", &v) > 0)
		sp->compute_us = v;
	if (num(root, "seed", &v) > 0)
		sp->seed = v >= 0 && v < 1.8e19 ? (uint64_t)v : 0;
	if (num(root, "device_events_per_step", &v) > 0)
		sp->device_events = to_int(v);
	if (num(root, "host_other_events_per_step", &v) > 0)
		sp->other_events = to_int(v);
	if (sp->other_events < 0 || sp->other_events > 100000)
		return spec_err(err, path, "host_other_events_per_step out of range");
	it = cJSON_GetObjectItemCaseSensitive(root, "function_events");
	if (it) {
		static const char *const styles[] = {"executor", "run", "none"};

		sp->fn_events = -1;
		for (int i = 0; i < 3 && cJSON_IsString(it); i++)
			if (strcmp(it->valuestring, styles[i]) == 0)
				sp->fn_events = i;
		if (sp->fn_events < 0)
			return spec_err(err, path,
					"'function_events' is \"executor\" (TensorFlow's "
					"layout), \"run\" or \"none\"");
	}
	it = cJSON_GetObjectItemCaseSensitive(root, "device");
	if (it && spec_device(it, sp, path, err))
		return TFD_E_USAGE;
	sp->large_ids = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(root, "large_ids"));
	it = cJSON_GetObjectItemCaseSensitive(root, "device_order");
	if (it && (!cJSON_IsString(it) || (strcmp(it->valuestring, "time") != 0 &&
					   strcmp(it->valuestring, "reversed") != 0)))
		return spec_err(err, path, "'device_order' is \"time\" or \"reversed\"");
	sp->dev_reversed = it && strcmp(it->valuestring, "reversed") == 0;
	if (sp->hosts < 1 || sp->hosts > 64 || sp->steps < 1 || sp->steps > 100000000 ||
	    sp->compute_us < 0 || sp->device_events < 0 || sp->device_events > 100000)
		return spec_err(err, path,
				"hosts (1-64), steps (>= 1), step_compute_us or "
				"device_events_per_step out of range");
	it = cJSON_GetObjectItemCaseSensitive(root, "slow_host");
	if (it) {
		if (num(it, "index", &v) <= 0 || num(it, "factor", &sp->slow_factor) <= 0 ||
		    v < 0 || v >= sp->hosts || sp->slow_factor <= 0)
			return spec_err(err, path,
					"'slow_host' needs an index < hosts and a factor > 0");
		sp->slow_host = to_int(v);
	}
	it = cJSON_GetObjectItemCaseSensitive(root, "formats");
	if (it) {
		const cJSON *f;

		sp->xplane = sp->json = 0;
		cJSON_ArrayForEach (f, it) {
			if (cJSON_IsString(f) && strcmp(f->valuestring, "xplane") == 0)
				sp->xplane = 1;
			else if (cJSON_IsString(f) && strcmp(f->valuestring, "json") == 0)
				sp->json = 1;
			else
				return spec_err(err, path,
						"'formats' holds \"xplane\" and/or \"json\"");
		}
	}
	return TFD_OK;
}

/* "device": {"h2d_us": X, "copies": N, "bytes": B, "kernel_us": K,
 * "kernels": M, "group_ids": true}: every key optional (kernel_us is
 * 80 % of step_compute_us unless given). */
static enum tfd_status spec_device(const cJSON *it, struct spec *sp, const char *path,
				   struct tfd_err *err)
{
	static const char *const keys[] = {"h2d_us",	"copies",  "bytes",
					   "kernel_us", "kernels", "group_ids"};
	struct device_spec *d = &sp->dev;
	const char *bad = cJSON_IsObject(it) ? unknown_key(it, keys, 6) : "?";
	const cJSON *g;
	double v;

	if (bad)
		return spec_err(err, path,
				"'device' is an object of h2d_us, copies, bytes, kernel_us, "
				"kernels and group_ids (not '%s')",
				bad);
	for (int i = 0; i < 5; i++)
		if (num(it, keys[i], &v) < 0)
			return spec_err(err, path, "device.%s is a number", keys[i]);
	d->on = true;
	d->copies = 1;
	d->kernels = 4;
	d->kernel_us = -1;
	d->group_ids = true;
	if (num(it, "h2d_us", &v) > 0)
		d->h2d_us = v;
	if (num(it, "copies", &v) > 0)
		d->copies = to_int(v);
	if (num(it, "bytes", &v) > 0)
		d->bytes = v;
	if (num(it, "kernel_us", &v) > 0)
		d->kernel_us = v;
	if (num(it, "kernels", &v) > 0)
		d->kernels = to_int(v);
	g = cJSON_GetObjectItemCaseSensitive(it, "group_ids");
	if (g && !cJSON_IsBool(g))
		return spec_err(err, path, "device.group_ids is true or false");
	if (g)
		d->group_ids = cJSON_IsTrue(g);
	if (!(d->h2d_us >= 0 && d->h2d_us <= 1e7) || d->copies < 1 || d->copies > 1000 ||
	    !(d->bytes >= 0 && d->bytes <= 1e15) || !(d->kernel_us >= -1 && d->kernel_us <= 1e7) ||
	    d->kernels < 1 || d->kernels > 1000)
		return spec_err(err, path,
				"device: h2d_us and kernel_us in 0..1e7, copies and kernels "
				"1..1000, bytes 0..1e15");
	return TFD_OK;
}

/* A map stage's "ops": [{"type": T, "name": N, "share": S}, ...], at most
 * SYNTH_MAX_OPS, shares in (0, 1] adding up to 1 at most. */
static enum tfd_status spec_ops(const cJSON *it, struct stage_spec *ss, int at, const char *path,
				struct tfd_err *err)
{
	const cJSON *ops = cJSON_GetObjectItemCaseSensitive(it, "ops"), *o;
	double sum = 0;

	if (!ops)
		return TFD_OK;
	if (!cJSON_IsArray(ops) || cJSON_GetArraySize(ops) > SYNTH_MAX_OPS ||
	    (ss->def->k != K_MAP && ss->def->k != K_PMAP && ss->def->k != K_MAPBATCH))
		return spec_err(err, path,
				"stage %d: 'ops' is an array of at most %d ops, of a Map, "
				"ParallelMap or MapAndBatch",
				at, SYNTH_MAX_OPS);
	cJSON_ArrayForEach (o, ops) {
		static const char *const op_keys[] = {"type", "name", "share"};
		struct op_spec *op = &ss->ops[ss->nops];
		const char *bad = cJSON_IsObject(o) ? unknown_key(o, op_keys, 3) : "?";
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
		double share = 0;

		if (bad || !cJSON_IsString(t) || !t->valuestring[0] ||
		    strlen(t->valuestring) >= sizeof(op->type) || strchr(t->valuestring, ':') ||
		    (n && (!cJSON_IsString(n) || strlen(n->valuestring) >= sizeof(op->name) ||
			   strchr(n->valuestring, ':'))) ||
		    num(o, "share", &share) <= 0 || !(share > 0 && share <= 1))
			return spec_err(err, path,
					"stage %d: op %d needs a \"type\" (a word, no ':'), "
					"an optional \"name\" and a \"share\" in (0, 1]",
					at, ss->nops);
		snprintf(op->type, sizeof(op->type), "%s", t->valuestring);
		snprintf(op->name, sizeof(op->name), "%s", n ? n->valuestring : "map/op");
		op->share = share;
		op->py = tfd_op_is_python(op->type);
		sum += share;
		ss->nops++;
	}
	if (sum > 1.000001)
		return spec_err(err, path, "stage %d: the ops' shares add up to more than 1", at);
	return TFD_OK;
}

/* A parallel map's "ramp": [[element, workers], ...], elements rising from
 * 0, workers 1..parallelism: what AUTOTUNE does in its first seconds; a
 * prefetch's: [[element, buffer], ...], its buffer_limit 1..buffer. */
static enum tfd_status spec_ramp(const cJSON *it, struct stage_spec *ss, int idx, const char *path,
				 struct tfd_err *err)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(it, "ramp"), *e;
	int top = ss->def->k == K_PREFETCH ? ss->buffer : ss->par;

	if (!r)
		return TFD_OK;
	if ((ss->def->k != K_PMAP && ss->def->k != K_PREFETCH) || !cJSON_IsArray(r) ||
	    !cJSON_GetArraySize(r) || cJSON_GetArraySize(r) > SYNTH_MAX_RAMP)
		return spec_err(err, path,
				"stage %d: ramp is a ParallelMap's or a Prefetch's list of 1 to "
				"%d [element, workers or buffer] pairs",
				idx, SYNTH_MAX_RAMP);
	cJSON_ArrayForEach (e, r) {
		const cJSON *a = cJSON_GetArrayItem(e, 0), *b = cJSON_GetArrayItem(e, 1);
		int k = ss->nramp;

		if (!cJSON_IsArray(e) || cJSON_GetArraySize(e) != 2 || !cJSON_IsNumber(a) ||
		    !cJSON_IsNumber(b) || !(a->valuedouble >= 0 && a->valuedouble <= 1e9) ||
		    !(b->valuedouble >= 1 && b->valuedouble <= top) ||
		    (k == 0 && a->valuedouble != 0) ||
		    (k > 0 && a->valuedouble <= ss->ramp_at[k - 1]))
			return spec_err(err, path,
					"stage %d: ramp pairs are [element, workers or buffer]: "
					"elements from 0 and rising, workers 1 to its "
					"parallelism (buffer 1 to its buffer)",
					idx);
		ss->ramp_at[k] = (int)a->valuedouble;
		ss->ramp_par[k] = (int)b->valuedouble;
		ss->nramp++;
	}
	return TFD_OK;
}

/* Whether a stage's values are within their ranges (docs/cli.md). */
static bool stage_in_range(const struct stage_spec *ss)
{
	return !(ss->cost_us < 0 || ss->jitter < 0 || ss->jitter >= 1 || ss->par < 1 ||
		 ss->par > 256 || ss->buffer < 1 || ss->buffer > 100000 || ss->batch < 1 ||
		 ss->batch > 100000 || ss->keep_every < 1 || ss->keep_every > 1000 ||
		 ss->shuf_buf < 1 || ss->shuf_buf > 1000000 || ss->first_us < 0);
}

/* A stage's numbers and flags into ss (its kind set), defaults where not
 * given: false when one is out of its range (docs/cli.md). */
static bool stage_values(const cJSON *it, struct stage_spec *ss)
{
	const cJSON *x;
	double v;

	ss->cost_us = 1;
	ss->jitter = 0.1;
	ss->par = 1;
	ss->buffer = ss->def->k == K_PREFETCH ? 2 : 4;
	ss->batch = 1;
	ss->keep_every = 1;
	ss->shuf_buf = 16;
	ss->deterministic = 1;
	ss->autotune = 1;
	num(it, "cost_us", &ss->cost_us);
	num(it, "jitter", &ss->jitter);
	num(it, "first_call_us", &ss->first_us);
	if (num(it, "parallelism", &v) > 0)
		ss->par = v > 1e6 ? 1000000 : to_int(v);
	if (num(it, "buffer", &v) > 0)
		ss->buffer = v > 1e9 ? 1000000000 : to_int(v);
	if (num(it, "batch_size", &v) > 0)
		ss->batch = v > 1e9 ? 1000000000 : to_int(v);
	if (num(it, "keep_ratio", &v) > 0)
		ss->keep_every = v > 0 ? (int)lround(1.0 / v) : 1;
	if (num(it, "buffer_size", &v) > 0)
		ss->shuf_buf = v > 1e9 ? 1000000000 : to_int(v);
	x = cJSON_GetObjectItemCaseSensitive(it, "deterministic");
	if (x)
		ss->deterministic = cJSON_IsTrue(x);
	x = cJSON_GetObjectItemCaseSensitive(it, "autotune");
	if (x)
		ss->autotune = cJSON_IsTrue(x);
	return stage_in_range(ss);
}

/* Stage sp->nst of the spec.
 * One check per key of a stage, with its range (docs/cli.md). */
static enum tfd_status spec_stage(const cJSON *it, struct spec *sp, const char *path,
				  struct tfd_err *err)
{
	struct stage_spec *ss = &sp->st[sp->nst];
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(it, "kind");
	const char *bad;

	memset(ss, 0, sizeof(*ss));
	if (!cJSON_IsObject(it))
		return spec_err(err, path, "stage %d: not an object", sp->nst);
	bad = unknown_key(it, stage_keys, sizeof(stage_keys) / sizeof(stage_keys[0]));
	if (bad)
		return spec_err(err, path, "stage %d: unknown key '%s'", sp->nst, bad);
	for (size_t i = 0; cJSON_IsString(k) && i < tfd_synth_nkinds; i++)
		if (strcmp(tfd_synth_kinds[i].kind, k->valuestring) == 0)
			ss->def = &tfd_synth_kinds[i];
	if (!ss->def)
		return spec_err(err, path, "stage %d: unknown kind '%s'", sp->nst,
				cJSON_IsString(k) ? k->valuestring : "?");
	if ((sp->nst == 0) != (ss->def->k == K_SOURCE))
		return spec_err(err, path, "stage %d: a source must come first, and only first",
				sp->nst);
	if (!stage_values(it, ss))
		return spec_err(err, path, "stage %d (%s): a value is out of range", sp->nst,
				ss->def->kind);
	if (spec_ops(it, ss, sp->nst, path, err) != TFD_OK)
		return err ? err->status : TFD_E_FORMAT;
	if (spec_ramp(it, ss, sp->nst, path, err) != TFD_OK)
		return err ? err->status : TFD_E_FORMAT;
	sp->nst++;
	return TFD_OK;
}

/* The spec text into sp: strict (unknown keys, wrong types and values
 * out of range are errors naming the field). The JSON tree is freed only
 * at the end, so an error can quote it. */
enum tfd_status tfd_synth_parse_spec_text(const char *text, size_t len, const char *path,
					  struct spec *sp, struct tfd_err *err)
{
	cJSON *root, *stages, *it;
	const char *bad;
	enum tfd_status st = parse_text(text, len, path, &root, err);

	memset(sp, 0, sizeof(*sp));
	snprintf(sp->name, sizeof(sp->name), "synth");
	snprintf(sp->root, sizeof(sp->root), "Model");
	snprintf(sp->run, sizeof(sp->run), "2026_01_01_00_00_00");
	sp->hosts = 1;
	sp->steps = 20;
	sp->compute_us = 1000;
	sp->seed = 1;
	sp->slow_host = -1;
	sp->slow_factor = 1;
	sp->xplane = 1;
	if (!st && (bad = unknown_key(root, top_keys, sizeof(top_keys) / sizeof(top_keys[0]))))
		st = spec_err(err, path, "unknown key '%s'", bad);
	if (!st)
		st = spec_strings(root, sp, path, err);
	if (!st)
		st = spec_numbers(root, sp, path, err);
	stages = st ? NULL : cJSON_GetObjectItemCaseSensitive(root, "stages");
	if (!st && (!cJSON_IsArray(stages) || cJSON_GetArraySize(stages) < 1 ||
		    cJSON_GetArraySize(stages) > 32))
		st = spec_err(err, path,
			      "'stages' must be an array of 1 to 32 stages, source first");
	if (!st)
		cJSON_ArrayForEach (it, stages) {
			st = spec_stage(it, sp, path, err);
			if (st)
				break;
		}
	cJSON_Delete(root);
	return st;
}

/* The spec file at path (a regular file of at most 1 MiB: a FIFO or a
 * device is refused, never waited on) into sp. */
enum tfd_status tfd_synth_parse_spec(const char *path, struct spec *sp, struct tfd_err *err)
{
	char *text;
	size_t len;
	enum tfd_status st = tfd_read_regular(path, (size_t)1 << 20, "spec", &text, &len, err);

	if (st) {
		memset(sp, 0, sizeof(*sp));
		return st;
	}
	st = tfd_synth_parse_spec_text(text, len, path, sp, err);
	free(text);
	return st;
}
