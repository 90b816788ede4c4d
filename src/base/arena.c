#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/arena.h"
#include "tfd/err.h"

struct tfd_arena_chunk {
	struct tfd_arena_chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

#define CHUNK_MIN (64u * 1024u)
#define CHUNK_MAX (1024u * 1024u)

void tfd_arena_init(struct tfd_arena *a)
{
	memset(a, 0, sizeof(*a));
	a->next_size = CHUNK_MIN;
}

void tfd_arena_release(struct tfd_arena *a)
{
	struct tfd_arena_chunk *c = a->head, *n;

	while (c) {
		n = c->next;
		free(c);
		c = n;
	}
	free(a->slots);
	memset(a, 0, sizeof(*a));
}

void tfd_arena_rewind(struct tfd_arena *a)
{
	struct tfd_arena_chunk *c, *n;

	if (!a->head)
		return;
	for (c = a->head->next; c; c = n) {
		n = c->next;
		free(c);
	}
	a->head->next = NULL;
	a->head->used = 0;
}

/* Chunks tfd_arena_recycle() kept, a list under spare_mu; spare_n, read
 * without the lock, saves taking it while there are none. */
#define SPARE_MAX ((size_t)256 << 20)
static pthread_mutex_t spare_mu = PTHREAD_MUTEX_INITIALIZER;
static struct tfd_arena_chunk *spare;
static size_t spare_bytes;
static _Atomic size_t spare_n;

/* A kept chunk of at least sz bytes, or NULL. */
static struct tfd_arena_chunk *spare_take(size_t sz)
{
	struct tfd_arena_chunk *c = NULL, **at;

	if (!atomic_load_explicit(&spare_n, memory_order_relaxed))
		return NULL;
	pthread_mutex_lock(&spare_mu);
	for (at = &spare; *at && (*at)->size < sz; at = &(*at)->next)
		;
	if (*at) {
		c = *at;
		*at = c->next;
		spare_bytes -= c->size;
		atomic_fetch_sub_explicit(&spare_n, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&spare_mu);
	return c;
}

void tfd_arena_recycle(struct tfd_arena *a)
{
	struct tfd_arena_chunk *c = a->head, *n;

	for (; c; c = n) {
		n = c->next;
		pthread_mutex_lock(&spare_mu);
		if (spare_bytes + c->size <= SPARE_MAX) {
			c->next = spare;
			spare = c;
			spare_bytes += c->size;
			atomic_fetch_add_explicit(&spare_n, 1, memory_order_relaxed);
			c = NULL;
		}
		pthread_mutex_unlock(&spare_mu);
		free(c);
	}
	a->head = NULL;
	tfd_arena_release(a);
}

size_t tfd_arena_spare_bytes(void)
{
	size_t n;

	pthread_mutex_lock(&spare_mu);
	n = spare_bytes;
	pthread_mutex_unlock(&spare_mu);
	return n;
}

void *tfd_arena_alloc(struct tfd_arena *a, size_t n)
{
	struct tfd_arena_chunk *c = a->head;
	size_t need = (n + 15) & ~(size_t)15;
	void *p;

	if (!c || c->size - c->used < need) {
		size_t sz = a->next_size ? a->next_size : CHUNK_MIN;

		if (sz < need)
			sz = need;
		c = spare_take(sz);
		if (!c) {
			c = xmalloc(sizeof(*c) + sz);
			c->size = sz;
		}
		c->used = 0;
		c->next = a->head;
		a->head = c;
		if (a->next_size < CHUNK_MAX)
			a->next_size *= 2;
	}
	p = c->data + c->used;
	c->used += need;
	a->bytes += need;
	memset(p, 0, need);
	return p;
}

char *tfd_arena_strndup(struct tfd_arena *a, const char *s, size_t len)
{
	char *p = tfd_arena_alloc(a, len + 1);

	if (len)
		memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

/* 8 bytes a multiply (a name is interned for each event read), mixed at
 * the end so that the table's low bits depend on every byte. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	const uint64_t k = 0x9e3779b97f4a7c15ull;
	uint64_t h = len * k, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * k;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s, len);
	h = (h ^ w) * k;
	h ^= h >> 32;
	h *= 0xd6e8feb86659fd93ull;
	return h ^ (h >> 32);
}

static void grow(struct tfd_arena *a)
{
	size_t n = a->nslots ? a->nslots * 2 : 256;
	const char **slots = xcalloc(n, sizeof(*slots));

	for (size_t i = 0; i < a->nslots; i++) {
		const char *s = a->slots[i];
		size_t j;

		if (!s)
			continue;
		j = hash_bytes(s, strlen(s)) & (n - 1);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s;
	}
	free(a->slots);
	a->slots = slots;
	a->nslots = n;
}

const char *tfd_arena_intern(struct tfd_arena *a, const char *s, size_t len)
{
	size_t j;

	if (!s) { /* an absent string field: the empty name */
		s = "";
		len = 0;
	}
	if ((a->nused + 1) * 2 > a->nslots)
		grow(a);
	j = hash_bytes(s, len) & (a->nslots - 1);
	while (a->slots[j]) {
		const char *t = a->slots[j];

		if (strncmp(t, s, len) == 0 && t[len] == '\0')
			return t;
		j = (j + 1) & (a->nslots - 1);
	}
	a->slots[j] = tfd_arena_strndup(a, s, len);
	a->nused++;
	return a->slots[j];
}

const char *tfd_arena_intern_cstr(struct tfd_arena *a, const char *s)
{
	return tfd_arena_intern(a, s, strlen(s));
}
