"""Through a real LiteLLM proxy in front of a built-in agent: map images arrive byte for byte,
and the failure paths (refused key, unknown model, dead backend) stop the run at once with the
proxy's words.

LiteLLM lives in its own venv (.venv/litellm): installed into the project's venv it would
upgrade jinja2, jsonschema, certifi and packaging and add ~90 packages the product never uses."""

import base64
import hashlib
import http.client
import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
from runner_helpers import make_bench, tiny_png

from scoring.formats.rundir import read_records
from scoring.runner.agents import agent, registry, start_server
from scoring.runner.config import EnvKeyProvider, ModelSpec
from scoring.runner.run import RunStoppedError, run_benchmark

REPO = Path(__file__).resolve().parents[2]
LITELLM = REPO / ".venv" / "litellm" / "bin" / "litellm"
MASTER = "sk-proxy-master-0123456789abcdef"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def image_digest(messages):
    """Answers with the SHA-256 of every image it received (what reached the model, exactly)."""
    digests = []
    for m in messages:
        for part in m.get("content") if isinstance(m.get("content"), list) else []:
            if part.get("type") == "image_url":
                data = part["image_url"]["url"].split(",", 1)[1]
                digests.append(hashlib.sha256(base64.b64decode(data)).hexdigest())
    return "Answer: " + ",".join(digests)


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    if not LITELLM.exists():
        pytest.skip(
            "LiteLLM proxy absent: it needs its own venv (it would upgrade the project's jinja2, "
            "jsonschema, certifi): /usr/bin/python3 -m venv .venv/litellm && "
            ".venv/litellm/bin/pip install -r requirements-litellm.txt"
        )
    agent("test-image-digest")(image_digest)
    srv, _ = start_server("test-image-digest")
    root = tmp_path_factory.mktemp("litellm")
    dead = _free_port()
    backend = f"http://127.0.0.1:{srv.server_address[1]}/v1"
    models = [("digest", backend, "test-image-digest"), ("dead", f"http://127.0.0.1:{dead}/v1", "x")]
    cfg = "model_list:\n" + "".join(
        f"  - model_name: {name}\n    litellm_params:\n      model: openai/{model}\n"
        f"      api_base: {base}\n      api_key: none\n"
        for name, base, model in models
    )
    cfg += f"general_settings:\n  master_key: {MASTER}\nlitellm_settings:\n  num_retries: 0\n"
    (root / "config.yaml").write_text(cfg)
    port = _free_port()
    log = open(root / "proxy.log", "w")
    proc = subprocess.Popen(
        [str(LITELLM), "--config", str(root / "config.yaml"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, "LITELLM_LOG": "ERROR", "DISABLE_SCHEMA_UPDATE": "true"},
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("GET", "/health/liveliness")
                if c.getresponse().status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"LiteLLM proxy did not start: {(root / 'proxy.log').read_text()[-2000:]}")
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()
        srv.shutdown()
        srv.server_close()
        registry.AGENTS.pop("test-image-digest", None)


def run(bench, url, model, out, key=MASTER, **kw):
    spec = ModelSpec.from_endpoint(
        url, model, "SG_PROXY_KEY", concurrency=4, timeout_s=60, backoff_base_s=0.05
    )
    return run_benchmark(
        bench,
        spec,
        "image",
        "qa",
        ["open"],
        out,
        key_provider=EnvKeyProvider({"SG_PROXY_KEY": key}),
        progress=False,
        **kw,
    )


def test_map_images_arrive_byte_for_byte(proxy, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=3)
    s = run(bench, proxy, "digest", tmp_path / "run")
    assert s.ok == 3
    for rec in read_records(tmp_path / "run" / "predictions.jsonl")[0]:
        i = int(rec["instance_id"][-4:])
        assert rec["text"] == "Answer: " + hashlib.sha256(tiny_png(i)).hexdigest()


def test_refused_key_stops_at_once_and_never_reaches_the_disk(proxy, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=12)
    wrong = "sk-wrong-key-9876543210fedcba"
    with pytest.raises(RunStoppedError) as ei:
        run(bench, proxy, "digest", tmp_path / "run", key=wrong)
    # without its key database the proxy answers 400 "No connected db." to every request
    assert ei.value.stop.kind in ("auth", "refused") and "No connected db." in str(ei.value)
    assert len(read_records(tmp_path / "run" / "predictions.jsonl")[0]) <= 4
    data = b"".join(p.read_bytes() for p in (tmp_path / "run").iterdir())
    assert wrong[3:].encode() not in data


def test_unknown_model_stops_with_the_proxys_words(proxy, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=12)
    with pytest.raises(RunStoppedError) as ei:
        run(bench, proxy, "gpt-4o", tmp_path / "run")
    assert ei.value.stop.kind == "model" and "gpt-4o" in str(ei.value)


def test_dead_backend_behind_the_proxy_opens_the_breaker(proxy, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=40)
    t0 = time.perf_counter()
    with pytest.raises(RunStoppedError) as ei:
        run(bench, proxy, "dead", tmp_path / "run")
    assert ei.value.stop.kind == "endpoint_down"
    assert time.perf_counter() - t0 < 30
    recs = read_records(tmp_path / "run" / "predictions.jsonl")[0]
    assert len(recs) <= 8 and sum(r.get("http_attempts", 0) for r in recs) <= 16


def test_a_streaming_client_behind_the_proxy_gets_the_answer(proxy):
    host, port = proxy.split("//")[1].split("/")[0].split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=30)
    body = {"model": "digest", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    c.request(
        "POST",
        "/v1/chat/completions",
        json.dumps(body),
        {"Authorization": f"Bearer {MASTER}", "Content-Type": "application/json"},
    )
    r = c.getresponse()
    events = [e[6:] for e in r.read().decode().split("\n\n") if e.startswith("data: ")]
    text = "".join(
        (json.loads(e)["choices"][0]["delta"].get("content") or "")
        for e in events
        if e != "[DONE]" and json.loads(e)["choices"]
    )
    assert r.status == 200 and text == "Answer: "
