/* select.h - the k-th smallest of an array without sorting it; 64-bit
 * keys sorted.
 *
 * A percentile or a median of tens of thousands of steps or calls: Hoare's
 * selection, linear on average, reorders the array about the k-th element
 * (what is before it is no larger, what is after no smaller). k < n; the
 * values hold no NaN.
 */
#ifndef TFD_SELECT_H
#define TFD_SELECT_H

#include <stddef.h>
#include <stdint.h>

/* The k-th smallest (from 0) of v[0..n), k < n, v reordered about it;
 * nothing allocated, no error. */
double tfd_kth_dbl(double *v, size_t n, size_t k);
int64_t tfd_kth_i64(int64_t *v, size_t n, size_t k);

/* The order of two int64_t values, for qsort when the whole array is
 * wanted in order: negative, 0 or positive. */
int tfd_cmp_i64(const void *a, const void *b);

/* v[0..n) in ascending order, by their bytes (a pass per byte not every
 * key shares; insertion below 64 keys): tens of thousands of ids or times
 * in a fraction of qsort's time. Allocates n keys (exits on no memory);
 * no error. */
void tfd_sort_u64(uint64_t *v, size_t n);
/* The same with n keys' room of scratch the caller gives (the sort
 * makes none). */
void tfd_sort_u64_with(uint64_t *v, size_t n, uint64_t *scratch);
void tfd_sort_i64(int64_t *v, size_t n);

#endif
