"""Refusal measured per model x input type x family (and over all families), from verdict rows:

- refusal recall: correct refusals / unanswerable samples,
- refusal precision: correct refusals / all refusals (correct ones + false refusals),
- false-refusal rate: false refusals / answerable samples,
- accuracy on answerable samples alone,

each with its 95 % interval (``proportion_ci`` of scoring/score/stats.py: Wilson, or, when samples
share a scene, the design-effect Wilson joined with a bootstrap over scenes), and a paired test of
refusal behaviour between input types: exact McNemar of "refused" on the samples both input types
were asked (same instance and form), once on the unanswerable samples (does a model refuse more
rightly from one input type?) and once on the answerable ones (more false refusals?).

Files: ``refusal.csv`` (the cells) and ``refusal_tests.csv`` (the paired tests) in the results.

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


SAMPLE_SETS = ("unanswerable", "answerable")  # the paired tests' two sets of samples
TEST_COLUMNS = (
    "model",
    "family",
    "samples",
    "first",
    "second",
    "n",
    "only_first",
    "only_second",
    "diff_points",
    "diff_ci_low",
    "diff_ci_high",
    "p_value",
    "test",
)


def paired_tests(rows: Iterable[dict]) -> list[dict[str, Any]]:
    """Per model, family (and all families) and sample set (unanswerable, answerable): exact McNemar
    of "refused" between every two input types, on the samples both were asked (same instance and
    form). `only_first`: samples refused under the first input type and not under the second."""
    refusals: dict[tuple[str, str, str], dict[str, dict[tuple[str, str], bool]]] = {}
    for r in rows:
        samples = SAMPLE_SETS[bool(r.get("answerable", True))]
        for fam in (str(r.get("family")), ALL_FAMILIES):
            per = refusals.setdefault((str(r["model"]), fam, samples), {})
            per.setdefault(str(r["modality"]), {})[(str(r["id"]), str(r.get("form")))] = refused(r)
    out = []
    order = {name: i for i, name in enumerate(SAMPLE_SETS)}  # the unanswerable samples' test first
    for (model, fam, samples), per in sorted(refusals.items(), key=lambda kv: (*kv[0][:2], order[kv[0][2]])):
        for first, second in combinations(sorted(per), 2):
            shared = sorted(set(per[first]) & set(per[second]))
            if not shared:
                continue
            test = mcnemar([per[first][k] for k in shared], [per[second][k] for k in shared], "exact")
            out.append(
                {"model": model, "family": fam, "samples": samples, "first": first, "second": second, **test}
            )
    return out


def _csv_text(records: list[dict[str, Any]], columns: tuple[str, ...] | list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    for r in records:
        w.writerow({k: _fmt(r[k]) for k in columns})
    return buf.getvalue()


def refusal_csv(cells: list[dict[str, Any]]) -> str:
    """The cells as CSV text (COLUMNS; empty where a rate has no denominator)."""
    return _csv_text(cells, COLUMNS)


def refusal_tests_csv(tests: list[dict[str, Any]]) -> str:
    """The paired tests as CSV text (TEST_COLUMNS)."""
    return _csv_text(tests, TEST_COLUMNS)


def refusal_files(rows: list[dict]) -> dict[str, str]:
    """refusal.csv of the verdict rows (one line per cell of `refusal_cells`) and
    refusal_tests.csv (one line per paired test), by file name."""
    rows = list(rows)
    return {
        "refusal.csv": refusal_csv(refusal_cells(rows)),
        "refusal_tests.csv": refusal_tests_csv(paired_tests(rows)),
    }


def write_refusal_csv(rows: list[dict], path: str | Path) -> Path:
    """`refusal_files` written beside each other (refusal.csv at ``path``)."""
    path = Path(path)
    files = refusal_files(rows)
    write_atomic(path, files["refusal.csv"])
    write_atomic(path.with_name("refusal_tests.csv"), files["refusal_tests.csv"])
    return path


def _fmt(v: Any) -> Any:
    return "" if v is None else round(v, 4) if isinstance(v, float) else v


def _pct(v: float | None, lo: float | None = None, hi: float | None = None) -> str:
    if v is None:
        return "–"
    text = f"<b>{100 * v:.1f}</b>"
    return (
        text
        if lo is None or hi is None
        else f'{text} <span class="ci">[{100 * lo:.1f}–{100 * hi:.1f}]</span>'
    )


MEASURES = ("refusal_recall", "refusal_precision", "false_refusal_rate", "answerable_accuracy")
_COUNTS = {  # the measure's numerator and denominator, for the cell's tooltip
    "refusal_recall": ("correct_refusals", "n_unanswerable"),
    "refusal_precision": ("correct_refusals", None),
    "false_refusal_rate": ("false_refusals", "n_answerable"),
    "answerable_accuracy": (None, "n_answerable"),
}


def _measure(c: dict[str, Any], name: str) -> str:
    k, n = _COUNTS[name]
    denominator = c[n] if n else c["correct_refusals"] + c["false_refusals"]
    title = f"{c[k]} of {denominator}" if k else f"of {denominator}"
    return f'<td title="{title}">{_pct(c[name], c[f"{name}_low"], c[f"{name}_high"])}</td>'


def _cell_rows(cells: list[dict[str, Any]], labels: dict[str, str], family: bool) -> list[str]:
    e = html.escape
    head = (
        '<table class="refusal"><tr><th class="l">model</th><th class="l">input type</th>'
        + ('<th class="l">family</th>' if family else "")
        + "<th>unanswerable</th><th>answerable</th><th>refusal recall %</th><th>refusal precision %</th>"
        "<th>false-refusal rate %</th><th>accuracy on answerable %</th></tr>"
    )
    out = [head]
    for c in cells:
        out.append(
            f'<tr><td class="l">{e(c["model"])}</td>'
            f'<td class="l">{e(labels.get(c["modality"], c["modality"]))}</td>'
            + (f'<td class="l">{e(c["family"])}</td>' if family else "")
            + f"<td>{c['n_unanswerable']}</td><td>{c['n_answerable']}</td>"
            + "".join(_measure(c, m) for m in MEASURES)
            + "</tr>"
        )
    return [*out, "</table>"]


def _test_rows(tests: list[dict[str, Any]], labels: dict[str, str]) -> list[str]:
    e = html.escape
    out = [
        '<table class="refusal"><tr><th class="l">model</th><th class="l">samples</th>'
        '<th class="l">input types</th><th>paired n</th><th>refused only under the first</th>'
        "<th>only under the second</th><th>diff (points)</th><th>p (exact)</th></tr>"
    ]
    for t in tests:
        pair = f"{labels.get(t['first'], t['first'])} ↔ {labels.get(t['second'], t['second'])}"
        diff = (
            f'{t["diff_points"]:+.1f} '
            f'<span class="ci">[{t["diff_ci_low"]:+.1f}, {t["diff_ci_high"]:+.1f}]</span>'
            if t["diff_points"] is not None
            else "–"
        )
        out.append(
            f'<tr><td class="l">{e(t["model"])}</td><td class="l">{e(t["samples"])}</td>'
            f'<td class="l">{e(pair)}</td><td>{t["n"]}</td><td>{t["only_first"]}</td>'
            f'<td>{t["only_second"]}</td><td>{diff}</td><td>{t["p_value"]:.3g}</td></tr>'
        )
    return [*out, "</table>"]


def refusal_html(rows: list[dict], labels: dict[str, str] | None = None) -> str:
    """An HTML fragment for the report: the refusal table over all families, the same per family
    (folded), and the paired tests between input types. `labels`: input type -> its name."""
    rows, labels = list(rows), labels or {}
    cells = refusal_cells(rows)
    out = ['<h3 id="refusal-measures">Refusal: recall, precision, false refusals</h3>']
    if not any(c["n_unanswerable"] for c in cells):
        return "\n".join([*out, '<p class="note">no unanswerable samples scored</p>'])
    out.append(
        '<p class="note">Per model and input type: refusal recall (correct refusals / unanswerable '
        "samples), refusal precision (correct refusals / all refusals), false-refusal rate (refusals / "
        "answerable samples) and accuracy on the answerable samples alone, in %, with 95 % intervals "
        "(design-effect Wilson joined with a scene bootstrap where samples share a scene). A refusal is "
        "any refusal form the reader knows; a multiple-choice item offers no refusal option (but O06's), "
        "its instruction lets a model write one. RESULTS/refusal.csv has every cell.</p>"
    )
    out += _cell_rows([c for c in cells if c["family"] == ALL_FAMILIES], labels, family=False)
    out.append("<details><summary>per family</summary>")
    out += _cell_rows([c for c in cells if c["family"] != ALL_FAMILIES], labels, family=True)
    out.append("</details>")
    tests = [t for t in paired_tests(rows) if t["family"] == ALL_FAMILIES]
    if tests:
        out.append(
            '<p class="note">Paired: does a model refuse more from one input type than from another, on '
            "the same samples (exact McNemar; unanswerable samples: correct refusals; answerable: false "
            "refusals; p not corrected for multiplicity). RESULTS/refusal_tests.csv has them per family.</p>"
        )
        out += _test_rows(tests, labels)
    return "\n".join(out)
