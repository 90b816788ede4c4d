#!/usr/bin/env python3
"""Large real captures: a tf.data pipeline of cheap elements read as fast
as it goes for SECONDS seconds under the profiler (about 15-20 MB a
second on 2 cores), large enough that tfdoctor reads the host plane in
blocks on every core. KIND:
  map         a map whose function runs a few dozen ops an element, every
              step marked: iterator events and function ops most of the
              host plane (the default)
  interleave  TFRecord files read by a parallel interleave, each record
              parsed by a map, batched: reader threads and elements
              handed between threads (Produce/Consume)
  tf1         TensorFlow 1's graph mode: a Session.run loop over a
              one-shot iterator, every tenth run an evaluation's over an
              initializable one, no step markers (the session's runs and
              their GetNext ops are the steps)
Usage: large.py OUTDIR [SECONDS] [KIND] (SECONDS 0: the kind's own, 4 or
for tf1, whose runs are slower, 12)"""
import os
import sys
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402


def ops(x):  # a function of a few dozen ops: most of its thread's events
    y = tf.math.sqrt(tf.cast(x, tf.float32))
    for _ in range(12):
        y = y * 1.0001 + 0.5
    return y


def marked(it, out, secs):
    """next() on it for secs seconds under the profiler, each step marked."""
    for _ in range(200):  # warm-up: the threads and AUTOTUNE started
        next(it)
    tf.profiler.experimental.start(out)
    t0, n = time.time(), 0
    while time.time() - t0 < secs:
        with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
            next(it)
        n += 1
    tf.profiler.experimental.stop()
    return n


def run_map(out, secs):
    ds = tf.data.Dataset.range(10**9)
    ds = ds.map(ops, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(lambda x: x + 1.0)
    ds = ds.batch(4).prefetch(tf.data.AUTOTUNE)
    return marked(iter(ds), out, secs)


def run_interleave(out, secs):
    d = tempfile.mkdtemp(prefix="tfd-large-")
    files = []
    for i in range(8):
        f = os.path.join(d, "part-%d.tfrecord" % i)
        with tf.io.TFRecordWriter(f) as w:
            for k in range(20000):
                w.write(b"%08d" % (i * 20000 + k) * 4)
        files.append(f)
    ds = tf.data.Dataset.from_tensor_slices(files).repeat()
    ds = ds.interleave(tf.data.TFRecordDataset, cycle_length=4,
                       num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(lambda r: tf.strings.length(tf.strings.substr(r, 0, 8)),
                num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.batch(8).prefetch(tf.data.AUTOTUNE)
    n = marked(iter(ds), out, secs)
    for f in files:
        os.remove(f)
    os.rmdir(d)
    return n


def run_tf1(out, secs):
    tf.compat.v1.disable_eager_execution()
    train = tf.data.Dataset.range(10**9).map(ops).batch(4).prefetch(2)
    nxt = tf.compat.v1.data.make_one_shot_iterator(train).get_next()
    ev = tf.compat.v1.data.make_initializable_iterator(
        tf.data.Dataset.range(10**6).map(lambda x: ops(x) * 3.0).batch(4))
    ev_next = ev.get_next()
    n = 0
    with tf.compat.v1.Session() as sess:
        for _ in range(200):
            sess.run(nxt)
        tf.profiler.experimental.start(out)
        t0 = time.time()
        while time.time() - t0 < secs:
            sess.run(nxt)
            n += 1
            if n % 10 == 0:  # an evaluation: three runs of its own
                sess.run(ev.initializer)
                for _ in range(3):
                    sess.run(ev_next)
        tf.profiler.experimental.stop()
    return n


def main():
    out = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 0
    kind = sys.argv[3] if len(sys.argv) > 3 else "map"
    secs = secs or (12.0 if kind == "tf1" else 4.0)
    run = {"map": run_map, "interleave": run_interleave, "tf1": run_tf1}[kind]
    n = run(out, secs)
    print("large %s: %d steps in %.1f s" % (kind, n, secs))


if __name__ == "__main__":
    main()
