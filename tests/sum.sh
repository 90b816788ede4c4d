#!/bin/sh
# Sum every "<suite>: N passed, N failed" line of a log into the final
# "N passed, N failed" line; exit 1 if anything failed or no suite ran.
log=$1
awk '
/^[a-z0-9_-]+: [0-9]+ passed, [0-9]+ failed/ { p += $2; f += $4; n++ }
END {
	printf "%d passed, %d failed\n", p, f
	if (n == 0 || f > 0) exit 1
}' "$log"
