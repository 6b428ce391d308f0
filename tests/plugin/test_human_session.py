"""The human baseline: a blind session (no verdict or reference until it ends, one answer per
instance), live constraint feedback while F0 moves, and cleanup after a submit."""

from __future__ import annotations

import json

from qgis.core import QgsGeometry, QgsProject

from scoring.constraints.edits import apply_geometry_ops
from scoring.geometry.scene import Scene
from tests.plugin.conftest import wait_for


def _qa(instances):
    return next(i for i in instances.values() if i["task"] == "qa" and i["relation"] == "D01")


def _edit(instances):
    return next(i for i in instances.values() if i["task"] == "edit" and i["relation"] == "M02")


def _moved(inst, operations):
    """F0 as QGIS's move tool leaves it (vertices kept in order)."""
    return apply_geometry_ops(Scene.from_geojson(inst["scene"]).geom("F0"), operations)


def _predictions(small_bench, name):
    path = small_bench / "runs" / name / "predictions.jsonl"
    return path.read_text(encoding="utf-8").splitlines() if path.is_file() else []


def test_blind_session_holds_verdicts_back_and_takes_one_answer(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    inst = _qa(instances)
    dock.select_instance(inst["id"])
    dock.human_panel.analyst_edit.setText("blinda")
    dock.human_panel.blind_btn.setChecked(True)
    assert not dock.reveal_btn.isEnabled()
    before = len(_predictions(small_bench, "human-blinda-geojson-qa"))
    dock.human_panel.answer_edit.setText(str(inst["answer"]))
    verdict = dock.submit_human_answer()
    assert verdict is not None and verdict["verdict"] == "correct"
    shown = dock.verdict_view.toPlainText()
    assert "correct" not in shown and "blind session" in shown
    assert inst["id"] not in dock.verdicts  # not in the list's verdict column either
    assert dock.human_panel.answer_edit.text() == ""  # cleared for the next instance
    # A second answer to the same instance is refused and not recorded.
    dock.human_panel.answer_edit.setText("F9")
    assert dock.submit_human_answer() is None
    assert len(_predictions(small_bench, "human-blinda-geojson-qa")) == before + 1
    # Ending the session shows the verdicts.
    dock.human_panel.blind_btn.setChecked(False)
    assert dock.verdicts[inst["id"]] == "correct"
    assert "correct" in dock.verdict_view.toPlainText()
    assert dock.reveal_btn.isEnabled()


def test_blind_session_draws_no_constraint_verdicts(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    inst = _edit(instances)
    dock.human_panel.blind_btn.setChecked(True)
    dock.select_instance(inst["id"])
    group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
    assert group.findGroup("constraints: initial scene") is None
    assert "✔" not in dock.verdict_view.toPlainText() and "✘" not in dock.verdict_view.toPlainText()
    dock.human_panel.blind_btn.setChecked(False)


def test_live_feedback_follows_f0_and_submit_cleans_up(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    inst = _edit(instances)
    dock.select_instance(inst["id"])
    dock.human_panel.analyst_edit.setText("live")
    layer = dock.start_human_edit()
    feature = next(layer.getFeatures())
    wrong = _moved(inst, [{"op": "translate", "dx": 120.0, "dy": 0.0}])
    assert layer.changeGeometry(feature.id(), QgsGeometry.fromWkt(wrong.wkt))
    wait_for(lambda: "live check" in dock.verdict_view.toPlainText(), 5)
    assert "✘" in dock.verdict_view.toPlainText()
    right = _moved(inst, inst["reference_edit"]["operations"])
    assert layer.changeGeometry(feature.id(), QgsGeometry.fromWkt(right.wkt))
    wait_for(lambda: "✘" not in dock.verdict_view.toPlainText(), 5)
    assert dock.verdict_view.toPlainText().count("✔") == len(inst["constraints"])
    group = QgsProject.instance().layerTreeRoot().findGroup(f"Spatial Gap: {inst['id']}")
    assert group.findGroup("constraints: live check") is not None
    verdict = dock.submit_human_edit()
    assert verdict is not None and verdict["verdict"] == "correct", json.dumps(verdict)[:300]
    # The editable copy is gone; the verdict's drawing shows the edited F0.
    assert group.findGroup("human edit") is None
    assert not any(lyr.isEditable() for lyr in QgsProject.instance().mapLayers().values())
    assert dock.human_edit is None and not dock.human_panel.submit_edit_btn.isEnabled()


def test_the_analyst_can_answer_cannot_be_determined(dock, small_bench, instances):
    """The human baseline's refusal: right on a variant built unanswerable (QA and an edit no edit can
    satisfy), a false refusal on an answerable item; the reason shows only with the reference."""
    from plugin.gui.instance_text import instance_html

    dock.open_benchmark(small_bench)
    dock.human_panel.analyst_edit.setText("refuser")
    variants = [i for i in instances.values() if "unanswerable" in i]
    assert {i["task"] for i in variants} == {"qa", "edit"}
    for inst in variants:
        dock.select_instance(inst["id"])
        assert dock.human_panel.refuse_btn.isEnabled()
        verdict = dock.submit_human_refusal()
        assert verdict is not None and verdict["verdict"] == "correct_refusal", inst["id"]
        assert dock.verdicts[inst["id"]] == "correct_refusal"
        assert "Unanswerable by design" not in instance_html(inst, reveal=False)
        shown = instance_html(inst, reveal=True)
        assert "Unanswerable by design" in shown and inst["unanswerable"]["kind"] in shown
    answerable = _qa(instances)
    dock.select_instance(answerable["id"])
    verdict = dock.submit_human_refusal()
    assert verdict is not None and (verdict["verdict"], verdict["reason"]) == ("wrong", "refusal")
    qa_lines = _predictions(small_bench, "human-refuser-geojson-qa")
    assert len(qa_lines) == sum(1 for i in variants if i["task"] == "qa") + 1
    assert all("cannot be determined" in json.loads(line)["text"] for line in qa_lines)
