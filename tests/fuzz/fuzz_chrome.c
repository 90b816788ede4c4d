/* fuzz_chrome.c - Chrome trace JSON reader (and gzip) plus analysis; and
 * the structural scan for process and thread names against the full
 * parser: the same error line or the same hosts, threads and events. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_capture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void scan_vs_full(const unsigned char *data, size_t size)
{
	struct tfd_load_opts scan = {0}, full = {0};
	struct tfd_capture *a = NULL, *b = NULL;

	full.chrome_no_scan = true;
	if (!fuzz_load_two(data, size, "fuzz.trace.json", &full, &scan, &a, &b)) {
		for (size_t i = 0; i < a->nhosts; i++)
			if (a->hosts[i].nthreads != b->hosts[i].nthreads ||
			    a->hosts[i].nevents != b->hosts[i].nevents ||
			    a->hosts[i].nplanes != b->hosts[i].nplanes ||
			    a->hosts[i].has_host_plane != b->hosts[i].has_host_plane)
				abort();
	}
	tfd_capture_free(a);
	tfd_capture_free(b);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	scan_vs_full(data, size);
	fuzz_capture(data, size, "fuzz.trace.json");
	return 0;
}
