/* xspace_scan.c - the XSpace host plane scanned in place: its metadata,
 * lines, events and stats decoded into the capture model (xspace_impl.h).
 * The hot path of reading a capture. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tfd/pages.h"
#include "xplane.pb-c.h"
#include "xspace_impl.h"
#include "xspace_parse.h"

/* Note what sc's run holds on host h: the host is then as if each event
 * read had been noted. */
static void note_flush(struct scan *sc, struct tfd_host *h)
{
	struct note_run *r = &sc->run;

	if (r->grouped)
		tfd_host_note(sc->cap, h, true, r->group, r->start, r->end);
	if (r->spanned)
		tfd_host_note(sc->cap, h, false, 0, r->span_start, r->span_end);
	r->grouped = r->spanned = false;
}

/* tfd_host_note() of one event, through the run (a step's extent widens
 * the host's span when it is noted) */
static inline void note_event(struct scan *sc, struct tfd_host *h, bool has_group, int64_t group,
			      int64_t start_ns, int64_t end_ns)
{
	struct note_run *r = &sc->run;

	if (has_group && r->grouped && r->group == group) {
		if (start_ns < r->start)
			r->start = start_ns;
		if (end_ns > r->end)
			r->end = end_ns;
	} else if (has_group) {
		if (r->grouped)
			tfd_host_note(sc->cap, h, true, r->group, r->start, r->end);
		r->grouped = true;
		r->group = group;
		r->start = start_ns;
		r->end = end_ns;
	} else if (!r->spanned) {
		r->spanned = true;
		r->span_start = start_ns;
		r->span_end = end_ns;
	} else {
		if (start_ns < r->span_start)
			r->span_start = start_ns;
		if (end_ns > r->span_end)
			r->span_end = end_ns;
	}
}

static bool is_group_mid(const struct scan *sc, uint64_t mid)
{
	for (int i = 0; i < sc->ngroup_mids; i++)
		if (sc->group_mids[i] == mid)
			return true;
	return false;
}

static bool is_id_mid(const struct scan *sc, uint64_t mid)
{
	for (int i = 0; i < sc->nid_mids; i++)
		if (sc->id_mids[i] == mid)
			return true;
	return false;
}

/* Keep metadata id key of a stat named like TensorFlow's id or group_id
 * stat (at most as many as the arrays hold; -1: more, all checked). */
static void note_stat_mid(int *n, uint64_t *mids, size_t cap, uint64_t key)
{
	if (*n < 0)
		return;
	if (*n < (int)cap)
		mids[(*n)++] = key;
	else
		*n = -1;
}

/* A stat metadata entry (key, val) into the scan's tables. */
static int stat_meta(struct scan *sc, uint64_t key, struct span val)
{
	Tfdpb__XStatMetadata *m = tfdpb__xstat_metadata__unpack(&sc->alloc, val.len, val.p);
	struct smeta sm;

	if (!m && val.len)
		return sc->bad = "corrupt stat metadata", 1;
	sm.name = tfd_arena_intern_cstr(&sc->cap->arena, m && m->name ? m->name : "");
	sm.code = (uint8_t)tfd_stat_of(sm.name);
	imap_put(&sc->stat_meta, key, sc->smetas.n);
	vec_push(&sc->smetas, sm);
	if (sm.code == TFD_STAT_ID)
		note_stat_mid(&sc->nid_mids, sc->id_mids,
			      sizeof(sc->id_mids) / sizeof(sc->id_mids[0]), key);
	if (sm.code == TFD_STAT_GROUP)
		note_stat_mid(&sc->ngroup_mids, sc->group_mids,
			      sizeof(sc->group_mids) / sizeof(sc->group_mids[0]), key);
	if (strcmp(sm.name, "_r") == 0)
		note_stat_mid(&sc->nroot_mids, sc->root_mids,
			      sizeof(sc->root_mids) / sizeof(sc->root_mids[0]), key);
	tfd_arena_rewind(sc->alloc.allocator_data); /* the message is read */
	return 0;
}

/* One XPlane field (lines, event and stat metadata), in wire order
 * (xprof-reference.md). */
int tfd_xs_plane_collect(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct scan *sc = ctx;
	uint64_t key = 0;
	struct span val = {NULL, 0};
	bool have_key;

	(void)v;
	if (wt != 2)
		return 0;
	if (field == 3) {
		vec_push(&sc->lines, s);
		return 0;
	}
	if (field != 4 && field != 5)
		return 0;
	if (!tfd_pb_map_entry(s, &key, &have_key, &val))
		return sc->bad = "malformed metadata entry", 1;
	if (!have_key)
		return 0;
	if (field == 4) {
		Tfdpb__XEventMetadata *m =
		    tfdpb__xevent_metadata__unpack(&sc->alloc, val.len, val.p);
		struct meta mt;

		if (!m && val.len)
			return sc->bad = "corrupt event metadata", 1;
		mt.name = tfd_arena_intern_cstr(&sc->cap->arena, m && m->name ? m->name : "");
		mt.kind = (uint8_t)tfd_event_kind_of(mt.name);
		mt.h2d = tfd_host_op_is_h2d(mt.name, strlen(mt.name));
		mt.marker = tfd_step_marker_name(mt.name);
		mt.root =
		    !mt.marker && mt.kind == TFD_EV_OTHER && tfd_step_root_name(mt.name) ? 0 : 2;
		mt.runs = strcmp(mt.name, "FunctionRun") == 0  ? META_FN_RUN
			  : strcmp(mt.name, "SessionRun") == 0 ? META_SESSION_RUN
			  : tfd_get_next_run_name(mt.name)     ? META_GET_NEXT
			  : tfd_fn_call_name(mt.name)	       ? META_FN_CALL
							       : 0;
		imap_put(&sc->ev_meta, key, sc->metas.n);
		vec_push(&sc->metas, mt);
		/* the message is read: its memory goes to the next one (a
		 * real GPU capture's metadata held 2 MB of it at its peak) */
		tfd_arena_rewind(sc->alloc.allocator_data);
		return 0;
	}
	return stat_meta(sc, key, val);
}

/* The `id` stat of an event (its stats start at p; NULL: none). */
static bool event_id(const struct scan *sc, const uint8_t *p, const uint8_t *end, uint64_t *id)
{
	struct stat_walk w = stat_walk(p, end);
	const struct smeta *sm;

	while (next_stat(&w)) {
		struct xstat xs;

		if (sc->nid_mids >= 0 && w.known && !is_id_mid(sc, w.smid))
			continue;
		if (walk_stat(sc, &w, &xs) == 0 && (xs.type == 3 || xs.type == 4) &&
		    (sm = smeta_of(sc, xs.mid)) && sm->code == TFD_STAT_ID) {
			*id = xs.u;
			return true;
		}
	}
	return false;
}

/* An executor chunk's `id` (the first) and `group_id` (the last) in one
 * walk over its stats: most chunks run the training step and are dropped
 * after this, read only for their step. Stats of other metadata ids are
 * skipped unparsed (the caller checked that both id lists are known). -1
 * for a malformed stat that the walk for the step would have parsed (a
 * group_id, or one without its metadata id first), as that walk reports
 * it. */
static int exec_stats(const struct scan *sc, const uint8_t *p, const uint8_t *end, bool *has_id,
		      uint64_t *id, bool *has_group, int64_t *group)
{
	struct stat_walk w = stat_walk(p, end);
	const struct smeta *sm;

	*has_id = *has_group = false;
	while (next_stat(&w)) {
		struct xstat xs;
		bool is_id = w.known && is_id_mid(sc, w.smid);

		if (w.known && !is_id && !is_group_mid(sc, w.smid))
			continue;
		if (walk_stat(sc, &w, &xs) != 0) {
			/* the step's walk reads no stats when the plane has no
			 * group_id metadata */
			if (!is_id && sc->ngroup_mids > 0)
				return -1;
		} else if ((sm = smeta_of(sc, xs.mid))) {
			uint8_t code = sm->code;

			if (!*has_id && code == TFD_STAT_ID && (xs.type == 3 || xs.type == 4)) {
				*has_id = true;
				*id = xs.u;
			}
			if (!is_id && code == TFD_STAT_GROUP && xs.type == 4) {
				*has_group = true;
				*group = (int64_t)xs.u;
			}
		}
	}
	return 0;
}

static void open_scope(struct scan *sc, const struct tfd_host *h, uint32_t th,
		       const struct tfd_event *e, int64_t start_ns, int64_t end_ns)
{
	bool id = (e->flags & TFD_EVF_ID) != 0;

	if (e->kind == TFD_EV_EXEC &&
	    (!id || !sc->has_functions || !fn_steps_has(&sc->fn_steps, e->id)))
		return;
	tfd_opscope_open(&sc->ops, id ? e->id : (uint64_t)h->threads[th].id, !id, start_ns, end_ns);
	sc->lead = NULL; /* (a part's) the ops after are its scope's */
}

/* Whether an event with a step marker's name is one: a `_r` (root) or
 * `step_num` stat, as the profiler's Trace(name, step_num=..., _r=1) writes
 * it; *step_num its step number, or -1. The event's framing was checked. */
static bool step_marker(const struct scan *sc, const uint8_t *p, const uint8_t *end,
			uint64_t *step_num)
{
	struct stat_walk w = stat_walk(p, end);
	bool marker = false;

	*step_num = (uint64_t)-1;
	while (next_stat(&w)) {
		struct xstat xs;
		const struct smeta *sm;

		if (walk_stat(sc, &w, &xs) != 0 || !(sm = smeta_of(sc, xs.mid)))
			continue;
		if (strcmp(sm->name, "_r") == 0) {
			marker = true;
		} else if (strcmp(sm->name, "step_num") == 0) {
			marker = true;
			if (xs.type == 3 || xs.type == 4)
				*step_num = xs.u;
		}
	}
	return marker;
}

/* Whether an event's stats hold a `_r` (root) stat: by its metadata id,
 * none when the plane has no "_r" stat. */
static bool has_root_stat(const struct scan *sc, const uint8_t *p, const uint8_t *end)
{
	struct stat_walk w = stat_walk(p, end);

	if (!sc->nroot_mids)
		return false;
	while (next_stat(&w)) {
		struct xstat xs;
		const struct smeta *sm;

		if (w.known && sc->nroot_mids > 0) {
			for (int i = 0; i < sc->nroot_mids; i++)
				if (sc->root_mids[i] == w.smid)
					return true;
			continue;
		}
		if (walk_stat(sc, &w, &xs) == 0 && (sm = smeta_of(sc, xs.mid)) &&
		    strcmp(sm->name, "_r") == 0)
			return true;
	}
	return false;
}

/* What the name of event metadata mi (SIZE_MAX: none) tells as an op's,
 * read once per name while it stays in the scan's cache (struct op_seen). */
static const struct tfd_op_kind *op_kind(struct scan *sc, size_t mi)
{
	static const struct tfd_op_kind none = {NULL, false};
	struct op_seen *q = &sc->op_seen[mi % OP_SEEN];

	if (mi == SIZE_MAX)
		return &none;
	if (q->mi1 != mi + 1) {
		q->mi1 = mi + 1;
		tfd_op_kind_of(sc->metas.v[mi].name, &q->kind);
	}
	return &q->kind;
}

/* An op event inside the open scope, or (a part's, before it opened its own
 * scope) kept for the scope the part before left open. */
static void op_in_scope(struct scan *sc, struct tfd_host *h, const struct meta *m, size_t mi,
			int64_t start_ns, int64_t end_ns)
{
	if (__builtin_expect(!sc->lead, 1))
		tfd_opscope_event(sc->cap, h, &sc->ops, m->name, op_kind(sc, mi), start_ns, end_ns);
	else
		tfd_xs_lead_op(sc, m->name, op_kind(sc, mi), start_ns, end_ns);
}

/* parser: one XEvent's fields and stats in wire order, in one pass over hot
 * bytes (the scanner's inner loop); cut up, the format would be scattered. */
static enum tfd_status scan_event(struct scan *sc, uint32_t th, int64_t ts_ns, const uint8_t *p,
				  const uint8_t *end, struct tfd_err *err)
{
	uint64_t mid = 0, off = 0, dur = 0, x = 0;
	const uint8_t *stats = NULL;
	struct tfd_event *e = NULL;
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	struct meta m = {"", TFD_EV_OTHER, false, false, 2, 0};
	int64_t start_ns, end_ns, group = 0;
	uint64_t step_num = 0, run_id = 0;
	bool has_group = false, keep, marker, run_has_id = false, hit = false;
	size_t n, mi = SIZE_MAX;
	struct stats_seen *seen = NULL;

	if (sc->prepass && p < end && *p == 0x08) {
		/* the pre-pass wants function events only: the metadata id is the
		 * first field as TensorFlow writes it; any other event stops here */
		const struct meta *fm;

		n = tfd_pb_varint(p + 1, end, &x);
		if (n && (!(fm = meta_of(sc, x)) || fm->kind != TFD_EV_FUNCTION))
			return TFD_OK;
	}
	if (!event_fields(p, end, &mid, &off, &dur, &stats))
		goto bad;
	/* the event's framing is valid from here on: the walks below need no checks */
	if (off / 1000 > TFD_MAX_TIME_NS || dur / 1000 > TFD_MAX_DURATION_NS)
		return tfd_fail(err, TFD_E_FORMAT,
				"event time out of range (offset_ps %" PRIu64
				", duration_ps %" PRIu64 ")",
				off, dur);
	if (meta_index(&sc->ev_meta, sc->meta_by_id, sc->nmeta_by_id, mid, &mi)) {
		struct meta *mm = &sc->metas.v[mi];

		/* a name's `_r`, read on its first event */
		if (mm->root == 0 && !sc->prepass)
			mm->root = has_root_stat(sc, stats, end) ? 1 : 2;
		m = *mm;
	} else {
		mi = SIZE_MAX;
	}
	/* end from start: off + dur could wrap around in uint64 */
	start_ns = ts_ns + (int64_t)(off / 1000);
	end_ns = start_ns + (int64_t)((off % 1000 + dur) / 1000);
	if (sc->prepass) {
		uint64_t id;

		if (m.kind == TFD_EV_FUNCTION && event_id(sc, stats, end, &id))
			fn_steps_add_later(&sc->fn_steps, id);
		return TFD_OK;
	}
	marker = (m.marker || m.root == 1) && step_marker(sc, stats, end, &step_num);
	/* a function's, a session's or a GetNext op's run: its step id (the
	 * stats are read below only for a kept event or a group); a
	 * function's eager call: its extent */
	if (__builtin_expect(m.runs == META_FN_CALL, 0)) {
		tfd_host_fn_call(h, m.name, h->threads[th].id, start_ns, end_ns);
	} else if (__builtin_expect(m.runs != 0, 0)) {
		run_has_id = event_id(sc, stats, end, &run_id);
		if (run_has_id && m.runs == META_FN_RUN)
			tfd_host_fnrun(h, h->threads[th].id, run_id, start_ns, false, 0);
		else if (run_has_id && m.runs == META_GET_NEXT) {
			tfd_host_get_next_open(h, &sc->gn, h->threads[th].id, run_id, end_ns);
			sc->gn_lead = NULL;
		}
	}
	keep = tfd_keep_kind((enum tfd_ev_kind)m.kind, sc->opts);
	if (keep && m.kind == TFD_EV_EXEC && !(sc->opts && sc->opts->keep_other)) {
		uint64_t id = 0;
		bool has_id;

		if (sc->has_functions && sc->nid_mids >= 0 && sc->ngroup_mids >= 0 &&
		    !(sc->opts && sc->opts->xspace_two_walks)) {
			/* one walk for the id and the step; a chunk of a dataset
			 * function is read again below, in full */
			struct exec_last *xl = &sc->exec_last;
			size_t slen = stats ? (size_t)(end - stats) : 0;

			if (slen && xl->len == slen && memcmp(xl->bytes, stats, slen) == 0) {
				has_id = xl->has_id;
				id = xl->id;
				has_group = xl->has_group;
				group = xl->group;
			} else {
				if (exec_stats(sc, stats, end, &has_id, &id, &has_group, &group) !=
				    0)
					goto bad;
				xl->len = slen <= EXEC_LAST_MAX ? slen : 0;
				memcpy(xl->bytes, stats ? stats : end, xl->len);
				xl->has_id = has_id;
				xl->id = id;
				xl->has_group = has_group;
				xl->group = group;
			}
			keep = has_id && fn_steps_has(&sc->fn_steps, id);
			if (!keep) {
				note_event(sc, h, has_group, group, start_ns, end_ns);
				return TFD_OK;
			}
			if (sc->sums && id) /* summed when packed, in the slot just found */
				__builtin_prefetch(&sc->sums->val[sc->fn_steps.last_slot], 1);
			has_group = false;
		} else {
			keep = sc->has_functions && event_id(sc, stats, end, &id) &&
			       fn_steps_has(&sc->fn_steps, id);
		}
	}
	if (keep) {
		if (h->nevents >= tfd_max_events(sc->opts))
			return tfd_fail(err, TFD_E_LIMIT, "more than %zu events on the host plane",
					tfd_max_events(sc->opts));
		e = tfd_host_add_event_as(sc->cap, h, th, m.name, (enum tfd_ev_kind)m.kind,
					  start_ns, end_ns - start_ns);
	}
	/* the stats: all of them for a kept event, only group_id (the step it
	 * belongs to) for the others */
	if (!e && sc->ngroup_mids == 0)
		stats = NULL; /* no step markers in the plane: nothing to read */
	if (e && e->kind == TFD_EV_ITERATOR && stats) {
		seen = tfd_xs_stats_seen(sc, mi, stats, end, e, &has_group, &group, &hit);
		if (hit)
			stats = NULL;
	}
	for (struct stat_walk w = stat_walk(stats, end); next_stat(&w);) {
		struct xstat xs;
		const struct smeta *sm;

		/* not kept: a stat of another metadata id than group_id's is
		 * skipped unparsed */
		if (!e && sc->ngroup_mids >= 0 && w.known && !is_group_mid(sc, w.smid))
			continue;
		if (walk_stat(sc, &w, &xs) != 0)
			goto bad;
		if (e)
			apply_xstat(sc, e, &xs);
		if (xs.type == 4 && (sm = smeta_of(sc, xs.mid)) && sm->code == TFD_STAT_GROUP) {
			has_group = true;
			group = (int64_t)xs.u;
		}
	}
	if (seen && !hit)
		tfd_xs_stats_seen_keep(seen, mi, stats, end, e, has_group, group);
	/* the first iterator call inside a GetNext op: what it read */
	if (__builtin_expect(sc->gn.open, 0) && e && e->kind == TFD_EV_ITERATOR) {
		if (__builtin_expect(sc->gn_lead != NULL, 0))
			tfd_xs_lead_iterator(sc, e); /* a part's first */
		else
			tfd_host_get_next_iterator(h, &sc->gn, h->threads[th].id, e);
	}
	/* the ops inside a dataset function: a kept function event or chunk
	 * opens the scope (with keep_other every chunk is kept: only a
	 * dataset function's step counts), an op inside it is summed */
	if (e && (e->kind == TFD_EV_FUNCTION || e->kind == TFD_EV_EXEC))
		open_scope(sc, h, th, e, start_ns, end_ns);
	else if (m.kind == TFD_EV_OTHER && sc->ops.open)
		op_in_scope(sc, h, &m, mi, start_ns, end_ns);
	/* a function's id is coded when the event is packed, as the next
	 * one comes: its slot fetched meanwhile */
	if (e && e->kind == TFD_EV_FUNCTION && sc->sums && sc->sums->cap && (e->flags & TFD_EVF_ID))
		__builtin_prefetch(&sc->sums->key[tfd_key_home(sc->sums->cap, e->id)]);
	if (m.h2d)
		tfd_device_host_op(h, start_ns, end_ns, has_group, group);
	if (marker) /* with its group, read above */
		tfd_host_step_marker(h, m.name, h->threads[th].id, (int64_t)step_num, start_ns,
				     end_ns, has_group, group);
	if (__builtin_expect(m.runs == META_SESSION_RUN, 0))
		tfd_host_session_run(h, h->threads[th].id, start_ns, end_ns, has_group, group,
				     run_has_id, run_id);
	note_event(sc, h, has_group, group, start_ns, end_ns);
	return TFD_OK;
bad:
	return tfd_fail(err, TFD_E_FORMAT, "corrupt XSpace protobuf: malformed event");
}

/* parser: an XLine's header fields, then its events, in wire order (one pass
 * that may start mid-line for a block); the cases follow the format. */
enum tfd_status tfd_xs_scan_line(struct scan *sc, struct span line, const struct piece *part,
				 struct piece_out *po, struct tfd_err *err)
{
	struct line_hdr lh;
	const uint8_t *end = line.p + line.len;
	const uint8_t *p = part ? part->p : line.p, *stop = part ? part->end : end;
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	uint32_t th = 0;
	bool have_thread = false, ts_seen = false, events = false;
	enum tfd_status st;

	memset(&lh, 0, sizeof(lh));
	tfd_xs_part_begin(sc, h, part && part->p != line.p, part ? po : NULL);
	if (part) {
		/* a part of a line: the header came from the line's start */
		lh.id = part->id;
		lh.ts_ns = part->ts_ns;
		/* (the pre-pass keeps no thread: its parts are read on several
		 * threads into the host's one capture) */
		if (!sc->prepass) {
			/* names whole, however long (interned with their length) */
			const char *name = tfd_arena_intern(
			    &sc->cap->arena, part->name.p ? (const char *)part->name.p : "",
			    part->name.p ? part->name.len : 0);

			th = tfd_host_thread(sc->cap, h, lh.id, name);
		}
		have_thread = ts_seen = true;
	}
	/* One pass: the header fields (id, name, timestamp) come before the
	 * events in serialized order, display_name after them. Reading ahead
	 * for it would fault in the whole line before its pages can be
	 * dropped, so it renames the thread when it arrives. A part reads
	 * its fields (the last may run past its end, up to the line's end) and
	 * reports what only a reading of the whole line gets right. */
	while (p < stop) {
		uint64_t k = 0, x = 0;
		size_t n = tfd_pb_varint(p, end, &k);

		if (!n)
			goto bad;
		p += n;
		switch (k & 7) {
		case 0:
			n = tfd_pb_varint(p, end, &x);
			if (!n)
				goto bad;
			p += n;
			if ((k >> 3) == 1) {
				lh.id = (int64_t)x;
			} else if ((k >> 3) == 3) {
				/* a timestamp after the header changes the times of the
				 * events after it, also in the parts that follow */
				if (part && (events || part->p != line.p))
					po->misaligned = true;
				lh.ts_ns = (int64_t)x;
				ts_seen = true;
			}
			break;
		case 1:
		case 5:
			if ((size_t)(end - p) < ((k & 7) == 1 ? 8u : 4u))
				goto bad;
			p += (k & 7) == 1 ? 8 : 4;
			break;
		case 2:
			n = tfd_pb_varint(p, end, &x);
			if (!n || x > (uint64_t)(end - p - n))
				goto bad;
			p += n;
			if ((k >> 3) == 2) {
				lh.name.p = p;
				lh.name.len = (size_t)x;
			} else if ((k >> 3) == 11 && x > 0 && part) {
				/* the thread is renamed when the part is merged */
				po->display_name = (struct span){p, (size_t)x};
			} else if ((k >> 3) == 11 && x > 0) {
				lh.display_name.p = p;
				lh.display_name.len = (size_t)x;
				if (have_thread && !sc->prepass)
					h->threads[th].name = tfd_arena_intern(
					    &sc->cap->arena, (const char *)p, (size_t)x);
			} else if ((k >> 3) == 4) {
				if (!have_thread) {
					struct span nm =
					    lh.display_name.len ? lh.display_name : lh.name;

					if (!ts_seen) {
						/* not in serialized order: look for the timestamp
						 */
						tfd_pb_walk(line.p, line.len, line_hdr_field, &lh);
						ts_seen = true;
					}
					/* the pre-pass makes no threads: lines make them in
					 * their order, whichever pass reads them */
					if (!sc->prepass)
						th = tfd_host_thread(
						    sc->cap, h, lh.id,
						    tfd_arena_intern(&sc->cap->arena,
								     nm.p ? (const char *)nm.p : "",
								     nm.p ? nm.len : 0));
					have_thread = true;
				}
				if (lh.ts_ns > (int64_t)TFD_MAX_TIME_NS ||
				    lh.ts_ns < -(int64_t)TFD_MAX_TIME_NS)
					return tfd_fail(
					    err, TFD_E_FORMAT,
					    "line timestamp_ns %" PRId64 " out of range", lh.ts_ns);
				/* (the lines stream from memory: ahead of the loads) */
				__builtin_prefetch(p + 2048);
				st = scan_event(sc, th, lh.ts_ns, p, p + x, err);
				if (st)
					return st;
				events = true;
				if (sc->mapped && !sc->prepass &&
				    p > sc->released + sc->release_step)
					tfd_pages_release(&sc->released, p, 0);
				else if (sc->mapped && sc->prepass &&
					 p > sc->pre_released + 2 * sc->release_step)
					tfd_pages_release(&sc->pre_released, p, 0);
			}
			p += x;
			break;
		default:
			goto bad;
		}
	}
	if (part) {
		po->misaligned |= p != stop; /* it ran past the next part's start */
		tfd_xs_part_end(sc, po);
	}
	note_flush(sc, h);
	return TFD_OK;
bad:
	return tfd_fail(err, TFD_E_FORMAT, "corrupt XSpace protobuf: malformed line");
}

/* Does the line belong to one of tf.data's own threads ("tf_data_...")?
 * TensorFlow runs dataset functions from those pools, so only their lines
 * are searched for function events. The name (field 2) precedes the events
 * (field 4) as TensorFlow serializes a line: read up to the first event. A
 * line without a name is searched. */
static int tfdata_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	bool *yes = ctx;

	(void)v;
	if (wt != 2 || (field != 2 && field != 4))
		return 0;
	/* the name decides; events before a name: search the line */
	if (field == 2)
		*yes = s.len == 0 || (s.len >= 7 && memcmp(s.p, "tf_data", 7) == 0);
	return 1;
}

bool tfd_xs_tfdata_line(struct span line)
{
	bool yes = true; /* also for a malformed line: search it */

	tfd_pb_walk(line.p, line.len, tfdata_field, &yes);
	return yes;
}
