/* partial_dev.c - what a host's device planes gave, in the partial format:
 * their counts, and the step points' host-to-device and compute parts, as
 * analyze --partial writes them and merge reads them back. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "partial_impl.h"

void tfd_pf_dev_host_out(cJSON *o, const struct tfd_host *h)
{
	cJSON *d;

	if (!h->dev.nplanes && !h->dev.n)
		return;
	d = cJSON_AddObjectToObject(o, "device");
	cJSON_AddBoolToObject(d, "tpu", h->dev.tpu);
	cJSON_AddNumberToObject(d, "planes", (double)h->dev.nplanes);
	cJSON_AddNumberToObject(d, "spans", (double)h->dev.n);
	cJSON_AddNumberToObject(d, "h2d_copies", (double)h->dev.nh2d);
}

/* A count: a whole number in 0..2^53. */
static bool count_of(const cJSON *o, const char *k, double *v)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);

	if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || x->valuedouble > 9007199254740992.0 ||
	    x->valuedouble != floor(x->valuedouble))
		return false;
	*v = x->valuedouble;
	return true;
}

const char *tfd_pf_dev_host_in(const cJSON *o, struct tfd_host *h)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "device"), *t;
	double planes, spans, copies;

	if (!d)
		return NULL;
	t = cJSON_GetObjectItemCaseSensitive(d, "tpu");
	if (!cJSON_IsObject(d) || !cJSON_IsBool(t) || !count_of(d, "planes", &planes) ||
	    !count_of(d, "spans", &spans) || !count_of(d, "h2d_copies", &copies))
		return "is not {tpu, planes, spans, h2d_copies}";
	h->dev.tpu = cJSON_IsTrue(t);
	h->dev.nplanes = (size_t)planes;
	h->dev.n = (size_t)spans; /* counted; h->dev.v stays NULL */
	h->dev.nh2d = (uint64_t)copies;
	return NULL;
}

void tfd_pf_points_dev_out(cJSON *c, const struct tfd_step_points *pt)
{
	cJSON *hd, *cp;

	if (!pt->h2d_ns)
		return;
	hd = cJSON_AddArrayToObject(c, "h2d_ns");
	cp = cJSON_AddArrayToObject(c, "compute_ns");
	for (size_t i = 0; i < pt->n; i++) {
		cJSON_AddItemToArray(hd, cJSON_CreateNumber((double)pt->h2d_ns[i]));
		cJSON_AddItemToArray(cp, cJSON_CreateNumber((double)pt->compute_ns[i]));
	}
}

/* An array of n nanosecond values (whole, 0..2^53) into a new array. */
static int64_t *ns_array(const cJSON *a, size_t n)
{
	int64_t *v;
	const cJSON *x;
	size_t i = 0;

	if (!cJSON_IsArray(a) || (size_t)cJSON_GetArraySize(a) != n)
		return NULL;
	v = xcalloc(n + 1, sizeof(*v));
	cJSON_ArrayForEach (x, a) {
		if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) ||
		    x->valuedouble > 9007199254740992.0) {
			free(v);
			return NULL;
		}
		v[i++] = (int64_t)x->valuedouble;
	}
	return v;
}

const char *tfd_pf_points_dev_in(const cJSON *c, struct tfd_step_points *pt)
{
	const cJSON *hd = cJSON_GetObjectItemCaseSensitive(c, "h2d_ns");
	const cJSON *cp = cJSON_GetObjectItemCaseSensitive(c, "compute_ns");

	if (!hd && !cp)
		return NULL;
	pt->h2d_ns = ns_array(hd, pt->n);
	pt->compute_ns = ns_array(cp, pt->n);
	if (pt->h2d_ns && pt->compute_ns)
		return NULL;
	free(pt->h2d_ns);
	free(pt->compute_ns);
	pt->h2d_ns = pt->compute_ns = NULL;
	return "does not have one device point (h2d_ns, compute_ns) per group of steps";
}
