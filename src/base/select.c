/* select.c - the k-th smallest of an array, the order qsort sorts
 * int64_t values in, and 64-bit keys sorted by their bytes (select.h). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/err.h"
#include "tfd/select.h"

/* One selection per element type: the same steps, typed. */
#define KTH(name, type)                                                                            \
	type name(type *v, size_t n, size_t k)                                                     \
	{                                                                                          \
		ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, want = (ptrdiff_t)k;                      \
                                                                                                   \
		while (lo < hi) {                                                                  \
			type pivot = v[lo + (hi - lo) / 2];                                        \
			ptrdiff_t i = lo, j = hi;                                                  \
                                                                                                   \
			while (i <= j) {                                                           \
				while (v[i] < pivot)                                               \
					i++;                                                       \
				while (v[j] > pivot)                                               \
					j--;                                                       \
				if (i <= j) {                                                      \
					type t = v[i];                                             \
                                                                                                   \
					v[i++] = v[j];                                             \
					v[j--] = t;                                                \
				}                                                                  \
			}                                                                          \
			if (want <= j)                                                             \
				hi = j;                                                            \
			else if (want >= i)                                                        \
				lo = i;                                                            \
			else                                                                       \
				break; /* between the two: equal to the pivot */                   \
		}                                                                                  \
		return v[want];                                                                    \
	}

KTH(tfd_kth_dbl, double)
KTH(tfd_kth_i64, int64_t)

int tfd_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Fewer keys than this are sorted by insertion. */
#define RADIX_MIN 64

void tfd_sort_u64(uint64_t *v, size_t n)
{
	tfd_sort_u64_with(v, n, NULL);
}

void tfd_sort_u64_with(uint64_t *v, size_t n, uint64_t *scratch)
{
	uint64_t *tmp, *from = v, *to, same = ~(uint64_t)0, first;
	size_t count[256], descents = 0;

	if (n < RADIX_MIN) {
		for (size_t i = 1; i < n; i++) {
			uint64_t x = v[i];
			size_t j = i;

			for (; j > 0 && v[j - 1] > x; j--)
				v[j] = v[j - 1];
			v[j] = x;
		}
		return;
	}
	/* the bytes every key shares need no pass; keys in order already
	 * (a stream's group, its calls met in order) none at all */
	first = v[0];
	for (size_t i = 1; i < n; i++) {
		same &= ~(v[i] ^ first);
		descents += v[i] < v[i - 1];
	}
	if (!descents)
		return;
	tmp = scratch ? scratch : xmalloc(n * sizeof(*tmp));
	to = tmp;
	for (unsigned shift = 0; shift < 64; shift += 8) {
		size_t at = 0;

		if (((same >> shift) & 0xff) == 0xff)
			continue;
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(from[i] >> shift) & 0xff]++;
		for (size_t b = 0; b < 256; b++) {
			size_t c = count[b];

			count[b] = at;
			at += c;
		}
		for (size_t i = 0; i < n; i++)
			to[count[(from[i] >> shift) & 0xff]++] = from[i];
		to = from;
		from = from == v ? tmp : v;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	if (!scratch)
		free(tmp);
}

void tfd_sort_i64(int64_t *v, size_t n)
{
	/* the sign bit flipped: the order of two's complement as unsigned */
	uint64_t *u = (uint64_t *)(void *)v;

	for (size_t i = 0; i < n; i++)
		u[i] ^= (uint64_t)1 << 63;
	tfd_sort_u64(u, n);
	for (size_t i = 0; i < n; i++)
		u[i] ^= (uint64_t)1 << 63;
}
