/* pool.c - run N items on K threads (pool.h). */
#define _GNU_SOURCE /* sched_getaffinity */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "tfd/err.h"
#include "tfd/pool.h"

struct pool {
	size_t n, next, failed; /* failed: the lowest failed item, else n */
	const size_t *order;
	bool skip;
	tfd_pool_fn fn;
	void *ctx;
	pthread_mutex_t mu;
};

struct worker {
	struct pool *pl;
	size_t index;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	struct pool *pl = w->pl;

	for (;;) {
		size_t i;
		bool skip;

		pthread_mutex_lock(&pl->mu);
		if (pl->next >= pl->n) {
			pthread_mutex_unlock(&pl->mu);
			return NULL;
		}
		i = pl->order ? pl->order[pl->next] : pl->next;
		pl->next++;
		/* an earlier item failed: this one is not needed, but the items
		 * handed out after it may come before the failure and still are */
		skip = pl->skip && i > pl->failed;
		pthread_mutex_unlock(&pl->mu);
		if (skip)
			continue;
		if (!pl->fn(pl->ctx, w->index, i)) {
			pthread_mutex_lock(&pl->mu);
			if (i < pl->failed)
				pl->failed = i;
			pthread_mutex_unlock(&pl->mu);
		}
	}
}

size_t tfd_pool_run(size_t n, size_t threads, const size_t *order, bool skip_after_failure,
		    tfd_pool_fn fn, void *ctx)
{
	struct pool pl = {n, 0, n, order, skip_after_failure, fn, ctx, PTHREAD_MUTEX_INITIALIZER};
	size_t want = threads < n ? threads : n, started = 0;
	pthread_t *th = want > 1 ? xmalloc((want - 1) * sizeof(*th)) : NULL;
	struct worker *w = xmalloc((want ? want : 1) * sizeof(*w));

	for (size_t t = 0; t < (want ? want : 1); t++)
		w[t] = (struct worker){&pl, t};
	/* the calling thread is worker 0 */
	for (size_t t = 1; t < want; t++) {
		if (pthread_create(&th[t - 1], NULL, work, &w[t]) != 0)
			break;
		started = t;
	}
	work(&w[0]);
	for (size_t t = 1; t <= started; t++)
		pthread_join(th[t - 1], NULL);
	pthread_mutex_destroy(&pl.mu);
	free(th);
	free(w);
	return pl.failed;
}

size_t tfd_cpu_count(void)
{
	cpu_set_t set;
	long n;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (size_t)CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (size_t)n : 1;
}

/* An item and its cost, sorted costliest first, then by index. */
struct item_cost {
	size_t cost, i;
};

static int costliest_cmp(const void *a, const void *b)
{
	const struct item_cost *x = a, *y = b;

	if (x->cost != y->cost)
		return x->cost < y->cost ? 1 : -1;
	return x->i < y->i ? -1 : x->i > y->i;
}

size_t *tfd_pool_costliest_first(const size_t *cost, size_t n)
{
	struct item_cost *ic = xmalloc((n + 1) * sizeof(*ic));
	size_t *order = xmalloc((n + 1) * sizeof(*order));

	for (size_t i = 0; i < n; i++)
		ic[i] = (struct item_cost){cost[i], i};
	if (n > 1)
		qsort(ic, n, sizeof(*ic), costliest_cmp);
	for (size_t i = 0; i < n; i++)
		order[i] = ic[i].i;
	free(ic);
	return order;
}
