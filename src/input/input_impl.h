/* input_impl.h - internals shared by the capture readers and discovery (this
 * folder only). What readers call of the capture model is tfd/capbuild.h. */
#ifndef TFD_INPUT_IMPL_H
#define TFD_INPUT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/imap.h"
#include "wire.h"

/* The SIGBUS guard of mapped files (mapguard.c): register a mapping before
 * it is read (its slot, or -1 when every slot is taken: unguarded), and
 * unregister it before it is unmapped; either says whether the file shrank
 * while it was read (its pages past the end then read as zeros). */
int tfd_mapguard_add(const void *base, size_t len);
bool tfd_mapguard_remove(int slot);
bool tfd_mapguard_shrank(int slot);

/* Decode an XSpace protobuf into a new host of cap. Only the "/host:CPU"
 * plane is decoded; the others are listed. With mapped, data is a
 * read-only file mapping whose pages may be dropped once read. */
enum tfd_status tfd_xspace_read(struct tfd_capture *cap, const uint8_t *data, size_t len,
				const char *path, const char *default_host,
				const struct tfd_load_opts *opts, bool mapped, struct tfd_err *err);

/* The device planes of one XSpace host (device.c): each plane's bytes
 * (p[0..len), which must stay readable until finish) given as it is found,
 * then, once the host plane is read, reduced into h->dev (mapped: the
 * bytes are a file mapping, whose pages are dropped once read). On error (a
 * malformed plane, line or event) err names the plane and h->dev is not
 * to be trusted (the load fails). */
struct tfd_dev_reader;
struct tfd_dev_reader *tfd_dev_reader_new(bool mapped);
void tfd_dev_reader_free(struct tfd_dev_reader *r);
enum tfd_status tfd_dev_reader_plane(struct tfd_dev_reader *r, const uint8_t *p, size_t len,
				     const char *plane_name, size_t plane_index,
				     struct tfd_err *err);
enum tfd_status tfd_dev_reader_finish(struct tfd_dev_reader *r, struct tfd_capture *cap,
				      struct tfd_host *h, struct tfd_err *err);
/* The same, the sweep itself left running on another thread when the
 * lines are large and a second core may be used (tfd_load_cores(opts)):
 * then *rp is NULL (the reader is the job's), h->pending is set, and what
 * the lines point into must stay readable until it is settled: hand its
 * owner to the job with tfd_dev_job_own() (its release runs once the sweep
 * is done; an error it returns, a file that shrank, is the host's). */
enum tfd_status tfd_dev_reader_defer(struct tfd_dev_reader **rp, struct tfd_capture *cap,
				     struct tfd_host *h, const struct tfd_load_opts *opts,
				     struct tfd_err *err);
void tfd_dev_job_own(struct tfd_pending *pd, enum tfd_status (*release)(void *, struct tfd_err *),
		     void *arg);
/* Whether a plane or Chrome process name is a device whose events the
 * step breakdown reads: TFD_DEVPLANE_GPU for "/device:GPU:N",
 * TFD_DEVPLANE_TPU for "/device:TPU:N", else 0. */
enum { TFD_DEVPLANE_GPU = 1, TFD_DEVPLANE_TPU = 2 };
static inline int tfd_is_device_plane(const char *name)
{
	const char *d = strstr(name, "/device:");

	if (!d)
		return 0;
	return strncmp(d + 8, "GPU:", 4) == 0	? TFD_DEVPLANE_GPU
	       : strncmp(d + 8, "TPU:", 4) == 0 ? TFD_DEVPLANE_TPU
						: 0;
}

/* Decode a TF 2.0 "Trace" protobuf (local.trace) into a new host of cap. */
enum tfd_status tfd_trace_read(struct tfd_capture *cap, const uint8_t *data, size_t len,
			       const char *path, const char *default_host,
			       const struct tfd_load_opts *opts, struct tfd_err *err);

/* The step ids of dataset-function runs, collected before the executor
 * chunks are read: a chunk is kept only when its step id is one of them.
 * A set of bare keys (8 bytes a slot, half an imap's: a tf.data-heavy
 * host holds hundreds of thousands of them while its events are read); 0
 * marks an empty slot, so the id 0 is a flag of its own. A step's chunks
 * share one id and follow each other on a thread, so the last lookup is
 * remembered. */
#define FN_STEPS_LAG 16

struct fn_steps {
	uint64_t *k;
	size_t cap, n;
	bool has_zero;
	uint64_t last;
	size_t last_slot; /* the last id's (fn_steps_find_at()) */
	bool last_hit, has_last;
	/* ids added later (fn_steps_add_later), their slots fetched ahead:
	 * a large set's slots are far apart, each touched about once */
	unsigned npend, head; /* waiting, from pend[head] on */
	uint64_t pend[FN_STEPS_LAG];
};

/* The slot of id (not 0) in f's table: its own, or the empty one where it
 * would go. */
static inline size_t fn_steps_slot(const struct fn_steps *f, uint64_t id)
{
	return tfd_key_slot(f->k, f->cap, id);
}

/* Is id in f? *slot: where it is (an id not 0, in a table), else 0. */
static inline bool fn_steps_find_at(const struct fn_steps *f, uint64_t id, size_t *slot)
{
	*slot = 0;
	if (id == 0)
		return f->has_zero;
	if (!f->cap)
		return false;
	*slot = fn_steps_slot(f, id);
	return f->k[*slot] == id;
}

static inline bool fn_steps_find(const struct fn_steps *f, uint64_t id)
{
	size_t j;

	return fn_steps_find_at(f, id, &j);
}

/* Room for n ids without growing (load at most 3/4). */
static inline void fn_steps_reserve(struct fn_steps *f, size_t n)
{
	uint64_t *old = f->k;
	size_t ocap = f->cap;

	if (n * 4 <= f->cap * 3)
		return;
	if (!f->cap)
		f->cap = 64;
	while (n * 4 > f->cap * 3)
		f->cap *= 2;
	f->k = xcalloc_written(f->cap, sizeof(*f->k));
	for (size_t i = 0; i < ocap; i++)
		if (old[i])
			f->k[fn_steps_slot(f, old[i])] = old[i];
	free(old);
}

static inline void fn_steps_add(struct fn_steps *f, uint64_t id)
{
	size_t j;

	if (id == 0) {
		f->has_zero = true;
		return;
	}
	if ((f->n + 1) * 4 > f->cap * 3)
		fn_steps_reserve(f, f->cap ? 2 * f->cap * 3 / 4 : 1);
	j = fn_steps_slot(f, id);
	if (!f->k[j]) {
		f->k[j] = id;
		f->n++;
	}
}

/* Put id (not in it) into a table of cap keys the Robin Hood way: an id
 * farther from its home slot, or as far and smaller, takes the slot of
 * the one it finds there, which goes on. The table then holds a set in
 * one layout, whatever order the ids came in. */
static inline void fn_steps_put_ordered(uint64_t *k, size_t cap, uint64_t id)
{
	size_t j = tfd_key_home(cap, id), d = 0;

	while (k[j]) {
		size_t home = tfd_key_home(cap, k[j]);
		size_t dj = j >= home ? j - home : j + cap - home;

		if (dj < d || (dj == d && k[j] > id)) {
			uint64_t t = k[j];

			k[j] = id;
			id = t;
			d = dj;
		}
		j = j + 1 == cap ? 0 : j + 1;
		d++;
	}
	k[j] = id;
}

/* The set in a table of about 8/7 of its ids (load 7/8), in the one
 * layout its ids have (fn_steps_put_ordered(), whose displacements stay
 * short at that load; lookups that miss are rare, as a step's executor
 * chunks repeat its id and the last lookup is kept): one that grew by
 * doubling holds from 4/3 to 8/3 of them, and the executor sums made of
 * it add 8 bytes a slot; the slots code the ids (tfd_exec_code()), so a host read
 * line by line or in blocks on any number of threads gets the same codes. */
static inline void fn_steps_fit(struct fn_steps *f)
{
	size_t cap = f->n + f->n / 7 + 1;
	uint64_t *k;

	if (!f->cap)
		return;
	k = xcalloc_written(cap, sizeof(*k));
	for (size_t i = 0; i < f->cap; i++)
		if (f->k[i])
			fn_steps_put_ordered(k, cap, f->k[i]);
	free(f->k);
	f->k = k;
	f->cap = cap;
	f->has_last = false;
}

/* The ids waiting, added. */
static inline void fn_steps_flush(struct fn_steps *f)
{
	for (unsigned i = 0; i < f->npend; i++)
		fn_steps_add(f, f->pend[(f->head + i) % FN_STEPS_LAG]);
	f->npend = f->head = 0;
}

/* Add id soon: it waits while FN_STEPS_LAG more come, its slot fetched
 * meanwhile (a set: the order changes nothing); lookups add the ids
 * waiting first. */
static inline void fn_steps_add_later(struct fn_steps *f, uint64_t id)
{
	if (f->npend == FN_STEPS_LAG) {
		fn_steps_add(f, f->pend[f->head]);
		f->pend[f->head] = id;
		f->head = (f->head + 1) % FN_STEPS_LAG;
	} else {
		f->pend[(f->head + f->npend++) % FN_STEPS_LAG] = id;
	}
	if (f->cap)
		__builtin_prefetch(&f->k[tfd_key_home(f->cap, id)], 1);
}

__attribute__((always_inline)) static inline bool fn_steps_has(struct fn_steps *f, uint64_t id)
{
	if (f->npend)
		fn_steps_flush(f);
	if (!f->has_last || f->last != id) {
		f->last = id;
		f->last_hit = fn_steps_find_at(f, id, &f->last_slot);
		f->has_last = true;
	}
	return f->last_hit;
}

static inline void fn_steps_free(struct fn_steps *f)
{
	free(f->k);
	memset(f, 0, sizeof(*f));
}

/* Put id into a table of cap keys as fn_steps_put_ordered() does, unless
 * it is there: 0 then, 1 once placed. A Robin Hood table holds id, if at
 * all, before the first key the walk would displace: one walk looks and
 * puts. hi > 0: the walk stays below slot hi (a range of the table being
 * filled on several threads): -1 when it gets there, *left the id still to
 * place (id, or one it displaced); hi 0: it wraps around the table. */
static inline int fn_steps_put_until(uint64_t *k, size_t cap, size_t hi, uint64_t id,
				     uint64_t *left)
{
	size_t j = tfd_key_home(cap, id), d = 0;
	bool carried = false; /* id is now a key the walk displaced */

	while (k[j]) {
		size_t home = tfd_key_home(cap, k[j]);
		size_t dj = j >= home ? j - home : j + cap - home;

		if (!carried && k[j] == id)
			return 0;
		if (dj < d || (dj == d && k[j] > id)) {
			uint64_t t = k[j];

			k[j] = id;
			id = t;
			d = dj;
			carried = true;
		}
		d++;
		if (++j == (hi ? hi : cap)) {
			if (hi) {
				*left = id;
				return -1;
			}
			j = 0;
		}
	}
	k[j] = id;
	return 1;
}

static inline bool fn_steps_put_ordered_new(uint64_t *k, size_t cap, uint64_t id)
{
	return fn_steps_put_until(k, cap, 0, id, NULL) != 0;
}

/* Sets (the pre-pass workers') into out as one, fitted: fn_steps_fit()'s
 * table of their union (its layout is the union's alone, so the codes are
 * those one thread's set gets), made on up to nthreads threads
 * (xspace_cuts.c). The sets go. */
void tfd_fn_steps_fit_sets(struct fn_steps *out, struct fn_steps *sets, size_t nsets,
			   size_t nthreads);

/* The value of the decimal digits m (at most 15 of them), frac of them
 * after the point (0 to 15), negated when neg: as tfd_fast_decimal()
 * gives it. */
static inline double tfd_decimal_value(uint64_t m, int frac, bool neg)
{
	static const double p10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,	 1e6,  1e7,
				       1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
	double v = frac > 0 && frac < 16 ? (double)m / p10[frac] : (double)m;

	return neg ? -v : v;
}

/* A decimal number the way strtod() reads it, for the form trace JSON
 * writes: an optional '-', at most 15 digits with an optional '.' among
 * them, then the string's end. Both the digits as an integer (below 2^53)
 * and 10^k (k <= 15) are exact doubles, so their quotient, rounded once,
 * is the correctly rounded value strtod() returns. false: not that form
 * (the caller asks strtod()). */
static inline bool tfd_fast_decimal(const char *s, double *out)
{
	uint64_t m = 0;
	int digits = 0, frac = -1;
	bool neg = *s == '-';

	for (s += neg; *s; s++) {
		if (*s >= '0' && *s <= '9') {
			if (++digits > 15)
				return false;
			m = m * 10 + (uint64_t)(*s - '0');
			frac += frac >= 0;
		} else if (*s == '.' && frac < 0) {
			frac = 0;
		} else {
			return false;
		}
	}
	if (!digits)
		return false;
	*out = tfd_decimal_value(m, frac, neg);
	return true;
}

/* Receives inflated bytes; false stops the inflate (the consumer's own
 * state says why). */
typedef bool (*tfd_gunzip_sink)(void *ctx, const uint8_t *p, size_t n);

/* Inflates gzip data (one or more members) into sink, at most `limit` bytes
 * in all: "truncated gzip data", "corrupt gzip data (...)" and "gzip data
 * inflates to more than N MiB" are its error lines (gunzip.c). mapped: src
 * is a file mapping, whose pages are dropped once inflated. */
enum tfd_status tfd_gunzip(const uint8_t *src, size_t len, bool mapped, size_t limit,
			   tfd_gunzip_sink sink, void *ctx, struct tfd_err *err);

/* The same, with ahead (a second core to be had) and enough gzip data,
 * inflated on a thread of its own up to two chunks ahead of sink, which
 * runs on the caller's: the same chunks to sink, the same status and
 * error line (none once sink stopped, as in line; a gzip error is
 * reported once sink took every chunk before it). */
enum tfd_status tfd_gunzip_ahead(const uint8_t *src, size_t len, bool mapped, size_t limit,
				 bool ahead, tfd_gunzip_sink sink, void *ctx, struct tfd_err *err);

/* Decode a Chrome trace JSON document into a new host of cap (streaming).
 * With mapped, data is a read-only file mapping whose pages may be dropped
 * once parsed. */
enum tfd_status tfd_chrome_read(struct tfd_capture *cap, const char *data, size_t len,
				const char *path, const char *default_host,
				const struct tfd_load_opts *opts, bool mapped, struct tfd_err *err);

/* The same from gzip data, inflated chunk by chunk on each of the two
 * passes (never whole); at most `limit` inflated bytes. mapped: gz is a
 * file mapping (see tfd_gunzip). */
enum tfd_status tfd_chrome_read_gz(struct tfd_capture *cap, const uint8_t *gz, size_t len,
				   bool mapped, size_t limit, const char *default_host,
				   const struct tfd_load_opts *opts, struct tfd_err *err);

/* The threads a load may use: opts->jobs, else one per core (discover.c). */
size_t tfd_load_cores(const struct tfd_load_opts *opts);

/* ---- load.c: one file --------------------------------------------------- */

static inline int tfd_ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), k = strlen(suf);

	return n >= k && strcmp(s + n - k, suf) == 0;
}

static inline const char *tfd_path_base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Read the capture file at path into cap (a new host), whatever its format
 * (sniffed from the bytes; gzip inflated); err names the file. */
enum tfd_status tfd_load_file(struct tfd_capture *cap, const char *path,
			      const struct tfd_load_opts *opts, struct tfd_err *err);
/* The host name a file gives: its name less its reader's suffix. */
void tfd_host_from_path(const char *path, char *out, size_t outlen);
/* A file TensorBoard's tools derive from a capture (*.input_pipeline.pb,
 * ...): not a capture. */
int tfd_is_derived_tool_file(const char *path);
/* The rank of the reader a file name picks (the larger wins when a host has
 * several files, xplane.pb over trace.json.gz), or -1: not a capture. */
int tfd_capture_file_rank(const char *name);

#endif
