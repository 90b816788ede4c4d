#!/usr/bin/env bash
# Two ways to one answer: a pipeline's call tree either lists each call's
# children or finds them by scanning its thread (chosen by memory, see
# docs/internals.md; TFDOCTOR_CALL_TREE=lists or =scan picks one). Every
# committed capture and two synthesized large ones (an iterator-dense
# chain, a tf.data-heavy host) give byte for byte the same JSON and text
# reports both ways; and a host's dataset-function calls read whole by
# every pipeline or thread by thread (TFDOCTOR_FN_CALLS=whole), the same
# JSON; every pipeline's sums folded one root call's group at a time
# (TFDOCTOR_FOLD_CHECK=1) the same as the pipeline pass's; and
# TFDOCTOR_INFLIGHT=1's measure beside the same report; every host's calls
# linked again in time order (TFDOCTOR_TIMELINK_CHECK=1) as the link pass
# links them; every host plane's iterator events decoded again from the
# file (TFDOCTOR_SOURCE_CHECK=1) as the read packed them. Ends with
# "forms: N passed, N failed".
set -u
SUITE=forms
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
$TFD synth -q --scale 25 -o "$T/dense" tests/bench/iter-dense.json
$TFD synth -q --scale 10 -o "$T/tfdata" tests/bench/tfdata-heavy.json
mapfile -t files < <(find tests/cases/ok tests/golden examples "$T/dense" "$T/tfdata" \
	\( -name '*.xplane.pb' -o -name '*.trace.json' -o -name '*.trace.json.gz' \) | sort)
[ "${#files[@]}" -ge 40 ] && ok || bad "only ${#files[@]} captures found"
for f in "${files[@]}"; do
	for fmt in json text; do
		TFDOCTOR_CALL_TREE=lists "$TFD" analyze -q -f "$fmt" -o - "$f" >"$T/lists" 2>"$T/e1"
		rc1=$?
		TFDOCTOR_CALL_TREE=scan "$TFD" analyze -q -f "$fmt" -o - "$f" >"$T/scan" 2>"$T/e2"
		rc2=$?
		if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/lists" "$T/scan" && cmp -s "$T/e1" "$T/e2"; then
			ok
		else
			bad "$f -f $fmt: lists ($rc1) and scan ($rc2) differ: $(diff "$T/lists" "$T/scan" | head -4)"
		fi
	done
done
# a host's dataset-function calls read by each pipeline thread by thread
# (its own threads whole, the others in its window; the tallies of which
# calls ran for another pipeline made once) or whole for every pipeline
# (TFDOCTOR_FN_CALLS=whole): the same JSON
for f in "${files[@]}"; do
	TFDOCTOR_FN_CALLS=whole "$TFD" analyze -q -f json -o - "$f" >"$T/whole" 2>"$T/e1"
	rc1=$?
	"$TFD" analyze -q -f json -o - "$f" >"$T/index" 2>"$T/e2"
	rc2=$?
	if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/whole" "$T/index" && cmp -s "$T/e1" "$T/e2"; then
		ok
	else
		bad "$f: function calls whole ($rc1) and by thread ($rc2) differ: $(diff "$T/whole" "$T/index" | head -4)"
	fi
done
# hooked VAR WORD AGREES FILE: FILE's JSON report with VAR=1 is the plain
# one (with the same exit status), and each of its "WORD: " lines on
# stderr matches AGREES; how many did, in $agreed
hooked() {
	"$TFD" analyze -q -f json -o - "$4" >"$T/plain" 2>/dev/null
	local rc1=$?
	env "$1=1" "$TFD" analyze -q -f json -o - "$4" >"$T/hooked" 2>"$T/e1"
	local rc2=$?
	agreed=$(grep -c "$3" "$T/e1")
	if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/plain" "$T/hooked" &&
		[ "$(grep -c "$2: " "$T/e1")" = "$agreed" ]; then
		ok
	else
		bad "$4: $1=1: $(grep -m1 "$2: " "$T/e1")"
	fi
}
# every pipeline's sums folded again one root call's group of calls at a
# time (TFDOCTOR_FOLD_CHECK=1, src/analysis/fold.c: what a reader in time
# order would fold) are the pipeline pass's
folded=0
for f in "${files[@]}"; do
	hooked TFDOCTOR_FOLD_CHECK fold 'fold: .*: the same sums$' "$f"
	folded=$((folded + agreed))
done
# (every capture's pipelines, hundreds of them, were folded)
[ "$folded" -ge 300 ] && ok || bad "only $folded pipelines folded"
# every host's calls made and linked again in time order
# (TFDOCTOR_TIMELINK_CHECK=1, src/analysis/timelink.c: each link settled
# at the first instant a reader in time order can know it) are linked as
# the link pass links them, their iterators made again in time order
# hold the same calls, and the pass before the stream (tfd_graph_prepass())
# makes the scan's iterators, parents, roots and root calls (the
# analysis is then not lean: the report is the same)
linked=0
streamed=0
walked=0
for f in "${files[@]}"; do
	hooked TFDOCTOR_TIMELINK_CHECK timelink \
		'timelink: .*: [0-9]* calls linked in time order as by the link pass; .* 0 calls under another; the pass before: [0-9]* root calls as the scan'"'"'s; closed as the stream went: [0-9]* groups, at most \([0-9]*\) calls open at [0-9-]* ns, none late; folded as they closed, the sums per iterator of the whole tree, at most \1 records held; the stream'"'"'s own state at most [0-9]* bytes, [0-9]* calls seen kept at once, the elements'"'"' keys and takers [0-9]* bytes; the stream took [0-9.]* s after the pass before'"'"'s [0-9.]* s$' "$f"
	linked=$((linked + agreed))
	# ... and where it held, each pipeline's sums made from the stream's
	# folds, with the root calls the pass before lists and the selection
	# the pipeline pass makes of them (src/analysis/timesel.c), are the
	# pipeline pass's; and its calls walked again from the host's events
	# (src/analysis/capwalk.c: what the passes after the sums read) are
	# the call table's, as are the host's thread roots walked again
	n=$(grep -c 'stream: .*: pipeline [0-9]*: its sums as the pipeline pass'"'"'s$' "$T/e1")
	m=$(grep -c 'stream: .*: pipeline [0-9]*: its [0-9]* calls walked again from the events as from the table$' "$T/e1")
	r=$(grep -c 'stream: .*: its thread roots ([0-9]* runs) walked again from the events as from the table$' "$T/e1")
	[ "$(grep -c 'stream: ' "$T/e1")" = "$((n + m + r))" ] && ok || bad "$f: $(grep -m1 -e 'stream: .*differ' "$T/e1")"
	streamed=$((streamed + n))
	walked=$((walked + m))
done
# (the hosts of every capture with calls, XSpace and Chrome, were linked;
# their pipelines, hundreds of them, summed from the stream)
[ "$linked" -ge 100 ] && ok || bad "only $linked hosts linked in time order"
[ "$streamed" -ge 300 ] && ok || bad "only $streamed pipelines summed from the stream"
[ "$walked" -ge 300 ] && ok || bad "only $walked pipelines' calls walked from the events"
# every XSpace host plane's iterator, Produce and Consume events decoded
# again from the file, none kept (TFDOCTOR_SOURCE_CHECK=1,
# src/input/xspace_source.c: what such a reader would read them from) are
# the events the read packed; the analysis reads them at its start, from
# the file's mapping and the plane's metadata kept past the read; each
# thread's packed events are the file's merged back by the thread's bits
# (struct tfd_thread.kbits: which packed events a read leaving them in the
# file would take from it)
sourced=0
for f in "${files[@]}"; do
	case $f in *.xplane.pb) ;; *) continue ;; esac
	hooked TFDOCTOR_SOURCE_CHECK source \
		'source: .*: [0-9]* iterator, Produce and Consume events decoded again from the file kept past the read as packed, in [0-9.]* s; the pass before from the file as from the packed events, in [0-9.]* s; by the bits, [0-9]* events from the file in the packed order on [0-9]* threads (0 sorted)$' "$f"
	sourced=$((sourced + agreed))
done
[ "$sourced" -ge 100 ] && ok || bad "only $sourced host planes decoded again"
# ... the hosts of a log directory too, each file read into a capture of
# its own on a core of its own and then moved into one (the two workers'
# events by the signatures of their own captures)
TFDOCTOR_SOURCE_CHECK=1 "$TFD" analyze -q -f json -o - tests/cases/ok/tf221-mwms-two-workers 2>"$T/e1" >/dev/null
[ "$(grep -c 'source: vm: [0-9]* iterator, Produce and Consume events decoded again from the file kept past the read as packed' "$T/e1")" = 2 ] &&
	[ "$(grep -c 'source: ' "$T/e1")" = 2 ] && ok || bad "two workers' sources: $(head -c 300 "$T/e1")"
# ... and each host's calls made and linked in time order from the file
# itself (timelink.c over the source's cursors, one per thread, merged by
# time: what the stream will read), as from the packed events
fromfile=0
for f in "${files[@]}"; do
	case $f in *.xplane.pb) ;; *) continue ;; esac
	"$TFD" analyze -q -f json -o - "$f" >"$T/plain" 2>/dev/null
	rc1=$?
	TFDOCTOR_SOURCE_CHECK=1 TFDOCTOR_TIMELINK_CHECK=1 "$TFD" analyze -q -f json -o - "$f" \
		>"$T/hooked" 2>"$T/e1"
	rc2=$?
	n=$(grep -c 'timelink: .*: from the file: [0-9]* calls linked in time order as by the link pass; .* 0 calls under another; the pass before: [0-9]* root calls as the scan'"'"'s; closed as the stream went: [0-9]* groups, at most \([0-9]*\) calls open at [0-9-]* ns, none late; folded as they closed, the sums per iterator of the whole tree, at most \1 records held; the stream'"'"'s own state at most [0-9]* bytes, [0-9]* calls seen kept at once, the elements'"'"' keys and takers [0-9]* bytes; the stream took [0-9.]* s after the pass before'"'"'s [0-9.]* s$' "$T/e1")
	if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/plain" "$T/hooked" &&
		[ "$(grep -c 'timelink: ' "$T/e1")" = "$n" ] &&
		[ "$(grep -c 'stream: ' "$T/e1")" = "$(grep -c -e 'stream: .*: its sums as the pipeline pass' -e 'stream: .*calls walked again from the events as from the table' -e 'stream: .*thread roots ([0-9]* runs) walked again from the events as from the table$' "$T/e1")" ]; then
		ok
	else
		bad "$f: timelink from the file: $(grep -m1 -e 'timelink: ' -e 'stream: .*differ' "$T/e1")"
	fi
	fromfile=$((fromfile + n))
done
[ "$fromfile" -ge 100 ] && ok || bad "only $fromfile hosts linked in time order from the file"
# a read that leaves every XSpace host plane's iterator, Produce and
# Consume events in the file (TFDOCTOR_SOURCE_LEAVE=1: a bit per event
# of each thread says where it goes among the packed ones; every pass
# reads them back through struct tfd_ev_mcursor) gives the same report;
# with the checks on too, the source's line says which threads it left
# there and the calls made and linked from the file are the link pass's
left=0
for f in "${files[@]}"; do
	case $f in *.xplane.pb) ;; *) continue ;; esac
	for fmt in json text; do
		"$TFD" analyze -q -f $fmt -o - "$f" >"$T/plain.$fmt" 2>"$T/e0"
		rc1=$?
		TFDOCTOR_SOURCE_LEAVE=1 "$TFD" analyze -q -f $fmt -o - "$f" >"$T/hooked" 2>"$T/e1"
		rc2=$?
		if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/plain.$fmt" "$T/hooked" && cmp -s "$T/e0" "$T/e1"; then
			ok
		else
			bad "$f -f $fmt: left in the file ($rc2) differs from packed ($rc1): $(diff "$T/plain.$fmt" "$T/hooked" | head -4) $(head -c 200 "$T/e1")"
		fi
	done
	TFDOCTOR_SOURCE_LEAVE=1 TFDOCTOR_SOURCE_CHECK=1 TFDOCTOR_TIMELINK_CHECK=1 \
		"$TFD" analyze -q -f json -o - "$f" >"$T/hooked" 2>"$T/e1"
	rc2=$?
	n=$(grep -c 'source: .*: [0-9]* iterator, Produce and Consume events decoded again from the file kept past the read as packed, in [0-9.]* s; the pass before from the file as from the packed events, in [0-9.]* s; by the bits, [0-9]* events from the file in the packed order on [0-9]* threads (0 sorted)\(; [1-9][0-9]* threads left in the file by the read\)\?$' "$T/e1")
	m=$(grep -c 'timelink: .*: from the file: [0-9]* calls linked in time order as by the link pass; .* 0 calls under another; the pass before: [0-9]* root calls as the scan'"'"'s; closed as the stream went: [0-9]* groups, at most [0-9]* calls open at [0-9-]* ns, none late; folded as they closed, the sums per iterator of the whole tree, at most [0-9]* records held; the stream'"'"'s own state at most [0-9]* bytes, [0-9]* calls seen kept at once, the elements'"'"' keys and takers [0-9]* bytes; the stream took [0-9.]* s after the pass before'"'"'s [0-9.]* s$' "$T/e1")
	if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/plain.json" "$T/hooked" &&
		[ "$(grep -c 'source: ' "$T/e1")" = "$n" ] && [ "$(grep -c 'timelink: ' "$T/e1")" = "$m" ] &&
		[ "$(grep -c 'stream: ' "$T/e1")" = "$(grep -c -e 'stream: .*: its sums as the pipeline pass' -e 'stream: .*calls walked again from the events as from the table' -e 'stream: .*thread roots ([0-9]* runs) walked again from the events as from the table$' "$T/e1")" ]; then
		ok
	else
		bad "$f: left in the file, checked: $(grep -m1 -e 'source: ' -e 'timelink: ' "$T/e1")"
	fi
	left=$((left + $(grep -c 'threads left in the file by the read$' "$T/e1")))
done
[ "$left" -ge 100 ] && ok || bad "only $left hosts left events in the file"
# every pipeline built from the stream's sums (TFDOCTOR_STREAM=1: the
# host's graph made with its iterators alone, no call kept, the stream run
# over its events in time order; the root calls, the stages' sums, edges
# and window pairs are the stream's, src/analysis/timesel.c; the capacity
# pass and the thread roots walk the host's events, the root walks read
# the pass before's list): the same JSON and text reports, with the
# default selection, --rank and --no-warmup (the stream selects as the
# options say), and with the events left in the file (the stream and the
# walks read them there); each thread's owner counted from its calls by
# iterator, where every thread works for one owner, is the walk's
built=0 counted=0
for f in "${files[@]}"; do
	for opt in "-f json" "-f text" "-f json --rank 1" "-f json --no-warmup" "-f json left"; do
		case $opt in *--*) case $f in */tf221-*|*/golden/*) ;; *) continue ;; esac ;; esac
		leave=0
		case $opt in *left) case $f in *.xplane.pb) leave=1 opt="-f json" ;; *) continue ;; esac ;; esac
		# shellcheck disable=SC2086
		TFDOCTOR_SOURCE_LEAVE=$leave "$TFD" analyze -q $opt -o - "$f" >"$T/plain" 2>"$T/e0"
		rc1=$?
		# shellcheck disable=SC2086
		TFDOCTOR_SOURCE_LEAVE=$leave TFDOCTOR_STREAM=1 "$TFD" analyze -q $opt -o - "$f" >"$T/hooked" 2>"$T/e1"
		rc2=$?
		n=$(grep -c "stream: .*: pipeline [0-9]*: built from the stream's sums$" "$T/e1")
		m=$(grep -c "stream: .*: root [0-9]*: its [0-9]* threads' owners counted as walked$" "$T/e1")
		if [ "$rc1" -eq "$rc2" ] && cmp -s "$T/plain" "$T/hooked" &&
			[ "$(grep -c -e 'stream: ' -e 'timelink: ' "$T/e1")" = "$((n + m))" ] &&
			cmp -s "$T/e0" <(grep -v -e "stream: .*: built from the stream's sums$" -e "stream: .*owners counted as walked$" "$T/e1"); then
			ok
		else
			bad "$f $opt (left $leave): built from the stream: $(diff "$T/plain" "$T/hooked" | head -4) $(grep -m1 -e 'timelink: ' -e 'stream: .*differ' -e 'stream: ' "$T/e1")"
		fi
		[ "$opt$leave" = "-f json0" ] && built=$((built + n)) counted=$((counted + m))
	done
done
[ "$built" -ge 400 ] && ok || bad "only $built pipelines built from the stream"
[ "$counted" -ge 100 ] && ok || bad "only $counted pipelines' owners counted"
# --low-memory (the events left in the file, the pipelines built from the
# stream's sums where the host's calls hold it and its elements are few):
# the same JSON, and the same notes, on every capture
for f in "${files[@]}"; do
	"$TFD" analyze -f json -o - "$f" >"$T/plain" 2>"$T/e0"
	rc1=$?
	"$TFD" analyze --low-memory -f json -o - "$f" >"$T/hooked" 2>"$T/e1"
	rc2=$?
	[ "$rc1" -eq "$rc2" ] && cmp -s "$T/plain" "$T/hooked" && cmp -s "$T/e0" "$T/e1" && ok ||
		bad "$f --low-memory: $(diff "$T/plain" "$T/hooked" | head -4) $(diff "$T/e0" "$T/e1" | head -2)"
done
# memory short for a host plane (TFDOCTOR_MEM_BUDGET says how much is
# left: under 0.4 of the plane's bytes) reads and analyzes it as
# --low-memory does: the same JSON but for one note saying so
for f in tests/cases/ok/tf221-window-flat-map/vm.xplane.pb "$T"/dense/plugins/profile/*/*.xplane.pb; do
	"$TFD" analyze -q -f json -o - "$f" >"$T/plain" 2>/dev/null
	TFDOCTOR_MEM_BUDGET=1000 "$TFD" analyze -f json -o - "$f" >"$T/hooked" 2>"$T/e1"
	diff "$T/plain" "$T/hooked" >"$T/d"
	[ "$(grep -c '^<' "$T/d")" = 1 ] && grep -q '^<   "notes": \[\]$' "$T/d" &&
		[ "$(grep -c '^>' "$T/d")" = 6 ] &&
		grep -q '^>       "message": "memory was short (0 MB free): analyzed as with --low-memory (the same findings, in more time)"$' "$T/d" &&
		grep -q 'note: .*: memory was short (0 MB free)' "$T/e1" && ok ||
		bad "$f: memory short: $(head -c 300 "$T/d")"
done
# ... and with the time-order check on (the stream compared with the call
# table first, then the pipelines built from its sums): the same JSON
for f in tests/cases/ok/tf221-window-flat-map/vm.xplane.pb tests/cases/ok/tf221-shuffle-filling-past-capture/vm.xplane.pb "$T"/dense/plugins/profile/*/*.xplane.pb; do
	"$TFD" analyze -q -f json -o - "$f" >"$T/plain" 2>/dev/null
	TFDOCTOR_TIMELINK_CHECK=1 TFDOCTOR_STREAM=1 "$TFD" analyze -q -f json -o - "$f" >"$T/hooked" 2>"$T/e1"
	cmp -s "$T/plain" "$T/hooked" && grep -q "timelink: .* calls linked in time order as by the link pass" "$T/e1" &&
		grep -q "stream: .*: pipeline [0-9]*: built from the stream's sums$" "$T/e1" &&
		! grep -q -e 'differ' -e 'not used' "$T/e1" && ok || bad "$f: checked, then built from the stream: $(grep -m1 -e differ -e 'not used' "$T/e1")"
done
# a stream that cannot be used (a root call out of the pass before's
# order is one way; here the events of a capture out of time order on a
# thread: none of the committed captures has them, so the unit tests make
# one) says why on stderr and leaves today's graph and report
# ... and where nothing reads the file after the read (dump), at its end
f=tests/cases/ok/tf221-window-flat-map/vm.xplane.pb
TFDOCTOR_SOURCE_CHECK=1 "$TFD" dump -o - "$f" 2>"$T/e1" >/dev/null
grep -q "source: vm: 28847 iterator, Produce and Consume events decoded again from the file at the read's end as packed" "$T/e1" &&
	[ "$(grep -c 'source: ' "$T/e1")" = 1 ] && ok || bad "dump's source: $(head -c 300 "$T/e1")"
# and what such a reader would hold, each call until its group can be
# folded: the window/flat_map capture's line in full; the
# iterator-dense chain's, a few dozen of its 167,500 calls, and the
# stream's own state (its records, waits, wake-ups and the calls seen it
# keeps for the walks by overlap) in 64 KB, with at most 1,000 calls seen
TFDOCTOR_TIMELINK_CHECK=1 "$TFD" analyze -q -f json -o - tests/cases/ok/tf221-window-flat-map/vm.xplane.pb 2>"$T/e1" >/dev/null
grep -q 'vm: 28059 calls linked in time order as by the link pass; 426 waited for a link, at most 4 at once; 2 produced elements untaken, 1 of them then linked by overlap; iterators made in time order: 776 of 776, 0 calls under another; the pass before: 12 root calls as the scan'"'"'s; closed as the stream went: 45 groups, at most 4707 calls open at 15170656 ns, none late; folded as they closed, the sums per iterator of the whole tree, at most 4707 records held; the stream'"'"'s own state at most [0-9]* bytes, 2310 calls seen kept at once, the elements'"'"' keys and takers [0-9]* bytes; the stream took [0-9.]* s after the pass before'"'"'s [0-9.]* s$' "$T/e1" &&
	ok || bad "window/flat_map in time order: $(head -c 300 "$T/e1")"
d=$(ls "$T"/dense/plugins/profile/*/*.xplane.pb)
TFDOCTOR_TIMELINK_CHECK=1 "$TFD" analyze -q -f json -o - "$d" 2>"$T/e1" >/dev/null
held=$(sed -n 's/.*timelink: .*at most \([0-9]*\) records held.*/\1/p' "$T/e1")
state=$(sed -n 's/.*timelink: .*own state at most \([0-9]*\) bytes, \([0-9]*\) calls seen kept.*/\1 \2/p' "$T/e1")
[ -n "$held" ] && [ "$held" -le 100 ] && [ -n "$state" ] && [ "${state% *}" -le 65536 ] &&
	[ "${state#* }" -le 1000 ] && ok || bad "iterator-dense chain in time order: $(cat "$T/e1")"
# TFDOCTOR_INFLIGHT=1 (docs/performance.md, "Calls held in time order"):
# the same report, and one line per host on stderr with the most calls a
# reader in time order would hold: a window/flat_map capture's 33 elements
# that ran ahead untaken are held until their taker's iterator ends; the
# iterator-dense chain holds a few dozen of its calls at once
inflight() { # file, the line's expected tail
	"$TFD" analyze -q -f json -o - "$1" >"$T/plain" 2>/dev/null
	TFDOCTOR_INFLIGHT=1 "$TFD" analyze -q -f json -o - "$1" >"$T/infl" 2>"$T/e1"
	if cmp -s "$T/plain" "$T/infl" && [ "$(grep -c 'inflight' "$T/e1")" = 1 ] &&
		grep -q -- "$2" "$T/e1"; then
		ok
	else
		bad "$1: TFDOCTOR_INFLIGHT=1: $(head -c 300 "$T/e1")"
	fi
}
inflight tests/cases/ok/tf221-window-flat-map/vm.xplane.pb \
	'vm: 28059 calls (45 tops, 2328 ran ahead untaken): held at most 3496 at 48965524 ns (12.46 % of the calls), running at most 8$'
inflight tests/cases/ok/tf221-shuffle-filling-past-capture/vm.xplane.pb \
	'held at most 3664 at 603638574 ns (99.95 % of the calls)'
d=$(ls "$T"/dense/plugins/profile/*/*.xplane.pb)
TFDOCTOR_INFLIGHT=1 "$TFD" analyze -q -f json -o - "$d" 2>"$T/e1" >/dev/null
held=$(sed -n 's/.*held at most \([0-9]*\) .*/\1/p' "$T/e1")
[ -n "$held" ] && [ "$held" -le 100 ] && ok || bad "iterator-dense chain: held $(cat "$T/e1")"
finish
