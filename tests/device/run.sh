#!/usr/bin/env bash
# Device-side input time (issue 37): input is TensorFlow's, the host wait
# plus the copies to the device. Synthesized GPU captures (tests/device/*.json,
# XSpace and Chrome JSON, with and without group_id on the device events)
# with heavy, light and no copies; the real multi-worker GPU capture; a
# corrupt device plane. Ends with "device: N passed, N failed".
set -u
SUITE=device
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}

# summary JSON: "input host_wait h2d band rules bottleneck has_device"
summary() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); h = d["hosts"][0]
rules = ",".join(f["rule"] for f in d["findings"]) or "-"
cls = ",".join(f["class"] for f in d["findings"]) or "-"
print(h["input_percent"], h["host_wait_percent"], h["host_to_device_percent"],
      h["input_bound"], rules, cls, d["summary"].get("bottleneck"), "device" in h)' "$1"
}

# check SPEC H2D_US D01(yes|no) BAND
check() {
	local spec=$1 d01=$3 band=$4 f name inp wait h2d h2d_pct got rules cls _bn dev
	rm -rf "$T/$spec"
	if ! $TFD synth -o "$T/$spec" "tests/device/$spec.json" >/dev/null 2>"$T/err"; then
		bad "$spec: synth failed: $(cat "$T/err")"
		return
	fi
	for f in $(find "$T/$spec" -name '*.xplane.pb' -o -name '*.trace.json' | sort); do
		name="$spec/${f##*.trace.}"
		[ "${f%.pb}" != "$f" ] && name="$spec/xplane"
		if ! $TFD analyze -q -f json -o "$T/r.json" "$f" 2>"$T/err"; then
			bad "$name: analyze failed: $(cat "$T/err")"
			continue
		fi
		read -r inp wait h2d got rules cls _bn dev <<<"$(summary "$T/r.json")"
		h2d_pct=$h2d
		h2d=$2
		# the truth: each step copies H2D_US, then computes COMPUTE_US
		# (and about 8 us of step bookkeeping around them)
		# the truth: each step copies H2D_US (its step time is the host's
		# step marker, which the copies do not make)
		if python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); h = d["hosts"][0]; us = float(sys.argv[2])
truth = 100 * us * 1000 / (h["step_ns"] / h["steps"])
ok = abs(h["host_to_device_percent"] - truth) <= 2
ok = ok and abs(h["input_percent"] - h["host_wait_percent"] - h["host_to_device_percent"]) <= 0.02
sys.exit(0 if ok else 1)' "$T/r.json" "$h2d"; then
			ok
		else
			bad "$name: input $inp% = wait $wait% + copies $h2d_pct%, copies are $2 us a step"
		fi
		[ "$dev" = True ] && ok || bad "$name: no device object in the report"
		[ "$got" = "$band" ] && ok || bad "$name: band $got, want $band"
		if [ "$d01" = yes ]; then
			case ",$rules," in *,TFD-D01,*) ok ;; *) bad "$name: no TFD-D01 ($rules)" ;; esac
			case ",$cls," in *,host_to_device,*) ok ;; *) bad "$name: no host_to_device class" ;; esac
		else
			case ",$rules," in *,TFD-D01,*) bad "$name: TFD-D01 with light copies" ;; *) ok ;; esac
		fi
	done
}

check heavy 1500 yes highly
check heavy-nogroup 900 yes highly
check light 40 no highly
check none 0 no highly
check wait-light 60 no highly

# the text names the larger part first, and --fail-on follows the combined share
f=$(find "$T/heavy" -name '*.xplane.pb' | head -1)
run analyze -q "$f"
case "$(printf '%s' "$out" | unwrap)" in
*"is input: 42."*"copying input to the GPU, 0."*"waiting for the pipeline"*) ok ;;
*) bad "heavy: text verdict: $(printf '%s' "$out" | head -3 | unwrap)" ;;
esac
case "$out" in *prefetch_to_device*) ok ;; *) bad "heavy: no prefetch_to_device advice" ;; esac
case "$(printf '%s' "$out" | unwrap)" in *"a step (mean over those steps): device compute 1.6 ms, input 1.5"*"(host wait "*"copying input to the GPU 1.5"*ms*"the device idle with no input wait"*) ok ;;
*) bad "heavy: no step summary: $(printf '%s' "$out" | head -6 | unwrap)" ;; esac
run dot -o - "$f"
case "$(printf '%s' "$out" | unwrap)" in *"HIGHLY input-bound (43."*"copying to the device, 0."*"waiting)"*) ok ;;
*) bad "heavy: diagram title: $(printf '%s' "$out" | grep -m1 label=)" ;; esac
run analyze -q --fail-on input-bound -o - "$f"
[ "$rc" = 3 ] && ok || bad "heavy: --fail-on input-bound exit $rc, want 3"
# the estimate: copies hidden behind the step's compute
$TFD analyze -q -f json -o "$T/h.json" "$f" 2>/dev/null
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
e = [f for f in d["findings"] if f["rule"] == "TFD-D01"][0]["estimate"]
sys.exit(0 if e["known"] and e["basis"] == "steps" and e["input_percent_after"] < 5 and e["speedup"] > 1.5 else 1)' "$T/h.json"; then
	ok
else
	bad "heavy: TFD-D01 estimate: $(grep -A8 '"estimate"' "$T/h.json" | head -9 | unwrap)"
fi

# the HTML report's step chart stacks the copies (blue) on the wait; the
# summary says which part is which
run report --no-record -o "$T/r.html" "$f"
if [ "$rc" = 0 ] && grep -q 'class="h2d"' "$T/r.html" &&
	grep -q 'copying it to the device (blue)' "$T/r.html" &&
	grep -q 'of step time is input: 42\.[0-9]% copying it to the device' "$T/r.html"; then
	ok
else
	bad "heavy: HTML report: rc $rc, $(grep -o 'of step time[^;]*' "$T/r.html" | head -1)"
fi
grep -q 'copies to the device dominate the input (host-side bottleneck' "$T/r.html" && ok ||
	bad "heavy: HTML summary does not say the copies dominate"
run report --no-record -f md -o - "$f"
case "$out" in *"copies to the device dominate; host-side bottleneck"*) ok ;; *) bad "heavy: md stage cell" ;; esac
grep -q '"input_dominant": "host_to_device"' "$T/h.json" && ok || bad "heavy: summary.input_dominant"
# and without device planes the chart is as it was: no copies drawn
run report --no-record -o "$T/n.html" examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz
if [ "$rc" = 0 ] && ! grep -q 'class="h2d"\|to the device' "$T/n.html"; then ok; else bad "no device: report draws copies"; fi

# a run directory (one partial per host file, merged) says the same
d=$(dirname "$f")
$TFD analyze -q -f json -o "$T/dir.json" "$d" 2>"$T/err"
a=$(summary "$T/h.json")
b=$(summary "$T/dir.json")
[ "$a" = "$b" ] && ok || bad "heavy: directory '$b' differs from file '$a'"
grep -q '"host_to_device_ns": ' "$T/dir.json" && ok || bad "heavy: per-step points lack host_to_device_ns"

# light copies on a host whose pipeline is the bottleneck: the pipeline
# verdict is the one the same job without copies gets
sed 's/"h2d_us": 40, "copies": 1, "bytes": 600000/"h2d_us": 0/' tests/device/light.json >"$T/nocopy.json"
$TFD synth -o "$T/nocopy" "$T/nocopy.json" >/dev/null 2>&1
g=$(find "$T/nocopy" -name '*.xplane.pb' | head -1)
l=$(find "$T/light" -name '*.xplane.pb' | head -1)
$TFD analyze -q -f json -o "$T/n.json" "$g" 2>/dev/null
$TFD analyze -q -f json -o "$T/l.json" "$l" 2>/dev/null
read -r _ _ _ _ r1 _ b1 _ <<<"$(summary "$T/n.json")"
read -r _ _ _ _ r2 _ b2 _ <<<"$(summary "$T/l.json")"
[ "$b1" = "$b2" ] && [ "$r1" = "$r2" ] && ok || bad "light: bottleneck $b2 ($r2), without copies $b1 ($r1)"

# host-side copies (InfeedEnqueue*, MemcpyH2D ops on the host) are
# host-to-device time too: 2 steps of 1 ms, each waiting 100 us and
# enqueueing infeed for 400 us
$TFD analyze -q -f json -o "$T/infeed.json" tests/device/traces/infeed.trace.json 2>"$T/err"
read -r inp wait h2d got rules _ _ dev <<<"$(summary "$T/infeed.json")"
[ "$inp $wait $h2d $got $dev" = "50 10 40 highly True" ] && ok ||
	bad "infeed: input $inp wait $wait copies $h2d band $got device $dev"
case ",$rules," in *,TFD-D01,*) ok ;; *) bad "infeed: no TFD-D01 ($rules)" ;; esac
run analyze -q tests/device/traces/infeed.trace.json
case "$(printf '%s' "$out" | unwrap)" in *"40.0% copying input to the device"*) ok ;;
*) bad "infeed: text $(printf '%s' "$out" | head -2 | unwrap)" ;; esac

# a TPU (a Chrome trace): the device waiting for infeed in XLA Ops is
# input; the derived XLA Modules and Steps lines are not read
$TFD analyze -q -f json -o "$T/tpu.json" tests/device/traces/tpu.trace.json 2>"$T/err"
read -r inp wait h2d got rules _ _ dev <<<"$(summary "$T/tpu.json")"
[ "$inp $wait $h2d $got $dev" = "30 0 30 highly True" ] && ok ||
	bad "tpu: input $inp wait $wait infeed $h2d band $got device $dev"
grep -q '"device_compute_ns": 1200000' "$T/tpu.json" && grep -q '"kind": "TPU"' "$T/tpu.json" &&
	ok || bad "tpu: derived lines read, or not a TPU"
run analyze -q tests/device/traces/tpu.trace.json
case "$(printf '%s' "$out" | unwrap)" in *"30.0% the TPU waiting for infeed"*) ok ;;
*) bad "tpu: text $(printf '%s' "$out" | head -2 | unwrap)" ;; esac

# the real multi-worker GPU capture: 8 GPU planes (some empty), copies
# read but small: not input-bound, no transfer finding
real=tests/cases/ok/tfprof-demo-gpu-multi-worker/34.83.195.179_6003.xplane.pb
run dump "$real"
case "$out" in *"/device:GPU:4"*"device (759 spans)"*) ok ;; *) bad "real: GPU:4 not decoded" ;; esac
case "$out" in *"/device:GPU:0"*"device (0 spans)"*) ok ;; *) bad "real: empty GPU:0 not listed" ;; esac
case "$out" in *"host-to-device"*"404 spans"*) ok ;; *) bad "real: the 202 device and 202 host copies not summed" ;; esac
run dump -f json "$real"
case "$out" in *'"device_spans": 759'*'"device"'*'"device_compute"'*) ok ;; *) bad "real: dump -f json lacks the device" ;; esac
$TFD analyze -q -f json -o "$T/real.json" "$real" 2>"$T/err"
read -r inp wait h2d got rules _ _ dev <<<"$(summary "$T/real.json")"
[ "$got" = not ] && [ "$dev" = True ] && [ "$h2d" != None ] && ok ||
	bad "real: band $got, device $dev, copies $h2d%"
case ",$rules," in *,TFD-D01,*) bad "real: TFD-D01 on small copies" ;; *) ok ;; esac
grep -q '"host_to_device_copies": 404' "$T/real.json" && ok || bad "real: copies not counted"

# GPU processes without events (a Chrome trace): no device parts, no crash
run analyze -q -f json -o - examples/smdebug-8gpu/ip-172-31-19-241.trace.json
[ "$rc" = 0 ] && case "$out" in *'"host_to_device_percent": null'*) true ;; *) false ;; esac &&
	ok || bad "empty GPU processes: rc $rc"

# a device plane whose line is cut: one line naming the plane, exit 1
printf '\n\013\022\011/host:CPU\n\024\022\015/device:GPU:0\032\003\042\005\000' >"$T/bad.xplane.pb"
run analyze -q "$T/bad.xplane.pb"
if [ "$rc" = 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ]; then
	case "$err" in *bad.xplane.pb*"/device:GPU:0"*malformed*) ok ;; *) bad "bad plane: $err" ;; esac
else
	bad "bad plane: rc $rc, stderr $err"
fi
# a device plane's metadata or one of its events cut: one line, exit 1
printf '\n\013\022\011/host:CPU\n\024\022\015/device:GPU:0\042\003\022\001\377' >"$T/meta.xplane.pb"
printf '\n\013\022\011/host:CPU\n\030\022\015/device:GPU:0\032\007\022\001S\042\002\010\377' >"$T/ev.xplane.pb"
for c in "meta:a malformed event metadata in plane '/device:GPU:0'" \
	"ev:an event of line 0 of plane '/device:GPU:0' is malformed"; do
	run analyze -q "$T/${c%%:*}.xplane.pb"
	if [ "$rc" = 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
		[ "$err" = "tfdoctor: $T/${c%%:*}.xplane.pb: corrupt XSpace protobuf: ${c#*:}" ]; then
		ok
	else
		bad "${c%%:*}: rc $rc, stderr $err"
	fi
done
finish
