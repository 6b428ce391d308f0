"""Text preparation: where in a reply the answer is, and whether the reply refuses.

Order of precedence (first found wins): an answer container (``<|begin_of_box|>``, ``<answer>``,
``\\boxed{}``), a JSON object with an answer key, the last final-answer line, the committed end of
a reasoning trace, the whole text.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, replace
from typing import Any

from scoring.answers.base import (
    MAX_CHARS,
    RAW_CAP,
    REFUSED,
    Parsed,
    fail,
    last_match,
    tail,
    to_text,
    top_level_objects,
)
from scoring.answers.markers import FOREIGN_MARKERS, MORE_REFUSALS, UNFINISHED_END, normalise_script

THINK_CLOSE = re.compile(r"</\s*(?:think|thinking|reasoning)\s*>", re.I)
_THINK_OPEN = re.compile(r"<\s*(?:think|thinking|reasoning)\s*>", re.I)
_FENCE_LINE = re.compile(r"^[ \t]*(?:```|~~~)[^\n]*$", re.M)
_EMPHASIS = re.compile(r"\*+|__+|`+|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)")
_LINE_MARKERS = re.compile(r"^[ \t]*(?:#{1,6}[ \t]+|>[ \t]?|[•▪◦‣][ \t]*|-[ \t]+(?=\D))", re.M)
_SPECIAL_TOKEN = re.compile(r"<\|[a-z_]{1,40}\|>|</?s>|<eo[sa]>|<pad>", re.I)
_CONTAINERS = (
    re.compile(r"<\|begin_of_box\|>(?P<c>.*?)<\|end_of_box\|>", re.S),
    re.compile(
        r"<\s*(?P<tag>final[_ ]?answer|answer|result|final|output|choice|solution)\s*>(?P<c>.*?)"
        r"<\s*/\s*(?P=tag)\s*>",
        re.I | re.S,
    ),
    re.compile(r"\\boxed\s*\{(?P<c>(?:[^{}]|\{[^{}]*\}){0,2000})\}"),
)
_ANSWER_LINE = re.compile(
    r"(?:\bfinal\s+answer\b(?:\s+(?:is|would\s+be)\b)?"
    # "The final integer answer is: 2", "Final value: 2" -- not an echoed "provide the final value"
    r"|\bfinal\s+(?:(?:integer|numeric(?:al)?|decimal)\s+)?(?:value|result|answer)\b"
    r"(?:\s+(?:of\s+[^:\n]{1,60}?\s+)?(?:is|would\s+be)\b|(?=[ \t]*[:=]))"
    r"|\b(?:correct|best|right|final|most\s+likely)\s+(?:answer|option|choice|fit|match)\s+(?:is|would\s+be|will\s+be)\b"
    r"|\b(?:the|my)\s+answer\s+(?:is|would\s+be|will\s+be)\b"
    r"|\bthe\s+answer\s+to\s+(?:the|this)\s+question\b[^\n]{0,80}?\s+is\b"
    r"|(?<![A-Za-z])(?:final[_ ])?answer\b(?:[ \t]*\([^)\n]{0,40}\))?(?=[ \t]*[:=：|])"
    r"|\b(?:i'?m|i\s+am)\s+(?:confident|sure|certain)(?:\s+that)?(?:\s+(?:it'?s|it\s+is|the\s+answer\s+is))?"
    r"|\b(?:the\s+one\s+)?i\s+(?:settle|land)\s+on(?:\s+is)?|\bi\s+conclude(?:\s+that)?"
    r"|\b(?:thus|so|therefore|hence)\s+we\s+get"
    r"|\bmy\s+(?:final\s+)?(?:pick|choice|answer|selection)\s+(?:is|would\s+be)\b"
    r"|^[ \t]*answer(?=[ \t]*$)"
    r"|\b(?:i\s+(?:would\s+|will\s+)?|i'd\s+|i'll\s+)(?:choose|pick|select|go\s+with)\b"
    + FOREIGN_MARKERS
    + r")"
    r"[ \t]*(?:[:=：]|[\-–—](?=[ \t]))?[ \t]*(?P<rest>[^\n]*)",
    re.I | re.M,
)
# Self-corrections mark a reasoning trace: only what follows the last one is the model's view.
_RETRACT = re.compile(r"\b(?:wait|hold\s+on|on\s+second\s+thought)\b", re.I)
_ENDS_COMMITTED = re.compile(r"[.!)\]\"'’»}]\s*$")
_SENTENCE = re.compile(r"(?<=[.!?])[ \t]+")
_LATEX = (
    (re.compile(r"\\(?:text|mathrm|textbf|mathbf|operatorname|textrm)\s*\{([^{}]*)\}"), r"\1"),
    (re.compile(r"\^\s*\{?\s*\\circ\s*\}?"), "°"),
    (re.compile(r"\\circ\b"), "°"),
    (re.compile(r"\\(?:approx|sim)\b"), "≈"),
    (re.compile(r"\\times\b"), "×"),
    (re.compile(r"\\%"), "%"),
    (re.compile(r"\\[,;:! ]"), ""),
    (re.compile(r"\^\s*\{?\s*2\s*\}?"), "²"),
    (re.compile(r"\$"), ""),
)
_ANSWER_KEYS = (
    "finalanswer",
    "answer",
    "final",
    "choice",
    "option",
    "selectedoption",
    "selection",
    "letter",
    "result",
    "direction",
    "bearing",
    "distance",
    "area",
    "perimeter",
    "density",
    "count",
    "featureid",
    "id",
    "feature",
    "ordering",
    "order",
    "value",
)
# words a descriptive key is made of ("feature_count", "min_distance_m", "bearing_deg")
_DESCRIPTIVE_KEYS = (
    "answer",
    "choice",
    "option",
    "direction",
    "bearing",
    "azimuth",
    "distance",
    "length",
    "area",
    "perimeter",
    "density",
    "count",
    "ordering",
)
_UNIT_KEYS = ("unit", "units")
_MAX_JSON_ANSWER = 20_000


@dataclass(frozen=True, slots=True)
class Prepared:
    """A reply cleaned for reading."""

    text: str  # cleaned text (reasoning and markdown removed)
    segment: str  # the answer segment: the only text a parser reads
    rest: str  # from the answer segment to the end of the text (lists spanning lines)
    explicit: bool  # the segment was marked as the answer (container, JSON, final-answer line)
    reasoning_only: bool  # an unclosed reasoning block covered the text
    note: str = ""  # why the segment is empty, when it is
    emphasis: tuple[str, ...] = ()  # what the reply set in bold or italics (cleaned)


def strip_reasoning(text: str) -> tuple[str, bool]:
    """(text after the reasoning blocks, whether an unclosed block covered it all)."""
    text = tail(text, RAW_CAP)
    last_close = last_match(THINK_CLOSE, text)
    if last_close is not None:
        text = text[last_close.end() :]
    # after the last closing tag no block can be closed any more: only an unclosed opening remains
    m = _THINK_OPEN.search(text)
    reasoning_only = False
    if m is not None:
        reasoning_only = not text[: m.start()].strip()
        text = text[: m.start()] + " " + text[m.end() :] if reasoning_only else text[: m.start()]
    return tail(text, MAX_CHARS), reasoning_only


def clean_markdown(text: str) -> str:
    """Text without code-fence lines, emphasis, headings, quotes and bullets (and LaTeX markup)."""
    text = _FENCE_LINE.sub("", text)
    text = _SPECIAL_TOKEN.sub(" ", text)
    if "\\" in text or "$" in text:
        for rx, repl in _LATEX:
            text = rx.sub(repl, text)
    text = _EMPHASIS.sub("", text)
    return _LINE_MARKERS.sub("", text)


def _container(body: str) -> str | None:
    for rx in _CONTAINERS:
        last = last_match(rx, body)
        if last is not None:
            return last.group("c")
    return None


def _scalar_text(v: Any) -> str | None:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, (int, float, str)):
        return str(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) for x in v):
        return ", ".join(str(x) for x in v)
    return None


def _answer_of(obj: dict, depth: int = 0) -> str | None:
    keys = {re.sub(r"[^a-z]", "", str(k).lower()): v for k, v in obj.items()}
    if keys.get("cannotbedetermined") is True:  # a structured answer's refusal
        return "cannot be determined"
    unit = next((keys[k] for k in _UNIT_KEYS if isinstance(keys.get(k), str)), None)
    candidates = [k for k in _ANSWER_KEYS if k in keys]
    if not candidates:  # descriptive keys: "feature_count", "min_distance_m", "bearing_deg"
        candidates = [k for k in keys if any(word in k for word in _DESCRIPTIVE_KEYS)]
    if not candidates and len(keys) == 1:
        candidates = list(keys)
    for k in candidates:
        v = keys[k]
        if isinstance(v, dict):
            if depth < 3:
                inner = _answer_of(v, depth + 1)
                if inner is not None:
                    return inner
            continue
        s = _scalar_text(v)
        if s is not None:
            return f"{s} {unit}" if unit and isinstance(v, (int, float)) else s
    return None


def json_answer(body: str) -> str | None:
    """The answer held by the last JSON object of ``body`` with an answer key, if any."""
    if "{" not in body or '"' not in body or ":" not in body:  # no JSON object with a key
        return None
    for start, end, depth in reversed(top_level_objects(body)):
        if depth > 4 or end - start > _MAX_JSON_ANSWER:
            continue
        try:
            obj = json.loads(body[start:end])
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and not {"operations", "geometry", "pixel_geometry"} & set(obj):
            found = _answer_of(obj)
            if found is not None:
                return found
    return None


def _drop_questions(text: str) -> str:
    """A question the model asks itself is not an answer."""
    if "?" not in text:
        return text.strip()
    lines = []
    for line in text.split("\n"):
        kept = [s for s in _SENTENCE.split(line) if not s.rstrip().endswith("?")]
        lines.append(" ".join(kept))
    return "\n".join(lines).strip()


def _committed(text: str) -> tuple[str, str]:
    """(the committed part of an unmarked reply, why it is empty)."""
    last = last_match(_RETRACT, text)
    # a trace cut mid-sentence commits to nothing (a bare answer such as "A" or "north of" is no trace)
    if len(text.split()) >= 6 and not _ENDS_COMMITTED.search(text) and UNFINISHED_END.search(text):
        return "", "unfinished reasoning, no committed answer"
    if last is None:
        seg = _drop_questions(text)
        return seg, "" if seg else "no committed answer: only questions"
    if not _ENDS_COMMITTED.search(text):
        return "", "unfinished reasoning, no committed answer"
    seg = _drop_questions(text[last.end() :]).strip(" \t,;:.")
    return seg, "" if seg else "unfinished reasoning, no committed answer"


# A model that goes on after its answer with a question of its own (few-shot continuation:
# "Question: ... Answer: ...") answers that one too; only what comes before it is the reply.
_NEXT_QUESTION = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?[*_]{0,2}(?:question|q|problem|exercise|问题|题目)[ \t]*\d*[*_]{0,2}"
    r"[ \t]*[:：.]",
    re.I | re.M,
)


def _last_marker(text: str) -> re.Match[str] | None:
    """The last answer marker with something after it, also where an earlier one on its line
    ("So we have ... The answer is (C).") would take the line's rest. A marker that ends the
    reply ("The answer is (J). The answer is" cut off, "... 总结以上答案：") marks nothing."""
    found: list[re.Match[str]] = []
    m = _ANSWER_LINE.search(text)
    while m is not None:
        found.append(m)
        m = _ANSWER_LINE.search(text, m.start("rest") + 1)
    for marker in reversed(found):
        if text[marker.start("rest") :].strip(" \t\n:：.*") and not _conditional(text, marker.start()):
            return marker
    return None


_SENTENCE_START = re.compile(r"(?:^|[.!?\n])[^.!?\n]*$")
_IF = re.compile(r"\b(?:if|unless|assuming|suppose|should)\b", re.I)


def _conditional(text: str, at: int) -> bool:
    """The marker stands in a conditional sentence ("If there are fewer, then the answer is (A)")."""
    start = _SENTENCE_START.search(text, max(0, at - 300), at)
    return start is not None and _IF.search(text, start.start(), at) is not None


def _before_next_question(body: str) -> str:
    """``body`` up to a new question that follows an answer it already gave, if one does."""
    for m in _NEXT_QUESTION.finditer(body):
        if m.start() > 0 and _ANSWER_LINE.search(clean_markdown(body[: m.start()])):
            return body[: m.start()]
    return body


def _explicit(segment: str, text: str) -> Prepared:
    seg = clean_markdown(segment).strip()
    return Prepared(text, seg, seg, True, False)


def preprocess(text: Any) -> Prepared | None:
    """Clean ``text`` and locate the answer segment; ``None`` when ``text`` is not text."""
    raw = to_text(text)
    if raw is None:
        return None
    return _preprocess(raw)


# One sample's reply is prepared by several readers in turn (refusal, answer, conclusion):
# the preparation is pure, so it is done once.
@functools.lru_cache(maxsize=8)
def _preprocess(raw: str) -> Prepared:
    body, reasoning_only = strip_reasoning(raw)
    body = _before_next_question(normalise_script(body))
    boxed = _container(body)
    if boxed is not None:
        return _explicit(boxed, clean_markdown(body).strip())
    wrapped = json_answer(_FENCE_LINE.sub("", body))
    if wrapped is not None:
        return _explicit(wrapped, clean_markdown(body).strip())
    cleaned = clean_markdown(body)
    last = _last_marker(cleaned)
    emphasis = _emphasis(body)
    if last is not None and last_match(_RETRACT, cleaned[last.start("rest") :]) is None:
        seg = last.group("rest").strip()
        rest = cleaned[last.start("rest") :]
        if not seg:
            seg = rest.lstrip().split("\n", 1)[0].strip()
        return Prepared(cleaned.strip(), seg, rest.strip(), True, reasoning_only, emphasis=emphasis)
    if reasoning_only:
        return Prepared("", "", "", False, True, "unterminated reasoning block, no final answer")
    # no answer line, or one the reply takes back ("Answer: D. Hmm, wait, ..."): what it commits to
    stripped = cleaned.strip()
    seg, note = _committed(stripped) if stripped else ("", "empty response")
    return Prepared(stripped, seg, seg, False, False, note, emphasis)


_EMPHASIS_SPAN = re.compile(
    r"\*\*(?P<a>[^*\n]{1,80}?)\*\*|__(?P<b>[^_\n]{1,80}?)__"
    r"|(?<![*\w])\*(?P<c>[^*\s][^*\n]{0,80}?)\*(?![*\w])|(?<![_\w])_(?P<d>[^_\s][^_\n]{0,80}?)_(?![_\w])"
)


def _emphasis(body: str) -> tuple[str, ...]:
    """The spans set in bold or italics, cleaned as the rest of the text is."""
    if "*" not in body and "_" not in body:
        return ()
    spans = (next(g for g in m.groups() if g) for m in _EMPHASIS_SPAN.finditer(body))
    return tuple(s for s in (clean_markdown(x).strip() for x in spans) if s)


def answer_segment(text: Any) -> str:
    """The part of ``text`` the parsers look at."""
    pre = preprocess(text)
    return "" if pre is None else pre.segment


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
    # an edit whose constraints conflict: "the constraints cannot all be met", "infeasible"
    r"|\b(?:can\s*not|can'?t|could\s+not)\s+(?:all\s+|both\s+)?(?:be\s+)?(?:simultaneously\s+)?"
    r"(?:met|satisfied|fulfilled|achieved)\b|\b(?:infeasible|unsatisfiable)\b"
    r"|\bno\s+(?:allowed\s+|valid\s+|such\s+)?edit\s+(?:can|could|exists|satisfies)\b"
    r"|\b(?:is|are)\s+not\s+(?:provided|given|shown|visible|available|specified|indicated|labell?ed)\b"
    r"|\b(?:information|data)\s+(?:is\s+)?not\s+(?:available|provided|given)\b"
    r"|\b(?:is|remains)\s+unknown\b|\bno\s+(?:answer|information)\s+(?:can|is)\b"
    r"|^\W*(?:unknown|n/?a|not\s+applicable|i\s+don'?t\s+know|no\s+idea|unsure)\W*$" + MORE_REFUSALS,
    re.I,
)
# "cannot be certain, but it is probably X" is a hedged answer, not a refusal
# a turn after a clause ("..., but it is probably X"), or before a guess ("... but my best guess is");
# not a "but" inside a phrase ("between 30 but fewer than 47 actors")
_TURN = re.compile(
    r"(?:[,;.:—–]\s*|\s-\s)(?:but|however|though|although|nevertheless)\b[,:]?\s*"
    r"|\b(?:but|however|though|although|nevertheless)\b[,:]?\s*(?=(?:it|i|i'd|i'm|my|the\s+answer|probably"
    r"|likely|most\s+likely|perhaps|maybe|based|judging|looking|if\s+i\s+had|a\s+(?:best\s+)?guess)\b)",
    re.I,
)


def _after_refusal(segment: str) -> str | None:
    """None when ``segment`` refuses; else the segment to read (the part after a hedge's turn)."""
    m = _REFUSAL.search(segment) if segment else None
    if m is None:
        return segment
    turn = _TURN.search(segment, m.end())
    if turn is None or not segment[turn.end() :].strip(" .!,;"):
        return None
    return segment[turn.end() :].strip()


def refusal_in(segment: str) -> bool:
    return _after_refusal(segment) is None


def is_refusal(text: Any) -> bool:
    """True when the answer segment says the answer cannot be determined."""
    pre = preprocess(text)
    return pre is not None and bool(pre.segment) and refusal_in(pre.segment)


# an echoed option list: lines "A) text", "B. text", ...
_ECHO_LINE = re.compile(r"^[ \t]*\(?([A-Z])[.):][ \t]+\S[^\n]*$", re.M)


def without_option_echo(segment: str) -> str:
    """``segment`` without an echoed option list (two or more lines "A) ...", "B) ...")."""
    if len(set(_ECHO_LINE.findall(segment))) < 2:
        return segment
    return _ECHO_LINE.sub("", segment).strip()


def prepare(text: Any) -> Prepared | Parsed:
    """The prepared reply, or the failure every parser returns for it (not text, refusal, empty)."""
    pre = preprocess(text)
    if pre is None:
        return fail("not text")
    if pre.segment:
        # an echoed "D) cannot be determined" option is not the model refusing
        seg = _after_refusal(pre.segment if pre.explicit else without_option_echo(pre.segment))
        if seg is None:
            return REFUSED
        if seg != pre.segment and not _ECHO_LINE.search(pre.segment):
            pre = replace(pre, segment=seg, rest=seg)
    if not pre.segment:
        return fail(pre.note or "empty response")
    return pre


# ---------------------------------------------------------------------------- conclusions

# An unmarked reply that works its way to a result ("dx = 30 m and dy = 40 m, so the distance is
# 50 m.") names intermediate values; its concluding clause, from the last marker to the end, is
# what it commits to. Only consulted when the whole reply is ambiguous or has no answer.
_CONCLUSION = re.compile(
    r"(?:^|(?<=[.!?;,:\n]))[ \t]*(?:therefore|thus|hence|so|in\s+conclusion|in\s+summary|overall"
    r"|consequently|as\s+a\s+result|in\s+total|which\s+gives|this\s+gives|that\s+gives"
    r"|因此|所以|故而|综上所述|由此可得|したがって|よって|따라서|donc|par\s+conséquent|daher|por\s+lo\s+tanto"
    r"|portanto|quindi|поэтому|следовательно)\b",
    re.I | re.M,
)


def conclusion_of(segment: str) -> str | None:
    """The concluding clause of an unmarked segment (last marker to the end), if it has one."""
    last = last_match(_CONCLUSION, segment)
    if last is None or not segment[: last.start()].strip():
        return None
    return segment[last.start() :].strip()


def conclusion(text: Any) -> str | None:
    """The concluding clause of an unmarked reply (last marker to the end), if it has one."""
    pre = preprocess(text)
    if pre is None or pre.explicit or not pre.segment:
        return None
    return conclusion_of(pre.segment)
