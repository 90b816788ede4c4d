/* pages.h - giving the pages of memory read once back to the system.
 *
 * The readers drop a mapped file's pages behind them, the graph scan the
 * pages of events it has read: read once, they need not count against the
 * process's RSS. A file mapping's pages read back from the file if touched
 * again, an anonymous block's as zeros.
 */
#ifndef TFD_PAGES_H
#define TFD_PAGES_H

#include <stddef.h>
#include <stdint.h>

/* The whole pages from *done up to upto (rounded down to a page) go, when
 * they make at least min bytes; *done moves to where they went. */
void tfd_pages_release(const uint8_t **done, const uint8_t *upto, size_t min);

#endif
