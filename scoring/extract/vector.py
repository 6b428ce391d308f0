"""Stage 1 for any vector data — GeoJSON, GeoPackage, Shapefile (anything GDAL's OGR reads) ->
feature pools, through a mapping file (`spatialgap build --vector FILE --mapping mapping.toml`).

The mapping says which features of which layer go to which of the four pools and which of their
attributes carry what the relations read. Example (resources/mappings/ has complete ones):

    [source]
    city = "wuhan_guanggu"        # optional: the city name (default: the file name)
    id = "id"                     # optional: attribute with a stable feature id (default: OGR FID)
    crs = "EPSG:4326"             # optional: CRS of layers that declare none
    attribution = "© OpenStreetMap contributors, ODbL 1.0"   # optional: for the manifest

    [[pools]]
    pool = "road"                 # road | building | area | poi | water (map context only)
    layer = "roads"               # optional: one layer name (default: every layer)
    where = "kind IN ('major_road', 'minor_road')"   # optional: OGR SQL attribute filter
    [pools.attributes]            # pool attribute = source attribute
    highway = "kind"
    name = "name"
    layer = "layer"               # an integer level; anything else counts as unset
    bridge = "is_bridge"          # true / "yes" / a non-"no" value: a bridge (level +1)
    tunnel = "is_tunnel"
    [pools.values]                # pool attribute = a fixed value
    highway = "road"

Attributes each pool takes: road: highway, name, layer, bridge, tunnel; building: building,
name; area: landuse, leisure, name; poi: name and amenity, shop, tourism, leisure, office,
craft, historic, healthcare; water: natural, water, name. Without a value a road's highway is
"road", a building's building "yes", an area's landuse "yes", a POI's amenity "yes". Booleans
become "yes" / "no". Lines and polygons of multi-part features become one feature per part
(ids `<id>#<k>`); a POI given as a polygon stands at its point-on-surface. From here on the
features go through the same path as OSM data (scoring.extract.osm: city UTM CRS, 1 cm grid,
repairs, legibility thresholds).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shapely
import shapely.errors

from scoring.errors import InputError
from scoring.extract.reading import (
    Reading,
    check_readable,
    gdal_warnings,
    messages,
    require_gdal,
    send_messages,
)
from scoring.support.files import sha256_file
from scoring.vocab import POI_KEYS

if TYPE_CHECKING:  # the reading process imports this module: no PROJ or assembler there
    from scoring.extract.pools import FeaturePools

POOL_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "road": ("highway", "name", "layer", "bridge", "tunnel"),
    "building": ("building", "name"),
    "area": ("landuse", "leisure", "name"),
    "poi": ("name", *POI_KEYS),
    "water": ("natural", "water", "name"),
}
DEFAULTS: dict[str, dict[str, str]] = {
    "road": {"highway": "road"},
    "building": {"building": "yes"},
    "area": {"landuse": "yes"},
    "poi": {"amenity": "yes"},
    "water": {"natural": "water"},
}
# The OSM reader's layers, which the shared path after reading expects.
RECORD_LAYER = {"road": "lines", "building": "multipolygons", "area": "multipolygons", "poi": "points"}
RECORD_LAYER["water"] = "multipolygons"
SOURCE_KEYS = {"city", "id", "crs", "attribution"}
SENT_RECORDS = 20_000  # records per message of the reading process
Record = tuple[str, dict, bytes]  # (layer, OSM-style fields, WKB in WGS 84)
POOL_KEYS = {"pool", "layer", "where", "attributes", "values"}


def load_mapping(path: Path) -> dict:
    """The mapping file, checked: every problem is one line naming the file and the entry."""
    check_readable(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(data) - {"source", "pools"}
    if unknown:
        raise InputError(f"{path}: unknown section {sorted(unknown)[0]!r} (expected [source] and [[pools]])")
    source = data.get("source", {})
    if not isinstance(source, dict):
        raise InputError(f"{path}: [source] must be a table")
    bad = set(source) - SOURCE_KEYS
    if bad:
        raise InputError(
            f"{path}: [source]: unknown key {sorted(bad)[0]!r} (known: {', '.join(sorted(SOURCE_KEYS))})"
        )
    pools = data.get("pools")
    if not isinstance(pools, list) or not pools:
        raise InputError(f"{path}: no [[pools]] entries (each maps features to road, building, area or poi)")
    for i, entry in enumerate(pools):
        _check_entry(path, i, entry)
    return {"source": source, "pools": pools}


def _check_entry(path: Path, i: int, entry: Any) -> None:
    where = f"{path}: pools[{i}]"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be a table")
    bad = set(entry) - POOL_KEYS
    if bad:
        raise InputError(f"{where}: unknown key {sorted(bad)[0]!r} (known: {', '.join(sorted(POOL_KEYS))})")
    pool = entry.get("pool")
    if pool not in POOL_ATTRIBUTES:
        raise InputError(f"{where}: pool must be one of {', '.join(POOL_ATTRIBUTES)} (got {pool!r})")
    for key in ("layer", "where"):
        if key in entry and not isinstance(entry[key], str):
            raise InputError(f"{where}: {key} must be a string")
    if "where" in entry:
        check_where(entry["where"], f"{where}.where")
    for table in ("attributes", "values"):
        t = entry.get(table, {})
        if not isinstance(t, dict):
            raise InputError(f"{where}.{table}: must be a table")
        for name, value in t.items():
            if name not in POOL_ATTRIBUTES[pool]:
                raise InputError(
                    f"{where}.{table}: {name!r} is no {pool} attribute "
                    f"(known: {', '.join(POOL_ATTRIBUTES[pool])})"
                )
            if table == "attributes" and not isinstance(value, str):
                raise InputError(f"{where}.attributes.{name}: must name a source attribute (a string)")
            if table == "values" and not isinstance(value, (str, int, bool)):
                raise InputError(f"{where}.values.{name}: must be a string, integer or boolean")


def load_vector_pools(
    path: Path | str, mapping_path: Path | str, city: str | None = None, reading: Reading | None = None
) -> FeaturePools:
    """Read a vector file into feature pools through its mapping. `reading`: the file's reading
    process, started earlier (scoring.extract.reading.start_vector_reading)."""
    path, mapping_path = Path(path), Path(mapping_path)
    check_readable(path)
    mapping = load_mapping(mapping_path)
    source = mapping["source"]
    city = city or source.get("city") or path.name.split(".")[0].lower()
    if reading is not None and (reading.path, reading.mapping) == (path, mapping_path):
        records, stats = _received(reading)
    else:
        records, stats = read_mapped(path, mapping_path, mapping)
    if not records:
        raise InputError(f"{path}: the mapping {mapping_path.name} selects no features")

    from scoring.extract.osm import pools_from_records

    pools = pools_from_records(records, path, city, stats)
    pools.stats["mapping"] = {"file": mapping_path.name, "sha256": sha256_file(mapping_path)}
    pools.stats["attribution"] = source.get("attribution") or "see the source data's licence"
    return pools


def read_mapped(path: Path, mapping_path: Path, mapping: dict) -> tuple[list[Record], dict]:
    """The records the mapping selects, and the read's stats (GDAL's warnings among them)."""
    stats: dict = {}
    with gdal_warnings(stats) as failures:
        records = _read_records(path, mapping_path, mapping, stats, failures)
    return records, stats


def reader_main(path: str, mapping_path: str, send) -> None:
    """The reading process (scoring.extract.reading.send_messages): ("part", records)
    SENT_RECORDS at a time, then ("done", the read's stats)."""
    send_messages(_messages(Path(path), Path(mapping_path)), send)


def _messages(path: Path, mapping_path: Path) -> Iterator[tuple[str, Any]]:
    records, stats = read_mapped(path, mapping_path, load_mapping(mapping_path))
    for i in range(0, len(records), SENT_RECORDS):
        yield "part", records[i : i + SENT_RECORDS]
    yield "done", stats


def _received(reading: Reading) -> tuple[list[Record], dict]:
    """What `read_mapped` returns, from the reading process (its errors raised here)."""
    records: list[Record] = []
    with reading:
        for kind, payload in messages(reading.recv):
            if kind == "done":
                return records, payload
            records.extend(payload)
    raise RuntimeError("the reading process stopped without a word")  # (messages raises first)


def _open(path: Path):
    require_gdal()
    from osgeo import gdal

    gdal.UseExceptions()
    try:
        ds = gdal.OpenEx(str(path), gdal.OF_VECTOR | gdal.OF_READONLY)
    except RuntimeError as exc:
        raise InputError(f"{path}: not a vector file GDAL can read ({str(exc).strip()})") from None
    if ds is None or ds.GetLayerCount() == 0:
        raise InputError(f"{path}: not a vector file GDAL can read")
    return ds


def _read_records(
    path: Path, mapping_path: Path, mapping: dict, stats: dict, failures: list[str]
) -> list[tuple[str, dict, bytes]]:
    if require_gdal() == "pyogrio":
        from scoring.extract.vector_pyogrio import read_layers

        return read_layers(path, mapping_path, mapping, stats)
    ds = _open(path)
    try:
        return _read_layers(ds, path, mapping_path, mapping, stats, failures)
    except InputError as exc:
        # OGR layers and features must not outlive their data source (GDAL < 3.8 crashes at
        # collection): the error goes on without the frames that still hold them.
        raise exc.with_traceback(None) from None
    finally:
        ds = None


def _read_layers(
    ds, path: Path, mapping_path: Path, mapping: dict, stats: dict, failures: list[str]
) -> list[tuple[str, dict, bytes]]:
    from osgeo import osr

    layers = [ds.GetLayer(i).GetName() for i in range(ds.GetLayerCount())]
    wgs84 = osr.SpatialReference()
    wgs84.ImportFromEPSG(4326)
    wgs84.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
    fallback = _fallback_crs(mapping_path, mapping["source"].get("crs"))
    id_field = mapping["source"].get("id")
    records: list[tuple[str, dict, bytes]] = []
    skipped = 0
    for i, entry, name in mapped_layers(mapping_path, path, mapping, layers):
        layer = ds.GetLayerByName(name)
        fields = _field_names(layer)
        check_fields(mapping_path, i, entry, fields, id_field, name)
        srs = layer.GetSpatialRef() or fallback
        if srs is None:
            raise InputError(
                f'{mapping_path}: layer {name!r} declares no CRS: set crs in [source] (e.g. "EPSG:4326")'
            )
        srs.SetAxisMappingStrategy(osr.OAMS_TRADITIONAL_GIS_ORDER)
        to_wgs84 = osr.CoordinateTransformation(srs, wgs84)
        _filter(layer, entry.get("where"), f"{mapping_path}: pools[{i}].where")
        skipped += _layer_records(layer, entry, f"{path}: layer {name!r}", name, to_wgs84, id_field, records)
        if failures:  # the driver failed while reading (GPKG: a bad `where`, as SQL)
            what = "where" if "where" in entry else "layer"
            first = failures[0].splitlines()[0] if failures[0] else "read error"
            raise InputError(f"{mapping_path}: pools[{i}].{what}: GDAL cannot read layer {name!r}: {first}")
        layer.SetAttributeFilter(None)
        layer = None  # before the data source goes (OGR objects must not outlive it)
    stats["vector_skipped_geometry"] = skipped
    return records


def _layer_records(
    layer: Any,
    entry: dict,
    where: str,
    name: str,
    to_wgs84: Any,
    id_field: str | None,
    records: list[tuple[str, dict, bytes]],
) -> int:
    """Append the records of `layer`'s features (in WGS 84, one per part) to `records`; the
    number of features skipped (no transform to WGS 84, nothing the pool keeps)."""
    from osgeo import ogr

    skipped = 0
    # fields read by index: by name, the bindings search the field list in Python per call
    # (most of the time of reading a vector file); check_fields saw each name in the list
    names = _field_names(layer)
    at = {src: names.index(src) for src in [*entry.get("attributes", {}).values(), id_field] if src}
    layer.ResetReading()
    for feat in layer:
        g = feat.GetGeometryRef()
        if g is None:
            continue
        g = g.Clone()
        if g.Transform(to_wgs84) != ogr.OGRERR_NONE:
            skipped += 1
            continue
        ident = feat.GetField(at[id_field]) if id_field else feat.GetFID()
        base = f"{name}/{entry['pool']}/{ident}"
        props = props_of(entry, {src: feat.GetField(i) for src, i in at.items()})
        parts = parts_of(entry["pool"], _shapely(g, f"{where} feature {ident}"))
        if not parts:
            skipped += 1
        for k, part in enumerate(parts):
            uid = base if len(parts) == 1 else f"{base}#{k}"
            records.append((RECORD_LAYER[entry["pool"]], {**props, "_uid": uid}, shapely.to_wkb(part)))
    return skipped


def _shapely(g: Any, where: str) -> shapely.Geometry:
    """The OGR geometry as shapely's (see `from_wkb`)."""
    return from_wkb(bytes(g.ExportToWkb()), g.GetGeometryName().lower(), where)


def from_wkb(wkb: bytes, kind: str, where: str) -> shapely.Geometry:
    """A feature's geometry as shapely's; one GEOS cannot build (an unclosed ring, a one-point
    line) is an InputError naming the feature, since it says the file is broken, not the
    feature odd. `kind`: the geometry type's name, for the message."""
    try:
        return shapely.from_wkb(wkb)
    except (shapely.errors.GEOSException, ValueError) as exc:
        reason = str(exc).split(": ", 1)[-1].strip() or type(exc).__name__
        raise InputError(f"{where}: invalid {kind} geometry ({reason})") from None


# Outside its quoted strings, a `where` holds one expression: OGR stops reading at a `;` and
# would silently drop what follows (`kind = 'x'; DROP TABLE t`), and a comment hides the rest.
_WHERE_TOKENS = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|;|--|/\*|\x00|'|\"")


def check_where(where: str, context: str) -> None:
    """Refuse a `where` that is not one expression (a statement separator, a comment, an
    unterminated quote) with a one-line error naming the entry."""
    for m in _WHERE_TOKENS.finditer(where):
        tok = m.group()
        if len(tok) > 1 and tok[0] == tok[-1] and tok[0] in "'\"":
            continue  # a complete string literal or quoted name: anything goes inside
        what = {";": "a ';'", "--": "a '--' comment", "/*": "a '/*' comment", "\x00": "a NUL byte"}
        raise InputError(
            f"{context}: must be one OGR SQL expression, found {what.get(tok, 'an unterminated quote')} "
            f"at character {m.start() + 1}"
        )


def _filter(layer, where: str | None, context: str) -> None:
    """Set an OGR SQL attribute filter; a bad one is a one-line error (OGR only returns a code)."""
    from osgeo import gdal

    errors: list[str] = []
    gdal.PushErrorHandler(lambda _c, _n, msg: errors.append(str(msg)))
    try:
        rc = layer.SetAttributeFilter(where)
    except RuntimeError as exc:
        errors.append(str(exc))
        rc = -1
    finally:
        gdal.PopErrorHandler()
    if rc != 0:
        first = (errors[0].strip().splitlines() or ["invalid filter"])[0] if errors else "invalid filter"
        raise InputError(f"{context}: {where!r}: {first}")


def _fallback_crs(mapping_path: Path, text: str | None):
    if not text:
        return None
    from osgeo import osr

    srs = osr.SpatialReference()
    try:
        srs.SetFromUserInput(text)
    except RuntimeError:
        raise InputError(f"{mapping_path}: [source] crs: {text!r} is not a CRS GDAL knows") from None
    return srs


def _field_names(layer) -> list[str]:
    d = layer.GetLayerDefn()
    return [d.GetFieldDefn(j).GetName() for j in range(d.GetFieldCount())]


def mapped_layers(
    mapping_path: Path, path: Path, mapping: dict, layers: list[str]
) -> Iterator[tuple[int, dict, str]]:
    """(pool entry index, entry, layer name) for every layer each pool entry of ``mapping`` reads:
    its `layer`, or every layer of the file; InputError naming the entry for a layer not there."""
    for i, entry in enumerate(mapping["pools"]):
        names = [entry["layer"]] if "layer" in entry else layers
        if names[0] not in layers:
            raise InputError(
                f"{mapping_path}: pools[{i}].layer: no layer {names[0]!r} in {path.name} "
                f"(layers: {', '.join(layers)})"
            )
        for name in names:
            yield i, entry, name


def check_fields(mapping_path: Path, i: int, entry: dict, fields: list[str], id_field, layer: str) -> None:
    """A one-line InputError when the mapping names an attribute the layer lacks."""
    for name, src in entry.get("attributes", {}).items():
        if src not in fields:
            raise InputError(
                f"{mapping_path}: pools[{i}].attributes.{name}: layer {layer!r} has no attribute {src!r}"
            )
    if id_field and id_field not in fields:
        raise InputError(f"{mapping_path}: [source] id: layer {layer!r} has no attribute {id_field!r}")


def props_of(entry: dict, field: dict[str, Any]) -> dict:
    """OSM-style fields of one feature: defaults, fixed values, then mapped attributes (`field`:
    the source attributes' values)."""
    out: dict = dict(DEFAULTS[entry["pool"]])
    for name, value in entry.get("values", {}).items():
        out[name] = _text(value)
    for name, src in entry.get("attributes", {}).items():
        value = field[src]
        if value is not None and value != "":
            out[name] = _text(value)
    return out


def _text(value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def parts_of(pool: str, geom) -> list:
    """The single-part geometries a pool takes from one feature."""
    if geom is None or geom.is_empty:
        return []
    if pool == "poi":
        return [geom if geom.geom_type == "Point" else shapely.point_on_surface(geom)]
    if pool == "road":
        if geom.geom_type == "MultiLineString":
            geom = shapely.line_merge(geom)
        want = ("LineString",)
    else:
        want = ("Polygon",)
    parts = list(getattr(geom, "geoms", [geom]))
    return [p for p in parts if p.geom_type in want and not p.is_empty]
