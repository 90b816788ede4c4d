#!/usr/bin/env bash
# Golden tests: for every examples/<name>/ run analyze (text, JSON), dot and
# the nightly report (HTML, Markdown) on its capture (the *.xplane.pb if
# there is one, else the trace JSON) and compare, separately,
#   standard output  with expected/CASE
#   standard error   with expected/CASE.stderr (missing: must be empty)
#   the exit code    with expected/CASE.exit   (missing: must be 0)
# UPDATE=1 rewrites the files; review the diff like code.
# Ends with "golden: N passed, N failed".
set -u
TFD=${TFD:-build/rel/tfdoctor}
export LC_ALL=C
pass=0
fail=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

cmp_one() { # LABEL EXPECTED-FILE ACTUAL-FILE (a missing expected file means empty)
	local want=$2
	if [ ! -e "$want" ]; then
		want=$T/empty
		: >"$want"
	fi
	if diff -u "$want" "$3" >"$T/diff" 2>&1; then
		return 0
	fi
	echo "FAIL golden: $1" >&2
	head -40 "$T/diff" >&2
	return 1
}

# golden DIR CASE ARGS...: run tfdoctor ARGS, check stdout, stderr, exit code
golden() {
	local d=$1 c=$2
	shift 2
	$TFD "$@" >"$T/out" 2>"$T/err"
	echo $? >"$T/exit"
	if [ "${UPDATE:-0}" = 1 ]; then
		mkdir -p "$d/expected"
		cp "$T/out" "$d/expected/$c"
		if [ -s "$T/err" ]; then cp "$T/err" "$d/expected/$c.stderr"; else rm -f "$d/expected/$c.stderr"; fi
		if [ "$(cat "$T/exit")" != 0 ]; then cp "$T/exit" "$d/expected/$c.exit"; else rm -f "$d/expected/$c.exit"; fi
	fi
	local ok=1
	[ -e "$d/expected/$c.exit" ] || echo 0 >"$T/exit0"
	cmp_one "$d $c (stdout)" "$d/expected/$c" "$T/out" || ok=0
	cmp_one "$d $c (stderr)" "$d/expected/$c.stderr" "$T/err" || ok=0
	if [ -e "$d/expected/$c.exit" ]; then
		cmp_one "$d $c (exit code)" "$d/expected/$c.exit" "$T/exit" || ok=0
	else
		cmp_one "$d $c (exit code)" "$T/exit0" "$T/exit" || ok=0
	fi
	if [ "$ok" = 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
}

for d in examples/*/; do
	d=${d%/}
	cap=$(ls "$d"/*.xplane.pb 2>/dev/null | head -1)
	[ -n "$cap" ] || cap=$(ls "$d"/*.trace.json* 2>/dev/null | head -1)
	[ -n "$cap" ] || continue
	golden "$d" report.txt analyze "$cap"
	golden "$d" report.json analyze -q -f json "$cap"
	golden "$d" pipeline.dot dot "$cap"
	# the nightly report; the time stamp is fixed, nothing else varies
	golden "$d" nightly.html report --no-record --job "$(basename "$d")" \
		--timestamp 2026-01-01T00:00:00Z "$cap"
	golden "$d" nightly.md report --no-record -f md --job "$(basename "$d")" \
		--timestamp 2026-01-01T00:00:00Z "$cap"
done
echo "golden: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
