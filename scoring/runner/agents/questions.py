"""QA: each question is recognised by the pattern derived from its wording in the relation
catalogue, answered with a toolkit and replied in the requested form."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scoring.constraints.wording import NUMBER, Wording
from scoring.geometry.scene import Scene
from scoring.oracle import DIRECTIONS4, DIRECTIONS8, RELATIVE, sector
from scoring.relations import CATALOGUE
from scoring.relations.paper import (
    Q_LAYER_PAPER,
    Q_TOPOLOGY_CLASS,
    Q_WITHIN_DISTANCE_YES_NO,
    interval_contains,
)
from scoring.relations.paper_topology import most_specific_label
from scoring.relations.unanswerable import prompt_reason
from scoring.runner.agents.answer_memo import AnswerMemo
from scoring.runner.agents.prompt_view import PromptView
from scoring.runner.agents.toolkits import PROMPT_ERRORS, Toolkit, UnrecognisedError, ids_in
from scoring.support.registry import Registry
from scoring.vocab import REFUSAL

Slots = dict[str, str]
Handler = Callable[[Scene, Slots, Toolkit], Any]
# Answers are in the instance's answer form: an id, a number, a label, a list of ids or REFUSAL.


def _one_of(cands: list[str], ok: Callable[[str], bool]) -> str:
    hits = [c for c in cands if ok(c)]
    return hits[0] if hits else cands[0]


def _topology(predicate: str) -> Handler:
    def handler(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
        a = scene.geom(slots["a"])
        return _one_of(ids_in(slots["ids"]), lambda c: toolkit.topo(predicate, scene.geom(c), a))

    return handler


def _topology_class(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    """The most specific label (the paper protocol's order) that {b} has with respect to {a}."""
    return most_specific_label(scene.geom(slots["b"]), scene.geom(slots["a"]), toolkit.topo)


def _within_yes_no(scene: Scene, slots: Slots, toolkit: Toolkit) -> bool:
    return toolkit.min_distance(scene.geom(slots["a"]), scene.geom(slots["b"])) <= float(slots["d"])


def _direction(labels: tuple[str, ...]) -> Handler:
    def handler(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
        return labels[sector(toolkit.bearing(scene.geom(slots["a"]), scene.geom(slots["b"])), len(labels))[0]]

    return handler


def _bearing(scene: Scene, slots: Slots, toolkit: Toolkit) -> float:
    return round(toolkit.bearing(scene.geom(slots["a"]), scene.geom(slots["b"])), 3)


def _relative(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    b = toolkit.bearing(scene.geom(slots["a"]), scene.geom(slots["b"]))
    return RELATIVE[sector((b - float(slots["heading"])) % 360.0, 4)[0]]


def _axis(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    return toolkit.axis(scene.geom(slots["a"]))


def _pair(tool: str) -> Handler:
    def handler(scene: Scene, slots: Slots, toolkit: Toolkit) -> float:
        return round(getattr(toolkit, tool)(scene.geom(slots["a"]), scene.geom(slots["b"])), 4)

    return handler


def _perimeter(scene: Scene, slots: Slots, toolkit: Toolkit) -> float:
    return round(sum(toolkit.perimeter(scene.geom(i)) for i in ids_in(slots["ids"])), 4)


def _count_within(scene: Scene, slots: Slots, toolkit: Toolkit) -> int:
    d, a = float(slots["d"]), scene.geom(slots["a"])
    return sum(1 for i in ids_in(slots["ids"]) if toolkit.min_distance(a, scene.geom(i)) <= d)


def _nearest(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    a = scene.geom(slots["a"])
    return min(ids_in(slots["ids"]), key=lambda i: toolkit.proximity(a, scene.geom(i)))


def _density(scene: Scene, slots: Slots, toolkit: Toolkit) -> float:
    return round(toolkit.density(scene.geom(slots["a"]), [scene.geom(i) for i in ids_in(slots["ids"])]), 6)


def _along_order(scene: Scene, slots: Slots, toolkit: Toolkit) -> list[str]:
    line = scene.geom(slots["a"])
    return sorted(ids_in(slots["ids"]), key=lambda i: toolkit.along_position(line, scene.geom(i)))


def _before_after(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    line = scene.geom(slots["a"])
    lo, hi = int(slots["first"][1:]), int(slots["last"][1:])
    ids = (f"F{k}" for k in range(lo, hi + 1))
    order = sorted(ids, key=lambda i: toolkit.along_position(line, scene.geom(i)))
    k = order.index(slots["ref"])
    k = k + 1 if slots["word"] == "after" else k - 1
    return order[k] if 0 <= k < len(order) else REFUSAL


def _same_side(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    line = scene.geom(slots["a"])
    want = toolkit.side(line, scene.geom(slots["ref"]))
    return _one_of(ids_in(slots["ids"]), lambda i: toolkit.side(line, scene.geom(i)) == want)


def _between(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    a, b = scene.geom(slots["a"]), scene.geom(slots["b"])
    return _one_of(ids_in(slots["ids"]), lambda i: toolkit.strictly_between(a, b, scene.geom(i)))


def _layer(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    a, b = slots["a"], slots["b"]
    la, lb = toolkit.level(scene[a].props), toolkit.level(scene[b].props)
    if la is None or lb is None:
        return REFUSAL  # the layer / bridge / tunnel attributes are withheld
    if la == lb:
        return "neither: they are at the same level"
    return a if la > lb else b


def _connected(scene: Scene, slots: Slots, toolkit: Toolkit) -> str:
    a = scene.geom(slots["a"])
    return _one_of(ids_in(slots["ids"]), lambda i: toolkit.endpoint_connected(a, scene.geom(i)))


# How a kind of question is answered with the toolkit, by the method a relation's Solver names
# (scoring.relations.base.Solver); the argument picks the predicate, measure or direction scheme.
METHODS: Registry[Callable[[str | None], Handler]] = Registry("solver method")
for _name, _make in {
    "topology": lambda arg: _topology(str(arg)),
    "direction": lambda arg: _direction(DIRECTIONS4 if arg == "4" else DIRECTIONS8),
    "bearing": lambda arg: _bearing,
    "relative": lambda arg: _relative,
    "axis": lambda arg: _axis,
    "pair": lambda arg: _pair(str(arg)),
    "perimeter": lambda arg: _perimeter,
    "count_within": lambda arg: _count_within,
    "nearest": lambda arg: _nearest,
    "density": lambda arg: _density,
    "along_order": lambda arg: _along_order,
    "before_after": lambda arg: _before_after,
    "same_side": lambda arg: _same_side,
    "between": lambda arg: _between,
    "layer": lambda arg: _layer,
    "connected": lambda arg: _connected,
}.items():
    METHODS.add(_name, _make)

HANDLERS: dict[str, Handler] = {
    code: METHODS[rel.solver.method](rel.solver.arg) for code, rel in CATALOGUE.items()
}

# Every question wording of the catalogue, read back by the pattern derived from it.
QUESTION_SHAPES: list[tuple[Wording, Handler]] = [
    (wording, HANDLERS[code]) for code, rel in CATALOGUE.items() for wording in rel.questions
] + [  # the paper protocol's forms (scoring.relations.paper)
    (Q_TOPOLOGY_CLASS, _topology_class),
    (Q_WITHIN_DISTANCE_YES_NO, _within_yes_no),
    (Q_LAYER_PAPER, _layer),
]


def solve_question(scene: Scene, question: str, toolkit: Toolkit) -> Any:
    for wording, handler in QUESTION_SHAPES:
        slots = wording.read(question)
        if slots is not None:
            return handler(scene, slots, toolkit)
    raise UnrecognisedError("question wording not recognised")


def _num_of(text: str) -> float | None:
    m = re.search(r"-?\d[\d  ]*(?:\.\d+)?", text)
    if not m:
        return None
    try:
        return float(re.sub(r"[  ]", "", m.group(0)))
    except ValueError:
        return None


def _fmt_open(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(value)
    if isinstance(value, float):
        return f"{value:.6f}".rstrip("0").rstrip(".")
    return str(value)


def _pick_choice(value: Any, choices: list[str]) -> str | None:
    """The letter of the option matching the computed value (nearest, for numbers)."""
    text = _fmt_open(value) if not isinstance(value, (int, float)) or isinstance(value, bool) else None
    for i, c in enumerate(choices):
        if text is not None and c.strip() == text:
            return "ABCD"[i]
    if text is not None:
        for i, c in enumerate(choices):
            if text == REFUSAL and REFUSAL in c.lower():
                return "ABCD"[i]
        return None
    inside = [interval_contains(c, float(value), circular="°" in c) for c in choices]
    if any(r is not None for r in inside):  # the paper protocol's adjacent intervals
        if True in inside:
            return "ABCD"[inside.index(True)]
        # beyond every interval: the one whose nearer end is closest
        ends = [
            (min(abs(float(value) - n) for n in map(float, re.findall(NUMBER, c))), i)
            for i, c in enumerate(choices)
        ]
        return "ABCD"[min(ends)[1]]
    nums = [(_num_of(c), i) for i, c in enumerate(choices)]
    nums = [(abs(v - float(value)), i) for v, i in nums if v is not None]
    if not nums:
        return None
    return "ABCD"[min(nums)[1]]


ANSWERS = AnswerMemo()
_UNSOLVED = object()  # the question could not be answered from this scene (a refusal)


def _solved(scene: dict, question: str, toolkit: Toolkit) -> Any:
    try:
        return solve_question(Scene.from_geojson(scene), question, toolkit)
    except PROMPT_ERRORS:
        return _UNSOLVED


def answer_qa(v: PromptView, toolkit: Toolkit) -> str:
    if v.scene is None or not v.question:
        return _refuse(v)
    scene, question = v.scene, v.question
    if prompt_reason(scene, question, _answer_type(v)) is not None:  # absent or contradictory information
        return _refuse(v)
    if v.scene_text is None:  # a view not read from a prompt: nothing to key the memo by
        value = _solved(scene, question, toolkit)
    else:  # the same scene and question come back in the other form and modality
        value = ANSWERS.get((toolkit, v.scene_text, question), lambda: _solved(scene, question, toolkit))
    if value is _UNSOLVED:
        return _refuse(v)
    if v.answer_category == "choice" and v.choices:
        letter = _pick_choice(value, v.choices)
        return f"Answer: {letter}" if letter else _refuse(v)
    return f"Answer: {_fmt_open(value)}"


def _answer_type(v: PromptView) -> str | None:
    """The answer type of the relation whose wording the question has (None: no relation's)."""
    question = v.question or ""
    for code in CATALOGUE:
        rel = CATALOGUE[code]
        if any(w.read(question) is not None for w in rel.questions):
            return str(rel.answer_type)
    return None


def _refuse(v: PromptView) -> str:
    if v.answer_category == "choice":
        for i, c in enumerate(v.choices):
            if REFUSAL in c.lower():
                return f"Answer: {'ABCD'[i]}"
    return f"Answer: {REFUSAL}"
