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


def to_text(text: Any) -> str | None:
    """``text`` as a string (bytes decoded leniently), ``None`` for anything else."""
    if isinstance(text, str):
        return text
    if isinstance(text, (bytes, bytearray, memoryview)):
        return bytes(text[-RAW_CAP * 4 :]).decode("utf-8", errors="replace")
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
