"""Feature id labels: their size, their placement (geometry in labels.py) and their drawing."""

from __future__ import annotations

from scoring.render.backend.artists import line2d, rectangle
from scoring.render.backend.canvas import MapCanvas, add_patch
from scoring.render.features import TaskFeature, fid_key
from scoring.render.labels.placement import Box, LabelItem, Placement, is_large_polygon, place_labels
from scoring.render.style import font, px_to_pt


def label_font(canvas: MapCanvas):
    return font(canvas.style["labels"]["size_pt"], bold=True)


def label_size(canvas: MapCanvas, f: TaskFeature) -> tuple[float, float]:
    w, h = canvas.measure(f.fid, label_font(canvas))
    pad = canvas.style["labels"]["pad_px"] + canvas.style["labels"]["border_px"]
    return w + 2 * pad + 2, h + 2 * pad - 2


def place_feature_labels(
    canvas: MapCanvas,
    features: list[TaskFeature],
    clearances: dict[str, float],
    bounds: Box,
    obstacles: dict,
    blocked: list[Box],
) -> dict[str, Placement]:
    """Label placements of `features` (target first, then in id order) inside `bounds`; large
    polygons may carry their own label over their interior."""
    items = [
        LabelItem(f.fid, f.geom_px, label_size(canvas, f), clearances[f.fid])
        for f in sorted(features, key=lambda f: (not f.target, fid_key(f.fid)))
    ]
    soft = {f.fid: f.geom_px for f in features if is_large_polygon(f.geom_px)}
    return place_labels(items, bounds, obstacles, blocked, soft)


def draw_label(canvas: MapCanvas, ax, f: TaskFeature, pl: Placement, zbase: float = 40.0) -> None:
    ls = canvas.style["labels"]
    x0, y0, x1, y1 = pl.bbox
    bw = ls["border_px"]
    if pl.leader:
        (ax_, ay_), (bx_, by_) = pl.leader
        ax.add_line(
            line2d(
                [ax_, bx_],
                [ay_, by_],
                color="#ffffff",
                lw=px_to_pt(ls["leader_width"] + 2.5),
                solid_capstyle="round",
                zorder=zbase - 31,
            )
        )
        ax.add_line(
            line2d(
                [ax_, bx_],
                [ay_, by_],
                color=ls["leader_color"],
                lw=px_to_pt(ls["leader_width"]),
                solid_capstyle="round",
                zorder=zbase - 30.5,
            )
        )
    face = f.color if f.target else "#ffffff"
    ink = "#ffffff" if f.target else "#111111"
    add_patch(
        ax,
        rectangle(
            (x0 + bw / 2, y0 + bw / 2),
            (x1 - x0) - bw,
            (y1 - y0) - bw,
            facecolor=face,
            edgecolor=f.color,
            lw=px_to_pt(bw),
            joinstyle="miter",
            zorder=zbase,
        ),
    )
    canvas.text(
        ax,
        (x0 + x1) / 2,
        (y0 + y1) / 2,
        f.fid,
        label_font(canvas),
        "label",
        color=ink,
        ha="center",
        va="center_baseline",
        zorder=zbase + 0.1,
    )
