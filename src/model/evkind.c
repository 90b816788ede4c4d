/* evkind.c - what kind of event a name is (enum tfd_ev_kind): the
 * iterators, their hand-offs, the loop's waits and the dataset functions
 * the passes read; every other event is TFD_EV_OTHER. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "tfd/capture.h"
#include "tfd/families.h"

/* Whether eager op type t makes or ends the loop's input: a dataset
 * (TakeDataset, BatchDatasetV2: ds.take(1) in the loop) or an iterator
 * (AnonymousIteratorV3, MakeIterator, whose dataset is optimized before
 * its MakeIterator::Root..., DeleteIterator). */
static bool builds_input(const char *t)
{
	size_t len = strlen(t), n = len;

	/* less a version suffix: BatchDatasetV2 */
	while (n && isdigit((unsigned char)t[n - 1]))
		n--;
	if (n < len && n >= 2 && t[n - 1] == 'V')
		n--;
	return strcmp(t, "MakeIterator") == 0 || strcmp(t, "DeleteIterator") == 0 ||
	       strncmp(t, "AnonymousIterator", 17) == 0 ||
	       (n > 7 && strncmp(t + n - 7, "Dataset", 7) == 0);
}

enum tfd_ev_kind tfd_event_kind_of(const char *name)
{
	if (strncmp(name, "Iterator", 8) == 0 &&
	    (name[8] == '\0' || strncmp(name + 8, "::", 2) == 0))
		return TFD_EV_ITERATOR;
	/* a dataset's loop inside a tf.function: its input's iterators, and
	 * its root for the options it carries */
	if (name[0] == 'R' && (tfd_loop_input_name(name) || tfd_loop_root_name(name)))
		return TFD_EV_ITERATOR;
	{
		size_t n = strlen(name);

		/* PrefetchProduce, ParallelMapConsume, ...: the families table */
		if (n > 7 && strcmp(name + n - 7, "Produce") == 0 &&
		    tfd_family_of_produce(name, NULL))
			return TFD_EV_PRODUCE;
		if (n > 7 && strcmp(name + n - 7, "Consume") == 0 &&
		    tfd_family_of_consume(name, NULL))
			return TFD_EV_CONSUME;
	}
	/* XProf: a name starting with IteratorGetNext (any case) waits for input. */
	if (strncasecmp(name, "IteratorGetNext", 15) == 0)
		return TFD_EV_GETNEXT;
	/* a dataset function and the executor chunks that run its ops: the map
	 * work that iterator events do not show (throughput-model.md 4) */
	if (strncmp(name, "InstantiatedCapturedFunction::", 30) == 0)
		return TFD_EV_FUNCTION;
	if (strcmp(name, "ExecutorState::Process") == 0)
		return TFD_EV_EXEC;
	if (strncmp(name, "MakeIterator::", 14) == 0 ||
	    strcmp(name, "TFE_Py_FastPathExecute_C") == 0 ||
	    (name[0] == 'E' && strncmp(name, "EagerLocalExecute: ", 19) == 0 &&
	     builds_input(name + 19)))
		return TFD_EV_LOOPOP;
	return TFD_EV_OTHER;
}
