"""Deterministic parsing of a model's raw text answer into a normalised value -- never guessing.

Every ``parse_*`` function takes the raw response text and returns a :class:`Parsed`:
``ok`` (a single answer was found), ``value`` (the normalised answer), ``reason`` (why parsing
failed, empty when ok) and ``refusal`` (the model said the answer cannot be determined).
No function raises on any input (non-text, huge bodies, lone surrogates, deep JSON); only the
dispatcher :func:`parse_answer` raises ``ValueError`` for an unknown answer type or missing context.

Preprocessing (:func:`preprocess`), shared by all parsers except :func:`parse_edit`:

* Input longer than ``RAW_CAP`` characters is cut to its last ``RAW_CAP`` characters; after the
  reasoning blocks are removed only the last ``MAX_CHARS`` characters are considered.
* Reasoning blocks ``<think>``/``<thinking>``/``<reasoning>`` ... closing tag are removed; when a
  closing tag is present everything before the last closing tag is discarded (templates often put
  the opening tag in the prompt). An opening tag that is never closed makes the whole rest
  "reasoning": the text is then only accepted through an explicit final-answer line.
* Markdown emphasis (``**``, ``__``, ``*``, ``_x_``), backticks and code-fence lines are removed;
  headings markers (``#``) and block-quote markers are dropped.
* Final-answer line: the last line containing ``Final answer:``, ``Answer:``, ``The answer is``,
  ``The correct option/answer/choice is`` (markdown already removed, so ``**Answer:** X`` works)
  wins; its content (rest of that line, or the next non-empty line when the rest is empty) is
  the only text looked at. Reasoning before it is ignored. Without such a line the whole text is
  used, and each parser then requires that exactly one distinct candidate is present.

Refusals (:func:`is_refusal`): "cannot/can't/could not be determined", "not enough/insufficient
information", "impossible to tell/determine", "not determinable", "is not provided/shown/visible",
"no way to tell", a bare "unknown"/"N/A", ... detected in the answer segment; every parser then
returns ``ok=False, reason="refusal", refusal=True``.

Numbers (:func:`parse_number`): ``1,234.5`` (comma followed by exactly three digits is a
thousands separator), ``12,5`` (comma followed by one, two or four+ digits is a decimal comma),
thin / no-break spaces as thousands separators (``1 234,5`` with such a space -> 1234.5), but a
plain space never joins digits (``1 234`` is two numbers, hence ambiguous). ``-`` is a sign only
when not preceded by a word character (``10-12 m`` is a range). Digits inside identifiers
(``F3``, ``B96``) are not numbers. Units are converted to the base unit of the kind: distance ->
metres, area -> m², angle -> degrees (not normalised), density -> per km², count -> plain integer.
A bare number is taken to be in the base unit; a number followed by a unit of another kind (or
``%``) is not a candidate. Selection: with a final-answer line, the last number of that line (a
range such as ``10-12 m`` there is rejected); otherwise the single distinct value in the text
(``1.2 km (1200 m)`` is one value), else "ambiguous: several numbers". Spelled numbers
(zero..twenty, thirty..ninety, hundred, thousand) are read only when followed by a unit or, for
counts, when they are the whole answer segment (up to three words).

Directions: 8-point words (``north-east``, ``northeast``, ``North East``, ``northeasterly``),
abbreviations in capitals anywhere (``NE``, ``N.E.``) and in any case when they are the whole
answer (``ne``). ``northern``/``westernmost`` are not directions. 16-point names
(``north-northeast``) are rejected; two different directions are ambiguous.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Parsed",
    "preprocess",
    "answer_segment",
    "is_refusal",
    "parse_choice",
    "parse_number",
    "parse_direction",
    "parse_relative_direction",
    "parse_axis",
    "parse_feature_id",
    "parse_ordering",
    "parse_yes_no",
    "parse_edit",
    "parse_answer",
    "find_quantities",
    "find_directions",
    "Quantity",
    "ANSWER_TYPES",
    "DIRECTIONS8",
]

RAW_CAP = 200_000  # characters of raw input looked at (the end of it)
MAX_CHARS = 20_000  # characters considered after reasoning blocks are removed
EDIT_CAP = 400_000  # characters of raw input looked at by parse_edit
MAX_OPERATIONS = 20
MAX_MAGNITUDE = 1e9
MAX_JSON_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Parsed:
    """Result of a parse: ``value`` is meaningful only when ``ok``."""

    ok: bool
    value: Any = None
    reason: str = ""
    refusal: bool = False


def _fail(reason: str) -> Parsed:
    return Parsed(False, None, reason, False)


_REFUSED = Parsed(False, None, "refusal", True)


# --------------------------------------------------------------------------- preprocessing

_THINK_CLOSE = re.compile(r"</\s*(?:think|thinking|reasoning)\s*>", re.I)
_THINK_OPEN = re.compile(r"<\s*(?:think|thinking|reasoning)\s*>", re.I)
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)[^\n]*$", re.M)
_EMPHASIS = re.compile(r"\*+|__+|`+|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)")
_LINE_MARKERS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?)", re.M)
_ANSWER_LINE = re.compile(
    r"(?:\bfinal\s+answer\b|\bcorrect\s+(?:answer|option|choice)\s+(?:is|would\s+be)\b"
    r"|\bthe\s+answer\s+(?:is|would\s+be)\b|\banswer\b(?=\s*[:=：]))"
    r"\s*(?:is\b)?\s*[:=：\-–]?[ \t]*(?P<rest>[^\n]*)",
    re.I,
)
_WS = re.compile(r"[ \t\r\f\v]+")


@dataclass(frozen=True, slots=True)
class _Pre:
    text: str  # cleaned text (reasoning removed, markdown removed)
    segment: str  # final-answer content, or the whole text
    rest: str  # text from the final-answer content to the end (ordering lists)
    explicit: bool  # segment comes from a final-answer line
    reasoning_only: bool  # an unclosed reasoning block covered the text


def _to_text(text: Any) -> str | None:
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text[-RAW_CAP * 4 :]).decode("utf-8", errors="replace")
    return None


def _strip_reasoning(text: str) -> tuple[str, bool]:
    text = text[-RAW_CAP:]
    last_close = None
    for last_close in _THINK_CLOSE.finditer(text):
        pass
    if last_close is not None:
        text = text[last_close.end() :]
    # after the last closing tag no block can be closed any more: only an unclosed opening remains
    m = _THINK_OPEN.search(text)
    reasoning_only = False
    if m is not None:
        # unclosed block: only an explicit final-answer line can rescue it
        reasoning_only = not text[: m.start()].strip()
        text = text[: m.start()] + " " + text[m.end() :] if reasoning_only else text[: m.start()]
    return text[-MAX_CHARS:], reasoning_only


def _clean_markdown(text: str) -> str:
    text = _FENCE_LINE.sub("", text)
    text = _EMPHASIS.sub("", text)
    text = _LINE_MARKERS.sub("", text)
    return text


def preprocess(text: Any) -> _Pre | None:
    """Clean ``text`` and locate the answer segment; ``None`` when ``text`` is not text."""
    raw = _to_text(text)
    if raw is None:
        return None
    cleaned, reasoning_only = _strip_reasoning(raw)
    cleaned = _clean_markdown(cleaned)
    last = None
    for last in _ANSWER_LINE.finditer(cleaned):
        pass
    if last is not None:
        seg = last.group("rest").strip()
        rest = cleaned[last.start("rest") :]
        if not seg:
            tail = rest.lstrip()
            seg = tail.split("\n", 1)[0].strip()
        return _Pre(cleaned.strip(), seg, rest.strip(), True, reasoning_only)
    if reasoning_only:
        return _Pre("", "", "", False, True)
    stripped = cleaned.strip()
    return _Pre(stripped, stripped, stripped, False, False)


def answer_segment(text: Any) -> str:
    """The part of ``text`` the parsers look at (final-answer content or whole cleaned text)."""
    pre = preprocess(text)
    return "" if pre is None else pre.segment


def _prepare(text: Any) -> tuple[_Pre | None, Parsed | None]:
    """Common prologue: returns (pre, failure)."""
    pre = preprocess(text)
    if pre is None:
        return None, _fail("not text")
    if _refusal_in(pre.segment):
        return pre, _REFUSED
    if not pre.segment:
        return pre, _fail(
            "unterminated reasoning block, no final answer" if pre.reasoning_only else "empty response"
        )
    return pre, None


# --------------------------------------------------------------------------- refusals

_REFUSAL = re.compile(
    r"\b(?:can\s*not|can'?t|cannot|could\s+not|couldn'?t|unable\s+to|impossible\s+to|not\s+possible\s+to"
    r"|no\s+way\s+to)\s+(?:be\s+)?(?:accurately\s+|precisely\s+|reliably\s+|exactly\s+)?"
    r"(?:determined?|tell|told|answer(?:ed)?|say|know|known|calculated?|computed?|measured?|identif(?:y|ied)"
    r"|establish(?:ed)?|infer(?:red)?|estimated?|derived?|ascertain(?:ed)?)\b"
    r"|\b(?:not|in)\s*(?:enough|sufficient)\s+(?:information|data|detail|details|context)\b"
    r"|\binsufficient\s+(?:information|data|detail|details|context)\b"
    r"|\bnot\s+(?:determinable|answerable|computable|possible\s+to\s+(?:determine|tell|say))\b"
    r"|\bindeterminate\b|\bundeterminable\b"
    r"|\b(?:is|are)\s+not\s+(?:provided|given|shown|visible|available|specified|indicated|labell?ed)\b"
    r"|\b(?:information|data)\s+(?:is\s+)?not\s+(?:available|provided|given)\b"
    r"|\b(?:is|remains)\s+unknown\b|\bno\s+(?:answer|information)\s+(?:can|is)\b"
    r"|^\W*(?:unknown|n/?a|not\s+applicable|i\s+don'?t\s+know|no\s+idea|unsure)\W*$",
    re.I,
)


def _refusal_in(segment: str) -> bool:
    return bool(segment) and _REFUSAL.search(segment) is not None


def is_refusal(text: Any) -> bool:
    """True when the answer (final-answer line, else the whole text) says it cannot be determined."""
    pre = preprocess(text)
    return pre is not None and _refusal_in(pre.segment)


# --------------------------------------------------------------------------- multiple choice

_LETTER_STRONG = (
    r"\(\s*(?P<a>{L})\s*\)"  # (B)
    r"|\[\s*(?P<b>{L})\s*\]"  # [B]
    r"|\b(?i:option|choice|letter)\s*[:#]?\s*\(?(?P<c>{L})\b(?![\w'’])"  # option B
    r"|^[ \t]*(?P<d>{L})[ \t]*(?:[.):]|$)"  # B.  B)  B:  B  (line start)
)


def _choice_patterns(n_options: int) -> tuple[re.Pattern, re.Pattern, str]:
    n = max(1, min(26, int(n_options)))
    last = chr(ord("A") + n - 1)
    letters = f"[A-{last}]"
    strong = re.compile(_LETTER_STRONG.format(L=letters), re.M)
    lone = re.compile(rf"(?<![\w'’\-])({letters})(?![\w'’\-])")
    return strong, lone, last


_CHOICE_CACHE: dict[int, tuple[re.Pattern, re.Pattern, str]] = {}
_ARTICLE_A = re.compile(r"\s+(?!(?:or|and|nor|vs|and/or)\b)[a-z]")


def parse_choice(text: Any, n_options: int = 4) -> Parsed:
    """Option letter ``"A"``.. ``chr(ord("A")+n_options-1)``.

    Accepted: ``B``, ``(B)``, ``B)``, ``B.``, ``**B**``, ``Answer: B``, ``Final answer: (C) F3``,
    ``The correct option is D``, ``option B``. In the final-answer segment every stand-alone
    capital letter of the option range counts (except an article ``A`` followed by a lower-case
    word); without a final-answer line only strong forms count (parenthesised, ``option X`` or a
    letter starting a line followed by ``.``/``)``/``:``/end of line). Two different letters ->
    not ok ("two different option letters").
    """
    try:
        n = int(n_options)
    except (TypeError, ValueError, OverflowError):
        return _fail("bad n_options")
    pats = _CHOICE_CACHE.get(n)
    if pats is None:
        pats = _CHOICE_CACHE.setdefault(n, _choice_patterns(n))
    strong, lone, _ = pats
    pre, failure = _prepare(text)
    if failure:
        return failure
    seg = pre.segment
    found: list[str] = []
    for m in strong.finditer(seg):
        found.append(next(g for g in m.groups() if g))
    if pre.explicit or len(seg) <= 12:
        for m in lone.finditer(seg):
            letter = m.group(1)
            if letter == "A" and _ARTICLE_A.match(seg, m.end()):
                continue
            found.append(letter)
    distinct = set(found)
    if not distinct:
        return _fail("no option letter found")
    if len(distinct) > 1:
        return _fail("two different option letters")
    return Parsed(True, found[0])


# --------------------------------------------------------------------------- numbers & units

_NUMBER = (
    r"(?<![\w.,\u2009\u202f\u00a0])(?<![A-Za-z]-)"
    r"(?P<sign>[-+\u2212]?)"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])"  # 1,234,567.5
    r"|\d{1,3}(?:[\u2009\u202f\u00a0]\d{3})+(?:[.,]\d+)?"  # 1 234,5 (thin/nbsp)
    r"|\d+,(?:\d{1,2}|\d{4,})(?!\d)"  # 12,5 decimal comma
    r"|\d+(?:\.\d+)?|\.\d+)"
    r"(?:[eE](?P<exp>[-+]?\d{1,3}))?"
    r"(?![\d])"
)

# unit spelling -> (kind, factor to the kind's base unit); keys normalised by _ukey
_UNITS: dict[str, tuple[str, float]] = {}
_UNIT_SPELLINGS: list[str] = []
_UKEY_DROP = re.compile(r"[\s.]+")


def _ukey(token: str) -> str:
    return _UKEY_DROP.sub("", token.lower())


def _add(kind: str, factor: float, *names: str) -> None:
    for name in names:
        _UNITS[_ukey(name)] = (kind, factor)
        _UNIT_SPELLINGS.append(name)


def _spelling_alt(names: Iterable[str]) -> str:
    alts = []
    for u in sorted(set(names), key=len, reverse=True):
        alts.append(re.escape(u).replace(r"\ ", r"[ \t]*").replace(r"\.", r"\.?"))
    return "|".join(alts)


_FT, _MI, _YD, _NMI = 0.3048, 1609.344, 0.9144, 1852.0
_add("distance", 1.0, "m", "metre", "metres", "meter", "meters", "mtr", "mtrs")
_add("distance", 1000.0, "km", "kms", "kilometre", "kilometres", "kilometer", "kilometers")
_add("distance", 0.01, "cm", "centimetre", "centimetres", "centimeter", "centimeters")
_add("distance", 0.001, "mm", "millimetre", "millimetres", "millimeter", "millimeters")
_add("distance", _FT, "ft", "foot", "feet", "'", "’", "′")
_add("distance", _MI, "mi", "mile", "miles")
_add("distance", _YD, "yd", "yds", "yard", "yards")
_add("distance", _NMI, "nmi", "nautical mile", "nautical miles")
_add(
    "area",
    1.0,
    "m²",
    "m2",
    "m^2",
    "sq m",
    "sq. m",
    "square metre",
    "square metres",
    "square meter",
    "square meters",
    "sq metres",
    "sq meters",
)
_add(
    "area",
    1e6,
    "km²",
    "km2",
    "km^2",
    "sq km",
    "sq. km",
    "square kilometre",
    "square kilometres",
    "square kilometer",
    "square kilometers",
    "square km",
)
_add("area", 1e4, "ha", "hectare", "hectares")
_add("area", 4046.8564224, "acre", "acres")
_add("area", _FT**2, "ft²", "ft2", "sq ft", "sq. ft", "square foot", "square feet")
_add("area", _MI**2, "mi²", "mi2", "sq mi", "sq. mi", "square mile", "square miles")
_add("angle", 1.0, "°", "º", "deg", "degs", "degree", "degrees")
_add("percent", 1.0, "%", "percent", "per cent")

# density: "per"/"/" + an area unit; factor converts "per <unit>" to per km²
_DENSITY_AREA: dict[str, float] = {}
_DENSITY_SPELLINGS: list[str] = []
for _name, (_kind, _factor) in list(zip(_UNIT_SPELLINGS, [_UNITS[_ukey(n)] for n in _UNIT_SPELLINGS], strict=False)):
    if _kind == "area":
        _DENSITY_AREA[_ukey(_name)] = 1e6 / _factor
        _DENSITY_SPELLINGS.append(_name)

_UNIT_RE = re.compile(
    r"[ \t]*(?:-[ \t]*)?(?P<unit>" + _spelling_alt(_UNIT_SPELLINGS) + r")(?![a-zA-Z0-9²])", re.I
)
_DENSITY_RE = re.compile(
    r"(?:[ \t]+[A-Za-z][\w\-]*){0,2}?[ \t]*(?:per|/|an?)[ \t]*(?P<area>"
    + _spelling_alt(_DENSITY_SPELLINGS)
    + r")(?![a-zA-Z0-9²])",
    re.I,
)

_WORD_NUMS = {
    w: float(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_WORD_NUMS.update(
    {
        "thirty": 30.0,
        "forty": 40.0,
        "fifty": 50.0,
        "sixty": 60.0,
        "seventy": 70.0,
        "eighty": 80.0,
        "ninety": 90.0,
        "hundred": 100.0,
        "a hundred": 100.0,
        "thousand": 1000.0,
        "a thousand": 1000.0,
        "half a": 0.5,
        "a half": 0.5,
    }
)
_WORD_NUM_RE = re.compile(r"\b(?P<word>" + "|".join(sorted(_WORD_NUMS, key=len, reverse=True)) + r")\b", re.I)
_NUMBER_RE = re.compile(_NUMBER)
_RANGE_RE = re.compile(
    _NUMBER
    + r"[ \t]*(?:[a-zA-Z°²']{0,12}[ \t]*)?(?:-|–|—|to|and)[ \t]*"
    + _NUMBER.replace("?P<sign>", "?:").replace("?P<num>", "?:").replace("?P<exp>", "?:"),
    re.I,
)

_KINDS = ("distance", "area", "angle", "density", "count")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number found in text: ``value`` in the base unit of the requested kind (``None`` when
    the unit belongs to another kind), ``number`` as written, ``unit`` the unit token or None."""

    value: float | None
    number: float
    unit: str | None
    start: int
    end: int


_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?")


def _to_float(m: re.Match) -> float | None:
    num = m.group("num")
    for sp in ("\u2009", "\u202f", "\u00a0"):
        num = num.replace(sp, "")
    if "," in num:
        num = num.replace(",", "") if _THOUSANDS.fullmatch(num) else num.replace(",", ".")
    try:
        value = float(num)
        if m.group("exp"):
            value *= 10.0 ** int(m.group("exp"))
    except (ValueError, OverflowError):
        return None
    if m.group("sign") in ("-", "\u2212"):
        value = -value
    return value if math.isfinite(value) else None


_FEET_MARKS = ("'", "’", "′")


def _unit_after(text: str, pos: int, kind: str) -> tuple[str | None, str | None, float, int]:
    """(unit token, its kind, factor, end) for the unit following position ``pos``."""
    if kind == "density":
        m = _DENSITY_RE.match(text, pos)
        if m:
            factor = _DENSITY_AREA.get(_ukey(m.group("area")))
            if factor is not None:
                return m.group("area"), "density", factor, m.end()
    m = _UNIT_RE.match(text, pos)
    if m:
        token = m.group("unit")
        if token in _FEET_MARKS:
            # a closing quote ('Upl 6') is not a feet mark: odd number of quotes before on the line
            line_start = text.rfind("\n", 0, pos) + 1
            before = text[line_start:pos]
            if sum(before.count(q) for q in _FEET_MARKS + ("‘",)) % 2 == 1:
                return None, None, 1.0, pos
        entry = _UNITS.get(_ukey(token))
        if entry is None:
            return token, "unknown", 1.0, m.end()
        return token, entry[0], entry[1], m.end()
    return None, None, 1.0, pos


def find_quantities(text: str, unit_kind: str, words: bool = False) -> list[Quantity]:
    """All numbers in ``text`` (already cleaned) with their units, converted to ``unit_kind``."""
    out: list[Quantity] = []
    for m in _NUMBER_RE.finditer(text):
        number = _to_float(m)
        if number is None:
            continue
        unit, ukind, factor, end = _unit_after(text, m.end(), unit_kind)
        if unit is None and m.end() < len(text) and (text[m.end()].isalpha() or text[m.end()] == "_"):
            continue  # 5th, 3D, 12abc: not a quantity
        out.append(_quantity(number, unit, ukind, factor, unit_kind, m.start(), end))
    if words:
        for m in _WORD_NUM_RE.finditer(text):
            number = _WORD_NUMS[re.sub(r"\s+", " ", m.group("word").lower())]
            unit, ukind, factor, end = _unit_after(text, m.end(), unit_kind)
            if unit is None and words != "bare":
                continue
            out.append(_quantity(number, unit, ukind, factor, unit_kind, m.start(), end))
        out.sort(key=lambda q: q.start)
    return out


def _quantity(number, unit, ukind, factor, kind, start, end) -> Quantity:
    if unit is None:
        value = number
    elif ukind == kind:
        value = number * factor
    else:
        value = None
    if value is not None and not math.isfinite(value):
        value = None
    return Quantity(value, number, unit, start, end)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def parse_number(text: Any, unit_kind: str) -> Parsed:
    """A single number converted to the base unit of ``unit_kind`` (see module docstring).

    ``unit_kind`` is one of ``distance`` (metres), ``area`` (m²), ``angle`` (degrees),
    ``density`` (per km²), ``count`` (a whole number, returned as ``int``).
    """
    if unit_kind not in _KINDS:
        return _fail(f"unknown unit kind {unit_kind!r}")
    pre, failure = _prepare(text)
    if failure:
        return failure
    seg = pre.segment
    words: bool | str = True
    if unit_kind == "count" and len(seg.split()) <= 3:
        words = "bare"
    quantities = find_quantities(seg, unit_kind, words=words)
    if not quantities:
        return _fail("no number")
    usable = [q for q in quantities if q.value is not None]
    if unit_kind == "count":
        usable = [q for q in usable if q.unit is None]
    if not usable:
        return _fail("no unitless count" if unit_kind == "count" else f"no number with a {unit_kind} unit")
    if (
        unit_kind != "count"
        and all(q.unit is None for q in usable)
        and any(q.value is None and q.unit is not None for q in quantities)
    ):
        return _fail(f"number with a unit that is not a {unit_kind} unit")
    if pre.explicit:
        if len({round(q.value, 9) for q in usable}) > 1 and _RANGE_RE.search(seg):
            return _fail("range, not a single number")
        chosen = usable[-1].value
    else:
        distinct: list[float] = []
        for q in usable:
            if not any(_same(q.value, d) for d in distinct):
                distinct.append(q.value)
        if len(distinct) > 1:
            return _fail("ambiguous: several numbers")
        chosen = distinct[0]
    if unit_kind == "count":
        if chosen < 0 or chosen != int(chosen):
            return _fail("count is not a whole non-negative number")
        return Parsed(True, int(chosen))
    if abs(chosen) > 1e15:
        return _fail("number too large")
    return Parsed(True, float(chosen))


# --------------------------------------------------------------------------- directions

DIRECTIONS8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_CARD = {"north": "N", "south": "S", "east": "E", "west": "W"}
_SIXTEEN = re.compile(
    r"\b(?:north|south|east|west)[\s\-–]+(?:north|south)[\s\-–]?(?:east|west)\b"
    r"|\b(?:NNE|ENE|ESE|SSE|SSW|WSW|WNW|NNW)\b",
    re.I,
)
_DIR_WORD = re.compile(
    r"\b(?P<ns>north|south)(?:[ \t]*[\-–][ \t]*|[ \t]+|)(?P<ew>east|west)(?:erly|wards?)?\b"
    r"|\b(?P<one>north|south|east|west)(?:erly|wards?)?\b(?![ \t]*[\-–]?[ \t]*(?:east|west)ern\b)",
    re.I,
)
_DIR_ABBR = re.compile(r"(?<![\w.'’\-])(?P<a>[NS]\.?[ \t]?[EW]|[NSEW])\.?(?![\w'’\-])")
_DIR_WHOLE = re.compile(r"^\W*(?P<a>[nsNS]\.?\s?[ewEW]|[nsewNSEW])\W*$")


def find_directions(text: str) -> list[tuple[str, int]]:
    """8-point directions named in ``text`` as (label, position), in order of appearance."""
    found: list[tuple[str, int]] = []
    for m in _DIR_WORD.finditer(text):
        if m.group("one"):
            found.append((_CARD[m.group("one").lower()], m.start()))
        else:
            found.append((_CARD[m.group("ns").lower()] + _CARD[m.group("ew").lower()], m.start()))
    whole = _DIR_WHOLE.match(text)
    if whole:
        found.append((re.sub(r"[.\s]", "", whole.group("a")).upper(), whole.start("a")))
    else:
        for m in _DIR_ABBR.finditer(text):
            found.append((re.sub(r"[.\s]", "", m.group("a")), m.start()))
    found.sort(key=lambda t: t[1])
    return found


def parse_direction(text: Any, scheme: str | int = "8") -> Parsed:
    """Compass direction: scheme ``"4"`` -> N/E/S/W, ``"8"`` -> N/NE/E/SE/S/SW/W/NW."""
    scheme = str(scheme)
    if scheme not in ("4", "8"):
        return _fail(f"unknown direction scheme {scheme!r}")
    pre, failure = _prepare(text)
    if failure:
        return failure
    seg = pre.segment
    if _SIXTEEN.search(seg):
        return _fail("16-point direction, not in the scheme")
    found = {d for d, _ in find_directions(seg)}
    if not found:
        return _fail("no direction found")
    if len(found) > 1:
        return _fail("several different directions")
    label = found.pop()
    if scheme == "4" and len(label) == 2:
        return _fail("intercardinal direction in a 4-point scheme")
    return Parsed(True, label)


_REL = {
    "ahead": re.compile(r"\b(?:ahead|in\s+front|forwards?|straight\s+on|front)\b", re.I),
    "behind": re.compile(r"\b(?:behind|backwards?|back|rear|to\s+the\s+back)\b", re.I),
    "left": re.compile(r"\b(?:left|left[\s\-]hand(?:\s+side)?)\b", re.I),
    "right": re.compile(r"\b(?:right|right[\s\-]hand(?:\s+side)?)\b", re.I),
}


def parse_relative_direction(text: Any) -> Parsed:
    """Egocentric direction: ``ahead`` / ``behind`` / ``left`` / ``right``."""
    pre, failure = _prepare(text)
    if failure:
        return failure
    seg = pre.segment
    found = [name for name, rx in _REL.items() if rx.search(seg)]
    if not found:
        return _fail("no relative direction found")
    if len(found) > 1:
        return _fail("several different relative directions")
    return Parsed(True, found[0])


_AXIS_TOKEN = r"(?:north[\s\-]?east|north[\s\-]?west|south[\s\-]?east|south[\s\-]?west|north|south|east|west|NE|NW|SE|SW|N|S|E|W)"
_AXIS_RE = re.compile(
    rf"(?<![\w\-])(?P<a>{_AXIS_TOKEN})[ \t]*(?:-|–|—|/|to|\u2194|<->|↔)[ \t]*(?P<b>{_AXIS_TOKEN})(?![\w])",
    re.I,
)
_AXES = {
    frozenset(("N", "S")): "N-S",
    frozenset(("NE", "SW")): "NE-SW",
    frozenset(("E", "W")): "E-W",
    frozenset(("NW", "SE")): "NW-SE",
}


def _dir_label(token: str) -> str:
    t = re.sub(r"[\s\-]", "", token.lower())
    if t in ("n", "s", "e", "w", "ne", "nw", "se", "sw"):
        return t.upper()
    if t in _CARD:
        return _CARD[t]
    return _CARD[t[:5]] + _CARD[t[5:]]


def parse_axis(text: Any) -> Parsed:
    """Orientation axis ``N-S``, ``NE-SW``, ``E-W`` or ``NW-SE`` from a pair of opposite
    directions (``north–south``, ``S-N``, ``SW–NE``, ``east to west``). Words such as
    "horizontal" or "vertical" are not accepted; two different axes -> not ok."""
    pre, failure = _prepare(text)
    if failure:
        return failure
    found = set()
    bad = False
    for m in _AXIS_RE.finditer(pre.segment):
        pair = frozenset((_dir_label(m.group("a")), _dir_label(m.group("b"))))
        axis = _AXES.get(pair)
        if axis is None:
            bad = True
        else:
            found.add(axis)
    if len(found) > 1:
        return _fail("several different axes")
    if found:
        return Parsed(True, found.pop())
    return _fail("directions are not opposite" if bad else "no axis found")


# --------------------------------------------------------------------------- feature ids

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


_NEITHER = re.compile(r"\b(?:neither|same (?:vertical )?level)\b", re.I)


def parse_feature_id(text: Any, valid_ids: Iterable[str]) -> Parsed:
    """One id of ``valid_ids`` (case-insensitive; ``feature F3``; ``Feature 3`` when exactly one
    valid id ends in that number). Two different ids -> not ok, unless a final-answer line names
    exactly one."""
    try:
        valid = [str(v) for v in valid_ids]
    except TypeError:
        return _fail("bad valid_ids")
    pre, failure = _prepare(text)
    if failure:
        return failure
    got, unknown = _find_ids(pre.segment, valid)
    distinct = set(got)
    if len(distinct) > 1:
        return _fail("two different feature ids")
    if not distinct:
        # "neither" (e.g. two roads at the same level) is an answer, right or wrong, not noise.
        if not unknown and _NEITHER.search(pre.segment):
            return Parsed(True, "neither")
        return _fail("feature id not among the valid ids" if unknown else "no feature id found")
    return Parsed(True, got[0])


def parse_ordering(text: Any, ids: Iterable[str]) -> Parsed:
    """Every id of ``ids`` exactly once, in the answer's order (``F2, F1, F3``, ``F2 → F1 → F3``,
    ``F2 then F1 then F3``, numbered lists). Looks at the text from the final-answer line to the
    end when there is one, else the whole text, else the last line naming ids."""
    try:
        expected = [str(v) for v in ids]
    except TypeError:
        return _fail("bad ids")
    pre, failure = _prepare(text)
    if failure:
        return failure
    if not expected:
        return _fail("no ids to order")
    candidates = [pre.rest] if pre.explicit else [pre.text]
    if not pre.explicit:
        lines = [ln for ln in pre.text.splitlines() if ln.strip()]
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
    return _fail(reason)


_YES = re.compile(r"\b(?:yes|true|correct|yep|yeah|affirmative)\b", re.I)
_NO = re.compile(r"\b(?:no|false|incorrect|nope|negative)\b", re.I)
_YES_OR_NO = re.compile(r"\b(?:yes|true|no|false)\s*(?:or|/|and)\s*(?:yes|true|no|false)\b", re.I)


def parse_yes_no(text: Any) -> Parsed:
    """``True`` for yes/true/correct, ``False`` for no/false/incorrect; both -> not ok."""
    pre, failure = _prepare(text)
    if failure:
        return failure
    seg = pre.segment
    yes, no = _YES.search(seg), _NO.search(seg)
    if yes and no and _YES_OR_NO.search(seg):
        return _fail("both yes and no")
    if yes and no:
        # "Yes, no feature ..." -> the leading word decides when it opens the answer
        first = min(yes.start(), no.start())
        if first <= 2 and (len(seg.split()) > 2):
            return Parsed(True, yes.start() == first)
        return _fail("both yes and no")
    if yes:
        return Parsed(True, True)
    if no:
        return Parsed(True, False)
    return _fail("no yes/no found")


# --------------------------------------------------------------------------- edits (JSON)

_JSON_TOKENS = re.compile(r'[{}"\\]')


def _top_level_objects(text: str) -> list[tuple[int, int, int]]:
    """Spans (start, end, max depth) of top-level ``{...}`` blocks, respecting JSON strings."""
    spans = []
    depth = 0
    max_depth = 0
    start = -1
    in_str = False
    escape_next = -1
    for m in _JSON_TOKENS.finditer(text):
        ch, pos = m.group(), m.start()
        if pos == escape_next:
            continue
        if in_str:
            if ch == "\\":
                escape_next = pos + 1
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            if depth > 0:
                in_str = True
        elif ch == "{":
            if depth == 0:
                start = pos
                max_depth = 0
            depth += 1
            max_depth = max(max_depth, depth)
        elif ch == "}":
            if depth > 0:
                depth -= 1
                if depth == 0:
                    spans.append((start, pos + 1, max_depth))
    return spans


class _BadJSON(ValueError):
    pass


def _reject_constant(name: str) -> None:
    raise _BadJSON(f"non-finite number {name}")


def _json_depth(obj: Any, limit: int) -> int:
    stack = [(obj, 1)]
    deepest = 0
    while stack:
        o, d = stack.pop()
        deepest = max(deepest, d)
        if d > limit:
            return d
        if isinstance(o, dict):
            stack.extend((v, d + 1) for v in o.values())
        elif isinstance(o, list):
            stack.extend((v, d + 1) for v in o)
    return deepest


def _finite(x: Any, what: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise _BadJSON(f"{what} is not a number")
    try:
        v = float(x)
    except OverflowError:
        raise _BadJSON(f"{what} is too large") from None
    if not math.isfinite(v):
        raise _BadJSON(f"{what} is not finite")
    if abs(v) > MAX_MAGNITUDE:
        raise _BadJSON(f"{what} is too large")
    return v


def _origin(op: dict, i: int) -> Any:
    if "origin" not in op:
        raise _BadJSON(f"operation {i}: missing origin")
    o = op["origin"]
    if isinstance(o, str):
        if o.strip().lower() == "centroid":
            return "centroid"
        raise _BadJSON(f'operation {i}: origin must be [x, y] or "centroid"')
    if isinstance(o, list) and len(o) == 2:
        return [_finite(o[0], f"operation {i} origin x"), _finite(o[1], f"operation {i} origin y")]
    raise _BadJSON(f'operation {i}: origin must be [x, y] or "centroid"')


def _need(op: dict, key: str, i: int) -> Any:
    if key not in op:
        raise _BadJSON(f"operation {i}: missing {key}")
    return op[key]


def _validate_operations(ops: Any) -> list[dict]:
    if not isinstance(ops, list):
        raise _BadJSON("operations is not a list")
    if len(ops) > MAX_OPERATIONS:
        raise _BadJSON(f"more than {MAX_OPERATIONS} operations")
    out = []
    for i, op in enumerate(ops):
        if not isinstance(op, dict):
            raise _BadJSON(f"operation {i} is not an object")
        kind = op.get("op")
        if kind == "translate":
            out.append(
                {
                    "op": "translate",
                    "dx": _finite(_need(op, "dx", i), f"operation {i} dx"),
                    "dy": _finite(_need(op, "dy", i), f"operation {i} dy"),
                }
            )
        elif kind == "rotate":
            out.append(
                {
                    "op": "rotate",
                    "degrees_clockwise": _finite(
                        _need(op, "degrees_clockwise", i), f"operation {i} degrees_clockwise"
                    ),
                    "origin": _origin(op, i),
                }
            )
        elif kind == "scale":
            factor = _finite(_need(op, "factor", i), f"operation {i} factor")
            if factor <= 0:
                raise _BadJSON(f"operation {i}: factor must be positive")
            out.append({"op": "scale", "factor": factor, "origin": _origin(op, i)})
        elif kind == "set_attribute":
            name = _need(op, "name", i)
            if not isinstance(name, str) or not name.strip():
                raise _BadJSON(f"operation {i}: attribute name must be a non-empty string")
            value = _need(op, "value", i)
            if isinstance(value, float) and not math.isfinite(value):
                raise _BadJSON(f"operation {i}: value is not finite")
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                value = _finite(value, f"operation {i} value") if isinstance(value, float) else value
                if isinstance(value, int) and abs(value) > MAX_MAGNITUDE:
                    raise _BadJSON(f"operation {i} value is too large")
            elif not (value is None or isinstance(value, (str, bool))):
                raise _BadJSON(f"operation {i}: value must be a string, number, boolean or null")
            out.append({"op": "set_attribute", "name": name, "value": value})
        else:
            raise _BadJSON(
                f"operation {i}: unknown op {kind!r}"
                if isinstance(kind, str)
                else f"operation {i}: missing op"
            )
    return out


_GEOM_TYPES = {
    "Point": 1,
    "MultiPoint": 2,
    "LineString": 2,
    "MultiLineString": 3,
    "Polygon": 3,
    "MultiPolygon": 4,
}


def _check_coords(c: Any, depth: int, what: str) -> None:
    if depth == 1:
        if not isinstance(c, list) or not 2 <= len(c) <= 3:
            raise _BadJSON(f"{what}: a position must be [x, y]")
        for v in c:
            _finite(v, f"{what} coordinate")
        return
    if not isinstance(c, list):
        raise _BadJSON(f"{what}: coordinates are not nested lists")
    for item in c:
        _check_coords(item, depth - 1, what)


def _validate_geometry(g: Any, what: str, depth: int = 0) -> dict:
    if not isinstance(g, dict):
        raise _BadJSON(f"{what} is not an object")
    gtype = g.get("type")
    if gtype == "GeometryCollection":
        if depth > 2 or not isinstance(g.get("geometries"), list):
            raise _BadJSON(f"{what}: bad GeometryCollection")
        return {
            "type": gtype,
            "geometries": [_validate_geometry(x, what, depth + 1) for x in g["geometries"]],
        }
    if gtype not in _GEOM_TYPES:
        raise _BadJSON(f"{what}: unknown geometry type {gtype!r}")
    _check_coords(g.get("coordinates"), _GEOM_TYPES[gtype], what)
    return {"type": gtype, "coordinates": g["coordinates"]}


def _validate_edit(obj: dict) -> dict:
    keys = [k for k in ("operations", "geometry", "pixel_geometry") if k in obj]
    if len(keys) > 1:
        raise _BadJSON("several answer forms in one object: " + ", ".join(keys))
    key = keys[0]
    if key == "operations":
        return {"operations": _validate_operations(obj["operations"])}
    return {key: _validate_geometry(obj[key], key)}


def parse_edit(text: Any) -> Parsed:
    """The edit JSON in ``text`` (code fences and prose around it allowed): the last top-level
    JSON object with an ``operations``, ``geometry`` or ``pixel_geometry`` key. Operations are
    validated (known ``op``, finite numbers with magnitude <= 1e9, ``factor`` > 0, origin
    ``[x, y]`` or ``"centroid"``, at most 20 operations, nesting depth <= 32); the value is the
    normalised object (numbers as floats, only known keys). Origins may be map units or pixels:
    units are the caller's business."""
    raw = _to_text(text)
    if raw is None:
        return _fail("not text")
    raw = raw[-EDIT_CAP:]
    if "</" in raw:
        last = None
        for last in _THINK_CLOSE.finditer(raw):
            pass
        if last is not None:
            raw = raw[last.end() :]
    spans = _top_level_objects(raw)
    if not spans:
        pre = preprocess(raw)
        if pre is not None and _refusal_in(pre.segment):
            return _REFUSED
        return _fail("no JSON object found")
    first_error = None
    for start, end, depth in reversed(spans):
        if depth > MAX_JSON_DEPTH:
            first_error = first_error or "JSON nested too deeply"
            continue
        chunk = raw[start:end]
        if not any(k in chunk for k in ('"operations"', '"geometry"', '"pixel_geometry"')):
            continue
        try:
            obj = json.loads(chunk, parse_constant=_reject_constant)
        except _BadJSON as exc:
            return _fail(str(exc))
        except (ValueError, RecursionError, OverflowError, MemoryError):
            first_error = first_error or "invalid JSON"
            continue
        if not isinstance(obj, dict) or not any(
            k in obj for k in ("operations", "geometry", "pixel_geometry")
        ):
            continue
        if _json_depth(obj, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            return _fail("JSON nested too deeply")
        try:
            return Parsed(True, _validate_edit(obj))
        except _BadJSON as exc:
            return _fail(str(exc))
        except (RecursionError, ValueError, TypeError, OverflowError) as exc:
            return _fail(f"invalid edit: {type(exc).__name__}")
    pre = preprocess(raw)
    if pre is not None and _refusal_in(pre.segment):
        return _REFUSED
    return _fail(first_error or "no JSON object with operations")


# --------------------------------------------------------------------------- dispatcher

ANSWER_TYPES = (
    "choice",
    "distance",
    "perimeter",
    "area",
    "bearing",
    "density",
    "count",
    "direction4",
    "direction8",
    "relative_direction",
    "axis",
    "feature_id",
    "ordering",
    "yes_no",
    "edit",
)
_NUMBER_KIND = {
    "distance": "distance",
    "perimeter": "distance",
    "area": "area",
    "bearing": "angle",
    "density": "density",
    "count": "count",
}


def parse_answer(text: Any, answer_type: str, **context: Any) -> Parsed:
    """Parse ``text`` as ``answer_type`` (one of :data:`ANSWER_TYPES`).

    Context: ``n_options`` (choice, default 4), ``valid_ids`` (feature_id, required),
    ``ids`` (ordering, required). Raises ``ValueError`` for an unknown type or missing context.
    """
    if answer_type in _NUMBER_KIND:
        return parse_number(text, _NUMBER_KIND[answer_type])
    if answer_type == "choice":
        return parse_choice(text, context.get("n_options", 4))
    if answer_type == "direction4":
        return parse_direction(text, "4")
    if answer_type == "direction8":
        return parse_direction(text, "8")
    if answer_type == "relative_direction":
        return parse_relative_direction(text)
    if answer_type == "axis":
        return parse_axis(text)
    if answer_type == "feature_id":
        if "valid_ids" not in context:
            raise ValueError("answer type 'feature_id' needs valid_ids")
        return parse_feature_id(text, context["valid_ids"])
    if answer_type == "ordering":
        if "ids" not in context:
            raise ValueError("answer type 'ordering' needs ids")
        return parse_ordering(text, context["ids"])
    if answer_type == "yes_no":
        return parse_yes_no(text)
    if answer_type == "edit":
        return parse_edit(text)
    raise ValueError(f"unknown answer type {answer_type!r}; expected one of {', '.join(ANSWER_TYPES)}")
