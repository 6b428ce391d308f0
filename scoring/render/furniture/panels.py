"""Map furniture: scale bar, north arrow, attribute cards and where panels may go."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scoring.render.backend.artists import polygon, rectangle
from scoring.render.backend.canvas import MapCanvas, add_patch
from scoring.render.features import MapSubject, TaskFeature
from scoring.render.labels.placement import Box
from scoring.render.style import font, px_to_pt

ATTRIBUTION = "© OpenStreetMap contributors"
MARGIN = 16.0  # px between furniture and the image edge


@dataclass
class ScaleBar:
    length_m: float
    length_px: float
    label: str
    font: Any
    size: tuple[float, float]  # of its panel, px


@dataclass
class AttributeCard:
    feature: TaskFeature
    text: str
    bbox: Box
    attributes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "feature": self.feature.fid,
            "text": self.text,
            "attributes": self.attributes,
            "bbox": [round(v, 2) for v in self.bbox],
        }


def fmt_value(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


def fmt_length(m: float) -> str:
    if m >= 1000:
        km = m / 1000.0
        return f"{km:g} km"
    return f"{m:g} m"


def nice_length(target_m: float) -> float:
    exp = math.floor(math.log10(target_m))
    best = None
    for e in (exp - 1, exp, exp + 1):
        for m in (1, 2, 5):
            v = m * 10.0**e
            if v <= target_m * 1.3 and (best is None or v > best):
                best = v
    return best or 10.0**exp


def scalebar_layout(canvas: MapCanvas, ground_px: float, max_px: float = 240.0) -> ScaleBar:
    """A scale bar of a round ground length, at most `max_px` long."""
    length = nice_length(max_px * ground_px * 0.85)
    bar_px = length / ground_px
    while bar_px > max_px:
        length = nice_length(length * 0.6)
        bar_px = length / ground_px
    lab = fmt_length(length)
    prop = font(canvas.style["furniture"]["scalebar_size_pt"])
    tw, th = canvas.measure(lab, prop)
    w = bar_px + max(tw, 10) / 2 + 28
    h = th + 34
    return ScaleBar(length, bar_px, lab, prop, (w, h))


def draw_scalebar(canvas: MapCanvas, ax, bbox: Box, bar: ScaleBar, z=50.0, role="scalebar") -> None:
    fs = canvas.style["furniture"]
    canvas.panel(ax, bbox, z)
    x0, y0, x1, y1 = bbox
    bx, by = x0 + 12, y1 - 12
    seg = bar.length_px / 4
    for i in range(4):
        add_patch(
            ax,
            rectangle(
                (bx + i * seg, by - 7),
                seg,
                7,
                facecolor="#222222" if i % 2 == 0 else "#ffffff",
                edgecolor="#222222",
                lw=px_to_pt(1.2),
                zorder=z + 1,
            ),
        )
    canvas.text(
        ax, bx, by - 12, "0", bar.font, role, color=fs["text"], ha="center", va="baseline", zorder=z + 2
    )
    canvas.text(
        ax,
        bx + bar.length_px,
        by - 12,
        bar.label,
        bar.font,
        role,
        color=fs["text"],
        ha="center",
        va="baseline",
        zorder=z + 2,
    )


def draw_north(canvas: MapCanvas, ax, bbox: Box, z=50.0) -> None:
    x0, y0, x1, y1 = bbox
    cx = (x0 + x1) / 2
    canvas.panel(ax, bbox, z)
    top, bot = y0 + 30, y1 - 10
    mid = bot - 10
    add_patch(
        ax,
        polygon(
            [(cx, top), (cx - 13, bot), (cx, mid)],
            closed=True,
            facecolor="#222222",
            edgecolor="#222222",
            lw=px_to_pt(1.2),
            zorder=z + 1,
        ),
    )
    add_patch(
        ax,
        polygon(
            [(cx, top), (cx + 13, bot), (cx, mid)],
            closed=True,
            facecolor="#ffffff",
            edgecolor="#222222",
            lw=px_to_pt(1.2),
            zorder=z + 1,
        ),
    )
    canvas.text(
        ax,
        cx,
        y0 + 15,
        "N",
        font(13, bold=True),
        "north_arrow",
        color="#222222",
        ha="center",
        va="center_baseline",
        zorder=z + 2,
    )


def card_lines(subject: MapSubject) -> list[tuple[TaskFeature, str]]:
    """One line per feature carrying a shown attribute (every feature when none does)."""
    if not subject.attributes:
        return []
    has = [f for f in subject.features if any(a in f.props for a in subject.attributes)]
    out = []
    for f in has or subject.features:
        # "not set" is the questions' own wording for an absent attribute ("`layer` if set")
        vals = ", ".join(
            f"{a} {fmt_value(f.props[a]) if a in f.props else 'not set'}" for a in subject.attributes
        )
        out.append((f, f"{f.fid}: {vals}"))
    return out


def draw_card(canvas: MapCanvas, ax, card: AttributeCard) -> None:
    f = card.feature
    x0, y0, x1, y1 = card.bbox
    canvas.panel(ax, card.bbox, z=50, edge=f.color)
    add_patch(ax, rectangle((x0, y0), 8, y1 - y0, facecolor=f.color, edgecolor="none", zorder=51))
    canvas.text(
        ax,
        x0 + 18,
        (y0 + y1) / 2,
        card.text,
        font(canvas.style["furniture"]["card_size_pt"]),
        "attribute_card",
        color="#111111",
        va="center_baseline",
        zorder=52,
    )


def furniture_slots(n: int, size, north: Box, scalebar: Box, attribution: Box) -> list[tuple[float, float]]:
    """Candidate top-left corners of a panel of `size`, in order of preference."""
    w, h = size
    m = MARGIN
    return [
        (m, m),  # top left
        (n - m - w, north[3] + 8),  # top right, under the north arrow
        (m, scalebar[1] - 8 - h),  # bottom left, over the scale bar
        (n - m - w, attribution[1] - 8 - h),  # bottom right, over the attribution
        (n - m - w - north[2] + north[0] - 12, m),  # top right, left of the north arrow
        ((n - w) / 2, m),
        ((n - w) / 2, n - m - h),  # top / bottom middle
        (m, (n - h) / 2),
        (n - m - w, (n - h) / 2),  # left / right middle
    ]
