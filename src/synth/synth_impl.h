/* synth_impl.h - what the simulator (synth.c) and its spec reader
 * (synth_spec.c) share: the stage kinds and a parsed spec. src/synth only. */
#ifndef TFD_SYNTH_IMPL_H
#define TFD_SYNTH_IMPL_H

#include <stdint.h>

#include <stdbool.h>
#include <stdio.h>

#include "tfd/buf.h"
#include "tfd/err.h"
#include "tfd/vec.h"

/* How a parallel map's function shows in the capture. */
enum fn_style {
	FN_EXECUTOR, /* TensorFlow: RunAsync on the runner, ExecutorState::Process
		      * chunks with the same step id on pool threads */
	FN_RUN,	     /* InstantiatedCapturedFunction::Run on the worker */
	FN_NONE,     /* not captured (a lower profiler level) */
};

enum kind {
	K_SOURCE,
	K_MAP,
	K_BATCH,
	K_FILTER,
	K_SHUFFLE,
	K_PASS,
	K_PREFETCH,
	K_PMAP,
	K_PINTERLEAVE,
	K_MAPBATCH,
};

struct kind_def {
	const char *kind, *tfname;
	enum kind k;
	const char *thread; /* its workers' thread name; NULL: synchronous */
};

/* The stage kinds a spec names, sources first. */
extern const struct kind_def tfd_synth_kinds[];
extern const size_t tfd_synth_nkinds;

/* One op of a map's function: its events are "name:type", nested in the
 * function's events; share is its part of the function's work. A Python
 * op (EagerPyFunc, PyFunc, PyFuncStateless) holds the host's one GIL: its
 * event spans its wait for it, as TensorFlow shows it. */
struct op_spec {
	char name[96], type[48];
	double share;
	int py;
};

#define SYNTH_MAX_OPS 8

#define SYNTH_MAX_RAMP 8
struct stage_spec {
	const struct kind_def *def;
	struct op_spec ops[SYNTH_MAX_OPS];
	int nops;
	double cost_us, jitter, first_us;
	int par, buffer, batch, keep_every, shuf_buf, deterministic, autotune;
	/* "ramp": [[element, workers], ...]: AUTOTUNE raising a parallel
	 * map's workers as it goes (from element ramp_at[i] on, ramp_par[i]
	 * workers; the calls' parallelism stat says so); none: par from the
	 * start */
	int nramp;
	int ramp_at[SYNTH_MAX_RAMP], ramp_par[SYNTH_MAX_RAMP];
};

/* A device event: a copy to the device, a kernel or a derived step marker. */
enum dkind { D_H2D, D_KERNEL, D_STEP };
struct dspan {
	int64_t s, e;
	int64_t group; /* -1: none */
	uint64_t bytes;
	uint8_t kind;
};
typedef VEC(struct dspan) dspan_vec;

/* "device": a GPU plane with copies of each step's input to the device
 * (after the host has its batch, before the step computes) and kernels. */
struct device_spec {
	bool on;
	double h2d_us;	  /* copy time per step, split into copies */
	int copies;	  /* per step */
	double bytes;	  /* per step (memcpy_details) */
	double kernel_us; /* device compute per step, in kernels */
	int kernels;
	bool group_ids; /* device events carry the step's group_id */
};

struct spec {
	char name[128], expect[128], expect_host[64], root[32], run[64];
	struct device_spec dev;
	int hosts, steps, slow_host, large_ids, xplane, json, device_events, other_events;
	int fn_events;	   /* enum fn_style */
	bool dev_reversed; /* device lines written latest event first */
	double compute_us, slow_factor;
	uint64_t seed;
	struct stage_spec st[32];
	int nst;
};

/* A step's device work into dev (synth_device.c): its copies from `from`
 * (each copy's time scaled by jitter), then its kernels; returns when the
 * copies end (the step computes from then on). */
int64_t tfd_synth_device_step(dspan_vec *dev, const struct device_spec *d, double compute_us,
			      int step, int64_t from, double jitter);
/* dev's events in time order, as a profiler writes a line's. */
void tfd_synth_device_sort(dspan_vec *v);
/* The GPU plane of dev's events (an XPlane message's bytes); reversed:
 * each line's events latest first (legal protobuf, as a rewriting tool
 * may leave them). */
void tfd_synth_device_plane(struct tfd_buf *dev, const dspan_vec *v, bool reversed);
/* The same as a Chrome trace's device process: events after a comma each. */
void tfd_synth_json_device(FILE *f, const dspan_vec *v);
/* XSpace encoding (synth_pb.c): a varint, its length, a field's key, a
 * length-delimited field, an integer field, and a metadata map entry {id,
 * {id, name}}. */
void tfd_synth_pb_varint(struct tfd_buf *b, uint64_t v);
size_t tfd_synth_varint_len(uint64_t v);
void tfd_synth_pb_key(struct tfd_buf *b, unsigned field, unsigned wt);
void tfd_synth_pb_bytes(struct tfd_buf *b, unsigned field, const void *p, size_t n);
void tfd_synth_pb_int(struct tfd_buf *b, unsigned field, int64_t v);
void tfd_synth_pb_metadata(struct tfd_buf *head, uint32_t field, int64_t id, const char *name);

/* Read the spec at path into sp: strict (unknown keys, wrong types, values
 * out of range and strings longer than their field are errors naming the
 * field); a FIFO or device is refused, never waited on. */
enum tfd_status tfd_synth_parse_spec(const char *path, struct spec *sp, struct tfd_err *err);
/* The same from text already read (path names it in errors). */
enum tfd_status tfd_synth_parse_spec_text(const char *text, size_t len, const char *path,
					  struct spec *sp, struct tfd_err *err);

#endif
