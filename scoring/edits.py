"""The edit executor: applies an edit (translate, rotate, scale, set attribute) to the target
feature. The builder's reference edits and the models' edits go through this same code.

Edit JSON form (documented in the relation reference and the prompts):
    {"operations": [
        {"op": "translate", "dx": <m>, "dy": <m>},                       # +y is grid north
        {"op": "rotate", "degrees_clockwise": <deg>, "origin": [x, y] | "centroid"},
        {"op": "scale", "factor": <positive>, "origin": [x, y] | "centroid"},
        {"op": "set_attribute", "name": <str>, "value": <scalar>}]}
Operations apply in order; "centroid" is the target's centroid at the time of that operation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from shapely import affinity
from shapely.geometry.base import BaseGeometry

from scoring.scene import Scene

OPS = ("translate", "rotate", "scale", "set_attribute")
MAX_OPERATIONS = 20


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


def _finite(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise EditError(f"{name} must be a number")
    v = float(v)
    if not math.isfinite(v) or abs(v) > 1e9:
        raise EditError(f"{name} must be a finite number")
    return v


def _origin(op: dict, geom: BaseGeometry):
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
            geom = affinity.translate(geom, _finite(op.get("dx", 0), "dx"), _finite(op.get("dy", 0), "dy"))
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


def apply_edit(scene: Scene, target: str, edit: dict, allowed: tuple[str, ...] = OPS) -> EditResult:
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
    changed_geom = not after.equals_exact(before, 1e-9)
    return EditResult(scene.replace(target, geom=after, props=props), changed_geom, changed_attr)
