#!/usr/bin/env bash
# The Slurm recipe for real: a single-node Slurm (private munged, slurmctld,
# slurmd) and a throwaway PostgreSQL; examples/slurm/submit.sh runs the job
# array (one task per host of a synthesized 8-host run) and the dependent
# merge+report task writing to the PostgreSQL history. The reports must
# equal one process over the whole run. Ends with "slurm: N passed, N failed".
# Usage: TFD=build/rel/tfdoctor tests/fleet/slurm.sh   (from the repository root)
set -u
SUITE=slurm
# shellcheck source=tests/lib.sh
. tests/lib.sh
# shellcheck source=tests/fleet/pgserver.sh
. tests/fleet/pgserver.sh
# shellcheck source=tests/fleet/slurmctl.sh
. tests/fleet/slurmctl.sh
TFD=$(cd "$(dirname "${TFD:-build/rel/tfdoctor}")" && pwd)/$(basename "${TFD:-build/rel/tfdoctor}")
trap 'slurm_stop; pg_stop; rm -rf "$T"' EXIT

if ! slurm_start "$(mktemp -d /tmp/tfd-slurm.XXXXXX)"; then
	echo "slurm: skipped, $SLURM_WHY"
	exit 0
fi
if ! pg_start "$(mktemp -d /tmp/tfd-pg.XXXXXX)"; then
	echo "slurm: skipped, $PG_WHY"
	exit 0
fi
chmod 755 "$T" # the tasks run as root too, but keep the tree readable

$TFD synth -o "$T/log" tests/fleet/eight-hosts.json >/dev/null || bad "synth"
RUN=$(ls -d "$T"/log/plugins/profile/*)
[ "$(ls "$RUN"/*.xplane.pb | wc -l)" = 8 ] && ok || bad "want 8 host captures"

# one process over the whole run: the reference
start=$(date +%s.%N)
$TFD analyze -q "$RUN" >"$T/direct.txt"
$TFD analyze -q -f json "$RUN" >"$T/direct.json"
one=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)")

start=$(date +%s.%N)
ids=$(TFDOCTOR=$TFD TFD_HISTORY=$PG_URL JOB=nightly-8 examples/slurm/submit.sh "$RUN" "$T/slurm")
[ -n "$ids" ] && ok || bad "submit.sh printed no job ids"
read -r array merge <<<"$ids"
# wait for both jobs to leave the queue (at most 3 minutes)
for _ in $(seq 1 360); do
	[ -z "$(squeue -h -j "$array,$merge" 2>/dev/null)" ] && break
	sleep 0.5
done
wall=$(python3 -c "import sys; print('%.2f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)")
[ -z "$(squeue -h 2>/dev/null)" ] && ok || bad "jobs still queued: $(squeue)"
n=$(ls "$T/slurm/partials"/*.partial.json 2>/dev/null | wc -l)
[ "$n" = 8 ] && ok || bad "want 8 partials from the array, got $n: $(cat "$T"/out/logs/*.log | head -5)"
cmp -s "$T/direct.txt" "$T/slurm/analysis.txt" && ok || bad "merged text differs: $(diff "$T/direct.txt" "$T/slurm/analysis.txt" | head -4)"
cmp -s "$T/direct.json" "$T/slurm/analysis.json" && ok || bad "merged json differs"
grep -q '"host": "worker-5"' "$T/slurm/analysis.json" && ok || bad "the slow worker is not analyzed first"
grep -q "pipeline-health" "$T/slurm/report.html" 2>/dev/null || grep -qi "<html" "$T/slurm/report.html" && ok || bad "no HTML report: $(cat "$T/slurm/logs/merge.log")"
# the merge task recorded the run in PostgreSQL, all 8 hosts
rows=$(pg_sql "SELECT count(*) FROM tfdoctor.runs r JOIN tfdoctor.hosts h ON h.run_id = r.id WHERE r.job = 'nightly-8'")
[ "$rows" = 8 ] && ok || bad "want 8 host rows of job nightly-8 in the history, got $rows"
# a report of the partials against that history equals one of the whole run
for src in "$RUN" "$T/slurm/partials"; do
	$TFD report -q -f json --no-record --timestamp 2026-11-23T02:00:00Z --history "$PG_URL" \
		--job nightly-8 "$src" | grep -v '"source"' >"$T/rep-$(basename "$src").json"
done
cmp -s "$T/rep-$(basename "$RUN").json" "$T/rep-partials.json" && ok || bad "report of partials differs from the run's"
run history --job nightly-8 "$PG_URL"
[ "$rc" = 0 ] && [[ "$out" == *"1 run, 1 job"* ]] && [[ "$out" == *"worker-5"* ]] && ok || bad "history: $out $err"
echo "slurm: 8-host run: job array + merge ${wall}s wall (queueing included), one process ${one}s"
finish
