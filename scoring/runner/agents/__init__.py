"""The built-in agents, served behind a real OpenAI-compatible HTTP server (`spatialgap
serve-agent`) so they are benchmarked exactly like real models (same prompts, runner, journal).

An agent is a function ``(messages: list[dict]) -> str`` registered by name::

    from scoring.runner.agents import agent, parse_prompt

    @agent("first")
    def first(messages):
        view = parse_prompt(messages)          # scene, question, choices, answer format, ...
        return "Answer: F0"

Built in: `tools` (GIS operations over the scene: modules `tools`, `questions`, `instructions`,
`edit_search`, `toolkits`), `centroid` (bounding boxes and centroids: `centroid`,
`careless_edits`) and `chance` (random within the answer format). Serving: `server`, which
reads a request's head (`request_head`) and body (`request_body`: its maps are not run through
the JSON scanner) cheaply; an agent process remembers the answers it computed (`answer_memo`).
"""

from __future__ import annotations

from scoring.runner.agents.prompt_view import PromptView, parse_prompt, request_rng
from scoring.runner.agents.registry import AGENTS, AgentFn, agent, get_agent
from scoring.runner.agents.server import AgentServer, serve, start_server

__all__ = [
    "AGENTS",
    "AgentFn",
    "AgentServer",
    "PromptView",
    "agent",
    "get_agent",
    "parse_prompt",
    "request_rng",
    "serve",
    "start_server",
]
