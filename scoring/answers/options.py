"""A multiple-choice reply that answers with an option's content instead of its letter.

Options are read by what they hold: yes and no (a prose "No, it is not."), one number with its
unit (compared by value, units converted: "0.0489 km" is the option "48.9 m"), one compass
direction ("It lies to the north-east" is the option "NE"), or text, matched as a whole phrase
("the frontal lobe"). Exactly one option must match; the "cannot be determined" option is read
as a refusal elsewhere, never here.

>>> option_by_content("No, they do not touch.", ["yes", "no"])
'B'
>>> option_by_content("The bearing is 100°.", ["80°", "100°", "120°", "140°"])
'B'
>>> option_by_content("The answer is the frontal lobe.", ["parietal lobe", "frontal lobe"])
'B'
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from scoring.answers.boolean import claim_restated, yes_no_in
from scoring.answers.directions import find_directions
from scoring.answers.numbers import KINDS, Quantity, find_quantities, unit_kind_of
from scoring.vocab import REFUSAL


def norm(text: str) -> str:
    """Lower case, punctuation as single spaces (``°``, ``²``, decimal points and hyphens kept)."""
    s = unicodedata.normalize("NFKC", text).lower()
    s = re.sub(r"[^\w.²°-]+", " ", s)
    return re.sub(r"\s+", " ", s).strip(" .")


def _letter(i: int) -> str:
    return chr(ord("A") + i)


def _one(hits: set[int]) -> str | None:
    return _letter(hits.pop()) if len(hits) == 1 else None


def _single_quantity(option: str) -> Quantity | None:
    """The option's one number, when it holds one number and at most a unit after it."""
    kind = unit_kind_of(option) or "count"
    found = find_quantities(option, kind if kind in KINDS else "count")
    if len(found) != 1 or found[0].value is None:
        return None
    rest = (option[: found[0].start] + option[found[0].end :]).strip(" .~≈")
    return found[0] if len(rest) <= 12 else None


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def _by_number(seg: str, options: Sequence[str], idx: list[int]) -> str | None:
    quantities = {i: _single_quantity(options[i]) for i in idx}
    if any(q is None for q in quantities.values()):
        return None
    hits: set[int] = set()
    for i, q in quantities.items():
        assert q is not None
        kind = unit_kind_of(options[i]) if q.unit else None
        if kind in KINDS:
            said = find_quantities(seg, kind)
            if any(s.value is not None and _close(s.value, q.value or 0.0) for s in said):
                hits.add(i)
        elif any(_close(s.number, q.number) and s.unit is None for s in find_quantities(seg, "count")):
            hits.add(i)
    return _one(hits)


def _by_direction(seg: str, options: Sequence[str], idx: list[int]) -> str | None:
    labels: dict[int, str] = {}
    for i in idx:
        found = {d for d, _ in find_directions(options[i])}
        if len(found) != 1:
            return None
        labels[i] = found.pop()
    said = {d for d, _ in find_directions(seg)}
    return _one({i for i, label in labels.items() if label in said})


# what follows these words is a comparison's other side, not the answer ("R1 is larger than R2")
_REFERENCE = re.compile(r"\b(?:than|compared\s+(?:to|with)|unlike|versus|vs)\b", re.I)


def _by_phrase(seg: str, options: Sequence[str], idx: list[int]) -> str | None:
    text = f" {norm(seg)} "
    hits = {i for i in idx if norm(options[i]) and f" {norm(options[i])} " in text}
    # an option inside another that also matched ("north" in "north-east") is not a second answer
    hits = {i for i in hits if not any(j != i and norm(options[i]) in norm(options[j]) for j in hits)}
    if len(hits) > 1 and (compared := _REFERENCE.search(seg)) is not None:
        before = f" {norm(seg[: compared.start()])} "
        hits = {i for i in hits if f" {norm(options[i])} " in before} or hits
    return _one(hits)


def option_by_content(seg: str, options: Sequence[Any], question: str = "") -> str | None:
    """The letter of the one option whose content ``seg`` states, if exactly one; yes and no
    also as the question's claim restated, or denied ("Is F1 within F0?" -- "F1 is not within F0")."""
    texts = [str(o) for o in options]
    idx = [i for i, t in enumerate(texts) if norm(t) and norm(t) != REFUSAL]
    if not idx:
        return None
    if {norm(texts[i]) for i in idx} <= {"yes", "no"}:
        said = yes_no_in(seg.strip())
        if not said.ok:
            said = claim_restated(seg, question)
        wanted = ("yes" if said.value else "no") if said.ok else None
        return _one({i for i in idx if norm(texts[i]) == wanted})
    exact = {i for i in idx if norm(texts[i]) == norm(seg)}
    if len(exact) == 1:
        return _letter(exact.pop())
    for by in (_by_number, _by_direction, _by_phrase):
        letter = by(seg, texts, idx)
        if letter is not None:
            return letter
    return None
