"""Agents registered by name: functions ``(messages: list[dict]) -> str``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from scoring.errors import InputError

AgentFn = Callable[[list[dict]], str]
# The benchmarks the `blind` agent learns from (directories joined by os.pathsep; `evaluate` sets it).
BENCH_ENV = "SPATIALGAP_BLIND_BENCH"
AGENTS: dict[str, AgentFn] = {}
# Agents that compute from the text and coordinates only: a server may hand them a request with
# its images left out (a map is half a megabyte to copy to a worker process).
PIXEL_BLIND: set[str] = set()
# Which of an agent's requests are worth a worker process (a served agent with workers computes
# the others itself: sending a prompt to a worker and back costs more than a quick answer).
OFFLOADED: dict[str, Callable[[list[dict]], bool]] = {}
# Modules imported on first lookup so that their @agent definitions register themselves (not at
# import time: the tools agent loads the relation catalogue, which serving or running needs not).
AGENT_MODULES: list[str] = [
    "scoring.runner.agents.tools",
    "scoring.runner.agents.centroid",
    "scoring.runner.agents.chance",
    "scoring.runner.agents.last_mention",
    "scoring.runner.agents.blind",
]


def agent(
    name: str, *, reads_images: bool = True, offload: Callable[[list[dict]], bool] | None = None
) -> Callable[[AgentFn], AgentFn]:
    """Decorator registering `fn(messages) -> str` as agent `name`. ``reads_images=False``: its
    replies never depend on the images sent (see `without_images`). ``offload``: the requests a
    server with worker processes sends to them (default: every request)."""

    def register(fn: AgentFn) -> AgentFn:
        AGENTS[name] = fn
        if offload is None:
            OFFLOADED.pop(name, None)
        else:
            OFFLOADED[name] = offload
        if reads_images:
            PIXEL_BLIND.discard(name)
        else:
            PIXEL_BLIND.add(name)
        return fn

    return register


def get_agent(name: str) -> AgentFn:
    # An agent module that fails to import is a bug to report, not an agent to skip.
    for mod in AGENT_MODULES:
        importlib.import_module(mod)
    if name not in AGENTS:
        raise InputError(f"--agent: unknown agent {name!r} (available: {', '.join(sorted(AGENTS))})")
    return AGENTS[name]


def without_images(messages: list[dict]) -> list[dict]:
    """`messages` with every image part's URL emptied (what a pixel-blind agent is given)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            content = [
                {**p, "image_url": {**p["image_url"], "url": ""}}
                if isinstance(p, dict) and isinstance(p.get("image_url"), dict)
                else p
                for p in content
            ]
            m = {**m, "content": content}
        out.append(m)
    return out
