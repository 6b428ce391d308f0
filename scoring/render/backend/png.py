"""Lossless RGB PNG encoding of a map: unfiltered rows deflated by libdeflate.

Maps are mostly flat colour, where unfiltered rows deflate nearly as small as adaptively filtered
ones (Pillow's own PNG writer spends most of its time choosing filters). libdeflate at level 1
is ~1.7x faster than zlib level 1 on maps and ~7 % smaller. Its output is a function of the
libdeflate version, the level and the byte order only: the compressor has no run-time CPU
dispatch (only the checksums do, which are exact), and its compile-time SIMD paths fill and
shift the match finder's tables to the very values the scalar loops give. The version is pinned
through the `deflate` wheel (requirements.txt), so the same pixels give the same bytes on every
little-endian machine (x86-64, arm64).

QGIS's own Python may lack the `deflate` wheel (no distribution packages it): there the maps are
deflated by zlib, as before; the sidecar names the compressor (`PNG_DEFLATE`).
"""

from __future__ import annotations

import importlib
import struct
import threading
import zlib
from importlib.metadata import version
from types import ModuleType

import numpy as np
from PIL import Image

_libdeflate: ModuleType | None
try:
    _libdeflate = importlib.import_module("deflate")
except ImportError:  # QGIS's Python without the wheel: the renderer's distro packages decide anyway
    _libdeflate = None

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
COMPRESS_LEVEL = 1  # libdeflate level: maps are flat colour, higher levels cost 2x for 5 % less
PNG_DEFLATE = (
    f"libdeflate (deflate {version('deflate')}) level {COMPRESS_LEVEL}"
    if _libdeflate is not None
    else f"zlib {zlib.ZLIB_RUNTIME_VERSION} level {COMPRESS_LEVEL}"
)


def _chunk(kind: bytes, data) -> bytes:
    crc = zlib.crc32(data, zlib.crc32(kind))
    return struct.pack(">I", len(data)) + kind + bytes(data) + struct.pack(">I", crc)


def rgba_to_rgb_bytes(rgba, width: int, height: int) -> bytes:
    """Packed RGB rows of an RGBA buffer (alpha dropped)."""
    return Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1).tobytes("raw", "RGB")


def _unfiltered_rows(rgb, width: int, height: int) -> np.ndarray:
    """The PNG scanlines of packed RGB rows: each row after its filter byte 0 (none)."""
    rows = np.empty((height, 3 * width + 1), np.uint8)
    rows[:, 0] = 0
    rows[:, 1:] = np.frombuffer(rgb, np.uint8).reshape(height, 3 * width)
    return rows


def encode_rgb_png(rgb, width: int, height: int, level: int = COMPRESS_LEVEL) -> bytes:
    """PNG bytes (8-bit RGB, no filter, no ancillary chunks) of packed RGB rows."""
    if len(rgb) != 3 * width * height:
        raise ValueError(f"expected {3 * width * height} bytes of RGB, got {len(rgb)}")
    return _png(_unfiltered_rows(rgb, width, height), width, height, level)


def encode_rgba_png(rgba, width: int, height: int, level: int = COMPRESS_LEVEL) -> bytes:
    """PNG bytes (8-bit RGB, alpha dropped, no filter) of an RGBA buffer such as Agg's: the
    same bytes as encode_rgb_png(rgba_to_rgb_bytes(...)), without a fresh 7 MB copy a map."""
    if len(memoryview(rgba).cast("B")) != 4 * width * height:
        raise ValueError(f"expected {4 * width * height} bytes of RGBA")
    return _png(_scanlines_of_rgba(rgba, width, height), width, height, level)


def _png(rows: np.ndarray, width: int, height: int, level: int) -> bytes:
    if _libdeflate is not None:
        idat = _libdeflate.zlib_compress(rows.data, level)
    else:
        idat = zlib.compress(rows.data, level)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, truecolour, no interlace
    return PNG_SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


# One scanline buffer per thread and image size, reused map after map: a fresh 7 MB buffer a map
# costs more in page faults than the packing itself.
_SCRATCH = threading.local()


def _scanlines_of_rgba(rgba, width: int, height: int) -> np.ndarray:
    """PNG scanlines (filter byte 0, then packed RGB) of an RGBA buffer, in the thread's reusable
    buffer (valid until its next call). Each pixel is stored as its 4 RGBA bytes, 3 bytes after
    the previous one, so that the next pixel's red lands on this one's alpha: numpy copies
    element after element in order. Whether it does is checked once per size against Pillow's
    packer; if not, Pillow's packer is used."""
    key = (width, height)
    scratch = getattr(_SCRATCH, "buffers", None)
    if scratch is None:
        scratch = _SCRATCH.buffers = {}
    if key not in scratch:
        scratch.clear()
        scratch[key] = np.zeros(height * (3 * width + 1) + 1, np.uint8)  # + 1: the last alpha
        trial = np.random.default_rng(0).integers(0, 256, 4 * width * height, np.uint8)
        expected = _unfiltered_rows(rgba_to_rgb_bytes(trial, width, height), width, height)
        if not np.array_equal(_overlapped_copy(trial, scratch[key], width, height), expected):
            scratch[key] = None
    buf = scratch[key]
    if buf is None:
        return _unfiltered_rows(rgba_to_rgb_bytes(rgba, width, height), width, height)
    return _overlapped_copy(rgba, buf, width, height)


def _overlapped_copy(rgba, buf: np.ndarray, width: int, height: int) -> np.ndarray:
    src = np.frombuffer(rgba, np.uint32).reshape(height, width)
    dst: np.ndarray = np.ndarray((height, width), np.uint32, buffer=buf, offset=1, strides=(3 * width + 1, 3))
    np.copyto(dst, src)
    rows = buf[:-1].reshape(height, 3 * width + 1)
    rows[:, 0] = 0  # each row's last alpha fell on the next row's filter byte
    return rows
