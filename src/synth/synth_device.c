/* synth_device.c - the synthesizer's GPU plane: each step's copies of its
 * input to the device and its kernels (struct device_spec), written as an
 * XSpace device plane or as a Chrome trace's device process. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth_impl.h"
#include "tfd/buf.h"
#include "tfd/vec.h"

#define US 1000LL /* ns */

/* A step's device work from `from` (the host has its batch): the copies
 * back to back, then the kernels during the step's compute, and a derived
 * step marker over them. Returns when the copies are done (the compute
 * starts then). */
int64_t tfd_synth_device_step(dspan_vec *dev, const struct device_spec *d, double compute_us,
			      int step, int64_t from, double jitter)
{
	int64_t t = from, copy = (int64_t)llround(d->h2d_us * US * jitter), k0, kt;
	int64_t group = d->group_ids ? step : -1;
	double kus = d->kernel_us >= 0 ? d->kernel_us : 0.8 * compute_us;

	for (int c = 0; c < d->copies && copy > 0; c++) {
		int64_t len = copy / d->copies;

		vec_push(dev, ((struct dspan){t, t + len, group, (uint64_t)(d->bytes / d->copies),
					      D_H2D}));
		t += len;
	}
	kt = (int64_t)llround(kus * US);
	if (kt > (int64_t)llround(compute_us * US))
		kt = (int64_t)llround(compute_us * US);
	k0 = t;
	for (int k = 0; k < d->kernels && kt > 0; k++) {
		int64_t a = k0 + kt * k / d->kernels, b = k0 + kt * (k + 1) / d->kernels;

		vec_push(dev, ((struct dspan){a, b, group, 0, D_KERNEL}));
	}
	vec_push(dev, ((struct dspan){from, k0 + kt, group, 0, D_STEP}));
	return t;
}

/* The GPU plane as TensorFlow writes it: a stream line per kind (copies
 * with memcpy_details, kernels) and the derived "Steps" line the reader
 * must skip; events carry group_id when the spec says so. */
static const char *const dline_names[] = {"Stream #13(MemcpyH2D)", "Stream #14(Compute)", "Steps"};
static const char *const dmeta_names[] = {"MemcpyH2D", "volta_sgemm_128x64_nn", "step"};

static void device_line(struct tfd_buf *line, const dspan_vec *v, int kind, bool reversed)
{
	tfd_synth_pb_int(line, 1, 13 + kind);
	tfd_synth_pb_bytes(line, 2, dline_names[kind], strlen(dline_names[kind]));
	tfd_synth_pb_int(line, 3, 0);
	for (size_t i = 0; i < v->n; i++) {
		const struct dspan *d = &v->v[reversed ? v->n - 1 - i : i];
		struct tfd_buf ev, st;

		if (d->kind != kind)
			continue;
		tfd_buf_init(&ev);
		tfd_synth_pb_int(&ev, 1, kind + 1);
		tfd_synth_pb_int(&ev, 2, d->s * 1000);
		tfd_synth_pb_int(&ev, 3, (d->e - d->s) * 1000);
		if (d->group >= 0) {
			tfd_buf_init(&st);
			tfd_synth_pb_int(&st, 1, 1);
			tfd_synth_pb_int(&st, 4, d->group);
			tfd_synth_pb_bytes(&ev, 4, st.s, st.len);
			tfd_buf_release(&st);
		}
		if (kind == D_H2D) {
			char det[64];

			snprintf(det, sizeof(det), "size:%" PRIu64 " dest:0 async:1", d->bytes);
			tfd_buf_init(&st);
			tfd_synth_pb_int(&st, 1, 2);
			tfd_synth_pb_bytes(&st, 5, det, strlen(det));
			tfd_synth_pb_bytes(&ev, 4, st.s, st.len);
			tfd_buf_release(&st);
		}
		tfd_synth_pb_bytes(line, 4, ev.s, ev.len);
		tfd_buf_release(&ev);
	}
}

static int dspan_cmp(const void *a, const void *b)
{
	const struct dspan *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->kind < y->kind ? -1 : x->kind > y->kind;
}

void tfd_synth_device_sort(dspan_vec *v)
{
	if (v->n > 1)
		qsort(v->v, v->n, sizeof(*v->v), dspan_cmp);
}

void tfd_synth_device_plane(struct tfd_buf *dev, const dspan_vec *v, bool reversed)
{
	tfd_synth_pb_int(dev, 1, 2);
	tfd_synth_pb_bytes(dev, 2, "/device:GPU:0", 13);
	for (int kind = D_H2D; kind <= D_STEP; kind++) {
		struct tfd_buf line;

		tfd_buf_init(&line);
		device_line(&line, v, kind, reversed);
		tfd_synth_pb_bytes(dev, 3, line.s, line.len);
		tfd_buf_release(&line);
	}
	for (int i = 0; i < 3; i++)
		tfd_synth_pb_metadata(dev, 4, i + 1, dmeta_names[i]);
	tfd_synth_pb_metadata(dev, 5, 1, "group_id");
	tfd_synth_pb_metadata(dev, 5, 2, "memcpy_details");
}

/* The GPU plane as TensorBoard renders it: a process, a thread per line. */
void tfd_synth_json_device(FILE *f, const dspan_vec *v)
{
	if (!v->n)
		return;
	fprintf(f, ",\n{\"ph\":\"M\",\"pid\":702,\"name\":\"process_name\",\"args\":{\"name\":"
		   "\"/device:GPU:0\"}}");
	for (int k = D_H2D; k <= D_STEP; k++)
		fprintf(f,
			",\n{\"ph\":\"M\",\"pid\":702,\"tid\":%d,\"name\":\"thread_name\","
			"\"args\":{\"name\":\"%s\"}}",
			13 + k, dline_names[k]);
	for (size_t i = 0; i < v->n; i++) {
		const struct dspan *d = &v->v[i];

		fprintf(f,
			",\n{\"pid\":702,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"ph\":\"X\","
			"\"name\":\"%s\",\"args\":{",
			13 + d->kind, (double)d->s / 1e3, (double)(d->e - d->s) / 1e3,
			dmeta_names[d->kind]);
		if (d->group >= 0)
			fprintf(f, "\"group_id\":\"%" PRId64 "\"", d->group);
		if (d->kind == D_H2D)
			fprintf(f, "%s\"memcpy_details\":\"size:%" PRIu64 " dest:0 async:1\"",
				d->group >= 0 ? "," : "", d->bytes);
		fputs("}}", f);
	}
}
