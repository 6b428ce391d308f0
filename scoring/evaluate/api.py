"""`scoring.run_evaluation(...)`: `spatialgap evaluate` from Python (same plan, same sweep, same files)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scoring.evaluate.plan import DEFAULT_AGENTS, DEFAULT_PER_RELATION
from scoring.vocab import BASE_MODALITIES, TASKS, Protocol


def run_evaluation(
    out: str | Path,
    *,
    bench: str | Path | None = None,
    osm: str | Path | Sequence[str | Path] | None = None,
    agents: Sequence[str] = DEFAULT_AGENTS,
    config: str | Path | None = None,
    models: Sequence[str] = (),
    **options: Any,
) -> dict[str, Any]:
    """Run the sweep into `out` and return its record (what OUT/evaluate.json holds: runs,
    results, report, seconds, stopped runs, failed samples).

    `bench`: a pre-built benchmark or export, used as it is (no source extract needed); else
    `osm` (one or more extracts; None: the embedded Helsinki extract) is built first. `agents`:
    built-in agents (default tools, centroid, chance); `config` + `models`: configured models.
    `options`: the command's other settings by their option names (modalities and tasks as
    sequences, qa, edit, seed, limit, jobs, protocol, city, cities, agent_workers, force,
    progress=False)."""
    from scoring.evaluate.cli import plan_from_args
    from scoring.evaluate.sweep import evaluate as sweep
    from scoring.execute import open_executor

    paths = [osm] if isinstance(osm, (str, Path)) else list(osm or [])
    progress = options.pop("progress", False)
    modalities = options.pop("modalities", BASE_MODALITIES)
    tasks = options.pop("tasks", TASKS)
    defaults: dict[str, Any] = {
        "qa": DEFAULT_PER_RELATION,
        "edit": DEFAULT_PER_RELATION,
        "seed": 0,
        "limit": None,
        "jobs": None,
        "protocol": str(Protocol.SPATIALGAP),
        "city": None,
        "cities": None,
        "agent_workers": None,
        "force": False,
    }
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise TypeError(f"evaluate() got an unexpected keyword argument {unknown[0]!r}")
    args = argparse.Namespace(
        out=Path(out),
        bench=Path(bench) if bench is not None else None,
        osm=[str(p) for p in paths],
        agents=",".join(agents) or "none",
        config=Path(config) if config is not None else None,
        model=list(models),
        modalities=",".join(modalities),
        tasks=",".join(tasks),
        no_progress=not progress,
        **{**defaults, **options},
    )
    plan = plan_from_args(args)
    with open_executor(plan.jobs) as executor:
        return sweep(plan, executor)
