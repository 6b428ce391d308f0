"""Ordering family: linear referencing along directed lines (first vertex to last), sides of a
line and betweenness. Road order (vertical level, endpoint connectivity): ordering_roads.py."""

from __future__ import annotations

import itertools
import math

import shapely
from shapely.geometry import LineString
from shapely.geometry.base import BaseGeometry

from scoring import oracle
from scoring.constraints.wording import FEATURE_IDS, Wording, id_list, one_of
from scoring.extract.pools import PoolFeature
from scoring.oracle import ref_point
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
from scoring.relations.common import at_most, between, edit_item, pred
from scoring.relations.constructions import placed_along
from scoring.relations.options import ordering_distractors
from scoring.vocab import AnswerType, Family, PoolKind

FAMILY = Family.ORDERING
Q_ALONG_ORDER = Wording(
    "Order {ids} by their position along road {a}, travelling from its first vertex to its last. "
    "A feature's position is where its centroid projects onto {a} (linear referencing). Answer "
    "with the ids in order, separated by commas.",
    ids=FEATURE_IDS,
)
Q_BEFORE_AFTER = Wording(
    "Travelling along route {a} from its first vertex to its last, which of the features "
    "{first}-{last} is passed immediately {word} {ref}? A feature is passed where its centroid "
    "projects onto {a}. Answer with its feature id.",
    word=one_of("after", "before"),
)
Q_SAME_SIDE = Wording(
    "Which of the features {ids} lies on the same side of road {a} as {ref}? Sides are judged at "
    "each feature's centroid, relative to {a}. Answer with its feature id.",
    ids=FEATURE_IDS,
)
Q_BETWEEN = Wording(
    "Which of the features {ids} lies strictly between {a} and {b}? Strictly between means it "
    "intersects the interior of the convex hull of {a} and {b} (the open segment joining them if "
    "both are points) without touching {a} or {b}. Answer with its feature id.",
    ids=FEATURE_IDS,
)
GAP = 10.0  # m between consecutive positions along a line
END_CLEAR = 5.0  # m: projections this close to a line's end are ambiguous


def _long_road(f, min_len=120.0, straight=0.0) -> bool:
    g = f.geom
    return g.length >= min_len and math.dist(g.coords[0], g.coords[-1]) >= straight * g.length


def _along(ctx: BuildContext, road, n: int, max_off=30.0):
    """n features near the road, projecting inside it, with positions >= GAP apart."""
    line = road.geom
    cands = []
    for k in (PoolKind.POI, PoolKind.BUILDING):
        for f in ctx.pools.near(k, line, max_off):
            p = ref_point(f.geom)
            t = line.project(p)
            if END_CLEAR <= t <= line.length - END_CLEAR and f.geom.disjoint(line):
                cands.append((t, Member.of(f)))
    ctx.rng.shuffle(cands)
    chosen: list = []
    for t, m in cands:
        if all(abs(t - u) >= GAP for u, _ in chosen):
            chosen.append((t, m))
        if len(chosen) == n:
            return chosen
    return _placed_along(ctx, road, n) if ctx.construct else None


def _placed_along(ctx: BuildContext, road, n: int):
    """Too few features along this road: n real POIs moved beside it at spread positions (at
    least 2 x GAP apart, clear of the ends) and 6-15 m off it, on either side."""
    usable = road.geom.length - 2 * (END_CLEAR + 5)
    if usable < (n - 1) * 2 * GAP:
        return None
    step = usable / n
    positions = [END_CLEAR + 5 + step * (i + ctx.rng.uniform(0.2, 0.8)) for i in range(n)]
    offsets = [ctx.rng.choice((-1, 1)) * ctx.rng.uniform(6, 15) for _ in range(n)]
    placed = placed_along(ctx, road, positions, offsets)
    if len(placed) < n:
        return None
    line = road.geom
    out = []
    for _t, m in placed:  # the snapped position, as the oracle will see it
        if not m.geom.disjoint(line):
            return None
        out.append((line.project(ref_point(m.geom)), m))
    ctx.rng.shuffle(out)
    return out


@relation(
    "O01",
    "Along-line order",
    FAMILY,
    definition="The order of features along a directed line by linear referencing: the "
    "position of ref(B) is the distance from the line's first vertex to the "
    "line's point nearest ref(B). Consecutive positions differ by at least 10 m "
    "and none projects within 5 m of an end.",
    question_forms="Order F1, F2 and F3 by their position along F0, from its first vertex.",
    questions=(Q_ALONG_ORDER,),
    answer_type=AnswerType.ORDERING,
    solver=Solver("along_order"),
    distractor_rule="The reverse, a one-swap neighbour of the answer and that neighbour's "
    "reverse: every option has its reverse and a one-swap neighbour among the others.",
    edit_constraints="Move F0 so that the order along road F1 becomes a stated order, staying "
    "within 30 m of F1.",
    anchor_kinds=(PoolKind.ROAD,),
    needs=(PoolKind.ROAD,),
    constructs=True,
)
class AlongOrder:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        if not _long_road(anchor):
            return None
        near = _along(ctx, anchor, 3)
        if not near:
            return None
        ctx.rng.shuffle(near)
        made = make_scene(ctx, [Member.of(anchor)] + [m for _, m in near])
        if made is None:
            return None
        scene, prov = made
        ids = ["F1", "F2", "F3"]
        order = oracle.along_order(scene.geom("F0"), *[scene.geom(i) for i in ids])
        answer = [ids[i] for i in order]
        others = ordering_distractors(ctx.rng, answer)
        choices, letter = mcq(ctx.rng, ", ".join(answer), [", ".join(p) for p in others])
        pos = [oracle.along_position(scene.geom("F0"), scene.geom(i)) for i in ids]
        facts = [fact(scene, "along_order", "F0", *ids)] + [
            fact(scene, "along_position", "F0", i) for i in ids
        ]
        q = Q_ALONG_ORDER.render(ids=id_list(ids), a="F0")
        return QAItem(
            scene,
            q,
            AnswerType.ORDERING,
            answer,
            choices,
            letter,
            facts,
            {"min_gap_m": round(min(abs(a - b) for a, b in itertools.combinations(pos, 2)), 3)},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if not _long_road(anchor):
            return None
        near = _along(ctx, anchor, 3)
        if not near:
            return None
        near.sort(key=lambda x: x[0])
        # F0 is the first feature along the road; it must move between the other two.
        (t0, f0), (t1, f1), (t2, f2) = near
        if t2 - t1 < 2 * GAP:
            return None
        members = [f0, Member.of(anchor), f1, f2]
        cons = [
            pred("along_order", "F1", "F0", "F2", "F3", value=["F2", "F0", "F3"]),
            at_most("min_distance", "F0", "F1", hi=30),
        ]
        target = anchor.geom.interpolate((t1 + t2) / 2)
        c = ref_point(f0.geom)
        ops = [{"op": "translate", "dx": round(target.x - c.x, 3), "dy": round(target.y - c.y, 3)}]
        return edit_item(ctx, members, cons, [ops] + list(_offset_variants(ops)))


def _offset_variants(ops):
    dx, dy = ops[0]["dx"], ops[0]["dy"]
    for ex, ey in ((5, 0), (-5, 0), (0, 5), (0, -5)):
        yield [{"op": "translate", "dx": round(dx + ex, 3), "dy": round(dy + ey, 3)}]


@relation(
    "O02",
    "Before / after along a route",
    FAMILY,
    definition="Travelling along a directed route (first vertex to last), B is passed before "
    "C when along_position(route, B) < along_position(route, C). Positions differ "
    "by at least 10 m.",
    question_forms="Travelling along F0, which feature is passed immediately after (or " "before) Fk?",
    questions=(Q_BEFORE_AFTER,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("before_after"),
    distractor_rule="The other features along the route (competing ids).",
    edit_constraints="Move F0 so that it is passed after F2 and before F3 travelling along "
    "F1 (a band of linear-referencing positions), within 30 m of F1.",
    anchor_kinds=(PoolKind.ROAD,),
    needs=(PoolKind.ROAD,),
    constructs=True,
)
class BeforeAfter:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        if not _long_road(anchor, 150):
            return None
        near = _along(ctx, anchor, 5)
        if not near:
            return None
        ctx.rng.shuffle(near)
        made = make_scene(ctx, [Member.of(anchor)] + [m for _, m in near])
        if made is None:
            return None
        scene, prov = made
        ids = ["F1", "F2", "F3", "F4", "F5"]
        order = [ids[i] for i in oracle.along_order(scene.geom("F0"), *[scene.geom(i) for i in ids])]
        after = ctx.rng.random() < 0.5
        k = ctx.rng.randrange(0, 4) if after else ctx.rng.randrange(1, 5)
        ref = order[k]
        answer = order[k + 1] if after else order[k - 1]
        choices, letter = mcq(ctx.rng, answer, [i for i in ids if i not in (ref, answer)])
        word = "after" if after else "before"
        # the question's "immediately after / before" is a parameter of the recorded fact
        facts = [
            fact(scene, "along_next", "F0", ref, *[i for i in ids if i != ref], direction=word),
            fact(scene, "along_order", "F0", *ids),
        ] + [fact(scene, "along_position", "F0", i) for i in ids]
        q = Q_BEFORE_AFTER.render(a="F0", first=ids[0], last=ids[-1], word=word, ref=ref)
        return QAItem(
            scene, q, AnswerType.FEATURE_ID, answer, choices, letter, facts, {"min_gap_m": GAP}, prov
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if not _long_road(anchor, 150):
            return None
        near = _along(ctx, anchor, 3)
        if not near:
            return None
        near.sort(key=lambda x: x[0])
        (t1, f1), (t2, f2), (t0, f0) = near  # F0 starts last along the route
        if t2 - t1 < 3 * GAP:
            return None
        members = [f0, Member.of(anchor), f1, f2]
        # Positions come from the snapped scene, so compute the band there.
        made = make_scene(ctx, members)
        if made is None:
            return None
        candidate = made[0]
        p1 = oracle.along_position(candidate.geom("F1"), candidate.geom("F2"))
        p2 = oracle.along_position(candidate.geom("F1"), candidate.geom("F3"))
        cons = [
            between("along_position", "F1", "F0", lo=math.ceil(p1 + 5), hi=math.floor(p2 - 5)),
            at_most("min_distance", "F0", "F1", hi=30),
        ]
        target = anchor.geom.interpolate((t1 + t2) / 2)
        c = ref_point(f0.geom)
        ops = [{"op": "translate", "dx": round(target.x - c.x, 3), "dy": round(target.y - c.y, 3)}]
        return edit_item(
            ctx,
            members,
            cons,
            [ops] + list(_offset_variants(ops)),
            lead="Travelling along F1 from its first vertex to its last, F0 should be "
            "passed after F2 and before F3.",
        )


def _placed_sides(ctx: BuildContext, road, signs: tuple[int, ...]) -> list[tuple[str, Member]]:
    """Real POIs moved beside the road (sign +1: left, -1: right), 6-15 m off it at spread
    positions; with the side each ends up on (none: not clearly on a side)."""
    n = len(signs)
    usable = road.geom.length - 2 * (END_CLEAR + 5)
    if usable < n * GAP:
        return []
    step = usable / n
    positions = [END_CLEAR + 5 + step * (i + ctx.rng.uniform(0.2, 0.8)) for i in range(n)]
    offsets = [sg * ctx.rng.uniform(6, 15) for sg in signs]
    out = []
    for _t, m in placed_along(ctx, road, positions, offsets):
        side = _side_ok(road.geom, m.geom)
        if side:
            out.append((side, m))
    return out


def _side_ok(line: LineString, g) -> str | None:
    p = ref_point(g)
    t = line.project(p)
    if not (END_CLEAR <= t <= line.length - END_CLEAR) or line.distance(p) < 3 or not g.disjoint(line):
        return None
    s = oracle.side_of_line(line, Member(PoolKind.POI, p).geom)
    return s if s in ("left", "right") else None


@relation(
    "O03",
    "Same / opposite side of a line",
    FAMILY,
    definition="B and C are on the same side of a directed line L when ref(B) and ref(C) lie "
    "on the same side (left/right, by the cross product with the segment of L "
    "nearest each point). Lines are near-straight (chord >= 95 % of length); "
    "points are >= 3 m from L and project >= 5 m from its ends.",
    question_forms="Which of F2-F5 lies on the same side of line F0 as F1?",
    questions=(Q_SAME_SIDE,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("same_side"),
    distractor_rule="Features on the opposite side (competing ids).",
    edit_constraints="Move F0 across road F1 to the side where F2 lies, staying within 30 m " "of F1.",
    anchor_kinds=(PoolKind.ROAD,),
    needs=(PoolKind.ROAD,),
    constructs=True,
)
class Side:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        if not _long_road(anchor, 80, 0.95):
            return None
        line = anchor.geom
        sided = []
        for k in (PoolKind.POI, PoolKind.BUILDING):
            for f in ctx.pools.near(k, line, 40):
                s = _side_ok(line, f.geom)
                if s:
                    sided.append((s, Member.of(f)))
        left = [f for s, f in sided if s == "left"]
        right = [f for s, f in sided if s == "right"]
        if ctx.construct and not (
            (len(left) >= 2 and len(right) >= 3) or (len(right) >= 2 and len(left) >= 3)
        ):
            placed = _placed_sides(ctx, anchor, (1, 1, -1, -1, -1))
            left = [m for side, m in placed if side == "left"]
            right = [m for side, m in placed if side == "right"]
        for same, other in ((left, right), (right, left)):
            if len(same) >= 2 and len(other) >= 3:
                break
        else:
            return None
        ref, pos = ctx.rng.sample(same, 2)
        negs = ctx.rng.sample(other, 3)
        cands = [pos] + negs
        ctx.rng.shuffle(cands)
        made = make_scene(ctx, [Member.of(anchor), ref] + cands)
        if made is None:
            return None
        scene, prov = made
        ids = ["F2", "F3", "F4", "F5"]
        answer = ids[cands.index(pos)]
        if not oracle.same_side(scene.geom("F0"), scene.geom("F1"), scene.geom(answer)):
            return None
        choices, letter = mcq(ctx.rng, answer, [i for i in ids if i != answer])
        facts = [fact(scene, "side_of_line", "F0", i) for i in ["F1"] + ids]
        q = Q_SAME_SIDE.render(ids=id_list(ids), a="F0", ref="F1")
        return QAItem(
            scene,
            q,
            AnswerType.FEATURE_ID,
            answer,
            choices,
            letter,
            facts,
            {"min_offset_m": 3.0, "end_clear_m": END_CLEAR},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if not _long_road(anchor, 80, 0.95):
            return None
        line = anchor.geom
        sided = [
            (s, Member.of(f))
            for k in (PoolKind.POI,)
            for f in ctx.pools.near(k, line, 25)
            if (s := _side_ok(line, f.geom))
        ]
        if ctx.construct and len({s for s, _ in sided}) < 2:
            sided = _placed_sides(ctx, anchor, (1, -1))
        left = [f for s, f in sided if s == "left"]
        right = [f for s, f in sided if s == "right"]
        if not left or not right:
            return None
        f0, f2 = (
            (ctx.rng.choice(left), ctx.rng.choice(right))
            if ctx.rng.random() < 0.5
            else (ctx.rng.choice(right), ctx.rng.choice(left))
        )
        members = [f0, Member.of(anchor), f2]
        cons = [pred("same_side", "F1", "F0", "F2"), at_most("min_distance", "F0", "F1", hi=30)]
        p = ref_point(f0.geom)
        q = line.interpolate(line.project(p))
        ops = [{"op": "translate", "dx": round(2 * (q.x - p.x), 3), "dy": round(2 * (q.y - p.y), 3)}]
        return edit_item(ctx, members, cons, [ops] + list(_offset_variants(ops)))


def _between_candidates(
    ctx: BuildContext, anchor: PoolFeature, b: PoolFeature, hull: BaseGeometry
) -> tuple[list[PoolFeature], list[PoolFeature]]:
    """(features strictly between anchor and b, overlapping their hull by 2 m or more; features
    3 m or more from the hull), clear of both by 3 m: the which-one question's answer pool and
    distractors."""
    pos, neg = [], []
    for k in (PoolKind.BUILDING, PoolKind.ROAD):
        for f in ctx.pools.near(k, hull, 40):
            if f.uid in (anchor.uid, b.uid) or not (f.geom.disjoint(anchor.geom) and f.geom.disjoint(b.geom)):
                continue
            if f.geom.distance(anchor.geom) < 3 or f.geom.distance(b.geom) < 3:
                continue
            d = f.geom.distance(hull)
            if d >= 3:
                neg.append(f)
            elif d == 0 and oracle.strictly_between(anchor.geom, b.geom, f.geom):
                inter = f.geom.intersection(hull)
                amount = inter.area or inter.length
                if amount >= 2 or (
                    hull.geom_type == "LineString"
                    and inter.length == 0
                    and f.geom.geom_type == "Polygon"
                    and hull.intersection(f.geom).length >= 2
                ):
                    pos.append(f)
    return pos, neg


@relation(
    "O04",
    "Strict betweenness",
    FAMILY,
    definition="C lies strictly between A and B when C intersects the interior of the convex "
    "hull of A and B (the open segment when both are points) and is disjoint from A "
    "and B. Positives cross the hull by >= 2 m (or m²); negatives stay >= 3 m away.",
    question_forms="Which of F2-F5 lies strictly between F0 and F1?",
    questions=(Q_BETWEEN,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("between"),
    distractor_rule="Features near the hull but clear of it (competing ids).",
    edit_constraints="Move building F0 so that it lies strictly between F1 and F2.",
    anchor_kinds=(PoolKind.POI, PoolKind.BUILDING),
)
class Between:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        partners = [
            f
            for k in (PoolKind.POI, PoolKind.BUILDING)
            for f in ctx.pools.near(k, anchor.geom, 250)
            if f.uid != anchor.uid and f.geom.distance(anchor.geom) >= 60
        ]
        if not partners:
            return None
        b = ctx.rng.choice(partners)
        hull = shapely.union(anchor.geom, b.geom).convex_hull
        pos, neg = _between_candidates(ctx, anchor, b, hull)
        if not pos or len(neg) < 3:
            return None
        neg.sort(key=lambda f: f.geom.distance(hull))
        p = ctx.rng.choice(pos)
        negs = ctx.rng.sample(neg[:8], 3)
        cands = [p] + negs
        ctx.rng.shuffle(cands)
        made = make_scene(ctx, [Member.of(anchor), Member.of(b)] + [Member.of(c) for c in cands])
        if made is None:
            return None
        scene, prov = made
        ids = ["F2", "F3", "F4", "F5"]
        truth = [oracle.strictly_between(scene.geom("F0"), scene.geom("F1"), scene.geom(i)) for i in ids]
        if sum(truth) != 1:
            return None
        answer = ids[truth.index(True)]
        choices, letter = mcq(ctx.rng, answer, [i for i in ids if i != answer])
        facts = [fact(scene, "strictly_between", "F0", "F1", i) for i in ids]
        q = Q_BETWEEN.render(ids=id_list(ids), a="F0", b="F1")
        return QAItem(
            scene,
            q,
            AnswerType.FEATURE_ID,
            answer,
            choices,
            letter,
            facts,
            {"positive_amount_min": 2.0, "negative_gap_m": 3.0},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        partners = [
            f
            for k in (PoolKind.POI, PoolKind.BUILDING)
            for f in ctx.pools.near(k, anchor.geom, 200)
            if f.uid != anchor.uid and f.geom.distance(anchor.geom) >= 60
        ]
        # A polygon mover: it can straddle the segment robustly, where a point would have to
        # land exactly on it.
        movers = [
            f
            for f in ctx.pools.near(PoolKind.BUILDING, anchor.geom, 120)
            if f.uid != anchor.uid and f.geom.area < 2000
        ]
        if not partners or not movers:
            return None
        b = ctx.rng.choice(partners)
        f0 = ctx.rng.choice(movers)
        if f0.uid == b.uid or f0.geom.distance(shapely.union(anchor.geom, b.geom).convex_hull) < 3:
            return None
        members = [Member.of(f0), Member.of(anchor), Member.of(b)]
        made = make_scene(ctx, members)
        if made is None:
            return None
        candidate = made[0]
        p1, p2 = ref_point(candidate.geom("F1")), ref_point(candidate.geom("F2"))
        c = ref_point(candidate.geom("F0"))
        proposals = []
        for frac in (0.5, 0.4, 0.6, 0.3, 0.7):
            tx, ty = p1.x + frac * (p2.x - p1.x), p1.y + frac * (p2.y - p1.y)
            proposals.append([{"op": "translate", "dx": round(tx - c.x, 3), "dy": round(ty - c.y, 3)}])
        cons = [pred("strictly_between", "F1", "F2", "F0")]
        return edit_item(ctx, members, cons, proposals)
