/* label.c - what a report calls a stage: its name, or, where another stage
 * of its pipeline has the same name (a map over a map, two batches), the
 * shortest tail of its stage path that no other of them shares:
 * "BatchV2::ParallelMapV2" and "ParallelMapV2::ParallelMapV2"; and what a
 * capacity segment is ("thread feeding Prefetch (runs Map)"). */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "tfd/analysis.h"
#include "tfd/rules.h"

/* The last k "::" components of s (all of s when it has fewer). */
static const char *tail_of(const char *s, int k)
{
	for (const char *q = s + strlen(s); q > s + 1; q--)
		if (q[-1] == ':' && q[-2] == ':' && --k == 0)
			return q;
	return s;
}

/* Whether the stages other than si with si's name all differ from it in
 * their last k path components. */
static bool tail_unique(const struct tfd_pipeline *p, size_t si, int k)
{
	const char *mine = tail_of(p->stages[si].path, k);

	for (size_t j = 0; j < p->nstages; j++) {
		const struct tfd_stage *o = &p->stages[j];

		if (j != si && o->name && o->path && strcmp(o->name, p->stages[si].name) == 0 &&
		    strcmp(tail_of(o->path, k), mine) == 0)
			return false;
	}
	return true;
}

/* Above this many stages a pipeline's names are shown as they are: a
 * label looks at every stage, and a report may ask for thousands (a
 * critical path through a generated chain) */
#define LABEL_MAX_STAGES 2000

const char *tfd_stage_label(const struct tfd_pipeline *p, int si, char *buf, size_t len)
{
	const struct tfd_stage *s = &p->stages[si];
	int k = 1;

	if (!s->name || !s->path || p->nstages > LABEL_MAX_STAGES)
		return s->name ? s->name : "";
	while (!tail_unique(p, (size_t)si, k) && tail_of(s->path, k) != s->path)
		k++;
	if (k == 1)
		return s->name;
	snprintf(buf, len, "%s", tail_of(s->path, k));
	return buf;
}

const char *tfd_finding_stage(const struct tfd_finding *f, char *buf, size_t len)
{
	if (!f->stage_of || f->stage_index < 0)
		return f->stage ? f->stage : "";
	return tfd_stage_label(f->stage_of, f->stage_index, buf, len);
}

const char *tfd_outlasted_why(const struct tfd_pipeline *p, char *buf, size_t len)
{
	uint64_t below = 0;

	for (size_t i = 0; i < p->nstages; i++)
		if (p->stages[i].parent == p->bottleneck)
			below += p->stages[i].calls_all;
	snprintf(buf, len,
		 "no call of it ended in the capture (each outlasted it) while the stages below "
		 "it made %" PRIu64 " call%s: %s",
		 below, below == 1 ? "" : "s",
		 tfd_stage_outlasted(&p->stages[0])
		     ? "the loop waited for the pipeline's next element through the capture"
		     : "its consumer waited on it");
	return buf;
}

/* What a capacity segment is, for a reader (tfd_segment_name()). */
const char *tfd_segment_name(const struct tfd_pipeline *p, const struct tfd_segment *g, char *buf,
			     size_t len)
{
	char tb[120], ob[120];
	const char *top =
	    g->top_stage >= 0 ? tfd_stage_label(p, g->top_stage, tb, sizeof(tb)) : "?";
	const char *own = g->owner >= 0 ? tfd_stage_label(p, g->owner, ob, sizeof(ob)) : "";

	if (g->kind == TFD_SEG_CONSUMER)
		snprintf(buf, len, "consumer's thread (%s)", top);
	else if (g->kind == TFD_SEG_FUNCTION)
		snprintf(buf, len, "%.3g %s worker%s%s", g->parallelism, own,
			 g->parallelism == 1 ? "" : "s",
			 g->parallelism_observed ? " (AUTOTUNE)" : "");
	else if (g->parallelism == 1)
		snprintf(buf, len, "thread feeding %s (runs %s)", own, top);
	else
		snprintf(buf, len, "%.3g threads feeding %s (run %s)", g->parallelism, own, top);
	return buf;
}
