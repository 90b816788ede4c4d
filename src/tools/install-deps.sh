#!/bin/sh
# Install the Debian packages tfdoctor needs to build and test, and only
# those that are missing. A no-op when everything is present.
#   install-deps.sh           to build and to run every test
#   install-deps.sh --build   to build only (make demo): no PostgreSQL server
#                             or Slurm daemons, which only the fleet tests run
set -eu

PKGS="gcc make pkg-config python3 protobuf-c-compiler libprotobuf-c-dev libcjson-dev libyajl-dev \
libigraph-dev libgraphviz-dev zlib1g-dev libsqlite3-dev libpq-dev"
if [ "${1:-}" != --build ]; then
	# tests/fleet: a throwaway PostgreSQL server and a single-node Slurm
	PKGS="$PKGS postgresql slurmctld slurmd slurm-client munge"
fi
# the real-browser test of the HTML report (CI sets this; see .ci/run)
if [ "${TFD_WITH_BROWSER:-0}" = 1 ]; then
	PKGS="$PKGS chromium"
fi

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

echo "install-deps: installing:$missing" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
