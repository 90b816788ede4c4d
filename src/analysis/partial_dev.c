/* partial_dev.c - what a host's device planes gave, in the partial format:
 * their counts, and the step points' host-to-device and compute parts, as
 * analyze --partial writes them and merge reads them back. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "partial_impl.h"
#include "tfd/jsonmem.h"

void tfd_pf_dev_host_out(cJSON *o, const struct tfd_host *h)
{
	cJSON *d, *n, *ns;

	if (!h->dev.nplanes)
		return;
	d = cJSON_AddObjectToObject(o, "device");
	cJSON_AddBoolToObject(d, "read", h->dev.read);
	cJSON_AddBoolToObject(d, "tpu", h->dev.tpu);
	tfd_json_add_num(d, "planes", (double)h->dev.nplanes);
	tfd_json_add_num(d, "h2d_bytes", (double)h->dev.h2d_bytes);
	n = cJSON_AddArrayToObject(d, "kind_n");
	ns = cJSON_AddArrayToObject(d, "kind_ns");
	for (int k = 0; k < TFD_DEV__COUNT; k++) {
		cJSON_AddItemToArray(n, tfd_json_num((double)h->dev.kind_n[k]));
		cJSON_AddItemToArray(ns, tfd_json_num((double)h->dev.kind_ns[k]));
	}
}

/* A count: a whole number in 0..2^53. */
static bool count_ok(const cJSON *x)
{
	return cJSON_IsNumber(x) && x->valuedouble >= 0 && x->valuedouble <= 9007199254740992.0 &&
	       x->valuedouble == floor(x->valuedouble);
}

/* An array of TFD_DEV__COUNT counts into v. */
static bool counts_of(const cJSON *a, uint64_t *v)
{
	const cJSON *x;
	int k = 0;

	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != TFD_DEV__COUNT)
		return false;
	cJSON_ArrayForEach (x, a) {
		if (!count_ok(x))
			return false;
		v[k++] = (uint64_t)x->valuedouble;
	}
	return true;
}

const char *tfd_pf_dev_host_in(const cJSON *o, struct tfd_host *h)
{
	const cJSON *d = tfd_pf_item(o, "device");
	const cJSON *rd, *tpu, *planes, *bytes;
	uint64_t n[TFD_DEV__COUNT], ns[TFD_DEV__COUNT];

	if (!d)
		return NULL;
	rd = tfd_pf_item(d, "read");
	tpu = tfd_pf_item(d, "tpu");
	planes = tfd_pf_item(d, "planes");
	bytes = tfd_pf_item(d, "h2d_bytes");
	if (!cJSON_IsBool(rd) || !cJSON_IsBool(tpu) || !count_ok(planes) || !count_ok(bytes) ||
	    !counts_of(tfd_pf_item(d, "kind_n"), n) || !counts_of(tfd_pf_item(d, "kind_ns"), ns))
		return "is not {read, tpu, planes, h2d_bytes, kind_n, kind_ns}";
	h->dev.read = cJSON_IsTrue(rd);
	h->dev.tpu = cJSON_IsTrue(tpu);
	h->dev.nplanes = (size_t)planes->valuedouble;
	h->dev.h2d_bytes = (uint64_t)bytes->valuedouble;
	for (int k = 0; k < TFD_DEV__COUNT; k++) {
		h->dev.kind_n[k] = n[k];
		h->dev.kind_ns[k] = (int64_t)ns[k];
	}
	return NULL; /* the steps' breakdown is the host result's */
}

void tfd_pf_points_dev_out(cJSON *c, const struct tfd_step_points *pt)
{
	cJSON *hd, *cp;

	if (!pt->h2d_ns)
		return;
	hd = cJSON_AddArrayToObject(c, "h2d_ns");
	cp = cJSON_AddArrayToObject(c, "compute_ns");
	for (size_t i = 0; i < pt->n; i++) {
		cJSON_AddItemToArray(hd, tfd_json_num((double)pt->h2d_ns[i]));
		cJSON_AddItemToArray(cp, tfd_json_num((double)pt->compute_ns[i]));
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
	const cJSON *hd = tfd_pf_item(c, "h2d_ns");
	const cJSON *cp = tfd_pf_item(c, "compute_ns");

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
