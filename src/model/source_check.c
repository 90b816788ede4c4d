/* source_check.c - a host's iterator, Produce and Consume events read
 * again from its file (struct tfd_source) against the events the read
 * packed (TFDOCTOR_SOURCE_CHECK=1; docs/performance.md, "Calls held in
 * time order").
 *
 * Each event the source gives is compared with its thread's next packed
 * event of those kinds, in order: kind, times, signature (interned in the
 * same capture: the same name, parameters and parent_id give the same
 * pointer), flags and value. When they all agree, the pass before a
 * stream (tfd_graph_prepass_from()) runs over the source and is compared
 * with the same pass over the packed events. One line on stderr says
 * whether they agree, where the source was read (kept past the read, at
 * the analysis's start, or at the end of the read) and how long the walk
 * and the pass took. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tfd/capture.h"
#include "tfd/err.h"
#include "tfd/graph.h"

/* What the check found on a host. */
struct src_tally {
	size_t events, differ, malformed, missing, extra;
	size_t first_thread, first_at; /* the first that differs */
};

/* The thread's next packed event of those kinds (or left in the file),
 * false: none left. */
static bool packed_next(struct tfd_ev_mcursor *c, struct tfd_event *e)
{
	while (tfd_evm_next(c, e))
		if (tfd_graph_kind(e->kind))
			return true;
	return false;
}

static bool same_event(const struct tfd_event *a, const struct tfd_event *b)
{
	return a->kind == b->kind && a->start_ns == b->start_ns && a->dur_ns == b->dur_ns &&
	       a->sig == b->sig && a->flags == b->flags &&
	       (!(a->flags & (TFD_EVF_ID | TFD_EVF_ELEMENT)) || a->id == b->id);
}

/* The seconds since t0. */
static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Every event the source gives against its thread's packed ones, in
 * order; the walk's time. */
static double compare_events(const struct tfd_host *h, struct tfd_source *s, struct src_tally *t)
{
	size_t nth = h->nthreads;
	struct tfd_ev_mcursor *cur = xcalloc(nth + 1, sizeof(*cur));
	size_t *counted = xcalloc(nth + 1, sizeof(*counted));
	struct tfd_event_source src;
	struct timespec t0;
	struct tfd_event e, pk;
	uint32_t th;
	double took;

	for (size_t i = 0; i < nth; i++)
		tfd_evm_begin(&cur[i], h, i);
	s->open(s, h, &src);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (src.next(src.ctx, &th, &e)) {
		t->events++;
		if (th >= nth || !packed_next(&cur[th], &pk)) {
			t->missing++;
			continue;
		}
		if (!same_event(&e, &pk) && !t->differ++) {
			t->first_thread = th;
			t->first_at = counted[th];
		}
		counted[th]++;
	}
	took = since(&t0);
	t->malformed = s->close(s, &src);
	for (size_t i = 0; i < nth; i++) {
		while (packed_next(&cur[i], &pk))
			t->extra++;
		tfd_evm_end(&cur[i]);
	}
	free(cur);
	free(counted);
	return took;
}

/* What the bits said (struct tfd_thread.kbits): threads merged in file
 * order, events they took from the file, threads whose order was lost
 * (sorted), threads where they were wrong. */
struct bits_tally {
	size_t threads, from_file, lost, wrong, left;
};

/* Each thread's packed events again, those of the kinds a source reads
 * taken from its cursor over the thread's lines where the thread's bits
 * say: a read that left them in the file would merge them so. */
static void compare_bits(const struct tfd_host *h, struct tfd_source *s, struct bits_tally *b)
{
	for (size_t t = 0; t < h->nthreads; t++) {
		const struct tfd_thread *th = &h->threads[t];
		struct tfd_ev_cursor c;
		struct tfd_event pk, fe;
		struct tfd_event_source src;
		uint32_t ft;
		size_t i = 0;
		bool bad = false;

		if (th->kbits_lost) {
			b->lost++;
			continue;
		}
		if (!th->nevents)
			continue;
		if (th->nfile) { /* (left there by the read: nothing to merge) */
			b->left++;
			continue;
		}
		if (!th->kbits || th->nkbits != th->nevents) {
			b->wrong++;
			continue;
		}
		s->open_thread(s, h, t, &src);
		for (tfd_ev_begin(&c, h, th); !bad && tfd_ev_next(&c, &pk); i++) {
			bool on = tfd_kbit(th, i);

			if (on != tfd_graph_kind(pk.kind))
				bad = true;
			else if (on && !(src.next(src.ctx, &ft, &fe) && same_event(&fe, &pk)))
				bad = true;
			else
				b->from_file += on;
		}
		/* (nothing of the thread's left in the file) */
		bad |= i != th->nevents || src.next(src.ctx, &ft, &fe);
		bad |= s->close(s, &src) != 0;
		b->wrong += bad;
		b->threads += !bad;
	}
}

/* The pass before a stream (tfd_graph_prepass()) over the source's events
 * against the same over the packed ones: what differs, or NULL; *took,
 * the source's pass's time. */
static const char *compare_prepass(const struct tfd_host *h, struct tfd_source *s, double *took)
{
	struct host_ctx a, b;
	struct tfd_prepass pa, pb;
	struct tfd_err err = {0};
	struct tfd_event_source src;
	struct timespec t0;
	const char *bad = NULL;
	enum tfd_status sa, sb;

	s->open(s, h, &src);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	sa = tfd_graph_prepass_from(&a, h, &src, &pa, &err);
	*took = since(&t0);
	(void)s->close(s, &src);
	sb = tfd_graph_prepass(&b, h, &pb, &err);
	if (sa != sb)
		bad = "one failed";
	else if (!sa)
		bad = tfd_prepass_differs(&a, &pa, &b, &pb);
	tfd_prepass_free(&pa);
	tfd_prepass_free(&pb);
	tfd_graph_release(&a);
	tfd_graph_release(&b);
	return bad;
}

void tfd_source_check(const struct tfd_host *h, struct tfd_source *s, bool kept)
{
	struct src_tally t;
	struct bits_tally bt = {0};
	double walk, pass = 0;
	const char *prepass = NULL, *where = kept ? "kept past the read" : "at the read's end";
	char left[96] = "";
	bool differ;

	memset(&t, 0, sizeof(t));
	walk = compare_events(h, s, &t);
	differ = t.differ || t.malformed || t.missing || t.extra;
	if (!differ)
		prepass = compare_prepass(h, s, &pass);
	differ |= prepass != NULL;
	if (!differ)
		compare_bits(h, s, &bt);
	if (bt.left)
		snprintf(left, sizeof(left), "; %zu threads left in the file by the read", bt.left);
	if (bt.wrong)
		fprintf(stderr,
			"tfdoctor: source: %s: differs: the bits of %zu threads do not merge the "
			"file's events back into the packed order\n",
			h->name ? h->name : "?", bt.wrong);
	else if (differ)
		fprintf(stderr,
			"tfdoctor: source: %s: from the file %s: differs: %zu of %zu events "
			"(first: thread %zu, its event %zu), %zu malformed, %zu not packed, %zu "
			"packed only; the pass before from the file: %s\n",
			h->name ? h->name : "?", where, t.differ, t.events, t.first_thread,
			t.first_at, t.malformed, t.missing, t.extra,
			prepass ? prepass : "not compared");
	else
		fprintf(
		    stderr,
		    "tfdoctor: source: %s: %zu iterator, Produce and Consume events decoded "
		    "again from the file %s as packed, in %.3f s; the pass before from the "
		    "file as from the packed events, in %.3f s; by the bits, %zu events from the "
		    "file in the packed order on %zu threads (%zu sorted)%s\n",
		    h->name ? h->name : "?", t.events, where, walk, pass, bt.from_file, bt.threads,
		    bt.lost, left);
}
