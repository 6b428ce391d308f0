"""Statistics and summary cells on hand-made verdict rows (plain data, no model)."""

import json
import random

import numpy as np
import pytest

from scoring.score.report import build_context
from scoring.score.stats import (
    cluster_bootstrap,
    mcnemar_exact,
    mean_of_rates_ci,
    proportion_ci,
    quantiles,
    resample_counts,
    wilson,
)
from scoring.score.tables import summary_cells


def test_wilson_matches_the_closed_form():
    k, n, z = 37, 120, 1.959963984540054
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(centre - half, abs=1e-9) and hi == pytest.approx(centre + half, abs=1e-9)
    assert wilson(0, 0) == (None, None)


def test_clustered_bootstrap_is_seeded_and_wider_for_clustered_outcomes():
    # 20 scenes of 5 samples each, outcomes identical within a scene: strongly clustered
    succ = [1 if s % 2 else 0 for s in range(20) for _ in range(5)]
    clusters = [f"s{s}" for s in range(20) for _ in range(5)]
    a = cluster_bootstrap(succ, clusters)
    assert a == cluster_bootstrap(succ, clusters)
    lo_w, hi_w = wilson(sum(succ), len(succ))
    assert (a[1] - a[0]) > 1.5 * (hi_w - lo_w)
    assert proportion_ci(succ, clusters)[2] == "wilson-deff+bootstrap"
    lo_c, hi_c, _ = proportion_ci(succ, clusters)
    assert lo_c <= a[0] and hi_c >= a[1]  # never narrower than the bootstrap
    assert proportion_ci(succ, [str(i) for i in range(len(succ))])[2] == "wilson"
    lo, hi, method = proportion_ci([1] * 10, ["a"] * 5 + ["b"] * 5)
    assert method == "wilson-scenes" and lo < 1 and hi == pytest.approx(1)


def _bootstrap_by_drawing(successes, clusters, reps=2000, seed=20260101):
    """The clustered bootstrap as its definition reads: draw clusters, sum what they hold."""
    keys = sorted(set(clusters))
    pairs = list(zip(successes, clusters, strict=True))
    k = np.array([sum(s for s, c in pairs if c == key) for key in keys], dtype=float)
    n = np.array([clusters.count(key) for key in keys], dtype=float)
    idx = np.random.default_rng(seed).integers(0, len(keys), size=(reps, len(keys)))
    means = k[idx].sum(axis=1) / n[idx].sum(axis=1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


@pytest.mark.parametrize("seed", range(6))
def test_counted_resamples_give_exactly_the_drawn_resamples_interval(seed):
    # the resamples are counted once per size and multiplied: the interval must be the same
    # doubles as drawing the clusters and summing them
    rng = random.Random(seed)
    m = rng.choice([2, 7, 25, 160])
    clusters = [f"s{rng.randrange(m)}" for _ in range(m * rng.choice([1, 2, 3]))]
    rate = rng.random()
    successes = [int(rng.random() < rate) for _ in clusters]
    assert cluster_bootstrap(successes, clusters) == _bootstrap_by_drawing(successes, clusters)
    counts = resample_counts(len(set(clusters)), 2000, 20260101)
    assert counts.sum(axis=1).tolist() == [len(set(clusters))] * 2000 and not counts.flags.writeable


@pytest.mark.parametrize("seed", range(4))
def test_mean_of_rates_interval_is_the_drawn_resamples_interval(seed):
    rng = random.Random(seed)
    scenes = [f"s{i}" for i in range(rng.choice([3, 20, 90]))]
    groups = {g: [(s, int(rng.random() < 0.6)) for s in scenes if rng.random() < 0.8] for g in ("a", "b")}
    names = sorted(g for g in groups if groups[g])
    used = sorted({s for g in names for s, _ in groups[g]})
    k = np.array([[sum(ok for s2, ok in groups[g] if s2 == s) for s in used] for g in names], dtype=float)
    n = np.array([[sum(1 for s2, _ in groups[g] if s2 == s) for s in used] for g in names], dtype=float)
    idx = np.random.default_rng(20260101).integers(0, len(used), size=(2000, len(used)))
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.nanmean(k[:, idx].sum(axis=2) / n[:, idx].sum(axis=2), axis=0)
    assert k.any() and not (k == n).all()  # mixed outcomes: the bootstrap branch
    _, lo, hi = mean_of_rates_ci(groups)
    # the bootstrap's interval, joined with the design-effect Wilson one: never narrower
    assert lo is not None and hi is not None
    assert lo <= float(np.quantile(means, 0.025)) and hi >= float(np.quantile(means, 0.975))


def test_mcnemar_exact():
    a = [True] * 10 + [False] * 2 + [True] * 30
    b = [False] * 10 + [True] * 2 + [True] * 30
    r = mcnemar_exact(a, b)
    assert (r["only_first"], r["only_second"]) == (10, 2)
    assert r["p_value"] == pytest.approx(0.03857421875)  # 2 * P(X <= 2), X ~ Bin(12, 1/2)
    assert mcnemar_exact([True], [True])["p_value"] == 1.0


def test_quantiles_skip_missing():
    q = quantiles([None, 1.0, 2.0, 3.0, float("nan"), 4.0, 5.0])
    assert q["n"] == 5 and q["median"] == 3.0 and q["p10"] == pytest.approx(1.4)


def _rows():
    rows = []
    for city, correct in (("helsinki", 8), ("london", 3)):
        for i in range(10):
            verdict = (
                "correct" if i < correct else ("unparsed" if i == 9 else ("error" if i == 8 else "wrong"))
            )
            rows.append(
                {
                    "id": f"{city}-{i}",
                    "model": "m",
                    "modality": "geojson",
                    "form": "open",
                    "task": "qa",
                    "city": city,
                    "family": "metric",
                    "relation": "M01",
                    "verdict": verdict,
                    "reason": "",
                    "answerable": True,
                    "quality": float(i),
                    "scene": f"{city}-{i}",
                }
            )
    rows.append(
        {
            "id": "u",
            "model": "m",
            "modality": "geojson",
            "form": "open",
            "task": "qa",
            "city": "london",
            "family": "ordering",
            "relation": "O06",
            "verdict": "correct_refusal",
            "reason": "",
            "answerable": False,
            "quality": None,
            "scene": "u",
        }
    )
    return rows


def test_cells_rates_and_information_sufficient_score():
    cells = {(c["level"], c.get("city")): c for c in summary_cells(_rows())}
    overall = cells[("overall", None)]
    assert (
        overall["n"] == 21 and overall["correct"] == 12 and overall["error"] == 2 and overall["unparsed"] == 2
    )
    # every rate counts every sample: 2 unparsed and 2 failed requests out of 21
    assert overall["parse_rate"] == pytest.approx(17 / 21, abs=1e-6)
    assert overall["error_rate"] == pytest.approx(2 / 21, abs=1e-6)
    assert overall["answerable_only_accuracy"] == pytest.approx(11 / 20, abs=1e-6)
    assert cells[("city", "london")]["accuracy"] == pytest.approx(4 / 11, abs=1e-6)
    # unparsed and failed samples have no quality; the rest do
    assert cells[("city", "helsinki")]["abs_error_n"] == 8
    # the headline tail is the worst decile of the error (p90), not the best (p10)
    assert cells[("city", "helsinki")]["abs_error_p90"] == pytest.approx(6.3)
    assert "quality_p10" not in overall


def test_report_city_range_and_figures(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    rows = _rows()
    (res / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (res / "summary.json").write_text(json.dumps({"benchmark": {"city": "two", "manifest_sha256": "x" * 64}}))
    ctx = build_context([res])
    r = ctx["tables"]["table2_pooled"]["rows"][0]
    assert r["range_points"] == pytest.approx(100 * (0.8 - 4 / 11), abs=0.05)
    assert ctx["figs"]["cities"].startswith("data:image/png;base64,")
