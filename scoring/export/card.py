"""The dataset card (README.md) of an export: a Hugging Face YAML header (license, configs,
features) and what a user needs before citing a number: attribution, fields, counts, protocol
and hashes."""

from __future__ import annotations

from collections import Counter
from typing import Any

from scoring import __version__
from scoring.formats.benchmark import Benchmark
from scoring.formats.exported import COLUMNS, EXPORT_FORMAT

OSM_ATTRIBUTION = "Map data © OpenStreetMap contributors, ODbL 1.0 (https://www.openstreetmap.org/copyright)"
_YAML_DTYPE = {"string": "string", "double": "float64"}


def _yaml_features(fmt: str, configs: list[str]) -> list[str]:
    out = ["dataset_info:"]
    for config in configs:  # the same columns in every config
        out += [f"- config_name: {config}", "  features:"]
        for name, (kind, _) in COLUMNS.items():
            out.append(f"  - name: {name}")
            if kind == "image":
                out.append("    dtype: " + ("string" if fmt == "jsonl" else "image"))
            elif kind == "list<string>":
                out.append("    sequence: string")
            else:
                out.append(f"    dtype: {_YAML_DTYPE[kind]}")
    return out


def _header(bench: Benchmark, files: dict[str, str], fmt: str) -> list[str]:
    source = bench.manifest.get("source") or {}
    is_osm = str(source.get("file", "")).endswith((".osm.pbf", ".osm")) or "OpenStreetMap" in str(
        source.get("attribution", "")
    )
    lines = ["---", "license: " + ("odbl" if is_osm else "other"), f"pretty_name: Spatial Gap {bench.city}"]
    lines += ["tags:", "- geospatial", "- openstreetmap", "- spatial-reasoning", "- benchmark"]
    lines += ["task_categories:", "- visual-question-answering", "- question-answering"]
    # the default config (load_dataset(path) alone) has one split per task; each task is a
    # config of its own too, its one split named test
    lines += ["configs:", "- config_name: default", "  default: true", "  data_files:"]
    tasks = {name.split("/")[-1].split(".")[0]: name for name in files}
    for task, name in tasks.items():
        lines += [f"  - split: {task}", f"    path: {name}"]
    for task, name in tasks.items():
        lines += [f"- config_name: {task}", "  data_files:", "  - split: test", f"    path: {name}"]
    if fmt != "parquet":
        lines += _yaml_features(fmt, ["default", *tasks])
    return [*lines, "---"]


def _count_table(rows_by_task: dict[str, list[dict[str, Any]]], key: str) -> list[str]:
    tasks = list(rows_by_task)
    counts = {t: Counter(str(r[key]) for r in rows) for t, rows in rows_by_task.items()}
    values = sorted({v for c in counts.values() for v in c})
    out = [f"| {key} | " + " | ".join(tasks) + " |", "|---|" + "---:|" * len(tasks)]
    out += [f"| {v} | " + " | ".join(str(counts[t][v]) for t in tasks) + " |" for v in values]
    return out


def _unanswerable_lines(m: dict[str, Any]) -> list[str]:
    """The variants built unanswerable, counted as the manifest records them (none: no line)."""
    u = m.get("unanswerable")
    if not u:
        return []
    kinds = ", ".join(f"{k} {n}" for k, n in u["per_kind"].items())
    return [
        f"Of these, {u['qa']} QA + {u['edit']} editing instances are unanswerable variants (share "
        f"{u['share']:g}; kinds: {kinds}): the right reply is a refusal; the column `unanswerable` "
        "holds the kind, the reason and the facts to re-check it, `answer_text` is \"cannot be determined\".",
        "",
    ]


# long: the dataset card's Markdown, section after section as it reads
def dataset_card(
    bench: Benchmark, rows_by_task: dict[str, list[dict[str, Any]]], files: dict[str, str], *, fmt: str
) -> str:
    m = bench.manifest
    source = m.get("source") or {}
    attribution = source.get("attribution") or OSM_ATTRIBUTION
    crs = m.get("crs") or {}
    lines = _header(bench, files, fmt)
    lines += [
        "",
        f"# Spatial Gap benchmark: {bench.city}",
        "",
        "Questions and editing tasks on real geography, built from OpenStreetMap by "
        "Spatial Gap (the `spatialgap` package) after the GeoSpatialBench paper "
        '"Mind the Spatial Gap". Every answer is computed by an exact geometric oracle (GEOS/DE-9IM '
        f"in {crs.get('name', 'the task CRS')}, metres).",
        "",
        "## License and attribution",
        "",
        f"{attribution}. The data is a derivative database of OpenStreetMap: reuse must keep this "
        "attribution and share alike under the ODbL. The maps are produced works drawn from it.",
        "",
        "## Loading",
        "",
        "```python",
        "import datasets  # Hugging Face datasets",
        'ds = datasets.load_dataset("path/to/this/folder")  # splits: qa, edit',
        'ds["qa"][0]["map"]  # a PIL image; ds["qa"][0]["answer_text"] == "N"',
        'qa = datasets.load_dataset("path/to/this/folder", "qa", split="test")  # one task',
        "import pyarrow.parquet as pq",
        'table = pq.read_table("data/qa.parquet")',
        "```",
        "",
        "Run a model on it with the package: `spatialgap run --bench path/to/this/folder ...` reads the "
        "instances from the `instance` column and scores them as the original benchmark "
        "(same manifest, so the same benchmark SHA-256).",
        "",
        "## Fields",
        "",
        "One row per instance; the same columns in every file, one type per column. The answer is "
        "typed (`answer_number`, `answer_text` or `answer_list`, whichever its type fills) and JSON "
        "(`answer_json`); other fields whose JSON type varies (scene coordinates, fact values) are "
        "JSON strings. `prompts` holds the exact messages per input type and form.",
        "",
        "| column | type | meaning |",
        "|---|---|---|",
        *[f"| `{n}` | {t} | {d} |" for n, (t, d) in COLUMNS.items()],
        "",
        "## Counts",
        "",
        *_count_table(rows_by_task, "family"),
        "",
        *_count_table(rows_by_task, "relation"),
        "",
        *_unanswerable_lines(m),
        "## Protocol",
        "",
        f"- protocol: `{bench.protocol}` (spatialgap: the package's own choices; paper: GeoSpatialBench's)",
        f"- seed: {m.get('seed')}, requested per relation: {m.get('requested')}",
        f"- task CRS: {crs.get('name')} (EPSG:{crs.get('epsg')}); {crs.get('axes', '')}",
        "- input types: geojson (coordinates), image (the map), together (both); "
        "image-multi and image-context from the maps folder",
        "",
        "## Hashes",
        "",
        f"- benchmark (manifest.json) SHA-256: `{bench.sha256}`",
        f"- source `{source.get('file')}` SHA-256: `{source.get('sha256')}`",
        *[f"- `{name}` SHA-256: `{sha}`" for name, sha in files.items()],
        f"- built by spatialgap {m.get('tool_version')}; exported by spatialgap {__version__} "
        f"({EXPORT_FORMAT}, format {fmt})",
        "",
    ]
    return "\n".join(lines)
