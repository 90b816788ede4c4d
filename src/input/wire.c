/* wire.c - the protobuf wire walker of the XSpace reader: one message level
 * at a time, without decoding, so that planes and lines are found and
 * skipped by length (xspace_impl.h). */
#include <stdint.h>

#include "wire.h"

size_t tfd_pb_walk(const uint8_t *p, size_t len, field_fn fn, void *ctx)
{
	const uint8_t *start, *end;
	struct pb_field f;

	if (!p) /* an absent (empty) message */
		return SIZE_MAX;
	start = p;
	end = p + len;
	while (p < end) {
		const uint8_t *at = p;

		if (!tfd_pb_next(&p, end, &f) || (fn && fn(ctx, f.field, f.wt, f.v, f.s)))
			return (size_t)(at - start);
	}
	return SIZE_MAX;
}
