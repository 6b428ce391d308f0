"""`spatialgap report RESULTS... --out report.html`: one self-contained HTML file (jinja2 template
in resources/report/, figures embedded as PNG data URIs) and, beside it, one CSV per table drawn
from the same records (table1.csv ... table4.csv, figure2.csv, the tests and the failure tables).

Everything is recomputed from the verdicts of all RESULTS together, with the code that writes
the summaries (scoring.score.tables), so a report of one RESULTS matches its summary.json."""

from __future__ import annotations

import datetime as _dt
from collections import defaultdict
from pathlib import Path

import jinja2
import markupsafe

from scoring.errors import InputError, OutputError
from scoring.paths import RESOURCES_DIR
from scoring.relations.paper import DEVIATIONS
from scoring.score import figures
from scoring.score.conditions import NOT_REPORTED, flat_conditions, totals_by_model
from scoring.score.failures import CAUSE_LABELS, CAUSES, constraint_misses, failure_table
from scoring.score.gallery import gallery
from scoring.score.gap import ALPHA, CORRECTION, modality_gap_tests
from scoring.score.pooling import DEVIATIONS_ANCHOR, column_deviations
from scoring.score.refusal import refusal_html
from scoring.score.results import load_results
from scoring.score.stats import MCNEMAR_RULES
from scoring.score.tables import mcnemar_pairs, summary_cells
from scoring.score.tables_paper import (
    NOT_RUN,
    figure2,
    figure2b,
    figure3b,
    pool_note,
    table1,
    table2,
    table2_pooled,
    table3,
    table4,
    write_tables_csv,
)
from scoring.support.files import write_atomic
from scoring.vocab import FORMS, MODALITIES, Form

FORM_LABELS = {Form.OPEN: "open", Form.MCQ: "MCQ-4", Form.EDIT: "edit"}
MODALITY_LABELS = {
    "geojson": "GeoJSON",
    "image": "image",
    "together": "Together",
    "image-multi": "multi-map",
    "image-context": "contextual",
}
MISSES_SHOWN = 6  # constraint kinds shown per model x input type (all are in the CSV)


def _pct(v) -> str:
    return "–" if v is None else f"{100 * v:.1f}"


def _p(v) -> str:
    if v is None:
        return "–"
    return "< 1e-300" if v == 0 else f"{v:.3g}"


def parse_labels(values: list[str] | None) -> dict[str, str]:
    """`DIR=NAME` options -> {resolved DIR: NAME}; InputError naming the bad option."""
    out: dict[str, str] = {}
    for v in values or []:
        d, sep, name = v.partition("=")
        if not sep or not d or not name.strip():
            raise InputError(f"--label {v!r}: expected DIR=NAME")
        out[str(Path(d).resolve())] = name.strip()
    return out


def _load(results_dirs: list, labels: dict[str, str] | None = None) -> tuple[list[dict], list[dict]]:
    """(summaries, verdict rows) of every RESULTS; a directory labelled NAME has its models
    renamed MODEL@NAME, so two sweeps of one model are two rows (paired on their shared samples)."""
    labels = labels or {}
    unknown = set(labels) - {str(Path(d).resolve()) for d in results_dirs}
    if unknown:
        raise InputError(f"--label {sorted(unknown)[0]}: not one of the RESULTS given")
    summaries: list[dict] = []
    rows: list[dict] = []
    seen: dict[tuple, str] = {}
    for d in results_dirs:
        summary, rs = load_results(d)
        label = labels.get(str(Path(d).resolve()))
        keep = ("benchmark", "runs", "versions", "selfcheck", "created_at", "gate", "scope", "run_conditions")
        summaries.append({"path": str(d), "label": label, **{k: summary.get(k) for k in keep}})
        protocol = (summary.get("benchmark") or {}).get("protocol")
        conditions: list[dict] = summary.get("run_conditions") or []
        for c in conditions:
            c["model"] = f"{c['model']}@{label}" if label else c["model"]
            c["city"] = (summary.get("benchmark") or {}).get("city")
        for r in rs:
            if label:
                r["model"] = f"{r.get('model')}@{label}"
            if protocol:
                r["protocol"] = protocol  # two sweeps pair a sample only under the same protocol
            sample = (r.get("city"), r.get("model"), r.get("modality"), r.get("form"), r.get("id"))
            if sample in seen:
                raise InputError(
                    f"{d}: sample {r.get('id')} ({r.get('model')}, {r.get('modality')}, "
                    f"{r.get('form')}) is also in {seen[sample]} (to compare two sweeps, name them: "
                    f"--label {d}=NAME)"
                )
            seen[sample] = str(d)
            rows.append(r)
    if not rows:
        raise InputError("no verdicts in " + ", ".join(map(str, results_dirs)))
    return summaries, rows


def _detail_rows(cells: list[dict]) -> list[dict]:
    order = {(m, f): i for i, (m, f) in enumerate((m, f) for m in MODALITIES for f in FORMS)}
    overall = [c for c in cells if c["level"] == "overall"]
    return sorted(overall, key=lambda c: (c["model"], order.get((c["modality"], c["form"]), 99)))


def _ordering_rows(rows: list[dict]) -> list[dict]:
    """Ordering answers: mean Kendall tau (0 = chance), share of items in place, share fully right."""
    acc: defaultdict[tuple, dict] = defaultdict(lambda: {"n": 0, "tau": [], "in_place": 0.0, "exact": 0})
    for r in rows:
        om = r.get("order_match")
        if not om:
            continue
        a = acc[(r["model"], r["modality"])]
        a["n"] += 1
        if om.get("kendall_tau") is not None:
            a["tau"].append(om["kendall_tau"])
        a["in_place"] += om.get("in_place") or 0.0
        a["exact"] += r["verdict"] == "correct"
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


def _selfcheck_states(summaries: list[dict]) -> list[str]:
    return [
        "not run" if s["selfcheck"] is None else ("passed" if s["selfcheck"]["passed"] else "FAILED")
        for s in summaries
    ]


# long: the report template's context, one key per section
def build_context(
    results_dirs: list, *, mcnemar_rule: str = "exact", labels: dict[str, str] | None = None
) -> dict:
    if mcnemar_rule not in MCNEMAR_RULES:
        raise InputError(f"McNemar rule must be one of {', '.join(MCNEMAR_RULES)}, got {mcnemar_rule!r}")
    summaries, rows = _load(results_dirs, labels)
    conditions = [c for s in summaries for c in (s["run_conditions"] or [])]
    cells = summary_cells(rows, levels=("overall", "family"))
    t2, t2p, t4 = table2(rows), table2_pooled(rows), table4(rows)
    gap = modality_gap_tests(rows, mcnemar_rule)
    misses = constraint_misses(rows)
    top_misses: dict[tuple, list[dict]] = defaultdict(list)
    for m in misses:  # most missed first within each model x input type
        key = (m["model"], m["modality"])
        if m["missed"] and len(top_misses[key]) < MISSES_SHOWN:
            top_misses[key].append(m)
    failures = failure_table(rows)
    fig2 = figure2(rows)
    fig2b, fig3b = figure2b(rows), figure3b(rows)
    t1, t3, t4m = table1(rows), table3(rows), table4(rows, per_model=True)
    figs = figures.draw_all(fig2=fig2, fig2b=fig2b, fig3b=fig3b, table4=t4, table2=t2p)
    protocols = sorted({str((s.get("benchmark") or {}).get("protocol") or "spatialgap") for s in summaries})
    tables: dict[str, dict | list] = {
        "table1": t1,
        "table2": t2,
        "table2_pooled": t2p,
        "table3": t3,
        "table3_by_model": table3(rows, per_model=True),
        "table4": t4,
        "table4_by_model": t4m,
        "figure2": fig2,
        "figure2b": fig2b,
        "figure3b": fig3b,
        "gap_tests": gap,
        "model_tests": mcnemar_pairs(rows, mcnemar_rule),
        "run_conditions": [flat_conditions(c) for c in conditions],
        "edit_failures": failures,
        "constraint_misses": misses,
    }
    return {
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "summaries": summaries,
        "selfcheck_states": _selfcheck_states(summaries),
        "n_samples": len(rows),
        "models": sorted({r["model"] for r in rows}),
        "cities": t2["cities"],
        "tables": tables,
        "gap_overall": [t for t in gap if t["level"] == "overall"],
        "gap_family": [t for t in gap if t["level"] == "family"],
        "gap_relation": [t for t in gap if t["level"] == "relation"],
        "gap_relation_significant": [t for t in gap if t["level"] == "relation" and t["significant"]],
        "mcnemar_rule": mcnemar_rule,
        "correction": CORRECTION,
        "alpha": ALPHA,
        "top_misses": [{"model": k[0], "modality": k[1], "kinds": v} for k, v in top_misses.items()],
        # the HTML shows the causes that occur; the CSV has every cause
        "causes": [c for c in CAUSES if any(r[c] for r in failures)],
        "cause_labels": CAUSE_LABELS,
        "details": _detail_rows(cells),
        "quality": [c for c in cells if c["level"] == "family" and c["abs_error_n"]],
        "refusal": [c for c in cells if c["level"] == "overall" and c["n_answerable"] < c["n"]],
        "refusal_measures": markupsafe.Markup(refusal_html(rows, MODALITY_LABELS)),  # score/refusal.py
        "ordering": _ordering_rows(rows),
        "figure_objects": figs,
        "gallery": [
            {**case, "figure": figures.figure_uri(case["figure"]) if case["figure"] is not None else None}
            for case in gallery(rows, [str((s.get("benchmark") or {}).get("path")) for s in summaries])
        ],
        "conditions": sorted(
            conditions, key=lambda c: (c["model"], str(c.get("city")), str(c["modality"]), str(c["task"]))
        ),
        "condition_totals": totals_by_model(conditions),
        "not_reported": NOT_REPORTED,
        "figs": {k: figures.figure_uri(f) if f is not None else None for k, f in figs.items()},
        "pool_note": pool_note,
        "protocols": protocols,
        # per Table 1 / 3-4 column: the deviations from the paper's items it holds (none under paper)
        "deviation": lambda m, f: sorted({d for p in protocols for d in column_deviations(m, f, p)}),
        "deviations": [d for d in DEVIATIONS if set(d.protocols) & set(protocols)],
        "deviations_anchor": DEVIATIONS_ANCHOR,
        "relations_doc": (RESOURCES_DIR / "relations.md").as_uri() + "#" + DEVIATIONS_ANCHOR,
        "form_labels": FORM_LABELS,
        "modality_labels": MODALITY_LABELS,
        "not_run": NOT_RUN,
        "pct": _pct,
        "p": _p,
    }


def render_html(context: dict) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(RESOURCES_DIR / "report")),
        autoescape=jinja2.select_autoescape(["html", "j2"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2").render(**context)


def write_report(
    results_dirs: list,
    out_html,
    *,
    csv: bool = True,
    mcnemar_rule: str = "exact",
    labels: dict[str, str] | None = None,
) -> Path:
    """Write the self-contained HTML report of one or more RESULTS directories and, with `csv`,
    the tables as CSV files beside it."""
    if not results_dirs:
        raise InputError("no results directory given")
    context = build_context(list(results_dirs), mcnemar_rule=mcnemar_rule, labels=labels)
    html = render_html(context)
    out = Path(out_html)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{out.parent}: cannot create ({exc.strerror})") from None
    if csv:
        write_tables_csv(context["tables"], out.parent)
        for name, fig in context["figure_objects"].items():
            if fig is not None:
                figures.write_figure(fig, out.parent / f"fig_{name}")
    write_atomic(out, html)
    return out
