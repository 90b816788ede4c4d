/* xspace_impl.h - what the XSpace reader's files share (src/input only):
 * the protobuf wire walker (wire.c), the host plane scanned in place
 * (xspace_scan.c), long lines cut into parts and the functions' pre-pass
 * (xspace_cuts.c), and the plane's planning and reading (xspace.c). */
#ifndef TFD_XSPACE_IMPL_H
#define TFD_XSPACE_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "input_impl.h"
#include "tfd/imap.h"
#include "tfd/vec.h"
#include "wire.h"

/* ---- the host plane, scanned in place ------------------------------------
 *
 * A host plane holds every thread's events, tf.data or not; most are not.
 * Instead of unpacking it (which costs several times the file in memory),
 * its lines and events are walked in place: an event's metadata id says
 * whether it is kept; other events are only looked at for their group_id
 * (step extents). protobuf-c decodes the small metadata messages. Pages of
 * a mapped file are dropped from memory once their lines are done.
 */

struct meta {
	const char *name;
	uint8_t kind;
	bool h2d;    /* a host-side copy to the device (tfd_host_op_is_h2d) */
	bool marker; /* a step marker's name (tfd_step_marker_name) */
	/* a step marker by its `_r` stat (tfd_step_root_name): 0 not known
	 * yet (read on its first event: a Trace's arguments are its call
	 * site's), 1 yes, 2 no; noted by the reader, so each block of lines
	 * read on a thread of its own has its copy of the metadata */
	uint8_t root;
	uint8_t runs; /* what it notes of a run, by its id (enum meta_run): rare */
};

/* struct meta.runs: a FunctionRun (tfd_host_fnrun), a SessionRun
 * (tfd_host_session_run), a GetNext op's run (tfd_host_get_next), a
 * tf.function's eager call (tfd_host_fn_call) */
enum meta_run { META_FN_RUN = 1, META_SESSION_RUN = 2, META_GET_NEXT = 4, META_FN_CALL = 8 };

/* Iterator events whose stats a scan remembers, by metadata index, and
 * how many bytes of them at most. */
#define STATS_SEEN 64
#define STATS_SEEN_MAX 256

/* An iterator event's stats as read last (struct scan.seen). */
struct stats_seen {
	size_t mi1; /* the metadata index + 1, 0 empty */
	size_t len;
	const struct tfd_sig *sig;
	uint64_t id;
	unsigned flags;
	bool has_group;
	int64_t group;
	uint8_t bytes[STATS_SEEN_MAX];
};

struct smeta {
	const char *name;
	uint8_t code;
};

/* The (signature, stat, value) steps a scan remembers, in sets of
 * PARAM_WAYS, the oldest of a set going. Direct-mapped, 256 of them
 * missed 284,017 times in a real capture of a parallel interleave whose
 * calls carry four counters each (results_ready, active_elements, ...),
 * their combinations signatures of their own (2,048: 3,704 misses; 4,096:
 * 14,650, two steps of the working set taking one slot in turns); 1,024 in
 * sets of four, 795. */
#define PARAM_CACHE 1024
#define PARAM_WAYS 4
/* The event metadata whose names' op types a scan remembers: a dataset
 * function's ops, a few hundred names at most (MatMul_0 .. MatMul_99),
 * come round again and again. */
#define OP_SEEN 512
#define PARAM_SHORT 16 /* string parameters cached: "true", "false", ... */

#define EXEC_LAST_MAX 128 /* the bytes of stats an executor chunk's reading remembers */

struct scan {
	struct tfd_capture *cap;
	size_t host_idx;
	/* its iterator, Produce and Consume events were left in the file
	 * (TFDOCTOR_SOURCE_LEAVE=1): the host keeps the source */
	bool left;
	/* the ops inside dataset functions on the line being read (reset at
	 * each line or part of one) */
	struct tfd_opscope ops;
	/* the op types of the event metadata read last (op_kind()),
	 * direct-mapped by index: mi1 the index + 1, 0 empty. The scan's own
	 * (a block's copy starts with its prototype's), not the metadata's,
	 * which the blocks read at once */
	struct op_seen {
		size_t mi1;
		struct tfd_op_kind kind;
	} op_seen[OP_SEEN];
	const struct tfd_load_opts *opts;
	struct imap ev_meta, stat_meta; /* id -> index */
	VEC(struct meta) metas;
	VEC(struct smeta) smetas;
	VEC(struct span) lines;
	const char *bad; /* first decoding problem */
	ProtobufCAllocator alloc;
	bool mapped;		 /* data is a file mapping: release pages as we go */
	size_t release_step;	 /* mapped: bytes released at a time (tfd_pages_release_step()) */
	const uint8_t *released; /* pages below this were dropped */
	/* dataset functions: a pre-pass collects their step ids, so that only
	 * the executor chunks running them are kept (a host plane holds
	 * millions of the training step's own ExecutorState::Process events) */
	bool prepass;
	const uint8_t *pre_released; /* the pre-pass's own page-release mark */
	/* metadata index by id for the small ids TensorFlow uses (-1: none);
	 * larger ids go through ev_meta */
	int32_t *meta_by_id;
	size_t nmeta_by_id;
	int32_t *smeta_by_id; /* the same for stat metadata */
	size_t nsmeta_by_id;
	bool has_functions;
	struct fn_steps fn_steps; /* dataset-function step ids (the pre-pass) */
	/* their executor chunks' sums, made from that set (NULL: the chunks
	 * are kept as events) */
	struct tfd_exec_sums *sums;
	/* the metadata ids of "group_id" stats: an event that is not kept is
	 * read only for its step, so its other stats are skipped by id */
	uint64_t group_mids[4];
	int ngroup_mids; /* -1: more than fit, parse every stat */
	/* the same for "id" stats, looked for in executor chunks */
	uint64_t id_mids[4];
	int nid_mids;
	/* and for "_r" (a root: a step marker whatever its name), looked for
	 * on each event name's first event; none in the plane, none looked */
	uint64_t root_mids[4];
	int nroot_mids;
	/* an iterator's parameters (integers, short strings), read from every
	 * one of its events: the signature each (signature, stat, value) gave last,
	 * in sets of PARAM_WAYS (the value's text, its interning and the
	 * signature's lookup cost a tenth of a tf.data-heavy read). Per
	 * capture: a block read starts without one; made on first use (57 KB:
	 * in the scan itself, the pre-pass copied it for every piece it read,
	 * 6 % more instructions on a run of 4 small hosts). */
	struct param_step {
		const struct tfd_sig *from, *to;
		uint64_t mid, v; /* v: the integer, or a short string's bytes */
		int type;
		/* the rest of a short string, zero-padded (a string and the
		 * same with NULs after it read the same: up to the first NUL) */
		char tail[PARAM_SHORT - 8];
	} * param_cache;
	/* the stats of the last executor chunk read for its step, and what
	 * exec_stats() made of them: a step's chunks on a thread carry the
	 * same stats, byte for byte (len 0: none yet) */
	struct exec_last {
		size_t len;
		uint8_t bytes[EXEC_LAST_MAX];
		bool has_id, has_group;
		uint64_t id;
		int64_t group;
	} exec_last;
	/* an iterator's events repeat their stats byte for byte (its id,
	 * parent_id, dataset name and parameters; 27 distinct among the 1,285
	 * iterator events of a real capture): the stats of the last iterator
	 * event of each metadata index, direct-mapped (STATS_SEEN slots, made
	 * on the first such event), and what they made of the event. Per
	 * capture: a block read starts without them. */
	struct stats_seen *seen;
	/* the events of one step in a row, noted at once (tfd_host_note()
	 * and its host lookup per event were 8 % of a host-heavy read): the
	 * span of the events without a step since the last note_flush(), and
	 * the step and extent of the run of events of one step going on */
	struct note_run {
		int64_t span_start, span_end;
		bool spanned, grouped;
		int64_t group, start, end;
	} run;
	/* the line's last GetNext op's run whose iterator is not known yet
	 * (reset at each line or part of one) */
	struct tfd_get_next_open gn;
	/* a part of a line after its first: where it notes its ops while no
	 * scope of its own is open (lead), its first iterator call while no
	 * GetNext op of its own is (gn_lead); NULL once it has one. Until
	 * then ops.open and gn.open are set: the hot path tests those alone */
	struct piece_out *lead, *gn_lead;
};

/* A line, or a part of one, that scan_line() reads. */
struct piece {
	size_t line;
	const uint8_t *p, *end; /* the bytes it reads */
	bool whole;		/* the line itself */
	int64_t id, ts_ns;	/* a part of a line: the line's header */
	struct span name;
};

/* An event read in a part of a line before the part opened a function
 * scope of its own (an op, or another event: kind.type NULL): a scope the
 * parts before left open holds it, or is closed by it. */
struct lead_op {
	const char *name;
	struct tfd_op_kind kind;
	int64_t start, end;
};

/* The events a part keeps for the scope before it: a function's ops run
 * back to back, so a scope holds few past a cut (more: the plane is read
 * again on one thread, when the scope before is still open there). */
#define LEAD_MAX 1024

/* What reading a part of a line found out (one per piece). */
struct piece_out {
	/* its last field ran past the next part's start, or it holds a
	 * timestamp after the line's header (that changes the times of the
	 * events after it: only a reading of the whole line gets that right) */
	bool misaligned;
	struct span display_name;
	/* a part after its line's first starts with the line's state unknown
	 * (what the parts before left open: a function scope, a GetNext op's
	 * run), settled by tfd_xs_seams() once every block is read: */
	VEC(struct lead_op) lead; /* the events before a scope of its own */
	int64_t lead_past;	  /* the start of the first past LEAD_MAX, or INT64_MAX */
	/* its first iterator call, before any GetNext op of its own */
	bool iter_first, iter_has_id;
	int64_t iter_start;
	uint64_t iter_id;
	/* its capture's function-op records and their runs before it (its
	 * own records start a run) */
	size_t rec_first, run_first;
	/* its state at its end, where it set one: ops_set, it opened a
	 * scope (or is its line's first); gn_set, a GetNext op or an
	 * iterator call settled the line's GetNext */
	bool ops_set, gn_set;
	struct tfd_opscope ops;
	struct tfd_get_next_open gn;
};

/* The plane's fields into sc: its lines (whole), the event and stat
 * metadata; a walk callback (xspace_scan.c). */
int tfd_xs_plane_collect(void *ctx, uint32_t field, int wt, uint64_t v, struct span s);
/* Read a line, or the part of one a block holds (part; po says what the
 * part found out), into sc's host. */
enum tfd_status tfd_xs_scan_line(struct scan *sc, struct span line, const struct piece *part,
				 struct piece_out *po, struct tfd_err *err);
/* A line, or a part of one (po, NULL for a whole line), begins: no scope
 * or GetNext open; in a part after its line's first (after_first) the
 * parts before may have left them open, settled by tfd_xs_seams(). */
void tfd_xs_part_begin(struct scan *sc, struct tfd_host *h, bool after_first, struct piece_out *po);
/* A part's state at its end into po (where it set one). */
void tfd_xs_part_end(struct scan *sc, struct piece_out *po);
/* An event (an op or not: kind) of a part before it opened a scope
 * (sc->lead), kept for tfd_xs_seams(). */
void tfd_xs_lead_op(struct scan *sc, const char *name, const struct tfd_op_kind *kind,
		    int64_t start, int64_t end);
/* A part's first iterator call e while no GetNext op of its own ran
 * (sc->gn_lead), kept for tfd_xs_seams(). */
void tfd_xs_lead_iterator(struct scan *sc, const struct tfd_event *e);
/* The parts of lines read in blocks (npc pieces, po their outs; block_of
 * each piece's block, caps the blocks' captures, each of one host):
 * each part's start gets the state the parts before it left open, in the
 * captures of the blocks that read them. false: a part kept too few ops
 * for a scope still open (read the plane again on one thread). The
 * parts' ops are freed either way. */
bool tfd_xs_seams(const struct piece *pc, struct piece_out *po, size_t npc, const size_t *block_of,
		  struct tfd_capture *const *caps);
/* The slot remembering the stats [stats, end) of iterator event e (of
 * metadata index mi; struct stats_seen), NULL when they are not
 * remembered (too long; the general parser asked for); *hit: they are the
 * slot's, and e, *has_group and *group took what they made
 * (xspace_seen.c). */
struct stats_seen *tfd_xs_stats_seen(struct scan *sc, size_t mi, const uint8_t *stats,
				     const uint8_t *end, struct tfd_event *e, bool *has_group,
				     int64_t *group, bool *hit);
/* Note in slot ss (tfd_xs_stats_seen()) the stats [stats, end) of
 * iterator event e of metadata index mi, and what they made of it. */
void tfd_xs_stats_seen_keep(struct stats_seen *ss, size_t mi, const uint8_t *stats,
			    const uint8_t *end, const struct tfd_event *e, bool has_group,
			    int64_t group);
/* Event [p, end) of a line whose timestamp is ts_ns into *e when it is
 * an iterator, Produce or Consume event the scan keeps: its time, name and
 * stats as scan_event() reads them, its signature interned in sc's
 * capture; nothing noted, nothing packed. 1: decoded; 0: another kind;
 * -1: malformed (xspace_source.c). */
int tfd_xs_decode_iter(struct scan *sc, int64_t ts_ns, const uint8_t *p, const uint8_t *end,
		       struct tfd_event *e);
/* The plane's iterator, Produce and Consume events decoded again from its
 * lines, none packed (struct tfd_source, xspace_source.c): what sc read
 * them with, moved out of it (keep: the read frees none of it, the
 * source does) or lent (the source lives no longer than sc). */
struct tfd_source *tfd_xs_source(struct scan *sc, bool keep);
/* Does the line belong to a tf.data thread (its name says so, or it has
 * none before its events)? The pre-pass reads only those. */
bool tfd_xs_tfdata_line(struct span line);

/* ---- long lines in parts (xspace_cuts.c) ---------------------------------- */

typedef VEC(struct piece) piece_vec;

/* The threads a host plane is read on: the load's cores, at most 8. */
size_t tfd_xs_plane_threads(const struct tfd_load_opts *o);
/* A likely event boundary at or after `from` (before end), or NULL: a
 * guess, confirmed when the part before it ends there (struct piece_out).
 * Looks at most 64 KiB ahead. */
const uint8_t *tfd_xs_find_cut(const uint8_t *from, const uint8_t *end);
/* The header of a line (id, name, timestamp) into pc when it comes before
 * the events; false otherwise (the line is read whole). */
bool tfd_xs_line_head(struct span ln, struct piece *pc);
/* Line number `line` (ln) into pcs: parts of about want bytes cut at
 * guessed event boundaries when it is twice that long or more (want 0:
 * never) and its header comes first, else the line whole. */
void tfd_xs_line_pieces(struct span ln, size_t line, size_t want, piece_vec *pcs);
/* The functions' pre-pass: the step ids of the dataset-function events of
 * the tf.data lines into sc->fn_steps (fitted, the same table on any
 * number of threads); the lines are read in parts on several threads. */
enum tfd_status tfd_xs_prepass(struct scan *sc, struct tfd_err *err);

#endif
