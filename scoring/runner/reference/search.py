"""Edits: a search for an allowed edit satisfying the parsed constraints (tools), checked with
the scorer's own executor and checker, and the careless centroid mover (centroid)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator

import shapely
import shapely.ops
from shapely import affinity
from shapely.geometry import Point
from shapely.geometry.base import BaseGeometry

from scoring import oracle
from scoring.edits import EditError, apply_edit
from scoring.facts import all_hold
from scoring.oracle import AXES, DIRECTIONS4, DIRECTIONS8, RELATIVE, azimuth, ref_point
from scoring.runner.agents import PromptView
from scoring.runner.reference.instructions import parse_instruction
from scoring.runner.reference.toolkits import PROMPT_ERRORS, Careless, bbox_of, centre_of, chord_of
from scoring.runner.run import edit_needs_retry
from scoring.scene import Scene


def _t(dx: float, dy: float) -> list[dict]:
    return [{"op": "translate", "dx": round(dx, 3), "dy": round(dy, 3)}]


def _unit(dx: float, dy: float) -> tuple[float, float] | None:
    n = math.hypot(dx, dy)
    return (dx / n, dy / n) if n > 1e-9 else None


def _ends(line: BaseGeometry) -> list[Point]:
    return [Point(line.coords[0]), Point(line.coords[-1])]


def _others(c: dict, target: str) -> list[str]:
    return [a for a in c["args"] if a != target]


TOWARDS = {
    "intersects",
    "within",
    "overlaps",
    "touches",
    "touches_eps",
    "crosses",
    "covered_by",
    "contained_properly",
    "contained_properly_eps",
    "boundary_covered",
    "boundary_covered_eps",
    "equals",
    "equals_eps",
    "within_distance",
    "endpoint_connected",
}


class EditSearch:
    """Candidate edits of `target`, checked with the scorer's own executor and checker."""

    def __init__(self, scene: Scene, target: str, constraints: list[dict], allowed: list[str]):
        self.scene, self.target, self.cons, self.allowed = scene, target, constraints, tuple(allowed)
        self.g = scene.geom(target)
        self.c = ref_point(self.g)
        disp = [c["max"] for c in constraints if c["measure"] == "displacement" and c["op"] == "at_most"]
        self.max_disp = min(disp) if disp else None
        self.tries = 0

    def ok(self, ops: list[dict]) -> bool:
        self.tries += 1
        try:
            res = apply_edit(self.scene, self.target, {"operations": ops}, self.allowed)
            return res.changed and all_hold(res.scene, self.cons, initial=self.scene)
        except (EditError, *PROMPT_ERRORS):
            return False

    def geom(self, fid: str) -> BaseGeometry:
        return self.scene.geom(fid)

    # ---- seeds: exact constructions, one family of constraints at a time
    def seeds(self) -> Iterator[list[dict]]:
        tg = self.target
        for c in self.cons:
            m, args = c["measure"], c["args"]
            if m == "level_above" and args and args[0] == tg and c.get("value", True):
                lb = oracle.vertical_level(self.scene[args[1]].props) or 0
                yield [{"op": "set_attribute", "name": "layer", "value": lb + 1}]
            elif m in ("direction4", "direction8", "bearing", "relative_direction") and args[-1] == tg:
                yield from self._bearing_seeds(c)
            elif m == "axis" and args[0] == tg:
                az = oracle.line_axis_azimuth(self.g)
                want = AXES.index(c["value"]) * 45.0
                delta = (want - az + 90.0) % 180.0 - 90.0
                yield [{"op": "rotate", "degrees_clockwise": round(delta, 4), "origin": "centroid"}]
            elif m in ("equals", "equals_eps") and c.get("value", True):
                o = ref_point(self.geom(_others(c, tg)[0]))
                yield _t(o.x - self.c.x, o.y - self.c.y)
            elif m in ("touches_eps", "touches") and c.get("value", True):
                yield from self._contact_seeds(self.geom(_others(c, tg)[0]))
            elif m in ("boundary_covered_eps", "boundary_covered") and c.get("value", True):
                yield from self._contact_seeds(self.geom(_others(c, tg)[0]).boundary)
            elif m in ("within", "contained_properly", "contained_properly_eps", "covered_by") and c.get(
                "value", True
            ):
                yield from self._inside_seeds(self.geom(_others(c, tg)[0]))
            elif m == "crosses" and c.get("value", True) and self.g.geom_type == "LineString":
                # An interior point of the target onto an interior point of the other's outline.
                other = oracle.outline(self.geom(_others(c, tg)[0]))
                for fa, fb in ((0.5, 0.5), (0.5, 0.3), (0.5, 0.7), (0.3, 0.5), (0.7, 0.5), (0.4, 0.6)):
                    p, q = self.g.interpolate(fa, normalized=True), other.interpolate(fb, normalized=True)
                    yield _t(q.x - p.x, q.y - p.y)
            elif m == "endpoint_connected" and c.get("value", True):
                other = self.geom(_others(c, tg)[0])
                pairs = sorted(
                    ((p.distance(q), p, q) for p in _ends(self.g) for q in _ends(other)), key=lambda t: t[0]
                )
                for _, p, q in pairs:
                    yield _t(q.x - p.x, q.y - p.y)
            elif m in ("along_order", "along_position"):
                yield from self._along_seeds(c)
            elif m == "same_side" and c.get("value", True) and tg in args[1:]:
                yield from self._side_seeds(c)
            elif m == "strictly_between" and args[2] == tg:
                p1, p2 = ref_point(self.geom(args[0])), ref_point(self.geom(args[1]))
                for f in (0.5, 0.4, 0.6, 0.3, 0.7, 0.45, 0.55):
                    yield _t(p1.x + f * (p2.x - p1.x) - self.c.x, p1.y + f * (p2.y - p1.y) - self.c.y)
            elif m in ("perimeter_total", "poi_density", "area") and c["op"] == "between":
                yield from self._scale_seeds(c)
            elif m == "nearest":
                o = self.geom(c["value"])
                yield from self._approach(o, [1.0, 2.0, 0.5, 3.0])
            elif m in ("hausdorff_distance",) and c["op"] == "at_most":
                o = ref_point(self.geom(_others(c, tg)[0]))
                yield _t(o.x - self.c.x, o.y - self.c.y)

    def _bearing_seeds(self, c: dict) -> Iterator[list[dict]]:
        origin = ref_point(self.geom(c["args"][0]))
        m = c["measure"]
        if m == "bearing":
            want = c["target"]
        elif m == "relative_direction":
            want = (c["params"]["heading"] + 90.0 * RELATIVE.index(c["value"])) % 360.0
        else:
            labels = DIRECTIONS4 if m == "direction4" else DIRECTIONS8
            want = labels.index(c["value"]) * 360.0 / len(labels)
        r = origin.distance(self.c)
        for rr in (r, max(r * 0.5, 1.0), r * 1.5):
            x, y = origin.x + rr * math.sin(math.radians(want)), origin.y + rr * math.cos(math.radians(want))
            yield _t(x - self.c.x, y - self.c.y)
        cur = azimuth(origin, self.c)
        delta = (want - cur + 540.0) % 360.0 - 180.0
        yield [
            {
                "op": "rotate",
                "degrees_clockwise": round(delta, 4),
                "origin": [round(origin.x, 3), round(origin.y, 3)],
            }
        ]

    def _contact_seeds(self, other: BaseGeometry) -> Iterator[list[dict]]:
        """Translations that bring the target within ~1 cm of `other` (first contact)."""
        p, q = shapely.ops.nearest_points(self.g, other)
        d = p.distance(q)
        if d > 0.02:
            s = (d - 0.01) / d
            yield _t((q.x - p.x) * s, (q.y - p.y) * s)
        # First contact along other directions, by bisection on the distance.
        for k in range(16):
            th = 2 * math.pi * k / 16
            u = (math.cos(th), math.sin(th))
            hit = self._first_contact(other, u, (self.max_disp or 100.0))
            if hit is not None:
                yield _t(u[0] * hit, u[1] * hit)

    def _first_contact(self, other, u, limit, gap: float = 0.01) -> float | None:
        """How far the target moves along unit vector u before it comes within `gap` of `other`
        (None if it moves away or gets no closer within `limit`)."""

        def dist(t):
            return affinity.translate(self.g, u[0] * t, u[1] * t).distance(other)

        step, t, prev = 0.5, 0.0, dist(0.0)
        while t < limit:
            d = dist(t + step)
            if d <= gap:
                lo, hi = t, t + step
                for _ in range(30):
                    mid = (lo + hi) / 2
                    lo, hi = (mid, hi) if dist(mid) > gap else (lo, mid)
                return lo
            if d >= prev:  # moving away (the distance is convex along a line for convex shapes)
                return None
            t, prev = t + step, d
        return None

    def _inside_seeds(self, other: BaseGeometry) -> Iterator[list[dict]]:
        pts = []
        if other.geom_type == "Polygon":
            pts.append(shapely.ops.polylabel(other, tolerance=0.1))
        pts += [other.centroid, other.representative_point()]
        for p in pts:
            yield _t(p.x - self.c.x, p.y - self.c.y)

    def _approach(self, other: BaseGeometry, gaps: Iterable[float]) -> Iterator[list[dict]]:
        p, q = shapely.ops.nearest_points(self.g, other)
        d = p.distance(q)
        u = _unit(q.x - p.x, q.y - p.y)
        if u is None:
            return
        for gap in gaps:
            if d > gap:
                yield _t(u[0] * (d - gap), u[1] * (d - gap))

    def _along_seeds(self, c: dict) -> Iterator[list[dict]]:
        line = self.geom(c["args"][0])
        if c["measure"] == "along_order":
            order = c["value"]
            k = order.index(self.target)
            pos = [oracle.along_position(line, self.geom(i)) for i in order if i != self.target]
            lo = pos[k - 1] if k > 0 else 0.0
            hi = pos[k] if k < len(pos) else line.length
            targets = [(lo + hi) / 2, lo + (hi - lo) / 3, lo + 2 * (hi - lo) / 3]
        elif c["op"] == "between":
            targets = [(c["min"] + c["max"]) / 2, c["min"] + (c["max"] - c["min"]) / 3]
        else:
            return
        for t in targets:
            p = line.interpolate(t)
            for off in (0.0, 5.0, -5.0):
                n = self._normal(line, t)
                yield _t(p.x + off * n[0] - self.c.x, p.y + off * n[1] - self.c.y)

    @staticmethod
    def _normal(line, t) -> tuple[float, float]:
        a, b = line.interpolate(max(0.0, t - 0.5)), line.interpolate(min(line.length, t + 0.5))
        u = _unit(b.x - a.x, b.y - a.y) or (1.0, 0.0)
        return -u[1], u[0]

    def _side_seeds(self, c: dict) -> Iterator[list[dict]]:
        line = self.geom(c["args"][0])
        t = line.project(self.c)
        q = line.interpolate(t)
        yield _t(2 * (q.x - self.c.x), 2 * (q.y - self.c.y))
        want = oracle.side_of_line(line, self.geom([a for a in c["args"][1:] if a != self.target][0]))
        n = self._normal(line, t)
        sign = 1.0 if want == "left" else -1.0
        for off in (5.0, 10.0, 15.0, 3.0):
            yield _t(q.x + sign * off * n[0] - self.c.x, q.y + sign * off * n[1] - self.c.y)

    def _scale_seeds(self, c: dict) -> Iterator[list[dict]]:
        mid = (c["min"] + c["max"]) / 2
        if c["measure"] == "perimeter_total":
            p0 = self.g.length
            rest = sum(self.geom(a).length for a in c["args"] if a != self.target)
            if p0 > 0 and mid > rest:
                yield [{"op": "scale", "factor": round((mid - rest) / p0, 6), "origin": "centroid"}]
        elif c["measure"] == "area":
            if self.g.area > 0 and mid > 0:
                yield [
                    {"op": "scale", "factor": round(math.sqrt(mid / self.g.area), 6), "origin": "centroid"}
                ]
        elif c["measure"] == "poi_density" and c["args"][0] == self.target:
            pois = [self.geom(a) for a in c["args"][1:]]
            area = self.g.area
            if mid <= 0:
                for f in (0.8, 0.6, 0.4, 0.25, 0.1, 0.05, 0.02):
                    yield [{"op": "scale", "factor": f, "origin": "centroid"}]
                return
            for n in range(1, len(pois) + 1):
                f = math.sqrt(n * 1e6 / (area * mid))
                yield [{"op": "scale", "factor": round(f, 6), "origin": "centroid"}]

    # ---- line searches and the generic fallback
    def directions(self) -> list[tuple[float, float]]:
        out = []
        tg = self.target
        for c in self.cons:
            others = _others(c, tg)
            if not others or tg not in c["args"] or c["measure"] == "displacement":
                continue
            o = self.geom(others[0])
            if c["measure"] == "nearest":
                o = self.geom(c["value"])
            p, q = shapely.ops.nearest_points(self.g, o)
            towards = _unit(q.x - p.x, q.y - p.y)
            oc = ref_point(o)
            centre = _unit(oc.x - self.c.x, oc.y - self.c.y)
            m, val = c["measure"], c.get("value", True)
            if c["op"] == "is" and isinstance(val, bool):
                want_towards = (m in TOWARDS) == bool(val) if m != "disjoint" else not val
            elif c["op"] in ("between", "at_least", "at_most"):
                try:
                    cur = oracle.MEASURES[m].fn(*[self.geom(a) for a in c["args"]], **c["params"])
                except (TypeError, ValueError):
                    continue
                lo, hi = c.get("min", -math.inf), c.get("max", math.inf)
                if lo <= cur <= hi:
                    continue
                want_towards = cur > hi
                if m == "boundary_distance":
                    b = o.exterior if o.geom_type == "Polygon" else o
                    p, q = shapely.ops.nearest_points(self.g, b)
                    towards = _unit(q.x - p.x, q.y - p.y)
            else:
                want_towards = True
            for u in (towards, centre):
                if u is not None:
                    out.append(u if want_towards else (-u[0], -u[1]))
        seen, uniq = set(), []
        for u in out:
            key = (round(u[0], 3), round(u[1], 3))
            if key not in seen:
                seen.add(key)
                uniq.append(u)
        return uniq

    def line_searches(self, limit: float, step: float = 0.5) -> Iterator[list[dict]]:
        for u in self.directions():
            t = step
            while t <= limit:
                yield _t(u[0] * t, u[1] * t)
                t += step

    def generic(self, limit: float, step: float = 1.0, directions: int = 32) -> Iterator[list[dict]]:
        t = step
        while t <= limit:
            for k in range(directions):
                th = 2 * math.pi * k / directions
                yield _t(t * math.cos(th), t * math.sin(th))
            t += step

    def solve(self, max_tries: int = 6000) -> list[dict] | None:
        """Exact constructions first, then line searches along the directions the constraints
        point to, then every direction. The budget counts candidates, not seconds, so a prompt
        always gets the same reply (the hardest Helsinki, Stockholm and London edits need ~2500)."""
        limit = self.max_disp if self.max_disp is not None else 150.0
        for gen in (self.seeds(), self.line_searches(limit), self.generic(min(limit, 150.0))):
            for ops in gen:
                if self.tries >= max_tries:
                    return None
                if self.ok(ops):
                    return ops
        return None


def _minimal_edit(allowed: list[str], units: str | None) -> list[dict]:
    """The smallest valid non-zero edit: a nudge of 1 px (0.5 m), or an attribute edit where only
    those are allowed."""
    if "translate" in allowed:
        return [{"op": "translate", "dx": 1 if units == "pixels" else 0.5, "dy": 0}]
    return [{"op": "set_attribute", "name": "layer", "value": 1}]


def _edit_reply(ops: list[dict] | None, allowed: list[str], units: str | None) -> str:
    """The reply JSON; an edit the runner would reject as a no-op becomes the minimal edit."""
    reply = json.dumps({"operations": ops or []})
    if not ops or edit_needs_retry(reply) is not None:
        reply = json.dumps({"operations": _minimal_edit(allowed, units)})
    return reply


def answer_edit_tools(v: PromptView) -> str:
    constraints, allowed = parse_instruction(v.text)
    if v.scene is None or v.units == "pixels" or not v.target:
        return _edit_reply(None, allowed, v.units)
    try:
        scene = Scene.from_geojson(v.scene)
        ops = EditSearch(scene, v.target, constraints, allowed).solve() if constraints else None
    except PROMPT_ERRORS:
        ops = None
    return _edit_reply(ops, allowed, v.units)


# ---- the careless analyst's edits
def _careless_ops(scene: Scene, target: str, c: dict, allowed: list[str]) -> list[dict] | None:
    g = scene.geom(target)
    me = centre_of(g)
    m, args = c["measure"], c["args"]
    others = [a for a in args if a != target]
    if m == "level_above":
        return [{"op": "set_attribute", "name": "layer", "value": 1}]
    if m in ("direction4", "direction8", "bearing", "relative_direction"):
        o = centre_of(scene.geom(args[0]))
        if m == "bearing":
            want = c["target"]
        elif m == "relative_direction":
            want = (c["params"]["heading"] + 90.0 * RELATIVE.index(c["value"])) % 360.0
        else:
            want = DIRECTIONS8.index(c["value"]) * 45.0
        r = o.distance(me)
        return _t(
            o.x + r * math.sin(math.radians(want)) - me.x, o.y + r * math.cos(math.radians(want)) - me.y
        )
    if m == "axis":
        delta = (AXES.index(c["value"]) - AXES.index(Careless.axis(g))) * 45.0
        return [{"op": "rotate", "degrees_clockwise": delta or 45.0, "origin": "centroid"}]
    if m in ("perimeter_total", "poi_density", "area") and c["op"] == "between":
        mid = (c["min"] + c["max"]) / 2
        bb = bbox_of(g)
        if m == "perimeter_total":
            rest = sum(bbox_of(scene.geom(a)).length for a in others)
            f = (mid - rest) / bb.length if mid > rest else 0.9
        elif m == "poi_density" and mid > 0:
            n = sum(1 for a in others if scene.geom(a).covered_by(bb))
            f = math.sqrt(max(n, 1) * 1e6 / (bb.area * mid))
        else:
            f = 0.5
        return [{"op": "scale", "factor": round(max(f, 0.05), 4), "origin": "centroid"}]
    if not others:
        return None
    o = centre_of(scene.geom(c["value"] if m == "nearest" else others[0]))
    if m in ("along_order", "along_position"):
        line = scene.geom(args[0])
        chord = chord_of(line)
        if m == "along_order":
            pos = [chord.project(centre_of(scene.geom(i))) for i in c["value"] if i != target]
            k = c["value"].index(target)
            lo = pos[k - 1] if k > 0 else 0.0
            hi = pos[k] if k < len(pos) else chord.length
            t = (lo + hi) / 2
        else:
            t = (c.get("min", 0.0) + c.get("max", chord.length)) / 2
        p = chord.interpolate(t)
        return _t(p.x - me.x, p.y - me.y)
    if m == "same_side":
        q = chord_of(scene.geom(args[0])).interpolate(chord_of(scene.geom(args[0])).project(me))
        return _t(2 * (q.x - me.x), 2 * (q.y - me.y))
    if m == "strictly_between":
        a, b = centre_of(scene.geom(args[0])), centre_of(scene.geom(args[1]))
        return _t((a.x + b.x) / 2 - me.x, (a.y + b.y) / 2 - me.y)
    if m == "endpoint_connected":
        line = scene.geom(others[0])
        end = min((Point(line.coords[0]), Point(line.coords[-1])), key=me.distance)
        return _t(end.x - me.x, end.y - me.y)
    dx, dy = o.x - me.x, o.y - me.y
    r = math.hypot(dx, dy) or 1.0
    val = c.get("value", True)
    if m == "disjoint" or (m in TOWARDS and val is False):
        push = bbox_of(g).length / 4 + bbox_of(scene.geom(others[0])).length / 4
        return _t(-dx / r * push, -dy / r * push)
    if c["op"] in ("between", "at_least", "at_most"):
        want = (
            (c.get("min", 0.0) + c.get("max", c.get("min", 0.0) * 2)) / 2
            if c["op"] == "between"
            else (c["max"] / 2 if c["op"] == "at_most" else c["min"] * 1.5)
        )
        s = (r - want) / r
        return _t(dx * s, dy * s)
    if m == "within_distance":
        return _t(dx * 0.9, dy * 0.9)
    return _t(dx, dy)  # intersects, within, overlaps, touches, equals, ...: centroid onto centroid


def answer_edit_careless(v: PromptView) -> str:
    constraints, allowed = parse_instruction(v.text)
    if v.scene is None or v.units == "pixels" or not v.target or not constraints:
        return _edit_reply(None, allowed, v.units)
    try:
        scene = Scene.from_geojson(v.scene)
        main = [c for c in constraints if c["measure"] != "displacement"] or constraints
        ops = _careless_ops(scene, v.target, main[0], allowed)
    except PROMPT_ERRORS:
        ops = None
    if ops and any(op["op"] not in allowed for op in ops):
        ops = None
    return _edit_reply(ops, allowed, v.units)
