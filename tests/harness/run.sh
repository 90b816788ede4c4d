#!/usr/bin/env bash
# Tests of tests/check.sh, the harness behind `make check`: a suite that
# crashes, dies before its summary, exits non-zero, prints a sanitizer
# report or is skipped under CI must fail the run and be named.
# Ends with "harness: N passed, N failed".
set -u
SUITE=harness
# shellcheck source=tests/lib.sh
. tests/lib.sh

# check NAME WANT_RC WANT_LAST WANT_STDERR_PATTERN SUITE...
check() {
	local name=$1 want_rc=$2 want_last=$3 want_err=$4
	shift 4
	env -u CI tests/check.sh "$T/log-$name" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	local last
	last=$(tail -1 "$T/out")
	if [ "$rc" -ne "$want_rc" ]; then bad "$name: exit $rc, want $want_rc"; return; fi
	if [ "$last" != "$want_last" ]; then bad "$name: last line '$last', want '$want_last'"; return; fi
	if [ -n "$want_err" ] && ! grep -q -- "$want_err" "$T/err"; then
		bad "$name: stderr lacks '$want_err': $(cat "$T/err")"
		return
	fi
	ok
}

good='good=echo "good: 2 passed, 0 failed"'
check healthy 0 "2 passed, 0 failed" "" "$good"
check crash 1 "2 passed, 1 failed" "suite crash (no summary line" \
	"$good" 'crash=echo "about to crash" >&2; kill -SEGV $$'
check crash-after-summary 1 "3 passed, 1 failed" "suite late (exit status" \
	"$good" 'late=echo "late: 1 passed, 0 failed"; kill -ABRT $$'
check silent 1 "2 passed, 1 failed" "suite silent (no summary line; exit status 0)" \
	"$good" 'silent=true'
check failing 1 "3 passed, 2 failed" "" "$good" 'failing=echo "failing: 1 passed, 2 failed"; exit 1'
check sanitizer 1 "3 passed, 1 failed" "suite asan (sanitizer" "$good" \
	'asan=echo "==123==ERROR: AddressSanitizer: heap-use-after-free"; echo "asan: 1 passed, 0 failed"'
check ubsan 1 "3 passed, 1 failed" "suite ub (sanitizer" "$good" \
	'ub=echo "src/x.c:3:5: runtime error: signed integer overflow"; echo "ub: 1 passed, 0 failed"'
check skipped 0 "2 passed, 0 failed, 1 skipped" "" "$good" 'opt=echo "opt: skipped, no chromium"'
CI=true tests/check.sh "$T/log-ci" "$good" 'opt=echo "opt: skipped, no chromium"' >"$T/out" 2>"$T/err"
if [ $? -ne 0 ] && [ "$(tail -1 "$T/out")" = "2 passed, 1 failed" ] && grep -q "opt (skipped under CI" "$T/err"; then
	ok
else
	bad "a skip under CI must fail: $(tail -1 "$T/out") $(cat "$T/err")"
fi
# the real Makefile wiring: make check runs tests/check.sh with every suite
if grep -q 'tests/check.sh' Makefile && ! grep -q '|| true' Makefile; then ok; else bad "Makefile does not run the suites through tests/check.sh"; fi

finish
