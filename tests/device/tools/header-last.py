# Rewrite an XSpace so that each device line's header fields (name,
# timestamp) come after its events: legal protobuf order, as a writer other
# than TensorFlow's may produce. header-last.py IN OUT
import sys
from xspace import fields, rewrite_device_lines

def header_last(line):
    head = [r for f, w, r, _ in fields(line) if f != 4]
    evs = [r for f, w, r, _ in fields(line) if f == 4]
    return b"".join(evs) + b"".join(head)

b = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(rewrite_device_lines(b, header_last))
