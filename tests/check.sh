#!/usr/bin/env bash
# Run test suites and sum them into the one closing line CI reads:
#   N passed, N failed[, N skipped]
#
# Usage: tests/check.sh LOGDIR NAME=COMMAND...
#
# Each suite runs as its own process (bash -c COMMAND); its output goes to
# the terminal and to LOGDIR/NAME.log. A suite must end with its summary
#   NAME: N passed, N failed            or   NAME: skipped, REASON
# A suite counts as failed, and is named, when it
#   - exits non-zero without reporting a failure (a crash, an abort, set -e),
#   - prints no summary line (it died before the end),
#   - prints a sanitizer or valgrind report, even if it exited 0.
# A skipped suite counts as skipped; under CI (CI=true) a skip is a failure:
# CI installs everything every suite needs.
set -u
logdir=$1
shift
mkdir -p "$logdir"
pass=0
fail=0
skip=0
broken=()

for spec in "$@"; do
	name=${spec%%=*}
	cmd=${spec#*=}
	log=$logdir/$name.log
	set -o pipefail
	bash -c "$cmd" 2>&1 | tee "$log"
	rc=$?
	set +o pipefail
	line=$(grep -E "^$name: ([0-9]+ passed, [0-9]+ failed|skipped)" "$log" | tail -1)
	if [[ "$line" == "$name: skipped"* ]]; then
		if [ "${CI:-}" = true ]; then
			fail=$((fail + 1))
			broken+=("$name (skipped under CI: ${line#*skipped, })")
		else
			skip=$((skip + 1))
		fi
		continue
	fi
	if [ -z "$line" ]; then
		fail=$((fail + 1))
		broken+=("$name (no summary line; exit status $rc)")
		continue
	fi
	read -r p f <<<"$(sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")"
	pass=$((pass + p))
	fail=$((fail + f))
	if grep -qE '^(==[0-9]+==ERROR: |SUMMARY: (Address|Leak|Undefined|Thread)Sanitizer|.*: runtime error: |==[0-9]+== [0-9]+ errors? in context|==[0-9]+== Invalid (read|write))' "$log"; then
		fail=$((fail + 1))
		broken+=("$name (sanitizer or valgrind report)")
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		fail=$((fail + 1))
		broken+=("$name (exit status $rc with no failed test)")
	fi
done

for b in "${broken[@]+"${broken[@]}"}"; do
	echo "check: FAIL suite $b" >&2
done
[ -c /dev/null ] || {
	echo "check: FAIL /dev/null is no longer a character device" >&2
	fail=$((fail + 1))
}
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
