"""The matplotlib figure of one map, drawn in pixel coordinates (x = column, y = row from the
top-left corner), and the log of every text it carries (recorded in the sidecar)."""

from __future__ import annotations

import threading
from typing import Any

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.text import Text
from matplotlib.transforms import (
    Bbox,
    BboxTransformFrom,
    BboxTransformTo,
    IdentityTransform,
    TransformedBbox,
    TransformWrapper,
)

import scoring.render.style  # noqa: F401 - first: selects Agg, silences Debian's stray mpl_toolkits
from scoring.render.labels import Box
from scoring.render.png import encode_rgb_png, rgba_to_rgb_bytes
from scoring.render.style import DPI, px_to_pt

# Layers draw in their order of creation as axes did (axes zorder 0, insets 5): each one's
# artists are lifted above every artist of the layers before it.
LAYER_Z_STEP = 1000.0
# Text extents by (text, font file, size): fonts and DPI are fixed, so they hold for every map.
_EXTENTS: dict[tuple[str, str, float], tuple[float, float]] = {}
_EXTENTS_LOCK = threading.Lock()


class PixelLayer:
    """The part of a matplotlib Axes the map needs, without the Axes: data coordinates are image
    pixels and artists are clipped to the layer's box, through the very transforms an Axes
    builds (same pixels), but no ticks, spines or titles are built (10 ms an axes, for none
    drawn). Artists go straight onto the figure."""

    def __init__(self, fig: Figure, bbox: Box, n: int, zorder: float):
        x0, y0, x1, y1 = bbox
        self.figure = fig
        position = Bbox.from_bounds(x0 / n, 1.0 - y1 / n, (x1 - x0) / n, (y1 - y0) / n)
        self.bbox = TransformedBbox(position, fig.transSubfigure)
        trans_axes = BboxTransformTo(self.bbox)
        trans_scale = TransformWrapper(IdentityTransform())
        view = Bbox([[x0, y1], [x1, y0]])  # x limits (x0, x1), y limits (y1, y0): rows grow down
        self.transData = trans_scale + (BboxTransformFrom(TransformedBbox(view, trans_scale)) + trans_axes)
        # what Artist.set_clip_path(axes patch) would build for every artist, built once
        patch = Rectangle((0.0, 0.0), 1.0, 1.0, transform=trans_axes)
        self.clipbox = TransformedBbox(Bbox.unit(), patch.get_transform())
        self.z = zorder

    def add_artist(self, artist):
        artist.set_figure(self.figure)
        if not artist.is_transform_set():
            artist.set_transform(self.transData)
        if artist.get_clip_path() is None:
            artist.set_clip_box(self.clipbox)
        artist.set_zorder(artist.get_zorder() + self.z)
        return self.figure.add_artist(artist)

    def add_collection(self, collection, autolim: bool = False):
        return self.add_artist(collection)

    def add_line(self, line):
        return self.add_artist(line)

    def text(self, x, y, s, **kwargs) -> Text:
        kwargs = {"verticalalignment": "baseline", "horizontalalignment": "left", "clip_on": False, **kwargs}
        return self.add_artist(Text(x, y, text=s, transform=self.transData, **kwargs))


class MapCanvas:
    def __init__(self, size_px: int, style: dict[str, Any]):
        self.n = size_px
        self.style = style
        self.texts: list[dict[str, Any]] = []
        self.layers = 0
        self.fig = Figure(figsize=(size_px / DPI, size_px / DPI), dpi=DPI, facecolor=style["background"])
        self.agg = FigureCanvasAgg(self.fig)
        self.renderer = _borrow_renderer(self.agg)

    def axes(self, bbox: Box, zorder: float) -> PixelLayer:
        """A layer covering `bbox` (pixels) whose data coordinates are the image's pixels."""
        self.layers += 1
        return PixelLayer(self.fig, bbox, self.n, zorder + LAYER_Z_STEP * (self.layers - 1))

    def measure(self, s: str, prop) -> tuple[float, float]:
        """(width, height) in pixels of `s` set in `prop`."""
        key = (s, str(prop.get_file()), float(prop.get_size_in_points()))
        size = _EXTENTS.get(key)
        if size is None:
            t = Text(0, 0, s, fontproperties=prop)
            t.set_figure(self.fig)
            bb = t.get_window_extent(self.renderer)
            size = (float(bb.width), float(bb.height))
            with _EXTENTS_LOCK:  # the QGIS plugin renders in a worker thread
                if len(_EXTENTS) >= 4096:  # labels and legend rows repeat from map to map
                    _EXTENTS.clear()
                _EXTENTS[key] = size
        return size

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
        """Give the renderer back. The artists go with the figure: Figure.clear() would
        re-initialise every axes' ticks, which costs more than drawing them."""
        if getattr(_SPARE, "renderer", None) is None:
            _SPARE.renderer = self.renderer
        self.agg.renderer = None
        self.agg._lastKey = None


# One idle RendererAgg per thread, reused map after map: FigureCanvasAgg.draw() clears it
# first, and its text metrics stay cached (matplotlib caches them per renderer).
_SPARE = threading.local()


def _borrow_renderer(agg: FigureCanvasAgg) -> RendererAgg:
    """The thread's spare renderer if it has the figure's size and DPI, else a new one."""
    w, h = agg.figure.bbox.size
    key = (w, h, agg.figure.dpi)
    spare = getattr(_SPARE, "renderer", None)
    _SPARE.renderer = None
    if spare is None or (spare.width, spare.height, spare.dpi) != key:
        return agg.get_renderer()
    agg.renderer, agg._lastKey = spare, key
    return spare


def add_patch(ax, patch):
    """ax.add_patch without its data-limit update (the axes limits are fixed: autoscale is
    off), which costs more than drawing the patch."""
    return ax.add_artist(patch)
