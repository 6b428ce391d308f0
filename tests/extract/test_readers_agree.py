"""pyogrio (a pip-only install: its wheels carry GDAL with the OSM driver) and `osgeo` (QGIS's
Python, Debian's python3-gdal) read every shared city into the same pools: features, context
(water, sea), thresholds and CRS. They run on different GDALs here (pyogrio's bundled one, the
system's), so this also holds the pools to one GDAL version or another. Each reads in a child
process: two GDALs never share the test process (QGIS's is in it)."""

from __future__ import annotations

import importlib.util
import time

import pytest

from scoring.paths import RESOURCES_DIR
from tests.conftest import SHARED
from tests.reader_child import pools_in_child

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("pyogrio", "osgeo")),
    reason="needs both readers: pyogrio and GDAL's osgeo bindings",
)
SHARED_OSM = SHARED / "osm"
CITIES = sorted(p.name for p in SHARED_OSM.iterdir()) if SHARED_OSM.is_dir() else []
MAPPINGS = {"wuhan_guanggu_tilezen.geojson": RESOURCES_DIR / "mappings" / "wuhan_guanggu_tilezen.toml"}


def _pools(name: str, reader: str) -> tuple[str, float]:
    path = SHARED_OSM / name
    start = time.perf_counter()
    return pools_in_child(reader, path, MAPPINGS.get(name)), time.perf_counter() - start


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
def test_pyogrio_and_osgeo_read_every_shared_city_into_the_same_pools(name):
    ours, t_pyogrio = _pools(name, "pyogrio")
    theirs, t_osgeo = _pools(name, "osgeo")
    print(f"{name}: pyogrio {t_pyogrio:.2f} s, osgeo {t_osgeo:.2f} s")
    assert ours == theirs


def test_the_embedded_city_reads_the_same_through_both():
    assert pools_in_child("pyogrio") == pools_in_child("osgeo")
