"""Help buttons in the dock and its dialogs; the Score runs dialog leaves failed runs unticked and
reports each run's coverage; a score counts unsent samples as errors only when asked."""

from __future__ import annotations

import json

from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtWidgets import QDialogButtonBox

from plugin.gui import help as plugin_help


def test_help_links_point_at_the_readme_and_the_relation(monkeypatch, dock, small_bench, instances):
    opened = []
    monkeypatch.setattr(plugin_help, "open_url", lambda url: opened.append(url) or True)
    assert plugin_help.relation_url("O02").endswith("/resources/relations.md#o02-before--after-along-a-route")
    assert plugin_help.readme_url().endswith("#the-qgis-plugin")
    dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["relation"] == "O02")
    dock.select_instance(inst["id"])
    dock.relation_help_btn.click()
    assert opened == [plugin_help.relation_url("O02")]


def _has_help(buttons: QDialogButtonBox) -> bool:
    return buttons.button(QDialogButtonBox.StandardButton.Help) is not None


def test_dialogs_have_help(qgis_app, tmp_path):
    from plugin.gui.run_choice import ChooseRunsDialog
    from plugin.gui.settings_dialog import EndpointsDialog
    from plugin.install.installer import InstallDialog

    for dialog in (
        EndpointsDialog(None),
        ChooseRunsDialog(None, []),
        InstallDialog([("sgdummy", "sgdummy>=1.0", "python3-sgdummy")]),
    ):
        boxes = dialog.findChildren(QDialogButtonBox)
        assert any(_has_help(b) for b in boxes), type(dialog).__name__
        dialog.deleteLater()


def _run(tmp_path, name, status, answered, instances, task="qa"):
    run = tmp_path / name
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({"task": task, "forms": ["open"], "status": status}))
    qa = [i for i in instances.values() if i["task"] == task][:answered]
    lines = [
        json.dumps({"sample": f"{i['id']}|open", "final": True, "status": "ok", "text": "Answer: x"})
        for i in qa
    ]
    (run / "predictions.jsonl").write_text("\n".join(lines) + ("\n" if lines else ""))
    return run


def test_failed_runs_are_not_ticked_and_coverage_is_shown(qgis_app, tmp_path, instances):
    from plugin.gui.run_choice import ChooseRunsDialog, run_info

    all_instances = list(instances.values())
    n_qa = sum(1 for i in all_instances if i["task"] == "qa")
    good = run_info(_run(tmp_path, "good", "incomplete", 3, instances), all_instances)
    aborted = run_info(_run(tmp_path, "aborted", "aborted", 1, instances), all_instances)
    empty = run_info(_run(tmp_path, "empty", "complete", 0, instances), all_instances)
    assert (good.answered, good.total, good.failed) == (3, n_qa, False)
    assert aborted.failed and empty.failed
    dialog = ChooseRunsDialog(None, [good, aborted, empty])
    texts = [dialog.run_list.item(k).text() for k in range(dialog.run_list.count())]
    assert f"3/{n_qa} answered" in texts[0]
    states = [dialog.run_list.item(k).checkState() for k in range(dialog.run_list.count())]
    assert states == [Qt.CheckState.Checked, Qt.CheckState.Unchecked, Qt.CheckState.Unchecked]
    assert dialog.chosen() == [good.path]
    assert not dialog.count_unsent  # unsent samples are not errors unless asked


def test_help_opens_the_shipped_documentation_at_its_section(qgis_app):
    from plugin.gui import docs

    viewer_count = len(docs._OPEN)
    assert plugin_help.open_url(plugin_help.relation_url("O02"))
    relation = docs._OPEN[-1]
    assert relation.heading == "O02 Before / after along a route"
    assert relation.browser.verticalScrollBar().value() > 0  # scrolled down to it
    assert plugin_help.open_url(plugin_help.readme_url())
    assert docs._OPEN[-1].heading == "The QGIS plugin"
    for viewer in docs._OPEN[viewer_count:]:
        viewer.close()
