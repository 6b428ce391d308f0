"""`spatialgap selfcheck`: score the frozen fixture in resources/selfcheck/ and report any drift.

The fixture holds real benchmark instances (with the map sidecars of its image edits),
real-looking responses of every verdict kind, the verdict each must get, and the summary
figures (accuracy, interval, parse and error rates, ...) the fixture must produce. A change in
a parser, checker, the executor, GEOS/PROJ or the statistics library shows up here, named by
sample, before it silently changes published numbers."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from scoring.errors import InputError
from scoring.paths import RESOURCES_DIR
from scoring.score.tables import summary_cells
from scoring.score.verdicts import score_prediction
from scoring.support.files import read_json, read_jsonl

FIXTURE_DIR = RESOURCES_DIR / "selfcheck"
FIGURE_FIELDS = (
    "n",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "wrong",
    "unparsed",
    "error",
    "correct_refusal",
    "unfounded_answer",
    "parse_rate",
    "error_rate",
    "answerable_only_accuracy",
    "n_raster",
    "raster_tolerant_rate",
    "abs_error_median",
    "abs_error_p90",
)
FIGURE_TOL = 1e-6


def _read_jsonl(path: Path) -> list[dict]:
    return [value for _, value in read_jsonl(path)]


def fixture_size(fixture_dir: Path = FIXTURE_DIR) -> int:
    return len(_read_jsonl(Path(fixture_dir) / "cases.jsonl"))


def score_fixture(fixture_dir: Path = FIXTURE_DIR) -> tuple[list[dict], list[dict]]:
    """(cases, verdict rows) of the fixture, scored with the current code."""
    fixture_dir = Path(fixture_dir)
    instances = {i["id"]: i for i in _read_jsonl(fixture_dir / "instances.jsonl")}
    cases = _read_jsonl(fixture_dir / "cases.jsonl")
    rows = []
    for case in cases:
        inst = instances[case["instance_id"]]
        rec = {k: case.get(k) for k in ("task", "form", "modality", "status", "text", "error")}
        try:
            v = score_prediction(inst, rec, fixture_dir)
            row = v.as_dict()
        except Exception as exc:  # noqa: BLE001 -- a crash is drift too, reported by sample
            row = {"verdict": f"crash: {type(exc).__name__}: {exc}", "reason": ""}
        rows.append(
            {
                "id": case["sample"],
                "model": "fixture",
                "modality": case["modality"],
                "form": case["form"],
                "task": case["task"],
                "relation": inst.get("relation"),
                "family": inst.get("family"),
                "city": inst.get("city"),
                "answerable": bool((inst.get("answerable") or {}).get(case["modality"], True)),
                **{k: row.get(k) for k in ("verdict", "reason", "quality", "screen", "raster_tolerant")},
            }
        )
    return cases, rows


def fixture_figures(rows: list[dict]) -> list[dict]:
    return [
        {k: c.get(k) for k in ("modality", "form") + FIGURE_FIELDS}
        for c in summary_cells(rows)
        if c["level"] == "overall"
    ]


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return not math.isclose(float(a), float(b), rel_tol=FIGURE_TOL, abs_tol=FIGURE_TOL)
    return a != b


def run_selfcheck(fixture_dir: Path = FIXTURE_DIR) -> list[str]:
    """Empty list when everything is as expected; else one message per drifted sample/figure."""
    fixture_dir = Path(fixture_dir)
    try:
        cases, rows = score_fixture(fixture_dir)
        expected_figures = read_json(fixture_dir / "expected_figures.json")
    except (InputError, KeyError) as exc:
        return [f"fixture {fixture_dir} unreadable: {type(exc).__name__}: {exc}"]
    msgs = []
    for case, row in zip(cases, rows, strict=False):
        exp = case["expect"]
        for key in ("verdict", "screen", "raster_tolerant"):
            if key in exp and row.get(key) != exp[key]:
                msgs.append(
                    f"{case['sample']} ({case['modality']}, {case['form']}, {case['label']}): "
                    f"{key} {row.get(key)!r}, expected {exp[key]!r} (reason: {row.get('reason')})"
                )
        if "quality" in exp:
            q, e = row.get("quality"), exp["quality"]
            if (q is None) != (e is None) or (q is not None and abs(q - e) > max(1e-3, 1e-4 * abs(e))):
                msgs.append(f"{case['sample']} ({case['label']}): quality {q!r}, expected {e!r}")
    got = {(f["modality"], f["form"]): f for f in fixture_figures(rows)}
    for exp in expected_figures:
        modality, form = exp["modality"], exp["form"]
        cell = got.get((modality, form))
        if cell is None:
            msgs.append(f"figure cell {(modality, form)}: missing")
            continue
        for field in FIGURE_FIELDS:
            if field in exp and _differs(cell.get(field), exp[field]):
                msgs.append(f"figure {modality}/{form} {field}: {cell.get(field)!r}, expected {exp[field]!r}")
    return msgs
