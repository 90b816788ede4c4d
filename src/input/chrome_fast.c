/* chrome_fast.c - one trace event object read straight into its fields,
 * without the general parser, for the shape nearly every event has: keys
 * and strings of plain ASCII (no escapes), numbers, literals, and an "args"
 * object of such values. Anything else is left to the parser (FAST_ODD),
 * which then reads the same bytes with the callbacks of chrome.c; what this
 * reads, it reads as they would (the same fields, texts and args). */
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "chrome_impl.h"

/* May c stand in a plain string? Printable ASCII and DEL, but the quote
 * and the backslash. */
static inline bool plain(unsigned char c)
{
	return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LITTLE_ENDIAN_WORDS 1
#else
#define LITTLE_ENDIAN_WORDS 0
#endif

/* The bytes of the 8 at q that are not plain (below 0x20 or past 0x7f, a
 * quote, a backslash), each as its high bit; exact up to the first such
 * byte, which is what the caller wants. */
static inline uint64_t word_odd(const unsigned char *q)
{
	const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
	uint64_t w, quote, bslash;

	memcpy(&w, q, 8);
	quote = w ^ (ones * '"');
	bslash = w ^ (ones * '\\');
	return (((w - ones * 0x20) & ~w) | ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) |
		w) &
	       high;
}

struct cur {
	const unsigned char *s, *end;
};

/* White space as yajl reads it: JSON's, and \v and \f. */
static inline bool is_ws(unsigned char c)
{
	/* (one test for the usual byte, a token's: above the space) */
	return c <= ' ' &&
	       (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r');
}

static inline void skip_ws(struct cur *c)
{
	while (c->s < c->end && is_ws(*c->s))
		c->s++;
}

/* A plain string at c->s (its quote): its body. */
static inline enum fast_r plain_string(struct cur *c, const unsigned char **body, size_t *len)
{
	const unsigned char *q = c->s + 1;

#ifdef __SSE2__
	/* 16 bytes at a time: a quote, a backslash, a control byte or one
	 * past ASCII (below 0x20 as a signed byte) ends the plain run */
	while (q + 16 <= c->end) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)q);
		unsigned m = (unsigned)_mm_movemask_epi8(
		    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
				 _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));

		if (m) {
			q += __builtin_ctz(m);
			goto found;
		}
		q += 16;
	}
#endif
	for (;;) { /* 8 bytes at a time where the first byte is the lowest */
		uint64_t m;

		if (!LITTLE_ENDIAN_WORDS || q + 8 > c->end) {
			while (q < c->end && plain(*q))
				q++;
			break;
		}
		if ((m = word_odd(q)) != 0) {
			q += __builtin_ctzll(m) / 8;
			break;
		}
		q += 8;
	}
#ifdef __SSE2__
found:
#endif
	if (q == c->end)
		return FAST_SHORT;
	if (*q != '"')
		return FAST_ODD; /* an escape, a control or non-ASCII byte */
	*body = c->s + 1;
	*len = (size_t)(q - c->s - 1);
	c->s = q + 1;
	return FAST_OK;
}

/* The digits from q: their value in *m (the first 16 of them, *nd
 * counting all). */
static const unsigned char *digits(const unsigned char *q, const unsigned char *end, uint64_t *m,
				   int *nd)
{
	for (; q < end && *q >= '0' && *q <= '9'; q++)
		if ((*nd)++ < 16)
			*m = *m * 10 + (uint64_t)(*q - '0');
	return q;
}

/* A scalar value: its text to keep (NULL: null), whether a number, and a
 * number's value where tfd_fast_decimal() would read its text (has_d). */
struct scalar {
	const unsigned char *s;
	size_t n;
	bool num, has_d;
	double d;
};

/* A JSON number at c->s, as the grammar spells it: its length, and its
 * value when it has at most 15 digits and no exponent (v->has_d). */
static enum fast_r number(struct cur *c, size_t *len, struct scalar *v)
{
	const unsigned char *q = c->s, *d;
	bool neg = q < c->end && *q == '-';
	uint64_t m = 0;
	int nd = 0, frac = 0;

	q += neg;
	d = digits(q, c->end, &m, &nd);
	if (d == q || (*q == '0' && d - q > 1))
		return d == c->end ? FAST_SHORT : FAST_ODD;
	q = d;
	if (q < c->end && *q == '.') {
		d = digits(q + 1, c->end, &m, &nd);
		if (d == q + 1)
			return d == c->end ? FAST_SHORT : FAST_ODD;
		frac = (int)(d - q - 1);
		q = d;
	}
	v->has_d = nd <= 15;
	if (v->has_d)
		v->d = tfd_decimal_value(m, frac, neg);
	if (q < c->end && (*q == 'e' || *q == 'E')) {
		v->has_d = false;
		q++;
		if (q < c->end && (*q == '+' || *q == '-'))
			q++;
		d = digits(q, c->end, &m, &nd);
		if (d == q)
			return d == c->end ? FAST_SHORT : FAST_ODD;
		q = d;
	}
	*len = (size_t)(q - c->s);
	c->s = q;
	/* what follows is the caller's to check */
	return q == c->end ? FAST_SHORT : FAST_OK; /* more digits may follow */
}

/* true, false or null at c->s: its text (NULL for null). */
static enum fast_r literal(struct cur *c, const char **text, size_t *len)
{
	static const char *const lit[] = {"true", "false", "null"};

	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(lit[i]), have = (size_t)(c->end - c->s);

		if (*c->s != lit[i][0])
			continue;
		if (memcmp(c->s, lit[i], have < n ? have : n))
			return FAST_ODD;
		if (have <= n)
			return FAST_SHORT;
		c->s += n;
		*text = i < 2 ? lit[i] : NULL;
		*len = n;
		return FAST_OK;
	}
	return FAST_ODD;
}

static enum fast_r scalar_value(struct cur *c, struct scalar *v)
{
	const char *t = NULL;
	enum fast_r r;

	v->num = v->has_d = false;
	if (*c->s == '"')
		return plain_string(c, &v->s, &v->n);
	if (*c->s == '-' || (*c->s >= '0' && *c->s <= '9')) {
		v->s = c->s;
		v->num = true;
		return number(c, &v->n, v);
	}
	r = literal(c, &t, &v->n);
	v->s = (const unsigned char *)t;
	return r;
}

/* After a member: a comma (then another) or the closing brace. *more:
 * another member follows. */
static enum fast_r next_member(struct cur *c, bool *more)
{
	skip_ws(c);
	if (c->s == c->end)
		return FAST_SHORT;
	if (*c->s != ',' && *c->s != '}')
		return FAST_ODD;
	*more = *c->s++ == ',';
	if (*more) {
		skip_ws(c);
		if (c->s == c->end)
			return FAST_SHORT;
		if (*c->s != '"')
			return FAST_ODD;
	}
	return FAST_OK;
}

/* The event's key at c->s (its quote) when it is one of the fields,
 * spelled plainly, its closing quote in the bytes: past it; else F_OTHER,
 * c->s where it was. */
static inline enum field known_key(struct cur *c)
{
	static const char *const keys[] = {
	    [F_PH] = "\"ph\"", [F_NAME] = "\"name\"", [F_PID] = "\"pid\"",  [F_TID] = "\"tid\"",
	    [F_TS] = "\"ts\"", [F_DUR] = "\"dur\"",   [F_ARGS] = "\"args\""};
	static const unsigned char klen[] = {[F_PH] = 4, [F_NAME] = 6, [F_PID] = 5, [F_TID] = 5,
					     [F_TS] = 4, [F_DUR] = 5,  [F_ARGS] = 6};
	enum field f;
	size_t n;

	if (c->end - c->s < 6)
		return F_OTHER;
	switch (c->s[1]) {
	case 'p':
		f = c->s[2] == 'h' ? F_PH : F_PID;
		break;
	case 't':
		f = c->s[2] == 's' ? F_TS : F_TID;
		break;
	case 'n':
		f = F_NAME;
		break;
	case 'd':
		f = F_DUR;
		break;
	case 'a':
		f = F_ARGS;
		break;
	default:
		return F_OTHER;
	}
	/* 4 to 6 bytes, compared by a length the compiler sees (no call) */
	n = klen[f];
	if (n == 4   ? memcmp(c->s, keys[f], 4) != 0
	    : n == 5 ? memcmp(c->s, keys[f], 5) != 0
		     : memcmp(c->s, keys[f], 6) != 0)
		return F_OTHER;
	c->s += n;
	return f;
}

/* After a key: its colon, and white space about it. */
static enum fast_r colon(struct cur *c)
{
	skip_ws(c);
	if (c->s == c->end)
		return FAST_SHORT;
	if (*c->s++ != ':')
		return FAST_ODD;
	skip_ws(c);
	return c->s == c->end ? FAST_SHORT : FAST_OK;
}

/* A member's key and its colon: the key's body. */
static enum fast_r key_colon(struct cur *c, const unsigned char **k, size_t *kn)
{
	enum fast_r r = plain_string(c, k, kn);

	return r == FAST_OK ? colon(c) : r;
}

/* The "args" object at c->s (its brace): each entry with a value kept. */
static enum fast_r args_object(struct jev *e, struct cur *c)
{
	bool more = true;

	e->has_args = true;
	c->s++;
	skip_ws(c);
	if (c->s == c->end)
		return FAST_SHORT;
	if (*c->s == '}') {
		c->s++;
		return FAST_OK;
	}
	if (*c->s != '"')
		return FAST_ODD;
	while (more) {
		const unsigned char *k;
		size_t kn;
		struct scalar v;
		enum fast_r r = key_colon(c, &k, &kn);

		if (r == FAST_OK)
			r = scalar_value(c, &v);
		if (r != FAST_OK)
			return r;
		if (v.s) {
			struct arg a;

			a.key = tfd_jev_keep(e, k, kn);
			a.val = tfd_jev_keep(e, v.s, v.n);
			a.num = v.num;
			vec_push(&e->args, a);
		}
		if ((r = next_member(c, &more)) != FAST_OK)
			return r;
	}
	return FAST_OK;
}

enum fast_r tfd_chrome_fast_event(struct jev *e, const unsigned char *s, size_t n, size_t *used)
{
	struct cur c = {s + 1, s + n};
	bool more = true;

	tfd_jev_reset(e);
	skip_ws(&c);
	if (c.s == c.end)
		return FAST_SHORT;
	if (*c.s == '}')
		more = false, c.s++;
	else if (*c.s != '"')
		return FAST_ODD;
	while (more) {
		const unsigned char *k;
		size_t kn;
		enum field f = known_key(&c);
		enum fast_r r = f != F_OTHER ? colon(&c) : key_colon(&c, &k, &kn);

		if (r != FAST_OK)
			return r;
		if (*c.s == '{') {
			if (f != F_ARGS)
				return FAST_ODD;
			r = args_object(e, &c);
		} else if (*c.s == '[') {
			return FAST_ODD;
		} else {
			struct scalar v;

			if ((r = scalar_value(&c, &v)) == FAST_OK && v.s) {
				if (v.has_d && f >= F_NUM_FIRST && f <= F_NUM_LAST)
					tfd_jev_set_num(e, f, v.d); /* (not read again) */
				else
					tfd_jev_set(e, f, v.s, v.n);
			}
		}
		if (r != FAST_OK || (r = next_member(&c, &more)) != FAST_OK)
			return r;
	}
	*used = (size_t)(c.s - s);
	return FAST_OK;
}
