"""build_report.md: what a build made of an extract, for a person (the manifest is the record)."""

from __future__ import annotations

from scoring.build.blind import report_lines
from scoring.relations.unanswerable import unanswerable_lines


def build_report_markdown(m: dict) -> str:
    """The markdown of build_report.md from a build's manifest `m`."""
    lines = [
        f"# Build report: {m['city']}",
        "",
        f"Source `{m['source']['file']}` (SHA-256 `{m['source']['sha256'][:16]}…`), CRS "
        f"{m['crs']['name']} (EPSG:{m['crs']['epsg']}), seed {m['seed']}, "
        f"protocol {m.get('protocol', 'spatialgap')}.",
        "",
        f"Pools: {m['source']['pools']}. Thresholds: {m['source']['thresholds']}.",
        "",
        *_pool_lines(m),
        f"QA instances: {m['counts']['qa']} ({m['counts']['unanswerable_qa']} unanswerable by "
        f"design); editing instances: {m['counts']['edit']}.",
        "",
        *unanswerable_lines(m),
        "| relation | task | requested | built | constructed | shortfall |",
        "|---|---|---|---|---|---|",
    ]
    for r in m["build_report"]:
        lines.append(
            f"| {r['relation']} | {r['task']} | {r['requested']} | {r['built']} | "
            f"{r['constructed']} | {r.get('shortfall', '')} |"
        )
    lines += ["", *report_lines(m.get("options_only"))]
    return "\n".join(lines) + "\n"


def _pool_lines(m: dict) -> list[str]:
    """The QA / editing split, GDAL's warnings while reading, and absent feature classes."""
    split = m.get("pool_split") or {}
    lines = [
        f"Pool split: {split.get('method', 'none')}; QA {split.get('pools', {}).get('qa')}, "
        f"editing {split.get('pools', {}).get('edit')}.",
        "",
    ]
    warnings = (m["source"].get("stats") or {}).get("gdal_warnings") or {}
    if warnings:
        lines += [
            "GDAL warnings while reading (shown with -v): "
            + "; ".join(f"{n} × {kind}" for kind, n in sorted(warnings.items())),
            "",
        ]
    return lines
