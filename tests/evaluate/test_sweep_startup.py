"""The sweep starts its agents while the selfcheck and the builds run (the render, the main job's
critical path, then starts as soon as the benchmark exists), and a failed build leaves no agent
process behind."""

import subprocess
import sys
import threading

import pytest

import scoring.evaluate.startup as startup
import scoring.evaluate.sweep as sweep
from scoring.errors import InputError
from scoring.evaluate.plan import AGENT_MODALITIES, City, Participant, SweepPlan


def test_agents_start_during_the_build_and_stop_when_it_fails(tmp_path, monkeypatch):
    started = threading.Event()
    processes = []

    def start_agents(names, workers):  # the real agents, real processes
        agents = real_start(names, workers)
        processes.extend(a.proc for a in agents.values())
        started.set()
        return agents

    seen = {}

    def prepare(*args, **kwargs):
        # the build waits for the agents: they can only be up if they started alongside it
        seen["agents_up_during_build"] = started.wait(120)
        raise InputError("not an OSM extract")

    real_start = startup.start_agents
    monkeypatch.setattr(startup, "start_agents", start_agents)
    monkeypatch.setattr(sweep, "run_selfcheck", lambda: [])
    monkeypatch.setattr(sweep, "prepare", prepare)
    plan = SweepPlan(
        out=tmp_path,
        cities=[City("", tmp_path)],
        participants=[Participant("chance", AGENT_MODALITIES["chance"])],
        progress=False,
    )
    with pytest.raises(InputError, match="not an OSM extract"):
        sweep.evaluate(plan)
    assert seen["agents_up_during_build"]
    assert len(processes) == 1
    assert all(p.poll() is not None for p in processes), "an agent outlived the failed build"


def test_the_command_starts_its_children_before_it_loads_the_sweep():
    # `spatialgap evaluate` imports scoring.evaluate.cli, starts the agents, render and scorer
    # (scoring.evaluate.startup), and only then the sweep: its 1.4 CPU-s of imports (matplotlib,
    # scipy, aiohttp) then run beside the children's instead of before them.
    probe = (
        "import sys, scoring.evaluate.cli, scoring.evaluate.startup\n"
        "heavy = ('matplotlib', 'scipy', 'aiohttp', 'scoring.evaluate.sweep', 'scoring.score.results')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "from scoring.evaluate import evaluate\n"
        "print(evaluate.__module__)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "scoring.evaluate.sweep"]
