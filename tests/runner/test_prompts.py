"""What a model receives per modality (scoring/runner/prompts.py), checked on real instances."""

import json
import math
import re

import pyproj
import pytest

from scoring.geometry.georef import grid_convergence_deg
from scoring.runner.agents import parse_prompt
from scoring.runner.prompts import (
    ANSWER_CATEGORIES,
    ANSWER_INSTRUCTIONS,
    answer_category,
    build_messages,
    grid_north_on_map,
)
from scoring.vocab import AnswerType

PNG = b"\x89PNG\r\n\x1a\nnot-really"


@pytest.fixture(scope="module")
def instances(helsinki_bench):
    qa = [json.loads(line) for line in (helsinki_bench / "qa.jsonl").read_text().splitlines()]
    edit = [json.loads(line) for line in (helsinki_bench / "edit.jsonl").read_text().splitlines()]
    return qa, edit


def _text(messages):
    c = messages[1]["content"]
    return c if isinstance(c, str) else "\n".join(p["text"] for p in c if p["type"] == "text")


def test_image_modality_sends_no_coordinates(instances):
    qa, edit = instances
    for inst in qa[::25] + edit[::25]:
        form = "edit" if inst["task"] == "edit" else "open"
        msgs = build_messages(inst, "image", form, PNG)
        text = _text(msgs)
        assert "```geojson" not in text and '"coordinates"' not in text
        # no projected coordinate (6+ digit numbers) leaks through the question or instruction
        assert not re.search(r"\d{6,}\.\d", text)
        assert msgs[1]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
        geo = _text(build_messages(inst, "geojson", form, None))
        assert "```geojson" in geo and isinstance(
            build_messages(inst, "geojson", form, None)[1]["content"], str
        )


def test_grid_north_is_stated_for_map_modalities(instances):
    qa, _ = instances
    inst = next(i for i in qa if i["relation"] == "D04")  # bearing questions, 1° tolerance
    angle = grid_north_on_map(inst)
    # Helsinki lies west of UTM 35N's central meridian (27° E): grid north turns anticlockwise
    assert -2.5 < angle < -1.0
    for modality in ("image", "together"):
        text = _text(build_messages(inst, modality, "open", PNG))
        assert f"points {abs(angle):.1f}° anticlockwise from straight up" in text
    assert "from straight up" not in _text(build_messages(inst, "geojson", "open", None))


def test_grid_convergence_agrees_with_proj():
    # 24.94 E, 60.17 N in UTM 35N, and a point east of the central meridian
    for lon, lat in ((24.94, 60.17), (28.5, 61.0)):
        x, y = pyproj.Transformer.from_crs(4326, 32635, always_xy=True).transform(lon, lat)
        expected = pyproj.Proj("EPSG:32635").get_factors(lon, lat).meridian_convergence
        assert math.isclose(grid_convergence_deg(32635, x, y), expected, abs_tol=0.01)


@pytest.mark.parametrize(
    "answer_type,words",
    [
        ("relative_direction", "ahead, behind, left, right"),
        ("direction4", "N, E, S or W"),
        ("axis", "N-S, NE-SW, E-W or NW-SE"),
        ("ordering", "in order"),
        ("density", "per square kilometre"),
    ],
)
def test_each_answer_type_gets_its_own_answer_instruction(instances, answer_type, words):
    qa, _ = instances
    inst = next(i for i in qa if i["answer_type"] == answer_type)
    assert answer_category(answer_type) != "text"
    assert words in _text(build_messages(inst, "geojson", "open", None))


def test_every_answer_type_maps_to_a_stated_answer_instruction():
    assert set(ANSWER_CATEGORIES) == set(AnswerType)
    assert set(ANSWER_CATEGORIES.values()) <= set(ANSWER_INSTRUCTIONS)
    for answer_type in AnswerType:
        assert answer_category(answer_type.value) == ANSWER_CATEGORIES[answer_type]
    assert answer_category(None) == "text"
    with pytest.raises(ValueError, match="unknown answer_type"):
        answer_category("distance_in_furlongs")


def test_agents_read_the_answer_instruction_back(instances):
    """parse_prompt recognises each category from the very sentence the template states."""
    qa, _ = instances
    for inst in qa:
        for form in ("open", "mcq"):
            view = parse_prompt(build_messages(inst, "geojson", form, None))
            want = "choice" if form == "mcq" else answer_category(inst["answer_type"])
            assert view.answer_category == want, (inst["id"], form)


def test_prompt_texts_are_kept_per_instance_object_never_for_another(instances):
    # a sweep renders an instance's prompt once for every participant; a different instance
    # object (even one equal but for its question) gets its own text
    qa, _ = instances
    inst = qa[3]
    first = build_messages(inst, "geojson", "open", None)
    assert build_messages(inst, "geojson", "open", None) == first
    changed = json.loads(json.dumps(inst))
    changed["question"] = "How far is F0 from F1, measured by a surveyor?"
    assert "measured by a surveyor" in _text(build_messages(changed, "geojson", "open", None))
    assert "measured by a surveyor" not in _text(build_messages(inst, "geojson", "open", None))
    # each modality and form its own text
    assert _text(build_messages(inst, "geojson", "mcq", None)) != _text(first)
    assert "```geojson" not in _text(build_messages(inst, "image", "open", PNG))
