"""Summary cells: every accuracy with its interval, parse rate, error rate, the
information-sufficient score beside the raw one, raster-tolerant success for image edits, and
quantiles of continuous quality. Shared by `spatialgap score` (summary CSV/JSON), the report
and the gate, so the three never disagree."""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from scoring.score.stats import mcnemar_exact, proportion_ci, quantiles

SUCCESS = ("correct", "correct_refusal")
# Cell levels, each adding one grouping key to (model, modality, form).
BASE_KEYS = ("model", "modality", "form")
LEVELS = {"overall": (), "city": ("city",), "family": ("family",), "relation": ("relation",)}
CSV_FIELDS = [
    "level",
    "model",
    "modality",
    "form",
    "city",
    "family",
    "relation",
    "n",
    "correct",
    "accuracy",
    "ci_low",
    "ci_high",
    "ci_method",
    "wrong",
    "unparsed",
    "error",
    "correct_refusal",
    "unfounded_answer",
    "parse_rate",
    "error_rate",
    "n_answerable",
    "info_sufficient_accuracy",
    "n_raster",
    "raster_tolerant_rate",
    "quality_n",
    "quality_median",
    "quality_p10",
    "quality_p90",
]


def _r(v, nd=6):
    return None if v is None else round(float(v), nd)


def cell_stats(rows: list[dict]) -> dict:
    n = len(rows)
    counts = defaultdict(int)
    for r in rows:
        counts[r["verdict"]] += 1
    succ = [1 if r["verdict"] in SUCCESS else 0 for r in rows]
    lo, hi, method = proportion_ci(succ, [r.get("scene") or r["id"] for r in rows])
    answerable = [r for r in rows if r.get("answerable", True)]
    raster = [r for r in rows if r.get("raster_tolerant") is not None]
    arrived = n - counts["error"]
    q = quantiles(r.get("quality") for r in rows if r["verdict"] not in ("error", "unparsed"))
    return {
        "n": n,
        "correct": sum(succ),
        "accuracy": _r(sum(succ) / n) if n else None,
        "ci_low": _r(lo),
        "ci_high": _r(hi),
        "ci_method": method,
        **{k: counts[k] for k in ("wrong", "unparsed", "error", "correct_refusal", "unfounded_answer")},
        "parse_rate": _r((arrived - counts["unparsed"]) / arrived) if arrived else None,
        "error_rate": _r(counts["error"] / n) if n else None,
        "n_answerable": len(answerable),
        "info_sufficient_accuracy": _r(
            sum(1 for r in answerable if r["verdict"] == "correct") / len(answerable)
        )
        if answerable
        else None,
        "n_raster": len(raster),
        "raster_tolerant_rate": _r(sum(1 for r in raster if r["raster_tolerant"]) / len(raster))
        if raster
        else None,
        "quality_n": q["n"],
        "quality_median": _r(q["median"]),
        "quality_p10": _r(q["p10"]),
        "quality_p90": _r(q["p90"]),
    }


def summary_cells(rows: Iterable[dict]) -> list[dict]:
    """Cells of every level, sorted deterministically."""
    rows = list(rows)
    cells = []
    for level, extra in LEVELS.items():
        keys = BASE_KEYS + extra
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for r in rows:
            groups[tuple(r.get(k) or "" for k in keys)].append(r)
        for key in sorted(groups):
            cell = {"level": level, **dict(zip(keys, key, strict=False))}
            cell.update(cell_stats(groups[key]))
            cells.append(cell)
    return cells


def mcnemar_pairs(rows: Iterable[dict]) -> list[dict]:
    """Exact McNemar between every two models on the samples both answered (same instance,
    form and modality), per modality x form."""
    by: dict[tuple, dict[str, dict[str, bool]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        by[(r["modality"], r["form"])][r["model"]][r["id"]] = r["verdict"] in SUCCESS
    out = []
    for (modality, form), models in sorted(by.items()):
        names = sorted(models)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                common = sorted(set(models[a]) & set(models[b]))
                if not common:
                    continue
                res = mcnemar_exact([models[a][s] for s in common], [models[b][s] for s in common])
                out.append(
                    {
                        "modality": modality,
                        "form": form,
                        "first": a,
                        "second": b,
                        "first_accuracy": _r(sum(models[a][s] for s in common) / len(common)),
                        "second_accuracy": _r(sum(models[b][s] for s in common) / len(common)),
                        **res,
                        "p_value": float(f"{res['p_value']:.4g}"),
                    }
                )
    return out


def write_csv(cells: list[dict], path: Path) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for c in cells:
            w.writerow({k: ("" if c.get(k) is None else c.get(k)) for k in CSV_FIELDS})
