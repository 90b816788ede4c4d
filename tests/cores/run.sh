#!/usr/bin/env bash
# One core or all of them, the same answer: the passes that run on several
# threads once a host is large (the shedding of its threads' events, the
# links of its calls, the per-stage sums of a pipeline, the device planes'
# sweep beside the host's analysis) give byte for byte what one thread
# gives. Captures large enough to take the threaded paths are synthesized
# here: an XSpace with Produce/Consume events (links by element), a dense
# synchronous chain, a Chrome trace (links by time overlap) and a GPU
# capture whose device lines pass a megabyte. A malformed device event and
# a file shrinking under the sweep are the same one-line errors either
# way. Ends with "cores: N passed, N failed".
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
$TFD synth -q -o "$T/gpu" tests/bench/device-heavy.json
for c in tfdata dense chrome gpu; do
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
# the GPU capture's run directory (each file analyzed as it is loaded) and
# its report
for args in "-f json $T/gpu" "-f text $T/gpu/plugins/profile"; do
	# shellcheck disable=SC2086
	taskset -c 0 "$TFD" analyze -o "$T/one" $args 2>"$T/e1"
	rc1=$?
	# shellcheck disable=SC2086
	"$TFD" analyze -o "$T/all" $args 2>"$T/e2"
	rc2=$?
	if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && cmp -s "$T/one" "$T/all"; then ok; else bad "analyze $args: one core ($rc1) and all ($rc2) differ"; fi
done
# a malformed device event: found by the sweep on the other core, it is the
# same error as on one core, for a file and for its run directory
mkdir -p "$T/bad/plugins/profile/run1"
cp "$(ls "$T"/gpu/plugins/profile/*/*.xplane.pb)" "$T/bad/plugins/profile/run1/worker-0.xplane.pb"
python3 tests/lib/corrupt_device_event.py "$T/bad/plugins/profile/run1/worker-0.xplane.pb"
for p in "$T/bad/plugins/profile/run1/worker-0.xplane.pb" "$T/bad"; do
	taskset -c 0 "$TFD" analyze -q -o - "$p" >"$T/o1" 2>"$T/e1"
	rc1=$?
	"$TFD" analyze -q -o - "$p" >"$T/o2" 2>"$T/e2"
	rc2=$?
	if [ "$rc1" -eq 1 ] && [ "$rc2" -eq 1 ] && [ ! -s "$T/o2" ] && [ "$(wc -l <"$T/e2")" -eq 1 ] &&
		grep -q "worker-0.xplane.pb: corrupt XSpace protobuf: an event of line 0 of plane '/device:GPU:0' is malformed" "$T/e2" &&
		cmp -s "$T/e1" "$T/e2"; then
		ok
	else
		bad "malformed device event in $p: $rc1/$rc2 $(cat "$T/e1" "$T/e2")"
	fi
done
# a Chrome trace parsed on one thread and kept on another: its errors are
# one thread's (a bad event; invalid JSON after it, which comes first; a
# document cut short), in the same words
tr=$(ls "$T"/chrome/plugins/profile/*/*.trace.json)
python3 - "$tr" "$T" <<'PY'
import sys
src, out = sys.argv[1], sys.argv[2]
b = open(src, "rb").read()
at = b.index(b"},\n", b.index(b"traceEvents")) + 3
bad = b'{"ph":"X","pid":701,"tid":1000,"ts":5,"dur":1,"name":"' + b"a" * 70000 + b'"},\n'
open(out + "/badev.trace.json", "wb").write(b[:at] + bad + b[at:])
# a bad literal between events: the first pass's scan does not see it,
# the second pass's parser does, after the bad event
late = b.index(b'"dur":', len(b) * 9 // 10) + 6
open(out + "/badjson.trace.json", "wb").write(b[:at] + bad + b[at:late] + b"x" + b[late:])
open(out + "/cut.trace.json", "wb").write(b[:len(b) * 9 // 10])
PY
for f in badev badjson cut; do
	taskset -c 0 "$TFD" analyze -q -o - "$T/$f.trace.json" >"$T/o1" 2>"$T/e1"
	rc1=$?
	"$TFD" analyze -q -o - "$T/$f.trace.json" >"$T/o2" 2>"$T/e2"
	rc2=$?
	if [ "$rc1" -ne 0 ] && [ "$rc1" -eq "$rc2" ] && [ ! -s "$T/o2" ] && [ "$(wc -l <"$T/e2")" -eq 1 ] &&
		cmp -s "$T/e1" "$T/e2"; then
		ok
	else
		bad "$f: one core $rc1 '$(cat "$T/e1")', all $rc2 '$(cat "$T/e2")'"
	fi
done
# a GPU capture that shrinks while its device planes are swept beside the
# analysis: one line naming the file, or a full read, never a signal
shrink_while_read "$(ls "$T"/gpu/plugins/profile/*/*.xplane.pb)" 100000 "shrink.xplane.pb: " 0.01 0.03 0.06
finish
