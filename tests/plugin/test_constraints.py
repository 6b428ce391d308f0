"""Constraint explanations: geometry (scoring.constraints.explain) and the layers drawn from it agree with
the scorer's own measured values and verdicts."""

from __future__ import annotations

import json
import math

import pytest
import shapely
from qgis.core import QgsProject

from scoring import oracle
from scoring.constraints.edits import apply_edit
from scoring.constraints.explain import edit_from_geometries, explain_constraints
from scoring.geometry.scene import Scene
from scoring.score import score_edit


def _edited(inst, edit):
    return apply_edit(Scene.from_geojson(inst["scene"]), inst["target"], edit).scene


WRONG = {"operations": [{"op": "translate", "dx": 137.0, "dy": -61.0}]}


def test_explain_measures_match_the_checker(instances):
    """Every drawn measurement has the measured length / direction the checker reports."""
    checked = 0
    # variants built infeasible have no edit to measure (tests/relations/test_unanswerable.py)
    for inst in (i for i in instances.values() if i["task"] == "edit" and "unanswerable" not in i):
        for edit in (inst["reference_edit"], WRONG):
            verdict = score_edit(inst, json.dumps(edit))
            if verdict.constraints is None:  # an operation this instance does not allow
                assert "translate" not in inst["allowed_operations"]
                continue
            scene = _edited(inst, edit)
            views = explain_constraints(inst, scene)
            assert [v.passed for v in views] == [c["passed"] for c in verdict.constraints]
            # From the scorer's (1 cm) GeoJSON scene the values agree within rounding.
            rounded = explain_constraints(inst, verdict.edited_scene)
            for r, c in zip(rounded, verdict.constraints, strict=False):
                if isinstance(c["measured"], float):
                    assert r.measured == pytest.approx(c["measured"], abs=0.05)
            for v, c in zip(views, verdict.constraints, strict=False):
                assert v.measured == c["measured"]
                measured_lines = [g for r, g in v.parts if r == "measured"]
                if v.measure in ("min_distance", "boundary_distance") and measured_lines:
                    assert measured_lines[0].length == pytest.approx(v.measured, abs=0.01)
                    checked += 1
                if v.measure == "bearing" and measured_lines:
                    (x0, y0), (x1, y1) = measured_lines[0].coords
                    assert (
                        oracle.angle_diff(math.degrees(math.atan2(x1 - x0, y1 - y0)) % 360, v.measured) < 1e-6
                    )
                    checked += 1
                if v.measure in ("direction4", "direction8", "bearing", "displacement", "manhattan_distance"):
                    # The moving feature's reference point lies in the allowed region iff it passes.
                    allowed = shapely.union_all([g for r, g in v.parts if r == "allowed"])
                    if v.measure == "displacement":
                        p = oracle.ref_point(scene.geom(inst["target"]))
                    else:
                        p = oracle.ref_point(
                            scene.geom(
                                inst["constraints"][v.index]["args"][1]
                                if v.measure.startswith(("direction", "bearing"))
                                else inst["target"]
                            )
                        )
                    d = allowed.boundary.distance(p)
                    if d > 0.05:  # far from the edge: no rounding ambiguity
                        assert allowed.contains(p) == v.passed, (inst["id"], v.text)
                        checked += 1
    assert checked >= 10


def test_constraint_layers_carry_measured_values_and_verdicts(dock, small_bench, instances):
    dock.open_benchmark(small_bench)
    for rel in ("M01", "M15", "D04", "O03", "T11"):
        inst = next(i for i in instances.values() if i["task"] == "edit" and i["relation"] == rel)
        dock.select_instance(inst["id"])
        verdict = score_edit(inst, json.dumps(WRONG)).as_dict()
        dock.show_verdict(inst, verdict, title="wrong")
        group = (
            QgsProject.instance()
            .layerTreeRoot()
            .findGroup(f"Spatial Gap: {inst['id']}")
            .findGroup("constraints: wrong")
        )
        rows = {}
        label_lines = []
        for node in group.findLayers():
            lyr = node.layer()
            if lyr.fields().indexOf("constraint") < 0:
                continue
            # Labelled by the dock's own placement (label_layout), not on this layer.
            assert lyr.renderer().type() == "RuleRenderer"
            for f in lyr.getFeatures():
                rows.setdefault(f["constraint"], []).append((f["passed"], f["measured"], f["label"]))
                label_lines += [t for t in (f["label"] or "").split("\n") if t]
        assert sorted(rows) == [c["index"] + 1 for c in verdict["constraints"]]
        from scoring.constraints.explain import format_value

        for c in verdict["constraints"]:
            parts = rows[c["index"] + 1]
            assert {p[0] for p in parts} == {c["passed"]}
            assert {p[1] for p in parts} == {
                format_value(c["measured"], inst["constraints"][c["index"]].get("unit"))
            }
            # Exactly one label per constraint (stacked when constraints share a geometry).
            mine = [t for t in label_lines if t.startswith(f"#{c['index'] + 1} ")]
            assert len(mine) == 1 and ("✔" if c["passed"] else "✘") in mine[0]
            # The measured value as a sentence ("F0 is disjoint from F1", "... is 12.34 m").
            if isinstance(c["measured"], float):
                assert parts[0][1] in mine[0]
            assert ": true" not in mine[0] and ": false" not in mine[0]
        # The verdict panel lists the same constraints.
        panel = dock.verdict_view.toPlainText()
        assert verdict["verdict"] in panel
        assert panel.count("✔") == sum(c["passed"] for c in verdict["constraints"])
        assert panel.count("✘") == sum(not c["passed"] for c in verdict["constraints"])


def test_hand_edit_is_recovered_and_scored(dock, small_bench, instances):
    """The analyst's move of F0 on the map is turned into an edit and scored like a model's."""
    from qgis.core import QgsGeometry
    from shapely import wkt

    dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["task"] == "edit" and i["relation"] == "M02")
    dock.select_instance(inst["id"])
    dock.human_panel.analyst_edit.setText("ana")
    layer = dock.start_human_edit()
    feat = next(layer.getFeatures())
    # QGIS's move tool keeps the vertices in order (apply_edit snaps to 1 cm, which may restart a
    # ring elsewhere), so the analyst's shape is the reference edit's operations applied as such.
    from scoring.constraints.edits import apply_geometry_ops

    original = Scene.from_geojson(inst["scene"]).geom("F0")
    target = apply_geometry_ops(original, inst["reference_edit"]["operations"])
    assert layer.changeGeometry(feat.id(), QgsGeometry.fromWkt(target.wkt))
    v = dock.submit_human_edit()
    assert v is not None and v["verdict"] == score_edit(inst, json.dumps(inst["reference_edit"])).verdict
    run = small_bench / "runs" / "human-ana-geojson-edit"
    rec = json.loads((run / "predictions.jsonl").read_text().splitlines()[-1])
    edit = json.loads(rec["text"])
    got = apply_edit(Scene.from_geojson(inst["scene"]), "F0", edit).scene.geom("F0")
    assert shapely.hausdorff_distance(got, target) < 0.05
    # A vertex edit cannot be expressed as move / rotate / scale: refused with a reason.
    from scoring.constraints.edits import EditError

    with pytest.raises(EditError):
        poly = wkt.loads(target.wkt)
        coords = list(poly.exterior.coords)
        coords[1] = (coords[1][0] + 30, coords[1][1])
        coords[-1] = coords[0]
        edit_from_geometries(poly, shapely.Polygon(coords))


def test_human_qa_answer_is_a_run(dock, small_bench, instances):
    from scoring.score import score_qa, score_runs

    dock.open_benchmark(small_bench)
    inst = next(i for i in instances.values() if i["task"] == "qa" and i["relation"] == "D01")
    dock.select_instance(inst["id"])
    dock.human_panel.analyst_edit.setText("bob")
    dock.human_panel.answer_edit.setText(str(inst["answer"]))
    v = dock.submit_human_answer()
    assert v["verdict"] == score_qa(inst, f"Answer: {inst['answer']}", form="open").verdict == "correct"
    run = small_bench / "runs" / "human-bob-geojson-qa"
    summary = score_runs(small_bench, [run], small_bench / "results-human", selfcheck=False)
    assert "human-bob" in json.dumps(summary)


def test_hand_attribute_edit(dock, small_bench, instances):
    """Setting an attribute in the attribute form is recorded as a set_attribute edit."""
    inst = next((i for i in instances.values() if i["task"] == "edit" and i["relation"] == "O06"), None)
    if inst is None:
        pytest.skip("no O06 edit instance in this extract")
    dock.open_benchmark(small_bench)
    dock.select_instance(inst["id"])
    dock.human_panel.analyst_edit.setText("cy")
    layer = dock.start_human_edit()
    feat = next(layer.getFeatures())
    idx = layer.fields().indexOf("layer")
    assert idx >= 0
    assert layer.changeAttributeValue(feat.id(), idx, 5)
    v = dock.submit_human_edit()
    assert v["verdict"] == "correct", v
    rec = json.loads(
        (small_bench / "runs" / "human-cy-geojson-edit" / "predictions.jsonl").read_text().splitlines()[-1]
    )
    assert json.loads(rec["text"]) == {"operations": [{"op": "set_attribute", "name": "layer", "value": 5}]}
