"""The geometry of constraint explanations: what to draw so an analyst sees why each edit
constraint passes or fails. Pure shapely, no GUI: the QGIS plugin turns these into layers, and
headless users (and tests) get exactly the same shapes.

    explain_constraints(instance, edited_scene) -> [ConstraintView]

Each view carries the constraint's index, its plain-English text, the measure, the verdict and
the measured value (both from `scoring.facts.check_constraint`, so they agree with the scorer),
and `parts`: (role, geometry) pairs in the task CRS. Roles name what a part shows:

    measured        the quantity actually measured (shortest line, ray, chord, outline ...)
    allowed         where the target must be for the constraint to hold (band, sector, side)
    limit           an outline of the allowed region (ring at a distance limit, sector edge)
    reference       the feature or line the constraint is measured against
    intersection    the shared part of two features (topology)
    violation       the part that breaks the constraint (e.g. the bit of a poking outside)
    marker          a point of interest (projected position, endpoint, centroid)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import shapely
from shapely.geometry import LineString, MultiPoint, Point, Polygon
from shapely.geometry.base import BaseGeometry

from scoring import oracle
from scoring.facts import FactError, check_constraint, describe_constraint
from scoring.oracle import MEASURES, ref_point
from scoring.scene import Scene

ROLES = ("measured", "allowed", "limit", "reference", "intersection", "violation", "marker")
# Rays and sectors need a visible radius even between features a few metres apart.
MIN_RAY_M = 25.0
ARC_STEP_DEG = 2.0


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

    @property
    def measured_text(self) -> str:
        """The measured value as shown on a map label."""
        return format_value(self.measured, self.unit)

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


def explain_constraints(
    instance: dict, edited_scene: dict | Scene | None = None, *, results: list[dict] | None = None
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
        view = ConstraintView(i, _describe(c), c.get("measure", "?"), c.get("op", "?"), False, None, unit)
        if i in by_index:
            view.passed, view.measured = bool(by_index[i].get("passed")), by_index[i].get("measured")
        else:
            try:
                view.passed, view.measured = check_constraint(scene, c, initial)
            except (FactError, KeyError, TypeError, ValueError) as exc:
                view.error = str(exc) or type(exc).__name__
        try:
            view.parts = [
                (r, g) for r, g in _parts(c, scene, initial, target) if g is not None and not g.is_empty
            ]
        except (KeyError, ValueError, TypeError, shapely.errors.GEOSException) as exc:
            view.error = view.error or f"cannot draw: {exc}"
        views.append(view)
    return views


def _describe(c: dict) -> str:
    try:
        return describe_constraint(c)
    except (KeyError, TypeError, ValueError):
        return c.get("measure", "constraint")


# ---------------------------------------------------------------- drawing helpers


def _pivot(args: list[str], target: str) -> tuple[str, str]:
    """(moving, fixed) among two args: the target moves, the other one is the reference."""
    a, b = args[0], args[1]
    return (b, a) if b == target else (a, b)


def _ray(origin: Point, bearing: float, length: float) -> LineString:
    r = math.radians(bearing)
    return LineString(
        [(origin.x, origin.y), (origin.x + length * math.sin(r), origin.y + length * math.cos(r))]
    )


def _sector(origin: Point, start: float, end: float, radius: float) -> Polygon:
    """A pie slice from bearing `start` clockwise to `end` (degrees)."""
    span = (end - start) % 360.0 or 360.0
    n = max(2, int(math.ceil(span / ARC_STEP_DEG)))
    pts = [(origin.x, origin.y)]
    for k in range(n + 1):
        r = math.radians(start + span * k / n)
        pts.append((origin.x + radius * math.sin(r), origin.y + radius * math.cos(r)))
    return Polygon(pts)


def _band(fixed: BaseGeometry, lo: float | None, hi: float | None, reach: float) -> BaseGeometry:
    """The region at a distance in [lo, hi] from `fixed` (hi None: up to `reach`)."""
    outer = fixed.buffer(hi if hi is not None else reach, quad_segs=16)
    if lo and lo > 0:
        return outer.difference(fixed.buffer(lo, quad_segs=16))
    return outer


def _rings(fixed: BaseGeometry, *dists: float | None) -> list[tuple[str, BaseGeometry]]:
    return [("limit", fixed.buffer(d, quad_segs=16).boundary) for d in dists if d is not None and d > 0]


def _limits(c: dict) -> tuple[float | None, float | None]:
    op = c.get("op")
    if op == "between":
        return c.get("min"), c.get("max")
    if op == "at_most":
        return None, c.get("max")
    if op == "at_least":
        return c.get("min"), None
    return None, None


def _radius(scene: Scene, *fids: str) -> float:
    pts = [ref_point(scene.geom(f)) for f in fids]
    span = max((p.distance(q) for p in pts for q in pts), default=0.0)
    return max(MIN_RAY_M, 1.3 * span)


def _diamond(p: Point, r: float) -> Polygon:
    return Polygon([(p.x + r, p.y), (p.x, p.y + r), (p.x - r, p.y), (p.x, p.y - r)])


def _hausdorff_segment(a: BaseGeometry, b: BaseGeometry) -> LineString | None:
    """The segment realising the (densified) Hausdorff distance: the vertex of either geometry
    farthest from the other, joined to its nearest point there."""
    best = None
    for g, other in ((a, b), (b, a)):
        step = max(g.length / 100.0, 0.01) if g.length > 0 else None
        dense = shapely.segmentize(g, step) if step else g
        for xy in shapely.get_coordinates(dense):
            p = Point(xy)
            d = p.distance(other)
            if best is None or d > best[0]:
                best = (d, p, other)
    if best is None or best[0] == 0:
        return None
    _, p, other = best
    return shapely.shortest_line(p, other)


def _side_region(line: LineString, side: str, width: float) -> BaseGeometry:
    """The strip of width `width` on one side of a directed line (left: positive buffer)."""
    d = width if side == "left" else -width
    return line.buffer(d, single_sided=True)


# ---------------------------------------------------------------- per-measure parts


def _parts(c: dict, scene: Scene, initial: Scene, target: str) -> list[tuple[str, BaseGeometry]]:
    m, args, params = c["measure"], list(c["args"]), c.get("params") or {}
    g = scene.geom
    parts: list[tuple[str, BaseGeometry]] = []

    if m in ("min_distance", "boundary_distance", "within_distance"):
        mov, fix = _pivot(args, target)
        a, b = g(mov), g(fix)
        if m == "boundary_distance":
            a, b = oracle.outline(a), oracle.outline(b)
            parts.append(("reference", b))
        else:
            parts.append(("reference", g(fix)))
        lo, hi = _limits(c)
        if m == "within_distance":
            lo, hi = None, params.get("distance")
        reach = max(lo or 0, hi or 0, a.distance(b)) * 1.2 + MIN_RAY_M
        allowed = _band(b, lo, hi, reach)
        parts.append(("allowed", allowed))
        parts += _rings(b, lo, hi)
        if a.distance(b) > 0:
            parts.append(("measured", shapely.shortest_line(a, b)))
        else:
            parts.append(("intersection", a.intersection(b)))
        return parts

    if m == "manhattan_distance":
        mov, fix = _pivot(args, target)
        p, q = ref_point(g(mov)), ref_point(g(fix))
        lo, hi = _limits(c)
        if hi is not None:
            outer = _diamond(q, hi)
            parts.append(("allowed", outer.difference(_diamond(q, lo)) if lo else outer))
        parts += [("limit", _diamond(q, d).boundary) for d in (lo, hi) if d]
        parts.append(("reference", q))
        parts.append(("measured", LineString([(p.x, p.y), (q.x, p.y), (q.x, q.y)])))
        return parts

    if m == "hausdorff_distance":
        mov, fix = _pivot(args, target)
        parts.append(("reference", g(fix)))
        _, hi = _limits(c)
        if hi is not None:
            parts.append(("allowed", g(fix).buffer(hi, quad_segs=16)))
            parts += _rings(g(fix), hi)
        parts.append(("measured", _hausdorff_segment(g(mov), g(fix))))
        return parts

    if m == "displacement":
        a0, a1 = ref_point(initial.geom(args[0])), ref_point(g(args[0]))
        lo, hi = _limits(c)
        parts.append(("reference", initial.geom(args[0])))
        if hi is not None:
            parts.append(("allowed", _band(a0, lo, hi, hi)))
        parts += _rings(a0, lo, hi)
        parts.append(("marker", a0))
        if a0.distance(a1) > 0:
            parts.append(("measured", LineString([a0, a1])))
        return parts

    if m in ("perimeter_total", "area"):
        for f in args:
            parts.append(("measured", oracle.outline(g(f)) if m == "perimeter_total" else g(f)))
        return parts

    if m == "count_within_distance":
        a = g(args[0])
        parts.append(("allowed", a.buffer(params["distance"], quad_segs=16)))
        for f in args[1:]:
            inside = a.distance(g(f)) <= params["distance"]
            parts.append(("measured" if inside else "reference", g(f)))
        return parts

    if m == "poi_density":
        a = g(args[0])
        parts.append(("reference", a.boundary))
        for f in args[1:]:
            parts.append(("measured" if g(f).covered_by(a) else "marker", g(f)))
        return parts

    if m == "nearest":
        a = g(args[0])
        want = c.get("value")
        for f in args[1:]:
            line = shapely.shortest_line(a, g(f)) if a.distance(g(f)) > 0 else None
            role = "allowed" if f == want else "measured"
            parts.append((role, line if line is not None else a.intersection(g(f))))
        return parts

    # ---- direction: rays from the observer's reference point, sectors of the allowed range
    if m in ("bearing", "direction4", "direction8", "relative_direction"):
        p, q = ref_point(g(args[0])), ref_point(g(args[1]))
        radius = _radius(scene, args[0], args[1])
        actual = oracle.azimuth(p, q)
        if m == "bearing":
            tgt, tol = float(c["target"]), float(c["tolerance"])
            parts.append(("allowed", _sector(p, tgt - tol, tgt + tol, radius)))
            parts.append(("limit", _ray(p, tgt, radius)))
        else:
            labels, offset = {
                "direction4": (oracle.DIRECTIONS4, 0.0),
                "direction8": (oracle.DIRECTIONS8, 0.0),
                "relative_direction": (oracle.RELATIVE, float(params.get("heading", 0.0))),
            }[m]
            n = len(labels)
            width = 360.0 / n
            if c.get("value") in labels:
                centre = offset + labels.index(c["value"]) * width
                parts.append(("allowed", _sector(p, centre - width / 2, centre + width / 2, radius)))
            for k in range(n):  # sector edges
                parts.append(("limit", _ray(p, offset + k * width + width / 2, radius)))
            if m == "relative_direction":
                parts.append(("reference", _ray(p, offset, radius)))  # the observer's heading
        parts.append(("marker", p))
        if p.distance(q) > 0:
            parts.append(("measured", _ray(p, actual, p.distance(q))))
        return parts

    if m in ("axis", "line_axis_azimuth"):
        line = g(args[0])
        a0, a1 = Point(line.coords[0]), Point(line.coords[-1])
        mid = Point((a0.x + a1.x) / 2, (a0.y + a1.y) / 2)
        radius = max(MIN_RAY_M, 0.6 * a0.distance(a1))
        if m == "axis" and c.get("value") in oracle.AXES:
            centre = oracle.AXES.index(c["value"]) * 45.0
            for base in (centre, centre + 180.0):  # an axis is a double sector
                parts.append(("allowed", _sector(mid, base - 22.5, base + 22.5, radius)))
        parts.append(("reference", line))
        parts.append(("measured", LineString([a0, a1])))
        return parts

    # ---- ordering: the reference line, its sides, positions along it
    if m in ("side_of_line", "same_side"):
        line = g(args[0])
        others = args[1:]
        width = max(MIN_RAY_M, max(ref_point(g(f)).distance(line) for f in others) * 1.5)
        parts.append(("reference", line))
        want = c.get("value")
        if m == "side_of_line" and want in ("left", "right"):
            parts.append(("allowed", _side_region(line, want, width)))
        else:
            # same_side: shade the side the non-target feature is on.
            fixed = [f for f in others if f != target] or others
            side = oracle.side_of_line(line, g(fixed[0]))
            if side in ("left", "right"):
                wanted = side if want in (True, None) else ("right" if side == "left" else "left")
                parts.append(("allowed", _side_region(line, wanted, width)))
        for f in others:
            p = ref_point(g(f))
            parts.append(("marker", p))
            if p.distance(line) > 0:
                parts.append(("measured", shapely.shortest_line(p, line)))
        return parts

    if m in ("along_position", "along_order"):
        line = g(args[0])
        parts.append(("reference", line))
        parts.append(("marker", Point(line.coords[0])))  # where positions start
        if m == "along_position":
            lo, hi = _limits(c)
            lo = max(0.0, lo or 0.0)
            hi = min(line.length, hi if hi is not None else line.length)
            if hi > lo:
                parts.append(("allowed", _substring(line, lo, hi)))
        for f in args[1:]:
            p = ref_point(g(f))
            pos = line.project(p)
            proj = line.interpolate(pos)
            parts.append(("marker", proj))
            if p.distance(proj) > 0:
                parts.append(("measured", LineString([p, proj])))
        return parts

    if m == "strictly_between":
        a, b, cc = g(args[0]), g(args[1]), g(args[2])
        hull = shapely.union(a, b).convex_hull
        parts.append(("allowed", hull))
        parts.append(("reference", a))
        parts.append(("reference", b))
        inter = cc.intersection(hull)
        parts.append(("intersection", inter))
        return parts

    if m == "endpoint_connected":
        a, b = g(args[0]), g(args[1])
        ea = [Point(a.coords[0]), Point(a.coords[-1])]
        eb = [Point(b.coords[0]), Point(b.coords[-1])]
        parts.append(("marker", MultiPoint(ea + eb)))
        d, p, q = min(((p.distance(q), p, q) for p in ea for q in eb), key=lambda t: t[0])
        if d > 0:
            parts.append(("measured", LineString([p, q])))
        else:
            parts.append(("intersection", p))
        return parts

    if m == "level_above":
        a, b = g(args[0]), g(args[1])
        parts.append(("intersection", a.intersection(b)))
        return parts

    # ---- topology predicates: intersections highlighted, violations shown
    if MEASURES.get(m) and MEASURES[m].kind == "bool" and len(args) >= 2:
        a, b = g(args[0]), g(args[1])
        parts.append(("reference", b))
        inter = a.intersection(b)
        if not inter.is_empty:
            parts.append(("intersection", inter))
        elif a.distance(b) > 0:
            parts.append(("measured", shapely.shortest_line(a, b)))
        want = c.get("value")
        if (
            m
            in (
                "within",
                "covered_by",
                "contained_properly",
                "contained_properly_eps",
                "boundary_covered",
                "boundary_covered_eps",
            )
            and want
        ):
            parts.append(("violation", a.difference(b)))
        if m == "disjoint" and want and not inter.is_empty:
            parts.append(("violation", inter))
        if m in ("equals", "equals_eps") and want:
            parts.append(("violation", a.symmetric_difference(b)))
        return parts

    return [("reference", g(f)) for f in args if f in scene]


def _substring(line: LineString, start: float, end: float) -> BaseGeometry:
    from shapely.ops import substring

    return substring(line, start, end)


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
    scoring.edits.EditError when the shapes are not related by such a transform (vertex edits)."""
    from scoring.edits import EditError, apply_geometry_ops

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
