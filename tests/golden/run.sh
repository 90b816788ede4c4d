#!/usr/bin/env bash
# Golden tests: for every examples/<name>/, run analyze (text and JSON) and
# dot on its capture (the *.xplane.pb if there is one, else the trace JSON)
# and compare with examples/<name>/expected/. UPDATE=1 rewrites the files;
# review the diff like code. Ends with "golden: N passed, N failed".
set -u
TFD=${TFD:-build/rel/tfdoctor}
export LC_ALL=C
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

check() { # NAME EXPECTED ACTUAL
	if [ "${UPDATE:-0}" = 1 ]; then
		mkdir -p "$(dirname "$2")"
		cp "$3" "$2"
	fi
	if diff -u "$2" "$3" >"$T/diff" 2>&1; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL golden: $1" >&2
		head -40 "$T/diff" >&2
	fi
}

for d in examples/*/; do
	d=${d%/}
	cap=$(ls "$d"/*.xplane.pb 2>/dev/null | head -1)
	[ -n "$cap" ] || cap=$(ls "$d"/*.trace.json* 2>/dev/null | head -1)
	[ -n "$cap" ] || continue
	$TFD analyze -q "$cap" >"$T/report.txt" 2>&1
	check "$d report.txt" "$d/expected/report.txt" "$T/report.txt"
	$TFD analyze -q -f json "$cap" >"$T/report.json" 2>&1
	check "$d report.json" "$d/expected/report.json" "$T/report.json"
	$TFD dot "$cap" >"$T/pipeline.dot" 2>&1
	check "$d pipeline.dot" "$d/expected/pipeline.dot" "$T/pipeline.dot"
done
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
