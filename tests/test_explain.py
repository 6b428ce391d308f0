"""Constraint explanations read as sentences: the measured value in the constraint's own words."""

from __future__ import annotations

from scoring.constraints.explain import directed_lines, measured_sentence


def test_a_predicate_reads_as_what_holds():
    c = {
        "measure": "within_distance",
        "args": ["F0", "F2"],
        "params": {"distance": 20},
        "op": "is",
        "value": False,
    }
    assert measured_sentence(c, False) == "F0 is not within 20 m of F2"
    assert measured_sentence(c, True) == "F0 is within 20 m of F2"


def test_a_number_reads_with_its_unit():
    c = {"measure": "min_distance", "args": ["F0", "F1"], "op": "between", "min": 6, "max": 16, "unit": "m"}
    assert measured_sentence(c, 40.4213, "m") == "the minimum distance between F0 and F1 is 40.42 m"


def test_directions_and_bearings_read_short():
    c = {"measure": "direction8", "args": ["F1", "F0"], "op": "is", "value": "N"}
    assert measured_sentence(c, "NE") == "F0 lies north-east of F1"
    c = {"measure": "bearing", "args": ["F1", "F0"], "op": "angle_within", "target": 90, "tolerance": 10}
    assert measured_sentence(c, 212.84, "deg") == "the bearing from F1 to F0 is 212.84°"


def test_an_unmeasured_constraint_says_so():
    c = {"measure": "min_distance", "args": ["F0", "F1"], "op": "at_most", "max": 5, "unit": "m"}
    assert measured_sentence(c, None).endswith("not measured")


def test_directed_lines_are_those_whose_direction_is_used():
    inst = {
        "facts": [{"measure": "along_order", "args": ["F0", "F1", "F2"]}],
        "constraints": [{"measure": "min_distance", "args": ["F3", "F1"]}],
    }
    assert directed_lines(inst) == {"F0"}
    assert directed_lines({"facts": [{"measure": "area", "args": ["F0"]}]}) == set()
