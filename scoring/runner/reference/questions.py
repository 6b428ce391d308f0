"""QA: one small parser per question shape (derived from the builders in scoring/relations/),
answered with a toolkit, replied in the requested form."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scoring.oracle import DIRECTIONS4, DIRECTIONS8, RELATIVE, sector
from scoring.runner.agents import PromptView
from scoring.runner.reference.toolkits import PROMPT_ERRORS, REFUSAL, Unrecognised, ids_in
from scoring.scene import Scene

# Each question shape: (regex over the question text, handler(scene, match, kit) -> answer).
# Answers are in the instance's answer form: an id, a number, a label, a list of ids or REFUSAL.
_TOPO_PHRASES = [
    ("is topologically equal to F0", "equals"),
    ("is disjoint from F0", "disjoint"),
    ("intersects F0", "intersects"),
    ("touches F0", "touches"),
    ("crosses F0", "crosses"),
    ("is covered by F0 while touching", "boundary_covered"),
    ("lies in the interior of F0", "contained_properly"),
    ("lies within F0", "within"),
    ("overlaps F0", "overlaps"),
]


def _one_of(cands: list[str], ok: Callable[[str], bool]) -> str:
    hits = [c for c in cands if ok(c)]
    return hits[0] if hits else cands[0]


def _q_topology(sc: Scene, m: re.Match, kit) -> Any:
    rest = m.group("rest")
    for phrase, pred in _TOPO_PHRASES:
        if rest.startswith(phrase):
            a = sc.geom("F0")
            return _one_of(ids_in(m.group("ids")), lambda c: kit.topo(pred, sc.geom(c), a))
    raise Unrecognised(f"topology phrase {rest[:40]!r}")


def _q_direction(sc, m, kit):
    n = len(m.group("opts").split(","))  # "N, E, S or W": 3 comma-separated parts
    labels = DIRECTIONS4 if n <= 3 else DIRECTIONS8
    b = kit.bearing(sc.geom(m.group("a")), sc.geom(m.group("b")))
    return labels[sector(b, len(labels))[0]]


def _q_bearing(sc, m, kit):
    return round(kit.bearing(sc.geom(m.group(1)), sc.geom(m.group(2))), 3)


def _q_relative(sc, m, kit):
    h = float(m.group("h"))
    b = kit.bearing(sc.geom(m.group("a")), sc.geom(m.group("b")))
    return RELATIVE[sector((b - h) % 360.0, 4)[0]]


def _q_axis(sc, m, kit):
    return kit.axis(sc.geom(m.group(1)))


def _pair(fn_name):
    def handler(sc, m, kit):
        return round(getattr(kit, fn_name)(sc.geom(m.group("a")), sc.geom(m.group("b"))), 4)

    return handler


def _q_perimeter(sc, m, kit):
    return round(sum(kit.perimeter(sc.geom(i)) for i in ids_in(m.group("ids"))), 4)


def _q_count_within(sc, m, kit):
    d, a = float(m.group("d")), sc.geom(m.group("a"))
    return sum(1 for i in ids_in(m.group("ids")) if kit.min_distance(a, sc.geom(i)) <= d)


def _q_nearest(sc, m, kit):
    a = sc.geom(m.group("a"))
    return min(ids_in(m.group("ids")), key=lambda i: kit.proximity(a, sc.geom(i)))


def _q_density(sc, m, kit):
    return round(kit.density(sc.geom(m.group("a")), [sc.geom(i) for i in ids_in(m.group("ids"))]), 6)


def _q_along_order(sc, m, kit):
    line = sc.geom(m.group("a"))
    return sorted(ids_in(m.group("ids")), key=lambda i: kit.along_position(line, sc.geom(i)))


def _q_before_after(sc, m, kit):
    line = sc.geom(m.group("a"))
    lo, hi = int(m.group("lo")[1:]), int(m.group("hi")[1:])
    order = sorted((f"F{k}" for k in range(lo, hi + 1)), key=lambda i: kit.along_position(line, sc.geom(i)))
    k = order.index(m.group("ref"))
    k = k + 1 if m.group("word") == "after" else k - 1
    return order[k] if 0 <= k < len(order) else REFUSAL


def _q_same_side(sc, m, kit):
    line = sc.geom(m.group("a"))
    want = kit.side(line, sc.geom(m.group("ref")))
    return _one_of(ids_in(m.group("ids")), lambda i: kit.side(line, sc.geom(i)) == want)


def _q_between(sc, m, kit):
    a, b = sc.geom(m.group("a")), sc.geom(m.group("b"))
    return _one_of(ids_in(m.group("ids")), lambda i: kit.strictly_between(a, b, sc.geom(i)))


def _q_layer(sc, m, kit):
    a, b = m.group("a"), m.group("b")
    la, lb = kit.level(sc[a].props), kit.level(sc[b].props)
    if la is None or lb is None:
        return REFUSAL  # the layer / bridge / tunnel attributes are withheld
    if la == lb:
        return "neither: they are at the same level"
    return a if la > lb else b


def _q_connected(sc, m, kit):
    a = sc.geom(m.group("a"))
    return _one_of(ids_in(m.group("ids")), lambda i: kit.endpoint_connected(a, sc.geom(i)))


QUESTION_SHAPES: list[tuple[re.Pattern, Callable]] = [
    (re.compile(p, re.S), h)
    for p, h in [
        (
            r"^Exactly one of the features (?P<ids>.+?) (?P<rest>(?:is|intersects|touches|crosses|lies|overlaps).*)",
            _q_topology,
        ),
        (
            r"In which direction \((?P<opts>[^)]*)\) does (?P<b>F\d+) lie as seen from (?P<a>F\d+)\?",
            _q_direction,
        ),
        (r"What is the bearing from (F\d+) to (F\d+)", _q_bearing),
        (
            r"observer stands at (?P<a>F\d+) and moves along heading (?P<h>[-\d.]+)°.*?is (?P<b>F\d+) ahead",
            _q_relative,
        ),
        (r"orientation of road (F\d+)", _q_axis),
        (r"What is the minimum distance between (?P<a>F\d+) and (?P<b>F\d+)", _pair("min_distance")),
        (
            r"distance between the boundary of (?P<a>F\d+) and the boundary of (?P<b>F\d+)",
            _pair("boundary_distance"),
        ),
        (r"Manhattan distance .*? between the centroids of (?P<a>F\d+) and (?P<b>F\d+)", _pair("manhattan")),
        (r"Hausdorff distance between (?P<a>F\d+) and (?P<b>F\d+)", _pair("hausdorff")),
        (r"total perimeter of (?P<ids>[F\d, and]+?) together", _q_perimeter),
        (r"How many of the features (?P<ids>.+?) lie within (?P<d>[\d.]+) m of (?P<a>F\d+)", _q_count_within),
        (r"Which of the features (?P<ids>.+?) is nearest to (?P<a>F\d+)", _q_nearest),
        (r"Of the points of interest (?P<ids>.+?), count those lying in (?P<a>F\d+)", _q_density),
        (r"^Order (?P<ids>.+?) by their position along road (?P<a>F\d+)", _q_along_order),
        (
            r"along route (?P<a>F\d+) .*?which of the features (?P<lo>F\d+)-(?P<hi>F\d+) is passed immediately "
            r"(?P<word>after|before) (?P<ref>F\d+)",
            _q_before_after,
        ),
        (
            r"Which of the features (?P<ids>.+?) lies on the same side of road (?P<a>F\d+) as (?P<ref>F\d+)",
            _q_same_side,
        ),
        (r"Which of the features (?P<ids>.+?) lies strictly between (?P<a>F\d+) and (?P<b>F\d+)", _q_between),
        (r"Roads (?P<a>F\d+) and (?P<b>F\d+) cross in plan view\. Which of them lies above", _q_layer),
        (r"Which of the roads (?P<ids>.+?) is connected to (?P<a>F\d+)", _q_connected),
    ]
]


def solve_question(scene: Scene, question: str, kit) -> Any:
    for rx, handler in QUESTION_SHAPES:
        m = rx.search(question)
        if m:
            return handler(scene, m, kit)
    raise Unrecognised("question wording not recognised")


def _num_of(text: str) -> float | None:
    m = re.search(r"-?\d[\d  ]*(?:\.\d+)?", text)
    if not m:
        return None
    try:
        return float(re.sub(r"[  ]", "", m.group(0)))
    except ValueError:
        return None


def _fmt_open(value: Any) -> str:
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
    nums = [(_num_of(c), i) for i, c in enumerate(choices)]
    nums = [(abs(v - float(value)), i) for v, i in nums if v is not None]
    if not nums:
        return None
    return "ABCD"[min(nums)[1]]


def answer_qa(v: PromptView, kit) -> str:
    if v.scene is None or not v.question:
        return _refuse(v)
    try:
        scene = Scene.from_geojson(v.scene)
        value = solve_question(scene, v.question, kit)
    except PROMPT_ERRORS:
        return _refuse(v)
    if v.answer_category == "choice" and v.choices:
        letter = _pick_choice(value, v.choices)
        return f"Answer: {letter}" if letter else _refuse(v)
    return f"Answer: {_fmt_open(value)}"


def _refuse(v: PromptView) -> str:
    if v.answer_category == "choice":
        for i, c in enumerate(v.choices):
            if REFUSAL in c.lower():
                return f"Answer: {'ABCD'[i]}"
    return f"Answer: {REFUSAL}"
