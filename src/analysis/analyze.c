/* analyze.c - tfd_analyze(): per host, the iterator graph (model/graph.c),
 * then the passes: input-bound share (share.c), call linking (link.c), each
 * pipeline (pipeline.c: self and blocking time, capacity.c, bottleneck.c);
 * then the hosts ranked, most input-bound first.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/graph.h"
#include "tfd/satmath.h"

#define diag tfd_analysis_diag

void tfd_analysis_diag(struct tfd_analysis *a, const char *host, const char *fmt, ...)
{
	va_list ap;
	struct tfd_diag *d;

	a->diags = xrealloc(a->diags, (a->ndiags + 1) * sizeof(*a->diags));
	d = &a->diags[a->ndiags++];
	d->host = host;
	va_start(ap, fmt);
	vsnprintf(d->msg, sizeof(d->msg), fmt, ap);
	va_end(ap);
}

bool tfd_stage_is_async_edge(const struct tfd_stage *s)
{
	/* a call not nested in its parent on the same thread ran on another one */
	size_t async =
	    s->links[TFD_LINK_PRODUCE] + s->links[TFD_LINK_OVERLAP] + s->links[TFD_LINK_NONE];

	return async > s->links[TFD_LINK_SYNC];
}

const char *tfd_bound_name(enum tfd_bound b)
{
	switch (b) {
	case TFD_BOUND_HIGH:
		return "highly";
	case TFD_BOUND_MODERATE:
		return "moderately";
	case TFD_BOUND_NOT:
		return "not";
	default:
		return "unknown";
	}
}

/* Where the host's pipelines were read against its step markers: whether
 * the markers hold a pipeline's next() (its root calls mostly inside
 * them), the markers' spans, and, then, the stretches between two markers
 * the loop spent reading a pipeline that is read only between them, in
 * fewer than half the gaps (a Keras validation pass, a custom loop's
 * evaluation every N steps): from
 * the marker before to the end of its last root call there, its iterator
 * made and its elements read. Their waits had made the waits between the
 * markers count as the training input (a Keras job whose pipelines keep
 * up was HIGHLY input-bound at 33 %, its markers saying 6 %). */
struct marker_reads {
	bool hold;
	struct tfd_interval *mk, *holes;
	size_t nmk, nholes;
};

/* Per root iterator: its root calls' time, and the part inside markers. */
static void root_times(const struct host_ctx *c, const struct marker_reads *mr, int64_t *all,
		       int64_t *in)
{
	struct tfd_root_walk w;
	struct tfd_root_call rc;

	for (tfd_root_walk_begin(&w, c, c->root_list, c->nroot_list);
	     tfd_root_walk_next(&w, &rc);) {
		all[rc.iter] = sat_add(all[rc.iter], rc.end_ns - rc.start_ns);
		in[rc.iter] = sat_add(
		    in[rc.iter], tfd_interval_overlap(mr->mk, mr->nmk, rc.start_ns, rc.end_ns));
	}
}

/* Root call [a, b) between two markers: the stretch from the marker before
 * it to its end (nothing when it starts inside a marker). */
static bool hole_of(const struct marker_reads *mr, int64_t a, int64_t b, struct tfd_interval *h)
{
	size_t lo = tfd_intervals_started(mr->mk, mr->nmk, a);

	if (!lo || mr->mk[lo - 1].e > a)
		return false;
	*h = (struct tfd_interval){mr->mk[lo - 1].e, b};
	if (lo < mr->nmk && mr->mk[lo].s < h->e)
		h->e = mr->mk[lo].s;
	return h->e > h->s;
}

struct root_start {
	int64_t start;
	bool between; /* read between the markers */
};

static int cmp_root_start(const void *a, const void *b)
{
	const struct root_start *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/* Whether *x lies between two markers where a pipeline read only between
 * them was read (reads: those stretches, merged). */
static bool in_read_gap(const struct marker_reads *mr, const struct tfd_interval *reads,
			size_t nreads, const struct tfd_interval *x)
{
	struct tfd_interval gap;

	if (!nreads || !hole_of(mr, x->s, x->e, &gap))
		return false;
	/* the whole gap: from the marker before to the marker after (the
	 * first to start at or after its end) */
	{
		size_t lo = tfd_intervals_started(mr->mk, mr->nmk, x->e - 1);

		gap.e = lo < mr->nmk ? mr->mk[lo].s : INT64_MAX;
	}
	return tfd_interval_overlap(reads, nreads, gap.s, gap.e) > 0;
}

/* Iterators made (w's creates) for a pipeline read between the markers:
 * the first pipeline to start after one is the one it was made for; when
 * none starts after it, one made between the markers where such a
 * pipeline was read (Keras makes the next validation pass's iterator at
 * the end of this one). */
static void creation_holes(const struct host_ctx *c, const int64_t *all, const int64_t *in,
			   const struct tfd_host_waits *w, const struct marker_reads *mr, void *hvp)
{
	VEC(struct tfd_interval) *hv = hvp;
	size_t n = 0, nread = hv->n; /* the reads' stretches, merged */
	struct root_start *rs;

	if (!w->ncreates)
		return;
	rs = xmalloc((c->iters.n + 1) * sizeof(*rs));
	for (size_t i = 0; i < c->iters.n; i++)
		if (c->root[i] == (int)i && all[i] > 0)
			rs[n++] =
			    (struct root_start){c->iters.v[i].first_start, 100 * in[i] < all[i]};
	qsort(rs, n, sizeof(*rs), cmp_root_start);
	for (size_t k = 0; k < w->ncreates; k++) {
		size_t lo = 0, hi = n;

		while (lo < hi) { /* the first root starting at or after it */
			size_t mid = lo + (hi - lo) / 2;

			if (rs[mid].start < w->creates[k].s)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n ? rs[lo].between : in_read_gap(mr, hv->v, nread, &w->creates[k]))
			vec_push(hv, w->creates[k]);
	}
	free(rs);
}

static void marker_reads(const struct host_ctx *c, const struct tfd_host_waits *w,
			 struct marker_reads *mr)
{
	const struct tfd_host *h = c->h;
	int64_t *all, *in;
	VEC(struct tfd_interval) hv = {0};
	struct tfd_root_walk rw;
	struct tfd_root_call rc;

	memset(mr, 0, sizeof(*mr));
	if (h->nsteps < 2 || !c->iters.n)
		return;
	mr->mk = xmalloc(h->nsteps * sizeof(*mr->mk));
	mr->nmk = h->nsteps;
	for (size_t s = 0; s < h->nsteps; s++)
		mr->mk[s] = (struct tfd_interval){h->steps[s].start_ns, h->steps[s].end_ns};
	all = xcalloc(c->iters.n, sizeof(int64_t));
	in = xcalloc(c->iters.n, sizeof(int64_t));
	root_times(c, mr, all, in);
	for (size_t i = 0; i < c->iters.n && !mr->hold; i++)
		mr->hold = all[i] > 0 && 2 * in[i] >= all[i];
	for (tfd_root_walk_begin(&rw, c, c->root_list, c->nroot_list);
	     mr->hold && tfd_root_walk_next(&rw, &rc);) {
		int i = rc.iter;
		struct tfd_interval hole;

		/* a root read between the markers: under 1 % of it inside */
		if (all[i] > 0 && 100 * in[i] < all[i] &&
		    hole_of(mr, rc.start_ns, rc.end_ns, &hole))
			vec_push(&hv, hole);
	}
	/* one stretch per gap (each starts at its gap's marker): read in half
	 * the gaps or more, such a pipeline is the loop's own cadence (a
	 * second dataset whose next() comes before the marker every step),
	 * its input, not a pass now and then */
	hv.n = tfd_interval_union(hv.v, hv.n);
	if (mr->hold && 2 * hv.n >= mr->nmk - 1) {
		mr->hold = false;
		hv.n = 0;
	}
	if (mr->hold)
		creation_holes(c, all, in, w, mr, &hv);
	free(all);
	free(in);
	if (hv.n) {
		mr->holes = hv.v;
		mr->nholes = tfd_interval_union(hv.v, hv.n);
	} else {
		vec_free(&hv);
	}
}

/* A host stepped by its session's runs (TensorFlow 1): a run that reads
 * only another pipeline than the one most runs read is an evaluation's
 * (Keras' validation pass, a loop's eval iterator every N steps), as a
 * pipeline read between step markers is: a pipeline read in runs of its
 * own, never beside the most-read one, and in at most half as many runs,
 * is outside the steps (no stage advice of its own). pipe[i]: the host
 * pipeline of root iterator i, -1 none. */
static void session_eval_passes(const struct host_ctx *c, const int *pipe,
				struct tfd_host_result *hr)
{
	size_t n = c->nstep_spans, np = hr->npipelines, most = 0;
	int *step_pipe = xmalloc((n + 1) * sizeof(*step_pipe)); /* -1 none, -2 several */
	size_t *runs = xcalloc(np + 1, sizeof(*runs));
	bool *beside = xcalloc(np + 1, sizeof(*beside));
	struct tfd_root_walk rw;
	struct tfd_root_call rc;

	for (size_t s = 0; s < n; s++)
		step_pipe[s] = -1;
	for (tfd_root_walk_begin(&rw, c, c->root_list, c->nroot_list);
	     tfd_root_walk_next(&rw, &rc);) {
		int p = pipe[rc.iter];
		int64_t t = rc.start_ns;
		size_t s;

		if (p < 0)
			continue;
		s = tfd_intervals_started(c->step_spans, n, t);
		if (!s || t >= c->step_spans[s - 1].e)
			continue;
		s--;
		/* a pipeline read beside another in a run: both are the
		 * training's (the run's first one, and each after it) */
		if (step_pipe[s] == -1) {
			step_pipe[s] = p;
		} else if (step_pipe[s] != p) {
			if (step_pipe[s] >= 0)
				beside[step_pipe[s]] = true;
			beside[p] = true;
			step_pipe[s] = -2;
		}
	}
	for (size_t s = 0; s < n; s++)
		if (step_pipe[s] >= 0)
			runs[step_pipe[s]]++;
	for (size_t p = 1; p < np; p++)
		if (runs[p] > runs[most])
			most = p;
	for (size_t p = 0; p < np; p++)
		if (p != most && runs[p] && !beside[p] && 2 * runs[p] <= runs[most])
			hr->pipelines[p].outside_steps = true;
	free(step_pipe);
	free(runs);
	free(beside);
}

/* Every pipeline of the host: host pipelines first, then device ones, each
 * in order of their first call. */
static enum tfd_status build_pipelines(struct host_ctx *c, struct tfd_host_result *hr,
				       struct analysis_priv *pv,
				       const struct tfd_analyze_opts *opts, struct tfd_err *err)
{
	struct tfd_graph_groups g;
	struct tfd_thread_roots *troots = xmalloc(sizeof(*troots));
	size_t nhost = 0, ndev = 0;
	enum tfd_status st = TFD_OK;
	int *pipe; /* per root iterator: its host pipeline, -1 */

	tfd_graph_group(c, &g);
	tfd_thread_roots_make(c, &g, troots, c->from_stream);
	if (c->stream && !c->from_stream)
		tfd_stream_troots_check(c, &g, troots);
	c->troots = troots;
	hr->pipelines = xcalloc(g.n + 1, sizeof(*hr->pipelines));
	pipe = xmalloc((c->iters.n + 1) * sizeof(*pipe));
	for (size_t i = 0; i < c->iters.n; i++)
		pipe[i] = -1;
	for (int pass = 0; pass < 2 && !st; pass++)
		for (size_t r = 0; r < g.n && !st; r++) {
			struct tfd_pipeline *p;
			struct bucket bk;

			if (g.is_device[r] != (pass == 1))
				continue;
			if (!g.is_device[r])
				pipe[g.root[r]] = (int)hr->npipelines;
			p = &hr->pipelines[hr->npipelines++];
			p->is_device = g.is_device[r];
			snprintf(p->name, sizeof(p->name), "%s:%zu",
				 p->is_device ? "Device" : "Host", p->is_device ? ndev++ : nhost++);
			bk.iters = g.iters + g.ioff[r];
			bk.niters = g.ioff[r + 1] - g.ioff[r];
			bk.calls = g.calls ? g.calls + g.coff[r] : NULL;
			bk.ncalls = g.coff[r + 1] - g.coff[r];
			st = tfd_pipeline_build(c, g.root[r], &bk, p, pv, opts, err);
		}
	hr->nhost_pipelines = nhost;
	if (!st && nhost > 1 && c->h->steps_from_session_runs && c->nstep_spans)
		session_eval_passes(c, pipe, hr);
	free(pipe);
	c->troots = NULL;
	tfd_thread_roots_free(troots);
	free(troots);
	tfd_graph_groups_release(&g);
	return st;
}

/* The host's input share, from its waits read before (taken) or now;
 * lean: the reports draw the points and bars, not every step. */
static void host_share(const struct tfd_host *h, bool lean, struct tfd_host_result *hr,
		       struct tfd_host_waits *waits)
{
	if (waits->all || waits->holes)
		tfd_share_compute_with(h, hr, waits);
	else
		tfd_share_compute(h, hr);
	if (lean) {
		free(hr->step_waits);
		hr->step_waits = NULL;
	}
}

/* A loop inside a tf.function: its input's roots (below the loop's scan)
 * carry the options (cpu_budget, threadpool_size) its own root does, as
 * an iterator's Root does: their first calls' parameters are theirs and
 * then the loop root's they lack. */
static void loop_options(struct host_ctx *c, struct analysis_priv *pv)
{
	const struct tfd_sig *lr = c->has_loop_root ? c->loop_root.sig : NULL;

	for (size_t i = 0; lr && i < c->iters.n; i++) {
		struct iter *it = &c->iters.v[i];
		struct tfd_event *e = (struct tfd_event *)it->sample;
		struct tfd_sig *s;
		struct tfd_param *ps;
		size_t n;

		if (!e || !tfd_in_loop_input(it->long_name) || tfd_iter_parts(it->long_name) != 2)
			continue;
		s = xmalloc(sizeof(*s) + (e->sig->nparams + lr->nparams) * sizeof(*ps));
		ps = (struct tfd_param *)(s + 1);
		*s = *e->sig;
		if (e->sig->nparams)
			memcpy(ps, e->sig->params, e->sig->nparams * sizeof(*ps));
		n = e->sig->nparams;
		for (uint16_t k = 0; k < lr->nparams && n < TFD_MAX_PARAMS; k++) {
			bool have = false;

			for (size_t j = 0; j < e->sig->nparams && !have; j++)
				have = strcmp(ps[j].key, lr->params[k].key) == 0;
			if (!have)
				ps[n++] = lr->params[k];
		}
		s->params = ps;
		s->nparams = (uint16_t)n;
		vec_push(&pv->blocks, s);
		e->sig = s;
	}
}

/* A loop inside a tf.function: each step's time before the loop's first
 * element (its input's first call: a wait, from the waits' union u), over
 * the steps that hold one. */
static void loop_startup(const struct tfd_host *h, struct tfd_host_result *hr,
			 const struct tfd_interval *u, size_t nu)
{
	size_t k = 0;

	for (size_t s = 0; s < h->nsteps; s++) {
		const struct tfd_step *st = &h->steps[s];

		while (k < nu && u[k].s < st->start_ns)
			k++;
		if (k < nu && u[k].s < st->end_ns) {
			hr->loop_startup_ns = sat_add(hr->loop_startup_ns, u[k].s - st->start_ns);
			hr->loop_steps_ns = sat_add(hr->loop_steps_ns, st->end_ns - st->start_ns);
		}
	}
}

/* Whether the host ran a dataset's loop inside a tf.function: its input's
 * iterator events (autograph's scan, the loop's body, reduced), or a
 * ReduceDataset op (TensorFlow names the thread it runs on). */
static bool runs_loop_in_function(const struct tfd_host *h)
{
	if (h->nloop_inputs)
		return true;
	for (size_t t = 0; t < h->nthreads; t++)
		if (h->threads[t].name &&
		    strncmp(h->threads[t].name, "tf_data_reduce_dataset", 22) == 0)
			return true;
	return false;
}

/* The host's pipelines, once its share is known: the steps' rate and the
 * spans they count, or, when the waits between the markers count but the
 * markers hold a pipeline's next() (mr), the markers: what is read only
 * between them is outside the steps, and pauses are found between them. */
static enum tfd_status host_pipelines(struct host_ctx *c, struct tfd_host_result *hr,
				      const struct marker_reads *mr, struct analysis_priv *pv,
				      const struct tfd_analyze_opts *opts, struct tfd_err *err)
{
	struct tfd_interval *spans;
	enum tfd_status st;

	if (hr->input_basis && strcmp(hr->input_basis, "steps") == 0 && hr->nsteps &&
	    hr->step_ns > hr->wait_ns) {
		c->step_rate = (double)hr->nsteps * 1e9 / (double)(hr->step_ns - hr->wait_ns);
		c->nsteps = hr->nstep_waits ? hr->nstep_waits : hr->nsteps;
	}
	c->py_overlap = tfd_python_overlap(c->h);
	spans = tfd_share_step_spans(c->h, hr, &c->nstep_spans);
	c->step_spans = spans;
	if (hr->gaps_counted && mr->hold) {
		c->step_spans = mr->mk;
		c->nstep_spans = mr->nmk;
	}
	st = build_pipelines(c, hr, pv, opts, err);
	free(spans);
	c->step_spans = NULL;
	return st;
}

/* A root iterator none of whose calls the capture holds (each outlasted
 * it: the loop waited for an element the pipeline did not finish, a
 * shuffle buffer filling) kept its consumer waiting while the inputs of
 * its absent stages ran: from their first call (from the capture's start
 * when that call came within a period of it, their span over the gaps
 * between their calls: they were running before it) to the end of their
 * last, a wait no IteratorGetNext event shows (its op outlasted the
 * capture too). */
struct absent_span {
	int64_t s, e;
	uint64_t n;
};

static void absent_root_waits(const struct host_ctx *c, struct tfd_host_waits *w)
{
	size_t n = 0;
	struct absent_span *sp;

	for (size_t i = 0; i < c->iters.n; i++)
		n += c->iters.v[i].absent && c->root[i] == (int)i;
	if (!n)
		return;
	sp = xmalloc(c->iters.n * sizeof(*sp));
	for (size_t i = 0; i < c->iters.n; i++)
		sp[i] = (struct absent_span){INT64_MAX, INT64_MIN, 0};
	for (size_t i = 0; i < c->iters.n; i++) {
		const struct iter *it = &c->iters.v[i];
		int r = c->root[i];

		if (r < 0 || !c->iters.v[r].absent || !it->ncalls || it->parent < 0 ||
		    !c->iters.v[it->parent].absent)
			continue;
		sp[r].s = it->first_start < sp[r].s ? it->first_start : sp[r].s;
		sp[r].e = it->last_end > sp[r].e ? it->last_end : sp[r].e;
		sp[r].n += it->ncalls;
	}
	w->all = xrealloc(w->all, (w->nall + n) * sizeof(*w->all));
	for (size_t i = 0; i < c->iters.n; i++) {
		int64_t s0 = c->h->span_start_ns;

		if (!c->iters.v[i].absent || c->root[i] != (int)i || !sp[i].n || sp[i].s >= sp[i].e)
			continue;
		if (sp[i].n > 1 && sp[i].s - s0 <= (sp[i].e - sp[i].s) / (int64_t)(sp[i].n - 1))
			sp[i].s = s0;
		w->all[w->nall++] = (struct tfd_interval){sp[i].s, sp[i].e};
	}
	w->nall = tfd_interval_union(w->all, w->nall);
	free(sp);
}

/* The iterators known from their inputs alone (iter.absent), the deepest
 * named. */
static void absent_note(const struct host_ctx *c, struct tfd_analysis *a, const char *host)
{
	size_t n = 0;
	const char *deep = NULL;

	for (size_t i = 0; i < c->iters.n; i++)
		if (c->iters.v[i].absent) {
			n++;
			if (!deep || tfd_iter_parts(c->iters.v[i].long_name) > tfd_iter_parts(deep))
				deep = c->iters.v[i].long_name;
		}
	if (n)
		diag(a, host,
		     "%zu iterator(s) known from their inputs alone: no call of theirs ended in "
		     "the capture (%s%s)",
		     n, deep, n > 1 ? " and those above it" : "");
}

/* Before host h's graph is built, while its events are there: its waits,
 * for a share made once the graph is (or its device planes are) and a
 * loop's start-up, or (share) its share made now. */
static void waits_before_graph(const struct tfd_host *h, const struct tfd_host *lean,
			       struct tfd_host_result *hr, struct tfd_host_waits *w, bool share)
{
	tfd_host_waits_read(h, false, w);
	if (h->nloop_inputs && h->nsteps)
		loop_startup(h, hr, w->all, w->nall);
	if (share)
		host_share(h, lean != NULL, hr, w);
}

/* Once host c's graph is built: what outlives it (the stages' samples and
 * the absent iterators' names, read after the analysis) goes to pv, and
 * the notes on how its iterators were linked and on memory found short. */
static void graph_built(struct host_ctx *c, struct tfd_analysis *a, struct analysis_priv *pv,
			const struct tfd_analyze_opts *opts, size_t by_name, size_t orphans)
{
	struct tfd_event *samples = tfd_graph_take_samples(c);
	size_t nnames;
	char **names = tfd_graph_take_names(c, &nnames);

	if (samples)
		vec_push(&pv->blocks, samples);
	for (size_t i = 0; i < nnames; i++)
		vec_push(&pv->strings, names[i]);
	free(names);
	loop_options(c, pv);
	if (by_name)
		diag(a, c->h->name,
		     "%zu iterator(s) linked by long name (parent_id missing or "
		     "dangling)",
		     by_name);
	if (orphans)
		diag(a, c->h->name, "%zu iterator(s) with no known parent ignored", orphans);
	absent_note(c, a, c->h->name);
	if (c->h->low_memory && !opts->low_memory)
		diag(a, c->h->name,
		     "memory was short (%zu MB free): analyzed as with --low-memory (the same "
		     "findings, in more time)",
		     c->h->short_mb);
}

/* The measures of a reader in time order, on stderr when asked for
 * (docs/performance.md, "Calls held in time order"): TFDOCTOR_INFLIGHT=1
 * (inflight.c) and TFDOCTOR_TIMELINK_CHECK=1 (timelink.c, which reads the
 * host's events: never lean then); with TFDOCTOR_STREAM=1 too, the
 * pipelines built from that stream's sums where it holds (the same
 * report; TFDOCTOR_STREAM=1 alone builds them with no call table,
 * tfd_host_graph()). */
static void time_order_checks(struct host_ctx *c, bool lean, const struct tfd_analyze_opts *opts)
{
	bool check = tfd_env_flag("TFDOCTOR_TIMELINK_CHECK"), use = tfd_env_flag("TFDOCTOR_STREAM");

	if (tfd_env_flag("TFDOCTOR_INFLIGHT"))
		tfd_inflight_report(c);
	if (!lean && check)
		tfd_timelink_check(c, opts);
	if (use && c->stream)
		tfd_build_from_stream(c);
}

/* c's calls linked, and the measures of a reader in time order taken;
 * nothing to link where the pipelines are built from the stream's sums. */
static void link_graph(struct host_ctx *c, bool lean, const struct tfd_analyze_opts *opts)
{
	if (c->from_stream)
		return;
	tfd_link_calls(c);
	time_order_checks(c, lean, opts);
}

/* st, unless it is TFD_OK and the events h's read left in the file were
 * not all there when read again (the file changed under the analysis: its
 * answer would be of another capture). */
static enum tfd_status source_intact(const struct tfd_host *h, enum tfd_status st,
				     struct tfd_err *err)
{
	if (st || !h->source || !h->source->failed)
		return st;
	return tfd_fail(err, TFD_E_IO,
			"%s: the file changed while it was analyzed (%zu reads of the events "
			"left in it came up short); analyze it again once it is complete",
			h->path ? h->path : h->name, h->source->failed);
}

/* lean: h itself, whose events may go once read (all are gone once the
 * graph is built) */
static enum tfd_status analyze_host(const struct tfd_host *h, struct tfd_host *lean,
				    struct tfd_host_result *hr, struct tfd_analysis *a,
				    struct analysis_priv *pv, const struct tfd_analyze_opts *opts,
				    struct tfd_err *err)
{
	struct host_ctx c;
	size_t by_name = 0, orphans = 0;
	struct tfd_fns fns;
	enum tfd_status st;
	/* its device planes still being swept (a lean capture's, on another
	 * core): the share waits for them; the host's waits, read from its
	 * events, are read now, before the events go (and once, for the
	 * share and a loop's start-up both) */
	bool pending = h->pending != NULL, loop = h->nloop_inputs && h->nsteps;
	/* a host with step markers and no device planes: the share waits for
	 * the graph, which tells what was read between the markers */
	bool defer = !pending && h->nsteps >= 2 && !h->dev.read;
	/* one without markers or device planes: it waits for the graph too,
	 * which tells the wait in a pipeline whose root made no call in the
	 * capture (absent_root_waits) */
	bool late = !pending && !h->nsteps && !h->dev.read;
	bool now = !pending && !defer && !late; /* its share made before the graph */
	struct tfd_host_waits waits = {0};
	struct marker_reads mr = {0};

	hr->host = h;
	hr->focus = -1;
	/* (what its reader kept to read its events again from the file:
	 * TFDOCTOR_SOURCE_CHECK=1 alone keeps it, for now) */
	if (h->source && tfd_env_flag("TFDOCTOR_SOURCE_CHECK"))
		tfd_source_check(h, h->source, true);
	hr->loop_in_function = runs_loop_in_function(h);
	if (now && !loop)
		host_share(h, lean != NULL, hr, &waits); /* (which frees them) */
	else
		waits_before_graph(h, lean, hr, &waits, now);
	/* the dataset-function calls are read from the host's events alone:
	 * first, so that (lean) the function, executor and other events go
	 * before the graph is built beside the rest */
	tfd_capacity_functions(h, lean, &fns);
	if (lean)
		tfd_host_shed(lean, TFD_KIND_BIT(TFD_EV_PRODUCE) | TFD_KIND_BIT(TFD_EV_CONSUME));
	st = tfd_host_graph(&c, h, lean, opts, &by_name, &orphans, err);
	c.fns = fns;
	if (st)
		goto out;
	graph_built(&c, a, pv, opts, by_name, orphans);
	if (late) {
		absent_root_waits(&c, &waits);
		host_share(h, lean != NULL, hr, &waits);
	}
	link_graph(&c, lean != NULL, opts);
	if (defer) {
		/* (the gaps between markers count on no other host) */
		marker_reads(&c, &waits, &mr);
		waits.holes = mr.holes; /* the share frees them */
		waits.nholes = mr.nholes;
		mr.holes = NULL;
		host_share(h, lean != NULL, hr, &waits);
	}
	if (pending) {
		/* the capacity pass reads what the device held: settled now. A
		 * capture loaded to be analyzed lean has no other kind of host
		 * with work pending: h is lean's (the cast writes nothing the
		 * caller's const promised to keep) */
		st = tfd_host_settle(lean ? lean : (struct tfd_host *)h, err);
		if (st)
			goto out;
		host_share(h, lean != NULL, hr, &waits);
	}
	st = host_pipelines(&c, hr, &mr, pv, opts, err);
	if (st)
		goto out;
	tfd_mark_repeats(hr);
	tfd_pick_focus(hr);
	tfd_share_settle_ramp(hr);
	tfd_confidence_compute(hr);
	if (tfd_graph_calls(&c) && h->nproduce == 0 && h->format != TFD_FMT_CHROME_JSON)
		diag(a, h->name,
		     "no Produce/Consume events: threads linked by parent_id and "
		     "time overlap");
out:
	if (h->pending) {
		/* an earlier failure: a malformed device plane is still the
		 * error, as when the planes are read while the file is */
		struct tfd_err derr;

		if (tfd_host_settle(lean ? lean : (struct tfd_host *)h, &derr) != TFD_OK) {
			st = derr.status;
			*err = derr;
		}
	}
	st = source_intact(h, st, err);
	tfd_host_waits_free(&waits);
	free(mr.mk);
	free(mr.holes);
	tfd_stream_sums_free(c.stream);
	tfd_graph_release(&c);
	return st;
}

static int host_rank_cmp(const void *a, const void *b)
{
	const struct tfd_host_result *x = a, *y = b;
	bool kx = !isnan(x->input_pct), ky = !isnan(y->input_pct);

	if (kx != ky)
		return kx ? -1 : 1;
	if (kx && x->input_pct != y->input_pct)
		return x->input_pct > y->input_pct ? -1 : 1;
	if (x->max_latency_ns != y->max_latency_ns)
		return x->max_latency_ns > y->max_latency_ns ? -1 : 1;
	return strcmp(x->host->name, y->host->name);
}

struct tfd_analysis *tfd_analysis_new(size_t nhosts)
{
	struct analysis_full *full = xcalloc(1, sizeof(*full));

	full->pub.hosts = xcalloc(nhosts + 1, sizeof(*full->pub.hosts));
	return &full->pub;
}

/* The cross-host steps: rank the hosts, put the one asked for first, and the
 * verdict. Shared by tfd_analyze() and the merge of partial results. */
enum tfd_status tfd_analysis_finish(struct tfd_analysis *a, const struct tfd_analyze_opts *opts,
				    struct tfd_err *err)
{
	qsort(a->hosts, a->nhosts, sizeof(*a->hosts), host_rank_cmp);
	if (opts && opts->host) {
		size_t k;

		for (k = 0; k < a->nhosts; k++)
			if (strcmp(a->hosts[k].host->name, opts->host) == 0)
				break;
		if (k == a->nhosts) {
			/* name the hosts there are (the first eight, by rank) */
			char list[512] = "";
			size_t at = 0;

			for (size_t i = 0; i < a->nhosts && i < 8 && at < sizeof(list); i++)
				at += (size_t)snprintf(list + at, sizeof(list) - at, "%s'%s'",
						       i ? ", " : "", a->hosts[i].host->name);
			if (a->nhosts > 8 && at < sizeof(list))
				snprintf(list + at, sizeof(list) - at, ", ... (%zu in all)",
					 a->nhosts);
			return tfd_fail(err, TFD_E_USAGE,
					"no host named '%s' in the capture; its hosts: %s",
					opts->host, a->nhosts ? list : "none");
		}
		if (k) {
			struct tfd_host_result tmp = a->hosts[k];

			memmove(a->hosts + 1, a->hosts, k * sizeof(*a->hosts));
			a->hosts[0] = tmp;
		}
	}
	for (size_t i = 0; i < a->nhosts; i++)
		a->any_tfdata |= a->hosts[i].npipelines > 0;
	for (size_t i = 0; i < a->nhosts; i++)
		a->loop_in_function |= a->hosts[i].loop_in_function;
	tfd_stragglers_find(a);
	if (a->nhosts) {
		const struct tfd_host_result *f = &a->hosts[0];

		a->input_bound =
		    f->bound == TFD_BOUND_HIGH || f->bound == TFD_BOUND_MODERATE ||
		    (f->bound == TFD_BOUND_UNKNOWN && f->max_latency_ns > TFD_SLOW_CALL_NS);
	}
	return TFD_OK;
}

/* Device planes that hold no events (a capture of GPUs that ran nothing
 * in the window, or whose tracer was off): said, as they hold no device
 * time for the share. */
static void empty_device_planes(struct tfd_analysis *a, const struct tfd_host *h)
{
	size_t dev = 0, empty = 0;
	const char *first = NULL, *last = NULL;

	for (size_t p = 0; p < h->nplanes; p++) {
		if (strncmp(h->planes[p].name, "/device:", 8) != 0)
			continue;
		dev++;
		if (!h->planes[p].nevents) {
			if (!empty++)
				first = h->planes[p].name;
			last = h->planes[p].name;
		}
	}
	if (empty == 1)
		diag(a, h->name, "device plane %s holds no events (of %zu device planes)", first,
		     dev);
	else if (empty)
		diag(a, h->name, "%zu of %zu device planes hold no events (%s ... %s)", empty, dev,
		     first, last);
}

/* Notes on what host h's steps are when not its step markers alone: its
 * session's runs or its tf.functions' calls (no markers), and the
 * evaluation's runs or markers left out of them. */
static void steps_notes(struct tfd_analysis *a, const struct tfd_host *h)
{
	const char *what = h->steps_from_session_runs
			       ? "the session's runs (SessionRun, TensorFlow 1's Session.run)"
			   : h->steps_from_function_calls
			       ? "the calls of the tf.function that reads input (a Keras fit's "
				 "train function, a step function that takes the iterator)"
			       : NULL;
	/* (a host has evaluation runs only without markers, and markers
	 * left out only beside others) */
	size_t n = h->eval_runs ? h->eval_runs : h->eval_markers;

	if (what)
		diag(a, h->name, "no step markers: the %zu steps are %s", h->nsteps, what);
	if (n && h->nsteps)
		diag(a, h->name,
		     "%zu %s are not steps: the evaluation runs between the %zu training steps", n,
		     h->eval_runs ? "session runs of an evaluation (an iterator read in runs of "
				    "its own between the training's: a validation pass)"
				  : "evaluation step marker(s) (test, eval, validation: Keras 2 "
				    "marks its validation batches \"test\")",
		     h->nsteps);
}

/* lean: cap itself, when its events may be dropped */
static enum tfd_status analyze(const struct tfd_capture *cap, struct tfd_capture *lean,
			       const struct tfd_analyze_opts *opts, struct tfd_analysis **out,
			       struct tfd_err *err)
{
	struct tfd_analysis *a = tfd_analysis_new(cap->nhosts);
	struct analysis_priv *pv = &((struct analysis_full *)a)->priv;
	struct tfd_analyze_opts defaults = {0};
	enum tfd_status st = TFD_OK;

	if (!opts)
		opts = &defaults;
	*out = NULL;
	a->run = cap->run;
	a->label = cap->run;
	for (size_t i = 0; i < cap->nnotes; i++)
		diag(a, "input", "%s", cap->notes[i]);
	for (size_t i = 0; i < cap->nhosts; i++) {
		st = analyze_host(&cap->hosts[i], lean ? &lean->hosts[i] : NULL,
				  &a->hosts[a->nhosts], a, pv, opts, err);
		a->nhosts++;
		if (st) {
			tfd_err_prefix(err, "%s", cap->hosts[i].path);
			goto out;
		}
		if (!cap->hosts[i].has_host_plane)
			diag(a, cap->hosts[i].name, "no /host:CPU plane in this capture");
		steps_notes(a, &cap->hosts[i]);
		empty_device_planes(a, &cap->hosts[i]);
	}
	st = tfd_analysis_finish(a, opts, err);
out:
	if (st) {
		tfd_analysis_free(a);
		return st;
	}
	*out = a;
	return TFD_OK;
}

enum tfd_status tfd_analyze(const struct tfd_capture *cap, const struct tfd_analyze_opts *opts,
			    struct tfd_analysis **out, struct tfd_err *err)
{
	return analyze(cap, NULL, opts, out, err);
}

enum tfd_status tfd_analyze_lean(struct tfd_capture *cap, const struct tfd_analyze_opts *opts,
				 struct tfd_analysis **out, struct tfd_err *err)
{
	/* (the check of links made in time order reads the events again) */
	bool check = tfd_env_flag("TFDOCTOR_TIMELINK_CHECK");

	return analyze(cap, check ? NULL : cap, opts, out, err);
}

void tfd_analysis_free(struct tfd_analysis *a)
{
	struct analysis_priv *pv;

	if (!a)
		return;
	for (size_t i = 0; i < a->nhosts; i++) {
		for (size_t p = 0; p < a->hosts[i].npipelines; p++) {
			for (size_t k = 0; k < a->hosts[i].pipelines[p].nstages; k++)
				free(a->hosts[i].pipelines[p].stages[k].fn_ops);
			free(a->hosts[i].pipelines[p].stages);
			free(a->hosts[i].pipelines[p].critpath);
			free(a->hosts[i].pipelines[p].segments);
		}
		free(a->hosts[i].pipelines);
		free(a->hosts[i].step_waits);
		free(a->hosts[i].step_points.step_ns);
		free(a->hosts[i].step_points.wait_ns);
		free(a->hosts[i].step_bars.step_ns);
		free(a->hosts[i].step_bars.wait_ns);
		free(a->hosts[i].step_points.h2d_ns);
		free(a->hosts[i].step_points.compute_ns);
		free(a->hosts[i].step_bars.h2d_ns);
		free(a->hosts[i].step_bars.compute_ns);
	}
	free(a->hosts);
	free(a->diags);
	free(a->stragglers);
	pv = &((struct analysis_full *)a)->priv;
	for (size_t i = 0; i < pv->strings.n; i++)
		free(pv->strings.v[i]);
	vec_free(&pv->strings);
	for (size_t i = 0; i < pv->blocks.n; i++)
		free(pv->blocks.v[i]);
	vec_free(&pv->blocks);
	tfd_arena_release(&pv->arena);
	free(a); /* the analysis_full it is the first member of */
}
