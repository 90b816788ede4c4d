/* diff.c - two analyses of one job side by side (see include/tfd/diff.h):
 * the host compared, its figures before and after, the stages matched by
 * their stage path, the findings matched by rule and stage family, and
 * whether the change made things worse or better by the margin. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/diff.h"
#include "tfd/families.h"
#include "tfd/vec.h"

const char *tfd_diff_move_name(enum tfd_diff_move m)
{
	static const char *const names[] = {"none", "same", "moved", "removed", "new"};

	return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : "?";
}

const char *tfd_diff_status_name(enum tfd_diff_status s)
{
	static const char *const names[] = {"resolved", "still", "new"};

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const struct tfd_host_result *host_named(const struct tfd_analysis *a, const char *name)
{
	for (size_t i = 0; i < a->nhosts; i++)
		if (strcmp(a->hosts[i].host->name, name) == 0)
			return &a->hosts[i];
	return NULL;
}

/* The side's figures from its host result. */
static void side_of(const struct tfd_host_result *h, struct tfd_diff_side *s)
{
	const struct tfd_pipeline *p =
	    h->focus >= 0 && (size_t)h->focus < h->npipelines ? &h->pipelines[h->focus] : NULL;

	memset(s, 0, sizeof(*s));
	s->host = h;
	s->pipeline = p;
	s->input_pct = h->input_pct;
	s->nsteps = h->nsteps;
	s->step_ns = (int64_t)tfd_host_mean_step_ns(h);
	s->between_pct = NAN;
	if (h->steps_span_ns > 0 && h->all.nsteps) {
		s->between_pct = 100.0 * (double)h->between_ns / (double)h->steps_span_ns;
		s->span_step_ns = h->steps_span_ns / (int64_t)h->all.nsteps;
	}
	s->bottleneck = -1;
	if (!p)
		return;
	if (p->capacity.valid && p->capacity.throughput > 0)
		s->throughput = p->capacity.throughput;
	if (p->bottleneck >= 0 && (size_t)p->bottleneck < p->nstages &&
	    tfd_host_has_bottleneck(h)) {
		const struct tfd_stage *st = &p->stages[p->bottleneck];

		s->bottleneck = p->bottleneck;
		s->bn_path = st->path;
		s->bn_name = st->name;
		s->bn_top_op = st->nfn_ops ? st->fn_ops[0].type : NULL;
	}
}

/* The segment that says stage k's rate: an async map's function (its
 * workers), else the segment its own work is in. */
static int own_segment(const struct tfd_pipeline *p, int k)
{
	const struct tfd_segment *fg = tfd_stage_function_segment(p, k);

	return fg ? (int)(fg - p->segments) : p->stages[k].segment;
}

/* Stage k of side i's pipeline into the row for its path. */
static void stage_row(struct tfd_diff_stage *r, const struct tfd_diff_side *s, int i, int k)
{
	const struct tfd_pipeline *p = s->pipeline;
	const struct tfd_stage *st = &p->stages[k];
	int g = own_segment(p, k);

	r->path = st->path;
	r->name = st->name;
	if (i == 0)
		r->before = k;
	else
		r->after = k;
	r->share[i] = st->blocking_share;
	r->bottleneck[i] = k == s->bottleneck;
	if (p->capacity.valid && g >= 0 && (size_t)g < p->nsegments) {
		r->cap[i] = p->segments[g].capacity;
		r->util[i] = p->segments[g].utilization;
	}
}

/* Whether stage paths a and b are one once the prefetches and the
 * datasets that hand elements on above the stage are set aside: adding a
 * final prefetch or a repeat() moves every path below it. */
static bool same_but_inserted(const char *a, const char *b)
{
	for (;;) {
		size_t na = 0, nb = 0;
		const char *x = tfd_path_next(&a, &na, true), *y = tfd_path_next(&b, &nb, true);

		if (!x || !y)
			return !x && !y;
		if (na != nb || memcmp(x, y, na) != 0)
			return false;
	}
}

/* The row of the first run's stages that stage st of the second run is:
 * the one with its stage path; failing that, the one with its path once
 * inserted prefetches and pass-through datasets are set aside (a final
 * prefetch or a repeat() added); failing that (the change renamed a stage
 * above it: Map became ParallelMapV2), the one of its family at its
 * depth, not matched yet, then (the renamed stage itself) the one whose
 * family is the same once "Parallel" is set aside. */
static struct tfd_diff_stage *row_for(struct tfd_diff *d, const struct tfd_stage *st)
{
	const struct tfd_pipeline *pb = d->side[0].pipeline;

	for (size_t j = 0; j < d->nstages; j++)
		if (d->stages[j].after < 0 && d->stages[j].before >= 0 &&
		    strcmp(d->stages[j].path, st->path) == 0)
			return &d->stages[j];
	for (size_t j = 0; j < d->nstages; j++)
		if (d->stages[j].after < 0 && d->stages[j].before >= 0 &&
		    same_but_inserted(d->stages[j].path, st->path))
			return &d->stages[j];
	for (int kin = 0; kin < 2; kin++)
		for (size_t j = 0; j < d->nstages; j++) {
			const struct tfd_stage *b =
			    d->stages[j].before >= 0 ? &pb->stages[d->stages[j].before] : NULL;

			if (d->stages[j].after < 0 && b && b->depth == st->depth && b->family &&
			    st->family &&
			    strcmp(kin ? tfd_serial_family(b->family) : b->family,
				   kin ? tfd_serial_family(st->family) : st->family) == 0)
				return &d->stages[j];
		}
	return NULL;
}

/* The rows: the first run's stages in their order, then the stages only
 * the second run has. */
static void match_stages(struct tfd_diff *d)
{
	size_t nb = d->side[0].pipeline ? d->side[0].pipeline->nstages : 0;
	size_t na = d->side[1].pipeline ? d->side[1].pipeline->nstages : 0;

	d->stages = xcalloc(nb + na + 1, sizeof(*d->stages));
	for (size_t k = 0; k < nb; k++) {
		struct tfd_diff_stage *r = &d->stages[d->nstages++];

		r->before = r->after = -1;
		stage_row(r, &d->side[0], 0, (int)k);
	}
	for (size_t k = 0; k < na; k++) {
		struct tfd_diff_stage *r = row_for(d, &d->side[1].pipeline->stages[k]);

		if (!r) {
			r = &d->stages[d->nstages++];
			r->before = r->after = -1;
		}
		stage_row(r, &d->side[1], 1, (int)k);
	}
}

/* Whether two findings are one: the same rule on a stage of the same
 * family ("" for a pipeline's or a host's; BatchV2 and Batch are one), or
 * (loose) the same rule at all: a change that made a Map a ParallelMapV2
 * leaves "decoding dominates the map" the same finding. */
static bool same_finding(const struct tfd_finding *x, const struct tfd_finding *y, bool loose)
{
	char fx[128], fy[128];

	if (strcmp(x->rule_id, y->rule_id) != 0)
		return false;
	if (loose)
		return true;
	tfd_iter_family(x->stage ? x->stage : "", fx, sizeof(fx));
	tfd_iter_family(y->stage ? y->stage : "", fy, sizeof(fy));
	return strcmp(fx, fy) == 0;
}

static bool of_host(const struct tfd_finding *f, const struct tfd_diff_side *s)
{
	return f->host && strcmp(f->host, s->host->host->name) == 0;
}

/* Each first-run finding's match among the second run's (match[i], fa->n
 * none): exact matches first, then loose ones among those left. */
static size_t *pair_findings(const struct tfd_diff *d, const struct tfd_findings *fb,
			     const struct tfd_findings *fa, bool *used)
{
	size_t *match = xmalloc((fb->n + 1) * sizeof(*match));

	for (size_t i = 0; i < fb->n; i++)
		match[i] = fa->n;
	for (int loose = 0; loose < 2; loose++)
		for (size_t i = 0; i < fb->n; i++)
			for (size_t j = 0; j < fa->n && match[i] == fa->n; j++)
				if (of_host(&fb->v[i], &d->side[0]) && !used[j] &&
				    of_host(&fa->v[j], &d->side[1]) &&
				    same_finding(&fb->v[i], &fa->v[j], loose)) {
					match[i] = j;
					used[j] = true;
				}
	return match;
}

static void match_findings(struct tfd_diff *d, const struct tfd_findings *fb,
			   const struct tfd_findings *fa)
{
	bool *used = xcalloc(fa->n + 1, sizeof(bool));
	size_t *match = pair_findings(d, fb, fa, used);

	d->findings = xcalloc(fb->n + fa->n + 1, sizeof(*d->findings));
	for (int pass = 0; pass < 2; pass++) /* resolved first, then still */
		for (size_t i = 0; i < fb->n; i++) {
			const struct tfd_finding *b = &fb->v[i];
			size_t k = match[i];

			if (!of_host(b, &d->side[0]) || (k < fa->n) != (pass == 1))
				continue;
			d->findings[d->nfindings++] = (struct tfd_diff_finding){
			    k < fa->n ? &fa->v[k] : b, b,
			    k < fa->n ? TFD_DIFF_STILL : TFD_DIFF_RESOLVED};
		}
	free(match);
	for (size_t j = 0; j < fa->n; j++)
		if (!used[j] && of_host(&fa->v[j], &d->side[1]))
			d->findings[d->nfindings++] =
			    (struct tfd_diff_finding){&fa->v[j], NULL, TFD_DIFF_NEW};
	free(used);
}

static enum tfd_diff_move move_of(const struct tfd_diff *d)
{
	const char *b = d->side[0].bn_path, *a = d->side[1].bn_path;

	if (!b && !a)
		return TFD_MOVE_NONE;
	if (b && !a)
		return TFD_MOVE_REMOVED;
	if (!b)
		return TFD_MOVE_NEW;
	/* the same stage, the change renamed it (a Map made parallel): its row */
	for (size_t j = 0; j < d->nstages; j++)
		if (d->stages[j].bottleneck[0] && d->stages[j].bottleneck[1])
			return TFD_MOVE_SAME;
	return strcmp(a, b) == 0 ? TFD_MOVE_SAME : TFD_MOVE_MOVED;
}

/* Worse or better by the margin: the input share in points, the mean step
 * time in percent; said in d->why. */
static void judge(struct tfd_diff *d)
{
	const struct tfd_diff_side *b = &d->side[0], *a = &d->side[1];
	double dp = a->input_pct - b->input_pct;
	double ds = b->step_ns > 0 && a->step_ns > 0
			? 100.0 * (double)(a->step_ns - b->step_ns) / (double)b->step_ns
			: NAN;
	size_t at = 0;
	double dw;

	if (b->step_ns > 0 && a->step_ns > 0)
		d->step_speedup = (double)b->step_ns / (double)a->step_ns;
	d->worse = (!isnan(dp) && dp > d->margin) || (!isnan(ds) && ds > d->margin);
	d->better =
	    !d->worse && ((!isnan(dp) && dp < -d->margin) || (!isnan(ds) && ds < -d->margin));
	if (!isnan(dp))
		at += (size_t)snprintf(d->why + at, sizeof(d->why) - at, "input share %+.1f points",
				       dp);
	if (!isnan(ds) && at < sizeof(d->why))
		at += (size_t)snprintf(d->why + at, sizeof(d->why) - at, "%sstep time %+.1f %%",
				       at ? ", " : "", ds);
	/* the time a step with the long gaps between the steps, where they
	 * count on one side */
	d->between = (b->between_pct >= TFD_BETWEEN_SAYS || a->between_pct >= TFD_BETWEEN_SAYS) &&
		     b->span_step_ns > 0 && a->span_step_ns > 0;
	if (!d->between)
		return;
	dw = 100.0 * (double)(a->span_step_ns - b->span_step_ns) / (double)b->span_step_ns;
	if (dw > d->margin) {
		d->worse = true;
		d->better = false;
	} else if (dw < -d->margin && !d->worse) {
		d->better = true;
	}
	if (at < sizeof(d->why))
		snprintf(d->why + at, sizeof(d->why) - at,
			 "%stime a step with the stretches between the steps %+.1f %%",
			 at ? ", " : "", dw);
}

enum tfd_status tfd_diff_make(const struct tfd_analysis *before, const struct tfd_findings *fb,
			      const struct tfd_analysis *after, const struct tfd_findings *fa,
			      const char *host, double margin, struct tfd_diff *out,
			      struct tfd_err *err)
{
	const struct tfd_host_result *hb, *ha;

	memset(out, 0, sizeof(*out));
	if (!before->nhosts || !after->nhosts)
		return tfd_fail(err, TFD_E_FORMAT, "%s capture holds no host",
				before->nhosts ? "the second" : "the first");
	if (host) {
		hb = host_named(before, host);
		ha = host_named(after, host);
		if (!hb || !ha)
			return tfd_fail(err, TFD_E_USAGE, "no host named '%s' in the %s capture",
					host, hb ? "second" : "first");
	} else {
		hb = &before->hosts[0];
		ha = host_named(after, hb->host->name);
		if (!ha)
			ha = &after->hosts[0];
	}
	side_of(hb, &out->side[0]);
	side_of(ha, &out->side[1]);
	out->margin = margin;
	match_stages(out);
	out->move = move_of(out);
	match_findings(out, fb, fa);
	judge(out);
	return TFD_OK;
}

void tfd_diff_free(struct tfd_diff *d)
{
	free(d->stages);
	free(d->findings);
	memset(d, 0, sizeof(*d));
}
