"""Properties of the readers over generated replies: they never raise, and a value written in any
of the accepted forms is read back as that value."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoring.answers import ANSWER_TYPES, Parsed, parse_answer, read_edit_reply
from scoring.answers.directions import DIRECTIONS8

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
CONTEXT = {"valid_ids": ["F0", "F1", "F2"], "ids": ["F1", "F2", "F3"], "n_options": 4}
WRAPPERS = [
    "{}",
    "Answer: {}",
    "The answer is {}.",
    "Final answer: {}",
    "**Answer:** {}",
    "<answer>{}</answer>",
    "\\boxed{{{}}}",
    '{{"answer": "{}"}}',
    "<think>A, B, 3 m or 5 m?</think>\n{}",
    "Reasoning: the map shows F1 and F2.\nFinal answer: {}",
]
NASTY = st.one_of(
    st.text(max_size=300),
    st.builds(lambda w, t: w.format(t), st.sampled_from(WRAPPERS), st.text(max_size=60)),
    st.builds(lambda s, n: s * n, st.text(min_size=1, max_size=4), st.integers(1, 20_000)),
    st.sampled_from(
        ["NaN m", "inf m", "1e309 m", "-0 m", "{" * 500, '{"answer": NaN}', "\x00\ud800", "<think>"]
    ),
)


@SETTINGS
@given(text=NASTY, answer_type=st.sampled_from(ANSWER_TYPES))
def test_no_reader_raises(text, answer_type):
    parsed = parse_answer(text, answer_type, **CONTEXT)
    assert isinstance(parsed, Parsed) and isinstance(parsed.reason, str)
    assert parsed.ok or parsed.reason
    if answer_type == "edit":
        assert read_edit_reply(text).retry_reason is not None or parsed.ok


@SETTINGS
@given(
    value=st.floats(min_value=0.01, max_value=1e6, allow_nan=False).map(lambda v: round(v, 2)),
    unit=st.sampled_from([("m", 1.0), ("metres", 1.0), ("km", 1000.0), ("ft", 0.3048)]),
    wrapper=st.sampled_from(WRAPPERS),
)
def test_a_distance_is_read_back(value, unit, wrapper):
    spelling, factor = unit
    parsed = parse_answer(wrapper.format(f"{value} {spelling}"), "distance")
    assert parsed.ok and math.isclose(parsed.value, value * factor, rel_tol=1e-9)


@SETTINGS
@given(letter=st.sampled_from("ABCD"), wrapper=st.sampled_from(WRAPPERS[:8]), paren=st.booleans())
def test_an_option_letter_is_read_back(letter, wrapper, paren):
    parsed = parse_answer(wrapper.format(f"({letter})" if paren else letter), "choice", n_options=4)
    assert parsed.ok and parsed.value == letter


@SETTINGS
@given(direction=st.sampled_from(DIRECTIONS8), wrapper=st.sampled_from(WRAPPERS))
def test_a_direction_is_read_back(direction, wrapper):
    parsed = parse_answer(wrapper.format(direction), "direction8")
    assert parsed.ok and parsed.value == direction


@SETTINGS
@given(a=st.floats(1, 1e4).map(lambda v: round(v, 1)), b=st.floats(1, 1e4).map(lambda v: round(v, 1)))
def test_two_candidate_values_are_never_credited(a, b):
    parsed = parse_answer(f"Final answer: {a} m or {b} m", "distance")
    assert parsed.ok == (a == b)
