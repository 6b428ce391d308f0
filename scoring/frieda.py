"""Score FRIEDA free-form map answers with our own deterministic rules and compare them with the
original authors' verdicts (`correct`).

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

import argparse
import json
import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from scoring import answers
from scoring.errors import InputError, OutputError

Judge = Callable[[str, list, list], bool]

TOLERANCE = 0.20
ANSWER_TYPES = ("textual", "distance", "cardinal")
_ROSE = answers.DIRECTIONS8
_MAX_EXAMPLES = 5

# --------------------------------------------------------------------------- response cleaning

_ECHO = re.compile(r"(?:^|[\n?.!'\"])[ \t]*assistant[ \t]*\n", re.I)
_SPECIAL_TOKEN = re.compile(r"<\|[a-z_]{1,40}\|>", re.I)  # <|begin_of_box|> (GLM-4.5V)


def clean_part(text: Any) -> str:
    """A response part without prompt echo, reasoning blocks, markdown; never raises."""
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    text = text[-answers.RAW_CAP :]
    last = None
    for last in _ECHO.finditer(text):
        pass
    if last is not None:
        text = text[last.end() :]
    text = _SPECIAL_TOKEN.sub(" ", text)
    stripped, reasoning_only = answers._strip_reasoning(text)
    if reasoning_only:
        pre = answers.preprocess(text)
        return pre.segment if pre is not None and pre.explicit else ""
    return answers._clean_markdown(stripped).strip()


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
    if unit is None:
        return None
    entry = answers._UNITS.get(answers._ukey(unit))
    return entry[1] if entry and entry[0] == "distance" else None


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
        if not any(answers._same(q.value, s) for s in seen):
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
    if len(expected) == 1:
        flat: list[tuple[float, str | None]] = [c for cands in valued for c in cands]
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
        responses = [flat[0]]
    else:
        if any(len(c) > 1 for c in valued) or len(valued) != len(expected):
            return _verdict("wrong", f"{len(valued)} response distances for {len(expected)} expected parts")
        responses = [c[0] for c in valued]
    notes = []
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
        if answers._SIXTEEN.search(seg):
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


# --------------------------------------------------------------------------- disagreement causes

_FIRST_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _original_rule_distance(record: dict) -> bool | None:
    """Re-run the original check (first number of each side, no unit conversion, 20 %)."""
    exp = _FIRST_NUMBER.search(" ".join(map(str, record.get("expected_answer") or [])))
    resp = _FIRST_NUMBER.search(str(record.get("extracted_ans") or ""))
    if not exp or not resp:
        return None
    try:
        e, r = float(exp.group().replace(",", "")), float(resp.group().replace(",", ""))
    except ValueError:
        return None
    return _within(r, e)


def disagreement_cause(record: dict, ours: dict) -> str:
    """A short label for why our verdict differs from the original ``correct``."""
    kind = record.get("answer_type")
    ours_ok = ours["verdict"] == "correct"
    raw = _as_parts(record.get("_response")) or []
    parts = [p for p in (clean_part(r) for r in raw) if p]
    reason = ours["reason"]
    echo = _had_echo(raw)
    if reason == "refusal":
        return "refusal accepted by original judge"
    if ours_ok and any(_SPECIAL_TOKEN.search(r) for r in raw if isinstance(r, str)):
        return "model special tokens (<|begin_of_box|>) stripped"
    if kind == "distance":
        exp_units = {
            _unit_family(u)
            for n, u in (
                _expected_distance(str(p), str(record.get("question_text") or "")) or (None, None)
                for p in record.get("expected_answer") or []
            )
        }
        resp_units = {_unit_family(u) for p in parts for n, u in _distance_candidates(p)[0] if u}
        exp_units.discard(None)
        if resp_units and exp_units and resp_units != exp_units:
            return f"unit conversion ({'/'.join(sorted(resp_units))} vs {'/'.join(sorted(exp_units))})"
        if "several" in reason:
            return "several distances in response"
        if "no number" in reason:
            return "no number found by us"
        if "expected has no unit" in reason:
            return "expected answer without unit"
        if echo:
            return "prompt echo stripped"
        if any(len(p) > 80 for p in parts):
            return "distance taken from prose"
        orig_rule = _original_rule_distance(record)
        if orig_rule is not None and orig_rule != bool(record.get("correct")):
            return "original verdict inconsistent with its own rule"
        return "tolerance / rounding"
    if kind == "cardinal":
        if reason.startswith("multiple directions"):
            return "multiple directions named"
        if reason == "no direction named":
            return "no direction found by us (original accepted)"
        if echo:
            return "prompt echo stripped"
        if ours_ok and any(len(p) > 40 for p in parts):
            return "direction extracted from prose"
        if (
            ours_ok
            and record.get("extracted_ans")
            and normalise_text(record["extracted_ans"]) != normalise_text(" ".join(parts))
        ):
            return "original extracted a different answer"
        if ours_ok:
            return "label format variant (punctuation/spacing)"
        return "original accepted a non-adjacent direction"
    if kind == "textual":
        if not ours_ok:
            exp = [normalise_text(e) for e in record.get("expected_answer") or []]
            joined = normalise_text(" ".join(parts))
            if exp and all(e and e in joined for e in exp):
                if any(len(p.split()) > 8 for p in parts):
                    return "original judge accepted answer embedded in prose"
                return "original judge accepted extra/partial parts"
            return "original judge accepted paraphrase"
        if "splitting" in reason or "re-joining" in reason:
            return "part alignment (split/joined)"
        if echo:
            return "prompt echo stripped"
        return "normalisation (case/punctuation/articles)"
    return "other"


# --------------------------------------------------------------------------- files


def _load(path: Path) -> list:
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        with path.open("r", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc.__class__.__name__})") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON (line {exc.lineno})") from None
    if not isinstance(data, list):
        raise InputError(f"{path}: expected a JSON list of FRIEDA records")
    return data


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            found = sorted(p.glob("*.json"))
            if not found:
                raise InputError(f"{p}: directory holds no .json files")
            out.extend(found)
        else:
            out.append(p)
    if not out:
        raise InputError("no input files")
    return out


def model_of(path: Path) -> tuple[str, str]:
    """(model, setting) from a file name such as ``gpt5__gpt5_w_contextual.json``."""
    stem = path.stem
    m = re.match(r"(?P<model>.+?)_(?P<setting>wo?_contextual)$", stem)
    if m:
        model = m.group("model")
        return (model.split("__", 1)[1] if "__" in model else model), m.group("setting")
    return stem, ""


class _Tally:
    def __init__(self) -> None:
        self.n = 0
        self.ours = 0
        self.orig = 0
        self.parsed = 0
        self.agree = 0

    def add(self, ours: dict, original: bool) -> None:
        self.n += 1
        self.ours += ours["verdict"] == "correct"
        self.parsed += ours["verdict"] != "unparsed"
        self.orig += bool(original)
        self.agree += (ours["verdict"] == "correct") == bool(original)

    def as_dict(self) -> dict:
        n = self.n or 1
        return {
            "n": self.n,
            "accuracy": round(self.ours / n, 4),
            "original_accuracy": round(self.orig / n, 4),
            "parse_rate": round(self.parsed / n, 4),
            "agreement": round(self.agree / n, 4),
        }


def _breakdowns() -> dict:
    return {
        "overall": _Tally(),
        "by_answer_type": defaultdict(_Tally),
        "by_spatial_relationship": defaultdict(_Tally),
        "by_map_count": defaultdict(_Tally),
    }


def _add(b: dict, rec: dict, ours: dict, original: bool) -> None:
    b["overall"].add(ours, original)
    b["by_answer_type"][str(rec.get("answer_type"))].add(ours, original)
    b["by_spatial_relationship"][str(rec.get("spatial_relationship"))].add(ours, original)
    b["by_map_count"][str(rec.get("map_count"))].add(ours, original)


def _render(b: dict) -> dict:
    out = b["overall"].as_dict()
    for key in ("by_answer_type", "by_spatial_relationship", "by_map_count"):
        out[key] = {k: t.as_dict() for k, t in sorted(b[key].items())}
    return out


def score_files(paths: Iterable[str | Path], out_dir: str | Path, judge: Judge | None = None) -> dict:
    """Score FRIEDA result files; write ``verdicts.jsonl`` and ``summary.json`` to ``out_dir``.

    Returns the summary: ``{"tolerance", "files": {name: {...}}, "overall": {...}}`` where each
    entry has n, accuracy, original_accuracy, parse_rate, agreement, the same by answer type,
    spatial relationship and map count, judge_used, and disagreements grouped by cause
    (``{cause: {"count", "ours_correct", "original_correct", "examples": [question_ref, ...]}}``).
    """
    files = _expand(paths)
    loaded = [(p, _load(p)) for p in files]  # fail on bad input before writing anything
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        fh = (out_dir / "verdicts.jsonl").open("w", encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{out_dir}: cannot write ({exc.strerror or exc.__class__.__name__})") from None
    summary: dict[str, Any] = {"tolerance": TOLERANCE, "files": {}}
    total = _breakdowns()
    total_causes: dict[str, dict] = {}
    with fh:
        for path, records in loaded:
            model, setting = model_of(path)
            b = _breakdowns()
            causes: dict[str, dict] = {}
            judged = 0
            for rec in records:
                if not isinstance(rec, dict):
                    rec = {"question_ref": None, "_malformed": True}
                ours = score_record(rec, judge)
                original = rec.get("correct") is True
                judged += ours.get("judge_used", False)
                _add(b, rec, ours, original)
                _add(total, rec, ours, original)
                agrees = (ours["verdict"] == "correct") == original
                line = {
                    "file": path.name,
                    "model": model,
                    "setting": setting,
                    "question_ref": rec.get("question_ref"),
                    "answer_type": rec.get("answer_type"),
                    "spatial_relationship": rec.get("spatial_relationship"),
                    "map_count": rec.get("map_count"),
                    "verdict": ours["verdict"],
                    "reason": ours["reason"],
                    "judge_used": ours.get("judge_used", False),
                    "original_correct": original,
                    "agrees_with_original": agrees,
                }
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
                if not agrees:
                    cause = f"{rec.get('answer_type')}: {disagreement_cause(rec, ours)}"
                    for table in (causes, total_causes):
                        c = table.setdefault(
                            cause, {"count": 0, "ours_correct": 0, "original_correct": 0, "examples": []}
                        )
                        c["count"] += 1
                        c["ours_correct"] += ours["verdict"] == "correct"
                        c["original_correct"] += original
                        ref = rec.get("question_ref")
                        if (
                            ref is not None
                            and len(c["examples"]) < _MAX_EXAMPLES
                            and ref not in c["examples"]
                        ):
                            c["examples"].append(ref)
            entry = {
                "model": model,
                "setting": setting,
                **_render(b),
                "judge_used": judged,
                "disagreements": dict(sorted(causes.items(), key=lambda kv: -kv[1]["count"])),
            }
            summary["files"][path.name] = entry
    summary["overall"] = {
        **_render(total),
        "disagreements": dict(sorted(total_causes.items(), key=lambda kv: -kv[1]["count"])),
    }
    try:
        (out_dir / "summary.json").write_text(
            json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    except OSError as exc:
        raise OutputError(f"{out_dir / 'summary.json'}: cannot write ({exc.strerror})") from None
    return summary


# --------------------------------------------------------------------------- CLI


def format_table(summary: dict) -> str:
    """Compact text table: one row per file, accuracy per answer type, ours/original."""
    cols = ["all", *ANSWER_TYPES]
    header = f"{'model':<24} {'setting':<14}" + "".join(f"{c:>15}" for c in cols) + f"{'parsed':>8}"
    lines = [header, " " * 39 + "".join(f"{'ours/orig %':>15}" for _ in cols)]

    def cell(d: dict | None) -> str:
        if not d or not d.get("n"):
            return f"{'-':>15}"
        return f"{100 * d['accuracy']:>9.1f}/{100 * d['original_accuracy']:<5.1f}"

    rows = list(summary["files"].values()) + [dict(summary["overall"], model="ALL", setting="")]
    for e in rows:
        cells = [cell(e)] + [cell(e["by_answer_type"].get(t)) for t in ANSWER_TYPES]
        lines.append(
            f"{e['model']:<24} {e['setting']:<14}" + "".join(cells) + f"{100 * e['parse_rate']:>7.1f}%"
        )
    return "\n".join(lines)


JUDGE_PROMPT = (
    "You check answers to a map-reading question. Decide whether the model's answer names the same "
    "thing(s) as the expected answer (spelling variants, abbreviations and extra descriptive words "
    "are fine; a different or additional place is not).\n\nQuestion: {question}\n"
    "Expected answer: {expected}\nModel's answer: {response}\n\n"
    "Reply with one word: yes or no."
)


class EndpointJudge:
    """A ``Judge`` backed by a model endpoint (the runner's client: retries, key from the
    environment, never written anywhere). Its use is reported: ``calls`` and ``public``."""

    def __init__(self, spec) -> None:
        import asyncio

        from scoring.runner.client import ChatClient
        from scoring.runner.config import EnvKeyProvider

        self.spec = spec
        self.calls = 0
        self._loop = asyncio.new_event_loop()
        self._client = ChatClient(spec, key_provider=EnvKeyProvider())

    def public(self) -> dict:
        return {"model": self.spec.public_dict(), "calls": self.calls, "prompt": JUDGE_PROMPT}

    def __call__(self, question: str, expected: list, response: list) -> bool:
        from scoring.answers import parse_yes_no

        self.calls += 1
        prompt = JUDGE_PROMPT.format(
            question=question or "(not given)",
            expected="; ".join(map(str, expected)),
            response="; ".join(map(str, response)),
        )
        out = self._loop.run_until_complete(self._client.complete([{"role": "user", "content": prompt}]))
        if not out.ok:
            raise RuntimeError(f"judge request failed ({(out.error or {}).get('kind', 'error')})")
        parsed = parse_yes_no(out.text)
        if not parsed.ok:
            raise ValueError(f"judge reply not yes/no ({parsed.reason})")
        return bool(parsed.value)

    def close(self) -> None:
        self._loop.run_until_complete(self._client.aclose())
        self._loop.close()


def _judge_from_args(args: argparse.Namespace) -> EndpointJudge | None:
    if not args.judge_model:
        if args.judge_endpoint or args.judge_config:
            raise InputError("--judge-endpoint/--judge-config need --judge-model")
        return None
    from scoring.runner.config import ModelSpec, get_model

    if args.judge_config:
        spec = get_model(args.judge_config, args.judge_model)
    elif args.judge_endpoint:
        spec = ModelSpec.from_endpoint(args.judge_endpoint, args.judge_model, args.judge_api_key_env)
    else:
        raise InputError("--judge-model needs --judge-config FILE or --judge-endpoint URL")
    return EndpointJudge(spec)


def run(args: argparse.Namespace) -> int:
    judge = _judge_from_args(args)
    try:
        summary = score_files(args.files, args.out, judge)
    finally:
        if judge is not None:
            judge.close()
    if judge is not None:
        # The judge's use is part of the record: which model, how often, with which prompt.
        summary["judge"] = judge.public()
        try:
            (Path(args.out) / "summary.json").write_text(
                json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
            )
        except OSError as exc:
            raise OutputError(f"{Path(args.out) / 'summary.json'}: cannot write ({exc.strerror})") from None
    print(format_table(summary))
    if judge is not None:
        print(f"\njudge {judge.spec.name}: {judge.calls} textual answers without an exact match sent to it")
    top = list(summary["overall"]["disagreements"].items())[:8]
    if top:
        print("\nmain disagreements with the original verdicts:")
        for cause, c in top:
            print(f"  {c['count']:>5}  {cause}  (e.g. {', '.join(map(str, c['examples'][:3]))})")
    print(f"\nwrote {Path(args.out) / 'verdicts.jsonl'} and {Path(args.out) / 'summary.json'}")
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "frieda-score",
        help="score FRIEDA free-form map answers and compare with the original verdicts",
        description="Score FRIEDA result files (JSON lists of records) with deterministic rules "
        "(distance within 20 %% after unit conversion, cardinal +-1 on the 8-point rose, "
        "textual normalised set match) and compare with the original `correct` field.",
    )
    p.add_argument(
        "files", nargs="+", metavar="FILE", help="FRIEDA result JSON files (or directories of them)"
    )
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help="output directory")
    p.add_argument(
        "--judge-model",
        metavar="NAME",
        help="optional judge model for textual answers without an exact match (its use is reported)",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--judge-config", type=Path, metavar="FILE", help="TOML model config holding --judge-model"
    )
    src.add_argument("--judge-endpoint", metavar="URL", help="OpenAI-compatible base URL of the judge")
    p.add_argument(
        "--judge-api-key-env", metavar="VAR", help="environment variable holding the judge's API key"
    )
    p.set_defaults(func=run)
