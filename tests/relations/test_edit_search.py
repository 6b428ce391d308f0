"""The builder's batched edit search (issue #12, build time) gives exactly what the executor and
the oracle give one candidate at a time: the same snapped geometries, the same measure values,
the same first edit that holds, the same margin verdicts."""

import math
import random

import numpy as np
import pytest
import shapely
from shapely.geometry import LineString, Point, Polygon

from scoring import oracle
from scoring.constraints.edits import EditError, apply_edit, translated_on_grid, translation_of
from scoring.constraints.facts import all_hold
from scoring.extract.osm import load_pools
from scoring.geometry.georef import CityCRS
from scoring.geometry.scene import Scene, SceneFeature, snap
from scoring.relations.common import NUDGES, EditOp, at_least, at_most, between, holds_with_margin, pred
from scoring.relations.common import translate_proposals as proposals
from scoring.relations.edit_search import nudges_hold, satisfying_edits, screen

CRS = CityCRS(epsg=32635, name="EPSG:32635")
ALLOWED = (EditOp.TRANSLATE, EditOp.ROTATE, EditOp.SCALE)


@pytest.fixture(scope="module")
def pools():
    return load_pools(None, None)


def _scene(*geoms) -> Scene:
    return Scene(CRS, [SceneFeature(f"F{i}", "building", g) for i, g in enumerate(geoms)])


def _sample(pools, kind: str, n: int, seed: int = 0) -> list:
    feats = pools.features[kind]
    return [f.geom for f in random.Random(seed).sample(feats, min(n, len(feats)))]


def _shifts(rng: random.Random, n: int) -> list[tuple[float, float]]:
    # 3-decimal moves as the builder proposes, half-centimetre ties, exact grid steps, tiny moves
    out = [(round(rng.uniform(-40, 40), 3), round(rng.uniform(-40, 40), 3)) for _ in range(n)]
    out += [(0.005, -0.015), (12.345, 0.125), (3.0, -7.0), (0.004, 0.0), (0.0, 0.0), (-0.001, 0.002)]
    return out


def _same_geometry(a, b) -> bool:
    return a.geom_type == b.geom_type and np.array_equal(
        shapely.get_coordinates(a), shapely.get_coordinates(b)
    )


def test_translations_on_the_grid_are_the_executors(pools):
    rng = random.Random(5)
    geoms = _sample(pools, "building", 15) + _sample(pools, "road", 10) + _sample(pools, "poi", 5)
    geoms += _sample(pools, "area", 5)
    sliver = Polygon([(0, 0), (0.004, 0), (0.004, 0.004)])  # collapses on the grid
    thin = snap(Polygon([(0, 0), (10, 0.01), (10, 0.02), (0, 0.011)]))  # may turn invalid
    fallbacks = 0
    for g in [*geoms, sliver, thin]:
        shifts = _shifts(rng, 25)
        moved, exact = translated_on_grid(g, np.array(shifts))
        for (dx, dy), m, ok in zip(shifts, moved, exact, strict=True):
            edit = {"operations": [{"op": "translate", "dx": dx, "dy": dy}]}
            try:
                res = apply_edit(_scene(g), "F0", edit)
            except EditError:
                assert not ok
                fallbacks += 1
                continue
            if ok:
                assert _same_geometry(m, res.scene.geom("F0")), (g.wkt[:60], dx, dy)
                assert res.changed == (not m.equals_exact(g, 1e-9))
            else:
                fallbacks += 1
    assert fallbacks  # the path left to apply_edit was exercised


def test_successive_translations_are_the_executors(pools):
    g = _sample(pools, "building", 1, seed=2)[0]
    steps = np.array([[(3.217, -1.5), n] for n in NUDGES])
    moved, exact = translated_on_grid(g, steps)
    assert exact.all()
    for (s, n), m in zip(steps, moved, strict=True):
        ops = [{"op": "translate", "dx": float(s[0]), "dy": float(s[1])}]
        ops.append({"op": "translate", "dx": float(n[0]), "dy": float(n[1])})
        assert _same_geometry(m, apply_edit(_scene(g), "F0", {"operations": ops}).scene.geom("F0"))


def test_translation_of_accepts_only_what_the_executor_accepts():
    t = [{"op": "translate", "dx": 1, "dy": -2.5}]
    assert translation_of(t, ALLOWED) == (1.0, -2.5)
    assert translation_of(t, (EditOp.ROTATE,)) is None
    assert translation_of([{"op": "translate", "dx": True}], ALLOWED) is None
    assert translation_of([{"op": "translate", "dx": math.inf}], ALLOWED) is None
    for bad in (math.nan, -math.inf, 2e9):  # floats the executor refuses
        ops = [{"op": "translate", "dx": 0.5, "dy": bad}]
        assert translation_of(ops, ALLOWED) is None
        with pytest.raises(EditError):
            apply_edit(_scene(Point(0, 0)), "F0", {"operations": ops})
    assert translation_of([*t, *t], ALLOWED) is None
    assert translation_of(tuple(t), ALLOWED) is None


# ---------------------------------------------------------------- batch forms

PARAMS = {
    "equals_eps": {"eps": oracle.EDIT_EPS},
    "boundary_covered_eps": {"eps": oracle.EDIT_EPS},
    "contained_properly_eps": {"eps": oracle.EDIT_EPS},
    "within_distance": {"distance": 12.5},
}


def _same_value(a, b) -> bool:
    if isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or float(a) == b  # the same double
    return a == b


def _groups(pools):
    """(moving geometry, candidate shifts, fixed geometry): features moved across an area, a
    building moved to within centimetres of an area's boundary (either side of every eps), and
    a copy of the area moved by centimetres (equality within eps)."""
    rng = random.Random(9)
    area, inner = next(
        (a.geom, f.geom)
        for a in pools.features["area"]
        for f in pools.near("building", a.geom, 0)
        if shapely.contains_properly(a.geom, f.geom) and len(pools.near("road", a.geom, 30)) >= 2
    )
    near = [f.geom for f in pools.near("building", area, 30) if f.geom is not inner][:2]
    near += [f.geom for f in pools.near("road", area, 30)][:2]
    for moving in [*near, area.representative_point()]:
        c = moving.centroid
        targets = [area.representative_point(), area.centroid, Point(area.exterior.coords[0])]
        jitter = [(rng.uniform(-3, 3), rng.uniform(-3, 3)) for _ in range(4)]
        shifts = [(t.x - c.x + jx, t.y - c.y + jy) for t in targets for jx, jy in jitter]
        yield moving, shifts + _shifts(rng, 8), area
    q, r = shapely.ops.nearest_points(inner, area.exterior)
    gap = q.distance(r)
    offsets = (-0.08, -0.051, -0.049, -0.03, -0.01, 0.0, 0.01, 0.03, 0.049, 0.051, 0.08)
    yield inner, [((r.x - q.x) * (1 + o / gap), (r.y - q.y) * (1 + o / gap)) for o in offsets], area
    yield area, [(o, 0.0) for o in offsets] + [(0.0, o) for o in offsets], area
    square = Polygon([(0, 0), (10, 0), (10, 10), (0, 10)])  # beside its neighbour: exact contact
    yield (
        square,
        [(o, d) for o in offsets for d in (0.0, 4.0)],
        Polygon([(10, 0), (20, 0), (20, 10), (10, 10)]),
    )


def test_every_batch_form_is_its_measure_elementwise(pools):
    """Each batch value must be exactly what the measure's own function returns, and the
    candidates must give both answers of every predicate."""
    seen: dict[str, set] = {}
    for moving, shifts, fixed in _groups(pools):
        moved, exact = translated_on_grid(moving, np.array(shifts))
        cands = moved[exact]
        others = [fixed, *(f.geom for f in pools.near("building", fixed, 30)[:2])]
        for name, m in oracle.MEASURES.items():
            if m.batch is None:
                continue
            params = PARAMS.get(name, {})
            if name == "displacement":
                layouts = [([moving, cands], 1)]
            elif name == "nearest":
                layouts = [([cands, *others], 0)]
            else:
                layouts = [([cands, fixed], 0), ([fixed, cands], 1)]
            for args, at in layouts:
                values = m.batch(*args, **params)
                if values is None:
                    continue
                for i, cand in enumerate(cands):
                    scalar = [cand if j == at else a for j, a in enumerate(args)]
                    expected = m.fn(*scalar, **params)
                    assert _same_value(values[i], expected), (name, at, i, values[i], expected)
                    seen.setdefault(name, set()).add(expected if m.kind != "number" else "number")
    assert set(seen) == {n for n, m in oracle.MEASURES.items() if m.batch is not None}
    for name, values in seen.items():
        if oracle.MEASURES[name].kind == "bool":
            assert values == {True, False}, name


def test_screen_never_drops_a_candidate_that_holds_and_is_sure_only_when_it_holds(pools):
    area, b = next(
        (a.geom, f.geom)
        for a in pools.features["area"]
        for f in pools.near("building", a.geom, 0)
        if shapely.contains_properly(a.geom, f.geom)
    )
    scene = _scene(b, area)
    rng = random.Random(8)
    size = math.sqrt(area.area)
    moves = [(round(rng.uniform(-size, size), 3), round(rng.uniform(-size, size), 3)) for _ in range(60)]
    d = size  # displacement bound: some moves within it, some beyond
    moved, exact = translated_on_grid(b, np.array(moves))
    cons = [
        pred("within", "F0", "F1"),
        between("min_distance", "F0", "F1", lo=-1.0, hi=1.0),
        at_most("displacement", "F0", hi=d),
        at_least("boundary_distance", "F0", "F1", lo=0.5),  # no batch form: never sure
    ]
    for constraints in (cons[:3], cons):
        alive, sure = screen(scene, moved[exact], constraints)
        for m, a, s in zip(moved[exact], alive, sure, strict=True):
            holds = all_hold(scene.replace("F0", geom=m), constraints, initial=scene)
            assert a or not holds
            assert holds or not s
        if constraints is cons:
            assert not sure.any()
        else:
            assert sure.any() and not alive.all()


# ---------------------------------------------------------------- the search


def _one_by_one(scene, props, constraints, max_tries=4000):
    """The search as it was: every proposal through apply_edit and all_hold."""
    for k, ops in enumerate(props):
        if k >= max_tries:
            return
        edit = {"operations": ops}
        try:
            res = apply_edit(scene, "F0", edit, ALLOWED)
        except EditError:
            continue
        if res.changed and all_hold(res.scene, constraints, initial=scene):
            yield edit, res


def _cases(pools):
    """(scene, constraints, reach, preferred direction) over real features, for the measures
    with a batch form and one without (touches_eps)."""
    rng = random.Random(11)
    for area in _sample(pools, "area", 5, seed=1):
        inside = [f.geom for f in pools.near("building", area, 0) if shapely.contains_properly(area, f.geom)]
        outside = [f.geom for f in pools.near("building", area, 30) if 2 < f.geom.distance(area)]
        roads = [f.geom for f in pools.near("road", area, 40)]
        if outside:
            b = rng.choice(outside)
            q, r = shapely.ops.nearest_points(b, area)
            v, gap = (r.x - q.x, r.y - q.y), q.distance(r)
            size = math.sqrt(b.area)
            scene = _scene(b, area)
            inside_it = [pred("within", "F0", "F1"), at_most("displacement", "F0", hi=gap + 3 * size)]
            yield scene, inside_it, gap + 2 * size, v
            yield scene, [pred("overlaps", "F0", "F1"), at_least("displacement", "F0", lo=gap)], gap, v
            yield scene, [between("min_distance", "F0", "F1", lo=0.5, hi=1.5)], gap, v
            yield scene, [pred("touches_eps", "F0", "F1", eps=oracle.EDIT_EPS)], gap, v
            cur = oracle.hausdorff_distance(b, area)
            yield scene, [at_most("hausdorff_distance", "F0", "F1", hi=cur - 0.5)], 2.0, v
        if inside:
            b = inside[0]
            q, r = shapely.ops.nearest_points(b, area.exterior)
            v, gap = (r.x - q.x, r.y - q.y), q.distance(r)
            scene = _scene(b, area)
            yield scene, [pred("boundary_covered_eps", "F0", "F1", eps=oracle.EDIT_EPS)], gap, v
            yield scene, [pred("contained_properly_eps", "F0", "F1", eps=gap + 1)], 5.0, (-v[0], -v[1])
            yield scene, [pred("disjoint", "F0", "F1"), at_most("displacement", "F0", hi=90)], 40.0, v
        if len(roads) >= 2:
            yield _scene(roads[0], roads[1]), [pred("crosses", "F0", "F1")], 20.0, None
        if len(outside) >= 3:
            dist = [outside[0].distance(g) for g in outside[1:3]]
            cons = [
                pred("nearest", "F0", "F1", "F2", "F3", value="F3"),
                at_most("min_distance", "F0", "F3", hi=4),
            ]
            yield _scene(*outside[:3], area), cons, min(dist) + 10, None


def test_the_search_finds_what_a_one_by_one_search_finds(pools):
    cases = hits = 0
    for scene, constraints, reach, preferred in _cases(pools):
        props = list(proposals(reach + 1, step=0.5, preferred=preferred))
        want = list(zip(range(3), _one_by_one(scene, props, constraints, 1000), strict=False))
        got = list(zip(range(3), satisfying_edits(scene, props, ALLOWED, constraints, 1000), strict=False))
        assert len(got) == len(want)
        for (_, (e1, r1)), (_, (e2, r2)) in zip(got, want, strict=True):
            assert e1 == e2 and r1.changed == r2.changed
            assert _same_geometry(r1.scene.geom("F0"), r2.scene.geom("F0"))
            for edit in (e1, {"operations": [*e1["operations"], {"op": "rotate", "degrees_clockwise": 0}]}):
                verdict = holds_with_margin(scene, edit, ALLOWED, constraints)
                assert verdict == _margin_loop(scene, edit, constraints)
        cases += 1
        hits += bool(want)
    assert cases >= 20 and hits >= 0.6 * cases, (cases, hits)


def _margin_loop(scene, edit, constraints) -> bool:
    for dx, dy in NUDGES:
        nudged = {"operations": [*edit["operations"], {"op": "translate", "dx": dx, "dy": dy}]}
        try:
            res = apply_edit(scene, "F0", nudged, ALLOWED)
        except EditError:
            return False
        if not all_hold(res.scene, constraints, initial=scene):
            return False
    return True


def test_nudges_leave_a_geometry_needing_geos_snapping_to_the_executor():
    thin = Polygon([(0, 0), (10, 0.004), (10.004, 0.001)])  # collapses when rounded
    scene = _scene(thin, LineString([(0, 5), (10, 5)]))
    cons = [pred("disjoint", "F0", "F1")]
    assert nudges_hold(scene, (1.0, 0.0), NUDGES, cons) is None
    edit = {"operations": [{"op": "translate", "dx": 1.0, "dy": 0.0}]}
    assert holds_with_margin(scene, edit, ALLOWED, cons) == _margin_loop(scene, edit, cons)
