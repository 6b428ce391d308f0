"""Statistics of the scores: Wilson intervals, widened for scene clustering by a design effect and
joined with a seeded clustered bootstrap (never narrower than either), paired McNemar tests
(exact, or FRIEDA's exact-then-chi-square rule), Holm's correction, and quantiles of continuous
error. scipy does the distributions; the resampling loop and Holm's step-down are the only
hand-written parts."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np
from scipy.special import ndtri

CONFIDENCE = 0.95
BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 20260101
# FRIEDA's rule: the exact binomial test below this many discordant pairs, chi-square with
# continuity correction from it on.
FRIEDA_EXACT_BELOW = 50
MCNEMAR_RULES = ("exact", "frieda")


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    """Wilson score interval of k successes in n trials (None, None for n == 0): scipy's
    `binomtest(k, n).proportion_ci(method="wilson")`, the same operations in the same order
    (Newcombe 1998), without the exact p-value binomtest computes first (most of a report's
    statistics time)."""
    if n <= 0:
        return None, None
    k, n = int(k), int(n)
    p = k / n
    z = float(ndtri(0.5 + 0.5 * confidence))
    denom = 2 * (n + z**2)
    center = (2 * n * p + z**2) / denom
    delta = z / denom * math.sqrt(4 * n * p * (1 - p) + z**2)
    lo = 0.0 if k == 0 else center - delta
    hi = 1.0 if k == n else center + delta
    return float(lo), float(hi)


def cluster_bootstrap(
    successes: Sequence[int],
    clusters: Sequence[str],
    *,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float, float]:
    """Percentile interval of the mean of `successes`, resampling whole clusters (scenes) with
    replacement, with a fixed seed so the same verdicts always give the same interval."""
    by: dict[str, list[int]] = defaultdict(list)
    for s, c in zip(successes, clusters, strict=False):
        by[c].append(int(s))
    keys = sorted(by)
    k = np.array([sum(by[c]) for c in keys], dtype=float)
    n = np.array([len(by[c]) for c in keys], dtype=float)
    draws = resample_counts(len(keys), reps, seed)
    means = (draws @ k) / (draws @ n)
    alpha = (1 - confidence) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


@lru_cache(maxsize=8)
def resample_counts(m: int, reps: int, seed: int) -> np.ndarray:
    """How often each of ``m`` clusters is drawn in each of ``reps`` resamples (reps x m): the draws
    ``default_rng(seed).integers(0, m, (reps, m))``, counted. A resample's sums are then one product
    with the per-cluster totals, and as those are whole numbers the sums are exact: equal to
    summing the drawn clusters one by one. Kept per size, as a report's cells share sizes.

    >>> resample_counts(3, 2, 0).sum(axis=1).tolist()
    [3, 3]
    """
    idx = np.random.default_rng(seed).integers(0, m, size=(reps, m))
    rows = (idx + (np.arange(reps) * m)[:, None]).ravel()
    counts = np.bincount(rows, minlength=reps * m).reshape(reps, m).astype(np.int32)
    counts.flags.writeable = False  # shared by every caller of the cache
    return counts


def wilson_eff(p: float, n_eff: float, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval of a proportion p over an effective sample size n_eff (a real
    number: n divided by the design effect), in the closed form of `wilson`."""
    z = float(ndtri(0.5 + 0.5 * confidence))
    denom = 1 + z**2 / n_eff
    center = (p + z**2 / (2 * n_eff)) / denom
    half = z / denom * math.sqrt(max(0.0, p * (1 - p) / n_eff + z**2 / (4 * n_eff**2)))
    return max(0.0, center - half), min(1.0, center + half)


def design_effect(successes: Sequence[int], clusters: Sequence[str]) -> float:
    """Kish's design effect of the mean of `successes` under clustering: the cluster-robust
    (ratio-estimator) variance over the binomial one, never below 1 (clustering never makes a
    rate more certain than independent samples would) and at most n (one effective trial).
    With every outcome equal the variance ratio is 0/0; each scene then counts as one trial."""
    n = len(successes)
    by: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s, c in zip(successes, clusters, strict=True):
        by[c][0] += int(s)
        by[c][1] += 1
    m = len(by)
    k = sum(successes)
    if m <= 1:
        return float(n)
    if k in (0, n):
        return n / m
    p = k / n
    robust = m / (m - 1) * sum((kc - p * nc) ** 2 for kc, nc in by.values()) / n**2
    return float(min(n, max(1.0, robust / (p * (1 - p) / n))))


def proportion_ci(
    successes: Sequence[int], clusters: Sequence[str] | None = None
) -> tuple[float | None, float | None, str]:
    """(low, high, method). Every sample its own scene: Wilson. Samples sharing scenes: the
    union of the Wilson interval over n / design effect and the clustered bootstrap, so the
    interval is never narrower than independent samples give (the bootstrap alone collapses
    to a point when every scene has the same pooled outcome, e.g. one model always right and
    another always wrong) nor than the scene resampling gives."""
    n = len(successes)
    if n == 0:
        return None, None, "none"
    k = sum(successes)
    if clusters is None or len(set(clusters)) >= n:
        lo, hi = wilson(k, n)
        return lo, hi, "wilson"
    deff = design_effect(successes, clusters)
    lo, hi = wilson_eff(k / n, n / deff)
    if k in (0, n):
        # every resample of equal outcomes is the same point: the scenes, as trials, give the width
        return (0.0 if k == 0 else lo), (1.0 if k == n else hi), "wilson-scenes"
    b_lo, b_hi = cluster_bootstrap(successes, clusters)
    return min(lo, b_lo), max(hi, b_hi), "wilson-deff+bootstrap"


def mcnemar_exact(a: Iterable[bool], b: Iterable[bool]) -> dict:
    """Exact McNemar test on paired outcomes: binomial test of the discordant pairs."""
    return mcnemar(a, b, "exact")


def mcnemar(a: Iterable[bool], b: Iterable[bool], rule: str = "exact") -> dict:
    """McNemar test on paired outcomes (a[i], b[i] of the same instance). rule "exact": two-sided
    binomial test of the discordant pairs; "frieda": exact below 50 discordant pairs, else
    chi-square (1 df) with continuity correction. `diff_points` is 100 x (acc(a) - acc(b))."""
    if rule not in MCNEMAR_RULES:
        raise ValueError(f"unknown McNemar rule {rule!r} (expected one of {', '.join(MCNEMAR_RULES)})")
    a, b = list(a), list(b)
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    d = only_a + only_b
    method = "exact"
    if d == 0:
        p = 1.0
    elif rule == "frieda" and d >= FRIEDA_EXACT_BELOW:
        method = "chi2-cc"
        from scipy.stats import chi2  # on use: scipy.stats costs ~0.9 s of import (`--help` loads this)

        p = float(chi2.sf((abs(only_a - only_b) - 1) ** 2 / d, 1))
    else:
        p = _exact_p(only_a, d)
    n = len(a)
    lo = hi = None
    if n:
        # Agresti-Min interval of the paired difference, in points: Wald after adding 1/2 to each
        # cell of the 2x2 table, so that 0 or all discordant pairs still give a width
        ka, kb, m = only_a + 0.5, only_b + 0.5, n + 2
        diff = (ka - kb) / m
        se = math.sqrt(max(0.0, (ka + kb) - (ka - kb) ** 2 / m)) / m
        z = 1.959963984540054
        lo, hi = round(100 * max(-1.0, diff - z * se), 2), round(100 * min(1.0, diff + z * se), 2)
    return {
        "n": n,
        "only_first": only_a,
        "only_second": only_b,
        "diff_points": round(100 * (only_a - only_b) / n, 2) if n else None,
        "diff_ci_low": lo,
        "diff_ci_high": hi,
        "p_value": min(1.0, p),
        "test": method,
    }


@lru_cache(maxsize=4096)  # a report tests many pairs with the same discordant counts
def _exact_p(k: int, n: int) -> float:
    from scipy.stats import binomtest

    return float(binomtest(k, n, 0.5).pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control under any dependence)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def mean_of_rates_ci(
    groups: dict[str, Sequence[tuple[str, int]]],
    *,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = CONFIDENCE,
) -> tuple[float | None, float | None, float | None]:
    """(mean, low, high) of the unweighted mean over groups (e.g. open and MCQ) of each group's
    success rate, given (scene, success) pairs per group; the interval resamples scenes, so the
    two answers to one scene's question stay together."""
    groups = {g: list(v) for g, v in groups.items() if v}
    if not groups:
        return None, None, None
    names = sorted(groups)
    scenes = sorted({s for v in groups.values() for s, _ in v})
    pos = {s: i for i, s in enumerate(scenes)}
    k = np.zeros((len(names), len(scenes)))
    n = np.zeros((len(names), len(scenes)))
    for gi, g in enumerate(names):
        for scene, ok in groups[g]:
            k[gi, pos[scene]] += int(ok)
            n[gi, pos[scene]] += 1
    mean = float(np.mean(k.sum(axis=1) / n.sum(axis=1)))
    if not k.any() or (k == n).all():
        # all outcomes equal: every resample is the same point; Wilson over the scenes (each
        # scene one trial) keeps an honest interval, as in proportion_ci
        lo, hi = wilson(len(scenes) if k.any() else 0, len(scenes), confidence)
        return mean, lo, hi
    draws = resample_counts(len(scenes), reps, seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        rates = (k @ draws.T) / (n @ draws.T)  # groups x reps; whole-number sums, so exact
    means = np.nanmean(rates, axis=0)
    alpha = (1 - confidence) / 2
    b_lo, b_hi = float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))
    # joined with a Wilson interval of the mean over the groups' effective sizes (n / design
    # effect, combined as for a mean of independent rates): the bootstrap alone is a point when
    # every scene's mean is the same (e.g. open always right, MCQ always wrong)
    inv = 0.0
    for g in names:
        succ = [int(ok) for _, ok in groups[g]]
        inv += design_effect(succ, [s for s, _ in groups[g]]) / len(succ)
    w_lo, w_hi = wilson_eff(mean, len(names) ** 2 / inv, confidence)
    return mean, min(b_lo, w_lo), max(b_hi, w_hi)


def quantiles(values: Iterable[float | None]) -> dict:
    """Median and 10th / 90th percentiles of the finite values (None when there are none)."""
    v = np.array([x for x in values if x is not None and math.isfinite(x)], dtype=float)
    if v.size == 0:
        return {"n": 0, "median": None, "p10": None, "p90": None}
    return {
        "n": int(v.size),
        "median": float(np.median(v)),
        "p10": float(np.percentile(v, 10)),
        "p90": float(np.percentile(v, 90)),
    }


def order_agreement(predicted: object, reference: object) -> dict | None:
    """How far an ordering answer is from the reference order: Kendall's tau-b over the items
    both contain (0 for a random order, 1 identical, -1 reversed), the share of reference items
    in their exact place, and the items left out or added. None unless both are lists."""
    if not isinstance(predicted, (list, tuple)) or not isinstance(reference, (list, tuple)):
        return None
    pred, ref = [str(x) for x in predicted], [str(x) for x in reference]
    common = [x for x in ref if x in pred]
    tau = None
    if len(common) >= 2:
        from scipy.stats import kendalltau

        t = kendalltau([ref.index(x) for x in common], [pred.index(x) for x in common]).statistic
        tau = None if t is None or not math.isfinite(t) else round(float(t), 6)
    in_place = sum(1 for i, x in enumerate(ref) if i < len(pred) and pred[i] == x)
    return {
        "kendall_tau": tau,
        "in_place": round(in_place / len(ref), 6) if ref else None,
        "missed": sorted(set(ref) - set(pred)),
        "extra": sorted(set(pred) - set(ref)),
    }
