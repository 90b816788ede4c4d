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
finish() {
	echo "$SUITE: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
