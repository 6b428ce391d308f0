"""FRIEDA free-form scoring: crafted records, CLI hook, robustness, and the real published files."""

from __future__ import annotations

import argparse
import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scoring import frieda
from scoring.errors import InputError

FRIEDA_DIR = pathlib.Path(__file__).resolve().parents[3] / "shared" / "data" / "frieda"

NE_SET = ["east", "north", "north east", "northeast"]  # centre NE
W_SET = ["north west", "northwest", "south west", "southwest", "west"]  # centre W


def rec(kind, expected, response, correct=False, question="What is it?", **kw):
    r = {
        "question_ref": kw.pop("ref", "q_x"),
        "question_text": question,
        "expected_answer": expected,
        "_response": response,
        "answer_type": kind,
        "spatial_relationship": kw.pop("rel", "Distance"),
        "map_count": kw.pop("maps", "Single"),
        "extracted_ans": "; ".join(response),
        "correct": correct,
    }
    r.update(kw)
    return r


def verdict(r, judge=None):
    return frieda.score_record(r, judge)["verdict"]


# ------------------------------------------------------------------ distance


@pytest.mark.parametrize(
    "expected,response,v",
    [
        (["1 km"], ["1250m."], "wrong"),  # 25 % above
        (["1.5 km"], ["1200m."], "correct"),  # 1200 vs 1500 -> exactly 20 % below
        (["0.75 km"], ["750 m"], "correct"),  # unit conversion
        (["2900'"], ["0.5 miles"], "correct"),  # 2900 ft = 884 m, 0.5 mi = 805 m
        (["2400 Feet"], ["2,500 feet"], "correct"),
        (["22.5MILES"], ["20 miles"], "correct"),
        (["18Miles"], ["about 10 miles"], "wrong"),
        (["3.2 km"], ["2 km"], "wrong"),
        (["8.5 km"], ["The distance between Dome and Cochenour is approximately 8 kilometers."], "correct"),
        (["5 km"], ["two kilometres"], "wrong"),
        (["2 km"], ["two kilometres"], "correct"),
        (["3.3 km"], ["Musk Metals Corp. 100%", "3 km"], "correct"),  # part without a distance ignored
        (["3 km"], ["2 km", "3 km"], "wrong"),  # several different distances
        (["21 km"], ["Cannot be determined from the provided map."], "wrong"),
        (["21 km"], ["I need to look at the map"], "unparsed"),
    ],
)
def test_distance(expected, response, v):
    assert verdict(rec("distance", expected, response)) == v


def test_distance_boundary_is_inclusive():
    assert verdict(rec("distance", ["1000 m"], ["1.2 km"])) == "correct"
    assert verdict(rec("distance", ["1000 m"], ["1.21 km"])) == "wrong"
    assert verdict(rec("distance", ["1000 m"], ["800 m"])) == "correct"
    assert verdict(rec("distance", ["1000 m"], ["799 m"])) == "wrong"


def test_distance_bare_number_takes_expected_or_question_unit():
    assert verdict(rec("distance", ["15miles"], ["14"])) == "correct"
    # expected without unit: the question's unit is used, response in km is converted
    q = "What is the approximate distance, in miles, between the dams?"
    assert verdict(rec("distance", ["10"], ["16 km"], question=q)) == "correct"
    # neither side has a unit: compared as written
    assert verdict(rec("distance", ["25000"], ["20000"], question="Unit is not required.")) == "correct"


def test_distance_prose_with_several_numbers():
    r = rec(
        "distance",
        ["3 Miles"],
        [
            "The '140 dB / 4.17 psf' boundary is approximately 1 mile from the "
            "'120 dB / 0.42 psf' boundary."
        ],
    )
    out = frieda.score_record(r)
    assert out["verdict"] == "wrong" and "1 mile" in out["reason"]
    r = rec("distance", ["3 km"], ["It is about 2 km, or maybe 4 km."])
    assert frieda.score_record(r)["verdict"] == "unparsed"


def test_prompt_echo_and_think_are_stripped():
    echo = (
        "<your answer>'. \nuser\n\nWhat is the distance from A to B (about 5 km)?\nassistant\n"
        "The distance is approximately 1.5 kilometers."
    )
    assert verdict(rec("distance", ["1.5 km"], [echo])) == "correct"
    think = "<think>maybe 9 km or 12 km</think>\n1.4 km"
    assert verdict(rec("distance", ["1.5 km"], [think])) == "correct"
    assert verdict(rec("cardinal", NE_SET, ["<|begin_of_box|>east<|end_of_box|>"])) == "correct"


# ------------------------------------------------------------------ cardinal


def test_expected_centre():
    assert frieda.expected_directions(NE_SET) == ("NE", {"N", "NE", "E"})
    assert frieda.expected_directions(W_SET) == ("W", {"NW", "W", "SW"})
    assert frieda.expected_directions(["north"])[0] == "N"


@pytest.mark.parametrize(
    "response,v",
    [
        (["north east"], "correct"),
        (["north"], "correct"),
        (["east."], "correct"),
        (["North-East"], "correct"),
        (["NE"], "correct"),
        (["south east"], "wrong"),
        (["west"], "wrong"),
        (["the tower is located to the northeast of the road."], "correct"),
        (["north", "south"], "wrong"),  # multiple directions
        (["east-west"], "wrong"),
        (["eureka standard mine", "north"], "correct"),  # part without a direction is ignored
        (["information not available in the provided images."], "wrong"),
        (["it is oriented to the left of the shelter"], "unparsed"),
        (["north-northeast"], "wrong"),
    ],
)
def test_cardinal(response, v):
    assert verdict(rec("cardinal", NE_SET, response, rel="Orientation")) == v


def test_cardinal_reasons():
    out = frieda.score_record(rec("cardinal", NE_SET, ["north or north east"]))
    assert out["verdict"] == "wrong" and out["reason"].startswith("multiple directions named")
    assert frieda.score_record(rec("cardinal", NE_SET, ["north"]))["reason"].startswith("N (adjacent")


# ------------------------------------------------------------------ textual


@pytest.mark.parametrize(
    "expected,response,v",
    [
        (["Anthropogenic Noise"], ["anthropogenic noise."], "correct"),
        (["The Evergold Corp."], ["Evergold Corp"], "correct"),
        (["Filón Sur"], ["Filon Sur"], "correct"),
        (["7"], ["seven"], "correct"),
        (["A"], ["A"], "correct"),  # a lone article-like label survives
        (["A"], ["B"], "wrong"),
        (["17946", "17947"], ["17947", "17946"], "correct"),  # order of parts is irrelevant
        (["17946", "17947"], ["17946"], "wrong"),  # missing part
        (["17946", "17947"], ["17946", "17947", "20018"], "wrong"),  # extra part
        (["23RD AVE", "E PIKE ST"], ["23rd Ave and E Pike St"], "correct"),  # split fallback
        (["Maritime, Manufacturing & Logistics"], ["Maritime, Manufacturing & Logistics"], "correct"),
        (["Deal Farm"], ["Deal", "Farm"], "correct"),  # re-joined parts
        (["Evergold Corp."], ["The property closest is owned by Evergold Corp."], "wrong"),
        (["Evergold Corp."], [""], "unparsed"),
    ],
)
def test_textual(expected, response, v):
    assert verdict(rec("textual", expected, response)) == v


def test_judge_hook():
    calls = []

    def judge(question, expected, response):
        calls.append((question, expected, response))
        return "Evergold" in response[0]

    r = rec("textual", ["Evergold Corp."], ["It is owned by Evergold Corp."], question="Who owns it?")
    out = frieda.score_record(r, judge)
    assert out == {"verdict": "correct", "reason": "judge accepted", "judge_used": True}
    assert calls == [("Who owns it?", ["Evergold Corp."], ["It is owned by Evergold Corp."])]
    # exact matches never reach the judge; other types never use it
    assert frieda.score_record(rec("textual", ["X"], ["x"]), judge)["judge_used"] is False
    assert frieda.score_record(rec("cardinal", NE_SET, ["west"]), judge)["judge_used"] is False
    assert len(calls) == 1

    def broken(*_):
        raise RuntimeError("endpoint down")

    out = frieda.score_record(r, broken)
    assert out["verdict"] == "wrong" and "judge failed" in out["reason"] and not out["judge_used"]


# ------------------------------------------------------------------ robustness


@pytest.mark.parametrize(
    "record",
    [
        None,
        [],
        {},
        {"answer_type": "distance"},
        {"expected_answer": ["1 km"], "_response": None},
        {"expected_answer": "1 km", "_response": "1 km", "answer_type": "distance"},
        {"expected_answer": [1], "_response": [None, 3], "answer_type": "textual"},
        {"expected_answer": ["x"], "_response": ["x"], "answer_type": "colour"},
    ],
)
def test_malformed_records(record):
    out = frieda.score_record(record)
    assert out["verdict"] in {"correct", "wrong", "unparsed"} and out["reason"]


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(["distance", "cardinal", "textual", "other"]),
    expected=st.lists(
        st.one_of(st.text(max_size=30), st.sampled_from(["1 km", "north", "2800'", "east"])), max_size=4
    ),
    response=st.one_of(st.lists(st.text(), max_size=4), st.text(), st.none(), st.integers()),
)
def test_fuzz_score_record(kind, expected, response):
    out = frieda.score_record({"answer_type": kind, "expected_answer": expected, "_response": response})
    assert out["verdict"] in {"correct", "wrong", "unparsed"}
    assert isinstance(out["reason"], str) and out["reason"]


# ------------------------------------------------------------------ files & CLI


def _write(tmp_path, name, records):
    p = tmp_path / name
    p.write_text(json.dumps(records), encoding="utf-8")
    return p


def test_score_files_and_cli(tmp_path, capsys):
    records = [
        rec("distance", ["0.75 km"], ["750 m"], correct=False, ref="q1", rel="Distance", maps="Single"),
        rec("cardinal", NE_SET, ["north", "south"], correct=True, ref="q2", rel="Orientation", maps="Multi"),
        rec("textual", ["R1"], ["R1"], correct=True, ref="q3", rel="Within", maps="Multi"),
        rec(
            "textual",
            ["R1"],
            ["The region that contains the point is labelled R1 on the map."],
            correct=True,
            ref="q4",
            rel="Within",
        ),
    ]
    f = _write(tmp_path, "demo__demo-7B_wo_contextual.json", records)
    out = tmp_path / "out"
    summary = frieda.score_files([f], out)
    lines = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    assert [x["verdict"] for x in lines] == ["correct", "wrong", "correct", "wrong"]
    assert [x["agrees_with_original"] for x in lines] == [False, False, True, False]
    assert set(lines[0]) >= {
        "file",
        "question_ref",
        "answer_type",
        "spatial_relationship",
        "map_count",
        "verdict",
        "reason",
        "original_correct",
        "agrees_with_original",
    }
    entry = summary["files"][f.name]
    assert (entry["model"], entry["setting"]) == ("demo-7B", "wo_contextual")
    assert entry["n"] == 4 and entry["accuracy"] == 0.5 and entry["original_accuracy"] == 0.75
    assert entry["by_answer_type"]["textual"] == {
        "n": 2,
        "accuracy": 0.5,
        "original_accuracy": 1.0,
        "parse_rate": 1.0,
        "agreement": 0.5,
    }
    assert entry["by_map_count"]["Multi"]["n"] == 2 and entry["by_map_count"]["Single"]["accuracy"] == 0.5
    assert entry["by_spatial_relationship"]["Orientation"]["accuracy"] == 0.0
    causes = entry["disagreements"]
    assert causes["distance: unit conversion (m vs km)"]["examples"] == ["q1"]
    assert causes["cardinal: multiple directions named"]["examples"] == ["q2"]
    assert causes["textual: original judge accepted answer embedded in prose"]["examples"] == ["q4"]
    assert json.loads((out / "summary.json").read_text()) == summary

    parser = argparse.ArgumentParser()
    frieda.add_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["frieda-score", str(f), "--out", str(tmp_path / "o2")])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "demo-7B" in printed and "50.0/75.0" in printed


def test_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        frieda.score_files([tmp_path / "missing.json"], tmp_path / "out")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        frieda.score_files([bad], tmp_path / "out")
    obj = _write(tmp_path, "obj.json", {"a": 1})
    with pytest.raises(InputError, match="JSON list"):
        frieda.score_files([obj], tmp_path / "out")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ real published files


@pytest.fixture(scope="module")
def real_summary(tmp_path_factory):
    files = sorted(FRIEDA_DIR.glob("*.json")) if FRIEDA_DIR.is_dir() else []
    if not files:
        pytest.skip(f"FRIEDA data not found at {FRIEDA_DIR} (shared data folder absent)")
    out = tmp_path_factory.mktemp("frieda")
    summary = frieda.score_files(files, out)
    lines = [json.loads(x) for x in (out / "verdicts.jsonl").read_text().splitlines()]
    return files, summary, lines


@pytest.mark.shared
def test_real_every_record_gets_a_verdict(real_summary):
    files, summary, lines = real_summary
    n_records = sum(len(json.loads(f.read_text(encoding="utf-8"))) for f in files)
    assert len(lines) == n_records
    assert all(x["verdict"] in {"correct", "wrong", "unparsed"} for x in lines)
    assert set(summary["files"]) == {f.name for f in files}
    assert summary["overall"]["parse_rate"] > 0.95


@pytest.mark.shared
def test_real_cardinal_agreement(real_summary):
    _, summary, lines = real_summary
    # measured 0.873 over all 22 files; the original checks the label only, we also read prose
    assert summary["overall"]["by_answer_type"]["cardinal"]["agreement"] >= 0.85
    # for clean label answers from the strong models the two rule sets must coincide
    for name, entry in summary["files"].items():
        if name.startswith(("claude-sonnet4", "gpt5", "gemini25pro")):
            assert entry["by_answer_type"]["cardinal"]["agreement"] >= 0.98, name
    # we never mark a cardinal answer wrong that the original accepted, except for several directions
    lost = [
        x
        for x in lines
        if x["answer_type"] == "cardinal" and x["original_correct"] and x["verdict"] != "correct"
    ]
    assert len(lost) <= 15
    assert all(x["reason"].startswith("multiple directions") or x["verdict"] == "unparsed" for x in lost)


@pytest.mark.shared
def test_real_distance_agreement(real_summary):
    _, summary, _ = real_summary
    # measured 0.970: disagreements come from unit conversion and prose answers
    assert summary["overall"]["by_answer_type"]["distance"]["agreement"] >= 0.95
    causes = summary["overall"]["disagreements"]
    assert any(c.startswith("distance: unit conversion") for c in causes)
