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


def build(k):
    if k["src"] == "slices":
        ds = tf.data.Dataset.from_tensor_slices(
            np.tile(np.arange(97, dtype=np.float32)[:, None] / 97.0, (1, 16))).repeat()
        first = lambda x: x  # noqa: E731
    else:
        d = k["read_us"] / 1e6

        def wait(rec):
            time.sleep(d)  # slow storage: the thread waits, no core is busy
            return rec

        def slow(r):
            return r.map(lambda rec: tf.ensure_shape(tf.numpy_function(wait, [rec], tf.string), ()))

        files = C.tfrecord_files()
        if k["reader"] == "flat":
            ds = slow(tf.data.TFRecordDataset(files).repeat())
        else:
            ds = tf.data.Dataset.from_tensor_slices(files).repeat().interleave(
                lambda f: slow(tf.data.TFRecordDataset(f)), cycle_length=4, block_length=1,
                num_parallel_calls=C.par(k["il_par"]))
        first = C.parse
    ds = ds.map(lambda x: C.burn(first(x), k["a_ms"]), num_parallel_calls=C.par(k["a_par"]))
    if k["b_ms"]:
        ds = ds.map(lambda x: C.burn(x, k["b_ms"]), num_parallel_calls=C.par(k["b_par"]))
    ds = ds.batch(k["batch"])
    if k["c_ms"]:
        ds = ds.map(lambda x: C.burn(x, k["c_ms"]), num_parallel_calls=C.par(k["c_par"]))
    if k["prefetch"]:
        ds = ds.prefetch(k["prefetch"])
    if not k["fusion"]:
        o = tf.data.Options()
        o.experimental_optimization.map_and_batch_fusion = False
        ds = ds.with_options(o)
    return ds


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


def fix_for(k, cands):
    """The change a finding's own advice makes to this pipeline, for the
    stage the finding names (None: no edit of a mix maps it)."""
    import re

    def which(f):
        name = f.get("stage_long_name") or ""
        for label, (_, rx) in cands.items():
            if re.search(rx, name):
                return label
        return None

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



def case_of(name):
    """The catalog case `mix_SEED`, or None."""
    if not name.startswith("mix_") or not name[4:].isdigit():
        return None
    seed = int(name[4:])
    k, train_ms = draw(seed)
    cands = candidates(k)
    return dict(build=build, defaults=k, train_ms=train_ms, loop="custom",
                planted=None, covers=["mix"], candidates=cands, fixes={},
                fix_for=fix_for(k, cands))


def describe(seed):
    k, t = draw(seed)
    print("mix_%d" % seed, "train_ms=%s" % t, k)
    for label, (ch, rx) in candidates(k).items():
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
    paths = glob.glob(os.path.join(out, "mix_*", "result.json"))
    for p in sorted(paths, key=lambda x: int(re.search(r"mix_(\d+)", x).group(1))):
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
            describe(int(s))
