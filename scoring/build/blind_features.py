"""What an options-only solver sees of a multiple-choice item: one feature vector per option.

The `blind` baseline (scoring.build.blind) never sees the scene, the map or the question's numbers:
only the options as offered, their positions, and the question's template (its wording with every
number and feature id blanked), which tells which kind of item it is. The features are those a
construction could leak through: the position; for numeric and interval options the rank of each
option among the others, its ratios and offsets to its neighbours and its magnitude; for bearings
the circular offsets to the others; for compass, relative-direction and label options the label
itself and which of its neighbours are offered; for orderings whether its reverse is offered and
how far it lies from the others; for feature ids the id's number, its rank and its gaps.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass

import numpy as np

from scoring.vocab import REFUSAL

COMPASS8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
COMPASS8_WORDS = (
    "north",
    "northeast",
    "east",
    "southeast",
    "south",
    "southwest",
    "west",
    "northwest",
)
_NUMBER = re.compile(r"-?\d[\d ]*(?:\.\d+)?")
_FID = re.compile(r"^F(\d+)$")
_BLANK_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")
_BLANK_FID = re.compile(r"\bF\d+\b")
N_LABEL_BUCKETS = 24  # label identity hashed into this many buckets (labels are few)
BEARING_OFFSETS = (15.0, 20.0, 30.0, 45.0, 90.0, 180.0)


@dataclass(frozen=True)
class OptionsItem:
    """A multiple-choice item as an options-only solver sees it."""

    key: str  # the question's template: which kind of item it is
    choices: tuple[str, ...]


def question_key(question: str | None) -> str:
    """The question's template: numbers and feature ids blanked, whitespace collapsed."""
    text = _BLANK_NUMBER.sub("#", _BLANK_FID.sub("F", question or ""))
    return " ".join(text.split())[:160]


def _number(text: str) -> float | None:
    m = _NUMBER.search(text)
    if m is None:
        return None
    try:
        return float(m.group(0).replace(" ", ""))
    except ValueError:
        return None


def _interval(text: str) -> tuple[float, float] | None:
    m = re.match(r"^from (-?[\d .]+?) to (-?[\d .]+?)(?:\s|°|$)", text.strip())
    if m is None:
        return None
    try:
        return float(m.group(1).replace(" ", "")), float(m.group(2).replace(" ", ""))
    except ValueError:
        return None


def _ranks(values: list[float]) -> list[int]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0] * len(values)
    for r, i in enumerate(order):
        out[i] = r
    return out


def _one_hot(i: int, n: int) -> list[float]:
    return [1.0 if i == j else 0.0 for j in range(n)]


def _numeric_features(values: list[float]) -> list[list[float]]:
    """Rank, log-magnitude, ratios and offsets to the neighbours, for positive-ish values."""
    ranks = _ranks(values)
    s = sorted(values)
    gaps = [b - a for a, b in itertools.pairwise(s)]
    mean_gap = (sum(gaps) / len(gaps)) if gaps else 1.0
    mean_gap = mean_gap or 1.0
    out = []
    for i, v in enumerate(values):
        r = ranks[i]
        lo = s[r - 1] if r > 0 else None
        hi = s[r + 1] if r + 1 < len(s) else None
        lv = math.log(abs(v) + 1e-6)
        ratio_lo = math.log((abs(v) + 1e-6) / (abs(lo) + 1e-6)) if lo is not None else 0.0
        ratio_hi = math.log((abs(hi) + 1e-6) / (abs(v) + 1e-6)) if hi is not None else 0.0
        off_lo = (v - lo) / mean_gap if lo is not None else 0.0
        off_hi = (hi - v) / mean_gap if hi is not None else 0.0
        med = float(np.median(values))
        feats = [
            *_one_hot(r, 4),
            lv,
            lv * lv / 10.0,
            ratio_lo,
            ratio_hi,
            ratio_lo - ratio_hi,
            off_lo,
            off_hi,
            off_lo - off_hi,
            math.log((abs(v) + 1e-06) / (abs(med) + 1e-06)),
            1.0 if abs(v - round(v)) < 1e-09 else 0.0,
            1.0 if v == 0 else 0.0,
        ]
        out.append(feats)
    return out


N_NUMERIC = 4 + 11


def _interval_features(spans: list[tuple[float, float]]) -> list[list[float]]:
    """Rank of each interval, its start and width relative to the others, a start at zero."""
    los = [a for a, _ in spans]
    widths = [b - a for a, b in spans]
    ranks = _ranks(los)
    w = (sum(widths) / len(widths)) or 1.0
    first = min(los)
    out = []
    for i, (a, b) in enumerate(spans):
        out.append(
            [
                *_one_hot(ranks[i], 4),
                math.log(abs(a) + w) - math.log(w),
                (a - first) / w,
                first / w,
                1.0 if first == 0 else 0.0,
                math.log(w + 1e-06),
                (b - a) / w,
            ]
        )
    return out


N_INTERVAL = 4 + 6


def _bearing_features(values: list[float]) -> list[list[float]]:
    """Circular offsets to the other options: how many lie at each fixed offset, the nearest."""
    out = []
    for i, v in enumerate(values):
        diffs = [((u - v + 180.0) % 360.0) - 180.0 for j, u in enumerate(values) if j != i]
        feats = [sum(1.0 for d in diffs if abs(abs(d) - o) < 0.15) for o in BEARING_OFFSETS]
        feats += [min((abs(d) for d in diffs), default=0.0) / 180.0, sum(diffs) / 360.0]
        feats += [sum(abs(d) for d in diffs) / 540.0, math.sin(math.radians(v)), math.cos(math.radians(v))]
        # circular rank of the option going clockwise from the one furthest from all others
        feats += [sum(1.0 for d in diffs if d > 0) / 3.0]
        out.append(feats)
    return out


N_BEARING = len(BEARING_OFFSETS) + 6


def _compass_index(text: str) -> int | None:
    t = text.strip()
    if t in COMPASS8:
        return COMPASS8.index(t)
    low = t.lower().replace("-", "")
    return COMPASS8_WORDS.index(low) if low in COMPASS8_WORDS else None


def _compass_features(idx: list[int | None]) -> list[list[float]]:
    """Which neighbours (45° and 90° away) and the opposite of each direction are offered."""
    have = {i for i in idx if i is not None}
    step = 2 if all(i is None or i % 2 == 0 for i in idx) else 1  # four-way options: 90° neighbours
    out = []
    for i in idx:
        if i is None:
            out.append([0.0] * 5)
            continue
        left, right = (i - step) % 8 in have, (i + step) % 8 in have
        out.append(
            [
                float(left),
                float(right),
                float(left and right),
                float(not left and not right),
                float((i + 4) % 8 in have),
            ]
        )
    return out


N_COMPASS = 5


def _kendall(a: list[str], b: list[str]) -> int:
    pos = {x: i for i, x in enumerate(b)}
    if set(a) != set(pos):
        return len(a) * len(a)
    seq = [pos[x] for x in a]
    return sum(1 for i in range(len(seq)) for j in range(i + 1, len(seq)) if seq[i] > seq[j])


def _ordering_features(orders: list[list[str]]) -> list[list[float]]:
    """Reverse offered, Kendall distances to the others, shared first and last elements."""
    out = []
    for i, o in enumerate(orders):
        others = [p for j, p in enumerate(orders) if j != i]
        ds = [_kendall(o, p) for p in others]
        n = max(1, len(o) * (len(o) - 1) // 2)
        out.append(
            [
                float(o[::-1] in others),
                min(ds, default=0) / n,
                sum(ds) / (3 * n),
                max(ds, default=0) / n,
                sum(1.0 for d in ds if d == 1),
                sum(1.0 for p in others if p and o and p[0] == o[0]),
                sum(1.0 for p in others if p and o and p[-1] == o[-1]),
            ]
        )
    return out


N_ORDERING = 7


def _id_features(nums: list[int]) -> list[list[float]]:
    """The id's number, its rank among the options, its gaps to the nearest other ids."""
    ranks = _ranks([float(x) for x in nums])
    out = []
    for i, x in enumerate(nums):
        others = [y for j, y in enumerate(nums) if j != i]
        gap = min((abs(x - y) for y in others), default=0)
        out.append(
            _one_hot(ranks[i], 4)
            + _one_hot(min(x, 9), 10)
            + [float(gap == 1), float(x % 2), float(x == max(nums)), float(x == min(nums))]
        )
    return out


N_ID = 4 + 10 + 4


def _label_bucket(text: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(text.strip().lower())) % N_LABEL_BUCKETS


def option_features(item: OptionsItem) -> np.ndarray:
    """One row per option: position, label bucket, then each kind's block (zero where it does
    not apply)."""
    ch = [c.strip() for c in item.choices]
    n = len(ch)
    rows: list[list[float]] = [[*_one_hot(i, 4), float(n == 2)] for i in range(n)]
    for i, c in enumerate(ch):
        rows[i] += [*_one_hot(_label_bucket(c), N_LABEL_BUCKETS), float(c == REFUSAL)]
    blocks: list[list[list[float]]] = []
    spans = [_interval(c) for c in ch]
    nums = [_number(c) for c in ch]
    real = [i for i, c in enumerate(ch) if c != REFUSAL]
    numeric = all(nums[i] is not None for i in real) and len(real) >= 2 and not any(_FID.match(c) for c in ch)
    blocks.append(
        _subset(real, _interval_features, [spans[i] for i in real], N_INTERVAL, n)
        if all(spans[i] is not None for i in real) and real
        else _zeros(n, N_INTERVAL)
    )
    numeric = numeric and not any(s is not None for s in spans)
    bearing = numeric and all(c.endswith("°") for i, c in enumerate(ch) if i in real)
    blocks.append(
        _subset(real, _numeric_features, [nums[i] for i in real], N_NUMERIC, n)
        if numeric
        else _zeros(n, N_NUMERIC)
    )
    blocks.append(
        _subset(real, _bearing_features, [nums[i] for i in real], N_BEARING, n)
        if bearing
        else _zeros(n, N_BEARING)
    )
    comp = [_compass_index(c) for c in ch]
    blocks.append(_compass_features(comp) if any(x is not None for x in comp) else _zeros(n, N_COMPASS))
    orders = [[t.strip() for t in c.split(",")] for c in ch]
    is_order = all(len(o) >= 2 for i, o in enumerate(orders) if i in real) and len(real) >= 2
    blocks.append(
        _subset(real, _ordering_features, [orders[i] for i in real], N_ORDERING, n)
        if is_order
        else _zeros(n, N_ORDERING)
    )
    ids = [m.group(1) if (m := _FID.match(c)) else None for c in ch]
    is_id = all(ids[i] is not None for i in real) and len(real) >= 2
    blocks.append(
        _subset(real, _id_features, [int(ids[i] or 0) for i in real], N_ID, n) if is_id else _zeros(n, N_ID)
    )
    for block in blocks:
        for i in range(n):
            rows[i] += block[i]
    return np.asarray(rows, dtype=float)


def _zeros(n: int, width: int) -> list[list[float]]:
    return [[0.0] * width for _ in range(n)]


def _subset(real: list[int], fn, values: list, width: int, n: int) -> list[list[float]]:
    """fn's rows for the options in `real`, zero rows for the others (a refusal option)."""
    rows = _zeros(n, width)
    for i, row in zip(real, fn(values), strict=True):
        rows[i] = row
    return rows
