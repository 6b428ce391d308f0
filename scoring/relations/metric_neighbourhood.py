"""Metric family, continued: a feature's neighbourhood: how many features lie within a
distance, which is nearest, and the density of POIs inside an area."""

from __future__ import annotations

import math

from shapely import affinity

from scoring import oracle
from scoring.constraints.wording import FEATURE_IDS, NUMBER, Wording, id_list
from scoring.extract.pools import FeaturePools, PoolFeature
from scoring.relations.base import (
    BuildContext,
    EditItem,
    Member,
    QAItem,
    Solver,
    fact,
    fmt_num,
    make_scene,
    mcq,
    numeric_distractors,
    relation,
)
from scoring.relations.common import (
    at_least,
    at_most,
    edit_item,
    max_displacement,
    nearest_vector,
    pred,
    translate_proposals,
)
from scoring.relations.constructions import placed_inside
from scoring.relations.metric import FAMILY, members_near
from scoring.relations.options import count_distractors
from scoring.vocab import AnswerType, PoolKind

Q_WITHIN_DISTANCE = Wording(
    "How many of the features {ids} lie within {d:g} m of {a} (minimum distance at most {d:g} m)?",
    ids=FEATURE_IDS,
    d=NUMBER,
)
Q_NEAREST = Wording(
    "Which of the features {ids} is nearest to {a} (smallest minimum distance)? Answer with its "
    "feature id.",
    ids=FEATURE_IDS,
)
Q_DENSITY = Wording(
    "Of the points of interest {ids}, count those lying in {a} and divide by {a}'s area in km². "
    "What is this POI density, in POIs per km²? (Give at least three decimals.)",
    ids=FEATURE_IDS,
)


def _balanced_threshold(ctx: BuildContext, dists: list[float]) -> float | None:
    """A whole-metre threshold giving a count drawn uniformly from 0..len(dists), at least 2 m from
    every distance (None when the drawn count has no such threshold): the count then says nothing
    the options could betray."""
    s = sorted(dists)
    n = ctx.rng.randrange(len(s) + 1)
    lo = s[n - 1] + 2 if n > 0 else 5.0
    hi = s[n] - 2 if n < len(s) else max(lo, s[-1]) + 40.0
    if math.floor(hi) < math.ceil(lo):
        return None
    return float(ctx.rng.randint(math.ceil(lo), math.floor(hi)))


_DENSITIES: dict[
    int, tuple[object, list[tuple[str, str, int, float]]]
] = {}  # id(pools) -> (pools, densities)


def _item_densities(pools: FeaturePools) -> list[tuple[str, str, int, float]]:
    """(uid, kind, POIs an item lists, POI density) of every area or building of `pools` that
    makes an M18 item as a natural case (1-12 POIs inside, none within 1 m of its boundary), in
    uid order; computed once per pools."""
    held = _DENSITIES.get(id(pools))
    if held is not None and held[0] is pools:
        return held[1]
    out = []
    anchors = [f for k in (PoolKind.AREA, PoolKind.BUILDING) for f in pools.features.get(k, [])]
    for f in sorted(anchors, key=lambda f: f.uid):
        if not f.geom.area > 0:
            continue
        near = pools.near(PoolKind.POI, f.geom, 40)
        if any(p.geom.distance(f.geom.boundary) < 1 for p in near):
            continue
        n = sum(1 for p in near if p.geom.within(f.geom))
        if 1 <= n <= 12:
            out.append((f.uid, str(f.kind), min(len(near), n + 4), n / (f.geom.area / 1e6)))
    _DENSITIES.clear()
    _DENSITIES[id(pools)] = (pools, out)
    return out


@relation(
    "M14",
    "Buffer / within distance",
    FAMILY,
    definition="B is within distance d of A when min_distance(A, B) <= d (ST_DWithin). Asked "
    "as a count of features within d; no feature lies within 2 m of the threshold.",
    question_forms="How many of F1-F6 lie within d metres of F0?",
    questions=(Q_WITHIN_DISTANCE,),
    answer_type=AnswerType.COUNT,
    solver=Solver("count_within"),
    distractor_rule="Three other counts drawn uniformly from 0-6; the threshold is drawn so that "
    "the count itself is uniform over 0-6.",
    edit_constraints="F0 must lie within d of F1 but farther than d from F2.",
    anchor_kinds=(PoolKind.POI, PoolKind.BUILDING),
)
class WithinDistance:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        others = members_near(ctx, anchor, (PoolKind.POI, PoolKind.BUILDING), 120, lo=1, n=6)
        if not others:
            return None
        dists = [o.geom.distance(anchor.geom) for o in others]
        d = _balanced_threshold(ctx, dists)
        if d is None or min(abs(x - d) for x in dists) < 2:
            return None
        members = [Member.of(anchor)] + [Member.of(o) for o in others]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene, prov = made
        ids = [f"F{i}" for i in range(1, 7)]
        n = oracle.count_within_distance(scene.geom("F0"), *[scene.geom(i) for i in ids], distance=d)
        distractors = count_distractors(ctx.rng, n, len(ids))
        choices, letter = mcq(ctx.rng, str(n), distractors)
        facts = [fact(scene, "count_within_distance", "F0", *ids, distance=d)] + [
            fact(scene, "min_distance", "F0", i) for i in ids
        ]
        q = Q_WITHIN_DISTANCE.render(ids=id_list(ids), d=d, a="F0")
        return QAItem(
            scene,
            q,
            AnswerType.COUNT,
            n,
            choices,
            letter,
            facts,
            {"threshold_gap_m": round(min(abs(x - d) for x in dists), 3)},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        others = members_near(ctx, anchor, (PoolKind.POI, PoolKind.BUILDING), 150, lo=30, n=2)
        if not others:
            return None
        d = 20.0
        members = [Member.of(anchor)] + [Member.of(o) for o in others]
        cons = [
            pred("within_distance", "F0", "F1", distance=d),
            pred("within_distance", "F0", "F2", value=False, distance=d),
            max_displacement(200),
        ]
        made = make_scene(ctx, members)
        if made is None:
            return None
        dx, dy, dist = nearest_vector(made[0].geom("F0"), made[0].geom("F1"))
        return edit_item(ctx, members, cons, translate_proposals(dist + 5, step=1.0, preferred=(dx, dy)))


@relation(
    "M15",
    "Nearest neighbour",
    FAMILY,
    definition="The feature among the candidates with the smallest minimum distance to A. "
    "The runner-up must be at least max(2 m, 10 %) farther.",
    question_forms="Which of F1-F4 is nearest to F0?",
    questions=(Q_NEAREST,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("nearest"),
    distractor_rule="The other candidates (competing feature ids), nearest ones first.",
    edit_constraints="Move F0 so that a stated candidate becomes its nearest neighbour, with a "
    "margin of 2 m over the others.",
    anchor_kinds=(PoolKind.POI, PoolKind.BUILDING),
)
class Nearest:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        others = members_near(ctx, anchor, (PoolKind.POI, PoolKind.BUILDING), 100, lo=1, n=4)
        if not others:
            return None
        members = [Member.of(anchor)] + [Member.of(o) for o in others]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene, prov = made
        ids = ["F1", "F2", "F3", "F4"]
        ds = sorted((scene.geom("F0").distance(scene.geom(i)), i) for i in ids)
        if ds[1][0] - ds[0][0] < max(2.0, 0.1 * ds[0][0]):
            return None
        answer = ds[0][1]
        choices, letter = mcq(ctx.rng, answer, [i for _, i in ds[1:]])
        facts = [fact(scene, "nearest", "F0", *ids)] + [fact(scene, "min_distance", "F0", i) for i in ids]
        return QAItem(
            scene,
            Q_NEAREST.render(ids=id_list(ids), a="F0"),
            AnswerType.FEATURE_ID,
            answer,
            choices,
            letter,
            facts,
            {"runner_up_gap_m": round(ds[1][0] - ds[0][0], 3)},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        others = members_near(ctx, anchor, (PoolKind.POI, PoolKind.BUILDING), 100, lo=5, n=3)
        if not others:
            return None
        members = [Member.of(anchor)] + [Member.of(o) for o in others]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        ds = sorted((scene.geom("F0").distance(scene.geom(i)), i) for i in ("F1", "F2", "F3"))
        want = ds[-1][1]  # the farthest becomes the nearest
        cons = [pred("nearest", "F0", "F1", "F2", "F3", value=want)]
        for i in ("F1", "F2", "F3"):
            if i != want:
                # margin: the others at least 2 m farther than the wanted one is implied by
                # min_distance to want <= 5 m while the others stay >= 8 m away
                cons.append(at_least("min_distance", "F0", i, lo=8))
        cons.append(at_most("min_distance", "F0", want, hi=5))
        dx, dy, dist = nearest_vector(scene.geom("F0"), scene.geom(want))
        return edit_item(ctx, members, cons, translate_proposals(dist + 5, step=0.5, preferred=(dx, dy)))


@relation(
    "M18",
    "POI density",
    FAMILY,
    definition="The number of the given POIs covered by polygon A divided by A's area in "
    "km². No POI lies within 1 m of A's boundary. Tolerance 0.001 per km².",
    question_forms="How many of the POIs F1-Fn per km² lie in F0?",
    questions=(Q_DENSITY,),
    answer_type=AnswerType.DENSITY,
    solver=Solver("density"),
    distractor_rule="The POI densities of the pools' other areas (or buildings, as the anchor) "
    "that would make an item listing as many POIs, drawn at random, every two options at least "
    "10 % apart: a value that is an answer elsewhere is as often a distractor (each area makes "
    "one scene, so one item per build); nearby values (as M01) for constructed cases or where "
    "fewer than three fit.",
    edit_constraints="Scale F0 about its centroid so that its POI density falls in a stated " "band.",
    anchor_kinds=(PoolKind.AREA, PoolKind.BUILDING),
    needs=(PoolKind.POI,),
    constructs=True,
)
class Density:
    @staticmethod
    def _pois(ctx: BuildContext, anchor: PoolFeature, one_scene: bool = False) -> list[Member] | None:
        """The POIs of an item on `anchor`: every POI inside and up to four outside (drawn, or with
        `one_scene` the four nearest, so that an area makes one scene: one item per shard)."""
        pois = ctx.pools.near(PoolKind.POI, anchor.geom, 40)
        if ctx.construct:  # POIs too close to the boundary are left out, real ones moved inside
            pois = [p for p in pois if p.geom.distance(anchor.geom.boundary) >= 1]
        if any(p.geom.distance(anchor.geom.boundary) < 1 for p in pois):
            return None
        inside = [Member.of(p) for p in pois if p.geom.within(anchor.geom)]
        outside = [Member.of(p) for p in pois if not p.geom.within(anchor.geom)]
        if not inside and ctx.construct:
            inside = placed_inside(ctx, anchor, PoolKind.POI, n=ctx.rng.randint(1, 3), clearance=2.0)
        if not inside or len(inside) > 12:
            return None
        if one_scene and not ctx.construct:
            outside.sort(key=lambda m: (round(m.geom.distance(anchor.geom), 2), m.source or ""))
            return sorted(inside + outside[:4], key=lambda m: m.source or "")
        outside = ctx.rng.sample(outside, min(len(outside), 4))
        return inside + outside

    @staticmethod
    def _other_densities(
        ctx: BuildContext, anchor: PoolFeature, value: float, n_listed: int
    ) -> list[str] | None:
        """Three distractors drawn at random from the POI densities of the pools' other areas that
        would make an item themselves (natural case: 1-12 POIs inside, none within 1 m of the
        boundary), every two options at least 10 % apart: the values offered as distractors are
        the values that are answers elsewhere, in the same proportions, so that neither a value's
        size nor having seen it as an answer tells which option is right. None when fewer than
        three fit."""
        # of the anchor's own kind: anchors are areas first, buildings where no area serves
        # of areas of the anchor's kind listing as many POIs (the question shows how many)
        vals = [
            v
            for uid, kind, listed, v in _item_densities(ctx.pools)
            if uid != anchor.uid and kind == anchor.kind and listed == n_listed
        ]
        ctx.rng.shuffle(vals)
        chosen = [value]
        for v in vals:
            if all(max(v, w) >= 1.1 * min(v, w) for w in chosen):
                chosen.append(v)
            if len(chosen) == 4:
                return [f"{fmt_num(v, 3)} per km²" for v in chosen[1:]]
        return None

    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        # one scene per area (a natural case): each area's density is then the answer of at most
        # one item of a shard, as often as it is offered among the other areas' distractors
        pois = Density._pois(ctx, anchor, one_scene=True)
        if not pois:
            return None
        if ctx.construct:
            ctx.rng.shuffle(pois)
        members = [Member.of(anchor)] + pois
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene, prov = made
        ids = [f"F{i}" for i in range(1, len(pois) + 1)]
        value = oracle.poi_density(scene.geom("F0"), *[scene.geom(i) for i in ids])
        shown = f"{fmt_num(value, 3)} per km²"
        # a constructed case's value is no area's: its options are fresh values too (as M01)
        others = None if ctx.construct else Density._other_densities(ctx, anchor, value, len(pois))
        wrong = others or numeric_distractors(ctx.rng, value, " per km²", 3)
        choices, letter = mcq(ctx.rng, shown, wrong)
        facts = [fact(scene, "poi_density", "F0", *ids), fact(scene, "area", "F0")] + [
            fact(scene, "covered_by", i, "F0") for i in ids
        ]
        q = Q_DENSITY.render(ids=", ".join(ids), a="F0")
        return QAItem(
            scene,
            q,
            AnswerType.DENSITY,
            round(value, 6),
            choices,
            letter,
            facts,
            {"poi_boundary_gap_m": 1.0},
            prov,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        pois = Density._pois(ctx, anchor)
        if not pois:
            return None
        members = [Member.of(anchor)] + pois
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        ids = [f"F{i}" for i in range(1, len(pois) + 1)]
        geoms = [scene.geom(i) for i in ids]
        cur = oracle.poi_density(scene.geom("F0"), *geoms)
        # Find a scale whose density differs clearly; the band is +-5 % around it.
        for f in ctx.rng.sample([0.7, 0.8, 1.2, 1.35, 1.5], 5):
            g = affinity.scale(scene.geom("F0"), f, f, origin="centroid")
            v = oracle.poi_density(g, *geoms)
            lo, hi = round(v * 0.95, 3), round(v * 1.05, 3)
            # never a degenerate band ("between 0 and 0 per km²"): the scaled F0 keeps a POI
            if v <= 0 or lo >= hi:
                continue
            if abs(v - cur) > 0.2 * cur and all(p.distance(g.boundary) > 1 for p in geoms):
                cons = [
                    {
                        "measure": "poi_density",
                        "args": ["F0", *ids],
                        "params": {},
                        "op": "between",
                        "min": lo,
                        "max": hi,
                        "unit": "per km2",
                    },
                    at_most("displacement", "F0", hi=1),
                ]
                return edit_item(ctx, members, cons, [[{"op": "scale", "factor": f, "origin": "centroid"}]])
        return None
