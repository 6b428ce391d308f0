"""The built-in agents, each served by its own `spatialgap serve-agent` child process on a
stable loopback port, so an agent's CPU work and the sweep's bookkeeping use different cores,
exactly as a remote model would."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from scoring.errors import SpatialGapError
from scoring.evaluate.timing import live_cpu

_SERVING = re.compile(r"serving agent \S+ on (http://\S+/v1)")


@dataclass
class AgentProcess:
    """One `spatialgap serve-agent` child process and its loopback base URL."""

    name: str
    proc: subprocess.Popen
    base_url: str
    cpu_seconds: float | None = None  # what serving cost, read as it is stopped

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.cpu_seconds = live_cpu(self.proc.pid)
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# A served agent is part of the run's identity (its base URL is in every request key), so each
# agent gets a stable loopback port: re-running the main job then resumes from the journals.
AGENT_PORTS = {"tools": 18770, "centroid": 18771, "chance": 18772, "blind": 18773}
# Reply-computing processes per agent when not given: a few milliseconds per reply do not repay
# pickling each prompt to a worker. `tools` searches edits, but with the builder's batched search
# and its answer memo that is 1.5-4 ms a reply: on make run's 2 cores two extra worker processes
# cost more CPU (2.3 CPU-s, their start and the pickling) than they save.
AGENT_WORKERS = {"centroid": 1, "chance": 1, "tools": 1, "blind": 1}


def start_agent(name: str, workers: int | None = None, timeout_s: float = 60.0) -> AgentProcess:
    """Start agent `name` on its stable loopback port (a free one if that is taken; finished runs
    are then not reused) and return once it is listening."""
    stable = AGENT_PORTS.get(name, 0)
    for port in (stable, 0):
        try:
            started = _start_agent_on(name, port, workers, timeout_s)
        except SpatialGapError:
            if port == 0:
                raise
            continue
        if stable and port == 0:
            print(
                f"[evaluate] agent {name}: port {stable} is taken (another evaluate?), serving on "
                f"{started.base_url}; its runs already in OUT cannot resume from this port",
                file=sys.stderr,
                flush=True,
            )
        return started
    raise AssertionError("unreachable")


def _start_agent_on(name: str, port: int, workers: int | None, timeout_s: float) -> AgentProcess:
    cmd = [sys.executable, "-m", "scoring", "serve-agent", "--agent", name, "--port", str(port)]
    if workers:
        cmd += ["--workers", str(workers)]
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + timeout_s
    seen: list[str] = []
    stderr = proc.stderr
    assert stderr is not None
    # Scan every line until the address: an import may print warnings before it.
    while time.monotonic() < deadline:
        line = stderr.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        seen.append(line.rstrip())
        m = _SERVING.search(line)
        if m:
            # Keep draining stderr so a chatty agent never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in stderr], daemon=True).start()
            return AgentProcess(name, proc, m.group(1))
    proc.kill()
    proc.wait()
    tail = " | ".join(seen[-3:]) or "no output"
    raise SpatialGapError(
        f"agent {name} did not start serving on port {port} within {timeout_s:.0f} s ({tail})"
    )


def start_agents(names: list[str], workers: int | None) -> dict[str, AgentProcess]:
    """Start every agent at once (each import takes a second or two) and return them serving;
    if one fails to start, the others are stopped. ``workers``: processes per agent (default:
    AGENT_WORKERS, else every core)."""
    if not names:
        return {}
    with ThreadPoolExecutor(len(names)) as pool:
        futures = {
            n: pool.submit(start_agent, n, workers or AGENT_WORKERS.get(n) or os.cpu_count()) for n in names
        }
    started = {n: f.result() for n, f in futures.items() if f.exception() is None}
    failed = [f.exception() for f in futures.values() if f.exception() is not None]
    if failed:
        for agent in started.values():
            agent.stop()
        raise failed[0]  # type: ignore[misc]
    return started
