/* partial_impl.h - what the partial format's writer (partial_write.c) and
 * reader (partial.c) share: the rows of every plain field of the result
 * structs (partial_fields.c), so a field added there is written and read
 * back alike. src/analysis only. */
#ifndef TFD_PARTIAL_IMPL_H
#define TFD_PARTIAL_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "passes.h"
#include "tfd/jsonmem.h"
#include "tfd/vec.h"

#define EXACT_INT (1LL << 53) /* integers past it are written as strings */

extern const char *const tfd_pf_link_keys[TFD_LINK__COUNT];

enum fkind {
	FK_I64,	  /* int64_t */
	FK_U64,	  /* uint64_t */
	FK_SIZE,  /* size_t */
	FK_INT,	  /* int (or an int-sized enum) within [lo, hi] */
	FK_DBL,	  /* double: NaN and infinities as strings */
	FK_PCT,	  /* double: a percentage, 0 to 100, or NaN (unknown) */
	FK_BOOL,  /* bool */
	FK_STR,	  /* const char *, interned in the capture's arena on reading */
	FK_BUF,	  /* char[size] */
	FK_STAGE, /* int: a stage index or -1 */
	FK_SEG,	  /* int: a segment index or -1 */
};

struct fdesc {
	const char *key;
	enum fkind kind;
	size_t off, size;
	int64_t lo, hi; /* FK_INT */
	int since;	/* the partial version that added it (0: the first
			 * read): older partials leave it 0 */
};

struct fields {
	const struct fdesc *v;
	size_t n;
};

/* A stage's "function_ops" into o (nothing when it has none). */
void tfd_pf_fn_ops_out(cJSON *o, const struct tfd_stage *s);
/* ... and from o (absent: none); NULL, or what is wrong with it (s may
 * hold the entries before the bad one: freed with the stage). */
const char *tfd_pf_fn_ops_in(const cJSON *o, struct tfd_stage *s, struct tfd_arena *arena);

extern const struct fields tfd_pf_stage;
extern const struct fields tfd_pf_segment;
extern const struct fields tfd_pf_capacity;
extern const struct fields tfd_pf_pipeline;
extern const struct fields tfd_pf_share;
extern const struct fields tfd_pf_sure;
extern const struct fields tfd_pf_host;

/* A host's device planes in the partial format (partial_dev.c): an
 * optional "device" object of counts {tpu, planes, spans, h2d_copies}
 * (the spans themselves are not kept: a merged host has none to read),
 * and the step points' optional "h2d_ns" and "compute_ns" arrays. The
 * readers give NULL, or why the input is not that. */
void tfd_pf_dev_host_out(cJSON *o, const struct tfd_host *h);
const char *tfd_pf_dev_host_in(const cJSON *o, struct tfd_host *h);
void tfd_pf_points_dev_out(cJSON *c, const struct tfd_step_points *pt);
const char *tfd_pf_points_dev_in(const cJSON *c, struct tfd_step_points *pt);

/* Member k of object o (NULL when absent), marked as read
 * (partial_keys.c): every reader lookup goes through it. */
const cJSON *tfd_pf_item(const cJSON *o, const char *k);
/* tfd_pf_item() searching from *hint (a member of o, or NULL: the first),
 * round to it; *hint moves past the member found. A reader that asks for
 * an object's members in the writer's order finds each at once. */
const cJSON *tfd_pf_item_from(const cJSON *o, const char *k, const cJSON **hint);
/* Whether every member of every object under doc was looked up: if not,
 * the first one's path ("hosts[0].pipelines[1].key") into buf, and
 * whether its key was a repeat of a member before it in its object (a
 * lookup finds the first). Iterative (a partial's depth is the
 * writer's). */
enum tfd_pf_unread_kind {
	TFD_PF_ALL_READ = 0,
	TFD_PF_UNKNOWN, /* a key no reader asked for */
	TFD_PF_TWICE,	/* a key given twice in one object */
};
enum tfd_pf_unread_kind tfd_pf_unread(const cJSON *doc, char *buf, size_t len);
/* The members this thread's lookups marked, each once, since the last
 * call: when they are all the document's (tfd_json_tree.members), none is
 * unread, and the walk of tfd_pf_unread() (a fleet merge's documents
 * again from memory, a sixth of its time) can be skipped. */
size_t tfd_pf_marks_take(void);

/* The partials a merge reads (partial_files.c). */
typedef VEC(char *) strvec;
/* data[0..len) parsed into a tree of its own (struct tfd_json_tree); NULL
 * when it is not JSON, *end (may be NULL) then where the parse stopped. */
struct tfd_json_tree *tfd_pf_parse(const char *data, size_t len, const char **end);
/* d and its tree freed (NULL: nothing). */
void tfd_pf_doc_free(struct tfd_json_tree *d);
/* path's JSON into *out (the caller's to tfd_pf_doc_free); one error line
 * naming the file when it cannot be read or parsed. */
enum tfd_status tfd_partial_read_doc(const char *path, struct tfd_json_tree **out,
				     struct tfd_err *err);
/* The partials names[0..n) parsed one ahead on a second thread while
 * the caller reads the one before (the parse and the freeing of a
 * document are most of a merge's time; the reading into the merge is the
 * caller's, in file order). NULL when this process has one core or no
 * thread can be had: the caller parses each itself. */
struct tfd_pf_ahead;
struct tfd_pf_ahead *tfd_pf_ahead_start(const char *const *names, size_t n);
/* Document i (the next in order): as tfd_partial_read_doc() gives it. */
enum tfd_status tfd_pf_ahead_next(struct tfd_pf_ahead *a, size_t i, struct tfd_json_tree **doc,
				  struct tfd_err *err);
/* A document the caller is done with, freed on the second thread. */
void tfd_pf_ahead_done(struct tfd_pf_ahead *a, struct tfd_json_tree *doc);
/* Stop (documents parsed and not taken are freed) and free a. */
void tfd_pf_ahead_stop(struct tfd_pf_ahead *a);
/* path itself, or the *.partial.json files of a directory, by name, appended
 * to files (copies the caller frees). */
enum tfd_status tfd_partial_expand(const char *path, strvec *files, struct tfd_err *err);

#endif
