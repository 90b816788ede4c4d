/* chrome_feed.c - a Chrome trace's plain bytes fed to a consumer chunk by
 * chunk (the full passes of chrome.c and the scan of chrome_scan.c both
 * read this way); neither calls back in here. */
#include <stdint.h>
#include <sys/mman.h>

#include "chrome_impl.h"
#include "tfd/pages.h"

/* Feeds plain bytes; pages of a mapped input are dropped behind the consumer. */
void tfd_chrome_feed_plain(const struct source *src, eat_fn eat, void *ctx)
{
	const uint8_t *data = (const uint8_t *)src->data, *dropped = data;
	size_t off = 0;

	while (off < src->len) {
		size_t n = src->len - off < CHUNK ? src->len - off : CHUNK, start = off;

		off += n;
		if (!eat(ctx, data + start, n))
			break;
		if (src->mapped) /* the chunks before this one, 3 MB or more */
			tfd_pages_release(&dropped, data + start, 3 * (size_t)CHUNK);
	}
	if (src->mapped && data + src->len > dropped) /* and the last, partial page */
		madvise((void *)dropped, (size_t)(data + src->len - dropped), MADV_DONTNEED);
}
