"""A run directory: one model (or person) over one task of one benchmark in one modality.

    <run>/manifest.json      what was run, with what, when (never a secret); RUN_MANIFEST
    <run>/predictions.jsonl  the journal: one JSON record per response; PREDICTIONS

The journal is append-only and also the cache. Every response is appended as soon as it arrives
(one line, flushed and fsync'ed) with ``key``, the SHA-256 of everything that determines the
request (`scoring.formats.journal.RequestIdentity.key`). A torn last line (a process killed
mid-write) is ignored and cut off before the next append, so the file stays valid JSONL. A key
with an "ok" record is never sent again; keys whose records are all errors are sent again.

The runner, the scorer and the QGIS plugin's human baseline all read and write runs through this
module, so a person's answers and a model's are scored alike.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
import math
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from scoring.errors import InputError, OutputError, SpatialGapError
from scoring.formats.benchmark import TASK_FILES, Benchmark
from scoring.formats.journal import RECORD_VERSION, sample_index_of
from scoring.formats.records import Instance
from scoring.support.files import (
    canonical_json,
    json_line,
    open_append,
    read_json,
    refuse_non_regular,
    sha256_hex,
    write_json_atomic,
)
from scoring.support.lock import LOCK, RunDirLock, RunDirLockedError, lock_output  # noqa: F401 - re-exported
from scoring.vocab import Form, Modality, Task

log = logging.getLogger(__name__)
RUN_MANIFEST = "manifest.json"
PREDICTIONS = "predictions.jsonl"
# The model fields that make two runs the same run (the rest, e.g. concurrency, may change).
IDENTITY_KEYS = ("kind", "base_url", "model")


class Redacts(Protocol):
    """Removes secrets from a value before it is written (the runner's ``Redactor``)."""

    def value(self, v: Any) -> Any: ...


class _NoSecrets:
    def value(self, v: Any) -> Any:
        return v


def instance_hash(instance: Instance) -> str:
    try:
        text = canonical_json(instance)  # the common case: no NaN/inf, no copy of the instance
    except ValueError:
        text = canonical_json(_finite(instance))
    return sha256_hex(text)


def _finite(v: Any) -> Any:
    """Replace NaN/inf (not valid JSON) by None, recursively."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def read_records(path: str | os.PathLike) -> tuple[list[dict], int, int | None]:
    """(records, corrupt line count, byte offset where a torn tail starts or None)."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return [], 0, None
    records, corrupt = [], 0
    end = data.rfind(b"\n") + 1  # bytes after the last newline are a torn line
    torn_at = end if end < len(data) else None
    for lineno, line in enumerate(data[:end].split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line.decode("utf-8"))
            if not isinstance(rec, dict):
                raise ValueError("not an object")
            records.append(rec)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:
            # one line lost, never the journal: a resume sends that sample again
            corrupt += 1
            why = "nested too deeply" if isinstance(exc, RecursionError) else "not a JSON object"
            log.warning("%s:%d: skipping an unreadable journal line (%s)", path, lineno, why)
    if torn_at is not None:
        # A complete record may have been written without its newline only if the writer died
        # between the two; accept it if it parses (it is then completed on repair).
        tail = data[torn_at:]
        try:
            rec = json.loads(tail.decode("utf-8"))
            if isinstance(rec, dict) and "key" in rec:
                records.append(rec)
                torn_at = None
        except (ValueError, UnicodeDecodeError, RecursionError):
            pass
    return records, corrupt, torn_at


def check_cache(path: str | os.PathLike) -> None:
    """InputError unless ``path`` (another run's journal, read only) is absent or, through any
    link, a regular file: a device (/dev/zero) or a FIFO would be read without end."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(f"{path}: cannot read the cache ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"{path}: the cache is not a regular file (a device, FIFO or directory); "
            "--cache takes another run's predictions.jsonl"
        )


class Journal:
    """An append-only journal file plus an in-memory index of its records by key."""

    def __init__(
        self,
        path: str | os.PathLike,
        redactor: Redacts | None = None,
        extra_caches: Iterable[str | os.PathLike] = (),
    ):
        self.path = Path(path)
        self.redactor: Redacts = redactor or _NoSecrets()
        refuse_non_regular(self.path)  # before reading: a symlink's target is not ours to cut
        self.records, self.corrupt, torn_at = read_records(self.path)
        self._ok: dict[str, dict] = {}
        for rec in self.records:
            self._index(rec)
        self._pending: list = []
        self._flushing = False
        self._external: dict[str, dict] = {}
        for cache in extra_caches:
            if Path(cache).resolve() == self.path.resolve():
                continue
            check_cache(cache)
            recs, _, _ = read_records(cache)
            for rec in recs:
                if rec.get("status") == "ok" and rec.get("key"):
                    self._external[rec["key"]] = rec
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open_append(self.path)
        if torn_at is not None:
            log.warning(
                "%s: dropping a torn last line (%d bytes)", self.path, self.path.stat().st_size - torn_at
            )
            self._fh.truncate(torn_at)
        elif self.records and self._fh.tell() > 0:
            # Make sure the file ends with a newline (a complete record written without one).
            with open(self.path, "rb") as fh:
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    self._fh.write(b"\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def _index(self, rec: dict) -> None:
        if rec.get("status") == "ok" and rec.get("key"):
            self._ok[rec["key"]] = rec

    def lookup(self, key: str) -> tuple[dict | None, str | None]:
        """(ok record, "journal"|"cache") for `key`, or (None, None)."""
        if key in self._ok:
            return self._ok[key], "journal"
        if key in self._external:
            return self._external[key], "cache"
        return None, None

    def _prepare(self, record: dict) -> tuple[dict, bytes]:
        record = self.redactor.value(_finite(record))
        return record, json_line(record)

    def _write_durably(self, data: bytes) -> None:
        self._fh.write(data)
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def append(self, record: dict) -> dict:
        """Append one record; returns once it is written, flushed and fsync'ed."""
        record, data = self._prepare(record)
        self._write_durably(data)
        self.records.append(record)
        self._index(record)
        return record

    async def append_async(self, record: dict) -> dict:
        """As `append`, from a coroutine: records arriving while an fsync is in progress are
        written together and share the next fsync (group commit); each call returns only once
        its record is durable. Order of arrival is preserved."""
        record, data = self._prepare(record)
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._pending.append((data, record, fut))
        if not self._flushing:
            self._flushing = True
            loop.create_task(self._flush_pending())
        return await fut

    async def _flush_pending(self) -> None:
        try:
            while self._pending:
                batch, self._pending = self._pending, []
                try:
                    await asyncio.to_thread(self._write_durably, b"".join(d for d, _, _ in batch))
                except BaseException as exc:
                    for _, _, fut in batch:
                        if not fut.done():
                            fut.set_exception(exc if isinstance(exc, Exception) else OSError(str(exc)))
                    continue
                for _, rec, fut in batch:
                    self.records.append(rec)
                    self._index(rec)
                    if not fut.done():
                        fut.set_result(rec)
        finally:
            self._flushing = False

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def sample_id(instance_id: str, form: str) -> str:
    return f"{instance_id}|{form}"


def repeat_id(sid: str, sample_index: int) -> str:
    """The id of one of a sample's repeats: the sample id itself for the first (index 0)."""
    return f"{sid}#{sample_index}" if sample_index else sid


def final_predictions(path: str | os.PathLike) -> dict[str, dict]:
    """One record per sample (instance id | form) and repeat (`repeat_id`): its latest final
    record, ok preferred."""
    records, _, _ = read_records(path)
    best: dict[str, dict] = {}
    for rec in records:
        if not rec.get("final"):
            continue
        sid = rec.get("sample")
        if not isinstance(sid, str):
            continue
        sid = repeat_id(sid, sample_index_of(rec))
        prev = best.get(sid)
        if prev is None or rec.get("status") == "ok" or prev.get("status") != "ok":
            best[sid] = rec
    return best


def iter_records(path: str | os.PathLike) -> Iterator[dict]:
    yield from read_records(path)[0]


# ---- the directory -----------------------------------------------------------------------------
def run_dir_name(model: str, modality: Modality, task: str) -> str:
    """A file-system-safe run directory name: ``<model>-<modality>-<task>``."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", model).strip("-") or "model"
    return f"{safe}-{modality}-{task}"


def model_identity(model: Any) -> dict[str, Any]:
    """The fields of a run manifest's ``model`` that decide whether two runs are the same run."""
    model = model if isinstance(model, dict) else {}
    return {k: model.get(k) for k in IDENTITY_KEYS}


def read_run_manifest(run_dir: Path) -> dict | None:
    """A run's manifest, or None when the directory holds none (a new run)."""
    path = Path(run_dir) / RUN_MANIFEST
    if not path.is_file():
        return None
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise InputError(f"{path}: not a run manifest (expected a JSON object)")
    return manifest


def find_run_dir(runs_root: Path, name: str, modality: Modality, task: str, identity: dict) -> Path:
    """The run directory ``name`` (or ``name-2``, ``name-3``, ...) under ``runs_root`` that holds
    a run of the same model (``identity``: kind, base_url, model) in ``modality``, so that it is
    resumed; else the first numbered name not yet used (the runner refuses to mix models)."""
    base = run_dir_name(name, modality, task)
    want = model_identity(identity)
    first_free: Path | None = None
    n_max = max([1, *(_number(p.name, base) for p in Path(runs_root).glob(f"{base}*"))])
    for n in range(1, n_max + 2):
        cand = Path(runs_root) / (base if n == 1 else f"{base}-{n}")
        try:
            old = read_run_manifest(cand)
        except InputError:
            continue  # unreadable: neither ours nor free
        if old is None:
            first_free = first_free or cand
        elif model_identity(old.get("model")) == want and old.get("modality") == modality:
            return cand
    assert first_free is not None  # n_max + 1 is never used
    return first_free


def _number(dirname: str, base: str) -> int:
    if dirname == base:
        return 1
    m = re.fullmatch(re.escape(base) + r"-(\d+)", dirname)
    return int(m.group(1)) if m else 0


def load_run(
    run_dir: Path, bench_sha: str | None = None, finals: bool = True
) -> tuple[dict, dict[str, dict]]:
    """(manifest, final predictions by sample id) of a run directory (``finals`` False: the
    checks and the manifest only, no predictions read). InputError when it is not a run
    directory, or (given ``bench_sha``) when it was run on another benchmark."""
    run_dir = Path(run_dir)
    if not (run_dir / RUN_MANIFEST).is_file() or not (run_dir / PREDICTIONS).is_file():
        raise InputError(f"{run_dir}: not a run directory (needs {RUN_MANIFEST} and {PREDICTIONS})")
    manifest = read_run_manifest(run_dir) or {}
    run_sha = manifest.get("benchmark_manifest_sha256")
    if bench_sha and run_sha and run_sha != bench_sha:
        raise InputError(
            f"{run_dir}: was run on another benchmark (manifest sha256 {run_sha[:12]}… != {bench_sha[:12]}…)"
        )
    return manifest, final_predictions(run_dir / PREDICTIONS) if finals else {}


def now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds")


def record_answer(
    bench: Benchmark,
    runs_root: Path,
    name: str,
    instance: Instance,
    text: str,
    form: str = "open",
    modality: Modality = Modality.GEOJSON,
    kind: str = "human",
) -> Path:
    """Append one answer given outside the runner (e.g. an analyst's) as a run named
    ``<kind>-<name>``, with the same layout and journal schema as a model run, so the scorer and
    the report treat it alike. Returns the run directory."""
    name = name.strip()
    if not name:
        raise SpatialGapError("a name is needed to record an answer (whose answer is it?)")
    task = Task(instance.get("task", Task.QA))
    form = Form.EDIT if task is Task.EDIT else Form(form)
    modality = Modality(modality)
    who = f"{kind}-{name}"
    run = Path(runs_root) / run_dir_name(who, modality, task)
    now = now_iso()
    manifest = read_run_manifest(run) or {
        "tool": "spatialgap",
        "kind": kind,
        "started_at": now,
        "forms": [],
        "model": {"name": who, "kind": kind, "model": who, "base_url": ""},
        "modality": modality,
        "task": task,
        "benchmark_manifest_sha256": bench.sha256,
        "benchmark": {"path": str(bench.path.resolve()), "manifest_sha256": bench.sha256},
    }
    if manifest.get("benchmark_manifest_sha256") != bench.sha256:
        raise SpatialGapError(f"{run} holds answers for another benchmark; record these under another name")
    if form not in manifest.setdefault("forms", []):
        manifest["forms"].append(form)
    manifest.update({"ended_at": now, "status": "complete"})
    run.mkdir(parents=True, exist_ok=True)
    with Journal(run / PREDICTIONS) as journal:
        journal.append(_answer_record(instance, text, form, modality, kind, who, now))
    write_json_atomic(run / RUN_MANIFEST, manifest)
    return run


def _answer_record(
    instance: Instance, text: str, form: Form, modality: Modality, kind: str, who: str, now: str
) -> dict[str, Any]:
    """The journal record of one answer given outside the runner (the schema of a model's)."""
    return {
        "v": RECORD_VERSION,
        "key": sha256_hex(f"{instance['id']}|{form}|{now}"),
        "sample": sample_id(instance["id"], form),
        "instance_id": instance["id"],
        "task": Task(instance.get("task", Task.QA)),
        "form": form,
        "modality": modality,
        "relation": instance.get("relation"),
        "attempt": 1,
        "attempt_kind": kind,
        "model_name": who,
        "model": who,
        "status": "ok",
        "text": text,
        "final": True,
        "time": now,
    }


# ---- ownership ---------------------------------------------------------------------------------
def is_run_manifest(value: Any) -> bool:
    """Whether a manifest.json is a run's (a benchmark's has no model; another tool's neither)."""
    return isinstance(value, dict) and isinstance(value.get("model"), dict) and "task" in value


def refuse_foreign_dir(out_dir: Path, *, option: str = "--out") -> None:
    """OutputError when ``out_dir`` is a directory a run must not write into: a benchmark (its
    instance files, its manifest) or one whose manifest.json is not a run's."""
    out_dir = Path(out_dir)
    held = [name for name in TASK_FILES.values() if (out_dir / name).exists()]
    if held:
        raise OutputError(
            f"{out_dir}: is a benchmark directory (it holds {held[0]}); give {option} a directory of its own"
        )
    manifest = out_dir / RUN_MANIFEST
    if manifest.is_symlink() or (manifest.exists() and not manifest.is_file()):
        raise OutputError(f"{manifest}: not a regular file; give {option} a directory of its own")
    if manifest.is_file():
        try:
            value = read_json(manifest)
        except InputError:
            value = None
        if not is_run_manifest(value):
            raise OutputError(
                f"{manifest}: is not a run manifest (a benchmark's or another tool's); "
                f"give {option} a directory of its own"
            )


def claim_run_dir(out_dir: Path, who: str = "run") -> RunDirLock:
    """Create ``out_dir`` if needed, refuse it when it is not a run's, and lock it for this
    process (RunDirLockedError names the pid of the process holding it)."""
    out_dir = Path(out_dir)
    refuse_foreign_dir(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot create output directory ({exc.strerror})") from None
    return RunDirLock(out_dir, who)
