"""`spatialgap evaluate` (what `make run` runs): every model and built-in agent over every
city, task and modality it can read, resumable, scored and reported in one command.

    plan      cities, participants (agents + configured models) and the modalities each reads
    cities    each city's benchmark, built once and reused; maps drawn in a background process
    agents    the built-in agents served over loopback HTTP, one process each
    sweep     the concurrent runs, then scoring and the report
    progress  one live display for the whole sweep
    startup   the agents, render and scorer a sweep starts first
    cli       the command line and the closing one-screen summary

`evaluate` loads the sweep (matplotlib, scipy, aiohttp) on first use, so the command can start its
agents and render before it does.
"""

from typing import Any

from scoring.evaluate.cli import add_parser
from scoring.evaluate.plan import AGENT_MODALITIES, DEFAULT_AGENTS, City, Participant, SweepPlan


def __getattr__(name: str) -> Any:
    if name == "evaluate":
        from scoring.evaluate.sweep import evaluate

        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["AGENT_MODALITIES", "DEFAULT_AGENTS", "City", "Participant", "SweepPlan", "add_parser", "evaluate"]
