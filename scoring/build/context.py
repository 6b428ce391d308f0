"""The city's context layer (`context.geojsonl`: water, then the task pools, for the maps).

Only the context near the sampled scenes is kept (issue 33 item 1): each shard names the features
within reach of its instances' maps (`near_instances`, on the worker's spatial indexes), the
builder joins the names, and the file is serialised in chunks on the build's executor; the
chunks' lines, joined in order, are the file `context_features` gives, byte for byte. A city's
file thus grows with the scenes sampled, not with the extract (a tenth of a millisecond a
feature: a minute for a pool of half a million features).

Reach: a map is a square view centred on its framed bounds (the scene, and an edit's reference
result), `view.padding` wider on each side and at least `view.min_side_m` (the default map style);
an image-multi overview spans at most 2.6 such sides around a point of the detail view (at most
1.8 sides from its centre). The kept square, REACH_SIDES sides from the centre, holds both with
room for the grid convergence between the task CRS and EPSG:3857, so every map is drawn as from
the whole context.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import cache

import numpy as np
import shapely

from scoring.constraints.framing import beyond_scene
from scoring.extract.pools import FeaturePools, PoolFeature
from scoring.geometry.scene import Scene, _rounded
from scoring.paths import RESOURCES_DIR

CONTEXT_CHUNK = 20_000  # features per job: large enough that shipping one costs little
POOL_ORDER = ("area", "building", "road", "poi")  # after the water
REACH_SIDES = 2.0  # half-side of the kept square around a map's centre, in sides of its view
CONTEXT_RULE = (
    f"features crossing a square around some instance's maps: centred on its framed bounds (the "
    f"scene, and an edit's reference result), of half-side {REACH_SIDES:g} x the map view's side "
    "(max(width, height) x (1 + 2 view.padding), at least view.min_side_m, default map style)"
)

# (source, kind, indices): those features of pools.context[kind] ("context") or pools.features[kind]
Segment = tuple[str, str, tuple[int, ...]]
# (source, kind) -> sorted indices of the features to write
Selection = dict[tuple[str, str], np.ndarray]


def _dumps(obj) -> str:
    # the builder's canonical JSON (scoring.build.builder.dumps)
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _feature(f: PoolFeature, pool: str, geometry: dict) -> dict:
    return {
        "type": "Feature",
        "id": f.uid,
        "properties": {"pool": pool, "osm_id": f.uid, **f.props},
        "geometry": geometry,
    }


def _geometries(geoms: list) -> list[dict]:
    """`_geometry` of each, the points, lines and polygons read as one ragged array per type:
    one array call instead of several per geometry (a feature's line cost 28 µs, then 8)."""
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = geoms
    types = shapely.get_type_id(arr)
    out: list = [None] * len(geoms)
    for tid in (0, 1, 3):  # Point, LineString, Polygon
        idx = np.flatnonzero(types == tid)
        if len(idx):
            for i, g in zip(idx.tolist(), _ragged(arr[idx], tid), strict=True):
                out[i] = g
    return [g if g is not None else _geometry(geoms[i]) for i, g in enumerate(out)]


def _ragged(geoms: np.ndarray, tid: int) -> list[dict]:
    """GeoJSON geometries of geometries of one type, from shapely's ragged array (the same
    coordinates in the same order); the general path when one is off the grid."""
    _, coords, offsets = shapely.to_ragged_array(geoms)
    if not np.array_equal(np.round(coords, 2), coords):
        return [_geometry(g) for g in geoms]
    xy = coords.tolist()
    if tid == 0:
        return [{"type": "Point", "coordinates": c} for c in xy]
    if tid == 1:
        o = offsets[0].tolist()
        return [{"type": "LineString", "coordinates": xy[o[i] : o[i + 1]]} for i in range(len(geoms))]
    ro, po = (a.tolist() for a in offsets)
    rings = [xy[ro[r] : ro[r + 1]] for r in range(len(ro) - 1)]
    return [{"type": "Polygon", "coordinates": rings[po[i] : po[i + 1]]} for i in range(len(geoms))]


def _geometry(g) -> dict:
    """`_rounded(mapping(g))` (the scene's GeoJSON: coordinates rounded to the 1 cm grid), read
    ring by ring as arrays: most of the cost of writing the context was building and walking
    mapping()'s tuples. A coordinate already on the grid (np.round leaves it, so it is the double
    nearest to a whole number of cm, which round(x, 2) returns too) is written as it is; a
    geometry with one that is not, or of another type, takes the general path."""
    kind = g.geom_type
    if kind == "Point" or kind == "LineString":
        coords = _on_grid(g)
        if coords is not None:
            return {"type": kind, "coordinates": coords if kind == "LineString" else coords[0]}
    elif kind == "Polygon" or kind == "MultiPolygon":
        polys = [g] if kind == "Polygon" else list(g.geoms)
        rings = [[_on_grid(r) for r in (p.exterior, *p.interiors)] for p in polys]
        if all(r is not None for p in rings for r in p):
            return {"type": kind, "coordinates": rings[0] if kind == "Polygon" else rings}
    from shapely.geometry import mapping

    return _rounded(mapping(g))


def _on_grid(g) -> list | None:
    xy = shapely.get_coordinates(g)
    return xy.tolist() if np.array_equal(np.round(xy, 2), xy) else None


def context_features(pools: FeaturePools, selection: Selection | None = None) -> Iterator[dict]:
    """The real OSM context of the city (for map rendering), in task coordinates: water first
    (the sea derived from the coastline, `sea/<k>`, then lakes, rivers and basins), then the
    task pools; only the `selection` (default: everything). A basin or reservoir that is also a
    task-pool area is written once, as water."""
    as_water = _water_uids(pools)
    for job in context_chunks(pools, selection, chunk=1 << 62):
        for segment in job:
            yield from _segment_features(segment, pools, as_water)


def context_chunks(
    pools: FeaturePools, selection: Selection | None = None, chunk: int = CONTEXT_CHUNK
) -> list[tuple[Segment, ...]]:
    """The selected context features in file order, as jobs of at most `chunk` features each."""
    sources = [("context", "water", len(_water(pools)))]
    sources += [("features", k, len(pools.features[k])) for k in POOL_ORDER]
    jobs: list[tuple[Segment, ...]] = []
    job: list[Segment] = []
    size = 0
    for source, kind, n in sources:
        picked = np.arange(n) if selection is None else selection.get((source, kind), np.empty(0, int))
        lo = 0
        while lo < len(picked):
            take = min(len(picked) - lo, chunk - size)
            job.append((source, kind, tuple(int(i) for i in picked[lo : lo + take])))
            size, lo = size + take, lo + take
            if size == chunk:
                jobs.append(tuple(job))
                job, size = [], 0
    if job:
        jobs.append(tuple(job))
    return jobs


def reach_box(instance: dict) -> tuple[float, float, float, float]:
    """The task-CRS square around an instance's maps whose context they may draw."""
    scene = Scene.from_geojson(instance["scene"])
    geoms = [scene.geom(i) for i in scene.ids()] + beyond_scene(instance)[0]
    x0, y0, x1, y1 = (float(v) for v in shapely.total_bounds(np.array(geoms, dtype=object)))
    padding, min_side = _view_rule()
    side = max(max(x1 - x0, y1 - y0) * (1.0 + 2.0 * padding), min_side)
    cx, cy, half = (x0 + x1) / 2, (y0 + y1) / 2, REACH_SIDES * side
    return cx - half, cy - half, cx + half, cy + half


def near_instances(pools: FeaturePools, instances: Sequence[dict]) -> Selection:
    """The context features within reach of the instances' maps, by source and kind (the whole
    city's pools, not a task's half: a map near the split's edge shows both)."""
    if not instances:
        return {}
    boxes = shapely.box(*np.array([reach_box(i) for i in instances]).T)
    out: Selection = {}
    for source, kind, tree in _trees(pools):
        if tree is not None:
            out[(source, kind)] = np.unique(tree.query(boxes, predicate="intersects")[1])
    return out


def join_selections(pools: FeaturePools, parts: Sequence[Selection]) -> Selection:
    """The union of the shards' selections; a selected area that is also water brings its water
    feature (the file writes it once, as water)."""
    keys = {k for part in parts for k in part}
    out = {k: np.unique(np.concatenate([p[k] for p in parts if k in p])) for k in keys}
    water = {f.uid: i for i, f in enumerate(_water(pools))}
    areas = pools.features.get("area", [])
    twins = [water[areas[i].uid] for i in out.get(("features", "area"), []) if areas[i].uid in water]
    if twins:
        have = out.get(("context", "water"), np.empty(0, int))
        out[("context", "water")] = np.unique(np.concatenate([have, twins]).astype(int))
    return out


def _trees(pools: FeaturePools) -> list[tuple[str, str, shapely.STRtree | None]]:
    """Each context source's spatial index (built once per process and pools)."""
    cached = _TREES.get(id(pools))
    if cached is None or cached[0] is not pools:
        water = _water(pools)
        trees = [("context", "water", shapely.STRtree([f.geom for f in water]) if water else None)]
        trees += [("features", k, pools.tree(k) if pools.features[k] else None) for k in POOL_ORDER]
        _TREES.clear()
        _TREES[id(pools)] = cached = (pools, trees)
    return cached[1]


_TREES: dict[int, tuple[FeaturePools, list]] = {}


@cache
def _view_rule() -> tuple[float, float]:
    """(view.padding, view.min_side_m) of the default map style (resources/styles/map.json)."""
    view = json.loads((RESOURCES_DIR / "styles" / "map.json").read_text(encoding="utf-8"))["view"]
    return float(view["padding"]), float(view["min_side_m"])


def context_lines(job: tuple[Segment, ...], pools: FeaturePools) -> str:
    """One chunk's lines of `context.geojsonl` (a worker's part)."""
    water = _water_uids(pools)
    return "".join(_dumps(f) + "\n" for segment in job for f in _segment_features(segment, pools, water))


def _water(pools: FeaturePools) -> list[PoolFeature]:
    return list(getattr(pools, "context", {}).get("water", []))


def _water_uids(pools: FeaturePools) -> set[str]:
    return {f.uid for f in _water(pools)}


def _segment_features(segment: Segment, pools: FeaturePools, as_water: set[str]) -> Iterator[dict]:
    source, kind, picked = segment
    if source == "context":
        water = _water(pools)
        feats, pool = [water[i] for i in picked], "water"
    else:
        every = pools.features[kind]
        feats = [f for f in (every[i] for i in picked) if not (kind == "area" and f.uid in as_water)]
        pool = kind
    for f, geometry in zip(feats, _geometries([f.geom for f in feats]), strict=True):
        yield _feature(f, pool, geometry)
