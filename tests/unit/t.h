/* t.h - a tiny unit-test runner (no fork, so sanitizers and valgrind see
 * everything). A case is `static void name(struct t *t)`; each suite file
 * exports a {0}-terminated `const struct t_case <suite>_cases[]`. */
#ifndef TFD_T_H
#define TFD_T_H

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

struct t {
	jmp_buf jb;
	const char *name;
	int failed;
};

struct t_case {
	const char *name;
	void (*fn)(struct t *t);
};

#define T(fn)                                                                                      \
	{                                                                                          \
#fn, fn                                                                            \
	}

#define T_FAILF(...)                                                                               \
	do {                                                                                       \
		fprintf(stderr, "FAIL %s:%d %s: ", __FILE__, __LINE__, t->name);                   \
		fprintf(stderr, __VA_ARGS__);                                                      \
		fputc('\n', stderr);                                                               \
		t->failed = 1;                                                                     \
		longjmp(t->jb, 1);                                                                 \
	} while (0)

#define T_TRUE(c)                                                                                  \
	do {                                                                                       \
		if (!(c))                                                                          \
			T_FAILF("expected %s", #c);                                                \
	} while (0)

#define T_EQ_I64(a, b)                                                                             \
	do {                                                                                       \
		int64_t a_ = (int64_t)(a), b_ = (int64_t)(b);                                      \
		if (a_ != b_)                                                                      \
			T_FAILF("%s: expected %" PRId64 ", got %" PRId64, #a, b_, a_);             \
	} while (0)

#define T_EQ_U64(a, b)                                                                             \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		if (a_ != b_)                                                                      \
			T_FAILF("%s: expected %" PRIu64 ", got %" PRIu64, #a, b_, a_);             \
	} while (0)

#define T_EQ_DBL(a, b, eps)                                                                        \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(fabs(a_ - b_) <= (eps)))                                                     \
			T_FAILF("%s: expected %.9g, got %.9g", #a, b_, a_);                        \
	} while (0)

#define T_EQ_STR(a, b)                                                                             \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (!a_ || !b_ || strcmp(a_, b_) != 0)                                             \
			T_FAILF("%s: expected \"%s\", got \"%s\"", #a, b_ ? b_ : "(null)",         \
				a_ ? a_ : "(null)");                                               \
	} while (0)

#define T_OK(st, errp)                                                                             \
	do {                                                                                       \
		if ((st) != TFD_OK)                                                                \
			T_FAILF("%s failed: %s", #st, (errp)->msg);                                \
	} while (0)

#endif
