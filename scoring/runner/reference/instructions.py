"""Edit instructions back into constraint dicts: the inverse of
scoring.facts.describe_constraint."""

from __future__ import annotations

import re

from scoring import oracle
from scoring.facts import DIRECTION_WORDS, MEASURE_LABELS, PREDICATE_PHRASES
from scoring.oracle import AXES
from scoring.runner.reference.toolkits import ID_RX, NUM_RX, Unrecognised, ids_in


def _number(s: str) -> tuple[float, float]:
    """(value, half a unit of its last digit when it may be rounded, else 0). describe_constraint
    prints limits with up to 12 significant digits: only a number that long may be rounded, and a
    band printed so may then be up to half a unit narrower on each side than shown."""
    v = float(s)
    mant = s.lower().split("e")[0].lstrip("+-")
    digits = mant.replace(".", "").lstrip("0")
    if len(digits) < 12:
        return v, 0.0
    decimals = len(mant.split(".")[1]) if "." in mant else 0
    exp = int(s.lower().split("e")[1]) if "e" in s.lower() else 0
    return v, 0.5 * 10.0 ** (exp - decimals)


_WORD_DIRS = {w: k for k, w in DIRECTION_WORDS.items()}
_LABEL_MEASURES = {lab: m for m, lab in MEASURE_LABELS.items()}


def _phrase_regex(phrase: str) -> re.Pattern:
    rx = re.escape(phrase)
    for name in ("a", "b", "c"):
        rx = rx.replace(re.escape("{%s}" % name), f"(?P<{name}>F\\d+)")
    rx = rx.replace(re.escape("{neg}"), "(?P<neg>(?:not )?)")
    rx = re.sub(r"\\\{(\w+):g\\\}", lambda mm: f"(?P<p_{mm.group(1)}>{NUM_RX})", rx)
    if "{eps" not in phrase:  # describe_constraint appends the checker's tolerance when it has one
        rx += rf"(?: \(within (?P<p_eps>{NUM_RX}) m\))?"
    return re.compile("^" + rx + "$")


# The boolean predicate phrases, longest first so that qualified forms win ("... (within 0.05 m)").
_PREDICATES = sorted(
    ((m, _phrase_regex(p)) for m, p in PREDICATE_PHRASES.items()), key=lambda t: -len(PREDICATE_PHRASES[t[0]])
)


def parse_constraint(line: str) -> dict:
    """One instruction line back into a constraint dict (the inverse of describe_constraint)."""
    s = line.strip().rstrip(".")
    for measure, rx in _PREDICATES:
        m = rx.match(s)
        if m:
            args = [m.group(k) for k in ("a", "b", "c") if k in rx.groupindex]
            params = {
                k[2:]: float(val)
                for k, val in m.groupdict().items()
                if k.startswith("p_") and val is not None
            }
            if measure == "endpoint_connected" and "eps" not in params:
                # "coincides" with no tolerance stated: a floating-point translation lands within
                # a millimetre, not exactly.
                params["eps"] = 0.001
            return {
                "measure": measure,
                "args": args,
                "params": params,
                "op": "is",
                "value": not m.group("neg"),
            }
    if m := re.match(rf"^the bearing from ({ID_RX}) to ({ID_RX}) is within ({NUM_RX})° of ({NUM_RX})°$", s):
        return {
            "measure": "bearing",
            "args": [m.group(1), m.group(2)],
            "params": {},
            "op": "angle_within",
            "tolerance": float(m.group(3)),
            "target": float(m.group(4)),
        }
    if m := re.match(rf"^({ID_RX}) lies ([a-z-]+) of ({ID_RX})(?: \(([48]) compass sectors\b.*\))?$", s):
        if m.group(2) in _WORD_DIRS:
            # Without a stated sector count, aim at the eight-way sector: it lies inside the
            # four-way one of the same cardinal, so it satisfies either.
            measure = "direction4" if m.group(4) == "4" else "direction8"
            return {
                "measure": measure,
                "args": [m.group(3), m.group(1)],
                "params": {},
                "op": "is",
                "value": _WORD_DIRS[m.group(2)],
            }
    if m := re.match(
        rf"^for an observer at ({ID_RX}) heading ({NUM_RX})°, ({ID_RX}) is (?:on the )?"
        r"(ahead|behind|left|right)$",
        s,
    ):
        return {
            "measure": "relative_direction",
            "args": [m.group(1), m.group(3)],
            "params": {"heading": float(m.group(2))},
            "op": "is",
            "value": m.group(4),
        }
    if m := re.match(rf"^({ID_RX}) \(its chord from first to last vertex\) runs ({'|'.join(AXES)})$", s):
        return {"measure": "axis", "args": [m.group(1)], "params": {}, "op": "is", "value": m.group(2)}
    if m := re.match(rf"^of (.+), the feature nearest to ({ID_RX}) is ({ID_RX})$", s):
        return {
            "measure": "nearest",
            "args": [m.group(2), *ids_in(m.group(1))],
            "params": {},
            "op": "is",
            "value": m.group(3),
        }
    if m := re.match(rf"^along ({ID_RX}) from its first vertex, the order is (.+)$", s):
        order = ids_in(m.group(2))
        return {
            "measure": "along_order",
            "args": [m.group(1), *order],
            "params": {},
            "op": "is",
            "value": order,
        }
    if m := re.match(rf"^({ID_RX}) lies on the (left|right|on) side of ({ID_RX})", s):
        return {
            "measure": "side_of_line",
            "args": [m.group(3), m.group(1)],
            "params": {},
            "op": "is",
            "value": m.group(2),
        }
    return _parse_numeric(s)


def _parse_numeric(s: str) -> dict:
    m = re.match(
        rf"^(?P<subject>.+?) is (?:(?P<op>between|at most|at least) )?(?P<x>{NUM_RX})"
        rf"(?: and (?P<y>{NUM_RX}))?(?: m| per km²| m²|°)?$",
        s,
    )
    if not m:
        raise Unrecognised(f"constraint not recognised: {s[:80]}")
    subject, params = m.group("subject"), {}
    if sm := re.match(rf"^the displacement of ({ID_RX})'s centroid from its initial position$", subject):
        measure, args = "displacement", [sm.group(1)]
    elif sm := re.match(rf"^the position of ({ID_RX}) along ({ID_RX}) \(distance from", subject):
        measure, args = "along_position", [sm.group(2), sm.group(1)]
    elif sm := re.match(rf"^the number of (.+) within ({NUM_RX}) m of ({ID_RX})$", subject):
        measure, args = "count_within_distance", [sm.group(3), *ids_in(sm.group(1))]
        params = {"distance": float(sm.group(2))}
    elif sm := re.match(rf"^the density of (.+) inside ({ID_RX})$", subject):
        measure, args = "poi_density", [sm.group(2), *ids_in(sm.group(1))]
    elif sm := re.match(r"^(?P<label>.+?) (?:between|of) (?P<ids>F\d+(?:(?:, | and )F\d+)*)$", subject):
        label = sm.group("label")
        measure = _LABEL_MEASURES.get(label) or label.removeprefix("the ").replace(" ", "_")
        args = ids_in(sm.group("ids"))
    else:
        raise Unrecognised(f"constraint subject not recognised: {subject[:80]}")
    if measure not in oracle.MEASURES:
        raise Unrecognised(f"unknown measure {measure}")
    x, dx = _number(m.group("x"))
    op = (m.group("op") or "is").replace(" ", "_")
    c = {"measure": measure, "args": args, "params": params, "op": op}
    if op == "between":
        y, dy = _number(m.group("y"))
        c.update(min=x + dx, max=y - dy)
    elif op == "at_most":
        c["max"] = x - dx
    elif op == "at_least":
        c["min"] = x + dx
    else:
        c["value"] = x
    return c


def parse_instruction(text: str) -> tuple[list[dict], list[str]]:
    """(constraints, allowed operations) from the prompt text of an edit instance. A line no
    parser recognises is left out: the edit then aims at the constraints that were understood."""
    start = text.find("Instruction:")
    body = text[start:] if start >= 0 else text
    constraints = []
    for line in re.findall(r"^\d+\. (.+)$", body, flags=re.M):
        try:
            constraints.append(parse_constraint(line))
        except Unrecognised:
            continue
    m = re.search(r"^You may (.+?) F\d+\. Do not change", body, flags=re.M)
    allowed = []
    if m:
        words = m.group(1)
        for op, key in (
            ("translate", "translate"),
            ("rotate", "rotate"),
            ("scale", "scale"),
            ("set_attribute", "set an attribute"),
        ):
            if key in words:
                allowed.append(op)
    return constraints, allowed or ["translate", "rotate", "scale", "set_attribute"]
