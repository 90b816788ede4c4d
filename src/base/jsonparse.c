/* jsonparse.c - JSON read into cJSON's tree, faster (include/tfd/jsonmem.h).
 *
 * cJSON's own reader spends most of a fleet merge's parse on numbers (each
 * copied, then localeconv() and strtod()) and on comparing every value
 * with "null", "false" and "true". This reader makes the tree
 * cJSON_ParseWithLengthOpts() makes, node for node (types, strings,
 * numbers, the order of members, an array's or object's first child
 * pointing back at its last), for the strict JSON that tfdoctor writes,
 * and gives up on anything else: whitespace other than space, tab and
 * line ends, a byte-order mark, numbers JSON does not allow but strtod()
 * reads (leading zeros, "1."), numbers over 63 characters, \u escapes of
 * surrogates or without four hex digits, nesting deeper than cJSON's
 * limit, and every error. tfd_json_parse() then asks cJSON, whose answer
 * (its tree, or the error and its place) stands.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tfd/jsonmem.h"

struct jp {
	const unsigned char *p, *end;
	int depth;
	size_t members; /* objects' members read */
};

static bool value(struct jp *j, cJSON *it);

static cJSON *new_item(void)
{
	cJSON *n = tfd_json_alloc(sizeof(*n));

	memset(n, 0, sizeof(*n));
	return n;
}

static inline void skip_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static inline bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* The bytes cJSON takes into a number before it reads it with strtod(). */
static inline bool number_byte(unsigned char c)
{
	return is_digit(c) || c == '+' || c == '-' || c == 'e' || c == 'E' || c == '.';
}

static int hex(unsigned char c)
{
	if (is_digit(c))
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* \uXXXX at p (its backslash), of a code point outside the surrogates, as
 * UTF-8 at *o; false for anything else. */
static bool unicode(const unsigned char *p, const unsigned char *q, unsigned char **o)
{
	unsigned cp = 0;
	unsigned char *w = *o;

	if (q - p < 6)
		return false;
	for (int i = 2; i < 6; i++) {
		int h = hex(p[i]);

		if (h < 0)
			return false;
		cp = cp << 4 | (unsigned)h;
	}
	if (cp >= 0xD800 && cp <= 0xDFFF)
		return false;
	if (cp < 0x80) {
		*w++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*w++ = (unsigned char)(0xC0 | cp >> 6);
		*w++ = (unsigned char)(0x80 | (cp & 0x3F));
	} else {
		*w++ = (unsigned char)(0xE0 | cp >> 12);
		*w++ = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
		*w++ = (unsigned char)(0x80 | (cp & 0x3F));
	}
	*o = w;
	return true;
}

/* The string whose opening quote is at j->p, into *out (allocated as
 * cJSON's nodes are, so that cJSON_Delete() frees it). Its end is found
 * as cJSON finds it: a backslash hides the byte after it. */
static bool string(struct jp *j, char **out)
{
	const unsigned char *s = j->p + 1, *q;
	size_t esc = 0;
	unsigned char *o, *w;

	/* most strings have no backslash: their end is the next quote */
	q = memchr(s, '"', (size_t)(j->end - s));
	if (!q)
		return false;
	if (memchr(s, '\\', (size_t)(q - s))) {
		for (q = s; q < j->end && *q != '"'; q++) {
			if (*q == '\\') {
				if (q + 1 >= j->end)
					return false;
				q++;
				esc++;
			}
		}
		if (q >= j->end)
			return false;
	}
	/* each escape is at least two bytes for at most three out, \u six */
	o = tfd_json_alloc((size_t)(q - s) - esc + 1);
	*out = (char *)o;
	if (!esc) {
		memcpy(o, s, (size_t)(q - s));
		o[q - s] = '\0';
		j->p = q + 1;
		return true;
	}
	w = o;
	for (const unsigned char *p = s; p < q;) {
		if (*p != '\\') {
			*w++ = *p++;
			continue;
		}
		switch (p[1]) {
		case 'b':
			*w++ = '\b';
			break;
		case 'f':
			*w++ = '\f';
			break;
		case 'n':
			*w++ = '\n';
			break;
		case 'r':
			*w++ = '\r';
			break;
		case 't':
			*w++ = '\t';
			break;
		case '"':
		case '\\':
		case '/':
			*w++ = p[1];
			break;
		case 'u':
			if (!unicode(p, q, &w))
				return false;
			p += 6;
			continue;
		default:
			return false;
		}
		p += 2;
	}
	*w = '\0';
	j->p = q + 1;
	return true;
}

/* Exact powers of ten: a double holds 10^k exactly up to 10^22. */
static const double pow10_exact[] = {1e0,  1e1,	 1e2,  1e3,  1e4,  1e5,	 1e6,  1e7,
				     1e8,  1e9,	 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* A number's text as JSON's grammar reads it: its digits' value m (the
 * first 15 of them), how many digits, and its power of ten. */
struct num_text {
	const unsigned char *end;
	uint64_t m;
	int digits, ex;
	bool neg;
};

/* Digits from p on into n (m takes the first 15); the first byte after. */
static const unsigned char *digits(const unsigned char *p, const unsigned char *end,
				   struct num_text *n)
{
	for (; p < end && is_digit(*p); p++, n->digits++)
		n->m = n->digits < 15 ? n->m * 10 + (uint64_t)(*p - '0') : n->m;
	return p;
}

/* The number at p in JSON's grammar into n; false where it is not one. */
static bool num_scan(const unsigned char *p, const unsigned char *end, struct num_text *n)
{
	int scale = 0, ex = 0;

	memset(n, 0, sizeof(*n));
	n->neg = *p == '-';
	p += n->neg;
	if (p >= end || !is_digit(*p))
		return false;
	p = *p == '0' ? p + 1 : digits(p, end, n);
	if (p < end && *p == '.') {
		int before = n->digits;

		if (++p >= end || !is_digit(*p))
			return false;
		p = digits(p, end, n);
		scale = n->digits - before;
	}
	if (p < end && (*p == 'e' || *p == 'E')) {
		bool eneg = ++p < end && *p == '-';

		p += p < end && (*p == '+' || *p == '-');
		if (p >= end || !is_digit(*p))
			return false;
		for (; p < end && is_digit(*p); p++)
			ex = ex < 1000 ? ex * 10 + (*p - '0') : ex;
		ex = eneg ? -ex : ex;
	}
	n->ex = ex - scale;
	n->end = p;
	return true;
}

/* A number in JSON's own grammar, which cJSON would copy whole (the byte
 * after it is none of its number bytes) and strtod() read whole, read as
 * strtod() reads it: correctly rounded. Its digits, at most 15 of them,
 * make a whole number m below 2^53, and a power of ten p of at most 22
 * is exact, so m * 10^p or m / 10^p is one rounding of exact operands:
 * strtod()'s answer. Anything else is strtod()'s to read. */
static bool number(struct jp *j, cJSON *it)
{
	const unsigned char *s = j->p;
	struct num_text n;
	double d;

	if (!num_scan(s, j->end, &n) || (n.end < j->end && number_byte(*n.end)) || n.end - s > 63)
		return false;
	if (n.digits <= 15 && n.ex >= -22 && n.ex <= 22) {
		d = (double)n.m;
		d = n.ex < 0 ? d / pow10_exact[-n.ex] : d * pow10_exact[n.ex];
		d = n.neg ? -d : d; /* "-0" is -0.0, as strtod() reads it */
	} else {
		char buf[64], *e;

		memcpy(buf, s, (size_t)(n.end - s));
		buf[n.end - s] = '\0';
		d = strtod(buf, &e);
		if (e != buf + (n.end - s))
			return false;
	}
	it->type = cJSON_Number;
	it->valuedouble = d;
	it->valueint = d >= INT_MAX ? INT_MAX : d <= (double)INT_MIN ? INT_MIN : (int)d;
	j->p = n.end;
	return true;
}

/* The members of an array or object (its opening byte at j->p) under it. */
static bool members(struct jp *j, cJSON *it, bool object)
{
	unsigned char close = object ? '}' : ']';
	cJSON *head = NULL, *last = NULL;
	bool ok = false;

	if (j->depth >= CJSON_NESTING_LIMIT)
		return false;
	j->depth++;
	j->p++;
	skip_ws(j);
	it->type = object ? cJSON_Object : cJSON_Array;
	if (j->p < j->end && *j->p == close) {
		j->p++;
		j->depth--;
		return true;
	}
	for (;;) {
		cJSON *m = new_item();

		/* linked at once, so that a failure's cJSON_Delete() finds it */
		if (!head) {
			head = m;
			it->child = m;
		} else {
			last->next = m;
			m->prev = last;
		}
		last = m;
		head->prev = last;
		if (object) {
			j->members++;
			if (j->p >= j->end || *j->p != '"' || !string(j, &m->string))
				break;
			skip_ws(j);
			if (j->p >= j->end || *j->p != ':')
				break;
			j->p++;
			skip_ws(j);
		}
		if (!value(j, m))
			break;
		skip_ws(j);
		if (j->p < j->end && *j->p == ',') {
			j->p++;
			skip_ws(j);
			continue;
		}
		if (j->p < j->end && *j->p == close) {
			j->p++;
			ok = true;
		}
		break;
	}
	j->depth--;
	return ok;
}

/* null, true or false (true's valueint is 1, as cJSON sets it). */
static bool literal(struct jp *j, cJSON *it, const char *word, int type)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return false;
	it->type = type;
	it->valueint = type == cJSON_True;
	j->p += n;
	return true;
}

static bool value(struct jp *j, cJSON *it)
{
	if (j->p >= j->end)
		return false;
	switch (*j->p) {
	case '"':
		if (!string(j, &it->valuestring))
			return false;
		it->type = cJSON_String;
		return true;
	case '{':
		return members(j, it, true);
	case '[':
		return members(j, it, false);
	case 'n':
		return literal(j, it, "null", cJSON_NULL);
	case 't':
		return literal(j, it, "true", cJSON_True);
	case 'f':
		return literal(j, it, "false", cJSON_False);
	default:
		return (*j->p == '-' || is_digit(*j->p)) && number(j, it);
	}
}

/* tfd_json_parse_strict(), and the members its objects hold. */
static cJSON *parse_strict(const char *s, size_t len, const char **end, size_t *members)
{
	struct jp j = {(const unsigned char *)s, (const unsigned char *)s + len, 0, 0};
	cJSON *root;

	if (!s || !len)
		return NULL;
	skip_ws(&j);
	/* (a byte-order mark is cJSON's to skip: it needs five bytes) */
	if (j.p < j.end && *j.p == 0xEF)
		return NULL;
	root = new_item();
	if (!value(&j, root)) {
		cJSON_Delete(root);
		return NULL;
	}
	if (end)
		*end = (const char *)j.p;
	*members = j.members;
	return root;
}

cJSON *tfd_json_parse_strict(const char *s, size_t len, const char **end)
{
	size_t members;

	return parse_strict(s, len, end, &members);
}

cJSON *tfd_json_parse_counted(const char *s, size_t len, const char **end, size_t *members)
{
	cJSON *root = parse_strict(s, len, end, members);

	if (root)
		return root;
	*members = SIZE_MAX;
	return cJSON_ParseWithLengthOpts(s, len, end, 0);
}

cJSON *tfd_json_parse(const char *s, size_t len, const char **end)
{
	size_t members;

	return tfd_json_parse_counted(s, len, end, &members);
}

/* Whether trees a and b are the same: types, numbers to the bit, strings,
 * keys, and the links (a first child's prev is the last child). */
bool tfd_json_same(const cJSON *a, const cJSON *b)
{
	if (!a || !b)
		return a == b;
	if (a->type != b->type || a->valueint != b->valueint ||
	    memcmp(&a->valuedouble, &b->valuedouble, sizeof(double)) != 0)
		return false;
	if ((a->valuestring == NULL) != (b->valuestring == NULL) ||
	    (a->valuestring && strcmp(a->valuestring, b->valuestring) != 0))
		return false;
	if ((a->string == NULL) != (b->string == NULL) ||
	    (a->string && strcmp(a->string, b->string) != 0))
		return false;
	if ((a->child == NULL) != (b->child == NULL))
		return false;
	if (a->child) {
		const cJSON *x = a->child, *y = b->child, *lx = NULL, *ly = NULL;

		for (; x && y; x = x->next, y = y->next) {
			if (!tfd_json_same(x, y))
				return false;
			if (lx && (x->prev != lx || y->prev != ly))
				return false;
			lx = x;
			ly = y;
		}
		if (x || y || a->child->prev != lx || b->child->prev != ly)
			return false;
	}
	return true;
}
