"""The spatial-gap test: for each model, paired McNemar tests between its input modalities on the
same samples (same city, instance and form), at overall, family and relation level.

A sample's outcome is its strict verdict (correct or correct refusal); image edits are compared on
strict CSR, like GeoJSON edits, so that the two sides of a test use one rule. Holm's step-down
correction is applied within each model's tests of one level (all modality pairs, forms and
groups of that level): Holm controls the family-wise error under any dependence between the tests
(they share models and scenes, so the positive-dependence condition Benjamini-Hochberg needs is
not guaranteed), and a relation-level row is read as an individual claim ("this relation has a
gap"), which is what family-wise control protects."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from scoring.score.stats import holm, mcnemar
from scoring.score.tables import SUCCESS
from scoring.vocab import FORMS, Modality

MODALITY_PAIRS = (
    (Modality.GEOJSON, Modality.IMAGE),
    (Modality.GEOJSON, Modality.TOGETHER),
    (Modality.IMAGE, Modality.TOGETHER),
    # the cross-map settings against the single map they are drawn from
    (Modality.IMAGE, Modality.IMAGE_MULTI),
    (Modality.IMAGE, Modality.IMAGE_CONTEXT),
)
GAP_LEVELS = ("overall", "family", "relation")
ALPHA = 0.05
CORRECTION = "holm"

Outcomes = dict[tuple, dict[str, dict[tuple, bool]]]


def _outcomes(rows: Iterable[dict], level: str) -> Outcomes:
    """(model, form, group) -> modality -> (city, id) -> success."""
    out: Outcomes = defaultdict(lambda: defaultdict(dict))
    for r in rows:
        group = "all" if level == "overall" else (r.get(level) or "")
        out[(r["model"], r["form"], group)][r["modality"]][(r.get("city") or "", r["id"])] = (
            r["verdict"] in SUCCESS
        )
    return out


def _form_order(form: str) -> int:
    return FORMS.index(form) if form in FORMS else len(FORMS)


def modality_gap_tests(rows: Iterable[dict], rule: str = "exact") -> list[dict]:
    """One record per (model, modality pair, form, level, group) with paired samples: n, both
    accuracies, the discordant counts, the difference in points (first - second), the p-value,
    Holm's adjusted p-value within (model, level) and whether it is significant at 5 %."""
    rows = list(rows)
    tests: list[dict] = []
    for level in GAP_LEVELS:
        outcomes = _outcomes(rows, level)
        for (model, form, group), by_modality in outcomes.items():
            for first, second in MODALITY_PAIRS:
                a, b = by_modality.get(first), by_modality.get(second)
                if not a or not b:
                    continue
                common = sorted(set(a) & set(b))
                if not common:
                    continue
                res = mcnemar([a[k] for k in common], [b[k] for k in common], rule)
                tests.append(
                    {
                        "model": model,
                        "level": level,
                        "group": group,
                        "form": form,
                        "first": str(first),
                        "second": str(second),
                        "first_accuracy": round(sum(a[k] for k in common) / len(common), 6),
                        "second_accuracy": round(sum(b[k] for k in common) / len(common), 6),
                        **res,
                    }
                )
    _adjust(tests)
    pair_order = {(str(a), str(b)): i for i, (a, b) in enumerate(MODALITY_PAIRS)}
    tests.sort(
        key=lambda t: (
            t["model"],
            GAP_LEVELS.index(t["level"]),
            t["group"],
            _form_order(t["form"]),
            pair_order[(t["first"], t["second"])],
        )
    )
    return tests


def _adjust(tests: list[dict]) -> None:
    families: defaultdict[tuple, list[dict]] = defaultdict(list)
    for t in tests:
        families[(t["model"], t["level"])].append(t)
    for members in families.values():
        adjusted = holm([t["p_value"] for t in members])
        for t, p in zip(members, adjusted, strict=True):
            t["p_value"] = float(f"{t['p_value']:.4g}")
            t["p_holm"] = float(f"{p:.4g}")
            t["tests_in_family"] = len(members)
            t["significant"] = p < ALPHA


def gap_headline(tests: list[dict]) -> list[dict]:
    """The overall-level tests, one row per model x form x modality pair (the report's summary)."""
    return [t for t in tests if t["level"] == "overall"]
