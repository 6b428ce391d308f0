"""The agent registry and the OpenAI-compatible agent server over real HTTP."""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from runner_helpers import edit_instance, make_bench, qa_instance, tiny_png

from scoring.errors import InputError
from scoring.formats.rundir import final_predictions
from scoring.runner import agents
from scoring.runner.agents import agent, get_agent, parse_prompt, registry, start_server
from scoring.runner.config import ModelSpec
from scoring.runner.prompts import build_messages
from scoring.runner.run import edit_needs_retry, run_benchmark

ROOT = Path(__file__).resolve().parents[2]


def post(url, body):
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


@pytest.fixture
def chance_server():
    srv, _ = start_server("chance")
    yield srv
    srv.shutdown()
    srv.server_close()


def test_chance_over_http(chance_server):
    base = chance_server.base_url
    with urllib.request.urlopen(base + "/models", timeout=5) as r:
        assert json.loads(r.read())["data"][0]["id"] == "chance"
    mcq = build_messages(qa_instance(0), "geojson", "mcq", None)
    r1 = post(base + "/chat/completions", {"model": "chance", "messages": mcq})
    r2 = post(base + "/chat/completions", {"model": "chance", "messages": mcq})
    text = r1["choices"][0]["message"]["content"]
    assert text == r2["choices"][0]["message"]["content"]  # deterministic per request
    assert text in {f"Answer: {c}" for c in "ABCD"} and r1["usage"]["total_tokens"] > 0
    letters = {
        post(
            base + "/chat/completions", {"messages": build_messages(qa_instance(i), "geojson", "mcq", None)}
        )["choices"][0]["message"]["content"]
        for i in range(30)
    }
    assert len(letters) > 1
    open_ = post(
        base + "/chat/completions", {"messages": build_messages(qa_instance(1), "image", "open", tiny_png())}
    )
    float(open_["choices"][0]["message"]["content"].removeprefix("Answer: "))  # metres -> a number
    ids = post(
        base + "/chat/completions",
        {"messages": build_messages(qa_instance(1, "feature_id"), "geojson", "open", None)},
    )
    assert ids["choices"][0]["message"]["content"] in ("Answer: F0", "Answer: F1")
    edit = post(
        base + "/chat/completions",
        {"messages": build_messages(edit_instance(0), "image", "edit", tiny_png())},
    )
    assert edit_needs_retry(edit["choices"][0]["message"]["content"]) is None
    with pytest.raises(urllib.error.HTTPError) as ei:
        post(base + "/chat/completions", {"nomessages": 1})
    assert ei.value.code == 400


def test_registering_an_agent_is_trivial(tmp_path):
    @agent("test-first-feature")
    def first(messages):
        view = parse_prompt(messages)
        return f"Answer: {view.feature_ids[0]}"

    try:
        srv, _ = start_server("test-first-feature")
        out = post(
            srv.base_url + "/chat/completions",
            {"messages": build_messages(qa_instance(0), "geojson", "open", None)},
        )
        assert (
            out["choices"][0]["message"]["content"] == "Answer: F0" and out["model"] == "test-first-feature"
        )
        srv.shutdown()
        srv.server_close()
    finally:
        agents.AGENTS.pop("test-first-feature")
    with pytest.raises(InputError, match="unknown agent"):
        get_agent("test-first-feature")


def test_parse_prompt_roundtrip():
    v = parse_prompt(build_messages(qa_instance(2), "together", "mcq", tiny_png()))
    assert v.task == "qa" and v.scene["features"][0]["id"] == "F0" and v.answer_category == "choice"
    assert v.choices == ["12.5", "40", "85", "cannot be determined"] and v.image_png == tiny_png()
    assert v.question.startswith("How far is F0 from F1?")
    e = parse_prompt(build_messages(edit_instance(0), "image", "edit", tiny_png()))
    assert e.task == "edit" and e.units == "pixels" and e.target == "F0" and e.scene is None
    assert parse_prompt(build_messages(edit_instance(0), "geojson", "edit", None)).units == "metres"


def test_full_run_against_chance_agent(chance_server, tmp_path):
    bench = make_bench(tmp_path / "bench", n_qa=4, n_edit=3)
    spec = ModelSpec.from_endpoint(chance_server.base_url, "chance", timeout_s=5)
    s = run_benchmark(bench, spec, "together", "qa", None, tmp_path / "qa", progress=False)
    assert s.ok == 8 and s.failed == 0
    s = run_benchmark(bench, spec, "geojson", "edit", None, tmp_path / "edit", progress=False)
    assert s.ok == 3 and s.corrective == 0
    preds = final_predictions(tmp_path / "qa" / "predictions.jsonl")
    assert all(p["endpoint_model"] == "chance" for p in preds.values())


def test_serve_agent_subprocess():
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "scoring", "serve-agent", "--agent", "chance", "--port", "0"],
        env=env,
        cwd=str(ROOT),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stderr.readline()
        assert "serving agent chance on http://127.0.0.1:" in line
        base = line.split(" on ")[1].split()[0]
        out = post(
            base + "/chat/completions", {"messages": build_messages(qa_instance(0), "geojson", "mcq", None)}
        )
        assert out["choices"][0]["message"]["content"].startswith("Answer: ")
    finally:
        proc.terminate()
        proc.wait(5)


def test_a_broken_agent_module_is_an_error_not_a_skip(monkeypatch):
    modules = [*registry.AGENT_MODULES, "scoring.runner.no_such_agents"]
    monkeypatch.setattr(registry, "AGENT_MODULES", modules)
    with pytest.raises(ModuleNotFoundError, match="no_such_agents"):
        get_agent("chance")
