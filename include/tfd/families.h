/* families.h - the tf.data vocabulary: one row per dataset op.
 *
 * Every fact the tool knows about a dataset op lives in this one table: its
 * normalized family name (what rules and reports use), the other names
 * captures give it, whether it runs asynchronously and how (a user function
 * on workers, parallel inputs), the Produce/Consume event names TensorFlow
 * writes for it, how TensorFlow's own bottleneck tool classifies it (with
 * the exact names that tool matched), and the parameters its events carry.
 * The readers, the analysis, xprof mode, the rules loader and the
 * synthesizer all read it; a new dataset op is one row.
 *
 * The table is static and read-only.
 */
#ifndef TFD_FAMILIES_H
#define TFD_FAMILIES_H

#include <stdbool.h>
#include <stddef.h>

enum tfd_fam_flag {
	TFD_FAM_ASYNC = 1 << 0,	      /* its input runs on other threads */
	TFD_FAM_XPROF_ASYNC = 1 << 1, /* async in TensorFlow's bottleneck tool */
	TFD_FAM_MAP_FN = 1 << 2,      /* a user function on parallel workers */
	TFD_FAM_INTERLEAVE = 1 << 3,  /* parallel inputs, cycle_length of them */
	TFD_FAM_ROOT = 1 << 4,	      /* Iterator::Model, Iterator::Root */
	TFD_FAM_SOURCE = 1 << 5,      /* reads data (files, tensors, remote) */
	/* its inputs are distinct datasets, named [0], [1], ... (zip,
	 * concatenate, sample_from_datasets): each input's iterators are
	 * stages of their own. Elsewhere [i] numbers the instances one stage
	 * makes per input element (interleave, flat_map, repeat's epochs). */
	TFD_FAM_MULTI_INPUT = 1 << 6,
	/* hands its one input's elements on as they come, on the caller's
	 * thread, with no work of its own (repeat, take, options): a
	 * prefetch below it serves the step as well as one above it */
	TFD_FAM_PASS = 1 << 7,
	TFD_FAM_CACHE = 1 << 8, /* cache(): in memory or to a file */
};

/* TensorFlow's bottleneck type (xprof-reference.md 1.10). */
enum tfd_fam_xprof {
	TFD_FX_OTHER = 0,
	TFD_FX_SOURCE,
	TFD_FX_DATA_SERVICE,
	TFD_FX_REMOTE_SOURCE,
	TFD_FX_WITH_PARALLEL,	 /* slow transformation with a parallel version */
	TFD_FX_WITHOUT_PARALLEL, /* slow transformation without one */
};

struct tfd_family {
	const char *name;    /* normalized: ParallelMap, Batch, MemoryCache */
	const char *aliases; /* other names, space-separated (op versions "V2" are
			      * dropped without being listed) */
	unsigned flags;	     /* enum tfd_fam_flag */
	const char *produce; /* its XxxProduce event name, or NULL */
	const char *consume; /* its XxxConsume event name, or NULL */
	enum tfd_fam_xprof xprof;
	const char *xprof_names; /* the exact iterator names TensorFlow's tool
				  * matched for that type, space-separated */
	const char *params;	 /* parameters its events carry, space-separated */
};

extern const struct tfd_family tfd_families[];
extern const size_t tfd_nfamilies;

/* The row of a normalized family name, or NULL. */
const struct tfd_family *tfd_family_lookup(const char *family);
/* True when the family has every flag in flags. */
bool tfd_family_has(const char *family, unsigned flags);
/* The canonical family of an alias ("MemoryCacheImpl" -> "MemoryCache"), or
 * NULL when name is no alias. */
const char *tfd_family_alias(const char *name);
/* The row whose Produce (or Consume) event is named name; NULL if none.
 * *index gets the row's place among the rows with such events. */
const struct tfd_family *tfd_family_of_produce(const char *name, size_t *index);
/* The same for a Consume event. */
const struct tfd_family *tfd_family_of_consume(const char *name, size_t *index);

/* The names TensorFlow gives iterators (families.c). */

/* Normalized family of an iterator's short name: drops "[N]" indices and
 * the "V<n>" op version, and folds aliases (MemoryCacheImpl -> MemoryCache,
 * ForeverRepeat/FiniteRepeat -> Repeat). Writes into buf. */
const char *tfd_iter_family(const char *short_name, char *buf, size_t len);
/* A family less its "Parallel" prefix (ParallelMap -> Map, ParallelInterleave
 * -> Interleave, ParallelBatch -> Batch): a stage made parallel is the
 * stage it was. */
const char *tfd_serial_family(const char *family);
/* Whether two long names (or stage paths) name one stage, a component made
 * parallel aside: "...::BatchV2::Map" and "...::BatchV2::ParallelMapV2". */
bool tfd_same_stage_made_parallel(const char *a, const char *b);
/* The same, also with the prefetches and pass-through datasets (repeat,
 * take, options) above the stage set aside: a final prefetch or a repeat()
 * added above it moves no stage. */
bool tfd_same_stage_moved(const char *a, const char *b);
/* Whether a change that adds a dataset of this family above stages leaves
 * them what they were: a prefetch, or one that hands its input's elements
 * on (repeat, take, options). */
bool tfd_family_set_aside(const char *family);
/* The next "::" component of stage path or long name *p (its length in
 * *n), *p moved past it; with skip, past the components above the last
 * whose family is set aside (tfd_family_set_aside); NULL at the end. */
const char *tfd_path_next(const char **p, size_t *n, bool skip);
/* For an iterator event of a dataset's loop inside a tf.function
 * ("ReduceIterator::Root::Prefetch::Scan::X...": autograph makes the loop a
 * scan whose function is the loop's body, run by a ReduceDataset op), its
 * name from the scan on ("Scan::X..."): the loop's input pipeline, the scan
 * in the place of "Iterator". NULL for any other name, the loop's own
 * iterators (up to the scan) included. */
const char *tfd_loop_input_name(const char *name);
/* Whether name is the root iterator of a dataset's loop inside a
 * tf.function, whose parameters are its pipeline's options
 * ("ReduceIterator::Root"; "ReduceIterator::Model" before 2.7). */
bool tfd_loop_root_name(const char *name);
/* Whether a long name (tfd_iter_long_name()) is in a loop inside a
 * tf.function's input: it starts at the loop's scan ("Scan::X..."). */
bool tfd_in_loop_input(const char *long_name);
/* An iterator event's long name: its loop input name (above) or itself. */
const char *tfd_iter_long_name(const char *name);
/* Number of "::" components of an iterator name: 2 for a root
 * ("Iterator::Model"). */
int tfd_iter_parts(const char *name);
/* Last "::" component of a long name. */
const char *tfd_iter_short(const char *long_name);
/* Whether a normalized family runs its input on threads of its own
 * (Prefetch, ParallelMap, ParallelInterleave, MapAndBatch, ...). */
bool tfd_family_is_async(const char *family);

#endif
