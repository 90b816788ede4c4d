/* nightly.h - pipeline-health reports over the run history.
 *
 * A job is one capture argument of `tfdoctor report` (a log directory, run
 * directory or file). Each report records the current run of every job in
 * the history, then compares it with the previous run and a baseline and
 * renders HTML (self-contained: inline CSS and SVG), Markdown or JSON.
 * The jobs, their records and regressions are regress.h's.
 */
#ifndef TFD_NIGHTLY_H
#define TFD_NIGHTLY_H

#include "tfd/buf.h"
#include "tfd/regress.h"

/* The report of n jobs into out: one self-contained HTML page (inline CSS
 * and SVG, no scripts), Markdown for chat, or JSON (schema_version 1) for
 * dashboards. A job with an error is named in its place. Cannot fail. */
void tfd_nightly_html(const struct tfd_job *jobs, size_t n, struct tfd_buf *out);
void tfd_nightly_md(const struct tfd_job *jobs, size_t n, struct tfd_buf *out);
void tfd_nightly_json(const struct tfd_job *jobs, size_t n, struct tfd_buf *out);

#endif
