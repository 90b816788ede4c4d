#!/usr/bin/env python3
"""One consistent story (issue 33): read `analyze -f json` and the text
report of the same capture and print one line per contradiction:
- a finding above low on a host that is not input-bound,
- findings not ordered by estimated gain (then severity, then confidence),
- summary.bottleneck named while the focus host is not input-bound,
- the word "bottleneck" in the text report of a host that is not input-bound,
- jargon in the text report (see the list below).
Usage: consistent.py REPORT.json REPORT.txt; exit 1 on any contradiction."""
import json
import math
import sys

SEV = {"info": 0, "low": 1, "medium": 2, "high": 3}
CONF = {"low": 0, "medium": 1, "high": 2}


def gain(f):
    e = f["estimate"]
    if not e["known"]:
        return 1.0
    if e.get("step_speedup"):
        return e["step_speedup"]  # what the training step gains
    return math.inf if e.get("speedup") is None else e["speedup"]


def main():
    doc = json.load(open(sys.argv[1]))
    text = open(sys.argv[2]).read()
    bound = {h["host"]: h["input_bound"] for h in doc["hosts"]}
    bad = []
    for f in doc["findings"]:
        if bound.get(f["host"]) == "not" and SEV[f["severity"]] > SEV["low"]:
            bad.append(f"{f['rule']} [{f['severity']}] on {f['host']}, which is not input-bound")
    keys = [(-gain(f), -SEV[f["severity"]], -CONF[f["confidence"]]) for f in doc["findings"]]
    for i in range(1, len(keys)):
        if keys[i] < keys[i - 1]:
            bad.append(f"finding {i} ({doc['findings'][i]['rule']}) is out of order")
    s = doc["summary"]
    if doc["hosts"] and doc["hosts"][0]["input_bound"] == "not":
        if s.get("bottleneck") is not None:
            bad.append(f"summary.bottleneck is {s['bottleneck']} on a host that is not input-bound")
        if "bottleneck" in text.lower():
            line = next(l for l in text.splitlines() if "bottleneck" in l.lower())
            bad.append(f"text says bottleneck on a host that is not input-bound: {line.strip()[:120]}")
    # words for a user, not the analysis's internals (issue 33 item 8)
    for jargon in ["(seen)", "by unlinked", "[capacity,", " reader of ", ".000 us", ".000 ms",
                   "latency view, root", "linking:"]:
        if jargon in text:
            bad.append(f"text report says {jargon!r}")
    if "(e.g." in text.replace("\n", " "):
        bad.append("nested parentheses in a confidence line")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
