#!/usr/bin/env bash
# Real-browser test of the HTML report: headless Chromium opens a report
# over three recorded runs; the test checks the screenshot is not blank,
# the rendered DOM holds the trend charts and the critical-path SVG, and the
# console shows no errors. Skipped (with a note) when chromium is missing;
# .ci/run installs it. Ends with "browser: N passed, N failed".
set -u
SUITE=browser
# shellcheck source=tests/lib.sh
. tests/lib.sh
TFD=${TFD:-build/rel/tfdoctor}
CHROME=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$CHROME" ]; then
	echo "browser: skipped, chromium is not installed (TFD_WITH_BROWSER=1 make deps)"
	exit 0
fi

# (the baseline night's bottleneck a map under a batch, the last night's a map
# under the root: it moved)
caps=(examples/ai-notebook/ai-notebook.xplane.pb examples/real-missing-prefetch examples/smdebug-zip)
# 14 nights of history, then the report: a crowded x axis, regressions
for d in $(seq 1 14); do
	$TFD report -q --history "$T/h.db" --job nightly --timestamp "2026-11-$(printf %02d "$d")T02:00:00Z" \
		-o - "${caps[$((d % 3))]}" >/dev/null
done
$TFD report -q --history "$T/h.db" --job nightly --timestamp 2026-11-15T02:00:00Z -o "$T/report.html" \
	examples/smdebug-zip
HTML=${REPORT_HTML:-$T/report.html}

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	--disable-background-networking --disable-component-update --disable-sync
	--user-data-dir="$T/profile" --hide-scrollbars --window-size=1200,2400)
timeout 120 "$CHROME" "${flags[@]}" --enable-logging=stderr --v=0 \
	--screenshot="$T/shot.png" "file://$(realpath "$HTML")" >"$T/shot.out" 2>"$T/shot.err"
timeout 120 "$CHROME" "${flags[@]}" --dump-dom "file://$(realpath "$HTML")" >"$T/dom.html" 2>/dev/null

# the layout as the browser draws it: a copy of the report with a script
# that measures the x-axis labels and the diagram and writes the result
# into the page (the report itself carries no script)
sed 's|</body>|<script>\
function box(e){var r=e.getBoundingClientRect();return [r.left,r.right,r.top,r.bottom];}\
var res={overlaps:0,labels:0,cp:"none"};\
document.querySelectorAll("svg.chart").forEach(function(svg){\
 var ls=[].slice.call(svg.querySelectorAll("text.xl")).map(box);res.labels+=ls.length;\
 for(var i=0;i<ls.length;i++)for(var j=i+1;j<ls.length;j++)\
  if(ls[i][0]<ls[j][1]\&\&ls[j][0]<ls[i][1]\&\&ls[i][2]<ls[j][3]\&\&ls[j][2]<ls[i][3])res.overlaps++;});\
var cp=document.querySelector("#critical-path"),s=cp\&\&cp.querySelector("svg");\
if(s){var a=box(cp),b=box(s);res.cp=(b[0]>=a[0]-1\&\&b[1]<=a[1]+1)?"fits":"overflows "+(b[1]-b[0])+" in "+(a[1]-a[0]);}\
var w=document.querySelector("svg.chart");res.chart_width=w?box(w)[1]-box(w)[0]:0;\
res.body_width=document.body.getBoundingClientRect().width;\
var pre=document.createElement("pre");pre.id="layout";pre.textContent=JSON.stringify(res);document.body.appendChild(pre);\
</script></body>|' "$HTML" >"$T/probe.html"
timeout 120 "$CHROME" "${flags[@]}" --dump-dom "file://$T/probe.html" >"$T/probe.dom" 2>/dev/null
layout=$(sed -n 's|.*<pre id="layout">\([^<]*\)</pre>.*|\1|p' "$T/probe.dom")
keep_shot() { # on failure, keep the screenshot where the log can point to it
	mkdir -p "${B:-build/rel}/browser"
	cp "$T/shot.png" "${B:-build/rel}/browser/report.png" 2>/dev/null
	echo "browser: screenshot kept in ${B:-build/rel}/browser/report.png" >&2
}
if [[ "$layout" == *'"overlaps":0'* ]] && [[ "$layout" != *'"labels":0'* ]]; then ok; else bad "x-axis labels overlap: $layout"; keep_shot; fi
if [[ "$layout" == *'"cp":"fits"'* ]]; then ok; else bad "the critical-path diagram does not fit its box: $layout"; keep_shot; fi
if python3 -c "import json,sys; d=json.loads(sys.argv[1]); sys.exit(0 if d['chart_width'] >= 0.9*d['body_width'] else 1)" "$layout" 2>/dev/null; then ok; else bad "charts are not full width: $layout"; keep_shot; fi
# one line per regression fact (previous and baseline in the same line)
grep -o 'class="reg" data-kind="[a-z]*"[^<]*' "$T/dom.html" >"$T/regs"
twice=""
for fact in "max latency" "median latency" "waiting for input" "bottleneck moved" "finding"; do
	[ "$(grep -c "$fact" "$T/regs")" -le 1 ] || twice="$twice '$fact'"
done
if [ -z "$twice" ] && [ -s "$T/regs" ]; then ok; else bad "regression facts listed more than once:$twice"; fi
# the page starts with one sentence per job: verdict, bottleneck, first change
if grep -q '<li class="job-summary"><b>nightly</b>: <span class="bad">HIGHLY input-bound</span>.*; confidence [a-z]*); bottleneck ParallelMap (confidence [a-z]*); first change: ' "$T/dom.html"; then ok; else bad "no summary sentence at the top"; keep_shot; fi

# the per-step view: a stacked bar per step, waiting for input in orange
if grep -q '<svg id="per-step"' "$T/dom.html" && grep -q 'class="wait"' "$T/dom.html"; then ok; else bad "no per-step chart"; fi

# 1. the screenshot is a real picture: many non-white pixels, several colours
if [ -s "$T/shot.png" ] && python3 - "$T/shot.png" <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], 'rb').read()
assert data[:8] == b'\x89PNG\r\n\x1a\n'
pos, idat, w = 8, b'', 0
while pos < len(data):
    n, kind = struct.unpack('>I4s', data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b'IHDR':
        w, h, depth, ctype = struct.unpack('>IIBB', body[:10])
    elif kind == b'IDAT':
        idat += body
    pos += 12 + n
bpp = {2: 3, 6: 4}[ctype]
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
colours, ink, i = set(), 0, 0
for _ in range(h):
    f = raw[i]; row = bytearray(raw[i + 1:i + 1 + stride]); i += 1 + stride
    for x in range(stride):
        a = row[x - bpp] if x >= bpp else 0
        b = prev[x]; c = prev[x - bpp] if x >= bpp else 0
        if f == 1: row[x] = (row[x] + a) & 255
        elif f == 2: row[x] = (row[x] + b) & 255
        elif f == 3: row[x] = (row[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            row[x] = (row[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    prev = row
    for x in range(0, stride, bpp * 4):
        px = tuple(row[x:x + 3]); colours.add(px)
        ink += px != (255, 255, 255)
share = ink / (h * w / 4)
sys.exit(0 if share > 0.02 and len(colours) > 20 else 1)
PY
then ok; else bad "screenshot is blank or missing"; fi

# 2. the rendered page holds the charts, the critical path and the regressions
for want in '<svg id="trend-latency"' '<svg id="trend-input"' 'id="critical-path"><svg' \
	'class="reg" data-kind="bottleneck"' '<polyline class="series"' 'HIGHLY input-bound'; do
	if grep -qF "$want" "$T/dom.html"; then ok; else bad "rendered DOM lacks $want"; fi
done

# 3. no console errors (uncaught exceptions, failed loads)
if grep -E ':CONSOLE\(|Uncaught|Failed to load resource' "$T/shot.err" >"$T/console"; then
	bad "console errors: $(head -3 "$T/console")"
else
	ok
fi

finish
