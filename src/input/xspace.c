/* xspace.c - XSpace (*.xplane.pb) reader; the only user of protobuf-c.
 *
 * The top level is walked by hand so that planes are decoded one at a time
 * and device planes are skipped by length without decoding: captures reach
 * 1-2 GB and almost all of it is device activity. The "/host:CPU" plane is
 * unpacked with protobuf-c into a scratch arena that is dropped as soon as
 * its events are copied into the capture model.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "input_impl.h"
#include "tfd/imap.h"
#include "tfd/pages.h"
#include "tfd/pool.h"
#include "tfd/vec.h"
#include "xplane.pb-c.h"

#define HOST_PLANE "/host:CPU"

struct span {
	const uint8_t *p;
	size_t len;
};

/* Walk one message level. For each field calls back with its number, wire
 * type and (for length-delimited fields) its bytes. Returns the offset of
 * the first malformed byte, or SIZE_MAX when the message is well framed. */
typedef int (*field_fn)(void *ctx, uint32_t field, int wt, uint64_t v, struct span s);

static size_t walk(const uint8_t *p, size_t len, field_fn fn, void *ctx)
{
	const uint8_t *start, *end;

	if (!p) /* an absent (empty) message */
		return SIZE_MAX;
	start = p;
	end = p + len;

	while (p < end) {
		const uint8_t *at = p;
		uint64_t key, v = 0;
		struct span s = {NULL, 0};
		size_t k = tfd_pb_varint(p, end, &key);
		int wt;

		if (!k || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
			return (size_t)(at - start);
		p += k;
		wt = (int)(key & 7);
		switch (wt) {
		case 0:
			k = tfd_pb_varint(p, end, &v);
			if (!k)
				return (size_t)(at - start);
			p += k;
			break;
		case 1:
			if (end - p < 8)
				return (size_t)(at - start);
			p += 8;
			break;
		case 2:
			k = tfd_pb_varint(p, end, &v);
			if (!k || v > (uint64_t)(end - p - k))
				return (size_t)(at - start);
			p += k;
			s.p = p;
			s.len = (size_t)v;
			p += v;
			break;
		case 5:
			if (end - p < 4)
				return (size_t)(at - start);
			p += 4;
			break;
		default:
			return (size_t)(at - start);
		}
		if (fn && fn(ctx, (uint32_t)(key >> 3), wt, v, s))
			return (size_t)(at - start);
	}
	return SIZE_MAX;
}

struct space_scan {
	struct span *planes;
	size_t nplanes, cap;
	struct span hostname;
	int has_hostname;
	uint32_t bad_field;
};

static int space_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct space_scan *sc = ctx;

	(void)v;
	if (field < 1 || field > 4 || wt != 2) {
		sc->bad_field = field;
		return 1;
	}
	if (field == 1) {
		if (sc->nplanes == sc->cap) {
			sc->cap = sc->cap ? sc->cap * 2 : 16;
			sc->planes = xrealloc(sc->planes, sc->cap * sizeof(*sc->planes));
		}
		sc->planes[sc->nplanes++] = s;
	} else if (field == 4 && !sc->has_hostname) {
		sc->hostname = s;
		sc->has_hostname = 1;
	}
	return 0;
}

struct plane_scan {
	struct span name;
	size_t nlines;
};

static int plane_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct plane_scan *ps = ctx;

	(void)v;
	if (field == 2 && wt == 2)
		ps->name = s;
	else if (field == 3 && wt == 2)
		ps->nlines++;
	return 0;
}

/* protobuf-c allocations go to a scratch arena; free is a no-op. */
static void *pb_alloc(void *data, size_t size)
{
	return tfd_arena_alloc(data, size);
}

static void pb_free(void *data, void *p)
{
	(void)data;
	(void)p;
}

/* ---- the host plane, scanned in place ------------------------------------
 *
 * A host plane holds every thread's events, tf.data or not; most are not.
 * Instead of unpacking it (which costs several times the file in memory),
 * its lines and events are walked in place: an event's metadata id says
 * whether it is kept; other events are only looked at for their group_id
 * (step extents). protobuf-c decodes the small metadata messages. Pages of
 * a mapped file are dropped from memory once their lines are done.
 */

struct meta {
	const char *name;
	uint8_t kind;
};

struct smeta {
	const char *name;
	uint8_t code;
};

#define PARAM_CACHE 64
#define PARAM_SHORT 16 /* string parameters cached: "true", "false", ... */

#define EXEC_LAST_MAX 128 /* the bytes of stats an executor chunk's reading remembers */

struct scan {
	struct tfd_capture *cap;
	size_t host_idx;
	const struct tfd_load_opts *opts;
	struct imap ev_meta, stat_meta; /* id -> index */
	VEC(struct meta) metas;
	VEC(struct smeta) smetas;
	VEC(struct span) lines;
	const char *bad; /* first decoding problem */
	ProtobufCAllocator alloc;
	bool mapped;		 /* data is a file mapping: release pages as we go */
	const uint8_t *released; /* pages below this were dropped */
	/* dataset functions: a pre-pass collects their step ids, so that only
	 * the executor chunks running them are kept (a host plane holds
	 * millions of the training step's own ExecutorState::Process events) */
	bool prepass;
	const uint8_t *pre_released; /* the pre-pass's own page-release mark */
	/* metadata index by id for the small ids TensorFlow uses (-1: none);
	 * larger ids go through ev_meta */
	int32_t *meta_by_id;
	size_t nmeta_by_id;
	int32_t *smeta_by_id; /* the same for stat metadata */
	size_t nsmeta_by_id;
	bool has_functions;
	struct fn_steps fn_steps; /* dataset-function step ids (the pre-pass) */
	/* their executor chunks' sums, made from that set (NULL: the chunks
	 * are kept as events) */
	struct tfd_exec_sums *sums;
	/* the metadata ids of "group_id" stats: an event that is not kept is
	 * read only for its step, so its other stats are skipped by id */
	uint64_t group_mids[4];
	int ngroup_mids; /* -1: more than fit, parse every stat */
	/* the same for "id" stats, looked for in executor chunks */
	uint64_t id_mids[4];
	int nid_mids;
	/* an iterator's parameters (integers, short strings), read from every
	 * one of its events: the signature each (signature, stat, value) gave last,
	 * direct-mapped (the value's text, its interning and the signature's
	 * lookup cost a tenth of a tf.data-heavy read). Per capture: a block
	 * read starts it empty. */
	struct param_step {
		const struct tfd_sig *from, *to;
		uint64_t mid, v; /* v: the integer, or a short string's bytes */
		int type;
		/* the rest of a short string, zero-padded (a string and the
		 * same with NULs after it read the same: up to the first NUL) */
		char tail[PARAM_SHORT - 8];
	} param_cache[PARAM_CACHE];
	/* the stats of the last executor chunk read for its step, and what
	 * exec_stats() made of them: a step's chunks on a thread carry the
	 * same stats, byte for byte (len 0: none yet) */
	struct exec_last {
		size_t len;
		uint8_t bytes[EXEC_LAST_MAX];
		bool has_id, has_group;
		uint64_t id;
		int64_t group;
	} exec_last;
	/* the events of one step in a row, noted at once (tfd_host_note()
	 * and its host lookup per event were 8 % of a host-heavy read): the
	 * span of the events without a step since the last note_flush(), and
	 * the step and extent of the run of events of one step going on */
	struct note_run {
		int64_t span_start, span_end;
		bool spanned, grouped;
		int64_t group, start, end;
	} run;
};

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

static int plane_collect(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct scan *sc = ctx;
	const uint8_t *p, *end;
	uint64_t key = 0;
	struct span val = {NULL, 0};
	bool have_key = false;

	(void)v;
	if (wt != 2)
		return 0;
	p = s.p;
	end = s.p + s.len;
	if (field == 3) {
		vec_push(&sc->lines, s);
		return 0;
	}
	if (field != 4 && field != 5)
		return 0;
	/* a map entry: key = 1 (varint), value = 2 (message) */
	while (p < end) {
		uint64_t k, x;
		size_t n = tfd_pb_varint(p, end, &k);

		if (!n)
			return sc->bad = "malformed metadata entry", 1;
		p += n;
		if ((k & 7) == 0) {
			n = tfd_pb_varint(p, end, &x);
			if (!n)
				return sc->bad = "malformed metadata entry", 1;
			p += n;
			if ((k >> 3) == 1) {
				key = x;
				have_key = true;
			}
		} else if ((k & 7) == 2) {
			n = tfd_pb_varint(p, end, &x);
			if (!n || x > (uint64_t)(end - p - n))
				return sc->bad = "malformed metadata entry", 1;
			p += n;
			if ((k >> 3) == 2) {
				val.p = p;
				val.len = (size_t)x;
			}
			p += x;
		} else {
			return sc->bad = "malformed metadata entry", 1;
		}
	}
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
		imap_put(&sc->ev_meta, key, sc->metas.n);
		vec_push(&sc->metas, mt);
	} else {
		Tfdpb__XStatMetadata *m = tfdpb__xstat_metadata__unpack(&sc->alloc, val.len, val.p);
		struct smeta sm;

		if (!m && val.len)
			return sc->bad = "corrupt stat metadata", 1;
		sm.name = tfd_arena_intern_cstr(&sc->cap->arena, m && m->name ? m->name : "");
		sm.code = (uint8_t)tfd_stat_of(sm.name);
		imap_put(&sc->stat_meta, key, sc->smetas.n);
		vec_push(&sc->smetas, sm);
		if (sm.code == TFD_STAT_ID && sc->nid_mids >= 0) {
			if (sc->nid_mids < (int)(sizeof(sc->id_mids) / sizeof(sc->id_mids[0])))
				sc->id_mids[sc->nid_mids++] = key;
			else
				sc->nid_mids = -1;
		}
		if (sm.code == TFD_STAT_GROUP && sc->ngroup_mids >= 0) {
			if (sc->ngroup_mids <
			    (int)(sizeof(sc->group_mids) / sizeof(sc->group_mids[0])))
				sc->group_mids[sc->ngroup_mids++] = key;
			else
				sc->ngroup_mids = -1;
		}
	}
	return 0;
}

/* One XStat: its metadata id and value. */
struct xstat {
	uint64_t mid;
	int type; /* 2 double, 3 uint64, 4 int64, 5 str, 7 ref, 0 none */
	uint64_t u;
	struct span str;
};

static int parse_stat(const uint8_t *p, const uint8_t *end, struct xstat *st)
{
	memset(st, 0, sizeof(*st));
	while (p < end) {
		uint64_t k, x;
		size_t n = tfd_pb_varint(p, end, &k);

		if (!n)
			return -1;
		p += n;
		switch (k & 7) {
		case 0:
			n = tfd_pb_varint(p, end, &x);
			if (!n)
				return -1;
			p += n;
			if ((k >> 3) == 1)
				st->mid = x;
			else if ((k >> 3) == 3 || (k >> 3) == 4 || (k >> 3) == 7) {
				st->type = (int)(k >> 3);
				st->u = x;
			}
			break;
		case 1:
			if (end - p < 8)
				return -1;
			if ((k >> 3) == 2) {
				st->type = 2;
				memcpy(&st->u, p, 8);
			}
			p += 8;
			break;
		case 2:
			n = tfd_pb_varint(p, end, &x);
			if (!n || x > (uint64_t)(end - p - n))
				return -1;
			p += n;
			if ((k >> 3) == 5) {
				st->type = 5;
				st->str.p = p;
				st->str.len = (size_t)x;
			}
			p += x;
			break;
		case 5:
			if (end - p < 4)
				return -1;
			p += 4;
			break;
		default:
			return -1;
		}
	}
	return 0;
}

/* The index of metadata id mid in its map m, through the map's by-id
 * index (n entries, -1: none; see dense_index()) for the small ids
 * TensorFlow uses. */
static inline bool meta_index(const struct imap *m, const int32_t *by_id, size_t n, uint64_t mid,
			      size_t *out)
{
	if (mid < n) {
		if (by_id[mid] < 0)
			return false;
		*out = (size_t)by_id[mid];
		return true;
	}
	return imap_get(m, mid, out);
}

/* The stat metadata of id mid, or NULL. */
static inline const struct smeta *smeta_of(const struct scan *sc, uint64_t mid)
{
	size_t si;

	return meta_index(&sc->stat_meta, sc->smeta_by_id, sc->nsmeta_by_id, mid, &si)
		   ? &sc->smetas.v[si]
		   : NULL;
}

static void apply_xstat(struct scan *sc, struct tfd_event *e, const struct xstat *x)
{
	struct tfd_capture *cap = sc->cap;
	const struct smeta *sm = smeta_of(sc, x->mid), *ref;
	char buf[64];

	if (!sm)
		return;
	if (e->kind == TFD_EV_ITERATOR && sm->code == TFD_STAT_PARAM &&
	    (x->type == 3 || x->type == 4 || (x->type == 5 && x->str.len < PARAM_SHORT)) &&
	    !(sc->opts && sc->opts->xspace_two_walks)) {
		/* a parameter from a stat that gave this signature before */
		uint64_t v = x->u;
		char tail[PARAM_SHORT - 8] = {0};
		uint8_t len = 0;
		struct param_step *ps;

		if (x->type == 5) {
			/* the string's first 8 bytes as v, the rest in tail */
			len = (uint8_t)x->str.len;
			v = 0;
			memcpy(&v, x->str.p, len < 8 ? len : 8);
			if (len > 8)
				memcpy(tail, x->str.p + 8, len - 8u);
		}
		ps = &sc->param_cache[imap_hash((uint64_t)(uintptr_t)e->sig ^
						imap_hash(x->mid ^ imap_hash(v))) %
				      PARAM_CACHE];
		if (ps->from == e->sig && ps->mid == x->mid && ps->v == v && ps->type == x->type &&
		    memcmp(ps->tail, tail, sizeof(tail)) == 0) {
			e->sig = ps->to;
			return;
		}
		ps->from = e->sig;
		ps->mid = x->mid;
		ps->v = v;
		ps->type = x->type;
		memcpy(ps->tail, tail, sizeof(tail));
		if (x->type == 4) {
			tfd_event_set_stat_as(cap, e, TFD_STAT_PARAM, sm->name, (int64_t)x->u);
		} else if (x->type == 3) {
			snprintf(buf, sizeof(buf), "%" PRIu64, x->u);
			tfd_event_set_stat_str(cap, e, sm->name, buf);
		} else {
			memcpy(buf, x->str.p, len);
			buf[len] = '\0';
			tfd_event_set_stat_str(cap, e, sm->name, buf);
		}
		ps->to = e->sig;
		return;
	}
	switch (x->type) {
	case 4: /* int64 */
		tfd_event_set_stat_as(cap, e, (enum tfd_stat)sm->code, sm->name, (int64_t)x->u);
		break;
	case 3: /* uint64: ids >= 2^63 keep their bit pattern (spec 1.3) */
		if (sm->code != TFD_STAT_PARAM && sm->code != TFD_STAT_META) {
			tfd_event_set_stat_as(cap, e, (enum tfd_stat)sm->code, sm->name,
					      (int64_t)x->u);
		} else if (e->kind == TFD_EV_ITERATOR) {
			snprintf(buf, sizeof(buf), "%" PRIu64, x->u);
			tfd_event_set_stat_str(cap, e, sm->name, buf);
		}
		break;
	case 2:
		if (e->kind == TFD_EV_ITERATOR) {
			double d;

			memcpy(&d, &x->u, sizeof(d));
			snprintf(buf, sizeof(buf), "%g", d);
			tfd_event_set_stat_str(cap, e, sm->name, buf);
		}
		break;
	case 5: {
		/* a NUL-terminated copy for as long as the call: what the event
		 * keeps (a parameter's value) is interned there, and a copy in
		 * the arena per event was garbage (MBs of long_name stats) */
		size_t len = x->str.len < TFD_MAX_NAME_LEN ? x->str.len : TFD_MAX_NAME_LEN;
		char small[256], *str = len < sizeof(small) ? small : xmalloc(len + 1);

		memcpy(str, x->str.p, len);
		str[len] = '\0';
		tfd_event_set_stat_str(cap, e, sm->name, str);
		if (str != small)
			free(str);
		break;
	}
	case 7: /* ref: the value is the name of another stat metadata */
		if ((ref = smeta_of(sc, x->u)))
			tfd_event_set_stat_str(cap, e, sm->name, ref->name);
		break;
	default:
		break;
	}
}

struct line_hdr {
	int64_t id, ts_ns;
	struct span name, display_name;
};

static int line_hdr_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct line_hdr *lh = ctx;

	if (field == 1 && wt == 0)
		lh->id = (int64_t)v;
	else if (field == 3 && wt == 0)
		lh->ts_ns = (int64_t)v;
	else if (field == 2 && wt == 2)
		lh->name = s;
	else if (field == 11 && wt == 2)
		lh->display_name = s;
	return 0;
}

/* The event metadata of id mid, or NULL. */
static const struct meta *meta_of(const struct scan *sc, uint64_t mid)
{
	size_t mi;

	return meta_index(&sc->ev_meta, sc->meta_by_id, sc->nmeta_by_id, mid, &mi)
		   ? &sc->metas.v[mi]
		   : NULL;
}

/* A walk over an event's stats messages (XEvent field 4). The event's
 * framing was checked: no bounds checks. */
struct stat_walk {
	const uint8_t *p, *end;
	const uint8_t *st; /* the stat: st[0..len) */
	size_t len;
	/* the stat's metadata id when that is its first field, as TensorFlow
	 * writes it: a walk can skip the stats it does not want unparsed */
	bool known;
	uint64_t smid;
	size_t mid_len; /* known: the bytes of its metadata id field */
};

static struct stat_walk stat_walk(const uint8_t *stats, const uint8_t *end)
{
	struct stat_walk w = {stats ? stats : end, end, NULL, 0, false, 0, 0};

	return w;
}

/* The next stat, false at the end. */
static bool next_stat(struct stat_walk *w)
{
	while (w->p < w->end) {
		uint64_t k = 0, x = 0;

		w->p += tfd_pb_varint(w->p, w->end, &k);
		if ((k & 7) == 0) {
			w->p += tfd_pb_varint(w->p, w->end, &x);
		} else if ((k & 7) == 2) {
			w->p += tfd_pb_varint(w->p, w->end, &x);
			if ((k >> 3) == 4) {
				w->st = w->p;
				w->len = (size_t)x;
				w->p += x;
				w->mid_len = x > 1 && w->st[0] == 0x08
						 ? tfd_pb_varint(w->st + 1, w->p, &w->smid)
						 : 0;
				w->known = w->mid_len != 0;
				return true;
			}
			w->p += x;
		} else {
			w->p += (k & 7) == 1 ? 8 : 4;
		}
	}
	return false;
}

/* The stat the walk is at, as parse_stat() reads it. Its usual form, the
 * metadata id then one integer (field 3, 4 or 7), is read here without
 * parse_stat's general walk (xspace_two_walks: every stat goes to it). */
static inline int walk_stat(const struct scan *sc, const struct stat_walk *w, struct xstat *xs)
{
	/* the tests' reference reading parses every stat in full */
	if (w->known && !(sc->opts && sc->opts->xspace_two_walks)) {
		const uint8_t *p = w->st + 1 + w->mid_len, *end = w->st + w->len;
		uint64_t u;
		size_t n;

		if (p < end && (*p == 0x18 || *p == 0x20 || *p == 0x38) &&
		    (n = tfd_pb_varint(p + 1, end, &u)) && p + 1 + n == end) {
			memset(xs, 0, sizeof(*xs));
			xs->mid = w->smid;
			xs->type = *p >> 3;
			xs->u = u;
			return 0;
		}
	}
	return parse_stat(w->st, w->st + w->len, xs);
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

static enum tfd_status scan_event(struct scan *sc, uint32_t th, int64_t ts_ns, const uint8_t *p,
				  const uint8_t *end, struct tfd_err *err)
{
	uint64_t mid = 0, off = 0, dur = 0, k = 0, x = 0;
	const uint8_t *stats = NULL;
	struct tfd_event *e = NULL;
	struct tfd_host *h = &sc->cap->hosts[sc->host_idx];
	struct meta m = {"", TFD_EV_OTHER};
	int64_t start_ns, end_ns, group = 0;
	bool has_group = false, keep;
	size_t n;

	if (sc->prepass && p < end && *p == 0x08) {
		/* the pre-pass wants function events only: the metadata id is the
		 * first field as TensorFlow writes it; any other event stops here */
		const struct meta *fm;

		n = tfd_pb_varint(p + 1, end, &x);
		if (n && (!(fm = meta_of(sc, x)) || fm->kind != TFD_EV_FUNCTION))
			return TFD_OK;
	}
	while (p < end) {
		const uint8_t *field = p;

		n = tfd_pb_varint(p, end, &k);
		if (!n)
			goto bad;
		p += n;
		if ((k & 7) == 0) {
			n = tfd_pb_varint(p, end, &x);
			if (!n)
				goto bad;
			p += n;
			if ((k >> 3) == 1)
				mid = x;
			else if ((k >> 3) == 2)
				off = x;
			else if ((k >> 3) == 3)
				dur = x;
		} else if ((k & 7) == 2) {
			n = tfd_pb_varint(p, end, &x);
			if (!n || x > (uint64_t)(end - p - n))
				goto bad;
			p += n;
			if ((k >> 3) == 4 && !stats)
				stats = field;
			p += x;
		} else if ((k & 7) == 1 && end - p >= 8) {
			p += 8;
		} else if ((k & 7) == 5 && end - p >= 4) {
			p += 4;
		} else {
			goto bad;
		}
	}
	/* the event's framing is valid from here on: the walks below need no checks */
	if (off / 1000 > TFD_MAX_TIME_NS || dur / 1000 > TFD_MAX_DURATION_NS)
		return tfd_fail(err, TFD_E_FORMAT,
				"event time out of range (offset_ps %" PRIu64
				", duration_ps %" PRIu64 ")",
				off, dur);
	{
		const struct meta *mm = meta_of(sc, mid);

		if (mm)
			m = *mm;
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
	/* a function's id is coded when the event is packed, as the next
	 * one comes: its slot fetched meanwhile */
	if (e && e->kind == TFD_EV_FUNCTION && sc->sums && sc->sums->cap && (e->flags & TFD_EVF_ID))
		__builtin_prefetch(&sc->sums->key[tfd_key_home(sc->sums->cap, e->id)]);
	note_event(sc, h, has_group, group, start_ns, end_ns);
	return TFD_OK;
bad:
	return tfd_fail(err, TFD_E_FORMAT, "corrupt XSpace protobuf: malformed event");
}

/* A line, or a part of one, that scan_line() reads. */
struct piece {
	size_t line;
	const uint8_t *p, *end; /* the bytes it reads */
	bool whole;		/* the line itself */
	int64_t id, ts_ns;	/* a part of a line: the line's header */
	struct span name;
};

/* What reading a part of a line found out (one per piece). */
struct piece_out {
	/* its last field ran past the next part's start, or it holds a
	 * timestamp after the line's header (that changes the times of the
	 * events after it: only a reading of the whole line gets that right) */
	bool misaligned;
	struct span display_name;
};

static enum tfd_status scan_line(struct scan *sc, struct span line, const struct piece *part,
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
	if (part) {
		/* a part of a line: the header came from the line's start */
		/* names whole, however long (interned with their length) */
		const char *name = tfd_arena_intern(&sc->cap->arena,
						    part->name.p ? (const char *)part->name.p : "",
						    part->name.p ? part->name.len : 0);

		lh.id = part->id;
		lh.ts_ns = part->ts_ns;
		th = tfd_host_thread(sc->cap, h, lh.id, name);
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
						walk(line.p, line.len, line_hdr_field, &lh);
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
				st = scan_event(sc, th, lh.ts_ns, p, p + x, err);
				if (st)
					return st;
				events = true;
				if (sc->mapped && !sc->prepass && p > sc->released + (1u << 19))
					tfd_pages_release(&sc->released, p, 0);
				else if (sc->mapped && sc->prepass &&
					 p > sc->pre_released + (1u << 20))
					tfd_pages_release(&sc->pre_released, p, 0);
			}
			p += x;
			break;
		default:
			goto bad;
		}
	}
	if (part)
		po->misaligned |= p != stop; /* it ran past the next part's start */
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

static bool tfdata_line(struct span line)
{
	bool yes = true; /* also for a malformed line: search it */

	walk(line.p, line.len, tfdata_field, &yes);
	return yes;
}

/* ---- the lines of a host plane on several threads ------------------------
 *
 * The plane is cut into pieces: a whole line, or for a line longer than a
 * block (one thread's line can hold most of a plane) a run of its events,
 * cut at event boundaries found by a framing-only pass over the line. The
 * pieces are grouped into blocks of about the same size, several per
 * thread. Each block is read into a capture of its own by the scan above,
 * sharing the plane's metadata read-only (event names are the main
 * capture's strings), and the blocks are then moved into the host in order:
 * the host gets what reading the lines one by one gives. */

typedef VEC(struct piece) piece_vec;

struct block {
	size_t first, last; /* pieces [first, last) */
	size_t cost;	    /* its bytes, a tf.data thread's weighing more */
	struct tfd_capture *cap;
	struct tfd_err err;
	enum tfd_status st;
};

struct block_pool {
	const struct scan *proto;
	const char *host_name;
	const struct piece *pc;
	struct piece_out *po;
	struct block *b;
	size_t *order; /* blocks are handed out costliest first */
	size_t n;
	/* thread id -> the index the host gives it (executor sums) */
	struct imap tids;
};

struct line_tid {
	int64_t id;
	bool events;
};

/* A line's id as its thread is made with: the one read before its first
 * event; and whether it has one (else it makes no thread). */
static int line_tid_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct line_tid *lt = ctx;

	(void)s;
	if (wt == 0 && field == 1)
		lt->id = (int64_t)v;
	else if (wt == 2 && field == 4) {
		lt->events = true;
		return 1;
	}
	return 0;
}

/* The host's index of each thread, as the lines make them in order (the
 * executor sums name a chunk's thread by it while blocks are read). */
static void host_tids(const struct scan *sc, struct imap *tids)
{
	size_t n = 0;

	for (size_t i = 0; i < sc->lines.n; i++) {
		struct line_tid lt = {0, false};

		walk(sc->lines.v[i].p, sc->lines.v[i].len, line_tid_field, &lt);
		if (lt.events && !imap_get(tids, (uint64_t)lt.id, NULL))
			imap_put(tids, (uint64_t)lt.id, n++);
	}
}

/* Every chunk is summed and every id coded (the events hold codes): the
 * step-id table's keys go, and the host takes no more chunks. */
static void drop_keys(struct scan *sc)
{
	tfd_capture_sum_exec(sc->cap, NULL, NULL);
	free(sc->sums->key);
	sc->sums->key = NULL;
	sc->fn_steps.k = NULL; /* the same array */
}

static void read_block(struct block_pool *bp, struct block *bl)
{
	struct scan sc = *bp->proto;

	sc.cap = bl->cap = tfd_capture_new();
	sc.cap->fold_exec = !(sc.opts && sc.opts->keep_other); /* as the host's */
	if (sc.sums) /* into the host's sums, under the host's thread indexes */
		tfd_capture_sum_exec(sc.cap, sc.sums, &bp->tids);
	tfd_capture_add_host(sc.cap, bp->host_name);
	sc.host_idx = 0;
	sc.released = bp->pc[bl->first].p;
	for (size_t i = bl->first; i < bl->last; i++) {
		const struct piece *pc = &bp->pc[i];

		bl->st = scan_line(&sc, sc.lines.v[pc->line], pc->whole ? NULL : pc, &bp->po[i],
				   &bl->err);
		if (bl->st) {
			tfd_err_prefix(&bl->err, "line %zu", pc->line);
			return;
		}
		if (sc.mapped)
			tfd_pages_release(&sc.released, pc->end, 0);
	}
	/* the events held back for their stats go in while the step-id
	 * table's keys are there (they go before the blocks move) */
	tfd_host_pack_pending(sc.cap, &sc.cap->hosts[0]);
}

static bool block_item(void *ctx, size_t worker, size_t i)
{
	struct block_pool *bp = ctx;

	(void)worker;
	read_block(bp, &bp->b[i]);
	return !bp->b[i].st;
}

/* Does an XEvent's field look like one: metadata_id, offset_ps,
 * duration_ps, num_occurrences (varints) or a stat (a message)? Counts
 * offset_ps, which an XStat cannot hold as a varint (its field 2 is a
 * double): the stats of an event are not taken for events. */
static int event_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	int *offsets = ctx;

	(void)v;
	(void)s;
	if (wt == 0 && (field == 1 || field == 2 || field == 3 || field == 5)) {
		*offsets += field == 2;
		return 0;
	}
	return !(wt == 2 && field == 4);
}

/* Is p (before end) the start of `need` events in a row, or of fewer that
 * end the line? An event is field 4 of a line: tag 0x22, a length, and a
 * message of event fields with an offset. */
static bool events_at(const uint8_t *p, const uint8_t *end, int need)
{
	for (int i = 0; i < need && p < end; i++) {
		uint64_t x;
		size_t n;
		int offsets = 0;

		if (*p != 0x22)
			return false;
		n = tfd_pb_varint(p + 1, end, &x);
		if (!n || x > (uint64_t)(end - p - 1 - n) ||
		    walk(p + 1 + n, (size_t)x, event_field, &offsets) != SIZE_MAX || offsets != 1)
			return false;
		p += 1 + n + x;
	}
	return true;
}

/* A likely event boundary at or after `from` (before end), or NULL: a
 * guess, confirmed when the part before it ends there. Looks at most 64 KiB
 * ahead. */
static const uint8_t *find_cut(const uint8_t *from, const uint8_t *end)
{
	const uint8_t *lim = end - from > (65536 + 1) ? from + 65536 : end - 1;

	for (const uint8_t *p = from; p < lim; p++) {
		p = memchr(p, 0x22, (size_t)(lim - p));
		if (!p)
			return NULL;
		if (events_at(p, end, 8))
			return p;
	}
	return NULL;
}

/* The header of a line (id, name, timestamp) when it comes before the
 * events, and where the events start; false otherwise. */
static bool line_head(struct span ln, struct piece *pc)
{
	const uint8_t *p = ln.p, *end = ln.p + ln.len;

	while (p < end) {
		uint64_t k, x;
		size_t n = tfd_pb_varint(p, end, &k);

		if (!n)
			return false;
		if ((k >> 3) == 4)
			return (k & 7) == 2;
		p += n;
		if ((k & 7) == 0) {
			if (!(n = tfd_pb_varint(p, end, &x)))
				return false;
			p += n;
			if ((k >> 3) == 1)
				pc->id = (int64_t)x;
			else if ((k >> 3) == 3)
				pc->ts_ns = (int64_t)x;
		} else if ((k & 7) == 2) {
			if (!(n = tfd_pb_varint(p, end, &x)) || x > (uint64_t)(end - p - n))
				return false;
			p += n;
			if ((k >> 3) == 2)
				pc->name = (struct span){p, (size_t)x};
			p += x;
		} else {
			return false;
		}
	}
	return false;
}

/* The threads a host plane is read on: the load's, at most PLANE_THREADS. */
#define PLANE_THREADS 8

static size_t plane_threads(const struct tfd_load_opts *o)
{
	size_t n = tfd_load_cores(o);

	return n < PLANE_THREADS ? n : PLANE_THREADS;
}

/* The pieces and blocks of sc's lines, or 0 when one thread reads them. */
static size_t plan_blocks(const struct scan *sc, piece_vec *pcs, struct block **out)
{
	const struct tfd_load_opts *o = sc->opts;
	size_t nthreads = plane_threads(o);
	size_t min_bytes = o && o->block_bytes ? o->block_bytes : (size_t)4 << 20;
	size_t total = 0, want, acc = 0, n = 0;
	struct block *b;
	bool *heavy;

	for (size_t i = 0; i < sc->lines.n; i++)
		total += sc->lines.v[i].len;
	if (nthreads < 2 || total < 2 * min_bytes)
		return 0;
	want = total / (4 * nthreads);
	if (want < min_bytes)
		want = min_bytes;
	/* a tf.data thread's events are kept: a byte of it costs more */
	heavy = xcalloc(sc->lines.n + 1, sizeof(*heavy));
	for (size_t i = 0; i < sc->lines.n; i++)
		heavy[i] = tfdata_line(sc->lines.v[i]);
	for (size_t i = 0; i < sc->lines.n; i++) {
		struct span ln = sc->lines.v[i];
		struct piece whole = {i, ln.p, ln.p + ln.len, true, 0, 0, {NULL, 0}};
		struct piece head;
		size_t before = pcs->n;

		memset(&head, 0, sizeof(head));

		if (ln.len >= 2 * want && line_head(ln, &head)) {
			/* parts of about `want` bytes from guessed event boundaries */
			const uint8_t *at = ln.p, *end = ln.p + ln.len, *cut;

			head.whole = false;
			head.line = i;
			while (end - at >= (ptrdiff_t)(2 * want) &&
			       (cut = find_cut(at + want, end))) {
				head.p = at;
				head.end = cut;
				vec_push(pcs, head);
				at = cut;
			}
			if (pcs->n > before) {
				head.p = at;
				head.end = end;
				vec_push(pcs, head);
			}
		}
		if (pcs->n == before)
			vec_push(pcs, whole);
	}
	b = xcalloc(pcs->n + 1, sizeof(*b));
	for (size_t i = 0; i < pcs->n; i++) {
		size_t bytes = (size_t)(pcs->v[i].end - pcs->v[i].p);

		if (!acc)
			b[n].first = i;
		acc += bytes;
		b[n].cost += bytes * (heavy[pcs->v[i].line] ? 3 : 1);
		if (acc >= want || i + 1 == pcs->n) {
			b[n++].last = i + 1;
			acc = 0;
		}
	}
	free(heavy);
	if (n < 2) {
		free(b);
		return 0;
	}
	*out = b;
	return n;
}

/* Read the blocks on up to `jobs` threads and move them into the host in
 * order. *redo: a guessed cut was wrong (the host is untouched; read the
 * plane on one thread). */
static enum tfd_status read_lines_parallel(struct scan *sc, const struct piece *pc, size_t npc,
					   struct block *b, size_t n, bool *redo,
					   struct tfd_err *err)
{
	struct tfd_host *h;
	struct block_pool bp;
	size_t nthreads = plane_threads(sc->opts), limit = tfd_max_events(sc->opts);
	enum tfd_status st = TFD_OK;

	memset(&bp, 0, sizeof(bp));
	bp.proto = sc;
	bp.host_name = sc->cap->hosts[sc->host_idx].name;
	bp.pc = pc;
	bp.po = xcalloc(npc + 1, sizeof(*bp.po));
	bp.b = b;
	bp.n = n;
	/* costliest first, so that the last block to finish is a short one
	 * (the tf.data threads' lines, where events are kept, had come last
	 * and left the other cores idle for a third of the read) */
	bp.order = xmalloc(n * sizeof(*bp.order));
	for (size_t i = 0; i < n; i++) {
		/* a few dozen blocks at the default size: insertion, stable
		 * (tiny test blocks, by the thousand, keep their order) */
		size_t j = i;

		for (; n <= 256 && j > 0 && b[bp.order[j - 1]].cost < b[i].cost; j--)
			bp.order[j] = bp.order[j - 1];
		bp.order[j] = i;
	}
	if (sc->sums)
		host_tids(sc, &bp.tids);
	/* after a failed block the later ones are not needed */
	tfd_pool_run(n, nthreads, bp.order, true, block_item, &bp);
	*redo = false;
	for (size_t i = 0; i < npc; i++)
		*redo |= bp.po[i].misaligned;
	/* before the blocks move into the host (a plane read again needs
	 * the keys) */
	if (!*redo && sc->sums)
		drop_keys(sc);
	for (size_t i = 0; i < n; i++) {
		if (!*redo && !st && b[i].st) {
			st = b[i].st;
			*err = b[i].err;
		}
		if (!*redo && !st && b[i].cap) {
			h = &sc->cap->hosts[sc->host_idx];
			if (h->nevents + b[i].cap->hosts[0].nevents > limit) {
				st = tfd_fail(err, TFD_E_LIMIT,
					      "more than %zu events on the host plane", limit);
				tfd_err_prefix(err, "line %zu", pc[b[i].first].line);
			} else {
				tfd_host_absorb(sc->cap, h, b[i].cap);
			}
			/* a part that held the line's display_name renames its thread,
			 * as the name's arrival does when the line is read whole */
			for (size_t k = b[i].first; !st && k < b[i].last; k++)
				if (bp.po[k].display_name.len) {
					struct span dn = bp.po[k].display_name;
					uint32_t t = tfd_host_thread(sc->cap, h, pc[k].id, NULL);

					h->threads[t].name = tfd_arena_intern(
					    &sc->cap->arena, (const char *)dn.p, dn.len);
				}
		}
		tfd_capture_free(b[i].cap);
	}
	free(bp.po);
	free(bp.order);
	imap_free(&bp.tids);
	/* the readers' threads' heaps keep what the blocks grew through
	 * (below glibc's mmap threshold, 1 MB): given back, 1-2 MB at the
	 * phases after */
	malloc_trim(0);
	return st;
}

/* An index by id of the small ids TensorFlow uses (-1: none) for a
 * metadata map, *n entries; NULL when the map is empty or an id is large
 * (lookups then go through the map). */
static int32_t *dense_index(const struct imap *m, size_t *n)
{
	uint64_t maxid = 0;
	int32_t *ix;

	*n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].val1 && m->s[i].key > maxid)
			maxid = m->s[i].key;
	if (!m->n || maxid >= (1u << 20))
		return NULL;
	*n = (size_t)maxid + 1;
	ix = xmalloc(*n * sizeof(*ix));
	for (size_t i = 0; i < *n; i++)
		ix[i] = -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->s[i].val1)
			ix[m->s[i].key] = (int32_t)(m->s[i].val1 - 1);
	return ix;
}

/* ---- the pre-pass on several threads ---------------------------------------
 *
 * The tf.data threads' lines are searched for function step ids whole, one
 * line at a time on each thread (longest first), each thread into a set
 * of its own; the sets are then merged. The pre-pass reads only: the host
 * is not touched (threads are made by the lines' main read), so the order
 * the lines are read in changes nothing but the time. */
struct line_len {
	size_t len, line;
};

struct prepass_pool {
	const struct scan *proto;
	const size_t *lines;	/* item k: the k-th tf.data line, in line order */
	struct fn_steps *steps; /* per worker, a set of its own */
	struct tfd_err *errs;	/* per item */
	enum tfd_status *sts;	/* per item */
};

static bool prepass_item(void *ctx, size_t worker, size_t k)
{
	struct prepass_pool *pp = ctx;
	struct scan sc = *pp->proto;
	size_t li = pp->lines[k];
	enum tfd_status st;

	sc.prepass = true;
	sc.fn_steps = pp->steps[worker];
	sc.pre_released = sc.lines.v[li].p;
	memset(&pp->errs[k], 0, sizeof(pp->errs[k]));
	st = scan_line(&sc, sc.lines.v[li], NULL, NULL, &pp->errs[k]);
	pp->steps[worker] = sc.fn_steps;
	if (st) {
		tfd_err_prefix(&pp->errs[k], "line %zu", li);
		pp->sts[k] = st;
		return false; /* the lines before it are still read */
	}
	if (sc.mapped)
		tfd_pages_release(&sc.pre_released, sc.lines.v[li].p + sc.lines.v[li].len, 0);
	return true;
}

/* Longest first; equal lengths in line order. */
static int by_len_desc(const void *a, const void *b)
{
	const struct line_len *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? 1 : -1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static enum tfd_status prepass(struct scan *sc, struct tfd_err *err)
{
	struct prepass_pool pp;
	size_t n = 0, nthreads = plane_threads(sc->opts), failed;
	struct line_len *bylen = xmalloc((sc->lines.n + 1) * sizeof(*bylen));
	size_t *lines = xmalloc((sc->lines.n + 1) * sizeof(*lines));
	size_t *order = xmalloc((sc->lines.n + 1) * sizeof(*order));
	enum tfd_status st = TFD_OK;

	/* item k is the k-th tf.data line (the others are skipped by length:
	 * untouched); items are handed out longest first */
	for (size_t i = 0; i < sc->lines.n; i++)
		if (tfdata_line(sc->lines.v[i])) {
			lines[n] = i;
			bylen[n] = (struct line_len){sc->lines.v[i].len, n};
			n++;
		}
	qsort(bylen, n, sizeof(*bylen), by_len_desc);
	for (size_t k = 0; k < n; k++)
		order[k] = bylen[k].line;
	if (nthreads > n)
		nthreads = n ? n : 1;
	memset(&pp, 0, sizeof(pp));
	pp.proto = sc;
	pp.lines = lines;
	pp.steps = xcalloc(nthreads, sizeof(*pp.steps));
	pp.steps[0] = sc->fn_steps; /* the others start empty */
	pp.errs = xcalloc(n + 1, sizeof(*pp.errs));
	pp.sts = xcalloc(n + 1, sizeof(*pp.sts));
	/* after a failed line the later ones are not needed */
	failed = tfd_pool_run(n, nthreads, order, true, prepass_item, &pp);
	/* the largest set takes in the others (the lines holding the
	 * functions are often one: then nothing is copied) */
	{
		size_t big = 0;

		for (size_t t = 0; t < nthreads; t++) {
			fn_steps_flush(&pp.steps[t]);
			if (pp.steps[t].n > pp.steps[big].n)
				big = t;
		}
		sc->fn_steps = pp.steps[big];
		pp.steps[big] = (struct fn_steps){0};
	}
	for (size_t t = 0; t < nthreads; t++) {
		const struct fn_steps *f = &pp.steps[t];

		/* sized first (f's slots, read in order, give its ids in the
		 * order of their home slots in any table: no pile-up) */
		fn_steps_reserve(&sc->fn_steps, sc->fn_steps.n + f->n);
		for (size_t i = 0; i < f->cap; i++)
			if (f->k[i])
				fn_steps_add(&sc->fn_steps, f->k[i]);
		if (f->has_zero)
			fn_steps_add(&sc->fn_steps, 0);
		fn_steps_free(&pp.steps[t]);
	}
	sc->fn_steps.has_last = false;
	fn_steps_fit(&sc->fn_steps);
	if (failed < n) {
		st = pp.sts[failed];
		*err = pp.errs[failed];
	}
	free(pp.steps);
	free(pp.errs);
	free(pp.sts);
	free(bylen);
	free(lines);
	free(order);
	return st;
}

/* A plane with dataset functions: their step ids first (the pre-pass),
 * and, unless every event is kept, the table their executor chunks are
 * summed in as they are read (the set's keys, a value per slot). */
static enum tfd_status functions_first(struct scan *sc, struct tfd_err *err)
{
	enum tfd_status st = prepass(sc, err);

	if (st || (sc->opts && sc->opts->keep_other))
		return st;
	fn_steps_flush(&sc->fn_steps);
	sc->sums = xcalloc(1, sizeof(*sc->sums));
	sc->sums->key = sc->fn_steps.k;
	sc->sums->cap = sc->fn_steps.cap;
	sc->sums->has_zero = sc->fn_steps.has_zero;
	sc->sums->val = xcalloc_written(sc->fn_steps.cap ? sc->fn_steps.cap : 1, sizeof(uint64_t));
	sc->sums->coded = true;
	tfd_capture_sum_exec(sc->cap, sc->sums, NULL);
	return TFD_OK;
}

/* The plane's lines into the host: in blocks on several threads, or one by
 * one (a small plane, or one whose guessed cuts were wrong). */
static enum tfd_status read_lines(struct scan *sc, struct tfd_err *err)
{
	piece_vec pcs = {0};
	struct block *blocks = NULL;
	size_t nblocks = plan_blocks(sc, &pcs, &blocks);
	bool redo = false;
	enum tfd_status st = TFD_OK;

	if (nblocks)
		st = read_lines_parallel(sc, pcs.v, pcs.n, blocks, nblocks, &redo, err);
	free(blocks);
	vec_free(&pcs);
	if (nblocks && !redo)
		return st;
	if (redo && sc->sums) {
		/* the blocks' chunks went in: the lines are read again */
		memset(sc->sums->val, 0, (sc->sums->cap ? sc->sums->cap : 1) * sizeof(uint64_t));
		sc->sums->zero_val = 0;
	}
	for (size_t i = 0; i < sc->lines.n; i++) {
		st = scan_line(sc, sc->lines.v[i], NULL, NULL, err);
		if (st) {
			tfd_err_prefix(err, "line %zu", i);
			return st;
		}
		if (sc->mapped)
			tfd_pages_release(&sc->released, sc->lines.v[i].p + sc->lines.v[i].len, 0);
	}
	return TFD_OK;
}

static enum tfd_status read_host_plane(struct tfd_capture *cap, size_t host_idx, struct span plane,
				       const struct tfd_load_opts *opts, bool mapped,
				       const uint8_t *file_base, struct tfd_err *err)
{
	struct scan sc;
	struct tfd_arena scratch;
	enum tfd_status st = TFD_OK;

	memset(&sc, 0, sizeof(sc));
	sc.cap = cap;
	sc.host_idx = host_idx;
	sc.opts = opts;
	sc.mapped = mapped;
	sc.released = file_base;
	tfd_arena_init(&scratch);
	sc.alloc.alloc = pb_alloc;
	sc.alloc.free = pb_free;
	sc.alloc.allocator_data = &scratch;
	if (walk(plane.p, plane.len, plane_collect, &sc) != SIZE_MAX || sc.bad) {
		st = tfd_fail(err, TFD_E_FORMAT, "corrupt XSpace protobuf: %s in plane '/host:CPU'",
			      sc.bad ? sc.bad : "malformed field");
		goto out;
	}
	for (size_t i = 0; i < sc.metas.n && !sc.has_functions; i++)
		sc.has_functions = sc.metas.v[i].kind == TFD_EV_FUNCTION;
	sc.meta_by_id = dense_index(&sc.ev_meta, &sc.nmeta_by_id);
	sc.smeta_by_id = dense_index(&sc.stat_meta, &sc.nsmeta_by_id);
	if (sc.has_functions)
		st = functions_first(&sc, err);
	if (!st)
		st = read_lines(&sc, err);
out:
	/* the pre-pass's step ids are those of functions kept on the host */
	if (!st && !(opts && opts->keep_other))
		cap->hosts[host_idx].exec_filtered = true;
	if (sc.sums) {
		/* the events held back for their stats are packed (summed) now,
		 * while the table takes them */
		tfd_host_pack_pending(cap, &cap->hosts[host_idx]);
		drop_keys(&sc);
		if (!st && !cap->hosts[host_idx].exec_sums)
			cap->hosts[host_idx].exec_sums = sc.sums;
		else
			tfd_exec_sums_free(sc.sums);
	}
	tfd_arena_release(&scratch);
	imap_free(&sc.ev_meta);
	imap_free(&sc.stat_meta);
	fn_steps_free(&sc.fn_steps);
	free(sc.meta_by_id);
	free(sc.smeta_by_id);
	vec_free(&sc.metas);
	vec_free(&sc.smetas);
	vec_free(&sc.lines);
	return st;
}

enum tfd_status tfd_xspace_read(struct tfd_capture *cap, const uint8_t *data, size_t len,
				const char *path, const char *default_host,
				const struct tfd_load_opts *opts, bool mapped, struct tfd_err *err)
{
	struct space_scan sc;
	enum tfd_status st = TFD_OK;
	size_t bad, host_idx;
	struct tfd_host *h;
	char *hostname;

	(void)path;
	cap->fold_exec = !(opts && opts->keep_other);
	memset(&sc, 0, sizeof(sc));
	bad = walk(data, len, space_field, &sc);
	if (bad != SIZE_MAX) {
		if (sc.bad_field)
			st = tfd_fail(err, TFD_E_FORMAT,
				      "not an XSpace protobuf (unexpected field %u at offset %zu)",
				      sc.bad_field, bad);
		else
			st = tfd_fail(err, TFD_E_FORMAT,
				      "truncated or corrupt XSpace protobuf at offset %zu of %zu",
				      bad, len);
		goto out;
	}
	if (sc.nplanes == 0) {
		st = tfd_fail(err, TFD_E_FORMAT, "not an XSpace capture (no planes)");
		goto out;
	}
	/* the host's name whole, however long */
	if (sc.has_hostname && sc.hostname.len > 0) {
		hostname = xmalloc(sc.hostname.len + 1);
		memcpy(hostname, sc.hostname.p, sc.hostname.len);
		hostname[sc.hostname.len] = '\0';
	} else {
		hostname = xstrdup(default_host ? default_host : "");
	}
	h = tfd_capture_add_host(cap, hostname);
	free(hostname);
	host_idx = cap->nhosts - 1;
	h->format = TFD_FMT_XSPACE;
	h->planes = xcalloc(sc.nplanes, sizeof(*h->planes));
	h->nplanes = sc.nplanes;
	for (size_t i = 0; i < sc.nplanes; i++) {
		struct plane_scan ps;
		struct tfd_plane_info *pi;

		memset(&ps, 0, sizeof(ps));
		bad = walk(sc.planes[i].p, sc.planes[i].len, plane_field, &ps);
		if (bad != SIZE_MAX) {
			st = tfd_fail(err, TFD_E_FORMAT,
				      "corrupt XSpace protobuf: plane %zu is malformed at byte %zu",
				      i, bad);
			goto out;
		}
		h = &cap->hosts[host_idx];
		pi = &h->planes[i];
		pi->name = tfd_arena_intern(&cap->arena, (const char *)ps.name.p, ps.name.len);
		pi->nlines = ps.nlines;
		if (strcmp(pi->name, HOST_PLANE) == 0) {
			size_t before;

			/* the function step ids of a host's events are codes
			 * of its one table (struct tfd_exec_sums) */
			if (h->has_host_plane) {
				st = tfd_fail(err, TFD_E_FORMAT,
					      "corrupt XSpace protobuf: a second '" HOST_PLANE
					      "' plane (plane %zu)",
					      i);
				goto out;
			}
			tfd_host_pack_pending(cap, h);
			before = h->nevents;
			st = read_host_plane(cap, host_idx, sc.planes[i], opts, mapped, data, err);
			if (st)
				goto out;
			/* what was kept, the last chunk run folded */
			tfd_host_pack_pending(cap, &cap->hosts[host_idx]);
			pi = &cap->hosts[host_idx].planes[i];
			pi->nevents = cap->hosts[host_idx].nevents - before;
			h = &cap->hosts[host_idx];
			h->has_host_plane = true;
			h->planes[i].decoded = true;
		}
	}
out:
	free(sc.planes);
	return st;
}

enum tfd_status tfd_trace_read(struct tfd_capture *cap, const uint8_t *data, size_t len,
			       const char *path, const char *default_host,
			       const struct tfd_load_opts *opts, struct tfd_err *err)
{
	struct tfd_arena scratch;
	ProtobufCAllocator alloc;
	Tfdpb__Trace *tr;
	struct tfd_host *h;
	size_t host_idx;
	enum tfd_status st = TFD_OK;

	(void)path;
	tfd_arena_init(&scratch);
	alloc.alloc = pb_alloc;
	alloc.free = pb_free;
	alloc.allocator_data = &scratch;
	tr = tfdpb__trace__unpack(&alloc, len, data);
	if (!tr) {
		tfd_arena_release(&scratch);
		return tfd_fail(err, TFD_E_FORMAT, "truncated or corrupt TF 2.0 Trace protobuf");
	}
	h = tfd_capture_add_host(cap, default_host);
	host_idx = cap->nhosts - 1;
	h->format = TFD_FMT_TF2_TRACE;
	h->planes = xcalloc(tr->n_devices ? tr->n_devices : 1, sizeof(*h->planes));
	for (size_t d = 0; d < tr->n_devices; d++) {
		const Tfdpb__Device *dev = tr->devices[d]->value;
		struct tfd_plane_info *pi = &h->planes[h->nplanes++];

		pi->name = tfd_arena_intern_cstr(&cap->arena, dev && dev->name ? dev->name : "");
		pi->nlines = dev ? dev->n_resources : 0;
		/* a Trace has no planes to skip: every device's events are read */
		pi->decoded = true;
	}
	for (size_t i = 0; i < tr->n_trace_events; i++) {
		const Tfdpb__TraceEvent *te = tr->trace_events[i];
		const Tfdpb__Device *dev = NULL;
		const char *rname = "";
		int64_t start, end;
		uint32_t th;
		struct tfd_event *e;

		for (size_t d = 0; d < tr->n_devices; d++)
			if (tr->devices[d]->key == te->device_id)
				dev = tr->devices[d]->value;
		/* host activity lives on the device whose name ends in /host:CPU or
		 * /device:CPU:0 (TF 2.0 named both) */
		if (!dev || !dev->name ||
		    (!strstr(dev->name, "/host:CPU") && !strstr(dev->name, "device:CPU")))
			continue;
		for (size_t r = 0; r < dev->n_resources; r++)
			if (dev->resources[r]->key == te->resource_id && dev->resources[r]->value)
				rname = dev->resources[r]->value->name;
		if (te->timestamp_ps / 1000 > TFD_MAX_TIME_NS ||
		    te->duration_ps / 1000 > TFD_MAX_DURATION_NS) {
			st = tfd_fail(err, TFD_E_FORMAT, "event %zu: time out of range", i);
			goto out;
		}
		h = &cap->hosts[host_idx];
		h->has_host_plane = true;
		start = (int64_t)(te->timestamp_ps / 1000);
		end = start + (int64_t)((te->timestamp_ps % 1000 + te->duration_ps) / 1000);
		tfd_host_note(cap, h, false, 0, start, end);
		if (!tfd_keep_kind(tfd_event_kind_of(te->name ? te->name : ""), opts))
			continue;
		th = tfd_host_thread(cap, h, ((int64_t)te->device_id << 32) | te->resource_id,
				     rname);
		e = tfd_host_add_event(cap, h, th, te->name ? te->name : "", start, end - start);
		for (size_t a = 0; a < te->n_args; a++)
			if (te->args[a]->key && te->args[a]->value)
				tfd_event_set_stat_str(cap, e, te->args[a]->key,
						       te->args[a]->value);
	}
out:
	tfd_arena_release(&scratch);
	return st;
}
