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

$TFD report -q --history "$T/h.db" --job nightly --timestamp 2026-11-20T02:00:00Z -o - >/dev/null \
	examples/ai-notebook/ai-notebook.xplane.pb
$TFD report -q --history "$T/h.db" --job nightly --timestamp 2026-11-21T02:00:00Z -o - >/dev/null \
	examples/smdebug-8gpu
$TFD report -q --history "$T/h.db" --job nightly --timestamp 2026-11-22T02:00:00Z -o "$T/report.html" \
	examples/smdebug-zip
HTML=${REPORT_HTML:-$T/report.html}

flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
	--disable-background-networking --disable-component-update --disable-sync
	--user-data-dir="$T/profile" --hide-scrollbars --window-size=1200,2400)
timeout 120 "$CHROME" "${flags[@]}" --enable-logging=stderr --v=0 \
	--screenshot="$T/shot.png" "file://$(realpath "$HTML")" >"$T/shot.out" 2>"$T/shot.err"
timeout 120 "$CHROME" "${flags[@]}" --dump-dom "file://$(realpath "$HTML")" >"$T/dom.html" 2>/dev/null

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
