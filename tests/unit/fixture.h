/* fixture.h - build small captures in memory, as the upstream tests do:
 * one host "host1", lines 0 and 1, events appended in call order. Times
 * are given in picoseconds (the upstream unit) and stored as ns. */
#ifndef TFD_FIXTURE_H
#define TFD_FIXTURE_H

#include "tfd/capture.h"

struct fx {
	struct tfd_capture *cap;
	struct tfd_host *h;
};

void fx_init(struct fx *f);
/* Append an event; stats is a list of "key=value" ints ending in NULL. */
struct tfd_event *fx_ev(struct fx *f, int line, const char *name, int64_t off_ps, int64_t dur_ps,
			...);
/* Sort the events; the capture is ready for analysis. */
void fx_finish(struct fx *f);

#endif
