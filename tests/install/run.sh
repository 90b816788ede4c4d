#!/usr/bin/env bash
# make install: the binary and the man page land under DESTDIR/PREFIX, the
# installed binary runs, the man page renders, uninstall removes both.
# Ends with "install: N passed, N failed".
set -u
SUITE=install
# shellcheck source=tests/lib.sh
. tests/lib.sh
M="make --no-print-directory -s SAN=${SAN:-}"
if $M install DESTDIR="$T/stage" PREFIX=/opt/tfd >"$T/log" 2>&1; then ok; else bad "make install: $(tail -3 "$T/log")"; fi
if [ -x "$T/stage/opt/tfd/bin/tfdoctor" ] && "$T/stage/opt/tfd/bin/tfdoctor" version | grep -q '^tfdoctor '; then ok; else bad "installed binary"; fi
man1="$T/stage/opt/tfd/share/man/man1/tfdoctor.1"
if [ -f "$man1" ] && head -1 "$man1" | grep -q '^\.TH TFDOCTOR 1' && grep -q 'tfdoctor analyze \[options\] CAPTURE' "$man1" &&
	grep -q '^\.B 3$' "$man1"; then ok; else bad "man page content"; fi
if ! command -v man >/dev/null || MANWIDTH=80 man -l "$man1" 2>/dev/null | grep -q "EXIT STATUS"; then ok; else bad "man page does not render"; fi
if $M uninstall DESTDIR="$T/stage" PREFIX=/opt/tfd >/dev/null 2>&1 && [ ! -e "$T/stage/opt/tfd/bin/tfdoctor" ] && [ ! -e "$man1" ]; then ok; else bad "make uninstall"; fi
finish
