/* vec.h - a typed growable array on the heap.
 *
 *   struct vec_int { int *v; size_t n, cap; } xs = {0};
 *   vec_push(&xs, 3);
 *   vec_free(&xs);
 *
 * The owner frees it with vec_free(). Growth aborts on OOM.
 */
#ifndef TFD_VEC_H
#define TFD_VEC_H

#include <stdlib.h>

#include "tfd/err.h"

#define VEC(type)                                                                                  \
	struct {                                                                                   \
		type *v;                                                                           \
		size_t n, cap;                                                                     \
	}

#define vec_reserve(vec, want)                                                                     \
	do {                                                                                       \
		if ((want) > (vec)->cap) {                                                         \
			size_t nc_ = (vec)->cap ? (vec)->cap * 2 : 8;                              \
			while (nc_ < (want))                                                       \
				nc_ *= 2;                                                          \
			(vec)->v = xrealloc((vec)->v, nc_ * sizeof(*(vec)->v));                    \
			(vec)->cap = nc_;                                                          \
		}                                                                                  \
	} while (0)

/* Room for exactly `want` elements when the size is known up front (no
 * doubling slack on tables of millions). */
#define vec_reserve_exact(vec, want)                                                               \
	do {                                                                                       \
		if ((want) > (vec)->cap) {                                                         \
			(vec)->v = xrealloc((vec)->v, (want) * sizeof(*(vec)->v));                 \
			(vec)->cap = (want);                                                       \
		}                                                                                  \
	} while (0)

#define vec_push(vec, x)                                                                           \
	do {                                                                                       \
		vec_reserve((vec), (vec)->n + 1);                                                  \
		(vec)->v[(vec)->n++] = (x);                                                        \
	} while (0)

#define vec_free(vec)                                                                              \
	do {                                                                                       \
		free((vec)->v);                                                                    \
		(vec)->v = NULL;                                                                   \
		(vec)->n = (vec)->cap = 0;                                                         \
	} while (0)

#endif
