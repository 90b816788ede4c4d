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
echo "synth: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
