"""The cross-map modalities end to end on a small real Helsinki benchmark: map sets drawn, every map
sent in the set's order over real HTTP to the built-in agents, each pixel edit read back through
the map it was expressed on, verdicts scored and reported beside the other modalities."""

from __future__ import annotations

import base64
import json
import shutil

import pytest
from shapely.geometry import mapping

from scoring.constraints.edits import apply_edit
from scoring.errors import InputError
from scoring.formats.benchmark import Benchmark
from scoring.formats.mapsets import read_map_set
from scoring.formats.rundir import final_predictions
from scoring.geometry.georef import PixelTransform
from scoring.geometry.scene import Scene
from scoring.runner import prompts
from scoring.runner.agents import get_agent, start_server
from scoring.runner.config import ModelSpec
from scoring.runner.run import run_benchmark
from scoring.score.report import write_report
from scoring.score.results import load_results, score_runs
from scoring.score.tables_paper import table1
from scoring.score.verdicts import score_edit, score_prediction

SETS = ("image-multi", "image-context")


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Benchmark:
    """Four relations, one QA and one editing instance each, maps and map sets drawn."""
    from scoring.build.builder import build_benchmark
    from scoring.render import render_benchmark
    from scoring.render.multi import render_map_sets

    out = tmp_path_factory.mktemp("multi") / "helsinki"
    build_benchmark(
        None, out, seed=0, n_qa=1, n_edit=1, relations=["T01", "D01", "M01", "O06"], jobs=1, progress=False
    )
    render_benchmark(out, jobs=2, progress=False)
    render_map_sets(out, SETS, jobs=2)
    return Benchmark.open(out)


def _images(messages: list[dict]) -> list[bytes]:
    parts = messages[1]["content"]
    return [
        base64.b64decode(p["image_url"]["url"].split(",", 1)[1]) for p in parts if p["type"] == "image_url"
    ]


def _text(messages: list[dict]) -> str:
    return messages[1]["content"][0]["text"]


@pytest.mark.parametrize("modality", SETS)
def test_every_map_is_sent_in_the_set_order_without_coordinates(small, modality):
    for inst in small.all_instances():
        ms = read_map_set(small.maps_dir, inst["id"], modality)
        for form in ("open", "mcq") if inst["task"] == "qa" else ("edit",):
            msgs = prompts.build_messages(inst, modality, form, ms)
            assert _images(msgs) == list(ms.pngs)
            text = _text(msgs)
            assert "geojson" not in text.lower() and '"coordinates"' not in text
            if inst["task"] == "edit":
                where = (
                    "map 1, the map showing the target" if modality == "image-multi" else "the map on which"
                )
                assert where in text and "pixels right" in text
    with pytest.raises(ValueError, match="map set"):
        prompts.build_messages(small.of_task("qa")[0], "image-multi", "open", b"\x89PNG\r\n\x1a\n")


def test_the_shared_cross_map_wording_is_hashed_with_its_templates(tmp_path):
    copy = tmp_path / "prompts"
    shutil.copytree(prompts.PROMPTS_DIR, copy)
    before = {m: prompts.template_info("qa", m, "open", copy).sha256 for m in ("image", *SETS)}
    (copy / "_maps.j2").write_text((copy / "_maps.j2").read_text(encoding="utf-8") + "\n", encoding="utf-8")
    prompts._files_hash.cache_clear()
    prompts._info.cache_clear()
    after = {m: prompts.template_info("qa", m, "open", copy).sha256 for m in ("image", *SETS)}
    assert after["image"] == before["image"]
    assert all(after[m] != before[m] for m in SETS)


@pytest.mark.parametrize("agent", ["tools", "centroid", "chance"])
def test_built_in_agents_answer_the_cross_map_prompts(small, agent):
    """Agents computing from coordinates find none here: they still reply in the asked format."""
    fn = get_agent(agent)
    for modality in SETS:
        for inst in small.all_instances():
            ms = read_map_set(small.maps_dir, inst["id"], modality)
            form = "mcq" if inst["task"] == "qa" else "edit"
            reply = fn(prompts.build_messages(inst, modality, form, ms))
            assert isinstance(reply, str) and reply.strip()
            if inst["task"] == "edit":
                assert "operations" in json.loads(reply)


def _pixel_reply(inst: dict, pt: PixelTransform) -> str:
    """The reference edit's result, as a pixel geometry on the map of transform ``pt``."""
    scene = Scene.from_geojson(inst["scene"])
    after = apply_edit(scene, inst["target"], inst["reference_edit"]).scene.geom(inst["target"])
    attributes = {
        o["name"]: o["value"]
        for o in inst["reference_edit"].get("operations", [])
        if o["op"] == "set_attribute"
    }
    reply = {"pixel_geometry": mapping(pt.geometry_task_to_pixel(after))}
    return json.dumps({**reply, "attributes": attributes} if attributes else reply)


@pytest.mark.parametrize("modality", SETS)
def test_a_pixel_edit_is_read_back_through_the_map_it_is_expressed_on(small, modality):
    for inst in small.of_task("edit"):
        if "unanswerable" in inst:  # an infeasible edit has no reference result to draw
            continue
        ms = read_map_set(small.maps_dir, inst["id"], modality, images=False)
        pts = [PixelTransform.from_sidecar(small.maps_dir / f"{m}.json") for m in ms.map_ids]
        reply = _pixel_reply(inst, pts[ms.edit_map])
        record = {"modality": modality, "status": "ok", "text": reply, "task": "edit", "form": "edit"}
        v = score_prediction(inst, record, small.path)
        assert v.verdict == "correct" and v.quality < 0.05, (inst["id"], v.reason)
        for k, pt in enumerate(pts):  # another map's transform puts the same pixels elsewhere
            if k != ms.edit_map:
                other = score_edit(inst, reply, modality=modality, pixel_transform=pt)
                assert other.quality is None or other.quality > 1.0, (inst["id"], k, other.reason)


def test_runs_over_http_are_scored_and_reported_beside_the_other_modalities(small, tmp_path):
    srv, _ = start_server("chance")
    runs = []
    try:
        spec = ModelSpec.from_endpoint(srv.base_url, "chance", timeout_s=30)
        for modality in ("image", *SETS):
            for task in ("qa", "edit"):
                out = tmp_path / "runs" / f"{modality}-{task}"
                s = run_benchmark(small.path, spec, modality, task, None, out, progress=False)
                assert s.failed == 0 and s.ok == s.samples > 0
                runs.append(out)
                if modality in SETS:
                    for rec in final_predictions(out / "predictions.jsonl").values():
                        ms = read_map_set(small.maps_dir, rec["instance_id"], modality)
                        assert rec["image_sha256"] == ms.sha256 and rec["modality"] == modality
    finally:
        srv.shutdown()
        srv.server_close()
    results = tmp_path / "results"
    score_runs(small, runs, results, progress=False, selfcheck=False)
    _, rows = load_results(results)
    n = {m: sum(1 for r in rows if r["modality"] == m) for m in ("image", *SETS)}
    assert n["image-multi"] == n["image-context"] == n["image"] > 0
    t1 = table1(rows)
    assert t1["modalities"] == ["geojson", "image", "together", *SETS]
    cells = dict(zip(t1["columns"], t1["rows"][0]["cells"], strict=True))
    for m in SETS:  # image edits: the raster-tolerant headline with strict CSR beside it
        n_open = sum(1 for r in rows if r["modality"] == m and r["form"] == "open")
        assert "strict" in cells[(m, "edit")] and cells[(m, "open")]["n"] == n_open > 0
    html = write_report([results], tmp_path / "report.html").read_text(encoding="utf-8")
    assert "multi-map" in html and "contextual" in html and "GeoJSON" in html


def test_a_missing_map_set_is_a_one_line_error_naming_the_command(small, tmp_path):
    copy = tmp_path / "bench"
    shutil.copytree(small.path, copy)
    iid = small.of_task("qa")[0]["id"]
    (copy / "maps" / f"{iid}.image-context.json").unlink()
    spec = ModelSpec.from_endpoint("http://127.0.0.1:9/v1", "chance", timeout_s=5)
    with pytest.raises(InputError) as err:
        run_benchmark(copy, spec, "image-context", "qa", None, tmp_path / "run", progress=False)
    message = str(err.value)
    assert "\n" not in message and iid in message and "--modalities image-context" in message


def test_the_build_manifest_records_the_cross_map_modalities(small):
    assert set(SETS) <= set(small.manifest["modalities"]) and set(small.manifest["maps"]["sets"]) == set(SETS)
    for inst in small.of_task("qa"):  # same truth: answerable in a map set exactly as on the map
        assert all(inst["answerable"][m] == inst["answerable"]["image"] for m in SETS)
