"""The spatial-gap test end to end: two fake "models" served over loopback HTTP, run through the
real runner on GeoJSON, image and Together QA, scored and reported.

- `gap-image-worse` answers with the tools agent whenever the prompt carries the GeoJSON and at
  random when it has only the map: its image answers are worse, and the test must say so.
- `gap-same` gives the same reply in every input type (a refusal to open questions, an option
  picked from the question's own text for multiple choice): no test may find a gap."""

import csv
import hashlib
import shutil

import pytest

from scoring.cli import main
from scoring.render import render_benchmark
from scoring.runner.agents import agent, get_agent, parse_prompt, start_server
from scoring.score import score_runs, write_report

MODALITIES = ("geojson", "image", "together")


@agent("gap-image-worse")
def image_worse(messages):
    view = parse_prompt(messages)
    return get_agent("tools" if view.scene is not None else "chance")(messages)


@agent("gap-same")
def same(messages):
    view = parse_prompt(messages)
    if not view.choices:
        return "Answer: cannot be determined"
    h = int.from_bytes(hashlib.sha256((view.question or "").encode()).digest()[:4], "big")
    return "Answer: " + "ABCD"[h % min(4, len(view.choices))]


@pytest.fixture(scope="module")
def qa_bench(small_bench, qa, tmp_path_factory):
    """The small benchmark with the maps of its QA instances too (image QA needs them)."""
    bench = tmp_path_factory.mktemp("gapbench") / "helsinki"
    shutil.copytree(small_bench, bench)
    ids = sorted(qa)
    render_benchmark(bench, jobs=1, progress=False, ids=ids)
    return bench


@pytest.fixture(scope="module")
def gap_results(qa_bench, tmp_path_factory):
    root = tmp_path_factory.mktemp("gapruns")
    runs = []
    for name in ("gap-image-worse", "gap-same"):
        server, _ = start_server(name)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1"
            for modality in MODALITIES:
                d = root / f"{name}-{modality}"
                argv = ["run", "--bench", str(qa_bench), "--endpoint", url, "--model", name]
                argv += ["--modality", modality, "--task", "qa", "--out", str(d), "--no-progress"]
                assert main(argv) == 0
                runs.append(d)
        finally:
            server.shutdown()
    res = root / "results"
    score_runs(qa_bench, runs, res, selfcheck=False)
    html = write_report([res], root / "report" / "report.html")
    tests = list(csv.DictReader((root / "report" / "gap_tests.csv").open()))
    return tests, html


def _overall(tests, model, first, second, form):
    return next(
        t
        for t in tests
        if (t["model"], t["level"], t["first"], t["second"], t["form"])
        == (model, "overall", first, second, form)
    )


@pytest.mark.parametrize("form", ["open", "mcq"])
def test_worse_image_answers_show_a_significant_gap(gap_results, form):
    tests, _ = gap_results
    t = _overall(tests, "gap-image-worse", "geojson", "image", form)
    assert t["significant"] == "True" and float(t["p_holm"]) < 0.05
    assert float(t["diff_points"]) > 30 and int(t["only_first"]) > int(t["only_second"])
    # the same tools answers with or without the map: nothing to find
    same_answers = _overall(tests, "gap-image-worse", "geojson", "together", form)
    assert same_answers["only_first"] == same_answers["only_second"] == "0"
    assert same_answers["significant"] == "False"
    assert _overall(tests, "gap-image-worse", "image", "together", form)["significant"] == "True"


def test_identical_answers_show_no_gap(gap_results):
    tests, _ = gap_results
    mine = [t for t in tests if t["model"] == "gap-same"]
    assert {t["level"] for t in mine} == {"overall", "family", "relation"}
    assert len({(t["first"], t["second"]) for t in mine}) == 3
    assert not [t for t in mine if t["significant"] == "True"]
    for t in mine:
        if t["level"] == "overall":
            assert abs(float(t["diff_points"])) < 10


def test_report_shows_the_gap(gap_results):
    _, html = gap_results
    text = html.read_text()
    assert "The spatial gap" in text and "GeoJSON ↔ image" in text and 'class="sig"' in text
    assert "Figure 2." in text and text.count("data:image/png;base64,") >= 2
