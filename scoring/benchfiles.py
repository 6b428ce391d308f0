"""Reading a benchmark directory written by `spatialgap build` — the one reader every later stage
(render, run, score, the QGIS plugin) uses, so they agree on what a valid benchmark is.

    <bench>/manifest.json   build record (CRS, counts, SHA-256 of every file)
    <bench>/qa.jsonl        one QA instance per line
    <bench>/edit.jsonl      one editing instance per line
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scoring.errors import InputError

TASK_FILES = {"qa": "qa.jsonl", "edit": "edit.jsonl"}


def read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, value) of each non-blank line; InputError naming the line on bad JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield n, json.loads(line)
                except ValueError as exc:
                    raise InputError(f"{path}:{n}: invalid JSON ({getattr(exc, 'msg', exc)})") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None


def read_json(path: Path) -> Any:
    """A JSON file's value; InputError naming the file when it is unreadable or not JSON."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError:
        raise InputError(f"{path}: not valid JSON") from None


def load_manifest(bench_dir: str | Path) -> tuple[dict, str]:
    """(manifest, SHA-256 of its bytes: the benchmark's identity recorded by runs)."""
    bench = Path(bench_dir)
    if not bench.is_dir():
        raise InputError(f"benchmark directory not found: {bench}")
    mpath = bench / "manifest.json"
    if not mpath.is_file():
        raise InputError(f"{bench}: not a benchmark directory (no manifest.json)")
    raw = mpath.read_bytes()
    try:
        manifest = json.loads(raw)
    except ValueError:
        raise InputError(f"{mpath}: not valid JSON") from None
    if not isinstance(manifest, dict):
        raise InputError(f"{mpath}: not a benchmark manifest (expected a JSON object)")
    return manifest, hashlib.sha256(raw).hexdigest()


def iter_instances(bench_dir: str | Path, tasks: Iterable[str] = tuple(TASK_FILES)) -> Iterator[dict]:
    """Instances of the given tasks in file order. A task file that is absent yields nothing; an
    instance without a string id or a scene, or a repeated id, is an InputError naming the line."""
    bench = Path(bench_dir)
    seen: set[str] = set()
    for task in tasks:
        path = bench / TASK_FILES[task]
        if not path.is_file():
            continue
        for n, inst in read_jsonl(path):
            if not isinstance(inst, dict) or not isinstance(inst.get("id"), str) or "scene" not in inst:
                raise InputError(f"{path}:{n}: not an instance (needs a string id and a scene)")
            if inst["id"] in seen:
                raise InputError(f"{path}:{n}: duplicate instance id {inst['id']}")
            seen.add(inst["id"])
            yield inst
