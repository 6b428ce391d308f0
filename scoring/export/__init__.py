"""Stage: a built benchmark -> a dataset researchers load where they work.

``spatialgap export BENCH --out DIR --format hf|parquet|jsonl`` writes the layout of
scoring/formats/exported.py: one row per instance in a stable typed schema (mixed-type fields as
JSON strings), the maps as an image column, a dataset card (README.md), and the benchmark's own
manifest and maps, so ``spatialgap run --bench DIR`` runs the export like the benchmark.

- ``hf``: Parquet whose schema carries Hugging Face ``datasets`` features (the map decodes as an
  ``Image``) and a card whose YAML header declares the configs: ``datasets.load_dataset(DIR)``.
- ``parquet``: the same Parquet files without the ``datasets`` metadata (plain Arrow types).
- ``jsonl``: the same rows as JSON Lines, the map as its path inside the export.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Any

from scoring.errors import InputError, OutputError
from scoring.export.card import dataset_card
from scoring.export.tables import write_jsonl_rows, write_parquet_rows
from scoring.formats.benchmark import TASK_FILES, Benchmark
from scoring.formats.exported import DATA_DIR, EXPORT_FORMAT, MAP_URL, instance_row
from scoring.formats.records import Instance
from scoring.runner.config import ModelSpec
from scoring.runner.prompts import build_messages, with_image_detail
from scoring.support.files import sha256_file, sha256_hex, write_atomic
from scoring.vocab import Modality, Task

__all__ = ["ExportFormat", "export_benchmark"]
IMAGE_DETAIL = str(ModelSpec.__dataclass_fields__["image_detail"].default)  # run's default


class ExportFormat(StrEnum):
    """What `spatialgap export --format` writes.

    >>> [str(f) for f in ExportFormat]
    ['hf', 'parquet', 'jsonl']
    """

    HF = "hf"
    PARQUET = "parquet"
    JSONL = "jsonl"


def _rows(bench: Benchmark, task: str, *, embed_maps: bool) -> list[dict[str, Any]]:
    rows = []
    for inst in bench.of_task(task):
        rel = f"maps/{inst['id']}.png"
        png_path = bench.path / rel
        png = png_path.read_bytes() if png_path.is_file() else None
        if png is None:  # not rendered: a null cell, never a dangling path
            cell: Any = None
        else:
            cell = {"bytes": png, "path": rel} if embed_maps else rel
        row = instance_row(
            inst, map_cell=cell, sha256=sha256_hex(png) if png else None, prompts=_prompts(inst)
        )
        rows.append(row)
    return rows


def _prompts(inst: Instance) -> str:
    """The prompts column: input type/form -> the messages `run` sends (image detail included),
    for the input types a row holds everything of (the map sets' extra maps are in maps/)."""
    forms = ["edit"] if inst["task"] == Task.EDIT else ["open", "mcq"]
    out: dict[str, list[dict]] = {}
    for modality in (Modality.GEOJSON, Modality.IMAGE, Modality.TOGETHER):
        for form in forms:
            try:
                messages = build_messages(inst, modality, None if form == "edit" else form, _PLACEHOLDER_PNG)
            except ValueError:  # no mcq form (an instance without four choices)
                continue
            out[f"{modality}/{form}"] = _map_as_placeholder(with_image_detail(messages, IMAGE_DETAIL))
    return json.dumps(out, ensure_ascii=False)


_PLACEHOLDER_PNG = b"map"


def _map_as_placeholder(messages: list[dict]) -> list[dict]:
    for m in messages:
        if isinstance(m["content"], list):
            for p in m["content"]:
                if p.get("type") == "image_url":
                    p["image_url"]["url"] = MAP_URL
    return messages


def export_benchmark(
    bench_dir: str | Path, out_dir: str | Path, *, fmt: str = ExportFormat.HF, force: bool = False
) -> Path:
    """Write the benchmark at ``bench_dir`` as a dataset in ``out_dir`` (replaced atomically when
    ``force``); returns ``out_dir``. Maps not rendered yet give null image cells."""
    fmt = ExportFormat(fmt)
    bench = Benchmark.open(bench_dir, require_instances=True)
    out = Path(out_dir)
    if out.exists() and not force:
        raise OutputError(f"{out}: exists (pass --force to replace it)")
    if out.resolve() == bench.path.resolve():
        raise OutputError(f"{out}: the export cannot replace its own benchmark")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    tmp.chmod(0o777 & ~_umask())  # a folder as mkdir makes it (mkdtemp's is 0700: hidden from a team)
    try:
        _write(bench, tmp, fmt)
        if out.exists():
            shutil.rmtree(out)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write(bench: Benchmark, out: Path, fmt: ExportFormat) -> None:
    (out / DATA_DIR).mkdir()
    files: dict[str, str] = {}
    counts: dict[str, list[dict[str, Any]]] = {}
    for task in TASK_FILES:
        rows = _rows(bench, task, embed_maps=fmt is not ExportFormat.JSONL)
        if not rows:
            continue
        counts[task] = rows
        name = f"{DATA_DIR}/{task}.{'jsonl' if fmt is ExportFormat.JSONL else 'parquet'}"
        if fmt is ExportFormat.JSONL:
            write_jsonl_rows(out / name, rows)
        else:
            write_parquet_rows(out / name, rows, hf_features=fmt is ExportFormat.HF)
        files[name] = sha256_file(out / name)
    shutil.copyfile(bench.path / "manifest.json", out / "manifest.json")
    if bench.context_path.is_file():
        shutil.copyfile(bench.context_path, out / "context.geojsonl")
    if bench.maps_dir.is_dir():
        # Parquet holds the rows' maps: maps/ keeps the rest (sidecars, world files, map sets)
        in_rows = {f"{r['id']}.png" for rows in counts.values() for r in rows if r["map"]}
        kept = (
            (lambda _d, names: [n for n in names if n in in_rows]) if fmt is not ExportFormat.JSONL else None
        )
        shutil.copytree(bench.maps_dir, out / "maps", ignore=kept)
    record = {"format": EXPORT_FORMAT, "export": str(fmt), "benchmark_sha256": bench.sha256, "files": files}
    write_atomic(out / "export.json", json.dumps(record, indent=1, sort_keys=True) + "\n")
    write_atomic(out / "README.md", dataset_card(bench, counts, files, fmt=str(fmt)))


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "export",
        help="write a benchmark as a Hugging Face / Parquet / JSON Lines dataset",
        description="Write a built benchmark as a dataset: one row per instance in a stable typed schema, "
        "the maps as an image column, a dataset card. `spatialgap run --bench` accepts the export.",
    )
    p.add_argument("bench", metavar="BENCH", help="benchmark directory (spatialgap build)")
    p.add_argument("--out", required=True, help="export directory (written atomically)")
    p.add_argument(
        "--format",
        dest="fmt",
        choices=[str(f) for f in ExportFormat],
        default=str(ExportFormat.HF),
        help="hf: Parquet with datasets features + card; parquet: plain Parquet; jsonl: JSON Lines",
    )
    p.add_argument("--force", action="store_true", help="replace an existing export directory")
    p.set_defaults(func=_cli)


def _cli(args: Any) -> int:
    try:
        out = export_benchmark(args.bench, args.out, fmt=args.fmt, force=args.force)
    except ImportError as exc:  # pyarrow missing (or unusable): name the extra
        extra = "pip install 'spatialgap[export]'"
        raise InputError(f"--format {args.fmt} needs pyarrow: {extra} ({exc})") from None
    print(f"exported {args.bench} as {args.fmt} into {out}")
    return 0
