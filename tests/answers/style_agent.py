"""A varied-format agent: the right answer, rewritten in one of many styles a real model might use.

Test helper (issue 41): an adversary for the reply reader, written without looking at how the
reader works and with styles no earlier test uses. The agent takes the right answer in its
canonical form ("Answer: X", as the built-in `tools` agent writes it) and rewrites it,
deterministically per request, in one style: long reasoning that names other candidates before
it concludes, the answer first and a justification naming other options, option content instead
of a letter, answer markers in ten languages, number words, scientific notation, other units,
YAML / JSON / XML-ish / tables / headings, claims restating the question's ids, negations,
self-corrections, direction glosses, edits inside prose, and refusals phrased in new ways (on
unanswerable items only). A few styles are deliberately AMBIGUOUS (two answers offered, a trace
cut mid-sentence): their right reading is "unparsed".

    case = Case("distance", "148.1355", question="What is the minimum distance between F0 and F1?")
    text = STYLES_BY_NAME["number_words"].render(case, random.Random(0))

`restyle(messages, canonical)` picks the style from the request's hash.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from scoring.runner.agents.prompt_view import parse_prompt, request_rng
from scoring.vocab import REFUSAL

# the answer type of each answer instruction's category (distance and perimeter share "metres")
TYPE_OF_CATEGORY = {
    "choice": "choice",
    "metres": "distance",
    "square_metres": "area",
    "degrees": "bearing",
    "density": "density",
    "count": "count",
    "direction4": "direction4",
    "direction": "direction8",
    "relative_direction": "relative_direction",
    "axis": "axis",
    "feature_id": "feature_id",
    "ordering": "ordering",
    "boolean": "yes_no",
    "topology_class": "topology_class",
    "text": "edit",
}
NUMERIC = ("distance", "perimeter", "area", "bearing", "density", "count")
DIRECTIONS = ("direction4", "direction8", "relative_direction", "axis")
DIR8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
AXES = ("N-S", "NE-SW", "E-W", "NW-SE")
RELATIVE = ("ahead", "behind", "left", "right")
TOPOLOGY = ("touches", "crosses", "overlaps", "within", "contains", "disjoint", "equals")
_ID = re.compile(r"\bF\d+\b")


@dataclass(frozen=True)
class Case:
    """One canonical answer and what the prompt says around it.

    ``answer``: the canonical answer's text (after "Answer: "); for an edit the whole reply (its
    JSON, or the tools agent's refusal sentence). ``choices``: the options of a multiple-choice
    question (``answer`` is then the letter)."""

    answer_type: str
    answer: str
    question: str = ""
    choices: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()

    @property
    def refusal(self) -> bool:
        if self.answer_type == "edit":
            return not self.answer.lstrip().startswith("{")
        if self.answer.strip().lower() == REFUSAL:
            return True
        return self.answer_type == "choice" and REFUSAL in self.content.lower()

    @property
    def content(self) -> str:
        """A multiple-choice answer's option text ("" when there is none)."""
        i = ord(self.answer[:1] or "?") - ord("A")
        return self.choices[i] if self.answer_type == "choice" and 0 <= i < len(self.choices) else ""

    @property
    def named(self) -> list[str]:
        """The feature ids the question names, in order, once each."""
        return list(dict.fromkeys(_ID.findall(self.question)))


Render = Callable[[Case, random.Random], "str | None"]


@dataclass(frozen=True)
class Style:
    name: str
    family: str
    render: Render  # None: the style does not apply to this case
    ambiguous: bool = False  # right reading: unparsed
    note: str = ""


STYLES: list[Style] = []


def style(name: str, family: str, *, ambiguous: bool = False) -> Callable[[Render], Render]:
    def register(fn: Render) -> Render:
        STYLES.append(Style(name, family, fn, ambiguous, (fn.__doc__ or "").strip()))
        return fn

    return register


# ---------------------------------------------------------------------------------------- helpers

UNIT = {
    "distance": " m",
    "perimeter": " m",
    "area": " m²",
    "bearing": "°",
    "density": " POIs per km²",
    "count": "",
}
SUBJECT = {
    "distance": "the distance",
    "perimeter": "the total perimeter",
    "area": "the area",
    "bearing": "the bearing",
    "density": "the POI density",
    "count": "the number of such features",
    "direction4": "the direction",
    "direction8": "the direction",
    "relative_direction": "its position relative to the observer",
    "axis": "the axis",
    "feature_id": "the feature",
    "ordering": "the order",
    "yes_no": "the answer",
    "topology_class": "the relation",
    "choice": "the correct option",
}


def say(c: Case) -> str:
    """The answer as a short phrase with its unit."""
    if c.refusal:
        return REFUSAL
    if c.answer_type in UNIT:
        return c.answer + UNIT[c.answer_type]
    return c.answer


def dec(c: Case) -> Decimal:
    return Decimal(c.answer)


def fmt(d: Decimal | float, places: int | None = None) -> str:
    """A plain decimal (no exponent), trailing zeros dropped."""
    if isinstance(d, float):
        d = Decimal(repr(d))
    if places is not None:
        d = round(d, places)
    s = format(d, "f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return s or "0"


def others(c: Case, r: random.Random, k: int = 2) -> list[str]:
    """Up to `k` distinct plausible wrong answers of the case's type, as short phrases (fewer
    when the type has fewer: a yes/no question has one)."""
    t = c.answer_type
    pool: Sequence[str]
    if t == "choice":
        pool = [chr(65 + i) for i in range(len(c.choices) or 4) if chr(65 + i) != c.answer]
    elif t in NUMERIC and not c.refusal:
        v = float(c.answer)
        if t == "count":
            pool = [str(n) for n in range(int(v) + 4) if n != int(v)]
        elif t == "bearing":
            pool = [fmt((v + d) % 360, 1) + "°" for d in (37.5, 90.0, 180.0, 211.3, 305.2)]
        else:
            places = 3 if t == "density" else 1
            pool = [fmt(v * f + 3.7, places) + UNIT[t] for f in (0.61, 1.37, 1.83, 2.4)]
    elif t == "ordering" and not c.refusal:
        ids = [s.strip() for s in c.answer.split(",")]
        pool = [", ".join(ids[::-1]), ", ".join(ids[1:] + ids[:1])]
    elif t in ("feature_id", "ordering", "edit") or t in NUMERIC:
        pool = [i for i in (c.named or list(c.ids)) if i != c.answer] or ["F7", "F8", "F9"]
    else:
        pools: dict[str, Sequence[str]] = {
            "direction4": ("N", "E", "S", "W"),
            "direction8": DIR8,
            "relative_direction": RELATIVE,
            "axis": AXES,
            "yes_no": ("yes", "no"),
            "topology_class": TOPOLOGY,
        }
        pool = [p for p in pools.get(t, ("F7", "F8", "F9")) if p != c.answer]
    return r.sample(list(pool), min(k, len(pool)))


def both(o: list[str], joiner: str = " and ") -> str:
    """ "X and Y" (or "X" when there is one)."""
    return joiner.join(o[:2])


def work(c: Case, r: random.Random) -> str:
    """A few sentences of reasoning that mention other candidates (and the question's ids)."""
    o = others(c, r)
    ref = " and ".join(c.named[:2]) or "the features"
    t = c.answer_type
    if c.refusal:
        return (
            f"I looked for what the question needs around {ref}, compared {both(o)}; part of it is missing."
        )
    if t == "choice":
        return (
            f"Let me go through the options. Option {both(o, ' and option ')} "
            f"{'look' if len(o) > 1 else 'looks'} plausible at first, but a careful check of {ref} "
            "rules that out."
        )
    if t in NUMERIC:
        return (
            f"Rough estimates for {ref} gave {both(o)}, using the wrong reference points. "
            "Recomputing carefully from the coordinates settles it."
        )
    if t == "ordering":
        return (
            f"One could read the order as {both(o, ', or even ')}, but projecting the centroids onto "
            "the road settles it."
        )
    if t == "edit":
        return f"The target has to move without touching {ref}; I checked a few positions first."
    return (
        f"Looking at {ref}: at first glance it could be {both(o, ', or perhaps ')}, but the "
        "coordinates settle it."
    )


# numbers in words (what a model writes; the reader's own tables are not consulted)
_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen"
).split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def int_words(n: int) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n < 1000:
        rest = n % 100
        return _ONES[n // 100] + " hundred" + (" and " + int_words(rest) if rest else "")
    if n < 1_000_000:
        rest = n % 1000
        joiner = " and " if 0 < rest < 100 else " "
        return int_words(n // 1000) + " thousand" + (joiner + int_words(rest) if rest else "")
    rest = n % 1_000_000
    return int_words(n // 1_000_000) + " million" + (" " + int_words(rest) if rest else "")


def number_words(s: str) -> str:
    """ "148.1355" -> "one hundred and forty-eight point one three five five"."""
    whole, _, frac = s.lstrip("-").partition(".")
    out = int_words(int(whole))
    if frac:
        out += " point " + " ".join(_ONES[int(ch)] for ch in frac)
    return ("minus " if s.startswith("-") else "") + out


UNIT_WORDS = {
    "distance": "metres",
    "perimeter": "metres",
    "area": "square metres",
    "bearing": "degrees",
    "density": "POIs per square kilometre",
    "count": "",
}


def letter_of(c: Case, option: str) -> str:
    return chr(65 + c.choices.index(option)) if option in c.choices else "?"


def content_sentence(c: Case) -> str | None:
    """A multiple-choice answer given by its option's content, in a sentence."""
    text = c.content
    if not text:
        return None
    if REFUSAL in text.lower():
        return "From what is given, this cannot be determined."
    q = c.question.lower()
    if re.fullmatch(r"[\d.]+ m", text):
        what = "perimeter" if "perimeter" in q else "distance"
        return f"The {what} is {text}."
    if text.endswith("°") and "bearing" in q:
        return f"The bearing works out to {text}."
    if "per km²" in text:
        return f"That gives a density of {text}."
    if text.isdigit():
        return f"There are {text} such features."
    if _ID.fullmatch(text):
        return f"It is {text}."
    if re.fullmatch(r"F\d+(, F\d+)+", text):
        return f"The order is {text}."
    if text in DIR8 and len(c.named) >= 2:
        return f"{c.named[0]} is to the {text} of {c.named[1]}."
    if text.lower() in ("yes", "no"):
        return "Yes, it does." if text.lower() == "yes" else "No, it does not."
    return f"I would say: {text}."


# ----------------------------------------------------------------------- reasoning, then a conclusion


@style("cot_so_subject_is", "reasoning")
def _cot_so(c: Case, r: random.Random) -> str | None:
    """Reasoning naming other candidates, then "So the distance is 148.1 m." """
    if c.answer_type == "edit" or c.refusal:
        return None
    end = (
        f"So the correct option is {c.answer}."
        if c.answer_type == "choice"
        else f"So {SUBJECT[c.answer_type]} is {say(c)}."
    )
    return f"Let me work through this step by step.\n\n{work(c, r)}\n\n{end}"


@style("cot_concludes_refusal", "reasoning")
def _cot_refusal(c: Case, r: random.Random) -> str | None:
    """Reasoning that names candidates, then "So the distance cannot be determined from what is
    given." (unanswerable items)."""
    if c.answer_type == "edit" or not c.refusal:
        return None
    subject = "the answer" if c.answer_type == "choice" else SUBJECT[c.answer_type]
    return f"Let me check.\n\n{work(c, r)}\n\nSo {subject} cannot be determined from what is given."


@style("cot_putting_it_together", "reasoning")
def _cot_together(c: Case, r: random.Random) -> str | None:
    """Reasoning, then "Putting it all together, I'm confident it's X." """
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"{work(c, r)}\n\nPutting it all together, I'm confident it's {say(c)}."


@style("cot_thus_we_get", "reasoning")
def _cot_thus(c: Case, r: random.Random) -> str | None:
    """Numbered steps with intermediate values, then "Thus we get X." """
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)
    ids = c.named or ["F0", "F1"]
    return (
        f"Step 1: identify {', '.join(ids)} in the scene.\n"
        f"Step 2: compare the candidates ({both(o, ' vs ')} among them).\n"
        "Step 3: discard the ones that fail the condition.\n\n"
        f"Thus we get {say(c)}."
    )


@style("answer_first_then_why", "reasoning")
def _first_then_why(c: Case, r: random.Random) -> str | None:
    """The answer first, then a justification naming other options ("C — B is too far")."""
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)
    if c.answer_type in NUMERIC:
        return (
            f"{say(c)}. For comparison, other ways of measuring would give {both(o)}, but that is "
            "not what is asked."
        )
    return f"{say(c)} — {both(o, ' or ')} would not fit the geometry."


@style("self_correction", "reasoning")
def _self_correction(c: Case, r: random.Random) -> str | None:
    """ "My first pick was F1. Wait, F1 does not qualify; F3 does." """
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)[0]
    if c.answer_type in NUMERIC:
        return f"My first estimate was {o}. Wait — that used the wrong points. Redoing it, I get {say(c)}."
    if c.answer_type == "choice":
        return f"I initially leaned towards {o}. Actually no, {o} is wrong; the right option is {c.answer}."
    return f"My first pick was {o}. Wait, {o} does not qualify; {say(c)} does."


@style("conditional_then_answer", "reasoning")
def _conditional(c: Case, r: random.Random) -> str | None:
    """ "If we went by the bounding boxes it would be B; going by the geometry as asked, it is C." """
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)[0]
    return (
        f"If we went by the bounding boxes it would be {o}; going by the geometry as asked, it is {say(c)}."
    )


@style("bold_inline_then_others", "reasoning")
def _bold_inline(c: Case, r: random.Random) -> str | None:
    """The answer in bold mid-sentence, other candidates named after it."""
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)
    verb = "do" if len(o) > 1 else "does"
    return f"Based on the coordinates, **{say(c)}** is the one; {both(o)} {verb} not fit."


@style("hedged_commitment", "reasoning")
def _hedged(c: Case, r: random.Random) -> str | None:
    """A hedge that still commits to one answer ("I'm not completely sure, but my best answer is F3.")."""
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"I'm not completely sure — the map is dense here — but my best answer is {say(c)}."


@style("checklist_marks", "structured")
def _checklist(c: Case, r: random.Random) -> str | None:
    """Candidates as a checklist, the answer the one ticked ("- F2 ✓ meets the condition")."""
    if c.refusal or c.answer_type not in (
        "feature_id",
        "choice",
        "direction4",
        "direction8",
        "relative_direction",
    ):
        return None
    if c.answer_type == "choice":
        items = [chr(65 + i) for i in range(len(c.choices))]
    elif c.answer_type == "feature_id":
        items = [i for i in c.named[:-1] if i != c.answer] + [c.answer] if len(c.named) > 1 else []
        items = sorted(set(items), key=lambda i: int(i[1:]))
    else:
        items = sorted({c.answer, *others(c, r, 3)})
    if len(items) < 2:
        return None
    lines = [f"- {i} {'✓ meets the condition' if i == c.answer else '✗ ruled out'}" for i in items]
    return "Checking each candidate:\n" + "\n".join(lines)


@style("negation_in_parentheses", "claims")
def _negation(c: Case, r: random.Random) -> str | None:
    """ "F5 (not F2)" for closed answers."""
    if c.answer_type in NUMERIC or c.answer_type == "edit" or c.refusal:
        return None
    return f"{say(c)} (not {others(c, r)[0]})"


_RELATION_WORDS = (
    r"\b(touches|crosses|contains|overlaps|intersects|is within|lies within|is disjoint from)\s+(F\d+)"
)


def _claim_feature(c: Case, a: str, n: list[str]) -> str:
    m = re.search(_RELATION_WORDS, c.question)
    if m:
        return f"Answer: {a} {m.group(1)} {m.group(2)}."
    if "above" in c.question:
        return f"{a} lies above {next((i for i in n if i != a), 'F1')}."
    return f"It is {a}, judged relative to {n[0]}."


def _claim_ordering(c: Case, a: str, n: list[str]) -> str:
    ids = [s.strip() for s in a.split(",")]
    road = n[-1] if n[-1] not in ids else "the road"
    return f"Travelling along {road}, one passes {ids[0]} first, then {', then '.join(ids[1:])}."


def _claim_count(c: Case, a: str, n: list[str]) -> str:
    pool = len(n) - 1
    return f"{a} of the {pool} candidate features satisfy the condition with respect to {n[-1]}."


def _claim_relative(c: Case, a: str, n: list[str]) -> str:
    return f"For the observer at {n[0]}, {n[1]} is {'on the ' if a in ('left', 'right') else ''}{a}."


_TOPOLOGY_VERB = {"within": "is within", "disjoint": "is disjoint from", "equals": "equals"}
_CLAIMS: dict[str, Callable[[Case, str, list[str]], str]] = {
    "feature_id": _claim_feature,
    "direction4": lambda c, a, n: f"{n[0]} lies to the {a} of {n[1]}.",
    "direction8": lambda c, a, n: f"{n[0]} lies to the {a} of {n[1]}.",
    "relative_direction": _claim_relative,
    "axis": lambda c, a, n: f"Road {n[0]} runs {a}.",
    "distance": lambda c, a, n: f"{n[0]} and {n[1]} are {say(c)} apart.",
    "perimeter": lambda c, a, n: f"Together, {', '.join(n)} have a perimeter of {say(c)}.",
    "count": _claim_count,
    "density": lambda c, a, n: f"The POI density of {n[-1]} is {say(c)}.",
    "bearing": lambda c, a, n: f"The bearing from {n[0]} to {n[1]} is {say(c)}.",
    "ordering": _claim_ordering,
    "yes_no": lambda c, a, n: "Yes, they do." if a == "yes" else "No, they do not.",
    "topology_class": lambda c, a, n: f"{n[0]} {_TOPOLOGY_VERB.get(a, a)} {n[1]}.",
}


@style("restated_claim", "claims")
def _claim(c: Case, r: random.Random) -> str | None:
    """The answer restated as a claim naming the question's ids ("F3 crosses F0.", "F1 lies to
    the SW of F0.", "Travelling along F0, one passes F2 first, then F1, then F3.")."""
    claim = _CLAIMS.get(c.answer_type)
    if c.refusal or claim is None or len(c.named) < 2:
        return None
    return claim(c, c.answer, c.named)


_QUESTION_NUMBER = re.compile(r"(\d+(?:\.\d+)?)\s?(m\b|°)")


@style("echo_question_numbers", "claims")
def _echo_numbers(c: Case, r: random.Random) -> str | None:
    """The question's own number restated beside the answer ("Within 50 m of F0 I count 3 features.")."""
    m = _QUESTION_NUMBER.search(c.question)
    if c.refusal or m is None or len(c.named) < 2:
        return None
    q, a, n = m.group(1) + ("°" if m.group(2) == "°" else " m"), c.answer, c.named
    if c.answer_type == "count":
        return f"Within {q} of {n[-1]} I count {a} features."
    if c.answer_type == "relative_direction":
        side = f"on the {a}" if a in ("left", "right") else a
        return f"Moving along heading {q}, the observer has {n[1]} {side}."
    if c.answer_type == "yes_no":
        return (
            f"{'Yes' if a == 'yes' else 'No'}: {n[0]} is {'' if a == 'yes' else 'not '}within {q} of {n[1]}."
        )
    return None


# ---------------------------------------------------------------------- multiple choice by content


@style("option_content_in_sentence", "content")
def _content(c: Case, r: random.Random) -> str | None:
    """The option's value in a sentence, no letter ("The distance is 48.9 m.")."""
    if c.answer_type != "choice":
        return None
    return content_sentence(c)


@style("lowercase_option_with_content", "content")
def _lower_option(c: Case, r: random.Random) -> str | None:
    """ "I'd pick option (d), i.e. 916.662 per km²." """
    if c.answer_type != "choice" or not c.content:
        return None
    return f"I'd pick option ({c.answer.lower()}), i.e. {c.content}."


@style("letter_is_correct_with_distractor", "content")
def _is_correct(c: Case, r: random.Random) -> str | None:
    """ "After checking, D is correct; B is a distractor." """
    if c.answer_type != "choice":
        return None
    other = others(c, r)[0]
    return f"After checking each option against the scene, {c.answer} is correct; {other} is a distractor."


@style("its_bold_letter_lowercase_lead", "content")
def _its_bold(c: Case, r: random.Random) -> str | None:
    """ "looking at the map, it's **A**" (lower-case lead, bold letter, no answer marker)."""
    if c.answer_type != "choice":
        return None
    return f"looking at the geometry, it's **{c.answer}**"


@style("echoed_instruction_letter", "content")
def _echoed(c: Case, r: random.Random) -> str | None:
    """The instruction echoed before the letter: "Answering with the option letter only (A, B, C or D): C" """
    if c.answer_type != "choice":
        return None
    letters = [chr(65 + i) for i in range(len(c.choices))]
    listed = ", ".join(letters[:-1]) + " or " + letters[-1]
    return f"Answering with the option letter only ({listed}): {c.answer}"


@style("letter_and_content_dash", "content")
def _letter_dash(c: Case, r: random.Random) -> str | None:
    """ "D (916.662 per km²) — the others are too low." """
    if c.answer_type != "choice" or not c.content:
        return None
    o = others(c, r)
    return f"{c.answer} ({c.content}) — {both(o, ' and ')} do not match the computed value."


# ------------------------------------------------------------------------------ other languages

ZH_UNIT = {
    "distance": "米",
    "perimeter": "米",
    "area": "平方米",
    "bearing": "度",
    "density": "个/平方公里",
    "count": "个",
}
KO_UNIT = {
    "distance": "미터",
    "perimeter": "미터",
    "area": "제곱미터",
    "bearing": "도",
    "density": "개/km²",
    "count": "개",
}
JA_UNIT = {
    "distance": "メートル",
    "perimeter": "メートル",
    "area": "平方メートル",
    "bearing": "度",
    "density": "件/km²",
    "count": "個",
}


def _value(c: Case, units: dict[str, str] | None = None, glue: bool = False) -> str:
    if c.answer_type in NUMERIC and units is not None:
        return c.answer + ("" if glue else " ") + units[c.answer_type]
    return say(c)


@style("zh_colon_marker", "i18n")
def _zh_colon(c: Case, r: random.Random) -> str | None:
    """Chinese reasoning, then "答案：C" (full-width colon)."""
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)
    return f"分析：先比较 {both(o, ' 和 ')}，都不符合条件。\n答案：{c.answer}"


@style("zh_glued_value", "i18n")
def _zh_glued(c: Case, r: random.Random) -> str | None:
    """ "所以选B" / "答案是174.5米" (the value glued to CJK text)."""
    if c.answer_type == "edit" or c.refusal:
        return None
    if c.answer_type == "choice":
        return f"经过计算，{others(c, r)[0]}项不对，所以选{c.answer}"
    return f"经过计算，答案是{_value(c, ZH_UNIT, glue=True)}。"


@style("ja_marker", "i18n")
def _ja(c: Case, r: random.Random) -> str | None:
    """ "正解は C です。" """
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"座標を確認しました。正解は {_value(c, JA_UNIT)} です。"


@style("ko_marker", "i18n")
def _ko(c: Case, r: random.Random) -> str | None:
    """ "정답: C" / "정답은 174.5미터입니다." """
    if c.answer_type == "edit" or c.refusal:
        return None
    if c.answer_type in NUMERIC:
        return f"좌표를 비교해 보면 정답은 {_value(c, KO_UNIT, glue=True)}입니다."
    return f"좌표를 비교해 보았습니다.\n정답: {c.answer}"


@style("fr_marker", "i18n")
def _fr(c: Case, r: random.Random) -> str | None:
    """ "Donc la bonne réponse est B." """
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)[0]
    return f"En comparant avec {o}, on voit que ça ne colle pas. Donc la bonne réponse est {say(c)}."


@style("de_marker", "i18n")
def _de(c: Case, r: random.Random) -> str | None:
    """ "Die richtige Antwort ist D." """
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"Nach Prüfung der Koordinaten: Die richtige Antwort ist {say(c)}."


@style("es_marker", "i18n")
def _es(c: Case, r: random.Random) -> str | None:
    """ "La respuesta correcta es A." """
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"Tras revisar la geometría, la respuesta correcta es {say(c)}."


@style("pt_marker", "i18n")
def _pt(c: Case, r: random.Random) -> str | None:
    """ "A resposta correta é B." """
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"Depois de analisar o mapa, a resposta correta é {say(c)}."


@style("it_marker", "i18n")
def _it(c: Case, r: random.Random) -> str | None:
    """ "La risposta corretta è C." """
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"Analizzando le coordinate, la risposta corretta è {say(c)}."


@style("ru_marker", "i18n")
def _ru(c: Case, r: random.Random) -> str | None:
    """Russian reasoning, then "Ответ: B"."""
    if c.answer_type == "edit" or c.refusal:
        return None
    o = others(c, r)
    return f"Рассуждение: проверяем варианты {both(o, ' и ')} — не подходят.\nОтвет: {say(c)}"


@style("eu_decimal_comma", "i18n")
def _decimal_comma(c: Case, r: random.Random) -> str | None:
    """A decimal comma in a German / French / Spanish sentence ("148,1355 m"); never with exactly
    three decimals (which a reader could take for a thousands separator)."""
    if c.answer_type not in NUMERIC or c.refusal or "." not in c.answer:
        return None
    if len(c.answer.split(".")[1]) == 3:
        return None
    v = c.answer.replace(".", ",")
    unit = UNIT[c.answer_type]
    return r.choice(
        [
            f"Das Ergebnis beträgt {v}{unit}.",
            f"Le résultat est de {v}{unit}.",
            f"El resultado es {v}{unit}.",
        ]
    )


DIR_WORDS = {
    "zh": dict(zip(DIR8, ["北", "东北", "东", "东南", "南", "西南", "西", "西北"], strict=True))
    | {"ahead": "前方", "behind": "后方", "left": "左边", "right": "右边"},
    "fr": dict(
        zip(
            DIR8,
            ["nord", "nord-est", "est", "sud-est", "sud", "sud-ouest", "ouest", "nord-ouest"],
            strict=True,
        )
    )
    | {"ahead": "devant", "behind": "derrière", "left": "à gauche", "right": "à droite"},
    "de": dict(
        zip(
            DIR8,
            ["Norden", "Nordosten", "Osten", "Südosten", "Süden", "Südwesten", "Westen", "Nordwesten"],
            strict=True,
        )
    )
    | {"ahead": "vorne", "behind": "hinten", "left": "links", "right": "rechts"},
}


@style("direction_in_other_language", "i18n")
def _dir_words(c: Case, r: random.Random) -> str | None:
    """A direction or yes/no answered in the words of another language ("位于西南方向", "au sud-ouest")."""
    t = c.answer_type
    if c.refusal:
        return None
    if t == "yes_no":
        return r.choice(
            [("Oui." if c.answer == "yes" else "Non."), ("Ja." if c.answer == "yes" else "Nein.")]
        )
    if t not in ("direction4", "direction8", "relative_direction"):
        return None
    lang = r.choice(sorted(DIR_WORDS))
    w = DIR_WORDS[lang][c.answer]
    a, b = [*c.named, "F1", "F0"][:2]
    if lang == "zh":
        return f"答案：{w}" if t == "relative_direction" else f"{a}位于{b}的{w}方向。"
    if lang == "fr":
        return f"Réponse : {w}" if t == "relative_direction" else f"{a} se trouve au {w} de {b}."
    return f"Antwort: {w}" if t == "relative_direction" else f"{a} liegt im {w} von {b}."


# ----------------------------------------------------------------------------------------- numbers


@style("number_words_exact", "numbers")
def _words(c: Case, r: random.Random) -> str | None:
    """ "one hundred and forty-eight point one three five five metres" """
    if c.answer_type not in NUMERIC or c.refusal:
        return None
    unit = UNIT_WORDS[c.answer_type]
    return f"The answer is {number_words(c.answer)}{' ' + unit if unit else ''}."


@style("number_words_rounded", "numbers")
def _words_rounded(c: Case, r: random.Random) -> str | None:
    """ "roughly sixty-nine degrees" (whole numbers, where the tolerance allows rounding)."""
    if c.answer_type not in ("distance", "perimeter", "bearing", "count") or c.refusal:
        return None
    n = round(float(c.answer)) % 360 if c.answer_type == "bearing" else round(float(c.answer))
    unit = UNIT_WORDS[c.answer_type]
    if c.answer_type == "count":
        return f"There are {int_words(n)} such features."
    return f"It comes to roughly {int_words(n)} {unit}."


@style("scientific_notation", "numbers")
def _scientific(c: Case, r: random.Random) -> str | None:
    """ "1.481355 × 10^2 m" / "1.481355e2 m" / "1.481355 x 10² m" """
    if c.answer_type not in NUMERIC or c.answer_type == "count" or c.refusal:
        return None
    d = dec(c)
    if d == 0:
        return None
    exp = d.adjusted()
    mant = fmt(d.scaleb(-exp))
    sup = str(exp).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    form = r.choice([f"{mant} × 10^{exp}", f"{mant}e{exp}", f"{mant} x 10{sup}"])
    unit = " degrees" if c.answer_type == "bearing" else UNIT[c.answer_type]
    return f"Result: {form}{unit}"


@style("other_unit", "numbers")
def _other_unit(c: Case, r: random.Random) -> str | None:
    """The value in a unit other than the one asked (km, ft, yd; radians; hectares; per hectare)."""
    t = c.answer_type
    if c.refusal or t not in NUMERIC:
        return None
    d = dec(c)
    if t in ("distance", "perimeter"):
        pick = r.choice(["km", "ft", "yd", "cm"])
        if pick == "km":
            return f"It is {fmt(d.scaleb(-3))} km."
        if pick == "cm":
            return f"It is {fmt(d.scaleb(2))} cm."
        factor = Decimal("0.3048") if pick == "ft" else Decimal("0.9144")
        word = "feet" if pick == "ft" else "yards"
        return f"It is about {fmt(d / factor, 4)} {word}."
    if t == "bearing":
        return f"The bearing is {fmt(math.radians(float(d)), 5)} rad."
    if t == "area":
        return f"The area is {fmt(d.scaleb(-4))} hectares."
    if t == "density":
        return f"The density is {fmt(d.scaleb(-2))} POIs per hectare."
    return None


LATEX_UNIT = {
    "distance": r"\,\mathrm{m}",
    "perimeter": r"\,\mathrm{m}",
    "area": r"\,\mathrm{m}^2",
    "bearing": r"^\circ",
    "density": r"\,\mathrm{km}^{-2}",
    "count": "",
}


@style("latex_inline", "numbers")
def _latex(c: Case, r: random.Random) -> str | None:
    """Inline LaTeX with a symbol and a unit ("$d \\approx 148.1355\\,\\mathrm{m}$")."""
    if c.answer_type not in NUMERIC or c.refusal:
        return None
    symbol = {"distance": "d", "perimeter": "P", "area": "A", "bearing": r"\theta", "density": r"\rho"}
    lhs = symbol.get(c.answer_type, "n")
    return f"Computing from the coordinates gives $${lhs} = {c.answer}{LATEX_UNIT[c.answer_type]}$$."


@style("si_grouped_digits", "numbers")
def _grouped(c: Case, r: random.Random) -> str | None:
    """Thousands grouped with commas or thin spaces ("1,496.518 POIs/km²", "12 345 m²")."""
    if c.answer_type not in NUMERIC or c.refusal or float(c.answer) < 1000:
        return None
    whole, _, frac = c.answer.partition(".")
    sep = r.choice([",", "\u202f"])
    grouped = f"{int(whole):,}".replace(",", sep) + ("." + frac if frac else "")
    return f"Result ≈ {grouped}{UNIT[c.answer_type]}"


@style("arithmetic_then_result", "numbers")
def _arith(c: Case, r: random.Random) -> str | None:
    """The working as arithmetic, the result last ("1 + 1 + 1 = 3", "√(a² + b²) = 148.1 m")."""
    if c.answer_type not in NUMERIC or c.refusal:
        return None
    t = c.answer_type
    if t == "count":
        n = int(c.answer)
        listed = len(c.named) - 1
        total = listed if listed >= n else n + r.randint(1, 3)
        return f"Of the {total} candidates, {total - n} are too far: {total} - {total - n} = {n}."
    if t == "perimeter":
        total_p = dec(c)
        parts = [round(total_p * Decimal("0.3"), 1), round(total_p * Decimal("0.45"), 1)]
        parts.append(total_p - sum(parts))
        return f"P = {' + '.join(fmt(p) for p in parts)} = {c.answer} m"
    if t == "distance":
        v = float(c.answer)
        return f"d = √(Δx² + Δy²) = √({v * 0.6:.2f}² + {v * 0.8:.2f}²) = {c.answer} m"
    if t == "bearing":
        return f"θ = atan2(Δx, Δy); adding 360° where negative gives θ = {c.answer}°"
    if t == "density":
        return f"density = n / A (A in km²) = {c.answer} POIs per km²"
    return f"A = {c.answer} m²"


# -------------------------------------------------------------------------------------- structures

JSON_KEY = {
    "distance": "min_distance_m",
    "perimeter": "perimeter_m",
    "area": "area_m2",
    "bearing": "bearing_deg",
    "density": "poi_density_per_km2",
    "count": "feature_count",
    "direction4": "direction",
    "direction8": "compass_direction",
    "relative_direction": "relative_position",
    "axis": "orientation_axis",
    "feature_id": "feature_id",
    "ordering": "order",
    "yes_no": "result",
    "topology_class": "relation",
    "choice": "selected_option",
}


def _json_value(c: Case) -> object:
    if c.answer_type in NUMERIC:
        return int(c.answer) if c.answer_type == "count" else float(c.answer)
    if c.answer_type == "ordering":
        return [s.strip() for s in c.answer.split(",")]
    return c.answer


@style("yaml_final_answer", "structured")
def _yaml(c: Case, r: random.Random) -> str | None:
    """A YAML block: reasoning, `final_answer:`, then a confidence number."""
    if c.answer_type == "edit":
        return None
    o = others(c, r)
    return (
        "```yaml\n"
        f"reasoning: compared {both(o)} against the question; ruled out\n"
        f"final_answer: {say(c)}\n"
        "confidence: 0.8\n"
        "```"
    )


@style("json_descriptive_key", "structured")
def _json_key(c: Case, r: random.Random) -> str | None:
    """JSON under a descriptive key (`{"feature_count": 3}`, `{"bearing_deg": 309.5}`)."""
    if c.answer_type == "edit" or c.refusal:
        return None
    return json.dumps({JSON_KEY[c.answer_type]: _json_value(c)})


@style("json_descriptive_with_extras", "structured")
def _json_extras(c: Case, r: random.Random) -> str | None:
    """Pretty JSON: the answer under a descriptive key beside other numbers (a method, a count checked)."""
    if c.answer_type == "edit" or c.refusal:
        return None
    body = {
        "method": "planar geometry in the task CRS",
        "candidates_checked": len(c.named) or 4,
        JSON_KEY[c.answer_type]: _json_value(c),
    }
    return "```json\n" + json.dumps(body, indent=2, ensure_ascii=False) + "\n```"


@style("xml_nested_tags", "structured")
def _xml(c: Case, r: random.Random) -> str | None:
    """<response><reasoning>…</reasoning><result unit="m">148.1355</result></response>"""
    if c.answer_type == "edit" or c.refusal:
        return None
    unit = UNIT.get(c.answer_type, "").strip()
    attr = f' unit="{unit}"' if unit else ""
    return (
        f"<response>\n  <reasoning>{work(c, r)}</reasoning>\n"
        f"  <result{attr}>{c.answer}</result>\n</response>"
    )


@style("markdown_table_answer_row", "structured")
def _table(c: Case, r: random.Random) -> str | None:
    """A two-column table whose "Answer" row holds the answer, beside the question's ids."""
    if c.answer_type == "edit" or c.refusal:
        return None
    ids = "–".join(c.named[:3]) or "F0"
    return (
        "| Field | Value |\n|---|---|\n"
        f"| Features | {ids} |\n"
        f"| Answer | {say(c)} |\n"
        "| Method | coordinates in the task CRS |"
    )


@style("heading_answer_then_explanation", "structured")
def _heading(c: Case, r: random.Random) -> str | None:
    """ "### Final Answer" with the answer, then "### Explanation" naming other candidates."""
    if c.answer_type == "edit":
        return None
    return f"### Final Answer\n{say(c)}\n\n### Explanation\n{work(c, r)}"


@style("italic_conclusion", "structured")
def _italic(c: Case, r: random.Random) -> str | None:
    """ "… the one I settle on is *F3*." """
    if c.answer_type == "edit" or c.refusal:
        return None
    return f"{work(c, r)} The one I settle on is *{say(c)}*."


# -------------------------------------------------------------------------------------- directions


@style("direction_gloss", "directions")
def _gloss(c: Case, r: random.Random) -> str | None:
    """ "SW (bearing about 225°, measured clockwise from north)", "left, not right",
    "309.5° (back bearing 129.5°)"."""
    if c.refusal:
        return None
    t, a = c.answer_type, c.answer
    if t in ("direction4", "direction8"):
        deg = DIR8.index(a) * 45
        return f"{a} (bearing about {deg}°, measured clockwise from north)"
    if t == "relative_direction":
        opposite = {"left": "right", "right": "left", "ahead": "behind", "behind": "ahead"}[a]
        return f"{a}, not {opposite}"
    if t == "axis":
        first = AXES.index(a) * 45
        return f"{a} (roughly {first}°/{first + 180}°)"
    if t == "bearing":
        back = fmt((Decimal(a) + 180) % 360)
        return f"{a}° (back bearing {back}°)"
    return None


@style("direction_spelled_out", "directions")
def _spelled(c: Case, r: random.Random) -> str | None:
    """ "towards the south-west", "the north–south axis" (words, no code)."""
    if c.refusal:
        return None
    names = {"N": "north", "E": "east", "S": "south", "W": "west"}
    t, a = c.answer_type, c.answer
    if t in ("direction4", "direction8"):
        word = "-".join(names[ch] for ch in a)
        return f"It lies towards the {word}."
    if t == "axis":
        x, y = a.split("-")
        ends = ["-".join(names[ch] for ch in end) for end in (x, y)]
        return f"The road follows the {ends[0]} to {ends[1]} axis."
    return None


# -------------------------------------------------------------------------------------------- edits


def _edit_json(c: Case, indent: int | None = None) -> str:
    return json.dumps(json.loads(c.answer), indent=indent)


@style("edit_fenced_with_prose", "edit")
def _edit_fenced(c: Case, r: random.Random) -> str | None:
    """An explanation, the JSON in a ```json fence, and a remark after it."""
    if c.answer_type != "edit" or c.refusal:
        return None
    return (
        f"{work(c, r)}\n\nHere is my edit:\n\n```json\n{_edit_json(c, 2)}\n```\n\n"
        "This keeps every other feature where it is; nothing else needs to change."
    )


@style("edit_inline_in_sentence", "edit")
def _edit_inline(c: Case, r: random.Random) -> str | None:
    """The JSON inline in a sentence: "The operations I'd apply are: {…}. That's all." """
    if c.answer_type != "edit" or c.refusal:
        return None
    return f"The operations I'd apply are: {_edit_json(c)}. That's all that is needed."


@style("edit_then_rejected_alternative", "edit")
def _edit_alternative(c: Case, r: random.Random) -> str | None:
    """The edit first, then a rejected alternative edit shown for comparison."""
    if c.answer_type != "edit" or c.refusal:
        return None
    rejected = json.dumps({"operations": [{"op": "translate", "dx": 0, "dy": 0}]})
    return (
        f"My edit:\n```json\n{_edit_json(c)}\n```\n\n"
        f"For comparison, leaving the target in place ({rejected}) would break constraint 1, "
        "so that is not an option."
    )


@style("edit_steps_then_json", "edit")
def _edit_steps(c: Case, r: random.Random) -> str | None:
    """Numbered steps with numbers in them, then "Final edit (JSON):" and indented JSON."""
    if c.answer_type != "edit" or c.refusal:
        return None
    ids = ", ".join(c.named[:3]) or "the other features"
    return (
        f"1. Measure the current gaps to {ids} (about 12 m and 40 m).\n"
        "2. Decide the smallest change that satisfies every constraint.\n"
        "3. Check that no constraint breaks.\n\n"
        f"Final edit (JSON):\n{_edit_json(c, 4)}"
    )


# ------------------------------------------------------------------- refusals (unanswerable items)


@style("refusal_undetermined", "refusal")
def _undetermined(c: Case, r: random.Random) -> str | None:
    """ "Undetermined." """
    return "Undetermined." if c.refusal and c.answer_type != "edit" else None


@style("refusal_insufficient", "refusal")
def _insufficient(c: Case, r: random.Random) -> str | None:
    """ "The information provided is insufficient to determine this." """
    if not c.refusal or c.answer_type == "edit":
        return None
    return "The information provided is insufficient to determine this."


@style("refusal_not_enough_info", "refusal")
def _not_enough(c: Case, r: random.Random) -> str | None:
    """ "I don't have enough information to answer that: …" """
    if not c.refusal or c.answer_type == "edit":
        return None
    ref = c.named[0] if c.named else "the feature"
    return f"I don't have enough information to answer that: the scene does not show where {ref} is."


@style("refusal_na", "refusal")
def _na(c: Case, r: random.Random) -> str | None:
    """ "N/A — the scene does not contain what the question needs." """
    if not c.refusal or c.answer_type == "edit":
        return None
    return "N/A — the scene does not contain what the question needs."


@style("refusal_after_attempts", "refusal")
def _refusal_attempts(c: Case, r: random.Random) -> str | None:
    """Attempts with numbers and ids, then a refusal in prose (no JSON, no marker)."""
    if not c.refusal:
        return None
    ids = c.named or ["F0", "F1"]
    if c.answer_type == "edit":
        return (
            f"I tried moving {ids[0]} 12 m east and then 25 m north, and rotating it by 15°, but each "
            "time another constraint broke. No allowed edit satisfies all of them, so I can't give one."
        )
    return (
        f"I tried to locate {' and '.join(ids[:2])} and measure between them, but one of them is not "
        "in the data, so there is no way to answer this reliably."
    )


@style("refusal_edit_impossible", "refusal")
def _edit_impossible(c: Case, r: random.Random) -> str | None:
    """ "This cannot be done with the allowed operations." (edits)"""
    if c.answer_type != "edit" or not c.refusal:
        return None
    return r.choice(
        [
            "This cannot be done with the allowed operations.",
            "No valid edit exists: moving the target far enough from one feature pushes it into another, "
            "so I can't satisfy all the constraints.",
        ]
    )


@style("refusal_other_language", "refusal")
def _refusal_i18n(c: Case, r: random.Random) -> str | None:
    """A refusal in another language ("无法确定。", "Impossible à déterminer …", "Das lässt sich
    nicht bestimmen."; for an edit: "Diese Änderung ist … nicht möglich.")."""
    if not c.refusal:
        return None
    if c.answer_type == "edit":
        return r.choice(
            [
                "在允许的操作下无法满足所有约束，因此无法完成此编辑。",
                "Diese Änderung ist mit den erlaubten Operationen nicht möglich.",
                "Cette modification est impossible avec les opérations autorisées.",
            ]
        )
    return r.choice(
        [
            "根据所给信息，无法确定。",
            "Impossible à déterminer avec les données fournies.",
            "Das lässt sich anhand der Angaben nicht bestimmen.",
            "No se puede determinar con la información dada.",
        ]
    )


# --------------------------------------------------------------------- ambiguous: right reading is unparsed


@style("ambiguous_two_answers", "ambiguous", ambiguous=True)
def _two(c: Case, r: random.Random) -> str | None:
    """Two answers offered, neither chosen ("It is either F1 or F3; both fit.")."""
    if c.answer_type == "edit":
        return None
    o = others(c, r)
    a, b = [*o, REFUSAL][:2] if c.refusal else (say(c), o[0])
    first, second = (a, b) if r.random() < 0.5 else (b, a)
    return f"It is either {first} or {second}; both fit the data equally well."


@style("ambiguous_cut_trace", "ambiguous", ambiguous=True)
def _cut(c: Case, r: random.Random) -> str | None:
    """A trace cut mid-sentence with no conclusion ("So far F1 looks likely, but I still need to
    check F0 against the")."""
    if c.answer_type == "edit":
        return None
    lead = others(c, r)[0] if c.refusal else say(c)
    ref = c.named[0] if c.named else "the reference"
    return f"Let me think. So far {lead} looks likely, but I still need to check {ref} against the"


@style("ambiguous_retracted", "ambiguous", ambiguous=True)
def _retracted(c: Case, r: random.Random) -> str | None:
    """An answer given, then withdrawn with nothing in its place ("Answer: F3. Hmm, wait — that
    does not hold up; I would have to redo the whole check before answering.")."""
    if c.answer_type == "edit" or c.refusal:
        return None
    return (
        f"Answer: {say(c)}. Hmm, wait — that does not hold up; I would have to redo the whole check "
        "before answering."
    )


STYLES_BY_NAME = {s.name: s for s in STYLES}


def applicable(c: Case) -> list[Style]:
    """The styles whose rendering exists for this case (checked with a fixed generator)."""
    return [s for s in STYLES if s.render(c, random.Random(0)) is not None]


# ----------------------------------------------------------------------------------------- the agent


def case_of(messages: list[dict], canonical: str) -> Case:
    """The Case of a request and its canonical reply."""
    v = parse_prompt(messages)
    if v.task == "edit":
        return Case("edit", canonical.strip(), question=v.instruction or "", ids=tuple(v.feature_ids))
    kind = "choice" if v.choices else TYPE_OF_CATEGORY.get(v.answer_category, "text")
    answer = canonical.strip()
    answer = answer[len("Answer:") :].strip() if answer.startswith("Answer:") else answer
    if kind == "distance" and "perimeter" in (v.question or "").lower():
        kind = "perimeter"
    return Case(kind, answer, question=v.question or "", choices=tuple(v.choices), ids=tuple(v.feature_ids))


def first_turn(messages: list[dict]) -> list[dict]:
    """The system turn and the first user turn: a corrective follow-up gets the same reply."""
    out, users = [], 0
    for m in messages:
        if m.get("role") == "user":
            users += 1
            if users > 1:
                break
        if m.get("role") in ("system", "user"):
            out.append(m)
    return out


AMBIGUOUS_SHARE = 0.1  # of the requests answered in an ambiguous style (where one applies)


def pick_style(messages: list[dict], case: Case, salt: str = "") -> tuple[Style, str]:
    """The style of this request (by the hash of its first turn) and the reply in it: ambiguous
    in one request of ten; otherwise a family of the applicable styles first, then a style of it
    (a type's few own styles, such as the numbers', are not drowned by the many that fit every
    type)."""
    rng = request_rng(first_turn(messages), "styles" + salt)
    styles = applicable(case)
    ambiguous = [s for s in styles if s.ambiguous]
    if ambiguous and rng.random() < AMBIGUOUS_SHARE:
        styles = ambiguous
    else:
        styles = [s for s in styles if not s.ambiguous]
    families = sorted({s.family for s in styles})
    family = families[rng.randrange(len(families))]
    pool = [s for s in styles if s.family == family]
    chosen = pool[rng.randrange(len(pool))]
    text = chosen.render(case, rng)
    assert text is not None
    return chosen, text


def restyle(messages: list[dict], canonical: str, salt: str = "") -> tuple[Style, str]:
    """The canonical reply to `messages` rewritten in the request's style."""
    return pick_style(messages, case_of(messages, canonical), salt)
