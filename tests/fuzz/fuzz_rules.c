/* fuzz_rules.c - the rule loader and validator. */
#include <stddef.h>

#include "tfd/rules.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tfd_ruleset *rs = NULL;
	struct tfd_err err;

	if (tfd_rules_load_mem((const char *)data, size, "fuzz.json", &rs, &err) == TFD_OK) {
		for (size_t i = 0; i < tfd_rules_count(rs); i++) {
			struct tfd_rule_info ri;

			tfd_rules_info(rs, i, &ri);
		}
		tfd_rules_free(rs);
	}
	return 0;
}
