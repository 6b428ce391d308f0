"""`spatialgap build --vector FILE --mapping mapping.toml`: a GeoPackage made here with GDAL
from a piece of the embedded Helsinki extract, the shipped Wuhan mapping, and one-line errors
for bad mapping files."""

import json
import subprocess
from pathlib import Path

import pytest
import shapely
from osgeo import ogr, osr

from scoring.build.builder import build_benchmark
from scoring.errors import InputError
from scoring.extract.osm import load_pools
from scoring.extract.reading import start_vector_reading
from scoring.extract.vector import load_mapping, load_vector_pools
from scoring.paths import RESOURCES_DIR
from tests.conftest import REPO, VENV_BIN, shared_path
from tests.reader_child import pools_in_child

MAPPING = """
[source]
city = "kaupunki"
id = "tunnus"

[[pools]]
pool = "road"
layer = "tiet"
where = "luokka <> 'rata'"
[pools.attributes]
highway = "luokka"
name = "nimi"
layer = "taso"
bridge = "silta"

[[pools]]
pool = "building"
layer = "rakennukset"

[[pools]]
pool = "area"
layer = "alueet"
[pools.attributes]
leisure = "tyyppi"

[[pools]]
pool = "poi"
layer = "palvelut"
[pools.attributes]
amenity = "tyyppi"
name = "nimi"
"""


def _write_gpkg(path: Path) -> dict[str, int]:
    """A GeoPackage in the city's UTM CRS (EPSG:32635), Finnish field names, from the features
    of the Helsinki extract inside a 900 m square; plus one railway the mapping filters out."""
    pools = load_pools(None)
    x0, y0, x1, y1 = pools.extent()
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    box = shapely.box(cx - 450, cy - 450, cx + 450, cy + 450)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(pools.crs.epsg)
    ds = ogr.GetDriverByName("GPKG").CreateDataSource(str(path))
    spec = {
        "tiet": (
            "road",
            ogr.wkbLineString,
            [
                ("luokka", ogr.OFTString),
                ("nimi", ogr.OFTString),
                ("taso", ogr.OFTInteger),
                ("silta", ogr.OFTInteger),
            ],
        ),
        "rakennukset": ("building", ogr.wkbPolygon, []),
        "alueet": ("area", ogr.wkbPolygon, [("tyyppi", ogr.OFTString)]),
        "palvelut": ("poi", ogr.wkbPoint, [("tyyppi", ogr.OFTString), ("nimi", ogr.OFTString)]),
    }
    counts = {}
    for name, (kind, gtype, fields) in spec.items():
        layer = ds.CreateLayer(name, srs, gtype)
        layer.CreateField(ogr.FieldDefn("tunnus", ogr.OFTInteger64))
        for fname, ftype in fields:
            layer.CreateField(ogr.FieldDefn(fname, ftype))
        n = 0
        for f in pools.features[kind]:
            if not f.geom.intersects(box):
                continue
            feat = ogr.Feature(layer.GetLayerDefn())
            feat.SetField("tunnus", int(f.uid.split("/")[1]))
            if kind == "road":
                feat.SetField("luokka", f.props["highway"])
                feat.SetField("silta", 1 if f.props.get("bridge") not in (None, "no") else 0)
                if "layer" in f.props:
                    feat.SetField("taso", int(f.props["layer"]))
            if kind in ("area", "poi"):
                feat.SetField("tyyppi", f.props.get("leisure") or f.props.get("amenity") or "park")
            if "name" in f.props and kind in ("road", "poi"):
                feat.SetField("nimi", f.props["name"])
            feat.SetGeometry(ogr.CreateGeometryFromWkb(shapely.to_wkb(f.geom)))
            layer.CreateFeature(feat)
            n += 1
        counts[kind] = n
    rail = ogr.Feature(ds.GetLayerByName("tiet").GetLayerDefn())
    rail.SetField("tunnus", 1)
    rail.SetField("luokka", "rata")
    rail.SetGeometry(ogr.CreateGeometryFromWkt(f"LINESTRING ({cx - 400} {cy}, {cx + 400} {cy + 5})"))
    ds.GetLayerByName("tiet").CreateFeature(rail)
    # OGR objects die before their data source (a layer outliving it crashes at collection)
    del feat, rail, layer
    ds = None
    return counts


@pytest.fixture(scope="module")
def gpkg(tmp_path_factory):
    d = tmp_path_factory.mktemp("vector")
    counts = _write_gpkg(d / "kaupunki.gpkg")
    (d / "mapping.toml").write_text(MAPPING)
    return d / "kaupunki.gpkg", d / "mapping.toml", counts


def test_geopackage_pools_follow_the_mapping(gpkg):
    path, mapping, counts = gpkg
    pools = load_vector_pools(path, mapping)
    assert pools.city == "kaupunki" and pools.crs.epsg == 32635
    got = pools.counts()
    assert 0 < got["road"] <= counts["road"] and got["building"] > 0 and got["poi"] == counts["poi"]
    assert all(f.uid.startswith("tiet/road/") for f in pools.features["road"])
    assert "tiet/road/1" not in {f.uid for f in pools.features["road"]}  # the railway: filtered out
    assert all(f.props["highway"] for f in pools.features["road"])
    # an integer flag arrives as its text; 0 counts as "no" in vertical_level (documented)
    assert {f.props.get("bridge") for f in pools.features["road"]} <= {"0", "1"}
    assert pools.stats["mapping"]["file"] == "mapping.toml"


def test_geopackage_builds(gpkg, tmp_path):
    path, mapping, _ = gpkg
    codes = ["M01", "T02", "D01", "O08", "M18"]
    m = build_benchmark(
        None,
        tmp_path / "b",
        n_qa=2,
        n_edit=1,
        relations=codes,
        jobs=1,
        progress=False,
        vector=str(path),
        mapping=str(mapping),
    )
    assert m["city"] == "kaupunki" and m["source"]["file"] == "kaupunki.gpkg"
    assert m["counts"]["qa"] >= 8 and m["counts"]["edit"] >= 4
    qa = [json.loads(x) for x in (tmp_path / "b" / "qa.jsonl").read_text().splitlines()]
    assert all(
        f["osm"].split("/")[0] in {"tiet", "rakennukset", "alueet", "palvelut"}
        for i in qa
        for f in i["provenance"]["features"].values()
    )


@pytest.mark.shared
def test_wuhan_builds_from_its_geojson_with_the_shipped_mapping(tmp_path):
    src = shared_path("osm", "wuhan_guanggu_tilezen.geojson")
    mapping = RESOURCES_DIR / "mappings" / "wuhan_guanggu_tilezen.toml"
    m = build_benchmark(
        None, tmp_path / "w", n_qa=2, n_edit=1, jobs=2, progress=False, vector=str(src), mapping=str(mapping)
    )
    assert m["city"] == "wuhan_guanggu" and m["source"]["pools"]["road"] > 100
    assert m["source"]["pools"]["building"] > 100
    built = {r["relation"] for r in m["build_report"] if r["built"]}
    assert {"M01", "D01", "O08", "O06"} <= built
    # no land use and no POIs in this tile extract: said as such
    for s in m["shortfalls"]:
        if s["built"] == 0:
            assert "the extract has no" in s["shortfall"], s  # said as an absent class


BAD = [
    ("not toml", "[source\n", "not valid TOML"),
    ("no pools", "[source]\ncity = 'x'\n", "no [[pools]] entries"),
    ("bad pool", "[[pools]]\npool = 'river'\n", "pool must be one of"),
    ("bad key", "[[pools]]\npool = 'road'\nfilter = 'x'\n", "unknown key 'filter'"),
    (
        "bad attr",
        "[[pools]]\npool = 'road'\n[pools.attributes]\nheight = 'h'\n",
        "'height' is no road attribute",
    ),
    ("bad layer", "[[pools]]\npool = 'road'\nlayer = 'nope'\n", "no layer 'nope'"),
    (
        "bad field",
        "[[pools]]\npool = 'road'\nlayer = 'tiet'\n[pools.attributes]\nname = 'x'\n",
        "has no attribute 'x'",
    ),
    ("bad where", "[[pools]]\npool = 'road'\nlayer = 'tiet'\nwhere = 'luokka = = 2'\n", "pools[0].where"),
    ("bad section", "[sources]\n", "unknown section 'sources'"),
]


@pytest.mark.parametrize("name,text,needle", BAD, ids=[b[0] for b in BAD])
def test_bad_mapping_one_line_error(gpkg, tmp_path, name, text, needle):
    path, _, _ = gpkg
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    with pytest.raises(InputError) as exc:
        load_vector_pools(path, bad)
    msg = str(exc.value)
    assert needle in msg and "\n" not in msg and str(bad) in msg
    # read by `spatialgap build`'s early process: the same line (a mapping refused before the
    # read leaves that process to its owner, the command's `with`)
    with start_vector_reading(path, bad) as early, pytest.raises(InputError) as there:
        load_vector_pools(path, bad, reading=early)
    assert str(there.value) == msg and not early.proc.is_alive()


def test_shipped_mappings_are_valid():
    files = sorted((RESOURCES_DIR / "mappings").glob("*.toml"))
    assert files
    for f in files:
        assert load_mapping(f)["pools"]


def test_cli_bad_mapping_exit_code_and_nothing_left(gpkg, tmp_path):
    path, _, _ = gpkg
    bad = tmp_path / "bad.toml"
    bad.write_text("[[pools]]\npool = 'river'\n")
    out = tmp_path / "out"
    r = subprocess.run(
        [
            str(VENV_BIN / "spatialgap"),
            "build",
            "--vector",
            str(path),
            "--mapping",
            str(bad),
            "--out",
            str(out),
            "--no-render",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert r.returncode != 0
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "pool must be one of" in lines[0], r.stderr
    assert not out.exists()


def _pools_record(pools) -> list:
    return [
        (kind, f.uid, sorted(f.props.items()), shapely.to_wkb(f.geom))
        for kind in sorted(pools.features)
        for f in pools.features[kind]
    ]


def test_a_vector_file_read_by_an_early_process_gives_the_same_pools(gpkg):
    # `spatialgap build --vector` starts the read before it imports the builder
    path, mapping, _ = gpkg
    here = load_vector_pools(path, mapping)
    early = start_vector_reading(path, mapping)
    there = load_vector_pools(path, mapping, reading=early)
    assert _pools_record(there) == _pools_record(here) and there.stats == here.stats
    assert not early.proc.is_alive()


ROADS_ONLY = """
[source]
id = "tunnus"

[[pools]]
pool = "road"
layer = "tiet"
where = "luokka <> 'rata'"
[pools.attributes]
highway = "luokka"
name = "nimi"
layer = "taso"
bridge = "silta"
"""


@pytest.mark.parametrize("fmt", ["GPKG", "ESRI Shapefile"])
def test_pyogrio_and_osgeo_read_a_projected_vector_file_into_the_same_pools(gpkg, tmp_path, fmt):
    # in the city's UTM zone, so pyogrio's path projects with pyproj where osgeo's uses OGR; each
    # reader in a child process (two GDALs never share the test process)
    from osgeo import gdal

    path, mapping, _ = gpkg
    if fmt != "GPKG":
        (tmp_path / "roads.toml").write_text(ROADS_ONLY)
        mapping = tmp_path / "roads.toml"
        gdal.VectorTranslate(str(tmp_path / "tiet.shp"), str(path), format=fmt, layers=["tiet"])
        path = tmp_path / "tiet.shp"
    assert pools_in_child("pyogrio", path, mapping) == pools_in_child("osgeo", path, mapping)
