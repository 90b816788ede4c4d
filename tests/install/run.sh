#!/usr/bin/env bash
# make install: the binary, one man page per command and the bash completion
# land under DESTDIR/PREFIX; the installed binary runs; every page renders
# with no Markdown in it, names only installed pages under SEE ALSO and
# lists the options `tfdoctor help CMD` lists; each command's help lists
# exactly the options of its getopt table; uninstall removes it all.
# Ends with "install: N passed, N failed".
set -u
SUITE=install
# shellcheck source=tests/lib.sh
. tests/lib.sh
M="make --no-print-directory -s SAN=${SAN:-}"
if $M install DESTDIR="$T/stage" PREFIX=/opt/tfd >"$T/log" 2>&1; then ok; else bad "make install: $(tail -3 "$T/log")"; fi
bin="$T/stage/opt/tfd/bin/tfdoctor"
mandir="$T/stage/opt/tfd/share/man/man1"
if [ -x "$bin" ] && "$bin" version | grep -q '^tfdoctor ' && [ "$("$bin" -V)" = "$("$bin" --version)" ]; then ok; else bad "installed binary, -V"; fi
cmds=$("$bin" help | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }' | grep -vxE 'help|version')
if [ "$(echo "$cmds" | wc -w)" -ge 9 ]; then ok; else bad "commands in 'tfdoctor help': $cmds"; fi
man1="$mandir/tfdoctor.1"
if [ -f "$man1" ] && head -1 "$man1" | grep -q '^\.TH TFDOCTOR 1' && grep -q '^\.BR tfdoctor\\-analyze (1)' "$man1"; then ok; else bad "tfdoctor(1) content"; fi
# every page: renders, no Markdown, SEE ALSO names installed pages only,
# and its options are those of `tfdoctor help CMD`
opts_of_help() { # the option names of a help text's option lines
	sed -nE 's/^  +(-.*)$/\1/p' | sed -E 's/  .*//' | grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | sed -E 's/^[ ,]//' | sort -u
}
for c in "" $cmds; do
	page=tfdoctor${c:+-$c}
	f=$mandir/$page.1
	if [ ! -f "$f" ]; then
		bad "$page.1 not installed"
		continue
	fi
	text=$(MANWIDTH=200 man -l "$f" 2>/dev/null)
	if ! command -v man >/dev/null || grep -q "EXIT STATUS" <<<"$text"; then ok; else bad "$page(1) does not render"; fi
	if ! grep -qE '`|\*\*|\]\(' "$f"; then ok; else bad "$page(1) has Markdown: $(grep -nE '`|\*\*|\]\(' "$f" | head -2)"; fi
	missing=""
	for ref in $(sed -n '/^\.SH SEE ALSO/,$p' "$f" | sed -nE 's/^\.BR ([^ ]+) \(1\).*/\1/p' | sed 's/\\-/-/g'); do
		[ -f "$mandir/$ref.1" ] || missing="$missing $ref"
	done
	if [ -z "$missing" ] && grep -q '^\.SH SEE ALSO' "$f"; then ok; else bad "$page(1) SEE ALSO names pages not installed:$missing"; fi
	[ -n "$c" ] || continue
	want=$("$bin" help "$c" | opts_of_help)
	got=$(sed -n '/^\.SH OPTIONS/,/^\.SH EXIT/p' "$f" | sed -n '/^\.TP/{n;s/^\.B //p}' | sed 's/\\-/-/g' |
		grep -oE '(^|[ ,])--?[A-Za-z][A-Za-z-]*' | sed -E 's/^[ ,]//' | sort -u)
	if [ -n "$want" ] && [ "$want" = "$got" ]; then ok; else bad "$page(1) options differ from 'help $c': $(diff <(echo "$want") <(echo "$got") | tr '\n' ' ')"; fi
	table=$("$bin" "$c" --list-options | sort -u)
	if [ -n "$table" ] && [ "$want" = "$table" ]; then ok; else bad "'help $c' and its option table differ: $(diff <(echo "$want") <(echo "$table") | tr '\n' ' ')"; fi
done
# bash completion: commands, then a command's options from its table
comp="$T/stage/opt/tfd/share/bash-completion/completions/tfdoctor"
complete_words() { # WORDS...: what completing the last word offers
	bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _tfdoctor; printf "%s\n" "${COMPREPLY[@]}"' _ "$comp" "$@"
}
if [ -f "$comp" ] && [ "$(complete_words "$bin" ana)" = analyze ]; then ok; else bad "completion of a command: $(complete_words "$bin" ana 2>&1)"; fi
if [ "$(complete_words "$bin" analyze --fail)" = --fail-on ] && complete_words "$bin" dot -f "" | grep -qx svg; then ok; else bad "completion of options: $(complete_words "$bin" analyze --fail 2>&1)"; fi
# --fail-on regression is report's alone (analyze rejects it)
if ! complete_words "$bin" analyze --fail-on "" | grep -qx regression && complete_words "$bin" report --fail-on "" | grep -qx regression; then ok; else bad "completion of --fail-on values: $(complete_words "$bin" analyze --fail-on "" 2>&1 | tr '\n' ' ')"; fi
if $M uninstall DESTDIR="$T/stage" PREFIX=/opt/tfd >/dev/null 2>&1 && [ ! -e "$bin" ] && [ -z "$(ls -A "$mandir")" ] && [ ! -e "$comp" ]; then ok; else bad "make uninstall left: $(find "$T/stage" -type f | head -3)"; fi
finish
