/* xspace_seen.c - an iterator event's stats read once: its events repeat
 * them byte for byte (its id, parent_id, dataset name and parameters), so
 * the reader keeps, per event name, the last stats it read and what they
 * made of the event (xspace_scan.c reads the rest). Out of the scanner's
 * inner loop, where its few uses had cost every other event. */
#include <string.h>

#include "tfd/err.h"
#include "xspace_impl.h"

struct stats_seen *tfd_xs_stats_seen(struct scan *sc, size_t mi, const uint8_t *stats,
				     const uint8_t *end, struct tfd_event *e, bool *has_group,
				     int64_t *group, bool *hit)
{
	size_t len = (size_t)(end - stats);
	struct stats_seen *ss;

	*hit = false;
	if (len > STATS_SEEN_MAX || mi == SIZE_MAX || (sc->opts && sc->opts->xspace_two_walks))
		return NULL;
	if (!sc->seen)
		sc->seen = xcalloc(STATS_SEEN, sizeof(*sc->seen));
	ss = &sc->seen[mi % STATS_SEEN];
	if (ss->mi1 == mi + 1 && ss->len == len && memcmp(ss->bytes, stats, len) == 0) {
		e->sig = ss->sig;
		e->id = ss->id;
		e->flags = ss->flags;
		*has_group = ss->has_group;
		*group = ss->group;
		*hit = true;
	}
	return ss;
}

void tfd_xs_stats_seen_keep(struct stats_seen *ss, size_t mi, const uint8_t *stats,
			    const uint8_t *end, const struct tfd_event *e, bool has_group,
			    int64_t group)
{
	ss->mi1 = mi + 1;
	ss->len = (size_t)(end - stats);
	ss->sig = e->sig;
	ss->id = e->id;
	ss->flags = e->flags;
	ss->has_group = has_group;
	ss->group = group;
	memcpy(ss->bytes, stats, ss->len);
}
