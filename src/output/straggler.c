/* straggler.c - a straggler (analysis/straggler.c) in one sentence, as the
 * text, Markdown and HTML reports say it. */
#include <stdio.h>

#include "tfd/render.h"

/* A name from the capture, safe on one line of the report (buf.h). */
#define N(s) tfd_name_on_line(s)

void tfd_straggler_sentence(const struct tfd_analysis *a, const struct tfd_straggler *s,
			    struct tfd_buf *b)
{
	const struct tfd_host_result *h = &a->hosts[s->host];
	const struct tfd_pipeline *p = h->focus >= 0 ? &h->pipelines[h->focus] : NULL;
	char t1[32], t2[32], t3[32];

	if (s->synchronous) {
		tfd_buf_printf(b,
			       "%s waits for input %.0f%% of its steps against %.0f%% on the "
			       "median other host, its steps as long as theirs (mean %s, against "
			       "%s): in a synchronous job the others wait for it in their "
			       "collectives",
			       N(h->host->name), h->input_pct, s->peers_input_pct,
			       tfd_fmt_ns((int64_t)tfd_host_mean_step_ns(h), t1, sizeof(t1)),
			       tfd_fmt_ns((int64_t)s->peers_step_ns, t2, sizeof(t2)));
		if (p && p->bottleneck >= 0)
			tfd_buf_printf(b, " (its bottleneck: %s)",
				       N(p->stages[p->bottleneck].name));
		tfd_buf_puts(b, ".");
		return;
	}
	tfd_buf_printf(b, "%s's steps take %.1fx the median host's (mean %s, p90 %s, against %s): ",
		       N(h->host->name), s->ratio,
		       tfd_fmt_ns((int64_t)tfd_host_mean_step_ns(h), t1, sizeof(t1)),
		       tfd_fmt_ns(h->step_p90_ns, t2, sizeof(t2)),
		       tfd_fmt_ns((int64_t)s->peers_step_ns, t3, sizeof(t3)));
	switch (tfd_straggler_why(a, s)) {
	case TFD_STRAGGLER_INPUT:
		tfd_buf_printf(
		    b, "it waits for input %.0f%% of its step against %.0f%% on the median host",
		    h->input_pct, s->peers_input_pct);
		if (p && p->bottleneck >= 0 && tfd_host_has_bottleneck(h))
			tfd_buf_printf(b, " (its bottleneck: %s)",
				       N(p->stages[p->bottleneck].name));
		break;
	case TFD_STRAGGLER_DEVICE:
		tfd_buf_printf(b, "its device computes %s a step against %s on the median host",
			       tfd_fmt_ns((int64_t)tfd_host_compute_ns(h), t1, sizeof(t1)),
			       tfd_fmt_ns((int64_t)s->peers_compute_ns, t2, sizeof(t2)));
		break;
	case TFD_STRAGGLER_STEP:
		tfd_buf_printf(b,
			       "its input share (%.0f%%) is the median host's (%.0f%%): the extra "
			       "time is in the step's own work, not the input pipeline",
			       h->input_pct, s->peers_input_pct);
		break;
	}
	tfd_buf_puts(b, ".");
}

void tfd_stragglers_text(const struct tfd_analysis *a, struct tfd_buf *b)
{
	for (size_t k = 0; k < a->nstragglers && k < 3; k++) {
		tfd_buf_puts(b, "straggler: ");
		tfd_straggler_sentence(a, &a->stragglers[k], b);
		tfd_buf_puts(b, "\n");
	}
	if (a->nstragglers > 3)
		tfd_buf_printf(b, "and %zu more stragglers (-f json lists them).\n",
			       a->nstragglers - 3);
}
