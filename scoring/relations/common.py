"""Shared machinery for relation builders: candidate classification with margins, feature-id
questions, and reference-edit search through the same executor models use."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any

import numpy as np
import shapely
import shapely.ops
from shapely import affinity
from shapely.geometry.base import BaseGeometry

from scoring import oracle
from scoring.constraints.edits import EditError, apply_edit, edit_instruction, translation_of
from scoring.constraints.facts import all_hold, describe_constraint, evaluate
from scoring.constraints.wording import Wording, id_list
from scoring.extract.pools import PoolFeature
from scoring.geometry.scene import Scene
from scoring.relations.base import BuildContext, EditItem, Member, QAItem, fact, fid, make_scene, mcq
from scoring.relations.edit_search import nudges_hold, satisfying_edits
from scoring.vocab import GEOMETRY_OPS, AnswerType, EditOp, MarginClass

CLEAR_GAP = 1.0  # m: a gap at least this wide is a clear "disjoint"
CLEAR_AMOUNT = 2.0  # m or m²: an overlap / crossing at least this large is clear
# Every reference edit still satisfies all its constraints when its result is moved by this much
# along either grid axis (then snapped to the 1 cm grid): a correct edit a few millimetres off
# the reference, or rounded differently, is judged correct too. Below the edit eps (0.05 m).
EDIT_NUDGE_M = 0.02  # the promise each editing instance records: its reference edit survives this nudge
# Checked with a larger nudge too, so the promised one never meets a bound exactly (a margin equal to
# the nudge left M04-010 of seed 90417 at 272.9999999994 for a bound of 273 once nudged).
NUDGE_SLACK_M = 0.01
NUDGES = tuple(
    (sx * d, sy * d)
    for d in (EDIT_NUDGE_M, EDIT_NUDGE_M + NUDGE_SLACK_M)
    for sx, sy in ((1.0, 0.0), (-1.0, 0.0), (0.0, 1.0), (0.0, -1.0))
)


def distances(geoms: list[BaseGeometry], other: BaseGeometry) -> np.ndarray:
    """g.distance(other) for each g, in one call (the same GEOS call, so the same doubles)."""
    arr = np.empty(len(geoms), dtype=object)
    arr[:] = geoms
    return shapely.distance(arr, other)


def classify(c: BaseGeometry, a: BaseGeometry, d: float | None = None) -> MarginClass:
    """Topological class of candidate c with respect to anchor a, with margins; "ambiguous"
    where a 1 m tolerance could change the answer. `d`: c.distance(a), when already known."""
    d = c.distance(a) if d is None else float(d)
    if d >= CLEAR_GAP:
        return MarginClass.DISJOINT
    if d > 0:
        return MarginClass.AMBIGUOUS
    if c.equals(a):
        return MarginClass.EQUAL
    if c.touches(a):
        return MarginClass.TOUCH
    if a.geom_type == "Polygon":
        if shapely.contains_properly(a, c) and c.distance(a.boundary) >= CLEAR_GAP:
            return MarginClass.INSIDE
        if oracle.boundary_covered(c, a):
            return MarginClass.BOUNDARY_COVERED
        if c.geom_type == "Polygon" and c.overlaps(a):
            inter = c.intersection(a).area
            if min(inter, c.difference(a).area, a.difference(c).area) >= CLEAR_AMOUNT:
                return MarginClass.OVERLAP
        if c.geom_type == "LineString" and c.crosses(a):
            if min(c.intersection(a).length, c.difference(a).length) >= CLEAR_AMOUNT:
                return MarginClass.CROSS
    if c.geom_type == "LineString" and a.geom_type == "LineString" and c.crosses(a):
        pts = c.intersection(a)
        ends = [shapely.Point(g.coords[i]) for g in (a, c) for i in (0, -1)]
        if all(p.distance(pts) >= CLEAR_AMOUNT for p in ends):
            return MarginClass.CROSS
    return MarginClass.AMBIGUOUS


def neighbours(
    ctx: BuildContext, anchor: PoolFeature, kinds: Iterable[str], radius: float
) -> list[PoolFeature]:
    out: list[PoolFeature] = []
    for k in kinds:
        out.extend(f for f in ctx.pools.near(k, anchor.geom, radius) if f.uid != anchor.uid)
    return out


def which_one_qa(
    ctx: BuildContext,
    anchor: Member,
    positives: list[Member],
    negatives: list[Member],
    question: Wording,
    extra_facts: Callable | None = None,
    margin: dict | None = None,
    n_candidates: int = 4,
) -> QAItem | None:
    """A feature-id question: exactly one of F1..F4 has the property. `question` is rendered
    with {ids} (e.g. "F1, F2, F3 and F4") and {a} (the anchor, F0)."""
    rng = ctx.rng
    if not positives or len(negatives) < n_candidates - 1:
        return None
    pos = rng.choice(positives)
    negs = rng.sample(negatives, n_candidates - 1)
    cands = [pos] + negs
    rng.shuffle(cands)
    made = make_scene(ctx, [anchor] + cands)
    if made is None:
        return None
    scene, prov = made
    answer = fid(cands.index(pos) + 1)
    ids = [fid(i + 1) for i in range(len(cands))]
    facts = extra_facts(scene, ids) if extra_facts else []
    choices, letter = mcq(rng, answer, [i for i in ids if i != answer])
    return QAItem(
        scene=scene,
        question=question.render(ids=id_list(ids), a=fid(0)),
        answer_type=AnswerType.FEATURE_ID,
        answer=answer,
        choices=choices,
        correct_choice=letter,
        facts=facts,
        margin=margin or {},
        provenance=prov,
    )


# ---------------------------------------------------------------- editing

ALLOWED_GEOMETRY: list[EditOp] = list(GEOMETRY_OPS)


def translate_proposals(
    max_dist: float, step: float = 0.5, directions: int = 32, preferred: tuple[float, float] | None = None
) -> Iterator[list[dict]]:
    """Translations of increasing length: first along the preferred direction (a line search),
    then in every direction."""
    angles = [2 * math.pi * k / directions for k in range(directions)]
    n = int(max_dist / step)
    if preferred is not None and (preferred[0] or preferred[1]):
        base = math.atan2(preferred[1], preferred[0])
        for i in range(1, n + 1):
            r = i * step
            yield [
                {"op": "translate", "dx": round(r * math.cos(base), 3), "dy": round(r * math.sin(base), 3)}
            ]
        angles.sort(key=lambda t: oracle.angle_diff(math.degrees(t), math.degrees(base)))
    for i in range(1, n + 1):
        r = i * step
        for t in angles:
            yield [{"op": "translate", "dx": round(r * math.cos(t), 3), "dy": round(r * math.sin(t), 3)}]


def nearest_vector(a: BaseGeometry, b: BaseGeometry) -> tuple[float, float, float]:
    """(dx, dy, length) from a's point nearest to b to b's point nearest to a."""
    p, q = shapely.ops.nearest_points(a, b)
    return q.x - p.x, q.y - p.y, p.distance(q)


def edit_item(
    ctx: BuildContext,
    members: list[Member],
    constraints: list[dict],
    proposals: Iterable[list[dict]],
    allowed: list[EditOp] = ALLOWED_GEOMETRY,
    lead: str = "",
    margin: dict | None = None,
    information: dict | None = None,
    max_tries: int = 4000,
) -> EditItem | None:
    """Keep the candidate only if the initial scene violates the constraints and a reference
    edit, applied by the same executor as a model's edit, satisfies them all."""
    made = make_scene(ctx, members)
    if made is None:
        return None
    scene, prov = made
    if all_hold(scene, constraints, initial=scene):
        return None
    for edit, res in satisfying_edits(scene, proposals, tuple(allowed), constraints, max_tries):
        if not holds_with_margin(scene, edit, allowed, constraints):
            continue
        facts = []
        for state, state_scene in (("initial", scene), ("reference_edit", res.scene)):
            for c in constraints:
                facts.append(
                    {
                        "state": state,
                        "measure": c["measure"],
                        "args": c["args"],
                        "params": c.get("params", {}),
                        "value": evaluate(
                            state_scene, c["measure"], c["args"], c.get("params"), initial=scene
                        ),
                    }
                )
        instruction = edit_instruction(lead, "F0", [describe_constraint(c) for c in constraints], allowed)
        return EditItem(
            scene=scene,
            instruction=instruction,
            constraints=constraints,
            allowed_operations=list(allowed),
            reference_edit=edit,
            facts=facts,
            margin={**(margin or {}), "reference_edit_nudge_m": EDIT_NUDGE_M},
            provenance=prov,
            information=information or {"attributes": [], "withheld": []},
        )
    return None


def holds_with_margin(scene: Scene, edit: dict, allowed: Collection[str], constraints: list[dict]) -> bool:
    """Do the constraints still hold when the edit's result is nudged by EDIT_NUDGE_M, and by
    NUDGE_SLACK_M more, along each grid axis? (The nudge is one more translation, so it goes
    through the executor and its 1 cm grid like any edit.)"""
    shift = translation_of(edit["operations"], allowed)
    if shift is not None:  # a translation: the eight nudged results at once
        verdict = nudges_hold(scene, shift, NUDGES, constraints)
        if verdict is not None:
            return verdict
    for dx, dy in NUDGES:
        nudged = {"operations": [*edit["operations"], {"op": "translate", "dx": dx, "dy": dy}]}
        try:
            res = apply_edit(scene, "F0", nudged, tuple({*allowed, EditOp.TRANSLATE}))
        except EditError:
            return False
        if not all_hold(res.scene, constraints, initial=scene):
            return False
    return True


def pred(measure: str, *args: str, value: Any = True, **params: Any) -> dict:
    return {"measure": measure, "args": list(args), "params": params, "op": "is", "value": value}


def between(measure: str, *args: str, lo: float, hi: float, unit: str = "m", **params: Any) -> dict:
    return {
        "measure": measure,
        "args": list(args),
        "params": params,
        "op": "between",
        "min": round(lo, 3),
        "max": round(hi, 3),
        "unit": unit,
    }


def at_most(measure: str, *args: str, hi: float, unit: str = "m", **params: Any) -> dict:
    return {
        "measure": measure,
        "args": list(args),
        "params": params,
        "op": "at_most",
        "max": round(hi, 3),
        "unit": unit,
    }


def at_least(measure: str, *args: str, lo: float, unit: str = "m", **params: Any) -> dict:
    return {
        "measure": measure,
        "args": list(args),
        "params": params,
        "op": "at_least",
        "min": round(lo, 3),
        "unit": unit,
    }


def max_displacement(limit: float) -> dict:
    return at_most("displacement", "F0", hi=math.ceil(limit))


def translated(m: Member, dx: float, dy: float, why: str) -> Member:
    return Member(m.kind, affinity.translate(m.geom, dx, dy), dict(m.props), m.source, why)


__all__ = [
    "classify",
    "distances",
    "neighbours",
    "which_one_qa",
    "edit_item",
    "pred",
    "between",
    "at_most",
    "at_least",
    "max_displacement",
    "translate_proposals",
    "nearest_vector",
    "translated",
    "fact",
    "Member",
]
