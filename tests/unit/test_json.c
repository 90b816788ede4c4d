/* test_json.c - the JSON reader of src/base/jsonparse.c against cJSON's:
 * where it reads a text, the same tree node for node; where it gives up,
 * cJSON's answer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "t.h"
#include "tfd/jsonmem.h"

/* The text s[0, len) read both ways; *strict whether the reader of its own
 * read it. Fails the test where the two differ. */
static void compare(struct t *t, const char *s, size_t len, bool *strict)
{
	const char *e1 = NULL, *e2 = NULL, *e3 = NULL;
	cJSON *a = tfd_json_parse_strict(s, len, &e1);
	cJSON *b = cJSON_ParseWithLengthOpts(s, len, &e2, 0);
	cJSON *c = tfd_json_parse(s, len, &e3);
	bool ok = a ? b && tfd_json_same(a, b) && e1 == e2 : true;

	ok = ok && (c ? b && tfd_json_same(c, b) : !b) && e3 == e2;
	if (!ok)
		fprintf(stderr, "json differs from cJSON's on [%.*s]\n",
			(int)(len > 200 ? 200 : len), s);
	*strict = a != NULL;
	cJSON_Delete(a);
	cJSON_Delete(b);
	cJSON_Delete(c);
	T_TRUE(ok);
}

/* Texts tfdoctor writes: read by the reader of its own, as cJSON reads
 * them. */
static void json_strict_as_cjson(struct t *t)
{
	static const char *const docs[] = {
	    "0",
	    "-0",
	    "-0.0",
	    "1",
	    "-1",
	    "123456789012345",
	    "1234567890123456",
	    "9007199254740993",
	    "18446744073709551616",
	    "2147483647",
	    "2147483648",
	    "-2147483648",
	    "-2147483649",
	    "0.1",
	    "0.30000000000000004",
	    "123.456",
	    "-2.25e-3",
	    "1e22",
	    "1e23",
	    "1E+5",
	    "4.9e-324",
	    "1.7976931348623157e308",
	    "1e400",
	    "0.000000000000000000001234",
	    "12345678901234567890.5",
	    "\"\"",
	    "\"plain\"",
	    "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"",
	    "\"\\u0041\\u00e9\\u20ac\\u0000x\"",
	    "\"raw \xc3\xa9 utf-8\"",
	    "null",
	    "true",
	    "false",
	    "[]",
	    "{}",
	    "[1,2,3]",
	    " [ 1 , \"x\" , null , true , false , { } , [ ] ] ",
	    "{\"a\":1,\"b\":{\"c\":[1,{\"d\":\"e\"}]},\"a\":2}",
	    "{\"\":0}",
	    "\n\t{\r\n\"k\" :\t[0.5, -7, 1e-7]\n}\n",
	    "{\"x\":1} trailing bytes",
	    "[[[[[[[[[[1]]]]]]]]]]",
	};

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		bool strict;

		compare(t, docs[i], strlen(docs[i]), &strict);
		if (!strict)
			fprintf(stderr, "the strict reader gave up on [%s]\n", docs[i]);
		T_TRUE(strict);
	}
}

/* Texts it leaves to cJSON (lax ones cJSON reads, and errors): the same
 * answers, errors at the same byte. */
static void json_lax_by_cjson(struct t *t)
{
	static const char *const docs[] = {
	    "01",	   "1.",
	    "-",	   "+1",
	    ".5",	   "1e",
	    "1.5.5",	   "12-3",
	    "0x10",	   "[1,]",
	    "[1 2]",	   "{\"a\" 1}",
	    "{a:1}",	   "{\"a\":1,}",
	    "[1,2",	   "{\"a\":",
	    "\"open",	   "\"bad \\q escape\"",
	    "\"\\uZZZZ\"", "\"\\ud83d\\ude00\"",
	    "\"\\ud83d\"", "\"\\udc00\"",
	    "\"\\u12\"",   "\xef\xbb\xbf[1]",
	    "\f[1]",	   "[\v1]",
	    "nul",	   "nullx",
	    "tru",	   "",
	    "   ",	   "1234567890123456789012345678901234567890123456789012345678901234567890",
	};

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		bool strict;

		compare(t, docs[i], strlen(docs[i]), &strict);
	}
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A random number of one of JSON's forms. */
static void rand_number(uint64_t *s, char *buf, size_t len)
{
	int form = (int)(rnd(s) % 6);
	uint64_t m = rnd(s) >> (rnd(s) % 64);
	int e = (int)(rnd(s) % 700) - 350;

	switch (form) {
	case 0:
		snprintf(buf, len, "%s%llu", rnd(s) & 1 ? "-" : "", (unsigned long long)m);
		break;
	case 1:
		snprintf(buf, len, "%llu.%llu", (unsigned long long)(m % 100000),
			 (unsigned long long)(rnd(s) >> (rnd(s) % 64)));
		break;
	case 2:
		snprintf(buf, len, "%.*g", 1 + (int)(rnd(s) % 17), (double)m * 1e-9);
		break;
	case 3:
		snprintf(buf, len, "%llue%d", (unsigned long long)(m % 1000000), e % 30);
		break;
	case 4:
		snprintf(buf, len, "-0.%llu", (unsigned long long)(m % 1000));
		break;
	default:
		snprintf(buf, len, "%.17g", (double)(int64_t)rnd(s) * 1e-300 * (double)(e + 351));
	}
}

/* Random documents of numbers, strings and containers, then each with a
 * byte changed: wherever the reader of its own reads one, cJSON reads the
 * same. */
static void json_random_as_cjson(struct t *t)
{
	uint64_t s = 0x9e3779b97f4a7c15ull;
	static const char *const strs[] = {"\"k\"", "\"\\n\\u00ff\"", "\"a\\\"b\"", "\"\\/\""};
	size_t nstrict = 0, n = 0;

	for (int doc = 0; doc < 3000; doc++) {
		char text[4096], num[64];
		size_t len = 0;
		int depth = 0;
		bool strict;

		text[len++] = '[';
		depth++;
		for (int k = 0; k < 40 && len < sizeof(text) - 200; k++) {
			switch (rnd(&s) % 5) {
			case 0:
				rand_number(&s, num, sizeof(num));
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%s,", num);
				break;
			case 1:
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%s,",
							strs[rnd(&s) % 4]);
				break;
			case 2:
				len += (size_t)snprintf(text + len, sizeof(text) - len,
							"{%s:", strs[rnd(&s) % 4]);
				rand_number(&s, num, sizeof(num));
				len +=
				    (size_t)snprintf(text + len, sizeof(text) - len, "%s},", num);
				break;
			case 3:
				text[len++] = '[';
				depth++;
				break;
			default:
				if (depth > 1) {
					if (text[len - 1] == ',')
						len--;
					len +=
					    (size_t)snprintf(text + len, sizeof(text) - len, "],");
					depth--;
				}
			}
		}
		if (text[len - 1] == ',')
			len--;
		while (depth-- > 0)
			text[len++] = ']';
		text[len] = '\0';
		compare(t, text, len, &strict);
		nstrict += strict;
		n++;
		/* a byte changed */
		text[rnd(&s) % len] = "0-.eE,:[]{}\" \\x"[rnd(&s) % 15];
		compare(t, text, len, &strict);
	}
	/* the reader of its own reads the documents as made, not only errors */
	T_TRUE(nstrict * 10 > n * 9);
}

const struct t_case json_cases[] = {
    T(json_strict_as_cjson),
    T(json_lax_by_cjson),
    T(json_random_as_cjson),
    {0},
};
