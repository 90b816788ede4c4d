#!/bin/sh
# submit.sh RUN_DIR OUT [TASKS] - analyze one profiler run on Slurm: a job
# array of TASKS tasks (default: one per host capture), each writing a
# partial result, then a merge+report task that runs when all succeeded.
# Prints the two job ids. Environment: TFDOCTOR, TFD_HISTORY, JOB, and
# SBATCH_* / sbatch options through SBATCH_ARGS (partition, account, ...).
set -eu
[ $# -ge 2 ] || { echo "usage: submit.sh RUN_DIR OUT [TASKS]" >&2; exit 2; }
RUN_DIR=$(cd "$1" && pwd)
mkdir -p "$2/partials" "$2/logs"
OUT=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tasks=${3:-$(find "$RUN_DIR" -name '*.xplane.pb' | wc -l)}
[ "$tasks" -gt 0 ] || tasks=$(find "$RUN_DIR" -name '*.trace.json*' | wc -l)
[ "$tasks" -gt 0 ] || { echo "submit.sh: no host captures under $RUN_DIR" >&2; exit 1; }
rm -f "$OUT"/partials/*.partial.json
export RUN_DIR OUT PARTIALS="$OUT/partials"
# shellcheck disable=SC2086
array=$(sbatch --parsable ${SBATCH_ARGS:-} --export=ALL --array="0-$((tasks - 1))" \
	-o "$OUT/logs/analyze-%a.log" "$here/analyze-host.sbatch")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable ${SBATCH_ARGS:-} --export=ALL --dependency="afterok:$array" \
	--kill-on-invalid-dep=yes -o "$OUT/logs/merge.log" "$here/merge-report.sbatch")
echo "$array ${merge%%;*}"
