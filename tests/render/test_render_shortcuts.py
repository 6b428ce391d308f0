"""The renderer's cheaper equivalents give what they replace: one-pass paths and segments, one
call per view transform, the sidecar JSON text, artist copies and placement, the blank map."""

import copy
import json
import math

import matplotlib
import numpy as np
import pytest
import shapely
from matplotlib.artist import Artist
from matplotlib.patches import Polygon as MplPolygon
from shapely.geometry import LinearRing, LineString, MultiLineString, MultiPoint, MultiPolygon, Point, Polygon

import scoring.render.backend.canvas as canvas_mod
from scoring.render.backend import artists
from scoring.render.backend.canvas import MapCanvas, _place_quietly, _quiet
from scoring.render.backend.shapes import line_segments, line_segments_each, poly_path, poly_paths_each
from scoring.render.features import MapSubject, geom_type
from scoring.render.sidecar.encoder import dumps_indent1
from scoring.render.style import font, load_style, pinned_rc_context
from scoring.render.view import fix_view, to_3857

_HOLED = Polygon([(20, 0), (40, 0), (40, 20), (20, 20)], [[(25, 5), (25, 15), (35, 15), (35, 5)]])
_CW_HOLE = Polygon([(20, 0), (20, 20), (40, 20), (40, 0)], [[(25, 5), (35, 5), (35, 15), (25, 15)]])
_GEOMS = [
    Polygon([(0, 0), (10, 0), (10, 10), (0, 10)]),
    LineString([(0, 0), (5, 5), (9, 1)]),
    _HOLED,
    _CW_HOLE,
    Point(3, 4),
    MultiPolygon([Polygon([(0, 0), (1, 0), (1, 1)]), Polygon([(50, 50), (60, 50), (60, 60)])]),
    shapely.GeometryCollection([LineString([(0, 0), (1, 1)]), Point(1, 1)]),
    MultiLineString([[(0, 0), (1, 1)], [(2, 2), (3, 5), (4, 4)]]),
    LinearRing([(0, 0), (3, 0), (3, 3)]),
    Polygon(),
    LineString(),
]


def _same_path(a, b) -> bool:
    if a is None or b is None:
        return a is b
    codes_same = (a.codes is None and b.codes is None) or np.array_equal(a.codes, b.codes)
    return (
        np.array_equal(a.vertices, b.vertices)
        and codes_same
        and vars(a).keys() == vars(b).keys()
        and a.should_simplify == b.should_simplify
    )


def test_one_pass_paths_and_segments_are_each_geometry_s_own():
    with pinned_rc_context():
        each = poly_paths_each(_GEOMS)
        assert [_same_path(p, poly_path([g])) for p, g in zip(each, _GEOMS, strict=True)] == [True] * len(
            _GEOMS
        )
        assert sum(p is not None for p in each) == 4  # the squares, the holed ones, the multi
    segs = line_segments_each(_GEOMS)
    for got, g in zip(segs, _GEOMS, strict=True):
        alone = line_segments([g])
        assert len(got) == len(alone) and all(np.array_equal(a, b) for a, b in zip(got, alone, strict=True))
    assert line_segments_each([]) == []


def test_geom_type_is_shapely_s_for_every_type():
    for g in [*_GEOMS, MultiPoint([(0, 0), (1, 1)]), shapely.from_wkt("POINT Z (1 2 3)")]:
        assert geom_type(g) == g.geom_type


def test_one_call_per_view_transform_gives_each_feature_s_geometry(instances):
    style = load_style()
    for inst in instances.values():
        subject = MapSubject.of(inst, None)
        pt, _ = fix_view(subject, inst, style)
        for f in subject.features:
            alone = to_3857(f.geom_task, subject.task_epsg)
            assert shapely.equals_exact(f.geom_3857, alone, 0.0) and f.geom_3857.wkb == alone.wkb
            assert f.geom_px.wkb == pt.geometry_3857_to_pixel(alone).wkb


_JSON_VALUES = [
    {"a": 1, "b": [1.5, -0.0, 1e-300, 12345678901234567890, True, False, None], "c": {}, "d": []},
    {"nan": float("nan"), "inf": [float("inf"), -math.inf], "t": (1, (2.25, "x"))},
    {"text": 'é "quoted" \\ back\nslash \t \x01 ☃ 𝄞', "nested": [[[]], [{}], {"k": [{"z": 0.1}]}]},
    {
        1: "int key",
        2.5: "float key",
        False: "bool key",
        None: "none key",
        "np": np.float64(0.30000000000000004),
    },
    [],
    "just a string",
    3.0,
    [1, [2, [3, [4, {"deep": [5.5]}]]]],
]


@pytest.mark.parametrize("value", _JSON_VALUES)
def test_sidecar_json_is_json_dumps_indent_1(value):
    assert dumps_indent1(value) == json.dumps(value, indent=1, ensure_ascii=False)


def test_sidecar_json_of_real_sidecars_and_its_refusals(sidecars):
    for record in sidecars.values():
        assert dumps_indent1(record) == json.dumps(record, indent=1, ensure_ascii=False)
    with pytest.raises(TypeError):
        dumps_indent1({"x": object()})
    with pytest.raises(TypeError):
        dumps_indent1({(1, 2): "tuple key"})


def _artists() -> list[Artist]:
    """One artist of each kind a map adds, as the map makes them."""
    return [
        artists.path_collection([], facecolors="#aaccee", edgecolors="#224466", linewidths=1.5, zorder=1),
        artists.line_collection([np.zeros((2, 2))], colors="#ff0000", linewidths=4.0),
        artists.line2d([1.0, 2.0], [3.0, 4.0], ls="none", marker="o", ms=9, mfc="#0f0", zorder=3),
        artists.line2d([1.0], [3.0], color="#123"),  # no z-order of its own: the class's
        artists.rectangle((1.0, 2.0), 3.0, 4.0, facecolor="#fff", zorder=50),
        MplPolygon([(0, 0), (1, 2), (2, 0)], closed=True, facecolor="#222"),
        artists.styled(canvas_mod.MapText, (0.0, 0.0), {"fontproperties": font(11), "clip_on": False}),
    ]


def test_quiet_placement_leaves_the_state_the_setters_leave():
    with pinned_rc_context():
        canvas = MapCanvas(256, load_style())
        try:
            layer = canvas.axes((10.0, 20.0, 200.0, 220.0), zorder=5)
            for quiet in _artists():
                loud = copy.copy(quiet)  # the same state, sharing every value
                assert _quiet(quiet) and _quiet(loud)
                _place_quietly(quiet, canvas.fig, layer.transData, layer.clipbox, layer.z)
                loud.set_figure(canvas.fig)
                if not loud.is_transform_set():
                    loud.set_transform(layer.transData)
                loud.set_clip_box(layer.clipbox)
                loud.set_zorder(loud.get_zorder() + layer.z)
                assert vars(quiet).keys() == vars(loud).keys(), type(loud)
                assert all(vars(quiet)[k] is v or vars(quiet)[k] == v for k, v in vars(loud).items()), type(
                    loud
                )
                assert quiet.get_zorder() == loud.get_zorder() and quiet.figure is canvas.fig
                assert not _quiet(quiet)  # in a figure now: a second layer must not take it
        finally:
            canvas.close()


def test_an_artist_someone_listens_to_is_placed_by_its_setters():
    with pinned_rc_context():
        canvas = MapCanvas(64, load_style())
        try:
            layer = canvas.axes((0.0, 0.0, 64.0, 64.0), zorder=0)
            heard = []
            r = artists.rectangle((1.0, 2.0), 3.0, 4.0, facecolor="#fff")
            r.add_callback(lambda a: heard.append(a))
            layer.add_artist(r)
            assert heard and r.figure is canvas.fig and r.clipbox is layer.clipbox
        finally:
            canvas.close()


def test_a_template_copy_is_copy_copy():
    with pinned_rc_context():
        for a in _artists():
            fast, slow = artists._copy(a), copy.copy(a)
            assert type(fast) is type(slow) and vars(fast).keys() == vars(slow).keys()
            assert all(vars(fast)[k] is v for k, v in vars(slow).items())


def test_the_blank_map_is_written_as_drawn(instances):
    with pinned_rc_context():
        canvas = MapCanvas(128, load_style())
        try:
            canvas.rasterise()  # draws the blank map, keeps its one pixel value
            face, _, pixel = canvas_mod._BLANKS[canvas.renderer]
            assert pixel is not None
            drawn = np.asarray(canvas.renderer.buffer_rgba()).copy()
            canvas.renderer.clear()
            canvas.rasterise()  # written over the cleared buffer
            assert np.array_equal(np.asarray(canvas.renderer.buffer_rgba()), drawn)
            assert tuple(drawn[0, 0]) == tuple(round(255 * c) for c in matplotlib.colors.to_rgba(face))
        finally:
            canvas.close()
