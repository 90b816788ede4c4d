/* xspace_seams.c - a host plane's long lines read in parts, each part by
 * whichever block reads it: what a part's start inherits from the parts
 * before it. Reading a line whole, a dataset function's scope stays open
 * across its ops and a GetNext op's run waits for the iterator call after
 * it; a part starts without them. It keeps what they would take (its
 * events before a scope of its own, its first iterator call), and once every
 * block is read the line's state is carried from part to part in line
 * order, into the blocks' own captures, before they move into the host. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "xspace_impl.h"

void tfd_xs_part_begin(struct scan *sc, struct tfd_host *h, bool after_first, struct piece_out *po)
{
	tfd_opscope_reset(&sc->ops);
	sc->gn.open = false;
	sc->lead = sc->gn_lead = after_first ? po : NULL;
	if (po) {
		po->lead_past = INT64_MAX;
		po->rec_first = h->fn_ops.n;
		po->run_first = h->fn_ops.nruns;
		/* (the pre-pass reads parts on several threads at once, all of
		 * them into the host's capture, and makes no record) */
		if (!sc->prepass)
			h->fn_ops.cut = true;
	}
	if (after_first) {
		/* both taken for open (what the ops and the first iterator call
		 * read then goes to po) until the part opens its own */
		sc->ops.open = true;
		sc->gn.open = true;
	}
}

void tfd_xs_part_end(struct scan *sc, struct piece_out *po)
{
	po->ops_set = !sc->lead;
	po->ops = sc->ops;
	po->gn_set = !sc->gn_lead;
	po->gn = sc->gn;
	if (!po->ops_set)
		tfd_opscope_reset(&po->ops);
	sc->lead = sc->gn_lead = NULL;
}

void tfd_xs_lead_op(struct scan *sc, const char *name, const struct tfd_op_kind *kind,
		    int64_t start, int64_t end)
{
	struct piece_out *po = sc->lead;

	/* (an event of no op is kept too: one out of time order, or past the
	 * scope, closes it) */
	if (po->lead.n == LEAD_MAX) {
		if (po->lead_past == INT64_MAX)
			po->lead_past = start;
		return;
	}
	vec_push(&po->lead, ((struct lead_op){name, *kind, start, end}));
}

void tfd_xs_lead_iterator(struct scan *sc, const struct tfd_event *e)
{
	struct piece_out *po = sc->gn_lead;

	po->iter_first = true;
	po->iter_start = e->start_ns;
	po->iter_has_id = (e->flags & TFD_EVF_ID) != 0;
	po->iter_id = e->id;
	sc->gn_lead = NULL;
	sc->gn.open = false; /* it settled the GetNext before, if one was open */
}

/* The line's state carried from part to part. */
struct carry {
	struct tfd_opscope ops;
	struct tfd_get_next_open gn;
	struct tfd_host *gn_host; /* whose marker gn.k is */
};

/* A scope's records in host from moved from one host to another: the
 * record r of `from` is now at to_at + r of `to`, and to's records at or
 * past `at` moved up by `by` (all of them: from NULL). */
struct rec_move {
	const struct tfd_host *from;
	struct tfd_host *to;
	size_t to_at, at, by;
};

static void ops_moved(struct tfd_opscope *s, const struct rec_move *mv)
{
	for (int i = 0; i < s->nops; i++)
		if (mv->from && s->op_host[i] == mv->from) {
			s->op_host[i] = mv->to;
			s->op_rec[i] += mv->to_at;
		} else if (s->op_host[i] == mv->to && s->op_rec[i] >= mv->at) {
			s->op_rec[i] += mv->by;
		}
}

/* The ops of part i (in host h) that the scope carried in holds: summed as
 * the line's reading would, their records put before the part's own. */
static bool lead_ops(struct piece_out *po, size_t i, size_t last, struct tfd_host *h,
		     struct carry *cr)
{
	struct piece_out *o = &po[i];
	struct tfd_host t; /* the records the ops make, then put into h */
	struct rec_move mv;
	size_t m;

	memset(&t, 0, sizeof(t));
	for (size_t k = 0; k < o->lead.n && cr->ops.open; k++)
		tfd_opscope_event(NULL, &t, &cr->ops, o->lead.v[k].name, &o->lead.v[k].kind,
				  o->lead.v[k].start, o->lead.v[k].end);
	if (cr->ops.open && o->lead_past < cr->ops.end) {
		tfd_fn_ops_free(&t.fn_ops);
		free(t.py_ops);
		return false; /* ops it did not keep belong to the scope */
	}
	m = t.fn_ops.n;
	if (m) {
		size_t mr = t.fn_ops.nruns;

		tfd_fn_ops_insert(&h->fn_ops, o->rec_first, o->run_first, &t.fn_ops, NULL, false);
		/* the records of this part and of the block's later parts move */
		mv = (struct rec_move){&t, h, o->rec_first, o->rec_first, m};
		ops_moved(&cr->ops, &mv);
		mv.from = NULL;
		for (size_t k = i; k < last; k++) {
			ops_moved(&po[k].ops, &mv);
			if (k > i) {
				po[k].rec_first += m;
				po[k].run_first += mr;
			}
		}
	}
	if (t.npy_ops) { /* (read in any order: tfd_python_overlap() sorts) */
		h->py_ops = xrealloc(h->py_ops, (h->npy_ops + t.npy_ops) * sizeof(*h->py_ops));
		memcpy(h->py_ops + h->npy_ops, t.py_ops, t.npy_ops * sizeof(*t.py_ops));
		h->npy_ops += t.npy_ops;
		h->py_ops_cap = h->npy_ops;
	}
	tfd_fn_ops_free(&t.fn_ops);
	free(t.py_ops);
	return true;
}

/* Part i of a line (after its first, in host h): the state carried in
 * settles its start, and its own state at its end, where it has one, is
 * carried on. */
static bool settle(struct piece_out *po, size_t i, size_t last, struct tfd_host *h,
		   struct carry *cr)
{
	struct piece_out *o = &po[i];

	if (cr->ops.open && o->lead.n && !lead_ops(po, i, last, h, cr))
		return false;
	if (cr->gn.open && o->iter_first) {
		struct tfd_event e;

		memset(&e, 0, sizeof(e));
		e.start_ns = o->iter_start;
		e.flags = o->iter_has_id ? TFD_EVF_ID : 0;
		e.id = o->iter_id;
		tfd_host_get_next_iterator(cr->gn_host, &cr->gn, cr->gn.thread_id, &e);
	}
	if (o->ops_set)
		cr->ops = o->ops;
	if (o->gn_set) {
		cr->gn = o->gn;
		cr->gn_host = h;
	}
	return true;
}

bool tfd_xs_seams(const struct piece *pc, struct piece_out *po, size_t npc, const size_t *block_of,
		  struct tfd_capture *const *caps)
{
	struct carry cr;
	bool ok = true;

	memset(&cr, 0, sizeof(cr));
	for (size_t i = 0; i < npc && ok; i++) {
		size_t last = i + 1;
		struct tfd_host *h = &caps[block_of[i]]->hosts[0];

		if (pc[i].whole)
			continue;
		while (last < npc && block_of[last] == block_of[i])
			last++;
		if (!i || pc[i - 1].line != pc[i].line) { /* the line's first part */
			cr.ops = po[i].ops;
			cr.gn = po[i].gn;
			cr.gn_host = h;
			continue;
		}
		ok = settle(po, i, last, h, &cr);
	}
	for (size_t i = 0; i < npc; i++)
		vec_free(&po[i].lead);
	return ok;
}
