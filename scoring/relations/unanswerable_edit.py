"""The editing kind of unanswerable item: ``infeasible_reach``, an instruction whose constraints
cannot all be met, proven by a geometric argument recorded in the instance.

The instruction asks that F0's reference point (its centroid; a point itself) moves at most D and
that F0 comes within r of another feature Fk, with only rigid operations (translate, rotate; scale
too when F0 is a point, which stays a point). Every point of the edited F0 then lies within D + R
of the initial reference point c, R being the largest distance from c to F0's vertices, so
min_distance(F0', Fk) >= distance(c, Fk) - D - R. When that lower bound exceeds r no edit exists:
the right reply says so (the reader's refusal detection, scoring/answers/text.py).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

from shapely.geometry import Point, shape
from shapely.geometry.base import BaseGeometry

from scoring.constraints.edits import edit_instruction
from scoring.constraints.facts import describe_constraint
from scoring.oracle.core import ref_point
from scoring.relations.common import at_most, max_displacement
from scoring.relations.unanswerable import Kind, UnanswerableError
from scoring.vocab import EditOp, Task

RIGID = (EditOp.TRANSLATE, EditOp.ROTATE)
MIN_GAP_M = 20.0  # distance(c, Fk) - R below this: too close for a clear-cut proof
SHARE_OF_GAP = 0.4  # D and r are each this share of the gap, so D + r = 0.8 of it


def _vertex_radius(geom: BaseGeometry, c: Point) -> float:
    """Largest distance from c to a point of geom (attained at a vertex)."""
    if isinstance(geom, Point):
        return 0.0
    hull = geom.convex_hull
    coords = hull.exterior.coords if hull.geom_type == "Polygon" else hull.coords
    return max(math.hypot(x - c.x, y - c.y) for x, y, *_ in coords)


def reach_bound(
    scene: dict, target: str, other: str, allowed: Sequence[str]
) -> tuple[float, float, float] | None:
    """(distance(c, other), R, lower bound without D and r) for rigid edits of target, or None
    when the allowed operations are not rigid for it (scale of a non-point, attribute edits only)."""
    feats = {f["id"]: shape(f["geometry"]) for f in scene["features"]}
    if target not in feats or other not in feats:
        return None
    geom = feats[target]
    rigid = set(RIGID) | ({EditOp.SCALE} if isinstance(geom, Point) else set())
    ops = {EditOp(o) for o in allowed if o != EditOp.SET_ATTRIBUTE}
    if not ops or not ops <= rigid:
        return None
    c = ref_point(geom)
    radius = _vertex_radius(geom, c)
    dist = c.distance(feats[other])
    return dist, radius, dist - radius


def infeasible_reason(
    scene: dict, target: str, constraints: list[dict], allowed: Sequence[str]
) -> str | None:
    """Why no allowed edit of target meets the constraints (the reach argument), or None."""
    limits = [c["max"] for c in constraints if c["measure"] == "displacement" and c["op"] == "at_most"]
    if not limits:
        return None
    d_max = min(float(v) for v in limits)
    for c in constraints:
        if c["measure"] != "min_distance" or c["op"] != "at_most" or c["args"][0] != target:
            continue
        got = reach_bound(scene, target, c["args"][1], allowed)
        if got is not None and got[2] - d_max > float(c["max"]):
            return (
                f"{target} may move at most {d_max:g} m and reaches at most {got[1]:.2f} m beyond its "
                f"reference point, which is {got[0]:.2f} m from {c['args'][1]}: the minimum distance stays "
                f">= {got[2] - d_max:.2f} m > {float(c['max']):g} m"
            )
    return None


def _make_infeasible(inst: dict) -> tuple[dict, dict] | None:
    scene, target = inst["scene"], inst["target"]
    allowed = [o for o in inst["allowed_operations"] if o != EditOp.SET_ATTRIBUTE]
    if not allowed:
        return None
    if not isinstance(shape(scene["features"][0]["geometry"]), Point):
        allowed = [o for o in allowed if o != EditOp.SCALE]
    best = None
    for f in scene["features"]:
        if f["id"] == target:
            continue
        got = reach_bound(scene, target, f["id"], allowed)
        if got is not None and (best is None or got[2] > best[1][2]):
            best = (f["id"], got)
    if best is None or best[1][2] < MIN_GAP_M:
        return None
    share = math.floor(best[1][2] * SHARE_OF_GAP)
    constraints = [at_most("min_distance", target, best[0], hi=share), max_displacement(share)]
    record = {
        "constraints": constraints,
        "allowed_operations": allowed,
        "other": best[0],
        "reference_distance_m": round(best[1][0], 3),
        "vertex_radius_m": round(best[1][1], 3),
    }
    return scene, record


def _verify_infeasible(inst: dict) -> str:
    why = infeasible_reason(inst["scene"], inst["target"], inst["constraints"], inst["allowed_operations"])
    if why is None:
        raise UnanswerableError(f"{inst['id']}: the reach argument does not prove the constraints infeasible")
    return why


def finish_edit_variant(inst: dict) -> None:
    """Put the record's constraints into the instance (instruction, operations, no reference)."""
    rec = inst["unanswerable"]
    inst["constraints"] = copy.deepcopy(rec.pop("constraints"))
    inst["allowed_operations"] = rec.pop("allowed_operations")
    lines = [describe_constraint(c) for c in inst["constraints"]]
    inst["instruction"] = edit_instruction("", inst["target"], lines, inst["allowed_operations"])
    inst["reference_edit"] = {"operations": []}  # none exists


EDIT_KINDS: tuple[Kind, ...] = (
    Kind(
        "infeasible_reach",
        Task.EDIT,
        "an edit whose constraints cannot all be met: `min_distance(F0, Fk) at most r` with "
        "`displacement(F0) at most D` under rigid operations (translate, rotate; scale only for a "
        "point F0). Re-check: with c = F0's reference point and R its largest distance to F0's "
        "vertices, distance(c, Fk) - R - D > r (recorded: `other`, `reference_distance_m`, "
        "`vertex_radius_m`); the right reply refuses. `reference_edit` is empty.",
        _make_infeasible,
        _verify_infeasible,
    ),
)
