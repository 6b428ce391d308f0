"""The paper's tables, the spatial-gap tests and the statistics behind them, on hand-made verdict
rows (plain data, no model): each assertion is a number that a wrong denominator, pairing or
correction would change."""

import csv
import json
import random

import pytest
from scipy.stats import binomtest, chi2

from scoring.relations import CATALOGUE
from scoring.score.gap import modality_gap_tests
from scoring.score.report import write_report
from scoring.score.report_tables import table_records
from scoring.score.stats import holm, mcnemar, mean_of_rates_ci, order_agreement
from scoring.score.tables import summary_cells
from scoring.score.tables_paper import (
    NO_DATA,
    NOT_RUN,
    figure2,
    pool_note,
    table1,
    table2,
    table2_pooled,
    table3,
    table4,
)


def _row(model, modality, form, i, verdict, *, city="helsinki", family="metric", relation="M01", **extra):
    return {
        "id": f"{city}-{'edit' if form == 'edit' else 'qa'}-{relation}-{i:03d}",
        "model": model,
        "modality": modality,
        "form": form,
        "task": "edit" if form == "edit" else "qa",
        "city": city,
        "family": family,
        "relation": relation,
        "verdict": verdict,
        "reason": "",
        "answerable": True,
        "scene": f"{city}-s{i}",
        "quality": None,
        **extra,
    }


def test_raster_tolerant_rate_counts_every_image_edit():
    # 4 image edits: one met (raster-tolerant), a refusal, an unparsed reply and a failed request.
    rows = [
        _row("m", "image", "edit", 0, "correct", raster_tolerant=True),
        _row("m", "image", "edit", 1, "wrong", raster_tolerant=None, reason="refusal"),
        _row("m", "image", "edit", 2, "unparsed"),
        _row("m", "image", "edit", 3, "error"),
    ]
    cell = next(c for c in summary_cells(rows) if c["level"] == "overall")
    assert cell["accuracy"] == 0.25
    assert (cell["n_raster"], cell["raster_tolerant"], cell["raster_tolerant_rate"]) == (4, 1, 0.25)
    assert cell["parse_rate"] == 0.5 and cell["error_rate"] == 0.25
    assert cell["raster_ci_low"] < 0.25 < cell["raster_ci_high"]
    t = table1(rows)
    head = t["rows"][0]["cells"][t["columns"].index(("image", "edit"))]
    assert head["rate"] == 0.25 and head["n"] == 4 and head["strict"]["rate"] == 0.25


def test_table1_marks_what_was_not_run_and_orders_by_geojson_open():
    rows = [_row("weak", "geojson", "open", i, "correct" if i < 2 else "wrong") for i in range(10)]
    rows += [_row("strong", "geojson", "open", i, "correct" if i < 9 else "wrong") for i in range(10)]
    rows += [_row("strong", "image", "edit", i, "wrong", raster_tolerant=i < 5) for i in range(10)]
    t = table1(rows)
    assert [r["model"] for r in t["rows"]] == ["strong", "weak"]
    strong, weak = t["rows"]
    cols = t["columns"]
    together_open = cols.index(("together", "open"))
    assert strong["cells"][together_open] == {**strong["cells"][together_open], "rate": None, "note": NOT_RUN}
    image_edit = strong["cells"][cols.index(("image", "edit"))]
    assert image_edit["rate"] == 0.5 and image_edit["strict"]["rate"] == 0.0 and image_edit["n"] == 10
    assert weak["cells"][cols.index(("image", "edit"))]["note"] == NOT_RUN


def test_table2_overall_and_range():
    rows = [
        _row("m", "geojson", form, i, "correct" if i < k else "wrong", city=city)
        for city, k in (("helsinki", 8), ("lyon", 5), ("paris", 2))
        for form in ("open", "mcq")
        for i in range(10)
    ]
    rows += [_row("m", "image", "open", i, "correct", city="lyon") for i in range(10)]
    t = table2(rows)  # the paper's: open-ended GeoJSON QA only
    (r,) = t["rows"]
    assert t["cities"] == ["helsinki", "lyon", "paris"]
    assert [c["rate"] for c in r["cells"]] == [0.8, 0.5, 0.2] and r["overall"]["rate"] == 0.5
    assert r["range_points"] == 60.0 and r["overall"]["n"] == 30
    pooled = table2_pooled(rows)  # ours: open and MCQ pooled, every input type
    geo = next(r for r in pooled["rows"] if r["modality"] == "geojson")
    assert geo["overall"]["n"] == 60 and len(pooled["rows"]) == 2


def test_tables_3_and_4_pool_one_model_set_and_say_why_a_cell_is_empty():
    rows = [
        _row(m, "geojson", "open", i, "wrong" if i < 3 else "correct")
        for m in ("a", "b", "c")
        for i in range(10)
    ]
    # b never ran the image: pooling it would make the GeoJSON column a different model mix
    rows += [
        _row(m, "image", "open", i, "wrong", family="direction", relation="D01")
        for m in ("a", "c")
        for i in range(4)
    ]
    t3 = table3(rows)
    assert t3["pool"]["models"] == ["a", "c"] and t3["pool"]["pooled"]
    assert t3["pool"]["excluded"] == [{"model": "b", "missing": ["image · open"]}]
    assert "left out: b (did not run image · open)" in pool_note(t3["pool"])
    fams = {r["family"]: r["cells"] for r in t3["rows"]}
    cols = t3["columns"]
    metric_geo = fams["metric"][cols.index(("geojson", "open"))]
    assert metric_geo["rate"] == 0.3 and metric_geo["n"] == 20  # a and c, not b
    assert fams["metric"][cols.index(("image", "open"))]["note"] == NO_DATA
    assert fams["metric"][cols.index(("geojson", "edit"))]["note"] == NOT_RUN
    per_model = table3(rows, per_model=True)["rows"]
    assert {r["model"] for r in per_model} == {"a", "b", "c"}
    t4 = table4(rows)
    assert len(t4["rows"]) == len(CATALOGUE) and {r["relation"] for r in t4["rows"]} >= {"M01", "D01"}
    d01 = next(r for r in t4["rows"] if r["relation"] == "D01")
    assert d01["family"] == "direction" and d01["cells"][cols.index(("image", "open"))]["rate"] == 1.0
    t4m = table4(rows, per_model=True)
    assert len(t4m["rows"]) == 3 * len(CATALOGUE) and {r["model"] for r in t4m["rows"]} == {"a", "b", "c"}


def test_pooled_tables_with_fewer_than_two_complete_models_pool_nothing():
    rows = [_row(m, "geojson", "open", i, "correct") for m in ("a", "b") for i in range(5)]
    rows += [_row("a", "image", "open", i, "wrong") for i in range(5)]
    t3, t4 = table3(rows), table4(rows)
    for t in (t3, t4):
        assert not t["pool"]["pooled"] and t["rows"] == []
        assert pool_note(t["pool"]).startswith("not pooled: fewer than two models ran every column")
    recs = table_records("table3", t3)
    assert len(recs) == 1 and "b (did not run image · open)" in recs[0]["note"]
    assert table3(rows, per_model=True)["rows"]  # the per-model tables are always there


def test_figure2_averages_open_and_mcq():
    rows = [_row("m", "geojson", "open", i, "correct" if i < 8 else "wrong") for i in range(10)]
    rows += [_row("m", "geojson", "mcq", i, "correct" if i < 4 else "wrong") for i in range(20)]
    recs = {r["modality"]: r for r in figure2(rows)}
    assert recs["geojson"]["rate"] == pytest.approx((0.8 + 0.2) / 2)
    assert recs["geojson"]["ci_low"] < 0.5 < recs["geojson"]["ci_high"]
    assert recs["image"]["rate"] is None and recs["image"]["note"] == NOT_RUN
    assert mean_of_rates_ci({}) == (None, None, None)


def _gap_rows(image_correct):
    rows = []
    for i in range(60):
        rows.append(_row("m", "geojson", "mcq", i, "correct" if i < 50 else "wrong"))
        rows.append(_row("m", "image", "mcq", i, "correct" if image_correct(i) else "wrong"))
    return rows


def test_gap_test_finds_a_worse_image_modality_and_not_identical_answers():
    worse = modality_gap_tests(_gap_rows(lambda i: i < 20))
    overall = next(t for t in worse if t["level"] == "overall")
    assert (overall["first"], overall["second"], overall["n"]) == ("geojson", "image", 60)
    assert (overall["only_first"], overall["only_second"]) == (30, 0)
    assert overall["diff_points"] == 50.0 and overall["significant"]
    # Agresti-Min: 1/2 added to each cell of the paired 2x2 table
    b, c, m = 30.5, 0.5, 62
    se = ((b + c) - (b - c) ** 2 / m) ** 0.5 / m
    assert overall["diff_ci_low"] == pytest.approx(100 * ((b - c) / m - 1.959964 * se), abs=0.01)
    assert overall["diff_ci_low"] < 50 < overall["diff_ci_high"]
    assert overall["p_value"] == pytest.approx(binomtest(30, 30).pvalue, rel=1e-3)
    same = modality_gap_tests(_gap_rows(lambda i: i < 50))
    overall = next(t for t in same if t["level"] == "overall")
    assert overall["only_first"] == overall["only_second"] == 0 and overall["p_value"] == 1.0
    assert overall["diff_ci_low"] < 0 < overall["diff_ci_high"]  # no difference, still a width
    assert not any(t["significant"] for t in same)
    assert {t["level"] for t in same} == {"overall", "family", "relation"}


def test_mcnemar_frieda_rule_and_holm():
    a = [True] * 40 + [False] * 20 + [True] * 10
    b = [False] * 40 + [True] * 20 + [True] * 10
    exact, frieda = mcnemar(a, b), mcnemar(a, b, "frieda")
    assert exact["test"] == "exact" and frieda["test"] == "chi2-cc"
    assert frieda["p_value"] == pytest.approx(chi2.sf((40 - 20 - 1) ** 2 / 60, 1))
    small = mcnemar(a[:30] + a[60:], b[:30] + b[60:], "frieda")  # 30 discordant: still exact
    assert small["test"] == "exact"
    with pytest.raises(ValueError):
        mcnemar(a, b, "asymptotic")
    assert holm([0.01, 0.04, 0.03, 0.5]) == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_ordering_agreement_is_chance_level_for_random_orders():
    ref = [f"F{i}" for i in range(6)]
    assert order_agreement(ref, ref)["kendall_tau"] == 1.0
    assert order_agreement(ref[::-1], ref)["kendall_tau"] == -1.0
    rng = random.Random(0)
    taus = []
    for _ in range(400):
        p = ref[:]
        rng.shuffle(p)
        taus.append(order_agreement(p, ref)["kendall_tau"])
    assert abs(sum(taus) / len(taus)) < 0.05
    assert order_agreement("F1", ref) is None


def test_report_writes_the_tables_as_csv(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    rows = _gap_rows(lambda i: i < 20) + [
        _row(
            "m",
            "image",
            "edit",
            i,
            "wrong",
            raster_tolerant=False,
            reason="no change: the target is unchanged",
        )
        for i in range(3)
    ]
    (res / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (res / "summary.json").write_text(
        json.dumps({"benchmark": {"city": "helsinki", "manifest_sha256": "x" * 64}})
    )
    html = write_report([res], tmp_path / "out" / "report.html", mcnemar_rule="frieda").read_text()
    for title in (
        "Table 1.",
        "Table 2.",
        "Table 3.",
        "Table 4.",
        "Figure 2.",
        "spatial gap",
        "Why edits fail",
    ):
        assert title in html
    assert "not run" in html and "FRIEDA" in html
    out = tmp_path / "out"
    t1 = list(csv.DictReader((out / "table1.csv").open()))
    assert {(r["modality"], r["form"]) for r in t1 if r["note"] == NOT_RUN} >= {("together", "open")}
    gap = list(csv.DictReader((out / "gap_tests.csv").open()))
    assert any(r["level"] == "overall" and r["significant"] == "True" for r in gap)
    fails = list(csv.DictReader((out / "edit_failures.csv").open()))
    assert fails[0]["no_change"] == "3" and fails[0]["n"] == "3"
    for name in (
        "table2",
        "table3",
        "table3_by_model",
        "table4",
        "table4_by_model",
        "table2_pooled",
        "figure2",
        "figure2b",
        "figure3b",
        "model_tests",
        "constraint_misses",
    ):
        assert (out / f"{name}.csv").is_file()
        tex = (out / f"{name}.tex").read_text()
        assert tex.count("\\begin{tabular}") == 1 and "\\toprule" in tex and "\\bottomrule" in tex
