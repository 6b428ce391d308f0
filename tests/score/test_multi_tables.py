"""The cross-map modalities in the tables, the spatial-gap tests, the figures and the sweep plan:
listed beside the paper's three when they ran, absent (not empty columns) when they did not."""

from __future__ import annotations

import argparse

from scoring.evaluate.cli import add_parser, plan_from_args
from scoring.score import figures
from scoring.score.gap import modality_gap_tests
from scoring.score.report import MODALITY_LABELS
from scoring.score.tables import is_image_edit
from scoring.score.tables_paper import figure2, table1
from scoring.vocab import BASE_MODALITIES, MODALITIES


def _rows(modalities, n=12):
    rows = []
    for m in modalities:
        for k in range(n):
            for form in ("open", "mcq", "edit"):
                ok = (k % 2 == 0) if m in ("geojson", "together") else (k % 4 == 0)
                rows.append(
                    {
                        "model": "m",
                        "city": "c",
                        "id": f"c-{'edit' if form == 'edit' else 'qa'}-T01-{k:03d}",
                        "scene": f"s{k}",
                        "modality": m,
                        "form": form,
                        "family": "topology",
                        "relation": "T01",
                        "verdict": "correct" if ok else "wrong",
                        "answerable": True,
                        "raster_tolerant": ok
                        if form == "edit" and m not in ("geojson", "together")
                        else None,
                    }
                )
    return rows


def test_table1_shows_cross_map_modalities_only_when_run():
    base = table1(_rows(BASE_MODALITIES))
    assert base["modalities"] == ["geojson", "image", "together"] and len(base["columns"]) == 9
    both = table1(_rows(MODALITIES))
    assert both["modalities"] == ["geojson", "image", "together", "image-multi", "image-context"]
    cells = dict(zip(both["columns"], both["rows"][0]["cells"], strict=True))
    for m in ("image-multi", "image-context"):
        assert cells[(m, "open")]["rate"] == 0.25
        assert "strict" in cells[(m, "edit")]  # pixel edits: raster-tolerant headline, strict beside
    assert all(m in MODALITY_LABELS for m in MODALITIES)


def test_pixel_edits_of_every_map_modality_count_as_image_edits():
    assert [m for m in MODALITIES if is_image_edit({"form": "edit", "modality": m})] == [
        "image",
        "image-multi",
        "image-context",
    ]


def test_gap_tests_pair_each_cross_map_setting_with_the_single_map():
    pairs = {(t["first"], t["second"]) for t in modality_gap_tests(_rows(MODALITIES))}
    assert ("image", "image-multi") in pairs and ("image", "image-context") in pairs
    assert ("geojson", "image") in pairs


def test_figure_2_draws_the_cross_map_bars():
    fig = figures.fig_qa_accuracy(figure2(_rows(MODALITIES)))
    assert fig is not None and figures.figure_uri(fig).startswith("data:image/png;base64,")
    assert fig.axes[0].get_legend().get_texts()[-1].get_text() == "image-context"


def test_figure_files_are_the_same_bytes_each_time(tmp_path):
    """PNG, SVG and PDF carry no date, no software and no random clip-path ids: the same
    verdicts give the same files."""
    written = []
    for d in ("a", "b"):
        (tmp_path / d).mkdir()
        fig = figures.fig_qa_accuracy(figure2(_rows(MODALITIES)))
        written.append([p.read_bytes() for p in figures.write_figure(fig, tmp_path / d / "fig")])
    assert [len(w) for w in written[0]] == [len(w) for w in written[1]]
    assert written[0] == written[1]
    assert b"clip-path" in written[0][1]  # the SVG has the ids a random salt would change


def test_figure_2_legend_lists_only_the_input_types_that_ran():
    fig = figures.fig_qa_accuracy(figure2(_rows(("geojson", "image"))))
    assert fig is not None
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["geojson", "image"]


def _plan(tmp_path, *extra):
    p = argparse.ArgumentParser()
    add_parser(p.add_subparsers())
    return plan_from_args(p.parse_args(["evaluate", "--out", str(tmp_path), *extra]))


def test_evaluate_runs_the_paper_modalities_unless_the_cross_map_ones_are_asked_for(tmp_path):
    plan = _plan(tmp_path)
    assert plan.modalities == BASE_MODALITIES and plan.map_sets() == ()
    plan = _plan(tmp_path, "--modalities", "geojson,image-multi,image-context")
    assert plan.map_sets() == ("image-multi", "image-context")
    by_agent = {p.name: plan.modalities_of(p) for p in plan.participants}
    # only chance answers on maps; tools and centroid compute from the GeoJSON
    assert by_agent["chance"] == ("geojson", "image-multi", "image-context")
    assert by_agent["tools"] == by_agent["centroid"] == ("geojson",)
