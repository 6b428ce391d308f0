"""QA verdicts per answer type with real-looking model outputs: correct, wrong, near the
tolerance, malformed, refusals; MCQ letters in their usual forms."""

import pytest

from scoring.relations.base import TOLERANCES
from scoring.score import VERDICTS, score_qa


def first(qa, relation, answerable=True):
    for inst in qa.values():
        if inst["relation"] == relation and inst["answerable"]["geojson"] == answerable:
            return inst
    pytest.skip(f"no {relation} instance (answerable={answerable}) in the small benchmark")


@pytest.mark.parametrize("relation", ["M01", "M12", "D04", "M18"])
def test_numeric_types_tolerance_edges(qa, relation):
    inst = first(qa, relation)
    ref, atype = inst["answer"], inst["answer_type"]
    tol = inst["tolerance"] or TOLERANCES[atype]
    inside = ref + 0.8 * tol
    outside = ref + 1.6 * tol
    v = score_qa(inst, f"Let me measure this carefully.\n**Answer:** {inside:.4f}", form="open")
    assert v.verdict == "correct" and v.quality == pytest.approx(0.8 * tol, abs=1e-3)
    v = score_qa(inst, f"Answer: {outside:.4f}", form="open")
    assert v.verdict == "wrong" and v.quality == pytest.approx(1.6 * tol, abs=1e-3)
    assert score_qa(inst, "It is either 10 or 20, hard to say.", form="open").verdict == "unparsed"


def test_distance_with_units_and_separators(qa):
    inst = first(qa, "M01")
    km = inst["answer"] / 1000
    assert score_qa(inst, f"The distance is approximately {km:.4f} km.", form="open").verdict == "correct"
    far = round(inst["answer"] + 1234.5, 1)
    v = score_qa(inst, f"Answer: {far:,.1f} m", form="open")
    assert v.verdict == "wrong" and v.value == pytest.approx(far)


def test_bearing_is_circular(qa):
    inst = first(qa, "D04")
    ref = inst["answer"]
    wrapped = (ref + 0.6) % 360 - (360 if ref > 359 else 0)
    assert score_qa(inst, f"Answer: {wrapped:.2f}°", form="open").verdict == "correct"
    v = score_qa(inst, f"Answer: {(ref + 180) % 360:.1f}", form="open")
    assert v.verdict == "wrong" and v.quality == pytest.approx(180, abs=0.1)


@pytest.mark.parametrize("relation", ["D01", "D02"])
def test_directions(qa, relation):
    inst = first(qa, relation)
    words = {
        "N": "north",
        "NE": "north-east",
        "E": "east",
        "SE": "south-east",
        "S": "south",
        "SW": "south-west",
        "W": "west",
        "NW": "north-west",
    }
    ans = inst["answer"]
    assert (
        score_qa(inst, f"F1 is to the {words[ans]} of F0.\nAnswer: {ans}", form="open").verdict == "correct"
    )
    other = next(d for d in inst["choices"] if d != ans)
    assert score_qa(inst, f"Answer: {other}", form="open").verdict == "wrong"
    assert score_qa(inst, f"Answer: {ans} or {other}", form="open").verdict == "unparsed"


def test_relative_direction_axis_count_ordering(qa):
    for rel in ("D05", "D06", "M14", "O01"):
        inst = first(qa, rel)
        ans = inst["answer"]
        text = ", ".join(ans) if isinstance(ans, list) else str(ans)
        assert (
            score_qa(inst, f"<think>working it out</think>\nAnswer: {text}", form="open").verdict == "correct"
        ), rel
    o = first(qa, "O01")
    rev = list(reversed(o["answer"]))
    v = score_qa(o, "Answer: " + " → ".join(rev), form="open")
    assert v.verdict == "wrong" and v.value == rev


def test_feature_id_and_refusal_on_answerable(qa):
    inst = first(qa, "T04")
    assert score_qa(inst, f"Answer: {inst['answer']}", form="open").verdict == "correct"
    wrong_id = next(c for c in inst["choices"] if c != inst["answer"])
    assert score_qa(inst, f"Answer: {wrong_id}", form="open").verdict == "wrong"
    assert score_qa(inst, "Answer: F99", form="open").verdict == "unparsed"
    v = score_qa(inst, "Answer: cannot be determined", form="open")
    assert (v.verdict, v.reason) == ("wrong", "refusal")


def test_mcq_letter_forms(qa):
    inst = first(qa, "M01")
    good = inst["correct_choice"]
    bad = next(x for x in "ABCD" if x != good)
    for text in (
        good,
        f"({good})",
        f"Answer: {good}",
        f"**{good}**",
        f"<think>maybe {bad}? no.</think>\nThe answer is {good}",
    ):
        assert score_qa(inst, text, form="mcq").verdict == "correct", text
    assert score_qa(inst, f"Answer: {bad}", form="mcq").verdict == "wrong"
    assert score_qa(inst, f"Either ({good}) or ({bad}).", form="mcq").verdict == "unparsed"


def test_unanswerable_refusal_and_unfounded(qa):
    inst = first(qa, "O06", answerable=False)
    refusal_letter = "ABCD"[inst["choices"].index("cannot be determined")]
    other = next(x for x in "ABCD" if x != refusal_letter)
    assert score_qa(inst, f"Answer: {refusal_letter}", form="mcq").verdict == "correct_refusal"
    assert score_qa(inst, f"Answer: {other}", form="mcq").verdict == "unfounded_answer"
    assert (
        score_qa(inst, "The attributes are missing, so it cannot be determined.", form="open").verdict
        == "correct_refusal"
    )
    assert score_qa(inst, "Answer: F0", form="open").verdict == "unfounded_answer"
    # answerable in one modality, not in another: the modality decides
    both = dict(inst, answerable={"geojson": True, "image": False, "together": True})
    assert (
        score_qa(both, "Answer: cannot be determined", form="open", modality="image").verdict
        == "correct_refusal"
    )
    assert score_qa(both, "Answer: cannot be determined", form="open", modality="geojson").verdict == "wrong"


def test_request_error(qa):
    inst = first(qa, "M01")
    v = score_qa(inst, None, form="open", status="error", error="HTTP 500")
    assert v.verdict == "error" and "HTTP 500" in v.reason
    assert set(v.as_dict()) >= {"verdict", "reason", "value", "quality"} and v.verdict in VERDICTS


def _unanswerable_ordering() -> dict:
    """An ordering item whose question names F3, which its scene lacks (as the builder makes it)."""
    point = {"type": "Point", "coordinates": [0.0, 0.0]}
    road = {"type": "LineString", "coordinates": [[0.0, 0.0], [100.0, 0.0]]}
    return {
        "id": "x-qa-O01-900",
        "task": "qa",
        "relation": "O01",
        "question": "Order F1, F2 and F3 by their position along road F0. Answer with the ids in order.",
        "answer_type": "ordering",
        "answer": "cannot be determined",
        "choices": ["F1, F2, F3", "F3, F1, F2", "F2, F3, F1", "F2, F1, F3"],
        "answerable": {"geojson": False, "image": False, "together": False},
        "scene": {
            "type": "FeatureCollection",
            "features": [
                {"type": "Feature", "id": fid, "properties": {"id": fid}, "geometry": geom}
                for fid, geom in (("F0", road), ("F1", point), ("F2", point))
            ],
        },
    }


def test_an_ordering_answered_on_an_unanswerable_item_is_unfounded():
    inst = _unanswerable_ordering()
    assert score_qa(inst, "Answer: F2, F1, F3", form="open").verdict == "unfounded_answer"
    assert score_qa(inst, "Along F0 the order is F3, F1, F2.", form="open").verdict == "unfounded_answer"
    assert score_qa(inst, "Answer: cannot be determined", form="open").verdict == "correct_refusal"
    assert score_qa(inst, "Answer: F2, F1", form="open").verdict == "unparsed"
