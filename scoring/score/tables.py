"""Summary cells: every accuracy with its interval, parse rate, error rate, the
answerable-only accuracy beside the raw one, raster-tolerant success for image edits, and
quantiles of continuous absolute error. Shared by `spatialgap score` (summary CSV/JSON), the
report and the gate, so the three never disagree.

Denominators: every rate counts every sample of its cell (failed requests, unparsed replies,
refusals and invalid edits included); only `answerable_only_accuracy` leaves out the
unanswerable-by-design samples, by definition (the paper's information-sufficient score, which
drops every O06 GeoJSON item, is Table 1's `info_sufficient_paper`: another number, another
name). Error quantiles describe the answers that have a numeric error (`abs_error_n` of them)
and are not rates."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

from scoring.score.stats import mcnemar, proportion_ci, quantiles
from scoring.support.files import write_atomic
from scoring.vocab import VERDICTS, Form, Modality, Verdict

PIXEL_EDIT_MODALITIES = frozenset(str(m) for m in Modality if m.pixel_edits)

SUCCESS = (Verdict.CORRECT, Verdict.CORRECT_REFUSAL)
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
    "answerable_only_accuracy",
    "n_raster",
    "raster_tolerant",
    "raster_tolerant_rate",
    "raster_ci_low",
    "raster_ci_high",
    "abs_error_n",
    "abs_error_median",
    "abs_error_p90",
]
# Renamed fields: a gate rule or reader naming the old one gets told what it meant.
RENAMED = {
    "quality_p10": "abs_error_p90 (quality_p10 was the 10th percentile of the error: the best decile)",
    "quality_p90": "abs_error_p90",
    "quality_median": "abs_error_median",
    "quality_n": "abs_error_n",
}


def _r(v: float | None, nd: int = 6) -> float | None:
    return None if v is None else round(float(v), nd)


def is_image_edit(row: dict) -> bool:
    return row.get("form") == Form.EDIT and row.get("modality") in PIXEL_EDIT_MODALITIES


def cell_stats(rows: list[dict]) -> dict:
    n = len(rows)
    counts: defaultdict[str, int] = defaultdict(int)
    for r in rows:
        counts[r["verdict"]] += 1
    succ = [1 if r["verdict"] in SUCCESS else 0 for r in rows]
    clusters = [r.get("scene") or r["id"] for r in rows]
    lo, hi, method = proportion_ci(succ, clusters)
    answerable = [r for r in rows if r.get("answerable", True)]
    # Every image edit counts in the raster-tolerant rate: a refusal, an unparsed reply, a failed
    # request or an empty or invalid edit is a raster-tolerant failure, not a missing sample.
    raster = [r for r in rows if is_image_edit(r)]
    raster_ok = [1 if r.get("raster_tolerant") else 0 for r in raster]
    r_lo, r_hi, _ = proportion_ci(raster_ok, [r.get("scene") or r["id"] for r in raster])
    q = quantiles(r.get("quality") for r in rows if r["verdict"] not in (Verdict.ERROR, Verdict.UNPARSED))
    return {
        "n": n,
        "correct": sum(succ),
        "accuracy": _r(sum(succ) / n) if n else None,
        "ci_low": _r(lo),
        "ci_high": _r(hi),
        "ci_method": method,
        **{str(v): counts[v] for v in VERDICTS if v != Verdict.CORRECT},
        # replies an answer could be read from, over every sample (failed requests included)
        "parse_rate": _r((n - counts[Verdict.ERROR] - counts[Verdict.UNPARSED]) / n) if n else None,
        "error_rate": _r(counts[Verdict.ERROR] / n) if n else None,
        "n_answerable": len(answerable),
        "answerable_only_accuracy": _r(
            sum(1 for r in answerable if r["verdict"] == Verdict.CORRECT) / len(answerable)
        )
        if answerable
        else None,
        "n_raster": len(raster),
        "raster_tolerant": sum(raster_ok),
        "raster_tolerant_rate": _r(sum(raster_ok) / len(raster)) if raster else None,
        "raster_ci_low": _r(r_lo),
        "raster_ci_high": _r(r_hi),
        "abs_error_n": q["n"],
        "abs_error_median": _r(q["median"]),
        # the worst decile's threshold: 10 % of the answers with an error are off by more
        "abs_error_p90": _r(q["p90"]),
    }


def summary_cells(rows: Iterable[dict], levels: Iterable[str] | None = None) -> list[dict]:
    """Cells of every level (or of the given ones), sorted deterministically."""
    rows = list(rows)
    cells = []
    wanted = set(LEVELS) if levels is None else set(levels)
    for level, extra in LEVELS.items():
        if level not in wanted:
            continue
        keys = BASE_KEYS + extra
        groups: dict[tuple, list[dict]] = defaultdict(list)
        for r in rows:
            groups[tuple(r.get(k) or "" for k in keys)].append(r)
        for key in sorted(groups):
            cell = {"level": level, **dict(zip(keys, key, strict=False))}
            cell.update(cell_stats(groups[key]))
            cells.append(cell)
    return cells


def mcnemar_pairs(rows: Iterable[dict], rule: str = "exact") -> list[dict]:
    """McNemar between every two models on the samples both answered (same city, instance,
    form and modality), per modality x form."""
    by: dict[tuple, dict[str, dict[tuple, bool]]] = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        # two sweeps' samples are the same sample only with the same id, scene (its hash) and
        # protocol: two builds of one benchmark pair, two different benchmarks sharing ids do not
        key = (r.get("protocol") or "", r.get("city"), r["id"], r.get("scene") or "")
        by[(r["modality"], r["form"])][r["model"]][key] = r["verdict"] in SUCCESS
    out = []
    for (modality, form), models in sorted(by.items()):
        names = sorted(models)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                common = sorted(set(models[a]) & set(models[b]), key=str)
                if not common:
                    continue
                res = mcnemar([models[a][s] for s in common], [models[b][s] for s in common], rule)
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


def cells_csv(cells: list[dict]) -> str:
    """summary.csv's text: one line per cell."""
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    for c in cells:
        w.writerow({k: ("" if c.get(k) is None else c.get(k)) for k in CSV_FIELDS})
    return buf.getvalue()


def write_csv(cells: list[dict], path: Path) -> None:
    write_atomic(path, cells_csv(cells))
