/* render.h - renderers of analyze: terminal text and stable JSON (the nightly
 * report is nightly.h).
 *
 * Both write into a caller-owned tfd_buf and depend only on the analysis,
 * so the output is deterministic for a given capture.
 */
#ifndef TFD_RENDER_H
#define TFD_RENDER_H

#include "tfd/analysis.h"
#include "tfd/buf.h"
#include "tfd/diff.h"
#include "tfd/fmt.h"
#include "tfd/jsonmem.h"
#include "tfd/rules.h"

/* Version of the JSON document; bump on any incompatible change. */
#define TFD_JSON_SCHEMA_VERSION 2

/* f may be NULL (no findings section). Prose (the verdict, findings,
 * notes) is wrapped to 80 columns; tables and code are not. */
void tfd_render_text(const struct tfd_analysis *a, const struct tfd_findings *f,
		     struct tfd_buf *out);
/* The same with prose wrapped to width columns (at least 40): the
 * terminal's width when the report goes to a terminal. */
void tfd_render_text_w(const struct tfd_analysis *a, const struct tfd_findings *f, int width,
		       struct tfd_buf *out);
/* The JSON report (schema_version 2, docs/json.md), pretty-printed, into
 * out; f may be NULL (no findings). Deterministic; cannot fail. */
void tfd_render_json(const struct tfd_analysis *a, const struct tfd_findings *f,
		     struct tfd_buf *out);
/* The same document compact, on one line ending in a newline: one JSON
 * Lines record, for streams (watch -f json on standard output). */
void tfd_render_json_line(const struct tfd_analysis *a, const struct tfd_findings *f,
			  struct tfd_buf *out);

/* What a finding's fix is worth, as one plain sentence appended to b
 * ("1.69x throughput (1475 elements/s -> 2493 elements/s; 677.9 us ->
 * 401.2 us per root element), input wait ~1.2% of step time"); nothing
 * when the estimate is unknown. Returns whether it wrote. The terminal
 * report, HTML and Markdown all say it this way. */
bool tfd_fmt_worth(const struct tfd_estimate *e, struct tfd_buf *b);

/* The text report of `tfdoctor diff` (struct tfd_diff, diff.h) into out:
 * names[0] and names[1] are what was compared (the paths given).
 * Deterministic; cannot fail. */
void tfd_render_diff_text(const struct tfd_diff *d, const char *const names[2],
			  struct tfd_buf *out);
/* The same as JSON ("kind": "diff", schema_version 1, docs/json.md). */
void tfd_render_diff_json(const struct tfd_diff *d, const char *const names[2],
			  struct tfd_buf *out);
/* The same as Markdown, for a pull request or a chat. */
void tfd_render_diff_md(const struct tfd_diff *d, const char *const names[2], struct tfd_buf *out);

/* The stragglers of a (at most three, the slowest first), a line each,
 * "straggler: " and its sentence, then how many more there are. */
void tfd_stragglers_text(const struct tfd_analysis *a, struct tfd_buf *b);

/* Straggler s of a in one sentence (no line break), as the reports say
 * it: "worker-2's steps take 1.7x the median host's (mean ..., p90 ...,
 * against ...): it waits for input 41% of its step against 2% on the
 * median host (its bottleneck: TFRecord)." */
void tfd_straggler_sentence(const struct tfd_analysis *a, const struct tfd_straggler *s,
			    struct tfd_buf *out);

#endif
