/* fuzz_xspace.c - XSpace (and TF 2.0 Trace) reader plus analysis; and the
 * one walk over an executor chunk's stats against two walks, as loads
 * without keep_other read them: the same error line or the same hosts,
 * events and steps. The one-walk capture then gets the lean analysis,
 * which drops events once calls are linked. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_capture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static void one_vs_two_walks(const unsigned char *data, size_t size)
{
	struct tfd_load_opts one = {0}, two = {0};
	struct tfd_capture *a = NULL, *b = NULL;
	struct tfd_analysis *an = NULL;
	struct tfd_err eb = {0};

	two.xspace_two_walks = true;
	if (!fuzz_load_two(data, size, "fuzz.xplane.pb", &two, &one, &a, &b)) {
		for (size_t i = 0; i < a->nhosts; i++) {
			const struct tfd_host *x = &a->hosts[i], *y = &b->hosts[i];

			if (x->nthreads != y->nthreads || x->nevents != y->nevents ||
			    x->nsteps != y->nsteps || x->span_start_ns != y->span_start_ns ||
			    x->span_end_ns != y->span_end_ns || x->nfn_sums != y->nfn_sums ||
			    x->nfn_op_types != y->nfn_op_types)
				abort();
			for (size_t k = 0; k < x->nfn_op_types; k++) /* the function ops alike */
				if (x->fn_op_types[k].self_ns != y->fn_op_types[k].self_ns ||
				    strcmp(x->fn_op_types[k].type, y->fn_op_types[k].type) != 0)
					abort();
			for (size_t k = 0; k < x->nsteps; k++)
				if (memcmp(&x->steps[k], &y->steps[k], sizeof(x->steps[k])))
					abort();
			/* the device breakdown alike (it reads the host's waits) */
			if (x->dev.read != y->dev.read || x->dev.nsteps != y->dev.nsteps ||
			    x->dev.h2d_bytes != y->dev.h2d_bytes ||
			    memcmp(x->dev.kind_n, y->dev.kind_n, sizeof(x->dev.kind_n)) ||
			    (x->dev.nsteps && memcmp(x->dev.steps, y->dev.steps,
						     x->dev.nsteps * sizeof(*x->dev.steps))))
				abort();
		}
		if (tfd_analyze_lean(b, NULL, &an, &eb) == TFD_OK)
			tfd_analysis_free(an);
	}
	tfd_capture_free(a);
	tfd_capture_free(b);
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	one_vs_two_walks(data, size);
	fuzz_capture(data, size, "fuzz.xplane.pb");
	return 0;
}
