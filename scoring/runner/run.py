"""`spatialgap run`: send a benchmark to a model endpoint, robustly, concurrently, resumably.

Output directory:
    predictions.jsonl  the journal (one record per response, appended + fsync'ed on arrival)
    manifest.json      what was run, with what, when (never any secret)
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
import os
import platform
import re
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import scoring
from scoring.benchfiles import TASK_FILES, iter_instances, load_manifest
from scoring.errors import InputError, OutputError, SpatialGapError
from scoring.runner import prompts
from scoring.runner.client import AdaptiveLimiter, ChatClient, Outcome
from scoring.runner.config import EnvKeyProvider, KeyProvider, ModelSpec, Redactor, public_url
from scoring.runner.journal import Journal, instance_hash, request_key, sample_id, sha256_hex

log = logging.getLogger(__name__)


class EndpointUnreachable(SpatialGapError):
    """The endpoint refused/failed every connection attempt."""


class _Unreachable(Exception):
    pass


# ---- the edit validity hook --------------------------------------------------------------------
_OPS = ("translate", "rotate", "scale", "set_attribute")


def extract_json_object(text: str) -> Any:
    """The JSON value of a reply: whole text, a ```json fence, or the outermost {...}."""
    if not isinstance(text, str):
        return None
    candidates = [text.strip()]
    candidates += re.findall(r"```(?:json|JSON)?\s*\n?(.*?)```", text, flags=re.S)
    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        candidates.append(text[i : j + 1])
    for c in candidates:
        try:
            return json.loads(c)
        except (ValueError, RecursionError):
            continue
    return None


def _num(v: Any, default: float) -> float:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else default


def edit_needs_retry(text: str | None) -> str | None:
    """Why an edit reply is unusable (-> one corrective turn), or None if it is usable.

    Replaceable: `run_benchmark(edit_check=...)` takes any `(text) -> str | None`. The reason
    is shown to the model, so it must never reveal whether constraints were met."""
    data = extract_json_object(text or "")
    if not isinstance(data, dict) or not isinstance(data.get("operations"), list):
        return 'the reply is not a JSON object with an "operations" list'
    ops = data["operations"]
    for op in ops:
        if not isinstance(op, dict) or op.get("op") not in _OPS:
            return f'every operation must be an object whose "op" is one of {", ".join(_OPS)}'
    for op in ops:
        kind = op["op"]
        if kind == "translate" and (_num(op.get("dx"), 0) != 0 or _num(op.get("dy"), 0) != 0):
            return None
        if kind == "rotate" and _num(op.get("degrees_clockwise"), 0) % 360 != 0:
            return None
        if kind == "scale" and _num(op.get("factor"), 1) != 1:
            return None
        if kind == "set_attribute":
            return None
    return "the edit does nothing (no translation, rotation, scaling or attribute change)"


# ---- inputs ------------------------------------------------------------------------------------
def load_instances(bench_dir: Path, task: str) -> list[dict]:
    path = bench_dir / TASK_FILES[task]
    if not path.is_file():
        raise InputError(f"{path}: no {task} instances file in the benchmark directory")
    return [inst for inst in iter_instances(bench_dir, (task,)) if inst.get("task", task) == task]


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def _git_commit() -> str | None:
    try:
        r = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(scoring.__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return r.stdout.strip() or None if r.returncode == 0 else None
    except (OSError, subprocess.SubprocessError):
        return None


def _versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in ("httpx", "jinja2", "tqdm", "numpy", "shapely", "pyproj"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return out


def _write_json_atomic(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2, ensure_ascii=False, allow_nan=False)
        fh.write("\n")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


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

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.done = self.failed = self.retrying = 0
        self._bar = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="sample", dynamic_ncols=True, file=sys.stderr)
            self._refresh()

    def _refresh(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix(done=self.done, failed=self.failed, retrying=self.retrying, refresh=False)

    def finish(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        if self._bar is not None:
            self._bar.update(1)
        self._refresh()

    def retry_started(self) -> None:
        self.retrying += 1
        self._refresh()

    def retry_ended(self) -> None:
        self.retrying -= 1
        self._refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


def run_benchmark(
    bench_dir,
    spec: ModelSpec,
    modality: str,
    task: str,
    forms: Iterable[str] | None,
    out_dir,
    transport: Any = None,
    key_provider: KeyProvider | None = None,
    progress: bool = True,
    *,
    limit: int | None = None,
    ids: Iterable[str] | None = None,
    cache: Iterable[str | os.PathLike] = (),
    edit_check: Callable[[str | None], str | None] | None = None,
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
    progress: bool = True,
    *,
    limit: int | None = None,
    ids: Iterable[str] | None = None,
    cache: Iterable[str | os.PathLike] = (),
    edit_check: Callable[[str | None], str | None] | None = None,
) -> RunSummary:
    bench_dir, out_dir = Path(bench_dir), Path(out_dir)
    check_edit = edit_check or edit_needs_retry
    if modality not in prompts.MODALITIES:
        raise InputError(f"--modality: must be one of {', '.join(prompts.MODALITIES)}, got {modality!r}")
    if task not in TASK_FILES:
        raise InputError(f"--task: must be qa or edit, got {task!r}")
    if task == "qa":
        forms = list(forms or prompts.QA_FORMS)
        bad = [f for f in forms if f not in prompts.QA_FORMS]
        if bad:
            raise InputError(f"--form: must be open or mcq, got {bad[0]!r}")
    else:
        if forms and set(forms) != {"edit"}:
            raise InputError("--form: edit instances have no form (omit --form)")
        forms = ["edit"]

    # -- benchmark
    _, bench_sha = load_manifest(bench_dir)
    instances = load_instances(bench_dir, task)
    if ids:
        wanted = list(dict.fromkeys(ids))
        by_id = {i["id"]: i for i in instances}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            raise InputError(f"--ids: {len(missing)} unknown instance id(s), first: {missing[0]}")
        instances = [by_id[i] for i in wanted]
    if limit is not None:
        if limit < 0:
            raise InputError("--limit: must be >= 0")
        instances = instances[:limit]
    if task == "qa" and "mcq" in forms:
        bad = [i["id"] for i in instances if len(i.get("choices") or []) != 4]
        if bad:
            raise InputError(f"{bench_dir}: {len(bad)} QA instance(s) without 4 choices, first: {bad[0]}")
    images: dict[str, bytes | None] = {}
    if modality in ("image", "together"):
        missing = []
        for inst in instances:
            p = bench_dir / "maps" / f"{inst['id']}.png"
            try:
                images[inst["id"]] = p.read_bytes()
            except OSError:
                missing.append(p)
        if missing:
            raise InputError(
                f"{len(missing)} map image(s) missing for modality {modality}, first: {missing[0]}"
            )

    # -- secrets
    key_provider = key_provider if key_provider is not None else EnvKeyProvider()
    redactor = Redactor()
    client = ChatClient(spec, transport, key_provider, AdaptiveLimiter(spec.concurrency), redactor)
    client.key()  # fail now if the key is missing; registers it with the redactor

    # -- output
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot create output directory ({exc.strerror})") from None
    run_manifest_path = out_dir / "manifest.json"
    previous: dict = {}
    if run_manifest_path.is_file():
        try:
            previous = json.loads(run_manifest_path.read_text(encoding="utf-8"))
        except ValueError:
            previous = {}
        for field_name, now_value in (
            ("model", spec.public_dict()),
            ("modality", modality),
            ("task", task),
            ("benchmark_manifest_sha256", bench_sha),
        ):
            old = previous.get(field_name)
            if old is not None and field_name == "model":
                old = {k: old.get(k) for k in ("kind", "base_url", "model")}
                now_value = {k: now_value.get(k) for k in ("kind", "base_url", "model")}
            if old is not None and old != now_value:
                raise InputError(f"{out_dir}: holds a run with a different {field_name}; use a new --out")

    templates = {}
    for form in forms:
        info = prompts.template_info(task, modality, form)
        templates[info.name] = {"version": info.version, "sha256": info.sha256}
    session = {"started_at": _now(), "ended_at": None, "pid": os.getpid()}
    manifest = {
        "tool": "spatialgap",
        "tool_version": scoring.__version__,
        "git_commit": _git_commit(),
        "packages": _versions(),
        "benchmark": {"path": str(bench_dir.resolve()), "manifest_sha256": bench_sha},
        "benchmark_manifest_sha256": bench_sha,
        "model": spec.public_dict(),
        "endpoint_models": previous.get("endpoint_models", []),
        "modality": modality,
        "task": task,
        "forms": list(forms),
        "seeds": {"generation": spec.seed},
        "templates": templates,
        "started_at": previous.get("started_at") or session["started_at"],
        "ended_at": None,
        "sessions": [*previous.get("sessions", []), session],
        "status": "running",
    }
    try:
        _write_json_atomic(run_manifest_path, redactor.value(manifest))
    except OSError as exc:
        raise OutputError(f"{run_manifest_path}: cannot write ({exc.strerror})") from None

    journal = Journal(out_dir / "predictions.jsonl", redactor, extra_caches=cache)
    summary = RunSummary(out_dir=str(out_dir))
    samples = [(inst, form) for inst in instances for form in forms]
    summary.samples = len(samples)
    bar = _Progress(len(samples), progress)
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
                msgs, on_retry=on_retry, max_connect_retries=max_connect_retries
            )
            if outcome.status is not None:
                reach["confirmed"] = True  # the endpoint answered (whatever it said)
            elif (
                outcome.error
                and outcome.error.get("kind") == "connect"
                and max_connect_retries is not None
                and not reach["confirmed"]
            ):
                return {"status": "error", "error": outcome.error, "_abort": True}
            rec = {**base, "time": _now(), **outcome.to_record()}
        if rec.get("endpoint_model"):
            endpoint_models.add(rec["endpoint_model"])
        rec["final"] = True
        rec["retry_reason"] = None
        if task == "edit" and attempt_kind == "initial" and rec.get("status") == "ok":
            reason = check_edit(rec.get("text"))
            if reason:
                rec["final"] = False
                rec["retry_reason"] = reason
        return await journal.append_async(rec)

    async def process(inst: dict, form: str, probe: bool = False) -> dict | None:
        retry_state = {"retrying": False}
        try:
            img = images.get(inst["id"])
            img_sha = sha256_hex(img) if img else None
            inst_sha = instance_hash(inst)
            msgs = prompts.build_messages(inst, modality, form, img)
            info = prompts.template_info(task, modality, form)
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
            if rec.get("_abort"):
                return rec
            if task == "edit" and rec.get("status") == "ok" and not rec.get("final"):
                reason = rec.get("retry_reason") or check_edit(rec.get("text")) or "unusable edit"
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
                    raise _Unreachable(rec["error"]["message"])

        abort: str | None = None
        try:
            async with asyncio.TaskGroup() as tg:
                for _ in range(min(spec.concurrency, max(1, len(samples)))):
                    tg.create_task(worker())
        except BaseExceptionGroup as eg:
            unreachable = [e for e in eg.exceptions if isinstance(e, _Unreachable)]
            if not unreachable:
                if len(eg.exceptions) == 1:
                    raise eg.exceptions[0] from None
                raise
            abort = str(unreachable[0])
        if abort is not None:
            status = "aborted"
            raise EndpointUnreachable(f"cannot reach {public_url(spec.url)}: {abort}")
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
        session["ended_at"] = _now()
        session.update(
            {
                "sent": summary.sent,
                "from_journal": summary.from_journal,
                "from_cache": summary.from_cache,
                "ok": summary.ok,
                "failed": summary.failed,
            }
        )
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
            _write_json_atomic(run_manifest_path, redactor.value(manifest))
        except OSError as exc:
            log.error("cannot write %s: %s", run_manifest_path, exc)
    return summary
