#!/usr/bin/env bash
# One core or all of them, the same answer: the passes that run on several
# threads once a host is large (the shedding of its threads' events, the
# links of its calls, the per-stage sums of a pipeline) give byte for byte
# what one thread gives. Captures large enough to take the threaded paths
# are synthesized here: an XSpace with Produce/Consume events (links by
# element), a dense synchronous chain, and a Chrome trace (links by time
# overlap). Ends with "cores: N passed, N failed".
set -u
SUITE=cores
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
if [ "$(nproc)" -lt 2 ]; then
	echo "cores: skipped, one core: nothing to compare"
	exit 0
fi
$TFD synth -q --scale 30 -o "$T/tfdata" tests/bench/tfdata-heavy.json
$TFD synth -q --scale 25 -o "$T/dense" tests/bench/iter-dense.json
cat >"$T/chrome.json" <<'SPEC'
{"name": "cores-chrome", "expect": "ParallelMapV2", "formats": ["json"], "steps": 4000, "step_compute_us": 300,
 "stages": [{"kind": "TFRecord", "cost_us": 10}, {"kind": "ParallelMap", "cost_us": 400, "parallelism": 4},
            {"kind": "Batch", "batch_size": 4, "cost_us": 5}, {"kind": "Prefetch", "buffer": 2}]}
SPEC
$TFD synth -q -o "$T/chrome" "$T/chrome.json"
for c in tfdata dense chrome; do
	f=$(ls "$T/$c"/plugins/profile/*/*.xplane.pb "$T/$c"/plugins/profile/*/*.trace.json 2>/dev/null | head -1)
	for fmt in json text; do
		taskset -c 0 "$TFD" analyze -f "$fmt" -o "$T/one" "$f" 2>"$T/e1"
		rc1=$?
		"$TFD" analyze -f "$fmt" -o "$T/all" "$f" 2>"$T/e2"
		rc2=$?
		if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ -s "$T/one" ] && cmp -s "$T/one" "$T/all"; then
			ok
		else
			bad "$c -f $fmt: one core ($rc1) and all cores ($rc2) differ: $(diff "$T/one" "$T/all" | head -5) $(cat "$T/e1" "$T/e2")"
		fi
	done
done
# the captures are large enough for the threaded passes: more iterator
# calls than one thread links and sums (a count from dump, not a timing)
for c in tfdata dense chrome; do
	run dump "$T/$c"
	n=$(sed -n 's/^ *iterator events: \([0-9]*\).*/\1/p' <<<"$out" | head -1)
	if [ "${n:-0}" -ge 32768 ]; then ok; else bad "$c has ${n:-no} iterator events, fewer than the threaded passes need"; fi
done
finish
