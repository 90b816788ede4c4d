/* wire.c - the protobuf wire walker of the XSpace reader: one message level
 * at a time, without decoding, so that planes and lines are found and
 * skipped by length (xspace_impl.h). */
#include <stdint.h>

#include "xspace_impl.h"

size_t tfd_pb_walk(const uint8_t *p, size_t len, field_fn fn, void *ctx)
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
