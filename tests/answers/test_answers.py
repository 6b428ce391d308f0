"""Deterministic answer parsing: realistic model outputs per answer type, plus fuzzing."""

from __future__ import annotations

import json

import pytest

from scoring import answers
from scoring.answers import Parsed, parse_answer


def ok(p: Parsed, value):
    assert p.ok, p.reason
    if isinstance(value, float):
        assert p.value == pytest.approx(value, rel=1e-9)
    else:
        assert p.value == value


def bad(p: Parsed, reason_part: str = ""):
    assert not p.ok
    assert reason_part in p.reason, p.reason


# ------------------------------------------------------------------ choice


@pytest.mark.parametrize(
    "text,letter",
    [
        ("B", "B"),
        ("(B)", "B"),
        ("B)", "B"),
        ("B.", "B"),
        ("Answer: B", "B"),
        ("**B**", "B"),
        ("Final answer: (C) F3", "C"),
        ("The correct option is D", "D"),
        ("Option C is correct", "C"),
        ("**Answer:** C", "C"),
        ("Let me compare A and B. A is further away.\nFinal answer: B", "B"),
        ("<think>Option A looks right... no, (D)</think>\nAnswer: (A)", "A"),
        ("```\nC\n```", "C"),
    ],
)
def test_choice_accepts(text, letter):
    ok(answers.parse_choice(text), letter)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("A or B", "two different option letters"),
        ("Answer: A or B", "two different option letters"),
        ("I think (A) is right but (B) also fits", "two different option letters"),
        ("A building is north of the road.", "no option letter found"),
        ("E", "a letter outside the options"),  # out of range for 4 options
        ("", "empty response"),
    ],
)
def test_choice_rejects(text, reason):
    bad(answers.parse_choice(text), reason)


def test_choice_more_options():
    ok(answers.parse_choice("(E)", n_options=5), "E")


def test_choice_unclosed_think_needs_final_line():
    bad(answers.parse_choice("<think>It is probably (B) or maybe (C)"), "unterminated reasoning")
    ok(answers.parse_choice("<think>It is probably (B) or maybe (C)\nFinal answer: C"), "C")


# ------------------------------------------------------------------ numbers


@pytest.mark.parametrize(
    "text,metres",
    [
        ("approximately 12 m", 12.0),
        ("~12m", 12.0),
        ("12.3 metres", 12.3),
        ("1.2 km", 1200.0),
        ("40 ft", 12.192),
        ("0.5 mi", 804.672),
        ("1,234.5 m", 1234.5),
        ("12,5 m", 12.5),
        ("1\u202f234,5 m", 1234.5),
        ("two kilometres", 2000.0),
        ("2800'", 853.44),
        ("It is 1.2 km (1200 m) away.", 1200.0),
        ("The school is at F3; distance F1 to F3 is 250 m", 250.0),
        ("<think>maybe 5 m, or 70 m</think>\n**Final answer:** 7 m", 7.0),
        ("Answer: about 120 m (0.12 km)", 120.0),
        ("About 3 nautical miles", 5556.0),
    ],
)
def test_distance(text, metres):
    ok(answers.parse_number(text, "distance"), metres)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("1 234 m", "ambiguous: several numbers"),  # plain space never joins digits
        ("between 10 and 12 m", "ambiguous"),
        ("Answer: 10-12 m", "range"),
        ("F1 is near F2", "no number"),
        ("the 5th building", "no number"),
        ("12 m²", "no number with a distance unit"),
        ("It cannot be determined from the map.", "refusal"),
    ],
)
def test_distance_rejects(text, reason):
    bad(answers.parse_number(text, "distance"), reason)


@pytest.mark.parametrize(
    "text,kind,value",
    [
        ("5 km²", "area", 5e6),
        ("5 sq. km", "area", 5e6),
        ("12 ha", "area", 1.2e5),
        ("300 m2", "area", 300.0),
        ("1,000 square metres", "area", 1000.0),
        ("2 acres", "area", 8093.7128448),
        ("123°", "angle", 123.0),
        ("bearing 45 deg", "angle", 45.0),
        ("270 degrees", "angle", 270.0),
        ("12 per km²", "density", 12.0),
        ("12/km2", "density", 12.0),
        ("3 per hectare", "density", 300.0),
        ("12 buildings per square kilometre", "density", 12.0),
        ("0.5 trees/ha", "density", 50.0),
    ],
)
def test_other_kinds(text, kind, value):
    ok(answers.parse_number(text, kind), value)


def test_count():
    ok(answers.parse_number("There are 3 buildings.", "count"), 3)
    ok(answers.parse_number("three", "count"), 3)
    ok(answers.parse_number("Answer: 12", "count"), 12)
    bad(answers.parse_number("3.5", "count"), "whole")
    ok(answers.parse_number("The line is 12 km long.", "count"), 12)  # a count said with a unit
    bad(answers.parse_number("12 km or 9 km", "count"), "several")
    assert isinstance(answers.parse_number("7", "count").value, int)


def test_number_wrong_kind_is_not_silently_accepted():
    bad(answers.parse_number("the area is 40 and the side 12 m", "area"), "not a area unit")


# ------------------------------------------------------------------ directions


@pytest.mark.parametrize(
    "text,label",
    [
        ("north-east", "NE"),
        ("northeast", "NE"),
        ("North East", "NE"),
        ("NE", "NE"),
        ("N.E.", "NE"),
        ("ne", "NE"),
        ("To the **north-west**.", "NW"),
        ("It lies northeast of the school.", "NE"),
        ("<think>north? east?</think>Answer: East", "E"),
        ("S", "S"),
        ("southwesterly", "SW"),
    ],
)
def test_direction8(text, label):
    ok(answers.parse_direction(text, "8"), label)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("north or north-east", "several different directions"),
        ("north-south", "several different directions"),
        ("the northern part of the map", "no direction found"),
        ("north-northeast", "16-point"),
        ("Not enough information to tell.", "refusal"),
    ],
)
def test_direction_rejects(text, reason):
    bad(answers.parse_direction(text, "8"), reason)


def test_direction4():
    ok(answers.parse_direction("West", "4"), "W")
    bad(answers.parse_direction("north-east", "4"), "4-point")


@pytest.mark.parametrize(
    "text,value",
    [
        ("ahead", "ahead"),
        ("It is in front of you", "ahead"),
        ("behind", "behind"),
        ("to the rear", "behind"),
        ("to the left", "left"),
        ("on the left-hand side", "left"),
        ("Answer: right", "right"),
    ],
)
def test_relative(text, value):
    ok(answers.parse_relative_direction(text), value)


def test_relative_rejects():
    bad(answers.parse_relative_direction("left or right"), "several")
    bad(answers.parse_relative_direction("north"), "no relative direction")


@pytest.mark.parametrize(
    "text,axis",
    [
        ("north–south", "N-S"),
        ("N–S", "N-S"),
        ("S-N", "N-S"),
        ("SW–NE", "NE-SW"),
        ("east-west", "E-W"),
        ("It runs from west to east.", "E-W"),
        ("northwest-southeast", "NW-SE"),
    ],
)
def test_axis(text, axis):
    ok(answers.parse_axis(text), axis)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("horizontal", "no axis"),
        ("NW-SE or N-S", "several different axes"),
        ("north-east", "not opposite"),
    ],
)
def test_axis_rejects(text, reason):
    bad(answers.parse_axis(text), reason)


# ------------------------------------------------------------------ ids, orderings, yes/no

IDS = ["F1", "F2", "F3", "F10"]


@pytest.mark.parametrize(
    "text,fid",
    [
        ("F3", "F3"),
        ("f3", "F3"),
        ("feature F3", "F3"),
        ("Feature 3", "F3"),
        ("The answer is **F10**", "F10"),
        ("I compared F1 and F2. Final answer: F2", "F2"),
        # a layer question's "same level" option is an answer (scored wrong or right), not unparsed
        ("Answer: neither: they are at the same level", "neither"),
        ("They are on the same level.", "neither"),
    ],
)
def test_feature_id(text, fid):
    ok(answers.parse_feature_id(text, IDS), fid)


@pytest.mark.parametrize(
    "text,reason",
    [
        ("F3 or F2", "two different feature ids"),
        ("F9", "not among the valid ids"),
        ("the church", "no feature id"),
    ],
)
def test_feature_id_rejects(text, reason):
    bad(answers.parse_feature_id(text, IDS), reason)


@pytest.mark.parametrize(
    "text",
    [
        "F2, F1, F3",
        "F2 → F1 → F3",
        "F2 then F1 then F3",
        "1. F2 2. F1 3. F3",
        "First I compare F1 with F3.\nOrder: F2, F1, F3",
        "Final answer:\n1. F2\n2. F1\n3. F3",
    ],
)
def test_ordering(text):
    ok(answers.parse_ordering(text, ["F1", "F2", "F3"]), ["F2", "F1", "F3"])


def test_ordering_rejects():
    bad(answers.parse_ordering("F2, F1", ["F1", "F2", "F3"]), "missing ids: F3")
    bad(answers.parse_ordering("F2, F1, F2, F3", ["F1", "F2", "F3"]), "more than once")


@pytest.mark.parametrize(
    "text,value",
    [
        ("Yes", True),
        ("no.", False),
        ("**No**", False),
        ("Yes, no feature overlaps it", True),
        ("Answer: false", False),
    ],
)
def test_yes_no(text, value):
    ok(answers.parse_yes_no(text), value)


def test_yes_no_rejects():
    bad(answers.parse_yes_no("yes or no"), "both")
    bad(answers.parse_yes_no("maybe"), "no yes/no")


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(
    "text",
    [
        "Cannot be determined from the map.",
        "It can't be determined.",
        "Not enough information",
        "Insufficient information to answer.",
        "Unknown",
        "It is impossible to tell.",
        "not determinable",
        "The layer attribute is not provided.",
        "Final answer: cannot be determined",
    ],
)
def test_refusals(text):
    assert answers.is_refusal(text)
    for t in ("choice", "distance", "direction8", "axis", "yes_no"):
        p = parse_answer(text, t)
        assert not p.ok and p.refusal and p.reason == "refusal"


@pytest.mark.parametrize("text", ["Answer: 12 m", "The unknown building is north", "B"])
def test_not_refusals(text):
    assert not answers.is_refusal(text)


# ------------------------------------------------------------------ edits


def _ops(*ops):
    return json.dumps({"operations": list(ops)})


def test_edit_full():
    text = (
        "Here is the edit:\n```json\n"
        + _ops(
            {"op": "translate", "dx": 10, "dy": -5.5},
            {"op": "rotate", "degrees_clockwise": 90, "origin": "centroid"},
            {"op": "scale", "factor": 2, "origin": [1, 2]},
            {"op": "set_attribute", "name": "name", "value": None},
        )
        + "\n```\nThis moves it {a bit}."
    )
    p = answers.parse_edit(text)
    ok(
        p,
        {
            "operations": [
                {"op": "translate", "dx": 10.0, "dy": -5.5},
                {"op": "rotate", "degrees_clockwise": 90.0, "origin": "centroid"},
                {"op": "scale", "factor": 2.0, "origin": [1.0, 2.0]},
                {"op": "set_attribute", "name": "name", "value": None},
            ]
        },
    )


def test_edit_takes_last_object_with_operations():
    text = (
        'Draft: {"operations": []}\nCorrected: {"operations": [{"op":"translate","dx":1,"dy":2}]} {"note": 1}'
    )
    ok(answers.parse_edit(text), {"operations": [{"op": "translate", "dx": 1.0, "dy": 2.0}]})


def test_edit_geometry_forms():
    ok(
        answers.parse_edit('{"geometry": {"type": "Point", "coordinates": [1, 2]}}'),
        {"geometry": {"type": "Point", "coordinates": [1, 2]}},
    )
    p = answers.parse_edit(
        '{"pixel_geometry": {"type": "Polygon", "coordinates": [[[0,0],[5,0],[5,5],[0,0]]]}}'
    )
    assert p.ok and "pixel_geometry" in p.value
    bad(answers.parse_edit('{"geometry": {"type": "Blob", "coordinates": [1, 2]}}'), "unknown geometry type")


@pytest.mark.parametrize(
    "text,reason",
    [
        ('{"operations": [{"op": "translate", "dx": NaN, "dy": 0}]}', "non-finite"),
        ('{"operations": [{"op": "translate", "dx": Infinity, "dy": 0}]}', "non-finite"),
        ('{"operations": [{"op": "scale", "factor": 0, "origin": "centroid"}]}', "factor must be positive"),
        ('{"operations": [{"op": "scale", "factor": -2, "origin": "centroid"}]}', "factor must be positive"),
        ('{"operations": [{"op": "explode"}]}', "unknown op"),
        ('{"operations": [{"op": "translate", "dx": 1e10, "dy": 0}]}', "too large"),
        ('{"operations": [{"op": "translate", "dx": "1", "dy": 0}]}', "not a number"),
        ('{"operations": [{"op": "rotate", "degrees_clockwise": 5}]}', "missing origin"),
        ('{"operations": [{"op": "rotate", "degrees_clockwise": 5, "origin": [1]}]}', "origin"),
        ('{"operations": [{"op": "set_attribute", "name": "", "value": 1}]}', "name"),
        ('{"operations": {"op": "translate"}}', "not a list"),
        (_ops(*[{"op": "translate", "dx": 1, "dy": 1}] * 21), "more than 20"),
        ('{"a":' * 50 + '{"operations": []}' + "}" * 50, "nested too deeply"),
        ("no json here", "no JSON object"),
        ('{"operations": [}', "invalid JSON"),
    ],
)
def test_edit_rejects(text, reason):
    bad(answers.parse_edit(text), reason)


def test_edit_refusal():
    p = answers.parse_edit("I cannot determine the required edit from this map.")
    assert p.refusal and not p.ok


# ------------------------------------------------------------------ dispatcher


def test_dispatcher():
    assert parse_answer("1.2 km", "perimeter").value == pytest.approx(1200.0)
    assert parse_answer("45°", "bearing").value == 45.0
    assert parse_answer("NE", "direction8").value == "NE"
    assert parse_answer("F2", "feature_id", valid_ids=["F1", "F2"]).value == "F2"
    assert parse_answer("F2, F1", "ordering", ids=["F1", "F2"]).value == ["F2", "F1"]
    assert parse_answer("(B)", "choice", n_options=3).value == "B"
    with pytest.raises(ValueError):
        parse_answer("x", "colour")
    with pytest.raises(ValueError):
        parse_answer("F1", "feature_id")
    for t in answers.ANSWER_TYPES:
        ctx = {"valid_ids": ["F1"], "ids": ["F1"]}
        assert isinstance(parse_answer("???", t, **ctx), Parsed)


@pytest.mark.parametrize(
    "reply",
    [
        "This cannot be done with the allowed operations.",
        "Undetermined.",
        "The information provided is insufficient to determine this.",
        "I don't have enough information to place the feature.",
        "Die Änderung ist mit den erlaubten Operationen nicht möglich.",
        "在允许的操作下无法满足所有约束。",
    ],
)
def test_an_edit_refused_in_other_words_gets_no_corrective_turn(reply):
    reading = answers.read_edit_reply(reply)
    assert reading.parsed.refusal and reading.retry_reason is None
