"""`spatialgap report RESULTS... --out report.html`: one self-contained HTML file (jinja2 template
in resources/report/, figures embedded as PNG data URIs) and, beside it, one CSV per table drawn
from the same records (table1.csv ... table4.csv, figure2.csv, the tests and the failure tables).

Everything is recomputed from the verdicts of all RESULTS together, with the code that writes
the summaries (scoring.score.tables), so a report of one RESULTS matches its summary.json."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import jinja2

from scoring.errors import InputError, OutputError
from scoring.formats.journal import sample_index_of
from scoring.paths import RESOURCES_DIR
from scoring.relations.paper import DEVIATIONS
from scoring.score import agreement, figures
from scoring.score.conditions import NOT_REPORTED
from scoring.score.failures import CAUSE_LABELS
from scoring.score.gallery import gallery
from scoring.score.gap import ALPHA, CORRECTION
from scoring.score.pooling import DEVIATIONS_ANCHOR, column_deviations
from scoring.score.report_tables import (
    FORM_LABELS,
    MODALITY_LABELS,
    ReportInputs,
    cell_text,
    compute_tables,
    load_tables,
    p_text,
    pct,
    write_tables_csv,
)
from scoring.score.results import load_results
from scoring.score.stats import MCNEMAR_RULES
from scoring.score.tables_paper import NOT_RUN, pool_note
from scoring.support.files import write_atomic


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
            # repeated sampling: each repeat (sample index) is a sample of its own
            sample = (
                r.get("city"),
                r.get("model"),
                r.get("modality"),
                r.get("form"),
                r.get("id"),
                sample_index_of(r),
            )
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


def _selfcheck_states(summaries: list[dict]) -> list[str]:
    return [
        "not run" if s["selfcheck"] is None else ("passed" if s["selfcheck"]["passed"] else "FAILED")
        for s in summaries
    ]


def build_context(
    results_dirs: list, *, mcnemar_rule: str = "exact", labels: dict[str, str] | None = None
) -> dict:
    """The report template's context: every registered table (`tables`, their `views`), the
    figures drawn from them and what the header, gallery and deviations show."""
    if mcnemar_rule not in MCNEMAR_RULES:
        raise InputError(f"McNemar rule must be one of {', '.join(MCNEMAR_RULES)}, got {mcnemar_rule!r}")
    summaries, rows = _load(results_dirs, labels)
    conditions = [c for s in summaries for c in (s["run_conditions"] or [])]
    inputs = ReportInputs(rows=rows, summaries=summaries, conditions=conditions, mcnemar_rule=mcnemar_rule)
    tables, views = compute_tables(inputs)
    figs = figures.draw_all(
        fig2=tables["figure2"],
        fig2b=tables["figure2b"],
        fig3b=tables["figure3b"],
        table4=tables["table4"],
        table2=tables["table2_pooled"],
    )
    protocols = sorted({str((s.get("benchmark") or {}).get("protocol") or "spatialgap") for s in summaries})
    return {
        "generated": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "summaries": summaries,
        "selfcheck_states": _selfcheck_states(summaries),
        "n_samples": len(rows),
        "models": sorted({r["model"] for r in rows}),
        "cities": tables["table2"]["cities"],
        "tables": tables,
        "views": views,
        "report_tables": [t for t in load_tables().values() if t.template],
        "mcnemar_rule": mcnemar_rule,
        "correction": CORRECTION,
        "alpha": ALPHA,
        "cause_labels": CAUSE_LABELS,
        "figure_objects": figs,
        "gallery": [
            {**case, "figure": figures.figure_uri(case["figure"]) if case["figure"] is not None else None}
            for case in gallery(rows, [str((s.get("benchmark") or {}).get("path")) for s in summaries])
        ],
        "conditions": sorted(
            conditions, key=lambda c: (c["model"], str(c.get("city")), str(c["modality"]), str(c["task"]))
        ),
        "not_reported": NOT_REPORTED,
        "figs": {k: figures.figure_uri(f) if f is not None else None for k, f in figs.items()},
        "pool_note": pool_note,
        "protocols": protocols,
        # per Table 1 / 3-4 column: the listed deviations its items fall under (paper's too)
        "deviation": lambda m, f: sorted({d for p in protocols for d in column_deviations(m, f, p)}),
        "deviations": [d for d in DEVIATIONS if set(d.protocols) & set(protocols)],
        "deviations_anchor": DEVIATIONS_ANCHOR,
        "relations_doc": (RESOURCES_DIR / "relations.md").as_uri() + "#" + DEVIATIONS_ANCHOR,
        "form_labels": FORM_LABELS,
        "modality_labels": MODALITY_LABELS,
        "not_run": NOT_RUN,
        "pct": pct,
        "p": p_text,
        "cell_text": cell_text,
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
    out_html: str | Path,
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
        if context["tables"]["sample_agreement"]:  # written only when an item was sampled twice
            agreement.write_csv(context["tables"]["sample_agreement"], out.parent)
        for name, fig in context["figure_objects"].items():
            if fig is not None:
                figures.write_figure(fig, out.parent / f"fig_{name}")
    write_atomic(out, html)
    return out
