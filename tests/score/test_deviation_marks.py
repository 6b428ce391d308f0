"""Comparable or not, said at the table (issue 28, item 5): under `--protocol spatialgap` the
columns whose items differ from the paper's carry a mark linking to the deviations list; under
`--protocol paper` none does."""

from __future__ import annotations

import json
import re

import pytest

from scoring.score.pooling import DEVIATIONS_ANCHOR, column_deviations
from scoring.score.report import write_report


def test_column_deviations_per_protocol():
    every = ["Unanswerable variants"]  # the variants are in every column's items
    qa = [*every, "Topology questions", "O06 attributes"]
    assert column_deviations("geojson", "open", "spatialgap") == qa
    assert "Numeric options" in column_deviations("image", "mcq", "spatialgap")
    assert column_deviations("image", "edit", "spatialgap") == [*every, "Map-image edits"]
    assert column_deviations("geojson", "edit", "spatialgap") == every
    assert all(
        not column_deviations(m, f, "paper") for m in ("geojson", "image") for f in ("open", "mcq", "edit")
    )


def _results(tmp_path, protocol):
    res = tmp_path / protocol
    res.mkdir()
    rows = [
        {
            "id": f"c-{'edit' if form == 'edit' else 'qa'}-T01-{i:03d}",
            "model": "m",
            "modality": modality,
            "form": form,
            "task": "edit" if form == "edit" else "qa",
            "city": "c",
            "family": "topology",
            "relation": "T01",
            "scene": f"s{i}",
            "verdict": "correct" if i % 2 else "wrong",
            "answerable": True,
        }
        for i in range(6)
        for modality in ("geojson", "image")
        for form in ("open", "mcq", "edit")
    ]
    (res / "verdicts.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (res / "summary.json").write_text(
        json.dumps({"benchmark": {"city": "c", "manifest_sha256": "x" * 64, "protocol": protocol}})
    )
    return res


@pytest.mark.parametrize("protocol", ["spatialgap", "paper"])
def test_tables_mark_the_columns_that_differ(tmp_path, protocol):
    html = write_report(
        [_results(tmp_path, protocol)], tmp_path / "out" / protocol / "r.html", csv=False
    ).read_text()
    assert f'id="{DEVIATIONS_ANCHOR}"' in html  # the list is in the report either way
    t1 = html[html.index("<h2>Table 1.") : html.index("<h2>Table 2.")]
    marks = re.findall(
        r'href="#deviations-from-the-paper" title="items differ from the paper\'s: ([^"]+)"', t1
    )
    if protocol == "paper":
        assert marks == []
    else:
        # every column holds unanswerable variants; image edits are also operations in pixels
        assert len(marks) == 9 and all("Unanswerable variants" in m for m in marks)
        assert "Map-image edits, Unanswerable variants" in marks
