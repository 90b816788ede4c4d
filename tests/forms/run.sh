#!/usr/bin/env bash
# Two ways to one answer: a pipeline's call tree either lists each call's
# children or finds them by scanning its thread (chosen by memory, see
# docs/internals.md; TFDOCTOR_CALL_TREE=lists or =scan picks one). Every
# committed capture and two synthesized large ones (an iterator-dense
# chain, a tf.data-heavy host) give byte for byte the same JSON and text
# reports both ways; and a host's dataset-function calls read whole by
# every pipeline or thread by thread (TFDOCTOR_FN_CALLS=whole), the same
# JSON. Ends with "forms: N passed, N failed".
set -u
SUITE=forms
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
$TFD synth -q --scale 25 -o "$T/dense" tests/bench/iter-dense.json
$TFD synth -q --scale 10 -o "$T/tfdata" tests/bench/tfdata-heavy.json
mapfile -t files < <(find tests/cases/ok tests/golden examples "$T/dense" "$T/tfdata" \
	\( -name '*.xplane.pb' -o -name '*.trace.json' -o -name '*.trace.json.gz' \) | sort)
[ "${#files[@]}" -ge 40 ] && ok || bad "only ${#files[@]} captures found"
for f in "${files[@]}"; do
	for fmt in json text; do
		TFDOCTOR_CALL_TREE=lists "$TFD" analyze -q -f "$fmt" -o - "$f" >"$T/lists" 2>"$T/e1"
		rc1=$?
		TFDOCTOR_CALL_TREE=scan "$TFD" analyze -q -f "$fmt" -o - "$f" >"$T/scan" 2>"$T/e2"
		rc2=$?
		if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/lists" "$T/scan" && cmp -s "$T/e1" "$T/e2"; then
			ok
		else
			bad "$f -f $fmt: lists ($rc1) and scan ($rc2) differ: $(diff "$T/lists" "$T/scan" | head -4)"
		fi
	done
done
# a host's dataset-function calls read by each pipeline thread by thread
# (its own threads whole, the others in its window; the tallies of which
# calls ran for another pipeline made once) or whole for every pipeline
# (TFDOCTOR_FN_CALLS=whole): the same JSON
for f in "${files[@]}"; do
	TFDOCTOR_FN_CALLS=whole "$TFD" analyze -q -f json -o - "$f" >"$T/whole" 2>"$T/e1"
	rc1=$?
	"$TFD" analyze -q -f json -o - "$f" >"$T/index" 2>"$T/e2"
	rc2=$?
	if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/whole" "$T/index" && cmp -s "$T/e1" "$T/e2"; then
		ok
	else
		bad "$f: function calls whole ($rc1) and by thread ($rc2) differ: $(diff "$T/whole" "$T/index" | head -4)"
	fi
done
finish
