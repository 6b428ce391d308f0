"""Deterministic reading of a model's reply into one normalised answer -- never guessing.

Every ``parse_*`` function takes the raw reply and returns a :class:`Parsed` (``ok``, ``value``,
``reason``, ``refusal``) and never raises; only :func:`parse_answer` raises ``ValueError`` for an
unknown answer type or missing context. The policy is written down in the README, "How replies
are read".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scoring.answers.base import EDIT_CAP, MAX_CHARS, RAW_CAP, Parsed
from scoring.answers.choice import parse_choice, parse_yes_no
from scoring.answers.directions import (
    DIRECTIONS8,
    SIXTEEN_POINT,
    find_directions,
    parse_axis,
    parse_direction,
    parse_relative_direction,
    quadrant_bearings_to_azimuths,
)
from scoring.answers.edit import (
    MAX_MAGNITUDE,
    MAX_OPERATIONS,
    EditReading,
    parse_edit,
    read_edit_reply,
)
from scoring.answers.ids import parse_feature_id, parse_ordering
from scoring.answers.numbers import Quantity, distance_unit_factor, find_quantities, parse_number, same_value
from scoring.answers.text import (
    Prepared,
    answer_segment,
    clean_markdown,
    is_refusal,
    prepare,
    preprocess,
    strip_reasoning,
)
from scoring.answers.topology import parse_topology_class
from scoring.vocab import ANSWER_TYPES, AnswerType

__all__ = [
    "ANSWER_TYPES",
    "DIRECTIONS8",
    "EDIT_CAP",
    "MAX_CHARS",
    "MAX_MAGNITUDE",
    "MAX_OPERATIONS",
    "RAW_CAP",
    "SIXTEEN_POINT",
    "AnswerType",
    "EditReading",
    "Parsed",
    "Prepared",
    "Quantity",
    "answer_segment",
    "clean_markdown",
    "distance_unit_factor",
    "find_directions",
    "find_quantities",
    "is_refusal",
    "parse_answer",
    "parse_axis",
    "parse_choice",
    "parse_direction",
    "parse_edit",
    "parse_feature_id",
    "parse_number",
    "parse_ordering",
    "parse_relative_direction",
    "parse_topology_class",
    "parse_yes_no",
    "prepare",
    "preprocess",
    "quadrant_bearings_to_azimuths",
    "read_edit_reply",
    "same_value",
    "strip_reasoning",
]

_NUMBER_KIND = {
    AnswerType.DISTANCE: "distance",
    AnswerType.PERIMETER: "distance",
    AnswerType.AREA: "area",
    AnswerType.BEARING: "angle",
    AnswerType.DENSITY: "density",
    AnswerType.COUNT: "count",
}
_SIMPLE: dict[AnswerType, Callable[[Any], Parsed]] = {
    AnswerType.DIRECTION4: lambda t: parse_direction(t, "4"),
    AnswerType.DIRECTION8: lambda t: parse_direction(t, "8"),
    AnswerType.RELATIVE_DIRECTION: parse_relative_direction,
    AnswerType.AXIS: parse_axis,
    AnswerType.YES_NO: parse_yes_no,
    AnswerType.TOPOLOGY_CLASS: parse_topology_class,
    AnswerType.EDIT: parse_edit,
}


def parse_answer(text: Any, answer_type: str, **context: Any) -> Parsed:
    """Parse ``text`` as ``answer_type`` (one of :data:`ANSWER_TYPES`).

    Context: ``n_options`` and ``options`` (choice), ``valid_ids`` (feature_id, required),
    ``ids`` (ordering, required). Raises ``ValueError`` for an unknown type or missing context.
    """
    try:
        kind = AnswerType(answer_type)
    except ValueError:
        raise ValueError(
            f"unknown answer type {answer_type!r}; expected one of {', '.join(ANSWER_TYPES)}"
        ) from None
    if kind in _NUMBER_KIND:
        return parse_number(text, _NUMBER_KIND[kind])
    if kind in _SIMPLE:
        return _SIMPLE[kind](text)
    if kind is AnswerType.CHOICE:
        return parse_choice(text, context.get("n_options", 4), context.get("options"))
    if kind is AnswerType.FEATURE_ID:
        if "valid_ids" not in context:
            raise ValueError("answer type 'feature_id' needs valid_ids")
        return parse_feature_id(text, context["valid_ids"])
    if "ids" not in context:
        raise ValueError("answer type 'ordering' needs ids")
    return parse_ordering(text, context["ids"])
