"""Local agents behind a real OpenAI-compatible HTTP server (`spatialgap serve-agent`).

An agent is a function ``(messages: list[dict]) -> str`` registered by name::

    from scoring.runner.agents import agent, parse_prompt

    @agent("centroid")
    def centroid(messages):
        view = parse_prompt(messages)          # scene, question, choices, answer format, ...
        return "Answer: F0"

`serve(name, port)` exposes the registry as ``POST /v1/chat/completions`` and
``GET /v1/models`` on loopback, so agents are benchmarked exactly like real models (same
prompts, same runner, same journal).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import random
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scoring.errors import InputError

log = logging.getLogger(__name__)
AgentFn = Callable[[list[dict]], str]
AGENTS: dict[str, AgentFn] = {}
# Modules imported on first lookup so that their @agent definitions register themselves.
AGENT_MODULES: list[str] = ["scoring.runner.reference_agents"]


def agent(name: str) -> Callable[[AgentFn], AgentFn]:
    """Decorator registering `fn(messages) -> str` as agent `name`."""

    def register(fn: AgentFn) -> AgentFn:
        AGENTS[name] = fn
        return fn

    return register


def get_agent(name: str) -> AgentFn:
    for mod in AGENT_MODULES:
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            log.warning("cannot import agent module %s: %s", mod, exc)
    if name not in AGENTS:
        raise InputError(f"--agent: unknown agent {name!r} (available: {', '.join(sorted(AGENTS))})")
    return AGENTS[name]


# ---- reading the prompt back --------------------------------------------------------------------
_CATEGORY_PHRASES = [
    ("option letter", "choice"),
    ("number in square metres", "square_metres"),
    ("pois per square kilometre", "density"),
    ("number in metres", "metres"),
    ("number in degrees", "degrees"),
    ("whole number", "count"),
    ('"yes" or "no"', "boolean"),
    ("comma-separated list of feature ids", "feature_ids"),
    ("feature ids in order", "ordering"),
    ("with a feature id", "feature_id"),
    ("four compass directions", "direction4"),
    ("ahead, behind, left, right", "relative_direction"),
    ("one of the axes", "axis"),
    ("compass direction", "direction"),
]


@dataclass
class PromptView:
    """What an agent can recover from the prompts built by scoring.runner.prompts."""

    task: str = "qa"  # "qa" | "edit"
    system: str = ""
    text: str = ""  # the first user turn's text
    scene: dict | None = None  # parsed GeoJSON (None in the image modality)
    question: str | None = None
    choices: list[str] = field(default_factory=list)
    answer_category: str = "text"
    target: str | None = None
    instruction: str | None = None
    units: str | None = None  # edits: "metres" | "pixels"
    image_png: bytes | None = None
    corrective: bool = False  # the last user turn is the corrective follow-up
    feature_ids: list[str] = field(default_factory=list)


def _content_text(content: Any) -> tuple[str, bytes | None]:
    if isinstance(content, str):
        return content, None
    text, image = [], None
    for p in content or []:
        if isinstance(p, dict) and p.get("type") == "text":
            text.append(p.get("text", ""))
        elif isinstance(p, dict) and p.get("type") == "image_url" and image is None:
            url = (p.get("image_url") or {}).get("url", "")
            if url.startswith("data:") and "," in url:
                import base64

                try:
                    image = base64.b64decode(url.split(",", 1)[1])
                except ValueError:
                    image = None
    return "\n".join(text), image


def parse_prompt(messages: list[dict]) -> PromptView:
    v = PromptView()
    users = [m for m in messages if m.get("role") == "user"]
    systems = [m for m in messages if m.get("role") == "system"]
    v.system = _content_text(systems[0].get("content"))[0] if systems else ""
    if users:
        v.text, v.image_png = _content_text(users[0].get("content"))
    v.corrective = len(users) > 1
    v.task = "edit" if ("editing benchmark" in v.system or '"operations"' in v.text) else "qa"
    m = re.search(r"```geojson\s*\n(.*?)\n```", v.text, flags=re.S)
    if m:
        try:
            v.scene = json.loads(m.group(1))
        except ValueError:
            v.scene = None
    if isinstance(v.scene, dict):
        v.feature_ids = [
            str(f.get("id"))
            for f in v.scene.get("features", [])
            if isinstance(f, dict) and f.get("id") is not None
        ]
    if not v.feature_ids:
        v.feature_ids = sorted(set(re.findall(r"\bF\d+\b", v.text)), key=lambda s: int(s[1:]))
    m = re.search(r"^Question: (.*?)(?:\n\n|\Z)", v.text, flags=re.S | re.M)
    v.question = m.group(1).strip() if m else None
    v.choices = [c for _, c in re.findall(r"^([A-D])\. (.*)$", v.text, flags=re.M)]
    q = v.text.rfind("\nQuestion: ")
    low = v.text[q:].lower() if q >= 0 else v.text.lower()
    for phrase, cat in _CATEGORY_PHRASES:
        if phrase in low:
            v.answer_category = cat
            break
    m = re.search(r"^Target feature: (\S+)", v.text, flags=re.M)
    v.target = m.group(1) if m else None
    # The instruction runs over several lines (numbered constraints), up to the reply format.
    m = re.search(r"^Instruction: (.*?)(?:\n\nReply with|\Z)", v.text, flags=re.M | re.S)
    v.instruction = m.group(1).strip() if m else None
    if v.task == "edit":
        v.units = "pixels" if "pixels right" in v.text else "metres"
    return v


def request_rng(messages: list[dict], extra: str = "") -> random.Random:
    """A deterministic RNG seeded by the request content."""
    h = hashlib.sha256((json.dumps(messages, sort_keys=True, ensure_ascii=False) + extra).encode("utf-8"))
    return random.Random(int.from_bytes(h.digest()[:8], "big"))


# ---- built-in agents ---------------------------------------------------------------------------
@agent("chance")
def chance(messages: list[dict]) -> str:
    """Answers at random within the answer format (deterministic per request)."""
    v = parse_prompt(messages)
    rng = request_rng(messages)
    if v.task == "edit":
        scale = 20.0 if v.units == "pixels" else 25.0
        dx = dy = 0.0
        while dx == 0 and dy == 0:
            dx, dy = round(rng.uniform(-scale, scale), 1), round(rng.uniform(-scale, scale), 1)
        return json.dumps({"operations": [{"op": "translate", "dx": dx, "dy": dy}]})
    ids = v.feature_ids or [f"F{i}" for i in range(5)]
    cat = v.answer_category
    if cat == "choice":
        ans = rng.choice("ABCD"[: max(1, min(4, len(v.choices) or 4))])
    elif cat == "metres":
        ans = f"{rng.uniform(1, 1000):.1f}"
    elif cat == "square_metres":
        ans = f"{rng.uniform(10, 50000):.0f}"
    elif cat == "degrees":
        ans = str(rng.randrange(0, 360))
    elif cat == "count":
        ans = str(rng.randrange(0, 10))
    elif cat == "boolean":
        ans = rng.choice(["yes", "no"])
    elif cat == "feature_id":
        ans = rng.choice(ids)
    elif cat == "feature_ids":
        pick = [i for i in ids if rng.random() < 0.5]
        ans = ", ".join(pick) or "none"
    elif cat == "direction":
        ans = rng.choice(["N", "NE", "E", "SE", "S", "SW", "W", "NW"])
    elif cat == "direction4":
        ans = rng.choice(["N", "E", "S", "W"])
    elif cat == "relative_direction":
        ans = rng.choice(["ahead", "behind", "left", "right"])
    elif cat == "axis":
        ans = rng.choice(["N-S", "NE-SW", "E-W", "NW-SE"])
    elif cat == "ordering":
        order = [i for i in ids if i != "F0"]
        rng.shuffle(order)
        ans = ", ".join(order)
    elif cat == "density":
        ans = f"{rng.uniform(0, 5000):.3f}"
    else:
        ans = rng.choice(["yes", "no", "cannot be determined", *ids])
    return f"Answer: {ans}"


# ---- the HTTP server ---------------------------------------------------------------------------
def _completion(model: str, text: str, messages: list[dict]) -> dict:
    prompt_chars = sum(len(_content_text(m.get("content"))[0]) for m in messages)
    pt, ct = max(1, prompt_chars // 4), max(1, len(text) // 4)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
    }


def _pool_init(name: str) -> None:
    get_agent(name)  # import the agent modules once per worker process


def _pool_call(name: str, messages: list[dict]) -> str:
    return str(get_agent(name)(messages))


class AgentServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], agent_name: str, fn: AgentFn, workers: int = 1):
        self.agent_name, self.agent_fn = agent_name, fn
        # CPU-bound agents (tools searches edits) would serialise on the GIL in one process;
        # a spawn-based pool lets one server use every core. Spawn, not fork: the server is
        # threaded and forking a threaded process can deadlock.
        self.pool = None
        if workers > 1:
            import concurrent.futures
            import multiprocessing

            self.pool = concurrent.futures.ProcessPoolExecutor(
                workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_pool_init,
                initargs=(agent_name,),
            )
        super().__init__(address, AgentHandler)

    def reply(self, messages: list[dict]) -> str:
        if self.pool is None:
            return str(self.agent_fn(messages))
        return self.pool.submit(_pool_call, self.agent_name, messages).result()

    def server_close(self) -> None:
        super().server_close()
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    @property
    def base_url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}/v1"


class AgentHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes: avoid 40 ms delayed-ACK stalls
    server: AgentServer

    def log_message(self, fmt: str, *args: Any) -> None:
        log.debug("%s " + fmt, self.address_string(), *args)

    def _send(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, message: str, typ: str = "invalid_request_error") -> None:
        self._send(status, {"error": {"message": message, "type": typ}})

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._send(
                200,
                {
                    "object": "list",
                    "data": [{"id": self.server.agent_name, "object": "model", "owned_by": "spatialgap"}],
                },
            )
        else:
            self._error(404, f"no route GET {self.path}")

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._error(404, f"no route POST {self.path}")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length > 256 * 1024 * 1024:
                self._error(413, "request too large")
                return
            req = json.loads(self.rfile.read(length) or b"null")
            messages = req["messages"]
            if not isinstance(messages, list):
                raise TypeError("messages must be a list")
        except (ValueError, KeyError, TypeError) as exc:
            self._error(400, f"invalid request: {exc}")
            return
        try:
            text = self.server.reply(messages)
        except Exception as exc:  # an agent bug is a 500 for that request, not a dead server
            log.exception("agent %s failed", self.server.agent_name)
            self._error(
                500, f"agent {self.server.agent_name} failed: {type(exc).__name__}: {exc}", "server_error"
            )
            return
        self._send(200, _completion(self.server.agent_name, text, messages))


def start_server(name: str, host: str = "127.0.0.1", port: int = 0) -> tuple[AgentServer, threading.Thread]:
    """Start agent `name` in a background thread (port 0: a free port); returns (server, thread)."""
    server = AgentServer((host, port), name, get_agent(name))
    thread = threading.Thread(target=server.serve_forever, name=f"agent-{name}", daemon=True)
    thread.start()
    return server, thread


def serve(name: str, host: str = "127.0.0.1", port: int = 8765, workers: int = 1) -> int:
    """Serve agent `name` until interrupted or terminated (blocking). Port 0 picks a free port
    (the URL is printed on stderr)."""
    fn = get_agent(name)
    if host not in ("127.0.0.1", "localhost", "::1"):
        log.warning("serving on non-loopback address %s", host)
    if workers < 1:
        raise InputError(f"--workers: must be >= 1, got {workers}")
    try:
        server = AgentServer((host, port), name, fn, workers)
    except OSError as exc:
        raise InputError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    print(f"serving agent {name} on {server.base_url} (Ctrl-C to stop)", file=sys.stderr, flush=True)
    import signal

    def _terminate(signum, frame):  # SIGTERM -> same clean shutdown as Ctrl-C (pool included)
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
