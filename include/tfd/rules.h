/* rules.h - the rule table: load, validate, evaluate into findings.
 *
 * Rules are data (JSON files in rules/, embedded into the binary at build time; see
 * docs/rules.md). Loading is strict: an unknown key, a wrong type, an
 * unknown family, metric, operator, class, severity or estimate model, or a
 * duplicate id is an error naming the file, the rule and the field.
 *
 * A ruleset is immutable once loaded; free it with tfd_rules_free().
 * Findings borrow strings from the ruleset and the analysis: keep both alive
 * while using them, and free the findings with tfd_findings_free().
 */
#ifndef TFD_RULES_H
#define TFD_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/analysis.h"
#include "tfd/err.h"

struct tfd_ruleset;

enum tfd_severity {
	TFD_SEV_INFO = 0,
	TFD_SEV_LOW,
	TFD_SEV_MEDIUM,
	TFD_SEV_HIGH,
};

/* The built-in rules (never fails on a correct build). */
enum tfd_status tfd_rules_load_builtin(struct tfd_ruleset **out, struct tfd_err *err);
/* Load every *.json in dir (sorted by name) on top of `base` (which may be
 * NULL): a rule with an id already in base replaces it, others are added. */
enum tfd_status tfd_rules_load_dir(const struct tfd_ruleset *base, const char *dir,
				   struct tfd_ruleset **out, struct tfd_err *err);
/* The rules in force: the built-in ones, plus dir's (may be NULL). */
enum tfd_status tfd_rules_load_default(const char *dir, struct tfd_ruleset **out,
				       struct tfd_err *err);
/* Parse one rule file from memory into a new ruleset (fuzzing, tests). */
enum tfd_status tfd_rules_load_mem(const char *text, size_t len, const char *name,
				   struct tfd_ruleset **out, struct tfd_err *err);
/* Free a ruleset; NULL is allowed. Findings borrow from it: free them first. */
void tfd_rules_free(struct tfd_ruleset *rs);

/* How many rules rs holds. */
size_t tfd_rules_count(const struct tfd_ruleset *rs);

/* Read-only view of one rule, for `rules list`: every pointer borrows from
 * the ruleset (keep it alive while using the view). */
struct tfd_rule_info {
	const char *id, *title, *class_name, *target, *file;
	enum tfd_severity severity;
	const char *const *families; /* the families it applies to; none: any */
	size_t nfamilies;
};
/* Rule i of rs (0 <= i < tfd_rules_count) into out; cannot fail. */
void tfd_rules_info(const struct tfd_ruleset *rs, size_t i, struct tfd_rule_info *out);

struct tfd_estimate {
	const char *model; /* the rule's estimate model: "scale", "remove", ... */
	double factor;	   /* for "scale" */
	const char *of;	   /* "work" (divided by factor), "parallelism" (multiplied),
			    * "workers" (a sequential stage spread over factor workers),
			    * "subtree" or "dropped" (remove) */
	bool known;	   /* false when the model has nothing to go on */
	/* "capacity" when a scale/remove estimate went through the pipeline's
	 * capacity model (the stage's work / factor, new minimum capacity capped
	 * by the consumer's demand); else "latency" (root-call latency) */
	const char *basis;
	int64_t latency_ns;	/* now: mean analyzed root latency, or (capacity)
				 * the steady-state time per root element */
	int64_t new_latency_ns; /* expected after the fix */
	double speedup;		/* latency_ns / new_latency_ns; 0 when fully hidden */
	/* the training step's speed-up, step time before / after: the
	 * throughput's (capacity), the step's (steps), or with the step's
	 * other time unchanged, (100 - input % after) / (100 - input % now)
	 * (latency), bounded by the host's cores; 0 unknown */
	double step_speedup;
	double input_percent_after;	   /* NAN when the share is unknown */
	double throughput, new_throughput; /* root elements/s (capacity basis) */
	bool capped_by_demand;		   /* the consumer's own time limits after the fix */
	bool capped_by_cores;		   /* the host's cores limit after the fix */
	bool capped_by_pool;	    /* the pool's threads are the limit (tfd_pool_heaviest()) */
	bool capped_by_producer;    /* (latency) the slowest producer already sets the rate */
	bool misses_limit;	    /* the change does not touch the limiting stage */
	bool input_bound_by_demand; /* already now the step, not the pipeline, limits */
	bool per_element;	    /* (steps) no step markers: its times per root element */
	const char *dropped_by;	    /* "of": "dropped": the name of the stage that drops
				     * (Shard, Filter), NULL unknown */
};

struct tfd_finding {
	const char *rule_id, *title, *class_name, *suggestion, *code, *doc;
	enum tfd_severity severity;
	const char *host;
	const char *pipeline; /* "" for host findings */
	const char *stage;    /* stage name ("" for pipeline and host findings) */
	const char *stage_long_name;
	/* the stage's pipeline and index (NULL, -1 for pipeline and host
	 * findings): what a report calls it (tfd_stage_label) */
	const struct tfd_pipeline *stage_of;
	int stage_index;
	struct tfd_estimate estimate;
	/* how sure the analysis behind it is: the bottleneck's confidence for
	 * stage and pipeline findings, the verdict's for host findings */
	enum tfd_confidence confidence;
};

/* What a report calls finding f's stage: tfd_stage_label() of it, its
 * name when the finding has no pipeline ("" for pipeline and host
 * findings); written to buf when it is not the name. */
const char *tfd_finding_stage(const struct tfd_finding *f, char *buf, size_t len);

/* The gain a finding's estimate promises, for ordering: its speed-up, a
 * pipeline fully hidden behind the step as infinite, 1 when unknown. */
double tfd_finding_gain(const struct tfd_finding *f);

struct tfd_findings {
	/* by estimated gain (tfd_finding_gain, largest first), then severity
	 * (high first), then confidence (high first), then host rank, pipeline
	 * and rule order */
	struct tfd_finding *v;
	size_t n;
	enum tfd_severity max_severity;
};

/* Identical findings on several hosts (the same rule, severity, pipeline
 * and stage) are printed once with their hosts. Returns a new array (free
 * it) where [i] is the index of the first finding of i's group (i itself
 * for the first); groups keep the findings' order. NULL when f is empty. */
size_t *tfd_findings_groups(const struct tfd_findings *f);
/* The hosts a report names for the group whose first finding is i: their
 * findings' indices in shown (all of them when the group has at most 4,
 * else the first two and the last, with "..." before the last). Returns
 * the group's size. */
size_t tfd_findings_group_shown(const struct tfd_findings *f, const size_t *g, size_t i,
				size_t shown[4], size_t *nshown);
/* Run every rule against the analysis. */
void tfd_rules_eval(const struct tfd_ruleset *rs, const struct tfd_analysis *a,
		    struct tfd_findings *out);
/* Free the findings' array (the strings are borrowed); f is empty after. */
void tfd_findings_free(struct tfd_findings *f);

/* "info", "low", "medium" or "high" (a static string). */
const char *tfd_severity_name(enum tfd_severity s);
/* -1 if not a severity name */
int tfd_severity_parse(const char *s);

#endif
