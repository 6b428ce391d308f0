"""A map's figure drawn with its Agg renderer directly, artist after artist in z-order.

Figure.draw spends about a third of its time in Python around the Agg calls: per artist it
wraps the draw for rasterisation and filters, composes, evaluates and freezes the same transforms
again and again (a rectangle builds five), and sets a graphics context through validating
setters. A map holds a few kinds of plain artists (no hatch, path effect, sketch, clip path,
filter or rasterisation): for those, the painters below make the very renderer calls their own
draw methods make (same paths, matrices, colours, graphics-context state, in the same order),
with each layer's matrices computed once. tests/render/test_render_paint.py records the calls
of both ways on real maps and compares them argument for argument. Any other artist, or state a
painter does not cover, is drawn by its own draw method. matplotlib is pinned (requirements.txt):
the painters mirror its 3.9 draw methods, line for line where they matter.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real
from operator import attrgetter
from typing import Any

import matplotlib
import matplotlib.colors as mcolors
import numpy as np
from matplotlib import cbook
from matplotlib.artist import Artist
from matplotlib.backend_bases import GraphicsContextBase, RendererBase
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Polygon, Rectangle
from matplotlib.path import Path
from matplotlib.text import Text
from matplotlib.transforms import Affine2D, CompositeGenericTransform, IdentityTransform, Transform

# The matplotlib whose draw methods the painters mirror (requirements.txt pins it; the tests
# compare both ways there). Under any other (QGIS's own Python may carry one), Figure.draw draws.
MIRRORED_MATPLOTLIB = "3.9.4"
MATPLOTLIB_MIRRORED = matplotlib.__version__ == MIRRORED_MATPLOTLIB
_EYE = np.eye(3)  # a rectangle's rotation about its corner by 0 degrees, as Affine2D builds it
_zorder = attrgetter("zorder")
_new_object = object.__new__


def paint_figure(fig: Figure, renderer: RendererAgg) -> None:
    """What fig.draw(renderer) draws: the figure's patch, then its artists in z-order."""
    if not _plain_figure(fig, renderer):
        fig.draw(renderer)
        return
    fig.patch.draw(renderer)  # nothing when hidden (a map's blank is copied in beforehand)
    painter = _Painter(renderer)
    # Figure.draw's order: a stable sort by z-order of the artists in the order they were added
    for a in sorted(fig.artists, key=_zorder):
        if not a.get_animated():
            painter.paint(a)
    fig.stale = False


def _plain_figure(fig: Figure, renderer: RendererAgg) -> bool:
    """A figure Figure.draw would draw as its artists one by one: no axes, lines, patches,
    texts, images, legends or subfigures of its own, no draw-event listener, and a renderer
    not in a rasterised (mixed-mode) pass."""
    return (
        MATPLOTLIB_MIRRORED
        and fig.get_visible()
        and not (fig.axes or fig.lines or fig.patches or fig.texts or fig.images)
        and not (fig.legends or fig.subfigs)
        and not fig.canvas.callbacks.callbacks.get("draw_event")
        and vars(renderer).get("_raster_depth") == 0
        and not vars(renderer).get("_rasterizing")
    )


def _plain(a: Any) -> bool:
    """An artist whose draw method does no more than its painter: visible, no filter,
    rasterisation, path effect, sketch or clip path."""
    return (
        a._visible
        and not a._rasterized
        and a._agg_filter is None
        and not a._path_effects
        and a._sketch is None
        and a._clippath is None
    )


class _Painter:
    """The painters of one figure's draw, with each transform's matrices computed once. Artists
    are typed Any: the painters read matplotlib's private state (pinned), as its draw methods do."""

    def __init__(self, renderer: RendererAgg):
        self.r = renderer
        # GraphicsContextBase.__init__'s state (it reads rcParams and parses a colour each time)
        self._blank = vars(renderer.new_gc()) if type(renderer).new_gc is RendererBase.new_gc else None
        # id(transform) -> (transform, its get_affine(), its frozen()); transforms do not
        # change while a figure is drawn, and the transform is kept so its id stays its own
        self._affines: dict[int, tuple[Transform, Any, Any]] = {}
        self._painters: dict[type, Callable[[Any], bool]] = {
            PathCollection: self._collection,
            LineCollection: self._collection,
            Rectangle: self._rectangle,
            PathPatch: self._path_patch,
            Polygon: self._path_patch,
            Line2D: self._line,
        }

    def paint(self, a: Any) -> None:
        painter = self._painters.get(type(a))
        if painter is None and isinstance(a, Text) and type(a).draw is Text.draw:
            painter = self._text  # Text and subclasses drawn as Text (MapText), not Annotation
        if painter is None or not _plain(a) or not painter(a):
            a.draw(self.r)

    def _new_gc(self, a: Any) -> GraphicsContextBase:
        """renderer.new_gc() then a._set_gc_clip(gc), for an artist without clip path."""
        if self._blank is None:
            gc = self.r.new_gc()
            a._set_gc_clip(gc)
            return gc
        gc = _new_object(GraphicsContextBase)
        vars(gc).update(self._blank)  # _cliprect and _clippath None
        if a._clipon and a.clipbox is not None:
            vars(gc)["_cliprect"] = a.clipbox  # set_clip_rectangle; the clip path stays None
        return gc

    def _affine(self, t: Transform) -> Affine2D:
        """t.get_affine() (a new Affine2D of the same matrix each time it is asked)."""
        got: Any = self._affines.get(id(t))
        if got is None:
            got = self._affines[id(t)] = (t, t.get_affine(), t.frozen())
        return got[1]

    def _frozen(self, t: Transform) -> Transform:
        """t.frozen()."""
        self._affine(t)
        return self._affines[id(t)][2]

    # ---- collections: Collection.draw ---------------------------------------------------------
    def _collection(self, c: Any) -> bool:  # c: PathCollection or LineCollection
        if c._hatch is not None or getattr(c, "_gapcolor", None) is not None:
            return False
        if isinstance(c, PathCollection):  # _CollectionWithSizes.draw, first
            c.set_sizes(vars(c)["_sizes"], c.figure.dpi)  # type: ignore[union-attr]
        r = self.r
        c.update_scalarmappable()
        transform, offset_trf, offsets, paths = c._prepare_points()
        gc = self._new_gc(c)
        gc.set_snap(c.get_snap())
        trans = c.get_transforms()
        facecolors = c.get_facecolor()
        edgecolors = c.get_edgecolor()
        single = False
        if (
            len(paths) == 1
            and len(trans) <= 1
            and len(facecolors) == 1
            and len(edgecolors) == 1
            and len(c._linewidths) == 1
            and all(ls[1] is None for ls in c._linestyles)
            and len(c._antialiaseds) == 1
            and len(c._urls) == 1
        ):
            # one shape in one style: drawn once and stamped, as Collection.draw does
            combined = Affine2D(trans[0]) + transform if len(trans) else transform
            extents = paths[0].get_extents(combined)
            single = extents.width < c.figure.bbox.width and extents.height < c.figure.bbox.height
        if c._joinstyle:
            gc.set_joinstyle(c._joinstyle)
        if c._capstyle:
            gc.set_capstyle(c._capstyle)
        if single:
            gc.set_foreground(tuple(edgecolors[0]))
            gc.set_linewidth(c._linewidths[0])
            gc.set_dashes(*c._linestyles[0])
            gc.set_antialiased(c._antialiaseds[0])
            gc.set_url(c._urls[0])
            frozen = combined.frozen() if len(trans) else self._frozen(transform)
            r.draw_markers(gc, paths[0], frozen, Path(offsets), offset_trf, tuple(facecolors[0]))
        else:
            r.draw_path_collection(
                gc, self._frozen(transform), paths, trans, offsets, offset_trf,
                facecolors, edgecolors, c._linewidths, c._linestyles, c._antialiaseds, c._urls,
                "screen",
            )  # fmt: skip
        c.stale = False
        return True

    # ---- patches: Patch.draw ------------------------------------------------------------------
    def _patch_gc(self, p: Any) -> GraphicsContextBase:
        """The graphics context of Patch._draw_paths_with_artist_properties."""
        gc = self._new_gc(p)
        gc.set_foreground(p._edgecolor, isRGBA=True)
        lw = p._linewidth
        if p._edgecolor[3] == 0 or p._linestyle == "None":
            lw = 0
        gc.set_linewidth(lw)
        gc.set_dashes(*p._dash_pattern)
        gc.set_capstyle(p._capstyle)
        gc.set_joinstyle(p._joinstyle)
        gc.set_antialiased(p._antialiased)
        gc.set_url(p._url)
        gc.set_snap(p.get_snap())
        gc.set_alpha(p._alpha)
        return gc

    def _draw_patch(self, p: Any, path: Path, affine: Affine2D) -> bool:
        face = p._facecolor if p._facecolor[3] else None
        self.r.draw_path(self._patch_gc(p), path, affine, face)
        p.stale = False
        return True

    def _path_patch(self, p: Any) -> bool:
        """A path patch's transform is its data transform (its patch transform is the identity)."""
        if p._hatch:
            return False
        t = Artist.get_transform(p)
        return self._draw_patch(p, t.transform_path_non_affine(p.get_path()), self._affine(t))

    def _rectangle(self, p: Any) -> bool:
        """Rectangle.get_transform() is BboxTransformTo(its box) + a rotation by `angle` about a
        point + the data transform. At angle 0 (aspect correction 1, finite corners) the rotation
        Affine2D builds is exactly the identity (translations by -x then +x give +0.0), so the
        matrix drawn is dot(data, dot(eye, box)), which is what get_affine() computes."""
        if p._hatch or p.angle != 0.0 or p._aspect_ratio_correction != 1.0 or p.axes is not None:
            return False
        t = Artist.get_transform(p)
        if not t.is_affine:
            return False
        # Rectangle.get_bbox() and BboxTransformTo's matrix: the box's corners as doubles, its
        # bounds their differences, (x0 + width) - x0, as Bbox.bounds computes them
        corners = (p._x0, p._y0, p._x0 + p._width, p._y0 + p._height)
        if not all(type(v) in (float, int) and math.isfinite(v) for v in corners):
            return False
        x0, y0, x1, y1 = map(float, corners)
        box = np.array([[x1 - x0, 0.0, x0], [0.0, y1 - y0, y0], [0.0, 0.0, 1.0]], float)
        matrix = np.dot(_EYE, box)
        if not isinstance(t, IdentityTransform):  # else the patch transform is the whole of it
            matrix = np.dot(self._affine(t).get_matrix(), matrix)
        affine = Affine2D(matrix)
        return self._draw_patch(p, Path.unit_rectangle(), affine)

    # ---- lines: Line2D.draw -------------------------------------------------------------------
    def _line(self, line: Any) -> bool:
        if (
            line._drawstyle != "default"
            or line._markevery is not None
            or (line.is_dashed() and line._gapcolor is not None)
        ):
            return False
        if line._invalidy or line._invalidx:
            line.recache()
        if line._subslice:
            return False
        r = self.r
        line.ind_offset = 0
        t = line.get_transform()
        if not t.is_affine:
            return False
        path = line._path
        affine = self._affine(t)
        if line._lineStyles[line._linestyle] != "_draw_nothing" and len(path.vertices):
            gc = self._new_gc(line)
            gc.set_url(line.get_url())
            gc.set_antialiased(line._antialiased)
            gc.set_linewidth(line._linewidth)
            if line.is_dashed():
                cap, join = line._dashcapstyle, line._dashjoinstyle
            else:
                cap, join = line._solidcapstyle, line._solidjoinstyle
            gc.set_joinstyle(join)
            gc.set_capstyle(cap)
            gc.set_snap(line.get_snap())
            gc.set_foreground(mcolors.to_rgba(line._color, line._alpha), isRGBA=True)
            gc.set_dashes(*line._dash_pattern)
            r.draw_path(gc, path, affine)
        if line._marker and line._markersize > 0:
            # TransformedPath's transformed points: the vertices, no codes, the path's settings
            points = Path._fast_from_codes_and_verts(path.vertices, None, path)  # type: ignore[attr-defined]
            self._markers(line, points, affine)
        line.stale = False
        return True

    def _markers(self, line: Any, points: Any, affine: Affine2D) -> None:
        """The marker half of Line2D.draw; `points`: its transformed points."""
        r = self.r
        gc = self._new_gc(line)
        gc.set_url(line.get_url())
        gc.set_linewidth(line._markeredgewidth)
        gc.set_antialiased(line._antialiased)
        ec_rgba = mcolors.to_rgba(line.get_markeredgecolor(), line._alpha)
        fc_rgba = mcolors.to_rgba(line._get_markerfacecolor(), line._alpha)
        fcalt_rgba = mcolors.to_rgba(line._get_markerfacecolor(alt=True), line._alpha)
        if cbook._str_equal(line._markeredgecolor, "auto") and not cbook._str_lower_equal(
            line.get_markerfacecolor(), "none"
        ):
            ec_rgba = ec_rgba[:3] + (fc_rgba[3],)
        gc.set_foreground(ec_rgba, isRGBA=True)
        marker = line._marker
        if not len(points.vertices):
            return
        snap = marker.get_snap_threshold()
        if isinstance(snap, Real):
            snap = r.points_to_pixels(line._markersize) >= snap
        gc.set_snap(snap)
        gc.set_joinstyle(marker.get_joinstyle())
        gc.set_capstyle(marker.get_capstyle())
        marker_path = marker.get_path()
        marker_trans = marker.get_transform()
        w = r.points_to_pixels(line._markersize)
        if cbook._str_equal(marker.get_marker(), ","):
            gc.set_linewidth(0)
        else:
            marker_trans = marker_trans.scale(w)  # don't scale for pixels, and don't stroke them
        r.draw_markers(gc, marker_path, marker_trans, points, affine, fc_rgba)
        alt_path = marker.get_alt_path()
        if alt_path:
            alt_trans = marker.get_alt_transform().scale(w)
            r.draw_markers(gc, alt_path, alt_trans, points, affine, fcalt_rgba)

    # ---- texts: Text.draw ---------------------------------------------------------------------
    def _text(self, text: Any) -> bool:
        if text._wrap or text._bbox_patch is not None or text.get_usetex():
            return False
        r = self.r
        text._renderer = r
        if text._text == "":
            return True
        _, info, _ = text._get_layout(r)
        t = text.get_transform()
        if not t.is_affine:
            return False
        pos = np.asanyarray((float(text.convert_xunits(text._x)), float(text.convert_yunits(text._y))))
        if type(t) is CompositeGenericTransform:  # Transform.transform: its affine part, on (1, 2)
            xy = self._affine(t).transform(pos.reshape((-1, 2))).reshape(-1)
        else:
            xy = t.transform(pos)
        # the same doubles as Python floats: the arithmetic below and the renderer's rounding
        # give the same results, faster than on numpy scalars
        posx, posy = xy.tolist()
        if not (math.isfinite(posx) and math.isfinite(posy)):
            return False  # Text.draw logs its warning
        canvash = r.get_canvas_width_height()[1]
        gc = self._new_gc(text)
        gc.set_foreground(text.get_color())
        gc.set_alpha(text.get_alpha())
        gc.set_url(text._url)
        gc.set_antialiased(text._antialiased)
        angle = text.get_rotation()
        flip = r.flipy()
        for line, _, x, y in info:  # the layout's offsets are numpy doubles: as floats, the same
            mtext = text if len(info) == 1 else None
            x = float(x) + posx
            y = float(y) + posy
            if flip:
                y = canvash - y
            clean_line, ismath = text._preprocess_math(line)
            r.draw_text(gc, x, y, clean_line, text._fontproperties, angle, ismath=ismath, mtext=mtext)
        text.stale = False
        return True
