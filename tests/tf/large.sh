#!/usr/bin/env bash
# make real-large: large real captures of TensorFlow (tests/tf/large.py,
# each kind made once into OUT/KIND and kept), analyzed on one core and on
# every core: the same JSON and text, byte for byte (their host planes are
# read in blocks on several threads, long lines cut into parts: what one
# part leaves open, a dataset function's scope or a GetNext op's run, goes
# on in the next), and on one core from a read that left the iterator
# events in the file. Prints each run's time and peak RSS. Ends with
# "real-large: N passed, N failed".
#   tests/tf/large.sh TFD PY [OUT [KIND...]]
set -uo pipefail
TFD=$1
PY=$2
OUT=${3:-build/real/large}
shift $(($# < 3 ? $# : 3))
KINDS=("$@")
[ ${#KINDS[@]} -gt 0 ] || KINDS=(map interleave tf1)
B=$(dirname "$TFD")
pass=0 fail=0
if [ "$(nproc)" -lt 2 ]; then
	echo "real-large: one core: nothing to compare"
fi
for k in "${KINDS[@]}"; do
	d=$OUT/$k
	if [ ! -f "$d/done" ]; then
		rm -rf "$d"
		mkdir -p "$d"
		if ! "$PY" tests/tf/large.py "$d" "${LARGE_SECONDS:-0}" "$k" >"$d/make.log" 2>&1; then
			echo "real-large: $k: the capture failed (see $d/make.log)" >&2
			fail=$((fail + 1))
			continue
		fi
		touch "$d/done"
	fi
	f=$(ls "$d"/plugins/profile/*/*.xplane.pb | head -1)
	echo "real-large: $k: $f, $(($(stat -c %s "$f") / 1000000)) MB"
	for fmt in json text; do
		read -r t1 r1 rc1 < <(taskset -c 0 "$B/runstat" "$TFD" analyze -q -f "$fmt" -o "$d/one.$fmt" "$f")
		read -r t2 r2 rc2 < <("$B/runstat" "$TFD" analyze -q -f "$fmt" -o "$d/all.$fmt" "$f")
		echo "real-large: $k -f $fmt: one core $t1 s, $((r1 / 1024)) MB; every core $t2 s, $((r2 / 1024)) MB"
		if [ "$rc1" = 0 ] && [ "$rc2" = 0 ] && [ -s "$d/one.$fmt" ] && cmp -s "$d/one.$fmt" "$d/all.$fmt"; then
			pass=$((pass + 1))
		else
			echo "real-large: $k -f $fmt: one core ($rc1) and every core ($rc2) differ:" >&2
			diff "$d/one.$fmt" "$d/all.$fmt" | head -6 >&2
			fail=$((fail + 1))
		fi
	done
	# a read that leaves the iterator, Produce and Consume events in the
	# file (TFDOCTOR_SOURCE_LEAVE=1), line by line on one core and in
	# blocks on every core: the same JSON, its time and peak beside the
	# plain read's
	read -r t3 r3 rc3 < <(TFDOCTOR_SOURCE_LEAVE=1 taskset -c 0 "$B/runstat" "$TFD" analyze -q -f json -o "$d/left.json" "$f")
	read -r t4 r4 rc4 < <(TFDOCTOR_SOURCE_LEAVE=1 "$B/runstat" "$TFD" analyze -q -f json -o "$d/left-all.json" "$f")
	echo "real-large: $k: left in the file, one core $t3 s, $((r3 / 1024)) MB; every core $t4 s, $((r4 / 1024)) MB"
	if [ "$rc3" = 0 ] && [ "$rc4" = 0 ] && cmp -s "$d/one.json" "$d/left.json" &&
		cmp -s "$d/one.json" "$d/left-all.json"; then
		pass=$((pass + 1))
	else
		echo "real-large: $k: left in the file ($rc3, $rc4), the report differs:" >&2
		diff "$d/one.json" "$d/left.json" | head -6 >&2
		diff "$d/one.json" "$d/left-all.json" | head -6 >&2
		fail=$((fail + 1))
	fi
	# --low-memory (the events left in the file; the stream where the host's
	# calls hold it): the same report, its time and peak beside
	read -r t5 r5 rc5 < <(taskset -c 0 "$B/runstat" "$TFD" analyze --low-memory -q -f json -o "$d/low.json" "$f")
	echo "real-large: $k: --low-memory, one core $t5 s, $((r5 / 1024)) MB"
	if [ "$rc5" = 0 ] && cmp -s "$d/one.json" "$d/low.json"; then
		pass=$((pass + 1))
	else
		echo "real-large: $k: --low-memory ($rc5), the report differs:" >&2
		diff "$d/one.json" "$d/low.json" | head -6 >&2
		fail=$((fail + 1))
	fi
	# what it found: the steps, a pipeline, what the kind is about (a map's
	# function ops where TensorFlow recorded events on its private pool's
	# threads: one capture of the map kind held none, the old analysis
	# found none either)
	pool=$("$TFD" dump -o - "$f" 2>/dev/null | awk '$2 ~ /^tf_data_private_threadpool/ && $3 > 0 { n++ } END { print n + 0 }')
	if "$PY" - "$d/one.json" "$k" "$pool" <<'PY'; then
import json, sys
r, kind, pool = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
h = r["hosts"][0]
stages = [s for p in h.get("pipelines", []) for s in p.get("stages", [])]
ops = [o for s in stages for o in s.get("function_ops", [])]
names = " ".join(s.get("name", "") for s in stages)
ok = h.get("steps", 0) > 1000 and stages
if kind == "map":
    ok = ok and (ops or not pool)
    if not pool:
        print("real-large: map: TensorFlow recorded no event on its private pool's threads")
elif kind == "interleave":
    ok = ok and "Interleave" in names and "TFRecord" in names
elif kind == "tf1":
    ok = ok and any("session runs of an evaluation" in n.get("message", "")
                    for n in r.get("notes", []))
print("real-large: %s: %d steps, %d pipelines, %d stages, %d function op sums"
      % (kind, h.get("steps", 0), len(h.get("pipelines", [])), len(stages), len(ops)))
sys.exit(0 if ok else 1)
PY
		pass=$((pass + 1))
	else
		echo "real-large: $k: the analysis found too little for the kind" >&2
		fail=$((fail + 1))
	fi
done
echo "real-large: $pass passed, $fail failed"
[ $fail -eq 0 ]
