"""Yes or no, in one segment of a reply."""

from __future__ import annotations

import re

from scoring.answers.base import Parsed, fail

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
