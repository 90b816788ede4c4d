/* fuzz_chrome.c - Chrome trace JSON reader (and gzip) plus analysis; and
 * the structural scan with its event reader against yajl's full parse in
 * both passes: the same error line, or the same hosts, threads and events
 * (times, names, ids, parameters). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_capture.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* Every event of every thread alike: its time, name, ids, kind and
 * parameters (the scan's event reader against yajl's callbacks). */
static void same_events(const struct tfd_host *x, const struct tfd_host *y)
{
	for (size_t th = 0; th < x->nthreads; th++) {
		const struct tfd_thread *u = &x->threads[th], *v = &y->threads[th];
		struct tfd_event *ue, *ve;

		if (u->id != v->id || strcmp(u->name, v->name) || u->nevents != v->nevents)
			abort();
		ue = tfd_thread_unpack(x, u);
		ve = tfd_thread_unpack(y, v);
		for (size_t k = 0; k < u->nevents; k++) {
			const struct tfd_event *e = &ue[k], *f = &ve[k];

			if (e->start_ns != f->start_ns || e->dur_ns != f->dur_ns ||
			    strcmp(e->sig->name, f->sig->name) || e->id != f->id ||
			    e->sig->parent_id != f->sig->parent_id || e->kind != f->kind ||
			    e->flags != f->flags || e->sig->nparams != f->sig->nparams)
				abort();
			for (uint16_t q = 0; q < e->sig->nparams; q++)
				if (strcmp(e->sig->params[q].key, f->sig->params[q].key) ||
				    strcmp(e->sig->params[q].val, f->sig->params[q].val))
					abort();
		}
		free(ue);
		free(ve);
	}
}

static void scan_vs_full(const unsigned char *data, size_t size)
{
	struct tfd_load_opts scan = {0}, full = {0};
	struct tfd_capture *a = NULL, *b = NULL;

	full.chrome_no_scan = true;
	scan.chrome_scan_strict = true;
	if (!fuzz_load_two(data, size, "fuzz.trace.json", &full, &scan, &a, &b)) {
		for (size_t i = 0; i < a->nhosts; i++)
			if (a->hosts[i].nthreads != b->hosts[i].nthreads ||
			    a->hosts[i].nevents != b->hosts[i].nevents ||
			    a->hosts[i].nplanes != b->hosts[i].nplanes ||
			    a->hosts[i].has_host_plane != b->hosts[i].has_host_plane)
				abort();
			else
				same_events(&a->hosts[i], &b->hosts[i]);
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
