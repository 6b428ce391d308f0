"""Map sets of the cross-map modalities: which maps an instance is sent as, in which order, and on
which map a pixel edit is expressed. Written by the renderer (scoring.render.multi), read by the
runner and the scorer; this module needs no matplotlib.

    maps/<id>.multi1.*           image-multi, map 1: a detail map of the target alone
    maps/<id>.multi2.*           image-multi, map 2: the other features over an area containing map 1's
    maps/<id>.distractor.*       <id>'s map with its labels renumbered: a distractor for other instances
    maps/<id>.image-multi.json   the set: maps in the order sent, their roles, the edit map
    maps/<id>.image-context.json the instance's own map (<id>.png) among distractors, seeded order

Each map keeps its own sidecar, world file and scale bar, so every pixel answer is mapped back
through the map it was expressed on. A set file is written after its maps: an existing set file
implies complete maps.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scoring.errors import InputError
from scoring.support.files import read_json
from scoring.vocab import Modality

SET_SCHEMA = "spatialgap-mapset/1"
CONTEXT_DISTRACTORS = (
    3  # FRIEDA's contextual documents hold a handful of maps; four in all keeps prompts sane
)
# What the build manifest records of the map-set modalities (maps["sets"]): how their maps are made
# from the instances and their oracle facts, which stay the only truth.
MAP_SETS: dict[str, dict[str, Any]] = {
    Modality.IMAGE_MULTI: {
        "maps": [
            "detail: the target (F0, or the edit target) alone",
            "overview: the other features, " "over an area containing the whole scene",
        ],
        "edit_map": "detail",
    },
    Modality.IMAGE_CONTEXT: {
        "maps": "the image modality's map among distractor maps of other instances of the same city and "
        "task, their labels renumbered past every label of the benchmark",
        "distractors": CONTEXT_DISTRACTORS,
        "order": "shuffled, seeded by the benchmark seed and the instance id",
        "edit_map": "the instance's own map",
    },
}
MULTI_SUFFIXES = (".multi1", ".multi2")
DISTRACTOR_SUFFIX = ".distractor"
_FID = re.compile(r"^F(\d+)$")


def set_path(maps_dir: str | Path, instance_id: str, modality: Modality | str) -> Path:
    """The set file of an instance in a map-set modality."""
    if not Modality(modality).map_set:
        raise ValueError(f"modality {modality} sends a single map, not a map set")
    return Path(maps_dir) / f"{instance_id}.{modality}.json"


def feature_number(fid: str) -> int | None:
    m = _FID.match(fid)
    return int(m.group(1)) if m else None


@dataclass(frozen=True)
class MapSet:
    """An instance's maps in one map-set modality, in the order they are sent."""

    modality: Modality
    instance_id: str
    maps: tuple[dict[str, Any], ...]  # {"id", "role", "features"} per map
    edit_map: int  # index of the map on which pixel edits are expressed (the one showing the target)
    pngs: tuple[bytes, ...] = ()

    @property
    def map_ids(self) -> tuple[str, ...]:
        return tuple(str(m["id"]) for m in self.maps)

    @property
    def edit_map_id(self) -> str:
        return self.map_ids[self.edit_map]

    @property
    def sha256(self) -> str:
        """One digest of every image in order: the cache key of the request's images."""
        h = hashlib.sha256()
        for png in self.pngs:
            h.update(hashlib.sha256(png).digest())
        return h.hexdigest()

    def __bool__(self) -> bool:
        return bool(self.maps)


def read_map_set(
    maps_dir: str | Path, instance_id: str, modality: Modality | str, *, images: bool = True
) -> MapSet:
    """The map set of an instance (with its PNG bytes unless ``images`` is False); InputError
    naming the file when it or one of its maps is missing."""
    path = set_path(maps_dir, instance_id, modality)
    if not path.is_file():
        raise InputError(f"{path}: no map set (render it: spatialgap render --modalities {modality})")
    record = read_json(path)
    try:
        maps = tuple(dict(m) for m in record["maps"])
        edit_map = int(record["edit_map"])
        ids = [str(m["id"]) for m in maps]
        if not maps or not 0 <= edit_map < len(maps):
            raise ValueError
    except (KeyError, TypeError, ValueError):
        raise InputError(f"{path}: not a map set (needs maps and edit_map)") from None
    pngs: list[bytes] = []
    if images:
        for mid in ids:
            p = Path(maps_dir) / f"{mid}.png"
            try:
                pngs.append(p.read_bytes())
            except OSError:
                raise InputError(f"{p}: map of the {modality} set of {instance_id} missing") from None
    return MapSet(Modality(modality), instance_id, maps, edit_map, tuple(pngs))


def edit_map_id(maps_dir: str | Path, instance_id: str, modality: Modality | str) -> str:
    """The map whose sidecar maps a pixel edit of ``modality`` back to the task CRS."""
    if not Modality(modality).map_set:
        return instance_id
    return read_map_set(maps_dir, instance_id, modality, images=False).edit_map_id


def images_sha256(image: bytes | MapSet) -> str:
    """Digest of what a request shows: one map's bytes, or a map set's images in order."""
    if isinstance(image, MapSet):
        return image.sha256
    return hashlib.sha256(image).hexdigest()
