#!/bin/sh
# Write the man pages into DIR from the built binary's own help: tfdoctor(1)
# from `tfdoctor help`, and tfdoctor-CMD(1) from `tfdoctor help CMD` for each
# command, so a man page and `tfdoctor help CMD` cannot drift apart.
#   make-man.sh BINARY DIR VERSION
# The help texts keep one layout that this script reads: "usage: ..." (and
# "       tfdoctor ..." lines under it), paragraphs, option lines
# ("  -x, --long ARG  text" or "      --long ARG  text", continued by lines
# indented 24 columns), and an "Exit codes:" line.
set -eu

# The EXIT STATUS section; $1 follows the --fail-on line.
exit_status() {
	cat <<'EXIT'
.SH EXIT STATUS
.TP
.B 0
the command ran (an analysis with findings or not)
.TP
.B 1
bad input or a runtime error, said in one line on standard error
.TP
.B 2
a usage error
.TP
.B 3
EXIT
	printf 'a \\-\\-fail\\-on gate tripped%s\n' "$1"
}

bin=$1
dir=$2
version=$3
mkdir -p "$dir"

# roff-safe text: backslashes as \e, hyphens as \- (options copy and paste
# as typed), a leading . or ' guarded
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\([.']\)/\\\\\&\1/"; }

cmds=$("$bin" help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }' |
	grep -vxE 'help|version')
see_also() { # the pages installed beside this one, but not this one
	for c in "" $cmds; do
		page=tfdoctor${c:+-$c}
		[ "$page" = "$1" ] && continue
		printf '.BR %s (1)%s\n' "$(echo "$page" | sed 's/-/\\-/g')" ","
	done | sed '$ s/,$//'
}

for c in $cmds; do
	page=tfdoctor-$c
	upper=$(echo "$page" | tr a-z A-Z)
	summary=$("$bin" help | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
	{
		printf '.TH %s 1 "" "tfdoctor %s" "User Commands"\n' "$upper" "$version"
		echo ".SH NAME"
		printf '%s \\- %s\n' "$page" "$(printf '%s' "$summary" | esc)"
		"$bin" help "$c" | esc | awk '
		function flush_opt() { if (opt != "") { print ".TP"; print ".B " opt; if (txt != "") print txt; opt = ""; txt = "" } }
		NR == 1 { sub(/^usage: /, ""); print ".SH SYNOPSIS"; print ".nf"; print; syn = 1; next }
		syn && /^       tfdoctor / { sub(/^ +/, ""); print; next }
		syn { print ".fi"; print ".SH DESCRIPTION"; syn = 0 }
		/^Exit codes:/ { skip = 1; next }
		skip && /^[^ ]/ && !/^$/ { next }
		/^$/ { flush_opt(); para = 1; next }
		/^  \\-|^      \\-\\-/ {
			if (!inopts) { print ".SH OPTIONS"; inopts = 1 }
			flush_opt()
			line = $0; sub(/^ +/, "", line)
			n = index(line, "  ")
			if (n) { opt = substr(line, 1, n - 1); txt = substr(line, n); sub(/^ +/, "", txt) }
			else { opt = line; txt = "" }
			next
		}
		/^                        / && opt != "" { l = $0; sub(/^ +/, "", l); txt = (txt == "" ? l : txt "\n" l); next }
		{ if (para && said) { print ".PP" } para = 0; said = 1; print }
		END { flush_opt() }'
		exit_status ' (analyze, merge, report)'
		echo ".SH SEE ALSO"
		see_also "$page"
	} >"$dir/$page.1.tmp"
	mv "$dir/$page.1.tmp" "$dir/$page.1"
done

{
	printf '.TH TFDOCTOR 1 "" "tfdoctor %s" "User Commands"\n' "$version"
	cat <<'HEAD'
.SH NAME
tfdoctor \- why a tf.data input pipeline is slow, and what to change
.SH SYNOPSIS
.nf
tfdoctor COMMAND [options] ARGS...
tfdoctor help [COMMAND]
tfdoctor \-V | \-\-version
.fi
.SH DESCRIPTION
.B tfdoctor
reads TensorFlow profiler captures (XSpace
.IR *.xplane.pb ,
Chrome trace JSON
.IR *.trace.json [ .gz ],
TF 2.0
.IR local.trace ,
run directories or TensorBoard log directories) and says whether the job waits
on its tf.data input pipeline, which stage limits throughput, how sure it is,
and what to change, with an estimate of what the change is worth.
.PP
A CAPTURE is a capture file, a run directory
.RI ( LOGDIR/plugins/profile/ RUN ,
one file per host) or a TensorBoard log directory, whose newest run is used
unless
.B \-\-run
picks one.
.SH COMMANDS
HEAD
	for c in $cmds; do
		summary=$("$bin" help | awk -v c="$c" '$1 == c { $1 = ""; sub(/^ +/, ""); print; exit }')
		printf '.TP\n.BR tfdoctor\\-%s (1)\n%s\n' "$c" "$(printf '%s' "$summary" | esc)"
	done
	exit_status ''
	cat <<'TAIL'
.SH EXAMPLES
.nf
tfdoctor analyze logs/train
tfdoctor analyze \-f json \-o report.json logs/train
tfdoctor dot \-o pipeline.svg logs/train
tfdoctor report \-\-history health.db \-\-job resnet \-o report.html logs/train
.fi
.SH SEE ALSO
TAIL
	see_also tfdoctor
} >"$dir/tfdoctor.1.tmp"
mv "$dir/tfdoctor.1.tmp" "$dir/tfdoctor.1"
