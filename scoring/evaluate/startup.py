"""What a sweep starts before anything else: the built-in agents, the render of the first city to
build and the early scorer, each its own process loading its imports (about 4 CPU-s in all).

Started by the command before it imports the sweep (matplotlib, scipy, aiohttp, the builder: about
1.4 CPU-s), so those imports and the children's run side by side on an otherwise idle core. This
module therefore imports nothing heavy itself.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from scoring.evaluate.agents import AgentProcess, start_agents
from scoring.evaluate.early import EarlyScorer
from scoring.evaluate.early_render import EarlyRender
from scoring.evaluate.plan import SweepPlan
from scoring.runner.agents.registry import BENCH_ENV


@dataclass
class Startup:
    """The processes a sweep started early; `abandon()` ends them all (the sweep failed before
    using them)."""

    agents: Future[dict[str, AgentProcess]]  # starting in a background thread
    t0: float  # when the sweep began (time.perf_counter)
    render: EarlyRender | None = None  # waiting for the first city's map ids
    scorer: EarlyScorer | None = None  # scores each run as it ends

    def stop_agents(self) -> None:
        """Stop the agents once started (waits for a start in progress; a failed start left none)."""
        try:
            agents = self.agents.result()
        except Exception:  # noqa: BLE001 - its error, if any, is raised where the agents are used
            return
        for a in agents.values():
            a.stop()

    def abandon(self) -> None:
        self.stop_agents()
        if self.render is not None:
            self.render.stop()
        if self.scorer is not None:
            self.scorer.close(abandon=True)


def start(plan: SweepPlan, on_cluster: bool) -> Startup:
    """Start the plan's agents, and locally the early render and scorer, without waiting for any."""
    t0 = time.perf_counter()
    started = Startup(_start_agents_meanwhile(plan), t0)
    try:
        if not on_cluster:
            started.render = _start_render_meanwhile(plan)
            # each run scored as it ends, by a worker that loads the scorer meanwhile too (not with an
            # extractor: its readings come after the runs, before they are scored)
            if plan.extractor is None:
                started.scorer = EarlyScorer(only_recorded=plan.limit is not None)
    except BaseException:
        started.abandon()
        raise
    return started


def _start_agents_meanwhile(plan: SweepPlan) -> Future[dict[str, AgentProcess]]:
    """The plan's built-in agents, starting in a background thread."""
    names = [p.name for p in plan.participants if p.is_agent]
    # the options-only baseline learns from the other items of the benchmarks it is run on
    os.environ[BENCH_ENV] = os.pathsep.join(str(c.bench.resolve()) for c in plan.cities)
    pool = ThreadPoolExecutor(1, thread_name_prefix="start-agents")
    try:
        return pool.submit(start_agents, names, plan.agent_workers)
    finally:
        pool.shutdown(wait=False)


def _start_render_meanwhile(plan: SweepPlan) -> EarlyRender | None:
    """The render of the first city whose benchmark is about to be built (all its maps to draw),
    started now so that it loads while the selfcheck and the build run."""
    for city in plan.cities:
        if plan.wants_maps(city):
            if plan.force or not (city.bench / "manifest.json").exists():
                return EarlyRender(city.bench, plan.jobs or os.cpu_count() or 1)
            return None
    return None
