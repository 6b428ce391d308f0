"""Append-only JSONL journal of model responses (= a run's predictions.jsonl), also the cache.

Every response is appended as soon as it arrives: one JSON line, flushed and fsync'ed. Each
record carries `key`, the SHA-256 of everything that determines the request (see
`request_key`). Loading tolerates a torn last line (a process killed mid-write): the torn
bytes are ignored and cut off before the next append, so the file stays valid JSONL.

Resume / cache rule: a key with an "ok" record is never sent again; keys whose records are
all errors are sent again (and the new outcome appended).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scoring.runner.config import Redactor

log = logging.getLogger(__name__)
RECORD_VERSION = 1


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def sha256_hex(data: bytes | str) -> str:
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()


def instance_hash(instance: dict) -> str:
    return sha256_hex(canonical_json(_finite(instance)))


def request_key(
    *,
    model: str,
    kind: str,
    base_url: str,
    generation: dict,
    template: str,
    template_version: str,
    template_sha256: str,
    instance_sha256: str,
    image_sha256: str | None,
    modality: str,
    form: str,
    attempt_kind: str,
    previous_reply_sha256: str | None = None,
) -> str:
    """SHA-256 over everything that determines one request."""
    return sha256_hex(
        canonical_json(
            {
                "v": RECORD_VERSION,
                "model": model,
                "kind": kind,
                "base_url": base_url.rstrip("/"),
                "generation": generation,
                "template": template,
                "template_version": template_version,
                "template_sha256": template_sha256,
                "instance_sha256": instance_sha256,
                "image_sha256": image_sha256,
                "modality": modality,
                "form": form,
                "attempt_kind": attempt_kind,
                "previous_reply_sha256": previous_reply_sha256,
            }
        )
    )


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
        except (ValueError, UnicodeDecodeError):
            corrupt += 1
            log.warning("%s:%d: skipping corrupt journal line", path, lineno)
    if torn_at is not None:
        # A complete record may have been written without its newline only if the writer died
        # between the two; accept it if it parses (it is then completed on repair).
        tail = data[torn_at:]
        try:
            rec = json.loads(tail.decode("utf-8"))
            if isinstance(rec, dict) and "key" in rec:
                records.append(rec)
                torn_at = None
        except (ValueError, UnicodeDecodeError):
            pass
    return records, corrupt, torn_at


class Journal:
    """An append-only journal file plus an in-memory index of its records by key."""

    def __init__(
        self,
        path: str | os.PathLike,
        redactor: Redactor | None = None,
        extra_caches: Iterable[str | os.PathLike] = (),
    ):
        self.path = Path(path)
        self.redactor = redactor or Redactor()
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
            recs, _, _ = read_records(cache)
            for rec in recs:
                if rec.get("status") == "ok" and rec.get("key"):
                    self._external[rec["key"]] = rec
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "ab")
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
        line = json.dumps(record, ensure_ascii=False, allow_nan=False, separators=(",", ":")) + "\n"
        return record, line.encode("utf-8")

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
        import asyncio

        record, data = self._prepare(record)
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self._pending.append((data, record, fut))
        if not self._flushing:
            self._flushing = True
            loop.create_task(self._flush_pending())
        return await fut

    async def _flush_pending(self) -> None:
        import asyncio

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


def final_predictions(path: str | os.PathLike) -> dict[str, dict]:
    """One record per sample (instance id | form): its latest final record, ok preferred."""
    records, _, _ = read_records(path)
    best: dict[str, dict] = {}
    for rec in records:
        if not rec.get("final"):
            continue
        sid = rec.get("sample")
        prev = best.get(sid)
        if prev is None or rec.get("status") == "ok" or prev.get("status") != "ok":
            best[sid] = rec
    return best


def iter_records(path: str | os.PathLike) -> Iterator[dict]:
    yield from read_records(path)[0]
