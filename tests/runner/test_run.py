"""run_benchmark end to end against real local servers."""

import json
import socket
import time

import pytest
from runner_helpers import FAKE_KEY, fast_spec, make_bench

from scoring.errors import InputError
from scoring.formats.rundir import final_predictions, read_records
from scoring.runner.config import StaticKeyProvider
from scoring.runner.prompts import template_info
from scoring.runner.run import EndpointUnreachableError, RunStoppedError, edit_needs_retry, run_benchmark

KEY = StaticKeyProvider(FAKE_KEY)


def run(bench, url, out, modality="geojson", task="qa", forms=None, **kw):
    spec_kw = kw.pop("spec_kw", {})
    return run_benchmark(
        bench,
        fast_spec(url, api_key_env="SG_KEY", **spec_kw),
        modality,
        task,
        forms,
        out,
        key_provider=KEY,
        progress=False,
        **kw,
    )


def all_bytes(d):
    return b"".join(p.read_bytes() for p in d.rglob("*") if p.is_file())


def test_qa_run_then_resume_sends_nothing(server, bench, tmp_path):
    out = tmp_path / "run"
    s = run(bench, server.url("ok"), out)
    assert (s.samples, s.ok, s.failed, s.sent) == (6, 6, 0, 6)
    preds = final_predictions(out / "predictions.jsonl")
    assert set(preds) == {f"helsinki-qa-{i:04d}|{f}" for i in range(3) for f in ("open", "mcq")}
    rec = preds["helsinki-qa-0000|mcq"]
    assert (
        rec["template"] == "qa-mcq-geojson"
        and rec["template_version"] == template_info("qa", "geojson", "mcq").version
        and rec["text"] == "Answer: B"
    )
    m = json.loads((out / "manifest.json").read_text())
    assert m["status"] == "complete" and m["endpoint_models"] == ["fake-model-served"]
    assert m["token_totals"]["total_tokens"] == 6 * 14 and m["tool_version"]
    assert (
        m["benchmark_manifest_sha256"] and m["forms"] == ["open", "mcq"] and m["seeds"] == {"generation": 0}
    )
    n = server.requests
    s2 = run(bench, server.url("ok"), out)
    assert s2.sent == 0 and s2.from_journal == 6 and server.requests == n
    assert len(read_records(out / "predictions.jsonl")[0]) == 6
    # another run pointed at this journal as a cache sends nothing either
    s3 = run(bench, server.url("ok"), tmp_path / "run3", cache=[out / "predictions.jsonl"])
    assert s3.sent == 0 and s3.from_cache == 6 and server.requests == n


def test_errors_are_retried_on_resume(server, bench, tmp_path):
    out = tmp_path / "run"
    url = server.url("500", 4)  # 4 failures per request: more than max_retries=3 allows
    s = run(bench, url, out, forms=["open"])
    assert s.failed == 3 and s.failures == {"server_error": 3}
    assert json.loads((out / "manifest.json").read_text())["status"] == "incomplete"
    s = run(bench, url, out, forms=["open"])
    assert s.ok == 3 and s.sent == 3
    recs = read_records(out / "predictions.jsonl")[0]
    assert [r["status"] for r in recs].count("ok") == 3 and len(recs) == 6
    s = run(bench, url, out, forms=["open"])
    assert s.sent == 0


def test_bad_bodies_never_crash_a_run(server, bench, tmp_path):
    for fault in ("garbage", "huge", "empty", "badutf8", "nan", "400", "truncated", "reset"):
        s = run(bench, server.url(fault), tmp_path / fault, forms=["mcq"], limit=1)
        assert s.samples == 1
        rec = read_records(tmp_path / fault / "predictions.jsonl")[0][-1]
        assert rec["status"] == ("ok" if fault in ("badutf8", "nan") else "error"), fault


def test_secrets_never_written(server, bench, tmp_path):
    out = tmp_path / "run"
    # the server echoes the key back in a 401: the run stops at once with the server's words
    with pytest.raises(RunStoppedError, match=r"HTTP 401: invalid credentials Bearer <redacted> -- .*SG_KEY"):
        run(bench, server.url("echoauth"), out, forms=["open"])
    assert server.requests <= 4  # the in-flight first wave only, nothing re-sent
    assert json.loads((out / "manifest.json").read_text())["status"] == "stopped"
    assert server.auth_headers[0] == f"Bearer {FAKE_KEY}"
    data = all_bytes(out)
    assert FAKE_KEY.encode() not in data and b"<redacted>" in data
    with pytest.raises(InputError) as ei:  # the key env var missing: names the variable, not a value
        run_benchmark(
            bench,
            fast_spec(server.url("ok"), api_key_env="SG_NOT_SET_ANYWHERE"),
            "geojson",
            "qa",
            None,
            tmp_path / "x",
            progress=False,
        )
    assert "SG_NOT_SET_ANYWHERE" in str(ei.value)


def test_unreachable_endpoint_aborts_fast(bench, tmp_path):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    t = time.perf_counter()
    with pytest.raises(EndpointUnreachableError) as ei:
        run(bench, f"http://127.0.0.1:{port}/v1", tmp_path / "run")
    msg = str(ei.value)
    assert f"127.0.0.1:{port}" in msg and FAKE_KEY not in msg and "\n" not in msg
    assert time.perf_counter() - t < 2
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "aborted"


def test_edit_corrective_turn(server, bench, tmp_path):
    out = tmp_path / "run"
    s = run(bench, server.url("noop"), out, modality="image", task="edit")
    assert s.ok == 2 and s.corrective == 2 and s.sent == 4
    recs = read_records(out / "predictions.jsonl")[0]
    first = [r for r in recs if r["attempt"] == 1]
    second = [r for r in recs if r["attempt"] == 2]
    assert all(not r["final"] and "does nothing" in r["retry_reason"] for r in first)
    assert all(r["final"] and r["attempt_kind"] == "corrective" for r in second)
    corrective_req = [b for b in server.bodies if len(b["messages"]) == 4][0]
    follow = corrective_req["messages"][3]["content"]
    assert "constraint" not in follow.lower() and "non-zero" in follow
    assert corrective_req["messages"][2]["role"] == "assistant"
    # resume: nothing re-sent
    n = server.requests
    assert (
        run(bench, server.url("noop"), out, modality="image", task="edit").sent == 0 and server.requests == n
    )


def test_modality_contents(server, bench, tmp_path):
    run(bench, server.url("ok"), tmp_path / "img", modality="image", forms=["open"], limit=1)
    msgs = server.bodies[-1]["messages"]
    text = msgs[1]["content"][0]["text"]
    assert "385000" not in text and "geojson" not in text.lower()
    assert msgs[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    run(bench, server.url("ok"), tmp_path / "geo", modality="geojson", forms=["open"], limit=1)
    msgs = server.bodies[-1]["messages"]
    assert isinstance(msgs[1]["content"], str) and "385000" in msgs[1]["content"]
    run(bench, server.url("ok"), tmp_path / "both", modality="together", forms=["open"], limit=1)
    msgs = server.bodies[-1]["messages"]
    assert "385000" in msgs[1]["content"][0]["text"] and msgs[1]["content"][1]["type"] == "image_url"


def test_adaptive_concurrency_on_429(server, tmp_path):
    bench = make_bench(tmp_path / "b", n_qa=20, n_edit=0, maps=False)
    s = run(bench, server.url("429", 1), tmp_path / "run", forms=["open"], spec_kw={"concurrency": 8})
    assert s.ok == 20 and s.failed == 0
    recs = read_records(tmp_path / "run" / "predictions.jsonl")[0]
    assert all(r["retries"].get("rate_limited") == 1 for r in recs)


def test_input_errors(server, tmp_path):
    bench = make_bench(tmp_path / "b", maps=False)
    with pytest.raises(InputError, match="map image"):
        run(bench, server.url("ok"), tmp_path / "r", modality="image")
    with pytest.raises(InputError, match="unknown instance id"):
        run(bench, server.url("ok"), tmp_path / "r", ids=["nope"])
    with pytest.raises(InputError, match="manifest.json"):
        run(tmp_path, server.url("ok"), tmp_path / "r")
    run(bench, server.url("ok"), tmp_path / "r2", limit=1)
    with pytest.raises(InputError, match="different modality"):
        run(make_bench(tmp_path / "b2"), server.url("ok"), tmp_path / "r2", modality="image", limit=1)


@pytest.mark.parametrize(
    "text,needs",
    [
        ('{"operations": [{"op": "translate", "dx": 5, "dy": 0}]}', False),
        (
            'Sure!\n```json\n{"operations": [{"op": "scale", "factor": 1.2, "origin": "centroid"}]}\n```',
            False,
        ),
        ('{"operations": [{"op": "set_attribute", "name": "height", "value": 12}]}', False),
        (
            '{"operations": [{"op": "translate", "dx": 0, "dy": 0}, '
            '{"op": "rotate", "degrees_clockwise": 360}]}',
            True,
        ),
        ('{"operations": []}', True),
        ("move it north", True),
        ('{"ops": []}', True),
        ('{"operations": [{"op": "explode"}]}', True),
        (None, True),
    ],
)
def test_edit_needs_retry(text, needs):
    assert (edit_needs_retry(text) is not None) == needs
