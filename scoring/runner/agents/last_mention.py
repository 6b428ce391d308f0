"""The `last-mention` agent: a deterministic extractor for the tests' loopback runs of
`spatialgap extract`. Given the extractor prompt (`scoring.runner.extract`), it reports the last
option letter, number, compass direction or feature id the quoted reply mentions, the rule many
published extractors use; NONE when the reply mentions none. Not a model of judgement: it is
there so the extractor path runs end to end over real HTTP without a paid model."""

from __future__ import annotations

import re

from scoring.runner.agents.registry import agent

_QUOTED = re.compile(r"<<<\n(?P<reply>.*)\n>>>", re.S)
_CANDIDATE = re.compile(
    r"\((?P<paren>[A-J])\)|(?<![\w'’])(?P<letter>[A-J])(?![\w'’])"
    r"|(?P<id>\bF\d+\b)|(?P<number>[-+]?\d+(?:\.\d+)?)"
    r"|(?P<direction>\b(?:north|south)[\s\-]?(?:east|west)\b|\b(?:north|south|east|west)\b)",
    re.I,
)


@agent("last-mention", reads_images=False)
def last_mention(messages: list[dict]) -> str:
    """``Answer: <the last candidate of the quoted reply>`` (deterministic), or ``NONE``."""
    content = messages[-1].get("content") if messages else ""
    text = content if isinstance(content, str) else ""
    quoted = _QUOTED.search(text)
    reply = quoted.group("reply") if quoted else ""
    asks_letter = "\nOptions:\n" in text
    found = None
    for m in _CANDIDATE.finditer(reply):
        kind = m.lastgroup or ""
        if kind in ("paren", "letter") and not asks_letter:
            continue
        if kind not in ("paren", "letter") and asks_letter:
            continue
        found = m.group(kind)
    return f"Answer: {found}" if found else "NONE"
