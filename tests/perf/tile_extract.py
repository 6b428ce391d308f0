"""Synthetic large extracts for the growth bench: a real extract tiled n times side by side.

Tile t is the source with every OSM id offset by t * ID_STRIDE (above the source's largest
id, so ids stay unique and sorted by type then id, as GDAL's OSM driver wants them) and every
coordinate offset by whole multiples of the source's data extent (tiles never overlap). The
source is read and the result written by osmium-tool (Debian's `osmium-tool`) through OPL,
its line format, so this script only rewrites ids and coordinates, streaming.

    python tests/perf/tile_extract.py SOURCE.osm.pbf N OUT.osm.pbf
"""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import sys
from pathlib import Path

ID_STRIDE = 10**10  # > any node id of today's OSM (about 1.2e10 would need a larger stride)
_REF = re.compile(r"([nwr])(\d+)")


def _grid(n: int) -> list[tuple[int, int]]:
    cols = math.ceil(math.sqrt(n))
    return [(t % cols, t // cols) for t in range(n)]


def _opl_lines(src: Path) -> list[str]:
    out = subprocess.run(
        ["osmium", "cat", "-f", "opl", "-o", "-", str(src)], check=True, capture_output=True, text=True
    ).stdout
    return out.splitlines()


def _shift_refs(text: str, off: int) -> str:
    return _REF.sub(lambda m: f"{m.group(1)}{int(m.group(2)) + off}", text)


def _tile_lines(lines: list[str], n: int):
    """Every OPL line of the tiled file: all nodes, then all ways, then all relations."""
    nodes, ways, rels = [], [], []
    xs, ys = [], []
    for line in lines:
        head, rest = line.split(" ", 1)
        if head[0] == "n":
            fields = rest.split(" ")
            x = float(fields[-2][1:]) if fields[-2][:1] == "x" and len(fields[-2]) > 1 else None
            y = float(fields[-1][1:]) if fields[-1][:1] == "y" and len(fields[-1]) > 1 else None
            if x is None or y is None:
                continue  # a node without a location (deleted): nothing to tile
            xs.append(x)
            ys.append(y)
            nodes.append((int(head[1:]), " ".join(fields[:-2]), x, y))
        elif head[0] == "w":
            ways.append((int(head[1:]), rest))
        elif head[0] == "r":
            rels.append((int(head[1:]), rest))
    if max(n for n, *_ in nodes) >= ID_STRIDE:
        raise SystemExit("the source's ids exceed ID_STRIDE")
    dx, dy = (max(xs) - min(xs)) * 1.001, (max(ys) - min(ys)) * 1.001
    grid = _grid(n)
    for t, (i, j) in enumerate(grid):
        off = t * ID_STRIDE
        for ident, mid, x, y in nodes:
            yield f"n{ident + off} {mid} x{x + i * dx:.7f} y{y + j * dy:.7f}\n"
    for t in range(n):
        off = t * ID_STRIDE
        for ident, rest in ways:
            keep, _, refs = rest.rpartition(" N")
            yield f"w{ident + off} {keep} N{_shift_refs(refs, off)}\n"
    for t in range(n):
        off = t * ID_STRIDE
        for ident, rest in rels:
            keep, _, members = rest.rpartition(" M")
            yield f"r{ident + off} {keep} M{_shift_refs(members, off)}\n"


def tile(src: Path, n: int, out: Path) -> Path:
    """Write `out` (an .osm.pbf): `src` tiled `n` times."""
    if shutil.which("osmium") is None:
        raise SystemExit("osmium-tool is missing (apt-get install osmium-tool)")
    lines = _opl_lines(src)
    tmp = out.with_name(out.name + ".partial.osm.pbf")
    proc = subprocess.Popen(
        ["osmium", "cat", "-F", "opl", "-o", str(tmp), "--overwrite", "-"],
        stdin=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    buf: list[str] = []
    for line in _tile_lines(lines, n):
        buf.append(line)
        if len(buf) >= 50000:
            proc.stdin.write("".join(buf))
            buf.clear()
    proc.stdin.write("".join(buf))
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit(f"osmium failed writing {tmp}")
    tmp.replace(out)
    return out


if __name__ == "__main__":
    tile(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
