"""The centroid agent's edits: the target's centroid moved to where the constraints seem to ask,
judged by bounding boxes and centroids only."""

from __future__ import annotations

import math

from shapely.geometry import Point
from shapely.geometry.base import BaseGeometry

from scoring.geometry.scene import Scene
from scoring.oracle import AXES, DIRECTIONS8, RELATIVE
from scoring.oracle.seeding import translation
from scoring.runner.agents.edit_search import TOWARDS, edit_reply
from scoring.runner.agents.instructions import parse_instruction
from scoring.runner.agents.prompt_view import PromptView
from scoring.runner.agents.toolkits import PROMPT_ERRORS, Careless, bbox_of, centre_of, chord_of
from scoring.vocab import EditOp


def _careless_ops(scene: Scene, target: str, c: dict, allowed: list[EditOp]) -> list[dict] | None:
    g = scene.geom(target)
    me = centre_of(g)
    m, args = c["measure"], c["args"]
    others = [a for a in args if a != target]
    if m == "level_above":
        return [{"op": "set_attribute", "name": "layer", "value": 1}]
    if m in ("direction4", "direction8", "bearing", "relative_direction"):
        return _turned_about(scene, me, c)
    if m == "axis":
        delta = (AXES.index(c["value"]) - AXES.index(Careless.axis(g))) * 45.0
        return [{"op": "rotate", "degrees_clockwise": delta or 45.0, "origin": "centroid"}]
    if m in ("perimeter_total", "poi_density", "area") and c["op"] == "between":
        return _scaled(scene, g, others, c)
    if not others:
        return None
    placed = _placed(scene, target, me, c, others)
    if placed is not None:
        return placed
    return _towards(scene, g, me, c, others)


def _turned_about(scene: Scene, me: Point, c: dict) -> list[dict]:
    """The centroid moved round the reference's, at the same distance, to the wanted bearing."""
    m = c["measure"]
    o = centre_of(scene.geom(c["args"][0]))
    if m == "bearing":
        want = c["target"]
    elif m == "relative_direction":
        want = (c["params"]["heading"] + 90.0 * RELATIVE.index(c["value"])) % 360.0
    else:
        want = DIRECTIONS8.index(c["value"]) * 45.0
    r = o.distance(me)
    return translation(
        o.x + r * math.sin(math.radians(want)) - me.x, o.y + r * math.cos(math.radians(want)) - me.y
    )


def _scaled(scene: Scene, g: BaseGeometry, others: list[str], c: dict) -> list[dict]:
    """A scale toward the middle of a size range, judged by bounding boxes."""
    m = c["measure"]
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


def _placed(scene: Scene, target: str, me: Point, c: dict, others: list[str]) -> list[dict] | None:
    """The centroid put at a spot the ordering constraints name (along a line, across it,
    between two features, on a line's end); None for the other measures."""
    m, args = c["measure"], c["args"]
    if m in ("along_order", "along_position"):
        chord = chord_of(scene.geom(args[0]))
        if m == "along_order":
            pos = [chord.project(centre_of(scene.geom(i))) for i in c["value"] if i != target]
            k = c["value"].index(target)
            lo = pos[k - 1] if k > 0 else 0.0
            hi = pos[k] if k < len(pos) else chord.length
            t = (lo + hi) / 2
        else:
            t = (c.get("min", 0.0) + c.get("max", chord.length)) / 2
        p = chord.interpolate(t)
        return translation(p.x - me.x, p.y - me.y)
    if m == "same_side":
        q = chord_of(scene.geom(args[0])).interpolate(chord_of(scene.geom(args[0])).project(me))
        return translation(2 * (q.x - me.x), 2 * (q.y - me.y))
    if m == "strictly_between":
        a, b = centre_of(scene.geom(args[0])), centre_of(scene.geom(args[1]))
        return translation((a.x + b.x) / 2 - me.x, (a.y + b.y) / 2 - me.y)
    if m == "endpoint_connected":
        line = scene.geom(others[0])
        end = min((Point(line.coords[0]), Point(line.coords[-1])), key=me.distance)
        return translation(end.x - me.x, end.y - me.y)
    return None


def _towards(scene: Scene, g: BaseGeometry, me: Point, c: dict, others: list[str]) -> list[dict]:
    """The centroid moved along the line to the other feature's: away, to a distance, or onto it."""
    m = c["measure"]
    o = centre_of(scene.geom(c["value"] if m == "nearest" else others[0]))
    dx, dy = o.x - me.x, o.y - me.y
    r = math.hypot(dx, dy) or 1.0
    val = c.get("value", True)
    if m == "disjoint" or (m in TOWARDS and val is False):
        push = bbox_of(g).length / 4 + bbox_of(scene.geom(others[0])).length / 4
        return translation(-dx / r * push, -dy / r * push)
    if c["op"] in ("between", "at_least", "at_most"):
        want = (
            (c.get("min", 0.0) + c.get("max", c.get("min", 0.0) * 2)) / 2
            if c["op"] == "between"
            else (c["max"] / 2 if c["op"] == "at_most" else c["min"] * 1.5)
        )
        s = (r - want) / r
        return translation(dx * s, dy * s)
    if m == "within_distance":
        return translation(dx * 0.9, dy * 0.9)
    return translation(dx, dy)  # intersects, within, overlaps, touches, equals, ...: centroid onto centroid


def answer_edit_careless(v: PromptView) -> str:
    constraints, allowed = parse_instruction(v.text)
    if v.scene is None or v.units == "pixels" or not v.target or not constraints:
        return edit_reply(None, allowed, v.units)
    try:
        scene = Scene.from_geojson(v.scene)
        main = [c for c in constraints if c["measure"] != "displacement"] or constraints
        ops = _careless_ops(scene, v.target, main[0], allowed)
    except PROMPT_ERRORS:
        ops = None
    if ops and any(op["op"] not in allowed for op in ops):
        ops = None
    return edit_reply(ops, allowed, v.units)
