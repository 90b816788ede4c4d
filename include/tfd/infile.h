/* infile.h - reading a small input file (a rule file, a partial, a synth
 * spec) whole, without ever waiting on it; and a path's directory.
 *
 * The file is opened non-blocking and must be a regular file: a FIFO, a
 * socket, a device or a directory is refused at once (opening a FIFO for
 * reading would wait for a writer forever).
 */
#ifndef TFD_INFILE_H
#define TFD_INFILE_H

#include <stddef.h>

#include "tfd/err.h"

/* Read path whole into *buf (owned by the caller, NUL-terminated, *len
 * bytes before the NUL). Errors name the path: TFD_E_IO when it cannot be
 * opened or read or is not a regular file ("PATH: not a regular file"),
 * TFD_E_LIMIT when it is larger than max bytes ("PATH: WHAT larger than
 * N MiB"). An empty file is read as *len 0. On error *buf is NULL. */
enum tfd_status tfd_read_regular(const char *path, size_t max, const char *what, char **buf,
				 size_t *len, struct tfd_err *err);

/* The directory part of path into buf: "." for a bare name, "/" for a name
 * at the root; cut as snprintf cuts. Returns buf. */
const char *tfd_path_dir(const char *path, char *buf, size_t len);

#endif
