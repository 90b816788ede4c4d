/* rules.c - loading and strict validation of rule tables (cJSON). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "rules_impl.h"
#include "tfd/capbuild.h"
#include "tfd/families.h"
#include "tfd/imap.h"
#include "tfd/infile.h"
#include "tfd/jsonmem.h"
#include "tfd/rules_builtin.h"
#include "tfd/vec.h"

/* Families a rule may name: normalized short names (tfd_iter_family). */

bool tfd_rules_known_family(const char *f);

bool tfd_rules_known_family(const char *f)
{
	return tfd_family_lookup(f) != NULL;
}

/* The metric table (name, type, scope, how it is computed) is in eval.c. */

static const char *const class_names[] = {
    "slow_source",
    "slow_remote_source",
    "slow_data_service",
    "python_generator",
    "in_memory_source",
    "sequential_map",
    "python_function",
    "decode_heavy",
    "augmentation_heavy",
    "string_heavy",
    "sequential_interleave",
    "parallel_at_limit",
    "fixed_parallelism",
    "small_threadpool",
    "deterministic_stall",
    "sequential_transformation",
    "sequential_function",
    "missing_prefetch",
    "prefetch_starved",
    "shuffle_warmup",
    "outlasted_call",
    "cache_fill",
    "shard_late",
    "filter_late",
    "cache_early",
    "pipeline_warmup",
    "root_overhead",
    "not_input_bound",
    "host_to_device",
    "python_gil",
    "iterator_per_epoch",
    "iterator_per_step",
    "dataset_per_element",
    "loop_in_function",
    "python_waits",
    "pipeline_cpu",
    "between_steps",
    "other",
};

static const char *const op_names[] = {"==", "!=", ">=", ">", "<=", "<", "exists", "missing"};

/* ---- freeing and copying ------------------------------------------------ */

static void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static void strlist_copy(struct strlist *dst, const struct strlist *src)
{
	dst->n = src->n;
	dst->v = xcalloc(src->n + 1, sizeof(char *));
	for (size_t i = 0; i < src->n; i++)
		dst->v[i] = xstrdup(src->v[i]);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void rule_free(struct rule *r)
{
	free(r->id);
	free(r->title);
	free(r->class_name);
	free(r->suggestion);
	free(r->code);
	free(r->doc);
	free(r->file);
	free(r->est_model);
	strlist_free(&r->family);
	strlist_free(&r->not_family);
	strlist_free(&r->under);
	strlist_free(&r->not_under);
	strlist_free(&r->pipeline_has);
	strlist_free(&r->pipeline_lacks);
	strlist_free(&r->top_op);
	strlist_free(&r->not_top_op);
	strlist_free(&r->ops);
	for (size_t i = 0; i < r->nwhen; i++)
		free(r->when[i].str);
	free(r->when);
	for (size_t i = 0; i < r->ndemote; i++)
		free(r->demote[i].str);
	free(r->demote);
	memset(r, 0, sizeof(*r));
}

static void rule_copy(struct rule *d, const struct rule *s)
{
	*d = *s;
	d->id = dup_or_null(s->id);
	d->title = dup_or_null(s->title);
	d->class_name = dup_or_null(s->class_name);
	d->suggestion = dup_or_null(s->suggestion);
	d->code = dup_or_null(s->code);
	d->doc = dup_or_null(s->doc);
	d->file = dup_or_null(s->file);
	d->est_model = dup_or_null(s->est_model);
	d->est_parallelism = s->est_parallelism;
	d->est_workers = s->est_workers;
	d->est_subtree = s->est_subtree;
	d->est_dropped = s->est_dropped;
	strlist_copy(&d->family, &s->family);
	strlist_copy(&d->not_family, &s->not_family);
	strlist_copy(&d->under, &s->under);
	strlist_copy(&d->not_under, &s->not_under);
	strlist_copy(&d->pipeline_has, &s->pipeline_has);
	strlist_copy(&d->pipeline_lacks, &s->pipeline_lacks);
	strlist_copy(&d->top_op, &s->top_op);
	strlist_copy(&d->not_top_op, &s->not_top_op);
	strlist_copy(&d->ops, &s->ops);
	d->when = xcalloc(s->nwhen + 1, sizeof(*d->when));
	for (size_t i = 0; i < s->nwhen; i++) {
		d->when[i] = s->when[i];
		d->when[i].str = dup_or_null(s->when[i].str);
	}
	d->demote = xcalloc(s->ndemote + 1, sizeof(*d->demote));
	for (size_t i = 0; i < s->ndemote; i++) {
		d->demote[i] = s->demote[i];
		d->demote[i].str = dup_or_null(s->demote[i].str);
	}
}

void tfd_rules_free(struct tfd_ruleset *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		rule_free(&rs->v[i]);
	free(rs->v);
	free(rs->slot);
	free(rs);
}

size_t tfd_rules_count(const struct tfd_ruleset *rs)
{
	return rs ? rs->n : 0;
}

/* ---- parsing ------------------------------------------------------------ */

struct ctx {
	const char *file;
	const char *rule; /* id, or "#N" before the id is known */
	struct tfd_err *err;
};

static enum tfd_status bad(struct ctx *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum tfd_status bad(struct ctx *c, const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tfd_fail(c->err, TFD_E_RULES, "%s: rule '%s': %s", c->file, c->rule, msg);
}

/* cJSON keeps repeated keys; a rule file must not have them. */
static const char *dup_key(const cJSON *obj)
{
	for (const cJSON *a = obj ? obj->child : NULL; a; a = a->next)
		for (const cJSON *b = a->next; b; b = b->next)
			if (a->string && b->string && strcmp(a->string, b->string) == 0)
				return a->string;
	return NULL;
}

static enum tfd_status get_str(struct ctx *c, const cJSON *v, const char *key, char **out)
{
	if (!cJSON_IsString(v))
		return bad(c, "field '%s' must be a string", key);
	if (strlen(v->valuestring) > 4096)
		return bad(c, "field '%s' is longer than 4096 bytes", key);
	*out = xstrdup(v->valuestring);
	return TFD_OK;
}

static enum tfd_status get_families(struct ctx *c, const cJSON *v, const char *key,
				    struct strlist *out)
{
	const cJSON *it;

	if (!cJSON_IsArray(v))
		return bad(c, "field '%s' must be an array of iterator families", key);
	out->v = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(char *));
	cJSON_ArrayForEach (it, v) {
		if (!cJSON_IsString(it))
			return bad(c, "field '%s' must be an array of strings", key);
		if (!tfd_rules_known_family(it->valuestring)) {
			char fam[128];

			tfd_iter_family(it->valuestring, fam, sizeof(fam));
			if (strcmp(fam, it->valuestring) && tfd_rules_known_family(fam))
				return bad(c,
					   "field '%s' names unknown iterator family '%s' "
					   "(families are normalized: '%s')",
					   key, it->valuestring, fam);
			return bad(c, "field '%s' names unknown iterator family '%s'", key,
				   it->valuestring);
		}
		out->v[out->n++] = xstrdup(it->valuestring);
	}
	return TFD_OK;
}

/* A list of op types ("DecodeJpegV2", "_Send"): identifiers. */
static enum tfd_status get_op_types(struct ctx *c, const cJSON *v, const char *key,
				    struct strlist *out)
{
	const cJSON *it;

	if (!cJSON_IsArray(v))
		return bad(c, "field '%s' must be an array of op types", key);
	out->v = xcalloc((size_t)cJSON_GetArraySize(v) + 1, sizeof(char *));
	cJSON_ArrayForEach (it, v) {
		const char *t = cJSON_IsString(it) ? it->valuestring : "";
		if (strlen(t) >= 128 || !tfd_op_type_ok(t))
			return bad(c,
				   "field '%s' must be an array of op types (identifiers such as "
				   "DecodeJpegV2)",
				   key);
		out->v[out->n++] = xstrdup(t);
	}
	return TFD_OK;
}

static int lookup(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

/* A condition's value val for metric mi (name m) under its operator,
 * checked against the metric's type, into cd. */
static enum tfd_status cond_value(struct ctx *c, const cJSON *val, int mi, const char *m,
				  struct cond *cd)
{
	bool eq_only = cd->op != OP_EQ && cd->op != OP_NE;

	switch (tfd_metrics[mi].type) {
	case VT_NUM:
		if (!cJSON_IsNumber(val) || !isfinite(val->valuedouble))
			return bad(c, "metric '%s' needs a number value", m);
		cd->num = val->valuedouble;
		break;
	case VT_STR:
		if (!cJSON_IsString(val))
			return bad(c, "metric '%s' needs a string value", m);
		if (eq_only)
			return bad(c, "metric '%s' compares with == or != only", m);
		cd->str = xstrdup(val->valuestring);
		break;
	case VT_BOOL:
		if (!cJSON_IsBool(val))
			return bad(c, "metric '%s' needs a true/false value", m);
		if (eq_only)
			return bad(c, "metric '%s' compares with == or != only", m);
		cd->b = cJSON_IsTrue(val);
		break;
	}
	return TFD_OK;
}

/* A condition's metric, operator and value, each checked against the
 * metric's type; the checks are the schema. */
static enum tfd_status parse_cond(struct ctx *c, const cJSON *o, struct cond *cd,
				  enum rule_target target)
{
	const cJSON *k, *m = NULL, *op = NULL, *val = NULL;
	int mi = -1, oi;

	if (!cJSON_IsObject(o))
		return bad(c, "each 'when' entry must be an object");
	if (dup_key(o))
		return bad(c, "duplicate key 'when.%s'", dup_key(o));
	cJSON_ArrayForEach (k, o) {
		if (strcmp(k->string, "metric") == 0)
			m = k;
		else if (strcmp(k->string, "op") == 0)
			op = k;
		else if (strcmp(k->string, "value") == 0)
			val = k;
		else
			return bad(c, "unknown key 'when.%s'", k->string);
	}
	if (!cJSON_IsString(m))
		return bad(c, "'when.metric' must be a string");
	for (size_t i = 0; i < tfd_nmetrics; i++)
		if (strcmp(tfd_metrics[i].name, m->valuestring) == 0)
			mi = (int)i;
	if (mi < 0)
		return bad(c, "unknown metric '%s'", m->valuestring);
	if (tfd_metrics[mi].scope < target)
		return bad(c, "metric '%s' needs a narrower target than this rule's",
			   m->valuestring);
	if (!cJSON_IsString(op))
		return bad(c, "'when.op' must be a string");
	oi = lookup(op_names, sizeof(op_names) / sizeof(op_names[0]), op->valuestring);
	if (oi < 0)
		return bad(c, "unknown operator '%s'", op->valuestring);
	cd->metric = mi;
	cd->op = (enum cond_op)oi;
	if (cd->op == OP_EXISTS || cd->op == OP_MISSING)
		return val ? bad(c, "operator '%s' takes no value", op->valuestring) : TFD_OK;
	return cond_value(c, val, mi, m->valuestring, cd);
}

/* A list of conditions ("when", "demote_when"): all must hold. */
static enum tfd_status parse_conds(struct ctx *c, const cJSON *k, const char *key,
				   enum rule_target target, struct cond **out, size_t *n)
{
	const cJSON *w;
	enum tfd_status st = TFD_OK;

	if (!cJSON_IsArray(k))
		return bad(c, "field '%s' must be an array", key);
	*out = xcalloc((size_t)cJSON_GetArraySize(k) + 1, sizeof(**out));
	cJSON_ArrayForEach (w, k) {
		st = parse_cond(c, w, &(*out)[*n], target);
		if (st)
			break;
		(*n)++;
	}
	return st;
}

static const char *const models[] = {"scale",	     "remove",	     "overlap",	     "copy_overlap",
				     "loop_startup", "one_iterator", "epoch_starts", "vectorize",
				     "free_cpu",     "fewer_gaps",   "none"};

/* "estimate": {"model": ..., "factor": ..., "of": "work"|"parallelism"|
 * "workers"|"subtree"|"dropped", "to": ...} */
static enum tfd_status parse_estimate(struct ctx *c, const cJSON *k, struct rule *r)
{
	const cJSON *e;

	if (!cJSON_IsObject(k))
		return bad(c, "field 'estimate' must be an object");
	if (dup_key(k))
		return bad(c, "duplicate key 'estimate.%s'", dup_key(k));
	cJSON_ArrayForEach (e, k) {
		if (strcmp(e->string, "model") == 0) {
			if (!cJSON_IsString(e) ||
			    lookup(models, sizeof(models) / sizeof(*models), e->valuestring) < 0)
				return bad(c,
					   "'estimate.model' must be one of scale, remove, "
					   "overlap, copy_overlap, loop_startup, one_iterator, "
					   "epoch_starts, vectorize, free_cpu, fewer_gaps, none");
			free(r->est_model);
			r->est_model = xstrdup(e->valuestring);
		} else if (strcmp(e->string, "factor") == 0) {
			if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1.0) || e->valuedouble > 1e6)
				return bad(c, "'estimate.factor' must be a number >= 1");
			r->est_factor = e->valuedouble;
		} else if (strcmp(e->string, "to") == 0) {
			if (!cJSON_IsNumber(e) || !(e->valuedouble >= 1.0) || e->valuedouble > 1e6)
				return bad(c, "'estimate.to' must be a number >= 1");
			r->est_to = e->valuedouble;
		} else if (strcmp(e->string, "of") == 0) {
			if (!cJSON_IsString(e) || (strcmp(e->valuestring, "work") &&
						   strcmp(e->valuestring, "parallelism") &&
						   strcmp(e->valuestring, "workers") &&
						   strcmp(e->valuestring, "subtree") &&
						   strcmp(e->valuestring, "dropped")))
				return bad(c, "'estimate.of' must be work, parallelism, workers, "
					      "subtree or dropped");
			r->est_parallelism = strcmp(e->valuestring, "parallelism") == 0;
			r->est_workers = strcmp(e->valuestring, "workers") == 0;
			r->est_subtree = strcmp(e->valuestring, "subtree") == 0;
			r->est_dropped = strcmp(e->valuestring, "dropped") == 0;
		} else {
			return bad(c, "unknown key 'estimate.%s'", e->string);
		}
	}
	return TFD_OK;
}

/* Whether one of the n conditions reads metric `name`. */
static bool uses_metric(const struct cond *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(tfd_metrics[v[i].metric].name, name) == 0)
			return true;
	return false;
}

/* parser: one check per key of a rule (docs/rules.md); the checks are the
 * schema, in its order. */
static enum tfd_status parse_rule(struct ctx *c, const cJSON *o, struct rule *r)
{
	const cJSON *k, *id = cJSON_GetObjectItemCaseSensitive(o, "id");
	enum tfd_status st = TFD_OK;
	static const char *const targets[] = {"bottleneck", "pipeline", "host"};

	if (!cJSON_IsObject(o))
		return bad(c, "a rule must be an object");
	if (!cJSON_IsString(id) || !id->valuestring[0])
		return bad(c, "field 'id' must be a non-empty string");
	/* ids are printed bare (rules list, reports, JSON keys of users'
	 * scripts): a newline or an escape byte in one would forge output */
	if (id->valuestring[strspn(id->valuestring, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
						    "abcdefghijklmnopqrstuvwxyz0123456789_.-")])
		return bad(c, "field 'id' may hold only letters, digits, '_', '.' and '-'");
	c->rule = id->valuestring;
	if (dup_key(o))
		return bad(c, "duplicate key '%s'", dup_key(o));
	r->id = xstrdup(id->valuestring);
	r->file = xstrdup(c->file);
	r->target = TARGET_BOTTLENECK;
	r->severity = TFD_SEV_MEDIUM;
	/* the target decides which metrics are allowed: read it first */
	k = cJSON_GetObjectItemCaseSensitive(o, "target");
	if (k) {
		int t = cJSON_IsString(k) ? lookup(targets, 3, k->valuestring) : -1;

		if (t < 0)
			return bad(c, "field 'target' must be one of bottleneck, pipeline, host");
		r->target = (enum rule_target)t;
	}
	cJSON_ArrayForEach (k, o) {
		const char *key = k->string;

		if (strcmp(key, "id") == 0 || strcmp(key, "target") == 0)
			continue;
		if (strcmp(key, "title") == 0)
			st = get_str(c, k, key, &r->title);
		else if (strcmp(key, "suggestion") == 0)
			st = get_str(c, k, key, &r->suggestion);
		else if (strcmp(key, "code") == 0)
			st = get_str(c, k, key, &r->code);
		else if (strcmp(key, "doc") == 0)
			st = get_str(c, k, key, &r->doc);
		else if (strcmp(key, "class") == 0) {
			st = get_str(c, k, key, &r->class_name);
			if (!st && lookup(class_names, sizeof(class_names) / sizeof(class_names[0]),
					  r->class_name) < 0)
				st = bad(c, "unknown class '%s'", r->class_name);
		} else if (strcmp(key, "severity") == 0) {
			int s = cJSON_IsString(k) ? tfd_severity_parse(k->valuestring) : -1;

			if (s < 0)
				st = bad(c,
					 "field 'severity' must be one of info, low, medium, high");
			else
				r->severity = (enum tfd_severity)s;
		} else if (strcmp(key, "family") == 0)
			st = get_families(c, k, key, &r->family);
		else if (strcmp(key, "not_family") == 0)
			st = get_families(c, k, key, &r->not_family);
		else if (strcmp(key, "under") == 0)
			st = get_families(c, k, key, &r->under);
		else if (strcmp(key, "not_under") == 0)
			st = get_families(c, k, key, &r->not_under);
		else if (strcmp(key, "pipeline_has") == 0)
			st = get_families(c, k, key, &r->pipeline_has);
		else if (strcmp(key, "pipeline_lacks") == 0)
			st = get_families(c, k, key, &r->pipeline_lacks);
		else if (strcmp(key, "top_op") == 0)
			st = get_op_types(c, k, key, &r->top_op);
		else if (strcmp(key, "not_top_op") == 0)
			st = get_op_types(c, k, key, &r->not_top_op);
		else if (strcmp(key, "ops") == 0)
			st = get_op_types(c, k, key, &r->ops);
		else if (strcmp(key, "when") == 0)
			st = parse_conds(c, k, key, r->target, &r->when, &r->nwhen);
		else if (strcmp(key, "demote_when") == 0)
			st = parse_conds(c, k, key, r->target, &r->demote, &r->ndemote);
		else if (strcmp(key, "estimate") == 0) {
			st = parse_estimate(c, k, r);
		} else {
			st = bad(c, "unknown key '%s'", key);
		}
		if (st)
			return st;
	}
	if (!r->title)
		return bad(c, "missing field 'title'");
	if (!r->suggestion)
		return bad(c, "missing field 'suggestion'");
	if (!r->class_name)
		return bad(c, "missing field 'class'");
	if (!r->est_model)
		r->est_model = xstrdup("none");
	if (strcmp(r->est_model, "scale") == 0 && r->est_factor < 1.0 && !(r->est_to >= 1.0))
		return bad(c, "estimate model 'scale' needs a 'factor' (or 'to')");
	if (strcmp(r->est_model, "fewer_gaps") == 0 && !(r->est_factor > 1.0))
		return bad(c, "estimate model 'fewer_gaps' needs a 'factor' above 1");
	if (strcmp(r->est_model, "fewer_gaps") == 0 && r->target != TARGET_HOST)
		return bad(c, "estimate model 'fewer_gaps' goes with target 'host' only");
	if (r->est_subtree && strcmp(r->est_model, "remove") != 0)
		return bad(c, "'estimate.of' 'subtree' goes with model 'remove' only");
	if (r->est_dropped && strcmp(r->est_model, "remove") != 0 &&
	    strcmp(r->est_model, "free_cpu") != 0)
		return bad(c,
			   "'estimate.of' 'dropped' goes with model 'remove' or 'free_cpu' only");
	if (r->est_to >= 1.0 && (strcmp(r->est_model, "scale") != 0 || !r->est_parallelism))
		return bad(c, "'estimate.to' sets a parallelism: model 'scale' with 'of': "
			      "'parallelism' only");
	if (r->target != TARGET_BOTTLENECK &&
	    (r->family.n || r->not_family.n || r->under.n || r->not_under.n || r->top_op.n ||
	     r->not_top_op.n || r->ops.n))
		return bad(c, "family/under/top_op/ops filters apply to target 'bottleneck' only");
	if (!r->ops.n && (uses_metric(r->when, r->nwhen, "ops_share") ||
			  uses_metric(r->demote, r->ndemote, "ops_share")))
		return bad(c, "metric 'ops_share' needs the rule's 'ops' (the op types it sums)");
	return TFD_OK;
}

/* ---- the ids' index: loading is linear in the number of rules ---- */

static size_t id_hash(const char *s)
{
	return (size_t)tfd_fnv_text(TFD_FNV_BASIS, s);
}

/* The slot of id: holding its rule, or the empty one where it would go. */
static size_t *id_slot(const struct tfd_ruleset *rs, const char *id)
{
	size_t m = rs->nslot - 1;

	for (size_t k = id_hash(id) & m;; k = (k + 1) & m)
		if (!rs->slot[k] || strcmp(rs->v[rs->slot[k] - 1].id, id) == 0)
			return &rs->slot[k];
}

/* Index every rule (ids are unique), with room for one more. */
static void id_index(struct tfd_ruleset *rs)
{
	size_t want = 16;

	while (want < 2 * (rs->n + 1))
		want *= 2;
	if (want != rs->nslot) {
		free(rs->slot);
		rs->slot = xmalloc(want * sizeof(*rs->slot));
		rs->nslot = want;
	}
	memset(rs->slot, 0, want * sizeof(*rs->slot));
	for (size_t i = 0; i < rs->n; i++)
		*id_slot(rs, rs->v[i].id) = i + 1;
	rs->nindexed = rs->n;
}

/* Add r to rs (taking its strings). A repeated id is an error, except
 * that with allow_override a user rule replaces a built-in one. */
static enum tfd_status add_rule(struct tfd_ruleset *rs, struct rule *r, bool allow_override,
				struct ctx *c)
{
	size_t *slot;

	if (rs->nindexed != rs->n || 2 * (rs->n + 1) > rs->nslot)
		id_index(rs);
	slot = id_slot(rs, r->id);
	if (*slot) {
		struct rule *old = &rs->v[*slot - 1];
		enum tfd_status st;

		if (allow_override && strncmp(old->file, "(built-in)", 10) == 0) {
			rule_free(old);
			*old = *r;
			return TFD_OK;
		}
		st = tfd_fail(c->err, TFD_E_RULES, "%s: rule '%s': duplicate id (also in %s)",
			      c->file, r->id, old->file);
		rule_free(r);
		return st;
	}
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? 2 * rs->cap : 16;
		rs->v = xrealloc(rs->v, rs->cap * sizeof(*rs->v));
	}
	rs->v[rs->n++] = *r;
	*slot = rs->n;
	rs->nindexed = rs->n;
	return TFD_OK;
}

/* Parse one file into rs. With allow_override, ids that came from the
 * built-in table are replaced; any other repeated id is an error. */
static enum tfd_status parse_file(struct tfd_ruleset *rs, const char *text, size_t len,
				  const char *name, bool allow_override, struct tfd_err *err)
{
	const char *errp = NULL;
	/* the tree in an arena of its own: the rules copy what they keep, and
	 * freeing the built-in table's nodes one by one was a quarter of a
	 * small capture's run */
	struct tfd_json_tree tree;
	cJSON *root;
	const cJSON *k, *rules = NULL;
	struct ctx c = {name, "?", err};
	enum tfd_status st = TFD_OK;
	int idx = 0;

	tfd_json_tree_begin(&tree);
	root = tree.root = tfd_json_parse(text, len, &errp);
	tfd_json_tree_end();
	if (!root) {
		size_t off = errp && errp >= text && errp <= text + len ? (size_t)(errp - text) : 0;

		tfd_json_tree_free(&tree, false);
		return tfd_fail(err, TFD_E_RULES, "%s: invalid JSON near byte %zu", name, off);
	}
	if (!cJSON_IsObject(root)) {
		st = tfd_fail(err, TFD_E_RULES, "%s: a rule file is a JSON object with \"rules\"",
			      name);
		goto out;
	}
	if (dup_key(root)) {
		st = tfd_fail(err, TFD_E_RULES, "%s: duplicate top-level key '%s'", name,
			      dup_key(root));
		goto out;
	}
	cJSON_ArrayForEach (k, root) {
		if (strcmp(k->string, "rules") == 0)
			rules = k;
		else if (strcmp(k->string, "description") != 0) {
			st = tfd_fail(err, TFD_E_RULES, "%s: unknown top-level key '%s'", name,
				      k->string);
			goto out;
		}
	}
	if (!cJSON_IsArray(rules)) {
		st = tfd_fail(err, TFD_E_RULES, "%s: \"rules\" must be an array", name);
		goto out;
	}
	cJSON_ArrayForEach (k, rules) {
		struct rule r;
		char pos[16];

		memset(&r, 0, sizeof(r));
		snprintf(pos, sizeof(pos), "#%d", idx++);
		c.rule = pos;
		st = parse_rule(&c, k, &r);
		if (st) {
			rule_free(&r);
			goto out;
		}
		st = add_rule(rs, &r, allow_override, &c);
		if (st)
			goto out;
	}
out:
	tfd_json_tree_free(&tree, false);
	return st;
}

enum tfd_status tfd_rules_load_mem(const char *text, size_t len, const char *name,
				   struct tfd_ruleset **out, struct tfd_err *err)
{
	struct tfd_ruleset *rs = xcalloc(1, sizeof(*rs));
	enum tfd_status st = parse_file(rs, text, len, name, false, err);

	if (st) {
		tfd_rules_free(rs);
		*out = NULL;
		return st;
	}
	*out = rs;
	return TFD_OK;
}

enum tfd_status tfd_rules_load_builtin(struct tfd_ruleset **out, struct tfd_err *err)
{
	struct tfd_ruleset *rs = xcalloc(1, sizeof(*rs));

	for (const struct tfd_rules_file *f = tfd_rules_builtin; f->name; f++) {
		char name[128];
		enum tfd_status st;

		snprintf(name, sizeof(name), "(built-in)/%s", f->name);
		st = parse_file(rs, f->text, strlen(f->text), name, false, err);
		if (st) {
			tfd_rules_free(rs);
			*out = NULL;
			return st;
		}
	}
	*out = rs;
	return TFD_OK;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

enum tfd_status tfd_rules_load_dir(const struct tfd_ruleset *base, const char *dir,
				   struct tfd_ruleset **out, struct tfd_err *err)
{
	struct tfd_ruleset *rs = xcalloc(1, sizeof(*rs));
	DIR *d = opendir(dir);
	struct dirent *de;
	VEC(char *) names = {0};
	enum tfd_status st = TFD_OK;

	*out = NULL;
	if (!d) {
		tfd_rules_free(rs);
		return tfd_fail(err, TFD_E_IO, "%s: %s", dir, strerror(errno));
	}
	while ((de = readdir(d)) != NULL) {
		size_t n = strlen(de->d_name);

		if (de->d_name[0] != '.' && n > 5 && strcmp(de->d_name + n - 5, ".json") == 0)
			vec_push(&names, xstrdup(de->d_name));
	}
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), cmp_str);
	if (base) {
		rs->v = xcalloc(base->n + 1, sizeof(*rs->v));
		rs->cap = base->n + 1;
		for (size_t i = 0; i < base->n; i++)
			rule_copy(&rs->v[i], &base->v[i]);
		rs->n = base->n;
	}
	if (!names.n)
		st = tfd_fail(err, TFD_E_RULES, "%s: no *.json rule files", dir);
	for (size_t i = 0; i < names.n && !st; i++) {
		char *path, *text = NULL;
		size_t len = 0, pl = strlen(dir) + strlen(names.v[i]) + 2;

		path = xmalloc(pl);
		snprintf(path, pl, "%s/%s", dir, names.v[i]);
		st = tfd_read_regular(path, (size_t)64 << 20, "rule file", &text, &len, err);
		if (!st)
			st = parse_file(rs, text, len, path, true, err);
		free(text);
		free(path);
	}
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	vec_free(&names);
	if (st) {
		tfd_rules_free(rs);
		return st;
	}
	*out = rs;
	return TFD_OK;
}

void tfd_rules_info(const struct tfd_ruleset *rs, size_t i, struct tfd_rule_info *out)
{
	static const char *const targets[] = {"bottleneck", "pipeline", "host"};
	const struct rule *r = &rs->v[i];

	out->id = r->id;
	out->title = r->title;
	out->class_name = r->class_name;
	out->target = targets[r->target];
	out->file = r->file;
	out->severity = r->severity;
	out->families = (const char *const *)r->family.v;
	out->nfamilies = r->family.n;
}

const char *tfd_severity_name(enum tfd_severity s)
{
	static const char *const n[] = {"info", "low", "medium", "high"};

	return s <= TFD_SEV_HIGH ? n[s] : "?";
}

int tfd_severity_parse(const char *s)
{
	static const char *const n[] = {"info", "low", "medium", "high"};

	return lookup(n, 4, s);
}

enum tfd_status tfd_rules_load_default(const char *dir, struct tfd_ruleset **out,
				       struct tfd_err *err)
{
	struct tfd_ruleset *base = NULL;
	enum tfd_status st = tfd_rules_load_builtin(&base, err);

	if (st || !dir) {
		*out = base;
		return st;
	}
	st = tfd_rules_load_dir(base, dir, out, err);
	tfd_rules_free(base);
	return st;
}
