# The few protobuf pieces the XSpace rewriting tools share: walk a message's
# fields, write a length-delimited field, and rewrite every device line.
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
    """(field number, wire type, the field's raw bytes, its payload or None)"""
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

def device_planes(b):
    """The raw bytes of each device plane (XSpace field 1) of b."""
    return [raw for f, w, raw, pl in fields(b)
            if f == 1 and plane_name(pl).startswith("/device:")]

def rewrite_device_lines(b, line_fn):
    """b with each device plane's line (XPlane field 3) payload replaced by
    line_fn(payload)."""
    out = bytearray()
    for f, w, raw, pl in fields(b):
        if f == 1 and plane_name(pl).startswith("/device:"):
            np = bytearray()
            for pf, pw, praw, ppl in fields(pl):
                np += ld(3, bytes(line_fn(ppl))) if pf == 3 and pw == 2 else praw
            out += ld(1, bytes(np))
        else:
            out += raw
    return bytes(out)
