"""Matplotlib artists of the map made by copying a template per style.

A map creates ~60 artists; an artist's __init__ normalises and validates every style argument
(colours, widths, dashes, joins, rcParams defaults), 30-120 us each, for styles that repeat map
after map. Here each distinct style is built once per process with empty data, and every artist
of that style is a shallow copy given its own data through the setter its __init__ calls (same
state, same pixels). Templates are never added to a figure nor drawn, so what copies share
(colour arrays, marker paths) is never modified.
"""

from __future__ import annotations

import copy
import copyreg
import threading
from typing import Any, TypeVar, cast

from matplotlib.artist import Artist
from matplotlib.collections import LineCollection, PathCollection
from matplotlib.font_manager import FontProperties
from matplotlib.lines import Line2D
from matplotlib.patches import PathPatch, Polygon, Rectangle
from matplotlib.path import Path

A = TypeVar("A", bound=Artist)

_TEMPLATES: dict[tuple, Artist] = {}
_LOCK = threading.Lock()  # the QGIS plugin renders in a worker thread
_NO_PATH = Path([[0.0, 0.0]])


def _key(value: Any) -> Any:
    if isinstance(value, FontProperties):  # what its __hash__ reads (its repr is its address)
        v = value
        return (tuple(v.get_family()), v.get_slant(), v.get_variant(), v.get_weight(), v.get_stretch(),
                v.get_size(), v.get_file(), v.get_math_fontfamily())  # fmt: skip
    return repr(value)  # strings, floats (repr round-trips), tuples and lists of them


def styled(cls: type[A], args: tuple, style: dict[str, Any]) -> A:
    """A copy of cls(*args, **style), built once per process; args: empty data to replace."""
    key = (cls, args, tuple((k, _key(v)) for k, v in sorted(style.items())))
    tpl = _TEMPLATES.get(key)
    if tpl is None:
        tpl = cls(*args, **style)
        with _LOCK:
            if len(_TEMPLATES) >= 1024:
                _TEMPLATES.clear()
            _TEMPLATES[key] = tpl
    return _copy(tpl)  # type: ignore[return-value]


def _copy(tpl: Artist) -> Artist:
    """copy.copy(tpl): for an artist class without __copy__, __setstate__ or a registered
    reducer, what copy does with its __reduce_ex__ (a new object given the template's
    __getstate__()), without copy's dispatch (~8 us an artist)."""
    cls = type(tpl)
    if cls not in _PLAIN_COPY:
        _PLAIN_COPY[cls] = not (
            hasattr(cls, "__copy__")
            or hasattr(cls, "__setstate__")
            or cls in copy._copy_dispatch  # type: ignore[attr-defined]
            or cls in copyreg.dispatch_table
            or cls.__reduce_ex__ is not object.__reduce_ex__
        )
    if not _PLAIN_COPY[cls]:
        return copy.copy(tpl)
    new = cls.__new__(cls)
    vars(new).update(cast(dict, tpl.__getstate__()))  # Artist.__getstate__: a dict
    return new


_PLAIN_COPY: dict[type, bool] = {}


def path_collection(paths, **style) -> PathCollection:
    """PathCollection(paths, **style)."""
    pc = styled(PathCollection, ((),), style)
    pc.set_paths(paths)
    return pc


def _line_collection(style: dict[str, Any]) -> LineCollection:
    # road widths follow the map's scale: the width is set on the copy, as the last of
    # Collection.__init__'s setters would (both end in _bcast_lwls(widths, dashes))
    widths = style.pop("linewidths", None)
    lc = styled(LineCollection, ((),), style)
    if widths is not None:
        lc.set_linewidth(widths)
    return lc


def line_collection(segments, **style) -> LineCollection:
    """LineCollection(segments, **style)."""
    lc = _line_collection(style)
    lc.set_segments(segments)
    return lc


def line_collection_of_paths(paths, **style) -> LineCollection:
    """LineCollection(segments, **style) for the paths it would build from them (shared)."""
    lc = _line_collection(style)
    vars(lc)["_paths"] = paths  # what set_segments stores (matplotlib pinned)
    return lc


def line2d(x, y, **style) -> Line2D:
    """Line2D(x, y, **style)."""
    line = styled(Line2D, ((), ()), style)
    line.set_data(x, y)
    return line


def dots(
    x, y, *, size: float, face: Any, edge: Any, zorder: float, edge_width: float | None = None
) -> Line2D:
    """Round markers of `size` points at (x, y), no line between them; `edge_width` in points
    (None: matplotlib's default)."""
    style: dict[str, Any] = {"ls": "none", "marker": "o", "ms": size, "mfc": face, "mec": edge}
    if edge_width is not None:
        style["mew"] = edge_width
    return line2d(x, y, zorder=zorder, **style)


def rectangle(xy, width, height, **style) -> Rectangle:
    """Rectangle(xy, width, height, **style) (no angle)."""
    r = styled(Rectangle, ((0.0, 0.0), 0.0, 0.0), style)
    r.set_bounds(xy[0], xy[1], width, height)
    return r


def path_patch(path, **style) -> PathPatch:
    """PathPatch(path, **style)."""
    p = styled(PathPatch, (_NO_PATH,), style)
    p.set_path(path)
    return p


def polygon(xy, **style) -> Polygon:
    """Polygon(xy, **style) (closed unless style says otherwise)."""
    p = styled(Polygon, (((0.0, 0.0),),), style)
    p.set_xy(xy)  # what its __init__ does last, after `closed`
    return p
