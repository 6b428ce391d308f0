"""Ordering family, continued: the vertical order of crossing roads from their attributes and
the connectivity of roads by shared endpoints."""

from __future__ import annotations

from shapely import affinity
from shapely.geometry import Point

from scoring import oracle
from scoring.constraints.wording import FEATURE_IDS, Wording, id_list
from scoring.extract.pools import PoolFeature
from scoring.oracle import EDIT_EPS, vertical_level
from scoring.relations.base import (
    REFUSAL,
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
from scoring.relations.common import edit_item, max_displacement, pred
from scoring.relations.constructions import crossing_road
from scoring.relations.ordering import FAMILY
from scoring.vocab import AnswerType, EditOp, PoolKind

Q_LAYER = Wording(
    "Roads {a} and {b} cross in plan view. Which of them lies above the other? Use the roads' "
    "attributes: the vertical level is `layer` if set, otherwise +1 for a bridge, -1 for a "
    "tunnel, else 0. If the information given is not sufficient, answer 'cannot be determined'."
)
Q_CONNECTED = Wording(
    "Two roads are connected only if they share an endpoint: an end vertex of one coincides with "
    "an end vertex of the other. Which of the roads {ids} is connected to {a}? Answer with its "
    "feature id.",
    ids=FEATURE_IDS,
)


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
    for f in ctx.pools.near(PoolKind.ROAD, anchor.geom, 0):
        if f.uid == anchor.uid or not f.geom.crosses(anchor.geom):
            continue
        lb = vertical_level(_level_props(f, False))
        if lb != la:
            out.append(f)
    if ctx.construct and la not in (None, 0):
        # the construction pass: natural pairs of this road were used (or were refused) already
        out = _constructed_crossing(ctx, anchor)
    return out


def _constructed_crossing(ctx, anchor) -> list:
    """A layered road (bridge, tunnel, layer) crossed by a real ground-level road from nearby,
    moved onto it (scoring.relations.constructions.crossing_road)."""
    placed = crossing_road(ctx, anchor, lambda f: vertical_level(_level_props(f, False)) == 0)
    return [
        PoolFeature(m.source or "", PoolKind.ROAD, m.geom, {**f.props, "_construction": m.construction})
        for m, f in placed
    ]


def _member(f, props: dict) -> Member:
    why = f.props.get("_construction")
    return Member(PoolKind.ROAD, f.geom, props, f.uid, why)


def has_layered_roads(pools) -> str | None:
    """None, or the feature class O06 needs that the pools lack."""
    if any(
        vertical_level(_level_props(f, False)) not in (None, 0) for f in pools.features.get(PoolKind.ROAD, [])
    ):
        return None
    return "roads with a layer, bridge or tunnel tag (no vertical order to ask about)"


@relation(
    "O06",
    "Layer hierarchy",
    FAMILY,
    definition="Vertical order of roads that cross in plan: vertical_level = the OSM `layer` "
    "tag if set, else +1 for a bridge, -1 for a tunnel, else 0; the higher level is "
    "above. Asked with the attributes shown (answerable) or withheld (the correct "
    "answer is then 'cannot be determined').",
    question_forms="F0 and F1 cross in plan. Which lies above the other?",
    questions=(Q_LAYER,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("layer"),
    distractor_rule="The other road and 'cannot be determined' (the correct answer when the "
    "attributes are withheld); three options, since the roads asked about never share a level.",
    edit_constraints="Set F0's attributes (an attribute edit) so that F0 lies above F1.",
    anchor_kinds=(PoolKind.ROAD,),
    needs=(PoolKind.ROAD,),
    constructs=True,
    requires=has_layered_roads,
)
class LayerHierarchy:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        pairs = _crossing_pairs(ctx, anchor)
        if not pairs:
            return None
        other = ctx.rng.choice(pairs)
        # the paper protocol shows the attributes on the map only (relations/paper.py), never withholds
        withheld = ctx.rng.random() < 0.25 and ctx.protocol != "paper"  # protocol switch: o06-attributes
        members = [
            _member(anchor, _level_props(anchor, withheld)),
            _member(other, _level_props(other, withheld)),
        ]
        if ctx.rng.random() < 0.5:
            members.reverse()
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene, prov = made
        l0 = vertical_level(_level_props(anchor if members[0].source == anchor.uid else other, False))
        l1 = vertical_level(_level_props(other if members[0].source == anchor.uid else anchor, False))
        if l0 is None or l1 is None:  # an unreadable layer tag: no vertical order to ask about
            return None
        truth = "F0" if l0 > l1 else "F1"
        answer = REFUSAL if withheld else truth
        # three options: the pairs asked about never share a level, so an offered "same level"
        # would be an option never right (an options-only solver would drop it)
        choices, letter = mcq(ctx.rng, answer, [o for o in ("F0", "F1", REFUSAL) if o != answer], 3)
        facts = [
            fact(scene, "crosses", "F0", "F1"),
            {"measure": "vertical_level", "args": ["F0"], "params": {}, "value": None if withheld else l0},
            {"measure": "vertical_level", "args": ["F1"], "params": {}, "value": None if withheld else l1},
        ]
        if not withheld:
            facts.append(fact(scene, "level_above", truth, "F1" if truth == "F0" else "F0"))
        q = Q_LAYER.render(a="F0", b="F1")
        info = {"attributes": [] if withheld else LAYER_ATTRS, "withheld": LAYER_ATTRS if withheld else []}
        return QAItem(
            scene,
            q,
            AnswerType.FEATURE_ID,
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
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        pairs = _crossing_pairs(ctx, anchor)
        if not pairs:
            return None
        other = ctx.rng.choice(pairs)
        la = vertical_level(_level_props(anchor, False))
        lb = vertical_level(_level_props(other, False))
        if la is None or lb is None:
            return None
        low, high = (anchor, other) if la < lb else (other, anchor)
        members = [_member(low, _level_props(low, False)), _member(high, _level_props(high, False))]
        cons = [pred("level_above", "F0", "F1")]
        new_level = max(la, lb) + 1
        ops = [{"op": "set_attribute", "name": "layer", "value": new_level}]
        return edit_item(
            ctx,
            members,
            cons,
            [ops],
            allowed=[EditOp.SET_ATTRIBUTE],
            information={"attributes": LAYER_ATTRS, "withheld": []},
            lead="F0 and F1 cross in plan view.",
        )


def _ends(g):
    return [Point(g.coords[0]), Point(g.coords[-1])]


def _end_gap(a, b) -> float:
    """The shortest distance between an endpoint of `a` and one of `b`."""
    return min(p.distance(q) for p in _ends(a) for q in _ends(b))


def _connected_road(ctx, anchor) -> list[Member]:
    """A real road from near `anchor`, moved so that one of its endpoints coincides with one of the
    anchor's and it meets the anchor nowhere else: [member] or []."""
    a = anchor.geom
    near = [f for f in ctx.pools.near(PoolKind.ROAD, a, 300) if f.uid != anchor.uid and f.geom.length >= 20]
    near.sort(key=lambda f: (round(f.geom.distance(a), 2), f.uid))
    for f in near[:20]:
        for end in _ends(a):
            for start in _ends(f.geom):
                moved = affinity.translate(f.geom, end.x - start.x, end.y - start.y)
                if oracle.endpoint_connected(a, moved) and moved.intersection(a).equals(end):
                    why = "road moved so that one of its endpoints coincides with an endpoint of the other"
                    return [Member(PoolKind.ROAD, moved, {}, f.uid, why)]
    return []


@relation(
    "O08",
    "Endpoint connectivity",
    FAMILY,
    definition="Two roads are connected only if an endpoint of one coincides with an endpoint "
    "of the other (exact coordinates; eps = 0.05 m in editing). A road that meets "
    "F0's interior (a T-junction or a crossing) is not connected. Negatives keep "
    "their endpoints >= 2 m from F0's endpoints.",
    question_forms="Which of F1-F4 is connected to F0 (shares an endpoint)?",
    questions=(Q_CONNECTED,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("connected"),
    distractor_rule="Roads meeting F0's interior (T-junctions, crossings) and nearby " "disjoint roads.",
    edit_constraints="Translate road F0 so that one of its endpoints coincides with an "
    "endpoint of F1 (within 0.05 m) without crossing F1.",
    anchor_kinds=(PoolKind.ROAD,),
    needs=(PoolKind.ROAD,),
    constructs=True,
)
class Connectivity:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        a = anchor.geom
        pos, neg = [], []
        for f in ctx.pools.near(PoolKind.ROAD, a, 30):
            if f.uid == anchor.uid:
                continue
            if oracle.endpoint_connected(a, f.geom):
                if not f.geom.crosses(a):
                    pos.append(f)
            elif _end_gap(a, f.geom) >= 2:
                if f.geom.intersects(a) or f.geom.distance(a) >= 2:
                    neg.append(f)
        # Near misses first: roads that meet F0 but not at an endpoint.
        neg.sort(key=lambda f: (f.geom.distance(a) > 0, f.geom.distance(a)))
        pos_m, neg_m = [Member.of(f) for f in pos], [Member.of(f) for f in neg[:6]]
        if ctx.construct:  # a real road moved to F0's end, real roads moved across F0
            pos_m = pos_m or _connected_road(ctx, anchor)
            for _ in range(6):
                if len(neg_m) >= 3:
                    break
                taken = {n.source for n in neg_m}
                neg_m += [
                    m
                    for m, _ in crossing_road(ctx, anchor)
                    if m.source not in taken and _end_gap(a, m.geom) >= 2
                ]
        if not pos_m or len(neg_m) < 3:
            return None
        cands = [ctx.rng.choice(pos_m)] + ctx.rng.sample(neg_m, 3)
        ctx.rng.shuffle(cands)
        made = make_scene(ctx, [Member.of(anchor)] + cands)
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
        q = Q_CONNECTED.render(ids=id_list(ids), a="F0")
        return QAItem(
            scene,
            q,
            AnswerType.FEATURE_ID,
            answer,
            choices,
            letter,
            facts,
            {"negative_endpoint_gap_m": 2.0},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        a = anchor.geom
        cands = [
            f
            for f in ctx.pools.near(PoolKind.ROAD, a, 60)
            if f.uid != anchor.uid and f.geom.distance(a) >= 5 and f.geom.length < 200
        ]
        if not cands:
            return None
        f0 = ctx.rng.choice(cands)
        members = [Member.of(f0), Member.of(anchor)]
        made = make_scene(ctx, members)
        if made is None:
            return None
        candidate = made[0]
        g0, g1 = candidate.geom("F0"), candidate.geom("F1")
        pairs = sorted(((p.distance(q), p, q) for p in _ends(g0) for q in _ends(g1)), key=lambda t: t[0])
        proposals = [
            [{"op": "translate", "dx": round(q.x - p.x, 3), "dy": round(q.y - p.y, 3)}] for _, p, q in pairs
        ]
        cons = [
            pred("endpoint_connected", "F0", "F1", eps=EDIT_EPS),
            # the same eps as the connection: an end overshooting F1 by <= eps is no crossing
            pred("crosses_eps", "F0", "F1", value=False, eps=EDIT_EPS),
            max_displacement(pairs[-1][0] + 5),
        ]
        return edit_item(ctx, members, cons, proposals)
