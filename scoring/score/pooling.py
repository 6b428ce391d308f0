"""Which models a pooled table may pool, and which of its columns differ from the paper's items.

A pooled cell mixes the samples of several models; when the models differ between columns, a
difference between columns can be made entirely by the model mix (e.g. GeoJSON pooled over three
agents, the image over chance alone). So a pooled table pools only the models that ran every
column it shows (a column at least one model ran); the others are named with the columns they
lack. With fewer than two such models there is nothing to pool and the report shows the
per-model tables instead."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scoring.vocab import Form, Modality, Protocol

MIN_POOLED = 2
# The anchor of the deviations list (resources/relations.md, heading "Deviations from the paper").
DEVIATIONS_ANCHOR = "deviations-from-the-paper"


def _label(column: tuple[str, str]) -> str:
    return f"{column[0]} · {column[1]}"


def pooled_set(rows: Iterable[dict], columns: Sequence[tuple[str, str]]) -> dict:
    """{"models": pooled models, "excluded": [{"model", "missing": [column labels]}], "pooled":
    at least MIN_POOLED models, "columns": the columns shown (those anybody ran)}."""
    ran: dict[str, set[tuple[str, str]]] = {}
    for r in rows:
        ran.setdefault(r["model"], set()).add((str(r["modality"]), str(r["form"])))
    shown = [c for c in columns if any(c in cols for cols in ran.values())]
    models, excluded = [], []
    for model in sorted(ran):
        missing = [_label(c) for c in shown if c not in ran[model]]
        if missing:
            excluded.append({"model": model, "missing": missing})
        else:
            models.append(model)
    return {
        "models": models,
        "excluded": excluded,
        "pooled": len(models) >= MIN_POOLED,
        "columns": [_label(c) for c in shown],
    }


def column_deviations(modality: Modality, form: str, protocol: str) -> list[str]:
    """Names of the deviations (scoring.relations.paper.DEVIATIONS) whose items fall in the
    column modality x form under `protocol`: none under the paper's own protocol."""
    if protocol == Protocol.PAPER:  # protocol switch: gate (the paper's own items depart from nothing)
        return []
    out = ["Unanswerable variants"]  # in every column: QA and edits alike
    if form in (Form.OPEN, Form.MCQ):
        out += ["Topology questions", "O06 attributes"]
    if form == Form.MCQ:
        out.append("Numeric options")
    if form == Form.EDIT and modality in {str(m) for m in Modality if m.pixel_edits}:
        out.append("Map-image edits")
    return out
