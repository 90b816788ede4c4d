/* test_json.c - the JSON reader of src/base/jsonparse.c against cJSON's:
 * where it reads a text, the same tree node for node; where it gives up,
 * cJSON's answer. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "t.h"
#include "tfd/jsonmem.h"

/* Whether tfd_json_print() writes tree as cJSON_PrintUnformatted() does
 * (a tree it does not print: neither prints it). */
static bool same_print(const cJSON *tree)
{
	char *want = cJSON_PrintUnformatted(tree);
	struct tfd_buf got;
	bool printed, same;

	tfd_buf_init(&got);
	printed = tfd_json_print(&got, tree);
	same = want ? printed && strcmp(got.s, want) == 0 : !printed;
	if (!same)
		fprintf(stderr, "printed [%s], cJSON [%s]\n", got.s ? got.s : "", want ? want : "");
	if (same && want) { /* and laid out as its compact text would be */
		struct tfd_buf laid, direct;

		tfd_buf_init(&laid);
		tfd_buf_init(&direct);
		tfd_buf_json_pretty(&laid, want);
		tfd_json_pretty_tree(&direct, tree);
		same = strcmp(laid.s, direct.s) == 0;
		if (!same)
			fprintf(stderr, "laid out [%s], from the text [%s]\n", direct.s, laid.s);
		tfd_buf_release(&laid);
		tfd_buf_release(&direct);
	}
	cJSON_free(want);
	tfd_buf_release(&got);
	return same;
}

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
	ok = ok && (!b || same_print(b));
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

/* Numbers and strings printed as cJSON prints them: doubles of every
 * size (15 digits, or 17 where 15 do not read back), NaN and the
 * infinities as null, control bytes as \u00xx, other bytes as they are;
 * and the trees it does not print. */
static void json_print_as_cjson(struct t *t)
{
	uint64_t s = 0x2545f4914f6cdd1dull;
	cJSON *arr = cJSON_CreateArray(), *bad;
	char str[40];
	const double fixed[] = {0.0,	   -0.0,
				0.1,	   1.0 / 3,
				1e15,	   123456789012345678.0,
				5e-324,	   1.7976931348623157e308,
				NAN,	   INFINITY,
				-INFINITY, 2147483648.0};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(fixed[i]));
	for (int i = 0; i < 20000; i++) {
		uint64_t bits = rnd(&s);
		double d;

		memcpy(&d, &bits, sizeof(d));
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(d));
		cJSON_AddItemToArray(arr, cJSON_CreateNumber((double)(int64_t)rnd(&s) / 1e6));
	}
	for (int i = 0; i < 2000; i++) {
		cJSON *o;

		for (size_t k = 0; k < sizeof(str) - 1; k++)
			str[k] = (char)(1 + rnd(&s) % 255);
		str[rnd(&s) % sizeof(str)] = '\0';
		str[sizeof(str) - 1] = '\0';
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, str, cJSON_CreateString(str));
		cJSON_AddItemToArray(arr, o);
	}
	cJSON_AddItemToArray(arr, cJSON_CreateRaw("12"));
	cJSON_AddItemToArray(arr, cJSON_CreateRaw("{\"a\":[1,{}],\"b\":\"x,y\"}"));
	cJSON_AddItemToArray(arr, cJSON_CreateObject());
	cJSON_AddItemToArray(arr, cJSON_CreateArray());
	T_TRUE(same_print(arr));
	/* raw text of NULL: cJSON prints nothing of the tree, nor does it */
	bad = cJSON_CreateRaw("1");
	cJSON_free(bad->valuestring);
	bad->valuestring = NULL;
	cJSON_AddItemToArray(arr, bad);
	T_TRUE(same_print(arr));
	cJSON_Delete(arr);
}

/* A pipeline-like object: strings that need escapes, numbers as the
 * reports make them, empty and nested arrays and objects. */
static cJSON *part_obj(int k)
{
	cJSON *o = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(o, "stages");

	cJSON_AddStringToObject(o, "name", k % 2 ? "Iterator::Model::Map \"x\"\n" : "b,c:{}");
	tfd_json_add_num(o, "calls", (double)k * 1000.5);
	cJSON_AddNullToObject(o, "bottleneck");
	cJSON_AddArrayToObject(o, "critical_path");
	cJSON_AddObjectToObject(o, "capacity");
	for (int i = 0; i < k % 3 + 1; i++) {
		cJSON *st = cJSON_CreateObject();

		tfd_json_add_num(st, "index", i);
		cJSON_AddBoolToObject(st, "parallel", i % 2);
		cJSON_AddItemToArray(a, st);
	}
	return o;
}

/* The document: {"run", "hosts": [{"name", "pipelines": [...]}, ...],
 * "notes": []}, each host and pipeline made as a part of its own (parts)
 * or as nodes; outer: the document in an arena of its own, else node by
 * node. Its text, compact (pretty false) or laid out, into out. */
static void parts_doc(bool parts, bool outer, bool pretty, struct tfd_buf *out)
{
	struct tfd_json_tree doc, t, u;
	struct tfd_buf text;
	cJSON *root, *hosts;

	tfd_buf_init(&text);
	if (outer)
		tfd_json_tree_begin(&doc);
	root = cJSON_CreateObject();
	cJSON_AddStringToObject(root, "run", "r");
	hosts = cJSON_AddArrayToObject(root, "hosts");
	for (int h = 0; h < 3; h++) {
		cJSON *ho, *ps;

		if (parts)
			tfd_json_part_begin(&t);
		ho = cJSON_CreateObject();
		cJSON_AddStringToObject(ho, "name", "host");
		ps = cJSON_AddArrayToObject(ho, "pipelines");
		for (int p = 0; p < h * 2; p++) { /* (host 0: none) */
			if (parts) {
				tfd_json_part_begin(&u);
				cJSON_AddItemToArray(ps,
						     tfd_json_part_end(&u, part_obj(p), &t, &text));
			} else {
				cJSON_AddItemToArray(ps, part_obj(p));
			}
		}
		/* (made after the parts: in the host's arena again) */
		tfd_json_add_num(ho, "rank", h);
		cJSON_AddItemToArray(
		    hosts, parts ? tfd_json_part_end(&t, ho, outer ? &doc : NULL, &text) : ho);
	}
	cJSON_AddArrayToObject(root, "notes");
	if (outer)
		tfd_json_tree_end();
	if (pretty)
		tfd_json_pretty_tree(out, root);
	else if (!tfd_json_print(out, root))
		abort();
	if (outer) {
		doc.root = root;
		tfd_json_tree_free(&doc, false);
	} else {
		cJSON_Delete(root);
	}
	tfd_buf_release(&text);
}

/* A document whose hosts and pipelines are parts of their own (printed
 * and gone as they are made: the reports' hosts and pipelines) prints,
 * compact and laid out, the same bytes as the one made of nodes; the
 * nodes made after a part go to the tree that was being made. */
static void json_parts_print_as_nodes(struct t *t)
{
	for (int outer = 0; outer < 2; outer++)
		for (int pretty = 0; pretty < 2; pretty++) {
			struct tfd_buf want, got;

			tfd_buf_init(&want);
			tfd_buf_init(&got);
			parts_doc(false, outer, pretty, &want);
			parts_doc(true, outer, pretty, &got);
			if (strcmp(want.s, got.s) != 0)
				T_FAILF("outer %d pretty %d: [%s] against [%s]", outer, pretty,
					got.s, want.s);
			tfd_buf_release(&want);
			tfd_buf_release(&got);
		}
	{
		/* a node made after a part is the document's arena's */
		struct tfd_json_tree doc, u;
		struct tfd_buf text;
		size_t before;

		tfd_buf_init(&text);
		tfd_json_tree_begin(&doc);
		doc.root = cJSON_CreateArray();
		tfd_json_part_begin(&u);
		cJSON_AddItemToArray(doc.root, tfd_json_part_end(&u, part_obj(1), &doc, &text));
		before = doc.arena.bytes;
		cJSON_AddItemToArray(doc.root, cJSON_CreateObject());
		tfd_json_tree_end();
		if (doc.in_arena)
			T_TRUE(doc.arena.bytes > before);
		tfd_json_tree_free(&doc, false);
		tfd_buf_release(&text);
	}
}

struct drained {
	struct tfd_buf got;
	size_t writes;
	bool fail;
};

static bool drained_write(void *ctx, const char *s, size_t len)
{
	struct drained *d = ctx;

	d->writes++;
	if (d->fail)
		return false;
	tfd_buf_add(&d->got, s, len);
	return true;
}

/* A buffer with a way out writes its text at the points its writer marks
 * (tfd_buf_drain()) once it holds a megabyte, and is left empty; the
 * text written and left is the whole text, in order; after a failed
 * write, nothing more is written. */
static void buf_drain_writes_a_megabyte(struct t *t)
{
	struct drained d = {{0}, 0, false};
	struct tfd_buf_out out = {drained_write, &d, false};
	struct tfd_buf b, whole;
	char piece[1000];

	tfd_buf_init(&b);
	tfd_buf_init(&whole);
	tfd_buf_init(&d.got);
	b.out = &out;
	for (int i = 0; i < 3000; i++) {
		for (size_t k = 0; k < sizeof(piece) - 1; k++)
			piece[k] = (char)('a' + (i + (int)k) % 26);
		piece[sizeof(piece) - 1] = '\0';
		tfd_buf_puts(&b, piece);
		tfd_buf_puts(&whole, piece);
		tfd_buf_drain(&b);
		if (i == 1000) /* (999,999 bytes: held) */
			T_EQ_U64(d.writes, 0);
	}
	T_EQ_U64(d.writes, 2);
	T_TRUE(b.len < ((size_t)1 << 20));
	tfd_buf_add(&d.got, b.s, b.len);
	T_TRUE(d.got.len == whole.len && memcmp(d.got.s, whole.s, whole.len) == 0);
	/* a write that fails: the text goes nowhere after it */
	d.fail = true;
	d.writes = 0;
	for (int i = 0; i < 3000; i++) {
		tfd_buf_puts(&b, piece);
		tfd_buf_drain(&b);
	}
	T_TRUE(out.failed);
	T_EQ_U64(d.writes, 1);
	tfd_buf_release(&b);
	tfd_buf_release(&whole);
	tfd_buf_release(&d.got);
}

const struct t_case json_cases[] = {
    T(json_strict_as_cjson),
    T(json_lax_by_cjson),
    T(json_random_as_cjson),
    T(json_print_as_cjson),
    T(json_parts_print_as_nodes),
    T(buf_drain_writes_a_megabyte),
    {0},
};
