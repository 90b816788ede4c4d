# lib.sh - shared helpers of the shell test suites. Source it after setting
# SUITE; it makes the scratch directory $T (removed on exit) and defines:
#   ok                 count a pass
#   bad MESSAGE        count a failure, "FAIL SUITE: MESSAGE" on stderr
#   run ARGS...        run $TFD ARGS, setting rc, out and err
#   finish             print "SUITE: N passed, N failed", exit 1 on failures
#   unwrap             stdin with prose joined: newlines and runs of spaces
#                      become one space (the text report wraps at 80 columns)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
	fail=$((fail + 1))
	echo "FAIL $SUITE: $*" >&2
}
run() {
	$TFD "$@" >"$T/out" 2>"$T/err"
	rc=$?
	out=$(cat "$T/out")
	err=$(cat "$T/err")
}
unwrap() { tr '\n' ' ' | tr -s ' '; }
# with_hook SO VAR=VALUE CMD...: the program CMD with the test hook SO
# preloaded and VAR set (tests/lib/*.c, built beside the binary: the
# product reads no test variable); a sanitized binary lets the hook load
# first
with_hook() {
	local so setting=$2
	# beside the binary under test, else the release build's (a binary
	# copied elsewhere, as when an old one is compared with a new one)
	so="$(dirname "$TFD")/$1"
	[ -f "$so" ] || so=build/rel/$1
	shift 2
	env LD_PRELOAD="$so${LD_PRELOAD:+:$LD_PRELOAD}" \
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
		"$setting" "$@"
}
# with_write_delay MS CMD...: CMD with its history commits held back MS ms
# (tests/lib/writedelay.c)
with_write_delay() {
	local ms=$1
	shift
	with_hook writedelay.so "TFD_TEST_WRITE_DELAY_MS=$ms" "$@"
}
# without_lib SONAME CMD...: CMD on a machine without the shared library
# SONAME as far as dlopen() goes (tests/lib/nolib.c)
without_lib() {
	local lib=$1
	shift
	with_hook nolib.so "TFD_TEST_NO_LIB=$lib" "$@"
}
# shrink_while_read SRC SIZE ERR_RE DELAY...: for each DELAY, SRC copied to
# $T/shrink.xplane.pb and analyzed while it is truncated to SIZE bytes DELAY
# seconds in (a writer still copying it, a log rotated); each run must end
# 0 (read before) or 1 with one error line matching ERR_RE, never a signal
shrink_while_read() {
	local src=$1 size=$2 re=$3 d pid rc
	shift 3
	for d in "$@"; do
		cp "$src" "$T/shrink.xplane.pb"
		$TFD analyze -q -o "$T/shrink.txt" "$T/shrink.xplane.pb" 2>"$T/shrink.err" &
		pid=$!
		sleep "$d"
		truncate -s "$size" "$T/shrink.xplane.pb"
		wait $pid
		rc=$?
		if [ "$rc" -eq 0 ] || { [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/shrink.err")" -eq 1 ] &&
			grep -q "$re" "$T/shrink.err"; }; then
			ok
		else
			bad "$(basename "$src") shrinking ${d} s into the read: exit $rc $(head -2 "$T/shrink.err")"
		fi
	done
	rm -f "$T/shrink.xplane.pb"
}
finish() {
	echo "$SUITE: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}

# A Chrome trace of 20 steps whose pipeline is Model <- NAME <- TFRecord, NAME
# given as JSON string text (escapes allowed: 'Map\\' for a backslash);
# untrusted-name tests put control bytes and backslashes there.
trace_named() { # OUT NAME
	awk -v nm="$2" 'BEGIN {
		printf "{\"traceEvents\":[{\"ph\":\"M\",\"pid\":1,\"name\":\"process_name\",\"args\":{\"name\":\"/host:CPU\"}}"
		for (i = 0; i < 20; i++) {
			t = i * 1000
			printf ",{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":800,\"name\":\"IteratorGetNext\",\"args\":{\"group_id\":\"%d\"}}", t, i
			printf ",{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":800,\"name\":\"Iterator::Model\",\"args\":{\"id\":\"1\"}}", t
			printf ",{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":790,\"name\":\"Iterator::%s\",\"args\":{\"id\":\"2\",\"parent_id\":\"1\",\"long_name\":\"Iterator::Model::%s\"}}", t, nm, nm
			printf ",{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":770,\"name\":\"Iterator::TFRecord\",\"args\":{\"id\":\"3\",\"parent_id\":\"2\",\"long_name\":\"Iterator::Model::%s::TFRecord\"}}", t + 1, nm
			printf ",{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%d,\"dur\":200,\"name\":\"train_step\",\"args\":{\"group_id\":\"%d\"}}", t + 800, i
		}
		printf "]}\n"
	}' >"$1"
}

# A partial of N hosts, each partial IN's first host under its own name
# (PREFIX and three digits) and path (under DIR): a fleet's report made
# without analyzing N captures.
many_hosts() { # IN OUT N PREFIX DIR
	python3 - "$@" <<'PY'
import json, sys
src, out, n, prefix, d = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
doc = json.load(open(src))
h = doc["hosts"][0]
doc["hosts"] = []
for i in range(n):
    x = json.loads(json.dumps(h))
    x["name"], x["path"] = "%s%03d" % (prefix, i), "%s/%s%03d.xplane.pb" % (d, prefix, i)
    doc["hosts"].append(x)
json.dump(doc, open(out, "w"))
PY
}
