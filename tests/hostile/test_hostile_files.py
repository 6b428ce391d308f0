"""Files that are not what they claim: a journal field of the wrong type read by `report`, a
device given as `--cache`."""

from __future__ import annotations

import json

import pytest
from runner_helpers import make_bench

from tests.hostile.helpers import one_line_error, run_cmd, spatialgap


@pytest.fixture
def bench1(tmp_path):
    return make_bench(tmp_path / "bench", n_qa=1, n_edit=0, maps=False)


def test_a_journal_field_of_the_wrong_type_is_reported_not_a_crash(hostile, bench1, tmp_path):
    """`"usage": "lots"` (and a latency and attempt of the wrong type) passed `score` and crashed
    `report` with a traceback in the per-sample browser."""
    out = tmp_path / "run"
    assert spatialgap(*run_cmd(bench1, hostile.url("ok"), out)).returncode == 0
    journal = out / "predictions.jsonl"
    recs = [json.loads(line) for line in journal.read_text().splitlines()]
    for rec in recs:
        rec.update(usage="lots", latency_s="slow", attempt=[1])
    journal.write_text("".join(json.dumps(r) + "\n" for r in recs))
    res = tmp_path / "res"
    scored = spatialgap("score", "--bench", str(bench1), "--run", str(out), "--out", str(res))
    assert scored.returncode == 0, scored.stderr[-2000:]
    report = spatialgap("report", str(res), "--out", str(tmp_path / "report.html"))
    assert report.returncode == 0 and "Traceback" not in report.stderr, report.stderr[-3000:]
    assert (tmp_path / "browser.html").is_file()


@pytest.mark.parametrize("cache", ["/dev/zero", "fifo"])
def test_a_cache_that_is_no_regular_file_is_refused_before_anything_is_written(
    hostile, bench1, tmp_path, cache
):
    """`--cache /dev/zero` was read without end (a journal is refused when not a regular file;
    a cache was not checked)."""
    if cache == "fifo":
        import os

        cache = str(tmp_path / "fifo")
        os.mkfifo(cache)
    out = tmp_path / "run"
    proc = spatialgap(*run_cmd(bench1, hostile.url("ok"), out, "--cache", cache), timeout=60)
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert cache in line and "not a regular file" in line
    assert hostile.counts == {} and not out.exists()
