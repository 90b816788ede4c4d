/* groups.c - findings grouped for the reports: the same rule, severity,
 * pipeline and stage on several hosts is one group (tfd/rules.h).
 */
#include <stdlib.h>
#include <string.h>

#include "tfd/rules.h"
#include "tfd/vec.h"

static bool same_group(const struct tfd_finding *x, const struct tfd_finding *y)
{
	return x->severity == y->severity && strcmp(x->rule_id, y->rule_id) == 0 &&
	       strcmp(x->pipeline, y->pipeline) == 0 && strcmp(x->stage, y->stage) == 0;
}

/* by rule, severity, pipeline, stage, then place (pointers into one array) */
static int group_cmp(const void *a, const void *b)
{
	const struct tfd_finding *x = *(const struct tfd_finding *const *)a;
	const struct tfd_finding *y = *(const struct tfd_finding *const *)b;
	int c = strcmp(x->rule_id, y->rule_id);

	if (!c)
		c = (int)x->severity - (int)y->severity;
	if (!c)
		c = strcmp(x->pipeline, y->pipeline);
	if (!c)
		c = strcmp(x->stage, y->stage);
	return c ? c : (x > y) - (x < y);
}

size_t *tfd_findings_groups(const struct tfd_findings *f)
{
	const struct tfd_finding **ord;
	size_t *g;

	if (!f->n)
		return NULL;
	g = xmalloc(f->n * sizeof(*g));
	ord = xmalloc(f->n * sizeof(*ord));
	for (size_t i = 0; i < f->n; i++)
		ord[i] = &f->v[i];
	/* each run of equal keys is a group; its first is the earliest finding */
	qsort(ord, f->n, sizeof(*ord), group_cmp);
	for (size_t k = 0; k < f->n; k++) {
		size_t i = (size_t)(ord[k] - f->v);

		g[i] = k && same_group(ord[k], ord[k - 1]) ? g[ord[k - 1] - f->v] : i;
	}
	free(ord);
	return g;
}

size_t tfd_findings_group_shown(const struct tfd_findings *f, const size_t *g, size_t i,
				size_t shown[4], size_t *nshown)
{
	size_t n = 0, last = i;

	*nshown = 0;
	for (size_t j = i; j < f->n; j++)
		if (g[j] == i) {
			if (*nshown < 3)
				shown[(*nshown)++] = j;
			n++;
			last = j;
		}
	if (n == 4)
		shown[(*nshown)++] = last;
	else if (n > 4)
		shown[2] = last;
	return n;
}

void tfd_findings_free(struct tfd_findings *f)
{
	free(f->v);
	f->v = NULL;
	f->n = 0;
}
