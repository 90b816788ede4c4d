#!/usr/bin/env bash
# tfdoctor watch: exactly one analysis per complete run, none of a partial
# file, one line for a run that never completes, clean exit on SIGTERM.
# Small settle and poll times keep it to a few seconds.
# Ends with "watch: N passed, N failed".
set -u
SUITE=watch
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
X=examples/smdebug-8gpu/ip-172-31-19-241.trace.json
A=examples/ai-notebook/ai-notebook.xplane.pb
L=$T/logs
P=$L/job/train/plugins/profile
mkdir -p "$P/old" "$T/chunks" "$T/reports"
cp $A "$P/old/"
split -b 100000 $X "$T/chunks/c"

# 1. one watcher: a slow writer, a truncated file, a run removed mid-way
export TFD_TEST_EXEC_LOG=$T/exec.log
$TFD watch --settle 1 --poll 0.2 --timeout 5 -f json --out-dir "$T/reports" \
	--exec 'echo "$TFDOCTOR_RUN|$TFDOCTOR_VERDICT|$TFDOCTOR_BOTTLENECK|$TFDOCTOR_REPORT" >>"$TFD_TEST_EXEC_LOG"' \
	"$L" >"$T/w1.out" 2>"$T/w1.err" &
W1=$!
sleep 0.6
( # slow writer: pauses (0.4 s) longer than the poll, shorter than the settle time
	mkdir -p "$P/slow"
	for c in "$T"/chunks/c*; do cat "$c" >>"$P/slow/worker.trace.json"; sleep 0.4; done
) &
( # a truncated capture that never completes
	mkdir -p "$P/broken"
	head -c 20000 $A >"$P/broken/h.xplane.pb"
) &
( # a run that goes away before it completes
	mkdir -p "$P/gone"
	head -c 5000 $X >"$P/gone/g.trace.json"
	sleep 0.3
	rm -rf "$P/gone"
) &
wait %2 %3 %4 2>/dev/null
sleep 6.5
kill -TERM $W1
wait $W1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "watch: stopped" "$T/w1.err"; then ok; else bad "SIGTERM: exit $rc $(tail -2 "$T/w1.err")"; fi
if [ "$(grep -c "analyzed run" "$T/w1.err")" -eq 1 ] && grep -q "analyzed run 'slow' (1 host)" "$T/w1.err"; then ok; else bad "analyses: $(cat "$T/w1.err")"; fi
# the report is of the whole file, never a part of it
$TFD analyze -q -f json "$P/slow" >"$T/full.json"
if cmp -s "$T/full.json" "$T/reports/job.train.slow.json"; then ok; else bad "the report is not of the complete capture"; fi
if [ "$(grep -c "run 'broken' incomplete after" "$T/w1.err")" -eq 1 ] && grep -q "incomplete after .*does not load" "$T/w1.err" && [ ! -e "$T/reports/job.train.broken.json" ]; then ok; else bad "incomplete run: $(cat "$T/w1.err")"; fi
if ! grep -q "analyzed run 'gone'" "$T/w1.err" && [ ! -e "$T/reports/job.train.gone.json" ]; then ok; else bad "removed run analyzed"; fi
if ! grep -q "analyzed run 'old'" "$T/w1.err" && [ ! -e "$T/reports/job.train.old.json" ]; then ok; else bad "a run present at the start was analyzed"; fi
if [ "$(cat "$T/exec.log" 2>/dev/null)" = "slow|highly|Map|$T/reports/job.train.slow.json" ]; then ok; else bad "--exec environment: $(cat "$T/exec.log" 2>/dev/null)"; fi

# 2. hosts arriving at different times: --hosts 2 waits for the second one
$TFD watch --settle 1 --poll 0.2 --hosts 2 --timeout 0 -f json --out-dir "$T/out2" "$L" \
	>"$T/w2.out" 2>"$T/w2.err" &
W2=$!
sleep 0.6
mkdir -p "$P/pod"
cp $A "$P/pod/host-a.xplane.pb"
sleep 2 # longer than --settle: one host is not the run
cp $X "$P/pod/host-b.trace.json"
sleep 2.5
kill -TERM $W2
wait $W2
if [ "$(grep -c "analyzed run" "$T/w2.err")" -eq 1 ] && grep -q "analyzed run 'pod' (2 hosts)" "$T/w2.err"; then ok; else bad "--hosts 2: $(cat "$T/w2.err")"; fi

# 3. --once (cron): the complete runs present now, once; again skips them
run watch --once --settle 0 -f md --out-dir "$T/out3" "$L"
if [ "$rc" -eq 0 ] && [ -f "$T/out3/job.train.old.md" ] && [ -f "$T/out3/job.train.pod.md" ] && [ -f "$T/out3/job.train.slow.md" ] &&
	[[ "$err" == *"run 'broken' is not complete: does not load"* ]]; then ok; else bad "--once: $rc $err"; fi
run watch --once --settle 0 -f md --out-dir "$T/out3" "$L"
if [ "$rc" -eq 0 ] && [[ "$err" != *"analyzed run"* ]]; then ok; else bad "--once twice analyzed again: $err"; fi
# 3a. watch finds runs as analyze does (one discovery): given the
# plugins/profile directory itself, its runs are the runs (it found none)
mkdir -p "$T/pprof/logs/plugins/profile/r1"
cp $A "$T/pprof/logs/plugins/profile/r1/"
run watch --once --existing --settle 0 -f md --out-dir "$T/pprof/out" "$T/pprof/logs/plugins/profile"
if [ "$rc" -eq 0 ] && [ -f "$T/pprof/out/r1.md" ] && [[ "$err" == *"analyzed run 'r1'"* ]]; then ok; else bad "watch on plugins/profile: $rc $err $(ls "$T/pprof/out" 2>&1)"; fi
run analyze -q --all-runs "$T/pprof/logs/plugins/profile"
if [ "$rc" -eq 0 ]; then ok; else bad "analyze on plugins/profile: $rc $err"; fi
# 3a'. --settle 0 waits for nothing: a file whose time lies ahead of the
# clock (a file system's finer-grained clock at a second's edge, a server's
# clock) was "still being written" and the run skipped
mkdir -p "$T/future/logs/plugins/profile/r1"
cp $A "$T/future/logs/plugins/profile/r1/"
touch -d '+1 hour' "$T/future/logs/plugins/profile/r1/"*
run watch --once --existing --settle 0 -f md --out-dir "$T/future/out" "$T/future/logs"
if [ "$rc" -eq 0 ] && [ -f "$T/future/out/r1.md" ]; then ok; else bad "--settle 0, a file ahead of the clock: $rc $err"; fi
run watch --once --existing --settle 5 -f md --out-dir "$T/future/out2" "$T/future/logs"
if [ "$rc" -eq 0 ] && [[ "$err" == *"is still being written"* ]] && [ ! -f "$T/future/out2/r1.md" ]; then ok; else bad "--settle 5, a file ahead of the clock: $rc $err"; fi
# 3b. what is planted in the output directory is not followed: a symlink
# at a report's name (pointing out of the directory) and a FIFO are refused
# with one line each, nothing outside changes, nothing blocks, watch goes on
mkdir -p "$T/plant/out" "$T/plant/elsewhere" "$T/plant/logs/plugins/profile"
echo secret >"$T/plant/elsewhere/secret"
ln -s ../elsewhere/secret "$T/plant/out/r1.txt"
mkfifo "$T/plant/out/r2.txt"
$TFD watch --settle 1 --poll 0.2 --out-dir "$T/plant/out" "$T/plant/logs" >/dev/null 2>"$T/w3.err" &
W3=$!
sleep 0.6
for r in r1 r2 r3; do mkdir -p "$T/plant/logs/plugins/profile/$r" && cp $A "$T/plant/logs/plugins/profile/$r/"; done
sleep 3.5
kill -TERM $W3
wait $W3
rc=$?
if [ "$rc" -eq 0 ] && [ "$(cat "$T/plant/elsewhere/secret")" = secret ] && [ -L "$T/plant/out/r1.txt" ] &&
	[ -p "$T/plant/out/r2.txt" ] && grep -q "r1.txt: is a symlink, not a regular file" "$T/w3.err" &&
	grep -q "r2.txt: is a FIFO, not a regular file" "$T/w3.err" && [ -f "$T/plant/out/r3.txt" ]; then ok; else bad "planted out-dir: $rc $(cat "$T/w3.err")"; fi
# 3c. --once (cron) with a report it cannot write: one line and exit 1 (it
# exited 0); a FIFO at the report's name is no report: the run is analyzed
mkdir -p "$T/once1/out" "$T/once1/logs/plugins/profile/r1"
cp $A "$T/once1/logs/plugins/profile/r1/"
mkfifo "$T/once1/out/r1.txt"
run watch --once --settle 0 --out-dir "$T/once1/out" "$T/once1/logs"
if [ "$rc" -eq 1 ] && [[ "$err" == *"r1.txt: is a FIFO, not a regular file"* ]]; then ok; else bad "--once without a report written: $rc $err"; fi
# 3d. a run written as RUN.tmp and renamed into place is analyzed under its
# final name (it was lost: "run 'run1.tmp' incomplete ... no capture files")
mkdir -p "$T/ren/out" "$T/ren/logs/plugins/profile"
$TFD watch --settle 1 --poll 0.2 --out-dir "$T/ren/out" "$T/ren/logs" >/dev/null 2>"$T/w4.err" &
W4=$!
sleep 0.6
mkdir "$T/ren/logs/plugins/profile/run1.tmp"
cp $A "$T/ren/logs/plugins/profile/run1.tmp/"
sleep 0.4
mv "$T/ren/logs/plugins/profile/run1.tmp" "$T/ren/logs/plugins/profile/run1"
sleep 3
kill -TERM $W4
wait $W4
if grep -q "analyzed run 'run1' (1 host): $T/ren/out/run1.txt" "$T/w4.err" && [ -f "$T/ren/out/run1.txt" ] &&
	! grep -q "incomplete" "$T/w4.err"; then ok; else bad "a run renamed into place: $(cat "$T/w4.err")"; fi
# 3e. report names never collide across passes: a run "sub.run1" and, a
# pass later, a run "run1" below "sub/" (it was taken as reported and never
# analyzed, while the first was analyzed again under a hashed name)
mkdir -p "$T/pp/out" "$T/pp/logs/plugins/profile/sub.run1"
cp $A "$T/pp/logs/plugins/profile/sub.run1/"
run watch --once --settle 0 --out-dir "$T/pp/out" "$T/pp/logs"
mkdir -p "$T/pp/logs/sub/plugins/profile/run1"
cp $A "$T/pp/logs/sub/plugins/profile/run1/"
run watch --once --settle 0 --out-dir "$T/pp/out" "$T/pp/logs"
if [ "$rc" -eq 0 ] && [[ "$err" == *"analyzed run 'run1'"* ]] && [[ "$err" != *"analyzed run 'sub.run1'"* ]] &&
	[ "$(ls "$T/pp/out" | wc -l)" -eq 2 ]; then ok; else bad "report names across passes: $err $(ls "$T/pp/out")"; fi
# 4. usage
run watch "$T/nope"
if [ "$rc" -eq 2 ] && [[ "$err" == *"is not a directory"* ]]; then ok; else bad "watch on a missing dir: $rc $err"; fi
run watch --settle x "$L"
if [ "$rc" -eq 2 ]; then ok; else bad "--settle x: $rc"; fi
# -f json on standard output is JSON Lines: one compact record per run,
# naming its run, and nothing else on stdout (with or without -q); a host
# that is not input-bound exports no bottleneck, only its slowest stage
J=$T/jl/plugins/profile
mkdir -p "$J/r1" "$J/r2"
cp examples/ai-notebook/ai-notebook.xplane.pb "$J/r1/"
cp examples/smdebug-zip/*.trace.json.gz "$J/r2/"
for q in "" -q; do
	TFD_TEST_EXEC_LOG=$T/jl.exec $TFD watch --once --existing --settle 0 -f json $q \
		--exec 'echo "$TFDOCTOR_RUN|$TFDOCTOR_VERDICT|$TFDOCTOR_BOTTLENECK|$TFDOCTOR_SLOWEST_STAGE" >>"$TFD_TEST_EXEC_LOG"' \
		"$T/jl" >"$T/jl.out" 2>"$T/jl.err"
	if [ "$(wc -l <"$T/jl.out")" -eq 2 ] && python3 -c '
import json, sys
runs = [json.loads(l)["run"] for l in open(sys.argv[1])]
sys.exit(runs != ["r1", "r2"])' "$T/jl.out"; then ok; else bad "watch -f json ${q:-(not quiet)} is not JSON Lines: $(head -c 300 "$T/jl.out")"; fi
done
if [ "$(head -2 "$T/jl.exec" | tr '\n' ' ')" = "r1|not||Model r2|highly|ParallelMap|ParallelMap " ]; then ok; else bad "--exec bottleneck on a host that is not input-bound: $(cat "$T/jl.exec")"; fi

# watch picks up what analyze reads (a TF 2.0 local.trace) and delivers the
# runs of one pass oldest first, whatever order the directory lists them in
K=$T/order/plugins/profile
for r in 2026_01_03 2026_01_01 2026_01_02; do mkdir -p "$K/$r"; done
cp tests/cases/ok/tda-mnist-linear-tf20/local.trace "$K/2026_01_01/"
cp examples/ai-notebook/ai-notebook.xplane.pb "$K/2026_01_02/"
cp examples/ai-notebook/ai-notebook.xplane.pb "$K/2026_01_03/"
$TFD watch --once --existing --settle 0 -f json "$T/order" >"$T/order.out" 2>"$T/order.err"
if python3 -c '
import json, sys
runs = [json.loads(l)["run"] for l in open(sys.argv[1])]
sys.exit(runs != ["2026_01_01", "2026_01_02", "2026_01_03"])' "$T/order.out"; then ok; else bad "runs out of name order or local.trace ignored: $(grep -o '"run":"[^"]*"' "$T/order.out" | tr '\n' ' ') $(cat "$T/order.err")"; fi

# a run reached twice (a symlink loop, the log directory given twice) is one
# run, analyzed once (issue 35: four times)
mkdir -p "$T/loop"
$TFD synth -q -o "$T/loop/logs" tests/synth/05-batch-heavy.json
ln -s "$T/loop/logs" "$T/loop/logs/self"
timeout -s TERM 4 $TFD watch -q --existing --settle 0 --poll 0.2 --exec "echo x >>'$T/loop/count'" \
	"$T/loop/logs" "$T/loop/logs" >/dev/null 2>&1
n=$(wc -l <"$T/loop/count" 2>/dev/null || echo 0)
if [ "$n" -eq 1 ]; then ok; else bad "a run reached by two paths analyzed $n times"; fi

# two jobs' runs of one name get a report each, named by their path below
# the log directory (and the log directory's name when several are
# watched); issue 35: the second overwrote the first, or with --once was
# skipped silently
N=$T/names
for j in jobA jobB; do
	mkdir -p "$N/logs/$j/plugins/profile/2026_01_01" "$N/$j/logs/plugins/profile/2026_01_01"
	cp $A "$N/logs/$j/plugins/profile/2026_01_01/"
	cp $A "$N/$j/logs/plugins/profile/2026_01_01/"
done
run watch --once --settle 0 -f json --out-dir "$N/out1" "$N/logs"
got=$(cd "$N/out1" 2>/dev/null && ls | tr '\n' ' ')
if [ "$rc" -eq 0 ] && [ "$got" = "jobA.2026_01_01.json jobB.2026_01_01.json " ]; then ok; else bad "two jobs' runs of one name: $got $err"; fi
run watch --once --settle 0 -f json --out-dir "$N/out2" "$N/jobA/logs" "$N/jobB/logs" "$N/logs/jobA"
got=$(cd "$N/out2" 2>/dev/null && ls | wc -l)
if [ "$rc" -eq 0 ] && [ "$got" -eq 3 ] && [ -f "$N/out2/jobA.2026_01_01.json" ] &&
	[ "$(grep -c "analyzed run" <<<"$err")" -eq 3 ]; then ok; else bad "three log directories, two named logs: $got files: $(ls "$N/out2") $err"; fi

# a log directory deleted while watched is said, once (issue 35: silence)
mkdir -p "$T/del/logs"
$TFD watch --poll 0.1 "$T/del/logs" >/dev/null 2>"$T/del.err" &
W=$!
sleep 0.5
rm -rf "$T/del/logs"
sleep 0.6
kill -TERM $W
wait $W
if [ "$(grep -c "log directory $T/del/logs is gone" "$T/del.err")" -eq 1 ]; then ok; else bad "deleted log dir: $(cat "$T/del.err")"; fi

# SIGTERM while the --exec hook runs: the hook's group is told, waited for,
# and its end said truthfully (issue 35: the hook's shell was orphaned and
# "could not run: Interrupted system call" printed)
mkdir -p "$T/hook"
$TFD synth -q -o "$T/hook/logs" tests/synth/05-batch-heavy.json
$TFD watch --existing --settle 0 --poll 0.2 --exec "echo \$\$ >'$T/hook/pid'; sleep 30; echo late >'$T/hook/late'" \
	"$T/hook/logs" >/dev/null 2>"$T/hook.err" &
W=$!
for _ in $(seq 50); do [ -s "$T/hook/pid" ] && break; sleep 0.1; done
sleep 0.2
kill -TERM $W
wait $W
rc=$?
hp=$(cat "$T/hook/pid" 2>/dev/null)
# live members of the hook's group (a killed child may stay a zombie of init)
left=$(ps -e -o pgid=,stat= | awk -v g="${hp:-0}" '$1 == g && $2 !~ /^Z/' | wc -l)
if [ "$rc" -eq 0 ] && [ "$left" -eq 0 ] && [ ! -e "$T/hook/late" ] &&
	grep -q "ended by signal 15 (watch was stopping" "$T/hook.err" &&
	! grep -q "could not run" "$T/hook.err"; then ok; else bad "SIGTERM during --exec: rc $rc, $left left: $(cat "$T/hook.err")"; fi
[ -n "$hp" ] && pkill -g "$hp" 2>/dev/null

finish
