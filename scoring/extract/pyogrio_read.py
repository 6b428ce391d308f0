"""The readers of scoring.extract.osm and scoring.extract.vector through pyogrio, whose wheels carry
GDAL with the OSM driver: what `pip install spatialgap` reads with where no `osgeo` bindings exist.

The records are those of the `osgeo` readers (layer, OSM-style fields, WKB in WGS 84), so the
pools are the same whichever reader made them (tests/extract/test_readers_agree.py, every shared
city). Two differences do not reach the pools: OSM layers come one after the other (pyogrio reads
a layer at a time) rather than interleaved, and a closed way tagged only with a `key=value` of
osmconf.ini's closed_ways_are_polygons (`public_transport=platform`) is a polygon on GDAL >= 3.7
and a line on 3.6; no pool keeps either. A vector layer in another CRS than WGS 84 is projected
with pyproj (GDAL's OGR would use its own PROJ: the same operation, last-digit differences at most).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from scoring.errors import InputError
from scoring.extract.reading import note_warning
from scoring.paths import RESOURCES_DIR

OSM_LAYERS = ("points", "lines", "multipolygons")
Record = tuple[str, dict, bytes]


@contextmanager
def _warnings_noted() -> Iterator[None]:
    """pyogrio turns GDAL's warnings into Python RuntimeWarnings: counted as the osgeo reader
    counts GDAL's (scoring.extract.reading.gdal_warnings), not printed."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RuntimeWarning)
        yield
    for w in caught:
        if issubclass(w.category, RuntimeWarning):
            note_warning(str(w.message))


def _config(options: dict[str, str | None]) -> None:
    import pyogrio

    pyogrio.set_gdal_config_options(options)


def osm_records(path: Path, custom_indexing: str, chunk: int) -> Iterator[list[Record]]:
    """(layer, fields, WKB) records of the three layers the pools draw from, `chunk` at a time; a
    reading error raises RuntimeError with GDAL's message (the caller retries unsorted ids)."""
    _config(
        {"OSM_CONFIG_FILE": str(RESOURCES_DIR / "osmconf.ini"), "OSM_USE_CUSTOM_INDEXING": custom_indexing}
    )
    try:
        records: list[Record] = []
        for layer in OSM_LAYERS:
            for names, geoms, columns in _checked(path, layer):
                # other_tags: GDAL's catch-all of every other tag, read by no pool (as osgeo's reader)
                kept = [(k, c) for k, c in zip(names, columns, strict=True) if k != "other_tags"]
                for i, g in enumerate(geoms):
                    if g is None:
                        continue
                    fields: dict = {}
                    for k, col in kept:
                        v = col[i]
                        if v is not None and v != "":
                            fields[k] = v
                    records.append((layer, fields, bytes(g)))
                    if len(records) >= chunk:
                        yield records
                        records = []
        if records:
            yield records
    finally:
        _config({"OSM_USE_CUSTOM_INDEXING": None})


def _checked(path: Path, layer: str) -> Iterator[tuple[list[str], list, list]]:
    """`_batches`, GDAL's errors as the osgeo reader's: a file that is no OSM data an InputError,
    the rest RuntimeError (unsorted node ids among them: retried by the caller)."""
    try:
        for names, geoms, columns in _batches(path, layer):
            if layer == "points" and "osm_id" not in names:
                raise InputError(f"{path}: not an OpenStreetMap .osm/.osm.pbf file")
            yield names, geoms, columns
    except InputError:
        raise
    except Exception as exc:  # noqa: BLE001 (pyogrio's errors carry GDAL's message)
        if layer == "points" and "Non increasing node id" not in str(exc):
            # (GDAL opens any format here: the OSM driver's layers say it read OSM)
            raise InputError(f"{path}: not an OpenStreetMap .osm/.osm.pbf file ({_first(exc)})") from None
        raise RuntimeError(_first(exc)) from None


def _batches(path: Path, layer: str) -> Iterator[tuple[list[str], list, list]]:
    """A layer's (field names, WKB geometries, columns), read whole. Not through pyogrio's Arrow
    stream, which would bound memory by a batch: there GDAL's OSM errors (unsorted node ids) end
    the stream early without an error, and a layer would be cut short silently."""
    from pyogrio.raw import read

    with _warnings_noted():
        meta, _, geoms, columns = read(str(path), layer=layer)
    yield list(meta["fields"]), list(geoms), [list(c) for c in columns]


def _first(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def layer_names(path: Path) -> list[str]:
    """The file's layers; a file GDAL cannot read is a one-line InputError."""
    import pyogrio

    try:
        return [str(n) for n in pyogrio.list_layers(str(path))[:, 0]]
    except Exception as exc:  # noqa: BLE001 (pyogrio's errors: not a vector file)
        raise InputError(f"{path}: not a vector file GDAL can read ({_first(exc)})") from None


def layer_info(path: Path, name: str) -> tuple[list[str], str | None]:
    """A layer's field names and CRS (None when it declares none)."""
    import pyogrio

    info = pyogrio.read_info(str(path), layer=name)
    return [str(f) for f in info["fields"]], info["crs"]


def check_crs(mapping_path: Path, text: str | None) -> str | None:
    """The mapping's fallback CRS, checked as the osgeo reader checks it."""
    if not text:
        return None
    from pyproj import CRS
    from pyproj.exceptions import CRSError

    try:
        CRS.from_user_input(text)
    except CRSError:
        raise InputError(f"{mapping_path}: [source] crs: {text!r} is not a CRS GDAL knows") from None
    return text


def read_layer(path: Path, name: str, where: str | None, columns: list[str], context: str) -> tuple:
    """(fids, WKB geometries, {field: values}) of a layer's features passing `where`; a filter or
    read GDAL refuses is a one-line InputError (`context`: the mapping entry)."""
    from pyogrio.raw import read

    try:
        with _warnings_noted():
            meta, fids, geoms, cols = read(
                str(path), layer=name, where=where, columns=columns, return_fids=True
            )
    except Exception as exc:  # noqa: BLE001 (pyogrio's errors carry GDAL's message)
        if where:
            raise InputError(f"{context}.where: {where!r}: {_first(exc)}") from None
        raise InputError(f"{context}.layer: GDAL cannot read layer {name!r}: {_first(exc)}") from None
    values = {
        k: _python_values(c, t, s)
        for k, c, t, s in zip(meta["fields"], cols, meta["ogr_types"], meta["ogr_subtypes"], strict=True)
    }
    return fids, geoms, values


def _python_values(col: np.ndarray, ogr_type: str, subtype: str) -> list:
    """A column as osgeo's GetField gives it: None for null (pyogrio reads an integer or boolean
    column with nulls as floats with NaN), bool for booleans, int for integers, lists for lists."""
    out = col.tolist()
    if subtype == "OFSTBoolean":
        return [None if v is None or (isinstance(v, float) and math.isnan(v)) else bool(v) for v in out]
    if ogr_type in ("OFTInteger", "OFTInteger64"):
        return [None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v) for v in out]
    if ogr_type == "OFTReal":
        return [None if v is None or math.isnan(v) else v for v in out]
    return [v.tolist() if isinstance(v, np.ndarray) else v for v in out]


def to_wgs84(geoms: list, crs: str) -> tuple[list, list[bool]]:
    """Shapely geometries in WGS 84 (lon, lat), and which could not be projected (OGR's failed
    Transform: skipped as the osgeo reader skips them)."""
    import shapely
    from pyproj import CRS, Transformer

    src = CRS.from_user_input(crs)
    if src.equals(CRS.from_epsg(4326), ignore_axis_order=True):
        return geoms, [False] * len(geoms)
    transformer = Transformer.from_crs(src, 4326, always_xy=True)
    out, failed = [], []
    for g in geoms:
        moved = shapely.transform(g, lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])))
        bad = not bool(np.isfinite(shapely.get_coordinates(moved)).all())
        out.append(None if bad else moved)
        failed.append(bad)
    return out, failed


def version() -> str:
    """The GDAL inside pyogrio's wheel."""
    import pyogrio

    return str(pyogrio.__gdal_version_string__)
