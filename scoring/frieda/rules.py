"""FRIEDA records scored by our deterministic rules (one verdict per record, never raising).

FRIEDA (Pyo et al.) publishes, per model and setting, a JSON list of records with
``question_ref``, ``question_text``, ``expected_answer`` (list of parts), ``_response`` (list of
parts: the model's final answer split on ``;``), ``answer_type`` (``textual`` | ``distance`` |
``cardinal``), ``spatial_relationship``, ``map_count`` and ``correct``.

Our rules
---------
Response cleaning (all types): reasoning blocks (``<think>...</think>``, or everything before a
lone ``</think>``) are removed, and an echoed chat prompt (``...user ... ?\\nassistant\\n<answer>``,
seen for LLaVA models) is cut to the text after the last ``assistant`` turn marker. Markdown is
removed. An explicit final-answer line ("Final answer: ...") is preferred, see
:mod:`scoring.answers`. A response that is a refusal ("cannot be determined", "information not
available", ...) is ``wrong`` (reason ``refusal``); ``unparsed`` means no answer of the expected
kind could be extracted (empty, no number, no direction, several candidate numbers).

distance
    Both expected and response are parsed unit-aware (m, km, cm, ft/feet/``'``, mi/miles, yd,
    nautical miles; thousands separators; spelled numbers followed by a unit such as "two
    kilometres"). A bare response number takes the unit of the expected answer (or the unit the
    question asks for: "in miles", "Answer in MILES"); an expected answer without unit takes the
    question's unit, else numbers are compared as written. In prose the numbers carrying a
    distance unit are the candidates (else the bare numbers); exactly one distinct value must
    remain, otherwise the record is ``unparsed`` ("several numbers"). Correct when
    ``|response - expected| <= 0.20 * expected`` (inclusive; expected 0 needs response 0).
    Parts: expected parts align in order with the response parts that contain a distance; the
    counts must be equal (a single expected distance with several different response distances
    is ``wrong``: "several different distances").

cardinal
    The expected parts are the accepted labels (the expected direction and its two neighbours on
    the 8-point rose, in several spellings). We recover the centre direction (the one whose two
    neighbours complete the set) and accept the centre or an adjacent direction; if no centre
    exists we accept exactly the labels listed. The response must name exactly one distinct
    8-point direction across all its parts ("north-east", "NE", "northeasterly"; "northern" is not
    a direction); several different directions -> ``wrong`` ("multiple directions named"), none
    -> ``unparsed``.

textual
    Normalised exact set match: Unicode NFKD without accents, lower case, punctuation -> space,
    the articles a/an/the dropped (unless nothing else remains, so the zone label "A" survives),
    number words zero..twenty -> digits, whitespace collapsed, empty parts dropped. The set of
    normalised expected parts must equal the set of normalised response parts. Alignment
    fall-backs: several expected parts vs one response part -> the response is also split on
    commas, "and", "&" and line breaks; one expected part vs several response parts -> the
    response parts are also re-joined (the ``;`` split may have cut a name). If there is no exact
    match and a ``judge(question, expected, response) -> bool`` callable was given, its verdict
    is used and ``judge_used`` is reported; a judge that raises leaves the verdict ``wrong`` with
    the error in the reason.

Original verdicts: ``correct`` is the original authors' verdict (first number without unit
conversion, label match, set match then an LLM judge). ``unparsed`` counts as not correct when
computing accuracy and agreement.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

from scoring import answers

Judge = Callable[[str, list, list], bool]

TOLERANCE = 0.20
ANSWER_TYPES = ("textual", "distance", "cardinal")
_ROSE = answers.DIRECTIONS8

# --------------------------------------------------------------------------- response cleaning

_ECHO = re.compile(r"(?:^|[\n?.!'\"])[ \t]*assistant[ \t]*\n", re.I)
_SPECIAL_TOKEN = re.compile(r"<\|[a-z_]{1,40}\|>", re.I)  # <|begin_of_box|> (GLM-4.5V)
_BOX = re.compile(r"<\|begin_of_box\|>(?P<c>.*?)<\|end_of_box\|>", re.S)


def clean_part(text: Any) -> str:
    """A response part without prompt echo, reasoning blocks, markdown; never raises."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[-answers.RAW_CAP :]
    echoes = list(_ECHO.finditer(text))
    if echoes:
        text = text[echoes[-1].end() :]
    stripped, reasoning_only = answers.strip_reasoning(text)
    boxes = _BOX.findall(stripped)
    if boxes:  # the model's own answer box is its committed answer
        return answers.clean_markdown(boxes[-1]).strip()
    if reasoning_only:
        pre = answers.preprocess(text)
        return pre.segment if pre is not None and pre.explicit else ""
    return answers.clean_markdown(stripped).strip()


def _had_echo(parts: list[str]) -> bool:
    return any(_ECHO.search(p) for p in parts if isinstance(p, str))


def _segment(text: str) -> str:
    pre = answers.preprocess(text)
    return "" if pre is None else pre.segment


# --------------------------------------------------------------------------- distances

_QUESTION_UNIT = re.compile(
    r"\b(?:in|answer\s+in|unit\s*(?:is|:)?|expressed\s+in)\s+(?P<u>miles?|kilomet(?:er|re)s?|km|met(?:er|re)s?|feet|foot|ft|yards?)\b",
    re.I,
)


def _question_unit(question: str) -> str | None:
    m = _QUESTION_UNIT.search(question or "")
    return m.group("u") if m else None


def _unit_factor(unit: str | None) -> float | None:
    return answers.distance_unit_factor(unit)


def _unit_family(unit: str | None) -> str | None:
    f = _unit_factor(unit)
    if f is None:
        return None
    return {
        1.0: "m",
        1000.0: "km",
        0.3048: "ft",
        1609.344: "mi",
        0.9144: "yd",
        0.01: "cm",
        0.001: "mm",
        1852.0: "nmi",
    }.get(f, "other")


def _distance_candidates(text: str) -> tuple[list[tuple[float, str | None]], str]:
    """Distinct (number, unit) candidates in one cleaned text, by the prose rule."""
    seg = _segment(text)
    qs = [q for q in answers.find_quantities(seg, "distance", words=True) if q.value is not None]
    with_unit = [q for q in qs if q.unit is not None]
    chosen = with_unit or qs
    out: list[tuple[float, str | None]] = []
    seen: list[float] = []
    for q in chosen:
        if q.value is not None and not any(answers.same_value(q.value, s) for s in seen):
            seen.append(q.value)
            out.append((q.number, q.unit))
    return out, seg


def _expected_distance(part: str, question: str) -> tuple[float, str | None] | None:
    cands, _ = _distance_candidates(part)
    if len(cands) != 1:
        return None
    number, unit = cands[0]
    if unit is None:
        unit = _question_unit(question)
    return number, unit


def _to_metres(number: float, unit: str | None) -> float | None:
    f = _unit_factor(unit)
    return None if f is None else number * f


def _within(resp: float, exp: float) -> bool:
    if exp == 0:
        return resp == 0
    return abs(resp - exp) <= TOLERANCE * abs(exp) + 1e-12


def _score_distance(record: dict, parts: list[str]) -> dict:
    question = str(record.get("question_text") or "")
    expected = []
    for p in record["expected_answer"]:
        e = _expected_distance(str(p), question)
        if e is None:
            return _verdict("unparsed", f"expected answer {p!r} is not a single distance")
        expected.append(e)
    valued = []  # per response part: list of candidates
    for p in parts:
        cands, _ = _distance_candidates(p)
        if cands:
            valued.append(cands)
    if not valued:
        joined = " ; ".join(parts)
        if answers.is_refusal(joined):
            return _verdict("wrong", "refusal")
        return _verdict("unparsed", "no number in response")
    responses = _response_distances(expected, valued)
    if isinstance(responses, dict):
        return responses
    notes = []
    ev: float | None = None
    rv: float | None = None
    for (en, eu), (rn, ru) in zip(expected, responses, strict=False):
        if eu is None and ru is None:
            ev, rv = en, rn
        elif eu is None:
            ev, rv = en, rn  # expected without unit: compare as written
            notes.append("expected has no unit")
        else:
            ev = _to_metres(en, eu)
            rv = _to_metres(rn, ru if ru is not None else eu)
            if ev is None or rv is None:
                return _verdict("unparsed", "unknown unit")
        if not _within(rv, ev):
            return _verdict(
                "wrong",
                f"{_fmt(rn, ru)} vs expected {_fmt(en, eu)}: off by more than 20 %",
                response_value=rv,
                expected_value=ev,
            )
    return _verdict(
        "correct",
        "within 20 %" + (f" ({'; '.join(notes)})" if notes else ""),
        response_value=rv,
        expected_value=ev,
    )


Distance = tuple[float, str | None]  # a number and its unit as written (None: none written)


def _response_distances(expected: list[Distance], valued: list[list[Distance]]) -> list[Distance] | dict:
    """The response's distance per expected part, or the verdict saying why there is none: one
    expected distance takes the response's only value (a number with a unit over bare ones),
    several take one value per response part."""
    if len(expected) == 1:
        flat: list[Distance] = [c for cands in valued for c in cands]
        if any(u is not None for _, u in flat):  # numbers with a distance unit win over bare ones
            valued = [[c for c in cands if c[1] is not None] for cands in valued]
            valued = [c for c in valued if c]
            flat = [c for cands in valued for c in cands]
        exp_unit = expected[0][1]
        metres = {round(_to_metres(n, u or exp_unit) or n, 6) for n, u in flat}
        if len(metres) > 1:
            if len(valued) > 1 and all(len(c) == 1 for c in valued):
                return _verdict("wrong", "several different distances")
            return _verdict("unparsed", "several numbers in response")
        return [flat[0]]
    if any(len(c) > 1 for c in valued) or len(valued) != len(expected):
        return _verdict("wrong", f"{len(valued)} response distances for {len(expected)} expected parts")
    return [c[0] for c in valued]


def _fmt(n: float, u: str | None) -> str:
    return f"{n:g} {u}" if u else f"{n:g}"


# --------------------------------------------------------------------------- cardinal


def _rose_distance(a: str, b: str) -> int:
    d = abs(_ROSE.index(a) - _ROSE.index(b)) % 8
    return min(d, 8 - d)


def expected_directions(parts: Iterable[str]) -> tuple[str | None, set[str]]:
    """(centre direction or None, accepted labels) from FRIEDA's expected cardinal parts."""
    labels: set[str] = set()
    for p in parts:
        found = {d for d, _ in answers.find_directions(str(p).strip())}
        labels |= found
    for c in _ROSE:
        hood = {d for d in _ROSE if _rose_distance(c, d) <= 1}
        if labels and labels <= hood and (len(labels) == 1 and c in labels or labels == hood):
            return c, hood
    return None, labels


def _score_cardinal(record: dict, parts: list[str]) -> dict:
    centre, accepted = expected_directions(record["expected_answer"])
    if not accepted:
        return _verdict("unparsed", "expected answer names no direction")
    named: list[str] = []
    for p in parts:
        seg = _segment(p)
        if answers.SIXTEEN_POINT.search(seg):
            return _verdict("wrong", "16-point direction")
        for d, _ in answers.find_directions(seg):
            if d not in named:
                named.append(d)
    if not named:
        if answers.is_refusal(" ; ".join(parts)):
            return _verdict("wrong", "refusal")
        return _verdict("unparsed", "no direction named")
    if len(named) > 1:
        return _verdict("wrong", "multiple directions named: " + ", ".join(named))
    d = named[0]
    if d in accepted:
        how = "exact" if d == centre else "adjacent"
        return _verdict("correct", f"{d} ({how}; expected {centre or '/'.join(sorted(accepted))})")
    return _verdict("wrong", f"{d} vs expected {centre or '/'.join(sorted(accepted))}")


# --------------------------------------------------------------------------- textual

_PUNCT = re.compile(r"[^\w\s]|_", re.U)
_ARTICLES = {"a", "an", "the"}
_NUMWORDS = {
    w: str(i)
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_SPLIT = re.compile(r"\s*(?:,|;|\n|\band\b|&)\s*", re.I)


def normalise_text(text: Any) -> str:
    """Lower-case, accent-free, punctuation-free, article-free form used for set matching."""
    s = unicodedata.normalize("NFKD", str(text))
    s = "".join(ch for ch in s if not unicodedata.combining(ch)).lower()
    tokens = _PUNCT.sub(" ", s).split()
    tokens = [_NUMWORDS.get(t, t) for t in tokens]
    kept = [t for t in tokens if t not in _ARTICLES]
    return " ".join(kept or tokens)


def _norm_set(parts: Iterable[str]) -> frozenset[str]:
    return frozenset(n for n in (normalise_text(p) for p in parts) if n)


def _score_textual(record: dict, parts: list[str], judge: Judge | None) -> dict:
    expected = [str(p) for p in record["expected_answer"]]
    exp_set = _norm_set(expected)
    if not exp_set:
        return _verdict("unparsed", "expected answer is empty")
    resp_set = _norm_set(parts)
    if resp_set == exp_set:
        return _verdict("correct", "exact match")
    if len(exp_set) > 1 and len(parts) == 1 and _norm_set(_SPLIT.split(parts[0])) == exp_set:
        return _verdict("correct", "exact match after splitting the response on commas/and")
    if len(exp_set) == 1 and len(parts) > 1:
        for sep in ("; ", ", ", " "):
            if _norm_set([sep.join(parts)]) == exp_set:
                return _verdict("correct", "exact match after re-joining response parts")
    if judge is not None:
        try:
            ok = bool(judge(str(record.get("question_text") or ""), expected, list(parts)))
        except Exception as exc:  # a judge failure must not stop scoring
            return _verdict("wrong", f"no exact match; judge failed: {type(exc).__name__}: {exc}"[:300])
        return _verdict(
            "correct" if ok else "wrong", "judge accepted" if ok else "judge rejected", judge_used=True
        )
    if answers.is_refusal(" ; ".join(parts)):
        return _verdict("wrong", "refusal")
    return _verdict("wrong", "no exact match")


# --------------------------------------------------------------------------- records


def _verdict(verdict: str, reason: str, judge_used: bool = False, **extra: Any) -> dict:
    out = {"verdict": verdict, "reason": reason, "judge_used": judge_used}
    for k, v in extra.items():
        if isinstance(v, float) and math.isfinite(v):
            out[k] = v
    return out


def _as_parts(value: Any) -> list[str] | None:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v if isinstance(v, str) else ("" if v is None else str(v)) for v in value]
    return None


def score_record(record: Any, judge: Judge | None = None) -> dict:
    """Our verdict for one FRIEDA record: ``{"verdict": "correct"|"wrong"|"unparsed",
    "reason": str, "judge_used": bool, ...}``. Never raises on malformed records."""
    if not isinstance(record, dict):
        return _verdict("unparsed", "record is not an object")
    expected = _as_parts(record.get("expected_answer"))
    raw = _as_parts(record.get("_response"))
    if expected is None or not any(e.strip() for e in expected):
        return _verdict("unparsed", "record has no expected answer")
    if raw is None:
        return _verdict("unparsed", "record has no response")
    rec = dict(record, expected_answer=expected)
    parts = [p for p in (clean_part(r) for r in raw) if p]
    if not parts:
        return _verdict("unparsed", "empty response")
    kind = record.get("answer_type")
    try:
        if kind == "distance":
            return _score_distance(rec, parts)
        if kind == "cardinal":
            return _score_cardinal(rec, parts)
        if kind == "textual":
            return _score_textual(rec, parts, judge)
    except RecursionError:  # pragma: no cover - defensive
        return _verdict("unparsed", "response too complex")
    return _verdict("unparsed", f"unknown answer_type {kind!r}")
