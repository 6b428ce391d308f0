"""The options-only baseline: a learner that answers a multiple-choice item from its options alone.

It is trained on the options of other items (another build, or the other folds of the same build)
and the letters that were right there, and never sees an item's scene, map or numbers. Per kind of
item (the question's template, scoring.build.blind_features.question_key) it fits a conditional
logit over the options' features (position, ranks, ratios and offsets, circular offsets, label
identity and neighbours, reversed orderings, id numbers), with an L2 penalty. A benchmark whose
options carry no information about the right one leaves it at guessing; the build report states
its accuracy per relation (cross-fitted) and the release gate fails a benchmark where a relation
is above guessing by more than BLIND_MARGIN.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from scoring.build.blind_features import OptionsItem, option_features, question_key

LETTERS = "ABCD"
FOLDS = 5  # cross-fitting within one build: an item is answered by the model of the other folds
L2 = 1.0  # penalty on the standardised weights
# The release gate: a relation whose options-only accuracy exceeds guessing by more than this fails
# (with at least BLIND_MIN_ITEMS items); so does a benchmark whose overall excess exceeds the second.
BLIND_MARGIN = 0.10
BLIND_OVERALL_MARGIN = 0.03
BLIND_MIN_ITEMS = 40


@dataclass(frozen=True)
class Example:
    """One multiple-choice item with the index of its right option (what the learner sees)."""

    item: OptionsItem
    right: int
    relation: str = ""
    id: str = ""


@dataclass
class KindModel:
    """A conditional logit over option features for one kind of item."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray

    def scores(self, x: np.ndarray) -> np.ndarray:
        """The model's score of each option (row of x)."""
        return ((x - self.mean) / self.scale) @ self.weights


@dataclass
class BlindModel:
    """Per-kind option models; kinds unseen in training are guessed (the first option)."""

    kinds: dict[str, KindModel] = field(default_factory=dict)

    def choose(self, item: OptionsItem) -> int:
        """The index of the option the model thinks right."""
        model = self.kinds.get(item.key)
        if model is None or not item.choices:
            return 0
        x = option_features(item)
        if x.shape[1] != model.mean.shape[0]:
            return 0
        s = model.scores(x)
        return int(np.argmax(s))


def example_of(inst: dict) -> Example | None:
    """An instance record as the learner sees it (None without letter options)."""
    choices = inst.get("choices") or []
    letter = inst.get("correct_choice")
    if len(choices) < 2 or not isinstance(letter, str) or letter not in LETTERS[: len(choices)]:
        return None
    item = OptionsItem(question_key(inst.get("question")), tuple(str(c) for c in choices))
    return Example(item, LETTERS.index(letter), str(inst.get("relation", "")), str(inst.get("id", "")))


def examples_of(instances: Iterable[dict]) -> list[Example]:
    """The multiple-choice instances among `instances`, as examples."""
    return [e for e in (example_of(i) for i in instances) if e is not None]


def _fit_kind(examples: list[Example]) -> KindModel:
    """The L2-penalised conditional logit of one kind, fitted by L-BFGS (items grouped by their
    number of options, so each group is one array)."""
    xs = [option_features(e.item) for e in examples]
    width = xs[0].shape[1]
    rows = np.vstack([x for x in xs if x.shape[1] == width])
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-9] = 1.0
    groups: dict[int, tuple[list[np.ndarray], list[int]]] = {}
    for x, e in zip(xs, examples, strict=True):
        if x.shape[1] == width:
            g = groups.setdefault(x.shape[0], ([], []))
            g[0].append((x - mean) / scale)
            g[1].append(e.right)
    arrays = [(np.stack(zs), np.asarray(ys)) for zs, ys in groups.values()]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.5 * L2 * float(w @ w), L2 * w
        for z, y in arrays:
            s = z @ w  # items x options
            s = s - s.max(axis=1, keepdims=True)
            p = np.exp(s)
            norm = p.sum(axis=1, keepdims=True)
            p /= norm
            idx = np.arange(len(y))
            total -= float((s[idx, y] - np.log(norm[:, 0])).sum())
            grad = grad - (z[idx, y] - np.einsum("io,iof->if", p, z)).sum(axis=0)
        return total, grad

    from scipy.optimize import minimize  # on use: serving an agent or starting a sweep stays light

    res = minimize(loss, np.zeros(width), jac=True, method="L-BFGS-B", options={"maxiter": 300})
    return KindModel(mean, scale, np.asarray(res.x))


def fit(examples: list[Example]) -> BlindModel:
    """A model per kind of item, from examples of another build (or other folds)."""
    by_kind: dict[str, list[Example]] = {}
    for e in examples:
        by_kind.setdefault(e.item.key, []).append(e)
    return BlindModel({k: _fit_kind(v) for k, v in sorted(by_kind.items()) if len(v) >= 8})


def fold_of(item: OptionsItem, folds: int = FOLDS) -> int:
    """The fold of an item, from what the solver sees of it (so a served agent finds it too)."""
    text = item.key + "\n" + "\n".join(item.choices)
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % folds


def cross_fit(examples: list[Example], folds: int = FOLDS) -> list[int]:
    """Each example's chosen option, by the model fitted on the other folds."""
    models = [fit([e for e in examples if fold_of(e.item, folds) != f]) for f in range(folds)]
    return [models[fold_of(e.item, folds)].choose(e.item) for e in examples]


@dataclass(frozen=True)
class RelationFigure:
    """The options-only accuracy of one relation against uniform guessing."""

    relation: str
    items: int
    correct: int
    guessing: float

    @property
    def accuracy(self) -> float:
        """Share of items answered right."""
        return self.correct / self.items if self.items else 0.0

    @property
    def excess(self) -> float:
        """Accuracy above guessing."""
        return self.accuracy - self.guessing


def figures(examples: list[Example], chosen: list[int]) -> list[RelationFigure]:
    """Per relation: items, right answers, uniform guessing (mean of 1 / options)."""
    acc: dict[str, list[tuple[bool, float]]] = {}
    for e, c in zip(examples, chosen, strict=True):
        acc.setdefault(e.relation, []).append((c == e.right, 1.0 / len(e.item.choices)))
    return [
        RelationFigure(r, len(v), sum(1 for ok, _ in v if ok), sum(g for _, g in v) / len(v))
        for r, v in sorted(acc.items())
    ]


def overall(figs: list[RelationFigure]) -> RelationFigure:
    """All relations pooled."""
    n = sum(f.items for f in figs)
    return RelationFigure(
        "all", n, sum(f.correct for f in figs), sum(f.guessing * f.items for f in figs) / n if n else 0.0
    )


def train_test(train: Iterable[dict], test: Iterable[dict]) -> list[RelationFigure]:
    """Options-only accuracy on `test`'s items of a model fitted on `train`'s (another build)."""
    model = fit(examples_of(train))
    ex = examples_of(test)
    return figures(ex, [model.choose(e.item) for e in ex])


def cross_fitted(instances: Iterable[dict]) -> list[RelationFigure]:
    """Options-only accuracy within one build, each item answered by the other folds' model."""
    ex = examples_of(instances)
    return figures(ex, cross_fit(ex)) if ex else []


def failing(figs: list[RelationFigure]) -> list[str]:
    """The gate's complaints: relations (with enough items) above guessing by more than the
    margin, and the overall excess."""
    out = [
        f"{f.relation}: options-only accuracy {f.accuracy:.1%} is above guessing {f.guessing:.1%} "
        f"by more than {BLIND_MARGIN:.0%}"
        for f in figs
        if f.items >= BLIND_MIN_ITEMS and f.excess > BLIND_MARGIN
    ]
    total = overall(figs)
    if total.items and total.excess > BLIND_OVERALL_MARGIN and total.items >= BLIND_MIN_ITEMS:
        out.append(
            f"overall: options-only accuracy {total.accuracy:.1%} is above guessing "
            f"{total.guessing:.1%} by more than {BLIND_OVERALL_MARGIN:.0%}"
        )
    return out


def manifest_record(figs: list[RelationFigure]) -> dict:
    """The manifest's record of a build's cross-fitted options-only accuracy."""
    total = overall(figs)
    return {
        "learner": "per-kind conditional logit over option features, "
        f"{FOLDS}-fold cross-fitted within the build (scoring.build.blind)",
        "margin": BLIND_MARGIN,
        "overall_margin": BLIND_OVERALL_MARGIN,
        "min_items": BLIND_MIN_ITEMS,
        "overall": {"items": total.items, "correct": total.correct, "guessing": round(total.guessing, 4)},
        "relations": [
            {"relation": f.relation, "items": f.items, "correct": f.correct, "guessing": round(f.guessing, 4)}
            for f in figs
        ],
    }


def figures_of_record(record: dict) -> list[RelationFigure]:
    """The per-relation figures of a manifest record (manifest_record's)."""
    return [
        RelationFigure(r["relation"], int(r["items"]), int(r["correct"]), float(r["guessing"]))
        for r in record.get("relations") or []
    ]


def report_lines(record: dict | None) -> list[str]:
    """build_report.md's section on the options-only baseline."""
    if not record:
        return []
    figs = figures_of_record(record)
    total = overall(figs)
    lines = [
        "## Options-only baseline",
        "",
        f"A learner that sees only each item's options and the question's template ({record['learner']}) "
        f"answers {total.accuracy:.1%} of {total.items} multiple-choice items (guessing "
        f"{total.guessing:.1%}). The release gate fails a relation more than {BLIND_MARGIN:.0%} above "
        f"guessing (with at least {BLIND_MIN_ITEMS} items) and a benchmark more than "
        f"{BLIND_OVERALL_MARGIN:.0%} above it overall.",
        "",
        "| relation | items | options-only accuracy | guessing | above guessing |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {f.relation} | {f.items} | {f.accuracy:.1%} | {f.guessing:.1%} | {f.excess:+.1%}"
        + (" ⚠" if f.items >= BLIND_MIN_ITEMS and f.excess > BLIND_MARGIN else "")
        + " |"
        for f in figs
    ]
    complaints = failing(figs)
    lines += [
        "",
        "Gate: " + ("; ".join(complaints) if complaints else "passes (no relation above the margin)."),
        "",
    ]
    return lines
