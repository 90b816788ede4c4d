#!/usr/bin/env bash
# make real-forms: every catalog case and random pipeline (tests/tf/mixes.py)
# captured on real TensorFlow (capture only: no timing, no judges; each
# made once into OUT/CASE and kept), and on each capture the checks of the
# analysis a reader in time order would run (docs/performance.md, "Calls
# held in time order"), beside the same report: every pipeline's sums
# folded one group at a time (TFDOCTOR_FOLD_CHECK=1), every call made and
# linked again in time order with its iterators made again
# (TFDOCTOR_TIMELINK_CHECK=1) and each pipeline's sums made from the
# stream (its lines 'stream: ...'), every iterator, Produce and Consume event
# decoded again from the file (TFDOCTOR_SOURCE_CHECK=1), and the same
# report from a read that left them in the file (TFDOCTOR_SOURCE_LEAVE=1).
# Prints the most
# calls such a reader would hold. Ends with "real-forms: N passed, N failed".
#   tests/tf/forms.sh TFD PY [OUT [CASE...]]
set -uo pipefail
TFD=$1
PY=$2
OUT=${3:-build/real/forms}
shift $(($# < 3 ? $# : 3))
CASES=("$@")
if [ ${#CASES[@]} -eq 0 ]; then
	mapfile -t CASES < <("$PY" tests/tf/catalog.py list 2>/dev/null | cut -d' ' -f1)
	for n in $(seq 1 96); do CASES+=("mix_$n"); done
fi
export PYTHONDONTWRITEBYTECODE=1
pass=0 fail=0 most=0 most_case= streamed=0
for c in "${CASES[@]}"; do
	d=$OUT/$c
	if [ ! -f "$d/done" ]; then
		rm -rf "$d"
		mkdir -p "$OUT"
		# one process a case: TensorFlow's pools and AUTOTUNE start afresh
		if ! "$PY" tests/tf/catalog.py capture "$c" "$OUT" >"$OUT/$c.log" 2>&1; then
			echo "real-forms: $c: the capture failed (see $OUT/$c.log)" >&2
			fail=$((fail + 1))
			continue
		fi
		touch "$d/done"
	fi
	f=$(ls "$d"/logs/plugins/profile/*/*.xplane.pb | tail -1)
	"$TFD" analyze -q -f json -o "$d/plain.json" "$f" 2>/dev/null
	rc1=$?
	TFDOCTOR_FOLD_CHECK=1 TFDOCTOR_TIMELINK_CHECK=1 TFDOCTOR_SOURCE_CHECK=1 \
		"$TFD" analyze -q -f json -o "$d/checked.json" "$f" 2>"$d/checks.txt"
	rc2=$?
	# the events left in the file by the read, read back where the bits say
	TFDOCTOR_SOURCE_LEAVE=1 "$TFD" analyze -q -f json -o "$d/left.json" "$f" 2>/dev/null
	rc3=$?
	if [ "$rc1" = "$rc2" ] && cmp -s "$d/plain.json" "$d/checked.json" &&
		[ "$rc1" = "$rc3" ] && cmp -s "$d/plain.json" "$d/left.json" &&
		! grep -q 'differ' "$d/checks.txt" &&
		grep -q 'timelink: .*as by the link pass; .* 0 calls under another; the pass before: [0-9]* root calls as the scan'"'"'s; closed as the stream went: [0-9]* groups, at most \([0-9]*\) calls open at [0-9-]* ns, none late; folded as they closed, the sums per iterator of the whole tree, at most \1 records held; the stream'"'"'s own state at most [0-9]* bytes, [0-9]* calls seen kept at once, the elements'"'"' keys and takers [0-9]* bytes; the stream took [0-9.]* s after the pass before'"'"'s [0-9.]* s$' "$d/checks.txt" &&
		[ "$(grep -c 'stream: ' "$d/checks.txt")" = "$(grep -c -e 'stream: .*: its sums as the pipeline pass' -e 'stream: .*calls walked again from the events as from the table' -e 'stream: .*thread roots ([0-9]* runs) walked again from the events as from the table$' "$d/checks.txt")" ] &&
		grep -q 'source: .*as packed, in [0-9.]* s; the pass before from the file as from the packed events' "$d/checks.txt"; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "real-forms: $c: $(grep -m1 -E 'differs|timelink|source' "$d/checks.txt" || echo 'the report changed (checked or left in the file)')" >&2
	fi
	held=$(sed -n 's/.*timelink: .*at most \([0-9]*\) records held.*/\1/p' "$d/checks.txt" | sort -n | tail -1)
	streamed=$((streamed + $(grep -c 'stream: .*: its sums as the pipeline pass' "$d/checks.txt")))
	if [ -n "$held" ] && [ "$held" -gt "$most" ]; then
		most=$held
		most_case=$c
	fi
done
echo "real-forms: held at most $most calls at once ($most_case); $streamed pipelines summed from the stream as by the pipeline pass"
echo "real-forms: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
