#!/usr/bin/env bash
# Run catalog cases on real TensorFlow: each case's capture, truth,
# tfdoctor's and xprof's answers under OUT/CASE/ (result.json beside logs/).
#   tests/tf/run.sh OUT [CASE...]        every case when none is named
#   QUICK=1 tests/tf/run.sh OUT CASE...  short windows (the CI smoke)
# Needs the virtual environment (make tf-venv) and the binary (TFD).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${1:?usage: tests/tf/run.sh OUT [CASE...]}
shift
PY=${TF_PY:-build/tfvenv/bin/python}
export PYTHONDONTWRITEBYTECODE=1
TFD=${TFD:-build/rel/tfdoctor}
[ -x "$PY" ] || { echo "tf: no virtual environment at $PY (make tf-venv)" >&2; exit 1; }
[ -x "$TFD" ] || { echo "tf: no binary at $TFD (make)" >&2; exit 1; }
mkdir -p "$OUT"
if [ $# -eq 0 ]; then
	mapfile -t cases < <("$PY" tests/tf/catalog.py list 2>/dev/null | cut -d' ' -f1)
else
	cases=("$@")
fi
fail=0
for c in "${cases[@]}"; do
	# one process a case: TensorFlow's thread pools and AUTOTUNE state start afresh
	if ! "$PY" tests/tf/catalog.py run "$c" "$OUT" --tfd "$TFD" ${QUICK:+--quick} \
		2>"$OUT/$c.stderr" | tail -1; then
		echo "tf: case $c failed (see $OUT/$c.stderr)" >&2
		fail=1
	fi
done
exit $fail
