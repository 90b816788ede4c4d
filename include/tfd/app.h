/* app.h - load and analyze: what the commands call (src/app/run.c).
 *
 * The layer above discovery (src/input), the analysis and the partial
 * format (src/analysis): a command gives paths and gets one analysis, the
 * same whether the hosts were loaded together or one file at a time.
 */
#ifndef TFD_APP_H
#define TFD_APP_H

#include <stdbool.h>
#include <stddef.h>

#include "tfd/analysis.h"
#include "tfd/capture.h"
#include "tfd/err.h"
#include "tfd/load.h"

/* tfd_capture_load() then tfd_analyze(), with the same result, holding
 * only the host files in flight in memory: each host file of one run or
 * log directory is loaded and analyzed on its own (several at once on
 * several cores), its hosts added to one merge (struct tfd_merger) and
 * its events freed. A file, or several paths, are loaded and analyzed
 * whole. Either way *out is self-contained (no capture to keep) and its
 * label is the run discovery named. */
enum tfd_status tfd_analyze_paths(const char *const *paths, size_t npaths,
				  const struct tfd_load_opts *lo, const struct tfd_analyze_opts *ao,
				  struct tfd_analysis **out, struct tfd_err *err);

/* True for a file whose name ends in .partial.json, or a directory that
 * holds at least one such file and no capture (a run directory with
 * partials written beside its captures is still a run directory). */
bool tfd_partial_path(const char *path);

#endif
