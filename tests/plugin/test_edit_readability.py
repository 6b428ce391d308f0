"""An edit drawn on the canvas reads: one edit per relation (the target moved 150 m, so most
constraints break) is drawn in a 900 px canvas and rendered, and on the rendered map every
constraint's label is placed, none over the edited target, a key or another label; the edited
target and its "after" label are there, on top; each constraint's zones have a hue of their own,
a zone to avoid a pattern of its own; the legend is open."""

from __future__ import annotations

import json

import pytest
from qgis.core import (
    QgsGeometry,
    QgsLinePatternFillSymbolLayer,
    QgsMapRendererSequentialJob,
    QgsMapSettings,
    QgsPointXY,
    QgsProject,
    QgsRectangle,
    QgsShapeburstFillSymbolLayer,
)
from qgis.PyQt.QtGui import QColor

from plugin.core import keys
from scoring.score import score_edit
from tests.plugin.test_drawings import _show_canvas

MOVED = {"operations": [{"op": "translate", "dx": 137.0, "dy": -61.0}]}


@pytest.fixture(scope="module")
def every_relation(tmp_path_factory):
    """One edit instance per relation that has edits (embedded Helsinki)."""
    from scoring.build.builder import build_benchmark

    out = tmp_path_factory.mktemp("every-relation") / "hel"
    build_benchmark(None, out, seed=0, n_qa=0, n_edit=1, jobs=1, progress=False)
    chosen: dict[str, dict] = {}
    for line in (out / "edit.jsonl").read_text(encoding="utf-8").splitlines():
        inst = json.loads(line)
        chosen.setdefault(inst["relation"], inst)
    return out, list(chosen.values())


def _group_layers(inst) -> list:
    group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
    return [n.layer() for n in group.findLayers()]


def _key_shapes(layer, mm: float) -> list[QgsGeometry]:
    """Each key's symbol as drawn (keys.py: slot offsets in mm), in map units."""
    out = []
    for f in layer.getFeatures():
        p = f.geometry().asPoint() if not f.geometry().isMultipart() else f.geometry().asMultiPoint()[0]
        if f["kind"] == "constraint":
            centre = QgsPointXY(p.x() + f["slot"] * keys.SLOT_MM * mm, p.y())
            out.append(QgsGeometry.fromPointXY(centre).buffer(keys.KEY_SIZE_MM / 2 * mm, 12))
        else:
            shift = keys.FEATURE_SHIFT_MM if f["beside"] else 0.0
            cx = p.x() + (shift + f["slot"] * keys.FEATURE_SLOT_MM) * mm
            cy = p.y() + shift * mm
            w, h = keys.FEATURE_TAG_MM[0] / 2 * mm, keys.FEATURE_TAG_MM[1] / 2 * mm
            out.append(QgsGeometry.fromRect(QgsRectangle(cx - w, cy - h, cx + w, cy + h)))
    return out


def _render(canvas, layers):
    settings = QgsMapSettings(canvas.mapSettings())
    settings.setLayers(layers)
    settings.setBackgroundColor(QColor("white"))
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    results = job.takeLabelingResults()
    placed = [p for p in results.labelsWithinRect(settings.visibleExtent()) if not p.isUnplaced]
    return job.renderedImage(), placed, settings


def _check_labels(inst, dock, placed, settings, shown) -> None:
    by_text = {p.labelText: p for p in placed}
    assert len(by_text) == len(placed), "a label drawn twice"
    numbers = {
        v.index + 1 for v in dock.scene.views if any(g is not None and not g.is_empty for _, g in v.parts)
    }
    labelled = {int(t.split()[0][1:]) for t in by_text if t.startswith("#")}
    assert labelled == numbers, (inst["id"], sorted(numbers - labelled))
    assert "F0 (after)" in by_text and "F0 (before)" in by_text, inst["id"]
    edited = next(
        lyr
        for lyr in shown
        if lyr.fields().indexOf("state") >= 0 and next(lyr.getFeatures())["state"] == "edited"
    )
    target = next(edited.getFeatures()).geometry()
    mm = settings.mapUnitsPerPixel() * settings.outputDpi() / 25.4
    key_layers = [lyr for lyr in shown if lyr.fields().indexOf("slot") >= 0]
    key_shapes = [g for lyr in key_layers for g in _key_shapes(lyr, mm)]
    rects = [(p.labelText, QgsGeometry.fromRect(p.labelRect)) for p in placed]
    for n, (text, rect) in enumerate(rects):
        # The target's own label may sit inside its polygon, as QGIS labels polygons.
        inside_own = text.startswith("F0 (after)") and target.contains(rect)
        assert inside_own or not rect.intersects(target), (inst["id"], text, "over the edited target")
        assert not [k for k in key_shapes if k.intersects(rect)], (inst["id"], text, "over a key")
        others = [t for t, r in rects[n + 1 :] if r.intersects(rect)]
        assert not others, (inst["id"], text, "over", others)


def _check_on_top(inst, image, settings, shown) -> None:
    edited = shown[0]
    assert edited.fields().indexOf("state") >= 0, "the edited target is not the top layer"
    geom = next(edited.getFeatures()).geometry()
    if geom.type() == 2:  # a polygon's fill is blended: its top position is what tells
        return
    at = geom.interpolate(geom.length() / 2) if geom.type() == 1 else geom
    point = at.asPoint() if not at.isMultipart() else at.asMultiPoint()[0]
    px = settings.mapToPixel().transform(point)
    color = image.pixelColor(int(px.x()), int(px.y()))
    assert color.red() > 200 and 90 < color.green() < 170 and color.blue() < 80, (inst["id"], color.name())


def _check_zones(inst, shown) -> None:
    """Per constraint one hue; a zone to avoid hatched, a zone that holds banded."""
    hues: dict[int, set[str]] = {}
    for layer in shown:
        if layer.fields().indexOf("constraint") < 0 or layer.renderer().type() != "RuleRenderer":
            continue
        for rule in layer.renderer().rootRule().children():
            expr = rule.filterExpression()
            if '"constraint" = ' not in expr:
                continue
            number = int(expr.rsplit("=", 1)[1])
            hues.setdefault(number, set()).add(rule.symbol().color().name())
            kinds = {type(sl) for sl in rule.symbol().symbolLayers()}
            if "'forbidden'" in expr and layer.geometryType() == 2:
                assert QgsLinePatternFillSymbolLayer in kinds, inst["id"]
            if "'allowed'" in expr and layer.geometryType() == 2:
                assert QgsShapeburstFillSymbolLayer in kinds, inst["id"]
    seen: dict[str, int] = {}
    for number, colors in hues.items():
        for color in colors:
            assert seen.setdefault(color, number) == number, (inst["id"], color, "shared by two constraints")


def test_every_relations_edit_reads_on_the_rendered_canvas(dock, every_relation):
    bench, chosen = every_relation
    canvas = dock.iface.mapCanvas()
    _show_canvas(canvas)
    dock.open_benchmark(bench)
    assert len(chosen) >= 25
    for inst in chosen:
        dock.select_instance(inst["id"])
        # Moved 150 m; an instance that only allows attribute edits: its reference edit.
        edit = (
            MOVED if "translate" in inst.get("allowed_operations", ["translate"]) else inst["reference_edit"]
        )
        dock.show_verdict(inst, score_edit(inst, json.dumps(edit)).as_dict(), title="moved")
        shown = [lyr for lyr in _group_layers(inst) if lyr.fields().indexOf("pool") < 0]
        image, placed, settings = _render(canvas, shown)
        _check_labels(inst, dock, placed, settings, shown)
        _check_on_top(inst, image, settings, shown)
        _check_zones(inst, shown)
        group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
        assert all(node.isExpanded() for node in group.findLayers()), "a legend is folded"


def test_labels_are_placed_again_after_a_zoom(dock, every_relation):
    from tests.plugin.conftest import wait_for

    bench, chosen = every_relation
    canvas = dock.iface.mapCanvas()
    _show_canvas(canvas)
    dock.open_benchmark(bench)
    inst = next(i for i in chosen if i["relation"] == "M14")
    dock.select_instance(inst["id"])
    dock.show_verdict(inst, score_edit(inst, json.dumps(MOVED)).as_dict(), title="moved")
    before = list(dock.scene._label_layers)
    canvas.zoomByFactor(0.6)  # closer: the labels placed for the old frame would now collide
    wait_for(lambda: dock.scene._label_layers != before, 10)
    shown = [lyr for lyr in _group_layers(inst) if lyr.fields().indexOf("pool") < 0]
    image, placed, settings = _render(canvas, shown)
    _check_labels(inst, dock, placed, settings, shown)
    _check_on_top(inst, image, settings, shown)
