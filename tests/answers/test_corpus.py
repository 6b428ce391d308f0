"""The reply corpus (tests/answers/corpus/*.jsonl): realistic replies of every answer type, each
with the verdict its writer intended. Every unambiguous reply must be read as intended."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from scoring.answers import Parsed, parse_answer

CORPUS = Path(__file__).parent / "corpus"
ITEMS = [
    (f"{path.stem}:{n}", json.loads(line))
    for path in sorted(CORPUS.glob("*.jsonl"))
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
]


def _agrees(parsed: Parsed, expected: dict) -> bool:
    if not expected["ok"]:
        return not parsed.ok and parsed.refusal == (expected["verdict"] == "refusal")
    if not parsed.ok:
        return False
    want = expected["value"]
    if isinstance(want, float):
        return isinstance(parsed.value, float) and math.isclose(parsed.value, want, rel_tol=1e-6)
    return parsed.value == want


def test_corpus_is_large_and_covers_every_answer_type():
    types = {item["answer_type"] for _, item in ITEMS}
    assert len(ITEMS) >= 500
    assert types >= {
        "choice",
        "distance",
        "area",
        "bearing",
        "density",
        "count",
        "direction8",
        "feature_id",
        "ordering",
    }
    assert all(item["why"] for _, item in ITEMS)


@pytest.mark.parametrize("where,item", ITEMS, ids=[w for w, _ in ITEMS])
def test_reply_is_read_as_intended(where, item):
    parsed = parse_answer(item["reply"], item["answer_type"], **item["context"])
    assert _agrees(parsed, item["expected"]), f"{where} ({item['why']}): {parsed}"
