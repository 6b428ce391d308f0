"""Every feature and every constraint of an instance stays identifiable on the canvas and in the
export (issue 31 item 3): each has a key — a marker symbol with its number or id, which the label
engine cannot drop — drawn where it is (checked in the rendered pixels), and the exported figure
lists every key in its key panel."""

from __future__ import annotations

import json

from qgis.core import QgsLayoutItemLabel, QgsMapRendererSequentialJob, QgsMapSettings, QgsProject
from qgis.PyQt.QtGui import QColor, QImage

from plugin.core.constraint_layers import label_text
from scoring.score import score_edit
from tests.plugin.test_drawings import _show_canvas

WRONG = {"operations": [{"op": "translate", "dx": 137.0, "dy": -61.0}]}
PX = 900


def _shown(inst):
    group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
    return [n.layer() for n in group.findLayers() if n.layer().fields().indexOf("pool") < 0]


def _render(dock, layers):
    # The canvas's own frame and size: the dock places labels for what the analyst sees.
    settings = QgsMapSettings(dock.iface.mapCanvas().mapSettings())
    settings.setLayers(layers)
    settings.setBackgroundColor(QColor("white"))
    job = QgsMapRendererSequentialJob(settings)
    job.start()
    job.waitForFinished()
    return job.renderedImage(), settings, job.takeLabelingResults()


def _differs_near(a: QImage, b: QImage, x: int, y: int, r: int = 18) -> bool:
    # Within a few mm: a feature key sits up and right of its feature.
    return any(
        a.pixel(i, j) != b.pixel(i, j)
        for i in range(max(0, x - r), min(PX, x + r + 1))
        for j in range(max(0, y - r), min(PX, y + r + 1))
    )


def test_every_constraint_and_feature_has_a_drawn_key(dock, small_bench, instances, tmp_path):
    _show_canvas(dock.iface.mapCanvas(), (PX, PX))
    dock.open_benchmark(small_bench)
    edits = [i for i in instances.values() if i["task"] == "edit"]
    assert len(edits) >= 10
    for inst in edits:
        dock.select_instance(inst["id"])
        dock.show_verdict(inst, score_edit(inst, json.dumps(WRONG)).as_dict(), title="wrong")
        shown = _shown(inst)
        by_name = {lyr.name(): lyr for lyr in shown}
        numbers, ids = by_name["constraint numbers"], by_name["feature ids"]
        keyed = {f["key"] for f in numbers.getFeatures()}
        assert keyed == {str(k + 1) for k in range(len(inst["constraints"]))}, inst["id"]
        scene_ids = {f.get("id") or f["properties"]["id"] for f in inst["scene"]["features"]}
        assert {f["key"] for f in ids.getFeatures()} == scene_ids - {inst.get("target", "F0")}
        # Drawn: the pixels at each key differ from the same map without the keys.
        with_keys, settings, labels = _render(dock, shown)
        without, _, _ = _render(dock, [lyr for lyr in shown if lyr not in (numbers, ids)])
        # No label is drawn over a constraint's key (the keys block labels, as QGIS's
        # "Blocking" layers do); labels are drawn above symbols, so this is what could hide one.
        placed = [p for p in labels.labelsWithinRect(settings.visibleExtent()) if not p.isUnplaced]
        for f in numbers.getFeatures():
            if f["slot"] == 0:
                centre = f.geometry().centroid().asPoint()
                covering = [p.labelText for p in placed if p.labelRect.contains(centre)]
                assert not covering, (inst["id"], f["key"], covering)
        m2p = settings.mapToPixel()
        for layer in (numbers, ids):
            for f in layer.getFeatures():
                px = m2p.transform(f.geometry().centroid().asPoint())
                x, y = int(px.x()), int(px.y())
                if 0 <= x < PX and 0 <= y < PX:  # a key outside the frame is in the panel
                    assert _differs_near(with_keys, without, x, y), (inst["id"], f["key"])
        # The export lists every key, in the words of the labels, with the keys drawn.
        from plugin.core.canvas_export import canvas_layout

        lines = [label_text(v) for v in dock.scene.views]
        assert [int(line.split()[0][1:]) for line in lines] == list(range(1, len(inst["constraints"]) + 1))
        dock.export_canvas(tmp_path / f"{inst['id']}.png")
        assert QImage(str(tmp_path / f"{inst['id']}.png")).width() == 1536
        from plugin.core import keys

        layout = canvas_layout(
            dock.iface.mapCanvas(),
            1536,
            inst["id"],
            shown,
            keys.key_lines(dock.scene.views, label_text, inst),
        )
        panel = [i for i in layout.items() if isinstance(i, QgsLayoutItemLabel) and i.id() == "key panel"]
        text = panel[0].text().replace("\n", " ")
        for line in lines:
            assert " ".join(line.split()) in " ".join(text.split()), (inst["id"], line)
        for fid in scene_ids:
            assert f"{fid}:" in text or fid in text.split()
