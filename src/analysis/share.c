/* share.c - the input-bound share of a host: how much of its step time is
 * spent waiting for input (time inside IteratorGetNext* ops).
 *
 * Three figures over three sets of steps:
 *   tf      TensorFlow's convention (xprof-reference.md 5.1): well-formed
 *           steps only, the first and the last dropped when there are more
 *           than 5. This is what TensorBoard's input-pipeline page shows.
 *   steady  well-formed steps less the leading warm-up steps, found with the
 *           rule the bottleneck analysis uses for root calls: leading steps,
 *           at most 10 %, slower than twice the median step.
 *   all     every step.
 * The verdict follows tf, unless steady is in a lower band (only possible
 * with 4 or 5 steps, where tf keeps the first step): warm-up alone never
 * makes a host input-bound.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/imap.h"
#include "tfd/satmath.h"
#include "tfd/select.h"

static double min_of(const double *p, size_t n)
{
	double m = p[0];

	for (size_t i = 1; i < n; i++)
		m = p[i] < m ? p[i] : m;
	return m;
}

static double max_of(const double *p, size_t n)
{
	double m = p[0];

	for (size_t i = 1; i < n; i++)
		m = p[i] > m ? p[i] : m;
	return m;
}

/* The time intervals v[0..n) (disjoint) hold. */
static int64_t length_of(const struct tfd_interval *v, size_t n)
{
	int64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t = sat_add(t, v[i].e - v[i].s);
	return t;
}

static void share_add(struct tfd_share *s, const struct tfd_step_wait *w)
{
	s->step_ns = sat_add(s->step_ns, w->step_ns);
	s->wait_ns = sat_add(s->wait_ns, w->wait_ns);
	s->h2d_ns = sat_add(s->h2d_ns, w->h2d_ns);
	s->create_ns = sat_add(s->create_ns, w->create_ns);
	s->gil_ns = sat_add(s->gil_ns, w->gil_ns);
	if (w->owned)
		for (int k = 0; k < TFD_DEV__COUNT; k++)
			s->dev_ns[k] = sat_add(s->dev_ns[k], w->owned[k]);
	else
		s->dev_ns[TFD_DEV_WAIT] = sat_add(s->dev_ns[TFD_DEV_WAIT], w->wait_ns);
	s->nsteps++;
}

static void share_finish(struct tfd_share *s)
{
	s->pct = s->step_ns > 0
		     ? 100.0 * (double)sat_add(s->wait_ns, s->h2d_ns) / (double)s->step_ns
		     : NAN;
}

/* ---- the step breakdown with device planes --------------------------------
 *
 * TensorFlow's rule (device-input.md): a step's events are made
 * non-overlapping, the kind of higher priority owning a shared instant
 * (enum tfd_dev_kind is in that order), and input is what the host wait
 * and the copies to the device own. The readers reduced the device planes
 * to that breakdown per step (tfd_device_sweep); here each step's parts
 * are looked up by its group_id. */
static void device_steps(const struct tfd_host *h, struct tfd_host_result *hr)
{
	struct imap g = {0};

	for (size_t i = 0; i < h->dev.nsteps; i++)
		imap_put(&g, (uint64_t)h->dev.steps[i].group_id, i);
	for (size_t s = 0; s < h->nsteps; s++) {
		struct tfd_step_wait *w = &hr->step_waits[s];
		size_t i;

		if (!imap_get(&g, (uint64_t)h->steps[s].group_id, &i))
			continue; /* not swept: all zero */
		w->owned = h->dev.steps[i].owned;
		w->wait_ns = w->owned[TFD_DEV_WAIT];
		w->h2d_ns = sat_add(w->owned[TFD_DEV_H2D], w->owned[TFD_DEV_WAIT_HOST]);
		w->compute_ns = w->owned[TFD_DEV_COMPUTE];
	}
	imap_free(&g);
}

enum tfd_bound tfd_bound_of(double pct)
{
	if (isnan(pct))
		return TFD_BOUND_UNKNOWN;
	/* XProf thresholds: >= 20 % highly, >= 5 % moderately input-bound */
	return pct >= 20.0 ? TFD_BOUND_HIGH : pct >= 5.0 ? TFD_BOUND_MODERATE : TFD_BOUND_NOT;
}

bool tfd_host_has_bottleneck(const struct tfd_host_result *h)
{
	return h->bound != TFD_BOUND_NOT;
}

/* Leading warm-up steps among the well-formed ones (indices into sw). */
static size_t warmup_steps(const struct tfd_step_wait *sw, const size_t *wf, size_t nwf)
{
	int64_t *d, med;
	size_t n = 0, limit = (nwf + 9) / 10;

	if (nwf < 4)
		return 0;
	d = xmalloc(nwf * sizeof(*d));
	for (size_t i = 0; i < nwf; i++)
		d[i] = sw[wf[i]].step_ns;
	med = tfd_kth_i64(d, nwf, nwf / 2);
	free(d);
	while (n < limit && sw[wf[n]].step_ns > 2 * med)
		n++;
	return n;
}

/* Whether the leading k of the n well-formed steps were longer by at least
 * half of what they waited more: a ramp's waits add to its steps. When the
 * steps kept their length while the waits went (a host whose cores the
 * pipeline and the step share: the pipeline, ahead, slows the step's
 * compute instead), the time only moved from waiting to computing. */
static bool waits_lengthen(const struct tfd_step_wait *sw, const size_t *wf, size_t n, size_t k)
{
	double step[2] = {0, 0}, wait[2] = {0, 0};

	for (size_t i = 0; i < n; i++) {
		const struct tfd_step_wait *w = &sw[wf[i]];

		step[i >= k] += (double)w->step_ns;
		wait[i >= k] += (double)sat_add(w->wait_ns, w->h2d_ns);
	}
	for (int j = 0; j < 2; j++) {
		step[j] /= (double)(j ? n - k : k);
		wait[j] /= (double)(j ? n - k : k);
	}
	return step[0] - step[1] >= 0.5 * (wait[0] - wait[1]);
}

/* A ramp before the steady state: the one change point in the well-formed
 * steps' input shares (the split into a leading run and the rest with the
 * least squared deviation, the leading run 2 steps to half of them) where
 * the leading run waited clearly more (by 5 points and by twice the rest's
 * spread, its first step aside). An AUTOTUNE ramp or an epoch boundary
 * early in the capture
 * raises many steps a little, which the warm-up rule (single steps over
 * twice the median) does not catch. Returns its length, 0 for none. */
static size_t ramp_steps(const struct tfd_step_wait *sw, const size_t *wf, size_t n, double *ramp,
			 double *settled)
{
	double *x, *s1, *s2, best = INFINITY;
	size_t k_best = 0;

	if (n < 8)
		return 0;
	x = xmalloc(n * sizeof(*x));
	s1 = xcalloc(n + 1, sizeof(*s1));
	s2 = xcalloc(n + 1, sizeof(*s2));
	for (size_t i = 0; i < n; i++) {
		const struct tfd_step_wait *w = &sw[wf[i]];

		x[i] = w->step_ns > 0
			   ? 100.0 * (double)sat_add(w->wait_ns, w->h2d_ns) / (double)w->step_ns
			   : 0;
		s1[i + 1] = s1[i] + x[i];
		s2[i + 1] = s2[i] + x[i] * x[i];
	}
	for (size_t k = 2; k <= n / 2; k++) {
		double a = s2[k] - s1[k] * s1[k] / (double)k,
		       b = (s2[n] - s2[k]) - (s1[n] - s1[k]) * (s1[n] - s1[k]) / (double)(n - k);

		if (a + b < best) {
			best = a + b;
			k_best = k;
		}
	}
	if (k_best) {
		double m1 = s1[k_best] / (double)k_best,
		       m2 = (s1[n] - s1[k_best]) / (double)(n - k_best),
		       v2 = (s2[n] - s2[k_best]) / (double)(n - k_best) - m2 * m2,
		       /* without its first step: one slow first step is warm-up
			* (the rule above), not a ramp */
		    m1r = (s1[k_best] - s1[1]) / (double)(k_best - 1);

		if (!(m1r - m2 >= 5.0 && m1r - m2 >= 2.0 * sqrt(fmax(0.0, v2))) ||
		    !waits_lengthen(sw, wf, n, k_best)) {
			k_best = 0;
		} else {
			*ramp = m1;
			*settled = m2;
		}
	}
	free(x);
	free(s1);
	free(s2);
	return k_best;
}

static void per_step_summary(struct tfd_host_result *hr, const size_t *idx, size_t n)
{
	double *p;

	hr->step_pct_min = hr->step_pct_p50 = hr->step_pct_p90 = hr->step_pct_max = NAN;
	if (!n)
		return;
	p = xmalloc(n * sizeof(*p));
	for (size_t i = 0; i < n; i++) {
		const struct tfd_step_wait *w = &hr->step_waits[idx[i]];

		p[i] = w->step_ns > 0
			   ? 100.0 * (double)sat_add(w->wait_ns, w->h2d_ns) / (double)w->step_ns
			   : 0;
	}
	hr->step_pct_min = min_of(p, n);
	hr->step_pct_max = max_of(p, n);
	hr->step_pct_p50 = tfd_kth_dbl(p, n, n / 2);
	hr->step_pct_p90 = tfd_kth_dbl(p, n, (size_t)((double)(n - 1) * 0.9 + 0.5));
	/* and the step times themselves: the 90th percentile (stragglers) */
	for (size_t i = 0; i < n; i++)
		p[i] = (double)hr->step_waits[idx[i]].step_ns;
	hr->step_p90_ns = (int64_t)tfd_kth_dbl(p, n, (size_t)((double)(n - 1) * 0.9 + 0.5));
	free(p);
}

static void use_share(struct tfd_host_result *hr, const struct tfd_share *s, const char *basis)
{
	hr->input_pct = s->pct;
	hr->step_ns = s->step_ns;
	hr->wait_ns = s->wait_ns;
	hr->h2d_ns = s->h2d_ns;
	hr->create_ns = s->create_ns;
	hr->gil_ns = s->gil_ns;
	memcpy(hr->dev_ns, s->dev_ns, sizeof(hr->dev_ns));
	hr->nsteps = s->nsteps;
	hr->verdict_basis = basis;
	hr->bound = tfd_bound_of(s->pct);
}

/* Every step's share less the first well-formed step's (the one
 * TensorFlow's convention drops at the start), when that step stands out:
 * its own share at least twice the rest's. NAN otherwise, or when no step
 * is left. */
static double pct_after_first(const struct tfd_host_result *hr)
{
	struct tfd_share s = hr->all;
	const struct tfd_step_wait *w = NULL;
	double own;

	if (!hr->step_waits) /* gone (a lean analysis keeps the points) */
		return NAN;
	for (size_t i = 0; i < hr->nstep_waits && !w; i++)
		if (hr->step_waits[i].well_formed)
			w = &hr->step_waits[i];
	if (!w && hr->nstep_waits)
		w = &hr->step_waits[0];
	if (!w || w->step_ns <= 0 || s.step_ns <= w->step_ns)
		return NAN;
	s.step_ns -= w->step_ns;
	s.wait_ns -= w->wait_ns;
	s.h2d_ns -= w->h2d_ns;
	s.create_ns -= w->create_ns;
	s.gil_ns -= w->gil_ns;
	share_finish(&s);
	own = 100.0 * (double)sat_add(w->wait_ns, w->h2d_ns) / (double)w->step_ns;
	return own >= 2.0 * s.pct ? s.pct : NAN;
}

/* The share the verdict uses: the steady state when it is in a lower band
 * than TensorFlow's convention (warm-up alone never makes a host
 * input-bound), its left-out steps a ramp only when ramp_counts; else the
 * convention. Warm-up inflates the share when every step's is in a higher
 * band than the verdict's and than the steps' after the warm-up (after
 * the first one, when no step was long enough to be warm-up but the first
 * waited a share twice the rest's): a convention that drops an ordinary
 * first and last step is no warm-up. */
static void choose_basis(struct tfd_host_result *hr, bool ramp_counts)
{
	enum tfd_bound all = tfd_bound_of(hr->all.pct);
	double after = hr->nwarmup_steps ? hr->steady.pct : pct_after_first(hr);

	if (hr->nwarmup_steps && (ramp_counts || !hr->nramp_steps) && !isnan(hr->steady.pct) &&
	    tfd_bound_of(hr->steady.pct) < tfd_bound_of(hr->tf.pct))
		use_share(hr, &hr->steady, "steady-state");
	else
		use_share(hr, &hr->tf, "tf-convention");
	hr->warmup_inflated = all > hr->bound && !isnan(after) && all > tfd_bound_of(after);
}

/* Gaps between steps, waits between markers: at least this share of the
 * steps' time from the first start to the last end, and more than the
 * waits inside the markers. */
#define GAP_WAIT_MIN 0.05

/* The end of step s's cycle: the next step's start when the steps follow
 * each other (steps sorted by start), else its own end. */
static int64_t cycle_end(const struct tfd_host *h, size_t s)
{
	return s + 1 < h->nsteps && h->steps[s + 1].start_ns > h->steps[s].end_ns
		   ? h->steps[s + 1].start_ns
		   : h->steps[s].end_ns;
}

/* Whether the markers leave the input out: the steps follow each other
 * (none overlaps the next by more than a tenth of itself: a group's
 * extent, in a trace TensorFlow's converter wrote, can pass its marker's
 * end by the step's last async ops) and the waits between them are
 * GAP_WAIT_MIN of the time or more, and more than the waits inside them:
 * the training loop calls next() between its step markers (`for step, x
 * in enumerate(ds):` with the marker around the step function alone). *gap
 * the waits between the steps. */
static bool markers_leave_input_out(const struct tfd_host *h, const struct tfd_interval *u,
				    size_t nu, int64_t *gap)
{
	int64_t inside = 0, span;

	*gap = 0;
	if (h->nsteps < 2)
		return false;
	for (size_t s = 0; s < h->nsteps; s++) {
		if (s + 1 < h->nsteps && h->steps[s].end_ns - h->steps[s + 1].start_ns >
					     (h->steps[s].end_ns - h->steps[s].start_ns) / 10)
			return false;
		inside = sat_add(
		    inside, tfd_interval_overlap(u, nu, h->steps[s].start_ns, h->steps[s].end_ns));
		*gap =
		    sat_add(*gap, tfd_interval_overlap(u, nu, h->steps[s].end_ns, cycle_end(h, s)));
	}
	span = h->steps[h->nsteps - 1].end_ns - h->steps[0].start_ns;
	return span > 0 && (double)*gap >= GAP_WAIT_MIN * (double)span && *gap > inside;
}

/* TensorFlow's convention's steps of sw[0..n) (well_formed set): the
 * well-formed ones, or all when none is (TensorFlow would report no
 * steps), into wf (their number returned); the first and the last are
 * left out when there are more than 5: wf[*first..*last) count. */
static size_t tf_steps(const struct tfd_step_wait *sw, size_t n, size_t *wf, size_t *first,
		       size_t *last)
{
	size_t nwf = 0;

	for (size_t s = 0; s < n; s++)
		if (sw[s].well_formed)
			wf[nwf++] = s;
	if (!nwf)
		for (size_t s = 0; s < n; s++)
			wf[nwf++] = s;
	*first = nwf > 5 ? 1 : 0;
	*last = nwf > 5 ? nwf - 1 : nwf;
	return nwf;
}

/* TensorFlow's convention over the markers alone (a host without device
 * planes), as from_steps() takes it. */
static double markers_tf_pct(const struct tfd_host *h, const struct tfd_interval *u, size_t nu)
{
	struct tfd_step_wait *sw = xcalloc(h->nsteps, sizeof(*sw));
	size_t *wf = xmalloc(h->nsteps * sizeof(*wf)), first, last;
	struct tfd_share tf = {0};

	for (size_t s = 0; s < h->nsteps; s++) {
		sw[s].step_ns = h->steps[s].end_ns - h->steps[s].start_ns;
		sw[s].wait_ns =
		    tfd_interval_overlap(u, nu, h->steps[s].start_ns, h->steps[s].end_ns);
		sw[s].well_formed = sw[s].step_ns > 0 && sw[s].wait_ns < sw[s].step_ns;
	}
	tf_steps(sw, h->nsteps, wf, &first, &last);
	for (size_t i = first; i < last; i++)
		share_add(&tf, &sw[wf[i]]);
	share_finish(&tf);
	free(wf);
	free(sw);
	return tf.pct;
}

/* Of step w's wait, the part in the intervals p[0..n). */
static int64_t part_of(const struct tfd_step_wait *w, const struct tfd_interval *p, size_t n,
		       int64_t a, int64_t b)
{
	int64_t c = n ? tfd_interval_overlap(p, n, a, b) : 0;

	return c < w->wait_ns ? c : w->wait_ns;
}

/* The time of host h's session runs that read no input (sorted, the
 * outermost) within [a, b) and outside hw's holes: a pass over a pipeline
 * read only between the steps counts the runs it holds (a validation
 * pass's own initializer) as its own. */
static int64_t idle_outside_holes(const struct tfd_host *h, const struct tfd_host_waits *hw,
				  int64_t a, int64_t b)
{
	size_t k = tfd_intervals_started(h->idle_runs, h->nidle_runs, a);
	int64_t t = 0;

	/* (disjoint: of those started by a, only the last can reach into it) */
	for (size_t i = k ? k - 1 : 0; i < h->nidle_runs && h->idle_runs[i].s < b; i++) {
		int64_t s = h->idle_runs[i].s > a ? h->idle_runs[i].s : a;
		int64_t e = h->idle_runs[i].e < b ? h->idle_runs[i].e : b;

		if (s < e)
			t += (e - s) -
			     (hw->nholes ? tfd_interval_overlap(hw->holes, hw->nholes, s, e) : 0);
	}
	return t;
}

/* The long gaps between the host's steps that its share leaves out
 * (struct tfd_host_result's between_ns), and the span of its steps. When
 * the markers leave the input out (gaps counted), each step's share runs
 * to the next one's start less the holes in it (a validation pass between
 * the markers): only those are left out. Steps out of order: none. */
static void between_steps(const struct tfd_host *h, struct tfd_host_result *hr,
			  const struct tfd_host_waits *hw)
{
	size_t n = h->nsteps;
	struct tfd_interval *sp;
	int64_t med, medgap, reach;

	if (n < 3)
		return;
	sp = xmalloc(n * sizeof(*sp));
	for (size_t i = 0; i < n; i++) {
		sp[i] = (struct tfd_interval){h->steps[i].start_ns, h->steps[i].end_ns};
		if (i && sp[i].s < sp[i - 1].s) {
			free(sp);
			return;
		}
	}
	tfd_step_gap_medians(sp, n, &med, &medgap);
	reach = sp[0].e;
	for (size_t i = 1; i < n; i++) {
		int64_t gap = sp[i].s - reach, pass, out;

		if (sp[i].e > reach)
			reach = sp[i].e;
		if (!tfd_long_step_gap(gap, med, medgap))
			continue;
		/* what the loop did in it: passes over pipelines read only
		 * between the steps (the holes, cut from the waits: all the
		 * share leaves out of the gap where the markers leave the input
		 * out), and outside them its waits and the iterators it made */
		pass = tfd_interval_overlap(hw->holes, hw->nholes, sp[i].s - gap, sp[i].s);
		out = hr->gaps_counted ? pass : gap;
		if (!(out > 0))
			continue;
		hr->between_ns = sat_add(hr->between_ns, out);
		hr->nbetween++;
		hr->between_pass_ns = sat_add(hr->between_pass_ns, pass);
		if (hr->gaps_counted)
			continue;
		hr->between_wait_ns =
		    sat_add(hr->between_wait_ns,
			    tfd_interval_overlap(hw->all, hw->nall, sp[i].s - gap, sp[i].s));
		hr->between_create_ns =
		    sat_add(hr->between_create_ns, tfd_interval_overlap(hw->creates, hw->ncreates,
									sp[i].s - gap, sp[i].s));
		hr->between_session_ns = sat_add(hr->between_session_ns,
						 idle_outside_holes(h, hw, sp[i].s - gap, sp[i].s));
	}
	hr->steps_span_ns = reach - sp[0].s;
	free(sp);
}

static void from_steps(const struct tfd_host *h, struct tfd_host_result *hr,
		       const struct tfd_host_waits *hw)
{
	const struct tfd_interval *u = hw->all;
	size_t nu = hw->nall;
	size_t *wf = xmalloc(h->nsteps * sizeof(*wf)), nwf, first, last, nw;
	bool compute = hr->has_device && h->dev.kind_n[TFD_DEV_COMPUTE] > 0;

	hr->step_waits = xcalloc(h->nsteps, sizeof(*hr->step_waits));
	hr->nstep_waits = h->nsteps;
	if (hr->has_device)
		device_steps(h, hr);
	if (!hr->has_device && markers_leave_input_out(h, u, nu, &hr->gap_wait_ns)) {
		hr->gaps_counted = true;
		hr->markers_pct = markers_tf_pct(h, u, nu);
	}
	for (size_t s = 0; s < h->nsteps; s++) {
		struct tfd_step_wait *w = &hr->step_waits[s];
		int64_t end = hr->gaps_counted ? cycle_end(h, s) : h->steps[s].end_ns;

		w->start_ns = h->steps[s].start_ns;
		w->step_ns = end - h->steps[s].start_ns;
		if (hr->gaps_counted && hw->nholes) /* a cycle's time less its holes */
			w->step_ns -=
			    tfd_interval_overlap(hw->holes, hw->nholes, h->steps[s].start_ns, end);
		if (!hr->has_device) /* else the device breakdown's */
			w->wait_ns = tfd_interval_overlap(u, nu, h->steps[s].start_ns, end);
		w->create_ns = part_of(w, hw->creates, hw->ncreates, h->steps[s].start_ns, end);
		w->gil_ns = part_of(w, hw->gil, hw->ngil, h->steps[s].start_ns, end);
		/* TensorFlow keeps a step with compute: device compute when
		 * the device ran kernels */
		w->well_formed = w->step_ns > 0 && sat_add(w->wait_ns, w->h2d_ns) < w->step_ns &&
				 (!compute || w->compute_ns > 0);
		share_add(&hr->all, w);
	}
	between_steps(h, hr, hw);
	nwf = tf_steps(hr->step_waits, h->nsteps, wf, &first, &last);
	for (size_t i = first; i < last; i++)
		share_add(&hr->tf, &hr->step_waits[wf[i]]);
	nw = warmup_steps(hr->step_waits, wf, nwf);
	{
		double rp = NAN, sp = NAN;
		size_t nr = ramp_steps(hr->step_waits, wf, nwf, &rp, &sp);

		if (nr > nw) {
			nw = nr;
			hr->nramp_steps = nr;
			hr->ramp_pct = rp;
			hr->settled_pct = sp;
		}
	}
	hr->nwarmup_steps = nw;
	for (size_t i = 0; i < nwf; i++) {
		if (i < nw)
			hr->warmup_wait_ns =
			    sat_add(hr->warmup_wait_ns, hr->step_waits[wf[i]].wait_ns);
		else
			share_add(&hr->steady, &hr->step_waits[wf[i]]);
	}
	share_finish(&hr->all);
	share_finish(&hr->tf);
	share_finish(&hr->steady);
	per_step_summary(hr, wf + first, last - first);
	free(wf);
	hr->input_basis = "steps";
	choose_basis(hr, true);
}

/* Whether stage i of p is no cache and runs right below one. */
static bool below_cache(const struct tfd_pipeline *p, size_t i)
{
	int up = p->stages[i].parent;

	return up >= 0 && (size_t)up < p->nstages &&
	       tfd_family_has(p->stages[up].family, TFD_FAM_CACHE) &&
	       !tfd_family_has(p->stages[i].family, TFD_FAM_CACHE);
}

/* How pipeline p uses a cache: 1 fills it (a stage below a cache ran), 2
 * reads it back (its cache ran, nothing below it), 0 has none. */
static int cache_use(const struct tfd_pipeline *p)
{
	bool cache = false;

	for (size_t i = 0; i < p->nstages; i++) {
		if (below_cache(p, i))
			return 1;
		cache |= tfd_family_has(p->stages[i].family, TFD_FAM_CACHE);
	}
	return cache ? 2 : 0;
}

/* The pipeline that stands for pipeline i's dataset (i itself when it
 * repeats none: struct tfd_pipeline's repeat_of1). */
static size_t group_of(const struct tfd_host_result *h, size_t i)
{
	int r = h->pipelines[i].repeat_of1;

	return r > 0 ? (size_t)r - 1 : i;
}

int tfd_cache_filled_in_capture(const struct tfd_pipeline *p)
{
	for (size_t i = 0; i < p->nstages; i++) {
		const struct tfd_stage *below = &p->stages[i];

		/* (a quarter and two calls of slack: the end of the input is a
		 * call of the cache's that may not reach the stage) */
		if (below_cache(p, i) && p->stages[below->parent].calls_all >
					     below->calls_all + below->calls_all / 4 + 2)
			return (int)i;
	}
	return -1;
}

bool tfd_cache_read_back(const struct tfd_host_result *h, size_t pi)
{
	const struct tfd_pipeline *p = &h->pipelines[pi];
	size_t own = group_of(h, pi);

	if (own >= h->npipelines || cache_use(p) != 1)
		return false;
	if (tfd_cache_filled_in_capture(p) >= 0)
		return true;
	for (size_t i = 0; i < h->npipelines; i++)
		if (i != pi && group_of(h, i) == own &&
		    h->pipelines[i].first_start_ns > p->first_start_ns &&
		    cache_use(&h->pipelines[i]) == 2)
			return true;
	return false;
}

/* Whether any of host h's pipelines fills a cache that a later iterator
 * of its dataset read back (tfd_cache_read_back), in one pass: a loop
 * that makes an iterator each step can have thousands of pipelines. */
static bool cache_read_back_any(const struct tfd_host_result *h)
{
	size_t n = h->npipelines;
	int64_t *last_read = xmalloc((n + 1) * sizeof(*last_read));
	int *use = xmalloc((n + 1) * sizeof(*use));
	bool any = false;

	for (size_t i = 0; i < n; i++)
		last_read[i] = INT64_MIN;
	for (size_t i = 0; i < n; i++) {
		size_t own = group_of(h, i);

		use[i] = cache_use(&h->pipelines[i]);
		if (use[i] == 2 && own < n && h->pipelines[i].first_start_ns > last_read[own])
			last_read[own] = h->pipelines[i].first_start_ns;
	}
	for (size_t i = 0; i < n && !any; i++) {
		size_t own = group_of(h, i);

		any = use[i] == 1 && own < n &&
		      (last_read[own] > h->pipelines[i].first_start_ns ||
		       tfd_cache_filled_in_capture(&h->pipelines[i]) >= 0);
	}
	free(last_read);
	free(use);
	return any;
}

void tfd_share_settle_ramp(struct tfd_host_result *hr)
{
	bool tuned = false;

	if (!hr->nramp_steps || !hr->verdict_basis ||
	    strcmp(hr->verdict_basis, "steady-state") != 0)
		return;
	/* a ramp counts when a pipeline was still being tuned, or when the
	 * steps waited for a cache to fill that a later epoch read back */
	for (size_t i = 0; i < hr->npipelines && !tuned; i++)
		tuned = hr->pipelines[i].tuned_in_capture;
	choose_basis(hr, tuned || cache_read_back_any(hr));
}

/* The steps summed in groups of consecutive steps, at most max groups. */
static void step_points(const struct tfd_host_result *hr, size_t max, struct tfd_step_points *pt)
{
	size_t n = hr->nstep_waits;

	pt->per = n > max ? (n + max - 1) / max : 1;
	pt->n = (n + pt->per - 1) / pt->per;
	pt->step_ns = xcalloc(pt->n + 1, sizeof(*pt->step_ns));
	pt->wait_ns = xcalloc(pt->n + 1, sizeof(*pt->wait_ns));
	if (hr->has_device) {
		pt->h2d_ns = xcalloc(pt->n + 1, sizeof(*pt->h2d_ns));
		pt->compute_ns = xcalloc(pt->n + 1, sizeof(*pt->compute_ns));
	}
	for (size_t k = 0; k < n; k++) {
		size_t i = k / pt->per;

		pt->step_ns[i] = sat_add(pt->step_ns[i], hr->step_waits[k].step_ns);
		pt->wait_ns[i] = sat_add(pt->wait_ns[i], hr->step_waits[k].wait_ns);
		if (hr->has_device) {
			pt->h2d_ns[i] = sat_add(pt->h2d_ns[i], hr->step_waits[k].h2d_ns);
			pt->compute_ns[i] =
			    sat_add(pt->compute_ns[i], hr->step_waits[k].compute_ns);
		}
	}
}

/* Without step markers, the stretch the input was read over: from the
 * first wait to the last, plus one period (the median between waits'
 * starts: the step after the last wait). A capture also holds the job's
 * start-up and teardown (a Keras fit's, its functions traced) where no
 * step consumes the input: over its whole span a job that waited 94 % of
 * each step read as 47 %. The capture span when the waits are too few to
 * tell a period (fewer than 3), or when the stretch would pass it. */
static int64_t read_span(const struct tfd_host *h, const struct tfd_interval *u, size_t nu)
{
	int64_t span = h->span_end_ns - h->span_start_ns, *gap, period, s;

	if (nu < 3)
		return span;
	gap = xmalloc((nu - 1) * sizeof(*gap));
	for (size_t i = 0; i + 1 < nu; i++)
		gap[i] = u[i + 1].s - u[i].s;
	period = tfd_kth_i64(gap, nu - 1, (nu - 1) / 2);
	free(gap);
	s = sat_add(u[nu - 1].s - u[0].s, period);
	/* (at least to the last wait's end: a long last wait, the loop's
	 * first element from a pipeline still filling, is not over in a
	 * period) */
	if (s < u[nu - 1].e - u[0].s)
		s = u[nu - 1].e - u[0].s;
	return s > 0 && s < span ? s : span;
}

void tfd_share_compute(const struct tfd_host *h, struct tfd_host_result *hr)
{
	struct tfd_host_waits w;

	/* with device planes the steps' waits are the device sweep's */
	tfd_host_waits_read(h, h->dev.read && h->nsteps, &w);
	tfd_share_compute_with(h, hr, &w);
}

/* The union v[0..*n) (sorted, disjoint) less the holes h[0..nh) (the
 * same), in place; *n its new length. */
static void cut_holes(struct tfd_interval **v, size_t *n, const struct tfd_interval *h, size_t nh)
{
	struct tfd_interval *out;
	size_t w = 0, k = 0;

	if (!*v || !*n || !nh)
		return;
	out = xmalloc((*n + nh + 1) * sizeof(*out));
	for (size_t i = 0; i < *n; i++) {
		int64_t a = (*v)[i].s, b = (*v)[i].e;

		while (k < nh && h[k].e <= a)
			k++;
		for (size_t j = k; j < nh && h[j].s < b && a < b; j++) {
			if (h[j].s > a)
				out[w++] = (struct tfd_interval){a, h[j].s};
			if (h[j].e > a)
				a = h[j].e;
		}
		if (a < b)
			out[w++] = (struct tfd_interval){a, b};
	}
	free(*v);
	*v = out;
	*n = w;
}

void tfd_share_compute_with(const struct tfd_host *h, struct tfd_host_result *hr,
			    struct tfd_host_waits *hw)
{
	struct tfd_interval *u;
	size_t nu;

	if (h->dev.read && h->nsteps) { /* the device sweep's waits, then */
		free(hw->all);
		hw->all = NULL;
		hw->nall = 0;
	}
	/* what the loop read between the markers for another pipeline (a
	 * validation pass) is not the steps' input */
	cut_holes(&hw->all, &hw->nall, hw->holes, hw->nholes);
	cut_holes(&hw->creates, &hw->ncreates, hw->holes, hw->nholes);
	cut_holes(&hw->gil, &hw->ngil, hw->holes, hw->nholes);
	u = hw->all;
	nu = hw->nall;
	hr->iterators_made = hw->nroots_made;

	hr->input_pct = hr->tf.pct = hr->steady.pct = hr->all.pct = hr->markers_pct = NAN;
	hr->step_pct_min = hr->step_pct_p50 = hr->step_pct_p90 = hr->step_pct_max = NAN;
	hr->input_basis = hr->verdict_basis = "none";
	hr->bound = TFD_BOUND_UNKNOWN;
	hr->has_device = h->dev.read;
	if (hr->has_device && h->dev.h2d_bytes && h->nsteps)
		hr->h2d_bytes_per_step = (double)h->dev.h2d_bytes / (double)h->nsteps;
	if (h->nsteps) {
		from_steps(h, hr, hw);
		hr->first_step_wait_ns = hr->step_waits[0].wait_ns;
		step_points(hr, TFD_STEP_POINTS, &hr->step_points);
		step_points(hr, TFD_STEP_BARS, &hr->step_bars);
	} else if (nu && h->span_end_ns > h->span_start_ns) {
		/* no step markers: the capture's span stands for the steps (on a
		 * host without device planes, the stretch its input was read) */
		struct tfd_share s = {0};

		if (hr->has_device) {
			s.step_ns = h->span_end_ns - h->span_start_ns;
			memcpy(s.dev_ns, h->dev.span_owned, sizeof(s.dev_ns));
			s.wait_ns = s.dev_ns[TFD_DEV_WAIT];
			s.h2d_ns = sat_add(s.dev_ns[TFD_DEV_H2D], s.dev_ns[TFD_DEV_WAIT_HOST]);
		} else {
			s.step_ns = read_span(h, u, nu);
			s.wait_ns = length_of(u, nu);
			s.create_ns = length_of(hw->creates, hw->ncreates);
			s.gil_ns = length_of(hw->gil, hw->ngil);
			s.dev_ns[TFD_DEV_WAIT] = s.wait_ns;
		}
		share_finish(&s);
		hr->all = s;
		hr->input_basis = "capture span";
		use_share(hr, &s, "capture span");
		hr->nsteps = 0;
	}
	tfd_host_waits_free(hw);
}

struct tfd_interval *tfd_share_step_spans(const struct tfd_host *h,
					  const struct tfd_host_result *hr, size_t *n)
{
	struct tfd_interval *iv;

	*n = 0;
	if (!h->nsteps || !hr->input_basis || strcmp(hr->input_basis, "steps") != 0)
		return NULL;
	iv = xmalloc(h->nsteps * sizeof(*iv));
	for (size_t s = 0; s < h->nsteps; s++)
		iv[s] = (struct tfd_interval){
		    h->steps[s].start_ns, hr->gaps_counted ? cycle_end(h, s) : h->steps[s].end_ns};
	*n = h->nsteps;
	return iv;
}

double tfd_host_part_pct(const struct tfd_host_result *h, int64_t ns)
{
	return h->step_ns > 0 && !isnan(h->input_pct) ? 100.0 * (double)ns / (double)h->step_ns
						      : NAN;
}

double tfd_host_wait_pct(const struct tfd_host_result *h)
{
	return tfd_host_part_pct(h, h->wait_ns);
}

double tfd_h2d_pct(const struct tfd_host_result *h)
{
	return h->has_device ? tfd_host_part_pct(h, h->h2d_ns) : NAN;
}

bool tfd_h2d_dominates(const struct tfd_host_result *h)
{
	return h->has_device && h->h2d_ns > 0 && h->h2d_ns > h->wait_ns;
}
