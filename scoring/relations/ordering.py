"""Ordering family: linear referencing along directed lines (first vertex to last), sides of a
line, betweenness, vertical order from road attributes, and endpoint connectivity."""

from __future__ import annotations

import itertools
import math

import shapely
from shapely.geometry import LineString, Point

from scoring import oracle
from scoring.oracle import EDIT_EPS, ref_point, vertical_level
from scoring.relations.base import REFUSAL, Ctx, Member, QAItem, fact, make_scene, mcq, relation
from scoring.relations.common import at_most, between, edit_item, max_displacement, pred

FAMILY = "ordering"
GAP = 10.0  # m between consecutive positions along a line
END_CLEAR = 5.0  # m: projections this close to a line's end are ambiguous


def _long_road(f, min_len=120.0, straight=0.0) -> bool:
    g = f.geom
    return g.length >= min_len and math.dist(g.coords[0], g.coords[-1]) >= straight * g.length


def _along(ctx: Ctx, road, n: int, max_off=30.0):
    """n features near the road, projecting inside it, with positions >= GAP apart."""
    line = road.geom
    cands = []
    for k in ("poi", "building"):
        for f in ctx.pools.near(k, line, max_off):
            p = ref_point(f.geom)
            t = line.project(p)
            if END_CLEAR <= t <= line.length - END_CLEAR and f.geom.disjoint(line):
                cands.append((t, f))
    ctx.rng.shuffle(cands)
    chosen: list = []
    for t, f in cands:
        if all(abs(t - u) >= GAP for u, _ in chosen):
            chosen.append((t, f))
        if len(chosen) == n:
            return chosen
    return None


@relation(
    "O01",
    "Along-line order",
    FAMILY,
    definition="The order of features along a directed line by linear referencing: the "
    "position of ref(B) is the distance from the line's first vertex to the "
    "line's point nearest ref(B). Consecutive positions differ by at least 10 m "
    "and none projects within 5 m of an end.",
    question_forms="Order F1, F2 and F3 by their position along F0, from its first vertex.",
    answer_type="ordering",
    distractor_rule="Alternative orderings (other permutations, the reverse first).",
    edit_constraints="Move F0 so that the order along road F1 becomes a stated order, staying "
    "within 30 m of F1.",
    anchor_kinds=("road",),
    needs=("road",),
)
class AlongOrder:
    @staticmethod
    def qa(ctx, anchor):
        if not _long_road(anchor):
            return None
        near = _along(ctx, anchor, 3)
        if not near:
            return None
        ctx.rng.shuffle(near)
        made = make_scene(ctx, [Member.of(anchor)] + [Member.of(f) for _, f in near])
        if made is None:
            return None
        scene, prov = made
        ids = ["F1", "F2", "F3"]
        order = oracle.along_order(scene.geom("F0"), *[scene.geom(i) for i in ids])
        answer = [ids[i] for i in order]
        perms = [list(p) for p in itertools.permutations(answer) if list(p) != answer]
        rev = answer[::-1]
        others = [rev] + [p for p in perms if p != rev]
        ctx.rng.shuffle(others[1:])
        choices, letter = mcq(ctx.rng, ", ".join(answer), [", ".join(p) for p in others[:3]])
        pos = [oracle.along_position(scene.geom("F0"), scene.geom(i)) for i in ids]
        facts = [fact(scene, "along_order", "F0", *ids)] + [
            fact(scene, "along_position", "F0", i) for i in ids
        ]
        q = (
            "Order F1, F2 and F3 by their position along road F0, travelling from its first vertex "
            "to its last. A feature's position is where its centroid projects onto F0 (linear "
            "referencing). Answer with the ids in order, separated by commas."
        )
        return QAItem(
            scene,
            q,
            "ordering",
            answer,
            choices,
            letter,
            facts,
            {"min_gap_m": round(min(abs(a - b) for a, b in itertools.combinations(pos, 2)), 3)},
            prov,
        )

    @staticmethod
    def edit(ctx, anchor):
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
        members = [Member.of(f0), Member.of(anchor), Member.of(f1), Member.of(f2)]
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
    answer_type="feature_id",
    distractor_rule="The other features along the route (competing ids).",
    edit_constraints="Move F0 so that it is passed after F2 and before F3 travelling along "
    "F1 (a band of linear-referencing positions), within 30 m of F1.",
    anchor_kinds=("road",),
    needs=("road",),
)
class BeforeAfter:
    @staticmethod
    def qa(ctx, anchor):
        if not _long_road(anchor, 150):
            return None
        near = _along(ctx, anchor, 5)
        if not near:
            return None
        ctx.rng.shuffle(near)
        made = make_scene(ctx, [Member.of(anchor)] + [Member.of(f) for _, f in near])
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
        facts = [fact(scene, "along_order", "F0", *ids)] + [
            fact(scene, "along_position", "F0", i) for i in ids
        ]
        word = "after" if after else "before"
        q = (
            f"Travelling along route F0 from its first vertex to its last, which of the features "
            f"F1-F5 is passed immediately {word} {ref}? A feature is passed where its centroid "
            f"projects onto F0. Answer with its feature id."
        )
        return QAItem(scene, q, "feature_id", answer, choices, letter, facts, {"min_gap_m": GAP}, prov)

    @staticmethod
    def edit(ctx, anchor):
        if not _long_road(anchor, 150):
            return None
        near = _along(ctx, anchor, 3)
        if not near:
            return None
        near.sort(key=lambda x: x[0])
        (t1, f1), (t2, f2), (t0, f0) = near  # F0 starts last along the route
        if t2 - t1 < 3 * GAP:
            return None
        members = [Member.of(f0), Member.of(anchor), Member.of(f1), Member.of(f2)]
        # Positions come from the snapped scene, so compute the band there.
        made = make_scene(ctx, members)
        if made is None:
            return None
        sc = made[0]
        p1 = oracle.along_position(sc.geom("F1"), sc.geom("F2"))
        p2 = oracle.along_position(sc.geom("F1"), sc.geom("F3"))
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


def _side_ok(line: LineString, g) -> str | None:
    p = ref_point(g)
    t = line.project(p)
    if not (END_CLEAR <= t <= line.length - END_CLEAR) or line.distance(p) < 3 or not g.disjoint(line):
        return None
    s = oracle.side_of_line(line, Member("poi", p).geom)
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
    answer_type="feature_id",
    distractor_rule="Features on the opposite side (competing ids).",
    edit_constraints="Move F0 across road F1 to the side where F2 lies, staying within 30 m " "of F1.",
    anchor_kinds=("road",),
    needs=("road",),
)
class Side:
    @staticmethod
    def qa(ctx, anchor):
        if not _long_road(anchor, 80, 0.95):
            return None
        line = anchor.geom
        sided = []
        for k in ("poi", "building"):
            for f in ctx.pools.near(k, line, 40):
                s = _side_ok(line, f.geom)
                if s:
                    sided.append((s, f))
        left = [f for s, f in sided if s == "left"]
        right = [f for s, f in sided if s == "right"]
        for same, other in ((left, right), (right, left)):
            if len(same) >= 2 and len(other) >= 3:
                break
        else:
            return None
        ref, pos = ctx.rng.sample(same, 2)
        negs = ctx.rng.sample(other, 3)
        cands = [pos] + negs
        ctx.rng.shuffle(cands)
        made = make_scene(ctx, [Member.of(anchor), Member.of(ref)] + [Member.of(c) for c in cands])
        if made is None:
            return None
        scene, prov = made
        ids = ["F2", "F3", "F4", "F5"]
        answer = ids[cands.index(pos)]
        if not oracle.same_side(scene.geom("F0"), scene.geom("F1"), scene.geom(answer)):
            return None
        choices, letter = mcq(ctx.rng, answer, [i for i in ids if i != answer])
        facts = [fact(scene, "side_of_line", "F0", i) for i in ["F1"] + ids]
        q = (
            "Which of the features F2, F3, F4 and F5 lies on the same side of road F0 as F1? Sides "
            "are judged at each feature's centroid, relative to F0. Answer with its feature id."
        )
        return QAItem(
            scene,
            q,
            "feature_id",
            answer,
            choices,
            letter,
            facts,
            {"min_offset_m": 3.0, "end_clear_m": END_CLEAR},
            prov,
        )

    @staticmethod
    def edit(ctx, anchor):
        if not _long_road(anchor, 80, 0.95):
            return None
        line = anchor.geom
        sided = [
            (s, f) for k in ("poi",) for f in ctx.pools.near(k, line, 25) if (s := _side_ok(line, f.geom))
        ]
        left = [f for s, f in sided if s == "left"]
        right = [f for s, f in sided if s == "right"]
        if not left or not right:
            return None
        f0, f2 = (
            (ctx.rng.choice(left), ctx.rng.choice(right))
            if ctx.rng.random() < 0.5
            else (ctx.rng.choice(right), ctx.rng.choice(left))
        )
        members = [Member.of(f0), Member.of(anchor), Member.of(f2)]
        cons = [pred("same_side", "F1", "F0", "F2"), at_most("min_distance", "F0", "F1", hi=30)]
        p = ref_point(f0.geom)
        q = line.interpolate(line.project(p))
        ops = [{"op": "translate", "dx": round(2 * (q.x - p.x), 3), "dy": round(2 * (q.y - p.y), 3)}]
        return edit_item(ctx, members, cons, [ops] + list(_offset_variants(ops)))


@relation(
    "O04",
    "Strict betweenness",
    FAMILY,
    definition="C lies strictly between A and B when C intersects the interior of the convex "
    "hull of A and B (the open segment when both are points) and is disjoint from A "
    "and B. Positives cross the hull by >= 2 m (or m²); negatives stay >= 3 m away.",
    question_forms="Which of F2-F5 lies strictly between F0 and F1?",
    answer_type="feature_id",
    distractor_rule="Features near the hull but clear of it (competing ids).",
    edit_constraints="Move building F0 so that it lies strictly between F1 and F2.",
    anchor_kinds=("poi", "building"),
)
class Between:
    @staticmethod
    def qa(ctx, anchor):
        partners = [
            f
            for k in ("poi", "building")
            for f in ctx.pools.near(k, anchor.geom, 250)
            if f.uid != anchor.uid and f.geom.distance(anchor.geom) >= 60
        ]
        if not partners:
            return None
        b = ctx.rng.choice(partners)
        hull = shapely.union(anchor.geom, b.geom).convex_hull
        pos, neg = [], []
        for k in ("building", "road"):
            for f in ctx.pools.near(k, hull, 40):
                if f.uid in (anchor.uid, b.uid) or not (
                    f.geom.disjoint(anchor.geom) and f.geom.disjoint(b.geom)
                ):
                    continue
                if f.geom.distance(anchor.geom) < 3 or f.geom.distance(b.geom) < 3:
                    continue
                d = f.geom.distance(hull)
                if d >= 3:
                    neg.append(f)
                elif d == 0 and oracle.strictly_between(anchor.geom, b.geom, f.geom):
                    inter = f.geom.intersection(hull if hull.geom_type != "LineString" else hull)
                    amount = inter.area or inter.length
                    if amount >= 2 or (
                        hull.geom_type == "LineString"
                        and inter.length == 0
                        and f.geom.geom_type == "Polygon"
                        and hull.intersection(f.geom).length >= 2
                    ):
                        pos.append(f)
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
        q = (
            "Which of the features F2, F3, F4 and F5 lies strictly between F0 and F1? Strictly "
            "between means it intersects the interior of the convex hull of F0 and F1 (the open "
            "segment joining them if both are points) without touching F0 or F1. Answer with its "
            "feature id."
        )
        return QAItem(
            scene,
            q,
            "feature_id",
            answer,
            choices,
            letter,
            facts,
            {"positive_amount_min": 2.0, "negative_gap_m": 3.0},
            prov,
        )

    @staticmethod
    def edit(ctx, anchor):
        partners = [
            f
            for k in ("poi", "building")
            for f in ctx.pools.near(k, anchor.geom, 200)
            if f.uid != anchor.uid and f.geom.distance(anchor.geom) >= 60
        ]
        # A polygon mover: it can straddle the segment robustly, where a point would have to
        # land exactly on it.
        movers = [
            f
            for f in ctx.pools.near("building", anchor.geom, 120)
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
        sc = made[0]
        p1, p2 = ref_point(sc.geom("F1")), ref_point(sc.geom("F2"))
        c = ref_point(sc.geom("F0"))
        proposals = []
        for frac in (0.5, 0.4, 0.6, 0.3, 0.7):
            tx, ty = p1.x + frac * (p2.x - p1.x), p1.y + frac * (p2.y - p1.y)
            proposals.append([{"op": "translate", "dx": round(tx - c.x, 3), "dy": round(ty - c.y, 3)}])
        cons = [pred("strictly_between", "F1", "F2", "F0")]
        return edit_item(ctx, members, cons, proposals)


LAYER_ATTRS = ["layer", "bridge", "tunnel"]


def _level_props(f, withheld: bool) -> dict:
    if withheld:
        return {}
    p = {
        "layer": f.props.get("layer"),
        "bridge": f.props.get("bridge", "no"),
        "tunnel": f.props.get("tunnel", "no"),
    }
    return {k: v for k, v in p.items() if v is not None}


def _crossing_pairs(ctx, anchor):
    la = vertical_level(_level_props(anchor, False))
    out = []
    for f in ctx.pools.near("road", anchor.geom, 0):
        if f.uid == anchor.uid or not f.geom.crosses(anchor.geom):
            continue
        lb = vertical_level(_level_props(f, False))
        if lb != la:
            out.append(f)
    return out


@relation(
    "O06",
    "Layer hierarchy",
    FAMILY,
    definition="Vertical order of roads that cross in plan: vertical_level = the OSM `layer` "
    "tag if set, else +1 for a bridge, -1 for a tunnel, else 0; the higher level is "
    "above. Asked with the attributes shown (answerable) or withheld (the correct "
    "answer is then 'cannot be determined').",
    question_forms="F0 and F1 cross in plan. Which lies above the other?",
    answer_type="feature_id",
    distractor_rule="The other road, 'neither: same level', and 'cannot be determined' (the "
    "correct answer when the attributes are withheld).",
    edit_constraints="Set F0's attributes (an attribute edit) so that F0 lies above F1.",
    anchor_kinds=("road",),
    needs=("road",),
)
class LayerHierarchy:
    @staticmethod
    def qa(ctx, anchor):
        pairs = _crossing_pairs(ctx, anchor)
        if not pairs:
            return None
        other = ctx.rng.choice(pairs)
        withheld = ctx.rng.random() < 0.25
        members = [
            Member("road", anchor.geom, _level_props(anchor, withheld), anchor.uid),
            Member("road", other.geom, _level_props(other, withheld), other.uid),
        ]
        if ctx.rng.random() < 0.5:
            members.reverse()
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene, prov = made
        l0 = vertical_level(_level_props(anchor if members[0].source == anchor.uid else other, False))
        l1 = vertical_level(_level_props(other if members[0].source == anchor.uid else anchor, False))
        truth = "F0" if l0 > l1 else "F1"
        answer = REFUSAL if withheld else truth
        same = "neither: they are at the same level"
        choices, letter = mcq(ctx.rng, answer, [o for o in ("F0", "F1", same, REFUSAL) if o != answer])
        facts = [
            fact(scene, "crosses", "F0", "F1"),
            {"measure": "vertical_level", "args": ["F0"], "params": {}, "value": None if withheld else l0},
            {"measure": "vertical_level", "args": ["F1"], "params": {}, "value": None if withheld else l1},
        ]
        if not withheld:
            facts.append(fact(scene, "level_above", truth, "F1" if truth == "F0" else "F0"))
        q = (
            "Roads F0 and F1 cross in plan view. Which of them lies above the other? Use the roads' "
            "attributes: the vertical level is `layer` if set, otherwise +1 for a bridge, -1 for a "
            "tunnel, else 0. If the information given is not sufficient, answer 'cannot be "
            "determined'."
        )
        info = {"attributes": [] if withheld else LAYER_ATTRS, "withheld": LAYER_ATTRS if withheld else []}
        return QAItem(
            scene,
            q,
            "feature_id",
            answer,
            choices,
            letter,
            facts,
            {"level_difference": abs(l0 - l1)},
            prov,
            answerable=not withheld,
            information=info,
        )

    @staticmethod
    def edit(ctx, anchor):
        pairs = _crossing_pairs(ctx, anchor)
        if not pairs:
            return None
        other = ctx.rng.choice(pairs)
        la = vertical_level(_level_props(anchor, False))
        lb = vertical_level(_level_props(other, False))
        low, high = (anchor, other) if la < lb else (other, anchor)
        members = [
            Member("road", low.geom, _level_props(low, False), low.uid),
            Member("road", high.geom, _level_props(high, False), high.uid),
        ]
        cons = [pred("level_above", "F0", "F1")]
        new_level = max(la, lb) + 1
        ops = [{"op": "set_attribute", "name": "layer", "value": new_level}]
        return edit_item(
            ctx,
            members,
            cons,
            [ops],
            allowed=["set_attribute"],
            information={"attributes": LAYER_ATTRS, "withheld": []},
            lead="F0 and F1 cross in plan view.",
        )


def _ends(g):
    return [Point(g.coords[0]), Point(g.coords[-1])]


@relation(
    "O08",
    "Endpoint connectivity",
    FAMILY,
    definition="Two roads are connected only if an endpoint of one coincides with an endpoint "
    "of the other (exact coordinates; eps = 0.05 m in editing). A road that meets "
    "F0's interior (a T-junction or a crossing) is not connected. Negatives keep "
    "their endpoints >= 2 m from F0's endpoints.",
    question_forms="Which of F1-F4 is connected to F0 (shares an endpoint)?",
    answer_type="feature_id",
    distractor_rule="Roads meeting F0's interior (T-junctions, crossings) and nearby " "disjoint roads.",
    edit_constraints="Translate road F0 so that one of its endpoints coincides with an "
    "endpoint of F1 (within 0.05 m) without crossing F1.",
    anchor_kinds=("road",),
    needs=("road",),
)
class Connectivity:
    @staticmethod
    def qa(ctx, anchor):
        a = anchor.geom
        pos, neg = [], []
        for f in ctx.pools.near("road", a, 30):
            if f.uid == anchor.uid:
                continue
            if oracle.endpoint_connected(a, f.geom):
                if not f.geom.crosses(a):
                    pos.append(f)
            elif min(p.distance(q) for p in _ends(a) for q in _ends(f.geom)) >= 2:
                if f.geom.intersects(a) or f.geom.distance(a) >= 2:
                    neg.append(f)
        if not pos or len(neg) < 3:
            return None
        # Near misses first: roads that meet F0 but not at an endpoint.
        neg.sort(key=lambda f: (f.geom.distance(a) > 0, f.geom.distance(a)))
        p = ctx.rng.choice(pos)
        negs = ctx.rng.sample(neg[:6], 3)
        cands = [p] + negs
        ctx.rng.shuffle(cands)
        made = make_scene(ctx, [Member.of(anchor)] + [Member.of(c) for c in cands])
        if made is None:
            return None
        scene, prov = made
        ids = ["F1", "F2", "F3", "F4"]
        truth = [oracle.endpoint_connected(scene.geom("F0"), scene.geom(i)) for i in ids]
        if sum(truth) != 1:
            return None
        answer = ids[truth.index(True)]
        choices, letter = mcq(ctx.rng, answer, [i for i in ids if i != answer])
        facts = [fact(scene, "endpoint_connected", "F0", i) for i in ids] + [
            fact(scene, "intersects", "F0", i) for i in ids
        ]
        q = (
            "Two roads are connected only if they share an endpoint: an end vertex of one coincides "
            "with an end vertex of the other. Which of the roads F1, F2, F3 and F4 is connected to "
            "F0? Answer with its feature id."
        )
        return QAItem(
            scene, q, "feature_id", answer, choices, letter, facts, {"negative_endpoint_gap_m": 2.0}, prov
        )

    @staticmethod
    def edit(ctx, anchor):
        a = anchor.geom
        cands = [
            f
            for f in ctx.pools.near("road", a, 60)
            if f.uid != anchor.uid and f.geom.distance(a) >= 5 and f.geom.length < 200
        ]
        if not cands:
            return None
        f0 = ctx.rng.choice(cands)
        members = [Member.of(f0), Member.of(anchor)]
        made = make_scene(ctx, members)
        if made is None:
            return None
        sc = made[0]
        g0, g1 = sc.geom("F0"), sc.geom("F1")
        pairs = sorted(((p.distance(q), p, q) for p in _ends(g0) for q in _ends(g1)), key=lambda t: t[0])
        proposals = [
            [{"op": "translate", "dx": round(q.x - p.x, 3), "dy": round(q.y - p.y, 3)}] for _, p, q in pairs
        ]
        cons = [
            pred("endpoint_connected", "F0", "F1", eps=EDIT_EPS),
            pred("crosses", "F0", "F1", value=False),
            max_displacement(pairs[-1][0] + 5),
        ]
        return edit_item(ctx, members, cons, proposals)
