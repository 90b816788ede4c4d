#!/usr/bin/env python3
"""The include graph follows the floors: no file includes a header of a
floor above its own, no two folders include each other's headers, no
circle of includes between the files of one folder. A public header
(include/tfd/X.h) belongs to the floor that implements it (FLOOR_OF); a
private one to its folder. Prints one line per violation; exit 1 if any.
Usage: includes.py (from the repository root)."""
import glob
import os
import re
import sys

FLOORS = ["base", "model", "store", "input", "analysis", "output", "synth", "app", "cmd"]
FLOOR_OF = {
    "arena": "base", "buf": "base", "err": "base", "fmt": "base", "imap": "base",
    "dl": "base", "infile": "base", "jsonmem": "base", "outfile": "base", "pages": "base", "pool": "base", "satmath": "base", "select": "base",
    "vec": "base", "version": "base",
    "capbuild": "model", "capture": "model", "families": "model", "graph": "model",
    "times": "model",
    "history": "store",
    "load": "input",
    "analysis": "analysis", "partial": "analysis", "rules": "analysis", "xprof": "analysis",
    "rules_builtin": "analysis", "regress": "analysis", "diff": "analysis",
    "dot": "output", "nightly": "output", "render": "output",
    "synth": "synth", "app": "app", "cli": "cmd",
}
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def node_of(path):
    """(floor, name) of a source or header path, or None outside src/ and include/."""
    parts = path.split("/")
    if parts[0] == "include":
        base = os.path.splitext(parts[-1])[0]
        return (FLOOR_OF.get(base, "?"), path)
    if parts[0] == "src" and len(parts) == 3:
        return (parts[1], path)
    return None


def resolve(src, inc):
    if inc.startswith("tfd/"):
        return "include/" + inc
    local = os.path.join(os.path.dirname(src), inc)
    return local if os.path.exists(local) else None


def main():
    files = sorted(glob.glob("src/*/*.[ch]") + glob.glob("include/tfd/*.h"))
    edges, bad = {}, []
    for f in files:
        for inc in INC.findall(open(f).read()):
            to = resolve(f, inc)
            if to and node_of(to):
                edges.setdefault(f, set()).add(to)
    folder_edges = set()
    for f, tos in edges.items():
        ff = node_of(f)[0]
        for t in tos:
            tf = node_of(t)[0]
            if "?" in (ff, tf):
                bad.append(f"{f} includes {t}: a header no floor owns (add it to FLOOR_OF)")
            elif FLOORS.index(tf) > FLOORS.index(ff):
                bad.append(f"{f} ({ff}) includes {t} ({tf}): upward")
            elif tf != ff:
                folder_edges.add((ff, tf))
    for a, b in sorted(folder_edges):
        if (b, a) in folder_edges and a < b:
            bad.append(f"folders {a} and {b} include each other's headers")
    # circles among the files of one folder (and its public headers)
    state = {}

    def visit(n, stack):
        state[n] = 1
        stack.append(n)
        for t in sorted(edges.get(n, ())):
            if node_of(t)[0] != node_of(n)[0]:
                continue
            if state.get(t) == 1:
                bad.append("include circle: " + " -> ".join(stack[stack.index(t):] + [t]))
            elif not state.get(t):
                visit(t, stack)
        stack.pop()
        state[n] = 2

    for f in sorted(edges):
        if not state.get(f):
            visit(f, [])
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
