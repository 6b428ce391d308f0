"""Topology family (GEOS DE-9IM). QA: which one of F1-F4 has the relation with F0 (exactly one
does; the others are near misses of other DE-9IM classes, all with clear margins). Editing: move
F0 so the relation holds (exact relations judged with the documented eps = 0.05 m)."""

from __future__ import annotations

import math

import shapely

from scoring.extract.pools import PoolFeature
from scoring.oracle import EDIT_EPS
from scoring.relations.base import BuildContext, EditItem, Member, QAItem, Solver, relation
from scoring.relations.common import (
    edit_item,
    max_displacement,
    nearest_vector,
    neighbours,
    pred,
    translate_proposals,
    translated,
)
from scoring.relations.constructions import (
    as_pool_feature,
    boundary_covered_copies,
    crossing_road,
    equal_copy,
    near_copies,
    near_misses,
    placed_across,
    placed_inside,
    placed_outside,
)
from scoring.relations.topology_qa import (
    Q_BOUNDARY_COVERED,
    Q_CONTAINED_PROPERLY,
    Q_CROSSES,
    Q_DISJOINT,
    Q_EQUAL,
    Q_INTERSECTS,
    Q_OVERLAPS,
    Q_TOUCHES,
    Q_WITHIN,
    _classified,
    _qa,
)
from scoring.vocab import AnswerType, Family, MarginClass, PoolKind

FAMILY = Family.TOPOLOGY
NEG_ALL = (
    MarginClass.DISJOINT,
    MarginClass.TOUCH,
    MarginClass.INSIDE,
    MarginClass.BOUNDARY_COVERED,
    MarginClass.OVERLAP,
    MarginClass.CROSS,
    MarginClass.EQUAL,
)


# ---------------------------------------------------------------- edits


def _move_edit(ctx, f0: Member, others: list[Member], constraints, lead="", max_dist=60.0, preferred=None):
    return edit_item(
        ctx, [f0] + others, constraints, translate_proposals(max_dist, preferred=preferred), lead=lead
    )


def _pick(ctx, items, n=1):
    items = list(items)
    if len(items) < n:
        return None
    return ctx.rng.sample(items, n) if n > 1 else ctx.rng.choice(items)


@relation(
    "T01",
    "Equality",
    FAMILY,
    definition="A equals B when they are topologically equal: the same point set "
    "(DE-9IM T*F**FFF*), whatever the vertex order or redundant vertices.",
    question_forms="Which one of F1-F4 is topologically equal to F0? (open: a feature id; "
    "MCQ: the four ids)",
    questions=(Q_EQUAL,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "equals"),
    distractor_rule="Constructed near-equal copies of F0: shifted 1.5-3 m, scaled by 0.8, "
    "rotated 12 degrees; or a real neighbour.",
    edit_constraints="F0 (a displaced copy of F1) must become equal to F1 within eps "
    "(Hausdorff <= 0.05 m).",
    anchor_kinds=(PoolKind.BUILDING, PoolKind.AREA),
)
class Equality:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        m = Member.of(anchor)
        eq = equal_copy(m)
        if eq is None:
            return None
        extra = [eq] + near_copies(m, ctx.rng)
        return _qa(
            ctx,
            anchor,
            (PoolKind.BUILDING,),
            15,
            (MarginClass.EQUAL,),
            (MarginClass.OVERLAP, MarginClass.INSIDE, MarginClass.DISJOINT, MarginClass.TOUCH),
            Q_EQUAL,
            "equals",
            extra,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        m = Member.of(anchor)
        ang, dist = ctx.rng.uniform(0, 2 * math.pi), ctx.rng.uniform(8, 25)
        moved = translated(
            m, dist * math.cos(ang), dist * math.sin(ang), f"copy of the source displaced by {dist:.1f} m"
        )
        cons = [pred("equals_eps", "F0", "F1", eps=EDIT_EPS)]
        dx, dy = -dist * math.cos(ang), -dist * math.sin(ang)

        # The exact inverse offset, recovered from the snapped coordinates by the search below.
        def proposals():
            from scoring.relations.base import make_scene

            made = make_scene(ctx, [moved, m])
            if made:
                candidate = made[0]
                c0, c1 = candidate.geom("F0").centroid, candidate.geom("F1").centroid
                yield [{"op": "translate", "dx": round(c1.x - c0.x, 3), "dy": round(c1.y - c0.y, 3)}]
            yield [{"op": "translate", "dx": round(dx, 3), "dy": round(dy, 3)}]

        return edit_item(ctx, [moved, m], cons, proposals(), lead="F0 is a displaced copy of F1.")


@relation(
    "T02",
    "Disjointness",
    FAMILY,
    definition="A and B are disjoint when they share no point (DE-9IM FF*FF****).",
    question_forms="Which one of F1-F4 is disjoint from F0?",
    questions=(Q_DISJOINT,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "disjoint"),
    distractor_rule="Features that clearly intersect F0 (inside, overlapping, crossing, " "touching).",
    edit_constraints="F0 (intersecting F1) must become disjoint from F1 with at most a "
    "bounded displacement.",
    anchor_kinds=(PoolKind.AREA, PoolKind.BUILDING, PoolKind.ROAD),
    constructs=True,
)
class Disjointness:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        return _qa(
            ctx,
            anchor,
            (PoolKind.BUILDING, PoolKind.ROAD, PoolKind.POI),
            40,
            (MarginClass.DISJOINT,),
            (
                MarginClass.INSIDE,
                MarginClass.OVERLAP,
                MarginClass.CROSS,
                MarginClass.TOUCH,
                MarginClass.BOUNDARY_COVERED,
            ),
            Q_DISJOINT,
            "disjoint",
            near_misses(ctx, anchor) if ctx.construct else (),
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        cls = _classified(ctx, anchor, (PoolKind.BUILDING, PoolKind.POI), 30)
        hits = [
            m
            for m, c in cls
            if c in (MarginClass.INSIDE, MarginClass.OVERLAP, MarginClass.TOUCH, MarginClass.BOUNDARY_COVERED)
            and m.geom.geom_type != "LineString"
        ]
        f0 = _pick(ctx, hits)
        if f0 is None:
            return None
        d = _escape_distance(f0.geom, anchor.geom)
        cons = [pred("disjoint", "F0", "F1"), max_displacement(d + 10)]
        return _move_edit(ctx, f0, [Member.of(anchor)], cons, max_dist=d + 10)


def _escape_distance(g, a) -> float:
    """An upper bound of how far g must move to get clear of a."""
    minx, miny, maxx, maxy = a.bounds
    gx0, gy0, gx1, gy1 = g.bounds
    return float(max(maxx - minx, maxy - miny) + max(gx1 - gx0, gy1 - gy0))


@relation(
    "T03",
    "Intersection",
    FAMILY,
    definition="A and B intersect when they share at least one point (not disjoint).",
    question_forms="Which one of F1-F4 intersects F0?",
    questions=(Q_INTERSECTS,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "intersects"),
    distractor_rule="Nearby features that are clearly disjoint from F0 (gap >= 1 m).",
    edit_constraints="F0 (disjoint from F1) must come to intersect F1 while staying disjoint "
    "from F2, with bounded displacement.",
    anchor_kinds=(PoolKind.AREA, PoolKind.BUILDING, PoolKind.ROAD),
)
class Intersection:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        return _qa(
            ctx,
            anchor,
            (PoolKind.BUILDING, PoolKind.ROAD, PoolKind.POI),
            40,
            (MarginClass.INSIDE, MarginClass.OVERLAP, MarginClass.CROSS),
            (MarginClass.DISJOINT,),
            Q_INTERSECTS,
            "intersects",
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if anchor.kind == PoolKind.ROAD:
            return None
        cls = _classified(ctx, anchor, (PoolKind.BUILDING, PoolKind.POI), 40)
        far = [m for m, c in cls if c == MarginClass.DISJOINT]
        if len(far) < 2:
            return None
        f0, f2 = ctx.rng.sample(far, 2)
        dx, dy, d = nearest_vector(f0.geom, anchor.geom)
        cons = [pred("intersects", "F0", "F1"), pred("disjoint", "F0", "F2"), max_displacement(d + 15)]
        return _move_edit(ctx, f0, [Member.of(anchor), f2], cons, max_dist=d + 15, preferred=(dx, dy))


@relation(
    "T04",
    "Touching",
    FAMILY,
    definition="A touches B when their boundaries meet but their interiors do not "
    "intersect (OGC touches).",
    question_forms="Which one of F1-F4 touches F0?",
    questions=(Q_TOUCHES,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "touches"),
    distractor_rule="Neighbours that are disjoint by >= 1 m, overlapping, or crossing.",
    edit_constraints="F0 must touch F1 within eps = 0.05 m (distance <= eps, interiors "
    "shrunk by eps disjoint) and stay disjoint from F2.",
    anchor_kinds=(PoolKind.BUILDING, PoolKind.ROAD),
)
class Touching:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        kinds = (PoolKind.BUILDING,) if anchor.kind == PoolKind.BUILDING else (PoolKind.ROAD,)
        return _qa(
            ctx,
            anchor,
            kinds,
            40,
            (MarginClass.TOUCH,),
            (MarginClass.DISJOINT, MarginClass.OVERLAP, MarginClass.CROSS),
            Q_TOUCHES,
            "touches",
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if anchor.kind != PoolKind.BUILDING:
            return None
        cls = _classified(ctx, anchor, (PoolKind.BUILDING,), 40)
        far = [m for m, c in cls if c == MarginClass.DISJOINT and 2 <= m.geom.distance(anchor.geom) <= 25]
        if len(far) < 2:
            return None
        f0, f2 = ctx.rng.sample(far, 2)
        dx, dy, d = nearest_vector(f0.geom, anchor.geom)
        s = (d - 0.01) / d
        cons = [
            pred("touches_eps", "F0", "F1", eps=EDIT_EPS),
            pred("disjoint", "F0", "F2"),
            max_displacement(d + 10),
        ]
        props = [[{"op": "translate", "dx": round(dx * s, 3), "dy": round(dy * s, 3)}]]
        return edit_item(ctx, [f0, Member.of(anchor), f2], cons, props)


@relation(
    "T05",
    "Crossing",
    FAMILY,
    definition="A crosses B (OGC crosses): their interiors intersect in a set of lower "
    "dimension than the higher of the two, and A is not contained in B; for two "
    "roads, they meet at interior points of both.",
    question_forms="Which one of F1-F4 crosses F0?",
    questions=(Q_CROSSES,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "crosses"),
    distractor_rule="Roads that only touch F0 (meet at an endpoint) or are disjoint; for "
    "area anchors, roads lying inside.",
    edit_constraints="F0 (a road disjoint from road F1) must cross F1, with bounded " "displacement.",
    anchor_kinds=(PoolKind.ROAD, PoolKind.AREA),
    constructs=True,
)
class Crossing:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        return _qa(
            ctx,
            anchor,
            (PoolKind.ROAD,),
            40,
            (MarginClass.CROSS,),
            (MarginClass.TOUCH, MarginClass.DISJOINT, MarginClass.INSIDE),
            Q_CROSSES,
            "crosses",
            [m for m, _ in crossing_road(ctx, anchor)]
            if ctx.construct and anchor.kind == PoolKind.ROAD
            else (),
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if anchor.kind != PoolKind.ROAD:
            return None
        cls = _classified(ctx, anchor, (PoolKind.ROAD,), 40)
        far = [m for m, c in cls if c == MarginClass.DISJOINT]
        f0 = _pick(ctx, far)
        if f0 is None:
            return None
        dx, dy, d = nearest_vector(f0.geom, anchor.geom)
        cons = [pred("crosses", "F0", "F1"), max_displacement(d + 15)]
        return _move_edit(ctx, f0, [Member.of(anchor)], cons, max_dist=d + 15, preferred=(dx, dy))


@relation(
    "T06",
    "Containment (within)",
    FAMILY,
    definition="A is within B (OGC within): no point of A lies outside B and the "
    "interiors intersect (T*F**F***).",
    question_forms="Which one of F1-F4 lies within F0?",
    questions=(Q_WITHIN,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "within"),
    distractor_rule="Features outside F0, straddling its boundary, or touching it.",
    edit_constraints="F0 (outside area or building F1) must come to lie within F1, with "
    "bounded displacement.",
    anchor_kinds=(PoolKind.AREA, PoolKind.BUILDING),
)
class Within:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        return _qa(
            ctx,
            anchor,
            (PoolKind.BUILDING, PoolKind.POI, PoolKind.ROAD),
            40,
            (MarginClass.INSIDE,),
            (MarginClass.DISJOINT, MarginClass.OVERLAP, MarginClass.CROSS, MarginClass.TOUCH),
            Q_WITHIN,
            "within",
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        cls = _classified(ctx, anchor, (PoolKind.POI, PoolKind.BUILDING), 40)
        out = [m for m, c in cls if c == MarginClass.DISJOINT and m.geom.area < 0.3 * anchor.geom.area]
        f0 = _pick(ctx, out)
        if f0 is None:
            return None
        dx, dy, d = nearest_vector(f0.geom, anchor.geom)
        lim = d + 2 * math.sqrt(max(f0.geom.area, 1.0)) + 15
        cons = [pred("within", "F0", "F1"), max_displacement(lim)]
        return _move_edit(ctx, f0, [Member.of(anchor)], cons, max_dist=lim, preferred=(dx, dy))


@relation(
    "T08",
    "Overlap",
    FAMILY,
    definition="A overlaps B (OGC overlaps): same dimension, the interiors intersect, and "
    "each has a part outside the other.",
    question_forms="Which one of F1-F4 overlaps F0?",
    questions=(Q_OVERLAPS,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "overlaps"),
    distractor_rule="Polygons inside F0, covered by it while touching its boundary, "
    "touching it, or disjoint.",
    edit_constraints="F0 (a building disjoint from area F1) must overlap F1, with bounded " "displacement.",
    anchor_kinds=(PoolKind.AREA, PoolKind.BUILDING),
    constructs=True,
)
class Overlap:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        extra = []
        if anchor.kind == PoolKind.AREA:
            inner = [
                f
                for f in neighbours(ctx, anchor, (PoolKind.BUILDING,), 0)
                if shapely.contains_properly(anchor.geom, f.geom)
            ]
            extra = boundary_covered_copies(ctx, anchor, inner)[:1]
        if ctx.construct:  # a real building moved across F0's boundary, and near misses
            extra = extra + placed_across(ctx, anchor) + near_misses(ctx, anchor)
        return _qa(
            ctx,
            anchor,
            (PoolKind.BUILDING, PoolKind.AREA),
            40,
            (MarginClass.OVERLAP,),
            (MarginClass.INSIDE, MarginClass.BOUNDARY_COVERED, MarginClass.TOUCH, MarginClass.DISJOINT),
            Q_OVERLAPS,
            "overlaps",
            extra,
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        if anchor.kind != PoolKind.AREA:
            return None
        cls = _classified(
            ctx, anchor, (PoolKind.BUILDING,), 40, placed_outside(ctx, anchor) if ctx.construct else ()
        )
        out = [m for m, c in cls if c == MarginClass.DISJOINT]
        f0 = _pick(ctx, out)
        if f0 is None:
            return None
        dx, dy, d = nearest_vector(f0.geom, anchor.geom)
        cons = [pred("overlaps", "F0", "F1"), max_displacement(d + 15)]
        return _move_edit(ctx, f0, [Member.of(anchor)], cons, max_dist=d + 15, preferred=(dx, dy))


@relation(
    "T09",
    "Boundary coverage",
    FAMILY,
    definition="A is boundary-covered by B when A is covered by B (no point of A outside "
    "B), A touches B's boundary, and A is not equal to B.",
    question_forms="Which one of F1-F4 is covered by F0 while touching F0's boundary?",
    questions=(Q_BOUNDARY_COVERED,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "boundary_covered"),
    distractor_rule="Buildings properly inside F0 (>= 1 m from its boundary), straddling " "it, or outside.",
    edit_constraints="F0 (properly inside F1) must be moved to touch F1's boundary from "
    "inside: covered by F1 grown by eps and within eps of its boundary.",
    anchor_kinds=(PoolKind.AREA,),
    needs=(PoolKind.AREA, PoolKind.BUILDING),
    constructs=True,
)
class BoundaryCoverage:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        inner = [
            f
            for f in neighbours(ctx, anchor, (PoolKind.BUILDING,), 0)
            if shapely.contains_properly(anchor.geom, f.geom)
        ]
        if ctx.construct and not inner:
            inner = [as_pool_feature(m) for m in placed_inside(ctx, anchor, n=3, clearance=1.5)]
        extra = boundary_covered_copies(ctx, anchor, inner)
        if ctx.construct:
            extra = extra[:2] + near_misses(ctx, anchor)
        return _qa(
            ctx,
            anchor,
            (PoolKind.BUILDING,),
            40,
            (MarginClass.BOUNDARY_COVERED,),
            (MarginClass.INSIDE, MarginClass.OVERLAP, MarginClass.DISJOINT, MarginClass.TOUCH),
            Q_BOUNDARY_COVERED,
            "boundary_covered",
            extra[:2],
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        extra = placed_inside(ctx, anchor, n=1, clearance=3.0) if ctx.construct else []
        cls = _classified(ctx, anchor, (PoolKind.BUILDING,), 0, extra)
        inner = [m for m, c in cls if c == MarginClass.INSIDE]
        f0 = _pick(ctx, inner)
        if f0 is None:
            return None
        bnd = anchor.geom.exterior
        p, q = shapely.ops.nearest_points(f0.geom, bnd)
        d = p.distance(q)
        s = (d - 0.01) / d
        cons = [pred("boundary_covered_eps", "F0", "F1", eps=EDIT_EPS), max_displacement(d + 10)]
        props = [[{"op": "translate", "dx": round((q.x - p.x) * s, 3), "dy": round((q.y - p.y) * s, 3)}]]
        return edit_item(ctx, [f0, Member.of(anchor)], cons, props)


@relation(
    "T11",
    "Non-equal containment (contains properly)",
    FAMILY,
    definition="A lies in B's interior: B contains A properly (no point of A on B's "
    "boundary or outside B), so A cannot equal B.",
    question_forms="Which one of F1-F4 lies in the interior of F0 without touching its " "boundary?",
    questions=(Q_CONTAINED_PROPERLY,),
    answer_type=AnswerType.FEATURE_ID,
    solver=Solver("topology", "contained_properly"),
    distractor_rule="Buildings covered by F0 but touching its boundary (the near miss), "
    "straddling it, or outside.",
    edit_constraints="F0 (straddling or touching F1's boundary) must lie in F1's interior "
    "at least eps from its boundary.",
    anchor_kinds=(PoolKind.AREA,),
    needs=(PoolKind.AREA, PoolKind.BUILDING),
    constructs=True,
)
class ContainsProperly:
    @staticmethod
    def qa(ctx: BuildContext, anchor: PoolFeature) -> QAItem | None:
        inner = [
            f
            for f in neighbours(ctx, anchor, (PoolKind.BUILDING,), 0)
            if shapely.contains_properly(anchor.geom, f.geom)
        ]
        extra = boundary_covered_copies(ctx, anchor, inner)
        if ctx.construct:
            extra = extra[:2] + placed_inside(ctx, anchor, n=1, clearance=3.0) + placed_across(ctx, anchor)
        return _qa(
            ctx,
            anchor,
            (PoolKind.BUILDING, PoolKind.POI),
            40,
            (MarginClass.INSIDE,),
            (MarginClass.BOUNDARY_COVERED, MarginClass.OVERLAP, MarginClass.DISJOINT, MarginClass.TOUCH),
            Q_CONTAINED_PROPERLY,
            "contained_properly",
            extra[:2],
        )

    @staticmethod
    def edit(ctx: BuildContext, anchor: PoolFeature) -> EditItem | None:
        extra = placed_across(ctx, anchor) if ctx.construct else []
        cls = _classified(ctx, anchor, (PoolKind.BUILDING,), 20, extra)
        straddle = [
            m
            for m, c in cls
            if c in (MarginClass.OVERLAP, MarginClass.BOUNDARY_COVERED, MarginClass.TOUCH)
            and m.geom.area < 0.3 * anchor.geom.area
        ]
        f0 = _pick(ctx, straddle)
        if f0 is None:
            return None
        c = anchor.geom.representative_point()
        v = (c.x - f0.geom.centroid.x, c.y - f0.geom.centroid.y)
        lim = 2 * math.sqrt(f0.geom.area) + 15
        cons = [pred("contained_properly_eps", "F0", "F1", eps=EDIT_EPS), max_displacement(lim)]
        return _move_edit(ctx, f0, [Member.of(anchor)], cons, max_dist=lim, preferred=v)
