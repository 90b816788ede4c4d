/* regress.h - a nightly job's record, its window of history and its
 * regressions against the previous run and the baseline (analysis/regress.c);
 * the reports that draw them are nightly.h's.
 *
 * A job is one capture argument of `tfdoctor report` (a log directory, run
 * directory or file). Ownership: a tfd_job owns its history runs and
 * regression list; the analysis and findings it points to are the
 * caller's.
 */
#ifndef TFD_REGRESS_H
#define TFD_REGRESS_H

#include "tfd/analysis.h"
#include "tfd/history.h"
#include "tfd/rules.h"

struct tfd_regression {
	char kind[16];	  /* latency, input, bottleneck, severity */
	char against[24]; /* previous, baseline, or "previous; baseline" */
	char text[640];
};

struct tfd_job {
	const char *name;
	const struct tfd_analysis *analysis;
	const struct tfd_findings *findings;
	struct tfd_hist_run current;  /* what is recorded for this run */
	struct tfd_hist_run *history; /* oldest first, current last */
	size_t nhistory;
	size_t nrecorded; /* runs of history that are in the database */
	const struct tfd_hist_run *previous, *baseline; /* NULL when none */
	struct tfd_regression *regs;
	size_t nregs;
	char *critpath_svg; /* inline SVG of the focus pipeline, or NULL */
	/* the job could not be analyzed (a corrupt capture, ...): why, in one
	 * line; then analysis is NULL, nothing is recorded, and the reports
	 * say so in the job's place while the other jobs go on */
	const char *error;
};

/* Fill job->current from the analysis (hosts in rank order). */
void tfd_nightly_record(struct tfd_job *job, const char *run, const char *source,
			const char *recorded_at);
/* Load the job's last `limit` runs from db (NULL: no history) and pick the
 * previous run and the baseline (the recorded run named `baseline`, or the
 * first). When the current run was not recorded it is appended as the
 * newest point without being stored. TFD_E_USAGE for an unknown baseline. */
enum tfd_status tfd_nightly_window(struct tfd_job *j, struct tfd_history *db, bool recorded,
				   const char *baseline, size_t limit, struct tfd_err *err);
/* Compare job->current with job->previous and job->baseline; a latency
 * regression is an increase of more than pct percent, an input-bound one
 * an increase of 5 points or more. */
void tfd_nightly_compare(struct tfd_job *job, double pct);
/* Free what a job owns (its records, history, regressions, diagram); the
 * analysis and findings are the caller's. */
void tfd_nightly_job_release(struct tfd_job *job);

#endif
