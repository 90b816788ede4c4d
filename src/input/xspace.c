/* xspace.c - XSpace (*.xplane.pb) reader; the only user of protobuf-c.
 *
 * The top level is walked by hand so that planes are decoded one at a time
 * and device planes are skipped by length without decoding: captures reach
 * 1-2 GB and almost all of it is device activity. The "/host:CPU" plane is
 * unpacked with protobuf-c into a scratch arena that is dropped as soon as
 * its events are copied into the capture model.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

#include "input_impl.h"
#include "tfd/imap.h"
#include "xplane.pb-c.h"

#define HOST_PLANE "/host:CPU"

struct span {
	const uint8_t *p;
	size_t len;
};

static size_t varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (size_t i = 0; i < 10 && p + i < end; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

/* Walk one message level. For each field calls back with its number, wire
 * type and (for length-delimited fields) its bytes. Returns the offset of
 * the first malformed byte, or SIZE_MAX when the message is well framed. */
typedef int (*field_fn)(void *ctx, uint32_t field, int wt, uint64_t v, struct span s);

static size_t walk(const uint8_t *p, size_t len, field_fn fn, void *ctx)
{
	const uint8_t *start = p, *end = p + len;

	while (p < end) {
		const uint8_t *at = p;
		uint64_t key, v = 0;
		struct span s = {NULL, 0};
		size_t k = varint(p, end, &key);
		int wt;

		if (!k || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
			return (size_t)(at - start);
		p += k;
		wt = (int)(key & 7);
		switch (wt) {
		case 0:
			k = varint(p, end, &v);
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
			k = varint(p, end, &v);
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

struct meta {
	const char *name;
	uint8_t kind;
};

static void apply_stat(struct tfd_capture *cap, struct tfd_event *e, const Tfdpb__XStat *st,
		       const char *key, const struct imap *stat_names, const char **stat_name_v)
{
	char buf[64];
	size_t idx;

	switch (st->value_case) {
	case TFDPB__XSTAT__VALUE_INT64_VALUE:
		tfd_event_set_stat_int(cap, e, key, st->int64_value);
		break;
	case TFDPB__XSTAT__VALUE_UINT64_VALUE:
		/* ids >= 2^63 arrive as uint64: keep the bit pattern (spec 1.3) */
		if (e->kind == TFD_EV_ITERATOR && strcmp(key, "id") && strcmp(key, "parent_id") &&
		    strcmp(key, "element_id") && strcmp(key, "group_id")) {
			snprintf(buf, sizeof(buf), "%" PRIu64, st->uint64_value);
			tfd_event_set_stat_str(cap, e, key, buf);
		} else {
			tfd_event_set_stat_int(cap, e, key, (int64_t)st->uint64_value);
		}
		break;
	case TFDPB__XSTAT__VALUE_DOUBLE_VALUE:
		if (e->kind == TFD_EV_ITERATOR) {
			snprintf(buf, sizeof(buf), "%g", st->double_value);
			tfd_event_set_stat_str(cap, e, key, buf);
		}
		break;
	case TFDPB__XSTAT__VALUE_STR_VALUE:
		tfd_event_set_stat_str(cap, e, key, st->str_value);
		break;
	case TFDPB__XSTAT__VALUE_REF_VALUE:
		if (imap_get(stat_names, st->ref_value, &idx))
			tfd_event_set_stat_str(cap, e, key, stat_name_v[idx]);
		break;
	default:
		break;
	}
}

static int is_group_stat(const char *key)
{
	return key[0] == 'g' && strcmp(key, "group_id") == 0;
}

static enum tfd_status read_host_plane(struct tfd_capture *cap, size_t host_idx,
				       const Tfdpb__XPlane *pl, const struct tfd_load_opts *opts,
				       struct tfd_err *err)
{
	struct imap ev_meta = {0}, stat_meta = {0};
	struct meta *metas = xcalloc(pl->n_event_metadata + 1, sizeof(*metas));
	const char **stat_names = xcalloc(pl->n_stat_metadata + 1, sizeof(*stat_names));
	enum tfd_status st = TFD_OK;
	struct tfd_host *h = &cap->hosts[host_idx];

	for (size_t i = 0; i < pl->n_event_metadata; i++) {
		const Tfdpb__XPlane__EventMetadataEntry *en = pl->event_metadata[i];
		const char *name = en->value && en->value->name ? en->value->name : "";

		metas[i].name = tfd_arena_intern_cstr(&cap->arena, name);
		metas[i].kind = (uint8_t)tfd_event_kind_of(metas[i].name);
		imap_put(&ev_meta, (uint64_t)en->key, i);
	}
	for (size_t i = 0; i < pl->n_stat_metadata; i++) {
		const Tfdpb__XPlane__StatMetadataEntry *en = pl->stat_metadata[i];
		const char *name = en->value && en->value->name ? en->value->name : "";

		stat_names[i] = tfd_arena_intern_cstr(&cap->arena, name);
		imap_put(&stat_meta, (uint64_t)en->key, i);
	}
	for (size_t l = 0; l < pl->n_lines; l++) {
		const Tfdpb__XLine *line = pl->lines[l];
		uint32_t th;

		if (!line->n_events)
			continue;
		th = tfd_host_thread(cap, h, line->id,
				     line->display_name && *line->display_name ? line->display_name
										: line->name);
		for (size_t i = 0; i < line->n_events; i++) {
			const Tfdpb__XEvent *xe = line->events[i];
			int64_t off = xe->data_case == TFDPB__XEVENT__DATA_OFFSET_PS ? xe->offset_ps : 0;
			int64_t dur = xe->duration_ps, start_ns, end_ns, group = 0;
			int has_group = 0;
			size_t mi;
			struct meta m = {"", TFD_EV_OTHER};
			struct tfd_event *e;

			if (off < 0 || dur < 0 || off > INT64_MAX - dur) {
				st = tfd_fail(err, TFD_E_FORMAT,
					      "line %zu event %zu: negative or overflowing time "
					      "(offset_ps %" PRId64 ", duration_ps %" PRId64 ")",
					      l, i, off, dur);
				goto out;
			}
			if (imap_get(&ev_meta, (uint64_t)xe->metadata_id, &mi))
				m = metas[mi];
			start_ns = line->timestamp_ns + off / 1000;
			end_ns = line->timestamp_ns + (off + dur) / 1000;
			for (size_t s = 0; s < xe->n_stats; s++) {
				size_t si;

				if (imap_get(&stat_meta, (uint64_t)xe->stats[s]->metadata_id, &si) &&
				    is_group_stat(stat_names[si]) &&
				    xe->stats[s]->value_case == TFDPB__XSTAT__VALUE_INT64_VALUE) {
					has_group = 1;
					group = xe->stats[s]->int64_value;
				}
			}
			tfd_host_note(h, has_group, group, start_ns, end_ns);
			if (!tfd_keep_kind((enum tfd_ev_kind)m.kind, opts))
				continue;
			if (h->nevents >= TFD_MAX_EVENTS_PER_HOST) {
				st = tfd_fail(err, TFD_E_LIMIT, "more than %u events on the host plane",
					      TFD_MAX_EVENTS_PER_HOST);
				goto out;
			}
			e = tfd_host_add_event(cap, h, th, m.name, start_ns, end_ns - start_ns);
			for (size_t s = 0; s < xe->n_stats; s++) {
				size_t si;

				if (!imap_get(&stat_meta, (uint64_t)xe->stats[s]->metadata_id, &si))
					continue;
				apply_stat(cap, e, xe->stats[s], stat_names[si], &stat_meta, stat_names);
			}
		}
	}
out:
	imap_free(&ev_meta);
	imap_free(&stat_meta);
	free(metas);
	free(stat_names);
	return st;
}

enum tfd_status tfd_xspace_read(struct tfd_capture *cap, const uint8_t *data, size_t len,
				const char *path, const char *default_host,
				const struct tfd_load_opts *opts, struct tfd_err *err)
{
	struct space_scan sc;
	enum tfd_status st = TFD_OK;
	size_t bad, host_idx;
	struct tfd_host *h;
	char hostbuf[256];

	(void)path;
	memset(&sc, 0, sizeof(sc));
	bad = walk(data, len, space_field, &sc);
	if (bad != SIZE_MAX) {
		if (sc.bad_field)
			st = tfd_fail(err, TFD_E_FORMAT,
				      "not an XSpace protobuf (unexpected field %u at offset %zu)",
				      sc.bad_field, bad);
		else
			st = tfd_fail(err, TFD_E_FORMAT,
				      "truncated or corrupt XSpace protobuf at offset %zu of %zu", bad,
				      len);
		goto out;
	}
	if (sc.nplanes == 0) {
		st = tfd_fail(err, TFD_E_FORMAT, "not an XSpace capture (no planes)");
		goto out;
	}
	if (sc.has_hostname && sc.hostname.len > 0) {
		size_t n = sc.hostname.len < sizeof(hostbuf) - 1 ? sc.hostname.len
								  : sizeof(hostbuf) - 1;

		memcpy(hostbuf, sc.hostname.p, n);
		hostbuf[n] = '\0';
	} else {
		snprintf(hostbuf, sizeof(hostbuf), "%s", default_host);
	}
	h = tfd_capture_add_host(cap, hostbuf);
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
				      "corrupt XSpace protobuf: plane %zu is malformed at byte %zu", i,
				      bad);
			goto out;
		}
		h = &cap->hosts[host_idx];
		pi = &h->planes[i];
		pi->name = tfd_arena_intern(&cap->arena, (const char *)ps.name.p, ps.name.len);
		pi->nlines = ps.nlines;
		if (strcmp(pi->name, HOST_PLANE) == 0) {
			struct tfd_arena scratch;
			ProtobufCAllocator alloc;
			Tfdpb__XPlane *pl;
			size_t before = h->nevents;

			tfd_arena_init(&scratch);
			alloc.alloc = pb_alloc;
			alloc.free = pb_free;
			alloc.allocator_data = &scratch;
			pl = tfdpb__xplane__unpack(&alloc, sc.planes[i].len, sc.planes[i].p);
			if (!pl) {
				tfd_arena_release(&scratch);
				st = tfd_fail(err, TFD_E_FORMAT,
					      "corrupt XSpace protobuf: cannot decode plane '%s'",
					      pi->name);
				goto out;
			}
			st = read_host_plane(cap, host_idx, pl, opts, err);
			tfd_arena_release(&scratch);
			if (st)
				goto out;
			h = &cap->hosts[host_idx];
			h->has_host_plane = true;
			h->planes[i].decoded = true;
			h->planes[i].nevents = h->nevents - before;
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
	h->format = TFD_FMT_XSPACE;
	h->planes = xcalloc(tr->n_devices ? tr->n_devices : 1, sizeof(*h->planes));
	for (size_t d = 0; d < tr->n_devices; d++) {
		const Tfdpb__Device *dev = tr->devices[d]->value;
		struct tfd_plane_info *pi = &h->planes[h->nplanes++];

		pi->name = tfd_arena_intern_cstr(&cap->arena, dev && dev->name ? dev->name : "");
		pi->nlines = dev ? dev->n_resources : 0;
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
		if (te->timestamp_ps > (uint64_t)INT64_MAX / 2 || te->duration_ps > (uint64_t)INT64_MAX / 2) {
			st = tfd_fail(err, TFD_E_FORMAT, "event %zu: time out of range", i);
			goto out;
		}
		h = &cap->hosts[host_idx];
		h->has_host_plane = true;
		start = (int64_t)(te->timestamp_ps / 1000);
		end = (int64_t)((te->timestamp_ps + te->duration_ps) / 1000);
		tfd_host_note(h, false, 0, start, end);
		if (!tfd_keep_kind(tfd_event_kind_of(te->name ? te->name : ""), opts))
			continue;
		th = tfd_host_thread(cap, h, ((int64_t)te->device_id << 32) | te->resource_id, rname);
		e = tfd_host_add_event(cap, h, th, te->name ? te->name : "", start, end - start);
		for (size_t a = 0; a < te->n_args; a++)
			if (te->args[a]->key && te->args[a]->value)
				tfd_event_set_stat_str(cap, e, te->args[a]->key, te->args[a]->value);
	}
out:
	tfd_arena_release(&scratch);
	return st;
}
