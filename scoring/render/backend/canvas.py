"""The matplotlib figure of one map, drawn in pixel coordinates (x = column, y = row from the
top-left corner), and the log of every text it carries (recorded in the sidecar)."""

from __future__ import annotations

import threading
import weakref
from functools import partial
from math import cos, radians, sin
from typing import Any

import matplotlib
import numpy as np
from matplotlib.artist import Artist
from matplotlib.backends.backend_agg import FigureCanvasAgg, RendererAgg, get_hinting_flag
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
from scoring.render.backend.artists import rectangle, styled
from scoring.render.backend.paint import MATPLOTLIB_MIRRORED, paint_figure
from scoring.render.backend.png import encode_rgba_png
from scoring.render.labels.placement import Box
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
        if _quiet(artist):
            _place_quietly(artist, self.figure, self.transData, self.clipbox, self.z)
        else:
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
        # MapText(x, y, text=s, transform=self.transData, **kwargs), from a template per style
        t = styled(MapText, (0.0, 0.0), kwargs)
        t.set_text(s)
        t.set_position((x, y))
        t.set_transform(self.transData)
        return self.add_artist(t)


def _quiet(artist: Artist) -> bool:
    """An artist nobody listens to (no 'pchanged' callback, no stale callback: a fresh one or a
    template's copy), outside any figure: its setters change its state and notify no one."""
    own = vars(artist)
    return (
        MATPLOTLIB_MIRRORED  # the setters as matplotlib 3.9 has them (3.10's figure is a property)
        and own["figure"] is None
        and own["stale_callback"] is None
        and not own["_callbacks"].callbacks.get("pchanged")
        and not own["_animated"]
    )


def _place_quietly(artist: Artist, fig: Figure, transform, clipbox, dz: float) -> None:
    """What PixelLayer.add_artist's setters do to a quiet artist (set_figure, set_transform
    unless set, set_clip_box unless clipped to a path, set_zorder(z + dz)): their assignments and
    `stale = True`, with no one to notify (~9 us an artist). A class's own setter (Line2D's
    set_transform, Text's set_clip_box) is called as it is."""
    own = vars(artist)
    cls = type(artist)
    own["figure"] = fig
    if not own["_transformSet"]:
        if cls.set_transform is Artist.set_transform:
            own["_transform"] = transform
            own["_transformSet"] = True
        else:
            artist.set_transform(transform)
    if own["_clippath"] is None:
        if cls.set_clip_box is Artist.set_clip_box:
            own["clipbox"] = clipbox
        else:
            artist.set_clip_box(clipbox)
    level = artist.zorder + dz  # the class's default when never set
    if level != artist.zorder:
        own["zorder"] = level
    own["_stale"] = True  # set_figure's, whatever else changed


# Text layouts (extent and line offsets about the anchor) by everything Text._get_layout reads:
# the same label, legend row or scale-bar figure is laid out once per process, not per map.
_LAYOUTS: dict[tuple, Any] = {}


class MapText(Text):
    """A Text whose layout is computed once per distinct text and setting. The layout is
    relative to the anchor (Text adds the position afterwards), so it holds wherever the
    text is placed."""

    def _get_layout(self, renderer):
        own = vars(self)
        if own["_wrap"]:  # wrapped lines depend on where the text sits
            return super()._get_layout(renderer)  # type: ignore[misc]
        key = (
            self.get_text(),
            own["_fontproperties"],
            own["_horizontalalignment"],
            own["_verticalalignment"],
            own["_multialignment"],
            own["_linespacing"],
            self.get_rotation(),
            own["_rotation_mode"],
            self.get_usetex(),
            own["_parse_math"],
            getattr(self.figure, "dpi", None),
            type(renderer),
        )
        layout = _LAYOUTS.get(key)
        if layout is None:
            layout = super()._get_layout(renderer)  # type: ignore[misc]
            with _EXTENTS_LOCK:
                if len(_LAYOUTS) >= 2048:
                    _LAYOUTS.clear()
                _LAYOUTS[key] = layout
        return layout


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
            rectangle(
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
        r = self.renderer
        # The blank map (background everywhere) is drawn once per renderer and colour, then
        # copied in: what FigureCanvasAgg.draw() does first (clear, fill the figure's patch).
        face = self.fig.patch.get_facecolor()
        blank = _BLANKS.get(r)
        if blank is None or blank[0] != face:
            r.clear()
            self.fig.patch.draw(r)
            _BLANKS[r] = (face, r.copy_from_bbox(self.fig.bbox), _uniform_pixel(r))
        elif blank[2] is not None:  # one colour: written over the last map, not copied
            np.asarray(r.buffer_rgba()).view(np.uint32).reshape(-1).fill(blank[2])
        else:
            r.restore_region(blank[1])
        self.fig.patch.set_visible(False)
        try:
            paint_figure(self.fig, r)  # what self.fig.draw(r) draws, with less Python per artist
        finally:
            self.fig.patch.set_visible(True)
        return encode_rgba_png(r.buffer_rgba(), self.n, self.n)

    def close(self) -> None:
        """Give the renderer back. The artists go with the figure: Figure.clear() would
        re-initialise every axes' ticks, which costs more than drawing them."""
        if getattr(_SPARE, "renderer", None) is None:
            _SPARE.renderer = self.renderer
        self.agg.renderer = None
        self.agg._lastKey = None


# The blank map of each renderer (reused map after map), with its background colour and, when
# all its pixels are one colour (as the map's figure patch draws them), that pixel.
_BLANKS: weakref.WeakKeyDictionary[RendererAgg, tuple[Any, Any, Any]] = weakref.WeakKeyDictionary()


def _uniform_pixel(r: RendererAgg) -> np.uint32 | None:
    """The renderer's one pixel value (RGBA bytes as a uint32) if every pixel has it."""
    pixels = np.asarray(r.buffer_rgba()).view(np.uint32).reshape(-1)
    return pixels[0] if (pixels == pixels[0]).all() else None


# One idle RendererAgg per thread, reused map after map: rasterise() first copies the blank map
# over the last one, and its text metrics stay cached (matplotlib caches them per renderer).
_SPARE = threading.local()


def _borrow_renderer(agg: FigureCanvasAgg) -> RendererAgg:
    """The thread's spare renderer if it has the figure's size and DPI, else a new one."""
    w, h = agg.figure.bbox.size
    key = (w, h, agg.figure.dpi)
    spare = getattr(_SPARE, "renderer", None)
    _SPARE.renderer = None
    if spare is None or (spare.width, spare.height, spare.dpi) != key:
        spare = agg.get_renderer()
        spare.draw_text = partial(_draw_text, spare, spare.draw_text)
        return spare
    agg.renderer, agg._lastKey = spare, key
    return spare


# Glyph bitmaps of drawn texts by (text, font file, size, DPI, hinting, antialiasing): FreeType
# lays out and rasterises a string at the origin whatever its position (RendererAgg.draw_text
# moves the finished bitmap to whole pixels), so a bitmap made once draws every later copy of
# the same text pixel for pixel. Labels, legend rows and furniture repeat from map to map.
_GLYPHS: dict[tuple, tuple[np.ndarray, float, float, float]] = {}
_GLYPHS_LOCK = threading.Lock()


def _draw_text(renderer: RendererAgg, plain, gc, x, y, s, prop, angle, ismath=False, mtext=None):
    """RendererAgg.draw_text with the text's bitmap cached (same pixels); math and fonts not
    given by file take matplotlib's own path."""
    fname = prop.get_file()
    if ismath or fname is None:
        return plain(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)
    rc = matplotlib.rcParams
    aa = bool(gc.get_antialiased())
    key = (
        s,
        str(fname),
        float(prop.get_size_in_points()),
        float(renderer.dpi),
        get_hinting_flag(),
        rc["text.hinting_factor"],
        rc["text.kerning_factor"],
        aa,
    )
    glyphs = _GLYPHS.get(key)
    if glyphs is None:
        font = renderer._prepare_font(prop)
        font.set_text(s, 0, flags=key[4])
        font.draw_glyphs_to_bitmap(antialiased=aa)
        xo, yo = font.get_bitmap_offset()
        glyphs = (np.array(font.get_image(), dtype=np.uint8), xo / 64.0, yo / 64.0, font.get_descent() / 64.0)
        with _GLYPHS_LOCK:  # the QGIS plugin renders in a worker thread
            if len(_GLYPHS) >= 2048:
                _GLYPHS.clear()
            _GLYPHS[key] = glyphs
    image, xo, yo, d = glyphs
    # the placement arithmetic of RendererAgg.draw_text, step for step
    xd = d * sin(radians(angle))
    yd = d * cos(radians(angle))
    x = round(x + xo + xd)
    y = round(y + yo + yd)
    renderer._renderer.draw_text_image(image, x, y + 1, angle, gc)


def add_patch(ax, patch):
    """ax.add_patch without its data-limit update (the axes limits are fixed: autoscale is
    off), which costs more than drawing the patch."""
    return ax.add_artist(patch)
