"""Statistics of the scores: Wilson or seeded clustered-bootstrap intervals, exact McNemar, and
quantiles of continuous quality. scipy does the statistics; nothing here is hand-rolled beyond
the resampling loop."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np
from scipy.stats import binomtest

CONFIDENCE = 0.95
BOOTSTRAP_REPS = 2000
BOOTSTRAP_SEED = 20260101


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float | None, float | None]:
    """Wilson score interval of k successes in n trials (None, None for n == 0)."""
    if n <= 0:
        return None, None
    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


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
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(keys), size=(reps, len(keys)))
    means = k[idx].sum(axis=1) / n[idx].sum(axis=1)
    alpha = (1 - confidence) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))


def proportion_ci(
    successes: Sequence[int], clusters: Sequence[str] | None = None
) -> tuple[float | None, float | None, str]:
    """(low, high, method): Wilson when every sample is its own scene, else a clustered bootstrap."""
    n = len(successes)
    if n == 0:
        return None, None, "none"
    if clusters is not None and len(set(clusters)) < n:
        k = sum(successes)
        if k in (0, n):
            # A bootstrap of all-equal outcomes collapses to a point; Wilson over the clusters
            # (each scene one trial) keeps an honest interval.
            m = len(set(clusters))
            lo, hi = wilson(m if k else 0, m)
            return lo, hi, "wilson-scenes"
        lo, hi = cluster_bootstrap(successes, clusters)
        return lo, hi, "cluster-bootstrap"
    lo, hi = wilson(sum(successes), n)
    return lo, hi, "wilson"


def mcnemar_exact(a: Iterable[bool], b: Iterable[bool]) -> dict:
    """Exact McNemar test on paired outcomes: binomial test of the discordant pairs."""
    a, b = list(a), list(b)
    only_a = sum(1 for x, y in zip(a, b, strict=False) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=False) if y and not x)
    d = only_a + only_b
    p = float(binomtest(only_a, d, 0.5).pvalue) if d else 1.0
    return {"n": len(a), "only_first": only_a, "only_second": only_b, "p_value": p}


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
