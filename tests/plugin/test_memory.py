"""The dock remembers (QgsSettings) its benchmark, filters, endpoint, analyst, splitter and where
it was; nothing is enabled that cannot work yet."""

from __future__ import annotations

import plugin
from plugin.core import memory


def _reopened(qgis_iface):
    """A second dock, restored as the plugin restores one."""
    from plugin.gui.dock import SpatialGapDock

    dock = SpatialGapDock(qgis_iface)
    dock.memory.restore()
    return dock


def test_dock_reopens_with_benchmark_filters_and_choices(dock, small_bench, qgis_iface):
    from plugin.core.endpoints import Endpoint, load_endpoints, save_endpoints

    saved = load_endpoints()
    save_endpoints(
        [
            Endpoint(name="a", base_url="http://127.0.0.1:9/v1", model="m"),
            Endpoint(name="b", base_url="http://127.0.0.1:9/v1", model="m"),
        ]
    )
    try:
        dock.reload_endpoints()
        assert dock.open_benchmark(small_bench)
        dock.filters.select("task", "edit")
        dock.filters.select("relation", "M01")
        dock.filters.verdict_combo.setCurrentIndex(dock.filters.verdict_combo.findData(""))  # "not run"
        dock.filters.text_edit.setText("000")
        dock.model_panel.endpoint_combo.setCurrentText("b")
        dock.model_panel.modality_combo.setCurrentIndex(dock.model_panel.modality_combo.findData("image"))
        dock.human_panel.analyst_edit.setText("ana")
        dock.splitter.setSizes([50, 300, 100])
        dock.splitter.splitterMoved.emit(50, 1)  # what a drag of the handle emits
        sizes = dock.splitter.sizes()
        shown = [dock.list.item(k).text() for k in range(dock.list.count())]

        again = _reopened(qgis_iface)
        try:
            assert again.bench is not None and again.bench.path == dock.bench.path
            assert again.filters.selection() == dock.filters.selection()
            assert [again.list.item(k).text() for k in range(again.list.count())] == shown
            assert again.model_panel.endpoint_combo.currentText() == "b"
            assert again.model_panel.modality == "image"
            assert again.human_panel.analyst == "ana"
            assert again.splitter.sizes() == sizes
        finally:
            again.deleteLater()
    finally:
        save_endpoints(saved)


def test_a_vanished_benchmark_is_not_reopened(dock, small_bench, qgis_iface, tmp_path):
    memory.set_value("benchmark", str(tmp_path / "gone"))
    again = _reopened(qgis_iface)
    try:
        assert again.bench is None and again.list.count() == 0
    finally:
        again.deleteLater()


def test_nothing_enabled_that_cannot_work_yet(dock, small_bench, instances):
    from plugin.core.endpoints import load_endpoints, save_endpoints

    saved = load_endpoints()
    save_endpoints([])
    try:
        dock.reload_endpoints()
        buttons = dock.export_panel.buttons
        assert not any(b.isEnabled() for b in buttons.values())  # no benchmark yet
        dock.open_benchmark(small_bench)
        assert buttons["score"].isEnabled() and not buttons["map"].isEnabled()
        dock.select_instance(next(iter(instances)))
        assert buttons["map"].isEnabled() and buttons["canvas"].isEnabled()
        # No endpoint configured: nothing to send to.
        assert not dock.model_panel.send_btn.isEnabled() and not dock.model_panel.send_all_btn.isEnabled()
        assert "Endpoints" in dock.model_panel.send_btn.toolTip()
    finally:
        save_endpoints(saved)


def test_dock_reopens_where_it_was(qgis_iface, small_bench):
    """Open at the last QGIS exit: the plugin opens it again, in the area it was in."""
    from qgis.PyQt.QtCore import Qt

    memory.set_value("dock/visible", True)
    memory.set_value("dock/area", int(Qt.DockWidgetArea.LeftDockWidgetArea))
    memory.set_value("benchmark", str(small_bench))
    p = plugin.classFactory(qgis_iface)
    p.initGui()
    try:
        assert p.dock is not None and p.dock.bench is not None
        assert memory.dock_area() == Qt.DockWidgetArea.LeftDockWidgetArea
    finally:
        p.unload()
    # Unloading (QGIS closing) hides the dock without forgetting that it was open.
    assert memory.dock_was_open()
