"""Insets: magnified views of task features too small or too crowded to read on the main map."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import shapely
import shapely.ops
from shapely.geometry import box

from scoring.geometry.georef import PixelTransform
from scoring.render.backend.artists import rectangle
from scoring.render.backend.canvas import MapCanvas, add_patch
from scoring.render.context import ContextIndex
from scoring.render.features import MapSubject, TaskFeature, clearance, geom_type, pixel_extent
from scoring.render.furniture.panels import MARGIN, ScaleBar, draw_scalebar, scalebar_layout
from scoring.render.labels.labelling import draw_label, place_feature_labels
from scoring.render.labels.placement import Box, Placement, hidden_area, obstacle_for, place_box
from scoring.render.layers import draw_context, draw_task
from scoring.render.style import font, px_to_pt
from scoring.render.view import ground_per_3857


@dataclass
class InsetPlan:
    id: str  # "A", "B", "C"
    bbox: Box  # where the inset is drawn, px of the main map
    frame: Box  # what it magnifies, px of the main map
    features: list[str]
    transform: PixelTransform  # the inset's own pixel <-> EPSG:3857 affine
    magnification: float


def plan_insets(
    subject: MapSubject,
    style: dict[str, Any],
    pt: PixelTransform,
    n: int,
    obstacles: dict,
    blocked: list[Box],
) -> list[InsetPlan]:
    """Up to three insets magnifying task features too small (or too crowded) to read."""
    ist = style["insets"]
    focus, need = _inset_focus(subject, style)
    if not focus:
        return []
    groups = _group_small(subject, focus, need, ist)[:3]
    out: list[InsetPlan] = []
    space = _InsetSpace(pt, n, subject.task_epsg, shapely.union_all(list(obstacles.values())), ist)
    for k, gr in enumerate(groups):
        shown = shapely.union_all([focus[f.fid] for f in gr])
        ins = _place_inset("ABC"[k], [f.fid for f in gr], shown, max(need[f.fid] for f in gr), space, blocked)
        blocked = blocked + [ins.bbox]  # each inset is clear of the ones placed before it
        out.append(ins)
    return out


@dataclass
class _InsetSpace:
    """What a map's insets are placed in: the main map (its transform, size and task CRS), the
    task geometry they must not hide, and the inset style."""

    pt: PixelTransform
    n: int
    task_epsg: int
    task_union: Any
    ist: dict[str, Any]


def _inset_focus(subject: MapSubject, style: dict[str, Any]) -> tuple[dict[str, Any], dict[str, float]]:
    """What each inset must show, in pixels, by feature id: a tiny feature itself; a crowded
    point together with the nearest parts of its neighbours (an inset showing the point alone
    is useless); and the magnification each one needs to become readable."""
    ist = style["insets"]
    focus: dict[str, Any] = {}
    need: dict[str, float] = {}
    for f in subject.features:
        if geom_type(f.geom_px) not in ("Point", "MultiPoint"):
            ext = pixel_extent(f)
            if ext < ist["min_feature_px"]:
                focus[f.fid] = f.geom_px
                need[f.fid] = min(max(ist["readable_px"] / max(ext, 1.0), 3.0), 20.0)
        else:
            near = crowding(f, subject.features, style["task"])
            if near:
                focus[f.fid] = shapely.union_all([f.geom_px, *near])
                need[f.fid] = 3.0
    return focus, need


def _group_small(
    subject: MapSubject, focus: dict[str, Any], need: dict[str, float], ist: dict[str, Any]
) -> list[list[TaskFeature]]:
    """The features in `focus` grouped when lying close together (single-linkage, 80 px), but
    only as long as the largest inset can still give every member the magnification it needs
    (Kibera T08: three 5-px buildings 60 px apart shared one x2 inset in which they stayed
    unreadable)."""
    small = [f for f in subject.features if f.fid in focus]
    fill, biggest = ist["fill_fraction"], float(ist["max_size_px"])

    def extent(fs):
        b = shapely.union_all([focus[o.fid] for o in fs]).bounds
        return max(b[2] - b[0], b[3] - b[1], 1.0)

    groups: list[list[TaskFeature]] = []
    for f in small:
        for gr in groups:
            if any(focus[f.fid].distance(focus[o.fid]) < 80 for o in gr) and biggest * fill / extent(
                gr + [f]
            ) >= max(need[o.fid] for o in gr + [f]):
                gr.append(f)
                break
        else:
            groups.append([f])
    return groups


def _place_inset(
    inset_id: str, fids: list[str], shown: Any, mag: float, space: _InsetSpace, blocked: list[Box]
) -> InsetPlan:
    """The inset showing `shown` (features `fids`, needing magnification `mag`): its size, where
    it goes clear of `blocked`, what it frames and its own transform."""
    ist, pt, n, task_union = space.ist, space.pt, space.n, space.task_union
    pminx, pminy, pmaxx, pmaxy = shown.bounds
    # a wide cluster (a dozen POIs along an edge, Kibera M18) needs a bigger inset to
    # leave room at the magnification its members need; but an inset must not hide task
    # geometry, so the size shrinks (below the default if need be) until one fits
    ext = max(pmaxx - pminx, pmaxy - pminy)
    want = float(min(max(ist["size_px"], mag * ext / ist["fill_fraction"]), ist["max_size_px"]))
    base = float(ist["size_px"])
    sizes = ([want, (want + base) / 2] if want > base else []) + [base, 0.8 * base, 0.65 * base]
    pcx, pcy = (pminx + pmaxx) / 2, (pminy + pmaxy) / 2
    cx, cy = (float(v) for v in pt.pixel_to_3857(pcx, pcy))
    res = pt.resolution
    tries = []
    for size in sizes:
        side = ext * res / ist["fill_fraction"]
        side = max(side, ist["min_side_m"] / ground_per_3857(cx, cy))
        side = min(side, res * size * 0.5)  # an inset must magnify at least 2x
        half = side / res / 2
        frame = (pcx - half, pcy - half, pcx + half, pcy + half)
        bb = place_box(
            (size, size),
            inset_slots(n, size),
            task_union,
            blocked + [frame],
            (0.0, 0.0, float(n), float(n)),
            near=(pcx, pcy),
        )
        hidden = hidden_area(bb, task_union, blocked + [frame])
        tries.append((hidden, size, side, frame, bb))
        if hidden == 0.0:
            break
    _, size, side, frame, bb = min(tries, key=lambda t: (t[0], t[1]))
    ipt = PixelTransform.from_view(
        cx - side / 2, cy + side / 2, side / size, n, n, space.task_epsg, col0=bb[0], row0=bb[1]
    )
    return InsetPlan(inset_id, bb, frame, fids, ipt, res / ipt.resolution)


def crowding(f: TaskFeature, features: list[TaskFeature], task_style: dict[str, Any]) -> list:
    """For a point whose marker merges with another task point, or sits on another feature's
    stroke or outline (inside or outside?), the nearest points of those neighbours; else []."""
    if geom_type(f.geom_px) not in ("Point", "MultiPoint"):
        return []
    t = task_style
    r = (t["target_point_size"] if f.target else t["point_size"]) / 2.0
    near = []
    for o in features:
        if o is f:
            continue
        og = o.geom_px
        if geom_type(og) in ("Point", "MultiPoint"):
            ro = (t["target_point_size"] if o.target else t["point_size"]) / 2.0
            gap = r + ro + 4.0
        else:
            if geom_type(og) in ("Polygon", "MultiPolygon"):
                og = og.boundary
            gap = r + clearance(o, task_style) + 1.0
        if f.geom_px.distance(og) < gap:
            near.append(shapely.ops.nearest_points(f.geom_px, og)[1])
    return near


def inset_slots(n: int, size: float) -> list[tuple[float, float]]:
    """Candidate top-left corners of an inset, in order of preference."""
    m = MARGIN
    lo_x, hi_x = m, n - m - size
    lo_y, hi_y = m + 60, n - m - size - 40  # clear of the top and bottom furniture rows
    mid_x, mid_y = (n - size) / 2, (n - size) / 2
    q = [
        (lo_x, lo_y),
        (hi_x, m + 96),
        (lo_x, hi_y - 30),
        (hi_x, hi_y),
        (mid_x, m),
        (mid_x, hi_y),
        (lo_x, mid_y),
        (hi_x, mid_y),
    ]
    # then quarter points along each edge, for large insets on crowded maps
    for t in (0.25, 0.75):
        x = lo_x + t * (hi_x - lo_x)
        y = lo_y + t * (hi_y - lo_y)
        q += [(x, m), (x, hi_y), (lo_x, y), (hi_x, y)]
    return q


def draw_inset(
    canvas: MapCanvas, subject: MapSubject, context: ContextIndex | None, ins: InsetPlan
) -> dict[str, Any]:
    """Draw an inset (context, task features, labels, title, scale bar, frame); its sidecar record."""
    st = canvas.style
    bb = ins.bbox
    ipt = ins.transform
    ax = canvas.axes(bb, zorder=5)
    add_patch(
        ax,
        rectangle(
            (bb[0], bb[1]),
            bb[2] - bb[0],
            bb[3] - bb[1],
            facecolor=st["background"],
            edgecolor="none",
            zorder=0,
        ),
    )
    draw_context(ax, context, st, ipt, bb)
    geoms = {f.fid: ipt.geometry_3857_to_pixel(f.geom_3857) for f in subject.features}
    draw_task(ax, subject, geoms, st)
    labels = _draw_inset_labels(canvas, ax, subject, geoms, bb)
    _draw_inset_title(canvas, ax, ins)
    bar = _draw_inset_scalebar(canvas, ax, ins)
    add_patch(
        ax,
        rectangle(
            (bb[0] + 1, bb[1] + 1),
            bb[2] - bb[0] - 2,
            bb[3] - bb[1] - 2,
            facecolor="none",
            edgecolor=st["insets"]["frame_color"],
            lw=px_to_pt(2.0),
            zorder=60,
        ),
    )
    return {
        "id": ins.id,
        "bbox": [round(v, 2) for v in bb],
        "source_frame": [round(v, 2) for v in ins.frame],
        "features": ins.features,
        "magnification": round(ins.magnification, 4),
        "geotransform": list(ipt.geotransform),
        "ground_pixel_size_m": round(ipt.ground_pixel_size((bb[0] + bb[2]) / 2, (bb[1] + bb[3]) / 2), 6),
        "scalebar_m": bar.length_m,
        "labels": {k: v.to_json() for k, v in labels.items()},
    }


def _draw_inset_labels(
    canvas: MapCanvas, ax, subject: MapSubject, geoms: dict[str, Any], bb: Box
) -> dict[str, Placement]:
    """The labels of the task features showing in the inset at `bb` (`geoms`: in its pixels),
    placed clear of its title; their placements by feature id."""
    st = canvas.style
    inner = (bb[0] + 8, bb[1] + 40, bb[2] - 8, bb[3] - 8)
    vis = [f for f in subject.features if geoms[f.fid].intersects(box(*inner))]
    saved = {f.fid: f.geom_px for f in vis}
    try:
        for f in vis:  # label sizes and clearances use geom_px
            f.geom_px = shapely.clip_by_rect(geoms[f.fid], *bb)
        clear = {f.fid: clearance(f, st["task"]) for f in vis}
        obst = {f.fid: obstacle_for(f.geom_px, clear[f.fid]) for f in vis}
        title = (bb[0], bb[1], bb[0] + 120, bb[1] + 34)
        labels = place_feature_labels(canvas, vis, clear, inner, obst, [title])
        for f in vis:
            draw_label(canvas, ax, f, labels[f.fid], zbase=40)
    finally:
        for f in vis:
            f.geom_px = saved[f.fid]
    return labels


def _draw_inset_title(canvas: MapCanvas, ax, ins: InsetPlan) -> None:
    """The inset's letter and magnification, on a panel in its top-left corner."""
    bb = ins.bbox
    canvas.panel(ax, (bb[0], bb[1], bb[0] + 120, bb[1] + 34), z=50)
    canvas.text(
        ax,
        bb[0] + 10,
        bb[1] + 17,
        f"{ins.id}  ×{ins.magnification:.0f}",
        font(12, bold=True),
        "inset_title",
        color="#222222",
        va="center_baseline",
        zorder=51,
    )


def _draw_inset_scalebar(canvas: MapCanvas, ax, ins: InsetPlan) -> ScaleBar:
    """The inset's own scale bar, in its bottom-left corner; its layout."""
    bb = ins.bbox
    ground = ins.transform.ground_pixel_size((bb[0] + bb[2]) / 2, (bb[1] + bb[3]) / 2)
    bar = scalebar_layout(canvas, ground, max_px=110)
    sbw, sbh = bar.size
    sbb = (bb[0] + 8, bb[3] - 8 - sbh, bb[0] + 8 + sbw, bb[3] - 8)
    draw_scalebar(canvas, ax, sbb, bar, z=50, role="inset_scalebar")
    return bar


def frame_letter_box(canvas: MapCanvas, ins: InsetPlan, task_union, n: int) -> Box:
    """Where the letter naming an inset's frame goes on the main map: beside one of the frame's
    corners, outside the frame, on no drawn task geometry (a large polygon's outline, any other
    feature whole; the least covering spot if none is free)."""
    w, h = canvas.measure(ins.id, font(11, bold=True))
    w, h = w + 2, h + 2
    fx0, fy0, fx1, fy1 = ins.frame
    spots = []
    for d in (3.0, 12.0, 24.0, 40.0, 64.0):  # ever farther from the frame, all around it
        spots += [
            (fx0, fy0 - d - h),  # above the top-left corner (the usual place)
            (fx1 - w, fy0 - d - h),  # above the top-right corner
            (fx0, fy1 + d),  # below the bottom-left corner
            (fx1 - w, fy1 + d),  # below the bottom-right corner
            (fx0 - d - w, fy0),  # left of the top-left corner
            (fx1 + d, fy0),  # right of the top-right corner
            (fx0 - d - w, fy1 - h),  # left of the bottom-left corner
            (fx1 + d, fy1 - h),  # right of the bottom-right corner
        ]

    def covered(x: float, y: float) -> float:
        b = box(x - 1, y - 1, x + w + 1, y + h + 1)
        off = 0 if (x >= 0 and y >= 0 and x + w <= n and y + h <= n) else 1
        return (b.intersection(task_union).area if not task_union.is_empty else 0.0) + 1e6 * off

    best = min(range(len(spots)), key=lambda i: (covered(*spots[i]), i))
    x, y = spots[best]
    return (x, y, x + w, y + h)


def draw_inset_frame(canvas: MapCanvas, ax, ins: InsetPlan, task_union, n: int) -> Box:
    """The dashed frame of what an inset magnifies, and its letter beside it (off task geometry)."""
    st = canvas.style
    fx0, fy0, fx1, fy1 = ins.frame
    add_patch(
        ax,
        rectangle(
            (fx0, fy0),
            fx1 - fx0,
            fy1 - fy0,
            facecolor="none",
            edgecolor=st["insets"]["frame_color"],
            lw=px_to_pt(1.6),
            ls=(0, (3, 2)),
            zorder=30,
        ),
    )
    lb = frame_letter_box(canvas, ins, task_union, n)
    canvas.text(
        ax,
        lb[0] + 1,
        lb[3] - 1,
        ins.id,
        font(11, bold=True),
        "inset_frame",
        color="#222222",
        ha="left",
        va="bottom",
        zorder=30,
    )
    return lb
