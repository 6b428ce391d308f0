"""The user's layers survive every dock action (issue 31 item 5): a layer QGIS or the user put
inside one of the plugin's groups (a Processing output, a layer dragged in) outlives selecting
another instance, drawing a verdict, a human edit and a reload; the plugin removes only the layers
it created (tracked by their own id). A reload leaves no second instance group (item 6), and an
unsubmitted human edit is asked about before it is dropped."""

from __future__ import annotations

import json

from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtWidgets import QApplication, QMessageBox

from scoring.score import score_edit

WRONG = {"operations": [{"op": "translate", "dx": 137.0, "dy": -61.0}]}


def _edits(instances) -> list[dict]:
    return [i for i in instances.values() if i["task"] == "edit"]


def _top_group(inst):
    return QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")


def _users_layer(name: str) -> QgsVectorLayer:
    layer = QgsVectorLayer("Point?crs=EPSG:3067&field=id:string", name, "memory")
    assert layer.isValid()
    return layer


def _instance_groups() -> list[str]:
    root = QgsProject.instance().layerTreeRoot()
    return [g.name() for g in root.children() if g.name().startswith("Spatial Gap: ")]


def test_layers_not_created_by_the_plugin_survive_every_action(dock, small_bench, instances):
    project = QgsProject.instance()
    first, second = _edits(instances)[:2]
    dock.open_benchmark(small_bench)
    dock.select_instance(first["id"])
    # As Processing places an output in the selected group, and as a user drags one in, deeper.
    output = _users_layer("processing output")
    project.addMapLayer(output, False)
    _top_group(first).insertLayer(0, output)
    dragged = _users_layer("dragged in")
    project.addMapLayer(dragged, False)
    _top_group(first).findGroup("scene").addLayer(dragged)
    mine = {output.id(), dragged.id()}
    plugin_ids = {n.layerId() for n in _top_group(first).findLayers()} - mine

    dock.show_verdict(first, score_edit(first, json.dumps(WRONG)).as_dict(), title="wrong")  # redraw
    dock.select_instance(second["id"])  # the first instance's group goes
    assert mine <= set(project.mapLayers()), "a layer the plugin did not create was removed"
    assert not plugin_ids & set(project.mapLayers()), "the plugin left its own layers behind"
    root_ids = {n.layerId() for n in project.layerTreeRoot().findLayers()}
    assert mine <= root_ids  # still in the layer tree, so still drawn
    assert _top_group(first) is None
    # The human edit's group, the constraint groups and the dock's clearing: same rule.
    dock.human_panel.analyst_edit.setText("kept")
    dock.start_human_edit()
    edit_group = _top_group(second).findGroup("human edit")
    third = _users_layer("in the edit group")
    project.addMapLayer(third, False)
    edit_group.addLayer(third)
    dock.human.discard_edit()
    dock.scene.clear()
    assert {*mine, third.id()} <= set(project.mapLayers())
    assert not [
        n for n in project.layerTreeRoot().findLayers() if n.layer().customProperty("spatialgap/created")
    ]


def test_a_reload_leaves_one_instance_group(qgis_iface, qgis_new_project, small_bench, instances):
    from plugin.gui.dock import SpatialGapDock

    inst = _edits(instances)[0]
    other = _edits(instances)[1]
    old = SpatialGapDock(qgis_iface)
    old.open_benchmark(small_bench)
    old.select_instance(inst["id"])
    old.deleteLater()  # the plugin unloaded: its dock goes, its drawing stays on the map
    new = SpatialGapDock(qgis_iface)  # loaded again
    new.open_benchmark(small_bench)
    new.select_instance(other["id"])
    assert _instance_groups() == [f"Spatial Gap: {other['id']}"]
    new.select_instance(inst["id"])
    assert _instance_groups() == [f"Spatial Gap: {inst['id']}"]
    new.deleteLater()


def _answer_next_box(button) -> None:
    """Click `button` in the next modal question, from the event loop (exec() blocks this code)."""

    def click():
        box = QApplication.activeModalWidget()
        if isinstance(box, QMessageBox):
            box.button(button).click()
        else:
            QTimer.singleShot(20, click)

    QTimer.singleShot(0, click)


def test_an_unsubmitted_edit_is_asked_about(dock, small_bench, instances):
    from qgis.core import QgsGeometry

    first, second = _edits(instances)[:2]
    dock.open_benchmark(small_bench)
    dock.select_instance(first["id"])
    dock.human_panel.analyst_edit.setText("asked")
    layer = dock.start_human_edit()
    feature = next(layer.getFeatures())
    moved = QgsGeometry(feature.geometry())
    moved.translate(15.0, 0.0)
    assert layer.changeGeometry(feature.id(), moved)
    _answer_next_box(QMessageBox.StandardButton.Cancel)
    dock.select_instance(second["id"])
    assert dock.current["id"] == first["id"] and dock.human_edit is not None  # nothing lost
    assert dock.list.current_id() == first["id"]
    _answer_next_box(QMessageBox.StandardButton.Discard)
    dock.select_instance(second["id"])
    assert dock.current["id"] == second["id"] and dock.human_edit is None
    # An untouched edit layer is dropped without a question (no box: this would block).
    dock.start_human_edit()
    dock.select_instance(first["id"])
    assert dock.current["id"] == first["id"]


def test_messages_fit_the_bar_and_a_missing_name_is_a_warning(dock, small_bench, instances):
    from plugin.utils.compat import MSG_CRITICAL, MSG_INFO, MSG_WARNING

    bar = dock.iface.messageBar()  # pytest-qgis's: it records (level, "title:text")
    bar.clear_messages()
    dock.message("first line\nsecond line")
    assert bar.get_messages(MSG_INFO) == ["Spatial Gap:first line — second line"]  # nothing cut off
    dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["task"] == "qa")
    dock.select_instance(inst["id"])
    dock.human_panel.analyst_edit.setText("")
    dock.human_panel.answer_edit.setText("F1")
    bar.clear_messages()
    assert dock.submit_human_answer() is None
    assert any("analyst" in m for m in bar.get_messages(MSG_WARNING))
    assert not bar.get_messages(MSG_CRITICAL)


def test_no_exit_prompt_for_the_plugins_drawings_but_one_for_an_edit(dock, small_bench, instances):
    """QGIS asks about "temporary scratch layers" on exit unless a layer says skipMemoryLayersCheck:
    the plugin's drawings (redrawn from the benchmark at will) say so, the analyst's edit does not."""
    from plugin.core.layer_util import SKIP_MEMORY_CHECK

    inst = _edits(instances)[0]
    dock.open_benchmark(small_bench)
    dock.select_instance(inst["id"])
    dock.human_panel.analyst_edit.setText("exit")
    edit = dock.start_human_edit()
    drawn = [n.layer() for n in _top_group(inst).findLayers()]
    assert edit in drawn
    assert all(lyr.customProperty(SKIP_MEMORY_CHECK) == 1 for lyr in drawn if lyr is not edit)
    assert edit.customProperty(SKIP_MEMORY_CHECK) is None
    dock.human.discard_edit()
