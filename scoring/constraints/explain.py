"""The geometry of constraint explanations: what to draw so an analyst sees why each edit
constraint passes or fails. Pure shapely, no GUI: the QGIS plugin turns these into layers, and
headless users (and tests) get exactly the same shapes.

    explain_constraints(instance, edited_scene) -> [ConstraintView]

Each view carries the constraint's index, its plain-English text, the measure, the verdict and
the measured value (both from `scoring.constraints.facts.check_constraint`, so they agree with the scorer),
and `parts`: (role, geometry) pairs in the task CRS. Roles name what a part shows:

    measured        the quantity actually measured (shortest line, ray, chord, outline ...)
    allowed         where the target must be for the constraint to hold (band, sector, side)
    forbidden       where the target must not be: the zone of a negated constraint ("F0 is not
                    within 20 m of F2": the 20 m disc), drawn as an exclusion, never as allowed
    limit           an outline of the allowed region (ring at a distance limit, sector edge)
    reference       the feature or line the constraint is measured against
    intersection    the shared part of two features (topology)
    violation       the part that breaks the constraint (e.g. the bit of a poking outside)
    marker          a point of interest (projected position, endpoint, centroid)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import shapely
from shapely.geometry.base import BaseGeometry

from scoring.constraints.edits import EditError, apply_geometry_ops
from scoring.constraints.facts import (
    DIRECTION_WORDS,
    FactError,
    check_constraint,
    constraint_scene,
    describe_constraint,
)
from scoring.formats.records import Instance
from scoring.geometry.scene import Scene
from scoring.oracle import MEASURES, Drawing
from scoring.oracle.drawing import draw_features

ROLES = ("measured", "allowed", "forbidden", "limit", "reference", "intersection", "violation", "marker")
# Drawings that already shade the side a negated constraint wants (same_side false: the other side).
VALUE_AWARE_DRAWINGS = frozenset({"same_side"})


def is_negated(c: Mapping[str, Any]) -> bool:
    """A yes/no constraint that asks for "no" ("F0 is not within 20 m of F2", "F0 does not
    intersect F1"): the zone its measure draws is where the predicate is true, which is where
    the target must not be."""
    m = c.get("measure")
    return (
        c.get("op") == "is"
        and c.get("value") is False
        and isinstance(m, str)
        and m in MEASURES
        and MEASURES[m].kind == "bool"
        and m not in VALUE_AWARE_DRAWINGS
    )


def zone_roles(c: Mapping[str, Any], parts: Drawing) -> Drawing:
    """The measure's drawing with its zone turned into a forbidden one for a negated constraint."""
    if not is_negated(c):
        return list(parts)
    return [("forbidden" if r == "allowed" else r, g) for r, g in parts]


@dataclass
class ConstraintView:
    index: int
    text: str
    measure: str
    op: str
    passed: bool
    measured: Any
    unit: str | None = None
    error: str | None = None
    parts: list[tuple[str, BaseGeometry]] = field(default_factory=list)
    constraint: Mapping[str, Any] = field(default_factory=dict)

    @property
    def measured_text(self) -> str:
        """The measured value as shown on a map label."""
        return format_value(self.measured, self.unit)

    @property
    def sentence(self) -> str:
        """What was measured, said as a sentence ("F0 is not within 20 m of F2")."""
        return measured_sentence(self.constraint, self.measured, self.unit)

    @property
    def label(self) -> str:
        verdict = "pass" if self.passed else "FAIL"
        return f"#{self.index + 1} {verdict}: {self.measured_text}"

    def as_dict(self) -> dict:
        return {
            "index": self.index,
            "text": self.text,
            "measure": self.measure,
            "op": self.op,
            "passed": self.passed,
            "measured": self.measured,
            "unit": self.unit,
            "error": self.error,
            "parts": [{"role": r, "wkt": g.wkt} for r, g in self.parts],
        }


def format_value(v: Any, unit: str | None = None) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isinf(v):
            return "inf"
        u = {"m": " m", "deg": "°", "m2": " m²", "per km2": " /km²"}.get(unit or "", "")
        return f"{v:.2f}{u}"
    if isinstance(v, (list, tuple)):
        return " → ".join(str(x) for x in v)
    return str(v)


# Measures whose value depends on which way a line runs (first vertex to last): maps draw those
# lines with their direction.
DIRECTED_MEASURES = frozenset({"along_position", "along_order", "side_of_line"})


def measured_sentence(c: Mapping[str, Any], measured: Any, unit: str | None = None) -> str:
    """The constraint's statement with the measured value in place of the required one:
    "F0 is not within 20 m of F2", "the minimum distance between F0 and F1 is 12.34 m"."""
    if measured is None or not c:
        return f"{_describe(c) if c else 'constraint'}: not measured"
    m = c.get("measure", "")
    args = c.get("args") or []
    if m in ("direction4", "direction8") and len(args) == 2:
        # The short form: the sector bounds belong to the instruction, not to a map label.
        return f"{args[1]} lies {DIRECTION_WORDS.get(str(measured), measured)} of {args[0]}"
    kind = MEASURES[m].kind if m in MEASURES else ""
    value = format_value(measured, unit) if kind in ("number", "angle") else measured
    if m == "bearing" and len(args) == 2:
        return f"the bearing from {args[0]} to {args[1]} is {value}"
    try:
        return describe_constraint({**c, "op": "is", "value": value})
    except (KeyError, TypeError, ValueError, IndexError):
        return f"{m.replace('_', ' ')}: {format_value(measured, unit)}"


def directed_lines(instance: Instance) -> set[str]:
    """The features of an instance whose direction its question or constraints use."""
    statements = [*(instance.get("facts") or []), *(instance.get("constraints") or [])]
    return {s["args"][0] for s in statements if s.get("measure") in DIRECTED_MEASURES and s.get("args")}


def explain_constraints(
    instance: Instance, edited_scene: dict | Scene | None = None, *, results: list[dict] | None = None
) -> list[ConstraintView]:
    """One view per constraint of an edit instance, evaluated on `edited_scene` (a GeoJSON
    FeatureCollection or a Scene) or, when None, on the instance's own (initial) scene.

    `results`: the scorer's per-constraint rows ({"index", "passed", "measured"}) for this edit.
    When given they are taken as the verdicts: the scorer evaluates the unrounded edited
    geometry, while a GeoJSON scene is rounded to 1 cm, which can move a value by millimetres."""
    initial = Scene.from_geojson(instance["scene"])
    if isinstance(edited_scene, Scene):
        scene = edited_scene
    else:
        scene = Scene.from_geojson(edited_scene, initial.crs) if edited_scene is not None else initial
    target = instance.get("target", "F0")
    by_index = {r.get("index"): r for r in results or []}
    views = []
    for i, c in enumerate(instance.get("constraints") or []):
        unit = c.get("unit") or (MEASURES[c["measure"]].unit if c.get("measure") in MEASURES else None)
        view = ConstraintView(
            i, _describe(c), c.get("measure", "?"), c.get("op", "?"), False, None, unit, constraint=c
        )
        if i in by_index:
            view.passed, view.measured = bool(by_index[i].get("passed")), by_index[i].get("measured")
        else:
            try:
                view.passed, view.measured = check_constraint(scene, c, initial)
            except (FactError, KeyError, TypeError, ValueError) as exc:
                view.error = str(exc) or type(exc).__name__
        try:
            view.parts = [
                (r, g)
                for r, g in zone_roles(c, draw_constraint(c, scene, initial, target))
                if g is not None and not g.is_empty
            ]
        except (KeyError, ValueError, TypeError, shapely.errors.GEOSException) as exc:
            view.error = view.error or f"cannot draw: {exc}"
        views.append(view)
    return views


def _describe(c: Mapping[str, Any]) -> str:
    try:
        return describe_constraint(c)
    except (KeyError, TypeError, ValueError):
        return c.get("measure", "constraint")


def draw_constraint(c: Mapping[str, Any], scene: Scene, initial: Scene, target: str) -> Drawing:
    """The (role, geometry) pairs explaining constraint `c` on `scene`: its measure's own drawing
    (registered beside the measure in scoring.oracle), or the features it names."""
    spec = MEASURES.get(c["measure"])
    case = constraint_scene(scene, c, target, initial)
    if spec is None or spec.drawing is None:
        return draw_features(case)
    return spec.drawing(case)


# ---------------------------------------------------------------- edits drawn by hand

HAND_EDIT_TOLERANCE_M = 0.05


def edit_from_geometries(
    original: BaseGeometry,
    edited: BaseGeometry,
    props_before: dict | None = None,
    props_after: dict | None = None,
) -> dict:
    """The edit JSON (translate / rotate / scale / set_attribute) that turns `original` into
    `edited`, fitted as a similarity transform over corresponding vertices (least squares), so an
    analyst's move / rotate / scale in a GIS is scored like a model's edit. Raises
    scoring.constraints.edits.EditError when the shapes are not related by such a transform (vertex edits)."""
    p = shapely.get_coordinates(original)
    q = shapely.get_coordinates(edited)
    if original.geom_type != edited.geom_type or len(p) != len(q) or not len(p):
        raise EditError("the edited feature must keep its vertices (only move, rotate, scale)")
    cp, cq = p.mean(axis=0), q.mean(axis=0)
    ops: list[dict] = []
    if len(p) > 1:
        p0, q0 = p - cp, q - cq
        a = float((p0 * q0).sum())
        b = float((p0[:, 0] * q0[:, 1] - p0[:, 1] * q0[:, 0]).sum())
        norm = float((p0**2).sum())
        if norm > 0:
            ccw = math.degrees(math.atan2(b, a))
            scale = math.hypot(a, b) / norm
            origin = [round(float(cp[0]), 3), round(float(cp[1]), 3)]
            if abs(ccw) > 1e-6:
                ops.append({"op": "rotate", "degrees_clockwise": round(-ccw, 6), "origin": origin})
            if abs(scale - 1.0) > 1e-6:
                ops.append({"op": "scale", "factor": round(scale, 6), "origin": origin})
    dx, dy = float(cq[0] - cp[0]), float(cq[1] - cp[1])
    if abs(dx) > 1e-4 or abs(dy) > 1e-4:
        ops.append({"op": "translate", "dx": round(dx, 3), "dy": round(dy, 3)})
    fitted = apply_geometry_ops(original, ops)
    err = shapely.hausdorff_distance(fitted, edited)
    if err > HAND_EDIT_TOLERANCE_M:
        raise EditError(
            f"the edited shape is not a moved / rotated / scaled copy of the original "
            f"(off by {err:.2f} m)"
        )
    before, after = props_before or {}, props_after or {}
    for name in sorted(after):
        if after[name] != before.get(name):
            ops.append({"op": "set_attribute", "name": name, "value": after[name]})
    return {"operations": ops}
