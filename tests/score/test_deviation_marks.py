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
    every = ["Unanswerable variants", "T09 reading", "T11 reading", "Cities"]
    qa = column_deviations("geojson", "open", "spatialgap")
    assert set(every) | {
        "Topology questions",
        "O06 attributes",
        "M14 as a count",
        "Refusal invitation",
    } == set(qa)
    assert {"Numeric options", "Option rules"} <= set(column_deviations("image", "mcq", "spatialgap"))
    assert "Map-image edits" in column_deviations("image", "edit", "spatialgap")
    assert "Map-image edits" not in column_deviations("geojson", "edit", "spatialgap")


def test_every_deviation_applying_to_paper_marks_a_column_under_paper():
    from scoring.relations.paper import deviations_for
    from scoring.score.pooling import DEVIATION_FORMS

    marked = {
        d
        for m in ("geojson", "image")
        for f in ("open", "mcq", "edit")
        for d in column_deviations(m, f, "paper")
    }
    assert {d.title for d in deviations_for("paper")} == marked
    assert "Numeric options" in column_deviations("image", "mcq", "paper")  # the interval rule is ours
    assert "Map framing" in column_deviations("image", "edit", "paper")
    assert "O06 attributes" not in column_deviations("geojson", "open", "paper")
    assert {d.id for d in deviations_for("spatialgap")} | {d.id for d in deviations_for("paper")} <= set(
        DEVIATION_FORMS
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
    assert len(marks) == 9  # every column: the city set and the T09 / T11 readings apply to both
    if protocol == "paper":
        assert not any("Unanswerable variants" in m for m in marks)
        assert any("Numeric options" in m for m in marks) and any("Map framing" in m for m in marks)
    else:
        # every column holds unanswerable variants; image edits are also operations in pixels
        assert all("Unanswerable variants" in m for m in marks)
        assert any("Map-image edits" in m for m in marks)
