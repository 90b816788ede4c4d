/* pages.h - giving the pages of memory read once back to the system.
 *
 * The readers drop a mapped file's pages behind them, the graph scan the
 * pages of events it has read: read once, they need not count against the
 * process's RSS. A file mapping's pages read back from the file if touched
 * again, an anonymous block's as zeros.
 */
#ifndef TFD_PAGES_H
#define TFD_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The whole pages from *done up to upto (rounded down to a page) go, when
 * they make at least min bytes; *done moves to where they went. */
void tfd_pages_release(const uint8_t **done, const uint8_t *upto, size_t min);

/* free(p), the whole pages of its first len bytes given back first: a
 * block freed in the middle of the heap, or into the arena of the thread
 * that made it, stays the process's until malloc reuses it (a host plane
 * read in blocks on several cores moved each block's records into the
 * host and freed them: 7 MB of a real 95 MB capture's peak). */
void tfd_pages_free(void *p, size_t len);

/* Whether bytes more resident memory than the process holds now would
 * take it past its peak so far (false when either is unknown): a choice
 * between two ways to the same answer, the faster one when it fits under
 * the peak already reached. */
bool tfd_pages_would_raise_peak(size_t bytes);

/* The memory the process may still take, in bytes: the least of the
 * system's available memory (MemAvailable) and what the address-space
 * limit (ulimit -v) leaves; SIZE_MAX when neither is known.
 * TFDOCTOR_MEM_BUDGET=BYTES says it instead (the tests). */
size_t tfd_memory_budget(void);

/* Cut the file mapping [m, m + len) into windows of TFD_MAP_WINDOW bytes,
 * each its own mapping in the kernel's eyes, when the file is smaller
 * than TFD_MAP_SPLIT_BELOW; the number of windows made (1: left whole).
 * Linux 6.18 maps a page-cache folio (up to 2 MB) whole on a fault where
 * it fits in the mapping: whole files held up to 2 MB per reader resident
 * ahead of what tfd_pages_release() had dropped. A window holds what of a
 * folio fits in it: 1 MB windows still held up to 0.9 MB of the file ahead
 * of the device sweep's reader (the folios of 1 MB and less fit whole, the
 * 100 MB tf.data-heavy capture's peak then), 256 KB ones at most that,
 * for about 1 % more faults. The windows are told apart by MADV_DONTDUMP
 * on every other one (it changes only what a core dump holds), else the
 * kernel merges them back; a failure (the map-count limit) leaves the rest
 * whole. A larger file is left whole: its folios' 2 MB ahead of a reader
 * are a small share of it, and the windows' faults cost 2-5 % of its
 * read. */
#define TFD_MAP_WINDOW ((size_t)256 << 10)
#define TFD_MAP_SPLIT_BELOW ((size_t)512 << 20)
/* Cut a mapping of len bytes at m into TFD_MAP_WINDOW windows (below
 * TFD_MAP_SPLIT_BELOW; larger files stay whole): returns the windows made.
 * Best effort: a failing madvise leaves the mapping as it was. */
size_t tfd_pages_split_map(void *m, size_t len);

/* The bytes a reader of a mapped file of len bytes gives back at a time,
 * the process running on `cores` cores. Each release, while the process
 * has threads on other cores, makes the kernel flush their TLBs (an
 * interrupt each, their page walks again after): at 512 KB a release, a
 * two-core read of a 1 GB capture lost 5-9 % of its time to them. A file
 * mapped whole (TFD_MAP_SPLIT_BELOW and up) has folios of up to 2 MB
 * mapped ahead of each reader anyway: it gives 2 MB back at a time; a
 * windowed one 512 KB, the RSS of the smaller files kept as it was. On one
 * core there is no other TLB to flush: 128 KB (a 104 MB capture's read
 * held 0.4 MB less of it). */
static inline size_t tfd_pages_release_step(size_t len, size_t cores)
{
	if (len >= TFD_MAP_SPLIT_BELOW)
		return (size_t)2 << 20;
	return cores > 1 ? (size_t)512 << 10 : (size_t)128 << 10;
}

#endif
