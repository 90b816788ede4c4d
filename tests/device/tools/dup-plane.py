# Append a copy of an XSpace's first device plane: the same device written
# twice. dup-plane.py IN OUT
import sys
from xspace import device_planes

b = open(sys.argv[1], "rb").read()
dev = device_planes(b)
assert dev, "no device plane"
open(sys.argv[2], "wb").write(b + dev[0])
