#!/usr/bin/env python3
"""No function a reader cannot hold: every function in src/ is at most 120
lines and at most 25 decisions (if, for, while, case, &&, ||, ?), except a
format parser whose comment just above says so in a line starting
"parser:" with the reason. Prints one line per function over a limit;
exit 1 if any. Usage: fnsize.py [FILE...] (default: src/*/*.c src/*.c)."""
import glob
import re
import sys

MAX_LINES, MAX_DECISIONS = 120, 25


def functions(path):
    lines = open(path).read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            j = i - 1
            while j > 0 and lines[j - 1] and not lines[j - 1].startswith(("}", "/*", " *", "#")) \
                    and not lines[j - 1].endswith(";"):
                j -= 1
            head = " ".join(lines[j:i])
            name = re.search(r"(\w+)\s*\(", head)
            above = "\n".join(lines[max(0, j - 6):j])
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            body = "\n".join(lines[i:k + 1])
            body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
            body = re.sub(r'"(\\.|[^"\\])*"', '""', body)
            body = re.sub(r"'(\\.|[^'\\])'", "''", body)
            decisions = len(re.findall(r"\b(if|for|while|case)\b|&&|\|\||\?", body))
            yield (name.group(1) if name else "?", k - i + 1, decisions, "parser:" in above)
            i = k
        i += 1


def main():
    files = sys.argv[1:] or sorted(glob.glob("src/*/*.c") + glob.glob("src/*.c"))
    bad = 0
    for f in files:
        for name, n, d, parser in functions(f):
            if (n > MAX_LINES or d > MAX_DECISIONS) and not parser:
                print(f"{f}: {name}: {n} lines, {d} decisions")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
