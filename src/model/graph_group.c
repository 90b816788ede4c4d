/* graph_group.c - a host's iterators grouped into pipelines, one per root
 * iterator in the order of their first calls, and the MultiDeviceIterator's
 * own generators told from a user's (see graph.h). */
#include "tfd/graph.h"
#include <stdlib.h>
#include <string.h>

struct root_sort {
	const struct host_ctx *c;
	int idx;
};

static int root_cmp(const void *a, const void *b)
{
	const struct root_sort *x = a, *y = b;
	const struct iter *ix = &x->c->iters.v[x->idx], *iy = &y->c->iters.v[y->idx];

	if (ix->first_start != iy->first_start)
		return ix->first_start < iy->first_start ? -1 : 1;
	if (ix->id != iy->id)
		return ix->id < iy->id ? -1 : 1;
	return x->idx - y->idx;
}

/* The roots (two-part names with calls, or absent), in the pipelines'
 * order. */
static void order_roots(const struct host_ctx *c, struct tfd_graph_groups *g)
{
	size_t nroots = 0;
	struct root_sort *rs;

	for (size_t i = 0; i < c->iters.n; i++)
		if (tfd_iter_parts(c->iters.v[i].long_name) <= 2 &&
		    (c->iters.v[i].ncalls || c->iters.v[i].absent))
			nroots++;
	rs = xcalloc(nroots + 1, sizeof(*rs));
	g->root = xcalloc(nroots + 1, sizeof(int));
	g->is_device = xcalloc(nroots + 1, sizeof(bool));
	nroots = 0;
	for (size_t i = 0; i < c->iters.n; i++)
		if (tfd_iter_parts(c->iters.v[i].long_name) <= 2 &&
		    (c->iters.v[i].ncalls || c->iters.v[i].absent))
			rs[nroots++] = (struct root_sort){c, (int)i};
	if (nroots > 1)
		qsort(rs, nroots, sizeof(*rs), root_cmp);
	g->n = nroots;
	for (size_t r = 0; r < nroots; r++)
		g->root[r] = rs[r].idx;
	free(rs);
}

/* Iterators and calls bucketed by pipeline (slot: each iterator's; a
 * counting sort keeps index order), so building a pipeline costs its own
 * size, not the host's. */
static void bucket(const struct host_ctx *c, const int *slot, struct tfd_graph_groups *g)
{
	size_t nroots = g->n, *ifill, *cfill;

	g->ioff = xcalloc(nroots + 2, sizeof(size_t));
	g->coff = xcalloc(nroots + 2, sizeof(size_t));
	g->iters = xmalloc((c->iters.n + 1) * sizeof(int));
	for (size_t i = 0; i < c->iters.n; i++)
		if (slot[i] >= 0)
			g->ioff[slot[i] + 1]++;
	for (size_t k = 0; k < c->calls.n; k++)
		if (slot[call_iter(c, k)] >= 0)
			g->coff[slot[call_iter(c, k)] + 1]++;
	for (size_t r = 0; r < nroots; r++) {
		g->ioff[r + 1] += g->ioff[r];
		g->coff[r + 1] += g->coff[r];
	}
	/* one pipeline with every call (the usual host): no list, 4 bytes a
	 * call at the peak of an iterator-dense host */
	if (nroots != 1 || g->coff[1] != c->calls.n)
		g->calls = xmalloc((c->calls.n + 1) * sizeof(int));
	ifill = xcalloc(nroots + 1, sizeof(size_t));
	cfill = xcalloc(nroots + 1, sizeof(size_t));
	for (size_t i = 0; i < c->iters.n; i++)
		if (slot[i] >= 0)
			g->iters[g->ioff[slot[i]] + ifill[slot[i]]++] = (int)i;
	for (size_t k = 0; g->calls && k < c->calls.n; k++) {
		int r = slot[call_iter(c, k)];

		if (r >= 0)
			g->calls[g->coff[r] + cfill[r]++] = (int)k;
	}
	free(ifill);
	free(cfill);
}

/* Whether the host ran a MultiDeviceIterator: its threads that fill the
 * devices' buffers are named so. */
static bool has_multi_device_thread(const struct tfd_host *h)
{
	for (size_t t = 0; h && t < h->nthreads; t++)
		if (h->threads[t].name &&
		    strncmp(h->threads[t].name, "tf_data_multi_device_iterator", 29) == 0)
			return true;
	return false;
}

bool tfd_graph_is_device_generator(const struct host_ctx *c, int i)
{
	const struct iter *it = &c->iters.v[i];
	const struct iter *root;
	const char *name;

	if (strcmp(it->long_name, "Iterator::Prefetch::Generator") == 0)
		return true; /* XProf's rule (TensorFlow 2.0 to 2.6) */
	if (strcmp(it->long_name, "Iterator::Root::Prefetch::Generator") != 0 &&
	    strcmp(it->long_name, "Iterator::Model::Prefetch::Generator") != 0)
		return false;
	if (c->root[i] < 0)
		return false;
	root = &c->iters.v[c->root[i]];
	name = root->sample ? tfd_event_param(root->sample, "name") : NULL;
	/* the MultiDeviceIterator names its per-device prefetch (TensorFlow
	 * 2.21): a user's own from_generator().prefetch() is not named so. A
	 * TensorFlow that names no dataset, or names every root RootDataset:N
	 * (2.15: that prefetch's generators had drawn TFD-S03 at 2.00x), leaves
	 * the host's threads to tell */
	if (name && strncmp(name, "RootDataset", 11) != 0)
		return strncmp(name, "device_prefetch", 15) == 0;
	return has_multi_device_thread(c->h);
}

void tfd_graph_group(const struct host_ctx *c, struct tfd_graph_groups *g)
{
	int *slot;

	memset(g, 0, sizeof(*g));
	order_roots(c, g);
	/* each iterator's pipeline (its root's place in the order) */
	slot = xmalloc((c->iters.n + 1) * sizeof(int));
	for (size_t i = 0; i < c->iters.n; i++)
		slot[i] = -1;
	for (size_t r = 0; r < g->n; r++)
		slot[g->root[r]] = (int)r;
	for (size_t i = 0; i < c->iters.n; i++)
		slot[i] = c->root[i] >= 0 ? slot[c->root[i]] : -1;
	/* a root is a device pipeline if a MultiDeviceIterator's per-device
	 * generator is in it: XProf's rule, its parent is the root; since the
	 * root iterator wraps every pipeline, the root's Prefetch is */
	for (size_t i = 0; i < c->iters.n; i++) {
		int r = c->root[i];

		if (r >= 0 && slot[r] >= 0 && g->root[slot[r]] == r &&
		    tfd_graph_is_device_generator(c, (int)i))
			g->is_device[slot[r]] = true;
	}
	bucket(c, slot, g);
	free(slot);
}

void tfd_graph_groups_release(struct tfd_graph_groups *g)
{
	free(g->root);
	free(g->is_device);
	free(g->ioff);
	free(g->coff);
	free(g->iters);
	free(g->calls);
	memset(g, 0, sizeof(*g));
}
