/* records.c - the history's records in memory (struct tfd_hist_run and its
 * hosts, struct tfd_hist_job): set, copied and freed alike whichever store
 * they came from; both backends (history.c, history_pg.c) use them. */
#include <stdlib.h>

#include "tfd/err.h"
#include "tfd/history.h"

void tfd_hist_set(char **dst, const char *s)
{
	free(*dst);
	*dst = xstrdup(s ? s : "");
}

static void host_release(struct tfd_hist_host *x)
{
	free(x->host);
	free(x->bottleneck);
	free(x->bottleneck_long_name);
	free(x->top_rule);
	free(x->top_title);
}

void tfd_hist_run_release(struct tfd_hist_run *r)
{
	for (size_t k = 0; r->hosts && k < r->nhosts; k++)
		host_release(&r->hosts[k]);
	free(r->hosts);
	free(r->job);
	free(r->run);
	free(r->source);
	r->hosts = NULL;
	r->nhosts = 0;
	r->job = r->run = r->source = NULL;
}

void tfd_hist_run_copy(struct tfd_hist_run *dst, const struct tfd_hist_run *src)
{
	*dst = *src;
	dst->job = dst->run = dst->source = NULL;
	tfd_hist_set(&dst->job, src->job);
	tfd_hist_set(&dst->run, src->run);
	tfd_hist_set(&dst->source, src->source);
	dst->hosts = xcalloc(src->nhosts + 1, sizeof(*dst->hosts));
	for (size_t k = 0; k < src->nhosts; k++) {
		const struct tfd_hist_host *a = &src->hosts[k];
		struct tfd_hist_host *b = &dst->hosts[k];

		*b = *a;
		b->host = b->bottleneck = b->bottleneck_long_name = b->top_rule = b->top_title =
		    NULL;
		tfd_hist_set(&b->host, a->host);
		tfd_hist_set(&b->bottleneck, a->bottleneck);
		tfd_hist_set(&b->bottleneck_long_name, a->bottleneck_long_name);
		tfd_hist_set(&b->top_rule, a->top_rule);
		tfd_hist_set(&b->top_title, a->top_title);
	}
}

void tfd_hist_jobs_free(struct tfd_hist_job *jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++)
		free(jobs[i].name);
	free(jobs);
}

void tfd_hist_runs_free(struct tfd_hist_run *runs, size_t n)
{
	for (size_t i = 0; runs && i < n; i++)
		tfd_hist_run_release(&runs[i]);
	free(runs);
}
