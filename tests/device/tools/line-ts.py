# Rewrite an XSpace so that every device line's timestamp_ns is VALUE (a
# clock far past what a time can be). line-ts.py IN OUT VALUE
import sys

def varint(b, i):
    v = s = 0
    while True:
        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
        if c < 0x80: return v, i

def enc(v):
    out = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        if v: out.append(c | 0x80)
        else: out.append(c); return bytes(out)

def fields(b):
    i = 0
    while i < len(b):
        start = i
        k, i = varint(b, i)
        payload = None
        if k & 7 == 2:
            n, j = varint(b, i); payload = b[j:j + n]; i = j + n
        elif k & 7 == 0:
            _, i = varint(b, i)
        elif k & 7 == 1: i += 8
        else: i += 4
        yield k >> 3, k & 7, b[start:i], payload

def ld(field, payload):
    return enc(field << 3 | 2) + enc(len(payload)) + payload

def plane_name(p):
    for f, w, raw, pl in fields(p):
        if f == 2 and w == 2: return pl.decode()
    return ""

b, value = open(sys.argv[1], "rb").read(), int(sys.argv[3])
out = bytearray()
for f, w, raw, pl in fields(b):
    if f == 1 and plane_name(pl).startswith("/device:"):
        np = bytearray()
        for pf, pw, praw, ppl in fields(pl):
            if pf == 3 and pw == 2:
                line = bytearray(enc(3 << 3) + enc(value))
                line += b"".join(r for lf, lw, r, _ in fields(ppl) if lf != 3)
                np += ld(3, bytes(line))
            else:
                np += praw
        out += ld(1, bytes(np))
    else:
        out += raw
open(sys.argv[2], "wb").write(out)
