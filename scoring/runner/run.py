"""`spatialgap run`: send a benchmark to a model endpoint, robustly, concurrently, resumably.

Output directory:
    predictions.jsonl  the journal (one record per response, appended + fsync'ed on arrival)
    manifest.json      what was run, with what, when (never any secret)
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scoring
from scoring.answers import read_edit_reply
from scoring.errors import InputError, OutputError, SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.formats.mapsets import MapSet, images_sha256, read_map_set
from scoring.formats.rundir import (
    PREDICTIONS,
    RUN_MANIFEST,
    Journal,
    claim_run_dir,
    instance_hash,
    model_identity,
    now_iso,
    read_run_manifest,
    request_key,
    sample_id,
)
from scoring.runner import prompts
from scoring.runner.client import ChatClient, Outcome
from scoring.runner.cluster_limit import endpoint_limiter
from scoring.runner.config import EnvKeyProvider, KeyProvider, ModelSpec, Redactor, public_url
from scoring.runner.health import RunHealth, RunStop
from scoring.runner.progress import RunObserver, SampleBar
from scoring.runner.provenance import git_commit, versions
from scoring.support.files import sha256_hex, write_json_atomic
from scoring.support.memo import IdentityMemo
from scoring.vocab import MODALITIES, QA_FORMS, TASKS, Form, Modality, Task

log = logging.getLogger(__name__)
# A sweep's runs share one read of the benchmark: each instance is hashed once for all of them.
_instance_sha256: IdentityMemo[dict, str] = IdentityMemo(instance_hash, maxsize=2048)
# ... and each map it reads once for the runs showing it (~0.3 ms of SHA-256 a map)
_image_sha256: IdentityMemo[bytes | MapSet, str] = IdentityMemo(images_sha256, maxsize=64)


class RunStoppedError(SpatialGapError):
    """The run was stopped before its end because every further request would fail the same
    way (credentials refused, unknown model, a dead backend); the message holds the server's
    words and what to do."""

    exit_code = 3

    def __init__(self, message: str, stop: RunStop | None = None):
        super().__init__(message)
        self.stop = stop


class EndpointUnreachableError(RunStoppedError):
    """The endpoint refused/failed every connection attempt."""


class _UnreachableError(Exception):
    pass


class _StoppedError(Exception):
    pass


# ---- the edit validity hook --------------------------------------------------------------------
def edit_needs_retry(text: str | None, instance: dict | None = None, modality: str = "geojson") -> str | None:
    """Why an edit reply is unusable (-> one corrective turn), or None if it is usable.

    The scorer's own reader decides (`scoring.answers.read_edit_reply`): a reply it would score
    is never re-asked, and an edit that leaves F0 unchanged (attributes included) always is.
    Replaceable: `run_benchmark(edit_check=...)` takes any `(text, instance, modality) -> str | None`.
    The reason is shown to the model, so it never reveals whether constraints were met."""
    return read_edit_reply(text, instance, modality).retry_reason


# ---- inputs ------------------------------------------------------------------------------------
def _instances(bench: Benchmark, task: str, ids: Iterable[str] | None, limit: int | None) -> list[dict]:
    """The instances of ``task`` to send: all, or those named by ``ids`` in that order; then the
    first ``limit``."""
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
    return instances


def _forms(task: str, forms: Iterable[str] | None) -> list[Form]:
    if task == Task.QA:
        chosen = list(forms or QA_FORMS)
        bad = [f for f in chosen if f not in QA_FORMS]
        if bad:
            raise InputError(f"--form: must be {' or '.join(QA_FORMS)}, got {bad[0]!r}")
        return [Form(f) for f in chosen]
    if forms and set(forms) != {Form.EDIT}:
        raise InputError("--form: edit instances have no form (omit --form)")
    return [Form.EDIT]


def _read_maps(bench: Benchmark, instances: list[dict], modality: str) -> dict[str, bytes | MapSet | None]:
    if not Modality(modality).has_image:
        return {}
    if Modality(modality).map_set:  # several maps per instance, listed in its set file
        return {inst["id"]: read_map_set(bench.maps_dir, inst["id"], modality) for inst in instances}
    images: dict[str, bytes | MapSet | None] = {}
    missing = []
    for inst in instances:
        p = bench.maps_dir / f"{inst['id']}.png"
        try:
            images[inst["id"]] = p.read_bytes()
        except OSError:
            missing.append(p)
    if missing:
        raise InputError(f"{len(missing)} map image(s) missing for modality {modality}, first: {missing[0]}")
    return images


def _previous_manifest(out_dir: Path, spec: ModelSpec, modality: str, task: str, bench_sha: str) -> dict:
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
@dataclass
class RunSummary:
    samples: int = 0
    ok: int = 0
    failed: int = 0
    sent: int = 0  # HTTP request sequences sent in this session
    from_journal: int = 0  # attempts served from this run's own journal (resume)
    from_cache: int = 0  # attempts served from an external cache
    corrective: int = 0  # corrective edit turns (sent or served)
    failures: dict[str, int] = field(default_factory=dict)
    out_dir: str = ""
    protocol: str = "spatialgap"  # of the benchmark the run answered
    stop: dict | None = None  # why the run stopped early (kind, the server's message)

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def run_benchmark(
    bench_dir,
    spec: ModelSpec,
    modality: str,
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
    edit_check: Callable[[str | None, dict, str], str | None] | None = None,
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
    modality: str,
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
    edit_check: Callable[[str | None, dict, str], str | None] | None = None,
    map_png: Callable[[str], Awaitable[bytes | MapSet]] | None = None,
) -> RunSummary:
    """Send every (instance, form) sample of ``task`` in ``modality`` to the model of ``spec``
    and journal the replies in ``out_dir``. ``progress``: a tqdm bar (True), nothing (False), or
    a factory ``total -> RunObserver``. ``map_png``: awaits an instance's map (a sweep whose maps
    are still being drawn); default: every map is read from the benchmark first. Raises
    RunStoppedError when the endpoint refuses the run as a whole (the journal and manifest are
    kept: a re-run resumes)."""
    out_dir = Path(out_dir)
    check_edit = edit_check or edit_needs_retry
    if modality not in MODALITIES:
        raise InputError(f"--modality: must be one of {', '.join(MODALITIES)}, got {modality!r}")
    if task not in TASKS:
        raise InputError(f"--task: must be {' or '.join(TASKS)}, got {task!r}")
    forms = _forms(task, forms)

    # -- benchmark (a sweep passes the Benchmark it read once for all its runs)
    bench = bench_dir if isinstance(bench_dir, Benchmark) else Benchmark.open(bench_dir, (task,))
    instances = _instances(bench, task, ids, limit)
    if task == Task.QA and Form.MCQ in forms:
        bad = [i["id"] for i in instances if len(i.get("choices") or []) not in (2, 4)]  # 2: yes / no
        if bad:
            raise InputError(f"{bench.path}: {len(bad)} QA instance(s) without 4 choices, first: {bad[0]}")
    images = _read_maps(bench, instances, modality) if map_png is None else {}

    # -- secrets
    key_provider = key_provider if key_provider is not None else EnvKeyProvider()
    redactor = Redactor()
    samples = [(inst, form) for inst in instances for form in forms]
    health = RunHealth(len(samples), spec.max_retries, spec.concurrency)
    client = ChatClient(spec, transport, key_provider, endpoint_limiter(spec), redactor, health=health)
    client.key()  # fail now if the key is missing; registers it with the redactor

    # -- output: a directory of our own (never a benchmark's), locked while this run writes it
    lock = claim_run_dir(out_dir)
    try:
        return await _run_locked(
            bench,
            spec,
            modality,
            task,
            forms,
            out_dir,
            instances,
            images,
            client,
            redactor,
            health,
            bar_factory=progress,
            cache=cache,
            check_edit=check_edit,
            map_png=map_png,
        )
    finally:
        lock.release()


# long: a run's set-up, sweep and close under the lock; split with the run-session object (#26)
async def _run_locked(
    bench: Benchmark,
    spec: ModelSpec,
    modality: str,
    task: str,
    forms: list[Form],
    out_dir: Path,
    instances: list[dict],
    images: dict[str, bytes | MapSet | None],
    client: ChatClient,
    redactor: Redactor,
    health: RunHealth,
    *,
    bar_factory: bool | Callable[[int], RunObserver],
    cache: Iterable[str | os.PathLike],
    check_edit: Callable[[str | None, dict, str], str | None],
    map_png: Callable[[str], Awaitable[bytes | MapSet]] | None,
) -> RunSummary:
    bench_sha = bench.sha256
    progress = bar_factory
    samples = [(inst, form) for inst in instances for form in forms]
    run_manifest_path = out_dir / RUN_MANIFEST
    previous = _previous_manifest(out_dir, spec, modality, task, bench_sha)

    templates = {}
    reply_forms = sorted({prompts.reply_form_of(i, modality) for i in instances}) or ["operations"]
    for form in forms:
        for reply_form in reply_forms:
            info = prompts.template_info(task, modality, form, reply_form=reply_form)
            templates[info.name] = {"version": info.version, "sha256": info.sha256}
    session: dict[str, Any] = {"started_at": now_iso(), "ended_at": None, "pid": os.getpid()}
    manifest = {
        "tool": "spatialgap",
        "tool_version": scoring.__version__,
        "git_commit": git_commit(),
        "packages": versions(),
        "benchmark": {"path": str(bench.path.resolve()), "manifest_sha256": bench_sha},
        "benchmark_manifest_sha256": bench_sha,
        "model": spec.public_dict(),
        "endpoint_models": previous.get("endpoint_models", []),
        "modality": modality,
        "task": task,
        "protocol": bench.protocol,
        "forms": list(forms),
        "seeds": {"generation": spec.seed},
        "templates": templates,
        "started_at": previous.get("started_at") or session["started_at"],
        "ended_at": None,
        "sessions": [*previous.get("sessions", []), session],
        "status": "running",
    }
    write_json_atomic(run_manifest_path, redactor.value(manifest))

    journal = Journal(out_dir / PREDICTIONS, redactor, extra_caches=cache)
    summary = RunSummary(out_dir=str(out_dir), protocol=bench.protocol)
    summary.samples = len(samples)
    bar: RunObserver = progress(len(samples)) if callable(progress) else SampleBar(len(samples), progress)
    endpoint_models: set[str] = set(manifest["endpoint_models"])
    generation = spec.generation_params()
    base_url = public_url(spec.base_url)
    # Until the endpoint has answered once, connection failures are retried briefly and then
    # abort the whole run (an unreachable URL fails fast instead of failing every sample).
    reach = {"confirmed": False}

    async def attempt(
        inst,
        form,
        msgs,
        info,
        img_sha,
        inst_sha,
        attempt_no,
        attempt_kind,
        prev_sha,
        retry_state,
        *,
        max_connect_retries=None,
    ) -> dict:
        key = request_key(
            model=spec.model,
            kind=spec.kind,
            base_url=base_url,
            generation=generation,
            template=info.name,
            template_version=info.version,
            template_sha256=info.sha256,
            instance_sha256=inst_sha,
            image_sha256=img_sha,
            modality=modality,
            form=form,
            attempt_kind=attempt_kind,
            previous_reply_sha256=prev_sha,
        )
        hit, source = journal.lookup(key)
        if hit is not None and source == "journal":
            summary.from_journal += 1
            return hit
        base = {
            "v": 1,
            "key": key,
            "sample": sample_id(inst["id"], form),
            "instance_id": inst["id"],
            "task": task,
            "form": form,
            "modality": modality,
            "relation": inst.get("relation"),
            "attempt": attempt_no,
            "attempt_kind": attempt_kind,
            "template": info.name,
            "template_version": info.version,
            "template_sha256": info.sha256,
            "instance_sha256": inst_sha,
            "image_sha256": img_sha,
            "previous_reply_sha256": prev_sha,
            "model_name": spec.name,
            "model": spec.model,
        }
        if hit is not None:
            summary.from_cache += 1
            rec = {
                **{
                    k: hit.get(k)
                    for k in (
                        "status",
                        "text",
                        "reasoning",
                        "usage",
                        "endpoint_model",
                        "finish_reason",
                        "error",
                        "warnings",
                        "http_status",
                        "http_attempts",
                        "retries",
                        "latency_s",
                        "time",
                    )
                },
                **base,
                "cached_from": hit.get("key"),
            }
        else:
            summary.sent += 1

            def on_retry(kind: str) -> None:
                if not retry_state["retrying"]:
                    retry_state["retrying"] = True
                    bar.retry_started()

            outcome: Outcome = await client.complete(
                msgs,
                on_retry=on_retry,
                max_connect_retries=max_connect_retries,
                sample=sample_id(inst["id"], form),
                on_wait=getattr(bar, "waiting", None),
            )
            if outcome.error and outcome.error.get("kind") == "not_sent":
                return {"status": "error", "error": outcome.error, "_stopped": True}
            if outcome.status is not None:
                reach["confirmed"] = True  # the endpoint answered (whatever it said)
            elif (
                outcome.error
                and outcome.error.get("kind") == "connect"
                and max_connect_retries is not None
                and not reach["confirmed"]
            ):
                return {"status": "error", "error": outcome.error, "_abort": True}
            rec = {**base, "time": now_iso(), **outcome.to_record()}
        if rec.get("endpoint_model"):
            endpoint_models.add(rec["endpoint_model"])
        rec["final"] = True
        rec["retry_reason"] = None
        if task == Task.EDIT and attempt_kind == "initial" and rec.get("status") == "ok":
            reason = check_edit(rec.get("text"), inst, modality)
            if reason:
                rec["final"] = False
                rec["retry_reason"] = reason
        return await journal.append_async(rec)

    def digests(inst: dict, img: bytes | MapSet | None) -> tuple[str | None, str]:
        return (_image_sha256(img) if img else None, _instance_sha256(inst))

    async def process(inst: dict, form: str, probe: bool = False) -> dict | None:
        retry_state = {"retrying": False}
        try:
            img = images.get(inst["id"])
            if map_png is not None and Modality(modality).has_image:
                img = await map_png(inst["id"])
            img_sha, inst_sha = digests(inst, img)
            msgs = prompts.build_messages(inst, modality, form, img)
            reply_form = prompts.reply_form_of(inst, modality)
            info = prompts.template_info(task, modality, form, reply_form=reply_form)
            rec = await attempt(
                inst,
                form,
                msgs,
                info,
                img_sha,
                inst_sha,
                1,
                "initial",
                None,
                retry_state,
                max_connect_retries=2 if probe else None,
            )
            if rec.get("_abort") or rec.get("_stopped"):
                return rec
            if task == Task.EDIT and rec.get("status") == "ok" and not rec.get("final"):
                reason = rec.get("retry_reason") or check_edit(rec.get("text"), inst, modality)
                reason = reason or "unusable edit"
                msgs2 = prompts.corrective_messages(inst, modality, msgs, rec.get("text") or "", reason)
                summary.corrective += 1
                rec = await attempt(
                    inst,
                    form,
                    msgs2,
                    info,
                    img_sha,
                    inst_sha,
                    2,
                    "corrective",
                    sha256_hex(rec.get("text") or ""),
                    retry_state,
                )
                if rec.get("_stopped"):
                    return rec
            ok = rec.get("status") == "ok"
            if ok:
                summary.ok += 1
            else:
                summary.failed += 1
                kind = (rec.get("error") or {}).get("kind", "unknown")
                summary.failures[kind] = summary.failures.get(kind, 0) + 1
            bar.finish(ok)
            return rec
        finally:
            if retry_state["retrying"]:
                bar.retry_ended()

    status = "interrupted"
    try:
        it = iter(samples)

        async def worker() -> None:
            for inst, form in it:
                rec = await process(inst, form, probe=not reach["confirmed"])
                if rec and rec.get("_abort"):
                    raise _UnreachableError(rec["error"]["message"])
                if health.stop is not None:
                    raise _StoppedError()

        abort: str | None = None
        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(min(spec.concurrency, max(1, len(samples)))):
                    tg.create_task(worker())
        except BaseExceptionGroup as eg:
            unreachable = [e for e in eg.exceptions if isinstance(e, _UnreachableError)]
            stopped = [e for e in eg.exceptions if isinstance(e, _StoppedError)]
            if not unreachable and not stopped:
                if len(eg.exceptions) == 1:
                    raise eg.exceptions[0] from None
                raise
            abort = str(unreachable[0]) if unreachable else None
        if abort is not None:
            status = "aborted"
            raise EndpointUnreachableError(f"cannot reach {public_url(spec.url)}: {abort}")
        if health.stop is not None:
            status = "stopped"
            summary.stop = {"kind": health.stop.kind, "message": health.stop.message}
            raise RunStoppedError(
                f"{public_url(spec.url)} ({spec.model}): {health.stop.message} -- {health.stop.advice}",
                health.stop,
            )
        status = "complete" if summary.failed == 0 else "incomplete"
    finally:
        bar.close()
        journal.close()
        await client.aclose()
        tokens: dict[str, int] = {}
        for rec in journal.records:
            for k, v in (rec.get("usage") or {}).items():
                if isinstance(v, int) and not rec.get("cached_from"):
                    tokens[k] = tokens.get(k, 0) + v
        session["ended_at"] = now_iso()
        session.update(
            {
                "sent": summary.sent,
                "from_journal": summary.from_journal,
                "from_cache": summary.from_cache,
                "ok": summary.ok,
                "failed": summary.failed,
            }
        )
        if health.stop is not None:
            session["stop"] = {"kind": health.stop.kind, "message": health.stop.message}
        manifest.update(
            {
                "ended_at": session["ended_at"],
                "status": status,
                "token_totals": tokens,
                "endpoint_models": sorted(endpoint_models),
                "counts": {
                    "samples": summary.samples,
                    "ok": summary.ok,
                    "failed": summary.failed,
                    "failures": summary.failures,
                },
            }
        )
        try:
            write_json_atomic(run_manifest_path, redactor.value(manifest))
        except OutputError as exc:
            log.error("%s", exc)
    return summary
