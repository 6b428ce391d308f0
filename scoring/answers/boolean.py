"""Yes or no, in one segment of a reply."""

from __future__ import annotations

import re

from scoring.answers.base import Parsed, fail
from scoring.answers.markers import content_words

_YES = re.compile(r"\b(?:yes|true|correct|yep|yeah|affirmative|oui|ja|sí|sim|да)\b|是的|はい|네", re.I)
_NO = re.compile(r"\b(?:no|false|incorrect|nope|negative|non|nein|não|нет)\b|不是|否|いいえ|아니", re.I)
_YES_OR_NO = re.compile(r"\b(?:yes|true|no|false)\s*(?:or|/|and)\s*(?:yes|true|no|false)\b", re.I)


def yes_no_in(seg: str) -> Parsed:
    """Yes or no in one segment: ``True`` / ``False``; both -> not ok."""
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


_DENIAL = re.compile(r"\b(?:not|no|never|none|neither|nor|cannot)\b|n't\b", re.I)
# a yes/no question, wherever it stands ("Among the states ..., does Florida have the lowest value?")
_ASKS = re.compile(
    r"\b(?:is|are|was|were|does|do|did|can|could|has|have|will|would|should)\b[^.?!\n]*\?", re.I
)
_CLAIM_SHARE = 0.6  # of the question's words the first sentence must restate


def claim_restated(seg: str, question: str) -> Parsed:
    """Yes or no from a reply that restates a yes/no question's claim as true, or denies it
    ("Is the function injective?" -- "The function is not injective because ...").

    >>> claim_restated("The function is not injective.", "Is the function injective?").value
    False
    """
    asks = _ASKS.search(question or "")
    if asks is None:
        return fail("no yes/no found")
    asked = content_words(asks.group())
    first = re.split(r"(?<=[.!?])\s+|\n", seg.strip(), maxsplit=1)[0]
    said = content_words(first)
    if not asked or len(asked & said) < _CLAIM_SHARE * len(asked):
        return fail("no yes/no found")
    return Parsed(True, _DENIAL.search(first) is None)
