#!/bin/sh
# Write the tfdoctor(1) man page to stdout from README.md: the usage block,
# the option vocabulary table and the exit-code table, so the man page and
# the README cannot drift apart.
set -eu
readme=${1:-README.md}
version=${2:-dev}
cat <<HDR
.TH TFDOCTOR 1 "" "tfdoctor $version" "User Commands"
.SH NAME
tfdoctor \\- why a tf.data input pipeline is slow, and what to change
.SH SYNOPSIS
.nf
HDR
# the indented command lines of the "## Usage" section's first code block
awk '/^## Usage/ { u = 1; next } u && /^    tfdoctor / { sub(/^    /, ""); gsub(/\\/, "\\\\"); print; seen = 1; next }
     u && seen && !/^    / { exit }' "$readme"
cat <<'DESC'
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
.SH OPTIONS
These options mean the same in every command that takes them.
DESC
# rows of the option vocabulary table: | `-x, --long ARG` | meaning | commands |
awk '/^One option vocabulary/ { t = 1; next } t && /^\| `/ {
	n = split($0, c, "|"); o = c[2]; m = c[3]; w = c[4]
	gsub(/`/, "", o); gsub(/^ +| +$/, "", o); gsub(/^ +| +$/, "", m); gsub(/^ +| +$/, "", w)
	gsub(/`/, "", m); gsub(/\\/, "\\\\", m); gsub(/-/, "\\-", o)
	printf ".TP\n.B %s\n%s (%s)\n", o, m, w; next }
	t && /^$/ && seen++ { exit }' "$readme"
echo ".SH EXIT STATUS"
awk '/^### Exit codes/ { t = 1; next } t && /^\| [0-9]/ {
	n = split($0, c, "|"); gsub(/ /, "", c[2]); m = c[3]; gsub(/^ +| +$/, "", m); gsub(/`/, "", m)
	printf ".TP\n.B %s\n%s\n", c[2], m; next } t && /^#/ { exit }' "$readme"
cat <<'TAIL'
.SH EXAMPLES
.nf
tfdoctor analyze logs/train
tfdoctor analyze \-f json \-o report.json logs/train/plugins/profile/2024_01_01_00_00_00
tfdoctor dot \-o pipeline.svg logs/train
tfdoctor report \-\-history health.db \-\-job resnet \-o report.html logs/train
.fi
.SH SEE ALSO
The README of the tfdoctor source tree: the analysis, the rule table, the
JSON schema and the nightly report in full.
TAIL
