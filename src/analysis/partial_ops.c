/* partial_ops.c - a stage's function ops in the partial format: an
 * optional "function_ops" list of [type, name, self_ns, events], the most
 * time first, as analyze --partial writes it and merge reads it back. */
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "partial_impl.h"
#include "tfd/capbuild.h"
#include "tfd/jsonmem.h"

void tfd_pf_fn_ops_out(cJSON *o, const struct tfd_stage *s)
{
	cJSON *fo;

	if (!s->nfn_ops)
		return;
	fo = cJSON_AddArrayToObject(o, "function_ops");
	for (size_t i = 0; i < s->nfn_ops; i++) {
		cJSON *r = cJSON_CreateArray();

		cJSON_AddItemToArray(r, cJSON_CreateString(s->fn_ops[i].type));
		cJSON_AddItemToArray(r, cJSON_CreateString(s->fn_ops[i].name));
		cJSON_AddItemToArray(r, tfd_json_num((double)s->fn_ops[i].self_ns));
		cJSON_AddItemToArray(r, tfd_json_num((double)s->fn_ops[i].count));
		cJSON_AddItemToArray(fo, r);
	}
	tfd_json_add_num(o, "function_ops_coverage", s->fn_ops_coverage);
}

/* One entry into op: NULL, or why it is not [type, name:type, self_ns,
 * events] with the time no more than the entry before's (prev, or NULL). */
static const char *op_in(const cJSON *x, struct tfd_op_total *op, const struct tfd_op_total *prev,
			 struct tfd_arena *arena)
{
	const cJSON *t = cJSON_GetArrayItem(x, 0), *nm = cJSON_GetArrayItem(x, 1);
	const cJSON *ns = cJSON_GetArrayItem(x, 2), *c = cJSON_GetArrayItem(x, 3);
	const char *type;

	if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) != 4 || !cJSON_IsString(t) ||
	    !cJSON_IsString(nm) || !cJSON_IsNumber(ns) || !cJSON_IsNumber(c))
		return "holds an entry that is not [type, name, self_ns, events]";
	type = tfd_op_type(nm->valuestring);
	if (!type || strcmp(type, t->valuestring) != 0)
		return "holds a name that is not \"name:type\" of its type";
	if (!(ns->valuedouble >= 0 && ns->valuedouble < 9.2e18) ||
	    !(c->valuedouble >= 0 && c->valuedouble < 1.8e19))
		return "holds a time or count out of range";
	if (prev && ns->valuedouble > (double)prev->self_ns)
		return "is not in order of time, the most first";
	op->name = tfd_arena_intern_cstr(arena, nm->valuestring);
	op->type = tfd_op_type(op->name);
	op->self_ns = (int64_t)ns->valuedouble;
	op->count = (uint64_t)c->valuedouble;
	return NULL;
}

const char *tfd_pf_fn_ops_in(const cJSON *o, struct tfd_stage *s, struct tfd_arena *arena)
{
	const cJSON *fo = tfd_pf_item(o, "function_ops"), *x;
	int n = fo ? cJSON_GetArraySize(fo) : 0;

	if (!fo)
		return NULL;
	if (!cJSON_IsArray(fo) || n > 100000)
		return "is not a list of [type, name, self_ns, events]";
	x = tfd_pf_item(o, "function_ops_coverage");
	if (x && (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 1)))
		return "has a function_ops_coverage that is not a share (0 to 1)";
	s->fn_ops_coverage = x ? x->valuedouble : 0;
	s->fn_ops = xcalloc((size_t)n + 1, sizeof(*s->fn_ops));
	cJSON_ArrayForEach (x, fo) {
		const char *bad = op_in(x, &s->fn_ops[s->nfn_ops],
					s->nfn_ops ? &s->fn_ops[s->nfn_ops - 1] : NULL, arena);

		if (bad)
			return bad;
		s->nfn_ops++;
	}
	return NULL;
}
