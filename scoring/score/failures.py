"""Failure analysis of edits: why each edit sample failed (one cause per sample, so the causes of
a cell add up to its n) and which constraint kinds are missed most."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from scoring.score.stats import wilson
from scoring.vocab import FAMILIES, MODALITIES, Form, Verdict

# In the order a sample is classified; the first that applies is its cause.
CAUSES = (
    "satisfied",
    "constraint_violated",
    "screened_geometry",
    "no_change",
    "invalid_operations",
    "refused",
    "unfounded_edit",
    "unparsed",
    "request_error",
    "scoring_error",
)
CAUSE_LABELS = {
    "satisfied": "CSR met",
    "constraint_violated": "constraint violated",
    "screened_geometry": "screened geometry",
    "no_change": "no change / no ops",
    "invalid_operations": "invalid operations",
    "refused": "refused",
    "unfounded_edit": "edited unanswerable",
    "unparsed": "unparsed",
    "request_error": "request error",
    "scoring_error": "scoring error",
}
# Reason prefixes written by scoring.score.verdicts.score_edit (tests pin each one).
_NO_CHANGE = ("no change", "empty prediction")
_INVALID = ("invalid edit", "invalid geometry", "target ", "pixel geometry")


def edit_cause(row: dict) -> str:
    """The one failure cause of an edit verdict row ("satisfied" when it met every constraint)."""
    verdict, reason = row.get("verdict"), str(row.get("reason") or "")
    if verdict in (Verdict.CORRECT, Verdict.CORRECT_REFUSAL):
        return "satisfied"
    if verdict == Verdict.ERROR:
        return "scoring_error" if reason.startswith("internal error") else "request_error"
    if verdict == Verdict.UNPARSED:
        return "unparsed"
    if verdict == Verdict.UNFOUNDED_ANSWER:
        return "unfounded_edit"
    if row.get("screen"):
        return "screened_geometry"
    if reason == "refusal":
        return "refused"
    if reason.startswith(_NO_CHANGE):
        return "no_change"
    if reason.startswith(_INVALID):
        return "invalid_operations"
    if row.get("constraints_total"):
        return "constraint_violated"
    return "invalid_operations"


def _edit_rows(rows: Iterable[dict]) -> list[dict]:
    return [r for r in rows if r.get("form") == Form.EDIT]


def _order(value: str, order: tuple) -> tuple:
    return (order.index(value) if value in order else len(order), value)


def failure_table(rows: Iterable[dict]) -> list[dict]:
    """Per model x input type x family: n and the count of each cause (they add up to n)."""
    groups: defaultdict[tuple, defaultdict[str, int]] = defaultdict(lambda: defaultdict(int))
    for r in _edit_rows(rows):
        key = (r["model"], r["modality"], r.get("family") or "")
        groups[key][edit_cause(r)] += 1
    out = []
    for (model, modality, family), counts in sorted(
        groups.items(), key=lambda kv: (kv[0][0], _order(kv[0][1], MODALITIES), _order(kv[0][2], FAMILIES))
    ):
        n = sum(counts.values())
        out.append(
            {"model": model, "modality": modality, "family": family, "n": n, **{c: counts[c] for c in CAUSES}}
        )
    return out


def constraint_misses(rows: Iterable[dict]) -> list[dict]:
    """Per model x input type x constraint kind (measure), over the edits whose constraints were
    checked: how often the kind was checked and missed, with a Wilson interval; most missed
    first."""
    checked: defaultdict[tuple, int] = defaultdict(int)
    missed: defaultdict[tuple, int] = defaultdict(int)
    for r in _edit_rows(rows):
        for kind in r.get("constraint_kinds") or []:
            checked[(r["model"], r["modality"], kind)] += 1
        for kind in r.get("constraints_missed") or []:
            missed[(r["model"], r["modality"], kind)] += 1
    out = []
    for key, n in checked.items():
        k = missed[key]
        lo, hi = wilson(k, n)
        out.append(
            {
                "model": key[0],
                "modality": key[1],
                "constraint": key[2],
                "checked": n,
                "missed": k,
                "miss_rate": round(k / n, 6),
                "ci_low": None if lo is None else round(lo, 6),
                "ci_high": None if hi is None else round(hi, 6),
            }
        )
    out.sort(
        key=lambda c: (
            c["model"],
            _order(c["modality"], MODALITIES),
            -c["miss_rate"],
            -c["missed"],
            c["constraint"],
        )
    )
    return out
