/* merge.c - one analysis from many (see struct tfd_merger in
 * include/tfd/analysis.h): the results of a run's host files, analyzed one
 * file at a time, or of partials, merged in memory into what one load of
 * every file gives. A host result added is made self-contained: what it
 * borrowed from its capture (the host's name, path and device counts, the
 * stages' names, iterator parameters and op names) is copied into the
 * merge's arena, interned, so the capture may go as soon as its hosts are
 * added, and a thousand hosts of one job share one copy of each name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/vec.h"

/* What the finish needs of a host result besides it: where it came from
 * and its notes (hrs[i] and meta[i] are one host). */
struct mhost {
	const char *origin; /* the file it came from, for messages */
	size_t seq;	    /* its part's number */
	struct tfd_diag *diags;
	size_t ndiags;
};

/* A note of a part that is not a host's (discovery's): said once, in the
 * order of the parts. */
struct mnote {
	size_t seq, k;
	const char *msg; /* in the arena */
};

struct tfd_merger {
	struct tfd_analysis *a; /* the result; its arena holds every name */
	struct tfd_arena *arena;
	VEC(struct tfd_host_result) hrs; /* handed over whole as the result's hosts */
	VEC(struct mhost) meta;
	VEC(struct mnote) notes;
	const char *run;
	bool run_set;
};

struct tfd_merger *tfd_merger_new(void)
{
	struct tfd_merger *m = xcalloc(1, sizeof(*m));

	m->a = tfd_analysis_new(0);
	m->arena = &((struct analysis_full *)m->a)->priv.arena;
	tfd_arena_init(m->arena);
	return m;
}

struct tfd_arena *tfd_merger_arena(struct tfd_merger *m)
{
	return m->arena;
}

static const char *own(struct tfd_merger *m, const char *s)
{
	return s ? tfd_arena_intern_cstr(m->arena, s) : NULL;
}

const struct tfd_event *tfd_sample_new(struct tfd_arena *a, uint16_t n, struct tfd_param **params)
{
	struct tfd_event *e = tfd_arena_alloc(a, sizeof(*e));
	struct tfd_sig *sig = tfd_arena_alloc(a, sizeof(*sig));

	e->kind = TFD_EV_ITERATOR;
	e->sig = sig;
	*params = n ? tfd_arena_alloc(a, n * sizeof(**params)) : NULL;
	sig->params = *params;
	sig->nparams = n;
	return e;
}

/* A stage's first-call parameters, copied. */
static const struct tfd_event *own_sample(struct tfd_merger *m, const struct tfd_event *e)
{
	const struct tfd_event *c;
	struct tfd_param *params;

	if (!e)
		return NULL;
	c = tfd_sample_new(m->arena, e->sig->nparams, &params);
	for (uint16_t i = 0; i < e->sig->nparams; i++) {
		params[i].key = own(m, e->sig->params[i].key);
		params[i].val = own(m, e->sig->params[i].val);
	}
	return c;
}

static void own_pipeline(struct tfd_merger *m, struct tfd_pipeline *p)
{
	for (size_t k = 0; k < p->nstages; k++) {
		struct tfd_stage *s = &p->stages[k];

		s->long_name = own(m, s->long_name);
		s->path = own(m, s->path);
		s->name = own(m, s->name);
		s->family = own(m, s->family);
		s->sample = own_sample(m, s->sample);
		for (size_t i = 0; i < s->nfn_ops; i++) {
			s->fn_ops[i].type = own(m, s->fn_ops[i].type);
			s->fn_ops[i].name = own(m, s->fn_ops[i].name);
		}
	}
}

/* The host record a host result reads: what the partial format carries of
 * it (its name, file, format and device counts), nothing of its events. */
static const struct tfd_host *own_host(struct tfd_merger *m, const struct tfd_host *h)
{
	struct tfd_host *c = tfd_arena_alloc(m->arena, sizeof(*c));

	c->name = own(m, h->name);
	c->path = own(m, h->path);
	c->format = h->format;
	c->has_host_plane = h->has_host_plane;
	c->dev.read = h->dev.read;
	c->dev.tpu = h->dev.tpu;
	c->dev.nplanes = h->dev.nplanes;
	c->dev.h2d_bytes = h->dev.h2d_bytes;
	memcpy(c->dev.kind_n, h->dev.kind_n, sizeof(c->dev.kind_n));
	memcpy(c->dev.kind_ns, h->dev.kind_ns, sizeof(c->dev.kind_ns));
	return c;
}

void tfd_merger_add(struct tfd_merger *m, struct tfd_analysis *part, size_t seq, const char *origin)
{
	const char *o = own(m, origin);
	const char *run = own(m, part->run);

	if (!m->run_set) {
		m->run = run;
		m->run_set = true;
	} else if (m->run != run) { /* interned: equal names are one pointer */
		m->run = NULL;
	}
	for (size_t i = 0; i < part->nhosts; i++) {
		struct mhost mh = {o, seq, NULL, 0};
		struct tfd_host_result hr = part->hosts[i];
		const char *name = hr.host->name;

		for (size_t k = 0; k < part->ndiags; k++)
			if (part->diags[k].host == name) {
				mh.diags = xrealloc(mh.diags, (mh.ndiags + 1) * sizeof(*mh.diags));
				mh.diags[mh.ndiags++] = part->diags[k];
			}
		hr.host = own_host(m, hr.host);
		hr.step_waits = NULL; /* (lean: none) the points are what is drawn */
		for (size_t p = 0; p < hr.npipelines; p++)
			own_pipeline(m, &hr.pipelines[p]);
		vec_push(&m->hrs, hr);
		vec_push(&m->meta, mh);
	}
	/* the rest are the part's own notes (discovery's) */
	for (size_t k = 0; k < part->ndiags; k++) {
		bool of_host = false;

		for (size_t i = 0; i < part->nhosts && !of_host; i++)
			of_host = part->diags[k].host == part->hosts[i].host->name;
		if (!of_host)
			vec_push(&m->notes, ((struct mnote){seq, k, own(m, part->diags[k].msg)}));
	}
	/* what the hosts hold now is the merge's: the part keeps nothing */
	for (size_t i = 0; i < part->nhosts; i++) {
		free(part->hosts[i].step_waits);
		memset(&part->hosts[i], 0, sizeof(part->hosts[i]));
	}
	part->nhosts = 0;
	tfd_analysis_free(part);
}

/* A host's place in file order. */
struct host_key {
	const char *path;
	size_t seq, i;
};

static int host_key_cmp(const void *a, const void *b)
{
	const struct host_key *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* The hosts put in file order in place (each cycle of the permutation
 * followed once): no second array of host results at the peak. */
static void order_hosts(struct tfd_merger *m)
{
	size_t n = m->hrs.n;
	struct host_key *k = xmalloc((n + 1) * sizeof(*k));
	size_t *to = xmalloc((n + 1) * sizeof(*to));

	for (size_t i = 0; i < n; i++)
		k[i] = (struct host_key){m->hrs.v[i].host->path, m->meta.v[i].seq, i};
	qsort(k, n, sizeof(*k), host_key_cmp);
	for (size_t i = 0; i < n; i++)
		to[i] = k[i].i; /* position i takes host k[i].i */
	free(k);
	for (size_t i = 0; i < n; i++) {
		struct tfd_host_result hr;
		struct mhost mh;
		size_t at = i;

		if (to[i] == i || to[i] == SIZE_MAX)
			continue;
		hr = m->hrs.v[i];
		mh = m->meta.v[i];
		while (to[at] != i) {
			size_t from = to[at];

			m->hrs.v[at] = m->hrs.v[from];
			m->meta.v[at] = m->meta.v[from];
			to[at] = SIZE_MAX;
			at = from;
		}
		m->hrs.v[at] = hr;
		m->meta.v[at] = mh;
		to[at] = SIZE_MAX;
	}
	free(to);
}

static int mnote_cmp(const void *a, const void *b)
{
	const struct mnote *x = a, *y = b;

	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* The host results go to the result (its hosts array, freed with it). */
static void hand_over(struct tfd_merger *m)
{
	free(m->a->hosts);
	m->a->hosts = m->hrs.v ? xrealloc(m->hrs.v, (m->hrs.n + 1) * sizeof(*m->hrs.v))
			       : xcalloc(1, sizeof(*m->hrs.v));
	m->a->nhosts = m->hrs.n;
	m->hrs.v = NULL;
	m->hrs.n = m->hrs.cap = 0;
}

static void merger_release(struct tfd_merger *m)
{
	for (size_t i = 0; i < m->meta.n; i++)
		free(m->meta.v[i].diags);
	vec_free(&m->meta);
	vec_free(&m->notes);
	vec_free(&m->hrs);
	free(m);
}

void tfd_merger_free(struct tfd_merger *m)
{
	if (!m)
		return;
	/* the host results not handed over yet are freed with the result */
	hand_over(m);
	tfd_analysis_free(m->a);
	merger_release(m);
}

/* Discovery's notes once each, in the parts' order. */
static void run_notes(struct tfd_merger *m)
{
	if (m->notes.n > 1)
		qsort(m->notes.v, m->notes.n, sizeof(*m->notes.v), mnote_cmp);
	for (size_t i = 0; i < m->notes.n; i++) {
		bool dup = false;

		for (size_t k = 0; k < i && !dup; k++)
			dup = m->notes.v[k].msg == m->notes.v[i].msg;
		if (!dup)
			tfd_analysis_diag(m->a, "input", "%s", m->notes.v[i].msg);
	}
}

/* Hosts whose files carry one host name are named apart by file, as one
 * load names them. */
static void names_apart(struct tfd_merger *m)
{
	size_t n = m->hrs.n;
	const char **hn = xmalloc((n + 1) * sizeof(*hn));
	const char **hp = xmalloc((n + 1) * sizeof(*hp));
	char **apart = xcalloc(n + 1, sizeof(*apart));
	char note[600];

	for (size_t i = 0; i < n; i++) {
		hn[i] = m->hrs.v[i].host->name;
		hp[i] = m->hrs.v[i].host->path;
	}
	if (tfd_host_names_apart(hn, hp, n, apart, note, sizeof(note)))
		tfd_analysis_diag(m->a, "input", "%s", note);
	for (size_t i = 0; i < n; i++) {
		if (!apart[i])
			continue;
		((struct tfd_host *)m->hrs.v[i].host)->name = own(m, apart[i]);
		free(apart[i]);
	}
	free(apart);
	free(hn);
	free(hp);
}

enum tfd_status tfd_merger_finish(struct tfd_merger *m, const char *const *extra, size_t nextra,
				  const struct tfd_analyze_opts *opts, struct tfd_analysis **out,
				  struct tfd_err *err)
{
	struct tfd_analysis *a = m->a;
	enum tfd_status st;

	*out = NULL;
	order_hosts(m);
	for (size_t i = 1; i < m->hrs.n; i++)
		if (strcmp(m->hrs.v[i].host->path, m->hrs.v[i - 1].host->path) == 0) {
			st = tfd_fail(err, TFD_E_FORMAT,
				      "%s: host file %s is also in %s (the same capture merged "
				      "twice)",
				      m->meta.v[i].origin, m->hrs.v[i].host->path,
				      m->meta.v[i - 1].origin);
			tfd_merger_free(m);
			return st;
		}
	a->run = m->run;
	run_notes(m);
	for (size_t i = 0; i < nextra; i++)
		tfd_analysis_diag(a, "input", "%s", extra[i]);
	names_apart(m);
	for (size_t i = 0; i < m->hrs.n; i++)
		for (size_t k = 0; k < m->meta.v[i].ndiags; k++)
			tfd_analysis_diag(a, m->hrs.v[i].host->name, "%s",
					  m->meta.v[i].diags[k].msg);
	hand_over(m);
	merger_release(m);
	st = tfd_analysis_finish(a, opts, err);
	if (st) {
		tfd_analysis_free(a);
		return st;
	}
	*out = a;
	return TFD_OK;
}
