"""Why our verdict on a FRIEDA record differs from the original authors' ``correct``."""

from __future__ import annotations

import re

from scoring.frieda.rules import (
    _SPECIAL_TOKEN,
    _as_parts,
    _distance_candidates,
    _expected_distance,
    _had_echo,
    _unit_family,
    _within,
    clean_part,
    normalise_text,
)

_FIRST_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _original_rule_distance(record: dict) -> bool | None:
    """Re-run the original check (first number of each side, no unit conversion, 20 %)."""
    exp = _FIRST_NUMBER.search(" ".join(map(str, record.get("expected_answer") or [])))
    resp = _FIRST_NUMBER.search(str(record.get("extracted_ans") or ""))
    if not exp or not resp:
        return None
    try:
        e, r = float(exp.group().replace(",", "")), float(resp.group().replace(",", ""))
    except ValueError:
        return None
    return _within(r, e)


def disagreement_cause(record: dict, ours: dict) -> str:
    """A short label for why our verdict differs from the original ``correct``."""
    raw = _as_parts(record.get("_response")) or []
    if ours["reason"] == "refusal":
        return "refusal accepted by original judge"
    if ours["verdict"] == "correct" and any(_SPECIAL_TOKEN.search(r) for r in raw if isinstance(r, str)):
        return "model special tokens (<|begin_of_box|>) stripped"
    cause = _CAUSES.get(str(record.get("answer_type")))
    return cause(record, ours, raw) if cause else "other"


def _distance_cause(record: dict, ours: dict, raw: list) -> str:
    parts = [p for p in (clean_part(r) for r in raw) if p]
    reason = ours["reason"]
    exp_units = {
        _unit_family(u)
        for n, u in (
            _expected_distance(str(p), str(record.get("question_text") or "")) or (None, None)
            for p in record.get("expected_answer") or []
        )
    }
    resp_units = {_unit_family(u) for p in parts for n, u in _distance_candidates(p)[0] if u}
    resp_units.discard(None)
    exp_units.discard(None)
    if resp_units and exp_units and resp_units != exp_units:
        theirs, ours_ = "/".join(sorted(map(str, resp_units))), "/".join(sorted(map(str, exp_units)))
        return f"unit conversion ({theirs} vs {ours_})"
    if "several" in reason:
        return "several distances in response"
    if "no number" in reason:
        return "no number found by us"
    if "expected has no unit" in reason:
        return "expected answer without unit"
    if _had_echo(raw):
        return "prompt echo stripped"
    if any(len(p) > 80 for p in parts):
        return "distance taken from prose"
    orig_rule = _original_rule_distance(record)
    if orig_rule is not None and orig_rule != bool(record.get("correct")):
        return "original verdict inconsistent with its own rule"
    return "tolerance / rounding"


def _cardinal_cause(record: dict, ours: dict, raw: list) -> str:
    parts = [p for p in (clean_part(r) for r in raw) if p]
    reason, ours_ok = ours["reason"], ours["verdict"] == "correct"
    if reason.startswith("multiple directions"):
        return "multiple directions named"
    if reason == "no direction named":
        return "no direction found by us (original accepted)"
    if _had_echo(raw):
        return "prompt echo stripped"
    if ours_ok and any(len(p) > 40 for p in parts):
        return "direction extracted from prose"
    if (
        ours_ok
        and record.get("extracted_ans")
        and normalise_text(record["extracted_ans"]) != normalise_text(" ".join(parts))
    ):
        return "original extracted a different answer"
    if ours_ok:
        return "label format variant (punctuation/spacing)"
    return "original accepted a non-adjacent direction"


def _textual_cause(record: dict, ours: dict, raw: list) -> str:
    parts = [p for p in (clean_part(r) for r in raw) if p]
    if ours["verdict"] != "correct":
        exp = [normalise_text(e) for e in record.get("expected_answer") or []]
        joined = normalise_text(" ".join(parts))
        if exp and all(e and e in joined for e in exp):
            if any(len(p.split()) > 8 for p in parts):
                return "original judge accepted answer embedded in prose"
            return "original judge accepted extra/partial parts"
        return "original judge accepted paraphrase"
    if "splitting" in ours["reason"] or "re-joining" in ours["reason"]:
        return "part alignment (split/joined)"
    if _had_echo(raw):
        return "prompt echo stripped"
    return "normalisation (case/punctuation/articles)"


_CAUSES = {"distance": _distance_cause, "cardinal": _cardinal_cause, "textual": _textual_cause}
