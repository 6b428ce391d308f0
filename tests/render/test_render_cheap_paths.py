"""The per-map savings (issue 17) draw exactly what plain matplotlib draws: cached glyph bitmaps,
cached text layouts, the copied-in blank map, the pinned rcParams in one update, the scanlines
packed in place and the PNG deflated by the pinned libdeflate."""

import io
import zlib

import matplotlib
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text
from PIL import Image

import scoring.render.backend.canvas as canvas_mod
import scoring.render.backend.png as png_mod
import scoring.render.style as style_mod
from scoring.render.backend.png import encode_rgb_png, encode_rgba_png, rgba_to_rgb_bytes
from scoring.render.context import ContextIndex
from scoring.render.renderer import render_map
from scoring.render.style import PINNED_RC, pinned_rc_context, pinned_rc_params


@pytest.fixture(scope="module")
def ctx(bench):
    return ContextIndex.from_file(bench / "context.geojsonl", 32635)


def _pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))


def _plain_rasterise(self) -> bytes:
    """The figure drawn by FigureCanvasAgg.draw() (clear + figure patch), packed by Pillow."""
    self.agg.draw()
    return encode_rgb_png(rgba_to_rgb_bytes(self.agg.buffer_rgba(), self.n, self.n), self.n, self.n)


def test_maps_are_pixel_for_pixel_what_plain_matplotlib_draws(bench, instances, ctx, monkeypatch):
    ids = list(instances)
    fast = {iid: render_map(instances[iid], ctx) for iid in ids}
    # every shortcut off: matplotlib's own text layout and glyph drawing, its own canvas draw
    monkeypatch.setattr(canvas_mod.MapText, "_get_layout", Text._get_layout)
    monkeypatch.setattr(canvas_mod.MapCanvas, "rasterise", _plain_rasterise)
    monkeypatch.setattr(canvas_mod, "_draw_text", lambda renderer, plain, *a, **k: plain(*a, **k))
    monkeypatch.setattr(canvas_mod, "_SPARE", type(canvas_mod._SPARE)())  # fresh renderers
    for iid in ids:
        png, record = render_map(instances[iid], ctx)
        assert np.array_equal(_pixels(png), _pixels(fast[iid][0])), iid
        assert record == fast[iid][1], iid


def test_caches_carry_nothing_from_map_to_map(instances, ctx):
    a, b = list(instances.values())[:2]
    warm = render_map(a, ctx)[0]
    canvas_mod._GLYPHS.clear()
    canvas_mod._LAYOUTS.clear()
    style_mod._PINNED_PARAMS.clear()
    render_map(b, ctx)
    assert render_map(a, ctx)[0] == warm


def test_pinned_rc_params_is_rcdefaults_plus_the_pinned_settings():
    with matplotlib.rc_context():
        matplotlib.rcdefaults()
        matplotlib.rcParams.update(PINNED_RC)
        expected = dict(matplotlib.rcParams)
    with matplotlib.rc_context():
        matplotlib.rcParams["lines.linewidth"] = 7.0  # whatever a caller set before
        matplotlib.rcParams["font.size"] = 31.0
        pinned_rc_params()
        assert dict(matplotlib.rcParams) == expected


@pytest.mark.parametrize("size", [(1536, 1536), (131, 97), (3, 1)])
def test_rgba_png_is_the_rgb_png_of_its_pixels(size):
    w, h = size
    rgba = np.random.default_rng(w).integers(0, 256, (h, w, 4), dtype=np.uint8)
    rgba[: h // 2, : w // 2] = (240, 238, 232, 255)  # flat colour, as maps mostly are
    png = encode_rgba_png(memoryview(rgba), w, h)
    assert png == encode_rgb_png(rgba_to_rgb_bytes(rgba.tobytes(), w, h), w, h)
    assert np.array_equal(_pixels(png), rgba[..., :3])
    assert encode_rgba_png(memoryview(rgba), w, h) == png  # the reused buffer keeps no trace


def test_scanlines_fall_back_to_pillow_when_numpy_copies_out_of_order(monkeypatch):
    w, h = 64, 48
    rgba = np.random.default_rng(5).integers(0, 256, (h, w, 4), dtype=np.uint8)
    expected = encode_rgb_png(rgba_to_rgb_bytes(rgba.tobytes(), w, h), w, h)

    def reversed_copy(src, buf, width, height):  # what a copy in the other order would leave
        rows = png_mod._unfiltered_rows(rgba_to_rgb_bytes(src, width, height), width, height)
        rows[:, 3::3] = 255
        return rows

    monkeypatch.setattr(png_mod, "_overlapped_copy", reversed_copy)
    monkeypatch.setattr(png_mod, "_SCRATCH", type(png_mod._SCRATCH)())
    assert encode_rgba_png(memoryview(rgba), w, h) == expected


def test_png_bytes_are_the_pinned_libdeflate_level_1_stream():
    pytest.importorskip("deflate", reason="the deflate wheel is not installed (QGIS's Python)")
    w, h = 40, 30
    rgb = np.zeros((h, w, 3), np.uint8)
    rgb[5:20, 8:30] = (200, 30, 40)
    png = encode_rgb_png(rgb.tobytes(), w, h)
    assert png_mod.PNG_DEFLATE.startswith("libdeflate (deflate 0.9.0) level 1")
    # zlib reads it back; the stream is libdeflate's (not zlib's own level-1 output)
    idat = png[png.index(b"IDAT") + 4 : -16]
    rows = zlib.decompress(idat)
    assert rows == b"".join(b"\0" + rgb[y].tobytes() for y in range(h))
    import deflate

    assert idat == bytes(deflate.zlib_compress(rows, 1))


def test_a_plain_canvas_draw_after_a_map_still_works(instances, ctx):
    # the copied-in blank map leaves the figure patch visible for any later plain draw
    png, _ = render_map(next(iter(instances.values())), ctx)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1), dpi=96, facecolor="#123456")
    agg = FigureCanvasAgg(fig)
    agg.draw()
    assert tuple(np.asarray(agg.buffer_rgba())[5, 5]) == (0x12, 0x34, 0x56, 255)
    assert png.startswith(b"\x89PNG")


def _candidates_by_loop(item):
    """The candidate rows as the loop before vectorisation built them."""
    from scoring.render.labels.placement import (
        DIRECTIONS,
        DISPLACED_STEP,
        RING_STEPS,
        anchor_points,
        is_large_polygon,
    )

    w, h = item.size
    rows = []
    for ai, ((ax, ay), apen) in enumerate(anchor_points(item.geom)):
        if ai == 0 and is_large_polygon(item.geom):
            rows.append((ax - w / 2, ay - h / 2, ax, ay, 0.0, apen + 6.0, False))
        for step in RING_STEPS:
            d = item.clearance + step
            for _name, ux, uy, dpen in DIRECTIONS:
                x0 = ax + d * ux if ux > 0.1 else (ax + d * ux - w if ux < -0.1 else ax - w / 2)
                y0 = ay + d * uy if uy > 0.1 else (ay + d * uy - h if uy < -0.1 else ay - h / 2)
                displaced = step > DISPLACED_STEP
                rows.append((x0, y0, ax, ay, d, step + dpen + apen + (12.0 if displaced else 0.0), displaced))
    return np.array(rows, dtype=float)


@pytest.mark.parametrize("seed", range(6))
def test_vectorised_candidates_are_the_loop_s_bit_for_bit(seed):
    from shapely.geometry import Point, Polygon

    from scoring.render.labels.placement import LabelItem, _candidates

    rng = np.random.default_rng(seed)
    x, y = rng.uniform(50, 900, 2)
    s = rng.uniform(20, 400)
    geoms = [
        Point(x, y),
        Polygon([(x, y), (x + s, y), (x + s, y + s * 0.7), (x, y + s)]),  # large when s > ~130
        Polygon([(x, y), (x + s, y + 3), (x, y + s)]).buffer(0),
    ]
    for g in geoms:
        item = LabelItem(
            "F0", g, (float(rng.uniform(20, 60)), float(rng.uniform(14, 30))), float(rng.uniform(3, 9))
        )
        assert np.array_equal(_candidates(item), _candidates_by_loop(item))


def test_pinned_rc_context_pins_inside_and_restores_the_callers_settings():
    with matplotlib.rc_context():
        matplotlib.rcParams["lines.linewidth"] = 7.0
        before = dict(matplotlib.rcParams)
        with pinned_rc_context():
            pinned = dict(matplotlib.rcParams)
            matplotlib.rcParams["font.size"] = 31.0  # whatever the drawing changes
        assert pinned["lines.linewidth"] != 7.0
        assert dict(matplotlib.rcParams) == before
