"""Controlled constructions derived from real features, for relations whose exact cases are
rare in real data (topological equality, boundary coverage); each records how it was made."""

from __future__ import annotations

import math

from shapely import affinity
from shapely.geometry import Polygon

from scoring import oracle
from scoring.georef import snap_to_grid
from scoring.relations.base import BuildContext, Member


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
