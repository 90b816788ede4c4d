#!/usr/bin/env bash
# make bench-peers: tfdoctor's full analysis beside the converter TensorFlow
# users run on the same file (xprof, TensorBoard's profile plugin): its
# input-pipeline analysis and its overview page, time and peak RSS, pair by
# pair, on the bench's XSpace captures (synthesized, 100 MB), three large
# real captures made by TensorFlow (tests/tf/large.py) and the real
# captures in the repository. Needs the real-TensorFlow virtual environment
# (make tf-venv). Prints one row per capture and the targets: tfdoctor at
# least 10x faster than the input-pipeline conversion, at most a tenth of
# its memory.
set -eu
TFD=$1
PY=$2
B=$(dirname "$TFD")
W=${BENCH_DIR:-build/bench}
CASES=${PEER_CASES-host-heavy:100 tfdata-heavy:100 iter-dense:100}
RUNS=${BENCH_RUNS:-3}
mkdir -p "$W"
best() { # the least time of RUNS runs, the most RSS
	local t r rc bt="" br=0 i
	for ((i = 0; i < RUNS; i++)); do
		read -r t r rc < <("$B/runstat" "$@")
		[ "$rc" = 0 ] || { echo "0 0 $rc"; return; }
		if [ -z "$bt" ] || awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a < b) }'; then bt=$t; fi
		[ "$r" -le "$br" ] || br=$r
	done
	echo "$bt $br 0"
}
files=()
for c in $CASES; do
	spec=${c%%:*} mb=${c##*:} d="$W/$spec-$mb"
	if [ ! -f "$d/done" ]; then
		rm -rf "$d" "$W/probe"
		probe=$($TFD synth -o "$W/probe" "tests/bench/$spec.json" | sed 's/.* \([0-9]*\) bytes.*/\1/')
		$TFD synth --scale "$(awk -v mb="$mb" -v p="$probe" 'BEGIN { printf "%.4f", mb * 1e6 / p }')" \
			-o "$d" "tests/bench/$spec.json" >"$d.synth"
		touch "$d/done"
	fi
	files+=("$(ls "$d"/plugins/profile/*/*.xplane.pb)")
done
# large real captures of TensorFlow (tests/tf/large.py, as make
# real-large makes them, once; PEER_REAL_LARGE=0 skips them)
if [ "${PEER_REAL_LARGE:-1}" = 1 ]; then
	for k in map interleave tf1; do
		L=build/real/large/$k
		if [ ! -f "$L/done" ]; then
			rm -rf "$L"
			mkdir -p "$L"
			"$PY" tests/tf/large.py "$L" 0 "$k" >"$L/make.log" 2>&1 && touch "$L/done"
		fi
		if [ -f "$L/done" ]; then
			files+=("$(ls "$L"/plugins/profile/*/*.xplane.pb | head -1)")
		else
			echo "bench-peers: the large real capture $k failed (see $L/make.log)" >&2
		fi
	done
fi
while read -r f; do files+=("$f"); done < <(find examples tests/cases/ok -name '*.xplane.pb' | sort)
printf '%-44s %8s %11s %9s %11s %9s %11s %9s %8s %8s\n' capture MB tfdoctor_s RSS_MB \
	xprof_ip_s RSS_MB xprof_ov_s RSS_MB speed mem
met=0 total=0
for f in "${files[@]}"; do
	cat "$f" >/dev/null
	read -r t r rc < <(best "$TFD" analyze -q -f json -o - "$f")
	[ "$rc" = 0 ] || { echo "bench-peers: tfdoctor failed on $f" >&2; exit 1; }
	read -r ti ri rci < <(RUNS=1 best "$PY" tests/bench/xprof_peer.py input_pipeline_analyzer "$f")
	read -r to ro rco < <(RUNS=1 best "$PY" tests/bench/xprof_peer.py overview_page "$f")
	name=$(echo "$f" | sed 's|^build/bench/||; s|^build/real/large/|large-|; s|/plugins/profile/[^/]*/| |; s|examples/||; s|tests/cases/ok/||')
	awk -v n="$name" -v s="$(stat -c %s "$f")" -v t="$t" -v r="$r" -v ti="$ti" -v ri="$ri" -v rci="$rci" \
		-v to="$to" -v ro="$ro" -v rco="$rco" 'BEGIN {
		ip = rci == 0 ? sprintf("%11.3f %9.0f", ti, ri / 1024) : sprintf("%11s %9s", "failed", "-")
		ov = rco == 0 ? sprintf("%11.3f %9.0f", to, ro / 1024) : sprintf("%11s %9s", "failed", "-")
		sp = rci == 0 ? sprintf("%7.1fx", ti / t) : "-"
		me = rci == 0 ? sprintf("%7.1fx", ri / r) : "-"
		printf "%-44.44s %8.1f %11.3f %9.0f %s %s %8s %8s\n", n, s / 1e6, t, r / 1024, ip, ov, sp, me }'
	if [ "$rci" = 0 ]; then
		total=$((total + 1))
		if awk -v t="$t" -v ti="$ti" -v r="$r" -v ri="$ri" 'BEGIN { exit !(ti >= 10 * t && ri >= 10 * r) }'; then
			met=$((met + 1))
		fi
	fi
done
echo "(times: tfdoctor the least of $RUNS runs, xprof one run each; RSS: peak, whole process;"
echo " speed and mem: xprof's input-pipeline conversion over tfdoctor's full analysis)"
echo "targets: $met of $total captures with tfdoctor >= 10x faster and <= 1/10 the memory"
