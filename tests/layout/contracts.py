#!/usr/bin/env python3
"""Every exported function has a contract: a comment just above its
prototype in include/tfd/*.h (what it does, who owns the result, what
happens on error), or above the group of prototypes it belongs to. Prints
one line per prototype without one; exit 1 if any."""
import glob
import re
import sys

PROTO = re.compile(r"^(?!typedef|static|return|#|struct \w+ \{|enum \w+ \{)"
                   r"[A-Za-z_][\w \*]*?\b(\w+)\(")


def main():
    missing = []
    for f in sorted(glob.glob("include/tfd/*.h")):
        lines = open(f).read().split("\n")
        i = 0
        while i < len(lines):
            m = PROTO.match(lines[i])
            if not m:
                i += 1
                continue
            j = i
            while j < len(lines) - 1 and not lines[j].rstrip().endswith((";", "{")):
                j += 1
            if lines[j].rstrip().endswith(";"):
                k = i - 1
                # the prototypes of a group share the comment above the first
                while k >= 0 and not lines[k].rstrip().endswith("*/") and \
                        (lines[k].rstrip().endswith(";") or lines[k].startswith(("\t", " "))):
                    k -= 1
                if k < 0 or not (lines[k].rstrip().endswith("*/") or lines[k].lstrip().startswith("/*")):
                    missing.append(f"{f}:{i + 1}: {m.group(1)} has no contract comment")
            i = j + 1
    for line in missing:
        print(line)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
