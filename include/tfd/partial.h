/* partial.h - per-host partial results, and their merge (fleet map/reduce).
 *
 * `analyze --partial` writes, for the hosts of one capture (usually one
 * host file), everything the cross-host steps need: the host's input-bound
 * share and per-step data, its pipelines, stages, capacity model, critical
 * path, confidence and notes. The document is self-contained (names and
 * iterator parameters are copied, no capture is needed to read it back) and
 * versioned. tfd_partial_merge() reads any number of them and gives an
 * analysis identical to tfd_analyze() over all the hosts' files at once:
 * the same ranking, focus host, verdict, notes, findings and exit codes.
 *
 * Numbers are exact: integers beyond 2^53 are decimal strings, doubles are
 * printed so that they read back bit for bit, NaN and infinities are
 * "nan", "inf" and "-inf".
 */
#ifndef TFD_PARTIAL_H
#define TFD_PARTIAL_H

#include <stdbool.h>
#include <stddef.h>

#include "tfd/analysis.h"
#include "tfd/buf.h"
#include "tfd/capture.h"
#include "tfd/err.h"

#define TFD_PARTIAL_FORMAT "tfdoctor-partial"
#define TFD_PARTIAL_VERSION 13
/* the oldest version read (the fields later versions added are left 0) */
#define TFD_PARTIAL_VERSION_MIN 2
/* file names `merge` and `report` pick up in a directory */
#define TFD_PARTIAL_SUFFIX ".partial.json"

/* The partial of analysis a (made with opts), as JSON: its notes that are
 * no host's, then each host (in file order) with its own. source: the
 * name a report gives the run of the one CAPTURE it was loaded from (its
 * base name), or NULL. */
void tfd_partial_write(const struct tfd_analysis *a, const struct tfd_analyze_opts *opts,
		       const char *source, struct tfd_buf *b);

/* Read the partials named by paths (files, or directories whose
 * *.partial.json files are all read) and merge them (struct tfd_merger).
 * opts->host picks the host analyzed first, as for tfd_analyze(); the
 * per-host options (no_warmup, rank) come from the partials, which must
 * agree. *out is self-contained; its label is the name a report gives the
 * run: the base name of the CAPTURE the partials were made from when they
 * agree, else of the directory the hosts' files share, else NULL. On error
 * *out is NULL and err names the file. */
enum tfd_status tfd_partial_merge(const char *const *paths, size_t npaths,
				  const struct tfd_analyze_opts *opts, struct tfd_analysis **out,
				  struct tfd_err *err);

/* The same for one partial in memory (fuzzing, tests); name is used in
 * messages. */
enum tfd_status tfd_partial_merge_mem(const char *data, size_t len, const char *name,
				      const struct tfd_analyze_opts *opts,
				      struct tfd_analysis **out, struct tfd_err *err);

#endif
