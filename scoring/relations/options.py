"""Option rules that carry no information about which option is right.

Every rule here draws the options so that an options-only solver (scoring.build.blind) cannot tell
the right one from the others: the right option's position is uniform (`mcq` shuffles), and

- point values (distances, perimeters, areas, densities): a window of fixed log-width placed
  uniformly over the answer, the distractors drawn uniformly (in log) inside it: the four options
  are exchangeable, so the answer's rank is uniform and no ratio or offset marks it;
- bearings: four bearings equally spaced by a seeded step (15°, 20°, 30° or 45°), the answer at a
  uniform rank;
- eight-way directions: three of the seven other directions drawn uniformly, so no direction is
  marked by having both neighbours offered;
- orderings: the answer, its reverse, one neighbour of it (one adjacent swap) and that neighbour's
  reverse: every option has its reverse and a one-swap neighbour among the others;
- counts: three other counts drawn uniformly from the count's whole range;
- intervals (paper protocol): four adjacent intervals whose start, counted in widths, is drawn
  independently of which interval holds the answer (scoring.relations.paper.interval_choices).
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence

BEARING_STEPS = (15.0, 20.0, 30.0, 45.0)  # degrees between the default protocol's bearing options
POINT_WINDOW = math.log(2.0)  # the point options of one item lie within a factor 2 of each other
MIN_RATIO = 1.1  # and every two at least 10 % apart


def fmt_point(v: float, decimals: int) -> str:
    """A point value as options show it (thousands separated by a space from 10 000 on)."""
    return f"{v:,.{decimals}f}".replace(",", " ") if abs(v) >= 10000 else f"{v:.{decimals}f}"


def point_grid(rng: random.Random, value: float, min_gap: float) -> list[float]:
    """Three distractor values drawn so that the four options are exchangeable: a window of fixed
    log-width (POINT_WINDOW) is placed uniformly over log(value) and the distractors are drawn
    uniformly in log within it, every option at least `min_gap` and MIN_RATIO from every other.
    Given the four options, each is then equally likely to be the answer whatever the
    construction (only how likely its value is in itself remains), so neither rank nor ratio nor
    offset marks it. A value too small for a log window (at most min_gap) gets the window over
    value + min_gap instead."""
    shift = min_gap if value <= min_gap else 0.0
    base = math.log(value + shift)
    width = POINT_WINDOW
    for attempt in range(400):
        if attempt and attempt % 100 == 0:
            width *= 1.5  # a window too narrow for the gaps (tiny values): widened, rarely
        lo = base - width * rng.random()
        vals = [math.exp(rng.uniform(lo, lo + width)) - shift for _ in range(3)]
        opts = [value, *vals]
        if all(v > 0 or (v == value) for v in opts) and _spread(opts, min_gap):
            return vals
    return [value + (i + 1) * 2 * min_gap for i in range(3)]


def _spread(values: list[float], min_gap: float) -> bool:
    """Every two values at least min_gap and MIN_RATIO apart."""
    s = sorted(values)
    return all(b - a >= min_gap and b >= a * MIN_RATIO for a, b in itertools.pairwise(s))


def point_options(rng: random.Random, value: float, unit: str, decimals: int, min_gap: float) -> list[str]:
    """The three distractors of a point value, written as the answer is."""
    return [f"{fmt_point(v, decimals)}{unit}" for v in point_grid(rng, value, min_gap)]


def bearing_options(rng: random.Random, value: float, step: float | None = None) -> tuple[list[str], int]:
    """Four bearings `step` apart (seeded from BEARING_STEPS when None) in clockwise order, the
    answer at a uniform rank: (options, index of the answer)."""
    step = rng.choice(BEARING_STEPS) if step is None else step
    k = rng.randrange(4)
    return [f"{(value + (i - k) * step) % 360.0:.1f}°" for i in range(4)], k


def direction_distractors(rng: random.Random, answer: str, labels: Sequence[str]) -> list[str]:
    """Three of the other labels, drawn uniformly."""
    return rng.sample([lab for lab in labels if lab != answer], 3)


def ordering_distractors(rng: random.Random, answer: list[str]) -> list[list[str]]:
    """The answer's reverse, a one-swap neighbour of it and that neighbour's reverse: the four
    options are then alike (each has its reverse and a one-swap neighbour among the others)."""
    i = rng.randrange(len(answer) - 1)
    near = list(answer)
    near[i], near[i + 1] = near[i + 1], near[i]
    return [answer[::-1], near, near[::-1]]


def count_distractors(rng: random.Random, n: int, top: int) -> list[str]:
    """Three other counts drawn uniformly from 0..top (from a window of 7 around n beyond it)."""
    lo = 0 if n <= top else n - 3
    hi = top if n <= top else n + 3
    return [str(v) for v in rng.sample([v for v in range(lo, hi + 1) if v != n], 3)]


def option_rules_section() -> str:
    """The relation reference's section on how options are drawn (this module's rules)."""
    rules = __doc__.split("the right option's position is uniform (`mcq` shuffles), and", 1)[1]
    return (
        "\n## Option rules\n\n"
        "Multiple-choice options are drawn so that they carry no information about which one is "
        "right (`scoring.relations.options`). Every item's options are put in an order drawn by an "
        "rng of the slot's own, so the right option's position is uniform; and\n\n"
        + " ".join(rules.split()).replace(" - ", "\n- ").replace("; and", "").strip().replace(";\n", ";\n")
        + "\n- topology labels (paper protocol): the label of the relation's own pair is asked; the "
        "three distractors are labels that do not hold, drawn in proportion to how often each label "
        "is an answer (scoring.relations.paper_topology.LABEL_WEIGHTS);\n"
        "- feature ids: candidates are shuffled before the ids F1.. are given, so an id says "
        "nothing about its role;\n"
        "- M14 (within distance): the threshold is drawn so that the count is uniform over 0-6;\n"
        "- O06: three options (the roads asked about never share a level, so `same level` would "
        "never be right).\n\n"
        "Where the paper fixes the form (adjacent intervals, topology labels) the form is kept. The "
        "options-only baseline (`blind` agent, scoring.build.blind) measures what is left: each "
        "build's report gives its cross-fitted accuracy per relation, and the release gate fails a "
        "relation more than 10 points above guessing (40 items or more) or a benchmark more than "
        "3 points above it overall.\n"
    )
