"""Lossless RGB PNG encoding, about five times faster than Pillow's own PNG writer for map images.

Pillow's PNG writer picks a filter per row adaptively, which is most of its time; maps are mostly
flat colour, where unfiltered rows deflate nearly as small. Pillow's zip encoder skips filtering
for palette rows, so the RGB rows are deflated as a palette image three times as wide (the same
bytes per row, each after a filter byte 0): exactly the IDAT stream of an unfiltered RGB PNG.
Deflate stays the zlib bundled in the pinned Pillow wheel: the same pixels give the same bytes
on every machine.
"""

from __future__ import annotations

import struct
import zlib

from PIL import Image

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
COMPRESS_LEVEL = 1  # zlib level: maps are flat colour, levels above 3 cost 2x for 10 % less size


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def rgba_to_rgb_bytes(rgba, width: int, height: int) -> bytes:
    """Packed RGB rows of an RGBA buffer (alpha dropped; Pillow's packer beats a numpy copy)."""
    return Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1).tobytes("raw", "RGB")


def encode_rgb_png(rgb: bytes, width: int, height: int, level: int = COMPRESS_LEVEL) -> bytes:
    """PNG bytes (8-bit RGB, no filter, no ancillary chunks) of packed RGB rows."""
    if len(rgb) != 3 * width * height:
        raise ValueError(f"expected {3 * width * height} bytes of RGB, got {len(rgb)}")
    rows = Image.frombuffer("P", (3 * width, height), rgb, "raw", "P", 0, 1)  # a view, no copy
    # zip encoder arguments: raw mode "P" (no filtering), optimize off, zlib level
    idat = rows.tobytes("zip", "P", 0, level)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, truecolour, no interlace
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")
