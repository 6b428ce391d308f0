"""The paper's tables in their shapes, from verdict rows: Table 1 (model x input type x task, with
the information-sufficient GeoJSON score), Table 2 (open-ended GeoJSON QA per city, with Overall
and Range; our variant over every input type and task is `table2_pooled`), Table 3 (error per
family), Table 4 (error per relation), pooled over one model set (scoring.score.pooling) and per
model, and the data of Figures 2, 2b and 3b. Every cell carries
its n and 95 % interval, or says why it is empty ("not run": the model or nobody ran that input
type and form; "no instances": it ran, but no sample falls in the cell). The HTML report and the
CSV files are both drawn from these records."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from collections.abc import Iterable, Sequence

from scoring.relations import CATALOGUE
from scoring.score.pooling import pooled_set
from scoring.score.stats import mean_of_rates_ci
from scoring.score.tables import PIXEL_EDIT_MODALITIES, SUCCESS, cell_stats
from scoring.vocab import BASE_MODALITIES, FAMILIES, FORMS, MODALITIES, Form, Modality, QAForm

NOT_RUN = "not run"
NOT_POOLED = "not pooled"
PAPER_DROPPED = "O06"  # the paper's information-sufficient score leaves out every O06 GeoJSON item
NO_DATA = "no instances"
TABLE1_COLUMNS = tuple((m, f) for m in BASE_MODALITIES for f in FORMS)
# Tables 3 and 4: GeoJSON and image x open / MCQ / edit, pooled over models.
ERROR_COLUMNS = tuple((m, f) for m in (Modality.GEOJSON, Modality.IMAGE) for f in FORMS)
TASK_KINDS = ("qa", "edit")  # Table 2: QA (open and MCQ pooled) and editing (strict CSR)


def _task_kind(row: dict) -> str:
    return "edit" if row.get("form") == Form.EDIT else "qa"


def _group(rows: Iterable[dict], *keys: str) -> dict[tuple, list[dict]]:
    out: defaultdict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        out[tuple(r.get(k) or "" for k in keys)].append(r)
    return out


def _order(values: Iterable[str | None], order: Sequence[str] = ()) -> list[str]:
    vals = {v for v in values if v}
    return [v for v in order if v in vals] + sorted(vals - set(order))


def rate_cell(rows: list[dict], *, error: bool = False, raster: bool = False) -> dict:
    """A table cell from its samples: accuracy (or the raster-tolerant rate, or the error rate =
    1 - accuracy) with its interval, n and the count behind the rate."""
    s = cell_stats(rows)
    if raster:
        k, n, rate, lo, hi = (
            s["raster_tolerant"],
            s["n_raster"],
            s["raster_tolerant_rate"],
            s["raster_ci_low"],
            s["raster_ci_high"],
        )
    else:
        k, n, rate, lo, hi = s["correct"], s["n"], s["accuracy"], s["ci_low"], s["ci_high"]
    if error and rate is not None:
        k, rate = n - k, round(1 - rate, 6)
        lo, hi = (None if hi is None else round(1 - hi, 6)), (None if lo is None else round(1 - lo, 6))
    return {"rate": rate, "ci_low": lo, "ci_high": hi, "n": n, "k": k, "method": s["ci_method"], "note": None}


def missing_cell(note: str) -> dict:
    return {"rate": None, "ci_low": None, "ci_high": None, "n": 0, "k": 0, "method": "none", "note": note}


def table1(rows: list[dict]) -> dict:
    """One row per model; columns input type x {open, MCQ-4, edit}. The image-edit headline is the
    raster-tolerant rate, with strict CSR beside it (`strict`). Rows by GeoJSON open QA, best first."""
    groups = _group(rows, "model", "modality", "form")
    # the paper's input types always; the cross-map ones (image-multi, image-context) when run
    present = {r.get("modality") for r in rows}
    modalities = [m for m in MODALITIES if m in BASE_MODALITIES or m in present]
    columns = tuple((m, f) for m in modalities for f in FORMS)
    out = []
    for model in _order(r["model"] for r in rows):
        cells = []
        for modality, form in columns:
            rs = groups.get((model, modality, form))
            if not rs:
                cells.append(missing_cell(NOT_RUN))
            elif modality in PIXEL_EDIT_MODALITIES and form == Form.EDIT:
                cells.append({**rate_cell(rs, raster=True), "strict": rate_cell(rs)})
            else:
                cells.append(rate_cell(rs))
        out.append({"model": model, "cells": cells, "info": _info_sufficient(groups, model)})
    lead = columns.index((Modality.GEOJSON, Form.OPEN))

    def by_geojson_open(row: dict) -> tuple:
        rate = row["cells"][lead]["rate"]
        return (rate is None, -(rate or 0.0), row["model"])

    out.sort(key=by_geojson_open)
    return {"columns": columns, "modalities": [str(m) for m in modalities], "rows": out}


def _info_sufficient(groups: dict[tuple, list[dict]], model: str) -> dict:
    """GeoJSON open / MCQ information-sufficient scores: the paper's (every O06 item left out of
    the geometry-only condition) and ours (only the items built unanswerable from GeoJSON)."""
    out = {}
    for form in (QAForm.OPEN, QAForm.MCQ):
        rs = groups.get((model, str(Modality.GEOJSON), str(form)))
        if not rs:
            out[str(form)] = {"paper": missing_cell(NOT_RUN), "ours": missing_cell(NOT_RUN)}
            continue
        paper = [r for r in rs if r.get("relation") != PAPER_DROPPED]
        ours = [r for r in rs if r.get("answerable", True)]
        out[str(form)] = {
            "paper": rate_cell(paper) if paper else missing_cell(NO_DATA),
            "ours": rate_cell(ours) if ours else missing_cell(NO_DATA),
        }
    return out


def table2(rows: list[dict]) -> dict:
    """The paper's Table 2: open-ended GeoJSON QA accuracy per model and city, Overall (every city
    pooled) and Range (max - min over the cities with data, in points)."""
    rows = [r for r in rows if r["modality"] == Modality.GEOJSON and r["form"] == Form.OPEN]
    cities = _order(r.get("city") for r in rows)
    by_city = _group(rows, "model", "city")
    out = []
    for model in _order(r["model"] for r in rows):
        cells = [rate_cell(rs) if (rs := by_city.get((model, c))) else missing_cell(NOT_RUN) for c in cities]
        rates = [c["rate"] for c in cells if c["rate"] is not None]
        out.append(
            {
                "model": model,
                "cells": cells,
                "overall": rate_cell([r for r in rows if r["model"] == model]),
                "range_points": round(100 * (max(rates) - min(rates)), 1) if len(rates) > 1 else None,
            }
        )
    return {"cities": cities, "rows": out}


def table2_pooled(rows: list[dict]) -> dict:
    """Ours, not the paper's: accuracy per city with an Overall column and the range (max - min,
    points over the cities with data) per model x input type x task (QA: open and MCQ pooled;
    edit: strict CSR)."""
    cities = _order(r.get("city") for r in rows)
    by_city = _group(rows, "model", "modality", "city")
    by_kind: defaultdict[tuple, list[dict]] = defaultdict(list)  # one pass, in the rows' order
    for r in rows:
        by_kind[(r["model"], r["modality"], _task_kind(r))].append(r)
    out = []
    for model in _order(r["model"] for r in rows):
        for modality in _order((r["modality"] for r in rows if r["model"] == model), MODALITIES):
            for kind in TASK_KINDS:
                mine = by_kind.get((model, modality, kind))
                if not mine:
                    continue
                cells = []
                for city in cities:
                    rs = [r for r in by_city.get((model, modality, city), []) if _task_kind(r) == kind]
                    cells.append(rate_cell(rs) if rs else missing_cell(NOT_RUN))
                rates = [c["rate"] for c in cells if c["rate"] is not None]
                out.append(
                    {
                        "model": model,
                        "modality": modality,
                        "task": kind,
                        "cells": cells,
                        "overall": rate_cell(mine),
                        "range_points": round(100 * (max(rates) - min(rates)), 1) if len(rates) > 1 else None,
                    }
                )
    return {"cities": cities, "rows": out}


def error_table(rows: list[dict], level: str, values: Sequence[str], *, per_model: bool = False) -> dict:
    """Error rate (1 - accuracy) per `level` value (family or relation) x ERROR_COLUMNS, pooled over
    the models that ran every column shown (`pool`; intervals clustered by scene), or one block
    per model with `per_model`. Pooled over fewer than two models: no rows."""
    pool = pooled_set(rows, ERROR_COLUMNS)
    if per_model:
        models = _order(r["model"] for r in rows)
    else:
        models = [""] if pool["pooled"] else []
        keep = set(pool["models"])
        rows = [r for r in rows if r["model"] in keep]
    out = []
    for model in models:
        mine = [r for r in rows if r["model"] == model] if per_model else rows
        ran = {(r["modality"], r["form"]) for r in mine}
        groups = _group(mine, level, "modality", "form")
        for value in values:
            cells = []
            for modality, form in ERROR_COLUMNS:
                rs = groups.get((value, modality, form))
                if rs:
                    cells.append(rate_cell(rs, error=True))
                else:
                    cells.append(missing_cell(NO_DATA if (modality, form) in ran else NOT_RUN))
            out.append({"model": model, level: value, "cells": cells})
    return {"columns": ERROR_COLUMNS, "level": level, "rows": out, "pool": pool, "per_model": per_model}


def table3(rows: list[dict], *, per_model: bool = False) -> dict:
    return error_table(rows, "family", _order((r.get("family") for r in rows), FAMILIES), per_model=per_model)


def table4(rows: list[dict], *, per_model: bool = False) -> dict:
    relations = sorted(set(CATALOGUE) | {r["relation"] for r in rows if r.get("relation")})
    t = error_table(rows, "relation", relations, per_model=per_model)
    for r in t["rows"]:
        rec = CATALOGUE.get(r["relation"])
        r["name"], r["family"] = (rec.name, str(rec.family)) if rec else ("", "")
    return t


def figure2b(rows: list[dict]) -> list[dict]:
    """The paper's Fig. 2b: editing success per model x input type that ran edits: strict CSR,
    and for edits on a map image also the raster-tolerant rate (two names, two numbers)."""
    groups = _group([r for r in rows if r["form"] == Form.EDIT], "model", "modality")
    out = []
    for (model, modality), rs in sorted(
        groups.items(), key=lambda kv: (kv[0][0], MODALITIES.index(kv[0][1]))
    ):
        strict = rate_cell(rs)
        raster = rate_cell(rs, raster=True) if modality in PIXEL_EDIT_MODALITIES else missing_cell("")
        out.append(
            {
                "model": model,
                "modality": modality,
                "strict_csr": strict["rate"],
                "strict_csr_ci_low": strict["ci_low"],
                "strict_csr_ci_high": strict["ci_high"],
                "raster_tolerant_rate": raster["rate"],
                "raster_ci_low": raster["ci_low"],
                "raster_ci_high": raster["ci_high"],
                "n": strict["n"],
            }
        )
    return out


def figure3b(rows: list[dict]) -> list[dict]:
    """The paper's Fig. 3b: MCQ accuracy per model x input type x relation."""
    groups = _group([r for r in rows if r["form"] == Form.MCQ], "model", "modality", "relation")
    out = []
    for (model, modality, relation), rs in sorted(groups.items()):
        c = rate_cell(rs)
        out.append(
            {
                "model": model,
                "modality": modality,
                "relation": relation,
                "rate": c["rate"],
                "ci_low": c["ci_low"],
                "ci_high": c["ci_high"],
                "n": c["n"],
            }
        )
    return out


def figure2(rows: list[dict]) -> list[dict]:
    """QA accuracy averaged over open and MCQ (unweighted) per model x input type, with a 95 %
    interval resampling scenes; `forms` names the forms that ran (one only: not an average)."""
    by_form = _group(rows, "model", "modality", "form")  # one pass, in the rows' order
    ran = {r["modality"] for r in rows if r["form"] != Form.EDIT}
    shown = [m for m in MODALITIES if m in BASE_MODALITIES or m in ran]  # cross-map ones when run
    out = []
    for model in _order(r["model"] for r in rows):
        for modality in shown:
            groups: dict[str, Sequence[tuple[str, int]]] = {
                str(form): [
                    (str(r.get("scene") or r["id"]), int(r["verdict"] in SUCCESS))
                    for r in by_form.get((model, modality, form), ())
                ]
                for form in (QAForm.OPEN, QAForm.MCQ)
            }
            forms = [f for f, v in groups.items() if v]
            mean, lo, hi = mean_of_rates_ci(groups)
            out.append(
                {
                    "model": model,
                    "modality": str(modality),
                    "rate": None if mean is None else round(mean, 6),
                    "ci_low": None if lo is None else round(lo, 6),
                    "ci_high": None if hi is None else round(hi, 6),
                    "n_open": len(groups["open"]),
                    "n_mcq": len(groups["mcq"]),
                    "forms": "+".join(forms),
                    "note": None if forms else NOT_RUN,
                }
            )
    return out


# --------------------------------------------------------------------------------- CSV

CELL_FIELDS = ("rate", "ci_low", "ci_high", "n", "k", "note")


def _cell_fields(cell: dict, prefix: str = "") -> dict:
    return {prefix + k: cell.get(k) for k in CELL_FIELDS}


def table1_records(table: dict) -> list[dict]:
    """Table 1's CSV lines: one per model x column (strict CSR beside the raster-tolerant
    headline), then the GeoJSON information-sufficient scores (the paper's and ours)."""
    recs: list[dict] = []
    for row in table["rows"]:
        for (modality, form), c in zip(table["columns"], row["cells"], strict=True):
            raster = "strict" in c
            rec = {
                "model": row["model"],
                "modality": modality,
                "form": form,
                "measure": "raster_tolerant_rate" if raster else ("csr" if form == Form.EDIT else "accuracy"),
                **_cell_fields(c),
            }
            rec.update(_cell_fields(c.get("strict") or missing_cell(""), "strict_csr_"))
            recs.append(rec)
        for form, pair in row["info"].items():
            for which, measure in (("paper", "info_sufficient_paper"), ("ours", "answerable_only")):
                recs.append(
                    {
                        "model": row["model"],
                        "modality": str(Modality.GEOJSON),
                        "form": form,
                        "measure": measure,
                        **_cell_fields(pair[which]),
                    }
                )
    return recs


def city_table_records(table: dict) -> list[dict]:
    """Table 2's (and the pooled variant's) CSV lines: one per row x city, then its Overall with
    the range."""
    recs: list[dict] = []
    for row in table["rows"]:
        if "task" in row:  # table2_pooled
            key = {k: row[k] for k in ("model", "modality", "task")}
        else:
            key = {"model": row["model"], "modality": str(Modality.GEOJSON), "form": str(Form.OPEN)}
        for city, c in zip(table["cities"], row["cells"], strict=True):
            recs.append({**key, "city": city, **_cell_fields(c), "range_points": None})
        overall = _cell_fields(row["overall"])
        recs.append({**key, "city": "Overall", **overall, "range_points": row["range_points"]})
    return recs


def error_table_records(table: dict) -> list[dict]:
    """Tables 3's and 4's CSV lines (pooled or per model): one per row x column; a pooled table
    without rows is one line saying why."""
    recs: list[dict] = []
    level = table["level"]
    pool = table["pool"]
    if not table["per_model"] and not table["rows"]:
        recs.append({"model": "", "note": pool_note(pool)})
    for row in table["rows"]:
        for (modality, form), c in zip(table["columns"], row["cells"], strict=True):
            rec = {"model": row["model"] or "pooled: " + " + ".join(pool["models"]), level: row[level]}
            if level == "relation":
                rec.update(name=row["name"], family=row["family"])
            rec.update(modality=modality, form=form, measure="error_rate")
            recs.append({**rec, **_cell_fields(c)})
    return recs


def pool_note(pool: dict) -> str:
    """One line naming the pooled models and the ones left out, with the columns they lack."""
    left = "; ".join(f"{e['model']} (did not run {', '.join(e['missing'])})" for e in pool["excluded"])
    if not pool["pooled"]:
        head = f"not pooled: fewer than two models ran every column ({', '.join(pool['columns'])})"
        return head + (f"; left out: {left}" if left else "") + "; see the per-model tables"
    return f"pooled over {', '.join(pool['models'])}" + (f"; left out: {left}" if left else "")


def csv_text(records: list[dict]) -> str:
    fields: list[str] = []
    for r in records:
        fields.extend(k for k in r if k not in fields)
    buf = io.StringIO(newline="")
    w = csv.DictWriter(buf, fieldnames=fields or ["empty"], extrasaction="ignore")
    w.writeheader()
    for r in records:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in fields})
    return buf.getvalue()
