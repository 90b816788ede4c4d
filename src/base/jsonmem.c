/* jsonmem.c - cJSON's allocation hooks (include/tfd/jsonmem.h). */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "tfd/arena.h"
#include "tfd/err.h"
#include "tfd/jsonmem.h"

/* the arena this thread's cJSON trees come from, if any
 * (tfd_json_arena_begin) */
static _Thread_local struct tfd_arena *json_arena;
/* set once, before any thread that reads it is started */
static bool json_hooked;

static void *json_alloc(size_t n)
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
	cJSON_Hooks hooks = {json_alloc, json_free};

	cJSON_InitHooks(&hooks);
	json_hooked = true;
}

void tfd_json_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, json_hook);
}

bool tfd_json_arena_begin(struct tfd_arena *a)
{
	if (!json_hooked)
		return false;
	json_arena = a;
	return true;
}

void tfd_json_arena_end(void)
{
	json_arena = NULL;
}
