#!/usr/bin/env bash
# CLI tests: exit codes, one-line errors for bad input, dump counts on the
# real captures, reports. Ends with "cli: N passed, N failed".
# Usage: TFD=build/rel/tfdoctor tests/cli/run.sh   (from the repository root)
set -u
SUITE=cli
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
# real captures kept in the repository (sources: tests/cases/ok/README.md)
CAPS=tests/cases/ok
if [ -n "${VALGRIND:-}" ]; then
	TFD="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --suppressions=tests/supp/valgrind.supp $TFD"
fi



# expect_fail FILE PATTERN: exit 1, empty stdout, exactly one stderr line
# "tfdoctor: FILE: ..." matching PATTERN
expect_fail() {
	local f=$1 pat=$2
	run analyze "$f"
	if [ "$rc" -ne 1 ]; then bad "$f: exit $rc, want 1"; return; fi
	if [ -n "$out" ]; then bad "$f: wrote to stdout"; return; fi
	if [ "$(wc -l <"$T/err")" -ne 1 ]; then bad "$f: want one stderr line, got: $err"; return; fi
	case "$err" in
	"tfdoctor: $f: "*) ;;
	*) bad "$f: error does not name the file: $err"; return ;;
	esac
	if ! grep -q -- "$pat" "$T/err"; then bad "$f: want /$pat/ in: $err"; return; fi
	ok
}

# ---- bad input: one line, exit 1 ----------------------------------------
F=tests/cases/fail
expect_fail $F/empty.xplane.pb "empty file"
expect_fail $F/truncated.xplane.pb "truncated or corrupt XSpace protobuf"
expect_fail $F/corrupt.xplane.pb "truncated or corrupt XSpace protobuf"
expect_fail $F/notacapture.xplane.pb "not an XSpace protobuf"
expect_fail $F/broken.trace.json "invalid JSON"
expect_fail $F/truncated.trace.json.gz "truncated gzip data"
expect_fail $F/corrupt.trace.json.gz "corrupt gzip data"
expect_fail $F/empty.trace.json.gz "empty after decompression"
expect_fail $F/cycle.trace.json "cycle in iterator parent ids"
expect_fail $F/missing-ts.trace.json 'has no "ts"'
expect_fail $F/huge-ts.trace.json "has an invalid ts/dur"
expect_fail $F/huge-timestamp.xplane.pb "line timestamp_ns 4611686018427387904 out of range"
expect_fail $F/two-host-planes.xplane.pb "a second '/host:CPU' plane"
expect_fail $CAPS/tfprof-demo-tpu/profile_demo.input_pipeline.pb "derived profiler tool file"
expect_fail $CAPS/tfprof-demo-cloud-tpu/10.240.1.50.input_pipeline.json "derived profiler tool file"
mkdir -p "$T/emptydir" "$T/logdir/plugins/profile/2024_01_01_00_00_00"
echo hi >"$T/emptydir/README"
expect_fail "$T/emptydir" "no profiler captures found"
expect_fail "$T/logdir" "no profiler captures found"
# more op names inside a host's dataset functions than its records index
# (16,777,216; TFDOCTOR_MAX_OP_NAMES lowers the limit to reach it): the
# read fails, XSpace and Chrome alike, and the capture is fine without it
cat >"$T/ops.trace.json" <<'JSON'
{"traceEvents":[
{"ph":"X","pid":1,"tid":5,"name":"Iterator::Model::Map","ts":0,"dur":100,"args":{"id":"1"}},
{"ph":"X","pid":1,"tid":5,"name":"InstantiatedCapturedFunction::Run","ts":10,"dur":50,"args":{"id":"77"}},
{"ph":"X","pid":1,"tid":5,"name":"f/a:Cast","ts":11,"dur":5},
{"ph":"X","pid":1,"tid":5,"name":"f/b:Mul","ts":20,"dur":5},
{"ph":"X","pid":1,"tid":5,"name":"f/c:Add","ts":30,"dur":5}]}
JSON
for f in "$T/ops.trace.json" $CAPS/tf221-augment-per-image/vm.xplane.pb; do
	run analyze -q "$f"
	if [ "$rc" = 0 ]; then ok; else bad "$f: exit $rc without a names limit: $err"; fi
	export TFDOCTOR_MAX_OP_NAMES=2
	expect_fail "$f" "more than 2 distinct op names inside dataset functions on host"
	unset TFDOCTOR_MAX_OP_NAMES
done
run analyze "$T/does-not-exist"
if [ "$rc" -eq 1 ] && [[ "$err" == "tfdoctor: $T/does-not-exist: No such file or directory" ]]; then ok; else bad "missing path: rc=$rc err=$err"; fi

# found by fuzzing: a span that picosecond times cannot hold
run analyze --mode xprof $F/xprof-huge-span.xplane.pb
if [ "$rc" -eq 1 ] && [ -z "$out" ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [[ "$err" == *"events span more than 52 days"* ]]; then ok; else bad "xprof huge span: $rc $err"; fi

# ---- usage errors: exit 2 -------------------------------------------------
for args in "" "analyze" "analyze -f yaml x" "analyze --mode nope x" "analyze --bogus x" \
	"frobnicate" "dump" "analyze --fail-on nothing x" "analyze -f gviz x"; do
	# shellcheck disable=SC2086
	run $args
	if [ "$rc" -eq 2 ]; then ok; else bad "usage '$args': exit $rc, want 2"; fi
done
run analyze --host nosuchhost examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 2 ] && [[ "$err" == *"no host named 'nosuchhost'"* ]]; then ok; else bad "--host unknown: rc=$rc $err"; fi
run help
if [ "$rc" -eq 0 ] && [[ "$out" == *"analyze"* ]]; then ok; else bad "help"; fi
run version
if [ "$rc" -eq 0 ] && [[ "$out" == "tfdoctor "* ]]; then ok; else bad "version"; fi

# ---- dump: iterator counts match captures/SOURCES.md -----------------------
dump_count() { # FILE COUNT
	run dump "$1"
	local n
	n=$(grep -m1 'iterator events:' "$T/out" | awk '{print $3}')
	if [ "$rc" -eq 0 ] && [ "$n" = "$2" ]; then ok; else bad "dump $1: rc=$rc count=$n want $2"; fi
}
dump_count examples/ai-notebook/ai-notebook.xplane.pb 262
dump_count examples/ai-notebook/ai-notebook.trace.json.gz 262
dump_count examples/smdebug-8gpu/ip-172-31-19-241.trace.json 519
dump_count examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz 38
dump_count $CAPS/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb 4
dump_count $CAPS/tda-mnist-linear-tf20/local.trace 97
dump_count $CAPS/negative-tda-mnist-cnn-tf20-no-iterators/local.trace 0

# distinct long names, as SOURCES.md reports them (for Chrome JSON it counts
# args.long_name values; roots carry none, so they add one name each)
distinct() { # FILE COUNT
	run dump "$1"
	local n
	n=$(awk '/iterator events:/{on=1;next} on && $4 ~ /^Iterator/ {print $4}' "$T/out" | sort -u | wc -l)
	if [ "$rc" -eq 0 ] && [ "$n" -eq "$2" ]; then ok; else bad "distinct long names in $1: $n want $2"; fi
}
distinct examples/ai-notebook/ai-notebook.xplane.pb 8
distinct examples/ai-notebook/ai-notebook.trace.json.gz 8       # 6 long + 2 roots
distinct examples/smdebug-8gpu/ip-172-31-19-241.trace.json 15           # 14 long + root
distinct examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz 11
distinct $CAPS/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb 2
distinct $CAPS/tda-mnist-linear-tf20/local.trace 4

# the xplane and its Chrome rendering hold the same iterator events
$TFD dump --json examples/ai-notebook/ai-notebook.xplane.pb | grep -E '"(name|id|parent_id)"' | sort >"$T/a"
$TFD dump --json examples/ai-notebook/ai-notebook.trace.json.gz | grep -E '"(name|id|parent_id)"' | sort >"$T/b"
if [ -s "$T/a" ] && cmp -s "$T/a" "$T/b"; then ok; else bad "xplane and trace.json dumps differ"; fi

# a run directory and a TensorBoard log directory (newest run, or --run)
mkdir -p "$T/tb/train/plugins/profile/2021_05_17_12_27_40" "$T/tb/train/plugins/profile/2020_01_01_00_00_00"
cp examples/ai-notebook/ai-notebook.xplane.pb "$T/tb/train/plugins/profile/2021_05_17_12_27_40/"
cp examples/smdebug-zip/*.trace.json.gz "$T/tb/train/plugins/profile/2020_01_01_00_00_00/"
run dump "$T/tb"
if [ "$rc" -eq 0 ] && grep -q "run 2021_05_17_12_27_40" "$T/out" && grep -q "host ai-notebook" "$T/out"; then ok; else bad "logdir newest run: $err"; fi
run dump --run 2020_01_01_00_00_00 "$T/tb"
if [ "$rc" -eq 0 ] && grep -q "host 8c859046be41" "$T/out"; then ok; else bad "logdir --run"; fi
run dump --run nope "$T/tb"
if [ "$rc" -eq 2 ] && [[ "$err" == *"no run named 'nope'"* ]]; then ok; else bad "logdir --run unknown: $rc $err"; fi
run dump "$T/tb/train/plugins/profile/2021_05_17_12_27_40"
if [ "$rc" -eq 0 ] && grep -q "capture: 1 host" "$T/out"; then ok; else bad "run dir"; fi

# ---- analyze ---------------------------------------------------------------
run analyze $CAPS/negative-tda-mnist-cnn-tf20-no-iterators/local.trace
if [ "$rc" -eq 0 ] && [[ "$out" == *"no tf.data activity captured"* ]]; then ok; else bad "negative control: $rc $out"; fi
run analyze -q examples/smdebug-8gpu/ip-172-31-19-241.trace.json
if [ "$rc" -eq 0 ] && [[ "$out" == *"bottleneck: Map (Iterator::Model::ForeverRepeat::Map)"* ]]; then ok; else bad "8gpu bottleneck"; fi
run analyze -q --fail-on input-bound examples/smdebug-8gpu/ip-172-31-19-241.trace.json
if [ "$rc" -eq 3 ]; then ok; else bad "--fail-on input-bound should exit 3, got $rc"; fi
run analyze -q --fail-on input-bound examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ]; then ok; else bad "--fail-on on a healthy job should exit 0, got $rc"; fi
run analyze -q -f json examples/ai-notebook/ai-notebook.xplane.pb
# not input-bound: a slowest stage, no bottleneck (issue 33)
if [ "$rc" -eq 0 ] && [[ "$out" == *'"schema_version": 2'* ]] && [[ "$out" == *'"bottleneck": null'* ]] &&
	[[ "$out" == *'"slowest_stage": "Model"'* ]]; then ok; else bad "json report"; fi
run analyze -q -f json -o "$T/r.json" examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ] && [ -z "$out" ] && grep -q schema_version "$T/r.json"; then ok; else bad "-o FILE"; fi
run analyze examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ] && [[ "$err" == *"tfdoctor: note: ai-notebook: no Produce/Consume"* ]]; then ok; else bad "notes on stderr"; fi
# deterministic: two runs give identical bytes
$TFD analyze -q -f json examples/smdebug-8gpu/ip-172-31-19-241.trace.json >"$T/j1"
$TFD analyze -q -f json examples/smdebug-8gpu/ip-172-31-19-241.trace.json >"$T/j2"
if cmp -s "$T/j1" "$T/j2"; then ok; else bad "json output not deterministic"; fi
# xprof mode on the multi-worker capture: device pipelines only (spec 8.8)
run analyze --mode xprof -f json $CAPS/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb
if [ "$rc" -eq 0 ] && [[ "$out" == *'"summary": "No tf.data activity captured'* ]] && [[ "$out" == *'"self_time_ps": "6251032000"'* ]]; then ok; else bad "xprof multi-worker"; fi
run analyze --mode xprof -f json examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ] && [[ "$out" == *'"iterator_name": "Model"'* ]] && [[ "$out" == *'"iterator_latency_ps": "22129000"'* ]] && [[ "$out" == *"does not have any tf.data input pipeline slower than 50 us"* ]]; then ok; else bad "xprof ai-notebook"; fi
run analyze --mode xprof -f gviz examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ] && [[ "$out" == '[{"cols":[{"id":"host"'* ]] && [[ "$out" == *'"summary_message":"Your profile does not have'* ]]; then ok; else bad "xprof gviz"; fi
# several hosts: one file per host in a run directory, ranked
mkdir -p "$T/multi"
cp examples/ai-notebook/ai-notebook.xplane.pb "$T/multi/"
cp examples/smdebug-8gpu/ip-172-31-19-241.trace.json "$T/multi/"
run analyze -q -f json "$T/multi"
if [ "$rc" -eq 0 ] && [[ "$out" == *'"host": "ip-172-31-19-241"'* ]] && \
	[ "$(grep -m1 '"host":' "$T/out" | tr -d ' ,')" = '"host":"ip-172-31-19-241"' ]; then ok; else bad "multi-host ranking"; fi

# ---- rules ------------------------------------------------------------------
R=tests/cases/rules
rules_fail() { # DIR PATTERN
	run rules check "$R/$1"
	if [ "$rc" -eq 1 ] && [ -z "$out" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		[[ "$err" == "tfdoctor: $R/$1/"*".json: "* ]] && grep -q -- "$2" "$T/err"; then ok
	else bad "rules check $1: rc=$rc err=$err"; fi
}
rules_fail syntax "invalid JSON near byte"
rules_fail unknown-key "rule 'X1': unknown key 'colour'"
rules_fail wrong-type "rule 'X1': field 'severity' must be one of"
rules_fail dup-id "rule 'X1': duplicate id (also in $R/dup-id/a.json)"
rules_fail unknown-family "unknown iterator family 'ParallelMapV2' (families are normalized: 'ParallelMap')"
rules_fail bad-op-type "rule 'X1': field 'top_op' must be an array of op types (identifiers such as DecodeJpegV2)"
# a rule's "ops" (the op types ops_share sums): an array, on a bottleneck
# rule, and needed by the metric
rules_fail bad-ops "rule 'X1': field 'ops' must be an array of op types"
rules_fail ops-on-host "rule 'X1': family/under/top_op/ops filters apply to target 'bottleneck' only"
rules_fail ops-share-without-ops "rule 'X1': metric 'ops_share' needs the rule's 'ops' (the op types it sums)"
# an estimate's "to" (the parallelism a fix sets) scales a parallelism only,
# from 1 up; the model names the one added with H07
rules_fail to-not-parallelism "rule 'X1': 'estimate.to' sets a parallelism: model 'scale' with 'of': 'parallelism' only"
rules_fail to-below-one "rule 'X1': 'estimate.to' must be a number >= 1"
rules_fail unknown-model "rule 'X1': 'estimate.model' must be one of scale, remove, overlap, copy_overlap, loop_startup, one_iterator, epoch_starts, vectorize, free_cpu, fewer_gaps, none"
# "of": "subtree" (the stage and the stages below it stop running) removes
rules_fail subtree-not-remove "rule 'X1': 'estimate.of' 'subtree' goes with model 'remove' only"
# "of": "dropped" (the work of the elements a shard above drops) as well
rules_fail dropped-not-remove "rule 'X1': 'estimate.of' 'dropped' goes with model 'remove' or 'free_cpu' only"
rules_fail of-unknown "rule 'X1': 'estimate.of' must be work, parallelism, workers, subtree or dropped"
run rules check "$R/good"
if [ "$rc" -eq 0 ] && [[ "$out" == *"1 rule ok"* ]]; then ok; else bad "rules check good"; fi
run rules check rules
if [ "$rc" -eq 0 ] && [[ "$out" == "rules: "*" rules ok" ]]; then ok; else bad "rules check rules/: $err"; fi
run rules list
if [ "$rc" -eq 0 ] && [[ "$out" == *"TFD-S01"* ]] && [[ "$out" == *"TFD-H01"* ]]; then ok; else bad "rules list"; fi
run rules list --rules "$R/good"
if [ "$rc" -eq 0 ] && [[ "$out" == *"TEAM-001"* ]] && [[ "$out" == *"TFD-S01"* ]]; then ok; else bad "rules list --rules"; fi
run rules check "$T/does-not-exist"
if [ "$rc" -eq 1 ]; then ok; else bad "rules check missing dir: $rc"; fi
run rules frobnicate
if [ "$rc" -eq 2 ]; then ok; else bad "rules bad subcommand: $rc"; fi
run analyze --rules "$R/unknown-key" examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 1 ] && [[ "$err" == *"unknown key 'colour'"* ]] && [ -z "$out" ]; then ok; else bad "analyze with broken rules"; fi
# findings in the report; a built-in rule overridden from --rules
Z=examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz
run analyze -q $Z
if [ "$rc" -eq 0 ] && [[ "$out" == *"[high] TFD-T04 Parallel map is at its limit"* ]] && \
	[[ "$out" == *"num_parallel_calls=tf.data.AUTOTUNE"* ]] && [[ "$(unwrap <<<"$out")" == *"worth: ~1.40x step time (root call 51.503 ms -> 27.442 ms)"* ]]; then ok; else bad "findings in text report"; fi
run analyze -q --rules "$R/override" $Z
if [ "$rc" -eq 0 ] && [[ "$out" == *"[low] TFD-T04 Our own advice for parallel maps"* ]]; then ok; else bad "rule override"; fi
run analyze -q -f json $Z
if [ "$rc" -eq 0 ] && [[ "$out" == *'"rule": "TFD-T04"'* ]] && [[ "$out" == *'"speedup": 1.8768'* ]]; then ok; else bad "findings in JSON"; fi
run analyze -q --fail-on severity=high $Z
if [ "$rc" -eq 3 ]; then ok; else bad "--fail-on severity=high should exit 3, got $rc"; fi
run analyze -q --fail-on severity=medium examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ]; then ok; else bad "--fail-on severity=medium on a healthy job: $rc"; fi
run analyze --fail-on severity=urgent $Z
if [ "$rc" -eq 2 ]; then ok; else bad "--fail-on bad severity: $rc"; fi
# no generic advice for the common versioned bottlenecks on the real captures
for f in examples/smdebug-8gpu/ip-172-31-19-241.trace.json $Z examples/ai-notebook/ai-notebook.xplane.pb \
	$CAPS/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb $CAPS/tda-mnist-linear-tf20/local.trace; do
	run analyze -q "$f"
	if [ "$rc" -eq 0 ] && ! grep -q "TFD-T99" "$T/out" && grep -q '^  \[' "$T/out"; then ok; else bad "findings on $f"; fi
done

# ---- dot -------------------------------------------------------------------
# every capture with tf.data renders through gvc in-process
for f in examples/ai-notebook/ai-notebook.xplane.pb examples/ai-notebook/ai-notebook.trace.json.gz \
	examples/smdebug-8gpu/ip-172-31-19-241.trace.json $Z \
	$CAPS/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb $CAPS/tda-mnist-linear-tf20/local.trace; do
	run dot -T svg "$f"
	if [ "$rc" -eq 0 ] && [[ "$out" == *"<svg"* ]] && [[ "$out" == *"</svg>"* ]] && [ -z "$err" ]; then ok; else bad "dot svg $f: rc=$rc $err"; fi
done
run dot "$Z" -o "$T/p.png"
if [ "$rc" -eq 0 ] && [ "$(head -c 4 "$T/p.png" | od -An -c | tr -d ' ')" = '211PNG' ]; then ok; else bad "dot png by suffix"; fi
run dot --pipeline Device:0 examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ] && [[ "$out" == *'label="Generator'* ]]; then ok; else bad "dot --pipeline"; fi
run dot --rank 0 -T dot $CAPS/tda-mnist-linear-tf20/local.trace
if [ "$rc" -eq 0 ] && [[ "$out" == *"digraph pipeline"* ]]; then ok; else bad "dot --rank 0"; fi
run dot --rank 99 $Z
if [ "$rc" -eq 2 ] && [[ "$err" == *"no rank 99"* ]]; then ok; else bad "dot --rank out of range: $rc $err"; fi
run dot --pipeline Host:7 $Z
if [ "$rc" -eq 2 ]; then ok; else bad "dot unknown pipeline: $rc"; fi
run dot -T gif $Z
if [ "$rc" -eq 2 ]; then ok; else bad "dot unknown format: $rc"; fi
run dot $CAPS/negative-tda-mnist-cnn-tf20-no-iterators/local.trace
if [ "$rc" -eq 1 ] && [[ "$err" == *"no tf.data input pipeline to draw"* ]]; then ok; else bad "dot without tf.data: $rc $err"; fi
run analyze -q --rank 0 $Z
if [ "$rc" -eq 0 ] && [[ "$out" == *"analyzed 1 call"* ]]; then ok; else bad "analyze --rank"; fi

# ---- report and history -------------------------------------------------------
DB="$T/h.db"
AI=examples/ai-notebook/ai-notebook.xplane.pb
# each night's capture is a file of its own: the same capture is recorded once
night() {
	mkdir -p "$T/nights/$1"
	cp $AI "$T/nights/$1/"
	echo "$T/nights/$1/ai-notebook.xplane.pb"
}
run report --history "$DB" --job nightly --timestamp 2026-11-20T02:00:00Z -o "$T/r1.html" "$(night 1)"
if [ "$rc" -eq 0 ] && grep -q "first recorded run" "$T/r1.html"; then ok; else bad "report run 1: $rc $err"; fi
run report --history "$DB" --job nightly --timestamp 2026-11-21T02:00:00Z --fail-on regression -o "$T/r2.html" "$(night 2)"
if [ "$rc" -eq 0 ] && grep -q "No regression against the previous run" "$T/r2.html"; then ok; else bad "report run 2 (no regression): $rc $err"; fi
# run 3 plants a regression: a slow parallel map instead of the healthy pipeline
run report --history "$DB" --job nightly --timestamp 2026-11-22T02:00:00Z --fail-on regression -o "$T/r3.html" $Z
# (the healthy nights had no bottleneck, only a slowest stage: the input
# share and the latency regress, no bottleneck "moved")
if [ "$rc" -eq 3 ] && grep -q 'data-kind="input"' "$T/r3.html" && ! grep -q 'bottleneck moved' "$T/r3.html" && \
	grep -q 'data-kind="latency"' "$T/r3.html" && grep -q "Trend over 3 recorded runs" "$T/r3.html" && \
	grep -q '<svg id="trend-latency"' "$T/r3.html" && grep -q '<svg id="trend-input"' "$T/r3.html" && \
	grep -q 'id="critical-path"><svg' "$T/r3.html"; then ok; else bad "report run 3 (planted regression): rc=$rc $err"; fi
cp "$T/r3.html" "$T/report.html" 2>/dev/null
run history --job nightly "$DB"
if [ "$rc" -eq 0 ] && [[ "$out" == *"integrity ok, schema 2, 3 runs, 1 job"* ]] && [ "$(echo "$out" | wc -l)" -eq 6 ] &&
	[[ "$out" == *"    id  run "*"max call"* ]] && [[ "$out" == *" us "* || "$out" == *" ms "* ]]; then ok; else bad "history: $out"; fi
# reading commands never create files; jobs, unknown jobs, formats
run history "$T/typo.db"
if [ "$rc" -eq 1 ] && [[ "$err" == *"typo.db: no such history database"* ]] && [ ! -e "$T/typo.db" ]; then ok; else bad "history on a missing file: $rc $err"; fi
ls "$DB"* | sort >"$T/before"
run history "$DB"
ls "$DB"* | sort >"$T/after"
if [ "$rc" -eq 0 ] && [[ "$out" == *"job "*"runs  last recorded"* ]] && [[ "$out" == *"nightly "*" 3  2026-11-22T02:00:00Z"* ]] && cmp -s "$T/before" "$T/after"; then ok; else bad "history jobs list: $out $(cat "$T/after")"; fi
run history --job nope "$DB"
if [ "$rc" -eq 2 ] && [[ "$err" == *"no job 'nope' in $DB (jobs: nightly)"* ]]; then ok; else bad "history unknown job: $rc $err"; fi
run history -f csv --job nightly "$DB"
if [ "$rc" -eq 0 ] && [ "$(head -1 "$T/out")" = "id,run,recorded_at,host,verdict,input_percent,max_latency_ns,p50_ns,bottleneck,top_rule" ] && [ "$(wc -l <"$T/out")" -eq 4 ]; then ok; else bad "history csv: $out"; fi
run history -f json --job nightly "$DB"
if [ "$rc" -eq 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['job']=='nightly' and len(d['runs'])==3" "$T/out"; then ok; else bad "history json: $out"; fi
run report --no-record --timestamp yesterday -o - $AI
if [ "$rc" -eq 2 ] && [[ "$err" == *"--timestamp 'yesterday' is not an ISO 8601 time"* ]]; then ok; else bad "report --timestamp yesterday: $rc $err"; fi
run report --history "$DB" --job nightly --no-record -f json $Z
if [ "$rc" -eq 0 ] && [[ "$out" == *'"kind": "input"'* ]] && [[ "$out" == *'"against": "'*'baseline"'* ]]; then ok; else bad "report json"; fi
run report --history "$DB" --job nightly --no-record -f md $Z
if [ "$rc" -eq 0 ] && [[ "$out" == "# tf.data pipeline health"* ]] && [[ "$out" == *"- 8c859046be41.ant.amazon.com: waiting for input"* ]]; then ok; else bad "report md: $out"; fi
run history --job nightly "$DB"
if [[ "$out" == *"3 runs"* ]]; then ok; else bad "--no-record recorded a run"; fi
run report --history "$DB" --job nightly --no-record --baseline 2026-11-99 $Z
if [ "$rc" -eq 2 ]; then ok; else bad "report unknown baseline: $rc"; fi
run report --no-record --fail-on input-bound $Z
if [ "$rc" -eq 3 ]; then ok; else bad "report --fail-on input-bound: $rc"; fi
run report --fail-on severity=high $AI
if [ "$rc" -eq 0 ]; then ok; else bad "report --fail-on severity=high on a healthy job: $rc"; fi
run report -f pdf $AI
if [ "$rc" -eq 2 ]; then ok; else bad "report bad format: $rc"; fi
echo "this is not a database" >"$T/notadb"
run report --history "$T/notadb" $AI
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [[ "$err" == "tfdoctor: $T/notadb: "* ]]; then ok; else bad "report on a non-database: $rc $err"; fi
# two reports at once: both land
c1=$(night c1) c2=$(night c2)
$TFD report --history "$DB" --job nightly -o - "$c1" >/dev/null 2>"$T/c1" &
p1=$!
$TFD report --history "$DB" --job nightly -o - "$c2" >/dev/null 2>"$T/c2" &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
run history "$DB"
if [ "$r1" -eq 0 ] && [ "$r2" -eq 0 ] && [[ "$out" == *"5 runs"* ]]; then ok; else bad "concurrent reports: $r1 $r2 $out $(cat "$T/c1" "$T/c2")"; fi
# killed in the middle of the write: the database stays consistent, the run is not half there
k=$(night k)
with_write_delay 3000 $TFD report --history "$DB" --job nightly -o - "$k" >/dev/null 2>&1 &
pk=$!
sleep 1
kill -9 $pk 2>/dev/null
wait $pk 2>/dev/null
run history --job nightly "$DB"
if [ "$rc" -eq 0 ] && [[ "$out" == *"integrity ok, schema 2, 5 runs"* ]]; then ok; else bad "killed mid-write: $rc $out $err"; fi
run report --history "$DB" --job nightly -o - "$k"
run history "$DB"
if [[ "$out" == *"6 runs"* ]]; then ok; else bad "report after a crash: $out"; fi

# Graphviz and SQLite are loaded where a diagram or the history first needs
# them: the binary links neither, and without them (as on a machine
# lacking the package) the commands that need them say so in one line and
# the others run
if ! ldd "$TFD" | grep -qE 'libgvc|libcgraph|libsqlite3|libpq'; then ok; else bad "linked at start: $(ldd "$TFD" | grep -E 'libgvc|libcgraph|libsqlite3|libpq')"; fi
without_lib libgvc.so.6 "$TFD" dot -T svg -o "$T/nogv.svg" "$(night nogv)" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -ne 0 ] && [ ! -e "$T/nogv.svg" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	grep -q "^tfdoctor: diagrams need Graphviz (Debian package libgvc6): cannot open shared object file" "$T/err"; then ok; else bad "no Graphviz: $rc $(cat "$T/err")"; fi
without_lib libgvc.so.6 "$TFD" analyze -q -o "$T/nogv.txt" "$(night nogv)" 2>"$T/err"
if [ $? -eq 0 ] && [ -s "$T/nogv.txt" ]; then ok; else bad "no Graphviz, analyze: $(cat "$T/err")"; fi
# a report is written without its diagram, and says so
without_lib libgvc.so.6 "$TFD" report --no-record -o "$T/nogv.html" "$(night nogv)" 2>"$T/err"
if [ $? -eq 0 ] && [ -s "$T/nogv.html" ] &&
	grep -q "the report has no critical-path diagram: diagrams need Graphviz" "$T/err"; then ok; else bad "no Graphviz, report: $(cat "$T/err")"; fi
without_lib libsqlite3.so.0 "$TFD" report --history "$T/nosq.db" --job nightly -o "$T/nosq.html" "$(night nosq)" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -ne 0 ] && [ ! -e "$T/nosq.db" ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	grep -q "^tfdoctor: $T/nosq.db: the history needs SQLite (Debian package libsqlite3-0): cannot open shared object file" "$T/err"; then ok; else bad "no SQLite: $rc $(cat "$T/err")"; fi
without_lib libsqlite3.so.0 "$TFD" report --no-record -o "$T/nosq.html" "$(night nosq)" 2>"$T/err"
if [ $? -eq 0 ] && [ -s "$T/nosq.html" ]; then ok; else bad "no SQLite, a report without history: $(cat "$T/err")"; fi

# one option vocabulary: -q, -o, -f, -H/--host, -r/--run where they apply
Z=examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz
for args in "analyze -q -o - -f json" "dot -q -o - -f dot" "dump -q -o - -f json" \
	"report -q --no-record -o - -f md" "analyze -H 8c859046be41.ant.amazon.com -r none -q"; do
	# shellcheck disable=SC2086
	run $args $Z
	if [ "$rc" -eq 0 ] && [ -n "$out" ]; then ok; else bad "vocabulary '$args': rc=$rc $err"; fi
done
# "did you mean" for commands and options, "needs a value" for a missing one
run analyse $Z
if [ "$rc" -eq 2 ] && [ "$err" = "tfdoctor: unknown command 'analyse'; did you mean 'analyze'?" ]; then ok; else bad "command typo: $err"; fi
run frobnicate
if [ "$rc" -eq 2 ] && [[ "$err" == *"unknown command 'frobnicate' (see 'tfdoctor help')" ]]; then ok; else bad "unknown command: $err"; fi
for c in analyze dot dump report; do
	run $c --hots x $Z
	if [ "$rc" -eq 2 ] && [[ "$err" == *"unknown option '--hots'; did you mean '--host'?"* || ( "$c" != analyze && "$c" != dot && "$err" == *"unknown option '--hots'"* ) ]]; then ok; else bad "$c --hots: $err"; fi
done
run report --histroy x $Z
if [ "$rc" -eq 2 ] && [[ "$err" == *"did you mean '--history'?"* ]]; then ok; else bad "report --histroy: $err"; fi
run analyze $Z -o
if [ "$rc" -eq 2 ] && [[ "$err" == *"option '-o' needs a value"* ]]; then ok; else bad "-o without a value: $err"; fi
run analyze $Z --rules
if [ "$rc" -eq 2 ] && [[ "$err" == *"option '--rules' needs a value"* ]]; then ok; else bad "--rules without a value: $err"; fi
# dot: the format follows -f or the file's suffix, never a silent mismatch
run dot -o "$T/x.jpg" $Z
if [ "$rc" -eq 2 ] && [[ "$err" == *"cannot tell the format of"* ]] && [ ! -e "$T/x.jpg" ]; then ok; else bad "dot -o x.jpg: $rc $err"; fi
run dot -T svg -o "$T/x.png" $Z
if [ "$rc" -eq 2 ] && [[ "$err" == *"-f svg does not match the file name"* ]]; then ok; else bad "dot -T svg -o x.png: $rc $err"; fi
run dot -o "$T/x.svg" $Z
if [ "$rc" -eq 0 ] && head -c 200 "$T/x.svg" | grep -q "<svg\|<?xml"; then ok; else bad "dot -o x.svg: $rc $err"; fi
if command -v script >/dev/null; then
	script -qec "$TFD dot -f png $Z" "$T/typescript" >"$T/tty.out" 2>&1
	if grep -q "writes binary data" "$T/tty.out" && ! grep -q "PNG" "$T/tty.out"; then ok; else bad "png to a terminal: $(head -c 200 "$T/tty.out")"; fi
fi
$TFD dot -f png $Z >"$T/x.png" 2>/dev/null
if [ "$(head -c 4 "$T/x.png" | tail -c 3)" = PNG ]; then ok; else bad "png to a pipe"; fi

# a new user's first hour: what was analyzed, how sure it is
run analyze examples/smdebug-zip
if [[ "$(unwrap <<<"$out")" == *"confidence in the verdict: low (1 step captured: profile longer, e.g. 20+ steps)"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"confidence in the bottleneck: low (1 root call captured: profile longer, e.g. 20+ steps)"* ]]; then ok; else bad "confidence on a 1-step capture: $(echo "$out" | head -5)"; fi
run analyze -q -f json examples/smdebug-zip
if [[ "$out" == *'"verdict_confidence": "low"'* ]] && [[ "$out" == *'"reasons": ['* ]]; then ok; else bad "confidence in JSON"; fi
run analyze --rank 5 examples/smdebug-zip
if [ "$rc" -eq 2 ] && [[ "$err" == *"pipeline Host:0 has 1 root call; no rank 5"* ]]; then ok; else bad "--rank beyond the calls: $rc $err"; fi
# a directory whose subdirectories are runs (three examples)
mkdir -p "$T/runs"
cp -r examples/smdebug-zip examples/smdebug-8gpu examples/ai-notebook "$T/runs/"
run analyze "$T/runs/"
if [ "$rc" -eq 0 ] && [[ "$err" == *"note: input: analyzed run 'smdebug-zip': the newest of 3 runs by name"* ]] &&
	[[ "$err" == *"skipped run 'ai-notebook' ($T/runs/ai-notebook): use --run ai-notebook, or --all-runs"* ]] &&
	[ "$(grep -c "skipped run" "$T/err")" -eq 2 ]; then ok; else bad "directory of runs: $err"; fi
run analyze -q --all-runs "$T/runs/"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^== run ' "$T/out")" -eq 3 ] && [ -z "$err" ]; then ok; else bad "--all-runs text: $rc $err"; fi
run analyze -q --all-runs -f json "$T/runs/"
if [ "$rc" -eq 0 ] && [ "$(grep -c '^  "run": ' "$T/out")" -eq 3 ] && [ "${out:0:1}" = "[" ]; then ok; else bad "--all-runs json: $rc $(head -c 300 "$T/out")"; fi
run analyze --all-runs examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 2 ] && [[ "$err" == *"--all-runs needs a log directory"* ]]; then ok; else bad "--all-runs on a file: $rc $err"; fi
mkdir -p "$T/derived"
cp tests/cases/ok/tfprof-demo-tpu/profile_demo.input_pipeline.pb "$T/derived/"
run analyze "$T/derived"
if [ "$rc" -eq 1 ] && [[ "$err" == *"only derived tool files such as 'profile_demo.input_pipeline.pb' (use the *.xplane.pb"* ]]; then ok; else bad "dir of derived files: $err"; fi
mkdir -p "$T/shadow"
cp examples/ai-notebook/* "$T/shadow/" 2>/dev/null
run analyze "$T/shadow"
if [[ "$err" == *"skipped ai-notebook.trace.json.gz: ai-notebook.xplane.pb holds the same capture"* ]]; then ok; else bad "shadowed trace.json: $err"; fi
run history --help
if [ "$rc" -eq 0 ] && [[ "$out" == "usage: tfdoctor history"* ]]; then ok; else bad "history --help: $out"; fi

# pictures that agree with the verdict: legend, same-named stages told apart
run dot examples/smdebug-8gpu
if [[ "$out" == *"cluster_legend"* ]] && [[ "$out" == *'label="Map #1'* ]] && [[ "$out" == *'label="Map #2'* ]] &&
	[[ "$out" == *"HIGHLY input-bound (21.7% waiting)"* ]] && [[ "$out" == *"parallelism 32"* ]]; then ok; else bad "dot legend and names"; fi
run dot examples/ai-notebook/ai-notebook.xplane.pb
if [[ "$out" == *"NOT input-bound"* ]] && [[ "$out" != *"color=red"* ]] && [[ "$out" == *"the slowest stage (the host is not input-bound)"* ]]; then ok; else bad "dot of a host that is not input-bound paints red"; fi

# executor chunks: a dataset function's are kept (an XSpace reader sums them
# as it reads: their time is the map's function work), the training step's
# are not
cat >"$T/exec.json" <<'SPEC'
{"name": "exec", "expect": "ParallelMapV2", "formats": ["xplane", "json"], "steps": 6, "step_compute_us": 200,
 "host_other_events_per_step": 40,
 "stages": [{"kind": "TFRecord", "cost_us": 5}, {"kind": "ParallelMap", "cost_us": 400, "parallelism": 2},
            {"kind": "Batch", "batch_size": 2, "cost_us": 5}, {"kind": "Prefetch"}]}
SPEC
$TFD synth -q -o "$T/exec" "$T/exec.json"
for f in "$T"/exec/plugins/profile/*/*; do
	run dump "$f"
	compute=$(echo "$out" | awk '/tf_Compute/ {print $3}')
	workers=$(echo "$out" | awk '/tf_data_parallel_map/ {s += $3} END {print s + 0}')
	case $f in *.xplane.pb) want_workers=0 ;; *) want_workers=1 ;; esac # summed, or events
	if [ "$compute" = 0 ] && [ "$((workers > 0))" = $want_workers ]; then ok; else bad "executor events kept in $(basename "$f"): compute=$compute workers=$workers"; fi
	$TFD analyze -q -f json -o "$T/exec.out" "$f"
	if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); s=[x for p in d['hosts'][0]['pipelines'] for x in p['stages'] if x['name']=='ParallelMapV2'][0]; assert s['function_calls'] > 0 and s['function_work_ns'] > 0" "$T/exec.out"; then ok; else bad "a dataset function's chunks counted in $(basename "$f")"; fi
done

# small things that erode trust
run dump tests/cases/ok/tda-mnist-linear-tf20/local.trace
if [[ "$out" == *"local.trace (tf2-trace)"* ]] && [[ "$out" != *"skipped"* ]] && [[ "$out" == *"/host:CPU "*"read"* ]]; then ok; else bad "dump of a local.trace: $(echo "$out" | sed -n 4,6p)"; fi
run analyze -q tests/cases/ok/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb
if [[ "$out" == *"- (device pipelines only)"* ]] && [[ "$out" != *"  0 ns"* ]]; then ok; else bad "device-only host table: $(echo "$out" | grep -A2 '^hosts')"; fi
# a MultiDeviceIterator's per-device pipeline (Iterator::Root::Prefetch::
# Generator) whose root names no dataset is told by the host's
# tf_data_multi_device_iterator threads: a device pipeline, no "Python
# generator" finding; without those threads, or under a root named another
# way, it is the user's own from_generator().prefetch()
python3 - "$T" <<'PY'
import json, sys
def trace(path, mdi_thread, root_name=None):
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},
          {"ph": "M", "pid": 1, "tid": 2, "name": "thread_name", "args": {"name": "tf_data_iterator_resource/2"}}]
    if mdi_thread:
        ev.append({"ph": "M", "pid": 1, "tid": 3, "name": "thread_name",
                   "args": {"name": "tf_data_multi_device_iterator_get_next/3"}})
    for s in range(6):
        t = s * 10000.0
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t, "dur": 9000, "name": "train", "args": {"step_num": str(s), "_r": "1"}})
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 1, "dur": 3000, "name": "IteratorGetNext", "args": {}})
        a = {"id": "10"}
        if root_name:
            a["name"] = root_name
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 2, "dur": 2990, "name": "Iterator::Root", "args": a})
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 3, "dur": 2980, "name": "Iterator::Prefetch",
                   "args": {"id": "11", "parent_id": "10", "long_name": "Iterator::Root::Prefetch"}})
        ev.append({"ph": "X", "pid": 1, "tid": 2, "ts": t + 4, "dur": 2900, "name": "Iterator::Generator",
                   "args": {"id": "12", "parent_id": "11", "long_name": "Iterator::Root::Prefetch::Generator"}})
    json.dump({"traceEvents": ev}, open(path, "w"))
trace(sys.argv[1] + "/mdi.trace.json", True)
trace(sys.argv[1] + "/gen.trace.json", False)
trace(sys.argv[1] + "/named.trace.json", True, "OptionsDataset:3")
trace(sys.argv[1] + "/r215.trace.json", True, "RootDataset:18")
PY
for f in mdi r215; do # r215: TensorFlow 2.15 names every root RootDataset:N
	run analyze -q "$T/$f.trace.json"
	if [[ "$out" == *"pipeline Device:0 (device"* ]] && [[ "$out" != *"TFD-S03"* ]]; then ok; else bad "$f: a MultiDeviceIterator's per-device pipeline: $(grep -E '^pipeline|TFD-' <<<"$out")"; fi
done
for f in gen named; do
	run analyze -q "$T/$f.trace.json"
	if [[ "$out" == *"pipeline Host:0 (host"* ]] && [[ "$out" == *"TFD-S03"* ]]; then ok; else bad "$f: a user's generator pipeline: $(grep -E '^pipeline|TFD-' <<<"$out")"; fi
done
# the host's cores, shared with the step, allow less than the step asks
# although the map alone could deliver more: the map limits throughput (at
# the cores' rate), the pipeline does not "keep up on average", and the
# advice to make its calls cheaper is not demoted
run analyze -q tests/cases/ok/tf221-autotune-cores-full/vm.xplane.pb
if [[ "$out" == *"limits throughput to 86.9 root elements/s"* ]] && [[ "$out" != *"keeps up"* ]] &&
	[[ "$out" == *"[high] TFD-T04"* ]] && [[ "$out" != *"TFD-P03"* ]]; then ok; else bad "cores full: $(sed -n 7,12p <<<"$out"; grep 'TFD-' <<<"$out")"; fi
# a synchronous job (MultiWorkerMirroredStrategy, two real workers): the
# steps are as long on both, so the straggler is the worker that waits for
# input, named as such; the other, waiting in its collectives, is not
run analyze -q tests/cases/ok/tf221-mwms-two-workers
if [[ "$(unwrap <<<"$out")" == *"straggler: vm (worker1.xplane.pb) waits for input 56% of its steps against 1% on the median other host, its steps as long as theirs"*"the others wait for it in their collectives (its bottleneck: MapAndBatch)."* ]] &&
	[ "$(grep -c '^straggler' <<<"$out")" = 1 ]; then ok; else bad "a synchronous straggler: $(grep -A3 straggler <<<"$out")"; fi
run analyze -q -f json tests/cases/ok/tf221-mwms-two-workers
if python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]["stragglers"]
assert len(s) == 1 and s[0]["host"] == "vm (worker1.xplane.pb)" and s[0]["synchronous"] and s[0]["why"] == "input", s' <<<"$out"; then ok; else bad "a synchronous straggler in JSON: $(head -c 300 <<<"$out")"; fi
# the same capture as TensorFlow's converter writes it for the trace viewer
# (Chrome JSON) gives the same steps, input % and demand as its XSpace: the
# converter gives every root event a group, a tf.data function run's as
# well as a step's (MirroredStrategy: the MultiDeviceIterator's runs; Keras
# 3 fit with the TensorBoard callback: the train function's runs, its
# "Profiled batch" markers left ungrouped); the steps are the markers, over
# the markers' extents (a group can start with a GetNext before its
# marker: the MapAndBatch job's first step)
for pair in "examples/real-mirrored-two-devices tests/cases/ok/tf221-mirrored-chrome" \
	"tests/cases/ok/tf221-keras3-tensorboard tests/cases/ok/tf221-keras3-tensorboard-chrome" \
	"examples/real-next-outside-markers tests/cases/ok/tf221-next-outside-markers-chrome" \
	"examples/real-map-and-batch-fused tests/cases/ok/tf221-map-and-batch-fused-chrome"; do
	set -- $pair
	run analyze -q -f json "$1"
	xs=$out
	run analyze -q -f json "$2"
	if python3 -c 'import json, sys
a, b = (json.loads(x)["hosts"][0] for x in sys.argv[1:3])
ca, cb = a["pipelines"][0]["capacity"], b["pipelines"][0]["capacity"]
assert a["steps"] == b["steps"] and abs(a["input_percent"] - b["input_percent"]) <= 0.3, (a["steps"], b["steps"], a["input_percent"], b["input_percent"])
assert abs(ca["demand"] - cb["demand"]) <= 0.01 * ca["demand"], (ca["demand"], cb["demand"])' "$xs" "$out"; then ok; else bad "Chrome trace of $1: not the XSpace's steps"; fi
done
# next() before the step marker (a real custom loop): the waits fall
# between the markers; the host is input-bound (the truth: 26.9 %), the
# report says why, and the markers-only figure (xprof's 0.0 %) is kept
run analyze -q examples/real-next-outside-markers
if [[ "$out" == "verdict: HIGHLY input-bound: 25.9%"* ]] && [[ "$(unwrap <<<"$out")" == *"between steps: the step markers leave the input out (next() runs between them:"*"the markers alone (TensorFlow's convention, TensorBoard's figure) would say 0.0%."* ]]; then ok; else bad "waits between markers: $(head -8 <<<"$out")"; fi
run analyze -q -f json examples/real-next-outside-markers
if python3 -c 'import json, sys; g = json.load(sys.stdin)["hosts"][0]["input_share"]["between_steps"]
assert g["markers_only_percent"] == 0.0 and g["wait_ns"] > 0, g' <<<"$out"; then ok; else bad "waits between markers in JSON: $(head -c 300 <<<"$out")"; fi
# a for loop over a dataset inside a tf.function runs in one ReduceDataset
# op: autograph's scan runs the loop's body and waits in its input's root
# (no IteratorGetNext). The input pipeline below the scan is analyzed, its
# waits counted (it said "no tf.data activity captured"), its options read
# from the loop's root (the cores' model needs them), its demand the loop
# body's (a marker around each call holds the loop's start-up too), and
# TFD-H06 says how to pull the elements instead
run analyze -q examples/real-loop-inside-function
if [ "$rc" -eq 0 ] && [[ "$(unwrap <<<"$out")" == *"MODERATELY input-bound"*"bottleneck: MapAndBatch (Scan::FiniteTake::Prefetch::MapAndBatch)"*"TFD-H06"*"worth: 1.63x step time"*"TFD-T15"* ]] &&
	[[ "$out" != *"too short"* && "$out" != *"TFD-H05"* ]]; then ok; else bad "a loop inside a tf.function: $rc $(head -8 <<<"$out")"; fi
run analyze -q -f json examples/real-loop-inside-function
if python3 -c 'import json, sys; d = json.load(sys.stdin); s = d["summary"]; h = d["hosts"][0]
assert s["tfdata_found"] is True and s["loop_in_function"] is True, s
assert 10 < h["input_percent"] < 15, h["input_percent"]
# each call's start-up: 174-193 ms of the steps' 448-498 ms
lp = h["loop_in_function"]
assert 0.35 < lp["startup_ns"] / lp["steps_ns"] < 0.42, lp
p = [p for p in h["pipelines"] if p["name"] == h["focus_pipeline"]][0]
c = p["capacity"]
assert c["cpu"]["budget"] == 2 and not c["demand_from_steps"] and c["demand"] > 100, c' <<<"$out"; then ok; else bad "a loop inside a tf.function in JSON: $(head -c 300 <<<"$out")"; fi
# a ReduceDataset with no scan below it (ds.reduce of a sum): no input
# pipeline of a loop, and the verdict says why there is none
cat >"$T/reduce.trace.json" <<'EOF2'
{"displayTimeUnit":"ns","traceEvents":[
{"ph":"M","pid":1,"name":"process_name","args":{"name":"/host:CPU"}},
{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"python"}},
{"ph":"M","pid":1,"tid":3,"name":"thread_name","args":{"name":"tf_data_reduce_dataset"}},
{"ph":"X","pid":1,"tid":2,"name":"train","ts":0,"dur":1000,"args":{"step_num":"0","_r":"1"}},
{"ph":"X","pid":1,"tid":3,"name":"ReduceIterator::Root","ts":10,"dur":100,"args":{"id":"7"}},
{"ph":"X","pid":1,"tid":3,"name":"ReduceIterator::Root::Map","ts":20,"dur":80,"args":{"id":"8","parent_id":"7"}}
]}
EOF2
run analyze -q "$T/reduce.trace.json"
if [ "$rc" -eq 0 ] && [[ "$(unwrap <<<"$out")" == *"iterated inside a tf.function"*"next(it)"* ]]; then ok; else bad "a reduce inside a tf.function: $rc $(head -3 <<<"$out")"; fi
run analyze -q -f json "$T/reduce.trace.json"
if python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]
assert s["tfdata_found"] is False and s["loop_in_function"] is True, s' <<<"$out"; then ok; else bad "a reduce inside a tf.function in JSON: $(head -c 300 <<<"$out")"; fi
run analyze -q -f json tests/cases/ok/negative-tda-mnist-cnn-tf20-no-iterators
if python3 -c 'import json, sys; s = json.load(sys.stdin)["summary"]
assert s["tfdata_found"] is False and s["loop_in_function"] is False, s' <<<"$out"; then ok; else bad "no tf.data, no loop inside a function: $(head -c 300 <<<"$out")"; fi
# a step marker of any name with `_r` is a step, as TensorFlow's converter
# takes it (xprof: 28 steps, 32.69 %), and the converter's Chrome trace of
# it (markers "step 20", ..., a step_name arg) reads the same; tfdoctor had
# taken only train*/test* names and read the capture's span
for f in vm.xplane.pb vm.trace.json.gz; do
	run analyze -q -f json "tests/cases/ok/tf221-marker-named-step/$f"
	if python3 -c 'import json, sys; h = json.load(sys.stdin)["hosts"][0]
assert h["input_basis"] == "steps" and h["input_share"]["tf_convention"]["steps"] == 28, h["input_basis"]
assert abs(h["input_percent"] - 32.69) <= 0.1, h["input_percent"]' <<<"$out"; then ok; else bad "a marker named step ($f): $(head -c 300 <<<"$out")"; fi
done
# prefetch_to_device: the generator that feeds the device pulls the host
# pipeline with an IteratorGetNext op inside a function tf.data runs; that
# wait is the pipeline's own, not the training loop's (tfdoctor counted it:
# 7.6 % where xprof, counting the steps' own, says 0.48 %)
# (in the converter's Chrome trace those function runs' groups are no
# step's)
for f in vm.xplane.pb vm.trace.json.gz; do
	run analyze -q -f json "tests/cases/ok/tf221-prefetch-to-device/$f"
	if python3 -c 'import json, sys; h = json.load(sys.stdin)["hosts"][0]
tf = h["input_share"]["tf_convention"]
assert tf["steps"] == 28 and abs(tf["percent"] - 0.48) <= 0.1, tf' <<<"$out"; then ok; else bad "prefetch_to_device ($f): $(head -c 300 <<<"$out")"; fi
done
# next(it) under tf.range inside the function, 4 steps a call, a marker
# around each call: the GetNext ops inside the function are the waits, and
# the verdict's confidence counts the loop's 40 iterations, not the 10
# markers (it said medium, "8 steps behind the share")
run analyze -q -f json tests/cases/ok/tf221-next-under-tf-range
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_share"]["tf_convention"]["steps"] == 8 and abs(h["input_percent"] - 21.75) <= 0.1, h["input_percent"]
assert h["confidence"]["level"] == "high", h["confidence"]
assert d["findings"][0]["rule"] == "TFD-T15", d["findings"][0]["rule"]' <<<"$out"; then ok; else bad "next() under tf.range: $(head -c 300 <<<"$out")"; fi
# a loop that makes an iterator each epoch (`for epoch ...: for x in ds:`):
# a pipeline per epoch, each consumed by its epoch's steps; the training
# steps are its consumer, none is said to take elements for them
run analyze -q -f json tests/cases/ok/tf221-iterator-per-epoch
if python3 -c 'import json, sys; ps = json.load(sys.stdin)["hosts"][0]["pipelines"]
assert len(ps) == 3 and not any(p["capacity"]["demand_from_steps"] for p in ps), [p["capacity"]["demand"] for p in ps]' <<<"$out"; then ok; else bad "an iterator per epoch: demand from steps: $(head -c 300 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-iterator-per-epoch
if [[ "$(unwrap <<<"$out")" != *"its own consumer"* ]]; then ok; else bad "an iterator per epoch: $(grep -m2 'would take' <<<"$out")"; fi
# a producer that keeps up on average, iterated anew each epoch: the verdict
# says where its waits are
if [[ "$(unwrap <<<"$out")" == *"on average the input pipeline keeps up, and the waits are where each new iterator starts empty (TFD-H05)"* ]]; then ok; else bad "an iterator per epoch: verdict $(grep -m1 -A3 'bottleneck:' <<<"$out")"; fi
# the three pipelines are one dataset iterated anew: its advice is said
# once, for the pipeline with the slowest call (the focus), and the other
# two say whose findings they share
if [ "$(grep -c '^  \[.*TFD-P03' <<<"$out")" = 1 ] && [ "$(grep -c "the findings are Host:1's" <<<"$out")" = 2 ]; then ok; else bad "an iterator per epoch: findings $(grep '^  \[' <<<"$out")"; fi
run analyze -q -f json tests/cases/ok/tf221-iterator-per-epoch
if python3 -c 'import json, sys; d = json.load(sys.stdin); ps = d["hosts"][0]["pipelines"]
assert [p["repeats"] for p in ps] == ["Host:1", None, "Host:1"], [p["repeats"] for p in ps]
assert d["hosts"][0]["focus_pipeline"] == "Host:1"
# the advice: one iterator over the repeated dataset, first (measured on
# this loop: 8.8-9.3 ms a step, 6.8-7.7 ms with one iterator)
assert d["findings"][0]["rule"] == "TFD-H05", [f["rule"] for f in d["findings"]]
# the waits are the refill, not bursts a larger buffer would hide
assert [f["severity"] for f in d["findings"] if f["rule"] == "TFD-P03"] == ["low"], d["findings"]' <<<"$out"; then ok; else bad "an iterator per epoch in JSON: $(head -c 300 <<<"$out")"; fi
# a loop that makes a new iterator each step (`next(iter(ds))`): making
# each (MakeIterator on the loop's thread) is input time the loop waits
# for, as its next() does (xprof and the markers-only count said 11.5 %;
# the run's clock 40-67 %); the new iterators, not a stage, are the
# bottleneck, and no stage advice comes from pipelines that ran one
# element from empty (it said TFD-P01 "no prefetch" of a pipeline with one)
run analyze -q -f json tests/cases/ok/tf221-iterator-per-step
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_bound"] == "highly" and h["input_percent"] > 50, h["input_percent"]
assert h["iterator_create_ns"] > 0.4 * h["step_ns"], (h["iterator_create_ns"], h["step_ns"])
assert abs(h["iterators_per_step"] - 1.0) < 0.01, h["iterators_per_step"]
assert d["summary"]["new_iterator_each_step"] is True
assert [f["rule"] for f in d["findings"]] == ["TFD-H09"], [f["rule"] for f in d["findings"]]
e = d["findings"][0]["estimate"]
assert e["model"] == "one_iterator" and 2.0 < e["step_speedup"] < 2.4, e' <<<"$out"; then ok; else bad "an iterator per step: $(head -c 400 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-iterator-per-step
if [[ "$(unwrap <<<"$out")" == *"making iterators: 10.322 ms a step of the 13.048 ms waited"* &&
	"$(unwrap <<<"$out")" == *"bottleneck: a new iterator each step (30 iterators"* ]]; then ok; else bad "an iterator per step: $(sed -n 1,12p <<<"$out")"; fi
# next(iter(ds)) inside a tf.function called each step: the function's
# MakeIterator runs on tf.data's tf_data_make_iterator thread while the
# step waits (11.9 ms a step), and its 30 iterators recur at 10 addresses:
# 10 pipelines of 3 calls. It said 19 % input-bound and H05 (no making
# iterators counted, 10 iterators for 30 steps); unprofiled the loop took
# 15.2 ms a step, 2.0 ms with one iterator
run analyze -q -f json tests/cases/ok/tf221-iterator-in-function-each-step
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_bound"] == "highly" and h["input_percent"] > 70, h["input_percent"]
assert h["iterator_create_ns"] > 0.5 * h["step_ns"], (h["iterator_create_ns"], h["step_ns"])
assert abs(h["iterators_per_step"] - 1.0) < 0.01, h["iterators_per_step"]
assert [f["rule"] for f in d["findings"]] == ["TFD-H09"], [f["rule"] for f in d["findings"]]
assert d["findings"][0]["estimate"]["step_speedup"] > 3, d["findings"][0]["estimate"]' <<<"$out"; then ok; else bad "an iterator per step inside a tf.function: $(head -c 300 <<<"$out")"; fi
# the same loop profiled with the options TensorFlow's profiler guide shows
# (host_tracer_level=3, python_tracer_level=1): the new iterators got two
# prefetch addresses and three MapAndBatch ones, so each MapAndBatch is
# linked to one of the prefetches at its parent's address and most
# pipelines show a prefetch alone; the one standing for them is one that
# shows all its stages (it named Prefetch, whose producer it had not seen)
run analyze -q -f json tests/cases/ok/tf221-host-tracer-3-iterator-per-step
if python3 -c 'import json, sys; d = json.load(sys.stdin)
assert [f["rule"] for f in d["findings"]] == ["TFD-H09"], [f["rule"] for f in d["findings"]]
assert d["summary"]["bottleneck_long_name"] == "Iterator::Root::Prefetch::MapAndBatch", d["summary"]
h = d["hosts"][0]; p = [p for p in h["pipelines"] if p["name"] == h["focus_pipeline"]][0]
assert [s["name"] for s in p["stages"]] == ["Root", "Prefetch", "MapAndBatch", "Range"], p["stages"]' <<<"$out"; then ok; else bad "an iterator per step, host tracer level 3: $(head -c 300 <<<"$out")"; fi
# window() + flat_map(lambda w: w.batch(n)): every inner dataset yields one
# window, so the flat_map's cost is making them; a parallel interleave does
# not remove it (measured 0.97x), a vectorized framing does (1.82x): T24,
# not T02 (which it said, 1.07x)
run analyze -q -f json tests/cases/ok/tf221-window-flat-map
if python3 -c 'import json, sys; d = json.load(sys.stdin); fs = d["findings"]
assert [f["rule"] for f in fs] == ["TFD-T24"], [f["rule"] for f in fs]
assert fs[0]["stage"] == "FlatMap" and fs[0]["estimate"]["model"] == "remove", fs[0]
assert 1.4 < fs[0]["estimate"]["step_speedup"] < 2.2, fs[0]["estimate"]' <<<"$out"; then ok; else bad "window + flat_map: $(head -c 400 <<<"$out")"; fi
# repeat() after prefetch: each epoch makes the inner iterators anew, and
# TensorFlow's pool hands the old ones' threads to new roles (a thread
# that ran map calls in one epoch feeds the prefetch in the next): each
# function call is the map's whose input call ended last before it on its
# thread, not the thread's most frequent owner's (the map's work had gone
# uncounted: "not captured", the limit inferred, T04 1.50x where halving
# the map measured 1.04-1.17x)
run analyze -q -f json tests/cases/ok/tf221-repeat-after-prefetch
if python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert d["summary"]["bottleneck"] == "ParallelMapV2", d["summary"]
assert p["capacity"]["inferred"] is False, p["capacity"]["evidence"]
assert d["summary"]["bottleneck_top_op"] == "_MklMatMul", d["summary"]
f = [f for f in d["findings"] if f["rule"] == "TFD-T04"][0]
assert 1.05 < f["estimate"]["step_speedup"] < 1.3, f["estimate"]' <<<"$out"; then ok; else bad "threads that change roles: $(head -c 400 <<<"$out")"; fi
# one element per inner dataset too, but made by 5 ms of the function's
# matmuls (from_tensors(f(x))): the function's work, not the datasets', is
# the cost: no T24 (whose estimate removes the whole flat_map: 1.61x)
run analyze -q -f json tests/cases/ok/tf221-flat-map-from-tensors
if python3 -c 'import json, sys; d = json.load(sys.stdin); fs = [f["rule"] for f in d["findings"]]
assert "TFD-T24" not in fs and "TFD-T02" in fs, fs' <<<"$out"; then ok; else bad "flat_map of from_tensors(f(x)): $(head -c 400 <<<"$out")"; fi
# `for b in ds.take(1):` each step: the dataset made (TakeDataset) and
# optimized inside the eager MakeIterator op before MakeIterator::Root...
# count too (44 % with the MakeIterator:: events alone; the clock 69 %)
run analyze -q -f json tests/cases/ok/tf221-take-one-per-step
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert 62 < h["input_percent"] < 66, h["input_percent"]
assert [f["rule"] for f in d["findings"]] == ["TFD-H09"], [f["rule"] for f in d["findings"]]' <<<"$out"; then ok; else bad "ds.take(1) each step: $(head -c 300 <<<"$out")"; fi
# Keras augmentation layers in a map over the batches, written without
# num_parallel_calls: the sequential map is the bottleneck, its function
# mostly ImageProjectiveTransformV3; F03 (half the work: 2.00x, measured
# 1.93x) and T01 (AUTOTUNE: 1.33x, measured 1.56x)
run analyze -q -f json tests/cases/ok/tf221-keras-augment-layers
if python3 -c 'import json, sys; d = json.load(sys.stdin); s = d["summary"]
assert s["bottleneck"] == "Map" and s["bottleneck_top_op"] == "ImageProjectiveTransformV3", s
assert [f["rule"] for f in d["findings"]] == ["TFD-F03", "TFD-T01"], [f["rule"] for f in d["findings"]]' <<<"$out"; then ok; else bad "Keras augmentation layers: $(head -c 300 <<<"$out")"; fi
# the iterator per epoch: each epoch's MakeIterator counts too (6.4 % of
# the steps without it)
run analyze -q -f json tests/cases/ok/tf221-iterator-per-epoch
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert abs(h["input_percent"] - 11.0) < 0.1 and h["iterator_create_ns"] > 0, h["input_percent"]
assert h["iterators_per_step"] < 0.5 and d["summary"]["new_iterator_each_step"] is False' <<<"$out"; then ok; else bad "an iterator per epoch: iterators made: $(head -c 300 <<<"$out")"; fi
# Keras 3 fit with validation_data over epochs: the training pipeline (one
# iterator: ds.repeat() and steps_per_epoch) is the focus, not the
# validation set's, whose first call of each pass refills it (the slowest
# call); its repeats are no advice for the training loop (no TFD-H05)
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-validation
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["focus_pipeline"] == "Host:0" and d["summary"]["pipeline"] == "Host:0", h["focus_pipeline"]
assert "TFD-H05" not in [f["rule"] for f in d["findings"]]
assert [p["repeats"] for p in h["pipelines"]][1:] in (["Host:2", None], [None, "Host:1"])' <<<"$out"; then ok; else bad "Keras fit with validation: focus $(grep -o '"focus_pipeline":"[^"]*"' <<<"$out")"; fi
# the validation passes run between the training steps (none of their
# calls falls in a step): no stage advice for them (it had said TFD-T01 for
# the validation set's map, ranked beside the training's; on a heavier
# validation map, TFD-T04 at 1.66x, first of all), and the training steps
# are not the consumer whose demand they are measured against
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert [p["outside_steps"] for p in h["pipelines"]] == [False, True, True], h["pipelines"]
assert {f["pipeline"] for f in d["findings"] if f["pipeline"]} == {"Host:0"}, [(f["rule"], f["pipeline"]) for f in d["findings"]]
assert not any(p["capacity"]["demand_from_steps"] for p in h["pipelines"][1:])' <<<"$out"; then ok; else bad "Keras validation passes: $(head -c 300 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-keras3-fit-validation
if [ "$(unwrap <<<"$out" | grep -o 'read between the training steps' | wc -l)" = 2 ]; then ok; else bad "Keras validation passes, text: $(grep -A2 '^pipeline' <<<"$out")"; fi
# the validation set's map as heavy as the training's, parallel, on the
# pool threads both iterators draw from: a validation worker's function
# calls ran for its own pipeline (its input call before each), not the
# training map's (which had counted 760 calls, 43.8 ms a root element, for
# its 632: 16 a batch of its 41 and the ones filling its buffers), nor the
# validation feature map's calls the training's
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-validation-heavy
if python3 -c 'import json, sys; d = json.load(sys.stdin); ps = d["hosts"][0]["pipelines"]
calls = [{s["name"]: s.get("function_calls") for s in p["stages"]} for p in ps]
assert calls[0]["MapAndBatch"] == calls[0]["ParallelMapV2"] == 632, calls
assert calls[1]["MapAndBatch"] == calls[1]["ParallelMapV2"] == 64, calls' <<<"$out"; then ok; else bad "Keras validation on shared pool threads: $(head -c 300 <<<"$out")"; fi
# between the epochs the training consumer is away (the validation pass,
# Keras' epoch end) and the training pipeline, its buffers full, idles:
# those pauses are not its window's time, nor its consumer's (the same job
# unprofiled: 6.5 ms a training step with the sequential map, 3.5 ms with
# AUTOTUNE, 1.84x; counted in, the cores were "already the limit", ~1.0x,
# its workers busy a third, the demand 82/s for the step's 527/s)
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-validation
if python3 -c 'import json, sys; d = json.load(sys.stdin); c = d["hosts"][0]["pipelines"][0]["capacity"]
assert c["pauses"] == 2 and 150e6 < c["pause_ns"] < 300e6, c
assert c["demand"] > 300, c["demand"]
f = [f for f in d["findings"] if f["rule"] == "TFD-T01"][0]
assert 1.4 < f["estimate"]["step_speedup"] < 2.3, f["estimate"]' <<<"$out"; then ok; else bad "Keras validation pauses: $(head -c 300 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-keras3-fit-validation
if unwrap <<<"$out" | grep -q 'root elements in [0-9.]* ms, leaving out [0-9.]* ms of pauses between the steps)'; then ok; else bad "Keras validation pauses, text: $(grep 'throughput (steady' <<<"$out")"; fi
# a custom loop that does 10 ms of Python (a sleep, as logging would be)
# outside its step marker after every step: that is the loop's cadence,
# not a pause, and the sequential map (108/s) keeps up with its 92/s (the
# map on AUTOTUNE measured 10.9 -> 12.7 ms a step: no gain); taken for
# pauses, the demand had been 991/s and T15 1.79x
run analyze -q -f json tests/cases/ok/tf221-python-between-steps
if python3 -c 'import json, sys; d = json.load(sys.stdin); c = d["hosts"][0]["pipelines"][0]["capacity"]
assert c["pauses"] == 0 and c["demand"] < 120, c
assert all((f.get("estimate") or {}).get("step_speedup", 1) < 1.1 for f in d["findings"]), d["findings"]' <<<"$out"; then ok; else bad "Python between every two steps: $(head -c 300 <<<"$out")"; fi
# a custom loop that evaluates every 10 steps (a new iterator of an eval
# dataset, 4 batches, between the step markers, which hold next()): the
# eval's waits made the gaps between markers count, so its pipelines were
# inside the steps and one was given T04 ahead of the training map's; now
# they are read between the steps, the training pipeline's window leaves
# the evaluations out, and its T04 says 1.93x (halving the map measured
# 1.87x on the training steps); the evaluations themselves are TFD-H12's
# (evaluate less often)
run analyze -q -f json tests/cases/ok/tf221-loop-eval-every-10
if python3 -c 'import json, sys; d = json.load(sys.stdin); ps = d["hosts"][0]["pipelines"]
assert d["hosts"][0]["input_share"].get("between_steps") is None, "the eval waits counted"
assert [p["outside_steps"] for p in ps] == [False] + [True] * 5, [(p["name"], p["outside_steps"]) for p in ps]
assert [(f["rule"], f["pipeline"]) for f in d["findings"]] == [("TFD-T04", "Host:0"), ("TFD-H12", "")], d["findings"]
assert ps[0]["capacity"]["pauses"] == 5, ps[0]["capacity"]
assert 1.6 < d["findings"][0]["estimate"]["step_speedup"] < 2.2, d["findings"][0]["estimate"]' <<<"$out"; then ok; else bad "custom loop, eval every 10 steps: $(head -c 300 <<<"$out")"; fi
# Keras fit with validation_data whose pipelines keep up: Keras makes each
# validation pass's iterator (and the next pass's, at the end of this one)
# between the training batches' markers, and those waits had made the
# waits between the markers count as the training input: HIGHLY
# input-bound at 32.9 % where the markers say 5.6 %. What the loop spent
# on a pipeline read only between the markers is not the steps'
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-validation-light
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_percent"] < 10 and h["input_share"].get("between_steps") is None, (h["input_percent"], h["input_share"].get("between_steps"))' <<<"$out"; then ok; else bad "Keras validation, light pipelines: $(head -c 300 <<<"$out")"; fi
# two datasets a step, the second's next() before the step marker every
# step (the first's inside it): read between the markers in every gap,
# it is the loop's input, not a pass now and then; its sequential map gets
# T15 (AUTOTUNE measured 8.0 -> 4.6 ms a step, 1.74x). Taken for a
# validation pass, it had been outside the steps, with no finding at all
run analyze -q -f json tests/cases/ok/tf221-second-dataset-before-marker
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert not any(p["outside_steps"] for p in h["pipelines"]), [(p["name"], p["outside_steps"]) for p in h["pipelines"]]
assert h["input_share"].get("between_steps") is not None
f = d["findings"][0]
assert f["rule"] == "TFD-T15" and 1.5 < f["estimate"]["step_speedup"] < 2.1, f' <<<"$out"; then ok; else bad "second dataset before the marker: $(head -c 300 <<<"$out")"; fi
# the same loop with a heavy first map (2 ms an element) and a light
# second one (0.5 ms): the waits are inside the markers, the gaps do not
# count, but a dataset read before every marker is still the loop's input
# (it had been outside the steps): its map gets T15, worth ~1.0x there
run analyze -q -f json tests/cases/ok/tf221-second-dataset-before-marker-light
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_share"].get("between_steps") is None
assert not any(p["outside_steps"] for p in h["pipelines"]), [(p["name"], p["outside_steps"]) for p in h["pipelines"]]
assert [f["rule"] for f in d["findings"]] == ["TFD-T04", "TFD-T15"], d["findings"]' <<<"$out"; then ok; else bad "second dataset before the marker, light: $(head -c 300 <<<"$out")"; fi
# the heavy validation job: T04's halving of the training map measured
# 1.92x on the training steps (1.59x with the pauses counted in)
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-validation-heavy
if python3 -c 'import json, sys; d = json.load(sys.stdin)
f = [f for f in d["findings"] if f["rule"] == "TFD-T04"][0]
assert f["pipeline"] == "Host:0" and 1.7 < f["estimate"]["step_speedup"] < 2.3, f["estimate"]' <<<"$out"; then ok; else bad "Keras heavy validation, T04: $(head -c 300 <<<"$out")"; fi
# Keras 3 fit on a dataset that ends makes an iterator each epoch too
# (profile_batch=(10, 40) over 16-batch epochs); the advice names fit's way
run analyze -q tests/cases/ok/tf221-keras3-fit-iterator-per-epoch
if [[ "$out" == *"TFD-H05"* ]] && [[ "$out" == *"model.fit(ds.repeat(), epochs=epochs, steps_per_epoch=steps_per_epoch)"* ]] &&
	[ "$(grep -c 'iterated anew' <<<"$out")" -ge 1 ]; then ok; else bad "Keras fit, an iterator per epoch: $(grep '^  \[' <<<"$out")"; fi
# Keras fit on NumPy arrays (20 batches an epoch, profiled over 41 batches):
# Keras makes the dataset and a new iterator of it each epoch, each made
# (MakeIterator) between the steps: HIGHLY input-bound, TFD-H05 first, its
# code building the dataset from the arrays (measured: 2.29 ms a step, 1.05
# ms with the dataset repeated and steps_per_epoch)
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-numpy-epochs
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_bound"] == "highly" and h["iterator_create_ns"] > 0.25 * h["step_ns"], h["input_percent"]
assert d["findings"][0]["rule"] == "TFD-H05", [f["rule"] for f in d["findings"]]
assert "from_tensor_slices((x, y))" in d["findings"][0]["code"]' <<<"$out"; then ok; else bad "Keras fit on NumPy arrays: $(head -c 300 <<<"$out")"; fi
# making the iterators is most of the wait: the verdict says so
run analyze -q tests/cases/ok/tf221-keras3-fit-numpy-epochs
if [[ "$(unwrap <<<"$out")" == *"the waits are each new iterator being made and starting empty (TFD-H05)"* ]]; then ok; else bad "Keras fit on NumPy arrays, verdict: $(sed -n 14,22p <<<"$out")"; fi
# a cpu_budget option below the cores is not the host's cores: the larger
# of cpu_budget and the thread pool's size is
run analyze -q -f json tests/cases/ok/tf221-autotune-cpu-budget-1/vm.xplane.pb
if [[ "$out" == *'"budget": 2,'* ]]; then ok; else bad "cpu_budget=1 on 2 cores: $(grep -o '"cpu": {[^}]*' <<<"$out")"; fi
run analyze -q --mode xprof examples/smdebug-zip
if [[ "$out" == *"  suggestion:"*"https://www.tensorflow.org/guide/data_performance_analysis"* ]] && [[ "$out" == *": 1 call, min"* ]] && [[ "$out" != *"<a "* ]]; then ok; else bad "xprof text suggestion: $out"; fi

# the capacity model's rule context: bursts behind a producer that keeps up
$TFD synth -o "$T/bursty" tests/synth/42-bursty-producer.json >/dev/null
run analyze -q -f json "$T/bursty"
if [[ "$out" == *'"rule": "TFD-P03"'* ]] && [[ "$out" == *'"step_limits_already": true'* ]]; then ok; else bad "bursty producer: no TFD-P03 or estimate"; fi
run analyze -q "$T/bursty"
# the host is input-bound, so the stage is its bottleneck in every format
# (JSON names it so), however well it keeps up on average
if [[ "$(unwrap <<<"$out")" == *"bottleneck: Map"*"the slowest stage, could deliver"*"on average the input pipeline keeps up"* ]] && [[ "$(unwrap <<<"$out")" == *"worth: ~1.0x: the pipeline already delivers faster than the step consumes"* ]]; then ok; else bad "bursty producer text: $(echo "$out" | head -4)"; fi
# a stage rule behind a producer that keeps up is demoted (demote_when), the burst advice leads
first=$(echo "$out" | grep -m1 '^  \[')
if [[ "$first" == *"[medium] TFD-P03"* ]] && [[ "$out" == *"[low] TFD-T01 Sequential map: one element"* ]]; then ok; else bad "bursty producer: stage rule not demoted: $(echo "$out" | grep '^  \[')"; fi
# source-bound behind a parallel map: parallel reads, with the capacity estimate
$TFD synth -o "$T/class1" tests/synth/24-source-behind-pmap.json >/dev/null
run analyze -q "$T/class1"
if [[ "$out" == *"bottleneck: TFRecord"*"limits throughput"* ]] && [[ "$out" == *"TFD-S01"* ]] && [[ "$out" == *"latency view: ParallelMapV2"* ]] && [[ "$out" == *"worth: 4.00x throughput"* ]]; then ok; else bad "class 1 text: $(echo "$out" | head -6)"; fi

# a Chrome trace holds each thread's events by start, as TensorBoard writes
# them (so the synth does); the same events in reverse order, each thread's
# to be sorted by the reader, give the same report
printf '{"name": "ord", "expect": "Map", "formats": ["json"], "steps": 40, "step_compute_us": 200, "stages": [{"kind": "TFRecord", "cost_us": 4}, {"kind": "Map", "cost_us": 120}, {"kind": "Batch", "batch_size": 4, "cost_us": 4}, {"kind": "Prefetch"}]}\n' >"$T/ord.json"
$TFD synth -q -o "$T/ord" "$T/ord.json"
ordf=$(ls "$T"/ord/plugins/profile/*/*.trace.json)
if awk -F'"tid":|,"ts":|,"dur":' '/"ph":"X"/ { if ($3 + 0 < last[$2]) bad = 1; last[$2] = $3 + 0 } END { exit bad }' "$ordf"; then ok; else bad "synth trace not in start order per thread"; fi
mkdir -p "$T/ord-rev"
awk '/"ph":"X"/ { x[n++] = $0; next } { if (n) for (i = n - 1; i >= 0; i--) print x[i]; n = 0; print }' "$ordf" >"$T/ord-rev/worker-0.trace.json"
$TFD analyze -q -f json -o "$T/ord-a.json" "$ordf" && $TFD analyze -q -f json -o "$T/ord-b.json" "$T/ord-rev/worker-0.trace.json"
if [ "$(awk '/"ph":"X"/' "$T/ord-rev/worker-0.trace.json" | head -1 | grep -o '"ts":[0-9.]*')" != "$(awk '/"ph":"X"/' "$ordf" | head -1 | grep -o '"ts":[0-9.]*')" ] &&
	diff <(grep -v '"file":' "$T/ord-a.json") <(grep -v '"file":' "$T/ord-b.json") >/dev/null; then ok; else bad "a reversed Chrome trace reads differently"; fi

# ---- huge pages (asked for with TFDOCTOR_HUGEPAGES_MIN_MB): the reading
# commands start again with glibc's hugetlb tunable; their children get the
# caller's environment back -----------------------------------------------------
if [ -z "${VALGRIND:-}" ] && [ -r /proc/self/environ ] && ! nm -C "$TFD" 2>/dev/null | grep -q __asan_init; then
	$TFD synth -q -o "$T/hp" tests/synth/16-multi-host-slow-worker.json
	# off unless asked for
	$TFD watch -q --once --existing --settle 0 --exec \
		"tr '\\0' '\\n' </proc/\$PPID/environ | grep -c '^GLIBC_TUNABLES=' >$T/hp.def" "$T/hp" >/dev/null 2>&1
	if [ "$(cat "$T/hp.def" 2>/dev/null)" = 0 ]; then ok; else bad "huge pages on without TFDOCTOR_HUGEPAGES_MIN_MB"; fi
	TFDOCTOR_HUGEPAGES_MIN_MB=0 $TFD watch -q --once --existing --settle 0 --exec \
		"tr '\\0' '\\n' </proc/\$PPID/environ | grep -c '^GLIBC_TUNABLES=glibc.malloc.hugetlb=1' >$T/hp.self; echo \"\${GLIBC_TUNABLES-unset}\" >$T/hp.child" \
		"$T/hp" >/dev/null 2>&1
	if [ "$(cat "$T/hp.self" 2>/dev/null)" = 1 ] && [ "$(cat "$T/hp.child" 2>/dev/null)" = unset ]; then ok; else bad "hugetlb re-exec: self=$(cat "$T/hp.self" 2>/dev/null) child=$(cat "$T/hp.child" 2>/dev/null)"; fi
	TFDOCTOR_HUGEPAGES_MIN_MB=0 TFDOCTOR_NO_HUGEPAGES=1 $TFD watch -q --once --existing --settle 0 --exec \
		"tr '\\0' '\\n' </proc/\$PPID/environ | grep -c '^GLIBC_TUNABLES=' >$T/hp.off" "$T/hp" >/dev/null 2>&1
	if [ "$(cat "$T/hp.off" 2>/dev/null)" = 0 ]; then ok; else bad "TFDOCTOR_NO_HUGEPAGES ignored"; fi
	TFDOCTOR_HUGEPAGES_MIN_MB=0 GLIBC_TUNABLES=glibc.malloc.tcache_count=5 $TFD watch -q --once --existing --settle 0 --exec \
		"echo \"\$GLIBC_TUNABLES\" >$T/hp.keep" "$T/hp" >/dev/null 2>&1
	if [ "$(cat "$T/hp.keep" 2>/dev/null)" = glibc.malloc.tcache_count=5 ]; then ok; else bad "caller's GLIBC_TUNABLES not restored: $(cat "$T/hp.keep")"; fi
	# analyze starts again only when asked, for a capture file of the
	# size asked or more: one exec by default and for a small capture,
	# two past the size
	if command -v strace >/dev/null; then
		strace -f -qq -e trace=execve -o "$T/hp.st1" $TFD analyze -q -o - "$T/hp" >/dev/null 2>&1
		TFDOCTOR_HUGEPAGES_MIN_MB=0 strace -f -qq -e trace=execve -o "$T/hp.st2" \
			$TFD analyze -q -o - "$T/hp" >/dev/null 2>&1
		TFDOCTOR_HUGEPAGES_MIN_MB=512 strace -f -qq -e trace=execve -o "$T/hp.st3" \
			$TFD analyze -q -o - "$T/hp" >/dev/null 2>&1
		n1=$(grep -c 'execve(' "$T/hp.st1"); n2=$(grep -c 'execve(' "$T/hp.st2"); n3=$(grep -c 'execve(' "$T/hp.st3")
		if [ "$n1" = 1 ] && [ "$n2" = 2 ] && [ "$n3" = 1 ]; then ok; else bad "huge pages by size: $n1, $n2 and $n3 execs, want 1, 2 and 1"; fi
	fi
fi

# one consistent story on every real capture (issue 33): no pipeline advice
# above low on a host that is not input-bound, findings ordered by gain,
# "bottleneck" only where the host waits on input
for cap in $CAPS/tda-mnist-linear-tf20/local.trace $CAPS/tfprof-demo-gpu-multi-worker/*.xplane.pb \
	examples/ai-notebook/ai-notebook.xplane.pb examples/ai-notebook/ai-notebook.trace.json.gz \
	examples/smdebug-8gpu/*.trace.json examples/smdebug-zip/*.trace.json.gz; do
	$TFD analyze -q -f json "$cap" >"$T/c.json" 2>/dev/null
	$TFD analyze -q "$cap" >"$T/c.txt" 2>/dev/null
	if python3 tests/synth/consistent.py "$T/c.json" "$T/c.txt" >"$T/cons"; then ok; else bad "$cap: $(head -2 "$T/cons" | tr '\n' ';')"; fi
done
run analyze -q --fail-on severity=medium $CAPS/tda-mnist-linear-tf20/local.trace
if [ "$rc" -eq 0 ] && [[ "$out" == *"NOT input-bound"* ]] && [[ "$out" == *"slowest stage: ShuffleAndRepeat"* ]] &&
	[[ "$out" != *"TFD-T09"* ]]; then ok; else bad "not input-bound TF 2.0 capture: --fail-on severity=medium exit $rc"; fi
# findings by estimated gain: the 1.28x prefetch (medium) before the 1.18x
# map change (high), in text, JSON, HTML and Markdown alike
S8=$(ls examples/smdebug-8gpu/*.trace.json)
run analyze -q "$S8"
if [[ "$out" == *"findings (largest estimated gain first)"* ]] && [ "$(grep -o 'TFD-[A-Z][0-9]*' <<<"$out" | head -2 | tr '\n' ' ')" = "TFD-P01 TFD-T01 " ]; then ok; else bad "text findings order: $(grep -o 'TFD-[A-Z][0-9]*' <<<"$out" | tr '\n' ' ')"; fi
run analyze -q -f json "$S8"
if [ "$(grep -o '"rule": "TFD-[A-Z][0-9]*' <<<"$out" | head -2 | cut -d'"' -f4 | tr '\n' ' ')" = "TFD-P01 TFD-T01 " ]; then ok; else bad "JSON findings order"; fi
for fmt in html md; do
	run report -q -f $fmt examples/smdebug-8gpu
	first=$(grep -o 'TFD-[A-Z][0-9]*' <<<"$out" | awk '!seen[$0]++' | head -2 | tr '\n' ' ')
	# the report carries the verdict's and the bottleneck's confidence, the
	# evidence, the code and the worth
	if [ "$first" = "TFD-P01 TFD-T01 " ] && grep -qi 'confidence.*verdict\|verdict.*confidence' <<<"$out" &&
		grep -q 'ds = ds.prefetch(tf.data.AUTOTUNE)' <<<"$out" && grep -q 'Worth: ~1.28x step time (root call 13.039 ms -\(>\|&gt;\) hidden behind' <<<"$out" &&
		grep -qi 'evidence\|blocking time' <<<"$out"; then ok; else bad "report -f $fmt: order '$first', confidence, code or worth missing"; fi
done
# no final-prefetch finding when the last stage is asynchronous (SMDebug's
# Iterator::Model::ParallelMap): its workers already run ahead of the step
run analyze -q -f json examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz
if [ "$(grep -o '"rule": "TFD-[A-Z][0-9]*' <<<"$out" | cut -d'"' -f4 | tr '\n' ' ')" = "TFD-T04 " ]; then ok; else bad "async last stage: $(grep -o '"rule": "TFD-[A-Z][0-9]*' <<<"$out" | tr '\n' ' ')"; fi
# the same on a real TensorFlow 2.21 job: records read from a slow disk,
# batched, parsed with a parallel map at the end, no prefetch (TensorFlow
# injects none after an asynchronous last stage). A final prefetch measured
# 1.6 % (noise), halving the reads 35 %: the reads are named, no P01. The
# reads are a sleeping numpy_function on one worker: whether Python holds
# the GIL one call at a time cannot show, so the finding is F05 (try
# parallel calls first: on the catalog's sleeping numpy_function map they
# measured 1.76x, a parallel interleave of such reads 1.92x), not F01's
# "more workers gain nothing"
run analyze -q -f json tests/cases/ok/tf221-async-last-no-prefetch/vm.xplane.pb
if [[ "$out" != *'"TFD-P01"'* ]] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::ParallelMapV2::MapAndBatch"'* ]] &&
	[[ "$out" == *'"TFD-F05"'* ]] && [[ "$out" != *'"TFD-F01"'* ]]; then ok; else bad "real async last stage: $(grep -o '"rule": "TFD-[A-Z][0-9]*' <<<"$out" | tr '\n' ' ')"; fi
run analyze -q tests/cases/ok/tf221-async-last-no-prefetch/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"the 1 MapAndBatch worker runs PyFunc (Python), one call at a time (busy 87%)."* ]] &&
	[[ "$(unwrap <<<"$out")" == *"1 worker: PyFunc (Python) takes 100% of the function, one call at a time."* ]] &&
	[[ "$out" != *"holds the Python GIL"* ]]; then ok; else bad "one Python worker said to hold the GIL: $(grep -A2 evidence <<<"$out")"; fi
# ordered output stalls a parallel map only when its elements' costs are
# uneven (real TF 2.21 jobs): one element in 64 costing 40 ms holds 61 % of
# the map's work in calls over 4x the median, and deterministic=False
# measured 1.26x (T05); even matmul elements on a busy host keep 7 % there
# and it measured 0.96-1.06x (no T05); 2-us elements measured 0.68x
run analyze -q -f json tests/cases/ok/tf221-bursty-uneven-elements/vm.xplane.pb
if [[ "$out" == *'"rule": "TFD-T05"'* ]] && python3 -c '
import json, sys
s = [s for s in json.loads(sys.argv[1])["hosts"][0]["pipelines"][0]["stages"] if s["name"] == "ParallelMapV2"][0]
sys.exit(not (s["function_uneven_share"] >= 0.5 and s["function_call_p50_ns"] > 50000))' "$out"; then ok; else bad "uneven elements: no T05 or no share"; fi
# reads under a parallel interleave that reads one file at a time (real TF
# 2.21 jobs, GZIP records): num_parallel_reads=AUTOTUNE kept its
# cycle_length at 1 (S07: AUTOTUNE left it there; a cycle_length of 8 with
# num_parallel_calls=AUTOTUNE measured 1.52x), num_parallel_reads=1 (S08);
# S02's "already read in parallel" only with four files read at once
rules_of() { grep -o '"rule": "TFD-[A-Z][0-9]*' <<<"$out" | cut -d'"' -f4 | tr '\n' ' '; }
run analyze -q -f json tests/cases/ok/tf221-gzip-autotune-reads/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S07 " ] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::MapAndBatch::ForeverRepeat[3]::ParallelInterleaveV4[0]::TFRecord"'* ]]; then ok; else bad "AUTOTUNE reads at one file: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-gzip-autotune-reads/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"AUTOTUNE left the interleave reading one file at a time"* ]] &&
	[[ "$out" == *"cycle_length=8,"* ]] && [[ "$out" != *"already read in parallel"* ]]; then ok; else bad "AUTOTUNE reads text: $(grep -A3 findings <<<"$out")"; fi
run analyze -q -f json tests/cases/ok/tf221-gzip-one-read/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S08 " ]; then ok; else bad "one read at a time: $(rules_of)"; fi
run analyze -q -f json tests/cases/ok/tf221-gzip-four-reads/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S02 " ]; then ok; else bad "four reads at once: $(rules_of)"; fi
# a parallel map at its limit: vectorizing pays for tiny calls (T17: real
# 2-us calls, batching first measured 5.66x), not for calls of real work
# (T04: the catalog's image augmentation batched measured 5.5x slower);
# augmentation spread over several image ops (none 40 % alone) is F03's,
# whose advice is to resize once (measured 2.5x), not to batch
run analyze -q -f json tests/cases/ok/tf221-tiny-elements/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T17 " ] && [[ "$out" == *'ds = ds.batch(B).map(f_on_batch'* ]] &&
	[[ "$out" == *'"model": "vectorize"'* ]] && [[ "$out" == *'"step_speedup": 1.6'* ]]; then ok; else bad "tiny calls: $(rules_of)"; fi
# a map that keeps up but keeps 0.94 of the 2 cores busy while the step
# computes on them (no device): not input-bound by the wait, and H07, not
# H01, says what it costs (halving the map's work measured 1.10x)
run analyze -q -f json tests/cases/ok/tf221-cpu-shared-keeps-up/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H07 " ] && [[ "$out" == *'"model": "free_cpu"'* ]] &&
	[[ "$out" == *'"step_speedup": 1.1'* ]]; then ok; else bad "cpu shared: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-cpu-shared-keeps-up/vm.xplane.pb
u=$(unwrap <<<"$out")
if [[ "$u" == *'pipeline keeps 0.94 of its 2 cores busy'* ]] && [[ "$u" != *'does not hold training back'* ]] &&
	[[ "$u" == *"with the pipeline's CPU work / 2"* ]]; then ok; else bad "cpu shared: verdict line"; fi
# Dataset.load() -> an AUTOTUNE map (fused with batch) -> prefetch(2) on 2
# cores allowing 0.96 of what the step takes: every stage could deliver
# more with the cores to itself, but the waits are no bursts (a larger
# prefetch and out-of-order results measured nothing, the map's work halved
# 1.33x): T04 at full severity, no P03, and the cores said to limit
run analyze -q -f json tests/cases/ok/tf221-load-map-edge-of-cores/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 " ] && [[ "$(tr -d ' \n' <<<"$out")" == *'"severity":"high"'* ]]; then ok; else bad "cores at the edge: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-load-map-edge-of-cores/vm.xplane.pb
u=$(unwrap <<<"$out")
if [[ "$u" == *"the host's 2 cores are the limit"* ]] && [[ "$u" != *"keeps up"* ]]; then ok; else bad "cores at the edge: verdict"; fi
# snapshot() in its first run, on 2 cores: the writer's thread limits (the
# snapshot read back measured 1.99x, T20's estimate of the writer and the
# stages below it gone 2.03x). snapshot() adds a projection map TensorFlow
# never runs (it only passes its input through): no run of it in the
# capture is no work, not work the capture missed, so it is not the
# inferred limit it was
run analyze -q -f json tests/cases/ok/tf221-snapshot-first-run/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T20 " ] && [[ "$(tr -d ' \n' <<<"$out")" == *'"bottleneck":"SnapshotWriter"'* ]] &&
	[[ "$(tr -d ' \n' <<<"$out")" == *'"of":"subtree"'* ]] && [[ "$(tr -d ' \n' <<<"$out")" == *'"inferred":false'* ]] &&
	[[ "$out" == *'"step_speedup": 2.0'* ]]; then ok; else bad "snapshot writing: $(rules_of)"; fi
# shard(4, 0) after an AUTOTUNE map on 2 cores: the map runs for every
# record, the shard keeps one in four (it skips the other three in one call
# of its input, so the map's calls say two where its function ran four
# times). T21 leads (sharding the file list measured 2.70x; the estimate
# of the work below the shard done for a quarter of the elements 1.75x),
# T04 after it (the map's work halved measured 1.44x, 1.48x estimated)
run analyze -q -f json tests/cases/ok/tf221-shard-after-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T21 TFD-T04 " ] && [[ "$(tr -d ' \n' <<<"$out")" == *'"of":"dropped"'* ]] &&
	[[ "$out" == *'"step_speedup": 1.7'* ]]; then ok; else bad "shard late: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-shard-after-map/vm.xplane.pb
u=$(unwrap <<<"$out")
if [[ "$u" == *"below Shard run for the 1 element in 4.0 it keeps"* ]]; then ok; else bad "shard late: text"; fi
# the shard on the batches of a fused MapAndBatch (as DATA auto-sharding
# puts it): the elements the shard drops are its function's runs over the
# batch size, about 4 a batch kept (the file list sharded measured 1.88x,
# T21 says 1.55x)
run analyze -q -f json tests/cases/ok/tf221-shard-after-batch/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T21 TFD-T04 " ] && [[ "$out" == *'"factor": 3.8'* ]]; then ok; else bad "shard on batches: $(rules_of)"; fi
# a lighter map that keeps up: the steps barely wait, but the work the
# shard throws away runs on the step's cores; H08 (the pipeline's CPU below
# the shard kept for one element in four) leads H07 (its CPU halved):
# measured 1.50x and 1.32x, estimated 1.29x and 1.18x
run analyze -q tests/cases/ok/tf221-shard-after-batch-keeps-up/vm.xplane.pb
u=$(unwrap <<<"$out")
if [[ "$u" == *"[medium] TFD-H08 A late shard() spends the step's cores on elements it drops"*"[medium] TFD-H07"* ]] &&
	[[ "$u" == *"1.29x step time with the pipeline's CPU work / 3.79"* ]]; then ok; else bad "late shard keeps up: $(grep TFD- <<<"$out")"; fi
# the shard right above a parallel interleave of per-file maps: the
# interleave's own calls say 2 for each element kept (GetNext and the Skip
# of the other three), its inner datasets 4; T21 2.73x (measured 2.66x);
# the map runs in the interleave's parallel inputs (T25 beside T01)
run analyze -q -f json tests/cases/ok/tf221-shard-after-interleave/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T21 TFD-T25 TFD-T01 " ] && [[ "$out" == *'"factor": 4'* ]] &&
	[[ "$out" == *'"step_speedup": 2.7'* ]]; then ok; else bad "shard after interleave: $(rules_of)"; fi
# a profile started in a running job: the first 4 steps wait 33 %, the
# rest 3.7 %, and no parameter AUTOTUNE sets moved over the capture. Such a
# ramp no longer lowers the verdict's band (it said NOT, 3.6 %): TensorFlow's
# convention, MODERATELY (6.8 %, xprof 6.7 %; the clock 9.5 %)
run analyze -q tests/cases/ok/tf221-profile-start-waits/vm.xplane.pb
u=$(unwrap <<<"$out")
if [[ "$u" == "verdict: MODERATELY input-bound: 6.8%"* ]] && [[ "$u" == *"ramp: the first 4 steps waited 32.7%"*"no parameter AUTOTUNE sets changed over the capture, so the verdict keeps them"* ]]; then ok; else bad "profile start: $(head -3 <<<"$out")"; fi
# a filter keeping one element in four above an AUTOTUNE map: the filter
# calls its input for every element it drops (3.8 made per element kept);
# T22 (filter first: 2.17x measured, 1.77x estimated) leads T04 (the map's
# work halved: 1.40x measured, 1.42x estimated)
run analyze -q -f json tests/cases/ok/tf221-filter-after-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T22 TFD-T04 " ] && [[ "$out" == *'"factor": 3.'* ]] &&
	[[ "$(tr -d ' \n' <<<"$out")" == *'"class":"filter_late","severity":"medium"'* ]]; then ok; else bad "filter late: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-filter-after-map/vm.xplane.pb
u=$(unwrap <<<"$out")
if [[ "$u" == *"with the stages below Filter run for the 1 element in 3."*" it keeps"* ]]; then ok; else bad "filter late: text"; fi
# cache() of the raw records below an AUTOTUNE map with no random op seen:
# T23 (cache after the map: 3.09x measured, 3.09x estimated) leads T04; the
# same map with a traced RandomUniform gets no T23 (its result changes
# each epoch: a cache after it would freeze the augmentation)
run analyze -q -f json tests/cases/ok/tf221-cache-before-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T23 TFD-T04 " ] && [[ "$out" == *'"step_speedup": 3.0'* ]]; then ok; else bad "cache early: $(rules_of)"; fi
run analyze -q -f json tests/cases/ok/tf221-cache-before-random-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 " ]; then ok; else bad "cache early, random map: $(rules_of)"; fi
# the same job with no step markers: the share is over the span the input
# was read, each root element a step; H07's estimate is the same ratio, its
# times per root element (measured 1.18x, the estimate 1.13x; it had none)
run analyze -q -f json tests/cases/ok/tf221-cpu-shared-no-markers/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H07 " ] && [[ "$out" == *'"model": "free_cpu"'* ]] &&
	[[ "$out" == *'"input_basis": "capture span"'* ]] &&
	[[ "$(tr -d ' \n' <<<"$out")" == *'"known":true,"basis":"steps"'* ]] &&
	[[ "$out" == *'"step_speedup": 1.12'* ]]; then ok; else bad "cpu shared, no markers: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-cpu-shared-no-markers/vm.xplane.pb
u=$(unwrap <<<"$out")
if [[ "$u" == *"with the pipeline's CPU work / 2 ("*" per root element)"* ]]; then ok; else bad "cpu shared, no markers: worth line"; fi
# no step markers: a prefetch's overlap is worth what the consumer's own time
# per element hides (the guide's generator and 10-ms sleeping step: 1.40x
# measured, the estimate 1.40x); it had no estimate without steps
run analyze -q -f json tests/cases/ok/tf221-guide-generator-no-markers/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S03 TFD-P01 " ] && [[ "$(tr -d ' \n' <<<"$out")" == *'"model":"overlap","known":true'* ]] &&
	[[ "$out" == *'"step_speedup": 1.39'* ]]; then ok; else bad "overlap without markers: $(rules_of)"; fi
# a sequential map over a generator on the consumer's thread: made
# parallel, it runs apart and its input on a reader thread of its own, so
# the generator overlaps the rest (measured 2.16x; 1.52x had counted the
# generator in series still); a final prefetch 1.18x (measured 1.19x)
run analyze -q -f json tests/cases/ok/tf221-guide-sequential-py-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T01 TFD-P01 " ] && [[ "$out" == *'"step_speedup": 2,'* ]] &&
	[[ "$out" == *'"step_speedup": 1.18'* ]]; then ok; else bad "sequential map over a generator: $(rules_of)"; fi
# one core: the AUTOTUNE map stays at one worker, the core is the limit;
# T04 (make the work cheaper) fires, where no rule had (it needed more than
# one worker; halving the work measured 1.16x)
run analyze -q -f json tests/cases/ok/tf221-autotune-one-core/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 " ] && [[ "$out" == *'"step_speedup": 1.2'* ]]; then ok; else bad "one core: $(rules_of)"; fi
# a tf.data service client: its own map measured far above the rate seen,
# the DataService stage blocking most: the service is the client's limit
# (S06), not the map (T17 had said to vectorize it)
run analyze -q -f json tests/cases/ok/tf221-data-service-local/vm.xplane.pb
if [[ "$(rules_of)" == *"TFD-S06"* ]] && [[ "$(rules_of)" != *"TFD-T17"* ]] &&
	[[ "$(rules_of)" != *"TFD-P03"* ]]; then ok; else bad "data service client: $(rules_of)"; fi
run analyze -q -f json tests/cases/ok/tf221-augment-per-image/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 TFD-F03 " ] && [[ "$out" != *'ds.batch(B).map('* ]] &&
	[[ "$out" == *'tf.image.resize(im, (H, W))'* ]]; then ok; else bad "image augmentation: $(rules_of)"; fi
# `.prefetch(2).repeat()` last with TensorFlow's prefetch injection off (as
# before TF 2.13 injected one): the prefetch under the repeat serves the
# step, no TFD-P01
run analyze -q -f json tests/cases/ok/tf221-prefetch-under-repeat/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T15 " ] && [[ "$out" == *'"long_name": "Iterator::Root::ForeverRepeat[0]::Prefetch"'* ]]; then ok; else bad "prefetch under repeat: $(rules_of)"; fi
# a Keras PyDataset computing in Python (real TF 2.21): its generator holds
# the GIL the training loop needs, so the producer's headroom over the
# step's demand is no headroom: S03 leads at full severity, no P03 (bursts);
# it says processes for a loader that computes in Python (threads measured
# 2.2x slower on such a loader, use_multiprocessing=True with 2 workers
# 1.74x faster)
run analyze -q -f json tests/cases/ok/tf221-keras3-pydataset-python/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S03 " ] && [[ "$out" == *'"severity": "high"'* ]] &&
	[[ "$out" == *'workers=2, use_multiprocessing=True'* ]]; then ok; else bad "PyDataset in Python: $(rules_of)"; fi
# a Keras PyDataset over three epochs (real TF 2.21): fit makes a new
# iterator each epoch, and the second epoch's generator iterator had the
# first's id under another FlatMap. Each pipeline keeps its own generator
# (the second had none, its FlatMap was the bottleneck, with T02's advice);
# the new iterators are said the PyDataset's way (H11: no end and
# steps_per_epoch, measured 1.16x an epoch), not with ds.repeat() (H05)
run analyze -q -f json tests/cases/ok/tf221-keras3-pydataset-epochs/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S03 TFD-H11 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin)
ps = d["hosts"][0]["pipelines"]
assert len(ps) == 3, len(ps)
for p in ps:
    g = [s for s in p["stages"] if s["family"] == "Generator"]
    assert len(g) == 1 and 10 <= g[0]["calls"] <= 40, (p["name"], [(s["name"], s["calls"]) for s in p["stages"]])
assert [p for p in ps if p["name"] == d["hosts"][0]["focus_pipeline"]][0]["bottleneck"]["name"] == "Generator"
f = [f for f in d["findings"] if f["rule"] == "TFD-H11"][0]
assert "steps_per_epoch=n" in f["code"] and "return None" in f["code"], f["code"]' <<<"$out"; then ok; else bad "PyDataset over epochs: $(rules_of) $(head -c 300 <<<"$out")"; fi
# a Keras PyDataset with two worker processes (real TF 2.21): Keras turns
# tf.data's prefetch off and the generator waits for the workers, so no
# "add a prefetch" (P01 had led at 1.68x; a prefetch measured no gain) and
# S09 instead of S03: the workers' batches are the limit (halving
# __getitem__ measured 1.7x)
run analyze -q -f json tests/cases/ok/tf221-keras3-pydataset-processes/vm.xplane.pb
if [[ "$(rules_of)" == *"TFD-S09 "* ]] && [[ "$(rules_of)" != *"TFD-P01"* ]] && [[ "$(rules_of)" != *"TFD-S03"* ]]; then ok; else bad "PyDataset with processes: $(rules_of)"; fi
# its epoch ends (Keras stops the workers, waiting 0.1 s for their queue,
# and starts them again) are half the time from the first step to the
# last: TFD-H12 leads (estimate 1.62x; 96-step epochs over the endless
# PyDataset measured 1.94x)
if [ "$(rules_of | cut -d' ' -f1)" = "TFD-H12" ]; then ok; else bad "PyDataset with processes, the epoch ends: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-keras3-pydataset-processes/vm.xplane.pb
if unwrap <<<"$out" | grep -q "In them: making iterators [0-9]*%, the loop's own work (callbacks, checkpoints, Python) [0-9]*%."; then ok; else bad "PyDataset with processes, in the stretches: $(grep -A4 'between the steps' <<<"$out")"; fi
# Keras fit with a validation set over 20-step epochs (real TF 2.21): the
# steps wait 2 %, the validation passes and epoch ends between them take
# 48 % of the time; TFD-H12 (epochs four times longer measured 1.72x)
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-validation-epochs/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["between_steps"] == 2 and 0.4 < h["between_steps_ns"] / h["steps_span_ns"] < 0.56, h
assert h["between_steps_pass_ns"] > 0.75 * h["between_steps_ns"], h  # the validation passes
f = d["findings"][0]
assert f["rule"] == "TFD-H12" and 1.35 < f["estimate"]["step_speedup"] < 2.1, f' <<<"$out"; then ok; else bad "Keras validation over short epochs: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-keras3-fit-validation-epochs/vm.xplane.pb
if unwrap <<<"$out" | grep -q "between the steps: 2 long stretches ([0-9.]* ms on average) took [0-9.]*% of the time from the first step to the last; the share counts the steps' time alone. In them: passes over pipelines read only there (a validation pass, an evaluation) [0-9]*%, the loop's own work (callbacks, checkpoints, Python) [0-9]*%."; then ok; else bad "validation over short epochs, verdict: $(sed -n 1,8p <<<"$out")"; fi
if unwrap <<<"$out" | grep -q "worth: 1\.[0-9]*x the time a step with the stretches between the steps, 4 times rarer ([0-9.]* ms -> [0-9.]* ms per step)"; then ok; else bad "validation over short epochs, worth: $(grep -A1 'worth:' <<<"$out")"; fi
# Keras fit on NumPy arrays: the markers leave the input out, so the time
# to the next step (the epoch's new iterator made there) is step time in
# the share and H05's; no long stretch is left out of it
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-numpy-epochs
if [[ "$(rules_of)" != *"TFD-H12"* ]] && [[ "$out" == *'"between_steps": 0,'* ]]; then ok; else bad "Keras fit on NumPy arrays, between the steps: $(rules_of)"; fi
# Keras fit over a cache() that the first epoch fills and the later epochs
# read back (real TF 2.21, profiled over epochs 0-2): the 16 filling steps
# waited 82 %, the rest 4.4 %. The ramp counts (the verdict is the steady
# state, MODERATELY), and the first epoch's map gets no stage advice (T01
# had led at 1.76x; AUTOTUNE measured 1.23x on the first epoch, 1.09x over
# 6 epochs): T18 says it is the first epoch's cost
run analyze -q -f json tests/cases/ok/tf221-keras3-cache-first-epoch/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H05 TFD-T18 " ] && [[ "$out" == *'"input_bound": "moderately"'* ]]; then ok; else bad "cache filled in the first epoch: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-keras3-cache-first-epoch/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"that is the first epoch: it filled a cache that the later epochs read back, and its stages below the cache run no more (TFD-T18)."* ]] &&
	[[ "$(unwrap <<<"$out")" == *"the steady state leaves the ramp out (an AUTOTUNE ramp, buffers or a cache filling, an epoch boundary)"* ]]; then ok; else bad "cache filled in the first epoch, verdict: $(sed -n 1,12p <<<"$out")"; fi
# one iterator over cache().repeat() whose cache fills during the capture
# (real TF 2.21: 12 profiled steps fill it, 20 read it back; unprofiled 12.0
# ms a step while filling, 5.1 ms after, the step's own compute): the ramp
# counts (NOT input-bound, the steady state; TensorFlow's convention and
# xprof said MODERATELY 8.6 %), the verdict says the first steps filled the
# cache, and neither a burst (P03) nor the map's parallelism (T01) is
# advice; the map's work, which stops with the fill, is not the cores'
# share (no H07)
run analyze -q -f json tests/cases/ok/tf221-cache-fills-in-capture/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H03 TFD-H01 " ] && [[ "$out" == *'"input_bound": "not"'* ]]; then ok; else bad "cache filled within the capture: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-cache-fills-in-capture/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"the first steps filled a cache that the later ones read back: its stages below the cache ran no more after that."* ]]; then ok; else bad "cache filled within the capture, verdict: $(sed -n 1,24p <<<"$out")"; fi
# four Python generators interleaved, taking turns at the GIL (real TF
# 2.21): the profiled steps barely wait, but the Python holds a core the
# step computes on while it runs (unprofiled 12.9 ms a step; the generators'
# work halved 8.2 ms, 1.57x; their parallelism bought nothing): H07 fires
# from the Python's core (it had counted none: a Python wait holds no core,
# but Python taking turns computes) beside H04, and the verdict says both
run analyze -q -f json tests/cases/ok/tf221-generators-take-turns/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H07 TFD-H04 " ] && grep -qE '"speedup": 1\.(1[5-9]|2)' <<<"$out"; then ok; else bad "generators taking turns: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-generators-take-turns/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"the input pipeline keeps up, but it runs Python 100% of the time and holds the GIL the training loop needs (TFD-H04), and keeps 1 of its 2 cores busy, the cores the step computes on (TFD-H07); prefetch will not help."* ]]; then ok; else bad "generators taking turns, verdict: $(sed -n 1,12p <<<"$out")"; fi
# a numpy_function computing with the GIL let go (NumPy matmuls), 2 calls
# at once on 2 cores (real TF 2.21): side by side, but stretched as the
# cores are shared (unprofiled: 2 calls at once no faster than 1, the work
# halved 1.30x). No "Python that waits: more calls help past the cores"
# (F06, which sleeping reads earn): the profile cannot tell (F05)
run analyze -q -f json tests/cases/ok/tf221-numpy-matmul-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-F05 " ] && [[ "$out" == *'"python_calls": null'* ]]; then ok; else bad "NumPy matmuls in a numpy_function: $(rules_of)"; fi
run analyze -q -f json tests/cases/ok/tf221-python-waits-two-workers/vm.xplane.pb
if [[ "$(rules_of)" == *"TFD-F06"* ]] && [[ "$out" == *'"python_calls": "side_by_side"'* ]]; then ok; else bad "sleeping numpy_function, side by side: $(rules_of)"; fi
# one Python generator that sleeps (real TF 2.21; unprofiled 15.2 ms a
# step, 4 generators interleaved 8.5 ms): the generator is the bottleneck
# and S03 says that shards help a generator that waits
run analyze -q -f json tests/cases/ok/tf221-generator-sleeps/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S03 " ] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::BatchV2::FlatMap[0]::Generator"'* ]] &&
	[[ "$out" == *"4 shards of one sleeping 1.5 ms an element measured 1.79x"* ]]; then ok; else bad "a sleeping generator: $(rules_of)"; fi
# TensorFlow's iterator ids are addresses: in this Keras fit with
# validation_data, each epoch's training iterator was made at the address
# the last validation pass's had (the roots' `name` stat says which
# dataset). Each pass is its own pipeline: every validation pipeline is read
# between the steps, no training one is (they had been merged, 5 pipelines)
run analyze -q -f json tests/cases/ok/tf221-keras3-validation-address-reused/vm.xplane.pb
if python3 -c '
import json, sys
h = json.loads(sys.stdin.read())["hosts"][0]
ps = [(p["stages"][0]["params"]["name"], p["outside_steps"]) for p in h["pipelines"]]
assert len(ps) == 9, ps
assert all(out == (n == "PrefetchDataset:15") for n, out in ps), ps' <<<"$out"; then ok; else bad "an address reused by another dataset: $(grep -c '"root_id"' <<<"$out") pipelines"; fi
run analyze -q tests/cases/ok/tf221-keras3-validation-address-reused/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"passes over pipelines read only there (a validation pass, an evaluation) 12%"* ]]; then ok; else bad "validation passes between the steps: $(head -8 <<<"$out")"; fi
# TensorFlow 2.15 names the MultiDeviceIterator's per-device prefetch as
# any root (RootDataset:N, not device_prefetch): its threads tell that the
# generators under it are its own, not the user's (they had drawn TFD-S03 at
# 2.00x ahead of the sequential map; unprofiled the map parallel measured
# 1.66x)
run analyze -q -f json tests/cases/ok/tf215-mirrored-two-devices/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T15 " ] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::Rebatch::Prefetch::MapAndBatch"'* ]]; then ok; else bad "TF 2.15 MirroredStrategy: $(rules_of)"; fi
# TensorFlow 2.15 kept no event of a thread that ended before the profile
# stopped (Keras 2 fit's iterator, made each epoch): its ParallelMapV2 made
# 10 elements for the 21 the Prefetch above it gave, and the sequential map
# below looked busy 16 %. The bottleneck's confidence says so
run analyze -q -f json tests/cases/ok/tf215-keras2-fit-events-lost/vm.xplane.pb
if [[ "$out" == *'"reasons": ['*'"ParallelMapV2 made 10 elements for the 21 Prefetch took: its threads'"'"' events were lost'* ]]; then ok; else bad "events lost: $(grep -m1 -A2 '"reasons"' <<<"$out")"; fi
# a filter's predicate whose ops ran on the pool the map's workers kept
# busy: its runs waited 269 of their 272 ms for a thread (TensorFlow 2.12),
# which made the filter look busier than the map (T08 1.00x named it);
# unprofiled, filtering first measured 2.42x, the map halved 1.47x
run analyze -q -f json tests/cases/ok/tf212-filter-after-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T22 TFD-T04 " ] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::MapAndBatch::Filter::ParallelMapV2"'* ]]; then ok; else bad "a predicate queued on the map's pool: $(rules_of)"; fi
# filter_parallelization on a stateless predicate of 0.8 ms: TensorFlow
# runs it as ParallelFilter (AUTOTUNE, 2 workers), the slowest stage with
# the cores the limit; it had only T99 (no rule of its own). T26, the
# predicate's work halved: 1.41x, measured 1.65x (5.72 -> 3.47 ms a step)
run analyze -q -f json tests/cases/ok/tf221-parallel-filter/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T26 " ] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::BatchV2::ParallelFilter"'* ]] &&
	python3 -c 'import json, sys; e = json.load(sys.stdin)["findings"][0]["estimate"]
assert e["model"] == "scale" and 1.25 < e["step_speedup"] < 2.0, e' <<<"$out"; then ok; else bad "a parallel filter at its limit: $(rules_of)"; fi
# Dataset.load of 256-KB elements saved with GZIP, one shard: reading them
# (SnapshotDatasetReader/_0, decompressing) is the bottleneck with the
# cores the limit; it drew only T99. S10: cache after load or save them
# uncompressed (measured 8.39 -> 3.11 ms a step, 2.70x; remove estimates
# 1.73x: the step's compute the model frees falls short of the real one)
run analyze -q -f json tests/cases/ok/tf221-load-gzip-reads/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S10 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); f = d["findings"][0]
assert f["stage"] == "SnapshotDatasetReader" and f["estimate"]["model"] == "remove", f
st = [s for s in d["hosts"][0]["pipelines"][0]["stages"] if s["name"] == "SnapshotDatasetReader"]
assert st and st[0]["family"] == "SnapshotDatasetReader", st
assert st[0]["long_name"].endswith("::SnapshotDatasetReader/_0"), st
assert 1.4 < f["estimate"]["step_speedup"] < 3.0, f["estimate"]' <<<"$out"; then ok; else bad "reading a saved dataset: $(rules_of)"; fi
# TensorFlow 1 graph mode: a Session.run loop over make_one_shot_iterator
# (no step markers); each SessionRun is a step, as xprof's trace viewer
# groups them (it said: no step markers, the capture span, low
# confidence). Measured: 8.15 ms a step, 4.58 with a free input; the map
# in parallel (T15, estimated 1.19x) 7.46 ms (1.09x)
run analyze -q -f json tests/cases/ok/tf221-session-run-steps/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T15 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 28 and h["input_basis"] == "steps" and h["confidence"]["level"] == "high", h
assert h["input_bound"] == "highly", h["input_percent"]
assert any("SessionRun" in n["message"] for n in d["notes"]), d["notes"]' <<<"$out"; then ok; else bad "a Session.run loop's steps: $(head -c 300 <<<"$out")"; fi
# TensorFlow 1 graph mode, iterator.initializer run each epoch: the
# initializer builds the dataset again (PrefetchDataset:N, a new N each
# epoch), so the three epochs' pipelines share no name; of one shape, read
# one after another, they are one dataset made anew. H05 leads (it said
# T04, no H05); estimate (epoch_starts) 1.85x, measured 7.69 -> 3.32 ms a
# run with one iterator over the repeated dataset (2.32x)
run analyze -q -f json tests/cases/ok/tf221-session-initializer-each-epoch/vm.xplane.pb
if [ "$(rules_of | cut -d' ' -f1)" = "TFD-H05" ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert sorted(p["repeats"] or "" for p in h["pipelines"]) == ["", h["focus_pipeline"], h["focus_pipeline"]], h["pipelines"]
assert h["between_steps"] >= 1 and h["between_steps_session_ns"] > 0.9 * h["between_steps_ns"], h
e = d["findings"][0]["estimate"]
assert e["model"] == "epoch_starts" and 1.5 < e["step_speedup"] < 2.6, e' <<<"$out"; then ok; else bad "an initializer each epoch: $(rules_of)"; fi
# ... and H12 names the initializer among the stretches' causes, and the
# one-shot iterator over the repeated dataset among the remedies
run analyze -q tests/cases/ok/tf221-session-initializer-each-epoch/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"a TensorFlow 1 loop that runs its iterator.initializer each epoch spends it building the dataset again"*"a one-shot iterator over ds.repeat()"* ]]; then ok; else bad "H12 on an initializer each epoch: $(grep -A12 TFD-H12 <<<"$out")"; fi
# Keras 2 fit under disable_eager_execution (TensorFlow 2.15) with
# validation_data: every batch is a Session.run, the validation's too; a
# validation dataset made each epoch is read in runs of its own, never
# beside the training one, between the training's runs: those 30 runs are
# no steps (as eager Keras 2's "test" markers are not), the passes between
# the steps (H12), the pipelines outside them, no advice of their own (its
# tiny map's T17 vectorize had led, at 2.18x). T15 on the training map:
# 1.69x (1.58x when the validation runs were steps), measured 8.16 -> 4.73
# ms a training step with it AUTOTUNE (1.73x)
run analyze -q -f json tests/cases/ok/tf215-keras2-graph-fit-validation/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T15 TFD-H12 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert d["findings"][0]["pipeline"] == h["focus_pipeline"] == "Host:0", h["focus_pipeline"]
assert h["steps"] == 63 and h["between_steps"] == 3, h
assert any("30 session runs of an evaluation" in n["message"] for n in d["notes"]), d["notes"]
assert [p["outside_steps"] for p in h["pipelines"]] == [False, True, True, True], h["pipelines"]' <<<"$out"; then ok; else bad "Keras 2 graph fit with validation: $(rules_of)"; fi
# ... and the long stretches' parts add up: the validation pass's own
# session runs that read no input (its iterator's initializer) count as
# the pass, not twice
run analyze -q tests/cases/ok/tf215-keras2-graph-fit-validation/vm.xplane.pb
if python3 -c 'import re, sys; t = " ".join(sys.stdin.read().split()); m = re.search(r"In them: (.*?)\.", t)
parts = [int(x) for x in re.findall(r"(\d+)%", m.group(1))]
assert 98 <= sum(parts) <= 102, parts' <<<"$out"; then ok; else bad "the stretches' parts: $(grep -A5 'between the steps' <<<"$out")"; fi
# Keras 2 eager fit with validation_data under the TensorBoard callback:
# it marks the validation batches "test" (_r=1) beside the training ones
# "train"; xprof counts both (67.5 % over 67 steps) and the validation
# pipeline (a parallel map, a shuffle, no prefetch) had led with T04 2.00x,
# which cannot speed a training step. The test markers are between the
# steps now: 47.1 % of 47 training steps, the validation pipelines outside
# them, T15 on the training map (measured 4.85 -> 3.75 ms a training step
# with it AUTOTUNE)
run analyze -q -f json tests/cases/ok/tf215-keras2-fit-validation-test-markers/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H12 TFD-T15 TFD-H05 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 47 and 44 < h["input_percent"] < 50 and h["between_steps"] == 2, h
assert [p["outside_steps"] for p in h["pipelines"]] == [False, True, False, True, False], h["pipelines"]
assert d["findings"][1]["pipeline"] == h["focus_pipeline"] == "Host:4", h["focus_pipeline"]
assert any("20 evaluation step marker(s)" in n["message"] for n in d["notes"]), d["notes"]' <<<"$out"; then ok; else bad "Keras 2 fit with test markers: $(rules_of)"; fi
# a TensorFlow 1 graph loop (tf.compat.v1, Session.run, no markers): 60
# training runs over a one-shot iterator, and every 10 an eval iterator's
# initializer and 5 runs of it (a new iterator each pass); the last pass
# comes after the last training run. The 30 eval runs are no steps (the
# 90 runs had been, 91.4 %): 83.7 % of the 58 training runs, T15 1.73x
# (measured 4.36 -> 2.52 ms a training run with the maps AUTOTUNE, 1.73x),
# H12 1.79x (measured 10.6-11.4 -> 6.0-6.9 ms a training step with the
# evaluation every 40 runs, 1.70x); xprof finds no step there
run analyze -q -f json tests/cases/ok/tf221-tf1-eval-every-10/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H12 TFD-T15 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 58 and 80 < h["input_percent"] < 88 and h["between_steps"] == 5, h
assert [p["outside_steps"] for p in h["pipelines"]] == [False] + [True] * 6, h["pipelines"]
assert any("30 session runs of an evaluation" in n["message"] for n in d["notes"]), d["notes"]
e = d["findings"][1]["estimate"]
assert d["findings"][1]["pipeline"] == "Host:0" and 1.4 < e["step_speedup"] < 2.1, e' <<<"$out"; then ok; else bad "a TF1 loop evaluating every 10 runs: $(rules_of)"; fi
# ... and that capture converted to a Chrome trace by xprof: every session
# run a group (the initializers' too, 96 groups: 84.5 % over them); the
# runs are read from it too, so its steps are the same 58 training runs
run analyze -q -f json tests/cases/ok/tf221-tf1-eval-every-10-chrome/vm.trace.json.gz
if [ "$(rules_of)" = "TFD-H12 TFD-T15 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 58 and 80 < h["input_percent"] < 88 and h["between_steps"] == 5, h
assert any("30 session runs of an evaluation" in n["message"] for n in d["notes"]), d["notes"]' <<<"$out"; then ok; else bad "a TF1 loop evaluating every 10 runs, Chrome: $(rules_of)"; fi
# a capture stopped while the shuffle buffer was still filling (the
# loop's first next()): no call of Root, Prefetch, BatchV2 or Shuffle
# ended in it, only the map's below the shuffle. Their iterators are
# known from the map's long name and parent id: the pipeline is read (it
# had been dropped, "no tf.data activity captured"), the loop waited
# through the capture (it had been 0.4 %, NOT input-bound), the shuffle
# is named and TFD-P04 says why (unprofiled: 0.59 s to the first batch,
# 0.08 s with a tenth of the buffer)
run analyze -q -f json tests/cases/ok/tf221-shuffle-filling-past-capture/vm.xplane.pb
if [ "$(rules_of)" = "TFD-P04 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_percent"] > 90 and len(h["pipelines"]) == 1, h["input_percent"]
p = h["pipelines"][0]
assert p["bottleneck"]["name"] == "Shuffle", p["bottleneck"]
assert [s["calls"] for s in p["stages"][:4]] == [0, 0, 0, 0] and p["stages"][4]["calls"] == 1220, p["stages"]
assert any("4 iterator(s) known from their inputs alone" in n["message"] for n in d["notes"]), d["notes"]' <<<"$out"; then ok; else bad "a shuffle filling past the capture: $(rules_of) $(head -c 300 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-shuffle-filling-past-capture/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"bottleneck: Shuffle (Iterator::Root::Prefetch::BatchV2::Shuffle) in pipeline Host:0: no call of it ended in the capture (each outlasted it) while the stages below it made 1220 calls: the loop waited for the pipeline's next element through the capture."* ]] &&
	[[ "$out" != *"keeps up"* ]] &&
	[[ "$out" == "capture too short to judge: no step, and 0 elements of the input taken. Profile"* ]]; then ok; else bad "a shuffle filling past the capture, text: $(head -20 <<<"$out")"; fi
# ... its pipeline has no root call, so no latency: none is shown as 0 ns
if [[ "$out" == *"  calls 0: no call of its root ended in the capture"* ]] && [[ "$out" != *"p50 0 ns"* ]] && [[ "$out" == *"- (no root call ended)"* ]]; then ok; else bad "a root with no call, text: $(grep -A2 '^pipeline' <<<"$out")"; fi
run report -q -f md tests/cases/ok/tf221-shuffle-filling-past-capture
if [[ "$out" == *"| Host:0 | - | - | bottleneck Shuffle (confidence low) |"* ]]; then ok; else bad "a root with no call, report: $(grep 'Host:0' <<<"$out")"; fi
# Keras 3 fit profiled over its first 5 batches while a shuffle(1000)
# buffer filled: the first call took 73 % of the steps' time, so TFD-P02
# (which had been low, listed last) leads, at medium: the capture shows
# the start; TFD-P03 (bursts), whose steps' demand counted the fill, is
# quiet. On the catalog's epoch_iterator_refill each epoch's fill is
# a small part of the steps: P02 stays low there
run analyze -q -f json tests/cases/ok/tf221-keras3-shuffle-fill-first-batches/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); f = d["findings"][0]
assert f["rule"] == "TFD-P02" and f["severity"] == "medium", f["rule"]
assert "TFD-P03" not in [f["rule"] for f in d["findings"]], d["findings"]' <<<"$out"; then ok; else bad "a shuffle fill most of the capture: $(rules_of)"; fi
run analyze -q -f json tests/cases/ok/tf221-session-initializer-each-epoch/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin)
f = [f for f in d["findings"] if f["rule"] == "TFD-P02"]
assert f and f[0]["severity"] == "low", f' <<<"$out"; then ok; else bad "a shuffle fill each epoch, a small part: $(rules_of)"; fi
# Keras 2's TensorBoard(profile_batch=2), the one batch older tutorials
# profile: no step marker (opened before the profiler started) and one
# element taken from a full buffer. Without steps the capture's span
# stands for them, and one element is too few to judge: the report says
# so first (it had led with a plain NOT input-bound, 3.1 %)
run analyze -q tests/cases/ok/tf215-keras2-tensorboard-batch-2/vm.xplane.pb
if [[ "$out" == "capture too short to judge: no step, and 1 element of the input taken. Profile"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"confidence in the verdict: low"* ]]; then ok; else bad "Keras 2 profile_batch=2: $(head -5 <<<"$out")"; fi
run analyze -q -f json tests/cases/ok/tf215-keras2-tensorboard-batch-2/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin)
assert "capture too short to judge: no step, and 1 element" in json.dumps(d), d.keys()' <<<"$out"; then ok; else bad "Keras 2 profile_batch=2, JSON hint: $(head -c 300 <<<"$out")"; fi
# every batch slower than the capture (0.5 s of a loop whose sequential
# map takes about 60 ms an element, 16 a batch): no root call, no step;
# the MapAndBatch is named and TFD-P05 says to profile longer
run analyze -q -f json tests/cases/ok/tf221-batch-slower-than-capture/vm.xplane.pb
if [ "$(rules_of)" = "TFD-P05 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["input_bound"] == "highly" and h["input_percent"] > 95, h["input_percent"]
assert h["pipelines"][0]["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::MapAndBatch", h["pipelines"][0]["bottleneck"]' <<<"$out"; then ok; else bad "a batch slower than the capture: $(rules_of) $(head -c 300 <<<"$out")"; fi
# Keras 3 fit profiled over one batch: the fused MapAndBatch's call for it
# began before the capture, so the capture holds its input's calls and
# the prefetch's wait, not it. The MapAndBatch is named, not the
# prefetch's buffer (its wait has no producer call to go to), and only
# TFD-P05 advises on it: its parameters are unknown (TFD-T04 had fired on
# the stage as if it ran parallel); the same from xprof's Chrome trace
for f in vm.xplane.pb vm.trace.json.gz; do
	run analyze -q -f json "tests/cases/ok/tf221-keras3-tensorboard-one-batch/$f"
	if [ "$(rules_of)" = "TFD-P05 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
p = h["pipelines"][0]
assert h["steps"] == 1 and 70 < h["input_percent"] < 80, h
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::MapAndBatch", p["bottleneck"]
assert "Produce/Consume" not in p["confidence"]["reasons"], p["confidence"]' <<<"$out"; then ok; else bad "one batch profiled, $f: $(rules_of) $(head -c 300 <<<"$out")"; fi
done
# a map's slot holds the read of its input and its function: a fused
# sequential map (1.8 ms a call) reading a heavier sequential map (3.9 ms)
# has the inner map as its slot's busiest stage, and the bottleneck (the
# fused map had been named; halving the inner map's work measured 1.28x,
# the fused map's 1.14x)
run analyze -q -f json tests/cases/ok/tf221-fused-map-reads-heavier-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T01 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::Map::MapAndBatch::Map", p["bottleneck"]
c = p["capacity"]; g = c["segments"][c["limiter"]]
assert g["kind"] == "function" and g["top_stage"] == p["bottleneck"]["stage"], g' <<<"$out"; then ok; else bad "a fused map reading a heavier map: $(rules_of) $(head -c 300 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-fused-map-reads-heavier-map/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"the 1 MapAndBatch worker busy 95%, 68% of it reading MapAndBatch::Map"* ]]; then ok; else bad "a fused map reading a heavier map, text: $(grep evidence -A3 <<<"$out")"; fi
# the cores the limit and the lowest segment's busiest stage mostly waits
# (reads sleeping 1.5 ms under a parallel interleave of 2): the map that
# takes the CPU is named (halving its work measured 1.47x, halving the
# reads' sleep 1.11x), the reads' segment the next limit
run analyze -q -f json tests/cases/ok/tf221-cores-busy-reads-wait/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::BatchV2::ParallelMapV2", p["bottleneck"]
c = p["capacity"]
assert c["cpu"]["limits"] and c["runner_up"] == c["limiter"] and 1.0 < c["margin"] < 1.3, c' <<<"$out"; then ok; else bad "the cores the limit, the reads waiting: $(rules_of) $(head -c 300 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-cores-busy-reads-wait/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"but Map mostly waits there, on no core (Python that sleeps or reads, a thread to run on), while ParallelMapV2 takes 100% of the stages' CPU"* ]] &&
	[[ "$out" == *"<- lowest capacity (mostly waits)"* ]]; then ok; else bad "the cores the limit, the reads waiting, text: $(grep evidence -A3 <<<"$out")"; fi
# the same with one sequential reader whose Python sleeps, and three maps
# of close CPU: the AUTOTUNE map takes 24 % of the CPU per root element
# (the step's compute included), enough to be named (halving it measured
# 1.12x, the reads' sleep 1.02x); a stage must take 15 % of it
run analyze -q -f json tests/cases/ok/tf221-cores-busy-sequential-read/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 " ] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::Map::BatchV2::ParallelMapV2"'* ]]; then ok; else bad "the cores the limit, one sequential reader waiting: $(rules_of)"; fi
# the reads' Python seen taking turns, but its op events cover 6 % of
# their calls (0.33 ms of 5.4 ms: the rest waits for a thread to run on):
# they mostly wait, and the fused map taking 69 % of the stages'
# CPU is named (halving its work measured 1.20x, the reads' sleep 1.03x)
run analyze -q -f json tests/cases/ok/tf221-cores-busy-reads-take-turns/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 TFD-T03 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::ParallelMapV2::MapAndBatch", p["bottleneck"]
assert p["capacity"]["python_calls"] == "take_turns", p["capacity"]["python_calls"]' <<<"$out"; then ok; else bad "the cores the limit, the reads taking turns: $(rules_of) $(head -c 300 <<<"$out")"; fi
# sample_from_datasets of two sources (maps of 1.5 and 0.6 ms, AUTOTUNE)
# then a map of 1 ms fused with batch(8): the selector's map (tf.data's
# own, DirectedInterleave::ParallelMapV2) leaves no function events and
# had been inferred to limit; the fused map is named (halving its work
# measured 1.23x, the first source's 1.16x)
run analyze -q -f json tests/cases/ok/tf221-sample-selector-not-inferred/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::MapAndBatch", p["bottleneck"]
assert not p["capacity"]["inferred"], p["capacity"]["evidence"]' <<<"$out"; then ok; else bad "the selector of sample_from_datasets: $(rules_of) $(head -c 300 <<<"$out")"; fi
# a parallel interleave (cycle 2) of files each read through a sleeping
# map (0.3 ms) and an AUTOTUNE map of 1.2 ms: each open file has its own
# reader thread, so the readers are 2 threads busy 73 % (they had been one
# busy 146 %, below the rate seen, and named); on full cores the per-file
# maps are named (halving their work measured 1.33x, the reads' 1.06x)
run analyze -q -f json tests/cases/ok/tf221-interleave-per-file-maps-cycle2/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::Map::MapAndBatch::ParallelInterleaveV4[0]::ParallelMapV2", p["bottleneck"]
g = [g for g in p["capacity"]["segments"] if g["kind"] == "input" and g["threads"] == 2 and g["busy_ns"] > 0][0]
assert g["parallelism"] == 2 and 0.6 < g["utilization"] < 0.9, g' <<<"$out"; then ok; else bad "per-file maps of a cycle 2: $(head -c 300 <<<"$out")"; fi
# a stage of several instances is shown with its lowest instance's long
# name, whatever instance's thread the file lists first (this capture's
# first is the map of instance [3]: the name had followed it)
run analyze -q -f json examples/real-interleave-seq-slow-read/vm.xplane.pb
if [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::MapAndBatch::Interleave[0]::Map"'* ]] &&
	[[ "$out" != *'Interleave[3]'* ]]; then ok; else bad "a stage of instances named after its lowest: $(grep -m1 bottleneck_long_name <<<"$out")"; fi
# a sequential per-file map runs one instance per open file, each with its
# own long name ([0]..[3]): its ops are all four instances' (681 ms of
# matmuls, 40 % of its time; one instance's, 174 ms, had read it as waiting
# 90 % and the reads had been named). On full cores the reads' Python
# sleeps and the map computes: halving its work measured 1.32x, the reads'
# sleep 1.22x
run analyze -q -f json tests/cases/ok/tf221-interleave-per-file-map-instances/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::MapAndBatch::ParallelInterleaveV4[0]::Map", p["bottleneck"]
s = [s for s in p["stages"] if s["long_name"] == p["bottleneck"]["long_name"]][0]
assert 650e6 < s["function_ops"][0]["self_ns"] < 700e6, s["function_ops"]' <<<"$out"; then ok; else bad "a per-file map's ops over its instances: $(head -c 300 <<<"$out")"; fi
# the reads' numpy_function (a 0.6 ms sleep) holds 42 % of their self time
# over every call, as its ops are summed; over the analyzed calls' self
# time, a part of it, it had been 53 %, taken for computing (the host's
# Python takes turns) and the reads named: halving the fused map's work
# measured 1.11x, the reads' sleep 0.94x
run analyze -q tests/cases/ok/tf221-python-share-every-call/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"bottleneck: MapAndBatch (Iterator::Root::Prefetch::ParallelMapV2::MapAndBatch)"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"but Map::Map mostly waits there, on no core"* ]]; then ok; else bad "a read's Python share over every call: $(grep -A6 'bottleneck:' <<<"$out")"; fi
# a thread runs a sequential map of matmuls on the batch (528 ms, its
# ops 489) and a filter whose predicate's ops wait for the shared pool
# (724 ms, its ops 234): the map is named by its own work (halving it
# measured 1.23x, the filter's predicate 1.04x; the filter had been named)
run analyze -q tests/cases/ok/tf221-thread-named-by-own-work/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"bottleneck: Map (Iterator::Root::Prefetch::Map)"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"busy 94%: Filter's calls take more of it, but their ops run 32% of them (the rest waits for a thread of their pool), Prefetch::Map's 93%;"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"[high] TFD-T01 "* ]]; then ok; else bad "a thread named by its stages' own work: $(grep -A6 'bottleneck:' <<<"$out")"; fi
# two numpy_functions that sleep: the reads' (2.5 ms a record, in a
# sequential map) and the parallel map's above them (0.2 ms). Over all their
# calls together the long reads, which happened to start beside the map's,
# looked to grow with the calls ahead (taking turns at the GIL, and the map
# named at one call at a time); within each function they do not. The reads
# are named: halving their sleep measured 1.34x, the map's 1.00x
run analyze -q -f json tests/cases/ok/tf221-python-sleeps-per-function/vm.xplane.pb
if [ "$(rules_of)" = "TFD-F06 TFD-T22 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::ParallelMapV2::PaddedBatchV2::Filter::ParallelMapV2::Map", p["bottleneck"]
assert p["capacity"]["python_calls"] == "side_by_side", p["capacity"]["python_calls"]' <<<"$out"; then ok; else bad "Python that sleeps, weighed per function: $(rules_of) $(head -c 300 <<<"$out")"; fi
# a sequential map of 8 ms of matmuls on the batch above parallel maps, Keras
# fit on 2 cores: its thread is in its calls 97 % of the window, in its own
# work 68 %, and the pipeline delivers 38.7/s where the cores allow 52.7/s.
# The calls' waits for their input, which workers overlap, held the rate,
# not the cores: TFD-T01 is worth up to the cores' rate from the rate seen
# (its workers measured 1.56x; the model's ratio, cores before and after,
# had said 1.0x), and the verdict no longer says more workers will not help
run analyze -q -f json tests/cases/ok/tf221-sequential-map-serial-waits/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T01 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); e = d["findings"][0]["estimate"]
assert e["basis"] == "capacity" and 1.3 < e["step_speedup"] < 1.45 and e["capped_by_cores"], e' <<<"$out"; then ok; else bad "workers for a sequential stage, from the rate seen: $(rules_of) $(grep -A3 '"estimate"' <<<"$out" | head -c 400)"; fi
run analyze -q tests/cases/ok/tf221-sequential-map-serial-waits/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"so more workers help up to that, from the 38.7/s seen (they overlap its calls' waits for their input); cheaper work will go further."* ]]; then ok; else bad "the cores line for a sequential stage held by its waits: $(grep -A4 'cores are' <<<"$out")"; fi
# the same idiom with cycle 4 and AUTOTUNE per-file maps: 4 instances of 2
# slots, but their functions run on the 2 threads of the shared pool, busy
# 82 %: the limit is those threads (116/s), not 8 slots busy 21 %
run analyze -q tests/cases/ok/tf221-interleave-per-file-parallel-maps/vm.xplane.pb
if [[ "$out" == *"> 2 ParallelMapV2 workers (AUTOTUNE)                     2    17.204 ms    82%        116/s"* ]] &&
	[[ "$out" == *"4 threads feeding ParallelMapV2 (run TFRecord)"* ]]; then ok; else bad "per-file parallel maps on the shared pool: $(grep -A5 'segment (threads)' <<<"$out")"; fi
# on full cores a sequential filter's thread is busy 80 %, but its
# predicate's ops (matmuls) run 36 % of its time: the rest is their wait
# behind the parallel map on the batch, whose ops take 61 % of the stages'
# CPU, and that map is named (halving its work measured 1.14x, the
# predicate's 1.04x; the filter had been named)
run analyze -q tests/cases/ok/tf221-cores-filter-queued-behind-map/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"bottleneck: ParallelMapV2 (Iterator::Root::ParallelMapV2)"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"but Filter's ops run 35% of its time there (the rest waits for a thread of their pool or a core), while Root::ParallelMapV2 takes 61% of the stages' CPU"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"[high] TFD-T04 "* ]]; then ok; else bad "a filter queued behind a map on full cores: $(grep -A4 'bottleneck:' <<<"$out")"; fi
# the filter computes (its ops most of its time), but the parallel map
# below it takes 2.5x its CPU on full cores: the map is named (halving its
# work measured 1.30x, the predicate's 1.09x; the filter had been named)
run analyze -q -f json tests/cases/ok/tf221-cores-map-heavier-than-filter/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T04 TFD-T03 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::BatchV2::Filter::ParallelMapV2", p["bottleneck"]
c = p["capacity"]; assert c["cpu"]["limits"] and "2.5x what runs there" in c["evidence"], c["evidence"]' <<<"$out"; then ok; else bad "a map heavier than the filter on full cores: $(rules_of) $(head -c 300 <<<"$out")"; fi
run analyze -q tests/cases/ok/tf221-cores-map-heavier-than-filter/vm.xplane.pb
if [[ "$out" == *"thread feeding Prefetch (runs Filter)                    1    19.828 ms    81%       50.4/s  <- lowest capacity (less CPU)"* ]]; then ok; else bad "a map heavier than the filter, the table: $(grep -A3 'segment (threads)' <<<"$out")"; fi
# the heaviest stage (an AUTOTUNE-less map of 2 workers) takes about what
# the limiting thread's two stages together take (a map on the batch and
# a filter): the thread keeps its name, and of its two stages the map on
# the batch, whose work runs while the 2-worker map's buffer stands full,
# not the filter, whose predicate shares the pool with that map's refills
# (halving the map's work measured 0.95x, the filter's 1.13x, the map on
# the batch's 1.21x)
run analyze -q -f json tests/cases/ok/tf221-cores-thread-two-stages/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::Map", p["bottleneck"]
assert p["capacity"]["cpu"]["limits"], p["capacity"]["cpu"]' <<<"$out"; then ok; else bad "a thread of two stages on full cores: $(head -c 300 <<<"$out")"; fi
# reads whose numpy_function sleeps 0.3 ms on 2 interleave threads (busy
# 98 %): their ops run 28 % of their calls, the rest waits for a thread of
# the pool, where the decoding and augmenting map's ops take the most: it
# is named, not the reads (halving its work measured 1.20x, the reads'
# sleep 0.92x), and its cheaper work is worth what it frees of the pool
run analyze -q -f json tests/cases/ok/tf221-reads-wait-for-pool/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::ParallelMapV2::MapAndBatch", p["bottleneck"]
assert "but Map\x27s ops run 28% of its calls there: the rest waits for a thread of the pool its ops run on, where MapAndBatch\x27s ops take the most (48% of" in p["capacity"]["evidence"], p["capacity"]["evidence"]
e = d["findings"][0]["estimate"]; assert d["findings"][0]["rule"] == "TFD-T04" and e["capped_by_pool"] and 1.2 < e["step_speedup"] < 1.45, e' <<<"$out"; then ok; else bad "reads waiting for the pool: $(rules_of) $(head -c 400 <<<"$out")"; fi
# a filter reading a 2-worker map and a map on the batch share the
# prefetch's thread (81 % busy): the predicate's ops (353 ms) take more
# of it than the batch map's (246 ms), but they run beside the map's
# refills (883 ms) on the 2 threads of the pool; halving the batch map's
# work measured 1.15x, the predicate's 1.11x (5 runs each)
run analyze -q tests/cases/ok/tf221-filter-reads-refilling-map/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"bottleneck: Map (Iterator::Root::Prefetch::Map) in pipeline"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"but while they read ParallelMapV2 its workers refill on the same 2 threads of the pool (883 ms of work in the window to its own 353 ms), so halving Filter's work saves less of the thread than halving Map's (246 ms)"* ]]; then ok; else bad "a filter beside a map on the batch, reading a refilling map: $(grep -A6 'bottleneck:' <<<"$out")"; fi
# a py_function map of 2 workers takes turns on the GIL but is busy 17 %:
# its capacity is one call at a time's (67/s), not the rate seen (23/s),
# and the sequential filter above it, busy 89 %, is the limit (the map had
# been named; halving the predicate's work measured 1.21x, the map's 1.08x)
run analyze -q -f json tests/cases/ok/tf221-gil-map-idle-under-filter/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T13 TFD-T08 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
assert p["bottleneck"]["long_name"] == "Iterator::Root::Prefetch::ParallelMapV2::PaddedBatchV2::Filter", p["bottleneck"]
c = p["capacity"]; g = [g for g in c["segments"] if g["kind"] == "function" and g["utilization"] < 0.2][0]
assert 60 < g["capacity"] < 75 and c["segments"][c["limiter"]]["kind"] == "input", (g, c["limiter"])' <<<"$out"; then ok; else bad "an idle GIL-bound map under a filter: $(rules_of) $(head -c 300 <<<"$out")"; fi
# one worker's slot holds the read of a Python generator (14 ms a root
# element) and a numpy_function (5 ms): the read, one after the other with
# the Python, is the slot's busiest stage and the bottleneck (halving the
# generator's work measured 1.42x, the map's 1.08x)
run analyze -q -f json tests/cases/ok/tf221-gil-one-slot-reads-generator/vm.xplane.pb
if [ "$(rules_of)" = "TFD-S03 TFD-H10 " ] && [[ "$out" == *'"bottleneck_long_name": "Iterator::Root::Prefetch::BatchV2::ParallelMapV2::FlatMap[0]::Generator"'* ]]; then ok; else bad "one GIL-bound slot reading a generator: $(rules_of)"; fi
run analyze -q tests/cases/ok/tf221-gil-one-slot-slow-read/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"bottleneck: Map (Iterator::Root::Prefetch::BatchV2::Filter::ParallelMapV2::Map)"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"the 1 ParallelMapV2 worker busy 100%, 74% of it reading Map"* ]]; then ok; else bad "one GIL-bound slot reading slow reads: $(grep -A3 'bottleneck:' <<<"$out")"; fi
# snapshot() read back (a run before read the input to its end): its
# reader interleaves the snapshot's 2 shards, SnapshotDatasetReader/_0 and
# /_1, one reader each; they are one stage (as an interleave's inputs
# are), not two with half the calls each
run analyze -q -f json tests/cases/ok/tf221-snapshot-read-two-shards/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); p = d["hosts"][0]["pipelines"][0]
st = [s for s in p["stages"] if s["family"] == "SnapshotDatasetReader"]
assert [(s["name"], s["calls"]) for s in st] == [("SnapshotDatasetReader", 240)], st' <<<"$out"; then ok; else bad "a snapshot's shard readers: $(head -c 300 <<<"$out")"; fi
# a sequential map inside each input of a parallel interleave (2 inputs
# at once, TensorFlow 2.12), the cores the limit: its calls are already
# parallel, so T01's inner num_parallel_calls gives ~1.0x (measured 0.99x
# on the 4-input case) and T25 (cheaper work) leads: 1.49x, measured 1.48x
run analyze -q -f json tests/cases/ok/tf212-interleave-inner-seq-map/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T25 TFD-T01 " ] && [[ "$out" == *'"step_speedup": 1.48'* ]]; then ok; else bad "a sequential map under a parallel interleave: $(rules_of)"; fi
# `for b in ds.take(1):` each step under TensorFlow 2.12: a new dataset each
# step, whose root TensorFlow names with a new number (RootDataset:57, :59,
# ...), so the names do not say the pipelines are one; each was called
# once: one-shot pipelines of the same shape are (H09, not P01 at 2.86x)
run analyze -q -f json tests/cases/ok/tf212-take-one-per-step/vm.xplane.pb
if [ "$(rules_of)" = "TFD-H09 " ] && [[ "$out" == *'"new_iterator_each_step": true'* ]]; then ok; else bad "take(1) each step, numbered roots: $(rules_of)"; fi
# cache() after repeat(): the cache never fills and the map below it runs
# every epoch (T19 leads; measured 1.49x on the catalog's job), not "the
# first epoch only" (T18)
run analyze -q -f json tests/cases/ok/tf221-cache-after-repeat/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T19 TFD-T01 " ]; then ok; else bad "cache after repeat: $(rules_of)"; fi
# the MNIST tutorial's stateless map, which TensorFlow parallelized itself
# (fused(MapDataset:...) with AUTOTUNE and 2 calls at a time): not a
# sequential map (no T15); its 3-us calls want vectorizing (T17: the map
# after batch() measured 2.12x)
run analyze -q -f json tests/cases/ok/tf221-keras3-mnist-tutorial/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T17 " ]; then ok; else bad "MNIST tutorial: $(rules_of)"; fi
# no step markers (Keras 3 fit profiled by the API): each call of the
# train function is a step (its FunctionRun's id is the GetNext op's), as
# xprof's trace viewer groups them; the capture span had said 88.5 %, low
# confidence (47.2 % over the whole capture, with fit's start-up and
# teardown); the clock says 94-97 %, the converted trace 94.6 %
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-no-markers/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 38 and h["input_basis"] == "steps" and h["confidence"]["level"] == "high", h
assert 92 < h["input_percent"] < 95, h["input_percent"]
assert any("tf.function" in n["message"] for n in d["notes"]), d["notes"]' <<<"$out"; then ok; else bad "Keras fit without markers: $(grep -m1 '"input_percent"' <<<"$out")"; fi
# a custom loop's tf.function that takes the iterator, no markers: its
# calls are the steps (90.8 %, measured 91.4 %; the span had said 80.1 %,
# low confidence); T15 1.56x, measured 5.08 -> 3.06 ms a step (1.66x)
run analyze -q -f json tests/cases/ok/tf221-fn-takes-iterator-no-markers/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T15 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 38 and h["input_basis"] == "steps" and 88 < h["input_percent"] < 93, h
e = d["findings"][0]["estimate"]
assert 1.4 < e["step_speedup"] < 1.8, e' <<<"$out"; then ok; else bad "a step function taking the iterator: $(rules_of)"; fi
# a custom loop's evaluation function, 5 calls every 10 training steps,
# each reading a validation iterator, no markers: its calls come in runs,
# so they are between the steps (40 training steps; 89.3 %, measured
# 91.3 % of a training step) and its pipeline gets no advice of its own
run analyze -q -f json tests/cases/ok/tf221-fn-eval-every-10-no-markers/vm.xplane.pb
if [ "$(rules_of | cut -d' ' -f1)" = "TFD-T15" ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 38 and h["input_basis"] == "steps" and h["between_steps"] == 3, h
assert [p["outside_steps"] for p in h["pipelines"]] == [False, True], h["pipelines"]
assert any("40 steps" in n["message"] for n in d["notes"]), d["notes"]' <<<"$out"; then ok; else bad "a loop evaluating every 10 steps, no markers: $(rules_of)"; fi
# Keras 3 fit with validation_data, no markers: the train and the test
# function are both multi_step_on_iterator and both read input; the test
# function's calls come in runs at each epoch's end: between the steps,
# its pipelines outside them (no advice of their own), as with markers;
# H12 leads at 1.94x, measured 2.28x (40-step epochs, validation_freq=2)
run analyze -q -f json tests/cases/ok/tf221-keras3-fit-validation-no-markers/vm.xplane.pb
if python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 28 and h["input_basis"] == "steps" and h["between_steps"] == 2, h
assert [p["outside_steps"] for p in h["pipelines"]] == [False, True, True, True], h["pipelines"]
assert all(f["pipeline"] in ("", "Host:0") for f in d["findings"]), [f["pipeline"] for f in d["findings"]]
assert d["findings"][0]["rule"] == "TFD-H12" and 1.5 < d["findings"][0]["estimate"]["step_speedup"] < 2.5, d["findings"][0]
assert any("30 steps" in n["message"] for n in d["notes"]), d["notes"]' <<<"$out"; then ok; else bad "Keras fit with validation, no markers: $(rules_of)"; fi
# MirroredStrategy, next() of the distributed iterator inside the step
# function, no markers: its per-device GetNexts run under the function's
# id, so its calls are the steps (the span had said 84.7 %, low
# confidence); T15 1.77x, measured 5.27 -> 3.26 ms a step (1.62x)
run analyze -q -f json tests/cases/ok/tf221-mirrored-no-markers/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T15 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 38 and h["input_basis"] == "steps", h
assert [p["name"] for p in h["pipelines"]] == ["Host:0", "Device:0", "Device:1"], h["pipelines"]' <<<"$out"; then ok; else bad "MirroredStrategy without markers: $(rules_of)"; fi
# Keras 3 fit on a PyDataset (2 worker threads, 4 ms a batch), no
# markers: the train function's calls are the steps, 63.4 % (measured
# about 53 %; the capture span had said 21.8 %, low confidence); S09 1.29x,
# measured 1.31x with the workers' work halved
run analyze -q -f json tests/cases/ok/tf221-keras3-pydataset-no-markers/vm.xplane.pb
if [[ "$(rules_of)" == *"TFD-S09 "* ]] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 78 and h["input_basis"] == "steps" and 50 < h["input_percent"] < 75, h
e = [f for f in d["findings"] if f["rule"] == "TFD-S09"][0]["estimate"]
assert 1.15 < e["step_speedup"] < 1.45, e' <<<"$out"; then ok; else bad "PyDataset without markers: $(rules_of)"; fi
# steps_per_execution=8: one call of the train function reads 8 batches
# through IteratorGetNextAsOptional; each call is a step (94.3 %, measured
# 94.6 %; T15 1.80x, measured 1.90x)
run analyze -q -f json tests/cases/ok/tf221-keras3-steps-per-execution-no-markers/vm.xplane.pb
if [ "$(rules_of)" = "TFD-T15 " ] && python3 -c 'import json, sys; d = json.load(sys.stdin); h = d["hosts"][0]
assert h["steps"] == 8 and h["input_basis"] == "steps" and 92 < h["input_percent"] < 97, h' <<<"$out"; then ok; else bad "steps_per_execution, no markers: $(rules_of)"; fi
run analyze -q -f json examples/real-autotune-map-saturated
if [[ "$out" != *'"TFD-T05"'* ]] && [[ "$out" == *'"function_uneven_share": 0.0731'* ]]; then ok; else bad "even elements said to stall: $(grep -o '"rule": "TFD-[A-Z][0-9]*' <<<"$out" | tr '\n' ' ')"; fi
# Python ops that ran side by side wait (a sleeping numpy_function, 4 ms,
# AUTOTUNE's 2 workers): their duration does not grow with the calls
# beside them, so no GIL is said and F06 asks for more calls and a larger
# pool (measured 2.87x with 16 and 16; F01 had said more workers gain
# nothing). A computing py_function's calls take turns: F01's GIL stays.
run analyze -q -f json tests/cases/ok/tf221-python-waits-two-workers/vm.xplane.pb
if [[ "$out" == *'"rule": "TFD-F06"'* ]] && [[ "$out" != *'"TFD-F01"'* ]] &&
	[[ "$out" == *'"python_calls": "side_by_side"'* ]]; then ok; else bad "waiting Python: $(grep -o '"rule": "TFD-[A-Z][0-9]*' <<<"$out" | tr '\n' ' ')"; fi
run analyze -q tests/cases/ok/tf221-python-waits-two-workers/vm.xplane.pb
if [[ "$out" != *"GIL: one call at a time"* ]] && [[ "$out" != *"holds the Python GIL"* ]]; then ok; else bad "waiting Python said to hold the GIL: $(grep -A2 evidence <<<"$out")"; fi
# F06's code sets 16 calls at once: from the 2 workers AUTOTUNE stopped at,
# the estimate's factor is 8 ("to": 16; measured 3.23x on the catalog's job,
# the estimate below it: the profiled step's own time is longer)
run analyze -q -f json tests/cases/ok/tf221-python-waits-two-workers/vm.xplane.pb
if [[ "$(tr -d ' \n' <<<"$out")" == *'"of":"parallelism","factor":8,'* ]] &&
	[[ "$out" == *'"step_speedup": 1.9'* ]]; then ok; else bad "F06 estimate: $(grep -o '"factor": [0-9.]*' <<<"$out")"; fi
run analyze -q -f json examples/real-py-function-map
if [[ "$out" == *'"python_calls": "take_turns"'* ]] && [[ "$out" != *'"TFD-F06"'* ]]; then ok; else bad "computing Python not said to take turns"; fi
# identical findings on several hosts print once, with their hosts
mkdir -p "$T/mh"
$TFD synth -q -o "$T/mh" tests/synth/16-multi-host-slow-worker.json
run analyze -q "$T/mh"
if [ "$(grep -c 'TFD-H01' <<<"$out")" -eq 1 ] && [[ "$(unwrap <<<"$out")" == *"TFD-H01 Not input-bound: the input pipeline is not what slows training on 3 of 4 hosts (worker-0, worker-3, worker-1)"* ]]; then ok; else bad "grouped findings: $(grep 'TFD-H01' <<<"$out")"; fi
run report -q -f md "$T/mh"
if [ "$(grep -c 'TFD-H01' <<<"$out")" -eq 1 ] && [[ "$out" == *"on 3 of 4 hosts: worker-0, worker-3, worker-1"* ]]; then ok; else bad "grouped findings in Markdown"; fi

# two files of one run carrying the same host name (the real GPU
# multi-worker demo's workers): the hosts are told apart by file, with a
# note, in analyze, in a merge of partials and in report --history
D=$T/samehost/plugins/profile/r1
mkdir -p "$D"
cp $CAPS/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb "$D/w0.xplane.pb"
cp $CAPS/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb "$D/w1.xplane.pb"
run analyze "$T/samehost"
if [ "$rc" -eq 0 ] && [[ "$out" == *"34.83.195.179:6003 (w0.xplane.pb)"* ]] && [[ "$out" == *"34.83.195.179:6003 (w1.xplane.pb)"* ]] &&
	[[ "$err" == *"2 files carry the host name '34.83.195.179:6003'"* ]]; then ok; else bad "same host name in two files: $rc $err"; fi
$TFD analyze -q --partial -o "$T/sh0.partial.json" "$D/w0.xplane.pb"
$TFD analyze -q --partial -o "$T/sh1.partial.json" "$D/w1.xplane.pb"
run merge "$T/sh0.partial.json" "$T/sh1.partial.json"
if [ "$rc" -eq 0 ] && [[ "$out" == *"34.83.195.179:6003 (w1.xplane.pb)"* ]] && [[ "$err" == *"carry the host name"* ]]; then ok; else bad "merge of two partials with one host name: $rc $err"; fi
run report -q --history "$T/samehost.db" -o "$T/samehost.html" "$T/samehost"
if [ "$rc" -eq 0 ] && $TFD history "$T/samehost.db" >/dev/null && grep -q "w1.xplane.pb" "$T/samehost.html"; then ok; else bad "report --history with one host name twice: $rc $err"; fi
# one odd job does not fail a nightly batch: the others are reported and
# recorded, the odd one is named with its error, exit 1
mkdir -p "$T/batch/bad/plugins/profile/r1" "$T/batch/good"
head -c 3000 examples/ai-notebook/ai-notebook.xplane.pb >"$T/batch/bad/plugins/profile/r1/h.xplane.pb"
cp examples/smdebug-zip/*.trace.json.gz "$T/batch/good/"
run report -q --history "$T/batch.db" -f md -o "$T/batch.md" "$T/batch/good" "$T/batch/bad"
if [ "$rc" -eq 1 ] && [ "$(grep -c 'truncated or corrupt' <<<"$err")" -eq 1 ] && grep -q '^## good: run good' "$T/batch.md" &&
	grep -q '^\*\*Could not be analyzed\*\*, nothing recorded: .*truncated or corrupt' "$T/batch.md" &&
	[ "$($TFD history -f csv "$T/batch.db" | grep -c '^good,')" -eq 1 ] && ! $TFD history -f csv "$T/batch.db" | grep -q '^bad,'; then ok; else bad "a bad job in a batch: rc $rc $err $(cat "$T/batch.md" 2>/dev/null | head -5)"; fi

# tables that read right, prose that fits (issue 33 item 8): prose wraps at
# 80 columns off a terminal and at the terminal's width on one; notes show
# once on a terminal; the hosts table is per step; microseconds print as
# the capture has them
for cap in examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz examples/smdebug-8gpu/ip-172-31-19-241.trace.json "$T/mh"; do
	$TFD analyze -q "$cap" >"$T/w.txt"
	long=$(sed -n '1,/^hosts (/p' "$T/w.txt" | grep -vE '^      |^    see ' | awk 'length > 80' | head -2)
	if [ -z "$long" ]; then ok; else bad "$cap: prose past 80 columns: $long"; fi
done
script -qec "stty cols 60; $TFD analyze examples/smdebug-8gpu/ip-172-31-19-241.trace.json" "$T/tty.log" >/dev/null 2>&1 </dev/null
tr -d '\r' <"$T/tty.log" | sed 's/.*\x1b\[K//' | sed -n '1,/^hosts (/p' | grep -vE '^      |^    see |^Script ' >"$T/tty.txt"
if [ -s "$T/tty.txt" ] && ! awk 'length > 60 { found = 1 } END { exit !found }' "$T/tty.txt"; then ok; else bad "prose on a 60-column terminal: $(awk 'length > 60' "$T/tty.txt" | head -2)"; fi
if [ "$(tr -d '\r' <"$T/tty.log" | grep -c 'iterator(s) linked by long name')" -eq 1 ]; then ok; else bad "notes on a terminal: $(grep -c 'linked by long name' "$T/tty.log") times"; fi
run analyze examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz
if [[ "$out" == *"waiting and step time are per step"* ]] && [[ "$(unwrap <<<"$out")" == *"blocking 802 us"* ]] && [[ "$out" != *"802.000 us"* ]]; then ok; else bad "per-step hosts table or microsecond precision"; fi
run analyze examples/smdebug-8gpu/ip-172-31-19-241.trace.json
if [ "$(grep -c 'linked by long name' <<<"$err")" -eq 1 ] && [ "$(grep -c 'linked by long name' <<<"$out")" -eq 1 ]; then ok; else bad "notes off a terminal: on stderr and in the report"; fi

# smaller ones (issue 33 item 9)
L9=$T/l9/logs/train/plugins/profile/r1
mkdir -p "$L9"
cp examples/smdebug-zip/*.trace.json.gz "$L9/"
for p in logs/train logs/train/plugins logs/train/plugins/ logs/train/plugins/profile; do
	run analyze -q "$T/l9/$p"
	# (a one-step capture: the verdict follows the too-short line)
	if [ "$rc" -eq 0 ] && [[ "$out" == *$'\n'"verdict: HIGHLY"* ]]; then ok; else bad "analyze $p: $rc $err"; fi
done
run analyze -q -H nosuch "$T/l9/logs"
if [ "$rc" -eq 2 ] && [[ "$err" == *"no host named 'nosuch' in the capture; its hosts: '8c859046be41.ant.amazon.com'"* ]]; then ok; else bad "--host nosuch: $err"; fi
run dot -q --pipeline Device:5 "$T/l9/logs"
if [ "$rc" -eq 2 ] && [[ "$err" == *"no pipeline 'Device:5' on host 8c859046be41.ant.amazon.com; its pipelines: Host:0"* ]]; then ok; else bad "--pipeline Device:5: $err"; fi
# an output that cannot be written fails before the analysis (no progress, no notes)
run analyze -o "$T/nonexistent/dir/x" examples/smdebug-8gpu/ip-172-31-19-241.trace.json
if [ "$rc" -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && [[ "$err" == *"cannot create a file in '$T/nonexistent/dir'"* ]]; then ok; else bad "-o in a missing directory: $rc $err"; fi
run help nosuch
if [ "$rc" -eq 2 ] && [[ "$err" == *"unknown command 'nosuch'"* ]]; then ok; else bad "help nosuch: $rc $err"; fi
run help anlyze
if [ "$rc" -eq 2 ] && [[ "$err" == *"did you mean 'analyze'?"* ]]; then ok; else bad "help anlyze: $rc $err"; fi
run help report
if [ "$rc" -eq 0 ] && [[ "$out" != *"tfdoctor history"* ]]; then ok; else bad "help report prints history's usage"; fi
# ISO 8601 without a zone is UTC; a run is recorded once however often it is reported
run report -q --history "$T/l9.db" --timestamp 2024-01-01T00:00:00 -o "$T/l9.html" "$T/l9/logs"
if [ "$rc" -eq 0 ] && $TFD history -f csv "$T/l9.db" | grep -q ',2024-01-01T00:00:00Z$'; then ok; else bad "--timestamp without a zone: $rc $err"; fi
run report --history "$T/l9.db" -o "$T/l9.html" "$T/l9/logs"
if [ "$rc" -eq 0 ] && [[ "$err" == *"run 'r1' is already in the history (the same capture): not recorded again"* ]] &&
	[ "$($TFD history -f csv "$T/l9.db" | grep -c '^logs,1,')" -eq 1 ]; then ok; else bad "the same run recorded twice: $($TFD history -f csv "$T/l9.db")"; fi
touch -d '2030-01-01' "$L9"/*.gz # the capture rewritten: a new run of the history
run report -q --history "$T/l9.db" -o "$T/l9.html" "$T/l9/logs"
if [ "$rc" -eq 0 ] && [ "$($TFD history -f csv "$T/l9.db" | grep -c '^logs,2,')" -eq 1 ]; then ok; else bad "a rewritten capture is a new run: $($TFD history -f csv "$T/l9.db")"; fi

# a schema 1 history (before runs.capture) is migrated by the next report
python3 - "$T/v1.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.executescript("""
CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, job TEXT NOT NULL, run TEXT NOT NULL,
  recorded_at TEXT NOT NULL, source TEXT NOT NULL);
CREATE INDEX runs_job ON runs(job, id);
CREATE TABLE hosts (run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  host TEXT NOT NULL, rank INTEGER NOT NULL, input_percent REAL, bound TEXT NOT NULL,
  max_latency_ns INTEGER NOT NULL, p50_ns INTEGER NOT NULL, p95_ns INTEGER NOT NULL,
  calls INTEGER NOT NULL, slow_calls INTEGER NOT NULL, pipeline TEXT NOT NULL,
  bottleneck TEXT NOT NULL, bottleneck_long_name TEXT NOT NULL, bottleneck_share REAL NOT NULL,
  top_rule TEXT NOT NULL, top_severity TEXT NOT NULL, top_title TEXT NOT NULL,
  PRIMARY KEY (run_id, host));
INSERT INTO runs(job, run, recorded_at, source) VALUES ('logs', 'r0', '2026-01-01T00:00:00Z', 'x');
INSERT INTO hosts VALUES (1, 'h', 0, 1.0, 'not', 1, 1, 1, 1, 0, 'Host:0', '', '', 0, '', '', '');
PRAGMA user_version = 1;
""")
c.commit()
PY
run history "$T/v1.db"
if [ "$rc" -eq 1 ] && [[ "$err" == *"schema version 1 is older: 'tfdoctor report --history' migrates it"* ]]; then ok; else bad "history on schema 1: $rc $err"; fi
run report -q --history "$T/v1.db" -o "$T/v1.html" "$T/l9/logs"
if [ "$rc" -eq 0 ] && $TFD history "$T/v1.db" | grep -q "schema 2, 2 runs"; then ok; else bad "schema 1 migrated: $rc $err $($TFD history "$T/v1.db" 2>&1)"; fi

# a healthy job's Markdown report never says bottleneck
run report -q -f md examples/ai-notebook/ai-notebook.xplane.pb
if [ "$rc" -eq 0 ] && ! grep -qi bottleneck <<<"$out" && [[ "$out" == *"slowest stage Model"* ]]; then ok; else bad "md of a healthy job: $(grep -i bottleneck <<<"$out" | head -2)"; fi

# names are kept whole: an XSpace hostname of 300 bytes is the host's name,
# not its first 255 (prepended as hostnames[0], field 4)
python3 - examples/ai-notebook/ai-notebook.xplane.pb "$T/longhost.xplane.pb" <<'PY'
import sys
name = ("h" * 299 + "Z").encode()
data = open(sys.argv[1], "rb").read()
def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        out += bytes([b | (0x80 if n else 0)])
        if not n:
            return out
open(sys.argv[2], "wb").write(b"\x22" + varint(len(name)) + name + data)
PY
run analyze -q -f json "$T/longhost.xplane.pb"
if [ "$rc" -eq 0 ] && grep -q "\"host\": \"$(printf 'h%.0s' $(seq 299))Z\"" <<<"$out"; then ok; else bad "a 300-byte hostname was cut: $(grep -o '"host": "[^"]*"' <<<"$out" | head -1 | wc -c)"; fi
run rules list
if [ "$rc" -eq 0 ] && [[ "$out" == *"families: TFRecord,TextLine,FixedLengthRecord,SSTable,RecordIO,LMDB,Sql,TFColumn,CapacitorProto,ExternalDataset,Spanner"* ]]; then ok; else bad "rules list families"; fi

# synth -o with a 501-character directory writes under plugins/profile/<run>,
# not into a cut path (.../plugins/p/)
LD="$T/$(printf 'd%.0s' $(seq 200))/$(printf 'e%.0s' $(seq 200))/$(printf 'f%.0s' $(seq 100))"
run synth -q -o "$LD" tests/synth/01-tfrecord-sequential.json
if [ "$rc" -eq 0 ] && [ -s "$LD/plugins/profile/2026_01_01_00_00_00/worker-0.xplane.pb" ]; then ok; else bad "synth into a long directory: $rc $err $(find "$T/dddd"* -type d | tail -1 | tail -c 40)"; fi

# the history keeps names whole: a 300-byte job and host name read back as written
LJ=$(printf 'j%.0s' $(seq 299))J
run report -q --history "$T/long.db" --job "$LJ" -o "$T/long.html" "$T/longhost.xplane.pb"
if [ "$rc" -eq 0 ] && $TFD history -f csv "$T/long.db" | grep -q "^$LJ,1," &&
	$TFD history -f csv --job "$LJ" "$T/long.db" | grep -q ",$(printf 'h%.0s' $(seq 299))Z,"; then ok; else bad "long names in the history: $rc $err $($TFD history -f csv "$T/long.db" | cut -c1-80)"; fi

# a FIFO where a rule file or a partial is read is refused at once, never
# waited on (issue 35: rules check, rules list --rules, analyze --rules and
# merge hung on it)
mkdir -p "$T/fiforules" "$T/fifoparts"
cp rules/*.json "$T/fiforules/"
mkfifo "$T/fiforules/zz.json" "$T/fifoparts/a.partial.json" "$T/lone.partial.json"
for cmd in "rules check $T/fiforules" "rules list --rules $T/fiforules" \
	"analyze --rules $T/fiforules examples/ai-notebook" "merge $T/fifoparts" \
	"merge $T/lone.partial.json"; do
	# shellcheck disable=SC2086
	timeout 10 $TFD $cmd >"$T/out" 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "\.json: not a regular file" "$T/err"; then ok; else bad "FIFO for $cmd: rc $rc $(cat "$T/err")"; fi
done

# a failed write to standard output is an error for every command (issue
# 35: history, rules list, rules check, help and version exited 0 on it)
if [ -c /dev/full ]; then
	run report -q --history "$T/full.db" -o "$T/full.html" examples/ai-notebook
	for cmd in "history $T/full.db" "history -f csv $T/full.db" "rules list" "rules check rules" \
		"help" "help analyze" "version" "--version" "analyze examples/ai-notebook" \
		"dump examples/ai-notebook" "dot examples/ai-notebook"; do
		# shellcheck disable=SC2086
		$TFD $cmd >/dev/full 2>"$T/err"
		rc=$?
		if [ "$rc" -eq 1 ] && [ "$(grep -vc 'note:' "$T/err")" -eq 1 ] &&
			grep -q "standard output: No space left on device" "$T/err"; then ok; else bad "stdout on /dev/full for $cmd: rc $rc $(cat "$T/err")"; fi
	done
fi

# a rule id is letters, digits, _ . - (issue 35: a newline in one forged a
# line in rules list and reports)
mkdir -p "$T/evilrules"
printf '{"rules":[{"id":"evil\\nforged line","title":"x","class":"sequential_map","family":["Map"],"suggestion":"s"}]}' >"$T/evilrules/a.json"
run rules check "$T/evilrules"
if [ "$rc" -eq 1 ] && [ "$err" = "tfdoctor: $T/evilrules/a.json: rule '#0': field 'id' may hold only letters, digits, '_', '.' and '-'" ]; then ok; else bad "rule id with a newline: rc $rc $err"; fi

# DOT: a stage name ending in a backslash stays inside its quotes (issue 35:
# it escaped the closing quote and swallowed the next statement)
trace_named "$T/bs.trace.json" 'Map\\\\'
run dot -o - "$T/bs.trace.json"
if [ "$rc" -eq 0 ] && printf '%s\n' "$out" | grep -qF 'tooltip="Iterator::Model::Map\\"];' &&
	printf '%s\n' "$out" | grep -qF 'label="Map\\\n20 calls' &&
	printf '%s\n' "$out" | grep -qF 'tooltip="Iterator::Model::Map\\::TFRecord"'; then ok; else bad "DOT backslash: rc $rc $(printf '%s\n' "$out" | grep -F 'Map')"; fi

# another application's SQLite database given as --history is refused and
# left byte for byte as it was (issue 35: tables were added, user_version set
# and the journal switched to WAL); one of ours from before the stamp is
# adopted and stamped
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE notes(x)'); c.execute('INSERT INTO notes VALUES (1)'); c.commit()" "$T/foreign.db"
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('CREATE TABLE runs(x)'); c.execute('PRAGMA user_version=1'); c.commit()" "$T/foreign2.db"
cp "$T/foreign.db" "$T/foreign.orig"
cp "$T/foreign2.db" "$T/foreign2.orig"
for db in foreign foreign2; do
	run report -q --history "$T/$db.db" -o "$T/foreign.html" examples/ai-notebook
	if [ "$rc" -eq 1 ] && [ "$err" = "tfdoctor: $T/$db.db: not a tfdoctor history database (another application's; left untouched)" ] &&
		cmp -s "$T/$db.db" "$T/$db.orig" && [ ! -e "$T/$db.db-wal" ] && [ ! -e "$T/foreign.html" ]; then ok; else bad "foreign history $db: rc $rc $err"; fi
	run history "$T/$db.db"
	if [ "$rc" -eq 1 ] && [ "$err" = "tfdoctor: $T/$db.db: not a tfdoctor history database" ]; then ok; else bad "history on foreign $db: rc $rc $err"; fi
done
run report -q --history "$T/stamp.db" -o "$T/stamp.html" examples/ai-notebook
python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('PRAGMA application_id=0'); c.commit()" "$T/stamp.db"
run report -q --history "$T/stamp.db" -o "$T/stamp.html" examples/smdebug-zip
if [ "$rc" -eq 0 ] && [ "$(python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(c.execute('PRAGMA application_id').fetchone()[0], c.execute('SELECT COUNT(*) FROM runs').fetchone()[0])" "$T/stamp.db")" = "1413891144 2" ]; then ok; else bad "unstamped history adopted: rc $rc $err"; fi

# a report whose output could not be written records nothing (issue 35:
# the run was recorded before stdout failed)
if [ -c /dev/full ]; then
	$TFD report -q --history "$T/unwritten.db" examples/ai-notebook >/dev/full 2>"$T/err"
	rc=$?
	n=$($TFD history -f csv "$T/unwritten.db" | grep -c '^ai-notebook,')
	if [ "$rc" -eq 1 ] && [ "$n" -eq 0 ] && grep -q "standard output: No space left" "$T/err"; then ok; else bad "report to /dev/full recorded: rc $rc, $n runs, $(cat "$T/err")"; fi
	run report -q --history "$T/unwritten.db" -o "$T/written.html" examples/ai-notebook
	n=$($TFD history -f csv "$T/unwritten.db" | grep -c '^ai-notebook,1,')
	if [ "$rc" -eq 0 ] && [ "$n" -eq 1 ]; then ok; else bad "report written, run recorded: rc $rc, $n"; fi
fi

# -o onto SQLite's own files beside the history is refused even before they
# exist (issue 35: SQLite deleted DB-wal on close and the report was lost)
run report -q --history "$T/side.db" -o "$T/side.html" examples/ai-notebook
for sfx in -wal -shm -journal; do
	run report -q --history "$T/side.db" -o "$T/./side.db$sfx" examples/smdebug-zip
	if [ "$rc" -eq 2 ] && [ "$err" = "tfdoctor: refusing to write '$T/./side.db$sfx': it is a file of the history database '$T/side.db' (SQLite removes it)" ]; then ok; else bad "-o history$sfx: rc $rc $err"; fi
done

# over a file-size limit (ulimit -f) a write is an error naming the file
# (issue 35: SIGXFSZ killed the process with 153, leaving FILE.XXXXXX temp
# files, cut synth captures and a 4 KB unreadable history database)
mkdir -p "$T/fsz"
(
	ulimit -f 2
	for c in "analyze -f json -o $T/fsz/a.json" "dump --all -f json -o $T/fsz/d.json" \
		"report -q -o $T/fsz/r.html" "dot -f svg -o $T/fsz/d.svg"; do
		# shellcheck disable=SC2086
		$TFD $c examples/ai-notebook 2>"$T/fsz.err" >/dev/null
		echo "$? $(grep -c 'File too large' "$T/fsz.err")"
	done
	$TFD report -q --history "$T/fsz/h.db" -o - examples/ai-notebook >/dev/null 2>"$T/fsz.err"
	echo "$? $(grep -c 'fsz/h.db' "$T/fsz.err")"
	$TFD synth -q -o "$T/fsz/s" tests/synth/05-batch-heavy.json 2>"$T/fsz.err"
	echo "$? $(grep -c 'write error: File too large' "$T/fsz.err")"
) >"$T/fsz.out" 2>&1
left=$(find "$T/fsz" -type f | wc -l)
if [ "$(sort -u "$T/fsz.out")" = "1 1" ] && [ "$left" -eq 0 ]; then ok; else bad "over ulimit -f: $(tr '\n' ' ' <"$T/fsz.out"), $left files left: $(find "$T/fsz" -type f)"; fi

# merge validates ranges and refuses repeated keys (issue 35: negative
# times, focus -1 and "hosts":[] before the real hosts were accepted)
mkdir -p "$T/badparts"
$TFD analyze -q --partial -o "$T/badparts/ok.partial.json" examples/ai-notebook
python3 - "$T/badparts" <<'PY'
import copy, json, sys
d = sys.argv[1]
ok = json.load(open(d + "/ok.partial.json"))
def put(name, edit):
    x = copy.deepcopy(ok)
    edit(x)
    json.dump(x, open(d + "/" + name + ".partial.json", "w"))
put("neg", lambda x: x["hosts"][0].__setitem__("step_ns", -5))
put("focus", lambda x: x["hosts"][0].__setitem__("focus", -1))
put("lat", lambda x: x["hosts"][0]["pipelines"][0].__setitem__("max_ns", -1))
text = open(d + "/ok.partial.json").read()
open(d + "/dup.partial.json", "w").write(text.replace('"hosts"', '"hosts": [], "hosts"', 1))
PY
for c in "neg:host examples/ai-notebook/ai-notebook.xplane.pb step_ns is out of range" \
	"focus:host examples/ai-notebook/ai-notebook.xplane.pb focus is out of range" \
	"lat:host 0 pipeline 0 max_ns is out of range" "dup:key \"hosts\" given twice in one object"; do
	run merge "$T/badparts/${c%%:*}.partial.json"
	if [ "$rc" -eq 1 ] && printf '%s' "$err" | grep -qF "${c#*:}"; then ok; else bad "merge ${c%%:*}: rc $rc $err"; fi
done

# a JSON report is written as it is made, a megabyte at a time: the file
# holds the whole report, as standard output does; a failed write is one
# error line; a merge that fails leaves the file as it was
mkdir -p "$T/bigparts"
many_hosts "$T/badparts/ok.partial.json" "$T/bigparts/big.partial.json" 400 host- /fleet
echo old >"$T/big.json"
run merge -q -f json -o "$T/big.json" "$T/bigparts/big.partial.json"
$TFD merge -q -f json "$T/bigparts/big.partial.json" >"$T/big.stdout" 2>/dev/null
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["hosts"]))' "$T/big.json" 2>/dev/null)
if [ "$rc" -eq 0 ] && [ "$(wc -c <"$T/big.json")" -gt 1048576 ] && [ "$n" = 400 ] && cmp -s "$T/big.json" "$T/big.stdout"; then ok; else bad "a report written as it is made: rc $rc, $n hosts, $(wc -c <"$T/big.json") bytes $err"; fi
if [ -c /dev/full ]; then
	run merge -q -f json -o /dev/full "$T/bigparts/big.partial.json"
	if [ "$rc" -eq 1 ] && [ "$err" = "tfdoctor: writing '/dev/full': No space left on device" ]; then ok; else bad "a report written as it is made, to /dev/full: rc $rc $err"; fi
fi
run merge -q --allow-mixed -f json -o "$T/big.json" "$T/bigparts/big.partial.json" "$T/badparts/neg.partial.json"
if [ "$rc" -eq 1 ] && cmp -s "$T/big.json" "$T/big.stdout"; then ok; else bad "a failed merge over a report: rc $rc $err"; fi

# a host's pipelines in the JSON report, made as parts of their own (more
# than 16) or as nodes of the host's tree: the same bytes either way
for c in tests/cases/ok/tf221-tf1-eval-70-passes tests/cases/ok/tf221-iterator-per-step examples/ai-notebook; do
	TFDOCTOR_JSON_NODES=0 $TFD analyze -q -f json "$c" >"$T/parts.json" 2>/dev/null
	TFDOCTOR_JSON_NODES=1000000 $TFD analyze -q -f json "$c" >"$T/nodes.json" 2>/dev/null
	if [ -s "$T/parts.json" ] && cmp -s "$T/parts.json" "$T/nodes.json"; then ok; else bad "JSON pipelines as parts and as nodes differ: $c"; fi
done

# partials of different runs are not merged into one report unless asked
# (issue 35: they were, silently)
$TFD analyze -q --partial -o "$T/badparts/other.partial.json" examples/smdebug-zip
run merge "$T/badparts/ok.partial.json" "$T/badparts/other.partial.json"
if [ "$rc" -eq 2 ] && [ "$err" = "tfdoctor: $T/badparts/other.partial.json: a partial of run 'smdebug-zip', but $T/badparts/ok.partial.json is of run 'ai-notebook': partials of different runs are not merged (--allow-mixed merges them)" ]; then ok; else bad "mixed runs: rc $rc $err"; fi
run merge --allow-mixed "$T/badparts/ok.partial.json" "$T/badparts/other.partial.json"
if [ "$rc" -eq 0 ] && printf '%s' "$err" | grep -qF "partials of different runs merged (--allow-mixed): 'ai-notebook' ($T/badparts/ok.partial.json), 'smdebug-zip' ($T/badparts/other.partial.json)"; then ok; else bad "--allow-mixed: rc $rc $err"; fi

# synth specs (issue 35): a FIFO is refused at once, an unknown stage key is
# named (it was read after the tree was freed), the run stays one directory
# under -o, and a spec asking for billions of events fails before allocating
mkfifo "$T/spec.fifo"
timeout 10 $TFD synth -o "$T/sf" "$T/spec.fifo" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "spec.fifo: not a regular file" "$T/err"; then ok; else bad "synth on a FIFO: rc $rc $(cat "$T/err")"; fi
printf '{"stages": [{"kind": "TFRecord", "bogus_key_name": 1}]}' >"$T/uk.json"
run synth -o "$T/uk" "$T/uk.json"
if [ "$rc" -eq 1 ] && [ "$err" = "tfdoctor: $T/uk.json: stage 0: unknown key 'bogus_key_name'" ]; then ok; else bad "synth unknown stage key: $err"; fi
# a stage that is no object (an array: its items have no keys) had
# crashed the spec's reader (found by the spec fuzzer)
printf '{"stages": [[{"kind": "TFRecord"}]]}' >"$T/arr.json"
run synth -o "$T/arr" "$T/arr.json"
if [ "$rc" -eq 1 ] && [ "$err" = "tfdoctor: $T/arr.json: stage 0: not an object" ] && [ -z "$out" ]; then ok; else bad "synth stage not an object: rc $rc $err"; fi
printf '{"zz_top_key": 1, "stages": [{"kind": "TFRecord"}]}' >"$T/uk2.json"
run synth -o "$T/uk" "$T/uk2.json"
if [ "$rc" -eq 1 ] && [ "$err" = "tfdoctor: $T/uk2.json: unknown key 'zz_top_key'" ]; then ok; else bad "synth unknown key: $err"; fi
printf '{"run": "../../../../escaped", "stages": [{"kind": "TFRecord"}]}' >"$T/esc.json"
run synth -o "$T/esc/out" "$T/esc.json"
if [ "$rc" -eq 1 ] && [[ "$err" == *"'run' must be one directory name"* ]] && [ ! -e "$T/escaped" ] && [ ! -e "$T/esc/escaped" ]; then ok; else bad "synth run escaping -o: $rc $err"; fi
printf '{"steps": 1e8, "stages": [{"kind": "TFRecord"}, {"kind": "Batch", "batch_size": 64}]}' >"$T/big.json"
run synth -o "$T/big" "$T/big.json"
if [ "$rc" -eq 1 ] && [[ "$err" == *"asks for about"*"events"*"at most 64000000"* ]] && [ ! -e "$T/big" ]; then ok; else bad "synth steps 1e8: $rc $err"; fi
# device events count against the cap too (20,000 steps x 100,000 device
# events grew past 2.6 GB and left an empty run directory)
printf '{"name": "devbig", "steps": 20000, "device_events_per_step": 100000, "stages": [{"kind": "TFRecord"}, {"kind": "Prefetch"}]}' >"$T/devbig.json"
run synth -o "$T/devbig" "$T/devbig.json"
if [ "$rc" -eq 1 ] && [[ "$err" == *"asks for about"*"at most 64000000"* ]] && [ ! -e "$T/devbig" ]; then ok; else bad "synth device events past the cap: $rc $err"; fi
run synth --scale 1e6 -o "$T/big" tests/synth/01-tfrecord-sequential.json
if [ "$rc" -eq 1 ] && [[ "$err" == *"at most 64000000"* ]]; then ok; else bad "synth --scale 1e6: $rc $err"; fi
printf '{"name": "%s", "stages": [{"kind": "TFRecord"}]}' "$(printf 'n%.0s' $(seq 200))" >"$T/ln.json"
run synth -o "$T/ln" "$T/ln.json"
if [ "$rc" -eq 1 ] && [[ "$err" == *"'name' is longer than 127 characters"* ]]; then ok; else bad "synth long name cut: $rc $err"; fi

# unreadable directories are named, and an unreadable newest run is never
# passed over for an older one (issue 35: "no profiler captures found", or
# the older run analyzed with exit 0). Run as an unprivileged user: root
# reads every directory.
if [ "$(id -u)" = 0 ]; then AS=(setpriv --reuid=65534 --regid=65534 --clear-groups); else AS=(); fi
P="$T/perm/logs/plugins/profile"
mkdir -p "$P/2026_01_01" "$P/2026_01_02"
cp examples/ai-notebook/ai-notebook.xplane.pb "$P/2026_01_01/"
cp examples/ai-notebook/ai-notebook.xplane.pb "$P/2026_01_02/"
chmod 755 "$T" && chmod -R a+rX "$T/perm"
for c in "$P/2026_01_02:$P/2026_01_02: permission denied (run '2026_01_02' is the newest" \
	"$P:$P: permission denied (no capture below it can be listed)" \
	"$T/perm/logs/plugins:$T/perm/logs/plugins: permission denied (no capture below it" \
	"$T/perm/logs:permission denied (no capture in it can be listed)"; do
	d=${c%%:*} want=${c#*:}
	chmod 000 "$d"
	# shellcheck disable=SC2086 # TFD may be "valgrind ... tfdoctor"
	"${AS[@]}" $TFD analyze -q "$T/perm/logs" >/dev/null 2>"$T/perm.err"
	rc=$? err=$(cat "$T/perm.err")
	chmod 755 "$d"
	if [ "$rc" -eq 1 ] && [[ "$err" == "tfdoctor: $T/perm/logs: $want"* ]]; then ok; else bad "unreadable ${d#"$T"/}: rc $rc $err"; fi
done
chmod 000 "$P/2026_01_02"
# shellcheck disable=SC2086
"${AS[@]}" $TFD analyze -q --run 2026_01_01 "$T/perm/logs" >/dev/null 2>"$T/perm.err"
rc=$?
chmod 755 "$P/2026_01_02"
if [ "$rc" -eq 0 ]; then ok; else bad "--run an older readable run: rc $rc $(cat "$T/perm.err")"; fi

# the ops inside dataset functions (issue 36): a real capture's map decodes
# PNGs (its ExecutorState::Process chunks hold the ops, named by long_name
# in the Chrome trace), and a synthesized map's ops read the same from
# XSpace and Chrome
run dump -f json examples/smdebug-8gpu
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
ops = json.load(sys.stdin)["hosts"][0]["function_ops"]
assert [o["type"] for o in ops[:2]] == ["DecodePng", "ParseExampleV2"], ops[:3]
assert ops[0]["events"] == 64 and 100e6 < ops[0]["self_ns"] < 102e6, ops[0]' <<<"$out"; then ok; else bad "function ops of the real capture: $rc $(head -c 300 <<<"$out")"; fi
$TFD synth -q -o "$T/ops" tests/synth/44-decode-heavy-map-and-batch.json
for f in "$T"/ops/plugins/profile/*/worker-0.*; do
	$TFD dump -f json "$f" | python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["hosts"][0]["function_ops"]))'
done >"$T/ops.both"
if [ "$(wc -l <"$T/ops.both")" -eq 2 ] && [ "$(sort -u "$T/ops.both" | wc -l)" -eq 1 ] && grep -q '"type": "DecodeJpegV2"' "$T/ops.both"; then ok; else bad "function ops differ between the twin renderings: $(cat "$T/ops.both")"; fi
run dump examples/smdebug-8gpu
if [[ "$out" == *"ops inside dataset functions: 13 types"*"DecodePng "* ]]; then ok; else bad "dump text lists no function ops"; fi

# an async map's function ops are the map's (analyze text and JSON), and
# they go through a partial and merge unchanged
run analyze -q -f json "$T/ops"
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["summary"]["bottleneck"] == "MapAndBatch" and d["summary"]["bottleneck_top_op"] == "DecodeJpegV2", d["summary"]
st = [s for s in d["hosts"][0]["pipelines"][0]["stages"] if s["name"] == "MapAndBatch"][0]
assert [o["type"] for o in st["function_ops"]] == ["DecodeJpegV2", "ResizeBilinear", "Cast"], st["function_ops"]
assert abs(st["function_ops"][0]["share"] - 0.69) < 0.02, st["function_ops"]
assert 3.0 <= st["effective_parallelism"] <= 4.0, st["effective_parallelism"]  # 4 workers, busy' <<<"$out"; then ok; else bad "function ops of the bottleneck: $rc $(head -c 300 <<<"$out")"; fi
run analyze -q "$T/ops"
if [[ "$(tr -s ' \n' '  ' <<<"$out")" == *"inside MapAndBatch's function (per call "*"): DecodeJpegV2 69%, ResizeBilinear 21%, Cast 10%."* ]]; then ok; else bad "text has no function ops line: $(grep -A1 inside <<<"$out")"; fi
$TFD analyze -q --partial -o "$T/ops.partial.json" "$T/ops"
run merge -q -f json "$T/ops.partial.json"
if [ "$rc" -eq 0 ] && [[ "$out" == *'"bottleneck_top_op": "DecodeJpegV2"'* ]]; then ok; else bad "function ops lost through a partial: $rc $err"; fi
sed 's/"map\/resize:ResizeBilinear"/"map\/resize:Cast"/' "$T/ops.partial.json" >"$T/opsbad.partial.json"
run merge -q "$T/opsbad.partial.json"
if [ "$rc" -eq 1 ] && [[ "$err" == *"function_ops"*"holds a name that is not \"name:type\" of its type"* ]]; then ok; else bad "a bad function op in a partial: $rc $err"; fi

# the function-op rules (issue 36): each fires when its kind of op takes
# the most of a map's function time, and stays quiet on a near miss; a
# py_function map never gets the parallelism advice (T01, T03, T04, T05)
fn_spec() { # OUT TYPE SHARE (the rest of 0.9 a MatMul)
	printf '{"name": "fn", "steps": 40, "step_compute_us": 100, "stages": [{"kind": "TFRecord", "cost_us": 10},
 {"kind": "ParallelMap", "parallelism": 4, "autotune": false, "cost_us": 600,
  "ops": [{"type": "%s", "name": "map/%s", "share": %s}, {"type": "MatMul", "name": "map/MatMul", "share": %s}]},
 {"kind": "Batch", "batch_size": 4, "cost_us": 5}, {"kind": "Prefetch"}]}' "$2" "$2" "$3" "$(awk -v s="$3" 'BEGIN {printf "%.2f", 0.9 - s}')" >"$1"
}
for c in "EagerPyFunc 0.85 TFD-F01 TFD-T03,TFD-T04,TFD-T05" "EagerPyFunc 0.2 TFD-T04 TFD-F01" \
	"DecodeJpegV2 0.7 TFD-F02 TFD-F01" "DecodeJpegV2 0.3 TFD-T04 TFD-F02" \
	"ResizeBilinear 0.7 TFD-F03 TFD-F02" "StringSplitV2 0.7 TFD-F04 TFD-F03" "Cast 0.8 TFD-T04 TFD-F01,TFD-F02,TFD-F03,TFD-F04"; do
	read -r type share want unwanted <<<"$c"
	fn_spec "$T/fn.json" "$type" "$share"
	rm -rf "$T/fn"
	$TFD synth -q -o "$T/fn" "$T/fn.json"
	got=$($TFD analyze -q -f json "$T/fn" | python3 -c 'import json, sys; print(" ".join(f["rule"] for f in json.load(sys.stdin)["findings"]))')
	miss=""
	for u in ${unwanted//,/ }; do [[ " $got " == *" $u "* ]] && miss="$miss $u"; done
	if [[ " $got " == *" $want "* ]] && [ -z "$miss" ]; then ok; else bad "$type at $share: findings '$got' (want $want, not$miss)"; fi
done

# a py_function map: the GIL leaves one worker's worth (Amdahl over the
# Python share), said in text and JSON; op events that cover little of the
# function's time are said too
$TFD synth -q -o "$T/py" tests/synth/43-py-function-map.json
run analyze -q -f json "$T/py"
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
st = [s for s in d["hosts"][0]["pipelines"][0]["stages"] if s["name"] == "ParallelMapV2"][0]
assert 1.0 <= st["effective_parallelism"] <= 1.2, st["effective_parallelism"]
assert st["function_ops_coverage"] > 0.9 and d["summary"]["bottleneck_top_op"] == "EagerPyFunc", st' <<<"$out"; then ok; else bad "effective parallelism of a py_function map: $rc $(head -c 200 <<<"$out")"; fi
run analyze -q "$T/py"
if [[ "$(tr -s ' \n' '  ' <<<"$out")" == *"8 workers, effective parallelism 1.0: EagerPyFunc takes 97% of the function and holds the Python GIL"* ]]; then ok; else bad "the GIL is not said: $(grep -A2 inside <<<"$out")"; fi
# the GIL is the map's capacity: it is the bottleneck, no finding says the
# stages keep up, and without a final prefetch adding one is worth ~1.0x
# (it overlaps the map with the step; the map is as slow), the Python
# finding first
if [[ "$(tr -s ' \n' '  ' <<<"$out")" == *"run EagerPyFunc, which holds the Python GIL: one call at a time"* ]] &&
	[[ "$out" != *"TFD-P03"* ]] && [[ "$out" == *"bottleneck: ParallelMapV2"* ]]; then ok; else bad "the GIL in the capacity: $(head -12 <<<"$out")"; fi
$TFD synth -q -o "$T/pynp" tests/synth/46-py-function-no-prefetch.json
run analyze -q -f json "$T/pynp"
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
rules = [f["rule"] for f in d["findings"]]
p01 = [f for f in d["findings"] if f["rule"] == "TFD-P01"][0]
assert rules[0] == "TFD-F01", rules
assert p01["estimate"]["step_speedup"] <= 1.02, p01["estimate"]
assert d["summary"]["bottleneck"] == "ParallelMapV2", d["summary"]' <<<"$out"; then ok; else bad "py_function map without prefetch: $(head -c 300 <<<"$out")"; fi
fn_spec "$T/low.json" DecodeJpegV2 0.2
sed -i 's/"share": 0.70/"share": 0.05/' "$T/low.json"
$TFD synth -q -o "$T/low" "$T/low.json"
run analyze -q "$T/low"
if [[ "$(tr -s ' \n' '  ' <<<"$out")" == *"(confidence low: the op events cover 25% of the function's time)"* ]]; then ok; else bad "low op coverage is not said: $(grep -A2 inside <<<"$out")"; fi

# function ops in a plane read in blocks on several threads, with step ids
# of 2^63 and more (issue 36: the second key drop crashed, and ids with the
# top bit were taken for thread keys: half of the ops were lost)
python3 - "$T/big.json" <<'PY'
import json, sys
d = json.load(open("tests/bench/tfdata-heavy.json"))
d.pop("description")
d["stages"][1]["ops"] = [{"type": "DecodeJpegV2", "name": "map/decode", "share": 0.5},
                         {"type": "ResizeBilinear", "name": "map/resize", "share": 0.3},
                         {"type": "Cast", "name": "map/Cast", "share": 0.1}]
json.dump(d, open(sys.argv[1], "w"))
PY
$TFD synth -q --scale 5 -o "$T/big" "$T/big.json"
for how in "" "taskset -c 0"; do
	$how $TFD analyze -q -f json "$T/big" >"$T/big.out" 2>"$T/big.err"
	echo "$? $(python3 -c '
import json, sys
st = [s for s in json.load(open(sys.argv[1]))["hosts"][0]["pipelines"][0]["stages"] if "function_ops" in s][0]
print(st["function_ops_coverage"], [o["type"] for o in st["function_ops"]])' "$T/big.out" 2>&1)"
done >"$T/big.res"
if [ "$(sort -u "$T/big.res" | wc -l)" -eq 1 ] && grep -q "^0 0.9 \['DecodeJpegV2', 'ResizeBilinear', 'Cast'\]" "$T/big.res"; then ok; else bad "function ops of a large plane with large ids: $(cat "$T/big.res") $(head -c 200 "$T/big.err")"; fi

# a gzipped trace of more than 768 KB is inflated on a thread of its own,
# ahead of the reader, when a second core is there: the same report as on
# one core, and the same error line when it is cut short, corrupt or over
# the inflate limit
G=$CAPS/tf221-tf1-eval-every-10-chrome/vm.trace.json.gz
python3 - "$G" "$T" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
open(sys.argv[2] + "/cut.trace.json.gz", "wb").write(d[: len(d) * 2 // 3])
e = bytearray(d)
e[len(d) // 2] ^= 0x5A
open(sys.argv[2] + "/bent.trace.json.gz", "wb").write(bytes(e))
PY
for g in "$G" "$T/cut.trace.json.gz" "$T/bent.trace.json.gz" "--max-inflated=5M $G"; do
	# shellcheck disable=SC2086 # the case's options and file, split
	$TFD analyze -q -f json $g >"$T/gz2.out" 2>&1
	r2=$?
	# shellcheck disable=SC2086
	taskset -c 0 $TFD analyze -q -f json $g >"$T/gz1.out" 2>&1
	r1=$?
	if [ "$r1" = "$r2" ] && cmp -s "$T/gz1.out" "$T/gz2.out" && { [ "$g" = "$G" ] || [ "$r1" = 1 ]; }; then ok; else bad "gzip inflated ahead ($g): $r2 against $r1 on one core: $(head -c 200 "$T/gz2.out")"; fi
done

# a sequential map's function runs inline, in its own iterator calls: its
# ops are the map's too
$TFD synth -q -o "$T/seq" tests/synth/45-string-heavy-sync-map.json
run analyze -q -f json "$T/seq"
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["summary"]["bottleneck"] == "Map" and d["summary"]["bottleneck_top_op"] == "StringSplitV2", d["summary"]
assert "TFD-F04" in [f["rule"] for f in d["findings"]]' <<<"$out"; then ok; else bad "a sequential map's function ops: $rc $(head -c 300 <<<"$out")"; fi

# a parallel map whose function left no op events: said, not guessed
$TFD synth -q -o "$T/noops" tests/synth/04-parallel-map-at-limit.json
run analyze -q "$T/noops"
if [[ "$(tr -s ' \n' '  ' <<<"$out")" == *"inside ParallelMapV2's function: no op events were captured"* ]]; then ok; else bad "a map without op events: $(grep -A1 inside <<<"$out")"; fi

# two parallel maps whose functions run as ::Run on pool threads that run
# no iterator calls (a function without inter-op parallelism): each pool
# thread is the map that hands it elements, so each map gets its own work
# and ops (both were "not captured" and the limit only inferred)
cat > "$T/pool.json" <<'EOF2'
{"name": "two-maps-on-pools", "steps": 60, "step_compute_us": 200, "function_events": "run",
 "stages": [{"kind": "TFRecord", "cost_us": 50},
            {"kind": "ParallelMap", "parallelism": 4, "cost_us": 3000,
             "ops": [{"type": "Transpose", "name": "map/transpose", "share": 0.76},
                     {"type": "Cast", "name": "map/Cast", "share": 0.2}]},
            {"kind": "ParallelMap", "parallelism": 2, "cost_us": 400,
             "ops": [{"type": "Mul", "name": "map_1/mul", "share": 0.9}]},
            {"kind": "Prefetch"}]}
EOF2
$TFD synth -q -o "$T/pool" "$T/pool.json"
run analyze -q -f json "$T/pool"
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
p = d["hosts"][0]["pipelines"][0]
tops = {s["long_name"].count("ParallelMapV2"): s["function_ops"][0]["type"] for s in p["stages"] if "function_ops" in s}
assert tops == {1: "Mul", 2: "Transpose"}, tops
assert d["summary"]["bottleneck_top_op"] == "Transpose" and p["capacity"]["inferred"] is False, d["summary"]' <<<"$out"; then ok; else bad "maps on pool threads: $rc $(head -c 300 <<<"$out")"; fi

# a real capture with one root call (no capacity model): its maps still get
# their ops (two parallel maps decode and parse, a sequential map flips)
run analyze -q -f json examples/smdebug-8gpu
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
tops = sorted((s["name"], s["function_ops"][0]["type"]) for p in d["hosts"][0]["pipelines"] for s in p["stages"] if "function_ops" in s)
assert ("ParallelMapV2", "DecodePng") in tops and ("ParallelMapV2", "ParseExampleV2") in tops and ("Map", "Mul") in tops, tops
assert d["summary"]["bottleneck"] == "Map" and d["summary"]["bottleneck_top_op"] == "Mul", d["summary"]' <<<"$out"; then ok; else bad "the real capture's function ops: $rc $(head -c 300 <<<"$out")"; fi

# a host whose pipeline's Python holds the GIL: after next()'s GetNext has
# returned the loop waits for the lock (the end of its Python call,
# TFE_Py_FastPathExecute_C); counted as input, the host is MODERATELY
# input-bound (6.6 %; the truth 11.1 %, xprof NOT, 0.9 %): TFD-H10, not
# "nothing to change" (H01) nor H04 (which said NOT, 0.9 %)
run analyze -q -f json examples/real-py-function-map/vm.xplane.pb
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(sys.stdin)
h = d["hosts"][0]
rules = {f["rule"]: f["severity"] for f in d["findings"]}
assert h["input_bound"] == "moderately" and h["gil_wait_ns"] > 0.5 * h["wait_ns"], (h["input_percent"], h["gil_wait_ns"], h["wait_ns"])
assert rules.get("TFD-H10") == "medium" and "TFD-H01" not in rules and "TFD-H04" not in rules, rules' <<<"$out"; then ok; else bad "TFD-H10 on a py_function job: $(head -c 300 <<<"$out")"; fi
run analyze -q examples/real-py-function-map/vm.xplane.pb
if [[ "$(unwrap <<<"$out")" == *"the GIL: "*" came after next()'s GetNext had returned, the loop waiting for the interpreter's lock before next() could return."* ]]; then ok; else bad "the GIL line: $(head -8 <<<"$out")"; fi
run analyze -q -f json examples/real-light-pipeline/vm.xplane.pb
if [ "$rc" -eq 0 ] && [[ "$out" != *"TFD-H04"* ]] && [[ "$out" == *"TFD-H01"* ]]; then ok; else bad "TFD-H04 near miss: $(head -c 300 <<<"$out")"; fi

# an idle map's workers are not "one at a time": the line is only for a
# map whose calls keep a worker busy (the real no-prefetch job's 2 workers
# run at 0.6 on average)
run analyze -q examples/real-missing-prefetch/vm.xplane.pb
if [ "$rc" -eq 0 ] && [[ "$(unwrap <<<"$out")" != *"its calls run about one at a time"* ]]; then ok; else bad "an idle map said serial: $(grep -A2 inside <<<"$out")"; fi
# nor a map whose pipeline keeps up with the step (16 workers on 2 cores,
# 1.4 busy on average because little is asked); nor are the cores said to
# limit below the 82.2 root elements/s they deliver. A map at its limit
# whose 2 workers overlap little is said to run one call at a time.
run analyze -q tests/cases/ok/tf221-map-16-workers-2-cores/vm.xplane.pb
if [[ "$out" == "verdict: NOT input-bound"* ]] && [[ "$(unwrap <<<"$out")" != *"one at a time"* ]] &&
	[[ "$(unwrap <<<"$out")" != *"cores are the limit"* ]]; then ok; else bad "16 workers keeping up: $(sed -n 1,16p <<<"$out")"; fi
run analyze -q examples/real-autotune-map-saturated
if [[ "$(unwrap <<<"$out")" == *"2 workers, effective parallelism 1.5: its calls run about one at a time"* ]]; then ok; else bad "a map at its limit, one call at a time: $(grep -A2 inside <<<"$out")"; fi

# regressions the docs promise: a night whose input is mostly copies to the
# device records that as its limit, so a pipeline stage next night is
# "bottleneck moved"; a new top finding at the same (high) severity is a
# regression too (D01 one night, F01 the next)
$TFD synth -q -o "$T/rg-dev" tests/device/heavy.json
$TFD synth -q -o "$T/rg-py" tests/synth/43-py-function-map.json
$TFD report -q --history "$T/rg.db" --job j --timestamp 2026-01-01T00:00:00Z -f json -o "$T/rg1.json" "$T/rg-dev"
$TFD report -q --history "$T/rg.db" --job j --timestamp 2026-01-02T00:00:00Z -f json -o "$T/rg2.json" "$T/rg-py"
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
regs = d["jobs"][0]["regressions"]
kinds = {r["kind"]: r["text"] for r in regs}
assert "from copies to the device" in kinds.get("bottleneck", ""), regs
assert "new high finding TFD-F01" in kinds.get("severity", ""), regs' "$T/rg2.json"; then ok; else bad "regressions: moved from copies, a new high finding: $(head -c 400 "$T/rg2.json")"; fi

# AUTOTUNE's ramp: the map's parallelism is the value in force over the
# window (it was the first call's, 1: "1 worker busy 365%" and the map named
# while the reader limits), and the change is said
$TFD synth -q -o "$T/ramp" tests/synth/47-autotune-ramp.json
run analyze -q "$T/ramp"
if [[ "$(unwrap <<<"$out")" == *"bottleneck: TFRecord"* ]] && [[ "$(unwrap <<<"$out")" == *"parallelism went from "[0-9]" to 8 in the window (AUTOTUNE)"* ]] &&
	! grep -qE 'busy [0-9]{4,}%|busy (1[1-9][0-9]|[2-9][0-9][0-9])%' <<<"$out"; then ok; else bad "an AUTOTUNE ramp: $(head -16 <<<"$out")"; fi

# a prefetch whose buffer AUTOTUNE grows: said under the segments and in
# JSON, the rate model unchanged (the map stays the limit)
cat > "$T/buframp.json" <<'EOF2'
{"name": "prefetch-buffer-ramp", "steps": 120, "step_compute_us": 300,
 "stages": [{"kind": "TFRecord", "cost_us": 30},
            {"kind": "ParallelMap", "parallelism": 4, "cost_us": 800},
            {"kind": "Batch", "batch_size": 2, "cost_us": 5},
            {"kind": "Prefetch", "buffer": 8, "ramp": [[0, 1], [30, 4], [60, 8]]}]}
EOF2
$TFD synth -q -o "$T/br" "$T/buframp.json"
run analyze -q "$T/br"
if [[ "$(unwrap <<<"$out")" == *"bottleneck: ParallelMapV2"* ]] && [[ "$(unwrap <<<"$out")" == *"buffer_limit went from 1 to 8 in the window (AUTOTUNE)"* ]]; then ok; else bad "a prefetch buffer ramp: $(head -16 <<<"$out")"; fi
run analyze -q -f json "$T/br"
if python3 -c '
import json, sys
d = json.load(sys.stdin)
r = [g["buffer_limit_range"] for g in d["hosts"][0]["pipelines"][0]["capacity"]["segments"] if "buffer_limit_range" in g]
assert r == [[1, 8]], r' <<<"$out"; then ok; else bad "buffer_limit_range: $(head -c 300 <<<"$out")"; fi
printf '{"steps": 5, "stages": [{"kind": "TFRecord"}, {"kind": "Prefetch", "buffer": 2, "ramp": [[0, 3]]}]}' >"$T/badramp.json"
run synth -q -o "$T/badramp" "$T/badramp.json"
if [ "$rc" -ne 0 ] && [[ "$err" == *"badramp.json: stage 1: ramp pairs are [element, workers or buffer]"* ]]; then ok; else bad "a prefetch ramp past its buffer: $rc $err"; fi

# stragglers: a fleet's host whose steps are over 1.2x the median host's is
# named with the reason the data gives (worker-2 reads 3x slower: it waits
# for input); the other workers and a single host name none
$TFD synth -q -o "$T/slow" tests/synth/16-multi-host-slow-worker.json
run analyze -q "$T/slow"
if [[ "$(unwrap <<<"$out")" == *"straggler: worker-2's steps take "*"x the median host's (mean "*", p90 "*"): it waits for input "*"% of its step against "*"% on the median host (its bottleneck: TFRecord)."* ]] &&
	[ "$(grep -c '^straggler' <<<"$out")" = 1 ]; then ok; else bad "the slow worker as a straggler: $(grep -A2 straggler <<<"$out")"; fi
run analyze -q -f json "$T/slow"
if python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]["stragglers"]
assert [(x["host"], x["why"]) for x in s] == [("worker-2", "input")] and 1.4 < s[0]["ratio"] < 3.5, s
assert s[0]["p90_step_ns"] >= s[0]["mean_step_ns"] * 0.9 and s[0]["median_host_step_ns"] < s[0]["mean_step_ns"], s' <<<"$out"; then ok; else bad "stragglers in JSON: $(head -c 300 <<<"$out")"; fi
run report -q --no-record --timestamp 2026-11-20T02:00:00Z -f md -o - "$T/slow"
if [[ "$out" == *"**Stragglers:**"*"- worker-2's steps take "*"it waits for input"* ]]; then ok; else bad "a straggler in the Markdown report: $(grep -A3 Straggl <<<"$out")"; fi
run report -q --no-record --timestamp 2026-11-20T02:00:00Z -o - "$T/slow"
if [[ "$out" == *"<p><b>straggler:</b> worker-2&#39;s steps take "* || "$out" == *"<p><b>straggler:</b> worker-2's steps take "* ]]; then ok; else bad "a straggler in the HTML report: $(grep -o 'straggler:[^<]*' <<<"$out" | head -2)"; fi
run analyze -q -f json tests/synth/../../examples/real-light-pipeline/vm.xplane.pb
if python3 -c 'import json, sys; assert json.load(sys.stdin)["summary"]["stragglers"] == []' <<<"$out"; then ok; else bad "a single host has no straggler"; fi

# a step broken down as TensorBoard's overview does, as far as the device
# planes tell: the real multi-worker GPU capture's 95% that no device event
# covers is said to be the device idle with no input wait, and what it may be
run analyze -q tests/cases/ok/tfprof-demo-gpu-multi-worker
if [[ "$(unwrap <<<"$out")" == *"a step (mean over those steps): device compute 27.245 ms, input 6.044 ms (host wait 4.693 ms, copying input to the GPU 1.35 ms), device-to-host 35.232 us; the device idle with no input wait 636.992 ms (95%): host compute, kernel launches or other host work, which the device planes do not tell apart."* ]]; then ok; else bad "the step breakdown: $(grep -A4 'a step' <<<"$out")"; fi

# a capture with steps and no tf.data: JSON says nothing is too short, as
# the text, HTML and Markdown do (it said too_short with the profiling hint)
cat >"$T/notf.trace.json" <<'EOF2'
{"displayTimeUnit":"ns","traceEvents":[
{"ph":"M","pid":1,"name":"process_name","args":{"name":"/host:CPU"}},
{"ph":"M","pid":1,"tid":2,"name":"thread_name","args":{"name":"python"}},
{"ph":"X","pid":1,"tid":2,"name":"train_function","ts":0,"dur":1000,"args":{"group_id":"0"}},
{"ph":"X","pid":1,"tid":2,"name":"train_function","ts":1100,"dur":1000,"args":{"group_id":"1"}}
]}
EOF2
run analyze -q -f json "$T/notf.trace.json"
if [ "$rc" = 0 ] && python3 -c '
import json, sys
s = json.load(sys.stdin)["summary"]
assert s["tfdata_found"] is False and s["too_short"] is None, s' <<<"$out"; then ok; else bad "too_short without tf.data: $(head -c 300 <<<"$out")"; fi

# markup stored in a shared history is data: escaped in the HTML report,
# and fields of a known form (time stamp, severity, rule id) that are not
# of it read as "?"
$TFD report -q --history "$T/mk.db" --job j --timestamp 2026-01-01T00:00:00Z -o "$T/mk0.html" "$T/rg-py" 2>/dev/null
python3 - "$T/mk.db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("UPDATE runs SET recorded_at = '2026-<script>alert(1)</script>'")
c.execute("UPDATE hosts SET top_rule = '<img src=x onerror=alert(2)>' || hex(randomblob(300)), top_severity = '<b>high</b>', bottleneck = '<i>x</i>'")
c.commit()
PY
$TFD report -q --history "$T/mk.db" --job j --timestamp 2026-01-02T00:00:00Z -o "$T/mk.html" "$T/rg-py" 2>"$T/err"
if [ $? -eq 0 ] && ! grep -q '<script\|<img\|<b>high\|<i>x' "$T/mk.html"; then ok; else bad "stored markup in the history table: $(grep -o '<script[^<]*\|<img[^>]*>\|<b>high' "$T/mk.html" | head -3)"; fi

# a PostgreSQL password never reaches an error line: in the user part, in a
# password= parameter (any case, percent-encoded key, the second of two),
# sslpassword (no server: port 1 refuses)
for u in 'postgresql://bob:s3cret@127.0.0.1:1/db' 'postgresql://bob@127.0.0.1:1/db?pass%77ord=s3cret' \
	'postgresql://127.0.0.1:1/db?password=a&password=s3cret' 'postgresql://127.0.0.1:1/db?PASSWORD=s3cret&x=1' \
	'postgresql://b%40x:s3cret@127.0.0.1:1/db' 'postgresql://127.0.0.1:1/db?sslpassword=s3cret'; do
	run history "$u"
	if [ "$rc" -ne 0 ] && [[ "$err" != *s3cret* ]] && [[ "$err" == *"***"* ]]; then ok; else bad "password shown: $err"; fi
done

# a capture that shrinks while it is read (a writer still copying it, a log
# rotated) is one error line naming the file, never a SIGBUS (exit 135);
# whether the truncation lands mid-read depends on timing, so three tries at
# different delays: each must end 0 (read first) or with the line
cat >"$T/big.json" <<'JSON'
{"name": "big", "formats": ["xplane"], "steps": 60000, "step_compute_us": 100,
 "stages": [{"kind": "TFRecord", "cost_us": 20}, {"kind": "ParallelMap", "parallelism": 4, "cost_us": 50},
            {"kind": "Batch", "batch_size": 8, "cost_us": 5}, {"kind": "Prefetch"}]}
JSON
$TFD synth -q -o "$T/big" "$T/big.json"
BIG=$(ls "$T"/big/plugins/profile/*/*.xplane.pb)
shrink_while_read "$BIG" 1000000 "shrink.xplane.pb: .*the file shrank while it was read" 0.05 0.15 0.3
rm -f "$T/big.json" "$BIG"

# a UTF-8 byte-order mark before a Chrome trace is read as JSON (it was a
# "corrupt XSpace protobuf"); a file of white space says so
printf '\xef\xbb\xbf' >"$T/bom.trace.json"
cat examples/smdebug-8gpu/ip-172-31-19-241.trace.json >>"$T/bom.trace.json"
run analyze -q -f json "$T/bom.trace.json"
if [ "$rc" -eq 0 ] && [[ "$out" == *'"tfdata_found": true'* ]]; then ok; else bad "a BOM before JSON: $rc $err"; fi
printf '\n\n' >"$T/ws.trace.json"
run analyze "$T/ws.trace.json"
if [ "$rc" -eq 1 ] && [[ "$err" == *"ws.trace.json: only white space, no capture"* ]]; then ok; else bad "white space only: $rc $err"; fi
# CSV keeps a formula a name starts with inert: =HYPERLINK(...) behind a '
$TFD report -q --history "$T/csv.db" --job '=HYPERLINK("http://x","y")' --timestamp 2026-01-01T00:00:00Z -o "$T/csv.html" examples/smdebug-zip 2>/dev/null
run history -f csv "$T/csv.db"
if [ "$rc" -eq 0 ] && grep -q "^\"'=HYPERLINK" <<<"$out" && ! grep -q '^"=\|^=' <<<"$out"; then ok; else bad "CSV formula: $out"; fi

# an output name of 248-255 bytes is written (its temporary name was longer
# than the file system allows)
LONGN=$(printf 'r%.0s' $(seq 1 247)).txt
run analyze -q -o "$T/$LONGN" examples/smdebug-zip
if [ "$rc" -eq 0 ] && [ -s "$T/$LONGN" ]; then ok; else bad "a 251-byte output name: $rc $err"; fi
rm -f "$T/$LONGN"

# a history path with a leading double slash reads as report wrote it
mkdir -p "$T/dbl"
$TFD report -q --history "/$T/dbl/h.db" --job j -o "$T/dbl/r.html" examples/smdebug-zip
run history "/$T/dbl/h.db"
if [ "$rc" -eq 0 ] && [[ "$out" == *"1 run, 1 job"* ]]; then ok; else bad "history //path: $rc $err"; fi

# the same capture given twice (a directory twice, a host's .xplane.pb and
# its own .trace.json.gz) is read once, with a note; it counted twice
run analyze -f json examples/real-tfrecord-seq-map examples/real-tfrecord-seq-map
if [ "$rc" -eq 0 ] && [ "$(grep -c '"host": "vm' <<<"$out")" -ge 1 ] && python3 -c '
import json, sys; d = json.load(sys.stdin); assert len(d["hosts"]) == 1, [h["host"] for h in d["hosts"]]' <<<"$out" &&
	[[ "$err" == *"skipped examples/real-tfrecord-seq-map/vm.xplane.pb: the same file as"* ]]; then ok; else bad "a directory twice: $err"; fi
run analyze -q -f json examples/ai-notebook/ai-notebook.xplane.pb examples/ai-notebook/ai-notebook.trace.json.gz
if [ "$rc" -eq 0 ] && python3 -c '
import json, sys; d = json.load(sys.stdin); assert len(d["hosts"]) == 1 and d["hosts"][0]["file"].endswith(".xplane.pb"), d["hosts"]' <<<"$out"; then ok; else bad "a host in two formats: $rc $err"; fi

# report's format and its file name agree, as dot's: -f md -o rep.html is a
# usage error (it was written silently), -o rep.md alone is Markdown
run report --no-record -f md -o "$T/rep.html" examples/smdebug-zip
if [ "$rc" -eq 2 ] && [[ "$err" == *"-f md does not match the file name"* ]] && [ ! -e "$T/rep.html" ]; then ok; else bad "report -f md -o x.html: $rc $err"; fi
run report -q --no-record -o "$T/rep.md" examples/smdebug-zip
if [ "$rc" -eq 0 ] && head -1 "$T/rep.md" | grep -q '^# tf.data pipeline health'; then ok; else bad "report -o x.md: $rc $err"; fi

# a capture too short to judge leads with the span to profile instead, in
# text, JSON, HTML and Markdown (every line said "confidence low")
run analyze examples/smdebug-zip
if [[ "$(head -1 <<<"$out")" == "capture too short to judge: 1 step. Profile 20 steps or more after warm-up"* ]] &&
	[[ "$(unwrap <<<"$out")" == *'Trace("train", step_num=step, _r=1)'* ]]; then ok; else bad "too short, text: $(head -3 <<<"$out")"; fi
run analyze -q -f json examples/smdebug-zip
if python3 -c '
import json, sys; t = json.load(sys.stdin)["summary"]["too_short"]
assert t["steps"] == 1 and t["want_steps"] == 20 and "profile_batch=(10, 30)" in t["hint"], t' <<<"$out"; then ok; else bad "too short, JSON"; fi
run report -q --no-record --job j examples/smdebug-zip
if grep -q 'data-kind="too-short">capture too short to judge: 1 step' <<<"$out"; then ok; else bad "too short, HTML"; fi
run analyze -q -f json examples/real-tfrecord-seq-map/vm.xplane.pb
if [[ "$out" == *'"too_short": null'* ]]; then ok; else bad "a 30-step capture is not too short"; fi

# device spans that all fall outside the steps (an hour's clock offset) were
# dropped with no word and the verdict kept high confidence
$TFD synth -q -o "$T/dshift" tests/device/heavy.json
python3 - "$(ls "$T"/dshift/plugins/profile/*/*.trace.json)" "$T/dshift.trace.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
pids = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
        and e["args"]["name"].startswith("/device")}
for e in ev:
    if e.get("pid") in pids and "ts" in e:
        e["ts"] += 3.6e9
json.dump(d, open(sys.argv[2], "w"))
PY
run analyze -q "$T/dshift.trace.json"
if [ "$rc" -eq 0 ] && [[ "$(unwrap <<<"$out")" == *"confidence in the verdict: low (the device planes' 280 spans all fall outside the steps, so device time is not counted"* ]]; then ok; else bad "device spans outside the steps: $(grep -A2 'confidence in the verdict' <<<"$out")"; fi

# a Chrome group_id past 64 bits (2^64, 1e308) names no step: the spans are
# placed by time (they all went to step 0); the share is the one with ids
python3 - "$(ls "$T"/dshift/plugins/profile/*/*.trace.json)" "$T/g64.trace.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"] if isinstance(d, dict) else d
pids = {e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"
        and e["args"]["name"].startswith("/device")}
for i, e in enumerate(ev):
    if e.get("pid") in pids and "group_id" in e.get("args", {}):
        e["args"]["group_id"] = 18446744073709551616 if i % 2 else 1e308
json.dump(d, open(sys.argv[2], "w"))
PY
a=$($TFD analyze -q -f json "$(ls "$T"/dshift/plugins/profile/*/*.trace.json)" | grep -m1 '"host_to_device_percent"')
b=$($TFD analyze -q -f json "$T/g64.trace.json" | grep -m1 '"host_to_device_percent"')
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "group_id past 64 bits: $a vs $b"; fi

# a device's plane written twice in an XSpace is read once (its copies'
# bytes per step were doubled)
$TFD synth -q -o "$T/dpl" tests/device/heavy.json
python3 tests/device/tools/dup-plane.py "$(ls "$T"/dpl/plugins/profile/*/*.xplane.pb)" "$T/dup.xplane.pb"
a=$($TFD analyze -q -f json "$(ls "$T"/dpl/plugins/profile/*/*.xplane.pb)" | grep -m1 '"host_to_device_bytes_per_step"')
b=$($TFD analyze -q -f json "$T/dup.xplane.pb" | grep -m1 '"host_to_device_bytes_per_step"')
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "a device plane twice: $a vs $b"; fi

# the hosts table keeps its columns with long host names (the name column
# widens, up to 60; a longer name stands on its own line above its numbers)
mkdir -p "$T/lh"
cp examples/real-light-pipeline/vm.xplane.pb "$T/lh/a-very-long-host-name-of-a-kubernetes-pod-worker-0-abcdef12345.xplane.pb"
cp examples/real-tfrecord-seq-map/vm.xplane.pb "$T/lh/w1.xplane.pb"
run analyze -q "$T/lh"
hdr=$(grep -m1 '^  host ' <<<"$out")
row=$(grep -m1 '^  vm (w1.xplane.pb)' <<<"$out")
if [ -n "$hdr" ] && [ -n "$row" ] && [ "$(awk -v h="$hdr" 'BEGIN { print index(h, "input %") + 6 }')" = "$(awk -v r="$row" 'BEGIN { print index(r, "27.1") + 3 }')" ] &&
	grep -q '^  vm (a-very-long-host-name.*\.xplane\.pb)$' <<<"$out"; then ok; else bad "hosts table with a long name: $(grep -A3 '^  host ' <<<"$out")"; fi

# device planes without events are said (the 8-GPU capture's eight)
run analyze -q -f json examples/smdebug-8gpu
if [[ "$out" == *"8 of 8 device planes hold no events (/device:GPU:0 ... /device:GPU:7)"* ]]; then ok; else bad "empty device planes not said"; fi

# a device line whose header fields come after its events (legal protobuf
# order) reads the same (its timestamp was missed and the verdict flipped
# from HIGHLY to NOT input-bound)
python3 tests/device/tools/header-last.py "$(ls "$T"/dpl/plugins/profile/*/*.xplane.pb)" "$T/hlast.xplane.pb"
a=$($TFD analyze -q -f json "$(ls "$T"/dpl/plugins/profile/*/*.xplane.pb)" | grep -m1 '"input_percent"')
b=$($TFD analyze -q -f json "$T/hlast.xplane.pb" | grep -m1 '"input_percent"')
if [ -n "$a" ] && [ "$a" = "$b" ]; then ok; else bad "device line header after its events: $a vs $b"; fi

# a device line's timestamp past what a time can be (beyond 2^61 ns) is one
# error line naming the plane, as a host line's is (the plane was dropped
# with no word)
python3 tests/device/tools/line-ts.py "$(ls "$T"/dpl/plugins/profile/*/*.xplane.pb)" "$T/lts.xplane.pb" 4611686018427387904
run analyze -q "$T/lts.xplane.pb"
if [ "$rc" -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && [[ "$err" == *"lts.xplane.pb"*"plane '/device:GPU:0': timestamp out of range"* ]]; then ok; else bad "a device timestamp past 2^61: $rc $err"; fi


# a read-only file system and a full disk are said as such (they were "not a
# usable SQLite database" and "cannot migrate the history schema" when no
# migration was due), and --no-record reads a history on a read-only file
# system (it needed write access). A tmpfs of its own: root in a mount
# namespace, else skipped.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	mkdir -p "$T/fs"
	# shellcheck disable=SC2016
	unshare -m bash -c '
		TFD=$1 D=$2 E=$3 A=examples/real-tfrecord-seq-map B=examples/smdebug-8gpu
		mount -t tmpfs -o size=2m tmpfs "$D" || exit 9
		$TFD report -q --history "$D/h.db" -o - $A >/dev/null 2>&1 || echo "seed failed"
		mount -o remount,ro "$D"
		$TFD report -q --no-record --history "$D/h.db" -o - $B >/dev/null 2>"$E.norec"
		echo "norec $?"
		$TFD report -q --history "$D/h.db" -o - $B >/dev/null 2>"$E.rec"
		echo "rec $?"
		$TFD report -q --history "$D/new.db" -o - $B >/dev/null 2>"$E.new"
		echo "new $?"
		mount -o remount,rw "$D"
		dd if=/dev/zero of="$D/fill" bs=4k 2>/dev/null
		$TFD report -q --history "$D/h.db" -o - $A >/dev/null 2>"$E.full"
		echo "full $?"
	' _ "$TFD" "$T/fs" "$T/fs-err" >"$T/fs.out" 2>&1
	[ "$(tr '\n' ' ' <"$T/fs.out")" = "norec 0 rec 1 new 1 full 1 " ] && [ ! -s "$T/fs-err.norec" ] &&
		ok || bad "history on a read-only or full file system: $(cat "$T/fs.out" "$T/fs-err.norec")"
	ro="cannot write the history database: the file system is read-only"
	[[ "$(cat "$T/fs-err.rec")" == *"h.db: $ro ("*"); 'report --no-record' and 'history' only read it" ]] &&
		[ "$(wc -l <"$T/fs-err.rec")" = 1 ] && ok || bad "recording on a read-only file system: $(cat "$T/fs-err.rec")"
	[[ "$(cat "$T/fs-err.new")" == *"new.db: $ro ("*")" ]] && ok ||
		bad "creating on a read-only file system: $(cat "$T/fs-err.new")"
	[[ "$(cat "$T/fs-err.full")" == *"h.db: cannot write the history database: the disk is full ("*")" ]] &&
		ok || bad "a full disk: $(cat "$T/fs-err.full")"
else
	echo "cli: skipped the read-only and full file system cases (needs root and unshare)"
fi

finish
