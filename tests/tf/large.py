#!/usr/bin/env python3
"""A large real capture: a tf.data pipeline of cheap elements (its
iterator events and a map's function's ops, a few dozen per element,
most of the host plane) read as fast as it goes, every step marked, profiled for
SECONDS seconds: about 15-20 MB a second on 2 cores. Large enough that
tfdoctor reads its host plane in blocks on every core.
Usage: large.py OUTDIR [SECONDS]"""
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402


def main():
    out = sys.argv[1]
    secs = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    ds = tf.data.Dataset.range(10**9)
    def ops(x):  # a function of a few dozen ops: most of its thread's events
        y = tf.math.sqrt(tf.cast(x, tf.float32))
        for _ in range(12):
            y = y * 1.0001 + 0.5
        return y

    ds = ds.map(ops, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.map(lambda x: x + 1.0)
    ds = ds.batch(4).prefetch(tf.data.AUTOTUNE)
    it = iter(ds)
    for _ in range(200):  # warm-up: the threads and AUTOTUNE started
        next(it)
    tf.profiler.experimental.start(out)
    t0, n = time.time(), 0
    while time.time() - t0 < secs:
        with tf.profiler.experimental.Trace("train", step_num=n, _r=1):
            next(it)
        n += 1
    tf.profiler.experimental.stop()
    print("large: %d steps in %.1f s" % (n, secs))


if __name__ == "__main__":
    main()
