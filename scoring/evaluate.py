"""The main job, end to end (`spatialgap evaluate`, what `make run` runs).

    OSM extract -> benchmark (+ maps) -> reference agents served over real loopback HTTP
    -> runs (every task x modality each agent can handle) -> verdicts -> HTML report

Each stage is the same public function a user would call on its own (build_benchmark,
render_benchmark, run_benchmark, score_runs, write_report); this module only sequences them,
so a cluster can run the stages separately over shards. Agents are served in their own process
(`spatialgap serve-agent --port 0`), so an agent's CPU work and the runner's bookkeeping use
different cores, exactly as a remote model would.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from scoring import __version__
from scoring.errors import InputError, OutputError, SpatialGapError

# What each built-in agent can read: `tools` and `centroid` compute from coordinates, so they
# need the GeoJSON (geojson, together); `chance` answers within the format in every modality.
AGENT_MODALITIES: dict[str, tuple[str, ...]] = {
    "tools": ("geojson", "together"),
    "centroid": ("geojson", "together"),
    "chance": ("geojson", "image", "together"),
}
DEFAULT_AGENTS = ("tools", "centroid", "chance")
TASKS = ("qa", "edit")
_SERVING = re.compile(r"serving agent \S+ on (http://\S+/v1)")


@dataclass
class AgentProcess:
    """One `spatialgap serve-agent` child process and its loopback base URL."""

    name: str
    proc: subprocess.Popen
    base_url: str

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# A served agent is part of the run's identity (its base URL is in every request key), so each
# agent gets a stable loopback port: re-running the main job then resumes from the journals.
AGENT_PORTS = {"tools": 18770, "centroid": 18771, "chance": 18772}


def start_agent(name: str, workers: int | None = None, timeout_s: float = 60.0) -> AgentProcess:
    """Start agent `name` on its stable loopback port (a free one if that is taken; finished runs
    are then not reused) and return once it is listening."""
    for port in (AGENT_PORTS.get(name, 0), 0):
        try:
            return _start_agent_on(name, port, workers, timeout_s)
        except SpatialGapError:
            if port == 0:
                raise
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
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            if proc.poll() is not None:
                break
            continue
        seen.append(line.rstrip())
        m = _SERVING.search(line)
        if m:
            # Keep draining stderr so a chatty agent never blocks on a full pipe.
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return AgentProcess(name, proc, m.group(1))
    proc.kill()
    proc.wait()
    tail = " | ".join(seen[-3:]) or "no output"
    raise SpatialGapError(
        f"agent {name} did not start serving on port {port} within {timeout_s:.0f} s ({tail})"
    )


@dataclass
class EvaluationPlan:
    out: Path
    osm: str | None = None
    city: str | None = None
    seed: int = 0
    n_qa: int = 25
    n_edit: int = 25
    agents: tuple[str, ...] = DEFAULT_AGENTS
    modalities: tuple[str, ...] = ("geojson", "image", "together")
    tasks: tuple[str, ...] = TASKS
    jobs: int | None = None
    force: bool = False
    limit: int | None = None
    progress: bool = True
    agent_workers: int | None = None
    runs: list[Path] = field(default_factory=list)

    @property
    def bench(self) -> Path:
        return self.out / "bench"

    def run_dir(self, agent: str, modality: str, task: str) -> Path:
        return self.out / "runs" / agent / f"{modality}-{task}"


def _say(msg: str) -> None:
    print(f"[evaluate] {msg}", file=sys.stderr, flush=True)


def _bench_ready(plan: EvaluationPlan) -> bool:
    """An existing benchmark is reused only if it was built from the same request: same source
    bytes, seed and counts, and with maps when a map modality is asked for."""
    from scoring.benchfiles import load_manifest
    from scoring.extract import default_osm_path, sha256_file

    if plan.force or not (plan.bench / "manifest.json").exists():
        return False
    try:
        m, _ = load_manifest(plan.bench)
        source = Path(plan.osm) if plan.osm else default_osm_path()
        same_source = m["source"]["sha256"] == sha256_file(source)
        req = m["requested"]
        n_instances = m["counts"]["qa"] + m["counts"]["edit"]
    except (OSError, ValueError, KeyError, TypeError, SpatialGapError):
        return False
    want_maps = "image" in plan.modalities or "together" in plan.modalities
    has_maps = _maps_current(plan.bench, n_instances)
    return (
        same_source
        and m.get("seed") == plan.seed
        and req.get("qa_per_relation") == plan.n_qa
        and req.get("edit_per_relation") == plan.n_edit
        and m.get("tool_version") == __version__
        and (has_maps or not want_maps)
    )


def _maps_current(bench: Path, n_instances: int) -> bool:
    """Every instance has a map, drawn by this renderer version (maps from an older renderer
    would silently give image-modality results for pixels the current code no longer draws)."""
    from scoring.render.version import RENDERER_VERSION

    maps = bench / "maps"
    sidecars = sorted(maps.glob("*.json")) if maps.is_dir() else []
    if len(list(maps.glob("*.png"))) < n_instances or not sidecars:
        return False
    try:
        versions = {
            json.loads(p.read_text(encoding="utf-8"))["renderer"]["version"]
            for p in (sidecars[0], sidecars[-1])
        }
    except (OSError, ValueError, KeyError, TypeError):
        return False
    return versions == {RENDERER_VERSION}


def _set_aside_runs(out: Path) -> None:
    """Runs journaled against a benchmark that is about to be rebuilt cannot be resumed on the
    new one; they are moved aside (never deleted) so the new runs start clean."""
    runs = out / "runs"
    if not runs.is_dir():
        return
    stamp = time.strftime("%Y%m%dT%H%M%S")
    target = out / f"runs-superseded-{stamp}"
    try:
        runs.rename(target)
    except OSError as exc:
        raise OutputError(f"{runs}: cannot move aside before rebuilding ({exc.strerror})") from None
    _say(f"benchmark rebuilt: previous runs moved to {target}")


def evaluate(plan: EvaluationPlan) -> dict:
    from scoring.build import build_benchmark
    from scoring.runner.config import ModelSpec
    from scoring.runner.run import run_benchmark
    from scoring.score import run_selfcheck, score_runs, write_report

    unknown = [a for a in plan.agents if a not in AGENT_MODALITIES]
    if unknown:
        raise InputError(f"--agents: unknown agent {unknown[0]!r} (built-in: {', '.join(AGENT_MODALITIES)})")
    t0 = time.perf_counter()
    # The harness checks itself before any sweep: a drifted scorer must not produce a report.
    drift = run_selfcheck()
    if drift:
        raise SpatialGapError("selfcheck failed, refusing to score: " + "; ".join(drift[:5]))
    _say("selfcheck passed")

    plan.out.mkdir(parents=True, exist_ok=True)
    if _bench_ready(plan):
        _say(f"reusing benchmark {plan.bench} (use --force to rebuild)")
    else:
        _set_aside_runs(plan.out)
        m = build_benchmark(
            plan.osm,
            plan.bench,
            plan.city,
            plan.seed,
            plan.n_qa,
            plan.n_edit,
            None,
            plan.jobs,
            force=True,
            progress=plan.progress,
        )
        _say(f"built {m['counts']['qa']} QA + {m['counts']['edit']} editing instances ({m['city']})")
        if "image" in plan.modalities or "together" in plan.modalities:
            from scoring.render import render_benchmark

            render_benchmark(plan.bench, jobs=plan.jobs or os.cpu_count(), progress=plan.progress)
            _say("rendered maps")
    t_build = time.perf_counter() - t0

    timings: dict[str, float] = {}
    failed: dict[str, int] = {}
    for name in plan.agents:
        mods = [m for m in plan.modalities if m in AGENT_MODALITIES[name]]
        if not mods:
            continue
        server = start_agent(name, plan.agent_workers or os.cpu_count())
        _say(f"serving {name} at {server.base_url}")
        try:
            spec = ModelSpec.from_endpoint(server.base_url, name, concurrency=16, timeout_s=300.0)
            for modality in mods:
                for task in plan.tasks:
                    rd = plan.run_dir(name, modality, task)
                    t1 = time.perf_counter()
                    s = run_benchmark(
                        plan.bench, spec, modality, task, None, rd, progress=plan.progress, limit=plan.limit
                    )
                    timings[f"{name}/{modality}/{task}"] = round(time.perf_counter() - t1, 2)
                    if s.failed:
                        failed[f"{name}/{modality}/{task}"] = s.failed
                    plan.runs.append(rd)
                    _say(f"{name} {modality} {task}: {s.samples} samples, {s.ok} ok, {s.failed} failed")
        finally:
            server.stop()

    results = plan.out / "results"
    # With --limit only part of each run exists: score what was recorded, not the whole benchmark.
    summary = score_runs(
        plan.bench, plan.runs, results, progress=plan.progress, only_recorded=plan.limit is not None
    )
    report = write_report([results], plan.out / "report.html")
    total = time.perf_counter() - t0
    record = {
        "bench": str(plan.bench),
        "runs": [str(r) for r in plan.runs],
        "results": str(results),
        "report": str(report),
        "seconds": {"build_and_render": round(t_build, 2), "runs": timings, "total": round(total, 2)},
        "failed_samples": failed,
    }
    try:
        (plan.out / "evaluate.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{plan.out}: cannot write evaluate.json ({exc.strerror})") from None
    record["summary"] = summary
    return record


def add_parser(sub) -> None:
    p = sub.add_parser(
        "evaluate",
        help="the main job: build, serve reference agents, run, score and report",
        description="Build a benchmark (default: the embedded Helsinki extract), serve the built-in "
        "reference agents on loopback, run them over every task and modality they can "
        "read, score the runs and write OUT/report.html. Re-running resumes finished runs.",
    )
    p.add_argument("--out", required=True, type=Path, metavar="DIR")
    p.add_argument("--osm", help="an .osm.pbf or .osm file (default: the embedded Helsinki extract)")
    p.add_argument("--city")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--qa", type=int, default=25, help="QA instances per relation")
    p.add_argument("--edit", type=int, default=25, help="editing instances per relation")
    p.add_argument(
        "--agents",
        default=",".join(DEFAULT_AGENTS),
        help=f"comma-separated built-in agents (default: {','.join(DEFAULT_AGENTS)})",
    )
    p.add_argument("--modalities", default="geojson,image,together")
    p.add_argument("--tasks", default="qa,edit")
    p.add_argument("--limit", type=int, metavar="N", help="only the first N instances per run")
    p.add_argument("--jobs", type=int, help="worker processes for build and render (default: all cores)")
    p.add_argument(
        "--agent-workers",
        type=int,
        metavar="N",
        help="processes each served agent computes replies in (default: all cores)",
    )
    p.add_argument("--force", action="store_true", help="rebuild the benchmark even if it exists")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=_cli)


def _split(value: str, allowed: tuple[str, ...] | None, what: str) -> tuple[str, ...]:
    items = tuple(v.strip() for v in value.split(",") if v.strip())
    if not items:
        raise InputError(f"--{what}: give at least one")
    if allowed:
        bad = [v for v in items if v not in allowed]
        if bad:
            raise InputError(f"--{what}: unknown {bad[0]!r} (expected {', '.join(allowed)})")
    return items


def _cli(args: argparse.Namespace) -> int:
    plan = EvaluationPlan(
        out=args.out,
        osm=args.osm,
        city=args.city,
        seed=args.seed,
        n_qa=args.qa,
        n_edit=args.edit,
        agents=_split(args.agents, tuple(AGENT_MODALITIES), "agents"),
        modalities=_split(args.modalities, ("geojson", "image", "together"), "modalities"),
        tasks=_split(args.tasks, TASKS, "tasks"),
        jobs=args.jobs,
        force=args.force,
        limit=args.limit,
        progress=not args.no_progress,
        agent_workers=args.agent_workers,
    )
    rec = evaluate(plan)
    print(f"report: {rec['report']}")
    print(f"verdicts: {rec['results']}")
    if rec["failed_samples"]:
        print(
            "failed requests (re-run to retry): "
            + ", ".join(f"{k} {v}" for k, v in rec["failed_samples"].items())
        )
        return 1
    return 0
