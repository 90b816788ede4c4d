/* gunzip.c - gzip data (one or more members) inflated in 1 MB chunks into a
 * sink: the whole-buffer inflate of discover.c and the streaming Chrome
 * reader share the loop, its limit and its error lines. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <zlib.h>

#include "input_impl.h"
#include "tfd/pages.h"

#define OUT_CHUNK (1u << 20)

enum tfd_status tfd_gunzip(const uint8_t *src, size_t len, bool mapped, size_t limit,
			   tfd_gunzip_sink sink, void *ctx, struct tfd_err *err)
{
	unsigned char *out = xmalloc(OUT_CHUNK);
	enum tfd_status st = TFD_OK;
	size_t total = 0;
	const uint8_t *dropped = src; /* pages below went (mapped) */
	z_stream zs;
	int rc;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK) {
		free(out);
		return tfd_fail(err, TFD_E_INTERNAL, "zlib init failed");
	}
	zs.next_in = (Bytef *)src;
	for (;;) {
		size_t left = len - (size_t)(zs.next_in - src), got;

		zs.avail_in = left > 0x40000000u ? 0x40000000u : (uInt)left;
		zs.next_out = out;
		zs.avail_out = OUT_CHUNK;
		rc = inflate(&zs, Z_NO_FLUSH);
		got = OUT_CHUNK - zs.avail_out;
		if (mapped) /* read once per pass: the page cache keeps them */
			tfd_pages_release(&dropped, zs.next_in, 4u << 20);
		if (got) {
			if (total + got > limit) {
				st = tfd_fail(
				    err, TFD_E_LIMIT,
				    "gzip data inflates to more than %zu MiB (%.0f times "
				    "its %.1f MB: a gzip bomb?); --max-inflated SIZE sets "
				    "the ceiling",
				    limit >> 20, (double)limit / (double)len, (double)len / 1e6);
				break;
			}
			total += got;
			if (!sink(ctx, out, got))
				break; /* the consumer stopped: its own state says why */
		}
		if (rc == Z_STREAM_END) {
			/* concatenated gzip members: continue with the next one */
			if ((size_t)(zs.next_in - src) < len && zs.next_in[0] == 0x1f) {
				inflateReset(&zs);
				continue;
			}
			break;
		}
		if (rc == Z_BUF_ERROR && zs.avail_in == 0 && (size_t)(zs.next_in - src) >= len) {
			st = tfd_fail(err, TFD_E_FORMAT, "truncated gzip data");
			break;
		}
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			st = tfd_fail(err, TFD_E_FORMAT, "corrupt gzip data (%s)",
				      zs.msg ? zs.msg : "invalid data");
			break;
		}
	}
	inflateEnd(&zs);
	free(out);
	if (mapped && src + len > dropped) /* and the last, partial page */
		madvise((void *)dropped, (size_t)(src + len - dropped), MADV_DONTNEED);
	return st;
}
