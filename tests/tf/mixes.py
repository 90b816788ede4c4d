"""Random pipelines for the catalog: `mix_SEED` is a pipeline drawn from
SEED, with two to four stages that cost something (a reader on slow
storage, one or two maps, a map on the batch), each with its own
parallelism, and a step's compute that may or may not hide them. The
catalog's named cases each plant one bottleneck; a mix plants none: the
stages' costs are drawn close to one another and to the step, so which
stage limits is for the intervention to say (each stage's work halved in
turn, as for every case).

  tests/tf/run.sh OUT mix_1 mix_2 ...     (not in `catalog.py list`)

`describe(seed)` prints the drawn pipeline. Nothing is tuned to
tfdoctor: the draw is uniform over the ranges below.
"""

import random
import time

import numpy as np
import tensorflow as tf

import cases as C



def draw(seed):
    r = random.Random(seed)
    k = {}
    k["src"] = r.choice(["slices", "files", "files"])
    if k["src"] == "files":
        k["reader"] = r.choice(["flat", "il", "il"])
        k["il_par"] = r.choice([None, 2, "auto"]) if k["reader"] == "il" else None
        k["read_us"] = r.choice([300, 600, 1000, 1500, 2500])
    k["a_ms"] = r.choice([0.2, 0.4, 0.7, 1.0, 1.5])
    k["a_par"] = r.choice([None, 1, 2, "auto", "auto"])
    k["b_ms"] = r.choice([0, 0, 0.3, 0.6, 1.0, 1.5])
    k["b_par"] = r.choice([None, "auto"]) if k["b_ms"] else None
    k["c_ms"] = r.choice([0, 0, 0, 2, 4, 8])
    k["c_par"] = r.choice([None, "auto"]) if k["c_ms"] else None
    k["fusion"] = r.choice([True, False])
    k["prefetch"] = r.choice([None, 2, C.AUTOTUNE])
    k["batch"] = 8
    train_ms = r.choice([3, 5, 8, 12])
    return k, train_ms


def slow_map(records, read_us):
    """records as read from slow storage: each waits read_us in a
    numpy_function (a sequential map)."""
    d = read_us / 1e6

    def wait(rec):
        time.sleep(d)  # slow storage: the thread waits, no core is busy
        return rec
    return records.map(
        lambda rec: tf.ensure_shape(tf.numpy_function(wait, [rec], tf.string), ()))


def slow_reads(k):
    """TFRecord files read from slow storage (each record waits read_us),
    one file at a time or by an interleave of il_par."""
    def slow(r):
        return slow_map(r, k["read_us"])

    files = C.tfrecord_files()
    if k["reader"] == "flat":
        return slow(tf.data.TFRecordDataset(files).repeat())
    return tf.data.Dataset.from_tensor_slices(files).repeat().interleave(
        lambda f: slow(tf.data.TFRecordDataset(f)), cycle_length=4, block_length=1,
        num_parallel_calls=C.par(k["il_par"]))


def _on_x(fn):
    """fn on an element's features, its label (Keras) carried along."""
    def f(*e):
        return fn(e[0]) if len(e) == 1 else (fn(e[0]),) + tuple(e[1:])
    return f


def batch_tail(ds, k):
    """What follows the batch: maybe a map on it, maybe a prefetch, map
    and batch fusion on or off."""
    if k["c_ms"]:
        ds = ds.map(_on_x(lambda x: C.burn(x, k["c_ms"])), num_parallel_calls=C.par(k["c_par"]))
    if k["prefetch"]:
        ds = ds.prefetch(k["prefetch"])
    if not k["fusion"]:
        o = tf.data.Options()
        o.experimental_optimization.map_and_batch_fusion = False
        ds = ds.with_options(o)
    return ds


def build(k):
    if k["src"] == "slices":
        ds = tf.data.Dataset.from_tensor_slices(
            np.tile(np.arange(97, dtype=np.float32)[:, None] / 97.0, (1, 16))).repeat()
        first = lambda x: x  # noqa: E731
    else:
        ds = slow_reads(k)
        first = C.parse
    ds = ds.map(lambda x: C.burn(first(x), k["a_ms"]), num_parallel_calls=C.par(k["a_par"]))
    if k["b_ms"]:
        ds = ds.map(lambda x: C.burn(x, k["b_ms"]), num_parallel_calls=C.par(k["b_par"]))
    return batch_tail(ds.batch(k["batch"]), k)


def _kind(par):
    return "Map" if par is None else "ParallelMapV2"


def chain(k):
    """The stages' kinds from the batch down, as tfdoctor's long names
    show them (map then batch fused into MapAndBatch when fusion is on)."""
    maps = [("a", _kind(k["a_par"]))]
    if k["b_ms"]:
        maps.append(("b", _kind(k["b_par"])))
    down = []  # root side first
    if k["c_ms"]:
        down.append(("c", _kind(k["c_par"])))
    top = maps[-1]
    if k["fusion"]:
        down.append((top[0], "MapAndBatch"))
        rest = maps[:-1]
    else:
        down.append(("batch", "BatchV2"))
        rest = maps
    for m in reversed(rest):
        down.append(m)
    if k["src"] == "files":
        if k["reader"] == "flat":
            down.append(("read", "Map"))
        else:
            down.append(("read", "Interleave" if k["il_par"] is None else "ParallelInterleaveV4"))
    return down


def candidates(k):
    """label -> (change halving that stage's work, regex on the long name)."""
    down = chain(k)
    out = {}
    ix = r"(\[\d+\])?"
    # what sits above the stages: the iterator, the model, a final prefetch
    top = r"^(?:(?:Iterator|Root|Model|Prefetch|MaxIntraOpParallelism|PrivateThreadPool)" + ix + "::)*"
    for i, (label, kind) in enumerate(down):
        if label == "batch":
            continue
        names = [kn for _, kn in down[:i + 1]]
        rx = top + "::".join(n + ix for n in names) + "$"
        if label == "read" and kind != "Map":
            # the readers inside the interleave: its input's long names
            rx = top + "::".join(n + ix for n in names) + "(::Map)?$"
        change = {"a": {"a_ms": k["a_ms"] / 2}, "b": {"b_ms": k["b_ms"] / 2},
                  "c": {"c_ms": k["c_ms"] / 2},
                  "read": {"read_us": k.get("read_us", 0) / 2}}[label]
        out[label] = (change, rx)
    return out


def _which(cands):
    """The candidate a finding's stage is (its label), None for none."""
    import re

    def which(f):
        name = f.get("stage_long_name") or ""
        for label, (_, rx) in cands.items():
            if re.search(rx, name):
                return label
        return None
    return which


def fix_for(k, cands):
    """The change a finding's own advice makes to this pipeline, for the
    stage the finding names (None: no edit of a mix maps it)."""
    which = _which(cands)
    par_key = {"a": "a_par", "b": "b_par", "c": "c_par"}

    def fix(f):
        cls, st = f["class"], which(f)
        if cls == "missing_prefetch" or cls == "prefetch_starved":
            return {"prefetch": C.AUTOTUNE}
        if st == "read":
            if cls in ("slow_source", "sequential_interleave", "fixed_parallelism",
                       "sequential_map", "sequential_transformation"):
                return {"reader": "il", "il_par": "auto"}
            if cls in ("parallel_at_limit", "pipeline_cpu"):
                return cands["read"][0]
            return None
        if st in par_key:
            if cls in ("sequential_map", "fixed_parallelism"):
                return {par_key[st]: "auto"}
            if cls in ("parallel_at_limit", "pipeline_cpu", "decode_heavy",
                       "augmentation_heavy"):
                return cands[st][0]
        return None
    return fix



# ---- the second family, mixb_SEED: the stages users' pipelines hold besides
# maps on TensorFlow ops: a Python generator, Python in a map (py_function,
# holds the GIL) or a wait in one (numpy_function, releases it), a shuffle
# buffer, a filter whose predicate costs something, padded_batch, and Keras
# fit as the loop.
PY_ITERS_PER_MS = 22000  # the loop below, on one core of the catalog's machine


def spin(ms):
    acc = 0
    for j in range(int(ms * PY_ITERS_PER_MS)):
        acc += j * j
    return acc


def _draw_tail(r, k, c_choices):
    """What follows the batch and the loop, drawn in this order by the
    second and third families: a map on the batch of c_choices ms, fusion,
    the prefetch, Keras or a custom loop; (k, the step's size)."""
    k["c_ms"] = r.choice(c_choices)
    k["c_par"] = r.choice([None, "auto"]) if k["c_ms"] else None
    k["fusion"] = r.choice([True, False])
    k["prefetch"] = r.choice([None, 2, C.AUTOTUNE])
    k["batch"] = 8
    k["keras"] = r.random() < 0.25
    train = r.choice([512, 1024, 2048]) if k["keras"] else r.choice([3, 5, 8, 12])
    return k, train


def draw_b(seed):
    r = random.Random(1000003 + seed)
    k = {}
    k["src"] = r.choice(["slices", "files", "gen"])
    if k["src"] == "files":
        k["reader"] = r.choice(["flat", "il"])
        k["il_par"] = r.choice([None, 2, "auto"]) if k["reader"] == "il" else None
        k["read_us"] = r.choice([300, 600, 1000, 1500, 2500])
    if k["src"] == "gen":
        k["gen_ms"] = r.choice([0.2, 0.4, 0.8, 1.5])
        k["gen_shards"] = 0
    k["shuffle"] = r.choice([0, 0, 256, 1024])
    k["a_kind"] = r.choice(["tf", "tf", "py", "io"])
    k["a_ms"] = r.choice([0.2, 0.4, 0.7, 1.0, 1.5])
    k["a_par"] = r.choice([None, 1, 2, "auto", "auto"])
    k["f_ms"] = r.choice([0, 0, 0.2, 0.5, 1.0])
    k["f_split"] = False
    k["batch_kind"] = r.choice(["batch", "batch", "padded"])
    return _draw_tail(r, k, [0, 0, 0, 2, 4, 8])


def _a_fn(k):
    ms = k["a_ms"]
    if k["a_kind"] == "tf":
        return lambda x: C.burn(x, ms)
    if k["a_kind"] == "py":
        def py(x):
            return x.numpy() + np.float32(spin(ms) * 0)

        def f(x):
            y = tf.py_function(py, [x], tf.float32)
            y.set_shape((16,))
            return y
        return f
    d = ms / 1e3

    def wait(x):
        time.sleep(d)  # a fetch from a remote service: the thread waits
        return x
    return lambda x: tf.ensure_shape(tf.numpy_function(wait, [x], tf.float32), (16,))


def build_b(k):
    if k["src"] == "gen":
        ms = k["gen_ms"]

        def gen():
            i = 0
            while True:
                yield np.full((16,), (i + spin(ms) * 0) % 97 / 97.0, dtype=np.float32)
                i += 1
        sig = tf.TensorSpec((16,), tf.float32)
        if k["gen_shards"]:
            ds = tf.data.Dataset.range(k["gen_shards"]).interleave(
                lambda i: tf.data.Dataset.from_generator(gen, output_signature=sig),
                num_parallel_calls=C.AUTOTUNE, deterministic=False)
        else:
            ds = tf.data.Dataset.from_generator(gen, output_signature=sig)
        if k["shuffle"]:
            ds = ds.shuffle(k["shuffle"])
    elif k["src"] == "slices":
        ds = tf.data.Dataset.from_tensor_slices(
            np.tile(np.arange(97, dtype=np.float32)[:, None] / 97.0, (1, 16)))
        ds = ds.shuffle(k["shuffle"]).repeat() if k["shuffle"] else ds.repeat()
    else:
        ds = slow_reads(k)
        if k["shuffle"]:
            ds = ds.shuffle(k["shuffle"])
    first = C.parse if k["src"] == "files" else (lambda x: x)
    a = _a_fn(k)
    if k["keras"]:
        def a_pair(x):
            y = a(first(x))
            return y, tf.reduce_sum(y)
        ds = ds.map(a_pair, num_parallel_calls=C.par(k["a_par"]))
    else:
        ds = ds.map(lambda x: a(first(x)), num_parallel_calls=C.par(k["a_par"]))
    if k["f_ms"]:
        def keep(x):
            # about 3 in 4 pass; the burn's sum takes part, so it is not pruned
            return tf.logical_and(tf.random.uniform(()) < 0.75,
                                  tf.reduce_sum(C.burn(x, k["f_ms"])) != 12345.0)
        if k["f_split"]:  # the predicate in a parallel map, the filter reads its answer
            ds = ds.map(lambda *e: (e, keep(e[0])), num_parallel_calls=C.AUTOTUNE)
            ds = ds.filter(lambda e, kp: kp).map(lambda e, kp: e if len(e) > 1 else e[0])
        else:
            ds = ds.filter(lambda *e: keep(e[0]))
    if k["batch_kind"] == "padded":
        ds = ds.padded_batch(k["batch"])
    else:
        ds = ds.batch(k["batch"])
    return batch_tail(ds, k)


def chain_b(k):
    """mixb's costed stages from the root down, with their kinds as long
    names show them (the batch's a pattern: batch, padded or parallel)."""
    down = []
    if k["c_ms"]:
        down.append(("c", _kind(k["c_par"])))
    fused = k["fusion"] and not k["f_ms"] and k["batch_kind"] == "batch"
    if fused:
        down.append(("a", "MapAndBatch"))
    else:
        down.append(("batch", "(?:BatchV2|PaddedBatchV2|ParallelBatch)"))
        if k["f_ms"]:
            down.append(("filter", "Filter"))
        down.append(("a", _kind(k["a_par"])))
    if k["src"] == "files":
        if k["reader"] == "flat":
            down.append(("read", "Map"))
        else:
            down.append(("read", "Interleave" if k["il_par"] is None else "ParallelInterleaveV4"))
    elif k["src"] == "gen":
        down.append(("gen", "FlatMap"))
    return down


def _chain_rx(down, changes):
    """label -> (changes[label], regex on the long name) for each costed
    stage of down (root side first, (label, kind pattern) each): the kinds
    from the root to it, a shuffle, repeat, cache or prefetch anywhere
    between them."""
    ix = r"(\[\d+\])?"
    top = r"^(?:(?:Iterator|Root|Model|Prefetch|MaxIntraOpParallelism|PrivateThreadPool)" + ix + "::)*"
    noise = (r"(?:(?:Shuffle|ShuffleAndRepeat|Repeat|ForeverRepeat|Prefetch|MemoryCacheImpl"
             r"|MemoryCache)" + ix + "::)*")
    out = {}
    for i, (label, kind) in enumerate(down):
        if label == "batch":
            continue
        rx = top + "::".join(noise + n + ix for _, n in down[:i + 1])
        if label == "read" and kind != "Map":
            rx += "(::Map" + ix + ")?"
        if label == "gen":
            rx += "(::Generator" + ix + ")?"
        out[label] = (changes[label], rx + "$")
    return out


def candidates_b(k):
    """label -> (change halving that stage's work, regex on the long name)."""
    return _chain_rx(chain_b(k), {
        "a": {"a_ms": k["a_ms"] / 2}, "c": {"c_ms": k["c_ms"] / 2},
        "filter": {"f_ms": k["f_ms"] / 2}, "gen": {"gen_ms": k.get("gen_ms", 0) / 2},
        "read": {"read_us": k.get("read_us", 0) / 2}})


def fix_for_b(k, cands):
    """The change a finding's own advice makes to a mixb pipeline."""
    base, which = fix_for(k, cands), _which(cands)

    def fix(f):
        cls, st = f["class"], which(f)
        if st == "gen" or (st is None and k["src"] == "gen" and cls == "python_generator"):
            if cls in ("python_generator", "slow_source"):
                return {"gen_shards": 2}
            if cls == "python_gil":
                return {"src": "slices"}
            return None
        if st == "a" and k["a_kind"] == "py" and cls in ("python_function", "python_gil"):
            return {"a_kind": "tf"}  # the same work in TensorFlow ops
        if st == "a" and k["a_kind"] == "io" and cls in ("python_function", "python_waits"):
            return {"a_par": "auto"}
        if st == "filter":
            if cls in ("sequential_function", "sequential_transformation"):
                return {"f_split": True}
            if cls in ("parallel_at_limit", "pipeline_cpu"):
                return cands["filter"][0]
            return None
        if cls == "python_gil" and k["a_kind"] == "py":
            return {"a_kind": "tf"}
        return base(f)
    return fix


# ---- the third family, mixc_SEED: pipelines of distinct inputs and nested
# datasets, the structures whose stages the long names number: zip of two
# branches, sample_from_datasets of two sources, and a parallel interleave
# whose per-file datasets read slow storage through a map of their own;
# each branch, source or per-file map has its own cost and parallelism.
def draw_c(seed):
    r = random.Random(2000003 + seed)
    k = {}
    k["src"] = r.choice(["zip", "sample", "inner"])
    if k["src"] in ("zip", "sample"):
        k["b0_ms"] = r.choice([0.1, 0.3, 0.6, 1.0, 1.5])
        k["b0_par"] = r.choice([None, 2, "auto"])
        k["b1_ms"] = r.choice([0.1, 0.3, 0.6, 1.0, 1.5])
        k["b1_par"] = r.choice([None, 2, "auto"])
    else:
        k["read_us"] = r.choice([300, 600, 1000, 1500, 2500])
        k["i_ms"] = r.choice([0.2, 0.4, 0.8, 1.2])
        k["i_par"] = r.choice([None, None, "auto"])
        k["cycle"] = r.choice([2, 4])
        k["il_par"] = r.choice([2, "auto"])
    k["a_ms"] = r.choice([0.1, 0.3, 0.6, 1.0])
    k["a_par"] = r.choice([None, 2, "auto"])
    return _draw_tail(r, k, [0, 0, 2, 4, 8])


def build_c(k):
    def branch(ms, parv, off):
        return tf.data.Dataset.range(C.N).map(
            lambda i: C.burn(C.feature(i + off), ms), num_parallel_calls=C.par(parv))

    if k["src"] == "zip":
        ds = tf.data.Dataset.zip((branch(k["b0_ms"], k["b0_par"], 0),
                                  branch(k["b1_ms"], k["b1_par"], 1)))
        join = lambda x, y: x + y  # noqa: E731
    elif k["src"] == "sample":
        ds = tf.data.Dataset.sample_from_datasets(
            [branch(k["b0_ms"], k["b0_par"], 0), branch(k["b1_ms"], k["b1_par"], 1)],
            weights=[0.5, 0.5], seed=1)
        join = lambda x: x  # noqa: E731
    else:
        def per_file(f):
            recs = slow_map(tf.data.TFRecordDataset(f), k["read_us"])
            return recs.map(lambda rec: C.burn(C.parse(rec), k["i_ms"]),
                            num_parallel_calls=C.par(k["i_par"]))
        ds = tf.data.Dataset.from_tensor_slices(C.tfrecord_files()).repeat().interleave(
            per_file, cycle_length=k["cycle"], block_length=1,
            num_parallel_calls=C.par(k["il_par"]))
        join = lambda x: x  # noqa: E731

    def a(*e):
        y = C.burn(join(*e), k["a_ms"])
        return (y, tf.reduce_sum(y)) if k["keras"] else y
    ds = ds.map(a, num_parallel_calls=C.par(k["a_par"]))
    return batch_tail(ds.batch(k["batch"]), k)


def candidates_c(k):
    """label -> (change halving that stage's work, regex on the long name).
    The branches' and sources' maps are their inputs' [0] and [1]; the
    per-file maps are under the interleave (its inputs numbered too)."""
    ix = r"(\[\d+\])?"
    m = r"(?:ParallelMapV2|Map)"
    out = {"a": ({"a_ms": k["a_ms"] / 2},
                 r"(?:(?:BatchV2" + ix + "::" + m + ")|MapAndBatch)" + ix + "$")}
    if k["c_ms"]:
        out["c"] = ({"c_ms": k["c_ms"] / 2}, r"^(?!.*Batch).*::" + m + ix + "$")
    if k["src"] in ("zip", "sample"):
        out["b0"] = ({"b0_ms": k["b0_ms"] / 2}, r"\[0\]::" + m + ix + "$")
        out["b1"] = ({"b1_ms": k["b1_ms"] / 2}, r"\[1\]::" + m + ix + "$")
    else:
        il = r"Interleave(?:V\d)?" + ix + "::"
        out["inner"] = ({"i_ms": k["i_ms"] / 2}, il + m + ix + "$")
        out["read"] = ({"read_us": k["read_us"] / 2}, il + m + ix + "::Map" + ix + "$")
    return out


def fix_for_c(k, cands):
    """The change a finding's own advice makes to the stage it names."""
    which = _which(cands)
    par_key = {"a": "a_par", "c": "c_par", "b0": "b0_par", "b1": "b1_par", "inner": "i_par"}

    def fix(f):
        cls, st = f["class"], which(f)
        if cls in ("missing_prefetch", "prefetch_starved"):
            return {"prefetch": C.AUTOTUNE}
        if st == "read" and cls in ("slow_source", "parallel_at_limit", "sequential_interleave"):
            return {"il_par": "auto", "cycle": 4} if cls == "sequential_interleave" else \
                cands["read"][0]
        if st in par_key and cls in ("sequential_map", "fixed_parallelism"):
            return {par_key[st]: "auto"}
        if st in cands and cls in ("parallel_at_limit", "pipeline_cpu", "augmentation_heavy"):
            return cands[st][0]
        return None
    return fix


# ---- the fourth family, mixd_SEED: the ops users' maps run instead of
# matmuls: JPEG decode and resize, image augmentation, string splitting and
# hashing; JPEG records read from slow storage by a parallel interleave, a
# cache after the decode, a shuffle. A stage's work is halved by its own
# knob: the images' pixels (side / sqrt 2), the augmentation's rounds, the
# text's length, the read's wait. On the catalog's machine a decode and
# resize takes 0.2-1.3 ms, the augmentation 0.4-1.2 ms, the text 0.25-1.4 ms.
def draw_d(seed):
    r = random.Random(3000003 + seed)
    k = {}
    k["src"] = r.choice(["jpeg", "jpeg", "files", "text"])
    if k["src"] == "text":
        k["t_reps"] = r.choice([16, 32, 64, 128])
        k["t_par"] = r.choice([None, 2, "auto"])
        k["shuffle"] = r.choice([0, 256])
    else:
        if k["src"] == "files":
            k["read_us"] = r.choice([300, 1000, 2500])
            k["il_par"] = r.choice([2, "auto"])
        k["side"] = r.choice([224, 320, 448])
        k["d_par"] = r.choice([None, 2, "auto"])
        k["aug_reps"] = r.choice([0, 2, 4, 6])
        k["aug_par"] = r.choice([None, 2, "auto"]) if k["aug_reps"] else None
        k["one_map"] = bool(k["aug_reps"]) and r.random() < 0.3
        k["cache"] = k["src"] == "jpeg" and bool(k["aug_reps"]) and not k["one_map"] \
            and r.random() < 0.25
    return _draw_tail(r, k, [0, 0, 2, 4, 8])


def _half_side(side):
    """The side of an image with half the pixels, a multiple of 8."""
    return int(round(side / 2 ** 0.5 / 8) * 8)


def build_d(k):
    def out(f):  # the last map's element: Keras fit's pair, else the features
        def pair(*e):
            y = f(*e)  # once: a second call would run the stage's work twice
            return y, tf.reduce_sum(y)
        return pair if k["keras"] else f

    if k["src"] == "text":
        ds = tf.data.Dataset.from_tensor_slices(C.texts()).repeat()
        if k["shuffle"]:
            ds = ds.shuffle(k["shuffle"])

        def tok(s):  # t_reps copies of a 20-60 word text, split and hashed
            s = tf.strings.reduce_join(tf.fill([k["t_reps"]], s), separator=" ")
            ids = C.tokenize(s, 2)[:64]
            return tf.reduce_mean(tf.reshape(tf.pad(ids, [[0, 64 - tf.shape(ids)[0]]]),
                                             (4, 16)), axis=0)
        ds = ds.map(out(tok), num_parallel_calls=C.par(k["t_par"]))
        return batch_tail(ds.batch(k["batch"]), k)
    side = k["side"]
    if k["src"] == "files":
        spec = {"image": tf.io.FixedLenFeature([], tf.string)}
        ds = tf.data.Dataset.from_tensor_slices(C.jpeg_records(side=side)).repeat().interleave(
            lambda f: slow_map(tf.data.TFRecordDataset(f), k["read_us"]), cycle_length=4,
            block_length=1, num_parallel_calls=C.par(k["il_par"]))
        get = lambda rec: tf.io.parse_single_example(rec, spec)["image"]  # noqa: E731
    else:
        ds = tf.data.Dataset.from_tensor_slices(C.jpeg_images(side=side))
        ds = ds if k["cache"] else ds.repeat()
        get = lambda j: j  # noqa: E731

    def dec(j):
        im = tf.io.decode_jpeg(get(j), channels=3)
        return tf.image.resize(tf.cast(im, tf.float32) / 255.0, (96, 96))

    def aug(im):
        for _ in range(k["aug_reps"]):
            im = tf.image.random_flip_left_right(im)
            im = tf.image.random_brightness(im, 0.2)
            im = tf.image.random_contrast(im, 0.8, 1.2)
            im = tf.image.random_saturation(im, 0.8, 1.2)
        return C._summary(im)

    if not k["aug_reps"] or k["one_map"]:
        ds = ds.map(out(lambda j: aug(dec(j))), num_parallel_calls=C.par(k["d_par"]))
    else:
        ds = ds.map(dec, num_parallel_calls=C.par(k["d_par"]))
        if k["cache"]:
            ds = ds.cache().repeat()
        ds = ds.map(out(aug), num_parallel_calls=C.par(k["aug_par"]))
    return batch_tail(ds.batch(k["batch"]), k)


def chain_d(k):
    """mixd's costed stages from the root down, their kinds as long names
    show them. A decode without augmentation is stateless: TensorFlow runs
    it in parallel whatever num_parallel_calls says (map_parallelization)."""
    dec = "(?:ParallelMapV2|Map)" if k.get("d_par") is None else _kind(k["d_par"])
    if k["src"] == "text":
        maps = [("tok", _kind(k["t_par"]))]
    elif not k["aug_reps"] or k["one_map"]:
        maps = [("decode", _kind(k["d_par"]) if k["one_map"] else dec)]
    else:
        maps = [("decode", dec), ("aug", _kind(k["aug_par"]))]
    down = [("c", _kind(k["c_par"]))] if k["c_ms"] else []
    if k["fusion"]:
        down.append((maps[-1][0], "MapAndBatch"))
        maps = maps[:-1]
    else:
        down.append(("batch", "BatchV2"))
    down += list(reversed(maps))
    if k["src"] == "files":
        down.append(("read", "ParallelInterleaveV4"))
    return down


def candidates_d(k):
    """label -> (change halving that stage's work, regex on the long name):
    a map that decodes and augments has both halved."""
    half = {"side": _half_side(k.get("side", 0))}
    if k.get("one_map"):
        half["aug_reps"] = k["aug_reps"] // 2
    return _chain_rx(chain_d(k), {
        "tok": {"t_reps": k.get("t_reps", 0) // 2}, "decode": half,
        "aug": {"aug_reps": k.get("aug_reps", 0) // 2}, "c": {"c_ms": k["c_ms"] / 2},
        "read": {"read_us": k.get("read_us", 0) / 2}})


def fix_for_d(k, cands):
    """The change a finding's own advice makes to the stage it names."""
    which = _which(cands)
    par_key = {"tok": "t_par", "decode": "d_par", "aug": "aug_par", "c": "c_par"}

    def fix(f):
        cls, st = f["class"], which(f)
        if cls in ("missing_prefetch", "prefetch_starved"):
            return {"prefetch": C.AUTOTUNE}
        if st == "read":
            if cls in ("slow_source", "sequential_interleave", "fixed_parallelism"):
                return {"il_par": "auto"}
            return cands["read"][0] if cls in ("parallel_at_limit", "pipeline_cpu") else None
        if st in par_key and cls in ("sequential_map", "fixed_parallelism"):
            return {par_key[st]: "auto"}
        if st in cands and cls in ("parallel_at_limit", "pipeline_cpu", "decode_heavy",
                                   "augmentation_heavy", "string_heavy"):
            return cands[st][0]
        return None
    return fix


def case_of(name):
    """The catalog case `mix_SEED`, `mixb_SEED`, `mixc_SEED` or
    `mixd_SEED`, or None."""
    fam, _, num = name.partition("_")
    if fam not in ("mix", "mixb", "mixc", "mixd") or not num.isdigit():
        return None
    if fam in ("mixb", "mixc", "mixd"):
        draw_f, cands_f, build_f, fix_f = {
            "mixb": (draw_b, candidates_b, build_b, fix_for_b),
            "mixc": (draw_c, candidates_c, build_c, fix_for_c),
            "mixd": (draw_d, candidates_d, build_d, fix_for_d)}[fam]
        k, train = draw_f(int(num))
        cands = cands_f(k)
        loop = dict(loop="keras", train_units=train) if k["keras"] else dict(
            loop="custom", train_ms=train)
        return dict(build=build_f, defaults=k, planted=None, covers=[fam],
                    candidates=cands, fixes={}, fix_for=fix_f(k, cands), **loop)
    k, train_ms = draw(int(num))
    cands = candidates(k)
    return dict(build=build, defaults=k, train_ms=train_ms, loop="custom",
                planted=None, covers=["mix"], candidates=cands, fixes={},
                fix_for=fix_for(k, cands))


def describe(name):
    c = case_of(name)
    if c is None:
        raise SystemExit("mixes.py: %s: no such mix (mix_N, mixb_N, mixc_N, mixd_N)" % name)
    print(name, c["loop"], c.get("train_ms") or c.get("train_units"), c["defaults"])
    for label, (ch, rx) in c["candidates"].items():
        print("  ", label, ch, rx)


def summary(out, tfd=None):
    """One line a mix under out: the truth (verdict, input %, each
    candidate's gain), tfdoctor's verdict and bottleneck (by the candidate
    whose pattern names it; "(x)" its slowest stage when not input-bound),
    whether they agree ("tie": another candidate the tool named gained at
    least two thirds of the best), and each estimate beside what its
    change measured. tfd: judge the captures with this binary instead."""
    import glob
    import json
    import os
    import re
    import subprocess

    import judge as J

    ok = n = ties = 0
    paths = glob.glob(os.path.join(out, "mix*_*", "result.json"))

    def order(x):
        m = re.search(r"(mix[bcd]?)_(\d+)", x)
        return (m.group(1), int(m.group(2)))
    for p in sorted(paths, key=order):
        r = json.load(open(p))
        t, td = r["truth"], r["tfdoctor"]
        if tfd:
            x = os.path.join(os.path.dirname(p), r["capture"])
            q = subprocess.run([tfd, "analyze", "-q", "-f", "json", x], capture_output=True,
                               text=True)
            td = J.tfd_part(json.loads(q.stdout), t)
        cands = t["candidates"]

        def label(name):
            for k, v in cands.items():
                if name and re.search(v["stage"], name):
                    return k
            return name

        bn = label(td.get("bottleneck_long_name")) if td.get("bottleneck_long_name") \
            else "(%s)" % label(td.get("slowest_stage_long_name"))
        mark = ""
        if t["verdict"] != "not" and t["bottleneck"]:
            n += 1
            gains = sorted((v["gain"] for v in cands.values()), reverse=True)
            if bn == t["bottleneck"]:
                ok += 1
                mark = "ok"
            elif bn in cands and cands[bn]["gain"] >= 2 / 3 * gains[0]:
                ties += 1
                mark = "tie"
            else:
                mark = "MISS"
        est = " ".join("%s %s~%s" % (f["rule"], f.get("estimate_speedup"),
                                     f.get("measured_speedup"))
                       for f in r.get("findings_applied", []))
        print("%-7s truth %-10s %5.1f %-5s | tfdoctor %-10s %5.1f %-7s %-4s | %s | %s" % (
            r["case"], t["verdict"], t["input_percent"], t["bottleneck"], td.get("verdict"),
            td.get("input_percent") or -1, bn, mark,
            " ".join("%s:%+.0f%%" % (k, 100 * v["gain"]) for k, v in cands.items()), est))
    print("bottleneck the measured one on %d of %d input-bound mixes, %d near ties" %
          (ok, n, ties))


if __name__ == "__main__":
    import sys
    if sys.argv[1:2] == ["summary"]:
        summary(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        for s in sys.argv[1:]:
            describe(s if "_" in s else "mix_" + s)
