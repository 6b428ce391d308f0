"""Reading replies that are no ordinary text: non-text values, huge and deeply nested bodies,
and fuzzing every parser (hypothesis): nothing raises, edits are validated."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_answers import IDS, ok

from scoring import answers
from scoring.answers import Parsed


def test_non_text_inputs():
    for value in (None, 12, ["B"], {"a": 1}):
        assert answers.parse_choice(value).reason == "not text"
        assert answers.parse_edit(value).reason == "not text"
    ok(answers.parse_choice(b"Answer: B"), "B")
    ok(answers.parse_choice(b"\xff\xfeAnswer: C"), "C")


# a hang guard, not a speed target: a parser that backtracks would take hours on these inputs
# (the speed targets are make bench's, tests/perf/reader_perf.py)
@pytest.mark.timeout(120)
def test_huge_and_deeply_nested_bodies_are_read():
    body = (
        "<think>" + "reasoning 12 m north (A) F1 " * 2_000_000 + "</think>\nFinal answer: (B), 7 m, F2, north"
    )
    assert len(body) > 50_000_000
    assert answers.parse_choice(body).value == "B"
    assert answers.parse_number(body, "distance").value == 7.0
    assert answers.parse_edit(body).reason
    assert not answers.parse_direction("<think>" * 100_000, "8").ok
    assert not answers.parse_edit("{" * 300_000).ok


PARSERS = [
    lambda s: answers.parse_choice(s),
    lambda s: answers.parse_number(s, "distance"),
    lambda s: answers.parse_number(s, "area"),
    lambda s: answers.parse_number(s, "density"),
    lambda s: answers.parse_number(s, "count"),
    lambda s: answers.parse_number(s, "angle"),
    lambda s: answers.parse_direction(s, "8"),
    lambda s: answers.parse_direction(s, "4"),
    answers.parse_relative_direction,
    answers.parse_axis,
    lambda s: answers.parse_feature_id(s, IDS),
    lambda s: answers.parse_ordering(s, ["F1", "F2"]),
    answers.parse_yes_no,
    answers.parse_edit,
]

_json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
)
_json = st.recursive(
    _json_leaf,
    lambda ch: st.one_of(
        st.lists(ch, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "op",
                    "dx",
                    "dy",
                    "operations",
                    "origin",
                    "factor",
                    "degrees_clockwise",
                    "name",
                    "value",
                    "geometry",
                ]
            ),
            ch,
            max_size=4,
        ),
    ),
    max_leaves=20,
)
_fragments = st.sampled_from(
    [
        "<think>",
        "</think>",
        "Final answer:",
        "**",
        "```",
        "{",
        "}",
        "[",
        "]",
        '"',
        "operations",
        "NaN",
        "1e999",
        "km",
        "°",
        "north",
        "F1",
        "(A)",
        " or ",
        "\n",
        "\ud800",
        "\x00",
        "1,234",
        "-",
        "per km²",
        "cannot be determined",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(),
        st.lists(_fragments, max_size=30).map("".join),
        _json.map(lambda j: "Answer:\n" + json.dumps({"operations": j}, allow_nan=True)),
    )
)
def test_fuzz_never_raises(text):
    for parse in PARSERS:
        p = parse(text)
        assert isinstance(p, Parsed)
        assert p.ok or p.reason
        if p.refusal:
            assert not p.ok
        if p.ok and isinstance(p.value, float):
            assert math.isfinite(p.value)


@settings(max_examples=200, deadline=None)
@given(_json)
def test_fuzz_edit_values_are_validated(j):
    p = answers.parse_edit(json.dumps({"operations": j}, allow_nan=True))
    if p.ok:
        ops = p.value["operations"]
        assert len(ops) <= answers.MAX_OPERATIONS
        for op in ops:
            assert op["op"] in {"translate", "rotate", "scale", "set_attribute"}
            for k in ("dx", "dy", "factor", "degrees_clockwise"):
                if k in op:
                    assert math.isfinite(op[k]) and abs(op[k]) <= answers.MAX_MAGNITUDE
            if op["op"] == "scale":
                assert op["factor"] > 0
