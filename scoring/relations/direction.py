"""Direction family: computed in the task CRS (+y = grid north) between reference points
(centroids). Candidates whose answer lies near a class edge are rejected; the margin in degrees
is recorded. Editing instances are solved by rotating F0 about a stated origin."""

from __future__ import annotations

import math

import numpy as np
import shapely

from scoring import oracle
from scoring.constraints.wording import NUMBER, Wording
from scoring.extract.pools import PoolFeature
from scoring.oracle import AXES, DIRECTIONS4, DIRECTIONS8, RELATIVE, azimuth, ref_point, ref_points, sector
from scoring.relations.base import (
    BuildContext,
    EditItem,
    Member,
    QAItem,
    Solver,
    fact,
    make_scene,
    mcq,
    relation,
)
from scoring.relations.common import at_most, edit_item, max_displacement, pred
from scoring.relations.options import bearing_options, direction_distractors
from scoring.vocab import AnswerType, Family, PoolKind

FAMILY = Family.DIRECTION
MIN_SEP, MAX_SEP = 30.0, 350.0  # metres between the two reference points
MARGIN4, MARGIN8, MARGIN_AXIS = 5.0, 4.0, 5.0

REF_NOTE = (
    "Directions are bearings between the features' centroids in the task CRS, measured "
    "clockwise from grid north (+y)."
)
Q_DIRECTION4 = Wording(
    "In which direction (N, E, S or W) does {b} lie as seen from {a}? "
    + REF_NOTE
    + " Here N covers [315°, 45°), E [45°, 135°), S [135°, 225°) and W [225°, 315°)."
)
Q_DIRECTION8 = Wording(
    "In which direction (N, NE, E, SE, S, SW, W or NW) does {b} lie as seen from {a}? "
    + REF_NOTE
    + " Here each direction covers the 45° sector centred on it (N = [337.5°, 22.5°))."
)
Q_BEARING = Wording(
    "What is the bearing from {a} to {b}, in degrees clockwise from grid north? "
    + REF_NOTE
    + " Give a value in [0, 360)."
)
Q_RELATIVE = Wording(
    "An observer stands at {a} and moves along heading {heading:g}° (clockwise from grid north). "
    "Relative to the observer, is {b} ahead, behind, left or right? "
    + REF_NOTE
    + " Ahead means within 45° of the heading, behind within 45° of the opposite direction.",
    heading=NUMBER,
)
Q_AXIS = Wording(
    "Which axis best describes the orientation of road {a}, taken as the straight line from "
    "its first vertex to its last: N-S, NE-SW, E-W or NW-SE? Axes are 45° wide, centred on "
    "0°, 45°, 90° and 135° clockwise from grid north (+y)."
)


def _partner(ctx: BuildContext, anchor, kinds=(PoolKind.POI, PoolKind.BUILDING)):
    a = ref_point(anchor.geom)
    near = [f for k in kinds for f in ctx.pools.near(k, anchor.geom, MAX_SEP) if f.uid != anchor.uid]
    geoms = np.empty(len(near), dtype=object)
    geoms[:] = [f.geom for f in near]
    seps = shapely.distance(ref_points(geoms), a)  # ref_point(f.geom).distance(a), for all at once
    cands = [f for f, d in zip(near, seps, strict=True) if MIN_SEP <= d <= MAX_SEP]
    return ctx.rng.choice(cands) if cands else None


def _pair_scene(ctx, anchor, partner):
    return make_scene(ctx, [Member.of(anchor), Member.of(partner)])


def _class_qa(ctx, anchor, scheme: str):
    partner = _partner(ctx, anchor)
    if partner is None:
        return None
    made = _pair_scene(ctx, anchor, partner)
    if made is None:
        return None
    scene, prov = made
    b = oracle.bearing(scene.geom("F0"), scene.geom("F1"))
    n = 4 if scheme == "4" else 8
    idx, margin = sector(b, n)
    if margin < (MARGIN4 if n == 4 else MARGIN8):
        return None
    labels = DIRECTIONS4 if n == 4 else DIRECTIONS8
    answer = labels[idx]
    if n == 4:
        distractors = [d for d in labels if d != answer]
    else:
        # three of the seven others, drawn uniformly: no option is marked by its neighbours
        distractors = direction_distractors(ctx.rng, answer, labels)
    choices, letter = mcq(ctx.rng, answer, distractors)
    question = Q_DIRECTION4 if n == 4 else Q_DIRECTION8
    return QAItem(
        scene,
        question.render(a="F0", b="F1"),
        AnswerType.DIRECTION4 if n == 4 else AnswerType.DIRECTION8,
        answer,
        choices,
        letter,
        [fact(scene, "bearing", "F0", "F1"), fact(scene, f"direction{n}", "F0", "F1")],
        {"sector_edge_deg": round(margin, 3)},
        prov,
    )


def _rotate_about(scene, origin_id: str, target_bearing: float) -> list[dict]:
    """Rotation of F0 about the centroid of `origin_id` that brings bearing(origin, F0) to the
    target bearing (clockwise positive)."""
    o = ref_point(scene.geom(origin_id))
    cur = azimuth(o, ref_point(scene.geom("F0")))
    delta = (target_bearing - cur + 540.0) % 360.0 - 180.0
    return [{"op": "rotate", "degrees_clockwise": round(delta, 4), "origin": [round(o.x, 3), round(o.y, 3)]}]


def _class_edit(ctx, anchor, scheme: str):
    partner = _partner(ctx, anchor)
    if partner is None:
        return None
    n = 4 if scheme == "4" else 8
    labels = DIRECTIONS4 if n == 4 else DIRECTIONS8
    members = [Member.of(anchor), Member.of(partner)]
    made = make_scene(ctx, members)
    if made is None:
        return None
    scene = made[0]
    cur_idx, _ = sector(oracle.bearing(scene.geom("F1"), scene.geom("F0")), n)
    want = ctx.rng.choice([i for i in range(n) if i != cur_idx])
    r = ref_point(scene.geom("F0")).distance(ref_point(scene.geom("F1")))
    cons = [pred(f"direction{n}", "F1", "F0", value=labels[want]), max_displacement(2 * r + 5)]
    return edit_item(ctx, members, cons, [_rotate_about(scene, "F1", want * 360.0 / n)])


@relation(
    "D01",
    "Four-way cardinal direction",
    FAMILY,
    definition="The 4-way direction of ref(B) from ref(A): the bearing (clockwise from grid "
    "north) falls in N [315, 45), E [45, 135), S [135, 225) or W [225, 315). "
    "Instances keep a margin of at least 5 degrees from a sector edge.",
    question_forms="In which direction (N, E, S or W) does F1 lie as seen from F0?",
    questions=(Q_DIRECTION4,),
    answer_type=AnswerType.DIRECTION4,
    solver=Solver("direction", "4"),
    distractor_rule="The three other cardinal directions.",
    edit_constraints="F0 must lie in a stated 4-way direction of F1 (solved by rotating F0 "
    "about F1's centroid), with bounded displacement.",
    anchor_kinds=(PoolKind.POI, PoolKind.BUILDING),
)
class Cardinal4:
    qa = staticmethod(lambda ctx, a: _class_qa(ctx, a, "4"))
    edit = staticmethod(lambda ctx, a: _class_edit(ctx, a, "4"))


@relation(
    "D02",
    "Eight-way cardinal direction",
    FAMILY,
    definition="The 8-way direction of ref(B) from ref(A): 45-degree sectors centred on N, "
    "NE, E, SE, S, SW, W, NW. Margin of at least 4 degrees from a sector edge.",
    question_forms="In which direction (N, NE, E, SE, S, SW, W or NW) does F1 lie from F0?",
    questions=(Q_DIRECTION8,),
    answer_type=AnswerType.DIRECTION8,
    solver=Solver("direction", "8"),
    distractor_rule="Three of the seven other directions, drawn uniformly (no option is marked by "
    "having both neighbours offered).",
    edit_constraints="F0 must lie in a stated 8-way direction of F1, bounded displacement.",
    anchor_kinds=(PoolKind.POI, PoolKind.BUILDING),
)
class Cardinal8:
    qa = staticmethod(lambda ctx, a: _class_qa(ctx, a, "8"))
    edit = staticmethod(lambda ctx, a: _class_edit(ctx, a, "8"))


@relation(
    "D04",
    "Bearing",
    FAMILY,
    definition="The bearing from ref(A) to ref(B) in degrees clockwise from grid north "
    "(+y of the task CRS), in [0, 360). Tolerance 1 degree, circular.",
    question_forms="What is the bearing from F0 to F1, in degrees clockwise from grid north?",
    questions=(Q_BEARING,),
    answer_type=AnswerType.BEARING,
    solver=Solver("bearing"),
    distractor_rule="Nearby bearings: four bearings equally spaced by a seeded step (15, 20, 30 or "
    "45 degrees) in clockwise order, the answer at a uniform rank.",
    edit_constraints="The bearing from F1 to F0 must be within 1 degree of a stated whole "
    "bearing (solved by rotating F0 about F1's centroid).",
    anchor_kinds=(PoolKind.POI, PoolKind.BUILDING),
)
class Bearing:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        partner = _partner(ctx, anchor)
        if partner is None:
            return None
        made = _pair_scene(ctx, anchor, partner)
        if made is None:
            return None
        scene, prov = made
        b = oracle.bearing(scene.geom("F0"), scene.geom("F1"))
        # four bearings equally spaced by a seeded step, the answer at a uniform rank
        choices, k = bearing_options(ctx.rng, b)
        letter = "ABCD"[k]
        q = Q_BEARING.render(a="F0", b="F1")
        return QAItem(
            scene,
            q,
            AnswerType.BEARING,
            round(b, 3),
            choices,
            letter,
            [fact(scene, "bearing", "F0", "F1")],
            {},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        partner = _partner(ctx, anchor)
        if partner is None:
            return None
        members = [Member.of(anchor), Member.of(partner)]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        cur = oracle.bearing(scene.geom("F1"), scene.geom("F0"))
        target = float(round((cur + ctx.rng.choice([-1, 1]) * ctx.rng.uniform(30, 150)) % 360))
        r = ref_point(scene.geom("F0")).distance(ref_point(scene.geom("F1")))
        cons = [
            {
                "measure": "bearing",
                "args": ["F1", "F0"],
                "params": {},
                "op": "angle_within",
                "target": target,
                "tolerance": 1.0,
                "unit": "deg",
            },
            max_displacement(2 * r + 5),
        ]
        return edit_item(ctx, members, cons, [_rotate_about(scene, "F1", target)])


@relation(
    "D05",
    "Relative direction",
    FAMILY,
    definition="Where ref(B) lies for an observer at ref(A) moving along a stated heading h: "
    "relative angle r = bearing(A, B) - h (mod 360); ahead [315, 45), right [45, 135), "
    "behind [135, 225), left [225, 315). Margin of at least 5 degrees.",
    question_forms="An observer at F0 moves along heading h. Is F1 ahead, behind, to the "
    "left or to the right?",
    questions=(Q_RELATIVE,),
    answer_type=AnswerType.RELATIVE_DIRECTION,
    solver=Solver("relative"),
    distractor_rule="The three other relative directions.",
    edit_constraints="F0 must lie on a stated side (ahead/behind/left/right) of an observer "
    "at F1 with heading h (solved by rotating F0 about F1's centroid).",
    anchor_kinds=(PoolKind.POI, PoolKind.BUILDING),
)
class Relative:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        partner = _partner(ctx, anchor)
        if partner is None:
            return None
        made = _pair_scene(ctx, anchor, partner)
        if made is None:
            return None
        scene, prov = made
        h = float(ctx.rng.randrange(0, 360, 5))
        idx, margin = sector((oracle.bearing(scene.geom("F0"), scene.geom("F1")) - h) % 360, 4)
        if margin < MARGIN4:
            return None
        answer = RELATIVE[idx]
        choices, letter = mcq(ctx.rng, answer, [r for r in RELATIVE if r != answer])
        q = Q_RELATIVE.render(a="F0", b="F1", heading=h)
        return QAItem(
            scene,
            q,
            AnswerType.RELATIVE_DIRECTION,
            answer,
            choices,
            letter,
            [fact(scene, "bearing", "F0", "F1"), fact(scene, "relative_direction", "F0", "F1", heading=h)],
            {"sector_edge_deg": round(margin, 3), "heading": h},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        partner = _partner(ctx, anchor)
        if partner is None:
            return None
        members = [Member.of(anchor), Member.of(partner)]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        h = float(ctx.rng.randrange(0, 360, 5))
        cur, _ = sector((oracle.bearing(scene.geom("F1"), scene.geom("F0")) - h) % 360, 4)
        want = ctx.rng.choice([i for i in range(4) if i != cur])
        r = ref_point(scene.geom("F0")).distance(ref_point(scene.geom("F1")))
        cons = [
            pred("relative_direction", "F1", "F0", value=RELATIVE[want], heading=h),
            max_displacement(2 * r + 5),
        ]
        return edit_item(ctx, members, cons, [_rotate_about(scene, "F1", (h + 90 * want) % 360)])


def _straight_road(f) -> bool:
    g = f.geom
    chord = math.dist(g.coords[0], g.coords[-1])
    return g.length >= 40 and chord >= 0.9 * g.length


@relation(
    "D06",
    "Axial direction",
    FAMILY,
    definition="The orientation class of a line: the chord from its first to its last "
    "vertex, folded to [0, 180), is N-S [157.5, 22.5), NE-SW [22.5, 67.5), E-W "
    "[67.5, 112.5) or NW-SE [112.5, 157.5). Only near-straight roads (chord >= 90 % "
    "of length) with a margin of at least 5 degrees.",
    question_forms="Which axis best describes the orientation of road F0: N-S, NE-SW, E-W or " "NW-SE?",
    questions=(Q_AXIS,),
    answer_type=AnswerType.AXIS,
    solver=Solver("axis"),
    distractor_rule="The three other axes.",
    edit_constraints="Road F0 must run along a stated axis (solved by rotating F0 about its "
    "centroid), its centroid staying within 1 m.",
    anchor_kinds=(PoolKind.ROAD,),
)
class Axial:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        if not _straight_road(anchor):
            return None
        made = make_scene(ctx, [Member.of(anchor)])
        if made is None:
            return None
        scene, prov = made
        az = oracle.line_axis_azimuth(scene.geom("F0"))
        idx, margin = sector(az * 2.0, 4)
        if margin / 2.0 < MARGIN_AXIS:
            return None
        answer = AXES[idx]
        choices, letter = mcq(ctx.rng, answer, [a for a in AXES if a != answer])
        return QAItem(
            scene,
            Q_AXIS.render(a="F0"),
            AnswerType.AXIS,
            answer,
            choices,
            letter,
            [fact(scene, "line_axis_azimuth", "F0"), fact(scene, "axis", "F0")],
            {"sector_edge_deg": round(margin / 2.0, 3)},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if not _straight_road(anchor):
            return None
        members = [Member.of(anchor)]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        az = oracle.line_axis_azimuth(scene.geom("F0"))
        cur, _ = sector(az * 2.0, 4)
        want = ctx.rng.choice([i for i in range(4) if i != cur])
        delta = (want * 45.0 - az + 90.0) % 180.0 - 90.0
        cons = [pred("axis", "F0", value=AXES[want]), at_most("displacement", "F0", hi=1)]
        ops = [{"op": "rotate", "degrees_clockwise": round(delta, 4), "origin": "centroid"}]
        return edit_item(ctx, members, cons, [ops])
