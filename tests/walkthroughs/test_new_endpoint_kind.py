"""Walk-through: a new endpoint kind is one module (plus its name in
`scoring.runner.endpoints.MODULES`): an `EndpointKind` record naming its paths, how a body is
built from the tool's OpenAI-style messages and how a reply is read. Nothing else is edited: the
config accepts the kind, `--kind` offers it, the client posts to its path and reads its replies,
and the journal, predictions and verdicts come out as for any kind.

The kind here is OpenAI's Responses API (`POST /responses`, `input` items, `output_text` parts),
served over loopback by a small server in this test that answers with the chance agent. Run in
a fresh interpreter, since registering it changes the registry."""

from __future__ import annotations

import json
import subprocess
import sys

# The whole extension: what a contributor writes in scoring/runner/endpoints/<module>.py.
EXTENSION = """
from scoring.runner.endpoints.base import (
    EndpointKind, Reply, ReplyError, clean_usage, names_in, register, set_params,
)


def build_body(spec, messages, seed):
    items = []
    for m in messages:
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        parts = [
            {"type": "input_text", "text": p["text"]}
            if p["type"] == "text"
            else {"type": "input_image", "image_url": p["image_url"]["url"]}
            for p in content
        ]
        items.append({"role": m["role"], "content": parts})
    body = {"model": spec.model, "input": items}
    set_params(body, (("temperature", spec.temperature), ("max_output_tokens", spec.max_tokens)))
    return body


def read_reply(data, reply: Reply) -> None:
    texts = [
        part["text"]
        for item in data.get("output") or []
        if isinstance(item, dict) and item.get("type") == "message"
        for part in item.get("content") or []
        if isinstance(part, dict) and part.get("type") == "output_text"
    ]
    reply.usage = clean_usage(
        data.get("usage"), {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"}
    )
    reply.finish_reason = data.get("status")
    if not texts:
        raise ReplyError("no_content", "the response has no output_text")
    reply.text = "".join(texts)


register(
    EndpointKind(
        name="responses",
        chat_path="/responses",
        models_path="/models",
        build_body=build_body,
        read_reply=read_reply,
        model_names=lambda data: names_in(data.get("data"), "id"),
        help="OpenAI Responses API",
    ),
)
"""

# Test infrastructure, not part of the extension: a Responses API server over the chance agent.
SCRIPT = r"""
import json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

sys.path.insert(0, sys.argv[2])  # where the contributor's module is
from scoring.runner import endpoints
endpoints.MODULES = (*endpoints.MODULES, "responses_kind")  # the one line naming it

from scoring.runner.agents import get_agent
from scoring.runner.cli import add_model_options
from scoring.runner.config import ConfigError, load_config
from scoring.runner.run import run_benchmark
from scoring.score.results import score_run_dir

chance = get_agent("chance")
seen = []


class Responses(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        seen.append((self.path, sorted(body)))
        messages = [
            {"role": item["role"], "content": [
                {"type": "text", "text": p["text"]} if p["type"] == "input_text"
                else {"type": "image_url", "image_url": {"url": p["image_url"]}}
                for p in item["content"]
            ]}
            for item in body["input"]
        ]
        text = chance(messages)
        out = {"status": "completed", "usage": {"input_tokens": 11, "output_tokens": 3},
               "output": [{"type": "message", "content": [{"type": "output_text", "text": text}]}]}
        data = json.dumps(out).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


srv = ThreadingHTTPServer(("127.0.0.1", 0), Responses)
threading.Thread(target=srv.serve_forever, daemon=True).start()
bench, work = Path(sys.argv[1]), Path(sys.argv[3])
cfg = work / "models.toml"
cfg.write_text(
    f'[models.resp]\nkind = "responses"\nbase_url = "http://127.0.0.1:{srv.server_address[1]}/v1"\n'
    'model = "chance"\n'
)
spec = load_config(cfg)["resp"]
summary = run_benchmark(bench, spec, "geojson", "qa", ["mcq"], work / "run", progress=False, limit=40)
_, verdicts = score_run_dir(bench, work / "run")
records = [json.loads(line) for line in (work / "run" / "predictions.jsonl").read_text().splitlines()]
cfg.write_text('[models.x]\nkind = "respones"\nbase_url = "http://h/v1"\nmodel = "m"\n')
try:
    load_config(cfg)
except ConfigError as exc:
    typo = str(exc)
import argparse
parser = argparse.ArgumentParser()
add_model_options(parser)
print(json.dumps({
    "kinds": list(endpoints.endpoint_kinds()),
    "paths": sorted({p for p, _ in seen}),
    "body_keys": seen[0][1],
    "ok": summary.ok, "failed": summary.failed,
    "usage": records[0].get("usage"),
    "verdicts": sorted({v["verdict"] for v in verdicts}),
    "typo": typo.split(": ", 1)[1],
    "help": parser.format_help(),
}))
"""


def test_a_new_endpoint_kind_is_one_module(tmp_path, helsinki_bench):
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "responses_kind.py").write_text(EXTENSION)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(helsinki_bench), str(ext), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["kinds"] == ["openai", "ollama", "responses"]
    # requests went to the kind's path in the kind's body form, and every reply was read
    assert got["paths"] == ["/v1/responses"]
    assert got["body_keys"] == ["input", "max_output_tokens", "model", "temperature"]
    assert got["ok"] > 0 and got["failed"] == 0
    assert got["usage"] == {"prompt_tokens": 11, "completion_tokens": 3}
    assert "correct" in got["verdicts"]
    assert "unknown endpoint kind 'respones' (did you mean responses?)" in got["typo"]
    assert "responses: OpenAI Responses API" in " ".join(got["help"].split())
