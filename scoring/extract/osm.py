"""Stage 1 — OSM extract -> feature pools.

Reads an `.osm.pbf` / `.osm` file with GDAL's OSM driver (our own `resources/osmconf.ini`),
projects every feature to a city-specific metric CRS (the WGS 84 / UTM zone that contains the
extract's centre; +y is grid north) and snaps coordinates to a 1 cm grid, so that what a model
reads in a scene is exactly what the oracle computed on. Invalid OSM geometries are repaired
(`make_valid`) or dropped, never passed on; the counts are reported.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

from scoring.errors import InputError
from scoring.extract import assemble
from scoring.extract.assemble import MIN_FEATURES, NON_ROAD_HIGHWAYS, POI_KEYS, PoolAssembler
from scoring.extract.pools import FeaturePools
from scoring.extract.prepare import collect, prepare_chunk
from scoring.extract.reading import (
    Reading,
    check_readable,
    default_osm_path,
    gdal_warnings,
    messages,
    require_gdal,
    send_messages,
    start_reading,
)
from scoring.paths import RESOURCES_DIR

log = logging.getLogger(__name__)

__all__ = [
    "MIN_FEATURES",
    "NON_ROAD_HIGHWAYS",
    "POI_KEYS",
    "check_readable",
    "default_osm_path",
    "gdal_warnings",
    "load_pools",
    "pools_from_records",
    "require_gdal",
]
# records handed to the assembler at a time (their fields and WKB are then dropped); small enough
# that a city's extract makes several chunks, prepared on the workers while the next are read
READ_CHUNK = 4000


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


def _read_assembled(
    path: Path, stats: dict, executor: Any = None, reading: Reading | None = None
) -> tuple[PoolAssembler, list | None]:
    """The extract read once, streamed into a PoolAssembler chunk by chunk (interleaved
    reading), and, on an executor of several workers, each chunk's kept records prepared on it
    while the next chunks are read (scoring.extract.prepare). Unsorted node ids (e.g. JOSM
    exports) need OSM_USE_CUSTOM_INDEXING=NO: we retry with it, from the start, afresh.
    `reading`: a reading process of `path` started earlier (scoring.extract.reading), taken
    over for the first attempt."""
    require_gdal()
    for custom_indexing in ("YES", "NO"):
        asm = PoolAssembler(path)
        try:
            if executor is None or executor.workers < 2:
                # Read here: nothing to overlap with, and inside QGIS (jobs=1) no process may be
                # started (sys.executable is the qgis binary; a fork would inherit Qt's threads).
                for _ in _jobs_in_process(path, custom_indexing, stats, asm):
                    pass  # (prepared in the city's zone once it is known: `finish`)
                return asm, None
            ours = reading is not None and (reading.path, reading.custom_indexing) == (path, custom_indexing)
            early = reading if ours else None
            jobs = _received(early or start_reading(path, custom_indexing), stats, asm)
            done = executor.stream(prepare_chunk, jobs, desc="extract")
            return asm, [collect(asm, c, part) for c, part in enumerate(done)]
        except RuntimeError as exc:
            if "Non increasing node id" in str(exc) and custom_indexing == "YES":
                log.info("unsorted node ids in %s: retrying with OSM_USE_CUSTOM_INDEXING=NO", path)
                continue
            raise InputError(f"{path}: cannot read OSM data ({str(exc).strip()})") from None
    raise InputError(f"{path}: cannot read OSM data")


def _jobs_in_process(path: Path, custom_indexing: str, stats: dict, asm: PoolAssembler) -> Iterator:
    """What `_received` yields, read in this process (the reading process's messages)."""
    parts = _read_parts(path, custom_indexing)
    try:
        yield from _taken(parts, stats, asm)
    finally:
        parts.close()  # GDAL's indexing option reset now, not when the generator is collected


def _received(reading: Reading, stats: dict, asm: PoolAssembler) -> Iterator:
    """What `_jobs_in_process` yields, read by a child process (scoring.extract.reading: it reads
    and assembles, issue 33 item 3), so the executor's workers prepare each chunk while the next
    are read. The reader's GDAL warning counts, what it read and its errors come back with it."""
    with reading:
        yield from _taken(messages(reading.recv), stats, asm)


def _taken(messages: Iterator[tuple[str, Any]], stats: dict, asm: PoolAssembler) -> Iterator:
    """Each chunk's prepare job, its kept records handed to `asm`; at the end, what was read and
    the GDAL warning counts."""
    for kind, payload in messages:
        if kind == "part":
            yield asm.take(payload)
        else:
            stats["gdal_warnings"], summary = payload
            asm.conclude(summary)
            return


def _read_parts(path: Path, custom_indexing: str) -> Generator[tuple[str, Any], None, None]:
    """The extract read and assembled: ("part", each chunk's kept records), then ("done",
    (warning counts, what was read)); a reading error raises."""
    stats: dict = {}
    asm = PoolAssembler(path)
    with gdal_warnings(stats):
        for chunk in _read_records(path, custom_indexing):
            asm.add(chunk)
            if asm.chunks:
                yield "part", asm.part()
    yield "done", (stats["gdal_warnings"], asm.summary())


def reader_main(path: str, custom_indexing: str, send) -> None:
    """The reading process: `_read_parts`'s messages (scoring.extract.reading.send_messages)."""
    send_messages(_read_parts(Path(path), custom_indexing), send)


def _read_raw(path: Path, stats: dict | None = None) -> list[tuple[str, dict, bytes]]:
    """All (layer, fields, WKB in WGS84) records at once (for tests and tools; the build streams)."""
    require_gdal()
    for custom_indexing in ("YES", "NO"):
        try:
            with gdal_warnings(stats if stats is not None else {}):
                return [r for chunk in _read_records(path, custom_indexing) for r in chunk]
        except RuntimeError as exc:
            if "Non increasing node id" in str(exc) and custom_indexing == "YES":
                continue
            raise InputError(f"{path}: cannot read OSM data ({str(exc).strip()})") from None
    raise InputError(f"{path}: cannot read OSM data")


def _field_list(layer) -> list[tuple[int, str, bool]]:
    """(index, name, is text) of each of the layer's fields but `other_tags` (GDAL's catch-all
    of every other tag: no pool reads it, and it is the longest value of many features)."""
    from osgeo import ogr

    defn = layer.GetLayerDefn()
    fields = [defn.GetFieldDefn(i) for i in range(defn.GetFieldCount())]
    return [
        (i, f.GetName(), f.GetType() == ogr.OFTString)
        for i, f in enumerate(fields)
        if f.GetName() != "other_tags"
    ]


def _read_records(
    path: Path, custom_indexing: str = "YES", chunk: int = READ_CHUNK
) -> Iterator[list[tuple[str, dict, bytes]]]:
    """(layer, fields, WKB) records of the three layers the pools draw from, `chunk` at a time,
    through pyogrio or osgeo (scoring.extract.reading.reader: the same records, other order)."""
    if require_gdal() == "pyogrio":
        from scoring.extract.pyogrio_read import osm_records

        yield from osm_records(path, custom_indexing, chunk)
        return
    from osgeo import gdal

    gdal.SetConfigOption("OSM_USE_CUSTOM_INDEXING", custom_indexing)
    try:
        yield from _osgeo_records(path, chunk)
    finally:
        gdal.SetConfigOption("OSM_USE_CUSTOM_INDEXING", None)


def _osgeo_records(path: Path, chunk: int) -> Iterator[list[tuple[str, dict, bytes]]]:
    records: list[tuple[str, dict, bytes]] = []
    ds = _open_osm(path)
    field_names: dict[str, list[tuple[int, str, bool]]] = {}
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
            field_names[name] = _field_list(layer)
        # what feat.items() gives, read by index: items() looks every field up by name, and
        # that search was most of the time of reading an extract. A text field's value read as
        # text directly (GetField asks its type first; unset or null reads as "", skipped alike)
        fields: dict = {}
        for i, k, text in field_names[name]:
            if text:
                v = feat.GetFieldAsString(i)
                if v:
                    fields.setdefault(k, v)
            elif feat.IsFieldSetAndNotNull(i):
                v = feat.GetField(i)
                if v not in (None, ""):
                    fields.setdefault(k, v)
        records.append((name, fields, bytes(g.ExportToWkb())))
        if len(records) >= chunk:
            yield records
            records = []
    ds = None
    if records:
        yield records


def load_pools(
    path: Path | str | None = None, city: str | None = None, executor=None, reading: Reading | None = None
) -> FeaturePools:
    """Read an OSM extract into feature pools in the city's UTM CRS (streamed: see
    scoring.extract.assemble). `reading`: its reading process, started earlier."""
    path = Path(path) if path is not None else default_osm_path()
    check_readable(path)
    city = city or path.name.split(".")[0].lower()
    stats: dict = {}
    asm, prepared = _read_assembled(path, stats, executor, reading)
    if not asm.read:
        raise InputError(f"{path}: the extract holds no OSM features")
    return asm.finish(path, city, stats, executor, prepared)


def pools_from_records(
    raw: list[tuple[str, dict, bytes]], path: Path, city: str, stats: dict
) -> FeaturePools:
    """Feature pools from (layer, OSM-style fields, WKB in WGS 84) records: the OSM reader's
    records, or any vector file's through its mapping (scoring.extract.vector). A record's `_uid`
    field, when set, names the feature instead of its OSM type and id."""
    return assemble.pools_from_records([raw], path, city, stats)
