/* chrome_scan.c - pass 1 of the Chrome trace reader as a byte scan: the
 * metadata and dataset-function events are parsed, every other event is
 * skipped by its bytes (see chrome.c for the passes). */
#include <string.h>

#include <yajl/yajl_parse.h>

#include "chrome_impl.h"
#include "tfd/buf.h"

/* Pass 1 needs only the process and thread names and the dataset
 * functions' step ids, a few events in millions. A structural scan
 * (strings, nesting; no values parsed) finds the traceEvents array and its
 * event objects, and only an event whose bytes may matter is parsed, by
 * yajl with the same callbacks: the first one (its form is checked), and
 * any with a string "M" (a metadata event's ph), a string that starts with
 * "InstantiatedCapturedFunction", or an escape (which may spell either).
 * Anything the scan does not expect (an escaped top-level key, unbalanced
 * nesting, a second value after the document, an event yajl rejects, no
 * events array) gives up, and the caller runs the full yajl pass, which
 * reports errors as always; errors the scan does not see (a bad literal
 * between events) are reported by pass 2's parser, at the same byte. */
struct scan1 {
	struct parse *p;
	yajl_handle y; /* parses the events that may matter */
	int depth;     /* open { and [ */
	bool in_str, esc;
	int root;      /* the document's first { or [, 0 before */
	bool closed;   /* the root value ended */
	bool key_next; /* the next string at depth 1 of a root object is a key */
	bool in_key;   /* reading such a key */
	char key[16];
	size_t keylen;
	bool key_events;  /* the last such key was "traceEvents" */
	int events_depth; /* depth inside the events array: 0 not yet, -1 done */
	bool in_event;
	bool ev_matters;   /* it may be a metadata or dataset-function event */
	size_t ev_from;	   /* where the current event starts in this chunk */
	struct tfd_buf ev; /* the current event's bytes so far */
	size_t nevents;
	bool bail;
};

#define ICF "InstantiatedCapturedFunction"

/* A string opens at b[i] (its quote) inside an event: may the event matter?
 * Its value "M" (a metadata event's ph) or a name that starts with a
 * dataset function's prefix; near the chunk's end, where the text is cut,
 * say yes. */
static bool string_matters(const unsigned char *b, size_t i, size_t n)
{
	size_t left = n - i - 1;

	if (left < sizeof(ICF))
		return true;
	return (b[i + 1] == 'M' && b[i + 2] == '"') ||
	       (b[i + 1] == 'I' && memcmp(b + i + 1, ICF, sizeof(ICF) - 1) == 0);
}

/* One whole event object in sc->ev: parse it if it may matter. */
static void scan1_event(struct scan1 *sc)
{
	struct parse *p = sc->p;
	yajl_status ys;

	if (sc->nevents++ && !sc->ev_matters)
		return;
	/* the callbacks see it as an item of the events array */
	p->events_depth = sc->events_depth;
	p->depth = sc->events_depth;
	ys = yajl_parse(sc->y, (const unsigned char *)sc->ev.s, sc->ev.len);
	if (ys != yajl_status_ok || p->depth != sc->events_depth) {
		if (p->st == TFD_OK)
			sc->bail = true; /* the full pass says what is wrong */
	}
}

/* parser: the structural scan's state machine over trace JSON bytes, one
 * case per lexical state; splitting it would scatter the state table. */
static bool scan1_eat(void *ctx, const unsigned char *b, size_t n)
{
	struct scan1 *sc = ctx;
	size_t i = 0;

	sc->ev_from = 0;
	while (i < n && !sc->bail && sc->p->st == TFD_OK) {
		unsigned char c = b[i];

		if (sc->in_str) {
			if (sc->esc) {
				sc->esc = false;
			} else if (c == '\\') {
				sc->esc = true;
				sc->bail |= sc->in_key; /* a key spelled with escapes */
				sc->ev_matters = true;	/* an escape may spell anything */
			} else if (c == '"') {
				sc->in_str = false;
				if (sc->in_key) {
					sc->in_key = false;
					if (sc->events_depth == 0)
						sc->key_events =
						    sc->keylen == 11 &&
						    memcmp(sc->key, "traceEvents", 11) == 0;
				}
			} else if (sc->in_key) {
				if (sc->keylen < sizeof(sc->key))
					sc->key[sc->keylen] = (char)c;
				sc->keylen++;
			} else {
				/* the body of a string: on to its next quote or backslash */
				const unsigned char *q = memchr(b + i + 1, '"', n - i - 1);
				const unsigned char *e =
				    memchr(b + i + 1, '\\', (q ? (size_t)(q - b) : n) - i - 1);

				i = (size_t)((e ? e : q ? q : b + n) - b) - 1;
			}
			i++;
			continue;
		}
		switch (c) {
		case '"':
			sc->bail |= sc->closed;
			sc->in_str = true;
			if (sc->in_event && !sc->ev_matters)
				sc->ev_matters = string_matters(b, i, n);
			if (sc->depth == 1 && sc->root == '{' && sc->key_next) {
				sc->in_key = true;
				sc->keylen = 0;
				sc->key_next = false;
			}
			break;
		case '{':
		case '[':
			if (sc->closed) {
				sc->bail = true;
				break;
			}
			if (!sc->root)
				sc->root = c;
			if (c == '[' && sc->events_depth == 0 &&
			    ((sc->depth == 1 && sc->key_events) || sc->depth == 0)) {
				sc->events_depth = sc->depth + 1;
				sc->p->found_events = true;
			} else if (c == '{' && sc->events_depth > 0 &&
				   sc->depth == sc->events_depth) {
				sc->in_event = true;
				sc->ev_matters = false;
				sc->ev.len = 0;
				sc->ev_from = i;
			}
			sc->depth++;
			if (sc->depth == 1 && c == '{')
				sc->key_next = true;
			break;
		case '}':
		case ']':
			if (--sc->depth < 0) {
				sc->bail = true;
				break;
			}
			if (c == ']' && sc->events_depth > 0 && sc->depth + 1 == sc->events_depth)
				sc->events_depth = -1;
			else if (c == '}' && sc->in_event && sc->depth == sc->events_depth) {
				tfd_buf_add(&sc->ev, (const char *)b + sc->ev_from,
					    i + 1 - sc->ev_from);
				sc->in_event = false;
				scan1_event(sc);
			}
			sc->closed = sc->depth == 0;
			break;
		case ',':
			if (sc->depth == 1 && sc->root == '{')
				sc->key_next = true;
			break;
		case ' ':
		case '\t':
		case '\n':
		case '\r':
			break;
		default:
			/* numbers, literals, ':': their spelling is pass 2's to check */
			sc->bail |= sc->closed || !sc->root;
			break;
		}
		i++;
	}
	if (sc->in_event && !sc->bail)
		tfd_buf_add(&sc->ev, (const char *)b + sc->ev_from, n - sc->ev_from);
	return !sc->bail && sc->p->st == TFD_OK;
}

/* Pass 1 by the scan: true when it did the pass, else the full pass must
 * run (after pass1_reset). */
bool tfd_chrome_scan_pass(struct parse *p, const struct source *src, const yajl_callbacks *cb)
{
	struct scan1 sc;
	enum tfd_status st = TFD_OK;
	bool done;

	memset(&sc, 0, sizeof(sc));
	sc.p = p;
	tfd_buf_init(&sc.ev);
	sc.y = yajl_alloc(cb, NULL, p);
	yajl_config(sc.y, yajl_allow_multiple_values, 1);
	if (src->gz)
		st = tfd_gunzip((const uint8_t *)src->data, src->len, src->mapped, src->limit,
				scan1_eat, &sc, p->err);
	else
		tfd_chrome_feed_plain(src, scan1_eat, &sc);
	/* any error (the first event's form, the gzip data) is left to the
	 * full pass too, so that it is reported exactly as it always was */
	done = st == TFD_OK && p->st == TFD_OK && !sc.bail && sc.closed && !sc.in_str &&
	       sc.events_depth;
	p->st = TFD_OK;
	yajl_free(sc.y);
	tfd_buf_release(&sc.ev);
	return done;
}
