"""The map legend: its rows, its layout in one or more columns, its placement and drawing."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import matplotlib

from scoring.render.backend.artists import dots, line2d, rectangle
from scoring.render.backend.canvas import MapCanvas, add_patch
from scoring.render.features import MapSubject, TaskFeature, geom_type
from scoring.render.labels.placement import Box, hidden_area, place_box
from scoring.render.layers import crossings
from scoring.render.style import font, px_to_pt

LegendRow = tuple[str, str, Any]  # (kind, text, task feature or context pool)


@dataclass
class LegendLayout:
    size: tuple[float, float]  # of the panel, px
    font: Any
    header_font: Any
    row_height: float
    placed: list[tuple]  # (kind, text, object, x offset, line) per row


def legend_rows(subject: MapSubject, counts: dict[str, int]) -> list[LegendRow]:
    """(kind, text, object) rows: section headers, task features, the crossing mark, context pools."""
    rows: list[LegendRow] = [("header", "Task features", None)]
    for f in subject.features:
        suffix = "  (edit target)" if (subject.is_edit and f.target) else ""
        rows.append(("task", f"{f.fid}  {f.kind}{suffix}", f))
    if subject.levels and len(crossings(subject.features, {f.fid: f.geom_px for f in subject.features})):
        rows.append(("crossing", "crossing (level not drawn)", None))
    ctx = [
        ("road", "road"),
        ("building", "building"),
        ("area", "land use / area"),
        ("water", "water"),
        ("poi", "point of interest"),
    ]
    present = [(p, lab) for p, lab in ctx if counts.get(p)]
    if present:
        rows.append(("header", "OpenStreetMap context", None))
        rows.extend(("context", lab, p) for p, lab in present)
    return rows


def legend_layout(canvas: MapCanvas, rows: list[LegendRow], ncols: int = 1) -> LegendLayout:
    """Size and row positions of the legend: each section header spans the panel, the
    section's entries fill `ncols` columns top to bottom (long scenes, e.g. M18 with 17
    features, would otherwise need a panel half the map tall)."""
    fs = canvas.style["furniture"]
    prop, hprop = font(fs["legend_size_pt"]), font(fs["legend_size_pt"], bold=True)
    row_h = 23.0
    entry_w = max([canvas.measure(t, prop)[0] for k, t, _ in rows if k != "header"] or [0.0])
    head_w = max([canvas.measure(t, hprop)[0] for k, t, _ in rows if k == "header"] or [0.0])
    col_w = 34 + 8 + entry_w + 18
    sections: list[list] = []
    for r in rows:
        if r[0] == "header" or not sections:
            sections.append([r])
        else:
            sections[-1].append(r)
    placed, line = [], 0
    for sec in sections:
        head, items = (sec[0], sec[1:]) if sec[0][0] == "header" else (None, sec)
        if head:
            placed.append((*head, 0.0, line))
            line += 1
        per = -(-len(items) // ncols) if items else 0
        for i, r in enumerate(items):
            placed.append((*r, (i // per) * col_w, line + i % per))
        line += per
    w = 14 + max(head_w, ncols * col_w - 18) + 14
    h = 12 + row_h * line + 8
    return LegendLayout((w, h), prop, hprop, row_h, placed)


def place_legend(
    canvas: MapCanvas,
    rows: list[LegendRow],
    slots_for,
    task_union,
    blocked: list[Box],
    full: Box,
) -> tuple[Box, LegendLayout]:
    """Where the legend goes and in how many columns: one unless that panel would hide task
    geometry and a wider, shorter one does not. `slots_for(size)` lists candidate corners."""
    options = []
    for ncols in (1, 2, 3):
        if ncols > 1 and len(rows) < 10:
            break
        layout = legend_layout(canvas, rows, ncols)
        bb = place_box(layout.size, slots_for(layout.size), task_union, blocked, full)
        hidden = hidden_area(bb, task_union, blocked)
        options.append((hidden, ncols, bb, layout))
        if hidden == 0.0:
            break
    _, _, bbox, layout = min(options, key=lambda o: (o[0], o[1]))
    return bbox, layout


def draw_legend(canvas: MapCanvas, ax, bbox: Box, layout: LegendLayout, z=50.0) -> None:
    """The legend panel at `bbox` and its rows: headers, then each entry's symbol and text."""
    prop, hprop, row_h = layout.font, layout.header_font, layout.row_height
    canvas.panel(ax, bbox, z)
    x0, y0, _, _ = bbox
    for kind, label, obj, dx, line in layout.placed:
        y = y0 + 12 + row_h / 2 + line * row_h
        sx = x0 + 14 + dx  # where the entry's symbol starts
        if kind == "header":
            canvas.text(
                ax,
                x0 + 12,
                y,
                label,
                hprop,
                "legend",
                color="#222222",
                va="center_baseline",
                zorder=z + 2,
            )
            continue
        if kind == "crossing":
            _draw_crossing_symbol(ax, canvas.style["task"]["crossing"], sx, y, z)
        elif kind == "task":
            _draw_task_symbol(ax, obj, canvas.style["task"], sx, y, z)
        else:
            _draw_context_symbol(ax, obj, canvas.style["context"], sx, y, z)
        canvas.text(
            ax, sx + 42, y, label, prop, "legend", color="#222222", va="center_baseline", zorder=z + 2
        )


def _draw_crossing_symbol(ax, cst: dict[str, Any], sx: float, y: float, z: float) -> None:
    """The disc drawn where task roads cross, a little smaller than on the map."""
    ax.add_line(
        dots(
            [sx + 17],
            [y],
            size=px_to_pt(cst["size"] - 2),
            face=cst["face"],
            edge=cst["edge"],
            edge_width=px_to_pt(cst["edge_width"]),
            zorder=z + 1,
        )
    )


def _draw_task_symbol(ax, f: TaskFeature, t: dict[str, Any], sx: float, y: float, z: float) -> None:
    """A task feature's symbol by its geometry type: a dot, a stroke or a tinted box."""
    gt = geom_type(f.geom_px)
    if gt in ("Point", "MultiPoint"):
        ax.add_line(
            dots(
                [sx + 17],
                [y],
                size=px_to_pt(14),
                face=f.color,
                edge="#ffffff",
                edge_width=px_to_pt(2),
                zorder=z + 1,
            )
        )
    elif gt in ("LineString", "MultiLineString"):
        ax.add_line(
            line2d(
                [sx + 2, sx + 32],
                [y, y],
                color=f.color,
                lw=px_to_pt(6 if not f.target else 8),
                solid_capstyle="round",
                zorder=z + 1,
            )
        )
    else:
        face = matplotlib.colors.to_rgba(f.color, t["polygon_alpha"].get(f.kind, 0.3))
        _symbol_box(ax, sx, y, z, face, f.color, 2.5)


def _draw_context_symbol(ax, pool: str, c: dict[str, Any], sx: float, y: float, z: float) -> None:
    """A context pool's symbol: a cased road, a POI dot, or a box of the pool's fill."""
    if pool == "road":
        for color, width_px, dz in ((c["road_casing"], 10, 1), (c["road_fill"], 7, 1.1)):
            ax.add_line(
                line2d(
                    [sx + 2, sx + 32],
                    [y, y],
                    color=color,
                    lw=px_to_pt(width_px),
                    solid_capstyle="butt",
                    zorder=z + dz,
                )
            )
    elif pool == "poi":
        ax.add_line(
            dots(
                [sx + 17],
                [y],
                size=px_to_pt(c["poi"]["size"] + 1),
                face=c["poi"]["face"],
                edge=c["poi"]["edge"],
                zorder=z + 1,
            )
        )
    else:
        edge = c[pool]["edge"] if c[pool]["edge"] != "none" else c[pool]["face"]
        _symbol_box(ax, sx, y, z, c[pool]["face"], edge, 1.2)


def _symbol_box(ax, sx: float, y: float, z: float, face: Any, edge: Any, edge_px: float) -> None:
    """The 26 x 16 px box an area's legend row shows."""
    style = {"facecolor": face, "edgecolor": edge, "lw": px_to_pt(edge_px), "zorder": z + 1}
    add_patch(ax, rectangle((sx + 4, y - 8), 26, 16, **style))
