"""`spatialgap run` against replies that once crashed it, leaked a key or waited without bound:
a number past Python's integer limit, a key echoed across a message's cut, a key in
`extra_body`, a 429 for ever and a billing 429."""

from __future__ import annotations

import json

import pytest
from runner_helpers import make_bench

from tests.hostile.helpers import KEY, one_line_error, records, run_cmd, spatialgap


@pytest.fixture
def bench1(tmp_path):
    return make_bench(tmp_path / "bench", n_qa=1, n_edit=0, maps=False)


@pytest.mark.parametrize(("shape", "kind"), [("big-int", "bad_json"), ("big-int-400", "client_error")])
def test_a_number_past_the_integer_limit_is_recorded_not_a_crash(hostile, bench1, tmp_path, shape, kind):
    """A 5,000-digit number is valid JSON that Python's int() refuses (ValueError, not a
    JSONDecodeError): it used to escape the reader with a traceback and an empty journal."""
    out = tmp_path / "run"
    proc = spatialgap("--json", *run_cmd(bench1, hostile.url(shape), out))
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["exit_code"] == 1
    recs = records(out / "predictions.jsonl")
    assert len(recs) == 2 and {r["error"]["kind"] for r in recs} == {kind}
    assert json.loads((out / "manifest.json").read_text())["status"] == "incomplete"


@pytest.mark.parametrize(
    ("shape", "code"), [("echo-key-cut-401", 3), ("echo-key-cut-html", 1), ("echo-key-cut-refusal", 1)]
)
def test_a_key_echoed_across_a_cut_leaves_no_part_of_it(hostile, bench1, tmp_path, shape, code):
    """The server places the key so that the message's old cut fell 2 characters before its end:
    redaction matched whole keys only, after the cut, so all but 2 characters were kept."""
    out = tmp_path / "run"
    proc = spatialgap(
        *run_cmd(bench1, hostile.url(shape), out, "--api-key-env", "HOSTILE_KEY"), env={"HOSTILE_KEY": KEY}
    )
    assert proc.returncode == code, proc.stderr[-2000:]
    texts = {"stderr": proc.stderr, "stdout": proc.stdout}
    texts.update({str(f): f.read_text(errors="replace") for f in out.rglob("*") if f.is_file()})
    assert any("<redacted>" in t for t in texts.values())
    for where, text in texts.items():
        for n in range(8, len(KEY) + 1):  # no prefix or suffix of 8 characters or more
            assert KEY[:n] not in text and KEY[-n:] not in text, (where, n)


@pytest.mark.parametrize(
    "extra_body",
    [
        # a key-shaped fake, put together here so that no key-like string is tracked as it is
        'extra_body = { api_key = "' + "sk-ant-api03-" + "abcdefghijklmnop" + '" }',
        'extra_body = { chat = { stop = ["x", "sk-hostile-SECRET-0123456789abcdef"] } }',
    ],
)
def test_a_key_in_extra_body_is_refused_without_echoing_it(hostile, bench1, tmp_path, extra_body):
    config = tmp_path / "models.toml"
    config.write_text(
        f'[models.m]\nkind = "openai"\nbase_url = "{hostile.url("ok")}"\nmodel = "m"\n{extra_body}\n'
    )
    out = tmp_path / "run"
    cmd = run_cmd(bench1, hostile.url("ok"), out)
    cmd[cmd.index("--endpoint") : cmd.index("--endpoint") + 2] = ["--config", str(config)]
    proc = spatialgap(*cmd)
    assert proc.returncode == 2
    line = one_line_error(proc)
    assert "models.m.extra_body." in line and "credential" in line and "api_key_env" in line
    assert "sk-" not in proc.stderr
    assert hostile.counts == {} and not (out / "manifest.json").exists()


def test_max_wait_bounds_every_wait_of_a_sample_shared_pauses_included(hostile, tmp_path):
    """429 for ever, Retry-After 0.5 s, --max-wait 2: the limiter's pause after a 429 (shared by
    every request of the run) and the wait for a slot it took back used to be uncounted, so 12
    samples took 5-7 times the budget. Each sample's whole time (latency_s: every wait and every
    exchange) now stays within its budget, plus its exchanges' own time."""
    hostile.retry_after_s = 0.5
    bench = make_bench(tmp_path / "bench", n_qa=6, n_edit=0, maps=False)
    out = tmp_path / "run"
    proc = spatialgap(*run_cmd(bench, hostile.url("rate-limit"), out, "--max-wait", "2"))
    assert proc.returncode == 1, proc.stderr[-2000:]
    recs = records(out / "predictions.jsonl")
    assert len(recs) == 12 and {r["error"]["kind"] for r in recs} == {"rate_limited"}
    worst = max(r["latency_s"] for r in recs)
    print(f"longest sample: {worst:.2f} s for a 2 s budget")
    assert worst < 2 + 1.0, worst  # 1 s: loopback exchanges of a few ms each, under load
    assert all("max_wait_s" in r["error"]["message"] for r in recs)


def test_a_billing_429_stops_the_model_with_the_servers_words(hostile, bench1, tmp_path):
    """insufficient_quota is a 429 no wait ends: it used to be retried for ever (950 s and on)."""
    out = tmp_path / "run"
    proc = spatialgap(*run_cmd(bench1, hostile.url("quota"), out))
    assert proc.returncode == 3, proc.stderr[-2000:]
    assert "You exceeded your current quota" in proc.stderr and "billing" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert hostile.counts["quota"] <= 2  # each sample once at most, no retry
    assert {r["error"]["kind"] for r in records(out / "predictions.jsonl")} <= {"quota", "not_sent"}
