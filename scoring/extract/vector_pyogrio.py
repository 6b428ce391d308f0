"""scoring.extract.vector's reading through pyogrio (scoring.extract.pyogrio_read): the same
records, mapping checks and one-line errors as its osgeo reader, for a pip-only install."""

from __future__ import annotations

import struct
from pathlib import Path

import shapely

from scoring.errors import InputError
from scoring.extract import pyogrio_read as pr
from scoring.extract.vector import (
    RECORD_LAYER,
    Record,
    check_fields,
    from_wkb,
    mapped_layers,
    parts_of,
    props_of,
)

# WKB geometry type codes (ISO and the 2.5D flag stripped) -> OGR's lower-case names
_WKB_KINDS = {
    1: "point",
    2: "linestring",
    3: "polygon",
    4: "multipoint",
    5: "multilinestring",
    6: "multipolygon",
    7: "geometrycollection",
}


def read_layers(path: Path, mapping_path: Path, mapping: dict, stats: dict) -> list[Record]:
    """The records the mapping selects (scoring.extract.vector._read_layers's, through pyogrio)."""
    layers = pr.layer_names(path)
    fallback = pr.check_crs(mapping_path, mapping["source"].get("crs"))
    id_field = mapping["source"].get("id")
    records: list[Record] = []
    skipped = 0
    for i, entry, name in mapped_layers(mapping_path, path, mapping, layers):
        fields, crs = pr.layer_info(path, name)
        check_fields(mapping_path, i, entry, fields, id_field, name)
        crs = crs or fallback
        if crs is None:
            raise InputError(
                f'{mapping_path}: layer {name!r} declares no CRS: set crs in [source] (e.g. "EPSG:4326")'
            )
        wanted = [s for s in dict.fromkeys([*entry.get("attributes", {}).values(), id_field]) if s]
        fids, wkbs, values = pr.read_layer(
            path, name, entry.get("where"), wanted, f"{mapping_path}: pools[{i}]"
        )
        skipped += _layer_records(
            (fids, wkbs, values), entry, (f"{path}: layer {name!r}", name), crs, id_field, records
        )
    stats["vector_skipped_geometry"] = skipped
    return records


def _layer_records(
    read: tuple, entry: dict, names: tuple[str, str], crs: str, id_field: str | None, records: list[Record]
) -> int:
    """Append the records of one layer's features (in WGS 84, one per part) to `records`; the
    number of features skipped (no transform to WGS 84, nothing the pool keeps)."""
    fids, wkbs, values = read
    where, name = names
    present = [k for k, w in enumerate(wkbs) if w is not None]
    idents = [values[id_field][k] if id_field else int(fids[k]) for k in present]
    geoms = [
        from_wkb(bytes(wkbs[k]), _kind(bytes(wkbs[k])), f"{where} feature {ident}")
        for k, ident in zip(present, idents, strict=True)
    ]
    projected, failed = pr.to_wgs84(geoms, crs)
    skipped = 0
    for k, ident, geom, bad in zip(present, idents, projected, failed, strict=True):
        if bad:
            skipped += 1
            continue
        base = f"{name}/{entry['pool']}/{ident}"
        props = props_of(entry, {src: column[k] for src, column in values.items()})
        parts = parts_of(entry["pool"], geom)
        if not parts:
            skipped += 1
        for j, part in enumerate(parts):
            uid = base if len(parts) == 1 else f"{base}#{j}"
            records.append((RECORD_LAYER[entry["pool"]], {**props, "_uid": uid}, shapely.to_wkb(part)))
    return skipped


def _kind(wkb: bytes) -> str:
    """The geometry type's name from a WKB header (for the message about a geometry GEOS refuses)."""
    if len(wkb) < 5:
        return "unknown"
    code = struct.unpack("<I" if wkb[0] == 1 else ">I", wkb[1:5])[0] & 0xFFFF
    return _WKB_KINDS.get(code % 1000, "unknown")
