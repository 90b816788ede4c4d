/* graph_iters.h - a host's iterators made and found from their calls'
 * events: the scan's lookup (graph.c), and the same lookup on a context of
 * its own for the check that makes them again in time order
 * (graph_again.c). Static and inline: each file has its copy, so the
 * scan's per-call path keeps the only call of its own, which the compiler
 * inlines (a second caller in graph.c had kept it and its helpers out of
 * line: 0.5-1.6 % more instructions on an iterator-dense capture).
 * Internal to src/model. */
#ifndef TFD_GRAPH_ITERS_H
#define TFD_GRAPH_ITERS_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/graph.h"
#include "tfd/imap.h"

static inline uint64_t name_key(const char *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* A long name's key in by_lname: its text (FNV-1a), not its pointer. A
 * parent's name is computed, and the files of a capture loaded on several
 * threads intern their strings in arenas of their own, so no single arena
 * lookup finds the host's copy. Walks compare the text. */
static inline uint64_t text_key(const char *p)
{
	return tfd_fnv_text(TFD_FNV_BASIS, p);
}

/* What the graph reads of a signature's parameters, remembered while the
 * threads are scanned (host_ctx.memo, direct-mapped by the signature's
 * index): its dataset's name and the values of the parameters AUTOTUNE
 * changes (NaN: none, or not a number). An iterator whose calls carry
 * counters (a parallel interleave's results_ready, active_elements, ...)
 * has a signature per combination of them, and its calls had each
 * searched their parameters for these four by name. */
struct sig_memo {
	const struct tfd_sig *sig;
	const char *dname;
	double par[3];
};

/* At most this many entries, fewer for a host of fewer calls (a table
 * zeroed for each host: 48 KB) */
#define SIG_MEMO 1024

static inline const struct sig_memo *sig_facts(const struct host_ctx *c, const struct tfd_event *e)
{
	struct sig_memo *m = &c->memo[e->sig->idx & (c->nmemo - 1)];

	if (m->sig != e->sig) {
		m->sig = e->sig;
		m->dname = tfd_event_param(e, "name");
		for (int w = 0; w < 3; w++) {
			const char *v = tfd_event_param(e, tfd_param_names[w]);
			char *end;

			m->par[w] = v ? strtod(v, &end) : NAN;
			if (v && end == v)
				m->par[w] = NAN;
		}
	}
	return m;
}

/* The dataset name iterator event e carries (its `name` stat), NULL
 * none (read while the threads are scanned: the memo is there). */
static inline const char *dataset_name(const struct host_ctx *c, const struct tfd_event *e)
{
	return sig_facts(c, e)->dname;
}

/* The key of an iterator in by_idp: its id, its parent_id (0 while it has
 * none) and its dataset's name mixed, so that a hit is checked against
 * all three. */
static inline uint64_t id_key(uint64_t id, uint64_t parent, const char *dname)
{
	uint64_t k = imap_hash(id ^ imap_hash(parent + 0x9e3779b97f4a7c15ull));

	return dname ? imap_hash(k ^ text_key(dname)) : k;
}

static inline bool same_name(const char *a, const char *b)
{
	return !a || !b || a == b || strcmp(a, b) == 0;
}

/* Whether event e is of iterator it's dataset: an event or iterator
 * without a name is. The signatures seen to be are remembered (the last
 * one): nearly every event repeats its iterator's. */
static inline bool of_dataset(const struct host_ctx *c, struct iter *it, const struct tfd_event *e)
{
	if (e->sig == it->name_sig)
		return true;
	if (!same_name(it->dname, dataset_name(c, e)))
		return false;
	it->name_sig = e->sig;
	return true;
}

/* Whether iterator it has parent_id pid (has_pid) and dataset name dname. */
static inline bool iter_is(const struct iter *it, uint64_t id, bool has_pid, uint64_t pid,
			   const char *dname)
{
	return it->id == id && it->has_parent == has_pid && (!has_pid || it->parent_id == pid) &&
	       same_name(it->dname, dname);
}

/* The iterator of event e among those with its id, head the last made:
 * TensorFlow's ids are the iterators' addresses, and an iterator made
 * after another's end can get its address. One iterator keeps its parent
 * and its dataset, so another parent_id or another dataset name is
 * another iterator (the same parent's next inner iterator of the same
 * dataset at that address is the same stage: it stays one; a Keras
 * epoch's training iterator at the address its validation iterator had
 * is not); an event without a parent_id is the last made's, as is one
 * whose iterator's events so far had none. -1: a new one. */
static inline int id_match(struct host_ctx *c, size_t head, const struct tfd_event *e)
{
	bool has_pid = (e->flags & TFD_EVF_PARENT) != 0;
	uint64_t pid = has_pid ? e->sig->parent_id : 0;
	struct iter *it = &c->iters.v[head];
	bool ours = of_dataset(c, it, e);
	const char *dname;
	size_t idx;

	if (ours && (!has_pid || (it->has_parent && it->parent_id == pid)))
		return (int)head; /* (nearly every event) */
	dname = dataset_name(c, e);
	if (imap_get(&c->by_idp, id_key(e->id, pid, dname), &idx) &&
	    iter_is(&c->iters.v[idx], e->id, has_pid, pid, dname))
		return (int)idx;
	if (!ours || it->has_parent)
		return -1;
	it->has_parent = true;
	it->parent_id = pid;
	imap_put(&c->by_idp, id_key(e->id, pid, it->dname), head);
	return (int)head;
}

static inline int iter_for_event(struct host_ctx *c, const struct tfd_event *e)
{
	size_t idx = SIZE_MAX;
	bool by_id = (e->flags & TFD_EVF_ID) && e->id != 0;
	struct iter it;

	if (by_id) {
		if (imap_get(&c->by_id, e->id, &idx)) {
			int j = id_match(c, idx, e);

			if (j >= 0)
				return j;
		} else {
			idx = SIZE_MAX;
		}
	} else {
		/* no usable id: one iterator per long name */
		if (imap_get(&c->by_name, name_key(e->sig->name), &idx))
			return (int)idx;
	}
	memset(&it, 0, sizeof(it));
	it.id = e->id;
	it.parent_id = e->sig->parent_id;
	it.has_parent = (e->flags & TFD_EVF_PARENT) != 0;
	it.long_name = tfd_iter_long_name(e->sig->name);
	it.parent = -1;
	it.stage = -1;
	it.pair = -1;
	it.first_start = e->start_ns;
	it.last_end = e->start_ns;
	it.id_next = by_id && idx != SIZE_MAX ? (int)idx : -1;
	if (by_id) {
		it.dname = dataset_name(c, e);
		it.name_sig = e->sig;
	}
	vec_push(&c->iters, it);
	vec_push(&c->samples, *e); /* its first call's event */
	idx = c->iters.n - 1;
	if (by_id) {
		imap_put(&c->by_id, e->id, idx);
		imap_put(&c->by_idp, id_key(e->id, it.has_parent ? it.parent_id : 0, it.dname),
			 idx);
	} else {
		imap_put(&c->by_name, name_key(e->sig->name), idx);
	}
	{
		size_t head;
		int next = imap_get(&c->by_lname, text_key(it.long_name), &head) ? (int)head : -1;

		vec_push(&c->lname_next, next);
		imap_put(&c->by_lname, text_key(it.long_name), idx);
	}
	return (int)idx;
}

/* Call e of iterator it counted: its number of calls, longest call, first
 * start and last end. */
static inline void iter_count_call(struct iter *it, const struct tfd_event *e)
{
	it->ncalls++;
	if (e->dur_ns > it->max_dur)
		it->max_dur = e->dur_ns;
	if (e->start_ns < it->first_start)
		it->first_start = e->start_ns;
	if (e->start_ns + e->dur_ns > it->last_end)
		it->last_end = e->start_ns + e->dur_ns;
}

/* The iterators' parents (by parent_id and their calls' spans, else by
 * long name, an absent one made where none is captured; a cycle is an
 * error) and roots, once every iterator is made with its calls' counts
 * and spans (graph.c; tfd_graph_build() and the pass before a stream). */
enum tfd_status tfd_graph_resolve(struct host_ctx *c, size_t *by_name, size_t *orphans,
				  struct tfd_err *err);

/* Per iterator, whether its long name is a root's (Iterator::X; -1 not
 * yet known). */
typedef VEC(signed char) root_names;

/* What the pass before a stream counts of call e of iterator i on thread
 * t, besides the iterator's first call there: the thread's calls, and the
 * call itself if it is a root iterator's (graph_again.c; graph.c's scan
 * that keeps no call). */
static inline void prepass_count(const struct host_ctx *c, struct tfd_prepass *pp, root_names *two,
				 int i, const struct tfd_event *e, uint32_t t)
{
	pp->thread_calls[t]++;
	while (two->n <= (size_t)i)
		vec_push(two, (signed char)-1);
	if (two->v[i] < 0)
		two->v[i] = tfd_iter_parts(c->iters.v[i].long_name) <= 2;
	if (two->v[i])
		vec_push(&pp->roots,
			 ((struct tfd_root_call){i, e->start_ns, e->start_ns + e->dur_ns}));
}

/* Whether call e of iterator it (i) on thread t is its first on the
 * thread (each thread is scanned once): their pair made, its parameters
 * read afresh on it. */
static inline bool new_pair(struct host_ctx *c, struct iter *it, int i, size_t t)
{
	if (it->pair >= 0 && it->pair_thread == t)
		return false;
	vec_push(&c->pairs, ((struct call_pair){i, (uint32_t)t}));
	it->pair = (int)(c->pairs.n - 1);
	it->pair_thread = (uint32_t)t;
	it->last_sig = NULL;
	memset(it->last_par, 0, sizeof(it->last_par));
	return true;
}

#endif
