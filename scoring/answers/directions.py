"""Directions: compass points (4 and 8), quadrant bearings (N36W), egocentric directions, axes."""

from __future__ import annotations

import re
from typing import Any

from scoring.answers.base import Parsed, fail
from scoring.answers.evidence import Question, read_reply
from scoring.answers.markers import english_directions
from scoring.answers.text import Prepared

DIRECTIONS8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_CARD = {"north": "N", "south": "S", "east": "E", "west": "W"}
SIXTEEN_POINT = re.compile(
    r"\b(?:north|south|east|west)[\s\-–]+(?:north|south)[\s\-–]?(?:east|west)\b"
    r"|\b(?:NNE|ENE|ESE|SSE|SSW|WSW|WNW|NNW)\b",
    re.I,
)
_DIR_WORD = re.compile(
    r"\b(?P<ns>north|south)(?:[ \t]*[\-–][ \t]*|[ \t]+|)(?P<ew>east|west)(?:erly|wards?)?\b"
    r"|\b(?P<one>north|south|east|west)(?:erly|wards?)?\b(?![ \t]*[\-–]?[ \t]*(?:east|west)ern\b)"
    r"(?![ \t]*arrows?\b)",  # the map's north arrow is not an answer
    re.I,
)
_DIR_ABBR = re.compile(r"(?<![\w.'’\-])(?P<a>[NS]\.?[ \t]?[EW]|[NSEW])\.?(?![\w'’\-])")
_DIR_WHOLE = re.compile(r"^\W*(?P<a>[nsNS]\.?\s?[ewEW]|[nsewNSEW])\W*$")


def find_directions(text: str) -> list[tuple[str, int]]:
    """8-point directions named in ``text`` as (label, position), in order of appearance."""
    found: list[tuple[str, int]] = []
    for m in _DIR_WORD.finditer(text):
        if m.group("one"):
            found.append((_CARD[m.group("one").lower()], m.start()))
        else:
            found.append((_CARD[m.group("ns").lower()] + _CARD[m.group("ew").lower()], m.start()))
    whole = _DIR_WHOLE.match(text)
    if whole:
        found.append((re.sub(r"[.\s]", "", whole.group("a")).upper(), whole.start("a")))
    else:
        for m in _DIR_ABBR.finditer(text):
            found.append((re.sub(r"[.\s]", "", m.group("a")), m.start()))
    found.sort(key=lambda t: t[1])
    return found


def _direction_in(seg: str, scheme: str) -> Parsed:
    seg = english_directions(seg)
    if SIXTEEN_POINT.search(seg):
        return fail("16-point direction, not in the scheme")
    found = {d for d, _ in find_directions(seg)}
    if not found:
        return fail("no direction found")
    if len(found) > 1:
        return fail("several different directions")
    label = found.pop()
    if scheme == "4" and len(label) == 2:
        return fail("intercardinal direction in a 4-point scheme")
    return Parsed(True, label)


def parse_direction(text: Any, scheme: str | int = "8", question: str = "") -> Parsed:
    """Compass direction: scheme ``"4"`` -> N/E/S/W, ``"8"`` -> N/NE/E/SE/S/SW/W/NW.

    >>> parse_direction("SW (bearing about 225°, measured clockwise from north)").value
    'SW'
    """
    scheme = str(scheme)
    if scheme not in ("4", "8"):
        return fail(f"unknown direction scheme {scheme!r}")
    return read_reply(text, lambda seg, pre: _direction_in(seg, scheme), Question(question))


_REL = {
    "ahead": re.compile(r"\b(?:ahead|in\s+front|forwards?|straight\s+on|front)\b", re.I),
    "behind": re.compile(r"\b(?:behind|backwards?|back|rear|to\s+the\s+back)\b", re.I),
    "left": re.compile(r"\b(?:left|left[\s\-]hand(?:\s+side)?)\b", re.I),
    "right": re.compile(r"\b(?:right|right[\s\-]hand(?:\s+side)?)\b", re.I),
}


def _relative_in(seg: str, pre: Prepared) -> Parsed:
    seg = english_directions(seg, sides=True)
    found = [name for name, rx in _REL.items() if rx.search(seg)]
    if not found:
        return fail("no relative direction found")
    if len(found) > 1:
        return fail("several different relative directions")
    return Parsed(True, found[0])


def parse_relative_direction(text: Any, question: str = "") -> Parsed:
    """Egocentric direction: ``ahead`` / ``behind`` / ``left`` / ``right``.

    >>> parse_relative_direction("left, not right").value
    'left'
    """
    return read_reply(text, _relative_in, Question(question))


_AXIS_TOKEN = (
    r"(?:north[\s\-]?east|north[\s\-]?west|south[\s\-]?east|south[\s\-]?west"
    r"|north|south|east|west|NE|NW|SE|SW|N|S|E|W)"
)
_AXIS_RE = re.compile(
    rf"(?<![\w\-])(?P<a>{_AXIS_TOKEN})[ \t]*(?:-|–|—|/|to|\u2194|<->|↔)[ \t]*(?P<b>{_AXIS_TOKEN})(?![\w])",
    re.I,
)
_AXES = {
    frozenset(("N", "S")): "N-S",
    frozenset(("NE", "SW")): "NE-SW",
    frozenset(("E", "W")): "E-W",
    frozenset(("NW", "SE")): "NW-SE",
}


def _dir_label(token: str) -> str:
    t = re.sub(r"[\s\-]", "", token.lower())
    if t in ("n", "s", "e", "w", "ne", "nw", "se", "sw"):
        return t.upper()
    if t in _CARD:
        return _CARD[t]
    return _CARD[t[:5]] + _CARD[t[5:]]


def _axis_in(seg: str, pre: Prepared) -> Parsed:
    found = set()
    bad = False
    for m in _AXIS_RE.finditer(seg):
        pair = frozenset((_dir_label(m.group("a")), _dir_label(m.group("b"))))
        axis = _AXES.get(pair)
        if axis is None:
            bad = True
        else:
            found.add(axis)
    if len(found) > 1:
        return fail("several different axes")
    if found:
        return Parsed(True, found.pop())
    return fail("directions are not opposite" if bad else "no axis found")


def parse_axis(text: Any, question: str = "") -> Parsed:
    """Orientation axis ``N-S``, ``NE-SW``, ``E-W`` or ``NW-SE`` from a pair of opposite
    directions (``north–south``, ``S-N``, ``SW–NE``, ``east to west``). Words such as
    "horizontal" or "vertical" are not accepted; two different axes -> not ok."""
    return read_reply(text, _axis_in, Question(question))


# quadrant bearing: N36.0W = 36° west of north = 324°
_QUADRANT = re.compile(
    r"(?<![A-Za-z])(?P<a>[NS])[ \t]*(?P<deg>\d{1,2}(?:\.\d+)?)[ \t]*(?:°|º|deg(?:rees?)?)?[ \t]*"
    r"(?P<b>[EW])(?![A-Za-z])",
    re.I,
)


def _quadrant_to_azimuth(m: re.Match[str]) -> str:
    deg = float(m.group("deg"))
    if deg > 90:
        return m.group(0)
    ns, ew = m.group("a").upper(), m.group("b").upper()
    azimuth = {("N", "E"): deg, ("S", "E"): 180 - deg, ("S", "W"): 180 + deg, ("N", "W"): 360 - deg}[(ns, ew)]
    return f" {azimuth:g}° "


def quadrant_bearings_to_azimuths(text: str) -> str:
    """``text`` with each quadrant bearing (``N36.0W``, ``S 45° E``) written as an azimuth in degrees."""
    return _QUADRANT.sub(_quadrant_to_azimuth, text)
