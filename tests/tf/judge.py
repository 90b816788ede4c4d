"""tfdoctor's side of a catalog result, from its `analyze -f json` output:
shared by catalog.py (as it runs a case) and report.py (judging the same
captures with another binary). Plain Python: no TensorFlow."""

import re


def tfd_part(tj, truth):
    """The result's "tfdoctor" object: verdict, share, bottleneck, findings,
    and whether the bottleneck is the truth's."""
    s, h = tj["summary"], tj["hosts"][0]
    td = {"input_percent": h["input_percent"], "verdict": h["input_bound"],
          "confidence": s["verdict_confidence"], "steps": h["steps"],
          "bottleneck": s["bottleneck"], "bottleneck_long_name": s["bottleneck_long_name"],
          "slowest_stage_long_name": s["slowest_stage_long_name"],
          "top_op": s["bottleneck_top_op"],
          "new_iterator_each_step": s.get("new_iterator_each_step"),
          "findings": [{k: f.get(k) for k in ("rule", "class", "stage", "stage_long_name",
                                              "estimate")} for f in tj["findings"]]}
    if truth.get("bottleneck_stage") == "@new_iterator_each_step":
        # the loop's new iterator each step, not a stage, is what the
        # intervention named
        td["bottleneck_right"] = bool(s.get("new_iterator_each_step"))
    elif truth.get("bottleneck_stage"):
        td["bottleneck_right"] = bool(s["bottleneck_long_name"]) and re.search(
            truth["bottleneck_stage"], s["bottleneck_long_name"]) is not None
    return td


def estimate_rows(tj):
    """(finding, row) for every finding with an estimate: the row holds its
    rule, class and the step speed-up it estimates (a pipeline hidden
    behind the step: the step keeps its compute, the wait becomes
    input_percent_after of it)."""
    h = tj["hosts"][0]
    for f in tj["findings"]:
        est = f.get("estimate") or {}
        if est.get("model") in (None, "none") or not est.get("known"):
            continue
        row = {"rule": f["rule"], "class": f["class"], "stage": f.get("stage"),
               "estimate_speedup": est.get("step_speedup") or est.get("speedup"),
               "input_percent_after": est.get("input_percent_after")}
        if not row["estimate_speedup"] and est.get("input_percent_after") is not None \
                and h["input_percent"] is not None:
            row["estimate_speedup"] = round(
                (100 - est["input_percent_after"]) / max(1e-9, 100 - h["input_percent"]), 3)
        yield f, row


def plain_rows(tj):
    """(finding, row) for every finding without an estimate (its model
    `none`, or not known): its change is measured all the same, so what
    the advice is worth is known even where tfdoctor puts no number on it."""
    for f in tj["findings"]:
        est = f.get("estimate") or {}
        if est.get("model") not in (None, "none") and est.get("known"):
            continue
        yield f, {"rule": f["rule"], "class": f["class"], "stage": f.get("stage")}


def measured(row, base_ms, fix, m):
    """The row with fix applied and measured (m: its step time)."""
    row["applied"] = fix
    row["measured"] = m
    row["measured_speedup"] = round(base_ms / m["step_ms"], 3)
    if row.get("estimate_speedup"):
        row["error"] = round(row["estimate_speedup"] / row["measured_speedup"] - 1, 3)
    return row
