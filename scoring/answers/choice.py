"""Closed answers: an option letter (or the option's exact text), yes / no."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from scoring.answers.base import Parsed, fail
from scoring.answers.boolean import claim_restated, yes_no_in
from scoring.answers.evidence import Question, read_reply
from scoring.answers.options import option_by_content
from scoring.answers.text import Prepared, without_option_echo
from scoring.vocab import REFUSAL

_LETTER_STRONG = (
    r"\(\s*(?P<a>{L})\s*\)"  # (B)
    r"|\[\s*(?P<b>{L})\s*\]"  # [B]
    r"|\b(?i:option|choice|letter)\s*[:#]?\s*\(?(?P<c>{L}|{l})\b(?![\w'’])"  # option B, Option (d)
    r"|^[ \t]*(?P<d>{L})[ \t]*(?:[.):]|$|(?=[ \t]+[(\[—–\-]))"  # B.  B)  B:  B  D (916 per km²)
    r"|(?<![\w'’])(?P<e>{L})[ \t]+(?i:is|seems|would\s+be|looks|must\s+be)[ \t]+(?i:the[ \t]+)?"
    r"(?i:correct|right|best|answer|true|most\s+likely)\b"  # D is correct
    r"|\b(?i:it'?s|it\s+is|that'?s|that\s+is|is|be)[ \t]+(?P<f>{L})[ \t]*[.!]?[ \t]*$"  # ... but it is B.
    r"|:[ \t]*(?P<g>{L})[ \t]*[.!]?[ \t]*$"  # ... (A, B, C or D): D
    r"|(?<![\w'’])(?P<h>{L})[ \t]*[✓✔☑✅]"  # - B ✓ meets the condition
)
_ARTICLE_A = re.compile(r"\s+(?!(?:or|and|nor|vs|and/or)\b)[a-z]")
_CACHE: dict[int, tuple[re.Pattern, re.Pattern, re.Pattern]] = {}


def _patterns(n: int) -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    if n not in _CACHE:
        last = chr(ord("A") + n - 1)
        letters = f"[A-{last}]"
        strong = re.compile(_LETTER_STRONG.format(L=letters, l=letters.lower()), re.M)
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


def _letters(seg: str, pre: Prepared, n: int) -> list[str]:
    """The option letters ``seg`` names, in order (strong forms; lone letters where marked)."""
    strong, lone, lower = _patterns(n)
    seg = seg if pre.explicit else without_option_echo(seg)
    found = [next(g for g in m.groups() if g).upper() for m in strong.finditer(seg)]
    if pre.explicit or len(seg.strip()) <= 12:
        for m in lone.finditer(seg):
            letter = m.group(1)
            if letter == "A" and _ARTICLE_A.match(seg, m.end()):
                continue
            found.append(letter)
    if pre.explicit and not found:
        first = lower.match(seg.strip())
        if first and not (first.group(1) == "a" and _ARTICLE_A.match(seg.strip(), first.end(1))):
            found.append(first.group(1).upper())
    return found


_CAPITAL = re.compile(r"(?<![\w'’])[A-Z](?![\w'’])")


def _without_option_texts(seg: str, options: Sequence[Any] | None) -> str:
    """``seg`` without the options' own texts that hold a capital letter ("Solution A"): that
    letter names a thing, not an option."""
    for text in map(str, options or ()):
        if _CAPITAL.search(text) and len(text) > 1 and text in seg:
            seg = seg.replace(text, " " * len(text))
    return seg


# "None of the options match this result": the reply's answer is no option
_NO_OPTION = re.compile(
    r"\b(?:none\s+of\s+the\s+(?:options|choices|answers)|no\s+(?:option|choice)"
    r"|not\s+(?:an?\s+|one\s+of\s+the\s+)?(?:option|choice)s?\b(?:\s+(?:given|provided|listed))?)"
    r"(?!\s+(?:[A-Z]\b|\([A-Z]\)))",
    re.I,
)


def _choice_in(seg: str, pre: Prepared, n: int, options: Sequence[Any] | None, question: str) -> Parsed:
    if _NO_OPTION.search(seg):
        return fail("the reply says no option fits")
    unoptioned = _without_option_texts(seg, options)
    found = _letters(unoptioned, pre, n)
    distinct = set(found)
    if not distinct and options:
        by_content = option_by_content(seg, options, question)
        if by_content is not None:
            return Parsed(True, by_content)
    if not found and n < 26 and _letters(unoptioned, pre, 26):
        return fail("a letter outside the options")
    if not distinct:
        return fail("no option letter found")
    if len(distinct) > 1:
        return fail("two different option letters")
    return Parsed(True, found[0])


def parse_choice(
    text: Any, n_options: int = 4, options: Sequence[Any] | None = None, question: str = ""
) -> Parsed:
    """Option letter ``"A"``.. ``chr(ord("A")+n_options-1)``.

    Accepted: ``B``, ``(B)``, ``B)``, ``B.``, ``**B**``, ``Answer: B``, ``The answer is b.``,
    ``Final answer: (C) F3``, ``option B``, ``Option (d)``, ``D is correct``, ``{"answer": "C"}``,
    ``\\boxed{B}``, ``答案：C``, or the content of one option (``options``): its text, its
    number ("The distance is 48.9 m." for the option "48.9 m"), its direction, yes or no. Without
    a final-answer mark only strong forms count (parenthesised, ``option X``, a letter opening a
    line); an echoed option list or instruction ("(A, B, C or D)") is ignored. Two different
    letters -> not ok ("two different option letters").

    >>> options = ["12.4 m", "48.9 m", "103.0 m", "cannot be determined"]
    >>> parse_choice("The distance is 48.9 m.", 4, options).value
    'B'
    >>> parse_choice("Answer: D, because option B is too far", 4).value
    'D'
    """
    try:
        n = max(1, min(26, int(n_options)))
    except (TypeError, ValueError, OverflowError):
        return fail("bad n_options")
    yes_no = bool(options) and {str(o).strip().lower() for o in options or ()} <= {"yes", "no", REFUSAL}
    return read_reply(
        text,
        lambda seg, pre: _choice_in(seg, pre, n, options, question),
        Question(question),
        letters=True,
        negation=not yes_no,  # "Black is not greater than ...": the "not" is the answer
    )


def _yes_no_in(seg: str, question: str) -> Parsed:
    said = yes_no_in(seg.strip())
    return said if said.ok or said.reason != "no yes/no found" else claim_restated(seg, question)


def parse_yes_no(text: Any, question: str = "") -> Parsed:
    """``True`` for yes/true/correct, ``False`` for no/false/incorrect; both -> not ok. Without
    either word, a restatement of the question's claim reads as yes, its denial as no."""
    return read_reply(text, lambda seg, pre: _yes_no_in(seg, question), Question(question), negation=False)
