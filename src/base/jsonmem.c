/* jsonmem.c - cJSON's allocation hooks and numbers (include/tfd/jsonmem.h). */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "tfd/arena.h"
#include "tfd/err.h"
#include "tfd/jsonmem.h"

/* the arena this thread's cJSON trees come from, if any
 * (tfd_json_tree_begin) */
static _Thread_local struct tfd_arena *json_arena;
/* set once, before any thread that reads it is started */
static bool json_hooked;

void *tfd_json_alloc(size_t n)
{
	return json_arena ? tfd_arena_alloc(json_arena, n) : xmalloc(n);
}

static void json_free(void *p)
{
	if (!json_arena) /* (the arena's go with it) */
		free(p);
}

static void json_hook(void)
{
	cJSON_Hooks hooks = {tfd_json_alloc, json_free};

	cJSON_InitHooks(&hooks);
	json_hooked = true;
}

void tfd_json_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, json_hook);
}

void tfd_json_tree_begin(struct tfd_json_tree *t)
{
	t->root = NULL;
	t->members = SIZE_MAX;
	tfd_arena_init(&t->arena);
	t->in_arena = json_hooked;
	if (json_hooked)
		json_arena = &t->arena;
}

void tfd_json_tree_end(void)
{
	json_arena = NULL;
}

void tfd_json_part_begin(struct tfd_json_tree *t)
{
	tfd_json_tree_end();
	tfd_json_tree_begin(t);
}

cJSON *tfd_json_part_end(struct tfd_json_tree *t, cJSON *root, struct tfd_json_tree *outer,
			 struct tfd_buf *text)
{
	tfd_json_tree_end();
	t->root = root;
	text->len = 0;
	if (!tfd_json_print(text, root)) /* (tfdoctor makes no tree it cannot print) */
		abort();
	tfd_json_tree_free(t, true);
	if (outer && outer->in_arena)
		json_arena = &outer->arena;
	return cJSON_CreateRaw(text->s);
}

void tfd_json_tree_free(struct tfd_json_tree *t, bool keep)
{
	if (!t->in_arena)
		cJSON_Delete(t->root);
	t->root = NULL;
	if (keep)
		tfd_arena_recycle(&t->arena);
	else
		tfd_arena_release(&t->arena);
}

cJSON *tfd_json_num(double v)
{
	char buf[24], *p = buf + sizeof(buf);
	uint64_t u;

	if (!(fabs(v) < 1e15) || v != floor(v) || (v == 0 && signbit(v)))
		return cJSON_CreateNumber(v); /* (cJSON prints -0.0 as "-0") */
	u = (uint64_t)fabs(v);
	*--p = '\0';
	do {
		*--p = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		*--p = '-';
	return cJSON_CreateRaw(p);
}

cJSON *tfd_json_add_num(cJSON *o, const char *k, double v)
{
	cJSON *n = tfd_json_num(v);

	if (!cJSON_AddItemToObject(o, k, n)) {
		cJSON_Delete(n);
		return NULL;
	}
	return n;
}
