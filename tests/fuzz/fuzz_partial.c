/* fuzz_partial.c - the partial-result reader (merge), then everything that
 * renders a merged analysis: rules, text and JSON reports, the DOT of the
 * focus pipeline and the nightly report. The reader must refuse whatever
 * would break the renderers' assumptions (indices, trees, step points). */
#include <stddef.h>

#include "tfd/dot.h"
#include "tfd/nightly.h"
#include "tfd/partial.h"
#include "tfd/render.h"
#include "tfd/rules.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

/* cJSON's allocations as main() makes them: each partial's tree in an
 * arena of its own (tfd_json_tree_begin) */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	tfd_json_init();
	return 0;
}

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	struct tfd_analysis *an = NULL;
	struct tfd_ruleset *rs = NULL;
	struct tfd_findings f = {0};
	struct tfd_err err;
	struct tfd_buf b;

	if (tfd_partial_merge_mem((const char *)data, size, "fuzz.partial.json", NULL, &an, &err) !=
	    TFD_OK)
		return 0;
	tfd_buf_init(&b);
	if (tfd_rules_load_builtin(&rs, &err) == TFD_OK) {
		struct tfd_job job = {0};

		tfd_rules_eval(rs, an, &f);
		tfd_render_text(an, &f, &b);
		tfd_render_json(an, &f, &b);
		job.name = "fuzz";
		job.analysis = an;
		job.findings = &f;
		tfd_nightly_record(&job, "run", "fuzz.partial.json", "2026-11-20T02:00:00Z");
		if (tfd_nightly_window(&job, NULL, false, NULL, 10, &err) == TFD_OK) {
			tfd_nightly_compare(&job, 20.0);
			tfd_nightly_md(&job, 1, &b);
			tfd_nightly_json(&job, 1, &b);
			tfd_nightly_html(&job, 1, &b);
		}
		tfd_nightly_job_release(&job);
	}
	if (an->nhosts && an->hosts[0].focus >= 0)
		tfd_dot_render(&an->hosts[0], &an->hosts[0].pipelines[an->hosts[0].focus], "dot",
			       &b, &err);
	tfd_buf_release(&b);
	tfd_findings_free(&f);
	tfd_rules_free(rs);
	tfd_analysis_free(an);
	return 0;
}
