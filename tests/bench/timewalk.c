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

#include "wire.h" /* src/input: the readers' own field walk */

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
	struct pb_field f;

	c->ev = NULL;
	while (c->p && c->p < c->end) {
		if (!tfd_pb_next(&c->p, c->end, &f)) {
			fprintf(stderr, "timewalk: malformed line\n");
			exit(1);
		}
		if (f.field == 4 && f.wt == 2) {
			const uint8_t *e = f.s.p, *ee = f.s.p + f.s.len;
			struct pb_field g;
			uint64_t off = 0;

			/* the offset (field 2), as TensorFlow writes it, near the start */
			while (e < ee && tfd_pb_next(&e, ee, &g))
				if (g.field == 2 && g.wt == 0) {
					off = g.v;
					break;
				}
			c->ev = f.s.p;
			c->ev_end = ee;
			c->start_ps = c->ts_ps + (int64_t)off;
			return;
		}
	}
}

/* An event's fields and its stats' framing. */
static void walk_event(const uint8_t *p, const uint8_t *end)
{
	struct pb_field f, g;
	uint64_t mid = 0, off = 0, dur = 0;

	while (p < end) {
		if (!tfd_pb_next(&p, end, &f)) {
			fprintf(stderr, "timewalk: malformed event\n");
			exit(1);
		}
		if (f.wt == 0 && f.field == 1) {
			mid = f.v;
		} else if (f.wt == 0 && f.field == 2) {
			off = f.v;
		} else if (f.wt == 0 && f.field == 3) {
			dur = f.v;
		} else if (f.wt == 2 && f.field == 4) {
			const uint8_t *q = f.s.p, *qe = f.s.p + f.s.len;

			while (q < qe && tfd_pb_next(&q, qe, &g))
				if (g.wt == 0)
					sum += g.v;
		}
	}
	nevents++;
	sum += mid * 31 + off / 1000 + dur;
}

/* The host plane's lines: cursors on the lines with events. */
static size_t host_lines(const uint8_t *m, size_t len, struct cursor **out)
{
	const uint8_t *p = m, *end = m + len;
	struct pb_field f, g;
	size_t n = 0, cap = 16;
	struct cursor *cs = malloc(cap * sizeof(*cs));

	if (!cs) {
		fprintf(stderr, "timewalk: out of memory\n");
		exit(1);
	}
	while (p < end && tfd_pb_next(&p, end, &f)) {
		const uint8_t *q, *pe = f.s.p + f.s.len;
		struct span name = {NULL, 0};

		if (f.field != 1 || f.wt != 2)
			continue;
		for (q = f.s.p; q < pe && tfd_pb_next(&q, pe, &g);)
			if (g.field == 2 && g.wt == 2)
				name = g.s;
		if (!(name.len == 9 && memcmp(name.p, "/host:CPU", 9) == 0))
			continue;
		for (q = f.s.p; q < pe && tfd_pb_next(&q, pe, &g);) {
			struct cursor c = {g.s.p, g.s.p + g.s.len, 0, NULL, NULL, 0};
			const uint8_t *l = c.p;
			struct pb_field h;

			if (g.field != 3 || g.wt != 2)
				continue;
			/* the line's timestamp_ns (field 3) */
			while (l < c.end && tfd_pb_next(&l, c.end, &h))
				if (h.field == 3 && h.wt == 0)
					c.ts_ps = (int64_t)h.v * 1000;
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
