"""Controlled constructions derived from real features, for relations whose exact cases are
rare in real data (topological equality, boundary coverage); each records how it was made."""

from __future__ import annotations

import math

import shapely
from shapely import affinity
from shapely.geometry import Polygon

from scoring import oracle
from scoring.extract.pools import PoolFeature
from scoring.geometry.georef import snap_to_grid
from scoring.relations.base import BuildContext, Member
from scoring.vocab import PoolKind


def equal_copy(m: Member) -> Member | None:
    """A topologically equal copy with a different vertex sequence: the ring starts at another
    vertex and runs the other way. (An extra vertex on an edge would not survive the 1 cm grid
    exactly, so none is added.)"""
    g = m.geom
    if g.geom_type != "Polygon" or g.interiors:
        return None
    ring = list(g.exterior.coords)[:-1]
    if len(ring) < 3:
        return None
    ring = ring[::-1]
    start = len(ring) // 2
    ring = ring[start:] + ring[:start]
    copy = Polygon(ring)
    if not copy.equals(g) or copy.equals_exact(g, 0):
        return None
    return Member(
        m.kind,
        copy,
        {},
        m.source,
        "copy of the source with its ring starting at " "another vertex and reversed (topologically equal)",
    )


def near_copies(m: Member, rng) -> list[Member]:
    """Copies that are visibly not equal: shifted, shrunk and rotated versions."""
    g = m.geom
    ang = rng.uniform(0, 2 * math.pi)
    s = rng.uniform(1.5, 3.0)
    return [
        Member(
            m.kind,
            affinity.translate(g, s * math.cos(ang), s * math.sin(ang)),
            {},
            m.source,
            f"copy of the source shifted by {s:.2f} m",
        ),
        Member(
            m.kind,
            affinity.scale(g, 0.8, 0.8, origin="centroid"),
            {},
            m.source,
            "copy of the source scaled by 0.8 about its centroid",
        ),
        Member(
            m.kind,
            affinity.rotate(g, rng.choice([-12, 12]), origin="centroid"),
            {},
            m.source,
            "copy of the source rotated by 12 degrees about its centroid",
        ),
    ]


def boundary_covered_copies(ctx: BuildContext, area, inner: list) -> list[Member]:
    """Buildings inside an area moved so that one of their vertices coincides with an area
    vertex while staying covered: exact boundary coverage that survives the 1 cm grid."""
    out = []
    ring = list(area.geom.exterior.coords)[:-1]
    for b in inner[:6]:
        done = False
        for v in ring[:: max(1, len(ring) // 12)]:
            for u in list(b.geom.exterior.coords)[:-1]:
                moved = affinity.translate(b.geom, v[0] - u[0], v[1] - u[1])
                moved = snap_to_grid(moved)
                if (
                    moved.is_valid
                    and oracle.boundary_covered(moved, area.geom)
                    and moved.intersection(area.geom.boundary).length == 0
                ):
                    out.append(
                        Member(
                            b.kind,
                            moved,
                            {},
                            b.uid,
                            "building moved so a vertex lies on a vertex of the area's "
                            "boundary, still covered by the area",
                        )
                    )
                    done = True
                    break
            if done:
                break
    return out


# ---------------------------------------------------------------- placements (second pass)
# Used only for slots that found no natural case (BuildContext.construct): a real feature of the
# pools, moved (never reshaped) to where the relation needs it, recorded as constructed.


def _sources(ctx: BuildContext, kind: str, near, radius: float, exclude: set[str], limit: int = 12):
    """Real features of `kind` near `near` (nearest first, stable), for placements."""
    cands = [f for f in ctx.pools.near(kind, near, radius) if f.uid not in exclude]
    cands.sort(key=lambda f: (round(f.geom.distance(near), 2), f.uid))
    return cands[:limit]


def _interior_points(ctx: BuildContext, poly, clearance: float, n: int) -> list:
    """Up to n seeded points of `poly` at least `clearance` from its boundary."""
    core = poly.buffer(-clearance)
    if core.is_empty or core.area <= 0:
        return []
    minx, miny, maxx, maxy = core.bounds
    out = []
    for _ in range(40 * n):
        p = shapely.Point(ctx.rng.uniform(minx, maxx), ctx.rng.uniform(miny, maxy))
        if core.contains(p):
            out.append(p)
            if len(out) == n:
                break
    return out


def placed_inside(
    ctx: BuildContext,
    area,
    kind: PoolKind = PoolKind.BUILDING,
    n: int = 1,
    clearance: float = 3.0,
    exclude: set[str] | None = None,
) -> list[Member]:
    """Real features of `kind` from near `area`, each moved so that it lies in the area's
    interior at least `clearance` m from its boundary."""
    exclude = set(exclude or ()) | {area.uid}
    out: list[Member] = []
    for f in _sources(ctx, kind, area.geom, 300.0, exclude):
        if f.geom.geom_type == "Polygon" and f.geom.area > 0.25 * area.geom.area:
            continue
        c = f.geom.centroid
        for p in _interior_points(ctx, area.geom, clearance, 6):
            moved = snap_to_grid(affinity.translate(f.geom, p.x - c.x, p.y - c.y))
            if (
                moved.is_valid
                and shapely.contains_properly(area.geom, moved)
                and moved.distance(area.geom.boundary) >= clearance
            ):
                out.append(
                    Member(
                        f.kind,
                        moved,
                        {},
                        f.uid,
                        f"{f.kind} moved into the interior of "
                        f"the area, at least {clearance:g} m from its boundary",
                    )
                )
                break
        if len(out) == n:
            break
    return out


def placed_across(
    ctx: BuildContext, anchor, kind: PoolKind = PoolKind.BUILDING, n: int = 1, exclude: set[str] | None = None
) -> list[Member]:
    """Real polygons from near `anchor` (a polygon), each moved so that its centroid lies on the
    anchor's boundary: it straddles the boundary (a clear overlap with the anchor)."""
    exclude = set(exclude or ()) | {anchor.uid}
    ring = anchor.geom.exterior
    out: list[Member] = []
    for f in _sources(ctx, kind, anchor.geom, 300.0, exclude):
        g = f.geom
        if g.geom_type != "Polygon" or g.area > 0.3 * anchor.geom.area:
            continue
        c = g.centroid
        for t in (ctx.rng.random() for _ in range(6)):
            q = ring.interpolate(t, normalized=True)
            moved = snap_to_grid(affinity.translate(g, q.x - c.x, q.y - c.y))
            if not moved.is_valid or not moved.overlaps(anchor.geom):
                continue
            inter = moved.intersection(anchor.geom).area
            if min(inter, moved.difference(anchor.geom).area, anchor.geom.difference(moved).area) >= 2.0:
                out.append(
                    Member(
                        f.kind,
                        moved,
                        {},
                        f.uid,
                        f"{f.kind} moved so its centroid lies on "
                        "the boundary of the other polygon (straddling it)",
                    )
                )
                break
        if len(out) == n:
            break
    return out


def placed_along(
    ctx: BuildContext, road, positions: list[float], offsets: list[float], exclude: set[str] | None = None
) -> list[tuple[float, Member]]:
    """Real POIs from near `road`, moved so that each lies `offsets[i]` m beside the road
    (positive: left, looking from its first vertex) at linear position `positions[i]`."""
    line = road.geom
    exclude = set(exclude or ()) | {road.uid}
    srcs = _sources(ctx, PoolKind.POI, line, 400.0, exclude, limit=len(positions))
    if len(srcs) < len(positions):
        return []
    out = []
    for f, t, off in zip(srcs, positions, offsets, strict=False):
        p = line.interpolate(t)
        a, b = line.interpolate(max(0.0, t - 1.0)), line.interpolate(min(line.length, t + 1.0))
        dx, dy = b.x - a.x, b.y - a.y
        norm = math.hypot(dx, dy)
        if norm == 0:
            return []
        target = (p.x - dy / norm * off, p.y + dx / norm * off)
        c = f.geom.centroid
        moved = snap_to_grid(affinity.translate(f.geom, target[0] - c.x, target[1] - c.y))
        out.append(
            (
                t,
                Member(
                    f.kind,
                    moved,
                    {},
                    f.uid,
                    f"POI moved {abs(off):g} m beside the road " f"at {t:.0f} m along it",
                ),
            )
        )
    return out


def placed_outside(ctx: BuildContext, anchor, gap: float = 5.0, n: int = 1) -> list[Member]:
    """Real buildings from near `anchor` (a polygon), each moved to lie just outside it: pushed
    out from a boundary point, away from the anchor's centroid, until `gap` to `gap` + 10 m
    clear of it."""
    ring, centre = anchor.geom.exterior, anchor.geom.centroid
    out: list[Member] = []
    for f in _sources(ctx, PoolKind.BUILDING, anchor.geom, 300.0, {anchor.uid}):
        g = f.geom
        if g.geom_type != "Polygon" or g.area > 0.3 * anchor.geom.area:
            continue
        q = ring.interpolate(ctx.rng.random(), normalized=True)
        vx, vy = q.x - centre.x, q.y - centre.y
        norm = math.hypot(vx, vy)
        if norm == 0:
            continue
        c = g.centroid
        for step in range(0, 120, 2):
            moved = affinity.translate(g, q.x - c.x + vx / norm * step, q.y - c.y + vy / norm * step)
            d = moved.distance(anchor.geom)
            if d >= gap:
                moved = snap_to_grid(moved)
                if moved.is_valid and gap <= moved.distance(anchor.geom) <= gap + 10:
                    out.append(
                        Member(
                            f.kind,
                            moved,
                            {},
                            f.uid,
                            f"building moved {gap:g}-{gap + 10:g} m " "outside the other polygon",
                        )
                    )
                break
        if len(out) == n:
            break
    return out


def as_pool_feature(m: Member) -> PoolFeature:
    """A placed member as a pool feature (for constructions that start from pool features)."""
    return PoolFeature(m.source or "", m.kind, m.geom, {})


def near_misses(ctx: BuildContext, anchor) -> list[Member]:
    """Negatives for an area anchor without enough natural ones: real buildings moved inside it
    and across its boundary."""
    if anchor.kind != PoolKind.AREA:
        return []
    return placed_inside(ctx, anchor, n=2, clearance=3.0) + placed_across(ctx, anchor, n=1)


def crossing_road(ctx: BuildContext, anchor, accept=lambda f: True) -> list:
    """A real road from near the road `anchor` (one `accept` takes), moved so its midpoint lies
    on a seeded point of the anchor's middle part, kept when the two then cross clearly (at
    least 5 m from every end): [(member, source feature)] or []."""
    mid = anchor.geom.interpolate(ctx.rng.uniform(0.3, 0.7), normalized=True)
    near = [
        f
        for f in ctx.pools.near(PoolKind.ROAD, anchor.geom, 300)
        if f.uid != anchor.uid and f.geom.length >= 20 and accept(f)
    ]
    near.sort(key=lambda f: (round(f.geom.distance(anchor.geom), 2), f.uid))
    near = near[:20]
    ctx.rng.shuffle(near)  # another slot on the same road gets another crossing
    for f in near:
        m = f.geom.interpolate(0.5, normalized=True)
        moved = snap_to_grid(affinity.translate(f.geom, mid.x - m.x, mid.y - m.y))
        if not moved.crosses(anchor.geom):
            continue
        inter = moved.intersection(anchor.geom)
        ends = [shapely.Point(g.coords[i]) for g in (moved, anchor.geom) for i in (0, -1)]
        if all(e.distance(inter) >= 5 for e in ends):
            why = "road moved so its midpoint lies on the other road (crossing it)"
            return [(Member(PoolKind.ROAD, moved, {}, f.uid, why), f)]
    return []
