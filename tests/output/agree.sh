#!/usr/bin/env bash
# One statement in every format (tests/output/agree.py) for every spec of
# the synth matrix, every device spec and every example capture: text,
# JSON, HTML, Markdown and DOT give the same verdict, bottleneck (or slowest
# stage) and first finding. Ends with "agree: N passed, N failed".
set -u
TFD=${TFD:-build/rel/tfdoctor}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
caps=()
for spec in tests/synth/*.json tests/device/*.json; do
	n=$(basename "$spec" .json)
	d=$(basename "$(dirname "$spec")")
	if $TFD synth -q -o "$T/$d-$n" "$spec" 2>/dev/null; then
		caps+=("$T/$d-$n")
	else
		echo "FAIL agree: synth $spec" >&2
	fi
done
for d in examples/*/; do
	cap=$(ls "$d"*.xplane.pb 2>/dev/null | head -1)
	[ -n "$cap" ] || cap=$(ls "$d"*.trace.json* 2>/dev/null | head -1)
	[ -n "$cap" ] && caps+=("$cap")
done
python3 tests/output/agree.py "$TFD" "${caps[@]}"
# (not exec: the trap above removes $T on exit)
exit $?
