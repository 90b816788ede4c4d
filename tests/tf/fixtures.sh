#!/usr/bin/env bash
# Copy catalog cases into examples/real-CASE/ as test fixtures: the capture
# (its .xplane.pb only: xprof's converter leaves a cache file beside it) and
# truth.json (what was measured). tests/real/run.sh judges them in make
# check and tests/golden/run.sh keeps their outputs.
#   tests/tf/fixtures.sh RESULTS CASE...
set -euo pipefail
cd "$(dirname "$0")/../.."
RES=${1:?usage: tests/tf/fixtures.sh RESULTS CASE...}
shift
for c in "$@"; do
	src="$RES/$c"
	cap=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["capture"])' "$src/result.json")
	dst="examples/real-${c//_/-}"
	rm -rf "$dst"
	mkdir -p "$dst"
	cp "$src/$cap" "$dst/"
	python3 - "$src/result.json" "$dst/truth.json" "$(basename "$cap")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["capture"] = sys.argv[3]  # beside it in the fixture
json.dump(r, open(sys.argv[2], "w"), indent=1, sort_keys=True)
open(sys.argv[2], "a").write("\n")
PY
	echo "fixtures: $dst ($(du -h "$dst/$(basename "$cap")" | cut -f1))"
done
