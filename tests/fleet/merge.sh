#!/usr/bin/env bash
# Map and reduce: `analyze --partial` per host file, then `merge` (and
# `report` on a directory of partials) must give byte for byte the report,
# notes and exit code of analyzing the whole run directory at once; bad
# partials give one error line naming the file. Ends with
# "merge: N passed, N failed".
# Usage: TFD=build/rel/tfdoctor tests/fleet/merge.sh   (from the repository root)
set -u
SUITE=merge
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}

# partials DIR OUT N [ANALYZE OPTIONS]: N fleet tasks over the host files of
# DIR (--shard i/N: some get several hosts, some none when N is larger)
partials() {
	local dir=$1 out=$2 n=$3 i
	shift 3
	mkdir -p "$out"
	for ((i = 0; i < n; i++)); do
		if ! $TFD analyze -q --partial --shard "$i/$n" "$@" -o "$out/task-$i.partial.json" "$dir"; then
			bad "analyze --partial --shard $i/$n $dir failed"
			return 1
		fi
	done
}

# same LABEL CMD1 -- CMD2: stdout, stderr and exit code identical
same() {
	local label=$1 a=() b=()
	shift
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	$TFD "${a[@]}" >"$T/a.out" 2>"$T/a.err"
	local ra=$?
	$TFD "${b[@]}" >"$T/b.out" 2>"$T/b.err"
	local rb=$?
	if [ "$ra" != "$rb" ]; then bad "$label: exit $ra direct, $rb merged"; return; fi
	if ! cmp -s "$T/a.out" "$T/b.out"; then
		bad "$label: reports differ: $(diff "$T/a.out" "$T/b.out" | head -4 | tr '\n' ' ')"
		return
	fi
	if ! cmp -s "$T/a.err" "$T/b.err"; then bad "$label: notes differ"; return; fi
	ok
}

# ---- identity on every synth spec (multi-host ones have 2 to 4 hosts) ----
nspecs=0
for spec in tests/synth/*.json; do
	name=$(basename "$spec" .json)
	log=$T/s-$name
	$TFD synth -o "$log" "$spec" >/dev/null 2>&1 || { bad "synth $name"; continue; }
	run_dir=$(ls -d "$log"/plugins/profile/*)
	partials "$run_dir" "$T/p-$name" 3 || continue
	nspecs=$((nspecs + 1))
	same "$name text" analyze "$run_dir" -- merge "$T/p-$name"
	same "$name json" analyze -f json --fail-on input-bound "$run_dir" -- \
		merge -f json --fail-on input-bound "$T/p-$name"/*.partial.json
	same "$name gate" analyze --fail-on severity=medium "$run_dir" -- \
		merge --fail-on severity=medium "$T/p-$name"
done
[ "$nspecs" -ge 40 ] && ok || bad "only $nspecs synth specs checked"

# the multi-host ones, further: --host, the report, per-host options
for name in 16-multi-host-slow-worker 17-multi-host-parallel-map 40-multi-host-source-behind-pmap; do
	run_dir=$(ls -d "$T/s-$name"/plugins/profile/*)
	# one task per host file, as the Slurm recipe runs it
	nh=$(ls "$run_dir"/*.xplane.pb | wc -l)
	partials "$run_dir" "$T/h-$name" "$nh" || continue
	same "$name one task per host" analyze -f json "$run_dir" -- merge -f json "$T/h-$name"
	# the same host file analyzed directly (what a task given one file does)
	for f in "$run_dir"/*.xplane.pb; do
		$TFD analyze -q --partial -o "$T/f-$name-$(basename "$f").partial.json" "$f"
	done
	same "$name one file per task" analyze -f json "$run_dir"/*.xplane.pb -- merge -f json "$T"/f-"$name"-*.partial.json
	same "$name --host" analyze -f json -H worker-0 "$run_dir" -- merge -f json -H worker-0 "$T/p-$name"
	same "$name bad --host" analyze -H nosuch "$run_dir" -- merge -H nosuch "$T/p-$name"
	for fmt in json md html; do
		same "$name report $fmt" report -q -f "$fmt" --timestamp 2026-11-20T02:00:00Z --job j "$run_dir" -- \
			report -q -f "$fmt" --timestamp 2026-11-20T02:00:00Z --job j "$T/p-$name"
	done
	partials "$run_dir" "$T/nw-$name" 2 --no-warmup || continue
	same "$name --no-warmup" analyze -f json --no-warmup "$run_dir" -- merge -f json "$T/nw-$name"
	same "$name analyze takes partials" analyze -f json "$run_dir" -- analyze -f json "$T/p-$name"
	same "$name dot" dot "$run_dir" -- dot "$T/p-$name"
done

# partials written into the run directory leave it a run directory
cp "$T/p-$name"/task-0.partial.json "$run_dir/"
same "$name partials beside captures" analyze -f json "$T/p-$name" -- analyze -f json "$run_dir"
rm -f "$run_dir"/*.partial.json

# a partial of several hosts at once merges with nothing else
name=17-multi-host-parallel-map
run_dir=$(ls -d "$T/s-$name"/plugins/profile/*)
$TFD analyze -q --partial -o "$T/all.partial.json" "$run_dir"
same "one partial of a run" analyze -f json "$run_dir" -- merge -f json "$T/all.partial.json"

# ---- long captures: steps grouped into chart points; partials stay small ----
for scale in 40 400; do
	$TFD synth --scale $scale -o "$T/long$scale" tests/synth/16-multi-host-slow-worker.json >/dev/null
	run_dir=$(ls -d "$T/long$scale"/plugins/profile/*)
	partials "$run_dir" "$T/lp$scale" 2 || continue
	same "x$scale json" analyze -f json "$run_dir" -- merge -f json "$T/lp$scale"
	same "x$scale html" report -q --timestamp 2026-11-20T02:00:00Z --job j "$run_dir" -- \
		report -q --timestamp 2026-11-20T02:00:00Z --job j "$T/lp$scale"
done
grep -qE '"steps_per_point": ([2-9]|[1-9][0-9]+),' <($TFD analyze -f json "$run_dir") && ok || bad "no grouped step points at x400"
small=$(stat -c %s "$T/lp40/task-0.partial.json")
big=$(stat -c %s "$T/lp400/task-0.partial.json")
[ "$big" -lt $((small * 2)) ] && ok || bad "a partial grows with the steps: $small bytes at x40, $big at x400"

# ---- the real captures (one host each; Chrome, gzip, XSpace, TF 2.0) ----
nreal=0
while IFS= read -r f; do
	b=$(basename "$f")
	nreal=$((nreal + 1))
	$TFD analyze -q --partial -o "$T/real-$nreal.partial.json" "$f" || { bad "partial $f"; continue; }
	same "real $b" analyze -f json "$f" -- merge -f json "$T/real-$nreal.partial.json"
	same "real $b text" analyze "$f" -- merge "$T/real-$nreal.partial.json"
	same "real $b report" report -q -f md --timestamp 2026-11-20T02:00:00Z --job j "$f" -- \
		report -q -f md --timestamp 2026-11-20T02:00:00Z --job j "$T/real-$nreal.partial.json"
done < <(find tests/cases/ok examples -type f \( -name '*.xplane.pb' -o -name '*.trace.json' \
	-o -name '*.trace.json.gz' -o -name 'local.trace' \) | sort)
[ "$nreal" -ge 7 ] && ok || bad "only $nreal real captures checked"

# ---- usage and bad partials: one line, the file named ----------------------
P=$T/p-16-multi-host-slow-worker
first=$(ls "$P"/*.partial.json | head -1)
run merge "$first" tests/cases/ok/ai-notebook.xplane.pb
[ "$rc" = 2 ] && ok || bad "mixed inputs: exit $rc"
run merge tests/cases/ok/ai-notebook.xplane.pb
[ "$rc" = 2 ] && [[ "$err" == *"not a partial result"* ]] && ok || bad "merge of a capture: $rc $err"
run analyze --partial -f json tests/cases/ok/ai-notebook.xplane.pb
[ "$rc" = 2 ] && ok || bad "--partial with --format: exit $rc"
run merge --no-warmup "$P"
[ "$rc" = 2 ] && [[ "$err" == *"partials carry it"* ]] && ok || bad "merge --no-warmup: $rc $err"
run merge --low-memory "$P"
[ "$rc" = 2 ] && [[ "$err" == *"--low-memory is an option of 'analyze --partial'"* ]] && ok || bad "merge --low-memory: $rc $err"
for s in 3/3 x/2 -1/2 1/0 2 1/2/3; do
	run analyze --partial --shard "$s" "$run_dir"
	[ "$rc" = 2 ] && ok || bad "--shard $s: exit $rc"
done
run analyze --shard 0/2 "$run_dir"
[ "$rc" = 2 ] && ok || bad "--shard without --partial: exit $rc"


# expect_bad FILE PATTERN: merge exits 1 with one line naming FILE
expect_bad() {
	local f=$1 pat=$2
	run merge "$f"
	if [ "$rc" != 1 ] || [ -n "$out" ] || [ "$(wc -l <"$T/err")" -ne 1 ]; then
		bad "$f: exit $rc, stderr: $err"
		return
	fi
	[[ "$err" == "tfdoctor: $f: "* ]] && [[ "$err" == *$pat* ]] && ok || bad "$f: $err"
}
B=$T/bad
mkdir -p "$B"
: >"$B/empty.partial.json"
expect_bad "$B/empty.partial.json" "empty file"
head -c 300 "$first" >"$B/cut.partial.json"
expect_bad "$B/cut.partial.json" "broken JSON"
echo '{"traceEvents": []}' >"$B/foreign.partial.json"
expect_bad "$B/foreign.partial.json" "not a tfdoctor partial"
sed 's/"version":[0-9]*/"version":99/' "$first" >"$B/future.partial.json"
expect_bad "$B/future.partial.json" "version 99"
sed 's/"version":[0-9]*/"version":1/' "$first" >"$B/old.partial.json"
expect_bad "$B/old.partial.json" "reads versions 2 to 13"
# a version 2 partial (before the segments' cycle_length and buffer_limit
# ranges, the hosts' p90 step time and the capacity's demand_from_steps),
# a version 4 one (before demand_from_steps), a version 5 one (before
# the waits between step markers, the pipelines iterated anew and a loop
# inside a tf.function) and a version 6 one (before the maps' median call
# and uneven share, and whether Python calls took turns), a version 7
# one (before the time spent making iterators and waiting for the GIL), a
# version 8 one (before the pipelines read between the steps), a version 9
# one (before the pauses between the steps) and a version 10 one (before
# the host's long gaps between its steps), a version 11 one (before the
# count of iterators the loop made) and a version 12 one (before each
# pipeline's first call and the session runs between the steps) still merge, to the same report
# (the synthesized capture's demand is its consumer's, its markers hold
# next(); its map's calls are even; it has no pauses nor long gaps)
python3 - "$first" "$T" <<'PY'
import json, sys
def drop(o, key):
    if isinstance(o, dict):
        o.pop(key, None)
        for x in o.values():
            drop(x, key)
    elif isinstance(o, list):
        for x in o:
            drop(x, key)


for v in (2, 4, 5, 6, 7, 8, 9, 10, 11, 12):
    d = json.load(open(sys.argv[1]))
    d["version"] = v
    for h in d["hosts"]:
        h.pop("between_session_ns")
        for p in h["pipelines"]:
            p.pop("first_call_ns")
    if v == 12:
        json.dump(d, open("%s/v%d.partial.json" % (sys.argv[2], v), "w"))
        continue
    for h in d["hosts"]:
        h.pop("iterators_made")
    if v == 11:
        json.dump(d, open("%s/v%d.partial.json" % (sys.argv[2], v), "w"))
        continue
    for h in d["hosts"]:
        for k in ("between_ns", "steps_span_ns", "nbetween", "between_pass_ns",
                  "between_wait_ns", "between_create_ns"):
            h.pop(k)
    if v == 10:
        json.dump(d, open("%s/v%d.partial.json" % (sys.argv[2], v), "w"))
        continue
    drop(d["hosts"], "pause_ns")
    drop(d["hosts"], "npauses")
    if v == 9:
        json.dump(d, open("%s/v%d.partial.json" % (sys.argv[2], v), "w"))
        continue
    drop(d["hosts"], "outside_steps")
    if v == 8:
        json.dump(d, open("%s/v%d.partial.json" % (sys.argv[2], v), "w"))
        continue
    drop(d["hosts"], "create_ns")
    drop(d["hosts"], "gil_ns")
    for h in d["hosts"]:
        if v == 7:
            continue
        for p in h["pipelines"]:
            for s in p["stages"]:
                s.pop("fn_p50_ns")
                s.pop("fn_uneven_share")
            for k in ("python_side_by_side", "python_take_turns"):
                (p.get("capacity") or {}).pop(k, None)
        if v == 6:
            continue
        for k in ("gaps_counted", "gap_wait_ns", "markers_pct", "loop_in_function",
                  "loop_startup_ns", "loop_steps_ns"):
            h.pop(k)
        for p in h["pipelines"]:
            p.pop("repeat_of1")
        if v < 4:
            h.pop("step_p90_ns", None)
        for p in h["pipelines"] if v < 5 else []:
            (p.get("capacity") or {}).pop("demand_from_steps", None)
            for g in p.get("segments") or [] if v < 3 else []:
                for k in ("cyc_lo", "cyc_hi", "buf_lo", "buf_hi"):
                    g.pop(k, None)
    json.dump(d, open("%s/v%d.partial.json" % (sys.argv[2], v), "w"))
PY
run merge -q -f json "$first"
cur=$out
# (the span of the steps, which version 11 added, is 0 from older ones)
cur=$(grep -v '"steps_span_ns"' <<<"$cur")
for v in 2 4 5 6 7 8 9 10 11 12; do
	run merge -q -f json "$T/v$v.partial.json"
	out=$(grep -v '"steps_span_ns"' <<<"$out")
	if [ -n "$out" ] && [ "$out" = "$cur" ]; then ok; else bad "a version $v partial: $(diff <(echo "$out") <(echo "$cur") | head -5)"; fi
done
# through a partial, the report the capture gives: a dataset iterated anew
# each epoch (three pipelines, one standing for them), and Keras'
# validation passes read between the training steps (no advice for them)
# and its pauses
through_partial() { # CAPTURE NAME WANT
	$TFD analyze -q --partial -o "$T/$2.partial.json" "$1"
	run merge -q "$T/$2.partial.json"
	local merged=$out
	run analyze -q "$1"
	if [ -n "$out" ] && [ "$merged" = "$out" ] && [[ "$out" == *"$3"* ]]; then ok; else bad "$2 through a partial: $(diff <(echo "$merged") <(echo "$out") | head -5)"; fi
}
through_partial tests/cases/ok/tf221-iterator-per-epoch ep "the findings are Host:1's"
through_partial tests/cases/ok/tf221-keras3-fit-validation kv "read between the training steps"
# and the pauses between them, left out of the training pipeline's window
through_partial tests/cases/ok/tf221-keras3-fit-validation kp "of pauses between the steps"
# and the long gaps between the steps (TFD-H12)
through_partial tests/cases/ok/tf221-keras3-fit-validation kg "TFD-H12 Long stretches between the steps"
# a repeat that names no pipeline of its own is refused
sed 's/"repeat_of1":2/"repeat_of1":1/' "$T/ep.partial.json" >"$B/repeat.partial.json"
expect_bad "$B/repeat.partial.json" "repeat_of1 names no pipeline of its own"
sed 's/"bottleneck":[-0-9]*/"bottleneck":999/' "$first" >"$B/index.partial.json"
expect_bad "$B/index.partial.json" "bottleneck is out of range"
sed 's/"input_pct":/"input_pcx":/' "$first" >"$B/missing.partial.json"
expect_bad "$B/missing.partial.json" "input_pct is missing"
sed 's/"step_ns":[0-9]*/"step_ns":"12x"/' "$first" >"$B/type.partial.json"
expect_bad "$B/type.partial.json" "step_ns is not an integer"
sed 's/"critpath":\[/"critpath":[77,/' "$first" >"$B/crit.partial.json"
expect_bad "$B/crit.partial.json" "critpath holds a stage index out of range"
# a stage made its own ancestor: refused, never a loop
python3 - "$first" "$B/cycle.partial.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
st = d["hosts"][0]["pipelines"][0]["stages"]
st[1]["parent"] = len(st) - 1
json.dump(d, open(sys.argv[2], "w"))
PY
expect_bad "$B/cycle.partial.json" "parent breaks the stage tree"
sed 's/"nsteps_seen":\([0-9]*\)/"nsteps_seen":9\1/' "$first" >"$B/points.partial.json"
expect_bad "$B/points.partial.json" "step_points"
echo '[1,2' >"$B/arr.partial.json"
expect_bad "$B/arr.partial.json" "broken JSON"
# the partials of a directory are parsed one ahead on a second core: the
# first bad one in name order is named (a broken one after it too, and the
# good ones around them), the same with one core; and a directory of good
# ones merges to the same report on one core and on two
O=$T/order
mkdir -p "$O/bad" "$O/good"
python3 - "$first" "$O" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
h = d["hosts"][0]
for i in range(6):
    g = dict(d)
    g["hosts"] = [dict(h, name="h%d" % i, path="/r/h%d.xplane.pb" % i)]
    json.dump(g, open("%s/good/p%d.partial.json" % (sys.argv[2], i), "w"))
    if i == 2:
        open("%s/bad/p%d.partial.json" % (sys.argv[2], i), "w").write(json.dumps(g)[:200])
    elif i == 4:
        open("%s/bad/p%d.partial.json" % (sys.argv[2], i), "w").write("{")
    else:
        json.dump(g, open("%s/bad/p%d.partial.json" % (sys.argv[2], i), "w"))
PY
run merge "$O/bad"
[ "$rc" = 1 ] && [ "$err" = "tfdoctor: $O/bad/p2.partial.json: broken JSON near byte 199 (not a tfdoctor partial)" ] && ok || bad "first bad partial of a directory: $rc $err"
if command -v taskset >/dev/null; then
	taskset -c 0 "$TFD" merge "$O/bad" >/dev/null 2>"$T/one.err"
	cmp -s "$T/err" "$T/one.err" && ok || bad "one core names another bad partial: $(cat "$T/one.err")"
	$TFD merge -f json "$O/good" >"$T/two.out" 2>&1
	taskset -c 0 "$TFD" merge -f json "$O/good" >"$T/one.out" 2>&1
	cmp -s "$T/one.out" "$T/two.out" && grep -q '"h5"' "$T/two.out" && ok || bad "merge on one core and two differ"
fi
# every task empty: nothing to merge
$TFD analyze -q --partial --shard 7/9 -o "$B/zero.partial.json" "$run_dir"
expect_bad "$B/zero.partial.json" "no hosts"
mkdir -p "$B/none"
run merge "$B/none"
[ "$rc" = 2 ] && ok || bad "empty directory: exit $rc ($err)"
# a fleet's text report stays readable: the hosts table lists the 64 most
# input-bound hosts, the pipelines of the first 16 are drawn; JSON has all
many_hosts "$first" "$T/fleet70.partial.json" 70 w /fleet/run
run merge -q "$T/fleet70.partial.json"
if [ "$rc" = 0 ] && [[ "$out" == *"... and 6 more hosts, less input-bound (-f json lists every host)"* ]] &&
	[ "$(grep -c '^== host' <<<"$out")" = 16 ] && [[ "$out" == *"pipelines of the 16 most input-bound hosts are shown"* ]]; then ok; else bad "a 70-host text report: $rc $(grep -c '^== host' <<<"$out") sections"; fi
run merge -q -f json "$T/fleet70.partial.json"
if python3 -c 'import json, sys; assert len(json.load(sys.stdin)["hosts"]) == 70' <<<"$out"; then ok; else bad "a 70-host JSON report: $(head -c 200 <<<"$out")"; fi

# the same host twice
cp "$first" "$B/dup.partial.json"
run merge "$first" "$B/dup.partial.json"
[ "$rc" = 1 ] && [[ "$err" == *"merged twice"* ]] && ok || bad "duplicate host: $rc $err"
# partials made with different options
nw=$(ls "$T/nw-16-multi-host-slow-worker"/*.partial.json | head -1)
run merge "$first" "$nw"
[ "$rc" = 2 ] && [[ "$err" == *"other analyze options"* ]] && ok || bad "mixed options: $rc $err"

# percentages are range-checked: a partial's input share of -50, 2^31, a
# number past a double or "inf" is one error line naming the field (it was
# merged and printed as "HIGHLY input-bound: -50.0%")
$TFD analyze -q --partial -o "$T/pct.partial.json" examples/smdebug-8gpu
for v in -50 2147483648 1e999 '"inf"' 100.5; do
	sed -E "s/\"input_pct\":[^,}]*/\"input_pct\":$v/" "$T/pct.partial.json" >"$T/bad-pct.partial.json"
	run merge "$T/bad-pct.partial.json"
	[ "$rc" = 1 ] && [[ "$err" == *"input_pct is not a percentage (0 to 100)"* ]] && [ -z "$out" ] && ok ||
		bad "input_pct $v: $rc $err $(head -c 100 <<<"$out")"
done
sed -E 's/"input_pct":[^,}]*/"input_pct":"nan"/' "$T/pct.partial.json" >"$T/nan-pct.partial.json"
run merge -q "$T/nan-pct.partial.json"
[ "$rc" = 0 ] && ok || bad "input_pct unknown (nan) is legal: $rc $err"

# a key no reader knows (a typo, a newer writer's field, an edit) is one
# error line naming its path: it was merged and its data dropped silently
python3 - "$T/pct.partial.json" "$T/unk" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
def put(name, edit):
    d = json.load(open(src))
    edit(d)
    json.dump(d, open(out + "-" + name + ".partial.json", "w"))
put("top", lambda d: d.update(extra=1))
put("host", lambda d: d["hosts"][0].update(input_pcx=5))
put("stage", lambda d: d["hosts"][0]["pipelines"][0]["stages"][0].update(bogus={"a": [1]}))
put("opt", lambda d: d["options"].update(cache=True))
PY
for c in "top:extra" "host:hosts[0].input_pcx" "stage:hosts[0].pipelines[0].stages[0].bogus" \
	"opt:options.cache"; do
	run merge "$T/unk-${c%%:*}.partial.json"
	[ "$rc" = 1 ] && [[ "$err" == *"unknown key ${c#*:} "* ]] && [ -z "$out" ] &&
		[ "$(wc -l <<<"$err")" = 1 ] && ok || bad "unknown key ${c#*:}: $rc $err"
done
run merge -q "$T/pct.partial.json"
[ "$rc" = 0 ] && ok || bad "a partial as written has no unknown key: $rc $err"
# a partial JSON allows but tfdoctor does not write (a form feed before
# it: read by cJSON, not by the strict reader, so its members go uncounted)
# is read the same, and its unknown keys are found the same
printf '\f' | cat - "$T/pct.partial.json" >"$T/lax.partial.json"
printf '\f' | cat - "$T/unk-host.partial.json" >"$T/lax-unk.partial.json"
run merge -q -f json "$T/lax.partial.json"
[ "$rc" = 0 ] && [ "$out" = "$("$TFD" merge -q -f json "$T/pct.partial.json")" ] && ok ||
	bad "a lax partial reads as the strict one: $rc $err"
run merge "$T/lax-unk.partial.json"
[ "$rc" = 1 ] && [[ "$err" == *"unknown key hosts[0].input_pcx "* ]] && ok ||
	bad "a lax partial's unknown key: $rc $err"

finish
