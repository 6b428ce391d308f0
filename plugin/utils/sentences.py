"""Constraint sentences in the plugin's language. The benchmark states its constraints in English
(what a model reads: scoring.constraints.facts.describe_constraint); a French analyst reads the
same statement rebuilt from the constraint's fields with translated templates, numbers with a
decimal comma. English, or a constraint with no template here, keeps the benchmark's sentence."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from . import i18n
from .i18n import tr

_DECIMAL = re.compile(r"(?<=\d)\.(?=\d)")


def localize_numbers(text: str) -> str:
    """Decimal points as the language writes them (French: a comma)."""
    return _DECIMAL.sub(",", text) if i18n.language() == "fr" else text


def _predicates() -> dict[str, tuple[str, str]]:
    """measure -> (holds, does not hold)."""
    return {
        "equals_eps": (
            tr("{a} is topologically equal to {b} (within {eps:g} m)"),
            tr("{a} is not topologically equal to {b} (within {eps:g} m)"),
        ),
        "equals": (tr("{a} is topologically equal to {b}"), tr("{a} is not topologically equal to {b}")),
        "disjoint": (tr("{a} is disjoint from {b}"), tr("{a} is not disjoint from {b}")),
        "intersects": (tr("{a} does intersect {b}"), tr("{a} does not intersect {b}")),
        "touches": (tr("{a} does touch {b}"), tr("{a} does not touch {b}")),
        "touches_eps": (
            tr("{a} does touch {b} (boundaries within {eps:g} m, interiors disjoint)"),
            tr("{a} does not touch {b} (boundaries within {eps:g} m, interiors disjoint)"),
        ),
        "crosses": (tr("{a} does cross {b}"), tr("{a} does not cross {b}")),
        "crosses_eps": (
            tr("{a} does cross {b} (crossings within {eps:g} m of an endpoint do not count)"),
            tr("{a} does not cross {b} (crossings within {eps:g} m of an endpoint do not count)"),
        ),
        "within": (tr("{a} is within {b}"), tr("{a} is not within {b}")),
        "overlaps": (tr("{a} does overlap {b}"), tr("{a} does not overlap {b}")),
        "covered_by": (tr("{a} is covered by {b}"), tr("{a} is not covered by {b}")),
        "boundary_covered": (
            tr("{a} is covered by {b} while touching its boundary"),
            tr("{a} is not covered by {b} while touching its boundary"),
        ),
        "boundary_covered_eps": (
            tr("{a} is covered by {b} while touching its boundary (within {eps:g} m)"),
            tr("{a} is not covered by {b} while touching its boundary (within {eps:g} m)"),
        ),
        "contained_properly_eps": (
            tr("{a} does lie in the interior of {b} (at least {eps:g} m from its boundary)"),
            tr("{a} does not lie in the interior of {b} (at least {eps:g} m from its boundary)"),
        ),
        "contained_properly": (
            tr("{a} does lie in the interior of {b}"),
            tr("{a} does not lie in the interior of {b}"),
        ),
        "within_distance": (
            tr("{a} is within {distance:g} m of {b}"),
            tr("{a} is not within {distance:g} m of {b}"),
        ),
        "same_side": (
            tr("{b} and {c} are on the same side of {a}"),
            tr("{b} and {c} are not on the same side of {a}"),
        ),
        "strictly_between": (
            tr("{c} does lie strictly between {a} and {b}"),
            tr("{c} does not lie strictly between {a} and {b}"),
        ),
        "level_above": (tr("{a} is vertically above {b}"), tr("{a} is not vertically above {b}")),
        "endpoint_connected": (
            tr("{a} is connected to {b} by a shared endpoint"),
            tr("{a} is not connected to {b} by a shared endpoint"),
        ),
    }


def _subjects() -> dict[str, str]:
    return {
        "min_distance": tr("the minimum distance between {a} and {b}"),
        "boundary_distance": tr("the boundary distance between {a} and {b}"),
        "manhattan_distance": tr("the Manhattan distance between {a} and {b}"),
        "hausdorff_distance": tr("the Hausdorff distance between {a} and {b}"),
        "perimeter_total": tr("the total perimeter of {ids}"),
        "area": tr("the area of {ids}"),
        "along_position": tr("the position of {b} along {a} (distance from {a}'s first vertex)"),
        "displacement": tr("the displacement of {a}'s centroid from its initial position"),
        "count_within_distance": tr("the number of {others} within {distance:g} m of {a}"),
        "poi_density": tr("the density of {others} inside {a}"),
    }


def _bounds() -> dict[str, str]:
    return {
        "between": tr(" is between {min} and {max}{unit}"),
        "at_most": tr(" is at most {max}{unit}"),
        "at_least": tr(" is at least {min}{unit}"),
        "is": tr(" is {value}"),
    }


def _words() -> dict[str, str]:
    """Direction and side words."""
    return {
        "N": tr("north"),
        "NE": tr("north-east"),
        "E": tr("east"),
        "SE": tr("south-east"),
        "S": tr("south"),
        "SW": tr("south-west"),
        "W": tr("west"),
        "NW": tr("north-west"),
        "left": tr("on the left"),
        "right": tr("on the right"),
        "ahead": tr("ahead"),
        "behind": tr("behind"),
    }


UNITS = {"m": " m", "per km2": " per km²", "count": "", "m2": " m²", "deg": "°"}


def _number(v) -> str:
    return f"{float(v):.12g}" if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _other(c: Mapping[str, Any], ids: dict, value) -> str | None:
    m, args, params = c["measure"], c["args"], c.get("params") or {}
    words = _words()
    if m == "bearing":
        if c.get("op") == "angle_within":
            text = tr("the bearing from {a} to {b} is within {tolerance}° of {target}°")
            return text.format(**ids, tolerance=_number(c["tolerance"]), target=_number(c["target"]))
        return tr("the bearing from {a} to {b} is {value}").format(**ids, value=value)
    if m in ("direction4", "direction8") and len(args) == 2:
        return tr("{b} lies {word} of {a}").format(**ids, word=words.get(str(value), str(value)))
    if m == "relative_direction":
        text = tr("for an observer at {a} heading {heading:g}°, {b} is {side}")
        return text.format(**ids, heading=float(params["heading"]), side=words.get(str(value), str(value)))
    if m == "axis":
        axes = {"N-S": tr("N-S"), "NE-SW": tr("NE-SW"), "E-W": tr("E-W"), "NW-SE": tr("NW-SE")}
        text = tr("{a} (its chord from first to last vertex) runs {axis}")
        return text.format(**ids, axis=axes.get(str(value), str(value)))
    if m == "nearest":
        text = tr("of {others}, the feature nearest to {a} is {nearest}")
        return text.format(**ids, others=", ".join(args[1:]), nearest=value)
    if m == "along_order":
        text = tr("along {a} from its first vertex, the order is {order}")
        return text.format(**ids, order=" → ".join(value) if isinstance(value, (list, tuple)) else value)
    return None


def _describe(c: Mapping[str, Any], value) -> str | None:
    """The constraint as a sentence with `value` as its required (or measured) value, in the
    plugin's language; None where no template covers it."""
    m, args, params = c["measure"], list(c.get("args") or []), c.get("params") or {}
    ids = {"a": "", "b": "", "c": "", **dict(zip("abc", args, strict=False))}
    if isinstance(value, bool) or (c.get("op") == "is" and m in _predicates()):
        phrases = _predicates().get(m)
        if phrases is None:
            return None
        text = phrases[0 if value else 1]
        if "eps" in params and "{eps" not in text:  # the tolerance the checker uses is stated
            text += tr(" (within {eps:g} m)")
        return text.format(**ids, **{k: float(v) for k, v in params.items() if isinstance(v, (int, float))})
    other = _other(c, ids, value)
    if other is not None or m not in _subjects():
        return other
    values = {
        **ids,
        **{k: v for k, v in params.items() if isinstance(v, (int, float))},
        "ids": ", ".join(args),
        "others": ", ".join(args[1:]),
        "unit": UNITS.get(c.get("unit", ""), ""),
        "min": _number(c.get("min", "")),
        "max": _number(c.get("max", "")),
        "value": value,
    }
    op = str(c.get("op")) if c.get("op") in _bounds() else "is"
    return _subjects()[m].format(**values) + _bounds()[op].format(**values)


def requirement(view) -> str:
    """What the constraint requires, in the plugin's language."""
    if i18n.language() == "en" or not view.constraint:
        return view.text
    try:
        text = _describe(view.constraint, view.constraint.get("value"))
    except (KeyError, TypeError, ValueError, IndexError):
        text = None
    return localize_numbers(text) if text else view.text


def measured_value(view) -> str:
    """The measured value as a label shows it ("149.97 m"; French "149,97 m")."""
    return localize_numbers(view.measured_text)


def found(view) -> str:
    """What was measured, as a sentence, in the plugin's language."""
    if i18n.language() == "en" or not view.constraint or view.measured is None:
        return view.sentence
    value = view.measured if isinstance(view.measured, bool) else measured_value(view)
    try:
        text = _describe({**view.constraint, "op": "is"}, value)
    except (KeyError, TypeError, ValueError, IndexError):
        text = None
    return localize_numbers(text) if text else view.sentence
