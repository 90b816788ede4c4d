/* evmerge.c - a thread's events in order, those a read left in the file
 * taken from its host's source where the thread's bits say (struct
 * tfd_ev_mcursor; docs/performance.md, "Events left in the file").
 *
 * A read that leaves the iterator, Produce and Consume events of a mapped
 * host plane in the file (TFDOCTOR_SOURCE_LEAVE=1) notes a bit per event
 * of each thread: set, the event is the next one of the thread's cursor
 * over its lines in the file; clear, the next packed one. The passes
 * that read a thread's events read them through this cursor, in the
 * order the read met them. */
#include "tfd/capture.h"

static void begin(struct tfd_ev_mcursor *c, const struct tfd_host *h, size_t t, bool times)
{
	const struct tfd_thread *th = &h->threads[t];

	tfd_ev_begin(&c->pk, h, th);
	c->th = th;
	c->i = 0;
	c->failed = false;
	c->src = th->nfile && h->source ? h->source : NULL;
	if (c->src)
		(times ? c->src->open_times : c->src->open_thread)(c->src, h, t, &c->fs);
	else if (th->nfile)
		c->failed = true; /* (no source: a reader's bug) */
}

void tfd_evm_begin(struct tfd_ev_mcursor *c, const struct tfd_host *h, size_t t)
{
	begin(c, h, t, false);
}

void tfd_evm_begin_times(struct tfd_ev_mcursor *c, const struct tfd_host *h, size_t t)
{
	begin(c, h, t, true);
}

bool tfd_evm_next_mixed(struct tfd_ev_mcursor *c, struct tfd_event *e)
{
	uint32_t t;

	if (c->i >= c->th->nkbits || c->failed)
		return false;
	if (!tfd_kbit(c->th, c->i++))
		return tfd_ev_next(&c->pk, e);
	if (c->fs.next(c->fs.ctx, &t, e))
		return true;
	c->failed = true;
	return false;
}

void tfd_evm_end(struct tfd_ev_mcursor *c)
{
	if (c->src) {
		if (c->src->close(c->src, &c->fs))
			c->failed = true;
		__atomic_add_fetch(&c->src->failed, (size_t)c->failed, __ATOMIC_RELAXED);
	}
	c->src = NULL;
}
