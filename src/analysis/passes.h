/* passes.h - analysis passes shared inside the library (not installed).
 *
 * Each pass fills part of a struct tfd_host_result; results own their
 * arrays and tfd_analysis_free() releases them.
 */
#ifndef TFD_PASSES_H
#define TFD_PASSES_H

#include "tfd/analysis.h"
#include "tfd/capture.h"

/* Input-bound share of host h (share.c): hr->input_pct, the tf, steady and
 * all shares, per-step waits and their summary, the verdict band. */
void tfd_share_compute(const struct tfd_host *h, struct tfd_host_result *hr);

#endif
