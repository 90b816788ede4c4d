/* chrome_impl.h - what the Chrome trace reader's two files share:
 * chrome.c (the SAX parser's callbacks, the passes) and chrome_scan.c (pass
 * 1's byte scan). Not part of the project's public face. */
#ifndef TFD_CHROME_IMPL_H
#define TFD_CHROME_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <yajl/yajl_parse.h>

#include "input_impl.h"
#include "tfd/buf.h"
#include "tfd/imap.h"
#include "tfd/vec.h"

#define CHUNK (1u << 20)

enum field { F_OTHER, F_PH, F_NAME, F_PID, F_TID, F_TS, F_DUR, F_ARGS };

struct arg {
	size_t key, val; /* offsets into the event's scratch buffer */
	bool num;	 /* the value was a JSON number (raw text kept) */
};

/* One trace event while it is parsed. */
struct jev {
	struct tfd_buf scratch;		    /* NUL-separated strings of this event */
	size_t ph, name, pid, tid, ts, dur; /* offsets + 1 (0: absent) */
	VEC(struct arg) args;
	bool has_args;
	/* pid, tid, ts and dur (index f - F_PID) as the fast read found them:
	 * a JSON number of the form tfd_fast_decimal() reads, its value (bit
	 * f - F_PID of num_ok; the field's text is then not kept) */
	double num[4];
	unsigned num_ok;
};

/* The numbers' fields: pid, tid, ts, dur. */
#define F_NUM_FIRST F_PID
#define F_NUM_LAST F_DUR
_Static_assert(F_NUM_LAST - F_NUM_FIRST == 3, "four numeric fields");

/* A string into the event's scratch buffer: its offset + 1. */
static inline size_t tfd_jev_keep(struct jev *e, const unsigned char *s, size_t n)
{
	struct tfd_buf *b = &e->scratch;
	size_t off = b->len;

	if (b->len + n + 2 > b->cap) {
		tfd_buf_add(b, (const char *)s, n);
		tfd_buf_add(b, "", 1);
	} else { /* room for it, its NUL and the buffer's */
		memcpy(b->s + b->len, s, n);
		b->s[b->len + n] = '\0';
		b->len += n + 1;
		b->s[b->len] = '\0';
	}
	return off + 1;
}

/* An event begins: no fields, no args. */
static inline void tfd_jev_reset(struct jev *e)
{
	e->scratch.len = 0;
	e->ph = e->name = e->pid = e->tid = e->ts = e->dur = 0;
	e->args.n = 0;
	e->has_args = false;
	e->num_ok = 0;
}

/* Where field f's text offset is in struct jev (F_PH .. F_DUR). */
static const size_t tfd_jev_field_at[] = {
    [F_PH] = offsetof(struct jev, ph),	 [F_NAME] = offsetof(struct jev, name),
    [F_PID] = offsetof(struct jev, pid), [F_TID] = offsetof(struct jev, tid),
    [F_TS] = offsetof(struct jev, ts),	 [F_DUR] = offsetof(struct jev, dur)};

/* Field f's text offset + 1 (0: absent; F_PH .. F_DUR). */
static inline size_t tfd_jev_field(const struct jev *e, enum field f)
{
	size_t v;

	memcpy(&v, (const char *)e + tfd_jev_field_at[f], sizeof(v));
	return v;
}

static inline void tfd_jev_field_put(struct jev *e, enum field f, size_t off1)
{
	memcpy((char *)e + tfd_jev_field_at[f], &off1, sizeof(off1));
}

/* A scalar value of the event's key f kept as that field's text (the last
 * one counts); other keys' values are not kept. */
static inline void tfd_jev_set(struct jev *e, enum field f, const unsigned char *s, size_t n)
{
	if (f != F_OTHER && f != F_ARGS)
		tfd_jev_field_put(e, f, tfd_jev_keep(e, s, n));
	if (f >= F_NUM_FIRST && f <= F_NUM_LAST)
		e->num_ok &= ~(1u << (f - F_NUM_FIRST));
}

/* A numeric field's value read by the fast read (the last one counts): its
 * text is not kept. */
static inline void tfd_jev_set_num(struct jev *e, enum field f, double v)
{
	tfd_jev_field_put(e, f, 0);
	e->num[f - F_NUM_FIRST] = v;
	e->num_ok |= 1u << (f - F_NUM_FIRST);
}

struct thread_meta {
	int64_t pid, tid;
	char *name;
};

/* A kept event name's interned copy and kind (struct parse.names): a
 * trace repeats a few names millions of times, each hashed to be interned
 * and its kind found by comparing it with the known names. */
struct name_slot {
	const char *name; /* interned; NULL: empty */
	size_t len;
	enum tfd_ev_kind kind;
};
#define TFD_CHROME_NAME_SLOTS 64

struct parse {
	int pass; /* 1: process and thread names, 2: events */
	struct tfd_capture *cap;
	size_t host_idx;
	const struct tfd_load_opts *opts;
	struct tfd_err *err;
	enum tfd_status st;
	int depth;
	int events_depth;     /* depth of the traceEvents array, 0 until found */
	bool root_key_events; /* the pending top-level key is "traceEvents" */
	bool found_events;
	bool checked_first;
	enum field field; /* the pending key of the event object */
	size_t arg_key;	  /* the pending key inside args (offset + 1) */
	struct jev ev;
	/* pass 2: the first bad event's error, reported unless the JSON is bad */
	enum tfd_status deferred;
	struct tfd_err deferred_err;
	/* pass 1 results */
	struct imap host_pids;
	struct fn_steps fn_steps; /* dataset-function step ids (pass 1) */
	/* pass 2: a tracker of the ops inside dataset functions per thread
	 * that ran one (tid -> index), made at its first function event */
	struct imap op_tids;
	VEC(struct tfd_opscope) opscopes;
	size_t nproc_named;
	VEC(struct thread_meta) threads;
	/* device processes (pid -> 2 * its plane's index, + 1 for a TPU) and the
	 * threads of theirs that hold the device's own events (pid << 32 |
	 * tid, tfd_dev_line_wanted) */
	struct imap dev_pids, dev_threads;
	/* pass 2: the device events, reduced once the host's are in */
	VEC(struct tfd_dev_span) dev_spans;
	/* pass 2 on two threads: the parse's events go to this queue
	 * (chrome.c), NULL when the reader keeps them itself */
	struct evq *q;
	/* pass 2 read again to find the JSON's error: events are not kept */
	bool check_only;
	/* the scan found JSON invalid that yajl reads: the file is read again
	 * by yajl alone */
	bool rescan;
	/* pass 2: the last GetNext op's run whose iterator is not known yet */
	struct tfd_get_next_open gn;
	/* pass 2: the kept events' names, direct-mapped (chrome_names.c) */
	struct name_slot names[TFD_CHROME_NAME_SLOTS];
};

/* A trace's bytes: plain, or gzip inflated as it is read. */
struct source {
	const char *data;
	size_t len;
	bool mapped;
	bool gz;
	size_t limit; /* most inflated bytes (gz) */
};

typedef bool (*eat_fn)(void *ctx, const unsigned char *b, size_t n);

/* The text at offset off1 (plus one) of e's scratch buffer; NULL for 0. */
static inline const char *tfd_jev_str(const struct jev *e, size_t off1)
{
	return off1 ? e->scratch.s + off1 - 1 : NULL;
}

/* The event's args.id into *id as its 64-bit pattern (0 if none); whether
 * it has one (chrome_runs.c). */
bool tfd_chrome_arg_id(const struct jev *e, uint64_t *id);
/* A host event nm (pass 2's p->ev) that may be a function's or a
 * session's run, or a GetNext op's (its `id`: the run it read input for),
 * noted on host h; the GetNext's iterator is the next iterator call on
 * its thread (p->gn, tfd_host_get_next_iterator(); chrome_runs.c). */
void tfd_chrome_note_run(struct parse *p, struct tfd_host *h, const char *nm, int64_t tid,
			 int64_t start, int64_t end, bool has_group, int64_t group);

/* The parser's callbacks (chrome.c): both passes and the scan use them. */
extern const yajl_callbacks tfd_chrome_callbacks;

/* Feed src's plain bytes to eat in chunks, dropping a mapped file's pages
 * behind them (chrome_feed.c). */
void tfd_chrome_feed_plain(const struct source *src, eat_fn eat, void *ctx);

/* A pass by a byte scan (chrome_scan.c) with the parser's callbacks cb for
 * the events it does not read itself. Pass 1 (finish NULL) parses only the
 * events that may matter; pass 2 reads every event, finish taking each.
 * SCAN_DONE: the pass is done. SCAN_CANT: nothing was read that counts;
 * the caller resets pass 1 and runs the full parse (it met something it
 * does not expect). SCAN_BAD (pass 2 only): the document is not valid
 * JSON, seen after events were read (*bad_at: the bytes read by then). */
enum scan_result { SCAN_DONE, SCAN_CANT, SCAN_BAD };
enum scan_result tfd_chrome_scan_pass(struct parse *p, const struct source *src,
				      const yajl_callbacks *cb, int (*finish)(struct parse *),
				      size_t *bad_at);

/* One event object read without the parser (chrome_fast.c): FAST_OK with
 * its fields in e and *used its bytes; FAST_SHORT: its bytes end before
 * the object does; FAST_ODD: a form the parser must read (escapes, bytes
 * past ASCII, nesting past "args", anything invalid). s[0] is its brace. */
enum fast_r { FAST_OK, FAST_SHORT, FAST_ODD };
enum fast_r tfd_chrome_fast_event(struct jev *e, const unsigned char *s, size_t n, size_t *used);

/* chrome_names.c: a kept event name's slot (struct parse.names); the kind
 * of the name[0..n), the slot's when it holds the name (*held); a kept
 * event of the name, its interned copy the slot's (put there when the
 * slot did not hold it: held, as the kind's lookup found). */
struct name_slot *tfd_chrome_name_slot(struct parse *p, const char *name, size_t n);
enum tfd_ev_kind tfd_chrome_name_kind(const struct name_slot *ns, const char *name, size_t n,
				      bool *held);
struct tfd_event *tfd_chrome_add_named(struct parse *p, struct tfd_host *h, uint32_t th,
				       struct name_slot *ns, bool held, const char *name, size_t n,
				       enum tfd_ev_kind kind, int64_t start, int64_t dur);

#endif
