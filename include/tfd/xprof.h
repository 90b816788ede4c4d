/* xprof.h - TensorFlow's own tf_data_bottleneck_analysis semantics
 * (xprof-reference.md section 1), reproduced for `--mode xprof` and the
 * peer test suite. Differences from upstream, all deliberate:
 *  - uint64 ids keep their bit pattern (upstream reads them as 0);
 *  - roots are numbered Host:N/Device:N by first call (then id), root calls
 *    with equal duration keep time order, bottleneck ties go to the smaller
 *    id, and rows with equal max latency keep host order: upstream leaves all
 *    of these to hash-map order;
 *  - a bottleneck id without metadata gives empty names (upstream aborts).
 * Times are picoseconds, as in the upstream protos.
 *
 * Ownership: the result borrows names from the capture; free it with
 * tfd_xprof_free().
 */
#ifndef TFD_XPROF_H
#define TFD_XPROF_H

#include <stdbool.h>
#include <stdint.h>

#include "tfd/buf.h"
#include "tfd/capture.h"
#include "tfd/err.h"

struct tfd_xp_iter_stat {
	int64_t id, start_time_ps, duration_ps, self_time_ps, num_calls;
	bool is_blocking;
};

struct tfd_xp_call {			/* one InputPipelineStat: one root call */
	struct tfd_xp_iter_stat *iters; /* sorted by id */
	size_t niters;
	int64_t bottleneck_iterator_id, bottleneck_iterator_latency_ps;
};

struct tfd_xp_pipeline {
	int64_t id;
	bool is_device;
	char name[24];
	struct tfd_xp_call *stats; /* by root duration, descending */
	size_t nstats;
	int64_t avg_latency_ps, min_latency_ps, max_latency_ps, num_slow_calls;
};

struct tfd_xp_meta {
	int64_t id, parent_id;
	const char *name, *long_name;
	bool is_async;
};

struct tfd_xp_host {
	const char *host;
	struct tfd_xp_meta *metas; /* sorted by id */
	size_t nmetas;
	struct tfd_xp_pipeline *pipelines;
	size_t npipelines;
};

struct tfd_xp_row {
	const char *host, *input_pipeline, *iterator_name, *iterator_long_name, *suggestion;
	int64_t max_latency_ps, iterator_latency_ps;
};

struct tfd_xprof {
	struct tfd_xp_host *hosts;
	size_t nhosts;
	struct tfd_xp_row *rows;
	size_t nrows;
	bool is_input_bound;
	const char *summary;
};

enum tfd_xp_type {
	TFD_XP_SLOW_SOURCE,
	TFD_XP_SLOW_DATA_SERVICE,
	TFD_XP_SLOW_REMOTE_SOURCE,
	TFD_XP_SLOW_TRANSFORMATION_WITH_PARALLEL_VERSION,
	TFD_XP_SLOW_TRANSFORMATION_WITHOUT_PARALLEL_VERSION,
	TFD_XP_OTHER,
};

/* TensorFlow's removed tf_data_bottleneck_analysis on cap (--mode xprof).
 * *out is new (free with tfd_xprof_free) and borrows names from cap.
 * TFD_E_LIMIT when a hostile capture would make the DAG walk explode. */
enum tfd_status tfd_xprof_run(const struct tfd_capture *cap, struct tfd_xprof **out,
			      struct tfd_err *err);
/* Free an xprof result; NULL is allowed. */
void tfd_xprof_free(struct tfd_xprof *x);
/* XProf's verdict on the capture: input-bound or not (its summary). */
bool tfd_xprof_is_input_bound(const struct tfd_xprof *x);
/* The iterator metadata of host h with this id (binary search), or NULL. */
const struct tfd_xp_meta *tfd_xprof_find_meta(const struct tfd_xp_host *h, int64_t id);
/* The exact-name type table and the suggestion for a type. */
enum tfd_xp_type tfd_xprof_type(const char *iterator_name);
const char *tfd_xprof_suggestion(enum tfd_xp_type t);
/* The result as CombinedTfDataStats-shaped JSON, or as text, into out. */
void tfd_xprof_json(const struct tfd_xprof *x, struct tfd_buf *out);
void tfd_xprof_text(const struct tfd_xprof *x, struct tfd_buf *out);
/* The three Google-Visualization DataTables (graph, summary, bottleneck)
 * that TensorBoard's removed converter produced, as one compact JSON array. */
void tfd_xprof_gviz(const struct tfd_xprof *x, struct tfd_buf *out);

#define TFD_XP_SUMMARY_SLOW                                                                        \
	"Your profile has a tf.data input pipeline slower than 50 us. For each slow input "        \
	"pipeline, below shows a bottleneck in the input pipeline and a suggestion on how to "     \
	"fix it."
#define TFD_XP_SUMMARY_FAST                                                                        \
	"Your profile does not have any tf.data input pipeline slower than 50 us. Your job "       \
	"could be still input bound if this profile didn't capture all workers."
#define TFD_XP_SUMMARY_NONE                                                                        \
	"No tf.data activity captured in your profile. If your job uses tf.data, try to capture "  \
	"a longer profile."

#endif
