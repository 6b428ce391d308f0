"""The report's tables as a registry: each table is one record naming its data function, its CSV
file and its HTML, registered with `@report_table(...)` on the data function. The report computes
every table in registration order (which is also the order of the report's sections), writes each
one that has a CSV file (and its LaTeX twin) beside report.html, and the template renders each
one that has HTML, in a loop.

A new table is one module: its data function decorated with `@report_table`, its HTML either a
`TableView` (the generic renderer: title, note, columns) or a partial in resources/report/tables/,
and the module's name in `MODULES`.

>>> from scoring.score.report_tables import REPORT_TABLES, load_tables
>>> load_tables()["table1"].csv
'table1.csv'
>>> REPORT_TABLES["run_condition"]
Traceback (most recent call last):
...
scoring.support.registry.UnknownNameError: unknown report table 'run_condition' (did you mean run_conditions?)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from scoring.score.latex import latex_text
from scoring.score.tables import summary_cells
from scoring.score.tables_paper import csv_text
from scoring.support.files import write_atomic
from scoring.support.registry import Registry
from scoring.vocab import Form

# The modules that register report tables, imported in this order (the report's section order).
MODULES = ("scoring.score.report_catalogue", "scoring.score.refusal_table", "scoring.score.agreement")

FORM_LABELS = {Form.OPEN: "open", Form.MCQ: "MCQ-4", Form.EDIT: "edit"}
MODALITY_LABELS = {
    "geojson": "GeoJSON",
    "image": "image",
    "together": "Together",
    "image-multi": "multi-map",
    "image-context": "contextual",
}


@dataclass(kw_only=True)
class ReportInputs:
    """What a table's data function reads: every verdict row of the report, the results'
    summaries and run conditions, the paired-test rule, and the tables computed before it."""

    rows: list[dict]
    summaries: list[dict] = field(default_factory=list)
    conditions: list[dict] = field(default_factory=list)
    mcnemar_rule: str = "exact"
    tables: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def cells(self) -> list[dict]:
        """The overall and per-family summary cells (shared by several tables)."""
        return summary_cells(self.rows, levels=("overall", "family"))


@dataclass(frozen=True, kw_only=True)
class Column:
    """One column of the generic renderer: its header, the row key it shows and how.
    `fmt`: "text" (as is), "pct" (a rate in %), "p" (a p-value), "modality" or "form" (the
    report's labels)."""

    header: str
    key: str
    fmt: str = "text"
    left: bool = False  # text columns are left-aligned, numbers right


FORMATS = ("text", "pct", "p", "modality", "form")


@dataclass(frozen=True, kw_only=True)
class TableView:
    """The generic HTML of a table whose data is a list of flat rows: a heading, a note, one
    column per `Column`; `empty` is the one row shown when there are no rows (None: none)."""

    title: str
    columns: tuple[Column, ...]
    note: str = ""
    empty: str | None = None

    def __post_init__(self) -> None:
        bad = [c.fmt for c in self.columns if c.fmt not in FORMATS]
        if bad:
            raise ValueError(f"column format {bad[0]!r}: expected one of {', '.join(FORMATS)}")


@dataclass(frozen=True, kw_only=True)
class ReportTable:
    """A registered report table.

    - `data(inputs)`: the table (a list of flat rows, or any structure its `records` flattens).
    - `csv`: the CSV file written beside report.html (a LaTeX table `<stem>.tex` with it), or None.
    - `records(data)`: the CSV's rows (one dict a line); default: the data itself.
    - `html`: a `TableView`, a partial's file name in resources/report/tables/ (it reads its data
      as `tables.<name>`, its `view` as `view`, and the report template's macros), or None.
    - `view(inputs, data)`: what the HTML shows beyond the data (e.g. the top rows), or None.
    """

    name: str
    data: Callable[[ReportInputs], Any]
    csv: str | None
    html: TableView | str | None
    records: Callable[[Any], list[dict]] = list
    view: Callable[[ReportInputs, Any], Any] | None = None

    @property
    def template(self) -> str | None:
        """The template the report includes for this table."""
        if isinstance(self.html, TableView):
            return "tables/_generic.html.j2"
        return None if self.html is None else f"tables/{self.html}"


REPORT_TABLES: Registry[ReportTable] = Registry("report table")


def report_table(
    *,
    name: str,
    csv: str | None,
    html: TableView | str | None,
    records: Callable[[Any], list[dict]] = list,
    view: Callable[[ReportInputs, Any], Any] | None = None,
) -> Callable[[Callable[[ReportInputs], Any]], Callable[[ReportInputs], Any]]:
    """Register the decorated data function as the report table `name` (see `ReportTable`)."""
    if csv is not None and not csv.endswith(".csv"):
        raise ValueError(f"report table {name!r}: its CSV file name must end in .csv, got {csv!r}")

    def deco(data: Callable[[ReportInputs], Any]) -> Callable[[ReportInputs], Any]:
        REPORT_TABLES.add(
            name, ReportTable(name=name, data=data, csv=csv, html=html, records=records, view=view)
        )
        return data

    return deco


def load_tables() -> Registry[ReportTable]:
    """The registry with every module of `MODULES` imported."""
    for module in MODULES:
        importlib.import_module(module)
    return REPORT_TABLES


def compute_tables(inputs: ReportInputs) -> tuple[dict[str, Any], dict[str, Any]]:
    """(data, view) of every registered table by name, in registration order; each table sees
    the ones before it in `inputs.tables`."""
    views: dict[str, Any] = {}
    for name, table in load_tables().items():
        inputs.tables[name] = data = table.data(inputs)
        views[name] = table.view(inputs, data) if table.view else None
    return inputs.tables, views


def table_records(name: str, data: Any) -> list[dict]:
    """The flat CSV records of the registered table `name`."""
    return load_tables()[name].records(data)


def write_tables_csv(tables: Mapping[str, Any], out_dir: Path, *, latex: bool = True) -> list[Path]:
    """The CSV file (and, with `latex`, the booktabs `.tex` twin) of every registered table in
    `tables` that has one, in out_dir (atomic writes); returns the paths."""
    paths = []
    for name, data in tables.items():
        table = load_tables()[name]
        if table.csv is None:
            continue
        records = table.records(data)
        p = out_dir / table.csv
        write_atomic(p, csv_text(records))
        paths.append(p)
        if latex:
            stem = table.csv.removesuffix(".csv")
            t = out_dir / f"{stem}.tex"
            write_atomic(t, latex_text(records, caption=f"Spatial Gap: {stem.replace('_', ' ')}"))
            paths.append(t)
    return paths


def pct(v: float | None) -> str:
    """A rate in % with one decimal; "–" for none."""
    return "–" if v is None else f"{100 * v:.1f}"


def p_text(v: float | None) -> str:
    """A p-value with three significant digits; "–" for none."""
    if v is None:
        return "–"
    return "< 1e-300" if v == 0 else f"{v:.3g}"


def cell_text(value: Any, fmt: str) -> str:
    """A generic column's cell: `value` shown as `fmt` says (see `Column`)."""
    if fmt == "pct":
        return pct(value)
    if fmt == "p":
        return p_text(value)
    if fmt == "modality":
        return MODALITY_LABELS.get(value, value)
    if fmt == "form":
        return FORM_LABELS.get(value, value)
    return "" if value is None else str(value)
