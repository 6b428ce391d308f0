"""Map context water: inland water polygons and the sea derived from natural=coastline ways.

Context only: nothing here changes a task pool, a count or a threshold.
"""

from __future__ import annotations

import logging
import math
from collections import Counter

import numpy as np
import shapely
import shapely.errors
from shapely.geometry import LineString, MultiPolygon, Point, Polygon, box
from shapely.geometry.base import BaseGeometry

from scoring.extract.pools import POOL_KINDS, PoolFeature
from scoring.geometry.georef import GRID, snap_to_grid

log = logging.getLogger(__name__)

# Inland water polygons: (OSM key, values). natural=wetland is not open water and stays out.
WATER_TAGS = (("natural", {"water"}), ("waterway", {"riverbank"}), ("landuse", {"reservoir", "basin"}))
SEA_PROBE_M = 0.05  # how far beside a coastline segment its two sides are probed
SEA_REACH_M = 50.0  # a coastline ending this close to the box edge was cut by the extract,
SEA_RAY_M = 150.0  # ... or this close along its last segment's direction
SEA_GAP_M = 150.0  # a coastline way ending this close to where another one starts goes on there
SEA_MAX_LAND_SHARE = 0.05  # a sea face holding more of the extract's buildings/roads is land


def clean_area(geom: BaseGeometry) -> BaseGeometry | None:
    """A (multi)polygon for the map context, valid and on the grid, or None. Unlike the task
    pools' polygon cleaning, multipolygons are kept (lakes with islands, split riverbanks) and nothing
    is counted in the extract's stats."""
    if geom is None or geom.is_empty:
        return None
    try:
        if not geom.is_valid:
            geom = shapely.make_valid(geom)
        geom = shapely.union_all([p for p in shapely.get_parts(geom) if p.geom_type == "Polygon"])
        geom = snap_to_grid(geom)
    except shapely.errors.GEOSException:
        return None
    if isinstance(geom, MultiPolygon) and len(geom.geoms) == 1:
        geom = geom.geoms[0]
    if not isinstance(geom, (Polygon, MultiPolygon)) or geom.is_empty or not geom.is_valid:
        return None
    return geom


def _extract_frame(features: list[PoolFeature]) -> Polygon:
    """The extract's bounding box in task coordinates: that of the task pools' features (the
    raw read also holds multipolygon relations reaching far beyond a clipped extract, 80 km
    for Hong Kong's; the size thresholds keep those out of the pools)."""
    return box(*shapely.total_bounds([f.geom for f in features]).tolist())


def sea_from_coastline(
    coast_lines: list, coast_rings: list, pools: dict[str, list[PoolFeature]]
) -> list[PoolFeature]:
    """Sea polygons inside the extract's box, from its natural=coastline ways.

    The box outline and the coastline lines are noded and polygonised; each face is classed by
    probing both sides of every coastline segment on its boundary: OSM draws coastlines with the
    land on the LEFT and the water on the RIGHT of the way's direction. A face is sea only when
    every probe that lands in it says water; faces with mixed or no evidence (a coastline ending
    inside the box, no coastline at all) stay land. Ways cut by the extract are first joined
    across short gaps and carried on to the box edge (_bridge_gaps, _reach_frame). A sea face
    that would hold more than a few per cent of the extract's buildings or road length is a
    misreading and is dropped: never flood the land. Closed coastline ways (islands) are cut out
    of the sea."""
    everything = [f for kind in POOL_KINDS for f in pools[kind]]
    if not coast_lines or not everything:
        return []
    frame = _extract_frame(everything)
    lines = []
    for g in coast_lines:
        for part in shapely.get_parts(g):
            if part.geom_type == "LineString" and part.length > 0 and part.intersects(frame):
                lines.append(part)
    islands = [p for g in coast_rings for p in shapely.get_parts(g) if p.geom_type == "Polygon"]
    if not lines:
        return []  # only islands, or coastline outside the box: which side is sea is unknown
    lines = _reach_frame(_bridge_gaps(lines, frame), frame)
    try:
        noded = shapely.union_all([frame.boundary, *[ln.intersection(frame) for ln in lines]])
        faces = [f for f in shapely.get_parts(shapely.polygonize(shapely.get_parts(noded))) if f.area > 1.0]
    except shapely.errors.GEOSException:
        return []
    if len(faces) < 2:
        return []
    water_votes, land_votes = _side_votes(lines, faces)
    sea_idx = [i for i in range(len(faces)) if water_votes[i] > 0 and land_votes[i] == 0]
    if not sea_idx:
        return []
    out = _not_land(faces, sea_idx, pools)
    if not out:
        return []
    sea = shapely.union_all(out)
    if islands:
        sea = sea.difference(shapely.union_all(islands))
    sea = clean_area(sea)
    if sea is None:
        return []
    return [
        PoolFeature(f"sea/{k}", "water", part, {"water": "sea", "derived_from": "natural=coastline"})
        for k, part in enumerate(shapely.get_parts(sea).tolist())
    ]


def _side_votes(lines: list, faces: list) -> tuple[np.ndarray, np.ndarray]:
    """(water, land) evidence per face: the coastline length whose right-hand (water) or
    left-hand (land) probe lands in it."""
    for face in faces:  # each face tests many probes: prepared once, a test is a lookup
        shapely.prepare(face)
    water_votes = np.zeros(len(faces))
    land_votes = np.zeros(len(faces))
    for ln in lines:
        c = np.asarray(ln.coords)[:, :2]
        a, b = c[:-1], c[1:]
        d = b - a
        length = np.hypot(d[:, 0], d[:, 1])
        keep = length > 4 * SEA_PROBE_M
        a, d, length = a[keep], d[keep], length[keep]
        mid = a + d / 2
        right = np.column_stack([d[:, 1], -d[:, 0]]) / length[:, None]  # (dy, -dx): right-hand normal
        face_of = []
        for probe in (mid + SEA_PROBE_M * right, mid - SEA_PROBE_M * right):
            where = np.full(len(probe), -1)
            for fi, face in enumerate(faces):  # the faces' interiors are disjoint (polygonized)
                where[shapely.contains_xy(face, probe[:, 0], probe[:, 1])] = fi
            face_of.append(where)
        wet, dry = face_of
        # a segment with the same face on both sides (a dangling piece) tells nothing
        ok = (wet >= 0) & (dry >= 0) & (wet != dry)
        np.add.at(water_votes, wet[ok], length[ok])
        np.add.at(land_votes, dry[ok], length[ok])
    return water_votes, land_votes


def _not_land(faces: list, sea_idx: list[int], pools: dict[str, list[PoolFeature]]) -> list:
    """The sea faces holding no more than a few per cent of the buildings or the road length
    (more would be a misread coastline flooding the land)."""
    buildings = (
        shapely.points(shapely.get_coordinates([f.geom.representative_point() for f in pools["building"]]))
        if pools["building"]
        else []
    )
    roads = [f.geom for f in pools["road"]]
    road_total = sum(g.length for g in roads) or 1.0
    out = []
    for i in sea_idx:
        face = faces[i]
        shapely.prepare(face)  # tested against every building and road
        if len(buildings):
            inside = int(shapely.contains(face, buildings).sum())
            if inside > max(3, SEA_MAX_LAND_SHARE * len(buildings)):
                log.info("coastline face %d holds %d buildings: not sea", i, inside)
                continue
        if roads:
            crossing = np.flatnonzero(shapely.intersects(face, roads))
            rl = sum(roads[j].intersection(face).length for j in crossing)
            if rl > SEA_MAX_LAND_SHARE * road_total:
                log.info("coastline face %d holds %.0f m of roads: not sea", i, rl)
                continue
        out.append(face)
    return out


def _end_key(c) -> tuple[int, int]:
    return (round(c[0] / GRID), round(c[1] / GRID))


def _loose(parts: list[list[tuple]], frame: Polygon) -> tuple[list[bool], list[bool]]:
    """Per coastline part: is its start / its end loose, i.e. inside the box and shared with
    no other part's start or end (adjacent OSM ways share their end node)?"""
    count = Counter(_end_key(c) for p in parts for c in (p[0], p[-1]))
    starts = [count[_end_key(p[0])] == 1 and frame.contains(Point(p[0])) for p in parts]
    ends = [count[_end_key(p[-1])] == 1 and frame.contains(Point(p[-1])) for p in parts]
    return starts, ends


def _bridge_gaps(lines: list[LineString], frame: Polygon) -> list[LineString]:
    """Coastline ways whose neighbour along the shore is missing from the extract: the end of
    one way (inside the box) is joined straight to the start of another (inside the box, not
    joined to anything) when they lie within SEA_GAP_M, closest pairs first. Joining an end to a
    start keeps the direction, hence the water side, of both."""
    parts = [[tuple(c[:2]) for c in ln.coords] for ln in lines]
    while len(parts) > 1:
        loose_start, loose_end = _loose(parts, frame)
        ei = [i for i, ok in enumerate(loose_end) if ok]
        sj = [j for j, ok in enumerate(loose_start) if ok]
        if not ei or not sj:
            break
        e = np.array([parts[i][-1] for i in ei])
        st = np.array([parts[j][0] for j in sj])
        d = np.hypot(e[:, None, 0] - st[None, :, 0], e[:, None, 1] - st[None, :, 1])
        d[np.array(ei)[:, None] == np.array(sj)[None, :]] = np.inf  # not a way onto itself
        a, b = np.unravel_index(int(np.argmin(d)), d.shape)
        if not d[a, b] <= SEA_GAP_M:
            break
        i, j = ei[a], sj[b]
        joined = parts[i] + parts[j]
        parts = [p for k, p in enumerate(parts) if k not in (i, j)] + [joined]
    return [LineString(p) for p in parts]


def _reach_frame(lines: list[LineString], frame: Polygon) -> list[LineString]:
    """Coastline ways cut by the extract end just inside its box (the nodes beyond it are
    missing): a loose end (not joined to another coastline way) is carried on to the box edge,
    straight on along its last segment if that meets the edge within SEA_RAY_M, else to the
    nearest edge point if that is within SEA_REACH_M; so the coastline divides the box. Ends
    farther in stay loose (their faces get no sea). The way's direction is kept."""
    edge = frame.boundary
    x0, y0, x1, y1 = frame.bounds
    parts = [[tuple(c[:2]) for c in ln.coords] for ln in lines]
    loose_start, loose_end = _loose(parts, frame)
    out = []
    for coords, ls, le in zip(parts, loose_start, loose_end, strict=False):
        coords = list(coords)
        for pos, free in ((0, ls), (-1, le)):
            if not free or len(coords) < 2:
                continue
            pt = Point(coords[pos])
            prev = coords[1] if pos == 0 else coords[-2]
            dx, dy = pt.x - prev[0], pt.y - prev[1]
            steps = [
                t
                for t in (
                    (x1 - pt.x) / dx if dx > 0 else None,
                    (x0 - pt.x) / dx if dx < 0 else None,
                    (y1 - pt.y) / dy if dy > 0 else None,
                    (y0 - pt.y) / dy if dy < 0 else None,
                )
                if t is not None
            ]
            q = None
            if steps and min(steps) * math.hypot(dx, dy) <= SEA_RAY_M:
                t = min(steps)
                q = Point(pt.x + t * dx, pt.y + t * dy)
            elif edge.distance(pt) <= SEA_REACH_M:
                q = edge.interpolate(edge.project(pt))
            if q is not None:
                if pos == 0:
                    coords.insert(0, (q.x, q.y))
                else:
                    coords.append((q.x, q.y))
        out.append(LineString(coords))
    return out
