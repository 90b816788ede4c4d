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
#include "tfd/rules.h"

/* Version of the JSON document; bump on any incompatible change. */
#define TFD_JSON_SCHEMA_VERSION 2

/* f may be NULL (no findings section). */
void tfd_render_text(const struct tfd_analysis *a, const struct tfd_findings *f,
		     struct tfd_buf *out);
void tfd_render_json(const struct tfd_analysis *a, const struct tfd_findings *f,
		     struct tfd_buf *out);

/* "1.234 ms", "56.7 us", "890 ns" */
const char *tfd_fmt_ns(int64_t ns, char *buf, size_t len);

#endif
