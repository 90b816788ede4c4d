#!/usr/bin/env bash
# make bench-instr: instructions executed by `tfdoctor analyze` (callgrind)
# on small synthesized captures of the bench's four kinds, three real
# captures and a multi-host run, and by `tfdoctor merge` of 2,000 hosts'
# partials, against the counts committed in
# tests/bench/instructions.txt: a regression check that does not swing
# with the machine the way times do. A ratio above 1.05 is a regression.
# UPDATE=1 writes the counts as the new baseline. The form of the call
# tree (TFDOCTOR_CALL_TREE) is pinned to what a native run of the large
# captures picks: scanned on the iterator-dense one, listed elsewhere
# (under valgrind the process's memory, which the choice reads, is
# valgrind's).
set -eu
TFD=$1
W=${BENCH_DIR:-build/bench}/instr
BASE=tests/bench/instructions.txt
command -v valgrind >/dev/null || { echo "bench-instr: valgrind is not installed (make deps)" >&2; exit 1; }
mkdir -p "$W"
inputs=()
for spec in host-heavy tfdata-heavy iter-dense device-heavy; do
	d="$W/$spec"
	if [ ! -f "$d/done" ]; then
		rm -rf "$d" "$W/probe"
		probe=$($TFD synth -o "$W/probe" "tests/bench/$spec.json" | sed 's/.* \([0-9]*\) bytes.*/\1/')
		$TFD synth --scale "$(awk -v p="$probe" 'BEGIN { printf "%.4f", 5e6 / p }')" \
			-o "$d" "tests/bench/$spec.json" >/dev/null
		touch "$d/done"
	fi
	inputs+=("$spec=$(ls "$d"/plugins/profile/*/*.xplane.pb)")
done
[ -f "$W/fleet/done" ] || { rm -rf "$W/fleet"; $TFD synth -q -o "$W/fleet" tests/synth/16-multi-host-slow-worker.json && touch "$W/fleet/done"; }
# a fleet's merge: 2 partials of 1,000 hosts each (as the bench's 100,000),
# made anew each time by the binary measured (the format is its own)
m="$W/merge"
tests/bench/fleet_parts.sh "$TFD" "$m" 2
inputs+=("fleet-run=$W/fleet" "real-light-pipeline=examples/real-light-pipeline/vm.xplane.pb"
	"real-gpu-multi-worker=tests/cases/ok/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb"
	"chrome-smdebug-8gpu=examples/smdebug-8gpu/ip-172-31-19-241.trace.json"
	"merge-2000-hosts=$m/parts")
printf '%-24s %14s %14s %8s\n' case instructions baseline ratio
worst=0 out=""
for x in "${inputs[@]}"; do
	name=${x%%=*} path=${x#*=} form=lists cmd=analyze
	[ "$name" != iter-dense ] || form=scan
	[ "${name#merge}" = "$name" ] || cmd=merge
	n=$(TFDOCTOR_CALL_TREE=$form valgrind --tool=callgrind --callgrind-out-file=/dev/null "$TFD" $cmd -q -f json -o - "$path" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
	[ -n "$n" ] || { echo "bench-instr: no count for $name" >&2; exit 1; }
	out="$out$name $n\n"
	b=$(awk -v c="$name" '$1 == c { print $2 }' "$BASE" 2>/dev/null || true)
	if [ -n "$b" ]; then
		r=$(awk -v n="$n" -v b="$b" 'BEGIN { printf "%.3f", n / b }')
		worst=$(awk -v a="$worst" -v r="$r" 'BEGIN { print (r > a ? r : a) }')
	else
		r="-"
	fi
	printf '%-24s %14s %14s %8s\n' "$name" "$n" "${b:--}" "$r"
done
if [ "${UPDATE:-0}" = 1 ]; then
	printf '# instructions of tfdoctor analyze -q -f json per case (tests/bench/instr.sh; UPDATE=1 rewrites)\n%b' "$out" >"$BASE"
	echo "bench-instr: baseline written to $BASE"
fi
awk -v w="$worst" 'BEGIN { printf "target: instructions at most 1.05x the baseline: %s (worst %.3fx)\n", (w <= 1.05 ? "met" : "NOT met"), w }'
