"""A model's request options beyond the named generation parameters: `extra_body` merged into
every body (and the request key), extra `headers` and `api_key_header` on the wire (values never
recorded), and repeated samples with their own seeds. Against the real fault server on loopback."""

import json

import pytest
from runner_helpers import FAKE_KEY, fast_spec

from scoring.errors import InputError
from scoring.formats.rundir import read_records
from scoring.runner.cli import generation_overrides
from scoring.runner.client import build_request
from scoring.runner.config import ConfigError, ModelSpec, StaticKeyProvider, load_config
from scoring.runner.run import run_benchmark

MSGS = [{"role": "user", "content": "hi"}]


def _run(bench, spec, out, **kw):
    return run_benchmark(
        bench,
        spec,
        "geojson",
        "qa",
        ["mcq"],
        out,
        key_provider=StaticKeyProvider(FAKE_KEY),
        progress=False,
        **kw,
    )


def test_extra_body_is_merged_into_each_kind_and_keys_the_request(server, bench, tmp_path):
    plain = fast_spec(server.url("ok"))
    extra = fast_spec(server.url("ok"), extra_body={"reasoning_effort": "low", "max_tokens": 64})
    _, _, body = build_request(extra, MSGS, None)
    assert body["reasoning_effort"] == "low" and body["max_tokens"] == 64  # extra_body wins
    ollama = ModelSpec.from_endpoint(
        "http://127.0.0.1:1", "m", kind="ollama", extra_body={"options": {"num_ctx": 8192}, "think": False}
    )
    _, _, body = build_request(ollama, MSGS, None)
    assert body["options"] == {"temperature": 0.0, "num_predict": 1024, "seed": 0, "num_ctx": 8192}
    assert body["think"] is False
    # unset, the generation parameters (so every existing request key) are as before
    assert "extra_body" not in plain.generation_params()
    assert extra.generation_params()["extra_body"] == {"max_tokens": 64, "reasoning_effort": "low"}

    _run(bench, plain, tmp_path / "a")
    _run(bench, extra, tmp_path / "b")
    keys = [{r["key"] for r in read_records(tmp_path / d / "predictions.jsonl")[0]} for d in "ab"]
    assert keys[0] and not keys[0] & keys[1]  # a different request is never answered from a journal
    assert [b.get("reasoning_effort") for b in server.bodies] == [None] * 3 + ["low"] * 3


def test_headers_reach_the_server_and_their_values_are_never_recorded(server, bench, tmp_path):
    spec = fast_spec(
        server.url("ok"),
        api_key_env="SG_KEY",
        headers={"X-Title": "spatialgap-probe-title"},
        api_key_header="api-key",
    )
    out = tmp_path / "run"
    s = _run(bench, spec, out)
    assert s.ok == 3
    seen = server.headers_seen
    assert all(h["x-title"] == "spatialgap-probe-title" and h["api-key"] == FAKE_KEY for h in seen)
    assert not any("authorization" in h for h in seen)  # the key travels in its own header only
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"]["headers"] == ["X-Title"] and manifest["model"]["api_key_header"] == "api-key"
    written = b"".join(p.read_bytes() for p in out.rglob("*") if p.is_file())
    assert b"spatialgap-probe-title" not in written and FAKE_KEY.encode() not in written


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('headers = { Authorization = "Bearer x" }', "headers: Authorization is set by the tool"),
        ('headers = { "X-Api-Key" = "x" }', "headers: X-Api-Key looks like a credential"),
        ('headers = { "X-A" = "a\\nX-B: b" }', "headers: X-A: the value must be a string of visible ASCII"),
        ('headers = { "bad name" = "x" }', "headers: 'bad name' is not an HTTP header name"),
        ('extra_body = { model = "other" }', "extra_body: 'model' is set by the tool"),
        ("extra_body = { when = 2026-12-04 }", "extra_body: must be JSON values"),
        ('extra_body = "low"', "extra_body: expected a table"),
        ('api_key_header = "Content-Length"', "api_key_header: 'Content-Length' is not a header"),
    ],
)
def test_bad_request_options_are_one_line_errors(tmp_path, table, message):
    cfg = tmp_path / "m.toml"
    cfg.write_text(f'[models.m]\nkind = "openai"\nbase_url = "http://h/v1"\nmodel = "m"\n{table}\n')
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert f"models.m.{message}" in str(err.value) and "\n" not in str(err.value)


def test_extra_body_on_the_command_line():
    class Args:
        temperature = max_tokens = max_completion_tokens = seed = omit = None
        extra_body = '{"chat_template_kwargs": {"enable_thinking": false}}'

    params, _ = generation_overrides(Args())
    assert params == {"extra_body": {"chat_template_kwargs": {"enable_thinking": False}}}
    Args.extra_body = "{enable_thinking: false}"
    with pytest.raises(InputError, match=r"^--extra-body: not JSON"):
        generation_overrides(Args())


def test_each_repeated_sample_has_its_own_seed(server, bench, tmp_path):
    spec = fast_spec(server.url("ok"), samples=3, temperature=0.7, seed=11)
    s = _run(bench, spec, tmp_path / "run")
    assert s.ok == 9
    seeds = sorted(b["seed"] for b in server.bodies)
    assert seeds == [11] * 3 + [12] * 3 + [13] * 3  # the first sample keeps the configured seed
