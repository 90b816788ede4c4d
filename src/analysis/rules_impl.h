/* rules_impl.h - internals shared by rules.c (loading) and eval.c. */
#ifndef TFD_RULES_IMPL_H
#define TFD_RULES_IMPL_H

#include "tfd/rules.h"

enum rule_target { TARGET_BOTTLENECK, TARGET_PIPELINE, TARGET_HOST };
enum cond_op { OP_EQ, OP_NE, OP_GE, OP_GT, OP_LE, OP_LT, OP_EXISTS, OP_MISSING };
enum val_type { VT_NUM, VT_STR, VT_BOOL };

struct metric_def {
	const char *name;
	enum val_type type;
	enum rule_target scope; /* the narrowest target it makes sense for */
	const char *help;
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
	struct cond *when;
	size_t nwhen;
	char *est_model;
	double est_factor;
	bool est_parallelism; /* "of": "parallelism": the factor multiplies the
			       * stage's parallelism instead of dividing its work */
};

struct tfd_ruleset {
	struct rule *v;
	size_t n;
};

#endif
