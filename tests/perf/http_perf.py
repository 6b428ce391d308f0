"""Image vs GeoJSON requests end to end: whole runs over real loopback HTTP (prints JSON).

    .venv/bin/python tests/perf/http_perf.py --bench DIR [--agent chance] [--samples N]

The `chance` agent is served by `spatialgap serve-agent` in its own process, as the main job
serves it; one run per modality sends the same QA samples through the runner's default
transport (aiohttp) and journals them. Per request: the client's CPU (this process: prompt,
map read and digest, data URL, body, HTTP, journal) and the agent's CPU (its process: HTTP,
JSON parse, reply), both from the kernel's accounting, so they hold on a shared machine.
The benchmark must have its maps (the main job's benchmark, or `spatialgap render`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

from scoring.evaluate.agents import start_agent
from scoring.runner.config import ModelSpec
from scoring.runner.http_transport import AiohttpTransport
from scoring.runner.run import run_benchmark_async

CONCURRENCY = 16  # as the main job sends to a built-in agent (scoring.evaluate.sweep)


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` and its live children (a worker pool)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    total = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    children = Path(f"/proc/{pid}/task/{pid}/children")
    for child in children.read_text().split() if children.exists() else []:
        total += _cpu_s(int(child))
    return total


def one_run(bench: Path, spec: ModelSpec, pid: int, modality: str, limit: int, out: Path) -> dict:
    async def go():
        transport = AiohttpTransport(max_connections=CONCURRENCY)
        try:
            return await run_benchmark_async(
                bench, spec, modality, "qa", None, out, transport, progress=False, limit=limit
            )
        finally:
            await transport.aclose()

    agent0, client0, wall0 = _cpu_s(pid), time.process_time(), time.perf_counter()
    summary = asyncio.run(go())
    wall = time.perf_counter() - wall0
    client, agent = time.process_time() - client0, _cpu_s(pid) - agent0
    n = max(1, summary.samples)
    return {
        "requests": summary.samples,
        "ok": summary.ok,
        "wall_s": round(wall, 2),
        "requests_per_s": round(summary.samples / wall, 1),
        "client_cpu_ms_per_request": round(client / n * 1e3, 3),
        "agent_cpu_ms_per_request": round(agent / n * 1e3, 3),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", required=True, type=Path)
    ap.add_argument("--agent", default="chance")
    ap.add_argument("--samples", type=int, default=600, help="QA instances per run (two forms each)")
    a = ap.parse_args(argv)
    agent = start_agent(a.agent, workers=1)
    try:
        spec = ModelSpec.from_endpoint(agent.base_url, a.agent, concurrency=CONCURRENCY, timeout_s=300)
        out: dict = {"agent": a.agent, "concurrency": CONCURRENCY, "transport": "aiohttp"}
        with tempfile.TemporaryDirectory(prefix="http-perf-") as tmp:
            for modality in ("geojson", "image"):
                run_dir = Path(tmp) / modality
                out[modality] = one_run(a.bench, spec, agent.proc.pid, modality, a.samples, run_dir)
    finally:
        agent.stop()
    geo, img = out["geojson"], out["image"]
    client, agent = "client_cpu_ms_per_request", "agent_cpu_ms_per_request"
    out["summary"] = {
        "image_over_geojson_client": round(img[client] / geo[client], 2),
        "image_overhead_client_ms": round(img[client] - geo[client], 3),
        "image_overhead_agent_ms": round(img[agent] - geo[agent], 3),
    }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
