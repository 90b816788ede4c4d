/* graph_lists.c - each iterator's calls listed in start order (graph.h:
 * tfd_graph_list_calls), for the links by time overlap. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/graph.h"

/* Whether call a comes before call b: by start, then by index. */
static bool call_before(const struct host_ctx *c, int a, int b)
{
	int64_t sa = call_start(c, (size_t)a), sb = call_start(c, (size_t)b);

	return sa != sb ? sa < sb : a < b;
}

/* Each iterator's calls, in call order, into one exactly sized array (per
 * iterator lists doubled, leaving up to half unused at the peak). */
static void list_calls(struct host_ctx *c)
{
	size_t off = 0;

	for (size_t i = 0; i < c->iters.n; i++) {
		c->iters.v[i].call_off = off;
		off += c->iters.v[i].ncalls;
		c->iters.v[i].ncalls = 0; /* counts again below, as a cursor */
	}
	c->icalls = xmalloc((off + 1) * sizeof(int));
	for (size_t k = 0; k < c->calls.n; k++) {
		struct iter *it = &c->iters.v[call_iter(c, k)];

		c->icalls[it->call_off + it->ncalls++] = (int)k;
	}
}

/* A run of calls being merged: its next call and its end. */
struct run_head {
	int64_t start;
	size_t at, end;
};

typedef VEC(struct run_head) run_heads;

static bool head_before(const struct run_head *a, const struct run_head *b, const int *v)
{
	return a->start != b->start ? a->start < b->start : v[a->at] < v[b->at];
}

static void sift_down(struct run_head *hp, size_t n, size_t i, const int *v)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		struct run_head t;

		if (l < n && head_before(&hp[l], &hp[m], v))
			m = l;
		if (l + 1 < n && head_before(&hp[l + 1], &hp[m], v))
			m = l + 1;
		if (m == i)
			return;
		t = hp[i];
		hp[i] = hp[m];
		hp[m] = t;
		i = m;
	}
}

/* v[0..n), runs in (start, index) order each (an iterator's calls thread
 * by thread), merged into that order through tmp: a heap of the runs'
 * heads, each call's start read once, where qsort() compared every pair
 * it met by decoding both starts (a real capture's lists: 2 % of its
 * instructions). The order is total: the same as a sort's. */
static void merge_runs(const struct host_ctx *c, int *v, size_t n, int *tmp, run_heads *heads)
{
	size_t nh;

	heads->n = 0;
	for (size_t a = 0; a < n;) {
		size_t b = a + 1;

		while (b < n && call_before(c, v[b - 1], v[b]))
			b++;
		vec_push(heads, ((struct run_head){call_start(c, (size_t)v[a]), a, b}));
		a = b;
	}
	nh = heads->n;
	for (size_t i = nh / 2; i-- > 0;)
		sift_down(heads->v, nh, i, v);
	for (size_t k = 0; k < n; k++) {
		struct run_head *h = &heads->v[0];

		tmp[k] = v[h->at++];
		if (h->at < h->end)
			h->start = call_start(c, (size_t)v[h->at]);
		else
			*h = heads->v[--nh];
		sift_down(heads->v, nh, 0, v);
	}
	memcpy(v, tmp, n * sizeof(*v));
}

/* Each iterator's calls in start order (threads were scanned one by one). */
static void sort_calls(struct host_ctx *c)
{
	int *tmp = NULL;
	size_t room = 0;
	run_heads heads = {0};

	for (size_t i = 0; i < c->iters.n; i++) {
		int *v = c->icalls + c->iters.v[i].call_off;
		size_t n = c->iters.v[i].ncalls, k = 1;

		/* an iterator's calls on one thread are in order already (an
		 * absent iterator has none) */
		while (k < n && call_before(c, v[k - 1], v[k]))
			k++;
		if (k >= n)
			continue;
		if (n > room) {
			free(tmp);
			room = n;
			tmp = xmalloc(room * sizeof(*tmp));
		}
		merge_runs(c, v, n, tmp, &heads);
	}
	free(tmp);
	vec_free(&heads);
}

void tfd_graph_list_calls(struct host_ctx *c)
{
	if (c->icalls)
		return;
	list_calls(c);
	sort_calls(c);
}

void tfd_graph_release_call_lists(struct host_ctx *c)
{
	free(c->icalls);
	c->icalls = NULL;
}
