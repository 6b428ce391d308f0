"""Real endpoints, real failures: keys that cannot travel, the server's words on a refused run,
a circuit breaker over a dead backend, a slow backend not flooded, parameters a model rejects."""

import base64
import json
import subprocess
import sys
import time
from argparse import Namespace
from urllib.parse import quote

import pytest
from runner_helpers import FAKE_KEY, fast_spec, make_bench

from scoring.formats.rundir import read_records
from scoring.runner.agents import start_server
from scoring.runner.cli import spec_from_args
from scoring.runner.client import build_request
from scoring.runner.config import (
    ConfigError,
    EnvKeyProvider,
    ModelSpec,
    Redactor,
    StaticKeyProvider,
    load_config,
)
from scoring.runner.health import RunHealth
from scoring.runner.run import RunStoppedError, run_benchmark

ROOT = __import__("pathlib").Path(__file__).resolve().parents[2]


def run(bench, spec, out, key=FAKE_KEY, **kw):
    return run_benchmark(
        bench,
        spec,
        "geojson",
        "qa",
        kw.pop("forms", None),
        out,
        key_provider=StaticKeyProvider(key),
        progress=False,
        **kw,
    )


@pytest.mark.parametrize(
    "value,why",
    [
        (FAKE_KEY + "\r", "line break (a key file with Windows line endings?)"),
        (FAKE_KEY + "\n", "line break"),
        (FAKE_KEY[:8] + "\u201d" + FAKE_KEY[8:], "non-ASCII character (a pasted typographic quote?)"),
        (FAKE_KEY[:8] + " " + FAKE_KEY[8:], "space or control character"),
    ],
)
def test_a_key_that_cannot_travel_is_refused_naming_the_variable_only(value, why):
    spec = ModelSpec.from_endpoint("http://127.0.0.1:9/v1", "m", "SG_KEY")
    with pytest.raises(ConfigError) as ei:
        EnvKeyProvider({"SG_KEY": value}).get_key(spec)
    msg = str(ei.value)
    assert "SG_KEY" in msg and why in msg and "\n" not in msg
    assert FAKE_KEY[:8] not in msg and FAKE_KEY[-8:] not in msg


def test_run_with_a_crlf_key_is_a_one_line_error_and_writes_nothing(tmp_path):
    bench = make_bench(tmp_path / "bench")
    cmd = [
        sys.executable,
        "-m",
        "scoring",
        "run",
        "--bench",
        str(bench),
        "--endpoint",
        "http://127.0.0.1:9/v1",
    ]
    cmd += ["--model", "m", "--api-key-env", "SG_KEY", "--modality", "geojson", "--task", "qa"]
    p = subprocess.run(
        [*cmd, "--out", str(tmp_path / "run")],
        env={"SG_KEY": FAKE_KEY + "\r", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        cwd=str(ROOT),
        timeout=120,
    )
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "SG_KEY" in p.stderr and FAKE_KEY[4:] not in p.stderr and "Traceback" not in p.stderr
    assert not (tmp_path / "run").exists()


def test_every_representation_of_a_key_is_redacted():
    key = FAKE_KEY + "\r"  # as read from a file with Windows line endings
    r = Redactor([key])
    messages = [
        f"Illegal header value b'Bearer {FAKE_KEY}\\r'",  # the escaped form an HTTP library reports
        json.dumps({"auth": f"Bearer {key}"}),
        f"https://h/v1?key={quote(key, safe='')}",
    ]
    for user in ("", "u:", "apikey:", "ab"):
        messages.append("Basic " + base64.b64encode(f"{user}{FAKE_KEY}".encode()).decode())
    for m in messages:
        out = r.text(m)
        assert FAKE_KEY not in out and FAKE_KEY[4:20] not in out and "<redacted>" in out, (m, out)
    core = base64.b64encode(FAKE_KEY.encode()).decode()[4:-4]
    assert all(core not in r.text(m) for m in messages)


def test_unknown_model_stops_the_run_with_the_servers_words(tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=6)
    srv, _ = start_server("chance")
    try:
        spec = ModelSpec.from_endpoint(srv.base_url, "gpt-4o", concurrency=2, timeout_s=10)
        with pytest.raises(RunStoppedError) as ei:
            run(bench, spec, tmp_path / "run")
    finally:
        srv.shutdown()
        srv.server_close()
    msg = str(ei.value)
    assert "HTTP 404: The model 'gpt-4o' does not exist" in msg and "check the model name 'gpt-4o'" in msg
    assert "re-run" not in msg
    assert len(read_records(tmp_path / "run" / "predictions.jsonl")[0]) <= 2  # the first wave only


def test_dead_backend_opens_the_circuit_breaker(server, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=30)
    spec = fast_spec(server.url("500"), max_retries=5, concurrency=4, backoff_base_s=0.05)
    t0 = time.perf_counter()
    with pytest.raises(RunStoppedError, match=r"samples in a row failed, last: HTTP 500: internal oops"):
        run(bench, spec, tmp_path / "run")
    # 60 samples x 6 attempts would be 360 requests; the breaker opens after 8 samples
    assert server.requests <= 16 and time.perf_counter() - t0 < 10
    assert json.loads((tmp_path / "run" / "manifest.json").read_text())["status"] == "stopped"


def test_a_slow_backend_gets_one_more_copy_not_five(server, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=2)
    spec = fast_spec(server.url("timeout"), timeout_s=0.3, max_retries=5)
    s = run(bench, spec, tmp_path / "run", forms=["open"])
    assert s.failed == 2 and server.requests == 4  # each sample: the request and one retry


def test_retry_budget_is_per_run():
    health = RunHealth(samples=40, max_retries=5)
    assert health.retry_budget == 50
    assert sum(health.take_retry() for _ in range(80)) == 50


def test_parameters_can_be_left_out_from_toml_and_command_line(tmp_path):
    p = tmp_path / "models.toml"
    p.write_text(
        '[models.o3]\nkind = "openai"\nbase_url = "http://h/v1"\nmodel = "o3"\n'
        'max_completion_tokens = 4096\nomit = ["temperature", "seed"]\n'
    )
    spec = load_config(p)["o3"]
    _, _, body = build_request(spec, [{"role": "user", "content": "hi"}], None)
    assert body == {
        "model": "o3",
        "messages": [{"role": "user", "content": "hi"}],
        "max_completion_tokens": 4096,
    }
    args = Namespace(
        config=None,
        endpoint="http://h/v1",
        model="gpt-5",
        kind="openai",
        api_key_env=None,
        concurrency=None,
        timeout=None,
        temperature=None,
        max_tokens=None,
        max_completion_tokens=2048,
        seed=None,
        omit="temperature",
    )
    _, _, body = build_request(spec_from_args(args), [], None)
    assert "temperature" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 2048 and body["seed"] == 0
    p.write_text('[models.x]\nkind = "openai"\nbase_url = "http://h/v1"\nmodel = "x"\nomit = ["messages"]\n')
    with pytest.raises(ConfigError, match=r"models.x.omit: cannot omit 'messages'"):
        load_config(p)


def test_default_request_keys_are_unchanged():
    """Runs journaled before max_completion_tokens existed still resume (same request keys)."""
    assert "max_completion_tokens" not in ModelSpec.from_endpoint("http://h/v1", "m").generation_params()


def test_endpoint_ending_in_chat_completions_gets_a_hint():
    with pytest.raises(ConfigError, match=r"without /chat/completions .*e.g. http://h:8000/v1"):
        ModelSpec.from_endpoint("http://h:8000/v1/chat/completions", "m")


def test_the_same_refusal_for_every_sample_stops_the_run(server, tmp_path):
    """A text-only model sent maps answers each request with the same 400: that is the
    configuration, not one sample, so the run stops after one wave."""
    bench = make_bench(tmp_path / "bench", n_qa=30)
    with pytest.raises(RunStoppedError, match=r"same answer: HTTP 400: model does not support images -- "):
        run(bench, fast_spec(server.url("400"), concurrency=4), tmp_path / "run")
    assert server.requests <= 8
