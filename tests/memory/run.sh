#!/usr/bin/env bash
# A memory ceiling: analyze a synthesized ~50 MB Chrome trace under
# `ulimit -v`. With room it passes; with too little it fails with one clear
# line and exit 1, never a crash. (ASan reserves terabytes of address space,
# so under SAN=1 only the run without a limit is checked; the plain build
# runs the rest, including a .gz that inflates past the limit: it is parsed
# while it inflates, and a run of 8 hosts that fits because its files are
# analyzed one at a time.) Ends with "memory: N passed, N failed".
set -u
SUITE=memory
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
# The address space the program needs to start (KB, within 250): the
# limits below are counted from it, since it is mostly the libraries' and
# depends on how they are linked (60 MB with igraph's shared library and
# its 20 dependencies, 8 MB with its static archive)
lo=1000 hi=400000
while [ $((hi - lo)) -gt 250 ]; do
	mid=$(((lo + hi) / 2))
	if (ulimit -v $mid && $TFD version >/dev/null 2>&1); then hi=$mid; else lo=$mid; fi
done
base=$hi
cat >"$T/spec.json" <<'SPEC'
{"name": "memory", "expect": "Map", "formats": ["json"], "steps": 20000, "step_compute_us": 200,
 "stages": [{"kind": "TFRecord", "cost_us": 4}, {"kind": "Map", "cost_us": 120},
            {"kind": "Batch", "batch_size": 4, "cost_us": 4}, {"kind": "Prefetch"}]}
SPEC
$TFD synth -q -o "$T/cap" "$T/spec.json"
F=$(ls "$T"/cap/plugins/profile/*/*.trace.json)
mb=$(($(stat -c %s "$F") / 1000000))
run analyze -q -f json -o - "$F"
if [ "$rc" -eq 0 ] && [[ "$out" == *'"bottleneck": "Map"'* ]]; then ok; else bad "analyze ${mb} MB without a limit: $rc $err"; fi
if [ "${SAN:-}" = 1 ]; then
	finish
	exit $?
fi
# generous: the file's size plus the binary's libraries
(ulimit -v $((mb * 1000 * 3 + 250000)) && $TFD analyze -q -f json -o - "$F" >"$T/o1" 2>"$T/e1")
rc=$?
if [ "$rc" -eq 0 ] && grep -q '"bottleneck": "Map"' "$T/o1"; then ok; else bad "under a generous limit: $rc $(cat "$T/e1")"; fi
# tight: one clear line and exit 1, no signal, nothing on stdout (the file
# mapping fails first, then allocations)
failed=0
for lim in $((base + 30000)) $((base + 55000)) $((base + 65000)); do
	(ulimit -v $lim && $TFD analyze -q -f json -o - "$F" >"$T/o2" 2>"$T/e2")
	rc=$?
	[ "$rc" -eq 1 ] && failed=$((failed + 1))
	if [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/e2")" -eq 1 ] && grep -q '^tfdoctor: ' "$T/e2" && [ ! -s "$T/o2" ]; }; then
		ok
	else
		bad "under ${lim} KB: exit $rc (a signal is > 128) $(head -c 300 "$T/e2")"
	fi
done
if [ "$failed" -ge 1 ]; then ok; else bad "no tight limit made it fail: the test tests nothing"; fi
# dump streams: a dense capture's full JSON dump is written piece by piece,
# so it fits under limits that held the whole document before (issue 35:
# 9.8 GB for a 1 GiB capture; it needed 140 MB here, now 70 MB does); under
# any limit it is the dump, or one line and exit 1, never a signal
cat >"$T/dense.json" <<'SPEC'
{"name": "dense", "expect": "Map", "formats": ["xplane"], "steps": 3000, "step_compute_us": 200,
 "stages": [{"kind": "TFRecord", "cost_us": 4}, {"kind": "Map", "cost_us": 120},
            {"kind": "Batch", "batch_size": 4, "cost_us": 4}, {"kind": "Prefetch"}]}
SPEC
$TFD synth -q -o "$T/dense" "$T/dense.json"
D=$(ls "$T"/dense/plugins/profile/*/*.xplane.pb)
$TFD dump --all -f json -o "$T/dense.want" "$D"
fits=0
for lim in $(seq $base 10000 $((base + 60000))); do
	(ulimit -v $lim && $TFD dump --all -f json -o - "$D" >"$T/o7" 2>"$T/e7")
	rc=$?
	[ "$rc" -eq 0 ] && cmp -s "$T/o7" "$T/dense.want" && fits=$((fits + 1))
	if [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/e7")" -eq 1 ]; }; then ok; else
		bad "dump --all -f json under ${lim} KB: exit $rc (a signal is > 128) $(head -c 200 "$T/e7")"; fi
done
if [ "$fits" -ge 5 ]; then ok; else bad "dump --all -f json fits under $fits of 7 limits (60-120 MB): is it held whole?"; fi
# a run directory is analyzed one host file at a time: 8 hosts of 11 MB
# (87 MB) fit under a limit that loading all of them at once does not
# (on one core, so one file is in flight; taskset sets the affinity mask
# the reader counts cores from). Measured: one at a time needs 12-16 MB of
# address space above the start's, all at once 40-44 MB; the limit is
# between.
$TFD synth -q --scale 300 -o "$T/m8" tests/fleet/eight-hosts.json
R=$(ls -d "$T"/m8/plugins/profile/*)
$TFD analyze -q -f json -o "$T/m8.want" "$R"
(ulimit -v $((base + 28000)) && taskset -c 0 $TFD analyze -q -f json -o - "$R" >"$T/o4" 2>"$T/e4")
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$T/o4" "$T/m8.want"; then ok; else
	bad "a run of 8 hosts one file at a time under $((base + 28000)) KB: exit $rc $(head -c 300 "$T/e4")"; fi
$TFD analyze -q --partial -o "$T/m8.partial.want" "$R"
(ulimit -v $((base + 28000)) && taskset -c 0 $TFD analyze -q --partial -o - "$R" >"$T/o6" 2>"$T/e6")
rc=$?
if [ "$rc" -eq 0 ] && cmp -s "$T/o6" "$T/m8.partial.want"; then ok; else
	bad "the partial of a run of 8 hosts under $((base + 28000)) KB: exit $rc $(head -c 300 "$T/e6")"; fi
(ulimit -v $((base + 28000)) && taskset -c 0 $TFD analyze -q -f json -o - "$R"/*.xplane.pb >"$T/o5" 2>"$T/e5")
rc=$?
# (out of memory; or, memory being short for a plane, it was read leaving
# its iterator events in the file, whose mapping it then keeps: the next
# file's mapping is what does not fit)
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/e5")" -eq 1 ] &&
	grep -q -e '^tfdoctor: error: out of memory' -e 'cannot map the file (.*): the address-space limit (ulimit -v)' "$T/e5"; then ok; else bad "the same 8 files given one by one (loaded together) should not fit: exit $rc $(head -c 300 "$T/e5")"; fi
# an XSpace host plane where a quarter of the events are tf.data's (the
# bench's tf.data-heavy spec, ~25 MB): the address space holds the mapped
# file, the libraries and what the analysis keeps (under half the file);
# with room it gives the answer it gives without a limit, and when the
# limit cannot hold that it ends in one line and exit 1
$TFD synth -q --scale 8 -o "$T/xs" tests/bench/tfdata-heavy.json
X=$(ls "$T"/xs/plugins/profile/*/*.xplane.pb)
xkb=$(($(stat -c %s "$X") / 1000))
$TFD analyze -q -f json -o "$T/xs.want" "$X"
# (memory short for the plane, under 0.4 of its bytes, reads and analyzes
# it as --low-memory does: the same answer with a note saying so, its
# figure the room there was)
short() { sed 's/memory was short ([0-9]* MB free)/memory was short (N MB free)/' "$@"; }
TFDOCTOR_MEM_BUDGET=1000 $TFD analyze -q -f json -o - "$X" | short >"$T/xs.short"
grep -q 'memory was short (N MB free)' "$T/xs.short" && ok || bad "no note of memory short: $(head -c 200 "$T/xs.short")"
is_answer() { cmp -s "$1" "$T/xs.want" || short "$1" | cmp -s - "$T/xs.short"; }
(ulimit -v $((xkb * 2 + base + 15000)) && taskset -c 0 $TFD analyze -q -f json -o - "$X" >"$T/o7" 2>"$T/e7")
rc=$?
if [ "$rc" -eq 0 ] && is_answer "$T/o7"; then ok; else bad "tf.data-heavy XSpace of ${xkb} KB under $((xkb * 2 + base + 15000)) KB: exit $rc $(head -c 300 "$T/e7")"; fi
failed=0
for lim in $((xkb + base)) $((xkb + base + 30000)); do
	(ulimit -v "$lim" && taskset -c 0 $TFD analyze -q -f json -o - "$X" >"$T/o8" 2>"$T/e8")
	rc=$?
	[ "$rc" -eq 1 ] && failed=$((failed + 1))
	if { [ "$rc" -eq 0 ] && is_answer "$T/o8"; } || { [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/e8")" -eq 1 ] && grep -q '^tfdoctor: ' "$T/e8" && [ ! -s "$T/o8" ]; }; then
		ok
	else
		bad "tf.data-heavy XSpace under ${lim} KB: exit $rc (a signal is > 128) $(head -c 300 "$T/e8")"
	fi
done
if [ "$failed" -ge 1 ]; then ok; else bad "no tight limit made the XSpace case fail: it tests nothing"; fi
# every limit from where the program cannot even start up to where the
# analysis fits: the answer, one line and exit 1, or the dynamic loader's
# own error (before tfdoctor runs), never a signal. (Under huge pages a
# library's start-up ran out of room before main() and crashed, about 1 MB
# above where the loader gives up; a file that cannot be mapped names the
# limit and what is in use.)
# (Just above where the loader gives up, libgfortran's start-up, before
# main(), looped on a failed calloc until the stack overflowed: the
# executable's pre-initializer now checks for room first. Around the
# loader's edge the sweep goes in 100 KB steps.)
crashed="" loader=0 maperr=0 answered=0 nostart=0 edge=""
sweep() {
	(ulimit -c 0 && ulimit -v "$1" && $TFD analyze -q -f json -o - "$X" >"$T/o9" 2>"$T/e9")
	rc=$?
	if [ "$rc" -eq 0 ] && is_answer "$T/o9"; then
		answered=$((answered + 1))
	elif [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/e9")" -eq 1 ] && grep -q '^tfdoctor: ' "$T/e9" && [ ! -s "$T/o9" ]; then
		grep -q 'the address-space limit (ulimit -v) is [0-9]* MB and [0-9]* MB of it is in use' "$T/e9" &&
			maperr=$((maperr + 1))
		grep -q 'leaves no room to start' "$T/e9" && nostart=$((nostart + 1))
	elif [ "$rc" -eq 127 ] && grep -q 'error while loading shared libraries\|cannot allocate TLS\|^out of memory$' "$T/e9"; then
		# (a bare "out of memory" and 127: ld.so's own, on the edge)
		loader=$((loader + 1))
	else
		crashed="$crashed $1:$rc"
	fi
}
# (below about 2 MB the kernel's own start of the binary faults, before
# the loader runs: the sweep starts above that)
from=$((base - 6000 > 2500 ? base - 6000 : 2500))
for lim in $(seq $from 500 $((base + 10000))) $(seq $((base + 12000)) 2000 $((xkb * 2 + base + 15000))); do
	sweep "$lim"
	[ -z "$edge" ] && [ "$rc" -ne 127 ] && edge=$lim
done
for lim in $(seq $((${edge:-$base} - 1500)) 100 $((${edge:-$base} + 1500))); do
	sweep "$lim"
done
if [ -z "$crashed" ] && [ "$loader" -ge 1 ] && [ "$maperr" -ge 1 ] && [ "$answered" -ge 1 ] && [ "$nostart" -ge 1 ]; then ok; else
	bad "limits swept: exits other than 0, 1 and the loader's 127:${crashed:- none} (loader $loader, no room to start $nostart, map errors $maperr, answers $answered)"; fi
# a .gz is parsed while it inflates, never held whole: 300 MB of padding
# after the events inflate past a 200 MB address-space limit, yet it reads
# (its 1.3 MB inflate 230 times: past the default ceiling, which says so,
# so --max-inflated lets it in)
G="$T/pad.trace.json.gz"
{ printf '{"traceEvents": ['; printf '{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}},'
  printf '{"ph": "X", "pid": 1, "tid": 1, "ts": 1, "dur": 5, "name": "Iterator::Model::Map", "args": {"id": "1"}}'
  head -c 300000000 /dev/zero | tr '\0' ' '; printf ']}'; } | gzip -1 >"$G"
(ulimit -v 200000 && $TFD dump -q --max-inflated 1G "$G" >"$T/o3" 2>"$T/e3")
rc=$?
if [ "$rc" -eq 0 ] && grep -q "Iterator::Model::Map" "$T/o3"; then ok; else bad "a .gz inflating past the limit: exit $rc $(head -c 300 "$T/e3")"; fi
# a gzip bomb stops at the default ceiling (100 times the file, 64 MB at
# least) with one line naming the file; issue 35: 1 GiB from 3.6 MB was
# read whole (55 s, 9.8 GB for dump)
for c in "analyze -q" "dump --all -f json" "dot" "report -q -o -"; do
	# shellcheck disable=SC2086
	$TFD $c "$G" >/dev/null 2>"$T/e10"
	rc=$?
	if [ "$rc" -eq 1 ] && [ "$(cat "$T/e10")" = "tfdoctor: $G: gzip data inflates to more than 124 MiB (100 times its 1.3 MB: a gzip bomb?); --max-inflated SIZE sets the ceiling" ]; then ok; else bad "$c of a gzip bomb: rc $rc $(head -c 300 "$T/e10")"; fi
done
$TFD dump --max-inflated 200M "$G" >/dev/null 2>"$T/e11"
if [ "$?" -eq 1 ] && grep -q "more than 200 MiB" "$T/e11"; then ok; else bad "--max-inflated 200M: $(cat "$T/e11")"; fi
$TFD dump --max-inflated 2Q "$G" >/dev/null 2>"$T/e11"
if [ "$?" -eq 2 ] && grep -q "'2Q' is not a size" "$T/e11"; then ok; else bad "--max-inflated 2Q: $(cat "$T/e11")"; fi
finish
