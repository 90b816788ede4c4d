#!/usr/bin/env bash
# tfdoctor diff BEFORE AFTER: pairs of synth captures where AFTER is BEFORE
# with one finding's change applied to its spec (a sequential map made
# parallel, a slow map made cheap), in reverse (worse), against itself,
# and as partials; the bad inputs and usage errors. Ends with
# "diff: N passed, N failed".
set -u
SUITE=diff
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
j() { python3 -c "import json, sys; d = json.load(sys.stdin); $1" <<<"$out"; }

# BEFORE: a sequential map decoding images is the bottleneck (TFD-T01)
cat >"$T/seq.json" <<'SPEC'
{"name": "seq-map", "steps": 60, "step_compute_us": 300,
 "stages": [{"kind": "TFRecord", "cost_us": 30},
            {"kind": "Map", "cost_us": 900,
             "ops": [{"type": "DecodeJpegV2", "name": "map/decode", "share": 0.8}]},
            {"kind": "Batch", "batch_size": 2, "cost_us": 5}, {"kind": "Prefetch"}]}
SPEC
# AFTER: TFD-T01's change (num_parallel_calls): the map runs on 8 workers
sed 's/"kind": "Map", "cost_us": 900/"kind": "ParallelMap", "parallelism": 8, "cost_us": 900/' \
	"$T/seq.json" >"$T/par.json"
# AFTER2: the map's work made cheap (TFD-F02's change): no longer input-bound
sed 's/"kind": "Map", "cost_us": 900/"kind": "Map", "cost_us": 40/' "$T/seq.json" >"$T/cheap.json"
for s in seq par cheap; do $TFD synth -q -o "$T/$s" "$T/$s.json"; done

# the change helped: the map made parallel is still the bottleneck (the
# same stage, one row "Map -> ParallelMapV2"), T01 resolved
# with its estimate beside the measured step time, step time down
run diff -q -f json "$T/seq" "$T/par"
if [ "$rc" = 0 ] && j '
assert d["kind"] == "diff" and d["result"] == "better", d["result"]
assert d["bottleneck_move"] == "same", d["bottleneck_move"]
assert d["before"]["bottleneck"]["stage"] == "Map" and d["after"]["bottleneck"]["stage"] == "ParallelMapV2"
assert d["step_speedup"] > 2, d["step_speedup"]
st = {f["rule"]: f for f in d["findings"] if f["status"] == "resolved"}
assert "TFD-T01" in st and st["TFD-T01"]["estimated_step_speedup"] > 1, st
# the estimate is within a third of what was measured
assert abs(st["TFD-T01"]["estimated_step_speedup"] / d["step_speedup"] - 1) < 0.34, (st, d["step_speedup"])'; then ok; else bad "seq -> par (json): $rc $(head -c 400 <<<"$out") $err"; fi
run diff -q "$T/seq" "$T/par"
if [ "$rc" = 0 ] && [[ "$(unwrap <<<"$out")" == *"bottleneck Map (inside: DecodeJpegV2) -> ParallelMapV2 (inside: DecodeJpegV2) (same)"* ]] &&
	[[ "$(unwrap <<<"$out")" == *"resolved [high] TFD-T01 Sequential map"*"it estimated the step "*"x faster; measured "*"x (the estimate was "* ]] &&
	[[ "$out" == *"result       better: input share -"* ]] &&
	[ "$(grep -c -- '-> .*ParallelMapV2 .*\[B\] .*\[B\]' <<<"$out")" = 1 ]; then ok; else bad "seq -> par (text): $rc $out"; fi
run diff -q -f md "$T/seq" "$T/par"
if [ "$rc" = 0 ] && [[ "$out" == *"**Better**"* ]] && [[ "$out" == *"| bottleneck | Map | ParallelMapV2 (same) |"* ]] &&
	[[ "$out" == *"- **resolved** \`TFD-T01\`"* ]]; then ok; else bad "seq -> par (md): $rc $out"; fi

# the bottleneck removed: the map made cheap, the host no longer input-bound
run diff -q -f json "$T/seq" "$T/cheap"
if [ "$rc" = 0 ] && j '
assert d["bottleneck_move"] == "removed" and d["after"]["bottleneck"] is None, d["bottleneck_move"]
assert d["after"]["verdict"] == "not" and d["result"] == "better", d["after"]'; then ok; else bad "seq -> cheap: $rc $(head -c 400 <<<"$out")"; fi

# the change made it worse: --fail-on worse exits 3 (the report is written)
run diff -q --fail-on worse "$T/par" "$T/seq"
if [ "$rc" = 3 ] && [[ "$out" == *"result       WORSE: input share +"* ]]; then ok; else bad "par -> seq --fail-on worse: $rc $out"; fi
# a capture against itself: the same, --fail-on worse passes
run diff -q --fail-on worse -f json "$T/seq" "$T/seq"
if [ "$rc" = 0 ] && j '
assert d["result"] == "same" and d["bottleneck_move"] == "same" and d["step_speedup"] == 1, d
assert all(f["status"] == "still" for f in d["findings"]), d["findings"]'; then ok; else bad "seq -> seq: $rc $(head -c 300 <<<"$out")"; fi
# a wide margin says "no change" where 5 % says better
run diff -q -f json --margin 100 "$T/seq" "$T/par"
if [ "$rc" = 0 ] && j 'assert d["result"] == "same" and d["margin"] == 100, d["result"]'; then ok; else bad "--margin 100: $rc $(head -c 300 <<<"$out")"; fi

# partials compare as their captures do
$TFD analyze -q --partial -o "$T/seq.partial.json" "$T/seq"
$TFD analyze -q --partial -o "$T/par.partial.json" "$T/par"
run diff -q -f json "$T/seq" "$T/par"
want=$out
run diff -q -f json "$T/seq.partial.json" "$T/par.partial.json"
if [ "$rc" = 0 ] && [ "$(j 'd["before"]["path"] = d["after"]["path"] = ""; print(json.dumps(d))')" = "$(out=$want j 'd["before"]["path"] = d["after"]["path"] = ""; print(json.dumps(d))')" ]; then ok; else bad "partials differ from their captures: $rc $err"; fi

# a host named on both sides, and one that is not there
$TFD synth -q -o "$T/fleet" tests/synth/16-multi-host-slow-worker.json
run diff -q -H worker-1 -f json "$T/fleet" "$T/fleet"
if [ "$rc" = 0 ] && j 'assert d["before"]["host"] == "worker-1" == d["after"]["host"], d["before"]["host"]'; then ok; else bad "-H worker-1: $rc $err"; fi
run diff -q -H nosuch "$T/fleet" "$T/fleet"
if [ "$rc" = 2 ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == *"no host named 'nosuch' in the first capture"* ]]; then ok; else bad "-H nosuch: $rc $err"; fi

# bad inputs: one error line naming the file, exit 1, no report
run diff -q "$T/seq" "$T/missing"
if [ "$rc" = 1 ] && [ -z "$out" ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == *"$T/missing"* ]]; then ok; else bad "a missing capture: $rc $err"; fi
printf 'garbage' >"$T/bad.xplane.pb"
run diff -q "$T/bad.xplane.pb" "$T/seq"
if [ "$rc" = 1 ] && [ -z "$out" ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == *"bad.xplane.pb"* ]]; then ok; else bad "a corrupt capture: $rc $err"; fi
# usage: exit 2, one line
for args in "$T/seq" "$T/seq $T/par $T/seq" "-f html $T/seq $T/par" "--margin 0 $T/seq $T/par" \
	"--margin x $T/seq $T/par" "--fail-on input-bound $T/seq $T/par"; do
	# shellcheck disable=SC2086
	run diff -q $args
	if [ "$rc" = 2 ] && [ -z "$out" ] && [ "$(wc -l <<<"$err")" = 1 ] && [[ "$err" == "tfdoctor: diff: "* ]]; then ok; else bad "usage '$args': $rc $err"; fi
done
# the output is never one of the inputs
cp "$T/seq.partial.json" "$T/keep.partial.json"
run diff -q -o "$T/keep.partial.json" "$T/keep.partial.json" "$T/par.partial.json"
if [ "$rc" = 2 ] && cmp -s "$T/seq.partial.json" "$T/keep.partial.json"; then ok; else bad "-o an input: $rc $err"; fi
# and the help names the command's options
run diff --help
if [ "$rc" = 0 ] && [[ "$out" == *"usage: tfdoctor diff [options] BEFORE AFTER"* ]] && [[ "$out" == *"--margin N"* ]]; then ok; else bad "diff --help: $rc"; fi
# stages that share a name are told apart in the table and the findings
# (a real capture: TensorFlow parallelized the stateless map under the
# fixed-parallelism one)
run diff examples/real-slices-fixed-par1 examples/real-slices-fixed-par1
if [[ "$out" == *"  BatchV2::ParallelMapV2 "* ]] && [[ "$out" == *"  ParallelMapV2::ParallelMapV2 "* ]] &&
	[[ "$out" == *"autotuned (BatchV2::ParallelMapV2)"* ]]; then ok; else bad "diff of namesake stages: $out"; fi
# a nightly job whose map was made parallel between two nights: the same
# stage is still the limit, no "bottleneck moved" regression, and the
# finding that now leads (T04 after T01, both high) is no new problem: the
# input share fell; no regression at all
$TFD report -q --history "$T/par.db" --job j --timestamp 2026-01-01T00:00:00Z -f json -o "$T/n1.json" "$T/seq"
$TFD report -q --history "$T/par.db" --job j --timestamp 2026-01-02T00:00:00Z -f json -o "$T/n2.json" "$T/par"
if python3 -c '
import json, sys
regs = json.load(open(sys.argv[1]))["jobs"][0]["regressions"]
assert not regs, regs' "$T/n2.json"; then ok; else bad "a map made parallel is no moved bottleneck: $(head -c 400 "$T/n2.json")"; fi

# real captures: a loop that made a new iterator each step, then the same
# loop with one iterator (TFD-H09's change): the new iterators are the
# before's bottleneck, H09 resolved with its estimate against the capture's
run diff -q tests/cases/ok/tf221-iterator-per-step tests/cases/ok/tf221-one-iterator
if [[ "$out" == *"bottleneck   a new iterator each step -> none (removed)"* ]] &&
	[[ "$out" == *"resolved  [high] TFD-H09"*"it estimated the step 2.22x faster; measured 2.46x"* ]]; then ok; else bad "diff of a new iterator each step: $(head -12 <<<"$out")"; fi
run diff -q -f json tests/cases/ok/tf221-iterator-per-step tests/cases/ok/tf221-one-iterator
if j 'assert d["before"]["bottleneck"]["new_iterator_each_step"] is True, d["before"]["bottleneck"]'; then ok; else bad "diff JSON of a new iterator each step: $(head -c 300 <<<"$out")"; fi

# a final prefetch added (TFD-P01's change): every stage's path gains the
# prefetch above it, and each is still matched to itself (they had been
# listed apart, before-only and after-only); the new prefetch is new. The
# step's change, with three estimates resolved at once, is no one's audit
run diff -q -f json examples/real-missing-prefetch tests/cases/ok/tf221-prefetch-added
if j 'rows = {r["name"]: r for r in d["stages"]}
assert len(d["stages"]) == 6, [r["path"] for r in d["stages"]]
for n in ("Root", "BatchV2", "Range"):
    assert rows[n]["before"] and rows[n]["after"], rows[n]
assert rows["Prefetch"]["before"] is None and rows["Prefetch"]["after"], rows["Prefetch"]'; then ok; else bad "diff with a prefetch added: $(head -c 400 <<<"$out")"; fi
run diff -q examples/real-missing-prefetch tests/cases/ok/tf221-prefetch-added
if [[ "$(unwrap <<<"$out")" == *"TFD-P01 No prefetch at the end of the pipeline it estimated the step 1.43x faster; measured "*"x with 3 estimates resolved at once"* ]] &&
	[[ "$out" != *"the estimate was"* ]]; then ok; else bad "diff, several estimates resolved: $(grep -A1 resolved <<<"$out")"; fi

# Keras fit on a PyDataset with 2 worker processes, 24-step epochs (Keras
# stops and restarts the workers at each end: half the time between the
# steps) -> endless with 96-step epochs (measured 1.94x over the whole
# fit): the step time alone barely moves; the time a step with the
# stretches between the steps halves, and the diff says so
run diff -q -f json tests/cases/ok/tf221-keras3-pydataset-processes tests/cases/ok/tf221-keras3-pydataset-processes-long-epochs
if j 's0, s1 = d["before"], d["after"]
assert 45 < s0["between_steps_pct"] < 56 and s1["between_steps_pct"] < 30, (s0["between_steps_pct"], s1["between_steps_pct"])
assert 1.6 < s0["span_step_ns"] / s1["span_step_ns"] < 2.3, (s0["span_step_ns"], s1["span_step_ns"])
assert "time a step with the stretches between the steps -" in d["why"], d["why"]'; then ok; else bad "diff, longer epochs: $(head -c 400 <<<"$out")"; fi
run diff -q tests/cases/ok/tf221-keras3-pydataset-processes tests/cases/ok/tf221-keras3-pydataset-processes-long-epochs
if [[ "$out" == *"  between      50.9% -> 24.0% of the time from the first step to the last (a step with them: "* ]]; then ok; else bad "diff, longer epochs (text): $(grep -A1 between <<<"$out")"; fi
# H12 resolved (a rule of the user's that says it from 30 %: 24 % after) is
# measured by the time a step with the stretches, 8.6 -> 4.5 ms (the job
# unprofiled 1.94x), not by the steps' own time
mkdir -p "$T/h12rules"
python3 - "$T/h12rules/r.json" <<'PY'
import json, sys
r = [x for x in json.load(open("rules/40-host.json"))["rules"] if x["id"] == "TFD-H12"][0]
r["when"] = [{"metric": "between_steps_percent", "op": ">=", "value": 30}]
json.dump({"rules": [r]}, open(sys.argv[1], "w"))
PY
run diff -q --rules "$T/h12rules" tests/cases/ok/tf221-keras3-pydataset-processes tests/cases/ok/tf221-keras3-pydataset-processes-long-epochs
if [[ "$(unwrap <<<"$out")" == *"TFD-H12 Long stretches between the steps: the loop stops training for other work it estimated a step with the stretches between them 1.62x faster; measured 1.90x (the estimate was 15% low)"* ]]; then ok; else bad "diff, H12 resolved: $(grep -A1 H12 <<<"$out")"; fi
# with no long stretch on either side the line is not there
run diff -q examples/real-missing-prefetch tests/cases/ok/tf221-prefetch-added
if [[ "$out" != *"  between   "* ]]; then ok; else bad "diff, no stretches: $(grep between <<<"$out")"; fi

finish
