"""FRIEDA's own verdict rules (`--rules frieda`), as recovered from the published result records.

The published records carry the authors' verdict in ``correct``. These rules reproduce it from the
record's own fields, so that a new model's replies can be scored the way FRIEDA's published table
was (our default rules, :mod:`scoring.frieda.rules`, read answers more carefully and so differ).
What the verdicts follow, found by checking candidate rules against all 22 published files:

distance
    The field is ``_response`` (the reply's final answer already split on ``;``), not
    ``extracted_ans``. The response value is the first number written in the LAST part that holds a
    number; the expected value is the first number of the expected answer. A number is digits with
    an optional decimal point: no thousands separator (``6,500`` is read as 6), no sign, no unit
    and no unit conversion (``1.2 km`` vs ``1200 m`` compares 1.2 with 1200). Correct when
    ``abs(r - e) / e <= 0.20`` evaluated in binary floating point, so a reply exactly 20 % off may
    land either side (3.6 vs 3 gives 0.2000000000000001: wrong; 1200 vs 1500 gives 0.2: correct).
    Expected 0 needs a response of 0. No number on either side: wrong.
cardinal
    Correct when some ``_response`` part equals one of the expected parts exactly, as a string
    (case and punctuation count: ``"south west."`` and ``"north-east"`` are wrong where ``"south
    west"`` and ``"northeast"`` are listed). The expected parts already list the accepted labels
    (the direction and its neighbours, in the spellings FRIEDA accepts).
textual
    The set of response parts equals the set of expected parts after stripping whitespace and lower
    casing; else the judge decides when one is given (FRIEDA used an LLM judge here, so without a
    judge these verdicts are a lower bound of the published ones).
"""

from __future__ import annotations

import re
from typing import Any

from scoring.frieda.rules import Judge, _as_parts, _verdict, score_record

RULES = "frieda"
TOLERANCE = 0.20
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _first_number(text: str) -> float | None:
    m = _NUMBER.search(text)
    return None if m is None else float(m.group())


def _distance(expected: list[str], parts: list[str]) -> dict:
    e = _first_number(" ".join(expected))
    r = next((n for n in (_first_number(p) for p in reversed(parts)) if n is not None), None)
    if e is None or r is None:
        return _verdict("wrong", "no number in " + ("expected answer" if e is None else "response"))
    ok = r == 0 if e == 0 else abs(r - e) / abs(e) <= TOLERANCE
    how = "within" if ok else "off by more than"
    return _verdict(
        "correct" if ok else "wrong",
        f"{r:g} vs {e:g}: {how} 20 % (first number, no unit)",
        response_value=r,
        expected_value=e,
    )


def _cardinal(expected: list[str], parts: list[str]) -> dict:
    hit = next((p for p in parts if p in expected), None)
    if hit is None:
        return _verdict("wrong", "no response part is one of the expected labels")
    return _verdict("correct", f"{hit!r} is an expected label")


def _textual(record: dict, expected: list[str], parts: list[str], judge: Judge | None) -> dict:
    if {p.strip().lower() for p in parts} == {e.strip().lower() for e in expected}:
        return _verdict("correct", "set match")
    if judge is None:
        return _verdict("wrong", "no set match")
    try:
        ok = bool(judge(str(record.get("question_text") or ""), expected, parts))
    except Exception as exc:  # a judge failure must not stop scoring
        return _verdict("wrong", f"no set match; judge failed: {type(exc).__name__}: {exc}"[:300])
    said = "judge accepted" if ok else "judge rejected"
    return _verdict("correct" if ok else "wrong", said, judge_used=True)


def score_record_frieda(record: Any, judge: Judge | None = None) -> dict:
    """FRIEDA's own verdict for one record (same shape as :func:`rules.score_record`; never raises)."""
    if not isinstance(record, dict):
        return _verdict("unparsed", "record is not an object")
    expected = _as_parts(record.get("expected_answer"))
    parts = _as_parts(record.get("_response"))
    if expected is None or not any(e.strip() for e in expected):
        return _verdict("unparsed", "record has no expected answer")
    if parts is None:
        return _verdict("unparsed", "record has no response")
    kind = record.get("answer_type")
    if kind == "distance":
        return _distance(expected, parts)
    if kind == "cardinal":
        return _cardinal(expected, parts)
    if kind == "textual":
        return _textual(record, expected, parts, judge)
    return _verdict("unparsed", f"unknown answer_type {kind!r}")


RULE_SETS = ("spatialgap", RULES)  # ours (the default), FRIEDA's own


def score_by(rules: str, record: Any, judge: Judge | None = None) -> dict:
    """One record's verdict under the named rule set."""
    if rules == RULES:
        return score_record_frieda(record, judge)
    if rules == RULE_SETS[0]:
        return score_record(record, judge)
    raise ValueError(f"unknown rule set {rules!r} (expected {' or '.join(RULE_SETS)})")
