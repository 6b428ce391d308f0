"""Agents registered by name: functions ``(messages: list[dict]) -> str``."""

from __future__ import annotations

import importlib
from collections.abc import Callable

from scoring.errors import InputError

AgentFn = Callable[[list[dict]], str]
AGENTS: dict[str, AgentFn] = {}
# Modules imported on first lookup so that their @agent definitions register themselves (not at
# import time: the tools agent loads the relation catalogue, which serving or running needs not).
AGENT_MODULES: list[str] = [
    "scoring.runner.agents.tools",
    "scoring.runner.agents.centroid",
    "scoring.runner.agents.chance",
]


def agent(name: str) -> Callable[[AgentFn], AgentFn]:
    """Decorator registering `fn(messages) -> str` as agent `name`."""

    def register(fn: AgentFn) -> AgentFn:
        AGENTS[name] = fn
        return fn

    return register


def get_agent(name: str) -> AgentFn:
    # An agent module that fails to import is a bug to report, not an agent to skip.
    for mod in AGENT_MODULES:
        importlib.import_module(mod)
    if name not in AGENTS:
        raise InputError(f"--agent: unknown agent {name!r} (available: {', '.join(sorted(AGENTS))})")
    return AGENTS[name]
