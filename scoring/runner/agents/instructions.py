"""Edit instructions back into constraint dicts: each line is read with the patterns derived from
the sentences `scoring.constraints.facts.describe_constraint` renders (the same definitions), and the allowed
operations with those of `scoring.constraints.edits.edit_instruction`."""

from __future__ import annotations

import re
from collections.abc import Callable

from scoring import oracle
from scoring.constraints import facts
from scoring.constraints.edits import INSTRUCTION_ALLOWED, allowed_operations_in
from scoring.constraints.wording import Wording, ids_in
from scoring.runner.agents.toolkits import UnrecognisedError
from scoring.vocab import EDIT_OPS, EditOp

Slots = dict[str, str]


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


def _ids(s: Slots) -> list[str]:
    return [s[k] for k in ("a", "b", "c") if s.get(k)]


def _predicate(measure: str) -> Callable[[Slots], dict]:
    def read(s: Slots) -> dict:
        params = {k: float(s[k]) for k in ("eps", "distance") if s.get(k)}
        if measure == "endpoint_connected" and "eps" not in params:
            # "coincides" with no tolerance stated: a floating-point translation lands within a
            # millimetre, not exactly.
            params["eps"] = 0.001
        return {"measure": measure, "args": _ids(s), "params": params, "op": "is", "value": not s["neg"]}

    return read


def _categorical(measure: str, value: Callable[[Slots], object], **params: str) -> Callable[[Slots], dict]:
    def read(s: Slots) -> dict:
        return {
            "measure": measure,
            "args": _ids(s),
            "params": {k: float(s[v]) for k, v in params.items()},
            "op": "is",
            "value": value(s),
        }

    return read


def _bearing_within(s: Slots) -> dict:
    return {
        "measure": "bearing",
        "args": _ids(s),
        "params": {},
        "op": "angle_within",
        "tolerance": float(s["tolerance"]),
        "target": float(s["target"]),
    }


def _nearest(s: Slots) -> dict:
    return {
        "measure": "nearest",
        "args": [s["a"], *ids_in(s["others"])],
        "params": {},
        "op": "is",
        "value": s["nearest"],
    }


def _along_order(s: Slots) -> dict:
    order = ids_in(s["order"])
    return {"measure": "along_order", "args": [s["a"], *order], "params": {}, "op": "is", "value": order}


def _bounded(measure: str | None, op: str) -> Callable[[Slots], dict]:
    """A numeric constraint; measure None: named by the generic subject's {label}."""

    def read(s: Slots) -> dict:
        name = measure if measure is not None else s["label"].replace(" ", "_")
        if name not in oracle.MEASURES:
            raise UnrecognisedError(f"unknown measure {name}")
        if s.get("others") is not None:
            args = [s["a"], *ids_in(s["others"])]
        elif s.get("ids") is not None:
            args = ids_in(s["ids"])
        else:
            args = _ids(s)
        params = {"distance": float(s["distance"])} if s.get("distance") else {}
        c: dict = {"measure": name, "args": args, "params": params, "op": op}
        if op == "between":
            (lo, dlo), (hi, dhi) = _number(s["min"]), _number(s["max"])
            c.update(min=lo + dlo, max=hi - dhi)
        elif op == "at_most":
            hi, dhi = _number(s["max"])
            c["max"] = hi - dhi
        elif op == "at_least":
            lo, dlo = _number(s["min"])
            c["min"] = lo + dlo
        else:
            c["value"] = float(s["value"])
        return c

    return read


def _statements() -> list[tuple[Wording, Callable[[Slots], dict]]]:
    out: list[tuple[Wording, Callable[[Slots], dict]]] = []
    # A predicate stating its own tolerance first: "equals" with the appended tolerance reads
    # like "equals_eps", which is what such a sentence means.
    out += [(wording, _predicate(measure)) for measure, wording in facts.PREDICATES.items()]
    out += [
        (wording.then(facts.WITHIN_EPS, eps=facts.NUMBER), _predicate(measure))
        for measure, wording in facts.PREDICATES.items()
        if "eps" not in wording.names
    ]
    words = {w: k for k, w in facts.DIRECTION_WORDS.items()}
    out.append((facts.BEARING_WITHIN, _bearing_within))
    for measure, wording in facts.DIRECTIONS.items():
        # The sentence says "B lies <word> of A": the constraint reads direction(A, B).
        out.append((wording, _categorical(measure, lambda s: words[s["word"]])))
    for wording in (facts.RELATIVE_AHEAD_BEHIND, facts.RELATIVE_SIDE):
        out.append((wording, _categorical("relative_direction", lambda s: s["side"], heading="heading")))
    out.append((facts.AXIS, _categorical("axis", lambda s: s["axis"])))
    out.append((facts.NEAREST, _nearest))
    out.append((facts.ALONG_ORDER, _along_order))
    out.append((facts.SIDE_OF_LINE, _categorical("side_of_line", lambda s: s["side"])))
    subjects: list[tuple[str | None, Wording]] = [*facts.SUBJECTS.items()]
    subjects += [(None, facts.GENERIC_PAIR_SUBJECT), (None, facts.GENERIC_SUBJECT)]
    for named, subject in subjects:
        for op, tail in facts.BOUNDS.items():
            out.append((subject.then(tail, **_bound_slots(tail)), _bounded(named, op)))
    return out


def _bound_slots(tail: str) -> dict[str, str]:
    names = Wording(tail).names
    return {k: v for k, v in facts.SLOT_KINDS.items() if k in names}


STATEMENTS = _statements()


def parse_constraint(line: str) -> dict:
    """One instruction line back into a constraint dict (the inverse of describe_constraint)."""
    s = line.strip().rstrip(".")
    for wording, read in STATEMENTS:
        slots = wording.read(s)
        if slots is not None:
            return read(slots)
    raise UnrecognisedError(f"constraint not recognised: {s[:80]}")


_ALLOWED = re.compile(INSTRUCTION_ALLOWED.pattern.pattern.lstrip("^").rstrip("$"), re.M)


def parse_instruction(text: str) -> tuple[list[dict], list[EditOp]]:
    """(constraints, allowed operations) from the prompt text of an edit instance. A line no
    parser recognises is left out: the edit then aims at the constraints that were understood."""
    start = text.find("Instruction:")
    body = text[start:] if start >= 0 else text
    constraints = []
    for line in re.findall(r"^\d+\. (.+)$", body, flags=re.M):
        try:
            constraints.append(parse_constraint(line))
        except UnrecognisedError:
            continue
    m = _ALLOWED.search(body)
    allowed = allowed_operations_in(m.group("ops")) if m else []
    return constraints, allowed or list(EDIT_OPS)
