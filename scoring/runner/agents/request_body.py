"""Reading a chat request's JSON body without running the JSON scanner over its maps.

A map-reading request carries its 1536² map as a base64 data URL of about half a megabyte;
scanning that string character by character was most of what an image request cost a served
agent. Each such URL that is plain JSON text between two quotes (printable ASCII, no escapes) is
cut out of the body before parsing and put back as a plain string decoded from those bytes, which
are remembered (`verbatim_bytes`) so that hashing the request (prompt_view.request_digest) need
not check or encode them again. The result equals ``json.loads(body)``; a body whose URLs cannot
be cut out safely is parsed as it is."""

from __future__ import annotations

import json
import random
import threading
from typing import Any

import numpy as np

# Strings shorter than this are parsed by json as usual: cutting them out would not pay.
MIN_SPLICED = 1 << 16
_OPEN = b'"data:'
# A private-use mark standing for one cut-out URL; a random nonce per body, so that no text the
# request holds (written with JSON escapes) can pass for one.
_MARK = "\ue000sg-spliced-{}-{}\ue000"
_nonces = random.Random()
# The first byte of the marks' UTF-8: `in` runs memchr for one byte (0.005 ms on a map request),
# a search for longer needles is twenty times slower.
_MARK_START = "\ue000".encode()[:1]


# The last strings put back, by identity: (the string, its bytes in the body). Each entry holds its
# string, so that its id is not reused while remembered; a few more than a server has requests in
# flight. (A str subclass carrying its bytes cost another copy of the half megabyte.)
_REMEMBERED = 24
_verbatim: dict[int, tuple[str, memoryview]] = {}
_verbatim_lock = threading.Lock()


def verbatim_bytes(text: str) -> memoryview | None:
    """The bytes `text` was decoded from when loads_request put it back (its own JSON text
    between quotes: printable ASCII, no quote, no backslash); None for any other string."""
    entry = _verbatim.get(id(text))
    return entry[1] if entry is not None and entry[0] is text else None


def _remember(raw: memoryview) -> str:
    text = str(raw, "ascii")
    with _verbatim_lock:
        _verbatim[id(text)] = (text, raw)
        while len(_verbatim) > _REMEMBERED:
            del _verbatim[next(iter(_verbatim))]
    return text


def is_verbatim(body: bytes | bytearray, start: int = 0, end: int | None = None) -> bool:
    """Whether ``body[start:end]`` is its own JSON text inside quotes: printable ASCII (0x20 to
    0x7E), no quote, no backslash. numpy's min and max and the memchr of `find` read half a
    megabyte in tens of microseconds, where a translate table takes ten times that."""
    end = len(body) if end is None else end
    if end <= start:
        return True
    arr = np.frombuffer(body, dtype=np.uint8, count=end - start, offset=start)
    if arr.min() < 0x20 or arr.max() >= 0x7F:
        return False
    return body.find(b'"', start, end) < 0 and body.find(b"\\", start, end) < 0


def loads_request(body: bytes | bytearray, blank_images: bool = False) -> Any:
    """``json.loads(body)``, with each long data URL cut out of the body before parsing.
    ``blank_images``: a message part's image URL that was cut out is left empty, as
    registry.without_images empties it for an agent that does not read the pixels (nothing of
    it is then decoded at all)."""
    if len(body) < MIN_SPLICED or _OPEN not in body:
        return json.loads(body)
    pieces: list[bytes | bytearray] = []
    spans: list[tuple[int, int]] = []  # where each cut-out URL's text is in the body
    pos = 0
    nonce = f"{_nonces.getrandbits(64):016x}"
    start = body.find(_OPEN)
    while start >= 0:
        end = body.find(b'"', start + 1)
        if end < 0:
            break
        # An opening quote escaped by a backslash is inside another string: leave it.
        escaped = body[start - 1 : start] == b"\\"
        if end - start - 1 >= MIN_SPLICED and not escaped and is_verbatim(body, start + 1, end):
            pieces += [body[pos : start + 1], _MARK.format(nonce, len(spans)).encode("utf-8")]
            spans.append((start + 1, end))
            pos = end
        start = body.find(_OPEN, end + 1)
    if not spans:
        return json.loads(body)
    pieces.append(body[pos:])
    marks = [_MARK.format(nonce, i) for i in range(len(spans))]
    if _MARK_START in body and any(m.encode("utf-8") in body for m in marks):
        return json.loads(body)  # the request itself holds a mark
    value = json.loads(b"".join(pieces))
    found: list[int] = []
    index = {m: i for i, m in enumerate(marks)}
    if blank_images:
        _blank_images(value, index, found)
    view = memoryview(body)
    value = _put_back(value, index, [view[a:b] for a, b in spans], found)
    if sorted(found) != list(range(len(spans))):
        # a mark landed inside a longer string (the cut was not a whole string): parse as sent
        return json.loads(body)
    return value


def _blank_images(value: Any, marks: dict[str, int], found: list[int]) -> None:
    messages = value.get("messages") if isinstance(value, dict) else None
    for m in messages if isinstance(messages, list) else []:
        content = m.get("content") if isinstance(m, dict) else None
        for part in content if isinstance(content, list) else []:
            image = part.get("image_url") if isinstance(part, dict) else None
            if not isinstance(image, dict):
                continue
            url = image.get("url")
            if isinstance(url, str) and url in marks:
                found.append(marks[url])
                image["url"] = ""


def _put_back(value: Any, marks: dict[str, int], blobs: list[memoryview], found: list[int]) -> Any:
    if isinstance(value, str):
        i = marks.get(value)
        if i is None:
            return value
        found.append(i)
        return _remember(blobs[i])
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, (str, dict, list)):
                value[k] = _put_back(v, marks, blobs, found)
        return value
    if isinstance(value, list):
        return [_put_back(v, marks, blobs, found) if isinstance(v, (str, dict, list)) else v for v in value]
    return value
