/* fuzz_xspace.c - XSpace (and TF 2.0 Trace) reader plus analysis. */
#include <stddef.h>

#include "fuzz_capture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	fuzz_capture(data, size, "fuzz.xplane.pb");
	return 0;
}
