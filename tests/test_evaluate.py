"""The main job end to end (`spatialgap evaluate`, what `make run` runs), on a small benchmark:
real build, real maps, agents served in their own processes over loopback HTTP, real runs,
scoring and the HTML report.

One evaluation is shared by the module and never changed: a test that runs evaluate again
works on its own copy, so the tests pass in any order."""

import json
import re
import shutil
import subprocess

import pytest

from scoring.evaluate import cities
from scoring.evaluate.plan import City, Participant, SweepPlan, participants
from scoring.evaluate.progress import SweepDisplay
from scoring.evaluate.sweep import _side_by_side, plan_runs
from scoring.runner.config import ModelSpec
from tests.conftest import VENV_BIN


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    out = tmp_path_factory.mktemp("evaluate") / "helsinki"
    cmd = [
        str(VENV_BIN / "spatialgap"),
        "evaluate",
        "--out",
        str(out),
        "--qa",
        "1",
        "--edit",
        "1",
        "--no-progress",
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stderr[-3000:]
    return out, p


def _verdicts(out):
    return [json.loads(line) for line in (out / "results" / "verdicts.jsonl").read_text().splitlines()]


def test_every_agent_runs_every_modality_it_can_read(evaluated):
    out, _ = evaluated
    seen = {(r["model"], r["modality"], r["task"]) for r in _verdicts(out)}
    expected = {
        (a, m, t)
        for a, mods in {
            "tools": ("geojson", "together"),
            "centroid": ("geojson", "together"),
            "chance": ("geojson", "image", "together"),
            "blind": ("geojson", "image", "together"),  # the options-only baseline
        }.items()
        for m in mods
        for t in ("qa", "edit")
    }
    assert seen == expected


def test_reference_agents_rank_as_designed(evaluated):
    out, _ = evaluated
    rows = _verdicts(out)
    n_qa = len((out / "bench" / "qa.jsonl").read_text().splitlines())

    def acc(model, modality, task):
        sel = [r for r in rows if (r["model"], r["modality"], r["task"]) == (model, modality, task)]
        return sum(r["verdict"] in ("correct", "correct_refusal") for r in sel) / len(sel), len(sel)

    tools_qa, n = acc("tools", "geojson", "qa")
    assert n == 2 * n_qa  # open and mcq: nothing dropped from the denominator
    assert tools_qa == 1.0
    assert acc("tools", "geojson", "edit")[0] == 1.0
    assert acc("chance", "geojson", "qa")[0] < acc("centroid", "geojson", "qa")[0] < 1.0
    assert all(r["verdict"] != "error" for r in rows)


def test_report_is_one_self_contained_file(evaluated):
    out, _ = evaluated
    html = (out / "report.html").read_text()
    assert "data:image/png;base64," in html
    assert not re.search(r'(?:src|href)="https?://', html)  # nothing fetched when opened offline
    rec = json.loads((out / "evaluate.json").read_text())
    assert rec["report"].endswith("report.html") and not rec["failed_samples"]


def test_second_evaluate_reuses_benchmark_and_journal(evaluated, tmp_path):
    out = tmp_path / "helsinki"
    shutil.copytree(evaluated[0], out)
    before = (out / "runs" / "tools" / "geojson-qa" / "predictions.jsonl").read_bytes()
    p = subprocess.run(
        [
            str(VENV_BIN / "spatialgap"),
            "evaluate",
            "--out",
            str(out),
            "--qa",
            "1",
            "--edit",
            "1",
            "--agents",
            "tools",
            "--modalities",
            "geojson",
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert "reusing benchmark" in p.stderr
    # every sample came from the journal: the file is unchanged, nothing duplicated
    assert (out / "runs" / "tools" / "geojson-qa" / "predictions.jsonl").read_bytes() == before


def test_unknown_agent_is_a_one_line_error(tmp_path):
    p = subprocess.run(
        [str(VENV_BIN / "spatialgap"), "evaluate", "--out", str(tmp_path / "x"), "--agents", "tools,oracle"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [
        "spatialgap evaluate: error: --agents: unknown 'oracle' (expected tools, centroid, chance, blind)"
    ]
    assert not (tmp_path / "x").exists()


def test_stale_or_missing_maps_are_redrawn(evaluated, monkeypatch, tmp_path):
    """Maps drawn by another renderer version are stale (image results would describe pixels the
    current code no longer draws); missing ones (an interrupted render) are drawn alone."""
    out, _ = evaluated
    bench = out / "bench"
    ids = cities.instance_ids(bench)
    assert cities.maps_state(bench, ids) == ("current", [])
    assert cities.bench_current(City("", out, None, 0, 1, 1))
    assert not cities.bench_current(City("", out, None, 1, 1, 1))  # another seed
    monkeypatch.setattr(cities, "FORMATS", (99,))  # a builder that writes another format
    assert not cities.bench_current(City("", out, None, 0, 1, 1))
    monkeypatch.undo()
    copy = tmp_path / "bench"
    shutil.copytree(bench, copy)
    (copy / "maps" / f"{ids[3]}.png").unlink()
    assert cities.maps_state(copy, ids) == ("missing", [ids[3]])
    monkeypatch.setattr(cities, "RENDERER_VERSION", "0.0.0-older")
    assert cities.maps_state(bench, ids) == ("stale", ids)


def test_map_runs_go_task_by_task_and_an_agents_side_by_side(evaluated):
    out, _ = evaluated
    chance, tools = participants(("chance", "tools"), None, ())
    model = Participant(
        "m", ("geojson", "image", "together"), ModelSpec.from_endpoint("http://127.0.0.1:9/v1", "m")
    )
    plan = SweepPlan(out, [City("", out)], [chance, tools, model])
    runs = plan_runs(plan, SweepDisplay(False))
    assert all(r.bench is runs[0].bench for r in runs)  # one read of the benchmark for every run

    def of(p):
        return [r for r in runs if r.participant is p]

    # map-free runs first; then the map runs of the editing maps (drawn first), then of the QA ones
    assert [(r.modality, r.task) for r in of(chance)] == [
        ("geojson", "qa"),
        ("geojson", "edit"),
        ("image", "edit"),
        ("together", "edit"),
        ("image", "qa"),
        ("together", "qa"),
    ]
    assert [[(r.modality, r.task) for r in g] for g in _side_by_side(chance, of(chance))] == [
        [("geojson", "qa")],
        [("geojson", "edit")],
        [("image", "edit"), ("together", "edit")],
        [("image", "qa"), ("together", "qa")],
    ]
    # a configured model takes its runs one at a time (its concurrency is the load it accepts)
    assert all(len(g) == 1 for g in _side_by_side(model, of(model)))
    assert all(len(g) == 1 for g in _side_by_side(tools, of(tools)))
