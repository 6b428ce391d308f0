"""The family x city table shows a model that fails in one region only, gate proposals set floors
at the past results' tenth percentile, and a build without unanswerable items says so."""

from __future__ import annotations

from types import SimpleNamespace

from scoring.relations.unanswerable import unanswerable_lines
from scoring.score.gate import tenth_percentile
from scoring.score.report_catalogue import _family_city


def _rows(city: str, right: int, n: int = 20) -> list[dict]:
    return [
        {
            "id": f"{city}-qa-M01-{i:03d}",
            "model": "m",
            "modality": "geojson",
            "form": "open",
            "family": "metric",
            "city": city,
            "scene": f"{city}{i}",
            "verdict": "correct" if i < right else "wrong",
            "answerable": True,
        }
        for i in range(n)
    ]


def test_family_city_table_shows_a_model_broken_in_one_region_with_intervals():
    table = _family_city(SimpleNamespace(rows=_rows("helsinki", 19) + _rows("lyon", 2)))
    by_city = {r["city"]: r for r in table}
    assert by_city["helsinki"]["rate"] > 0.9 and by_city["lyon"]["rate"] < 0.2
    assert by_city["lyon"]["ci_high"] < by_city["helsinki"]["ci_low"]  # the intervals part


def test_proposed_floor_is_the_tenth_percentile_not_the_middle():
    past = [0.9, 0.91, 0.92, 0.93, 0.5]
    assert abs(tenth_percentile(past) - (0.5 + 0.4 * (0.9 - 0.5))) < 1e-9
    assert tenth_percentile([0.7]) == 0.7


def test_a_build_without_unanswerable_items_says_it_measures_no_refusal():
    lines = unanswerable_lines({"counts": {"unanswerable_qa": 0}})
    assert lines and "measures no refusal" in lines[0]
