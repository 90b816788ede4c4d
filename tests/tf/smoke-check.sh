#!/usr/bin/env bash
# The real-TensorFlow smoke's checks: every case ran, was captured with its
# steps, and both judges answered on it (the generator cannot rot).
#   tests/tf/smoke-check.sh OUT CASE...
set -uo pipefail
OUT=$1
shift
pass=0 fail=0
for c in "$@"; do
	if python3 - "$OUT/$c/result.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
td, xp = r["tfdoctor"], r["xprof"]
problems = []
if "error" in td: problems.append("tfdoctor: " + td["error"])
elif not td.get("steps"): problems.append("tfdoctor found no steps")
if "error" in xp: problems.append("xprof: " + xp["error"])
elif xp.get("input_percent") is None: problems.append("xprof gave no input %")
if not problems and abs(td["input_percent"] - xp["input_percent"]) > 2:
    problems.append("input %% %.1f vs xprof %.1f" % (td["input_percent"], xp["input_percent"]))
if not problems and td["verdict"] != xp["verdict"]:
    problems.append("verdict %s vs xprof %s" % (td["verdict"], xp["verdict"]))
for p in problems: print("tf-smoke: %s: %s" % (r["case"], p), file=sys.stderr)
sys.exit(1 if problems else 0)
PY
		pass=$((pass + 1))
	else
		echo "tf-smoke: $c failed" >&2
		fail=$((fail + 1))
	fi
done
echo "tf-smoke: $pass passed, $fail failed"
[ $fail -eq 0 ]
