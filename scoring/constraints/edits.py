"""The edit executor: applies an edit (translate, rotate, scale, set attribute) to the target
feature. The builder's reference edits and the models' edits go through this same code.

Edit JSON form (documented in the relation reference and the prompts):
    {"operations": [
        {"op": "translate", "dx": <m>, "dy": <m>},                       # +y is grid north
        {"op": "rotate", "degrees_clockwise": <deg>, "origin": [x, y] | "centroid"},
        {"op": "scale", "factor": <positive>, "origin": [x, y] | "centroid"},
        {"op": "set_attribute", "name": <str>, "value": <scalar>}]}
Operations apply in order; "centroid" is the target's centroid at the time of that operation.
The edited geometry is then snapped to the 1 cm grid, like every scene geometry, before any
fact is computed on it (`snap_edited`): the builder's reference edits, the scorer and the
explanations all measure what a re-read GeoJSON of the edited scene would hold.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from shapely import affinity
from shapely.geometry import Point
from shapely.geometry.base import BaseGeometry

from scoring.constraints.wording import Wording, one_of
from scoring.geometry.scene import Scene, snap
from scoring.vocab import EDIT_OPS, EditOp

OPS = EDIT_OPS
MAX_OPERATIONS = 20

# How an instruction names each allowed operation ("You may translate, rotate ... F0.").
OPERATION_WORDS: dict[EditOp, str] = {
    EditOp.TRANSLATE: "translate",
    EditOp.ROTATE: "rotate (about a stated origin)",
    EditOp.SCALE: "scale (about a stated origin)",
    EditOp.SET_ATTRIBUTE: "set an attribute of",
}
_OPS_LIST = rf"(?:{one_of(*OPERATION_WORDS.values())})(?:, (?:{one_of(*OPERATION_WORDS.values())}))*"
INSTRUCTION_HEAD = Wording("Edit only {target} so that all of the following hold:")
INSTRUCTION_ALLOWED = Wording("You may {ops} {target}. Do not change any other feature.", ops=_OPS_LIST)


def edit_instruction(lead: str, target: str, lines: list[str], allowed: list[EditOp]) -> str:
    """The instruction of an edit instance: an optional lead, the numbered constraint lines and
    the allowed operations."""
    ops = ", ".join(OPERATION_WORDS[EditOp(o)] for o in allowed)
    numbered = [f"{i + 1}. {line}" for i, line in enumerate(lines)]
    return ((lead + " ") if lead else "") + "\n".join(
        [
            INSTRUCTION_HEAD.render(target=target),
            *numbered,
            INSTRUCTION_ALLOWED.render(ops=ops, target=target),
        ]
    )


def allowed_operations_in(words: str) -> list[EditOp]:
    """The operations named by the `{ops}` slot of INSTRUCTION_ALLOWED (its inverse)."""
    by_words = {w: op for op, w in OPERATION_WORDS.items()}
    return [by_words[w] for w in words.split(", ") if w in by_words]


def does_nothing(operations: list[dict]) -> bool:
    """True when no operation changes anything (zero translation, whole turns, factor 1)."""
    for op in operations:
        kind = op.get("op")
        if kind == "translate" and ((op.get("dx") or 0) != 0 or (op.get("dy") or 0) != 0):
            return False
        if kind == "rotate" and (op.get("degrees_clockwise") or 0) % 360 != 0:
            return False
        if kind == "scale" and op.get("factor", 1) != 1:
            return False
        if kind == "set_attribute":
            return False
    return True


class EditError(ValueError):
    """The edit is malformed (reason in the message)."""


@dataclass
class EditResult:
    scene: Scene
    changed_geometry: bool
    changed_attributes: bool

    @property
    def changed(self) -> bool:
        return self.changed_geometry or self.changed_attributes


def _finite(v: Any, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EditError(f"{name} must be a number")
    v = float(v)
    if not math.isfinite(v) or abs(v) > 1e9:
        raise EditError(f"{name} must be a finite number")
    return v


def _origin(op: dict, geom: BaseGeometry) -> Point | tuple[float, float]:
    origin = op.get("origin", "centroid")
    if origin == "centroid":
        return geom.centroid
    if isinstance(origin, (list, tuple)) and len(origin) == 2:
        return (_finite(origin[0], "origin x"), _finite(origin[1], "origin y"))
    raise EditError('origin must be [x, y] or "centroid"')


def apply_geometry_ops(geom: BaseGeometry, operations: list[dict]) -> BaseGeometry:
    for op in operations:
        kind = op.get("op")
        if kind == "translate":
            shift = (_finite(op.get("dx", 0), "dx"), _finite(op.get("dy", 0), "dy"))
            # one vectorised add: affinity.translate builds a 3-D affine matrix per call, and the
            # builder's edit search translates tens of thousands of candidates (same doubles)
            geom = shapely.transform(geom, lambda xy, shift=shift: xy + shift)
        elif kind == "rotate":
            # shapely rotates counter-clockwise for positive angles.
            geom = affinity.rotate(
                geom, -_finite(op.get("degrees_clockwise"), "degrees_clockwise"), origin=_origin(op, geom)
            )
        elif kind == "scale":
            f = _finite(op.get("factor"), "factor")
            if f <= 0:
                raise EditError("scale factor must be positive")
            geom = affinity.scale(geom, f, f, origin=_origin(op, geom))
    return geom


def snap_edited(geom: BaseGeometry) -> BaseGeometry:
    """An edited geometry on the scene's 1 cm grid (the one rule for facts after an edit): its
    coordinates rounded to 2 decimals in place, exactly what its GeoJSON would carry, so vertex
    order is kept and snapping twice changes nothing; GEOS's grid snapping only where plain
    rounding would make the geometry invalid."""
    # k / 100 with k = rint(x * 100), ties to even on the double x * 100 (numpy's scaled rounding;
    # not always Python's round(x, 2): 2.675 gives 2.68 here, 2.67 there), vectorised
    rounded = shapely.set_coordinates(geom, np.rint(shapely.get_coordinates(geom) * 100.0) / 100.0)
    if not rounded.is_empty and (rounded.geom_type == "Point" or rounded.is_valid):
        return rounded
    snapped = snap(geom)
    if snapped.is_empty:
        raise EditError("the edit collapses the geometry on the 1 cm grid")
    return snapped


def translated_on_grid(geom: BaseGeometry, shifts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`geom` moved by each row (dx, dy) of `shifts` (or by each row's successive translations,
    shape (m, k, 2)) and snapped as `apply_edit` snaps it, all at once (the builder's edit search
    tries tens of thousands of translations): the same doubles, since the same elementwise
    operations. Returns the geometries and a mask of those that are exactly apply_edit's result;
    where it is False, rounding left an invalid geometry and only apply_edit (GEOS snapping, or
    an EditError) gives the answer."""
    shifts = np.asarray(shifts, dtype=np.float64)
    m = len(shifts)
    out = np.empty(m, dtype=object)
    if geom.is_empty or shapely.has_z(geom) or m == 0:
        return out, np.zeros(m, dtype=bool)
    steps = shifts.reshape(m, -1, 2)
    moved = shapely.get_coordinates(geom)[None, :, :]
    for k in range(steps.shape[1]):  # one translation after the other, as apply_geometry_ops
        moved = moved + steps[:, k, None, :]
    out.fill(geom)
    out = shapely.set_coordinates(out, (np.rint(moved * 100.0) / 100.0).reshape(-1, 2))
    exact = np.isfinite(moved).all(axis=(1, 2)) & ~shapely.is_empty(out)
    if geom.geom_type != "Point":
        exact &= shapely.is_valid(out)
    return out, exact


def translation_of(ops: list, allowed: Collection[str]) -> tuple[float, float] | None:
    """(dx, dy) when `ops` is one allowed, well-formed translation (apply_edit would accept it as
    it stands), else None."""
    if not isinstance(ops, list) or len(ops) != 1 or not isinstance(ops[0], dict):
        return None
    if ops[0].get("op") != "translate":
        return None
    if EditOp.TRANSLATE not in allowed:
        return None
    dx, dy = ops[0].get("dx", 0), ops[0].get("dy", 0)
    if type(dx) is float and type(dy) is float:  # the builder's proposals: _finite in one test
        return (dx, dy) if abs(dx) <= 1e9 and abs(dy) <= 1e9 else None  # (NaN fails it too)
    try:
        return _finite(dx, "dx"), _finite(dy, "dy")
    except EditError:
        return None


def apply_edit(
    scene: Scene, target: str, edit: Mapping[str, Any], allowed: tuple[str, ...] | tuple[EditOp, ...] = OPS
) -> EditResult:
    """Apply `edit` to feature `target` of `scene`; every other feature stays as it is."""
    if not isinstance(edit, dict) or not isinstance(edit.get("operations"), list):
        raise EditError('an edit is an object with an "operations" list')
    ops = edit["operations"]
    if len(ops) > MAX_OPERATIONS:
        raise EditError(f"more than {MAX_OPERATIONS} operations")
    props = dict(scene[target].props)
    changed_attr = False
    for op in ops:
        if not isinstance(op, dict) or op.get("op") not in OPS:
            raise EditError(f"unknown operation {op.get('op') if isinstance(op, dict) else op!r}")
        if op["op"] not in allowed:
            raise EditError(f"operation {op['op']} is not allowed here")
        if op["op"] == "set_attribute":
            name = op.get("name")
            if not isinstance(name, str) or not name:
                raise EditError("set_attribute needs a name")
            value = op.get("value")
            if isinstance(value, float) and not math.isfinite(value):
                raise EditError("attribute value must be finite")
            if props.get(name) != value:
                changed_attr = True
            props[name] = value
    before = scene.geom(target)
    after = apply_geometry_ops(before, ops)
    if after.is_empty:
        raise EditError("the edit leaves an empty geometry")
    after = snap_edited(after)
    changed_geom = not after.equals_exact(before, 1e-9)
    return EditResult(scene.replace(target, geom=after, props=props), changed_geom, changed_attr)
