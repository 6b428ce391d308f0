"""Which models a pooled table may pool, and which of its columns differ from the paper's items.

A pooled cell mixes the samples of several models; when the models differ between columns, a
difference between columns can be made entirely by the model mix (e.g. GeoJSON pooled over three
agents, the image over chance alone). So a pooled table pools only the models that ran every
column it shows (a column at least one model ran); the others are named with the columns they
lack. With fewer than two such models there is nothing to pool and the report shows the
per-model tables instead."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scoring.vocab import Form, Modality

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


_QA = frozenset({str(Form.OPEN), str(Form.MCQ)})
_ALL = frozenset({str(Form.OPEN), str(Form.MCQ), str(Form.EDIT)})
# Which table columns (forms) each deviation's items fall in; "pixel" edits: image edits only.
DEVIATION_FORMS: dict[str, frozenset[str]] = {
    "o06-attributes": _QA,
    "numeric-options": frozenset({str(Form.MCQ)}),
    "bearing-options": frozenset({str(Form.MCQ)}),
    "option-rules": frozenset({str(Form.MCQ)}),
    "option-count": frozenset({str(Form.MCQ)}),
    "topology-questions": _QA,
    "m14-count": _QA,
    "map-image-edits": frozenset({"pixel"}),
    "refusal-invitation": _QA,
    "unanswerable-variants": _ALL,
    "t09-reading": _ALL,
    "t11-reading": _ALL,
    "displacement-bounds": frozenset({str(Form.EDIT)}),
    "band-widths": frozenset({str(Form.EDIT)}),
    "map-framing": frozenset({str(Form.EDIT)}),
    "city-set": _ALL,
}


def column_deviations(modality: Modality, form: str, protocol: str) -> list[str]:
    """Titles of the deviations (scoring.relations.paper.DEVIATIONS) that apply to `protocol`'s
    outputs and whose items fall in the column modality x form: under `paper` too, wherever a
    listed deviation applies (the interval rule, the topology labels, the framing, ...)."""
    from scoring.relations.paper import deviations_for

    pixel = modality in {str(m) for m in Modality if m.pixel_edits}
    out = []
    for d in deviations_for(protocol):
        forms = DEVIATION_FORMS.get(d.id, _ALL)
        if str(form) in forms or (form == Form.EDIT and pixel and "pixel" in forms):
            out.append(d.title)
    return out
