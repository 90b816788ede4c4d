"""Turn the catalog's result.json files into docs/accuracy.md (or check it).

  python3 tests/tf/report.py RESULTS_DIR [-o docs/accuracy.md]

Plain Python 3 (no TensorFlow): the results are data.
"""

import argparse
import glob
import json
import os
import re
import subprocess
import sys

# the truth's bottleneck pattern for "the loop makes a new iterator each step"
ITER_EACH_STEP = "@new_iterator_each_step"

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import judge as J  # noqa: E402

ESTIMATE_TOLERANCE = 0.25
PCT_TOLERANCE = 2.0


def load(d):
    out = []
    for p in sorted(glob.glob(os.path.join(d, "*", "result.json"))):
        with open(p) as f:
            out.append(json.load(f))
    return out


def fmt_pct(v):
    return "-" if v is None else "%.1f" % v


def short_stage(long_name):
    if not long_name:
        return "-"
    parts = long_name.split("::")
    return "::".join(parts[-2:]) if len(parts) > 2 else long_name


def totals(rs):
    t = dict(cases=len(rs), not_bound=0, verdict_truth=0, verdict_xprof=0, pct_close=0,
             pct_n=0, bound=0, bn_right=0, stage_named=0, est_n=0, est_ok=0, est_unmapped=0)
    for r in rs:
        tr, td, xp = r["truth"], r.get("tfdoctor", {}), r.get("xprof", {})
        if tr["verdict"] == "not":
            t["not_bound"] += 1
        t["verdict_truth"] += td.get("verdict") == tr["verdict"]
        t["verdict_xprof"] += td.get("verdict") == xp.get("verdict")
        if xp.get("input_percent") is not None and td.get("input_percent") is not None:
            t["pct_n"] += 1
            t["pct_close"] += abs(xp["input_percent"] - td["input_percent"]) <= PCT_TOLERANCE
        if tr["verdict"] != "not" and tr.get("bottleneck"):
            t["bound"] += 1
            t["bn_right"] += bool(td.get("bottleneck_right"))
            named = td.get("bottleneck_long_name") or td.get("slowest_stage_long_name") or ""
            if tr["bottleneck_stage"] == ITER_EACH_STEP:
                t["stage_named"] += bool(td.get("bottleneck_right"))
            else:
                t["stage_named"] += re.search(tr["bottleneck_stage"], named) is not None
        for f in r.get("findings_applied", []):
            if f.get("applied") is None:
                t["est_unmapped"] += 1
                continue
            t["est_n"] += 1
            t["est_ok"] += f.get("error") is not None and abs(f["error"]) <= ESTIMATE_TOLERANCE
    return t


def load_notes():
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "notes.json")
    with open(p) as f:
        return json.load(f)


def misses(r):
    """What went wrong on case r: a list of short phrases."""
    tr, td, xp = r["truth"], r.get("tfdoctor", {}), r.get("xprof", {})
    out = []
    if td.get("verdict") != tr["verdict"]:
        out.append("verdict")
    if td.get("verdict") != xp.get("verdict"):
        out.append("verdict vs xprof")
    if xp.get("input_percent") is not None and td.get("input_percent") is not None and \
            abs(xp["input_percent"] - td["input_percent"]) > PCT_TOLERANCE:
        out.append("input % vs xprof")
    if tr["verdict"] != "not" and tr.get("bottleneck") and not td.get("bottleneck_right"):
        out.append("bottleneck")
    return out


def render(rs, results_dir):
    t = totals(rs)
    notes = load_notes()
    L = []
    w = L.append
    w("# Accuracy on real TensorFlow")
    w("")
    w("Every figure below comes from a real training job on TensorFlow %s (CPU), "
      "profiled with `tf.profiler.experimental.start/stop` and judged three ways: "
      "**truth** by measuring and by intervention, **tfdoctor** on the capture, and "
      "**xprof**, TensorFlow's own input-pipeline analysis of the same `.xplane.pb` "
      "(its converter, offline). The catalog and how it measures are in "
      "[tests/tf/README.md](../tests/tf/README.md)." %
      (rs[0]["tensorflow"] if rs else "?"))
    w("")
    w("## Totals")
    w("")
    w("| what | result |")
    w("| --- | --- |")
    w("| cases (not input-bound by the truth) | %d (%d) |" % (t["cases"], t["not_bound"]))
    w("| verdict equal to the truth's | %d of %d |" % (t["verdict_truth"], t["cases"]))
    w("| verdict equal to xprof's | %d of %d |" % (t["verdict_xprof"], t["cases"]))
    w("| input %% within %.0f points of xprof's | %d of %d |" %
      (PCT_TOLERANCE, t["pct_close"], t["pct_n"]))
    w("| bottleneck right (input-bound cases with a measured bottleneck) | %d of %d |" %
      (t["bn_right"], t["bound"]))
    w("| the stage named, as bottleneck or slowest stage, is the measured one | %d of %d |" %
      (t["stage_named"], t["bound"]))
    w("| estimates within %d %% of the measured effect of applying the finding | %d of %d |"
      % (ESTIMATE_TOLERANCE * 100, t["est_ok"], t["est_n"]))
    w("| findings with an estimate that no edit of the case maps | %d |" % t["est_unmapped"])
    w("")
    w("## Per case")
    w("")
    w("Input % is the share of step time spent waiting for input. Truth: the captured "
      "run's time in `next()`, timed in the training loop, less what `next()` costs when "
      "the element is ready (a Keras `fit` case: one minus the step time with a free input "
      "over the real step time). The truth's bottleneck is the candidate stage whose "
      "halving cut the step time most (more than 5 %), measured without the profiler.")
    w("")
    w("| case | truth: verdict, input %, bottleneck | tfdoctor: verdict, input %, "
      "bottleneck | xprof: verdict, input % | right? |")
    w("| --- | --- | --- | --- | --- |")
    for r in rs:
        tr, td, xp = r["truth"], r.get("tfdoctor", {}), r.get("xprof", {})
        bn = tr.get("bottleneck") or "-"
        ok = []
        ok.append("verdict" if td.get("verdict") == tr["verdict"] else "**verdict differs**")
        if xp.get("input_percent") is not None and td.get("input_percent") is not None:
            d = abs(xp["input_percent"] - td["input_percent"])
            ok.append("%% %s" % ("= xprof" if d <= PCT_TOLERANCE else "**off %.1f**" % d))
        if tr["verdict"] != "not" and tr.get("bottleneck"):
            ok.append("stage" if td.get("bottleneck_right") else "**stage missed**")
        td_bn = "new iterator each step" if td.get("new_iterator_each_step") else \
            td.get("bottleneck_long_name") or ("(slowest %s)" % short_stage(
            td.get("slowest_stage_long_name")) if td.get("slowest_stage_long_name") else "-")
        w("| `%s` | %s, %s, %s | %s, %s, %s | %s, %s | %s |" % (
            r["case"], tr["verdict"], fmt_pct(tr["input_percent"]), bn,
            td.get("verdict", "error"), fmt_pct(td.get("input_percent")),
            "`%s`" % short_stage(td_bn) if td_bn != "-" else "-",
            xp.get("verdict", "error"), fmt_pct(xp.get("input_percent")), "; ".join(ok)))
    w("")
    w("## Misses, and why")
    w("")
    w("Every case or estimate that is off stays in the tables above; this is why.")
    w("")
    for r in rs:
        m = misses(r)
        if m:
            w("- `%s` (%s): %s" % (r["case"], ", ".join(m),
                                   notes.get(r["case"], "**not explained yet**")))
        for f in r.get("findings_applied", []):
            key = "%s:%s" % (r["case"], f["rule"])
            err = f.get("error")
            if key in notes:
                w("- `%s` %s (estimate %s, measured %s): %s" % (
                    r["case"], f["rule"],
                    "%.2fx" % f["estimate_speedup"] if f.get("estimate_speedup") else "-",
                    "%.2fx" % f["measured_speedup"] if f.get("measured_speedup") else "-",
                    notes[key]))
            elif err is not None and abs(err) > ESTIMATE_TOLERANCE:
                w("- `%s` %s: **not explained yet**" % (r["case"], f["rule"]))
    w("")
    w("## Estimates against the measured effect")
    w("")
    w("For each finding that carries an estimate, the case's pipeline is changed the way "
      "the finding's code says and the job is measured again (where the finding's estimate "
      "models a halved cost, the cost is halved). Estimate: the finding's `step_speedup`. "
      "Measured: step time before over after (median of the windows). Error: estimate / "
      "measured - 1.")
    w("")
    w("| case | finding | change applied | estimate | measured | error |")
    w("| --- | --- | --- | --- | --- | --- |")
    for r in rs:
        for f in r.get("findings_applied", []):
            if f.get("applied") is None:
                w("| `%s` | %s %s | none: %s | %s | - | - |" % (
                    r["case"], f["rule"], f["class"], f.get("why_not", ""),
                    "%.2fx" % f["estimate_speedup"] if f.get("estimate_speedup") else "-"))
                continue
            est = f.get("estimate_speedup")
            err = f.get("error")
            w("| `%s` | %s %s | `%s` | %s | %.2fx | %s |" % (
                r["case"], f["rule"], f["class"], json.dumps(f["applied"]),
                "%.2fx" % est if est else "-", f["measured_speedup"],
                "-" if err is None else ("%+.0f %%" % (100 * err) if abs(err) <= ESTIMATE_TOLERANCE
                                         else "**%+.0f %%**" % (100 * err))))
    w("")
    w("## Findings without an estimate, their change measured")
    w("")
    w("A finding whose estimate model is `none` puts no number on its advice; where the "
      "case can make the change its code says, the job is measured with it all the same. "
      "Measured: step time before over after.")
    w("")
    w("| case | finding | change applied | measured |")
    w("| --- | --- | --- | --- |")
    for r in rs:
        for f in r.get("findings_measured", []):
            w("| `%s` | %s %s | `%s` | %.2fx |" % (
                r["case"], f["rule"], f["class"], json.dumps(f["applied"]),
                f["measured_speedup"]))
    w("")
    w("## Regenerate")
    w("")
    w("    make tf-venv            # TensorFlow %s and xprof in build/tfvenv" %
      (rs[0]["tensorflow"] if rs else ""))
    w("    make real-captures      # every case, tests/tf/results, then this page")
    w("    make real-rejudge       # a new binary on the same captures (no re-timing)")
    w("    make real-mixes         # random pipelines (tests/tf/mixes.py), judged the same "
      "way: their own table, not on this page")
    w("")
    w("One case: `tests/tf/run.sh build/real/catalog CASE`. Times swing 10-20 % on a "
      "shared machine; each figure is the median of three windows of 40 steps.")
    w("")
    return "\n".join(L)


def rejudge(r, d, tfd):
    """tfdoctor's part of a result again, from its capture, by binary tfd:
    the truth and the measured effects stay (a finding whose class was not
    measured before is listed without a measurement)."""
    cap = os.path.join(d, r["case"], r["capture"])
    p = subprocess.run([tfd, "analyze", "-q", "-f", "json", cap], capture_output=True, text=True)
    if p.returncode not in (0, 3):
        r["tfdoctor"] = {"error": p.stderr.strip()}
        return
    tj = json.loads(p.stdout)
    tr = r["truth"]
    r["tfdoctor"] = J.tfd_part(tj, tr)
    measured = {json.dumps(f["applied"], sort_keys=True): f
                for f in r.get("findings_applied", []) if f.get("applied") is not None}
    # the truth's candidates measured their changes in the same run: a
    # finding that makes one of those changes takes that measurement
    for c in tr.get("candidates", {}).values():
        key = json.dumps(c.get("change"), sort_keys=True)
        if key not in measured and c.get("step_ms") is not None:
            measured[key] = {"measured": {k: c[k] for k in ("input_percent", "step_ms", "windows_ms")
                                          if k in c}}
    rows = []
    for f, row in J.estimate_rows(tj):
        fix = r.get("fixes", {}).get(f["class"])
        old = measured.get(json.dumps(fix, sort_keys=True)) if fix is not None else None
        if fix is None:
            row["applied"] = None
            row["why_not"] = "no edit of this case maps class '%s'" % f["class"]
        elif old is None:
            row["applied"] = None
            row["why_not"] = "not measured in this run (make real-captures)"
        else:
            J.measured(row, tr["baseline"]["step_ms"], fix, old["measured"])
        rows.append(row)
    r["findings_applied"] = rows
    before = {(f["rule"], json.dumps(f["applied"], sort_keys=True)): f
              for f in r.get("findings_measured", [])}
    plain = []
    for f, row in J.plain_rows(tj):
        fix = r.get("fixes", {}).get(f["class"])
        old = before.get((f["rule"], json.dumps(fix, sort_keys=True))) if fix else None
        if old is not None:
            plain.append(J.measured(row, tr["baseline"]["step_ms"], fix, old["measured"]))
    r["findings_measured"] = plain


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("-o", "--output")
    ap.add_argument("--rejudge", metavar="TFD",
                    help="run this tfdoctor binary on the captures again (truth kept)")
    ap.add_argument("--write", action="store_true",
                    help="with --rejudge: save the new results in the result.json files")
    a = ap.parse_args()
    rs = load(a.results)
    if a.rejudge:
        for r in rs:
            rejudge(r, a.results, a.rejudge)
            if a.write:
                p = os.path.join(a.results, r["case"], "result.json")
                with open(p + ".tmp", "w") as f:
                    json.dump(r, f, indent=1, sort_keys=True)
                    f.write("\n")
                os.replace(p + ".tmp", p)
    if not rs:
        sys.exit("report: no result.json under %s" % a.results)
    text = render(rs, a.results)
    if a.output:
        with open(a.output + ".tmp", "w") as f:
            f.write(text)
        os.replace(a.output + ".tmp", a.output)
    else:
        sys.stdout.write(text)
    t = totals(rs)
    print("report: %d cases; verdict = truth %d, = xprof %d; input %% close %d/%d; "
          "bottleneck %d/%d; estimates %d/%d" % (
              t["cases"], t["verdict_truth"], t["verdict_xprof"], t["pct_close"], t["pct_n"],
              t["bn_right"], t["bound"], t["est_ok"], t["est_n"]), file=sys.stderr)


if __name__ == "__main__":
    main()
