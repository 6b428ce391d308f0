"""The sweep: every participant x city x modality x task it can read, run concurrently in one
event loop, then scored per city and reported once.

Each participant's runs go one after the other (its `concurrency` is the load it was configured
to take), participants run side by side, map-free runs first: they start as soon as the
benchmarks exist while a child process draws the maps, and a map run follows the render, each
sample waiting for its own map.
Every stage is the public function a user would call on its own (build_benchmark, `spatialgap
render`, run_benchmark, score_runs, write_report), so a cluster can run them over shards."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scoring.browse import BROWSER_NAME, write_browser
from scoring.errors import SpatialGapError
from scoring.evaluate import startup, timing
from scoring.evaluate.agents import AgentProcess
from scoring.evaluate.cities import MapRenderer, prepare, say
from scoring.evaluate.cluster import check_shared_out, run_all_on_cluster
from scoring.evaluate.early import EarlyScorer
from scoring.evaluate.plan import City, Participant, SweepPlan
from scoring.evaluate.progress import RunFollower, RunLine, SweepDisplay
from scoring.execute import Executor, LocalExecutor
from scoring.formats.benchmark import Benchmark
from scoring.runner.config import ModelSpec
from scoring.runner.extract import extract_run
from scoring.runner.http_transport import AiohttpTransport
from scoring.runner.run import RunStoppedError, RunSummary, run_benchmark_async
from scoring.score.report import write_report
from scoring.score.results import score_runs
from scoring.score.selfcheck import run_selfcheck
from scoring.support.files import write_json_atomic
from scoring.vocab import QA_FORMS, Modality, Task

AGENT_CONCURRENCY = 16  # requests in flight per agent run: enough to keep its worker pool busy
AGENT_TIMEOUT_S = 300.0


class SweepStoppedError(SpatialGapError):
    """Every model was stopped (a wrong key, the proxy not running): nothing to score."""

    exit_code = 3  # as when a model is stopped in a sweep that scored others


@dataclass
class PlannedRun:
    city: City
    participant: Participant
    modality: str
    task: str
    line: RunLine
    start: Callable[[int], RunFollower]  # the run's observer factory (its line in the display)
    bench: Benchmark  # read once for all the city's runs: they share its instances (and their digests)
    summary: RunSummary | None = None

    @property
    def run_dir(self) -> Path:
        return self.city.run_dir(self.participant.name, self.modality, self.task)

    @property
    def needs_maps(self) -> bool:
        return Modality(self.modality).has_image


def _label(plan: SweepPlan, city: City, p: Participant, modality: str, task: str) -> str:
    where = "" if plan.single else f"{city.name}/"
    return f"{where}{p.name}/{modality}-{task}"


def _samples(bench: Benchmark, task: str, limit: int | None) -> int:
    n = len(bench.of_task(task))
    n = n if limit is None else min(n, limit)
    return n * (len(QA_FORMS) if task == Task.QA else 1)


_MAP_ORDER = (Task.EDIT, Task.QA)  # the order `spatialgap render --edit-first` draws the maps in


def plan_runs(plan: SweepPlan, display: SweepDisplay) -> list[PlannedRun]:
    """Every run of the sweep, map-free ones first, then by city. A participant's map runs go
    task by task as the maps are drawn (editing first, then QA: the render draws them in that
    order), so the runs left when the last map is drawn are QA runs, the quickest to score."""
    runs = []
    benches = {c.bench: Benchmark.open(c.bench) for c in plan.cities}
    for needs_maps in (False, True):
        for p in plan.participants:
            for city in plan.cities:
                mods = [m for m in plan.modalities_of(p) if Modality(m).has_image == needs_maps]
                pairs = (
                    [(m, t) for t in sorted(plan.tasks, key=_MAP_ORDER.index) for m in mods]
                    if needs_maps
                    else [(m, t) for m in mods for t in plan.tasks]
                )
                for modality, task in pairs:
                    bench = benches[city.bench]
                    line, start = display.follower(_label(plan, city, p, modality, task))
                    line.total = _samples(bench, task, plan.limit) * (p.spec.samples if p.spec else 1)
                    display.add_total(line.total)
                    runs.append(PlannedRun(city, p, modality, task, line, start, bench))
    return runs


def _maps_of(renderer: MapRenderer, r: PlannedRun):
    """What a run awaits per instance: its map, its map set (cross-map modalities), or nothing."""
    if not r.needs_maps:
        return None
    if Modality(r.modality).map_set:
        return functools.partial(renderer.map_set, r.city.bench, r.modality)
    return functools.partial(renderer.map_png, r.city.bench)


def _spec(p: Participant, agents: dict[str, AgentProcess]) -> ModelSpec:
    if p.spec is not None:
        return p.spec
    return ModelSpec.from_endpoint(
        agents[p.name].base_url, p.name, concurrency=AGENT_CONCURRENCY, timeout_s=AGENT_TIMEOUT_S
    )


async def _participant(
    p: Participant,
    runs: list[PlannedRun],
    spec: ModelSpec,
    plan: SweepPlan,
    display: SweepDisplay,
    renderer: MapRenderer,
    stopped: dict[str, str],
    early: EarlyScorer | None = None,
) -> None:
    # One connection pool for all of the participant's runs (a pool per run costs its set-up
    # and its TLS context every time).
    transport = AiohttpTransport(max_connections=spec.concurrency)

    async def one(r: PlannedRun) -> None:
        if p.name in stopped:
            display.ended(r.line, "skipped", f"{p.name} stopped")
            return
        try:
            r.summary = await run_benchmark_async(
                r.bench,
                spec,
                r.modality,
                r.task,
                None,
                r.run_dir,
                transport,
                progress=r.start,
                limit=plan.limit,
                map_png=_maps_of(renderer, r),
            )
        except RunStoppedError as exc:
            stopped[p.name] = str(exc)
            display.ended(r.line, "stopped", str(exc))
            return
        display.ended(r.line, "complete" if not r.summary.failed else "incomplete")
        if early is not None:
            early.submit(r.city.bench, r.run_dir)

    try:
        for group in _side_by_side(p, runs):
            tasks = [asyncio.ensure_future(one(r)) for r in group]
            try:
                await asyncio.gather(*tasks)
            except BaseException:
                for t in tasks:  # a failed run takes its siblings down with it, as the sweep ends
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
    finally:
        await transport.aclose()


def _side_by_side(p: Participant, runs: list[PlannedRun]) -> list[list[PlannedRun]]:
    """A participant's runs in the order given, as groups run together. A built-in agent's map runs
    of one city and task (e.g. chance's image and together) go side by side: both follow the render,
    so neither is left to run alone once the last map is drawn. They share the participant's
    connection pool, so the agent's load stays what it was."""
    groups: list[list[PlannedRun]] = []
    for r in runs:
        last = groups[-1][-1] if groups else None
        if (
            p.is_agent
            and last is not None
            and r.needs_maps
            and last.needs_maps
            and (r.city, r.task) == (last.city, last.task)
        ):
            groups[-1].append(r)
        else:
            groups.append([r])
    return groups


async def _run_all(
    plan: SweepPlan,
    runs: list[PlannedRun],
    agents: dict[str, AgentProcess],
    renderer: MapRenderer,
    display: SweepDisplay,
    early: EarlyScorer | None = None,
) -> tuple[dict[str, str], float]:
    stopped: dict[str, str] = {}
    t0 = time.perf_counter()
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(renderer.run())
            for p in plan.participants:
                mine = [r for r in runs if r.participant is p]
                spec = _spec(p, agents)
                tg.create_task(_participant(p, mine, spec, plan, display, renderer, stopped, early))
    except BaseExceptionGroup as eg:
        # One participant's refusal (e.g. OUT holds its runs under another endpoint) ends the
        # sweep with that one-line error, not a traceback of the task group.
        known = [e for e in eg.exceptions if isinstance(e, SpatialGapError)]
        if known and len(known) == len(eg.exceptions):
            raise known[0] from None
        raise
    return stopped, time.perf_counter() - t0


def evaluate(
    plan: SweepPlan, executor: Executor | None = None, started: startup.Startup | None = None
) -> dict:
    """Run the whole sweep; returns the record also written to OUT/evaluate.json. ``executor``:
    where builds, maps, runs and scoring go (default: local processes; a Dask one sends each
    build shard, map batch, run and scored run to the cluster). ``started``: what
    `scoring.evaluate.startup.start` began for this plan (else started here)."""
    on_cluster = executor is not None and executor.distributed
    # The agents, the render and the scorer load (an interpreter and its imports each) while the
    # selfcheck and the builds run: the render, the job's critical path, then begins as soon as
    # the benchmarks exist.
    started = started if started is not None else startup.start(plan, on_cluster)
    t0 = started.t0  # the sweep's time counts from there (the command's imports of the sweep too)
    c_start = timing.all_cpu()
    cpu: dict[str, float | None] = {}  # each phase's CPU here and in the children it waited for
    early = started.scorer
    work = _prepare(plan, executor, started)
    t_prepare = time.perf_counter() - t0
    cpu["prepare"] = timing.all_cpu() - c_start
    renderer = MapRenderer(work, plan.jobs, plan.map_sets(), started.render)
    renderer.scheduler = executor.address if executor is not None and on_cluster else None
    runs, agents, stopped, t_runs, cpu["runs"] = _sweep(plan, executor, started, renderer)

    t1, c_score = time.perf_counter(), timing.all_cpu()
    results = _score_all(plan, runs, early, executor if on_cluster else None)
    t_score = time.perf_counter() - t1
    # the early scorer's worker is waited for in close(): its CPU (spent during the runs) is its own
    cpu["score"] = timing.all_cpu() - c_score - ((early.cpu_seconds or 0.0) if early is not None else 0.0)
    if not results:
        why = "; ".join(stopped.values())
        raise (SweepStoppedError if stopped else SpatialGapError)(f"no run finished, nothing to score: {why}")
    t2, c_report = time.perf_counter(), timing.all_cpu()
    report = write_pages(results, plan.report, plan.jobs)
    cpu["report"] = timing.all_cpu() - c_report
    seconds = {
        "prepare": t_prepare,  # selfcheck and builds
        "render": renderer.seconds,  # in the background, during the runs
        "runs": t_runs,
        "score": t_score,
        "report": time.perf_counter() - t2,
        "total": time.perf_counter() - t0,
    }
    cpu["maps"] = renderer.cpu_seconds
    cpu["early_scorer"] = early.cpu_seconds if early is not None else None
    for name, a in agents.items():
        cpu[f"agent {name}"] = a.cpu_seconds
    # since the command started: this process and every child it waited for (all of them by now)
    cpu["total"] = timing.all_cpu()
    return _record(plan, runs, stopped, results, report, seconds, cpu)


def _prepare(
    plan: SweepPlan, executor: Executor | None, started: startup.Startup
) -> list[tuple[Path, list[str]]]:
    """The selfcheck, then each city's benchmark: (benchmark, instances whose maps are missing)
    per city. The early render, if any, is handed its city's missing maps at once."""
    try:
        # The harness checks itself before any sweep: a drifted scorer must not produce a report.
        drift = run_selfcheck()
        if drift:
            raise SpatialGapError("selfcheck failed, refusing to score: " + "; ".join(drift[:5]))
        say("selfcheck passed")
        plan.out.mkdir(parents=True, exist_ok=True)
        if executor is not None and executor.distributed:
            check_shared_out(executor, plan.out)
        work = []
        for city in plan.cities:
            missing = prepare(city, plan.force, plan.jobs, plan.progress, plan.wants_maps(city), executor)
            work.append((city.bench, missing))
    except BaseException:
        started.abandon()
        raise
    if started.render is not None:
        for bench, missing in work:
            if bench == started.render.bench:
                started.render.send(missing)  # it draws while the runs are planned
    return work


def _sweep(
    plan: SweepPlan, executor: Executor | None, started: startup.Startup, renderer: MapRenderer
) -> tuple[list[PlannedRun], dict[str, AgentProcess], dict[str, str], float, float]:
    """Every run, the maps drawn beside them: (runs, agents, stopped runs and why, the runs'
    wall seconds, this process's CPU seconds for them: the client's requests, journals, maps)."""
    display = SweepDisplay(plan.progress)
    agents: dict[str, AgentProcess] = {}
    try:
        runs = plan_runs(plan, display)
        agents = started.agents.result()
        for name, a in agents.items():
            display.write(f"serving {name} at {a.base_url}")
        if executor is not None and executor.distributed:
            specs = {p.name: _spec(p, agents) for p in plan.participants}
            sweep = run_all_on_cluster(executor, plan, runs, specs, renderer, display)
        else:
            sweep = _run_all(plan, runs, agents, renderer, display, started.scorer)
        c_runs = timing.own_cpu()
        stopped, t_runs = asyncio.run(sweep)
        return runs, agents, stopped, t_runs, timing.own_cpu() - c_runs
    except BaseException:
        if started.scorer is not None:
            started.scorer.close(abandon=True)
        raise
    finally:
        renderer.stop()
        started.stop_agents()
        display.close()


def _score_all(
    plan: SweepPlan, runs: list[PlannedRun], early: EarlyScorer | None, cluster: Executor | None
) -> list[Path]:
    """Each city's finished runs scored into its results (what the early scorer did not score
    already); the results directories of the cities that have any."""
    results = []
    try:
        prescored = early.results() if early is not None else {}
        for city in plan.cities:
            done = [r.run_dir for r in runs if r.city is city and r.summary is not None]
            if not done:
                continue
            if plan.extractor is not None:  # the replies the rules leave unparsed, read by the extractor
                for run_dir in done:
                    extract_run(city.bench, run_dir, plan.extractor)
            # With --limit only part of each run exists: score what was recorded, not the whole
            # benchmark.
            score_runs(
                Benchmark.open(city.bench),
                done,
                city.results,
                progress=False,
                only_recorded=plan.limit is not None,
                # locally: what was not scored early, side by side on every core
                executor=cluster if cluster is not None else LocalExecutor(plan.jobs),
                prescored=prescored,
            )
            results.append(city.results)
    finally:
        if early is not None:
            early.close()
    return results


def _write_page(page: str, shared: tuple[list[Path], Path, str | None]) -> Path:
    results, report, link = shared
    if page == "report":
        return write_report(results, report)
    # every sample, linked from the report
    return write_browser(results, report.with_name(BROWSER_NAME), report_name=link)


def write_pages(results: list[Path], report: Path, jobs: int | None) -> Path:
    """The report and the sample browser, side by side on local processes (the sweep's last
    stretch, when every run is done: one page each would leave a core idle). Written here, also
    when the stages ran on a cluster: they are the files the user opens."""
    beside = report.with_name("report.html")
    # the browser links the report it is written beside, as when it was written after it
    link = beside.name if report == beside or beside.is_file() else None
    written, _ = LocalExecutor(jobs).map(_write_page, ["report", "browser"], shared=(results, report, link))
    return written


def _record(
    plan: SweepPlan,
    runs: list[PlannedRun],
    stopped: dict[str, str],
    results: list[Path],
    report: Path,
    seconds: dict[str, float],
    cpu: dict[str, float | None],
) -> dict:
    record = {
        # which protocol produced each city's results (scoring.vocab.Protocol)
        "cities": [
            {"name": c.name, "bench": str(c.bench), "osm": c.osm, "protocol": c.protocol} for c in plan.cities
        ],
        "participants": [
            {"name": p.name, "agent": p.is_agent, "modalities": list(plan.modalities_of(p))}
            for p in plan.participants
        ],
        "runs": [
            {
                "label": r.line.label,
                "run_dir": str(r.run_dir),
                "status": r.line.status,
                "samples": r.line.total,
                "failed": r.summary.failed if r.summary else None,
                "sent": r.summary.sent if r.summary else 0,
                "seconds": round(r.line.seconds, 2),
            }
            for r in runs
        ],
        # Cells never run because the participant cannot read the modality: "not run", never 0.
        "not_run": [
            {"participant": p.name, "modality": m}
            for p in plan.participants
            for m in plan.modalities
            if m not in p.modalities
        ],
        "stopped": stopped,
        "results": [str(r) for r in results],
        "report": str(report),
        "seconds": {k: round(v, 2) for k, v in seconds.items()},
        # CPU seconds by phase (this process and the pools it waited for), by the render, the early
        # scorer and each built-in agent (their own processes), and in all; None: not measured here
        "cpu_seconds": {k: None if v is None else round(v, 2) for k, v in cpu.items()},
        "failed_samples": {
            r.line.label: r.summary.failed for r in runs if r.summary is not None and r.summary.failed
        },
    }
    write_json_atomic(plan.out / "evaluate.json", record)
    return record
