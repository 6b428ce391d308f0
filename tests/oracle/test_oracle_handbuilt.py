"""Hand-built scenes whose answers are known by construction, checked against the oracle
(scoring/oracle.py) through the fact evaluator (scoring/constraints/facts.py), plus the edit executor
(scoring/constraints/edits.py) and the constraint ops.

Every expected value below is worked out by hand (simple arithmetic in the case table), never
with the function under test. Each case is tagged with the relation code whose definition names
the measure; `test_every_relation_is_covered` checks that every code of the catalogue appears
with at least two distinct expected values.
"""

from __future__ import annotations

import pytest
from handbuilt_direction import CASES as DIRECTION
from handbuilt_metric import CASES as METRIC
from handbuilt_ordering import CASES as ORDERING
from handbuilt_shapes import EAST_ROAD, SQ10, line, make_scene, point
from handbuilt_topology import CASES as TOPOLOGY

from scoring import oracle
from scoring.constraints.facts import FactError, evaluate
from scoring.relations import CATALOGUE

# (code, label, measure, features, args, params, expected), in catalogue family order
CASES = [*TOPOLOGY, *DIRECTION, *METRIC, *ORDERING]

# The measure(s) each relation's definition names; every case of a code must use one of them.
COVERAGE = {
    "T01": {"equals", "equals_eps"},
    "T02": {"disjoint"},
    "T03": {"intersects"},
    "T04": {"touches", "touches_eps"},
    "T05": {"crosses"},
    "T06": {"within", "covered_by"},
    "T08": {"overlaps"},
    "T09": {"boundary_covered", "boundary_covered_eps"},
    "T11": {"contained_properly", "contained_properly_eps"},
    "D01": {"direction4"},
    "D02": {"direction8"},
    "D04": {"bearing"},
    "D05": {"relative_direction"},
    "D06": {"axis", "line_axis_azimuth"},
    "M01": {"min_distance"},
    "M02": {"boundary_distance", "min_distance"},
    "M04": {"manhattan_distance", "min_distance"},
    "M08": {"hausdorff_distance"},
    "M12": {"perimeter_total"},
    "M14": {"count_within_distance", "within_distance"},
    "M15": {"nearest"},
    "M18": {"poi_density"},
    "O01": {"along_order", "along_position"},
    "O02": {"along_position", "along_order"},
    "O03": {"same_side", "side_of_line"},
    "O04": {"strictly_between"},
    "O06": {"level_above"},
    "O08": {"endpoint_connected"},
}


@pytest.mark.parametrize(
    "code,label,measure,feats,args,params,expected", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES]
)
def test_handbuilt_case(code, label, measure, feats, args, params, expected):
    assert measure in COVERAGE[code], f"{code} case uses {measure}, not a measure its definition names"
    value = evaluate(make_scene(feats), measure, args, params)
    if isinstance(expected, float):
        assert value == pytest.approx(expected, abs=1e-6)
    else:
        assert value == expected
        assert type(value) is type(expected)


def test_every_relation_is_covered():
    codes = {c[0] for c in CASES}
    assert set(CATALOGUE) == set(COVERAGE) == codes
    for code in CATALOGUE:
        values = {repr(c[-1]) for c in CASES if c[0] == code}
        assert len(values) >= 2, f"{code} needs a positive and a negative (or two distinct values)"
        for rel_measure in {c[2] for c in CASES if c[0] == code}:
            assert rel_measure in oracle.MEASURES


# ---------------------------------------------------------------- sector edges and levels


@pytest.mark.parametrize(
    "angle,n,idx",
    [
        (45.0, 4, 1),
        (44.999, 4, 0),
        (315.0, 4, 0),
        (314.999, 4, 3),
        (135.0, 4, 2),
        (225.0, 4, 3),
        (359.999, 4, 0),
        (0.0, 4, 0),
        (22.5, 8, 1),
        (22.499, 8, 0),
        (337.5, 8, 0),
        (337.499, 8, 7),
        (180.0, 8, 4),
    ],
)
def test_sector_edges(angle, n, idx):
    assert oracle.sector(angle, n)[0] == idx


def test_axis_edges_exact():
    # axis() doubles the folded azimuth into 4 sectors: 22.5 -> 45 (NE-SW), 157.5 -> 315 (N-S).
    assert oracle.AXES[oracle.sector(22.5 * 2, 4)[0]] == "NE-SW"
    assert oracle.AXES[oracle.sector(67.5 * 2, 4)[0]] == "E-W"
    assert oracle.AXES[oracle.sector(112.5 * 2, 4)[0]] == "NW-SE"
    assert oracle.AXES[oracle.sector(157.5 * 2, 4)[0]] == "N-S"


def test_bearing_in_range_near_north():
    # A tiny westward offset gives a bearing just under 360, never 360 itself.
    v = oracle.bearing(point(0, 0), point(-1e-9, 1000))
    assert 359.99 < v < 360.0
    assert oracle.bearing(point(0, 0), point(-0.0, 1000)) == 0.0


@pytest.mark.parametrize(
    "props,level",
    [
        ({"bridge": "yes"}, 1),
        ({"tunnel": "yes"}, -1),
        ({"bridge": "no", "tunnel": "no"}, 0),
        ({"layer": "2"}, 2),
        ({"layer": -1, "tunnel": "yes"}, -1),
        ({"layer": "0", "bridge": "yes"}, 0),
        ({"layer": "-2", "bridge": "yes"}, -2),
        ({"bridge": "viaduct"}, 1),
        ({"bridge": "false"}, 0),
        ({}, None),
    ],
)
def test_vertical_level(props, level):
    assert oracle.vertical_level(props) == level


@pytest.mark.parametrize("other", [line((100, 0), (150, 30)), line((50, 0), (50, 40))], ids=["endpoint", "T"])
def test_touches_eps_lines_that_touch_exactly(other):
    assert oracle.touches(EAST_ROAD, other)  # exact OGC touch
    assert oracle.touches_eps(EAST_ROAD, other, eps=0.05)
    # ...while roads that cross are not touching, however small eps is.
    assert not oracle.touches_eps(EAST_ROAD, line((50, -10), (50, 40)), eps=0.05)


def test_unknown_measure_and_missing_feature():
    sc = make_scene({"F0": SQ10})
    with pytest.raises(FactError):
        evaluate(sc, "no_such_measure", ["F0"])
    with pytest.raises(FactError):
        evaluate(sc, "area", ["F9"])
