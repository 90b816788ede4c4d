"""Run one catalog case end to end on real TensorFlow and write what was
measured beside its capture.

  python tests/tf/catalog.py list
  python tests/tf/catalog.py run CASE OUTDIR [--tfd BIN] [--quick]
  python tests/tf/catalog.py capture CASE OUTDIR

`capture` only writes the capture (OUTDIR/CASE/logs/...) and prints its
path: no timing, no judges (make real-forms, tests/tf/forms.sh).

`run` writes OUTDIR/CASE/logs/plugins/profile/<run>/<host>.xplane.pb (a real
tf.profiler capture of steps after warm-up) and OUTDIR/CASE/result.json:

- truth: the measured step time and input share (time the training loop
  spends in next(), over step time, timed without the profiler); the step
  time with an input that costs nothing (the same first batch, cached);
  for each candidate stage, the step time with that stage made cheaper;
  the truth's bottleneck is the candidate whose change cuts the step time
  most (when any cuts it by more than the noise).
- tfdoctor: `analyze -f json` of the capture (summary, host, findings).
- findings: for every finding with an estimate, the case's edit for its
  class applied and measured (the measured speed-up beside the estimate),
  or why it has none.
- xprof: TensorFlow's own input-pipeline analysis of the same .xplane.pb
  (xprof's converter): input %, the verdict sentence.

Every time is the median of REPS windows of STEPS steps.
"""

import argparse
import glob
import json
import os
import re
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as C  # noqa: E402
import judge as J  # noqa: E402
import mixes as M  # noqa: E402

STEPS, REPS, WARM, PROFILE_STEPS = 40, 3, 25, 30
NOISE = 0.05  # a change under 5 % of the step time is noise here


def band(pct):
    if pct is None:
        return "unknown"
    return "highly" if pct >= 20 else "moderately" if pct >= 5 else "not"


# ---- the training step --------------------------------------------------------
def links_of(train_ms):
    """The chain's links for about `train_ms` of forward and backward
    compute (about three matmuls a link)."""
    return max(1, int(round(train_ms * 1000.0 / (3 * C.MM_US))))


def chain_loss(batch, w, links):
    """The step's forward pass: a chain of `links` matmuls with w, tied to
    the batch; called under the step's gradient tape."""
    x = tf.reduce_mean(tf.cast(batch, tf.float32))
    m = tf.fill((128, 128), x * 0.0 + 1.0 / 128.0) @ w
    for _ in range(links):
        m = tf.tanh(m @ w)
    return tf.reduce_sum(m * m)


class CustomLoop:
    """A custom training loop: a variable-holding matmul chain with its
    gradient applied; `train_ms` sets the step's compute (forward and
    backward, about three matmuls a link)."""

    def __init__(self, train_ms):
        self.w = tf.Variable(tf.eye(128) * 0.5)
        self.links = links_of(train_ms)
        self.opt = tf.keras.optimizers.SGD(1e-6)

        @tf.function
        def step(batch):
            with tf.GradientTape() as tape:
                loss = chain_loss(batch, self.w, self.links)
            g = tape.gradient(loss, [self.w])
            self.opt.apply_gradients(zip(g, [self.w]))
            return loss

        self.step = step

    def windows(self, ds, warm, steps, reps, val=None, profile_dir=None):
        """Step time and wait per window (seconds); with profile_dir the
        first window is profiled, every step marked."""
        it = iter(ds)
        vit = iter(val) if val is not None else None
        out = []
        for i in range(warm):
            self._one(it, vit, i)
        for r in range(reps):
            if profile_dir and r == 0:
                tf.profiler.experimental.start(profile_dir)
            wait = 0.0
            t0 = time.perf_counter()
            for i in range(steps):
                n = warm + r * steps + i
                if profile_dir and r == 0 and self.no_markers:
                    # no step marker at all (a loop that never names its
                    # steps): the capture's span stands for the steps
                    wait += self._one(it, vit, n)
                elif profile_dir and r == 0 and self.marker_step_only:
                    # the marker around the step function alone, next()
                    # before it (`for step, x in enumerate(ds):`)
                    wait += self._one(it, vit, n, mark=lambda: tf.profiler.experimental.Trace(
                        "train", step_num=n, _r=1))
                elif profile_dir and r == 0:
                    with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
                        wait += self._one(it, vit, n)
                else:
                    wait += self._one(it, vit, n)
            total = time.perf_counter() - t0
            out.append((total / steps, wait / steps))
            if profile_dir and r == 0:
                tf.profiler.experimental.stop()
        return out

    side_every = 10  # a validation batch every 10 steps
    marker_step_only = False  # the step marker leaves next() out
    no_markers = False  # no step marker in the profiled window

    def _one(self, it, vit, n, mark=None):
        a = time.perf_counter()
        b = next(it)
        w = time.perf_counter() - a
        if mark is not None:
            with mark():
                self.step(b).numpy()
            return w
        if vit is not None and self.side_every == 1:
            # a second input every step (two datasets feed one step): its
            # wait is input too
            a = time.perf_counter()
            b2 = next(vit)
            w += time.perf_counter() - a
            self.step(b).numpy()
            self.step(b2).numpy()
            return w
        self.step(b).numpy()
        if vit is not None and n % self.side_every == self.side_every - 1:
            self.step(next(vit)).numpy()
        return w


class EpochLoop(CustomLoop):
    """The custom loop over a dataset that ends: `for b in ds:` each epoch,
    so every epoch makes a new iterator (next() timed across the seam)."""

    def windows(self, ds, warm, steps, reps, val=None, profile_dir=None):
        return CustomLoop.windows(self, _Epochs(ds), warm, steps, reps, val, profile_dir)


class FreshIteratorLoop(CustomLoop):
    """The custom loop that makes a new iterator of the dataset each step
    (`batch = next(iter(ds))` in the loop); one: the change TFD-H09 gives,
    one iterator made before the loop."""

    def __init__(self, train_ms, one=False, take1=False):
        CustomLoop.__init__(self, train_ms)
        self.one, self.take1 = one, take1

    def windows(self, ds, warm, steps, reps, val=None, profile_dir=None):
        return CustomLoop.windows(self, ds if self.one else _FreshEach(ds, self.take1), warm,
                                  steps, reps, val, profile_dir)


class _FreshEach:
    """next() makes a new iterator of the dataset and takes its first
    element; take1: of ds.take(1), a new dataset each time (`for b in
    ds.take(1):` in the loop)."""

    def __init__(self, ds, take1=False):
        self.ds, self.take1 = ds, take1

    def __iter__(self):
        return self

    def __next__(self):
        return next(iter(self.ds.take(1) if self.take1 else self.ds))


class _Epochs:
    """Iterates a dataset epoch after epoch, a new iterator each time."""

    def __init__(self, ds):
        self.ds = ds

    def __iter__(self):
        return self

    def __next__(self):
        if not hasattr(self, "it"):
            self.it = iter(self.ds)
        try:
            return next(self.it)
        except StopIteration:
            self.it = iter(self.ds)
            return next(self.it)


class KerasLoop:
    """Keras fit: a small dense model; `units` is its width."""

    def __init__(self, units):
        import keras

        self.keras = keras
        self.model = keras.Sequential([
            keras.layers.Input((16,)),
            keras.layers.Dense(int(units), activation="relu"),
            keras.layers.Dense(int(units), activation="relu"),
            keras.layers.Dense(1)])
        self.model.compile(optimizer="sgd", loss="mse")

    def windows(self, ds, warm, steps, reps, val=None, profile_dir=None):
        keras = self.keras
        marks = []

        class Timer(keras.callbacks.Callback):
            def on_train_batch_begin(self, b, logs=None):
                if profile_dir and b == warm:
                    tf.profiler.experimental.start(profile_dir)
                if profile_dir and warm <= b < warm + steps:
                    self.tr = tf.profiler.experimental.Trace("train", step_num=b, _r=1)
                    self.tr.__enter__()
                marks.append(time.perf_counter())

            def on_train_batch_end(self, b, logs=None):
                if profile_dir and warm <= b < warm + steps:
                    self.tr.__exit__(None, None, None)
                if profile_dir and b == warm + steps - 1:
                    tf.profiler.experimental.stop()

        total = warm + steps * reps
        self.model.fit(ds, steps_per_epoch=total + 1, epochs=1, verbose=0,
                       callbacks=[Timer()])
        out = []
        for r in range(reps):
            a = marks[warm + r * steps]
            b = marks[warm + (r + 1) * steps]
            out.append(((b - a) / steps, None))  # fit's wait is not timed
        return out


class MirroredLoop(CustomLoop):
    """The custom loop under MirroredStrategy on two logical CPU devices (set
    up by main() before TensorFlow starts): the dataset is distributed, so a
    MultiDeviceIterator feeds a per-device pipeline on each device from the
    host pipeline, as on a multi-GPU machine."""

    def __init__(self, train_ms):
        self.strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
        with self.strategy.scope():
            self.w = tf.Variable(tf.eye(128) * 0.5)
        self.links = links_of(train_ms)
        strategy, w, links = self.strategy, self.w, self.links

        @tf.function
        def step(batch):
            def replica(b):
                with tf.GradientTape() as tape:
                    loss = chain_loss(b, w, links)
                w.assign_sub(1e-6 * tape.gradient(loss, w))
                return loss
            return strategy.reduce("SUM", strategy.run(replica, args=(batch,)), axis=None)

        self.step = step

    def windows(self, ds, warm, steps, reps, val=None, profile_dir=None):
        return CustomLoop.windows(self, self.strategy.experimental_distribute_dataset(ds),
                                  warm, steps, reps, val, profile_dir)


class InFunctionLoop(CustomLoop):
    """The loop inside a tf.function: `for b in d: step(b)` in it, which
    autograph makes a scan over the dataset reduced by one ReduceDataset
    op, one call an epoch of `per_call` steps over the same dataset (a new
    iterator each call, as an epoch of a dataset that ends makes), a window
    (timed, or profiled with a marker around each call) whole calls; pull:
    the change TFD-H06 gives, one iterator pulled with next() under
    tf.range in the function. Its wait is not timed: the truth is the free
    input's."""

    per_call = 20

    def __init__(self, train_ms, pull=False):
        CustomLoop.__init__(self, train_ms)
        w, links, opt = self.w, self.links, self.opt

        def one(b):
            with tf.GradientTape() as tape:
                loss = chain_loss(b, w, links)
            g = tape.gradient(loss, [w])
            opt.apply_gradients(zip(g, [w]))
            return loss

        @tf.function
        def epoch(d):
            total = 0.0
            for b in d:
                total += one(b)
            return total

        @tf.function
        def pull_steps(it, n):
            total = 0.0
            for _ in tf.range(n):
                total += one(next(it))
            return total

        self.epoch, self.pull_steps, self.pull = epoch, pull_steps, pull

    def windows(self, ds, warm, steps, reps, val=None, profile_dir=None):
        it = iter(ds) if self.pull else None
        part = ds.take(self.per_call)  # an epoch: the same dataset each call
        ncalls = max(1, -(-steps // self.per_call))

        def call():
            if self.pull:
                self.pull_steps(it, tf.constant(self.per_call)).numpy()
            else:
                self.epoch(part).numpy()

        for _ in range(max(1, warm // self.per_call)):
            call()
        out = []
        for r in range(reps):
            prof = profile_dir and r == 0
            if prof:
                tf.profiler.experimental.start(profile_dir)
            t0 = time.perf_counter()
            for i in range(ncalls):
                if prof:
                    with tf.profiler.experimental.Trace("train", step_num=i, _r=1):
                        call()
                else:
                    call()
            total = time.perf_counter() - t0
            if prof:
                tf.profiler.experimental.stop()
            out.append((total / (ncalls * self.per_call), None))
        return out


def logical_cpus(n):
    """n logical CPU devices: before TensorFlow's runtime starts."""
    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration()] * n)


def loop_of(c, k=None):
    if c["loop"] == "in_function":
        return InFunctionLoop(c["train_ms"], pull=bool((k or {}).get("pull_next")))
    if c["loop"] == "mirrored":
        return MirroredLoop(c["train_ms"])
    if c["loop"] == "keras":
        return KerasLoop(c["train_units"])
    if c["loop"] == "epochs":
        return EpochLoop(c["train_ms"])
    if c["loop"] == "fresh_iterator":
        return FreshIteratorLoop(c["train_ms"], one=bool((k or {}).get("one_iterator")),
                                 take1=bool((k or {}).get("take1")))
    loop = CustomLoop(c["train_ms"])
    loop.side_every = c.get("side_every", 10)
    loop.marker_step_only = c.get("marker_step_only", False)
    loop.no_markers = c.get("no_markers", False)
    return loop


def knobs(c, change=None):
    k = dict(c["defaults"])
    k.update(change or {})
    return k


def measure(c, change=None, fast_input=False, quick=False):
    """Median step time (ms) and wait share (%, custom loop) of the case
    with a knob change; fast_input: the first batch cached and repeated."""
    ds = c["build"](knobs(c, change))
    if fast_input:
        ds = ds.take(1).cache().repeat()
    val = c["val_build"](knobs(c, change)) if c.get("val_build") else None
    if fast_input and val is not None and c.get("side_every") == 1:
        val = val.take(1).cache().repeat()  # a second input every step: free too
    steps, reps = (15, 2) if quick else (STEPS, REPS)
    w = loop_of(c, knobs(c, change)).windows(ds, c.get("warm_steps", WARM), steps, reps, val=val)
    step = statistics.median(x[0] for x in w) * 1000
    waits = [x[1] / x[0] * 100 for x in w if x[1] is not None]
    return {"step_ms": round(step, 3),
            "input_percent": round(statistics.median(waits), 2) if waits else None,
            "windows_ms": [round(x[0] * 1000, 3) for x in w]}


def fix_of(c, f):
    """The change finding f's own advice makes to case c (None: no edit
    maps it): a mix's depends on the stage the finding names."""
    return c["fix_for"](f) if c.get("fix_for") else c["fixes"].get(f["class"])


def capture(c, out, quick=False):
    logs = os.path.join(out, "logs")
    ds = c["build"](knobs(c))
    val = c["val_build"](knobs(c)) if c.get("val_build") else None
    w = loop_of(c, knobs(c)).windows(ds, c.get("warm_steps", WARM), 12 if quick else PROFILE_STEPS, 1,
                           val=val, profile_dir=logs)
    found = sorted(glob.glob(os.path.join(logs, "plugins/profile/*/*.xplane.pb")))
    if not found:
        raise SystemExit("catalog: no capture was written under %s" % logs)
    step, wait = w[0]
    return found[-1], {"step_ms": round(step * 1000, 3),
                       "input_percent": None if wait is None else round(wait / step * 100, 2)}


# ---- the judges ------------------------------------------------------------------
def run_tfd(tfd, path):
    p = subprocess.run([tfd, "analyze", "-q", "-f", "json", path], capture_output=True,
                       text=True)
    if p.returncode not in (0, 3):
        return {"error": p.stderr.strip()}
    return json.loads(p.stdout)


def run_xprof(path):
    """TensorFlow's own input-pipeline analysis of the capture: the input %
    it computes (the steps' input time over their step time, as the page's
    conclusion states it) and its verdict. Its "POTENTIALLY input-bound"
    verdict speaks of 'All Others' time, not of waiting for input: with
    under 5 % waiting it is the band "not" here, the word kept beside it."""
    from xprof.convert import raw_to_tool_data

    data, _ = raw_to_tool_data.xspace_to_tool_data(
        [path], "input_pipeline_analyzer", {"use_saved_result": False})
    d = json.loads(data)
    tab = d[1] if len(d) > 1 else {}
    p = tab.get("p", {})
    concl = p.get("input_conclusion", "")
    cols = [x["id"] for x in tab.get("cols", [])]
    rows = tab.get("rows", [])
    pct = None
    if rows and "infeedTimeMs" in cols and "stepTimeMs" in cols:
        i, s = cols.index("infeedTimeMs"), cols.index("stepTimeMs")
        step = sum(r["c"][s]["v"] for r in rows)
        pct = round(100 * sum(r["c"][i]["v"] for r in rows) / step, 2) if step else None
    word = next((w for w in ("HIGHLY", "MODERATELY", "POTENTIALLY", "NOT") if w in concl), None)
    verdict = band(pct) if pct is not None else "unknown"
    return {"input_percent": pct, "verdict": verdict, "word": word, "conclusion": concl,
            "steps": len(rows)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["list", "run", "capture"])
    ap.add_argument("case", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--tfd", default=os.environ.get("TFD", "build/rel/tfdoctor"))
    ap.add_argument("--quick", action="store_true", help="short windows (the CI smoke)")
    a = ap.parse_args()
    if a.cmd == "list":
        for n, c in C.CASES.items():
            print(n, "-", c["planted"] or "not input-bound")
        return
    c = C.CASES.get(a.case) or M.case_of(a.case)
    if not c:
        raise SystemExit("catalog: no case '%s' (see: catalog.py list)" % a.case)
    if c["loop"] == "mirrored":
        logical_cpus(2)
    out = os.path.join(a.out, a.case)
    os.makedirs(out, exist_ok=True)
    if a.cmd == "capture":
        print(capture(c, out, a.quick)[0])
        return
    t0 = time.time()
    res = {"case": a.case, "covers": c["covers"], "planted": c["planted"],
           "fixes": c["fixes"],
           "loop": c["loop"], "defaults": c["defaults"], "train_ms": c.get("train_ms"), "train_units": c.get("train_units"),
           "tensorflow": tf.__version__, "quick": a.quick}

    # the capture first: what tfdoctor and xprof read
    xplane, profiled = capture(c, out, a.quick)
    res["capture"] = os.path.relpath(xplane, out)
    res["capture_bytes"] = os.path.getsize(xplane)

    # the truth
    base = measure(c, quick=a.quick)
    fast = measure(c, fast_input=True, quick=a.quick)
    truth = {"baseline": base, "fast_input": fast, "profiled": profiled, "candidates": {}}
    bound = 1 - fast["step_ms"] / base["step_ms"]
    truth["input_share_by_fast_input"] = round(max(0.0, bound) * 100, 2)
    # the verdict's truth is the captured run's own wait, timed around next()
    # (the profiler slows a 2-core run: its share can differ from the run
    # without it, recorded beside it)
    # next() costs something even when the element is ready (the Python
    # iterator, the tensor handed back): what it took with the free input is
    # that cost, not waiting; it is taken off each timed share
    over = 0.0
    if fast["input_percent"] is not None:
        over = fast["input_percent"] * fast["step_ms"] / 100.0
    truth["next_overhead_ms"] = round(over, 4)

    def waiting(m):
        if m["input_percent"] is None:
            return None
        w = m["input_percent"] * m["step_ms"] / 100.0
        return round(max(0.0, w - over) / m["step_ms"] * 100.0, 2)

    unprof = waiting(base)
    if unprof is None:
        unprof = truth["input_share_by_fast_input"]
    pct = waiting(profiled)
    if pct is None:
        pct = unprof
    truth["input_percent"] = pct
    truth["verdict"] = band(pct)
    truth["input_percent_unprofiled"] = unprof
    truth["verdict_unprofiled"] = band(unprof)
    best, best_gain = None, NOISE
    for label, (change, regex) in c["candidates"].items():
        if not change:
            continue
        m = measure(c, change, quick=a.quick)
        gain = 1 - m["step_ms"] / base["step_ms"]
        truth["candidates"][label] = dict(m, change=change, stage=regex,
                                          gain=round(gain, 4))
        if gain > best_gain:
            best, best_gain = label, gain
    truth["bottleneck"] = best if truth["verdict"] != "not" else None
    truth["bottleneck_stage"] = c["candidates"][best][1] if truth["bottleneck"] else None
    res["truth"] = truth

    # tfdoctor
    tj = run_tfd(a.tfd, xplane)
    if "error" in tj:
        res["tfdoctor"] = tj
    else:
        res["tfdoctor"] = J.tfd_part(tj, truth)
        # each finding with an estimate: apply its change, measure
        applied = []
        for f, row in J.estimate_rows(tj):
            fix = fix_of(c, f)
            if fix is None:
                row["applied"] = None
                row["why_not"] = "no edit of this case maps class '%s'" % f["class"]
            else:
                J.measured(row, base["step_ms"], fix, measure(c, fix, quick=a.quick))
            applied.append(row)
        res["findings_applied"] = applied
        # each finding without an estimate whose change this case can make:
        # measured too (what the advice is worth, where no number is put)
        plain = []
        for f, row in J.plain_rows(tj):
            fix = fix_of(c, f)
            if fix is not None:
                plain.append(J.measured(row, base["step_ms"], fix,
                                        measure(c, fix, quick=a.quick)))
        res["findings_measured"] = plain

    try:
        res["xprof"] = run_xprof(xplane)
    except Exception as e:  # the converter's failure is recorded, not fatal
        res["xprof"] = {"error": repr(e)}
    res["seconds"] = round(time.time() - t0, 1)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(res, f, indent=1, sort_keys=True)
        f.write("\n")
    print(json.dumps({"case": a.case, "truth": truth["verdict"], "tb": truth["bottleneck"],
                      "tfd": res["tfdoctor"].get("verdict"),
                      "tfd_pct": res["tfdoctor"].get("input_percent"),
                      "xprof_pct": res["xprof"].get("input_percent"),
                      "truth_pct": pct, "secs": res["seconds"]}))


if __name__ == "__main__":
    main()
