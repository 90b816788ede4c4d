/* fuzz_json.c - the JSON reader of src/base/jsonparse.c against cJSON's:
 * wherever it reads a text, cJSON reads the same tree and stops at the
 * same byte (it aborts otherwise). */
#include <stdlib.h>

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
	cJSON_Delete(a);
	cJSON_Delete(b);
	return 0;
}
