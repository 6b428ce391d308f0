"""A scene's GeoJSON geometry read from coordinate arrays equals shapely's mapping, rounded."""

import doctest
import json
import random

import pytest
from shapely import wkt
from shapely.geometry import shape

import scoring.geometry.scene
from scoring.formats.benchmark import Benchmark
from scoring.geometry.scene import _plain_geometry_json, _rounded, mapping

SHAPES = [
    "POINT (385123.455 6672001.125)",
    "LINESTRING (0.005 0.015, 1.115 -2.225, 3.335 4.445)",
    "POLYGON ((0 0, 10.005 0, 10 10.015, 0 10, 0 0), (2 2, 3.125 2, 3 3.375, 2 2), (5 5, 6 5, 6 6, 5 5))",
    "MULTIPOINT ((1.005 2.675), (-3.145 4.155))",
    "MULTILINESTRING ((0 0, 1.005 1), (2 2, 3 3.675, 4.125 4))",
    "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 9.995 5, 9 9, 5 5), (6 5.5, 7 5.5, 7 6, 6 5.5)))",
]


def test_examples():
    assert doctest.testmod(scoring.geometry.scene).failed == 0


@pytest.mark.parametrize("text", SHAPES)
def test_hand_made_shapes(text):
    g = wkt.loads(text)
    assert _plain_geometry_json(g) == _rounded(mapping(g))


def test_random_coordinates_round_as_mapping_does():
    rng = random.Random(7)
    for _ in range(300):
        # values near the half-centimetre, where a different rounding would show
        pts = [(rng.randrange(-(10**7), 10**7) / 1000 + 0.0005, rng.uniform(-1e6, 1e6)) for _ in range(6)]
        line = shape({"type": "LineString", "coordinates": pts})
        for g in (line, shape({"type": "MultiPoint", "coordinates": pts})):
            assert _plain_geometry_json(g) == _rounded(mapping(g))


def test_every_scene_geometry_of_a_built_benchmark(helsinki_bench):
    bench = Benchmark.open(helsinki_bench)
    n = 0
    for inst in bench.all_instances():
        for f in inst["scene"]["features"]:
            g = shape(f["geometry"])
            assert json.dumps(_plain_geometry_json(g)) == json.dumps(_rounded(mapping(g)))
            n += 1
    assert n > 1000


def test_empty_and_3d_geometries_are_left_to_mapping():
    assert _plain_geometry_json(wkt.loads("POLYGON EMPTY")) is None
    assert _plain_geometry_json(wkt.loads("POINT Z (1 2 3)")) is None
    assert _plain_geometry_json(wkt.loads("GEOMETRYCOLLECTION (POINT (1 2))")) is None
