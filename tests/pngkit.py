"""A tiny PNG decoder (standard library only: zlib) for checking a browser's screenshots pixel by pixel."""

from __future__ import annotations

import struct
import zlib
from typing import List, Tuple


def decode(data: bytes) -> Tuple[int, int, List[bytearray], int]:
    """(width, height, rows of bytes, bytes per pixel) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat = 8, []
    width = height = bpp = 0
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and color in (2, 6) and interlace == 0, (depth, color, interlace)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows: List[bytearray] = []
    prev = bytearray(stride)
    pos = 0
    for _ in range(height):
        kind = raw[pos]
        line = bytearray(raw[pos + 1:pos + 1 + stride])
        pos += 1 + stride
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = prev[i]
                c = prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        prev = line
    return width, height, rows, bpp


def colours(data: bytes) -> dict:
    """How many pixels of each (r, g, b) colour the image holds."""
    width, _, rows, bpp = decode(data)
    out: dict = {}
    for line in rows:
        for i in range(0, width * bpp, bpp):
            key = (line[i], line[i + 1], line[i + 2])
            out[key] = out.get(key, 0) + 1
    return out


def near(counts: dict, rgb: Tuple[int, int, int], tolerance: int = 8) -> int:
    """Pixels within `tolerance` of `rgb` on every channel."""
    return sum(n for (r, g, b), n in counts.items()
               if abs(r - rgb[0]) <= tolerance and abs(g - rgb[1]) <= tolerance and abs(b - rgb[2]) <= tolerance)
