"""Numbers as a reply writes them, rewritten as digits before a number is read, and the evidence
levels that are a number's own.

Number words go through `text_to_num` (a maintained parser of spelled numbers, compiled, about
10 µs a reply): "one hundred and eighteen metres" is 118 m, never 18 m. Small isolated words
("one of them") are left alone, as `scoring.answers.numbers` reads them only beside a unit.
Scientific notation written out ("5.45 × 10^1 m") becomes ``5.45e1``.

>>> digits("one hundred and eighteen metres")
'118 metres'
>>> digits("sixty-nine degrees")
'69 degrees'
>>> digits("5.45 × 10^1 m")
'5.45e1 m'
"""

from __future__ import annotations

import re
from collections.abc import Callable

from scoring.answers.evidence import SENTENCES, Question, blank
from scoring.answers.markers import content_words

try:
    from text_to_num import alpha2digit
except ImportError:  # a QGIS whose Python lacks it: compound number words are then left unread
    alpha2digit = None

_SCIENTIFIC = re.compile(
    r"(?<![\w.])(\d+(?:\.\d+)?)[ \t]*[×x*·][ \t]*10[ \t]*(?:\^|\*\*)[ \t]*\{?([-+−]?\d{1,3})\}?"
)
_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SCI_SUPERSCRIPT = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)[ \t]*[×x·][ \t]*10([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3})")
_SPELLED = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen"
    r"|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred"
    r"|thousand|million)\b",
    re.I,
)


_COMPOUND = re.compile(rf"(?:{_SPELLED.pattern})(?:[\s\-]+(?:and[\s\-]+)?(?:{_SPELLED.pattern}))+", re.I)


_PER_AREA = re.compile(r"[ \t]*(?<![A-Za-z])(k?m)[ \t]*(?:\^[ \t]*\{?[ \t]*[-−][ \t]*2[ \t]*\}?|⁻²)")
_ZERO = re.compile(r"(?<!point )\bzero\b", re.I)
_JOINER = "\u2060"  # inside a number word, it keeps the parser from reading the word
_SMALL = r"two|three|four|five|six|seven|eight|nine|ten"
_GROUP = re.compile(
    r"\b(?:the|these|those|both|all|its|their|each|every|other|between|any|top|bottom|first|last|next"
    rf"|remaining)[ \t]+(?P<w>{_SMALL})\b"
    rf"|\b(?P<w2>{_SMALL})(?=[ \t]+(?:consecutive|adjacent|neighbou?ring|successive|given|selected)\b)",
    re.I,
)
_PRECISION = re.compile(
    r"\b(?:(?:to|with|in)[ \t]+)?(?:\d+|one|a|two|three|four|five)[ \t]+(?:decimal[ \t]+(?:places?|digits?)"
    r"|significant[ \t]+(?:figures|digits)|d\.p\.|s\.f\.)",
    re.I,
)


def _keep_word(m: re.Match[str]) -> str:
    name = "w" if m.group("w") else "w2"
    word = m.group(name)
    return m.group()[: m.start(name) - m.start()] + word[0] + _JOINER + word[1:]


def _sci(m: re.Match[str]) -> str:
    return f"{m.group(1)}e{m.group(2).replace('−', '-')}"


def digits(seg: str) -> str:
    """``seg`` with spelled English numbers and written-out scientific notation as digits; a
    precision ("to two decimal places") and a small number naming a group ("the two roads") are
    no values and are left out."""
    if "^" in seg or "⁻" in seg:  # km^{-2}, km⁻²: per square kilometre
        seg = _PER_AREA.sub(lambda m: f" per {m.group(1)}²", seg)
    if "10" in seg:
        seg = _SCIENTIFIC.sub(_sci, seg)
        seg = _SCI_SUPERSCRIPT.sub(lambda m: f"{m.group(1)}e{m.group(2).translate(_SUPERSCRIPT)}", seg)
    if "zero" in seg or "Zero" in seg:  # below the parser's threshold, yet never a word for a group
        seg = _ZERO.sub("0", seg)
    if _SPELLED.search(seg):
        if alpha2digit is not None:
            # isolated words above one: "two bars" is 2, "no one" and "the one" stay words
            seg = str(alpha2digit(_GROUP.sub(_keep_word, seg), "en", 1.5)).replace(_JOINER, "")
            return _PRECISION.sub(lambda m: " " * len(m.group()), seg)
        # without the parser, "one hundred and eighteen" must not be read as 18: no reading at all
        seg = _COMPOUND.sub(lambda m: " " * len(m.group()), seg)
    return seg


# A count's set-asides: the total in "2 of 6", a year ("in 2023").
_OF_TOTAL = re.compile(r"(?<=\d)[ \t]+(?:out[ \t]+of|of|/)[ \t]+(?:the[ \t]+|all[ \t]+)?\d+\b", re.I)
_YEAR = re.compile(r"\b(?:in|since|from|by|until|year|of)[ \t]+(?:1[6-9]\d\d|20\d\d)\b", re.I)


def count_set_aside(seg: str) -> str:
    """``seg`` without the numbers a count's reply names beside its answer (totals, years)."""
    spans = [m.span() for rx in (_OF_TOTAL, _YEAR) for m in rx.finditer(seg)]
    return blank(seg, iter(spans)) if spans else seg


# What each kind of number is called when a sentence states it ("the distance is 48 m").
_NOUNS = {
    "distance": r"distance|length|perimeter|far|apart|away|long|separat\w*|gap",
    "area": r"area|size|surface|covers?|footprint",
    "angle": r"bearing|azimuth|heading|direction|angle|orientation",
    "density": r"density|per\s+(?:square\s+)?k(?:ilo)?m|concentration",
    "count": r"count|number|how\s+many|total|in\s+all|altogether|sum|difference|gap|answer|value|result",
}
_STATES = (
    r"(?:is|are|was|of|=|:|equals?|measures?|comes\s+to|amounts\s+to|totals?|stands\s+at"
    r"|about|around|approximately|roughly)"
)


def stated_sentence(kind: str) -> re.Pattern[str]:
    """A sentence that states a value of ``kind`` (its noun, then a verb of stating; for a count
    also "there are N")."""
    there = r"|\bthere\s+(?:are|is|were|was|will\s+be)\b" if kind == "count" else ""
    return re.compile(rf"\b(?:{_NOUNS[kind]})\b[^.!?\n]{{0,60}}?\b{_STATES}(?!\w){there}", re.I)


def _stating(seg: str, stated: re.Pattern[str], count_values: Callable[[str], int]) -> list[str]:
    return [
        m.group()
        for m in SENTENCES.finditer(seg)
        if m.group().strip() and stated.search(m.group()) and count_values(m.group()) == 1
    ]


def all_stated(seg: str, stated: re.Pattern[str], count_values: Callable[[str], int]) -> str | None:
    """The sentences of ``seg`` that state a value of the asked kind with one value in each
    ("The distance is 48 m. From the centroid: 12 m east, 46 m north."), or a first sentence that
    is only a value ("48 m. Because ..."): what the reply says the answer is, beside its working."""
    sentences = [m.group() for m in SENTENCES.finditer(seg) if m.group().strip()]
    if sentences and len(sentences[0].split()) <= 3 and re.search(r"\d", sentences[0]):
        return sentences[0]
    found = _stating(seg, stated, count_values)
    return " ".join(found) if found else None


_RESTATES = 0.5  # of the question's words a sentence must share to restate it


def question_stated(seg: str, question: str, count_values: Callable[[str], int]) -> str | None:
    """The last sentence of ``seg`` that restates the question with one value in it ("The pencil
    is about 8 inches long." to "The pencil is about (_) inches long.")."""
    asked = content_words(question)
    if len(asked) < 2:
        return None
    found = [
        m.group()
        for m in SENTENCES.finditer(seg)
        if len(asked & content_words(m.group())) >= _RESTATES * len(asked) and count_values(m.group()) == 1
    ]
    return found[-1] if found else None


def last_stated(seg: str, stated: re.Pattern[str], count_values: Callable[[str], int]) -> str | None:
    """The last such sentence, when they disagree: a reply's working ends in its result
    ("... is approximately 7.5 inches. Rounding, the length of the pencil is 8 inches.")."""
    found = _stating(seg, stated, count_values)
    return found[-1] if found else None


def named_numbers(question: str) -> tuple[re.Pattern[str], ...]:
    """Patterns of the numbers a question names ("within 50 m of F0"), to set them aside."""
    asked = digits(question or "")  # "these two people": 2 is the question's, not an answer
    found = {m.group() for m in re.finditer(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.]\d)", asked)}
    unit = r"(?:[ \t]*(?:m|km|°|metres?|meters?)\b)?"
    # the whole number only: "3" named by the question is not the 3 of "3.25" or "$3,250"
    return tuple(re.compile(rf"(?<![\w.,]){re.escape(n)}(?![\d])(?![.,]\d){unit}") for n in found)


def question_of(text: str) -> Question:
    """What a number reader knows of the question: its wording and the numbers it names."""
    return Question(text, named_numbers(text))
