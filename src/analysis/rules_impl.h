/* rules_impl.h - internals shared by rules.c (loading) and eval.c. */
#ifndef TFD_RULES_IMPL_H
#define TFD_RULES_IMPL_H

#include "tfd/rules.h"

enum rule_target { TARGET_BOTTLENECK, TARGET_PIPELINE, TARGET_HOST };
enum cond_op { OP_EQ, OP_NE, OP_GE, OP_GT, OP_LE, OP_LT, OP_EXISTS, OP_MISSING };
enum val_type { VT_NUM, VT_STR, VT_BOOL };

/* A metric's value for one (host, pipeline, stage): absent when it does
 * not apply (no stage, no step markers, no such parameter). */
struct val {
	bool present;
	double num;
	const char *str;
	bool b;
};

struct rule;

/* Where a metric is read: the host, its pipeline, the rule's stage. */
struct metric_at {
	const struct tfd_host_result *h;
	const struct tfd_pipeline *p; /* NULL for host rules */
	const struct tfd_stage *s;    /* the bottleneck stage, or NULL */
	int si;			      /* its index, -1 */
	double nanalyzed;	      /* analyzed root calls of p (0 if none) */
	const char *name;	      /* the metric's own name (parameters) */
	const struct rule *rule;      /* the rule asking (its op types) */
};

struct metric_def {
	const char *name;
	enum val_type type;
	enum rule_target scope; /* the narrowest target it makes sense for */
	const char *help;
	struct val (*get)(const struct metric_at *at);
};

extern const struct metric_def tfd_metrics[];
extern const size_t tfd_nmetrics;

struct cond {
	int metric;
	enum cond_op op;
	double num;
	char *str;
	bool b;
};

struct strlist {
	char **v;
	size_t n;
};

struct rule {
	char *id, *title, *class_name, *suggestion, *code, *doc, *file;
	enum tfd_severity severity;
	enum rule_target target;
	struct strlist family, not_family, under, not_under, pipeline_has, pipeline_lacks;
	struct strlist top_op, not_top_op; /* op types: the bottleneck's function's top op */
	struct strlist ops;		   /* op types the ops_share metric sums */
	struct cond *when;
	size_t nwhen;
	/* when all of these hold the finding is reported at severity low (the
	 * advice still applies but is not what limits the pipeline now) */
	struct cond *demote;
	size_t ndemote;
	char *est_model;
	double est_factor;
	bool est_parallelism; /* "of": "parallelism": the factor multiplies the
			       * stage's parallelism instead of dividing its work */
	double est_to;	      /* "to": the parallelism the fix sets ("of":
			       * "parallelism"): the factor is est_to over the
			       * stage's parallelism seen (0: est_factor) */
	bool est_workers;     /* "of": "workers": a sequential stage's calls spread
			       * over factor workers: its time in its segment is
			       * divided, its CPU work is not */
	bool est_subtree;     /* "of": "subtree" (model "remove"): the stage and
			       * every stage below it stop running (read back
			       * from a snapshot or a cache instead) */
	bool est_dropped;     /* "of": "dropped" (model "remove"): the stages
			       * below the shard above the stage do the work of
			       * the elements it keeps only (sharded early) */
};

/* estimate.c: the slowest producer's capacity over the consumer's demand
 * (missing without a capacity model), and what rule r's fix at stage si
 * is worth */
struct val tfd_producer_over_demand(const struct tfd_pipeline *p);
void tfd_estimate(const struct rule *r, const struct tfd_host_result *h,
		  const struct tfd_pipeline *p, int si, struct tfd_estimate *e);

struct tfd_ruleset {
	struct rule *v;
	size_t n, cap;
	/* the ids' index (rules.c): open addressing, rule index + 1 per slot,
	 * nslot a power of two; rebuilt when nindexed falls behind n */
	size_t *slot, nslot, nindexed;
};

#endif
