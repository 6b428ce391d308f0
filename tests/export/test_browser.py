"""The per-sample browser: every scored sample once, joined with its reply, tokens, latency and
map; an edit's reference and reply drawn in the map's pixels; report cells link to it; no reply
text can break out of the page's data."""

from __future__ import annotations

import json
import re

from scoring.browse import render_browser, write_browser
from scoring.score.report import write_report
from scoring.support.files import read_jsonl


def _data(html: str) -> list[dict]:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert m, "no data element"
    return json.loads(m.group(1))


def test_every_sample_is_shown_with_its_reply_map_and_verdict(scored, tmp_path):
    _, results = scored
    out = write_browser([results], tmp_path / "browser.html")
    samples = _data(out.read_text(encoding="utf-8"))
    rows = [r for _, r in read_jsonl(results / "verdicts.jsonl")]
    assert len(samples) == len(rows)
    assert sorted((s["model"], s["modality"], s["form"], s["id"], s["verdict"]) for s in samples) == sorted(
        (r["model"], r["modality"], r["form"], r["id"], r["verdict"]) for r in rows
    )
    for s in samples:
        assert s["question"]["text"] and s["reply"] and s["status"] == "ok"
        assert s["tokens"][0] > 0 and s["latency_s"] >= 0
        assert (tmp_path / s["map"]).resolve().is_file()  # relative to the page
    edits = [s for s in samples if s["form"] == "edit"]
    assert edits and all(s["edit_reference"].startswith("M") for s in edits)
    tools = [s for s in edits if s["model"] == "tools" and s["verdict"] == "correct"]
    assert tools and all(s["edit_reply"] for s in tools)  # the reply's edited target, drawn
    nums = [float(v) for s in tools for v in re.findall(r"-?\d+\.\d", s["edit_reply"])]
    assert nums and all(-200 < v < 1536 + 200 for v in nums)  # in (or just beside) the map's pixels


def test_report_cells_link_to_their_samples(scored, tmp_path):
    _, results = scored
    report = write_report([results], tmp_path / "report.html", csv=False)
    html = report.read_text(encoding="utf-8")
    links = set(re.findall(r'href="(browser\.html#[^"]+)"', html))
    assert "browser.html#model=tools&modality=geojson&form=open" in links
    assert any(link.startswith("browser.html#relation=M01&modality=") for link in links)


def test_reply_text_cannot_end_the_data_element():
    sample = {"id": "x", "reply": "</script><script>alert(1)</script>", "verdict": "wrong"}
    html = render_browser([sample], report=None)
    assert html.count("</script>") == 2  # the data element's and the page script's own
    assert _data(html)[0]["reply"] == sample["reply"]


def test_unanswerable_variants_show_why_and_their_refusal_verdicts(scored, small_bench, tmp_path):
    from scoring.formats.exported import instance_row

    _, results = scored
    samples = _data(write_browser([results], tmp_path / "browser.html").read_text(encoding="utf-8"))
    variants = [s for s in samples if s["question"].get("unanswerable")]
    assert {s["form"] for s in variants} >= {"open", "mcq", "edit"}  # QA and an infeasible edit
    assert all(
        s["question"]["unanswerable"]["kind"] and s["question"]["unanswerable"]["reason"] for s in variants
    )
    # tools computes from coordinates: from the GeoJSON it refuses every variant (it reads no map)
    assert {s["verdict"] for s in variants if s["model"] == "tools" and s["modality"] == "geojson"} == {
        "correct_refusal"
    }
    assert not [
        s for s in samples if not s["question"].get("unanswerable") and s["verdict"] == "correct_refusal"
    ]
    # the export carries the variant's record as a column of its own (null on answerable items)
    lines = [json.loads(x) for x in (small_bench / "qa.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [instance_row(i, map_cell=None, sha256=None, prompts="{}") for i in lines]
    assert {json.loads(r["unanswerable"])["kind"] for r in rows if r["unanswerable"]}
    assert all(
        (r["unanswerable"] is None) == ("unanswerable" not in i) for r, i in zip(rows, lines, strict=True)
    )
