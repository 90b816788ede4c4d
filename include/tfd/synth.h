/* synth.h - realistic captures from a pipeline description.
 *
 * A discrete-event simulation of a tf.data pipeline: sync stages run their
 * input on the caller's thread; async stages (Prefetch, ParallelMap,
 * ParallelInterleave, MapAndBatch) have worker threads that fill a bounded
 * buffer ahead of the consumer, with Produce/Consume events carrying
 * element ids, as TensorFlow's host tracer records them. Each training step
 * calls IteratorGetNextOp::DoCompute on the get-next thread (the root
 * iterator call nests inside) and then computes for step_compute_us. Output:
 * one *.xplane.pb per host (and/or *.trace.json) under the output
 * directory's plugins/profile/<run>/.
 *
 * The spec is JSON (docs/cli.md, "synth"); errors name the spec file and field.
 */
#ifndef TFD_SYNTH_H
#define TFD_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "tfd/err.h"

/* The most host events one synth run may make (about 4 GB of memory while
 * it simulates): a spec or --scale asking for more is an error. */
#define TFD_SYNTH_MAX_EVENTS 64000000

struct tfd_synth_result {
	size_t hosts;
	uint64_t events;      /* host events written per host, summed */
	uint64_t bytes;	      /* bytes written */
	char run_dir[4096];   /* PATH_MAX: a longer one is an error, never cut */
	char expect[128];     /* the spec's "expect" (planted bottleneck), or "" */
	char expect_host[64]; /* the spec's "expect_host", or "" */
};

/* Parse and check the spec text (name names it in errors) as
 * tfd_synth_run() does, writing nothing: TFD_OK, or the same error. */
enum tfd_status tfd_synth_check(const char *text, size_t len, const char *name, double scale,
				struct tfd_err *err);

/* scale multiplies the spec's steps (for benchmarks); 1.0 keeps them. */
enum tfd_status tfd_synth_run(const char *spec_path, const char *out_dir, double scale,
			      struct tfd_synth_result *res, struct tfd_err *err);

#endif
