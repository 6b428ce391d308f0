"""Deterministic reading of a model's reply into one normalised answer -- never guessing.

Every ``parse_*`` function takes the raw reply and returns a :class:`Parsed` (``ok``, ``value``,
``reason``, ``refusal``) and never raises; only :func:`parse_answer` raises ``ValueError`` for an
unknown answer type or missing context. The policy is written down in the README, "How replies
are read".
"""

from __future__ import annotations

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
from scoring.answers.formats import ANSWER_FORMATS, AnswerFormat
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
    "ANSWER_FORMATS",
    "ANSWER_TYPES",
    "DIRECTIONS8",
    "EDIT_CAP",
    "MAX_CHARS",
    "MAX_MAGNITUDE",
    "MAX_OPERATIONS",
    "RAW_CAP",
    "SIXTEEN_POINT",
    "AnswerFormat",
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
    return ANSWER_FORMATS[kind].read(text, context)
