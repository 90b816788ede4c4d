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

# make check needs no system service: its suites and packages leave out the
# fleet's servers, which make check-fleet runs
if ! make -n -p check 2>/dev/null | grep -E "^SUITES = " | grep -qE "tests/fleet/(pg|slurm)\.sh"; then ok; else bad "make check runs a fleet suite"; fi
if make -n -p check-fleet 2>/dev/null | grep -E "^FLEET_SUITES = " | grep -q "tests/fleet/pg.sh" ; then ok; else bad "make check-fleet does not run the PostgreSQL suite"; fi

# src/tools/install-deps.sh with stand-ins on PATH: every package "missing",
# apt-get failing, not root and no sudo
stub=$T/stub
mkdir -p "$stub"
printf '#!/bin/sh\nexit 1\n' >"$stub/dpkg-query"
printf '#!/bin/sh\necho "$*" >>"%s/apt.log"\ncase "$*" in *install*) echo "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2; exit 100;; esac\n' "$T" >"$stub/apt-get"
printf '#!/bin/sh\necho 1000\n' >"$stub/id"
printf '#!/bin/sh\nexit 1\n' >"$stub/sudo"
chmod +x "$stub"/*
deps() { PATH="$stub:$PATH" sh src/tools/install-deps.sh "$@" >"$T/dout" 2>"$T/derr"; }
deps
if [ $? -eq 1 ] && [ "$(wc -l <"$T/derr")" -eq 1 ] && grep -q "^install-deps: missing packages:.* libcjson-dev.*apt-get install" "$T/derr" &&
	[ ! -e "$T/apt.log" ]; then ok; else bad "not root, no sudo: $(cat "$T/derr")"; fi
if ! grep -qE "postgresql|slurm|munge" "$T/derr"; then ok; else bad "make check's packages name a daemon: $(cat "$T/derr")"; fi
deps --fleet
if grep -q "postgresql slurmctld slurmd slurm-client munge" "$T/derr"; then ok; else bad "--fleet: $(cat "$T/derr")"; fi
# as root: apt-get waits for the dpkg lock, and a failure names the command
printf '#!/bin/sh\necho 0\n' >"$stub/id"
deps
if [ $? -eq 1 ] && grep -q "^install-deps: could not install:.*apt-get install" "$T/derr" &&
	grep -q "DPkg::Lock::Timeout=300 install" "$T/apt.log"; then ok; else bad "apt-get failing: $(cat "$T/derr") / $(cat "$T/apt.log" 2>/dev/null)"; fi

finish
