"""Numbers and units: every number of a reply with its unit, converted to the base unit of the kind
asked for (metres, m², degrees, per km², counts), and the choice of the one answer among them."""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from scoring.answers.base import Parsed, fail
from scoring.answers.directions import quadrant_bearings_to_azimuths
from scoring.answers.evidence import read_reply
from scoring.answers.numerals import (
    all_stated,
    count_set_aside,
    digits,
    last_stated,
    question_of,
    question_stated,
    stated_sentence,
)
from scoring.answers.text import Prepared

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
    "sqm",
    "sq. metres",
    "square m",
    "metres squared",
    "meters squared",
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
_add("angle", 1.0, "度", "grados", "degrés", "градусов", "градуса")
_add("angle", 180.0 / math.pi, "rad", "rads", "radian", "radians")
# the metre and its multiples as the other languages of the answer markers write them
_add("distance", 1.0, "米", "メートル", "미터", "mètres", "mètre", "metros", "metro", "metri")
_add("distance", 1.0, "метров", "метра", "м")
_add("distance", 1000.0, "公里", "千米", "キロメートル", "킬로미터", "kilómetros", "kilomètres")
_add("distance", 1000.0, "километров", "км")
_add("area", 1.0, "平方米", "平方メートル", "제곱미터")
_add("area", 1e6, "平方公里", "平方千米")
_add("area", 1e4, "公顷")
_add("percent", 1.0, "%", "percent", "per cent")

# density: "per"/"/" + an area unit; factor converts "per <unit>" to per km²
_DENSITY_AREA: dict[str, float] = {}
_DENSITY_SPELLINGS: list[str] = []
for _name, (_kind, _factor) in list(
    zip(_UNIT_SPELLINGS, [_UNITS[_ukey(n)] for n in _UNIT_SPELLINGS], strict=False)
):
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
        "none": 0.0,
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


def _to_float(m: re.Match[str]) -> float | None:
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


def find_quantities(text: str, unit_kind: str, words: bool | str = False) -> list[Quantity]:
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


def _quantity(
    number: float, unit: str | None, ukind: str | None, factor: float, kind: str, start: int, end: int
) -> Quantity:
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


KINDS = _KINDS


def same_value(a: float, b: float) -> bool:
    """Two readings of one value (``1.2 km`` and ``1200 m``)."""
    return _same(a, b)


def distance_unit_factor(unit: str | None) -> float | None:
    """Metres per ``unit`` (a distance unit's spelling), None for anything else."""
    entry = _UNITS.get(_ukey(unit)) if unit else None
    return entry[1] if entry and entry[0] == "distance" else None


# a value the reply sets aside: "135.1 (not 160.1)", "rather than 12 m", "± 1 m"
_SET_ASIDE = re.compile(
    r"(?:\bnot|\binstead\s+of|\brather\s+than|\bno\s+longer|±|\+/-|\+-)[ \t]*[~≈]?[ \t]*"
    r"(?:about[ \t]+|approximately[ \t]+|roughly[ \t]+)?$",
    re.I,
)
_EQUALS = re.compile(r"[=≈]")
# The left side of a result's "=": arithmetic on numbers (units allowed), not a name being assigned.
_ARITHMETIC = re.compile(r"(?:[\d \t.,+\-−×*/÷^²³()\[\]√π]|\bx\b|sqrt|\b(?:k?m|ft|mi)\b|m²)+$", re.I)
_OPERATOR = re.compile(r"[+\-−×*/÷^√]|\bx\b|sqrt", re.I)


def _computed_result(seg: str, usable: list[Quantity]) -> list[float] | None:
    """The value a computation ends with ("5 × 2.5 = 12.5 m²"), when the last "=" closes one."""
    marks = list(_EQUALS.finditer(seg))
    if not marks:
        return None
    last = marks[-1]
    left = seg[marks[-2].end() if len(marks) > 1 else 0 : last.start()]
    expr = _ARITHMETIC.search(left)
    if _reassigned(seg, marks):
        pass  # "θ = atan2(Δx, Δy); ... gives θ = 23.2°": the name's last value is its result
    elif expr is None or not re.search(r"\d", expr.group()) or not _OPERATOR.search(expr.group()):
        return None  # "dx = 30 m and dy = 40 m" assigns values; it computes none
    after = _distinct(q for q in usable if q.start > last.end())
    return after if len(after) == 1 else None


_NAME_BEFORE = re.compile(r"([^\W\d]\w{0,11})[ \t]*$")


def _reassigned(seg: str, marks: list[re.Match[str]]) -> bool:
    """Every "=" sets one and the same name, more than once (the computation's own variable:
    its last value is the result; "a_x = 9 cm, a_y = 5 cm" sets two, and is no single result)."""
    names = {n.group(1) for n in (_NAME_BEFORE.search(seg, 0, m.start()) for m in marks) if n is not None}
    return len(marks) > 1 and len(names) == 1


_JOIN = re.compile(r"[ \t]*(?P<w>-|–|—|to|and|or|,)[ \t]*", re.I)
_DIGIT_AFTER = re.compile(r"[ \t]+\d")


GLOSS_TOLERANCE = 0.025  # "1.5 miles (2.4 km)": one value restated in another unit, rounded


def _one_value(a: Quantity, b: Quantity) -> bool:
    if a.value is None or b.value is None:
        return False
    if _same(a.value, b.value):
        return True
    restated = a.unit is not None and b.unit is not None and _ukey(a.unit) != _ukey(b.unit)
    return restated and abs(a.value - b.value) <= GLOSS_TOLERANCE * max(abs(a.value), abs(b.value))


def _distinct(quantities: Iterable[Quantity]) -> list[float]:
    """The different values among ``quantities`` (the first of each, in order)."""
    kept: list[Quantity] = []
    for q in quantities:
        if q.value is not None and not any(_one_value(q, k) for k in kept):
            kept.append(q)
    return [q.value for q in kept if q.value is not None]


def _usable(seg: str, unit_kind: str) -> list[Quantity] | Parsed:
    words: bool | str = "bare" if unit_kind == "count" and len(seg.split()) <= 3 else True
    quantities = [
        q
        for q in find_quantities(seg, unit_kind, words=words)
        if not _SET_ASIDE.search(seg[max(0, q.start - 24) : q.start])
    ]
    if not quantities:
        return fail("no number")
    usable = [q for q in quantities if q.value is not None]
    if unit_kind == "count":
        # a count said with a unit ("14 feet", "90%") is the count when no bare number is there
        usable = [q for q in usable if q.unit is None] or [
            dataclasses.replace(q, value=q.number) for q in quantities if q.unit is not None
        ]
    if not usable:
        return fail(f"no number with a {unit_kind} unit")
    if all(q.unit is None for q in usable) and any(
        q.value is None and q.unit is not None for q in quantities
    ):
        if unit_kind != "count":
            return fail(f"number with a unit that is not a {unit_kind} unit")
    implied: set[int] = set()  # bare numbers that share the next number's unit: "10 or 12 m"
    for a, b in zip(quantities, quantities[1:], strict=False):
        gap = _JOIN.fullmatch(seg, a.end, b.start)
        if gap is None or (a.value is not None and b.value is not None and _same(a.value, b.value)):
            continue
        word = gap.group("w").lower()
        if word in ("-", "–", "—") and _EQUALS.search(seg, b.end, _line_end(seg, b.end)):
            continue  # "7 - 2 - 1 = 4": operands of a computation, not a range
        if word in ("-", "–", "—", "to") or (
            word == "and" and "between" in seg[max(0, a.start - 12) : a.start]
        ):
            return fail("ambiguous: a range, not a single number")
        implied.add(a.start)
    with_unit = [q for q in usable if q.unit is not None]
    if not with_unit or unit_kind == "count":
        return usable
    # "the 2 roads are 35 m apart": a number carrying the asked unit outranks bare numbers, but
    # not digits split by a space ("1 234 m" stays ambiguous) or joined to it ("10 or 12 m")
    kept = [q for q in usable if q.unit is None and (q.start in implied or _DIGIT_AFTER.match(seg, q.end))]
    return sorted(with_unit + kept, key=lambda q: q.start)


def _line_end(seg: str, pos: int) -> int:
    end = seg.find("\n", pos)
    return len(seg) if end < 0 else end


def _number_in(seg: str, pre: Prepared, unit_kind: str) -> Parsed:
    seg = digits(seg)
    if unit_kind == "angle":
        seg = quadrant_bearings_to_azimuths(seg)
    if unit_kind == "count":
        seg = count_set_aside(seg)
    usable = _usable(seg, unit_kind)
    if isinstance(usable, Parsed):
        return usable
    distinct = _distinct(usable)
    if len(distinct) > 1:
        result = _computed_result(seg, usable)
        if result is None:
            return fail("ambiguous: several numbers")
        distinct = result
    chosen = distinct[0]
    if unit_kind == "count":
        if chosen < 0 or chosen != int(chosen):
            return fail("count is not a whole non-negative number")
        return Parsed(True, int(chosen))
    if abs(chosen) > 1e15:
        return fail("number too large")
    return Parsed(True, float(chosen))


def _values_in(unit_kind: str) -> Callable[[str], int]:
    def count(sentence: str) -> int:
        usable = _usable(digits(sentence), unit_kind)
        return 0 if isinstance(usable, Parsed) else len(_distinct(usable))

    return count


def parse_number(text: Any, unit_kind: str, question: str = "") -> Parsed:
    """A single number converted to the base unit of ``unit_kind``.

    ``unit_kind`` is one of ``distance`` (metres), ``area`` (m²), ``angle`` (degrees),
    ``density`` (per km²), ``count`` (a whole number, returned as ``int``). Several different
    values are ambiguous (a hedge "87.3 m or 62.3 m" is not an answer) unless a computation ends
    with "= value"; a value set aside ("not 160.1", "± 1 m") is not a candidate. Spelled numbers
    and written-out powers of ten are read (`scoring.answers.numerals`); the reply's first
    sentence that states the asked quantity is the last evidence level.

    >>> parse_number("The distance is 48 m. From the centroid: 12 m east, 46 m north.", "distance").value
    48.0
    >>> parse_number("one hundred and eighteen metres", "distance").value
    118.0
    >>> parse_number("7 - 2 - 1 = 4", "count").value
    4
    """
    if unit_kind not in _KINDS:
        return fail(f"unknown unit kind {unit_kind!r}")
    stated = stated_sentence(unit_kind)
    values = _values_in(unit_kind)
    return read_reply(
        text,
        lambda seg, pre: _number_in(seg, pre, unit_kind),
        question_of(question),
        last=(
            lambda seg, q: all_stated(seg, stated, values),
            lambda seg, q: question_stated(seg, q.text, values),
            lambda seg, q: last_stated(seg, stated, values),
        ),
    )


def unit_kind_of(text: str) -> str | None:
    """The kind of the unit after the first number of ``text`` (``None`` without a unit)."""
    m = _NUMBER_RE.search(text)
    if m is None:
        return None
    unit, ukind, _, _ = _unit_after(text, m.end(), "density")
    return ukind if unit is not None else None
