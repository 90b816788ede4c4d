/* fuzz_spec.c - the synth spec parser and its checks (nothing is written). */
#include <stddef.h>

#include "tfd/synth.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tfd_err err;

	(void)tfd_synth_check((const char *)data, size, "fuzz.json", 1.0, &err);
	return 0;
}
