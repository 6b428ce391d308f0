"""Exported datasets (`spatialgap export`): one row per instance in a stable, typed schema, and
the way back from rows to the very instances, so a run accepts an export as its benchmark.

    <export>/README.md           dataset card (Hugging Face YAML header: license, configs, features)
    <export>/manifest.json       the benchmark's manifest, byte for byte (its SHA-256 is the
                                 identity runs record, so an export scores like its benchmark)
    <export>/data/qa.parquet     one row per instance (or data/qa.jsonl with --format jsonl)
    <export>/data/edit.parquet
    <export>/context.geojsonl    the city's OSM context, as built
    <export>/maps/               the benchmark's maps with their sidecars, world files and map sets
                                 (pixel edits are scored through them)

The answer comes typed (``answer_number``, ``answer_text``, ``answer_list``: the one its type
fills) and as JSON (``answer_json``); other fields whose JSON type varies from row to row (the
scene's ``coordinates``, ``facts[].value``) are JSON strings, so every column has one type in
every file. ``prompts`` holds the very messages `spatialgap run` sends, per input type and form
(image parts name the row's map as ``MAP_URL``). ``instance`` holds the whole instance as JSON
and is what a run reads. In Parquet the maps are stored once, in the ``map`` column: maps/ keeps
their sidecars, world files and map sets, and a run restores the PNGs there on first use.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scoring.errors import InputError, OutputError
from scoring.formats.records import Instance
from scoring.support.files import read_jsonl, write_atomic
from scoring.vocab import Task

EXPORT_FORMAT = "spatialgap-export/2"  # 2: typed answers, prompts, maps once
# what an image part's url says in the prompts column: the row's map, as a data URL
MAP_URL = "{map}"
DATA_DIR = "data"
# column -> (Arrow type name, description); the order is the files' column order
COLUMNS: dict[str, tuple[str, str]] = {
    "id": ("string", "instance id: <city>-<task>-<relation>-<nnn>"),
    "city": ("string", "city the instance was built from"),
    "task": ("string", "qa or edit"),
    "relation": ("string", "relation code of the catalogue (M01 ... T11)"),
    "family": ("string", "topology, direction, metric or ordering"),
    "text": ("string", "the question (qa) or the editing instruction (edit)"),
    "answer_type": ("string", "qa: how the answer is read (distance, choice, direction8, ...)"),
    "answer_number": ("double", "qa: the oracle answer when it is a number; null otherwise"),
    "answer_text": (
        "string",
        "qa: the oracle answer when it is text (a letter, an id, a direction); null otherwise",
    ),
    "answer_list": ("list<string>", "qa: the oracle answer when it is a list (an ordering); empty otherwise"),
    "answer_json": ("string", "qa: the oracle answer as JSON, whatever its type; null for edit"),
    "unit": ("string", "qa: unit of a numeric answer (m, m2, deg); null otherwise"),
    "tolerance": ("double", "qa: absolute tolerance of a numeric answer; null otherwise"),
    "choices": ("list<string>", "qa: the four options of the mcq form (empty for edit)"),
    "correct_choice": ("string", "qa: letter of the correct option; null for edit and unanswerable variants"),
    "target": ("string", "edit: the feature to edit (F0); null for qa"),
    "allowed_operations": ("list<string>", "edit: operations the reply may use (empty for qa)"),
    "scene": ("string", "the scene as GeoJSON (task CRS, metres), a JSON string"),
    "facts": ("string", "the oracle's facts as a JSON list (values of mixed types)"),
    "constraints": ("string", "edit: the constraints to satisfy as a JSON list; [] for qa"),
    "answerable": ("string", "per input type, whether the instance is answerable (JSON object)"),
    "unanswerable": (
        "string",
        "a variant built unanswerable: kind, reason, sibling, re-check facts (JSON object); null otherwise",
    ),
    "prompts": (
        "string",
        "the messages `spatialgap run` sends, as a JSON object: input type/form (geojson/open, "
        f"image/mcq, together/edit, ...) -> OpenAI chat messages; an image part's url {MAP_URL!r} is "
        "the map column's PNG as a data URL",
    ),
    "instance": ("string", "the whole instance as JSON: what runs and scorers read"),
    "map": ("image", "the annotated 1536x1536 map (PNG): struct<bytes, path> in Parquet, a path in JSONL"),
    "map_sha256": ("string", "SHA-256 of the map's PNG bytes"),
}


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, ensure_ascii=False)


def canonical_instance(instance: Instance) -> str:
    """The instance as compact JSON in the builder's key order: prompts show the scene's GeoJSON
    in that order, so a run from an export sends what a run from the benchmark sends."""
    return json.dumps(instance, ensure_ascii=False, separators=(",", ":"))


def instance_row(instance: Instance, *, map_cell: Any, sha256: str | None, prompts: str) -> dict:
    """One row of the export schema; ``map_cell`` is {"bytes", "path"} (Parquet), the map's path
    inside the export (JSONL), or None when the map is not rendered; ``prompts`` the JSON of the
    prompts column (made by scoring.export, which may read the runner's prompts)."""
    qa = instance.get("task") == Task.QA
    tolerance = instance.get("tolerance")
    answer = instance.get("answer") if qa else None
    return {
        "id": instance["id"],
        "city": instance.get("city"),
        "task": instance.get("task"),
        "relation": instance.get("relation"),
        "family": instance.get("family"),
        "text": instance.get("question") if qa else instance.get("instruction"),
        "answer_type": instance.get("answer_type") if qa else None,
        "answer_number": float(answer)
        if isinstance(answer, (int, float)) and not isinstance(answer, bool)
        else None,
        "answer_text": answer if isinstance(answer, str) else None,
        "answer_list": [str(a) for a in answer] if isinstance(answer, list) else [],
        "answer_json": _json(answer) if qa else None,
        "unit": instance.get("unit") if qa else None,
        "tolerance": float(tolerance) if qa and tolerance is not None else None,
        "choices": [str(c) for c in instance.get("choices") or []],
        "correct_choice": instance.get("correct_choice") if qa else None,
        "target": None if qa else instance.get("target"),
        "allowed_operations": [str(o) for o in instance.get("allowed_operations") or []],
        "scene": _json(instance.get("scene")),
        "facts": _json(instance.get("facts") or []),
        "constraints": _json(instance.get("constraints") or []),
        "answerable": _json(instance.get("answerable") or {}),
        "unanswerable": _json(instance.get("unanswerable")),
        "prompts": prompts,
        "instance": canonical_instance(instance),
        "map": map_cell,
        "map_sha256": sha256,
    }


def exported_file(bench: Path, task: str) -> Path | None:
    """The data file of ``task`` in an export directory, if there is one."""
    for ext in ("parquet", "jsonl"):
        path = bench / DATA_DIR / f"{Task(task)}.{ext}"
        if path.is_file():
            return path
    return None


def iter_exported(path: Path) -> Iterator[tuple[int, dict]]:
    """(row number from 1, instance) of an exported data file, decoded from its ``instance``
    column; an InputError naming the file and row for a row that is not one."""
    if path.suffix == ".jsonl":
        texts: Iterator[tuple[int, Any]] = ((n, r.get("instance")) for n, r in _rows_jsonl(path))
    else:
        texts = enumerate(_column_parquet(path, "instance"), start=1)
    for n, text in texts:
        try:
            instance = json.loads(text)
        except (TypeError, ValueError):
            raise InputError(f"{path}: row {n}: the instance column is not JSON") from None
        yield n, instance


def restore_maps(path: Path, ids: Iterable[str]) -> None:
    """Write the PNGs a Parquet export keeps in its map column alone into maps/ where missing, so
    runs, renders and the browser read them as they read a benchmark's (once per export)."""
    maps = path / "maps"
    missing = {i for i in ids if not (maps / f"{i}.png").is_file()}
    files = [f for f in (exported_file(path, t) for t in Task) if f is not None and f.suffix == ".parquet"]
    if not missing or not files:
        return
    import pyarrow.parquet as pq

    for f in files:
        for row in pq.read_table(f, columns=["id", "map"]).to_pylist():
            cell = row["map"]
            if row["id"] in missing and cell and cell.get("bytes"):
                try:
                    maps.mkdir(exist_ok=True)
                    write_atomic(maps / f"{row['id']}.png", cell["bytes"])
                except (OSError, OutputError):  # a read-only export: a map run then names the map
                    return


def _rows_jsonl(path: Path) -> Iterator[tuple[int, dict]]:
    for n, row in read_jsonl(path):
        if not isinstance(row, dict):
            raise InputError(f"{path}:{n}: not an exported row (expected a JSON object)")
        yield n, row


def _column_parquet(path: Path, column: str) -> list[Any]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(f"{path}: reading Parquet needs pyarrow: pip install 'spatialgap[export]'") from None
    try:
        return pq.read_table(path, columns=[column]).column(column).to_pylist()
    except (OSError, KeyError, ValueError) as exc:  # pyarrow's errors derive from these
        first = (str(exc).strip().splitlines() or ["unreadable"])[0]
        raise InputError(f"{path}: not an exported Parquet file ({first})") from None
