"""The renderer's fast paths give exactly what the plain computations they replace give."""

import io
import struct
import zlib

import numpy as np
import pytest
import shapely
from PIL import Image
from shapely.geometry import LineString, MultiPolygon, Point, Polygon

from scoring.render.backend.png import encode_rgb_png
from scoring.render.backend.shapes import line_segments, points_xy, poly_paths
from scoring.render.labels.obstacles import CandidateTests, MapObstacles
from scoring.render.labels.placement import (
    LabelItem,
    _candidates,
    _cheapest_free,
    obstacle_for,
    place_labels,
)
from scoring.render.renderer import render_map


def _idat_rows(png: bytes, width: int) -> list[bytes]:
    i, data = 8, b""
    while i < len(png):
        (n,) = struct.unpack(">I", png[i : i + 4])
        if png[i + 4 : i + 8] == b"IDAT":
            data += png[i + 8 : i + 8 + n]
        i += 12 + n
    raw = zlib.decompress(data)
    stride = 3 * width + 1
    return [raw[k : k + stride] for k in range(0, len(raw), stride)]


@pytest.mark.parametrize("seed", [0, 1])
def test_png_is_lossless_rgb_unfiltered_and_deterministic(seed):
    rng = np.random.default_rng(seed)
    img = np.full((97, 131, 3), 240, np.uint8)
    img[10:50, 20:90] = (200, 30, 40)
    img[60:] = rng.integers(0, 256, (37, 131, 3), dtype=np.uint8)  # noise: the worst case
    png = encode_rgb_png(img.tobytes(), 131, 97)
    back = Image.open(io.BytesIO(png))
    assert back.mode == "RGB" and back.size == (131, 97)
    assert np.array_equal(np.asarray(back), img)
    assert encode_rgb_png(img.tobytes(), 131, 97) == png
    # every row declares filter 0, the layout the encoder relies on Pillow producing
    assert {row[0] for row in _idat_rows(png, 131)} == {0}


def test_png_refuses_a_buffer_of_the_wrong_size():
    with pytest.raises(ValueError, match="bytes of RGB"):
        encode_rgb_png(b"\0" * 10, 2, 2)


def test_layer_arrays_match_per_geometry_conversion():
    square = Polygon([(0, 0), (10, 0), (10, 10), (0, 10)])
    holed = Polygon([(20, 0), (40, 0), (40, 20), (20, 20)], [[(25, 5), (25, 15), (35, 15), (35, 5)]])
    multi = MultiPolygon([square, Polygon([(50, 50), (60, 50), (60, 60)])])
    line = LineString([(0, 0), (5, 5), (9, 1)])
    geoms = [square, line, holed, Point(3, 4), multi, shapely.GeometryCollection([line, Point(1, 1)])]
    paths = poly_paths(geoms)
    assert len(paths) == 3  # square, holed, multi
    assert np.array_equal(paths[0].vertices, np.asarray(square.exterior.coords))
    assert list(paths[0].codes) == [1, 2, 2, 2, 79]
    assert len(paths[2].vertices) == 5 + 4 and list(paths[2].codes).count(1) == 2
    # the hole runs against its shell (nonzero fill leaves it empty)
    hole = paths[1].vertices[5:]
    assert shapely.LinearRing(hole).is_ccw != shapely.LinearRing(paths[1].vertices[:5]).is_ccw
    segs = line_segments(geoms)
    # square ring, the line, holed's shell and hole, multi's two rings, the collection's line
    assert [len(s) for s in segs] == [5, 3, 5, 5, 5, 4, 3]
    assert np.array_equal(segs[1], np.asarray(line.coords))
    xy = points_xy([Point(3, 4), square, shapely.MultiPoint([(1, 2), (5, 6)])])
    assert np.allclose(xy, [(3, 4), square.representative_point().coords[0], (1, 2), (5, 6)])


def _scene(seed: int):
    rng = np.random.default_rng(seed)
    items, obstacles = [], {}
    for k in range(7):
        x, y = rng.uniform(100, 500, 2)
        kind = k % 3
        if kind == 0:
            g = Point(x, y)
        elif kind == 1:
            g = LineString([(x, y), (x + rng.uniform(-150, 150), y + rng.uniform(-150, 150))])
        else:
            s = rng.uniform(20, 160)
            g = Polygon([(x, y), (x + s, y), (x + s, y + s * 0.8), (x, y + s)])
        fid = f"F{k}"
        items.append(LabelItem(fid, g, (34.0, 24.0), 6.0))
        obstacles[fid] = obstacle_for(g, 6.0)
    return items, obstacles


def _exhaustive(tests: CandidateTests, c: np.ndarray, idx: np.ndarray, w: float, h: float) -> int | None:
    """Every candidate tested, as the search did before it became lazy."""
    hit_own, hit_others, hit_labels = tests.hits(idx)
    ok = ~(hit_own | hit_others | hit_labels)
    cost = tests.cost(idx)
    for j, i in enumerate(idx):
        if ok[j] and c[i, 6]:
            ok[j] = not tests.leader_crosses(int(i), w, h)
    if not ok.any():
        return None
    return int(idx[int(np.argmin(np.where(ok, cost, np.inf)))])


@pytest.mark.parametrize("seed", range(12))
def test_lazy_label_search_picks_what_testing_every_candidate_picks(seed):
    items, obstacles = _scene(seed)
    placed = [(300.0, 300.0, 380.0, 330.0)]
    leaders = [LineString([(250, 250), (260, 240)])]
    soft = {it.fid: it.geom for it in items if it.geom.geom_type == "Polygon" and it.geom.area > 12000}
    for item in items:
        c = _candidates(item)
        w, h = item.size
        corners = (c[:, 0], c[:, 1], c[:, 0] + w, c[:, 1] + h)
        tests = CandidateTests(item, c, corners, MapObstacles(obstacles, soft), placed, leaders)
        idx = np.arange(len(c))
        assert _cheapest_free(tests, c, idx, w, h) == _exhaustive(tests, c, idx, w, h)


def test_crowded_labels_fall_back_inside_the_bounds():
    items, obstacles = _scene(3)
    out = place_labels(items, (90.0, 90.0, 520.0, 520.0), obstacles)
    assert set(out) == {it.fid for it in items}


def test_a_reused_renderer_keeps_no_trace_of_the_previous_map(bench, instances):
    from scoring.render.context import ContextIndex

    ctx = ContextIndex.from_file(bench / "context.geojsonl", 32635)
    a, b = list(instances.values())[:2]
    first = render_map(a, ctx)[0]
    render_map(b, ctx)
    assert render_map(a, ctx)[0] == first
