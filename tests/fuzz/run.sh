#!/usr/bin/env bash
# Replays the committed fuzz corpus (tests/fuzz/corpus/<target>/) through
# each target built with the normal compiler (and sanitizers under SAN=1):
# a crash, hang or sanitizer report fails the target. Ends with
# "fuzz: N passed, N failed".
set -u
B=${B:-build/rel}
pass=0
fail=0
for t in xspace chrome rules partial spec json; do
	if out=$(timeout 300 "$B/fuzz-replay-$t" "tests/fuzz/corpus/$t" 2>&1); then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL fuzz replay $t: $(echo "$out" | tail -5)" >&2
	fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
