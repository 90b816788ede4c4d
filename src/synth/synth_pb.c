/* synth_pb.c - the protobuf wire format as the synthesizer writes it
 * (XSpace planes, lines, events and metadata): synth.c and
 * synth_device.c both encode with it. */
#include <stdint.h>
#include <string.h>

#include "synth_impl.h"

void tfd_synth_pb_varint(struct tfd_buf *b, uint64_t v)
{
	char tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	tfd_buf_add(b, tmp, n);
}

size_t tfd_synth_varint_len(uint64_t v)
{
	size_t n = 1;

	while (v > 0x7f) {
		v >>= 7;
		n++;
	}
	return n;
}

void tfd_synth_pb_key(struct tfd_buf *b, unsigned field, unsigned wt)
{
	tfd_synth_pb_varint(b, ((uint64_t)field << 3) | wt);
}

void tfd_synth_pb_bytes(struct tfd_buf *b, unsigned field, const void *p, size_t n)
{
	tfd_synth_pb_key(b, field, 2);
	tfd_synth_pb_varint(b, n);
	tfd_buf_add(b, p, n);
}

void tfd_synth_pb_int(struct tfd_buf *b, unsigned field, int64_t v)
{
	tfd_synth_pb_key(b, field, 0);
	tfd_synth_pb_varint(b, (uint64_t)v);
}

/* One metadata map entry {id: {id, name}} as field `field` of the plane. */
void tfd_synth_pb_metadata(struct tfd_buf *head, uint32_t field, int64_t id, const char *name)
{
	struct tfd_buf md, en;

	tfd_buf_init(&md);
	tfd_buf_init(&en);
	tfd_synth_pb_int(&md, 1, id);
	tfd_synth_pb_bytes(&md, 2, name, strlen(name));
	tfd_synth_pb_int(&en, 1, id);
	tfd_synth_pb_bytes(&en, 2, md.s, md.len);
	tfd_synth_pb_bytes(head, field, en.s, en.len);
	tfd_buf_release(&md);
	tfd_buf_release(&en);
}
