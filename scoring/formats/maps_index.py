"""The maps' part of a benchmark's identity: `maps/maps.json`, written when a render ends, holds
each map's SHA-256, the renderer that drew them (its version, matplotlib's, Pillow's, ...) and one
digest over them all. A run records that digest and the renderer beside the benchmark's manifest
hash, and refuses a map whose bytes are not those the index lists (drawn under another
matplotlib, edited, half-copied): the same benchmark hash with other pixels would otherwise send
other image requests unnoticed."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from scoring.errors import InputError, SpatialGapError
from scoring.support.files import read_json, write_json_atomic

INDEX = "maps.json"
FORMAT = "spatialgap.maps/1"


def write_index(maps_dir: Path) -> dict[str, Any]:
    """Hash every map PNG in `maps_dir` and write the index; returns it."""
    maps = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(maps_dir.glob("*.png"))}
    renderer: dict[str, Any] = {}
    for name in maps:  # the renderer as the sidecars name it (the first that says)
        try:
            renderer = read_json(maps_dir / f"{name[: -len('.png')]}.json")["renderer"]
            break
        except (SpatialGapError, KeyError, TypeError):
            continue
    digest = hashlib.sha256("".join(f"{n} {h}\n" for n, h in maps.items()).encode()).hexdigest()
    index = {"format": FORMAT, "sha256": digest, "renderer": renderer, "count": len(maps), "maps": maps}
    write_json_atomic(maps_dir / INDEX, index)
    return index


def read_index(maps_dir: Path) -> dict[str, Any] | None:
    """The index, or None where none was written (maps drawn before it existed)."""
    path = maps_dir / INDEX
    if not path.is_file():
        return None
    index = read_json(path)
    if (
        not isinstance(index, dict)
        or index.get("format") != FORMAT
        or not isinstance(index.get("maps"), dict)
    ):
        raise InputError(f"{path}: not a maps index ({FORMAT})")
    return index


def identity(index: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a run manifest records of the maps: their digest and the renderer's versions."""
    if index is None:
        return None
    r = index.get("renderer") or {}
    return {"sha256": index["sha256"], "renderer": r.get("version"), "matplotlib": r.get("matplotlib")}


def check_map(index: dict[str, Any] | None, maps_dir: Path, name: str, png: bytes) -> None:
    """A one-line InputError when `png` is not the map the index lists under `name` (a map it
    does not list yet is being drawn now: evaluate's runs follow the render)."""
    want = None if index is None else index["maps"].get(name)
    if want is None or hashlib.sha256(png).hexdigest() == want:
        return
    raise InputError(
        f"{maps_dir / name} does not match its hash in {maps_dir / INDEX} (drawn by another renderer "
        f"or matplotlib, or changed since): redraw the maps (spatialgap render --bench {maps_dir.parent})"
    )
