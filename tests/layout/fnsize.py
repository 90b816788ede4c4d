#!/usr/bin/env python3
"""No function a reader cannot hold: every function in src/ is at most 120
lines and at most 25 decisions (if, for, while, case, &&, ||, ?), except
those listed with their reason in tests/layout/exceptions.txt (at most 6).
Prints one line per function over a limit, per entry whose function is
within the limits again (the list stays true), and when the list grows
past 6; exit 1 if any. Usage: fnsize.py [FILE...] (default: src/*/*.c
src/*.c)."""
import glob
import os
import re
import sys

MAX_LINES, MAX_DECISIONS = 120, 25
MAX_EXCEPTIONS = 6
EXCEPTIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "exceptions.txt")


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
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            body = "\n".join(lines[i:k + 1])
            body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
            body = re.sub(r'"(\\.|[^"\\])*"', '""', body)
            body = re.sub(r"'(\\.|[^'\\])'", "''", body)
            decisions = len(re.findall(r"\b(if|for|while|case)\b|&&|\|\||\?", body))
            yield (name.group(1) if name else "?", k - i + 1, decisions)
            i = k
        i += 1


def exceptions():
    """(file, function) -> reason, from the reviewed list."""
    out = {}
    for line in open(EXCEPTIONS):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        if len(parts) < 3:
            print(f"exceptions.txt: '{line.strip()}' has no reason")
            out[("?", "?")] = ""
            continue
        out[(parts[0], parts[1])] = parts[2].strip()
    return out


def main():
    files = sys.argv[1:] or sorted(glob.glob("src/*/*.c") + glob.glob("src/*.c"))
    allowed = exceptions()
    bad, used = 0, set()
    if len(allowed) > MAX_EXCEPTIONS:
        print(f"exceptions.txt lists {len(allowed)} functions (at most {MAX_EXCEPTIONS})")
        bad += 1
    for f in files:
        for name, n, d in functions(f):
            over = n > MAX_LINES or d > MAX_DECISIONS
            if (f, name) in allowed:
                used.add((f, name))
                if not over:
                    print(f"{f}: {name} is within the limits: drop it from exceptions.txt")
                    bad += 1
            elif over:
                print(f"{f}: {name}: {n} lines, {d} decisions")
                bad += 1
    if not sys.argv[1:]:
        for key in sorted(set(allowed) - used):
            print(f"exceptions.txt: {key[0]} {key[1]} is no function of the tree")
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
