/* fuzz_json.c - the JSON reader of src/base/jsonparse.c against cJSON's:
 * wherever it reads a text, cJSON reads the same tree and stops at the
 * same byte; and the printer of src/base/jsonprint.c writes what cJSON
 * reads as cJSON writes it, and lays it out as the layout of that text
 * would (it aborts otherwise). */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "tfd/jsonmem.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *s = (const char *)data, *e1 = NULL, *e2 = NULL;
	cJSON *a = tfd_json_parse_strict(s, size, &e1);
	cJSON *b = cJSON_ParseWithLengthOpts(s, size, &e2, 0);

	if (a && (!b || !tfd_json_same(a, b) || e1 != e2))
		abort();
	if (b) {
		char *want = cJSON_PrintUnformatted(b);
		struct tfd_buf got;

		tfd_buf_init(&got);
		if (tfd_json_print(&got, b) != (want != NULL) || (want && strcmp(got.s, want) != 0))
			abort();
		if (want) { /* laid out at once as its text would be */
			struct tfd_buf laid, direct;

			tfd_buf_init(&laid);
			tfd_buf_init(&direct);
			tfd_buf_json_pretty(&laid, want);
			tfd_json_pretty_tree(&direct, b);
			if (strcmp(laid.s, direct.s) != 0)
				abort();
			tfd_buf_release(&laid);
			tfd_buf_release(&direct);
		}
		tfd_buf_release(&got);
		cJSON_free(want);
	}
	cJSON_Delete(a);
	cJSON_Delete(b);
	return 0;
}
