/* report.h - renderers for an analysis: terminal text and stable JSON.
 *
 * Both write into a caller-owned tfd_buf and depend only on the analysis,
 * so the output is deterministic for a given capture.
 */
#ifndef TFD_REPORT_H
#define TFD_REPORT_H

#include "tfd/analysis.h"
#include "tfd/buf.h"
#include "tfd/rules.h"

/* Version of the JSON document; bump on any incompatible change. */
#define TFD_JSON_SCHEMA_VERSION 2

/* f may be NULL (no findings section). */
void tfd_report_text(const struct tfd_analysis *a, const struct tfd_findings *f,
		     struct tfd_buf *out);
void tfd_report_json(const struct tfd_analysis *a, const struct tfd_findings *f,
		     struct tfd_buf *out);

/* "1.234 ms", "56.7 us", "890 ns" */
const char *tfd_fmt_ns(int64_t ns, char *buf, size_t len);

#endif
