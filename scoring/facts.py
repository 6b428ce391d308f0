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
from typing import Any

from scoring import oracle
from scoring.oracle import MEASURES
from scoring.scene import Scene

CONSTRAINT_OPS = ("is", "between", "at_most", "at_least", "angle_within")
FACT_RTOL = 1e-6


class FactError(ValueError):
    pass


def evaluate(
    scene: Scene, measure: str, args: list[str], params: dict | None = None, initial: Scene | None = None
) -> Any:
    """The value of `measure` over the features `args` of `scene`."""
    if measure not in MEASURES:
        raise FactError(f"unknown measure {measure!r}")
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


def check_constraint(scene: Scene, c: dict, initial: Scene | None = None) -> tuple[bool, Any]:
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


def check_constraints(scene: Scene, constraints: list[dict], initial: Scene | None = None) -> list[dict]:
    """Per-constraint results: [{"index", "ok", "value"}]."""
    out = []
    for i, c in enumerate(constraints):
        ok, value = check_constraint(scene, c, initial)
        out.append({"index": i, "ok": ok, "value": value})
    return out


def all_hold(scene: Scene, constraints: list[dict], initial: Scene | None = None) -> bool:
    return all(check_constraint(scene, c, initial)[0] for c in constraints)


def describe_constraint(c: dict) -> str:
    """A plain-English rendering of a constraint, used in instructions and reports."""
    m, args = c["measure"], c["args"]
    unit = c.get("unit", "")
    a = args[0] if args else ""
    b = args[1] if len(args) > 1 else ""
    params = c.get("params", {})
    if c["op"] == "is" and MEASURES[m].kind == "bool":
        phrase = PREDICATE_PHRASES.get(m, m.replace("_", " "))
        if "eps" in params and "{eps" not in phrase:  # the tolerance the checker uses is stated
            phrase += " (within {eps:g} m)"
        neg = "" if c["value"] else "not "
        return phrase.format(a=a, b=b, c=args[2] if len(args) > 2 else "", neg=neg, **params)
    if m == "bearing" and c["op"] == "angle_within":
        return f"the bearing from {a} to {b} is within {_n(c['tolerance'])}° of {_n(c['target'])}°"
    if m in ("direction4", "direction8"):
        # 4- and 8-sector constraints differ in width; say which, with the sector's bounds.
        n, labels = (4, oracle.DIRECTIONS4) if m == "direction4" else (8, oracle.DIRECTIONS8)
        lo, hi = oracle.sector_bounds(c["value"], labels)
        return (
            f"{b} lies {DIRECTION_WORDS[c['value']]} of {a} ({n} compass sectors: the bearing from "
            f"{a}'s centroid to {b}'s centroid is in [{lo:g}°, {hi:g}°))"
        )
    if m == "relative_direction":
        return (
            f"for an observer at {a} heading {params['heading']:g}°, {b} is {c['value']}"
            if c["value"] in ("ahead", "behind")
            else f"for an observer at {a} heading {params['heading']:g}°, {b} is on the {c['value']}"
        )
    if m == "axis":
        return f"{a} (its chord from first to last vertex) runs {c['value']}"
    if m == "nearest":
        return f"of {', '.join(args[1:])}, the feature nearest to {a} is {c['value']}"
    if m == "along_order":
        return f"along {a} from its first vertex, the order is {' → '.join(c['value'])}"
    if m == "side_of_line":
        return f"{b} lies on the {c['value']} side of {a} (looking from its first vertex to its last)"
    label = MEASURE_LABELS.get(m, m.replace("_", " "))
    subject = (
        f"{label} of {', '.join(args)}"
        if m == "perimeter_total"
        else (f"{label} between {a} and {b}" if len(args) == 2 else f"{label} of {', '.join(args)}")
    )
    if m == "along_position":
        subject = f"the position of {b} along {a} (distance from {a}'s first vertex)"
    if m == "displacement":
        subject = f"the displacement of {a}'s centroid from its initial position"
    if m == "count_within_distance":
        subject = f"the number of {', '.join(args[1:])} within {params['distance']:g} m of {a}"
    if m == "poi_density":
        subject = f"the density of {', '.join(args[1:])} inside {a}"
    u = {"m": " m", "per km2": " per km²", "count": "", "m2": " m²", "deg": "°"}.get(unit, "")
    if c["op"] == "between":
        return f"{subject} is between {_n(c['min'])} and {_n(c['max'])}{u}"
    if c["op"] == "at_most":
        return f"{subject} is at most {_n(c['max'])}{u}"
    if c["op"] == "at_least":
        return f"{subject} is at least {_n(c['min'])}{u}"
    return f"{subject} is {c.get('value')}"


def _n(v: float) -> str:
    """A limit printed in full (no rounding: the stated range must be the checked range)."""
    return f"{v:.12g}"


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
PREDICATE_PHRASES = {
    "equals_eps": "{a} is {neg}topologically equal to {b} (within {eps:g} m)",
    "equals": "{a} is {neg}topologically equal to {b}",
    "disjoint": "{a} is {neg}disjoint from {b}",
    "intersects": "{a} does {neg}intersect {b}",
    "touches": "{a} does {neg}touch {b}",
    "touches_eps": "{a} does {neg}touch {b} (boundaries within {eps:g} m, interiors disjoint)",
    "crosses": "{a} does {neg}cross {b}",
    "within": "{a} is {neg}within {b}",
    "overlaps": "{a} does {neg}overlap {b}",
    "covered_by": "{a} is {neg}covered by {b}",
    "boundary_covered": "{a} is {neg}covered by {b} while touching its boundary",
    "boundary_covered_eps": "{a} is {neg}covered by {b} while touching its boundary (within {eps:g} m)",
    "contained_properly": "{a} does {neg}lie in the interior of {b}",
    "contained_properly_eps": "{a} does {neg}lie in the interior of {b} (at least {eps:g} m from its boundary)",
    "within_distance": "{a} is {neg}within {distance:g} m of {b}",
    "same_side": "{b} and {c} are {neg}on the same side of {a}",
    "strictly_between": "{c} does {neg}lie strictly between {a} and {b}",
    "level_above": "{a} is {neg}vertically above {b}",
    "endpoint_connected": "{a} is {neg}connected to {b} by a shared endpoint",
}
MEASURE_LABELS = {
    "min_distance": "the minimum distance",
    "boundary_distance": "the boundary distance",
    "manhattan_distance": "the Manhattan distance",
    "hausdorff_distance": "the Hausdorff distance",
    "perimeter_total": "the total perimeter",
    "area": "the area",
}
