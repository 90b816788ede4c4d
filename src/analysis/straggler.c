/* straggler.c - the hosts whose steps are longer than the fleet's (a
 * straggler holds every synchronous worker back): each host's mean step
 * time against the median host's, over the steps its verdict counts. In a
 * synchronous job the steps are as long on every host (the others wait in
 * their collectives): there the straggler is the host that waits for input
 * far more than the others. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tfd/satmath.h"

/* A host slower than the median host by more than this share is named. */
#define STRAGGLER_MARGIN 0.2
/* Fewer hosts with steps than this: no fleet to compare with. */
#define STRAGGLER_MIN_HOSTS 3

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int straggler_cmp(const void *a, const void *b)
{
	const struct tfd_straggler *x = a, *y = b;

	if (x->ratio != y->ratio)
		return x->ratio > y->ratio ? -1 : 1;
	return (x->host > y->host) - (x->host < y->host);
}

/* The median of v[0..n) (sorted here), NAN when n is 0. */
static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), dbl_cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double tfd_host_mean_step_ns(const struct tfd_host_result *h)
{
	if (!h->nsteps || !h->input_basis || strcmp(h->input_basis, "steps") != 0)
		return 0;
	return (double)h->step_ns / (double)h->nsteps;
}

double tfd_host_compute_ns(const struct tfd_host_result *h)
{
	if (!h->has_device || !h->nsteps)
		return 0;
	return (double)h->dev_ns[TFD_DEV_COMPUTE] / (double)h->nsteps;
}

int64_t tfd_host_other_ns(const struct tfd_host_result *h)
{
	int64_t owned = 0;

	for (int k = 0; k < TFD_DEV__COUNT; k++)
		owned = sat_add(owned, h->dev_ns[k]);
	return h->step_ns > owned ? h->step_ns - owned : 0;
}

/* The median of sorted v[0..n) less one of its values x (the other
 * hosts' median, a host's own share taken out), NAN when none is left. */
static double median_without(const double *v, size_t n, double x)
{
	size_t lo = 0, hi = n, m = n - 1;

	if (!n || !m)
		return NAN;
	while (lo < hi) { /* x's first place */
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
#define AT(j) v[(j) < lo ? (j) : (j) + 1]
	return m % 2 ? AT(m / 2) : (AT(m / 2 - 1) + AT(m / 2)) / 2;
#undef AT
}

static bool named(const struct tfd_analysis *a, size_t host)
{
	for (size_t k = 0; k < a->nstragglers; k++)
		if (a->stragglers[k].host == host)
			return true;
	return false;
}

/* The synchronous stragglers, after the others (most waiting first: a's
 * hosts are ranked so): an input-bound host waiting for input
 * TFD_STRAGGLER_INPUT_POINTS more than the median other host, its steps no
 * longer than 1.2x the median's. pct: the input shares of the hosts with
 * steps, sorted (np of them). */
static void synchronous_stragglers(struct tfd_analysis *a, double med_step, const double *pct,
				   size_t np)
{
	for (size_t i = 0; i < a->nhosts && med_step > 0; i++) {
		const struct tfd_host_result *h = &a->hosts[i];
		double s = tfd_host_mean_step_ns(h), peers;

		if (!(s > 0) || named(a, i) || isnan(h->input_pct) || !tfd_host_has_bottleneck(h) ||
		    s > med_step * (1 + STRAGGLER_MARGIN))
			continue;
		peers = median_without(pct, np, h->input_pct);
		if (isnan(peers) || h->input_pct - peers < TFD_STRAGGLER_INPUT_POINTS)
			continue;
		a->stragglers =
		    xrealloc(a->stragglers, (a->nstragglers + 1) * sizeof(*a->stragglers));
		a->stragglers[a->nstragglers++] =
		    (struct tfd_straggler){i, s / med_step, med_step, peers, 0, true};
	}
}

void tfd_stragglers_find(struct tfd_analysis *a)
{
	double *step = xmalloc((a->nhosts + 1) * sizeof(double));
	double *pct = xmalloc((a->nhosts + 1) * sizeof(double));
	double *dev = xmalloc((a->nhosts + 1) * sizeof(double));
	size_t n = 0, np = 0, nd = 0;
	double med, med_pct, med_dev;

	free(a->stragglers);
	a->stragglers = NULL;
	a->nstragglers = 0;
	for (size_t i = 0; i < a->nhosts; i++) {
		const struct tfd_host_result *h = &a->hosts[i];

		if (!(tfd_host_mean_step_ns(h) > 0))
			continue;
		step[n++] = tfd_host_mean_step_ns(h);
		if (!isnan(h->input_pct))
			pct[np++] = h->input_pct;
		if (tfd_host_compute_ns(h) > 0)
			dev[nd++] = tfd_host_compute_ns(h);
	}
	med = n >= STRAGGLER_MIN_HOSTS ? median(step, n) : NAN;
	med_pct = median(pct, np);
	med_dev = median(dev, nd);
	for (size_t i = 0; i < a->nhosts && med > 0; i++) {
		double s = tfd_host_mean_step_ns(&a->hosts[i]);

		if (!(s > med * (1 + STRAGGLER_MARGIN)))
			continue;
		a->stragglers =
		    xrealloc(a->stragglers, (a->nstragglers + 1) * sizeof(*a->stragglers));
		a->stragglers[a->nstragglers++] = (struct tfd_straggler){
		    i, s / med, med, med_pct, isnan(med_dev) ? 0 : med_dev, false};
	}
	if (a->nstragglers > 1)
		qsort(a->stragglers, a->nstragglers, sizeof(*a->stragglers), straggler_cmp);
	/* two hosts are a fleet for this: the one waiting is the one named */
	synchronous_stragglers(a, n >= 2 ? median(step, n) : NAN, pct, np);
	free(step);
	free(pct);
	free(dev);
}

enum tfd_straggler_why tfd_straggler_why(const struct tfd_analysis *a,
					 const struct tfd_straggler *s)
{
	const struct tfd_host_result *h = &a->hosts[s->host];
	double dev = tfd_host_compute_ns(h);

	if (!isnan(h->input_pct) && !isnan(s->peers_input_pct) &&
	    h->input_pct - s->peers_input_pct >= TFD_STRAGGLER_INPUT_POINTS)
		return TFD_STRAGGLER_INPUT;
	if (dev > 0 && s->peers_compute_ns > 0 && dev > s->peers_compute_ns * 1.2)
		return TFD_STRAGGLER_DEVICE;
	return TFD_STRAGGLER_STEP;
}
