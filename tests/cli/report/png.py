#!/usr/bin/env python3
"""png.py FILE [#rrggbb...]: prints "WIDTH HEIGHT" of a PNG, then for each
colour the number of pixels of exactly that colour. Exit 1 when FILE is not
a PNG (8-bit RGB or RGBA, as Chromium writes screenshots)."""
import struct
import sys
import zlib

data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat, ihdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        ihdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = ihdr[0], ihdr[1], ihdr[2], ihdr[3]
print(w, h)
if len(sys.argv) < 3:
    sys.exit(0)
if depth != 8 or ctype not in (2, 6):
    sys.exit("unsupported PNG format")
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
want = {bytes.fromhex(c.lstrip("#")): c for c in sys.argv[2:]}
counts = {c: 0 for c in sys.argv[2:]}
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1:
            line[i] = (line[i] + a) & 255
        elif f == 2:
            line[i] = (line[i] + b) & 255
        elif f == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            line[i] = (line[i] + pr) & 255
    for x in range(0, stride, bpp):
        k = bytes(line[x:x + 3])
        if k in want:
            counts[want[k]] += 1
    prev = line
for c in sys.argv[2:]:
    print(c, counts[c])
