/* test_input.c - white-box cases of the readers' internals (src/input/
 * input_impl.h): compiled with that folder's headers only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "input_impl.h"
#include "t.h"

/* The dataset-function step ids are a set of bare keys: every id added is
 * found (0, which marks an empty slot, too; ids that collide; across
 * growth), no other is, and the remembered last lookup follows the set. */
static void fn_steps_is_a_set(struct t *t)
{
	struct fn_steps f;
	struct imap ref = {0};
	uint64_t x = 88172645463325252ull;
	size_t wrong = 0;

	memset(&f, 0, sizeof(f));
	T_TRUE(!fn_steps_has(&f, 0) && !fn_steps_has(&f, 7));
	for (int i = 0; i < 20000; i++) {
		uint64_t id;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* small ids collide in the low bits; every 97th is 0 */
		id = i % 97 == 0 ? 0 : i % 3 ? x : x & 0xffff;
		fn_steps_add(&f, id);
		imap_put(&ref, id, 0);
		if (i % 2 == 0)
			fn_steps_add(&f, id); /* again: still one entry */
	}
	for (int i = 0; i < 60000; i++) {
		uint64_t id;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		id = i % 2 ? x & 0x1ffff : x;
		wrong += fn_steps_has(&f, id) != imap_get(&ref, id, NULL);
		wrong += fn_steps_find(&f, id) != imap_get(&ref, id, NULL);
	}
	for (size_t j = 0; j < ref.cap; j++)
		if (ref.s[j].val1)
			wrong += !fn_steps_has(&f, ref.s[j].key);
	T_EQ_I64((int64_t)wrong, 0);
	T_EQ_I64((int64_t)(f.n + f.has_zero), (int64_t)ref.n);
	T_TRUE(fn_steps_has(&f, 0));
	{
		/* fitted to 8/7 of its ids (not a power of two), it holds
		 * the same ids */
		size_t cap = f.cap;

		fn_steps_fit(&f);
		T_TRUE(f.cap < cap && f.cap == f.n + f.n / 7 + 1);
		for (size_t j = 0; j < ref.cap; j++)
			if (ref.s[j].val1)
				wrong += !fn_steps_has(&f, ref.s[j].key);
		for (int i = 0; i < 60000; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			wrong += fn_steps_has(&f, x) != imap_get(&ref, x, NULL);
		}
		T_EQ_I64((int64_t)wrong, 0);
		T_EQ_I64((int64_t)(f.n + f.has_zero), (int64_t)ref.n);
	}
	{
		/* the same ids added in another order (backwards, into a
		 * table sized at once) fit to the same layout: the slots are
		 * the ids' codes */
		struct fn_steps g;

		memset(&g, 0, sizeof(g));
		fn_steps_reserve(&g, ref.n);
		for (size_t j = ref.cap; j-- > 0;)
			if (ref.s[j].val1)
				fn_steps_add(&g, ref.s[j].key);
		fn_steps_fit(&g);
		T_TRUE(g.cap == f.cap && g.n == f.n &&
		       memcmp(g.k, f.k, f.cap * sizeof(uint64_t)) == 0);
		fn_steps_free(&g);
	}
	/* added later (the pre-pass's way), looked up now and then: each
	 * lookup sees every id added before it */
	fn_steps_free(&f);
	wrong = 0;
	for (size_t j = 0, n = 0; j < ref.cap; j++) {
		if (!ref.s[j].val1)
			continue;
		fn_steps_add_later(&f, ref.s[j].key);
		if (++n % 1000 == 37)
			wrong += !fn_steps_has(&f, ref.s[j].key);
	}
	for (size_t j = 0; j < ref.cap; j++)
		if (ref.s[j].val1)
			wrong += !fn_steps_has(&f, ref.s[j].key);
	T_EQ_I64((int64_t)wrong, 0);
	T_EQ_I64((int64_t)(f.n + f.has_zero), (int64_t)ref.n);
	imap_free(&ref);
	fn_steps_free(&f);
	T_TRUE(!fn_steps_has(&f, 0) && f.k == NULL);
}

/* The pre-pass workers' sets fitted into one table, on one thread or in
 * ranges on three: the table of their union fitted as one set (the same
 * layout, so the same codes), whether they share ids or not, and with the
 * id 0 in any of them. */
static void sets_fit_as_one(struct t *t)
{
	for (int round = 0; round < 4; round++) {
		int overlap = round & 1, threads = round & 2 ? 3 : 1;
		struct fn_steps sets[3], one, out;
		uint64_t x = 2463534242ull;

		memset(sets, 0, sizeof(sets));
		memset(&one, 0, sizeof(one));
		/* more ids than one thread fits: ranges on three */
		for (int i = 0; i < 100000; i++) {
			uint64_t id;

			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			id = i % 1000 == 0 ? 0 : x;
			fn_steps_add(&sets[i % 3], id);
			/* the same id met by a second worker */
			if (overlap && i % 5 == 0)
				fn_steps_add(&sets[(i + 1) % 3], id);
			fn_steps_add(&one, id);
		}
		fn_steps_fit(&one);
		tfd_fn_steps_fit_sets(&out, sets, 3, (size_t)threads);
		T_TRUE(out.n == one.n && out.cap == one.cap && out.has_zero == one.has_zero);
		T_TRUE(out.cap && memcmp(out.k, one.k, out.cap * sizeof(uint64_t)) == 0);
		for (int k = 0; k < 3; k++)
			T_TRUE(sets[k].k == NULL && sets[k].n == 0);
		fn_steps_free(&one);
		fn_steps_free(&out);
	}
}

/* The fast decimal path gives strtod()'s double bit for bit, or leaves
 * the string to strtod(): millions of random numbers in the forms trace
 * JSON writes (integers, microseconds with 0-9 decimals, negatives, leading
 * zeros, 15 digits and more) and strings that are not that form. */
static void fast_decimal_is_strtod(struct t *t)
{
	static const char *const odd[] = {"",
					  ".",
					  "-",
					  "-.",
					  "5.",
					  ".5",
					  "-0",
					  "0.000",
					  "1e3",
					  " 1",
					  "1 ",
					  "1.2.3",
					  "0x10",
					  "inf",
					  "nan",
					  "+1",
					  "00012.50",
					  "123456789012345",
					  "1234567890123456",
					  "-.0"};
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t wrong = 0, fast = 0;
	char buf[64];

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]) + 2000000; i++) {
		const char *sv = buf;
		double a = 0, b;
		char *end;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (i < sizeof(odd) / sizeof(odd[0])) {
			sv = odd[i];
		} else {
			int nd = 1 + (int)(x % 17), dot = (int)((x >> 8) % (unsigned)(nd + 2)) - 1;
			size_t k = 0;
			uint64_t y = x;

			if ((x >> 20) & 1)
				buf[k++] = '-';
			for (int d = 0; d < nd; d++) {
				if (d == dot)
					buf[k++] = '.';
				y = y * 6364136223846793005ull + 1442695040888963407ull;
				buf[k++] = (char)('0' + (y >> 60) % 10);
			}
			buf[k] = '\0';
		}
		b = strtod(sv, &end);
		if (tfd_fast_decimal(sv, &a)) {
			fast++;
			wrong += memcmp(&a, &b, sizeof(a)) != 0 || *end != '\0';
		}
	}
	T_EQ_I64((int64_t)wrong, 0);
	T_TRUE(fast > 1000000); /* most of them took the fast path */
}

/* A mapped capture that shrinks while it is read: the pages past its new
 * end read as zeros instead of killing the process with SIGBUS, and the
 * guard says the file shrank (the loader then names it); after the guard
 * is removed the slot is free again. */
static void shrinking_map_is_guarded(struct t *t)
{
	char path[] = "/tmp/tfd-unit-shrinkXXXXXX";
	int fd = mkstemp(path);
	size_t len = 1 << 16;
	uint8_t *buf = malloc(len), *m;
	volatile uint8_t v;
	int slot;

	T_TRUE(fd >= 0 && buf);
	memset(buf, 0xab, len);
	T_TRUE(write(fd, buf, len) == (ssize_t)len);
	m = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	T_TRUE(m != MAP_FAILED);
	slot = tfd_mapguard_add(m, len);
	T_TRUE(slot >= 0);
	T_EQ_U64(m[len - 1], 0xab);
	T_TRUE(ftruncate(fd, 4096) == 0);
	T_EQ_U64(m[100], 0xab); /* still in the file */
	v = m[len - 1];		/* past its new end: SIGBUS, guarded */
	T_EQ_U64(v, 0);
	T_TRUE(tfd_mapguard_shrank(slot));
	T_TRUE(tfd_mapguard_remove(slot));
	T_TRUE(!tfd_mapguard_shrank(slot));
	munmap(m, len);
	close(fd);
	unlink(path);
	free(buf);
}

const struct t_case input_cases[] = {
    T(shrinking_map_is_guarded),
    T(fn_steps_is_a_set),
    T(sets_fit_as_one),
    T(fast_decimal_is_strtod),
    {0},
};
