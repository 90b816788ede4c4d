#!/bin/sh
# Install the Debian packages tfdoctor needs, and only those that are
# missing. A no-op when everything is present.
#   install-deps.sh           to build and run every test that needs no
#                             system service (make demo, make check)
#   install-deps.sh --fleet   also what the fleet tests run (make check-fleet):
#                             a PostgreSQL server and single-node Slurm with
#                             munge. The tests start them as throwaway servers
#                             in a temporary directory; Debian's packages may
#                             register system services, which is why only
#                             make check-fleet asks for them.
#   install-deps.sh --format  the static checks' tools: clang-format 14 (make
#                             format, format-check) and cppcheck
#   install-deps.sh --fuzz    clang (14 on Debian 12) with libFuzzer, for
#                             make fuzz
# TFD_WITH_BROWSER=1 adds chromium for the real-browser test of the HTML
# report (CI sets it). Waits up to 5 minutes for another apt or dpkg to
# release its lock. When it cannot install (not root and no sudo, no
# network), it prints one line naming what is missing and how to install it.
set -eu

PKGS="gcc make pkg-config python3 protobuf-c-compiler libprotobuf-c-dev libcjson-dev libyajl-dev \
libigraph-dev libgraphviz-dev zlib1g-dev libsqlite3-dev libpq-dev"
case "${1:-}" in
--fleet) PKGS="$PKGS postgresql slurmctld slurmd slurm-client munge" ;;
--format) PKGS="clang-format cppcheck" ;; # make format, format-check; cppcheck in CI
--fuzz) PKGS="$PKGS clang libclang-rt-dev" ;; # make fuzz: the build's packages, clang and its sanitizer and libFuzzer runtimes
--build | "") ;;
*)
	echo "usage: install-deps.sh [--fleet|--format|--fuzz]" >&2
	exit 2
	;;
esac
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

# not Debian: nothing to install with; say what the build needs
if ! command -v apt-get >/dev/null 2>&1; then
	echo "install-deps: no apt-get here; install the equivalents of:$missing" >&2
	exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
		SUDO="sudo"
	else
		echo "install-deps: missing packages:$missing; install them as root with: apt-get install$missing" >&2
		exit 1
	fi
fi
echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
LOCK="-o DPkg::Lock::Timeout=300"
# shellcheck disable=SC2086
if ! { $SUDO apt-get $LOCK update -qq >&2 &&
	$SUDO apt-get $LOCK install -y -qq --no-install-recommends $missing >&2; }; then
	echo "install-deps: could not install:$missing (see apt-get's message above); install them with: ${SUDO:+sudo }apt-get install$missing" >&2
	exit 1
fi
