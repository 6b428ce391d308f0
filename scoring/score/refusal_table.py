"""The refusal measures (scoring/score/refusal.py) as a report table: recall, precision and the
false-refusal rate per model x input type x family with intervals, and the paired tests of
refusal between input types. Its CSVs (refusal.csv, refusal_tests.csv) are written with the
verdicts by `score`, so the table itself writes none."""

from __future__ import annotations

from typing import Any

from markupsafe import Markup

from scoring.score.refusal import refusal_html
from scoring.score.report_tables import MODALITY_LABELS, ReportInputs, report_table


def _html(inputs: ReportInputs, data: list[dict]) -> Markup:
    return Markup(refusal_html(data, MODALITY_LABELS))


@report_table(name="refusal_measures", csv=None, html="refusal_measures.html.j2", view=_html)
def _refusal_rows(inputs: ReportInputs) -> list[dict[str, Any]]:
    return inputs.rows
