/* repeats.c - a host's pipelines that are one dataset iterated anew (an
 * iterator made each epoch, each step, or of a dataset made anew), the
 * one that stands for each group, and the pipeline analyzed first.
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/imap.h"

/* Whether host pipeline a holds the training loop up more than b: its root
 * calls (the consumer's GetNext) take more time in all, then its slowest
 * call is slower. The slowest call alone had made a validation pipeline,
 * its first call refilling it, the focus of a Keras job. */
static bool holds_up_more(const struct tfd_pipeline *a, const struct tfd_pipeline *b)
{
	/* one read inside the steps beats one read between them (a heavy
	 * validation set's passes hold the training loop up in no step) */
	if (a->outside_steps != b->outside_steps)
		return !a->outside_steps;
	if (a->total_ns != b->total_ns)
		return a->total_ns > b->total_ns;
	return a->max_ns > b->max_ns;
}

/* Whether dataset name n is one TensorFlow numbers per dataset made, as
 * 2.12 and 2.15 name every root ("RootDataset:57"): `ds.take(1)` made anew
 * each step gets a new number each time. */
static bool numbered_name(const char *n)
{
	const char *colon = n ? strrchr(n, ':') : NULL;

	if (!colon || colon - n < 7 || strncmp(colon - 7, "Dataset", 7) != 0 || !colon[1])
		return false;
	for (const char *c = colon + 1; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

/* h (FNV-1a) with text t and a separator mixed in. */
static uint64_t mix_text(uint64_t h, const char *t)
{
	return (tfd_fnv_text(h, t) ^ 0xff) * TFD_FNV_PRIME;
}

static const char *root_name(const struct tfd_pipeline *p)
{
	return p->nstages && p->stages[0].sample ? tfd_event_param(p->stages[0].sample, "name")
						 : NULL;
}

/* A hash of host pipeline p's root: its long name and its dataset's name,
 * the op TensorFlow names once per dataset ("PrefetchDataset:3"), which an
 * iterator made anew of the same dataset repeats (0: not one that can
 * repeat: a device pipeline, a root without a name); one shot: its first
 * stage's path instead of the name. Its stages may differ: an epoch's
 * calls need not reach every stage. */
static uint64_t repeat_key(const struct tfd_pipeline *p, bool shot)
{
	const char *name = root_name(p);
	uint64_t h = TFD_FNV_BASIS;

	if (p->is_device || !name || !*name)
		return 0;
	if (shot)
		h = mix_text(mix_text(h, "one shot"), p->nstages > 1 ? p->stages[1].path : "");
	else
		h = mix_text(h, name);
	return mix_text(h, p->stages[0].path) | 1;
}

/* Whether pipelines a and b have the same stages, by path. */
static bool same_stages(const struct tfd_pipeline *a, const struct tfd_pipeline *b)
{
	if (a->nstages != b->nstages)
		return false;
	for (size_t s = 0; s < a->nstages; s++)
		if (strcmp(a->stages[s].path, b->stages[s].path) != 0)
			return false;
	return true;
}

/* A hash of pipeline p's stages and its root's dataset op (its name less
 * the number): what a dataset made anew keeps (remade_datasets()). */
static uint64_t remade_key(const struct tfd_pipeline *p)
{
	const char *name = root_name(p);
	uint64_t h = tfd_fnv_text(TFD_FNV_BASIS, "remade");

	h = tfd_fnv_bytes(h, name, strcspn(name, ":"));
	for (size_t s = 0; s < p->nstages; s++)
		h = mix_text(h, p->stages[s].path);
	return h | 1;
}

#define TFD_REMADE_MIN 3

struct remade_at {
	uint64_t key;
	int64_t start;
	size_t i;
};

static int remade_cmp(const void *a, const void *b)
{
	const struct remade_at *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Pipelines of a dataset made anew (remade[i] its key, 0 none): at least
 * TFD_REMADE_MIN root names of one dataset op, each numbered anew, the
 * same stages, read one after another (two could be a training set and a
 * test set of one shape). TensorFlow numbers a dataset as it is made, so a dataset built
 * again (a graph's `iterator.initializer` run each epoch rebuilds its
 * dataset; a loop that calls the function making it) has a new number for
 * each iterator; two datasets read side by side overlap in time. */
static void remade_datasets(const struct tfd_host_result *hr, const bool *shot, uint64_t *remade)
{
	size_t n = hr->npipelines, m = 0;
	struct remade_at *v = xmalloc((n + 1) * sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		const struct tfd_pipeline *p = &hr->pipelines[i];

		remade[i] = 0;
		if (!shot[i] && !p->is_device && p->ncalls && numbered_name(root_name(p)))
			v[m++] = (struct remade_at){remade_key(p), p->first_start_ns, i};
	}
	qsort(v, m, sizeof(*v), remade_cmp);
	for (size_t a = 0, b; a < m; a = b) {
		bool apart = true;
		struct imap names = {0}; /* the run's root names (their hashes) */

		/* every one a new name: a name read again is a dataset made once
		 * and iterated anew (the name grouping's), and datasets of one
		 * shape read in turn (a training and a validation set) are; two
		 * names under one hash count as one (the run stays apart) */
		imap_put(&names, tfd_fnv_text(TFD_FNV_BASIS, root_name(&hr->pipelines[v[a].i])), a);
		for (b = a + 1; b < m && v[b].key == v[a].key; b++) {
			const struct tfd_pipeline *p = &hr->pipelines[v[b].i];
			const struct tfd_pipeline *q = &hr->pipelines[v[b - 1].i];
			uint64_t nk = tfd_fnv_text(TFD_FNV_BASIS, root_name(p));

			apart &= p->first_start_ns >= q->last_end_ns &&
				 same_stages(p, &hr->pipelines[v[a].i]) &&
				 !imap_get(&names, nk, NULL);
			imap_put(&names, nk, b);
		}
		imap_free(&names);
		if (b - a >= TFD_REMADE_MIN && apart)
			for (size_t k = a; k < b; k++)
				remade[v[k].i] = v[k].key;
	}
	free(v);
}

static bool same_pipeline(const struct tfd_pipeline *a, const struct tfd_pipeline *b, bool shot)
{
	if (strcmp(a->stages[0].path, b->stages[0].path) != 0)
		return false;
	if (shot)
		return a->nstages > 1 && b->nstages > 1 &&
		       strcmp(a->stages[1].path, b->stages[1].path) == 0;
	return strcmp(root_name(a), root_name(b)) == 0;
}

/* shot[i]: whether pipeline i is of a one-shot dataset, from key[i], its
 * key by name (repeat_key): a numbered root name whose pipelines
 * (iterators) were each called at most twice at the root, made for one
 * element (`for b in ds.take(1):` each step: a new dataset, a new number).
 * Such pipelines are the same pipeline when their root and its first stage
 * below have the same paths: their names cannot say. A dataset iterated
 * for long keeps its own number and has many root calls. */
static void one_shots(const struct tfd_host_result *hr, const uint64_t *key, bool *shot)
{
	struct imap most = {0}; /* name's key -> the most root calls */
	size_t n = hr->npipelines, v;

	for (size_t i = 0; i < n; i++)
		if (key[i] && (!imap_get(&most, key[i], &v) || hr->pipelines[i].ncalls > v))
			imap_put(&most, key[i], (size_t)hr->pipelines[i].ncalls);
	for (size_t i = 0; i < n; i++)
		shot[i] = key[i] && numbered_name(root_name(&hr->pipelines[i])) &&
			  imap_get(&most, key[i], &v) && v <= 2;
	imap_free(&most);
}

/* The first pipeline of pipeline i's group of repeats, while repeat_of1
 * marks that first one (tfd_mark_repeats()). */
static size_t group_first(const struct tfd_host_result *hr, size_t i)
{
	return hr->pipelines[i].repeat_of1 ? (size_t)hr->pipelines[i].repeat_of1 - 1 : i;
}

/* Whether host pipeline a, of b's dataset, stands for the two better: it
 * shows more of the dataset's stages, then holds the loop up more. The
 * iterators of a dataset made anew each step get addresses the last ones
 * had, and an inner iterator at an address two outer ones had is linked
 * to one of them: the others show none of the stages below it (a prefetch
 * whose producer made no call of its own). */
static bool stands_for_more(const struct tfd_pipeline *a, const struct tfd_pipeline *b)
{
	if (a->nstages != b->nstages)
		return a->nstages > b->nstages;
	return holds_up_more(a, b);
}

/* Host pipelines that repeat one dataset (struct tfd_pipeline.repeat_of1):
 * each group's pipeline that shows the most of its stages, then holds the
 * loop up most, stands for it. */
void tfd_mark_repeats(struct tfd_host_result *hr)
{
	struct imap first = {0}; /* key -> the first pipeline with it */
	uint64_t *key = xmalloc((hr->npipelines + 1) * sizeof(*key));
	uint64_t *remade = xmalloc((hr->npipelines + 1) * sizeof(*remade));
	bool *shot = xmalloc(hr->npipelines + 1);
	size_t n = hr->npipelines;

	for (size_t i = 0; i < n; i++)
		key[i] = repeat_key(&hr->pipelines[i], false);
	one_shots(hr, key, shot);
	remade_datasets(hr, shot, remade);
	for (size_t i = 0; i < n; i++) {
		size_t j;

		hr->pipelines[i].repeat_of1 = 0;
		if (shot[i])
			key[i] = repeat_key(&hr->pipelines[i], true);
		else if (remade[i])
			key[i] = remade[i];
		if (!key[i])
			continue;
		if (!imap_get(&first, key[i], &j))
			imap_put(&first, key[i], i);
		else if (remade[i]
			     ? remade[j] == remade[i]
			     : shot[j] == shot[i] && !remade[j] &&
				   same_pipeline(&hr->pipelines[j], &hr->pipelines[i], shot[i]))
			hr->pipelines[i].repeat_of1 = (int)j + 1;
	}
	/* each group's own: the one that stands for it (pick_focus takes it
	 * for any of its pipelines), own[g] for the group's first pipeline g,
	 * in one pass (a capture can hold thousands of groups) */
	{
		size_t *own = xmalloc((n + 1) * sizeof(*own));

		for (size_t i = 0; i < n; i++) {
			size_t g = group_first(hr, i);

			if (g == i)
				own[i] = i;
			else if (stands_for_more(&hr->pipelines[i], &hr->pipelines[own[g]]))
				own[g] = i;
		}
		for (size_t i = 0; i < n; i++) {
			size_t o = own[group_first(hr, i)]; /* i's mark, not yet rewritten */

			if (key[i])
				hr->pipelines[i].repeat_of1 = o == i ? 0 : (int)o + 1;
		}
		free(own);
	}
	imap_free(&first);
	free(key);
	free(remade);
	free(shot);
}

size_t tfd_repeated_iterators(const struct tfd_host_result *h)
{
	size_t n = 0;

	for (size_t i = 0; i < h->npipelines && h->focus >= 0; i++)
		n += h->pipelines[i].repeat_of1 == h->focus + 1;
	return n;
}

size_t tfd_focus_iterators(const struct tfd_host_result *h)
{
	size_t made = tfd_repeated_iterators(h) + 1;
	uint64_t calls = 0;

	if (h->focus < 0)
		return 0;
	if (h->iterators_made <= made)
		return made;
	for (size_t i = 0; i < h->npipelines; i++)
		if ((int)i == h->focus || h->pipelines[i].repeat_of1 == h->focus + 1)
			calls += h->pipelines[i].ncalls;
	/* pipelines read for a few calls each are iterators made anew whose
	 * addresses recurred; one read for many steps is an epoch's (the
	 * iterators the loop made then are another dataset's too: a
	 * validation pass's) */
	if (made < 2 || calls > TFD_FEW_CALLS_PER_ITERATOR * made)
		return made;
	return calls < h->iterators_made ? (size_t)calls : h->iterators_made;
}

double tfd_iterators_per_step(const struct tfd_host_result *h)
{
	if (h->focus < 0 || !h->all.nsteps)
		return 0.0;
	return (double)tfd_focus_iterators(h) / (double)h->all.nsteps;
}

bool tfd_iterator_per_step(const struct tfd_host_result *h)
{
	return tfd_host_has_bottleneck(h) && tfd_repeated_iterators(h) >= 1 &&
	       tfd_iterators_per_step(h) >= TFD_ITERATORS_PER_STEP_SAYS &&
	       tfd_host_part_pct(h, h->create_ns) >= 1.0;
}

/* The pipeline analyzed first: the host pipeline that holds the loop up most,
 * or the one that stands for its group of repeats. */
void tfd_pick_focus(struct tfd_host_result *hr)
{
	size_t most = 0; /* the pipeline that holds the loop up most */

	for (size_t i = 0; i < hr->npipelines; i++) {
		const struct tfd_pipeline *p = &hr->pipelines[i];

		if (p->is_device)
			continue;
		if (p->max_ns > hr->max_latency_ns)
			hr->max_latency_ns = p->max_ns;
		if (hr->focus < 0 || holds_up_more(p, &hr->pipelines[most])) {
			most = i;
			/* a repeat's group: the pipeline that stands for it */
			hr->focus = p->repeat_of1 ? p->repeat_of1 - 1 : (int)i;
		}
	}
	if (hr->focus < 0 && hr->npipelines)
		hr->focus = 0;
}
