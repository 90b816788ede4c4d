/* shares.c - the terminal report's lines under the verdict: the shares
 * and what they leave out (the wait's parts, the markers, a ramp, warm-up,
 * the long gaps between the steps).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "output_impl.h"
#include "tfd/render.h"

const char *tfd_band_word(enum tfd_bound bd)
{
	return bd == TFD_BOUND_HIGH ? "HIGHLY" : bd == TFD_BOUND_MODERATE ? "MODERATELY" : "NOT";
}

/* A part of the wait, ns of it, when it is 1 % of the steps' time or
 * more: "label: X a step of the Y waited (Z% of the time)what". */
static void wait_part_line(const struct tfd_host_result *f, int64_t ns, const char *label,
			   const char *what, struct tfd_buf *b)
{
	char t1[32], t2[32];
	size_t n = f->nsteps ? f->nsteps : 1;
	double pct = tfd_host_part_pct(f, ns);

	if (!(pct >= 1.0))
		return;
	tfd_buf_printf(b, "         %s: %s %s of the %s waited (%.1f%% of the time)%s.\n", label,
		       tfd_fmt_ns(ns / (int64_t)n, t1, sizeof(t1)), f->nsteps ? "a step" : "in all",
		       tfd_fmt_ns(f->wait_ns / (int64_t)n, t2, sizeof(t2)), pct, what);
}

/* The wait's parts that were no GetNext: the datasets and iterators the
 * loop made, and its wait for the interpreter's lock after an eager
 * GetNext had returned. */
static void wait_parts(const struct tfd_host_result *f, struct tfd_buf *b)
{
	wait_part_line(f, f->create_ns, "making iterators",
		       ": the loop made datasets and iterators (MakeIterator: the dataset "
		       "optimized, its functions instantiated, its threads started) before "
		       "their first element",
		       b);
	wait_part_line(f, f->gil_ns, "the GIL",
		       " came after next()'s GetNext had returned, the loop waiting for the "
		       "interpreter's lock before next() could return",
		       b);
}

/* A part of the long stretches between the steps, when it is 1 % of them
 * or more: "label X%, ". */
static void between_part(const struct tfd_host_result *f, int64_t ns, const char *label,
			 struct tfd_buf *b)
{
	if (ns > 0 && 100.0 * (double)ns >= (double)f->between_ns)
		tfd_buf_printf(b, "%s %.0f%%, ", label, 100.0 * (double)ns / (double)f->between_ns);
}

/* The long stretches between the steps, from TFD_BETWEEN_SAYS percent of
 * the steps' span, and what the loop did in them. */
static void between_line(const struct tfd_host_result *f, struct tfd_buf *b)
{
	char t1[32];
	int64_t rest =
	    f->between_ns - f->between_pass_ns - f->between_wait_ns - f->between_session_ns;

	if (!f->nbetween || !(f->steps_span_ns > 0) ||
	    100.0 * (double)f->between_ns / (double)f->steps_span_ns < TFD_BETWEEN_SAYS)
		return;
	tfd_buf_printf(b,
		       "         between the steps: %u long stretch%s (%s on average) took %.1f%% "
		       "of the time from the first step to the last; the share counts the steps' "
		       "time alone. In them: ",
		       f->nbetween, f->nbetween == 1 ? "" : "es",
		       tfd_fmt_ns(f->between_ns / f->nbetween, t1, sizeof(t1)),
		       100.0 * (double)f->between_ns / (double)f->steps_span_ns);
	between_part(f, f->between_pass_ns,
		     "passes over pipelines read only there (a validation pass, an evaluation)", b);
	between_part(f, f->between_create_ns, "making iterators", b);
	between_part(f, f->between_wait_ns - f->between_create_ns, "waiting for input", b);
	between_part(f, f->between_session_ns,
		     "session runs that read no input (an iterator's initializer, a summary)", b);
	tfd_buf_printf(b, "the loop's own work (callbacks, checkpoints, Python) %.0f%%.\n",
		       rest > 0 ? 100.0 * (double)rest / (double)f->between_ns : 0.0);
}

void tfd_share_lines(const struct tfd_host_result *f, struct tfd_buf *b)
{
	char t1[32], num[24];

	if (strcmp(f->input_basis, "steps") != 0) {
		wait_parts(f, b);
		return;
	}
	if (fabs(f->tf.pct - f->all.pct) >= 0.05 || fabs(f->steady.pct - f->all.pct) >= 0.05)
		tfd_buf_printf(b,
			       "         shares: TensorFlow's convention %.1f%% (%zu step%s), "
			       "steady state %.1f%% (%zu step%s, %zu warm-up), every step %.1f%% "
			       "(%zu step%s).\n",
			       f->tf.pct, f->tf.nsteps, f->tf.nsteps == 1 ? "" : "s", f->steady.pct,
			       f->steady.nsteps, f->steady.nsteps == 1 ? "" : "s", f->nwarmup_steps,
			       f->all.pct, f->all.nsteps, f->all.nsteps == 1 ? "" : "s");
	wait_parts(f, b);
	if (f->gaps_counted)
		tfd_buf_printf(b,
			       "         between steps: the step markers leave the input out "
			       "(next() runs between them: %s of waiting over %zu steps), so "
			       "each step runs from its start to the next step's; the markers "
			       "alone (TensorFlow's convention, TensorBoard's figure) would say "
			       "%.1f%%.\n",
			       tfd_fmt_ns(f->gap_wait_ns, t1, sizeof(t1)), f->all.nsteps,
			       f->markers_pct);
	between_line(f, b);
	if (f->nramp_steps)
		tfd_buf_printf(
		    b,
		    "         ramp: the first %zu steps waited %.1f%% of their time, the "
		    "rest %.1f%%; %s.\n",
		    f->nramp_steps, f->ramp_pct, f->settled_pct,
		    tfd_bound_of(f->steady.pct) < f->bound
			? "no parameter AUTOTUNE sets changed over the capture, so the verdict "
			  "keeps them (a profile started in a running job can open with steps "
			  "that wait as the job did before the profiler slowed its step)"
			: "the steady state leaves the ramp out (an AUTOTUNE ramp, buffers "
			  "or a cache filling, an epoch boundary)");
	if (!f->warmup_inflated)
		return;
	snprintf(num, sizeof(num), "%zu", f->nwarmup_steps);
	if (f->nwarmup_steps)
		tfd_buf_printf(b,
			       "         warm-up: the first %s%s waited %s for the pipeline to "
			       "fill; steady state %.1f%%. Counting every step would say %s "
			       "input-bound (%.1f%%).\n",
			       f->nwarmup_steps == 1 ? "" : num,
			       f->nwarmup_steps == 1 ? "step" : " steps",
			       tfd_fmt_ns(f->warmup_wait_ns, t1, sizeof(t1)), f->steady.pct,
			       tfd_band_word(tfd_bound_of(f->all.pct)), f->all.pct);
	else
		tfd_buf_printf(
		    b,
		    "         warm-up: the first step waited %s (TensorFlow's convention "
		    "drops the first and last steps); steady state %.1f%%. Counting "
		    "every step would say %s input-bound (%.1f%%).\n",
		    tfd_fmt_ns(f->first_step_wait_ns, t1, sizeof(t1)), f->steady.pct,
		    tfd_band_word(tfd_bound_of(f->all.pct)), f->all.pct);
}
