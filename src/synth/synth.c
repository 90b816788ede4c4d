/* synth.c - discrete-event simulation of a tf.data pipeline, written as
 * XSpace protobuf (encoded by hand, so 1 GB captures stream out quickly)
 * and/or Chrome trace JSON. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "synth_impl.h"
#include "tfd/buf.h"
#include "tfd/families.h"
#include "tfd/synth.h"
#include "tfd/vec.h"

#define US 1000LL /* ns */

/* ---- recorded events ------------------------------------------------------ */

enum stat_key { S_ID, S_PARENT, S_ELEMENT, S_GROUP, S__FIXED };

struct sev {
	int64_t s, e;
	uint32_t meta;
	int16_t params; /* param set index, -1 none */
	uint8_t nst;
	uint8_t key[3];
	uint64_t val[3];
};

struct thread {
	int64_t tid;
	const char *name;
	VEC(struct sev) ev;
};

struct param_set {
	size_t n;
	const char *key[8];
	char val[8][32];
};

struct host {
	VEC(struct thread) threads;
	dspan_vec dev;		 /* the GPU plane's events */
	VEC(const char *) metas; /* event metadata names (id = index + 1) */
	VEC(struct param_set) params;
	uint64_t rng;
	int64_t elements; /* element id counter */
	int large_ids;
	bool dev_reversed; /* the spec's device_order "reversed" */
	int64_t gil_free;  /* when the Python GIL is next free (py ops hold it) */
};

static uint64_t rnd(struct host *h)
{
	uint64_t x = h->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	h->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static double jit(struct host *h, double j)
{
	return 1.0 + j * (2.0 * ((double)(rnd(h) >> 11) / 9007199254740992.0) - 1.0);
}

static uint32_t meta(struct host *h, const char *name)
{
	for (size_t i = 0; i < h->metas.n; i++)
		if (strcmp(h->metas.v[i], name) == 0)
			return (uint32_t)i + 1;
	vec_push(&h->metas, xstrdup(name));
	return (uint32_t)h->metas.n;
}

static int thread_new(struct host *h, const char *name)
{
	struct thread t;

	memset(&t, 0, sizeof(t));
	t.tid = 1000 + (int64_t)h->threads.n * 7;
	t.name = name;
	vec_push(&h->threads, t);
	return (int)h->threads.n - 1;
}

static struct sev *emit(struct host *h, int th, uint32_t m, int64_t s, int64_t e)
{
	struct sev x;

	memset(&x, 0, sizeof(x));
	x.s = s;
	x.e = e > s ? e : s;
	x.meta = m;
	x.params = -1;
	vec_push(&h->threads.v[th].ev, x);
	return &h->threads.v[th].ev.v[h->threads.v[th].ev.n - 1];
}

static void addstat(struct sev *e, enum stat_key k, uint64_t v)
{
	if (e->nst < 3) {
		e->key[e->nst] = (uint8_t)k;
		e->val[e->nst++] = v;
	}
}

/* ---- the pipeline ---------------------------------------------------------- */

struct stage {
	const struct kind_def *def;
	double cost_ns, jitter, first_ns;
	int par, buffer, batch, keep_every, shuf_buf, deterministic, autotune;
	char *long_name;
	uint32_t meta, produce_meta, consume_meta, fn_meta, async_meta, exec_meta;
	int fn_style;		   /* enum fn_style */
	const struct op_spec *ops; /* its function's ops (the spec's) */
	int nops;
	uint32_t op_meta[SYNTH_MAX_OPS];
	int rthread; /* parallel map, map-and-batch: the runner thread that reads */
	uint64_t id, parent_id;
	int16_t params;
	/* an AUTOTUNE ramp (struct stage_spec): its levels' parameter sets */
	int nramp;
	const int *ramp_at, *ramp_par;
	int16_t ramp_params[SYNTH_MAX_RAMP];
	struct stage *input;
	/* sync state */
	int64_t calls;
	/* async state: per produced element its ready time, element id and the
	 * time the consumer took it (which frees its buffer slot) */
	VEC(int64_t) ready;
	VEC(int64_t) eid;
	VEC(int64_t) taken_at;
	size_t produced, ntaken;
	bool started;
	int64_t *wfree;
	int *wthread;
	int64_t input_free;
	struct stage **inst; /* ParallelInterleave: an input chain per worker */
	size_t next_inst;
};

static int64_t get_next(struct host *h, struct stage *s, int64_t t, int th, int depth);
static uint64_t new_id(struct host *h);

/* The ramp level in force at element j (-1: no ramp). */
static int ramp_level(const struct stage *s, size_t j)
{
	int l = -1;

	for (int i = 0; i < s->nramp && (size_t)s->ramp_at[i] <= j; i++)
		l = i;
	return l;
}

static void call_event(struct host *h, struct stage *s, int th, int64_t t, int64_t end)
{
	struct sev *e = emit(h, th, s->meta, t, end);
	int l = ramp_level(s, s->produced);

	addstat(e, S_ID, s->id);
	if (s->parent_id)
		addstat(e, S_PARENT, s->parent_id);
	/* the parallelism in force as the call returns, as TensorFlow says it */
	e->params = l >= 0 ? s->ramp_params[l] : s->params;
}

static int64_t work(struct host *h, struct stage *s)
{
	double c = s->cost_ns * jit(h, s->jitter);

	if (s->calls == 0)
		c += s->first_ns;
	return (int64_t)llround(c > 0 ? c : 0);
}

/* The function's ops on thread th from t, for work c: "name:type" events
 * one after the other, each its share of c; a Python op first waits for
 * the host's GIL (its event spans the wait). Returns when the work ends:
 * t + c and the waits. */
static int64_t run_ops(struct host *h, struct stage *s, int th, int64_t t, int64_t c)
{
	int64_t cur = t + c / 200, used = c / 200; /* the executor's own start */

	for (int i = 0; i < s->nops; i++) {
		int64_t d = llround(s->ops[i].share * (double)c), b = cur;

		if (used + d > c)
			d = c - used;
		if (s->ops[i].py) {
			if (h->gil_free > cur)
				cur = h->gil_free;
			h->gil_free = cur + d;
		}
		cur += d;
		used += d;
		emit(h, th, s->op_meta[i], b, cur);
	}
	return cur + (c - used);
}

/* A function event (meta, with the step id when not 0) on thread th from
 * t with its ops inside; returns its length: c and the GIL waits. */
static int64_t fn_event(struct host *h, struct stage *s, int th, uint32_t meta, uint64_t step,
			int64_t t, int64_t c)
{
	size_t at = h->threads.v[th].ev.n;
	int64_t end;

	emit(h, th, meta, t, t + c);
	if (step)
		addstat(&h->threads.v[th].ev.v[at], S_ID, step);
	end = s->nops ? run_ops(h, s, th, t, c) : t + c;
	h->threads.v[th].ev.v[at].e = end; /* (the vector may have moved) */
	return end - t;
}

/* The workers (*nw) and buffer slots (*nb) stage s has for element j:
 * AUTOTUNE's ramp raises a parallel map's workers, a prefetch's buffer. */
static void ramp_sizes(const struct stage *s, size_t j, size_t *nw, size_t *nb)
{
	int l = ramp_level(s, j);
	bool buf_ramp = s->def->k == K_PREFETCH;

	*nw = l >= 0 && !buf_ramp ? (size_t)s->ramp_par[l] : (size_t)s->par;
	*nb = l >= 0 && buf_ramp ? (size_t)s->ramp_par[l] : (size_t)s->buffer;
}

/* Produce element j on the least busy worker, as early as a free worker and
 * a free buffer slot allow (so it may run long before it is asked for). */
static void produce(struct host *h, struct stage *s, int depth)
{
	size_t j = s->produced++, w = 0;
	int64_t slot = 0, start, in_s, in_e, done, eid = ++h->elements;
	int nin = s->def->k == K_MAPBATCH ? s->batch : 1;
	bool locked_input = s->def->k == K_PMAP || s->def->k == K_MAPBATCH;

	size_t nw, nb;

	ramp_sizes(s, j, &nw, &nb);

	if (j >= nb)
		slot = s->taken_at.v[j - nb];
	/* AUTOTUNE's ramp: only the first nw workers take elements yet */
	for (size_t k = 1; k < nw; k++)
		if (s->wfree[k] < s->wfree[w])
			w = k;
	start = s->wfree[w] > slot ? s->wfree[w] : slot;
	in_s = locked_input && s->input_free > start ? s->input_free : start;
	in_e = in_s;
	for (int i = 0; i < nin; i++) {
		struct stage *in = s->def->k == K_PINTERLEAVE ? s->inst[w] : s->input;
		int rt = s->rthread >= 0 ? s->rthread : s->wthread[w];
		int64_t b = in_e;
		struct sev *pe;

		in_e = get_next(h, in, b + 1 * US, rt, depth + 1) + 1 * US;
		pe = emit(h, rt, s->produce_meta, b, in_e);
		addstat(pe, S_ELEMENT, (uint64_t)eid);
	}
	done = in_e;
	if (s->def->k != K_PREFETCH) {
		int64_t c = work(h, s);

		if (s->fn_style == FN_EXECUTOR && s->rthread >= 0) {
			/* the runner dispatches, a pool thread runs the ops */
			uint64_t step = new_id(h);
			struct sev *fe = emit(h, s->rthread, s->async_meta, in_e, in_e + 2 * US);

			addstat(fe, S_ID, step);
			in_e += 2 * US;
			if (c > 0)
				c = fn_event(h, s, s->wthread[w], s->exec_meta, step, in_e, c);
		} else if (s->fn_style != FN_NONE && c > 0) {
			c = fn_event(h, s, s->wthread[w], s->fn_meta, 0, in_e, c);
		} else if (c > 0 && s->nops) { /* ops without a function event */
			c = run_ops(h, s, s->wthread[w], in_e, c) - in_e;
		}
		done = in_e + c;
	}
	if (locked_input)
		s->input_free = in_e; /* one input iterator, used under a lock */
	s->wfree[w] = done;
	/* deterministic order: an element leaves no earlier than the one before */
	if (s->deterministic && j > 0 && s->ready.v[j - 1] > done)
		done = s->ready.v[j - 1];
	vec_push(&s->ready, done);
	vec_push(&s->eid, eid);
	vec_push(&s->taken_at, (int64_t)0);
}

static int64_t get_next(struct host *h, struct stage *s, int64_t t, int th, int depth)
{
	int64_t cur = t + 1 * US, end;

	if (depth > 64)
		return cur;
	switch (s->def->k) {
	case K_SOURCE:
		cur += work(h, s);
		break;
	case K_MAP:
	case K_PASS:
		cur = get_next(h, s->input, cur, th, depth + 1);
		/* a map's function runs inline, in its Run call (with its step id) */
		cur = s->nops ? cur + fn_event(h, s, th, s->fn_meta, new_id(h), cur, work(h, s))
			      : cur + work(h, s);
		break;
	case K_BATCH:
		for (int i = 0; i < (s->batch > 0 ? s->batch : 1); i++)
			cur = get_next(h, s->input, cur, th, depth + 1);
		cur += work(h, s);
		break;
	case K_FILTER:
		for (int i = 0; i < s->keep_every; i++) {
			cur = get_next(h, s->input, cur, th, depth + 1);
			cur += work(h, s);
		}
		break;
	case K_SHUFFLE:
		/* the first call fills the buffer */
		for (int i = 0; i < (s->calls == 0 ? s->shuf_buf : 1); i++)
			cur = get_next(h, s->input, cur, th, depth + 1);
		cur += work(h, s);
		break;
	default: {
		/* async: take the next element, waiting for a worker if needed */
		size_t k = s->ntaken++;
		struct sev *ce;

		if (!s->started) {
			for (int w = 0; w < s->par; w++)
				s->wfree[w] = t; /* workers start with the iterator */
			s->started = true;
		}
		while (s->produced <= k)
			produce(h, s, depth);
		end = (s->ready.v[k] > cur ? s->ready.v[k] : cur) + 1 * US;
		ce = emit(h, th, s->consume_meta, end - 1 * US, end);
		addstat(ce, S_ELEMENT, (uint64_t)s->eid.v[k]);
		s->taken_at.v[k] = end;
		call_event(h, s, th, t, end);
		s->calls++;
		return end;
	}
	}
	call_event(h, s, th, t, cur);
	s->calls++;
	return cur;
}

/* ---- building the stages of one host ----------------------------------------- */

static uint64_t new_id(struct host *h)
{
	uint64_t v = rnd(h);

	/* current TF prints ids unsigned: with large_ids, half are >= 2^63 */
	return h->large_ids ? v : (v >> 2) + 1;
}

static int16_t params_for(struct host *h, const struct stage_spec *ss, int par_now)
{
	struct param_set p;

	memset(&p, 0, sizeof(p));
#define P(K_, FMT_, V_)                                                                            \
	do {                                                                                       \
		p.key[p.n] = K_;                                                                   \
		snprintf(p.val[p.n], sizeof(p.val[0]), FMT_, V_);                                  \
		p.n++;                                                                             \
	} while (0)
	switch (ss->def->k) {
	case K_PMAP:
	case K_PINTERLEAVE:
	case K_MAPBATCH:
		P("autotune", "%s", ss->autotune ? "true" : "false");
		P("deterministic", "%s", ss->deterministic ? "true" : "false");
		/* a ramp's calls say the value in force, as TensorFlow's do */
		P("parallelism", "%d", par_now > 0 ? par_now : ss->autotune ? -1 : ss->par);
		if (ss->def->k == K_PINTERLEAVE)
			P("cycle_length", "%d", ss->par);
		if (ss->def->k == K_MAPBATCH)
			P("batch_size", "%d", ss->batch);
		break;
	case K_PREFETCH:
		P("buffer_limit", "%d", par_now > 0 ? par_now : ss->buffer);
		break;
	case K_BATCH:
		P("batch_size", "%d", ss->batch);
		P("drop_remainder", "%s", "false");
		break;
	case K_SHUFFLE:
		P("buffer_size", "%d", ss->shuf_buf);
		break;
	default:
		return -1;
	}
	vec_push(&h->params, p);
	return (int16_t)(h->params.n - 1);
}

static struct stage *build_chain(struct host *h, const struct spec *sp, int upto,
				 const char *prefix, uint64_t parent_id, double factor)
{
	const struct stage_spec *ss = &sp->st[upto];
	struct stage *s = xcalloc(1, sizeof(*s));
	size_t n = strlen(prefix) + strlen(ss->def->tfname) + 3;
	char buf[64];

	s->def = ss->def;
	s->cost_ns = ss->cost_us * US * factor;
	s->first_ns = ss->first_us * US * factor;
	s->jitter = ss->jitter;
	s->par = ss->par;
	s->buffer = ss->buffer;
	s->batch = ss->batch;
	s->keep_every = ss->keep_every;
	s->shuf_buf = ss->shuf_buf;
	s->deterministic = ss->deterministic;
	s->autotune = ss->autotune;
	s->long_name = xmalloc(n);
	snprintf(s->long_name, n, "%s::%s", prefix, ss->def->tfname);
	s->meta = meta(h, s->long_name);
	s->id = new_id(h);
	s->parent_id = parent_id;
	s->params = params_for(h, ss, 0);
	s->nramp = ss->nramp;
	s->ramp_at = ss->ramp_at;
	s->ramp_par = ss->ramp_par;
	for (int i = 0; i < ss->nramp; i++)
		s->ramp_params[i] = params_for(h, ss, ss->ramp_par[i]);
	s->ops = ss->ops;
	s->nops = ss->nops;
	if (ss->nops)
		s->fn_meta = meta(h, "InstantiatedCapturedFunction::Run");
	for (int i = 0; i < ss->nops; i++) {
		char on[160];

		snprintf(on, sizeof(on), "%s:%s", ss->ops[i].name, ss->ops[i].type);
		s->op_meta[i] = meta(h, on);
	}
	if (ss->def->thread) {
		const struct tfd_family *fam = tfd_family_lookup(ss->def->kind);

		s->produce_meta = meta(h, fam->produce);
		s->consume_meta = meta(h, fam->consume);
		s->fn_meta = meta(h, "InstantiatedCapturedFunction::Run");
		s->async_meta = meta(h, "InstantiatedCapturedFunction::RunAsync");
		s->exec_meta = meta(h, "ExecutorState::Process");
		s->fn_style = sp->fn_events;
		s->wfree = xcalloc((size_t)s->par, sizeof(int64_t));
		s->wthread = xcalloc((size_t)s->par, sizeof(int));
		for (int w = 0; w < s->par; w++)
			s->wthread[w] = thread_new(h, ss->def->thread);
		/* TensorFlow's parallel map reads its input on one runner thread */
		s->rthread = -1;
		if (ss->def->k == K_PMAP || ss->def->k == K_MAPBATCH)
			s->rthread = thread_new(h, "tf_data_runner");
	}
	if (upto == 0)
		return s;
	if (ss->def->k == K_PINTERLEAVE) {
		/* one input chain per worker: "...::ParallelInterleaveV4[w]::TFRecord" */
		s->inst = xcalloc((size_t)s->par, sizeof(*s->inst));
		for (int w = 0; w < s->par; w++) {
			char *pre = xmalloc(strlen(s->long_name) + 16);

			snprintf(buf, sizeof(buf), "[%d]", w);
			sprintf(pre, "%s%s", s->long_name, buf);
			s->inst[w] = build_chain(h, sp, upto - 1, pre, s->id, factor);
			free(pre);
		}
	} else {
		s->input = build_chain(h, sp, upto - 1, s->long_name, s->id, factor);
	}
	return s;
}

static void free_chain(struct stage *s)
{
	if (!s)
		return;
	if (s->inst) {
		for (int w = 0; w < s->par; w++)
			free_chain(s->inst[w]);
		free(s->inst);
	}
	free_chain(s->input);
	free(s->long_name);
	vec_free(&s->ready);
	vec_free(&s->eid);
	vec_free(&s->taken_at);
	free(s->wfree);
	free(s->wthread);
	free(s);
}

/* ---- simulation of one host -------------------------------------------------- */

static void simulate(struct host *h, const struct spec *sp, double factor, int steps)
{
	int py = thread_new(h, "python");
	int gn = thread_new(h, "tf_data_iterator_get_next");
	int tc = sp->other_events ? thread_new(h, "tf_Compute") : -1;
	uint32_t m_op = meta(h, "ExecutorState::Process");
	uint32_t m_step = meta(h, "train_function");
	uint32_t m_do = meta(h, "IteratorGetNextOp::DoCompute");
	char rootname[64];
	struct stage *root = xcalloc(1, sizeof(*root));
	static const struct kind_def root_def = {"Root", "Model", K_PASS, NULL};
	int64_t t = 10 * US;

	snprintf(rootname, sizeof(rootname), "Iterator::%s", sp->root);
	root->def = &root_def;
	root->long_name = xstrdup(rootname);
	root->meta = meta(h, rootname);
	root->id = new_id(h);
	root->cost_ns = 2 * US;
	root->jitter = 0.1;
	root->params = -1;
	root->input = build_chain(h, sp, sp->nst - 1, rootname, root->id, factor);
	for (int s = 0; s < steps; s++) {
		int64_t g0 = t + 5 * US, end, cend;
		struct sev *e;

		end = get_next(h, root, g0 + 2 * US, gn, 0);
		e = emit(h, gn, m_do, g0, end + 1 * US);
		addstat(e, S_GROUP, (uint64_t)s);
		for (int d = 0; d < sp->device_events; d++)
			vec_push(&h->dev, ((struct dspan){t + d * 2 * US, t + d * 2 * US + 1500, -1,
							  0, D_KERNEL}));
		cend = end + 1 * US;
		if (sp->dev.on)
			cend = tfd_synth_device_step(&h->dev, &sp->dev, sp->compute_us, s, cend,
						     jit(h, 0.05));
		cend += (int64_t)llround(sp->compute_us * US * jit(h, 0.05));
		/* the step's other host work: executor ops that are not tf.data */
		for (int k = 0; k < sp->other_events; k++) {
			int64_t span = cend - end, os = end + span * k / (sp->other_events + 1);

			e = emit(h, tc, m_op, os, os + span / (2 * (sp->other_events + 1)) + 1);
			addstat(e, S_GROUP, (uint64_t)s);
			/* as in TensorFlow: every chunk of one training step carries
			 * the step's run id, far from the dataset functions' ids */
			addstat(e, S_ID, (UINT64_C(1) << 40) + (uint64_t)s);
		}
		e = emit(h, py, m_step, t, cend);
		addstat(e, S_GROUP, (uint64_t)s);
		t = cend + 10 * US;
	}
	free_chain(root);
	tfd_synth_device_sort(&h->dev);
}

/* ---- XSpace encoding ---------------------------------------------------------- */

static int ev_cmp(const void *a, const void *b)
{
	const struct sev *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	if (x->e != y->e)
		return x->e > y->e ? -1 : 1; /* longer first: TF sorts (begin, -duration) */
	return 0;
}

/* Small messages are encoded into fixed stack buffers (no allocation per
 * event: bench captures hold tens of millions). */
struct mb {
	char b[768];
	size_t n;
};

static void mb_varint(struct mb *m, uint64_t v)
{
	do {
		m->b[m->n++] = (char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
}

static void mb_int(struct mb *m, unsigned field, uint64_t v)
{
	mb_varint(m, (uint64_t)field << 3);
	mb_varint(m, v);
}

static void mb_bytes(struct mb *m, unsigned field, const void *p, size_t n)
{
	mb_varint(m, ((uint64_t)field << 3) | 2);
	mb_varint(m, n);
	memcpy(m->b + m->n, p, n);
	m->n += n;
}

static void encode_event(struct tfd_buf *line, const struct sev *e, const struct host *h,
			 uint32_t stat_base)
{
	struct mb ev, st;

	ev.n = 0;
	mb_int(&ev, 1, e->meta);
	mb_int(&ev, 2, (uint64_t)(e->s * 1000));
	mb_int(&ev, 3, (uint64_t)((e->e - e->s) * 1000));
	for (uint8_t i = 0; i < e->nst; i++) {
		st.n = 0;
		mb_int(&st, 1, 1u + e->key[i]);
		/* ids >= 2^63 as uint64_value, as current TensorFlow writes them */
		mb_int(&st, e->val[i] >> 63 ? 3 : 4, e->val[i]);
		mb_bytes(&ev, 4, st.b, st.n);
	}
	if (e->params >= 0) {
		const struct param_set *p = &h->params.v[e->params];

		for (size_t i = 0; i < p->n; i++) {
			char *end;
			long long iv = strtoll(p->val[i], &end, 10);

			st.n = 0;
			mb_int(&st, 1, stat_base + (uint32_t)i + 1000u * (uint32_t)e->params);
			if (*end == '\0')
				mb_int(&st, 4, (uint64_t)iv);
			else
				mb_bytes(&st, 5, p->val[i], strlen(p->val[i]));
			mb_bytes(&ev, 4, st.b, st.n);
		}
	}
	tfd_synth_pb_bytes(line, 4, ev.b, ev.n);
}

static const char *const fixed_stats[S__FIXED] = {"id", "parent_id", "element_id", "group_id"};

/* The host plane's header: id, name, the event and stat metadata maps. */
static void plane_head(struct tfd_buf *head, const struct host *h, uint32_t stat_base)
{
	tfd_synth_pb_int(head, 1, 0);
	tfd_synth_pb_bytes(head, 2, "/host:CPU", 9);
	for (size_t i = 0; i < h->metas.n; i++)
		tfd_synth_pb_metadata(head, 4, (int64_t)i + 1, h->metas.v[i]);
	for (size_t i = 0; i < S__FIXED; i++)
		tfd_synth_pb_metadata(head, 5, (int64_t)i + 1, fixed_stats[i]);
	for (size_t set = 0; set < h->params.n; set++)
		for (size_t k = 0; k < h->params.v[set].n && k < 8; k++)
			tfd_synth_pb_metadata(head, 5, stat_base + (int64_t)k + 1000 * (int64_t)set,
					      h->params.v[set].key[k]);
}

/* Close a written file: a failed write (a full disk, EFBIG over ulimit -f)
 * is an error naming the file, and the cut file is removed. */
static enum tfd_status close_written(FILE *f, bool ok, const char *path, struct tfd_err *err)
{
	int e = 0;

	if (!ok || ferror(f))
		e = errno ? errno : EIO;
	if (fclose(f) != 0 && !e)
		e = errno ? errno : EIO;
	if (!e)
		return TFD_OK;
	unlink(path);
	return tfd_fail(err, TFD_E_IO, "%s: write error: %s", path, strerror(e));
}

/* Write b (and count it); false once the stream has failed. */
static bool put(FILE *f, const struct tfd_buf *b, uint64_t *bytes)
{
	*bytes += b->len;
	return fwrite(b->s ? b->s : "", 1, b->len, f) == b->len;
}

static enum tfd_status write_xspace(struct host *h, const char *path, const char *hostname,
				    uint64_t *bytes, struct tfd_err *err)
{
	struct tfd_buf head, *lines, dev, top;
	size_t plane_len, nlines = h->threads.n;
	const uint32_t stat_base = 100;
	enum tfd_status st = TFD_OK;
	bool ok;
	FILE *f;

	tfd_buf_init(&head);
	tfd_buf_init(&dev);
	tfd_buf_init(&top);
	plane_head(&head, h, stat_base);
	plane_len = head.len;
	lines = xcalloc(nlines + 1, sizeof(*lines));
	for (size_t t = 0; t < nlines; t++) {
		struct thread *th = &h->threads.v[t];
		struct tfd_buf *lb = &lines[t];

		tfd_buf_init(lb);
		tfd_synth_pb_int(lb, 1, th->tid);
		tfd_synth_pb_bytes(lb, 2, th->name, strlen(th->name));
		tfd_synth_pb_int(lb, 3, 0);
		for (size_t k = 0; k < th->ev.n; k++)
			encode_event(lb, &th->ev.v[k], h, stat_base);
		plane_len += 1 + tfd_synth_varint_len(lb->len) + lb->len;
	}
	if (h->dev.n)
		tfd_synth_device_plane(&dev, &h->dev, h->dev_reversed);
	f = fopen(path, "wb");
	if (!f) {
		st = tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
		goto out;
	}
	tfd_synth_pb_key(&top, 1, 2);
	tfd_synth_pb_varint(&top, plane_len);
	ok = put(f, &top, bytes) && put(f, &head, bytes);
	for (size_t t = 0; t < nlines && ok; t++) {
		top.len = 0;
		tfd_synth_pb_key(&top, 3, 2);
		tfd_synth_pb_varint(&top, lines[t].len);
		ok = put(f, &top, bytes) && put(f, &lines[t], bytes);
	}
	top.len = 0;
	if (dev.len)
		tfd_synth_pb_bytes(&top, 1, dev.s, dev.len);
	tfd_synth_pb_bytes(&top, 4, hostname, strlen(hostname));
	ok = ok && put(f, &top, bytes);
	st = close_written(f, ok, path, err);
out:
	for (size_t t = 0; t < nlines; t++)
		tfd_buf_release(&lines[t]);
	free(lines);
	tfd_buf_release(&head);
	tfd_buf_release(&dev);
	tfd_buf_release(&top);
	return st;
}

/* ---- Chrome JSON (as TensorBoard renders XSpace: short name + long_name,
 * Produce/Consume dropped) ------------------------------------------------------ */

static enum tfd_status write_json(struct host *h, const char *path, uint64_t *bytes,
				  struct tfd_err *err)
{
	FILE *f = fopen(path, "wb");
	long pos;

	if (!f)
		return tfd_fail(err, TFD_E_IO, "%s: %s", path, strerror(errno));
	fprintf(
	    f, "{\"displayTimeUnit\":\"ns\",\"metadata\":{\"highres-ticks\":true},\"traceEvents\":["
	       "{\"ph\":\"M\",\"pid\":701,\"name\":\"process_name\",\"args\":{\"name\":\"/"
	       "host:CPU\"}}");
	for (size_t t = 0; t < h->threads.n; t++)
		fprintf(f,
			",\n{\"ph\":\"M\",\"pid\":701,\"tid\":%" PRId64
			",\"name\":\"thread_name\",\"args\":{\"name\":\"%s\"}}",
			h->threads.v[t].tid, h->threads.v[t].name);
	for (size_t t = 0; t < h->threads.n; t++) {
		const struct thread *th = &h->threads.v[t];

		for (size_t k = 0; k < th->ev.n; k++) {
			const struct sev *e = &th->ev.v[k];
			const char *name = h->metas.v[e->meta - 1];
			const char *shortn = name;
			int iter = strncmp(name, "Iterator::", 10) == 0;

			if (strstr(name, "Produce") || strstr(name, "Consume"))
				continue; /* the renderer drops them */
			if (iter) {
				const char *p = name, *last = name;

				while ((p = strstr(p, "::")) != NULL)
					last = (p += 2);
				shortn = last;
			}
			fprintf(f,
				",\n{\"pid\":701,\"tid\":%" PRId64 ",\"ts\":%.3f,\"dur\":%.3f,"
				"\"ph\":\"X\",\"name\":\"%s%s\",\"args\":{",
				th->tid, (double)e->s / 1e3, (double)(e->e - e->s) / 1e3,
				iter ? "Iterator::" : "", shortn);
			for (uint8_t i = 0; i < e->nst; i++)
				fprintf(f, "%s\"%s\":\"%" PRId64 "\"", i ? "," : "",
					fixed_stats[e->key[i]], (int64_t)e->val[i]);
			if (iter && strchr(name + 10, ':'))
				fprintf(f, "%s\"long_name\":\"%s\"", e->nst ? "," : "", name);
			if (e->params >= 0) {
				const struct param_set *p = &h->params.v[e->params];

				for (size_t i = 0; i < p->n; i++)
					fprintf(f, ",\"%s\":\"%s\"", p->key[i], p->val[i]);
			}
			fputs("}}", f);
		}
	}
	tfd_synth_json_device(f, &h->dev);
	fputs(",\n{}]}\n", f);
	pos = ftell(f);
	*bytes += pos > 0 ? (uint64_t)pos : 0;
	return close_written(f, true, path, err);
}

static void host_free(struct host *h)
{
	for (size_t t = 0; t < h->threads.n; t++)
		vec_free(&h->threads.v[t].ev);
	vec_free(&h->threads);
	vec_free(&h->dev);
	for (size_t i = 0; i < h->metas.n; i++)
		free((char *)h->metas.v[i]);
	vec_free(&h->metas);
	vec_free(&h->params);
}

/* mkdir -p: the whole path, however long (it was cut at 1 KB) */
static int mkdirs(const char *path)
{
	char *tmp = xstrdup(path);
	int rc = 0;

	for (char *p = tmp + 1; *p && !rc; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
				rc = -1;
			*p = '/';
		}
	if (!rc && mkdir(tmp, 0777) != 0 && errno != EEXIST)
		rc = -1;
	free(tmp);
	return rc;
}

/* About how many events a host's step makes: the step's own, the other
 * host events, each stage's calls with their Produce/Consume (more below a
 * batch, its batch_size, or a filter, 1/keep_ratio), and on a device plane
 * the step's copies and kernels and its device_events_per_step. */
static double events_per_step(const struct spec *sp)
{
	double n = 4 + sp->other_events + sp->device_events, mult = 1;

	if (sp->dev.on)
		n += sp->dev.copies + sp->dev.kernels + 1;
	for (int i = sp->nst - 1; i >= 0; i--) {
		const struct stage_spec *ss = &sp->st[i];

		n += 3 * mult;
		if (ss->def->k == K_BATCH || ss->def->k == K_MAPBATCH)
			mult *= ss->batch;
		else if (ss->def->k == K_FILTER)
			mult *= ss->keep_every;
	}
	return n;
}

/* Checked before anything is allocated: a spec (or --scale) that asks for
 * billions of events is an error, not tens of GB of memory. */
static enum tfd_status within_cap(const struct spec *sp, double scale, const char *path,
				  struct tfd_err *err)
{
	double events = (double)sp->steps * scale * sp->hosts * events_per_step(sp);

	if (!(events <= TFD_SYNTH_MAX_EVENTS))
		return tfd_fail(err, TFD_E_LIMIT,
				"%s: the spec asks for about %.0f events (steps x hosts x events "
				"per step); at most %d",
				path, events, TFD_SYNTH_MAX_EVENTS);
	return TFD_OK;
}

enum tfd_status tfd_synth_check(const char *text, size_t len, const char *name, double scale,
				struct tfd_err *err)
{
	struct spec sp;
	enum tfd_status st = tfd_synth_parse_spec_text(text, len, name, &sp, err);

	return st ? st : within_cap(&sp, scale, name, err);
}

enum tfd_status tfd_synth_run(const char *spec_path, const char *out_dir, double scale,
			      struct tfd_synth_result *res, struct tfd_err *err)
{
	struct spec sp;
	enum tfd_status st;
	double want;
	int steps;

	memset(res, 0, sizeof(*res));
	st = tfd_synth_parse_spec(spec_path, &sp, err);
	if (!st)
		st = within_cap(&sp, scale, spec_path, err);
	if (st)
		return st;
	want = (double)sp.steps * scale;
	steps = want < 1 ? 1 : (int)llround(want);
	if (snprintf(res->run_dir, sizeof(res->run_dir), "%s/plugins/profile/%s", out_dir,
		     sp.run) >= (int)sizeof(res->run_dir) - 64) /* room for the host files' names */
		return tfd_fail(err, TFD_E_USAGE,
				"%s: the run directory's path is too long (at most %zu bytes)",
				out_dir, sizeof(res->run_dir) - 64);
	snprintf(res->expect, sizeof(res->expect), "%s", sp.expect);
	snprintf(res->expect_host, sizeof(res->expect_host), "%s", sp.expect_host);
	if (mkdirs(res->run_dir) != 0)
		return tfd_fail(err, TFD_E_IO, "%s: %s", res->run_dir, strerror(errno));
	for (int i = 0; i < sp.hosts; i++) {
		struct host h;
		char name[64], path[sizeof(res->run_dir) + 96];

		memset(&h, 0, sizeof(h));
		h.rng = (sp.seed + 1) * 0x9E3779B97F4A7C15ULL + (uint64_t)i * 7919;
		h.large_ids = sp.large_ids;
		h.dev_reversed = sp.dev_reversed;
		snprintf(name, sizeof(name), "worker-%d", i);
		simulate(&h, &sp, i == sp.slow_host ? sp.slow_factor : 1.0, steps);
		/* each thread's events in TensorFlow's order, in both formats:
		 * the simulation makes a call's children before it, TensorBoard's
		 * traces hold a thread's events by start (the JSON traces had
		 * been written in the simulation's order when alone) */
		for (size_t t = 0; t < h.threads.n; t++) {
			struct thread *th = &h.threads.v[t];

			if (th->ev.n > 1) /* an idle worker has none (and a NULL array) */
				qsort(th->ev.v, th->ev.n, sizeof(*th->ev.v), ev_cmp);
			res->events += th->ev.n;
		}
		if (sp.xplane) {
			snprintf(path, sizeof(path), "%s/%s.xplane.pb", res->run_dir, name);
			st = write_xspace(&h, path, name, &res->bytes, err);
		}
		if (!st && sp.json) {
			snprintf(path, sizeof(path), "%s/%s.trace.json", res->run_dir, name);
			st = write_json(&h, path, &res->bytes, err);
		}
		host_free(&h);
		if (st)
			return st;
		res->hosts++;
	}
	return TFD_OK;
}
