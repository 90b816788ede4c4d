# bash completion for tfdoctor: the commands, and each command's options as
# the binary itself lists them (tfdoctor CMD --list-options), so the
# completion cannot fall behind the option tables. Installed by
# `make install` as share/bash-completion/completions/tfdoctor.
_tfdoctor()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local bin=${COMP_WORDS[0]} cmd=${COMP_WORDS[1]} cmds
	cmds=$("$bin" help 2>/dev/null | awk '/^commands:/ { c = 1; next } c && /^  [a-z]/ { print $1 } c && /^$/ { exit }')
	if [ "$COMP_CWORD" -eq 1 ]; then
		mapfile -t COMPREPLY < <(compgen -W "$cmds -V --version --help" -- "$cur")
		return
	fi
	case $cmd in
	help)
		[ "$COMP_CWORD" -eq 2 ] && mapfile -t COMPREPLY < <(compgen -W "$cmds" -- "$cur")
		return
		;;
	version) return ;;
	rules)
		if [ "$COMP_CWORD" -eq 2 ]; then
			mapfile -t COMPREPLY < <(compgen -W "list check --help" -- "$cur")
			return
		fi
		;;
	esac
	case $prev in
	-f | -T | --format)
		local fmts
		case $cmd in
		analyze) fmts="text json gviz" ;;
		merge | dump) fmts="text json" ;;
		dot) fmts="dot svg png" ;;
		diff) fmts="text json md" ;;
		report) fmts="html md json" ;;
		history) fmts="text json csv" ;;
		watch) fmts="text json md" ;;
		esac
		mapfile -t COMPREPLY < <(compgen -W "$fmts" -- "$cur")
		return
		;;
	--mode)
		mapfile -t COMPREPLY < <(compgen -W "default xprof" -- "$cur")
		return
		;;
	--fail-on)
		# regression needs a history: report's alone
		local what="input-bound severity=info severity=low severity=medium severity=high"
		[ "$cmd" = report ] && what="$what regression"
		[ "$cmd" = diff ] && what="worse"
		mapfile -t COMPREPLY < <(compgen -W "$what" -- "$cur")
		return
		;;
	--rules | --out-dir)
		mapfile -t COMPREPLY < <(compgen -d -- "$cur")
		return
		;;
	esac
	if [[ $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$("$bin" "$cmd" --list-options 2>/dev/null)" -- "$cur")
		return
	fi
	mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}
complete -o filenames -o bashdefault -F _tfdoctor tfdoctor
