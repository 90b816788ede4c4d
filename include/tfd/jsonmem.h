/* jsonmem.h - where cJSON's memory comes from: xmalloc, or an arena for the
 * trees a thread makes meanwhile; and its numbers, printed faster
 * (src/base/jsonmem.c). */
#ifndef TFD_JSONMEM_H
#define TFD_JSONMEM_H

#include <stdbool.h>
#include <stddef.h>

#include "tfd/arena.h"
#include "tfd/buf.h"

struct cJSON;

/* Route cJSON's allocations (rules, partials, every JSON document) through
 * xmalloc, so running out of memory inside cJSON is the one line and exit
 * status 1 it is everywhere else, never a NULL that a caller dereferences.
 * cJSON's hooks are global: call at start, before any cJSON use (a second
 * call does nothing). */
void tfd_json_init(void);

/* A cJSON tree made in an arena of its own: it goes with the arena, at
 * once, not node by node (a parsed partial: a third of a merge's
 * instructions were malloc and free). in_arena is false when cJSON's
 * allocations are not tfdoctor's (before tfd_json_init()): the tree is
 * then made node by node, and freed so. */
struct tfd_json_tree {
	struct cJSON *root;
	struct tfd_arena arena;
	bool in_arena;
	/* the members of its objects, all of them (a reader that looked each
	 * up once has read them all), SIZE_MAX when not counted */
	size_t members;
};
/* From here to tfd_json_tree_end(), the cJSON trees this thread makes are
 * t's (cJSON_Delete() of them does nothing meanwhile); t->root is the
 * caller's to set. */
void tfd_json_tree_begin(struct tfd_json_tree *t);
void tfd_json_tree_end(void);
/* A part of a document (a host, a pipeline) made in an arena of its own,
 * t's, from tfd_json_part_begin() to tfd_json_part_end(root), which
 * prints root compact into text, frees t's tree and gives root's text as
 * a raw node, made where the document's nodes are: outer's tree (being
 * made, its arena this thread's again), or node by node (outer NULL).
 * Printed compact or laid out, the raw node is the same bytes as the
 * part's nodes. The parts' nodes held to the end had been a report's
 * peak (the 745 pipelines of a real TensorFlow 1 capture: 8 MB). */
void tfd_json_part_begin(struct tfd_json_tree *t);
struct cJSON *tfd_json_part_end(struct tfd_json_tree *t, struct cJSON *root,
				struct tfd_json_tree *outer, struct tfd_buf *text);
/* t's tree freed (never cJSON_Delete() it); keep: its arena's chunks kept
 * for the next arenas (tfd_arena_recycle), as for a tree made again and
 * again. t may be used again after tfd_json_tree_begin(). */
void tfd_json_tree_free(struct tfd_json_tree *t, bool keep);

/* Memory as cJSON's nodes get it (the hooks of tfd_json_init(), in this
 * thread's tree's arena meanwhile): what cJSON_Delete() frees. */
void *tfd_json_alloc(size_t n);

/* The JSON text s[0, len) as cJSON_ParseWithLengthOpts(s, len, end, 0)
 * reads it (its tree, node for node; *end after the value; NULL and *end
 * at the error for an error), faster (src/base/jsonparse.c): strict JSON
 * by a reader of its own, anything else by cJSON. */
struct cJSON *tfd_json_parse(const char *s, size_t len, const char **end);
/* The same, and *members the members of the tree's objects (counted by
 * the reader of its own; SIZE_MAX when cJSON read the text). */
struct cJSON *tfd_json_parse_counted(const char *s, size_t len, const char **end, size_t *members);
/* That reader alone: NULL, and *end untouched, where it gives up (the
 * tests compare it with cJSON). */
struct cJSON *tfd_json_parse_strict(const char *s, size_t len, const char **end);
/* Whether trees a and b are the same: types, numbers to the bit, strings,
 * keys, and links (an array's or object's first child's prev is its last). */
bool tfd_json_same(const struct cJSON *a, const struct cJSON *b);

/* item appended to b as cJSON_PrintUnformatted() prints it, byte for byte
 * (src/base/jsonprint.c); false, and b as it was, for a tree cJSON does
 * not print (a node of no type, raw text of NULL). */
bool tfd_json_print(struct tfd_buf *b, const struct cJSON *item);
/* item appended to b as tfd_buf_json_pretty() lays out its compact text,
 * written so at once (aborts on a tree cJSON does not print: tfdoctor
 * makes none). */
void tfd_json_pretty_tree(struct tfd_buf *b, const struct cJSON *item);
/* The same, no newline after it, for item inside a document being laid out
 * (tfd_json_pretty_feed()) where its depth is depth: the next value of an
 * array or object that piece opened, or after its comma. */
void tfd_json_pretty_at(struct tfd_buf *b, const struct cJSON *item, int depth);

/* A number as cJSON prints it (cJSON_CreateNumber), made faster: cJSON
 * prints a number with "%1.15g" and reads it back with sscanf() to check
 * it (then "%1.17g"), a third of a large report's time.
 * A whole number below 10^15, which "%1.15g" prints as its digits, is
 * given as those digits: the same bytes (-0.0 is cJSON's: "-0"). */
struct cJSON *tfd_json_num(double v);
/* The same added to object o under k (cJSON_AddNumberToObject). */
struct cJSON *tfd_json_add_num(struct cJSON *o, const char *k, double v);

#endif
