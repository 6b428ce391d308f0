"""Run conditions, tokens, latency and cost from real runs (a built-in agent served on loopback,
`spatialgap run` writing a real journal), and two sweeps of one model compared side by side
(issue 28, items 6 and 7)."""

from __future__ import annotations

import csv
import json

import pytest

from scoring.cli import main
from scoring.errors import InputError
from scoring.runner.agents import start_server
from scoring.score import score_runs
from scoring.score.compare import leaderboard, leaderboard_text
from scoring.score.conditions import NOT_REPORTED, OMITTED, run_conditions, totals_by_model
from scoring.score.report import build_context, parse_labels


@pytest.fixture(scope="module")
def priced_run(small_bench, tmp_path_factory):
    root = tmp_path_factory.mktemp("priced")
    server, _ = start_server("chance")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        config = root / "models.toml"
        config.write_text(
            f'[models.chance]\nkind = "openai"\nbase_url = "{url}"\n'
            'model = "chance"\nprice_in = 2.5\nprice_out = 10\nomit = ["seed"]\n'
        )
        d = root / "run"
        args = ["run", "--bench", str(small_bench), "--config", str(config), "--model", "chance"]
        assert main([*args, "--modality", "geojson", "--task", "qa", "--out", str(d), "--no-progress"]) == 0
    finally:
        server.shutdown()
    return d


def test_run_conditions_carry_endpoint_parameters_tokens_latency_and_cost(small_bench, priced_run, tmp_path):
    summary = score_runs(small_bench, [priced_run], tmp_path / "res", selfcheck=False)
    (c,) = summary["run_conditions"]
    assert c["endpoint"].startswith("http://127.0.0.1:") and "?" not in c["endpoint"]
    assert c["model_id"] == "chance" and c["protocol"] == "spatialgap"
    assert c["generation"]["seed"] == OMITTED and c["generation"]["temperature"] == 0.0
    assert c["templates"] and all(v for v in c["templates"].values())
    assert (
        c["started_at"] and c["ended_at"] and c["benchmark_sha256"] == summary["benchmark"]["manifest_sha256"]
    )
    journal = [json.loads(x) for x in (priced_run / "predictions.jsonl").read_text().splitlines()]
    finals = [r for r in journal if r.get("final")]
    tokens_in = sum(r["usage"]["prompt_tokens"] for r in finals)
    tokens_out = sum(r["usage"]["completion_tokens"] for r in finals)
    assert (c["requests"], c["tokens_in"], c["tokens_out"]) == (len(finals), tokens_in, tokens_out)
    assert c["cost"] == pytest.approx(tokens_in * 2.5 / 1e6 + tokens_out * 10 / 1e6)
    assert 0 < c["latency_median_s"] <= c["latency_p95_s"]


def test_tokens_not_reported_when_the_server_gave_no_usage(priced_run, tmp_path):
    manifest = json.loads((priced_run / "manifest.json").read_text())
    d = tmp_path / "nousage"
    d.mkdir()
    lines = []
    for line in (priced_run / "predictions.jsonl").read_text().splitlines():
        r = json.loads(line)
        r["usage"] = None
        lines.append(json.dumps(r))
    (d / "predictions.jsonl").write_text("\n".join(lines) + "\n")
    c = run_conditions(d, manifest, "chance")
    assert c["tokens_in"] == NOT_REPORTED and c["tokens_out"] == NOT_REPORTED and c["cost"] == NOT_REPORTED
    manifest["model"].pop("price_in"), manifest["model"].pop("price_out")
    c2 = run_conditions(priced_run, manifest, "chance")
    assert c2["cost"] is None  # no price configured: no cost, not zero
    (t,) = totals_by_model([c, c2])
    assert t["tokens_in"] == NOT_REPORTED and t["requests"] == c["requests"] + c2["requests"]


def test_two_sweeps_of_one_model_are_refused_unlabelled_and_paired_when_labelled(
    small_bench, priced_run, tmp_path
):
    a, b = tmp_path / "a", tmp_path / "b"
    score_runs(small_bench, [priced_run], a, selfcheck=False)
    score_runs(small_bench, [priced_run], b, selfcheck=False)
    with pytest.raises(InputError, match="--label"):
        build_context([a, b])
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "x.html")]) == 2
    labels = parse_labels([f"{a}=monday", f"{b}=tuesday"])
    ctx = build_context([a, b], labels=labels)
    assert ctx["models"] == ["chance@monday", "chance@tuesday"]
    pairs = [t for t in ctx["tables"]["model_tests"] if {t["first"], t["second"]} == set(ctx["models"])]
    n_open = sum(1 for _ in (small_bench / "qa.jsonl").read_text().splitlines())
    assert {t["form"] for t in pairs} == {"open", "mcq"} and all(t["n"] == n_open for t in pairs)
    assert all(t["only_first"] == t["only_second"] == 0 and t["p_value"] == 1.0 for t in pairs)
    assert {c["model"] for c in ctx["conditions"]} == {"chance@monday", "chance@tuesday"}
    out = tmp_path / "rep" / "report.html"
    assert (
        main(
            ["report", str(a), str(b), "--label", f"{a}=monday", "--label", f"{b}=tuesday", "--out", str(out)]
        )
        == 0
    )
    recs = list(csv.DictReader((out.parent / "model_tests.csv").open()))
    assert any(r["first"] == "chance@monday" and r["second"] == "chance@tuesday" for r in recs)
    with pytest.raises(InputError, match="DIR=NAME"):
        parse_labels(["nolabel"])


def test_compare_lists_models_by_headline_cells(small_bench, priced_run, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    score_runs(small_bench, [priced_run], a, selfcheck=False)
    score_runs(small_bench, [priced_run], b, selfcheck=False)
    board = leaderboard([a, b], labels=parse_labels([f"{a}=one", f"{b}=two"]))
    assert board["names"] == ["geojson open", "geojson mcq"]  # only the cells anybody ran
    text = leaderboard_text(board)
    assert "chance@one" in text and "chance@two" in text
    out = tmp_path / "board.csv"
    assert (
        main(["compare", str(a), str(b), "--label", f"{a}=one", "--label", f"{b}=two", "--out", str(out)])
        == 0
    )
    rows = list(csv.DictReader(out.open()))
    assert [r["model"] for r in rows] == ["chance@one", "chance@two"] and rows[0]["geojson open"] == rows[1][
        "geojson open"
    ]
    assert "\\toprule" in out.with_suffix(".tex").read_text()


def _sweep(path, sha, scene_of, verdict_of):
    path.mkdir()
    rows = [
        {
            "id": f"c-qa-T01-{i:03d}",
            "model": "m",
            "modality": "geojson",
            "form": "open",
            "task": "qa",
            "city": "c",
            "family": "topology",
            "relation": "T01",
            "scene": scene_of(i),
            "verdict": verdict_of(i),
            "answerable": True,
        }
        for i in range(10)
    ]
    (path / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    summary = {"benchmark": {"city": "c", "manifest_sha256": sha, "protocol": "spatialgap"}}
    (path / "summary.json").write_text(json.dumps(summary))
    return path


def test_two_builds_of_one_benchmark_pair_and_different_scenes_do_not(tmp_path):
    # two builds: manifest hashes differ (the manifest records build timings), scenes are equal
    a = _sweep(tmp_path / "a", "1" * 64, lambda i: f"s{i}", lambda i: "correct" if i < 8 else "wrong")
    b = _sweep(tmp_path / "b", "2" * 64, lambda i: f"s{i}", lambda i: "correct" if i < 3 else "wrong")
    c = _sweep(tmp_path / "c", "3" * 64, lambda i: f"other{i}", lambda i: "wrong")
    ctx = build_context([a, b, c], labels=parse_labels([f"{a}=a", f"{b}=b", f"{c}=c"]))
    pairs = {(t["first"], t["second"]): t for t in ctx["tables"]["model_tests"]}
    ab = pairs[("m@a", "m@b")]
    assert ab["n"] == 10 and (ab["only_first"], ab["only_second"]) == (5, 0)
    assert ("m@a", "m@c") not in pairs and ("m@b", "m@c") not in pairs  # same ids, other scenes
