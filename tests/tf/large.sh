#!/usr/bin/env bash
# make real-large: a large real capture of TensorFlow (tests/tf/large.py,
# made once into OUT and kept), analyzed on one core and on every core:
# the same JSON and text, byte for byte (its host plane is read in blocks
# on several threads, its long lines cut into parts: what one part leaves
# open, a dataset function's scope, goes on in the next). Prints each
# run's time and peak RSS. Ends with "real-large: N passed, N failed".
#   tests/tf/large.sh TFD PY [OUT]
set -uo pipefail
TFD=$1
PY=$2
OUT=${3:-build/real/large}
B=$(dirname "$TFD")
SECS=${LARGE_SECONDS:-4}
pass=0 fail=0
if [ ! -f "$OUT/done" ]; then
	rm -rf "$OUT"
	mkdir -p "$OUT"
	if ! "$PY" tests/tf/large.py "$OUT" "$SECS" >"$OUT/make.log" 2>&1; then
		echo "real-large: the capture failed (see $OUT/make.log)" >&2
		echo "real-large: 0 passed, 1 failed"
		exit 1
	fi
	touch "$OUT/done"
fi
f=$(ls "$OUT"/plugins/profile/*/*.xplane.pb | head -1)
echo "real-large: $f, $(($(stat -c %s "$f") / 1000000)) MB"
if [ "$(nproc)" -lt 2 ]; then
	echo "real-large: one core: nothing to compare"
fi
for fmt in json text; do
	read -r t1 r1 rc1 < <(taskset -c 0 "$B/runstat" "$TFD" analyze -q -f "$fmt" -o "$OUT/one.$fmt" "$f")
	read -r t2 r2 rc2 < <("$B/runstat" "$TFD" analyze -q -f "$fmt" -o "$OUT/all.$fmt" "$f")
	echo "real-large: -f $fmt: one core $t1 s, $((r1 / 1024)) MB; every core $t2 s, $((r2 / 1024)) MB"
	if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ -s "$OUT/one.$fmt" ] && cmp -s "$OUT/one.$fmt" "$OUT/all.$fmt"; then
		pass=$((pass + 1))
	else
		echo "real-large: -f $fmt: one core ($rc1) and every core ($rc2) differ:" >&2
		diff "$OUT/one.$fmt" "$OUT/all.$fmt" | head -6 >&2
		fail=$((fail + 1))
	fi
done
# what it found: a pipeline, steps, the map's function ops
if "$PY" - "$OUT/one.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
h = r["hosts"][0]
ops = [o for p in h.get("pipelines", []) for s in p.get("stages", []) for o in s.get("function_ops", [])]
ok = h.get("steps", 0) > 1000 and h.get("pipelines") and ops
print("real-large: %d steps, %d pipelines, %d function op sums" % (h.get("steps", 0), len(h.get("pipelines", [])), len(ops)))
sys.exit(0 if ok else 1)
PY
	pass=$((pass + 1))
else
	echo "real-large: the analysis found too little (no steps, pipeline or function ops)" >&2
	fail=$((fail + 1))
fi
echo "real-large: $pass passed, $fail failed"
[ $fail -eq 0 ]
