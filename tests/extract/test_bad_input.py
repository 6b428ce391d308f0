"""Damaged input files given to the real `spatialgap build` (issue 27, items 7, 12, 13): each gets
one line on stderr naming the file and the place, exit code 2, and leaves nothing behind (no
benchmark directory, no partial directory beside it). Files are real GeoJSON read by GDAL's OGR,
and a real .osm.pbf cut at a block boundary."""

from __future__ import annotations

import copy
import json
import struct
import subprocess
from pathlib import Path

import pytest

from scoring.extract.osm import default_osm_path
from tests.conftest import VENV_BIN

LON0, LAT0 = 24.94, 60.17  # central Helsinki
M_LAT = 1 / 111_320  # degrees of latitude per metre
M_LON = 1 / 55_400  # degrees of longitude per metre at 60° N

MAPPING = """
[[pools]]
pool = "road"
where = "kind = 'road'"
[[pools]]
pool = "building"
where = "kind = 'building'"
[[pools]]
pool = "poi"
where = "kind = 'poi'"
"""


def _xy(x_m: float, y_m: float) -> list[float]:
    return [LON0 + x_m * M_LON, LAT0 + y_m * M_LAT]


def _feature(kind: str, geometry: dict) -> dict:
    return {"type": "Feature", "properties": {"kind": kind}, "geometry": geometry}


def _town() -> dict:
    """A 6 × 6 block grid: 14 streets of 300 m, 36 buildings of 15 × 15 m, 12 POIs."""
    feats = []
    for i in range(7):
        for ends in ((_xy(i * 50, 0), _xy(i * 50, 300)), (_xy(0, i * 50), _xy(300, i * 50))):
            feats.append(_feature("road", {"type": "LineString", "coordinates": list(ends)}))
    for i in range(6):
        for j in range(6):
            x, y = i * 50 + 15, j * 50 + 15
            ring = [_xy(x, y), _xy(x + 15, y), _xy(x + 15, y + 15), _xy(x, y + 15), _xy(x, y)]
            feats.append(_feature("building", {"type": "Polygon", "coordinates": [ring]}))
    for k in range(12):
        feats.append(_feature("poi", {"type": "Point", "coordinates": _xy(10 + k * 23, 40)}))
    return {"type": "FeatureCollection", "features": feats}


def _with(extra: dict | None = None, crs: str | None = None) -> dict:
    fc = copy.deepcopy(_town())
    if extra is not None:
        fc["features"].append(extra)
    if crs is not None:
        fc["crs"] = {"type": "name", "properties": {"name": crs}}
    return fc


def _in_metres() -> dict:
    """The town in metres (EPSG:3067 eastings / northings) but declared as longitude / latitude."""
    fc = _town()
    for f in fc["features"]:
        g = f["geometry"]

        def metres(p):
            return [385_000 + (p[0] - LON0) / M_LON, 6_672_000 + (p[1] - LAT0) / M_LAT]

        if g["type"] == "Point":
            g["coordinates"] = metres(g["coordinates"])
        elif g["type"] == "LineString":
            g["coordinates"] = [metres(p) for p in g["coordinates"]]
        else:
            g["coordinates"] = [[metres(p) for p in r] for r in g["coordinates"]]
    fc["crs"] = {"type": "name", "properties": {"name": "urn:ogc:def:crs:OGC:1.3:CRS84"}}
    return fc


def _build(tmp_path: Path, *source: str, mapping: str | None = MAPPING) -> subprocess.CompletedProcess:
    args = [str(VENV_BIN / "spatialgap"), "build", *source, "--out", str(tmp_path / "out" / "bench")]
    if mapping is not None:
        (tmp_path / "mapping.toml").write_text(mapping)
        args += ["--mapping", str(tmp_path / "mapping.toml")]
    args += ["--relations", "M01", "--qa", "1", "--edit", "0", "--no-render", "--no-progress", "--jobs", "1"]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def _assert_one_line_error(p: subprocess.CompletedProcess, tmp_path: Path, *needles: str) -> str:
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("spatialgap build: error: "), p.stderr
    assert "Traceback" not in p.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == [], "half-written output left behind"
    return lines[0]


BAD_GEOJSON = {
    "unclosed ring": (
        _feature(
            "building",
            {"type": "Polygon", "coordinates": [[_xy(0, 0), _xy(20, 0), _xy(20, 20), _xy(0, 20)]]},
        ),
        ("feature 62", "invalid polygon geometry", "closed"),
    ),
    "1-point line": (
        _feature("road", {"type": "LineString", "coordinates": [_xy(5, 5)]}),
        ("feature 62", "invalid linestring geometry"),
    ),
    "latitude 91": (
        _feature("poi", {"type": "Point", "coordinates": [LON0, 91.0]}),
        ("poi/62", "out of range for longitude / latitude"),
    ),
    "1e300": (
        _feature("poi", {"type": "Point", "coordinates": [1e300, LAT0]}),
        ("poi/62", "out of range", "1e+300"),
    ),
}


@pytest.mark.parametrize("case", list(BAD_GEOJSON))
def test_a_broken_geojson_feature_is_one_line_naming_file_and_feature(tmp_path, case):
    extra, needles = BAD_GEOJSON[case]
    src = tmp_path / "town.geojson"
    src.write_text(json.dumps(_with(extra)))
    p = _build(tmp_path, "--vector", str(src))
    _assert_one_line_error(p, tmp_path, str(src), *needles)


def test_a_wrong_declared_crs_is_refused_in_both_directions(tmp_path):
    # degrees declared as UTM metres: the whole town inside a few centimetres
    src = tmp_path / "town.geojson"
    src.write_text(json.dumps(_with(crs="urn:ogc:def:crs:EPSG::32635")))
    p = _build(tmp_path, "--vector", str(src))
    line = _assert_one_line_error(p, tmp_path, str(src), "wrong declared CRS")
    assert "features lie within" in line
    # metres declared as degrees: latitudes in the millions
    src.write_text(json.dumps(_in_metres()))
    p = _build(tmp_path, "--vector", str(src))
    _assert_one_line_error(p, tmp_path, "out of range", "wrong declared CRS")


def test_the_intact_town_builds(tmp_path):
    # the control: the same file without the damage builds, so the errors above are the damage's
    src = tmp_path / "town.geojson"
    src.write_text(json.dumps(_town()))
    p = _build(tmp_path, "--vector", str(src))
    assert p.returncode == 0, p.stderr
    manifest = json.loads((tmp_path / "out" / "bench" / "manifest.json").read_text())
    answerable_qa = manifest["counts"]["qa"] - manifest.get("unanswerable", {}).get("qa", 0)
    assert answerable_qa == 1 and manifest["source"]["pools"]["building"] == 36


@pytest.mark.parametrize(
    "where,found",
    [
        ("kind = 'road'; DROP TABLE roads", "a ';' at character 14"),
        ("kind = 'road' -- and the rest", "a '--' comment"),
        ("kind = 'road' /* x */ OR 1 = 1", "a '/*' comment"),
        ("kind = 'road", "an unterminated quote"),
    ],
)
def test_a_where_that_is_not_one_expression_is_refused(tmp_path, where, found):
    src = tmp_path / "town.geojson"
    src.write_text(json.dumps(_town()))
    mapping = MAPPING.replace("where = \"kind = 'road'\"", f"where = {json.dumps(where)}", 1)
    p = _build(tmp_path, "--vector", str(src), mapping=mapping)
    _assert_one_line_error(p, tmp_path, "mapping.toml: pools[0].where: must be one OGR SQL expression", found)


def test_a_semicolon_inside_a_string_literal_is_one_expression(tmp_path):
    src = tmp_path / "town.geojson"
    src.write_text(json.dumps(_town()))
    mapping = MAPPING.replace("where = \"kind = 'road'\"", "where = \"kind IN ('road', 'a;b')\"", 1)
    p = _build(tmp_path, "--vector", str(src), mapping=mapping)
    assert p.returncode == 0, p.stderr


def _blob_ends(data: bytes) -> list[int]:
    """Offsets where each block (BlobHeader + Blob) of an .osm.pbf ends."""
    ends, off = [], 0
    while off < len(data):
        (hlen,) = struct.unpack(">I", data[off : off + 4])
        header, i, size = data[off + 4 : off + 4 + hlen], 0, None
        while i < len(header):  # BlobHeader: field 3 (varint) is the blob's size
            key = header[i]
            i += 1
            if key & 7 == 2:
                n = header[i]
                i += 1 + n
            else:
                v = shift = 0
                while True:
                    b = header[i]
                    i += 1
                    v |= (b & 0x7F) << shift
                    shift += 7
                    if not b & 0x80:
                        break
                if key >> 3 == 3:
                    size = v
        assert size is not None
        off += 4 + hlen + size
        ends.append(off)
    return ends


def test_a_pbf_cut_at_a_block_boundary_is_an_error_that_says_why(tmp_path):
    data = default_osm_path().read_bytes()
    ends = _blob_ends(data)
    assert ends[-1] == len(data) and len(ends) >= 3
    cut = tmp_path / "helsinki_cut.osm.pbf"
    cut.write_bytes(data[: ends[1]])  # the header block and the first block of nodes
    p = _build(tmp_path, "--osm", str(cut), mapping=None)
    _assert_one_line_error(p, tmp_path, f"{cut}: no usable roads", "no lines or polygons", "cut short")
