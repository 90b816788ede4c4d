/* diff.h - did a change help: two analyses of one job side by side (before
 * and after), on one host's focus pipeline (analysis/diff.c; the reports
 * are render.h's tfd_render_diff_*).
 *
 * The verdict and input share, the mean step time and the rate, the
 * bottleneck then and now, each stage's capacity and utilization, the
 * findings resolved, new and still there, and for each finding of the
 * first run that carried an estimate, what it promised against what was
 * measured. Worse: the input share rose by more than `margin` points, or
 * the mean step time by more than `margin` percent.
 */
#ifndef TFD_DIFF_H
#define TFD_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/analysis.h"
#include "tfd/err.h"
#include "tfd/rules.h"

/* What became of the bottleneck. */
enum tfd_diff_move {
	TFD_MOVE_NONE = 0, /* no bottleneck either time */
	TFD_MOVE_SAME,	   /* the same stage */
	TFD_MOVE_MOVED,	   /* another stage now */
	TFD_MOVE_REMOVED,  /* none now (the host is not input-bound, or nothing limits) */
	TFD_MOVE_NEW,	   /* none before, one now */
};

/* One side of the comparison: the host's figures. */
struct tfd_diff_side {
	const struct tfd_host_result *host;
	const struct tfd_pipeline *pipeline; /* its focus pipeline, or NULL */
	double input_pct;		     /* NAN when unknown */
	int64_t step_ns;		     /* mean step time, 0 unknown */
	size_t nsteps;
	/* the long gaps between the steps: their share of the time from the
	 * first step to the last (NAN unknown: under 3 steps), and that time
	 * per step, the gaps in it (0 unknown) */
	double between_pct;
	int64_t span_step_ns;
	double throughput;     /* root elements/s (capacity model), 0 unknown */
	int bottleneck;	       /* stage index in pipeline, -1 none */
	const char *bn_path;   /* its stage path, NULL */
	const char *bn_name;   /* its short name, NULL */
	const char *bn_top_op; /* the top op inside it, NULL */
};

/* One stage, matched by its stage path (the long name less instance
 * indices) across the two focus pipelines. */
struct tfd_diff_stage {
	const char *path, *name; /* the after side's when it has the stage */
	int before, after;	 /* stage indices, -1 absent */
	/* its segment's capacity (root elements/s; INFINITY unbounded, 0
	 * unknown) and utilization (0..1), its blocking share (0..1) */
	double cap[2], util[2], share[2];
	bool bottleneck[2];
};

enum tfd_diff_status {
	TFD_DIFF_RESOLVED = 0, /* before, not after */
	TFD_DIFF_STILL,	       /* both */
	TFD_DIFF_NEW,	       /* after only */
};

/* A finding of the host, matched by rule and the family of its stage. */
struct tfd_diff_finding {
	const struct tfd_finding *f;   /* the after run's when still there */
	const struct tfd_finding *was; /* the first run's (NULL: new) */
	enum tfd_diff_status status;
};

struct tfd_diff {
	struct tfd_diff_side side[2]; /* [0] before, [1] after */
	enum tfd_diff_move move;
	struct tfd_diff_stage *stages;
	size_t nstages;
	struct tfd_diff_finding *findings; /* resolved, then still, then new */
	size_t nfindings;
	/* step before / after (> 1: faster), 0 unknown */
	double step_speedup;
	/* the long gaps between the steps count (one side's take 10 % of its
	 * steps' span or more, TFD_BETWEEN_SAYS): the time a step with them
	 * is compared too */
	bool between;
	double margin; /* points of input share, percent of step time */
	bool worse, better;
	char why[256]; /* what made it worse or better, one line */
};

/* The comparison of before (with its findings fb) and after (fa) on host
 * (NULL: before's most input-bound host, and the same-named host after if
 * there is one, else after's most input-bound); margin in points and
 * percent (0 < margin <= 100). *out is filled (tfd_diff_free it); it
 * borrows from the analyses and findings. TFD_E_USAGE: no such host. */
enum tfd_status tfd_diff_make(const struct tfd_analysis *before, const struct tfd_findings *fb,
			      const struct tfd_analysis *after, const struct tfd_findings *fa,
			      const char *host, double margin, struct tfd_diff *out,
			      struct tfd_err *err);
/* Free what tfd_diff_make allocated; d is empty after. */
void tfd_diff_free(struct tfd_diff *d);

/* "same", "moved", "removed", "new", "none" */
const char *tfd_diff_move_name(enum tfd_diff_move m);
/* "resolved", "still", "new" */
const char *tfd_diff_status_name(enum tfd_diff_status s);

#endif
