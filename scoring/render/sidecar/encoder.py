"""The sidecar's JSON text: json.dumps(record, indent=1, ensure_ascii=False), character for
character, without the standard library's pure-Python indenting encoder (its generators cost
~0.5 ms a map; the C encoder does not indent). The same rules in the same order: strings through
the encoder json uses (encode_basestring), floats by float.__repr__ with NaN and infinities
spelt as json spells them, ',' between items and ': ' after keys, one space an indentation level.
tests/render/test_render_shortcuts.py compares it with json.dumps."""

from __future__ import annotations

from json.encoder import encode_basestring  # json's own (C when built)
from typing import Any

_INF = float("inf")


def dumps_indent1(obj: Any) -> str:
    """json.dumps(obj, indent=1, ensure_ascii=False) for dicts, lists, tuples, strings, numbers,
    booleans and None (anything else raises TypeError, as json.dumps does)."""
    out: list[str] = []
    _value(obj, out, "\n")
    return "".join(out)


def _float(f: float) -> str:
    """json's floatstr with allow_nan (the default)."""
    if f != f:
        return "NaN"
    if f == _INF:
        return "Infinity"
    if f == -_INF:
        return "-Infinity"
    return float.__repr__(f)


def _scalar(o: Any) -> str | None:
    """The text of a str, None, bool, int or float (in json's order of tests); None otherwise."""
    t = type(o)
    if t is float:  # the sidecar's commonest values first, by exact type
        return _float(o)
    if t is str:
        return encode_basestring(o)
    if t is int:
        return int.__repr__(o)
    if isinstance(o, str):
        return encode_basestring(o)
    if o is None:
        return "null"
    if o is True:
        return "true"
    if o is False:
        return "false"
    if isinstance(o, int):
        return int.__repr__(o)
    if isinstance(o, float):
        return _float(o)
    return None


def _value(o: Any, out: list[str], nl: str) -> None:
    """Append o's text; `nl`: a newline and the indentation of the line o starts on."""
    text = _scalar(o)
    if text is not None:
        out.append(text)
    elif isinstance(o, (list, tuple)):
        if not o:
            out.append("[]")
            return
        inner = nl + " "
        texts = [_scalar(v) for v in o]
        if None not in texts:  # a list of plain values (boxes, anchors): one join
            out.append("[" + inner + ("," + inner).join(texts) + nl + "]")  # type: ignore[arg-type]
            return
        out.append("[")
        sep = inner
        for v in o:
            out.append(sep)
            sep = "," + inner
            _value(v, out, inner)
        out.append(nl + "]")
    elif isinstance(o, dict):
        if not o:
            out.append("{}")
            return
        inner = nl + " "
        out.append("{")
        sep = inner
        for k, v in o.items():
            out.append(sep)
            sep = "," + inner
            out.append(encode_basestring(k) if type(k) is str else _key(k))
            out.append(": ")
            _value(v, out, inner)
        out.append(nl + "}")
    else:
        raise TypeError(f"Object of type {type(o).__name__} is not JSON serializable")


def _key(k: Any) -> str:
    """A key as json writes it: strings as strings, floats, booleans, None and ints as text."""
    if isinstance(k, str):
        return encode_basestring(k)
    if isinstance(k, float):
        text = _float(k)
    elif k is True:
        text = "true"
    elif k is False:
        text = "false"
    elif k is None:
        text = "null"
    elif isinstance(k, int):
        text = int.__repr__(k)
    else:
        raise TypeError(f"keys must be str, int, float, bool or None, not {type(k).__name__}")
    return encode_basestring(text)
