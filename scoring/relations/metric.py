"""Metric family: distances in metres, areas in m², densities per km², all in the task CRS.
Numeric answers are judged with the stated tolerance (1 m, 0.001 per km²); candidates whose
answer would be ambiguous under it (near-ties, points near a boundary) are rejected."""

from __future__ import annotations

import math

import shapely
import shapely.ops
from shapely import affinity

from scoring import oracle
from scoring.oracle import ref_point
from scoring.relations.base import (
    Ctx,
    Member,
    QAItem,
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
    between,
    edit_item,
    max_displacement,
    nearest_vector,
    pred,
    translate_proposals,
)

FAMILY = "metric"


def _members_near(ctx: Ctx, anchor, kinds, radius, lo=0.0, n=1):
    cands = []
    for k in kinds:
        cands += [
            f
            for f in ctx.pools.near(k, anchor.geom, radius)
            if f.uid != anchor.uid and f.geom.distance(anchor.geom) >= lo
        ]
    if len(cands) < n:
        return None
    return ctx.rng.sample(cands, n)


def _numeric_qa(
    ctx, members, measure, args, question, answer_type, unit_text, decimals=1, min_value=0.0, extra_facts=()
):
    made = make_scene(ctx, members)
    if made is None:
        return None
    scene, prov = made
    from scoring.facts import evaluate

    value = evaluate(scene, measure, list(args))
    if value < min_value:
        return None
    shown = fmt_num(value, decimals)
    choices, letter = mcq(
        ctx.rng, f"{shown}{unit_text}", numeric_distractors(ctx.rng, value, unit_text, decimals)
    )
    facts = [fact(scene, measure, *args)] + [fact(scene, m, *a) for m, a in extra_facts]
    return QAItem(scene, question, answer_type, round(value, 4), choices, letter, facts, {}, prov)


def _distance_edit(ctx, members, measure, lead=""):
    """F0 must end at a stated distance band [d, d + 10] m from F1 (moved along the line
    joining them), staying disjoint from F1."""
    made = make_scene(ctx, members)
    if made is None:
        return None
    scene = made[0]
    from scoring.facts import evaluate

    cur = evaluate(scene, measure, ["F0", "F1"])
    lo = float(max(3, round(cur * ctx.rng.choice([0.3, 0.5, 1.6, 2.0]))))
    if abs(lo + 5 - cur) < 5:
        return None
    hi = lo + 10
    cons = [between(measure, "F0", "F1", lo=lo, hi=hi)]
    if measure == "min_distance":
        cons.append(pred("disjoint", "F0", "F1"))
    cons.append(max_displacement(abs(cur - lo) + 30))
    dx, dy, _ = nearest_vector(scene.geom("F1"), scene.geom("F0"))
    # Away from F1 if the band is farther, else towards it; radial proposals first.
    sign = 1 if lo > cur else -1
    return edit_item(
        ctx,
        members,
        cons,
        translate_proposals(abs(cur - lo) + 25, step=0.5, preferred=(sign * dx, sign * dy)),
        lead=lead,
    )


@relation(
    "M01",
    "Minimum distance",
    "metric",
    definition="The minimum Euclidean distance between A and B in metres (ST_Distance). " "Tolerance 1 m.",
    question_forms="What is the minimum distance between F0 and F1, in metres?",
    answer_type="distance",
    distractor_rule="Adjacent numeric values: the answer scaled by three of 0.5-2.2, every "
    "option at least max(3 m, 15 %) from every other.",
    edit_constraints="The minimum distance between F0 and F1 must fall in a stated 10 m band; "
    "F0 stays disjoint from F1; bounded displacement.",
    anchor_kinds=("building", "poi", "road"),
)
class MinDistance:
    @staticmethod
    def qa(ctx, anchor):
        other = _members_near(ctx, anchor, ("building", "poi", "road"), 150, lo=5)
        if not other:
            return None
        return _numeric_qa(
            ctx,
            [Member.of(anchor), Member.of(other[0])],
            "min_distance",
            ("F0", "F1"),
            "What is the minimum distance between F0 and F1, in metres? "
            "(Planar distance in the task CRS.)",
            "distance",
            " m",
            min_value=2,
        )

    @staticmethod
    def edit(ctx, anchor):
        if anchor.kind == "road":
            return None
        other = _members_near(ctx, anchor, ("building", "poi"), 100, lo=5)
        if not other:
            return None
        return _distance_edit(ctx, [Member.of(anchor), Member.of(other[0])], "min_distance")


@relation(
    "M02",
    "Boundary distance",
    "metric",
    definition="The minimum distance between the outlines of A and B: a polygon's outline is "
    "its rings, a line or point stands for itself. Asked for a building inside an "
    "area, where it differs from the minimum distance (0). Tolerance 1 m.",
    question_forms="What is the distance between the boundary of F0 and the boundary of F1?",
    answer_type="distance",
    distractor_rule="Adjacent numeric values (as M01), plus 0 m (the minimum distance) where "
    "it differs by more than 3 m.",
    edit_constraints="The boundary distance between F0 (inside area F1) and F1 must fall in a "
    "stated 10 m band while F0 stays within F1.",
    anchor_kinds=("area",),
    needs=("area", "building"),
)
class BoundaryDistance:
    @staticmethod
    def _inner(ctx, anchor):
        inner = [
            f
            for f in ctx.pools.near("building", anchor.geom, 0)
            if shapely.contains_properly(anchor.geom, f.geom) and f.geom.distance(anchor.geom.boundary) >= 3
        ]
        return ctx.rng.choice(inner) if inner else None

    @staticmethod
    def qa(ctx, anchor):
        b = BoundaryDistance._inner(ctx, anchor)
        if b is None:
            return None
        item = _numeric_qa(
            ctx,
            [Member.of(b), Member.of(anchor)],
            "boundary_distance",
            ("F0", "F1"),
            "Building F0 lies inside area F1. What is the distance between the "
            "boundary of F0 and the boundary of F1, in metres?",
            "distance",
            " m",
            min_value=3,
            extra_facts=[("min_distance", ("F0", "F1"))],
        )
        if item and "0.0 m" not in item.choices:
            # The minimum distance (0 m) is the natural wrong answer: make it an option.
            wrong = [c for i, c in enumerate(item.choices) if "ABCD"[i] != item.correct_choice]
            wrong[ctx.rng.randrange(3)] = "0.0 m"
            item.choices, item.correct_choice = mcq(
                ctx.rng, item.choices["ABCD".index(item.correct_choice)], wrong
            )
        return item

    @staticmethod
    def edit(ctx, anchor):
        b = BoundaryDistance._inner(ctx, anchor)
        if b is None:
            return None
        members = [Member.of(b), Member.of(anchor)]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        cur = oracle.boundary_distance(scene.geom("F0"), scene.geom("F1"))
        lo = float(max(1, round(cur * ctx.rng.choice([0.2, 0.4]))))
        if cur - (lo + 10) < 2:
            return None
        cons = [
            between("boundary_distance", "F0", "F1", lo=lo, hi=lo + 10),
            pred("within", "F0", "F1"),
            max_displacement(cur + 10),
        ]
        p, q = shapely.ops.nearest_points(scene.geom("F0"), scene.geom("F1").exterior)
        return edit_item(ctx, members, cons, translate_proposals(cur + 5, preferred=(q.x - p.x, q.y - p.y)))


@relation(
    "M04",
    "Manhattan distance",
    "metric",
    definition="|dx| + |dy| between ref(A) and ref(B) (centroids) along the task CRS grid "
    "axes, in metres. Tolerance 1 m.",
    question_forms="What is the Manhattan distance between the centroids of F0 and F1?",
    answer_type="distance",
    distractor_rule="Adjacent numeric values, including the Euclidean distance between the "
    "centroids when it differs by more than 3 m.",
    edit_constraints="The Manhattan distance between the centroids of F0 and F1 must fall in a "
    "stated 10 m band.",
    anchor_kinds=("poi", "building"),
)
class Manhattan:
    @staticmethod
    def qa(ctx, anchor):
        other = _members_near(ctx, anchor, ("poi", "building"), 250, lo=20)
        if not other:
            return None
        item = _numeric_qa(
            ctx,
            [Member.of(anchor), Member.of(other[0])],
            "manhattan_distance",
            ("F0", "F1"),
            "What is the Manhattan distance (|Δx| + |Δy| along the grid "
            "axes of the task CRS) between the centroids of F0 and F1, in metres?",
            "distance",
            " m",
            min_value=10,
        )
        if item:
            eu = ref_point(item.scene.geom("F0")).distance(ref_point(item.scene.geom("F1")))
            if abs(eu - item.answer) > 3:
                correct = item.choices["ABCD".index(item.correct_choice)]
                wrong = [c for c in item.choices if c != correct]
                wrong[0] = f"{fmt_num(eu)} m"
                if len(set(wrong + [correct])) == 4:
                    item.choices, item.correct_choice = mcq(ctx.rng, correct, wrong)
        return item

    @staticmethod
    def edit(ctx, anchor):
        other = _members_near(ctx, anchor, ("poi", "building"), 200, lo=20)
        if not other:
            return None
        return _distance_edit(ctx, [Member.of(anchor), Member.of(other[0])], "manhattan_distance")


@relation(
    "M08",
    "Hausdorff distance",
    "metric",
    definition="The Hausdorff distance between A and B: discrete, with every segment "
    "densified into 100 equal parts (GEOS densify fraction 0.01). Kept only where "
    "densifying to 0.001 changes it by less than 0.05 m. Tolerance 1 m.",
    question_forms="What is the Hausdorff distance between F0 and F1, in metres?",
    answer_type="distance",
    distractor_rule="Adjacent numeric values, including the minimum distance when it differs "
    "by more than 3 m.",
    edit_constraints="The Hausdorff distance between F0 and F1 must be at most a stated " "value.",
    anchor_kinds=("road", "building"),
)
class Hausdorff:
    @staticmethod
    def qa(ctx, anchor):
        other = _members_near(ctx, anchor, (anchor.kind,), 60, lo=1)
        if not other:
            return None
        a, b = anchor.geom, other[0].geom
        if abs(oracle.hausdorff_distance(a, b) - oracle.hausdorff_distance(a, b, 0.001)) > 0.05:
            return None
        return _numeric_qa(
            ctx,
            [Member.of(anchor), Member.of(other[0])],
            "hausdorff_distance",
            ("F0", "F1"),
            "What is the Hausdorff distance between F0 and F1, in "
            "metres? (The largest distance from a point of either feature to the "
            "nearest point of the other.)",
            "distance",
            " m",
            min_value=2,
            extra_facts=[("min_distance", ("F0", "F1"))],
        )

    @staticmethod
    def edit(ctx, anchor):
        other = _members_near(ctx, anchor, (anchor.kind,), 60, lo=3)
        if not other:
            return None
        members = [Member.of(anchor), Member.of(other[0])]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        cur = oracle.hausdorff_distance(scene.geom("F0"), scene.geom("F1"))
        # Moving F0's centroid onto F1's gives the best a translation can do (roughly).
        c0, c1 = scene.geom("F0").centroid, scene.geom("F1").centroid
        best = oracle.hausdorff_distance(
            affinity.translate(scene.geom("F0"), c1.x - c0.x, c1.y - c0.y), scene.geom("F1")
        )
        hi = float(math.ceil(best + 0.5 * (cur - best)))
        if cur - hi < 3:
            return None
        cons = [at_most("hausdorff_distance", "F0", "F1", hi=hi)]
        return edit_item(
            ctx,
            members,
            cons,
            translate_proposals(c0.distance(c1) + 2, step=0.5, preferred=(c1.x - c0.x, c1.y - c0.y)),
        )


@relation(
    "M12",
    "Total perimeter",
    "metric",
    definition="The sum of the perimeters (all rings) of the given polygons, in metres. " "Tolerance 1 m.",
    question_forms="What is the total perimeter of F0, F1 and F2, in metres?",
    answer_type="perimeter",
    distractor_rule="Adjacent numeric values (as M01).",
    edit_constraints="Scale F0 about its centroid so that the total perimeter of F0, F1 and F2 "
    "falls in a stated 2 m band.",
    anchor_kinds=("building", "area"),
)
class Perimeter:
    @staticmethod
    def qa(ctx, anchor):
        others = _members_near(ctx, anchor, (anchor.kind,), 80, lo=1, n=2)
        if not others:
            return None
        return _numeric_qa(
            ctx,
            [Member.of(anchor)] + [Member.of(o) for o in others],
            "perimeter_total",
            ("F0", "F1", "F2"),
            "What is the total perimeter of F0, F1 and F2 " "together, in metres?",
            "perimeter",
            " m",
        )

    @staticmethod
    def edit(ctx, anchor):
        if anchor.kind != "building":
            return None
        others = _members_near(ctx, anchor, ("building",), 80, lo=3, n=2)
        if not others:
            return None
        members = [Member.of(anchor)] + [Member.of(o) for o in others]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene = made[0]
        p0 = scene.geom("F0").length
        rest = scene.geom("F1").length + scene.geom("F2").length
        factor = ctx.rng.choice([0.6, 0.75, 1.3, 1.5])
        target = float(round(rest + p0 * factor))
        cons = [
            between("perimeter_total", "F0", "F1", "F2", lo=target - 1, hi=target + 1),
            pred("disjoint", "F0", "F1"),
            pred("disjoint", "F0", "F2"),
        ]
        f = (target - rest) / p0
        return edit_item(ctx, members, cons, [[{"op": "scale", "factor": round(f, 6), "origin": "centroid"}]])


@relation(
    "M14",
    "Buffer / within distance",
    "metric",
    definition="B is within distance d of A when min_distance(A, B) <= d (ST_DWithin). Asked "
    "as a count of features within d; no feature lies within 2 m of the threshold.",
    question_forms="How many of F1-F6 lie within d metres of F0?",
    answer_type="count",
    distractor_rule="Adjacent counts (answer +-1, +-2).",
    edit_constraints="F0 must lie within d of F1 but farther than d from F2.",
    anchor_kinds=("poi", "building"),
)
class WithinDistance:
    @staticmethod
    def qa(ctx, anchor):
        others = _members_near(ctx, anchor, ("poi", "building"), 120, lo=1, n=6)
        if not others:
            return None
        d = float(ctx.rng.choice([25, 40, 50, 75, 100]))
        dists = [o.geom.distance(anchor.geom) for o in others]
        if min(abs(x - d) for x in dists) < 2:
            return None
        members = [Member.of(anchor)] + [Member.of(o) for o in others]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene, prov = made
        ids = [f"F{i}" for i in range(1, 7)]
        n = oracle.count_within_distance(scene.geom("F0"), *[scene.geom(i) for i in ids], distance=d)
        distractors = [str(v) for v in sorted((v for v in range(7) if v != n), key=lambda v: abs(v - n))[:3]]
        choices, letter = mcq(ctx.rng, str(n), distractors)
        facts = [fact(scene, "count_within_distance", "F0", *ids, distance=d)] + [
            fact(scene, "min_distance", "F0", i) for i in ids
        ]
        q = (
            f"How many of the features F1, F2, F3, F4, F5 and F6 lie within {d:g} m of F0 "
            f"(minimum distance at most {d:g} m)?"
        )
        return QAItem(
            scene,
            q,
            "count",
            n,
            choices,
            letter,
            facts,
            {"threshold_gap_m": round(min(abs(x - d) for x in dists), 3)},
            prov,
        )

    @staticmethod
    def edit(ctx, anchor):
        others = _members_near(ctx, anchor, ("poi", "building"), 150, lo=30, n=2)
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
    "metric",
    definition="The feature among the candidates with the smallest minimum distance to A. "
    "The runner-up must be at least max(2 m, 10 %) farther.",
    question_forms="Which of F1-F4 is nearest to F0?",
    answer_type="feature_id",
    distractor_rule="The other candidates (competing feature ids), nearest ones first.",
    edit_constraints="Move F0 so that a stated candidate becomes its nearest neighbour, with a "
    "margin of 2 m over the others.",
    anchor_kinds=("poi", "building"),
)
class Nearest:
    @staticmethod
    def qa(ctx, anchor):
        others = _members_near(ctx, anchor, ("poi", "building"), 100, lo=1, n=4)
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
            "Which of the features F1, F2, F3 and F4 is nearest to F0 (smallest "
            "minimum distance)? Answer with its feature id.",
            "feature_id",
            answer,
            choices,
            letter,
            facts,
            {"runner_up_gap_m": round(ds[1][0] - ds[0][0], 3)},
            prov,
        )

    @staticmethod
    def edit(ctx, anchor):
        others = _members_near(ctx, anchor, ("poi", "building"), 100, lo=5, n=3)
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
    "metric",
    definition="The number of the given POIs covered by polygon A divided by A's area in "
    "km². No POI lies within 1 m of A's boundary. Tolerance 0.001 per km².",
    question_forms="How many of the POIs F1-Fn per km² lie in F0?",
    answer_type="density",
    distractor_rule="Adjacent numeric values (as M01), including the density that counts all "
    "shown POIs when it differs.",
    edit_constraints="Scale F0 about its centroid so that its POI density falls in a stated " "band.",
    anchor_kinds=("area", "building"),
    needs=("poi",),
)
class Density:
    @staticmethod
    def _pois(ctx, anchor):
        pois = ctx.pools.near("poi", anchor.geom, 40)
        if any(p.geom.distance(anchor.geom.boundary) < 1 for p in pois):
            return None
        inside = [p for p in pois if p.geom.within(anchor.geom)]
        outside = [p for p in pois if not p.geom.within(anchor.geom)]
        if not inside or len(inside) > 12:
            return None
        outside = ctx.rng.sample(outside, min(len(outside), 4))
        return inside + outside

    @staticmethod
    def qa(ctx, anchor):
        pois = Density._pois(ctx, anchor)
        if not pois:
            return None
        ctx.rng.shuffle(pois)
        members = [Member.of(anchor)] + [Member.of(p) for p in pois]
        made = make_scene(ctx, members)
        if made is None:
            return None
        scene, prov = made
        ids = [f"F{i}" for i in range(1, len(pois) + 1)]
        value = oracle.poi_density(scene.geom("F0"), *[scene.geom(i) for i in ids])
        choices, letter = mcq(
            ctx.rng, f"{fmt_num(value, 3)} per km²", numeric_distractors(ctx.rng, value, " per km²", 3)
        )
        facts = [fact(scene, "poi_density", "F0", *ids), fact(scene, "area", "F0")] + [
            fact(scene, "covered_by", i, "F0") for i in ids
        ]
        idtext = ", ".join(ids)
        q = (
            f"Of the points of interest {idtext}, count those lying in F0 and divide by F0's area "
            f"in km². What is this POI density, in POIs per km²? (Give at least three decimals.)"
        )
        return QAItem(
            scene, q, "density", round(value, 6), choices, letter, facts, {"poi_boundary_gap_m": 1.0}, prov
        )

    @staticmethod
    def edit(ctx, anchor):
        pois = Density._pois(ctx, anchor)
        if not pois:
            return None
        members = [Member.of(anchor)] + [Member.of(p) for p in pois]
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
            if abs(v - cur) > 0.2 * cur and all(p.distance(g.boundary) > 1 for p in geoms):
                lo, hi = round(v * 0.95, 3), round(v * 1.05, 3)
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
