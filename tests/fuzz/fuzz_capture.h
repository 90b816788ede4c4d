/* fuzz_capture.h - the body shared by the capture fuzz targets: load with
 * tight limits, then run every analysis on what loaded. */
#ifndef TFD_FUZZ_CAPTURE_H
#define TFD_FUZZ_CAPTURE_H

#include <stdlib.h>
#include <string.h>

#include "tfd/analysis.h"
#include "tfd/capture.h"
#include "tfd/load.h"
#include "tfd/rules.h"
#include "tfd/xprof.h"

/* The same input read two ways (oa and ob, given the tight limits here):
 * the same error line or captures with as many hosts, else abort(). The
 * status; *a and *b are the caller's to compare further and free. */
static inline enum tfd_status fuzz_load_two(const unsigned char *data, size_t size,
					    const char *name, struct tfd_load_opts *oa,
					    struct tfd_load_opts *ob, struct tfd_capture **a,
					    struct tfd_capture **b)
{
	struct tfd_err ea = {0}, eb = {0};
	enum tfd_status sa, sb;

	oa->max_events = ob->max_events = 200000;
	oa->max_inflated = ob->max_inflated = 16u << 20;
	sa = tfd_capture_load_mem(data, size, name, oa, a, &ea);
	sb = tfd_capture_load_mem(data, size, name, ob, b, &eb);
	if (sa != sb || (sa && strcmp(ea.msg, eb.msg)) || (!sa && (*a)->nhosts != (*b)->nhosts))
		abort();
	return sa;
}

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
	if (tfd_analyze(cap, NULL, &an, &err) == TFD_OK &&
	    tfd_rules_load_builtin(&rs, &err) == TFD_OK) {
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
