/* chrome_scan.c - the Chrome trace reader's passes as a byte scan that
 * finds the event objects (see chrome.c for the passes). Pass 1 parses the
 * metadata and dataset-function events and skips every other by its
 * bytes; pass 2 reads each event with chrome_fast.c, the parser taking
 * the few it leaves, and the parser checks the rest of the document. */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

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
	bool ev_odd;	   /* pass 2: the event reader left it to the parser */
	size_t ev_from;	   /* where the current event starts in this chunk */
	struct tfd_buf ev; /* the current event's bytes so far */
	size_t nevents;
	bool bail;
	/* pass 2 */
	bool pass2;
	int (*finish)(struct parse *); /* an event's fields are in p->ev */
	/* the document without its event objects' insides, for the parser
	 * to check: each object is "{}", and a run of objects parted by
	 * commas is one "{}" */
	yajl_handle sk;
	size_t sk_from; /* the chunk's bytes from here are not fed yet */
	int gap;	/* since the last object: 0 white space, 1 and a comma, 2 more */
	bool gap_comma; /* the gap's comma was in a chunk before */
	size_t fed;	/* the document's bytes before this chunk */
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

/* An event object's bytes to the parser, as an item of the events array
 * (as the callbacks see it); a rejected one ends the scan. */
static void parse_event(struct scan1 *sc, const char *s, size_t n)
{
	struct parse *p = sc->p;
	yajl_status ys;

	p->events_depth = sc->events_depth;
	p->depth = sc->events_depth;
	ys = yajl_parse(sc->y, (const unsigned char *)s, n);
	if (ys != yajl_status_ok || p->depth != sc->events_depth) {
		if (p->st == TFD_OK)
			sc->bail = true; /* the full pass says what is wrong */
	}
}

/* One whole event object in sc->ev: pass 1 parses it if it may matter,
 * pass 2 reads it. */
static void scan1_event(struct scan1 *sc)
{
	size_t used;

	if (sc->pass2) {
		if (!sc->ev_odd &&
		    tfd_chrome_fast_event(&sc->p->ev, (const unsigned char *)sc->ev.s, sc->ev.len,
					  &used) == FAST_OK &&
		    used == sc->ev.len)
			sc->finish(sc->p);
		else
			parse_event(sc, sc->ev.s, sc->ev.len);
		return;
	}
	if (sc->nevents++ && !sc->ev_matters)
		return;
	parse_event(sc, sc->ev.s, sc->ev.len);
}

/* Pass 2: bytes of the document to the parser's check. */
static void sk_feed(struct scan1 *sc, const void *s, size_t n)
{
	if (n && yajl_parse(sc->sk, s, n) != yajl_status_ok)
		sc->bail = true;
}

/* Pass 2: the gap since the last object is more than white space and a
 * comma: the parser checks it (its comma, if in a chunk before). */
static void gap_open(struct scan1 *sc)
{
	if (sc->gap_comma)
		sk_feed(sc, ",", 1);
	sc->gap_comma = false;
	sc->gap = 2;
}

/* Pass 2: an event object begins at b[i]: the gap before it, then "{}",
 * to the parser, unless one "{}" stands for both objects; then the object
 * read, *i past it when it was read here (else it is gathered, and read at
 * its end again only if the chunk cut it). */
static bool scan2_object(struct scan1 *sc, const unsigned char *b, size_t *i, size_t n)
{
	size_t used;
	enum fast_r r;

	if (sc->gap != 1) {
		gap_open(sc);
		sk_feed(sc, b + sc->sk_from, *i - sc->sk_from);
		sk_feed(sc, "{}", 2);
	}
	sc->gap_comma = false;
	sc->gap = 0;
	sc->sk_from = *i;
	__builtin_prefetch(b + *i + 2048); /* (as skip_blocks() does) */
	r = tfd_chrome_fast_event(&sc->p->ev, b + *i, n - *i, &used);
	sc->ev_odd = r == FAST_ODD;
	if (r != FAST_OK)
		return false;
	sc->finish(sc->p);
	*i += used;
	sc->sk_from = *i;
	return true;
}

/* Pass 2: a byte between the items of the events array. */
static void scan2_gap(struct scan1 *sc, unsigned char c)
{
	if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r')
		return;
	if (c == ',' && sc->gap == 0)
		sc->gap = 1;
	else if (sc->gap != 2)
		gap_open(sc);
}

/* Pass 2: the end of a chunk: its bytes not fed yet to the parser, but a
 * gap of white space and a comma, and an object's bytes. */
static void scan2_chunk_end(struct scan1 *sc, const unsigned char *b, size_t n)
{
	if (sc->in_event)
		return;
	if (sc->events_depth > 0 && sc->depth == sc->events_depth && !sc->in_str && sc->gap < 2)
		sc->gap_comma |= sc->gap == 1;
	else
		sk_feed(sc, b + sc->sk_from, n - sc->sk_from);
}

#ifdef __SSE2__
/* 16 bytes at b as a mask of those equal to c. */
static inline unsigned bytes_eq(__m128i v, char c)
{
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c)));
}

/* skip_in_event() 16 bytes at a time: strings found by the parity of the
 * quotes before each byte, braces and brackets outside them counted into
 * the depth, no byte looked at alone but the openings of strings that may
 * matter. Stops at the event's closing brace, and before a block with a
 * backslash, returning where the bytes are outside a string (a block's
 * start, or the quote that opened the string it ends in). */
static size_t skip_blocks(struct scan1 *sc, const unsigned char *b, size_t i, size_t n)
{
	bool in_str = false; /* at b[i], inside a string opened at open */
	size_t open = i;

	while (i + 16 <= n) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		unsigned q = bytes_eq(v, '"'), inside = q, stop = 16, before;
		unsigned br =
		    bytes_eq(v, '{') | bytes_eq(v, '}') | bytes_eq(v, '[') | bytes_eq(v, ']');

		/* the trace streams from memory: the loads waited on it (two
		 * fifths of the scan's samples at the load) */
		__builtin_prefetch(b + i + 2048);

		inside ^= inside << 1; /* each bit: the parity of the quotes up to it */
		inside ^= inside << 2;
		inside ^= inside << 4;
		inside ^= inside << 8;
		inside = (inside ^ (in_str ? 0xffffu : 0)) & 0xffffu;
		if (bytes_eq(v, '\\'))
			break;
		for (unsigned m = br & ~inside; m; m &= m - 1) {
			unsigned at = (unsigned)__builtin_ctz(m);

			if (b[i + at] == '{' || b[i + at] == '[') {
				sc->depth++;
			} else if (sc->depth - 1 == sc->events_depth) {
				stop = at; /* the event's own end: the state machine's */
				break;
			} else {
				sc->depth--;
			}
		}
		before = stop == 16 ? 0xffffu : (1u << stop) - 1;
		if (!sc->ev_matters && !sc->pass2) {
			/* a string opened here whose first byte is M or I (or is in
			 * the next block) may matter */
			unsigned mi = bytes_eq(v, 'M') | bytes_eq(v, 'I');

			for (unsigned m = q & inside & ((mi >> 1) | 0x8000u) & before;
			     m && !sc->ev_matters; m &= m - 1)
				sc->ev_matters = string_matters(b, i + (size_t)__builtin_ctz(m), n);
		}
		if (stop < 16)
			return i + stop;
		if (q & inside) /* the last string opened in the block */
			open = i + 31 - (size_t)__builtin_clz(q & inside);
		in_str = inside >> 15;
		i += 16;
	}
	return in_str ? open : i;
}
#endif

/* Inside an event object (not in a string): past the bytes from b[i] that
 * change nothing but whether the event may matter (pass 1), up to a brace
 * or a bracket, or a string with an escape or cut by the chunk's end, for
 * the state machine. */
static size_t skip_in_event(struct scan1 *sc, const unsigned char *b, size_t i, size_t n)
{
#ifdef __SSE2__
	i = skip_blocks(sc, b, i, n);
#endif
	while (i < n) {
		unsigned char c = b[i];
		size_t j;

		if (c == '{' || c == '}' || c == '[' || c == ']')
			return i;
		if (c != '"') {
			i++;
			continue;
		}
		if (!sc->ev_matters && !sc->pass2)
			sc->ev_matters = string_matters(b, i, n);
		for (j = i + 1; j < n && b[j] != '"' && b[j] != '\\'; j++)
			;
		if (j == n || b[j] == '\\')
			return i;
		i = j + 1;
	}
	return n;
}

/* parser: the structural scan's state machine over trace JSON bytes, one
 * case per lexical state; splitting it would scatter the state table. */
static bool scan1_eat(void *ctx, const unsigned char *b, size_t n)
{
	struct scan1 *sc = ctx;
	size_t i = 0;

	sc->ev_from = 0;
	sc->sk_from = 0;
	while (i < n && !sc->bail && sc->p->st == TFD_OK) {
		unsigned char c;

		if (sc->pass2 && sc->closed)
			break; /* what follows the document is yajl's to judge, quirks and all */
		if (sc->in_event && !sc->in_str && (i = skip_in_event(sc, b, i, n)) == n)
			break;
		c = b[i];
		if (sc->in_str) {
			if (sc->esc) {
				sc->esc = false;
			} else if (c == '\\') {
				sc->esc = true;
				/* a key spelled with escapes, while it may matter */
				sc->bail |= sc->in_key && !(sc->pass2 && sc->events_depth);
				sc->ev_matters = true; /* an escape may spell anything */
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
		if (sc->pass2 && sc->events_depth > 0 && sc->depth == sc->events_depth) {
			if (c != '{')
				scan2_gap(sc, c);
			else if (scan2_object(sc, b, &i, n))
				continue;
		}
		switch (c) {
		case '"':
			sc->bail |= sc->closed;
			sc->in_str = true;
			if (sc->in_event && !sc->ev_matters && !sc->pass2)
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
				/* its bytes, where they will be read: pass 1 skips most */
				if (sc->pass2 || !sc->nevents || sc->ev_matters)
					tfd_buf_add(&sc->ev, (const char *)b + sc->ev_from,
						    i + 1 - sc->ev_from);
				sc->in_event = false;
				scan1_event(sc);
				sc->sk_from = i + 1;
			}
			sc->closed = sc->depth == 0;
			break;
		case ',':
			if (sc->depth == 1 && sc->root == '{')
				sc->key_next = true;
			break;
		case ' ': /* white space as yajl reads it: JSON's, and \v and \f */
		case '\t':
		case '\n':
		case '\v':
		case '\f':
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
	if (sc->pass2 && !sc->bail)
		scan2_chunk_end(sc, b, n);
	sc->fed += n;
	return !sc->bail && sc->p->st == TFD_OK;
}

/* A pass by the scan: pass 1 when finish is NULL, else pass 2 with finish
 * taking each event read. SCAN_DONE: it did the pass; SCAN_CANT: it read
 * nothing that counts (the caller resets pass 1) and the full pass must
 * run; SCAN_BAD (pass 2): the document is not valid JSON, and events were
 * read before that was seen: *bad_at is the bytes read by then. */
enum scan_result tfd_chrome_scan_pass(struct parse *p, const struct source *src,
				      const yajl_callbacks *cb, int (*finish)(struct parse *),
				      size_t *bad_at)
{
	struct scan1 sc;
	enum tfd_status st = TFD_OK;
	bool done;

	memset(&sc, 0, sizeof(sc));
	sc.p = p;
	tfd_buf_init(&sc.ev);
	sc.y = yajl_alloc(cb, NULL, p);
	yajl_config(sc.y, yajl_allow_multiple_values, 1);
	if (finish) {
		sc.pass2 = true;
		sc.finish = finish;
		sc.sk = yajl_alloc(NULL, NULL, NULL);
		sc.gap = 2;
	}
	if (src->gz)
		st = tfd_gunzip_ahead((const uint8_t *)src->data, src->len, src->mapped, src->limit,
				      tfd_load_cores(p->opts) > 1, scan1_eat, &sc, p->err);
	else
		tfd_chrome_feed_plain(src, scan1_eat, &sc);
	/* any error (the first event's form, the gzip data, the JSON) is left
	 * to the full pass too, so that it is reported exactly as it always was */
	done = st == TFD_OK && p->st == TFD_OK && !sc.bail && sc.closed && !sc.in_str &&
	       sc.events_depth;
	if (sc.sk) {
		done = done && yajl_complete_parse(sc.sk) == yajl_status_ok;
		yajl_free(sc.sk);
	}
	p->st = TFD_OK;
	yajl_free(sc.y);
	tfd_buf_release(&sc.ev);
	*bad_at = sc.fed;
	if (done && !(finish && p->opts && p->opts->chrome_scan_doubt && sc.events_depth))
		return SCAN_DONE;
	return finish && sc.events_depth ? SCAN_BAD : SCAN_CANT;
}
