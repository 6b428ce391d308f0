"""The edit reply: its JSON (operations or a geometry), validated, and the one decision of whether
the runner's corrective turn is due (unreadable, no operations, or an edit that changes nothing,
judged by applying it to the instance's F0 with the builder's executor)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from shapely.geometry import shape

from scoring.answers.base import (
    EDIT_CAP,
    MAX_JSON_DEPTH,
    REFUSED,
    Parsed,
    fail,
    last_match,
    tail,
    to_text,
    top_level_objects,
)
from scoring.answers.text import THINK_CLOSE, preprocess, refusal_in
from scoring.constraints.edits import OPS, EditError, apply_edit
from scoring.formats.benchmark import edit_reply_form
from scoring.formats.records import Instance
from scoring.geometry.scene import shared_scene
from scoring.vocab import MODALITIES, Modality

MAX_OPERATIONS = 20
MAX_MAGNITUDE = 1e9
MAX_POSITIONS = 10_000  # an edited building or road has hundreds at most
# The keys an edit object is recognised by: operations, an edited geometry (metres or pixels, with
# optional attributes beside it) or attributes alone.
EDIT_FORMS = ("operations", "geometry", "pixel_geometry", "attributes")
EDIT_KEYS = tuple(f'"{k}"' for k in EDIT_FORMS)


class _BadEditError(ValueError):
    pass


def _reject_constant(name: str) -> None:
    raise _BadEditError(f"non-finite number {name}")


def _json_depth(obj: Any, limit: int) -> int:
    stack = [(obj, 1)]
    deepest = 0
    while stack:
        o, d = stack.pop()
        deepest = max(deepest, d)
        if d > limit:
            return d
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return deepest


def _finite(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _BadEditError(f"{what} is not a number")
    try:
        v = float(x)
    except OverflowError:
        raise _BadEditError(f"{what} is too large") from None
    if not math.isfinite(v):
        raise _BadEditError(f"{what} is not finite")
    if abs(v) > MAX_MAGNITUDE:
        raise _BadEditError(f"{what} is too large")
    return v


def _origin(op: dict, i: int) -> Any:
    if "origin" not in op:
        raise _BadEditError(f"operation {i}: missing origin")
    o = op["origin"]
    if isinstance(o, str):
        if o.strip().lower() == "centroid":
            return "centroid"
        raise _BadEditError(f'operation {i}: origin must be [x, y] or "centroid"')
    if isinstance(o, list) and len(o) == 2:
        return [_finite(o[0], f"operation {i} origin x"), _finite(o[1], f"operation {i} origin y")]
    raise _BadEditError(f'operation {i}: origin must be [x, y] or "centroid"')


def _need(op: dict, key: str, i: int) -> Any:
    if key not in op:
        raise _BadEditError(f"operation {i}: missing {key}")
    return op[key]


def _validate_operations(ops: Any) -> list[dict]:
    if not isinstance(ops, list):
        raise _BadEditError("operations is not a list")
    if len(ops) > MAX_OPERATIONS:
        raise _BadEditError(f"more than {MAX_OPERATIONS} operations")
    out = []
    for i, op in enumerate(ops):
        if not isinstance(op, dict):
            raise _BadEditError(f"operation {i} is not an object")
        kind = op.get("op")
        if kind == "translate":
            out.append(
                {
                    "op": "translate",
                    "dx": _finite(_need(op, "dx", i), f"operation {i} dx"),
                    "dy": _finite(_need(op, "dy", i), f"operation {i} dy"),
                }
            )
        elif kind == "rotate":
            out.append(
                {
                    "op": "rotate",
                    "degrees_clockwise": _finite(
                        _need(op, "degrees_clockwise", i), f"operation {i} degrees_clockwise"
                    ),
                    "origin": _origin(op, i),
                }
            )
        elif kind == "scale":
            factor = _finite(_need(op, "factor", i), f"operation {i} factor")
            if factor <= 0:
                raise _BadEditError(f"operation {i}: factor must be positive")
            out.append({"op": "scale", "factor": factor, "origin": _origin(op, i)})
        elif kind == "set_attribute":
            name = _need(op, "name", i)
            if not isinstance(name, str) or not name.strip():
                raise _BadEditError(f"operation {i}: attribute name must be a non-empty string")
            value = _need(op, "value", i)
            if isinstance(value, float) and not math.isfinite(value):
                raise _BadEditError(f"operation {i}: value is not finite")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = _finite(value, f"operation {i} value") if isinstance(value, float) else value
                if isinstance(value, int) and abs(value) > MAX_MAGNITUDE:
                    raise _BadEditError(f"operation {i} value is too large")
            elif not (value is None or isinstance(value, (str, bool))):
                raise _BadEditError(f"operation {i}: value must be a string, number, boolean or null")
            out.append({"op": "set_attribute", "name": name, "value": value})
        else:
            raise _BadEditError(
                f"operation {i}: unknown op {kind!r}"
                if isinstance(kind, str)
                else f"operation {i}: missing op"
            )
    return out


_GEOM_TYPES = {
    "Point": 1,
    "MultiPoint": 2,
    "LineString": 2,
    "MultiLineString": 3,
    "Polygon": 3,
    "MultiPolygon": 4,
}


def _check_coords(c: Any, depth: int, what: str) -> None:
    if depth == 1:
        if not isinstance(c, list) or not 2 <= len(c) <= 3:
            raise _BadEditError(f"{what}: a position must be [x, y]")
        for v in c:
            _finite(v, f"{what} coordinate")
        return
    if not isinstance(c, list):
        raise _BadEditError(f"{what}: coordinates are not nested lists")
    for item in c:
        _check_coords(item, depth - 1, what)


def _validate_geometry(g: Any, what: str, depth: int = 0) -> dict:
    if not isinstance(g, dict):
        raise _BadEditError(f"{what} is not an object")
    gtype = g.get("type")
    if gtype == "GeometryCollection":
        if depth > 0:
            raise _BadEditError(f"{what}: nested GeometryCollection")
        if not isinstance(g.get("geometries"), list):
            raise _BadEditError(f"{what}: bad GeometryCollection")
        return {
            "type": gtype,
            "geometries": [_validate_geometry(x, what, depth + 1) for x in g["geometries"]],
        }
    if gtype not in _GEOM_TYPES:
        raise _BadEditError(f"{what}: unknown geometry type {gtype!r}")
    _check_coords(g.get("coordinates"), _GEOM_TYPES[gtype], what)
    return {"type": gtype, "coordinates": g["coordinates"]}


def _validate_attributes(attrs: Any) -> dict:
    """The attributes beside an edited geometry (the paper's interface): name -> scalar."""
    if not isinstance(attrs, dict):
        raise _BadEditError("attributes is not an object")
    if len(attrs) > MAX_OPERATIONS:
        raise _BadEditError(f"more than {MAX_OPERATIONS} attributes")
    ops = [{"op": "set_attribute", "name": k, "value": v} for k, v in attrs.items()]
    return {o["name"]: o["value"] for o in _validate_operations(ops)}


def _validate_edit(obj: dict) -> dict:
    keys = [k for k in ("operations", "geometry", "pixel_geometry") if k in obj]
    if len(keys) > 1:
        raise _BadEditError("several answer forms in one object: " + ", ".join(keys))
    if not keys:  # attributes alone: an attribute edit that leaves the geometry as it is
        return {"attributes": _validate_attributes(obj["attributes"])}
    key = keys[0]
    if key == "operations":
        if "attributes" in obj:
            raise _BadEditError("attributes beside operations: use set_attribute operations")
        return {"operations": _validate_operations(obj["operations"])}
    geometry = _validate_geometry(obj[key], key)
    if _positions(geometry) > MAX_POSITIONS:
        raise _BadEditError(f"{key}: more than {MAX_POSITIONS} positions")
    out: dict = {key: geometry}
    if "attributes" in obj:
        out["attributes"] = _validate_attributes(obj["attributes"])
    return out


def _positions(g: Any) -> int:
    """Number of positions in validated GeoJSON geometry or coordinates."""
    if isinstance(g, dict):
        return sum(map(_positions, g.get("geometries") or [])) + _positions(g.get("coordinates"))
    if isinstance(g, list) and g and isinstance(g[0], list):
        return sum(map(_positions, g))
    return 1 if isinstance(g, list) and g else 0


def _latest_first(raw: str, spans: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The objects, last first; one set in parentheses inside prose ("leaving it in place ({...})
    would break constraint 1") is an aside, read only when no other object is an edit."""
    aside = [s for s in spans if raw[: s[0]].rstrip().endswith("(")]
    return [s for s in reversed(spans) if s not in aside] + list(reversed(aside))


def parse_edit(text: Any) -> Parsed:
    """The edit JSON in ``text`` (code fences and prose around it allowed): the last top-level
    JSON object with an ``operations``, ``geometry``, ``pixel_geometry`` or ``attributes`` key
    (attributes: name -> scalar, beside a geometry or alone). Operations are
    validated (known ``op``, finite numbers with magnitude <= 1e9, ``factor`` > 0, origin
    ``[x, y]`` or ``"centroid"``, at most 20 operations, nesting depth <= 32); the value is the
    normalised object (numbers as floats, only known keys). Origins may be map units or pixels:
    units are the caller's business."""
    raw = to_text(text)
    if raw is None:
        return fail("not text")
    raw = tail(raw, EDIT_CAP)
    if "</" in raw:
        last = last_match(THINK_CLOSE, raw)
        if last is not None:
            raw = raw[last.end() :]
    # no key of an edit, no edit: skip scanning a reply of braces
    has_key = any(k in raw for k in EDIT_KEYS)
    spans = top_level_objects(raw) if has_key else []
    if not spans:
        pre = preprocess(raw)
        if pre is not None and refusal_in(pre.segment):
            return REFUSED
        return fail("no JSON object found")
    first_error = None
    for start, end, depth in _latest_first(raw, spans):
        if depth > MAX_JSON_DEPTH:
            first_error = first_error or "JSON nested too deeply"
            continue
        chunk = raw[start:end]
        if not any(k in chunk for k in EDIT_KEYS):
            continue
        try:
            obj = json.loads(chunk, parse_constant=_reject_constant)
        except _BadEditError as exc:
            return fail(str(exc))
        except (ValueError, RecursionError, OverflowError, MemoryError):
            first_error = first_error or "invalid JSON"
            continue
        if not isinstance(obj, dict) or not any(k in obj for k in EDIT_FORMS):
            continue
        if _json_depth(obj, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            return fail("JSON nested too deeply")
        try:
            return Parsed(True, _validate_edit(obj))
        except _BadEditError as exc:
            return fail(str(exc))
        except (RecursionError, ValueError, TypeError, OverflowError) as exc:
            return fail(f"invalid edit: {type(exc).__name__}")
    pre = preprocess(raw)
    if pre is not None and refusal_in(pre.segment):
        return REFUSED
    return fail(first_error or "no JSON object with operations")


NOT_AN_EDIT = 'the reply is not a JSON object with an "operations" list'
NOT_A_PIXEL_EDIT = (
    'the reply is not a JSON object with a "pixel_geometry" (and the "attributes" the instruction needs)'
)
NO_OPERATIONS = "the edit has no operations"
DOES_NOTHING = "the edit does nothing (no translation, rotation, scaling or attribute change)"


@dataclass(frozen=True, slots=True)
class EditReading:
    """An edit reply as read: the parsed edit, and why the corrective turn is due (None: usable).
    The reason is shown to the model: it never says whether constraints were met."""

    parsed: Parsed
    retry_reason: str | None


def read_edit_reply(
    text: Any, instance: Instance | None = None, modality: Modality = Modality.GEOJSON
) -> EditReading:
    """Read an edit reply and decide whether it is usable. With ``instance``, an edit that changes
    nothing is judged by applying it to the target (F0) with the builder's executor, attributes
    included; without it, by the operations' magnitudes."""
    parsed = parse_edit(text)
    if not parsed.ok:
        wanted = NOT_A_PIXEL_EDIT if edit_reply_form(instance, modality) == "pixel_geometry" else NOT_AN_EDIT
        # a refusal is a reply to score (right on an infeasible edit), not one to re-ask
        return EditReading(parsed, None if parsed.refusal else f"{wanted} ({parsed.reason})")
    try:
        reason = _retry_reason(parsed.value, instance, modality)
    except Exception as exc:  # noqa: BLE001 -- a reply the executor cannot apply is unusable, never a crash
        reason = f"the edit cannot be applied ({type(exc).__name__})"
    return EditReading(parsed, reason)


def _retry_reason(edit: dict, instance: Instance | None, modality: Modality) -> str | None:
    image = modality in MODALITIES and Modality(modality).pixel_edits  # replied in a map's pixels
    if "operations" in edit:
        ops = edit["operations"]
        if not ops:
            return NO_OPERATIONS
        if instance is None or not isinstance(instance.get("scene"), dict):
            return None if any(_moves(op) for op in ops) else DOES_NOTHING
        if image:
            # pixel origins mean nothing in the task CRS; whether anything moves does not depend on them
            ops = [dict(op, origin="centroid") if "origin" in op else op for op in ops]
        scene = shared_scene(instance["scene"])
        target = str(instance.get("target") or "F0")
        allowed = tuple(instance.get("allowed_operations") or OPS)
        try:
            result = apply_edit(scene, target, {"operations": ops}, allowed)
        except EditError as exc:
            return f"invalid edit: {exc}"
        return None if result.changed else DOES_NOTHING
    if "pixel_geometry" in edit and not image:
        return "a pixel geometry was given but the scene has no map: give operations in metres"
    attrs = edit.get("attributes") or {}
    if "attributes" in edit and not attrs and not any(k in edit for k in ("geometry", "pixel_geometry")):
        return NO_OPERATIONS
    if set(edit) == {"attributes"} and instance is not None and isinstance(instance.get("scene"), dict):
        scene = shared_scene(instance["scene"])
        target = str(instance.get("target") or "F0")
        if target in scene and all(scene[target].props.get(k) == v for k, v in attrs.items()):
            return DOES_NOTHING
    if instance is not None and not image and "geometry" in edit and isinstance(instance.get("scene"), dict):
        scene = shared_scene(instance["scene"])
        target = str(instance.get("target") or "F0")
        if target in scene and shape(edit["geometry"]).equals_exact(scene.geom(target), 1e-9):
            return DOES_NOTHING
    return None


def _moves(op: dict) -> bool:
    kind = op.get("op")
    if kind == "translate":
        return op.get("dx") != 0 or op.get("dy") != 0
    if kind == "rotate":
        return math.fmod(float(op.get("degrees_clockwise", 0.0)), 360.0) != 0
    if kind == "scale":
        return op.get("factor") != 1
    return kind == "set_attribute"
