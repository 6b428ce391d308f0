"""The matplotlib figure of one map, drawn in pixel coordinates (x = column, y = row from the
top-left corner), and the log of every text it carries (recorded in the sidecar)."""

from __future__ import annotations

from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text

import scoring.render.style  # noqa: F401 - first: selects Agg, silences Debian's stray mpl_toolkits
from scoring.render.labels import Box
from scoring.render.png import encode_rgb_png, rgba_to_rgb_bytes
from scoring.render.style import DPI, px_to_pt


class MapCanvas:
    def __init__(self, size_px: int, style: dict[str, Any]):
        self.n = size_px
        self.style = style
        self.texts: list[dict[str, Any]] = []
        self.fig = Figure(figsize=(size_px / DPI, size_px / DPI), dpi=DPI, facecolor=style["background"])
        self.agg = FigureCanvasAgg(self.fig)
        self.renderer = self.agg.get_renderer()

    def axes(self, bbox: Box, zorder: float):
        """Axes covering `bbox` (pixels) whose data coordinates are the image's pixels."""
        x0, y0, x1, y1 = bbox
        n = self.n
        ax = self.fig.add_axes((x0 / n, 1.0 - y1 / n, (x1 - x0) / n, (y1 - y0) / n), zorder=zorder)
        ax.set_xlim(x0, x1)
        ax.set_ylim(y1, y0)
        ax.set_autoscale_on(False)
        ax.set_axis_off()
        return ax

    def measure(self, s: str, prop) -> tuple[float, float]:
        """(width, height) in pixels of `s` set in `prop`."""
        t = Text(0, 0, s, fontproperties=prop)
        t.set_figure(self.fig)
        bb = t.get_window_extent(self.renderer)
        return float(bb.width), float(bb.height)

    def text(self, ax, x, y, s, prop, role, color="#222222", ha="left", va="center", **kw):
        t = ax.text(
            x,
            y,
            s,
            fontproperties=prop,
            color=color,
            ha=ha,
            va=va,
            zorder=kw.pop("zorder", 40),
            clip_on=False,
            **kw,
        )
        self.texts.append({"role": role, "text": s, "anchor": [round(float(x), 2), round(float(y), 2)]})
        return t

    def panel(self, ax, bbox: Box, z: float = 50.0, edge: str | None = None) -> None:
        """The translucent background of a piece of map furniture."""
        fs = self.style["furniture"]
        x0, y0, x1, y1 = bbox
        add_patch(
            ax,
            Rectangle(
                (x0, y0),
                x1 - x0,
                y1 - y0,
                facecolor=matplotlib.colors.to_rgba(fs["panel_face"], fs["panel_alpha"]),
                edgecolor=edge or fs["panel_edge"],
                lw=px_to_pt(1.2),
                zorder=z,
            ),
        )

    def rasterise(self) -> bytes:
        """The figure as PNG bytes (RGB, fixed compression: same figure, same bytes)."""
        self.agg.draw()
        rgb = rgba_to_rgb_bytes(self.agg.buffer_rgba(), self.n, self.n)
        return encode_rgb_png(rgb, self.n, self.n)

    def close(self) -> None:
        self.fig.clear()


def add_patch(ax, patch):
    """ax.add_patch without its data-limit update (the axes limits are fixed: autoscale is
    off), which costs more than drawing the patch."""
    return ax.add_artist(patch)
