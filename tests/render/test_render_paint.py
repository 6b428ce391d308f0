"""paint_figure makes the very renderer calls Figure.draw makes (so draws the same pixels): on
real maps, and on a figure of every kind of artist and state the painters handle or hand back."""

import matplotlib
import numpy as np
import pytest
from agg_calls import recording
from matplotlib.patches import Polygon
from matplotlib.path import Path
from matplotlib.text import Annotation, Text

import scoring.render.backend.canvas as canvas_mod
from scoring.render.backend import artists
from scoring.render.backend.canvas import MapCanvas
from scoring.render.backend.paint import paint_figure
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_map
from scoring.render.style import font, load_style, pinned_rc_context


@pytest.fixture(scope="module")
def ctx(bench):
    return ContextIndex.from_file(bench / "context.geojsonl", 32635)


def _recorded(monkeypatch, draw) -> dict:
    """Each map's drawing calls when the canvas draws its figure with `draw(fig, renderer)`."""
    log: dict = {}

    def recorded(fig, renderer):
        with recording(renderer) as calls:
            draw(fig, renderer)
        log["calls"] = calls

    monkeypatch.setattr(canvas_mod, "paint_figure", recorded)
    return log


def test_maps_make_the_renderer_calls_of_figure_draw(instances, ctx, monkeypatch):
    for iid, inst in instances.items():
        log = _recorded(monkeypatch, lambda fig, r: fig.draw(r))
        stock_png, stock_record = render_map(inst, ctx)
        stock = log["calls"]
        log = _recorded(monkeypatch, paint_figure)
        png, record = render_map(inst, ctx)
        assert len(stock) > 30, iid  # context, task features, labels, furniture
        assert log["calls"] == stock, iid
        assert png == stock_png and record == stock_record, iid


def _square(x: float, y: float, s: float) -> Path:
    return Path([[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]], closed=True)


def _every_kind(canvas: MapCanvas) -> None:
    """A map-sized figure of two layers holding every kind of artist and state."""
    n = canvas.n
    for layer in (
        canvas.axes((0.0, 0.0, float(n), float(n)), zorder=0),
        canvas.axes((900, 100, 1300, 500), 5),
    ):
        layer.add_collection(
            artists.path_collection(
                [_square(950, 150, 80), _square(1000, 400, 300)], facecolors="#aaccee", edgecolors="#224466",
                linewidths=1.5, zorder=1,
            )
        )  # fmt: skip
        # one segment in one style: stamped with draw_markers
        layer.add_collection(artists.line_collection([np.array([[920.0, 120], [1280, 480]])], colors="#f00"))
        layer.add_collection(
            artists.line_collection(
                [np.array([[0.0, 5], [1500, 900]]), np.array([[40.0, 900], [1000, 40]])], colors="#ff0000",
                linewidths=4.0, linestyles=[(0, (3.0, 1.0))], capstyle="butt", joinstyle="round", zorder=2,
            )
        )  # fmt: skip
        layer.add_line(artists.line2d([100.0, 950], [500.0, 130], ls="none", marker="o", ms=9, mfc="#0f0"))
        layer.add_line(artists.line2d([100.0, 1200, 1210], [300.0, 310, 480], color="#123", lw=3, ls="--"))
        layer.add_line(artists.line2d([200.0], [200.0], ls="none", marker="s", ms=7, mfc="none", mec="auto"))
        layer.add_line(artists.line2d([210.0], [210.0], ls="none", marker="o", fillstyle="left", ms=12))
        layer.add_artist(artists.rectangle((60.5, 70), 300, 21, facecolor=(1, 1, 1, 0.8), edgecolor="#333"))
        layer.add_artist(artists.rectangle((960, 140), 8, 31, facecolor="#00f", edgecolor="none", zorder=51))
        layer.add_artist(artists.rectangle((920, 130), 120, 60, facecolor="none", ls=(0, (3, 2)), alpha=0.5))
        layer.add_artist(artists.path_patch(_square(300, 300, 250), facecolor="none", edgecolor="#80a", lw=3))
        layer.add_artist(Polygon([(1000, 200), (987, 260), (1000, 250)], closed=True, facecolor="#222"))
        canvas.text(layer, 950.0, 160.0, "F12  building", font(11), "legend", va="center_baseline", zorder=52)
        canvas.text(
            layer, 1200.0, 480.0, "two\nlines", font(12, bold=True), "label", ha="center", rotation=30
        )
        canvas.text(layer, 940.0, 300.0, r"$x^2$ in math", font(11), "legend", zorder=53)
        layer.text(1100.0, 200.0, "clipped to its layer", fontproperties=font(14), clip_on=True)
        # handed back to their own draw methods
        layer.add_artist(artists.rectangle((980, 180), 50, 20, facecolor="#0a0", angle=20.0))
        layer.add_artist(artists.path_patch(_square(1100, 350, 60), facecolor="#fff", hatch="//"))
        note = Annotation(
            "note", (1000.0, 300.0), xytext=(1050.0, 250.0), xycoords=layer.transData, arrowprops={}
        )
        layer.add_artist(note)
        layer.add_artist(Text(1000.0, 420.0, "plain Text", fontproperties=font(10)))
        clipped = artists.path_patch(_square(1150, 150, 100), facecolor="#f80")
        clipped.set_clip_path(_square(1150, 150, 50), layer.transData)
        layer.add_artist(clipped)
        hidden = artists.rectangle((0, 0), 1536, 1536, facecolor="#000")
        hidden.set_visible(False)
        layer.add_artist(hidden)


def _draw_every_kind(draw) -> tuple[list, np.ndarray]:
    with pinned_rc_context():
        canvas = MapCanvas(1536, load_style())
        try:
            _every_kind(canvas)
            r = canvas.renderer
            r.clear()
            with recording(r) as calls:
                draw(canvas.fig, r)
            return calls, np.asarray(r.buffer_rgba()).copy()
        finally:
            canvas.close()


def test_every_kind_of_artist_draws_as_figure_draw_draws_it():
    stock_calls, stock_pixels = _draw_every_kind(lambda fig, r: fig.draw(r))
    calls, pixels = _draw_every_kind(paint_figure)
    assert {name for name, *_ in stock_calls} >= {"draw_path", "draw_markers", "draw_path_collection"}
    assert calls == stock_calls
    assert np.array_equal(pixels, stock_pixels)


def test_the_recording_tells_a_one_ulp_change(monkeypatch):
    """What the comparisons above rest on: a change no pixel shows is still a different call."""
    stock_calls, stock_pixels = _draw_every_kind(paint_figure)
    eye = np.eye(3)
    eye[0, 0] = np.nextafter(1.0, 2.0)
    monkeypatch.setattr("scoring.render.backend.paint._EYE", eye)
    calls, pixels = _draw_every_kind(paint_figure)
    assert calls != stock_calls


def test_a_figure_with_axes_is_drawn_by_figure_draw():
    with pinned_rc_context():
        canvas = MapCanvas(64, load_style())
        try:
            canvas.fig.add_axes((0.1, 0.1, 0.8, 0.8)).plot([0, 1], [0, 1])
            r = canvas.renderer
            with recording(r) as calls:
                paint_figure(canvas.fig, r)
            with recording(r) as stock:
                canvas.fig.draw(r)
            assert calls == stock and len(calls) > 3
        finally:
            canvas.close()
    assert matplotlib.get_backend().lower() == "agg"


def test_another_matplotlib_draws_with_figure_draw(monkeypatch):
    """The painters mirror the pinned matplotlib's draw methods: under another, none is used."""
    import scoring.render.backend.paint as paint_mod

    def no_painter(renderer):
        raise AssertionError("a painter under another matplotlib")

    monkeypatch.setattr(paint_mod, "MATPLOTLIB_MIRRORED", False)
    monkeypatch.setattr(canvas_mod, "MATPLOTLIB_MIRRORED", False)
    monkeypatch.setattr(paint_mod, "_Painter", no_painter)
    stock_calls, stock_pixels = _draw_every_kind(lambda fig, r: fig.draw(r))
    calls, pixels = _draw_every_kind(paint_figure)
    assert calls == stock_calls and np.array_equal(pixels, stock_pixels)
