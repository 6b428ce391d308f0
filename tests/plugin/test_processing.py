"""Every Processing algorithm runs through processing.run."""

from __future__ import annotations

import json

import pytest
from qgis.core import QgsApplication, QgsFeature, QgsGeometry, QgsVectorLayer

from scoring.constraints.edits import apply_edit
from scoring.geometry.scene import Scene


@pytest.fixture(scope="module")
def processing_ready(qgis_app):
    from processing.core.Processing import Processing

    Processing.initialize()
    from plugin.algorithms.provider import SpatialGapProvider

    reg = QgsApplication.processingRegistry()
    if reg.providerById("spatialgap") is None:
        provider = SpatialGapProvider()
        reg.addProvider(provider)
    yield
    p = reg.providerById("spatialgap")
    if p is not None:
        reg.removeProvider(p)


def _f0_layer(inst, geom):
    kind = {"Point": "Point", "LineString": "LineString", "Polygon": "Polygon"}[geom.geom_type]
    layer = QgsVectorLayer(f"{kind}?crs=EPSG:{inst['crs']['epsg']}&field=id:string", "edited", "memory")
    f = QgsFeature(layer.fields())
    f.setAttributes(["F0"])
    f.setGeometry(QgsGeometry.fromWkt(geom.wkt))
    layer.dataProvider().addFeatures([f])
    return layer


def test_check_edit(processing_ready, small_bench, instances):
    import processing

    from scoring.score import score_edit

    inst = next(i for i in instances.values() if i["task"] == "edit" and i["relation"] == "M15")
    good = apply_edit(Scene.from_geojson(inst["scene"]), "F0", inst["reference_edit"]).scene.geom("F0")
    res = processing.run(
        "spatialgap:checkedit",
        {
            "BENCH": str(small_bench),
            "INSTANCE": inst["id"],
            "EDITED": _f0_layer(inst, good),
            "REPORT": "memory:",
            "POINTS": "memory:",
            "LINES": "memory:",
            "POLYGONS": "memory:",
        },
    )
    assert res["ALL_PASSED"] is True and res["PASSED"] == len(inst["constraints"])
    report = res["REPORT"] if isinstance(res["REPORT"], QgsVectorLayer) else None
    if report is None:
        pytest.fail("report is not a layer")
    assert report.featureCount() == len(inst["constraints"])
    assert res["LINES"].featureCount() > 0 and res["POLYGONS"].featureCount() > 0
    # Styled like the dock's drawings: rules per role and verdict, verdict sentences as labels.
    for key in ("LINES", "POLYGONS"):
        layer = res[key]
        assert layer.renderer().type() == "RuleRenderer", key
        legend = {item.label() for item in layer.renderer().legendSymbolItems()}
        # Each zone keyed to its constraint's number ("#2 zone where the constraint holds").
        assert any(label.endswith(" zone where the constraint holds") for label in legend), legend
        assert layer.labelsEnabled() and layer.labeling().settings().fieldName == '"label"'
    # Untouched F0 fails what the instruction asks; the table says which, as the scorer does.
    orig = Scene.from_geojson(inst["scene"]).geom("F0")
    res = processing.run(
        "spatialgap:checkedit",
        {
            "BENCH": str(small_bench),
            "INSTANCE": inst["id"],
            "EDITED": _f0_layer(inst, orig),
            "REPORT": "memory:",
        },
    )
    verdict = score_edit(inst, json.dumps({"operations": [{"op": "translate", "dx": 0, "dy": 0}]}))
    rows = sorted((f["constraint"], f["passed"]) for f in res["REPORT"].getFeatures())
    if verdict.constraints:
        assert rows == [(c["index"] + 1, c["passed"]) for c in verdict.constraints]
    assert res["ALL_PASSED"] is False
    from qgis.core import QgsProcessingException

    with pytest.raises(QgsProcessingException):
        processing.run(
            "spatialgap:checkedit",
            {
                "BENCH": str(small_bench),
                "INSTANCE": "nope",
                "EDITED": _f0_layer(inst, orig),
                "REPORT": "memory:",
            },
        )


def test_render_maps_same_bytes_as_headless(processing_ready, small_bench, instances, tmp_path):
    import processing

    from scoring.render import ContextIndex, render_instance

    inst = next(i for i in instances.values() if i["task"] == "qa")
    res = processing.run(
        "spatialgap:rendermaps",
        {"BENCH": str(small_bench), "IDS": inst["id"], "OUTPUT": str(tmp_path / "maps")},
    )
    assert res["MAPS"] == 1
    ctx = ContextIndex.from_file(small_bench / "context.geojsonl", inst["crs"]["epsg"])
    headless = render_instance(inst, ctx, tmp_path / "headless")["png"].read_bytes()
    assert (tmp_path / "maps" / f"{inst['id']}.png").read_bytes() == headless


def test_render_maps_defaults_to_the_benchmarks_maps_folder(
    processing_ready, small_bench, instances, tmp_path
):
    """No map folder given: the maps go where image runs read them, never to a temporary folder."""
    import shutil

    import processing

    bench = tmp_path / "bench"
    shutil.copytree(small_bench, bench, ignore=shutil.ignore_patterns("runs", "results", "maps"))
    inst = next(i for i in instances.values() if i["task"] == "qa")
    alg = QgsApplication.processingRegistry().algorithmById("spatialgap:rendermaps")
    assert not alg.parameterDefinition("OUTPUT").defaultValue()
    res = processing.run("spatialgap:rendermaps", {"BENCH": str(bench), "IDS": inst["id"]})
    assert res["MAPS"] == 1 and res["OUTPUT"] == str(bench / "maps")
    assert (bench / "maps" / f"{inst['id']}.png").is_file()


def test_score_run(processing_ready, small_bench, instances, tmp_path):
    import processing

    from plugin.gui.human_baseline import record_human_answer
    from scoring.formats.benchmark import Benchmark

    bench = Benchmark.open(small_bench)
    qa = [i for i in instances.values() if i["task"] == "qa"][:3]
    for inst in qa:
        run = record_human_answer(bench, tmp_path / "runs", "proc", inst, f"Answer: {inst['answer']}")
    res = processing.run(
        "spatialgap:scorerun",
        {"BENCH": str(small_bench), "RUN": str(run), "OUTPUT": str(tmp_path / "results")},
    )
    html = open(res["REPORT"], encoding="utf-8").read()
    assert "human-proc" in html
    assert (tmp_path / "results" / "summary.json").is_file()
    # Coverage, not errors: 3 of the benchmark's QA instances answered (one form).
    assert (res["ANSWERED"], res["TOTAL"]) == (3, len([i for i in instances.values() if i["task"] == "qa"]))
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    assert "recorded" in json.dumps(summary)  # scored on what the run answered
    processing.run(
        "spatialgap:scorerun",
        {"BENCH": str(small_bench), "RUN": str(run), "COUNT_UNSENT": True, "OUTPUT": str(tmp_path / "all")},
    )
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert "recorded" not in json.dumps(summary)


def test_algorithms_sit_in_one_group_level_with_help(processing_ready):
    from plugin.gui.help import homepage

    provider = QgsApplication.processingRegistry().providerById("spatialgap")
    assert provider.name() == "Spatial Gap"
    for alg in provider.algorithms():
        assert alg.group() == "" and alg.groupId() == ""  # not "Spatial Gap ▸ Spatial Gap"
        assert alg.helpUrl().startswith(homepage() + "#")


def test_instance_picker_offers_the_benchmarks_edit_instances(processing_ready, small_bench, instances):
    from qgis.PyQt.QtWidgets import QWidget

    from plugin.algorithms.instance_picker import InstancePickerWrapper, edit_instance_ids

    alg = QgsApplication.processingRegistry().algorithmById("spatialgap:checkedit")
    param = alg.parameterDefinition("INSTANCE")
    assert param.metadata()["widget_wrapper"]["class"] is InstancePickerWrapper
    edits = sorted(i["id"] for i in instances.values() if i["task"] == "edit")
    assert sorted(edit_instance_ids(small_bench)) == edits
    assert edit_instance_ids("/nonexistent") == []
    dialog = QWidget()
    wrapper = InstancePickerWrapper(param, dialog)
    wrapper.fill(str(small_bench))
    combo = wrapper.widget
    assert sorted(combo.itemText(k) for k in range(combo.count())) == edits
    wrapper.setValue(edits[1])
    assert wrapper.value() == edits[1]


def test_build_benchmark(processing_ready, tmp_path):
    import processing

    res = processing.run(
        "spatialgap:buildbenchmark",
        {
            "CITY": "helsinki",
            "SEED": 3,
            "QA": 1,
            "EDIT": 1,
            "RELATIONS": "D01,T03",
            "OUTPUT": str(tmp_path / "b"),
        },
    )
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert res["INSTANCES"] == sum(
        1
        for n in ("qa.jsonl", "edit.jsonl")
        for line in (tmp_path / "b" / n).read_text().splitlines()
        if line
    )
    variants = manifest.get("unanswerable", {"qa": 0, "edit": 0})  # built unanswerable, in addition
    assert 1 <= res["INSTANCES"] - variants["qa"] - variants["edit"] <= 4 and manifest["seed"] == 3


def _static(value):
    from qgis.core import QgsProcessingModelChildParameterSource

    return [QgsProcessingModelChildParameterSource.fromStaticValue(value)]


def _recording_feedback(progress: list[float]):
    from qgis.core import QgsProcessingFeedback

    feedback = QgsProcessingFeedback()
    feedback.progressChanged.connect(progress.append)
    return feedback


def test_a_model_chains_build_and_render_and_moves_the_progress_bar(processing_ready, tmp_path):
    """Build → Render as a graphical-modeler model (Render's benchmark is Build's output), run
    through the real Processing framework; the progress bar moves and reaches 100 %."""
    import processing
    from qgis.core import (
        QgsProcessingModelAlgorithm,
        QgsProcessingModelChildAlgorithm,
        QgsProcessingModelChildParameterSource,
    )

    model = QgsProcessingModelAlgorithm("build and render", "tests")
    build = QgsProcessingModelChildAlgorithm("spatialgap:buildbenchmark")
    build.setChildId("build")
    for name, value in (("CITY", "helsinki"), ("SEED", 1), ("QA", 1), ("EDIT", 1), ("RELATIONS", "D01")):
        build.addParameterSources(name, _static(value))
    build.addParameterSources("OUTPUT", _static(str(tmp_path / "bench")))
    model.addChildAlgorithm(build)
    render = QgsProcessingModelChildAlgorithm("spatialgap:rendermaps")
    render.setChildId("render")
    render.addParameterSources(
        "BENCH", [QgsProcessingModelChildParameterSource.fromChildOutput("build", "OUTPUT")]
    )
    render.addParameterSources("OUTPUT", _static(str(tmp_path / "maps")))
    model.addChildAlgorithm(render)
    progress: list[float] = []
    processing.run(model, {}, feedback=_recording_feedback(progress))
    built = [
        ln
        for n in ("qa.jsonl", "edit.jsonl")
        for ln in (tmp_path / "bench" / n).read_text().splitlines()
        if ln
    ]
    assert len(list((tmp_path / "maps").glob("*.png"))) == len(built) >= 2  # variants included
    assert (tmp_path / "bench" / "manifest.json").is_file()
    assert any(0 < p < 100 for p in progress) and max(progress) == 100.0, progress


def test_batch_rows_run_as_background_tasks(processing_ready, small_bench, instances, tmp_path):
    """Batch mode: one algorithm, several parameter rows, each a QgsProcessingAlgRunnerTask in
    QGIS's task manager (threads, as the batch dialog runs them); the per-row progress moves."""
    from qgis.core import QgsProcessingAlgRunnerTask, QgsProcessingContext

    from tests.plugin.conftest import wait_for

    alg = QgsApplication.processingRegistry().algorithmById("spatialgap:rendermaps")
    rows = [i["id"] for i in instances.values() if i["task"] == "qa"][:2]
    done: dict[str, bool] = {}
    tasks, progress = [], {row: [] for row in rows}
    for row in rows:
        context = QgsProcessingContext()
        feedback = _recording_feedback(progress[row])
        params = {"BENCH": str(small_bench), "IDS": row, "OUTPUT": str(tmp_path / row)}
        task = QgsProcessingAlgRunnerTask(alg, params, context, feedback)
        task.executed.connect(lambda ok, _results, row=row: done.__setitem__(row, ok))
        tasks.append((task, context, feedback))  # alive until the task ends
        QgsApplication.taskManager().addTask(task)
    wait_for(lambda: len(done) == len(rows), 120)
    assert all(done.values()), done
    for row in rows:
        assert (tmp_path / row / f"{row}.png").is_file()
        assert max(progress[row]) == 100.0
