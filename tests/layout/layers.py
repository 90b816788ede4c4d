#!/usr/bin/env python3
"""The folders of src/ are floors: each calls only the floors below it,
and inside a folder no two files call each other.
Reads the built objects' symbols (nm) and prints one line per call that
runs upward or sideways into another floor; exit 1 if there is any.
Usage: layers.py OBJDIR (build/rel/obj)"""
import glob
import os
import subprocess
import sys

FLOORS = ["base", "model", "store", "input", "analysis", "output", "synth", "app", "cmd"]


def main():
    objdir = sys.argv[1]
    defs, uses = {}, []
    for o in sorted(glob.glob(os.path.join(objdir, "*", "*.o"))):
        floor = os.path.basename(os.path.dirname(o))
        if floor not in FLOORS:
            continue
        out = subprocess.run(["nm", "-g", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRC":
                defs[p[2]] = (floor, os.path.basename(o))
            elif len(p) == 2 and p[0] == "U":
                uses.append((floor, os.path.basename(o), p[1]))
    bad = set()
    calls = set()  # (floor, caller object, callee object) inside one floor
    for floor, obj, sym in uses:
        if sym in defs:
            to, tobj = defs[sym]
            if FLOORS.index(to) > FLOORS.index(floor):
                bad.add(f"{floor}/{obj} calls {to}/{tobj} ({sym}): upward")
            elif to == floor and tobj != obj:
                calls.add((floor, obj, tobj))
    # two files of one folder calling each other are one unit cut in two:
    # a seam between files runs one way
    for floor, a, b in calls:
        if (floor, b, a) in calls and a < b:
            bad.add(f"{floor}/{a} and {floor}/{b} call each other (one unit in two files)")
    for b in sorted(bad):
        print(b)
    if not defs:
        print("no objects read")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
