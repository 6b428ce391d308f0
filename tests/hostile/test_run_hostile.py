"""`spatialgap run` against the hostile endpoint (tests/hostile/server.py), as a subprocess: every
reply shape ends in a recorded, classified outcome, within a bounded wait, with the journal
readable and the key nowhere."""

from __future__ import annotations

import asyncio
import json
import tracemalloc

import pytest
from runner_helpers import make_bench

from scoring.runner.config import ModelSpec
from scoring.runner.http_transport import AiohttpTransport
from scoring.runner.run import RunStoppedError, run_benchmark
from scoring.runner.transport import TransportError
from tests.hostile.helpers import KEY, one_line_error, records, run_cmd, spatialgap
from tests.hostile.server import DEEP, HostileServer


@pytest.fixture
def bench1(tmp_path):
    return make_bench(tmp_path / "bench", n_qa=1, n_edit=0, maps=False)


@pytest.mark.parametrize("kind", ["openai", "ollama"])
@pytest.mark.parametrize("shape", ["drip-body", "drip-headers"])
def test_a_dripping_server_ends_in_a_classified_timeout(hostile, bench1, tmp_path, shape, kind):
    """One byte a second arrives within every per-read timeout: a request now has one deadline for
    connect, headers and body. The process must exit by itself within the bound (a hang fails
    on the subprocess's timeout), with the timeout recorded and retried as one."""
    hostile.drip_s = 1.0
    out = tmp_path / "run"
    proc = spatialgap(
        *run_cmd(bench1, hostile.url(shape), out, "--form", "open", "--timeout", "2", kind=kind)
    )
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "failures (timeout: 1)" in proc.stderr
    (rec,) = records(out / "predictions.jsonl")
    assert rec["error"]["kind"] == "timeout" and "timed out after 2 s" in rec["error"]["message"]
    assert rec["retries"] == {"timeout": 1}  # retried once, as a timeout
    assert hostile.counts[shape] == 2


def test_an_absurd_retry_after_is_recorded_at_once_and_said(hostile, tmp_path):
    """Retry-After: 1000000000 used to mean 8 waits of 300 s per sample, silently under
    --no-progress. The sample's wait budget (max_wait_s, default 300 s) is spent before the first
    wait: each sample is recorded as rate limited, once, and the display says why."""
    bench = make_bench(tmp_path / "bench", n_qa=2, n_edit=0, maps=False)
    out = tmp_path / "run"
    proc = spatialgap(*run_cmd(bench, hostile.url("retry-after"), out))
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "not retried (Retry-After 1e+09 s)" in proc.stderr and "wait budget is 300 s" in proc.stderr
    assert "(max_wait_s, --max-wait)" in proc.stderr
    assert "4 samples not retried" in proc.stderr
    recs = records(out / "predictions.jsonl")
    assert len(recs) == 4 and hostile.counts["retry-after"] == 4  # one request each, no retry
    for rec in recs:
        assert rec["error"]["kind"] == "rate_limited" and "max_wait_s" in rec["error"]["message"]


@pytest.mark.parametrize(
    ("shape", "code"),
    [("surrogate-content", 0), ("surrogate-reasoning", 0), ("surrogate-header", 0), ("surrogate-error", 1)],
)
def test_unpaired_surrogates_are_journaled_and_resume_and_score(hostile, bench1, tmp_path, shape, code):
    """A reply holding "\\ud800" (valid JSON, not encodable as UTF-8) used to crash the journal
    write, and every resume after it: it is now kept (U+FFFD in its place, with a warning), the
    resume runs, and the run scores."""
    out = tmp_path / "run"
    first = spatialgap(*run_cmd(bench1, hostile.url(shape), out))
    assert first.returncode == code and "Traceback" not in first.stderr, first.stderr[-3000:]
    recs = records(out / "predictions.jsonl")
    assert len(recs) == 2
    for rec in recs:
        blob = json.dumps(rec, ensure_ascii=False)
        blob.encode("utf-8")  # encodable text all through
        if shape != "surrogate-header":
            assert "\ufffd" in blob
            assert any("surrogate" in w for w in rec["warnings"])
    again = spatialgap(*run_cmd(bench1, hostile.url(shape), out))
    assert again.returncode == code and "Traceback" not in again.stderr, again.stderr[-3000:]
    scored = spatialgap("score", "--bench", str(bench1), "--run", str(out), "--out", str(tmp_path / "res"))
    assert scored.returncode == 0, scored.stderr[-3000:]
    assert (tmp_path / "res" / "verdicts.jsonl").is_file()


def test_a_journal_line_nested_100000_deep_is_skipped_with_one_warning(hostile, bench1, tmp_path):
    out = tmp_path / "run"
    assert spatialgap(*run_cmd(bench1, hostile.url("ok"), out)).returncode == 0
    journal = out / "predictions.jsonl"
    with journal.open("a") as fh:
        fh.write('{"key":' + "[" * DEEP + "]" * DEEP + "}\n")
    sent = hostile.counts["ok"]
    again = spatialgap(*run_cmd(bench1, hostile.url("ok"), out))
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr[-3000:]
    assert f"{journal}:3: skipping an unreadable journal line (nested too deeply)" in again.stderr
    assert hostile.counts["ok"] == sent  # both samples resumed from the journal
    scored = spatialgap("score", "--bench", str(bench1), "--run", str(out), "--out", str(tmp_path / "res"))
    assert scored.returncode == 0 and "Traceback" not in scored.stderr, scored.stderr[-3000:]


def test_a_reply_nested_100000_deep_is_recorded_as_not_json(hostile, bench1, tmp_path):
    out = tmp_path / "run"
    proc = spatialgap(*run_cmd(bench1, hostile.url("deep"), out))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert {r["error"]["kind"] for r in records(out / "predictions.jsonl")} == {"bad_json"}


def test_a_benchmark_file_nested_too_deep_is_a_one_line_error(hostile, bench1, tmp_path):
    with (bench1 / "qa.jsonl").open("a") as fh:
        fh.write("[" * DEEP + "]" * DEEP + "\n")
    proc = spatialgap(*run_cmd(bench1, hostile.url("ok"), tmp_path / "run"))
    assert proc.returncode == 2
    assert "qa.jsonl" in one_line_error(proc)


def test_a_gzip_bomb_is_recorded_too_large(hostile, bench1, tmp_path):
    out = tmp_path / "run"
    proc = spatialgap(*run_cmd(bench1, hostile.url("gzip-bomb"), out))
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert {r["error"]["kind"] for r in records(out / "predictions.jsonl")} == {"too_large"}


def test_a_gzip_bomb_costs_the_cap_not_its_size():
    """256 MiB of zeros in ~250 KB of gzip against a 1 MiB cap: the transport's allocations stay
    within a few caps (aiohttp's own decompression inflated each 64 KiB chunk whole, ~64 MiB)."""
    srv = HostileServer(bomb_mb=256).start()
    try:
        srv.bomb  # noqa: B018 - compressed before measuring

        async def post() -> TransportError:
            t = AiohttpTransport()
            try:
                await t.post_json(srv.url("gzip-bomb") + "/chat/completions", {}, {"a": 1}, 30.0, 1 << 20)
            except TransportError as exc:
                return exc
            finally:
                await t.aclose()
            raise AssertionError("the bomb was accepted")

        tracemalloc.start()
        try:
            exc = asyncio.run(post())
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    finally:
        srv.stop()
    assert exc.kind == "too_large"
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB for a 1 MiB cap"


def test_a_key_echoed_in_a_reply_is_redacted_from_the_journal(hostile, bench1, tmp_path):
    out = tmp_path / "run"
    proc = spatialgap(
        *run_cmd(bench1, hostile.url("echo-key"), out, "--api-key-env", "HOSTILE_KEY"),
        env={"HOSTILE_KEY": KEY},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "<redacted>" in records(out / "predictions.jsonl")[0]["text"]
    for f in out.rglob("*"):
        if f.is_file():
            assert KEY not in f.read_text(errors="replace"), f


def test_a_credential_in_the_url_query_is_redacted_everywhere(hostile, bench1, tmp_path):
    """A base URL carrying ?api_key=... (config validation refuses it; a spec built in code does
    not validate): when the endpoint echoes the URL, the key lands in no record, manifest or
    error message."""
    secret = "sk-query-SECRET-987654321"
    spec = ModelSpec(
        name="m", kind="openai", base_url=hostile.url("echo-url") + f"?api_key={secret}", model="m"
    )
    out = tmp_path / "run"
    with pytest.raises(RunStoppedError) as caught:
        run_benchmark(bench1, spec, "geojson", "qa", ["open"], out, progress=False)
    assert "no route POST" in str(caught.value) and secret not in str(caught.value)
    texts = [f.read_text() for f in out.rglob("*") if f.is_file()]
    assert any("<redacted>" in t for t in texts)
    assert not any(secret in t for t in texts)
