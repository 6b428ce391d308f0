"""pyogrio (a pip-only install: its wheels carry GDAL with the OSM driver) and `osgeo` (QGIS's
Python, Debian's python3-gdal) read every shared city into the same pools: features, context
(water, sea), thresholds and CRS. They run on different GDALs here (pyogrio's bundled one, the
system's), so this also holds the pools to one GDAL version or another."""

from __future__ import annotations

import hashlib
import importlib.util
import time

import pytest
import shapely

from scoring.extract import osm, vector
from scoring.extract.reading import READER_ENV
from scoring.paths import RESOURCES_DIR
from tests.conftest import SHARED

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("pyogrio", "osgeo")),
    reason="needs both readers: pyogrio and GDAL's osgeo bindings",
)
SHARED_OSM = SHARED / "osm"
CITIES = sorted(p.name for p in SHARED_OSM.iterdir()) if SHARED_OSM.is_dir() else []
MAPPINGS = {"wuhan_guanggu_tilezen.geojson": RESOURCES_DIR / "mappings" / "wuhan_guanggu_tilezen.toml"}


def _fingerprint(pools) -> str:
    h = hashlib.sha256(repr((pools.crs.as_dict(), pools.thresholds.as_dict(), pools.counts())).encode())
    for group in (pools.features, pools.context):
        for kind in sorted(group):
            for f in group[kind]:
                h.update(f"{kind}|{f.uid}|{sorted(f.props.items())}".encode())
                h.update(shapely.to_wkb(f.geom))
    return h.hexdigest()


def _pools(name: str, reader: str, monkeypatch) -> tuple[str, float]:
    monkeypatch.setenv(READER_ENV, reader)
    path = SHARED_OSM / name
    start = time.perf_counter()
    pools = vector.load_vector_pools(path, MAPPINGS[name]) if name in MAPPINGS else osm.load_pools(path)
    return _fingerprint(pools), time.perf_counter() - start


@pytest.mark.shared
@pytest.mark.parametrize(
    "name",
    CITIES
    or [
        pytest.param(
            "-",
            marks=pytest.mark.skip(
                reason="../shared/data/osm is absent (development data, not in a user's clone)"
            ),
        )
    ],
)
def test_pyogrio_and_osgeo_read_every_shared_city_into_the_same_pools(name, monkeypatch):
    ours, t_pyogrio = _pools(name, "pyogrio", monkeypatch)
    theirs, t_osgeo = _pools(name, "osgeo", monkeypatch)
    print(f"{name}: pyogrio {t_pyogrio:.2f} s, osgeo {t_osgeo:.2f} s")
    assert ours == theirs


def test_the_embedded_city_reads_the_same_through_both(monkeypatch):
    monkeypatch.setenv(READER_ENV, "pyogrio")
    ours = _fingerprint(osm.load_pools())
    monkeypatch.setenv(READER_ENV, "osgeo")
    assert _fingerprint(osm.load_pools()) == ours
