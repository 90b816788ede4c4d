/* fuzz_chrome.c - Chrome trace JSON reader (and gzip) plus analysis. */
#include <stddef.h>

#include "fuzz_capture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	fuzz_capture(data, size, "fuzz.trace.json");
	return 0;
}
