"""The exported canvas's legend and key panel sit where they cover no feature of the task (the
scene and the edited target), whatever the canvas's framing."""

from __future__ import annotations

import json

from qgis.core import QgsGeometry, QgsLayoutItemLabel, QgsLayoutItemLegend, QgsLayoutItemMap, QgsRectangle

from plugin.core import keys
from plugin.core.canvas_export import canvas_layout
from plugin.core.constraint_layers import label_text
from scoring.score import score_edit

MOVED = {"operations": [{"op": "translate", "dx": 40.0, "dy": -25.0}]}


def _box_on_map(item, map_item, side: float) -> QgsGeometry:
    extent = map_item.extent()
    pos, size = item.positionWithUnits(), item.sizeWithUnits()
    sx, sy = extent.width() / side, extent.height() / side
    left, top = extent.xMinimum() + pos.x() * sx, extent.yMaximum() - pos.y() * sy
    return QgsGeometry.fromRect(QgsRectangle(left, top - size.height() * sy, left + size.width() * sx, top))


def test_legend_and_key_panel_cover_no_task_feature(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    edits = [i for i in instances.values() if i["task"] == "edit"]
    for inst in edits[:4]:
        dock.select_instance(inst["id"])
        dock.show_verdict(inst, score_edit(inst, json.dumps(MOVED)).as_dict(), title="moved")
        shown = [n.layer() for n in dock.scene.group.findLayers()]
        task = [
            lyr
            for lyr in shown
            if lyr.fields().indexOf("attributes") >= 0 or lyr.fields().indexOf("state") >= 0
        ]
        # Tightly framed on the features: every corner starts out over the scene.
        canvas = dock.iface.mapCanvas()
        canvas.setExtent(dock.scene.scene_layers[0].extent())
        layout = canvas_layout(
            canvas, 1536, inst["id"], task, keys.key_lines(dock.scene.views, label_text, inst), task
        )
        side = layout.pageCollection().page(0).pageSize().width()
        map_item = next(i for i in layout.items() if isinstance(i, QgsLayoutItemMap))
        boxes = [i for i in layout.items() if isinstance(i, QgsLayoutItemLegend)]
        boxes += [i for i in layout.items() if isinstance(i, QgsLayoutItemLabel) and i.id() == "key panel"]
        assert len(boxes) == 2
        features = [f.geometry() for lyr in task for f in lyr.getFeatures()]
        for box in boxes:
            on_map = _box_on_map(box, map_item, side)
            assert not [g for g in features if g.intersects(on_map)], (inst["id"], type(box).__name__)
