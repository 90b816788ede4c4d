/* fuzz_capture.h - the body shared by the capture fuzz targets: load with
 * tight limits, then run every analysis on what loaded. */
#ifndef TFD_FUZZ_CAPTURE_H
#define TFD_FUZZ_CAPTURE_H

#include "tfd/analysis.h"
#include "tfd/capture.h"
#include "tfd/rules.h"
#include "tfd/xprof.h"

static inline void fuzz_capture(const unsigned char *data, size_t size, const char *name)
{
	struct tfd_load_opts lo = {0};
	struct tfd_capture *cap = NULL;
	struct tfd_analysis *an = NULL;
	struct tfd_ruleset *rs = NULL;
	struct tfd_xprof *xp = NULL;
	struct tfd_findings f;
	struct tfd_err err;

	lo.keep_other = 1;
	lo.max_events = 200000;
	lo.max_inflated = 16u << 20;
	if (size & 1) {
		/* odd sizes: an XSpace host plane is read in blocks on two threads,
		 * its long lines cut into parts at guessed event boundaries */
		lo.jobs = 2;
		lo.block_bytes = 1;
	}
	if (tfd_capture_load_mem(data, size, name, &lo, &cap, &err) != TFD_OK)
		return;
	if (tfd_analyze(cap, NULL, &an, &err) == TFD_OK && tfd_rules_load_builtin(&rs, &err) == TFD_OK) {
		tfd_rules_eval(rs, an, &f);
		tfd_findings_free(&f);
	}
	if (tfd_xprof_run(cap, &xp, &err) == TFD_OK)
		tfd_xprof_free(xp);
	tfd_rules_free(rs);
	tfd_analysis_free(an);
	tfd_capture_free(cap);
}

#endif
