"""Editing maps give no hint (issue 29, item 3): over the built Helsinki benchmark, no edit map's
frame is off the scene's centre, so the share of frames pointing towards the reference move is at
chance level; every reference result stays in frame. The old framing (scene plus result) pointed
towards the solution far above chance on the same maps, so the test can fail."""

from __future__ import annotations

import json
import math

import pytest
from shapely.geometry import box

from scoring.constraints.edits import apply_edit
from scoring.geometry.georef import PixelTransform
from scoring.geometry.scene import Scene
from scoring.render.features import MapSubject
from scoring.render.style import load_style
from scoring.render.view import compute_view, fix_view, framed_3857

N = 1536


def _offset_and_move(pt: PixelTransform, inst: dict) -> tuple[tuple[float, float], tuple[float, float], bool]:
    """(frame centre minus scene centre, reference move, result in frame), in pixels, y up."""
    scene = Scene.from_geojson(inst["scene"])
    px = [pt.geometry_task_to_pixel(f.geom) for f in scene.features]
    x0 = min(g.bounds[0] for g in px)
    y0 = min(g.bounds[1] for g in px)
    x1 = max(g.bounds[2] for g in px)
    y1 = max(g.bounds[3] for g in px)
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    before = pt.geometry_task_to_pixel(scene.geom(inst["target"]))
    after = pt.geometry_task_to_pixel(
        apply_edit(scene, inst["target"], inst["reference_edit"]).scene.geom(inst["target"])
    )
    move = (after.centroid.x - before.centroid.x, before.centroid.y - after.centroid.y)
    return (N / 2 - cx, cy - N / 2), move, box(0, 0, N, N).contains(after)


def _towards(offset: tuple[float, float], move: tuple[float, float]) -> bool:
    a = math.degrees(math.atan2(offset[0], offset[1]) - math.atan2(move[0], move[1])) % 360
    return min(a, 360 - a) <= 45


@pytest.fixture(scope="module")
def frames(helsinki_bench) -> list[tuple[dict, PixelTransform, PixelTransform]]:
    style = load_style()
    out = []
    for line in (helsinki_bench / "edit.jsonl").read_text().splitlines():
        inst = json.loads(line)
        subject = MapSubject.of(inst, None)
        pt, framed = fix_view(subject, inst, style)
        assert framed == ["scene", "reference_edit_result"], inst["id"]
        # the frame the maps had before issue 29: the bounds of the scene and the result
        extra, _ = framed_3857(inst, subject.task_epsg)
        x_min, y_max, res = compute_view([f.geom_3857 for f in subject.features] + extra, style)
        old = PixelTransform.from_view(x_min, y_max, res, N, N, subject.task_epsg)
        out.append((inst, pt, old))
    return out


def test_edit_frames_point_nowhere_and_keep_the_result(frames):
    assert len(frames) >= 600
    off_centre, towards, outside = 0, 0, []
    old_off, old_towards = 0, 0
    for inst, pt, old in frames:
        offset, move, inside = _offset_and_move(pt, inst)
        if not inside:
            outside.append(inst["id"])
        if math.hypot(*offset) > 0.5 and math.hypot(*move) > 0.5:
            off_centre += 1
            towards += _towards(offset, move)
        offset, move, _ = _offset_and_move(old, inst)
        if math.hypot(*offset) > 0.5 and math.hypot(*move) > 0.5:
            old_off += 1
            old_towards += _towards(offset, move)
    assert outside == []
    # symmetric frames: the frame's centre is the scene's to within half a pixel on every map
    assert off_centre == 0 or towards / off_centre <= 0.35, (towards, off_centre)
    assert off_centre <= 0.01 * len(frames)
    # the old framing pointed towards the solution (chance: 25 %)
    assert old_off > 100 and old_towards / old_off > 0.45, (old_towards, old_off)
