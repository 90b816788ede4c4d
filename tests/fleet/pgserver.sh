# pgserver.sh - a throwaway PostgreSQL server for the fleet suites (source it).
#   pg_start DIR    initdb + start on a Unix socket in DIR (no TCP); sets
#                   PG_URL (postgresql://...), PG_DIR, PG_PORT; returns 1 and
#                   sets PG_WHY when it cannot
#   pg_stop         stop it and remove DIR
#   pg_sql SQL      run SQL as the postgres user, rows as a|b|c lines
# The server refuses to run as root: as root, DIR belongs to the postgres
# user and the server runs as that user (spec/fleet-notes.md).
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
PG_DIR=
pg_as() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
pg_start() {
	PG_DIR=$1
	if [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ]; then
		PG_WHY="no PostgreSQL server (Debian package postgresql; make deps installs it)"
		return 1
	fi
	if [ "$(id -u)" = 0 ] && ! id postgres >/dev/null 2>&1; then
		PG_WHY="no postgres user to run the server as"
		return 1
	fi
	mkdir -p "$PG_DIR"
	[ "$(id -u)" = 0 ] && chown postgres "$PG_DIR"
	# the socket's port only names the socket file: any free number will do
	PG_PORT=$((20000 + RANDOM % 20000))
	pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres --no-locale -E UTF8 \
		>"$PG_DIR/initdb.log" 2>&1 || { PG_WHY="initdb failed: $(tail -1 "$PG_DIR/initdb.log")"; return 1; }
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
		-o "-k $PG_DIR -p $PG_PORT -c listen_addresses= -c max_connections=60 -c fsync=off" start \
		>/dev/null 2>&1 || { PG_WHY="the server did not start: $(tail -2 "$PG_DIR/server.log" | tr '\n' ' ')"; return 1; }
	pg_as "$PG_BIN/createdb" -h "$PG_DIR" -p "$PG_PORT" -U postgres tfd || { PG_WHY="createdb failed"; return 1; }
	PG_URL="postgresql://postgres@/tfd?host=$PG_DIR&port=$PG_PORT"
}
pg_stop() {
	[ -n "$PG_DIR" ] && [ -d "$PG_DIR/data" ] &&
		pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
	[ -n "$PG_DIR" ] && rm -rf "$PG_DIR"
	PG_DIR=
}
pg_sql() {
	"$PG_BIN/psql" -h "$PG_DIR" -p "$PG_PORT" -U postgres -d tfd -XAtq -v ON_ERROR_STOP=1 -c "$1"
}
