/* jsonprint.c - cJSON's tree written as cJSON_PrintUnformatted() writes it,
 * faster (include/tfd/jsonmem.h): straight into a tfd_buf, each number
 * checked with strtod() rather than sscanf(). A fleet's JSON report spent
 * a third of its time in cJSON's printer.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tfd/buf.h"
#include "tfd/jsonmem.h"

/* A string in quotes, escaped as cJSON escapes it: the quote, the
 * backslash and \b \f \n \r \t by name, other bytes below 32 as \u00xx,
 * every other byte as it is; NULL as "". */
static void string(struct tfd_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t plain = 0;

	/* most strings need no escape: copied at once */
	while (p[plain] >= 32 && p[plain] != '"' && p[plain] != '\\')
		plain++;
	if (p[plain] == '\0') {
		tfd_buf_add(b, "\"", 1);
		tfd_buf_add(b, (const char *)p, plain);
		tfd_buf_add(b, "\"", 1);
		return;
	}
	tfd_buf_add(b, "\"", 1);
	for (; *p; p++) {
		char esc[8];
		const char *name = NULL;

		switch (*p) {
		case '"':
			name = "\\\"";
			break;
		case '\\':
			name = "\\\\";
			break;
		case '\b':
			name = "\\b";
			break;
		case '\f':
			name = "\\f";
			break;
		case '\n':
			name = "\\n";
			break;
		case '\r':
			name = "\\r";
			break;
		case '\t':
			name = "\\t";
			break;
		default:
			if (*p < 32) {
				snprintf(esc, sizeof(esc), "\\u%04x", *p);
				name = esc;
			}
		}
		if (name)
			tfd_buf_add(b, name, strlen(name));
		else
			tfd_buf_add(b, (const char *)p, 1);
	}
	tfd_buf_add(b, "\"", 1);
}

/* A number as cJSON prints it: "null" for NaN and the infinities, else
 * with 15 significant digits when they read back within DBL_EPSILON of it,
 * else with 17. */
static void number(struct tfd_buf *b, double d)
{
	char buf[32];
	double back, most;
	int n;

	if (isnan(d) || isinf(d)) {
		tfd_buf_add(b, "null", 4);
		return;
	}
	n = snprintf(buf, sizeof(buf), "%1.15g", d);
	back = strtod(buf, NULL);
	most = fabs(back) > fabs(d) ? fabs(back) : fabs(d);
	if (!(fabs(back - d) <= most * DBL_EPSILON))
		n = snprintf(buf, sizeof(buf), "%1.17g", d);
	tfd_buf_add(b, buf, (size_t)n);
}

static bool value(struct tfd_buf *b, const cJSON *it, int depth, bool pretty);

/* An array's or object's members, compact or laid out as
 * tfd_buf_json_pretty() lays out the compact text (an empty one stays
 * "{}" or "[]"). */
static bool members(struct tfd_buf *b, const cJSON *it, int depth, bool pretty)
{
	bool obj = (it->type & 0xFF) == cJSON_Object;

	tfd_buf_add(b, obj ? "{" : "[", 1);
	if (pretty && it->child)
		tfd_buf_indent(b, "\n", 1, depth + 1);
	for (const cJSON *c = it->child; c; c = c->next) {
		if (obj) {
			string(b, c->string);
			tfd_buf_add(b, pretty ? ": " : ":", pretty ? 2 : 1);
		}
		if (!value(b, c, depth + 1, pretty))
			return false;
		if (c->next && pretty)
			tfd_buf_indent(b, ",\n", 2, depth + 1);
		else if (c->next)
			tfd_buf_add(b, ",", 1);
	}
	if (pretty && it->child)
		tfd_buf_indent(b, "\n", 1, depth);
	tfd_buf_add(b, obj ? "}" : "]", 1);
	return true;
}

static bool value(struct tfd_buf *b, const cJSON *it, int depth, bool pretty)
{
	if (depth > CJSON_NESTING_LIMIT)
		return false;
	switch (it->type & 0xFF) {
	case cJSON_NULL:
		tfd_buf_add(b, "null", 4);
		return true;
	case cJSON_False:
		tfd_buf_add(b, "false", 5);
		return true;
	case cJSON_True:
		tfd_buf_add(b, "true", 4);
		return true;
	case cJSON_Number:
		number(b, it->valuedouble);
		return true;
	case cJSON_Raw:
		if (!it->valuestring)
			return false;
		if (pretty) { /* its text laid out as if it were compact JSON */
			struct tfd_json_pp st = {depth, 0};

			tfd_json_pretty_feed(&st, b, it->valuestring);
		} else {
			tfd_buf_add(b, it->valuestring, strlen(it->valuestring));
		}
		return true;
	case cJSON_String:
		string(b, it->valuestring);
		return true;
	case cJSON_Array:
	case cJSON_Object:
		return members(b, it, depth, pretty);
	default:
		return false;
	}
}

bool tfd_json_print(struct tfd_buf *b, const cJSON *item)
{
	size_t before = b->len;

	if (item && value(b, item, 0, false))
		return true;
	b->len = before; /* (cJSON prints nothing of such a tree) */
	if (b->s)
		b->s[before] = '\0';
	return false;
}

void tfd_json_pretty_at(struct tfd_buf *b, const cJSON *item, int depth)
{
	if (!item || !value(b, item, depth, true))
		abort();
}

void tfd_json_pretty_tree(struct tfd_buf *b, const cJSON *item)
{
	if (!item || !value(b, item, 0, true))
		abort();
	tfd_buf_add(b, "\n", 1);
}
