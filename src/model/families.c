/* families.c - the tf.data vocabulary table and the names TensorFlow gives
 * iterators (see families.h).
 *
 * Sources: TensorFlow's dataset ops and their TraceMe names, the
 * Produce/Consume events of the async ops (throughput-model.md 4), and the
 * bottleneck-type table of TensorFlow's removed tool (xprof-reference.md
 * 1.10, exact names as that tool matched them). The rows with Produce and
 * Consume events stay in this order: xprof mode links them in it.
 */
#include <stdio.h>
#include <string.h>

#include "tfd/families.h"

#define ASYNC TFD_FAM_ASYNC
#define XASYNC TFD_FAM_XPROF_ASYNC
#define MAPFN TFD_FAM_MAP_FN
#define ILV TFD_FAM_INTERLEAVE
#define SRC TFD_FAM_SOURCE
#define MULTI TFD_FAM_MULTI_INPUT
#define PASS TFD_FAM_PASS
#define PAR "parallelism deterministic autotune"

const struct tfd_family tfd_families[] = {
    /* async ops with Produce/Consume events, in xprof's linking order */
    {"Prefetch", NULL, ASYNC | XASYNC, "PrefetchProduce", "PrefetchConsume", TFD_FX_OTHER, NULL,
     "buffer_limit"},
    {"ParallelInterleave", "ParallelInterleaveDataset", ASYNC | XASYNC | ILV,
     "ParallelInterleaveProduce", "ParallelInterleaveConsume", TFD_FX_OTHER, NULL,
     "cycle_length block_length " PAR},
    {"ParallelMap", NULL, ASYNC | XASYNC | MAPFN, "ParallelMapProduce", "ParallelMapConsume",
     TFD_FX_OTHER, NULL, PAR},
    {"MapAndBatch", NULL, ASYNC | XASYNC | MAPFN, "MapAndBatchProduce", "MapAndBatchConsume",
     TFD_FX_OTHER, NULL, "batch_size " PAR},
    {"ParseExample", NULL, ASYNC | XASYNC | MAPFN, "ParseExampleProduce", "ParseExampleConsume",
     TFD_FX_OTHER, NULL, PAR},
    {"ParallelBatch", NULL, ASYNC | XASYNC, "ParallelBatchProduce", "ParallelBatchConsume",
     TFD_FX_OTHER, NULL, "batch_size " PAR},
    /* other async ops */
    {"LegacyParallelInterleave", "ExperimentalParallelInterleave", ASYNC | XASYNC | ILV, NULL, NULL,
     TFD_FX_OTHER, NULL, "cycle_length block_length"},
    {"ParallelFilter", NULL, ASYNC | MAPFN, NULL, NULL, TFD_FX_OTHER, NULL, PAR},
    {"DataService", NULL, ASYNC | XASYNC | SRC, NULL, NULL, TFD_FX_DATA_SERVICE, "DataService",
     NULL},
    /* roots */
    {"Model", NULL, TFD_FAM_ROOT, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Root", NULL, TFD_FAM_ROOT, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    /* sources */
    {"TFRecord", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "TFRecord", NULL},
    {"TextLine", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "TextLine", NULL},
    {"FixedLengthRecord", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "FixedLengthRecordV2", NULL},
    {"SSTable", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "SSTable", NULL},
    {"RecordIO", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "RecordIO", NULL},
    {"Spanner", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "Spanner", NULL},
    {"TFColumn", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "TFColumn", NULL},
    {"LMDB", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "LMDB", NULL},
    {"ExternalDataset", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "ExternalDataset", NULL},
    {"CapacitorProto", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "CapacitorProto", NULL},
    {"SleepwalkRemoteDataset", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "SleepwalkRemoteDataset",
     NULL},
    {"StitchedTimelineDataset", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "StitchedTimelineDataset",
     NULL},
    {"DateKeyDataset", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "DateKeyDataset", NULL},
    {"PearModel", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "PearModel", NULL},
    {"Sql", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"TensorSlice", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "TensorSlice", NULL},
    {"FromTensor", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "FromTensor", NULL},
    {"Generator", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "Generator", NULL},
    {"Range", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"SyntheticDatasetOp", NULL, SRC, NULL, NULL, TFD_FX_SOURCE, "SyntheticDatasetOp", NULL},
    {"SparseTensorSlice", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"ListFiles", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"RandomDataset", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Random", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Counter", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    /* tf.data.experimental.CsvDataset (make_csv_dataset's reader) */
    {"CSV", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    /* Dataset.load's reader of one shard of the files Dataset.save wrote */
    {"SnapshotDatasetReader", NULL, SRC, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    /* remote sources */
    {"GuzzlerDataGuzzlerRemoteDataset", NULL, SRC, NULL, NULL, TFD_FX_REMOTE_SOURCE,
     "GuzzlerDataGuzzlerRemoteDataset", NULL},
    {"ReverbDataset", NULL, SRC, NULL, NULL, TFD_FX_REMOTE_SOURCE, "ReverbDataset", NULL},
    {"ReverbEpisodeDataset", NULL, SRC, NULL, NULL, TFD_FX_REMOTE_SOURCE, "ReverbEpisodeDataset",
     NULL},
    {"DatasetSampleGame", NULL, SRC, NULL, NULL, TFD_FX_REMOTE_SOURCE, "DatasetSampleGame", NULL},
    {"Courier", NULL, SRC, NULL, NULL, TFD_FX_REMOTE_SOURCE, "Courier", NULL},
    /* transformations */
    {"Map", NULL, 0, NULL, NULL, TFD_FX_WITH_PARALLEL, "Map", NULL},
    {"Interleave", NULL, 0, NULL, NULL, TFD_FX_WITH_PARALLEL, "Interleave",
     "cycle_length block_length"},
    {"FlatMap", "FlatMapDataset", 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Filter", NULL, 0, NULL, NULL, TFD_FX_WITHOUT_PARALLEL, "Filter", NULL},
    {"FilterByLastComponent", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Batch", NULL, 0, NULL, NULL, TFD_FX_WITHOUT_PARALLEL, "Batch", "batch_size drop_remainder"},
    {"PaddedBatch", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, "batch_size drop_remainder"},
    {"Unbatch", NULL, 0, NULL, NULL, TFD_FX_WITHOUT_PARALLEL, "Unbatch", NULL},
    {"UnbatchV", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Rebatch", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Shuffle", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, "buffer_size"},
    {"ShuffleAndRepeat", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, "buffer_size"},
    {"Repeat", "ForeverRepeat FiniteRepeat", PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"MemoryCache", "MemoryCacheImpl", TFD_FAM_CACHE, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"DiskCache", "DiskCacheImpl FileCache FileCacheImpl", TFD_FAM_CACHE, NULL, NULL, TFD_FX_OTHER,
     NULL, NULL},
    {"Cache", NULL, TFD_FAM_CACHE, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Take", "FiniteTake EmptyTake", PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Skip", "FiniteSkip EmptySkip", PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Shard", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Zip", NULL, MULTI, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Concatenate", NULL, MULTI, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Window", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"GroupByWindow", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"GroupByReducer", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Scan", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"AssertCardinality", NULL, PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"AssertNext", NULL, PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"MaxIntraOpParallelism", NULL, PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"PrivateThreadPool", NULL, PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Snapshot", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    /* snapshot()'s iterator while it writes (no run has read the input to
     * its end) and once it reads what a run committed */
    {"SnapshotWriter", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"SnapshotReader", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Unique", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"DenseToSparseBatch", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Options", NULL, PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    /* Dataset.load: hands on what its reader (an interleave of the shards'
     * readers) makes */
    {"Load", "LoadDataset", PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"ChooseFastestBranch", NULL, MULTI, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"SlidingWindow", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Bucket", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"DirectedInterleave", NULL, MULTI, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"SampleFromDatasets", NULL, MULTI, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"ChooseFromDatasets", NULL, MULTI, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"IgnoreErrors", "Ignore", PASS, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Enumerate", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Padded", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"RegisterDataset", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"TakeWhile", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Rejection", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
    {"Distribute", NULL, 0, NULL, NULL, TFD_FX_OTHER, NULL, NULL},
};
const size_t tfd_nfamilies = sizeof(tfd_families) / sizeof(tfd_families[0]);

const struct tfd_family *tfd_family_lookup(const char *family)
{
	for (size_t i = 0; family && i < tfd_nfamilies; i++)
		if (strcmp(tfd_families[i].name, family) == 0)
			return &tfd_families[i];
	return NULL;
}

bool tfd_family_has(const char *family, unsigned flags)
{
	const struct tfd_family *f = tfd_family_lookup(family);

	return f && (f->flags & flags) == flags;
}

/* name as one of the space-separated words of list */
static bool in_words(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		size_t w = strcspn(p, " ");

		if (w == n && strncmp(p, name, n) == 0)
			return true;
		p += w;
		p += *p == ' ';
	}
	return false;
}

const char *tfd_family_alias(const char *name)
{
	for (size_t i = 0; i < tfd_nfamilies; i++)
		if (in_words(tfd_families[i].aliases, name))
			return tfd_families[i].name;
	return NULL;
}

static const struct tfd_family *event_row(const char *name, bool produce, size_t *index)
{
	size_t k = 0;

	for (size_t i = 0; i < tfd_nfamilies; i++) {
		const char *ev = produce ? tfd_families[i].produce : tfd_families[i].consume;

		if (!ev)
			continue;
		if (strcmp(ev, name) == 0) {
			if (index)
				*index = k;
			return &tfd_families[i];
		}
		k++;
	}
	return NULL;
}

const struct tfd_family *tfd_family_of_produce(const char *name, size_t *index)
{
	return event_row(name, true, index);
}

const struct tfd_family *tfd_family_of_consume(const char *name, size_t *index)
{
	return event_row(name, false, index);
}

/* ---- names ------------------------------------------------------------- */

const char *tfd_iter_short(const char *long_name)
{
	const char *p = long_name, *last = long_name;

	while ((p = strstr(p, "::")) != NULL) {
		p += 2;
		last = p;
	}
	return last;
}

const char *tfd_loop_input_name(const char *name)
{
	/* what may stand between the reduce's iterator and the scan: the
	 * root (Model before TensorFlow 2.7), the prefetch AUTOTUNE injects,
	 * the take_while of a loop that breaks */
	static const char *const wrap[] = {"Root", "Model", "Prefetch", "TakeWhile"};
	const char *p;

	if (strncmp(name, "ReduceIterator::", 16) != 0)
		return NULL;
	p = name + 16;
	for (int k = 0; k <= 4; k++) {
		const char *end = strstr(p, "::");
		size_t n = end ? (size_t)(end - p) : strlen(p), i;

		if (n == 4 && strncmp(p, "Scan", 4) == 0)
			return end ? p : NULL;
		for (i = 0; i < sizeof(wrap) / sizeof(wrap[0]); i++)
			if (strlen(wrap[i]) == n && strncmp(p, wrap[i], n) == 0)
				break;
		if (i == sizeof(wrap) / sizeof(wrap[0]) || !end)
			return NULL;
		p = end + 2;
	}
	return NULL;
}

bool tfd_loop_root_name(const char *name)
{
	return strcmp(name, "ReduceIterator::Root") == 0 ||
	       strcmp(name, "ReduceIterator::Model") == 0;
}

bool tfd_in_loop_input(const char *long_name)
{
	return strncmp(long_name, "Scan::", 6) == 0;
}

const char *tfd_iter_long_name(const char *name)
{
	const char *l = name[0] == 'R' ? tfd_loop_input_name(name) : NULL;

	return l ? l : name;
}

int tfd_iter_parts(const char *name)
{
	int n = 1;
	const char *p = name;

	while ((p = strstr(p, "::")) != NULL) {
		p += 2;
		n++;
	}
	return n;
}

const char *tfd_iter_family(const char *short_name, char *buf, size_t len)
{
	const char *canon;
	size_t n = 0;

	/* copy up to a "[" (input index) or a "/" (Dataset.load's reader of
	 * shard N is SnapshotDatasetReader/_N) */
	while (short_name[n] && short_name[n] != '[' && short_name[n] != '/' && n + 1 < len) {
		buf[n] = short_name[n];
		n++;
	}
	buf[n] = '\0';
	/* drop a trailing V<digits> op version */
	if (n > 2) {
		size_t k = n;

		while (k > 0 && buf[k - 1] >= '0' && buf[k - 1] <= '9')
			k--;
		if (k < n && k > 1 && buf[k - 1] == 'V' && buf[k - 2] >= 'a' && buf[k - 2] <= 'z')
			buf[k - 1] = '\0';
	}
	canon = tfd_family_alias(buf); /* MemoryCacheImpl -> MemoryCache, ... */
	if (canon)
		snprintf(buf, len, "%s", canon);
	return buf;
}

const char *tfd_serial_family(const char *family)
{
	return strncmp(family, "Parallel", 8) == 0 && family[8] ? family + 8 : family;
}

/* The family of path component [c, c + n) into buf. */
static const char *part_family(const char *c, size_t n, char *buf, size_t len)
{
	char name[256];

	snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), c);
	return tfd_iter_family(name, buf, len);
}

const char *tfd_path_next(const char **p, size_t *n, bool skip)
{
	char fam[256];

	while (**p) {
		const char *c = *p, *end = strstr(c, "::");

		*n = end ? (size_t)(end - c) : strlen(c);
		*p = end ? end + 2 : c + *n;
		/* the stage's own name (the last) is never set aside */
		if (!skip || !end || !tfd_family_set_aside(part_family(c, *n, fam, sizeof(fam))))
			return c;
	}
	return NULL;
}

/* The next component's family into buf (tfd_path_next); false at the end. */
static bool next_family(const char **p, char *buf, size_t len, bool skip)
{
	size_t n;
	const char *c = tfd_path_next(p, &n, skip);

	if (!c)
		return false;
	part_family(c, n, buf, len);
	return true;
}

/* Whether a and b name one stage, components made parallel aside and,
 * with skip, the prefetches and pass-through datasets above it too. */
static bool same_stage(const char *a, const char *b, bool skip)
{
	char x[256], y[256];
	bool more_a, more_b;

	for (;;) {
		more_a = next_family(&a, x, sizeof(x), skip);
		more_b = next_family(&b, y, sizeof(y), skip);
		if (!more_a || !more_b)
			return more_a == more_b;
		if (strcmp(tfd_serial_family(x), tfd_serial_family(y)) != 0)
			return false;
	}
}

bool tfd_same_stage_moved(const char *a, const char *b)
{
	return same_stage(a, b, true);
}

bool tfd_same_stage_made_parallel(const char *a, const char *b)
{
	return same_stage(a, b, false);
}

bool tfd_family_set_aside(const char *family)
{
	return strcmp(family, "Prefetch") == 0 || tfd_family_has(family, TFD_FAM_PASS);
}

bool tfd_family_is_async(const char *family)
{
	return tfd_family_has(family, TFD_FAM_ASYNC);
}
