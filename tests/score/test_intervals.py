"""Intervals on constructed verdict sets (issue 28, item 2): none has zero width unless n is 0,
including the case the scene-clustered bootstrap alone collapses on (every scene with the same
pooled outcome: one model always right, another always wrong)."""

from __future__ import annotations

import pytest

from scoring.score.stats import cluster_bootstrap, design_effect, mean_of_rates_ci, proportion_ci, wilson
from scoring.score.tables_paper import table4


def _width(lo, hi):
    return hi - lo


def test_one_model_always_right_one_always_wrong_keeps_a_width():
    # 30 scenes, each answered by two models: one right, one wrong -> every scene's pooled rate is 1/2
    succ = [1, 0] * 30
    clusters = [f"s{i}" for i in range(30) for _ in range(2)]
    b_lo, b_hi = cluster_bootstrap(succ, clusters)
    assert b_lo == b_hi == 0.5  # the bootstrap alone collapses: the case the issue names
    lo, hi, method = proportion_ci(succ, clusters)
    assert method == "wilson-deff+bootstrap"
    assert lo < 0.5 < hi
    # the design effect is floored at 1: never narrower than 60 independent samples
    w_lo, w_hi = wilson(30, 60)
    assert lo == pytest.approx(w_lo) and hi == pytest.approx(w_hi)


@pytest.mark.parametrize("k_of", [lambda n: n, lambda n: 0])
def test_all_right_or_all_wrong_keeps_a_width(k_of):
    n = 40
    k = k_of(n)
    succ = [1] * k + [0] * (n - k)
    clusters = [f"s{i // 4}" for i in range(n)]  # 10 scenes of 4
    lo, hi, method = proportion_ci(succ, clusters)
    assert method == "wilson-scenes" and hi - lo > 0.1
    # each scene one trial: as wide as Wilson over the 10 scenes
    s_lo, s_hi = wilson(10 if k else 0, 10)
    assert lo == pytest.approx(s_lo) and hi == pytest.approx(s_hi)


@pytest.mark.parametrize("succ", [[1], [0], [1, 0], [1, 1], [0, 1, 1]])
def test_tiny_n_has_a_width(succ):
    for clusters in ([f"s{i}" for i in range(len(succ))], ["one"] * len(succ)):
        lo, hi, _ = proportion_ci(succ, clusters)
        assert lo is not None and hi is not None and hi - lo > 0.1


def test_n_zero_has_no_interval():
    assert proportion_ci([], []) == (None, None, "none")


def test_clustering_widens_and_the_design_effect_is_bounded():
    # outcomes identical within each scene: strongly clustered, the effective n is the scenes
    succ = [s % 2 for s in range(20) for _ in range(5)]
    clusters = [f"s{s}" for s in range(20) for _ in range(5)]
    assert design_effect(succ, clusters) == pytest.approx(5 * 20 / 19)  # m/(m-1) x cluster size
    lo, hi, _ = proportion_ci(succ, clusters)
    w_lo, w_hi = wilson(50, 100)
    assert hi - lo > 1.5 * (w_hi - w_lo)
    assert design_effect([1, 0, 1], ["a", "a", "a"]) == 3  # one scene: one effective trial


def test_mean_of_rates_open_always_right_mcq_always_wrong_keeps_a_width():
    scenes = [f"s{i}" for i in range(25)]
    mean, lo, hi = mean_of_rates_ci({"open": [(s, 1) for s in scenes], "mcq": [(s, 0) for s in scenes]})
    assert mean == 0.5 and lo < 0.5 < hi


def test_pooled_table4_over_two_opposite_models_has_no_zero_width_cell():
    rows = []
    for i in range(20):
        for model, verdict in (("always", "correct"), ("never", "wrong")):
            rows.append(
                {
                    "id": f"q{i}",
                    "model": model,
                    "modality": "geojson",
                    "form": "open",
                    "verdict": verdict,
                    "relation": "T01",
                    "family": "topology",
                    "scene": f"s{i}",
                    "city": "x",
                }
            )
    t = table4(rows)
    cells = [c for r in t["rows"] for c in r["cells"] if c["rate"] is not None]
    assert cells and all(_width(c["ci_low"], c["ci_high"]) > 0 for c in cells)
