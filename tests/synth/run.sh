#!/usr/bin/env bash
# The planted-bottleneck matrix: every tests/synth/*.json spec is
# synthesized, analyzed, and the reported bottleneck (and focus host) must
# be the planted one. Ends with "synth: N passed, N failed".
set -u
TFD=${TFD:-build/rel/tfdoctor}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
for spec in tests/synth/*.json; do
	name=$(basename "$spec" .json)
	out="$T/$name"
	if ! $TFD synth -o "$out" "$spec" >"$T/synth.out" 2>&1; then
		fail=$((fail + 1))
		echo "FAIL synth $name: $(cat "$T/synth.out")" >&2
		continue
	fi
	want=$(sed -n 's/.*"expect": *"\([^"]*\)".*/\1/p' "$spec" | head -1)
	want_host=$(sed -n 's/.*"expect_host": *"\([^"]*\)".*/\1/p' "$spec" | head -1)
	$TFD analyze -q -f json "$out" >"$T/report.json" 2>"$T/err"
	got=$(grep -m1 '"bottleneck": "' "$T/report.json" | sed 's/.*"bottleneck": "\([^"]*\)".*/\1/')
	got_host=$(grep -m1 '"host": "' "$T/report.json" | sed 's/.*"host": "\([^"]*\)".*/\1/')
	# one consistent story: advice follows the verdict, findings by gain
	$TFD analyze -q "$out" >"$T/report.txt" 2>/dev/null
	if python3 tests/synth/consistent.py "$T/report.json" "$T/report.txt" >"$T/cons"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL synth $name: $(head -3 "$T/cons" | tr '\n' ';')" >&2
	fi
	if [ "$got" = "$want" ] && { [ -z "$want_host" ] || [ "$got_host" = "$want_host" ]; }; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL synth $name: bottleneck '$got' on '$got_host', planted '$want'${want_host:+ on '$want_host'} $(cat "$T/err")" >&2
	fi
done
# a map's function ops: "name:type" events inside its function events, the
# same in both renderings; a Python op waits for the host's one GIL and its
# event spans the wait (8 workers, 340 us of py work a call: the spans add
# up to far more than the work)
for spec in 43-py-function-map 44-decode-heavy-map-and-batch 45-string-heavy-sync-map; do
	d=$(ls -d "$T/$spec"/plugins/profile/*)
	$TFD dump --all "$d"/worker-0.xplane.pb | awk '$4 ~ /:/ {print $2, $3, $4}' >"$T/ops.xs"
	$TFD dump --all "$d"/worker-0.trace.json | awk '$4 ~ /:/ {print $2, $3, $4}' >"$T/ops.js"
	if [ -s "$T/ops.xs" ] && cmp -s "$T/ops.xs" "$T/ops.js"; then pass=$((pass + 1)); else
		fail=$((fail + 1))
		echo "FAIL synth $spec: the function ops differ between XSpace and Chrome ($(wc -l <"$T/ops.xs") and $(wc -l <"$T/ops.js") op events)" >&2
	fi
done
if $TFD dump --all "$T"/43-py-function-map/plugins/profile/*/worker-0.xplane.pb |
	awk '$4 ~ /:EagerPyFunc$/ {n++; s += $3} END {exit !(n > 100 && s / n > 2 * 340)}'; then pass=$((pass + 1)); else
	fail=$((fail + 1))
	echo "FAIL synth 43-py-function-map: the py op events do not span their wait for the GIL" >&2
fi
echo "synth: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
