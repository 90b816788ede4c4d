/* wire.h - the protobuf wire format as the readers walk it, in one place:
 * varints, one field at a time, one message level, a map entry; nothing is
 * decoded beyond what a reader asks for (src/input only). */
#ifndef TFD_INPUT_WIRE_H
#define TFD_INPUT_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Read a protobuf varint at p (before end): the bytes used, or 0 if it is
 * malformed or truncated. */
static inline size_t tfd_pb_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	/* the common cases first: one byte (tags, small ids), and a varint
	 * that cannot run past the end (no bounds check per byte) */
	if (p < end && p[0] < 0x80) {
		*v = p[0];
		return 1;
	}
	if (end - p >= 10) {
		r = p[0] & 0x7f;
		for (size_t i = 1; i < 10; i++) {
			r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
			if (p[i] < 0x80) {
				*v = r;
				return i + 1;
			}
		}
		return 0;
	}
	for (size_t i = 0; i < 10 && p + i < end; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

struct span {
	const uint8_t *p;
	size_t len;
};

/* Walk one message level. For each field calls back with its number, wire
 * type and (for length-delimited fields) its bytes. Returns the offset of
 * the first malformed byte, or SIZE_MAX when the message is well framed. */
typedef int (*field_fn)(void *ctx, uint32_t field, int wt, uint64_t v, struct span s);

size_t tfd_pb_walk(const uint8_t *p, size_t len, field_fn fn, void *ctx);

/* One field of a message. */
struct pb_field {
	uint32_t field;
	int wt;
	uint64_t v;    /* a varint's value, a length-delimited field's length */
	struct span s; /* a length-delimited field's bytes */
};

/* The field at *p (before end) into f, *p moved past it; false when it is
 * malformed (field number 0 or too large, cut short, an unknown wire type),
 * *p then unmoved. What tfd_pb_walk() steps with, for readers that pull
 * fields one at a time. */
static inline bool tfd_pb_next(const uint8_t **pp, const uint8_t *end, struct pb_field *f)
{
	const uint8_t *p = *pp;
	uint64_t key;
	size_t k = tfd_pb_varint(p, end, &key);

	if (!k || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
		return false;
	p += k;
	f->field = (uint32_t)(key >> 3);
	f->wt = (int)(key & 7);
	f->v = 0;
	f->s = (struct span){NULL, 0};
	switch (f->wt) {
	case 0:
		if (!(k = tfd_pb_varint(p, end, &f->v)))
			return false;
		p += k;
		break;
	case 1:
	case 5:
		k = f->wt == 1 ? 8 : 4;
		if ((size_t)(end - p) < k)
			return false;
		p += k;
		break;
	case 2:
		k = tfd_pb_varint(p, end, &f->v);
		if (!k || f->v > (uint64_t)(end - p - k))
			return false;
		f->s = (struct span){p + k, (size_t)f->v};
		p += k + f->v;
		break;
	default:
		return false;
	}
	*pp = p;
	return true;
}

/* A map entry's message s (key = 1, a varint; value = 2, a message) into
 * *key and *val: false when it is malformed; *have_key when the key was
 * given. */
static inline bool tfd_pb_map_entry(struct span s, uint64_t *key, bool *have_key, struct span *val)
{
	const uint8_t *p = s.p, *end = s.p + s.len;
	struct pb_field f;

	*have_key = false;
	while (p < end) {
		if (!tfd_pb_next(&p, end, &f) || (f.wt != 0 && f.wt != 2))
			return false;
		if (f.field == 1 && f.wt == 0) {
			*key = f.v;
			*have_key = true;
		} else if (f.field == 2 && f.wt == 2) {
			*val = f.s;
		}
	}
	return true;
}

#endif
