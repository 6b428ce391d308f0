"""The statistics module's hand-written shortcuts equal the library results they replace."""


def test_wilson_is_scipys_interval_bit_for_bit():
    from scipy.stats import binomtest

    from scoring.score.stats import wilson

    for confidence in (0.95, 0.9, 0.99):
        for n in (*range(1, 120), 333, 700, 1400, 2101):
            for k in {0, 1, n // 3, n // 2, n - 1, n}:
                ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
                assert wilson(k, n, confidence) == (float(ci.low), float(ci.high)), (k, n, confidence)
    assert wilson(0, 0) == (None, None)
