"""Which of a reply's candidate answers is its answer: evidence levels, tried in one fixed order.

A reader first finds the answer segment (`scoring.answers.text`: a container, JSON, an answer
marker in any of ten languages, or what an unmarked reply commits to). Inside it, every mention
of a value of the asked type is a candidate. Mentions that are not the model's answer are set
aside first: negated ("F5 (not F2)", "F1 does not qualify"), hypothetical ("if it were closer it
would be A"; not when the question itself is conditional), a back bearing, an echoed instruction
("(A, B, C or D)"). Then the levels:

1. ``answer``: the segment as a whole: one value -> that value;
2. ``lead``: a marked answer up to its first justification ("Answer: B, because option C ...")
   or sentence end; an unmarked reply's few opening words before a dash ("N — W or E would not
   fit") -- an answer comes before its reasons;
3. ``question``: without what the question itself names (its ids, its numbers): "Answer: F3
   crosses F0." asked "which feature crosses F0?" answers F3;
4. ``counterfactual``: without what the reply says would be ("other ways would give 916 m");
5. ``plain``: without its parenthetical glosses ("SW (bearing about 225°, from north)");
6. ``emphasis``: what the reply set in bold or italics ("**B** is the one");
7. ``conclusion``: the concluding clause of an unmarked reply ("..., so the distance is 50 m");
8. the type's own levels, if any (a number: the sentences stating the asked quantity, the last
   one restating the question, the last stating one).

The first level that reads exactly one value gives the answer. Each level narrows the text the
levels before it left; a narrowing that still holds several candidates is kept for the next
level, one that holds none is dropped (the next level narrows the text before it). When no
level reads one value, the reply is unparsed with the first level's reason. A later level never
adds a candidate: it only removes the ones with weaker evidence.

>>> from scoring.answers import parse_answer
>>> parse_answer("F5 (not F2)", "feature_id", valid_ids=["F0", "F2", "F5"]).value
'F5'
>>> asked = "Which feature crosses F0?"
>>> parse_answer("Answer: F3 crosses F0.", "feature_id", valid_ids=["F0", "F3"], question=asked).value
'F3'
>>> parse_answer("Answer: 87.3 m or 62.3 m", "distance").reason
'ambiguous: several numbers'
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from scoring.answers.base import Parsed
from scoring.answers.text import Prepared, conclusion_of, prepare

# A reader of one segment: (segment, the prepared reply) -> reading.
SegmentReader = Callable[[str, Prepared], Parsed]
# A type's own last level: (segment, question) -> the part of it to read, or None.
LastLevel = Callable[[str, "Question"], "str | None"]

_TOKEN = (
    r"(?:option\s+|choice\s+|feature\s+|the\s+)?\(?[\w°²'’/\-]+(?:\.\d+)?\)?"
    r"(?:[ \t]*(?:°|m\b|km\b|metres?\b|meters?\b|degrees?\b))?"
)
_NEGATED_BEFORE = re.compile(
    r"\b(?:not|never|rather\s+than|instead\s+of|except(?:\s+for)?|excluding|other\s+than|no\s+longer"
    r"|rule\s+out|ruled\s+out|rules\s+out|eliminat(?:e|es|ed|ing))[ \t]+" + _TOKEN,
    re.I,
)
_NEGATED_AFTER = re.compile(
    r"(?P<t>(?:[\w°².\-]+,?[ \t]+(?:or[ \t]+|and[ \t]+)?){0,3}[\w°².\-]+)"
    r"(?<!\bwhich)(?<!\bthat)(?<!\bit)(?<!\bthis)(?<!\bthey)(?<!\bwhat)[ \t]*(?:[✗✘❌×][ \t]*)?"
    r"(?:(?:does\s+not|doesn'?t|do\s+not|don'?t|is\s+not|isn'?t|cannot|can'?t|fails?\s+to|would\s+not"
    r"|wouldn'?t|will\s+not|won'?t)[ \t]+"
    r"(?:qualify|fit|work|satisfy|apply|count|match|hold|meet|be\s+it|be\s+right|be\s+correct|the\s+answer)\b"
    r"|(?:is|was|seems|are)[ \t]+(?:wrong|incorrect|ruled\s+out|excluded|eliminated"
    r"|not\s+(?:it|right|correct|the\s+answer))\b|ruled\s+out\b)",
    re.I,
)
_BACK_BEARING = re.compile(
    r"\b(?:back|reverse|reciprocal|opposite|return)[\s\-]+(?:bearing|azimuth|heading|direction)\b[^.;\n)]*",
    re.I,
)
_LETTER_LIST = re.compile(
    r"\(?(?<![\w'’])[A-Z](?:(?:[ \t]*[,/|\-–][ \t]*(?:(?:or|and)[ \t]+)?|[ \t]+(?:or|and)[ \t]+)"
    r"[A-Z](?![\w'’])){2,}\)?"
)
_HYPOTHETICAL_SENTENCE = re.compile(r"\b(?:if|were|unless|suppose|assuming)\b", re.I)
_CLAUSE_REST = r"(?:[^,;.!?\n]|[.,](?=\d))*"  # to the clause's end (a decimal point is no end)
_IF_CLAUSE = re.compile(rf"\b(?:if|unless|suppose|assuming)\b{_CLAUSE_REST}", re.I)
# a consequent runs to a semicolon, the sentence's end or a "but" (its value may be a list)
_WOULD_CLAUSE = re.compile(
    r"\b(?:would|could|might)\s+(?:be|have\s+been|give|choose|pick)\b(?:[^;.!?\n]|\.(?=\d))*?"
    r"(?=\s*(?:[;!?\n]|\.(?!\d)|,?\s*but\b|$))",
    re.I,
)
# A sentence: up to a full stop followed by white space (not a decimal point), or a line's end.
SENTENCES = re.compile(r"(?:[^.!?\n]|[.!?](?![.!?]*(?:\s|$)))+(?:[.!?]+(?=\s|$)|\n|$)")
# Where an answer's reasons begin: a justification word, a parenthesis, a dash, a semicolon.
_REASONS = re.compile(
    r"[ \t]+(?:because|since|as\s+(?=\w+\s)|due\s+to|given\s+(?:that\s+)?|owing\s+to|whereas|while"
    r"|which\s+(?:means|is\s+why)|car|parce\s+que|weil|porque|perché|потому\s+что|так\s+как)\b"
    r"|[ \t]*(?:;|[(（\[](?![A-Za-z][)\]])|—|–|--|[ \t]-[ \t])"
    r"|,[ \t]*(?:because|since|as|given|while|whereas|but|and\s+not|not)\b"
    r"|(?<=\S)[.!?](?=\s)|因为|由于|因為|なぜなら|왜냐하면",
    re.I,
)


_CONDITIONAL = re.compile(r"\b(?:if|would|were|unless|suppose|assuming)\b", re.I)
_PARENTHETICAL = re.compile(r"\([^()\n]*\)|\[[^\[\]\n]*\]|（[^（）\n]*）")


@dataclass(frozen=True, slots=True)
class Question:
    """What a reader may know of the question a reply answers.

    Attributes:
        text: the question's wording ("" when unknown).
        named: masks of what the question names (its ids, its numbers), each a compiled pattern.
    """

    text: str = ""
    named: Sequence[re.Pattern[str]] = field(default_factory=tuple)


def blank(text: str, spans: Iterator[tuple[int, int]]) -> str:
    """``text`` with each span replaced by spaces (positions, and so the other mentions, kept)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _hypothetical_spans(seg: str) -> Iterator[tuple[int, int]]:
    for sentence in SENTENCES.finditer(seg):
        if _HYPOTHETICAL_SENTENCE.search(sentence.group()):
            for rx in (_IF_CLAUSE, _WOULD_CLAUSE):
                for m in rx.finditer(seg, sentence.start(), sentence.end()):
                    yield m.span()


def set_aside(seg: str, *, negation: bool = True, letters: bool = False, hypotheticals: bool = True) -> str:
    """``seg`` without the mentions that are not the model's answer (see the module's doc).
    Without ``negation`` (yes / no, where "not" may be the answer) only a value the reply says
    does not qualify is set aside."""
    spans: list[tuple[int, int]] = []
    if negation:
        spans += [m.span() for m in _NEGATED_BEFORE.finditer(seg)]
    spans += [m.span("t") for m in _NEGATED_AFTER.finditer(seg)]
    spans += [m.span() for m in _BACK_BEARING.finditer(seg)]
    if letters:
        spans += [m.span() for m in _LETTER_LIST.finditer(seg)]
    if hypotheticals:
        spans += list(_hypothetical_spans(seg))
    return blank(seg, iter(spans)) if spans else seg


def lead(seg: str) -> str | None:
    """The segment up to where its reasons begin, when that is a part of it."""
    start = len(seg) - len(seg.lstrip())
    m = _REASONS.search(seg, start + 1)
    return seg[: m.start()] if m is not None and m.start() > start else None


def without_named(seg: str, question: Question) -> str | None:
    """The segment without what the question names, when the question names any of it."""
    spans = [m.span() for rx in question.named for m in rx.finditer(seg)]
    return blank(seg, iter(spans)) if spans else None


# A level after the first: (narrowing, whether what it leaves is marked as the answer).
Narrowing = tuple[Callable[[str], "str | None"], bool]
_OPENING_WORDS = 3  # an unmarked reply that opens with its answer: "N — W or E would not fit."
_OPENING_END = re.compile(r"[ \t]+(?:—|–|--|-)[ \t]+|;|[ \t]+(?:because|since)\b", re.I)


def _opening(text: str) -> str | None:
    """An unmarked reply's opening words, when a few words stand before a dash or its reasons."""
    start = len(text) - len(text.lstrip())
    m = _OPENING_END.search(text, start + 1)
    if m is None or len(text[start : m.start()].split()) > _OPENING_WORDS:
        return None
    return text[: m.start()]


def _narrowings(pre: Prepared, question: Question, last: Sequence[LastLevel]) -> list[Narrowing]:
    """The levels after the first, in order: each takes the text the levels before left."""
    steps: list[Narrowing] = [(lead, True) if pre.explicit else (_opening, True)]
    steps.append((lambda text: without_named(text, question), pre.explicit))
    steps.append((_without_conditionals, pre.explicit))
    steps.append((lambda text: _PARENTHETICAL.sub(lambda m: " " * len(m.group()), text), pre.explicit))
    steps.append((lambda text: emphasised(text, pre.emphasis), True))
    if not pre.explicit:
        steps.append((conclusion_of, False))
    for own in last:
        steps.append((functools.partial(_own_level, own, question=question), pre.explicit))
    return steps


def _own_level(own: LastLevel, text: str, *, question: Question) -> str | None:
    return own(text, question)


_COUNTERFACTUAL = re.compile(
    r"\bwould\s+(?:be|have\s+been|give|yield)\b(?:[^;.!?\n]|\.(?=\d))*?(?=\s*(?:[;!?\n]|\.(?!\d)|,?\s*but\b|$))",
    re.I,
)


def _without_conditionals(text: str) -> str | None:
    """The text without what it says would be ("other ways would give 916 m"); what it says
    might or could be is a hedge, and stays."""
    spans = [m.span() for m in _COUNTERFACTUAL.finditer(text)]
    return blank(text, iter(spans)) if spans else None


def emphasised(text: str, emphasis: Sequence[str]) -> str | None:
    """What the reply set in bold or italics, of what ``text`` still holds (each span once)."""
    kept = [e for e in emphasis if e.strip() and e in text]
    return " ; ".join(dict.fromkeys(kept)) if kept else None


def _found_none(parsed: Parsed) -> bool:
    """A reading that found no candidate at all (as against several)."""
    return parsed.reason.startswith(("no ", "missing ids"))


def read_reply(
    text: object,
    read: SegmentReader,
    question: Question | None = None,
    *,
    last: Sequence[LastLevel] = (),
    negation: bool = True,
    letters: bool = False,
) -> Parsed:
    """Read ``text`` with the segment reader ``read`` through the evidence levels.

    Args:
        text: the reply (any object; not text is a failure, never an exception).
        read: reads one segment of the asked type.
        question: what is known of the question (its wording and what it names).
        last: the type's own last levels, if it has any.
        negation: set negated mentions aside (not for yes/no, where "not" is the answer).
        letters: set echoed letter lists aside (option letters).

    Returns:
        The reading of the first level that reads exactly one value, else the first failure.
    """
    pre = prepare(text)
    if isinstance(pre, Parsed):
        return pre
    question = question or Question()
    # a conditional question ("What would happen if ...?") is answered in its own conditional
    text = set_aside(
        pre.segment, negation=negation, letters=letters, hypotheticals=not _CONDITIONAL.search(question.text)
    )
    first = read(text, pre)
    if first.ok:
        return first
    # Each level narrows what the one before left, and keeps its narrowing only while
    # candidates remain in it: a narrowing that leaves none passes the text on unchanged.
    marked = dataclasses.replace(pre, explicit=True)
    for narrow, marks in _narrowings(pre, question, last):
        narrower = narrow(text)
        if narrower is None or narrower == text or not narrower.strip():
            continue
        parsed = read(narrower, marked if marks else pre)
        if parsed.ok:
            return parsed
        if not _found_none(parsed):
            text = narrower
    return first
