"""The real OSM context of a benchmark, projected once to EPSG:3857 and indexed with an STRtree
so each map draws only the context near its view."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import shapely
from shapely.geometry import shape

from scoring.errors import InputError
from scoring.geometry.georef import task_to_3857

POOLS = ("water", "area", "building", "road", "poi")


@dataclass
class ContextIndex:
    """Context features in EPSG:3857. `query(bounds)` returns indices of those touching bounds."""

    task_epsg: int
    geoms: np.ndarray  # shapely geometries, EPSG:3857
    pools: list[str]
    props: list[dict[str, Any]]
    tree: shapely.STRtree = field(repr=False)
    # per-feature lookups made once per index (maps select from them by position)
    _pool_codes: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)
    _road_kinds: dict[Any, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)

    def pool_codes(self) -> np.ndarray:
        """Each feature's pool as its position in POOLS."""
        if self._pool_codes is None:
            code = {p: i for i, p in enumerate(POOLS)}
            self._pool_codes = np.fromiter((code[p] for p in self.pools), np.int8, len(self.pools))
        return self._pool_codes

    def road_kinds(self, classes: list[list[str]], path_highways: list[str]) -> np.ndarray:
        """Each feature's road kind: -1 a path, else the first class listing its `highway`
        (the last class when none does)."""
        key = (tuple(map(tuple, classes)), tuple(path_highways))
        kinds = self._road_kinds.get(key)
        if kinds is None:
            paths = set(path_highways)

            def kind(hw: str) -> int:
                if hw in paths:
                    return -1
                return next((ci for ci, c in enumerate(classes) if hw in c), len(classes) - 1)

            kinds = np.fromiter(
                (kind(str(p.get("highway", ""))) for p in self.props), np.int16, len(self.props)
            )
            self._road_kinds[key] = kinds
        return kinds

    @classmethod
    def from_features(cls, features: Iterable[dict[str, Any]], task_epsg: int) -> ContextIndex:
        geoms, pools, props = [], [], []
        for feat in features:
            p = feat.get("properties") or {}
            pool = p.get("pool")
            if pool not in POOLS or not feat.get("geometry"):
                continue
            g = shape(feat["geometry"])
            if g.is_empty:
                continue
            geoms.append(g)
            pools.append(pool)
            keep = {k: p[k] for k in ("highway", "osm_id", "water") if k in p}
            props.append(keep)
        arr = np.array(geoms, dtype=object) if geoms else np.empty(0, dtype=object)
        if len(arr):

            def f(coords: np.ndarray) -> np.ndarray:
                x, y = task_to_3857(coords[:, 0], coords[:, 1], task_epsg)
                return np.column_stack([x, y])

            arr = shapely.transform(arr, f)
        return cls(int(task_epsg), arr, pools, props, shapely.STRtree(arr))

    @classmethod
    def from_file(cls, path: str | Path, task_epsg: int) -> ContextIndex:
        path = Path(path)
        if not path.is_file():
            return cls.from_features([], task_epsg)

        def read():
            with path.open(encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    line = line.strip()
                    if not line:
                        continue
                    try:
                        yield json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise InputError(f"{path}:{n}: invalid JSON ({exc.msg})") from None

        return cls.from_features(read(), task_epsg)

    def __len__(self) -> int:
        return len(self.geoms)

    def query(self, bounds: tuple[float, float, float, float]) -> np.ndarray:
        """Sorted indices of context features intersecting an EPSG:3857 box (deterministic order)."""
        if not len(self.geoms):
            return np.empty(0, dtype=int)
        idx = self.tree.query(shapely.box(*bounds), predicate="intersects")
        return np.sort(idx)
