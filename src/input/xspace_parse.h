/* xspace_parse.h - the XEvent and XStat parsers the host plane's scan
 * (xspace_scan.c) and the source check's decoding (xspace_source.c)
 * share: an event's fields, its stats walked and applied to an event,
 * the metadata looked up by id. Static and inline, as the scanner's inner
 * loop needs them (internal to src/input). */
#ifndef TFD_XSPACE_PARSE_H
#define TFD_XSPACE_PARSE_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tfd/capture.h"
#include "xspace_impl.h"

/* One XStat: its metadata id and value. */
struct xstat {
	uint64_t mid;
	int type; /* 2 double, 3 uint64, 4 int64, 5 str, 7 ref, 0 none */
	uint64_t u;
	struct span str;
};

static inline int parse_stat(const uint8_t *p, const uint8_t *end, struct xstat *st)
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

/* parser: one case per stat a tf.data event carries (id, parent_id,
 * element_id, group_id, parameters); the cases are the schema. */
static inline void apply_value(struct scan *sc, struct tfd_event *e, const struct smeta *sm,
			       const struct xstat *x)
{
	struct tfd_capture *cap = sc->cap;
	const struct smeta *ref;
	char buf[64];

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
			tfd_event_set_stat_str_as(cap, e, (enum tfd_stat)sm->code, sm->name, buf);
		}
		break;
	case 2:
		if (e->kind == TFD_EV_ITERATOR) {
			double d;

			memcpy(&d, &x->u, sizeof(d));
			snprintf(buf, sizeof(buf), "%g", d);
			tfd_event_set_stat_str_as(cap, e, (enum tfd_stat)sm->code, sm->name, buf);
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
		tfd_event_set_stat_str_as(cap, e, (enum tfd_stat)sm->code, sm->name, str);
		if (str != small)
			free(str);
		break;
	}
	case 7: /* ref: the value is the name of another stat metadata */
		if ((ref = smeta_of(sc, x->u)))
			tfd_event_set_stat_str_as(cap, e, (enum tfd_stat)sm->code, sm->name,
						  ref->name);
		break;
	default:
		break;
	}
}

/* A stat of an iterator event whose signature is cached by value (struct
 * param_step): an integer, a double, a short string, a reference to
 * another stat's name (TensorFlow's own captures give most of their
 * parameters' texts so: `shapes`, `types`, `autotune_mode`, ...). */
static inline bool param_cached(const struct scan *sc, const struct tfd_event *e,
				const struct smeta *sm, const struct xstat *x)
{
	return e->kind == TFD_EV_ITERATOR && sm->code == TFD_STAT_PARAM &&
	       (x->type == 2 || x->type == 3 || x->type == 4 || x->type == 7 ||
		(x->type == 5 && x->str.len < PARAM_SHORT)) &&
	       !(sc->opts && sc->opts->xspace_two_walks);
}

static inline void apply_xstat(struct scan *sc, struct tfd_event *e, const struct xstat *x)
{
	const struct smeta *sm = smeta_of(sc, x->mid);
	struct param_step *ps = NULL;

	if (!sm)
		return;
	if (param_cached(sc, e, sm, x)) {
		/* a parameter from a stat that gave this signature before */
		uint64_t v = x->u;
		char tail[PARAM_SHORT - 8] = {0};

		if (x->type == 5) {
			/* the string's first 8 bytes as v, the rest in tail */
			size_t len = x->str.len;

			v = 0;
			memcpy(&v, x->str.p, len < 8 ? len : 8);
			if (len > 8)
				memcpy(tail, x->str.p + 8, len - 8u);
		}
		if (!sc->param_cache)
			sc->param_cache = xcalloc(PARAM_CACHE, sizeof(*sc->param_cache));
		ps = &sc->param_cache[imap_hash((uint64_t)(uintptr_t)e->sig ^
						imap_hash(x->mid ^ imap_hash(v))) %
				      (PARAM_CACHE / PARAM_WAYS) * PARAM_WAYS];
		for (int w = 0; w < PARAM_WAYS; w++)
			if (ps[w].from == e->sig && ps[w].mid == x->mid && ps[w].v == v &&
			    ps[w].type == x->type && memcmp(ps[w].tail, tail, sizeof(tail)) == 0) {
				e->sig = ps[w].to;
				return;
			}
		/* the set's oldest goes */
		memmove(ps + 1, ps, (PARAM_WAYS - 1) * sizeof(*ps));
		ps->from = e->sig;
		ps->mid = x->mid;
		ps->v = v;
		ps->type = x->type;
		memcpy(ps->tail, tail, sizeof(tail));
	}
	apply_value(sc, e, sm, x); /* (one call: made inline) */
	if (ps)
		ps->to = e->sig;
}

/* The event metadata of id mid, or NULL. */
static inline const struct meta *meta_of(const struct scan *sc, uint64_t mid)
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

static inline struct stat_walk stat_walk(const uint8_t *stats, const uint8_t *end)
{
	struct stat_walk w = {stats ? stats : end, end, NULL, 0, false, 0, 0};

	return w;
}

/* The next stat, false at the end. */
static inline bool next_stat(struct stat_walk *w)
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
			/* fields one by one: a memset here compiled to a `rep
			 * stos`, whose start-up was 4 % of an iterator-dense run */
			xs->mid = w->smid;
			xs->type = *p >> 3;
			xs->u = u;
			xs->str.p = NULL;
			xs->str.len = 0;
			return 0;
		}
	}
	return parse_stat(w->st, w->st + w->len, xs);
}

/* parser: an XEvent's fields in wire order: its metadata id, offset and
 * duration (ps), and where its stats start (*stats: the first stat
 * field's, NULL none); false when its framing is broken. */
static inline bool event_fields(const uint8_t *p, const uint8_t *end, uint64_t *mid, uint64_t *off,
				uint64_t *dur, const uint8_t **stats)
{
	uint64_t k = 0, x = 0;
	size_t n;

	while (p < end) {
		const uint8_t *field = p;

		n = tfd_pb_varint(p, end, &k);
		if (!n)
			return false;
		p += n;
		if ((k & 7) == 0) {
			n = tfd_pb_varint(p, end, &x);
			if (!n)
				return false;
			p += n;
			if ((k >> 3) == 1)
				*mid = x;
			else if ((k >> 3) == 2)
				*off = x;
			else if ((k >> 3) == 3)
				*dur = x;
		} else if ((k & 7) == 2) {
			n = tfd_pb_varint(p, end, &x);
			if (!n || x > (uint64_t)(end - p - n))
				return false;
			p += n;
			if ((k >> 3) == 4 && !*stats)
				*stats = field;
			p += x;
		} else if ((k & 7) == 1 && end - p >= 8) {
			p += 8;
		} else if ((k & 7) == 5 && end - p >= 4) {
			p += 4;
		} else {
			return false;
		}
	}
	return true;
}

/* A line's header fields (a walk callback: the last of each wins). */
struct line_hdr {
	int64_t id, ts_ns;
	struct span name, display_name;
};

static inline int line_hdr_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
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

#endif
