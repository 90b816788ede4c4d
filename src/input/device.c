/* device.c - an XSpace device plane ("/device:GPU:N", "/device:TPU:N")
 * read in place into the host's device spans (struct tfd_device): per
 * event its kind (by its metadata's name), start, end, group_id and, for a
 * host-to-device copy, the bytes its memcpy_details stat says. Only the
 * lines holding the device's own events are read (tfd_dev_line_wanted);
 * the lines TensorFlow derives from them are skipped by length. */
#include <stdio.h>
#include <string.h>

#include "input_impl.h"
#include "tfd/imap.h"
#include "xspace_impl.h"

struct dplane {
	struct span name;
	VEC(struct span) lines;
	struct imap kinds; /* event metadata id -> kind + 1 */
	/* stat metadata ids of group_id and memcpy_details */
	struct imap group_mids, memcpy_mids;
	bool tpu;
	const char *bad;
};

struct kv {
	uint64_t key;
	struct span val;
	bool has_val;
};

static int kv_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct kv *kv = ctx;

	if (field == 1 && wt == 0)
		kv->key = v;
	else if (field == 2 && wt == 2) {
		kv->val = s;
		kv->has_val = true;
	}
	return 0;
}

/* XEventMetadata / XStatMetadata: id (1) and name (2). */
struct idname {
	uint64_t id;
	struct span name;
};

static int idname_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct idname *m = ctx;

	if (field == 1 && wt == 0)
		m->id = v;
	else if (field == 2 && wt == 2)
		m->name = s;
	return 0;
}

static bool entry(struct span s, struct idname *m)
{
	struct kv kv = {0};

	memset(m, 0, sizeof(*m));
	if (tfd_pb_walk(s.p, s.len, kv_field, &kv) != SIZE_MAX)
		return false;
	if (!kv.has_val) /* an empty metadata message: the key alone */
		m->id = kv.key;
	else if (tfd_pb_walk(kv.val.p, kv.val.len, idname_field, m) != SIZE_MAX)
		return false;
	if (!m->id)
		m->id = kv.key;
	return true;
}

static bool span_is(struct span s, const char *what)
{
	return s.len == strlen(what) && memcmp(s.p, what, s.len) == 0;
}

static int plane_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct dplane *d = ctx;
	struct idname m;

	(void)v;
	if (wt != 2)
		return 0;
	if (field == 2) {
		d->name = s;
	} else if (field == 3) {
		vec_push(&d->lines, s);
	} else if (field == 4 || field == 5) {
		if (!entry(s, &m)) {
			d->bad =
			    field == 4 ? "a malformed event metadata" : "a malformed stat metadata";
			return 1;
		}
		if (field == 4)
			imap_put(
			    &d->kinds, m.id,
			    (size_t)tfd_dev_kind_of((const char *)m.name.p, m.name.len, d->tpu) +
				1);
		else if (span_is(m.name, "group_id"))
			imap_put(&d->group_mids, m.id, 0);
		else if (span_is(m.name, "memcpy_details"))
			imap_put(&d->memcpy_mids, m.id, 0);
	}
	return 0;
}

/* A line's header: its name and timestamp. */
struct dline {
	struct span name;
	int64_t ts_ns;
};

static int line_head(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct dline *l = ctx;

	if (field == 2 && wt == 2)
		l->name = s;
	else if (field == 3 && wt == 0)
		l->ts_ns = (int64_t)v;
	return 0;
}

struct dev_ev {
	const struct dplane *d;
	uint64_t mid;
	int64_t off_ps, dur_ps;
	bool has_group;
	int64_t group;
	uint64_t bytes;
};

static int stat_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct dev_ev *e = ctx;

	if (field == 1 && wt == 0)
		e->mid = v;
	else if ((field == 3 || field == 4) && wt == 0) {
		e->group = (int64_t)v;
		e->has_group = true;
	} else if (field == 5 && wt == 2) {
		e->bytes = tfd_memcpy_bytes((const char *)s.p, s.len);
	}
	return 0;
}

static int event_field(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct dev_ev *e = ctx;

	if (field == 1 && wt == 0)
		e->mid = v;
	else if (field == 2 && wt == 0)
		e->off_ps = (int64_t)v;
	else if (field == 3 && wt == 0)
		e->dur_ps = (int64_t)v;
	else if (field == 4 && wt == 2) {
		struct dev_ev st = {.d = e->d};
		bool group, memcpy;

		/* the stat's metadata id comes first as TensorFlow writes it;
		 * a stat of another name is skipped whole */
		if (tfd_pb_walk(s.p, s.len, stat_field, &st) != SIZE_MAX)
			return 1;
		group = imap_get(&e->d->group_mids, st.mid, NULL);
		memcpy = imap_get(&e->d->memcpy_mids, st.mid, NULL);
		if (group && st.has_group) {
			e->has_group = true;
			e->group = st.group;
		} else if (memcpy) {
			e->bytes = st.bytes;
		}
	}
	return 0;
}

struct line_read {
	const struct dplane *d;
	struct tfd_host *h;
	int64_t ts_ns;
	bool bad;
};

static int line_event(void *ctx, uint32_t field, int wt, uint64_t v, struct span s)
{
	struct line_read *lr = ctx;
	struct dev_ev e = {.d = lr->d};
	struct tfd_dev_span sp;
	size_t kind;

	(void)v;
	if (field != 4 || wt != 2)
		return 0;
	if (tfd_pb_walk(s.p, s.len, event_field, &e) != SIZE_MAX) {
		lr->bad = true;
		return 1;
	}
	/* an event without metadata, or of an unknown one, is not typed */
	if (!imap_get(&lr->d->kinds, e.mid, &kind) || e.dur_ps < 0 || e.off_ps < 0 ||
	    e.off_ps / 1000 > (int64_t)TFD_MAX_TIME_NS)
		return 0;
	sp.start_ns = lr->ts_ns + e.off_ps / 1000;
	sp.end_ns = sp.start_ns + (e.dur_ps / 1000 < (int64_t)TFD_MAX_DURATION_NS
				       ? e.dur_ps / 1000
				       : (int64_t)TFD_MAX_DURATION_NS);
	sp.kind = (uint8_t)(kind - 1);
	sp.has_group = e.has_group;
	sp.group = e.group;
	if (sp.kind == TFD_DEV_H2D) {
		lr->h->dev.h2d_bytes += e.bytes;
		lr->h->dev.nh2d++;
	}
	if (sp.end_ns > sp.start_ns)
		tfd_device_add(lr->h, &sp);
	return 0;
}

static void dplane_free(struct dplane *d)
{
	vec_free(&d->lines);
	imap_free(&d->kinds);
	imap_free(&d->group_mids);
	imap_free(&d->memcpy_mids);
}

enum tfd_status tfd_xspace_read_device(struct tfd_host *h, const uint8_t *p, size_t len,
				       const char *plane_name, struct tfd_err *err)
{
	struct dplane d;
	bool streams = false, ops = false;
	enum tfd_status st = TFD_OK;
	size_t before = h->dev.n;

	memset(&d, 0, sizeof(d));
	d.tpu = strstr(plane_name, "TPU") != NULL;
	if (tfd_pb_walk(p, len, plane_field, &d) != SIZE_MAX) {
		st = tfd_fail(err, TFD_E_FORMAT, "corrupt XSpace protobuf: %s in plane '%s'",
			      d.bad ? d.bad : "a malformed field", plane_name);
		goto out;
	}
	for (size_t i = 0; i < d.lines.n; i++) {
		struct dline l = {0};

		if (tfd_pb_walk(d.lines.v[i].p, d.lines.v[i].len, line_head, &l) != SIZE_MAX) {
			st =
			    tfd_fail(err, TFD_E_FORMAT,
				     "corrupt XSpace protobuf: line %zu of plane '%s' is malformed",
				     i, plane_name);
			goto out;
		}
		streams |= l.name.len >= 8 && memcmp(l.name.p, "Stream #", 8) == 0;
		ops |= span_is(l.name, "XLA Ops");
	}
	for (size_t i = 0; i < d.lines.n; i++) {
		struct dline l = {0};
		struct line_read lr = {.d = &d, .h = h};

		tfd_pb_walk(d.lines.v[i].p, d.lines.v[i].len, line_head, &l);
		if (!tfd_dev_line_wanted((const char *)l.name.p, l.name.len, streams, ops))
			continue;
		if (l.ts_ns < -(int64_t)TFD_MAX_TIME_NS || l.ts_ns > (int64_t)TFD_MAX_TIME_NS)
			continue;
		lr.ts_ns = l.ts_ns;
		tfd_pb_walk(d.lines.v[i].p, d.lines.v[i].len, line_event, &lr);
		if (lr.bad) {
			st = tfd_fail(err, TFD_E_FORMAT,
				      "corrupt XSpace protobuf: an event of line %zu of plane '%s' "
				      "is malformed",
				      i, plane_name);
			goto out;
		}
	}
	h->dev.nplanes++;
	h->dev.tpu |= d.tpu;
out:
	if (st)
		h->dev.n = before;
	dplane_free(&d);
	return st;
}
