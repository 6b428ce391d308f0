"""What every reader shares: the result value, the input limits and a JSON object scanner."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

RAW_CAP = 200_000  # characters of raw input looked at (the end of it)
# Characters considered after reasoning blocks are removed (the end of them). The longest of
# FRIEDA's 11,000 published replies is 5,173 characters once its reasoning is removed; a longer
# window only makes a junk reply slower to read (the whole window is scanned by every reader).
MAX_CHARS = 8_000
EDIT_CAP = 400_000  # characters of raw input looked at by the edit reader
MAX_JSON_DEPTH = 32


@dataclass(frozen=True, slots=True)
class Parsed:
    """Result of a parse: ``value`` is meaningful only when ``ok``."""

    ok: bool
    value: Any = None
    reason: str = ""
    refusal: bool = False


def fail(reason: str) -> Parsed:
    return Parsed(False, None, reason, False)


REFUSED = Parsed(False, None, "refusal", True)


def last_match(rx: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of ``rx`` in ``text``."""
    found = None
    for found in rx.finditer(text):  # noqa: B007 -- keeping the last one is the point
        pass
    return found


_SPACE = re.compile(r"\s")
_LAST_SPACE = re.compile(r"\s(?=\S*$)")
MAX_TOKEN = 256  # characters a cut may step back to keep a token whole ("1234.5", "F9", a word)


def tail(text: str, limit: int) -> str:
    """The end of ``text``: about ``limit`` characters, cut only at white space. A cut inside a
    token would read "1234.5 m" as 34.5 m, or "F0/F9" as a bearing of 0; the split token is kept
    whole (the cut steps back to its start), or, longer than MAX_TOKEN, dropped whole."""
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    if text[cut - 1].isspace() or text[cut].isspace():
        return text[cut:]
    back = _LAST_SPACE.search(text, max(0, cut - MAX_TOKEN), cut)
    if back is not None:
        return text[back.end() :]
    if cut <= MAX_TOKEN:  # the token starts the text
        return text
    ahead = _SPACE.search(text, cut)
    return text[ahead.end() :] if ahead else ""


def to_text(text: Any) -> str | None:
    """``text`` as a string (bytes decoded leniently), ``None`` for anything else."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        decoded = bytes(text[-RAW_CAP * 4 :]).decode("utf-8", errors="replace")
        if len(text) <= RAW_CAP * 4:
            return decoded
        # cut: it may begin inside a character and inside a token, both dropped up to white space
        m = _SPACE.search(decoded)
        return decoded[m.start() :] if m else ""
    return None


_JSON_TOKENS = re.compile(r'[{}"\\]')


def top_level_objects(text: str) -> list[tuple[int, int, int]]:
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
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, pos + 1, max_depth))
    return spans
