"""Repeated sampling end to end (#32 item 6): a model with `samples = 3`, served over loopback by
an agent answering at random per request (the built-in server, an agent function of this test:
`chance` seeds its guess by the request, so three identical requests would agree), run, resumed,
scored and reported."""

from __future__ import annotations

import csv
import json
import logging
import random
import threading
from collections import defaultdict
from statistics import mean, variance

import pytest
from jsonschema import Draft202012Validator

from scoring.answers.formats import format_of_category
from scoring.build.builder import build_benchmark
from scoring.formats.rundir import read_records
from scoring.paths import RESOURCES_DIR
from scoring.runner.agents.prompt_view import parse_prompt
from scoring.runner.agents.server import AgentServer
from scoring.runner.config import ModelSpec
from scoring.runner.run import run_benchmark
from scoring.score.report import write_report
from scoring.score.results import score_runs
from scoring.support.files import read_jsonl

SUCCESS = ("correct", "correct_refusal")


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("repeats") / "helsinki"
    build_benchmark(None, out, seed=0, n_qa=3, n_edit=1, relations=["M01", "D04", "T11", "O03"], jobs=1,
                    progress=False)  # fmt: skip
    return out


@pytest.fixture(scope="module")
def random_agent():
    """Answers within the answer format, at random per request (not per prompt)."""
    rng, lock = random.Random(7), threading.Lock()

    def guess(messages: list[dict]) -> str:
        v = parse_prompt(messages)
        with lock:
            answer = format_of_category(v.answer_category).guess(rng, v.feature_ids or ["F0"], v.choices)
        return f"Answer: {answer}"

    srv = AgentServer(("127.0.0.1", 0), "random", guess)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def spec(srv, samples: int, temperature: float = 0.7) -> ModelSpec:
    return ModelSpec.from_endpoint(
        srv.base_url, "random", samples=samples, temperature=temperature, timeout_s=30
    )


def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads((RESOURCES_DIR / "schema" / f"{name}.schema.json").read_text()))


def test_three_samples_per_item_are_asked_scored_and_reported(bench, random_agent, tmp_path):
    out = tmp_path / "runs" / "random-geojson-qa"
    one = run_benchmark(bench, spec(random_agent, 1), "geojson", "qa", None, out, progress=False)
    items = one.samples  # 12 instances x 2 forms
    first_keys = {r["key"] for r in read_records(out / "predictions.jsonl")[0]}
    # raising samples to 3 keeps the first sample's keys: only the two new repeats are asked
    three = run_benchmark(bench, spec(random_agent, 3), "geojson", "qa", None, out, progress=False)
    assert (three.samples, three.sent, three.from_journal) == (3 * items, 2 * items, items)
    recs = read_records(out / "predictions.jsonl")[0]
    repeats = [r for r in recs if r.get("sample_index")]
    assert len(repeats) == 2 * items and not {r["key"] for r in repeats} & first_keys
    assert sorted({r.get("sample_index", 0) for r in recs}) == [0, 1, 2]
    assert len({r["key"] for r in recs}) == 3 * items
    prediction = _validator("prediction")
    assert all(not list(prediction.iter_errors(r)) for r in recs)
    again = run_benchmark(bench, spec(random_agent, 3), "geojson", "qa", None, out, progress=False)
    assert (again.sent, again.from_journal) == (0, 3 * items)

    summary = score_runs(bench, [out], tmp_path / "results", selfcheck=False)
    rows = [r for _, r in read_jsonl(tmp_path / "results" / "verdicts.jsonl")]
    assert len(rows) == 3 * items and summary["samples"] == 3 * items
    per_item: dict[tuple, dict[int, bool]] = defaultdict(dict)
    for r in rows:
        per_item[(r["form"], r["id"])][r["sample_index"]] = r["verdict"] in SUCCESS
    assert all(sorted(s) == [0, 1, 2] for s in per_item.values())
    verdict = _validator("verdict")
    assert all(not list(verdict.iter_errors(r)) for r in rows)
    assert not list(_validator("summary").iter_errors(summary))

    table = {t["form"]: t for t in summary["sample_agreement"]}
    assert set(table) == {"open", "mcq"}
    cells = {c["form"]: c for c in summary["cells"] if c["level"] == "overall"}
    for form, t in table.items():
        outcomes = [s for (f, _), s in per_item.items() if f == form]
        assert (t["model"], t["modality"], t["samples"], t["items"]) == ("random", "geojson", 3, items // 2)
        # the headline accuracy is the mean per item, then over items, and so the cells' accuracy
        assert t["accuracy"] == pytest.approx(mean(mean(s.values()) for s in outcomes), abs=1e-6)
        assert t["accuracy"] == pytest.approx(cells[form]["accuracy"], abs=1e-6)
        assert cells[form]["n"] == 3 * items // 2
        assert t["unanimous"] == pytest.approx(mean(len(set(s.values())) == 1 for s in outcomes), abs=1e-6)
        pairs = [[s[a] == s[b] for a, b in ((0, 1), (0, 2), (1, 2))] for s in outcomes]
        assert t["pairwise_agreement"] == pytest.approx(mean(mean(p) for p in pairs), abs=1e-6)
        rounds = [mean(s[k] for s in outcomes) for k in range(3)]
        assert t["accuracy_variance"] == pytest.approx(variance(rounds), abs=1e-7)
        assert (t["accuracy_min"], t["accuracy_max"]) == pytest.approx((min(rounds), max(rounds)), abs=1e-6)
    # random answers to 4 options: the samples of an item do not all agree
    assert table["mcq"]["unanimous"] < 1

    html = write_report([tmp_path / "results"], tmp_path / "report" / "report.html")
    text = html.read_text()
    assert "Repeated samples: agreement and variance" in text and 'id="sample-agreement"' in text
    with open(tmp_path / "report" / "sample_agreement.csv", newline="") as fh:
        written = list(csv.DictReader(fh))
    assert [(r["form"], float(r["pairwise_agreement"])) for r in written] == [
        (t["form"], t["pairwise_agreement"]) for t in summary["sample_agreement"]
    ]


def test_a_run_of_one_sample_reports_no_agreement(bench, random_agent, tmp_path):
    out = tmp_path / "runs" / "random-geojson-qa"
    run_benchmark(bench, spec(random_agent, 1), "geojson", "qa", ["mcq"], out, progress=False, limit=2)
    recs = read_records(out / "predictions.jsonl")[0]
    assert all("sample_index" not in r for r in recs)
    assert "samples" not in json.loads((out / "manifest.json").read_text())
    summary = score_runs(bench, [out], tmp_path / "results", selfcheck=False)
    assert "sample_agreement" not in summary
    rows = [r for _, r in read_jsonl(tmp_path / "results" / "verdicts.jsonl")]
    assert rows and all("sample_index" not in r for r in rows)
    write_report([tmp_path / "results"], tmp_path / "report" / "report.html")
    assert not (tmp_path / "report" / "sample_agreement.csv").exists()
    assert "Repeated samples" not in (tmp_path / "report" / "report.html").read_text()


def test_repeats_at_temperature_zero_are_allowed_and_said_once(bench, random_agent, tmp_path, caplog):
    caplog.set_level(logging.WARNING, logger="scoring.runner.session")
    greedy = ModelSpec.from_endpoint(random_agent.base_url, "random", name="greedy", samples=2, temperature=0)
    for modality in ("geojson", "geojson"):
        s = run_benchmark(bench, greedy, modality, "qa", ["mcq"], tmp_path / "run", progress=False, limit=1)
        assert s.samples == 2 and s.failed == 0
    said = [r.getMessage() for r in caplog.records if "samples = 2 at temperature 0" in r.getMessage()]
    assert len(said) == 1 and said[0].startswith("greedy:")


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, 1001])
def test_samples_must_be_a_whole_number_from_1(bad):
    from scoring.runner.config import ConfigError

    with pytest.raises(ConfigError, match=r"endpoint\.samples: "):
        ModelSpec.from_endpoint("http://h/v1", "m", samples=bad)
