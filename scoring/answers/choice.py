"""Closed answers: an option letter (or the option's exact text), yes / no."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from scoring.answers.base import Parsed, fail
from scoring.answers.text import prepare, reads_conclusion, without_option_echo

_LETTER_STRONG = (
    r"\(\s*(?P<a>{L})\s*\)"  # (B)
    r"|\[\s*(?P<b>{L})\s*\]"  # [B]
    r"|\b(?i:option|choice|letter)\s*[:#]?\s*\(?(?P<c>{L})\b(?![\w'’])"  # option B
    r"|^[ \t]*(?P<d>{L})[ \t]*(?:[.):]|$)"  # B.  B)  B:  B  (line start)
)
_ARTICLE_A = re.compile(r"\s+(?!(?:or|and|nor|vs|and/or)\b)[a-z]")
_CACHE: dict[int, tuple[re.Pattern, re.Pattern, re.Pattern]] = {}


def _patterns(n: int) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    if n not in _CACHE:
        last = chr(ord("A") + n - 1)
        letters = f"[A-{last}]"
        strong = re.compile(_LETTER_STRONG.format(L=letters), re.M)
        lone = re.compile(rf"(?<![\w'’\-])({letters})(?![\w'’\-])")
        # a lower-case letter counts only as the first word of a marked answer: "The answer is b."
        lower = re.compile(rf"^\W{{0,3}}([a-{last.lower()}])(?:\W{{0,3}}$|[.):\]]|\s+(?=[A-Z0-9(]))")
        _CACHE[n] = (strong, lone, lower)
    return _CACHE[n]


def _norm(text: str) -> str:
    s = unicodedata.normalize("NFKC", text).lower()
    s = re.sub(r"[^\w.²°-]+", " ", s)
    return re.sub(r"\s+", " ", s).strip(" .")


def _by_option_text(seg: str, options: Sequence[Any]) -> str | None:
    """The letter of the one option whose exact text is the answer."""
    norm = _norm(seg)
    texts = [_norm(str(o)) for o in options]
    hits = [i for i, t in enumerate(texts) if t and t == norm]
    if len(hits) == 1:
        return chr(ord("A") + hits[0])
    return None


@reads_conclusion
def parse_choice(text: Any, n_options: int = 4, options: Sequence[Any] | None = None) -> Parsed:
    """Option letter ``"A"``.. ``chr(ord("A")+n_options-1)``.

    Accepted: ``B``, ``(B)``, ``B)``, ``B.``, ``**B**``, ``Answer: B``, ``The answer is b.``,
    ``Final answer: (C) F3``, ``option B``, ``{"answer": "C"}``, ``\\boxed{B}``, or the exact text
    of one option (``options``). Without a final-answer mark only strong forms count (parenthesised,
    ``option X``, a letter opening a line); an echoed option list is ignored. Two different letters
    -> not ok ("two different option letters").
    """
    try:
        n = max(1, min(26, int(n_options)))
    except (TypeError, ValueError, OverflowError):
        return fail("bad n_options")
    pre = prepare(text)
    if isinstance(pre, Parsed):
        return pre
    strong, lone, lower = _patterns(n)
    seg = pre.segment if pre.explicit else without_option_echo(pre.segment)
    found = [next(g for g in m.groups() if g) for m in strong.finditer(seg)]
    if pre.explicit or len(seg) <= 12:
        for m in lone.finditer(seg):
            letter = m.group(1)
            if letter == "A" and _ARTICLE_A.match(seg, m.end()):
                continue
            found.append(letter)
    if pre.explicit and not found:
        first = lower.match(seg)
        if first and not (first.group(1) == "a" and _ARTICLE_A.match(seg, first.end(1))):
            found.append(first.group(1).upper())
    distinct = set(found)
    if not distinct and options:
        by_text = _by_option_text(seg, options)
        if by_text is not None:
            return Parsed(True, by_text)
    if not distinct:
        return fail("no option letter found")
    if len(distinct) > 1:
        return fail("two different option letters")
    return Parsed(True, found[0])


_YES = re.compile(r"\b(?:yes|true|correct|yep|yeah|affirmative)\b", re.I)
_NO = re.compile(r"\b(?:no|false|incorrect|nope|negative)\b", re.I)
_YES_OR_NO = re.compile(r"\b(?:yes|true|no|false)\s*(?:or|/|and)\s*(?:yes|true|no|false)\b", re.I)


@reads_conclusion
def parse_yes_no(text: Any) -> Parsed:
    """``True`` for yes/true/correct, ``False`` for no/false/incorrect; both -> not ok."""
    pre = prepare(text)
    if isinstance(pre, Parsed):
        return pre
    seg = pre.segment
    yes, no = _YES.search(seg), _NO.search(seg)
    if yes and no and _YES_OR_NO.search(seg):
        return fail("both yes and no")
    if yes and no:
        # "Yes, no feature ..." -> the leading word decides when it opens the answer
        first = min(yes.start(), no.start())
        if first <= 2 and (len(seg.split()) > 2):
            return Parsed(True, yes.start() == first)
        return fail("both yes and no")
    if yes:
        return Parsed(True, True)
    if no:
        return Parsed(True, False)
    return fail("no yes/no found")
