#!/usr/bin/env python3
"""One statement in every format: for each capture given, the text report,
JSON, the HTML and Markdown reports and the DOT diagram name the same
verdict band, the same bottleneck (or the same slowest stage and no
bottleneck) and the same first finding. Prints one line per disagreement;
ends with "agree: N passed, N failed".

Usage: agree.py TFD CAPTURE...
"""
import html
import json
import re
import subprocess
import sys

BANDS = {"highly": "HIGHLY", "moderately": "MODERATELY", "not": "NOT", "unknown": None}


def run(tfd, *args):
    p = subprocess.run([tfd, *args], capture_output=True, text=True)
    if p.returncode not in (0, 3):
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args[:2]), p.returncode, p.stderr[:200]))
    return p.stdout


def unwrap(text):
    return re.sub(r"\s+", " ", text)


def check(tfd, cap):
    bad = []
    j = json.loads(run(tfd, "analyze", "-q", "-f", "json", cap))
    txt = unwrap(run(tfd, "analyze", "-q", cap))
    htm = unwrap(html.unescape(re.sub(r"<[^>]+>", " ", run(
        tfd, "report", "-q", "--no-record", "--job", "j", "--timestamp", "2026-01-01T00:00:00Z",
        cap))))
    md = unwrap(run(tfd, "report", "-q", "--no-record", "-f", "md", "--job", "j",
                    "--timestamp", "2026-01-01T00:00:00Z", cap)).replace("\\_", "_")
    dot = run(tfd, "dot", cap)
    if not j["hosts"]:
        return bad
    h = j["hosts"][0]
    band = BANDS[h["input_bound"]]
    s = j["summary"]
    # the verdict
    if band:
        if ("verdict: %s input-bound" % band) not in txt:
            bad.append("text verdict is not %s" % band)
        word = band.lower() + " input-bound" if band != "NOT" else "not input-bound"
        for name, doc in (("HTML", htm), ("Markdown", md)):
            if word not in doc.lower():
                bad.append("%s does not say %s" % (name, word))
        if ("%s input-bound" % band) not in dot:
            bad.append("diagram title does not say %s input-bound" % band)
    # the bottleneck, or the slowest stage and no bottleneck
    bn, slow = s["bottleneck"], s["slowest_stage"]
    if bn:
        if ("bottleneck: %s" % bn) not in txt and ("host-side bottleneck: %s" % bn) not in txt:
            bad.append("text does not name bottleneck %s" % bn)
        for name, doc in (("HTML", htm), ("Markdown", md)):
            if not re.search(r"bottleneck:? \**%s\b" % re.escape(bn), doc):
                bad.append("%s does not name bottleneck %s" % (name, bn))
        if 'color=red' not in dot:
            bad.append("diagram marks no bottleneck")
    else:
        if re.search(r"\bbottleneck: ", txt):
            bad.append("text names a bottleneck, JSON none")
        if 'color=red' in dot:
            bad.append("diagram marks a bottleneck, JSON none")
        if slow:
            # a host whose every root call is fast names no stage but in
            # JSON (the text says there is nothing to look at)
            quiet = "no tf.data root call is slower than 50 us" in txt
            if ("slowest stage: %s" % slow) not in txt and not quiet:
                bad.append("text does not name slowest stage %s" % slow)
            for name, doc in (("HTML", htm), ("Markdown", md)):
                if not quiet and not re.search(
                        r"slowest stage:?(?: \([^)]*\):)? \**%s\b" % re.escape(slow), doc):
                    bad.append("%s does not name slowest stage %s" % (name, slow))
    # the first finding
    if j["findings"]:
        first = j["findings"][0]["rule"]
        for name, doc in (("text", txt), ("HTML", htm), ("Markdown", md)):
            got = re.search(r"TFD-[A-Z][0-9]+", doc[doc.find("TFD-"):] if "TFD-" in doc else "")
            if not got or got.group(0) != first:
                bad.append("%s's first finding is %s, JSON's %s" % (
                    name, got.group(0) if got else "none", first))
    return bad


def main():
    tfd, caps = sys.argv[1], sys.argv[2:]
    passed = failed = 0
    for cap in caps:
        try:
            bad = check(tfd, cap)
        except Exception as e:  # a broken case is a failure
            bad = [str(e)]
        for b in bad:
            print("FAIL agree: %s: %s" % (cap, b), file=sys.stderr)
        if bad:
            failed += 1
        else:
            passed += 1
    print("agree: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
