"""Answer formats: everything the tool knows about one answer type on one record. How the prompt
asks for it (its instruction), how a reply is read (the parser), how the reading is checked (with
its tolerance and unit), and how the `chance` agent guesses one. The prompts, the reader, the
catalogue's checker and the agents all read this registry; a new answer format is one record here
and its name in `scoring.vocab.AnswerType`.

>>> ANSWER_FORMATS["distance"].instruction
'Answer with a single number in metres (no unit), e.g. "Answer: 125.4".'
>>> ANSWER_FORMATS["distance"].check(12.0, 12.8, None), ANSWER_FORMATS["distance"].check(12.0, 13.2, None)
(True, False)
>>> ANSWER_FORMATS["bearing"].check(359.5, 0.2, None)  # bearings are compared circularly
True
>>> ANSWER_FORMATS["count"].read("3 buildings within 50 m", {}).value
3
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.answers.base import Parsed
from scoring.answers.choice import parse_choice, parse_yes_no
from scoring.answers.directions import parse_axis, parse_direction, parse_relative_direction
from scoring.answers.edit import parse_edit
from scoring.answers.ids import parse_feature_id, parse_ordering
from scoring.answers.numbers import parse_number
from scoring.answers.topology import TOPOLOGY_CLASS_NAMES, parse_topology_class
from scoring.oracle.core import angle_diff
from scoring.support.registry import Registry
from scoring.vocab import REFUSAL, AnswerType

Reader = Callable[[Any, Mapping[str, Any]], Parsed]  # (reply, context) -> reading
Checker = Callable[[Any, Any, float | None], bool]  # (reference, value, tolerance) -> right?
# (rng, feature ids of the scene, options offered) -> an answer in the format; chance's guess
Guesser = Callable[[random.Random, Sequence[str], Sequence[str]], str]


@dataclass(frozen=True, kw_only=True)
class AnswerFormat:
    """One answer type: its instruction, reader, checker, tolerance, unit and random guess."""

    type: AnswerType
    category: str  # the instruction's name, shared by types asked alike (distance, perimeter)
    instruction: str  # what the prompt asks for
    read: Reader
    check: Checker
    guess: Guesser
    tolerance: float | None = None  # of the deterministic scorer, in `unit`
    unit: str | None = None
    # the JSON schema of a structured answer's value (`--answer-format json`)
    value_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "string"})


def exact(reference: Any, value: Any, tolerance: float | None) -> bool:
    """The reading equals the reference."""
    return bool(value == reference)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


def _within(default: float) -> Checker:
    def check(reference: Any, value: Any, tolerance: float | None) -> bool:
        tol = default if tolerance is None else tolerance
        return _number(value) and abs(value - reference) <= tol + 1e-9

    return check


def _circular(default: float) -> Checker:
    # a bearing's tolerance is the format's own: the instance's recorded tolerance is the same 1°
    def check(reference: Any, value: Any, tolerance: float | None) -> bool:
        return _number(value) and angle_diff(value, reference) <= default + 1e-9

    return check


def _same_count(reference: Any, value: Any, tolerance: float | None) -> bool:
    return isinstance(value, int | float) and float(value) == float(reference)


def _same_order(reference: Any, value: Any, tolerance: float | None) -> bool:
    return list(value) == list(reference)


def _needs(key: str, answer_type: str) -> Callable[[Mapping[str, Any]], Any]:
    def get(context: Mapping[str, Any]) -> Any:
        if key not in context:
            raise ValueError(f"answer type {answer_type!r} needs {key}")
        return context[key]

    return get


def _question(context: Mapping[str, Any]) -> str:
    """The question's wording, when the caller knows it (the reader uses what it names)."""
    q = context.get("question")
    return q if isinstance(q, str) else ""


def _pick(options: Sequence[str]) -> Guesser:
    return lambda rng, ids, choices: rng.choice(list(options))


def _ordering_guess(rng: random.Random, ids: Sequence[str], choices: Sequence[str]) -> str:
    order = [i for i in ids if i != "F0"]
    rng.shuffle(order)
    return ", ".join(order)


ANSWER_FORMATS: Registry[AnswerFormat] = Registry("answer type")


def answer_format(answer_type: AnswerType, category: str, instruction: str, **fields: Any) -> AnswerFormat:
    """Register the format of `answer_type` (keyword fields as AnswerFormat's)."""
    record = AnswerFormat(type=answer_type, category=category, instruction=instruction, **fields)
    return ANSWER_FORMATS.add(answer_type, record)


answer_format(
    AnswerType.CHOICE,
    "choice",
    "Answer with the option letter only (A, B, C or D). If the information given is insufficient, "
    "choose the option saying that it cannot be determined if there is one; otherwise answer "
    '"cannot be determined".',
    read=lambda t, c: parse_choice(t, c.get("n_options", 4), c.get("options"), _question(c)),
    check=exact,
    guess=lambda rng, ids, choices: rng.choice("ABCD"[: max(1, min(4, len(choices) or 4))]),
    value_schema={"type": "string", "enum": list("ABCD")},
)
for _length in (AnswerType.DISTANCE, AnswerType.PERIMETER):  # asked, read and checked alike
    answer_format(
        _length,
        "metres",
        'Answer with a single number in metres (no unit), e.g. "Answer: 125.4".',
        read=lambda t, c: parse_number(t, "distance", _question(c)),
        check=_within(1.0),
        guess=lambda rng, ids, choices: f"{rng.uniform(1, 1000):.1f}",
        tolerance=1.0,
        unit="m",
        value_schema={"type": "number"},
    )
answer_format(
    AnswerType.AREA,
    "square_metres",
    'Answer with a single number in square metres (no unit), e.g. "Answer: 5300".',
    read=lambda t, c: parse_number(t, "area", _question(c)),
    check=exact,
    guess=lambda rng, ids, choices: f"{rng.uniform(10, 50000):.0f}",
    value_schema={"type": "number"},
)
answer_format(
    AnswerType.BEARING,
    "degrees",
    'Answer with a single number in degrees, clockwise from north (0–360), e.g. "Answer: 45".',
    read=lambda t, c: parse_number(t, "angle", _question(c)),
    check=_circular(1.0),
    guess=lambda rng, ids, choices: str(rng.randrange(0, 360)),
    tolerance=1.0,
    unit="deg",
    value_schema={"type": "number"},
)
answer_format(
    AnswerType.DENSITY,
    "density",
    "Answer with a single number in POIs per square kilometre (no unit), with at least three "
    'decimals, e.g. "Answer: 1234.567".',
    read=lambda t, c: parse_number(t, "density", _question(c)),
    check=_within(0.001),
    guess=lambda rng, ids, choices: f"{rng.uniform(0, 5000):.3f}",
    tolerance=0.001,
    unit="per km2",
    value_schema={"type": "number"},
)
answer_format(
    AnswerType.COUNT,
    "count",
    'Answer with a single whole number, e.g. "Answer: 3".',
    read=lambda t, c: parse_number(t, "count", _question(c)),
    check=_same_count,
    guess=lambda rng, ids, choices: str(rng.randrange(0, 10)),
    unit="count",
    value_schema={"type": "integer", "minimum": 0},
)
answer_format(
    AnswerType.DIRECTION4,
    "direction4",
    "Answer with one of the four compass directions N, E, S or W.",
    read=lambda t, c: parse_direction(t, "4", _question(c)),
    check=exact,
    guess=_pick(["N", "E", "S", "W"]),
    value_schema={"type": "string", "enum": ["N", "E", "S", "W"]},
)
answer_format(
    AnswerType.DIRECTION8,
    "direction",
    "Answer with a compass direction (N, NE, E, SE, S, SW, W or NW).",
    read=lambda t, c: parse_direction(t, "8", _question(c)),
    check=exact,
    guess=_pick(["N", "NE", "E", "SE", "S", "SW", "W", "NW"]),
    value_schema={"type": "string", "enum": ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]},
)
answer_format(
    AnswerType.RELATIVE_DIRECTION,
    "relative_direction",
    "Answer with one of: ahead, behind, left, right.",
    read=lambda t, c: parse_relative_direction(t, _question(c)),
    check=exact,
    guess=_pick(["ahead", "behind", "left", "right"]),
    value_schema={"type": "string", "enum": ["ahead", "behind", "left", "right"]},
)
answer_format(
    AnswerType.AXIS,
    "axis",
    "Answer with one of the axes N-S, NE-SW, E-W or NW-SE.",
    read=lambda t, c: parse_axis(t, _question(c)),
    check=exact,
    guess=_pick(["N-S", "NE-SW", "E-W", "NW-SE"]),
    value_schema={"type": "string", "enum": ["N-S", "NE-SW", "E-W", "NW-SE"]},
)
answer_format(
    AnswerType.FEATURE_ID,
    "feature_id",
    'Answer with a feature id, e.g. "Answer: F3".',
    read=lambda t, c: parse_feature_id(t, _needs("valid_ids", "feature_id")(c), _question(c)),
    check=exact,
    guess=lambda rng, ids, choices: rng.choice(list(ids)),
)
answer_format(
    AnswerType.ORDERING,
    "ordering",
    'Answer with the feature ids in order, separated by commas, e.g. "Answer: F2, F1, F3".',
    read=lambda t, c: parse_ordering(t, _needs("ids", "ordering")(c), _question(c)),
    check=_same_order,
    guess=_ordering_guess,
    value_schema={"type": "array", "items": {"type": "string"}},
)
answer_format(
    AnswerType.YES_NO,
    "boolean",
    'Answer with "yes" or "no".',
    read=lambda t, c: parse_yes_no(t, _question(c)),
    check=exact,
    guess=_pick(["yes", "no"]),
    value_schema={"type": "boolean"},
)
answer_format(
    AnswerType.TOPOLOGY_CLASS,
    "topology_class",
    "Answer with one label: equals, within, contains, covered by, covers, touches, crosses, overlaps, "
    "intersects or disjoint.",
    read=lambda t, c: parse_topology_class(t, _question(c)),
    check=exact,
    guess=_pick(TOPOLOGY_CLASS_NAMES),
    value_schema={"type": "string", "enum": [str(c) for c in TOPOLOGY_CLASS_NAMES]},
)
answer_format(
    AnswerType.EDIT,
    "text",  # an edit has no answer instruction
    "Answer with a short phrase.",
    read=lambda t, c: parse_edit(t),
    check=exact,
    guess=lambda rng, ids, choices: rng.choice(["yes", "no", REFUSAL, *ids]),
)


def instructions() -> dict[str, str]:
    """Every answer instruction by category, as the prompts state them."""
    return {f.category: f.instruction for f in ANSWER_FORMATS.values()}


def format_of_category(category: str) -> AnswerFormat:
    """The first format asked with the instruction `category`; for a prompt whose instruction is
    none of them, the instruction-less one ("text", an edit's), whose guess is any short answer."""
    found = next((f for f in ANSWER_FORMATS.values() if f.category == category), None)
    return found or ANSWER_FORMATS[AnswerType.EDIT]
