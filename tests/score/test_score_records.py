"""The rows and summary `score_runs` writes fit the typed records of scoring.score.records (their
keys against the schemas: tests/formats/test_records.py)."""

from __future__ import annotations

import json
from typing import get_type_hints

from scoring.paths import RESOURCES_DIR
from scoring.score import records
from scoring.vocab import VERDICTS, Verdict

VERDICT = json.loads((RESOURCES_DIR / "schema" / "verdict.schema.json").read_text(encoding="utf-8"))


def _keys(td: type) -> tuple[set[str], set[str]]:
    return set(td.__required_keys__), set(td.__optional_keys__)


def test_the_verdict_words_are_the_schemas():
    assert VERDICT["properties"]["verdict"]["enum"] == [str(v) for v in VERDICTS]
    assert get_type_hints(records.VerdictRow)["verdict"] is Verdict


def test_written_results_fit_their_records(helsinki_bench, chance, tmp_path):
    from scoring.runner.config import ModelSpec
    from scoring.runner.run import run_benchmark
    from scoring.score.results import load_results, score_runs

    run = tmp_path / "run"
    spec = ModelSpec.from_endpoint(chance.base_url, "chance", timeout_s=30)
    run_benchmark(helsinki_bench, spec, "geojson", "qa", None, run, progress=False, limit=6)
    score_runs(helsinki_bench, [run], tmp_path / "results", selfcheck=False)
    summary, rows = load_results(tmp_path / "results")
    required, optional = _keys(records.Summary)
    assert required <= set(summary) <= required | optional
    for cell in summary["cells"]:
        assert set(records.Cell.__required_keys__) <= set(cell) <= set(get_type_hints(records.Cell))
    allowed = set(get_type_hints(records.VerdictRow))
    for row in rows:
        assert set(records.VerdictRow.__required_keys__) <= set(row) <= allowed, row["id"]
        assert type(row["verdict"]) is Verdict  # converted once, where the rows are read
