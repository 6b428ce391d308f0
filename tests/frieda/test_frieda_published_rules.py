"""`--rules frieda`: the rules the published FRIEDA verdicts follow, on crafted records and on the
published files (>= 99 % agreement on distance and on cardinal records)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest

from scoring import frieda
from scoring.frieda.cli import add_parser
from scoring.frieda.published import RULE_SETS, score_by, score_record_frieda
from tests.conftest import SHARED

# The published files live beside the main checkout; a worktree may point at them explicitly.
FRIEDA_DIR = Path(os.environ.get("SPATIALGAP_SHARED_DATA") or SHARED) / "frieda"


def rec(kind: str, expected: list, response: list, **kw: object) -> dict:
    return {
        "question_ref": kw.get("ref", "q_x"),
        "question_text": "Q?",
        "expected_answer": expected,
        "_response": response,
        "answer_type": kind,
        "spatial_relationship": "Distance",
        "map_count": "Single",
        **{k: v for k, v in kw.items() if k != "ref"},
    }


def verdict(kind: str, expected: list, response: list) -> str:
    return score_record_frieda(rec(kind, expected, response))["verdict"]


@pytest.mark.parametrize(
    "expected, response, v",
    [
        (["1500 m"], ["2015-07", "2015-11", "1200m"], "correct"),  # the last part holding a number
        (["3 km"], ["3.6 kilometers"], "wrong"),  # 0.6/3 is just over 0.2 in floating point
        (["1500 m"], ["1200 m"], "correct"),  # 300/1500 == 0.2 exactly
        (["7500 Feet"], ["6,500 Feet"], "wrong"),  # no thousands separator: 6
        (["1.2 km"], ["1200 m"], "wrong"),  # no unit conversion
        (["40 m"], ["forty metres"], "wrong"),  # digits only
        (["0 m"], ["0"], "correct"),
    ],
)
def test_distance_follows_the_published_rule(expected, response, v):
    assert verdict("distance", expected, response) == v


def test_cardinal_is_an_exact_label_and_textual_a_set_match():
    labels = ["southwest", "south", "south west", "west"]
    assert verdict("cardinal", labels, ["jackson county", "south west"]) == "correct"
    assert verdict("cardinal", labels, ["south west."]) == "wrong"  # punctuation counts
    assert verdict("cardinal", labels, ["South West"]) == "wrong"  # so does case
    assert verdict("textual", ["Zone A", "Zone B"], [" zone b", "ZONE A "]) == "correct"
    assert verdict("textual", ["Zone A"], ["Zone A."]) == "wrong"
    judged = score_record_frieda(rec("textual", ["A"], ["B"]), judge=lambda q, e, r: True)
    assert judged["verdict"] == "correct" and judged["judge_used"]


def test_rule_sets_differ_where_ours_read_more():
    r = rec("distance", ["1.2 km"], ["1200 m"])
    assert score_by(RULE_SETS[0], r)["verdict"] == "correct"  # ours convert units
    assert score_by("frieda", r)["verdict"] == "wrong"
    with pytest.raises(ValueError, match="unknown rule set"):
        score_by("other", r)


def test_cli_rules_option_and_extra_categories(tmp_path, capsys):
    records = [
        rec("distance", ["10 m"], ["11 m"], correct=True, ref="q1", domain="mining", map_elements=["scale"]),
        rec("cardinal", ["north"], ["North"], correct=True, ref="q2", domain="energy", map_elements=[]),
    ]
    path = tmp_path / "m__m_wo_contextual.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    parser = argparse.ArgumentParser()
    add_parser(parser.add_subparsers())
    args = parser.parse_args(["frieda-score", str(path), "--out", str(tmp_path / "o"), "--rules", "frieda"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "1 distance/cardinal records not reproduced" in out and "q2" in out
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["rules"] == "frieda"
    (missed,) = summary["unreproduced"]
    assert missed["file"] == path.name
    assert (missed["question_ref"], missed["answer_type"]) == ("q2", "cardinal")
    assert set(summary["overall"]["by_domain"]) == {"mining", "energy"}
    assert set(summary["overall"]["by_map_elements"]) == {"scale", "None"}
    assert "by_annotator_agreement" not in summary["overall"]  # absent fields get no breakdown


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    files = sorted(FRIEDA_DIR.glob("*.json")) if FRIEDA_DIR.is_dir() else []
    if not files:
        pytest.skip(f"FRIEDA data not found at {FRIEDA_DIR} (shared data folder absent)")
    return frieda.score_files(files, tmp_path_factory.mktemp("fr"), rules="frieda")


@pytest.mark.shared
@pytest.mark.parametrize("kind", ["distance", "cardinal"])
def test_published_verdicts_reproduced(published, kind):
    overall = published["overall"]["by_answer_type"][kind]
    assert overall["n"] > 900
    assert overall["agreement"] >= 0.99, overall
    missed = [m for m in published["unreproduced"] if m["answer_type"] == kind]
    assert len(missed) == round((1 - overall["agreement"]) * overall["n"])
