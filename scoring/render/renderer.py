"""Render one benchmark instance as an annotated, georeferenced 1536 x 1536 PNG (matplotlib/Agg).

Everything is drawn in PIXEL coordinates (x = column, y = row, origin at the top-left corner of
the image): geometries go task CRS -> EPSG:4326 -> EPSG:3857 (pyproj) -> pixels (affine). That
makes every recorded bbox exact and independent of matplotlib's transforms.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import shapely
from shapely.geometry import box

from scoring.errors import OutputError
from scoring.formats.records import Instance
from scoring.render.backend.canvas import MapCanvas
from scoring.render.context import ContextIndex
from scoring.render.features import MapSubject, assign_colors, clearance
from scoring.render.furniture.insets import InsetPlan, draw_inset, draw_inset_frame, plan_insets
from scoring.render.furniture.legend import LegendLayout, draw_legend, legend_rows, place_legend
from scoring.render.furniture.panels import (
    ATTRIBUTION,
    MARGIN,
    AttributeCard,
    ScaleBar,
    card_lines,
    draw_card,
    draw_north,
    draw_scalebar,
    furniture_slots,
    scalebar_layout,
)
from scoring.render.labels.labelling import draw_label, place_feature_labels
from scoring.render.labels.placement import Placement, obstacle_for, place_box
from scoring.render.layers import draw_context, draw_task
from scoring.render.sidecar.records import sidecar_record, write_map_files
from scoring.render.style import font, load_style, pinned_rc_context
from scoring.render.view import fix_view

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in pixels, y down


@dataclass
class _MapLayout:
    """Where the main map's parts go (pixels), fixed before any of them is drawn."""

    ground: float  # metres a pixel at the centre
    task_union: Any  # the task features with their clearances
    north: Box
    scalebar: Box
    bar: ScaleBar
    attribution: Box
    attribution_font: Any
    insets: list[InsetPlan]
    counts: dict[str, int]  # context features drawn, by pool
    legend: Box
    legend_layout: LegendLayout
    legend_context: list[str]  # the context pools the legend lists
    cards: list[AttributeCard]
    labels: dict[str, Placement]


class MapRenderer:
    """One instance's map: `prepare()` fixes the view and colours, `render()` draws and records."""

    def __init__(self, instance: Instance, context: ContextIndex | None, style: dict[str, Any]):
        self.context = context
        self.style = style
        self.n = int(style["image_px"])
        self.subject = MapSubject.of(instance, context.task_epsg if context is not None else None)
        self.instance = instance
        self.framed: list[str] = []
        self.canvas: MapCanvas | None = None

    def prepare(self) -> MapCanvas:
        st = self.style
        subject = self.subject
        # framed on the scene and, for an edit, where the reference edit puts the target
        self.pt, self.framed = fix_view(subject, self.instance, st)
        for f in subject.features:
            f.target = f.fid == subject.target_id if subject.is_edit else f.fid == "F0"
        assign_colors(subject.features, st["task"]["palette"], st["task"]["target_color"])
        self.canvas = MapCanvas(self.n, st)
        return self.canvas

    def render(self) -> tuple[bytes, dict[str, Any]]:
        canvas = self.prepare()
        n = self.n
        ax = canvas.axes((0.0, 0.0, float(n), float(n)), zorder=0)
        lay = self._lay_out(canvas, ax)
        attribution_text, inset_records = self._draw(canvas, ax, lay)
        png = canvas.rasterise()
        record = sidecar_record(
            self.subject,
            self.pt,
            n,
            labels=lay.labels,
            insets=inset_records,
            cards=lay.cards,
            legend=lay.legend,
            legend_context=lay.legend_context,
            north=lay.north,
            scalebar=lay.scalebar,
            bar=lay.bar,
            attribution=lay.attribution,
            attribution_text_bbox=attribution_text.get_window_extent(canvas.renderer),
            counts=lay.counts,
            ground=lay.ground,
            texts=canvas.texts,
        )
        record["frame"] = {"framed": self.framed}  # the rule: the benchmark manifest's maps.frame
        return png, record

    def _lay_out(self, canvas: MapCanvas, ax: Any) -> _MapLayout:
        """Where the furniture, insets, legend, cards and labels go, each clear of the task and of
        what was placed before it. Draws the context on `ax` too: the legend lists its pools."""
        st, subject, n = self.style, self.subject, self.n
        features = subject.features
        full = (0.0, 0.0, float(n), float(n))
        ground = self.pt.ground_pixel_size()
        clear = {f.fid: clearance(f, st["task"]) for f in features}
        obstacles = {f.fid: obstacle_for(f.geom_px, clear[f.fid]) for f in features}
        task_union = shapely.union_all(list(obstacles.values()))

        north, scalebar, bar, attribution, a_prop = self._fixed_furniture(canvas, ground)
        blocked = [north, scalebar, attribution]

        def slots_for(size):
            return furniture_slots(n, size, north, scalebar, attribution)

        # insets for task features too small to read
        insets = plan_insets(subject, st, self.pt, n, obstacles, blocked)
        for ins in insets:
            blocked.append(ins.bbox)

        # legend and attribute cards
        counts = draw_context(ax, self.context, st, self.pt, full)
        rows = legend_rows(subject, counts)
        legend_context = [obj for kind, _, obj in rows if kind == "context"]
        legend, legend_layout = place_legend(canvas, rows, slots_for, task_union, blocked, full)
        blocked.append(legend)
        cards = self._cards(canvas, slots_for, task_union, blocked)

        # frames of insets are obstacles for labels too (their outline only)
        label_obstacles = dict(obstacles)
        for ins in insets:
            label_obstacles["__frame_" + ins.id] = box(*ins.frame).boundary.buffer(3)
        labels = place_feature_labels(
            canvas, features, clear, (6.0, 6.0, n - 6.0, n - 6.0), label_obstacles, blocked
        )
        return _MapLayout(
            ground, task_union, north, scalebar, bar, attribution, a_prop, insets, counts,
            legend, legend_layout, legend_context, cards, labels,
        )  # fmt: skip

    def _draw(self, canvas: MapCanvas, ax: Any, lay: _MapLayout) -> tuple[Any, list[dict[str, Any]]]:
        """Draw the main map over its context, as laid out, then the insets; (the attribution's
        text artist, the insets' sidecar records)."""
        subject, n = self.subject, self.n
        features = subject.features
        draw_task(ax, subject, {f.fid: f.geom_px for f in features}, self.style)
        for f in features:
            draw_label(canvas, ax, f, lay.labels[f.fid])
        letter_boxes = {ins.id: draw_inset_frame(canvas, ax, ins, lay.task_union, n) for ins in lay.insets}
        draw_north(canvas, ax, lay.north)
        draw_scalebar(canvas, ax, lay.scalebar, lay.bar)
        draw_legend(canvas, ax, lay.legend, lay.legend_layout)
        for card in lay.cards:
            draw_card(canvas, ax, card)
        attribution = lay.attribution
        attribution_text = canvas.text(
            ax, attribution[2] - 6, (attribution[1] + attribution[3]) / 2, ATTRIBUTION, lay.attribution_font,
            "attribution", color="#333333", ha="right", va="center_baseline", zorder=60,
        )  # fmt: skip
        canvas.panel(ax, attribution, z=59)
        inset_records = [draw_inset(canvas, subject, self.context, ins) for ins in lay.insets]
        for rec in inset_records:
            rec["frame_letter_bbox"] = [round(v, 2) for v in letter_boxes[rec["id"]]]
        return attribution_text, inset_records

    def _fixed_furniture(self, canvas: MapCanvas, ground: float) -> tuple[Box, Box, ScaleBar, Box, Any]:
        """Where the fixed furniture goes: north arrow (top right), scale bar (bottom left),
        attribution (bottom right); (north, scale bar, its layout, attribution, its font)."""
        n, st = self.n, self.style
        north = (n - MARGIN - 46, MARGIN, n - MARGIN, MARGIN + 80)
        bar = scalebar_layout(canvas, ground)
        sbw, sbh = bar.size
        scalebar = (MARGIN, n - MARGIN - sbh, MARGIN + sbw, n - MARGIN)
        a_prop = font(st["furniture"]["attribution_size_pt"])
        aw, ah = canvas.measure(ATTRIBUTION, a_prop)
        attribution = (n - 6 - aw - 12, n - 6 - ah - 8, n - 6, n - 6)
        return north, scalebar, bar, attribution, a_prop

    def _cards(
        self, canvas: MapCanvas, slots_for: Any, task_union: Any, blocked: list[Box]
    ) -> list[AttributeCard]:
        """The attribute cards, stacked in one panel placed clear of the task and of `blocked`
        (which then holds the panel too)."""
        subject, n = self.subject, self.n
        lines = card_lines(subject)
        if not lines:
            return []
        cprop = font(self.style["furniture"]["card_size_pt"])
        sizes = [canvas.measure(s, cprop) for _, s in lines]
        cw = max(w for w, _ in sizes) + 30
        ch_each = max(h for _, h in sizes) + 14
        gap = 6
        ch = len(lines) * ch_each + (len(lines) - 1) * gap
        panel = place_box((cw, ch), slots_for((cw, ch)), task_union, blocked, (0.0, 0.0, float(n), float(n)))
        blocked.append(panel)
        cards = []
        for i, (f, s) in enumerate(lines):
            y0 = panel[1] + i * (ch_each + gap)
            cards.append(
                AttributeCard(f, s, (panel[0], y0, panel[2], y0 + ch_each), list(subject.attributes))
            )
        return cards


def render_map(
    instance: Instance, context_index: ContextIndex | None, style: dict[str, Any] | None = None
) -> tuple[bytes, dict[str, Any]]:
    """(PNG bytes, sidecar record) for one instance; touches no files."""
    style = style or load_style()
    with pinned_rc_context():
        m = MapRenderer(instance, context_index, style)
        try:
            return m.render()
        finally:
            if m.canvas is not None:
                m.canvas.close()


def render_instance(
    instance: Instance,
    context_index: ContextIndex | None,
    out_dir: str | Path,
    style: dict[str, Any] | None = None,
) -> dict[str, Path]:
    """Render one instance into out_dir: <id>.png, <id>.json (sidecar), <id>.pgw, <id>.png.aux.xml.

    Pure function of (instance, context, style, renderer version): same inputs -> same bytes.
    The PNG is written last, so a complete PNG implies complete companions."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {out_dir}: {exc.strerror}") from None
    png, record = render_map(instance, context_index, style)
    return write_map_files(out_dir, png, record)
