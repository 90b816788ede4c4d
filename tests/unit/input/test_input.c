/* test_input.c - white-box cases of the readers' internals (src/input/
 * input_impl.h): compiled with that folder's headers only. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "input_impl.h"
#include "t.h"

/* gzip data of data[0..n) in `members` members (concatenated, as the
 * readers accept them); *len its length. */
static uint8_t *gz_members(const uint8_t *data, size_t n, int members, size_t *len)
{
	size_t cap = n + n / 2 + 1024 * (size_t)members, at = 0;
	uint8_t *out = malloc(cap);

	for (int m = 0; m < members; m++) {
		size_t from = n * (size_t)m / (size_t)members,
		       to = n * (size_t)(m + 1) / (size_t)members;
		z_stream zs;

		memset(&zs, 0, sizeof(zs));
		deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
		zs.next_in = (Bytef *)(data + from);
		zs.avail_in = (uInt)(to - from);
		zs.next_out = out + at;
		zs.avail_out = (uInt)(cap - at);
		deflate(&zs, Z_FINISH);
		at = cap - zs.avail_out;
		deflateEnd(&zs);
	}
	*len = at;
	return out;
}

/* What a sink was given: its chunks' sizes and bytes; it stops after
 * `stop` chunks (0: never). */
struct gz_seen {
	size_t sizes[64], nchunks, stop;
	uint8_t *bytes;
	size_t len;
};

static bool gz_record(void *ctx, const uint8_t *p, size_t n)
{
	struct gz_seen *g = ctx;

	if (g->nchunks < 64)
		g->sizes[g->nchunks] = n;
	g->nchunks++;
	g->bytes = realloc(g->bytes, g->len + n);
	memcpy(g->bytes + g->len, p, n);
	g->len += n;
	return !g->stop || g->nchunks < g->stop;
}

/* Inflated on a thread of its own ahead of the sink, gzip data reads as it
 * does in line: the same chunks (sizes and bytes) to the sink, the same
 * status and error line, whole, with the sink stopping early, corrupt in
 * its middle, truncated and over the inflate limit. */
static void gunzip_ahead_as_in_line(struct t *t)
{
	size_t n = (size_t)3 << 20, len = 0;
	uint8_t *data = malloc(n), *gz;
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		data[i] = "0123456789abcdef"[x & 15]; /* about 2:1: more than 768 KB */
	}
	gz = gz_members(data, n, 3, &len);
	T_TRUE(len > ((size_t)768 << 10)); /* inflated ahead (AHEAD_MIN) */
	for (int c = 0; c < 5; c++) {
		struct gz_seen a = {0}, b = {0};
		struct tfd_err ea = {0}, eb = {0};
		size_t glen = c == 3 ? len - 100 : len, limit = c == 4 ? (size_t)2 << 20 : SIZE_MAX;
		uint8_t was = gz[len / 2];
		enum tfd_status sa, sb;

		if (c == 2)
			gz[len / 2] ^= 0x55;
		a.stop = b.stop = c == 1 ? 2 : 0;
		sa = tfd_gunzip(gz, glen, false, limit, gz_record, &a, &ea);
		sb = tfd_gunzip_ahead(gz, glen, false, limit, true, gz_record, &b, &eb);
		gz[len / 2] = was;
		T_EQ_I64((int64_t)sb, (int64_t)sa);
		T_EQ_STR(eb.msg, ea.msg);
		T_EQ_I64((int64_t)b.nchunks, (int64_t)a.nchunks);
		T_TRUE(a.len == b.len && (!a.len || memcmp(a.bytes, b.bytes, a.len) == 0));
		T_TRUE(memcmp(a.sizes, b.sizes, sizeof(a.sizes)) == 0);
		T_TRUE(c == 0	? sa == TFD_OK && a.len == n && memcmp(a.bytes, data, n) == 0
		       : c == 1 ? sa == TFD_OK && a.nchunks == 2
				: sa != TFD_OK);
		free(a.bytes);
		free(b.bytes);
	}
	free(gz);
	free(data);
}

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
    T(shrinking_map_is_guarded), T(fn_steps_is_a_set),	    T(gunzip_ahead_as_in_line),
    T(sets_fit_as_one),		 T(fast_decimal_is_strtod), {0},
};
