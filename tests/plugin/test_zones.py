"""Every zone a constraint drawing shows says where the constraint holds (issue 31 item 2): points
sampled inside an "allowed" zone satisfy the constraint, points inside a "forbidden" zone (a
negated constraint's: "F0 is not within 20 m of F2") break it, points in an allowed zone's holes
or just past one of its limit rings break it — each checked against the constraint itself
(scoring.constraints.facts.check_constraint, the scorer's own check), with F0 moved there."""

from __future__ import annotations

import pytest
import shapely
from shapely.geometry import Point

from scoring.constraints.explain import explain_constraints, is_negated
from scoring.constraints.facts import check_constraint
from scoring.geometry.scene import Scene

EDGE_M = 0.5  # samples keep this far from a zone's edge (the drawing's arcs are polygons)
GRID = 13  # samples per side of a zone's bounding box


@pytest.fixture(scope="module")
def zone_bench(tmp_path_factory):
    """Edit instances of every relation (2 each): every measure that draws a zone."""
    from scoring.build.builder import build_benchmark
    from scoring.formats.benchmark import Benchmark

    out = tmp_path_factory.mktemp("zones") / "hel"
    build_benchmark(None, out, seed=0, n_qa=0, n_edit=2, jobs=1, progress=False)
    return Benchmark.open(out).all_instances()


def _grid(zone, keep) -> list[Point]:
    x0, y0, x1, y1 = zone.bounds
    pts = [
        Point(x0 + (x1 - x0) * (i + 0.5) / GRID, y0 + (y1 - y0) * (j + 0.5) / GRID)
        for i in range(GRID)
        for j in range(GRID)
    ]
    return [p for p in pts if keep(p)]


def _in_hole(zone, filled):
    return lambda p: filled.contains(p) and zone.distance(p) > EDGE_M


def _holds(scene: Scene, initial: Scene, c: dict, target: str, p: Point) -> bool:
    return check_constraint(scene.replace(target, p), c, initial)[0]


def _cases(instances):
    """(instance, view) for every polygon zone drawn for a point target."""
    for inst in instances:
        initial = Scene.from_geojson(inst["scene"])
        target = inst.get("target", "F0")
        if initial.geom(target).geom_type != "Point":
            continue  # a zone is where a point may go; a polygon's reach is not a region of points
        for view in explain_constraints(inst):
            if any(r in ("allowed", "forbidden") and g.geom_type.endswith("Polygon") for r, g in view.parts):
                yield inst, initial, target, view


def test_every_drawn_zone_agrees_with_its_constraint(zone_bench):
    checked = {"allowed": 0, "forbidden": 0, "hole": 0, "past limit": 0}
    negated = 0
    wrong: list[str] = []
    for inst, initial, target, view in _cases(zone_bench):
        c = view.constraint
        negated += is_negated(c)
        limits = [g for r, g in view.parts if r == "limit"]
        for role, zone in view.parts:
            if role not in ("allowed", "forbidden") or not zone.geom_type.endswith("Polygon"):
                continue
            inner = zone.buffer(-EDGE_M)
            want = role == "allowed"
            samples = [(p, want, role) for p in _grid(zone, inner.contains)]
            if role == "allowed":
                # Holes (a band's inner disc) and the far side of a limit ring: the constraint breaks.
                filled = shapely.Polygon(zone.exterior) if zone.geom_type == "Polygon" else zone.convex_hull
                in_hole = _in_hole(zone, filled.buffer(-EDGE_M))
                samples += [(p, False, "hole") for p in _grid(zone, in_hole)]
                for ring in limits:
                    near = ring.buffer(3 * EDGE_M).difference(zone.buffer(EDGE_M))
                    if not near.is_empty:
                        samples += [(p, False, "past limit") for p in _grid(near, near.contains)]
            for p, expected, kind in samples:
                checked[kind] += 1
                if _holds(initial, initial, c, target, p) != expected:
                    wrong.append(f"{inst['id']} #{view.index + 1} {view.text}: {kind} at {p.wkt}")
    assert not wrong, f"{len(wrong)} samples disagree, first: {wrong[:5]}"
    # The drawings were really exercised, negations included (M14's "not within").
    assert checked["allowed"] > 200 and checked["forbidden"] > 20 and negated, checked
