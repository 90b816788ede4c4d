/* rules_builtin.h - the default rule files, embedded at build time from
 * rules/ by src/tools/embed-rules.sh. The table ends with {NULL, NULL}. */
#ifndef TFD_RULES_BUILTIN_H
#define TFD_RULES_BUILTIN_H

struct tfd_rules_file {
	const char *name;
	const char *text;
};

extern const struct tfd_rules_file tfd_rules_builtin[];

#endif
