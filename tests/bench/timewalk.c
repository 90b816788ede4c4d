/* timewalk - what reading a host plane in time order costs: the events of
 * an XSpace file's "/host:CPU" plane walked line after line (as tfdoctor
 * reads them), or merged by start time across its lines (a cursor per line
 * in a heap: how a reader that folds calls as they happen would read
 * them). Each event's metadata id, offset and duration are decoded and its
 * stats' framing walked, nothing kept. Prints the events, the lines, how
 * many events started before the one before them on their line, and a
 * checksum that is the same both ways.
 *
 *   timewalk lines|merged FILE
 *
 * docs/performance.md, "Calls held in time order". */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const uint8_t *varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (int s = 0; p < end && s < 64; s += 7) {
		uint8_t c = *p++;

		r |= (uint64_t)(c & 0x7f) << s;
		if (c < 0x80) {
			*v = r;
			return p;
		}
	}
	return NULL;
}

/* The field at p: its number, wire type, value (a varint's, a length's)
 * and, for a length-delimited one, its bytes [*s, *s + *v); NULL at a
 * malformed one. */
static const uint8_t *field(const uint8_t *p, const uint8_t *end, unsigned *f, unsigned *wt,
			    uint64_t *v, const uint8_t **s)
{
	uint64_t k;

	if (!(p = varint(p, end, &k)))
		return NULL;
	*f = (unsigned)(k >> 3);
	*wt = (unsigned)(k & 7);
	switch (*wt) {
	case 0:
		return varint(p, end, v);
	case 1:
		return end - p >= 8 ? p + 8 : NULL;
	case 5:
		return end - p >= 4 ? p + 4 : NULL;
	case 2:
		if (!(p = varint(p, end, v)) || *v > (uint64_t)(end - p))
			return NULL;
		*s = p;
		return p + *v;
	}
	return NULL;
}

/* One line's events: the next one's bytes and start (ps since the line's
 * timestamp... plus the timestamp, in ps). */
struct cursor {
	const uint8_t *p, *end;
	int64_t ts_ps;
	const uint8_t *ev, *ev_end; /* the next event, NULL at the end */
	int64_t start_ps;
};

static uint64_t nevents, nbackward, sum;

static void cursor_next(struct cursor *c)
{
	unsigned f, wt;
	uint64_t v;
	const uint8_t *s = NULL, *q;

	c->ev = NULL;
	while (c->p && c->p < c->end) {
		q = field(c->p, c->end, &f, &wt, &v, &s);
		if (!q) {
			fprintf(stderr, "timewalk: malformed line\n");
			exit(1);
		}
		c->p = q;
		if (f == 4 && wt == 2) {
			const uint8_t *e = s, *ee = s + v;
			uint64_t off = 0;

			/* the offset (field 2), as TensorFlow writes it, near the start */
			while (e < ee) {
				const uint8_t *s2 = NULL;

				if (!(e = field(e, ee, &f, &wt, &v, &s2)))
					break;
				if (f == 2 && wt == 0) {
					off = v;
					break;
				}
			}
			c->ev = s;
			c->ev_end = ee;
			c->start_ps = c->ts_ps + (int64_t)off;
			return;
		}
	}
}

/* An event's fields and its stats' framing. */
static void walk_event(const uint8_t *p, const uint8_t *end)
{
	unsigned f, wt;
	uint64_t v, mid = 0, off = 0, dur = 0;
	const uint8_t *s = NULL;

	while (p < end) {
		if (!(p = field(p, end, &f, &wt, &v, &s))) {
			fprintf(stderr, "timewalk: malformed event\n");
			exit(1);
		}
		if (wt == 0 && f == 1)
			mid = v;
		else if (wt == 0 && f == 2)
			off = v;
		else if (wt == 0 && f == 3)
			dur = v;
		else if (wt == 2 && f == 4) {
			const uint8_t *q = s, *qe = s + v, *s2 = NULL;
			uint64_t v2;

			while (q && q < qe)
				if ((q = field(q, qe, &f, &wt, &v2, &s2)) && wt == 0)
					sum += v2;
		}
	}
	nevents++;
	sum += mid * 31 + off / 1000 + dur;
}

/* The host plane's lines: cursors on the lines with events. */
static size_t host_lines(const uint8_t *m, size_t len, struct cursor **out)
{
	const uint8_t *p = m, *end = m + len, *s = NULL;
	unsigned f, wt;
	uint64_t v;
	size_t n = 0, cap = 16;
	struct cursor *cs = malloc(cap * sizeof(*cs));

	if (!cs) {
		fprintf(stderr, "timewalk: out of memory\n");
		exit(1);
	}

	while (p && p < end) {
		const uint8_t *pl, *pe, *name = NULL;
		uint64_t nlen = 0;
		bool host;

		if (!(p = field(p, end, &f, &wt, &v, &s)))
			break;
		if (f != 1 || wt != 2)
			continue;
		pl = s;
		pe = s + v;
		for (const uint8_t *q = pl; q && q < pe;)
			if ((q = field(q, pe, &f, &wt, &v, &s)) && f == 2 && wt == 2) {
				name = s;
				nlen = v;
			}
		host = name && nlen == 9 && memcmp(name, "/host:CPU", 9) == 0;
		for (const uint8_t *q = pl; host && q && q < pe;) {
			if (!(q = field(q, pe, &f, &wt, &v, &s)) || f != 3 || wt != 2)
				continue;
			struct cursor c = {s, s + v, 0, NULL, NULL, 0};
			const uint8_t *l = s, *le = s + v, *s3 = NULL;
			uint64_t v3;

			/* the line's timestamp_ns (field 3) */
			while (l && l < le)
				if ((l = field(l, le, &f, &wt, &v3, &s3)) && f == 3 && wt == 0)
					c.ts_ps = (int64_t)v3 * 1000;
			if (n == cap) {
				struct cursor *w = realloc(cs, 2 * cap * sizeof(*cs));

				if (!w) {
					fprintf(stderr, "timewalk: out of memory\n");
					exit(1);
				}
				cs = w;
				cap *= 2;
			}
			cs[n++] = c;
		}
	}
	*out = cs;
	return n;
}

/* The heap of cursors by next start (then line order). */
static bool before(const struct cursor *h, const size_t *x, size_t a, size_t b)
{
	return h[x[a]].start_ps < h[x[b]].start_ps ||
	       (h[x[a]].start_ps == h[x[b]].start_ps && x[a] < x[b]);
}

static void sift_down(const struct cursor *h, size_t *x, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i, t;

		if (l < n && before(h, x, l, m))
			m = l;
		if (l + 1 < n && before(h, x, l + 1, m))
			m = l + 1;
		if (m == i)
			return;
		t = x[i];
		x[i] = x[m];
		x[m] = t;
		i = m;
	}
}

int main(int argc, char **argv)
{
	struct stat st;
	struct cursor *cs;
	size_t n, *heap, nh = 0;
	bool merged;
	void *m;
	int fd;

	if (argc != 3 || (strcmp(argv[1], "lines") && strcmp(argv[1], "merged"))) {
		fprintf(stderr, "usage: timewalk lines|merged FILE\n");
		return 2;
	}
	merged = strcmp(argv[1], "merged") == 0;
	if ((fd = open(argv[2], O_RDONLY)) < 0 || fstat(fd, &st) < 0) {
		perror(argv[2]);
		return 1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		perror(argv[2]);
		return 1;
	}
	n = host_lines(m, (size_t)st.st_size, &cs);
	heap = malloc((n + 1) * sizeof(*heap));
	if (!heap) {
		fprintf(stderr, "timewalk: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		int64_t prev = INT64_MIN;

		cursor_next(&cs[i]);
		if (merged) {
			if (cs[i].ev)
				heap[nh++] = i;
			continue;
		}
		for (; cs[i].ev; cursor_next(&cs[i])) {
			nbackward += cs[i].start_ps < prev;
			prev = cs[i].start_ps;
			walk_event(cs[i].ev, cs[i].ev_end);
		}
	}
	for (size_t i = nh; i-- > 0;)
		sift_down(cs, heap, nh, i);
	while (nh) {
		struct cursor *c = &cs[heap[0]];
		/* the top line goes on while it stays first: its events run
		 * on until the next line's next start (the heap is not touched
		 * per event: threads' events come in runs) */
		size_t r = nh > 2 && before(cs, heap, 2, 1) ? 2 : 1;
		int64_t until = nh > 1 ? cs[heap[r]].start_ps : INT64_MAX;
		size_t rival = nh > 1 ? heap[r] : SIZE_MAX;

		for (;;) {
			int64_t prev = c->start_ps;

			walk_event(c->ev, c->ev_end);
			cursor_next(c);
			if (!c->ev)
				break;
			nbackward += c->start_ps < prev;
			if (c->start_ps > until || (c->start_ps == until && heap[0] > rival))
				break;
		}
		if (!c->ev)
			heap[0] = heap[--nh];
		sift_down(cs, heap, nh, 0);
	}
	printf("%llu events, %zu lines, %llu backward, checksum %llu\n",
	       (unsigned long long)nevents, n, (unsigned long long)nbackward,
	       (unsigned long long)sum);
	free(heap);
	free(cs);
	munmap(m, (size_t)st.st_size);
	close(fd);
	return 0;
}
