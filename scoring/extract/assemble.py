"""Records -> feature pools, streamed: a reader hands over (layer, fields, WKB in WGS 84) records
chunk by chunk, and only what the pools, the water context and the coastline need is kept (the
feature's role, id, the few attributes the relations read, and its geometry). Memory is thus
bounded by what the pools keep, not by the extract.

The city CRS is the UTM zone holding the centre of *all* records' bounds, so geometry is kept in
WGS 84 until the last chunk; then the kept geometries are projected in one PROJ call, snapped
and cleaned in array calls (the same GEOS operations, hence the same doubles, as one call per
geometry), and the pools are built exactly as before: the output is the same byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import shapely
import shapely.errors
from pyproj import Transformer
from shapely.geometry import LineString, MultiPolygon, Polygon

from scoring.errors import InputError
from scoring.extract.pools import POOL_KINDS, FeaturePools, PoolFeature, Thresholds
from scoring.extract.prepare import CLEANED, Job, prepared_chunks
from scoring.extract.water import WATER_TAGS, sea_from_coastline
from scoring.geometry.georef import GRID, CityCRS, snap_to_grid
from scoring.support.files import sha256_file
from scoring.vocab import POI_KEYS

# Highway values that are not ways one travels along (or not built yet).
NON_ROAD_HIGHWAYS = {
    "platform",
    "proposed",
    "construction",
    "elevator",
    "bus_stop",
    "corridor",
    "raceway",
    "abandoned",
    "razed",
    "disused",
}
MIN_FEATURES = 30  # fewer usable features than this: the extract is too small for a benchmark
# The stats' event kinds, in the order they are inserted when two happen to the same record.
_EVENTS = ("repaired", "dropped_geometry")

Record = tuple[str, dict, bytes]


def _int_or_none(value) -> int | None:
    try:
        return int(str(value).strip().split(";")[0])
    except (TypeError, ValueError):
        return None


def roles_of(layer: str, fields: dict) -> list[tuple[str, str | None, dict | None]]:
    """What a record becomes, from its attributes alone: (role, uid, props) for each of the
    pools ("poi", "road", "building", "area"), "water" context, and the coastline
    ("coast_line", "coast_ring"; no uid or props). Empty: nothing keeps it."""
    out: list[tuple[str, str | None, dict | None]] = []
    if layer == "points":
        if any(k in fields for k in POI_KEYS):
            props = {k: fields[k] for k in ("name", *POI_KEYS) if k in fields}
            out.append(("poi", fields.get("_uid") or f"node/{fields['osm_id']}", props))
    elif layer == "lines":
        if fields.get("natural") == "coastline":
            out.append(("coast_line", None, None))
        hw = fields.get("highway")
        if hw and hw not in NON_ROAD_HIGHWAYS and fields.get("area") != "yes":
            props = {"highway": hw}
            for k in ("name", "bridge", "tunnel"):
                if k in fields:
                    props[k] = fields[k]
            lay = _int_or_none(fields.get("layer"))
            if lay is not None:
                props["layer"] = lay
            out.append(("road", fields.get("_uid") or f"way/{fields['osm_id']}", props))
    else:  # multipolygons: closed ways carry osm_way_id, relations osm_id
        uid = fields.get("_uid") or (
            f"way/{fields['osm_way_id']}" if fields.get("osm_way_id") else f"relation/{fields.get('osm_id')}"
        )
        # context only, independent of the task pools below (a reservoir stays an area too)
        if fields.get("natural") == "coastline":
            out.append(("coast_ring", None, None))  # a closed coastline way: an island
        elif any(fields.get(k) in vals for k, vals in WATER_TAGS) and not fields.get("building"):
            keys = ("natural", "waterway", "landuse", "water", "name")
            out.append(("water", uid, {k: fields[k] for k in keys if k in fields}))
        if fields.get("building"):
            props = {"building": fields["building"]}
            if "name" in fields:
                props["name"] = fields["name"]
            out.append(("building", uid, props))
        elif fields.get("landuse") or fields.get("leisure"):
            out.append(("area", uid, {k: fields[k] for k in ("landuse", "leisure", "name") if k in fields}))
    return out


@dataclass
class PoolAssembler:
    """Takes record chunks in reading order (`add`), then builds the pools (`finish`). Bad
    records (coordinates that are no longitude / latitude, attributes GEOS or Python refuse)
    are a one-line InputError naming `path` and the record, as soon as their chunk comes."""

    path: Path | str = "<records>"
    read: int = 0
    layers: dict[str, int] = field(default_factory=lambda: {"points": 0, "lines": 0, "multipolygons": 0})
    bounds: list[float] = field(default_factory=lambda: [np.inf, np.inf, -np.inf, -np.inf])
    # kept records: index in reading order, WGS 84 geometry as WKB, roles
    index: list[int] = field(default_factory=list)
    wkbs: list[bytes] = field(default_factory=list)
    roles: list[list] = field(default_factory=list)
    # (first, end) of each chunk's kept records: what one prepare job takes (scoring.extract.prepare)
    chunks: list[tuple[int, int]] = field(default_factory=list)
    # record index -> event: geometry that does not parse (a 2-point ring of a clipped relation)
    broken: list[int] = field(default_factory=list)

    def add(self, chunk: list[Record], speculate: bool = False) -> Job | None:
        """One chunk of records, in reading order: checked, its kept records' roles noted. With
        `speculate`, the job preparing its kept records in the zone of the records so far."""
        wgs84 = shapely.from_wkb([w for _, _, w in chunk], on_invalid="ignore")
        check_lonlat(wgs84, chunk, Path(self.path))
        present = wgs84[~shapely.is_missing(wgs84)]
        if present.size:
            b = shapely.total_bounds(present)
            lo = [min(self.bounds[0], b[0]), min(self.bounds[1], b[1])]
            self.bounds = [*lo, max(self.bounds[2], b[2]), max(self.bounds[3], b[3])]
        first = len(self.index)
        for i, ((layer, fields, wkb), geom) in enumerate(zip(chunk, wgs84, strict=True)):
            self.layers[layer] = self.layers.get(layer, 0) + 1
            if geom is None:
                self.broken.append(self.read + i)
                continue
            try:
                roles = roles_of(layer, fields)
            except (shapely.errors.GEOSException, ValueError) as exc:
                # the file's fault, named with the feature, never a traceback
                raise InputError(
                    f"{self.path}: {record_name(chunk[i])}: invalid geometry ({_reason(exc)})"
                ) from None
            if roles:
                self.index.append(self.read + i)
                self.wkbs.append(wkb)
                self.roles.append(roles)
        self.read += len(chunk)
        if len(self.index) == first:
            return None
        self.chunks.append((first, len(self.index)))
        return self._job(len(self.chunks) - 1, self._crs().epsg, True) if speculate else None

    def part(self) -> tuple:
        """The last chunk's kept records (index, WKB, roles) and the zone of the records read so
        far, to hand to another process's assembler (`take`); forgotten here."""
        out = (list(self.index), list(self.wkbs), list(self.roles), self._crs().epsg)
        self.index, self.wkbs, self.roles, self.chunks = [], [], [], []
        return out

    def take(self, part: tuple) -> Job:
        """A chunk assembled by another process (`part`): its kept records appended, and the job
        preparing them in the zone guessed there."""
        index, wkbs, roles, epsg = part
        first = len(self.index)
        self.index.extend(index)
        self.wkbs.extend(wkbs)
        self.roles.extend(roles)
        self.chunks.append((first, len(self.index)))
        return self._job(len(self.chunks) - 1, epsg, True)

    def summary(self) -> dict:
        """What an assembler that only `take`s needs besides the kept records."""
        return {"read": self.read, "layers": self.layers, "bounds": self.bounds, "broken": self.broken}

    def conclude(self, summary: dict) -> None:
        """The other process's `summary`, once it read the last record."""
        self.read, self.layers, self.bounds, self.broken = (
            summary[k] for k in ("read", "layers", "bounds", "broken")
        )

    def _crs(self) -> CityCRS:
        """The UTM zone holding the centre of the bounds of the records read so far."""
        minx, miny, maxx, maxy = self.bounds
        return CityCRS.for_lonlat((minx + maxx) / 2, (miny + maxy) / 2)

    def _job(self, c: int, epsg: int, speculative: bool) -> Job:
        lo, hi = self.chunks[c]
        return epsg, self.wkbs[lo:hi], [tuple(r for r, _, _ in rs) for rs in self.roles[lo:hi]], speculative

    def finish(
        self, path: Path, city: str, stats: dict, executor: Any = None, prepared: list | None = None
    ) -> FeaturePools:
        """The pools. `prepared`: the chunks' speculative preparations (`add`), in order; those
        in another zone than the city's, and all without, are prepared here or, for a large
        extract and an `executor` of several workers (scoring.execute), on it."""
        crs = self._crs()
        stats["read"] = self.read
        events: list[tuple[int, int]] = [(i, 1) for i in self.broken]  # (record, _EVENTS index)
        done = prepared_chunks(self, crs.epsg, prepared, executor)
        check_spread(done, path)
        self.wkbs = []  # the WGS 84 copies: no longer needed (memory is what the pools keep)
        events += [e for part in done for e in part["events"]]
        pois, roads, buildings, areas = ([f for part in done for f in part[k]] for k in ("poi", *CLEANED))
        water = []
        for uid, props, geom, why in (w for part in done for w in part["water"]):
            if why is not None:
                raise InputError(f"{path}: feature {uid}: invalid geometry ({why})")
            if geom is not None:
                water.append(PoolFeature(uid, "water", geom, props))
        coast_lines = [g for part in done for g in part["coast_line"]]
        coast_rings = [g for part in done for g in part["coast_ring"]]
        del done
        _count_events(events, stats)
        return _pools(
            path=path,
            city=city,
            crs=crs,
            stats=stats,
            found={"road": roads, "building": buildings, "area": areas, "poi": pois},
            water=water,
            coast=(coast_lines, coast_rings),
            why_none=lambda: self.why_none(stats),
        )

    def _named(self, n: int, role: str) -> tuple[Any, Any]:
        """(uid, props) of kept record n in `role`."""
        for r, uid, props in self.roles[n]:  # one or two roles: a loop, no generator (700,000 calls)
            if r == role:
                return uid, props
        raise KeyError(role)

    def why_none(self, stats: dict) -> str:
        """Why no road, building or land-use feature survived: what was read, and where it went."""
        layers = self.layers
        if not layers.get("lines") and not layers.get("multipolygons"):
            return (
                f"the file holds {layers.get('points', 0)} points and no lines or polygons: "
                "a .osm.pbf cut short keeps its nodes and loses the ways stored after them"
            )
        dropped = stats.get("dropped_geometry", 0)
        return (
            f"{layers.get('lines', 0)} lines and {layers.get('multipolygons', 0)} polygons read, "
            f"{dropped} with broken geometry, the rest not roads / buildings / land use or below "
            "the legibility thresholds"
        )


def _count_events(events: list[tuple[int, int]], stats: dict) -> None:
    """The events' counts, inserted in the order of their first record (as a one-pass read does)."""
    first: dict[int, tuple[int, int]] = {}
    counts = [0, 0]
    for rec, kind in events:
        counts[kind] += 1
        first[kind] = min(first.get(kind, (rec, kind)), (rec, kind))
    for kind in sorted(first, key=first.__getitem__):
        stats[_EVENTS[kind]] = stats.get(_EVENTS[kind], 0) + counts[kind]


def pools_from_records(records: Iterable[list[Record]], path: Path, city: str, stats: dict) -> FeaturePools:
    """Feature pools from chunks of (layer, OSM-style fields, WKB in WGS 84) records: the OSM
    reader's, or any vector file's through its mapping (scoring.extract.vector). A record's
    `_uid` field, when set, names the feature instead of its OSM type and id."""
    asm = PoolAssembler(path)
    for chunk in records:
        asm.add(chunk)
    if not asm.read:
        raise InputError(f"{path}: the extract holds no OSM features")
    return asm.finish(path, city, stats)


# ---------------------------------------------------------------- checks of the input


def record_name(record: Record) -> str:
    """How an error names a record: its vector uid, else its OSM type and id."""
    layer, fields, _ = record
    if fields.get("_uid"):
        return f"feature {fields['_uid']}"
    if fields.get("osm_way_id"):
        return f"way/{fields['osm_way_id']}"
    kind = {"points": "node", "lines": "way"}.get(layer, "relation")
    return f"{kind}/{fields.get('osm_id')}"


def _reason(exc: Exception) -> str:
    return str(exc).split(": ", 1)[-1].strip() or type(exc).__name__


def check_lonlat(wgs84: np.ndarray, chunk: list[Record], path: Path) -> None:
    """Every coordinate a finite longitude / latitude: one that is not (latitude 91, 1e300, metres
    declared as degrees) would project to infinity and end as invalid JSON far downstream."""
    present = ~shapely.is_missing(wgs84)
    if not present.any():
        return
    b = shapely.bounds(wgs84[present])
    lon_ok = (b[:, 0] >= -180) & (b[:, 2] <= 180)
    ok = np.isfinite(b).all(axis=1) & lon_ok & (b[:, 1] >= -90) & (b[:, 3] <= 90)
    if ok.all():
        return
    i = int(np.flatnonzero(present)[int(np.argmin(ok))])
    x0, y0, x1, y1 = b[int(np.argmin(ok))]
    raise InputError(
        f"{path}: {record_name(chunk[i])}: coordinates out of range for longitude / latitude "
        f"(x {x0:.6g}..{x1:.6g}, y {y0:.6g}..{y1:.6g}; a wrong declared CRS?)"
    )


SPREAD_MIN_M = 10.0  # a benchmark's features spread over more than this (a city block is ~100 m)


def check_spread(parts: list[dict], path: Path) -> None:
    """Features that all lie within a few metres are no city: degrees read as metres (a projected
    CRS declared for longitude / latitude) put a whole extract inside one square metre. Judged on
    the kept records (those some pool, the water or the coast takes), the only ones projected:
    `parts`, the prepared chunks (scoring.extract.prepare), each with its count and bounds."""
    present = sum(p["present"] for p in parts)
    if present < MIN_FEATURES:
        return  # too few to judge; the count checks below say what is wrong
    b = np.array([p["bounds"] for p in parts if p["bounds"] is not None])
    minx, miny, maxx, maxy = b[:, 0].min(), b[:, 1].min(), b[:, 2].max(), b[:, 3].max()
    spread = float(np.hypot(maxx - minx, maxy - miny))
    if not np.isfinite(spread):
        raise InputError(f"{path}: features too far apart for one UTM zone (is this one city?)")
    if spread < SPREAD_MIN_M:
        raise InputError(
            f"{path}: all {present} features lie within {spread:.3g} m of each other "
            "(a wrong declared CRS? longitude / latitude read as metres)"
        )


# ---------------------------------------------------------------- geometry, in arrays


def snap_all(geoms: list) -> list:
    """snap_to_grid of each geometry (scoring.geometry.georef), in array calls. Rounding to the
    grid as `round(x, 2)` does: GEOS has put each coordinate within a few ulps of a multiple of
    1 cm, so rint(100 x) is that multiple's integer k and k / 100 (one correctly rounded
    division) is the double nearest to k cents, which is what round() returns; a coordinate not
    that close to the grid (none seen) takes round() itself."""
    if not geoms:
        return []
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = geoms
    snapped = shapely.set_precision(arr, GRID)
    coords = shapely.get_coordinates(snapped)
    scaled = coords * 100.0
    k = np.rint(scaled)
    rounded = k / 100.0
    far = np.abs(scaled - k) > 0.25
    for r, c in zip(*np.nonzero(far), strict=True):
        rounded[r, c] = round(float(coords[r, c]), 2)
    plain = shapely.from_wkb(shapely.to_wkb(snapped))
    return list(shapely.set_coordinates(plain, rounded)) if len(rounded) else list(plain)


def _snap_each(geoms: list) -> list:
    """snap_all, or one geometry at a time (None where GEOS fails) when the array call fails."""
    try:
        return snap_all(geoms)
    except shapely.errors.GEOSException:
        out = []
        for g in geoms:
            try:
                out.append(snap_to_grid(g))
            except shapely.errors.GEOSException:
                out.append(None)
        return out


def _array(geoms: list) -> np.ndarray:
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = geoms
    return arr


def _usable(arr: np.ndarray) -> np.ndarray:
    """Present and not empty (an empty geometry is left out without counting, as before)."""
    return ~shapely.is_missing(arr) & ~shapely.is_empty(arr)


def _clean_polygons(geoms: list) -> list[tuple[Polygon | None, bool, bool]]:
    """(valid polygon on the grid or None, repaired, dropped) for each geometry: OSM's invalid
    polygons repaired with make_valid, whatever is not then a single valid polygon dropped.
    The checks run in array calls (the same GEOS predicates)."""
    arr = _array(geoms)
    out: list[tuple[Polygon | None, bool, bool]] = [(None, False, False)] * len(geoms)
    todo = np.flatnonzero(_usable(arr))
    invalid = np.zeros(len(geoms), dtype=bool)
    invalid[todo] = ~shapely.is_valid(arr[todo])
    keep = []
    for i in todo:
        if invalid[i]:
            try:
                arr[i] = shapely.make_valid(arr[i])
            except shapely.errors.GEOSException:
                out[i] = (None, False, True)
                continue
        keep.append(i)
    snapped = _array(_snap_each(list(arr[keep])))
    for j, g in enumerate(snapped):  # a single part is that polygon
        if isinstance(g, MultiPolygon) and len(g.geoms) == 1:
            snapped[j] = g.geoms[0]
    polygon = shapely.get_type_id(snapped) == 3  # (a missing geometry: -1)
    good = np.zeros(len(snapped), dtype=bool)
    good[polygon] = ~shapely.is_empty(snapped[polygon]) & shapely.is_valid(snapped[polygon])
    for i, g, ok in zip(keep, snapped, good, strict=True):
        out[i] = (g if ok else None, bool(invalid[i]), not ok)
    return out


def _clean_lines(geoms: list) -> list[tuple[LineString | None, bool, bool]]:
    arr = _array(geoms)
    out: list[tuple[LineString | None, bool, bool]] = [(None, False, False)] * len(geoms)
    todo = np.flatnonzero(_usable(arr))
    snapped = _array(_snap_each(list(arr[todo])))
    line = shapely.get_type_id(snapped) == 1
    good = np.zeros(len(snapped), dtype=bool)
    sub = snapped[line]
    good[line] = ~shapely.is_empty(sub) & (shapely.length(sub) > 0) & shapely.is_valid(sub)
    for i, g, ok in zip(todo, snapped, good, strict=True):
        out[i] = (g if ok else None, False, not ok)
    return out


_CLEAN = {"road": _clean_lines, "building": _clean_polygons, "area": _clean_polygons}


def _project_all(geoms, transformer: Transformer) -> list:
    """Each geometry in the task CRS, None where the projection breaks it: one PROJ call for
    all coordinates (PROJ projects point by point, so the same doubles as one call per
    geometry), or one per geometry when some geometry breaks."""
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = geoms
    try:
        return list(shapely.transform(arr, lambda xy: _project(transformer, xy)))
    except shapely.errors.GEOSException:
        return [_project_one(g, transformer) for g in arr]


def _project_one(geom, transformer: Transformer):
    try:
        return shapely.transform(geom, lambda xy: _project(transformer, xy))
    except shapely.errors.GEOSException:
        return None


def _project(transformer: Transformer, xy):
    x, y = transformer.transform(xy[:, 0], xy[:, 1])
    return np.column_stack([x, y])


# ---------------------------------------------------------------- pools


def _quantile(values: list[float], q: float, default: float) -> float:
    if not values:
        return default
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


# long: the thresholds, the filters and the checks of one pass over the pools, in order
def _pools(  # noqa: PLR0913 (keyword-only: the assembler's parts, each named)
    *,
    path: Path,
    city: str,
    crs: CityCRS,
    stats: dict,
    found: dict[str, list[PoolFeature]],
    water: list[PoolFeature],
    coast: tuple[list, list],
    why_none: Any = None,
) -> FeaturePools:
    """The pools: legibility thresholds from the city's own distributions, stable order."""
    roads, buildings, areas = found["road"], found["building"], found["area"]
    everything = roads + buildings + areas + found["poi"]
    if not everything:
        raise InputError(f"{path}: no roads, buildings, land use or POIs in the extract")
    minx, miny, maxx, maxy = shapely.total_bounds([f.geom for f in everything])
    extent_area = max(1.0, float((maxx - minx) * (maxy - miny)))
    length = shapely.length(_array([f.geom for f in roads])).tolist()
    b_area = shapely.area(_array([f.geom for f in buildings])).tolist()
    a_area = shapely.area(_array([f.geom for f in areas])).tolist()
    thresholds = Thresholds(
        road_min_length_m=max(15.0, min(40.0, _quantile(length, 0.10, 15.0))),
        building_min_area_m2=max(20.0, min(80.0, _quantile(b_area, 0.05, 20.0))),
        area_min_area_m2=max(300.0, min(2000.0, _quantile(a_area, 0.10, 300.0))),
        # An area covering a large part of the extract (a whole residential zone) is no
        # legible task feature.
        area_max_area_m2=max(20000.0, 0.15 * extent_area),
    )
    pools = {
        "road": [f for f, v in zip(roads, length, strict=True) if v >= thresholds.road_min_length_m],
        "building": [
            f for f, v in zip(buildings, b_area, strict=True) if v >= thresholds.building_min_area_m2
        ],
        "area": [
            f
            for f, v in zip(areas, a_area, strict=True)
            if thresholds.area_min_area_m2 <= v <= thresholds.area_max_area_m2
        ],
        "poi": found["poi"],
    }
    for kind in POOL_KINDS:  # stable order, independent of GDAL's reading order
        pools[kind].sort(key=uid_order)
        pools[kind] = dedupe(pools[kind])
    stats["filtered_out"] = {
        "road": len(roads) - len(pools["road"]),
        "building": len(buildings) - len(pools["building"]),
        "area": len(areas) - len(pools["area"]),
    }
    total = sum(len(v) for v in pools.values())
    none = not (pools["road"] or pools["building"] or pools["area"])  # POIs alone build nothing
    why = f"; no usable roads, buildings or land use ({why_none()})" if none and why_none else ""
    if total < MIN_FEATURES:
        raise InputError(
            f"{path}: extract too small: {total} usable features (need at least {MIN_FEATURES}){why}"
        )
    if none:
        raise InputError(f"{path}:{why[1:] or ' no usable roads, buildings or land use'}")
    water.sort(key=uid_order)
    water = dedupe(water)
    sea = sea_from_coastline(coast[0], coast[1], pools)
    return FeaturePools(
        city=city,
        crs=crs,
        source=str(path),
        source_sha256=sha256_file(path),
        features=pools,
        thresholds=thresholds,
        stats=stats,
        context={"water": sea + water},
    )


def uid_order(f: PoolFeature) -> tuple:
    """OSM ids in numeric order; other ids (vector files) after them, as text."""
    ident = f.uid.rsplit("/", 1)[-1]
    return (0, int(ident), f.uid) if ident.isdigit() else (1, 0, f.uid)


def dedupe(features: list[PoolFeature]) -> list[PoolFeature]:
    """The first feature of each uid (a multipolygon read twice, a vector feature's parts)."""
    seen, out = set(), []
    for f in features:
        if f.uid not in seen:
            seen.add(f.uid)
            out.append(f)
    return out
