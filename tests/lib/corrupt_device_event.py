#!/usr/bin/env python3
"""Corrupt one event of an XSpace device plane in place: the tag of the
first event of the first line of the first "/device:" plane becomes field
1 with wire type 7 (no such wire type), so that event is malformed while
every length around it still holds. Usage: corrupt_device_event.py FILE"""
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return v, i


def fields(b, start, end):
    """(field, wire type, payload start, payload end) of each field."""
    i = start
    while i < end:
        tag, i = varint(b, i)
        f, wt = tag >> 3, tag & 7
        if wt == 0:
            _, j = varint(b, i)
            yield f, wt, i, j
        elif wt == 2:
            n, i = varint(b, i)
            yield f, wt, i, i + n
            j = i + n
        elif wt == 1:
            j = i + 8
        elif wt == 5:
            j = i + 4
        else:
            raise SystemExit("unexpected wire type")
        i = j


def main():
    path = sys.argv[1]
    b = bytearray(open(path, "rb").read())
    for f, wt, s, e in fields(b, 0, len(b)):
        if f != 1 or wt != 2:
            continue
        name = next((bytes(b[ps:pe]) for pf, pw, ps, pe in fields(b, s, e) if pf == 2), b"")
        if not name.startswith(b"/device:"):
            continue
        for lf, lw, ls, le in fields(b, s, e):
            if lf != 3:
                continue
            for ef, ew, es, ee in fields(b, ls, le):
                if ef == 4 and ee > es:
                    b[es] = (1 << 3) | 7
                    open(path, "wb").write(b)
                    return
    raise SystemExit("no device event found")


main()
