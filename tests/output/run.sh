#!/usr/bin/env bash
# Output safety: -o never destroys a file. Devices and FIFOs are written
# through, symlinks resolved (dangling ones refused), inputs refused before
# anything is written, temporary files unpredictable and cleaned up.
# Never touches the machine's real /dev/null: the device case uses a
# private device node (mknod) in a temporary directory.
# Ends with "output: N passed, N failed".
set -u
SUITE=output
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
X=examples/smdebug-zip/8c859046be41.ant.amazon.com.trace.json.gz
AI=examples/ai-notebook/ai-notebook.xplane.pb

# 1. a character device is written through, never replaced
if mknod "$T/null" c 1 3 2>/dev/null; then
	for cmd in "analyze -q" "dot" "dump" "report --no-record"; do
		# shellcheck disable=SC2086
		run $cmd -o "$T/null" $X
		if [ "$rc" -eq 0 ] && [ -c "$T/null" ]; then ok; else bad "$cmd -o DEVICE: rc=$rc, $(ls -l "$T/null") $err"; fi
	done
else
	# no mknod here (not root, or a nodev mount): a FIFO stands in below
	echo "output: note: mknod not permitted; device case covered by the FIFO case" >&2
fi

# 2. a FIFO is written through: the reader gets the report, the FIFO stays
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/from-fifo" &
reader=$!
run analyze -q -o "$T/fifo" $X
wait $reader
if [ "$rc" -eq 0 ] && [ -p "$T/fifo" ] && grep -q "verdict:" "$T/from-fifo"; then ok; else bad "FIFO: rc=$rc $err"; fi

# 3. /dev/stdout (a symlink into /proc) reaches standard output
$TFD analyze -q -o /dev/stdout $X >"$T/stdout" 2>"$T/err"
if [ $? -eq 0 ] && grep -q "verdict:" "$T/stdout"; then ok; else bad "/dev/stdout: $(cat "$T/err")"; fi
# and -o - too
$TFD analyze -q -o - $X >"$T/stdout" 2>"$T/err"
if [ $? -eq 0 ] && grep -q "verdict:" "$T/stdout"; then ok; else bad "-o -: $(cat "$T/err")"; fi

# 4. an input is refused before anything is written: exit 2, one line, file intact
cp $X "$T/in.trace.json.gz"
cp "$T/in.trace.json.gz" "$T/orig"
for cmd in "analyze" "dot" "dump" "report --no-record"; do
	# shellcheck disable=SC2086
	run $cmd -o "$T/in.trace.json.gz" "$T/in.trace.json.gz"
	if [ "$rc" -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
		[[ "$err" == "tfdoctor: refusing to write '$T/in.trace.json.gz': it is the input"* ]] &&
		cmp -s "$T/orig" "$T/in.trace.json.gz" && [ ! -s "$T/out" ]; then
		ok
	else
		bad "$cmd -o INPUT: rc=$rc err=$err"
	fi
done
# the same file under another name (a symlink, a hard link)
ln -s "$T/in.trace.json.gz" "$T/alias.json"
ln "$T/in.trace.json.gz" "$T/hard.json"
for o in "$T/alias.json" "$T/hard.json"; do
	run analyze -o "$o" "$T/in.trace.json.gz"
	if [ "$rc" -eq 2 ] && cmp -s "$T/orig" "$T/in.trace.json.gz"; then ok; else bad "-o $o (same inode): rc=$rc $err"; fi
done
# a file found inside a directory input
mkdir -p "$T/run"
cp $X "$T/run/host.trace.json.gz"
run analyze -o "$T/run/host.trace.json.gz" "$T/run"
if [ "$rc" -eq 2 ] && cmp -s $X "$T/run/host.trace.json.gz" && [[ "$err" == *"it is the input"* ]]; then ok; else bad "-o a file of a directory input: rc=$rc $err"; fi
# a rules file
mkdir -p "$T/rules"
cp tests/cases/rules/good/50-team.json "$T/rules/"
cp "$T/rules/50-team.json" "$T/rules.orig"
run analyze --rules "$T/rules" -o "$T/rules/50-team.json" $X
if [ "$rc" -eq 2 ] && cmp -s "$T/rules.orig" "$T/rules/50-team.json"; then ok; else bad "-o a rules file: rc=$rc $err"; fi
# the history database
run report --history "$T/h.db" -o - $X
cp "$T/h.db" "$T/h.orig"
run report --history "$T/h.db" -o "$T/h.db" $X
if [ "$rc" -eq 2 ] && cmp -s "$T/h.orig" "$T/h.db" && [[ "$err" == *"it is the input '$T/h.db'"* ]]; then ok; else bad "-o the history db: rc=$rc $err"; fi

# 5. a symlink to a file: the file it points at is replaced, the link stays
echo old >"$T/target.txt"
chmod 640 "$T/target.txt"
ln -s target.txt "$T/link.txt"
run analyze -q -o "$T/link.txt" $X
if [ "$rc" -eq 0 ] && [ -L "$T/link.txt" ] && grep -q "verdict:" "$T/target.txt" &&
	[ "$(stat -c %a "$T/target.txt")" = 640 ]; then ok; else bad "symlink target: rc=$rc $(ls -l "$T/link.txt" "$T/target.txt") $err"; fi
# a dangling symlink is refused and nothing is created at its target
ln -s "$T/nowhere/x" "$T/dangling"
ln -s "$T/absent.txt" "$T/dangling2"
run analyze -q -o "$T/dangling2" $X
if [ "$rc" -eq 1 ] && [ ! -e "$T/absent.txt" ] && [[ "$err" == *"symlink to a missing file"* ]]; then ok; else bad "dangling symlink: rc=$rc $err"; fi

# 6. the temporary file: not at a predictable name, never left behind
mkdir -p "$T/shared"
# the names the old writer used: a planted link there must not be followed
for pid in $(seq $$ $(($$ + 200))); do ln -s "$T/victim" "$T/shared/report.txt.tmp.$pid"; done
echo precious >"$T/victim"
run analyze -q -o "$T/shared/report.txt" $X
if [ "$rc" -eq 0 ] && [ "$(cat "$T/victim")" = precious ] && grep -q "verdict:" "$T/shared/report.txt"; then ok; else bad "planted tmp symlink: rc=$rc $err"; fi
rm -f "$T"/shared/report.txt.tmp.*
if [ "$(ls -A "$T/shared")" = report.txt ]; then ok; else bad "left behind: $(ls -A "$T/shared")"; fi
# a new file gets 0666 less the umask, not mkstemp's 0600
(umask 022 && $TFD analyze -q -o "$T/shared/new.txt" $X)
if [ "$(stat -c %a "$T/shared/new.txt")" = 644 ]; then ok; else bad "new file mode $(stat -c %a "$T/shared/new.txt")"; fi

# 7. a directory as -o, an unwritable directory: errors, nothing changed
run analyze -q -o "$T" $X
if [ "$rc" -eq 1 ] && [[ "$err" == *"is a directory"* ]]; then ok; else bad "-o DIR: rc=$rc $err"; fi
run analyze -q -o "$T/no/such/dir/x.txt" $X
if [ "$rc" -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ]; then ok; else bad "-o in a missing dir: rc=$rc $err"; fi

# 8. inputs that are not regular files are named for what they are
mknod "$T/zero" c 1 5 2>/dev/null || ln -s /dev/zero "$T/zero"
run analyze "$T/zero"
if [ "$rc" -eq 1 ] && [[ "$err" == *"not a regular file (a character device)"* ]]; then ok; else bad "analyze DEVICE: rc=$rc $err"; fi
mkfifo "$T/infifo"
timeout 10 $TFD analyze "$T/infifo" >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" -eq 1 ] && grep -q "not a regular file (a pipe)" "$T/err"; then ok; else bad "analyze FIFO: rc=$rc $(cat "$T/err")"; fi

# 9. names from captures are untrusted: no raw control bytes reach a terminal,
#    Markdown tables hold, no raw HTML passes (text, md, HTML, SVG, stderr)
E=$(printf '\033')
BEL=$(printf '\a')
EV="$T/evil${E}]0;pwned${BEL}|host.trace.json"
cp tests/cases/hostile/names.trace.json "$EV"
ctl() { LC_ALL=C grep -c "$(printf '[\001-\010\013-\037\177]')" "$1"; }
$TFD analyze "$EV" >"$T/h.txt" 2>"$T/h.err"
if [ "$(ctl "$T/h.txt")" = 0 ] && grep -qF 'Map\x1b[31m|x`<script>' "$T/h.txt" && grep -qF 'evil\x1b]0;pwned\x07|host' "$T/h.txt"; then ok; else bad "text report passes control bytes: $(head -3 "$T/h.txt" | od -c | head -3)"; fi
if [ "$(ctl "$T/h.err")" = 0 ]; then ok; else bad "stderr passes control bytes"; fi
$TFD dump "$EV" >"$T/h.dump" 2>&1
if [ "$(ctl "$T/h.dump")" = 0 ]; then ok; else bad "dump passes control bytes"; fi
$TFD analyze /nonexistent/"${E}[2J" >/dev/null 2>"$T/h.err"
if [ "$(ctl "$T/h.err")" = 0 ] && grep -qF '\x1b[2J' "$T/h.err"; then ok; else bad "error line passes control bytes: $(od -c "$T/h.err" | head -2)"; fi
$TFD report --no-record -f md "$EV" >"$T/h.md" 2>/dev/null
row=$(grep '^| evil' "$T/h.md")
# 7 cells: the row has 8 unescaped pipes
pipes=$(sed 's/\\|//g' <<<"$row" | tr -cd '|' | wc -c)
if [ "$pipes" = 8 ] && [ "$(ctl "$T/h.md")" = 0 ] && ! grep -q '<script>' "$T/h.md" && grep -qF '\`&lt;script&gt;' "$T/h.md"; then ok; else bad "markdown not escaped: $row"; fi
$TFD report --no-record -f html "$EV" >"$T/h.html" 2>/dev/null
if ! grep -q '<script>' "$T/h.html" && grep -qF '&lt;script&gt;' "$T/h.html"; then ok; else bad "html passes raw markup"; fi
$TFD dot -T svg "$EV" >"$T/h.svg" 2>/dev/null
if [ -s "$T/h.svg" ] && ! grep -q '<script>' "$T/h.svg" && [ "$(ctl "$T/h.svg")" = 0 ]; then ok; else bad "svg passes raw markup or control bytes"; fi

# a line break in a name cannot forge a line (issue 35: it reached analyze's
# text, dump and watch's messages raw)
trace_named "$T/nl.trace.json" 'Map\\nFORGED\\r'
for c in "analyze" "dump" "dump --all"; do
	# shellcheck disable=SC2086
	$TFD $c -o - "$T/nl.trace.json" >"$T/nl.out" 2>/dev/null
	if ! grep -q '^FORGED' "$T/nl.out" && grep -qF 'Map\x0aFORGED\x0d' "$T/nl.out" && [ "$(ctl "$T/nl.out")" = 0 ]; then ok; else bad "$c lets a line break in a name through"; fi
done
mkdir -p "$T/nlw/plugins/profile"
$TFD synth -q -o "$T/nlw0" tests/synth/05-batch-heavy.json
mv "$T/nlw0/plugins/profile/"* "$T/nlw/plugins/profile/r
FORGED"
$TFD watch --once --existing --settle 0 --out-dir "$T/nlw-out" "$T/nlw" 2>"$T/nlw.err" >/dev/null
if grep -qF 'r\x0aFORGED' "$T/nlw.err" && ! grep -q '^FORGED' "$T/nlw.err"; then ok; else bad "watch lets a line break in a run name through: $(cat "$T/nlw.err")"; fi

$TFD report -q --history "$T/nl.db" --job "$(printf 'j\nFORGED')" -o "$T/nl.html" "$T/nl.trace.json" 2>/dev/null
$TFD history "$T/nl.db" >"$T/nlh.out" 2>&1
$TFD history --job "$(printf 'j\nFORGED')" "$T/nl.db" >>"$T/nlh.out" 2>&1
if ! grep -q '^FORGED' "$T/nlh.out" && grep -qF 'j\x0aFORGED' "$T/nlh.out"; then ok; else bad "history text lets a line break in a name through: $(cat "$T/nlh.out")"; fi
$TFD history -f csv "$T/nl.db" >"$T/nlc.out" 2>&1
$TFD history -f csv --job "$(printf 'j\nFORGED')" "$T/nl.db" >>"$T/nlc.out" 2>&1
if ! grep -q '^FORGED' "$T/nlc.out" && grep -qF 'j\x0aFORGED' "$T/nlc.out" && [ "$(ctl "$T/nlc.out")" = 0 ]; then ok; else bad "history csv lets a line break or CR in a name through: $(od -c "$T/nlc.out" | head -5)"; fi

# a pipeline of thousands of stages is drawn in seconds: above 200 stages
# siblings of a family and chains are collapsed into counted nodes, and the
# title says so (issue 35: 10k stages took three minutes, 100k never ended)
python3 - "$T" <<'PY'
import json, sys
d = sys.argv[1]
def trace(path, n, chain):
    ev = [{"ph": "M", "pid": 1, "name": "process_name", "args": {"name": "/host:CPU"}}]
    for s in range(3):
        t = s * 100000.0
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t, "dur": 90000, "name": "IteratorGetNext", "args": {"group_id": str(s)}})
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t, "dur": 90000, "name": "Iterator::Model", "args": {"id": "1"}})
        if not chain:
            ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 0.001, "dur": 89990, "name": "Iterator::Zip", "args": {"id": "2", "parent_id": "1", "long_name": "Iterator::Model::Zip"}})
        for i in range(n):
            if chain:
                f = ["Map", "Filter"][i % 2]
                ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 0.001 * (i + 1), "dur": 89000 - 0.002 * i, "name": "Iterator::" + f,
                           "args": {"id": str(2 + i), "parent_id": str(1 + i), "long_name": "Iterator::Model::" + f}})
            else:
                w = 89000.0 / n
                ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 1 + i * w, "dur": w * 0.9, "name": "Iterator::Map%d" % i,
                           "args": {"id": str(3 + i), "parent_id": "2", "long_name": "Iterator::Model::Zip::Map%d" % i}})
        ev.append({"ph": "X", "pid": 1, "tid": 1, "ts": t + 90000, "dur": 5000, "name": "train_step", "args": {"group_id": str(s)}})
    json.dump({"traceEvents": ev}, open(path, "w"))
trace(d + "/wide.trace.json", 10000, False)
trace(d + "/chain.trace.json", 5000, True)
PY
for c in "wide:10002 stages drawn as [0-9] nodes" "chain:5001 stages drawn as [0-9] nodes"; do
	f=${c%%:*}
	timeout 30 $TFD dot -f svg -o "$T/$f.svg" "$T/$f.trace.json" 2>"$T/$f.err"
	rc=$?
	if [ "$rc" -eq 0 ] && grep -q "${c#*:}" "$T/$f.svg" && grep -q "(collapsed)" "$T/$f.svg" && grep -q "</svg>" "$T/$f.svg"; then ok; else bad "dot -f svg of a $f pipeline of thousands of stages: rc $rc (124: timed out) $(head -c 200 "$T/$f.err")"; fi
done
timeout 30 $TFD report -q -o "$T/wide.html" "$T/wide.trace.json"
rc=$?
if [ "$rc" -eq 0 ] && grep -q "10002 stages drawn as 3 nodes" "$T/wide.html"; then ok; else bad "report of a 10k-stage pipeline: rc $rc"; fi

finish
