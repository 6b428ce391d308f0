"""Walk-through: a new report table is one module (plus its name in
`scoring.score.report_tables.MODULES`): its data function decorated with `@report_table`, naming
its CSV file and its HTML (here the generic `TableView` renderer). Nothing else is edited: the
report computes it, writes its CSV (and LaTeX) beside report.html and renders its section after
the tables registered before it. Run in a fresh interpreter, since registering it changes the
registry."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

# The whole extension: what a contributor writes in scoring/score/<module>.py.
EXTENSION = """
from collections import Counter

from scoring.score.report_tables import Column, ReportInputs, TableView, report_table
from scoring.vocab import VERDICTS

VIEW = TableView(
    title="Verdicts per model and input type",
    note="How many samples got each verdict.",
    columns=(
        Column(header="model", key="model", left=True),
        Column(header="input type", key="modality", fmt="modality", left=True),
        *(Column(header=str(v), key=str(v)) for v in VERDICTS),
    ),
    empty="nothing scored",
)


@report_table(name="verdict_mix", csv="verdict_mix.csv", html=VIEW)
def verdict_mix(inputs: ReportInputs) -> list[dict]:
    counts = Counter((r["model"], r["modality"], r["verdict"]) for r in inputs.rows)
    keys = sorted({(m, mod) for m, mod, _ in counts})
    return [
        {"model": m, "modality": mod, **{str(v): counts[(m, mod, v)] for v in VERDICTS}} for m, mod in keys
    ]
"""

SCRIPT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])  # where the contributor's module is
from scoring.score import report_tables
report_tables.MODULES = (*report_tables.MODULES, "verdict_mix")  # the one line naming it
from scoring.score.report import write_report

res = Path(sys.argv[1])
write_report([res], res.parent / "report" / "report.html")
try:
    report_tables.table_records("verdict_mx", [])
except KeyError as exc:
    unknown = str(exc)
print(json.dumps({"tables": list(report_tables.REPORT_TABLES), "unknown": unknown}))
"""


def _rows() -> list[dict]:
    rows = []
    for model, right in (("alpha", 3), ("beta", 1)):
        for modality in ("geojson", "image"):
            for i in range(4):
                rows.append(
                    {
                        "id": f"c-qa-M01-{i:03d}",
                        "model": model,
                        "modality": modality,
                        "form": "open",
                        "task": "qa",
                        "city": "c",
                        "family": "metric",
                        "relation": "M01",
                        "scene": f"s{i}",
                        "answerable": True,
                        "verdict": "correct" if i < right else ("unparsed" if i == 3 else "wrong"),
                    }
                )
    return rows


def test_a_new_report_table_needs_only_its_module(tmp_path):
    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "verdict_mix.py").write_text(EXTENSION)
    res = tmp_path / "results"
    res.mkdir()
    (res / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    (res / "summary.json").write_text(json.dumps({"benchmark": {"city": "c", "manifest_sha256": "x" * 64}}))
    r = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(res), str(ext)], capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["tables"][-1] == "verdict_mix"
    assert result["unknown"] == "unknown report table 'verdict_mx' (did you mean verdict_mix?)"

    out = tmp_path / "report"
    with (out / "verdict_mix.csv").open(newline="") as f:
        lines = list(csv.DictReader(f))
    assert [(x["model"], x["modality"], x["correct"], x["wrong"], x["unparsed"]) for x in lines] == [
        ("alpha", "geojson", "3", "0", "1"),
        ("alpha", "image", "3", "0", "1"),
        ("beta", "geojson", "1", "2", "1"),
        ("beta", "image", "1", "2", "1"),
    ]
    assert (out / "verdict_mix.tex").read_text().count("alpha") == 2

    html = (out / "report.html").read_text()
    section = html.index("<h2>Verdicts per model and input type</h2>")
    # after the tables registered before it, before the case gallery
    before, gallery = (
        html.index("<h2>Unanswerable instances and refusals</h2>"),
        html.index('id="case-gallery"'),
    )
    assert before < section < gallery
    assert '<p class="note">How many samples got each verdict.</p>' in html
    header = '<th class="l">model</th><th class="l">input type</th><th>correct</th><th>wrong</th>'
    assert header in html[section:]
    row = '<tr><td class="l">beta</td><td class="l">image</td><td>1</td><td>2</td><td>1</td><td>0</td>'
    assert row in html[section:]
