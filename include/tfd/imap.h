/* imap.h - a small open-addressing hash map from 64-bit keys to size_t.
 *
 * The owner calls imap_free(). Values are stored as given; a lookup of a
 * missing key returns false. Growth aborts on OOM.
 */
#ifndef TFD_IMAP_H
#define TFD_IMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "tfd/err.h"

/* 16 bytes: val1 is the value plus one, 0 for an empty slot (a value of
 * SIZE_MAX cannot be stored; no caller stores one). */
struct imap_slot {
	uint64_t key;
	size_t val1;
};

struct imap {
	struct imap_slot *s;
	size_t cap, n;
};

static inline uint64_t imap_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ull;
	k ^= k >> 33;
	return k;
}

/* FNV-1a: the offset basis, and text s (or n bytes) mixed into hash h
 * (start from the basis). The keys of text the maps below hold. */
#define TFD_FNV_BASIS 0xcbf29ce484222325ull
#define TFD_FNV_PRIME 0x100000001b3ull

static inline uint64_t tfd_fnv_text(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * TFD_FNV_PRIME;
	return h;
}

/* The same for the n bytes at p. */
static inline uint64_t tfd_fnv_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * TFD_FNV_PRIME;
	return h;
}

static inline void imap_free(struct imap *m)
{
	free(m->s);
	m->s = NULL;
	m->cap = m->n = 0;
}

static inline bool imap_get(const struct imap *m, uint64_t key, size_t *val)
{
	size_t j;

	if (!m->cap)
		return false;
	j = imap_hash(key) & (m->cap - 1);
	while (m->s[j].val1) {
		if (m->s[j].key == key) {
			if (val)
				*val = m->s[j].val1 - 1;
			return true;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return false;
}

static inline void imap_put(struct imap *m, uint64_t key, size_t val);

static inline void imap_grow(struct imap *m)
{
	struct imap old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->s = xcalloc(m->cap, sizeof(*m->s));
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.s[i].val1)
			imap_put(m, old.s[i].key, old.s[i].val1 - 1);
	free(old.s);
}

/* Insert or overwrite. */
static inline void imap_put(struct imap *m, uint64_t key, size_t val)
{
	size_t j;

	if ((m->n + 1) * 4 > m->cap * 3)
		imap_grow(m);
	j = imap_hash(key) & (m->cap - 1);
	while (m->s[j].val1) {
		if (m->s[j].key == key) {
			m->s[j].val1 = val + 1;
			return;
		}
		j = (j + 1) & (m->cap - 1);
	}
	m->s[j].key = key;
	m->s[j].val1 = val + 1;
	m->n++;
}

#endif
