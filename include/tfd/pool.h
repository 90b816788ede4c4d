/* pool.h - run N items on K threads: the one work pool (discovery's files,
 * a host plane's blocks, the functions pre-pass), and how many cores this
 * process may use.
 *
 * The calling thread is one of the workers; no thread outlives the call.
 * The pool owns nothing of the items: fn reads and writes them through
 * ctx, each item on one thread, and synchronizes anything shared.
 */
#ifndef TFD_POOL_H
#define TFD_POOL_H

#include <stdbool.h>
#include <stddef.h>

/* Handle item `item` on worker `worker` (0 .. threads-1; 0 is the calling
 * thread): per-worker state may be indexed by it. false: the item failed. */
typedef bool (*tfd_pool_fn)(void *ctx, size_t worker, size_t item);

/* Run items 0 .. n-1 through fn on up to `threads` threads (fewer when
 * there are fewer items, or threads cannot be had: then the calling thread
 * does the rest), handing them out in the order `order` gives (a
 * permutation of 0 .. n-1, e.g. costliest first; NULL: 0, 1, ...). With
 * skip_after_failure, once item i failed the items after i (by index) not
 * yet started are skipped: only the lowest failure matters. Returns the
 * lowest failed item, or n when none failed. */
size_t tfd_pool_run(size_t n, size_t threads, const size_t *order, bool skip_after_failure,
		    tfd_pool_fn fn, void *ctx);

/* An order for tfd_pool_run() that hands out items 0..n-1 costliest
 * first (equal costs in index order), so that the last item to finish is
 * a short one; the caller frees it. */
size_t *tfd_pool_costliest_first(const size_t *cost, size_t n);

/* The cores this process may run on (its affinity mask: taskset,
 * cgroups' cpusets), not the machine's; at least 1. */
size_t tfd_cpu_count(void);

#endif
