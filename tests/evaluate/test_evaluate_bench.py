"""`evaluate --bench DIR` and `scoring.run_evaluation(bench=...)`: a pre-built benchmark or an
export is evaluated as it is, without the source extract it was built from."""

from __future__ import annotations

import json

import pytest

import scoring
from scoring.build.builder import build_benchmark
from scoring.cli import main
from scoring.errors import InputError
from scoring.evaluate import cities, plan


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("given") / "bench"
    build_benchmark(None, out, n_qa=1, n_edit=1, relations=["M01", "D04", "T11"], jobs=1, progress=False)
    return out


def _no_source(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("the source extract was looked for")

    monkeypatch.setattr(cities, "default_osm_path", refuse)
    monkeypatch.setattr(cities, "build_benchmark", refuse)


def test_a_prebuilt_benchmark_is_evaluated_without_its_source(small_bench, tmp_path, monkeypatch):
    _no_source(monkeypatch)
    manifest = (small_bench / "manifest.json").read_bytes()
    rec = scoring.run_evaluation(
        tmp_path / "out", bench=small_bench, agents=["tools"], modalities=["geojson"]
    )
    assert rec["cities"][0]["bench"] == str(small_bench.resolve())
    assert [r["status"] for r in rec["runs"]] == ["complete", "complete"]
    assert (small_bench / "manifest.json").read_bytes() == manifest  # used as it is
    assert (tmp_path / "out" / "report.html").is_file() and not (tmp_path / "out" / "bench").exists()


def test_an_export_is_evaluated_from_the_command_line(small_bench, tmp_path, monkeypatch, capsys):
    pytest.importorskip("pyarrow")
    scoring.export_benchmark(small_bench, tmp_path / "hf", fmt="hf")
    _no_source(monkeypatch)
    args = ["-q", "--json", "evaluate", "--bench", str(tmp_path / "hf"), "--out", str(tmp_path / "ev")]
    assert main([*args, "--agents", "tools", "--modalities", "geojson", "--no-progress"]) == 0
    record = json.loads(capsys.readouterr().out.splitlines()[-1])
    tools = [c for c in record["summary"]["cells"] if c["model"] == "tools" and c["level"] == "overall"]
    assert tools and all(c["accuracy"] == 1.0 for c in tools if c["form"] in ("open", "mcq"))


def test_bench_refuses_what_would_build(small_bench, tmp_path):
    with pytest.raises(InputError, match="no manifest.json"):
        plan.city_from_bench(tmp_path, tmp_path / "out")
    assert main(["evaluate", "--bench", str(small_bench), "--out", str(tmp_path), "--force"]) == 2
