"""The catalog's tf.data pipelines: real input pipelines of small CPU training
jobs, each with a planted bottleneck (or none: about a third are not
input-bound).

A case is a builder `build(k)` that returns the training dataset for the
knobs `k` (a dict: the case's defaults updated by an intervention), the
step's compute (`train_ms`, or a Keras model's width `train_units`), and the truth's candidates: for each stage
a user could speed up, the knob change that makes it cheaper (its work
halved, its parallelism raised) and a regex that names the stage in
tfdoctor's long names. `fixes` maps a tfdoctor finding class to the change
that finding's own code snippet makes to this pipeline.

Stage costs are real work: matmul chains (`burn`), string ops, PNG decode,
TFRecord parsing; slow storage is a waiting map inside the
reader (a numpy_function that sleeps: the thread waits without holding a
core, as a read from a slow disk does).
"""

import os
import shutil
import time

import numpy as np
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE
N = 10**7  # elements: the catalog never runs out


MM_US = 20.0  # one 128x128 matmul on one core of the catalog's machine, about


def burn(x, ms):
    """About `ms` milliseconds of one core's matmul work, tied to x. The
    draw from tf.random makes the function stateful, as an augmentation
    is: TensorFlow then keeps a map without num_parallel_calls sequential
    (a stateless one it would parallelize itself)."""
    n = int(round(ms * 1000.0 / MM_US))
    noise = tf.random.uniform(()) * 0.0
    if n <= 0:
        return x + tf.cast(noise, x.dtype)
    m = tf.fill((128, 128), 1.0 / 128.0) + tf.cast(tf.reduce_sum(x), tf.float32) * 0.0
    for _ in range(n):
        m = tf.linalg.matmul(m, m) + 1.0 / 128.0
    return x + tf.cast(tf.reduce_sum(m) * 0.0 + noise, x.dtype)


def feature(i):
    """An element: a float vector derived from an int64 index."""
    return tf.fill((16,), tf.cast(i % 97, tf.float32) / 97.0)


_DATA = os.environ.get("TFD_TF_DATA", "build/real/data")


def record_files(name, n_files, per_file, features):
    """TFRecord files on local disk (name % file number), written once:
    record r of file f the Example of features(f, r), a feature dict."""
    os.makedirs(_DATA, exist_ok=True)
    paths = []
    for f in range(n_files):
        p = os.path.join(_DATA, name % f)
        paths.append(p)
        if os.path.exists(p):
            continue
        with tf.io.TFRecordWriter(p + ".tmp") as w:
            for r in range(per_file):
                ex = tf.train.Example(features=tf.train.Features(feature=features(f, r)))
                w.write(ex.SerializeToString())
        os.replace(p + ".tmp", p)
    return paths


def tfrecord_files(n_files=4, per_file=256):
    """Each record a serialized Example with a 16-float feature and a label."""
    return record_files("part-%02d.tfrecord", n_files, per_file, lambda f, r: {
        "x": tf.train.Feature(float_list=tf.train.FloatList(
            value=[float((f * per_file + r) % 97) / 97.0] * 16)),
        "y": tf.train.Feature(int64_list=tf.train.Int64List(value=[r % 2])),
    })


FEATURES = {
    "x": tf.io.FixedLenFeature([16], tf.float32),
    "y": tf.io.FixedLenFeature([], tf.int64),
}


def parse(rec):
    return tf.io.parse_single_example(rec, FEATURES)["x"]


def png_images(n=64):
    """Small PNG images encoded once (decode is the map's cost)."""
    rng = np.random.default_rng(1)
    imgs = rng.integers(0, 255, size=(n, 96, 96, 3), dtype=np.uint8)
    return [tf.io.encode_png(im).numpy() for im in imgs]


def decode(png, units):
    im = tf.io.decode_png(png, channels=3)
    im = tf.image.resize(im, (64, 64))
    v = tf.reduce_mean(tf.reshape(im, (-1, 16)), axis=0) / 255.0
    return burn(v, units)


def texts(n=256):
    rng = np.random.default_rng(2)
    words = ["tensor", "flow", "data", "input", "pipeline", "batch", "map", "cache"]
    return [" ".join(rng.choice(words, size=int(rng.integers(20, 60)))) for _ in range(n)]


def tokenize(s, reps):
    """String work: split, regex, hash; `reps` rounds of it."""
    for _ in range(int(reps)):
        s = tf.strings.regex_replace(s, "a", "a")
    toks = tf.strings.split(s)
    ids = tf.strings.to_hash_bucket_fast(toks, 1000)
    # stateful, as a random augmentation is: TensorFlow keeps it sequential
    return tf.cast(ids, tf.float32) / 1000.0 + tf.random.uniform(()) * 0.0


def par(v):
    """A parallelism knob: None is a sequential map."""
    return None if v in (None, 0) else (AUTOTUNE if v == "auto" else int(v))


def maybe_prefetch(ds, k):
    return ds.prefetch(k["prefetch"]) if k.get("prefetch") else ds


def maybe_pool(ds, k):
    """A private thread pool of k["pool"] threads (0 or none: tf.data's own)."""
    if not k.get("pool"):
        return ds
    o = tf.data.Options()
    o.threading.private_threadpool_size = k["pool"]
    return ds.with_options(o)


def _vec_map(ds, k, units_key="map_ms", par_key="map_par"):
    """map then batch, or (vectorize) batch then one map per batch."""
    if k.get("vectorize"):
        ds = ds.batch(k["batch"])
        return ds.map(lambda b: burn(b, k[units_key] * 2), num_parallel_calls=par(k[par_key]))
    ds = ds.map(lambda x: burn(x, k[units_key]), num_parallel_calls=par(k[par_key]))
    return ds.batch(k["batch"])


# ---- the cases -------------------------------------------------------------
# Each: name -> dict(build, defaults, train_ms | train_units, candidates, fixes, loop,
# covers, planted). candidates: {label: (knob change, stage regex)}.
CASES = {}


def case(name, **kw):
    kw.setdefault("loop", "custom")
    kw.setdefault("fixes", {})
    kw.setdefault("candidates", {})
    CASES[name] = kw
    return kw


def _opts_no_fusion(ds):
    o = tf.data.Options()
    o.experimental_optimization.map_and_batch_fusion = False
    return ds.with_options(o)


# 1. TFRecord -> parse -> heavy sequential map -> batch -> prefetch
def b_tfrecord_seq_map(k):
    ds = tf.data.TFRecordDataset(tfrecord_files()).repeat().map(parse)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    ds = _opts_no_fusion(ds.batch(k["batch"]))
    return maybe_prefetch(ds, k)


case("tfrecord_seq_map", build=b_tfrecord_seq_map,
     defaults=dict(map_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the sequential map (burn)",
     covers=["TFRecord", "map sequential", "batch", "prefetch"],
     candidates={"map": ({"map_ms": 0.75}, r"::(ParallelMapV2|Map)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"},
            "parallel_at_limit": {"map_ms": 0.75}})


# 2. the same, map AUTOTUNE, heavier step: not input-bound
case("tfrecord_autotune_ok", build=b_tfrecord_seq_map,
     defaults=dict(map_ms=0.2, map_par="auto", batch=8, prefetch=AUTOTUNE),
     train_ms=15, planted=None,
     covers=["TFRecord", "map AUTOTUNE", "prefetch AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.1}, r"::ParallelMapV2$")})


# 3. from_tensor_slices -> map with a fixed num_parallel_calls=1
def b_slices_fixed(k):
    ds = tf.data.Dataset.from_tensor_slices(np.arange(4096, dtype=np.int64)).repeat()
    ds = ds.map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k)


case("slices_fixed_par1", build=b_slices_fixed,
     defaults=dict(map_ms=1.5, map_par=1, batch=8, prefetch=2),
     train_ms=6, planted="the map's one fixed worker",
     covers=["from_tensor_slices", "map num_parallel_calls=1"],
     candidates={"map": ({"map_ms": 0.75}, r"::ParallelMapV2$")},
     fixes={"fixed_parallelism": {"map_par": "auto"}, "sequential_map": {"map_par": "auto"},
            "parallel_at_limit": {"map_ms": 0.75}})


# 4. from_generator: a Python generator doing per-element Python work
def b_generator(k):
    spin = k["gen_spin"]

    def gen():
        i = 0
        while True:
            acc = 0
            for j in range(spin):
                acc += j * j
            yield np.full((16,), (i + acc * 0) % 97 / 97.0, dtype=np.float32)
            i += 1

    if k.get("gen_to_slices"):
        ds = tf.data.Dataset.from_tensor_slices(
            np.tile(np.arange(97, dtype=np.float32)[:, None] / 97.0, (1, 16))).repeat()
    elif k.get("gen_shards"):  # TFD-S03's code: shards of the generator interleaved
        sig = tf.TensorSpec((16,), tf.float32)
        ds = tf.data.Dataset.range(k["gen_shards"]).interleave(
            lambda i: tf.data.Dataset.from_generator(gen, output_signature=sig),
            num_parallel_calls=AUTOTUNE, deterministic=False)
    else:
        ds = tf.data.Dataset.from_generator(
            gen, output_signature=tf.TensorSpec((16,), tf.float32))
    ds = ds.batch(k["batch"])
    return maybe_prefetch(ds, k)


case("generator_source", build=b_generator,
     defaults=dict(gen_spin=50000, batch=8, prefetch=2),
     train_ms=6, planted="the Python generator",
     covers=["from_generator"],
     candidates={"generator": ({"gen_spin": 25000}, r"Generator|FlatMap")},
     fixes={"python_generator": {"gen_shards": 2}, "python_gil": {"gen_to_slices": True}})


# 5. tf.py_function map doing Python work (holds the GIL), parallel
def b_py_map(k):
    spin = k["py_spin"]

    def py(x):
        acc = 0
        for j in range(spin):
            acc += j * j
        return x.numpy() + np.float32(acc * 0)

    ds = tf.data.Dataset.range(N).map(feature)
    if k.get("py_to_tf"):
        ds = ds.map(lambda x: burn(x, 1), num_parallel_calls=par(k["map_par"]))
    else:
        def f(x):
            y = tf.py_function(py, [x], tf.float32)
            y.set_shape((16,))
            return y
        ds = ds.map(f, num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k)


case("py_function_map", build=b_py_map,
     defaults=dict(py_spin=40000, map_par="auto", batch=8, prefetch=2),
     train_ms=6, planted="the Python function inside the map (GIL)",
     covers=["tf.py_function", "map AUTOTUNE"],
     candidates={"map": ({"py_spin": 20000}, r"::ParallelMapV2$")},
     fixes={"python_function": {"py_to_tf": True}, "python_gil": {"py_to_tf": True},
            "fixed_parallelism": {"map_par": 8}, "parallel_at_limit": {"py_spin": 20000}})


# 6. numpy_function that waits (I/O-like, releases the GIL), one worker
def b_numpy_wait(k):
    import time as _t
    d = k["wait_ms"] / 1000.0

    def fetch(x):
        _t.sleep(d)
        return x

    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: tf.ensure_shape(tf.numpy_function(fetch, [x], tf.float32), (16,)),
                num_parallel_calls=par(k["map_par"]))
    return maybe_pool(maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k), k)


case("numpy_function_io", build=b_numpy_wait,
     defaults=dict(wait_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the waiting numpy_function in a sequential map",
     covers=["tf.numpy_function", "map sequential"],
     candidates={"map": ({"wait_ms": 0.75}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"},
            "python_function": {"map_par": "auto"}})


# 7. interleave over files, sequential, each reader slow (Sleep)
def b_interleave(k):
    files = tf.data.Dataset.from_tensor_slices(tfrecord_files()).repeat()

    d = k["read_us"] / 1e6

    def wait(rec):
        time.sleep(d)  # a slow disk: the thread waits, no core is busy
        return rec

    def read(f):
        r = tf.data.TFRecordDataset(f)
        return r.map(lambda rec: tf.ensure_shape(tf.numpy_function(wait, [rec], tf.string), ()),
                     num_parallel_calls=par(k.get("read_par")))

    ds = files.interleave(read, cycle_length=k["cycle"], block_length=1,
                          num_parallel_calls=par(k["il_par"]))
    ds = ds.map(parse, num_parallel_calls=AUTOTUNE).batch(k["batch"])
    return maybe_pool(maybe_prefetch(ds, k), k)


case("interleave_seq_slow_read", build=b_interleave,
     defaults=dict(read_us=1500, cycle=4, il_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the readers inside a sequential interleave",
     covers=["interleave sequential", "cycle_length", "TFRecord", "slow storage"],
     candidates={"read": ({"read_us": 750}, r"Interleave|::Map$|TFRecord")},
     fixes={"sequential_interleave": {"il_par": "auto"}, "slow_source": {"il_par": "auto"},
            "fixed_parallelism": {"il_par": "auto"}, "python_function": {"read_par": "auto"}})


# 8. parallel interleave keeping up: not input-bound
case("interleave_parallel_ok", build=b_interleave,
     defaults=dict(read_us=500, cycle=4, il_par="auto", batch=8, prefetch=2),
     train_ms=10, planted=None,
     covers=["interleave parallel"],
     candidates={"read": ({"read_us": 250}, r"Interleave|::Map$|TFRecord")})


# 9/10. cache after a heavy map: first epoch (filling) and second (served)
def b_cache(k):
    ds = tf.data.Dataset.range(k["n_elems"]).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    ds = ds.cache().repeat().batch(k["batch"])
    return maybe_prefetch(ds, k)


case("cache_first_epoch", build=b_cache,
     defaults=dict(n_elems=100000, map_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the map before a cache that is still filling",
     covers=["cache (first epoch)"],
     candidates={"map": ({"map_ms": 0.75}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"}})

case("cache_second_epoch", build=b_cache,
     defaults=dict(n_elems=256, map_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted=None, warm_steps=80,
     covers=["cache (second epoch)"],
     candidates={"map": ({"map_ms": 0.75}, r"::(Map|ParallelMapV2)$")})


# 11. shuffle with a large buffer and a light map: not input-bound
def b_shuffle(k):
    ds = tf.data.Dataset.range(N).map(feature, num_parallel_calls=AUTOTUNE)
    ds = ds.shuffle(k["buffer"]).batch(k["batch"])
    return maybe_prefetch(ds, k)


case("shuffle_ok", build=b_shuffle,
     defaults=dict(buffer=4096, batch=8, prefetch=2),
     train_ms=6, planted=None, covers=["shuffle"],
     candidates={"shuffle": ({"buffer": 512}, r"::Shuffle$")})


# 12. variable-length text: sequential tokenizing map -> padded_batch
def b_text(k):
    ds = tf.data.Dataset.from_tensor_slices(texts()).repeat()
    ds = ds.map(lambda s: tokenize(s, k["str_reps"]), num_parallel_calls=par(k["map_par"]))
    ds = ds.padded_batch(k["batch"], padded_shapes=(80,))
    return maybe_prefetch(ds, k)


case("padded_batch_strings", build=b_text,
     defaults=dict(str_reps=500, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the sequential string map",
     covers=["padded_batch", "string ops", "map sequential"],
     candidates={"map": ({"str_reps": 250}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "string_heavy": {"str_reps": 250},
            "fixed_parallelism": {"map_par": "auto"}})


# 13. ParallelBatch after an AUTOTUNE map, heavy step: not input-bound
def b_parallel_batch(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=AUTOTUNE)
    ds = ds.batch(k["batch"], num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds, k)


case("parallel_batch_ok", build=b_parallel_batch,
     defaults=dict(map_ms=0.1, batch=8, prefetch=2),
     train_ms=15, planted=None, covers=["ParallelBatch", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.05}, r"::ParallelMapV2$")})


# 14. filter after a heavy sequential map (half the elements dropped)
def b_filter(k):
    ds = tf.data.Dataset.range(N)
    if k.get("filter_first"):  # the predicate reads the index only
        ds = ds.filter(lambda i: i % 2 == 0)
        ds = ds.map(lambda i: burn(feature(i), k["map_ms"]), num_parallel_calls=par(k["map_par"]))
        return maybe_prefetch(ds.batch(k["batch"]), k)
    ds = ds.map(lambda i: (i, burn(feature(i), k["map_ms"])),
                num_parallel_calls=par(k["map_par"]))
    ds = ds.filter(lambda i, x: i % 2 == 0).map(lambda i, x: x)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("filter_seq_map", build=b_filter,
     defaults=dict(map_ms=0.8, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the sequential map before the filter",
     covers=["filter", "map sequential"],
     candidates={"map": ({"map_ms": 0.4}, r"::Filter::(Map|ParallelMapV2)$|::Map\[1\]")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"},
            "filter_late": {"filter_first": True}})


# 15. flat_map expanding each element, then unbatch
def b_flat(k):
    def expand(i):
        return tf.data.Dataset.from_tensors(
            burn(tf.reshape(tf.tile(feature(i), [4]), (4, 16)), k["fm_ms"]))

    ds = tf.data.Dataset.range(N)
    if k.get("fm_to_interleave"):
        ds = ds.interleave(expand, cycle_length=2, num_parallel_calls=AUTOTUNE)
    else:
        ds = ds.flat_map(expand)
    ds = ds.unbatch().batch(k["batch"])
    return maybe_prefetch(ds, k)


case("flat_map_unbatch", build=b_flat,
     defaults=dict(fm_ms=5, batch=8, prefetch=2),
     train_ms=6, planted="the work inside flat_map",
     covers=["flat_map", "unbatch"],
     candidates={"flat_map": ({"fm_ms": 2.5}, r"FlatMap")},
     fixes={"sequential_interleave": {"fm_to_interleave": True},
            "sequential_transformation": {"fm_to_interleave": True}})


# 16. zip of two branches, the second's map three times slower
def b_zip(k):
    a = tf.data.Dataset.range(N).map(lambda i: burn(feature(i), k["a_ms"]))
    b = tf.data.Dataset.range(N).map(lambda i: burn(feature(i), k["b_ms"]),
                                     num_parallel_calls=par(k["b_par"]))
    ds = tf.data.Dataset.zip((a, b)).map(lambda x, y: x + y)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("zip_slow_branch", build=b_zip,
     defaults=dict(a_ms=0.5, b_ms=1.5, b_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the second zip branch's map",
     covers=["zip"],
     candidates={"branch0": ({"a_ms": 0.25}, r"Zip\[0\]::"),
                 "branch1": ({"b_ms": 0.75}, r"Zip\[1\]::")},
     fixes={"sequential_map": {"b_par": "auto"}, "fixed_parallelism": {"b_par": "auto"}})


# 17. sample_from_datasets of two sources, one slow
def b_sample(k):
    a = tf.data.Dataset.range(N).map(lambda i: burn(feature(i), k["a_ms"]))
    b = tf.data.Dataset.range(N).map(lambda i: burn(feature(i), k["b_ms"]),
                                     num_parallel_calls=par(k["b_par"]))
    ds = tf.data.Dataset.sample_from_datasets([a, b], weights=[0.5, 0.5], seed=1)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("sample_from_datasets", build=b_sample,
     defaults=dict(a_ms=0.3, b_ms=2.5, b_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the slow source's map",
     covers=["sample_from_datasets"],
     candidates={"src0": ({"a_ms": 0.15}, r"\[0\]::"),
                 "src1": ({"b_ms": 1.25}, r"\[1\]::")},
     fixes={"sequential_map": {"b_par": "auto"}, "fixed_parallelism": {"b_par": "auto"}})


# 18. no prefetch at the end; the map is parallel and about as fast as the step
def b_no_prefetch(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    ds = maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k)
    if not k.get("prefetch"):
        # TensorFlow injects a prefetch at the end by itself unless told not
        # to (or autotuning is off): what a pipeline without one looks like
        o = tf.data.Options()
        o.experimental_optimization.inject_prefetch = False
        ds = ds.with_options(o)
    return ds


case("missing_prefetch", build=b_no_prefetch,
     defaults=dict(map_ms=0.6, map_par=2, batch=8, prefetch=0),
     train_ms=6, planted="no prefetch: the step waits for every batch",
     covers=["prefetch missing", "map parallel"],
     candidates={"map": ({"map_ms": 0.3}, r"::ParallelMapV2$")},
     fixes={"missing_prefetch": {"prefetch": 2}, "fixed_parallelism": {"map_par": "auto"},
            "parallel_at_limit": {"map_ms": 0.3}, "prefetch_starved": {"prefetch": -1}})


# 19. prefetch present, heavy step: not input-bound
case("prefetch_compute_bound", build=b_no_prefetch,
     defaults=dict(map_ms=0.2, map_par=2, batch=8, prefetch=2),
     train_ms=15, planted=None, covers=["prefetch present"],
     candidates={"map": ({"map_ms": 0.1}, r"::ParallelMapV2$")})


# 20. map + batch fused by TensorFlow into MapAndBatch, two workers
def b_map_and_batch(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = _vec_map(ds, k)
    return maybe_prefetch(ds, k)


case("map_and_batch_fused", build=b_map_and_batch,
     defaults=dict(map_ms=1.5, map_par=2, batch=8, prefetch=2),
     train_ms=4, planted="the fused map's function at two workers",
     covers=["map_and_batch (fused)"],
     candidates={"map": ({"map_ms": 0.75}, r"MapAndBatch|ParallelMapV2")},
     fixes={"fixed_parallelism": {"map_par": "auto"},
            "parallel_at_limit": {"map_ms": 0.75}})


# 21. a validation iterator beside the training one (custom loop)
def b_val(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k)


def b_val_side(k):
    return tf.data.Dataset.range(N).map(feature).batch(k["batch"]).prefetch(2)


case("validation_iterator", build=b_val, val_build=b_val_side,
     defaults=dict(map_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the training pipeline's sequential map",
     covers=["validation iterator"],
     candidates={"map": ({"map_ms": 0.75}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"}})


# 22/23. Keras fit: input-bound (sequential decode) and compute-bound
def b_keras(k):
    if k.get("precomputed"):
        ds = tf.data.Dataset.from_tensor_slices(
            np.tile(np.arange(97, dtype=np.float32)[:, None] / 97.0, (1, 16))).repeat()
        ds = ds.map(lambda v: (v, tf.reduce_sum(v))).batch(k["batch"])
        return maybe_prefetch(ds, k)
    pngs = png_images()
    ds = tf.data.Dataset.from_tensor_slices(pngs).repeat()
    ds = ds.map(lambda p: decode(p, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    ds = ds.map(lambda v: (v, tf.reduce_sum(v)))
    ds = _opts_no_fusion(ds.batch(k["batch"]))
    return maybe_prefetch(ds, k)


case("keras_fit_decode", build=b_keras, loop="keras",
     defaults=dict(map_ms=1.0, map_par=None, batch=8, prefetch=2),
     train_units=256, planted="the sequential PNG decode map",
     covers=["Keras fit", "decode_png", "map sequential"],
     candidates={"map": ({"map_ms": 0.5}, r"::Map\[0\]|::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "decode_heavy": {"map_ms": 0.5},
            "fixed_parallelism": {"map_par": "auto"}})

case("keras_fit_compute_bound", build=b_keras, loop="keras",
     defaults=dict(precomputed=True, batch=8, prefetch=2),
     train_units=2048, planted=None, covers=["Keras fit", "not input-bound"],
     candidates={})


# 24. custom loop, light pipeline, heavy step: not input-bound
def b_light(k):
    ds = tf.data.Dataset.range(N).map(feature, num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("light_pipeline", build=b_light,
     defaults=dict(batch=8, prefetch=2), train_ms=6, planted=None,
     covers=["custom loop", "not input-bound"], candidates={})


# 25. many tiny elements through a parallel map: per-call overhead; vectorize
def b_tiny(k):
    ds = tf.data.Dataset.range(N)
    if k.get("vectorize"):
        ds = ds.batch(k["batch"]).map(lambda i: tf.cast(i % 97, tf.float32) * 2.0 + 1.0,
                                      num_parallel_calls=AUTOTUNE)
    else:
        ds = ds.map(lambda i: tf.cast(i % 97, tf.float32) * 2.0 + 1.0,
                    num_parallel_calls=AUTOTUNE)
        ds = _opts_no_fusion(ds.batch(k["batch"]))
    return maybe_prefetch(ds, k)


case("tiny_elements_vectorize", build=b_tiny,
     defaults=dict(batch=512, prefetch=2), train_ms=2,
     planted="per-element overhead of a map over tiny elements",
     covers=["vectorize", "map AUTOTUNE"],
     candidates={"map": ({"vectorize": True}, r"::ParallelMapV2$|::Batch$")},
     fixes={"parallel_at_limit": {"vectorize": True}, "fixed_parallelism": {},
            "sequential_transformation": {"vectorize": True}})


# 26. AUTOTUNE map on a saturated CPU: at its limit, make calls cheaper
case("autotune_map_saturated", build=b_no_prefetch,
     defaults=dict(map_ms=1.0, map_par="auto", batch=8, prefetch=2),
     train_ms=3, planted="an AUTOTUNE map with both cores busy",
     covers=["map AUTOTUNE at the CPU limit"],
     candidates={"map": ({"map_ms": 0.5}, r"::ParallelMapV2$")},
     fixes={"parallel_at_limit": {"map_ms": 0.5}, "fixed_parallelism": {"map_par": 8}})


# 27. an AUTOTUNE map in a one-thread private pool: its parallelism says
# many, the pool runs one call at a time
def b_pool(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=AUTOTUNE)
    return maybe_pool(maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k), k)


case("private_pool_one_thread", build=b_pool,
     defaults=dict(map_ms=1.0, pool=1, batch=8, prefetch=2),
     train_ms=5, planted="the map, in a private pool of one thread",
     covers=["private_threadpool_size", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.5}, r"::ParallelMapV2$"),
                 "pool": ({"pool": 2}, r"::ParallelMapV2$")},
     fixes={"small_threadpool": {"pool": 0}, "parallel_at_limit": {"map_ms": 0.5}})


# 28. a parallel interleave whose cycle is too short for slow reads
case("interleave_short_cycle", build=b_interleave,
     defaults=dict(read_us=3000, cycle=2, il_par="auto", batch=8, prefetch=2),
     train_ms=6, planted="the reads: two open files at a time",
     covers=["interleave parallel", "cycle_length", "slow storage"],
     candidates={"read": ({"read_us": 1500}, r"Interleave|::Map$|TFRecord"),
                 "cycle": ({"cycle": 4}, r"Interleave")},
     fixes={"python_waits": {"read_par": 16, "pool": 16},
            "python_function": {"read_par": "auto"}})


# 29. bucket_by_sequence_length after a sequential tokenizing map
def b_bucket(k):
    ds = tf.data.Dataset.from_tensor_slices(texts()).repeat()
    ds = ds.map(lambda s: tokenize(s, k["str_reps"]), num_parallel_calls=par(k["map_par"]))
    # padded to the bucket's bound: three batch shapes, so the step is
    # traced three times in warm-up, not once per length
    ds = ds.bucket_by_sequence_length(lambda t: tf.shape(t)[0], [35, 50, 62],
                                      [k["batch"]] * 4, pad_to_bucket_boundary=True)
    return maybe_prefetch(ds, k)


case("bucket_by_length", build=b_bucket,
     defaults=dict(str_reps=800, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the sequential string map before the buckets",
     covers=["bucket_by_sequence_length", "map sequential"],
     candidates={"map": ({"str_reps": 400}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "string_heavy": {"str_reps": 400},
            "fixed_parallelism": {"map_par": "auto"}})


# 30. two maps: a cheap-looking sequential one first, a parallel one after
def b_two_maps(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["a_ms"]), num_parallel_calls=par(k["a_par"]))
    ds = ds.map(lambda x: burn(x, k["b_ms"]), num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k)


case("two_maps_seq_first", build=b_two_maps,
     defaults=dict(a_ms=0.9, a_par=None, b_ms=0.5, batch=8, prefetch=2),
     train_ms=5, planted="the first, sequential map",
     covers=["two maps", "map sequential"],
     candidates={"map_a": ({"a_ms": 0.45}, r"::Map$|ParallelMapV2\[0\]|::Map::"),
                 "map_b": ({"b_ms": 0.25}, r"::ParallelMapV2$")},
     fixes={"sequential_map": {"a_par": "auto"}, "fixed_parallelism": {"a_par": "auto"}})


# 31. a scan (stateful: one element at a time) whose function does the work;
# the work does not depend on the state, so a parallel map can take it
def b_scan(k):
    if k.get("outer"):  # T08's outer parallelism: a scan per shard, interleaved
        return maybe_prefetch(_opts_no_fusion(_outer(lambda d: _scan_of(d, k)).batch(k["batch"])), k)
    return maybe_prefetch(_opts_no_fusion(_scan_of(tf.data.Dataset.range(N), k).batch(k["batch"])), k)


def _outer(per_shard, n=2):
    """n copies of a pipeline over shards of the input, interleaved."""
    return tf.data.Dataset.range(n).interleave(
        lambda i: per_shard(tf.data.Dataset.range(N).shard(n, i)), cycle_length=n,
        num_parallel_calls=AUTOTUNE, deterministic=False)


def _scan_of(ds, k):
    ds = ds.map(feature)
    if k.get("split"):
        ds = ds.map(lambda x: burn(x, k["scan_ms"]), num_parallel_calls=AUTOTUNE)
        ds = ds.scan(tf.zeros((16,)), lambda s, y: (s * 0.5 + y, y + s * 0.0))
    else:
        ds = ds.scan(tf.zeros((16,)),
                     lambda s, x: (s * 0.5 + x, burn(x, k["scan_ms"]) + s * 0.0))
    return ds


case("scan_heavy_function", build=b_scan,
     defaults=dict(scan_ms=1.0, batch=8, prefetch=2),
     train_ms=5, planted="the work inside the scan's function",
     covers=["scan"],
     candidates={"scan": ({"scan_ms": 0.5}, r"::Scan$")},
     fixes={"sequential_function": {"split": True}, "sequential_transformation": {"outer": True}})


# 32. a filter whose predicate is the expensive part
def b_filter_pred(k):
    def pred(x):
        # about half the elements pass; burn's result (NaN: its matmul
        # chain overflows) takes part, so the work is not pruned
        return tf.logical_and(x[0] < 0.5, tf.reduce_sum(burn(x, k["pred_ms"])) != 12345.0)

    def pipe(d):
        d = d.map(feature)
        if k.get("split"):
            d = d.map(lambda x: (x, pred(x)), num_parallel_calls=AUTOTUNE)
            return d.filter(lambda x, keep: keep).map(lambda x, keep: x)
        return d.filter(pred)

    ds = _outer(pipe) if k.get("outer") else pipe(tf.data.Dataset.range(N))
    return maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k)


case("filter_heavy_predicate", build=b_filter_pred,
     defaults=dict(pred_ms=1.0, batch=8, prefetch=2),
     train_ms=5, planted="the filter's predicate",
     covers=["filter", "predicate work"],
     candidates={"filter": ({"pred_ms": 0.5}, r"::Filter$")},
     fixes={"sequential_function": {"split": True}, "sequential_transformation": {"outer": True}})


# 33. tf.data service in the same process (a dispatcher and one worker):
# the worker runs the pipeline, with a heavy sequential map; the client
# reads from the service
_SERVICE = {}


def _service(workers=1):
    """An in-process tf.data service: a dispatcher and `workers` workers,
    made once per count."""
    if workers not in _SERVICE:
        d = tf.data.experimental.service.DispatchServer()
        ws = [tf.data.experimental.service.WorkerServer(
            tf.data.experimental.service.WorkerConfig(
                dispatcher_address=d.target.split("://")[1])) for _ in range(workers)]
        _SERVICE[workers] = (d, ws)
    return _SERVICE[workers][0]


def b_service(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    ds = _opts_no_fusion(ds.batch(k["batch"]))
    ds = ds.apply(tf.data.experimental.service.distribute(
        processing_mode="parallel_epochs", service=_service(k.get("workers", 1)).target))
    return maybe_prefetch(ds, k)


case("data_service_local", build=b_service,
     defaults=dict(map_ms=2.0, map_par=None, batch=8, prefetch=2),
     train_ms=5, planted="the sequential map on the service's worker",
     covers=["tf.data service"],
     candidates={"map": ({"map_ms": 1.0}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"},
            "slow_data_service": {"workers": 2}})


# 34. MirroredStrategy over two devices (logical CPUs): the dataset is
# distributed, a MultiDeviceIterator feeds a per-device pipeline on each
# device; the host pipeline's map is sequential (TensorFlow fuses it with the
# batch into a MapAndBatch of one worker)
def b_mirrored(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("mirrored_two_devices", build=b_mirrored, loop="mirrored",
     defaults=dict(map_ms=2.0, map_par=None, batch=16, prefetch=2),
     train_ms=2, planted="the host pipeline's sequential map",
     covers=["MirroredStrategy", "MultiDeviceIterator", "map sequential"],
     candidates={"map": ({"map_ms": 1.0}, r"MapAndBatch|::(Map|ParallelMapV2)$")},
     fixes={"fixed_parallelism": {"map_par": "auto"}, "sequential_map": {"map_par": "auto"},
            "parallel_at_limit": {"map_ms": 1.0}})


# 35. two datasets feed each step (a labeled and an unlabeled one, as in
# semi-supervised training): the second's map is the slow one
def b_pair_main(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["a_ms"]), num_parallel_calls=AUTOTUNE)
    return ds.batch(k["batch"]).prefetch(2)


def b_pair_side(k):
    ds = tf.data.Dataset.range(N).map(feature)
    ds = ds.map(lambda x: burn(x, k["b_ms"]), num_parallel_calls=par(k["b_par"]))
    return _opts_no_fusion(ds.batch(k["batch"])).prefetch(2)


case("two_iterators_per_step", build=b_pair_main, val_build=b_pair_side, side_every=1,
     defaults=dict(a_ms=0.2, b_ms=1.0, b_par=None, batch=8),
     train_ms=2, planted="the second dataset's sequential map",
     covers=["two iterators a step"],
     candidates={"a_map": ({"a_ms": 0.1}, r"::ParallelMapV2$"),
                 "b_map": ({"b_ms": 0.5}, r"::Map$")},
     fixes={"sequential_map": {"b_par": "auto"}, "fixed_parallelism": {"b_par": "auto"},
            "parallel_at_limit": {"a_ms": 0.1}})


# 36. uneven elements: one in 64 costs 40 ms, the rest 0.1 ms; on average
# the parallel map keeps up with the step, but a slow element holds its
# batch (ordered output) and a one-batch prefetch cannot hide it
def b_bursty(k):
    def cost(i, x):
        heavy = tf.equal(i % 64, 0)
        return tf.cond(heavy, lambda: burn(x, k["heavy_ms"]), lambda: burn(x, 0.1))

    ds = tf.data.Dataset.range(N)
    ds = ds.map(lambda i: cost(i, feature(i)), num_parallel_calls=AUTOTUNE,
                deterministic=False if k.get("unordered") else None)
    ds = _opts_no_fusion(ds.batch(k["batch"]))
    return ds.prefetch(k["prefetch"])


case("bursty_uneven_elements", build=b_bursty,
     defaults=dict(heavy_ms=40.0, batch=8, prefetch=1, unordered=False),
     train_ms=6, planted="bursts: one slow element in 64 behind a one-batch prefetch",
     covers=["uneven elements", "prefetch buffer", "ordered output"],
     candidates={"buffer": ({"prefetch": 16}, r"::Prefetch$"),
                 "heavy": ({"heavy_ms": 20.0}, r"::ParallelMapV2$"),
                 "order": ({"unordered": True}, r"::ParallelMapV2$")},
     fixes={"prefetch_starved": {"prefetch": AUTOTUNE, "unordered": True},
            "parallel_at_limit": {"heavy_ms": 20.0}, "deterministic_stall": {"unordered": True}})


# 37. GZIP-compressed TFRecord files read by a parallel interleave of two:
# decompression is the reading's work
def gz_files(n_files=4, per_file=256, kb=64):
    os.makedirs(_DATA, exist_ok=True)
    paths = []
    rng = np.random.default_rng(3)
    for f in range(n_files):
        p = os.path.join(_DATA, "gz-%02d.tfrecord.gz" % f)
        paths.append(p)
        if os.path.exists(p):
            continue
        opts = tf.io.TFRecordOptions(compression_type="GZIP")
        with tf.io.TFRecordWriter(p + ".tmp", opts) as w:
            for r in range(per_file):
                # half random bytes, half zeros: compressible, as real records are
                b = rng.integers(0, 255, size=kb * 512, dtype=np.uint8).tobytes()
                w.write(b + bytes(kb * 512))
        os.replace(p + ".tmp", p)
    return paths


def b_gz(k):
    files = tf.data.Dataset.from_tensor_slices(gz_files()).repeat()
    ds = files.interleave(lambda f: tf.data.TFRecordDataset(f, compression_type="GZIP"),
                          cycle_length=k["cycle"], num_parallel_calls=k["il_par"])
    ds = ds.map(lambda r: tf.fill((16,), tf.cast(tf.strings.length(r), tf.float32) * 1e-6),
                num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("gzip_tfrecord_interleave", build=b_gz,
     defaults=dict(cycle=2, il_par=2, batch=64, prefetch=2),
     train_ms=4, planted="decompressing GZIP records in a parallel interleave of two",
     covers=["TFRecord GZIP", "interleave parallel"],
     candidates={"read": ({"cycle": 4, "il_par": 4}, r"TFRecord|Interleave")},
     fixes={"slow_source": {"cycle": 4, "il_par": 4}, "parallel_at_limit": {"cycle": 4, "il_par": 4},
            "fixed_parallelism": {"il_par": AUTOTUNE}})


# 38. a cache to a file, in its first epoch: the heavy map before it runs
# while the cache fills
def b_disk_cache(k):
    path = os.path.join(_DATA, "cache-%d" % os.getpid())
    ds = tf.data.Dataset.range(k["n_elems"]).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    ds = ds.cache(path + "-%s" % k["map_ms"]).repeat().batch(k["batch"])
    return maybe_prefetch(ds, k)


case("disk_cache_first_epoch", build=b_disk_cache,
     defaults=dict(n_elems=100000, map_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the map before a file cache that is still filling",
     covers=["cache to a file (first epoch)"],
     candidates={"map": ({"map_ms": 0.75}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"}})


# 39. the step marker around the step function alone (next() before it, as
# in `for step, x in enumerate(ds): with Trace("train", ...): step(x)`):
# the waits fall between the markers, where TensorFlow's convention does
# not look
case("next_outside_markers", build=b_tfrecord_seq_map, marker_step_only=True,
     defaults=dict(map_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the sequential map (burn)",
     covers=["step marker without next()", "TFRecord", "map sequential"],
     candidates={"map": ({"map_ms": 0.75}, r"::(ParallelMapV2|Map)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"},
            "parallel_at_limit": {"map_ms": 0.75}})


# 40. the pipeline most jobs write: map without num_parallel_calls, batch,
# prefetch, default options: TensorFlow fuses the map and the batch into
# one MapAndBatch stage that keeps the map's one call at a time
def b_map_batch_default(k):
    ds = tf.data.TFRecordDataset(tfrecord_files()).repeat().map(parse)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("map_batch_default_options", build=b_map_batch_default,
     defaults=dict(map_ms=1.5, map_par=None, batch=8, prefetch=2),
     train_ms=6, planted="the sequential map TensorFlow fused with the batch",
     covers=["map_and_batch (fused from a sequential map)", "default options"],
     candidates={"map": ({"map_ms": 0.75}, r"MapAndBatch|::(ParallelMapV2|Map)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "parallel_at_limit": {"map_ms": 0.75}})


# 41. the same pipeline iterated inside a tf.function (`for b in d:
# step(b)` there: autograph's scan, one ReduceDataset op a call, no
# IteratorGetNext), an epoch a call
case("loop_inside_function", build=b_map_batch_default, loop="in_function",
     defaults=dict(map_ms=1.5, map_par=None, batch=8, prefetch=2, pull_next=False),
     train_ms=6, planted="the sequential map TensorFlow fused with the batch",
     covers=["a for loop over a dataset inside tf.function (ReduceDataset)",
             "map_and_batch (fused from a sequential map)"],
     candidates={"map": ({"map_ms": 0.75}, r"MapAndBatch|::(ParallelMapV2|Map)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "parallel_at_limit": {"map_ms": 0.75},
            "loop_in_function": {"pull_next": True}})


# 42. the last transformation is a parallel map (records read from a slow
# disk, batched, then parsed a batch at a time with AUTOTUNE) and no
# prefetch: TensorFlow injects none after an asynchronous last stage, whose
# workers already run ahead of the step. The reads set the rate; a final
# prefetch changes nothing (the truth measures it)
FEATURES_B = {"x": tf.io.FixedLenFeature([16], tf.float32)}


def b_async_last(k):
    d = k["read_us"] / 1e6

    def wait(rec):
        time.sleep(d)  # a slow disk: the thread waits, no core is busy
        return rec

    ds = tf.data.TFRecordDataset(tfrecord_files()).repeat()
    ds = ds.map(lambda r: tf.ensure_shape(tf.numpy_function(wait, [r], tf.string), ()),
                num_parallel_calls=par(k["read_par"]))
    ds = ds.batch(k["batch"])
    ds = ds.map(lambda b: tf.io.parse_example(b, FEATURES_B)["x"], num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds, k)


case("async_last_no_prefetch", build=b_async_last,
     defaults=dict(read_us=1000, read_par=None, batch=8, prefetch=0),
     train_ms=6, planted="the slow reads (a final prefetch does not help)",
     covers=["parallel map last, no prefetch (none injected)", "TFRecord", "slow storage"],
     candidates={"read": ({"read_us": 500}, r"MapAndBatch|::Map$|TFRecord"),
                 "prefetch": ({"prefetch": 2}, r"::Prefetch$")},
     fixes={"missing_prefetch": {"prefetch": 2}, "sequential_map": {"read_par": "auto"},
            "python_function": {"read_par": "auto"}})


# 43. the same waiting numpy_function (a read from slow storage: the GIL let
# go while it waits) on an AUTOTUNE map, 4 ms a call: AUTOTUNE stops at the
# pool of 2 (the cores), though waiting calls need no core
case("python_waits_two_workers", build=b_numpy_wait,
     defaults=dict(wait_ms=4.0, map_par="auto", batch=8, prefetch=2, pool=0),
     train_ms=6, planted="a waiting numpy_function on 2 workers (the pool's size)",
     covers=["tf.numpy_function that waits", "map parallel", "thread pool"],
     candidates={"map": ({"wait_ms": 2.0}, r"::ParallelMapV2$")},
     fixes={"python_waits": {"map_par": 16, "pool": 16},
            "python_function": {"map_par": 16, "pool": 16}})


# 44. GZIP TFRecord files read one at a time (no num_parallel_reads): the
# reader inflates every record on one thread while the map's workers idle
def b_gz_seq(k):
    if k["reads"] == "interleave":  # the code of TFD-S01, S07 and S08
        files = tf.data.Dataset.from_tensor_slices(gz_files()).repeat()
        ds = files.interleave(lambda f: tf.data.TFRecordDataset(f, compression_type="GZIP"),
                              cycle_length=8, num_parallel_calls=AUTOTUNE,
                              deterministic=False)
    else:
        ds = tf.data.TFRecordDataset(gz_files(), compression_type="GZIP",
                                     num_parallel_reads=par(k["reads"])).repeat()
    ds = ds.map(lambda r: tf.fill((16,), tf.cast(tf.strings.length(r), tf.float32) * 1e-6),
                num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("gzip_tfrecord_sequential", build=b_gz_seq,
     defaults=dict(reads=None, batch=128, prefetch=2),
     train_ms=4, planted="GZIP records inflated by one sequential reader",
     covers=["TFRecord GZIP", "sequential file reads"],
     candidates={"read": ({"reads": 2}, r"TFRecord|Interleave")},
     fixes={"slow_source": {"reads": "interleave"}})


# 45. the same files read with num_parallel_reads=AUTOTUNE, as most jobs
# write it: the interleave's cycle_length is AUTOTUNE, and TensorFlow 2.21
# keeps it at one file on this machine (measured 1.04x over no parallel
# reads; a cycle_length of 4 with num_parallel_calls=AUTOTUNE, 1.53x)
case("gzip_tfrecord_autotune_reads", build=b_gz_seq,
     defaults=dict(reads="auto", batch=128, prefetch=2),
     train_ms=4, planted="GZIP reads that AUTOTUNE keeps at one file at a time",
     covers=["TFRecord GZIP", "num_parallel_reads=AUTOTUNE"],
     candidates={"read": ({"reads": 2}, r"TFRecord|Interleave")},
     fixes={"slow_source": {"reads": "interleave"}})


def jpeg_images(n=32, side=384):
    """JPEG photos-to-be: smooth gradients with noise, encoded once."""
    rng = np.random.default_rng(4)
    y, x = np.mgrid[0:side, 0:side]
    out = []
    for i in range(n):
        base = (np.stack([x, y, (x + y) // 2], -1) * (i + 1) % 255).astype(np.float32)
        im = np.clip(base + rng.normal(0, 12, base.shape), 0, 255).astype(np.uint8)
        out.append(tf.io.encode_jpeg(im, quality=90).numpy())
    return out


# 46. JPEG decode in an AUTOTUNE map at the cores' limit: the decode is the
# function's cost; decode_and_crop_jpeg decodes half of each image
def b_jpeg(k):
    side = 384
    ds = tf.data.Dataset.from_tensor_slices(jpeg_images(side=side)).repeat()

    def dec(j):
        if k["crop"]:
            im = tf.io.decode_and_crop_jpeg(j, [0, 0, side // 2, side], channels=3)
        else:
            im = tf.io.decode_jpeg(j, channels=3)[: side // 2]
        im = tf.image.resize(im, (32, 32))
        return tf.reduce_mean(tf.reshape(im, (-1, 16)), axis=0) / 255.0

    ds = ds.map(dec, num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("jpeg_decode_autotune", build=b_jpeg,
     defaults=dict(crop=False, map_par="auto", batch=16, prefetch=2),
     train_ms=3, planted="JPEG decode (whole images, half kept) in an AUTOTUNE map",
     covers=["decode_jpeg", "decode_and_crop_jpeg", "map AUTOTUNE"],
     candidates={"map": ({"crop": True}, r"::(ParallelMapV2|MapAndBatch)$")},
     fixes={"decode_heavy": {"crop": True}, "parallel_at_limit": {"crop": True}})


# 47. a dataset that ends, iterated anew each epoch (`for b in ds:`): the
# shuffle after the map refills from empty, the whole epoch's map before
# its first batch. repeat="end" is TFD-H05's code (one iterator over
# ds.repeat()); repeat="source" repeats below the shuffle
def b_epochs(k):
    ds = tf.data.Dataset.range(k["epoch"])
    if k["repeat"] == "source":
        ds = ds.repeat()
    ds = ds.map(lambda i: burn(feature(i), k["map_ms"]), num_parallel_calls=AUTOTUNE)
    ds = ds.shuffle(k["shuffle"])
    if k["repeat"] == "shuffle":
        ds = ds.repeat()
    ds = maybe_prefetch(_opts_no_fusion(ds.batch(k["batch"])), k)
    return ds.repeat() if k["repeat"] == "end" else ds


case("epoch_iterator_refill", build=b_epochs, loop="epochs",
     defaults=dict(epoch=256, map_ms=0.5, shuffle=256, repeat=None, batch=16, prefetch=2),
     train_ms=6, planted="a new iterator each epoch: the shuffle buffer refills",
     covers=["new iterator per epoch", "shuffle after map", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.25}, r"::ParallelMapV2$"),
                 "epochs": ({"repeat": "source"}, r"::Shuffle$")},
     fixes={"iterator_per_epoch": {"repeat": "end"}, "shuffle_warmup": {"shuffle": 64},
            "sequential_transformation": {"shuffle": 64},
            "parallel_at_limit": {"map_ms": 0.25}})


# 47b. the same pipeline with repeat() after the prefetch: one iterator,
# whose inner iterators (prefetch, batch, shuffle, map) are made anew each
# epoch; TensorFlow's pool gives the ended ones' threads new roles
case("repeat_after_prefetch", build=b_epochs, loop="epochs",
     defaults=dict(epoch=256, map_ms=0.5, shuffle=256, repeat="end", batch=16, prefetch=2),
     train_ms=6, planted="the AUTOTUNE map, its threads handed on each epoch",
     covers=["repeat after prefetch", "threads that change roles", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.25}, r"::ParallelMapV2$"),
                 "epochs": ({"repeat": "source"}, r"::Shuffle$")},
     fixes={"parallel_at_limit": {"map_ms": 0.25}, "shuffle_warmup": {"shuffle": 64},
            "sequential_transformation": {"shuffle": 64}})


def raw_images(n=32, side=160):
    """Decoded images held in memory (uint8), as after a cache()."""
    rng = np.random.default_rng(5)
    return rng.integers(0, 255, size=(n, side, side, 3), dtype=np.uint8)


def augment(im, resize=True):
    """Random flip, brightness and contrast, then a resize to the model's
    112x112: one image, or a batch of them (tf.image takes both)."""
    im = tf.image.convert_image_dtype(im, tf.float32)
    im = tf.image.random_flip_left_right(im)
    im = tf.image.random_brightness(im, 0.2)
    im = tf.image.random_contrast(im, 0.8, 1.2)
    return tf.image.resize(im, (112, 112)) if resize else im


def _summary(im):
    return tf.reduce_mean(tf.reshape(im, (-1, 16)), axis=0)


# 48. image augmentation of 448x448 images in an AUTOTUNE map, one image
# a call, resized to the model's 112x112 last. Applied after batch(), on
# whole batches ("batched", what TFD-F03 used to advise first), it
# measured 5.5x slower (43 against 7.7 ms a step: a batch of float pixels
# does not stay in cache); the images stored at 112 ("side": 112, no
# resize), 2.5x; the work halved is "side" 316 (half the pixels)
def b_augment(k):
    ds = tf.data.Dataset.from_tensor_slices(raw_images(side=k["side"])).repeat()
    if k["batched"]:
        ds = ds.batch(k["batch"]).map(
            lambda b: tf.reduce_mean(tf.reshape(augment(b), (tf.shape(b)[0], -1, 16)), axis=1),
            num_parallel_calls=AUTOTUNE)
    else:
        ds = ds.map(lambda im: _summary(augment(im, k["side"] != 112)),
                    num_parallel_calls=AUTOTUNE)
        ds = ds.batch(k["batch"])
    return maybe_prefetch(ds, k)


case("augment_per_image", build=b_augment,
     defaults=dict(side=448, batched=False, batch=32, prefetch=2),
     train_ms=3, planted="image augmentation (flip, brightness, contrast, resize) per image",
     covers=["tf.image augmentation", "map AUTOTUNE"],
     candidates={"map": ({"side": 316}, r"::(ParallelMapV2|MapAndBatch)$")},
     fixes={"augmentation_heavy": {"side": 316}, "parallel_at_limit": {"side": 316},
            "pipeline_cpu": {"side": 316}})


def csv_files(n_files=4, rows=4096, cols=16, header=False):
    """CSV files of float columns, written once; with a header row of
    column names (c0, c1, ...) where make_csv_dataset needs one."""
    os.makedirs(_DATA, exist_ok=True)
    paths = []
    rng = np.random.default_rng(7 if header else 6)
    for f in range(n_files):
        p = os.path.join(_DATA, "%s-%02d-%dc.csv" % ("hdr" if header else "part", f, cols))
        paths.append(p)
        if os.path.exists(p):
            continue
        with open(p + ".tmp", "w") as w:
            if header:
                w.write(",".join("c%d" % i for i in range(cols)) + "\n")
            for r in range(rows):
                w.write(",".join("%.4f" % v for v in rng.random(cols)) + "\n")
        os.replace(p + ".tmp", p)
    return paths


# 49. CSV lines parsed one at a time by a map written without
# num_parallel_calls (the tutorials' pipeline): each call parses one short
# line, so tf.data's fixed cost per call is most of it; "vectorize" parses
# whole batches of lines; the parsing halved is 8 columns a line, not 16
def b_csv(k):
    defaults = [[0.0]] * k["cols"]
    ds = tf.data.TextLineDataset(csv_files(cols=k["cols"])).repeat()
    if k["vectorize"]:
        ds = ds.batch(k["batch"]).map(lambda b: tf.stack(tf.io.decode_csv(b, defaults), 1),
                                      num_parallel_calls=par(k["map_par"]))
    else:
        ds = ds.map(lambda line: tf.stack(tf.io.decode_csv(line, defaults)),
                    num_parallel_calls=par(k["map_par"]))
        ds = _opts_no_fusion(ds.batch(k["batch"]))
    return maybe_prefetch(ds, k)


case("csv_lines_per_element", build=b_csv,
     defaults=dict(vectorize=False, cols=16, map_par=None, batch=1024, prefetch=2),
     train_ms=4, planted="CSV lines parsed one a call by a sequential map",
     covers=["TextLineDataset", "decode_csv", "map sequential"],
     candidates={"map": ({"vectorize": True}, r"::(Map|ParallelMapV2|MapAndBatch)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "decode_heavy": {"cols": 8},
            "parallel_at_limit": {"vectorize": True}})


# 50. cache() after repeat() (`ds.map(f).repeat().cache()`): the cache's
# input never ends, so it never fills and the map runs in every epoch;
# "cache_first" is TFD-T19's order, `.cache().repeat()` (an epoch of 160
# elements, 20 batches: the warm-up fills the cache)
def b_cache_order(k):
    ds = tf.data.Dataset.range(k["n_elems"]).map(feature)
    ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k.get("map_par")))
    ds = ds.cache().repeat() if k["cache_first"] else ds.repeat().cache()
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("cache_after_repeat", build=b_cache_order,
     defaults=dict(n_elems=160, map_ms=1.0, cache_first=False, batch=8, prefetch=2),
     train_ms=6, planted="cache() after repeat(): the cache never fills, the map runs on",
     covers=["cache order", "map sequential"],
     candidates={"map": ({"map_ms": 0.5}, r"::Map$"),
                 "order": ({"cache_first": True}, r"::Map$")},
     fixes={"cache_fill": {"cache_first": True}, "sequential_map": {"map_par": "auto"}})


# 51. the TensorFlow guide's first TFRecord pipeline, as most jobs write it:
# read, shuffle, parse one record a call, batch, no prefetch (TensorFlow
# parallelizes the stateless parse and injects the prefetch itself);
# "vectorize" is the guide's fix, batch first and parse a batch a call
def b_tfrecord_parse(k):
    ds = tf.data.TFRecordDataset(tfrecord_files()).repeat().shuffle(k["buffer"])
    if k.get("vectorize"):
        ds = ds.batch(k["batch"]).map(lambda b: tf.io.parse_example(b, FEATURES)["x"],
                                      num_parallel_calls=par(k["map_par"]))
    else:
        ds = ds.map(parse, num_parallel_calls=par(k["map_par"])).batch(k["batch"])
    return maybe_prefetch(ds, k)


case("tfrecord_parse_per_record", build=b_tfrecord_parse,
     defaults=dict(buffer=1024, vectorize=False, map_par=None, batch=256, prefetch=0),
     train_ms=3, planted="one parse_single_example call per record",
     covers=["TFRecord", "parse_single_example", "shuffle", "map (parallelized by TensorFlow)"],
     candidates={"parse": ({"vectorize": True}, r"::(Map|ParallelMapV2|MapAndBatch)$")},
     fixes={"parallel_at_limit": {"vectorize": True}, "sequential_map": {"map_par": "auto"},
            "fixed_parallelism": {"map_par": "auto"}, "decode_heavy": {"vectorize": True},
            "missing_prefetch": {"prefetch": AUTOTUNE},
            "prefetch_starved": {"prefetch": AUTOTUNE}})


# 52. Keras's image_dataset_from_directory over JPEG files (shuffled paths,
# an AUTOTUNE decode-and-resize map, batch, prefetch): the decode is the
# work; "cache" is the image tutorial's `.cache()` after it
def jpeg_folder(n=256, side=320):
    d = os.path.join(_DATA, "jpeg-%d" % side, "imgs")
    if os.path.isdir(d) and len(os.listdir(d)) == n:
        return os.path.dirname(d)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(4)
    yy, xx = np.mgrid[0:side, 0:side]
    for i in range(n):
        # smooth gradients with noise: a photo's kind of JPEG, not pure noise
        base = (np.sin(xx / (7 + i % 13)) + np.cos(yy / (5 + i % 11))) * 60 + 128
        im = np.clip(base[..., None] + rng.normal(0, 12, (side, side, 3)), 0, 255)
        tf.io.write_file(os.path.join(d, "%04d.jpg" % i),
                         tf.io.encode_jpeg(im.astype(np.uint8), quality=90))
    return os.path.dirname(d)


def b_image_folder(k):
    import keras

    ds = keras.utils.image_dataset_from_directory(
        jpeg_folder(side=k["side"]), labels=None, image_size=(128, 128),
        batch_size=k["batch"], shuffle=True, seed=1, verbose=False)
    if k.get("cache"):
        ds = ds.cache()
    return ds.repeat()


case("image_folder_keras", build=b_image_folder,
     defaults=dict(side=320, cache=False, batch=32),
     train_ms=4, planted="JPEG decode and resize in Keras's AUTOTUNE map",
     covers=["image_dataset_from_directory", "decode_jpeg", "map AUTOTUNE"],
     candidates={"decode": ({"side": 226}, r"::(ParallelMapV2|MapAndBatch)$")},
     fixes={"parallel_at_limit": {"side": 226}, "decode_heavy": {"side": 226}})



# 53. a heavy AUTOTUNE map that keeps up with a long step (the steps barely
# wait) on a host without an accelerator: its workers take the cores the
# step computes on, so every step runs slower, and no wait shows it
case("cpu_shared_keeps_up", build=b_no_prefetch,
     defaults=dict(map_ms=0.8, map_par="auto", batch=8, prefetch=2),
     train_ms=12, planted="a map that keeps up but takes the step's cores",
     covers=["map AUTOTUNE", "CPU shared with the step"],
     candidates={"map": ({"map_ms": 0.4}, r"::ParallelMapV2$")},
     fixes={"pipeline_cpu": {"map_ms": 0.4}, "parallel_at_limit": {"map_ms": 0.4}})


# 53b. the same job with no step marker in the profiled window (a loop that
# never names its steps): the input share comes from the span the input was
# read over, the pipeline's cores from its threads, as with markers
case("cpu_shared_no_markers", build=b_no_prefetch, no_markers=True,
     defaults=dict(map_ms=0.8, map_par="auto", batch=8, prefetch=2),
     train_ms=12, planted="a map that keeps up but takes the step's cores (no step markers)",
     covers=["map AUTOTUNE", "CPU shared with the step", "no step markers"],
     candidates={"map": ({"map_ms": 0.4}, r"::ParallelMapV2$")},
     fixes={"pipeline_cpu": {"map_ms": 0.4}, "parallel_at_limit": {"map_ms": 0.4}})

# 55. snapshot() in its first run: every element hashed to a shard,
# compressed and written as it passes (the writer's iterator,
# SnapshotWriter); a run that reads the input to its end commits it, and the
# runs after it read the snapshot (SnapshotReader) without running the
# stages before it. snapshot() adds enumerate() and a projection map that
# TensorFlow skips running (it only passes its input through)
def _det_burn(x, ms):
    """burn() without its random draw: a snapshot's input is deterministic."""
    m = tf.fill((128, 128), 1.0 / 128.0) + tf.reduce_sum(x) * 0.0
    for _ in range(int(round(ms * 1000.0 / MM_US))):
        m = tf.linalg.matmul(m, m) + 1.0 / 128.0
    return x + tf.reduce_sum(m) * 0.0


def b_snapshot(k):
    path = os.path.join(_DATA, "snapshot-%d-%s" % (os.getpid(), k["snap"]))
    ds = tf.data.Dataset.range(k["n_elems"]).map(
        lambda i: tf.fill((k["side"], k["side"]), tf.cast(i % 97, tf.float32) / 97.0))
    ds = ds.map(lambda x: _det_burn(x, k["map_ms"]), num_parallel_calls=AUTOTUNE)
    if k["snap"]:
        shutil.rmtree(path, ignore_errors=True)
        ds = ds.snapshot(path)
        if k["snap"] == "read":  # a run before this one read it to the end
            for _ in ds:
                pass
    ds = ds.repeat().map(lambda x: x * 2.0, num_parallel_calls=AUTOTUNE).batch(k["batch"])
    return maybe_prefetch(ds, k)


case("snapshot_first_run", build=b_snapshot,
     defaults=dict(n_elems=3000, side=8, map_ms=0.05, snap="write", batch=8, prefetch=2),
     train_ms=0.3, planted="snapshot() writing: its first run",
     covers=["snapshot (writing)", "a map TensorFlow skips (projection)", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.025}, r"WriterIterator.*ParallelMapV2$"),
                 "snapshot": ({"snap": "read"}, r"Snapshot")},
     fixes={"cache_fill": {"snap": "read"}})

# 56. Dataset.load() of a saved dataset, repeated, an AUTOTUNE map of
# matmuls and batch(8) (fused into MapAndBatch), prefetch(2): the map's work
# and the step's just exceed what the 2 cores allow, so every stage could
# deliver more than the step takes with the cores to itself, yet together
# they cannot
def b_load(k):
    path = os.path.join(_DATA, "saved-%d" % os.getpid())
    if not os.path.exists(path):
        tf.data.Dataset.range(4000).map(lambda x: tf.fill((16,), tf.cast(x, tf.float32))).save(path)
    ds = tf.data.Dataset.load(path).repeat()
    ds = ds.map(lambda v: _det_burn(v, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("load_map_shared_cores", build=b_load,
     defaults=dict(map_ms=0.08, map_par="auto", batch=8, prefetch=2),
     train_ms=0.3, planted="an AUTOTUNE map whose work and the step's just exceed the 2 cores",
     covers=["Dataset.load", "map AUTOTUNE", "CPU shared with the step"],
     candidates={"map": ({"map_ms": 0.04}, r"(ParallelMapV2|MapAndBatch)$")},
     fixes={"parallel_at_limit": {"map_ms": 0.04}, "prefetch_starved": {"prefetch": -1}})

# 57. tf.data.experimental.make_csv_dataset with its defaults: the files
# read one at a time (num_parallel_reads=1: a legacy parallel interleave of
# cycle 1 over CsvDataset readers), shuffle(10000), batch, a map building
# the feature dict a batch at a time, prefetch(AUTOTUNE)
def b_make_csv(k):
    ds = tf.data.experimental.make_csv_dataset(
        csv_files(rows=8192, cols=k["cols"], header=True), batch_size=k["batch"],
        num_epochs=None, num_parallel_reads=par(k["reads"]), shuffle_buffer_size=k["shuffle"])
    return ds.map(lambda d: tf.stack(list(d.values()), 1))


case("make_csv_dataset_default", build=b_make_csv,
     defaults=dict(reads=None, cols=16, batch=256, shuffle=10000),
     train_ms=3, planted="CSV rows parsed by one reader, one row an element",
     covers=["make_csv_dataset", "CsvDataset", "legacy parallel interleave of cycle 1"],
     candidates={"reads": ({"reads": 4}, r"CSV|Csv|Interleave"),
                 "shuffle": ({"shuffle": 1000}, r"Shuffle")},
     fixes={"slow_source": {"reads": 4}, "sequential_interleave": {"reads": 4},
            "fixed_parallelism": {"reads": 4}, "sequential_transformation": {"reads": 4},
            "pipeline_cpu": {"cols": 8}})

# 58. One worker's shard of a multi-worker job, taken late: the records are
# read and parsed and an AUTOTUNE map runs on every one of them, then
# shard(4, 0) keeps one in four (what the DATA auto-shard policy does, and a
# common hand-written placement); batch, prefetch. Sharding the file list
# before the reader does a quarter of the work
def b_shard_late(k):
    files = tf.data.Dataset.from_tensor_slices(tfrecord_files())
    if k.get("interleave"):  # the map inside each file's dataset, files read 4 at a time
        if k["shard"] == "files":
            files = files.shard(4, 0)
        ds = files.repeat().interleave(
            lambda f: tf.data.TFRecordDataset(f).map(lambda r: burn(parse(r), k["map_ms"]),
                                                     num_parallel_calls=par(k["map_par"])),
            cycle_length=4, num_parallel_calls=AUTOTUNE)
        if k["shard"] == "late":
            ds = ds.shard(4, 0)
        return maybe_prefetch(ds.batch(k["batch"]), k)
    if k["shard"] == "files":
        files = files.shard(4, 0)
    ds = tf.data.TFRecordDataset(files.repeat())
    if k["shard"] == "records":
        ds = ds.shard(4, 0)
    ds = ds.map(lambda r: burn(parse(r), k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    if k["shard"] == "late":
        ds = ds.shard(4, 0)
    ds = ds.batch(k["batch"])
    if k["shard"] == "batches":  # as the DATA auto-shard policy places it
        ds = ds.shard(4, 0)
    return maybe_prefetch(ds, k)


case("shard_after_map", build=b_shard_late,
     defaults=dict(shard="late", map_ms=0.3, map_par="auto", batch=8, prefetch=2),
     train_ms=2, planted="shard(4, 0) after the map: each worker maps every record",
     covers=["shard", "TFRecord", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.15}, r"ParallelMapV2$"),
                 "shard": ({"shard": "files"}, r"Shard")},
     fixes={"parallel_at_limit": {"map_ms": 0.15}, "shard_late": {"shard": "files"}})

# 59. The common idiom of a map inside each interleaved file: four TFRecord
# files read by a parallel interleave (cycle 4, AUTOTUNE), each read through
# a map written without num_parallel_calls (parse and 0.3 ms of matmuls an
# element), then batch(8), prefetch(2): the per-file maps run one element at
# a time each, on the interleave's threads
def b_inner_map(k):
    files = tf.data.Dataset.from_tensor_slices(tfrecord_files()).repeat()

    def read(f):
        return tf.data.TFRecordDataset(f).map(lambda r: burn(parse(r), k["map_ms"]),
                                              num_parallel_calls=par(k["inner_par"]))

    ds = files.interleave(read, cycle_length=k["cycle"], block_length=1,
                          num_parallel_calls=par(k["il_par"]))
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("interleave_inner_seq_map", build=b_inner_map,
     defaults=dict(map_ms=0.8, inner_par=None, cycle=4, il_par="auto", batch=8, prefetch=2),
     train_ms=2, planted="a sequential map inside each interleaved file",
     covers=["interleave parallel", "map inside interleave", "TFRecord"],
     candidates={"map": ({"map_ms": 0.4}, r"Interleave.*::Map$"),
                 "inner_par": ({"inner_par": "auto"}, r"Interleave.*::Map$")},
     fixes={"sequential_map": {"inner_par": "auto"}, "parallel_at_limit": {"map_ms": 0.4},
            "pipeline_cpu": {"map_ms": 0.4}})

# 59b. The same with the per-file map written with num_parallel_calls
# (AUTOTUNE): each open file's map has workers of its own, on cores the
# step shares; the map's work is still the limit
case("interleave_inner_parallel_map", build=b_inner_map,
     defaults=dict(map_ms=0.8, inner_par="auto", cycle=4, il_par="auto", batch=8, prefetch=2),
     train_ms=2, planted="the parallel maps inside the interleaved files",
     covers=["interleave parallel", "parallel map inside interleave", "TFRecord"],
     candidates={"map": ({"map_ms": 0.4}, r"Interleave.*::ParallelMapV2$")},
     fixes={"parallel_at_limit": {"map_ms": 0.4}, "pipeline_cpu": {"map_ms": 0.4}})

# 60. The same with two files open at a time (cycle 2): the two per-file
# maps, one element at a time each, limit the rate, on cores the step shares
case("interleave_inner_seq_map_cycle2", build=b_inner_map,
     defaults=dict(map_ms=0.8, inner_par=None, cycle=2, il_par="auto", batch=8, prefetch=2),
     train_ms=2, planted="a sequential map inside each of two interleaved files",
     covers=["interleave parallel", "map inside interleave", "cycle_length", "TFRecord"],
     candidates={"map": ({"map_ms": 0.4}, r"Interleave.*::Map$"),
                 "inner_par": ({"inner_par": "auto"}, r"Interleave.*::Map$")},
     fixes={"sequential_map": {"inner_par": "auto"}, "parallel_at_limit": {"map_ms": 0.4},
            "pipeline_cpu": {"map_ms": 0.4}})

# 61. The same shard placed as the DATA auto-shard policy places it, on
# the batches (batch(2), which TensorFlow fuses with the map into
# MapAndBatch): the map keeps up with a step that barely waits, but on the
# step's 2 cores it does the work of four workers' elements
case("shard_after_batch", build=b_shard_late,
     defaults=dict(shard="batches", map_ms=0.8, map_par="auto", batch=2, prefetch=2),
     train_ms=2, planted="shard(4, 0) after batch: each worker maps every record, the step's cores",
     covers=["shard", "TFRecord", "map AUTOTUNE", "MapAndBatch", "CPU shared with the step"],
     candidates={"map": ({"map_ms": 0.4}, r"MapAndBatch$"),
                 "shard": ({"shard": "files"}, r"Shard")},
     fixes={"shard_late": {"shard": "files"}, "pipeline_cpu": {"map_ms": 0.4},
            "parallel_at_limit": {"map_ms": 0.4}})

# 62. The same with a lighter map (0.5 ms): the steps barely wait, and the
# map's work on the elements the shard drops slows them through the cores
case("shard_after_batch_keeps_up", build=b_shard_late,
     defaults=dict(shard="batches", map_ms=0.5, map_par="auto", batch=2, prefetch=2),
     train_ms=2, planted=None,
     covers=["shard", "MapAndBatch", "CPU shared with the step", "not input-bound"],
     candidates={"map": ({"map_ms": 0.25}, r"MapAndBatch$"),
                 "shard": ({"shard": "files"}, r"Shard")},
     fixes={"shard_late": {"shard": "files"}, "pipeline_cpu": {"map_ms": 0.25},
            "parallel_at_limit": {"map_ms": 0.25}})

# 63. A filter after an expensive map that keeps about one element in four
# (a class or quality filter): TFRecord files -> an AUTOTUNE map (parse,
# 0.4 ms of matmuls) -> filter on a parsed feature -> batch(8) ->
# prefetch(2). The predicate needs only the parsed feature: parsing, then
# filtering, then the expensive map does a quarter of the work
def b_filter_late(k):
    files = tf.data.Dataset.from_tensor_slices(tfrecord_files()).repeat()
    ds = tf.data.TFRecordDataset(files)

    # (the predicate reads the parsed feature: burn()'s result is NaN)
    if k["filter_first"]:
        ds = ds.map(parse).filter(lambda x: x[0] < 0.25)
        ds = ds.map(lambda x: burn(x, k["map_ms"]), num_parallel_calls=par(k["map_par"]))
    else:
        def f(r):
            x = parse(r)
            return burn(x, k["map_ms"]), x[0]

        ds = ds.map(f, num_parallel_calls=par(k["map_par"]))
        ds = ds.filter(lambda y, x0: x0 < 0.25).map(lambda y, x0: y)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("filter_after_map", build=b_filter_late,
     defaults=dict(filter_first=False, map_ms=0.4, map_par="auto", batch=8, prefetch=2),
     train_ms=2, planted="a filter keeping one element in four after the expensive map",
     covers=["filter", "TFRecord", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.2}, r"ParallelMapV2$"),
                 "filter": ({"filter_first": True}, r"Filter")},
     fixes={"parallel_at_limit": {"map_ms": 0.2}, "filter_late": {"filter_first": True},
            "sequential_transformation": {"filter_first": True}})

# 64. cache() right after the reader, before an expensive deterministic
# map (the raw records cached, the map run again every epoch): 160 TFRecord
# records (20 steps an epoch) -> cache() -> repeat() -> an AUTOTUNE map
# (parse, 1.2 ms of matmuls, no random op) -> batch(8) -> prefetch(2). With
# the cache after the map, later epochs read the mapped elements
def b_cache_early(k):
    ds = tf.data.TFRecordDataset(tfrecord_files()).take(k["n_records"])
    def m(r):
        x = _det_burn(parse(r), k["map_ms"])
        if k.get("random_map"):  # an augmentation's draw, large enough to be traced
            x += tf.reduce_mean(tf.random.uniform((256, 256))) * 0.0
        return x

    if k["cache_after"]:
        ds = ds.map(m, num_parallel_calls=par(k["map_par"])).cache().repeat()
    else:
        ds = ds.cache().repeat().map(m, num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("cache_before_map", build=b_cache_early,
     defaults=dict(cache_after=False, n_records=160, map_ms=1.2, map_par="auto", batch=8,
                   prefetch=2),
     train_ms=2, planted="cache() of the raw records below an expensive deterministic map",
     covers=["cache placement", "TFRecord", "map AUTOTUNE"],
     candidates={"map": ({"map_ms": 0.6}, r"(ParallelMapV2|MapAndBatch)$"),
                 "cache": ({"cache_after": True}, r"(ParallelMapV2|MapAndBatch)$")},
     fixes={"parallel_at_limit": {"map_ms": 0.6}, "cache_early": {"cache_after": True},
            "pipeline_cpu": {"map_ms": 0.6}})

# 65. The shard after a parallel interleave whose files are each read
# through a map (the map inside each file's dataset, 4 files at a time),
# shard(4, 0) on the interleaved records: the interleave skips the dropped
# ones in one call, its inner datasets still make every one
case("shard_after_interleave", build=b_shard_late,
     defaults=dict(shard="late", interleave=True, map_ms=0.3, map_par=None, batch=8,
                   prefetch=2),
     train_ms=2, planted="shard(4, 0) after a parallel interleave of per-file maps",
     covers=["shard", "interleave parallel", "map inside interleave", "TFRecord"],
     candidates={"map": ({"map_ms": 0.15}, r"Interleave.*::Map$"),
                 "shard": ({"shard": "files"}, r"Shard")},
     fixes={"shard_late": {"shard": "files"}, "parallel_at_limit": {"map_ms": 0.15},
            "sequential_map": {"map_par": "auto"}})

# 66. Large elements batched on one thread: an AUTOTUNE map makes
# side x side x 3 float images, a shuffle between the map and the batch
# (as most image pipelines write it) keeps TensorFlow from fusing them, so
# BatchV2 copies every image (600 KB) into the batch one at a time. uint8:
# the images stay bytes until the whole batch is converted (a quarter of
# the copying)
def b_batch_copy(k):
    s = int(k["side"])
    dt = tf.uint8 if k.get("uint8") else tf.float32
    ds = tf.data.Dataset.range(N).map(
        lambda i: tf.fill((s, s, 3), tf.cast(i % 97, dt)),
        num_parallel_calls=AUTOTUNE)
    ds = ds.shuffle(k["shuffle"])
    ds = ds.batch(k["batch"], num_parallel_calls=par(k["batch_par"]))
    if k.get("uint8"):
        ds = ds.map(lambda b: tf.cast(b, tf.float32) / 97.0, num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds, k)


case("batch_copy_large", build=b_batch_copy,
     defaults=dict(side=224, uint8=False, shuffle=32, batch=128, batch_par=None, prefetch=2),
     train_ms=2, planted="a sequential batch copying 224x224x3 float images",
     covers=["batch sequential", "large elements", "shuffle"],
     candidates={"batch": ({"batch_par": 2}, r"::BatchV2$"),
                 "bytes": ({"uint8": True}, r"::BatchV2$")},
     fixes={"sequential_transformation": {"batch_par": "auto"},
            "prefetch_starved": {"prefetch": -1}})


# 67. A new iterator each step: the loop takes `next(iter(ds))` for every
# batch of an AUTOTUNE map (0.3 ms an element) -> batch(8) -> prefetch(2):
# each iterator is built (its map function instantiated, its threads
# started), fills from empty for one batch and is torn down
def b_fresh(k):
    ds = tf.data.Dataset.range(N).map(lambda i: burn(feature(i), k["map_ms"]),
                                      num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("iterator_per_step", build=b_fresh, loop="fresh_iterator",
     defaults=dict(one_iterator=False, map_ms=0.3, batch=8, prefetch=2),
     train_ms=6, planted="next(iter(ds)) each step",
     covers=["new iterator each step", "map AUTOTUNE"],
     candidates={"iterator": ({"one_iterator": True}, "@new_iterator_each_step"),
                 "map": ({"map_ms": 0.15}, r"(ParallelMapV2|MapAndBatch)$")},
     fixes={"iterator_per_step": {"one_iterator": True},
            "parallel_at_limit": {"map_ms": 0.15}})

# 67b. The same with `for b in ds.take(1):` each step: a new dataset too,
# optimized before its iterator is made
case("take_one_per_step", build=b_fresh, loop="fresh_iterator",
     defaults=dict(one_iterator=False, take1=True, map_ms=0.3, batch=8, prefetch=2),
     train_ms=6, planted="ds.take(1) iterated each step",
     covers=["new iterator each step", "take"],
     candidates={"iterator": ({"one_iterator": True}, "@new_iterator_each_step"),
                 "map": ({"map_ms": 0.15}, r"(ParallelMapV2|MapAndBatch)$")},
     fixes={"iterator_per_step": {"one_iterator": True},
            "parallel_at_limit": {"map_ms": 0.15}})

# 68. Sliding windows over a series, the way many time-series tutorials
# write them: window(65, shift=1) and flat_map(lambda w: w.batch(65)) make a
# dataset (and an iterator, and a function call) for every window; frame:
# all the windows at once with tf.signal.frame, sliced
def b_windows(k):
    series = np.sin(np.arange(200000, dtype=np.float32) / 50.0)
    if k["frame"]:
        ds = tf.data.Dataset.from_tensor_slices(tf.signal.frame(series, 65, 1))
    else:
        ds = tf.data.Dataset.from_tensor_slices(series).window(65, shift=1, drop_remainder=True)
        ds = ds.flat_map(lambda w: w.batch(65))
    ds = ds.map(lambda w: w - tf.reduce_mean(w))
    ds = ds.shuffle(1000).repeat().batch(k["batch"])
    return maybe_prefetch(ds, k)


case("window_flat_map", build=b_windows,
     defaults=dict(frame=False, batch=32, prefetch=1),
     train_ms=1, planted="window() + flat_map: a dataset per window",
     covers=["window", "flat_map", "dataset per element", "shuffle"],
     candidates={"window": ({"frame": True}, r"FlatMap$")},
     fixes={"dataset_per_element": {"frame": True}})


# 69. Keras preprocessing layers as data augmentation in a map over the
# batches image_dataset_from_directory gives (the Keras image tutorials'
# pattern), the map written without num_parallel_calls: the random layers
# keep TensorFlow from parallelizing it, so one batch is augmented at a
# time; aug_par: the tutorials' own fix, num_parallel_calls=AUTOTUNE; img:
# the size the images are loaded at (90: half the pixels to transform)
def b_keras_augment(k):
    import keras

    ds = keras.utils.image_dataset_from_directory(
        jpeg_folder(side=k["side"]), labels=None, image_size=(k["img"], k["img"]),
        batch_size=k["batch"], shuffle=True, seed=1, verbose=False)
    aug = keras.Sequential([keras.layers.RandomFlip("horizontal"),
                            keras.layers.RandomRotation(0.1),
                            keras.layers.RandomZoom(0.1)])
    ds = ds.map(lambda x: aug(x, training=True), num_parallel_calls=par(k["aug_par"]))
    return ds.repeat().prefetch(k["prefetch"])


case("keras_augment_layers", build=b_keras_augment,
     defaults=dict(side=160, img=128, batch=32, aug_par=None, prefetch=2),
     train_ms=4, planted="Keras augmentation layers in a sequential map over batches",
     covers=["Keras preprocessing layers", "map sequential", "image_dataset_from_directory"],
     candidates={"augment": ({"aug_par": "auto"}, r"::Map$|::ParallelMapV2$")},
     fixes={"sequential_map": {"aug_par": "auto"}, "fixed_parallelism": {"aug_par": "auto"},
            "augmentation_heavy": {"img": 90}})


# 70. Keras text preprocessing: a TextVectorization layer (adapted once)
# in a map over batches of raw strings, as the Keras text tutorials write
# it (no num_parallel_calls; the layer is stateless, so TensorFlow may
# parallelize it itself); long: longer reviews (more tokens to split and
# look up)
def b_text_vectorize(k):
    import keras

    docs = [" ".join([s] * k["reps"]) for s in texts(512)]
    vec = keras.layers.TextVectorization(max_tokens=1000, output_sequence_length=256)
    vec.adapt(docs[:64])
    ds = tf.data.Dataset.from_tensor_slices(docs).repeat().batch(k["batch"])
    ds = ds.map(lambda s: tf.cast(vec(s), tf.float32), num_parallel_calls=par(k["map_par"]))
    return maybe_prefetch(ds, k)


case("text_vectorization_map", build=b_text_vectorize,
     defaults=dict(reps=64, batch=64, map_par=None, prefetch=2),
     train_ms=4, planted="TextVectorization over each batch of long strings",
     covers=["Keras TextVectorization", "string ops", "map over batches"],
     candidates={"vectorize": ({"reps": 32}, r"::(Map|ParallelMapV2)$")},
     fixes={"sequential_map": {"map_par": "auto"}, "fixed_parallelism": {"map_par": "auto"},
            "string_heavy": {"reps": 32}, "parallel_at_limit": {"reps": 32},
            "pipeline_cpu": {"reps": 32}})


# 71. The canonical image-classification input: JPEG records in TFRecord
# shards read by a parallel interleave, shuffled, parsed and decoded with a
# random crop and flip in an AUTOTUNE map, batched, prefetched (AUTOTUNE).
# On 2 cores the decode is the limit; crop: decode only the crop
# (decode_and_crop_jpeg), about half the decode
def jpeg_records(n_files=4, per_file=64, side=256):
    """Each record an Example holding a JPEG image and a label."""
    imgs = jpeg_images(n=16, side=side)
    return record_files("jpeg-%d-%%02d.tfrecord" % side, n_files, per_file, lambda f, r: {
        "image": tf.train.Feature(bytes_list=tf.train.BytesList(
            value=[imgs[(f * per_file + r) % len(imgs)]])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[r % 10])),
    })


def b_imagenet_like(k):
    side = 256
    files = tf.data.Dataset.from_tensor_slices(jpeg_records(side=side)).repeat()
    ds = files.interleave(tf.data.TFRecordDataset, cycle_length=4,
                          num_parallel_calls=AUTOTUNE, deterministic=False)
    ds = ds.shuffle(256)
    spec = {"image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}

    def prep(rec):
        ex = tf.io.parse_single_example(rec, spec)
        if k["crop"]:
            im = tf.io.decode_and_crop_jpeg(ex["image"], [32, 32, 160, 160], channels=3)
        else:
            im = tf.image.random_crop(tf.io.decode_jpeg(ex["image"], channels=3), (160, 160, 3))
        im = tf.image.random_flip_left_right(im)
        return tf.image.resize(tf.cast(im, tf.float32) / 255.0, (64, 64))

    ds = ds.map(prep, num_parallel_calls=AUTOTUNE).batch(k["batch"])
    return ds.prefetch(AUTOTUNE)


case("imagenet_like", build=b_imagenet_like,
     defaults=dict(crop=False, batch=32),
     train_ms=3, planted="JPEG decode in the AUTOTUNE map (2 cores)",
     covers=["TFRecord", "interleave parallel", "shuffle", "decode_jpeg", "random_crop",
             "map AUTOTUNE", "prefetch AUTOTUNE"],
     candidates={"decode": ({"crop": True}, r"::(ParallelMapV2|MapAndBatch)$")},
     fixes={"decode_heavy": {"crop": True}, "parallel_at_limit": {"crop": True},
            "augmentation_heavy": {"crop": True}, "pipeline_cpu": {"crop": True}})


# 72. A filter whose predicate is stateless and costly (a quality test on
# the parsed record), with filter_parallelization on: TensorFlow runs it as
# a ParallelFilter (AUTOTUNE), which still limits the rate on 2 cores
def b_parallel_filter(k):
    ds = tf.data.TFRecordDataset(tfrecord_files()).repeat().map(parse, num_parallel_calls=AUTOTUNE)
    # always true, but only known once the work is done
    ds = ds.filter(lambda x: tf.reduce_sum(
        tf.cast(tf.math.is_nan(_det_burn(x, k["pred_ms"])), tf.int32)) >= 0)
    o = tf.data.Options()
    o.experimental_optimization.filter_parallelization = True
    return maybe_prefetch(ds.batch(k["batch"]).with_options(o), k)


case("parallel_filter_at_limit", build=b_parallel_filter,
     defaults=dict(pred_ms=0.8, batch=8, prefetch=2),
     train_ms=2, planted="a stateless 0.8-ms predicate under filter_parallelization",
     covers=["filter_parallelization", "ParallelFilter"],
     candidates={"predicate": ({"pred_ms": 0.4}, r"ParallelFilter$")},
     fixes={"parallel_at_limit": {"pred_ms": 0.4}, "pipeline_cpu": {"pred_ms": 0.4}})


# 73. tf.data.Dataset.load of a dataset saved with GZIP compression (1-MB
# elements of random floats, one shard): decompressing is the reader's work
def b_load_gzip(k):
    n = 256 * 1024
    # written once (about 90-100 MB each way), as the catalog's other files
    path = os.path.join(_DATA, "saved-1mb-%s" % (k["comp"] or "raw"))
    if not os.path.exists(path):
        d = tf.data.Dataset.range(400).map(lambda i: tf.random.stateless_uniform((n,), seed=[i, 1]))
        shutil.rmtree(path + ".tmp", ignore_errors=True)
        d.save(path + ".tmp", compression=k["comp"], shard_func=lambda x: tf.constant(0, tf.int64))
        os.replace(path + ".tmp", path)
    ds = tf.data.Dataset.load(path, compression=k["comp"]).repeat()
    ds = ds.map(lambda v: tf.reduce_mean(tf.reshape(v, (-1, 16)), axis=0),
                num_parallel_calls=AUTOTUNE)
    return maybe_prefetch(ds.batch(k["batch"]), k)


case("load_gzip_reads", build=b_load_gzip,
     defaults=dict(comp="GZIP", batch=8, prefetch=2),
     train_ms=2, planted="Dataset.load decompressing GZIP-saved 1-MB elements",
     covers=["Dataset.save/load", "compression"],
     candidates={"read": ({"comp": None}, r"SnapshotDatasetReader")},
     fixes={"slow_source": {"comp": None}, "pipeline_cpu": {"comp": None}})
