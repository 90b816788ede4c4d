#!/usr/bin/env bash
# fleet_parts.sh TFD DIR NFILES: NFILES partials of 1,000 hosts each under
# DIR/parts, every host the same 20-step host with one parallel pipeline
# (analyzed once by TFD, its partial copied under 1,000 names a file): the
# merge cases of make bench (100 files) and make bench-instr (2 files).
set -eu
TFD=$1 d=$2 n=$3
rm -rf "$d" && mkdir -p "$d/parts"
printf '{"name": "fleet-host", "steps": 20, "step_compute_us": 100, "stages": [{"kind": "TFRecord", "cost_us": 30}, {"kind": "ParallelMap", "parallelism": 4, "cost_us": 300}, {"kind": "Batch", "batch_size": 4, "cost_us": 5}, {"kind": "Prefetch"}]}\n' >"$d/spec.json"
$TFD synth -q -o "$d/cap" "$d/spec.json"
$TFD analyze -q --partial -o "$d/one.partial.json" "$(ls "$d"/cap/plugins/profile/*/*.xplane.pb)"
python3 - "$d" "$n" <<'PY'
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
doc = json.load(open(d + "/one.partial.json"))
h = doc["hosts"][0]
one = json.dumps(h, separators=(",", ":"))
name, path = '"name":%s' % json.dumps(h["name"]), '"path":%s' % json.dumps(h["path"])
doc["hosts"] = []
head = json.dumps(doc, separators=(",", ":"))
for f in range(n):
    hosts = [one.replace(name, '"name":"host-%06d"' % i, 1).replace(path, '"path":"/fleet/run/host-%06d.xplane.pb"' % i, 1)
             for i in range(f * 1000, (f + 1) * 1000)]
    open("%s/parts/p%03d.partial.json" % (d, f), "w").write(head.replace('"hosts":[]', '"hosts":[' + ",".join(hosts) + "]"))
PY
