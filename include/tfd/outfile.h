/* outfile.h - writing a command's output without destroying anybody's file.
 *
 * The rules, in the order they are applied to an output path:
 *   - NULL or "-" is standard output.
 *   - A path that exists and is not a regular file (a character device such
 *     as /dev/null, a FIFO, /dev/stdout) is opened for writing and written
 *     through; it is never renamed over. A directory is an error.
 *   - A symlink to a regular file is resolved: the file it points at is
 *     replaced, the link stays. A symlink to nothing is refused.
 *   - Otherwise the output goes to a fresh temporary file made with
 *     mkstemp() in the target's own directory, is fsync()ed, renamed over the
 *     target, and the directory is fsync()ed. An existing file keeps its mode.
 *
 * A guard collects the identities (device, inode) of every input a command
 * read (captures, rule files, the history database); an output path that is
 * one of them is refused before anything is written.
 *
 * Ownership: a guard owns copies of the paths it was given; release it with
 * tfd_outguard_release().
 */
#ifndef TFD_OUTFILE_H
#define TFD_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "tfd/err.h"

struct tfd_outguard_item;

struct tfd_outguard {
	struct tfd_outguard_item *v;
	size_t n, cap;
};

/* Remember path as an input. A directory adds the regular files directly in
 * it when `dir_files` is set (a rules directory), else nothing (capture
 * directories are added file by file after loading). A path that does not
 * exist adds nothing. */
void tfd_outguard_add(struct tfd_outguard *g, const char *path, int dir_files);

/* TFD_E_USAGE when out (NULL and "-" never are) names one of the inputs:
 * "refusing to write 'OUT': it is the input 'IN'". */
enum tfd_status tfd_outguard_check(const struct tfd_outguard *g, const char *out,
				   struct tfd_err *err);

/* Free the guard's copies of the paths. */
void tfd_outguard_release(struct tfd_outguard *g);

/* Before the work: TFD_E_IO when an output to path could not be written
 * (its directory is missing or not writable, it is a directory or a link
 * to nothing), with the error tfd_output_write() would give after it.
 * NULL and "-" pass. */
enum tfd_status tfd_output_check(const char *path, struct tfd_err *err);

/* Write buf[0..len) to path by the rules above. On error nothing at path
 * has changed, and err names the path. */
enum tfd_status tfd_output_write(const char *path, const char *buf, size_t len,
				 struct tfd_err *err);

/* Write buf[0..len) to path, a name the tool made in a directory it writes
 * into (watch --out-dir): a regular file or nothing there is replaced
 * atomically; anything else (a symlink, wherever it points; a FIFO; a
 * device; a directory) is refused with one line, never followed or
 * opened. On error nothing at path has changed. */
enum tfd_status tfd_output_write_in_dir(const char *path, const char *buf, size_t len,
					struct tfd_err *err);

/* An output written piece by piece (a streaming tfd_output_write()): the
 * same rules, the file replaced only at tfd_output_commit(). */
struct tfd_output {
	int fd;	      /* -1: standard output */
	char *tmp;    /* the temporary file, renamed over target at commit */
	char *target; /* the regular file replaced (symlinks resolved) */
	char *dir;    /* target's directory (fsync()ed after the rename) */
	char *shown;  /* the path as given, for errors */
	bool failed;  /* a write failed: commit refuses */
};

/* Open path (NULL or "-": standard output). On error err names the path
 * and o holds nothing. */
enum tfd_status tfd_output_open(struct tfd_output *o, const char *path, struct tfd_err *err);

/* Append buf[0..len). An error names the path; commit then fails. */
enum tfd_status tfd_output_put(struct tfd_output *o, const char *buf, size_t len,
			       struct tfd_err *err);

/* Finish: flush standard output, or sync, close and rename the temporary
 * file over the target. Releases o either way; on error nothing at the
 * path has changed (a device or FIFO has what was written). */
enum tfd_status tfd_output_commit(struct tfd_output *o, struct tfd_err *err);

/* Give up: the temporary file is removed, o released. Safe after commit. */
void tfd_output_abort(struct tfd_output *o);

#endif
