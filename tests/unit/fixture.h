/* fixture.h - build small captures in memory, as the upstream tests do:
 * one host "host1", lines 0 and 1, events appended in call order. Times
 * are given in picoseconds (the upstream unit) and stored as ns. */
#ifndef TFD_FIXTURE_H
#define TFD_FIXTURE_H

#include <stdbool.h>

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
/* The upstream HostInputPipeline capture's events into f (a new fixture):
 * a prefetch's consumer on line 0, its producer on line 1, two elements;
 * with Produce and Consume events (produce), or without them (as a
 * Chrome trace or an older TensorFlow has them). */
void fx_host_input_pipeline(struct fx *f, bool produce);

#define FX_US 1000000LL /* a microsecond in the fixtures' picoseconds */

#endif
