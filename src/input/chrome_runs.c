/* chrome_runs.c - the runs a Chrome trace's host events note for its
 * steps: a tf.function's (FunctionRun), a session's (SessionRun:
 * TensorFlow 1, graph mode) and a GetNext op's, with the iterator it read
 * (the first iterator call inside it on its thread; a thread's events
 * come in time order).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "chrome_impl.h"
#include "tfd/capture.h"

bool tfd_chrome_arg_id(const struct jev *e, uint64_t *id)
{
	*id = 0;
	for (size_t i = 0; i < e->args.n; i++)
		if (strcmp(tfd_jev_str(e, e->args.v[i].key), "id") == 0) {
			const char *v = tfd_jev_str(e, e->args.v[i].val);
			char *end;

			*id = *v == '-' ? (uint64_t)strtoll(v, &end, 10) : strtoull(v, &end, 10);
			return true;
		}
	return false;
}

void tfd_chrome_note_run(struct parse *p, struct tfd_host *h, const char *nm, int64_t tid,
			 int64_t start, int64_t end, bool has_group, int64_t group)
{
	uint64_t id;
	bool has_id;

	/* most events are none of them: their first byte says so */
	if (nm[0] == 'F' && strcmp(nm, "FunctionRun") == 0) {
		tfd_chrome_arg_id(&p->ev, &id);
		tfd_host_fnrun(h, tid, id, start, has_group, group);
	} else if (nm[0] == 'S' && strcmp(nm, "SessionRun") == 0) {
		has_id = tfd_chrome_arg_id(&p->ev, &id);
		tfd_host_session_run(h, tid, start, end, has_group, group, has_id, id);
	} else if (nm[0] == 'I' && tfd_get_next_run_name(nm) && tfd_chrome_arg_id(&p->ev, &id)) {
		tfd_host_get_next_open(h, &p->gn, tid, id, end);
	}
}
