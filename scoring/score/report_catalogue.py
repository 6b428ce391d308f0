"""The report's tables, registered in the order of its sections (scoring.score.report_tables):
the run conditions, the paper's Tables 1-4 and the data of Figures 2, 2b and 3b
(scoring.score.tables_paper), the paired tests, why edits fail, and the HTML-only tables of
reading rates, error sizes, ordering answers and unanswerable instances."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from scoring.formats.journal import sample_index_of
from scoring.score.conditions import flat_conditions, totals_by_model
from scoring.score.failures import CAUSES, constraint_misses, failure_table
from scoring.score.gap import modality_gap_tests
from scoring.score.report_tables import Column, ReportInputs, TableView, report_table
from scoring.score.results import extractor_effect
from scoring.score.tables import mcnemar_pairs
from scoring.score.tables_paper import (
    city_table_records,
    error_table_records,
    figure2,
    figure2b,
    figure3b,
    rate_cell,
    table1,
    table1_records,
    table2,
    table2_pooled,
    table3,
    table4,
)
from scoring.vocab import FORMS, MODALITIES, Verdict

MISSES_SHOWN = 6  # constraint kinds shown per model x input type (all are in the CSV)


def _condition_totals(inputs: ReportInputs, _: Any) -> list[dict]:
    return totals_by_model(inputs.conditions)


@report_table(
    name="run_conditions", csv="run_conditions.csv", html="run_conditions.html.j2", view=_condition_totals
)
def _run_conditions(inputs: ReportInputs) -> list[dict]:
    return [flat_conditions(c) for c in inputs.conditions]


@report_table(name="table1", csv="table1.csv", html="table1.html.j2", records=table1_records)
def _table1(inputs: ReportInputs) -> dict:
    return table1(inputs.rows)


@report_table(name="table2", csv="table2.csv", html="table2.html.j2", records=city_table_records)
def _table2(inputs: ReportInputs) -> dict:
    return table2(inputs.rows)


@report_table(
    name="table2_pooled", csv="table2_pooled.csv", html="table2_pooled.html.j2", records=city_table_records
)
def _table2_pooled(inputs: ReportInputs) -> dict:
    return table2_pooled(inputs.rows)


@report_table(name="table3", csv="table3.csv", html="table3.html.j2", records=error_table_records)
def _table3(inputs: ReportInputs) -> dict:
    return table3(inputs.rows)


@report_table(
    name="table3_by_model",
    csv="table3_by_model.csv",
    html="table3_by_model.html.j2",
    records=error_table_records,
)
def _table3_by_model(inputs: ReportInputs) -> dict:
    return table3(inputs.rows, per_model=True)


@report_table(name="table4", csv="table4.csv", html="table4.html.j2", records=error_table_records)
def _table4(inputs: ReportInputs) -> dict:
    return table4(inputs.rows)


@report_table(
    name="table4_by_model",
    csv="table4_by_model.csv",
    html="table4_by_model.html.j2",
    records=error_table_records,
)
def _table4_by_model(inputs: ReportInputs) -> dict:
    return table4(inputs.rows, per_model=True)


@report_table(name="figure2", csv="figure2.csv", html="figure2.html.j2")
def _figure2(inputs: ReportInputs) -> list[dict]:
    return figure2(inputs.rows)


@report_table(name="figure2b", csv="figure2b.csv", html="figure2b.html.j2")
def _figure2b(inputs: ReportInputs) -> list[dict]:
    return figure2b(inputs.rows)


@report_table(name="figure3b", csv="figure3b.csv", html="figure3b.html.j2")
def _figure3b(inputs: ReportInputs) -> list[dict]:
    return figure3b(inputs.rows)


def _first_samples(rows: list[dict]) -> list[dict]:
    # the paired tests pair each item's first sample: an item's repeats are not independent pairs
    return [r for r in rows if not sample_index_of(r)]


def _gap_levels(inputs: ReportInputs, tests: list[dict]) -> dict[str, list[dict]]:
    """The HTML shows each level of the tests apart, and the significant relations' count."""
    levels = {level: [t for t in tests if t["level"] == level] for level in ("overall", "family", "relation")}
    return {**levels, "relation_significant": [t for t in levels["relation"] if t["significant"]]}


@report_table(name="gap_tests", csv="gap_tests.csv", html="gap_tests.html.j2", view=_gap_levels)
def _gap_tests(inputs: ReportInputs) -> list[dict]:
    return modality_gap_tests(_first_samples(inputs.rows), inputs.mcnemar_rule)


@report_table(name="model_tests", csv="model_tests.csv", html="model_tests.html.j2")
def _model_tests(inputs: ReportInputs) -> list[dict]:
    return mcnemar_pairs(_first_samples(inputs.rows), inputs.mcnemar_rule)


def _causes_seen(inputs: ReportInputs, failures: list[dict]) -> list[str]:
    """The HTML shows the causes that occur; the CSV has every cause."""
    return [c for c in CAUSES if any(r[c] for r in failures)]


@report_table(name="edit_failures", csv="edit_failures.csv", html="edit_failures.html.j2", view=_causes_seen)
def _edit_failures(inputs: ReportInputs) -> list[dict]:
    return failure_table(inputs.rows)


def _top_misses(inputs: ReportInputs, misses: list[dict]) -> list[dict]:
    """The most missed kinds first within each model x input type, MISSES_SHOWN of them."""
    top: dict[tuple, list[dict]] = defaultdict(list)
    for m in misses:
        key = (m["model"], m["modality"])
        if m["missed"] and len(top[key]) < MISSES_SHOWN:
            top[key].append(m)
    return [{"model": k[0], "modality": k[1], "kinds": v} for k, v in top.items()]


@report_table(
    name="constraint_misses", csv="constraint_misses.csv", html="constraint_misses.html.j2", view=_top_misses
)
def _constraint_misses(inputs: ReportInputs) -> list[dict]:
    return constraint_misses(inputs.rows)


REQUEST_RATES = TableView(
    title="Reading and request rates",
    note="Parse rate: samples whose reply an answer could be read from, over every sample; error rate: "
    "failed requests (or samples never recorded); answerable-only: accuracy without the "
    "unanswerable-by-design samples (not the paper's information-sufficient score, which leaves "
    "out every O06 GeoJSON item: Table 1).",
    columns=(
        Column(header="model", key="model", left=True),
        Column(header="input type", key="modality", fmt="modality", left=True),
        Column(header="task", key="form", fmt="form", left=True),
        Column(header="n", key="n"),
        Column(header="accuracy %", key="accuracy", fmt="pct"),
        Column(header="parse %", key="parse_rate", fmt="pct"),
        Column(header="errors %", key="error_rate", fmt="pct"),
        Column(header="unparsed", key="unparsed"),
        Column(header="answerable-only %", key="answerable_only_accuracy", fmt="pct"),
    ),
)


@report_table(name="request_rates", csv=None, html=REQUEST_RATES)
def _request_rates(inputs: ReportInputs) -> list[dict]:
    order = {(m, f): i for i, (m, f) in enumerate((m, f) for m in MODALITIES for f in FORMS)}
    overall = [c for c in inputs.cells if c["level"] == "overall"]
    return sorted(overall, key=lambda c: (c["model"], order.get((c["modality"], c["form"]), 99)))


@report_table(name="error_size", csv=None, html="error_size.html.j2")
def _error_size(inputs: ReportInputs) -> list[dict]:
    return [c for c in inputs.cells if c["level"] == "family" and c["abs_error_n"]]


@report_table(name="ordering", csv=None, html="ordering.html.j2")
def _ordering(inputs: ReportInputs) -> list[dict]:
    """Ordering answers: mean Kendall tau (0 = chance), share of items in place, share fully right."""
    acc: defaultdict[tuple, dict] = defaultdict(lambda: {"n": 0, "tau": [], "in_place": 0.0, "exact": 0})
    for r in inputs.rows:
        om = r.get("order_match")
        if not om:
            continue
        a = acc[(r["model"], r["modality"])]
        a["n"] += 1
        if om.get("kendall_tau") is not None:
            a["tau"].append(om["kendall_tau"])
        a["in_place"] += om.get("in_place") or 0.0
        a["exact"] += r["verdict"] == Verdict.CORRECT
    return [
        {
            "model": k[0],
            "modality": k[1],
            "n": v["n"],
            "kendall_tau": sum(v["tau"]) / len(v["tau"]) if v["tau"] else None,
            "in_place": v["in_place"] / v["n"],
            "exact": v["exact"] / v["n"],
        }
        for k, v in sorted(acc.items())
    ]


@report_table(name="unanswerable", csv=None, html="unanswerable.html.j2")
def _unanswerable(inputs: ReportInputs) -> list[dict]:
    return [c for c in inputs.cells if c["level"] == "overall" and c["n_answerable"] < c["n"]]


FAMILY_CITY = TableView(
    title="Accuracy per family and city",
    note="Per model, input type and task: accuracy of each family in each city with its 95 % interval "
    "(a model that fails in one region and not in another shows here, not in the pooled tables). "
    "Edits: constraint success rate.",
    columns=(
        Column(header="model", key="model", left=True),
        Column(header="input type", key="modality", fmt="modality", left=True),
        Column(header="task", key="form", fmt="form", left=True),
        Column(header="family", key="family", left=True),
        Column(header="city", key="city", left=True),
        Column(header="n", key="n"),
        Column(header="accuracy %", key="rate", fmt="pct"),
        Column(header="95 % low", key="ci_low", fmt="pct"),
        Column(header="95 % high", key="ci_high", fmt="pct"),
    ),
    empty="no samples scored",
)


@report_table(name="family_city", csv="family_city.csv", html=FAMILY_CITY)
def _family_city(inputs: ReportInputs) -> list[dict]:
    """One row per model, input type, task, family and city: accuracy with its interval."""
    groups: defaultdict[tuple, list[dict]] = defaultdict(list)
    for r in inputs.rows:
        groups[(r["model"], r["modality"], r["form"], r.get("family") or "", r.get("city") or "")].append(r)
    out = []
    for (model, modality, form, family, city), rs in sorted(groups.items()):
        cell = rate_cell(rs)
        out.append(
            {
                "model": model,
                "modality": modality,
                "form": form,
                "family": family,
                "city": city,
                "n": cell["n"],
            }
            | {k: cell[k] for k in ("rate", "ci_low", "ci_high")}
        )
    return out


EXTRACTOR = TableView(
    title="Replies read by an extractor model",
    note="Runs an extractor model read (spatialgap extract): the replies the reading rules left "
    "unparsed were read again from the extractor's answer, with the same rules. Accuracy by the "
    "rules alone beside the assisted figure; the extractor's calls count in the run's cost.",
    columns=(
        Column(header="model", key="model", left=True),
        Column(header="samples", key="samples"),
        Column(header="read by the extractor", key="read_by_extractor"),
        Column(header="rules only %", key="accuracy_rules_only", fmt="pct"),
        Column(header="assisted %", key="accuracy_assisted", fmt="pct"),
    ),
    empty="No extractor model read these runs: every reply was read by the rules.",
)


@report_table(name="extractor", csv=None, html=EXTRACTOR)
def _extractor(inputs: ReportInputs) -> list[dict]:
    return extractor_effect(inputs.rows)
