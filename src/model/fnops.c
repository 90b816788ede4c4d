/* fnops.c - the ops inside dataset functions, as a reader follows a
 * thread's events (capbuild.h): which ops a map's function spent its time
 * in, kept as sums per function scope and op name, never as events. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "tfd/imap.h"
#include "tfd/pages.h"

#include "tfd/capbuild.h"
#include "tfd/capture.h"
#include "tfd/err.h"
#include "tfd/graph.h"

void tfd_opscope_open(struct tfd_opscope *s, uint64_t key, bool by_thread, int64_t start,
		      int64_t end)
{
	s->key = key;
	s->by_thread = by_thread;
	s->start = start;
	s->end = end;
	s->last_start = start;
	s->open = end > start;
	s->nops = 0;
}

/* Where the type of the op event name[0..len) starts, or NULL: TensorFlow
 * names an op's event "name:type", the name a path without spaces ("a/b")
 * and the type an identifier ("DecodeJpegV2", "_Send"). */
static bool is_ident(char ch)
{
	return ch == '_' || (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= 'a' && ch <= 'z');
}

bool tfd_op_type_ok(const char *type)
{
	if (!*type || (*type >= '0' && *type <= '9'))
		return false;
	for (; *type; type++)
		if (!is_ident(*type))
			return false;
	return true;
}

static const char *type_at(const char *name, size_t len)
{
	const char *c = name + len;

	while (c > name && is_ident(c[-1]))
		c--;
	if (c == name + len || c - 1 <= name || c[-1] != ':' || c[-2] == ':' ||
	    (*c >= '0' && *c <= '9') || memchr(name, ' ', len))
		return NULL;
	return c;
}

const char *tfd_op_type(const char *name)
{
	return type_at(name, strlen(name));
}

void tfd_op_kind_of(const char *name, struct tfd_op_kind *k)
{
	k->type = tfd_op_type(name);
	k->py = k->type && tfd_op_is_python(k->type);
}

static size_t env_names_limit;

/* TFDOCTOR_MAX_OP_NAMES, a lower limit (the tests' way to reach it). */
static void read_names_limit(void)
{
	const char *v = getenv("TFDOCTOR_MAX_OP_NAMES");
	char *end;
	unsigned long long n = v ? strtoull(v, &end, 10) : 0;

	if (v && *v && !*end && n >= 1 && n < TFD_FN_OP_NAMES)
		env_names_limit = (size_t)n;
}

/* The names o's records may index: names_max when set, else
 * TFDOCTOR_MAX_OP_NAMES when set, else TFD_FN_OP_NAMES. */
static size_t names_limit(const struct tfd_fn_ops *o)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (o->names_max)
		return o->names_max;
	pthread_once(&once, read_names_limit);
	return env_names_limit ? env_names_limit : TFD_FN_OP_NAMES;
}

/* The index of name in o's names, added if new; UINT32_MAX (o->full) when
 * the records index no more. */
static uint32_t name_index(struct tfd_fn_ops *o, const char *name)
{
	size_t k;

	if (imap_get(&o->name_ix, (uint64_t)(uintptr_t)name, &k))
		return (uint32_t)k;
	if (o->nnames >= names_limit(o)) {
		o->full = true;
		return UINT32_MAX;
	}
	if (o->nnames == o->names_cap) {
		o->names_cap = o->names_cap ? 2 * o->names_cap : 16;
		o->names = xrealloc(o->names, o->names_cap * sizeof(*o->names));
	}
	o->names[o->nnames] = name;
	imap_put(&o->name_ix, (uint64_t)(uintptr_t)name, o->nnames);
	return (uint32_t)o->nnames++;
}

/* Room in o for more runs (doubling). */
static void runs_room(struct tfd_fn_ops *o, size_t more)
{
	if (o->nruns + more > o->runs_cap) {
		o->runs_cap = o->nruns + more > 2 * o->runs_cap ? o->nruns + more : 2 * o->runs_cap;
		if (o->runs_cap < 64)
			o->runs_cap = 64;
		o->runs = xrealloc(o->runs, o->runs_cap * sizeof(*o->runs));
	}
}

static void push_run(struct tfd_fn_ops *o, uint64_t key, bool by_thread)
{
	runs_room(o, 1);
	o->runs[o->nruns++] = (struct tfd_fn_op_run){key, (uint32_t)o->n, by_thread};
	o->cut = false;
}

void tfd_fn_ops_reserve(struct tfd_fn_ops *o, size_t n, size_t nruns)
{
	if (n > o->cap) {
		o->v = xrealloc(o->v, n * sizeof(*o->v));
		o->cap = n;
	}
	if (nruns > o->runs_cap) {
		o->runs = xrealloc(o->runs, nruns * sizeof(*o->runs));
		o->runs_cap = nruns;
	}
}

static void room_for(struct tfd_fn_ops *o, size_t more)
{
	if (o->n + more > o->cap) {
		o->cap = o->n + more > 2 * o->cap ? o->n + more : 2 * o->cap;
		if (o->cap < 64)
			o->cap = 64;
		o->v = xrealloc(o->v, o->cap * sizeof(*o->v));
	}
}

/* The record for s's scope and name: the last one when it is theirs (ops
 * of one scope come in a row) and not full, else a new one; SIZE_MAX when
 * the records index no more names. */
static size_t record_for(struct tfd_host *h, const struct tfd_opscope *s, const char *name)
{
	struct tfd_fn_ops *o = &h->fn_ops;
	const struct tfd_fn_op_run *last = o->nruns ? &o->runs[o->nruns - 1] : NULL;
	bool same_run = last && !o->cut && last->key == s->key && last->by_thread == s->by_thread;
	uint32_t ix;

	if (same_run && tfd_fn_op_name(o, o->n - 1) == name &&
	    tfd_fn_op_count(&o->v[o->n - 1]) < TFD_FN_OP_COUNT)
		return o->n - 1;
	if ((ix = name_index(o, name)) == UINT32_MAX)
		return SIZE_MAX;
	if (!same_run)
		push_run(o, s->key, s->by_thread);
	room_for(o, 1);
	o->v[o->n] = (struct tfd_fn_op){0, 0, ix << 8};
	return o->n++;
}

void tfd_fn_ops_free(struct tfd_fn_ops *o)
{
	tfd_pages_free(o->v, o->n * sizeof(*o->v));
	tfd_pages_free(o->runs, o->nruns * sizeof(*o->runs));
	free(o->names);
	imap_free(&o->name_ix);
	memset(o, 0, sizeof(*o));
}

void tfd_fn_ops_insert(struct tfd_fn_ops *o, size_t at, size_t run_at, struct tfd_fn_ops *from,
		       struct tfd_arena *intern, bool give_back)
{
	size_t m = from->n, mr = from->nruns;
	uint32_t *map;
	const uint8_t *done = (const uint8_t *)from->v;

	o->full |= from->full;
	if (!m)
		return;
	/* each of from's names as o's, interned once */
	map = xmalloc(from->nnames * sizeof(*map));
	for (size_t j = 0; j < from->nnames; j++)
		if ((map[j] = name_index(o, intern ? tfd_arena_intern_cstr(intern, from->names[j])
						   : from->names[j])) == UINT32_MAX) {
			free(map); /* (o->full: the read fails) */
			return;
		}
	room_for(o, m);
	memmove(o->v + at + m, o->v + at, (o->n - at) * sizeof(*o->v));
	for (size_t i = 0; i < m; i++) {
		o->v[at + i] = from->v[i];
		o->v[at + i].name_count =
		    map[tfd_fn_op_name_ix(&from->v[i])] << 8 | tfd_fn_op_count(&from->v[i]);
		/* (giving back: from's pages go as they are copied, not all
		 * of them held beside o's copy until from is freed) */
		if (give_back && (i & 0xffff) == 0xffff)
			tfd_pages_release(&done, (const uint8_t *)(from->v + i), 0);
	}
	free(map);
	o->n += m;
	runs_room(o, mr);
	memmove(o->runs + run_at + mr, o->runs + run_at, (o->nruns - run_at) * sizeof(*o->runs));
	for (size_t r = 0; r < mr; r++) {
		o->runs[run_at + r] = from->runs[r];
		o->runs[run_at + r].first += (uint32_t)at;
	}
	o->nruns += mr;
	for (size_t r = run_at + mr; r < o->nruns; r++)
		o->runs[r].first += (uint32_t)m;
}

void tfd_opscope_event(struct tfd_capture *cap, struct tfd_host *h, struct tfd_opscope *s,
		       const char *name, const struct tfd_op_kind *known, int64_t start,
		       int64_t end)
{
	size_t r, name_len;
	int64_t dur;
	const char *type;
	bool py;

	if (!s->open)
		return;
	if (start >= s->end || start < s->last_start) {
		tfd_opscope_reset(s); /* past the scope, or out of order */
		return;
	}
	s->last_start = start;
	if (!known) {
		name_len = strlen(name); /* only for an event inside a scope */
		if (!(type = type_at(name, name_len)))
			return;
		py = tfd_op_is_python(type);
		name = tfd_arena_intern(&cap->arena, name, name_len);
	} else {
		if (!known->type)
			return;
		py = known->py;
	}
	while (s->nops && s->op_end[s->nops - 1] <= start)
		s->nops--;
	if (end > s->end)
		end = s->end;
	dur = end - start;
	if (py) {
		if (h->npy_ops == h->py_ops_cap) {
			h->py_ops_cap = h->py_ops_cap ? 2 * h->py_ops_cap : 64;
			h->py_ops = xrealloc(h->py_ops, h->py_ops_cap * sizeof(*h->py_ops));
		}
		h->py_ops[h->npy_ops++] = (struct tfd_py_op){start, end, s->key, s->by_thread};
	}
	if ((r = record_for(h, s, name)) == SIZE_MAX) {
		tfd_opscope_reset(s); /* (h->fn_ops.full: the read fails) */
		return;
	}
	if (s->nops) /* nested: not its parent's own time */
		tfd_fn_op_add_self(&s->op_host[s->nops - 1]->fn_ops.v[s->op_rec[s->nops - 1]],
				   -dur);
	tfd_fn_op_add_self(&h->fn_ops.v[r], dur);
	h->fn_ops.v[r].name_count++;
	if (s->nops < TFD_OPSCOPE_DEPTH) {
		s->op_end[s->nops] = end;
		s->op_host[s->nops] = h;
		s->op_rec[s->nops++] = r;
	}
}

enum tfd_status tfd_fn_ops_check(const struct tfd_host *h, struct tfd_err *err)
{
	const struct tfd_fn_ops *o = &h->fn_ops;

	if (!o->full)
		return TFD_OK;
	return tfd_fail(err, TFD_E_LIMIT,
			"more than %zu distinct op names inside dataset functions on host '%s'",
			names_limit(o), h->name);
}

void tfd_fn_ops_absorb(struct tfd_capture *cap, struct tfd_host *h, struct tfd_host *ph)
{
	tfd_fn_ops_insert(&h->fn_ops, h->fn_ops.n, h->fn_ops.nruns, &ph->fn_ops, &cap->arena, true);
	tfd_fn_ops_free(&ph->fn_ops);
	if (ph->npy_ops) {
		h->py_ops = xrealloc(h->py_ops, (h->npy_ops + ph->npy_ops) * sizeof(*h->py_ops));
		memcpy(h->py_ops + h->npy_ops, ph->py_ops, ph->npy_ops * sizeof(*h->py_ops));
		h->npy_ops += ph->npy_ops;
		h->py_ops_cap = h->npy_ops;
	}
	free(ph->py_ops);
	ph->py_ops = NULL;
	ph->npy_ops = ph->py_ops_cap = 0;
}

static int by_time(const void *a, const void *b)
{
	const struct tfd_op_total *x = a, *y = b;

	if (x->self_ns != y->self_ns)
		return x->self_ns > y->self_ns ? -1 : 1;
	return strcmp(x->type, y->type);
}

size_t tfd_fn_ops_by_type(const struct tfd_op_named *v, size_t n, struct tfd_op_total **out)
{
	struct imap idx = {0}; /* hash of the type -> a chain of totals */
	/* a record's name (interned: the host's records repeat a few) -> its
	 * total + 1, 0 for a name without a type */
	struct imap by_name = {0};
	struct tfd_op_total *t = NULL;
	size_t nt = 0, cap = 0;

	for (size_t i = 0; i < n; i++) {
		const char *type;
		uint64_t hsh;
		size_t k;

		if (imap_get(&by_name, (uint64_t)(uintptr_t)v[i].name, &k)) {
			if (k) {
				t[k - 1].self_ns += v[i].self_ns;
				t[k - 1].count += v[i].count;
			}
			continue;
		}
		if (!(type = tfd_op_type(v[i].name))) {
			imap_put(&by_name, (uint64_t)(uintptr_t)v[i].name, 0);
			continue;
		}
		hsh = tfd_fnv_text(TFD_FNV_BASIS, type);
		/* another type under the same hash takes the next key */
		while (imap_get(&idx, hsh, &k) && strcmp(t[k].type, type) != 0)
			hsh++;
		if (!imap_get(&idx, hsh, &k)) {
			if (nt == cap) {
				cap = cap ? 2 * cap : 16;
				t = xrealloc(t, cap * sizeof(*t));
			}
			k = nt++;
			t[k] = (struct tfd_op_total){type, v[i].name, 0, 0};
			imap_put(&idx, hsh, k);
		}
		t[k].self_ns += v[i].self_ns;
		t[k].count += v[i].count;
		imap_put(&by_name, (uint64_t)(uintptr_t)v[i].name, k + 1);
	}
	imap_free(&idx);
	imap_free(&by_name);
	if (nt > 1)
		qsort(t, nt, sizeof(*t), by_time);
	*out = t;
	return nt;
}

void tfd_fn_ops_code(struct tfd_host *h, const struct tfd_exec_sums *x)
{
	struct tfd_fn_ops *o = &h->fn_ops;
	size_t k = 0, kr = 0;

	if (!x || !x->coded || !x->key)
		return; /* (no keys: they went, and the records were coded then) */
	for (size_t r = 0; r < o->nruns; r++) {
		struct tfd_fn_op_run run = o->runs[r];
		size_t end = tfd_fn_op_run_end(o, r);

		if (!run.by_thread && !(run.key = tfd_exec_code(x, run.key)))
			continue; /* a step the table does not hold: dropped */
		run.first = (uint32_t)k;
		for (size_t i = o->runs[r].first; i < end; i++)
			o->v[k++] = o->v[i];
		o->runs[kr++] = run;
	}
	o->n = k;
	o->nruns = kr;
	for (size_t i = 0; i < h->npy_ops; i++)
		if (!h->py_ops[i].by_thread)
			h->py_ops[i].fn = tfd_exec_code(x, h->py_ops[i].fn);
}

/* ---- once the host is read: per function thread ----------------------- */

/* The index key of a record's (key, by_thread): a thread's id is hashed
 * apart from the step ids; a chain is checked record by record. */
static uint64_t index_key(uint64_t key, bool by_thread)
{
	return by_thread ? imap_hash(key ^ 0x9e3779b97f4a7c15ull) : key;
}

struct resolve {
	struct tfd_host *h;
	struct imap head; /* index key -> the last run of it */
	int *next;	  /* per run: the run before of the same index key, -1 */
	/* step ids coded (struct tfd_exec_sums; every run's below ncodes):
	 * by code, in arrays, where the maps' probes were a real capture's
	 * cache misses (its last run + 1, its function; 0: none) */
	uint32_t *head_code;
	uint64_t *fn_code;
	size_t ncodes;
	struct imap at; /* (thread, iterator, name) -> index in the sums */
	bool *thread_done;
	size_t cap;	   /* of the sums */
	struct imap fn_of; /* index key -> the function (tfd_py_op.fn) */
	struct imap stage; /* an inline iterator's name -> its stage's (fn) */
};

/* The function (tfd_py_op.fn) of calls made inline from iterator iter:
 * its stage's, all its instances together ([0]::Map .. [3]::Map of an
 * interleave's inputs are one map). */
static uint64_t inline_fn(struct resolve *rs, const char *iter)
{
	size_t fn;
	char *path;

	if (imap_get(&rs->stage, (uint64_t)(uintptr_t)iter, &fn))
		return fn;
	path = tfd_iter_stage_path(iter);
	fn = (size_t)(tfd_fnv_text(TFD_FNV_BASIS, path) | 1ull << 63);
	free(path);
	imap_put(&rs->stage, (uint64_t)(uintptr_t)iter, fn);
	return fn;
}

/* The last run of (key, by_thread) in *i; false: none. */
static bool head_get(const struct resolve *rs, uint64_t key, bool by_thread, size_t *i)
{
	if (!by_thread && rs->ncodes) {
		if (key >= rs->ncodes || !rs->head_code[key])
			return false;
		*i = rs->head_code[key] - 1;
		return true;
	}
	return imap_get(&rs->head, index_key(key, by_thread), i);
}

static void head_put(struct resolve *rs, uint64_t key, bool by_thread, size_t i)
{
	if (!by_thread && rs->ncodes)
		rs->head_code[key] = (uint32_t)i + 1;
	else
		imap_put(&rs->head, index_key(key, by_thread), i);
}

/* The function of (key, by_thread)'s Python ops in *fn (0: none). */
static bool fn_get(const struct resolve *rs, uint64_t key, bool by_thread, size_t *fn)
{
	if (!by_thread && rs->ncodes) {
		*fn = key < rs->ncodes ? (size_t)rs->fn_code[key] : 0;
		return *fn != 0;
	}
	return imap_get(&rs->fn_of, index_key(key, by_thread), fn);
}

static void fn_put(struct resolve *rs, uint64_t key, bool by_thread, size_t fn)
{
	if (!by_thread && rs->ncodes)
		rs->fn_code[key] = fn;
	else
		imap_put(&rs->fn_of, index_key(key, by_thread), fn);
}

/* Add record o to the sum of (thread t, iterator iter, its name). */
static void add_sum(struct resolve *rs, uint32_t t, const char *iter, const struct tfd_fn_op *o)
{
	struct tfd_host *h = rs->h;
	const char *name = h->fn_ops.names[tfd_fn_op_name_ix(o)];
	uint64_t k =
	    imap_hash((uint64_t)(uintptr_t)name ^ imap_hash((uint64_t)(uintptr_t)iter)) ^ t;
	size_t j;

	/* another (thread, iterator, name) under the same key takes the next one */
	for (;; k++) {
		if (!imap_get(&rs->at, k, &j)) {
			if (h->nfn_sums == rs->cap) {
				rs->cap = rs->cap ? 2 * rs->cap : 16;
				h->fn_sums = xrealloc(h->fn_sums, rs->cap * sizeof(*h->fn_sums));
			}
			j = h->nfn_sums++;
			h->fn_sums[j] = (struct tfd_fn_op_sum){t, iter, name, 0, 0};
			imap_put(&rs->at, k, j);
			break;
		}
		if (h->fn_sums[j].thread == t && h->fn_sums[j].iter == iter &&
		    h->fn_sums[j].name == name)
			break;
	}
	h->fn_sums[j].self_ns += tfd_fn_op_self(o);
	h->fn_sums[j].count += tfd_fn_op_count(o);
}

/* The records of function event e on thread t to that thread's sums, or
 * (called inline from iterator call iter) to the iterator's. */
static void add_function(struct resolve *rs, uint32_t t, const struct tfd_event *e,
			 const char *iter)
{
	const struct tfd_host *h = rs->h;
	bool by_thread = !(e->flags & TFD_EVF_ID);
	uint64_t key = by_thread ? (uint64_t)h->threads[t].id : e->id;
	size_t i, fn;

	if (!head_get(rs, key, by_thread, &i))
		return;
	/* the first function event of a scope names its Python ops' function */
	if (!fn_get(rs, key, by_thread, &fn))
		fn_put(rs, key, by_thread, iter ? (size_t)inline_fn(rs, iter) : (size_t)t + 1);
	if (by_thread) { /* a Run without a step id: its thread's, once */
		if (rs->thread_done[t])
			return;
		rs->thread_done[t] = true;
	}
	/* its records, the last first */
	for (int r = (int)i; r >= 0; r = rs->next[r]) {
		const struct tfd_fn_op_run *run = &h->fn_ops.runs[r];

		if (run->key != key || run->by_thread != by_thread)
			continue;
		for (size_t j = tfd_fn_op_run_end(&h->fn_ops, (size_t)r); j-- > run->first;)
			add_sum(rs, iter ? TFD_FN_INLINE : t, iter, &h->fn_ops.v[j]);
	}
}

/* A thread's dataset-function events in time order: those called inline
 * from an iterator call go to that call's iterator (a sequential map's
 * function), the others to the thread. */
struct open_calls {
	int64_t *end;
	const char **name;
	size_t n, cap;
};

static void resolve_thread(struct resolve *rs, uint32_t t, struct open_calls *oc)
{
	const struct tfd_host *h = rs->h;
	struct tfd_ev_mcursor cur;
	struct tfd_event ev;

	oc->n = 0;
	for (tfd_evm_begin_times(&cur, h, t); tfd_evm_next(&cur, &ev);) {
		while (oc->n && oc->end[oc->n - 1] <= ev.start_ns)
			oc->n--;
		if (ev.kind == TFD_EV_ITERATOR) {
			if (oc->n == oc->cap) {
				oc->cap = oc->cap ? 2 * oc->cap : 64;
				oc->end = xrealloc(oc->end, oc->cap * sizeof(*oc->end));
				oc->name = xrealloc(oc->name, oc->cap * sizeof(*oc->name));
			}
			oc->end[oc->n] = ev.start_ns + ev.dur_ns;
			oc->name[oc->n++] = ev.sig->name;
		} else if (ev.kind == TFD_EV_FUNCTION) {
			add_function(rs, t, &ev, oc->n ? oc->name[oc->n - 1] : NULL);
		}
	}
	tfd_evm_end(&cur);
}

/* The step ids coded as the XSpace reader codes them (tfd_exec_code()),
 * every record's among them, and not few against the codes: the records'
 * heads and the functions by code (rs->ncodes set), else in the maps. */
static void by_code(struct resolve *rs)
{
	const struct tfd_host *h = rs->h;
	const struct tfd_fn_ops *o = &h->fn_ops;
	const struct tfd_exec_sums *x = h->exec_sums;
	size_t n = x && x->coded ? x->cap + 2 : 0, keyed = 0;

	for (size_t r = 0; r < o->nruns && n; r++)
		if (!o->runs[r].by_thread && o->runs[r].key >= n)
			n = 0;
		else if (!o->runs[r].by_thread)
			keyed += tfd_fn_op_run_end(o, r) - o->runs[r].first;
	/* (12 bytes a code against an entry of each map per step) */
	if (!n || keyed < n / 8 || o->nruns >= UINT32_MAX)
		return;
	rs->head_code = xcalloc(n, sizeof(*rs->head_code));
	rs->fn_code = xcalloc(n, sizeof(*rs->fn_code));
	rs->ncodes = n;
}

/* The host's records summed by op type (fn_op_types): summed by name
 * first, the names in the order of their first records. */
static void host_by_type(struct tfd_host *h)
{
	const struct tfd_fn_ops *o = &h->fn_ops;
	struct tfd_op_named *named = xcalloc(o->nnames + 1, sizeof(*named));
	size_t *slot = xmalloc((o->nnames + 1) * sizeof(*slot)), k = 0;

	for (size_t i = 0; i < o->nnames; i++)
		slot[i] = SIZE_MAX;
	for (size_t i = 0; i < o->n; i++) {
		size_t *at = &slot[tfd_fn_op_name_ix(&o->v[i])];

		if (*at == SIZE_MAX) {
			*at = k;
			named[k++].name = tfd_fn_op_name(o, i);
		}
		named[*at].self_ns += tfd_fn_op_self(&o->v[i]);
		named[*at].count += tfd_fn_op_count(&o->v[i]);
	}
	free(h->fn_op_types);
	h->nfn_op_types = tfd_fn_ops_by_type(named, k, &h->fn_op_types);
	free(named);
	free(slot);
}

void tfd_fn_ops_resolve(struct tfd_host *h)
{
	struct resolve rs;
	struct open_calls oc = {NULL, NULL, 0, 0};
	const struct tfd_fn_ops *o = &h->fn_ops;

	if (!o->n) {
		for (size_t i = 0; i < h->npy_ops; i++)
			h->py_ops[i].fn = h->py_ops[i].by_thread = 0;
		tfd_fn_ops_free(&h->fn_ops);
		return;
	}
	memset(&rs, 0, sizeof(rs));
	rs.h = h;
	host_by_type(h);
	rs.next = xmalloc(o->nruns * sizeof(*rs.next));
	rs.thread_done = xcalloc(h->nthreads + 1, sizeof(bool));
	by_code(&rs);
	for (size_t r = 0; r < o->nruns; r++) {
		size_t prev;

		rs.next[r] =
		    head_get(&rs, o->runs[r].key, o->runs[r].by_thread, &prev) ? (int)prev : -1;
		head_put(&rs, o->runs[r].key, o->runs[r].by_thread, r);
	}
	for (size_t t = 0; t < h->nthreads; t++)
		if (h->threads[t].kinds & TFD_KIND_BIT(TFD_EV_FUNCTION))
			resolve_thread(&rs, (uint32_t)t, &oc);
	for (size_t i = 0; i < h->npy_ops; i++) {
		struct tfd_py_op *p = &h->py_ops[i];
		size_t fn = 0;

		if ((p->by_thread || p->fn) && !fn_get(&rs, p->fn, p->by_thread, &fn))
			fn = 0;
		p->fn = fn;
		p->by_thread = false;
	}
	free(oc.end);
	free(oc.name);
	free(rs.next);
	free(rs.thread_done);
	free(rs.head_code);
	free(rs.fn_code);
	imap_free(&rs.head);
	imap_free(&rs.at);
	imap_free(&rs.fn_of);
	imap_free(&rs.stage);
	/* the sums are all that is read from here on */
	tfd_fn_ops_free(&h->fn_ops);
}

bool tfd_op_is_python(const char *type)
{
	return strcmp(type, "EagerPyFunc") == 0 || strcmp(type, "PyFunc") == 0 ||
	       strcmp(type, "PyFuncStateless") == 0;
}

bool tfd_op_is_random(const char *type)
{
	/* control flow and calls that share the prefixes */
	static const char *const control[] = {"StatelessIf", "StatelessWhile", "StatelessCase",
					      "StatefulPartitionedCall"};
	static const char *const prefix[] = {"Stateless",
					     "Stateful",
					     "Rng",
					     "Multinomial",
					     "TruncatedNormal",
					     "ParameterizedTruncatedNormal",
					     "SampleDistortedBoundingBox",
					     "NonDeterministicInts"};

	for (size_t i = 0; i < sizeof(control) / sizeof(*control); i++)
		if (strcmp(type, control[i]) == 0)
			return false;
	for (size_t i = 0; i < sizeof(prefix) / sizeof(*prefix); i++)
		if (strncmp(type, prefix[i], strlen(prefix[i])) == 0)
			return true;
	return strstr(type, "Random") != NULL;
}
