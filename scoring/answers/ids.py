"""Feature ids (``F3``, ``feature 3``) and orderings of ids."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from scoring.answers.base import Parsed, fail
from scoring.answers.evidence import Question, read_reply
from scoring.answers.text import Prepared, prepare

_ID_SPLIT = re.compile(r"^([A-Za-z]+)[\s_\-]?(\d+)$")


def _id_matcher(valid_ids: Iterable[str]) -> tuple[re.Pattern, dict[str, str]] | None:
    ids = [str(v) for v in valid_ids]
    if not ids:
        return None
    table: dict[str, str] = {}
    numbers: dict[str, list[str]] = {}
    for v in ids:
        table[v.lower()] = v
        m = _ID_SPLIT.match(v)
        if m:
            table[(m.group(1) + m.group(2)).lower()] = v
            numbers.setdefault(str(int(m.group(2))), []).append(v)
    for num, owners in numbers.items():
        if len(owners) == 1:
            table[f"feature {num}"] = owners[0]
            table[f"feature #{num}"] = owners[0]
    alts = sorted(table, key=len, reverse=True)
    generic = r"[A-Za-z]{1,3}\d+"
    pattern = re.compile(
        r"(?<![\w\-])(?:"
        + "|".join(re.escape(a).replace(r"\ ", r"\s*") for a in alts)
        + r"|feature\s+(?P<fid>"
        + generic
        + r")"
        + r"|(?P<gen>"
        + generic
        + r"))(?![\w\-])",
        re.I,
    )
    return pattern, table


def _find_ids(seg: str, valid_ids: Iterable[str]) -> tuple[list[str], list[str]]:
    """(valid ids mentioned in order, unknown id-like tokens)."""
    built = _id_matcher(valid_ids)
    if built is None:
        return [], []
    pattern, table = built
    got, unknown = [], []
    for m in pattern.finditer(seg):
        token = m.group("fid") or m.group(0)
        key = re.sub(r"\s+", " ", token.lower())
        key = key.replace("feature ", "feature ") if key.startswith("feature") else key
        if key in table:
            got.append(table[key])
        elif m.group("fid") and m.group("fid").lower() in table:
            got.append(table[m.group("fid").lower()])
        else:
            if re.fullmatch(r"feature\s*#?\s*\d+", key):
                unknown.append(token)
            elif m.group("gen") or m.group("fid"):
                unknown.append(token)
    return got, unknown


_REFERENCE = re.compile(
    r"\b(?:to|from|of|than|with|near|by|beside|relative\s+to|compared\s+to)[ \t]+"
    r"(?:the[ \t]+)?(?:feature[ \t]+)?$",
    re.I,
)


def _only_as_reference(seg: str, fid: str) -> bool:
    """Every mention of ``fid`` follows a relational preposition ("north of F0", "closer than F2")."""
    mentions = list(re.finditer(rf"(?<![\w\-]){re.escape(fid)}(?![\w\-])", seg, re.I))
    return bool(mentions) and all(_REFERENCE.search(seg, max(0, m.start() - 40), m.start()) for m in mentions)


_CLAIM_WORDS = 10
_JOINED = re.compile(r"[,;/&]|\b(?:and|or|nor|vs|versus|than|either|neither|both|between|not)\b", re.I)


def _subject_of_claim(seg: str, got: list[str]) -> str | None:
    """The subject of a short claim naming two ids ("F0 lies above F1", "F3 crosses F0"): the
    answer restated as a sentence about the other, which is its object."""
    if len(got) != 2 or len(seg.split()) > _CLAIM_WORDS:
        return None
    first = re.search(rf"(?<![\w\-]){re.escape(got[0])}(?![\w\-])", seg, re.I)
    second = re.search(rf"(?<![\w\-]){re.escape(got[1])}(?![\w\-])", seg, re.I)
    if first is None or second is None or second.start() < first.end():
        return None
    between = seg[first.end() : second.start()]
    opens = not seg[: first.start()].strip(" *:")  # the claim starts the segment
    if not opens or not re.search(r"[A-Za-z]{2,}", between) or _JOINED.search(between):
        return None
    return got[0]


_NEITHER = re.compile(r"\b(?:neither|same (?:vertical )?level)\b", re.I)


def _feature_id_in(seg: str, valid: list[str]) -> Parsed:
    got, unknown = _find_ids(seg, valid)
    distinct = set(got)
    if len(distinct) > 1:
        # "F1 is the closest to F0": an id named only as the reference of a relation is not the answer
        distinct = {i for i in distinct if not _only_as_reference(seg, i)}
        subject = _subject_of_claim(seg, got) if len(distinct) == 2 else None
        if subject is not None:
            return Parsed(True, subject)
        if len(distinct) != 1:
            return fail("two different feature ids")
        got = [i for i in got if i in distinct]
    if not distinct:
        # "neither" (e.g. two roads at the same level) is an answer, right or wrong, not noise.
        if not unknown and _NEITHER.search(seg):
            return Parsed(True, "neither")
        return fail("feature id not among the valid ids" if unknown else "no feature id found")
    return Parsed(True, got[0])


def named_ids(question: str, ids: Iterable[str]) -> tuple[re.Pattern[str], ...]:
    """Patterns of the ids ``question`` names: the answer is an id it does not name."""
    patterns = (re.compile(rf"(?<![\w\-]){re.escape(i)}(?![\w\-])", re.I) for i in ids)
    return tuple(rx for rx in patterns if rx.search(question))


def parse_feature_id(text: Any, valid_ids: Iterable[str], question: str = "") -> Parsed:
    """One id of ``valid_ids`` (case-insensitive; ``feature F3``; ``Feature 3`` when exactly one
    valid id ends in that number). Two different ids -> not ok, unless a final-answer line names
    exactly one, or all but one are set aside: negated ("F5 (not F2)", "F1 does not qualify"),
    named only as a reference ("closest to F0"), or named by the question itself.

    >>> parse_feature_id("F1 lies above F0", ["F0", "F1", "F2"], question="Which road lies above F0?").value
    'F1'
    """
    try:
        valid = [str(v) for v in valid_ids]
    except TypeError:
        return fail("bad valid_ids")
    return read_reply(
        text, lambda seg, pre: _feature_id_in(seg, valid), Question(question, named_ids(question, valid))
    )


def _ordering_in(seg: str, pre: Prepared, expected: list[str]) -> Parsed:
    # the answer line alone, then its paragraph (a list over several lines), then everything after
    candidates = [seg]
    if pre.explicit:
        candidates += [pre.rest.split("\n\n", 1)[0], pre.rest]
    else:
        lines = [ln for ln in seg.splitlines() if ln.strip()]
        for ln in reversed(lines):
            if _find_ids(ln, expected)[0]:
                candidates.append(ln)
                break
    reason = "no feature id found"
    for cand in candidates:
        got, _ = _find_ids(cand, expected)
        if not got:
            continue
        if sorted(got) == sorted(expected) and len(set(got)) == len(expected):
            return Parsed(True, got)
        missing = set(expected) - set(got)
        reason = f"missing ids: {', '.join(sorted(missing))}" if missing else "an id appears more than once"
    return fail(reason)


def parse_ordering(text: Any, ids: Iterable[str], question: str = "") -> Parsed:
    """Every id of ``ids`` exactly once, in the answer's order (``F2, F1, F3``, ``F2 → F1 → F3``,
    ``F2 then F1 then F3``, numbered lists). Looks at the text from the final-answer line to the
    end when there is one, else the whole text, else the last line naming ids."""
    try:
        expected = [str(v) for v in ids]
    except TypeError:
        return fail("bad ids")
    if not expected:
        pre = prepare(text)
        return pre if isinstance(pre, Parsed) else fail("no ids to order")
    return read_reply(text, lambda seg, pre: _ordering_in(seg, pre, expected), Question(question))
