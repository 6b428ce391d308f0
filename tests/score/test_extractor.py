"""The optional extractor model end to end over loopback HTTP: a model whose multiple-choice
replies the rules cannot read (two candidate letters, the right one last) is run, `extract`
asks the built-in `last-mention` agent about exactly those replies, and `score` reads the
extractions with the same rules, marking those verdicts `read_by: extractor`."""

from __future__ import annotations

import json

from scoring.cli import main
from scoring.runner.agents import agent, parse_prompt, start_server
from scoring.runner.extract import EXTRACTIONS, read_extractions
from scoring.score import score_runs, write_report

HEDGED = "hedged-letters"


@agent(HEDGED, reads_images=False)
def hedged_letters(messages):
    """Names two options, the one it settles on last: unreadable by the rules, read by last mention."""
    view = parse_prompt(messages)
    if not view.choices:
        return "Answer: cannot be determined"
    return "Two options look possible here: (B) and (A)"


def _serve(name):
    server, _ = start_server(name)
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_extractor_reads_only_what_the_rules_leave_unread_and_score_marks_it(small_bench, tmp_path):
    run = tmp_path / "run"
    server, url = _serve(HEDGED)
    try:
        argv = ["run", "--bench", str(small_bench), "--endpoint", url, "--model", HEDGED]
        argv += ["--modality", "geojson", "--task", "qa", "--form", "mcq", "--out", str(run), "--no-progress"]
        assert main(argv) == 0
    finally:
        server.shutdown()
    extractor, xurl = _serve("last-mention")
    try:
        argv = ["extract", "--bench", str(small_bench), "--run", str(run), "--endpoint", xurl]
        argv += ["--model", "last-mention"]
        assert main(argv) == 0
        lines = (run / EXTRACTIONS).read_text().splitlines()
        assert main(argv) == 0  # a second pass sends nothing: every unread reply is extracted
        assert (run / EXTRACTIONS).read_text().splitlines() == lines
    finally:
        extractor.shutdown()
    extractions = read_extractions(run)
    predictions = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    mcq = [p for p in predictions if p.get("final") and p.get("form") == "mcq"]
    assert len(extractions) == len(mcq) > 0  # every hedged reply, and nothing else
    res = tmp_path / "results"
    score_runs(small_bench, [run], res, selfcheck=False)
    rows = [json.loads(x) for x in (res / "verdicts.jsonl").read_text().splitlines()]
    assert {r["read_by"] for r in rows} == {"extractor"}
    assert all(r["verdict"] in ("correct", "wrong") for r in rows)
    summary = json.loads((res / "summary.json").read_text())
    (effect,) = summary["extractor"]
    assert effect["read_by_extractor"] == len(rows) and effect["correct_rules_only"] == 0
    assert effect["correct_assisted"] == sum(r["verdict"] == "correct" for r in rows)
    (conditions,) = summary["run_conditions"]
    assert conditions["extractor"]["requests"] == len(extractions)  # its calls count beside the run's
    assert conditions["extractor"]["tokens_in"] > 0
    html = write_report([res], tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert "Replies read by an extractor model" in html and "rules only %" in html


def test_evaluate_asks_its_extractor_before_scoring(small_bench, tmp_path):
    server, url = _serve(HEDGED)
    extractor, xurl = _serve("last-mention")
    config = tmp_path / "models.toml"
    block = f'[models.hedger]\nkind = "openai"\nbase_url = "{url}"\nmodel = "{HEDGED}"\n'
    config.write_text(block + 'modalities = ["geojson"]\n')
    out = tmp_path / "ev"
    try:
        argv = ["evaluate", "--bench", str(small_bench), "--out", str(out), "--config", str(config)]
        argv += [
            "--tasks",
            "qa",
            "--extractor",
            "last-mention",
            "--extractor-endpoint",
            xurl,
            "--no-progress",
        ]
        assert main(argv) == 0
    finally:
        server.shutdown()
        extractor.shutdown()
    rows = [json.loads(x) for p in out.rglob("verdicts.jsonl") for x in p.read_text().splitlines()]
    mcq = [r for r in rows if r["form"] == "mcq"]
    assert mcq and {r["read_by"] for r in mcq} == {"extractor"}
    assert any(p.name == EXTRACTIONS for p in out.rglob(EXTRACTIONS))
