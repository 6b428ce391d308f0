"""Shared by the framework tests: the adapters' venv, and our own verdicts of the same samples
from the same served agents (spatialgap run + score)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scoring.runner.agents import agent, start_server
from scoring.runner.agents.chance import chance
from scoring.runner.agents.prompt_view import parse_prompt, request_rng
from scoring.runner.config import ModelSpec
from scoring.runner.run import run_benchmark
from scoring.score.results import load_results, score_runs

REPO = Path(__file__).resolve().parents[2]
ADAPTERS_PY = REPO / ".venv" / "adapters" / "bin" / "python"


def adapters_env() -> dict[str, str]:
    """The environment of the adapters' venv: the checkout first on its path (the code under test)."""
    import os

    return {**os.environ, "PYTHONPATH": str(REPO)}


def adapters_python() -> Path:
    if not ADAPTERS_PY.exists():
        pytest.skip(
            "the adapters' venv is absent (inspect_ai and lm-eval would upgrade the project's pinned "
            "numpy, pyarrow and jinja2): make adapters"
        )
    return ADAPTERS_PY


def _canonical(messages: list[dict], detail: bool = False) -> list[dict]:
    """Only what a model reads: roles, texts and image URLs, and with `detail` each image's
    detail (a framework may add other fields, or send one text as a list of one part)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, list):
            parts = []
            for p in content:
                if p.get("type") == "image_url":
                    image = {"url": p["image_url"]["url"]}
                    if detail:
                        image["detail"] = p["image_url"].get("detail", "auto")
                    parts.append({"type": "image_url", "image_url": image})
                else:
                    parts.append({"type": "text", "text": p.get("text", "")})
            content = parts[0]["text"] if len(parts) == 1 and parts[0]["type"] == "text" else parts
        out.append({"role": m["role"], "content": content})
    return out


@agent("test-content-chance")
def content_chance(messages: list[dict]) -> str:
    """The chance agent seeded by what the model reads (texts and image bytes, in order): the same
    reply if and only if (but for hash collisions) two clients sent the same prompt and maps."""
    return chance(_canonical(messages))


@agent("test-strict-chance")
def strict_chance(messages: list[dict]) -> str:
    """The chance agent seeded by all a model reads, image detail included; a first edit turn is
    answered unusably (prose) for about half the instances, so run's corrective turn decides them."""
    canonical = _canonical(messages, detail=True)
    first_edit = len(canonical) == 2 and parse_prompt(canonical).task == "edit"
    if first_edit and request_rng(canonical, "prose").random() < 0.5:
        return "I would move it a little towards the others."
    return chance(canonical)


class Served:
    """Built-in agents served over loopback for the test's duration."""

    def __init__(self, *agents: str):
        self.servers = {a: start_server(a)[0] for a in agents}

    def url(self, agent: str) -> str:
        return self.servers[agent].base_url

    def close(self) -> None:
        for srv in self.servers.values():
            srv.shutdown()
            srv.server_close()


def our_verdicts(bench: Path, served: Served, cases: list[tuple[str, str, str, str]], root: Path) -> dict:
    """{"<id>|<form>|<modality>": verdict} of `spatialgap run` + score for (agent, task, modality, form)."""
    runs = []
    for name, task, modality, form in cases:
        spec = ModelSpec.from_endpoint(served.url(name), name, timeout_s=60)
        out = root / "runs" / name / f"{modality}-{task}-{form}"
        forms = None if task == "edit" else [form]
        s = run_benchmark(bench, spec, modality, task, forms, out, progress=False)
        assert s.failed == 0 and s.ok == s.samples > 0
        runs.append(out)
    score_runs(bench, runs, root / "results", selfcheck=False)
    _, rows = load_results(root / "results")
    return {f"{r['id']}|{r['form']}|{r['modality']}": r["verdict"] for r in rows}
