"""`spatialgap run`: send a benchmark to a model endpoint, robustly, concurrently, resumably.

Output directory:
    predictions.jsonl  the journal (one record per response, appended + fsync'ed on arrival)
    manifest.json      what was run, with what, when (never any secret)
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any

from scoring.answers import read_edit_reply
from scoring.errors import InputError
from scoring.formats.benchmark import Benchmark
from scoring.formats.maps_index import check_map, read_index
from scoring.formats.mapsets import MapSet, read_map_set
from scoring.formats.records import Instance
from scoring.formats.rundir import check_cache, claim_run_dir, model_identity, read_run_manifest
from scoring.runner.client import ChatClient
from scoring.runner.cluster_limit import endpoint_limiter
from scoring.runner.config import EnvKeyProvider, KeyProvider, ModelSpec, Redactor
from scoring.runner.health import RunHealth
from scoring.runner.progress import RunObserver
from scoring.runner.session import (  # the run's errors and summary are the session's, named here too
    EndpointUnreachableError,
    RunPlan,
    RunSession,
    RunStoppedError,
    RunSummary,
)
from scoring.vocab import MODALITIES, QA_FORMS, TASKS, Form, Modality, Task

__all__ = [
    "EndpointUnreachableError",
    "RunStoppedError",
    "RunSummary",
    "run_benchmark",
    "run_benchmark_async",
]


# ---- the edit validity hook --------------------------------------------------------------------
def edit_needs_retry(
    text: str | None, instance: Instance | None = None, modality: Modality = Modality.GEOJSON
) -> str | None:
    """Why an edit reply is unusable (-> one corrective turn), or None if it is usable.

    The scorer's own reader decides (`scoring.answers.read_edit_reply`): a reply it would score
    is never re-asked, and an edit that leaves F0 unchanged (attributes included) always is.
    Replaceable: `run_benchmark(edit_check=...)` takes any `(text, instance, modality) -> str | None`.
    The reason is shown to the model, so it never reveals whether constraints were met."""
    return read_edit_reply(text, instance, modality).retry_reason


# ---- inputs ------------------------------------------------------------------------------------
def _instances(
    bench: Benchmark, task: str, ids: Iterable[str] | None, limit: int | None, forms: list[Form]
) -> list[Instance]:
    """The instances of ``task`` to send: all, or those named by ``ids`` in that order; then the
    first ``limit``. InputError when a choice question has no 4 (or 2, yes / no) choices."""
    path = bench.task_file(task)
    if not path.is_file():
        raise InputError(f"{path}: no {task} instances file in the benchmark directory")
    instances = [i for i in bench.of_task(task) if i.get("task", task) == task]
    if ids:
        by_id = {i["id"]: i for i in instances}
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise InputError(f"--ids: {len(missing)} unknown instance id(s), first: {missing[0]}")
        instances = [by_id[i] for i in wanted]
    if limit is not None:
        if limit < 0:
            raise InputError("--limit: must be >= 0")
        instances = instances[:limit]
    if task == Task.QA and Form.MCQ in forms:
        # 4 options; 3 for O06, 2 for a yes / no question (the `option-count` deviation)
        bad = [i["id"] for i in instances if len(i.get("choices") or []) not in (2, 3, 4)]
        if bad:
            raise InputError(f"{bench.path}: {len(bad)} QA instance(s) without 2-4 choices, first: {bad[0]}")
    return instances


def _forms(task: str, forms: Iterable[str] | None, modality: Modality) -> list[Form]:
    """The forms asked; InputError for an unknown modality, task or form."""
    if modality not in MODALITIES:
        raise InputError(f"--modality: must be one of {', '.join(MODALITIES)}, got {modality!r}")
    if task not in TASKS:
        raise InputError(f"--task: must be {' or '.join(TASKS)}, got {task!r}")
    if task == Task.QA:
        chosen = list(forms or QA_FORMS)
        bad = [f for f in chosen if f not in QA_FORMS]
        if bad:
            raise InputError(f"--form: must be {' or '.join(QA_FORMS)}, got {bad[0]!r}")
        return [Form(f) for f in chosen]
    if forms and set(forms) != {Form.EDIT}:
        raise InputError("--form: edit instances have no form (omit --form)")
    return [Form.EDIT]


def _read_maps(
    bench: Benchmark, instances: list[Instance], modality: Modality, index: dict | None = None
) -> dict[str, bytes | MapSet | None]:
    if not Modality(modality).has_image:
        return {}
    if Modality(modality).map_set:  # several maps per instance, listed in its set file
        sets = {inst["id"]: read_map_set(bench.maps_dir, inst["id"], modality) for inst in instances}
        for s in sets.values():
            for mid, png in zip(s.map_ids, s.pngs, strict=True):
                check_map(index, bench.maps_dir, f"{mid}.png", png)
        return dict(sets)
    images: dict[str, bytes | MapSet | None] = {}
    missing = []
    for inst in instances:
        p = bench.maps_dir / f"{inst['id']}.png"
        try:
            images[inst["id"]] = png = p.read_bytes()
        except OSError:
            missing.append(p)
            continue
        check_map(index, bench.maps_dir, p.name, png)  # before any request: the maps are the run's
    if missing:
        raise InputError(f"{len(missing)} map image(s) missing for modality {modality}, first: {missing[0]}")
    return images


def _previous_manifest(out_dir: Path, spec: ModelSpec, modality: Modality, task: str, bench_sha: str) -> dict:
    """The manifest of the run being resumed in ``out_dir`` ({} for a new run); InputError when
    it is another model's, modality's, task's or benchmark's run."""
    previous = read_run_manifest(out_dir) or {}
    for field_name, old, now_value in (
        ("model", model_identity(previous.get("model")), model_identity(spec.public_dict())),
        ("modality", previous.get("modality"), modality),
        ("task", previous.get("task"), task),
        ("benchmark_manifest_sha256", previous.get("benchmark_manifest_sha256"), bench_sha),
    ):
        if previous.get(field_name) is not None and old != now_value:
            raise InputError(f"{out_dir}: holds a run with a different {field_name}; use a new --out")
    return previous


# ---- the run -----------------------------------------------------------------------------------
def run_benchmark(
    bench_dir,
    spec: ModelSpec,
    modality: Modality | str,  # the runner's entry: CLI, evaluate and plugin values, read once below
    task: str,
    forms: Iterable[str] | None,
    out_dir,
    transport: Any = None,
    key_provider: KeyProvider | None = None,
    progress: bool | Callable[[int], RunObserver] = True,
    *,
    limit: int | None = None,
    ids: Iterable[str] | None = None,
    cache: Iterable[str | os.PathLike] = (),
    edit_check: Callable[[str | None, Instance, Modality], str | None] | None = None,
) -> RunSummary:
    """Blocking entry point (runs its own event loop). See `run_benchmark_async`."""
    return asyncio.run(
        run_benchmark_async(
            bench_dir,
            spec,
            modality,
            task,
            forms,
            out_dir,
            transport,
            key_provider,
            progress,
            limit=limit,
            ids=ids,
            cache=cache,
            edit_check=edit_check,
        )
    )


async def run_benchmark_async(
    bench_dir,
    spec: ModelSpec,
    modality: Modality | str,  # the runner's entry: CLI, evaluate and plugin values, read once below
    task: str,
    forms: Iterable[str] | None,
    out_dir,
    transport: Any = None,
    key_provider: KeyProvider | None = None,
    progress: bool | Callable[[int], RunObserver] = True,
    *,
    limit: int | None = None,
    ids: Iterable[str] | None = None,
    cache: Iterable[str | os.PathLike] = (),
    edit_check: Callable[[str | None, Instance, Modality], str | None] | None = None,
    map_png: Callable[[str], Awaitable[bytes | MapSet]] | None = None,
) -> RunSummary:
    """Send every (instance, form) sample of ``task`` in ``modality`` to the model of ``spec``
    and journal the replies in ``out_dir``. ``progress``: a tqdm bar (True), nothing (False), or
    a factory ``total -> RunObserver``. ``map_png``: awaits an instance's map (a sweep whose maps
    are still being drawn); default: every map is read from the benchmark first. Raises
    RunStoppedError when the endpoint refuses the run as a whole (the journal and manifest are
    kept: a re-run resumes)."""
    out_dir = Path(out_dir)
    modality = Modality(modality)
    forms = _forms(task, forms, modality)
    # -- benchmark (a sweep passes the Benchmark it read once for all its runs)
    bench = bench_dir if isinstance(bench_dir, Benchmark) else Benchmark.open(bench_dir, (task,))
    instances = _instances(bench, task, ids, limit, forms)
    maps_index = read_index(bench.maps_dir) if modality.has_image else None
    images = _read_maps(bench, instances, modality, maps_index) if map_png is None else {}
    plan = RunPlan(
        bench=bench,
        spec=spec,
        modality=modality,
        task=task,
        forms=forms,
        out_dir=out_dir,
        instances=instances,
        images=images,
        check_edit=edit_check or edit_needs_retry,
        cache=_caches(cache),
        map_png=map_png,
        samples=spec.samples,
        maps_index=maps_index,
    )
    # -- secrets
    key_provider = key_provider if key_provider is not None else EnvKeyProvider()
    redactor = Redactor()
    health = RunHealth(len(instances) * len(forms) * spec.samples, spec.max_retries, spec.concurrency)
    client = ChatClient(spec, transport, key_provider, endpoint_limiter(spec), redactor, health=health)
    client.key()  # fail now if the key is missing; registers it with the redactor

    # -- output: a directory of our own (never a benchmark's), locked while this run writes it
    lock = claim_run_dir(out_dir)
    try:
        previous = _previous_manifest(out_dir, spec, modality, task, bench.sha256)
        return await RunSession(plan, client, redactor, health, progress).run(previous)
    finally:
        lock.release()


def _caches(cache: Iterable[str | os.PathLike]) -> tuple[str | os.PathLike, ...]:
    """The --cache journals, each checked before anything is written (a device is refused)."""
    caches = tuple(cache)
    for journal in caches:
        check_cache(journal)
    return caches
