"""PNGs made and read with the standard library: a solid image to show, a screenshot to read."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {2: 3, 6: 4}  # colour type: RGB, RGBA (what Chromium's screenshots are)


def solid_png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A `width` x `height` PNG of one colour (8-bit RGB, no filter)."""
    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        SIGNATURE
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(row * height))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data)
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


@dataclass(frozen=True)
class Pixels:
    """A decoded PNG: its size and each pixel's RGB, row by row."""

    width: int
    height: int
    rows: list[list[tuple[int, int, int]]]

    def box_of(self, rgb: tuple[int, int, int]) -> tuple[int, int, int, int] | None:
        """The smallest box (left, top, width, height) holding every pixel of colour `rgb`."""
        xs: list[int] = []
        ys: list[int] = []
        for y, row in enumerate(self.rows):
            hits = [x for x, pixel in enumerate(row) if pixel == rgb]
            if hits:
                xs += (hits[0], hits[-1])
                ys.append(y)
        if not xs:
            return None
        return min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1

    def count_of(self, rgb: tuple[int, int, int]) -> int:
        """How many pixels are of colour `rgb`."""
        return sum(row.count(rgb) for row in self.rows)


def read_png(data: bytes) -> Pixels:
    """Decode an 8-bit, non-interlaced RGB or RGBA PNG (all five row filters)."""
    assert data[:8] == SIGNATURE, "not a PNG"
    chunks, at = {}, 8
    idat = b""
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        idat += body if kind == b"IDAT" else b""
        chunks.setdefault(kind, body)
        at += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", chunks[b"IHDR"])
    assert depth == 8 and colour in _CHANNELS and interlace == 0, (depth, colour, interlace)
    step = _CHANNELS[colour]
    raw = zlib.decompress(idat)
    stride = width * step
    previous = bytearray(stride)
    rows = []
    for y in range(height):
        start = y * (stride + 1)
        line = _unfilter(raw[start], bytearray(raw[start + 1 : start + 1 + stride]), previous, step)
        rows.append([tuple(line[x : x + 3]) for x in range(0, stride, step)])
        previous = line
    return Pixels(width, height, rows)  # type: ignore[arg-type]


def _unfilter(kind: int, line: bytearray, above: bytearray, step: int) -> bytearray:
    for i in range(len(line)):
        left = line[i - step] if i >= step else 0
        up = above[i]
        corner = above[i - step] if i >= step else 0
        if kind == 1:
            line[i] = (line[i] + left) & 0xFF
        elif kind == 2:
            line[i] = (line[i] + up) & 0xFF
        elif kind == 3:
            line[i] = (line[i] + (left + up) // 2) & 0xFF
        elif kind == 4:
            line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
    return line


def _paeth(left: int, up: int, corner: int) -> int:
    guess = left + up - corner
    near_left, near_up, near_corner = abs(guess - left), abs(guess - up), abs(guess - corner)
    if near_left <= near_up and near_left <= near_corner:
        return left
    return up if near_up <= near_corner else corner
