"""Journals written by the runner before the run session and the narrowed template checksums
(#26; tests/runner/fixtures/main_journal, made at main 6d63acf) resume: nothing is sent, every
reply is served from the journal, and scoring reads the same predictions."""

import json
import shutil
from pathlib import Path

import pytest
from runner_helpers import FAKE_KEY, fast_spec

from scoring.formats.rundir import final_predictions, read_records
from scoring.runner.config import StaticKeyProvider
from scoring.runner.run import run_benchmark
from scoring.score.conditions import run_conditions

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "main_journal"
# (modality, task, fault, attempts journaled): the base URL is the one they were run against,
# part of every key; nothing listens there now, so a request sent would fail the test
RUNS = [("geojson", "qa", "ok", 4), ("image", "qa", "ok", 4), ("geojson", "edit", "noop", 2)]


def resume(bench, modality, task, fault, out):
    spec = fast_spec(f"http://127.0.0.1:18799/f/{fault}/-1/v1", api_key_env="SG_KEY")
    return run_benchmark(
        bench, spec, modality, task, None, out, key_provider=StaticKeyProvider(FAKE_KEY), progress=False
    )


@pytest.mark.parametrize(("modality", "task", "fault", "attempts"), RUNS)
def test_a_journal_written_by_main_resumes_without_sending(tmp_path, modality, task, fault, attempts):
    shutil.copytree(FIXTURE, tmp_path / "fx")
    bench, out = tmp_path / "fx" / "bench", tmp_path / "fx" / f"{modality}-{task}"
    old = read_records(out / "predictions.jsonl")[0]
    before = {k: r["text"] for k, r in final_predictions(out / "predictions.jsonl").items()}
    requests_before = run_conditions(out, json.loads((out / "manifest.json").read_text()), "m")["requests"]
    s = resume(bench, modality, task, fault, out)
    assert (s.sent, s.from_journal, s.from_cache, s.failed) == (0, attempts, 0, 0)
    recs = read_records(out / "predictions.jsonl")[0]
    # each old record is copied once under its new key, naming the key it was journaled under
    copies = recs[len(old) :]
    assert sorted(c["cached_from"] for c in copies) == sorted(r["key"] for r in old)
    by_key = {r["key"]: r for r in old}
    for c in copies:
        was = by_key[c["cached_from"]]
        assert c["key"] != was["key"] and c["template_sha256"] != was["template_sha256"]
        assert (c["sample"], c["attempt_kind"], c["text"]) == (
            was["sample"],
            was["attempt_kind"],
            was["text"],
        )
    assert {k: r["text"] for k, r in final_predictions(out / "predictions.jsonl").items()} == before
    # the copies are no second request: the run's conditions count its requests once
    manifest = json.loads((out / "manifest.json").read_text())
    assert run_conditions(out, manifest, "m")["requests"] == requests_before
    # the next resume finds every record under its new key: nothing sent, nothing appended
    s2 = resume(bench, modality, task, fault, out)
    assert (s2.sent, s2.from_journal) == (0, attempts)
    assert len(read_records(out / "predictions.jsonl")[0]) == len(recs)


def test_a_journal_from_another_instruction_wording_is_asked_again(tmp_path, server):
    """A record journaled under a checksum that is neither today's nor the earlier form of it
    today (another instruction wording) is never reused: its sample is asked again."""
    shutil.copytree(FIXTURE, tmp_path / "fx")
    out = tmp_path / "fx" / "geojson-qa"
    journal = out / "predictions.jsonl"
    recs = read_records(journal)[0]
    journal.write_text(
        "".join(json.dumps({**r, "key": "0" * 63 + str(i)}) + "\n" for i, r in enumerate(recs))
    )
    spec = fast_spec(server.url("ok"), api_key_env="SG_KEY")
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["model"]["base_url"] = spec.base_url  # the same run, on the live server
    (out / "manifest.json").write_text(json.dumps(manifest))
    s = run_benchmark(
        tmp_path / "fx" / "bench",
        spec,
        "geojson",
        "qa",
        None,
        out,
        key_provider=StaticKeyProvider(FAKE_KEY),
        progress=False,
    )
    assert (s.sent, s.from_journal) == (4, 0)
