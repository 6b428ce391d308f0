"""Facts and constraints: plain-data statements over a scene, evaluated by the oracle registry.

A fact records an oracle result an answer was derived from:
    {"measure": "min_distance", "args": ["F0", "F1"], "params": {}, "value": 12.3456, "unit": "m"}
A constraint states what an edited scene must satisfy:
    {"measure": "min_distance", "args": ["F0", "F1"], "params": {}, "op": "between",
     "min": 6, "max": 16, "unit": "m"}
Constraint ops: "is" (value equals `value`), "between" (min <= v <= max), "at_most", "at_least",
"angle_within" (circular |v - target| <= tolerance degrees).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from scoring import oracle
from scoring.constraints.wording import FEATURE_IDS, NUMBER, Wording, one_of
from scoring.geometry.scene import Scene
from scoring.oracle import MEASURES, ConstraintScene

CONSTRAINT_OPS = ("is", "between", "at_most", "at_least", "angle_within")
FACT_RTOL = 1e-6


class FactError(ValueError):
    pass


def evaluate(
    scene: Scene, measure: str, args: list[str], params: dict | None = None, initial: Scene | None = None
) -> Any:
    """The value of `measure` over the features `args` of `scene`."""
    if measure not in MEASURES:
        raise FactError(str(MEASURES.unknown(measure)))
    m = MEASURES[measure]
    params = params or {}
    missing = [a for a in args if a not in scene]
    if missing:
        raise FactError(f"{measure}: no feature {missing[0]} in the scene")
    if measure in oracle.ATTRIBUTE_MEASURES:
        values = [scene[a].props for a in args]
    elif measure == "displacement":
        if initial is None:
            raise FactError("displacement needs the initial scene")
        values = [initial.geom(args[0]), scene.geom(args[0])]
    else:
        values = [scene.geom(a) for a in args]
    out = m.fn(*values, **params)
    if m.kind == "id":
        return args[1:][out]
    if m.kind == "ids":
        return [args[1:][i] for i in out]
    if isinstance(out, float):
        return round(out, 6)
    return out


def make_fact(scene: Scene, measure: str, args: list[str], params: dict | None = None) -> dict:
    value = evaluate(scene, measure, args, params)
    fact = {"measure": measure, "args": list(args), "params": dict(params or {}), "value": value}
    if MEASURES[measure].unit:
        fact["unit"] = MEASURES[measure].unit
    return fact


def same_value(a: Any, b: Any, kind: str) -> bool:
    if kind == "angle":
        return oracle.angle_diff(float(a), float(b)) <= 1e-5
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=FACT_RTOL, abs_tol=1e-5)
    return a == b


def check_fact(scene: Scene, fact: dict) -> tuple[bool, Any]:
    """Re-evaluate a recorded fact on the scene: (holds, recomputed value)."""
    value = evaluate(scene, fact["measure"], fact["args"], fact.get("params"))
    return same_value(value, fact["value"], MEASURES[fact["measure"]].kind), value


def check_constraint(scene: Scene, c: Mapping[str, Any], initial: Scene | None = None) -> tuple[bool, Any]:
    """(satisfied, measured value) for one constraint on an edited scene."""
    value = evaluate(scene, c["measure"], c["args"], c.get("params"), initial=initial)
    op = c["op"]
    if op == "is":
        ok = same_value(value, c["value"], MEASURES[c["measure"]].kind)
    elif op == "between":
        ok = c["min"] <= value <= c["max"]
    elif op == "at_most":
        ok = value <= c["max"]
    elif op == "at_least":
        ok = value >= c["min"]
    elif op == "angle_within":
        ok = oracle.angle_diff(value, c["target"]) <= c["tolerance"]
    else:
        raise FactError(f"unknown constraint op {op!r}")
    return bool(ok), value


def check_constraints(
    scene: Scene, constraints: Sequence[Mapping[str, Any]], initial: Scene | None = None
) -> list[dict]:
    """Per-constraint results: [{"index", "ok", "value"}]."""
    out = []
    for i, c in enumerate(constraints):
        ok, value = check_constraint(scene, c, initial)
        out.append({"index": i, "ok": ok, "value": value})
    return out


def all_hold(scene: Scene, constraints: Sequence[Mapping[str, Any]], initial: Scene | None = None) -> bool:
    return all(check_constraint(scene, c, initial)[0] for c in constraints)


# ---------------------------------------------------------------- constraint wording
# Every constraint line of an edit instruction is one of these sentences; the `tools` agent reads
# the lines back with the patterns derived from the same sentences.


def constraint_scene(
    scene: Scene,
    c: Mapping[str, Any],
    target: str,
    initial: Scene | None = None,
    max_shift: float | None = None,
) -> ConstraintScene:
    """The geometries (and attributes) a constraint names, for its measure's drawing and edit
    seeds: its features, the target and a feature id given as its value (nearest)."""
    value = c.get("value")
    ids = [target, *c["args"], *([value] if isinstance(value, str) else [])]
    present = [f for f in dict.fromkeys(ids) if f in scene]
    before = initial if initial is not None else scene
    return ConstraintScene(
        constraint=c,
        geoms={f: scene.geom(f) for f in present},
        target=target,
        initial={f: before.geom(f) for f in dict.fromkeys(ids) if f in before},
        props={f: scene[f].props for f in present},
        max_shift=max_shift,
    )


DIRECTION_WORDS = {
    "N": "north",
    "NE": "north-east",
    "E": "east",
    "SE": "south-east",
    "S": "south",
    "SW": "south-west",
    "W": "west",
    "NW": "north-west",
}
UNIT_WORDS = {"m": " m", "per km2": " per km²", "count": "", "m2": " m²", "deg": "°"}
# What each slot name holds; any other slot is a feature id.
SLOT_KINDS = {
    "neg": "(?:not )?",
    "eps": NUMBER,
    "distance": NUMBER,
    "heading": NUMBER,
    "tolerance": NUMBER,
    "target": NUMBER,
    "start": NUMBER,
    "end": NUMBER,
    "min": NUMBER,
    "max": NUMBER,
    "value": NUMBER,
    "ids": FEATURE_IDS,
    "others": FEATURE_IDS,
    "order": r"F\d+(?: → F\d+)*",
    "word": one_of(*DIRECTION_WORDS.values()),
    "axis": one_of(*oracle.AXES),
    "label": r"[a-z][a-z ]*?",
    "unit": r"(?: m| per km²| m²|°)?",
}


def _wording(text: str, **slots: str) -> Wording:
    names = Wording(text).names
    return Wording(text, **{k: v for k, v in SLOT_KINDS.items() if k in names}, **slots)


# Boolean predicates; "{neg}" reads "not " when the predicate must be false.
PREDICATE_PHRASES = {
    "equals_eps": "{a} is {neg}topologically equal to {b} (within {eps:g} m)",
    "equals": "{a} is {neg}topologically equal to {b}",
    "disjoint": "{a} is {neg}disjoint from {b}",
    "intersects": "{a} does {neg}intersect {b}",
    "touches": "{a} does {neg}touch {b}",
    "touches_eps": "{a} does {neg}touch {b} (boundaries within {eps:g} m, interiors disjoint)",
    "crosses": "{a} does {neg}cross {b}",
    "crosses_eps": "{a} does {neg}cross {b} (crossings within {eps:g} m of an endpoint do not count)",
    "within": "{a} is {neg}within {b}",
    "overlaps": "{a} does {neg}overlap {b}",
    "covered_by": "{a} is {neg}covered by {b}",
    "boundary_covered": "{a} is {neg}covered by {b} while touching its boundary",
    "boundary_covered_eps": "{a} is {neg}covered by {b} while touching its boundary (within {eps:g} m)",
    "contained_properly": "{a} does {neg}lie in the interior of {b}",
    "contained_properly_eps": (
        "{a} does {neg}lie in the interior of {b} (at least {eps:g} m from its boundary)"
    ),
    "within_distance": "{a} is {neg}within {distance:g} m of {b}",
    "same_side": "{b} and {c} are {neg}on the same side of {a}",
    "strictly_between": "{c} does {neg}lie strictly between {a} and {b}",
    "level_above": "{a} is {neg}vertically above {b}",
    "endpoint_connected": "{a} is {neg}connected to {b} by a shared endpoint",
}
PREDICATES: dict[str, Wording] = {m: _wording(p) for m, p in PREDICATE_PHRASES.items()}
# Appended when a predicate's checker has a tolerance its sentence does not state.
WITHIN_EPS = " (within {eps:g} m)"

BEARING_WITHIN = _wording("the bearing from {a} to {b} is within {tolerance}° of {target}°")
# 4- and 8-sector constraints differ in width; each says which, with the sector's bounds.
DIRECTIONS = {
    f"direction{n}": _wording(
        f"{{b}} lies {{word}} of {{a}} ({n} compass sectors: the bearing from {{a}}'s centroid to "
        "{b}'s centroid is in [{start:g}°, {end:g}°))"
    )
    for n in (4, 8)
}
RELATIVE_AHEAD_BEHIND = _wording(
    "for an observer at {a} heading {heading:g}°, {b} is {side}", side=one_of("ahead", "behind")
)
RELATIVE_SIDE = _wording(
    "for an observer at {a} heading {heading:g}°, {b} is on the {side}", side=one_of("left", "right")
)
AXIS = _wording("{a} (its chord from first to last vertex) runs {axis}")
NEAREST = _wording("of {others}, the feature nearest to {a} is {nearest}")
ALONG_ORDER = _wording("along {a} from its first vertex, the order is {order}")
SIDE_OF_LINE = _wording(
    "{b} lies on the {side} side of {a} (looking from its first vertex to its last)",
    side=one_of("left", "right", "on"),
)
# The subject of a numeric constraint ("<subject> is between 6 and 16 m").
SUBJECTS: dict[str, Wording] = {
    "min_distance": _wording("the minimum distance between {a} and {b}"),
    "boundary_distance": _wording("the boundary distance between {a} and {b}"),
    "manhattan_distance": _wording("the Manhattan distance between {a} and {b}"),
    "hausdorff_distance": _wording("the Hausdorff distance between {a} and {b}"),
    "perimeter_total": _wording("the total perimeter of {ids}"),
    "area": _wording("the area of {ids}"),
    "along_position": _wording("the position of {b} along {a} (distance from {a}'s first vertex)"),
    "displacement": _wording("the displacement of {a}'s centroid from its initial position"),
    "count_within_distance": _wording("the number of {others} within {distance:g} m of {a}"),
    "poi_density": _wording("the density of {others} inside {a}"),
}
# Any other measure: its name in words ("line axis azimuth of F0").
GENERIC_PAIR_SUBJECT = _wording("{label} between {a} and {b}")
GENERIC_SUBJECT = _wording("{label} of {ids}")
BOUNDS: dict[str, str] = {
    "between": " is between {min} and {max}{unit}",
    "at_most": " is at most {max}{unit}",
    "at_least": " is at least {min}{unit}",
    "is": " is {value}",
}


def describe_constraint(c: Mapping[str, Any]) -> str:
    """A plain-English rendering of a constraint, used in instructions and reports."""
    m, args, params = c["measure"], c["args"], c.get("params", {})
    ids = {k: v for k, v in zip("abc", args, strict=False)}
    if c["op"] == "is" and MEASURES[m].kind == "bool":
        phrase = PREDICATES[m] if m in PREDICATES else _wording(m.replace("_", " "))
        if "eps" in params and "eps" not in phrase.names:  # the tolerance the checker uses is stated
            phrase = phrase.then(WITHIN_EPS, eps=NUMBER)
        return phrase.render(
            **{"a": "", "b": "", "c": "", **ids, **params, "neg": "" if c["value"] else "not "}
        )
    if m == "bearing" and c["op"] == "angle_within":
        return BEARING_WITHIN.render(**ids, tolerance=_n(c["tolerance"]), target=_n(c["target"]))
    if m in DIRECTIONS:
        labels = oracle.DIRECTIONS4 if m == "direction4" else oracle.DIRECTIONS8
        start, end = oracle.sector_bounds(c["value"], labels)
        return DIRECTIONS[m].render(**ids, word=DIRECTION_WORDS[c["value"]], start=start, end=end)
    if m == "relative_direction":
        wording = RELATIVE_AHEAD_BEHIND if c["value"] in ("ahead", "behind") else RELATIVE_SIDE
        return wording.render(**ids, heading=params["heading"], side=c["value"])
    if m == "axis":
        return AXIS.render(**ids, axis=c["value"])
    if m == "nearest":
        return NEAREST.render(**ids, others=", ".join(args[1:]), nearest=c["value"])
    if m == "along_order":
        return ALONG_ORDER.render(**ids, order=" → ".join(c["value"]))
    if m == "side_of_line":
        return SIDE_OF_LINE.render(**ids, side=c["value"])
    subject = SUBJECTS.get(m) or (GENERIC_PAIR_SUBJECT if len(args) == 2 else GENERIC_SUBJECT)
    values = {
        **ids,
        **params,
        "label": m.replace("_", " "),
        "ids": ", ".join(args),
        "others": ", ".join(args[1:]),
        "unit": UNIT_WORDS.get(c.get("unit", ""), ""),
        "min": _n(c["min"]) if "min" in c else "",
        "max": _n(c["max"]) if "max" in c else "",
        "value": c.get("value"),
    }
    return subject.render(**values) + BOUNDS.get(c["op"], BOUNDS["is"]).format(**values)


def _n(v: float) -> str:
    """A limit printed in full (no rounding: the stated range must be the checked range)."""
    return f"{v:.12g}"
