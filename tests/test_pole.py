"""Our polylabel finds exactly shapely's point (labels on the same pixels, edit seeds on the same spot)."""

import random

import pytest
import shapely
from shapely.errors import TopologicalError
from shapely.geometry import LineString, Point, Polygon
from shapely.ops import polylabel as shapely_polylabel

from scoring.geometry.pole import polylabel


def _polygons():
    rng = random.Random(17)
    out = [
        Polygon([(0, 0), (40, 0), (40, 10), (0, 10)]),  # a rectangle: the box-centre special case
        Polygon([(0, 0), (30, 0), (30, 30), (0, 30)], [[(5, 5), (25, 5), (25, 25), (5, 25)]]),  # a ring
        LineString([(0, 0), (50, 200), (100, 100), (20, 50), (-100, -20), (-150, -200)]).buffer(20),
        Point(3.25, 7.5).buffer(0.9),  # smaller than the tolerance
    ]
    for _ in range(24):  # thin curved strips, L shapes, polygons with holes, in pixel units
        pts = [(rng.uniform(0, 400), rng.uniform(0, 400)) for _ in range(rng.randint(2, 6))]
        g = LineString(pts).buffer(rng.uniform(2, 30), quad_segs=rng.choice([1, 2, 8]))
        if rng.random() < 0.3:
            g = g.difference(Point(pts[0]).buffer(rng.uniform(1, 10)))
        for part in getattr(g, "geoms", [g]):
            out.append(part)
    return out


@pytest.mark.parametrize("tolerance", [0.5, 3.0])
def test_same_point_as_shapely(tolerance):
    polys = _polygons()
    assert len(polys) > 25
    for poly in polys:
        ours, theirs = polylabel(poly, tolerance), shapely_polylabel(poly, tolerance)
        assert (ours.x, ours.y) == (theirs.x, theirs.y), poly.wkt[:80]


def test_invalid_polygon_refused_like_shapely():
    bowtie = Polygon([(0, 0), (10, 10), (10, 0), (0, 10)])
    assert not shapely.is_valid(bowtie)
    with pytest.raises(TopologicalError):
        polylabel(bowtie)


def test_deep_searches_match_shapely():
    # a fine tolerance splits many cells: quadrants measured ahead in batches must not change
    # which cells are split nor the point found
    for poly in _polygons()[:6]:
        ours, theirs = polylabel(poly, 0.1), shapely_polylabel(poly, 0.1)
        assert (ours.x, ours.y) == (theirs.x, theirs.y), poly.wkt[:80]


def test_the_search_without_idle_cells_finds_what_queueing_every_cell_finds():
    # _search leaves out cells that can change nothing and gives up (None) when two live cells
    # share a priority; where it finishes, its point is the every-cell search's
    import scoring.geometry.pole as pole

    finished = 0
    for poly in _polygons():
        prepared = shapely.from_wkb(shapely.to_wkb(poly))
        shapely.prepare(prepared)
        outline = poly.exterior if not poly.interiors else poly.boundary
        minx, miny, maxx, maxy = poly.bounds
        h = min(maxx - minx, maxy - miny) / 2.0
        cx, cy = poly.centroid.coords[0]
        (d,) = pole._signed_distances(prepared, outline, [cx], [cy])
        grid = ([minx + h], [miny + h], pole._signed_distances(prepared, outline, [minx + h], [miny + h]))
        fast = pole._search(prepared, outline, grid, h, pole._Cell(cx, cy, 0, d), 0.3)
        every = pole._search_cells(prepared, outline, grid, h, pole._Cell(cx, cy, 0, d), 0.3)
        if fast is not None:
            finished += 1
            assert fast == every, poly.wkt[:80]
    assert finished > len(_polygons()) // 2
