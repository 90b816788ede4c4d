/* load.h - loading captures (src/input: discovery, the readers): files,
 * run directories and TensorBoard log directories into a struct
 * tfd_capture (capture.h), all at once or one host file at a time, and the
 * runs discovery finds. The loading options are capture.h's (struct
 * tfd_load_opts: the readers hand them to the model's builder).
 */
#ifndef TFD_LOAD_H
#define TFD_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfd/capture.h"
#include "tfd/err.h"

/* Load every capture named by paths (files, run directories or TensorBoard
 * log directories). Hosts are ordered by file path; hosts whose files carry
 * one host name are named apart (tfd_host_names_apart), with a note. On error *out is NULL
 * and err names the file and the problem. */
enum tfd_status tfd_capture_load(const char *const *paths, size_t npaths,
				 const struct tfd_load_opts *opts, struct tfd_capture **out,
				 struct tfd_err *err);

/* Called by tfd_capture_each() with one host file's capture (index of
 * nfiles, in host order). It may run on any thread, several at once; cap is
 * freed when it returns. A non-OK status (with err set) is remembered. */
typedef enum tfd_status (*tfd_capture_fn)(struct tfd_capture *cap, size_t index, size_t nfiles,
					  void *ctx, struct tfd_err *err);

/* The files tfd_capture_load() would read, one at a time: each is loaded
 * into a capture of its own (with discovery's notes and run), given to fn
 * and freed, on up to opts->jobs threads at once, so memory holds only the
 * files in flight. fn is called for every file even when one fails. The
 * error is the one tfd_capture_load() would give (the first file, in
 * order, that does not load), else fn's first, in file order. */
enum tfd_status tfd_capture_each(const char *const *paths, size_t npaths,
				 const struct tfd_load_opts *opts, tfd_capture_fn fn, void *ctx,
				 struct tfd_err *err);

/* The runs of a TensorBoard log directory (or of a directory of run
 * directories), oldest first, as names --run accepts; a run directory is
 * one run. The caller frees each name and the array. */
enum tfd_status tfd_capture_runs(const char *path, char ***names, size_t *n, struct tfd_err *err);
/* The run directories under dir as every command finds them: each
 * plugins/profile/<run> up to four levels down, else (dir is
 * plugins/profile, the plugins directory above it, or a directory of
 * runs) its subdirectories that hold captures; sorted by run name, then
 * path. An unreadable directory is skipped. The caller frees each path
 * and the array (*paths may be NULL when *n is 0). */
void tfd_run_dirs(const char *dir, char ***paths, size_t *n);

/* Is name (a file name) one a directory scan picks up as a capture
 * (*.xplane.pb[.gz], *.trace.json[.gz], local.trace)? */
bool tfd_capture_file_name(const char *name);

/* The bytes of the largest capture file among paths: a regular file
 * given itself, or one a directory scan picks up (at most 8 levels down
 * and 100,000 entries looked at); a gzipped file counts 8 times its size.
 * 0 when there is none. For choosing huge pages: what one host file's
 * arrays grow to follows its size. */
uint64_t tfd_capture_largest(const char *const *paths, size_t npaths);

/* Load one capture from memory (format sniffed from the bytes); used by the
 * fuzzers and unit tests. `name` is used for the host name and messages. */
enum tfd_status tfd_capture_load_mem(const void *data, size_t len, const char *name,
				     const struct tfd_load_opts *opts, struct tfd_capture **out,
				     struct tfd_err *err);

#endif
