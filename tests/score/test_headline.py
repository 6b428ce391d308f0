"""One name, one number (issue 28, item 4): every figure the `evaluate` summary prints is the
report's Table 1 cell of the same name, strict CSR and the raster-tolerant rate under distinct
names everywhere (CLI, CSV, report)."""

from __future__ import annotations

import csv
import json
import re
from types import SimpleNamespace
from xml.etree import ElementTree

import pytest
from PIL import Image

from scoring.evaluate.cli import summary_screen
from scoring.score.headline import headline_cells
from scoring.score.report import build_context, write_report


def _rows():
    rows = []
    for model, good in (("alpha", 3), ("beta", 1)):
        for i in range(8):
            for modality, form in (
                ("geojson", "open"),
                ("geojson", "mcq"),
                ("geojson", "edit"),
                ("image", "edit"),
            ):
                ok = i < good * 2
                rows.append(
                    {
                        "id": f"c-{'edit' if form == 'edit' else 'qa'}-M01-{i:03d}",
                        "model": model,
                        "modality": modality,
                        "form": form,
                        "task": "edit" if form == "edit" else "qa",
                        "city": "c",
                        "family": "metric",
                        "relation": "M01",
                        "scene": f"s{i}",
                        "answerable": True,
                        # image edits: strict CSR differs from the raster-tolerant rate
                        "verdict": "correct" if ok and not (modality == "image" and i % 2) else "wrong",
                        **({"raster_tolerant": ok} if form == "edit" else {}),
                    }
                )
    return rows


def test_every_evaluate_figure_is_the_report_cell_of_the_same_name(tmp_path):
    res = tmp_path / "results"
    res.mkdir()
    rows = _rows()
    (res / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (res / "summary.json").write_text(json.dumps({"benchmark": {"city": "c", "manifest_sha256": "x" * 64}}))
    plan = SimpleNamespace(
        cities=["c"],
        modalities=("geojson", "image"),
        tasks=("qa", "edit"),
        participants=[SimpleNamespace(name=m, modalities=("geojson", "image")) for m in ("alpha", "beta")],
    )
    rec = {
        "results": [str(res)],
        "runs": [],
        "seconds": dict.fromkeys(("total", "prepare", "render", "runs", "score", "report"), 0.0),
        "stopped": {},
        "failed_samples": {},
        "report": "r",
    }
    screen = summary_screen(plan, rec).splitlines()
    names = re.findall(r"\S+ (?:open|mcq|edit (?:strict CSR|raster-tolerant))", screen[0])
    assert "image edit raster-tolerant" in names and "image edit strict CSR" in names
    t1 = build_context([res])["tables"]["table1"]
    cols = t1["columns"]
    printed = 0
    for line in screen[1:3]:
        model = line.split()[0]
        values = re.findall(r"(\d+\.\d) %|not run", line)
        row = next(r for r in t1["rows"] if r["model"] == model)
        for name, value in zip(names, values, strict=True):
            modality, form = name.split()[:2]
            cell = row["cells"][cols.index((modality, form))]
            if name.endswith("strict CSR") and "strict" in cell:
                cell = cell["strict"]  # the report's sub-line "strict CSR"
            if value == "":  # printed "not run": the report cell says so too
                assert cell["rate"] is None and cell["note"] == "not run", (model, name)
                continue
            assert value == f"{100 * cell['rate']:.1f}", (model, name)
            printed += 1
    assert printed == 2 * 5  # geojson open, mcq, edit strict CSR; image edit raster-tolerant, strict
    # the two image-edit numbers are different here, and carry different names
    alpha = headline_cells(rows)["alpha"]
    assert alpha["image edit raster-tolerant"]["rate"] != alpha["image edit strict CSR"]["rate"]


def test_strict_and_raster_rates_have_distinct_names_in_the_csv_and_report(tmp_path):
    res = tmp_path / "results"
    res.mkdir()
    (res / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _rows()))
    (res / "summary.json").write_text(json.dumps({"benchmark": {"city": "c", "manifest_sha256": "x" * 64}}))
    html = write_report([res], tmp_path / "out" / "report.html").read_text()
    assert "raster-tol." in html and "strict CSR" in html
    t1 = list(csv.DictReader((tmp_path / "out" / "table1.csv").open()))
    img = next(r for r in t1 if r["model"] == "alpha" and r["modality"] == "image" and r["form"] == "edit")
    assert img["measure"] == "raster_tolerant_rate" and img["rate"] != img["strict_csr_rate"]
    fig2b = list(csv.DictReader((tmp_path / "out" / "figure2b.csv").open()))
    img = next(r for r in fig2b if r["model"] == "alpha" and r["modality"] == "image")
    assert img["strict_csr"] == img_strict(t1) and img["raster_tolerant_rate"] != img["strict_csr"]
    # the figures beside the report parse: SVG as XML, PDF as a complete PDF, PNG as an image
    out = tmp_path / "out"
    for name in ("figure2", "figure2b", "figure3b"):
        root = ElementTree.parse(out / f"fig_{name}.svg").getroot()
        assert root.tag.endswith("svg")
        pdf = (out / f"fig_{name}.pdf").read_bytes()
        assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
        with Image.open(out / f"fig_{name}.png") as im:
            assert im.info.get("dpi", (0, 0))[0] == pytest.approx(300, abs=1)


def img_strict(t1):
    return next(r for r in t1 if r["model"] == "alpha" and r["modality"] == "image" and r["form"] == "edit")[
        "strict_csr_rate"
    ]
