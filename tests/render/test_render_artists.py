"""Artists copied from a template per style draw the very pixels of artists built afresh."""

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Polygon, Rectangle
from matplotlib.path import Path

from scoring.render.backend import artists
from scoring.render.style import pinned_rc_context


def _square(x, y, s):
    return Path([[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]], closed=True)


def _draw(make, shift: float) -> np.ndarray:
    """Pixels of a small figure of every kind of artist; `make` builds each from its class."""
    fig = Figure(figsize=(2, 2), dpi=100)
    canvas = FigureCanvasAgg(fig)
    style = dict(facecolors="#aaccee", edgecolors="#224466", linewidths=1.5, zorder=1)
    for a in (
        make(PathCollection, [_square(0.1 + shift, 0.1, 0.3), _square(0.5, 0.5 + shift, 0.2)], **style),
        make(
            LineCollection,
            [[(0.0, shift), (1.0, 0.9)], [(0.2, 0.9), (0.8, 0.1 + shift)]],
            colors="#ff0000",
            linewidths=4.0 + 10 * shift,  # widths follow the map's scale: set on the copy
            linestyles=[(0, (3.0, 1.0))],
            capstyle="round",
            joinstyle="round",
            zorder=2,
        ),
        make(Line2D, [0.1, 0.9 - shift], [0.5, 0.6], ls="none", marker="o", ms=9, mfc="#00ff00", zorder=3),
        make(Rectangle, (0.6 - shift, 0.2), 0.3, 0.2, facecolor=(1, 1, 1, 0.8), edgecolor="#333333", lw=1.2),
        make(PathPatch, _square(0.3, 0.3 + shift, 0.25), facecolor="none", edgecolor="#8800aa", lw=3),
        make(Polygon, [(0.2, 0.2), (0.45, 0.8 - shift), (0.7, 0.3)], closed=True, facecolor="#222", lw=1.6),
    ):
        a.set_transform(fig.transFigure)
        fig.add_artist(a)
    canvas.draw()
    return np.asarray(canvas.buffer_rgba()).copy()


_FROM_TEMPLATE = {
    PathCollection: artists.path_collection,
    LineCollection: artists.line_collection,
    Line2D: artists.line2d,
    Rectangle: artists.rectangle,
    PathPatch: artists.path_patch,
    Polygon: artists.polygon,
}


def test_templated_artists_draw_the_pixels_of_fresh_ones():
    with pinned_rc_context():
        for shift in (0.0, 0.05, 0.0):  # a second and third map reuse the templates
            fresh = _draw(lambda cls, *a, **kw: cls(*a, **kw), shift)
            templated = _draw(lambda cls, *a, **kw: _FROM_TEMPLATE[cls](*a, **kw), shift)
            assert np.array_equal(fresh, templated), shift
            assert (fresh[..., :3] != 255).any()


def test_a_copy_leaves_its_template_as_built():
    with pinned_rc_context():
        a = artists.rectangle((1.0, 2.0), 3.0, 4.0, facecolor="#123456", zorder=7)
        b = artists.rectangle((5.0, 6.0), 1.0, 1.0, facecolor="#123456", zorder=7)
    assert a.get_bbox().bounds == (1.0, 2.0, 3.0, 4.0) and b.get_bbox().bounds == (5.0, 6.0, 1.0, 1.0)
    b.set_zorder(99)
    assert a.get_zorder() == 7
