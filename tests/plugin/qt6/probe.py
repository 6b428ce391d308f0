"""Run the plugin's Qt widgets under PyQt6 (as QGIS 4 does), offscreen, with the stand-in `qgis`
package written by stub.py. Argument: a benchmark directory. Prints "qt6 widgets ok" at the end;
any Qt 5-only form (an unscoped enum, int() of an enum, exec_) raises on the way."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from PyQt6.QtCore import QT_VERSION_STR, Qt
from PyQt6.QtWidgets import QApplication

sys.path.insert(0, str(Path(__file__).resolve().parent))
from stub import write_stub


def _instances(bench: Path) -> list[dict]:
    out = []
    for name in ("qa.jsonl", "edit.jsonl"):
        for line in (bench / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line))
    return out


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="qt6-stub-"))
    write_stub(root)
    sys.path.insert(0, str(root))
    app = QApplication.instance() or QApplication(sys.argv)
    assert QT_VERSION_STR.startswith("6"), QT_VERSION_STR
    from plugin.gui.browser import InstanceTable
    from plugin.gui.confirm import SendConfirmation
    from plugin.gui.filters import FilterPanel
    from plugin.gui.model_panel import ModelPanel
    from plugin.gui.outcome import DetailsDialog
    from plugin.gui.run_choice import ChooseRunsDialog, RunInfo
    from plugin.utils.compat import enum_int

    instances = _instances(Path(sys.argv[1]))
    filters = FilterPanel()
    filters.fill(instances)
    filters.cascade()
    filters.select("task", "edit")
    kept = [i for i in instances if filters.selection().keeps(i, {})]
    assert kept and all(i["task"] == "edit" for i in kept)
    table = InstanceTable()
    table.fill(instances, {instances[0]["id"]: "correct"}, {}, None)
    assert table.select_id(instances[1]["id"]) and table.current_id() == instances[1]["id"]
    ModelPanel().set_running(True, 40.0)
    runs = ChooseRunsDialog(
        None,
        [RunInfo(Path(tempfile.gettempdir()) / "r1", "complete", 2, 2), RunInfo(Path("r2"), "aborted", 0, 2)],
    )
    assert [p.name for p in runs.chosen()] == ["r1"]
    DetailsDialog("title", "<b>not bold</b>").show()
    confirm = SendConfirmation(len(instances), "1.20 USD", "model-x")
    assert str(len(instances)) in confirm.text()
    assert enum_int(Qt.DockWidgetArea.RightDockWidgetArea) == 2
    from plugin.gui.settings_dialog import EndpointsDialog

    endpoints = EndpointsDialog()
    endpoints._add()
    endpoints._tested(
        False, "HTTP 502 from http://proxy/v1/models: <html><title>502 Bad Gateway</title></html>"
    )
    assert endpoints.result.text() == "✘ HTTP 502 from http://proxy/v1/models: 502 Bad Gateway"
    app.processEvents()
    print("qt6 widgets ok")


if __name__ == "__main__":
    main()
