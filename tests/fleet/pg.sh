#!/usr/bin/env bash
# The PostgreSQL history: a throwaway server (initdb + pg_ctl on a Unix
# socket in a temporary directory), the same reports and history listings as
# the SQLite file, 20 concurrent writers on a fresh database (the schema is
# created once) with one killed mid-write, read-only reading, and one-line
# errors that never show a password. Ends with "pg: N passed, N failed".
# Usage: TFD=build/rel/tfdoctor tests/fleet/pg.sh   (from the repository root)
set -u
SUITE=pg
# shellcheck source=tests/lib.sh
. tests/lib.sh
# shellcheck source=tests/fleet/pgserver.sh
. tests/fleet/pgserver.sh
TFD=${TFD:-build/rel/tfdoctor}
trap 'pg_stop; rm -rf "$T"' EXIT

if ! pg_start "$(mktemp -d /tmp/tfd-pg.XXXXXX)"; then
	echo "pg: skipped, $PG_WHY"
	exit 0
fi
AI=examples/ai-notebook/ai-notebook.xplane.pb
Z=examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz

# ---- 20 writers at once on a database with no schema yet; one killed -------
pids=()
for i in $(seq 1 20); do
	cap=$AI
	[ $((i % 2)) = 0 ] && cap=$Z
	if [ "$i" = 7 ]; then
		# the victim: holds its transaction open 30 s after writing its rows
		with_write_delay 30000 $TFD report -q --history "$PG_URL" --job "w$i" \
			--timestamp 2026-11-20T02:00:00Z -o "$T/w$i.html" $cap 2>"$T/w$i.err" &
		victim=$!
	else
		with_write_delay $((RANDOM % 300)) $TFD report -q --history "$PG_URL" --job "w$i" \
			--timestamp 2026-11-20T02:00:00Z -o "$T/w$i.html" $cap 2>"$T/w$i.err" &
		pids+=($!)
	fi
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
[ "$failed" = 0 ] && ok || bad "$failed of 19 writers failed: $(cat "$T"/w*.err | head -3)"
# the victim is inside its write transaction by now (its rows are in, not committed)
for _ in $(seq 1 100); do
	[ "$(pg_sql "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'")" -ge 1 ] && break
	sleep 0.1
done
inflight=$(pg_sql "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'")
[ "$inflight" = 1 ] && ok || bad "victim not mid-write ($inflight open write transactions)"
kill -9 "$victim"
wait "$victim" 2>/dev/null
for _ in $(seq 1 100); do
	[ "$(pg_sql "SELECT count(*) FROM pg_stat_activity WHERE state = 'idle in transaction'")" = 0 ] && break
	sleep 0.1
done
runs=$(pg_sql "SELECT count(*) FROM tfdoctor.runs")
hosts=$(pg_sql "SELECT count(*) FROM tfdoctor.hosts")
[ "$runs" = 19 ] && ok || bad "want the 19 committed runs, found $runs"
[ "$(pg_sql "SELECT count(*) FROM tfdoctor.runs WHERE job = 'w7'")" = 0 ] && ok || bad "the killed writer left a run"
[ "$(pg_sql "SELECT count(DISTINCT job) FROM tfdoctor.runs")" = 19 ] && ok || bad "a job is missing or doubled"
[ "$(pg_sql "SELECT count(*) FROM tfdoctor.runs r WHERE NOT EXISTS (SELECT 1 FROM tfdoctor.hosts h WHERE h.run_id = r.id)")" = 0 ] &&
	ok || bad "a run without its hosts"
[ "$(pg_sql "SELECT version FROM tfdoctor.meta")" = 2 ] && [ "$(pg_sql "SELECT count(*) FROM tfdoctor.meta")" = 1 ] &&
	ok || bad "schema version row: $(pg_sql "SELECT * FROM tfdoctor.meta" | tr '\n' ' ')"
echo "$runs runs, $hosts host rows written by 19 concurrent writers; the killed one left none" >"$T/concurrency"
cat "$T/concurrency"
run history "$PG_URL"
[ "$rc" = 0 ] && [[ "$out" == *"integrity ok, schema 2, 19 runs, 19 jobs"* ]] && ok || bad "history after the writers: $rc $out $err"

# ---- the same reports on SQLite and PostgreSQL: the same history -------------
DB=$T/h.db
for b in "$DB" "$PG_URL"; do
	tag=sqlite
	[ "$b" = "$PG_URL" ] && tag=pg
	$TFD report -q --history "$b" --job nightly --timestamp 2026-11-20T02:00:00Z -f json -o "$T/$tag.1.json" $AI
	$TFD report -q --history "$b" --job nightly --timestamp 2026-11-21T02:00:00Z -f json -o "$T/$tag.2.json" $AI
	$TFD report -q --history "$b" --job nightly --timestamp 2026-11-22T02:00:00Z --fail-on regression -f json -o "$T/$tag.3.json" $Z
	echo $? >"$T/$tag.rc"
	$TFD history -f csv --job nightly "$b" >"$T/$tag.csv"
done
[ "$(cat "$T/pg.rc")" = 3 ] && [ "$(cat "$T/sqlite.rc")" = 3 ] && ok || bad "regression gate: sqlite $(cat "$T/sqlite.rc"), pg $(cat "$T/pg.rc")"
# the same capture reported twice is one run, on both backends
[ "$(wc -l <"$T/pg.csv")" -eq 3 ] && [ "$(wc -l <"$T/sqlite.csv")" -eq 3 ] && ok || bad "runs recorded: sqlite $(wc -l <"$T/sqlite.csv"), pg $(wc -l <"$T/pg.csv") lines"
# run ids differ (the writers above took 1-20 on the server): compare without them
for tag in sqlite pg; do
	cut -d, -f2- "$T/$tag.csv" >"$T/$tag.csv2"
	python3 - "$T/$tag.3.json" >"$T/$tag.3.norm" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def strip(o):
    if isinstance(o, dict):
        return {k: strip(v) for k, v in o.items() if k not in ("id", "run_id")}
    if isinstance(o, list):
        return [strip(v) for v in o]
    return o
print(json.dumps(strip(d), sort_keys=True, indent=1))
PY
done
cmp -s "$T/sqlite.csv2" "$T/pg.csv2" && ok || bad "history csv differs: $(diff "$T/sqlite.csv2" "$T/pg.csv2" | head -4)"
cmp -s "$T/sqlite.3.norm" "$T/pg.3.norm" && ok || bad "report json differs: $(diff "$T/sqlite.3.norm" "$T/pg.3.norm" | head -6)"
grep -q '"regressions"' "$T/pg.3.json" && ok || bad "no regressions in the PostgreSQL-backed report"
run history --job nightly "$PG_URL"
[ "$rc" = 0 ] && [[ "$out" == *"2026-11-22T02:00:00Z"* ]] && ok || bad "history --job on pg: $out $err"
run history -f json "$PG_URL"
[ "$rc" = 0 ] && python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert 'password' not in d['database']" "$T/out" && ok || bad "history json on pg: $out"

# ---- watch records into the same server --------------------------------------
$TFD synth -q -o "$T/wlog" tests/synth/16-multi-host-slow-worker.json
$TFD watch -q --once --existing --settle 0 --history "$PG_URL" --job watched -f json "$T/wlog" >"$T/watch.out" 2>"$T/watch.err"
[ "$(pg_sql "SELECT count(*) FROM tfdoctor.hosts h JOIN tfdoctor.runs r ON r.id = h.run_id WHERE r.job = 'watched'")" = 4 ] &&
	ok || bad "watch --history on pg: $(cat "$T/watch.err")"

# ---- the PG* environment picks the server ------------------------------------
PGHOST=$PG_DIR PGPORT=$PG_PORT PGUSER=postgres PGDATABASE=tfd $TFD history postgresql:// >"$T/env.out" 2>&1
grep -q "21 jobs" "$T/env.out" && ok || bad "PG* environment: $(cat "$T/env.out")"

# ---- reading changes nothing; a database without a history is refused --------
pg_as "$PG_BIN/createdb" -h "$PG_DIR" -p "$PG_PORT" -U postgres empty
E="postgresql://postgres@/empty?host=$PG_DIR&port=$PG_PORT"
run history "$E"
[ "$rc" = 1 ] && [[ "$err" == *"no tfdoctor history in this database"* ]] && ok || bad "history on an empty db: $rc $err"
n=$("$PG_BIN/psql" -h "$PG_DIR" -p "$PG_PORT" -U postgres -d empty -XAtqc "SELECT count(*) FROM pg_namespace WHERE nspname = 'tfdoctor'")
[ "$n" = 0 ] && ok || bad "history created the schema"
# a newer schema is refused by writers and readers
pg_sql "UPDATE tfdoctor.meta SET version = 99"
run report -q --history "$PG_URL" --job x -f json $AI
[ "$rc" = 1 ] && [[ "$err" == *"schema version 99 is newer"* ]] && ok || bad "newer schema (report): $rc $err"
run history "$PG_URL"
[ "$rc" = 1 ] && [[ "$err" == *"schema version 99 is newer"* ]] && ok || bad "newer schema (history): $rc $err"
pg_sql "UPDATE tfdoctor.meta SET version = 1"

# ---- errors: one line, exit 1, no password shown -----------------------------
run report -q --history "postgresql://alice:s3cret@/tfd?host=$T/nosuchdir&port=1" --job x -f json $AI
[ "$rc" = 1 ] && [ "$(wc -l <"$T/err")" = 1 ] && [[ "$err" == *"cannot connect to the history database"* ]] &&
	[[ "$err" != *s3cret* ]] && [[ "$err" == *"alice:***@"* ]] && ok || bad "unreachable server: $rc $err"
run history "postgres://bob@/tfd?host=$T/nosuchdir&port=1&password=hunter2"
[ "$rc" = 1 ] && [[ "$err" != *hunter2* ]] && ok || bad "password in query shown: $err"
[ -z "$out" ] && ok || bad "error wrote to stdout"

finish
