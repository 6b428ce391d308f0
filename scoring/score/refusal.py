"""Refusal measured per model x input type x family (and over all families), from verdict rows:

- refusal recall: correct refusals / unanswerable samples,
- refusal precision: correct refusals / all refusals (correct ones + false refusals),
- false-refusal rate: false refusals / answerable samples,
- accuracy on answerable samples alone,

each with its interval (``proportion_ci`` of scoring/score/stats.py: Wilson, or a bootstrap over
scenes when samples share one), and a paired test of refusal behaviour between input types:
McNemar on the unanswerable samples both input types were asked (same instance and form).

A refusal is the verdict ``correct_refusal`` (on an unanswerable sample) or a ``wrong`` verdict
whose reason is ``refusal`` (on an answerable one): every refusal form the reader knows (a written
"cannot be determined" and its kin, the "cannot be determined" option of a multiple-choice item,
an edit reply saying the constraints cannot be met) reaches the verdicts that way. Multiple-choice
items offer no refusal option unless their relation's protocol puts one among the options (O06):
there a refusal is written instead of a letter, which the choice prompt allows.
"""

from __future__ import annotations

import csv
import html
import io
from collections.abc import Iterable
from itertools import combinations
from pathlib import Path
from typing import Any

from scoring.score.stats import mcnemar, proportion_ci
from scoring.support.files import write_atomic
from scoring.vocab import Verdict

ALL_FAMILIES = "all"
COLUMNS = (
    "model",
    "modality",
    "family",
    "n_unanswerable",
    "n_answerable",
    "correct_refusals",
    "false_refusals",
    "refusal_recall",
    "refusal_recall_low",
    "refusal_recall_high",
    "refusal_precision",
    "refusal_precision_low",
    "refusal_precision_high",
    "false_refusal_rate",
    "false_refusal_rate_low",
    "false_refusal_rate_high",
    "answerable_accuracy",
    "answerable_accuracy_low",
    "answerable_accuracy_high",
)


def refused(row: dict) -> bool:
    """Did the sample's reply refuse (correctly or not)?"""
    v = row.get("verdict")
    return v == Verdict.CORRECT_REFUSAL or (v == Verdict.WRONG and row.get("reason") == "refusal")


def _rate(prefix: str, hits: list[int], clusters: list[str]) -> dict[str, Any]:
    lo, hi, _ = proportion_ci(hits, clusters)
    value = sum(hits) / len(hits) if hits else None
    return {prefix: value, f"{prefix}_low": lo, f"{prefix}_high": hi}


def _scenes(rows: list[dict]) -> list[str]:
    """The clusters of the intervals: samples of one scene are not independent."""
    return [str(r.get("scene") or r["id"]) for r in rows]


def _cell(model: str, modality: str, family: str, rows: list[dict]) -> dict[str, Any]:
    un = [r for r in rows if not r.get("answerable", True)]
    ans = [r for r in rows if r.get("answerable", True)]
    refusals = [r for r in rows if refused(r)]
    cell: dict[str, Any] = {
        "model": model,
        "modality": modality,
        "family": family,
        "n_unanswerable": len(un),
        "n_answerable": len(ans),
        "correct_refusals": sum(1 for r in un if refused(r)),
        "false_refusals": sum(1 for r in ans if refused(r)),
    }
    cell |= _rate("refusal_recall", [int(refused(r)) for r in un], _scenes(un))
    cell |= _rate(
        "refusal_precision",
        [int(not r.get("answerable", True)) for r in refusals],
        _scenes(refusals),
    )
    cell |= _rate("false_refusal_rate", [int(refused(r)) for r in ans], _scenes(ans))
    cell |= _rate(
        "answerable_accuracy",
        [int(r.get("verdict") == Verdict.CORRECT) for r in ans],
        _scenes(ans),
    )
    return cell


def refusal_cells(rows: Iterable[dict]) -> list[dict[str, Any]]:
    """One cell per model x input type x family, then the model x input type over all families."""
    groups: dict[tuple[str, str, str], list[dict]] = {}
    for r in rows:
        key = (str(r["model"]), str(r["modality"]))
        groups.setdefault((*key, str(r.get("family"))), []).append(r)
        groups.setdefault((*key, ALL_FAMILIES), []).append(r)
    return [_cell(*key, group) for key, group in sorted(groups.items())]


def paired_tests(rows: Iterable[dict]) -> list[dict[str, Any]]:
    """Per model and family (and all families): McNemar of "refused" between every two input types,
    on the unanswerable samples both were asked (same instance and form)."""
    refusals: dict[tuple[str, str], dict[str, dict[tuple[str, str], bool]]] = {}
    for r in rows:
        if r.get("answerable", True):
            continue
        for fam in (str(r.get("family")), ALL_FAMILIES):
            per = refusals.setdefault((str(r["model"]), fam), {})
            per.setdefault(str(r["modality"]), {})[(str(r["id"]), str(r.get("form")))] = refused(r)
    out = []
    for (model, fam), per in sorted(refusals.items()):
        for first, second in combinations(sorted(per), 2):
            shared = sorted(set(per[first]) & set(per[second]))
            if not shared:
                continue
            test = mcnemar([per[first][k] for k in shared], [per[second][k] for k in shared])
            out.append({"model": model, "family": fam, "first": first, "second": second, **test})
    return out


def refusal_csv(cells: list[dict[str, Any]]) -> str:
    """The cells as CSV text (COLUMNS; empty where a rate has no denominator)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    w.writeheader()
    for c in cells:
        w.writerow({k: _fmt(c[k]) for k in COLUMNS})
    return buf.getvalue()


def write_refusal_csv(rows: list[dict], path: str | Path) -> Path:
    """refusal.csv of the verdict rows (one line per cell of `refusal_cells`)."""
    path = Path(path)
    write_atomic(path, refusal_csv(refusal_cells(rows)))
    return path


def _fmt(v: Any) -> Any:
    return "" if v is None else round(v, 4) if isinstance(v, float) else v


def _pct(v: float | None, lo: float | None = None, hi: float | None = None) -> str:
    if v is None:
        return "–"
    text = f"{100 * v:.1f}"
    return text if lo is None or hi is None else f"{text} [{100 * lo:.0f}–{100 * hi:.0f}]"


MEASURES = ("refusal_recall", "refusal_precision", "false_refusal_rate", "answerable_accuracy")


def _measure(c: dict[str, Any], name: str) -> str:
    return _pct(c[name], c[f"{name}_low"], c[f"{name}_high"])


def refusal_html(rows: list[dict]) -> str:
    """An HTML fragment (a heading, the refusal table, the paired tests) for the report."""
    rows = list(rows)
    cells = [c for c in refusal_cells(rows) if c["n_unanswerable"] or c["false_refusals"]]
    e = html.escape
    out = [
        "<h3>Refusal: recall, precision, false refusals</h3>",
        "<p>Per model, input type and family: refusal recall (correct refusals / unanswerable), "
        "precision (correct refusals / all refusals), false-refusal rate (refusals / answerable) and "
        "accuracy on answerable samples alone, in %, with 95 % intervals.</p>",
        '<table class="refusal"><tr><th class="l">model</th><th class="l">input type</th>'
        '<th class="l">family</th><th>unanswerable</th><th>recall</th><th>precision</th>'
        "<th>false refusals</th><th>answerable accuracy</th></tr>",
    ]
    for c in cells:
        out.append(
            f'<tr><td class="l">{e(c["model"])}</td><td class="l">{e(c["modality"])}</td>'
            f'<td class="l">{e(c["family"])}</td><td>{c["n_unanswerable"]}</td>'
            + "".join(f"<td>{_measure(c, m)}</td>" for m in MEASURES)
            + "</tr>"
        )
    out.append("</table>")
    tests = [t for t in paired_tests(rows) if t["family"] == ALL_FAMILIES]
    if tests:
        out.append(
            "<p>Paired: does a model refuse more from one input type than from another, on the same "
            "unanswerable samples (McNemar)?</p>"
            '<table class="refusal"><tr><th class="l">model</th><th class="l">first</th>'
            '<th class="l">second</th><th>pairs</th><th>only first</th><th>only second</th><th>p</th></tr>'
        )
        for t in tests:
            out.append(
                f'<tr><td class="l">{e(t["model"])}</td><td class="l">{e(t["first"])}</td>'
                f'<td class="l">{e(t["second"])}</td><td>{t["n"]}</td><td>{t["only_first"]}</td>'
                f'<td>{t["only_second"]}</td><td>{t["p_value"]:.3g}</td></tr>'
            )
        out.append("</table>")
    return "\n".join(out)
