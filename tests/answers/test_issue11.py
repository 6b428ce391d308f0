"""Issue 11: every example of the issue is read as stated, by the one reader the scorer, the
runner's retry decision and FRIEDA mode share."""

from __future__ import annotations

import copy
import json

import pytest

from scoring import frieda
from scoring.answers import parse_answer, parse_choice, parse_edit, parse_ordering, read_edit_reply
from scoring.runner.run import edit_needs_retry
from scoring.score.verdicts import score_edit


@pytest.mark.parametrize(
    "reply,answer_type,value",
    [
        ("The answer is b.", "choice", "B"),
        ('{"answer": "C"}', "choice", "C"),
        ('{"answer": "nw"}', "direction8", "NW"),
        ("N36.0W", "bearing", 324.0),
        ("Final answer: 135.1 (not 160.1)", "distance", 135.1),
        ("The answer is -232.9°.", "bearing", -232.9),
    ],
)
def test_lost_answers_are_read(reply, answer_type, value):
    parsed = parse_answer(reply, answer_type)
    assert parsed.ok and parsed.value == value


def test_ordering_answer_line_followed_by_reasoning_naming_other_ids():
    reply = "Answer: F3, F1, F2\nF1 lies between F3 and F2, and F4 is off the road."
    assert parse_ordering(reply, ["F1", "F2", "F3"]).value == ["F3", "F1", "F2"]


def test_a_hedge_between_values_gets_no_credit():
    parsed = parse_answer("Final answer: 87.3 m or 62.3 m", "distance")
    assert not parsed.ok and "several" in parsed.reason


# GLM-4.5V style (paraphrased from the FRIEDA responses q_1013, q_0172, q_1078)
UNFINISHED = [
    "in area 7 the easternmost node is near the street on the right. now, relative to that center, the "
    "easternmost node is to the east? wait, no, maybe we need to check directions. wait, the question is "
    "about orientation.",
    "the mitigation site is in area 2, which is north of area 5. so the orientation is north. wait, no, "
    "maybe i need to check the direction. let's think about the compass. the north arrow is there. so if the "
    "mitigation site",
]
BOXED = (
    "wait, maybe location 4 is to the northwest? so the answer would be north west.</think>\nto determine "
    "the orientation we compare positions: location 4 is to the "
    "<|begin_of_box|>north west<|end_of_box|> of it."
)


def _record(response: str, expected: list[str]) -> dict:
    return {
        "question_ref": "q",
        "answer_type": "cardinal",
        "expected_answer": expected,
        "_response": [response],
    }


@pytest.mark.parametrize("response", UNFINISHED)
def test_unfinished_reasoning_is_not_an_answer(response):
    ours = frieda.score_record(_record(response, ["southeast", "east", "south", "south east"]))
    assert ours["verdict"] == "unparsed"
    assert not parse_answer(response, "direction8").ok


def test_an_answer_box_after_reasoning_is_the_answer():
    ours = frieda.score_record(_record(BOXED, ["northwest", "north", "north west", "west"]))
    assert ours["verdict"] == "correct"
    assert parse_answer(BOXED, "direction8").value == "NW"


def test_real_frieda_records_of_the_issue(tmp_path):
    from tests.conftest import shared_path

    path = shared_path("frieda", "glm45v__glm45v-108B_w_contextual.json")
    records = {r["question_ref"]: r for r in json.loads(path.read_text(encoding="utf-8"))}
    assert frieda.score_record(records["q_1013"])["verdict"] != "correct"
    assert frieda.score_record(records["q_0172"])["verdict"] != "correct"
    assert frieda.score_record(records["q_1078"])["verdict"] == "correct"


# ---------------------------------------------------------------- one reader for the edit reply

EDIT = '{"operations": [{"op": "translate", "dx": 12, "dy": -3}]}'


@pytest.mark.parametrize(
    "reply",
    [
        "<think>the scene {F0} must move east, maybe {dx: 12}</think>\n" + EDIT,
        "For example a no-op looks like:\n```json\n"
        '{"operations": [{"op": "translate", "dx": 0, "dy": 0}]}\n```\n'
        "My edit:\n```json\n" + EDIT + "\n```",
    ],
)
def test_the_runner_keeps_an_edit_the_scorer_reads(reply):
    assert parse_edit(reply).value == json.loads(EDIT)
    assert edit_needs_retry(reply) is None
    assert read_edit_reply(reply).retry_reason is None


@pytest.fixture(scope="module")
def edit_bench(tmp_path_factory):
    from scoring.build.builder import build_benchmark

    out = tmp_path_factory.mktemp("issue11") / "helsinki"
    build_benchmark(
        None,
        out,
        seed=0,
        n_qa=1,
        n_edit=1,
        relations=["M18", "O08"],
        jobs=1,
        progress=False,
        unanswerable_share=0.0,
    )
    return {json.loads(x)["relation"]: json.loads(x) for x in (out / "edit.jsonl").read_text().splitlines()}


def _f0(instance: dict) -> dict:
    return next(
        f for f in instance["scene"]["features"] if (f.get("id") or f["properties"].get("id")) == "F0"
    )


def test_setting_an_attribute_to_its_value_is_retried_and_scored_no_change(edit_bench):
    inst = copy.deepcopy(edit_bench["O08"])
    inst["allowed_operations"] = ["set_attribute"]
    _f0(inst)["properties"]["layer"] = 1
    same = '{"operations": [{"op": "set_attribute", "name": "layer", "value": 1}]}'
    other = '{"operations": [{"op": "set_attribute", "name": "layer", "value": 2}]}'
    assert "does nothing" in (edit_needs_retry(same, inst, "geojson") or "")
    assert score_edit(inst, same).reason.startswith("no change")
    assert edit_needs_retry(other, inst, "geojson") is None
    assert not score_edit(inst, other).reason.startswith("no change")


def test_a_point_or_line_for_a_density_edit_is_a_verdict(edit_bench):
    inst = edit_bench["M18"]
    ring = _f0(inst)["geometry"]["coordinates"][0]
    for geometry in (
        {"type": "Point", "coordinates": ring[0]},
        {"type": "LineString", "coordinates": ring[:3]},
    ):
        v = score_edit(inst, json.dumps({"geometry": geometry}))
        assert v.verdict == "wrong" and v.constraints
        assert "not measurable" in str(v.constraints[0]["measured"])


def test_a_nested_geometry_collection_is_a_verdict(edit_bench):
    inst = edit_bench["O08"]
    line = _f0(inst)["geometry"]
    nested = {
        "type": "GeometryCollection",
        "geometries": [{"type": "GeometryCollection", "geometries": [line]}],
    }
    v = score_edit(inst, json.dumps({"geometry": nested}))
    assert v.verdict == "unparsed" and "nested GeometryCollection" in v.reason
    flat = {"type": "GeometryCollection", "geometries": [line]}
    assert score_edit(inst, json.dumps({"geometry": flat})).verdict == "wrong"


def test_an_exception_inside_one_sample_becomes_its_verdict(edit_bench, monkeypatch):
    from scoring.score import verdicts

    def broken(*args, **kwargs):
        raise ZeroDivisionError

    monkeypatch.setattr(verdicts, "check_constraint", broken)
    v = verdicts.score_prediction(
        edit_bench["M18"], {"status": "ok", "text": EDIT, "modality": "geojson"}, "/nonexistent"
    )
    assert v.verdict == "error" and v.reason == "internal error: ZeroDivisionError"


def test_option_text_is_matched_only_exactly():
    options = ["12.4 m", "48.9 m", "103.0 m", "cannot be determined"]
    assert parse_choice("48.9 m", 4, options).value == "B"
    assert not parse_choice("about 50 m", 4, options).ok
