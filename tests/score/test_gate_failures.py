"""The gate on real agents' results (the README's example, selfcheck refusal, proposals from past
results, the list of overrides) and the edit failure causes of real verdicts."""

import json
import re
import shutil
from pathlib import Path

import pytest

from scoring.cli import main
from scoring.runner.agents import start_server
from scoring.score import score_edit, score_runs
from scoring.score.failures import CAUSES, edit_cause
from scoring.score.gate import load_thresholds

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture(scope="module")
def agents_results(small_bench, tmp_path_factory):
    """tools and centroid over GeoJSON QA through loopback HTTP, scored with the selfcheck."""
    root = tmp_path_factory.mktemp("gate")
    runs = []
    for name in ("tools", "centroid"):
        server, _ = start_server(name)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1"
            d = root / f"{name}-geojson-qa"
            argv = ["run", "--bench", str(small_bench), "--endpoint", url, "--model", name, "--modality"]
            assert main([*argv, "geojson", "--task", "qa", "--out", str(d), "--no-progress"]) == 0
            runs.append(d)
        finally:
            server.shutdown()
    res = root / "results"
    score_runs(small_bench, runs, res)
    return res


def _readme_rule(tmp_path) -> Path:
    section = README.read_text().split("## Scoring and reports", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```toml\n(.*?)```", section, re.S)
    assert block, "README's gate example is gone"
    p = tmp_path / "readme_gate.toml"
    p.write_text(re.sub(r"^ {2}", "", block.group(1), flags=re.M))
    return p


def test_readme_gate_blocks_centroid_and_passes_tools(agents_results, tmp_path, capsys):
    res = tmp_path / "res"
    shutil.copytree(agents_results, res)
    assert main(["gate", str(res), "--thresholds", str(_readme_rule(tmp_path))]) == 1
    checks = json.loads((res / "summary.json").read_text())["gate"]["checks"]
    by_model = {
        c["cell"].get("model"): c["passed"] for c in checks if c["rule"] not in ("selfcheck", "options-only")
    }
    assert by_model == {"tools": True, "centroid": False}
    assert [c["rule"] for c in checks if c["rule"] == "options-only"] == [
        "options-only"
    ]  # the build's baseline
    assert next(c for c in checks if c["rule"] == "selfcheck")["passed"]


def test_old_tail_name_is_refused_with_its_meaning(tmp_path, agents_results, capsys):
    p = tmp_path / "old.toml"
    p.write_text(
        '[[rule]]\nlevel = "family"\nwhere = {family = "metric"}\nmetric = "quality_p10"\nmax = 1.0\n'
    )
    with pytest.raises(Exception, match="best decile"):
        load_thresholds(p)
    assert main(["gate", str(agents_results), "--thresholds", str(p)]) == 2


def test_failed_selfcheck_is_refused_even_with_an_override(agents_results, tmp_path):
    res = tmp_path / "res"
    shutil.copytree(agents_results, res)
    summary = json.loads((res / "summary.json").read_text())
    summary["selfcheck"] = {"passed": False, "messages": ["a drifted sample"]}
    (res / "summary.json").write_text(json.dumps(summary))
    rule = tmp_path / "ok.toml"
    rule.write_text('[[rule]]\nwhere = {model = "tools"}\nmetric = "accuracy"\nmin = 0\n')
    assert main(["gate", str(res), "--thresholds", str(rule), "--override-reason", "ship it"]) == 1
    gate = json.loads((res / "summary.json").read_text())["gate"]
    assert gate["refused"] and not gate["overridden"] and not gate["passed"]


def test_propose_from_five_results_then_overrides(agents_results, tmp_path, capsys):
    past = []
    for i in range(5):
        d = tmp_path / f"past{i}"
        shutil.copytree(agents_results, d)
        past.append(str(d))
    out = tmp_path / "proposed.toml"
    assert main(["gate", "--propose", *past[:4], "--out", str(out)]) == 2
    assert main(["gate", "--propose", *past, "--out", str(out), "--allowed-regression", "0.1"]) == 0
    rules = load_thresholds(out)
    cells = json.loads((agents_results / "summary.json").read_text())["cells"]
    tools_open = next(
        c for c in cells if c["level"] == "overall" and c["model"] == "tools" and c["form"] == "open"
    )
    rule = next(
        r
        for r in rules
        if r["level"] == "overall" and r["where"] == {"model": "tools", "modality": "geojson", "form": "open"}
    )
    assert rule["metric"] == "accuracy" and rule["min"] == pytest.approx(tools_open["accuracy"] - 0.1)
    assert {r["level"] for r in rules} == {"overall", "family"}
    # the results the thresholds came from pass them
    assert main(["gate", past[0], "--thresholds", str(out)]) == 0
    strict = tmp_path / "strict.toml"
    strict.write_text('[[rule]]\nwhere = {model = "centroid"}\nmetric = "accuracy"\nmin = 0.99\n')
    assert (
        main(["gate", past[1], "--thresholds", str(strict), "--override-reason", "centroid is a baseline"])
        == 0
    )
    capsys.readouterr()
    assert main(["gate", "--overrides", *past]) == 0
    listed = capsys.readouterr().out.strip().splitlines()
    assert len(listed) == 1 and "centroid is a baseline" in listed[0] and "past1" in listed[0]


def test_every_edit_failure_has_its_cause(edits):
    inst = next(
        i
        for i in edits.values()
        if i.get("answerable", {}).get("geojson", True) is not False
        and "set_attribute" not in i["allowed_operations"]
    )
    ref = json.dumps(inst["reference_edit"])
    replies = {
        "satisfied": ref,
        "no_change": json.dumps({"operations": [{"op": "translate", "dx": 0, "dy": 0}]}),
        # well-formed, but an operation the instance does not allow
        "invalid_operations": json.dumps({"operations": [{"op": "set_attribute", "name": "x", "value": 1}]}),
        "screened_geometry": json.dumps({"operations": [{"op": "translate", "dx": 5e6, "dy": 0}]}),
        "constraint_violated": json.dumps({"operations": [{"op": "translate", "dx": 400, "dy": -400}]}),
        "unparsed": "I would move it a little to the north.",
    }
    for cause, text in replies.items():
        v = score_edit(inst, text, modality="geojson")
        row = {
            "form": "edit",
            "verdict": v.verdict,
            "reason": v.reason,
            "screen": v.screen,
            "constraints_total": len(v.constraints) if v.constraints else None,
        }
        assert edit_cause(row) == cause, (cause, v.verdict, v.reason)
    empty = score_edit(inst, json.dumps({"operations": []}), modality="geojson")
    assert edit_cause({"verdict": empty.verdict, "reason": empty.reason}) == "no_change"
    failed = score_edit(inst, None, modality="geojson", status="error", error="timeout")
    assert edit_cause({"verdict": failed.verdict, "reason": failed.reason}) == "request_error"
    assert set(replies) < set(CAUSES)
