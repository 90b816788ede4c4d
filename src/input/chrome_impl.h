/* chrome_impl.h - what the Chrome trace reader's two files share:
 * chrome.c (the SAX parser's callbacks, the passes) and chrome_scan.c (pass
 * 1's byte scan). Not part of the project's public face. */
#ifndef TFD_CHROME_IMPL_H
#define TFD_CHROME_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	bool pid_num, tid_num, ts_num, dur_num;
	VEC(struct arg) args;
	bool has_args;
};

struct thread_meta {
	int64_t pid, tid;
	char *name;
};

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

/* The parser's callbacks (chrome.c): both passes and the scan use them. */
extern const yajl_callbacks tfd_chrome_callbacks;

/* Feed src's plain bytes to eat in chunks, dropping a mapped file's pages
 * behind them (chrome_feed.c). */
void tfd_chrome_feed_plain(const struct source *src, eat_fn eat, void *ctx);

/* Pass 1 by a byte scan that parses only the events that may matter
 * (chrome_scan.c), with the parser's callbacks cb for those: true when it
 * did the pass; false, and the caller resets pass 1 and runs the full
 * parse, on anything it does not expect. */
bool tfd_chrome_scan_pass(struct parse *p, const struct source *src, const yajl_callbacks *cb);

#endif
