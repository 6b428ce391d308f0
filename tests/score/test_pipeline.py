"""score -> report -> gate end to end over real runs: the built-in agents served over HTTP on
loopback, `spatialgap run` writing real journals, then the scoring commands."""

import json
import shutil
import subprocess
import sys

import pytest

from scoring.cli import main
from scoring.runner.agents import start_server
from scoring.score import run_selfcheck, score_runs, write_report
from scoring.score.selfcheck import FIXTURE_DIR

REQUIRED = {"id", "model", "task", "modality", "form", "verdict", "reason"}


def _serve(name):
    """A built-in agent on loopback; one that fails to start fails the test (never a skip)."""
    server, _ = start_server(name)
    return server


@pytest.fixture(scope="module")
def runs(small_bench, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    out = {}
    servers = [_serve("chance")]
    try:
        url = f"http://127.0.0.1:{servers[0].server_address[1]}/v1"
        for modality, task in (("geojson", "qa"), ("geojson", "edit"), ("image", "edit")):
            d = root / f"chance-{modality}-{task}"
            assert (
                main(
                    [
                        "run",
                        "--bench",
                        str(small_bench),
                        "--endpoint",
                        url,
                        "--model",
                        "chance",
                        "--modality",
                        modality,
                        "--task",
                        task,
                        "--out",
                        str(d),
                        "--no-progress",
                    ]
                )
                == 0
            )
            out[(modality, task)] = d
        d = root / "chance-geojson-qa-limited"
        # another model name for the same served agent (the server checks the model it is asked for)
        config = root / "models.toml"
        config.write_text(f'[models.chance-limited]\nkind = "openai"\nbase_url = "{url}"\nmodel = "chance"\n')
        assert (
            main(
                [
                    "run",
                    "--bench",
                    str(small_bench),
                    "--config",
                    str(config),
                    "--model",
                    "chance-limited",
                    "--modality",
                    "geojson",
                    "--task",
                    "qa",
                    "--out",
                    str(d),
                    "--no-progress",
                    "--limit",
                    "2",
                ]
            )
            == 0
        )
        out["limited"] = d
    finally:
        for s in servers:
            s.shutdown()
    return out


def test_score_writes_every_sample(small_bench, runs, tmp_path, qa, edits):
    res = tmp_path / "res"
    summary = score_runs(
        small_bench, [runs[("geojson", "qa")], runs[("geojson", "edit")], runs[("image", "edit")]], res
    )
    rows = [json.loads(x) for x in (res / "verdicts.jsonl").read_text().splitlines()]
    assert len(rows) == 2 * len(qa) + 2 * len(edits) == summary["samples"]
    assert all(REQUIRED <= set(r) for r in rows)
    overall = {(c["modality"], c["form"]): c for c in summary["cells"] if c["level"] == "overall"}
    for c in overall.values():
        assert c["n"] == c["correct"] + c["wrong"] + c["unparsed"] + c["error"] + c["unfounded_answer"]
        assert c["ci_low"] <= c["accuracy"] <= c["ci_high"]
    assert overall[("image", "edit")]["raster_tolerant_rate"] is not None
    assert overall[("geojson", "edit")]["raster_tolerant_rate"] is None
    assert summary["selfcheck"]["passed"] is True and summary["versions"]["shapely"]
    assert (res / "summary.csv").read_text().splitlines()[0].startswith("level,model,modality,form")
    # deterministic: re-scoring gives byte-identical verdicts
    score_runs(
        small_bench,
        [runs[("geojson", "qa")], runs[("geojson", "edit")], runs[("image", "edit")]],
        tmp_path / "again",
        selfcheck=False,
    )
    assert (tmp_path / "again" / "verdicts.jsonl").read_bytes() == (res / "verdicts.jsonl").read_bytes()


def test_runs_scored_early_are_taken_only_while_their_journal_is_unchanged(
    small_bench, runs, tmp_path, monkeypatch
):
    import scoring.formats.rundir
    from scoring.score.results import score_run_dir

    chosen = [runs[("geojson", "qa")], runs[("image", "edit")]]
    plain = score_runs(small_bench, chosen, tmp_path / "plain", selfcheck=False)
    early = {str(rd): score_run_dir(small_bench, rd) for rd in chosen}
    # rows scored early are what score_runs would compute: the same verdicts, byte for byte
    summary = score_runs(small_bench, chosen, tmp_path / "early", selfcheck=False, prescored=early)
    verdicts = (tmp_path / "early" / "verdicts.jsonl").read_bytes()
    assert verdicts == (tmp_path / "plain" / "verdicts.jsonl").read_bytes()
    assert summary["cells"] == plain["cells"]
    # and they are used: rows planted under a journal's current fingerprint come out as given
    fingerprint, rows = early[str(chosen[0])]
    planted = [{**r, "reason": "planted"} for r in rows]
    read = []  # the journals read again: only the run not prescored (the sweep's last seconds)
    real_finals = scoring.formats.rundir.final_predictions
    monkeypatch.setattr(
        scoring.formats.rundir, "final_predictions", lambda p: read.append(p.parent) or real_finals(p)
    )
    score_runs(
        small_bench,
        chosen,
        tmp_path / "planted",
        selfcheck=False,
        prescored={str(chosen[0]): (fingerprint, planted)},
    )
    out = [json.loads(x) for x in (tmp_path / "planted" / "verdicts.jsonl").read_text().splitlines()]
    assert sum(r["reason"] == "planted" for r in out) == len(rows)
    assert read == [chosen[1]]
    # a stale fingerprint (the journal changed since) is ignored: the run is scored again
    stale = {str(chosen[0]): ((fingerprint[0] + 1, fingerprint[1]), planted)}
    score_runs(small_bench, chosen, tmp_path / "stale", selfcheck=False, prescored=stale)
    assert (tmp_path / "stale" / "verdicts.jsonl").read_bytes() == verdicts


def test_missing_samples_count_as_errors(small_bench, runs, tmp_path, qa):
    s = score_runs(small_bench, [runs["limited"]], tmp_path / "a", selfcheck=False)
    cell = next(c for c in s["cells"] if c["level"] == "overall" and c["form"] == "open")
    assert cell["n"] == len(qa) and cell["error"] == len(qa) - 2
    s = score_runs(small_bench, [runs["limited"]], tmp_path / "b", selfcheck=False, only_recorded=True)
    assert next(c for c in s["cells"] if c["level"] == "overall" and c["form"] == "open")["n"] == 2


def test_bad_inputs_are_one_line_errors(small_bench, runs, tmp_path, capsys):
    assert (
        main(
            [
                "score",
                "--bench",
                str(tmp_path),
                "--run",
                str(runs[("geojson", "qa")]),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    other = tmp_path / "run-copy"
    shutil.copytree(runs[("geojson", "qa")], other)
    m = json.loads((other / "manifest.json").read_text())
    m["benchmark_manifest_sha256"] = "0" * 64
    (other / "manifest.json").write_text(json.dumps(m))
    assert (
        main(["score", "--bench", str(small_bench), "--run", str(other), "--out", str(tmp_path / "o")]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all(line.startswith("spatialgap score: error:") for line in err)
    assert "another benchmark" in err[1]
    assert (
        main(
            [
                "score",
                "--bench",
                str(small_bench),
                "--run",
                str(runs[("geojson", "qa")]),
                "--run",
                str(runs[("geojson", "qa")]),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )


def test_report_and_gate(small_bench, runs, tmp_path):
    res = tmp_path / "res"
    # scored with the selfcheck: the gate refuses results whose selfcheck did not pass
    score_runs(small_bench, [runs[("geojson", "qa")], runs[("image", "edit")]], res)
    html = write_report([res], tmp_path / "r" / "report.html").read_text()
    assert html.count("data:image/png;base64,") >= 2 and 'src="http' not in html
    assert "Table 4." in html and "answerable-only" in html and "raster-tol" in html
    assert (tmp_path / "r" / "table1.csv").is_file()
    thresholds = tmp_path / "gate.toml"
    thresholds.write_text(
        '[[rule]]\nlevel = "overall"\nwhere = {model = "chance", form = "mcq"}\n'
        'metric = "parse_rate"\nmin = 0.99\n'
    )
    assert main(["gate", str(res), "--thresholds", str(thresholds)]) == 0
    thresholds.write_text(
        '[[rule]]\nlevel = "family"\nwhere = {model = "chance", form = "open", family = "metric"}\n'
        'metric = "accuracy"\nmin = 0.99\n'
    )
    assert main(["gate", str(res), "--thresholds", str(thresholds)]) == 1
    assert main(["gate", str(res), "--thresholds", str(thresholds), "--override-reason", " "]) == 2
    assert (
        main(["gate", str(res), "--thresholds", str(thresholds), "--override-reason", "chance is a floor"])
        == 0
    )
    gate = json.loads((res / "summary.json").read_text())["gate"]
    assert gate["blocked"] and gate["overridden"] and gate["override_reason"] == "chance is a floor"
    assert len((res / "gate.jsonl").read_text().splitlines()) == 3
    thresholds.write_text('[[rule]]\nwhere = {model = "nobody"}\nmetric = "accuracy"\nmin = 0\n')
    assert main(["gate", str(res), "--thresholds", str(thresholds)]) == 1


def test_mcnemar_between_models(small_bench, runs, tmp_path):
    server = _serve("tools")
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        d = tmp_path / "tools-geojson-qa"
        assert (
            main(
                [
                    "run",
                    "--bench",
                    str(small_bench),
                    "--endpoint",
                    url,
                    "--model",
                    "tools",
                    "--modality",
                    "geojson",
                    "--task",
                    "qa",
                    "--out",
                    str(d),
                    "--no-progress",
                ]
            )
            == 0
        )
    finally:
        server.shutdown()
    s = score_runs(small_bench, [runs[("geojson", "qa")], d], tmp_path / "res", selfcheck=False)
    tools = next(
        c for c in s["cells"] if c["level"] == "overall" and c["model"] == "tools" and c["form"] == "open"
    )
    assert tools["accuracy"] >= 0.99
    pair = next(m for m in s["mcnemar"] if m["form"] == "mcq")
    assert {pair["first"], pair["second"]} == {"chance", "tools"} and pair["p_value"] < 0.001


def test_selfcheck_passes_and_names_drift(tmp_path):
    assert run_selfcheck() == []
    bad = tmp_path / "fixture"
    shutil.copytree(FIXTURE_DIR, bad)
    lines = (bad / "cases.jsonl").read_text().splitlines()
    case = json.loads(lines[0])
    case["expect"]["verdict"] = "wrong"
    lines[0] = json.dumps(case)
    (bad / "cases.jsonl").write_text("\n".join(lines) + "\n")
    msgs = run_selfcheck(bad)
    assert any(case["sample"] in m for m in msgs)
    assert any(m.startswith("figure") for m in msgs) is False  # only the expectation changed
    r = subprocess.run([sys.executable, "-m", "scoring", "selfcheck"], capture_output=True, text=True)
    assert r.returncode == 0 and "selfcheck passed" in r.stdout
