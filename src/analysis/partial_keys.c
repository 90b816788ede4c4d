/* partial_keys.c - which keys of a partial the reader used: every lookup
 * goes through tfd_pf_item(), which marks the member it finds, so that a
 * key no reader asked for (a typo, a newer writer's field, an edit) is an
 * error rather than silently dropped. The mark is a bit of the cJSON type
 * that cJSON's own type tests mask off (they compare type & 0xFF). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "partial_impl.h"

#define READ_MARK (1 << 12)

/* The members this thread marked (each once) since tfd_pf_marks_take(). */
static _Thread_local size_t marks;

static inline void mark(cJSON *v)
{
	marks += !(v->type & READ_MARK);
	v->type |= READ_MARK;
}

size_t tfd_pf_marks_take(void)
{
	size_t n = marks;

	marks = 0;
	return n;
}

const cJSON *tfd_pf_item(const cJSON *o, const char *k)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (v)
		mark(v);
	return v;
}

/* Whether member c is under key k (its first byte compared first: most
 * members looked at are not the one asked for). */
static inline bool key_is(const cJSON *c, const char *k)
{
	const char *s = c->string ? c->string : "";

	return s[0] == k[0] && strcmp(s, k) == 0;
}

const cJSON *tfd_pf_item_from(const cJSON *o, const char *k, const cJSON **hint)
{
	cJSON *start = (cJSON *)(*hint ? *hint : o->child), *v;

	/* from the member after the last one found (a reader asks for the
	 * members in the order the writer put them), round to it */
	for (v = start; v && !key_is(v, k); v = v->next)
		;
	for (cJSON *c = o->child; !v && c && c != start; c = c->next)
		if (key_is(c, k))
			v = c;
	if (!v)
		return NULL;
	mark(v);
	*hint = v->next;
	return v;
}

struct visit {
	const cJSON *n;
	size_t up;  /* the entry of its container, SIZE_MAX at the root */
	size_t idx; /* its place in an array container */
};

/* The path of entry e (a member key under it when key is set) into buf. */
static void path_of(const struct visit *v, size_t e, const char *key, char *buf, size_t len)
{
	size_t chain[64] = {0}, n = 0, off = 0;

	for (size_t i = e; i != SIZE_MAX && n < 64; i = v[i].up)
		chain[n++] = i;
	buf[0] = '\0';
	while (n-- > 0) {
		const struct visit *x = &v[chain[n]];
		const cJSON *up = x->up == SIZE_MAX ? NULL : v[x->up].n;
		int w = 0;

		if (up && cJSON_IsArray(up))
			w = snprintf(buf + off, len - off, "[%zu]", x->idx);
		else if (up)
			w = snprintf(buf + off, len - off, "%s%s", off ? "." : "", x->n->string);
		if (w < 0 || (size_t)w >= len - off)
			return;
		off += (size_t)w;
	}
	snprintf(buf + off, len - off, "%s%s", off ? "." : "", key);
}

/* Whether member c of object n repeats the key of a member before it. */
static bool repeats(const cJSON *n, const cJSON *c)
{
	for (const cJSON *d = n->child; d && d != c; d = d->next)
		if (strcmp(d->string ? d->string : "", c->string ? c->string : "") == 0)
			return true;
	return false;
}

enum tfd_pf_unread_kind tfd_pf_unread(const cJSON *doc, char *buf, size_t len)
{
	VEC(struct visit) v = {0};
	enum tfd_pf_unread_kind found = TFD_PF_ALL_READ;

	vec_push(&v, ((struct visit){doc, SIZE_MAX, 0}));
	for (size_t i = 0; i < v.n && !found; i++) {
		const cJSON *n = v.v[i].n;
		bool obj = (n->type & 0xFF) == cJSON_Object;
		size_t idx = 0;

		for (const cJSON *c = n->child; c && !found; c = c->next, idx++) {
			if (obj && !(c->type & READ_MARK)) {
				path_of(v.v, i, c->string ? c->string : "", buf, len);
				found = repeats(n, c) ? TFD_PF_TWICE : TFD_PF_UNKNOWN;
			} else if (c->child) { /* an object or array with members */
				vec_push(&v, ((struct visit){c, i, idx}));
			}
		}
	}
	vec_free(&v);
	return found;
}
