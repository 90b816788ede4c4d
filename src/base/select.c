/* select.c - the k-th smallest of an array, and the order qsort sorts
 * int64_t values in (select.h). */
#include <stddef.h>

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
