/* chrome_names.c - the event names a Chrome trace's reader has kept: a
 * trace repeats a few names millions of times, and each kept event's name
 * was hashed to be interned and compared with the known names for its
 * kind (2.2 % of the instructions of a 10,000-step trace's analysis). A
 * slot per name, direct-mapped by its length and its first and last 8
 * bytes, holds its interned copy and kind; names alike in those share a
 * slot and are told apart by their text. Only a kept event's name goes
 * into a slot (and into the capture's arena), as before the slots.
 */
#include <stdint.h>
#include <string.h>

#include "chrome_impl.h"
#include "tfd/capture.h"

_Static_assert(TFD_CHROME_NAME_SLOTS == 64, "a slot is the hash's top 6 bits");

struct name_slot *tfd_chrome_name_slot(struct parse *p, const char *name, size_t n)
{
	uint64_t a = 0, b = 0;

	memcpy(&a, name, n < 8 ? n : 8);
	memcpy(&b, name + (n < 8 ? 0 : n - 8), n < 8 ? n : 8);
	return &p->names[((a * 0x9E3779B97F4A7C15ull) ^ (b * 0xC2B2AE3D27D4EB4Full) ^ n) >> 58];
}

static bool holds(const struct name_slot *ns, const char *name, size_t n)
{
	return ns->name && ns->len == n && memcmp(ns->name, name, n) == 0;
}

enum tfd_ev_kind tfd_chrome_name_kind(const struct name_slot *ns, const char *name, size_t n,
				      bool *held)
{
	*held = holds(ns, name, n);
	return *held ? ns->kind : tfd_event_kind_of(name);
}

struct tfd_event *tfd_chrome_add_named(struct parse *p, struct tfd_host *h, uint32_t th,
				       struct name_slot *ns, bool held, const char *name, size_t n,
				       enum tfd_ev_kind kind, int64_t start, int64_t dur)
{
	if (!held)
		*ns = (struct name_slot){tfd_arena_intern(&p->cap->arena, name, n), n, kind};
	return tfd_host_add_event_as(p->cap, h, th, ns->name, kind, start, dur);
}
