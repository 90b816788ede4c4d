#!/usr/bin/env bash
# Repository layout: the root holds only the planned top level (Makefile,
# README.md, CHANGELOG.md, src, include, rules, tests, examples, docs, .ci,
# dotfiles); tests read only files inside the repository;
# tool artifacts (fuzzer crash files, benchmark captures, build output) live
# under build/ or are ignored. Ends with "layout: N passed, N failed".
set -u
SUITE=layout
# shellcheck source=tests/lib.sh
. tests/lib.sh
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "layout: skipped, not a git checkout"
	exit 0
fi
allowed='^(Makefile|README\.md|CHANGELOG\.md|src|include|rules|tests|examples|docs|\.[^/]+)$'
# tracked files, and untracked ones git does not ignore
stray=$(git ls-files --cached --others --exclude-standard | cut -d/ -f1 | sort -u | grep -Ev "$allowed")
if [ -z "$stray" ]; then ok; else bad "outside the planned top level: $(echo "$stray" | head -5 | tr '\n' ' ')($(echo "$stray" | wc -l) names)"; fi
# tests are hermetic: no test names the workspace folder beside the clone
# (dot dot slash shared), which a clone of the project alone does not have;
# prose (*.md) may say where a copy came from
shared=$(git grep -l -e '\.\./shared' -- tests ':!*.md' 2>/dev/null)
if [ -z "$shared" ]; then ok; else bad "tests read the workspace folder beside the clone: $(echo "$shared" | head -5 | tr '\n' ' ')"; fi
# a test script that removes its scratch directory on exit never replaces
# itself with exec (the trap would not run: two suites left 34 MB in /tmp
# at every make check); one with both fails here (tests/lib.sh sets the trap)
leaks=""
for f in tests/*.sh tests/*/*.sh; do
	if { grep -q "trap .*EXIT" "$f" || grep -q '^\. tests/lib.sh' "$f"; } && grep -qE '^[[:space:]]*exec[[:space:]]' "$f"; then
		leaks="$leaks $f"
	fi
done
if [ -z "$leaks" ]; then ok; else bad "exec after an EXIT trap (the scratch directory stays):$leaks"; fi
# the user's README stays short: reference material lives in docs/
n=$(wc -l <README.md)
if [ "$n" -le 300 ]; then ok; else bad "README.md has $n lines (at most 300; the rest goes to docs/)"; fi
# measurements are dated and belong in CHANGELOG.md, closing notes or docs/performance.md
dated=$(grep -nE '(19|20)[0-9]{2}-[01][0-9]-[0-3][0-9]' README.md | head -3)
if [ -z "$dated" ]; then ok; else bad "README.md holds dated material: $dated"; fi
for f in CHANGELOG.md docs/cli.md docs/analysis.md docs/rules.md docs/json.md docs/fleet.md docs/performance.md; do
	if [ -s "$f" ]; then ok; else bad "$f is missing"; fi
done
# the habits that keep the tree so are in CI: formatting, headers, cppcheck
if grep -q '^make format-check' .ci/run && grep -q '^format-check:' Makefile; then ok; else bad ".ci/run does not run make format-check"; fi
# the folders of src/ are floors that call only downward (base, model,
# store, input, analysis, output, synth, app, cmd): read off the objects
if [ -d "${B:-build/rel}/obj" ]; then
	if python3 tests/layout/layers.py "${B:-build/rel}/obj" >"$T/layers"; then ok; else bad "calls between floors: $(head -3 "$T/layers" | tr '\n' ';')"; fi
fi
# and their includes too: no header of a floor above, no two folders
# including each other's headers, no circle of includes inside a folder
if python3 tests/layout/includes.py >"$T/includes"; then ok; else bad "includes against the floors: $(head -3 "$T/includes" | tr '\n' ';')"; fi
# no function a reader cannot hold (120 lines, 25 decisions) but the at most
# 6 listed with their reason in exceptions.txt; no file over 1,000 lines but those that say why
if python3 tests/layout/fnsize.py >"$T/fnsize"; then ok; else bad "functions over the limits: $(head -3 "$T/fnsize" | tr '\n' ';')"; fi
long=""
for f in src/*/*.c src/*.c; do
	[ "$(wc -l <"$f")" -le 1000 ] || head -12 "$f" | grep -q "over 1,000 lines:" || long="$long $f"
done
if [ -z "$long" ]; then ok; else bad "files over 1,000 lines without a reason:$long"; fi
# every exported function says what it does, who owns what, and its errors
if python3 tests/layout/contracts.py >"$T/contracts"; then ok; else bad "$(head -3 "$T/contracts" | tr '\n' ';')"; fi
# each folder's private headers stay in it: no ../ includes in src/
up=$(grep -rln '#include "\.\./' src || true)
if [ -z "$up" ]; then ok; else bad "src files include another folder's private header: $up"; fi
# and the unit tests reach them only from tests/unit/FOLDER/ (compiled with
# src/FOLDER's headers alone): no path into src/ in any test
up=$(grep -rlnE '#include "[^"]*(\.\./|src/)' tests/unit || true)
if [ -z "$up" ]; then ok; else bad "unit tests include a private header by path: $up"; fi
# fuzzer artifacts are never tracked anywhere
crashes=$(git ls-files | grep -E '(^|/)(crash|leak|timeout|oom|slow-unit)-[0-9a-f]+$')
if [ -z "$crashes" ]; then ok; else bad "tracked fuzzer artifacts: $(echo "$crashes" | wc -l)"; fi
# nor xprof's caches (ALL_HOSTS.op_stats_v2.pb, written beside a capture
# it converts: ten of them had been committed by a bench-peers run)
caches=$(git ls-files | grep -E '(^|/)ALL_HOSTS\.op_stats_v2\.pb$' || true)
if [ -z "$caches" ]; then ok; else bad "tracked xprof caches: $(echo "$caches" | wc -l)"; fi
# the fuzz targets write their artifacts under build/
if grep -q -- '-artifact_prefix=$(FZ)/' Makefile && [ "$(grep -c -- '$(FZ)/fuzz_$$t ' Makefile)" -eq "$(grep -c -- '-artifact_prefix=$(FZ)/' Makefile)" ]; then ok; else bad "a fuzz run without -artifact_prefix under build/"; fi
finish
