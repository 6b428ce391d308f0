"""The sweep starts its agents while the selfcheck and the builds run (the render, the main job's
critical path, then starts as soon as the benchmark exists), and a failed build leaves no agent
process behind."""

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
