"""A run session: one `spatialgap run` of a model over a task in a modality, from its manifest to
its last journal record, as an object holding the run's state with one method per step.

    RunPlan     what is asked (checked by `run.run_benchmark_async`)
    RunSession  start (manifest, journal) -> sweep (workers asking samples) -> close (manifest)

Each sample is asked through a `_Request`: its messages and its frozen `RequestIdentity`, from
which the journal key is derived (and the corrective turn's identity, if an edit needs one).
"""

from __future__ import annotations

import asyncio
import logging
import os
import types
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import scoring
from scoring.errors import OutputError, SpatialGapError
from scoring.formats.benchmark import Benchmark
from scoring.formats.journal import (
    RECORD_VERSION,
    REPLY_FIELDS,
    PredictionRecord,
    RequestIdentity,
    prediction_from_json,
)
from scoring.formats.maps_index import check_map, identity
from scoring.formats.mapsets import MapSet, images_sha256
from scoring.formats.records import Instance
from scoring.formats.rundir import (
    PREDICTIONS,
    RUN_MANIFEST,
    Journal,
    instance_hash,
    now_iso,
    repeat_id,
    sample_id,
)
from scoring.runner import prompts
from scoring.runner.client import ChatClient
from scoring.runner.config import ModelSpec, Redactor, public_url
from scoring.runner.health import RunHealth, RunStop
from scoring.runner.progress import RunObserver, SampleBar
from scoring.runner.provenance import git_commit, versions
from scoring.support.files import sha256_hex, write_json_atomic
from scoring.support.memo import IdentityMemo
from scoring.vocab import Form, Modality, Task

log = logging.getLogger(__name__)
# A sweep's runs share one read of the benchmark: each instance is hashed once for all of them.
_instance_sha256: IdentityMemo[Instance, str] = IdentityMemo(instance_hash, maxsize=2048)
# ... and each map it reads once for the runs showing it (~0.3 ms of SHA-256 a map)
_image_sha256: IdentityMemo[bytes | MapSet, str] = IdentityMemo(images_sha256, maxsize=64)
EditCheck = Callable[[str | None, Instance, Modality], str | None]
_WARNED_GREEDY: set[tuple[str, str]] = set()  # models told once that their samples may all agree


def warn_greedy_repeats(spec: ModelSpec) -> None:
    """Repeats at temperature 0 are allowed (a non-deterministic server still varies) but likely
    identical: said once per model and process, however many of its runs a sweep starts."""
    if spec.samples > 1 and spec.temperature == 0 and (spec.name, spec.model) not in _WARNED_GREEDY:
        _WARNED_GREEDY.add((spec.name, spec.model))
        log.warning(
            "%s: samples = %d at temperature 0: the samples may all be the same answer "
            "(set a temperature > 0 to sample the model's spread)",
            spec.name,
            spec.samples,
        )


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
    """The first requests could not connect: the run is aborted (the message says why)."""


class _StoppedError(Exception):
    """The run's health stopped it: the workers end."""


@dataclass
class RunSummary:
    """What a run did: its samples' outcomes and where its answers came from."""

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
        """The summary as a plain dict (the CLI's JSON, the plugin's report)."""
        return dict(self.__dict__)


@dataclass(frozen=True, kw_only=True)
class RunPlan:
    """What a run asks: checked inputs, read once."""

    bench: Benchmark
    spec: ModelSpec
    modality: Modality
    task: str
    forms: list[Form]
    out_dir: Path
    instances: list[Instance]
    images: dict[str, bytes | MapSet | None]
    check_edit: EditCheck
    cache: tuple[str | os.PathLike, ...] = ()
    map_png: Callable[[str], Awaitable[bytes | MapSet]] | None = None
    samples: int = 1  # times each (instance, form) is asked (the model's `samples`)
    maps_index: dict | None = None  # maps/maps.json (scoring.formats.maps_index), when written

    def asks(self) -> list[Ask]:
        """Every sample to ask, in order: instance, then form, then repeat."""
        return [Ask(i, f, k) for i in self.instances for f in self.forms for k in range(self.samples)]


@dataclass(frozen=True)
class Ask:
    """One sample to ask: an instance in a form, the `sample_index`-th time."""

    instance: Instance
    form: Form
    sample_index: int = 0

    @property
    def sample(self) -> str:
        """The sample id (instance id | form), the same for every repeat."""
        return sample_id(self.instance["id"], self.form)

    @property
    def label(self) -> str:
        """The repeat's own id (`repeat_id`): the sample id for the first."""
        return repeat_id(self.sample, self.sample_index)


@dataclass(frozen=True)
class _Request:
    """The messages of one request and its identity; `legacy` is the identity under the template
    checksum of the versions before #26, looked up when the current one is not journaled."""

    messages: list[dict]
    identity: RequestIdentity
    legacy: RequestIdentity | None
    schema: dict[str, Any] | None = None  # a structured answer's (answer_format json)

    def corrective(self, messages: list[dict], reply: str) -> _Request:
        digest = sha256_hex(reply)
        legacy = self.legacy.corrective(digest) if self.legacy else None
        return _Request(messages, self.identity.corrective(digest), legacy)


class _RetryFlag:
    """Shows a sample on the bar as retrying from its first retry until it ends."""

    def __init__(self, bar: RunObserver):
        self.bar, self.on = bar, False

    def started(self, kind: str) -> None:
        if not self.on:
            self.on = True
            self.bar.retry_started()

    def end(self) -> None:
        if self.on:
            self.bar.retry_ended()


class RunSession:
    """One run's state (its journal, manifest, summary, whether the endpoint has answered yet)
    and its steps. `run` is the whole run; the directory must be claimed by the caller."""

    def __init__(
        self,
        plan: RunPlan,
        client: ChatClient,
        redactor: Redactor,
        health: RunHealth,
        progress: bool | Callable[[int], RunObserver],
    ):
        self.plan, self.client, self.redactor, self.health = plan, client, redactor, health
        self.spec = plan.spec
        self.asks = plan.asks()
        self.summary = RunSummary(
            out_dir=str(plan.out_dir), protocol=plan.bench.protocol, samples=len(self.asks)
        )
        self.progress = progress
        self.generation = types.MappingProxyType(self.spec.generation_params())
        self.base_url = public_url(self.spec.base_url)
        # Until the endpoint has answered once, connection failures are retried briefly and then
        # abort the whole run (an unreachable URL fails fast instead of failing every sample).
        self.reach_confirmed = False
        self.status = "interrupted"
        self.endpoint_models: set[str] = set()
        self.entry: dict[str, Any] = {"started_at": now_iso(), "ended_at": None, "pid": os.getpid()}
        self.manifest: dict[str, Any] = {}
        self.journaled_templates: set[str | None] = set()

    # ---- the run ------------------------------------------------------------------------------
    async def run(self, previous: dict) -> RunSummary:
        """Start from the manifest of the run resumed (`previous`, {} for a new one), ask every
        sample, close; RunStoppedError / EndpointUnreachableError when the endpoint refuses."""
        warn_greedy_repeats(self.spec)
        self._write_start_manifest(previous)
        self.journal = Journal(self.plan.out_dir / PREDICTIONS, self.redactor, extra_caches=self.plan.cache)
        # the template checksums journaled: an earlier version's is looked up only if one is there
        self.journaled_templates = {r.get("template_sha256") for r in self.journal.records}
        n = len(self.asks)
        self.bar: RunObserver = self.progress(n) if callable(self.progress) else SampleBar(n, self.progress)
        try:
            await self._sweep()
        finally:
            self.bar.close()
            self.journal.close()
            await self.client.aclose()
            self._write_end_manifest()
        return self.summary

    async def _sweep(self) -> None:
        asks = iter(self.asks)

        async def worker() -> None:
            for ask in asks:
                await self.ask(ask, probe=not self.reach_confirmed)
                if self.health.stop is not None:
                    raise _StoppedError()

        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(min(self.spec.concurrency, max(1, len(self.asks)))):
                    tg.create_task(worker())
        except BaseExceptionGroup as eg:
            unreachable = [e for e in eg.exceptions if isinstance(e, _UnreachableError)]
            if not unreachable and not any(isinstance(e, _StoppedError) for e in eg.exceptions):
                if len(eg.exceptions) == 1:
                    raise eg.exceptions[0] from None
                raise
            if unreachable:
                self.status = "aborted"
                raise EndpointUnreachableError(
                    f"cannot reach {public_url(self.spec.url)}: {unreachable[0]}"
                ) from None
        stop = self.health.stop
        if stop is not None:
            self.status = "stopped"
            self.summary.stop = {"kind": stop.kind, "message": stop.message}
            raise RunStoppedError(
                f"{public_url(self.spec.url)} ({self.spec.model}): {stop.message} -- {stop.advice}", stop
            )
        self.status = "complete" if self.summary.failed == 0 else "incomplete"

    # ---- one sample ---------------------------------------------------------------------------
    async def ask(self, ask: Ask, probe: bool = False) -> None:
        """Ask one sample (and its corrective turn, for an unusable edit); count its outcome.
        Returns early, uncounted, when the run is stopping (the request was not sent)."""
        retrying = _RetryFlag(self.bar)
        try:
            request = await self._request(ask)
            rec = await self._attempt(ask, request, 1, retrying, max_connect_retries=2 if probe else None)
            if rec is None:
                return
            if self.plan.task == Task.EDIT and rec["status"] == "ok" and not rec["final"]:
                text = rec.get("text") or ""
                reason = rec.get("retry_reason") or self.plan.check_edit(
                    text, ask.instance, self.plan.modality
                )
                follow_up = prompts.corrective_messages(
                    ask.instance, self.plan.modality, request.messages, text, reason or "unusable edit"
                )
                self.summary.corrective += 1
                rec = await self._attempt(ask, request.corrective(follow_up, text), 2, retrying)
                if rec is None:
                    return
            self._count(rec)
        finally:
            retrying.end()

    async def _request(self, ask: Ask) -> _Request:
        plan, inst = self.plan, ask.instance
        img = plan.images.get(inst["id"])
        if plan.map_png is not None and Modality(plan.modality).has_image:
            img = await plan.map_png(inst["id"])
            named = (
                zip(img.map_ids, img.pngs, strict=True) if isinstance(img, MapSet) else [(inst["id"], img)]
            )
            for mid, png in named:
                check_map(plan.maps_index, plan.bench.maps_dir, f"{mid}.png", png)
        messages = prompts.build_messages(
            inst, plan.modality, ask.form, img, answer_format=self.spec.answer_format
        )
        schema = prompts.structured_schema(inst, ask.form) if self.spec.answer_format == "json" else None
        info = prompts.instance_template_info(inst, plan.modality, ask.form)
        identity = RequestIdentity(
            model=self.spec.model,
            kind=self.spec.kind,
            base_url=self.base_url,
            generation=self.generation,
            template=info.name,
            template_version=info.version,
            template_sha256=info.sha256,
            instance_sha256=_instance_sha256(inst),
            image_sha256=_image_sha256(img) if img else None,
            modality=plan.modality,
            form=ask.form,
            sample_index=ask.sample_index,
        )
        legacy, old = None, info.legacy_sha256
        if (
            old is not None
            and old != info.sha256
            and old in self.journaled_templates
            and not ask.sample_index
        ):
            legacy = identity.with_template_sha256(old)
        return _Request(messages, identity, legacy, schema)

    def _reuse(self, request: _Request) -> tuple[PredictionRecord | None, str | None]:
        """(an ok record answering the request, where from): this journal ("journal"), another
        run's ("cache"), or this journal under the earlier checksum ("earlier")."""
        hit, source = self.journal.lookup(request.identity.key)
        if hit is None and request.legacy is not None:
            hit, source = self.journal.lookup(request.legacy.key)
            source = "earlier" if source == "journal" else source
        return (prediction_from_json(hit) if hit is not None else None), source

    async def _attempt(
        self,
        ask: Ask,
        request: _Request,
        attempt_no: int,
        retrying: _RetryFlag,
        max_connect_retries: int | None = None,
    ) -> PredictionRecord | None:
        """The journaled record of one request: reused, or sent and appended (None: not sent,
        the run is stopping)."""
        hit, source = self._reuse(request)
        if hit is not None and source == "journal":
            self.summary.from_journal += 1
            return hit
        base = self._base(ask, request.identity, attempt_no)
        if hit is not None:  # re-keyed: a copy under this request's key, saying where it came from
            if source == "earlier":
                self.summary.from_journal += 1
            else:
                self.summary.from_cache += 1
            rec: dict[str, Any] = {**{k: hit.get(k) for k in REPLY_FIELDS}, **base, "cached_from": hit["key"]}
        else:
            sent = await self._send(ask, request, base, retrying, max_connect_retries)
            if sent is None:
                return None
            rec = sent
        return await self._finish(ask, rec)

    async def _send(
        self, ask: Ask, request: _Request, base: dict, retrying: _RetryFlag, max_connect_retries: int | None
    ) -> dict | None:
        self.summary.sent += 1
        outcome = await self.client.complete(
            request.messages,
            on_retry=retrying.started,
            max_connect_retries=max_connect_retries,
            sample=ask.label,
            on_wait=getattr(self.bar, "waiting", None),
            # the k-th repeated sample gets seed + k: a seeded server would repeat one answer
            seed_offset=ask.sample_index,
            schema=request.schema,
        )
        error = outcome.error or {}
        if error.get("kind") == "not_sent":
            return None
        if outcome.status is not None:
            self.reach_confirmed = True  # the endpoint answered (whatever it said)
        elif error.get("kind") == "connect" and max_connect_retries is not None and not self.reach_confirmed:
            raise _UnreachableError(error.get("message"))
        return {**base, "time": now_iso(), **outcome.to_record()}

    def _base(self, ask: Ask, identity: RequestIdentity, attempt_no: int) -> dict[str, Any]:
        base: dict[str, Any] = {
            "v": RECORD_VERSION,
            "sample": ask.sample,
            "instance_id": ask.instance["id"],
            "task": self.plan.task,
            "relation": ask.instance.get("relation"),
            "attempt": attempt_no,
            **identity.record_fields(),
            "model_name": self.spec.name,
            "model": self.spec.model,
        }
        if self.plan.samples > 1:
            base["sample_index"] = ask.sample_index
        return base

    async def _finish(self, ask: Ask, rec: dict[str, Any]) -> PredictionRecord:
        """Mark the record final (or not: an unusable first edit) and journal it."""
        if rec.get("endpoint_model"):
            self.endpoint_models.add(rec["endpoint_model"])
        rec["final"], rec["retry_reason"] = True, None
        if self.plan.task == Task.EDIT and rec.get("attempt_kind") == "initial" and rec.get("status") == "ok":
            reason = self.plan.check_edit(rec.get("text"), ask.instance, self.plan.modality)
            if reason:
                rec["final"], rec["retry_reason"] = False, reason
        return prediction_from_json(await self.journal.append_async(rec))

    def _count(self, rec: PredictionRecord) -> None:
        ok = rec.get("status") == "ok"
        if ok:
            self.summary.ok += 1
        else:
            self.summary.failed += 1
            error = rec.get("error")
            kind = error.get("kind", "unknown") if isinstance(error, dict) else "unknown"
            self.summary.failures[kind] = self.summary.failures.get(kind, 0) + 1
        self.bar.finish(ok)

    # ---- the manifest -------------------------------------------------------------------------
    def _templates(self) -> dict[str, dict[str, Any]]:
        """The templates the run asks with: version and checksum (an open question's template, one
        checksum per answer category asked)."""
        plan, out = self.plan, dict[str, dict[str, Any]]()
        for form in plan.forms:
            for inst in plan.instances:
                info = prompts.instance_template_info(inst, plan.modality, form)
                entry = out.setdefault(info.name, {"version": info.version})
                if form == Form.OPEN:
                    category = prompts.answer_category(inst.get("answer_type"))
                    entry.setdefault("sha256_by_category", {})[category] = info.sha256
                else:
                    entry["sha256"] = info.sha256
        if not out:  # no instances: the run still names its templates
            for form in plan.forms:
                info = prompts.template_info(plan.task, plan.modality, form)
                out[info.name] = {"version": info.version, "sha256": info.sha256}
        return out

    def _write_start_manifest(self, previous: dict) -> None:
        plan, bench_sha = self.plan, self.plan.bench.sha256
        self.endpoint_models.update(previous.get("endpoint_models", []))
        self.manifest = {
            "tool": "spatialgap",
            "tool_version": scoring.__version__,
            "git_commit": git_commit(),
            "packages": versions(),
            "benchmark": {"path": str(plan.bench.path.resolve()), "manifest_sha256": bench_sha},
            "benchmark_manifest_sha256": bench_sha,
            # the maps' digest, renderer and matplotlib (None: no maps sent, or no index yet)
            "maps": identity(plan.maps_index),
            "model": self.spec.public_dict(),
            "endpoint_models": previous.get("endpoint_models", []),
            "modality": plan.modality,
            "task": plan.task,
            "protocol": plan.bench.protocol,
            "forms": list(plan.forms),
            "seeds": {"generation": self.spec.seed},
            "templates": self._templates(),
            "started_at": previous.get("started_at") or self.entry["started_at"],
            "ended_at": None,
            "sessions": [*previous.get("sessions", []), self.entry],
            "status": "running",
        }
        if plan.samples > 1:
            self.manifest["samples"] = plan.samples
        write_json_atomic(plan.out_dir / RUN_MANIFEST, self.redactor.value(self.manifest))

    def _write_end_manifest(self) -> None:
        s, tokens = self.summary, dict[str, int]()
        for rec in self.journal.records:
            for k, v in (rec.get("usage") or {}).items():
                if isinstance(v, int) and not rec.get("cached_from"):
                    tokens[k] = tokens.get(k, 0) + v
        self.entry["ended_at"] = now_iso()
        self.entry.update(
            {
                "sent": s.sent,
                "from_journal": s.from_journal,
                "from_cache": s.from_cache,
                "ok": s.ok,
                "failed": s.failed,
            }
        )
        if self.health.stop is not None:
            self.entry["stop"] = {"kind": self.health.stop.kind, "message": self.health.stop.message}
        self.manifest.update(
            {
                "ended_at": self.entry["ended_at"],
                "status": self.status,
                "token_totals": tokens,
                "endpoint_models": sorted(self.endpoint_models),
                "counts": {"samples": s.samples, "ok": s.ok, "failed": s.failed, "failures": s.failures},
            }
        )
        try:
            write_json_atomic(self.plan.out_dir / RUN_MANIFEST, self.redactor.value(self.manifest))
        except OutputError as exc:
            log.error("%s", exc)
